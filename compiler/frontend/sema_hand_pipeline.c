/* TileLang's hand-pipelined warpgroup operations (docs/language.md 11.9):
 * T.wgmma_gemm (sema_tileops.c: a gemm left in flight), T.wait_wgmma(n),
 * T.ptx_cp_async(T.access_ptr(dst[...], "w", n), T.access_ptr(src[...],
 * "r", n), n), T.cp_async_barrier_noinc(bar) and T.set_max_nreg. A kernel
 * with any of the first four runs its thread ranges as written, at the
 * same time, waiting for each other on its mbarriers (sema_manual_ws.c
 * keeps them); the others' kernels run their ranges in program order, and
 * their set_max_nreg statements are dropped there with a warning. */
#include <string.h>
#include "sema_internal.h"
#include "../ops/op_table.h"

void sema_note_hand_async(sema *S, tlc_loc loc) {
    if (S->hand_async) return;
    S->hand_async = true;
    S->hand_async_loc = loc;
}

void sema_wait_wgmma(sema *S, const sema_args *a, tlc_loc loc) {
    int64_t n;
    if (!sema_eval_const_int(S, a->arg[0], "the wgmma groups T.wait_wgmma leaves in flight", &n)) return;
    if (n < 0 || n > 7) {
        tlc_error(S->diag, a->arg[0]->loc, "T.wait_wgmma(n) leaves n wgmma groups in flight: 0 to 7, got %lld",
                  (long long)n);
        return;
    }
    sema_note_hand_async(S, loc);
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_WAIT_WGMMA, loc);
    st->u.wait_wgmma.pending = (int)n;
    sema_emit(S, st);
}

/* One operand of T.ptx_cp_async: T.access_ptr(buf[i, j, ...], mode[, extent])
 * of a buffer of `scope`, as the point region at that element. */
static bool access_ptr(sema *S, const ast_expr *e, tir_scope scope, const char *mode, const char *what,
                       tir_region *out) {
    const char *fn = e->kind == AE_CALL ? sema_dotted_name(S, e->u.call.func) : NULL;
    if (!fn || strcmp(fn, "access_ptr") != 0 || e->u.call.nargs < 1 || e->u.call.nargs > 3 || e->u.call.nkwargs) {
        tlc_error(S->diag, e->loc, "T.ptx_cp_async: the %s must be T.access_ptr(buffer[indices], \"%s\"[, extent])",
                  what, mode);
        return false;
    }
    const ast_expr *at = e->u.call.args[0];
    if (e->u.call.nargs >= 2) {
        const ast_expr *m = e->u.call.args[1];
        if (m->kind != AE_STRING || strcmp(m->u.str, mode) != 0) {
            tlc_error(S->diag, m->loc, "T.ptx_cp_async: the %s's access is \"%s\"", what, mode);
            return false;
        }
    }
    if (at->kind != AE_SUBSCRIPT) {
        tlc_error(S->diag, at->loc, "T.access_ptr takes one element of a buffer (buffer[i, j, ...])");
        return false;
    }
    sv v = sema_eval(S, at->u.sub.value);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_BUFFER || v.u.buf->scope != scope) {
        char d[128];
        sema_describe_sv(&v, d, sizeof d);
        tlc_error(S->diag, at->loc, "T.ptx_cp_async: the %s must be an element of a %s buffer, got %s", what,
                  scope == TIR_SCOPE_SHARED ? "shared" : "global", d);
        return false;
    }
    tir_buffer *b = v.u.buf;
    if (!sema_check_index_count(S, b, at)) return false;
    if (scope == TIR_SCOPE_GLOBAL) {
        sema_note_global_use(S, b, at->loc);
        if (sema_has_global_layout(S, b)) {
            tlc_error(S->diag, at->loc, "T.ptx_cp_async of '%s', which has a layout (annotate_layout with T.Layout): "
                      "the copy reads its memory row-major", b->name);
            return false;
        }
    }
    *out = sema_whole_region(S, b, at->loc);
    bool ok = true;
    for (int d = 0; d < b->rank; d++) {
        const ast_expr *ie = at->u.sub.index[d];
        if (ie->kind == AE_SLICE) {
            tlc_error(S->diag, ie->loc, "T.access_ptr takes one element of '%s' (its first), not a slice", b->name);
            ok = false;
            continue;
        }
        tir_expr *x = sema_index(S, ie);
        if (!x) {
            ok = false;
            continue;
        }
        ok = sema_check_index_bounds(S, b, d, x, ie) && ok;
        out->start[d] = x;
        out->extent[d] = tir_int(S->arena, 1, ie->loc);
    }
    return ok;
}

void sema_ptx_cp_async(sema *S, const sema_args *a, tlc_loc loc) {
    tir_region dst, src;
    bool ok = access_ptr(S, a->arg[0], TIR_SCOPE_SHARED, "w", "destination", &dst);
    ok = access_ptr(S, a->arg[1], TIR_SCOPE_GLOBAL, "r", "source", &src) && ok;
    int64_t n;
    if (!sema_eval_const_int(S, a->arg[2], "the elements of T.ptx_cp_async", &n)) ok = false;
    tir_expr *pred = NULL;
    if (a->arg[3]) {
        tir_expr *p = sema_eval_scalar(S, a->arg[3]);
        pred = p ? sema_to_bool(S, p, a->arg[3], "the predicate of T.ptx_cp_async") : NULL;
        if (!pred) ok = false;
    }
    if (!ok) return;
    if (dst.buf->dtype != src.buf->dtype) {
        tlc_error(S->diag, loc, "T.ptx_cp_async copies '%s' (%s) into '%s' (%s): one dtype", src.buf->name,
                  tir_dtype_name(src.buf->dtype), dst.buf->name, tir_dtype_name(dst.buf->dtype));
        return;
    }
    int64_t bytes = n >= 1 && n <= 16 ? n * tir_dtype_bytes(dst.buf->dtype) : 0;
    if (bytes != 4 && bytes != 8 && bytes != 16) {
        tlc_error(S->diag, a->arg[2]->loc, "T.ptx_cp_async copies 4, 8 or 16 bytes, but %lld %s elements are not",
                  (long long)n, tir_dtype_name(dst.buf->dtype));
        return;
    }
    int last = dst.rank - 1;
    int64_t dim;
    if (!tir_expr_const_int(dst.buf->shape[last], &dim) || dim % n) {
        tlc_error(S->diag, a->arg[0]->loc, "T.ptx_cp_async: the last dimension of '%s' must be a multiple of the "
                  "%lld elements copied", dst.buf->name, (long long)n);
        return;
    }
    /* each row of the source starts 16-byte aligned only where its length
     * is a multiple of n (the tensor itself is, at launch) */
    tir_expr *row = src.buf->shape[src.rank - 1];
    if (tir_expr_const_int(row, &dim)) {
        if (dim % n) {
            tlc_error(S->diag, a->arg[1]->loc, "T.ptx_cp_async copies %lld bytes, so the rows of '%s' must be a "
                      "multiple of %lld elements long, but they are %lld", (long long)bytes, src.buf->name,
                      (long long)n, (long long)dim);
            sema_note_decl(S, src.buf);
            return;
        }
    } else {
        sema_add_launch_check(S, sema_binary(S, TB_EQ, sema_binary(S, TB_FLOORMOD, row, tir_int(S->arena, n, loc), loc),
                                             tir_int(S->arena, 0, loc), loc), loc);
    }
    dst.extent[last] = tir_int(S->arena, n, loc);
    src.extent[src.rank - 1] = tir_int(S->arena, n, loc);
    sema_note_hand_async(S, loc);
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_CP_ASYNC, loc);
    st->u.cp_async.dst = dst;
    st->u.cp_async.src = src;
    st->u.cp_async.elems = (int)n;
    st->u.cp_async.pred = pred;
    sema_emit(S, st);
}

void sema_cp_async_barrier(sema *S, const sema_args *a, tlc_loc loc) {
    tir_expr *index;
    int number;
    if (!sema_barrier_arg(S, a->arg[0], &number, &index)) return;
    sema_note_hand_async(S, loc);
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_MBARRIER, loc);
    st->u.mbarrier.cp_async = true;
    st->u.mbarrier.barrier = number;
    st->u.mbarrier.index = index;
    st->u.mbarrier.arrivals = S->k->threads;
    sema_emit(S, st);
}

void sema_set_max_nreg(sema *S, const builtin_spec *b, const sema_args *a, tlc_loc loc) {
    int64_t regs, inc = strcmp(b->name, "dec_max_nreg") != 0;
    if (!sema_eval_const_int(S, a->arg[0], "a register count", &regs)) return;
    if (a->arg[1] && !sema_eval_const_int(S, a->arg[1], "is_inc", &inc)) return;
    if (regs < 24 || regs > 256 || regs % 8) {
        tlc_error(S->diag, a->arg[0]->loc, "T.%s: setmaxnreg takes a register count from 24 to 256, a multiple of "
                  "8; got %lld", b->name, (long long)regs);
        return;
    }
    if (inc != 0 && inc != 1) {
        tlc_error(S->diag, a->arg[1]->loc, "T.set_max_nreg: is_inc is 1 (raise the count) or 0 (lower it)");
        return;
    }
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_SET_MAX_NREG, loc);
    st->u.max_nreg.regs = (int)regs;
    st->u.max_nreg.inc = inc == 1;
    sema_emit(S, st);
}
