/* Thread IR expressions -> LLVM values. Every translated value has exactly
 * the LLVM type of its Thread IR type; operand types are checked here (LLVM
 * would accept some mismatches silently, e.g. a store of the wrong width
 * through an opaque pointer, and abort on others). */
#include "codegen_internal.h"
#include <string.h>

static int type_bits(th_type t) {
    int lanes = t.lanes > 1 ? t.lanes : 1;
    if (t.base == TH_I1) return lanes;
    return th_type_bytes(t) * 8;
}

static int elem_bits(th_base b) { return b == TH_I1 ? 1 : th_type_bytes(th_scalar(b)) * 8; }

static const char *tname(th_type t, char buf[32]) { return th_type_name(t, buf); }

static bool same_lanes(th_type a, th_type b) {
    return (a.lanes > 1 ? a.lanes : 1) == (b.lanes > 1 ? b.lanes : 1);
}

void cg_set_fp_flags(cg_ctx *cg, LLVMValueRef inst) {
    if (!inst || !LLVMIsAInstruction(inst) || !LLVMCanValueUseFastMathFlags(inst)) return;
    /* contract: fuse a*b+c into fma like nvcc's default --fmad=true. */
    LLVMFastMathFlags f = LLVMFastMathAllowContract;
    if (cg_fast_math(cg))
        f |= LLVMFastMathAllowReassoc | LLVMFastMathNoSignedZeros | LLVMFastMathAllowReciprocal;
    LLVMSetFastMathFlags(inst, f);
}

static LLVMValueRef i32c(cg_ctx *cg, int64_t v) {
    return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)v, 1);
}

/* Integer or float constant of type t (splat for vectors). */
static LLVMValueRef make_const(cg_ctx *cg, th_type t, bool is_float_val, int64_t iv, double fv) {
    LLVMTypeRef et = cg_elem_type(cg, t);
    LLVMValueRef c;
    if (cg_is_float(t)) c = LLVMConstReal(et, is_float_val ? fv : (double)iv);
    else if (cg_is_int(t)) c = LLVMConstInt(et, (unsigned long long)(is_float_val ? (int64_t)fv : iv), 1);
    else if (t.base == TH_PTR && !is_float_val && iv == 0) c = LLVMConstNull(et);
    else {
        char b[32];
        cg_error(cg, "constant of type %s", tname(t, b));
        return cg_undef(cg, t);
    }
    if (t.lanes > 1) {
        LLVMValueRef elems[64];
        if (t.lanes > 64) { cg_error(cg, "vector of %d lanes", t.lanes); return cg_undef(cg, t); }
        for (int i = 0; i < t.lanes; i++) elems[i] = c;
        return LLVMConstVector(elems, t.lanes);
    }
    return c;
}

static LLVMValueRef zero_of(cg_ctx *cg, th_type t) { return LLVMConstNull(cg_type(cg, t)); }

LLVMValueRef cg_convert(cg_ctx *cg, LLVMValueRef v, th_type from, th_type to) {
    return cg_convert_signed(cg, v, from, to, false);
}

LLVMValueRef cg_convert_signed(cg_ctx *cg, LLVMValueRef v, th_type from, th_type to, bool uns) {
    char b1[32], b2[32];
    if (th_type_eq(from, to)) return v;
    if (!same_lanes(from, to) || from.base == TH_VOID || to.base == TH_VOID) {
        cg_error(cg, "conversion from %s to %s", tname(from, b1), tname(to, b2));
        return cg_undef(cg, to);
    }
    LLVMTypeRef tt = cg_type(cg, to);
    LLVMBuilderRef b = cg->b;
    if (from.base == TH_PTR || to.base == TH_PTR) {
        if (from.base == TH_PTR && to.base == TH_PTR) return LLVMBuildAddrSpaceCast(b, v, tt, "");
        if (from.base == TH_PTR && cg_is_int(to)) return LLVMBuildPtrToInt(b, v, tt, "");
        if (cg_is_int(from) && to.base == TH_PTR) return LLVMBuildIntToPtr(b, v, tt, "");
        cg_error(cg, "conversion from %s to %s", tname(from, b1), tname(to, b2));
        return cg_undef(cg, to);
    }
    if (cg_is_int(from) && cg_is_int(to)) {
        if (to.base == TH_I1) return LLVMBuildICmp(b, LLVMIntNE, v, zero_of(cg, from), "");
        if (from.base == TH_I1) return LLVMBuildZExt(b, v, tt, ""); /* bools are 0 / 1 */
        int fb = elem_bits(from.base), tb = elem_bits(to.base);
        if (fb < tb) return uns ? LLVMBuildZExt(b, v, tt, "") : LLVMBuildSExt(b, v, tt, "");
        if (fb > tb) return LLVMBuildTrunc(b, v, tt, "");
        return v;
    }
    if (cg_is_int(from) && cg_is_float(to))
        return from.base == TH_I1 || uns ? LLVMBuildUIToFP(b, v, tt, "") : LLVMBuildSIToFP(b, v, tt, "");
    if (cg_is_float(from) && cg_is_int(to)) {
        if (to.base == TH_I1) return LLVMBuildFCmp(b, LLVMRealUNE, v, zero_of(cg, from), "");
        /* saturating, as cvt.rzi (a negative value to an unsigned type gives
         * 0); an 8- or 16-bit result too, which fptosi would compute in 32
         * bits and wrap */
        if (uns || elem_bits(to.base) < 32) {
            LLVMTypeRef tys[2] = {tt, cg_type(cg, from)};
            return cg_call_intrinsic(cg, uns ? "llvm.fptoui.sat" : "llvm.fptosi.sat", tys, 2, &v, 1, tt);
        }
        /* cvt.rzi saturates in hardware; out-of-range inputs are poison in LLVM terms. */
        return LLVMBuildFPToSI(b, v, tt, "");
    }
    if (cg_is_float(from) && cg_is_float(to)) {
        int fb = elem_bits(from.base), tb = elem_bits(to.base);
        if (fb == tb) { /* f16 <-> bf16: through f32 (exact widening, one rounding) */
            th_type mid = th_vec(TH_F32, from.lanes);
            LLVMValueRef w = LLVMBuildFPExt(b, v, cg_type(cg, mid), "");
            return LLVMBuildFPTrunc(b, w, tt, "");
        }
        return fb < tb ? LLVMBuildFPExt(b, v, tt, "") : LLVMBuildFPTrunc(b, v, tt, "");
    }
    cg_error(cg, "conversion from %s to %s", tname(from, b1), tname(to, b2));
    return cg_undef(cg, to);
}

LLVMValueRef cg_cond(cg_ctx *cg, const th_expr *e) {
    LLVMValueRef v = cg_expr(cg, e);
    if (!e) return LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 0, 0);
    if (e->type.lanes > 1) {
        cg_error(cg, "vector used as a condition");
        return LLVMGetUndef(LLVMInt1TypeInContext(cg->ctx));
    }
    if (e->type.base == TH_I1) return v;
    if (cg_is_int(e->type) || cg_is_float(e->type)) return cg_convert(cg, v, e->type, th_scalar(TH_I1));
    if (e->type.base == TH_PTR) return LLVMBuildIsNotNull(cg->b, v, "");
    cg_error(cg, "condition of type void");
    return LLVMGetUndef(LLVMInt1TypeInContext(cg->ctx));
}

static bool check_align(cg_ctx *cg, int align, th_type t) {
    if (align < 0 || (align & (align - 1)) != 0) {
        cg_error(cg, "alignment %d is not a power of two", align);
        return false;
    }
    (void)t;
    return true;
}

static LLVMValueRef int_index(cg_ctx *cg, const th_expr *idx, const char *what) {
    LLVMValueRef v = cg_expr(cg, idx);
    if (!idx) return i32c(cg, 0);
    if (!cg_is_int(idx->type) || idx->type.lanes > 1 || idx->type.base == TH_I1) {
        char b[32];
        cg_error(cg, "%s index has type %s (want i8..i64)", what, tname(idx->type, b));
        return i32c(cg, 0);
    }
    return v;
}

/* Element `index` of register array var: its value, or a load from its
 * alloca when the array is indexed at run time. */
static LLVMValueRef array_read(cg_ctx *cg, const th_var *var, const th_expr *index, th_type want) {
    char b1[32];
    if (!var) { cg_error(cg, "array access without a variable"); return cg_undef(cg, want); }
    if (var->array_len <= 0) { cg_error(cg, "'%s' is not a register array", var->name); return cg_undef(cg, want); }
    int64_t c;
    bool is_const = th_expr_const_int(index, &c);
    if (is_const && (c < 0 || c >= var->array_len)) {
        cg_error(cg, "index %lld out of range for '%s[%d]'", (long long)c, var->name, var->array_len);
        return cg_undef(cg, want);
    }
    LLVMValueRef idx = int_index(cg, index, "register array");
    cg_slot *s = cg_var_slot(cg, var);
    if (!s) return cg_undef(cg, want);
    if (!th_type_eq(var->type, want)) { cg_error(cg, "read of '%s' with type %s", var->name, tname(want, b1)); return cg_undef(cg, want); }
    if (!s->alloca) return cg_var_value(cg, s, (int)c);
    LLVMValueRef gi[2] = {i32c(cg, 0), idx};
    LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, s->ty, s->alloca, gi, 2, "");
    return LLVMBuildLoad2(cg->b, cg_type(cg, var->type), p, "");
}

/* Python floor division / modulo on signed integers:
 * q = a / b rounded toward -inf, r = a - q * b (sign of b). */
static LLVMValueRef floor_divmod(cg_ctx *cg, LLVMValueRef a, LLVMValueRef b, th_type t, bool want_mod) {
    LLVMBuilderRef B = cg->b;
    LLVMValueRef q = LLVMBuildSDiv(B, a, b, "");
    LLVMValueRef r = LLVMBuildSRem(B, a, b, "");
    LLVMValueRef zero = zero_of(cg, t);
    LLVMValueRef nz = LLVMBuildICmp(B, LLVMIntNE, r, zero, "");
    LLVMValueRef sdiff = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildXor(B, r, b, ""), zero, "");
    LLVMValueRef adj = LLVMBuildAnd(B, nz, sdiff, "");
    if (want_mod) return LLVMBuildSelect(B, adj, LLVMBuildAdd(B, r, b, ""), r, "");
    return LLVMBuildSub(B, q, LLVMBuildZExt(B, adj, cg_type(cg, t), ""), "");
}

static LLVMValueRef float_math2(cg_ctx *cg, const char *intrin, LLVMValueRef a, LLVMValueRef b, th_type t) {
    LLVMTypeRef ty = cg_type(cg, t);
    LLVMValueRef args[2] = {a, b};
    return cg_call_intrinsic(cg, intrin, &ty, 1, args, 2, ty);
}

static LLVMValueRef bin_expr(cg_ctx *cg, const th_expr *e) {
    const th_expr *xa = e->u.bin.a, *xb = e->u.bin.b;
    char b1[32], b2[32];
    if (!xa || !xb) { cg_error(cg, "binary operation with a missing operand"); return cg_undef(cg, e->type); }
    th_type t = xa->type;
    if (!th_type_eq(t, xb->type) || !th_type_eq(t, e->type)) {
        cg_error(cg, "binary operation %d on %s and %s giving %s", e->u.bin.op, tname(t, b1),
                 tname(xb->type, b2), tname(e->type, (char[32]){0}));
        return cg_undef(cg, e->type);
    }
    if (e->u.bin.op == THB_POW) return cg_pow(cg, xa, xb, t);
    LLVMValueRef a = cg_expr(cg, xa), b = cg_expr(cg, xb);
    LLVMBuilderRef B = cg->b;
    LLVMValueRef r = NULL;
    if (cg_is_float(t)) {
        switch ((th_binop)e->u.bin.op) {
        case THB_ADD: r = LLVMBuildFAdd(B, a, b, ""); break;
        case THB_SUB: r = LLVMBuildFSub(B, a, b, ""); break;
        case THB_MUL: r = LLVMBuildFMul(B, a, b, ""); break;
        case THB_DIV: return cg_fdiv(cg, a, b, t);
        case THB_REM: r = LLVMBuildFRem(B, a, b, ""); break;
        case THB_MIN: return float_math2(cg, "llvm.minnum", a, b, t);
        case THB_MAX: return float_math2(cg, "llvm.maxnum", a, b, t);
        case THB_FLOORDIV:
        case THB_FLOORMOD: {
            LLVMTypeRef ty = cg_type(cg, t);
            LLVMValueRef d = LLVMBuildFDiv(B, a, b, "");
            cg_set_fp_flags(cg, d);
            LLVMValueRef fl = cg_call_intrinsic(cg, "llvm.floor", &ty, 1, &d, 1, ty);
            if (e->u.bin.op == THB_FLOORDIV) return fl;
            r = LLVMBuildFSub(B, a, LLVMBuildFMul(B, fl, b, ""), "");
            break;
        }
        default:
            cg_error(cg, "binary operation %d is not defined on %s", e->u.bin.op, tname(t, b1));
            return cg_undef(cg, t);
        }
        cg_set_fp_flags(cg, r);
        return r;
    }
    if (!cg_is_int(t)) {
        cg_error(cg, "arithmetic on %s", tname(t, b1));
        return cg_undef(cg, t);
    }
    LLVMTypeRef ty = cg_type(cg, t);
    switch ((th_binop)e->u.bin.op) {
    case THB_ADD: return LLVMBuildAdd(B, a, b, "");
    case THB_SUB: return LLVMBuildSub(B, a, b, "");
    case THB_MUL: return LLVMBuildMul(B, a, b, "");
    case THB_DIV: return LLVMBuildSDiv(B, a, b, "");
    case THB_REM: return LLVMBuildSRem(B, a, b, "");
    case THB_UDIV: return LLVMBuildUDiv(B, a, b, "");
    case THB_UREM: return LLVMBuildURem(B, a, b, "");
    case THB_FLOORDIV: return floor_divmod(cg, a, b, t, false);
    case THB_FLOORMOD: return floor_divmod(cg, a, b, t, true);
    case THB_MIN: { LLVMValueRef args[2] = {a, b}; return cg_call_intrinsic(cg, "llvm.smin", &ty, 1, args, 2, ty); }
    case THB_MAX: { LLVMValueRef args[2] = {a, b}; return cg_call_intrinsic(cg, "llvm.smax", &ty, 1, args, 2, ty); }
    case THB_UMIN: { LLVMValueRef args[2] = {a, b}; return cg_call_intrinsic(cg, "llvm.umin", &ty, 1, args, 2, ty); }
    case THB_UMAX: { LLVMValueRef args[2] = {a, b}; return cg_call_intrinsic(cg, "llvm.umax", &ty, 1, args, 2, ty); }
    case THB_AND: return LLVMBuildAnd(B, a, b, "");
    case THB_OR: return LLVMBuildOr(B, a, b, "");
    case THB_OR_DISJOINT: {
        LLVMValueRef v = LLVMBuildOr(B, a, b, "");
        if (LLVMIsAInstruction(v)) LLVMSetIsDisjoint(v, 1);
        return v;
    }
    case THB_XOR: return LLVMBuildXor(B, a, b, "");
    case THB_SHL: return LLVMBuildShl(B, a, b, "");
    case THB_SHR: return LLVMBuildAShr(B, a, b, "");
    case THB_LSHR: return LLVMBuildLShr(B, a, b, "");
    case THB_POW: break;
    }
    cg_error(cg, "unknown binary operation %d", e->u.bin.op);
    return cg_undef(cg, t);
}

static LLVMValueRef un_expr(cg_ctx *cg, const th_expr *e) {
    const th_expr *x = e->u.un.a;
    char b1[32];
    if (!x) { cg_error(cg, "unary operation without operand"); return cg_undef(cg, e->type); }
    th_type t = x->type;
    if (!th_type_eq(t, e->type)) {
        cg_error(cg, "unary operation %d on %s gives %s", (int)e->u.un.op, tname(t, b1), tname(e->type, (char[32]){0}));
        return cg_undef(cg, e->type);
    }
    LLVMValueRef v = cg_expr(cg, x);
    LLVMTypeRef ty = cg_type(cg, t);
    switch (e->u.un.op) {
    case THU_NEG:
        if (cg_is_float(t)) return LLVMBuildFNeg(cg->b, v, "");
        if (cg_is_int(t)) return LLVMBuildNeg(cg->b, v, "");
        break;
    case THU_NOT:
        if (cg_is_int(t)) return LLVMBuildNot(cg->b, v, "");
        break;
    case THU_ABS:
        if (cg_is_float(t)) return cg_call_intrinsic(cg, "llvm.fabs", &ty, 1, &v, 1, ty);
        if (cg_is_int(t) && t.base != TH_I1) {
            LLVMValueRef args[2] = {v, LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 0, 0)};
            return cg_call_intrinsic(cg, "llvm.abs", &ty, 1, args, 2, ty);
        }
        break;
    default:
        if (cg_is_float(t)) return cg_unary_math(cg, e->u.un.op, v, t);
        break;
    }
    cg_error(cg, "unary operation %d is not defined on %s", (int)e->u.un.op, tname(t, b1));
    return cg_undef(cg, t);
}

static LLVMValueRef cmp_expr(cg_ctx *cg, const th_expr *e) {
    const th_expr *xa = e->u.bin.a, *xb = e->u.bin.b;
    char b1[32], b2[32];
    if (!xa || !xb) { cg_error(cg, "comparison with a missing operand"); return cg_undef(cg, e->type); }
    if (!th_type_eq(xa->type, xb->type) || e->type.base != TH_I1 || !same_lanes(xa->type, e->type)) {
        cg_error(cg, "comparison of %s with %s", tname(xa->type, b1), tname(xb->type, b2));
        return cg_undef(cg, e->type);
    }
    LLVMValueRef a = cg_expr(cg, xa), b = cg_expr(cg, xb);
    th_cmpop op = (th_cmpop)e->u.bin.op;
    if (cg_is_float(xa->type)) {
        /* ordered, except != which is true on NaN (like Python / C) */
        static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                               LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
        if ((unsigned)op > THC_GE) { cg_error(cg, "unknown comparison %d", (int)op); return cg_undef(cg, e->type); }
        return LLVMBuildFCmp(cg->b, fp[op], a, b, "");
    }
    if (cg_is_int(xa->type) || xa->type.base == TH_PTR) {
        bool u = xa->type.base == TH_PTR || xa->type.base == TH_I1;
        LLVMIntPredicate ip[] = {LLVMIntEQ, LLVMIntNE, u ? LLVMIntULT : LLVMIntSLT, u ? LLVMIntULE : LLVMIntSLE,
                                 u ? LLVMIntUGT : LLVMIntSGT, u ? LLVMIntUGE : LLVMIntSGE,
                                 LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
        if ((unsigned)op > THC_UGE) { cg_error(cg, "unknown comparison %d", (int)op); return cg_undef(cg, e->type); }
        return LLVMBuildICmp(cg->b, ip[op], a, b, "");
    }
    cg_error(cg, "comparison of %s", tname(xa->type, b1));
    return cg_undef(cg, e->type);
}

static LLVMValueRef intrin_expr(cg_ctx *cg, const th_expr *e) {
    char b1[32];
    int n = e->u.intrin.nargs;
    th_expr **args = e->u.intrin.args;
    for (int i = 0; i < n; i++)
        if (!args || !args[i]) { cg_error(cg, "intrinsic with a missing argument"); return cg_undef(cg, e->type); }
    switch (e->u.intrin.id) {
    case THI_SHFL_BFLY:
    case THI_SHFL_IDX: {
        if (n < 2 || n > 3 || !th_type_eq(args[0]->type, e->type) || !cg_is_int(args[1]->type) ||
            args[1]->type.lanes > 1) {
            cg_error(cg, "shuffle wants (value, i32 lane[, const width]) returning the value type");
            return cg_undef(cg, e->type);
        }
        int64_t width = 32;
        if (n == 3 && (!th_expr_const_int(args[2], &width) || width < 1 || width > 32 || (width & (width - 1)))) {
            cg_error(cg, "shuffle width must be a constant power of two <= 32");
            return cg_undef(cg, e->type);
        }
        LLVMValueRef v = cg_expr(cg, args[0]);
        LLVMValueRef lane = cg_convert(cg, cg_expr(cg, args[1]), args[1]->type, th_scalar(TH_I32));
        return cg_shuffle(cg, e->u.intrin.id == THI_SHFL_BFLY, v, e->type, lane, (int)width);
    }
    case THI_E4M3_TO_F32:
    case THI_E5M2_TO_F32: {
        bool e5 = e->u.intrin.id == THI_E5M2_TO_F32;
        if (n != 1 || args[0]->type.base != TH_I8 || e->type.base != TH_F32) {
            cg_error(cg, "cvt.f32.%s wants an i8 operand and an f32 result", e5 ? "e5m2" : "e4m3");
            return cg_undef(cg, e->type);
        }
        LLVMValueRef b16 = LLVMBuildZExt(cg->b, cg_expr(cg, args[0]), LLVMInt16TypeInContext(cg->ctx), "");
        LLVMTypeRef h2 = LLVMVectorType(LLVMHalfTypeInContext(cg->ctx), 2);
        LLVMValueRef pair = cg_call_intrinsic(cg, e5 ? "llvm.nvvm.e5m2x2.to.f16x2.rn" : "llvm.nvvm.e4m3x2.to.f16x2.rn",
                                              NULL, 0, &b16, 1, h2);
        LLVMValueRef lo = LLVMBuildExtractElement(cg->b, pair, LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0), "");
        return LLVMBuildFPExt(cg->b, lo, LLVMFloatTypeInContext(cg->ctx), "");
    }
    case THI_F32_TO_E4M3:
    case THI_F32_TO_E5M2: {
        bool e5 = e->u.intrin.id == THI_F32_TO_E5M2;
        if (n != 1 || args[0]->type.base != TH_F32 || e->type.base != TH_I8) {
            cg_error(cg, "cvt.%s.f32 wants an f32 operand and an i8 result", e5 ? "e5m2" : "e4m3");
            return cg_undef(cg, e->type);
        }
        LLVMValueRef x = cg_expr(cg, args[0]);
        LLVMValueRef two[2] = {x, x};
        LLVMValueRef b16 = cg_call_intrinsic(cg, e5 ? "llvm.nvvm.ff.to.e5m2x2.rn" : "llvm.nvvm.ff.to.e4m3x2.rn", NULL,
                                             0, two, 2, LLVMInt16TypeInContext(cg->ctx));
        return LLVMBuildTrunc(cg->b, b16, LLVMInt8TypeInContext(cg->ctx), "");
    }
    case THI_FMA: {
        if (n != 3 || !cg_is_float(e->type) || !th_type_eq(args[0]->type, e->type) ||
            !th_type_eq(args[1]->type, e->type) || !th_type_eq(args[2]->type, e->type)) {
            cg_error(cg, "fma wants three %s operands", tname(e->type, b1));
            return cg_undef(cg, e->type);
        }
        LLVMValueRef v[3] = {cg_expr(cg, args[0]), cg_expr(cg, args[1]), cg_expr(cg, args[2])};
        LLVMTypeRef ty = cg_type(cg, e->type);
        return cg_call_intrinsic(cg, "llvm.fma", &ty, 1, v, 3, ty);
    }
    }
    cg_error(cg, "unknown intrinsic %d", (int)e->u.intrin.id);
    return cg_undef(cg, e->type);
}

LLVMValueRef cg_expr(cg_ctx *cg, const th_expr *e) {
    char b1[32], b2[32];
    if (!e) {
        cg_error(cg, "missing expression");
        return LLVMGetUndef(LLVMInt32TypeInContext(cg->ctx));
    }
    if (e->type.base == TH_VOID || (unsigned)e->type.base > TH_PTR) {
        cg_error(cg, "expression of kind %d has no value type", (int)e->kind);
        return cg_undef(cg, e->type);
    }
    switch (e->kind) {
    case THE_INT: return make_const(cg, e->type, false, e->u.ival, 0);
    case THE_FLOAT: return make_const(cg, e->type, true, 0, e->u.fval);
    case THE_VAR: {
        const th_var *v = e->u.var.var;
        if (!v) { cg_error(cg, "read of a null variable"); return cg_undef(cg, e->type); }
        if (v->array_len > 0) { cg_error(cg, "register array '%s' read without an index", v->name); return cg_undef(cg, e->type); }
        if (!th_type_eq(v->type, e->type)) { cg_error(cg, "read of '%s' with type %s", v->name, tname(e->type, b1)); return cg_undef(cg, e->type); }
        cg_slot *s = cg_var_slot(cg, v);
        if (!s) return cg_undef(cg, e->type);
        return cg_var_value(cg, s, 0);
    }
    case THE_ARRAY_READ: return array_read(cg, e->u.var.var, e->u.var.index, e->type);
    case THE_PARAM: {
        int i = e->u.param;
        if (!cg->k || i < 0 || i >= cg->k->nparams) { cg_error(cg, "parameter %d does not exist", i); return cg_undef(cg, e->type); }
        const th_param *p = &cg->k->params[i];
        th_type pt = p->byte_size_override > 0 ? th_ptr(TH_AS_GENERIC) : p->type;
        if (!th_type_eq(pt, e->type)) {
            cg_error(cg, "parameter '%s' is %s, used as %s", p->name, tname(pt, b1), tname(e->type, b2));
            return cg_undef(cg, e->type);
        }
        return LLVMGetParam(cg->fn, (unsigned)i);
    }
    case THE_SPECIAL:
        if (!th_type_eq(e->type, th_scalar(TH_I32))) { cg_error(cg, "special register of type %s", tname(e->type, b1)); return cg_undef(cg, e->type); }
        return cg_special_reg(cg, e->u.special);
    case THE_SHARED_PTR: {
        if (e->type.base != TH_PTR || e->type.addrspace != TH_AS_SHARED) { cg_error(cg, "shared pointer of type %s", tname(e->type, b1)); return cg_undef(cg, e->type); }
        LLVMValueRef base = cg_shared_base(cg);
        if (!e->u.offset) return base;
        LLVMValueRef off = int_index(cg, e->u.offset, "shared memory offset");
        return LLVMBuildInBoundsGEP2(cg->b, LLVMInt8TypeInContext(cg->ctx), base, &off, 1, "");
    }
    case THE_PTR_ADD: {
        const th_expr *p = e->u.ptr_add.ptr;
        if (!p || p->type.base != TH_PTR || !th_type_eq(p->type, e->type)) { cg_error(cg, "pointer arithmetic on a non-pointer"); return cg_undef(cg, e->type); }
        if (e->elem.base == TH_VOID) { cg_error(cg, "pointer arithmetic with void element type"); return cg_undef(cg, e->type); }
        LLVMValueRef base = cg_expr(cg, p);
        LLVMValueRef idx = int_index(cg, e->u.ptr_add.index, "pointer");
        return LLVMBuildInBoundsGEP2(cg->b, cg_type(cg, e->elem), base, &idx, 1, "");
    }
    case THE_LOAD: {
        const th_expr *p = e->u.load.ptr;
        if (!p || p->type.base != TH_PTR) { cg_error(cg, "load through a non-pointer"); return cg_undef(cg, e->type); }
        if (!check_align(cg, e->u.load.align, e->type)) return cg_undef(cg, e->type);
        LLVMValueRef ptr = cg_expr(cg, p);
        LLVMValueRef v = LLVMBuildLoad2(cg->b, cg_type(cg, e->type), ptr, "");
        int al = e->u.load.align > 0 ? e->u.load.align : th_type_bytes(th_scalar(e->type.base));
        LLVMSetAlignment(v, (unsigned)(al > 0 ? al : 1));
        return v;
    }
    case THE_BIN: return bin_expr(cg, e);
    case THE_UN: return un_expr(cg, e);
    case THE_CMP: return cmp_expr(cg, e);
    case THE_SELECT: {
        const th_expr *c = e->u.sel.cond, *xa = e->u.sel.a, *xb = e->u.sel.b;
        if (!c || !xa || !xb || !th_type_eq(xa->type, e->type) || !th_type_eq(xb->type, e->type)) {
            cg_error(cg, "select operands do not have the result type %s", tname(e->type, b1));
            return cg_undef(cg, e->type);
        }
        LLVMValueRef cv;
        if (c->type.lanes > 1) {
            if (c->type.base != TH_I1 || !same_lanes(c->type, e->type)) { cg_error(cg, "vector select mask of type %s", tname(c->type, b1)); return cg_undef(cg, e->type); }
            cv = cg_expr(cg, c);
        } else {
            cv = cg_cond(cg, c);
        }
        LLVMValueRef a = cg_expr(cg, xa), b = cg_expr(cg, xb);
        return LLVMBuildSelect(cg->b, cv, a, b, "");
    }
    case THE_CONVERT: {
        const th_expr *x = e->u.conv.a;
        if (!x) { cg_error(cg, "conversion without operand"); return cg_undef(cg, e->type); }
        return cg_convert_signed(cg, cg_expr(cg, x), x->type, e->type, e->u.conv.uns);
    }
    case THE_BITCAST: {
        const th_expr *x = e->u.conv.a;
        if (!x) { cg_error(cg, "bitcast without operand"); return cg_undef(cg, e->type); }
        if (type_bits(x->type) != type_bits(e->type)) {
            cg_error(cg, "bitcast from %s to %s changes the size", tname(x->type, b1), tname(e->type, b2));
            return cg_undef(cg, e->type);
        }
        LLVMValueRef v = cg_expr(cg, x);
        if (th_type_eq(x->type, e->type)) return v;
        bool fp = x->type.base == TH_PTR, tp = e->type.base == TH_PTR;
        if (fp && tp) return LLVMBuildAddrSpaceCast(cg->b, v, cg_type(cg, e->type), "");
        if (fp || tp) {
            if (x->type.lanes > 1 || e->type.lanes > 1 || (fp ? !cg_is_int(e->type) : !cg_is_int(x->type))) {
                cg_error(cg, "bitcast from %s to %s", tname(x->type, b1), tname(e->type, b2));
                return cg_undef(cg, e->type);
            }
            return fp ? LLVMBuildPtrToInt(cg->b, v, cg_type(cg, e->type), "")
                      : LLVMBuildIntToPtr(cg->b, v, cg_type(cg, e->type), "");
        }
        return LLVMBuildBitCast(cg->b, v, cg_type(cg, e->type), "");
    }
    case THE_EXTRACT: {
        const th_expr *x = e->u.extract.vec;
        if (!x || x->type.lanes <= 1 || e->u.extract.lane < 0 || e->u.extract.lane >= x->type.lanes ||
            !th_type_eq(e->type, th_scalar(x->type.base))) {
            cg_error(cg, "lane %d of %s", e->u.extract.lane, x ? tname(x->type, b1) : "null");
            return cg_undef(cg, e->type);
        }
        return LLVMBuildExtractElement(cg->b, cg_expr(cg, x), i32c(cg, e->u.extract.lane), "");
    }
    case THE_BUILD: {
        int lanes = e->type.lanes > 1 ? e->type.lanes : 1;
        th_type et = th_scalar(e->type.base);
        et.addrspace = e->type.addrspace;
        if (e->u.build.n != lanes) { cg_error(cg, "vector %s built from %d lanes", tname(e->type, b1), e->u.build.n); return cg_undef(cg, e->type); }
        for (int i = 0; i < lanes; i++)
            if (!e->u.build.lanes[i] || !th_type_eq(e->u.build.lanes[i]->type, et)) {
                cg_error(cg, "lane %d of vector %s has the wrong type", i, tname(e->type, b1));
                return cg_undef(cg, e->type);
            }
        if (lanes == 1) return cg_expr(cg, e->u.build.lanes[0]);
        LLVMValueRef v = LLVMGetPoison(cg_type(cg, e->type));
        for (int i = 0; i < lanes; i++)
            v = LLVMBuildInsertElement(cg->b, v, cg_expr(cg, e->u.build.lanes[i]), i32c(cg, i), "");
        return v;
    }
    case THE_INTRIN: return intrin_expr(cg, e);
    }
    cg_error(cg, "unknown expression kind %d", (int)e->kind);
    return cg_undef(cg, e->type);
}
