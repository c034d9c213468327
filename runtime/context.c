/* Context: driver loading, device selection, the primary CUDA context, device
 * properties and the per-context error text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"
#include "text_util.h"

const char *tlrt_status_string(tlrt_status s) {
    switch (s) {
    case TLRT_SUCCESS: return "TLRT_SUCCESS";
    case TLRT_ERROR_NO_DRIVER: return "TLRT_ERROR_NO_DRIVER";
    case TLRT_ERROR_NO_DEVICE: return "TLRT_ERROR_NO_DEVICE";
    case TLRT_ERROR_INVALID_ARGUMENT: return "TLRT_ERROR_INVALID_ARGUMENT";
    case TLRT_ERROR_INVALID_METADATA: return "TLRT_ERROR_INVALID_METADATA";
    case TLRT_ERROR_NOT_FOUND: return "TLRT_ERROR_NOT_FOUND";
    case TLRT_ERROR_ARG_MISMATCH: return "TLRT_ERROR_ARG_MISMATCH";
    case TLRT_ERROR_OUT_OF_MEMORY: return "TLRT_ERROR_OUT_OF_MEMORY";
    case TLRT_ERROR_MODULE_LOAD: return "TLRT_ERROR_MODULE_LOAD";
    case TLRT_ERROR_LAUNCH: return "TLRT_ERROR_LAUNCH";
    case TLRT_ERROR_UNSUPPORTED: return "TLRT_ERROR_UNSUPPORTED";
    case TLRT_ERROR_DRIVER: return "TLRT_ERROR_DRIVER";
    }
    return "TLRT_ERROR_UNKNOWN";
}

tlrt_status tlrt_fail(tlrt_context *ctx, tlrt_status st, const char *fmt, ...) {
    if (!ctx) return st;
    pthread_mutex_lock(&ctx->err_lock);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&ctx->err_lock);
    return st;
}

tlrt_status tlrt_cuda_fail(tlrt_context *ctx, CUresult r, tlrt_status st, const char *what) {
    const char *name = NULL, *text = NULL;
    if (ctx->cu.cuGetErrorName) ctx->cu.cuGetErrorName(r, &name);
    if (ctx->cu.cuGetErrorString) ctx->cu.cuGetErrorString(r, &text);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) st = TLRT_ERROR_OUT_OF_MEMORY;
    return tlrt_fail(ctx, st, "%s: %s (%s)", what, name ? name : "CUDA error", text ? text : "no description");
}

const char *tlrt_last_error(const tlrt_context *ctx) {
    if (!ctx) return "no tlrt context (tlrt_init failed for lack of host memory, or NULL was passed)";
    return ctx->err;
}

tlrt_status tlrt_enter(tlrt_context *ctx) {
    if (!ctx) return TLRT_ERROR_INVALID_ARGUMENT;
    if (ctx->init_status != TLRT_SUCCESS) return tlrt_fail(ctx, ctx->init_status, "%s", ctx->init_error);
    CUresult r = ctx->cu.cuCtxSetCurrent(ctx->cuctx);
    if (r != CUDA_SUCCESS) return tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuCtxSetCurrent");
    return TLRT_SUCCESS;
}

static int attr(tlrt_context *ctx, int a) {
    int v = 0;
    if (ctx->cu.cuDeviceGetAttribute(&v, a, ctx->dev) != CUDA_SUCCESS) v = 0;
    return v;
}

static tlrt_status init_fail(tlrt_context *ctx, tlrt_status st) {
    ctx->init_status = st;
    memcpy(ctx->init_error, ctx->err, sizeof ctx->init_error - 1); /* truncation is fine */
    ctx->init_error[sizeof ctx->init_error - 1] = 0;
    if (ctx->cuctx) ctx->cu.cuDevicePrimaryCtxRelease(ctx->dev);
    ctx->cuctx = NULL;
    tlrt_cuda_unload(&ctx->cu);
    return st;
}

/* TLC_DEVICE, when set, must be a plain non-negative integer. */
static bool device_from_env(int *out, char *bad, size_t badlen) {
    const char *e = getenv("TLC_DEVICE");
    *out = 0;
    if (!e || !*e) return true;
    long v = 0;
    for (const char *p = e; *p; p++) {
        if (*p < '0' || *p > '9' || v > 100000) {
            snprintf(bad, badlen, "%.40s", e);
            return false;
        }
        v = v * 10 + (*p - '0');
    }
    *out = (int)v;
    return true;
}

tlrt_status tlrt_init_ex(tlrt_context **out, const tlrt_init_options *opt) {
    if (!out) return TLRT_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    tlrt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return TLRT_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&ctx->err_lock, NULL);
    *out = ctx;
    tlrt_init_options defaults = {-1, NULL};
    if (!opt) opt = &defaults;
    int device = opt->device;
    if (device < 0) {
        char bad[64];
        if (!device_from_env(&device, bad, sizeof bad)) {
            tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "TLC_DEVICE='%s' is not a device index", bad);
            return init_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT);
        }
    }
    ctx->device_index = device;
    char err[400];
    if (!tlrt_cuda_load(&ctx->cu, opt->driver_path, err, sizeof err)) {
        tlrt_fail(ctx, TLRT_ERROR_NO_DRIVER, "%s", err);
        return init_fail(ctx, TLRT_ERROR_NO_DRIVER);
    }
    tlrt_cuda *cu = &ctx->cu;
    CUresult r = cu->cuInit(0);
    if (r != CUDA_SUCCESS) {
        tlrt_status st = r == CUDA_ERROR_NO_DEVICE ? TLRT_ERROR_NO_DEVICE : TLRT_ERROR_NO_DRIVER;
        tlrt_cuda_fail(ctx, r, st, "cuInit failed (no usable GPU or driver)");
        return init_fail(ctx, st);
    }
    int count = 0;
    r = cu->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
        tlrt_cuda_fail(ctx, r, TLRT_ERROR_NO_DEVICE, "cuDeviceGetCount");
        return init_fail(ctx, TLRT_ERROR_NO_DEVICE);
    }
    if (device >= count) {
        tlrt_fail(ctx, TLRT_ERROR_NO_DEVICE, "device %d requested, but %d CUDA device%s present", device, count,
                  count == 1 ? " is" : "s are");
        return init_fail(ctx, TLRT_ERROR_NO_DEVICE);
    }
    if ((r = cu->cuDeviceGet(&ctx->dev, device)) != CUDA_SUCCESS) {
        tlrt_cuda_fail(ctx, r, TLRT_ERROR_NO_DEVICE, "cuDeviceGet");
        return init_fail(ctx, TLRT_ERROR_NO_DEVICE);
    }
    if ((r = cu->cuDevicePrimaryCtxRetain(&ctx->cuctx, ctx->dev)) != CUDA_SUCCESS) {
        ctx->cuctx = NULL;
        tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuDevicePrimaryCtxRetain");
        return init_fail(ctx, TLRT_ERROR_DRIVER);
    }
    if ((r = cu->cuCtxSetCurrent(ctx->cuctx)) != CUDA_SUCCESS) {
        tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuCtxSetCurrent");
        return init_fail(ctx, TLRT_ERROR_DRIVER);
    }
    tlrt_device_props *p = &ctx->props;
    if (cu->cuDeviceGetName(p->name, (int)sizeof p->name - 1, ctx->dev) != CUDA_SUCCESS)
        snprintf(p->name, sizeof p->name, "CUDA device %d", device);
    p->sm = attr(ctx, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
            attr(ctx, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    p->sm_count = attr(ctx, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    p->max_threads_per_block = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    p->max_smem_per_block_optin = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    p->max_smem_per_sm = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    p->l2_bytes = attr(ctx, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    p->clock_khz = attr(ctx, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    p->mem_clock_khz = attr(ctx, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    p->mem_bus_bits = attr(ctx, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    if (cu->cuDeviceTotalMem(&p->total_mem, ctx->dev) != CUDA_SUCCESS) p->total_mem = 0;
    if (cu->cuDriverGetVersion(&p->driver_version) != CUDA_SUCCESS) p->driver_version = 0;
    ctx->init_status = TLRT_SUCCESS;
    ctx->err[0] = 0;
    return TLRT_SUCCESS;
}

tlrt_status tlrt_init(tlrt_context **out, int device) {
    tlrt_init_options o = {device, NULL};
    return tlrt_init_ex(out, &o);
}

void tlrt_destroy(tlrt_context *ctx) {
    if (!ctx) return;
    if (ctx->init_status == TLRT_SUCCESS) {
        ctx->cu.cuDevicePrimaryCtxRelease(ctx->dev);
        tlrt_cuda_unload(&ctx->cu);
    }
    pthread_mutex_destroy(&ctx->err_lock);
    free(ctx);
}

tlrt_status tlrt_device_properties(tlrt_context *ctx, tlrt_device_props *out) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!out) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_device_properties: NULL output");
    *out = ctx->props;
    return TLRT_SUCCESS;
}

tlrt_status tlrt_device_arch(tlrt_context *ctx, char *buf, size_t len) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!buf || len < 8) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_device_arch: buffer too small");
    snprintf(buf, len, "sm_%d%s", ctx->props.sm, ctx->props.sm == 90 ? "a" : "");
    return TLRT_SUCCESS;
}
