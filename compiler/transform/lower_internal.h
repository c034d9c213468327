/* What the lowering driver (lower.c), the pipelined loops
 * (lower_pipeline.c) and warp specialization (warp_specialize.c) share. */
#ifndef TLC_TRANSFORM_LOWER_INTERNAL_H
#define TLC_TRANSFORM_LOWER_INTERNAL_H
#include "../ops/op_table.h"
#include "passes.h"
#include "tlc/metadata.h"

/* metadata.c: the launch metadata of one lowered kernel (after its body:
 * threads and shared bytes are final), and the module's block of text
 * (through the runtime's validating formatter). Errors go to diag. */
bool tlc_kernel_metadata(tlc_lower_ctx *lc, tlrt_kernel_meta *out);
const char *tlc_module_metadata(const tir_module *m, tlrt_kernel_meta *kernels, tlc_arena *a, tlc_diag *diag);
/* lower.c: one statement (tile ops through the op table). */
void tlc_lower_stmt(tlc_lower_ctx *lc, const tir_stmt *s);
/* ---------------- Pipelined loops (lower_pipeline.c) ---------------- */
/* Before the kernel body is lowered: one tmap per TMA copy of every
 * pipelined loop and per preload of the warp-specialized loop, appended to
 * the kernel parameters. */
void tlc_pipe_collect_tmaps(tlc_lower_ctx *lc, int *nparams);
/* After tlc_pipe_collect_tmaps: a TMA map needs 16-byte strides, so a
 * symbolic last dim of a mapped tensor is a multiple of 16 bytes' worth of
 * elements (lc->sym_multiple; the runtime refuses launches otherwise). */
void tlc_pipe_sym_facts(tlc_lower_ctx *lc);
/* Pieces of a pipelined loop (lower.c strings them together):
 * begin (barrier init), issue (the loads of iteration `it` into stage
 * `stage`, guarded by it < n), wait (stage data ready), end (drain). */
typedef struct tlc_pipe_state {
    const tlc_pipe_plan *plan;
    const tir_stmt *loop;
    int64_t mbar;      /* TMA: byte offset of the stages' mbarriers */
    th_expr *n;        /* iteration count */
    bool in_issuer;    /* already in the one thread that issues TMA (warp specialization) */
    int align_mode;    /* cp.async copies over a symbolic row length: TLC_PIPE_ALIGN_* */
    th_stmt *before_loads; /* emitted after the loads' lets, before the loads (the producer's wait for a stage) */
    /* per load, a gather's arithmetic computed before the loop (NULL: none;
     * tlc_pipe_hoist) */
    struct tlc_gather_hoist *hoist;
    /* TMA multicast (plan.h, tlc_ws_decision.multicast): this block's rank
     * in its cluster and the cluster's blocks; NULL: every load its own */
    th_expr *mc_rank, *mc_blocks;
} tlc_pipe_state;
/* INTERIOR: every chunk of every iteration lies inside its tensor and rows
 * are 16-byte aligned (tlc_pipe_interior_cond held), so no masks at all. */
enum { TLC_PIPE_ALIGN_CHECK, TLC_PIPE_ALIGN_ASSUMED, TLC_PIPE_ALIGN_FALLBACK, TLC_PIPE_INTERIOR };
/* All cp.async copies of the plan may use 16-byte chunks (NULL: nothing to
 * test at run time). */
th_expr *tlc_pipe_aligned_cond(tlc_lower_ctx *lc, const tlc_pipe_plan *pp);
/* cp.async plans whose copy starts are affine in the loop variable: the
 * run-time condition that every iteration's tiles lie wholly inside their
 * tensors (checked at the first and the last iteration); NULL when the
 * starts are not of that form. */
th_expr *tlc_pipe_interior_cond(tlc_lower_ctx *lc, const tlc_pipe_plan *pp, const tir_stmt *loop);
void tlc_pipe_begin(tlc_lower_ctx *lc, tlc_pipe_state *ps);
/* Before the loop (after tlc_pipe_begin): the gathers' per-chunk arithmetic
 * that no iteration changes, computed once (lower_pipeline.c). */
void tlc_pipe_hoist(tlc_lower_ctx *lc, tlc_pipe_state *ps);
void tlc_pipe_issue(tlc_lower_ctx *lc, tlc_pipe_state *ps, th_expr *it, th_expr *stage);
/* With cp.async chunks (tlc_pipe_has_chunks): commit groups, and a wait for
 * this iteration's before the stage's barrier (the later ones stay in
 * flight); tlc_pipe_wait waits for the TMA copies. */
void tlc_pipe_wait_chunks(tlc_lower_ctx *lc, tlc_pipe_state *ps);
void tlc_pipe_wait(tlc_lower_ctx *lc, tlc_pipe_state *ps, th_expr *it, th_expr *stage);
void tlc_pipe_end(tlc_lower_ctx *lc, tlc_pipe_state *ps);
/* The TMA loads of copy s (one per swizzle panel) into the shared bytes
 * at `base`, completing on mbarrier `bar` (both shared addresses). */
void tlc_tma_issue_copy(tlc_lower_ctx *lc, const tir_stmt *s, th_expr *base, th_expr *bar);
/* A hand-pipelined kernel's T.tma_copy as TMA: the branch's first thread
 * adds the copy's bytes to its barrier's phase (expect_tx, no arrival)
 * and issues the loads; false (nothing emitted) where TMA cannot take it
 * (then it is a copy by the branch's threads). */
bool tlc_program_tma_copy(tlc_lower_ctx *lc, const tir_stmt *s);
/* stage_off for the plan's buffers at `stage` (NULL: clear). */
void tlc_pipe_set_stage(tlc_lower_ctx *lc, const tlc_pipe_plan *pp, th_expr *stage);

/* ---------------- warp specialization (warp_specialize.c) ---------------- */
/* On sm_90a, a kernel with a Pipelined loop of TMA loads feeding wgmma
 * gemms gets one producer warpgroup more than the user's threads (which
 * become the consumers). tlc_ws_begin decides (sets
 * lc->ws, the launch threads, minnctapersm); the body is then lowered into
 * a list and tlc_ws_finish wraps it: mbarrier init, then
 * if (tid >= threads) producer else consumers. */
typedef struct tlc_ws_plan tlc_ws_plan;
bool tlc_ws_begin(tlc_lower_ctx *lc);
bool tlc_ws_owns_loop(const tlc_lower_ctx *lc, const tir_stmt *loop);
/* The consumers' loop: wait for a stage, the body (lowered by the driver's
 * `lower_body`: every statement but the pipelined copies), release. */
typedef void (*tlc_ws_body_fn)(tlc_lower_ctx *lc, const tir_stmt *loop, void *ctx);
void tlc_ws_lower_consumer_loop(tlc_lower_ctx *lc, const tir_stmt *loop, tlc_ws_body_fn lower_body, void *ctx);
void tlc_ws_finish(tlc_lower_ctx *lc, th_stmt *consumer_body);
/* The consumers at a preload (tlc_ws_is_preload): the first of them waits
 * for the producer's loads; the others are no-ops. */
void tlc_ws_consumer_preload(tlc_lower_ctx *lc, const tir_stmt *s);
/* Warp-specialized kernels are persistent: the runtime launches at most
 * (SMs x this) blocks (metadata `persistent` line) and each walks the
 * logical grid's tiles; 0 when the kernel is not. */
int tlc_ws_persistent_blocks(const tlc_lower_ctx *lc);
/* lower.c: block indices of linear block `lin` of a gx x gy grid with the
 * kernel's use_swizzle remap (out[0] = x, out[1] = y). */
void tlc_block_swizzle(tlc_lower_ctx *lc, th_expr *lin, th_expr *gx, th_expr *gy, th_expr **out);
#endif
