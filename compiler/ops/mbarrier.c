/* A hand-pipelined kernel's mbarriers (docs/language.md 11.9): where the
 * thread ranges run at the same time, T.barrier_arrive, T.barrier_wait and
 * T.cp_async_barrier_noinc stay statements, each thread's own:
 *   arrive:   mbarrier.arrive (one arrival per thread that runs it), after
 *             fence.proxy.async where ordinary stores to shared memory a
 *             wgmma may read are not yet fenced;
 *   wait:     mbarrier.try_wait.parity until the phase of that parity has
 *             completed, then fence.proxy.async where cp.async copies
 *             arrive on the barrier (their bytes were written through the
 *             generic proxy, and a wgmma reads them through the async one);
 *   cp_async: cp.async.mbarrier.arrive.noinc, the arrival made when the
 *             thread's earlier cp.async copies have landed.
 * The kernel's mbarriers (tir_kernel.mbarriers) sit where planning put them
 * (tlc_kernel_plan.user_mbar), and tlc_mbarriers_init initializes them
 * with their arrival counts at the kernel's start. They order the ranges'
 * shared memory for the program; lowering places no barrier for that.
 * Elsewhere sema removes these statements (sema_manual_ws.c). The
 * interpreter runs the ranges as strands that switch at waits
 * (interp/interp_ranges.c). */
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

static const struct tir_mbarrier_group *group_of(const tir_kernel *k, const tir_stmt *s) {
    int g = s->u.mbarrier.barrier;
    return g >= 0 && g < k->nmbarrier_groups ? &k->mbarriers[g] : NULL;
}

/* The 32-bit shared address of mbarrier `index` of group g. */
static th_expr *mbarrier_addr(tlc_lower_ctx *lc, const struct tir_mbarrier_group *g, th_expr *index) {
    tlc_arena *a = lc->a;
    th_expr *i = th_bin(a, THB_ADD, tlc_i32(lc, g->first), index);
    th_expr *off = th_bin(a, THB_ADD, tlc_i32(lc, lc->plan->user_mbar), th_bin(a, THB_MUL, i, tlc_i32(lc, 8)));
    return th_convert(a, th_shared_ptr(a, off), th_scalar(TH_I32));
}

th_expr *tlc_mbarrier_addr(tlc_lower_ctx *lc, int group, const tir_expr *index) {
    return mbarrier_addr(lc, &lc->k->mbarriers[group], tlc_coerce(lc, tlc_lower_expr(lc, index), th_scalar(TH_I32)));
}

void tlc_mbarriers_init(tlc_lower_ctx *lc) {
    const tir_kernel *k = lc->k;
    if (!k->nmbarriers) return;
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    for (int g = 0; g < k->nmbarrier_groups; g++)
        for (int i = 0; i < k->mbarriers[g].n; i++) {
            th_expr *args[1] = {mbarrier_addr(lc, &k->mbarriers[g], tlc_i32(lc, i))};
            tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(lc->a, (int)k->mbarriers[g].counts[i]), args, 1, NULL, 0);
        }
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_init_fence(), NULL, 0, NULL, 0);
    th_stmt *init = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(lc->a, th_cmp(lc->a, THC_EQ, th_read(lc->a, lc->tid), tlc_i32(lc, 0)), init, NULL));
    tlc_emit(lc, tlc_barrier(lc));
}

/* A cp.async arrival on group *ctx (T.cp_async_barrier_noinc). */
static bool copies_arrive_on(const tir_stmt *s, const void *ctx) {
    return s->kind == TS_MBARRIER && s->u.mbarrier.cp_async && s->u.mbarrier.barrier == *(const int *)ctx;
}

static void mbarrier_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    const struct tir_mbarrier_group *g = group_of(lc->k, s);
    if (!g || lc->plan->user_mbar < 0) {
        tlc_error(lc->diag, s->loc, "internal error: a barrier statement without the kernel's mbarriers");
        return;
    }
    th_expr *addr = mbarrier_addr(lc, g, tlc_coerce(lc, tlc_lower_expr(lc, s->u.mbarrier.index), th_scalar(TH_I32)));
    if (s->u.mbarrier.cp_async) {
        th_expr *args[1] = {addr};
        tlc_emit_ptx(lc, tlc_ptx_cp_async_mbarrier_arrive_noinc(), args, 1, NULL, 0);
    } else if (!s->u.mbarrier.wait) {
        /* what this thread stored is another warpgroup's wgmma operand once
         * the phase completes: visible to the async proxy first */
        if (tlc_smem_any_unfenced(lc)) tlc_smem_fence(lc);
        th_expr *args[1] = {addr};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_arrive(), args, 1, NULL, 0);
    } else {
        th_expr *args[2] = {addr, tlc_coerce(lc, tlc_lower_expr(lc, s->u.mbarrier.parity), th_scalar(TH_I32))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_wait_parity(), args, 2, NULL, 0);
        if (tir_stmt_any(lc->k->body, copies_arrive_on, &s->u.mbarrier.barrier))
            tlc_emit_ptx(lc, tlc_ptx_fence_proxy_async(), NULL, 0, NULL, 0);
    }
}

static void mbarrier_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_expr(w, s->u.mbarrier.index, s);
    if (s->u.mbarrier.parity) tir_access_expr(w, s->u.mbarrier.parity, s);
}

static void mbarrier_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_printf(p, "%s(barrier %d[", s->u.mbarrier.cp_async ? "cp_async_barrier_noinc"
                                             : s->u.mbarrier.wait   ? "barrier_wait"
                                                                    : "barrier_arrive",
                       s->u.mbarrier.barrier);
    tir_printer_expr(p, s->u.mbarrier.index);
    tir_printer_puts(p, "]");
    if (s->u.mbarrier.wait) {
        tir_printer_puts(p, ", parity ");
        tir_printer_expr(p, s->u.mbarrier.parity);
    }
    tir_printer_puts(p, ")");
}

static void mbarrier_verify(tir_verifier *v, const tir_stmt *s) {
    tir_verifier_expr(v, s->u.mbarrier.index, s->loc);
    if (s->u.mbarrier.wait) {
        if (!s->u.mbarrier.parity) tir_verifier_fail(v, s->loc, "barrier wait without a parity");
        else tir_verifier_expr(v, s->u.mbarrier.parity, s->loc);
    }
}

/* The interpreter's step (interp_ranges.c keeps the barriers' state and
 * stops a range at a wait that cannot return yet, before it gets here). */
static void mbarrier_interp(tlc_interp *it, const tir_stmt *s) {
    if (s->u.mbarrier.wait) tlc_interp_mbarrier_check_wait(it, s);
    else tlc_interp_mbarrier_arrive(it, s);
}

const tlc_op_desc tlc_op_mbarrier = {
    .kind = TS_MBARRIER, .name = "mbarrier", .each_thread = true,
    .accesses = mbarrier_accesses, .print = mbarrier_print, .verify = mbarrier_verify,
    .interp = mbarrier_interp, .lower = mbarrier_lower, /* no layout, no scratch */
};
