/* The tile ops: one file per op in ops/, each defining the op's row of the
 * table (ir/tir_op.h: its Tile IR parts, interpreter step, layout rule,
 * scratch and lowering), which op_table.c lists. A new tile op is its ops/
 * file, one row in the table, its sema entry and its tests. Below: the
 * few entry points other passes use directly. */
#ifndef TLC_OPS_OP_TABLE_H
#define TLC_OPS_OP_TABLE_H
#include "../ir/tir_op.h"
#include "../layout/gemm_layouts.h"
#include "../lowerkit/infer.h"
#include "../lowerkit/lower_ctx.h"

/* After the fixpoint: every fragment access of a Parallel loop must be
 * served from the thread's own registers; reports a conflict otherwise. */
bool tlc_parallel_check(tlc_infer *st, tir_stmt *s);
/* The iteration fragment of a Parallel loop: the fragment of a buffer it
 * indexes with exactly its loop variables, else a blocked fragment of its
 * own. Deterministic, so inference and lowering agree. NULL only if
 * `allow_default` is false and no buffer decides it. */
const tlc_fragment *tlc_parallel_loop_fragment(tlc_arena *a, const tir_kernel *k, const tir_stmt *s,
                                               bool allow_default);

/* gemm.c: the instruction and warp split of a gemm statement (layout
 * inference and planning ask it); false with the reason in `why`. */
bool tlc_gemm_choose(tlc_arena *a, const tir_kernel *k, tlc_arch arch, const tir_stmt *s, tlc_gemm_plan *p,
                     char *why, int whylen);
/* gemm.c: wgmma.wait_group `pending`, then C's registers fenced so that no
 * access to them moves above the wait. */
void tlc_wgmma_wait(tlc_lower_ctx *lc, const tir_buffer *C, int pending);
/* gemm.c: the oldest n gemms the plan left in flight
 * (tlc_lower_ctx.wgmma_deferred) retired by a wait just emitted. */
void tlc_wgmma_retire_deferred(tlc_lower_ctx *lc, int n);
/* ---------------- the table ---------------- */
/* Each op's row (ir/tir_op.h), defined in its file. */
extern const tlc_op_desc tlc_op_copy, tlc_op_fill, tlc_op_gemm, tlc_op_reduce, tlc_op_atomic_add, tlc_op_parallel,
    tlc_op_launch_dependents, tlc_op_grid_dependency_wait, tlc_op_prefetch, tlc_op_thread_allreduce,
    tlc_op_sync_threads, tlc_op_sync_grid, tlc_op_mbarrier, tlc_op_wait_wgmma, tlc_op_cp_async, tlc_op_set_max_nreg, tlc_op_fence_proxy_async;
/* mbarrier.c: a hand-pipelined kernel's mbarriers (tir_kernel.mbarriers)
 * initialized with their arrival counts, then a block barrier; nothing
 * for a kernel without. */
void tlc_mbarriers_init(tlc_lower_ctx *lc);
/* mbarrier.c: the 32-bit shared address of mbarrier `index` of the kernel's
 * barrier group `group`. */
th_expr *tlc_mbarrier_addr(tlc_lower_ctx *lc, int group, const tir_expr *index);
/* gemm.c: accumulator C of a T.wgmma_gemm left in flight has retired
 * (all: every wgmma group) after a T.wait_wgmma: its registers fenced
 * there, a float16 accumulator unpacked once all have. */
void tlc_wgmma_retired(tlc_lower_ctx *lc, const tir_buffer *C, bool all);

/* The structural check and the interpreter step of an op without operands
 * whose only effect is on how kernels are launched (pdl_sync, pdl_trigger):
 * nothing to check, nothing to run (the interpreter runs kernels one at a
 * time). */
void tlc_op_check_nothing(tir_verifier *v, const tir_stmt *s);
void tlc_op_step_nothing(struct tlc_interp *it, const tir_stmt *s);

/* The row of a tile-op kind (what sema puts in a new node's `op`); NULL
 * for any other kind. */
const tlc_op_desc *tlc_op_for_kind(tir_stmt_kind kind);
/* A new tile-op node of `kind` with its row (every later stage reaches the
 * op's parts through it). */
tir_stmt *tlc_new_tile_op(tlc_arena *a, tir_stmt_kind kind, tlc_loc loc);
/* The row of statement s: a tile op's own, a Parallel loop's, else NULL. */
const tlc_op_desc *tlc_op_of(const tir_stmt *s);
/* Its scratch bytes (0: none). */
int64_t tlc_op_scratch_bytes(const tir_kernel *k, const tir_stmt *s);
#endif
