/* A Parallel loop whose whole body is `if v < c:` (no else) on one of its
 * variables v and a compile-time c below v's extent runs nothing for the
 * iterations at c and above, so the loop can be the body over the smaller
 * extent:
 *
 *   for i, j in T.Parallel(64, D):          for i, j in T.Parallel(32, D):
 *       if i < 32:                     ->       dst[i, j] = frag[i + s * 32, j]
 *           dst[i, j] = frag[i + s * 32, j]
 *
 * (DeepSeek V3.2's sparse MLA backward stores its dKV accumulator in
 * halves so.) That is done where the body reads or writes a fragment at v
 * plus an offset: the smaller extent is what lets such an access be a view
 * (sema_fragment_offsets.c, which runs after this). Elsewhere the guard
 * stays: a loop as long as the fragments it indexes takes their layout,
 * each thread its own elements, and a shorter one would not. */
#include "sema_internal.h"
#include "../ir/tir_access.h"

/* e is `v + x` or `x + v` */
static bool var_plus(const tir_expr *e, const tir_var *v) {
    return e->kind == TE_BINARY && e->u.bin.op == TB_ADD &&
           ((e->u.bin.a->kind == TE_VAR && e->u.bin.a->u.var == v) ||
            (e->u.bin.b->kind == TE_VAR && e->u.bin.b->u.var == v));
}

typedef struct offset_query {
    const tir_var *v;
    bool found;
} offset_query;

static void note_offset_access(const tir_access *acc, void *ctx) {
    offset_query *q = ctx;
    if (acc->buf->scope != TIR_SCOPE_FRAGMENT) return;
    for (int d = 0; d < acc->buf->rank && acc->idx; d++)
        if (var_plus(acc->idx[d], q->v)) q->found = true;
}

/* cond is `v < c` or `v <= c` (or `c > v`, `c >= v`) for variable number
 * *var of loop and constant c: the iterations it keeps, v < *bound. */
static bool guard_bound(const tir_stmt *loop, const tir_expr *cond, int *var, int64_t *bound) {
    if (cond->kind != TE_BINARY) return false;
    tir_binop op = cond->u.bin.op;
    const tir_expr *a = cond->u.bin.a, *b = cond->u.bin.b;
    if (op == TB_GT || op == TB_GE) { /* c > v: v < c */
        const tir_expr *t = a;
        a = b;
        b = t;
        op = op == TB_GT ? TB_LT : TB_LE;
    }
    int64_t c;
    if ((op != TB_LT && op != TB_LE) || a->kind != TE_VAR || !tir_expr_const_int(b, &c)) return false;
    for (int v = 0; v < loop->u.for_.nvars; v++)
        if (loop->u.for_.vars[v] == a->u.var) {
            *var = v;
            *bound = op == TB_LT ? c : c + 1;
            return true;
        }
    return false;
}

static bool reads_at_offset(const tir_stmt *body, const tir_var *v) {
    offset_query q = {v, false};
    tir_stmt_accesses(body, note_offset_access, &q);
    return q.found;
}

static void walk(tlc_arena *A, tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) walk(A, s->u.seq.stmts[i]);
        return;
    case TS_IF:
        walk(A, s->u.if_.then);
        walk(A, s->u.if_.els);
        return;
    case TS_FOR: {
        tir_stmt *body = s->u.for_.body;
        while (body && body->kind == TS_SEQ && body->u.seq.n == 1) body = body->u.seq.stmts[0];
        int v;
        int64_t bound, ext;
        if (s->u.for_.kind == TIR_FOR_PARALLEL && body && body->kind == TS_IF && !body->u.if_.els &&
            !body->u.if_.thread_varying && guard_bound(s, body->u.if_.cond, &v, &bound) &&
            tir_expr_const_int(s->u.for_.extent[v], &ext) && bound > 0 && bound < ext &&
            reads_at_offset(body->u.if_.then, s->u.for_.vars[v])) {
            s->u.for_.extent[v] = tir_int(A, bound, s->u.for_.extent[v]->loc);
            s->u.for_.body = body->u.if_.then;
        }
        walk(A, s->u.for_.body);
        return;
    }
    default: return;
    }
}

void sema_parallel_guards(sema *S) {
    if (S->k && S->k->body) walk(S->arena, S->k->body);
}
