/* LLVM module -> PTX text (and --emit=llvm). Each call creates its own
 * LLVMContext, module and target machine, so compilations run in parallel on
 * many threads; only the one-time target registration is shared, guarded by
 * pthread_once. Pipeline: verify, then the IR passes (at -O3 tlc's own
 * selection from default<O3>, opt_pipeline.c; below it LLVM's defaults),
 * then the NVPTX backend at the aggressive codegen level; both levels
 * follow tlc_codegen_options.opt_level (tlc -O0 .. -O3). */
#include "codegen_internal.h"
#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static const char TRIPLE[] = "nvptx64-nvidia-cuda";

static pthread_once_t targets_once = PTHREAD_ONCE_INIT;
static void init_targets_once(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    /* 32-bit shared-memory pointers, as nvcc uses: an address is one
     * register and `st.shared [%r]`, not a 64-bit add per access. LLVM
     * reads it when a target machine is made (its data layout then says
     * p3:32); set once, before any, for every compilation of the process
     * (libtlc.so links its own LLVM). */
    const char *argv[] = {"tlc", "-nvptx-short-ptr"};
    LLVMParseCommandLineOptions(2, argv, NULL);
}

bool cg_init_targets(tlc_diag *diag) {
    (void)diag;
    pthread_once(&targets_once, init_targets_once);
    return true;
}

/* Multi-line LLVM messages: first line in the error, the rest as notes. */
static void report_llvm_message(tlc_diag *diag, const char *what, const char *msg) {
    const char *nl = msg ? strchr(msg, '\n') : NULL;
    int first = nl ? (int)(nl - msg) : (msg ? (int)strlen(msg) : 0);
    tlc_error(diag, (tlc_loc){0, 0}, "internal error: %s: %.*s", what, first > 700 ? 700 : first, msg ? msg : "");
    int lines = 0;
    while (nl && nl[1] && lines < 12) {
        const char *s = nl + 1;
        nl = strchr(s, '\n');
        int len = nl ? (int)(nl - s) : (int)strlen(s);
        if (len > 0) tlc_note(diag, (tlc_loc){0, 0}, "%.*s", len > 700 ? 700 : len, s);
        lines++;
    }
}

LLVMTargetMachineRef cg_target_machine(tlc_arch arch, int ptx_isa, int opt_level, tlc_diag *diag) {
    const char *cpu = cg_arch_cpu(arch);
    if (!cpu) {
        tlc_error(diag, (tlc_loc){0, 0}, "internal error: codegen: unknown target architecture %d", (int)arch);
        return NULL;
    }
    cg_init_targets(diag);
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(TRIPLE, &target, &err)) {
        report_llvm_message(diag, "LLVM has no NVPTX target", err);
        LLVMDisposeMessage(err);
        return NULL;
    }
    LLVMCodeGenOptLevel lvl = opt_level <= 0 ? LLVMCodeGenLevelNone : opt_level == 1 ? LLVMCodeGenLevelLess
                            : opt_level == 2 ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelAggressive;
    char features[16];
    snprintf(features, sizeof features, "+ptx%d", ptx_isa);
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, TRIPLE, cpu, features, lvl,
                                                      LLVMRelocDefault, LLVMCodeModelDefault);
    if (!tm) tlc_error(diag, (tlc_loc){0, 0}, "internal error: LLVM cannot create an NVPTX target machine for %s", cpu);
    return tm;
}

static unsigned function_instructions(LLVMValueRef f) {
    unsigned n = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
    return n;
}

/* Marks the module's functions past CG_LARGE_FUNCTION_INSTRUCTIONS as
 * built noimplicitfloat; true if there is one. The mark's only reader in
 * tlc's passes and NVPTX's backend is the backend's load/store vectorizer
 * (the other readers are vectorizers tlc does not run and other targets'
 * lowering), which then skips the function. Lowering emits the vector
 * accesses a fragment's layout allows; in the attention and MLA kernels
 * the vectorizer finds nothing more (their PTX is byte-identical without
 * it) and cost mla_decode_split 89M instructions of 1,268M: it compares
 * every pair of the 128 stores that stage the output, all off one base
 * (docs/benchmarks.md, compile time, ninth session). Small kernels
 * (RMSNorm's rows, the ports) keep it: there it merges accesses. */
static bool mark_large_functions(LLVMModuleRef mod) {
    static const char attr[] = "noimplicitfloat";
    bool any = false;
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        if (function_instructions(f) <= CG_LARGE_FUNCTION_INSTRUCTIONS) continue;
        LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(f));
        unsigned kind = LLVMGetEnumAttributeKindForName(attr, sizeof attr - 1);
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, kind, 0));
        any = true;
    }
    return any;
}

bool cg_verify_and_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, tlc_diag *diag) {
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        report_llvm_message(diag, "LLVM verifier rejected the generated module", msg);
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMDisposeMessage(msg);
    bool large = opt_level >= 3 && mark_large_functions(mod);
    const char *pipeline = cg_opt_pipeline(opt_level, large);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
    LLVMPassBuilderOptionsSetLoopVectorization(po, 0); /* one thread's code: no loop vectorizer */
    LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
    LLVMErrorRef e = LLVMRunPasses(mod, pipeline, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        report_llvm_message(diag, "LLVM pass pipeline failed", m);
        LLVMDisposeErrorMessage(m);
        return false;
    }
    return true;
}

/* Kernel metadata as `<prefix>` comment lines. */
static void put_metadata(tlc_strbuf *sb, const th_module *m, const char *prefix) {
    const char *p = m->metadata;
    while (p && *p) {
        tlc_sb_puts(sb, prefix);
        while (*p && *p != '\n') tlc_sb_putc(sb, *p++);
        tlc_sb_putc(sb, '\n');
        if (*p) p++;
    }
}

typedef enum { OUT_LLVM, OUT_PTX } out_kind;

/* Past this many basic blocks or instructions in one function, -O3
 * generates code at the Default level rather than Aggressive. On NVPTX the
 * two differ in the backend's IR passes, where Aggressive runs GVN (twice)
 * in place of EarlyCSE; default<O3> has run GVN already.
 * - The backend's GVN asks memory dependence about each load back through
 *   every earlier block, which is quadratic in a function of many small
 *   blocks: a walk of guarded element loads (a (128, 1024) int8 fragment
 *   copied in and out under bounds tests, 4,099 blocks) takes 3.6 s at
 *   Aggressive, 1.8 s at Default.
 * - In the large kernels (attention, MLA's split kernel: 3,500 to 4,800
 *   instructions after the IR passes) it finds nothing EarlyCSE misses:
 *   their machine code is the same at both levels, and Default takes 5-6%
 *   off the backend's time (docs/benchmarks.md, compile time). GEMM's main
 *   loop (2,747) and the small kernels keep Aggressive, whose machine code
 *   differs for GEMM. */
enum { CG_AGGRESSIVE_CODEGEN_MAX_BLOCKS = 2048, CG_AGGRESSIVE_CODEGEN_MAX_INSTRUCTIONS = 3000 };

/* Whether some function of the module is past either limit above. */
static bool past_aggressive_limits(LLVMModuleRef mod) {
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        if (LLVMCountBasicBlocks(f) > CG_AGGRESSIVE_CODEGEN_MAX_BLOCKS ||
            function_instructions(f) > CG_AGGRESSIVE_CODEGEN_MAX_INSTRUCTIONS)
            return true;
    }
    return false;
}

static char *generate(const th_module *m, const tlc_codegen_options *o, tlc_arena *a, tlc_diag *diag, out_kind kind) {
    tlc_codegen_options defaults = {.arch = m ? m->arch : TLC_DEFAULT_ARCH, .opt_level = 3, .fast_math = false};
    if (!o) o = &defaults;
    if (!m) {
        tlc_error(diag, (tlc_loc){0, 0}, "internal error: codegen: no thread IR module");
        return NULL;
    }
    if (kind == OUT_PTX && o->backend == TLC_BACKEND_DIRECT) {
        char *ptx = cg_direct_ptx(m, o, a, diag);
        if (!ptx) return NULL;
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        put_metadata(&sb, m, "// ");
        tlc_sb_puts(&sb, ptx);
        char *r = tlc_arena_strdup(a, tlc_sb_cstr(&sb));
        tlc_sb_free(&sb);
        return r;
    }
    int ptx_isa = th_module_ptx_isa(m, tlc_target_of(o->arch)->ptx_isa);
    LLVMTargetMachineRef tm = cg_target_machine(o->arch, ptx_isa, o->opt_level, diag);
    if (!tm) return NULL;
    LLVMContextRef ctx = LLVMContextCreate();
    char *result = NULL;
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    LLVMModuleRef mod = cg_build_module(m, o, ctx, td, diag);
    if (mod && cg_verify_and_optimize(mod, tm, o->opt_level, diag)) {
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        if (kind == OUT_LLVM) {
            put_metadata(&sb, m, "; ");
            char *ir = LLVMPrintModuleToString(mod);
            tlc_sb_puts(&sb, ir);
            LLVMDisposeMessage(ir);
            result = tlc_arena_strdup(a, tlc_sb_cstr(&sb));
        } else {
            char *err = NULL;
            LLVMMemoryBufferRef buf = NULL;
            LLVMTargetMachineRef emit_tm = tm;
            if (o->opt_level >= 3 && past_aggressive_limits(mod))
                emit_tm = cg_target_machine(o->arch, ptx_isa, 2, diag);
            if (!emit_tm) {
                /* cg_target_machine has reported why */
            } else if (LLVMTargetMachineEmitToMemoryBuffer(emit_tm, mod, LLVMAssemblyFile, &err, &buf)) {
                report_llvm_message(diag, "NVPTX code generation failed", err);
                LLVMDisposeMessage(err);
            } else {
                put_metadata(&sb, m, "// ");
                tlc_sb_putn(&sb, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
                LLVMDisposeMemoryBuffer(buf);
                result = tlc_arena_strdup(a, tlc_sb_cstr(&sb));
            }
            if (emit_tm && emit_tm != tm) LLVMDisposeTargetMachine(emit_tm);
        }
        tlc_sb_free(&sb);
    }
    if (mod) LLVMDisposeModule(mod);
    LLVMDisposeTargetData(td);
    LLVMContextDispose(ctx);
    LLVMDisposeTargetMachine(tm);
    return result;
}

char *tlc_codegen_llvm_ir(const th_module *m, const tlc_codegen_options *o, tlc_arena *a, tlc_diag *diag) {
    return generate(m, o, a, diag, OUT_LLVM);
}

char *tlc_codegen_ptx(const th_module *m, const tlc_codegen_options *o, tlc_arena *a, tlc_diag *diag) {
    return generate(m, o, a, diag, OUT_PTX);
}
