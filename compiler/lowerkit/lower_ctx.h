/* What the tile ops use to emit Thread IR: the lowering context of one
 * kernel, emission helpers, expressions, memory accesses, fragments and
 * shared scratch (lower_access.c, lower_expr.c, parallel_access.c). The
 * pass that drives lowering is transform/lower.c. */
#ifndef TLC_LOWERKIT_LOWER_CTX_H
#define TLC_LOWERKIT_LOWER_CTX_H
#include "../ir/thread_ir.h"
#include "../ir/tir.h"
#include "../layout/fragment.h"
#include "../target/ptx.h"
#include "plan.h"

/* A TMA descriptor one pipelined copy uses: built by the runtime from the
 * tensor argument (metadata `tmap` line), passed as a 128-byte .param. */
typedef struct tlc_tmap_use {
    const tir_stmt *copy;       /* the copy, or T.im2col's Parallel loop */
    const tir_im2col *im2col;   /* an im2col map (cuTensorMapEncodeIm2col): box pixels x inner channels */
    const tir_buffer *tensor;
    int param;                          /* th param index */
    int rank;
    int64_t box[TLC_FRAG_MAX_RANK * 2]; /* outermost first */
    int row_dim;                        /* the tensor dim that fills the tile's rows */
    int64_t inner;                      /* box of the last dim (a panel, or the whole row) */
    int npanels;
    tlc_swizzle swizzle;
} tlc_tmap_use;
typedef struct tlc_par_ctx tlc_par_ctx;

typedef struct tlc_lower_ctx tlc_lower_ctx;
typedef struct tlc_lower_ctx {
    tlc_arena *a;
    tlc_diag *diag;
    const tir_kernel *k;
    th_kernel *tk;
    tlc_arch arch;
    th_var *tid;          /* threadIdx.x, less the thread range's first thread in its branch */
    th_var *block_tid;    /* threadIdx.x */
    /* The threads the statements being lowered run over: the kernel's, or
     * a thread range's in its branch (tir_thread_range) */
    int threads;
    const tir_thread_range *range;
    th_expr **var_expr;   /* tir_var id -> value (block idx, sym dims, scalars, Parallel vars) */
    th_var **var_slot;    /* tir_var id -> mutable slot (lets, serial loop vars) */
    int64_t *var_lo, *var_hi; bool *var_known; /* constant ranges of loop vars */
    th_var **regs;        /* buffer id -> register array (fragment / local / var) */
    th_var **acc_packed;  /* buffer id -> a float16 wgmma accumulator's b32 pairs (ops/gemm.c), made on first use */
    int *tensor_param;    /* buffer id -> th param index (global tensors), else -1 */
    bool *addressed;      /* buffer id -> an address into the global tensor was computed from its shape */
    int *sym_param;       /* sym index -> th param index */
    tlc_ptrvec *out;      /* statements being emitted */
    const tlc_par_ctx *par; /* inside a Parallel loop body */
    int ntemp;
    int64_t smem_top;     /* dynamic shared bytes allocated so far (buffers + scratch) */
    bool in_parallel;
    /* Under a condition or serial loop whose threads part ways (thread-
     * indexed code, tir if_/for_ thread_varying): no barrier can be placed */
    int divergent;
    /* Lowering copies of an unrolled loop's body, the loop variable a
     * constant in each (transform/lower.c): a let assigned once whose value
     * folds to a constant is that constant */
    int fold_lets;
    bool fp8_refused;     /* the target has no float8 conversions: reported once */
    th_expr **stage_off;  /* buffer id -> byte offset of the current pipeline stage (NULL: none) */
    bool *smem_unfenced;  /* shared region (plan.h) -> written by ordinary stores since the
                           * last fence.proxy.async: the async proxy (wgmma) may not see the bytes yet */
    tlc_tmap_use *tmaps; int ntmaps; /* TMA descriptors (kernel params after the scalars) */
    struct tlc_ws_plan *ws; /* non-NULL: the kernel is split into producer / consumer warpgroups */
    int wgmma_inflight;     /* wgmma groups a gemm may leave in flight (wait_group N at its end) */
    bool wgmma_async;       /* a gemm ends at its commit; its waiter is the caller (warp specialization's overlap) */
    /* the accumulators of T.wgmma_gemm's left in flight since the last
     * T.wait_wgmma(0), in lowering order (ops/wait_wgmma.c) */
    tlc_ptrvec wgmma_in_flight;
    /* gemm statements the plan leaves in flight (tlc_gemm_op_plan.deferred),
     * one wgmma group each, oldest first; and those a wait has retired whose
     * shared-memory reads lower.c has not yet handed to its barrier logic */
    tlc_ptrvec wgmma_deferred, wgmma_retired;
    /* Lowering a turn's owner statements (warp_specialize.c): one warpgroup
     * runs them, so a fragment's copy held by each warpgroup (replication
     * over 128-thread strides) counts as its own replica 0. */
    bool in_turn;
    /* Per sym index, a power of two the
     * sym's value is known to be a multiple of (1: nothing known). Facts
     * come from TMA maps (16-byte row strides), are written to the metadata
     * (`divisible` lines) and checked by the runtime at every launch. */
    int64_t *sym_multiple;
    const tlc_kernel_plan *plan; /* the kernel's plan (transform/plan.c) */
    int scratch_hit;             /* the planned scratch the op being lowered took (-1: none) */
    int64_t bounds_tests;        /* element accesses emitted under a bounds test so far */
    bool bounds_reported;        /* their limit was reported */
    const tir_stmt *scratch_clear; /* the op whose planned scratch no access since the last barrier touches */
    /* The driver's statement lowering (transform/lower.c), for ops that
     * lower the statements nested in them (a Parallel loop's body). */
    void (*lower_stmt)(tlc_lower_ctx *lc, const tir_stmt *s);
    /* Values computed ahead: lowering any of memo_expr[i] gives
     * memo_value[i] (a pipeline's gather chunk, lower_pipeline.c) */
    const tir_expr *const *memo_expr;
    th_expr **memo_value;
    int nmemo;
} tlc_lower_ctx;

/* Where a Parallel loop body is being emitted: one slot of its fragment. */
struct tlc_par_ctx {
    const tir_stmt *loop;
    const tlc_fragment *frag; /* iteration fragment */
    int64_t slot;
};

void tlc_emit(tlc_lower_ctx *lc, th_stmt *s);
/* A barrier of the threads lowering runs over: the block's (bar.sync 0),
 * or a thread range's named barrier in its branch. */
th_stmt *tlc_barrier(tlc_lower_ctx *lc);
/* Emits into a fresh list; tlc_lower_end returns it as a SEQ. */
tlc_ptrvec *tlc_lower_begin(tlc_lower_ctx *lc);
th_stmt *tlc_lower_end(tlc_lower_ctx *lc, tlc_ptrvec *saved);
th_var *tlc_temp(tlc_lower_ctx *lc, const char *prefix, th_type t, int array_len);
/* An inline PTX instruction (target/ptx.h) with its operands: as a
 * statement, or emitted. Outputs go to `outs`. */
th_stmt *tlc_ptx_stmt(tlc_lower_ctx *lc, tlc_ptx p, th_expr **args, int nargs, th_var **outs, int nouts);
void tlc_emit_ptx(tlc_lower_ctx *lc, tlc_ptx p, th_expr **args, int nargs, th_var **outs, int nouts);
/* A let: evaluates e once into a fresh scalar slot and returns a read of it. */
th_expr *tlc_let(tlc_lower_ctx *lc, const char *prefix, th_expr *e);

/* Types. Registers: bool -> i1; memory: th_from_dtype. */
th_type tlc_reg_type(tir_dtype t);
th_type tlc_mem_type(tir_dtype t);
th_expr *tlc_coerce(tlc_lower_ctx *lc, th_expr *e, th_type t); /* numeric conversion (bool aware) */
/* tlc_coerce of a value of Tile IR dtype `from`: an unsigned one is zero-
 * extended and converts to float as unsigned. */
th_expr *tlc_coerce_from(tlc_lower_ctx *lc, th_expr *e, tir_dtype from, th_type t);
/* A value of dtype `from` as one of dtype `to`, in type t (its register or
 * memory type): f16 <-> bf16 through f32, unsigned sources and
 * destinations as such. */
th_expr *tlc_convert_value(tlc_lower_ctx *lc, th_expr *e, tir_dtype from, tir_dtype to, th_type t);
th_expr *tlc_i32(tlc_lower_ctx *lc, int64_t v);
th_expr *tlc_zero(tlc_lower_ctx *lc, th_type t); /* scalar or vector zero */
th_expr *tlc_i64(tlc_lower_ctx *lc, int64_t v);
th_expr *tlc_and(tlc_lower_ctx *lc, th_expr *x, th_expr *y); /* NULL = true */

/* Expressions (lower_expr.c). */
th_expr *tlc_lower_expr(tlc_lower_ctx *lc, const tir_expr *e);
/* tanh, sigmoid, erf, log1p, sin or cos of an f32 value (lower_math.c). */
th_expr *tlc_lower_math(tlc_lower_ctx *lc, tir_unop op, th_expr *x);

/* Ordinary stores to shared memory some wgmma of the kernel may read, not
 * yet made visible to the async proxy (lc->smem_unfenced); the fence that
 * does (fence.proxy.async), clearing them (lower_access.c). */
bool tlc_smem_any_unfenced(const tlc_lower_ctx *lc);
void tlc_smem_fence(tlc_lower_ctx *lc);
/* Memory (lower_access.c). idx: one i32 expression per dim. */
th_expr *tlc_dim_value(tlc_lower_ctx *lc, const tir_buffer *b, int d); /* i64 */
th_expr *tlc_global_elem_ptr(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx);
th_expr *tlc_shared_elem_ptr(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx);
/* The kernel's instructions need PTX ISA `isa` (x 10) at least (th_kernel.ptx_isa). */
void tlc_need_ptx_isa(tlc_lower_ctx *lc, int isa);
/* In-bounds condition for a global access (NULL when provably in bounds);
 * `max_idx[d]` >= 0 is a proven upper bound of idx[d] (or -1 if unknown). */
th_expr *tlc_global_in_bounds(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx, const int64_t *max_idx);
/* Constant range of a Tile IR index expression; false if unknown. */
bool tlc_expr_range(const tlc_lower_ctx *lc, const tir_expr *e, int64_t *lo, int64_t *hi);
/* Largest power of two (<= 1024) that provably divides e (0 counts as any). */
int64_t tlc_expr_multiple(const tir_expr *e);
/* The same, with `var` giving a variable's (a let's value, an assumed dim)
 * and `%` seen through. */
typedef int64_t tlc_var_multiple_fn(const tir_var *v, void *ctx);
int64_t tlc_expr_multiple_with(const tir_expr *e, tlc_var_multiple_fn *var, void *ctx);
/* A power of two a tensor dim is known to be a multiple of: the constant's
 * factor, a sym's recorded fact (lc->sym_multiple), else 1. */
int64_t tlc_dim_multiple(const tlc_lower_ctx *lc, const tir_expr *dim);
/* Element load / store of any scope at Tile IR indices (fragments: only in
 * a Parallel loop over them). */
th_expr *tlc_lower_load(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc);
void tlc_lower_store(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, th_expr *value, tlc_loc loc);
/* Buffer dim d of an access inside Parallel loop `loop` is indexed by loop
 * dim map[d], or is a dim of extent 1 indexed by the constant 0
 * (TLC_PAR_MAP_ZERO: TileLang's `row_sum[0]` of a one-element statistic);
 * true when every other index is a distinct loop variable, in any order
 * (x[j, i] reads a transposed tile). tlc_par_access_map_general also takes
 * a loop dim divided by a constant (`j // 2`: a packed tile, two of the
 * loop's elements to one of the buffer's), an entry
 * TLC_PAR_MAP_DIVIDED(dim, c), and an integer that names none of the
 * loop's variables (TLC_PAR_MAP_SHARED: `lse[k, j]` in a serial loop over
 * k, the same element index for all of the Parallel loop's iterations).
 * tlc_par_map_dim and tlc_par_map_divisor read any entry. */
#define TLC_PAR_MAP_ZERO (-1)
#define TLC_PAR_MAP_SHARED (-2)
#define TLC_PAR_MAP_STEP 8 /* above TLC_FRAG_MAX_RANK */
#define TLC_PAR_MAP_DIVIDED(dim, c) ((dim) + TLC_PAR_MAP_STEP * (int)((c) - 1))
static inline int tlc_par_map_dim(int m) { return m < 0 ? m : m % TLC_PAR_MAP_STEP; }
static inline int64_t tlc_par_map_divisor(int m) { return m < 0 ? 1 : m / TLC_PAR_MAP_STEP + 1; }
bool tlc_par_access_map(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx, int *map);
bool tlc_par_access_map_general(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx, int *map);
/* Slot of fragment B holding what iteration `slot` of loop fragment L
 * reaches through `map` (the same for every thread); -1 if no thread runs
 * that iteration, -2 if threads would need each other's data. */
int64_t tlc_par_access_slot(const tlc_fragment *L, const tlc_fragment *B, const int *map, int brank, int64_t slot);
/* Slot of fragment buffer b holding the element that iteration `slot` of
 * the Parallel loop's fragment reaches through `idx` (loop variables), the
 * same for every thread: a constant, plus the run-time part of an index
 * the iterations share (TLC_PAR_MAP_SHARED); 0 with an error if threads
 * would need each other's registers. */
th_expr *tlc_parallel_access_slot(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc);

/* Thread-dependent part of a fragment's logical index (i32 per dim), the
 * replica index and the hole condition (NULL if never a hole) for a slot. */
void tlc_frag_thread_index(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr **out);
th_expr *tlc_frag_replica0(tlc_lower_ctx *lc, const tlc_fragment *f); /* "is replica 0"; NULL: no replicas */
th_expr *tlc_frag_valid(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr *const *thread_idx, int64_t slot);
/* The hole condition for a run-time logical index (NULL if never a hole). */
th_expr *tlc_frag_valid_at(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr *const *logical);
/* Logical index `l` (one per dim of r's buffer) lies inside region r; NULL
 * when every dim of r is its buffer's whole dim (part of a fragment a
 * copy or an atomic_add takes). */
th_expr *tlc_region_holds(tlc_lower_ctx *lc, const tir_region *r, th_expr *const *l);

/* A run-time loop over the groups of `group` consecutive slots of fragment
 * f (slot_loop.c), for walks that index no registers: what unrolling would
 * repeat per group is emitted once between begin and end, at the logical
 * index `ilog` of the group's first slot (i32 per dim), under `valid` (the
 * hole test, NULL if never a hole). Wanted past TLC_UNROLLED_MAX_SLOT_GROUPS
 * groups. */
typedef struct tlc_slot_loop {
    th_var *counter;
    int64_t groups;
    tlc_ptrvec *saved;
    th_expr *ilog[TLC_FRAG_MAX_RANK];
    th_expr *valid;
} tlc_slot_loop;
bool tlc_slot_loop_wanted(const tlc_fragment *f, int64_t group);
void tlc_slot_loop_begin(tlc_lower_ctx *lc, tlc_slot_loop *l, const tlc_fragment *f, int64_t group,
                         th_expr *const *tidx);
void tlc_slot_loop_end(tlc_lower_ctx *lc, tlc_slot_loop *l);

/* Shared scratch: byte offset of fresh bytes after everything else. */
int64_t tlc_scratch(tlc_lower_ctx *lc, int64_t bytes);
/* The scratch planned for tile op `op` when it fits (the op must start with
 * a block barrier before writing it; sets lc->scratch_hit), else fresh
 * bytes. */
int64_t tlc_op_scratch(tlc_lower_ctx *lc, const tir_stmt *op, int64_t bytes);
/* The block barrier an op emits before writing the scratch it took, left
 * out when the driver found nothing pending on that planned scratch. */
void tlc_op_scratch_barrier(tlc_lower_ctx *lc, const tir_stmt *op);
#endif
