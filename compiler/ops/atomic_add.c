/* atomic_add(dst, value): dst an element (value a scalar) or a region
 * (value a fragment or shared region of the same shape), in global or
 * shared memory; lowered to red/atom.add per element. Tile semantics: a
 * scalar atomic_add outside a Parallel loop happens once per block
 * (thread 0), or in every thread that reaches it in thread-indexed code
 * (tir_stmt.per_thread); inside a Parallel loop once per iteration (replica 0 of its
 * fragment); a region's elements once each, a shared source's spread over
 * the block's threads as a blocked fragment (after the barrier the driver
 * puts behind the stores that wrote it).
 *
 * return_prev=True (one int32 / float32 element, outside Parallel loops):
 * every thread of the block fences (fence.acq_rel.gpu), a block barrier,
 * thread 0 adds (atom.acq_rel.gpu) and leaves the old value in 4 bytes of
 * scratch, a block barrier, every thread takes it and fences again. So a
 * block that sees the count of the others reads what they wrote before
 * counting (the last of several blocks to finish one piece of work merges
 * them). In thread-indexed code each thread that reaches it adds and takes
 * its own old value (relaxed, as CUDA's atomicAdd; tir_stmt.per_thread).
 *
 * Layout rule: a fragment source nothing else constrains gets a blocked
 * fragment (free). */
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

static bool atomic_add_infer(tlc_infer *st, const tir_stmt *s, bool free_pass) {
    tir_buffer *b = s->u.atomic.src.buf;
    if (!free_pass || !b || b->scope != TIR_SCOPE_FRAGMENT || b->fragment || b->rank > TLC_FRAG_MAX_RANK) return false;
    int64_t shape[TLC_FRAG_MAX_RANK];
    for (int d = 0; d < b->rank; d++) shape[d] = tir_buffer_dim(b, d);
    tlc_fragment *f = tlc_fragment_blocked(st->a, b->rank, shape, tir_stmt_threads(st->k, s), 1);
    f->origin = "atomic_add source";
    return tlc_infer_propose(st, b, f, TLC_STRENGTH_FREE, s);
}

static th_stmt *atomic_at(tlc_lower_ctx *lc, const tir_buffer *dst, th_expr **idx, const int64_t *maxv, th_expr *value) {
    th_expr *ptr = dst->scope == TIR_SCOPE_GLOBAL ? tlc_global_elem_ptr(lc, dst, idx) : tlc_shared_elem_ptr(lc, dst, idx);
    th_stmt *st = th_atomic_add(lc->a, ptr, tlc_coerce(lc, value, tlc_mem_type(dst->dtype)));
    th_expr *mask = dst->scope == TIR_SCOPE_GLOBAL ? tlc_global_in_bounds(lc, dst, idx, maxv) : NULL;
    return mask ? th_if(lc->a, mask, st, NULL) : st;
}

/* A region source, walked as the slots of fragment F: the source
 * fragment's own layout (slots outside the region skipped), or for a
 * shared source a blocked fragment of the region's shape whose element l
 * is loaded from the region's start + l. Each element is added once to its
 * destination element. sd / dd: the regions' squeezed dims, in order. */
static void atomic_add_region(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_fragment *F, const int *sd,
                              const int *dd, int nd) {
    tlc_arena *a = lc->a;
    const tir_region *rs = &s->u.atomic.src, *rd = &s->u.atomic.dst;
    const tir_buffer *src = rs->buf, *dst = rd->buf;
    bool shared = src->scope == TIR_SCOPE_SHARED;
    th_expr *tidx[TLC_FRAG_MAX_RANK], *sstart[TLC_FRAG_MAX_RANK], *dstart[8];
    tlc_frag_thread_index(lc, F, tidx);
    for (int d = 0; d < rs->rank; d++) sstart[d] = tlc_coerce(lc, tlc_lower_expr(lc, rs->start[d]), th_scalar(TH_I32));
    for (int d = 0; d < dst->rank; d++) dstart[d] = tlc_coerce(lc, tlc_lower_expr(lc, rd->start[d]), th_scalar(TH_I32));
    th_expr *once = tlc_frag_replica0(lc, F);
    if (once) once = tlc_let(lc, "rep0", once);
    if (F->threads < lc->threads) once = tlc_and(lc, once, th_cmp(a, THC_LT, th_read(a, lc->tid), tlc_i32(lc, F->threads)));
    for (int64_t slot = 0; slot < F->slots; slot++) {
        int64_t c[TLC_FRAG_MAX_RANK];
        tlc_fragment_slot_part(F, slot, c);
        th_expr *valid = tlc_frag_valid(lc, F, tidx, slot);
        if (valid && valid->kind == THE_INT && valid->u.ival == 0) continue;
        th_expr *l[TLC_FRAG_MAX_RANK], *off[TLC_FRAG_MAX_RANK], *idx[8];
        int64_t maxv[8];
        for (int d = 0; d < F->rank; d++) {
            l[d] = th_bin(a, THB_ADD, tidx[d], tlc_i32(lc, c[d]));
            off[d] = shared ? l[d] : th_bin(a, THB_SUB, l[d], sstart[d]); /* from the region's start */
        }
        for (int d = 0; d < dst->rank; d++) {
            idx[d] = dstart[d];
            maxv[d] = -1;
        }
        for (int i = 0; i < nd; i++) idx[dd[i]] = th_bin(a, THB_ADD, idx[dd[i]], off[sd[i]]);
        th_expr *v, *cond = valid;
        if (shared) {
            th_expr *sidx[TLC_FRAG_MAX_RANK];
            for (int d = 0; d < rs->rank; d++) sidx[d] = th_bin(a, THB_ADD, sstart[d], l[d]);
            v = th_load(a, tlc_shared_elem_ptr(lc, src, sidx), tlc_mem_type(src->dtype), tir_dtype_bytes(src->dtype));
        } else {
            v = th_array_read(a, lc->regs[src->id], tlc_i32(lc, slot));
            cond = tlc_and(lc, cond, tlc_region_holds(lc, rs, l));
        }
        cond = tlc_and(lc, cond, once);
        th_stmt *st = atomic_at(lc, dst, idx, maxv, v);
        tlc_emit(lc, cond ? th_if(a, cond, st, NULL) : st);
    }
}

/* The add of one element, its old value into `old` (0 where the element
 * is out of bounds). */
static void atomic_add_returning(tlc_lower_ctx *lc, const tir_stmt *s, th_expr **idx, const int64_t *maxv, th_var *old,
                                 bool acq_rel) {
    tlc_arena *a = lc->a;
    const tir_buffer *dst = s->u.atomic.dst.buf;
    bool f32 = dst->dtype == TIR_F32, shared = dst->scope == TIR_SCOPE_SHARED;
    th_type t = th_scalar(f32 ? TH_F32 : TH_I32);
    tlc_emit(lc, th_assign(a, old, NULL, tlc_zero(lc, t)));
    tlc_ptrvec *add = tlc_lower_begin(lc);
    th_expr *ptr = shared ? th_convert(a, tlc_shared_elem_ptr(lc, dst, idx), th_scalar(TH_I32))
                          : tlc_global_elem_ptr(lc, dst, idx);
    th_expr *args[2] = {ptr, tlc_coerce(lc, tlc_lower_expr(lc, s->u.atomic.value), t)};
    tlc_emit_ptx(lc, acq_rel && !shared ? tlc_ptx_atom_add_acq_rel_gpu(f32) : tlc_ptx_atom_add(f32, shared), args, 2,
                 &old, 1);
    th_stmt *add_st = tlc_lower_end(lc, add);
    th_expr *mask = shared ? NULL : tlc_global_in_bounds(lc, dst, idx, maxv);
    tlc_emit(lc, mask ? th_if(a, mask, add_st, NULL) : add_st);
}

static void atomic_add_prev_lower(tlc_lower_ctx *lc, const tir_stmt *s, th_expr **idx, const int64_t *maxv) {
    tlc_arena *a = lc->a;
    const tir_buffer *dst = s->u.atomic.dst.buf, *prev = s->u.atomic.prev.buf;
    bool f32 = dst->dtype == TIR_F32;
    th_type t = th_scalar(f32 ? TH_F32 : TH_I32);
    if (s->per_thread) {
        th_var *old = th_new_var(a, lc->tk, "prev", t, 0);
        atomic_add_returning(lc, s, idx, maxv, old, false);
        tlc_emit(lc, th_assign(a, lc->regs[prev->id], NULL, tlc_coerce(lc, th_read(a, old), lc->regs[prev->id]->type)));
        return;
    }
    int64_t off = tlc_op_scratch(lc, s, 4);
    tlc_emit_ptx(lc, tlc_ptx_fence_acq_rel_gpu(), NULL, 0, NULL, 0);
    tlc_emit(lc, tlc_barrier(lc)); /* the block's writes before the add; the scratch free */
    th_var *old = th_new_var(a, lc->tk, "prev", t, 0);
    tlc_ptrvec *one = tlc_lower_begin(lc);
    atomic_add_returning(lc, s, idx, maxv, old, true);
    tlc_emit(lc, th_store(a, th_shared_ptr(a, tlc_i32(lc, off)), th_read(a, old), 4));
    th_stmt *one_st = tlc_lower_end(lc, one);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_EQ, th_read(a, lc->tid), tlc_i32(lc, 0)), one_st, NULL));
    tlc_emit(lc, tlc_barrier(lc));
    tlc_emit(lc, th_assign(a, lc->regs[prev->id], NULL,
                           tlc_coerce(lc, th_load(a, th_shared_ptr(a, tlc_i32(lc, off)), t, 4), lc->regs[prev->id]->type)));
    tlc_emit_ptx(lc, tlc_ptx_fence_acq_rel_gpu(), NULL, 0, NULL, 0);
}

static int64_t atomic_add_scratch_bytes(const tir_kernel *k, const tir_stmt *s) {
    (void)k;
    return s->u.atomic.prev.buf && !s->per_thread ? 4 : 0;
}

static void atomic_add_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tir_region *rd = &s->u.atomic.dst;
    const tir_buffer *dst = rd->buf;
    if (dst->scope != TIR_SCOPE_GLOBAL && dst->scope != TIR_SCOPE_SHARED) {
        tlc_error(lc->diag, s->loc, "atomic_add needs a global or shared destination");
        return;
    }
    if (dst->dtype != TIR_F32 && dst->dtype != TIR_I32 && dst->dtype != TIR_F16 && dst->dtype != TIR_BF16 &&
        dst->dtype != TIR_I64) {
        tlc_error(lc->diag, s->loc, "atomic_add on %s is not supported", tir_dtype_name(dst->dtype));
        return;
    }
    if (dst->rank > 8) return;
    th_expr *idx[8];
    int64_t maxv[8];
    if (!s->u.atomic.src.buf) {
        for (int d = 0; d < dst->rank; d++) {
            idx[d] = tlc_coerce(lc, tlc_lower_expr(lc, rd->start[d]), th_scalar(TH_I32));
            int64_t lo, hi;
            maxv[d] = tlc_expr_range(lc, rd->start[d], &lo, &hi) && lo >= 0 ? hi : -1;
        }
        if (s->u.atomic.prev.buf) {
            if (lc->par || (dst->dtype != TIR_I32 && dst->dtype != TIR_F32)) {
                tlc_error(lc->diag, s->loc, "internal error: atomic_add with return_prev outside what sema allows");
                return;
            }
            atomic_add_prev_lower(lc, s, idx, maxv);
            return;
        }
        th_expr *v = tlc_lower_expr(lc, s->u.atomic.value);
        th_stmt *st = atomic_at(lc, dst, idx, maxv, v);
        th_expr *once = lc->par        ? tlc_frag_replica0(lc, lc->par->frag)
                        : s->per_thread ? NULL
                                        : th_cmp(a, THC_EQ, th_read(a, lc->tid), tlc_i32(lc, 0));
        tlc_emit(lc, once ? th_if(a, once, st, NULL) : st);
        return;
    }
    const tir_region *rs = &s->u.atomic.src;
    const tir_buffer *src = rs->buf;
    /* squeezed dims of both sides line up in order */
    int sd[8], dd[8], nd = rd->rank <= 8 ? tir_region_squeezed_dims(rd, dd) : -1;
    if (nd < 0 || rs->rank > 8 || tir_region_squeezed_dims(rs, sd) != nd) {
        tlc_error(lc->diag, s->loc, "atomic_add: region shapes do not line up");
        return;
    }
    if (src->scope == TIR_SCOPE_SHARED) {
        int64_t shape[TLC_FRAG_MAX_RANK];
        if (rs->rank > TLC_FRAG_MAX_RANK) {
            tlc_error(lc->diag, s->loc, "atomic_add: a shared source of rank %d is not supported", rs->rank);
            return;
        }
        for (int d = 0; d < rs->rank; d++)
            if (!tir_expr_const_int(rs->extent[d], &shape[d]) || shape[d] <= 0) {
                tlc_error(lc->diag, s->loc, "atomic_add: a shared source region needs constant extents");
                return;
            }
        atomic_add_region(lc, s, tlc_fragment_blocked(a, rs->rank, shape, lc->threads, 1), sd, dd, nd);
        return;
    }
    if (src->scope != TIR_SCOPE_FRAGMENT) {
        tlc_error(lc->diag, s->loc, "atomic_add from a %s region is not supported: copy it into a fragment first",
                  tir_scope_name(src->scope));
        return;
    }
    atomic_add_region(lc, s, src->fragment, sd, dd, nd);
}

/* ---------------- Tile IR, interpreter, table row ---------------- */
static void atomic_add_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_region(w, &s->u.atomic.dst, TIR_ACCESS_READ_WRITE, s);
    tir_access_region(w, &s->u.atomic.src, TIR_ACCESS_READ, s);
    tir_access_expr(w, s->u.atomic.value, s);
    tir_access_region(w, &s->u.atomic.prev, TIR_ACCESS_WRITE, s);
}

static void atomic_add_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_puts(p, "atomic_add(");
    tir_printer_region(p, &s->u.atomic.dst);
    tir_printer_puts(p, ", ");
    if (s->u.atomic.src.buf) tir_printer_region(p, &s->u.atomic.src);
    else tir_printer_expr(p, s->u.atomic.value);
    if (s->u.atomic.prev.buf) tir_printer_printf(p, ", return_prev=True) -> %s", s->u.atomic.prev.buf->name);
    else tir_printer_puts(p, ")");
}

static void atomic_add_verify(tir_verifier *v, const tir_stmt *s) {
    tir_verifier_region(v, &s->u.atomic.dst, s->loc, "atomic_add destination");
    if (s->u.atomic.src.buf) {
        tir_verifier_region(v, &s->u.atomic.src, s->loc, "atomic_add source");
        if (s->u.atomic.value) tir_verifier_fail(v, s->loc, "atomic_add has both a source region and a value");
    } else {
        tir_verifier_expr(v, s->u.atomic.value, s->loc);
    }
    if (s->u.atomic.prev.buf) {
        const tir_buffer *pb = s->u.atomic.prev.buf;
        if (pb->scope != TIR_SCOPE_VAR || pb->rank != 0 || s->u.atomic.prev.rank != 0 || pb->dtype != s->u.atomic.dst.buf->dtype ||
            s->u.atomic.src.buf)
            tir_verifier_fail(v, s->loc, "atomic_add's previous value must go to a scalar var of the destination's dtype");
    }
}

static void atomic_add_interp(tlc_interp *it, const tir_stmt *s) {
    rregion dst;
    tlc_interp_region(it, &s->u.atomic.dst, &dst, s->loc);
    tir_dtype dt = dst.ib->b->dtype;
    tlc_ival *dv = tlc_interp_scratch(it, 1, dst.elems);
    tlc_interp_gather(it, &dst, dv, TIR_F32);
    bool df = tlc_interp_isf(dt);
    if (!df) tlc_interp_gather(it, &dst, dv, TIR_I64);
    if (s->u.atomic.src.buf) {
        rregion src;
        tlc_interp_region(it, &s->u.atomic.src, &src, s->loc);
        tlc_interp_same_shape(it, &src, &dst, s->loc, "atomic_add");
        tlc_ival *sv = tlc_interp_scratch(it, 0, src.elems);
        tlc_interp_gather(it, &src, sv, df ? TIR_F32 : TIR_I64);
        for (int64_t i = 0; i < dst.elems; i++) {
            if (df) dv[i].f = tlc_round_to_dtype(dt, dv[i].f + sv[i].f);
            else dv[i].i = tir_wrap_int(dt, (int64_t)((uint64_t)dv[i].i + (uint64_t)sv[i].i));
        }
    } else {
        tlc_ival v = tlc_interp_eval(it, s->u.atomic.value);
        tir_dtype vt = s->u.atomic.value->dtype;
        for (int64_t i = 0; i < dst.elems; i++) {
            if (df) dv[i].f = tlc_round_to_dtype(dt, dv[i].f + (tlc_interp_isf(vt) ? v.f : (double)v.i));
            else dv[i].i = tir_wrap_int(dt, (int64_t)((uint64_t)dv[i].i +
                                                       (uint64_t)(tlc_interp_isf(vt) ? tlc_float_to_int(TIR_I64, v.f) : v.i)));
        }
    }
    if (s->u.atomic.prev.buf) { /* one element: its value before the add */
        rregion pr;
        tlc_interp_region(it, &s->u.atomic.prev, &pr, s->loc);
        tlc_ival *pv = tlc_interp_scratch(it, 0, 1);
        tlc_interp_gather(it, &dst, pv, df ? TIR_F32 : TIR_I64);
        tlc_interp_scatter(it, &pr, pv, df ? dt : TIR_I64);
    }
    tlc_interp_scatter(it, &dst, dv, df ? dt : TIR_I64);
}

const tlc_op_desc tlc_op_atomic_add = {
    .kind = TS_ATOMIC_ADD, .name = "atomic_add",
    .accesses = atomic_add_accesses, .print = atomic_add_print, .verify = atomic_add_verify,
    .interp = atomic_add_interp, .infer = atomic_add_infer, .scratch_bytes = atomic_add_scratch_bytes,
    .lower = atomic_add_lower,
};
