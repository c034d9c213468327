/* Pipeline planning (ARCHITECTURE.md section 4). A Pipelined loop will
 * multiply the shared buffers it writes by num_stages and overlap the loads
 * of iteration i+s-1 with the compute of iteration i (cp.async on sm_80, TMA
 * on sm_90); that comes with the GEMM issue. Today a Pipelined loop is
 * lowered as a serial loop, so this pass only checks the loops it will plan
 * and leaves every shared layout single-staged. */
#include "lower.h"

static void visit(const tir_stmt *s, int *pipelined) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) visit(s->u.seq.stmts[i], pipelined);
        break;
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PIPELINED) (*pipelined)++;
        visit(s->u.for_.body, pipelined);
        break;
    case TS_IF:
        visit(s->u.if_.then, pipelined);
        visit(s->u.if_.els, pipelined);
        break;
    default: break;
    }
}

bool tlc_pipeline_plan(tir_module *m, tlc_arena *a, tlc_diag *diag) {
    (void)a;
    (void)diag;
    for (int i = 0; i < m->nkernels; i++) {
        int pipelined = 0;
        visit(m->kernels[i]->body, &pipelined);
        (void)pipelined; /* stages stay 1 until pipelining is implemented */
    }
    return true;
}
