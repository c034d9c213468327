/* Lowering of Tile IR scalar expressions to Thread IR. float16 / bfloat16
 * arithmetic is computed in float32 and rounded back to the expression's
 * type; exp2 and rsqrt use the hardware approximations (ex2.approx,
 * rsqrt.approx), exp(x) is ex2.approx(x * log2(e)). tanh, sigmoid, erf,
 * log1p, sin and cos are built from those (lower_math.c). Float32 division by a
 * constant c is a multiplication by 1/c (rounded once to float32): exact
 * when c is a power of two, otherwise within 2^-23 relative of x / c (about
 * 1 ulp), where an IEEE division would be 0.5 ulp. Other float32 divisions
 * become div.full.f32 in codegen (at most 2 ulp). */
#include <math.h>
#include "lower_ctx.h"

static bool is_half(tir_dtype t) { return t == TIR_F16 || t == TIR_BF16; }

/* Type arithmetic on dtype t is carried out in. */
static th_type compute_type(tir_dtype t) {
    if (is_half(t) || tir_dtype_is_fp8(t)) return th_scalar(TH_F32);
    return tlc_reg_type(t);
}

static th_expr *var_value(tlc_lower_ctx *lc, const tir_expr *e) {
    const tir_var *v = e->u.var;
    if (v->id >= 0 && v->id < lc->k->nvars) {
        if (lc->var_expr[v->id]) return lc->var_expr[v->id];
        if (lc->var_slot[v->id]) return th_read(lc->a, lc->var_slot[v->id]);
    }
    tlc_error(lc->diag, e->loc, "internal error: variable '%s' has no value in lowering", v->name);
    return th_int(lc->a, TH_I32, 0);
}

/* e loads an element of global or shared memory at an index that may lie
 * outside its buffer, where the bounds tests do not cover it (below 0 for
 * a tensor, whose end is masked; either side for shared memory). */
static bool may_fault(tlc_lower_ctx *lc, const tir_expr *e) {
    if (!e) return false;
    switch (e->kind) {
    case TE_LOAD: {
        const tir_buffer *b = e->u.load.buf;
        bool memory = b->scope == TIR_SCOPE_GLOBAL || b->scope == TIR_SCOPE_SHARED;
        for (int d = 0; d < b->rank; d++) {
            int64_t lo, hi;
            if (may_fault(lc, e->u.load.idx[d])) return true;
            if (!memory) continue;
            if (!tlc_expr_range(lc, e->u.load.idx[d], &lo, &hi) || lo < 0) return true;
            if (b->scope == TIR_SCOPE_SHARED && hi >= tir_buffer_dim(b, d)) return true;
        }
        return false;
    }
    case TE_BINARY: return may_fault(lc, e->u.bin.a) || may_fault(lc, e->u.bin.b);
    case TE_UNARY: return may_fault(lc, e->u.un.a);
    case TE_CAST: return may_fault(lc, e->u.cast.a);
    case TE_SELECT: return may_fault(lc, e->u.sel.cond) || may_fault(lc, e->u.sel.a) || may_fault(lc, e->u.sel.b);
    case TE_SHUFFLE: return may_fault(lc, e->u.shfl.value) || may_fault(lc, e->u.shfl.lane);
    default: return false;
    }
}

static th_binop arith_op(tir_binop op, bool is_float) {
    switch (op) {
    case TB_ADD: return THB_ADD;
    case TB_SUB: return THB_SUB;
    case TB_MUL: return THB_MUL;
    case TB_DIV: return THB_DIV;
    case TB_FLOORDIV: return is_float ? THB_DIV : THB_FLOORDIV;
    case TB_FLOORMOD: return is_float ? THB_REM : THB_FLOORMOD;
    case TB_MIN: return THB_MIN;
    case TB_MAX: return THB_MAX;
    case TB_POW: return THB_POW;
    case TB_BITAND: case TB_AND: return THB_AND;
    case TB_BITOR: case TB_OR: return THB_OR;
    case TB_BITXOR: return THB_XOR;
    case TB_SHL: return THB_SHL;
    case TB_SHR: return THB_SHR;
    default: return THB_ADD;
    }
}

/* The value of a constant operand as the float32 it becomes (sema folds
 * literals and compile-time parameters into TE_INT / TE_FLOAT). */
static bool const_f32(const tir_expr *e, double *v) {
    double d;
    if (e && e->kind == TE_FLOAT) d = e->u.fval;
    else if (e && e->kind == TE_INT) d = (double)e->u.ival;
    else return false;
    if (!(fabs(d) <= 0x1p126)) return false; /* NaN, inf, or no normal float32 reciprocal */
    *v = (double)(float)d;
    return true;
}

static th_expr *lower_binary(tlc_lower_ctx *lc, const tir_expr *e) {
    tir_binop op = e->u.bin.op;
    th_expr *x = tlc_lower_expr(lc, e->u.bin.a);
    th_expr *y = tlc_lower_expr(lc, e->u.bin.b);
    tir_dtype xt = e->u.bin.a->dtype, yt = e->u.bin.b->dtype;
    if (op >= TB_LT && op <= TB_NE) {
        tir_dtype pt = tir_promote(xt, yt);
        th_type ct = compute_type(pt);
        if (ct.base == TH_I1) ct = th_scalar(TH_I32);
        x = tlc_coerce_from(lc, x, xt, ct);
        y = tlc_coerce_from(lc, y, yt, ct);
        static const th_cmpop cmp[] = {THC_LT, THC_LE, THC_GT, THC_GE, THC_EQ, THC_NE};
        static const th_cmpop ucmp[] = {THC_ULT, THC_ULE, THC_UGT, THC_UGE, THC_EQ, THC_NE};
        return th_cmp(lc->a, (tir_dtype_is_unsigned(pt) ? ucmp : cmp)[op - TB_LT], x, y);
    }
    if (op == TB_AND || op == TB_OR) {
        x = tlc_coerce(lc, x, th_scalar(TH_I1));
        y = tlc_coerce(lc, y, th_scalar(TH_I1));
        return th_bin(lc->a, arith_op(op, false), x, y);
    }
    th_type rt = tlc_reg_type(e->dtype);
    th_type ct = compute_type(e->dtype);
    bool fl = tir_dtype_is_float(e->dtype);
    if (op == TB_DIV && !fl) ct = th_scalar(TH_F32); /* true division of ints: sema types it float */
    if (op == TB_POW && !fl) ct = th_scalar(TH_F32); /* integer power: computed in f32, then rounded */
    x = tlc_coerce_from(lc, x, xt, ct);
    y = tlc_coerce_from(lc, y, yt, ct);
    bool cfl = ct.base == TH_F32;
    double c;
    if (op == TB_DIV && cfl && const_f32(e->u.bin.b, &c) && fabs(c) >= 0x1p-126) /* 1/c: a normal float32 */
        return tlc_coerce(lc, th_bin(lc->a, THB_MUL, x, th_float(lc->a, TH_F32, (double)(float)(1.0 / c))), rt);
    th_binop bop = arith_op(op, cfl);
    if (!cfl && tir_dtype_is_unsigned(e->dtype)) { /* uint32 (narrower ones compute as int32) */
        switch (bop) {
        case THB_FLOORDIV: bop = THB_UDIV; break;
        case THB_FLOORMOD: bop = THB_UREM; break;
        case THB_SHR: bop = THB_LSHR; break;
        case THB_MIN: bop = THB_UMIN; break;
        case THB_MAX: bop = THB_UMAX; break;
        default: break;
        }
    }
    int64_t lo, hi, d;
    /* Python's floor division and modulo of a value known not to be
     * negative by a positive constant are C's unsigned ones (a shift and a
     * mask for a power of two), without floor's sign fix-up */
    if ((op == TB_FLOORDIV || op == TB_FLOORMOD) && !cfl && tir_expr_const_int(e->u.bin.b, &d) && d > 0 &&
        tlc_expr_range(lc, e->u.bin.a, &lo, &hi) && lo >= 0)
        bop = op == TB_FLOORDIV ? THB_UDIV : THB_UREM;
    th_expr *r = th_bin(lc->a, bop, x, y);
    return tlc_coerce(lc, r, rt);
}

static th_expr *lower_unary(tlc_lower_ctx *lc, const tir_expr *e) {
    th_expr *x = tlc_lower_expr(lc, e->u.un.a);
    tir_dtype xt = e->u.un.a->dtype;
    th_type rt = tlc_reg_type(e->dtype);
    th_type ct = compute_type(e->dtype);
    switch (e->u.un.op) {
    case TU_NOT: return th_un(lc->a, THU_NOT, tlc_coerce(lc, x, th_scalar(TH_I1)));
    case TU_BITNOT: return th_un(lc->a, THU_NOT, tlc_coerce_from(lc, x, xt, rt));
    case TU_NEG: return tlc_coerce(lc, th_un(lc->a, THU_NEG, tlc_coerce_from(lc, x, xt, ct)), rt);
    case TU_ABS:
        if (tir_dtype_is_unsigned(e->dtype)) return tlc_coerce_from(lc, x, xt, rt);
        return tlc_coerce(lc, th_un(lc->a, THU_ABS, tlc_coerce_from(lc, x, xt, ct)), rt);
    default: break;
    }
    /* transcendental: float32 */
    th_type f = th_scalar(TH_F32);
    x = tlc_coerce_from(lc, x, xt, f);
    th_expr *r;
    switch (e->u.un.op) {
    case TU_EXP: r = th_un(lc->a, THU_EXP2_APPROX, th_bin(lc->a, THB_MUL, x, th_float(lc->a, TH_F32, 1.4426950408889634))); break;
    case TU_EXP2: r = th_un(lc->a, THU_EXP2_APPROX, x); break;
    case TU_LOG: r = th_un(lc->a, THU_LOG, x); break;
    case TU_LOG2: r = th_un(lc->a, THU_LOG2, x); break;
    case TU_RSQRT: r = th_un(lc->a, THU_RSQRT_APPROX, x); break;
    case TU_SQRT: r = th_un(lc->a, THU_SQRT, x); break;
    case TU_FLOOR: r = th_un(lc->a, THU_FLOOR, x); break;
    case TU_CEIL: r = th_un(lc->a, THU_CEIL, x); break;
    case TU_TANH: case TU_SIGMOID: case TU_ERF: case TU_SIN: case TU_COS: case TU_LOG1P:
        r = tlc_lower_math(lc, e->u.un.op, x);
        break;
    default: r = x; break;
    }
    return tlc_coerce(lc, r, rt);
}

th_expr *tlc_lower_expr(tlc_lower_ctx *lc, const tir_expr *e) {
    if (!e) return th_int(lc->a, TH_I32, 0);
    for (int i = 0; i < lc->nmemo; i++)
        if (lc->memo_expr[i] == e) return lc->memo_value[i];
    switch (e->kind) {
    case TE_INT: {
        th_type t = tlc_reg_type(e->dtype);
        if (t.base == TH_I1) return th_int(lc->a, TH_I1, e->u.ival != 0);
        if (t.base == TH_F32 || t.base == TH_F16 || t.base == TH_BF16) return th_float(lc->a, t.base, (double)e->u.ival);
        return th_int(lc->a, t.base, e->u.ival);
    }
    case TE_FLOAT: {
        th_type t = tlc_reg_type(e->dtype);
        if (t.base != TH_F32 && t.base != TH_F16 && t.base != TH_BF16) t = th_scalar(TH_F32);
        return th_float(lc->a, t.base, e->u.fval);
    }
    case TE_VAR: return tlc_coerce(lc, var_value(lc, e), tlc_reg_type(e->dtype));
    case TE_LOAD: return tlc_lower_load(lc, e->u.load.buf, e->u.load.idx, e->loc);
    case TE_BINARY: return lower_binary(lc, e);
    case TE_UNARY: return lower_unary(lc, e);
    case TE_CAST:
        if (e->u.cast.bits) { /* the bytes as memory holds them, read as the other dtype */
            const tir_expr *x = e->u.cast.a;
            th_expr *m = tlc_coerce(lc, tlc_lower_expr(lc, x), tlc_mem_type(x->dtype));
            return tlc_coerce(lc, th_bitcast(lc->a, m, tlc_mem_type(e->dtype)), tlc_reg_type(e->dtype));
        }
        return tlc_convert_value(lc, tlc_lower_expr(lc, e->u.cast.a), e->u.cast.a->dtype, e->dtype, tlc_reg_type(e->dtype));
    case TE_SELECT: {
        th_type rt = tlc_reg_type(e->dtype);
        th_expr *c = tlc_coerce(lc, tlc_lower_expr(lc, e->u.sel.cond), th_scalar(TH_I1));
        if (may_fault(lc, e->u.sel.a) || may_fault(lc, e->u.sel.b)) {
            /* only the chosen value's loads run (the other's index may be
             * outside its buffer: `T.if_then_else(i >= 0, X[i], 0)`) */
            th_var *t = tlc_temp(lc, "sel", rt, 0);
            th_stmt *arm[2];
            for (int i = 0; i < 2; i++) {
                const tir_expr *x = i ? e->u.sel.b : e->u.sel.a;
                tlc_ptrvec *saved = tlc_lower_begin(lc);
                tlc_emit(lc, th_assign(lc->a, t, NULL, tlc_coerce_from(lc, tlc_lower_expr(lc, x), x->dtype, rt)));
                arm[i] = tlc_lower_end(lc, saved);
            }
            tlc_emit(lc, th_if(lc->a, c, arm[0], arm[1]));
            return th_read(lc->a, t);
        }
        th_expr *x = tlc_coerce_from(lc, tlc_lower_expr(lc, e->u.sel.a), e->u.sel.a->dtype, rt);
        th_expr *y = tlc_coerce_from(lc, tlc_lower_expr(lc, e->u.sel.b), e->u.sel.b->dtype, rt);
        return th_select(lc->a, c, x, y);
    }
    case TE_SHUFFLE: {
        th_type t = tlc_reg_type(e->dtype);
        th_expr *args[3] = {tlc_coerce(lc, tlc_lower_expr(lc, e->u.shfl.value), t),
                            tlc_coerce(lc, tlc_lower_expr(lc, e->u.shfl.lane), th_scalar(TH_I32)),
                            th_int(lc->a, TH_I32, e->u.shfl.width)};
        return th_intrin_call(lc->a, e->u.shfl.xor_lanes ? THI_SHFL_BFLY : THI_SHFL_IDX, t, args, 3);
    }
    }
    return th_int(lc->a, TH_I32, 0);
}
