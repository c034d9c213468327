/* One compilation: source -> tokens / AST / Tile IR (and, in later stages,
 * layouts, Thread IR, LLVM IR, PTX). Owns its arena and diagnostics; no
 * global state, so many compilations can run on many threads at once. */
#ifndef TLC_COMPILE_H
#define TLC_COMPILE_H
#include "../frontend/ast.h"
#include "../frontend/sema.h"
#include "../ir/tir.h"
#include "stage_times.h"

typedef enum {
    TLC_STAGE_TOKENS, TLC_STAGE_AST, TLC_STAGE_TIR,
} tlc_stage;

typedef struct tlc_compile_options {
    tlc_arch arch;
    const tlc_define *defines; int ndefines;
    const char *kernel;  /* NULL: every kernel */
    tlc_stage stop_after;
    int opt_level;       /* LLVM optimization level for code generation, 0..3 (default 3) */
    int backend;         /* tlc_backend (ir/thread_ir.h): who generates the PTX; tlc's own by default */
    int num_sms;         /* the device's SM count for driver.get_num_sms(); 0: the target's (tlc_target) */
} tlc_compile_options;

typedef struct tlc_compilation {
    tlc_arena arena;
    tlc_source src;      /* text copied into the arena */
    tlc_diag diag;
    tlc_token *tokens; int ntokens; /* only when stop_after == TOKENS */
    ast_module *ast;
    tir_module *tir;
    struct th_module *thread; /* the Thread IR once lowered (compile_backend.h), reused by codegen */
    int opt_level;            /* from the options, for code generation */
    int backend;              /* from the options, for code generation */
    tlc_stage_times times;    /* wall time of each stage run so far */
} tlc_compilation;

void tlc_compile_options_default(tlc_compile_options *o);
/* Runs the pipeline up to opt->stop_after. Returns true on success; on
 * failure the diagnostics are in c->diag.out. Always call tlc_compilation_free. */
bool tlc_compile_source(tlc_compilation *c, const char *name, const char *text, size_t len,
                        const tlc_compile_options *opt);
void tlc_compilation_free(tlc_compilation *c);
#endif
