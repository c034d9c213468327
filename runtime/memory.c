/* Device memory: allocation, copies, memset (synchronous forms). */
#include <stdio.h>
#include "runtime_internal.h"

tlrt_status tlrt_malloc(tlrt_context *ctx, size_t bytes, tlrt_devptr *out) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!out) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_malloc: NULL output");
    *out = 0;
    if (bytes == 0) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_malloc: zero bytes requested");
    CUdeviceptr p = 0;
    CUresult r = ctx->cu.cuMemAlloc(&p, bytes);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuMemAlloc of %zu bytes", bytes);
        return tlrt_cuda_fail(ctx, r, TLRT_ERROR_OUT_OF_MEMORY, what);
    }
    *out = p;
    return TLRT_SUCCESS;
}

tlrt_status tlrt_free(tlrt_context *ctx, tlrt_devptr p) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || p == 0) return st;
    CUresult r = ctx->cu.cuMemFree(p);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_INVALID_ARGUMENT, "cuMemFree");
}

static tlrt_status copy_result(tlrt_context *ctx, CUresult r, const char *what) {
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_INVALID_ARGUMENT, what);
}

tlrt_status tlrt_memcpy_htod(tlrt_context *ctx, tlrt_devptr dst, const void *src, size_t bytes) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || bytes == 0) return st;
    if (!dst || !src) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_memcpy_htod: NULL pointer");
    return copy_result(ctx, ctx->cu.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

tlrt_status tlrt_memcpy_dtoh(tlrt_context *ctx, void *dst, tlrt_devptr src, size_t bytes) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || bytes == 0) return st;
    if (!dst || !src) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_memcpy_dtoh: NULL pointer");
    return copy_result(ctx, ctx->cu.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

tlrt_status tlrt_memcpy_dtod(tlrt_context *ctx, tlrt_devptr dst, tlrt_devptr src, size_t bytes) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || bytes == 0) return st;
    if (!dst || !src) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_memcpy_dtod: NULL pointer");
    return copy_result(ctx, ctx->cu.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
}

tlrt_status tlrt_memset_d8(tlrt_context *ctx, tlrt_devptr dst, uint8_t value, size_t bytes) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || bytes == 0) return st;
    if (!dst) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_memset_d8: NULL pointer");
    return copy_result(ctx, ctx->cu.cuMemsetD8(dst, value, bytes), "cuMemsetD8");
}
