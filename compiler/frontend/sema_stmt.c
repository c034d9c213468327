/* Statements: assignments (allocations, lets, reassignments, element
 * stores), loops, if / else, and the statement forms sema rejects with a
 * clear message (while, break, return, nested def, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sema_internal.h"

enum { MAX_BLOCK_DEPTH = 100 };

/* The symbol an assignment to `name` would change: a module-level name is
 * not one (a kernel's assignment makes a local of that name, as in Python). */
static sym *local_symbol(sema *S, const char *name) {
    sym *s = sema_lookup(S, name);
    if (s && s->kind == SYM_CONST && (s->origin == CONST_MODULE || s->origin == CONST_PYTHON)) return NULL;
    /* Python rebinds a factory's names: `dtype = T.float16` over a parameter */
    if (s && S->python && !S->in_kernel && s->kind == SYM_CONST && s->origin != CONST_LOOP) return NULL;
    return s;
}

void sema_emit(sema *S, tir_stmt *s) {
    if (s && S->cur) tlc_ptrvec_push(S->cur, s);
}

void sema_block(sema *S, const ast_block *b, tlc_ptrvec *out) {
    if (S->depth >= MAX_BLOCK_DEPTH) {
        if (b->n > 0) tlc_error(S->diag, b->stmts[0]->loc, "blocks are nested too deeply");
        return;
    }
    S->depth++;
    tlc_ptrvec *saved = S->cur;
    S->cur = out;
    sema_push_scope(S);
    sema_stmts(S, b, 0);
    sema_pop_scope(S);
    S->cur = saved;
    S->depth--;
}

tir_stmt *sema_block_stmt(sema *S, const ast_block *b, tlc_loc loc) {
    tlc_ptrvec v;
    memset(&v, 0, sizeof v);
    sema_block(S, b, &v);
    tir_stmt *seq = tir_new_stmt(S->arena, TS_SEQ, loc);
    seq->u.seq.n = v.len;
    seq->u.seq.stmts = (tir_stmt **)tlc_ptrvec_freeze(&v, S->arena);
    return seq;
}

/* ---------------- assignment counting ---------------- */

static void count_target(sema *S, const ast_expr *t, int by) {
    if (!t) return;
    if (t->kind == AE_NAME) {
        int *c = sema_map_get(&S->assign_count, t->u.name);
        sema_map_put(&S->assign_count, t->u.name, (c ? *c : 0) + by);
    } else if (t->kind == AE_TUPLE || t->kind == AE_LIST) {
        for (int i = 0; i < t->u.seq.n; i++) count_target(S, t->u.seq.items[i], by);
    }
}

static void count_block(sema *S, const ast_block *b, int depth) {
    if (depth > MAX_BLOCK_DEPTH) return;
    for (int i = 0; i < b->n; i++) {
        const ast_stmt *s = b->stmts[i];
        switch (s->kind) {
        case AS_ASSIGN: count_target(S, s->u.assign.target, 1); break;
        case AS_ANNASSIGN: count_target(S, s->u.ann.target, 1); break;
        case AS_AUGASSIGN: count_target(S, s->u.aug.target, 2); break;
        case AS_FOR: count_block(S, &s->u.for_.body, depth + 1); break;
        case AS_WHILE: count_block(S, &s->u.while_.body, depth + 1); break;
        case AS_IF:
            count_block(S, &s->u.if_.then, depth + 1);
            count_block(S, &s->u.if_.els, depth + 1);
            break;
        case AS_WITH: count_block(S, &s->u.with.body, depth + 1); break;
        default: break;
        }
    }
}

void sema_count_assignments(sema *S, const ast_block *b) { count_block(S, b, 0); }

static int assignments_of(sema *S, const char *name) {
    int *c = sema_map_get(&S->assign_count, name);
    return c ? *c : 0;
}

/* ---------------- allocation ---------------- */

bool sema_check_not_in_parallel(sema *S, tlc_loc at, const char *what) {
    if (S->parallel_loc.line <= 0) return true;
    tlc_error(S->diag, at, "%s cannot appear inside a Parallel loop: its body is elementwise "
              "(use element accesses such as A[i, j] there)", what);
    tlc_note(S->diag, S->parallel_loc, "inside this Parallel loop");
    return false;
}


/* Whatever layout inference picks, a thread holds at least elements /
 * threads of a fragment (4-byte registers, two 16-bit elements to one);
 * lowering allows 256 registers (the hardware's 255 plus spills, at most),
 * so a bigger one is refused in sema, before any work per element or per
 * unrolled slot. *regs: the registers a thread needs at least. */
bool sema_fragment_fits(sema *S, const tir_buffer *b, int64_t *regs) {
    int64_t elems = tir_buffer_elems(b), threads = S->k && S->k->threads > 0 ? S->k->threads : 1;
    int64_t per_reg = tir_dtype_bytes(b->dtype) >= 4 ? 1 : 4 / tir_dtype_bytes(b->dtype);
    if (elems < 0) elems = INT64_MAX; /* past int64 */
    *regs = elems / (threads * per_reg) + (elems % (threads * per_reg) != 0);
    return *regs <= TLC_FRAGMENT_MAX_REGS;
}

/* TileLang's scope argument of an alloc, which decides where the buffer
 * lives whichever alloc names it (TileLang's allocs are one buffer
 * allocation with a default scope): "shared" / "shared.dyn" (shared
 * memory), "local.fragment" (a fragment), "local" (a thread's own buffer,
 * alloc_local). */
static bool alloc_scope(sema *S, const builtin_spec *b, const ast_expr *e, tir_scope *sc) {
    sv v = sema_eval(S, e);
    if (v.kind == SV_ERROR) return false;
    const char *s = v.kind == SV_STRING ? v.u.str : NULL;
    if (s && (!strcmp(s, "shared") || !strcmp(s, "shared.dyn"))) {
        *sc = TIR_SCOPE_SHARED;
        return true;
    }
    if (s && !strcmp(s, "local.fragment")) {
        *sc = TIR_SCOPE_FRAGMENT;
        return true;
    }
    if (s && !strcmp(s, "local")) {
        *sc = TIR_SCOPE_LOCAL;
        return true;
    }
    tlc_error(S->diag, e->loc, "scope of %s: tlc takes \"shared\" or \"shared.dyn\" (shared memory, placed by tlc), "
              "\"local.fragment\" (a fragment) or \"local\" (a thread's own buffer)", b->name);
    return false;
}

static void assign_name(sema *S, const ast_expr *target, const ast_expr *value, bool has_ann, tir_dtype ann,
                        tlc_loc loc);

/* Whether the element counts of two shapes are the same product of the
 * same factors (constants multiplied out, symbolic dims as themselves):
 * KH * KW * C * F against a [K, K, C, F] tensor's dims. */
static int product_factors(const tir_expr *e, const tir_var **vars, int n, int max, int64_t *c) {
    if (n < 0) return n;
    int64_t v;
    if (tir_expr_const_int(e, &v)) return __builtin_mul_overflow(*c, v, c) ? -1 : n;
    if (e->kind == TE_CAST && !e->u.cast.bits) return product_factors(e->u.cast.a, vars, n, max, c);
    if (e->kind == TE_BINARY && e->u.bin.op == TB_MUL)
        return product_factors(e->u.bin.b, vars, product_factors(e->u.bin.a, vars, n, max, c), max, c);
    if (e->kind != TE_VAR || n >= max) return -1;
    vars[n] = e->u.var;
    return n + 1;
}

static int var_order(const void *x, const void *y) {
    const tir_var *a = *(const tir_var *const *)x, *b = *(const tir_var *const *)y;
    return a->id < b->id ? -1 : a->id > b->id;
}

static bool same_elems(tir_expr *const *d0, int r0, tir_expr *const *d1, int r1) {
    enum { MAX = 32 };
    const tir_var *v0[MAX], *v1[MAX];
    int64_t c0 = 1, c1 = 1;
    int n0 = 0, n1 = 0;
    for (int i = 0; i < r0; i++) n0 = product_factors(d0[i], v0, n0, MAX, &c0);
    for (int i = 0; i < r1; i++) n1 = product_factors(d1[i], v1, n1, MAX, &c1);
    if (n0 < 0 || n1 < 0 || n0 != n1 || c0 != c1) return false;
    qsort(v0, (size_t)n0, sizeof v0[0], var_order);
    qsort(v1, (size_t)n1, sizeof v1[0], var_order);
    for (int i = 0; i < n0; i++)
        if (v0[i] != v1[i]) return false;
    return true;
}

/* `v = T.reshape(frag, shape)` (or T.view(frag, shape)): a buffer of the
 * new shape over the fragment's elements in row-major order, the same
 * registers (tir_buffer.view_of). Fragments only: a shared buffer's
 * layout is tlc's choice (swizzles) and has no row-major order to keep.
 * Of a global tensor (also `T.Tensor(shape, dtype, X.data)`), the view
 * reads and writes X's memory, row-major in the new shape, which may be
 * symbolic; its element count must be X's (checked at launch where
 * sizes decide it). `data` is the T.Tensor form's X.data (NULL else). */
static void view_stmt(sema *S, const ast_expr *target, const ast_expr *call, const builtin_spec *b,
                      const ast_expr *source, const ast_expr *shape, const ast_expr *dtype) {
    const char *name = target->u.name;
    sv v = sema_eval(S, source);
    tir_buffer *src = v.kind == SV_BUFFER ? v.u.buf : NULL;
    tir_expr **dims;
    int rank;
    tir_dtype t;
    bool ok = src != NULL;
    if (v.kind != SV_ERROR && !src)
        tlc_error(S->diag, source->loc, "'%s' takes a buffer", b->name);
    bool global = src && src->scope == TIR_SCOPE_GLOBAL;
    if (src && src->scope != TIR_SCOPE_FRAGMENT && !global) {
        tlc_error(S->diag, source->loc, "'%s' of %s buffer '%s': tlc gives fragments and global tensors other shapes "
                  "only (a shared buffer's layout is tlc's choice and keeps no row-major order); copy the data into a "
                  "buffer of the new shape", b->name, tir_scope_name(src->scope), src->name);
        ok = false;
    }
    if (global && sema_has_global_layout(S, src)) {
        tlc_error(S->diag, source->loc, "'%s' of '%s', which has a layout (annotate_layout with T.Layout): a view is "
                  "row-major in the tensor's memory", b->name, src->name);
        ok = false;
    }
    ok = sema_eval_shape(S, shape, global ? SEMA_SHAPE_SIZES : 0, &dims, &rank) && ok;
    if (ok && dtype && sema_eval_dtype(S, dtype, &t) && t != src->dtype) {
        tlc_error(S->diag, dtype->loc, "'%s' of '%s' as %s: tlc keeps a %s's dtype (%s) in another shape", b->name,
                  src->name, tir_dtype_name(t), global ? "tensor" : "fragment", tir_dtype_name(src->dtype));
        ok = false;
    }
    if (ok && !global) {
        int64_t n = 1, e;
        for (int d = 0; d < rank; d++) n = n >= 0 && tir_expr_const_int(dims[d], &e) ? n * e : -1;
        if (rank > 4 || n != tir_buffer_elems(src)) {
            tlc_error(S->diag, call->loc, "'%s' of '%s' (%lld elements) to a shape of %lld elements%s", b->name,
                      src->name, (long long)tir_buffer_elems(src), (long long)n,
                      rank > 4 ? " and more than 4 dims" : "");
            ok = false;
        }
    } else if (ok) {
        const tir_buffer *base = tir_buffer_storage(src);
        int64_t n = tir_buffer_elems(base), m = 1, e;
        for (int d = 0; d < rank; d++) m = m >= 0 && tir_expr_const_int(dims[d], &e) ? m * e : -1;
        if (n >= 0 && m >= 0) {
            if (n != m) {
                tlc_error(S->diag, call->loc, "'%s' of '%s' (%lld elements) to a shape of %lld elements", b->name,
                          base->name, (long long)n, (long long)m);
                ok = false;
            }
        } else if (!same_elems(dims, rank, base->shape, base->rank)) {
            /* the sizes decide it: the runtime checks before the launch */
            tir_expr *vn = dims[0], *bn = base->shape[0];
            for (int d = 1; d < rank; d++) vn = sema_binary(S, TB_MUL, vn, dims[d], call->loc);
            for (int d = 1; d < base->rank; d++) bn = sema_binary(S, TB_MUL, bn, base->shape[d], call->loc);
            tir_expr *eq = vn && bn ? sema_binary(S, TB_EQ, vn, bn, call->loc) : NULL;
            if (eq) sema_add_launch_check(S, eq, call->loc);
            else ok = false;
        }
    }
    if (!ok) {
        sema_declare_error(S, name, target->loc);
        return;
    }
    tir_buffer *buf = sema_new_buffer(S, name, src->scope, src->dtype, rank, target->loc);
    buf->shape = dims;
    buf->view_of = tir_buffer_storage(src);
    tir_stmt *st = tir_new_stmt(S->arena, TS_ALLOC, call->loc);
    st->u.alloc.buf = buf;
    sema_emit(S, st);
    sym *s = sema_declare(S, name, SYM_BUFFER, target->loc);
    s->buf = buf;
}

static void reshape_stmt(sema *S, const ast_expr *target, const ast_expr *call, const builtin_spec *b) {
    sema_args a;
    if (!sema_bind_args(S, b, call, &a)) {
        sema_declare_error(S, target->u.name, target->loc);
        return;
    }
    view_stmt(S, target, call, b, a.arg[0], a.arg[1], a.arg[2]);
}

/* `v = T.Tensor(shape, dtype, X.data)` in a kernel: TileLang's view of
 * tensor X under another shape. */
static void tensor_view_stmt(sema *S, const ast_expr *target, const ast_expr *call, const builtin_spec *b) {
    sema_args a;
    if (!sema_bind_args(S, b, call, &a)) {
        sema_declare_error(S, target->u.name, target->loc);
        return;
    }
    const ast_expr *data = a.arg[2];
    if (!data || data->kind != AE_ATTR || strcmp(data->u.attr.name, "data") != 0) {
        tlc_error(S->diag, data ? data->loc : call->loc, "'%s(shape, dtype, X.data)' in a kernel is a view of tensor "
                  "X: its third argument must be a tensor's '.data'", b->name);
        sema_declare_error(S, target->u.name, target->loc);
        return;
    }
    view_stmt(S, target, call, b, data->u.attr.value, a.arg[0], a.arg[1]);
}

static void alloc_stmt(sema *S, const ast_expr *target, const ast_expr *call, const builtin_spec *b) {
    /* `v = T.alloc_var(dtype[, init])` in a Parallel loop's body: a scalar of
     * each iteration's own, as `v: dtype = init` (0 without one) */
    if (b->id == B_ALLOC_VAR && S->parallel_loc.line > 0 && target->kind == AE_NAME) {
        sema_args a;
        tir_dtype t;
        if (!sema_bind_args(S, b, call, &a) || !sema_eval_dtype(S, a.arg[0], &t)) {
            sema_declare_error(S, target->u.name, target->loc);
            return;
        }
        const ast_expr *init = a.arg[1];
        if (!init) {
            ast_expr *zero = ast_new_expr(S->arena, AE_INT, call->loc);
            zero->u.ival = 0;
            init = zero;
        }
        assign_name(S, target, init, true, t, call->loc);
        return;
    }
    if (!sema_check_not_in_parallel(S, call->loc, "an allocation")) {
        if (target->kind == AE_NAME) sema_declare_error(S, target->u.name, target->loc);
        return;
    }
    if (b->id == B_RESHAPE) {
        if (!S->in_kernel) tlc_error(S->diag, call->loc, "'%s' must be inside 'with Kernel(...)'", b->name);
        else if (target->kind != AE_NAME)
            tlc_error(S->diag, target->loc, "the result of '%s' must be assigned to a name", b->name);
        else if (local_symbol(S, target->u.name))
            tlc_error(S->diag, target->loc, "'%s' is already defined", target->u.name);
        else reshape_stmt(S, target, call, b);
        return;
    }
    bool workspace = !S->in_kernel && S->fn_mode && b->id == B_ALLOC_GLOBAL;
    if (!S->in_kernel && !workspace) {
        tlc_error(S->diag, call->loc, "'%s' must be inside 'with Kernel(...)'", b->name);
        return;
    }
    if (target->kind != AE_NAME) {
        tlc_error(S->diag, target->loc, "the result of '%s' must be assigned to a name", b->name);
        return;
    }
    sym *prev = local_symbol(S, target->u.name);
    if (prev) {
        tlc_error(S->diag, target->loc, "'%s' is already defined", target->u.name);
        sema_note_sym(S, prev);
        return;
    }
    sema_args a;
    if (!sema_bind_args(S, b, call, &a)) {
        sema_declare_error(S, target->u.name, target->loc);
        return;
    }
    tir_buffer *buf;
    tir_expr *init = NULL;
    if (b->id == B_ALLOC_VAR) {
        tir_dtype t;
        bool ok = sema_eval_dtype(S, a.arg[0], &t);
        if (a.arg[1]) {
            init = sema_eval_scalar(S, a.arg[1]);
            if (!init) ok = false;
        }
        if (!ok) {
            sema_declare_error(S, target->u.name, target->loc);
            return;
        }
        buf = sema_new_buffer(S, target->u.name, TIR_SCOPE_VAR, t, 0, target->loc);
    } else {
        tir_expr **dims;
        int rank;
        tir_dtype t;
        bool ok = sema_eval_shape(S, a.arg[0], b->id == B_ALLOC_GLOBAL, &dims, &rank);
        ok = sema_eval_dtype(S, a.arg[1], &t) && ok;
        if (!ok) {
            sema_declare_error(S, target->u.name, target->loc);
            return;
        }
        tir_scope sc = b->id == B_ALLOC_SHARED ? TIR_SCOPE_SHARED
                     : b->id == B_ALLOC_FRAGMENT || b->id == B_ALLOC_REDUCER ? TIR_SCOPE_FRAGMENT
                     : b->id == B_ALLOC_LOCAL ? TIR_SCOPE_LOCAL : TIR_SCOPE_GLOBAL;
        if (b->id != B_ALLOC_REDUCER && a.arg[2] && !alloc_scope(S, b, a.arg[2], &sc)) {
            sema_declare_error(S, target->u.name, target->loc);
            return;
        }
        buf = sema_new_buffer(S, target->u.name, sc, t, rank, target->loc);
        buf->shape = dims;
        buf->is_workspace = b->id == B_ALLOC_GLOBAL;
        if (workspace) tlc_ptrvec_push(&S->fn_workspaces, buf);
        int64_t elems = tir_buffer_elems(buf), threads = S->k && S->k->threads > 0 ? S->k->threads : 1, regs;
        if (sc == TIR_SCOPE_FRAGMENT && !sema_fragment_fits(S, buf, &regs)) {
            tlc_error(S->diag, call->loc,
                      "fragment '%s' has %lld elements: at least %lld registers per thread with %lld threads "
                      "(at most %d); use a smaller tile or more threads",
                      target->u.name, (long long)(elems < 0 ? INT64_MAX : elems), (long long)regs, (long long)threads,
                      TLC_FRAGMENT_MAX_REGS);
            sema_declare_error(S, target->u.name, target->loc);
            return;
        }
        if (sc == TIR_SCOPE_LOCAL && (elems < 1 || elems > TLC_LOCAL_MAX_ELEMS)) {
            tlc_error(S->diag, call->loc, "local buffer '%s' has more than %d elements, more than one thread's "
                      "registers hold", target->u.name, TLC_LOCAL_MAX_ELEMS);
            sema_declare_error(S, target->u.name, target->loc);
            return;
        }
    }
    if (b->id == B_ALLOC_REDUCER) sema_reducer_alloc(S, buf, a.arg[2]);
    tir_stmt *st = tir_new_stmt(S->arena, TS_ALLOC, call->loc);
    st->u.alloc.buf = buf;
    sema_emit(S, st);
    sym *s = sema_declare(S, target->u.name, SYM_BUFFER, target->loc);
    s->buf = buf;
    if (init) {
        tir_stmt *w = tir_new_stmt(S->arena, TS_STORE, call->loc);
        w->u.store.buf = buf;
        w->u.store.value = tir_cast(S->arena, init, buf->dtype, call->loc);
        sema_emit(S, w);
    }
}

/* ---------------- assignment ---------------- */

static void cannot_assign(sema *S, const sym *s, const ast_expr *target) {
    const char *name = s->name;
    if (s->kind == SYM_CONST && s->value.kind == SV_ERROR) return; /* already diagnosed */
    if (s->kind == SYM_CONST) {
        tlc_error(S->diag, target->loc, "cannot assign to %s '%s'",
                  s->origin == CONST_JIT ? "compile-time parameter" : s->origin == CONST_MODULE ? "module constant"
                  : s->origin == CONST_LOOP ? "loop variable" : "constant",
                  name);
    } else if (s->kind == SYM_VAR) {
        const char *what = "variable";
        switch (s->var->kind) {
        case TV_LOOP: what = "loop variable"; break;
        case TV_BLOCK_IDX: what = "block index"; break;
        case TV_SYM_DIM: what = "symbolic dimension"; break;
        case TV_SCALAR_PARAM: what = "scalar parameter"; break;
        case TV_THREAD_IDX: what = "thread index"; break;
        case TV_LET: break;
        }
        tlc_error(S->diag, target->loc, "cannot assign to %s '%s'", what, name);
    } else if (s->buf->param_index >= 0) {
        tlc_error(S->diag, target->loc, "cannot assign to tensor parameter '%s'", name);
    } else {
        tlc_error(S->diag, target->loc, "cannot assign to buffer '%s': use copy() or fill(), or store elements with %s[...] = value",
                  name, name);
    }
    sema_note_sym(S, s);
}

static void let_stmt(sema *S, tir_stmt_kind kind, tir_var *v, tir_expr *value, tlc_loc loc) {
    if (kind == TS_ASSIGN && v->assigned_once) S->lets_reassigned = true;
    tir_stmt *st = tir_new_stmt(S->arena, kind, loc);
    st->u.let.var = v;
    st->u.let.value = tir_cast(S->arena, value, v->dtype, loc);
    sema_emit(S, st);
}

static void store_stmt(sema *S, tir_buffer *b, tir_expr **idx, tir_expr *value, tlc_loc loc) {
    tir_stmt *st = tir_new_stmt(S->arena, TS_STORE, loc);
    st->u.store.buf = b;
    st->u.store.idx = idx;
    st->u.store.value = tir_cast(S->arena, value, b->dtype, loc);
    sema_emit(S, st);
}

static void bind_new_name(sema *S, const ast_expr *target, sv v, const ast_expr *value, bool has_ann, tir_dtype ann,
                          tlc_loc loc);

/* e reads no memory, and each variable it reads passes `var_ok`. */
static bool reads_only(const tir_expr *e, bool (*var_ok)(const tir_var *v), int depth) {
    if (!e || depth > 64) return false;
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: return true;
    case TE_VAR: return var_ok(e->u.var);
    case TE_BINARY: return reads_only(e->u.bin.a, var_ok, depth + 1) && reads_only(e->u.bin.b, var_ok, depth + 1);
    case TE_UNARY: return reads_only(e->u.un.a, var_ok, depth + 1);
    case TE_CAST: return reads_only(e->u.cast.a, var_ok, depth + 1);
    case TE_SELECT:
        return reads_only(e->u.sel.cond, var_ok, depth + 1) && reads_only(e->u.sel.a, var_ok, depth + 1) &&
               reads_only(e->u.sel.b, var_ok, depth + 1);
    default: return false;
    }
}

/* known at launch, before any block runs */
static bool launch_var(const tir_var *v) { return v->kind == TV_SYM_DIM || v->kind == TV_SCALAR_PARAM; }

/* An expression of constants, symbolic dims and scalar parameters only. */
static bool launch_value(const tir_expr *e, int depth) { return reads_only(e, launch_var, depth); }

/* never changes once set */
static bool unchanging_var(const tir_var *v) { return v->kind != TV_LET || v->assigned_once; }

/* name stands for e (a constant, or an expression of launch values) wherever it is used */
static void declare_value(sema *S, const char *name, tlc_loc loc, tir_expr *e) {
    sym *ns = sema_declare(S, name, SYM_CONST, loc);
    ns->value.kind = SV_SCALAR;
    ns->value.loc = loc;
    ns->value.u.e = e;
    ns->origin = CONST_LOCAL;
}

/* name (declared at decl) is a new local holding e, computed here (loc) */
static void declare_let(sema *S, const char *name, tlc_loc decl, tir_expr *e, tlc_loc loc) {
    tir_var *var = sema_new_var(S, name, TV_LET, e->dtype, decl);
    var->assigned_once = assignments_of(S, name) <= 1;
    /* its value is the same wherever the names it reads are visible */
    if (var->assigned_once && reads_only(e, unchanging_var, 0)) var->def = e;
    let_stmt(S, TS_LET, var, e, loc);
    sym *ns = sema_declare(S, name, SYM_VAR, decl);
    ns->var = var;
}

/* target (a name) = value, or `target: ann = value` when has_ann. */
static void assign_name(sema *S, const ast_expr *target, const ast_expr *value, bool has_ann, tir_dtype ann, tlc_loc loc) {
    const builtin_spec *b = sema_call_builtin(S, value);
    if (b && b->id == B_ALLOC_BARRIER) {
        sema_alloc_barrier(S, target, value);
        return;
    }
    if (b && b->kind == BK_ALLOC) {
        alloc_stmt(S, target, value, b);
        return;
    }
    if (b && b->id == B_TENSOR && S->in_kernel) {
        if (local_symbol(S, target->u.name)) tlc_error(S->diag, target->loc, "'%s' is already defined", target->u.name);
        else if (sema_check_not_in_parallel(S, value->loc, "a tensor view")) tensor_view_stmt(S, target, value, b);
        return;
    }
    const char *name = target->u.name;
    sym *s = local_symbol(S, name);
    if (b && b->id == B_ATOMIC_ADD) {
        /* old = atomic_add(..., return_prev=True): the op writes a var
         * buffer, and `old` is its value */
        if (!S->in_kernel) tlc_error(S->diag, value->loc, "'%s' must be inside 'with Kernel(...)'", b->name);
        tir_buffer *prev = S->in_kernel ? sema_atomic_add_prev(S, b, value, name) : NULL;
        if (!prev) {
            if (!s) sema_declare_error(S, name, target->loc);
            return;
        }
        tir_expr *v = tir_load(S->arena, prev, NULL, loc);
        if (s && s->kind == SYM_VAR && s->var->kind == TV_LET) let_stmt(S, TS_ASSIGN, s->var, v, loc);
        else if (s && s->kind == SYM_BUFFER && s->buf->scope == TIR_SCOPE_VAR) store_stmt(S, s->buf, NULL, v, loc);
        else if (s) cannot_assign(S, s, target);
        else declare_let(S, name, target->loc, has_ann ? tir_cast(S->arena, v, ann, loc) : v, loc);
        return;
    }
    if (s) {
        if (s->kind == SYM_VAR && s->var->kind == TV_LET) {
            tir_expr *v = sema_eval_scalar(S, value);
            if (v) let_stmt(S, TS_ASSIGN, s->var, v, loc);
        } else if (s->kind == SYM_BUFFER && s->buf->scope == TIR_SCOPE_VAR && S->in_kernel) {
            tir_expr *v = sema_eval_scalar(S, value);
            if (v) store_stmt(S, s->buf, NULL, v, loc);
        } else {
            cannot_assign(S, s, target);
        }
        return;
    }
    bind_new_name(S, target, sema_eval(S, value), value, has_ann, ann, loc);
}

/* A new name for the value v of `value`. */
static void bind_new_name(sema *S, const ast_expr *target, sv v, const ast_expr *value, bool has_ann, tir_dtype ann,
                          tlc_loc loc) {
    const char *name = target->u.name;
    if (v.kind == SV_ERROR) {
        sema_declare_error(S, name, target->loc);
        return;
    }
    if (v.kind == SV_BUFFER && v.u.buf->scope != TIR_SCOPE_VAR) { /* an alias: X = A_shared */
        sym *ns = sema_declare(S, name, SYM_BUFFER, target->loc);
        ns->buf = v.u.buf;
        return;
    }
    if (v.kind != SV_SCALAR && v.kind != SV_BUFFER) {
        if (v.kind == SV_LAYOUT || v.kind == SV_DYNAMIC) {
            tlc_error(S->diag, value->loc, "this value cannot be stored in a name");
            sema_declare_error(S, name, target->loc);
            return;
        }
        sym *ns = sema_declare(S, name, SYM_CONST, target->loc);
        ns->value = v;
        ns->origin = CONST_LOCAL;
        return;
    }
    tir_expr *e = sema_to_scalar(S, v, value);
    if (!e) {
        sema_declare_error(S, name, target->loc);
        return;
    }
    if (has_ann) e = tir_cast(S->arena, e, ann, loc);
    bool is_const = e->kind == TE_INT || e->kind == TE_FLOAT;
    if (is_const && (assignments_of(S, name) <= 1 || !S->in_kernel)) {
        declare_value(S, name, target->loc, e);
        return;
    }
    if (!S->in_kernel && e->kind == TE_VAR && (e->u.var->kind == TV_SYM_DIM || e->u.var->kind == TV_SCALAR_PARAM)) {
        /* another name for a dim or a scalar (M, N = T.const("M, N")) */
        sym *ns = sema_declare(S, name, SYM_VAR, target->loc);
        ns->var = e->u.var;
        return;
    }
    if (!S->in_kernel && S->k && launch_value(e, 0)) {
        /* computed from symbolic dims and scalars (k_tiles = T.ceildiv(K, block_K)):
         * the name stands for the expression wherever the kernel uses it */
        declare_value(S, name, target->loc, e);
        return;
    }
    if (!S->in_kernel) {
        const char *msg = "only compile-time constants can be defined outside 'with Kernel(...)'";
        if (!sema_unbound_error(S, e, value->loc, msg)) tlc_error(S->diag, value->loc, "%s", msg);
        sema_declare_error(S, name, target->loc);
        return;
    }
    declare_let(S, name, target->loc, e, loc);
}

/* Resolves buf[idx...] as an element for a store; NULL when diagnosed. */
static tir_buffer *element_target(sema *S, const ast_expr *t, tir_expr ***idx_out) {
    sv base = sema_eval(S, t->u.sub.value);
    if (base.kind == SV_ERROR) return NULL;
    if (base.kind != SV_BUFFER) {
        char d[128];
        sema_describe_sv(&base, d, sizeof d);
        tlc_error(S->diag, t->u.sub.value->loc, "cannot store into %s", d);
        return NULL;
    }
    tir_buffer *b = base.u.buf;
    if (b->scope == TIR_SCOPE_VAR) {
        tlc_error(S->diag, t->loc, "'%s' is a scalar variable (alloc_var): assign it without indices", b->name);
        sema_note_decl(S, b);
        return NULL;
    }
    if (!sema_check_index_count(S, b, t)) return NULL;
    tir_expr **idx = TLC_NEW_ARRAY(S->arena, tir_expr *, b->rank);
    bool ok = true;
    for (int i = 0; i < b->rank; i++) {
        const ast_expr *ie = t->u.sub.index[i];
        if (ie->kind == AE_SLICE) {
            tlc_error(S->diag, ie->loc, "cannot assign to a slice of '%s': use fill() or copy(), or a Parallel loop", b->name);
            ok = false;
            continue;
        }
        idx[i] = sema_index(S, ie);
        if (!idx[i] || !sema_check_index_bounds(S, b, i, idx[i], ie)) ok = false;
    }
    *idx_out = ok ? sema_global_layout_index(S, b, idx, t->loc) : idx;
    return ok ? b : NULL;
}

/* Whether e reads the plain name `name` anywhere. */
static bool reads_name(const ast_expr *e, const char *name) {
    if (!e) return false;
    switch (e->kind) {
    case AE_NAME: return strcmp(e->u.name, name) == 0;
    case AE_ATTR: return reads_name(e->u.attr.value, name);
    case AE_CALL:
        if (reads_name(e->u.call.func, name)) return true;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (reads_name(e->u.call.args[i], name)) return true;
        for (int i = 0; i < e->u.call.nkwargs; i++)
            if (reads_name(e->u.call.kwargs[i].value, name)) return true;
        return false;
    case AE_SUBSCRIPT:
        if (reads_name(e->u.sub.value, name)) return true;
        for (int i = 0; i < e->u.sub.nindex; i++)
            if (reads_name(e->u.sub.index[i], name)) return true;
        return false;
    case AE_SLICE:
        return reads_name(e->u.slice.lo, name) || reads_name(e->u.slice.hi, name) || reads_name(e->u.slice.step, name);
    case AE_TUPLE: case AE_LIST:
        for (int i = 0; i < e->u.seq.n; i++)
            if (reads_name(e->u.seq.items[i], name)) return true;
        return false;
    case AE_DICT:
        for (int i = 0; i < e->u.dict.n; i++)
            if (reads_name(e->u.dict.keys[i], name) || reads_name(e->u.dict.values[i], name)) return true;
        return false;
    case AE_BINARY: case AE_COMPARE: case AE_BOOLOP:
        return reads_name(e->u.bin.lhs, name) || reads_name(e->u.bin.rhs, name);
    case AE_UNARY: return reads_name(e->u.un.operand, name);
    case AE_IFEXP:
        return reads_name(e->u.ifexp.cond, name) || reads_name(e->u.ifexp.then, name) ||
               reads_name(e->u.ifexp.els, name);
    case AE_COMP:
        return reads_name(e->u.comp.elt, name) || reads_name(e->u.comp.iter, name) ||
               reads_name(e->u.comp.cond, name);
    case AE_LAMBDA: return reads_name(e->u.lambda.body, name);
    default: return false;
    }
}

static void assign(sema *S, const ast_expr *target, const ast_expr *value, tlc_loc loc) {
    switch (target->kind) {
    case AE_NAME: assign_name(S, target, value, false, TIR_I32, loc); return;
    case AE_SUBSCRIPT: {
        if (!S->in_kernel) break;
        tir_expr **idx;
        tir_buffer *b = element_target(S, target, &idx);
        tir_expr *v = sema_eval_scalar(S, value);
        if (b && v) store_stmt(S, b, idx, v, loc);
        return;
    }
    case AE_TUPLE: case AE_LIST:
        if ((value->kind == AE_TUPLE || value->kind == AE_LIST) && value->u.seq.n == target->u.seq.n) {
            /* The names are assigned one after the other, so a value that
             * reads a name assigned before it would see the new value where
             * Python sees the old one (a, b = b, a). */
            for (int i = 0; i < target->u.seq.n; i++) {
                const ast_expr *t = target->u.seq.items[i];
                if (t->kind != AE_NAME) continue;
                for (int j = i + 1; j < value->u.seq.n; j++)
                    if (reads_name(value->u.seq.items[j], t->u.name)) {
                        tlc_error(S->diag, value->u.seq.items[j]->loc,
                                  "this value reads '%s', which the same tuple assignment sets before it: "
                                  "assign through a temporary", t->u.name);
                        return;
                    }
            }
            for (int i = 0; i < target->u.seq.n; i++) assign(S, target->u.seq.items[i], value->u.seq.items[i], loc);
        } else if (value->kind != AE_TUPLE && value->kind != AE_LIST) {
            /* a tuple value: M, N = T.const("M, N"), or a tuple constant */
            sv v = sema_eval(S, value);
            if (v.kind == SV_ERROR) { /* reported: the names stay quiet errors, not unknown names */
                for (int i = 0; i < target->u.seq.n; i++)
                    if (target->u.seq.items[i]->kind == AE_NAME && !local_symbol(S, target->u.seq.items[i]->u.name))
                        sema_declare_error(S, target->u.seq.items[i]->u.name, target->u.seq.items[i]->loc);
                return;
            }
            if (v.kind != SV_TUPLE || v.u.tup.n != target->u.seq.n) {
                tlc_error(S->diag, value->loc, "assigning to %d names needs a tuple of %d values on the right",
                          target->u.seq.n, target->u.seq.n);
                return;
            }
            for (int i = 0; i < target->u.seq.n; i++) {
                const ast_expr *t = target->u.seq.items[i];
                if (t->kind != AE_NAME) {
                    tlc_error(S->diag, t->loc, "only names can take the values of a tuple");
                    continue;
                }
                sym *prev = local_symbol(S, t->u.name);
                if (prev) {
                    cannot_assign(S, prev, t);
                    continue;
                }
                bind_new_name(S, t, v.u.tup.items[i], value, false, TIR_I32, loc);
            }
        } else {
            tlc_error(S->diag, value->loc, "assigning to %d names needs a tuple of %d values on the right",
                      target->u.seq.n, target->u.seq.n);
        }
        return;
    default: break;
    }
    tlc_error(S->diag, target->loc, S->in_kernel ? "cannot assign to this expression"
                                                 : "only compile-time constants can be defined outside 'with Kernel(...)'");
}

static void aug_assign(sema *S, const ast_stmt *s) {
    const ast_expr *t = s->u.aug.target;
    tlc_loc loc = s->loc;
    if (!S->in_kernel) {
        tlc_error(S->diag, s->loc, "only compile-time constants can be defined outside 'with Kernel(...)'");
        return;
    }
    if (t->kind == AE_NAME) {
        sym *sy = sema_lookup(S, t->u.name);
        if (!sy) {
            const char *near = sema_suggest(S, t->u.name, false);
            if (near) tlc_error(S->diag, t->loc, "unknown name '%s'; did you mean '%s'?", t->u.name, near);
            else tlc_error(S->diag, t->loc, "unknown name '%s'", t->u.name);
            return;
        }
        tir_expr *cur;
        if (sy->kind == SYM_VAR && sy->var->kind == TV_LET) cur = tir_var_ref(S->arena, sy->var, t->loc);
        else if (sy->kind == SYM_BUFFER && sy->buf->scope == TIR_SCOPE_VAR) cur = tir_load(S->arena, sy->buf, NULL, t->loc);
        else {
            cannot_assign(S, sy, t);
            return;
        }
        tir_expr *v = sema_eval_scalar(S, s->u.aug.value);
        if (!v) return;
        tir_expr *r = sema_arith(S, s->u.aug.op, cur, v, loc);
        if (!r) return;
        if (sy->kind == SYM_VAR) let_stmt(S, TS_ASSIGN, sy->var, r, loc);
        else store_stmt(S, sy->buf, NULL, r, loc);
        return;
    }
    if (t->kind == AE_SUBSCRIPT) {
        tir_expr **idx;
        tir_buffer *b = element_target(S, t, &idx);
        tir_expr *v = sema_eval_scalar(S, s->u.aug.value);
        if (!b || !v) return;
        tir_expr *r = sema_arith(S, s->u.aug.op, tir_load(S->arena, b, idx, t->loc), v, loc);
        if (r) store_stmt(S, b, idx, r, loc);
        return;
    }
    tlc_error(S->diag, t->loc, "cannot assign to this expression");
}

/* ---------------- loops ---------------- */

/* A constant iteration count below zero is an empty loop (Python's
 * range(10, 0)); a count known only at run time may be negative too, and
 * the lowered loop then runs no iteration. */
static tir_expr *clamp_count(sema *S, tir_expr *n, tlc_loc loc) {
    int64_t c;
    return n && tir_expr_const_int(n, &c) && c < 0 ? tir_int(S->arena, 0, loc) : n;
}

static tir_expr *range_extent(sema *S, tir_expr *start, tir_expr *stop, int64_t step, tlc_loc loc) {
    tir_expr *d = sema_binary(S, TB_SUB, stop, start, loc);
    if (!d || step == 1) return clamp_count(S, d, loc);
    /* iterations = ceil(d / step) for the step's sign: (d + step -/+ 1) // step */
    int64_t adj = step > 0 ? step - 1 : step + 1;
    tir_expr *n = sema_binary(S, TB_ADD, d, tir_int(S->arena, adj, loc), loc);
    return clamp_count(S, n ? sema_binary(S, TB_FLOORDIV, n, tir_int(S->arena, step, loc), loc) : NULL, loc);
}

/* Loop variables are 32-bit: a loop whose constant bounds take one past
 * that range (the first value, the last, or the end it stops at) would wrap
 * in the generated code. */
static bool loop_fits_int32(sema *S, const tir_expr *first, const tir_expr *iterations, int64_t step, tlc_loc loc) {
    int64_t start, count, end;
    if (!first || !tir_expr_const_int(first, &start) || !tir_expr_const_int(iterations, &count)) return true;
    bool overflow = __builtin_mul_overflow(count, step, &end) || __builtin_add_overflow(start, end, &end);
    if (!overflow && start >= INT32_MIN && start <= INT32_MAX && end >= INT32_MIN && end <= INT32_MAX) return true;
    tlc_error(S->diag, loc, "this loop's variable would leave the 32-bit range (from %lld, %lld iterations of step %lld)",
              (long long)start, (long long)count, (long long)step);
    return false;
}

/* Refuses a Parallel loop with more iterations per thread than lowering
 * unrolls, before any work per iteration. */
static bool parallel_size_fits(sema *S, const tir_stmt *loop, tlc_loc loc) {
    int64_t threads = S->k && S->k->threads > 0 ? S->k->threads : 1, n = 1;
    bool overflow = false;
    for (int i = 0; i < loop->u.for_.nvars; i++) {
        int64_t e;
        tir_expr_const_int(loop->u.for_.extent[i], &e);
        overflow |= __builtin_mul_overflow(n, e, &n);
    }
    if (!overflow && n <= threads * TLC_PARALLEL_MAX_PER_THREAD) return true;
    char count[32];
    if (overflow) snprintf(count, sizeof count, "more than 2^63");
    else snprintf(count, sizeof count, "%lld", (long long)n);
    tlc_error(S->diag, loc, "this Parallel loop has %s iterations, more than %d per thread with %lld threads; "
                            "use a smaller tile or more threads",
              count, TLC_PARALLEL_MAX_PER_THREAD, (long long)threads);
    return false;
}

tir_stmt *sema_seq_stmt(sema *S, tir_stmt **v, int n, tlc_loc loc) {
    tir_stmt *q = tir_new_stmt(S->arena, TS_SEQ, loc);
    q->u.seq.stmts = TLC_NEW_ARRAY(S->arena, tir_stmt *, (size_t)n + 1);
    if (n) memcpy(q->u.seq.stmts, v, sizeof(tir_stmt *) * (size_t)n);
    q->u.seq.n = n;
    return q;
}

tir_stmt *sema_loop_stmt(sema *S, tir_for_kind kind, tir_var **vars, const int64_t *extent, int n, tir_stmt *body,
                         tlc_loc loc) {
    tir_stmt *f = tir_new_stmt(S->arena, TS_FOR, loc);
    f->u.for_.kind = kind;
    f->u.for_.nvars = n;
    f->u.for_.vars = TLC_NEW_ARRAY(S->arena, tir_var *, (size_t)n);
    f->u.for_.start = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)n);
    f->u.for_.extent = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)n);
    for (int i = 0; i < n; i++) {
        f->u.for_.vars[i] = vars[i];
        f->u.for_.start[i] = tir_int(S->arena, 0, loc);
        f->u.for_.extent[i] = tir_int(S->arena, extent ? extent[i] : 1, loc);
    }
    f->u.for_.step = 1;
    f->u.for_.body = body;
    return f;
}

/* The names a for statement binds: the target, or its tuple's items. */
static int loop_names(const ast_stmt *s, const ast_expr *const **names) {
    const ast_expr *const *tgt = (const ast_expr *const *)&s->u.for_.target;
    if ((*tgt)->kind == AE_TUPLE || (*tgt)->kind == AE_LIST) {
        *names = (const ast_expr *const *)(*tgt)->u.seq.items;
        return (*tgt)->u.seq.n;
    }
    *names = tgt;
    return 1;
}

/* for v0, ..., vn in T.Persistent(domain, wave_size, index, group_size=8):
 * TileLang's persistent tile loop. Every tile of the domain once, the
 * block taking tiles index, index + wave_size, ...; tile t is, with g =
 * min(group_size, domain[-1]) and the mixed radix (domain[-1] / g,
 * domain[0], ..., domain[-2], g) from the last digit: v_i the digit of
 * domain[i] for i < n, v_n = (first digit) * g + (last digit), so that g
 * consecutive tiles share the other coordinates (TileLang's grouped
 * order). Written out as a serial loop over the waves, lets and an if. */
static void persistent_stmt(sema *S, const ast_stmt *s, const builtin_spec *b) {
    const ast_expr *it = s->u.for_.iter;
    tlc_loc loc = it->loc;
    sema_args a;
    if (!sema_bind_args(S, b, it, &a)) return;
    const ast_expr *const *arg = a.arg;
    for (int i = 0; i < 3; i++)
        if (!arg[i]) {
            tlc_error(S->diag, loc, "T.Persistent needs '%s'", b->params[i]);
            return;
        }
    sv dom = sema_eval(S, arg[0]);
    if (dom.kind == SV_ERROR) return;
    if (dom.kind != SV_TUPLE || dom.u.tup.n < 1) {
        tlc_error(S->diag, arg[0]->loc, "T.Persistent's domain is a list of tile counts, one per loop variable");
        return;
    }
    int n = dom.u.tup.n;
    const ast_expr *tgt = s->u.for_.target;
    const ast_expr *const *names;
    int nnames = loop_names(s, &names);
    if (nnames != n) {
        tlc_error(S->diag, tgt->loc, "T.Persistent's domain has %d dim%s but the loop has %d variable%s", n,
                  n == 1 ? "" : "s", nnames, nnames == 1 ? "" : "s");
        return;
    }
    for (int i = 0; i < n; i++)
        if (names[i]->kind != AE_NAME) {
            tlc_error(S->diag, names[i]->loc, "a loop variable must be a name");
            return;
        }
    tir_expr **d = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)n);
    for (int i = 0; i < n; i++) {
        sv x = dom.u.tup.items[i];
        if (x.kind != SV_SCALAR || tir_dtype_is_float(x.u.e->dtype) || x.u.e->dtype == TIR_BOOL) {
            if (x.kind != SV_ERROR) tlc_error(S->diag, arg[0]->loc, "T.Persistent's domain holds integers");
            return;
        }
        d[i] = x.u.e;
    }
    tir_expr *wave = sema_eval_int(S, arg[1], "wave_size");
    tir_expr *index = sema_eval_int(S, arg[2], "index");
    int64_t gs = 8;
    if (arg[3] && !sema_eval_const_int(S, arg[3], "group_size", &gs)) return;
    if (!wave || !index) return;
    int64_t c, last;
    if (gs < 1) {
        tlc_error(S->diag, arg[3]->loc, "T.Persistent's group_size must be positive, got %lld", (long long)gs);
        return;
    }
    if (tir_expr_const_int(wave, &c) && c < 1) {
        tlc_error(S->diag, arg[1]->loc, "T.Persistent's wave_size must be positive, got %lld", (long long)c);
        return;
    }
    for (int i = 0; i < n; i++)
        if (tir_expr_const_int(d[i], &c) && c < 1) {
            tlc_error(S->diag, arg[0]->loc, "T.Persistent's domain extents must be positive, got %lld", (long long)c);
            return;
        }
    /* the group: g tiles of the last dim together; it must divide that dim */
    tir_expr *g = sema_binary(S, TB_MIN, tir_int(S->arena, gs, loc), d[n - 1], loc);
    if (tir_expr_const_int(d[n - 1], &last)) {
        int64_t g0 = gs < last ? gs : last;
        if (last % g0) {
            tlc_error(S->diag, arg[0]->loc, "T.Persistent's last domain extent (%lld) must be a multiple of "
                      "min(group_size, extent) = %lld", (long long)last, (long long)g0);
            return;
        }
    } else {
        /* known at launch: checked there, as an assert on sizes is, since a
         * group that does not divide the dim would skip tiles */
        tir_expr *ok = sema_binary(S, TB_EQ, sema_binary(S, TB_FLOORMOD, d[n - 1], g, loc), tir_int(S->arena, 0, loc),
                                   loc);
        if (ok && S->k && launch_value(ok, 0)) {
            sema_add_launch_check(S, ok, arg[0]->loc);
        } else if (ok) {
            tlc_warning(S->diag, arg[0]->loc, "T.Persistent's last domain extent must be a multiple of "
                        "min(group_size, extent), which tlc cannot check here");
        }
    }
    tir_expr *size = d[0];
    for (int i = 1; i < n; i++) size = sema_binary(S, TB_MUL, size, d[i], loc);
    tir_expr *waves = sema_binary(S, TB_FLOORDIV, sema_binary(S, TB_SUB, sema_binary(S, TB_ADD, size, wave, loc),
                                                               tir_int(S->arena, 1, loc), loc), wave, loc);
    if (!g || !size || !waves) return;
    tir_var *w = sema_new_var(S, "persistent_wave", TV_LOOP, TIR_I32, loc);
    tlc_ptrvec outer = {0}, inner = {0};
    tlc_ptrvec *saved = S->cur;
    S->cur = &outer;
    tir_var *tile = sema_new_var(S, "persistent_tile", TV_LET, TIR_I32, loc);
    tile->assigned_once = true;
    tir_expr *tile_no = sema_binary(S, TB_ADD, sema_binary(S, TB_MUL, tir_var_ref(S->arena, w, loc), wave, loc), index,
                                    loc);
    if (!tile_no) {
        S->cur = saved;
        tlc_ptrvec_free(&outer);
        return;
    }
    let_stmt(S, TS_LET, tile, tile_no, loc);
    if (reads_only(tile_no, unchanging_var, 0)) tile->def = tile_no;
    /* the digits of the tile number, last first */
    S->cur = &inner;
    sema_push_scope(S);
    tir_expr *rem = tir_var_ref(S->arena, tile, loc);
    tir_expr *within = sema_binary(S, TB_FLOORMOD, rem, g, loc);
    rem = sema_binary(S, TB_FLOORDIV, rem, g, loc);
    tir_expr **coord = TLC_NEW_ARRAY(S->arena, tir_expr *, (size_t)n);
    for (int i = n - 2; i >= 0; i--) {
        coord[i] = sema_binary(S, TB_FLOORMOD, rem, d[i], loc);
        rem = sema_binary(S, TB_FLOORDIV, rem, d[i], loc);
    }
    coord[n - 1] = sema_binary(S, TB_ADD, sema_binary(S, TB_MUL, rem, g, loc), within, loc);
    for (int i = 0; i < n; i++) {
        if (!coord[i]) {
            sema_pop_scope(S);
            S->cur = saved;
            tlc_ptrvec_free(&outer);
            tlc_ptrvec_free(&inner);
            return;
        }
        declare_let(S, names[i]->u.name, names[i]->loc, tir_cast(S->arena, coord[i], TIR_I32, loc), loc);
    }
    sema_emit(S, sema_block_stmt(S, &s->u.for_.body, s->loc));
    sema_pop_scope(S);
    tir_stmt *guard = tir_new_stmt(S->arena, TS_IF, loc);
    guard->u.if_.cond = sema_binary(S, TB_LT, tir_var_ref(S->arena, tile, loc), tir_cast(S->arena, size, TIR_I32, loc),
                                    loc);
    guard->u.if_.then = sema_seq_stmt(S, (tir_stmt **)inner.items, inner.len, loc);
    tlc_ptrvec_free(&inner);
    S->cur = &outer;
    sema_emit(S, guard);
    S->cur = saved;
    int nouter = outer.len;
    tir_stmt *body = sema_seq_stmt(S, (tir_stmt **)outer.items, nouter, loc);
    tlc_ptrvec_free(&outer);
    tir_stmt *f = sema_loop_stmt(S, TIR_FOR_SERIAL, &w, NULL, 1, body, s->loc);
    f->u.for_.extent[0] = tir_cast(S->arena, waves, TIR_I32, loc);
    sema_emit(S, f);
}

/* `for i in T.Parallel(a): for j in T.Parallel(b): body` (TVM's nested
 * T.parallel) as `for i, j in T.Parallel(a, b): body`: a Parallel loop
 * whose whole body is another, both of positional extents only; NULL
 * otherwise. */
static ast_stmt *fused_parallel(sema *S, const ast_stmt *s, const builtin_spec *b) {
    const ast_expr *it = s->u.for_.iter;
    if (!b || b->id != B_PARALLEL || s->u.for_.body.n != 1 || it->u.call.nkwargs) return NULL;
    const ast_stmt *in = s->u.for_.body.stmts[0];
    if (in->kind != AS_FOR || in->u.for_.iter->kind != AE_CALL || in->u.for_.iter->u.call.nkwargs) return NULL;
    const builtin_spec *bi = sema_call_builtin(S, in->u.for_.iter);
    if (!bi || bi->id != B_PARALLEL) return NULL;
    const ast_expr *const *on, *const *inn;
    int no = loop_names(s, &on), ni = loop_names(in, &inn);
    int na = it->u.call.nargs, nb = in->u.for_.iter->u.call.nargs;
    if (no != na || ni != nb || na + nb > 8) return NULL;
    ast_expr *call = ast_new_expr(S->arena, AE_CALL, it->loc);
    *call = *it;
    call->u.call.args = TLC_NEW_ARRAY(S->arena, ast_expr *, (size_t)(na + nb));
    ast_expr *tgt = ast_new_expr(S->arena, AE_TUPLE, s->u.for_.target->loc);
    tgt->u.seq.items = TLC_NEW_ARRAY(S->arena, ast_expr *, (size_t)(na + nb));
    for (int i = 0; i < na + nb; i++) {
        call->u.call.args[i] = i < na ? it->u.call.args[i] : in->u.for_.iter->u.call.args[i - na];
        tgt->u.seq.items[i] = (ast_expr *)(i < na ? on[i] : inn[i - na]);
    }
    call->u.call.nargs = tgt->u.seq.n = na + nb;
    ast_stmt *f = ast_new_stmt(S->arena, AS_FOR, s->loc);
    *f = *s;
    f->u.for_.iter = call;
    f->u.for_.target = tgt;
    f->u.for_.body = in->u.for_.body;
    return f;
}

static void loop_body(sema *S, const ast_stmt *s, const builtin_spec *b, const ast_expr *it, sema_loop_exit *lx);

/* ---- T.unroll loops expanded here ----
 * An unrolled loop of a few iterations whose body slices gemm operands or
 * T.tma_copy regions with its variable (TileLang's `for j in
 * T.unroll(num_k_tiles): T.wgmma_gemm(Q[:, j * 64 : (j + 1) * 64], ...)`)
 * is written out once per iteration here, the variable a constant in each
 * copy: a gemm's operand offsets must be known when it is planned, which
 * is before lowering unrolls loops. */
#define SEMA_UNROLL_MAX 16
#define SEMA_UNROLL_BUDGET 256 /* bodies a kernel's unrolled loops write out, nested ones included */

typedef struct unroll_scan {
    sema *S;
    bool slices, exits;
} unroll_scan;

static void scan_unroll_body(unroll_scan *u, const ast_block *b, int depth) {
    for (int i = 0; i < b->n && depth < 32; i++) {
        const ast_stmt *x = b->stmts[i];
        switch (x->kind) {
        case AS_BREAK: case AS_CONTINUE: case AS_RETURN: u->exits = true; break;
        case AS_EXPR:
            if (x->u.expr && x->u.expr->kind == AE_CALL) {
                const builtin_spec *c = sema_call_builtin(u->S, x->u.expr);
                if (c && (c->id == B_GEMM || c->id == B_WGMMA_GEMM || c->id == B_TMA_COPY)) u->slices = true;
            }
            break;
        case AS_FOR: scan_unroll_body(u, &x->u.for_.body, depth + 1); break;
        case AS_WHILE: scan_unroll_body(u, &x->u.while_.body, depth + 1); break;
        case AS_IF:
            scan_unroll_body(u, &x->u.if_.then, depth + 1);
            scan_unroll_body(u, &x->u.if_.els, depth + 1);
            break;
        case AS_WITH: scan_unroll_body(u, &x->u.with.body, depth + 1); break;
        default: break;
        }
    }
}

/* A bound of the loop as a compile-time integer, quietly (false: not one). */
static bool quiet_const(sema *S, const ast_expr *e, int64_t *out) {
    tir_expr *x = sema_eval_scalar(S, e);
    if (!x || x->kind != TE_INT || x->dtype == TIR_BOOL) return false;
    *out = x->u.ival;
    return true;
}

static bool unroll_in_sema(sema *S, const ast_stmt *s, const builtin_spec *b, const ast_expr *it) {
    if (b->id != B_UNROLL || s->u.for_.target->kind != AE_NAME || S->parallel_loc.line || S->depth >= 64) return false;
    unroll_scan u = {S, false, false};
    scan_unroll_body(&u, &s->u.for_.body, 0);
    if (!u.slices || u.exits) return false;
    sema_args a;
    int64_t v[3] = {0, 0, 1};
    if (!sema_bind_args(S, b, it, &a)) return false;
    for (int i = 0; i < a.nvar; i++)
        if (!quiet_const(S, a.var[i], &v[a.nvar == 1 ? 1 : i])) return false;
    int64_t start = v[0], stop = v[1], step = v[2], span;
    if (step <= 0 || step > ((int64_t)1 << 20) || __builtin_sub_overflow(stop, start, &span) ||
        span > SEMA_UNROLL_MAX * step)
        return false;
    /* every body written out counts, those of an unrolled loop nested in
     * each copy of another too: past the budget a loop stays a loop */
    int64_t n = span > 0 ? (span + step - 1) / step : 0;
    if (S->unrolled_bodies + n > SEMA_UNROLL_BUDGET) return false;
    S->unrolled_bodies += (int)n;
    const char *name = s->u.for_.target->u.name;
    S->depth++;
    for (int64_t j = start; j < stop; j += step) {
        sema_push_scope(S);
        declare_value(S, name, s->u.for_.target->loc, tir_int(S->arena, j, s->u.for_.target->loc));
        tir_stmt *body = sema_block_stmt(S, &s->u.for_.body, s->loc);
        if (body) sema_emit(S, body);
        sema_pop_scope(S);
    }
    S->depth--;
    return true;
}

static void for_stmt(sema *S, const ast_stmt *s) {
    const ast_expr *it = s->u.for_.iter;
    if (!S->in_kernel && sema_py_for(S, s)) return; /* before the kernel: Python, run now */
    const builtin_spec *b = sema_call_builtin(S, it);
    for (const ast_stmt *f; S->in_kernel && (f = fused_parallel(S, s, b));) {
        s = f;
        it = s->u.for_.iter;
    }
    if (!b || b->kind != BK_LOOP) {
        if (!b && it->kind == AE_CALL && sema_refuse_tilelang(S, sema_dotted_name(S, it->u.call.func), it->loc)) return;
        tlc_error(S->diag, it->loc, "a for loop must iterate over Parallel(...), Pipelined(...), serial(...), range(...) or unroll(...)");
        return;
    }
    if (!S->in_kernel) {
        tlc_error(S->diag, s->loc, "loops must be inside 'with Kernel(...)'");
        return;
    }
    if (unroll_in_sema(S, s, b, it)) return;
    sema_loop_exit *outer_exit;
    sema_loop_exit *lx = sema_loop_exit_open(S, &s->u.for_.body,
                                               b->id == B_PARALLEL     ? "a Parallel loop"
                                               : b->id == B_PIPELINED  ? "a Pipelined loop"
                                               : b->id == B_PERSISTENT ? "a Persistent loop"
                                                                       : NULL,
                                               s->loc, &outer_exit);
    loop_body(S, s, b, it, lx);
    sema_loop_exit_close(S, outer_exit);
}

static void loop_body(sema *S, const ast_stmt *s, const builtin_spec *b, const ast_expr *it, sema_loop_exit *lx) {
    if (b->id == B_PERSISTENT) {
        if (sema_check_not_in_parallel(S, it->loc, "a Persistent loop")) persistent_stmt(S, s, b);
        return;
    }
    if ((b->id == B_PARALLEL || b->id == B_PIPELINED) &&
        !sema_check_not_in_parallel(S, it->loc, b->id == B_PARALLEL ? "a Parallel loop" : "a Pipelined loop"))
        return;
    const ast_expr *tgt = s->u.for_.target;
    const ast_expr *const *names;
    int nnames = loop_names(s, &names);
    bool ok = true;
    for (int i = 0; i < nnames; i++)
        if (names[i]->kind != AE_NAME) {
            tlc_error(S->diag, names[i]->loc, "a loop variable must be a name");
            ok = false;
        }
    sema_args a;
    if (!sema_bind_args(S, b, it, &a)) ok = false;
    tir_stmt *st = tir_new_stmt(S->arena, TS_FOR, s->loc);
    tir_expr *pipe_start = NULL; /* Pipelined(start, stop) with start != 0 */
    int nv = b->id == B_PARALLEL ? a.nvar : 1;
    if (nv < 1) nv = 1;
    st->u.for_.nvars = nv;
    st->u.for_.vars = TLC_NEW_ARRAY(S->arena, tir_var *, nv);
    st->u.for_.start = TLC_NEW_ARRAY(S->arena, tir_expr *, nv);
    st->u.for_.extent = TLC_NEW_ARRAY(S->arena, tir_expr *, nv);
    st->u.for_.step = 1;
    if (ok && nnames != nv) {
        if (b->id == B_PARALLEL)
            tlc_error(S->diag, tgt->loc, "Parallel has %d extent%s but the loop has %d variable%s", nv,
                      nv == 1 ? "" : "s", nnames, nnames == 1 ? "" : "s");
        else
            tlc_error(S->diag, tgt->loc, "'%s' loops have one loop variable, got %d", b->name, nnames);
        ok = false;
    }
    if (ok) {
        switch (b->id) {
        case B_PARALLEL:
            st->u.for_.kind = TIR_FOR_PARALLEL;
            for (int i = 0; i < nv; i++) {
                int64_t ext;
                if (!sema_eval_const_int(S, a.var[i], "a Parallel extent", &ext)) { ok = false; continue; }
                if (ext <= 0 || ext > INT32_MAX) {
                    tlc_error(S->diag, a.var[i]->loc, "Parallel extent must be positive, got %lld", (long long)ext);
                    ok = false;
                    continue;
                }
                st->u.for_.start[i] = tir_int(S->arena, 0, a.var[i]->loc);
                st->u.for_.extent[i] = tir_int(S->arena, ext, a.var[i]->loc);
            }
            if (ok) ok = parallel_size_fits(S, st, it->loc);
            break;
        case B_PIPELINED: {
            enum { TURNS_ARG = 6, ROLES_ARG = 7 };
            for (int i = 1; i < TURNS_ARG; i++)
                if (a.arg[i]) {
                    tlc_error(S->diag, a.arg[i]->loc, "'%s=' of T.Pipelined is a TileLang construct tlc does not support; "
                              "remove it: tlc schedules the pipeline from num_stages", b->params[i]);
                    ok = false;
                }
            tir_expr *start = NULL, *stop = sema_eval_int(S, a.var[a.nvar - 1], "the Pipelined extent");
            if (a.nvar == 2) {
                start = sema_eval_int(S, a.var[0], "the Pipelined start");
                if (!start) ok = false;
            }
            int64_t ns = 1, s0;
            if (a.arg[0]) {
                if (!sema_eval_const_int(S, a.arg[0], "num_stages", &ns)) ok = false;
                else if (ns < 0 || ns > 32) {
                    tlc_error(S->diag, a.arg[0]->loc, "num_stages=%lld: must be between 0 and 32", (long long)ns);
                    ok = false;
                }
            }
            bool turns = false;
            if (a.arg[TURNS_ARG] && !sema_eval_const_bool(S, a.arg[TURNS_ARG], "turns", &turns)) ok = false;
            bool roles = false;
            if (a.arg[ROLES_ARG] && !sema_eval_const_bool(S, a.arg[ROLES_ARG], "roles", &roles)) ok = false;
            if (!stop || !ok) { ok = false; break; }
            if (start && tir_expr_const_int(start, &s0) && s0 == 0) start = NULL;
            st->u.for_.extent[0] = start ? range_extent(S, start, stop, 1, it->loc) : clamp_count(S, stop, it->loc);
            if (!st->u.for_.extent[0]) { ok = false; break; }
            st->u.for_.start[0] = tir_int(S->arena, 0, it->loc);
            /* the variable's values run from start (0 without one) */
            if (!loop_fits_int32(S, start ? start : st->u.for_.start[0], st->u.for_.extent[0], 1, it->loc)) ok = false;
            if (ns == 0) { /* TileLang: no pipelining, a plain serial loop */
                st->u.for_.kind = TIR_FOR_SERIAL;
                if (start) st->u.for_.start[0] = start;
                break;
            }
            /* Pipelined loops count from 0 (the pipeline's stages follow the
             * count); a start is added where the variable is read */
            st->u.for_.kind = TIR_FOR_PIPELINED;
            st->u.for_.num_stages = (int)ns;
            st->u.for_.turns_hint = turns || roles;
            st->u.for_.roles_hint = roles;
            pipe_start = start;
            break;
        }
        default: { /* serial / range / unroll */
            st->u.for_.kind = b->id == B_UNROLL ? TIR_FOR_UNROLLED : TIR_FOR_SERIAL;
            tir_expr *start, *stop;
            int64_t step = 1;
            if (a.nvar == 1) {
                start = tir_int(S->arena, 0, it->loc);
                stop = sema_eval_int(S, a.var[0], "a loop bound");
            } else {
                start = sema_eval_int(S, a.var[0], "a loop bound");
                stop = sema_eval_int(S, a.var[1], "a loop bound");
            }
            if (a.nvar == 3) {
                if (!sema_eval_const_int(S, a.var[2], "the loop step", &step)) ok = false;
                else if (step == 0) {
                    tlc_error(S->diag, a.var[2]->loc, "the loop step must not be zero");
                    ok = false;
                }
            }
            if (!start || !stop || !ok) { ok = false; break; }
            st->u.for_.start[0] = start;
            st->u.for_.step = step;
            st->u.for_.extent[0] = range_extent(S, start, stop, step, it->loc);
            if (!st->u.for_.extent[0] || !loop_fits_int32(S, start, st->u.for_.extent[0], step, it->loc)) ok = false;
            break;
        }
        }
    }
    sema_push_scope(S);
    for (int i = 0; i < nnames && i < nv; i++) {
        if (names[i]->kind != AE_NAME) continue;
        sym *prev = sema_lookup(S, names[i]->u.name);
        if (prev && prev->kind == SYM_BUFFER) {
            tlc_error(S->diag, names[i]->loc, "loop variable '%s' would hide the buffer of the same name", names[i]->u.name);
            sema_note_sym(S, prev);
        }
        tir_var *v = sema_new_var(S, names[i]->u.name, TV_LOOP, TIR_I32, names[i]->loc);
        st->u.for_.vars[i] = v;
        if (pipe_start) {
            sym *sy = sema_declare(S, names[i]->u.name, SYM_CONST, names[i]->loc);
            sy->origin = CONST_LOOP;
            sy->value.kind = SV_SCALAR;
            sy->value.loc = names[i]->loc;
            sy->value.u.e = sema_binary(S, TB_ADD, tir_var_ref(S->arena, v, names[i]->loc),
                                        tir_cast(S->arena, pipe_start, TIR_I32, names[i]->loc), names[i]->loc);
            if (!sy->value.u.e) sy->value.kind = SV_ERROR;
            continue;
        }
        sym *sy = sema_declare(S, names[i]->u.name, SYM_VAR, names[i]->loc);
        sy->var = v;
    }
    int ranges_before = S->nranges;
    for (int i = 0; ok && i < nnames && i < nv && S->nranges < (int)(sizeof S->ranges / sizeof S->ranges[0]); i++) {
        int64_t s0, n, step = st->u.for_.step ? st->u.for_.step : 1;
        if (!st->u.for_.vars[i] || !tir_expr_const_int(st->u.for_.start[i], &s0) ||
            !tir_expr_const_int(st->u.for_.extent[i], &n) || n <= 0 || step > ((int64_t)1 << 20) ||
            step < -((int64_t)1 << 20) || n > ((int64_t)1 << 30) || s0 > ((int64_t)1 << 30) || s0 < -((int64_t)1 << 30))
            continue;
        int64_t last = s0 + (n - 1) * step;
        S->ranges[S->nranges++] = (struct sema_range){st->u.for_.vars[i], s0 < last ? s0 : last,
                                                      s0 < last ? last : s0, S->if_depth};
    }
    tlc_loc outer_parallel = S->parallel_loc;
    if (b->id == B_PARALLEL) S->parallel_loc = s->loc;
    if (ok) {
        st->u.for_.body = sema_block_stmt(S, &s->u.for_.body, s->loc);
        sema_loop_exit_finish(S, lx, st, NULL);
        if (b->id != B_PARALLEL || !sema_reducer_loop(S, st)) sema_emit(S, st);
    } else if (nnames <= nv) {
        /* still check the body, for its own errors */
        sema_block_stmt(S, &s->u.for_.body, s->loc);
    }
    S->parallel_loc = outer_parallel;
    S->nranges = ranges_before;
    sema_pop_scope(S);
}

static void if_stmt(sema *S, const ast_stmt *s) {
    /* `if is_causal:` on a factory parameter without a default: a flag that
     * needs its -D (it would otherwise become a symbolic dim, and the
     * branch a run-time one whose names end with it). Diagnosed once; then
     * read as taken, so that what it sets is known after it. */
    const ast_expr *flag = s->u.if_.cond;
    if (flag->kind == AE_UNARY && flag->u.un.op == AOP_NOT) flag = flag->u.un.operand;
    sym *u = flag->kind == AE_NAME ? sema_lookup(S, flag->u.name) : NULL;
    if (u && u->kind == SYM_CONST && u->origin == CONST_UNBOUND) {
        tir_expr *x = sema_eval_scalar(S, flag);
        if (x && sema_unbound_error(S, x, flag->loc, "the condition of 'if' must be known at compile time here")) {
            sema_stmts(S, &s->u.if_.then, 0);
            return;
        }
    }
    tir_expr *c = sema_eval_scalar(S, s->u.if_.cond);
    if (c) c = sema_to_bool(S, c, s->u.if_.cond, "the condition of 'if'");
    /* a factory's `if heads > 64:` with heads unbound: say which -D, and
     * take the first branch for the names it sets (no errors after) */
    if (c && c->kind != TE_INT && !S->in_kernel &&
        sema_unbound_error(S, c, s->u.if_.cond->loc, "the condition of an 'if' outside the kernel must be known at "
                           "compile time")) {
        if (S->depth >= MAX_BLOCK_DEPTH) return;
        S->depth++;
        sema_stmts(S, &s->u.if_.then, 0);
        S->depth--;
        return;
    }
    if (c && c->kind == TE_INT) { /* decided at compile time: only the taken branch exists */
        const ast_block *b = c->u.ival ? &s->u.if_.then : &s->u.if_.els;
        if (S->depth < MAX_BLOCK_DEPTH) {
            /* as in Python, names set in the branch stay set after it (`if
             * scale is None: scale = ...`, `if is_causal: end = ...`) */
            S->depth++;
            sema_stmts(S, b, 0);
            S->depth--;
            return;
        }
        tlc_ptrvec v;
        memset(&v, 0, sizeof v);
        sema_block(S, b, &v);
        for (int i = 0; i < v.len; i++) sema_emit(S, v.items[i]);
        tlc_ptrvec_free(&v);
        return;
    }
    S->if_depth++; /* indices under a run-time `if` may be guarded by it */
    tir_stmt *then = sema_block_stmt(S, &s->u.if_.then, s->loc);
    tir_stmt *els = s->u.if_.els.n ? sema_block_stmt(S, &s->u.if_.els, s->loc) : NULL;
    S->if_depth--;
    if (!c) return;
    if (!S->in_kernel) {
        tlc_error(S->diag, s->loc, "a run-time 'if' must be inside 'with Kernel(...)'");
        return;
    }
    tir_stmt *st = tir_new_stmt(S->arena, TS_IF, s->loc);
    st->u.if_.cond = c;
    st->u.if_.then = then;
    st->u.if_.els = els;
    sema_emit(S, st);
}

/* ---------------- statements ---------------- */

/* ---------------- TileLang's @T.macro ---------------- */
/* A macro is inlined where it is called, as TileLang expands it: its
 * parameters stand for the call's arguments (evaluated once, at the call)
 * and its body is read as if written there. */
enum { MAX_MACRO_DEPTH = 16, MAX_MACRO_EXPANSIONS = 64 };

/* The macro called `name`: the kernel's factory's, else the module's. */
static const ast_funcdef *macro_named(sema *S, const char *name) {
    for (int i = S->macros.len - 1; i >= 0; i--) {
        const ast_funcdef *g = S->macros.items[i];
        if (g->name && !strcmp(g->name, name)) return g;
    }
    for (int i = 0; S->module && i < S->module->nfuncs; i++) {
        const ast_funcdef *g = S->module->funcs[i];
        if (g->name && !strcmp(g->name, name) && sema_decorated_macro(S, g)) return g;
    }
    return NULL;
}

void sema_bind_value(sema *S, const char *name, tlc_loc loc, sv v) {
    sym *ns;
    switch (v.kind) {
    case SV_ERROR: sema_declare_error(S, name, loc); return;
    case SV_BUFFER:
        ns = sema_declare(S, name, SYM_BUFFER, loc);
        ns->buf = v.u.buf;
        return;
    case SV_SCALAR: {
        const tir_expr *e = v.u.e;
        if (!S->in_kernel || e->kind == TE_INT || e->kind == TE_FLOAT || e->kind == TE_VAR) {
            declare_value(S, name, loc, v.u.e);
            return;
        }
        declare_let(S, name, loc, v.u.e, loc); /* evaluated once, here */
        return;
    }
    default:
        ns = sema_declare(S, name, SYM_CONST, loc);
        ns->value = v;
        ns->origin = CONST_LOCAL;
        return;
    }
}

const ast_expr **sema_call_args(sema *S, const ast_funcdef *m, const ast_expr *call, const char *what) {
    const char *name = m->name;
    int np = m->nparams;
    const ast_expr **arg = TLC_NEW_ARRAY(S->arena, const ast_expr *, (size_t)np + 1);
    bool ok = true;
    if (call->u.call.nargs > np) {
        tlc_error(S->diag, call->loc, "%s '%s' takes %d argument%s, but %d are given", what, name, np, np == 1 ? "" : "s",
                  call->u.call.nargs);
        tlc_note(S->diag, m->loc, "'%s' is defined here", name);
        return NULL;
    }
    for (int i = 0; i < call->u.call.nargs; i++) arg[i] = call->u.call.args[i];
    for (int i = 0; i < call->u.call.nkwargs; i++) {
        const ast_kwarg *kw = &call->u.call.kwargs[i];
        int p = -1;
        for (int j = 0; kw->name && j < np; j++)
            if (!strcmp(m->params[j].name, kw->name)) p = j;
        if (p < 0) {
            tlc_error(S->diag, kw->loc, "'%s' is not a parameter of %s '%s'", kw->name ? kw->name : "**", what, name);
            ok = false;
        } else if (arg[p]) {
            tlc_error(S->diag, kw->loc, "%s '%s': parameter '%s' is given twice", what, name, kw->name);
            ok = false;
        } else {
            arg[p] = kw->value;
        }
    }
    for (int i = 0; i < np; i++) {
        if (!arg[i]) arg[i] = m->params[i].default_value;
        if (!arg[i]) {
            tlc_error(S->diag, call->loc, "%s '%s': no value for parameter '%s'", what, name, m->params[i].name);
            ok = false;
        }
    }
    if (!ok) {
        tlc_note(S->diag, m->loc, "'%s' is defined here", name);
        return NULL;
    }
    return arg;
}

static void inline_macro(sema *S, const ast_funcdef *m, const ast_expr *call) {
    const char *name = m->name;
    if (S->macro_depth >= MAX_MACRO_DEPTH) {
        tlc_error(S->diag, call->loc, "macro '%s' is expanded inside %d other macro calls: does it call itself?", name,
                  S->macro_depth);
        return;
    }
    if (S->macro_expansions >= MAX_MACRO_EXPANSIONS) {
        if (S->macro_expansions++ == MAX_MACRO_EXPANSIONS)
            tlc_error(S->diag, call->loc, "more than %d macro calls are expanded in kernel '%s' (macros that call "
                      "macros several times multiply)", MAX_MACRO_EXPANSIONS, S->k ? S->k->name : "?");
        return;
    }
    S->macro_expansions++;
    int np = m->nparams;
    const ast_expr **arg = sema_call_args(S, m, call, "macro");
    if (!arg) return;
    sv *vals = TLC_NEW_ARRAY(S->arena, sv, (size_t)np + 1);
    for (int i = 0; i < np; i++) vals[i] = sema_eval(S, arg[i]); /* in the caller's scope */
    bool counted = false; /* a macro's names count once per kernel, however often it is called */
    for (int i = 0; i < S->macros_counted.len; i++) counted |= S->macros_counted.items[i] == m;
    if (!counted) {
        count_block(S, &m->body, 1);
        tlc_ptrvec_push(&S->macros_counted, (void *)m);
    }
    int errors0 = S->diag->errors;
    sema_push_scope(S);
    for (int i = 0; i < np; i++) sema_bind_value(S, m->params[i].name, m->params[i].loc, vals[i]);
    S->macro_depth++;
    sema_loop_exit *caller_loop = S->loop_exit; /* a break in a macro ends no loop of its caller's */
    S->loop_exit = NULL;
    for (int i = 0; i < m->body.n && !tlc_diag_too_many(S->diag); i++) {
        const ast_stmt *st = m->body.stmts[i];
        if (st->kind == AS_EXPR && st->u.expr && st->u.expr->kind == AE_STRING) continue; /* docstring */
        if (st->kind == AS_RETURN) {
            tlc_error(S->diag, st->loc, "a macro that returns a value is not supported: write the value into a "
                      "buffer the caller passes");
            continue;
        }
        sema_stmt(S, st);
    }
    S->loop_exit = caller_loop;
    S->macro_depth--;
    sema_pop_scope(S);
    if (S->diag->errors > errors0 && S->macro_depth == 0) /* at the outermost call only */
        tlc_note(S->diag, call->loc, "in the call of macro '%s' here", name);
}

static void expr_stmt(sema *S, const ast_stmt *s) {
    const ast_expr *e = s->u.expr;
    if (!e || e->kind == AE_STRING) return; /* docstring */
    if (sema_py_list_update(S, e)) return;
    if (sema_ignore_profiling_event(S, e, "iket.mark")) return;
    if (e->kind == AE_CALL && e->u.call.func && e->u.call.func->kind == AE_NAME && !sema_lookup(S, e->u.call.func->u.name)) {
        const ast_funcdef *m = macro_named(S, e->u.call.func->u.name);
        if (m) {
            inline_macro(S, m, e);
            return;
        }
        const ast_funcdef *h = sema_helper_named(S, e->u.call.func->u.name);
        if (h) { /* run for what it checks (its asserts); its value is dropped, as Python drops it */
            sema_py_helper_call(S, h, e);
            return;
        }
    }
    const builtin_spec *b = sema_call_builtin(S, e);
    if (b && b->kind == BK_STMT) {
        if (!S->in_kernel) {
            tlc_error(S->diag, e->loc, "'%s' must be inside 'with Kernel(...)'", b->name);
            return;
        }
        sema_tile_op(S, b, e);
        return;
    }
    if (b && b->kind == BK_ALLOC) {
        tlc_error(S->diag, e->loc, "the result of '%s' must be assigned to a name", b->name);
        return;
    }
    sv v = sema_eval(S, e);
    if (v.kind != SV_ERROR && !sema_is_python_print(S, e)) tlc_error(S->diag, e->loc, "this expression has no effect");
}

/* TileLang's factories check their parameters with Python asserts: one on
 * compile-time values is checked now; one on values known at launch goes
 * to the kernel's launch checks (the metadata writer keeps those the
 * runtime can evaluate and warns about the rest); any other cannot be
 * checked, and says so. */
static void assert_stmt(sema *S, const ast_stmt *s) {
    tir_expr *c = sema_eval_scalar(S, s->u.assert_.cond);
    if (c) c = sema_to_bool(S, c, s->u.assert_.cond, "the condition of 'assert'");
    if (!c) return;
    if (c->kind != TE_INT) {
        if (!S->k || !launch_value(c, 0)) {
            tlc_warning(S->diag, s->loc, "this assert reads values tlc cannot check (not only sizes and scalars)");
            return;
        }
        sema_add_launch_check(S, c, s->loc);
        return;
    }
    if (c->u.ival) return;
    sv m = s->u.assert_.msg ? sema_eval(S, s->u.assert_.msg) : sv_error();
    if (m.kind == SV_STRING) tlc_error(S->diag, s->loc, "assertion failed: %s", m.u.str);
    else tlc_error(S->diag, s->loc, "assertion failed");
}

/* `raise E("why")` stops the compilation where compile-time code reaches
 * it (a factory's or helper's branch for a configuration it does not
 * take); under a run-time condition it would need an exception on the
 * GPU, which tlc does not have. */
void sema_raise(sema *S, const ast_stmt *s) {
    if (S->if_depth > 0) {
        tlc_error(S->diag, s->loc, "'raise' under a run-time condition: tlc raises only where compile-time code "
                  "reaches it (check a run-time value with assert)");
        return;
    }
    const ast_expr *e = s->u.expr;
    const ast_expr *f = e && e->kind == AE_CALL ? e->u.call.func : e;
    const char *name = f && (f->kind == AE_NAME || f->kind == AE_ATTR) ? sema_dotted_name(S, f) : NULL;
    const ast_expr *why = e && e->kind == AE_CALL && e->u.call.nargs > 0 && e->u.call.args[0]->kind == AE_STRING
                              ? e->u.call.args[0] : NULL;
    if (name && why) tlc_error(S->diag, s->loc, "%s raised at compile time: %s", name, why->u.str);
    else if (name) tlc_error(S->diag, s->loc, "%s raised at compile time", name);
    else tlc_error(S->diag, s->loc, "'raise' reached at compile time");
}

void sema_stmt(sema *S, const ast_stmt *s) {
    switch (s->kind) {
    case AS_EXPR: expr_stmt(S, s); return;
    case AS_ASSIGN: assign(S, s->u.assign.target, s->u.assign.value, s->loc); return;
    case AS_AUGASSIGN: aug_assign(S, s); return;
    case AS_ANNASSIGN: {
        /* `dtype: str = BF16` in a factory: Python's annotation, a plain assignment */
        if (!S->in_kernel && s->u.ann.value && s->u.ann.annotation &&
            sema_python_type_annotation(S, s->u.ann.annotation)) {
            assign(S, s->u.ann.target, s->u.ann.value, s->loc);
            return;
        }
        tir_dtype t;
        bool ok = sema_eval_dtype(S, s->u.ann.annotation, &t);
        if (!s->u.ann.value) {
            tlc_error(S->diag, s->loc, "an annotated name needs a value (x: int32 = 0)");
            return;
        }
        if (s->u.ann.target->kind != AE_NAME) {
            tlc_error(S->diag, s->u.ann.target->loc, "only a name can be annotated");
            return;
        }
        if (!ok) return;
        sym *prev = local_symbol(S, s->u.ann.target->u.name);
        if (prev && !(prev->kind == SYM_VAR && prev->var->kind == TV_LET)) {
            cannot_assign(S, prev, s->u.ann.target);
            return;
        }
        assign_name(S, s->u.ann.target, s->u.ann.value, true, t, s->loc);
        return;
    }
    case AS_FOR: for_stmt(S, s); return;
    case AS_IF: if_stmt(S, s); return;
    case AS_WITH: {
        const builtin_spec *b = sema_call_builtin(S, s->u.with.item);
        const ast_expr *w = s->u.with.item;
        if (b && b->id == B_KERNEL && S->fn_mode && !S->in_kernel)
            tlc_error(S->diag, s->loc, "a function with several 'with Kernel' blocks or workspaces has each block "
                      "at its top level, not inside another statement");
        else if (b && b->id == B_KERNEL) sema_kernel_with(S, s);
        else if (b && b->id == B_WS) sema_ws_with(S, s);
        else if (b && b->id == B_ATTR) sema_attr_with(S, s);
        else if (!b && !s->u.with.target && sema_ignore_profiling_event(S, w, "iket.range"))
            sema_stmts(S, &s->u.with.body, 0); /* the scope's statements, as written */
        else if (!b && w->kind == AE_CALL && sema_refuse_tilelang(S, sema_dotted_name(S, w->u.call.func), w->loc)) return;
        else tlc_error(S->diag, s->loc, "unsupported 'with' statement (only 'with Kernel(...)' and 'with T.ws(...)')");
        return;
    }
    case AS_PASS: return;
    case AS_WHILE: sema_while(S, s); return;
    case AS_RETURN: tlc_error(S->diag, s->loc, "'return' is not supported in a kernel"); return;
    case AS_BREAK: case AS_CONTINUE: sema_loop_exit_stmt(S, s); return;
    case AS_ASSERT: assert_stmt(S, s); return;
    case AS_FUNCDEF: tlc_error(S->diag, s->loc, "nested function definitions are not supported"); return;
    case AS_RAISE: sema_raise(S, s); return;
    }
}
