/* Passes from Tile IR (with layouts) to Thread IR, and what the per-op
 * files in compiler/ops/ share with them. Internal to libtlc. */
#ifndef TLC_TRANSFORM_LOWER_H
#define TLC_TRANSFORM_LOWER_H
#include "../ir/thread_ir.h"
#include "../ir/tir.h"
#include "../layout/fragment.h"
#include "../lowerkit/plan.h"

/* ---------------- passes ---------------- */
/* Layout inference (layout_infer.c): sets buffer->fragment for every
 * fragment buffer and buffer->layout for every shared buffer. Errors (layout
 * conflicts) go to diag at the op's source line. */
bool tlc_layout_infer(tir_module *m, tlc_arena *a, tlc_diag *diag);
/* Planning (plan.c): decides, once per kernel, what tlc_kernel_plan
 * (lowerkit/plan.h) records, and attaches it to the kernel (k->plan). Its
 * steps, in order: */
bool tlc_plan_module(tir_module *m, tlc_arena *a, tlc_diag *diag);
/* pipeline_plan.c: the plan of every Pipelined loop; sets the stage count
 * of the shared layouts its copies fill. */
void tlc_plan_pipelines(tlc_kernel_plan *p, const tir_kernel *k, tlc_arena *a);
/* warp_specialize.c: which loop (if any) is warp-specialized; then, once
 * shared memory is placed (`top`: its end so far), occupancy, the register
 * split and the mbarriers (placed at *top, which grows past them). */
void tlc_plan_warp_specialization(tlc_kernel_plan *p, const tir_kernel *k);
void tlc_plan_warp_specialization_shared(tlc_kernel_plan *p, const tir_kernel *k, int64_t *top);
/* shared_alloc.c: offsets of the shared buffers (in their layouts) and of
 * the tile ops' scratch, by liveness; p->smem. */
void tlc_plan_shared_memory(tlc_kernel_plan *p, tir_kernel *k, tlc_arena *a);
/* --emit=plan (plan_print.c). */
void tlc_plan_print_module(tlc_strbuf *sb, const tir_module *m);
/* --emit=layout (layout_print.c). */
void tlc_layout_print_module(tlc_strbuf *sb, const tir_module *m);
/* Lowering (lower.c): Tile IR with layouts -> Thread IR. */
th_module *tlc_lower_module(const tir_module *m, tlc_arena *a, tlc_diag *diag);

/* ---------------- layout inference state (ops' layout rules) ---------------- */
typedef struct tlc_infer {
    tlc_arena *a;
    tlc_diag *diag;
    const tir_kernel *k;
    tlc_strength *strength;   /* per buffer id */
    const tir_stmt **setter;  /* per buffer id: the op whose proposal was taken */
    bool changed;
    bool failed;
    tlc_arch arch; /* added with the GEMM issue: gemm's rule depends on the target */
} tlc_infer;

/* Offers fragment `f` for `b` with strength s from op `by`. Unknown -> taken;
 * equal -> kept; a stronger proposal replaces a weaker one. Returns false on
 * a conflict (a different layout of the same or higher strength), leaving
 * the buffer as it was: the caller reports it or plans a conversion. */
bool tlc_infer_propose(tlc_infer *st, tir_buffer *b, tlc_fragment *f, tlc_strength s, const tir_stmt *by);
/* Reports a conflict on `b` at `at`, with a note where its layout came from. */
void tlc_infer_conflict(tlc_infer *st, const tir_stmt *at, const tir_buffer *b, const tlc_fragment *wanted,
                        const char *why);
/* Default vector length (elements in 16 bytes of dtype, at most 8). */
int tlc_vec_elems(tir_dtype t);

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

/* ---------------- lowering context ---------------- */
typedef struct tlc_par_ctx tlc_par_ctx;

typedef struct tlc_lower_ctx {
    tlc_arena *a;
    tlc_diag *diag;
    const tir_kernel *k;
    th_kernel *tk;
    tlc_arch arch;
    th_var *tid;          /* threadIdx.x */
    th_expr **var_expr;   /* tir_var id -> value (block idx, sym dims, scalars, Parallel vars) */
    th_var **var_slot;    /* tir_var id -> mutable slot (lets, serial loop vars) */
    int64_t *var_lo, *var_hi; bool *var_known; /* constant ranges of loop vars */
    th_var **regs;        /* buffer id -> register array (fragment / local / var) */
    int *tensor_param;    /* buffer id -> th param index (global tensors), else -1 */
    int *sym_param;       /* sym index -> th param index */
    tlc_ptrvec *out;      /* statements being emitted */
    const tlc_par_ctx *par; /* inside a Parallel loop body */
    int ntemp;
    int64_t smem_top;     /* dynamic shared bytes allocated so far (buffers + scratch) */
    bool in_parallel;
    /* Added with the GEMM issue: */
    th_expr **stage_off;  /* buffer id -> byte offset of the current pipeline stage (NULL: none) */
    bool *async_written;  /* buffer id -> filled only by TMA (async proxy) in the current Pipelined loop */
    struct tlc_tmap_use *tmaps; int ntmaps; /* TMA descriptors (kernel params after the scalars) */
    /* Added with warp specialization (warp_specialize.c): */
    struct tlc_ws_plan *ws; /* non-NULL: the kernel is split into producer / consumer warpgroups */
    int wgmma_inflight;     /* wgmma groups a gemm may leave in flight (wait_group N at its end) */
    /* Added for dynamic-shape epilogues: per sym index, a power of two the
     * sym's value is known to be a multiple of (1: nothing known). Facts
     * come from TMA maps (16-byte row strides), are written to the metadata
     * (`divisible` lines) and checked by the runtime at every launch. */
    int64_t *sym_multiple;
    const tlc_kernel_plan *plan; /* the kernel's plan (plan.c) */
    const tlc_smem_plan *smem;   /* &plan->smem */
    int scratch_hit;             /* the planned scratch the op being lowered took (-1: none) */
} tlc_lower_ctx;

/* Where a Parallel loop body is being emitted: one slot of its fragment. */
struct tlc_par_ctx {
    const tir_stmt *loop;
    const tlc_fragment *frag; /* iteration fragment */
    int64_t slot;
};

void tlc_emit(tlc_lower_ctx *lc, th_stmt *s);
/* Emits into a fresh list; tlc_lower_end returns it as a SEQ. */
tlc_ptrvec *tlc_lower_begin(tlc_lower_ctx *lc);
th_stmt *tlc_lower_end(tlc_lower_ctx *lc, tlc_ptrvec *saved);
th_var *tlc_temp(tlc_lower_ctx *lc, const char *prefix, th_type t, int array_len);
/* A let: evaluates e once into a fresh scalar slot and returns a read of it. */
th_expr *tlc_let(tlc_lower_ctx *lc, const char *prefix, th_expr *e);

/* Types. Registers: bool -> i1; memory: th_from_dtype. */
th_type tlc_reg_type(tir_dtype t);
th_type tlc_mem_type(tir_dtype t);
th_expr *tlc_coerce(tlc_lower_ctx *lc, th_expr *e, th_type t); /* numeric conversion (bool aware) */
th_expr *tlc_i32(tlc_lower_ctx *lc, int64_t v);
th_expr *tlc_zero(tlc_lower_ctx *lc, th_type t); /* scalar or vector zero */
th_expr *tlc_i64(tlc_lower_ctx *lc, int64_t v);
th_expr *tlc_and(tlc_lower_ctx *lc, th_expr *x, th_expr *y); /* NULL = true */

/* Expressions and statements (lower_expr.c / lower.c). */
th_expr *tlc_lower_expr(tlc_lower_ctx *lc, const tir_expr *e);
void tlc_lower_stmt(tlc_lower_ctx *lc, const tir_stmt *s);

/* Memory (lower_access.c). idx: one i32 expression per dim. */
th_expr *tlc_dim_value(tlc_lower_ctx *lc, const tir_buffer *b, int d); /* i64 */
th_expr *tlc_global_elem_ptr(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx);
th_expr *tlc_shared_elem_ptr(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx);
/* In-bounds condition for a global access (NULL when provably in bounds);
 * `max_idx[d]` >= 0 is a proven upper bound of idx[d] (or -1 if unknown). */
th_expr *tlc_global_in_bounds(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx, const int64_t *max_idx);
/* Constant range of a Tile IR index expression; false if unknown. */
bool tlc_expr_range(const tlc_lower_ctx *lc, const tir_expr *e, int64_t *lo, int64_t *hi);
/* Largest power of two (<= 1024) that provably divides e (0 counts as any). */
int64_t tlc_expr_multiple(const tir_expr *e);
/* A power of two a tensor dim is known to be a multiple of: the constant's
 * factor, a sym's recorded fact (lc->sym_multiple), else 1. */
int64_t tlc_dim_multiple(const tlc_lower_ctx *lc, const tir_expr *dim);
/* Element load / store of any scope at Tile IR indices (fragments: only in
 * a Parallel loop over them). */
th_expr *tlc_lower_load(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc);
void tlc_lower_store(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, th_expr *value, tlc_loc loc);
/* Slot of fragment buffer b holding the element that iteration `slot` of
 * the Parallel loop's fragment reaches through `idx` (loop variables), the
 * same for every thread; -1 (with an error) if threads would need each
 * other's registers. */
int64_t tlc_parallel_access_slot(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc);

/* Thread-dependent part of a fragment's logical index (i32 per dim), the
 * replica index and the hole condition (NULL if never a hole) for a slot. */
void tlc_frag_thread_index(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr **out);
th_expr *tlc_frag_replica0(tlc_lower_ctx *lc, const tlc_fragment *f); /* "is replica 0"; NULL: no replicas */
th_expr *tlc_frag_valid(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr *const *thread_idx, int64_t slot);

/* Shared scratch: byte offset of fresh bytes after everything else. */
int64_t tlc_scratch(tlc_lower_ctx *lc, int64_t bytes);
/* The scratch planned for tile op `op` when it fits (the op must start with
 * a block barrier before writing it; sets lc->scratch_hit), else fresh
 * bytes. */
int64_t tlc_op_scratch(tlc_lower_ctx *lc, const tir_stmt *op, int64_t bytes);

/* Per-op lowering (compiler/ops/). */
void tlc_lower_copy(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_fill(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_parallel(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_reduce(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_atomic_add(tlc_lower_ctx *lc, const tir_stmt *s);
void tlc_lower_gemm(tlc_lower_ctx *lc, const tir_stmt *s);

/* ---------------- Pipelined loops (lower_pipeline.c) ---------------- */
/* A TMA descriptor one pipelined copy uses: built by the runtime from the
 * tensor argument (metadata `tmap` line), passed as a 128-byte .param. */
typedef struct tlc_tmap_use {
    const tir_stmt *copy;
    const tir_buffer *tensor;
    int param;                          /* th param index */
    int rank;
    int64_t box[TLC_FRAG_MAX_RANK * 2]; /* outermost first */
    int row_dim;                        /* the tensor dim that fills the tile's rows */
    int64_t inner;                      /* box of the last dim (a panel, or the whole row) */
    int npanels;
    tlc_swizzle swizzle;
} tlc_tmap_use;
/* Before the kernel body is lowered: one tmap per TMA copy of every
 * pipelined loop, appended to the kernel parameters. */
void tlc_pipe_collect_tmaps(tlc_lower_ctx *lc, int *nparams);
/* After tlc_pipe_collect_tmaps: a TMA map needs 16-byte strides, so a
 * symbolic last dim of a mapped tensor is a multiple of 16 bytes' worth of
 * elements (lc->sym_multiple; the runtime refuses launches otherwise). */
void tlc_pipe_sym_facts(tlc_lower_ctx *lc);
void tlc_pipe_meta_lines(tlc_lower_ctx *lc, tlc_strbuf *sb);
/* Pieces of a pipelined loop (lower.c strings them together):
 * begin (barrier init), issue (the loads of iteration `it` into stage
 * `stage`, guarded by it < n), wait (stage data ready), end (drain). */
typedef struct tlc_pipe_state {
    const tlc_pipe_plan *plan;
    const tir_stmt *loop;
    int64_t mbar;      /* TMA: byte offset of the stages' mbarriers */
    th_expr *n;        /* iteration count */
    bool in_issuer;    /* already in the one thread that issues TMA (warp specialization) */
    int align_mode;    /* cp.async copies over a symbolic row length: TLC_PIPE_ALIGN_* */
} tlc_pipe_state;
/* INTERIOR: every chunk of every iteration lies inside its tensor and rows
 * are 16-byte aligned (tlc_pipe_interior_cond held), so no masks at all. */
enum { TLC_PIPE_ALIGN_CHECK, TLC_PIPE_ALIGN_ASSUMED, TLC_PIPE_ALIGN_FALLBACK, TLC_PIPE_INTERIOR };
/* All cp.async copies of the plan may use 16-byte chunks (NULL: nothing to
 * test at run time). */
th_expr *tlc_pipe_aligned_cond(tlc_lower_ctx *lc, const tlc_pipe_plan *pp);
/* cp.async plans whose copy starts are affine in the loop variable: the
 * run-time condition that every iteration's tiles lie wholly inside their
 * tensors (checked at the first and the last iteration); NULL when the
 * starts are not of that form. */
th_expr *tlc_pipe_interior_cond(tlc_lower_ctx *lc, const tlc_pipe_plan *pp, const tir_stmt *loop);
void tlc_pipe_begin(tlc_lower_ctx *lc, tlc_pipe_state *ps);
void tlc_pipe_issue(tlc_lower_ctx *lc, tlc_pipe_state *ps, th_expr *it, th_expr *stage);
void tlc_pipe_wait(tlc_lower_ctx *lc, tlc_pipe_state *ps, th_expr *it, th_expr *stage);
void tlc_pipe_end(tlc_lower_ctx *lc, tlc_pipe_state *ps);
/* stage_off / async_written for the plan's buffers at `stage` (NULL: clear). */
void tlc_pipe_set_stage(tlc_lower_ctx *lc, const tlc_pipe_plan *pp, th_expr *stage);

/* ---------------- warp specialization (warp_specialize.c) ---------------- */
/* On sm_90a, a kernel whose top level holds a Pipelined loop of TMA loads
 * feeding only wgmma gemms gets one producer warpgroup more than the
 * user's threads (which become the consumers). tlc_ws_begin decides (sets
 * lc->ws, the launch threads, minnctapersm); the body is then lowered into
 * a list and tlc_ws_finish wraps it: mbarrier init, then
 * if (tid >= threads) producer else consumers. */
typedef struct tlc_ws_plan tlc_ws_plan;
bool tlc_ws_begin(tlc_lower_ctx *lc);
bool tlc_ws_owns_loop(const tlc_lower_ctx *lc, const tir_stmt *loop);
void tlc_ws_lower_consumer_loop(tlc_lower_ctx *lc, const tir_stmt *loop);
void tlc_ws_finish(tlc_lower_ctx *lc, th_stmt *consumer_body);
/* Warp-specialized kernels are persistent: the runtime launches at most
 * (SMs x this) blocks (metadata `persistent` line) and each walks the
 * logical grid's tiles; 0 when the kernel is not. */
int tlc_ws_persistent_blocks(const tlc_lower_ctx *lc);
/* lower.c: block indices of linear block `lin` of a gx x gy grid with the
 * kernel's use_swizzle remap (out[0] = x, out[1] = y). */
void tlc_block_swizzle(tlc_lower_ctx *lc, th_expr *lin, th_expr *gx, th_expr *gy, th_expr **out);
/* gemm.c: the instruction and warp split of a gemm statement (layout
 * inference and planning ask it); false with the reason in `why`. */
bool tlc_gemm_choose(tlc_arena *a, const tir_kernel *k, tlc_arch arch, const tir_stmt *s, tlc_gemm_plan *p,
                     char *why, int whylen);
/* Shared scratch bytes a tile op's lowering asks for (0: none), which
 * planning places by liveness: reduce.c, copy.c. */
int64_t tlc_reduce_scratch_bytes(const tir_kernel *k, const tir_stmt *s);
int64_t tlc_copy_scratch_bytes(const tir_kernel *k, const tir_stmt *s);
/* gemm.c: wgmma.wait_group `pending`, then C's registers fenced so that no
 * access to them moves above the wait. */
void tlc_wgmma_wait(tlc_lower_ctx *lc, const tir_buffer *C, int pending);
#endif
