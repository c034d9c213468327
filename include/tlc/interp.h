/* The Tile IR interpreter of libtlc: runs the kernels of DSL source on the
 * CPU, on host memory, every block of the grid (no GPU needed). What it
 * computes is what a GPU run computes, up to the order of f32 additions and
 * the accuracy of exp/log approximations; docs/architecture.md describes
 * its semantics (masked tails, poisoned fresh buffers, rounding to each
 * buffer's dtype).
 *
 *   int64_t shape[2] = {rows, 4096}, wshape[1] = {4096};
 *   tlc_interp_tensor_arg t[] = {{"X", x, TLRT_F16, 2, shape}, {"W", w, TLRT_F16, 1, wshape},
 *                                {"Y", y, TLRT_F16, 2, shape}};
 *   tlc_jit_define d[] = {{"C", "4096"}};
 *   char *err = NULL;
 *   if (tlc_interpret(src, len, "rmsnorm.tl", d, 1, "rmsnorm", NULL, t, 3, NULL, 0, &err) != TLC_OK) ...
 *
 * Kernels of one file share parameters by name (mla_decode.tl's split
 * kernel writes what its combine kernel reads), so arguments are named, and
 * with kernel NULL every kernel of the file runs in file order on them. */
#ifndef TLC_INTERP_H
#define TLC_INTERP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "metadata.h"
#include "tlc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor parameter: rank elements in C order of dtype (float16 / bfloat16
 * as 16-bit patterns, float8_e4m3, float8_e5m2 and bool as bytes). dtype and rank must
 * match the parameter; shapes bind symbolic dims. data is read before each
 * kernel runs and written after it (a kernel that fails leaves it as it was). */
typedef struct tlc_interp_tensor_arg {
    const char *name;
    void *data;
    tlrt_dtype dtype;
    int rank;
    const int64_t *shape;
} tlc_interp_tensor_arg;

/* A scalar parameter: f when is_float, else i (converted to its dtype). */
typedef struct tlc_interp_scalar_arg {
    const char *name;
    bool is_float;
    double f;
    int64_t i;
} tlc_interp_scalar_arg;

/* Compiles source (with -D style defines, for arch: NULL means "sm_90a",
 * which decides limits such as shared memory) and runs `kernel` (NULL: every
 * kernel in file order). Every parameter of a kernel that runs must be among
 * the arguments; extra ones are ignored. On TLC_ERROR_COMPILE, *errtext has
 * the compiler's diagnostics; on TLC_ERROR_RUNTIME the interpreter's
 * ("file:line:col: error: index 130 out of bounds ..."), also for missing or
 * mismatched arguments; otherwise a one-line reason. errtext may be NULL;
 * release it with tlc_free. */
TLC_API tlc_status tlc_interpret(const char *source, size_t len, const char *source_name,
                                 const tlc_jit_define *defines, int ndefines, const char *kernel,
                                 const char *arch, const tlc_interp_tensor_arg *tensors, int ntensors,
                                 const tlc_interp_scalar_arg *scalars, int nscalars, char **errtext);

/* tlc_interpret's options; all zero is tlc_interpret's behaviour. */
typedef struct tlc_interpret_options {
    /* The grid's blocks and every Parallel loop's iterations last to first
     * instead of first to last (in thread-indexed code also the two sides
     * of a condition the threads part ways at, and thread ranges that run
     * at the same time): a kernel whose outputs then differ from a plain
     * run's depends on an order the GPU does not keep (a race). */
    bool reverse;
} tlc_interpret_options;

/* tlc_interpret with options (NULL: as tlc_interpret). */
TLC_API tlc_status tlc_interpret_ex(const char *source, size_t len, const char *source_name,
                                    const tlc_jit_define *defines, int ndefines, const char *kernel,
                                    const char *arch, const tlc_interp_tensor_arg *tensors, int ntensors,
                                    const tlc_interp_scalar_arg *scalars, int nscalars,
                                    const tlc_interpret_options *options, char **errtext);

#ifdef __cplusplus
}
#endif
#endif
