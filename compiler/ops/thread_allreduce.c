/* TVM's tvm_thread_allreduce (TileLang writes it under `with
 * T.attr(T.comm_reducer(...), "reduce_scope", ...)`): in thread-indexed
 * code, every thread's value combined (sum, max or min) over the threads
 * that differ only along one thread axis, the result in each of them.
 * Every thread of the block reaches it (sema keeps it out of code where the
 * threads part ways).
 *
 * Lowering: each thread stores its value (float32, or int32 for integer
 * results) in one word of shared scratch, a barrier, then each combines
 * its group's words in the same order (so the group's results are equal
 * bit for bit) and stores the result in its per-thread buffer. The
 * interpreter (the op runs per thread, tir_stmt.per_thread) reads the
 * group's values in their threads, in the same order, rounding each sum to
 * float32 as the GPU does. */
#include <math.h>
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

/* The axis's stride in the linear thread index, and its extent. */
static void axis_shape(const tir_kernel *k, int axis, int64_t *stride, int64_t *extent) {
    *stride = 1;
    for (int a = 0; a < axis; a++) *stride *= k->thread_dims[a];
    *extent = k->thread_dims[axis];
}

static int64_t allreduce_scratch_bytes(const tir_kernel *k, const tir_stmt *s) {
    (void)s;
    return (int64_t)k->threads * 4;
}

static th_expr *combine(tlc_lower_ctx *lc, tir_reduce_kind kind, th_expr *x, th_expr *y) {
    switch (kind) {
    case TIR_REDUCE_MAX: return th_bin(lc->a, THB_MAX, x, y);
    case TIR_REDUCE_MIN: return th_bin(lc->a, THB_MIN, x, y);
    default: return th_bin(lc->a, THB_ADD, x, y);
    }
}

/* The scratch word of thread `t` (scratch at byte offset off). */
static th_expr *word_of(tlc_lower_ctx *lc, int64_t off, th_expr *t, th_type ct) {
    th_expr *byte = th_bin(lc->a, THB_ADD, th_bin(lc->a, THB_MUL, t, tlc_i32(lc, 4)), tlc_i32(lc, off));
    return th_load(lc->a, th_shared_ptr(lc->a, byte), ct, 4);
}

static void allreduce_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tir_kernel *k = lc->k;
    const tir_region *d = &s->u.allreduce.dst;
    bool isf = tir_dtype_is_float(d->buf->dtype);
    tir_dtype wt = isf ? TIR_F32 : TIR_I32;
    th_type ct = th_scalar(isf ? TH_F32 : TH_I32);
    int64_t stride, extent;
    axis_shape(k, s->u.allreduce.axis, &stride, &extent);
    const tir_expr *value = s->u.allreduce.value;
    th_expr *v = tlc_convert_value(lc, tlc_lower_expr(lc, value), value->dtype, wt, ct);
    int64_t off = tlc_op_scratch(lc, s, k->threads * 4);
    tlc_op_scratch_barrier(lc, s);
    th_expr *tid = th_read(a, lc->block_tid); /* the block's thread axes */
    th_expr *mine = th_bin(a, THB_ADD, th_bin(a, THB_MUL, tid, tlc_i32(lc, 4)), tlc_i32(lc, off));
    tlc_emit(lc, th_store(a, th_shared_ptr(a, mine), v, 4));
    tlc_emit(lc, th_barrier(a));
    /* this thread with its digit of the axis cleared: the group's first */
    th_expr *digit = th_bin(a, THB_UREM, th_bin(a, THB_UDIV, tid, tlc_i32(lc, stride)), tlc_i32(lc, extent));
    th_expr *base = tlc_let(lc, "arbase", th_bin(a, THB_SUB, tid, th_bin(a, THB_MUL, digit, tlc_i32(lc, stride))));
    th_var *acc = tlc_temp(lc, "ar", ct, 0);
    th_var *j = tlc_temp(lc, "arj", th_scalar(TH_I32), 0);
    th_expr *member = th_bin(a, THB_ADD, base, th_bin(a, THB_MUL, th_read(a, j), tlc_i32(lc, stride)));
    tlc_emit(lc, th_assign(a, acc, NULL, word_of(lc, off, base, ct)));
    th_stmt *step = th_assign(a, acc, NULL, combine(lc, s->u.allreduce.kind, th_read(a, acc), word_of(lc, off, member, ct)));
    tlc_emit(lc, th_for(a, j, tlc_i32(lc, 1), tlc_i32(lc, extent), 1, extent <= 32, step));
    tlc_lower_store(lc, d->buf, d->start, tlc_convert_value(lc, th_read(a, acc), wt, d->buf->dtype,
                                                             tlc_reg_type(d->buf->dtype)),
                    s->loc);
}

static void allreduce_interp(tlc_interp *it, const tir_stmt *s) {
    const tir_kernel *k = it->k;
    if (!it->nthreads || !it->active)
        tlc_interp_fail(it, s->loc, "internal error: thread_allreduce outside thread-indexed code");
    int64_t stride, extent;
    axis_shape(k, s->u.allreduce.axis, &stride, &extent);
    int t = it->thread;
    int64_t base = t - t / stride % extent * stride;
    const tir_expr *value = s->u.allreduce.value;
    bool isf = tir_dtype_is_float(s->u.allreduce.dst.buf->dtype);
    tir_dtype wt = isf ? TIR_F32 : TIR_I32;
    tlc_ival acc = {0};
    for (int64_t j = 0; j < extent; j++) {
        int m = (int)(base + j * stride);
        if (!it->active[m])
            tlc_interp_fail(it, s->loc, "thread_allreduce in thread %d needs thread %d, which does not reach it", t, m);
        tlc_interp_use_thread(it, m);
        tlc_ival x = tlc_interp_convert(tlc_interp_eval(it, value), value->dtype, wt);
        if (j == 0) {
            acc = x;
        } else if (isf) {
            double r = s->u.allreduce.kind == TIR_REDUCE_MAX   ? fmax(acc.f, x.f)
                       : s->u.allreduce.kind == TIR_REDUCE_MIN ? fmin(acc.f, x.f)
                                                               : acc.f + x.f;
            acc.f = (double)(float)r;
        } else {
            int64_t r = s->u.allreduce.kind == TIR_REDUCE_MAX   ? (acc.i > x.i ? acc.i : x.i)
                        : s->u.allreduce.kind == TIR_REDUCE_MIN ? (acc.i < x.i ? acc.i : x.i)
                                                                : acc.i + x.i;
            acc.i = tir_wrap_int(TIR_I32, r);
        }
    }
    tlc_interp_use_thread(it, t);
    rregion r;
    tlc_interp_region(it, &s->u.allreduce.dst, &r, s->loc);
    tlc_interp_scatter(it, &r, &acc, wt);
}

static void allreduce_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_expr(w, s->u.allreduce.value, s);
    tir_access_region(w, &s->u.allreduce.dst, TIR_ACCESS_WRITE, s);
}

static void allreduce_print(tir_printer *p, const tir_stmt *s) {
    static const char *const axes[] = {"x", "y", "z"};
    tir_printer_printf(p, "thread_allreduce_%s(", tir_reduce_name(s->u.allreduce.kind));
    tir_printer_expr(p, s->u.allreduce.value);
    tir_printer_puts(p, ", ");
    tir_printer_region(p, &s->u.allreduce.dst);
    tir_printer_printf(p, ", over=thread_%s)", axes[s->u.allreduce.axis]);
}

static void allreduce_verify(tir_verifier *v, const tir_stmt *s) {
    tir_verifier_expr(v, s->u.allreduce.value, s->loc);
    if (!tir_verifier_region(v, &s->u.allreduce.dst, s->loc, "thread_allreduce destination")) return;
    tir_scope sc = s->u.allreduce.dst.buf->scope;
    if (sc != TIR_SCOPE_LOCAL && sc != TIR_SCOPE_VAR)
        tir_verifier_fail(v, s->loc, "thread_allreduce into '%s', not a per-thread buffer", s->u.allreduce.dst.buf->name);
    if (s->u.allreduce.axis < 0 || s->u.allreduce.axis > 2)
        tir_verifier_fail(v, s->loc, "thread_allreduce over axis %d", s->u.allreduce.axis);
}

const tlc_op_desc tlc_op_thread_allreduce = {
    .kind = TS_THREAD_ALLREDUCE, .name = "thread_allreduce",
    .accesses = allreduce_accesses, .print = allreduce_print, .verify = allreduce_verify, .interp = allreduce_interp,
    .scratch_bytes = allreduce_scratch_bytes, .lower = allreduce_lower, /* no layout */
};
