/* NVVM intrinsics: special registers, barriers, warp shuffles and the fast
 * math approximations. Names are checked against LLVM 22 (the NVPTX backend
 * renames intrinsics between releases): every call looks the name up with
 * LLVMLookupIntrinsicID and requires an exact match, so a rename becomes a
 * diagnostic, never a silently different intrinsic.
 *
 * Math lowering (f32; f16 / bf16 are widened to f32 and rounded back once,
 * f64 is evaluated in f32 precision since the DSL has no f64 data):
 *   THU_SQRT          llvm.sqrt            sqrt.rn.f32 (IEEE)
 *   THU_EXP2          llvm.exp2            ex2.approx.f32 (LLVM 22 lowers it so)
 *   THU_EXP2_APPROX   nvvm.ex2.approx.ftz  ex2.approx.ftz.f32
 *   THU_EXP           exp2(x * log2(e))    NVPTX cannot select llvm.exp / llvm.log
 *   THU_LOG2          nvvm.lg2.approx.f    lg2.approx.f32
 *   THU_LOG2_APPROX   nvvm.lg2.approx.ftz.f
 *   THU_LOG           lg2.approx(x) * ln(2)
 *   THU_RSQRT         1 / sqrt(x)          sqrt.rn + div.rn
 *   THU_RSQRT_APPROX  nvvm.rsqrt.approx.ftz.f
 *   THU_RCP_APPROX    nvvm.rcp.approx.ftz.f
 *   THU_FLOOR, CEIL   llvm.floor, ceil     cvt.rmi.f32.f32, cvt.rpi.f32.f32 (exact)
 *   THU_SIN_APPROX    nvvm.sin.approx.f    sin.approx.f32 (absolute error 2^-20.5 in
 *   THU_COS_APPROX    nvvm.cos.approx.f    cos.approx.f32  [-pi, pi]; lowering reduces first)
 *   x / y (f32)       nvvm.div.full        div.full.f32: at most 2 ulp over the
 *                     whole range, no slow path (Triton's `/` on f32 does the
 *                     same); with fast_math nvvm.div.approx.f (div.approx.f32,
 *                     2 ulp for |y| in [2^-126, 2^126], else 0), like nvcc's
 *                     --use_fast_math. Other float types: IEEE fdiv.
 *   pow(x, y)         integer constant y: multiplications; y = 0.5: sqrt;
 *                     otherwise exp2(y * log2(x)) (NaN for x < 0). */
#include "codegen_internal.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

LLVMValueRef cg_call_intrinsic(cg_ctx *cg, const char *name, LLVMTypeRef *overload, int noverload,
                               LLVMValueRef *args, int nargs, LLVMTypeRef ret_on_error) {
    size_t len = strlen(name);
    unsigned id = LLVMLookupIntrinsicID(name, len);
    size_t got_len = 0;
    const char *got = id ? LLVMIntrinsicGetName(id, &got_len) : NULL;
    /* LLVMLookupIntrinsicID also matches `name` as a mangled overload of a
     * shorter intrinsic; insist on the exact base name. */
    if (!id || got_len != len || memcmp(got, name, len) != 0) {
        cg_error(cg, "LLVM has no intrinsic '%s'", name);
        return LLVMGetUndef(ret_on_error);
    }
    bool ovl = LLVMIntrinsicIsOverloaded(id);
    if (ovl != (noverload > 0)) {
        cg_error(cg, "intrinsic '%s' is %soverloaded in this LLVM", name, ovl ? "" : "not ");
        return LLVMGetUndef(ret_on_error);
    }
    LLVMTypeRef fty = LLVMIntrinsicGetType(cg->ctx, id, overload, (size_t)noverload);
    unsigned np = LLVMCountParamTypes(fty);
    if (np != (unsigned)nargs) {
        cg_error(cg, "intrinsic '%s' takes %u arguments, not %d", name, np, nargs);
        return LLVMGetUndef(ret_on_error);
    }
    LLVMTypeRef pt[8];
    if (np > 8) { cg_error(cg, "intrinsic '%s' has too many parameters", name); return LLVMGetUndef(ret_on_error); }
    LLVMGetParamTypes(fty, pt);
    for (unsigned i = 0; i < np; i++)
        if (LLVMTypeOf(args[i]) != pt[i]) {
            cg_error(cg, "argument %u of intrinsic '%s' has the wrong type", i, name);
            return LLVMGetUndef(ret_on_error);
        }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, overload, (size_t)noverload);
    LLVMValueRef call = LLVMBuildCall2(cg->b, fty, fn, args, (unsigned)nargs, "");
    cg_set_fp_flags(cg, call);
    return call;
}

static LLVMValueRef i32c(cg_ctx *cg, int64_t v) {
    return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)v, 1);
}

static LLVMValueRef sreg(cg_ctx *cg, const char *which) {
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", which);
    return cg_call_intrinsic(cg, name, NULL, 0, NULL, 0, LLVMInt32TypeInContext(cg->ctx));
}

LLVMValueRef cg_special_reg(cg_ctx *cg, th_special s) {
    switch (s) {
    case THS_TID_X: return sreg(cg, "tid.x");
    case THS_TID_Y: return sreg(cg, "tid.y");
    case THS_TID_Z: return sreg(cg, "tid.z");
    case THS_NTID_X: return sreg(cg, "ntid.x");
    case THS_CTAID_X: return sreg(cg, "ctaid.x");
    case THS_CTAID_Y: return sreg(cg, "ctaid.y");
    case THS_CTAID_Z: return sreg(cg, "ctaid.z");
    case THS_NCTAID_X: return sreg(cg, "nctaid.x");
    case THS_NCTAID_Y: return sreg(cg, "nctaid.y");
    case THS_NCTAID_Z: return sreg(cg, "nctaid.z");
    case THS_LANEID: return sreg(cg, "laneid");
    case THS_WARPID: /* warp index within a 1-D block (not the hardware %warpid) */
        return LLVMBuildLShr(cg->b, sreg(cg, "tid.x"), i32c(cg, 5), "warp");
    }
    cg_error(cg, "unknown special register %d", (int)s);
    return LLVMGetUndef(LLVMInt32TypeInContext(cg->ctx));
}

/* bar.sync id[, nthreads]: barrier.cta.sync.aligned.* are LLVM 22's names
 * (llvm.nvvm.barrier0 is gone). */
void cg_barrier(cg_ctx *cg, int id, int nthreads) {
    if (id < 0 || id > 15) { cg_error(cg, "barrier id %d is outside 0..15", id); return; }
    if (nthreads < 0 || nthreads % 32 != 0 || nthreads > 1024) {
        cg_error(cg, "barrier thread count %d is not a multiple of 32 in 0..1024", nthreads);
        return;
    }
    LLVMTypeRef v = LLVMVoidTypeInContext(cg->ctx);
    if (nthreads == 0) {
        LLVMValueRef a = i32c(cg, id);
        cg_call_intrinsic(cg, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &a, 1, v);
    } else {
        LLVMValueRef a[2] = {i32c(cg, id), i32c(cg, nthreads)};
        cg_call_intrinsic(cg, "llvm.nvvm.barrier.cta.sync.aligned.count", NULL, 0, a, 2, v);
    }
}

/* One 32-bit shfl.sync over the full warp. c packs the segment mask and clamp
 * like CUDA's __shfl_*_sync(width). */
static LLVMValueRef shfl32(cg_ctx *cg, bool bfly, LLVMValueRef v, bool is_float, LLVMValueRef lane, int width) {
    char name[48];
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.%s", bfly ? "bfly" : "idx", is_float ? "f32" : "i32");
    LLVMValueRef c = i32c(cg, ((32 - width) << 8) | 0x1f);
    LLVMValueRef args[4] = {i32c(cg, -1), v, lane, c};
    return cg_call_intrinsic(cg, name, NULL, 0, args, 4, LLVMTypeOf(v));
}

/* Shuffles any value by 32-bit pieces: narrower scalars are widened, wider
 * values (i64, f64, vectors) are split into i32 words. */
LLVMValueRef cg_shuffle(cg_ctx *cg, bool bfly, LLVMValueRef value, th_type t, LLVMValueRef lane, int width) {
    LLVMBuilderRef B = cg->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMTypeRef ty = cg_type(cg, t);
    if (t.lanes <= 1 && (t.base == TH_I32 || t.base == TH_F32))
        return shfl32(cg, bfly, value, t.base == TH_F32, lane, width);
    int bytes = th_type_bytes(t);
    if (t.lanes <= 1 && bytes < 4) {
        LLVMValueRef v = value;
        LLVMTypeRef ity = LLVMIntTypeInContext(cg->ctx, t.base == TH_I1 ? 1 : (unsigned)bytes * 8);
        if (cg_is_float(t)) v = LLVMBuildBitCast(B, v, ity, "");
        v = LLVMBuildZExt(B, v, i32, "");
        v = shfl32(cg, bfly, v, false, lane, width);
        v = LLVMBuildTrunc(B, v, ity, "");
        return cg_is_float(t) ? LLVMBuildBitCast(B, v, ty, "") : v;
    }
    if (bytes % 4 != 0 || bytes > 64) {
        char b[32];
        cg_error(cg, "cannot shuffle a value of type %s", th_type_name(t, b));
        return LLVMGetUndef(ty);
    }
    int words = bytes / 4;
    LLVMValueRef v = value;
    if (t.base == TH_PTR) v = LLVMBuildPtrToInt(B, v, LLVMInt64TypeInContext(cg->ctx), "");
    if (words == 1) {
        v = LLVMBuildBitCast(B, v, i32, "");
        v = shfl32(cg, bfly, v, false, lane, width);
        return LLVMBuildBitCast(B, v, ty, "");
    }
    LLVMTypeRef wty = LLVMVectorType(i32, (unsigned)words);
    v = LLVMBuildBitCast(B, v, wty, "");
    LLVMValueRef out = LLVMGetPoison(wty);
    for (int i = 0; i < words; i++) {
        LLVMValueRef w = LLVMBuildExtractElement(B, v, i32c(cg, i), "");
        w = shfl32(cg, bfly, w, false, lane, width);
        out = LLVMBuildInsertElement(B, out, w, i32c(cg, i), "");
    }
    if (t.base == TH_PTR) {
        LLVMValueRef q = LLVMBuildBitCast(B, out, LLVMInt64TypeInContext(cg->ctx), "");
        return LLVMBuildIntToPtr(B, q, ty, "");
    }
    return LLVMBuildBitCast(B, out, ty, "");
}

static LLVMValueRef f32c(cg_ctx *cg, double v) { return LLVMConstReal(LLVMFloatTypeInContext(cg->ctx), v); }

static LLVMValueRef call_f32(cg_ctx *cg, const char *name, bool overloaded, LLVMValueRef x) {
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx);
    return cg_call_intrinsic(cg, name, overloaded ? &f32 : NULL, overloaded ? 1 : 0, &x, 1, f32);
}

static LLVMValueRef fmul(cg_ctx *cg, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef r = LLVMBuildFMul(cg->b, a, b, "");
    cg_set_fp_flags(cg, r);
    return r;
}

LLVMValueRef cg_fdiv(cg_ctx *cg, LLVMValueRef a, LLVMValueRef b, th_type t) {
    if (t.base != TH_F32) {
        LLVMValueRef r = LLVMBuildFDiv(cg->b, a, b, "");
        cg_set_fp_flags(cg, r);
        return r;
    }
    const char *name = cg_fast_math(cg) ? "llvm.nvvm.div.approx.f" : "llvm.nvvm.div.full";
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx);
    if (t.lanes <= 1) {
        LLVMValueRef args[2] = {a, b};
        return cg_call_intrinsic(cg, name, NULL, 0, args, 2, f32);
    }
    LLVMValueRef r = LLVMGetUndef(LLVMTypeOf(a));
    for (int i = 0; i < t.lanes; i++) {
        LLVMValueRef idx = LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)i, 0);
        LLVMValueRef args[2] = {LLVMBuildExtractElement(cg->b, a, idx, ""), LLVMBuildExtractElement(cg->b, b, idx, "")};
        r = LLVMBuildInsertElement(cg->b, r, cg_call_intrinsic(cg, name, NULL, 0, args, 2, f32), idx, "");
    }
    return r;
}

/* op on one f32 scalar. */
static LLVMValueRef math_f32(cg_ctx *cg, th_unop op, LLVMValueRef x) {
    switch (op) {
    case THU_SQRT: return call_f32(cg, "llvm.sqrt", true, x);
    case THU_EXP2: return call_f32(cg, "llvm.exp2", true, x);
    case THU_EXP2_APPROX: return call_f32(cg, "llvm.nvvm.ex2.approx.ftz", true, x);
    case THU_EXP: return call_f32(cg, "llvm.exp2", true, fmul(cg, x, f32c(cg, 1.4426950408889634)));
    case THU_LOG2: return call_f32(cg, "llvm.nvvm.lg2.approx.f", false, x);
    case THU_LOG2_APPROX: return call_f32(cg, "llvm.nvvm.lg2.approx.ftz.f", false, x);
    case THU_LOG: return fmul(cg, call_f32(cg, "llvm.nvvm.lg2.approx.f", false, x), f32c(cg, 0.6931471805599453));
    case THU_RSQRT: {
        LLVMValueRef r = LLVMBuildFDiv(cg->b, f32c(cg, 1.0), call_f32(cg, "llvm.sqrt", true, x), "");
        cg_set_fp_flags(cg, r);
        return r;
    }
    case THU_RSQRT_APPROX: return call_f32(cg, "llvm.nvvm.rsqrt.approx.ftz.f", false, x);
    case THU_RCP_APPROX: return call_f32(cg, "llvm.nvvm.rcp.approx.ftz.f", false, x);
    case THU_FLOOR: return call_f32(cg, "llvm.floor", true, x);
    case THU_CEIL: return call_f32(cg, "llvm.ceil", true, x);
    case THU_SIN_APPROX: return call_f32(cg, "llvm.nvvm.sin.approx.f", false, x);
    case THU_COS_APPROX: return call_f32(cg, "llvm.nvvm.cos.approx.f", false, x);
    default: break;
    }
    cg_error(cg, "unary operation %d is not a math function", (int)op);
    return LLVMGetUndef(LLVMFloatTypeInContext(cg->ctx));
}

LLVMValueRef cg_unary_math(cg_ctx *cg, th_unop op, LLVMValueRef x, th_type t) {
    LLVMBuilderRef B = cg->b;
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx);
    if (t.base == TH_F64 && op == THU_SQRT && t.lanes <= 1) {
        LLVMTypeRef f64 = LLVMDoubleTypeInContext(cg->ctx);
        return cg_call_intrinsic(cg, "llvm.sqrt", &f64, 1, &x, 1, f64);
    }
    if (t.lanes > 1) { /* the NVVM approximations are scalar: per lane */
        LLVMValueRef out = LLVMGetPoison(cg_type(cg, t));
        th_type et = th_scalar(t.base);
        for (int i = 0; i < t.lanes; i++) {
            LLVMValueRef l = LLVMBuildExtractElement(B, x, i32c(cg, i), "");
            out = LLVMBuildInsertElement(B, out, cg_unary_math(cg, op, l, et), i32c(cg, i), "");
        }
        return out;
    }
    if (t.base == TH_F32) return math_f32(cg, op, x);
    LLVMTypeRef ty = cg_type(cg, t);
    LLVMValueRef w = t.base == TH_F64 ? LLVMBuildFPTrunc(B, x, f32, "") : LLVMBuildFPExt(B, x, f32, "");
    LLVMValueRef r = math_f32(cg, op, w);
    return t.base == TH_F64 ? LLVMBuildFPExt(B, r, ty, "") : LLVMBuildFPTrunc(B, r, ty, "");
}

static LLVMValueRef mul_any(cg_ctx *cg, LLVMValueRef a, LLVMValueRef b, th_type t) {
    if (cg_is_float(t)) return fmul(cg, a, b);
    return LLVMBuildMul(cg->b, a, b, "");
}

LLVMValueRef cg_pow(cg_ctx *cg, const th_expr *base, const th_expr *exponent, th_type t) {
    int64_t n;
    LLVMValueRef x = cg_expr(cg, base);
    LLVMTypeRef ty = cg_type(cg, t);
    if (th_pow_small_int(exponent, &n)) {
        if (n < 0 && !cg_is_float(t)) { cg_error(cg, "integer power with a negative exponent"); return LLVMGetUndef(ty); }
        uint64_t m = (uint64_t)(n < 0 ? -n : n);
        LLVMValueRef acc = NULL, sq = x;
        while (m) { /* square and multiply */
            if (m & 1) acc = acc ? mul_any(cg, acc, sq, t) : sq;
            m >>= 1;
            if (m) sq = mul_any(cg, sq, sq, t);
        }
        if (!acc) { /* x ** 0 */
            LLVMTypeRef et = cg_elem_type(cg, t);
            LLVMValueRef one = cg_is_float(t) ? LLVMConstReal(et, 1.0) : LLVMConstInt(et, 1, 0);
            if (t.lanes <= 1) return one;
            LLVMValueRef ones[64];
            for (int i = 0; i < t.lanes && i < 64; i++) ones[i] = one;
            return LLVMConstVector(ones, t.lanes < 64 ? t.lanes : 64);
        }
        if (n < 0) {
            LLVMValueRef r = LLVMBuildFDiv(cg->b, LLVMConstReal(ty, 1.0), acc, "");
            cg_set_fp_flags(cg, r);
            return r;
        }
        return acc;
    }
    if (!cg_is_float(t)) { cg_error(cg, "integer power needs a constant exponent in -64..64"); return LLVMGetUndef(ty); }
    if (exponent && exponent->kind == THE_FLOAT && exponent->u.fval == 0.5) return cg_unary_math(cg, THU_SQRT, x, t);
    LLVMValueRef y = cg_expr(cg, exponent);
    LLVMValueRef l = cg_unary_math(cg, THU_LOG2, x, t);
    LLVMValueRef p = LLVMBuildFMul(cg->b, y, l, "");
    cg_set_fp_flags(cg, p);
    return cg_unary_math(cg, THU_EXP2, p, t);
}
