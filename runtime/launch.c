/* tlrt_launch: plan (launch_plan.c), then the driver-side work: the dynamic
 * shared memory opt-in, TMA descriptors, a persistent kernel's grid folded
 * onto the SMs, cuLaunchKernel. */
#include <stdio.h>
#include <string.h>
#include "runtime_internal.h"

static int tmap_dtype(tlrt_dtype t) {
    switch (t) {
    case TLRT_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TLRT_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TLRT_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case TLRT_I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case TLRT_I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case TLRT_I16: case TLRT_U16: return CU_TENSOR_MAP_DATA_TYPE_UINT16; /* TMA moves bytes */
    case TLRT_U32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    default: return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* 1-byte types: fp8, int8, uint8, bool */
    }
}

static tlrt_status encode_tmaps(tlrt_context *ctx, tlrt_kernel *k, tlrt_launch_plan *plan) {
    if (!plan->ntmaps) return TLRT_SUCCESS;
    if (ctx->props.sm < 90)
        return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED, "kernel '%s' uses TMA, which needs sm_90 or newer (device: sm_%d)",
                         k->name, ctx->props.sm);
    if (!ctx->cu.cuTensorMapEncodeTiled)
        return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED, "kernel '%s' uses TMA, but the driver lacks cuTensorMapEncodeTiled",
                         k->name);
    for (int t = 0; t < plan->ntmaps; t++) {
        const tlrt_tmap_request *q = &plan->tmaps[t];
        tlrt_cu_tensor_map map;
        memset(&map, 0, sizeof map);
        if (q->im2col && !ctx->cu.cuTensorMapEncodeIm2col)
            return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED,
                             "kernel '%s' uses TMA's im2col mode, but the driver lacks cuTensorMapEncodeIm2col", k->name);
        CUresult r =
            q->im2col
                ? ctx->cu.cuTensorMapEncodeIm2col(&map, tmap_dtype(q->dtype), (unsigned)q->rank,
                                                  (void *)(uintptr_t)q->address, q->global_dim, q->global_strides,
                                                  q->corner_lower, q->corner_upper, q->box[0], q->box[1],
                                                  q->elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, (int)q->swizzle,
                                                  (int)q->l2, (int)q->oob)
                : ctx->cu.cuTensorMapEncodeTiled(&map, tmap_dtype(q->dtype), (unsigned)q->rank,
                                                 (void *)(uintptr_t)q->address, q->global_dim, q->global_strides,
                                                 q->box, q->elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                 (int)q->swizzle, (int)q->l2, (int)q->oob);
        if (r != CUDA_SUCCESS) {
            char what[512];
            snprintf(what, sizeof what, "kernel '%.200s': building the TMA descriptor of '%s' (%s)", k->name,
                     k->meta->params[q->param].name, q->im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled");
            return tlrt_cuda_fail(ctx, r, TLRT_ERROR_ARG_MISMATCH, what);
        }
        memcpy(plan->tmap_storage[t], &map, sizeof map);
    }
    return TLRT_SUCCESS;
}

static tlrt_status raise_smem(tlrt_context *ctx, tlrt_kernel *k, unsigned smem) {
    if (smem <= 48 * 1024 || atomic_load(&k->smem_attr) >= (int)smem) return TLRT_SUCCESS;
    if ((int)smem > ctx->props.max_smem_per_block_optin)
        return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED,
                         "kernel '%s' needs %u bytes of dynamic shared memory; %s allows %d per block", k->name, smem,
                         ctx->props.name, ctx->props.max_smem_per_block_optin);
    CUresult r = ctx->cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    if (r != CUDA_SUCCESS) return tlrt_cuda_fail(ctx, r, TLRT_ERROR_LAUNCH, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    atomic_store(&k->smem_attr, (int)smem);
    return TLRT_SUCCESS;
}

/* The counter pair of the launch's stream (runtime_internal.h). */
static tlrt_status tile_counter(tlrt_context *ctx, tlrt_kernel *k, CUstream s, CUdeviceptr *out) {
    pthread_mutex_lock(&k->counter_lock);
    int i = 0;
    while (i < k->ncounter_streams && k->counter_stream[i] != s) i++;
    if (i == k->ncounter_streams) {
        if (i == TLRT_TILE_COUNTER_STREAMS) {
            pthread_mutex_unlock(&k->counter_lock);
            return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED,
                             "kernel '%s' hands out its tiles through a counter per stream and has been launched on "
                             "%d streams already (at most %d)", k->name, i, TLRT_TILE_COUNTER_STREAMS);
        }
        k->counter_stream[k->ncounter_streams++] = s;
    }
    pthread_mutex_unlock(&k->counter_lock);
    *out = k->counters + (CUdeviceptr)i * 8;
    return TLRT_SUCCESS;
}

/* A kernel that calls pdl_sync() (metadata `pdl`) goes out as a
 * programmatic dependent of the stream's previous kernel: it may start
 * once that kernel's blocks have all run pdl_trigger() or exited, and
 * waits for its completion itself. A driver without cuLaunchKernelEx
 * launches it in order, which its wait then finds complete. A kernel in
 * clusters (metadata `cluster`) goes out with their dimensions, one that
 * calls sync_grid() (metadata `grid_sync`) cooperatively: all its blocks
 * resident at once (tlrt_launch checked that they fit). */
static bool in_clusters(const tlrt_launch_plan *plan) { return plan->cluster[0] * plan->cluster[1] * plan->cluster[2] > 1; }

static CUresult launch(tlrt_context *ctx, tlrt_kernel *k, const tlrt_launch_plan *plan, CUstream s, void **params) {
    const unsigned *grid = plan->grid, *block = plan->block, smem = plan->smem_bytes;
    tlrt_cu_launch_attribute attrs[3];
    unsigned n = 0;
    memset(attrs, 0, sizeof attrs);
    if (k->meta && k->meta->pdl && ctx->cu.cuLaunchKernelEx) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[n++].value.value = 1;
    }
    if (k->meta && k->meta->grid_sync) { /* tlrt_launch checked cuLaunchKernelEx */
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[n++].value.value = 1;
    }
    if (in_clusters(plan)) { /* tlrt_launch checked cuLaunchKernelEx */
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        memcpy(attrs[n++].value.bytes, plan->cluster, sizeof plan->cluster);
    }
    if (n) {
        tlrt_cu_launch_config cfg = {{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, smem, s, attrs, n};
        return ctx->cu.cuLaunchKernelEx(&cfg, k->fn, params, NULL);
    }
    return ctx->cu.cuLaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, s, params, NULL);
}

/* A kernel that calls sync_grid() waits there for every block of its grid:
 * the grid must fit on the GPU at once, or it would wait forever. */
static tlrt_status check_coresident(tlrt_context *ctx, tlrt_kernel *k, const tlrt_launch_plan *plan) {
    if (!ctx->cu.cuLaunchKernelEx || !ctx->cu.cuOccupancyMaxActiveBlocksPerMultiprocessor)
        return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED,
                         "kernel '%s' calls sync_grid(), which needs a cooperative launch (cuLaunchKernelEx, CUDA 12 "
                         "drivers)", k->name);
    int per_sm = 0;
    unsigned threads = plan->block[0] * plan->block[1] * plan->block[2];
    CUresult r = ctx->cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->fn, (int)threads, plan->smem_bytes);
    if (r != CUDA_SUCCESS) return tlrt_cuda_fail(ctx, r, TLRT_ERROR_LAUNCH, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    uint64_t blocks = (uint64_t)plan->grid[0] * plan->grid[1] * plan->grid[2];
    uint64_t fit = (uint64_t)per_sm * (uint64_t)(ctx->props.sm_count > 0 ? ctx->props.sm_count : 0);
    if (blocks > fit)
        return tlrt_fail(ctx, TLRT_ERROR_LAUNCH,
                         "kernel '%s' calls sync_grid(), where every block waits for all the others, so all of its "
                         "%llu blocks must be resident at once, but %s holds at most %llu (%d per SM of %u threads "
                         "and %u bytes of shared memory, %d SMs): launch fewer blocks",
                         k->name, (unsigned long long)blocks, ctx->props.name, (unsigned long long)fit, per_sm, threads,
                         plan->smem_bytes, ctx->props.sm_count);
    return TLRT_SUCCESS;
}

tlrt_status tlrt_launch(tlrt_kernel *k, const tlrt_arg *args, int nargs, tlrt_stream *stream) {
    if (!k) return TLRT_ERROR_INVALID_ARGUMENT;
    tlrt_context *ctx = k->module->ctx;
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!k->meta)
        return tlrt_fail(ctx, TLRT_ERROR_INVALID_METADATA,
                         "kernel '%s' has no tlc metadata; launch it with tlrt_launch_raw", k->name);
    tlrt_launch_plan plan;
    char err[1024];
    st = tlrt_plan_launch(k->meta, args, nargs, &plan, err, sizeof err);
    if (st != TLRT_SUCCESS) return tlrt_fail(ctx, st, "%s", err);
    if (plan.empty) return TLRT_SUCCESS;
    if ((st = raise_smem(ctx, k, plan.smem_bytes)) != TLRT_SUCCESS) return st;
    if ((st = encode_tmaps(ctx, k, &plan)) != TLRT_SUCCESS) return st;
    if (in_clusters(&plan) && !ctx->cu.cuLaunchKernelEx)
        return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED,
                         "kernel '%s' runs in thread block clusters, which need cuLaunchKernelEx (CUDA 12 drivers)",
                         k->name);
    if (k->meta->grid_sync && (st = check_coresident(ctx, k, &plan)) != TLRT_SUCCESS) return st;
    if (k->meta->persistent) { /* persistent: at most the blocks that fit at once; each walks the tiles */
        uint64_t tiles = (uint64_t)plan.grid[0] * plan.grid[1] * plan.grid[2];
        uint64_t fit = (uint64_t)(ctx->props.sm_count > 0 ? ctx->props.sm_count : 1) * (uint64_t)k->meta->persistent;
        plan.grid[0] = (uint32_t)(tiles < fit ? tiles : fit);
        plan.grid[1] = plan.grid[2] = 1;
    }
    void *params[TLRT_MAX_PTX_PARAMS];
    int nparams = tlrt_plan_param_pointers(&plan, params);
    CUdeviceptr counter = 0;
    if (k->meta->tile_counter) {
        if ((st = tile_counter(ctx, k, stream ? stream->s : NULL, &counter)) != TLRT_SUCCESS) return st;
        params[nparams++] = &counter;
    }
    CUresult r = launch(ctx, k, &plan, stream ? stream->s : NULL, params);
    if (r != CUDA_SUCCESS) {
        char what[400];
        snprintf(what, sizeof what, "launching '%s' (grid %u,%u,%u block %u,%u,%u smem %u)", k->name, plan.grid[0],
                 plan.grid[1], plan.grid[2], plan.block[0], plan.block[1], plan.block[2], plan.smem_bytes);
        return tlrt_cuda_fail(ctx, r, TLRT_ERROR_LAUNCH, what);
    }
    return TLRT_SUCCESS;
}

tlrt_status tlrt_launch_raw(tlrt_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned smem_bytes,
                            tlrt_stream *stream, void **params) {
    if (!k) return TLRT_ERROR_INVALID_ARGUMENT;
    tlrt_context *ctx = k->module->ctx;
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!grid || !block) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_launch_raw: NULL grid or block");
    if ((st = raise_smem(ctx, k, smem_bytes)) != TLRT_SUCCESS) return st;
    CUresult r = ctx->cu.cuLaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem_bytes,
                                        stream ? stream->s : NULL, params, NULL);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_LAUNCH, "cuLaunchKernel");
}
