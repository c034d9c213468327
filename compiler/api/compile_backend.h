/* The back half of the pipeline, on a compilation that reached Tile IR
 * (compile.h): layout inference (--emit=layout), lowering to Thread IR
 * (--emit=thread), and code generation (--emit=llvm|ptx|cubin). Each step
 * runs the ones before it if needed; everything lives in the compilation's
 * arena and errors go to its diag (c->diag.out). */
#ifndef TLC_COMPILE_BACKEND_H
#define TLC_COMPILE_BACKEND_H
#include <stddef.h>
#include "../ir/thread_ir.h"
#include "compile.h"

/* Layout inference and planning (shared-memory allocation included).
 * Idempotent. If dump is not NULL the --emit=layout text is appended to it. */
bool tlc_compile_layouts(tlc_compilation *c, tlc_strbuf *dump);
/* The same, appending the --emit=plan text to dump. */
bool tlc_compile_plan(tlc_compilation *c, tlc_strbuf *dump);
/* Lowering: the Thread IR module (NULL on error), lowered once per
 * compilation and kept for code generation; dump gets --emit=thread. */
th_module *tlc_compile_thread(tlc_compilation *c, tlc_strbuf *dump);
/* LLVM IR / PTX text (arena strings, with the launch metadata as leading
 * comment lines), cubin bytes (needs ptxas). NULL on error. LLVM runs at
 * the compilation's opt_level (tlc_compile_options). */
char *tlc_compile_llvm(tlc_compilation *c, bool fast_math);
char *tlc_compile_ptx(tlc_compilation *c, bool fast_math);
unsigned char *tlc_compile_cubin(tlc_compilation *c, bool fast_math, size_t *size);

/* One call for the JIT and the GPU tests: DSL source + -D defines + arch
 * (+ kernel name or NULL for all) + LLVM optimization level (0..3) -> PTX
 * text with metadata, malloc'd
 * (caller frees). On failure returns NULL and, if err is not NULL, sets
 * *err to the malloc'd diagnostics text. */
char *tlc_compile_to_ptx(const char *name, const char *text, size_t len, const tlc_define *defines, int ndefines,
                         tlc_arch arch, const char *kernel, int opt_level, char **err);
/* The same with every option given (o->stop_after is ignored). */
char *tlc_compile_to_ptx_with(const char *name, const char *text, size_t len, const tlc_compile_options *o,
                              char **err);
/* The same with the PTX generator chosen (tlc_backend, ir/thread_ir.h). */
char *tlc_compile_to_ptx_backend(const char *name, const char *text, size_t len, const tlc_define *defines,
                                 int ndefines, tlc_arch arch, const char *kernel, int opt_level, int backend,
                                 char **err);
#endif
