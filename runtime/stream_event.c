/* Streams and events (timing). */
#include <stdlib.h>
#include "runtime_internal.h"

tlrt_status tlrt_stream_create(tlrt_context *ctx, tlrt_stream **out) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!out) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_stream_create: NULL output");
    *out = NULL;
    tlrt_stream *s = calloc(1, sizeof *s);
    if (!s) return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    CUresult r = ctx->cu.cuStreamCreate(&s->s, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        free(s);
        return tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuStreamCreate");
    }
    s->owned = true;
    *out = s;
    return TLRT_SUCCESS;
}

tlrt_status tlrt_stream_from_handle(tlrt_context *ctx, void *cu_stream, tlrt_stream **out) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!out) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_stream_from_handle: NULL output");
    *out = NULL;
    /* A stream of another CUDA context would only fail later, at a launch,
     * with a less helpful message; drivers without cuStreamGetCtx skip this. */
    if (ctx->cu.cuStreamGetCtx) {
        CUcontext owner = NULL;
        CUresult r = ctx->cu.cuStreamGetCtx((CUstream)cu_stream, &owner);
        if (r != CUDA_SUCCESS) return tlrt_cuda_fail(ctx, r, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_stream_from_handle: cuStreamGetCtx");
        if (owner != ctx->cuctx)
            return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT,
                             "tlrt_stream_from_handle: the stream belongs to another CUDA context than device %d's "
                             "primary context",
                             ctx->device_index);
    }
    tlrt_stream *s = calloc(1, sizeof *s);
    if (!s) return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    s->s = (CUstream)cu_stream;
    s->owned = false;
    *out = s;
    return TLRT_SUCCESS;
}

tlrt_status tlrt_stream_destroy(tlrt_context *ctx, tlrt_stream *s) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || !s) return st;
    CUresult r = s->owned ? ctx->cu.cuStreamDestroy(s->s) : CUDA_SUCCESS; /* a wrapped stream stays its owner's */
    free(s);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuStreamDestroy");
}

tlrt_status tlrt_stream_synchronize(tlrt_context *ctx, tlrt_stream *s) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    CUresult r = ctx->cu.cuStreamSynchronize(s ? s->s : NULL);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_LAUNCH, "cuStreamSynchronize");
}

tlrt_status tlrt_synchronize(tlrt_context *ctx) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    CUresult r = ctx->cu.cuCtxSynchronize();
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_LAUNCH, "cuCtxSynchronize");
}

tlrt_status tlrt_event_create(tlrt_context *ctx, tlrt_event **out) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!out) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_event_create: NULL output");
    *out = NULL;
    tlrt_event *e = calloc(1, sizeof *e);
    if (!e) return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    CUresult r = ctx->cu.cuEventCreate(&e->e, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) {
        free(e);
        return tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuEventCreate");
    }
    *out = e;
    return TLRT_SUCCESS;
}

tlrt_status tlrt_event_destroy(tlrt_context *ctx, tlrt_event *e) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || !e) return st;
    CUresult r = ctx->cu.cuEventDestroy(e->e);
    free(e);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuEventDestroy");
}

tlrt_status tlrt_event_record(tlrt_context *ctx, tlrt_event *e, tlrt_stream *s) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!e) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_event_record: NULL event");
    CUresult r = ctx->cu.cuEventRecord(e->e, s ? s->s : NULL);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuEventRecord");
}

tlrt_status tlrt_event_synchronize(tlrt_context *ctx, tlrt_event *e) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!e) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_event_synchronize: NULL event");
    CUresult r = ctx->cu.cuEventSynchronize(e->e);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_LAUNCH, "cuEventSynchronize");
}

tlrt_status tlrt_event_elapsed_ms(tlrt_context *ctx, tlrt_event *start, tlrt_event *end, float *ms) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!start || !end || !ms) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_event_elapsed_ms: NULL argument");
    CUresult r = ctx->cu.cuEventElapsedTime(ms, start->e, end->e);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuEventElapsedTime");
}
