/* libtlrt: run tlc kernels through the CUDA Driver API.
 *
 * libcuda.so.1 is loaded with dlopen when a context is created, so programs
 * link and run on machines without a GPU; there every call returns
 * TLRT_ERROR_NO_DRIVER and tlrt_last_error says "no CUDA driver
 * (libcuda.so.1 not found)".
 *
 * No global state: the driver handle and its function table live in the
 * tlrt_context the caller creates. A context may be used from several threads
 * (each call makes the CUDA context current on the calling thread); only the
 * tlrt_last_error text is shared, so when threads share a context and fail at
 * once, the message of one of them wins.
 *
 * Kernels carry metadata (include/tlc/metadata.h, which also documents the
 * PTX parameter ABI); tlrt_launch checks the arguments against it, binds the
 * symbolic dims, computes the grid, builds TMA descriptors and launches. */
#ifndef TLC_RUNTIME_H
#define TLC_RUNTIME_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "metadata.h"

#ifdef __cplusplus
#define TLRT_ALIGNAS(n) alignas(n)
extern "C" {
#else
#define TLRT_ALIGNAS(n) _Alignas(n)
#endif

typedef enum {
    TLRT_SUCCESS = 0,
    TLRT_ERROR_NO_DRIVER,        /* libcuda.so.1 missing or unusable */
    TLRT_ERROR_NO_DEVICE,        /* no GPU, or the device index is out of range */
    TLRT_ERROR_INVALID_ARGUMENT, /* NULL where an object is needed, bad sizes, ... */
    TLRT_ERROR_INVALID_METADATA, /* the kernel's tlc.meta block is malformed or missing */
    TLRT_ERROR_NOT_FOUND,        /* no kernel of that name */
    TLRT_ERROR_ARG_MISMATCH,     /* launch arguments do not fit the kernel's metadata */
    TLRT_ERROR_OUT_OF_MEMORY,    /* host or device */
    TLRT_ERROR_MODULE_LOAD,      /* the driver rejected the PTX / cubin (JIT log in the message) */
    TLRT_ERROR_LAUNCH,           /* the driver rejected the launch */
    TLRT_ERROR_UNSUPPORTED,      /* e.g. TMA on a GPU before sm_90, too much shared memory */
    TLRT_ERROR_DRIVER,           /* any other CUDA error (name and text in the message) */
} tlrt_status;

TLC_API const char *tlrt_status_string(tlrt_status s); /* "TLRT_ERROR_NO_DRIVER" */

typedef struct tlrt_context tlrt_context;
typedef struct tlrt_module tlrt_module;
typedef struct tlrt_kernel tlrt_kernel;
typedef struct tlrt_stream tlrt_stream; /* NULL means the legacy default stream */
typedef struct tlrt_event tlrt_event;
typedef uint64_t tlrt_devptr;

typedef struct tlrt_device_props {
    char name[256];
    int sm;                       /* compute capability major*10 + minor: 90 on an H100 */
    int sm_count;
    int max_threads_per_block;
    int max_smem_per_block_optin; /* bytes, with the dynamic shared memory opt-in */
    int max_smem_per_sm;
    int l2_bytes;
    size_t total_mem;             /* bytes */
    int clock_khz, mem_clock_khz, mem_bus_bits;
    int driver_version;           /* e.g. 12040 */
} tlrt_device_props;

typedef struct tlrt_init_options {
    int device;              /* < 0: $TLC_DEVICE if set, else 0 */
    const char *driver_path; /* NULL: "libcuda.so.1" (tests point it at a stand-in) */
} tlrt_init_options;

/* Creates a context on a device (its primary CUDA context). *out is set even
 * on failure (unless out of host memory: then NULL) so that tlrt_last_error
 * explains what went wrong; every call on such a context returns the same
 * status. Always tlrt_destroy what was returned. */
TLC_API tlrt_status tlrt_init(tlrt_context **out, int device);
TLC_API tlrt_status tlrt_init_ex(tlrt_context **out, const tlrt_init_options *opt);
TLC_API void tlrt_destroy(tlrt_context *ctx);
/* Message of the last failed call on ctx ("" when none). NULL ctx: a fixed text. */
TLC_API const char *tlrt_last_error(const tlrt_context *ctx);
TLC_API tlrt_status tlrt_device_properties(tlrt_context *ctx, tlrt_device_props *out);
/* "sm_90a" for sm 90 (tlc targets the arch-specific variant there), else "sm_86" ... */
TLC_API tlrt_status tlrt_device_arch(tlrt_context *ctx, char *buf, size_t len);

/* Device memory. */
TLC_API tlrt_status tlrt_malloc(tlrt_context *ctx, size_t bytes, tlrt_devptr *out);
TLC_API tlrt_status tlrt_free(tlrt_context *ctx, tlrt_devptr p); /* 0 is a no-op */
TLC_API tlrt_status tlrt_memcpy_htod(tlrt_context *ctx, tlrt_devptr dst, const void *src, size_t bytes);
TLC_API tlrt_status tlrt_memcpy_dtoh(tlrt_context *ctx, void *dst, tlrt_devptr src, size_t bytes);
TLC_API tlrt_status tlrt_memcpy_dtod(tlrt_context *ctx, tlrt_devptr dst, tlrt_devptr src, size_t bytes);
TLC_API tlrt_status tlrt_memset_d8(tlrt_context *ctx, tlrt_devptr dst, uint8_t value, size_t bytes);

/* Streams. */
TLC_API tlrt_status tlrt_stream_create(tlrt_context *ctx, tlrt_stream **out);
/* Wraps a CUstream made elsewhere (e.g. PyTorch's
 * torch.cuda.current_stream().cuda_stream, also while it captures a CUDA
 * graph), so that tlrt_launch and the event calls can use it. cu_stream is a
 * CUstream of the context's CUDA context (the device's primary context);
 * NULL is the legacy default stream. Where the driver has cuStreamGetCtx, a
 * stream of another context is refused (TLRT_ERROR_INVALID_ARGUMENT). The
 * wrapper does not own the stream: tlrt_stream_destroy frees only the
 * wrapper, and the stream must outlive every use of it. */
TLC_API tlrt_status tlrt_stream_from_handle(tlrt_context *ctx, void *cu_stream, tlrt_stream **out);
/* Destroys a stream made by tlrt_stream_create; for tlrt_stream_from_handle's
 * wrappers only the wrapper is freed. NULL is a no-op. */
TLC_API tlrt_status tlrt_stream_destroy(tlrt_context *ctx, tlrt_stream *s);
TLC_API tlrt_status tlrt_stream_synchronize(tlrt_context *ctx, tlrt_stream *s); /* NULL: default stream */
TLC_API tlrt_status tlrt_synchronize(tlrt_context *ctx);                        /* the whole context */

/* Modules. PTX text (need not be NUL-terminated) with its tlc.meta block, or
 * a cubin plus the metadata text separately (e.g. the PTX it came from).
 * Metadata is optional: without it kernels can only be launched raw. The
 * driver's JIT error log is part of the error message. */
TLC_API tlrt_status tlrt_module_load_ptx(tlrt_context *ctx, const char *ptx, size_t len, tlrt_module **out);
TLC_API tlrt_status tlrt_module_load_cubin(tlrt_context *ctx, const void *cubin, size_t len, const char *meta_text,
                                   size_t meta_len, tlrt_module **out);
/* PTX -> machine code (a cubin) for the context's device, through the
 * driver's linker: what tlrt_module_load_ptx compiles on every load, made
 * once so that it can be kept (the JIT caches it) and loaded with
 * tlrt_module_load_cubin. *image is malloc'd; the caller frees it. The
 * driver's error log is part of the error message. */
TLC_API tlrt_status tlrt_compile_ptx(tlrt_context *ctx, const char *ptx, size_t len, void **image, size_t *image_len);
/* The most local memory (bytes per thread: spills and stack) that any
 * kernel of the module's metadata uses. The driver's linker compiles PTX as
 * relocatable code, where a warp-specialized kernel whose consumers raise
 * their register count (setmaxnreg) can spill what the PTX's own load
 * keeps in registers: the JIT compares the two before it keeps machine
 * code. TLRT_ERROR_UNSUPPORTED without metadata or without the driver's
 * cuFuncGetAttribute. */
TLC_API tlrt_status tlrt_module_local_bytes(tlrt_module *m, int *max_bytes);
TLC_API tlrt_status tlrt_module_unload(tlrt_context *ctx, tlrt_module *m);
/* The kernel belongs to the module (valid until it is unloaded). */
TLC_API tlrt_status tlrt_kernel_get(tlrt_module *m, const char *name, tlrt_kernel **out);
TLC_API const tlrt_kernel_meta *tlrt_kernel_metadata(const tlrt_kernel *k); /* NULL without metadata */

/* ---- launch arguments ---- */
typedef enum { TLRT_ARG_TENSOR, TLRT_ARG_SCALAR } tlrt_arg_kind;

typedef struct tlrt_arg {
    tlrt_arg_kind kind;
    tlrt_dtype dtype;
    /* tensor: */
    tlrt_devptr ptr;
    int rank;
    const int64_t *shape;   /* rank entries */
    const int64_t *strides; /* rank entries, in elements; NULL: row-major contiguous */
    /* scalar: the value converted to dtype at launch (floats from f, ints from i) */
    double f;
    int64_t i;
} tlrt_arg;

static inline tlrt_arg tlrt_arg_tensor(tlrt_devptr ptr, tlrt_dtype dt, int rank, const int64_t *shape,
                                       const int64_t *strides) {
    tlrt_arg a = {TLRT_ARG_TENSOR, dt, ptr, rank, shape, strides, 0.0, 0};
    return a;
}
static inline tlrt_arg tlrt_arg_float(tlrt_dtype dt, double v) {
    tlrt_arg a = {TLRT_ARG_SCALAR, dt, 0, 0, NULL, NULL, v, 0};
    return a;
}
static inline tlrt_arg tlrt_arg_int(tlrt_dtype dt, int64_t v) {
    tlrt_arg a = {TLRT_ARG_SCALAR, dt, 0, 0, NULL, NULL, 0.0, v};
    return a;
}

/* Checks args against the kernel and launches it on stream (NULL: default).
 * A grid with a zero extent (e.g. zero rows) launches nothing and succeeds. */
TLC_API tlrt_status tlrt_launch(tlrt_kernel *k, const tlrt_arg *args, int nargs, tlrt_stream *stream);

/* Launch without metadata: params as cuLaunchKernel takes them. */
TLC_API tlrt_status tlrt_launch_raw(tlrt_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned smem_bytes,
                            tlrt_stream *stream, void **params);

/* ---- the checking half of tlrt_launch, usable without a GPU ---- */
typedef struct tlrt_tmap_request {
    int param;                 /* tensor param it is built from */
    tlrt_dtype dtype;
    int rank;
    tlrt_devptr address;
    uint64_t global_dim[TLRT_MAX_TMAP_RANK];     /* innermost first, as the driver wants */
    uint64_t global_strides[TLRT_MAX_TMAP_RANK]; /* bytes, rank-1 entries, for dims 1.. */
    uint32_t box[TLRT_MAX_TMAP_RANK];            /* innermost first */
    uint32_t elem_strides[TLRT_MAX_TMAP_RANK];   /* innermost first */
    tlrt_swizzle swizzle;
    tlrt_l2_promotion l2;
    tlrt_oob_fill oob;
    bool im2col;               /* cuTensorMapEncodeIm2col: box[1] pixels per column, box[0] channels per pixel */
    int corner_lower[TLRT_MAX_TMAP_RANK - 2], corner_upper[TLRT_MAX_TMAP_RANK - 2]; /* spatial dims, innermost first */
} tlrt_tmap_request;

enum { TLRT_MAX_PTX_PARAMS = TLRT_MAX_PARAMS + TLRT_MAX_SYMS + TLRT_MAX_TMAPS + 1 /* tile counter */ };

typedef struct tlrt_launch_plan {
    uint32_t grid[3], block[3], smem_bytes;
    uint32_t cluster[3];                  /* blocks per cluster (1 1 1: none) */
    bool empty;                           /* some grid extent is 0: nothing to run */
    int64_t sym_values[TLRT_MAX_SYMS];
    int nslots;                           /* PTX params other than tmaps, in ABI order */
    uint64_t slots[TLRT_MAX_PARAMS + TLRT_MAX_SYMS]; /* each value in the low bytes, little-endian */
    int ntmaps;
    tlrt_tmap_request tmaps[TLRT_MAX_TMAPS];
    TLRT_ALIGNAS(128) unsigned char tmap_storage[TLRT_MAX_TMAPS][128]; /* filled by the launcher */
} tlrt_launch_plan;

/* Validates args against k (count, kind, dtype, rank, constant dims, symbolic
 * dims bound consistently, contiguity, alignment, scalar ranges, TMA stride
 * rules), binds syms, evaluates the grid and packs the param values. On
 * failure returns TLRT_ERROR_ARG_MISMATCH (or INVALID_ARGUMENT for NULLs) and
 * a readable message in err. */
TLC_API tlrt_status tlrt_plan_launch(const tlrt_kernel_meta *k, const tlrt_arg *args, int nargs, tlrt_launch_plan *plan,
                             char *err, size_t errlen);
/* Fills params[] (cuLaunchKernel's kernelParams) pointing into plan; returns
 * the count (-1 when plan or params is NULL). */
TLC_API int tlrt_plan_param_pointers(tlrt_launch_plan *plan, void **params);

/* ---- functions of several kernels ----
 * A source function with several `with Kernel` blocks (or alloc_global
 * workspaces) compiles to kernels NAME_k0, NAME_k1, ... and a "function"
 * record in the metadata. One call launches its kernels in order on one
 * stream with the function's arguments; its workspaces live in device
 * memory the module keeps per stream: allocated by the first launch on a
 * stream that needs them (or more than it has; growing synchronizes that
 * stream first), reused by every later launch, so that repeated launches,
 * and CUDA graph capture after a first launch of the same or larger sizes,
 * allocate nothing. Freed by tlrt_module_unload. Workspaces start
 * uninitialized, and launches of the module's functions on one stream
 * share that memory (they run one after another there). */
typedef struct tlrt_function tlrt_function;
/* The function belongs to the module (valid until it is unloaded). */
TLC_API tlrt_status tlrt_function_get(tlrt_module *m, const char *name, tlrt_function **out);
TLC_API const tlrt_function_meta *tlrt_function_metadata(const tlrt_function *f); /* NULL for NULL */
/* args: the function's parameters in order (tlrt_function_metadata(f)->sig),
 * checked as tlrt_launch checks a kernel's, before anything is launched. */
TLC_API tlrt_status tlrt_launch_function(tlrt_function *f, const tlrt_arg *args, int nargs, tlrt_stream *stream);

/* The checking half of tlrt_launch_function, usable without a GPU. */
typedef struct tlrt_function_plan {
    int64_t sym_values[TLRT_MAX_SYMS];                      /* the function's syms, bound by args */
    int64_t ws_shape[TLRT_MAX_WORKSPACES][TLRT_MAX_RANK];
    uint64_t ws_offset[TLRT_MAX_WORKSPACES];                /* bytes into one allocation, 256-aligned */
    uint64_t ws_bytes;                                      /* that allocation: 0 without workspaces */
} tlrt_function_plan;
/* Checks args against the function's signature (tlrt_plan_launch's rules,
 * launch checks included) and sizes its workspaces. */
TLC_API tlrt_status tlrt_plan_function(const tlrt_function_meta *f, const tlrt_arg *args, int nargs,
                                       tlrt_function_plan *plan, char *err, size_t errlen);
/* The arguments of kernel k (one the function launches): each of its
 * parameters from args by name, or a workspace at ws_base + its offset
 * (shapes point into plan). out has room for TLRT_MAX_PARAMS; returns the
 * count, or -1 with err set. */
TLC_API int tlrt_function_kernel_args(const tlrt_function_meta *f, const tlrt_kernel_meta *k,
                                      const tlrt_function_plan *plan, const tlrt_arg *args, int nargs,
                                      tlrt_devptr ws_base, tlrt_arg *out, char *err, size_t errlen);

/* Events (timing). */
TLC_API tlrt_status tlrt_event_create(tlrt_context *ctx, tlrt_event **out);
TLC_API tlrt_status tlrt_event_destroy(tlrt_context *ctx, tlrt_event *e);
TLC_API tlrt_status tlrt_event_record(tlrt_context *ctx, tlrt_event *e, tlrt_stream *s);
TLC_API tlrt_status tlrt_event_synchronize(tlrt_context *ctx, tlrt_event *e);
TLC_API tlrt_status tlrt_event_elapsed_ms(tlrt_context *ctx, tlrt_event *start, tlrt_event *end, float *ms);

/* Narrow float formats as the GPU stores them: f16, bf16, e4m3 (OCP FP8
 * "fn": bias 7, no infinities, NaN 0x7f / 0xff, max 448) and e5m2 (OCP FP8:
 * bias 15, infinities 0x7c / 0xfc, NaN 0x7e, max 57344). Rounding is to
 * nearest, ties to even, whatever the FPU's rounding mode; f16 and bf16
 * overflow to +-inf, e4m3 and e5m2 saturate to their largest finite value
 * (cvt.rn.satfinite, the conversion tlc's kernels use). */
/* For scalar kernel parameters: a NaN keeps its sign in f16 and bf16 (bf16:
 * also the top of its payload, made quiet); f16 -> f32 keeps a NaN's
 * payload. */
TLC_API uint16_t tlrt_f32_to_f16(float f);
TLC_API uint16_t tlrt_f32_to_bf16(float f);
TLC_API uint8_t tlrt_f32_to_e4m3(float f);
TLC_API uint8_t tlrt_f32_to_e5m2(float f);
TLC_API float tlrt_f16_to_f32(uint16_t h);
TLC_API float tlrt_bf16_to_f32(uint16_t h);
TLC_API float tlrt_e4m3_to_f32(uint8_t b);
TLC_API float tlrt_e5m2_to_f32(uint8_t b);
/* From doubles, rounded once (no double rounding through float: the Tile IR
 * interpreter stores its double results this way). A NaN becomes the
 * format's canonical NaN (0x7e00, 0x7fc0, 0x7f); decoding gives +-NaN. */
TLC_API uint16_t tlrt_f64_to_f16(double x);
TLC_API uint16_t tlrt_f64_to_bf16(double x);
TLC_API uint8_t tlrt_f64_to_e4m3(double x);
TLC_API uint8_t tlrt_f64_to_e5m2(double x);
TLC_API double tlrt_f16_to_f64(uint16_t h);
TLC_API double tlrt_bf16_to_f64(uint16_t h);
TLC_API double tlrt_e4m3_to_f64(uint8_t b);
TLC_API double tlrt_e5m2_to_f64(uint8_t b);
/* x rounded to the nearest value of the format, as a double (NaN as is). */
TLC_API double tlrt_round_f16(double x);
TLC_API double tlrt_round_bf16(double x);
TLC_API double tlrt_round_e4m3(double x);
TLC_API double tlrt_round_e5m2(double x);

#ifdef __cplusplus
}
#endif
#endif
