/* T.ptx_cp_async(T.access_ptr(dst[...], "w", n), T.access_ptr(src[...],
 * "r", n), n[, predicate]) (docs/language.md 11.9): one thread's copy of n
 * consecutive elements (4, 8 or 16 bytes) of a global tensor's row into a
 * shared buffer by cp.async, as TileLang's hand-pipelined producers issue
 * them, each thread its own; their completion is the program's to wait for
 * (T.cp_async_barrier_noinc and a barrier wait).
 *
 * The shared address follows the buffer's layout: the n elements start at
 * a multiple of n in the last dim (proved from the index, else an error),
 * so they lie in one 16-byte unit, which no swizzle splits. The global
 * address is the tensor's row-major element, aligned when the index and
 * the row length are multiples of n: the index proved so (else an error),
 * the length checked by sema (at launch where it is a size).
 * Elements outside the tensor, and every element where the predicate is
 * false, are not read: the copy's source size is 0 then and the bytes are
 * zeros, so a stray index reads nothing it should not. The interpreter
 * copies at once (the copy has landed by any wait that orders it). */
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

#define MAX_RANK 8

/* tlc_expr_multiple_with's variable callback: a let stands for its value. */
static int64_t let_multiple(const tir_var *v, void *ctx) {
    return v->kind == TV_LET && v->assigned_once && v->def ? tlc_expr_multiple_with(v->def, let_multiple, ctx) : 1;
}

static void cp_async_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tir_region *dst = &s->u.cp_async.dst, *src = &s->u.cp_async.src;
    int n = s->u.cp_async.elems, bytes = n * tir_dtype_bytes(dst->buf->dtype);
    int dl = dst->rank - 1, sl = src->rank - 1;
    /* (the rows' length: sema checked it, or made it a launch check) */
    if (tlc_expr_multiple_with(dst->start[dl], let_multiple, NULL) % n ||
        tlc_expr_multiple_with(src->start[sl], let_multiple, NULL) % n) {
        tlc_error(lc->diag, s->loc, "T.ptx_cp_async copies %d bytes, so its elements must start at a multiple of %d "
                  "in the last dimension of '%s' and of '%s', which tlc cannot prove here",
                  bytes, n, dst->buf->name, src->buf->name);
        return;
    }
    th_expr *di[MAX_RANK], *si[MAX_RANK];
    if (dst->rank > MAX_RANK || src->rank > MAX_RANK) {
        tlc_error(lc->diag, s->loc, "T.ptx_cp_async of a buffer of more than %d dimensions", MAX_RANK);
        return;
    }
    for (int d = 0; d < dst->rank; d++) di[d] = tlc_coerce(lc, tlc_lower_expr(lc, dst->start[d]), th_scalar(TH_I32));
    th_expr *inside = s->u.cp_async.pred
                          ? tlc_coerce(lc, tlc_lower_expr(lc, s->u.cp_async.pred), th_scalar(TH_I1))
                          : NULL;
    for (int d = 0; d < src->rank; d++) {
        si[d] = tlc_let(lc, "cpi", tlc_coerce(lc, tlc_lower_expr(lc, src->start[d]), th_scalar(TH_I32)));
        /* the whole run inside dim d: 0 <= i and i + extent <= dim (unsigned) */
        int64_t ext = d == sl ? n : 1, lo, hi, dim = tir_buffer_dim(src->buf, d);
        if (dim > 0 && tlc_expr_range(lc, src->start[d], &lo, &hi) && lo >= 0 && hi + ext <= dim) continue;
        th_expr *lim = dim > 0 ? tlc_i32(lc, dim - ext + 1)
                               : th_bin(a, THB_SUB, tlc_coerce(lc, tlc_dim_value(lc, src->buf, d), th_scalar(TH_I32)),
                                        tlc_i32(lc, ext - 1));
        inside = tlc_and(lc, inside, th_cmp(a, THC_ULT, si[d], lim));
    }
    th_expr *sp = th_convert(a, tlc_shared_elem_ptr(lc, dst->buf, di), th_scalar(TH_I32));
    th_expr *gp = tlc_global_elem_ptr(lc, src->buf, si);
    th_expr *size = inside ? th_select(a, inside, tlc_i32(lc, bytes), tlc_i32(lc, 0)) : tlc_i32(lc, bytes);
    th_expr *args[3] = {sp, gp, size};
    tlc_emit_ptx(lc, tlc_ptx_cp_async_bytes(a, bytes), args, 3, NULL, 0);
}

static void cp_async_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_region(w, &s->u.cp_async.src, TIR_ACCESS_READ, s);
    tir_access_region(w, &s->u.cp_async.dst, TIR_ACCESS_WRITE, s);
    if (s->u.cp_async.pred) tir_access_expr(w, s->u.cp_async.pred, s);
}

static void cp_async_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_puts(p, "ptx_cp_async(");
    tir_printer_region(p, &s->u.cp_async.dst);
    tir_printer_puts(p, ", ");
    tir_printer_region(p, &s->u.cp_async.src);
    tir_printer_printf(p, ", %d", s->u.cp_async.elems);
    if (s->u.cp_async.pred) {
        tir_printer_puts(p, ", predicate=");
        tir_printer_expr(p, s->u.cp_async.pred);
    }
    tir_printer_puts(p, ")");
}

static void cp_async_verify(tir_verifier *v, const tir_stmt *s) {
    const tir_region *dst = &s->u.cp_async.dst, *src = &s->u.cp_async.src;
    if (!tir_verifier_region(v, dst, s->loc, "cp.async destination") ||
        !tir_verifier_region(v, src, s->loc, "cp.async source"))
        return;
    if (dst->buf->scope != TIR_SCOPE_SHARED || src->buf->scope != TIR_SCOPE_GLOBAL)
        tir_verifier_fail(v, s->loc, "ptx_cp_async copies from a global tensor into a shared buffer");
    if (s->u.cp_async.pred) tir_verifier_expr(v, s->u.cp_async.pred, s->loc);
}

/* One thread's copy, as the GPU makes it: all n elements, or zeros where
 * the predicate is false or the run is not wholly inside the tensor. */
static void cp_async_interp(tlc_interp *it, const tir_stmt *s) {
    const tir_region *src = &s->u.cp_async.src;
    rregion d, r;
    tlc_interp_region(it, &s->u.cp_async.dst, &d, s->loc);
    bool inside = !s->u.cp_async.pred || tlc_interp_eval_i(it, s->u.cp_async.pred) != 0;
    const ibuf *ib = tlc_interp_buf(it, src->buf, s->loc);
    for (int i = 0; i < src->rank && inside; i++) {
        int64_t at = tlc_interp_eval_i(it, src->start[i]), ext = i == src->rank - 1 ? s->u.cp_async.elems : 1;
        inside = at >= 0 && at <= ib->dims[i] - ext;
    }
    if (!inside) {
        tlc_ival zero;
        if (tlc_interp_isf(d.ib->b->dtype)) zero.f = 0;
        else zero.i = 0;
        tlc_interp_set_all(it, &d, zero);
        return;
    }
    tlc_interp_region(it, src, &r, s->loc);
    tlc_interp_same_shape(it, &r, &d, s->loc, "ptx_cp_async");
    tlc_ival *tmp = tlc_interp_scratch(it, 0, r.elems);
    tlc_interp_gather(it, &r, tmp, src->buf->dtype);
    tlc_interp_scatter(it, &d, tmp, src->buf->dtype);
}

const tlc_op_desc tlc_op_cp_async = {
    .kind = TS_CP_ASYNC, .name = "ptx_cp_async", .each_thread = true,
    .accesses = cp_async_accesses, .print = cp_async_print, .verify = cp_async_verify,
    .interp = cp_async_interp, .lower = cp_async_lower, /* no layout, no scratch */
};
