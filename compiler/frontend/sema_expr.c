/* Expressions: names, literals, operators with the language's typing rules,
 * math builtins, casts. Constants fold as they are built (tir.c), and the
 * failures of folding (overflow, division by zero) are reported here at the
 * operator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sema_internal.h"
#include "ir/tir_access.h"

enum { MAX_EXPR_DEPTH = 200 };

sv sv_error(void) {
    sv v;
    memset(&v, 0, sizeof v);
    v.kind = SV_ERROR;
    return v;
}

sv sv_scalar(tir_expr *e, tlc_loc loc) {
    sv v = sv_error();
    if (!e) return v;
    v.kind = SV_SCALAR;
    v.loc = loc;
    v.u.e = e;
    return v;
}

void sema_describe_sv(const sv *v, char *buf, size_t n) {
    switch (v->kind) {
    case SV_ERROR: snprintf(buf, n, "an invalid value"); break;
    case SV_NONE: snprintf(buf, n, "None"); break;
    case SV_SCALAR: snprintf(buf, n, "a value of type %s", tir_dtype_name(v->u.e->dtype)); break;
    case SV_DTYPE: snprintf(buf, n, "the dtype %s", tir_dtype_name(v->u.dtype)); break;
    case SV_STRING: snprintf(buf, n, "a string"); break;
    case SV_BUFFER: snprintf(buf, n, "the buffer '%s'", v->u.buf->name); break;
    case SV_TUPLE: snprintf(buf, n, "a tuple"); break;
    case SV_POLICY: snprintf(buf, n, "a GemmWarpPolicy"); break;
    case SV_LAYOUT: snprintf(buf, n, "a layout"); break;
    case SV_INDEX_MAP: snprintf(buf, n, "a T.Layout"); break;
    case SV_BARRIER: snprintf(buf, n, "a barrier"); break;
    case SV_DEVICE: snprintf(buf, n, "a device's properties"); break;
    case SV_DYNAMIC: snprintf(buf, n, "the dynamic dimension '%s'", v->u.str); break;
    }
}

tir_expr *sema_to_scalar(sema *S, sv v, const ast_expr *at) {
    tlc_loc loc = at ? at->loc : v.loc;
    switch (v.kind) {
    case SV_ERROR: return NULL;
    case SV_SCALAR: return v.u.e;
    case SV_BUFFER:
        if (v.u.buf->scope == TIR_SCOPE_VAR) return tir_load(S->arena, v.u.buf, NULL, loc);
        tlc_error(S->diag, loc, "buffer '%s' used as a scalar value; index it (%s[...]) or use a tile operation",
                  v.u.buf->name, v.u.buf->name);
        sema_note_decl(S, v.u.buf);
        return NULL;
    case SV_DYNAMIC:
        tlc_error(S->diag, loc, "dynamic dimension '%s' is not used by any tensor parameter", v.u.str);
        return NULL;
    default: {
        /* a compile-time parameter left at its default None (TileLang's
         * kernels whose tile sizes a tuner fills in) */
        sym *p = v.kind == SV_NONE && at && at->kind == AE_NAME ? sema_lookup(S, at->u.name) : NULL;
        if (p && p->kind == SYM_CONST && p->origin == CONST_JIT) {
            tlc_error(S->diag, loc, "'%s' is None, its default, where a number is needed: give its value with -D %s=VALUE",
                      at->u.name, at->u.name);
            return NULL;
        }
        char d[128];
        sema_describe_sv(&v, d, sizeof d);
        tlc_error(S->diag, loc, "expected a number, got %s", d);
        return NULL;
    }
    }
}

tir_expr *sema_eval_scalar(sema *S, const ast_expr *e) { return sema_to_scalar(S, sema_eval(S, e), e); }

tir_expr *sema_eval_int(sema *S, const ast_expr *e, const char *what) {
    tir_expr *x = sema_eval_scalar(S, e);
    if (!x) return NULL;
    if (tir_dtype_is_float(x->dtype)) {
        tlc_error(S->diag, e->loc, "%s must be an integer, got %s", what, tir_dtype_name(x->dtype));
        return NULL;
    }
    if (x->dtype == TIR_BOOL) return tir_cast(S->arena, x, TIR_I32, e->loc);
    return x;
}

bool sema_eval_const_int(sema *S, const ast_expr *e, const char *what, int64_t *out) {
    tir_expr *x = sema_eval_scalar(S, e);
    if (!x) return false;
    if (x->kind != TE_INT || x->dtype == TIR_BOOL) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be a compile-time constant integer", what);
        if (x->kind == TE_FLOAT || tir_dtype_is_float(x->dtype))
            tlc_error(S->diag, e->loc, "%s must be an integer, got %s", what, tir_dtype_name(x->dtype));
        else if (!sema_unbound_error(S, x, e->loc, msg))
            tlc_error(S->diag, e->loc, "%s", msg);
        return false;
    }
    *out = x->u.ival;
    return true;
}

bool sema_check_index_count(sema *S, const tir_buffer *b, const ast_expr *sub) {
    if (sub->u.sub.nindex == b->rank) return true;
    tlc_error(S->diag, sub->loc, "'%s' has %d dimension%s but %d ind%s given", b->name, b->rank,
              b->rank == 1 ? "" : "s", sub->u.sub.nindex, sub->u.sub.nindex == 1 ? "ex was" : "ices were");
    sema_note_decl(S, b);
    return false;
}

bool sema_eval_const_bool(sema *S, const ast_expr *e, const char *what, bool *out) {
    tir_expr *x = sema_eval_scalar(S, e);
    if (!x) return false;
    if (x->kind != TE_INT) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be a compile-time constant bool", what);
        if (!sema_unbound_error(S, x, e->loc, msg)) tlc_error(S->diag, e->loc, "%s", msg);
        return false;
    }
    *out = x->u.ival != 0;
    return true;
}

bool sv_as_dtype(sema *S, sv v, const ast_expr *at, tir_dtype *out) {
    if (v.kind == SV_ERROR) return false;
    if (v.kind == SV_DTYPE) {
        *out = v.u.dtype;
        return true;
    }
    if (v.kind == SV_STRING && tir_dtype_parse(v.u.str, out)) return true;
    tlc_loc loc = at ? at->loc : v.loc;
    if (v.kind == SV_SCALAR && sema_unbound_error(S, v.u.e, loc, "expected a dtype")) return false;
    if (v.kind == SV_STRING && sema_refuse_tilelang_dtype(S, v.u.str, loc)) return false;
    const char *near = v.kind == SV_STRING ? sema_suggest_dtype(v.u.str) : NULL;
    if (near) {
        tlc_error(S->diag, loc, "unknown dtype \"%s\"; did you mean \"%s\"?", v.u.str, near);
        return false;
    }
    char d[128];
    sema_describe_sv(&v, d, sizeof d);
    tlc_error(S->diag, at ? at->loc : v.loc, "expected a dtype (float16, bfloat16, float32, float8_e4m3, float8_e5m2, int8, int16, int32, int64, uint8, uint16, uint32, bool), got %s", d);
    return false;
}

bool sema_eval_dtype(sema *S, const ast_expr *e, tir_dtype *out) { return sv_as_dtype(S, sema_eval(S, e), e, out); }

tir_expr *sema_to_bool(sema *S, tir_expr *x, const ast_expr *at, const char *what) {
    if (!x) return NULL;
    if (x->dtype == TIR_BOOL) return x;
    if (tir_dtype_is_float(x->dtype)) {
        tlc_error(S->diag, at->loc, "%s must be bool or int, got %s", what, tir_dtype_name(x->dtype));
        return NULL;
    }
    return tir_binary(S->arena, TB_NE, x, tir_int_typed(S->arena, 0, x->dtype, at->loc), at->loc);
}

/* Type in which arithmetic is computed: f16 / bf16 / f8 compute in f32. */
static tir_dtype arith_type(tir_dtype a, tir_dtype b) {
    tir_dtype t = tir_promote(a, b);
    if (t == TIR_F16 || t == TIR_BF16 || tir_dtype_is_fp8(t)) t = TIR_F32;
    return t;
}

tir_expr *sema_binary(sema *S, tir_binop op, tir_expr *x, tir_expr *y, tlc_loc loc) {
    tir_fold_status st;
    tir_expr *r = tir_binary_fold(S->arena, op, x, y, loc, &st);
    if (r) return r;
    switch (st) {
    case TIR_FOLD_DIV_ZERO:
        tlc_error(S->diag, loc, "%s by zero in a constant expression",
                  op == TB_FLOORMOD ? "modulo" : "division");
        break;
    case TIR_FOLD_BAD_SHIFT: tlc_error(S->diag, loc, "invalid shift count in a constant expression"); break;
    default: tlc_error(S->diag, loc, "integer overflow in a constant expression"); break;
    }
    return NULL;
}

static bool both_int(const tir_expr *x, const tir_expr *y) {
    return !tir_dtype_is_float(x->dtype) && !tir_dtype_is_float(y->dtype);
}

/* Arithmetic / bitwise operator with the typing rules of the language. */
tir_expr *sema_arith(sema *S, ast_op op, tir_expr *x, tir_expr *y, tlc_loc loc) {
    tlc_arena *A = S->arena;
    tir_binop bop;
    switch (op) {
    case AOP_ADD: bop = TB_ADD; break;
    case AOP_SUB: bop = TB_SUB; break;
    case AOP_MUL: bop = TB_MUL; break;
    case AOP_DIV: {
        tir_dtype t = arith_type(x->dtype, y->dtype);
        if (!tir_dtype_is_float(t)) t = TIR_F32;
        return sema_binary(S, TB_DIV, tir_cast(A, x, t, loc), tir_cast(A, y, t, loc), loc);
    }
    case AOP_FLOORDIV: case AOP_MOD:
        if (!both_int(x, y)) {
            tlc_error(S->diag, loc, "'%s' needs integer operands, got %s and %s", ast_op_str(op),
                      tir_dtype_name(x->dtype), tir_dtype_name(y->dtype));
            return NULL;
        }
        bop = op == AOP_MOD ? TB_FLOORMOD : TB_FLOORDIV;
        break;
    case AOP_POW:
        if (both_int(x, y) && x->kind == TE_INT && y->kind == TE_INT) {
            tir_dtype t = arith_type(x->dtype, y->dtype);
            return sema_binary(S, TB_POW, tir_cast(A, x, t, loc), tir_cast(A, y, t, loc), loc);
        } else {
            tir_dtype t = arith_type(x->dtype, y->dtype);
            if (!tir_dtype_is_float(t)) t = TIR_F32;
            return sema_binary(S, TB_POW, tir_cast(A, x, t, loc), tir_cast(A, y, t, loc), loc);
        }
    case AOP_BITAND: case AOP_BITOR: case AOP_BITXOR:
        if (x->dtype == TIR_BOOL && y->dtype == TIR_BOOL)
            return sema_binary(S, op == AOP_BITAND ? TB_AND : op == AOP_BITOR ? TB_OR : TB_NE, x, y, loc);
        /* fall through */
    case AOP_LSHIFT: case AOP_RSHIFT:
        if (!both_int(x, y)) {
            tlc_error(S->diag, loc, "'%s' needs integer operands, got %s and %s", ast_op_str(op),
                      tir_dtype_name(x->dtype), tir_dtype_name(y->dtype));
            return NULL;
        }
        bop = op == AOP_BITAND ? TB_BITAND : op == AOP_BITOR ? TB_BITOR : op == AOP_BITXOR ? TB_BITXOR
            : op == AOP_LSHIFT ? TB_SHL : TB_SHR;
        break;
    default:
        tlc_error(S->diag, loc, "unsupported operator '%s'", ast_op_str(op));
        return NULL;
    }
    tir_dtype t = arith_type(x->dtype, y->dtype);
    return sema_binary(S, bop, tir_cast(A, x, t, loc), tir_cast(A, y, t, loc), loc);
}

static tir_expr *compare(sema *S, ast_op op, tir_expr *x, tir_expr *y, tlc_loc loc) {
    tir_binop bop = op == AOP_LT ? TB_LT : op == AOP_LE ? TB_LE : op == AOP_GT ? TB_GT
                  : op == AOP_GE ? TB_GE : op == AOP_EQ ? TB_EQ : TB_NE;
    tir_dtype t = tir_promote(x->dtype, y->dtype);
    return sema_binary(S, bop, tir_cast(S->arena, x, t, loc), tir_cast(S->arena, y, t, loc), loc);
}

static sv const_bool(sema *S, bool b, tlc_loc loc) {
    return sv_scalar(tir_int_typed(S->arena, b, TIR_BOOL, loc), loc);
}

/* == / != between compile-time non-numbers (dtypes, strings, None, policies). */
static bool compare_consts(sema *S, ast_op op, sv l, sv r, tlc_loc loc, sv *out);

/* Whether compile-time tuples l and r are equal, item by item (false
 * where an item is known only at run time). */
static bool tuples_equal(sema *S, sv l, sv r, tlc_loc loc, bool *eq) {
    *eq = l.u.tup.n == r.u.tup.n;
    for (int i = 0; i < l.u.tup.n && *eq; i++) {
        sv a = l.u.tup.items[i], b = r.u.tup.items[i], o;
        int64_t x, y;
        if (a.kind == SV_SCALAR && b.kind == SV_SCALAR) {
            if (!tir_expr_const_int(a.u.e, &x) || !tir_expr_const_int(b.u.e, &y)) return false;
            *eq = x == y;
        } else if (compare_consts(S, AOP_EQ, a, b, loc, &o) && o.kind == SV_SCALAR &&
                   tir_expr_const_int(o.u.e, &x)) {
            *eq = x != 0;
        } else {
            return false;
        }
    }
    return true;
}

static bool compare_consts(sema *S, ast_op op, sv l, sv r, tlc_loc loc, sv *out) {
    if (l.kind == SV_SCALAR && r.kind == SV_SCALAR) return false;
    if (op != AOP_EQ && op != AOP_NE) return false;
    bool eq;
    tir_dtype dl, dr;
    if ((l.kind == SV_DTYPE || l.kind == SV_STRING) && (r.kind == SV_DTYPE || r.kind == SV_STRING)) {
        if (l.kind == SV_STRING && r.kind == SV_STRING) eq = strcmp(l.u.str, r.u.str) == 0;
        else {
            bool okl = l.kind == SV_DTYPE ? (dl = l.u.dtype, true) : tir_dtype_parse(l.u.str, &dl);
            bool okr = r.kind == SV_DTYPE ? (dr = r.u.dtype, true) : tir_dtype_parse(r.u.str, &dr);
            eq = okl && okr && dl == dr;
        }
    } else if (l.kind == SV_NONE || r.kind == SV_NONE) {
        eq = l.kind == r.kind;
    } else if (l.kind == SV_POLICY && r.kind == SV_POLICY) {
        eq = l.u.policy == r.u.policy;
    } else if (l.kind == SV_TUPLE && r.kind == SV_TUPLE) {
        if (!tuples_equal(S, l, r, loc, &eq)) return false;
    } else {
        return false;
    }
    *out = const_bool(S, op == AOP_EQ ? eq : !eq, loc);
    return true;
}

/* A copy of a value's expression (a constant, or a value computed from
 * symbolic dims before the Kernel block), so that no node is shared. */
static tir_expr *copy_tree(sema *S, const tir_expr *x, tlc_loc loc, int depth) {
    tir_expr *c = TLC_NEW(S->arena, tir_expr);
    *c = *x;
    c->loc = loc;
    if (depth > 200) return c;
    switch (x->kind) {
    case TE_BINARY:
        c->u.bin.a = copy_tree(S, x->u.bin.a, loc, depth + 1);
        c->u.bin.b = copy_tree(S, x->u.bin.b, loc, depth + 1);
        break;
    case TE_UNARY: c->u.un.a = copy_tree(S, x->u.un.a, loc, depth + 1); break;
    case TE_CAST: c->u.cast.a = copy_tree(S, x->u.cast.a, loc, depth + 1); break;
    case TE_SELECT:
        c->u.sel.cond = copy_tree(S, x->u.sel.cond, loc, depth + 1);
        c->u.sel.a = copy_tree(S, x->u.sel.a, loc, depth + 1);
        c->u.sel.b = copy_tree(S, x->u.sel.b, loc, depth + 1);
        break;
    default: break;
    }
    return c;
}

static sv eval_name(sema *S, const ast_expr *e, const char *name) {
    sym *s = sema_lookup(S, name);
    sv v = sv_error();
    v.loc = e->loc;
    if (s) {
        switch (s->kind) {
        case SYM_CONST:
            if (s->origin == CONST_UNBOUND) {
                tir_var *dim = sema_bind_unbound(S, s);
                return sv_scalar(tir_var_ref(S->arena, dim, e->loc), e->loc);
            }
            if (s->origin == CONST_PYTHON) {
                if (s->reported_to == S->diag) return sv_error(); /* reported once */
                tlc_error(S->diag, e->loc, "module-level '%s' is not a compile-time constant, so no kernel can use it "
                          "unless -D %s=VALUE gives it", name, name);
                if (s->why) tlc_note(S->diag, s->loc, "'%s' is set here: %s", name, s->why);
                else tlc_note(S->diag, s->loc, "'%s' is set here", name);
                s->reported_to = S->diag;
                return sv_error();
            }
            v = s->value;
            v.loc = e->loc;
            if (v.kind == SV_SCALAR) v.u.e = copy_tree(S, v.u.e, e->loc, 0); /* fresh nodes at the use */
            return v;
        case SYM_VAR: return sv_scalar(tir_var_ref(S->arena, s->var, e->loc), e->loc);
        case SYM_BUFFER:
            v.kind = SV_BUFFER;
            v.u.buf = s->buf;
            return v;
        }
    }
    tir_dtype dt;
    if (tir_dtype_parse(name, &dt)) {
        v.kind = SV_DTYPE;
        v.u.dtype = dt;
        return v;
    }
    if (strncmp(name, "GemmWarpPolicy.", 15) == 0) {
        const char *p = name + 15;
        for (int i = 0; i < 3; i++)
            if (strcmp(p, tir_policy_name((tir_gemm_policy)i)) == 0) {
                v.kind = SV_POLICY;
                v.u.policy = (tir_gemm_policy)i;
                return v;
            }
        tlc_error(S->diag, e->loc, "unknown warp policy '%s' (expected Square, FullRow or FullCol)", p);
        return sv_error();
    }
    const builtin_spec *b = sema_builtin_lookup(name);
    if (b) {
        tlc_error(S->diag, e->loc, "'%s' is a builtin %s, not a value", name,
                  b->kind == BK_EXPR ? "function" : b->kind == BK_STMT ? "tile operation" : "construct");
        return sv_error();
    }
    if (sema_refuse_tilelang(S, name, e->loc)) return sv_error();
    const char *near = sema_suggest(S, name, false);
    if (!near) near = sema_suggest_dtype(name);
    if (near) tlc_error(S->diag, e->loc, "unknown name '%s'; did you mean '%s'?", name, near);
    else tlc_error(S->diag, e->loc, "unknown name '%s'", name);
    return sv_error();
}

/* The values an index takes when it is affine in loop variables of known
 * constant range not guarded by an `if` since their loop began. */
/* facts: every range the value is known to lie in (block indices too,
 * whatever `if` encloses it); else only where no run-time `if` may guard
 * the index (a tile's bounds check). */
static bool index_range(const sema *S, const tir_expr *e, int64_t *lo, int64_t *hi, int depth, bool facts) {
    if (!e || depth > 16) return false;
    switch (e->kind) {
    case TE_INT: *lo = *hi = e->u.ival; return true;
    case TE_VAR:
        for (int i = 0; facts && S->k && i < S->k->grid_rank; i++) {
            int64_t n;
            if (S->k->block_idx[i] == e->u.var && tir_expr_const_int(S->k->grid[i], &n) && n > 0) {
                *lo = 0;
                *hi = n - 1;
                return true;
            }
        }
        for (int i = S->nranges - 1; i >= 0; i--)
            if (S->ranges[i].v == e->u.var) {
                if (!facts && S->ranges[i].if_depth != S->if_depth) return false;
                *lo = S->ranges[i].lo;
                *hi = S->ranges[i].hi;
                return true;
            }
        return false;
    case TE_BINARY: {
        int64_t al, ah, bl, bh;
        if (!index_range(S, e->u.bin.a, &al, &ah, depth + 1, facts) ||
            !index_range(S, e->u.bin.b, &bl, &bh, depth + 1, facts))
            return false;
        const int64_t big = (int64_t)1 << 40, small = (int64_t)1 << 20; /* no overflow below */
        if (al < -big || ah > big || bl < -small || bh > small) return false;
        switch (e->u.bin.op) {
        case TB_ADD: *lo = al + bl; *hi = ah + bh; return true;
        case TB_SUB: *lo = al - bh; *hi = ah - bl; return true;
        case TB_MUL: {
            int64_t c[4] = {al * bl, al * bh, ah * bl, ah * bh};
            *lo = *hi = c[0];
            for (int i = 1; i < 4; i++) {
                if (c[i] < *lo) *lo = c[i];
                if (c[i] > *hi) *hi = c[i];
            }
            return true;
        }
        default: return false;
        }
    }
    default: return false;
    }
}

bool sema_index_range(const sema *S, const tir_expr *e, int64_t *lo, int64_t *hi) {
    return index_range(S, e, lo, hi, 0, true);
}

bool sema_check_index_bounds(sema *S, tir_buffer *b, int dim, tir_expr *idx, const ast_expr *at) {
    int64_t v, n = tir_buffer_dim(b, dim);
    if (n < 0) return true;
    if (!tir_expr_const_int(idx, &v)) {
        /* a tile's index that provably leaves it (a Parallel loop wider than
         * the fragment it walks) */
        int64_t lo, hi;
        if (b->scope == TIR_SCOPE_GLOBAL || !index_range(S, idx, &lo, &hi, 0, false) || (lo >= 0 && hi < n)) return true;
        tlc_error(S->diag, at->loc, "this index runs over %lld..%lld, outside dimension %d of '%s' (size %lld)",
                  (long long)lo, (long long)hi, dim, b->name, (long long)n);
        sema_note_decl(S, b);
        return false;
    }
    if (v < 0 || v >= n) {
        tlc_error(S->diag, at->loc, "index %lld is out of range for dimension %d of '%s' (size %lld)",
                  (long long)v, dim, b->name, (long long)n);
        sema_note_decl(S, b);
        return false;
    }
    return true;
}

tir_expr *sema_index(sema *S, const ast_expr *e) {
    tir_expr *x = sema_eval_scalar(S, e);
    if (!x) return NULL;
    if (tir_dtype_is_float(x->dtype) || x->dtype == TIR_BOOL) {
        tlc_error(S->diag, e->loc, "index must be an integer, got %s", tir_dtype_name(x->dtype));
        return NULL;
    }
    /* indices are int32 or int64 from here on (a uint32 one needs int64) */
    if (x->dtype != TIR_I32 && x->dtype != TIR_I64)
        x = tir_cast(S->arena, x, x->dtype == TIR_U32 ? TIR_I64 : TIR_I32, e->loc);
    return x;
}

static bool const_equal(sema *S, sv a, sv b, tlc_loc loc, bool *eq);

/* {k: v, ...}[key], a table looked up at compile time (TileLang's
 * `{T.float32: 4, T.float16: 2}[dtype]`): the value of the key equal to
 * `key`, which must be known. */
static sv eval_dict_lookup(sema *S, const ast_expr *e) {
    const ast_expr *d = e->u.sub.value;
    if (e->u.sub.nindex != 1 || e->u.sub.index[0]->kind == AE_SLICE) {
        tlc_error(S->diag, e->loc, "a dict is looked up with one key");
        return sv_error();
    }
    sv key = sema_eval(S, e->u.sub.index[0]);
    if (key.kind == SV_ERROR) return key;
    for (int i = 0; i < d->u.dict.n; i++) {
        sv k = sema_eval(S, d->u.dict.keys[i]);
        if (k.kind == SV_ERROR) return k;
        bool eq;
        if (!const_equal(S, k, key, e->loc, &eq)) {
            tlc_error(S->diag, e->u.sub.index[0]->loc, "a dict's key and the key looked up must be known at compile "
                      "time");
            return sv_error();
        }
        if (eq) return sema_eval(S, d->u.dict.values[i]);
    }
    char t[128];
    sema_describe_sv(&key, t, sizeof t);
    tlc_error(S->diag, e->u.sub.index[0]->loc, "%s is not a key of this dict", t);
    return sv_error();
}

static sv eval_subscript(sema *S, const ast_expr *e) {
    if (e->u.sub.value->kind == AE_DICT) return eval_dict_lookup(S, e);
    sv base = sema_eval(S, e->u.sub.value);
    if (base.kind == SV_ERROR) return base;
    sv item;
    if (sema_py_subscript(S, e, base, &item)) return item;
    if (base.kind != SV_BUFFER) {
        char d[128];
        sema_describe_sv(&base, d, sizeof d);
        tlc_error(S->diag, e->u.sub.value->loc, "cannot index %s", d);
        return sv_error();
    }
    tir_buffer *b = base.u.buf;
    if (b->scope == TIR_SCOPE_VAR) {
        tlc_error(S->diag, e->loc, "'%s' is a scalar variable (alloc_var): use it without indices", b->name);
        sema_note_decl(S, b);
        return sv_error();
    }
    if (!sema_check_index_count(S, b, e)) return sv_error();
    tir_expr **idx = TLC_NEW_ARRAY(S->arena, tir_expr *, b->rank ? b->rank : 1);
    bool ok = true;
    for (int i = 0; i < b->rank; i++) {
        const ast_expr *ie = e->u.sub.index[i];
        if (ie->kind == AE_SLICE) {
            tlc_error(S->diag, ie->loc, "a slice of '%s' is a region, not a value: use it in a tile operation such as copy()", b->name);
            ok = false;
            continue;
        }
        idx[i] = sema_index(S, ie);
        if (!idx[i] || !sema_check_index_bounds(S, b, i, idx[i], ie)) ok = false;
    }
    if (!ok) return sv_error();
    return sv_scalar(tir_load(S->arena, b, sema_global_layout_index(S, b, idx, e->loc), e->loc), e->loc);
}

static tir_expr *to_float(sema *S, tir_expr *x, tlc_loc loc) {
    tir_dtype t = tir_dtype_is_float(x->dtype) ? arith_type(x->dtype, x->dtype) : TIR_F32;
    return tir_cast(S->arena, x, t, loc);
}

static tir_expr *ceildiv(sema *S, tir_expr *a, tir_expr *b, tlc_loc loc) {
    tir_dtype t = arith_type(a->dtype, b->dtype);
    a = tir_cast(S->arena, a, t, loc);
    b = tir_cast(S->arena, b, t, loc);
    int64_t bv;
    if (tir_expr_const_int(b, &bv) && bv > 0 && a->kind != TE_INT) {
        /* (a + b - 1) // b: the usual form for a positive constant divisor */
        tir_expr *s = sema_binary(S, TB_ADD, a, tir_int_typed(S->arena, bv - 1, t, loc), loc);
        return s ? sema_binary(S, TB_FLOORDIV, s, b, loc) : NULL;
    }
    /* -((-a) // b) is exact for any sign */
    tir_expr *na = sema_binary(S, TB_SUB, tir_int_typed(S->arena, 0, t, loc), a, loc);
    tir_expr *q = na ? sema_binary(S, TB_FLOORDIV, na, b, loc) : NULL;
    return q ? sema_binary(S, TB_SUB, tir_int_typed(S->arena, 0, t, loc), q, loc) : NULL;
}

static tir_unop math_unop(builtin_id id) {
    switch (id) {
    case B_EXP: return TU_EXP;
    case B_EXP2: return TU_EXP2;
    case B_LOG: return TU_LOG;
    case B_LOG2: return TU_LOG2;
    case B_RSQRT: return TU_RSQRT;
    case B_TANH: return TU_TANH;
    case B_SIGMOID: return TU_SIGMOID;
    case B_ERF: return TU_ERF;
    case B_SIN: return TU_SIN;
    case B_COS: return TU_COS;
    case B_FLOOR: return TU_FLOOR;
    case B_CEIL: return TU_CEIL;
    case B_LOG1P: return TU_LOG1P;
    default: return TU_SQRT;
    }
}

/* C's division (rounding toward zero) and its remainder, from the floor
 * forms: where the remainder is not zero and the signs of a and b differ,
 * the quotient is one more and the remainder is r - b. */
static tir_expr *truncdiv(sema *S, tir_expr *a, tir_expr *b, bool want_mod, tlc_loc loc) {
    if (!both_int(a, b)) {
        tlc_error(S->diag, loc, "'%s' needs integer operands, got %s and %s", want_mod ? "truncmod" : "truncdiv",
                  tir_dtype_name(a->dtype), tir_dtype_name(b->dtype));
        return NULL;
    }
    tir_dtype t = arith_type(a->dtype, b->dtype);
    a = tir_cast(S->arena, a, t, loc);
    b = tir_cast(S->arena, b, t, loc);
    tir_expr *q = sema_binary(S, TB_FLOORDIV, a, b, loc);
    tir_expr *r = q ? sema_binary(S, TB_FLOORMOD, a, b, loc) : NULL;
    if (!r) return NULL;
    tir_expr *zero = tir_int_typed(S->arena, 0, t, loc);
    tir_expr *fix = tir_binary(S->arena, TB_AND, tir_binary(S->arena, TB_NE, r, zero, loc),
                               tir_binary(S->arena, TB_NE, tir_binary(S->arena, TB_LT, a, zero, loc),
                                          tir_binary(S->arena, TB_LT, b, zero, loc), loc), loc);
    tir_expr *fixed = want_mod ? tir_binary(S->arena, TB_SUB, r, b, loc)
                               : tir_binary(S->arena, TB_ADD, q, tir_int_typed(S->arena, 1, t, loc), loc);
    return tir_select(S->arena, fix, fixed, want_mod ? r : q, loc);
}

/* x.astype(dtype): a cast of a scalar value. */
static sv eval_astype(sema *S, const ast_expr *e) {
    const ast_expr *f = e->u.call.func;
    if (e->u.call.nargs + e->u.call.nkwargs != 1 ||
        (e->u.call.nkwargs == 1 && (!e->u.call.kwargs[0].name || strcmp(e->u.call.kwargs[0].name, "dtype") != 0))) {
        tlc_error(S->diag, e->loc, "'astype' takes one argument, the dtype");
        return sv_error();
    }
    const ast_expr *dt = e->u.call.nargs ? e->u.call.args[0] : e->u.call.kwargs[0].value;
    tir_expr *x = sema_eval_scalar(S, f->u.attr.value);
    tir_dtype t;
    bool okt = sema_eval_dtype(S, dt, &t);
    if (!x || !okt) return sv_error();
    return sv_scalar(tir_cast(S->arena, x, t, e->loc), e->loc);
}

/* `value.attr` on a value rather than a module: T.dtype names nothing of
 * a value, A.dtype does. */
static bool is_value_attr(sema *S, const ast_expr *f, const char *attr) {
    if (f->kind != AE_ATTR || strcmp(f->u.attr.name, attr) != 0) return false;
    const char *name = sema_dotted_name(S, f);
    return !name || strcmp(name, attr) != 0;
}

/* buf.dtype (a buffer's element type), x.dtype (a scalar's). */
static sv eval_dtype_attr(sema *S, const ast_expr *e) {
    sv v = sema_eval(S, e->u.attr.value);
    if (v.kind == SV_ERROR) return v;
    sv r = sv_error();
    r.loc = e->loc;
    if (v.kind == SV_BUFFER) r.u.dtype = v.u.buf->dtype;
    else if (v.kind == SV_SCALAR) r.u.dtype = v.u.e->dtype;
    else {
        char d[128];
        sema_describe_sv(&v, d, sizeof d);
        tlc_error(S->diag, e->loc, "'.dtype' needs a buffer or a value, got %s", d);
        return r;
    }
    r.kind = SV_DTYPE;
    return r;
}

/* dtype.bits (TVM's DataType(dtype).bits): the dtype's width, 1 for bool
 * as TVM counts it. */
static sv eval_bits_attr(sema *S, const ast_expr *e) {
    tir_dtype t;
    if (!sema_eval_dtype(S, e->u.attr.value, &t)) return sv_error();
    return sv_scalar(tir_int(S->arena, t == TIR_BOOL ? 1 : 8 * tir_dtype_bytes(t), e->loc), e->loc);
}

/* buf.shape: its dims as a tuple (T.Layout(dQ.shape, ...)). */
static sv eval_shape_attr(sema *S, const ast_expr *e) {
    sv v = sema_eval(S, e->u.attr.value);
    if (v.kind == SV_ERROR) return v;
    if (v.kind != SV_BUFFER) {
        char d[128];
        sema_describe_sv(&v, d, sizeof d);
        tlc_error(S->diag, e->loc, "'.shape' needs a buffer, got %s", d);
        return sv_error();
    }
    tir_buffer *b = v.u.buf;
    sv r = sv_error();
    r.kind = SV_TUPLE;
    r.loc = e->loc;
    r.u.tup.n = b->rank;
    r.u.tup.items = TLC_NEW_ARRAY(S->arena, sv, (size_t)b->rank + 1);
    for (int i = 0; i < b->rank; i++) r.u.tup.items[i] = sv_scalar(b->shape[i], e->loc);
    return r;
}

/* This thread's index along a thread axis (T.get_thread_binding): one
 * variable per axis and kernel, which makes the kernel thread-indexed
 * (sema_thread_varying.c checks what may depend on it). */
static tir_expr *thread_index(sema *S, int axis, tlc_loc loc) {
    if (!S->k || !S->kernel_with) {
        tlc_error(S->diag, loc, "get_thread_binding() is a thread's index: use it inside 'with T.Kernel'");
        return NULL;
    }
    tir_kernel *k = S->k;
    if (!k->thread_idx[axis]) {
        static const char *const names[] = {"thread_x", "thread_y", "thread_z"};
        tir_var *v = sema_new_var(S, names[axis], TV_THREAD_IDX, TIR_I32, loc);
        v->axis = axis;
        k->thread_idx[axis] = v;
        k->thread_indexed = true;
    }
    return tir_var_ref(S->arena, k->thread_idx[axis], loc);
}

/* A warp shuffle (tvm_warp_shuffle, shfl_sync, shfl_xor): scalar code of
 * a kernel, which it makes thread-indexed (its value is the thread's
 * own); the width a power of two up to 32, the whole warp taking part. */
static tir_expr *warp_shuffle(sema *S, const builtin_spec *b, const sema_args *a, tlc_loc loc) {
    bool tvm = b->id == B_WARP_SHUFFLE;
    const ast_expr *value = a->arg[tvm ? 1 : 0], *lane = a->arg[tvm ? 2 : 1], *width = a->arg[tvm ? 3 : 2];
    if (!S->k || !S->kernel_with) {
        tlc_error(S->diag, loc, "%s() is a warp shuffle: use it inside 'with T.Kernel'", b->name);
        return NULL;
    }
    if (!sema_check_not_in_parallel(S, loc, "a warp shuffle")) return NULL;
    int64_t w = 32, c;
    if (width && !sema_eval_const_int(S, width, "a shuffle's width", &w)) return NULL;
    if (w < 1 || w > 32 || (w & (w - 1))) {
        tlc_error(S->diag, width->loc, "a shuffle's width is a power of two up to 32, got %lld", (long long)w);
        return NULL;
    }
    if (tvm) {
        /* warp_size says how TVM sizes warps; CUDA's shuffle reads width alone */
        if (!sema_eval_const_int(S, a->arg[4], "tvm_warp_shuffle's warp_size", &c)) return NULL;
        if (!sema_eval_const_int(S, a->arg[0], "tvm_warp_shuffle's mask", &c)) return NULL;
        if ((c & 0xFFFFFFFFLL) != 0xFFFFFFFFLL) {
            tlc_error(S->diag, a->arg[0]->loc, "tlc's shuffles take the whole warp: the mask is 0xffffffff");
            return NULL;
        }
    }
    tir_expr *x = sema_eval_scalar(S, value);
    tir_expr *l = sema_eval_int(S, lane, "a shuffle's lane");
    if (!x || !l) return NULL;
    if (x->dtype == TIR_I64) {
        tlc_error(S->diag, value->loc, "a shuffle moves values of up to 32 bits, got int64");
        return NULL;
    }
    S->k->thread_indexed = true;
    return tir_shuffle(S->arena, x, tir_cast(S->arena, l, TIR_I32, loc), (int)w, b->id == B_SHFL_XOR, loc);
}

static sv eval_call(sema *S, const ast_expr *e) {
    const ast_expr *f = e->u.call.func;
    tlc_arena *A = S->arena;
    if (f->kind == AE_NAME) {
        sym *s = sema_lookup(S, f->u.name);
        if (s && s->kind == SYM_CONST && s->value.kind == SV_ERROR) return sv_error(); /* reported where it was set */
        if (s) {
            tlc_error(S->diag, f->loc, "'%s' is not callable", f->u.name);
            return sv_error();
        }
        const ast_funcdef *h = sema_helper_named(S, f->u.name);
        if (h) return sema_py_helper_call(S, h, e);
    }
    sv py;
    if (sema_py_method(S, e, &py)) return py;
    if (is_value_attr(S, f, "astype")) return eval_astype(S, e);
    const char *name = sema_dotted_name(S, f);
    if (!name) {
        tlc_error(S->diag, f->loc, "this expression cannot be called");
        return sv_error();
    }
    if (sema_py_call(S, e, name, &py)) return py;
    tir_dtype cast_to;
    if (!strcmp(name, "float") && e->u.call.nargs == 1 && !e->u.call.nkwargs &&
        e->u.call.args[0]->kind == AE_STRING) { /* Python's float("-inf") */
        const char *str = e->u.call.args[0]->u.str;
        char *end;
        double d = strtod(str, &end);
        while (*end == ' ' || *end == '\t') end++;
        if (end == str || *end) {
            tlc_error(S->diag, e->u.call.args[0]->loc, "float(\"%s\"): not a number", str);
            return sv_error();
        }
        return sv_scalar(tir_float(A, d, TIR_F32, e->loc), e->loc);
    }
    if (tir_dtype_parse(name, &cast_to)) { /* float32(x) */
        if (e->u.call.nargs != 1 || e->u.call.nkwargs != 0) {
            tlc_error(S->diag, e->loc, "'%s(x)' takes exactly one argument", name);
            return sv_error();
        }
        tir_expr *x = sema_eval_scalar(S, e->u.call.args[0]);
        return x ? sv_scalar(tir_cast(A, x, cast_to, e->loc), e->loc) : sv_error();
    }
    const builtin_spec *b = sema_builtin_lookup(name);
    if (!b) {
        if (sema_refuse_tilelang(S, name, f->loc)) return sv_error();
        for (int i = 0; S->module && i < S->module->nskipped; i++)
            if (!strcmp(S->module->skipped[i].name, name)) {
                tlc_error(S->diag, f->loc, "'%s' is a Python function of this file that tlc cannot run at compile "
                          "time", name);
                tlc_note(S->diag, S->module->skipped[i].loc, "tlc runs a function of assignments, if, for, assert "
                         "and return, without *args, try, while, with or nested functions; '%s' is here",
                         name);
                return sv_error();
            }
        const char *near = sema_suggest(S, name, true);
        if (near) tlc_error(S->diag, f->loc, "unknown function '%s'; did you mean '%s'?", name, near);
        else tlc_error(S->diag, f->loc, "unknown function '%s'", name);
        return sv_error();
    }
    if (b->id == B_ATOMIC_ADD && S->in_kernel) {
        /* atomic_add(..., return_prev=True) inside an expression: the add
         * is a statement before the one being read, its value a var */
        tir_buffer *prev = sema_atomic_add_prev(S, b, e, "atomic_add");
        return prev ? sv_scalar(tir_load(S->arena, prev, NULL, e->loc), e->loc) : sv_error();
    }
    if (b->kind == BK_STMT) {
        tlc_error(S->diag, e->loc, "'%s' is a tile operation and has no value; write it as a statement", b->name);
        return sv_error();
    }
    if (b->kind == BK_ALLOC) {
        tlc_error(S->diag, e->loc, "'%s' must be the whole right-hand side of an assignment (X = %s(...))", b->name, b->name);
        return sv_error();
    }
    if (b->id == B_EMPTY) {
        tlc_error(S->diag, e->loc, "T.empty declares a tensor that an eager @tilelang.jit function returns: write "
                  "'C = T.empty(shape, dtype)' before 'with T.Kernel(...)', and 'return C' after it");
        return sv_error();
    }
    if (b->kind != BK_EXPR) {
        tlc_error(S->diag, e->loc, "'%s' cannot be used in an expression", b->name);
        return sv_error();
    }
    sema_args args;
    if (!sema_bind_args(S, b, e, &args)) return sv_error();
    tlc_loc loc = e->loc;
    switch (b->id) {
    case B_EXP: case B_EXP2: case B_LOG: case B_LOG2: case B_RSQRT: case B_SQRT: case B_TANH: case B_SIGMOID:
    case B_ERF: case B_SIN: case B_COS: case B_FLOOR: case B_CEIL: case B_LOG1P: {
        tir_expr *x = sema_eval_scalar(S, args.arg[0]);
        if (!x) return sv_error();
        return sv_scalar(tir_unary(A, math_unop(b->id), to_float(S, x, loc), loc), loc);
    }
    case B_POW: case B_FLOORDIV: case B_FLOORMOD: {
        tir_expr *x = sema_eval_scalar(S, args.arg[0]);
        tir_expr *y = sema_eval_scalar(S, args.arg[1]);
        if (!x || !y) return sv_error();
        ast_op op = b->id == B_POW ? AOP_POW : b->id == B_FLOORDIV ? AOP_FLOORDIV : AOP_MOD;
        return sv_scalar(sema_arith(S, op, x, y, loc), loc);
    }
    case B_TRUNCDIV: case B_TRUNCMOD: {
        tir_expr *x = sema_eval_scalar(S, args.arg[0]);
        tir_expr *y = sema_eval_scalar(S, args.arg[1]);
        if (!x || !y) return sv_error();
        return sv_scalar(truncdiv(S, x, y, b->id == B_TRUNCMOD, loc), loc);
    }
    case B_CLAMP: {
        tir_expr *x = sema_eval_scalar(S, args.arg[0]);
        tir_expr *lo = sema_eval_scalar(S, args.arg[1]);
        tir_expr *hi = sema_eval_scalar(S, args.arg[2]);
        if (!x || !lo || !hi) return sv_error();
        /* TileLang's order: max with the lower bound first, then min */
        tir_dtype t = arith_type(arith_type(x->dtype, lo->dtype), hi->dtype);
        tir_expr *m = sema_binary(S, TB_MAX, tir_cast(A, x, t, loc), tir_cast(A, lo, t, loc), loc);
        return sv_scalar(m ? sema_binary(S, TB_MIN, m, tir_cast(A, hi, t, loc), loc) : NULL, loc);
    }
    case B_ABS: {
        tir_expr *x = sema_eval_scalar(S, args.arg[0]);
        if (!x) return sv_error();
        if (tir_dtype_is_float(x->dtype)) x = to_float(S, x, loc);
        else if (x->dtype == TIR_BOOL) x = tir_cast(A, x, TIR_I32, loc);
        return sv_scalar(tir_unary(A, TU_ABS, x, loc), loc);
    }
    case B_MAX: case B_MIN: {
        tir_expr *x = sema_eval_scalar(S, args.arg[0]);
        tir_expr *y = sema_eval_scalar(S, args.arg[1]);
        if (!x || !y) return sv_error();
        tir_dtype t = arith_type(x->dtype, y->dtype);
        return sv_scalar(sema_binary(S, b->id == B_MAX ? TB_MAX : TB_MIN, tir_cast(A, x, t, loc),
                                     tir_cast(A, y, t, loc), loc), loc);
    }
    case B_INFINITY: {
        tir_dtype t;
        if (!sema_eval_dtype(S, args.arg[0], &t)) return sv_error();
        if (!tir_dtype_is_float(t)) {
            tlc_error(S->diag, args.arg[0]->loc, "infinity() needs a floating-point dtype, got %s", tir_dtype_name(t));
            return sv_error();
        }
        return sv_scalar(tir_float(A, INFINITY, t, loc), loc);
    }
    case B_CAST: case B_CAST_DTYPE_FIRST: { /* cast(x, dtype); TVM's Cast(dtype, value) */
        int xi = b->id == B_CAST ? 0 : 1;
        tir_expr *x = sema_eval_scalar(S, args.arg[xi]);
        tir_dtype t;
        bool okt = sema_eval_dtype(S, args.arg[1 - xi], &t);
        if (!x || !okt) return sv_error();
        return sv_scalar(tir_cast(A, x, t, loc), loc);
    }
    case B_REINTERPRET: { /* reinterpret(dtype, value); TileLang also writes reinterpret(value, dtype=...) */
        tir_dtype t;
        sv first = sema_eval(S, args.arg[0]);
        if (first.kind == SV_ERROR) return first;
        bool value_first = first.kind == SV_SCALAR;
        if (!sema_eval_dtype(S, args.arg[value_first ? 1 : 0], &t)) return sv_error();
        tir_expr *x = value_first ? first.u.e : sema_eval_scalar(S, args.arg[1]);
        if (!x) return sv_error();
        int xb = tir_dtype_bytes(x->dtype), tb = tir_dtype_bytes(t);
        if (x->dtype == TIR_BOOL || t == TIR_BOOL || xb < tb || (xb > tb && tir_dtype_is_float(x->dtype))) {
            tlc_error(S->diag, loc, "reinterpret() takes a value of %s's size (%d byte%s), got %s", tir_dtype_name(t), tb,
                      tb == 1 ? "" : "s", tir_dtype_name(x->dtype));
            return sv_error();
        }
        /* a wider integer (C's promotion made uint8 & uint8 an int32) gives its low bytes */
        static const tir_dtype low[] = {TIR_U8, TIR_U8, TIR_U16, TIR_U32, TIR_U32};
        if (xb > tb) x = tir_cast(A, x, low[tb], loc);
        return sv_scalar(tir_reinterpret(A, x, t, loc), loc);
    }
    case B_THREAD_BINDING: {
        int64_t axis = 0;
        if (args.arg[0] && !sema_eval_const_int(S, args.arg[0], "get_thread_binding() axis", &axis)) return sv_error();
        if (axis < 0 || axis > 2) {
            tlc_error(S->diag, args.arg[0]->loc, "get_thread_binding(%lld): the thread axis is 0, 1 or 2", (long long)axis);
            return sv_error();
        }
        tir_expr *t = thread_index(S, (int)axis, loc);
        return t ? sv_scalar(t, loc) : sv_error();
    }
    case B_THREAD_BINDING_RANGE: {
        /* the whole axis: begin 0, end the block's threads along it */
        int64_t begin, end;
        sv th = sema_eval(S, args.arg[2]);
        static const char *const axes[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
        int axis = -1;
        for (int i = 0; th.kind == SV_STRING && i < 3; i++)
            if (!strcmp(th.u.str, axes[i])) axis = i;
        if (axis < 0) {
            if (th.kind != SV_ERROR)
                tlc_error(S->diag, args.arg[2]->loc, "thread_binding's thread is \"threadIdx.x\", \"threadIdx.y\" or "
                          "\"threadIdx.z\"");
            return sv_error();
        }
        if (!sema_eval_const_int(S, args.arg[0], "thread_binding's begin", &begin) ||
            !sema_eval_const_int(S, args.arg[1], "thread_binding's end", &end))
            return sv_error();
        int64_t along = S->k ? S->k->thread_dims[axis] : 0;
        if (S->k && S->kernel_with && (begin != 0 || end != along)) {
            tlc_error(S->diag, loc, "thread_binding(%lld, %lld, \"%s\"): tlc binds a whole thread axis, 0 to the "
                      "block's %lld threads along it", (long long)begin, (long long)end, axes[axis], (long long)along);
            return sv_error();
        }
        tir_expr *t = thread_index(S, axis, loc);
        return t ? sv_scalar(t, loc) : sv_error();
    }
    case B_THREAD_BINDINGS: {
        sv r = sv_error();
        r.kind = SV_TUPLE;
        r.loc = loc;
        r.u.tup.n = 3;
        r.u.tup.items = TLC_NEW_ARRAY(A, sv, 3);
        for (int i = 0; i < 3; i++) {
            tir_expr *t = thread_index(S, i, loc);
            if (!t) return sv_error();
            r.u.tup.items[i] = sv_scalar(t, loc);
        }
        return r;
    }
    case B_WARP_SHUFFLE: case B_SHFL_SYNC: case B_SHFL_XOR: {
        tir_expr *t = warp_shuffle(S, b, &args, loc);
        return t ? sv_scalar(t, loc) : sv_error();
    }
    case B_CEILDIV: {
        tir_expr *x = sema_eval_int(S, args.arg[0], "ceildiv() argument");
        tir_expr *y = sema_eval_int(S, args.arg[1], "ceildiv() argument");
        if (!x || !y) return sv_error();
        return sv_scalar(ceildiv(S, x, y, loc), loc);
    }
    case B_IF_THEN_ELSE: {
        tir_expr *c = sema_to_bool(S, sema_eval_scalar(S, args.arg[0]), args.arg[0], "if_then_else() condition");
        tir_expr *x = sema_eval_scalar(S, args.arg[1]);
        tir_expr *y = sema_eval_scalar(S, args.arg[2]);
        if (!c || !x || !y) return sv_error();
        tir_dtype t = tir_promote(x->dtype, y->dtype);
        return sv_scalar(tir_select(A, c, tir_cast(A, x, t, loc), tir_cast(A, y, t, loc), loc), loc);
    }
    case B_MAKE_SWIZZLED_LAYOUT: {
        sv v = sema_eval(S, args.arg[0]);
        if (v.kind == SV_ERROR) return v;
        if (v.kind != SV_BUFFER) {
            tlc_error(S->diag, args.arg[0]->loc, "make_swizzled_layout() expects a shared buffer");
            return sv_error();
        }
        v.kind = SV_LAYOUT;
        v.loc = loc;
        return v;
    }
    case B_LAYOUT: return sema_layout_call(S, &args, loc);
    case B_DYNAMIC: {
        sv n = sema_eval(S, args.arg[0]);
        if (n.kind == SV_ERROR) return n;
        if (n.kind != SV_STRING) {
            tlc_error(S->diag, args.arg[0]->loc, "%s() expects a name string", b->name);
            return sv_error();
        }
        if (args.arg[1]) {
            tir_dtype t;
            if (!sema_eval_dtype(S, args.arg[1], &t)) return sv_error();
        }
        if (S->allow_dynamic) {
            n.kind = SV_DYNAMIC;
            n.loc = loc;
            return n;
        }
        if (S->k && !S->in_kernel) return sema_const_dims(S, e, n.u.str, true); /* M, N = T.dynamic("M, N") */
        tlc_error(S->diag, loc, "%s() is the default of a @jit parameter, or assigned before 'with Kernel(...)'", b->name);
        return sv_error();
    }
    case B_CONST: { /* M, N = T.const("M, N"): dims bound from the tensors at launch */
        sv n = sema_eval(S, args.arg[0]);
        if (n.kind == SV_ERROR) return n;
        if (n.kind == SV_SCALAR && n.u.e->kind != TE_VAR) { /* TVM's tir.const(value, dtype): a typed constant */
            tir_dtype t = n.u.e->dtype;
            if (args.arg[1] && !sema_eval_dtype(S, args.arg[1], &t)) return sv_error();
            if (n.u.e->kind != TE_INT && n.u.e->kind != TE_FLOAT) {
                tlc_error(S->diag, args.arg[0]->loc, "tir.const() takes a number known during compilation");
                return sv_error();
            }
            return sv_scalar(tir_cast(A, n.u.e, t, loc), loc);
        }
        if (n.kind != SV_STRING) {
            tlc_error(S->diag, args.arg[0]->loc, "T.const() expects a string of names, such as \"M, N\"");
            return sv_error();
        }
        if (args.arg[1]) {
            tir_dtype t;
            if (!sema_eval_dtype(S, args.arg[1], &t)) return sv_error();
        }
        if (!S->k || S->in_kernel) {
            tlc_error(S->diag, loc, "T.const() declares dimensions of a kernel's tensors: assign it before 'with Kernel(...)'");
            return sv_error();
        }
        return sema_const_dims(S, e, n.u.str, false);
    }
    default:
        tlc_error(S->diag, loc, "'%s' cannot be used in an expression", b->name);
        return sv_error();
    }
}

static sv eval_seq(sema *S, const ast_expr *e) {
    sv v = sv_error();
    v.kind = SV_TUPLE;
    v.loc = e->loc;
    v.u.tup.n = e->u.seq.n;
    v.u.tup.items = TLC_NEW_ARRAY(S->arena, sv, e->u.seq.n ? e->u.seq.n : 1);
    bool ok = true;
    for (int i = 0; i < e->u.seq.n; i++) {
        v.u.tup.items[i] = sema_eval(S, e->u.seq.items[i]);
        if (v.u.tup.items[i].kind == SV_ERROR) ok = false;
    }
    return ok ? v : sv_error();
}

static sv eval_binop(sema *S, const ast_expr *e) {
    sv l = sema_eval(S, e->u.bin.lhs), r = sema_eval(S, e->u.bin.rhs);
    if (l.kind == SV_ERROR || r.kind == SV_ERROR) return sv_error();
    sv seq;
    if (sema_py_binop(S, e, l, r, &seq)) return seq;
    tir_expr *x = sema_to_scalar(S, l, e->u.bin.lhs), *y = sema_to_scalar(S, r, e->u.bin.rhs);
    if (!x || !y) return sv_error();
    return sv_scalar(sema_arith(S, e->u.bin.op, x, y, e->loc), e->loc);
}

/* Whether two compile-time values are equal; false when either is not
 * known at compile time. */
static bool const_equal(sema *S, sv a, sv b, tlc_loc loc, bool *eq) {
    sv out;
    if (compare_consts(S, AOP_EQ, a, b, loc, &out)) {
        *eq = out.u.e->u.ival != 0;
        return true;
    }
    if (a.kind == SV_SCALAR && b.kind == SV_SCALAR) {
        bool ca = a.u.e->kind == TE_INT || a.u.e->kind == TE_FLOAT, cb = b.u.e->kind == TE_INT || b.u.e->kind == TE_FLOAT;
        if (!ca || !cb) return false;
        tir_expr *c = compare(S, AOP_EQ, a.u.e, b.u.e, loc);
        if (!c || c->kind != TE_INT) return false;
        *eq = c->u.ival != 0;
        return true;
    }
    bool known = (a.kind != SV_SCALAR || a.u.e->kind == TE_INT || a.u.e->kind == TE_FLOAT) &&
                 (b.kind != SV_SCALAR || b.u.e->kind == TE_INT || b.u.e->kind == TE_FLOAT);
    *eq = false; /* values of different kinds (a number and a string) */
    return known && a.kind != SV_BUFFER && b.kind != SV_BUFFER;
}

/* Python's `x is None`, `x is not None`, `x in (a, b)`, `x not in "ab"`,
 * as TileLang factories use them on their parameters: compile-time values
 * only. */
static sv eval_identity_or_membership(sema *S, const ast_expr *e) {
    ast_op op = e->u.bin.op;
    if (e->u.bin.lhs->kind == AE_COMPARE) {
        tlc_error(S->diag, e->loc, "'%s' cannot be chained with another comparison", ast_op_str(op));
        return sv_error();
    }
    sv l = sema_eval(S, e->u.bin.lhs), r = sema_eval(S, e->u.bin.rhs);
    if (l.kind == SV_ERROR || r.kind == SV_ERROR) return sv_error();
    bool yes = false;
    if (op == AOP_IS || op == AOP_ISNOT) {
        if (!const_equal(S, l, r, e->loc, &yes)) {
            tlc_error(S->diag, e->loc, "'%s' compares compile-time values (such as None); use '==' or '!=' on "
                      "values known only at run time", ast_op_str(op));
            return sv_error();
        }
        return const_bool(S, op == AOP_IS ? yes : !yes, e->loc);
    }
    if (r.kind == SV_STRING && l.kind == SV_STRING) {
        yes = strstr(r.u.str, l.u.str) != NULL;
    } else if (r.kind == SV_TUPLE) {
        for (int i = 0; i < r.u.tup.n && !yes; i++) {
            bool eq;
            if (!const_equal(S, l, r.u.tup.items[i], e->loc, &eq)) {
                char msg[96];
                snprintf(msg, sizeof msg, "'%s' tests compile-time values", ast_op_str(op));
                if (!(l.kind == SV_SCALAR && sema_unbound_error(S, l.u.e, e->loc, msg)))
                    tlc_error(S->diag, e->loc, "%s; this one is known only at run time", msg);
                return sv_error();
            }
            yes = eq;
        }
    } else {
        tlc_error(S->diag, e->u.bin.rhs->loc, "'%s' needs a tuple, a list or a string of compile-time values "
                  "on its right", ast_op_str(op));
        return sv_error();
    }
    return const_bool(S, op == AOP_IN ? yes : !yes, e->loc);
}

static sv eval_compare(sema *S, const ast_expr *e) {
    const ast_expr *lhs = e->u.bin.lhs;
    ast_op op = e->u.bin.op;
    if (op == AOP_IS || op == AOP_ISNOT || op == AOP_IN || op == AOP_NOTIN) return eval_identity_or_membership(S, e);
    if (lhs->kind == AE_COMPARE && (lhs->u.bin.op == AOP_IS || lhs->u.bin.op == AOP_ISNOT ||
                                    lhs->u.bin.op == AOP_IN || lhs->u.bin.op == AOP_NOTIN)) {
        tlc_error(S->diag, e->loc, "'%s' cannot be chained with another comparison", ast_op_str(lhs->u.bin.op));
        return sv_error();
    }
    /* a < b < c arrives as (a < b) < c: evaluate as (a < b) and (b < c) */
    if (lhs->kind == AE_COMPARE) {
        sv first = sema_eval(S, lhs);
        sv mid = sema_eval(S, lhs->u.bin.rhs), r = sema_eval(S, e->u.bin.rhs);
        if (first.kind == SV_ERROR || mid.kind == SV_ERROR || r.kind == SV_ERROR) return sv_error();
        sv second;
        if (!compare_consts(S, e->u.bin.op, mid, r, e->loc, &second)) {
            tir_expr *x = sema_to_scalar(S, mid, lhs->u.bin.rhs), *y = sema_to_scalar(S, r, e->u.bin.rhs);
            if (!x || !y) return sv_error();
            second = sv_scalar(compare(S, e->u.bin.op, x, y, e->loc), e->loc);
            if (second.kind == SV_ERROR) return second;
        }
        tir_expr *a = sema_to_scalar(S, first, lhs);
        if (!a) return sv_error();
        return sv_scalar(sema_binary(S, TB_AND, a, second.u.e, e->loc), e->loc);
    }
    sv l = sema_eval(S, lhs), r = sema_eval(S, e->u.bin.rhs);
    if (l.kind == SV_ERROR || r.kind == SV_ERROR) return sv_error();
    sv out;
    if (compare_consts(S, e->u.bin.op, l, r, e->loc, &out)) return out;
    tir_expr *x = sema_to_scalar(S, l, lhs), *y = sema_to_scalar(S, r, e->u.bin.rhs);
    if (!x || !y) return sv_error();
    return sv_scalar(compare(S, e->u.bin.op, x, y, e->loc), e->loc);
}

static sv eval_inner(sema *S, const ast_expr *e) {
    tlc_arena *A = S->arena;
    switch (e->kind) {
    case AE_NAME: return eval_name(S, e, e->u.name);
    case AE_ATTR: {
        if (is_value_attr(S, e, "dtype")) return eval_dtype_attr(S, e);
        if (is_value_attr(S, e, "shape")) return eval_shape_attr(S, e);
        if (is_value_attr(S, e, "bits")) return eval_bits_attr(S, e);
        /* a device's properties: props.major, get_device_properties(0).minor */
        const ast_expr *base = e->u.attr.value;
        sym *bs = base->kind == AE_NAME ? sema_lookup(S, base->u.name) : NULL;
        if (base->kind == AE_CALL || (bs && bs->kind == SYM_CONST && bs->value.kind == SV_DEVICE)) {
            sv v = sema_eval(S, base);
            if (v.kind == SV_ERROR) return v;
            if (v.kind == SV_DEVICE) return sema_device_attr(S, e);
        }
        const char *name = sema_dotted_name(S, e);
        if (!name) {
            tlc_error(S->diag, e->loc, "attribute access is not supported here");
            return sv_error();
        }
        const ast_expr *root = e;
        while (root->kind == AE_ATTR) root = root->u.attr.value;
        if (root->kind == AE_NAME && sema_lookup(S, root->u.name)) {
            tlc_error(S->diag, e->loc, "attribute '%s' of '%s' is not supported", e->u.attr.name, root->u.name);
            return sv_error();
        }
        sv py;
        if (sema_py_attr(S, e, name, &py)) return py;
        return eval_name(S, e, name);
    }
    case AE_INT: return sv_scalar(tir_int(A, e->u.ival, e->loc), e->loc);
    case AE_FLOAT: return sv_scalar(tir_float(A, e->u.fval, TIR_F32, e->loc), e->loc);
    case AE_BOOL: return const_bool(S, e->u.bval, e->loc);
    case AE_STRING: {
        sv v = sv_error();
        v.kind = SV_STRING;
        v.loc = e->loc;
        v.u.str = e->u.str ? e->u.str : "";
        return v;
    }
    case AE_NONE: {
        sv v = sv_error();
        v.kind = SV_NONE;
        v.loc = e->loc;
        return v;
    }
    case AE_ELLIPSIS:
        tlc_error(S->diag, e->loc, "'...' (Ellipsis) has no meaning in a kernel: index or slice each dim");
        return sv_error();
    case AE_CALL: return eval_call(S, e);
    case AE_SUBSCRIPT: return eval_subscript(S, e);
    case AE_SLICE:
        tlc_error(S->diag, e->loc, "a slice can only be used to index a buffer");
        return sv_error();
    case AE_TUPLE: case AE_LIST: return eval_seq(S, e);
    case AE_DICT:
        tlc_error(S->diag, e->loc, "a dict can only be the argument of annotate_layout() or looked up where it is "
                  "written ({k: v, ...}[key])");
        return sv_error();
    case AE_BINARY: return eval_binop(S, e);
    case AE_COMPARE: return eval_compare(S, e);
    case AE_BOOLOP: {
        tir_expr *x = sema_to_bool(S, sema_eval_scalar(S, e->u.bin.lhs), e->u.bin.lhs, "an operand of 'and' / 'or'");
        tir_expr *y = sema_to_bool(S, sema_eval_scalar(S, e->u.bin.rhs), e->u.bin.rhs, "an operand of 'and' / 'or'");
        if (!x || !y) return sv_error();
        return sv_scalar(sema_binary(S, e->u.bin.op == AOP_AND ? TB_AND : TB_OR, x, y, e->loc), e->loc);
    }
    case AE_UNARY: {
        tir_expr *x = sema_eval_scalar(S, e->u.un.operand);
        if (!x) return sv_error();
        switch (e->u.un.op) {
        case AOP_POS: return sv_scalar(x, e->loc);
        case AOP_NEG: {
            tir_dtype t = arith_type(x->dtype, x->dtype);
            x = tir_cast(A, x, t, e->loc);
            if (x->kind == TE_INT && x->u.ival == INT64_MIN) {
                tlc_error(S->diag, e->loc, "integer overflow in a constant expression");
                return sv_error();
            }
            tir_expr *r = tir_unary(A, TU_NEG, x, e->loc);
            if (r->kind == TE_INT && t == TIR_I32 && (r->u.ival < INT32_MIN || r->u.ival > INT32_MAX))
                r->dtype = TIR_I64;
            return sv_scalar(r, e->loc);
        }
        case AOP_NOT: {
            x = sema_to_bool(S, x, e->u.un.operand, "the operand of 'not'");
            return x ? sv_scalar(tir_unary(A, TU_NOT, x, e->loc), e->loc) : sv_error();
        }
        case AOP_INVERT:
            if (tir_dtype_is_float(x->dtype)) {
                tlc_error(S->diag, e->loc, "'~' needs an integer operand, got %s", tir_dtype_name(x->dtype));
                return sv_error();
            }
            if (x->dtype == TIR_BOOL) x = tir_cast(A, x, TIR_I32, e->loc);
            return sv_scalar(tir_unary(A, TU_BITNOT, x, e->loc), e->loc);
        default:
            tlc_error(S->diag, e->loc, "unsupported unary operator '%s'", ast_op_str(e->u.un.op));
            return sv_error();
        }
    }
    case AE_COMP: return sema_py_comprehension(S, e);
    case AE_LAMBDA:
        tlc_error(S->diag, e->loc, "a lambda is supported only as the index map of T.Layout(shape, lambda ...)");
        return sv_error();
    case AE_IFEXP: {
        tir_expr *c = sema_to_bool(S, sema_eval_scalar(S, e->u.ifexp.cond), e->u.ifexp.cond, "the condition of 'if'");
        if (!c) return sv_error();
        if (c->kind == TE_INT) /* compile-time choice: only the chosen arm matters (it may be a dtype) */
            return sema_eval(S, c->u.ival ? e->u.ifexp.then : e->u.ifexp.els);
        sv a = sema_eval(S, e->u.ifexp.then), b = sema_eval(S, e->u.ifexp.els);
        if (a.kind == SV_ERROR || b.kind == SV_ERROR) return sv_error();
        if (a.kind != SV_SCALAR || b.kind != SV_SCALAR) {
            /* a choice of tuples, dtypes, buffers, ...: made at compile time or not at all */
            const char *msg = "a conditional expression whose value is not a number needs a compile-time condition";
            if (!sema_unbound_error(S, c, e->u.ifexp.cond->loc, msg)) tlc_error(S->diag, e->u.ifexp.cond->loc, "%s", msg);
            return sv_error();
        }
        tir_expr *x = sema_to_scalar(S, a, e->u.ifexp.then), *y = sema_to_scalar(S, b, e->u.ifexp.els);
        if (!x || !y) return sv_error();
        tir_dtype t = tir_promote(x->dtype, y->dtype);
        return sv_scalar(tir_select(A, c, tir_cast(A, x, t, e->loc), tir_cast(A, y, t, e->loc), e->loc), e->loc);
    }
    }
    tlc_error(S->diag, e->loc, "unsupported expression");
    return sv_error();
}

sv sema_eval(sema *S, const ast_expr *e) {
    if (!e) return sv_error();
    if (tlc_diag_too_many(S->diag)) return sv_error();
    if (S->depth >= MAX_EXPR_DEPTH) {
        tlc_error(S->diag, e->loc, "expression is nested too deeply");
        return sv_error();
    }
    S->depth++;
    sv v = eval_inner(S, e);
    S->depth--;
    if (v.kind == SV_SCALAR && !v.u.e) return sv_error();
    return v;
}

/* tir_expr_vars callback: the first symbolic dim met (ctx: const tir_var **) */
static void first_sym_dim(const tir_var *v, void *ctx) {
    const tir_var **out = ctx;
    if (!*out && v->kind == TV_SYM_DIM) *out = v;
}

bool sema_eval_shape(sema *S, const ast_expr *e, int allow_sym, tir_expr ***dims, int *rank) {
    const ast_expr *const *items = (const ast_expr *const *)&e;
    int n = 1;
    const sv *values = NULL; /* a name of a tuple: shape = (block_M, block_K) */
    if (e->kind == AE_TUPLE || e->kind == AE_LIST) {
        items = (const ast_expr *const *)e->u.seq.items;
        n = e->u.seq.n;
    } else if (e->kind == AE_NAME) {
        sym *s = sema_lookup(S, e->u.name);
        if (s && s->kind == SYM_CONST && s->value.kind == SV_TUPLE) {
            values = s->value.u.tup.items;
            n = s->value.u.tup.n;
        }
    }
    if (n == 0 || n > 8) {
        tlc_error(S->diag, e->loc, "a buffer shape needs 1 to 8 dimensions, got %d", n);
        return false;
    }
    tir_expr **d = TLC_NEW_ARRAY(S->arena, tir_expr *, n);
    bool ok = true;
    int64_t total = 1;
    for (int i = 0; i < n; i++) {
        const ast_expr *at = values ? e : items[i];
        tir_expr *x = values ? sema_to_scalar(S, values[i], e) : sema_eval_scalar(S, items[i]);
        if (!x) { ok = false; continue; }
        if (x->kind == TE_INT && x->dtype != TIR_BOOL) {
            if (x->u.ival <= 0) {
                tlc_error(S->diag, at->loc, "buffer dimension must be positive, got %lld", (long long)x->u.ival);
                ok = false;
            } else if (__builtin_mul_overflow(total, x->u.ival, &total) || total > ((int64_t)1 << 40)) {
                tlc_error(S->diag, at->loc, "buffer size overflows (more than 2^40 elements)");
                ok = false;
            }
            d[i] = tir_int_typed(S->arena, x->u.ival, x->dtype, at->loc);
        } else if (allow_sym && x->kind == TE_VAR && x->u.var->kind == TV_SYM_DIM) {
            d[i] = tir_var_ref(S->arena, x->u.var, at->loc);
        } else if (allow_sym == SEMA_SHAPE_SIZES && sema_size_expr(x)) {
            d[i] = x;
        } else {
            char msg[160];
            snprintf(msg, sizeof msg, "buffer dimension must be a compile-time constant integer%s",
                     allow_sym == SEMA_SHAPE_SIZES ? " or an expression of sizes and integer scalar parameters (known at launch)"
                     : allow_sym ? " or a symbolic dimension" : "");
            const tir_var *sym = NULL;
            tir_expr_vars(x, first_sym_dim, &sym);
            if (sema_unbound_error(S, x, at->loc, msg)) {
                /* reported, with the -D it needs */
            } else if (sym && !allow_sym) {
                tlc_error(S->diag, at->loc, "%s, but '%s' is a symbolic dimension, known only at launch: give its "
                          "value with -D %s=VALUE to compile for that size", msg, sym->name, sym->name);
            } else {
                tlc_error(S->diag, at->loc, "%s", msg);
            }
            ok = false;
        }
    }
    *dims = d;
    *rank = n;
    return ok;
}
