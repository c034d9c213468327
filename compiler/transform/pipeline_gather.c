/* Gathers a Pipelined loop can load with its stages (pipeline_plan.c): a
 * Parallel loop over a whole 2-d shared buffer whose body stores, at
 * [r, j], an element of a global tensor at a row chosen per r and column
 * e + j of its last dim, or 0 where a condition on r fails:
 *
 *   for r, j in T.Parallel(rows, cols):
 *       if cond(r): dst[r, j] = src[f(r), ..., e(r) + j]
 *       else:       dst[r, j] = 0
 *
 * (or `dst[r, j] = T.if_then_else(cond(r), src[...], 0)`, or no condition:
 * T.im2col's tiles, sparse attention's rows picked by an index tensor).
 * Each row is `cols` consecutive elements of the tensor, so 16-byte
 * cp.async chunks load it, src-size 0 where the condition fails (the
 * hardware's zero fill), as for a copy's tile. That needs every chunk's
 * address 16-byte aligned: the row length a multiple of 16 bytes, and e(r)
 * and the tensor's last dim multiples of 16 bytes' elements (a symbolic
 * last dim is checked at run time, tlc_pipe_aligned_cond, as for copies).
 * The indices and the condition read no shared memory, fragment or
 * per-thread buffer: the pipeline evaluates them iterations ahead. */
#include <math.h>
#include "lower_internal.h"

/* e reads only global tensors the kernel does not write (`written`, by
 * buffer id: read iterations ahead, they must not change), variables, and
 * no warp shuffle. */
static bool reads_global_only(const tir_expr *e, const bool *written) {
    if (!e) return true;
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: case TE_VAR: return true;
    case TE_LOAD:
        if (e->u.load.buf->scope != TIR_SCOPE_GLOBAL || written[e->u.load.buf->id]) return false;
        for (int d = 0; d < e->u.load.buf->rank; d++)
            if (!reads_global_only(e->u.load.idx[d], written)) return false;
        return true;
    case TE_BINARY: return reads_global_only(e->u.bin.a, written) && reads_global_only(e->u.bin.b, written);
    case TE_UNARY: return reads_global_only(e->u.un.a, written);
    case TE_CAST: return reads_global_only(e->u.cast.a, written);
    case TE_SELECT:
        return reads_global_only(e->u.sel.cond, written) && reads_global_only(e->u.sel.a, written) &&
               reads_global_only(e->u.sel.b, written);
    case TE_SHUFFLE: return false;
    }
    return false;
}

typedef struct var_search {
    const tir_var *v;
    bool found;
} var_search;

static void note_var(const tir_var *v, void *ctx) {
    var_search *q = ctx;
    if (v == q->v) q->found = true;
}

static bool mentions(const tir_expr *e, const tir_var *v) {
    var_search q = {v, false};
    if (e) tir_expr_vars(e, note_var, &q);
    return q.found;
}

/* A constant 0 of any type (a float's +0 only: the zero fill's bits). */
static bool is_zero(const tir_expr *e) {
    while (e->kind == TE_CAST && !e->u.cast.bits) e = e->u.cast.a;
    if (e->kind == TE_INT) return e->u.ival == 0;
    return e->kind == TE_FLOAT && e->u.fval == 0.0 && !signbit(e->u.fval);
}

/* A store dst[r, j] = value, dst a whole 2-d shared buffer. */
static bool row_store(const tir_stmt *s, const tir_stmt *loop, const tir_buffer *dst) {
    if (!s || s->kind != TS_STORE || s->u.store.buf != dst) return false;
    for (int d = 0; d < 2; d++) {
        const tir_expr *x = s->u.store.idx[d];
        if (x->kind != TE_VAR || x->u.var != loop->u.for_.vars[d]) return false;
    }
    return true;
}

static const tir_stmt *only_stmt(const tir_stmt *s) {
    while (s && s->kind == TS_SEQ && s->u.seq.n == 1) s = s->u.seq.stmts[0];
    return s;
}

/* The value e(r) in src's last index e(r) + j (j alone: 0). */
static bool column_offset(const tir_expr *last, const tir_var *j, const tir_expr **e) {
    if (last->kind == TE_CAST && !last->u.cast.bits && (last->dtype == TIR_I32 || last->dtype == TIR_I64))
        last = last->u.cast.a;
    if (last->kind == TE_VAR && last->u.var == j) {
        *e = NULL;
        return true;
    }
    if (last->kind != TE_BINARY || last->u.bin.op != TB_ADD) return false;
    const tir_expr *x = last->u.bin.a, *y = last->u.bin.b;
    if (y->kind == TE_VAR && y->u.var == j) {
        const tir_expr *t = x;
        x = y;
        y = t;
    }
    if (x->kind != TE_VAR || x->u.var != j || mentions(y, j)) return false;
    *e = y;
    return true;
}

/* ---------------- alignment ---------------- */
typedef struct align_ctx {
    tir_stmt *const *lets; /* the statements before the loop in its body */
    int nlets;
    tir_stmt *const *body_lets; /* the lets the loop's body opens with */
    int nbody_lets;
    const tir_expr *last_dim; /* the tensor's last dim, assumed a multiple of `vec` when symbolic */
    int64_t vec;
    int depth;
} align_ctx;

/* The multiple a variable is known to be: the tensor's last dim the
 * assumed one, a let its value's (through the lets before the loop and
 * those of the loop's body). */
static int64_t var_multiple(const tir_var *v, void *ctx) {
    align_ctx *c = ctx;
    if (v->kind == TV_SYM_DIM) return c->last_dim && c->last_dim->kind == TE_VAR && c->last_dim->u.var == v ? c->vec : 1;
    if (v->kind != TV_LET || c->depth > 32) return 1;
    const tir_expr *value = v->def;
    for (int i = 0; !value && i < c->nlets; i++)
        if (c->lets[i]->kind == TS_LET && c->lets[i]->u.let.var == v && v->assigned_once) value = c->lets[i]->u.let.value;
    for (int i = 0; !value && i < c->nbody_lets; i++)
        if (c->body_lets[i]->u.let.var == v && v->assigned_once) value = c->body_lets[i]->u.let.value;
    c->depth++;
    int64_t m = value ? tlc_expr_multiple_with(value, var_multiple, c) : 1;
    c->depth--;
    return m;
}

bool tlc_gather_match(const tir_stmt *s, tir_stmt *const *lets, int nlets, const bool *written, tlc_gather *g) {
    if (s->kind != TS_FOR || s->u.for_.kind != TIR_FOR_PARALLEL || s->u.for_.nvars != 2) return false;
    const tir_var *r = s->u.for_.vars[0], *j = s->u.for_.vars[1];
    /* lets of values per row first (`r = by * block_M + i`), then the store */
    const tir_stmt *body = only_stmt(s->u.for_.body);
    tir_stmt *const *body_lets = NULL;
    int nbody_lets = 0;
    if (body && body->kind == TS_SEQ && body->u.seq.n > 1) {
        nbody_lets = body->u.seq.n - 1;
        body_lets = body->u.seq.stmts;
        for (int i = 0; i < nbody_lets; i++) {
            const tir_stmt *x = body_lets[i];
            if (x->kind != TS_LET || mentions(x->u.let.value, j) || !reads_global_only(x->u.let.value, written)) return false;
        }
        body = only_stmt(body->u.seq.stmts[nbody_lets]);
    }
    if (!body) return false;
    const tir_expr *cond = NULL, *value = NULL;
    const tir_buffer *dst = NULL;
    if (body->kind == TS_STORE) {
        dst = body->u.store.buf;
        value = body->u.store.value;
        if (value->kind == TE_SELECT && is_zero(value->u.sel.b)) {
            cond = value->u.sel.cond;
            value = value->u.sel.a;
        }
    } else if (body->kind == TS_IF && body->u.if_.els) {
        const tir_stmt *then = only_stmt(body->u.if_.then), *els = only_stmt(body->u.if_.els);
        if (!then || !els || then->kind != TS_STORE || els->kind != TS_STORE || !is_zero(els->u.store.value))
            return false;
        dst = then->u.store.buf;
        if (!row_store(els, s, dst)) return false;
        cond = body->u.if_.cond;
        value = then->u.store.value;
        body = then;
    } else {
        return false;
    }
    if (!row_store(body, s, dst) || dst->scope != TIR_SCOPE_SHARED || dst->rank != 2 || !dst->layout) return false;
    if (value->kind != TE_LOAD) return false;
    const tir_buffer *src = value->u.load.buf;
    if (src->scope != TIR_SCOPE_GLOBAL || src->dtype != dst->dtype || src->rank < 1) return false;
    for (int d = 0; d < 2; d++) {
        int64_t e;
        if (!tir_expr_const_int(s->u.for_.extent[d], &e) || e != tir_buffer_dim(dst, d)) return false;
    }
    if (cond && (mentions(cond, j) || !reads_global_only(cond, written))) return false;
    int last = src->rank - 1;
    const tir_expr *off;
    if (!reads_global_only(value, written) || !column_offset(value->u.load.idx[last], j, &off)) return false;
    for (int d = 0; d < last; d++)
        if (mentions(value->u.load.idx[d], j)) return false;
    /* 16-byte chunks: rows, their offsets and the tensor's rows in whole chunks */
    int eb = tir_dtype_bytes(dst->dtype);
    int64_t vec = 16 / eb, cols = tir_buffer_dim(dst, 1);
    if ((cols * eb) % 16 || (dst->layout->panel_elems > 0 && (dst->layout->panel_elems * eb) % 16)) return false;
    align_ctx c = {lets, nlets, body_lets, nbody_lets, src->shape[last], vec, 0};
    if (tlc_expr_multiple_with(src->shape[last], var_multiple, &c) < vec ||
        (off && tlc_expr_multiple_with(off, var_multiple, &c) < vec))
        return false;
    *g = (tlc_gather){.loop = s, .row = r, .col = j, .lets = body_lets, .nlets = nbody_lets, .dst = dst, .src = value,
                      .cond = cond};
    return true;
}
