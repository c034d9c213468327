/* A fragment read or written in a Parallel loop at a loop variable plus an
 * offset the iterations share (`x_frag[i, jj * 4 + j]` in a Parallel loop
 * over (i, j) inside a serial loop over jj, the loop's j of extent 4): the
 * offset a multiple of the variable's extent E, the dim a multiple of E.
 * Such an access is the fragment seen as [..., dim / E, E, ...] (a view,
 * tir_buffer.view_of, as T.reshape makes) read at [..., offset / E, j,
 * ...]: an index the iterations share and a loop variable, which the
 * Parallel loop's layout rules take (lowerkit/parallel_access.c). The view
 * is declared right after the fragment's own allocation. */
#include "sema_internal.h"

typedef struct offsets {
    sema *S;
    tir_stmt *kernel_body;
    const tir_stmt *loop; /* the innermost Parallel loop */
    /* views made so far: base fragment, dim, extent -> view */
    struct view { tir_buffer *base, *view; int dim; int64_t ext; } *views;
    int nviews, cap;
} offsets;

/* Whether e is provably a multiple of m (> 0): a constant that is, a
 * product with a factor that is, a sum of such. */
static bool multiple_of(const tir_expr *e, int64_t m, int depth) {
    int64_t c;
    if (depth > 32) return false;
    if (tir_expr_const_int(e, &c)) return c % m == 0;
    if (e->kind == TE_CAST && !e->u.cast.bits) return multiple_of(e->u.cast.a, m, depth + 1);
    if (e->kind != TE_BINARY) return false;
    switch (e->u.bin.op) {
    case TB_MUL: return multiple_of(e->u.bin.a, m, depth + 1) || multiple_of(e->u.bin.b, m, depth + 1);
    case TB_ADD: case TB_SUB: return multiple_of(e->u.bin.a, m, depth + 1) && multiple_of(e->u.bin.b, m, depth + 1);
    default: return false;
    }
}

static int loop_var_index(const tir_stmt *loop, const tir_expr *e) {
    if (e->kind != TE_VAR) return -1;
    for (int v = 0; v < loop->u.for_.nvars; v++)
        if (loop->u.for_.vars[v] == e->u.var) return v;
    return -1;
}

static bool reads_loop_var(const tir_stmt *loop, const tir_expr *e, int depth) {
    if (!e || depth > 64) return true;
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: return false;
    case TE_VAR: return loop_var_index(loop, e) >= 0;
    case TE_BINARY: return reads_loop_var(loop, e->u.bin.a, depth + 1) || reads_loop_var(loop, e->u.bin.b, depth + 1);
    case TE_UNARY: return reads_loop_var(loop, e->u.un.a, depth + 1);
    case TE_CAST: return reads_loop_var(loop, e->u.cast.a, depth + 1);
    default: return true;
    }
}

/* idx = loop variable v + offset (either order): v's index, the offset. */
static int split_offset(const tir_stmt *loop, const tir_expr *idx, const tir_expr **off) {
    if (idx->kind != TE_BINARY || idx->u.bin.op != TB_ADD) return -1;
    for (int side = 0; side < 2; side++) {
        const tir_expr *v = side ? idx->u.bin.b : idx->u.bin.a, *o = side ? idx->u.bin.a : idx->u.bin.b;
        int m = loop_var_index(loop, v);
        if (m >= 0 && !tir_dtype_is_float(o->dtype) && !reads_loop_var(loop, o, 0)) {
            *off = o;
            return m;
        }
    }
    return -1;
}

/* offset / e, where offset is a multiple of e: the factor divided out. */
static tir_expr *divided(sema *S, const tir_expr *e, int64_t m, tlc_loc loc) {
    return sema_binary(S, TB_FLOORDIV, (tir_expr *)e, tir_int(S->arena, m, loc), loc);
}

/* Inserts `alloc view` right after `alloc base` in the sequence holding it. */
static bool declare_after(tlc_arena *a, tir_stmt *s, const tir_buffer *base, tir_stmt *decl) {
    if (!s) return false;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) {
            tir_stmt *x = s->u.seq.stmts[i];
            if (x->kind == TS_ALLOC && x->u.alloc.buf == base) {
                tir_stmt **v = TLC_NEW_ARRAY(a, tir_stmt *, (size_t)s->u.seq.n + 1);
                for (int j = 0, k = 0; j < s->u.seq.n; j++) {
                    v[k++] = s->u.seq.stmts[j];
                    if (j == i) v[k++] = decl;
                }
                s->u.seq.stmts = v;
                s->u.seq.n++;
                return true;
            }
            if (declare_after(a, x, base, decl)) return true;
        }
        return false;
    case TS_FOR: return declare_after(a, s->u.for_.body, base, decl);
    case TS_IF: return declare_after(a, s->u.if_.then, base, decl) || declare_after(a, s->u.if_.els, base, decl);
    default: return false;
    }
}

static tir_buffer *view_of_split(offsets *o, tir_buffer *base, int dim, int64_t ext, tlc_loc loc) {
    for (int i = 0; i < o->nviews; i++)
        if (o->views[i].base == base && o->views[i].dim == dim && o->views[i].ext == ext) return o->views[i].view;
    sema *S = o->S;
    tir_buffer *v = sema_new_buffer(S, tlc_arena_printf(S->arena, "%s_by%lld", base->name, (long long)ext),
                                    TIR_SCOPE_FRAGMENT, base->dtype, base->rank + 1, base->loc);
    v->shape = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)v->rank);
    for (int d = 0, k = 0; d < base->rank; d++) {
        if (d != dim) {
            v->shape[k++] = base->shape[d];
            continue;
        }
        v->shape[k++] = tir_int(S->arena, tir_buffer_dim(base, d) / ext, loc);
        v->shape[k++] = tir_int(S->arena, ext, loc);
    }
    v->view_of = base;
    tir_stmt *decl = tir_new_stmt(S->arena, TS_ALLOC, base->loc);
    decl->u.alloc.buf = v;
    if (!declare_after(S->arena, o->kernel_body, base, decl)) return NULL;
    if (o->nviews == o->cap) {
        int nc = o->cap ? 2 * o->cap : 8;
        struct view *nv = TLC_NEW_ARRAY(S->arena, struct view, (size_t)nc);
        for (int i = 0; i < o->nviews; i++) nv[i] = o->views[i];
        o->views = nv;
        o->cap = nc;
    }
    o->views[o->nviews++] = (struct view){base, v, dim, ext};
    return v;
}

/* The access of fragment *buf at *idx, rewritten in place when it has the
 * form (one dim at most). */
static void rewrite(offsets *o, tir_buffer **buf, tir_expr ***idx, tlc_loc loc) {
    tir_buffer *b = *buf;
    if (!o->loop || b->scope != TIR_SCOPE_FRAGMENT || b->view_of || b->rank >= 4) return;
    for (int d = 0; d < b->rank; d++) {
        const tir_expr *off;
        int m = split_offset(o->loop, (*idx)[d], &off);
        int64_t ext, dim = tir_buffer_dim(b, d);
        if (m < 0 || !tir_expr_const_int(o->loop->u.for_.extent[m], &ext) || ext < 2 || dim % ext ||
            !multiple_of(off, ext, 0))
            continue;
        tir_buffer *v = view_of_split(o, b, d, ext, loc);
        if (!v) return;
        tir_expr **ni = TLC_NEW_ARRAY(o->S->arena, tir_expr *, (size_t)v->rank);
        for (int x = 0, k = 0; x < b->rank; x++) {
            if (x != d) {
                ni[k++] = (*idx)[x];
                continue;
            }
            ni[k++] = divided(o->S, off, ext, loc);
            ni[k++] = tir_var_ref(o->S->arena, o->loop->u.for_.vars[m], loc);
        }
        *buf = v;
        *idx = ni;
        return;
    }
}

static void walk_expr(offsets *o, tir_expr *e, int depth) {
    if (!e || depth > 256) return;
    switch (e->kind) {
    case TE_LOAD:
        for (int i = 0; i < e->u.load.buf->rank; i++) walk_expr(o, e->u.load.idx[i], depth + 1);
        rewrite(o, &e->u.load.buf, &e->u.load.idx, e->loc);
        return;
    case TE_BINARY:
        walk_expr(o, e->u.bin.a, depth + 1);
        walk_expr(o, e->u.bin.b, depth + 1);
        return;
    case TE_UNARY: walk_expr(o, e->u.un.a, depth + 1); return;
    case TE_CAST: walk_expr(o, e->u.cast.a, depth + 1); return;
    case TE_SELECT:
        walk_expr(o, e->u.sel.cond, depth + 1);
        walk_expr(o, e->u.sel.a, depth + 1);
        walk_expr(o, e->u.sel.b, depth + 1);
        return;
    case TE_SHUFFLE:
        walk_expr(o, e->u.shfl.value, depth + 1);
        walk_expr(o, e->u.shfl.lane, depth + 1);
        return;
    default: return;
    }
}

static void walk(offsets *o, tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) walk(o, s->u.seq.stmts[i]);
        return;
    case TS_FOR: {
        const tir_stmt *outer = o->loop;
        if (s->u.for_.kind == TIR_FOR_PARALLEL) o->loop = s;
        else if (o->loop) {
            for (int i = 0; i < s->u.for_.nvars; i++) {
                walk_expr(o, s->u.for_.start[i], 0);
                walk_expr(o, s->u.for_.extent[i], 0);
            }
        }
        walk(o, s->u.for_.body);
        o->loop = outer;
        return;
    }
    case TS_IF:
        if (o->loop) walk_expr(o, s->u.if_.cond, 0);
        walk(o, s->u.if_.then);
        walk(o, s->u.if_.els);
        return;
    case TS_LET:
    case TS_ASSIGN:
        if (o->loop) walk_expr(o, s->u.let.value, 0);
        return;
    case TS_STORE:
        if (!o->loop) return;
        for (int i = 0; i < s->u.store.buf->rank; i++) walk_expr(o, s->u.store.idx[i], 0);
        walk_expr(o, s->u.store.value, 0);
        rewrite(o, &s->u.store.buf, &s->u.store.idx, s->loc);
        return;
    default: return;
    }
}

void sema_fragment_offsets(sema *S) {
    if (!S->k || !S->k->body) return;
    offsets o = {.S = S, .kernel_body = S->k->body};
    walk(&o, S->k->body);
}
