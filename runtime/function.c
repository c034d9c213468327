/* Functions of several kernels: lookup, the per-stream workspace memory,
 * and the launch of the kernels in order (each through tlrt_launch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

/* A workspace address for checking the kernels' arguments before the
 * memory exists: aligned as an allocation is. */
enum { STAND_IN = 1 << 20 };

tlrt_status tlrt_function_get(tlrt_module *m, const char *name, tlrt_function **out) {
    if (!m) return TLRT_ERROR_INVALID_ARGUMENT;
    tlrt_context *ctx = m->ctx;
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!name || !out) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_function_get: NULL argument");
    *out = NULL;
    const tlrt_function_meta *meta = m->has_meta ? tlrt_meta_find_function(&m->meta, name) : NULL;
    if (!meta)
        return tlrt_fail(ctx, TLRT_ERROR_NOT_FOUND, "no function '%.200s' in the module's metadata%s", name,
                         m->has_meta && tlrt_meta_find(&m->meta, name) ? " (it is a kernel: tlrt_kernel_get)" : "");
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->nfunctions; i++)
        if (m->functions[i]->meta == meta) {
            *out = m->functions[i];
            pthread_mutex_unlock(&m->lock);
            return TLRT_SUCCESS;
        }
    pthread_mutex_unlock(&m->lock);
    tlrt_function *f = calloc(1, sizeof *f);
    if (!f) return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    f->module = m;
    f->meta = meta;
    for (int l = 0; l < meta->nlaunches; l++) /* takes the module's lock itself */
        if ((st = tlrt_kernel_get(m, m->meta.kernels[meta->launches[l]].name, &f->kernels[l])) != TLRT_SUCCESS) {
            free(f);
            return st;
        }
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->nfunctions; i++) /* another thread may have been first */
        if (m->functions[i]->meta == meta) {
            *out = m->functions[i];
            pthread_mutex_unlock(&m->lock);
            free(f);
            return TLRT_SUCCESS;
        }
    if (m->nfunctions == m->fcap) {
        int cap = m->fcap ? 2 * m->fcap : 4;
        tlrt_function **fs = realloc(m->functions, (size_t)cap * sizeof *fs);
        if (!fs) {
            pthread_mutex_unlock(&m->lock);
            free(f);
            return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
        m->functions = fs;
        m->fcap = cap;
    }
    m->functions[m->nfunctions++] = f;
    *out = f;
    pthread_mutex_unlock(&m->lock);
    return TLRT_SUCCESS;
}

const tlrt_function_meta *tlrt_function_metadata(const tlrt_function *f) { return f ? f->meta : NULL; }

/* At least `bytes` of the stream's workspace memory. Only a larger need
 * allocates (after the stream finished with the old memory), so a launch
 * under CUDA graph capture that fits what an earlier launch made allocates
 * nothing. */
static tlrt_status workspace(tlrt_context *ctx, tlrt_module *m, const char *fn, CUstream s, size_t bytes,
                             CUdeviceptr *out) {
    pthread_mutex_lock(&m->lock);
    int i = 0;
    while (i < m->nworkspaces && m->workspaces[i].stream != s) i++;
    if (i == m->nworkspaces) {
        if (i == TLRT_WORKSPACE_STREAMS) {
            pthread_mutex_unlock(&m->lock);
            return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED, "function '%s': the module keeps workspaces for %d streams "
                             "at most, and all are taken", fn, TLRT_WORKSPACE_STREAMS);
        }
        m->workspaces[i].stream = s;
        m->workspaces[i].ptr = 0;
        m->workspaces[i].bytes = 0;
        m->nworkspaces++;
    }
    CUresult r = CUDA_SUCCESS;
    if (m->workspaces[i].bytes < bytes) {
        if (m->workspaces[i].ptr) {
            r = ctx->cu.cuStreamSynchronize(s);
            if (r == CUDA_SUCCESS) r = ctx->cu.cuMemFree(m->workspaces[i].ptr);
            if (r == CUDA_SUCCESS) m->workspaces[i].ptr = 0, m->workspaces[i].bytes = 0;
        }
        if (r == CUDA_SUCCESS) r = ctx->cu.cuMemAlloc(&m->workspaces[i].ptr, bytes);
        if (r == CUDA_SUCCESS) m->workspaces[i].bytes = bytes;
        else m->workspaces[i].ptr = 0;
    }
    *out = m->workspaces[i].ptr;
    pthread_mutex_unlock(&m->lock);
    if (r == CUDA_SUCCESS) return TLRT_SUCCESS;
    char what[400];
    snprintf(what, sizeof what, "function '%.200s': allocating %zu bytes of workspaces", fn, bytes);
    return tlrt_cuda_fail(ctx, r, TLRT_ERROR_OUT_OF_MEMORY, what);
}

tlrt_status tlrt_launch_function(tlrt_function *f, const tlrt_arg *args, int nargs, tlrt_stream *stream) {
    if (!f) return TLRT_ERROR_INVALID_ARGUMENT;
    tlrt_context *ctx = f->module->ctx;
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    const tlrt_function_meta *fm = f->meta;
    tlrt_function_plan plan;
    char err[1200];
    if ((st = tlrt_plan_function(fm, args, nargs, &plan, err, sizeof err)) != TLRT_SUCCESS)
        return tlrt_fail(ctx, st, "%s", err);
    /* every kernel's arguments fit before anything runs */
    tlrt_arg kargs[TLRT_MAX_LAUNCHES][TLRT_MAX_PARAMS];
    int nk[TLRT_MAX_LAUNCHES];
    for (int l = 0; l < fm->nlaunches; l++) {
        nk[l] = tlrt_function_kernel_args(fm, f->kernels[l]->meta, &plan, args, nargs, STAND_IN, kargs[l], err,
                                          sizeof err);
        if (nk[l] < 0) return tlrt_fail(ctx, TLRT_ERROR_INVALID_METADATA, "%s", err);
        tlrt_launch_plan lp; /* with a stand-in workspace address: only the real launch needs it */
        if ((st = tlrt_plan_launch(f->kernels[l]->meta, kargs[l], nk[l], &lp, err, sizeof err)) != TLRT_SUCCESS)
            return tlrt_fail(ctx, st, "function '%s': %s", fm->sig.name, err);
    }
    CUdeviceptr base = 0;
    if (plan.ws_bytes &&
        (st = workspace(ctx, f->module, fm->sig.name, stream ? stream->s : NULL, (size_t)plan.ws_bytes, &base)) !=
            TLRT_SUCCESS)
        return st;
    for (int l = 0; l < fm->nlaunches; l++) {
        tlrt_function_kernel_args(fm, f->kernels[l]->meta, &plan, args, nargs, base, kargs[l], err, sizeof err);
        if ((st = tlrt_launch(f->kernels[l], kargs[l], nk[l], stream)) != TLRT_SUCCESS) return st;
    }
    return TLRT_SUCCESS;
}
