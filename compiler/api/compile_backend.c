/* Back half of the pipeline: layouts -> Thread IR -> LLVM / PTX / cubin. */
#include "compile_backend.h"
#include <stdlib.h>
#include <string.h>
#include "../transform/passes.h"

/* Layout inference and planning ran (planning is their last step). */
static bool planned(const tir_module *m) {
    for (int i = 0; i < m->nkernels; i++)
        if (!m->kernels[i]->plan) return false;
    return true;
}

static bool have_tir(tlc_compilation *c) {
    if (c->tir && c->diag.errors == 0) return true;
    if (c->diag.errors == 0) tlc_error(&c->diag, (tlc_loc){0, 0}, "internal error: no Tile IR to lower");
    return false;
}

bool tlc_compile_layouts(tlc_compilation *c, tlc_strbuf *dump) {
    if (!have_tir(c)) return false;
    if (!planned(c->tir)) {
        double start = tlc_clock_ms();
        bool ok = tlc_plan_turns(c->tir, &c->arena, &c->diag) && c->diag.errors == 0 &&
                  tlc_layout_infer(c->tir, &c->arena, &c->diag) && c->diag.errors == 0 &&
                  tlc_plan_module(c->tir, &c->arena, &c->diag) && c->diag.errors == 0;
        tlc_stage_times_add(&c->times, TLC_TIMED_LAYOUT_PLAN, start);
        if (!ok) return false;
    }
    if (dump) tlc_layout_print_module(dump, c->tir);
    return true;
}

bool tlc_compile_plan(tlc_compilation *c, tlc_strbuf *dump) {
    if (!tlc_compile_layouts(c, NULL)) return false;
    if (dump) tlc_plan_print_module(dump, c->tir);
    return true;
}

th_module *tlc_compile_thread(tlc_compilation *c, tlc_strbuf *dump) {
    if (!c->thread) {
        if (!tlc_compile_layouts(c, NULL)) return NULL;
        double start = tlc_clock_ms();
        th_module *m = tlc_lower_module(c->tir, &c->arena, &c->diag);
        tlc_stage_times_add(&c->times, TLC_TIMED_LOWER, start);
        if (!m || c->diag.errors) {
            if (c->diag.errors == 0)
                tlc_error(&c->diag, (tlc_loc){0, 0}, "internal error: lowering failed without a diagnostic");
            return NULL;
        }
        c->thread = m;
    }
    if (dump) th_print_module(dump, c->thread);
    return c->thread;
}

typedef char *(*codegen_fn)(const th_module *, const tlc_codegen_options *, tlc_arena *, tlc_diag *);

static char *codegen(tlc_compilation *c, bool fast_math, codegen_fn generate) {
    th_module *m = tlc_compile_thread(c, NULL);
    if (!m) return NULL;
    tlc_codegen_options o = {.arch = c->tir->arch, .opt_level = c->opt_level, .fast_math = fast_math,
                             .backend = (tlc_backend)c->backend};
    double start = tlc_clock_ms();
    char *text = generate(m, &o, &c->arena, &c->diag);
    tlc_stage_times_add(&c->times, TLC_TIMED_CODEGEN, start);
    return text;
}

char *tlc_compile_llvm(tlc_compilation *c, bool fast_math) { return codegen(c, fast_math, tlc_codegen_llvm_ir); }

char *tlc_compile_ptx(tlc_compilation *c, bool fast_math) { return codegen(c, fast_math, tlc_codegen_ptx); }

unsigned char *tlc_compile_cubin(tlc_compilation *c, bool fast_math, size_t *size) {
    char *ptx = tlc_compile_ptx(c, fast_math);
    if (!ptx) return NULL;
    double start = tlc_clock_ms();
    unsigned char *bytes = tlc_ptxas_assemble(ptx, c->tir->arch, size, &c->arena, &c->diag);
    tlc_stage_times_add(&c->times, TLC_TIMED_PTXAS, start);
    return bytes;
}

static char *dup(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r) memcpy(r, s, n + 1);
    return r;
}

char *tlc_compile_to_ptx(const char *name, const char *text, size_t len, const tlc_define *defines, int ndefines,
                         tlc_arch arch, const char *kernel, int opt_level, char **err) {
    return tlc_compile_to_ptx_backend(name, text, len, defines, ndefines, arch, kernel, opt_level, TLC_BACKEND_LLVM, err);
}

char *tlc_compile_to_ptx_backend(const char *name, const char *text, size_t len, const tlc_define *defines,
                                 int ndefines, tlc_arch arch, const char *kernel, int opt_level, int backend,
                                 char **err) {
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.arch = arch;
    o.backend = backend;
    o.defines = defines;
    o.ndefines = ndefines;
    o.kernel = kernel;
    o.opt_level = opt_level;
    return tlc_compile_to_ptx_with(name, text, len, &o, err);
}

char *tlc_compile_to_ptx_with(const char *name, const char *text, size_t len, const tlc_compile_options *opt,
                              char **err) {
    if (err) *err = NULL;
    tlc_compile_options o = *opt;
    o.stop_after = TLC_STAGE_TIR;
    tlc_compilation c;
    char *ptx = NULL;
    if (tlc_compile_source(&c, name, text ? text : "", text ? len : 0, &o)) {
        char *p = tlc_compile_ptx(&c, false);
        if (p) ptx = dup(p);
    }
    if (!ptx && err) *err = dup(tlc_sb_cstr(&c.diag.out));
    tlc_compilation_free(&c);
    return ptx;
}
