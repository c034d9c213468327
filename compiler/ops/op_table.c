/* The tile-op table: one row per op, each defined in the op's file. */
#include "op_table.h"

static const tlc_op_desc *const OPS[] = {&tlc_op_copy,       &tlc_op_fill,       &tlc_op_gemm,
                                         &tlc_op_reduce,     &tlc_op_atomic_add, &tlc_op_launch_dependents,
                                         &tlc_op_grid_dependency_wait, &tlc_op_prefetch, &tlc_op_thread_allreduce,
                                         &tlc_op_sync_threads, &tlc_op_sync_grid, &tlc_op_mbarrier,
                                         &tlc_op_wait_wgmma, &tlc_op_cp_async, &tlc_op_set_max_nreg,
                                         &tlc_op_fence_proxy_async};

void tlc_op_check_nothing(tir_verifier *v, const tir_stmt *s) {
    (void)v;
    (void)s;
}

void tlc_op_step_nothing(struct tlc_interp *it, const tir_stmt *s) {
    (void)it;
    (void)s;
}

const tlc_op_desc *tlc_op_for_kind(tir_stmt_kind kind) {
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (OPS[i]->kind == kind) return OPS[i];
    return NULL;
}

tir_stmt *tlc_new_tile_op(tlc_arena *a, tir_stmt_kind kind, tlc_loc loc) {
    tir_stmt *s = tir_new_stmt(a, kind, loc);
    s->op = tlc_op_for_kind(kind);
    return s;
}

const tlc_op_desc *tlc_op_of(const tir_stmt *s) {
    if (!s) return NULL;
    if (s->kind == TS_FOR) return s->u.for_.kind == TIR_FOR_PARALLEL ? &tlc_op_parallel : NULL;
    return s->op;
}

int64_t tlc_op_scratch_bytes(const tir_kernel *k, const tir_stmt *s) {
    const tlc_op_desc *d = tlc_op_of(s);
    return d && d->scratch_bytes ? d->scratch_bytes(k, s) : 0;
}
