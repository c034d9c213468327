/* T.wait_wgmma(n) (docs/language.md 11.9): wgmma.wait_group n, which
 * returns once at most n of the warpgroup's committed wgmma groups are
 * still in flight. The accumulators of the T.wgmma_gemm's lowering has
 * left in flight since the last wait for all (n = 0) are fenced after it,
 * so that nothing moves their reads above the wait (ops/gemm.c); with n =
 * 0 they are all retired. Each thread runs it (the warpgroup's warps take
 * it together, .sync.aligned); the interpreter's gemms are done when they
 * are issued, and it retires their groups (interp/interp_wgmma.c). */
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

static void wait_wgmma_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    int pending = s->u.wait_wgmma.pending;
    tlc_emit_ptx(lc, tlc_ptx_wgmma_wait(lc->a, pending), NULL, 0, NULL, 0);
    for (int i = 0; i < lc->wgmma_in_flight.len; i++) tlc_wgmma_retired(lc, lc->wgmma_in_flight.items[i], !pending);
    if (!pending) lc->wgmma_in_flight.len = 0;
}

static void wait_wgmma_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_printf(p, "wait_wgmma(%d)", s->u.wait_wgmma.pending);
}

static void wait_wgmma_verify(tir_verifier *v, const tir_stmt *s) {
    if (s->u.wait_wgmma.pending < 0 || s->u.wait_wgmma.pending > 7)
        tir_verifier_fail(v, s->loc, "wait_wgmma(%d): 0 to 7 groups left in flight", s->u.wait_wgmma.pending);
}

static void wait_wgmma_interp(tlc_interp *it, const tir_stmt *s) { tlc_interp_wgmma_wait(it, s->u.wait_wgmma.pending); }

const tlc_op_desc tlc_op_wait_wgmma = {
    .kind = TS_WAIT_WGMMA, .name = "wait_wgmma", .each_thread = true,
    .print = wait_wgmma_print, .verify = wait_wgmma_verify, .interp = wait_wgmma_interp,
    .lower = wait_wgmma_lower, /* no operands, no layout */
};
