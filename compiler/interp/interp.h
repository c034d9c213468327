/* The Tile IR interpreter: runs a kernel after sema on the CPU, block by
 * block, with tile ops executed whole (no thread simulation). This is the
 * compiler's own API, on Tile IR; include/tlc/interp.h is the public one,
 * from source text.
 *
 * Semantics (docs: what a GPU run of the same kernel computes, up to the
 * order of f32 additions and the accuracy of exp/log approximations):
 * - every block of the grid runs, serially in bz, by, bx order (x fastest);
 *   use_swizzle only reorders blocks and is ignored;
 * - shared / fragment / local / var buffers are per block. local and var are
 *   per-thread on the GPU; here they are one copy per block, which is exact
 *   for the way tile programs use them (inside Parallel loops or as
 *   block-uniform scalars);
 * - fresh shared / fragment / local / var buffers and alloc_global workspaces
 *   (one per launch) are poisoned: NaN for floats, a junk value for integers,
 *   so a kernel that reads what it never wrote shows it;
 * - arithmetic of a float expression type is rounded to that type after every
 *   operation (f32 math is f32, not double); every store to a buffer rounds
 *   to the buffer's dtype (fp16 / bf16 round to nearest even and overflow to
 *   inf, float8_e4m3 and float8_e5m2 saturate to +-448 and +-57344, integers wrap);
 * - copy regions that reach outside a global tensor are masked (reads give 0,
 *   writes are dropped), which is how tails work; any other out-of-bounds
 *   index (non-global buffers, element loads and stores) is an error with the
 *   source location;
 * - gemm multiplies inputs already rounded to their dtype, accumulating in
 *   f32 into the accumulator; Pipelined loops run in order.
 * No global state: interpreters on different threads are independent. */
#ifndef TLC_INTERP_INTERP_H
#define TLC_INTERP_INTERP_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/tir.h"
#include "support/diag.h"

typedef struct tlc_interp tlc_interp;

/* src is the compilation's source (for "file:line:col" in errors; may be
 * NULL); k must outlive the interpreter. */
tlc_interp *tlc_interp_create(const tir_kernel *k, const tlc_source *src);
void tlc_interp_destroy(tlc_interp *it);

/* Binds tensor parameter `name` to host memory holding rank elements in C
 * order of dtype (float16 / bfloat16 as 16-bit patterns, float8 as
 * bytes, bool as bytes). dtype and rank must match the parameter; shapes
 * bind symbolic dims (checked for consistency at run). The memory is read at
 * run start and written back at run end. Returns false (see
 * tlc_interp_error) on a mismatch or an unknown name. */
bool tlc_interp_bind_tensor(tlc_interp *it, const char *name, void *data, tir_dtype dtype,
                            int rank, const int64_t *shape);
bool tlc_interp_bind_int(tlc_interp *it, const char *name, int64_t value);
bool tlc_interp_bind_float(tlc_interp *it, const char *name, double value);

/* The order of what the GPU runs concurrently (the grid's blocks, the
 * iterations of a Parallel loop, the two sides of a condition the threads
 * part ways at, thread ranges that run at the same time): first to last by
 * default; with reverse, last to first, so that a kernel whose result depends on that order (an
 * iteration or a block reading or writing what another writes, with
 * nothing ordering them on the GPU) gives another result than in the
 * default order. Checks run both and compare. */
typedef struct tlc_interp_options {
    bool reverse;
    /* A kernel's run that would take more steps (its blocks and loop
     * iterations, in thread-indexed code each thread's) stops with an error
     * at the step past the limit; 0: no limit. */
    int64_t max_steps;
} tlc_interp_options;
void tlc_interp_set_options(tlc_interp *it, const tlc_interp_options *o);

/* Runs the whole grid. false on error (unbound parameter, inconsistent
 * symbolic dims, out-of-bounds access, division by zero, ...): the tensors'
 * memory is then left as it was before the run. */
bool tlc_interp_run(tlc_interp *it);

/* The last error, rendered as diagnostics ("file:line:col: error: ..." plus
 * the source line); "" when none. Valid until the next call on it. */
const char *tlc_interp_error(const tlc_interp *it);

/* Value a symbolic dim got at the last bind/run, or -1 when unbound. */
int64_t tlc_interp_sym_dim(const tlc_interp *it, const char *name);
/* Whether the kernel writes tensor parameter i (a copy/store/atomic/fill/
 * gemm/reduce destination): what `tlc run` reports as outputs. */
bool tlc_interp_param_written(const tir_kernel *k, int param_index);
/* Statistics of the last run, for benchmarks. */
typedef struct tlc_interp_stats {
    int64_t blocks;
    int64_t gemm_macs;     /* multiply-adds done by gemm */
    int64_t elem_evals;    /* statement executions inside loops (tree-walked) */
} tlc_interp_stats;
tlc_interp_stats tlc_interp_get_stats(const tlc_interp *it);

/* ---- running every kernel of a module on named arguments ----
 * Kernels of one file share parameters by name (mla_decode.tl: the split
 * kernel writes Glse / Output_partial, the combine kernel reads them), so a
 * run binds each kernel's parameters from one list of named arguments. */
typedef struct tlc_interp_tensor {
    const char *name;
    void *data;
    tir_dtype dtype;
    int rank;
    int64_t shape[8];
} tlc_interp_tensor;

typedef struct tlc_interp_scalar {
    const char *name;
    bool is_float;
    double f;
    int64_t i;
} tlc_interp_scalar;

/* Runs `kernel` of m, or (kernel NULL) every kernel in file order. Every
 * parameter must be among the arguments (extra arguments are ignored).
 * opts may be NULL (the default order). On failure returns false with the
 * diagnostics appended to err. */
bool tlc_interp_run_module(const tir_module *m, const tlc_source *src, const char *kernel,
                           const tlc_interp_tensor *tensors, int ntensors,
                           const tlc_interp_scalar *scalars, int nscalars, const tlc_interp_options *opts,
                           tlc_strbuf *err);
#endif
