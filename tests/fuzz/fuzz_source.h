/* What the source-driven fuzz targets share (fuzz_pipeline.c,
 * fuzz_interp.c): their command-line options from the input's `# RUN:`
 * lines, and the check of the compiler's diagnostics.
 *
 * Options: the words `-D NAME=VALUE` (or `-DNAME=VALUE`), `--arch=sm_XX`
 * (or `-arch=`), `--kernel=NAME` and `--dim=NAME=VALUE` (a symbolic dim's
 * value for the interpreter); other words are ignored. So the golden files
 * are seeds as they are, and mutations vary the values too. */
#ifndef TLC_FUZZ_SOURCE_H
#define TLC_FUZZ_SOURCE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/compile.h"

#define FUZZ_MAX_DEFINES 16
#define FUZZ_MAX_DIMS 8
#define FUZZ_MAX_WORD 128

typedef struct fuzz_options {
    tlc_define defines[FUZZ_MAX_DEFINES];
    int ndefines;
    char define_text[FUZZ_MAX_DEFINES][FUZZ_MAX_WORD];
    tlc_arch arch;
    const char *kernel;
    char kernel_text[FUZZ_MAX_WORD];
    struct { char name[FUZZ_MAX_WORD]; int64_t value; } dims[FUZZ_MAX_DIMS];
    int ndims;
} fuzz_options;

void fuzz_parse_options(fuzz_options *o, const char *text, size_t len);
/* The compiler's options for them (the rest default). */
void fuzz_compile_options(const fuzz_options *o, tlc_compile_options *co);
/* The input as a NUL-terminated source (it may hold NULs before the end);
 * NULL when out of memory. free() it. */
char *fuzz_source_text(const uint8_t *data, size_t size);
/* Prints `what` and the diagnostics (`target`: the fuzz target's name),
 * then aborts: a bug found. */
_Noreturn void fuzz_fail(const char *target, const char *what, const char *diagnostics);
/* Aborts where the diagnostics `out` (of source `name`) hold an internal
 * error or an error without a file:line:col location, except those about
 * the command line itself (an unknown -D name, no such --kernel). */
void fuzz_check_diagnostics(const char *target, const char *name, const char *out);
#endif
