/* Semantic analysis: AST -> Tile IR. Name resolution, binding of -D values
 * over @jit defaults, constant folding, dtype and shape checks, scope rules
 * and resource limits (shared memory per block for the target arch, threads).
 * Reports every problem it can find (with notes at related places) and
 * returns NULL when any error was reported. */
#ifndef TLC_SEMA_H
#define TLC_SEMA_H
#include "ast.h"
#include "../ir/tir.h"

typedef struct tlc_define {
    const char *name;
    const char *value; /* text as given: "128", "1e-5", "bfloat16", "True", "\"col\"" */
} tlc_define;

typedef struct tlc_sema_options {
    tlc_arch arch;
    const tlc_define *defines; int ndefines;
    const char *kernel; /* only this kernel (NULL: all); an unknown name is an error */
    int num_sms;        /* driver.get_num_sms(); 0: the target's count (tlc_target.num_sms) */
} tlc_sema_options;

tir_module *tlc_sema(const ast_module *m, const tlc_sema_options *opt, tlc_arena *arena, tlc_diag *diag);
#endif
