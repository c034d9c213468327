/* Thread IR -> LLVM module: types, kernels (PTX kernel calling convention,
 * launch bounds, parameter attributes), variable slots and dynamic shared
 * memory. Expressions and statements are in codegen_expr.c / codegen_stmt.c.
 *
 * Kernel parameters:
 *   tensor pointers   `ptr addrspace(1) noalias [readonly] [align N]` (readonly
 *                     and align from th_kernel.param_attrs; readonly + noalias
 *                     lets NVPTX load with ld.global.nc). noalias: tensors
 *                     passed to one launch must not overlap.
 *   scalars           their type
 *   opaque blocks     (byte_size_override > 0, e.g. a 128-byte CUtensorMap)
 *                     `ptr byval([N x i8]) align 64 "nvvm.grid_constant"`:
 *                     the kernel sees a generic pointer to the .param block;
 *                     grid_constant keeps LLVM from copying it to local memory
 *                     when its address escapes (TMA instructions take the
 *                     address of the descriptor: cvta.param gives it). */
#include "codegen_internal.h"
#include "../support/int_math.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PTX kernel calling convention (llvm::CallingConv::PTX_Kernel): LLVM 22
 * marks kernels with it instead of nvvm.annotations. */
enum { CG_CC_PTX_KERNEL = 71 };

void cg_error(cg_ctx *cg, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlc_error(cg->diag, cg->loc, "internal error: codegen of kernel '%s': %s",
              cg->k && cg->k->name ? cg->k->name : "?", msg);
    cg->failed = true;
}

const char *cg_arch_cpu(tlc_arch a) { return (unsigned)a < TLC_ARCH_COUNT ? tlc_target_of(a)->name : NULL; }

bool cg_is_int(th_type t) { return t.base >= TH_I1 && t.base <= TH_I64; }
bool cg_is_float(th_type t) { return t.base >= TH_F16 && t.base <= TH_F64; }

LLVMTypeRef cg_elem_type(cg_ctx *cg, th_type t) {
    switch (t.base) {
    case TH_VOID: return LLVMVoidTypeInContext(cg->ctx);
    case TH_I1: return LLVMInt1TypeInContext(cg->ctx);
    case TH_I8: return LLVMInt8TypeInContext(cg->ctx);
    case TH_I16: return LLVMInt16TypeInContext(cg->ctx);
    case TH_I32: return LLVMInt32TypeInContext(cg->ctx);
    case TH_I64: return LLVMInt64TypeInContext(cg->ctx);
    case TH_F16: return LLVMHalfTypeInContext(cg->ctx);
    case TH_BF16: return LLVMBFloatTypeInContext(cg->ctx);
    case TH_F32: return LLVMFloatTypeInContext(cg->ctx);
    case TH_F64: return LLVMDoubleTypeInContext(cg->ctx);
    case TH_PTR: return LLVMPointerTypeInContext(cg->ctx, t.addrspace);
    }
    return LLVMInt32TypeInContext(cg->ctx);
}

LLVMTypeRef cg_type(cg_ctx *cg, th_type t) {
    LLVMTypeRef e = cg_elem_type(cg, t);
    if (t.lanes > 1 && t.base != TH_VOID) return LLVMVectorType(e, t.lanes);
    return e;
}

LLVMValueRef cg_undef(cg_ctx *cg, th_type t) {
    if (t.base == TH_VOID) return LLVMGetUndef(LLVMInt32TypeInContext(cg->ctx));
    return LLVMGetUndef(cg_type(cg, t));
}

bool cg_fast_math(const cg_ctx *cg) { return (cg->opt && cg->opt->fast_math) || (cg->k && cg->k->fast_math); }

/* @__tlc_smem: the block's dynamic shared memory, 1024-byte aligned (128-byte
 * swizzles and TMA need that). One extern declaration per module; every
 * kernel of the module addresses the same window. */
LLVMValueRef cg_shared_base(cg_ctx *cg) {
    if (cg->smem) return cg->smem;
    LLVMValueRef g = LLVMGetNamedGlobal(cg->mod, "__tlc_smem");
    if (!g) {
        LLVMTypeRef ty = LLVMArrayType2(LLVMInt8TypeInContext(cg->ctx), 0);
        g = LLVMAddGlobalInAddressSpace(cg->mod, ty, "__tlc_smem", TH_AS_SHARED);
        LLVMSetLinkage(g, LLVMExternalLinkage);
        LLVMSetAlignment(g, 1024);
    }
    cg->smem = g;
    return g;
}

/* ---------------- kernels ---------------- */
static void add_attr(cg_ctx *cg, LLVMValueRef fn, unsigned idx, const char *name, uint64_t val) {
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    if (!kind) { cg_error(cg, "LLVM has no attribute '%s'", name); return; }
    LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(cg->ctx, kind, val));
}

static void add_str_attr(cg_ctx *cg, LLVMValueRef fn, unsigned idx, const char *key, const char *val) {
    LLVMAddAttributeAtIndex(fn, idx, LLVMCreateStringAttribute(cg->ctx, key, (unsigned)strlen(key),
                                                               val, (unsigned)strlen(val)));
}


/* sync_grid's counter (ops/sync_grid.c): a u32 of global memory, zero at
 * load, named in the asm that uses it (so kept by its external linkage). */
static void declare_grid_sync_counter(cg_ctx *cg, const char *name) {
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(cg->mod, i32, name, TH_AS_GLOBAL);
    LLVMSetInitializer(g, LLVMConstInt(i32, 0, 0));
    LLVMSetLinkage(g, LLVMExternalLinkage);
    LLVMSetAlignment(g, 4);
}

static void build_kernel(cg_ctx *cg, const th_kernel *k) {
    if (k->grid_sync_counter) declare_grid_sync_counter(cg, k->grid_sync_counter);
    cg->k = k;
    cg->loc = (tlc_loc){0, 0};
    cg->smem = NULL;
    if (!k->name || !*k->name) { cg_error(cg, "kernel without a name"); return; }
    if (LLVMGetNamedFunction(cg->mod, k->name)) { cg_error(cg, "two kernels named '%s'", k->name); return; }
    if (k->nparams < 0 || (k->nparams > 0 && !k->params)) { cg_error(cg, "bad parameter list"); return; }
    if (k->threads < 0 || k->threads > 1024) { cg_error(cg, "threads = %d is outside 1..1024", k->threads); return; }

    LLVMTypeRef *ptys = calloc((size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *ptys);
    if (!ptys) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    for (int i = 0; i < k->nparams; i++) {
        const th_param *p = &k->params[i];
        if (p->byte_size_override > 0) ptys[i] = LLVMPointerTypeInContext(cg->ctx, 0);
        else if (p->type.base == TH_VOID) { cg_error(cg, "parameter %d has type void", i); ptys[i] = LLVMInt32TypeInContext(cg->ctx); }
        else ptys[i] = cg_type(cg, p->type);
    }
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), ptys, (unsigned)k->nparams, 0);
    free(ptys);
    LLVMValueRef fn = LLVMAddFunction(cg->mod, k->name, fty);
    cg->fn = fn;
    LLVMSetFunctionCallConv(fn, CG_CC_PTX_KERNEL);

    char num[32];
    if (k->threads > 0) {
        snprintf(num, sizeof num, "%d", k->threads);
        add_str_attr(cg, fn, LLVMAttributeFunctionIndex, "nvvm.maxntid", num);
    }
    if (k->min_blocks_per_sm > 0) {
        snprintf(num, sizeof num, "%d", k->min_blocks_per_sm);
        add_str_attr(cg, fn, LLVMAttributeFunctionIndex, "nvvm.minctasm", num);
    }
    add_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind", 0);

    for (int i = 0; i < k->nparams; i++) {
        const th_param *p = &k->params[i];
        LLVMValueRef arg = LLVMGetParam(fn, (unsigned)i);
        if (p->name && *p->name) LLVMSetValueName2(arg, p->name, strlen(p->name));
        unsigned idx = (unsigned)i + 1;
        if (p->byte_size_override > 0) {
            LLVMTypeRef blk = LLVMArrayType2(LLVMInt8TypeInContext(cg->ctx), (uint64_t)p->byte_size_override);
            unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
            LLVMAddAttributeAtIndex(fn, idx, LLVMCreateTypeAttribute(cg->ctx, byval, blk));
            add_attr(cg, fn, idx, "align", 64);
            add_str_attr(cg, fn, idx, "nvvm.grid_constant", "");
            continue;
        }
        if (p->type.base != TH_PTR) continue;
        th_param_attr pa = k->param_attrs ? k->param_attrs[i] : (th_param_attr){0};
        if (p->type.addrspace == TH_AS_GLOBAL && !k->pdl_wait) add_attr(cg, fn, idx, "noalias", 0);
        if (pa.readonly) add_attr(cg, fn, idx, "readonly", 0);
        if (pa.align > 0) {
            if (!tlc_is_pow2(pa.align)) cg_error(cg, "parameter '%s': alignment %d is not a power of two", p->name, pa.align);
            else add_attr(cg, fn, idx, "align", (uint64_t)pa.align);
        }
    }

    cg->entry = LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cg->ctx, fn, "body");
    LLVMPositionBuilderAtEnd(cg->alloca_b, cg->entry);
    LLVMPositionBuilderAtEnd(cg->b, body);
    cg_vars_reset(cg);
    cg_scan_runtime_indices(cg, k->body);

    /* Declared vars first, in order, so the entry block reads like the kernel. */
    for (int i = 0; i < k->nvars; i++)
        if (k->vars && k->vars[i]) cg_var_slot(cg, k->vars[i]);
    if (k->body) cg_stmt(cg, k->body);
    LLVMBuildRetVoid(cg->b);
    LLVMPositionBuilderAtEnd(cg->alloca_b, cg->entry);
    LLVMBuildBr(cg->alloca_b, body);
    if (k->dyn_shared_bytes > 0) cg_shared_base(cg); /* declared even if unused: documents the window */
}

LLVMModuleRef cg_build_module(const th_module *m, const tlc_codegen_options *o, LLVMContextRef ctx,
                              LLVMTargetDataRef td, tlc_diag *diag) {
    cg_ctx cg;
    memset(&cg, 0, sizeof cg);
    cg.ctx = ctx;
    cg.opt = o;
    cg.diag = diag;
    cg.mod = LLVMModuleCreateWithNameInContext("tlc", ctx);
    LLVMSetTarget(cg.mod, "nvptx64-nvidia-cuda");
    if (td) LLVMSetModuleDataLayout(cg.mod, td);
    cg.b = LLVMCreateBuilderInContext(ctx);
    cg.alloca_b = LLVMCreateBuilderInContext(ctx);
    if (!m || (m->nkernels > 0 && !m->kernels)) {
        tlc_error(diag, (tlc_loc){0, 0}, "internal error: codegen: empty thread IR module");
        cg.failed = true;
    } else {
        for (int i = 0; i < m->nkernels && !tlc_diag_too_many(diag); i++) {
            if (!m->kernels[i]) continue;
            build_kernel(&cg, m->kernels[i]);
        }
    }
    LLVMDisposeBuilder(cg.b);
    LLVMDisposeBuilder(cg.alloca_b);
    free(cg.slots);
    free(cg.values);
    free(cg.value_types);
    if (cg.failed) {
        LLVMDisposeModule(cg.mod);
        return NULL;
    }
    return cg.mod;
}
