/* Modules (PTX through the driver's JIT, or cubin) with their metadata, and
 * kernel lookup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"
#include "text_util.h"

/* Does the module's target arch run on this device? sm_90a only on sm 90. */
static bool arch_fits(const char *arch, int device_sm, char *why, size_t n) {
    int sm = atoi(arch + 3);
    bool specific = arch[strlen(arch) - 1] == 'a';
    if (specific ? sm != device_sm : sm > device_sm) {
        tlrt_errf(why, n, "the module targets %s, the device is sm_%d", arch, device_sm);
        return false;
    }
    return true;
}

static tlrt_status load(tlrt_context *ctx, const void *image, const char *meta_text, size_t meta_len, bool meta_required,
                        tlrt_module **out) {
    tlrt_module *m = calloc(1, sizeof *m);
    if (!m) return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    m->ctx = ctx;
    pthread_mutex_init(&m->lock, NULL);
    if (meta_text) {
        char err[512];
        bool any = false;
        static const char pre[] = "// tlc.meta";
        for (size_t i = 0; i + sizeof pre - 1 <= meta_len && !any; i++)
            any = (i == 0 || meta_text[i - 1] == '\n') && memcmp(meta_text + i, pre, sizeof pre - 1) == 0;
        if (any || meta_required) {
            if (!tlrt_meta_parse(meta_text, meta_len, &m->meta, err, sizeof err)) {
                pthread_mutex_destroy(&m->lock);
                free(m);
                return tlrt_fail(ctx, TLRT_ERROR_INVALID_METADATA, "kernel metadata: %s", err);
            }
            m->has_meta = true;
            if (!arch_fits(m->meta.arch, ctx->props.sm, err, sizeof err)) {
                tlrt_meta_free(&m->meta);
                pthread_mutex_destroy(&m->lock);
                free(m);
                return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED, "cannot load on %s: %s", ctx->props.name, err);
            }
        }
    }
    enum { LOG = 16384 };
    char *errlog = calloc(1, LOG), *infolog = calloc(1, LOG);
    if (!errlog || !infolog) {
        free(errlog);
        free(infolog);
        tlrt_meta_free(&m->meta);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {errlog, (void *)(uintptr_t)(LOG - 1), infolog, (void *)(uintptr_t)(LOG - 1)};
    CUresult r = ctx->cu.cuModuleLoadDataEx(&m->mod, image, 4, opts, vals);
    tlrt_status st = TLRT_SUCCESS;
    if (r != CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        ctx->cu.cuGetErrorName(r, &name);
        ctx->cu.cuGetErrorString(r, &text);
        errlog[LOG - 1] = 0;
        st = tlrt_fail(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? TLRT_ERROR_OUT_OF_MEMORY : TLRT_ERROR_MODULE_LOAD,
                       "module load failed: %s (%s)%s%s", name ? name : "CUDA error", text ? text : "",
                       errlog[0] ? "\nJIT log:\n" : "", errlog);
    }
    free(errlog);
    free(infolog);
    if (st != TLRT_SUCCESS) {
        tlrt_meta_free(&m->meta);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return st;
    }
    *out = m;
    return TLRT_SUCCESS;
}

tlrt_status tlrt_module_load_ptx(tlrt_context *ctx, const char *ptx, size_t len, tlrt_module **out) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!out || !ptx) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_module_load_ptx: NULL argument");
    *out = NULL;
    if (memchr(ptx, 0, len)) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "PTX text contains a NUL byte");
    char *text = malloc(len + 1); /* the driver wants NUL-terminated PTX */
    if (!text) return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(text, ptx, len);
    text[len] = 0;
    st = load(ctx, text, text, len, false, out);
    free(text);
    return st;
}

tlrt_status tlrt_module_load_cubin(tlrt_context *ctx, const void *cubin, size_t len, const char *meta_text,
                                   size_t meta_len, tlrt_module **out) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!out || !cubin || len < 4)
        return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_module_load_cubin: NULL or empty image");
    *out = NULL;
    if (memcmp(cubin, "\x7f" "ELF", 4) != 0)
        return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_module_load_cubin: not an ELF cubin");
    return load(ctx, cubin, meta_text, meta_text ? meta_len : 0, meta_text != NULL, out);
}

tlrt_status tlrt_compile_ptx(tlrt_context *ctx, const char *ptx, size_t len, void **image, size_t *image_len) {
    if (image) *image = NULL;
    if (image_len) *image_len = 0;
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!ptx || !image || !image_len) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_compile_ptx: NULL argument");
    if (memchr(ptx, 0, len)) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "PTX text contains a NUL byte");
    if (!ctx->cu.cuLinkCreate || !ctx->cu.cuLinkAddData || !ctx->cu.cuLinkComplete || !ctx->cu.cuLinkDestroy)
        return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED, "the driver has no linker (cuLinkCreate_v2)");
    enum { LOG = 16384 };
    char *text = malloc(len + 1), *errlog = calloc(1, LOG);
    if (!text || !errlog) {
        free(text);
        free(errlog);
        return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    memcpy(text, ptx, len);
    text[len] = 0;
    int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {errlog, (void *)(uintptr_t)(LOG - 1)};
    CUlinkState link = NULL;
    CUresult r = ctx->cu.cuLinkCreate(2, opts, vals, &link);
    const char *step = "cuLinkCreate";
    if (r == CUDA_SUCCESS) {
        step = "cuLinkAddData";
        r = ctx->cu.cuLinkAddData(link, CU_JIT_INPUT_PTX, text, len + 1, "tlc.ptx", 0, NULL, NULL);
    }
    void *out = NULL;
    size_t n = 0;
    if (r == CUDA_SUCCESS) {
        step = "cuLinkComplete";
        r = ctx->cu.cuLinkComplete(link, &out, &n); /* owned by the link state */
    }
    if (r == CUDA_SUCCESS) {
        *image = malloc(n ? n : 1);
        if (*image) {
            memcpy(*image, out, n);
            *image_len = n;
        } else {
            st = tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
    } else {
        const char *name = NULL;
        ctx->cu.cuGetErrorName(r, &name);
        errlog[LOG - 1] = 0;
        st = tlrt_fail(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? TLRT_ERROR_OUT_OF_MEMORY : TLRT_ERROR_MODULE_LOAD,
                       "%s failed: %s%s%s", step, name ? name : "CUDA error", errlog[0] ? "\nlinker log:\n" : "", errlog);
    }
    if (link) ctx->cu.cuLinkDestroy(link);
    free(text);
    free(errlog);
    return st;
}

tlrt_status tlrt_module_local_bytes(tlrt_module *m, int *max_bytes) {
    if (!m) return TLRT_ERROR_INVALID_ARGUMENT;
    tlrt_context *ctx = m->ctx;
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!max_bytes) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_module_local_bytes: NULL argument");
    *max_bytes = 0;
    if (!m->has_meta) return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED, "the module has no tlc metadata");
    if (!ctx->cu.cuFuncGetAttribute) return tlrt_fail(ctx, TLRT_ERROR_UNSUPPORTED, "the driver has no cuFuncGetAttribute");
    enum { LOCAL_SIZE_BYTES = 3 }; /* CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES */
    for (int i = 0; i < m->meta.nkernels; i++) {
        CUfunction fn = NULL;
        int bytes = 0;
        CUresult r = ctx->cu.cuModuleGetFunction(&fn, m->mod, m->meta.kernels[i].name);
        if (r == CUDA_SUCCESS) r = ctx->cu.cuFuncGetAttribute(&bytes, LOCAL_SIZE_BYTES, fn);
        if (r != CUDA_SUCCESS) return tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuFuncGetAttribute");
        if (bytes > *max_bytes) *max_bytes = bytes;
    }
    return TLRT_SUCCESS;
}

tlrt_status tlrt_module_unload(tlrt_context *ctx, tlrt_module *m) {
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS || !m) return st;
    CUresult r = ctx->cu.cuModuleUnload(m->mod);
    for (int i = 0; i < m->nkernels; i++) {
        if (m->kernels[i]->counters) ctx->cu.cuMemFree(m->kernels[i]->counters);
        pthread_mutex_destroy(&m->kernels[i]->counter_lock);
        free(m->kernels[i]);
    }
    free(m->kernels);
    for (int i = 0; i < m->nfunctions; i++) free(m->functions[i]);
    free(m->functions);
    for (int i = 0; i < m->nworkspaces; i++)
        if (m->workspaces[i].ptr) ctx->cu.cuMemFree(m->workspaces[i].ptr);
    tlrt_meta_free(&m->meta);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return r == CUDA_SUCCESS ? TLRT_SUCCESS : tlrt_cuda_fail(ctx, r, TLRT_ERROR_DRIVER, "cuModuleUnload");
}

tlrt_status tlrt_kernel_get(tlrt_module *m, const char *name, tlrt_kernel **out) {
    if (!m) return TLRT_ERROR_INVALID_ARGUMENT;
    tlrt_context *ctx = m->ctx;
    tlrt_status st = tlrt_enter(ctx);
    if (st != TLRT_SUCCESS) return st;
    if (!name || !out) return tlrt_fail(ctx, TLRT_ERROR_INVALID_ARGUMENT, "tlrt_kernel_get: NULL argument");
    *out = NULL;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i]->name, name) == 0) {
            *out = m->kernels[i];
            pthread_mutex_unlock(&m->lock);
            return TLRT_SUCCESS;
        }
    const tlrt_kernel_meta *meta = m->has_meta ? tlrt_meta_find(&m->meta, name) : NULL;
    if (m->has_meta && !meta) {
        pthread_mutex_unlock(&m->lock);
        return tlrt_fail(ctx, TLRT_ERROR_NOT_FOUND, "no kernel '%.200s' in the module's metadata", name);
    }
    if (strlen(name) >= TLRT_MAX_KERNEL_NAME) {
        pthread_mutex_unlock(&m->lock);
        return tlrt_fail(ctx, TLRT_ERROR_NOT_FOUND, "kernel name too long");
    }
    CUfunction fn = NULL;
    CUresult r = ctx->cu.cuModuleGetFunction(&fn, m->mod, name);
    if (r != CUDA_SUCCESS) {
        pthread_mutex_unlock(&m->lock);
        char what[300];
        snprintf(what, sizeof what, "no kernel '%.200s' in the module (cuModuleGetFunction)", name);
        return tlrt_cuda_fail(ctx, r, TLRT_ERROR_NOT_FOUND, what);
    }
    if (m->nkernels == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        tlrt_kernel **ks = realloc(m->kernels, (size_t)cap * sizeof *ks);
        if (!ks) {
            pthread_mutex_unlock(&m->lock);
            return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
        m->kernels = ks;
        m->cap = cap;
    }
    tlrt_kernel *k = calloc(1, sizeof *k);
    if (!k) {
        pthread_mutex_unlock(&m->lock);
        return tlrt_fail(ctx, TLRT_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    k->module = m;
    k->fn = fn;
    k->meta = meta;
    memcpy(k->name, name, strlen(name) + 1);
    atomic_init(&k->smem_attr, 0);
    pthread_mutex_init(&k->counter_lock, NULL);
    if (meta && meta->tile_counter) {
        size_t bytes = (size_t)TLRT_TILE_COUNTER_STREAMS * 8;
        r = ctx->cu.cuMemAlloc(&k->counters, bytes);
        if (r == CUDA_SUCCESS) r = ctx->cu.cuMemsetD8(k->counters, 0, bytes);
        if (r != CUDA_SUCCESS) {
            if (k->counters) ctx->cu.cuMemFree(k->counters);
            pthread_mutex_destroy(&k->counter_lock);
            free(k);
            pthread_mutex_unlock(&m->lock);
            return tlrt_cuda_fail(ctx, r, TLRT_ERROR_OUT_OF_MEMORY, "allocating the tile counters (cuMemAlloc)");
        }
    }
    m->kernels[m->nkernels++] = k;
    *out = k;
    pthread_mutex_unlock(&m->lock);
    return TLRT_SUCCESS;
}

const tlrt_kernel_meta *tlrt_kernel_metadata(const tlrt_kernel *k) { return k ? k->meta : NULL; }
