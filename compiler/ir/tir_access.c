/* The access-region query (tir_access.h). */
#include "tir_access.h"
#include "tir_op.h"
#include <stdio.h>
#include <stdlib.h>

struct tir_access_walk {
    tir_access_fn fn;
    void *ctx;
    void (*var_fn)(const tir_var *v, void *ctx); /* tir_stmt_vars: NULL for the access query */
    bool *shuffle; /* tir_stmt_has_shuffle: set at a TE_SHUFFLE */
};

static void expr_walk(const tir_access_walk *w, const tir_expr *e, const tir_stmt *in) {
    if (!e) return;
    switch (e->kind) {
    case TE_VAR:
        if (w->var_fn) w->var_fn(e->u.var, w->ctx);
        break;
    case TE_LOAD: {
        tir_access acc = {e->u.load.buf, TIR_ACCESS_READ, NULL, e->u.load.idx, in, e->loc};
        w->fn(&acc, w->ctx);
        for (int d = 0; d < e->u.load.buf->rank; d++) expr_walk(w, e->u.load.idx[d], in);
        break;
    }
    case TE_BINARY: expr_walk(w, e->u.bin.a, in); expr_walk(w, e->u.bin.b, in); break;
    case TE_UNARY: expr_walk(w, e->u.un.a, in); break;
    case TE_CAST: expr_walk(w, e->u.cast.a, in); break;
    case TE_SHUFFLE:
        if (w->shuffle) *w->shuffle = true;
        expr_walk(w, e->u.shfl.value, in);
        expr_walk(w, e->u.shfl.lane, in);
        break;
    case TE_SELECT:
        expr_walk(w, e->u.sel.cond, in);
        expr_walk(w, e->u.sel.a, in);
        expr_walk(w, e->u.sel.b, in);
        break;
    default: break;
    }
}

static void region_walk(const tir_access_walk *w, const tir_region *r, tir_access_mode mode, const tir_stmt *in) {
    if (!r->buf) return;
    tir_access acc = {r->buf, mode, r, NULL, in, r->loc};
    w->fn(&acc, w->ctx);
    for (int d = 0; d < r->rank; d++) {
        expr_walk(w, r->start[d], in);
        expr_walk(w, r->extent[d], in);
    }
}

static void own_walk(const tir_access_walk *w, const tir_stmt *s) {
    switch (s->kind) {
    case TS_FOR:
        for (int i = 0; i < s->u.for_.nvars; i++) {
            expr_walk(w, s->u.for_.start[i], s);
            expr_walk(w, s->u.for_.extent[i], s);
        }
        expr_walk(w, s->u.for_.cond, s);
        break;
    case TS_IF: expr_walk(w, s->u.if_.cond, s); break;
    case TS_LET: case TS_ASSIGN: expr_walk(w, s->u.let.value, s); break;
    case TS_STORE: {
        tir_access acc = {s->u.store.buf, TIR_ACCESS_WRITE, NULL, s->u.store.idx, s, s->loc};
        w->fn(&acc, w->ctx);
        for (int d = 0; d < s->u.store.buf->rank; d++) expr_walk(w, s->u.store.idx[d], s);
        expr_walk(w, s->u.store.value, s);
        break;
    }
    case TS_SEQ: case TS_ALLOC: break;
    default: /* a tile op: its operands are its row's to list */
        if (s->op && s->op->accesses) s->op->accesses(w, s);
        break;
    }
}

void tir_access_region(const tir_access_walk *w, const tir_region *r, tir_access_mode mode, const tir_stmt *in) {
    region_walk(w, r, mode, in);
}

void tir_access_expr(const tir_access_walk *w, const tir_expr *e, const tir_stmt *in) { expr_walk(w, e, in); }

static void deep_walk(const tir_access_walk *w, const tir_stmt *s) {
    if (!s) return;
    own_walk(w, s);
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) deep_walk(w, s->u.seq.stmts[i]);
        break;
    case TS_FOR: deep_walk(w, s->u.for_.body); break;
    case TS_IF:
        deep_walk(w, s->u.if_.then);
        deep_walk(w, s->u.if_.els);
        break;
    default: break;
    }
}

void tir_stmt_accesses(const tir_stmt *s, tir_access_fn fn, void *ctx) {
    tir_access_walk w = {fn, ctx, NULL, NULL};
    deep_walk(&w, s);
}

void tir_stmt_own_accesses(const tir_stmt *s, tir_access_fn fn, void *ctx) {
    tir_access_walk w = {fn, ctx, NULL, NULL};
    if (s) own_walk(&w, s);
}

void tir_expr_accesses(const tir_expr *e, const tir_stmt *in, tir_access_fn fn, void *ctx) {
    tir_access_walk w = {fn, ctx, NULL, NULL};
    expr_walk(&w, e, in);
}

static void ignore_access(const tir_access *acc, void *ctx) {
    (void)acc;
    (void)ctx;
}

void tir_stmt_vars(const tir_stmt *s, void (*fn)(const tir_var *v, void *ctx), void *ctx) {
    tir_access_walk w = {ignore_access, ctx, fn, NULL};
    deep_walk(&w, s);
}

void tir_expr_vars(const tir_expr *e, void (*fn)(const tir_var *v, void *ctx), void *ctx) {
    tir_access_walk w = {ignore_access, ctx, fn, NULL};
    expr_walk(&w, e, NULL);
}

bool tir_stmt_has_shuffle(const tir_stmt *s, bool own) {
    bool found = false;
    tir_access_walk w = {ignore_access, NULL, NULL, &found};
    if (s && own) own_walk(&w, s);
    else deep_walk(&w, s);
    return found;
}

bool tir_expr_has_shuffle(const tir_expr *e) {
    bool found = false;
    tir_access_walk w = {ignore_access, NULL, NULL, &found};
    expr_walk(&w, e, NULL);
    return found;
}

static void append(const tir_access *acc, void *ctx) {
    tir_access_list *l = ctx;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        tir_access *nv = realloc(l->v, sizeof *nv * (size_t)cap);
        if (!nv) {
            fputs("tlc: fatal: out of memory\n", stderr);
            abort();
        }
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = *acc;
}

void tir_access_list_collect(const tir_stmt *s, tir_access_list *out) { tir_stmt_accesses(s, append, out); }

void tir_access_list_free(tir_access_list *l) {
    free(l->v);
    *l = (tir_access_list){0};
}

typedef struct touch_query {
    const tir_buffer *b;
    tir_access_mode mode;
    bool found;
} touch_query;

static void note_touch(const tir_access *acc, void *ctx) {
    touch_query *q = ctx;
    /* a view and its base are the same elements */
    if (tir_buffer_storage(acc->buf) == tir_buffer_storage(q->b) && (acc->mode & q->mode)) q->found = true;
}

bool tir_stmt_touches(const tir_stmt *s, const tir_buffer *b, tir_access_mode mode) {
    touch_query q = {b, mode, false};
    tir_stmt_accesses(s, note_touch, &q);
    return q.found;
}

bool tir_stmt_writes(const tir_stmt *s, const tir_buffer *b) { return tir_stmt_touches(s, b, TIR_ACCESS_WRITE); }

static void mark_written(const tir_access *acc, void *ctx) {
    bool *written = ctx;
    if (acc->mode & TIR_ACCESS_WRITE) written[acc->buf->id] = true;
}

void tir_stmt_mark_written(const tir_stmt *s, bool *written) { tir_stmt_accesses(s, mark_written, written); }

tir_stmt *const *tir_loop_items(const tir_stmt *loop, int *n) {
    const tir_stmt *body = loop->u.for_.body;
    if (body && body->kind == TS_SEQ) {
        if (n) *n = body->u.seq.n;
        return body->u.seq.stmts;
    }
    if (n) *n = body ? 1 : 0;
    return (tir_stmt *const *)&loop->u.for_.body;
}

typedef struct read_written {
    bool *reads, *writes;
} read_written;

static void note_read_written(const tir_access *acc, void *ctx) {
    read_written *c = ctx;
    /* a view's accesses are also its base's */
    for (const tir_buffer *b = acc->buf; b; b = b->view_of) {
        if (acc->mode & TIR_ACCESS_READ) c->reads[b->id] = true;
        if (acc->mode & TIR_ACCESS_WRITE) c->writes[b->id] = true;
    }
}

void tir_stmt_buffers_read_written(const tir_stmt *s, int nbuffers, bool *reads, bool *writes) {
    for (int b = 0; b < nbuffers; b++) reads[b] = writes[b] = false;
    read_written c = {reads, writes};
    tir_stmt_accesses(s, note_read_written, &c);
}
