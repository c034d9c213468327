/* pdl_sync(): the kernel is launched as a programmatic dependent of the
 * stream's previous kernel (sema sets the Tile IR kernel's pdl_wait, which
 * the metadata and codegen read), and its threads wait here until that
 * kernel has finished with all its writes visible. Reads before the wait
 * must not touch what the previous kernel writes (the combine of MLA decode
 * reads the schedule, written two kernels back, to return early). Lowered
 * to griddepcontrol.wait on sm_90; to nothing on sm_80, where kernels
 * launch in order, and in a warp-specialized kernel, which waits at its
 * start (lower.c: the producer's loads must wait too).
 *
 * No operands and no layout (op_table.h: nothing to check or run). */
#include "../ir/tir_op.h"
#include "op_table.h"

static void grid_dependency_wait_print(tir_printer *p, const tir_stmt *s) {
    (void)s;
    tir_printer_puts(p, "pdl_sync()");
}

static void grid_dependency_wait_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    (void)s;
    /* a warp-specialized kernel waited at its start (lower.c) */
    if (tlc_target_of(lc->arch)->griddepcontrol && !lc->plan->ws.loop)
        tlc_emit_ptx(lc, tlc_ptx_griddepcontrol_wait(), NULL, 0, NULL, 0);
}

const tlc_op_desc tlc_op_grid_dependency_wait = {
    .kind = TS_GRID_DEPENDENCY_WAIT, .name = "pdl_sync",
    .print = grid_dependency_wait_print, .verify = tlc_op_check_nothing,
    .interp = tlc_op_step_nothing, .lower = grid_dependency_wait_lower, /* no operands, no layout */
};
