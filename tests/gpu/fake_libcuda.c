/* A stand-in for libcuda.so.1, for unit-testing libtlrt's driver-facing code
 * on machines without a GPU. "Device memory" is host memory; a launch runs
 * nothing but records what it was given, which the tests read back through
 * fake_last_launch(). Module images are PTX text; a parameter count per
 * kernel comes from its .entry declaration. Not thread-safe: tests use one
 * thread. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_DEVICE = 101, INVALID_PTX = 218, NOT_FOUND = 500 };

typedef struct fake_launch {
    unsigned grid[3], block[3], smem;
    int nparams;
    uint64_t params[64];   /* first 8 bytes of each */
    uint8_t tmap[128];     /* bytes of the last param when it is a 128-byte block */
    int smem_attr;
    int launches;
    void *stream;          /* the CUstream of the last launch */
} fake_launch;

typedef struct fake_module { char *text; } fake_module;
typedef struct fake_func { fake_module *mod; char name[256]; int nparams; bool last_is_tmap; } fake_func;

static fake_launch last;
static int smem_attr_value;
static int live_allocs;
static int tmap_calls;
static uint64_t tmap_dims[5], tmap_strides[4];
static unsigned tmap_box[5], tmap_rank;

const fake_launch *fake_last_launch(void) { return &last; }
int fake_live_allocs(void) { return live_allocs; }
int fake_tmap_calls(void) { return tmap_calls; }
static int im2col_calls;
int fake_im2col_calls(void) { return im2col_calls; }
void fake_tmap_args(unsigned *rank, uint64_t dims[5], uint64_t strides[4], unsigned box[5]) {
    *rank = tmap_rank;
    memcpy(dims, tmap_dims, sizeof tmap_dims);
    memcpy(strides, tmap_strides, sizeof tmap_strides);
    memcpy(box, tmap_box, sizeof tmap_box);
}

CUresult cuInit(unsigned flags) { return flags == 0 ? OK : INVALID_VALUE; }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return OK; }
CUresult cuGetErrorName(CUresult e, const char **s) {
    *s = e == INVALID_PTX ? "CUDA_ERROR_INVALID_PTX" : e == NOT_FOUND ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_FAKE";
    return OK;
}
CUresult cuGetErrorString(CUresult e, const char **s) { (void)e; *s = "fake driver error"; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? OK : INVALID_DEVICE; }
CUresult cuDeviceGetName(char *name, int len, int d) { (void)d; snprintf(name, (size_t)len, "Fake H100"); return OK; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
    (void)d;
    switch (attr) {
    case 75: *v = 9; break;       /* major */
    case 76: *v = 0; break;       /* minor */
    case 16: *v = 132; break;     /* SMs */
    case 97: *v = 232448; break;  /* smem opt-in */
    case 38: *v = 52428800; break;
    default: *v = 1; break;
    }
    return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int d) { (void)d; *b = (size_t)80 << 30; return OK; }
static int primary_ctx;
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &primary_ctx; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return OK; }
CUresult cuCtxSetCurrent(void *c) { return c == &primary_ctx ? OK : INVALID_VALUE; }
CUresult cuCtxSynchronize(void) { return OK; }
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
    if (n > ((size_t)1 << 40)) return OUT_OF_MEMORY;
    void *m = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!m) return OUT_OF_MEMORY;
    live_allocs++;
    *p = (uintptr_t)m;
    return OK;
}
CUresult cuMemFree_v2(unsigned long long p) { free((void *)(uintptr_t)p); live_allocs--; return OK; }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return OK; }
CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return OK; }
CUresult cuMemcpyDtoD_v2(unsigned long long d, unsigned long long s, size_t n) {
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return OK;
}
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return OK; }
/* stream_obj: what cuStreamCreate makes; external_stream_obj: a stream some
 * other library (PyTorch) made in the same context; foreign_stream_obj: one
 * of another context. */
static int stream_obj, external_stream_obj, foreign_stream_obj, foreign_ctx, event_obj;
static int stream_destroys;
void *fake_external_stream(void) { return &external_stream_obj; }
void *fake_foreign_stream(void) { return &foreign_stream_obj; }
int fake_stream_destroys(void) { return stream_destroys; }
static bool known_stream(void *s) { return !s || s == &stream_obj || s == &external_stream_obj; }
CUresult cuStreamCreate(void **s, unsigned f) { (void)f; *s = &stream_obj; return OK; }
CUresult cuStreamDestroy_v2(void *s) {
    if (s != &stream_obj && s != &external_stream_obj) return INVALID_VALUE;
    stream_destroys++;
    return OK;
}
CUresult cuStreamSynchronize(void *s) { return known_stream(s) ? OK : INVALID_VALUE; }
CUresult cuStreamGetCtx(void *s, void **c) {
    if (s == &foreign_stream_obj) *c = &foreign_ctx;
    else if (known_stream(s)) *c = &primary_ctx;
    else return INVALID_VALUE;
    return OK;
}
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
    const char *text = image;
    if (strstr(text, "FAKE_PTX_ERROR")) {
        for (unsigned i = 0; i < n; i++)
            if (opts[i] == 5) snprintf(vals[i], 64, "ptxas fatal : fake syntax error at line 3");
        return INVALID_PTX;
    }
    fake_module *fm = calloc(1, sizeof *fm);
    fm->text = strdup(text);
    *m = fm;
    return OK;
}
CUresult cuModuleUnload(void *m) {
    fake_module *fm = m;
    free(fm->text);
    free(fm);
    return OK;
}
/* Funcs are kept in a small table owned by the fake (freed never: test only). */
static fake_func funcs[64];
static int nfuncs;
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    fake_module *fm = m;
    char pat[300];
    snprintf(pat, sizeof pat, ".entry %s(", name);
    const char *p = strstr(fm->text, pat);
    if (!p || nfuncs == 64) return NOT_FOUND;
    fake_func *fn = &funcs[nfuncs++];
    fn->mod = fm;
    snprintf(fn->name, sizeof fn->name, "%s", name);
    const char *end = strchr(p, ')');
    const char *lastp = NULL;
    for (const char *q = p; q && q < end; q = strstr(q + 1, ".param")) {
        if (q != p) { fn->nparams++; lastp = q; }
    }
    fn->last_is_tmap = lastp && strstr(lastp, "[128]") && strstr(lastp, "[128]") < end;
    *f = fn;
    return OK;
}
/* CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: `FAKE_LOCAL_BYTES=N` in the module's text, else 0. */
CUresult cuFuncGetAttribute(int *value, int attr, void *f) {
    fake_func *fn = f;
    if (attr != 3 || !fn || !fn->mod) return INVALID_VALUE;
    const char *p = strstr(fn->mod->text, "FAKE_LOCAL_BYTES=");
    *value = p ? atoi(p + strlen("FAKE_LOCAL_BYTES=")) : 0;
    return OK;
}
CUresult cuFuncSetAttribute(void *f, int attr, int value) {
    (void)f;
    if (attr != 8) return INVALID_VALUE;
    smem_attr_value = value;
    return OK;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *s, void **params, void **extra) {
    (void)extra;
    fake_func *fn = f;
    if (!known_stream(s)) return INVALID_VALUE;
    last.stream = s;
    if (smem > 48 * 1024 && (int)smem > smem_attr_value) return INVALID_VALUE;
    last.grid[0] = gx; last.grid[1] = gy; last.grid[2] = gz;
    last.block[0] = bx; last.block[1] = by; last.block[2] = bz;
    last.smem = smem;
    last.nparams = fn->nparams;
    last.smem_attr = smem_attr_value;
    for (int i = 0; i < fn->nparams && i < 64; i++) memcpy(&last.params[i], params[i], 8);
    if (fn->last_is_tmap) memcpy(last.tmap, params[fn->nparams - 1], 128);
    last.launches++;
    return OK;
}
CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = &event_obj; return OK; }
CUresult cuEventDestroy_v2(void *e) { return e == &event_obj ? OK : INVALID_VALUE; }
CUresult cuEventRecord(void *e, void *s) { return e == &event_obj && known_stream(s) ? OK : INVALID_VALUE; }
CUresult cuEventSynchronize(void *e) { return e == &event_obj ? OK : INVALID_VALUE; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 1.5f; return OK; }
CUresult cuTensorMapEncodeIm2col(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                                 const uint64_t *strides, const int *lower, const int *upper, unsigned channels,
                                 unsigned pixels, const unsigned *estrides, int il, int sw, int l2, int oob) {
    (void)dtype; (void)estrides; (void)il; (void)sw; (void)l2; (void)oob; (void)lower; (void)upper;
    if (((uintptr_t)map & 63) != 0) return INVALID_VALUE;
    tmap_calls++;
    im2col_calls++;
    tmap_rank = rank;
    memcpy(tmap_dims, dims, rank * sizeof *dims);
    memcpy(tmap_strides, strides, (rank - 1) * sizeof *strides);
    tmap_box[0] = channels;
    tmap_box[1] = pixels;
    memset(map, 0xab, 128);
    memcpy(map, &addr, sizeof addr);
    return OK;
}
CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box, const unsigned *estrides, int il, int sw,
                                int l2, int oob) {
    (void)dtype; (void)estrides; (void)il; (void)sw; (void)l2; (void)oob;
    if (((uintptr_t)map & 63) != 0) return INVALID_VALUE; /* the real driver needs 64-byte alignment */
    tmap_calls++;
    tmap_rank = rank;
    memcpy(tmap_dims, dims, rank * sizeof *dims);
    memcpy(tmap_strides, strides, (rank - 1) * sizeof *strides);
    memcpy(tmap_box, box, rank * sizeof *box);
    memset(map, 0xab, 128);
    memcpy(map, &addr, sizeof addr);
    return OK;
}
