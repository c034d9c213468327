/* The passes over Tile IR (one file each) and their dumps: layout
 * inference, planning (with its steps), lowering to Thread IR. */
#ifndef TLC_TRANSFORM_PASSES_H
#define TLC_TRANSFORM_PASSES_H
#include "../ir/thread_ir.h"
#include "../ir/tir.h"
#include "../lowerkit/plan.h"

/* Warpgroup turns (turns.c): analyses every Pipelined(..., turns=True)
 * loop, records its roles (loop->u.for_.turns) and marks its score gemms
 * per-warpgroup; before layout inference, which that decides. */
bool tlc_plan_turns(tir_module *m, tlc_arena *a, tlc_diag *diag);
/* Layout inference (layout_infer.c): sets buffer->fragment for every
 * fragment buffer and buffer->layout for every shared buffer. Errors (layout
 * conflicts) go to diag at the op's source line. */
bool tlc_layout_infer(tir_module *m, tlc_arena *a, tlc_diag *diag);
/* Planning (plan.c): decides, once per kernel, what tlc_kernel_plan
 * (lowerkit/plan.h) records, and attaches it to the kernel (k->plan). Its
 * steps, in order: */
bool tlc_plan_module(tir_module *m, tlc_arena *a, tlc_diag *diag);
/* pipeline_plan.c: the plan of every Pipelined loop; sets the stage count
 * of the shared layouts its copies fill. */
void tlc_plan_pipelines(tlc_kernel_plan *p, const tir_kernel *k, tlc_arena *a);
/* pipeline_plan.c, after the gemms are planned: whether each loop issues its
 * cp.async loads under its last gemm (tlc_pipe_plan.loads_under). */
void tlc_plan_pipeline_overlap(tlc_kernel_plan *p);
/* s copies a tile global -> a whole 2-d shared buffer in one TMA box (per
 * swizzle panel), as a pipelined copy on sm_90 would. */
bool tlc_tma_copy_fits(const tir_stmt *s);
/* The TMA box copy s's shared buffer needs fits one: rows <= 256, the
 * inner box (a panel, or the row) <= 256 elements, a multiple of 16 bytes
 * and the swizzle's width, a tensor parameter of at most 5 dims. */
bool tlc_tma_box_fits(const tir_stmt *s);
/* pipeline_gather.c: s is a Parallel loop that gathers rows of a global
 * tensor into a whole 2-d shared buffer which 16-byte cp.async chunks can
 * load (tlc_gather); lets[0..nlets) are the statements before it in its
 * loop's body, whose lets its offsets may name; written[buffer id]: the
 * kernel writes that buffer (a gather reads none such). */
bool tlc_gather_match(const tir_stmt *s, tir_stmt *const *lets, int nlets, const bool *written, tlc_gather *g);
/* warp_specialize.c: which loop (if any) is warp-specialized; then, once
 * shared memory is placed (`top`: its end so far), occupancy, the register
 * split and the mbarriers (placed at *top, which grows past them). */
void tlc_plan_warp_specialization(tlc_kernel_plan *p, const tir_kernel *k, tlc_arena *a);
void tlc_plan_warp_specialization_shared(tlc_kernel_plan *p, const tir_kernel *k, int64_t *top, tlc_arena *a);
/* Why the planned warp specialization loses to the kernel without it (NULL:
 * it does not): that kernel would run at least twice the consumer
 * warpgroups per SM; *blocks: its blocks per SM. */
const char *tlc_ws_occupancy_refusal(const tlc_kernel_plan *p, const tir_kernel *k, int *blocks, tlc_arena *a);
/* Which wgmma gemms stay in flight past the statements after them, and
 * until where (tlc_gemm_op_plan.deferred; gemm_retire.c). */
void tlc_plan_gemm_retirement(tlc_kernel_plan *p, const tir_kernel *k);
/* shared_alloc.c: offsets of the shared buffers (in their layouts) and of
 * the tile ops' scratch, by liveness; p->smem. */
void tlc_plan_shared_memory(tlc_kernel_plan *p, tir_kernel *k, tlc_arena *a);
/* --emit=plan (plan_print.c). */
void tlc_plan_print_module(tlc_strbuf *sb, const tir_module *m);
/* --emit=layout (layout_print.c). */
void tlc_layout_print_module(tlc_strbuf *sb, const tir_module *m);
/* Lowering (lower.c): Tile IR with layouts -> Thread IR. */
th_module *tlc_lower_module(const tir_module *m, tlc_arena *a, tlc_diag *diag);
#endif
