/* Kernel metadata: what the runtime needs to know about a compiled kernel to
 * check launch arguments, bind symbolic dims, compute the grid and build TMA
 * descriptors. It travels inside the PTX as comment lines, so one .ptx file
 * carries both (ptxas and the driver ignore comments).
 *
 * ---------------------------------------------------------------------------
 * Text format, version 1. Every line starts with "// tlc.meta " at column 0;
 * tokens are separated by single or multiple blanks. The block is contiguous
 * (other lines in between are ignored, but a second block is an error):
 *
 *   // tlc.meta v1 tlc=0.1.0 arch=sm_90a
 *   // tlc.meta kernel rmsnorm_fwd
 *   // tlc.meta sym M
 *   // tlc.meta tensor X float16 [M,4096] align=16
 *   // tlc.meta tensor Y float16 [M,4096] align=16
 *   // tlc.meta scalar eps float32
 *   // tlc.meta tmap X box=[64,64] estrides=[1,1] swizzle=128B l2=128B oob=zero
 *   // tlc.meta grid (ceildiv M 4) 1 1
 *   // tlc.meta threads 128 1 1
 *   // tlc.meta smem 0
 *   // tlc.meta end
 *
 * - header: format version, tlc version, target arch (sm_80 .. sm_90a).
 * - "kernel NAME" opens a kernel (NAME is the PTX .entry); several kernels may
 *   follow one another. Inside a kernel: sym lines first, then params (tensor
 *   and scalar lines, in declaration order), then tmap, grid, threads, smem.
 * - "sym NAME": a symbolic dim, bound at launch from the tensors' shapes.
 * - "tensor NAME DTYPE [d0,d1,...] align=A [strided]": dims are constants or
 *   sym names; A is the base pointer alignment in bytes the kernel assumes
 *   (power of two, default 16). Tensors are row-major contiguous (dims of
 *   extent 1 excepted), except those marked "strided": the kernel reaches
 *   them only through their tensor maps, so any strides a tensor map takes
 *   (the innermost dim contiguous, the others multiples of 16 bytes) do.
 * - "scalar NAME DTYPE": passed by value.
 * - "tmap TENSOR box=[..] estrides=[..] swizzle=none|32B|64B|128B
 *   l2=none|64B|128B|256B oob=zero|nan": a CUtensorMap to build from that
 *   tensor at launch; box and estrides are listed like the shape (outermost
 *   dim first); the runtime reverses them for the driver (innermost first).
 * - "view E E ..." (optional, right after a tmap line): the map is built
 *   over a row-major view of the tensor's elements with these dims
 *   (expressions as the grid's, outermost first, one per box entry), not
 *   over the tensor's shape: a `T.Tensor(shape, dtype, X.data)` view. The
 *   tensor is then contiguous, and the view's dims are checked against its
 *   element count at launch. The tmap line's box and estrides have the
 *   view's rank.
 * - "im2col LOWER UPPER OFFSET_MAX" (right after a tmap line with
 *   "mode=im2col", which it completes; "mode=tiled" is the default): that
 *   map is built for TMA's im2col mode (cuTensorMapEncodeIm2col): its
 *   tensor is an image with channels innermost (rank 3..5), box=[1,..,1,
 *   PIXELS,CHANNELS] and estrides the traversal strides. LOWER and UPPER,
 *   expressions as the grid's, are the bounding box's corner offsets in
 *   every spatial dim (from the first and from the last pixel; a
 *   convolution's -pad and pad - dilation * (kernel - 1)); OFFSET_MAX is
 *   the largest im2col offset the kernel adds (dilation * (kernel - 1)).
 *   The runtime refuses a launch where they fall outside TMA's ranges for
 *   the rank (rank 4: corners -128..127, offsets 0..255).
 * - "grid E E E": three expressions; an expression is an integer, a sym name,
 *   an integer scalar param name, or "(OP E E)" with OP one of
 *   + - * // % ceildiv min max  (// and % floor like Python).
 * - "threads X Y Z", "smem BYTES" (dynamic shared memory; default 0).
 * - "cluster E E E" (optional, after the grid line; sm_90 kernels): blocks
 *   per thread block cluster along each axis, expressions as the grid's.
 *   Each must divide the grid's extent on its axis and their product be at
 *   most 8; the runtime launches with cuLaunchKernelEx's cluster dimension.
 *   Not with "persistent".
 * - "divisible SYM M" (optional, after the sym line; added for dynamic-shape
 *   GEMM epilogues): the kernel assumes SYM's value is a multiple of M
 *   (1..65536), e.g. because a TMA map needs 16-byte row strides and the
 *   kernel stores rows of SYM elements in vectors. The runtime refuses a
 *   launch that binds SYM to anything else, naming the tensors with that dim.
 * - "persistent B" (optional, 1..32; added with persistent GEMM kernels): the
 *   grid line is the logical grid of tiles; the runtime launches
 *   (min(tiles, SMs x B), 1, 1) blocks, and each block walks tiles
 *   ctaid.x, ctaid.x + nctaid.x, ... itself. The tile count must be below 2^30.
 * - "tile_counter" (optional, persistent kernels only): the blocks take
 *   their tiles from a counter in global memory instead of a fixed stride.
 *   The kernel has one more PTX parameter, after the tensor maps: a pointer
 *   to two zeroed u32 (the counter and the count of blocks that finished),
 *   which the runtime keeps per stream and the kernel's last block zeroes
 *   again before it exits.
 * - "pdl" (optional, sm_90 kernels): the kernel calls pdl_sync(), so it is
 *   launched as a programmatic dependent of the stream's previous kernel
 *   (cuLaunchKernelEx with programmatic stream serialization) and waits
 *   for that kernel's completion itself (griddepcontrol.wait) before it
 *   reads anything.
 * - "grid_sync" (optional): the kernel calls sync_grid(), where every block
 *   of the grid waits for all the others, so all of them must be resident
 *   at once: it is launched cooperatively (cuLaunchKernelEx with the
 *   cooperative attribute, or cuLaunchCooperativeKernel), and a grid
 *   larger than the GPU holds at once is refused.
 * - "check LINE:COL EXPR" (optional, at most TLRT_MAX_CHECKS): EXPR, a grid
 *   expression that may also use < <= > >= == != and or (1 or 0), must be
 *   nonzero for every launch; the source's assert at LINE:COL said so.
 * - "function NAME" (optional, after every kernel it launches; added with
 *   functions of several kernels): a source function whose `with Kernel`
 *   blocks compiled to several kernels, launched in order by one call
 *   (tlrt_launch_function) on the function's arguments. Its lines:
 *     "sym", "tensor", "scalar": the function's parameters, as a kernel's
 *       (the arguments a launch takes, in this order);
 *     "check": launch checks on them, as a kernel's;
 *     "workspace NAME DTYPE [d0,d1,...]": device memory the runtime
 *       allocates for each launch (uninitialized), dims as a tensor's
 *       (constants or the function's syms);
 *     "launch KERNEL": the kernels in launch order (1..TLRT_MAX_LAUNCHES),
 *       each described earlier in the block. A kernel's parameters are
 *       function parameters or workspaces of the same name, kind, dtype,
 *       rank and dims.
 *   e.g. (dsl-examples/split_logsumexp.tl)
 *     // tlc.meta function split_logsumexp
 *     // tlc.meta sym M
 *     // tlc.meta sym N
 *     // tlc.meta tensor X float32 [M,N] align=16
 *     // tlc.meta tensor LSE float32 [M] align=16
 *     // tlc.meta workspace part_max float32 [4,M]
 *     // tlc.meta workspace part_sum float32 [4,M]
 *     // tlc.meta launch split_logsumexp_k0
 *     // tlc.meta launch split_logsumexp_k1
 * - "end" closes the block; a block without it (a truncated file) is rejected.
 * dtypes: float16 bfloat16 float32 float8_e4m3 float8_e5m2 int8 int16 int32
 * int64 uint8 uint16 uint32 bool.
 *
 * ---------------------------------------------------------------------------
 * PTX parameter ABI (codegen emits the .entry parameter list in this order):
 *   1. one `.param .u64` per TENSOR param, in declaration order: the global
 *      address of element 0;
 *   2. one `.param .s64` per sym, in sym order: its value (0 <= v <= INT32_MAX);
 *   3. one param per SCALAR param, in declaration order, by value:
 *        float16, bfloat16 -> .b16 (IEEE half / bfloat16 bits)
 *        float32 -> .f32   float8_e4m3, float8_e5m2 -> .b8   int8 -> .s8
 *        bool -> .u8 (0/1)
 *        int32 -> .s32     int64 -> .s64
 *        int16, uint16 -> 16 bits   uint8 -> 8 bits   uint32 -> 32 bits
 *   4. one `.param .align 128 .b8 NAME[128]` per tmap, in tmap order: the
 *      CUtensorMap, used in place: `mov.u64 %rd, NAME; cvta.param.u64 %rd,
 *      %rd;` gives the generic address cp.async.bulk.tensor takes (without
 *      the cvta the H100 faults with a misaligned address).
 *   5. with "tile_counter", one `.param .u64`: the address of the counter pair.
 * Strides are not passed: tensors are contiguous, so they follow from dims.
 * ---------------------------------------------------------------------------
 * Everything here is plain data with no allocation, except tlrt_module_meta's
 * kernel array. No global state. */
#ifndef TLC_METADATA_H
#define TLC_METADATA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TLRT_META_VERSION 1
#define TLRT_META_PREFIX "// tlc.meta "

enum {
    TLRT_MAX_NAME = 64,         /* param / sym names, incl. NUL */
    TLRT_MAX_KERNEL_NAME = 256, /* PTX entry names, incl. NUL */
    TLRT_MAX_RANK = 8,
    TLRT_MAX_TMAP_RANK = 5,
    TLRT_MAX_PARAMS = 32,
    TLRT_MAX_SYMS = 16,
    TLRT_MAX_TMAPS = 8,
    TLRT_MAX_EXPR = 64,         /* nodes per grid expression */
    TLRT_MAX_MAP_EXPRS = 40,    /* expressions of a kernel's tensor maps (view, im2col lines): 5 a map at most */
    TLRT_MAX_KERNELS = 256,     /* per module */
    TLRT_MAX_CHECKS = 8,        /* launch checks per kernel */
    TLRT_MAX_FUNCTIONS = 64,    /* per module */
    TLRT_MAX_LAUNCHES = 16,     /* kernels per function */
    TLRT_MAX_WORKSPACES = 16,   /* per function */
};

/* Same order and names as the compiler's tir_dtype. */
typedef enum {
    TLRT_F16, TLRT_BF16, TLRT_F32, TLRT_F8E4M3, TLRT_I8, TLRT_I32, TLRT_I64, TLRT_BOOL,
    TLRT_I16, TLRT_U8, TLRT_U16, TLRT_U32, TLRT_F8E5M2,
    TLRT_DTYPE_COUNT
} tlrt_dtype;
TLC_API const char *tlrt_dtype_name(tlrt_dtype t);             /* "float16"; "?" when out of range */
TLC_API bool tlrt_dtype_parse(const char *s, tlrt_dtype *out); /* canonical names only */
TLC_API int tlrt_dtype_bytes(tlrt_dtype t);                    /* 0 when out of range */
TLC_API bool tlrt_dtype_is_int(tlrt_dtype t);                  /* every integer dtype and bool */

/* Grid expressions, stored in postfix order. */
typedef enum {
    TLRT_EX_INT,    /* value: the constant */
    TLRT_EX_SYM,    /* value: index into syms */
    TLRT_EX_SCALAR, /* value: index into params (an integer scalar) */
    TLRT_EX_ADD, TLRT_EX_SUB, TLRT_EX_MUL, TLRT_EX_FLOORDIV, TLRT_EX_MOD,
    TLRT_EX_CEILDIV, TLRT_EX_MIN, TLRT_EX_MAX,
    /* 1 or 0: comparisons, and `and` / `or` of values taken as nonzero */
    TLRT_EX_LT, TLRT_EX_LE, TLRT_EX_GT, TLRT_EX_GE, TLRT_EX_EQ, TLRT_EX_NE, TLRT_EX_AND, TLRT_EX_OR,
} tlrt_expr_op;

typedef struct tlrt_expr_node {
    tlrt_expr_op op;
    int64_t value;
} tlrt_expr_node;

typedef struct tlrt_expr {
    int n;
    tlrt_expr_node nodes[TLRT_MAX_EXPR];
} tlrt_expr;

typedef enum { TLRT_PARAM_TENSOR, TLRT_PARAM_SCALAR } tlrt_param_kind;

typedef struct tlrt_param_meta {
    char name[TLRT_MAX_NAME];
    tlrt_param_kind kind;
    tlrt_dtype dtype;
    /* tensors only: */
    int rank;
    int64_t dims[TLRT_MAX_RANK]; /* constant extent (>= 1), or -1 when symbolic */
    int dim_sym[TLRT_MAX_RANK];  /* index into syms, or -1 when constant */
    int align;                   /* base pointer alignment assumed, bytes */
    bool strided;                /* reached only through tensor maps: any strides TMA takes */
} tlrt_param_meta;

typedef enum { TLRT_SWIZZLE_NONE, TLRT_SWIZZLE_32B, TLRT_SWIZZLE_64B, TLRT_SWIZZLE_128B } tlrt_swizzle;
typedef enum { TLRT_L2_NONE, TLRT_L2_64B, TLRT_L2_128B, TLRT_L2_256B } tlrt_l2_promotion;
typedef enum { TLRT_OOB_ZERO, TLRT_OOB_NAN } tlrt_oob_fill;

typedef struct tlrt_tmap_meta {
    int param;                              /* index of a tensor param */
    int rank;                               /* == that tensor's rank, 1..5 */
    uint32_t box[TLRT_MAX_TMAP_RANK];       /* outermost first, 1..256 each */
    uint32_t elem_strides[TLRT_MAX_TMAP_RANK]; /* outermost first, 1..8 each */
    tlrt_swizzle swizzle;
    tlrt_l2_promotion l2;
    tlrt_oob_fill oob;
    /* "mode=im2col" and its "im2col" line: a map for TMA's im2col mode
     * (cuTensorMapEncodeIm2col; rank 3..5, channels innermost). box[rank -
     * 2] is its pixels per column, box[rank - 1] its channels per pixel,
     * the others 1; elem_strides are the traversal strides. The bounding
     * box's lower and upper corner offsets (the same in every spatial dim)
     * and the largest offset the kernel's instructions add are the three
     * expressions from map_exprs[im2col_exprs - 1]. */
    bool im2col;
    int im2col_exprs; /* 0 until the im2col line */
    /* "view" line: the map is built over a row-major view of the tensor's
     * elements whose `rank` dims are the expressions from map_exprs[view -
     * 1] (outermost first), not over the tensor's own shape; 0: none */
    int view;
} tlrt_tmap_meta;

typedef struct tlrt_kernel_meta {
    char name[TLRT_MAX_KERNEL_NAME];
    int nsyms;
    char syms[TLRT_MAX_SYMS][TLRT_MAX_NAME];
    int nparams;
    tlrt_param_meta params[TLRT_MAX_PARAMS];
    int ntmaps;
    tlrt_tmap_meta tmaps[TLRT_MAX_TMAPS];
    int nmap_exprs;
    tlrt_expr map_exprs[TLRT_MAX_MAP_EXPRS]; /* the tmaps' view and im2col expressions */
    tlrt_expr grid[3];
    int threads[3];
    int64_t smem_bytes; /* dynamic shared memory */
    /* Added after v1's first release (lines optional, so old blocks read the same): */
    int64_t sym_multiple[TLRT_MAX_SYMS]; /* "divisible": 0 or 1 = nothing assumed */
    int persistent;                      /* "persistent B": blocks per SM; 0 = an ordinary grid */
    bool tile_counter;                   /* "tile_counter": tiles handed out at run time */
    bool pdl;                            /* "pdl": launched as a programmatic dependent */
    bool grid_sync;                      /* "grid_sync": launched cooperatively (sync_grid) */
    bool has_cluster;                    /* "cluster E E E": launched in thread block clusters */
    tlrt_expr cluster[3];
    /* "check LINE:COL EXPR": a condition on syms and integer scalars (an
     * assert of the source on values known at launch) that every launch
     * must meet, or it is refused naming the line and the values. */
    int nchecks;
    struct { int line, col; tlrt_expr cond; } checks[TLRT_MAX_CHECKS];
} tlrt_kernel_meta;

/* A function of several kernels ("function" lines). */
typedef struct tlrt_function_meta {
    /* name, syms, params and checks of the function; no tmaps, grid 1 1 1,
     * threads 1 1 1 (tlrt_kernel_meta_init): binding a launch's arguments
     * to it is tlrt_plan_launch's work for a kernel */
    tlrt_kernel_meta sig;
    int nworkspaces;
    tlrt_param_meta workspaces[TLRT_MAX_WORKSPACES]; /* tensors; align 16 */
    int nlaunches;
    int launches[TLRT_MAX_LAUNCHES]; /* indices into the module's kernels, in launch order */
} tlrt_function_meta;

typedef struct tlrt_module_meta {
    int version;           /* TLRT_META_VERSION */
    char tlc_version[32];  /* "0.1.0" */
    char arch[16];         /* "sm_90a" */
    int nkernels;
    tlrt_kernel_meta *kernels; /* malloc'd; tlrt_meta_free */
    int nfunctions;
    tlrt_function_meta *functions; /* malloc'd; tlrt_meta_free */
} tlrt_module_meta;

/* Parses the metadata block out of `text` (typically a whole PTX file; need
 * not be NUL-terminated). Returns true and fills *out (free with
 * tlrt_meta_free) on success. On failure returns false, *out is empty and err
 * gets "tlc.meta line N: ..." (line numbers count from 1 in `text`). A text
 * with no metadata line at all fails with "no tlc.meta block". Never crashes
 * on any input. */
TLC_API bool tlrt_meta_parse(const char *text, size_t len, tlrt_module_meta *out, char *err, size_t errlen);
TLC_API void tlrt_meta_free(tlrt_module_meta *m);

/* Checks one kernel's metadata for consistency (the parser calls it; codegen
 * may call it before writing). */
TLC_API bool tlrt_meta_validate_kernel(const tlrt_kernel_meta *k, char *err, size_t errlen);

/* Renders the metadata block (every line ends with '\n'). Returns a malloc'd
 * NUL-terminated string, or NULL with err set when the metadata is invalid. */
TLC_API char *tlrt_meta_format(const tlrt_module_meta *m, char *err, size_t errlen);

/* Checks a function's metadata against the module's kernels (the parser
 * and the writer call it): its signature, workspaces, and that every
 * launched kernel's parameters are parameters or workspaces of it. */
TLC_API bool tlrt_meta_validate_function(const tlrt_module_meta *m, const tlrt_function_meta *f, char *err,
                                         size_t errlen);

/* Finds a kernel by name; NULL when absent. */
TLC_API const tlrt_kernel_meta *tlrt_meta_find(const tlrt_module_meta *m, const char *name);
/* Finds a function by name; NULL when absent. */
TLC_API const tlrt_function_meta *tlrt_meta_find_function(const tlrt_module_meta *m, const char *name);

/* Helpers for writers (codegen). Names longer than the limits, too many
 * entries, etc. make them return -1 (else the new index). */
TLC_API void tlrt_kernel_meta_init(tlrt_kernel_meta *k, const char *name); /* threads 1 1 1, grid 1 1 1 */
TLC_API int tlrt_kernel_meta_add_sym(tlrt_kernel_meta *k, const char *name);
/* dims: rank entries; a dim >= 1 is a constant, a dim < 0 means sym number (-dim - 1). */
TLC_API int tlrt_kernel_meta_add_tensor(tlrt_kernel_meta *k, const char *name, tlrt_dtype dt, int rank,
                                const int64_t *dims, int align);
TLC_API int tlrt_kernel_meta_add_scalar(tlrt_kernel_meta *k, const char *name, tlrt_dtype dt);
/* A function: tlrt_function_meta_init, then its params with the kernel
 * builders on f->sig, then workspaces (dims as for a tensor, over f->sig's
 * syms), then launches (indices of the module's kernels). */
TLC_API void tlrt_function_meta_init(tlrt_function_meta *f, const char *name);
TLC_API int tlrt_function_meta_add_workspace(tlrt_function_meta *f, const char *name, tlrt_dtype dt, int rank,
                                             const int64_t *dims);
TLC_API int tlrt_function_meta_add_launch(tlrt_function_meta *f, int kernel_index);

/* Expressions: parse "(ceildiv M 4)" against a kernel's syms and params, or
 * build postfix node by node (push operands, then the operator). */
TLC_API bool tlrt_expr_parse(const char *text, const tlrt_kernel_meta *k, tlrt_expr *out, char *err, size_t errlen);
TLC_API bool tlrt_expr_push(tlrt_expr *e, tlrt_expr_op op, int64_t value);
/* Evaluates with sym values and integer scalar values (scalars[i] is param i's
 * value; only integer scalars are read). Overflow, division by zero or a
 * malformed expression -> false with err set. */
TLC_API bool tlrt_expr_eval(const tlrt_expr *e, const int64_t *syms, const int64_t *scalars, int64_t *out,
                    char *err, size_t errlen);
/* Well-formed (one result, operands in range)? */
TLC_API bool tlrt_expr_check(const tlrt_expr *e, const tlrt_kernel_meta *k, char *err, size_t errlen);

TLC_API const char *tlrt_swizzle_name(tlrt_swizzle s);  /* "128B" */
TLC_API int tlrt_swizzle_bytes(tlrt_swizzle s);         /* 0, 32, 64, 128 */

#ifdef __cplusplus
}
#endif
#endif
