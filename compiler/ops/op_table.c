/* The tile-op table (op_table.h). */
#include "op_table.h"

static const tlc_op_desc OPS[] = {
    {TS_COPY, "copy", tlc_copy_infer, tlc_copy_scratch_bytes, tlc_lower_copy},
    {TS_FILL, "fill", tlc_fill_infer, NULL, tlc_lower_fill},
    {TS_GEMM, "gemm", tlc_gemm_infer, NULL, tlc_lower_gemm},
    {TS_REDUCE, "reduce", tlc_reduce_infer, tlc_reduce_scratch_bytes, tlc_lower_reduce},
    {TS_ATOMIC_ADD, "atomic_add", tlc_atomic_add_infer, NULL, tlc_lower_atomic_add},
    {TS_FOR, "Parallel", tlc_parallel_infer, NULL, tlc_lower_parallel},
};

const tlc_op_desc *tlc_op_of(const tir_stmt *s) {
    if (!s || (s->kind == TS_FOR && s->u.for_.kind != TIR_FOR_PARALLEL)) return NULL;
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (OPS[i].kind == s->kind) return &OPS[i];
    return NULL;
}

int64_t tlc_op_scratch_bytes(const tir_kernel *k, const tir_stmt *s) {
    const tlc_op_desc *d = tlc_op_of(s);
    return d && d->scratch_bytes ? d->scratch_bytes(k, s) : 0;
}
