/* TVM's thread all-reduce as TileLang writes it in thread-indexed code:
 *
 *     with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, dtype)]),
 *                 "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
 *         T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True,
 *                                           result[0], tk, dtype="handle"))
 *
 * every thread's `value` combined over the threads that differ only in the
 * thread index `tk`, the result in each one's `result[0]` (an alloc_local
 * element): a TS_THREAD_ALLREDUCE (ops/thread_allreduce.c). The reducer is
 * x + y, T.max(x, y) or T.min(x, y); the attr's value (a TVM handle) is not
 * read. */
#include <string.h>
#include "sema_internal.h"
#include "../ops/op_table.h"

static const char *last_name(sema *S, const ast_expr *f) {
    const char *n = sema_dotted_name(S, f);
    if (!n) return "";
    const char *dot = strrchr(n, '.');
    return dot ? dot + 1 : n;
}

static bool is_param(const ast_expr *e, const ast_expr *p) {
    return e->kind == AE_NAME && p->kind == AE_NAME && !strcmp(e->u.name, p->u.name);
}

/* The combination comm_reducer's lambda computes: x + y, max, min. */
static bool reducer_kind(sema *S, const ast_expr *node, tir_reduce_kind *kind) {
    if (node->kind != AE_CALL || strcmp(last_name(S, node->u.call.func), "comm_reducer") != 0 ||
        node->u.call.nargs < 1 || node->u.call.args[0]->kind != AE_LAMBDA ||
        node->u.call.args[0]->u.lambda.nparams != 2)
        return false;
    const ast_expr *l = node->u.call.args[0], *b = l->u.lambda.body;
    const ast_expr *x = l->u.lambda.params[0], *y = l->u.lambda.params[1];
    if (b->kind == AE_BINARY && b->u.bin.op == AOP_ADD && is_param(b->u.bin.lhs, x) && is_param(b->u.bin.rhs, y)) {
        *kind = TIR_REDUCE_SUM;
        return true;
    }
    if (b->kind == AE_CALL && b->u.call.nargs == 2 && is_param(b->u.call.args[0], x) &&
        is_param(b->u.call.args[1], y)) {
        const char *f = last_name(S, b->u.call.func);
        if (!strcmp(f, "max")) *kind = TIR_REDUCE_MAX;
        else if (!strcmp(f, "min")) *kind = TIR_REDUCE_MIN;
        else return false;
        return true;
    }
    return false;
}

/* The thread axis e names (a thread index, or a let that holds one), or -1. */
static int thread_axis(const tir_expr *e) {
    if (e->kind == TE_VAR && e->u.var->kind == TV_LET && e->u.var->def) e = e->u.var->def;
    return e->kind == TE_VAR && e->u.var->kind == TV_THREAD_IDX ? e->u.var->axis : -1;
}

void sema_attr_with(sema *S, const ast_stmt *s) {
    const ast_expr *attr = s->u.with.item;
    tlc_loc loc = s->loc;
    tir_reduce_kind kind;
    sv key = attr->u.call.nargs >= 2 ? sema_eval(S, attr->u.call.args[1]) : sv_error();
    if (key.kind == SV_ERROR && attr->u.call.nargs >= 2) return;
    if (attr->u.call.nargs != 3 || key.kind != SV_STRING || strcmp(key.u.str, "reduce_scope") != 0 ||
        !reducer_kind(S, attr->u.call.args[0], &kind)) {
        tlc_error(S->diag, attr->loc, "tlc takes T.attr only as TVM's thread all-reduce: "
                  "T.attr(T.comm_reducer(lambda x, y: x + y (or T.max / T.min), [identity]), \"reduce_scope\", ...)");
        return;
    }
    const ast_block *body = &s->u.with.body;
    const ast_expr *ev = body->n == 1 && body->stmts[0]->kind == AS_EXPR ? body->stmts[0]->u.expr : NULL;
    const ast_expr *call = ev && ev->kind == AE_CALL && !strcmp(last_name(S, ev->u.call.func), "evaluate") &&
                                   ev->u.call.nargs == 1
                               ? ev->u.call.args[0]
                               : NULL;
    if (!call || call->kind != AE_CALL || strcmp(last_name(S, call->u.call.func), "tvm_thread_allreduce") != 0 ||
        call->u.call.nargs != 5) {
        tlc_error(S->diag, loc, "the body of a thread all-reduce's T.attr is one T.evaluate(T.tvm_thread_allreduce("
                  "1, value, True, result[i], thread_index, dtype=\"handle\"))");
        return;
    }
    if (!S->k || !S->kernel_with || !sema_check_not_in_parallel(S, loc, "a thread all-reduce")) {
        if (!S->kernel_with) tlc_error(S->diag, loc, "a thread all-reduce must be inside 'with T.Kernel'");
        return;
    }
    const ast_expr *const *args = (const ast_expr *const *)call->u.call.args;
    int64_t count;
    bool cond;
    if (!sema_eval_const_int(S, args[0], "tvm_thread_allreduce's count", &count) ||
        !sema_eval_const_bool(S, args[2], "tvm_thread_allreduce's condition", &cond))
        return;
    if (count != 1 || !cond) {
        tlc_error(S->diag, call->loc, "tlc's thread all-reduce combines one value (count 1) in every thread "
                  "(condition True)");
        return;
    }
    tir_expr *value = sema_eval_scalar(S, args[1]);
    tir_expr *over = sema_eval_scalar(S, args[4]);
    if (!value || !over) return;
    int axis = thread_axis(over);
    if (axis < 0) {
        tlc_error(S->diag, args[4]->loc, "a thread all-reduce combines over a thread index (T.get_thread_binding)");
        return;
    }
    const ast_expr *d = args[3];
    sv base = d->kind == AE_SUBSCRIPT ? sema_eval(S, d->u.sub.value) : sv_error();
    if (base.kind != SV_BUFFER || base.u.buf->scope != TIR_SCOPE_LOCAL || d->u.sub.nindex != base.u.buf->rank) {
        if (base.kind != SV_ERROR || d->kind != AE_SUBSCRIPT)
            tlc_error(S->diag, d->loc, "a thread all-reduce's result is an element of an alloc_local buffer");
        return;
    }
    tir_buffer *buf = base.u.buf;
    tir_region r = sema_whole_region(S, buf, d->loc);
    for (int i = 0; i < buf->rank; i++) {
        tir_expr *ix = sema_eval_int(S, d->u.sub.index[i], "an index");
        if (!ix) return;
        r.start[i] = ix;
        r.extent[i] = tir_int(S->arena, 1, d->loc);
    }
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_THREAD_ALLREDUCE, loc);
    st->u.allreduce.kind = kind;
    st->u.allreduce.value = value;
    st->u.allreduce.dst = r;
    st->u.allreduce.axis = axis;
    S->k->thread_indexed = true;
    sema_emit(S, st);
}
