/* Object layouts shared by the files of libtlrt. */
#ifndef TLRT_RUNTIME_INTERNAL_H
#define TLRT_RUNTIME_INTERNAL_H
#include <pthread.h>
#include <stdatomic.h>
#include "cuda_api.h"
#include "tlc/runtime.h"

enum { TLRT_ERR_CAP = 8192, TLRT_TILE_COUNTER_STREAMS = 64, TLRT_WORKSPACE_STREAMS = 64 };

struct tlrt_context {
    tlrt_cuda cu;
    tlrt_status init_status; /* TLRT_SUCCESS once usable */
    char init_error[512];
    int device_index;
    CUdevice dev;
    CUcontext cuctx;
    tlrt_device_props props;
    pthread_mutex_t err_lock;
    char err[TLRT_ERR_CAP];
};

struct tlrt_kernel {
    tlrt_module *module;
    CUfunction fn;
    const tlrt_kernel_meta *meta; /* into module->meta, or NULL */
    char name[TLRT_MAX_KERNEL_NAME];
    atomic_int smem_attr;         /* dynamic smem size the attribute was raised to */
    /* A kernel with a run-time tile scheduler (metadata "tile_counter"):
     * one zeroed counter pair per stream, so that launches on different
     * streams never share one. Allocated when the kernel is looked up (not
     * at launch, which may be under CUDA graph capture); a stream takes the
     * next free pair at its first launch. */
    pthread_mutex_t counter_lock;
    CUdeviceptr counters;         /* TLRT_TILE_COUNTER_STREAMS pairs of u32 */
    CUstream counter_stream[TLRT_TILE_COUNTER_STREAMS];
    int ncounter_streams;
};

/* A function of several kernels (metadata "function"), looked up once. */
struct tlrt_function {
    tlrt_module *module;
    const tlrt_function_meta *meta; /* into module->meta */
    tlrt_kernel *kernels[TLRT_MAX_LAUNCHES]; /* in launch order */
};

struct tlrt_module {
    tlrt_context *ctx;
    CUmodule mod;
    bool has_meta;
    tlrt_module_meta meta;
    pthread_mutex_t lock; /* guards kernels, functions and workspaces */
    int nkernels, cap;
    tlrt_kernel **kernels; /* looked-up kernels, owned */
    int nfunctions, fcap;
    tlrt_function **functions; /* looked-up functions, owned */
    /* The functions' workspace memory, one allocation per stream that
     * launched a function (function.c). */
    int nworkspaces;
    struct { CUstream stream; CUdeviceptr ptr; size_t bytes; } workspaces[TLRT_WORKSPACE_STREAMS];
};

struct tlrt_stream {
    CUstream s;
    bool owned; /* made by tlrt_stream_create; false for tlrt_stream_from_handle's wrappers */
};
struct tlrt_event { CUevent e; };

/* Records a message as ctx's last error and returns st. */
tlrt_status tlrt_fail(tlrt_context *ctx, tlrt_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Entry check: ctx usable? makes its CUDA context current on this thread. */
tlrt_status tlrt_enter(tlrt_context *ctx);
/* Maps a CUDA error to a status and records "what: CUDA_ERROR_X (text)". */
tlrt_status tlrt_cuda_fail(tlrt_context *ctx, CUresult r, tlrt_status st, const char *what);
#endif
