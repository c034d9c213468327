/* The tile ops: one row each, listing what every pass asks of an op. A new
 * tile op is its ops/ file, one row here, its sema entry and its tests. */
#ifndef TLC_OPS_OP_TABLE_H
#define TLC_OPS_OP_TABLE_H
#include "../transform/lower.h"

typedef struct tlc_op_desc {
    tir_stmt_kind kind; /* TS_FOR: a Parallel loop */
    const char *name;
    /* Layout rule: proposals from known layouts (free_pass false) or
     * defaults for unknown buffers too (true); true if it proposed anything. */
    bool (*infer)(tlc_infer *st, const tir_stmt *s, bool free_pass);
    /* Shared scratch bytes its lowering asks for, placed by planning (NULL:
     * never any). */
    int64_t (*scratch_bytes)(const tir_kernel *k, const tir_stmt *s);
    /* Tile IR -> Thread IR. */
    void (*lower)(tlc_lower_ctx *lc, const tir_stmt *s);
} tlc_op_desc;

/* The row of statement s, NULL when s is not a tile op (nor a Parallel loop). */
const tlc_op_desc *tlc_op_of(const tir_stmt *s);
/* Its scratch bytes (0: none). */
int64_t tlc_op_scratch_bytes(const tir_kernel *k, const tir_stmt *s);
#endif
