/* Lookups in the kernel plan (plan.h). */
#include "plan.h"

const tlc_pipe_plan *tlc_plan_pipe(const tlc_kernel_plan *p, const tir_stmt *loop) {
    for (int i = 0; p && i < p->npipes; i++)
        if (p->pipes[i].loop == loop) return &p->pipes[i];
    return NULL;
}

int tlc_pipe_load_index(const tlc_pipe_plan *pp, const tir_stmt *s) {
    for (int c = 0; pp && c < pp->ncopies; c++)
        if (pp->copies[c] == s) return c;
    return -1;
}

bool tlc_pipe_is_copy(const tlc_pipe_plan *pp, const tir_stmt *s) { return tlc_pipe_load_index(pp, s) >= 0; }

bool tlc_pipe_has_chunks(const tlc_pipe_plan *pp) { return !pp->tma || pp->ngathers > 0; }

const tir_buffer *tlc_pipe_load_dst(const tlc_pipe_plan *pp, int i) {
    if (pp->im2col[i]) return pp->im2col[i]->col;
    return pp->gathers[i].loop ? pp->gathers[i].dst : pp->copies[i]->u.copy.dst.buf;
}

bool tlc_ws_is_preload(const tlc_ws_decision *d, const tir_stmt *s) {
    for (int i = 0; d && i < d->npreloads; i++)
        if (d->preloads[i] == s) return true;
    return false;
}

const tlc_gemm_op_plan *tlc_plan_gemm_op(const tlc_kernel_plan *p, const tir_stmt *op) {
    for (int i = 0; p && i < p->ngemms; i++)
        if (p->gemms[i].op == op) return &p->gemms[i];
    return NULL;
}

const tlc_gemm_plan *tlc_plan_gemm(const tlc_kernel_plan *p, const tir_stmt *op) {
    const tlc_gemm_op_plan *g = tlc_plan_gemm_op(p, op);
    return g ? &g->inst : NULL;
}

static const tlc_smem_scratch *scratch_of(const tlc_smem_scratch *v, int n, const tir_stmt *op) {
    for (int i = 0; i < n; i++)
        if (v[i].op == op) return &v[i];
    return NULL;
}

const tlc_smem_scratch *tlc_plan_scratch(const tlc_kernel_plan *p, const tir_stmt *op) {
    return p ? scratch_of(p->smem.scratch, p->smem.nscratch, op) : NULL;
}

const tlc_smem_scratch *tlc_plan_fresh_scratch(const tlc_kernel_plan *p, const tir_stmt *op) {
    return p ? scratch_of(p->fresh, p->nfresh, op) : NULL;
}
