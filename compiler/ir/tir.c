/* Tile IR basics: dtypes, names, and the expression constructors.
 * The constructors fold constants eagerly (Python semantics for // and %,
 * int64 overflow detected, never undefined behaviour) so that every shape
 * that can be a constant is one by the time sema stores it. */
#include "tir.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------- dtypes ---------------- */

static const char *const dtype_names[TIR_DTYPE_COUNT] = {
    "float16", "bfloat16", "float32", "float8_e4m3", "int8", "int32", "int64", "bool",
    "int16", "uint8", "uint16", "uint32", "float8_e5m2"};

const char *tir_dtype_name(tir_dtype t) {
    return (unsigned)t < TIR_DTYPE_COUNT ? dtype_names[t] : "?";
}

bool tir_dtype_parse(const char *s, tir_dtype *out) {
    static const struct { const char *name; tir_dtype t; } aliases[] = {
        {"half", TIR_F16}, {"float", TIR_F32}, {"int", TIR_I32},
        {"float8_e4m3fn", TIR_F8E4M3}, /* the same format: finite, max 448, one NaN */
        /* TileLang's tf32 buffers: float32 values (not rounded to tf32's
         * 10 mantissa bits), which gemms read as tf32 as any float32 */
        {"tfloat32", TIR_F32},
    };
    if (!s) return false;
    for (int i = 0; i < TIR_DTYPE_COUNT; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (tir_dtype)i;
            return true;
        }
    for (unsigned i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (strcmp(s, aliases[i].name) == 0) {
            *out = aliases[i].t;
            return true;
        }
    return false;
}

int tir_dtype_bytes(tir_dtype t) {
    switch (t) {
    case TIR_F16: case TIR_BF16: case TIR_I16: case TIR_U16: return 2;
    case TIR_F32: case TIR_I32: case TIR_U32: return 4;
    case TIR_I64: return 8;
    case TIR_F8E4M3: case TIR_F8E5M2: case TIR_I8: case TIR_U8: case TIR_BOOL: return 1;
    default: return 0;
    }
}

bool tir_dtype_is_float(tir_dtype t) {
    return t == TIR_F16 || t == TIR_BF16 || t == TIR_F32 || tir_dtype_is_fp8(t);
}

bool tir_dtype_is_fp8(tir_dtype t) { return t == TIR_F8E4M3 || t == TIR_F8E5M2; }

bool tir_dtype_is_unsigned(tir_dtype t) { return t == TIR_U8 || t == TIR_U16 || t == TIR_U32; }

bool tir_dtype_int_range(tir_dtype t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case TIR_BOOL: *lo = 0; *hi = 1; return true;
    case TIR_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case TIR_I16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case TIR_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case TIR_I64: *lo = INT64_MIN; *hi = INT64_MAX; return true;
    case TIR_U8: *lo = 0; *hi = UINT8_MAX; return true;
    case TIR_U16: *lo = 0; *hi = UINT16_MAX; return true;
    case TIR_U32: *lo = 0; *hi = UINT32_MAX; return true;
    default: return false;
    }
}

int64_t tir_wrap_int(tir_dtype t, int64_t v) {
    uint64_t u = (uint64_t)v;
    switch (t) {
    case TIR_BOOL: return v != 0;
    case TIR_I8: return (int8_t)(uint8_t)(u & 0xffu);
    case TIR_I16: return (int16_t)(uint16_t)(u & 0xffffu);
    case TIR_I32: return (int32_t)(uint32_t)(u & 0xffffffffu);
    case TIR_U8: return (int64_t)(u & 0xffu);
    case TIR_U16: return (int64_t)(u & 0xffffu);
    case TIR_U32: return (int64_t)(u & 0xffffffffu);
    default: return v;
    }
}

static int float_rank(tir_dtype t) {
    switch (t) {
    case TIR_F8E4M3: case TIR_F8E5M2: return 0;
    case TIR_F16: case TIR_BF16: return 1;
    default: return 2;
    }
}

tir_dtype tir_promote(tir_dtype x, tir_dtype y) {
    bool fx = tir_dtype_is_float(x), fy = tir_dtype_is_float(y);
    if (fx && fy) {
        if (x == y) return x;
        if (float_rank(x) == float_rank(y)) return TIR_F32; /* f16 op bf16 */
        return float_rank(x) > float_rank(y) ? x : y;
    }
    if (fx) return x;
    if (fy) return y;
    /* C's usual conversions: narrower integers compute as int32 */
    if (x == TIR_I64 || y == TIR_I64) return TIR_I64;
    return (x == TIR_U32 || y == TIR_U32) ? TIR_U32 : TIR_I32;
}

/* ---------------- names ---------------- */

const char *tir_scope_name(tir_scope s) {
    static const char *const n[] = {"global", "shared", "fragment", "local", "var"};
    return (unsigned)s < 5 ? n[s] : "?";
}

const char *tir_binop_name(tir_binop op) {
    static const char *const n[] = {"+", "-", "*", "/", "//", "%", "min", "max", "**",
                                    "<", "<=", ">", ">=", "==", "!=", "and", "or",
                                    "&", "|", "^", "<<", ">>"};
    return (unsigned)op < sizeof n / sizeof *n ? n[op] : "?";
}

const char *tir_unop_name(tir_unop op) {
    static const char *const n[] = {"-", "not", "~", "exp", "exp2", "log", "log2",
                                    "rsqrt", "sqrt", "abs", "tanh", "sigmoid", "erf", "sin",
                                    "cos", "floor", "ceil", "log1p"};
    return (unsigned)op < sizeof n / sizeof *n ? n[op] : "?";
}

const char *tir_policy_name(tir_gemm_policy p) {
    static const char *const n[] = {"Square", "FullRow", "FullCol"};
    return (unsigned)p < 3 ? n[p] : "?";
}

const char *tir_reduce_name(tir_reduce_kind k) {
    static const char *const n[] = {"max", "sum", "min", "absmax", "abssum"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}

/* ---------------- buffers and regions ---------------- */

int tir_stmt_threads(const tir_kernel *k, const tir_stmt *s) { return s && s->range ? s->range->count : k->threads; }

int tir_buffer_threads(const tir_kernel *k, const tir_buffer *b) {
    const tir_buffer *st = tir_buffer_storage(b);
    return st->range ? st->range->count : k->threads;
}

tir_buffer *tir_buffer_storage(const tir_buffer *b) { return b->view_of ? b->view_of : (tir_buffer *)b; }

int64_t tir_buffer_dim(const tir_buffer *b, int i) {
    if (!b || i < 0 || i >= b->rank || !b->shape[i] || b->shape[i]->kind != TE_INT) return -1;
    return b->shape[i]->u.ival;
}

int64_t tir_buffer_elems(const tir_buffer *b) {
    int64_t n = 1;
    for (int i = 0; i < b->rank; i++) {
        int64_t d = tir_buffer_dim(b, i);
        if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
    }
    return n;
}

bool tir_shapes_equal(const int64_t *x, int nx, const int64_t *y, int ny) {
    if (nx != ny) return false;
    for (int i = 0; i < nx; i++)
        if (x[i] != y[i]) return false;
    return true;
}

void tir_shape_text(char *buf, size_t cap, const int64_t *s, int n) {
    size_t used = 0;
    used += (size_t)snprintf(buf + used, cap - used, "[");
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%" PRId64, i ? ", " : "", s[i]);
    if (used < cap) snprintf(buf + used, cap - used, "]");
}

int tir_region_squeezed_dims(const tir_region *r, int *dims) {
    int n = 0;
    for (int d = 0; d < r->rank; d++) {
        int64_t e;
        if (!tir_expr_const_int(r->extent[d], &e) || e != 1) dims[n++] = d;
    }
    return n;
}

int tir_region_shape(const tir_region *r, int64_t out[8]) {
    int n = 0;
    for (int i = 0; i < r->rank; i++) {
        int64_t e;
        if (!tir_expr_const_int(r->extent[i], &e)) return -1;
        if (e == 1) continue;
        if (n == 8) return -1;
        out[n++] = e;
    }
    return n;
}

int64_t tir_region_elems(const tir_region *r) {
    int64_t n = 1;
    for (int i = 0; i < r->rank; i++) {
        int64_t e;
        if (!tir_expr_const_int(r->extent[i], &e) || e < 0 || __builtin_mul_overflow(n, e, &n))
            return -1;
    }
    return n;
}

bool tir_region_is_whole(const tir_region *r) {
    for (int d = 0; d < r->rank; d++) {
        int64_t s, e;
        if (!tir_expr_const_int(r->start[d], &s) || s != 0) return false;
        if (!tir_expr_const_int(r->extent[d], &e) || e != tir_buffer_dim(r->buf, d)) return false;
    }
    return true;
}

/* ---------------- expressions ---------------- */

static tir_expr *new_expr(tlc_arena *a, tir_expr_kind k, tir_dtype t, tlc_loc loc) {
    tir_expr *e = TLC_NEW(a, tir_expr);
    e->kind = k;
    e->dtype = t;
    e->loc = loc;
    return e;
}

tir_expr *tir_int(tlc_arena *a, int64_t v, tlc_loc loc) {
    return tir_int_typed(a, v, (v >= INT32_MIN && v <= INT32_MAX) ? TIR_I32 : TIR_I64, loc);
}

tir_expr *tir_int_typed(tlc_arena *a, int64_t v, tir_dtype t, tlc_loc loc) {
    tir_expr *e = new_expr(a, TE_INT, t, loc);
    e->u.ival = v;
    return e;
}

tir_expr *tir_float(tlc_arena *a, double v, tir_dtype t, tlc_loc loc) {
    tir_expr *e = new_expr(a, TE_FLOAT, t, loc);
    e->u.fval = v;
    return e;
}

tir_expr *tir_var_ref(tlc_arena *a, tir_var *v, tlc_loc loc) {
    tir_expr *e = new_expr(a, TE_VAR, v->dtype, loc);
    e->u.var = v;
    return e;
}

tir_expr *tir_load(tlc_arena *a, tir_buffer *b, tir_expr **idx, tlc_loc loc) {
    tir_expr *e = new_expr(a, TE_LOAD, b->dtype, loc);
    e->u.load.buf = b;
    e->u.load.idx = idx;
    return e;
}

int tir_cluster_axes(const tir_kernel *k) {
    int axes = 0;
    for (int i = 0; i < 3; i++)
        if (k->cluster[i]) axes |= 1 << i;
    return axes;
}

int tir_grid_expr_nodes(const tir_expr *e) {
    switch (e->kind) {
    case TE_INT: return 1;
    case TE_VAR:
        return e->u.var->kind == TV_SYM_DIM ||
                       (e->u.var->kind == TV_SCALAR_PARAM && !tir_dtype_is_float(e->u.var->dtype))
                   ? 1
                   : -1;
    case TE_CAST: return tir_grid_expr_nodes(e->u.cast.a);
    case TE_BINARY:
        switch (e->u.bin.op) {
        case TB_ADD: case TB_SUB: case TB_MUL: case TB_FLOORDIV: case TB_FLOORMOD: case TB_MIN: case TB_MAX: {
            int a = tir_grid_expr_nodes(e->u.bin.a), b = tir_grid_expr_nodes(e->u.bin.b);
            return a < 0 || b < 0 ? -1 : a + b + 1;
        }
        default: return -1;
        }
    default: return -1;
    }
}

bool tir_expr_const_int(const tir_expr *e, int64_t *out) {
    if (!e || e->kind != TE_INT) return false;
    if (out) *out = e->u.ival;
    return true;
}

static bool is_const(const tir_expr *e) { return e->kind == TE_INT || e->kind == TE_FLOAT; }
static double const_as_double(const tir_expr *e) {
    return e->kind == TE_INT ? (double)e->u.ival : e->u.fval;
}
static bool is_int_const(const tir_expr *e, int64_t v) { return e->kind == TE_INT && e->u.ival == v; }
static bool is_integer_type(tir_dtype t) { return !tir_dtype_is_float(t); }

static bool is_compare(tir_binop op) { return op >= TB_LT && op <= TB_NE; }

static bool is_shift(tir_binop op) { return op == TB_SHL || op == TB_SHR; }

/* A shift's type is its left operand's (promoted), as in C. */
static tir_dtype binary_result_type(tir_binop op, tir_dtype x, tir_dtype y) {
    if (is_compare(op) || op == TB_AND || op == TB_OR) return TIR_BOOL;
    if (is_shift(op) && tir_dtype_is_unsigned(y)) y = TIR_I32;
    return tir_promote(x, y);
}

/* The type integer operands are converted to before the operation. */
static tir_dtype operand_type(tir_binop op, tir_dtype x, tir_dtype y) {
    if (is_compare(op)) return tir_promote(x, y);
    return binary_result_type(op, x, y);
}

/* Python floor division / modulo on int64; false on overflow or zero. */
static bool floordiv64(int64_t a, int64_t b, int64_t *q) {
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    int64_t d = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) d--;
    *q = d;
    return true;
}
static int64_t floormod64(int64_t a, int64_t b) { /* b != 0, not (MIN, -1) */
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

tir_fold_status tir_fold_int(tir_binop op, int64_t a, int64_t b, int64_t *r) {
    switch (op) {
    case TB_ADD: return __builtin_add_overflow(a, b, r) ? TIR_FOLD_OVERFLOW : TIR_FOLD_OK;
    case TB_SUB: return __builtin_sub_overflow(a, b, r) ? TIR_FOLD_OVERFLOW : TIR_FOLD_OK;
    case TB_MUL: return __builtin_mul_overflow(a, b, r) ? TIR_FOLD_OVERFLOW : TIR_FOLD_OK;
    case TB_DIV: /* never produced on ints by sema; fold as floor division */
    case TB_FLOORDIV:
        if (b == 0) return TIR_FOLD_DIV_ZERO;
        return floordiv64(a, b, r) ? TIR_FOLD_OK : TIR_FOLD_OVERFLOW;
    case TB_FLOORMOD:
        if (b == 0) return TIR_FOLD_DIV_ZERO;
        *r = (b == -1) ? 0 : floormod64(a, b);
        return TIR_FOLD_OK;
    case TB_MIN: *r = a < b ? a : b; return TIR_FOLD_OK;
    case TB_MAX: *r = a > b ? a : b; return TIR_FOLD_OK;
    case TB_POW: {
        if (b < 0) return TIR_FOLD_OVERFLOW; /* caller handles negative exponents */
        int64_t acc = 1, base = a;
        while (b > 0) {
            if (b & 1)
                if (__builtin_mul_overflow(acc, base, &acc)) return TIR_FOLD_OVERFLOW;
            b >>= 1;
            if (b > 0 && __builtin_mul_overflow(base, base, &base)) return TIR_FOLD_OVERFLOW;
        }
        *r = acc;
        return TIR_FOLD_OK;
    }
    case TB_LT: *r = a < b; return TIR_FOLD_OK;
    case TB_LE: *r = a <= b; return TIR_FOLD_OK;
    case TB_GT: *r = a > b; return TIR_FOLD_OK;
    case TB_GE: *r = a >= b; return TIR_FOLD_OK;
    case TB_EQ: *r = a == b; return TIR_FOLD_OK;
    case TB_NE: *r = a != b; return TIR_FOLD_OK;
    case TB_AND: *r = a && b; return TIR_FOLD_OK;
    case TB_OR: *r = a || b; return TIR_FOLD_OK;
    case TB_BITAND: *r = a & b; return TIR_FOLD_OK;
    case TB_BITOR: *r = a | b; return TIR_FOLD_OK;
    case TB_BITXOR: *r = a ^ b; return TIR_FOLD_OK;
    case TB_SHL:
        if (b < 0 || b > 63) return TIR_FOLD_BAD_SHIFT;
        if (a < 0) return TIR_FOLD_OVERFLOW;
        if (b > 0 && (a >> (63 - b)) != 0) return TIR_FOLD_OVERFLOW;
        *r = (int64_t)((uint64_t)a << b);
        return TIR_FOLD_OK;
    case TB_SHR:
        if (b < 0) return TIR_FOLD_BAD_SHIFT;
        *r = b > 63 ? (a < 0 ? -1 : 0) : (a < 0 ? ~(~a >> b) : a >> b);
        return TIR_FOLD_OK;
    }
    return TIR_FOLD_OVERFLOW;
}

/* Returns false when the op has no float meaning (bit ops): no folding. */
static bool fold_float(tir_binop op, double a, double b, double *r, tir_fold_status *st) {
    *st = TIR_FOLD_OK;
    switch (op) {
    case TB_ADD: *r = a + b; return true;
    case TB_SUB: *r = a - b; return true;
    case TB_MUL: *r = a * b; return true;
    case TB_DIV:
        if (b == 0) { *st = TIR_FOLD_DIV_ZERO; return true; }
        *r = a / b;
        return true;
    case TB_FLOORDIV:
        if (b == 0) { *st = TIR_FOLD_DIV_ZERO; return true; }
        *r = floor(a / b);
        return true;
    case TB_FLOORMOD:
        if (b == 0) { *st = TIR_FOLD_DIV_ZERO; return true; }
        *r = a - floor(a / b) * b;
        return true;
    case TB_MIN: *r = a < b ? a : b; return true;
    case TB_MAX: *r = a > b ? a : b; return true;
    case TB_POW:
        if (a == 0 && b < 0) { *st = TIR_FOLD_DIV_ZERO; return true; }
        *r = pow(a, b);
        return true;
    case TB_LT: *r = a < b; return true;
    case TB_LE: *r = a <= b; return true;
    case TB_GT: *r = a > b; return true;
    case TB_GE: *r = a >= b; return true;
    case TB_EQ: *r = a == b; return true;
    case TB_NE: *r = a != b; return true;
    case TB_AND: *r = (a != 0) && (b != 0); return true;
    case TB_OR: *r = (a != 0) || (b != 0); return true;
    default: return false;
    }
}

static tir_expr *new_binary(tlc_arena *a, tir_binop op, tir_expr *x, tir_expr *y, tlc_loc loc) {
    tir_expr *e = new_expr(a, TE_BINARY, binary_result_type(op, x->dtype, y->dtype), loc);
    e->u.bin.op = op;
    e->u.bin.a = x;
    e->u.bin.b = y;
    return e;
}

tir_expr *tir_binary_fold(tlc_arena *a, tir_binop op, tir_expr *x, tir_expr *y, tlc_loc loc,
                          tir_fold_status *status) {
    *status = TIR_FOLD_OK;
    /* An unsigned operand beside another integer type: both are converted
     * first (C's usual conversions, -1 < u32 compares 0xffffffff), so that
     * every later stage sees one operand type. */
    if (!tir_dtype_is_float(x->dtype) && !tir_dtype_is_float(y->dtype) && x->dtype != y->dtype &&
        op != TB_AND && op != TB_OR && (tir_dtype_is_unsigned(x->dtype) || tir_dtype_is_unsigned(y->dtype))) {
        tir_dtype ot = operand_type(op, x->dtype, y->dtype);
        if (tir_dtype_is_unsigned(ot)) {
            x = tir_cast(a, x, ot, loc);
            if (!is_shift(op)) y = tir_cast(a, y, ot, loc);
        }
    }
    tir_dtype rt = binary_result_type(op, x->dtype, y->dtype);
    if (x->kind == TE_INT && y->kind == TE_INT) {
        if (op == TB_POW && y->u.ival < 0) {
            if (x->u.ival == 0) { *status = TIR_FOLD_DIV_ZERO; return NULL; }
            return tir_float(a, pow((double)x->u.ival, (double)y->u.ival), TIR_F32, loc);
        }
        int64_t r;
        tir_fold_status st = tir_fold_int(op, x->u.ival, y->u.ival, &r);
        if (st != TIR_FOLD_OK) { *status = st; return NULL; }
        if (rt == TIR_BOOL) return tir_int_typed(a, r != 0, TIR_BOOL, loc);
        if (rt == TIR_I32 && (r < INT32_MIN || r > INT32_MAX)) rt = TIR_I64;
        return tir_int_typed(a, tir_wrap_int(rt, r), rt, loc); /* unsigned: modulo 2^32 */
    }
    if (is_const(x) && is_const(y)) {
        double r;
        tir_fold_status st;
        if (fold_float(op, const_as_double(x), const_as_double(y), &r, &st)) {
            if (st != TIR_FOLD_OK) { *status = st; return NULL; }
            if (rt == TIR_BOOL) return tir_int_typed(a, r != 0, TIR_BOOL, loc);
            return tir_float(a, r, rt, loc);
        }
    }
    /* Algebraic identities on integers (operands have no side effects). */
    if (is_integer_type(rt) && rt != TIR_BOOL) {
        switch (op) {
        case TB_ADD:
            if (is_int_const(y, 0) && x->dtype == rt) return x;
            if (is_int_const(x, 0) && y->dtype == rt) return y;
            break;
        case TB_SUB:
            if (is_int_const(y, 0) && x->dtype == rt) return x;
            break;
        case TB_MUL:
            if (is_int_const(y, 1) && x->dtype == rt) return x;
            if (is_int_const(x, 1) && y->dtype == rt) return y;
            if (is_int_const(x, 0) || is_int_const(y, 0)) return tir_int_typed(a, 0, rt, loc);
            break;
        case TB_FLOORDIV:
            if (is_int_const(y, 1) && x->dtype == rt) return x;
            if (is_int_const(y, 0)) { *status = TIR_FOLD_DIV_ZERO; return NULL; }
            break;
        case TB_FLOORMOD:
            if (is_int_const(y, 1)) return tir_int_typed(a, 0, rt, loc);
            if (is_int_const(y, 0)) { *status = TIR_FOLD_DIV_ZERO; return NULL; }
            break;
        default: break;
        }
    }
    if ((op == TB_AND || op == TB_OR) && (x->kind == TE_INT || y->kind == TE_INT)) {
        const tir_expr *c = x->kind == TE_INT ? x : y;
        tir_expr *other = x->kind == TE_INT ? y : x;
        bool cv = c->u.ival != 0;
        if (op == TB_AND) return cv ? other : tir_int_typed(a, 0, TIR_BOOL, loc);
        return cv ? tir_int_typed(a, 1, TIR_BOOL, loc) : other;
    }
    return new_binary(a, op, x, y, loc);
}

tir_expr *tir_binary(tlc_arena *a, tir_binop op, tir_expr *x, tir_expr *y, tlc_loc loc) {
    tir_fold_status st;
    tir_expr *e = tir_binary_fold(a, op, x, y, loc, &st);
    return e ? e : new_binary(a, op, x, y, loc);
}

tir_expr *tir_unary(tlc_arena *a, tir_unop op, tir_expr *x, tlc_loc loc) {
    tir_dtype t = op == TU_NOT ? TIR_BOOL : x->dtype;
    if (x->kind == TE_INT) {
        int64_t v = x->u.ival;
        switch (op) {
        case TU_NEG: /* unsigned: modulo 2^32 */
            if (v != INT64_MIN)
                return tir_int_typed(a, tir_dtype_is_unsigned(x->dtype) ? tir_wrap_int(x->dtype, -v) : -v,
                                     (x->dtype == TIR_BOOL) ? TIR_I32 : x->dtype, loc);
            break;
        case TU_NOT: return tir_int_typed(a, v == 0, TIR_BOOL, loc);
        case TU_BITNOT:
            return tir_int_typed(a, tir_dtype_is_unsigned(x->dtype) ? tir_wrap_int(x->dtype, ~v) : ~v,
                                 (x->dtype == TIR_BOOL) ? TIR_I32 : x->dtype, loc);
        case TU_ABS:
            if (v != INT64_MIN) return tir_int_typed(a, v < 0 ? -v : v, x->dtype, loc);
            break;
        default: break; /* math on integers: sema casts to float first */
        }
    } else if (x->kind == TE_FLOAT) {
        double v = x->u.fval, r;
        switch (op) {
        case TU_NEG: r = -v; break;
        case TU_NOT: return tir_int_typed(a, v == 0, TIR_BOOL, loc);
        case TU_EXP: r = exp(v); break;
        case TU_EXP2: r = exp2(v); break;
        case TU_LOG: r = log(v); break;
        case TU_LOG2: r = log2(v); break;
        case TU_RSQRT: r = 1.0 / sqrt(v); break;
        case TU_SQRT: r = sqrt(v); break;
        case TU_ABS: r = fabs(v); break;
        case TU_TANH: r = tanh(v); break;
        case TU_SIGMOID: r = 1.0 / (1.0 + exp(-v)); break;
        case TU_ERF: r = erf(v); break;
        case TU_SIN: r = sin(v); break;
        case TU_COS: r = cos(v); break;
        case TU_FLOOR: r = floor(v); break;
        case TU_CEIL: r = ceil(v); break;
        case TU_LOG1P: r = log1p(v); break;
        default: goto build;
        }
        return tir_float(a, r, x->dtype, loc);
    } else if (op == TU_NEG && x->kind == TE_UNARY && x->u.un.op == TU_NEG) {
        return x->u.un.a; /* --x */
    }
build:;
    tir_expr *e = new_expr(a, TE_UNARY, t, loc);
    e->u.un.op = op;
    e->u.un.a = x;
    return e;
}

tir_expr *tir_cast(tlc_arena *a, tir_expr *x, tir_dtype t, tlc_loc loc) {
    if (x->dtype == t) return x;
    if (x->kind == TE_INT) {
        int64_t v = x->u.ival;
        if (tir_dtype_is_float(t)) return tir_float(a, (double)v, t, loc);
        return tir_int_typed(a, tir_wrap_int(t, v), t, loc);
    }
    if (x->kind == TE_FLOAT) {
        double v = x->u.fval;
        if (tir_dtype_is_float(t)) return tir_float(a, v, t, loc);
        if (t == TIR_BOOL) return tir_int_typed(a, v != 0, t, loc);
        /* float -> int: fold only when the truncated value is representable */
        int64_t lo, hi;
        tir_dtype_int_range(t, &lo, &hi);
        double tv = trunc(v);
        if (tv >= (double)lo && tv < (t == TIR_I64 ? 9223372036854775808.0 : (double)hi + 1.0))
            return tir_int_typed(a, (int64_t)tv, t, loc);
    }
    tir_expr *e = new_expr(a, TE_CAST, t, loc);
    e->u.cast.a = x;
    return e;
}

tir_expr *tir_reinterpret(tlc_arena *a, tir_expr *x, tir_dtype t, tlc_loc loc) {
    if (x->dtype == t) return x;
    tir_expr *e = new_expr(a, TE_CAST, t, loc);
    e->u.cast.a = x;
    e->u.cast.bits = true;
    return e;
}

tir_expr *tir_select(tlc_arena *a, tir_expr *c, tir_expr *x, tir_expr *y, tlc_loc loc) {
    if (c->kind == TE_INT) return c->u.ival ? x : y;
    if (c->kind == TE_FLOAT) return c->u.fval != 0 ? x : y;
    tir_expr *e = new_expr(a, TE_SELECT, x->dtype == y->dtype ? x->dtype : tir_promote(x->dtype, y->dtype), loc);
    e->u.sel.cond = c;
    e->u.sel.a = x;
    e->u.sel.b = y;
    return e;
}

tir_expr *tir_shuffle(tlc_arena *a, tir_expr *x, tir_expr *lane, int width, bool xor_lanes, tlc_loc loc) {
    tir_expr *e = new_expr(a, TE_SHUFFLE, x->dtype, loc);
    e->u.shfl.value = x;
    e->u.shfl.lane = lane;
    e->u.shfl.width = width;
    e->u.shfl.xor_lanes = xor_lanes;
    return e;
}

bool tir_expr_equal(const tir_expr *x, const tir_expr *y) {
    if (x == y) return true;
    if (!x || !y || x->kind != y->kind || x->dtype != y->dtype) return false;
    switch (x->kind) {
    case TE_INT: return x->u.ival == y->u.ival;
    case TE_FLOAT:
        return x->u.fval == y->u.fval || (isnan(x->u.fval) && isnan(y->u.fval));
    case TE_VAR: return x->u.var == y->u.var;
    case TE_LOAD:
        if (x->u.load.buf != y->u.load.buf) return false;
        for (int i = 0; i < x->u.load.buf->rank; i++)
            if (!tir_expr_equal(x->u.load.idx[i], y->u.load.idx[i])) return false;
        return true;
    case TE_BINARY:
        return x->u.bin.op == y->u.bin.op && tir_expr_equal(x->u.bin.a, y->u.bin.a) &&
               tir_expr_equal(x->u.bin.b, y->u.bin.b);
    case TE_UNARY: return x->u.un.op == y->u.un.op && tir_expr_equal(x->u.un.a, y->u.un.a);
    case TE_CAST: return x->u.cast.bits == y->u.cast.bits && tir_expr_equal(x->u.cast.a, y->u.cast.a);
    case TE_SELECT:
        return tir_expr_equal(x->u.sel.cond, y->u.sel.cond) && tir_expr_equal(x->u.sel.a, y->u.sel.a) &&
               tir_expr_equal(x->u.sel.b, y->u.sel.b);
    case TE_SHUFFLE:
        return x->u.shfl.width == y->u.shfl.width && x->u.shfl.xor_lanes == y->u.shfl.xor_lanes &&
               tir_expr_equal(x->u.shfl.value, y->u.shfl.value) && tir_expr_equal(x->u.shfl.lane, y->u.shfl.lane);
    }
    return false;
}

/* ---- linear forms: sum(coef * term) + constant, for slice extents ---- */

/* LIN_MAX_VISITS bounds the work: locals' definitions are expanded where
 * used, so a chain of them could otherwise grow exponentially. */
enum { LIN_MAX_TERMS = 16, LIN_MAX_DEPTH = 64, LIN_MAX_VISITS = 4096 };
typedef struct lin_form {
    const tir_expr *term[LIN_MAX_TERMS];
    int64_t coef[LIN_MAX_TERMS];
    int n;
    int visits;
    bool see_lets;
    int64_t c;
} lin_form;

static bool lin_add(lin_form *f, const tir_expr *e, int64_t scale, int depth) {
    if (depth > LIN_MAX_DEPTH || ++f->visits > LIN_MAX_VISITS) return false;
    if (e->kind == TE_INT) {
        int64_t p;
        return !__builtin_mul_overflow(e->u.ival, scale, &p) && !__builtin_add_overflow(f->c, p, &f->c);
    }
    if (e->kind == TE_BINARY && !tir_dtype_is_float(e->dtype)) {
        const tir_expr *l = e->u.bin.a, *r = e->u.bin.b;
        int64_t s;
        switch (e->u.bin.op) {
        case TB_ADD: return lin_add(f, l, scale, depth + 1) && lin_add(f, r, scale, depth + 1);
        case TB_SUB:
            return scale != INT64_MIN && lin_add(f, l, scale, depth + 1) && lin_add(f, r, -scale, depth + 1);
        case TB_MUL:
            if (r->kind == TE_INT)
                return !__builtin_mul_overflow(scale, r->u.ival, &s) && lin_add(f, l, s, depth + 1);
            if (l->kind == TE_INT)
                return !__builtin_mul_overflow(scale, l->u.ival, &s) && lin_add(f, r, s, depth + 1);
            break;
        default: break;
        }
    }
    if (e->kind == TE_UNARY && e->u.un.op == TU_NEG && !tir_dtype_is_float(e->dtype))
        return scale != INT64_MIN && lin_add(f, e->u.un.a, -scale, depth + 1);
    if (e->kind == TE_VAR && e->u.var->def && f->see_lets) return lin_add(f, e->u.var->def, scale, depth + 1);
    for (int i = 0; i < f->n; i++)
        if (tir_expr_equal(f->term[i], e)) return !__builtin_add_overflow(f->coef[i], scale, &f->coef[i]);
    if (f->n == LIN_MAX_TERMS) return false;
    f->term[f->n] = e;
    f->coef[f->n++] = scale;
    return true;
}

static bool const_difference(const tir_expr *hi, const tir_expr *lo, bool see_lets, int64_t *out) {
    lin_form f;
    memset(&f, 0, sizeof f);
    f.see_lets = see_lets;
    if (!lin_add(&f, hi, 1, 0) || !lin_add(&f, lo, -1, 0)) return false;
    for (int i = 0; i < f.n; i++)
        if (f.coef[i] != 0) return false;
    *out = f.c;
    return true;
}

bool tir_const_difference(const tir_expr *hi, const tir_expr *lo, bool see_lets, int64_t *out) {
    /* as written first: seeing through lets only adds terms, which may
     * exceed the form's bounds */
    return const_difference(hi, lo, false, out) || (see_lets && const_difference(hi, lo, true, out));
}

/* ---------------- statements ---------------- */

tir_stmt *tir_new_stmt(tlc_arena *a, tir_stmt_kind k, tlc_loc loc) {
    tir_stmt *s = TLC_NEW(a, tir_stmt);
    s->kind = k;
    s->loc = loc;
    return s;
}

void tir_collect_tile_ops(const tir_stmt *s, tlc_ptrvec *ops) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) tir_collect_tile_ops(s->u.seq.stmts[i], ops);
        break;
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PARALLEL) tlc_ptrvec_push(ops, (void *)s);
        else tir_collect_tile_ops(s->u.for_.body, ops);
        break;
    case TS_IF:
        tir_collect_tile_ops(s->u.if_.then, ops);
        tir_collect_tile_ops(s->u.if_.els, ops);
        break;
    default:
        if (s->op) tlc_ptrvec_push(ops, (void *)s);
        break;
    }
}

static bool is_kind(const tir_stmt *s, const void *ctx) { return s->kind == *(const tir_stmt_kind *)ctx; }

bool tir_stmt_has_kind(const tir_stmt *s, tir_stmt_kind kind) { return tir_stmt_any(s, is_kind, &kind); }

bool tir_stmt_any(const tir_stmt *s, bool (*pred)(const tir_stmt *s, const void *ctx), const void *ctx) {
    if (!s) return false;
    if (pred(s, ctx)) return true;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (tir_stmt_any(s->u.seq.stmts[i], pred, ctx)) return true;
        return false;
    case TS_FOR: return tir_stmt_any(s->u.for_.body, pred, ctx);
    case TS_IF: return tir_stmt_any(s->u.if_.then, pred, ctx) || tir_stmt_any(s->u.if_.els, pred, ctx);
    default: return false;
    }
}

bool tir_kernel_selected(const tir_kernel *k, const char *filter) {
    if (!filter) return true;
    if (k->name && strcmp(k->name, filter) == 0) return true;
    const tir_function *f = k->function;
    if (!f) return false;
    if (f->name && strcmp(f->name, filter) == 0) return true;
    for (int i = 0; i < f->nkernels; i++)
        if (f->kernels[i]->name && strcmp(f->kernels[i]->name, filter) == 0) return true;
    return false;
}
