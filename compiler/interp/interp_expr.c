/* Scalar expression evaluation for the interpreter: a tree walk, with
 * float results rounded to the expression's dtype after every operation. */
#include "interp/interp_internal.h"
#include <math.h>

tlc_ival tlc_interp_convert(tlc_ival v, tir_dtype from, tir_dtype to) {
    tlc_ival r;
    bool ff = tlc_interp_isf(from), tf = tlc_interp_isf(to);
    if (tf) r.f = tlc_round_to_dtype(to, ff ? v.f : (double)v.i);
    else if (ff) r.i = tlc_float_to_int(to, v.f);
    else r.i = tir_wrap_int(to, v.i);
    return r;
}

tlc_ival tlc_interp_reinterpret(tlc_ival v, tir_dtype from, tir_dtype to) {
    uint64_t bytes = 0; /* the value as memory holds it */
    if (tlc_interp_isf(from)) tlc_host_store_f(&bytes, from, 0, v.f);
    else tlc_host_store_i(&bytes, from, 0, v.i);
    tlc_ival r;
    if (tlc_interp_isf(to)) r.f = tlc_host_load_f(&bytes, to, 0);
    else r.i = tlc_host_load_i(&bytes, to, 0);
    return r;
}

ibuf *tlc_interp_buf(tlc_interp *it, const tir_buffer *b, tlc_loc loc) {
    ibuf *ib = &it->bufs[b->id];
    if (!ib->live)
        tlc_interp_fail(it, loc, "buffer '%s' is used before it is allocated", b->name);
    if (it->wgmma) tlc_interp_wgmma_check(it, b, loc);
    return ib;
}

int64_t tlc_interp_offset(tlc_interp *it, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc) {
    ibuf *ib = tlc_interp_buf(it, b, loc);
    int64_t off = 0;
    for (int d = 0; d < ib->rank; d++) {
        int64_t x = tlc_interp_eval_i(it, idx[d]);
        if (x < 0 || x >= ib->dims[d])
            tlc_interp_fail(it, idx[d]->loc.line ? idx[d]->loc : loc,
                            "index %lld out of bounds for dim %d of '%s' (extent %lld)",
                            (long long)x, d, b->name, (long long)ib->dims[d]);
        off += x * ib->strides[d];
    }
    return off;
}

double tlc_interp_eval_f(tlc_interp *it, const tir_expr *e) {
    tlc_ival v = tlc_interp_eval(it, e);
    return tlc_interp_isf(e->dtype) ? v.f : (double)v.i;
}

int64_t tlc_interp_eval_i(tlc_interp *it, const tir_expr *e) {
    tlc_ival v = tlc_interp_eval(it, e);
    return tlc_interp_isf(e->dtype) ? tlc_float_to_int(TIR_I64, v.f) : v.i;
}

bool tlc_interp_truthy(tlc_interp *it, const tir_expr *e) {
    tlc_ival v = tlc_interp_eval(it, e);
    return tlc_interp_isf(e->dtype) ? v.f != 0 : v.i != 0;
}

static int64_t floordiv(tlc_interp *it, int64_t a, int64_t b, tlc_loc loc) {
    if (b == 0) tlc_interp_fail(it, loc, "integer division by zero");
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t floormod(tlc_interp *it, int64_t a, int64_t b, tlc_loc loc) {
    if (b == 0) tlc_interp_fail(it, loc, "integer modulo by zero");
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static int64_t ipow(tlc_interp *it, int64_t a, int64_t b, tlc_loc loc) {
    if (b < 0) tlc_interp_fail(it, loc, "negative integer exponent %lld", (long long)b);
    uint64_t r = 1, x = (uint64_t)a;
    while (b) {
        if (b & 1) r *= x;
        x *= x;
        b >>= 1;
    }
    return (int64_t)r;
}

static tlc_ival eval_binary(tlc_interp *it, const tir_expr *e) {
    tir_binop op = e->u.bin.op;
    const tir_expr *x = e->u.bin.a, *y = e->u.bin.b;
    tlc_ival r;
    if (op == TB_AND) { r.i = tlc_interp_truthy(it, x) && tlc_interp_truthy(it, y); return r; }
    if (op == TB_OR) { r.i = tlc_interp_truthy(it, x) || tlc_interp_truthy(it, y); return r; }
    if (op >= TB_LT && op <= TB_NE) {
        if (tlc_interp_isf(x->dtype) || tlc_interp_isf(y->dtype)) {
            double a = tlc_interp_eval_f(it, x), b = tlc_interp_eval_f(it, y);
            switch (op) {
            case TB_LT: r.i = a < b; break;
            case TB_LE: r.i = a <= b; break;
            case TB_GT: r.i = a > b; break;
            case TB_GE: r.i = a >= b; break;
            case TB_EQ: r.i = a == b; break;
            default: r.i = a != b; break;
            }
        } else {
            int64_t a = tlc_interp_eval_i(it, x), b = tlc_interp_eval_i(it, y);
            switch (op) {
            case TB_LT: r.i = a < b; break;
            case TB_LE: r.i = a <= b; break;
            case TB_GT: r.i = a > b; break;
            case TB_GE: r.i = a >= b; break;
            case TB_EQ: r.i = a == b; break;
            default: r.i = a != b; break;
            }
        }
        return r;
    }
    if (tlc_interp_isf(e->dtype)) {
        double a = tlc_interp_eval_f(it, x), b = tlc_interp_eval_f(it, y), v;
        switch (op) {
        case TB_ADD: v = a + b; break;
        case TB_SUB: v = a - b; break;
        case TB_MUL: v = a * b; break;
        case TB_DIV: v = a / b; break;
        case TB_FLOORDIV: v = floor(a / b); break;
        case TB_FLOORMOD: v = b == 0 ? NAN : a - floor(a / b) * b; break;
        case TB_MIN: v = fmin(a, b); break;
        case TB_MAX: v = fmax(a, b); break;
        case TB_POW: v = pow(a, b); break;
        default:
            tlc_interp_fail(it, e->loc, "operator '%s' on a float value", tir_binop_name(op));
        }
        r.f = tlc_round_to_dtype(e->dtype, v);
        return r;
    }
    int64_t a = tlc_interp_eval_i(it, x), b = tlc_interp_eval_i(it, y);
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    int64_t v;
    switch (op) {
    case TB_ADD: v = (int64_t)(ua + ub); break;
    case TB_SUB: v = (int64_t)(ua - ub); break;
    case TB_MUL: v = (int64_t)(ua * ub); break;
    case TB_DIV: case TB_FLOORDIV: v = floordiv(it, a, b, e->loc); break;
    case TB_FLOORMOD: v = floormod(it, a, b, e->loc); break;
    case TB_MIN: v = a < b ? a : b; break;
    case TB_MAX: v = a > b ? a : b; break;
    case TB_POW: v = ipow(it, a, b, e->loc); break;
    case TB_BITAND: v = a & b; break;
    case TB_BITOR: v = a | b; break;
    case TB_BITXOR: v = a ^ b; break;
    case TB_SHL:
        if (b < 0) tlc_interp_fail(it, e->loc, "negative shift count %lld", (long long)b);
        v = b >= 64 ? 0 : (int64_t)(ua << b);
        break;
    case TB_SHR:
        if (b < 0) tlc_interp_fail(it, e->loc, "negative shift count %lld", (long long)b);
        v = b >= 64 ? (a < 0 ? -1 : 0) : (a < 0 ? ~(~a >> b) : a >> b);
        break;
    default:
        tlc_interp_fail(it, e->loc, "unexpected operator '%s'", tir_binop_name(op));
    }
    r.i = tir_wrap_int(e->dtype, v);
    return r;
}

static tlc_ival eval_unary(tlc_interp *it, const tir_expr *e) {
    tir_unop op = e->u.un.op;
    const tir_expr *x = e->u.un.a;
    tlc_ival r;
    if (op == TU_NOT) { r.i = !tlc_interp_truthy(it, x); return r; }
    if (!tlc_interp_isf(e->dtype)) {
        int64_t a = tlc_interp_eval_i(it, x);
        switch (op) {
        case TU_NEG: r.i = tir_wrap_int(e->dtype, (int64_t)(0 - (uint64_t)a)); return r;
        case TU_BITNOT: r.i = tir_wrap_int(e->dtype, ~a); return r;
        case TU_ABS: r.i = tir_wrap_int(e->dtype, a < 0 ? (int64_t)(0 - (uint64_t)a) : a); return r;
        default: break;
        }
        /* other math on an integer-typed expression: compute in double, truncate */
    }
    double a = tlc_interp_eval_f(it, x), v;
    switch (op) {
    case TU_NEG: v = -a; break;
    case TU_EXP: v = exp(a); break;
    case TU_EXP2: v = exp2(a); break;
    case TU_LOG: v = log(a); break;
    case TU_LOG2: v = log2(a); break;
    case TU_RSQRT: v = 1.0 / sqrt(a); break;
    case TU_SQRT: v = sqrt(a); break;
    case TU_ABS: v = fabs(a); break;
    case TU_TANH: v = tanh(a); break;
    case TU_SIGMOID: v = 1.0 / (1.0 + exp(-a)); break;
    case TU_ERF: v = erf(a); break;
    case TU_SIN: v = sin(a); break;
    case TU_COS: v = cos(a); break;
    case TU_FLOOR: v = floor(a); break;
    case TU_CEIL: v = ceil(a); break;
    case TU_LOG1P: v = log1p(a); break;
    default:
        tlc_interp_fail(it, e->loc, "operator '%s' on a float value", tir_unop_name(op));
    }
    if (tlc_interp_isf(e->dtype)) r.f = tlc_round_to_dtype(e->dtype, v);
    else r.i = tlc_float_to_int(e->dtype, v);
    return r;
}

tlc_ival tlc_interp_eval(tlc_interp *it, const tir_expr *e) {
    tlc_ival r;
    switch (e->kind) {
    case TE_INT:
        if (tlc_interp_isf(e->dtype)) r.f = (double)e->u.ival;
        else r.i = e->u.ival;
        return r;
    case TE_FLOAT:
        if (tlc_interp_isf(e->dtype)) r.f = tlc_round_to_dtype(e->dtype, e->u.fval);
        else r.i = tlc_float_to_int(e->dtype, e->u.fval);
        return r;
    case TE_VAR:
        r = it->vars[e->u.var->id];
        if (e->u.var->dtype != e->dtype) r = tlc_interp_convert(r, e->u.var->dtype, e->dtype);
        return r;
    case TE_LOAD: {
        const tir_buffer *b = e->u.load.buf;
        int64_t off = tlc_interp_offset(it, b, e->u.load.idx, e->loc);
        r = it->bufs[b->id].data[off];
        if (b->dtype != e->dtype) r = tlc_interp_convert(r, b->dtype, e->dtype);
        return r;
    }
    case TE_BINARY: return eval_binary(it, e);
    case TE_UNARY: return eval_unary(it, e);
    case TE_CAST:
        if (e->u.cast.bits) return tlc_interp_reinterpret(tlc_interp_eval(it, e->u.cast.a), e->u.cast.a->dtype, e->dtype);
        return tlc_interp_convert(tlc_interp_eval(it, e->u.cast.a), e->u.cast.a->dtype, e->dtype);
    case TE_SELECT: {
        const tir_expr *pick = tlc_interp_truthy(it, e->u.sel.cond) ? e->u.sel.a : e->u.sel.b;
        r = tlc_interp_eval(it, pick);
        if (pick->dtype != e->dtype) r = tlc_interp_convert(r, pick->dtype, e->dtype);
        return r;
    }
    case TE_SHUFFLE: return tlc_interp_shuffle(it, e);
    }
    tlc_interp_fail(it, e->loc, "unknown expression kind %d", (int)e->kind);
}
