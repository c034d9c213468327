/* prefetch(X[...]): a hint that brings a region of a global tensor into the
 * L2 cache, so that the loads that follow find it there. Its use is before
 * pdl_sync(): a prefetch reads nothing the kernel sees, and since the
 * previous kernel's writes land in L2, data prefetched before they are done
 * is never stale. It has no effect on the kernel's results (the interpreter
 * skips it).
 *
 * Lowering (sm_90: cp.async.bulk.prefetch.L2, one instruction per
 * contiguous run, 16-byte chunks): the trailing dims the region covers whole
 * join the run of the dim before them, so a block of whole rows is one run;
 * the runs (one per index of the dims before) go to the threads in turn.
 * Rows past the tensor's end (or before its start) are dropped, and the
 * run's own dim is clamped to it, as a copy masks its tail; a run longer than 1 GiB is prefetched
 * up to there. Nothing on sm_80, which has no bulk prefetch. */
#include "../ir/tir_op.h"
#include "op_table.h"

/* Dim d of the region is the tensor's whole dim (start 0, the same extent). */
static bool covers_dim(const tir_region *r, int d) {
    int64_t s, e, n = tir_buffer_dim(r->buf, d);
    return n >= 0 && tir_expr_const_int(r->start[d], &s) && s == 0 && tir_expr_const_int(r->extent[d], &e) && e == n;
}

static void prefetch_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    if (!tlc_target_of(lc->arch)->tma) return; /* no bulk prefetch before sm_90 */
    tlc_arena *a = lc->a;
    const tir_region *r = &s->u.prefetch.src;
    const tir_buffer *g = r->buf;
    int rank = r->rank;
    int run_dim = rank - 1; /* the dims after it are covered whole */
    while (run_dim > 0 && covers_dim(r, run_dim)) run_dim--;
    int64_t ext[8], runs = 1;
    for (int d = 0; d < rank; d++) {
        if (!tir_expr_const_int(r->extent[d], &ext[d])) {
            tlc_error(lc->diag, s->loc, "internal error: prefetch region with a symbolic extent");
            return;
        }
        if (d < run_dim) runs *= ext[d];
    }
    /* elements of one run: the run dim's extent (clamped at run time to the
     * tensor's end) times the whole dims after it */
    th_expr *inner = tlc_i64(lc, 1);
    for (int d = run_dim + 1; d < rank; d++) inner = th_bin(a, THB_MUL, inner, tlc_dim_value(lc, g, d));
    th_expr *start_run = tlc_coerce(lc, tlc_lower_expr(lc, r->start[run_dim]), th_scalar(TH_I64));
    th_expr *left = th_bin(a, THB_SUB, tlc_dim_value(lc, g, run_dim), start_run);
    th_expr *count = th_bin(a, THB_MIN, left, tlc_i64(lc, ext[run_dim]));
    th_expr *bytes = th_bin(a, THB_MUL, th_bin(a, THB_MUL, count, inner), tlc_i64(lc, tir_dtype_bytes(g->dtype)));
    bytes = tlc_let(lc, "pfbytes", th_bin(a, THB_MIN, bytes, tlc_i64(lc, 1 << 30))); /* a run's first GiB */
    int64_t threads = lc->threads;
    th_var *kv = tlc_temp(lc, "pfk", th_scalar(TH_I32), 0);
    tlc_ptrvec *body = tlc_lower_begin(lc);
    /* run j = k * threads + tid, its index split over the dims before run_dim */
    th_expr *j = tlc_let(lc, "pfrun", th_bin(a, THB_ADD, th_bin(a, THB_MUL, th_read(a, kv), tlc_i32(lc, threads)),
                                             th_read(a, lc->tid)));
    th_expr *idx[8], *valid = th_cmp(a, THC_LT, j, tlc_i32(lc, runs));
    int64_t stride = runs;
    for (int d = 0; d < rank; d++) {
        th_expr *st = tlc_coerce(lc, tlc_lower_expr(lc, r->start[d]), th_scalar(TH_I32));
        if (d >= run_dim) {
            idx[d] = d == run_dim ? st : tlc_i32(lc, 0);
            continue;
        }
        stride /= ext[d];
        th_expr *off = th_bin(a, THB_UREM, th_bin(a, THB_UDIV, j, tlc_i32(lc, stride)), tlc_i32(lc, ext[d]));
        idx[d] = th_bin(a, THB_ADD, st, off);
        th_expr *i64 = tlc_coerce(lc, idx[d], th_scalar(TH_I64));
        valid = tlc_and(lc, valid, th_cmp(a, THC_LT, i64, tlc_dim_value(lc, g, d)));
        valid = tlc_and(lc, valid, th_cmp(a, THC_GE, i64, tlc_i64(lc, 0)));
    }
    /* a hint must not reach outside the tensor, even from a bad start */
    valid = tlc_and(lc, valid, th_cmp(a, THC_GE, start_run, tlc_i64(lc, 0)));
    valid = tlc_and(lc, valid, th_cmp(a, THC_GT, bytes, tlc_i64(lc, 0)));
    tlc_ptrvec *one = tlc_lower_begin(lc);
    th_expr *args[2] = {tlc_global_elem_ptr(lc, g, idx), tlc_coerce(lc, bytes, th_scalar(TH_I32))};
    tlc_emit_ptx(lc, tlc_ptx_bulk_prefetch_l2(), args, 2, NULL, 0);
    tlc_emit(lc, th_if(a, valid, tlc_lower_end(lc, one), NULL));
    th_stmt *b = tlc_lower_end(lc, body);
    tlc_emit(lc, th_for(a, kv, tlc_i32(lc, 0), tlc_i32(lc, (runs + threads - 1) / threads), 1, false, b));
}

static void prefetch_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_region(w, &s->u.prefetch.src, TIR_ACCESS_READ, s);
}

static void prefetch_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_puts(p, "prefetch(");
    tir_printer_region(p, &s->u.prefetch.src);
    tir_printer_puts(p, ")");
}

static void prefetch_verify(tir_verifier *v, const tir_stmt *s) {
    if (!tir_verifier_region(v, &s->u.prefetch.src, s->loc, "prefetch source")) return;
    if (s->u.prefetch.src.buf->scope != TIR_SCOPE_GLOBAL)
        tir_verifier_fail(v, s->loc, "prefetch of '%s', which is not a global tensor", s->u.prefetch.src.buf->name);
}

const tlc_op_desc tlc_op_prefetch = {
    .kind = TS_PREFETCH, .name = "prefetch",
    .accesses = prefetch_accesses, .print = prefetch_print, .verify = prefetch_verify,
    .interp = tlc_op_step_nothing, .lower = prefetch_lower, /* no layout, no scratch */
};
