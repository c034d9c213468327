/* Planning: everything lowering needs decided, decided once per kernel and
 * recorded in its plan (lowerkit/plan.h), after layout inference:
 *   1. Pipelined loops: stages, the copies that get a buffer per stage, the
 *      copy engine (pipeline_plan.c);
 *   2. gemms: instruction and warp split (ops/gemm.c's rule, the one layout
 *      inference used for the accumulators), and which wgmma gemms chain;
 *   3. warp specialization: which loop (warp_specialize.c); then which
 *      wgmma gemms outside it stay in flight, and until where
 *      (gemm_retire.c);
 *   4. shared memory: buffers and tile-op scratch by liveness
 *      (shared_alloc.c), then the mbarriers: the warp-specialized loop's
 *      (with the occupancy and register split, which depend on the bytes
 *      used) and every other TMA loop's, in program order, then the
 *      kernel's own (a hand-pipelined kernel's T.alloc_barrier); then the ops'
 *      fresh scratch (a staged epilogue's), after everything, in program
 *      order;
 *   5. blocks per SM (minnctapersm). */
#include <stdio.h>
#include "../ops/op_table.h"
#include "../support/int_math.h"
#include "passes.h"

static bool plan_gemms(tlc_kernel_plan *p, const tir_kernel *k, tlc_arena *a, tlc_diag *diag) {
    tlc_ptrvec ops = {0};
    tir_collect_tile_ops(k->body, &ops);
    p->gemms = TLC_NEW_ARRAY(a, tlc_gemm_op_plan, (size_t)ops.len + 1);
    bool ok = true;
    for (int i = 0; i < ops.len; i++) {
        const tir_stmt *s = ops.items[i];
        if (s->kind != TS_GEMM) continue;
        char why[512];
        tlc_gemm_op_plan *g = &p->gemms[p->ngemms];
        if (!tlc_gemm_choose(a, k, p->arch, s, &g->inst, why, sizeof why)) {
            tlc_error(diag, s->loc, "gemm cannot be mapped to the tensor cores: %s", why);
            ok = false;
            continue;
        }
        if (s->u.gemm.async && g->inst.inst != TLC_INST_WGMMA) {
            tlc_error(diag, s->loc, "T.wgmma_gemm is a wgmma left in flight, but this gemm is not one on %s: wgmma "
                      "takes sm_90a and operands it can read (write T.gemm elsewhere)", tlc_arch_name(p->arch));
            ok = false;
            continue;
        }
        g->op = s;
        p->ngemms++;
    }
    tlc_ptrvec_free(&ops);
    return ok;
}

/* Chains (plan.h): b directly after a in a sequence, both wgmma into the
 * same accumulator with the same instruction and warp split, b adding onto
 * it (clear_accum would write the registers while a's wgmmas run). */
static void plan_gemm_chains(tlc_kernel_plan *p, const tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) {
            plan_gemm_chains(p, s->u.seq.stmts[i]);
            if (i + 1 == s->u.seq.n) break;
            const tir_stmt *x = s->u.seq.stmts[i], *y = s->u.seq.stmts[i + 1];
            tlc_gemm_op_plan *a = x->kind == TS_GEMM ? (tlc_gemm_op_plan *)tlc_plan_gemm_op(p, x) : NULL;
            tlc_gemm_op_plan *b = y->kind == TS_GEMM ? (tlc_gemm_op_plan *)tlc_plan_gemm_op(p, y) : NULL;
            if (!a || !b || a->inst.inst != TLC_INST_WGMMA || b->inst.inst != TLC_INST_WGMMA) continue;
            if (x->u.gemm.c.buf != y->u.gemm.c.buf || y->u.gemm.clear_accum || y->u.gemm.clear_if) continue;
            if (a->inst.units_m != b->inst.units_m || a->inst.units_n != b->inst.units_n ||
                a->inst.tile_m != b->inst.tile_m || a->inst.tile_n != b->inst.tile_n)
                continue;
            a->chain_next = b->chain_prev = true;
        }
        return;
    case TS_FOR: plan_gemm_chains(p, s->u.for_.body); return;
    case TS_IF:
        plan_gemm_chains(p, s->u.if_.then);
        plan_gemm_chains(p, s->u.if_.els);
        return;
    default: return;
    }
}

/* Blocks per SM the kernel is compiled for: the warp-specialized split's
 * (its setmaxnreg counts are for that many: more blocks would leave the
 * consumers' setmaxnreg.inc waiting forever), 1 for a program's own
 * set_max_nreg, or 2 for mma.sync gemms that
 * leave room: two blocks hide each other's barriers, cp.async waits and
 * epilogues, and minnctapersm 2 holds ptxas to 65536 / (2 x threads)
 * registers, enough (>= 128) when the accumulators take at most 64. */
static int min_blocks_per_sm(const tlc_kernel_plan *p, const tir_kernel *k, int unspecialized_blocks) {
    if (p->ws.loop) return p->ws.blocks_per_sm;
    if (p->ws_refused) return unspecialized_blocks; /* the count that refused it */
    if (tir_stmt_has_kind(k->body, TS_SET_MAX_NREG)) return 1; /* the program's counts are for one block */
    int n = 0;
    for (int i = 0; i < p->ngemms; i++) {
        const tir_buffer *C = p->gemms[i].op->u.gemm.c.buf;
        if (p->gemms[i].inst.inst == TLC_INST_MMA_SYNC && k->threads * 2 <= 512 && C->fragment &&
            C->fragment->slots <= 64 && 2 * (p->smem_bytes + 1024) <= tlc_target_of(p->arch)->max_shared_per_block && n < 2)
            n = 2;
    }
    return n;
}

/* The ops' fresh scratch, in program order after everything else; an op
 * whose scratch would not fit the target gets none (its lowering then does
 * without). */
static void plan_fresh_scratch(tlc_kernel_plan *p, const tir_kernel *k, tlc_arena *a, int64_t *top) {
    tlc_ptrvec ops = {0};
    tir_collect_tile_ops(k->body, &ops);
    p->fresh = TLC_NEW_ARRAY(a, tlc_smem_scratch, (size_t)ops.len + 1);
    for (int i = 0; i < ops.len; i++) {
        const tir_stmt *s = ops.items[i];
        const tlc_op_desc *op = tlc_op_of(s);
        int64_t bytes = op && op->fresh_scratch_bytes ? op->fresh_scratch_bytes(k, s) : 0;
        if (bytes <= 0) continue;
        int64_t off = tlc_align_up(*top, 128);
        if (off + bytes > tlc_target_of(p->arch)->max_shared_per_block) continue;
        p->fresh[p->nfresh++] = (tlc_smem_scratch){s, off, bytes};
        *top = off + bytes;
    }
    tlc_ptrvec_free(&ops);
}

/* One planning of the kernel; ws_one_tile: no persistent tiles;
 * ws_no_preload: no preloads. */
static tlc_kernel_plan *plan_once(tir_kernel *k, tlc_arch arch, tlc_arena *a, tlc_diag *diag, bool ws_one_tile,
                                  bool ws_no_preload, const char *ws_refused, int unspecialized_blocks) {
    tlc_kernel_plan *p = TLC_NEW(a, tlc_kernel_plan);
    p->arch = arch;
    p->ws_one_tile = ws_one_tile;
    p->ws_no_preload = ws_no_preload;
    p->ws_refused = ws_refused;
    tlc_plan_pipelines(p, k, a);
    if (!plan_gemms(p, k, a, diag)) return NULL;
    plan_gemm_chains(p, k->body);
    tlc_plan_pipeline_overlap(p);
    if (!ws_refused) tlc_plan_warp_specialization(p, k, a);
    tlc_plan_gemm_retirement(p, k);
    tlc_plan_shared_memory(p, k, a);
    int64_t top = p->smem.top; /* the end of every buffer and planned scratch */
    tlc_plan_warp_specialization_shared(p, k, &top, a);
    for (int i = 0; i < p->npipes; i++) {
        tlc_pipe_plan *pp = &p->pipes[i];
        if (!pp->tma || pp->loop == p->ws.loop) continue;
        pp->mbar = tlc_align_up(top, 128);
        top = pp->mbar + 8 * (int64_t)pp->stages;
    }
    p->user_mbar = -1;
    if (k->nmbarriers) {
        p->user_mbar = tlc_align_up(top, 128);
        top = p->user_mbar + 8 * (int64_t)k->nmbarriers;
    }
    plan_fresh_scratch(p, k, a, &top);
    p->smem_bytes = top;
    p->min_blocks_per_sm = min_blocks_per_sm(p, k, unspecialized_blocks);
    return p;
}

/* The kernel's planned shared memory against the target's limit; over it,
 * an error at the kernel naming its three biggest shared buffers. */
static bool check_shared_limit(const tlc_kernel_plan *p, const tir_kernel *k, tlc_diag *diag) {
    int64_t max = tlc_target_of(p->arch)->max_shared_per_block;
    if (p->smem_bytes <= max) return true;
    tlc_error(diag, k->body->loc, "kernel '%s' needs %lld bytes of shared memory per block, over the %s limit of %lld bytes",
              k->name, (long long)p->smem_bytes, tlc_arch_name(p->arch), (long long)max);
    const tir_buffer *shown[3] = {NULL, NULL, NULL};
    for (int r = 0; r < 3; r++) {
        const tir_buffer *best = NULL;
        for (int i = 0; i < k->nbuffers; i++) {
            const tir_buffer *b = k->buffers[i];
            if (b->scope != TIR_SCOPE_SHARED || !b->layout || b == shown[0] || b == shown[1]) continue;
            if (!best || tlc_layout_total_bytes(b->layout) > tlc_layout_total_bytes(best->layout)) best = b;
        }
        if (!best) break;
        shown[r] = best;
        char stages[32] = "";
        if (best->layout->stages > 1) snprintf(stages, sizeof stages, " (%d pipeline stages)", best->layout->stages);
        tlc_note(diag, best->loc, "'%s' (%s) uses %lld bytes%s", best->name, tir_dtype_name(best->dtype),
                 (long long)tlc_layout_total_bytes(best->layout), stages);
    }
    return false;
}

/* A Pipelined loop of two stages or more whose body stages no copy runs
 * as a serial loop: said, since the source asked for an overlap. */
static void warn_unstaged(const tir_stmt *s, const tlc_kernel_plan *p, tlc_diag *diag) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) warn_unstaged(s->u.seq.stmts[i], p, diag);
        return;
    case TS_IF:
        warn_unstaged(s->u.if_.then, p, diag);
        warn_unstaged(s->u.if_.els, p, diag);
        return;
    case TS_FOR: {
        bool staged = false;
        for (int i = 0; i < p->npipes; i++) staged |= p->pipes[i].loop == s;
        if (s->u.for_.kind == TIR_FOR_PIPELINED && s->u.for_.num_stages >= 2 && !staged)
            tlc_warning(diag, s->loc, "this Pipelined loop of %d stages runs one iteration after the other: no copy "
                        "from global memory (nor Parallel loop gathering rows of a tensor) at its body's top level "
                        "fills a whole 2-d shared buffer that nothing else in the body writes (docs/language.md, "
                        "section 8.2)", s->u.for_.num_stages);
        warn_unstaged(s->u.for_.body, p, diag);
        return;
    }
    default: return;
    }
}

/* Persistent warp-specialized tiles keep every stage buffer live across
 * tiles, and preloaded buffers keep bytes of their own; when that leaves
 * the block over the shared-memory limit, the kernel is planned again
 * without preloads, then with one tile per block (buffers used after the
 * loop, an epilogue's staging, reuse the stages' bytes), with and without
 * preloads: the first plan that fits, in that order, else the smallest. */
static bool plan_kernel(tir_kernel *k, tlc_arch arch, tlc_arena *a, tlc_diag *diag) {
    int64_t max = tlc_target_of(arch)->max_shared_per_block;
    tlc_kernel_plan *p = plan_once(k, arch, a, diag, false, false, NULL, 0), *last = p;
    if (!p) return false;
    bool persistent = p->ws.loop && p->ws.persistent, preloads = p->ws.npreloads > 0;
    static const struct { bool one_tile, no_preload; } tries[] = {{false, true}, {true, false}, {true, true}};
    for (int t = 0; t < 3 && p->smem_bytes > max; t++) {
        /* a try that differs from an earlier one only where this kernel has
         * nothing to change (no persistence to give up, no preloads to drop)
         * would plan the same again */
        if ((tries[t].one_tile && !persistent) || (!preloads && !(tries[t].one_tile && tries[t].no_preload))) continue;
        tlc_kernel_plan *q = last = plan_once(k, arch, a, diag, tries[t].one_tile, tries[t].no_preload, NULL, 0);
        if (!q) return false;
        if (q->smem_bytes < p->smem_bytes) p = q;
    }
    /* the buffers' offsets (in their layouts) are the last planning's */
    if (p != last && !(p = plan_once(k, arch, a, diag, p->ws_one_tile, p->ws_no_preload, NULL, 0))) return false;
    int blocks = 0;
    const char *refused = tlc_ws_occupancy_refusal(p, k, &blocks, a);
    if (refused && !(p = plan_once(k, arch, a, diag, false, false, refused, blocks))) return false;
    k->plan = p;
    warn_unstaged(k->body, p, diag);
    return check_shared_limit(p, k, diag);
}

bool tlc_plan_module(tir_module *m, tlc_arena *a, tlc_diag *diag) {
    bool ok = true;
    for (int i = 0; i < m->nkernels; i++)
        if (!plan_kernel(m->kernels[i], m->arch, a, diag)) ok = false;
    return ok;
}
