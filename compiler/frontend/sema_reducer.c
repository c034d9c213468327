/* TileLang's reducers: `r = T.alloc_reducer(shape, dtype, op="sum")`, a
 * fragment that Parallel loops update as `r[i] += value` (or
 * `r[i] = T.max(r[i], value)` for op="max", T.min for "min"), each
 * iteration adding its value into the element its other loop variables do
 * not index; `T.finalize_reducer(r)` then makes the threads' partial
 * results one (docs/language.md, "Reducers").
 *
 * tlc writes such a loop as what it computes: the loop stores each
 * iteration's value into a fragment of the loop's whole shape, then a
 * reduce over the dim the reducer does not index accumulates it into the
 * reducer (clear=False). Layouts, the threads' partials and their
 * combination are then the reduce's, so finalize_reducer has nothing left
 * to do. */
#include <stdio.h>
#include <string.h>
#include "sema_internal.h"
#include "../ops/op_table.h"

typedef struct reducer {
    tir_buffer *buf;
    tir_reduce_kind kind;
} reducer;

void sema_reducer_alloc(sema *S, tir_buffer *b, const ast_expr *op) {
    tir_reduce_kind kind = TIR_REDUCE_SUM;
    if (op) {
        sv v = sema_eval(S, op);
        if (v.kind == SV_ERROR) return;
        const char *s = v.kind == SV_STRING ? v.u.str : "";
        if (!strcmp(s, "max")) kind = TIR_REDUCE_MAX;
        else if (!strcmp(s, "min")) kind = TIR_REDUCE_MIN;
        else if (strcmp(s, "sum") != 0) {
            tlc_error(S->diag, op->loc, "alloc_reducer's op is \"sum\", \"max\" or \"min\"");
            return;
        }
    }
    reducer *r = TLC_NEW(S->arena, reducer);
    r->buf = b;
    r->kind = kind;
    tlc_ptrvec_push(&S->reducers, r);
}

static const reducer *find(sema *S, const tir_buffer *b) {
    for (int i = 0; i < S->reducers.len; i++) {
        const reducer *r = S->reducers.items[i];
        if (r->buf == b) return r;
    }
    return NULL;
}

void sema_finalize_reducer(sema *S, const sema_args *a, tlc_loc loc) {
    sv v = sema_eval(S, a->arg[0]);
    if (v.kind == SV_ERROR) return;
    if (v.kind != SV_BUFFER || !find(S, v.u.buf)) {
        tlc_error(S->diag, loc, "finalize_reducer takes a buffer of alloc_reducer");
        return;
    }
}

static bool is_reducer_store(const tir_stmt *x, const void *ctx) {
    sema *S = (sema *)ctx;
    return x->kind == TS_STORE && find(S, x->u.store.buf);
}

/* The loop variable e is (-1: none of st's). */
static int loop_var_of(const tir_stmt *st, const tir_expr *e) {
    if (e->kind != TE_VAR) return -1;
    for (int i = 0; i < st->u.for_.nvars; i++)
        if (st->u.for_.vars[i] == e->u.var) return i;
    return -1;
}

/* The value an update `r[idx] = r[idx] OP value` adds, for r's op; NULL
 * when the store is not of that form. */
static tir_expr *contribution(const tir_stmt *w, tir_reduce_kind kind) {
    const tir_expr *v = w->u.store.value;
    while (v->kind == TE_CAST && !v->u.cast.bits) v = v->u.cast.a;
    tir_binop op = kind == TIR_REDUCE_MAX ? TB_MAX : kind == TIR_REDUCE_MIN ? TB_MIN : TB_ADD;
    if (v->kind != TE_BINARY || v->u.bin.op != op) return NULL;
    for (int side = 0; side < 2; side++) {
        const tir_expr *self = side ? v->u.bin.b : v->u.bin.a, *other = side ? v->u.bin.a : v->u.bin.b;
        while (self->kind == TE_CAST && !self->u.cast.bits) self = self->u.cast.a;
        if (self->kind != TE_LOAD || self->u.load.buf != w->u.store.buf) continue;
        bool same = true;
        for (int d = 0; d < w->u.store.buf->rank && same; d++)
            same = tir_expr_equal(self->u.load.idx[d], w->u.store.idx[d]);
        if (same) return (tir_expr *)other;
    }
    return NULL;
}

bool sema_reducer_loop(sema *S, tir_stmt *st) {
    if (!S->reducers.len || !tir_stmt_any(st->u.for_.body, is_reducer_store, S)) return false;
    const tir_stmt *body = st->u.for_.body;
    const tir_stmt *w = body->kind == TS_SEQ && body->u.seq.n == 1 ? body->u.seq.stmts[0] : body;
    const reducer *r = w->kind == TS_STORE ? find(S, w->u.store.buf) : NULL;
    tir_buffer *R = r ? r->buf : NULL;
    int nv = st->u.for_.nvars, dim = -1;
    bool ok = r && R->rank == nv - 1;
    /* r's indices: the loop's variables in order, all but the reduced one */
    for (int d = 0, v = 0; ok && v < nv; v++) {
        if (d < R->rank && loop_var_of(st, w->u.store.idx[d]) == v) {
            d++;
        } else if (dim < 0) {
            dim = v;
        } else {
            ok = false;
        }
    }
    tir_expr *value = ok ? contribution(w, r->kind) : NULL;
    if (!value) {
        tlc_error(S->diag, st->loc, "a Parallel loop that updates a reducer (alloc_reducer) is one statement, "
                  "r[i] += value (T.max(r[i], value) for op=\"max\", T.min for \"min\"), with r indexed by the "
                  "loop's variables in order, all but the one it reduces over");
        return true;
    }
    /* the loop's values in a fragment of its shape, then the reduce */
    char name[96];
    snprintf(name, sizeof name, "%.80s_part", R->name);
    tir_buffer *part = sema_new_buffer(S, tlc_arena_strdup(S->arena, name), TIR_SCOPE_FRAGMENT, R->dtype, nv, st->loc);
    part->shape = st->u.for_.extent;
    int64_t regs;
    if (!sema_fragment_fits(S, part, &regs)) {
        tlc_error(S->diag, st->loc, "this reducer update takes a fragment of the loop's shape, %lld registers per "
                  "thread (at most %d): use a smaller tile or more threads", (long long)regs,
                  TLC_FRAGMENT_MAX_REGS);
        return true;
    }
    tir_stmt *alloc = tir_new_stmt(S->arena, TS_ALLOC, st->loc);
    alloc->u.alloc.buf = part;
    sema_emit(S, alloc);
    tir_stmt *store = tir_new_stmt(S->arena, TS_STORE, w->loc);
    store->u.store.buf = part;
    store->u.store.idx = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)nv);
    for (int v = 0; v < nv; v++) store->u.store.idx[v] = tir_var_ref(S->arena, st->u.for_.vars[v], w->loc);
    store->u.store.value = tir_cast(S->arena, value, R->dtype, w->loc);
    st->u.for_.body = store;
    sema_emit(S, st);
    tir_stmt *red = tlc_new_tile_op(S->arena, TS_REDUCE, st->loc);
    red->u.reduce.kind = r->kind;
    red->u.reduce.src = sema_whole_region(S, part, st->loc);
    red->u.reduce.dst = sema_whole_region(S, R, st->loc);
    red->u.reduce.dim = dim;
    red->u.reduce.clear = false;
    sema_emit(S, red);
    return true;
}
