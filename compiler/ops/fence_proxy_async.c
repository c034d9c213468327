/* T.fence_proxy_async(): fence.proxy.async.shared::cta, after which the
 * thread's earlier shared-memory stores are visible to the async proxy
 * (a wgmma or TMA another warpgroup issues once a barrier says so), as
 * TileLang's hand-pipelined kernels write it where a buffer crosses
 * warpgroups. tlc places the fences its own barriers need; this one is
 * the program's, and each thread that reaches it runs it. Nothing for the
 * interpreter (one memory), nor before sm_90 (no async proxy). */
#include "../ir/tir_op.h"
#include "op_table.h"

static void fence_proxy_async_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    (void)s;
    if (tlc_target_of(lc->arch)->tma) tlc_emit_ptx(lc, tlc_ptx_fence_proxy_async(), NULL, 0, NULL, 0);
}

static void fence_proxy_async_print(tir_printer *p, const tir_stmt *s) {
    (void)s;
    tir_printer_puts(p, "fence_proxy_async()");
}

const tlc_op_desc tlc_op_fence_proxy_async = {
    .kind = TS_FENCE_PROXY_ASYNC, .name = "fence_proxy_async", .each_thread = true,
    .print = fence_proxy_async_print, .verify = tlc_op_check_nothing, .interp = tlc_op_step_nothing,
    .lower = fence_proxy_async_lower, /* no operands, no layout */
};
