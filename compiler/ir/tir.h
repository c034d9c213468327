/* Tile IR (docs/architecture.md, "Tile IR"): what sema produces and every pass
 * consumes. Tile ops stay whole nodes (a gemm is one node with its operand
 * regions). Compile-time parameters are already folded: every non-global
 * buffer shape is a constant. Global tensor dims may be symbolic variables
 * bound at launch. All nodes live in the module's arena. */
#ifndef TLC_TIR_H
#define TLC_TIR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../support/arena.h"
#include "../support/diag.h"
#include "../support/strbuf.h"
#include "../target/target.h"


/* ---------------- dtypes ---------------- */
typedef enum {
    TIR_F16, TIR_BF16, TIR_F32, TIR_F8E4M3, TIR_I8, TIR_I32, TIR_I64, TIR_BOOL,
    TIR_I16, TIR_U8, TIR_U16, TIR_U32, TIR_F8E5M2,
    TIR_DTYPE_COUNT
} tir_dtype;
const char *tir_dtype_name(tir_dtype t);              /* "float16" */
bool tir_dtype_parse(const char *s, tir_dtype *out);  /* float16, half, bfloat16, float32, float, float8_e4m3, float8_e5m2,
                                                         int8, int16, int32, int, int64, uint8, uint16, uint32, bool */
int tir_dtype_bytes(tir_dtype t);                     /* bool: 1 */
bool tir_dtype_is_float(tir_dtype t);
bool tir_dtype_is_fp8(tir_dtype t);                   /* float8_e4m3, float8_e5m2: bytes decoded by cvt */
bool tir_dtype_is_unsigned(tir_dtype t);              /* uint8 uint16 uint32 (not bool) */
/* The range of an integer dtype's values (bool: 0..1); false for floats. */
bool tir_dtype_int_range(tir_dtype t, int64_t *lo, int64_t *hi);
/* v wrapped to integer dtype t, as a store of v in t keeps it (bool: v != 0). */
int64_t tir_wrap_int(tir_dtype t, int64_t v);

/* ---------------- variables ---------------- */
typedef enum {
    TV_LOOP,         /* loop induction variable */
    TV_LET,          /* scalar local (x = expr); mutable through TS_ASSIGN */
    TV_BLOCK_IDX,    /* bx, by, bz from `with Kernel(...) as (...)` */
    TV_SYM_DIM,      /* symbolic tensor dimension, bound at launch */
    TV_SCALAR_PARAM, /* scalar kernel parameter */
    TV_THREAD_IDX,   /* T.get_thread_binding(axis): this thread's index along a thread axis */
} tir_var_kind;

typedef struct tir_var {
    const char *name;
    tir_var_kind kind;
    tir_dtype dtype;   /* int32 for loop vars / block idx / sym dims */
    int id;            /* unique within the kernel, dense from 0 */
    int axis;          /* TV_BLOCK_IDX, TV_THREAD_IDX: 0,1,2; TV_SCALAR_PARAM: parameter index */
    bool dynamic;      /* TV_SYM_DIM declared with dynamic("name") */
    /* TV_LET: the kernel's source assigns it once (sema). */
    bool assigned_once;
    /* TV_LET assigned once whose value reads no memory and only variables
     * that never change once set (loop, block index, symbolic dim, scalar
     * parameter, lets assigned once): that value, which the variable holds
     * wherever it is visible. tir_const_difference may see through it
     * (kv_end - kv_start). */
    const struct tir_expr *def;
    tlc_loc loc;
} tir_var;

/* ---------------- buffers ---------------- */
/* 4-byte registers per thread one fragment may take: the hardware's 255
 * plus a little spilling at most. Sema refuses a fragment that needs more
 * under any layout, lowering one whose layout does. */
#define TLC_FRAGMENT_MAX_REGS 256
/* Elements of one alloc_local buffer (a per-thread register array). */
#define TLC_LOCAL_MAX_ELEMS 4096
/* Iterations per thread of one Parallel loop: lowering repeats the body for
 * each (unrolled, so registers are indexed by constants); no fragment has
 * more elements per thread (256 registers of four 8-bit elements). */
#define TLC_PARALLEL_MAX_PER_THREAD 1024
/* Bytes per thread of a copy or fill between memories, unrolled in 16-byte
 * vectors: more than any shared-memory tile takes, so only a region global
 * memory alone bounds (a whole large tensor) is refused. */
#define TLC_UNROLLED_MAX_BYTES_PER_THREAD 16384
/* Bounds-tested element accesses per thread in one kernel (each a branch
 * around a load or store once unrolled). LLVM's optimizations take time
 * superlinear in them: a (128, N) int8 fragment copied in and out of a
 * tensor of symbolic shape, 2N tests, compiles in about 0.8-1.1 s at
 * N = 512, 1.1-2.6 s at 768, 1.7 s and more at 1024 on the development
 * machine; the shipped kernels and ports need at most a few hundred. */
#define TLC_KERNEL_MAX_BOUNDS_TESTS 1024
/* Thread IR statements an `unroll` loop may expand to (its body, itself
 * expanded, times its trip count). Past it the loop stays a loop: unroll is
 * a hint, and LLVM's time grows faster than the straight-line code it is
 * given (nested unroll(8) loops around a 1024-element Parallel loop took
 * 20 s). */
#define TLC_UNROLLED_MAX_STMTS 16384
/* Groups of slots (vectors or single elements) per thread up to which a
 * walk that holds no registers (a copy or fill between memories, a Parallel
 * loop over shared and global memory only) is unrolled; past it lowering
 * emits a run-time loop over the slots. Each group of a masked copy is a
 * branch, and LLVM's time grows faster than their count (840 masked loads
 * per thread took 7 s, 8192 unmasked ones 2 s); the shipped kernels' walks
 * have at most 64 groups. */
#define TLC_UNROLLED_MAX_SLOT_GROUPS 128

typedef enum {
    TIR_SCOPE_GLOBAL,   /* tensor parameter or alloc_global workspace */
    TIR_SCOPE_SHARED,   /* alloc_shared */
    TIR_SCOPE_FRAGMENT, /* alloc_fragment: registers distributed over the block */
    TIR_SCOPE_LOCAL,    /* alloc_local: per-thread array */
    TIR_SCOPE_VAR,      /* alloc_var: per-thread scalar (rank 0) */
} tir_scope;
const char *tir_scope_name(tir_scope s); /* "global", "shared", ... */

typedef enum { TIR_LAYOUT_HINT_NONE, TIR_LAYOUT_HINT_SWIZZLED } tir_layout_hint;

struct tlc_layout;   /* shared-memory layout (compiler/layout), set by layout inference */
struct tlc_fragment; /* register fragment (compiler/layout), set by layout inference */
struct tlc_kernel_plan; /* the kernel's plan (compiler/lowerkit/plan.h), set by planning */

typedef struct tir_expr tir_expr;

/* Some of the block's threads, [lo, lo + count), that run a branch on the
 * thread index holding tile work (`if tid < 32: ... else: ...`,
 * frontend/sema_thread_varying.c): the branch's tile ops and fragments are
 * laid out over those threads, its barriers are named barrier `barrier`
 * among them. One per interval of a kernel: branches that give tile work
 * to the same threads share it (and its fragments and barrier). */
typedef struct tir_thread_range {
    int lo, count;
    int barrier;
} tir_thread_range;

typedef struct tir_buffer {
    const char *name;
    int id;                 /* unique within the kernel, dense from 0 */
    tlc_loc loc;            /* declaration */
    tir_scope scope;
    tir_dtype dtype;
    int rank;               /* 0 only for TIR_SCOPE_VAR */
    tir_expr **shape;       /* rank entries: TE_INT, or TE_VAR (TV_SYM_DIM) for global tensors */
    int param_index;        /* >= 0 for tensor parameters, else -1 */
    bool is_workspace;      /* alloc_global */
    tir_layout_hint layout_hint; /* annotate_layout */
    tlc_loc layout_hint_loc;
    struct tlc_layout *layout;     /* filled by passes; NULL after sema */
    struct tlc_fragment *fragment; /* filled by passes; NULL after sema */
    /* Non-NULL: this fragment is another shape of view_of's elements, in
     * the same row-major order and the same registers (T.reshape); view_of
     * is itself no view. Its fragment is view_of's reshaped (layout
     * inference keeps the two together), and accesses to it are accesses
     * to view_of (tir_stmt_touches, tir_stmt_buffers_read_written). */
    struct tir_buffer *view_of;
    /* A fragment used in a thread range's branch (only there): laid out
     * over its threads; NULL: the whole block's. */
    const tir_thread_range *range;
} tir_buffer;
/* Constant extent of dim i, or -1 when symbolic. */
int64_t tir_buffer_dim(const tir_buffer *b, int i);
/* The buffer whose elements b's are: view_of for a view, else b. */
tir_buffer *tir_buffer_storage(const tir_buffer *b);
/* Product of constant dims (elements), or -1 when any is symbolic. */
int64_t tir_buffer_elems(const tir_buffer *b);

/* ---------------- expressions (scalar / index) ---------------- */
typedef enum {
    TE_INT,    /* integer constant (dtype int32/int64/bool) */
    TE_FLOAT,  /* float constant (may be +-inf) */
    TE_VAR,    /* reference to a tir_var */
    TE_LOAD,   /* buffer element: buf[indices] (rank indices; none for VAR scope) */
    TE_BINARY,
    TE_UNARY,
    TE_CAST,   /* to dtype */
    TE_SELECT, /* cond ? a : b */
    /* value as the thread in lane `lane` of this thread's width-lane part
     * of its warp computes it (lane taken modulo width), or in lane
     * laneid ^ lane (xor; this thread's own value where that leaves the
     * part): a warp shuffle, in thread-indexed code only */
    TE_SHUFFLE,
} tir_expr_kind;

typedef enum {
    TB_ADD, TB_SUB, TB_MUL,
    TB_DIV,      /* float division; on integers: C (truncating) division never appears, sema uses FLOORDIV */
    TB_FLOORDIV, TB_FLOORMOD, /* integer, Python semantics */
    TB_MIN, TB_MAX, TB_POW,
    TB_LT, TB_LE, TB_GT, TB_GE, TB_EQ, TB_NE, /* result bool */
    TB_AND, TB_OR,                            /* logical, bool operands */
    TB_BITAND, TB_BITOR, TB_BITXOR, TB_SHL, TB_SHR,
} tir_binop;

typedef enum {
    TU_NEG, TU_NOT, TU_BITNOT,
    TU_EXP, TU_EXP2, TU_LOG, TU_LOG2, TU_RSQRT, TU_SQRT, TU_ABS,
    TU_TANH, TU_SIGMOID, TU_ERF, TU_SIN, TU_COS, TU_FLOOR, TU_CEIL, TU_LOG1P, /* float math */
} tir_unop;
const char *tir_binop_name(tir_binop op); /* "+", "//", "min", "<", "and" ... */
const char *tir_unop_name(tir_unop op);   /* "-", "not", "exp2", "rsqrt" ... */

struct tir_expr {
    tir_expr_kind kind;
    tir_dtype dtype; /* result type */
    tlc_loc loc;
    union {
        int64_t ival;                                    /* TE_INT */
        double fval;                                     /* TE_FLOAT */
        tir_var *var;                                    /* TE_VAR */
        struct { tir_buffer *buf; tir_expr **idx; } load; /* TE_LOAD: buf->rank indices */
        struct { tir_binop op; tir_expr *a, *b; } bin;
        struct { tir_unop op; tir_expr *a; } un;
        /* target type is dtype; bits: the same bytes reinterpreted (a
         * reinterpret, operand and target of one size), not converted */
        struct { tir_expr *a; bool bits; } cast;
        struct { tir_expr *cond, *a, *b; } sel;
        struct { tir_expr *value, *lane; int width; bool xor_lanes; } shfl;
    } u;
};

/* Constructors (tir.c). They fold constants (2*64 -> 128, x+0 -> x) so
 * every shape that can be a constant is one. */
tir_expr *tir_int(tlc_arena *a, int64_t v, tlc_loc loc);              /* int32 if it fits, else int64 */
tir_expr *tir_int_typed(tlc_arena *a, int64_t v, tir_dtype t, tlc_loc loc);
tir_expr *tir_float(tlc_arena *a, double v, tir_dtype t, tlc_loc loc);
tir_expr *tir_var_ref(tlc_arena *a, tir_var *v, tlc_loc loc);
tir_expr *tir_load(tlc_arena *a, tir_buffer *b, tir_expr **idx, tlc_loc loc);
tir_expr *tir_binary(tlc_arena *a, tir_binop op, tir_expr *x, tir_expr *y, tlc_loc loc);
tir_expr *tir_unary(tlc_arena *a, tir_unop op, tir_expr *x, tlc_loc loc);
tir_expr *tir_cast(tlc_arena *a, tir_expr *x, tir_dtype t, tlc_loc loc);
/* x's bytes as dtype t (tir_dtype_bytes equal; sema checks). */
tir_expr *tir_reinterpret(tlc_arena *a, tir_expr *x, tir_dtype t, tlc_loc loc);
tir_expr *tir_select(tlc_arena *a, tir_expr *c, tir_expr *x, tir_expr *y, tlc_loc loc);
/* A warp shuffle of x (TE_SHUFFLE; width a power of two up to 32). */
tir_expr *tir_shuffle(tlc_arena *a, tir_expr *x, tir_expr *lane, int width, bool xor_lanes, tlc_loc loc);
/* Like tir_binary, but reports why two constants could not be folded
 * (int64 overflow, division or modulo by zero, bad shift count): returns NULL
 * with *status set, so sema can diagnose at the operator. tir_binary itself
 * never fails: on such an error it builds the unfolded node. */
typedef enum { TIR_FOLD_OK, TIR_FOLD_OVERFLOW, TIR_FOLD_DIV_ZERO, TIR_FOLD_BAD_SHIFT } tir_fold_status;
tir_expr *tir_binary_fold(tlc_arena *a, tir_binop op, tir_expr *x, tir_expr *y, tlc_loc loc,
                          tir_fold_status *status);
/* op on two integers with Python's semantics (floor division and modulo),
 * as the constructors fold them. */
tir_fold_status tir_fold_int(tir_binop op, int64_t a, int64_t b, int64_t *r);
bool tir_expr_const_int(const tir_expr *e, int64_t *out); /* true if e is TE_INT */
/* Runtime nodes of e as a grid dimension the runtime evaluates at launch
 * (constants, symbolic dims, integer scalar parameters, casts, + - * // %
 * min max),
 * or -1 when it holds anything else. */
int tir_grid_expr_nodes(const tir_expr *e);
/* True when hi - lo is a known constant (both linear in the same terms,
 * e.g. (bx + 1) * 64 - bx * 64 == 64); used for slice extents. With
 * see_lets, a variable with a `def` stands for it. */
bool tir_const_difference(const tir_expr *hi, const tir_expr *lo, bool see_lets, int64_t *out);
bool tir_expr_equal(const tir_expr *x, const tir_expr *y); /* structural */
/* Common result type of a binary arithmetic op (Python-ish promotion:
 * int op int -> wider int; float op anything -> the float; f16 op f32 -> f32). */
tir_dtype tir_promote(tir_dtype x, tir_dtype y);

/* ---------------- regions ---------------- */
/* A rectangular part of a buffer. Each dim has a start and an extent; an
 * indexed (not sliced) dim has extent 1. Tile ops compare region shapes
 * with the extent-1 dims dropped ("squeezed shape"). Extents are constants
 * except where a slice of a global tensor spans a symbolic dim. */
typedef struct tir_region {
    tir_buffer *buf;
    int rank;            /* == buf->rank */
    tir_expr **start;
    tir_expr **extent;
    tlc_loc loc;
} tir_region;
/* The dims whose extent is not the constant 1, in order: writes them to
 * dims (room for r->rank), returns how many. */
int tir_region_squeezed_dims(const tir_region *r, int *dims);
/* Two shapes are equal; a shape as text "[4, 64]" (truncated to fit). */
bool tir_shapes_equal(const int64_t *x, int nx, const int64_t *y, int ny);
void tir_shape_text(char *buf, size_t cap, const int64_t *s, int n);
/* Squeezed constant shape: writes up to 8 dims into out, returns count, or -1 if symbolic. */
int tir_region_shape(const tir_region *r, int64_t out[8]);
int64_t tir_region_elems(const tir_region *r); /* -1 if symbolic */
/* The region is its whole buffer: every dim from constant 0 over the buffer's constant extent. */
bool tir_region_is_whole(const tir_region *r);

/* ---------------- statements ---------------- */
typedef enum {
    TS_SEQ,
    TS_FOR,
    TS_IF,
    TS_ALLOC,      /* buffer comes into scope (shared / fragment / local / var / workspace) */
    TS_LET,        /* new scalar local: var = value */
    TS_ASSIGN,     /* scalar local update: var = value */
    TS_STORE,      /* buf[idx] = value (element store; VAR scope: no idx) */
    TS_COPY,       /* tile op */
    TS_FILL,       /* tile op (also clear = fill 0) */
    TS_GEMM,       /* tile op */
    TS_REDUCE,     /* tile op */
    TS_ATOMIC_ADD, /* tile op */
    TS_LAUNCH_DEPENDENTS, /* pdl_trigger(): the next kernel in the stream may be scheduled */
    TS_GRID_DEPENDENCY_WAIT, /* pdl_sync(): wait for the previous kernel in the stream */
    TS_PREFETCH,   /* tile op: prefetch(src), a global region brought into the L2 cache */
    /* tile op: TVM's tvm_thread_allreduce, every thread's value combined
     * over a thread axis, the result in every thread (thread-indexed code) */
    TS_THREAD_ALLREDUCE,
    TS_SYNC_THREADS, /* tile op: sync_threads(id, count), a barrier where the program writes it */
    TS_SYNC_GRID,    /* tile op: sync_grid(), every block of the grid meets (cooperative launch) */
    /* TileLang's mbarrier wait or arrive (T.barrier_wait, T.barrier_arrive,
     * T.cp_async_barrier_noinc): in a kernel that runs its thread ranges in
     * program order, only inside sema, which checks the protocol there and
     * removes them (sema_manual_ws.c); in one whose ranges run at the same
     * time (tir_kernel.mbarriers), a tile op each thread runs by itself
     * (ops/mbarrier.c) */
    TS_MBARRIER,
    /* TileLang's hand-pipelined warpgroup code, in kernels whose ranges run
     * at the same time, each a tile op each thread runs by itself:
     * T.wait_wgmma(n) (ops/wait_wgmma.c), T.ptx_cp_async of one thread's
     * elements (ops/cp_async.c), T.set_max_nreg (ops/set_max_nreg.c) */
    TS_WAIT_WGMMA,
    TS_CP_ASYNC,
    TS_SET_MAX_NREG,
    /* T.fence_proxy_async(): the thread's shared-memory stores so far made
     * visible to the async proxy (ops/fence_proxy_async.c) */
    TS_FENCE_PROXY_ASYNC,
} tir_stmt_kind;

typedef enum { TIR_FOR_SERIAL, TIR_FOR_PARALLEL, TIR_FOR_PIPELINED, TIR_FOR_UNROLLED } tir_for_kind;
typedef enum { TIR_POLICY_SQUARE, TIR_POLICY_FULLROW, TIR_POLICY_FULLCOL } tir_gemm_policy;
typedef enum { TIR_REDUCE_MAX, TIR_REDUCE_SUM, TIR_REDUCE_MIN, TIR_REDUCE_ABSMAX, TIR_REDUCE_ABSSUM } tir_reduce_kind;
const char *tir_policy_name(tir_gemm_policy p);   /* "Square", "FullRow", "FullCol" */
const char *tir_reduce_name(tir_reduce_kind k);   /* "max", "sum", ... */

/* T.im2col's column tile (frontend/sema_im2col.c), as TMA's im2col mode
 * takes it: the tile's `rows` pixels start at pixel `first_pixel` of the
 * [N, OH, OW] output in row-major order, its columns are channels
 * [channel, channel + cols) of filter position (kh, kw). The values are
 * expressions of the statements before the loop (lets computed once a
 * tile) and of sizes known at launch. */
typedef struct tir_im2col {
    struct tir_buffer *img; /* [N, H, W, C], global */
    struct tir_buffer *col; /* [rows, cols], shared */
    struct tir_expr *first_pixel, *channel, *kh, *kw;
    struct tir_expr *out_h, *out_w;
    struct tir_expr *kernel, *stride, *dilation, *pad;
} tir_im2col;

typedef struct tir_stmt tir_stmt;
struct tlc_op_desc;
struct tir_stmt {
    tir_stmt_kind kind;
    tlc_loc loc;
    /* A tile op's row in the op table (ir/tir_op.h, ops/op_table.c), set
     * by whoever builds the node (sema); NULL for every other statement. */
    const struct tlc_op_desc *op;
    /* A tile op of thread-indexed code that each thread runs for its own
     * result (sema_thread_varying.c): it writes only per-thread buffers
     * (alloc_local, alloc_var), it is an element atomic_add, which every
     * thread reaching it makes, or a thread all-reduce, each thread
     * combining its group's values */
    bool per_thread;
    /* The thread range whose branch holds this statement (innermost; NULL:
     * the whole block) */
    const tir_thread_range *range;
    union {
        struct { tir_stmt **stmts; int n; } seq;
        struct {
            tir_for_kind kind;
            int nvars;          /* > 1 only for Parallel(d0, d1, ...) */
            tir_var **vars;
            tir_expr **start;   /* per var; constant 0 for Parallel / Pipelined */
            tir_expr **extent;  /* per var: iteration count (Parallel: constant) */
            int64_t step;       /* serial range step (>0 or <0, never 0); 1 otherwise */
            int num_stages;     /* Pipelined; 0 otherwise */
            /* serial: the loop also ends once cond is false, tested before
             * each iteration (a while loop's condition, break's flag;
             * frontend/sema_loop_exit.c); NULL: none */
            tir_expr *cond;
            /* serial: its bounds differ between threads (thread-indexed
             * code, sema_thread_varying.c): not every thread runs every
             * iteration */
            bool thread_varying;
            bool turns_hint;    /* Pipelined(..., turns=True), or roles=True */
            bool roles_hint;    /* Pipelined(..., roles=True): turns_hint too */
            /* The warpgroup-turns schedule of this loop (transform/turns.c),
             * NULL when not taken. */
            const struct tir_turns *turns;
            /* Parallel: how each fragment access of the body reaches its
             * elements, recorded by layout inference's check
             * (ops/parallel.c) for lowering to read */
            const struct tir_par_access *par_access;
            int npar_access;
            /* Parallel: the loop's own layout, decided there too */
            const struct tlc_fragment *par_layout;
            /* Parallel: T.im2col's tile this loop reads element by element
             * (frontend/sema_im2col.c), for a pipeline that loads it by TMA
             * in im2col mode instead; NULL otherwise */
            const struct tir_im2col *im2col;
            tir_stmt *body;
        } for_;
        /* els may be NULL; thread_varying: the condition differs between
         * threads (thread-indexed code, sema_thread_varying.c) */
        /* range_then / range_else: a branch on the thread index that
         * splits the threads into ranges holding tile work (NULL: none) */
        struct {
            tir_expr *cond;
            tir_stmt *then, *els;
            bool thread_varying;
            const tir_thread_range *range_then, *range_else;
        } if_;
        struct { tir_buffer *buf; } alloc;
        struct { tir_var *var; tir_expr *value; } let;       /* TS_LET, TS_ASSIGN */
        struct { tir_buffer *buf; tir_expr **idx; tir_expr *value; } store;
        /* tma_index (NULL: none): T.tma_copy's barrier= (group tma_barrier
         * of tir_kernel.mbarriers, its mbarrier tma_index), which in a
         * kernel whose ranges run as written the copy's bytes complete a
         * phase of (expect_tx, no arrival); elsewhere a plain copy */
        struct { tir_region src, dst; int tma_barrier; tir_expr *tma_index; } copy;
        struct { tir_region src; } prefetch;
        struct { tir_region dst; tir_expr *value; bool is_clear; } fill;
        struct {
            tir_region a, b, c;
            bool trans_a, trans_b, clear_accum;
            tir_gemm_policy policy;
            int m, n, k; /* the gemm's problem shape, checked by sema */
            /* each warpgroup computes the whole tile (a turns loop's score
             * gemms, transform/turns.c): planned over 128 threads, the
             * accumulator replicated over the warpgroups */
            bool per_warpgroup;
            /* the widest wgmma N it may use (0: 256): a roles loop's output
             * gemms (transform/turns.c) */
            int max_inst_n;
            /* T.wgmma_gemm: issued and committed, left in flight for a
             * later T.wait_wgmma (wgmma only) */
            bool async;
            /* clear_accum given as a condition known only when the gemm
             * runs (`clear_accum=(j == 0)` in an unrolled loop): C is set
             * to 0 first where it holds; NULL: clear_accum decides */
            tir_expr *clear_if;
        } gemm;
        struct {
            tir_reduce_kind kind;
            tir_region src, dst;
            int dim;    /* reduced dim of src (normalised, >= 0) */
            bool clear; /* default true: dst = reduce(src); false: dst = op(dst, reduce(src)) */
        } reduce;
        struct {
            tir_region dst;
            tir_region src;    /* region form: dst += src elementwise (src.buf NULL if scalar form) */
            tir_expr *value;   /* scalar form: dst (extent 1 everywhere) += value */
            /* return_prev=True (scalar form, one element of global memory,
             * outside Parallel loops): a rank-0 var buffer that receives
             * the element's value before the add, the same in every thread
             * (prev.buf NULL otherwise) */
            tir_region prev;
        } atomic;
        struct {
            tir_reduce_kind kind; /* sum, max or min */
            tir_expr *value;      /* this thread's value */
            tir_region dst;       /* one element of a per-thread buffer (extents 1) */
            int axis;             /* the thread axis combined over (0: x, 1: y, 2: z) */
        } allreduce;
        struct {
            bool wait;         /* wait for a phase's parity; else arrive */
            /* arrive once this thread's earlier cp.async copies are done
             * (cp.async.mbarrier.arrive.noinc): T.cp_async_barrier_noinc */
            bool cp_async;
            int barrier;       /* sema's barrier (T.alloc_barrier): tir_kernel.mbarriers' group */
            tir_expr *index;   /* which of its mbarriers */
            tir_expr *parity;  /* wait: 0 or 1 */
            int arrivals;      /* arrive: the threads that run it */
        } mbarrier;
        struct { int pending; } wait_wgmma; /* wgmma groups left in flight */
        /* one thread's copy of `elems` consecutive elements, src[start..]
         * to dst[start..] (regions of extent 1 but the last dim, `elems`),
         * by cp.async; pred (NULL: always) false fills dst with zeros */
        struct { tir_region dst, src; int elems; tir_expr *pred; } cp_async;
        struct { int regs; bool inc; } max_nreg;
        /* TS_SYNC_THREADS: bar.sync id, count; count 0 is the whole block
         * (id 0); a count of some threads is a named barrier, which only
         * they reach (thread-indexed code may hold it under a condition) */
        struct { int id, count; } sync;
    } u;
};

/* Warpgroup turns (transform/turns.c, docs/architecture.md "Warpgroup
 * turns"): the two consumer warpgroups take a Pipelined loop's iterations
 * in turns for the part of its body that derives from the score gemms
 * (owner statements), while both run the part that accumulates the output
 * (shared statements) every iteration. LATE: an owner statement written
 * after the shared ones (the row sum), which the owner runs right after
 * publishing; what it computes is only handed over. */
typedef enum { TIR_TURN_LOADS, TIR_TURN_OWNER, TIR_TURN_SHARED, TIR_TURN_LATE } tir_turn_role;
typedef struct tir_turns {
    int first, nchain;     /* the score gemms: body items first .. first + nchain - 1 */
    tir_turn_role *role;   /* per body item */
    /* fragments the owner computes that the shared statements read: the
     * owner publishes them in shared memory each turn */
    tir_buffer **published;
    int npublished;
    /* fragments the owner computes that the next turn's owner, or the code
     * after the loop, reads: handed over in shared memory */
    tir_buffer **handed;
    int nhanded;
    /* shared buffers the owner writes (P staged for the other warpgroup) */
    tir_buffer **staged;
    int nstaged;
    bool late; /* some items are TIR_TURN_LATE */
} tir_turns;

/* A fragment access of a Parallel loop with the final layouts: buffer
 * `buf` indexed through `map` (per dim of buf: the loop variable it is
 * indexed by, or TLC_PAR_MAP_ZERO), and for each slot of the loop's
 * fragment the slot of buf every thread finds its element at (-1: no
 * thread runs that slot). */
#define TIR_PAR_ACCESS_MAX_RANK 4
typedef struct tir_par_access {
    const struct tlc_fragment *loop_frag, *buf_frag; /* the layouts it was found for */
    const struct tir_buffer *buf;
    int map[TIR_PAR_ACCESS_MAX_RANK];
    const int64_t *slot;
} tir_par_access;

tir_stmt *tir_new_stmt(tlc_arena *a, tir_stmt_kind k, tlc_loc loc);
/* Appends the tile ops of s in program order to ops; a Parallel loop counts
 * as one op (its body holds no tile ops). */
void tir_collect_tile_ops(const tir_stmt *s, tlc_ptrvec *ops);
/* Whether pred holds for s or a statement nested in it (a sequence's
 * items, a loop's body, an if's branches). */
bool tir_stmt_any(const tir_stmt *s, bool (*pred)(const tir_stmt *s, const void *ctx), const void *ctx);
/* s is, or holds, a statement of that kind. */
bool tir_stmt_has_kind(const tir_stmt *s, tir_stmt_kind kind);

/* ---------------- kernels and modules ---------------- */
typedef enum { TIR_PARAM_TENSOR, TIR_PARAM_SCALAR } tir_param_kind;
typedef struct tir_param {
    tir_param_kind kind;
    const char *name;
    tir_buffer *buf; /* TENSOR */
    tir_var *var;    /* SCALAR */
    tlc_loc loc;
    bool workspace;  /* TENSOR: a workspace of the kernel's function, which the runtime allocates */
} tir_param;

/* A compile-time parameter after -D binding (printed in the dump, recorded in metadata). */
typedef struct tir_const {
    const char *name;
    enum { TIR_CONST_INT, TIR_CONST_FLOAT, TIR_CONST_DTYPE, TIR_CONST_STRING, TIR_CONST_BOOL } kind;
    int64_t ival;
    double fval;
    tir_dtype dtype;
    const char *sval;
    bool overridden; /* set by -D rather than the @jit default */
} tir_const;

typedef struct tir_kernel {
    const char *name;
    tlc_loc loc;
    tir_param *params; int nparams;
    tir_const *consts; int nconsts;
    tir_var **sym_dims; int nsym;   /* symbolic dims in order of first appearance */
    int grid_rank;                  /* 1..3 */
    tir_expr *grid[3];              /* over constants, sym dims and scalar params */
    tir_var *block_idx[3];
    /* cluster_dims=: blocks per cluster along each grid axis, evaluated at
     * launch like the grid (NULL: 1; sema leaves a constant 1 out) */
    tir_expr *cluster[3];
    int threads;
    /* threads=(x, y, z): the thread axes' extents, x fastest (their
     * product is `threads`; 1 past the given ones) */
    int thread_dims[3];
    /* T.get_thread_binding(axis)'s variables (NULL where never asked for);
     * thread_indexed: a statement reads one, so scalar code may differ
     * between threads (not where only a branch TileLang's manual warp
     * specialization splits the warpgroups on read it, sema_manual_ws.c) */
    tir_var *thread_idx[3];
    bool thread_indexed;
    /* the program places block barriers itself (T.sync_threads): every
     * warpgroup must reach them, so the kernel is not split into roles */
    bool program_barriers;
    bool use_swizzle;
    int swizzle_panel;
    bool swizzle_col;               /* order="col" (default "row") */
    bool fast_math;                 /* pass_configs TL_ENABLE_FAST_MATH: approximate f32 division, reassociation */
    /* pass_configs TL_DISABLE_THREAD_STORAGE_SYNC: where the block's
     * threads part ways (thread-indexed code), the program's own barriers
     * order their shared-memory accesses; tlc places none there and
     * reports none missing (elsewhere it places its barriers as always) */
    bool program_syncs_shared;
    /* pdl_sync(): launched as a programmatic dependent of the stream's
     * previous kernel, whose completion it waits for at its start */
    bool pdl_wait;
    /* disable_warp_group_reg_alloc(): a warp-specialized loop keeps every
     * warpgroup at the launch's registers (no setmaxnreg) */
    bool keep_regs;
    /* TileLang's hand-pipelined warpgroups (docs/language.md 11.9): the
     * thread ranges run at the same time and wait for each other on these
     * mbarriers (T.alloc_barrier's, in order; a TS_MBARRIER names a group
     * and an index in it), which the kernel initializes at its start.
     * NULL / 0: none kept (a kernel whose ranges run in program order). */
    struct tir_mbarrier_group { const char *name; int first, n; int64_t *counts; } *mbarriers;
    int nmbarrier_groups, nmbarriers;
    tir_stmt *body;                 /* TS_SEQ */
    tir_buffer **buffers; int nbuffers; /* every buffer: params first, then allocs in order */
    int nvars;                      /* ids of tir_var are < nvars */
    int64_t shared_bytes;           /* sum of shared buffers (before pipelining) */
    struct tlc_kernel_plan *plan;   /* filled by planning; NULL after sema */
    /* asserts on values known only at launch (sym dims, scalar params):
     * the runtime checks each at every launch (metadata `check`) */
    struct tir_launch_check { tir_expr *cond; tlc_loc loc; } *checks; int nchecks;
    const struct tir_function *function; /* the function this kernel is part of, or NULL */
} tir_kernel;

/* The threads statement s runs over (NULL: the block's): its thread
 * range's, else the block's; and those fragment b is laid out over. */
int tir_stmt_threads(const tir_kernel *k, const tir_stmt *s);
int tir_buffer_threads(const tir_kernel *k, const tir_buffer *b);

/* Bit i set where grid axis i may hold more than one block of a cluster
 * (k->cluster[i] set); 0: no clusters. */
int tir_cluster_axes(const tir_kernel *k);

/* A function whose body holds several `with Kernel` blocks, or alloc_global
 * workspaces before them (docs/language.md, "Several kernels in one
 * function"): its kernels run in order on one launch's arguments. Kernel i
 * is named NAME_k<i>; its parameters are the function's parameters it uses
 * (in the function's order, plus any tensor that binds a symbolic dim it
 * uses), then the workspaces it uses (tir_param.workspace). */
typedef struct tir_function {
    const char *name;
    tlc_loc loc;
    /* The function's parameters, symbolic dims, constants and launch
     * checks, as a kernel without grid or body; its buffers are the tensor
     * parameters, then the workspaces. */
    const tir_kernel *sig;
    /* alloc_global at function level, in declaration order: global buffers
     * of sig (is_workspace) whose dims are constants or sig's symbolic
     * dims. The runtime allocates them per launch, uninitialized. */
    tir_buffer **workspaces; int nworkspaces;
    tir_kernel **kernels; int nkernels; /* in launch order; also in the module's list */
} tir_function;

typedef struct tir_module {
    const char *source_name;
    tlc_arch arch;
    tir_kernel **kernels; int nkernels;
    tir_function **functions; int nfunctions;
} tir_module;
/* Whether `filter` (a --kernel name; NULL selects all) selects k: its
 * name, or its function's or any of its function's kernels' (the kernels of
 * a function are compiled and run together). */
bool tir_kernel_selected(const tir_kernel *k, const char *filter);

/* Printer (tir_print.c): deterministic text for --emit=tir and golden tests. */
void tir_print_module(tlc_strbuf *sb, const tir_module *m);
void tir_print_kernel(tlc_strbuf *sb, const tir_kernel *k);
void tir_print_expr(tlc_strbuf *sb, const tir_expr *e);
void tir_print_region(tlc_strbuf *sb, const tir_region *r);

/* Verifier (tir_verify.c): structural invariants every pass must keep
 * (ids dense and unique, regions in range where constant, tile-op operand
 * scopes and dtypes, loads / stores of in-scope buffers, ...). Reports
 * through diag as internal errors; returns true when the IR is well formed. */
bool tir_verify_module(const tir_module *m, tlc_diag *diag);
#endif
