/* Layouts of global tensors: `annotate_layout({X: T.Layout(X.shape,
 * lambda i, j, ...: [p0, p1, ...])})` says that element X[i, j, ...] is
 * kept where the row-major position of [p0, p1, ...] in the layout's output
 * shape points (each output's extent is its largest value plus one), the
 * positions counted over X's own elements in row-major order: for a
 * contiguous tensor, its memory offsets. TileLang's FlashAttention backward
 * examples accumulate dQ that way, so that a warp's atomics from a gemm
 * fragment land on consecutive words.
 *
 * The map is applied here, where the kernel's accesses of X are built:
 * each becomes an access of X at the logical index of the position the map
 * gives, so nothing after sema knows of it (the interpreter and both PTX
 * generators read ordinary accesses). A logical index outside X is sent
 * outside it (dim 0 at its size), where the accesses' masks and the
 * interpreter's checks act as they do for any element access. A copy to or
 * from X becomes a Parallel loop of element accesses (its tails masked as a
 * copy's), a tile atomic_add into X one of element atomic_adds; other tile
 * ops on X are refused. */
#include <string.h>
#include "sema_internal.h"
#include "../ops/op_table.h"
#include "../support/int_math.h"

/* T.Layout(shape, lambda ...): the lambda's parameters as variables and
 * its outputs as expressions of them. */
struct sema_index_map {
    int nin, nout;
    tir_var **in;
    int64_t *in_shape;
    tir_expr **out;
    tlc_loc loc;
};

/* A global tensor's annotated layout, or (map NULL) the first access of a
 * global tensor without one, which an annotation must not follow. */
typedef struct global_layout {
    tir_buffer *buf;
    const sema_index_map *map;
    int64_t *out_extent;
    tlc_loc loc;
} global_layout;

static global_layout *find(sema *S, const tir_buffer *b) {
    for (int i = 0; i < S->global_layouts.len; i++) {
        global_layout *g = S->global_layouts.items[i];
        if (g->buf == b) return g;
    }
    return NULL;
}

/* b's layout, or NULL where it has none. */
static const global_layout *layout_of(sema *S, const tir_buffer *b) {
    const global_layout *g = b->scope == TIR_SCOPE_GLOBAL ? find(S, b) : NULL;
    return g && g->map ? g : NULL;
}

void sema_note_global_use(sema *S, tir_buffer *b, tlc_loc loc) {
    if (b->scope != TIR_SCOPE_GLOBAL || find(S, b)) return;
    global_layout *g = TLC_NEW(S->arena, global_layout);
    g->buf = b;
    g->loc = loc;
    tlc_ptrvec_push(&S->global_layouts, g);
}

/* ---------------- T.Layout ---------------- */

/* The outputs read only the parameters and constants, with integer
 * arithmetic. */
static bool map_expr_ok(const tir_expr *e, const sema_index_map *m, int depth) {
    if (!e || depth > 64 || tir_dtype_is_float(e->dtype)) return false;
    switch (e->kind) {
    case TE_INT: return true;
    case TE_VAR:
        for (int i = 0; i < m->nin; i++)
            if (m->in[i] == e->u.var) return true;
        return false;
    case TE_BINARY: return map_expr_ok(e->u.bin.a, m, depth + 1) && map_expr_ok(e->u.bin.b, m, depth + 1);
    case TE_UNARY: return e->u.un.op == TU_NEG && map_expr_ok(e->u.un.a, m, depth + 1);
    case TE_CAST: return map_expr_ok(e->u.cast.a, m, depth + 1);
    default: return false;
    }
}

sv sema_layout_call(sema *S, const sema_args *a, tlc_loc loc) {
    sv shape = sema_eval(S, a->arg[0]);
    if (shape.kind == SV_ERROR) return shape;
    if (shape.kind != SV_TUPLE || shape.u.tup.n < 1 || shape.u.tup.n > 8) {
        tlc_error(S->diag, a->arg[0]->loc, "T.Layout's shape must be a tuple or list of 1 to 8 compile-time integers");
        return sv_error();
    }
    const ast_expr *fn = a->arg[1];
    if (fn->kind != AE_LAMBDA) {
        tlc_error(S->diag, fn->loc, "T.Layout's index map must be written as a lambda (lambda i, j: [...])");
        return sv_error();
    }
    sema_index_map *m = TLC_NEW(S->arena, sema_index_map);
    m->nin = shape.u.tup.n;
    m->loc = loc;
    m->in_shape = TLC_NEW_ARRAY(S->arena, int64_t, (size_t)m->nin);
    for (int i = 0; i < m->nin; i++) {
        sv d = shape.u.tup.items[i];
        if (d.kind != SV_SCALAR || !tir_expr_const_int(d.u.e, &m->in_shape[i]) || m->in_shape[i] < 1) {
            const char *msg = "T.Layout's shape must be compile-time positive integers";
            if (d.kind != SV_SCALAR || !sema_unbound_error(S, d.u.e, a->arg[0]->loc, msg))
                tlc_error(S->diag, a->arg[0]->loc, "%s", msg);
            return sv_error();
        }
    }
    if (fn->u.lambda.nparams != m->nin) {
        tlc_error(S->diag, fn->loc, "the index map of a %d-d T.Layout takes %d indices, but this lambda takes %d",
                  m->nin, m->nin, fn->u.lambda.nparams);
        return sv_error();
    }
    m->in = TLC_NEW_ARRAY(S->arena, tir_var *, (size_t)m->nin);
    sema_push_scope(S);
    for (int i = 0; i < m->nin; i++) {
        const ast_expr *p = fn->u.lambda.params[i];
        /* never in the kernel's IR (substituted at each access): no id of the kernel's */
        m->in[i] = TLC_NEW(S->arena, tir_var);
        m->in[i]->name = p->u.name;
        m->in[i]->kind = TV_LOOP;
        m->in[i]->dtype = TIR_I32;
        m->in[i]->loc = p->loc;
        m->in[i]->id = -1;
        sema_declare(S, p->u.name, SYM_VAR, p->loc)->var = m->in[i];
    }
    sv body = sema_eval(S, fn->u.lambda.body);
    sema_pop_scope(S);
    if (body.kind == SV_ERROR) return body;
    const sv *items = body.kind == SV_TUPLE ? body.u.tup.items : &body;
    m->nout = body.kind == SV_TUPLE ? body.u.tup.n : 1;
    if (m->nout < 1 || m->nout > 16) {
        tlc_error(S->diag, fn->u.lambda.body->loc, "T.Layout's index map must give 1 to 16 indices, got %d", m->nout);
        return sv_error();
    }
    m->out = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)m->nout);
    for (int j = 0; j < m->nout; j++) {
        if (items[j].kind != SV_SCALAR || !map_expr_ok(items[j].u.e, m, 0)) {
            tlc_error(S->diag, fn->u.lambda.body->loc, "index %d of this index map is not integer arithmetic on the "
                      "lambda's parameters and constants", j);
            return sv_error();
        }
        m->out[j] = items[j].u.e;
    }
    sv v = sv_error();
    v.kind = SV_INDEX_MAP;
    v.loc = loc;
    v.u.imap = m;
    return v;
}

/* ---------------- annotate_layout on a global tensor ---------------- */

/* The range of e while each parameter i runs over 0 .. in_shape[i] - 1. */
static bool out_range(const tir_expr *e, const sema_index_map *m, int64_t *lo, int64_t *hi, int depth) {
    const int64_t big = (int64_t)1 << 40, small = (int64_t)1 << 20; /* no overflow below */
    if (depth > 64) return false;
    switch (e->kind) {
    case TE_INT: *lo = *hi = e->u.ival; return *lo > -big && *lo < big;
    case TE_VAR:
        for (int i = 0; i < m->nin; i++)
            if (m->in[i] == e->u.var) {
                *lo = 0;
                *hi = m->in_shape[i] - 1;
                return *hi < big;
            }
        return false;
    case TE_CAST: return !e->u.cast.bits && out_range(e->u.cast.a, m, lo, hi, depth + 1);
    case TE_UNARY:
        if (!out_range(e->u.un.a, m, lo, hi, depth + 1)) return false;
        int64_t t = *lo;
        *lo = -*hi;
        *hi = -t;
        return true;
    case TE_BINARY: break;
    default: return false;
    }
    int64_t al, ah, bl, bh;
    if (!out_range(e->u.bin.a, m, &al, &ah, depth + 1) || !out_range(e->u.bin.b, m, &bl, &bh, depth + 1)) return false;
    switch (e->u.bin.op) {
    case TB_ADD: *lo = al + bl; *hi = ah + bh; break;
    case TB_SUB: *lo = al - bh; *hi = ah - bl; break;
    case TB_MUL: {
        if (bl < -small || bh > small) return false;
        int64_t c[4] = {al * bl, al * bh, ah * bl, ah * bh};
        *lo = *hi = c[0];
        for (int i = 1; i < 4; i++) {
            if (c[i] < *lo) *lo = c[i];
            if (c[i] > *hi) *hi = c[i];
        }
        break;
    }
    case TB_FLOORDIV: /* by a positive constant: monotonic */
        if (bl != bh || bl <= 0) return false;
        *lo = al >= 0 ? al / bl : -((-al + bl - 1) / bl);
        *hi = ah >= 0 ? ah / bl : -((-ah + bl - 1) / bl);
        break;
    case TB_FLOORMOD:
        if (bl != bh || bl <= 0) return false;
        if (al >= 0 && al / bl == ah / bl) { /* one period: the operand's own range */
            *lo = al % bl;
            *hi = ah % bl;
        } else {
            *lo = 0;
            *hi = bl - 1;
        }
        break;
    case TB_MIN: *lo = al < bl ? al : bl; *hi = ah < bh ? ah : bh; break;
    case TB_MAX: *lo = al > bl ? al : bl; *hi = ah > bh ? ah : bh; break;
    default: return false;
    }
    return *lo > -big && *hi < big;
}

void sema_annotate_global_layout(sema *S, tir_buffer *b, sv layout, const ast_expr *key, const ast_expr *value) {
    if (layout.kind != SV_INDEX_MAP) {
        tlc_error(S->diag, value->loc, "annotate_layout: the layout of the global tensor '%s' must be "
                  "T.Layout(%s.shape, lambda ...: [...])", b->name, b->name);
        return;
    }
    const sema_index_map *m = layout.u.imap;
    global_layout *g = find(S, b);
    if (g && g->map) {
        tlc_error(S->diag, key->loc, "annotate_layout: '%s' already has a layout", b->name);
        tlc_note(S->diag, g->loc, "the first is given here");
        return;
    }
    if (g) {
        tlc_error(S->diag, key->loc, "annotate_layout: the layout of '%s' comes after the kernel uses it; give a "
                  "global tensor's layout before its first access", b->name);
        tlc_note(S->diag, g->loc, "'%s' is used here", b->name);
        return;
    }
    int64_t elems = 1;
    for (int i = 0; i < b->rank; i++) {
        int64_t d = tir_buffer_dim(b, i);
        if (d < 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "annotate_layout: the layout of '%s' needs its dims known at compile time, "
                     "and dimension %d is not", b->name, i);
            if (!sema_unbound_error(S, b->shape[i], key->loc, msg)) tlc_error(S->diag, key->loc, "%s", msg);
            return;
        }
        elems *= d;
    }
    bool same = m->nin == b->rank;
    for (int i = 0; same && i < b->rank; i++) same = m->in_shape[i] == tir_buffer_dim(b, i);
    if (!same) {
        int64_t bs[8];
        for (int i = 0; i < b->rank; i++) bs[i] = tir_buffer_dim(b, i);
        char xs[160], ys[160];
        tir_shape_text(xs, sizeof xs, m->in_shape, m->nin);
        tir_shape_text(ys, sizeof ys, bs, b->rank);
        tlc_error(S->diag, value->loc, "annotate_layout: this layout is for shape %s, but '%s' is %s", xs, b->name, ys);
        sema_note_decl(S, b);
        return;
    }
    int64_t *ext = TLC_NEW_ARRAY(S->arena, int64_t, (size_t)m->nout), image = 1;
    bool overflow = false;
    for (int j = 0; j < m->nout; j++) {
        int64_t lo, hi;
        if (!out_range(m->out[j], m, &lo, &hi, 0)) {
            tlc_error(S->diag, m->loc, "annotate_layout: index %d of the layout of '%s' has no range tlc can bound "
                      "(it takes + - * and // %% by positive constants, min and max)", j, b->name);
            return;
        }
        if (lo < 0) {
            tlc_error(S->diag, m->loc, "annotate_layout: index %d of the layout of '%s' goes down to %lld; indices "
                      "start at 0", j, b->name, (long long)lo);
            return;
        }
        ext[j] = hi + 1;
        overflow |= __builtin_mul_overflow(image, ext[j], &image);
    }
    if (overflow || image != elems) {
        char xs[160];
        tir_shape_text(xs, sizeof xs, ext, m->nout);
        tlc_error(S->diag, m->loc, "annotate_layout: the layout of '%s' maps its %lld elements into the shape %s "
                  "(%s elements): a layout of a global tensor must place every element in one of its own",
                  b->name, (long long)elems, xs, overflow ? "more than 2^63" : tlc_arena_printf(S->arena, "%lld",
                  (long long)image));
        return;
    }
    g = TLC_NEW(S->arena, global_layout);
    g->buf = b;
    g->map = m;
    g->out_extent = ext;
    g->loc = value->loc;
    tlc_ptrvec_push(&S->global_layouts, g);
}

/* ---------------- accesses ---------------- */

static tir_expr *subst(sema *S, const tir_expr *e, const sema_index_map *m, tir_expr **idx, tlc_loc loc) {
    tlc_arena *A = S->arena;
    switch (e->kind) {
    case TE_VAR:
        for (int i = 0; i < m->nin; i++)
            if (m->in[i] == e->u.var) return idx[i];
        break;
    case TE_BINARY:
        return tir_binary(A, e->u.bin.op, subst(S, e->u.bin.a, m, idx, loc), subst(S, e->u.bin.b, m, idx, loc), loc);
    case TE_UNARY: return tir_unary(A, e->u.un.op, subst(S, e->u.un.a, m, idx, loc), loc);
    case TE_CAST:
        if (e->u.cast.bits) return tir_reinterpret(A, subst(S, e->u.cast.a, m, idx, loc), e->dtype, loc);
        return tir_cast(A, subst(S, e->u.cast.a, m, idx, loc), e->dtype, loc);
    default: break;
    }
    return (tir_expr *)e;
}

/* Every index within its dim; NULL where that is known at compile time. */
static tir_expr *in_bounds(sema *S, const tir_buffer *b, tir_expr **idx, tlc_loc loc) {
    tir_expr *c = NULL;
    for (int i = 0; i < b->rank; i++) {
        int64_t lo = -1, hi = -1;
        bool known = sema_index_range(S, idx[i], &lo, &hi);
        tir_expr *t[2] = {known && lo >= 0 ? NULL : tir_binary(S->arena, TB_GE, idx[i], tir_int(S->arena, 0, loc), loc),
                          known && hi < tir_buffer_dim(b, i) ? NULL : tir_binary(S->arena, TB_LT, idx[i], b->shape[i], loc)};
        for (int h = 0; h < 2; h++)
            if (t[h]) c = c ? tir_binary(S->arena, TB_AND, c, t[h], loc) : t[h];
    }
    return c;
}

/* log2(v) for a power of two, else -1. */
static int pow2_log(int64_t v) { return tlc_is_pow2(v) ? __builtin_ctzll((unsigned long long)v) : -1; }

/* The index X is accessed at for logical index idx; guarded: the caller
 * tests the bounds itself. */
static tir_expr **mapped_index(sema *S, const global_layout *g, tir_expr **idx, bool guarded, tlc_loc loc) {
    tlc_arena *A = S->arena;
    const tir_buffer *b = g->buf;
    const sema_index_map *m = g->map;
    tir_dtype t = tir_buffer_elems(b) > INT32_MAX ? TIR_I64 : TIR_I32;
    tir_expr **in = TLC_NEW_ARRAY(A, tir_expr *, (size_t)b->rank);
    for (int i = 0; i < b->rank; i++) in[i] = tir_cast(A, idx[i], t, loc);
    tir_expr *pos = NULL;
    int64_t stride = 1;
    for (int j = m->nout - 1; j >= 0; j--) {
        tir_expr *term = tir_binary(A, TB_MUL, tir_cast(A, subst(S, m->out[j], m, in, loc), t, loc),
                                    tir_int_typed(A, stride, t, loc), loc);
        pos = pos ? tir_binary(A, TB_ADD, term, pos, loc) : term;
        stride *= g->out_extent[j];
    }
    /* The position as X's own index. Where the logical index is inside X
     * the position is not negative, so powers of two take a shift and a
     * mask (floor division's sign fix-up costs a dozen instructions an
     * element); outside it, dim 0 is replaced below and the others stay in
     * their dims either way. */
    tir_expr **out = TLC_NEW_ARRAY(A, tir_expr *, (size_t)b->rank);
    stride = 1;
    for (int i = b->rank - 1; i >= 0; i--) {
        int64_t d = tir_buffer_dim(b, i);
        int sh = pow2_log(stride);
        tir_expr *q = sh == 0 ? pos
                    : sh > 0  ? tir_binary(A, TB_SHR, pos, tir_int_typed(A, sh, t, loc), loc)
                              : tir_binary(A, TB_FLOORDIV, pos, tir_int_typed(A, stride, t, loc), loc);
        if (i)
            q = pow2_log(d) >= 0 ? tir_binary(A, TB_BITAND, q, tir_int_typed(A, d - 1, t, loc), loc)
                                 : tir_binary(A, TB_FLOORMOD, q, tir_int_typed(A, d, t, loc), loc);
        out[i] = tir_cast(A, q, TIR_I32, loc);
        stride *= d;
    }
    tir_expr *inside = guarded ? NULL : in_bounds(S, b, idx, loc);
    if (inside) /* outside X: dim 0 at its size, which every access masks or reports */
        out[0] = tir_select(A, inside, out[0], tir_int(A, tir_buffer_dim(b, 0), loc), loc);
    return out;
}

tir_expr **sema_global_layout_index(sema *S, tir_buffer *b, tir_expr **idx, tlc_loc loc) {
    if (b->scope != TIR_SCOPE_GLOBAL) return idx;
    sema_note_global_use(S, b, loc);
    const global_layout *g = layout_of(S, b);
    return g ? mapped_index(S, g, idx, false, loc) : idx;
}

bool sema_has_global_layout(sema *S, const tir_buffer *b) { return layout_of(S, b) != NULL; }

/* One element of region r at loop variables v (one per squeezed dim). */
static tir_expr **region_index(sema *S, const tir_region *r, tir_var **v, tlc_loc loc) {
    tir_expr **idx = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)r->rank);
    int k = 0;
    for (int i = 0; i < r->rank; i++) {
        int64_t e;
        bool unit = tir_expr_const_int(r->extent[i], &e) && e == 1;
        idx[i] = unit ? r->start[i] : tir_binary(S->arena, TB_ADD, r->start[i], tir_var_ref(S->arena, v[k++], loc), loc);
    }
    return idx;
}

/* Whether region r takes rows of its buffer: each dim whole or one element
 * of it (lse[k, :]), at least one the latter. */
static bool is_rows(const tir_region *r) {
    bool row = false;
    for (int i = 0; i < r->rank; i++) {
        int64_t s, e;
        if (!tir_expr_const_int(r->extent[i], &e)) return false;
        if (e == 1 && tir_buffer_dim(r->buf, i) != 1) row = true;
        else if (!tir_expr_const_int(r->start[i], &s) || s != 0 || e != tir_buffer_dim(r->buf, i)) return false;
    }
    return row;
}

static bool is_whole(const tir_region *r) {
    for (int i = 0; i < r->rank; i++) {
        int64_t s, e;
        if (!tir_expr_const_int(r->start[i], &s) || s != 0 || !tir_expr_const_int(r->extent[i], &e) ||
            e != tir_buffer_dim(r->buf, i))
            return false;
    }
    return true;
}

bool sema_global_layout_copy(sema *S, const tir_region *src, const tir_region *dst, bool atomic, tlc_loc loc) {
    const global_layout *gs = layout_of(S, src->buf), *gd = layout_of(S, dst->buf);
    bool fragment_parts = !atomic && src->buf->scope == TIR_SCOPE_FRAGMENT && dst->buf->scope == TIR_SCOPE_FRAGMENT &&
                          (is_rows(src) || is_rows(dst)) && (is_rows(src) || is_whole(src)) &&
                          (is_rows(dst) || is_whole(dst));
    if (!gs && !gd && !fragment_parts) return false;
    tlc_arena *A = S->arena;
    int64_t shape[8];
    int n = tir_region_shape(src, shape);
    if (n < 0) {
        tlc_error(S->diag, loc, "%s: a tile of a tensor with a layout (annotate_layout) needs a constant shape",
                  atomic ? "atomic_add" : "copy");
        return true;
    }
    tir_stmt *loop = tir_new_stmt(A, TS_FOR, loc);
    loop->u.for_.kind = TIR_FOR_PARALLEL;
    loop->u.for_.nvars = n ? n : 1;
    loop->u.for_.vars = TLC_NEW_ARRAY(A, tir_var *, (size_t)loop->u.for_.nvars);
    loop->u.for_.start = TLC_NEW_ARRAY(A, tir_expr *, (size_t)loop->u.for_.nvars);
    loop->u.for_.extent = TLC_NEW_ARRAY(A, tir_expr *, (size_t)loop->u.for_.nvars);
    loop->u.for_.step = 1;
    for (int i = 0; i < loop->u.for_.nvars; i++) {
        loop->u.for_.vars[i] = sema_new_var(S, tlc_arena_printf(A, "copy_i%d", i), TV_LOOP, TIR_I32, loc);
        loop->u.for_.start[i] = tir_int(A, 0, loc);
        loop->u.for_.extent[i] = tir_int(A, n ? shape[i] : 1, loc);
    }
    int ranges_before = S->nranges;
    for (int i = 0; i < n && S->nranges < (int)(sizeof S->ranges / sizeof S->ranges[0]); i++)
        S->ranges[S->nranges++] = (struct sema_range){loop->u.for_.vars[i], 0, shape[i] - 1, S->if_depth};
    tir_expr **si = region_index(S, src, loop->u.for_.vars, loc), **di = region_index(S, dst, loop->u.for_.vars, loc);
    /* a copy's tails: reads past the tensor give 0, writes there are dropped */
    tir_expr *src_in = src->buf->scope == TIR_SCOPE_GLOBAL ? in_bounds(S, src->buf, si, loc) : NULL;
    tir_expr *dst_in = dst->buf->scope == TIR_SCOPE_GLOBAL ? in_bounds(S, dst->buf, di, loc) : NULL;
    S->nranges = ranges_before;
    if (src_in && dst_in && tir_expr_equal(src_in, dst_in)) src_in = NULL; /* the same test */
    tir_expr *value = tir_load(A, src->buf, gs ? mapped_index(S, gs, si, true, loc) : si, loc);
    tir_expr **at = gd ? mapped_index(S, gd, di, true, loc) : di;
    tir_stmt *body;
    if (atomic) { /* element atomic_adds; a tail adds nothing */
        body = tlc_new_tile_op(A, TS_ATOMIC_ADD, loc);
        tir_region *r = &body->u.atomic.dst;
        *r = (tir_region){.buf = dst->buf, .rank = dst->rank, .start = at, .loc = loc};
        r->extent = TLC_NEW_ARRAY(A, tir_expr *, (size_t)dst->rank);
        for (int i = 0; i < dst->rank; i++) r->extent[i] = tir_int(A, 1, loc);
        body->u.atomic.value = tir_cast(A, value, dst->buf->dtype, loc);
        if (src_in) {
            tir_stmt *g = tir_new_stmt(A, TS_IF, loc);
            g->u.if_.cond = src_in;
            g->u.if_.then = body;
            body = g;
        }
    } else {
        tir_stmt *store = tir_new_stmt(A, TS_STORE, loc);
        store->u.store.buf = dst->buf;
        store->u.store.idx = at;
        store->u.store.value = tir_cast(A, value, dst->buf->dtype, loc);
        body = store;
        if (src_in) {
            tir_stmt *zero = tir_new_stmt(A, TS_STORE, loc);
            zero->u.store.buf = dst->buf;
            zero->u.store.idx = at;
            zero->u.store.value = tir_cast(A, tir_int(A, 0, loc), dst->buf->dtype, loc);
            body = tir_new_stmt(A, TS_IF, loc);
            body->u.if_.cond = src_in;
            body->u.if_.then = store;
            body->u.if_.els = zero;
        }
    }
    if (dst_in) {
        tir_stmt *guard = tir_new_stmt(A, TS_IF, loc);
        guard->u.if_.cond = dst_in;
        guard->u.if_.then = body;
        body = guard;
    }
    loop->u.for_.body = body;
    sema_emit(S, loop);
    return true;
}
