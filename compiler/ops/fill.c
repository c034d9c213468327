/* fill(dst, value) / clear(dst): every element of a region gets one value.
 *
 * Layout rule: a fragment nothing else constrains gets a blocked fragment
 * (free). Lowering: fragments assign their slots (a partial region guards
 * each slot with its logical index), local buffers and vars assign their
 * elements, shared and global regions are spread over the threads with a
 * blocked fragment (global writes masked against the tensor's dims). */
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

static bool fill_infer(tlc_infer *st, const tir_stmt *s, bool free_pass) {
    tir_buffer *b = s->u.fill.dst.buf;
    if (!free_pass || b->scope != TIR_SCOPE_FRAGMENT || b->fragment || b->rank > TLC_FRAG_MAX_RANK) return false;
    int64_t shape[TLC_FRAG_MAX_RANK];
    for (int d = 0; d < b->rank; d++) shape[d] = tir_buffer_dim(b, d);
    tlc_fragment *f = tlc_fragment_blocked(st->a, b->rank, shape, tir_stmt_threads(st->k, s), tlc_vec_elems(b->dtype));
    f->origin = "fill";
    return tlc_infer_propose(st, b, f, TLC_STRENGTH_FREE, s);
}

/* Condition that logical index `l` of the buffer lies in region r (NULL: always). */
static th_expr *in_region(tlc_lower_ctx *lc, const tir_region *r, th_expr *const *l) {
    th_expr *cond = NULL;
    for (int d = 0; d < r->rank; d++) {
        int64_t s0, e;
        bool cs = tir_expr_const_int(r->start[d], &s0), ce = tir_expr_const_int(r->extent[d], &e);
        if (cs && ce && s0 == 0 && e == tir_buffer_dim(r->buf, d)) continue;
        th_expr *st = tlc_coerce(lc, tlc_lower_expr(lc, r->start[d]), th_scalar(TH_I32));
        th_expr *ex = tlc_coerce(lc, tlc_lower_expr(lc, r->extent[d]), th_scalar(TH_I32));
        cond = tlc_and(lc, cond, th_cmp(lc->a, THC_GE, l[d], st));
        cond = tlc_and(lc, cond, th_cmp(lc->a, THC_LT, l[d], th_bin(lc->a, THB_ADD, st, ex)));
    }
    return cond;
}

/* A fill between memories, spread over the threads: what every element shares. */
typedef struct fill_walk {
    const tir_region *r;
    const int64_t *shape; /* the region's extents */
    th_expr *rep0, *who;  /* replica 0; a thread of the walk (NULL: always) */
    th_expr *value;
} fill_walk;

/* The element at logical index l of the region, unless `valid` (a hole test) fails. */
static void fill_elem(tlc_lower_ctx *lc, const fill_walk *w, th_expr *const *l, th_expr *valid) {
    tlc_arena *a = lc->a;
    const tir_region *r = w->r;
    const tir_buffer *b = r->buf;
    th_expr *idx[8];
    int64_t maxv[8];
    for (int d = 0; d < r->rank; d++) {
        th_expr *st = tlc_coerce(lc, tlc_lower_expr(lc, r->start[d]), th_scalar(TH_I32));
        idx[d] = th_bin(a, THB_ADD, st, l[d]);
        int64_t lo, hi;
        maxv[d] = tlc_expr_range(lc, r->start[d], &lo, &hi) && lo >= 0 ? hi + w->shape[d] - 1 : -1;
    }
    th_expr *ptr = b->scope == TIR_SCOPE_GLOBAL ? tlc_global_elem_ptr(lc, b, idx) : tlc_shared_elem_ptr(lc, b, idx);
    th_expr *cond = tlc_and(lc, tlc_and(lc, valid, w->rep0),
                            b->scope == TIR_SCOPE_GLOBAL ? tlc_global_in_bounds(lc, b, idx, maxv) : NULL);
    cond = tlc_and(lc, cond, w->who);
    th_stmt *st = th_store(a, ptr, tlc_coerce(lc, w->value, tlc_mem_type(b->dtype)), tir_dtype_bytes(b->dtype));
    tlc_emit(lc, cond ? th_if(a, cond, st, NULL) : st);
}

static void fill_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tir_region *r = &s->u.fill.dst;
    const tir_buffer *b = r->buf;
    th_type rt = tlc_reg_type(b->dtype);
    const tir_expr *fv = s->u.fill.value;
    th_expr *value = tlc_let(lc, "fv", tlc_convert_value(lc, tlc_lower_expr(lc, fv), fv->dtype, b->dtype, rt));
    switch (b->scope) {
    case TIR_SCOPE_VAR:
        tlc_emit(lc, th_assign(a, lc->regs[b->id], NULL, value));
        return;
    case TIR_SCOPE_FRAGMENT: {
        const tlc_fragment *F = b->fragment;
        th_expr *tidx[TLC_FRAG_MAX_RANK];
        tlc_frag_thread_index(lc, F, tidx);
        for (int64_t slot = 0; slot < F->slots; slot++) {
            int64_t c[TLC_FRAG_MAX_RANK];
            tlc_fragment_slot_part(F, slot, c);
            th_expr *l[TLC_FRAG_MAX_RANK];
            for (int d = 0; d < F->rank; d++) l[d] = th_bin(a, THB_ADD, tidx[d], tlc_i32(lc, c[d]));
            th_stmt *st = th_assign(a, lc->regs[b->id], tlc_i32(lc, slot), value);
            th_expr *cond = in_region(lc, r, l);
            tlc_emit(lc, cond ? th_if(a, cond, st, NULL) : st);
        }
        return;
    }
    case TIR_SCOPE_LOCAL: {
        int64_t n = tir_buffer_elems(b);
        for (int64_t i = 0; i < n; i++) {
            th_expr *l[8];
            int64_t rest = i;
            for (int d = b->rank - 1; d >= 0 && d < 8; d--) {
                int64_t e = tir_buffer_dim(b, d);
                l[d] = tlc_i32(lc, rest % e);
                rest /= e;
            }
            th_stmt *st = th_assign(a, lc->regs[b->id], tlc_i32(lc, i), value);
            th_expr *cond = b->rank <= 8 ? in_region(lc, r, l) : NULL;
            tlc_emit(lc, cond ? th_if(a, cond, st, NULL) : st);
        }
        return;
    }
    case TIR_SCOPE_SHARED:
    case TIR_SCOPE_GLOBAL: {
        int64_t shape[8];
        int n = 0;
        for (int d = 0; d < r->rank && d < 8; d++) {
            int64_t e;
            if (!tir_expr_const_int(r->extent[d], &e)) {
                tlc_error(lc->diag, s->loc, "fill of a region with a symbolic extent is not supported");
                return;
            }
            shape[n++] = e;
        }
        if (n > TLC_FRAG_MAX_RANK || r->rank > 8) {
            tlc_error(lc->diag, s->loc, "fill of a region of more than %d dims is not supported", TLC_FRAG_MAX_RANK);
            return;
        }
        tlc_fragment *I = tlc_fragment_blocked(a, n, shape, lc->threads, 1);
        th_expr *tidx[TLC_FRAG_MAX_RANK];
        tlc_frag_thread_index(lc, I, tidx);
        fill_walk w = {r, shape, tlc_frag_replica0(lc, I), NULL, value};
        if (I->threads < lc->threads) w.who = th_cmp(a, THC_LT, th_read(a, lc->tid), tlc_i32(lc, I->threads));
        if (tlc_slot_loop_wanted(I, 1)) {
            tlc_slot_loop l;
            tlc_slot_loop_begin(lc, &l, I, 1, tidx);
            fill_elem(lc, &w, l.ilog, l.valid);
            tlc_slot_loop_end(lc, &l);
            return;
        }
        for (int64_t slot = 0; slot < I->slots; slot++) {
            int64_t c[TLC_FRAG_MAX_RANK];
            tlc_fragment_slot_part(I, slot, c);
            th_expr *valid = tlc_frag_valid(lc, I, tidx, slot);
            if (valid && valid->kind == THE_INT && valid->u.ival == 0) continue;
            th_expr *l[TLC_FRAG_MAX_RANK];
            for (int d = 0; d < I->rank; d++) l[d] = th_bin(a, THB_ADD, tidx[d], tlc_i32(lc, c[d]));
            fill_elem(lc, &w, l, valid);
        }
        return;
    }
    }
}

/* ---------------- Tile IR, interpreter, table row ---------------- */
static void fill_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_region(w, &s->u.fill.dst, TIR_ACCESS_WRITE, s);
    tir_access_expr(w, s->u.fill.value, s);
}

static void fill_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_puts(p, s->u.fill.is_clear ? "clear(" : "fill(");
    tir_printer_region(p, &s->u.fill.dst);
    if (!s->u.fill.is_clear) {
        tir_printer_puts(p, ", ");
        tir_printer_expr(p, s->u.fill.value);
    }
    tir_printer_puts(p, ")");
}

static void fill_verify(tir_verifier *v, const tir_stmt *s) {
    tir_verifier_region(v, &s->u.fill.dst, s->loc, s->u.fill.is_clear ? "clear" : "fill");
    if (s->u.fill.value || !s->u.fill.is_clear) tir_verifier_expr(v, s->u.fill.value, s->loc);
}

static void fill_interp(tlc_interp *it, const tir_stmt *s) {
    rregion dst;
    tlc_interp_region(it, &s->u.fill.dst, &dst, s->loc);
    tir_dtype t = dst.ib->b->dtype;
    tlc_ival v;
    if (s->u.fill.is_clear || !s->u.fill.value) {
        if (tlc_interp_isf(t)) v.f = 0; else v.i = 0;
    } else {
        v = tlc_interp_convert(tlc_interp_eval(it, s->u.fill.value), s->u.fill.value->dtype, t);
    }
    tlc_interp_set_all(it, &dst, v);
}

const tlc_op_desc tlc_op_fill = {
    .kind = TS_FILL, .name = "fill",
    .accesses = fill_accesses, .print = fill_print, .verify = fill_verify, .interp = fill_interp,
    .infer = fill_infer, .lower = fill_lower,
};
