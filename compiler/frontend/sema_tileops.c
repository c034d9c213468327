/* Tile operations: operand regions (whole buffers, slices, start indices),
 * their shape, scope, bounds and dtype rules, and the schedule hints
 * use_swizzle / annotate_layout. */
#include <stdio.h>
#include <string.h>
#include "sema_internal.h"
#include "../ops/op_table.h"

/* A region as written, before a start-index form gets its extents. */
typedef struct pregion {
    tir_region r;
    bool point;          /* every dim indexed by a scalar: extents come from the other operand */
    const ast_expr *ast;
    const ast_expr **dim_ast; /* per dim: the index expression (for locations), or NULL */
} pregion;

static void shape_str(const int64_t *s, int n, char *buf, size_t len) {
    size_t o = 0;
    o += (size_t)snprintf(buf + o, len - o, "[");
    for (int i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

tir_region sema_whole_region(sema *S, tir_buffer *b, tlc_loc loc) {
    tir_region r = {.buf = b, .rank = b->rank, .loc = loc};
    r.start = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)b->rank);
    r.extent = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)b->rank);
    for (int d = 0; d < b->rank; d++) {
        r.start[d] = tir_int(S->arena, 0, loc);
        r.extent[d] = b->shape[d];
    }
    return r;
}

static bool region_of(sema *S, const ast_expr *e, pregion *out, const char *op, const char *what) {
    memset(out, 0, sizeof *out);
    out->ast = e;
    const ast_expr *base = e->kind == AE_SUBSCRIPT ? e->u.sub.value : e;
    sv v = sema_eval(S, base);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_BUFFER) {
        char d[128];
        sema_describe_sv(&v, d, sizeof d);
        tlc_error(S->diag, e->loc, "%s: %s must be a buffer or a buffer region, got %s", op, what, d);
        return false;
    }
    tir_buffer *b = v.u.buf;
    if (b->scope == TIR_SCOPE_VAR) {
        tlc_error(S->diag, e->loc, "%s: %s '%s' is a scalar variable (alloc_var), not a tile", op, what, b->name);
        sema_note_decl(S, b);
        return false;
    }
    if (b->scope == TIR_SCOPE_GLOBAL) sema_note_global_use(S, b, e->loc);
    if (strcmp(op, "copy") != 0 && strcmp(op, "atomic_add") != 0 && sema_has_global_layout(S, b)) {
        tlc_error(S->diag, e->loc, "%s: '%s' has a layout (annotate_layout with T.Layout), which copy, atomic_add "
                  "and element accesses follow; not %s", op, b->name, op);
        return false;
    }
    tir_region *r = &out->r;
    *r = sema_whole_region(S, b, e->loc);
    out->dim_ast = TLC_NEW_ARRAY(S->arena, const ast_expr *, b->rank);
    if (e->kind != AE_SUBSCRIPT) return true;
    if (!sema_check_index_count(S, b, e)) return false;
    bool ok = true;
    out->point = true;
    for (int i = 0; i < b->rank; i++) {
        const ast_expr *ie = e->u.sub.index[i];
        out->dim_ast[i] = ie;
        if (ie->kind != AE_SLICE) {
            r->start[i] = sema_index(S, ie);
            r->extent[i] = tir_int(S->arena, 1, ie->loc);
            if (!r->start[i]) ok = false;
            continue;
        }
        out->point = false;
        if (ie->u.slice.step) {
            tlc_error(S->diag, ie->u.slice.step->loc, "slice steps are not supported");
            ok = false;
            continue;
        }
        tir_expr *lo = ie->u.slice.lo ? sema_index(S, ie->u.slice.lo) : tir_int(S->arena, 0, ie->loc);
        tir_expr *hi = ie->u.slice.hi ? sema_index(S, ie->u.slice.hi) : b->shape[i];
        if (!lo || !hi) { ok = false; continue; }
        r->start[i] = lo;
        int64_t ext;
        if (tir_const_difference(hi, lo, !S->lets_reassigned, &ext)) {
            if (ext <= 0) {
                tlc_error(S->diag, ie->loc, "empty slice of '%s' (extent %lld)", b->name, (long long)ext);
                ok = false;
                continue;
            }
            r->extent[i] = tir_int(S->arena, ext, ie->loc);
        } else {
            char msg[160];
            snprintf(msg, sizeof msg, "the extent of this slice of '%s' is not a compile-time constant", b->name);
            if (sema_unbound_error(S, hi, ie->loc, msg) || sema_unbound_error(S, lo, ie->loc, msg)) {
                ok = false;
                continue;
            }
            tlc_error(S->diag, ie->loc, "%s", msg);
            sema_note_decl(S, b);
            ok = false;
        }
    }
    if (b->rank == 0) out->point = false;
    return ok;
}

/* Gives a start-index region the extents of `shape` on its trailing dims. */
static bool resolve_point(sema *S, pregion *p, const int64_t *shape, int n, const char *op) {
    tir_region *r = &p->r;
    if (n < 0) {
        tlc_error(S->diag, p->ast->loc, "%s: cannot infer the extent of '%s[...]': the other operand's shape is not constant; use slices",
                  op, r->buf->name);
        return false;
    }
    if (n > r->rank) {
        char s[160];
        shape_str(shape, n, s, sizeof s);
        tlc_error(S->diag, p->ast->loc, "%s: cannot take a %s region from the %d-d buffer '%s'", op, s, r->rank, r->buf->name);
        sema_note_decl(S, r->buf);
        return false;
    }
    for (int i = 0; i < n; i++) {
        int d = r->rank - n + i;
        r->extent[d] = tir_int(S->arena, shape[i], p->dim_ast[d] ? p->dim_ast[d]->loc : p->ast->loc);
    }
    p->point = false;
    return true;
}

/* Regions of global tensors may run past the end of a dim: that is a tail,
 * masked by every backend (reads give 0, writes are dropped), e.g. a 128-row
 * tile over a tensor specialized to 64 rows. They must still start inside.
 * Regions of on-chip buffers must fit exactly. */
static bool check_bounds(sema *S, const pregion *p) {
    const tir_region *r = &p->r;
    bool masked_tail = r->buf->scope == TIR_SCOPE_GLOBAL;
    for (int i = 0; i < r->rank; i++) {
        int64_t s, e, d = tir_buffer_dim(r->buf, i);
        if (masked_tail) {
            if (!tir_expr_const_int(r->start[i], &s)) continue;
            if (d < 0) { /* a symbolic dim: only a start below 0 is known to be outside */
                if (s >= 0) continue;
                tlc_loc at = p->dim_ast && p->dim_ast[i] ? p->dim_ast[i]->loc : p->ast->loc;
                tlc_error(S->diag, at, "index %lld is out of range for dimension %d of '%s' (indices start at 0)",
                          (long long)s, i, r->buf->name);
                sema_note_decl(S, r->buf);
                return false;
            }
            /* A constant start with a constant extent past the end is a
             * tail known at compile time (TileLang's 32-row tile of a
             * 24-row tensor): masked as any other, with a warning, since
             * it may as well be a mistake. */
            if (tir_expr_const_int(r->extent[i], &e) && s >= 0 && s < d && e > d - s) {
                tlc_loc at = p->dim_ast && p->dim_ast[i] ? p->dim_ast[i]->loc : p->ast->loc;
                tlc_warning(S->diag, at, "region [%lld:%lld] of '%s' reaches past the end of dimension %d (size %lld): "
                            "the part past it is a masked tail (reads give 0, writes are dropped)",
                            (long long)s, (long long)(s + e), r->buf->name, i, (long long)d);
                continue;
            }
            if (s < 0 || s >= d) {
                tlc_loc at = p->dim_ast && p->dim_ast[i] ? p->dim_ast[i]->loc : p->ast->loc;
                tlc_error(S->diag, at, "index %lld is out of range for dimension %d of '%s' (size %lld)",
                          (long long)s, i, r->buf->name, (long long)d);
                sema_note_decl(S, r->buf);
                return false;
            }
            continue;
        }
        if (d >= 0 && tir_expr_const_int(r->extent[i], &e) && e > d) { /* too big wherever it starts */
            tlc_loc at = p->dim_ast && p->dim_ast[i] ? p->dim_ast[i]->loc : p->ast->loc;
            tlc_error(S->diag, at, "a region of extent %lld does not fit in dimension %d of '%s' (size %lld)",
                      (long long)e, i, r->buf->name, (long long)d);
            sema_note_decl(S, r->buf);
            return false;
        }
        if (d < 0 || !tir_expr_const_int(r->start[i], &s) || !tir_expr_const_int(r->extent[i], &e)) continue;
        if (s < 0 || e > d || s > d - e) {
            tlc_loc at = p->dim_ast && p->dim_ast[i] ? p->dim_ast[i]->loc : p->ast->loc;
            if (e == 1)
                tlc_error(S->diag, at, "index %lld is out of range for dimension %d of '%s' (size %lld)",
                          (long long)s, i, r->buf->name, (long long)d);
            else
                tlc_error(S->diag, at, "region [%lld:%lld] is out of range for dimension %d of '%s' (size %lld)",
                          (long long)s, (long long)(s + e), i, r->buf->name, (long long)d);
            sema_note_decl(S, r->buf);
            return false;
        }
    }
    return true;
}

/* Squeezed shapes of both regions agree (when both are constant). */
static bool check_same_shape(sema *S, const pregion *a, const pregion *b, const char *op,
                             const char *aname, const char *bname) {
    int64_t sa[8], sb[8];
    int na = tir_region_shape(&a->r, sa), nb = tir_region_shape(&b->r, sb);
    if (na < 0 || nb < 0) return true; /* symbolic: masked at run time */
    bool same = na == nb;
    for (int i = 0; same && i < na; i++) same = sa[i] == sb[i];
    if (same) return true;
    char xs[160], ys[160];
    shape_str(sa, na, xs, sizeof xs);
    shape_str(sb, nb, ys, sizeof ys);
    tlc_error(S->diag, b->ast->loc, "%s: shape mismatch: %s '%s' is %s but %s '%s' is %s", op, aname,
              a->r.buf->name, xs, bname, b->r.buf->name, ys);
    sema_note_decl(S, a->r.buf);
    if (b->r.buf != a->r.buf) sema_note_decl(S, b->r.buf);
    return false;
}

/* Pairs two regions where either may be in start-index form. */
static bool pair_regions(sema *S, pregion *a, pregion *b, const char *op) {
    int64_t s[8];
    if (a->point && b->point) {
        tlc_error(S->diag, b->ast->loc, "%s: cannot infer the extent: both operands are start indices; write one of them with slices",
                  op);
        return false;
    }
    if (a->point && !resolve_point(S, a, s, tir_region_shape(&b->r, s), op)) return false;
    if (b->point && !resolve_point(S, b, s, tir_region_shape(&a->r, s), op)) return false;
    return true;
}

/* A copy or fill outside registers is unrolled per thread: refuse one over
 * more bytes than that allows before anything is expanded. */
static bool unrolled_size_fits(sema *S, const tir_region *r, int elem_bytes, tlc_loc loc, const char *op) {
    int64_t shape[8], n = 1;
    int rank = tir_region_shape(r, shape);
    bool overflow = false;
    for (int d = 0; d < rank; d++) overflow |= __builtin_mul_overflow(n, shape[d], &n);
    overflow |= __builtin_mul_overflow(n, (int64_t)elem_bytes, &n);
    int64_t threads = S->k && S->k->threads > 0 ? S->k->threads : 1;
    if (!overflow && n <= threads * TLC_UNROLLED_MAX_BYTES_PER_THREAD) return true;
    char bytes[32];
    if (overflow) snprintf(bytes, sizeof bytes, "more than 2^63");
    else snprintf(bytes, sizeof bytes, "%lld", (long long)n);
    tlc_error(S->diag, loc, "%s of %s bytes outside registers: more than %d per thread with %lld threads; "
                            "split it over blocks or loop over tiles",
              op, bytes, TLC_UNROLLED_MAX_BYTES_PER_THREAD, (long long)threads);
    return false;
}

/* The copy statement made (NULL: none, or not one TS_COPY: an error, a
 * copy through a global layout). */
static tir_stmt *op_copy(sema *S, const sema_args *a, tlc_loc loc) {
    pregion src, dst;
    bool ok = region_of(S, a->arg[0], &src, "copy", "the source");
    ok = region_of(S, a->arg[1], &dst, "copy", "the destination") && ok;
    if (!ok || !pair_regions(S, &src, &dst, "copy")) return NULL;
    ok = check_bounds(S, &src);
    ok = check_bounds(S, &dst) && ok;
    if (!ok || !check_same_shape(S, &src, &dst, "copy", "source", "destination")) return NULL;
    int sb = tir_dtype_bytes(src.r.buf->dtype), db = tir_dtype_bytes(dst.r.buf->dtype);
    if (src.r.buf->scope != TIR_SCOPE_FRAGMENT && dst.r.buf->scope != TIR_SCOPE_FRAGMENT &&
        !unrolled_size_fits(S, &src.r, sb > db ? sb : db, loc, "a copy"))
        return NULL;
    if (sema_global_layout_copy(S, &src.r, &dst.r, false, loc)) return NULL;
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_COPY, loc);
    st->u.copy.src = src.r;
    st->u.copy.dst = dst.r;
    sema_emit(S, st);
    return st;
}

/* prefetch(X[...]): a region of a global tensor, start indices alone
 * meaning one element; tails past the tensor's end are dropped, as a
 * copy's are. */
static void op_prefetch(sema *S, const sema_args *a, tlc_loc loc) {
    pregion src;
    if (!region_of(S, a->arg[0], &src, "prefetch", "the source")) return;
    if (src.r.buf->scope != TIR_SCOPE_GLOBAL) {
        tlc_error(S->diag, a->arg[0]->loc,
                  "prefetch: the source must be a region of a global tensor (it is brought into the L2 cache), "
                  "'%s' is a %s buffer",
                  src.r.buf->name, tir_scope_name(src.r.buf->scope));
        sema_note_decl(S, src.r.buf);
        return;
    }
    src.point = false;
    if (!check_bounds(S, &src)) return;
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_PREFETCH, loc);
    st->u.prefetch.src = src.r;
    sema_emit(S, st);
}

static void op_fill(sema *S, const builtin_spec *b, const sema_args *a, tlc_loc loc) {
    if (a->arg[0]->kind == AE_NAME) { /* clear(x) / fill(x, v) of an alloc_var: TileLang sets the scalar */
        sym *s = sema_lookup(S, a->arg[0]->u.name);
        if (s && s->kind == SYM_BUFFER && s->buf->scope == TIR_SCOPE_VAR) {
            tir_expr *v = b->id == B_CLEAR ? tir_int(S->arena, 0, loc) : sema_eval_scalar(S, a->arg[1]);
            if (!v) return;
            tir_stmt *w = tir_new_stmt(S->arena, TS_STORE, loc);
            w->u.store.buf = s->buf;
            w->u.store.value = tir_cast(S->arena, v, s->buf->dtype, loc);
            sema_emit(S, w);
            return;
        }
    }
    pregion dst;
    bool ok = region_of(S, a->arg[0], &dst, b->name, "the destination");
    tir_expr *v = b->id == B_CLEAR ? tir_int(S->arena, 0, loc) : sema_eval_scalar(S, a->arg[1]);
    if (!ok || !v) return;
    if (dst.point) { /* fill(A[i, j], v): one element */
        dst.point = false;
    }
    if (!check_bounds(S, &dst)) return;
    if (dst.r.buf->scope != TIR_SCOPE_FRAGMENT &&
        !unrolled_size_fits(S, &dst.r, tir_dtype_bytes(dst.r.buf->dtype), loc, b->name))
        return;
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_FILL, loc);
    st->u.fill.dst = dst.r;
    st->u.fill.value = tir_cast(S->arena, v, dst.r.buf->dtype, loc);
    st->u.fill.is_clear = b->id == B_CLEAR;
    sema_emit(S, st);
}

static bool whole_operand(sema *S, pregion *p, const char *op, const char *what) {
    if (!p->point) return true;
    tlc_error(S->diag, p->ast->loc, "%s: %s must be a buffer or a slice, not start indices", op, what);
    return false;
}

/* The ops whose rules lay a fragment out whole (gemm, reduce) take it whole. */
static bool whole_fragment(sema *S, const pregion *p, const char *op, const char *what) {
    if (p->r.buf->scope != TIR_SCOPE_FRAGMENT || tir_region_is_whole(&p->r)) return true;
    tlc_error(S->diag, p->ast->loc, "%s: %s in registers must be the whole fragment '%s', not a slice", op, what,
              p->r.buf->name);
    sema_note_decl(S, p->r.buf);
    return false;
}

static bool operand_2d(sema *S, const pregion *p, const char *what, int64_t out[2]) {
    int64_t s[8];
    int n = tir_region_shape(&p->r, s);
    if (p->r.rank == 2 && tir_expr_const_int(p->r.extent[0], &out[0]) && tir_expr_const_int(p->r.extent[1], &out[1]))
        return true; /* a 2-d buffer keeps its dims even where one is 1 */
    if (n == 2) {
        out[0] = s[0];
        out[1] = s[1];
        return true;
    }
    char sh[160];
    if (n >= 0) shape_str(s, n, sh, sizeof sh);
    else snprintf(sh, sizeof sh, "not constant");
    tlc_error(S->diag, p->ast->loc, "gemm: %s '%s' must be a 2-d tile, its shape is %s", what, p->r.buf->name, sh);
    sema_note_decl(S, p->r.buf);
    return false;
}

static void op_gemm(sema *S, const sema_args *a, tlc_loc loc, bool async) {
    pregion A, B, C;
    bool ok = region_of(S, a->arg[0], &A, "gemm", "operand A");
    ok = region_of(S, a->arg[1], &B, "gemm", "operand B") && ok;
    ok = region_of(S, a->arg[2], &C, "gemm", "the accumulator C") && ok;
    bool ta = false, tb = false, clear = false;
    tir_gemm_policy policy = TIR_POLICY_SQUARE;
    if (a->arg[3] && !sema_eval_const_bool(S, a->arg[3], "transpose_A", &ta)) ok = false;
    if (a->arg[4] && !sema_eval_const_bool(S, a->arg[4], "transpose_B", &tb)) ok = false;
    if (a->arg[5]) {
        sv p = sema_eval(S, a->arg[5]);
        if (p.kind == SV_POLICY) policy = p.u.policy;
        else if (p.kind != SV_ERROR) {
            tlc_error(S->diag, a->arg[5]->loc, "gemm: policy must be GemmWarpPolicy.Square, FullRow or FullCol");
            ok = false;
        } else ok = false;
    }
    tir_expr *clear_if = NULL;
    if (a->arg[6]) {
        /* a constant, or a condition the gemm tests when it runs (an
         * unrolled loop's `j == 0`) */
        tir_expr *x = sema_eval_scalar(S, a->arg[6]);
        if (!x) ok = false;
        else if (x->kind == TE_INT) clear = x->u.ival != 0;
        else if (!(clear_if = sema_to_bool(S, x, a->arg[6], "clear_accum"))) ok = false;
    }
    if (!ok) return;
    ok = whole_operand(S, &A, "gemm", "operand A");
    ok = whole_operand(S, &B, "gemm", "operand B") && ok;
    ok = whole_operand(S, &C, "gemm", "the accumulator C") && ok;
    if (!ok) return;
    const pregion *ops[2] = {&A, &B};
    const char *names[2] = {"A", "B"};
    for (int i = 0; i < 2; i++) {
        tir_scope sc = ops[i]->r.buf->scope;
        if (sc != TIR_SCOPE_SHARED && sc != TIR_SCOPE_FRAGMENT) {
            tlc_error(S->diag, ops[i]->ast->loc, "gemm: operand %s must be in shared memory or a fragment, but '%s' is %s",
                      names[i], ops[i]->r.buf->name, sema_buffer_desc(ops[i]->r.buf));
            sema_note_decl(S, ops[i]->r.buf);
            ok = false;
        }
    }
    if (C.r.buf->scope != TIR_SCOPE_FRAGMENT) {
        tlc_error(S->diag, C.ast->loc, "gemm: the accumulator C must be a fragment (alloc_fragment), but '%s' is %s",
                  C.r.buf->name, sema_buffer_desc(C.r.buf));
        sema_note_decl(S, C.r.buf);
        ok = false;
    }
    if (ok)
        ok = whole_fragment(S, &A, "gemm", "operand A") && whole_fragment(S, &B, "gemm", "operand B") &&
             whole_fragment(S, &C, "gemm", "the accumulator C");
    if (!ok) return;
    if (A.r.buf->dtype != B.r.buf->dtype) {
        tlc_error(S->diag, B.ast->loc, "gemm: operands A (%s) and B (%s) must have the same dtype",
                  tir_dtype_name(A.r.buf->dtype), tir_dtype_name(B.r.buf->dtype));
        sema_note_decl(S, A.r.buf);
        sema_note_decl(S, B.r.buf);
        return;
    }
    ok = check_bounds(S, &A);
    ok = check_bounds(S, &B) && ok;
    ok = check_bounds(S, &C) && ok;
    int64_t sa[2], sb[2], sc[2];
    ok = operand_2d(S, &A, "operand A", sa) && ok;
    ok = operand_2d(S, &B, "operand B", sb) && ok;
    ok = operand_2d(S, &C, "the accumulator C", sc) && ok;
    if (!ok) return;
    int64_t m = ta ? sa[1] : sa[0], ka = ta ? sa[0] : sa[1];
    int64_t kb = tb ? sb[1] : sb[0], n = tb ? sb[0] : sb[1];
    if (ka != kb) {
        tlc_error(S->diag, B.ast->loc, "gemm: K of A (%lld, from %s[%lld, %lld]%s) does not match K of B (%lld, from %s[%lld, %lld]%s)",
                  (long long)ka, A.r.buf->name, (long long)sa[0], (long long)sa[1], ta ? " with transpose_A" : "",
                  (long long)kb, B.r.buf->name, (long long)sb[0], (long long)sb[1], tb ? " with transpose_B" : "");
        sema_note_decl(S, A.r.buf);
        if (B.r.buf != A.r.buf) sema_note_decl(S, B.r.buf);
        return;
    }
    if (sc[0] != m || sc[1] != n) {
        tlc_error(S->diag, C.ast->loc, "gemm: the accumulator '%s' is [%lld, %lld] but A x B is [%lld, %lld]",
                  C.r.buf->name, (long long)sc[0], (long long)sc[1], (long long)m, (long long)n);
        sema_note_decl(S, C.r.buf);
        return;
    }
    if (m > INT32_MAX || n > INT32_MAX || ka > INT32_MAX) return;
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_GEMM, loc);
    st->u.gemm.a = A.r;
    st->u.gemm.b = B.r;
    st->u.gemm.c = C.r;
    st->u.gemm.trans_a = ta;
    st->u.gemm.trans_b = tb;
    st->u.gemm.clear_accum = clear;
    st->u.gemm.policy = policy;
    st->u.gemm.m = (int)m;
    st->u.gemm.n = (int)n;
    st->u.gemm.k = (int)ka;
    st->u.gemm.async = async;
    st->u.gemm.clear_if = clear_if;
    if (async) sema_note_hand_async(S, loc);
    sema_emit(S, st);
}

/* A fragment of r's shape that stands in for the shared region r in a
 * reduce (TileLang reduces from and into shared memory; tlc's reduce runs
 * on fragments): allocated here, filled from r when copy_in. NULL, reported,
 * when it would not fit in registers. */
static tir_buffer *staged_fragment(sema *S, const tir_region *r, bool copy_in, tlc_loc loc) {
    tir_buffer *f = sema_new_buffer(S, tlc_arena_printf(S->arena, "%s.frag%d", r->buf->name, S->buffers.len),
                                    TIR_SCOPE_FRAGMENT, r->buf->dtype, r->rank, loc);
    f->shape = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)r->rank);
    for (int d = 0; d < r->rank; d++) f->shape[d] = r->extent[d];
    int64_t regs;
    if (!sema_fragment_fits(S, f, &regs)) {
        tlc_error(S->diag, loc, "a reduce from or into shared '%s' runs on a fragment of its shape, at least %lld "
                  "registers per thread (at most %d): reduce a smaller tile", r->buf->name, (long long)regs,
                  TLC_FRAGMENT_MAX_REGS);
        return NULL;
    }
    tir_stmt *al = tir_new_stmt(S->arena, TS_ALLOC, loc);
    al->u.alloc.buf = f;
    sema_emit(S, al);
    if (copy_in) {
        tir_stmt *cp = tlc_new_tile_op(S->arena, TS_COPY, loc);
        cp->u.copy.src = *r;
        cp->u.copy.dst = sema_whole_region(S, f, loc);
        sema_emit(S, cp);
    }
    return f;
}

/* copy(from, to) of two whole buffers of the same shape. */
static void copy_whole(sema *S, tir_buffer *from, tir_buffer *to, tlc_loc loc) {
    tir_stmt *cp = tlc_new_tile_op(S->arena, TS_COPY, loc);
    cp->u.copy.src = sema_whole_region(S, from, loc);
    cp->u.copy.dst = sema_whole_region(S, to, loc);
    sema_emit(S, cp);
}

/* cumsum(src, dst=None, dim=0, reverse=False): dst's elements are the sums
 * of src's along `dim` up to and including theirs (from theirs to the end
 * with reverse); dst defaults to src. Written out here as Tile IR, as
 * TileLang writes it: the scan runs in shared memory (a fragment through a
 * shared buffer of its shape), a Parallel loop over the lines along `dim`,
 * each line a serial loop that sums in float32 (int32 for integers). */
static void op_cumsum(sema *S, const sema_args *a, tlc_loc loc) {
    pregion src, dst;
    bool ok = region_of(S, a->arg[0], &src, "cumsum", "the source");
    if (a->arg[1]) ok = region_of(S, a->arg[1], &dst, "cumsum", "the destination") && ok;
    int64_t dim = 0;
    bool reverse = false;
    if (a->arg[2] && !sema_eval_const_int(S, a->arg[2], "dim", &dim)) ok = false;
    if (a->arg[3] && !sema_eval_const_bool(S, a->arg[3], "reverse", &reverse)) ok = false;
    if (!ok) return;
    if (!a->arg[1]) dst = src;
    const pregion *ops[2] = {&src, &dst};
    for (int i = 0; i < 2; i++) {
        const tir_buffer *b = ops[i]->r.buf;
        if (ops[i]->point || !tir_region_is_whole(&ops[i]->r)) {
            tlc_error(S->diag, ops[i]->ast->loc, "cumsum: %s must be a whole buffer", i ? "the destination" : "the source");
            return;
        }
        if (b->scope != TIR_SCOPE_SHARED && b->scope != TIR_SCOPE_FRAGMENT) {
            tlc_error(S->diag, ops[i]->ast->loc, "cumsum: %s must be a shared buffer or a fragment, but '%s' is %s",
                      i ? "the destination" : "the source", b->name, sema_buffer_desc(b));
            sema_note_decl(S, b);
            return;
        }
        if (b->dtype == TIR_BOOL || (!tir_dtype_is_float(b->dtype) && tir_dtype_bytes(b->dtype) > 4)) {
            tlc_error(S->diag, ops[i]->ast->loc, "cumsum of %s is not supported (floats, or integers of at most 32 bits)",
                      tir_dtype_name(b->dtype));
            return;
        }
    }
    tir_buffer *sb = src.r.buf, *db = dst.r.buf;
    int rank = sb->rank;
    int64_t shape[8];
    if (rank > 8) return;
    for (int d = 0; d < rank; d++) shape[d] = tir_buffer_dim(sb, d);
    bool same = db->rank == rank;
    for (int d = 0; same && d < rank; d++) {
        int64_t e;
        same = tir_expr_const_int(db->shape[d], &e) && e == shape[d];
    }
    if (!same) {
        tlc_error(S->diag, dst.ast->loc, "cumsum: the destination '%s' must have the shape of the source '%s'", db->name,
                  sb->name);
        return;
    }
    if (dim < -rank || dim >= rank) {
        tlc_error(S->diag, a->arg[2]->loc, "cumsum: dim=%lld is out of range for the %d-d '%s'", (long long)dim, rank,
                  sb->name);
        return;
    }
    if (dim < 0) dim += rank;
    /* the buffer the scan runs in */
    tir_buffer *w = db;
    if (db->scope != TIR_SCOPE_SHARED) {
        w = sema_new_buffer(S, tlc_arena_printf(S->arena, "%s.scan%d", db->name, S->buffers.len), TIR_SCOPE_SHARED,
                            db->dtype, rank, loc);
        w->shape = db->shape;
        tir_stmt *al = tir_new_stmt(S->arena, TS_ALLOC, loc);
        al->u.alloc.buf = w;
        sema_emit(S, al);
    }
    if (w != sb) copy_whole(S, sb, w, loc);
    /* for the other dims in Parallel: acc = 0; for j in serial(n): acc += w[..j..]; w[..j..] = acc */
    tir_dtype acc_t = tir_dtype_is_float(w->dtype) ? TIR_F32 : TIR_I32;
    tir_var *lines[8];
    int64_t line_ext[8];
    int nl = 0;
    for (int d = 0; d < rank; d++)
        if (d != dim) {
            lines[nl] = sema_new_var(S, tlc_arena_printf(S->arena, "cumsum_i%d", d), TV_LOOP, TIR_I32, loc);
            line_ext[nl++] = shape[d];
        }
    if (nl == 0) {
        lines[nl] = sema_new_var(S, "cumsum_line", TV_LOOP, TIR_I32, loc);
        line_ext[nl++] = 1;
    }
    tir_var *acc = sema_new_var(S, "cumsum_acc", TV_LET, acc_t, loc);
    tir_var *j = sema_new_var(S, "cumsum_j", TV_LOOP, TIR_I32, loc);
    tir_expr **idx = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)rank);
    for (int d = 0, l = 0; d < rank; d++) {
        if (d != dim) {
            idx[d] = tir_var_ref(S->arena, lines[l++], loc);
            continue;
        }
        idx[d] = tir_var_ref(S->arena, j, loc);
        if (reverse)
            idx[d] = tir_binary(S->arena, TB_SUB, tir_int(S->arena, shape[dim] - 1, loc), idx[d], loc);
    }
    tir_stmt *add = tir_new_stmt(S->arena, TS_ASSIGN, loc);
    add->u.let.var = acc;
    add->u.let.value = tir_binary(S->arena, TB_ADD, tir_var_ref(S->arena, acc, loc),
                                  tir_cast(S->arena, tir_load(S->arena, w, idx, loc), acc_t, loc), loc);
    S->lets_reassigned = true;
    tir_stmt *put = tir_new_stmt(S->arena, TS_STORE, loc);
    put->u.store.buf = w;
    put->u.store.idx = idx;
    put->u.store.value = tir_cast(S->arena, tir_var_ref(S->arena, acc, loc), w->dtype, loc);
    tir_stmt *step[2] = {add, put};
    tir_stmt *scan = sema_loop_stmt(S, TIR_FOR_SERIAL, &j, &shape[dim], 1, sema_seq_stmt(S, step, 2, loc), loc);
    tir_stmt *init = tir_new_stmt(S->arena, TS_LET, loc);
    init->u.let.var = acc;
    init->u.let.value = acc_t == TIR_F32 ? tir_float(S->arena, 0.0, TIR_F32, loc) : tir_int(S->arena, 0, loc);
    tir_stmt *line[2] = {init, scan};
    sema_emit(S, sema_loop_stmt(S, TIR_FOR_PARALLEL, lines, line_ext, nl, sema_seq_stmt(S, line, 2, loc), loc));
    if (w != db) copy_whole(S, w, db, loc);
}

static void op_reduce(sema *S, const builtin_spec *b, const sema_args *a, tlc_loc loc) {
    pregion src, dst;
    bool ok = region_of(S, a->arg[0], &src, b->name, "the source");
    ok = region_of(S, a->arg[1], &dst, b->name, "the destination") && ok;
    int64_t dim = -1;
    bool clear = true;
    if (a->arg[2] && !sema_eval_const_int(S, a->arg[2], "dim", &dim)) ok = false;
    if (a->arg[3] && !sema_eval_const_bool(S, a->arg[3], "clear", &clear)) ok = false;
    if (!ok) return;
    ok = whole_operand(S, &src, b->name, "the source");
    ok = whole_operand(S, &dst, b->name, "the destination") && ok;
    if (!ok) return;
    tir_scope ss = src.r.buf->scope, ds = dst.r.buf->scope;
    if (ss != TIR_SCOPE_FRAGMENT && ss != TIR_SCOPE_SHARED) {
        tlc_error(S->diag, src.ast->loc, "%s: the source must be a fragment or a shared buffer, but '%s' is %s", b->name,
                  src.r.buf->name, sema_buffer_desc(src.r.buf));
        sema_note_decl(S, src.r.buf);
        ok = false;
    }
    if (ds == TIR_SCOPE_GLOBAL) {
        tlc_error(S->diag, dst.ast->loc, "%s: the destination must be a fragment, shared or local buffer, but '%s' is %s",
                  b->name, dst.r.buf->name, sema_buffer_desc(dst.r.buf));
        sema_note_decl(S, dst.r.buf);
        ok = false;
    }
    if (ok) ok = whole_fragment(S, &src, b->name, "the source") && whole_fragment(S, &dst, b->name, "the destination");
    int rank = src.r.rank;
    if (ok && (dim < -rank || dim >= rank)) {
        tlc_error(S->diag, a->arg[2] ? a->arg[2]->loc : loc, "%s: dim=%lld is out of range for the %d-d source '%s'",
                  b->name, (long long)dim, rank, src.r.buf->name);
        ok = false;
    }
    if (!ok || !check_bounds(S, &src) || !check_bounds(S, &dst)) return;
    if (dim < 0) dim += rank;
    /* expected: the source extents without `dim`, extent-1 dims dropped */
    int64_t want[8], got[8];
    int nw = 0;
    for (int i = 0; i < rank; i++) {
        int64_t e;
        if (i == dim) continue;
        if (!tir_expr_const_int(src.r.extent[i], &e)) return;
        if (e != 1) want[nw++] = e;
    }
    int ng = tir_region_shape(&dst.r, got);
    bool same = ng == nw;
    for (int i = 0; same && i < nw; i++) same = want[i] == got[i];
    if (!same) {
        char ws[160], gs[160];
        shape_str(want, nw, ws, sizeof ws);
        shape_str(got, ng < 0 ? 0 : ng, gs, sizeof gs);
        tlc_error(S->diag, dst.ast->loc, "%s: the destination '%s' is %s but reducing '%s' over dim %lld gives %s",
                  b->name, dst.r.buf->name, gs, src.r.buf->name, (long long)dim, ws);
        sema_note_decl(S, dst.r.buf);
        return;
    }
    tir_region from = src.r, into = dst.r;
    if (ss == TIR_SCOPE_SHARED) {
        tir_buffer *f = staged_fragment(S, &src.r, true, loc);
        if (!f) return;
        from = sema_whole_region(S, f, loc);
    }
    if (ds == TIR_SCOPE_SHARED) { /* accumulating (clear=False) starts from what it holds */
        tir_buffer *f = staged_fragment(S, &dst.r, !clear, loc);
        if (!f) return;
        into = sema_whole_region(S, f, loc);
    }
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_REDUCE, loc);
    st->u.reduce.kind = b->id == B_REDUCE_MAX ? TIR_REDUCE_MAX : b->id == B_REDUCE_SUM ? TIR_REDUCE_SUM
                      : b->id == B_REDUCE_MIN ? TIR_REDUCE_MIN : b->id == B_REDUCE_ABSMAX ? TIR_REDUCE_ABSMAX
                      : TIR_REDUCE_ABSSUM;
    st->u.reduce.src = from;
    st->u.reduce.dst = into;
    st->u.reduce.dim = (int)dim;
    st->u.reduce.clear = clear;
    sema_emit(S, st);
    if (ds == TIR_SCOPE_SHARED) {
        tir_stmt *cp = tlc_new_tile_op(S->arena, TS_COPY, loc);
        cp->u.copy.src = into;
        cp->u.copy.dst = dst.r;
        sema_emit(S, cp);
    }
}

/* Does `e` denote a tile (a non-scalar buffer or a slice of one)? */
static bool is_tile_expr(sema *S, const ast_expr *e) {
    const ast_expr *base = e->kind == AE_SUBSCRIPT ? e->u.sub.value : e;
    if (base->kind != AE_NAME) return false;
    sym *s = sema_lookup(S, base->u.name);
    if (!s || s->kind != SYM_BUFFER || s->buf->scope == TIR_SCOPE_VAR) return false;
    if (e->kind == AE_NAME) return true;
    for (int i = 0; i < e->u.sub.nindex; i++)
        if (e->u.sub.index[i]->kind == AE_SLICE) return true;
    return false;
}

/* prev_name: the name `old = atomic_add(..., return_prev=True)` assigns
 * (NULL: a statement). Returns the buffer that receives the previous value
 * (NULL: none, or an error). */
static tir_buffer *op_atomic_add(sema *S, const sema_args *a, tlc_loc loc, const char *prev_name) {
    bool return_prev = false, use_tma; /* TileLang's use_tma=: how the adds are issued, which tlc decides */
    if (a->arg[2] && !sema_eval_const_bool(S, a->arg[2], "return_prev", &return_prev)) return NULL;
    if (a->arg[3] && !sema_eval_const_bool(S, a->arg[3], "use_tma", &use_tma)) return NULL;
    if (return_prev && !prev_name) {
        tlc_error(S->diag, a->arg[2]->loc, "atomic_add(..., return_prev=True) returns the value before the add: assign "
                                           "it to a name (old = atomic_add(...))");
        return NULL;
    }
    if (!return_prev && prev_name) {
        tlc_error(S->diag, loc, "atomic_add returns a value only with return_prev=True");
        return NULL;
    }
    if (return_prev && !sema_check_not_in_parallel(S, loc, "atomic_add(..., return_prev=True)")) return NULL;
    pregion dst;
    if (!region_of(S, a->arg[0], &dst, "atomic_add", "the destination")) return NULL;
    tir_scope ds = dst.r.buf->scope;
    if (ds != TIR_SCOPE_GLOBAL && ds != TIR_SCOPE_SHARED) {
        tlc_error(S->diag, a->arg[0]->loc, "atomic_add: the destination must be global or shared memory, but '%s' is %s",
                  dst.r.buf->name, sema_buffer_desc(dst.r.buf));
        sema_note_decl(S, dst.r.buf);
        return NULL;
    }
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_ATOMIC_ADD, loc);
    if (is_tile_expr(S, a->arg[1])) {
        if (return_prev) {
            tlc_error(S->diag, a->arg[1]->loc, "atomic_add(..., return_prev=True) adds a scalar to one element");
            return NULL;
        }
        pregion src;
        if (!region_of(S, a->arg[1], &src, "atomic_add", "the value")) return NULL;

        if (!pair_regions(S, &dst, &src, "atomic_add")) return NULL;
        bool ok = check_bounds(S, &dst);
        ok = check_bounds(S, &src) && ok;
        if (!ok || !check_same_shape(S, &src, &dst, "atomic_add", "value", "destination")) return NULL;
        if (sema_global_layout_copy(S, &src.r, &dst.r, true, loc)) return NULL;
        st->u.atomic.dst = dst.r;
        st->u.atomic.src = src.r;
    } else {
        tir_expr *v = sema_eval_scalar(S, a->arg[1]);
        if (!v) return NULL;
        if (!dst.point && dst.r.rank > 0) {
            tlc_error(S->diag, a->arg[0]->loc, "atomic_add with a scalar value needs an element destination such as %s[i, j]",
                      dst.r.buf->name);
            return NULL;
        }
        dst.point = false;
        if (!check_bounds(S, &dst)) return NULL;
        dst.r.start = sema_global_layout_index(S, dst.r.buf, dst.r.start, a->arg[0]->loc);
        st->u.atomic.dst = dst.r;
        st->u.atomic.value = tir_cast(S->arena, v, dst.r.buf->dtype, loc);
    }
    tir_buffer *prev = NULL;
    if (return_prev) {
        tir_dtype t = dst.r.buf->dtype;
        if (t != TIR_I32 && t != TIR_F32) {
            tlc_error(S->diag, a->arg[0]->loc, "atomic_add(..., return_prev=True) needs an int32 or float32 element, "
                      "but '%s' is %s of %s", dst.r.buf->name, sema_buffer_desc(dst.r.buf), tir_dtype_name(t));
            sema_note_decl(S, dst.r.buf);
            return NULL;
        }
        prev = sema_new_buffer(S, tlc_arena_printf(S->arena, "%s.prev", prev_name), TIR_SCOPE_VAR, t, 0, loc);
        tir_stmt *al = tir_new_stmt(S->arena, TS_ALLOC, loc);
        al->u.alloc.buf = prev;
        sema_emit(S, al);
        st->u.atomic.prev = (tir_region){.buf = prev, .rank = 0, .loc = loc};
    }
    sema_emit(S, st);
    return prev;
}

/* atomic_addx2 / atomic_addx4(dst[.., j], src[.., k]): the element add
 * of dst[.., j + e] and src[.., k + e] for e < n, each its own
 * atomic_add (the last dims' next elements). */
static void op_atomic_add_vector(sema *S, const sema_args *a, int n, tlc_loc loc, const char *name) {
    int before = S->cur ? S->cur->len : 0;
    op_atomic_add(S, a, loc, NULL);
    if (!S->cur || S->cur->len != before + 1) return;
    tir_stmt *st = S->cur->items[before];
    const tir_expr *v = st->u.atomic.value;
    while (v && v->kind == TE_CAST) v = v->u.cast.a;
    if (st->kind != TS_ATOMIC_ADD || !v || v->kind != TE_LOAD || !v->u.load.buf->rank || !st->u.atomic.dst.rank) {
        tlc_error(S->diag, loc, "%s adds %d consecutive elements: its destination and value are elements of buffers "
                  "(dst[i, j], src[i, k])", name, n);
        return;
    }
    for (int e = 1; e < n; e++) {
        tir_stmt *c = tlc_new_tile_op(S->arena, TS_ATOMIC_ADD, loc);
        c->u.atomic = st->u.atomic;
        int rd = st->u.atomic.dst.rank, rv = v->u.load.buf->rank;
        tir_expr **ds = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)rd);
        tir_expr **vs = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)rv);
        memcpy(ds, st->u.atomic.dst.start, sizeof *ds * (size_t)rd);
        memcpy(vs, v->u.load.idx, sizeof *vs * (size_t)rv);
        ds[rd - 1] = tir_binary(S->arena, TB_ADD, ds[rd - 1], tir_int(S->arena, e, loc), loc);
        vs[rv - 1] = tir_binary(S->arena, TB_ADD, vs[rv - 1], tir_int(S->arena, e, loc), loc);
        c->u.atomic.dst.start = ds;
        c->u.atomic.value = tir_cast(S->arena, tir_load(S->arena, v->u.load.buf, vs, loc), st->u.atomic.dst.buf->dtype, loc);
        sema_emit(S, c);
    }
}

static void op_use_swizzle(sema *S, const sema_args *a) {
    bool enable = true; /* TileLang's enable=: a compile-time switch */
    if (a->arg[2] && (!sema_eval_const_bool(S, a->arg[2], "use_swizzle's enable", &enable) || !enable)) return;
    int64_t panel;
    if (!sema_eval_const_int(S, a->arg[0], "panel_size", &panel)) return;
    if (panel < 1 || panel > 65535) {
        tlc_error(S->diag, a->arg[0]->loc, "use_swizzle: panel_size must be between 1 and 65535, got %lld", (long long)panel);
        return;
    }
    bool col = false;
    if (a->arg[1]) {
        sv o = sema_eval(S, a->arg[1]);
        if (o.kind == SV_ERROR) return;
        if (o.kind != SV_STRING || (strcmp(o.u.str, "row") != 0 && strcmp(o.u.str, "col") != 0)) {
            tlc_error(S->diag, a->arg[1]->loc, "use_swizzle: order must be \"row\" or \"col\"");
            return;
        }
        col = strcmp(o.u.str, "col") == 0;
    }
    if (S->swizzle_loc.line > 0) {
        tlc_error(S->diag, a->arg[0]->loc, "use_swizzle is given twice in one kernel");
        tlc_note(S->diag, S->swizzle_loc, "the first use_swizzle is here");
        return;
    }
    S->swizzle_loc = a->arg[0]->loc;
    S->k->use_swizzle = true;
    S->k->swizzle_panel = (int)panel;
    S->k->swizzle_col = col;
}

static void op_annotate_layout(sema *S, const sema_args *a) {
    const ast_expr *d = a->arg[0];
    if (d->kind != AE_DICT) {
        tlc_error(S->diag, d->loc, "annotate_layout expects a dict {buffer: make_swizzled_layout(buffer), ...}");
        return;
    }
    for (int i = 0; i < d->u.dict.n; i++) {
        sv key = sema_eval(S, d->u.dict.keys[i]);
        sv val = sema_eval(S, d->u.dict.values[i]);
        if (key.kind == SV_ERROR || val.kind == SV_ERROR) continue;
        if (key.kind != SV_BUFFER) {
            tlc_error(S->diag, d->u.dict.keys[i]->loc, "annotate_layout: the key must be a shared buffer");
            continue;
        }
        tir_buffer *b = key.u.buf;
        if (b->scope == TIR_SCOPE_GLOBAL) {
            sema_annotate_global_layout(S, b, val, d->u.dict.keys[i], d->u.dict.values[i]);
            continue;
        }
        if (val.kind == SV_INDEX_MAP) {
            tlc_error(S->diag, d->u.dict.values[i]->loc, "annotate_layout: a T.Layout is supported on global tensors; "
                      "'%s' is %s (tlc infers the layouts of shared and fragment buffers)", b->name,
                      sema_buffer_desc(b));
            sema_note_decl(S, b);
            continue;
        }
        if (b->scope != TIR_SCOPE_SHARED) {
            tlc_error(S->diag, d->u.dict.keys[i]->loc, "annotate_layout: '%s' must be a shared buffer, but it is %s",
                      b->name, sema_buffer_desc(b));
            sema_note_decl(S, b);
            continue;
        }
        if (val.kind != SV_LAYOUT) {
            tlc_error(S->diag, d->u.dict.values[i]->loc, "annotate_layout: the value must be make_swizzled_layout(%s)", b->name);
            continue;
        }
        if (val.u.buf != b) {
            tlc_error(S->diag, d->u.dict.values[i]->loc, "annotate_layout: the layout of '%s' is made from '%s'",
                      b->name, val.u.buf->name);
            continue;
        }
        b->layout_hint = TIR_LAYOUT_HINT_SWIZZLED;
        b->layout_hint_loc = d->u.dict.values[i]->loc;
    }
}

/* sync_threads(barrier_id, arrive_count), TileLang's tvm_storage_sync:
 * without a count (or with the block's) every thread meets at the block's
 * barrier; with fewer, that many threads (whole warps) meet at named
 * barrier 1-15 (0 is the block's, which tlc's own barriers use), and only
 * they may reach it: thread-indexed code holds it under a condition. */
static void op_sync_threads(sema *S, const sema_args *a, tlc_loc loc) {
    int64_t id = 0, count = 0;
    if (a->arg[0] && !sema_eval_const_int(S, a->arg[0], "the barrier id", &id)) return;
    if (a->arg[1] && !sema_eval_const_int(S, a->arg[1], "the barrier's thread count", &count)) return;
    int threads = S->k->threads;
    if (a->arg[1] && count != threads) {
        if (count < 32 || count > threads || count % 32) {
            tlc_error(S->diag, a->arg[1]->loc, "sync_threads: %lld threads cannot meet at a barrier of this %d-thread "
                      "block: give a multiple of 32 from 32 to %d", (long long)count, threads, threads);
            return;
        }
        if (id < 1 || id > 15) {
            tlc_error(S->diag, a->arg[0] ? a->arg[0]->loc : loc, "sync_threads: a barrier of %lld of the block's %d "
                      "threads needs a barrier id from 1 to 15 (0 is the whole block's), got %lld", (long long)count,
                      threads, (long long)id);
            return;
        }
    } else {
        if (a->arg[0] && (id < 0 || id > 15)) {
            tlc_error(S->diag, a->arg[0]->loc, "sync_threads: barrier ids run from 0 to 15, got %lld", (long long)id);
            return;
        }
        id = count = 0; /* every thread: the block's barrier, whichever id */
    }
    S->k->program_barriers = true;
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_SYNC_THREADS, loc);
    st->u.sync.id = (int)id;
    st->u.sync.count = (int)count;
    sema_emit(S, st);
}

tir_buffer *sema_atomic_add_prev(sema *S, const builtin_spec *b, const ast_expr *call, const char *name) {
    sema_args a;
    if (!sema_bind_args(S, b, call, &a)) return NULL;
    return op_atomic_add(S, &a, call->loc, name);
}

/* An operand naming a buffer whose declaration was reported (its symbol
 * holds an error): the op is skipped, so that no second error follows
 * from the first. */
static bool errored_operand(sema *S, const ast_expr *e) {
    const ast_expr *base = e && e->kind == AE_SUBSCRIPT ? e->u.sub.value : e;
    sym *s = base && base->kind == AE_NAME ? sema_lookup(S, base->u.name) : NULL;
    return s && s->kind == SYM_CONST && s->value.kind == SV_ERROR;
}

void sema_tile_op(sema *S, const builtin_spec *b, const ast_expr *call) {
    /* atomic_add of one element is a scalar operation, fine per element. */
    if (b->id != B_ATOMIC_ADD && b->id != B_ATOMIC_ADDX2 && b->id != B_ATOMIC_ADDX4) {
        char what[80];
        snprintf(what, sizeof what, "'%s'", b->name);
        if (!sema_check_not_in_parallel(S, call->loc, what)) return;
    }
    sema_args a;
    if (!sema_bind_args(S, b, call, &a)) return;
    for (int i = 0; i < SEMA_MAX_ARGS; i++)
        if (errored_operand(S, a.arg[i])) return;
    switch (b->id) {
    case B_COPY: op_copy(S, &a, call->loc); break;
    case B_FILL: case B_CLEAR: op_fill(S, b, &a, call->loc); break;
    case B_GEMM: op_gemm(S, &a, call->loc, false); break;
    case B_WGMMA_GEMM: op_gemm(S, &a, call->loc, true); break;
    case B_WAIT_WGMMA: sema_wait_wgmma(S, &a, call->loc); break;
    case B_PTX_CP_ASYNC: sema_ptx_cp_async(S, &a, call->loc); break;
    case B_CP_ASYNC_BARRIER: sema_cp_async_barrier(S, &a, call->loc); break;
    case B_FENCE_PROXY_ASYNC: sema_emit(S, tlc_new_tile_op(S->arena, TS_FENCE_PROXY_ASYNC, call->loc)); break;
    case B_REDUCE_MAX: case B_REDUCE_SUM: case B_REDUCE_MIN: case B_REDUCE_ABSMAX: case B_REDUCE_ABSSUM:
        op_reduce(S, b, &a, call->loc);
        break;
    case B_ATOMIC_ADD: op_atomic_add(S, &a, call->loc, NULL); break;
    case B_ATOMIC_ADDX2: case B_ATOMIC_ADDX4:
        op_atomic_add_vector(S, &a, b->id == B_ATOMIC_ADDX2 ? 2 : 4, call->loc, b->name);
        break;
    case B_USE_SWIZZLE: op_use_swizzle(S, &a); break;
    case B_PDL_SYNC:
        /* the kernel is launched as a dependent; the wait stands here */
        S->k->pdl_wait = true;
        sema_emit(S, tlc_new_tile_op(S->arena, TS_GRID_DEPENDENCY_WAIT, call->loc));
        break;
    case B_PDL_TRIGGER: sema_emit(S, tlc_new_tile_op(S->arena, TS_LAUNCH_DEPENDENTS, call->loc)); break;
    case B_KEEP_REGS: S->k->keep_regs = true; break;
    case B_PREFETCH: op_prefetch(S, &a, call->loc); break;
    case B_CUMSUM: op_cumsum(S, &a, call->loc); break;
    case B_IM2COL: sema_im2col(S, &a, call->loc); break;
    case B_ANNOTATE_LAYOUT: op_annotate_layout(S, &a); break;
    case B_BARRIER_WAIT: case B_BARRIER_ARRIVE: sema_mbarrier_op(S, b, &a, call->loc); break;
    case B_TMA_COPY: {
        /* in program order the load is complete when the copy is done;
         * where the ranges run as written, its bytes complete the barrier's
         * phase (the copy keeps it) */
        int number;
        tir_expr *index;
        if (!sema_tma_copy_barrier(S, &a, &number, &index)) break;
        tir_stmt *cp = op_copy(S, &a, call->loc);
        if (cp) {
            cp->u.copy.tma_barrier = number;
            cp->u.copy.tma_index = index;
        }
        break;
    }
    case B_FINALIZE_REDUCER: sema_finalize_reducer(S, &a, call->loc); break;
    case B_SYNC_THREADS: op_sync_threads(S, &a, call->loc); break;
    case B_SYNC_GRID:
        /* a kernel with one is not warp-specialized: its warpgroups would
         * not all reach it (sema_kernel_with checks where it stands) */
        S->k->program_barriers = true;
        sema_emit(S, tlc_new_tile_op(S->arena, TS_SYNC_GRID, call->loc));
        break;
    case B_ASYNC_GROUP:
        /* tlc's loads complete in program order (its own cp.async is planned
         * with its own waits), so a commit or a wait has nothing to order */
        break;
    case B_SET_MAX_NREG: sema_set_max_nreg(S, b, &a, call->loc); break;
    case B_HINT_MAX_NREG:
        tlc_warning(S->diag, call->loc, "'T.%s' is ignored: tlc sets the registers of the warpgroups it "
                    "specializes", b->name);
        break;
    case B_WS: tlc_error(S->diag, call->loc, "T.ws(...) opens a scope: write 'with T.ws(...):'"); break;
    case B_ATTR: tlc_error(S->diag, call->loc, "T.attr(...) opens a scope: write 'with T.attr(...):'"); break;
    default: tlc_error(S->diag, call->loc, "'%s' is not a statement", b->name); break;
    }
}
