/* pdl_trigger(): from here on the stream's next kernel, if it was launched
 * as a programmatic dependent (it calls pdl_sync()), may be scheduled; it
 * waits for this whole grid to finish before it reads anything. The first
 * thread of a block to get here counts for the block; a block that exits
 * counts too. Lowered to griddepcontrol.launch_dependents on sm_90, to
 * nothing where there is no programmatic launch (sm_80).
 *
 * No operands and no layout (op_table.h: nothing to check or run). */
#include "../ir/tir_op.h"
#include "op_table.h"

static void launch_dependents_print(tir_printer *p, const tir_stmt *s) {
    (void)s;
    tir_printer_puts(p, "pdl_trigger()");
}

static void launch_dependents_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    (void)s;
    if (tlc_target_of(lc->arch)->griddepcontrol)
        tlc_emit_ptx(lc, tlc_ptx_griddepcontrol_launch_dependents(), NULL, 0, NULL, 0);
}

const tlc_op_desc tlc_op_launch_dependents = {
    .kind = TS_LAUNCH_DEPENDENTS, .name = "pdl_trigger",
    .print = launch_dependents_print, .verify = tlc_op_check_nothing, .interp = tlc_op_step_nothing,
    .lower = launch_dependents_lower, /* no operands, no layout */
};
