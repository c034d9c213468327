/* The tile ops: each op's entry points (one file per op in ops/) and the
 * table that lists them (op_table.c). A new tile op is its ops/ file, one
 * row in the table, its sema entry and its tests. */
#ifndef TLC_OPS_OP_TABLE_H
#define TLC_OPS_OP_TABLE_H
#include "../layout/gemm_layouts.h"
#include "../lowerkit/infer.h"
#include "../lowerkit/lower_ctx.h"

/* Per-op rules: `free_pass` false -> only propagate from known layouts
 * (common strength); true -> may also pick a default for an unknown buffer
 * (free strength). Each returns true if it proposed something new. */
bool tlc_copy_infer(tlc_infer *st, const tir_stmt *s, bool free_pass);
bool tlc_fill_infer(tlc_infer *st, const tir_stmt *s, bool free_pass);
bool tlc_parallel_infer(tlc_infer *st, const tir_stmt *s, bool free_pass);
bool tlc_reduce_infer(tlc_infer *st, const tir_stmt *s, bool free_pass);
bool tlc_atomic_add_infer(tlc_infer *st, const tir_stmt *s, bool free_pass);
bool tlc_gemm_infer(tlc_infer *st, const tir_stmt *s, bool free_pass);

/* After the fixpoint: every fragment access of a Parallel loop must be
 * served from the thread's own registers; reports a conflict otherwise. */
bool tlc_parallel_check(tlc_infer *st, const tir_stmt *s);
/* The iteration fragment of a Parallel loop: the fragment of a buffer it
 * indexes with exactly its loop variables, else a blocked fragment of its
 * own. Deterministic, so inference and lowering agree. NULL only if
 * `allow_default` is false and no buffer decides it. */
const tlc_fragment *tlc_parallel_loop_fragment(tlc_arena *a, const tir_kernel *k, const tir_stmt *s,
                                               bool allow_default);

/* Per-op lowering (compiler/ops/). */
void tlc_lower_copy(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_fill(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_parallel(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_reduce(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_atomic_add(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_gemm(tlc_lower_ctx *lc, const tir_stmt *s);
/* gemm.c: the instruction and warp split of a gemm statement (layout
 * inference and planning ask it); false with the reason in `why`. */
bool tlc_gemm_choose(tlc_arena *a, const tir_kernel *k, tlc_arch arch, const tir_stmt *s, tlc_gemm_plan *p,
                     char *why, int whylen);
/* gemm.c: wgmma.wait_group `pending`, then C's registers fenced so that no
 * access to them moves above the wait. */
void tlc_wgmma_wait(tlc_lower_ctx *lc, const tir_buffer *C, int pending);
/* Shared scratch bytes a tile op's lowering asks for (0: none), which
 * planning places by liveness: reduce.c, copy.c. */
int64_t tlc_reduce_scratch_bytes(const tir_kernel *k, const tir_stmt *s);
int64_t tlc_copy_scratch_bytes(const tir_kernel *k, const tir_stmt *s);

/* ---------------- the table ---------------- */
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
