/* Shared state of one Thread IR -> LLVM translation (private to codegen/).
 * One cg_ctx per compilation, owning its own LLVMContext: nothing here is
 * global, so compilations on different threads never share LLVM state. */
#ifndef TLC_CODEGEN_INTERNAL_H
#define TLC_CODEGEN_INTERNAL_H
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include "../ir/thread_ir.h"


/* A Thread IR variable: its values (one per array element) in cg_ctx.values,
 * or, for a register array indexed at run time, an alloca (codegen_vars.c). */
typedef struct cg_slot {
    const th_var *var;
    LLVMValueRef alloca; /* NULL unless the array is indexed at run time */
    LLVMTypeRef ty;      /* one element's type; with an alloca, [N x T] */
    int value;           /* its first entry in cg_ctx.values; -1 with an alloca */
    bool runtime_index;  /* some access indexes it with a non-constant */
} cg_slot;

/* A copy of every variable's current value (an if's other path). */
typedef struct cg_values {
    LLVMValueRef *vals;
    int n;
} cg_values;

/* The phis a loop header holds, one per value the loop assigns. */
typedef struct cg_loop_phis {
    int *entries;
    LLVMValueRef *phis;
    int n, cap;
} cg_loop_phis;

typedef struct cg_ctx {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;        /* current insertion point */
    LLVMBuilderRef alloca_b; /* end of the entry block (allocas only) */
    const tlc_codegen_options *opt;
    tlc_diag *diag;
    const th_kernel *k;
    LLVMValueRef fn;
    LLVMBasicBlockRef entry;
    LLVMValueRef smem; /* @__tlc_smem, created on first use */
    cg_slot *slots; int nslots, cap_slots; /* var -> slot (open addressing) */
    LLVMValueRef *values;      /* each variable's current value here (NULL: none yet) */
    LLVMTypeRef *value_types;
    int nvalues, cap_values;
    tlc_loc loc; /* location of the statement being translated (for errors) */
    bool failed;
} cg_ctx;

/* Reports an internal error (Thread IR that codegen cannot translate). The
 * translation goes on with undef values so one run reports several errors. */
void cg_error(cg_ctx *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* codegen_llvm.c */
/* Approximate f32 division and reassociation: asked for by the options or by the kernel (pass_configs). */
bool cg_fast_math(const cg_ctx *cg);
LLVMTypeRef cg_type(cg_ctx *cg, th_type t);
LLVMTypeRef cg_elem_type(cg_ctx *cg, th_type t); /* scalar type of one lane */
LLVMValueRef cg_undef(cg_ctx *cg, th_type t);
LLVMValueRef cg_shared_base(cg_ctx *cg);
bool cg_is_int(th_type t);
bool cg_is_float(th_type t);
/* Builds the whole module for m (one function per kernel). Returns NULL with
 * errors in diag. The module belongs to ctx. */
LLVMModuleRef cg_build_module(const th_module *m, const tlc_codegen_options *o, LLVMContextRef ctx,
                              LLVMTargetDataRef td, tlc_diag *diag);
const char *cg_arch_cpu(tlc_arch a); /* "sm_90a" */

/* codegen_vars.c */
void cg_vars_reset(cg_ctx *cg);
/* Marks the register arrays that some access in s indexes at run time;
 * runs over a kernel's body before its translation. */
void cg_scan_runtime_indices(cg_ctx *cg, const th_stmt *s);
cg_slot *cg_var_slot(cg_ctx *cg, const th_var *v);
LLVMValueRef cg_var_value(cg_ctx *cg, const cg_slot *s, int elem); /* undef before any assignment */
void cg_var_assign(cg_ctx *cg, const cg_slot *s, int elem, LLVMValueRef x);
cg_values cg_values_save(cg_ctx *cg);
void cg_values_restore(cg_ctx *cg, const cg_values *c);
void cg_values_free(cg_values *c);
/* At the start of a join block: a phi for each value that differs between
 * `other` (reaching it from other_end) and the current values (from this_end). */
void cg_values_join(cg_ctx *cg, const cg_values *other, LLVMBasicBlockRef other_end, LLVMBasicBlockRef this_end);
void cg_loop_phis_open(cg_ctx *cg, cg_loop_phis *lp, const th_stmt *loop, LLVMBasicBlockRef preheader);
void cg_loop_phis_close(cg_ctx *cg, cg_loop_phis *lp, LLVMBasicBlockRef latch);

/* codegen_expr.c */
LLVMValueRef cg_expr(cg_ctx *cg, const th_expr *e);
LLVMValueRef cg_cond(cg_ctx *cg, const th_expr *e); /* any scalar -> i1 (!= 0) */
LLVMValueRef cg_convert(cg_ctx *cg, LLVMValueRef v, th_type from, th_type to);
/* uns: the integer side is unsigned (zero extension, unsigned <-> float, saturating). */
LLVMValueRef cg_convert_signed(cg_ctx *cg, LLVMValueRef v, th_type from, th_type to, bool uns);

/* codegen_stmt.c */
void cg_stmt(cg_ctx *cg, const th_stmt *s);

/* codegen_intrinsics.c */
LLVMValueRef cg_call_intrinsic(cg_ctx *cg, const char *name, LLVMTypeRef *overload, int noverload,
                               LLVMValueRef *args, int nargs, LLVMTypeRef ret_on_error);
LLVMValueRef cg_special_reg(cg_ctx *cg, th_special s);
void cg_barrier(cg_ctx *cg, int id, int nthreads);
LLVMValueRef cg_shuffle(cg_ctx *cg, bool bfly, LLVMValueRef value, th_type t, LLVMValueRef lane_arg, int width);
LLVMValueRef cg_unary_math(cg_ctx *cg, th_unop op, LLVMValueRef x, th_type t);
/* Float division a / b of type t (see codegen_intrinsics.c: div.full.f32 for f32). */
LLVMValueRef cg_fdiv(cg_ctx *cg, LLVMValueRef a, LLVMValueRef b, th_type t);
LLVMValueRef cg_pow(cg_ctx *cg, const th_expr *base, const th_expr *exponent, th_type t);
void cg_set_fp_flags(cg_ctx *cg, LLVMValueRef inst);

/* opt_pipeline.c: the LLVM pass pipeline text for an opt level; `large`:
 * the module has a function past CG_LARGE_FUNCTION_INSTRUCTIONS as built */
enum { CG_LARGE_FUNCTION_INSTRUCTIONS = 7000 };
const char *cg_opt_pipeline(int opt_level, bool large);

/* ptx_direct.c: Thread IR -> PTX text without LLVM (TLC_BACKEND_DIRECT). */
char *cg_direct_ptx(const th_module *m, const tlc_codegen_options *o, tlc_arena *a, tlc_diag *diag);

/* ptx_emit.c */
bool cg_init_targets(tlc_diag *diag);
LLVMTargetMachineRef cg_target_machine(tlc_arch arch, int ptx_isa, int opt_level, tlc_diag *diag);
/* Verifies, then runs the O-level pipeline. false with an error in diag. */
bool cg_verify_and_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, tlc_diag *diag);
#endif
