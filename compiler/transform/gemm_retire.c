/* Planning: which wgmma gemms stay in flight past the statements after
 * them. wgmma is asynchronous: a gemm commits its group, and nothing needs
 * its wait_group until a statement reads or writes its accumulator or
 * writes one of its operands. A gemm followed in its sequence by
 * statements that do neither is left in flight (`deferred`), its wait just
 * before the first statement that does (`retire_before`), or at the
 * sequence's end; the statements between run under it, and a later
 * independent gemm's wgmmas queue behind it (TileLang's FlashAttention
 * backward: the dV gemm runs under dS's elementwise work, the dK gemm under
 * dS's store to shared memory).
 *
 * Left as written: gemms of a chain (plan.c: they already run into each
 * other), float16 accumulators (packed in pairs until their wait,
 * ops/gemm.c), a warp-specialized loop's body (warp_specialize.c schedules
 * its waits), and every gemm of a kernel that manages wgmma groups itself
 * (T.wgmma_gemm, T.wait_wgmma). A statement that holds gemms of its own (a
 * loop, an `if`) retires what is in flight before it.
 *
 * Lowering (transform/lower.c) emits each wait with the number of newer
 * groups that may stay in flight, and hands the gemm's shared-memory reads
 * back to the barrier logic there, since they last until the wait; shared
 * memory allocation (shared_alloc.c) keeps the operands live until then. */
#include <stdlib.h>
#include <string.h>
#include "../ir/tir_access.h"
#include "passes.h"

typedef struct retire_ctx {
    tlc_kernel_plan *p;
    const tir_kernel *k;
    bool *g_rd, *g_wr, *x_rd, *x_wr; /* per buffer id */
} retire_ctx;

static bool kernel_manages_groups(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    return s->kind == TS_WAIT_WGMMA || (s->kind == TS_GEMM && s->u.gemm.async);
}

static bool holds_gemm(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    return s->kind == TS_GEMM || s->kind == TS_WAIT_WGMMA;
}

/* x touches what g uses in flight (g's sets in c->g_rd / g_wr): reads or
 * writes what g writes, writes what g reads; or holds gemms of its own. */
static bool conflicts(retire_ctx *c, const tir_stmt *x) {
    if (x->kind != TS_GEMM && tir_stmt_any(x, holds_gemm, NULL)) return true;
    int n = c->k->nbuffers;
    memset(c->x_rd, 0, (size_t)n + 1);
    memset(c->x_wr, 0, (size_t)n + 1);
    tir_stmt_buffers_read_written(x, n, c->x_rd, c->x_wr);
    for (int b = 0; b < n; b++)
        if ((c->g_wr[b] && (c->x_rd[b] || c->x_wr[b])) || (c->g_rd[b] && c->x_wr[b])) return true;
    return false;
}

static bool eligible(const tlc_gemm_op_plan *g) {
    const tir_stmt *s = g->op;
    return g->inst.inst == TLC_INST_WGMMA && !g->chain_next && !g->chain_prev && !s->u.gemm.async &&
           s->u.gemm.c.buf->dtype != TIR_F16;
}

static void plan_seq(retire_ctx *c, const tir_stmt *seq) {
    int n = seq->u.seq.n, nb = c->k->nbuffers;
    for (int i = 0; i + 1 < n; i++) {
        const tir_stmt *s = seq->u.seq.stmts[i];
        tlc_gemm_op_plan *g = s->kind == TS_GEMM ? (tlc_gemm_op_plan *)tlc_plan_gemm_op(c->p, s) : NULL;
        if (!g || !eligible(g)) continue;
        memset(c->g_rd, 0, (size_t)nb + 1);
        memset(c->g_wr, 0, (size_t)nb + 1);
        tir_stmt_buffers_read_written(s, nb, c->g_rd, c->g_wr);
        int j = i + 1;
        while (j < n && j <= i + TLC_GEMM_MAX_AHEAD && !conflicts(c, seq->u.seq.stmts[j])) j++;
        if (j == i + 1) continue; /* its result is needed at once */
        g->deferred = true;
        g->retire_before = j < n ? seq->u.seq.stmts[j] : NULL;
    }
}

static void walk(retire_ctx *c, const tir_stmt *s) {
    if (!s || s == c->p->ws.loop) return; /* the warp-specialized loop schedules its own waits */
    switch (s->kind) {
    case TS_SEQ:
        plan_seq(c, s);
        for (int i = 0; i < s->u.seq.n; i++) walk(c, s->u.seq.stmts[i]);
        return;
    case TS_FOR: walk(c, s->u.for_.body); return;
    case TS_IF:
        walk(c, s->u.if_.then);
        walk(c, s->u.if_.els);
        return;
    default: return;
    }
}

void tlc_plan_gemm_retirement(tlc_kernel_plan *p, const tir_kernel *k) {
    if (!tlc_target_of(p->arch)->wgmma || tir_stmt_any(k->body, kernel_manages_groups, NULL)) return;
    size_t nb = (size_t)k->nbuffers + 1;
    retire_ctx c = {p, k, calloc(nb, 1), calloc(nb, 1), calloc(nb, 1), calloc(nb, 1)};
    if (c.g_rd && c.g_wr && c.x_rd && c.x_wr) walk(&c, k->body);
    free(c.g_rd);
    free(c.g_wr);
    free(c.x_rd);
    free(c.x_wr);
}
