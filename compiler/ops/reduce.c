/* reduce_max / reduce_sum / reduce_min / reduce_absmax / reduce_abssum(src, dst, dim, clear).
 *
 * Layout rule (common): dst = src's fragment with `dim` reduced: the dim's
 * slot digits disappear, its thread digits become replication (every thread
 * that held part of a row holds the row's result).
 *
 * Lowering, per thread: (1) a partial over the slots that map to the same
 * dst slot (a pairwise tree; padding holes contribute the identity);
 * (2) butterfly shuffles over the dim's thread bits that lie inside a warp;
 * (3) when the dim's thread digits span warps: partials through shared
 * memory (one word per thread and dst slot), a barrier, and every thread
 * combines the partials of its row's warps in the same order, so all
 * replicas get bitwise-equal results. Arithmetic in f32 (floats) or i32. */
#include <math.h>
#include <string.h>
#include "../support/int_math.h"
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

/* src's fragment with `dim` reduced, in dst's shape: the result's dims of
 * extent 1 may be dropped or added (TileLang reduces a 1-D tile into a (1,)
 * buffer, a row into an (M, 1) one); the others keep their order. For each
 * dim of the plain result, the dim of dst it is (to_dst, when not NULL). */
static tlc_fragment *result_layout(tlc_arena *a, const tlc_fragment *F, int dim, const tir_buffer *dst, int *to_dst) {
    tlc_fragment *r = tlc_fragment_reduce(a, F, dim);
    int map[TLC_FRAG_MAX_RANK];
    if (dst->rank > TLC_FRAG_MAX_RANK) return NULL;
    int j = 0;
    for (int i = 0; i < r->rank; i++) {
        map[i] = 0;
        if (r->shape[i] == 1) continue;
        while (j < dst->rank && tir_buffer_dim(dst, j) == 1) j++;
        if (j == dst->rank || tir_buffer_dim(dst, j) != r->shape[i]) return NULL;
        map[i] = j++;
    }
    while (j < dst->rank && tir_buffer_dim(dst, j) == 1) j++;
    if (j != dst->rank) return NULL;
    if (to_dst) memcpy(to_dst, map, sizeof map);
    if (r->rank == dst->rank) return r; /* the same dims: nothing moves */
    int64_t shape[TLC_FRAG_MAX_RANK];
    for (int d = 0; d < dst->rank; d++) shape[d] = tir_buffer_dim(dst, d);
    return tlc_fragment_relabel(a, r, map, dst->rank, shape);
}

static bool reduce_infer(tlc_infer *st, const tir_stmt *s, bool free_pass) {
    tir_buffer *src = s->u.reduce.src.buf, *dst = s->u.reduce.dst.buf;
    if (src->scope != TIR_SCOPE_FRAGMENT) return false;
    if (src->fragment) {
        if (dst->scope != TIR_SCOPE_FRAGMENT) return false;
        tlc_fragment *r = result_layout(st->a, src->fragment, s->u.reduce.dim, dst, NULL);
        if (!r) {
            tlc_error(st->diag, s->loc, "internal error: reduce: '%s' does not have the shape of '%s' reduced",
                      dst->name, src->name);
            st->failed = true;
            return false;
        }
        r->origin = tlc_arena_printf(st->a, "reduce of %s dim %d", src->name, s->u.reduce.dim);
        if (!tlc_infer_propose(st, dst, r, TLC_STRENGTH_COMMON, s) && !st->failed)
            tlc_infer_conflict(st, s, dst, r, "the reduction's result has a different layout");
        return st->changed;
    }
    if (!free_pass) return false;
    int64_t shape[TLC_FRAG_MAX_RANK];
    if (src->rank > TLC_FRAG_MAX_RANK) return false;
    for (int d = 0; d < src->rank; d++) shape[d] = tir_buffer_dim(src, d);
    tlc_fragment *f = tlc_fragment_blocked(st->a, src->rank, shape, tir_stmt_threads(st->k, s), tlc_vec_elems(src->dtype));
    f->origin = "reduce input";
    return tlc_infer_propose(st, src, f, TLC_STRENGTH_FREE, s);
}

typedef struct rctx {
    tlc_lower_ctx *lc;
    tir_reduce_kind kind;
    th_type ct;
    bool uns; /* uint32 values: unsigned min and max */
} rctx;

static th_expr *combine(const rctx *r, th_expr *x, th_expr *y) {
    tlc_arena *a = r->lc->a;
    switch (r->kind) {
    case TIR_REDUCE_SUM: case TIR_REDUCE_ABSSUM: return th_bin(a, THB_ADD, x, y);
    case TIR_REDUCE_MIN: return th_bin(a, r->uns ? THB_UMIN : THB_MIN, x, y);
    default: return th_bin(a, r->uns ? THB_UMAX : THB_MAX, x, y);
    }
}

static th_expr *identity(const rctx *r) {
    tlc_arena *a = r->lc->a;
    bool fl = r->ct.base == TH_F32;
    switch (r->kind) {
    case TIR_REDUCE_MAX: return fl ? th_float(a, TH_F32, -INFINITY) : th_int(a, r->ct.base, r->uns ? 0 : INT32_MIN);
    case TIR_REDUCE_MIN: return fl ? th_float(a, TH_F32, INFINITY) : th_int(a, r->ct.base, r->uns ? -1 : INT32_MAX);
    default: return fl ? th_float(a, TH_F32, 0.0) : th_int(a, r->ct.base, 0);
    }
}

/* Pairwise tree over v[0..n): shorter dependency chains than a left fold. */
static th_expr *tree(const rctx *r, th_expr **v, int n) {
    if (n == 1) return v[0];
    int h = n / 2;
    return combine(r, tree(r, v, h), tree(r, v + h, n - h));
}


/* Shared scratch for the partials of thread digits that span warps (what
 * reduce_lower exchanges through shared memory): one f32 word per thread
 * and destination slot. */
static int64_t reduce_scratch_bytes(const tir_kernel *k, const tir_stmt *s) {
    const tir_buffer *src = s->u.reduce.src.buf, *dst = s->u.reduce.dst.buf;
    if (src->scope != TIR_SCOPE_FRAGMENT || dst->scope != TIR_SCOPE_FRAGMENT || !src->fragment || !dst->fragment)
        return 0;
    const tlc_fragment *F = src->fragment;
    bool cross = false;
    for (int i = 0; i < F->ndigits; i++) {
        const tlc_digit *g = &F->digits[i];
        if (g->target != TLC_DIGIT_THREAD || g->dim != s->u.reduce.dim) continue;
        if (!tlc_is_pow2(g->tstride) || !tlc_is_pow2(g->extent) || g->tstride >= 32 || g->tstride * g->extent > 32)
            cross = true;
    }
    return cross ? dst->fragment->slots * (int64_t)tir_stmt_threads(k, s) * 4 : 0;
}

static void reduce_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tir_buffer *src = s->u.reduce.src.buf, *dst = s->u.reduce.dst.buf;
    int dim = s->u.reduce.dim;
    if (src->scope != TIR_SCOPE_FRAGMENT || dst->scope != TIR_SCOPE_FRAGMENT) {
        tlc_error(lc->diag, s->loc, "reduce from or into %s memory is not lowered yet: copy it into a fragment first",
                  src->scope != TIR_SCOPE_FRAGMENT ? tir_scope_name(src->scope) : tir_scope_name(dst->scope));
        return;
    }
    const tlc_fragment *F = src->fragment, *R = dst->fragment;
    int to_dst[TLC_FRAG_MAX_RANK];
    tlc_fragment *expect = result_layout(a, F, dim, dst, to_dst);
    if (!expect || !tlc_fragment_equal(expect, R)) {
        tlc_error(lc->diag, s->loc, "reduce: '%s' does not have the layout of '%s' reduced over dim %d", dst->name,
                  src->name, dim);
        return;
    }
    rctx r = {lc, s->u.reduce.kind, th_scalar(TH_F32), src->dtype == TIR_U32 || dst->dtype == TIR_U32};
    if (!tir_dtype_is_float(dst->dtype)) {
        if (tir_dtype_bytes(dst->dtype) > 4) {
            tlc_error(lc->diag, s->loc, "reduce into %s is not supported (at most 32-bit integers)",
                      tir_dtype_name(dst->dtype));
            return;
        }
        r.ct = th_scalar(TH_I32);
    }
    tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "reduce_%s %s -> %s dim %d", tir_reduce_name(r.kind), src->name,
                                                dst->name, dim)));
    th_expr *tidx[TLC_FRAG_MAX_RANK];
    tlc_frag_thread_index(lc, F, tidx);

    /* (1) per-thread partials */
    int64_t nd = R->slots;
    th_var *part = tlc_temp(lc, "red", r.ct, (int)nd);
    th_expr **vals = TLC_NEW_ARRAY(a, th_expr *, (size_t)F->slots + 1);
    for (int64_t ds = 0; ds < nd; ds++) {
        int n = 0;
        for (int64_t ss = 0; ss < F->slots; ss++) {
            int64_t c[TLC_FRAG_MAX_RANK], cr[TLC_FRAG_MAX_RANK], t0, rs;
            tlc_fragment_slot_part(F, ss, c);
            for (int d = 0; d < R->rank; d++) cr[d] = 0;
            for (int d = 0, o = 0; d < F->rank; d++)
                if (d != dim) cr[to_dst[o++]] += c[d];
            tlc_fragment_forward(R, cr, &t0, &rs);
            if (rs != ds) continue;
            th_expr *valid = tlc_frag_valid(lc, F, tidx, ss);
            if (valid && valid->kind == THE_INT && valid->u.ival == 0) continue;
            th_expr *v = tlc_coerce_from(lc, th_array_read(a, lc->regs[src->id], tlc_i32(lc, ss)), src->dtype, r.ct);
            if ((r.kind == TIR_REDUCE_ABSMAX || r.kind == TIR_REDUCE_ABSSUM) && !tir_dtype_is_unsigned(src->dtype))
                v = th_un(a, THU_ABS, v);
            if (valid) v = th_select(a, valid, v, identity(&r));
            vals[n++] = v;
        }
        th_expr *p = n ? tree(&r, vals, n) : identity(&r);
        tlc_emit(lc, th_assign(a, part, tlc_i32(lc, ds), p));
    }

    /* (2) shuffles inside warps, (3) shared memory across warps */
    int64_t cross_ts[TLC_FRAG_MAX_DIGITS], cross_e[TLC_FRAG_MAX_DIGITS];
    int ncross = 0;
    for (int i = 0; i < F->ndigits; i++) {
        const tlc_digit *g = &F->digits[i];
        if (g->target != TLC_DIGIT_THREAD || g->dim != dim) continue;
        int64_t ts = g->tstride, e = g->extent;
        if (tlc_is_pow2(ts) && tlc_is_pow2(e) && ts < 32) {
            int64_t in = e;
            while (ts * in > 32) in /= 2;
            for (int64_t m = ts; m < ts * in; m *= 2)
                for (int64_t ds = 0; ds < nd; ds++) {
                    th_expr *cur = th_array_read(a, part, tlc_i32(lc, ds));
                    th_expr *args[2] = {cur, tlc_i32(lc, m)};
                    th_expr *other = th_intrin_call(a, THI_SHFL_BFLY, r.ct, args, 2);
                    tlc_emit(lc, th_assign(a, part, tlc_i32(lc, ds), combine(&r, cur, other)));
                }
            if (in < e) { /* the rest of the digit lies across warps */
                cross_ts[ncross] = ts * in;
                cross_e[ncross++] = e / in;
            }
        } else {
            cross_ts[ncross] = ts;
            cross_e[ncross++] = e;
        }
    }
    if (ncross) {
        int64_t T = lc->threads;
        int64_t off = tlc_op_scratch(lc, s, nd * T * 4);
        th_expr *tid = th_read(a, lc->tid);
        tlc_op_scratch_barrier(lc, s);
        for (int64_t ds = 0; ds < nd; ds++) {
            th_expr *byte = th_bin(a, THB_MUL, th_bin(a, THB_ADD, tid, tlc_i32(lc, ds * T)), tlc_i32(lc, 4));
            tlc_emit(lc, th_store(a, th_shared_ptr(a, th_bin(a, THB_ADD, byte, tlc_i32(lc, off))),
                                  th_array_read(a, part, tlc_i32(lc, ds)), 4));
        }
        tlc_emit(lc, tlc_barrier(lc));
        /* this thread with the cross digits cleared */
        th_expr *base = tid;
        int64_t combos = 1;
        for (int i = 0; i < ncross; i++) {
            th_expr *v = th_bin(a, THB_UREM, th_bin(a, THB_UDIV, tid, tlc_i32(lc, cross_ts[i])), tlc_i32(lc, cross_e[i]));
            base = th_bin(a, THB_SUB, base, th_bin(a, THB_MUL, v, tlc_i32(lc, cross_ts[i])));
            combos *= cross_e[i];
        }
        base = tlc_let(lc, "rbase", base);
        for (int64_t ds = 0; ds < nd; ds++) {
            th_expr **parts = TLC_NEW_ARRAY(a, th_expr *, (size_t)combos);
            for (int64_t w = 0; w < combos; w++) {
                int64_t rest = w, add = 0;
                for (int i = 0; i < ncross; i++) {
                    add += (rest % cross_e[i]) * cross_ts[i];
                    rest /= cross_e[i];
                }
                th_expr *t = th_bin(a, THB_ADD, base, tlc_i32(lc, add + ds * T));
                th_expr *byte = th_bin(a, THB_ADD, th_bin(a, THB_MUL, t, tlc_i32(lc, 4)), tlc_i32(lc, off));
                parts[w] = th_load(a, th_shared_ptr(a, byte), r.ct, 4);
            }
            tlc_emit(lc, th_assign(a, part, tlc_i32(lc, ds), tree(&r, parts, (int)combos)));
        }
    }

    /* result */
    th_type dt = tlc_reg_type(dst->dtype);
    for (int64_t ds = 0; ds < nd; ds++) {
        th_expr *v = th_array_read(a, part, tlc_i32(lc, ds));
        if (!s->u.reduce.clear) {
            th_expr *old = tlc_coerce_from(lc, th_array_read(a, lc->regs[dst->id], tlc_i32(lc, ds)), dst->dtype, r.ct);
            v = r.kind == TIR_REDUCE_ABSMAX ? th_bin(a, r.uns ? THB_UMAX : THB_MAX, old, v) : combine(&r, old, v);
        }
        tlc_emit(lc, th_assign(a, lc->regs[dst->id], tlc_i32(lc, ds), tlc_coerce(lc, v, dt)));
    }
}

/* ---------------- Tile IR, interpreter, table row ---------------- */
static void reduce_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_region(w, &s->u.reduce.src, TIR_ACCESS_READ, s);
    tir_access_region(w, &s->u.reduce.dst, s->u.reduce.clear ? TIR_ACCESS_WRITE : TIR_ACCESS_READ_WRITE, s);
}

static void reduce_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_printf(p, "reduce_%s(", tir_reduce_name(s->u.reduce.kind));
    tir_printer_region(p, &s->u.reduce.src);
    tir_printer_puts(p, ", ");
    tir_printer_region(p, &s->u.reduce.dst);
    tir_printer_printf(p, ", dim=%d, clear=%s)", s->u.reduce.dim, tir_bool_text(s->u.reduce.clear));
}

static void reduce_verify(tir_verifier *v, const tir_stmt *s) {
    bool gs = tir_verifier_region(v, &s->u.reduce.src, s->loc, "reduce source");
    bool gd = tir_verifier_region(v, &s->u.reduce.dst, s->loc, "reduce destination");
    const tir_buffer *src = s->u.reduce.src.buf;
    if (gs && src->scope != TIR_SCOPE_FRAGMENT && src->scope != TIR_SCOPE_SHARED)
        tir_verifier_fail(v, s->loc, "reduce source '%s' is not a fragment or shared buffer",
                          src->name ? src->name : "<anon>");
    if (!gs || !gd) return;
    int64_t ss[8], sd[8];
    int ns = tir_region_shape(&s->u.reduce.src, ss), nd = tir_region_shape(&s->u.reduce.dst, sd);
    int dim = s->u.reduce.dim;
    if (dim < 0 || dim >= s->u.reduce.src.rank) {
        tir_verifier_fail(v, s->loc, "reduce dim %d outside the source's rank %d", dim, s->u.reduce.src.rank);
        return;
    }
    if (ns < 0 || nd < 0 || ns != s->u.reduce.src.rank) return; /* symbolic or squeezed source: sema's call */
    int64_t want[8];
    int nw = 0;
    for (int i = 0; i < ns; i++)
        if (i != dim) want[nw++] = ss[i];
    /* A reduction to a single value may keep a dim of 1 (squeezed away). */
    if (!tir_shapes_equal(sd, nd, want, nw)) {
        char got[128], exp[128];
        tir_shape_text(got, sizeof got, sd, nd);
        tir_shape_text(exp, sizeof exp, want, nw);
        tir_verifier_fail(v, s->loc, "reduce destination has shape %s, expected %s", got, exp);
    }
}

static void reduce_interp(tlc_interp *it, const tir_stmt *s) {
    rregion src, dst;
    tlc_interp_region(it, &s->u.reduce.src, &src, s->loc);
    tlc_interp_region(it, &s->u.reduce.dst, &dst, s->loc);
    int dim = s->u.reduce.dim;
    if (dim < 0 || dim >= src.rank)
        tlc_interp_fail(it, s->loc, "reduce: dim %d out of range for rank %d", dim, src.rank);
    int64_t outer = 1, inner = 1, R = src.ext[dim];
    for (int d = 0; d < dim; d++) outer *= src.ext[d];
    for (int d = dim + 1; d < src.rank; d++) inner *= src.ext[d];
    if (dst.elems != outer * inner)
        tlc_interp_fail(it, s->loc, "reduce: destination '%s' has %lld elements, expected %lld",
                        dst.ib->b->name, (long long)dst.elems, (long long)(outer * inner));
    tlc_ival *sv = tlc_interp_scratch(it, 0, src.elems), *dv = tlc_interp_scratch(it, 1, dst.elems);
    tlc_interp_gather(it, &src, sv, TIR_F32);
    tir_dtype dt = dst.ib->b->dtype;
    tir_reduce_kind kind = s->u.reduce.kind;
    if (!s->u.reduce.clear) tlc_interp_gather(it, &dst, dv, TIR_F32);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double acc = kind == TIR_REDUCE_MAX ? -INFINITY : kind == TIR_REDUCE_MIN ? INFINITY : 0.0;
            const tlc_ival *p = sv + o * R * inner + in;
            for (int64_t r = 0; r < R; r++) {
                double x = p[r * inner].f;
                switch (kind) {
                case TIR_REDUCE_MAX: acc = fmax(acc, x); break;
                case TIR_REDUCE_MIN: acc = fmin(acc, x); break;
                case TIR_REDUCE_SUM: acc += x; break;
                case TIR_REDUCE_ABSMAX: acc = fmax(acc, fabs(x)); break;
                case TIR_REDUCE_ABSSUM: acc += fabs(x); break;
                }
            }
            tlc_ival *d = &dv[o * inner + in];
            if (!s->u.reduce.clear) {
                switch (kind) {
                case TIR_REDUCE_MAX: acc = fmax(acc, d->f); break;
                case TIR_REDUCE_MIN: acc = fmin(acc, d->f); break;
                case TIR_REDUCE_SUM: acc += d->f; break;
                case TIR_REDUCE_ABSMAX: acc = fmax(acc, d->f); break;
                case TIR_REDUCE_ABSSUM: acc += d->f; break;
                }
            }
            d->f = (double)(float)acc;
        }
    (void)dt;
    tlc_interp_scatter(it, &dst, dv, TIR_F32);
}

const tlc_op_desc tlc_op_reduce = {
    .kind = TS_REDUCE, .name = "reduce",
    .accesses = reduce_accesses, .print = reduce_print, .verify = reduce_verify, .interp = reduce_interp,
    .infer = reduce_infer, .scratch_bytes = reduce_scratch_bytes, .lower = reduce_lower,
};
