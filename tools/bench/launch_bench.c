/* Host cost of a launch through libtlrt: how long tlrt_launch keeps the
 * calling thread busy (argument checks against the metadata, grid, packing,
 * cuLaunchKernel), next to tlrt_launch_raw (the driver call alone, plus the
 * context check) and tlrt_plan_launch (the checks alone, no driver). Each
 * figure is the median over batches of back-to-back calls; the stream is
 * synchronized between batches, outside the timed part, so the driver's
 * launch queue never fills.
 *
 *   launch_bench [--driver PATH] [--ptx FILE --kernel NAME] [--rows M]
 *                [--batch N] [--batches N]
 *
 * --driver: a libcuda to use (default: the real libcuda.so.1; the build's
 * tests/gpu/libtlrt_fake_cuda.so measures libtlrt alone). Without --ptx the
 * kernel is an empty one with the parameters and metadata of
 * dsl-examples/rmsnorm.tl at C = 96 (X, W, Y tensors and the symbolic M), so
 * the GPU does no work. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tlc/runtime.h"

static const char EMPTY_RMSNORM_PTX[] =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel rmsnorm\n"
    "// tlc.meta sym M\n"
    "// tlc.meta tensor X float16 [M,96] align=16\n"
    "// tlc.meta tensor W float16 [96] align=16\n"
    "// tlc.meta tensor Y float16 [M,96] align=16\n"
    "// tlc.meta grid (// (+ M 7) 8) 1 1\n"
    "// tlc.meta threads 128 1 1\n"
    "// tlc.meta smem 0\n"
    "// tlc.meta end\n"
    ".version 8.0\n.target sm_90a\n.address_size 64\n"
    ".visible .entry rmsnorm(.param .u64 x, .param .u64 w, .param .u64 y, .param .u64 m)\n{\n\tret;\n}\n";

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        *len = (size_t)n;
    }
    return buf;
}

typedef enum { MODE_PLAN, MODE_LAUNCH, MODE_RAW } mode;

typedef struct bench {
    tlrt_context *ctx;
    tlrt_kernel *k;
    tlrt_stream *stream;
    tlrt_arg args[3];
    int batch, batches;
} bench;

/* Median ns per call of `m` over b->batches batches of b->batch calls. */
static int run(bench *b, mode m, double *median_ns) {
    double *per = calloc((size_t)b->batches, sizeof *per);
    if (!per) return 1;
    tlrt_launch_plan *plan = malloc(sizeof *plan);
    char err[512];
    const tlrt_kernel_meta *meta = tlrt_kernel_metadata(b->k);
    void *params[TLRT_MAX_PTX_PARAMS];
    if (!plan || tlrt_plan_launch(meta, b->args, 3, plan, err, sizeof err) != TLRT_SUCCESS) {
        fprintf(stderr, "launch_bench: plan: %s\n", plan ? err : "out of memory");
        free(per);
        free(plan);
        return 1;
    }
    tlrt_plan_param_pointers(plan, params);
    for (int r = -2; r < b->batches; r++) { /* two batches of warm-up */
        double t0 = now_ns();
        for (int i = 0; i < b->batch; i++) {
            tlrt_status st = TLRT_SUCCESS;
            switch (m) {
            case MODE_PLAN: st = tlrt_plan_launch(meta, b->args, 3, plan, err, sizeof err); break;
            case MODE_LAUNCH: st = tlrt_launch(b->k, b->args, 3, b->stream); break;
            case MODE_RAW: st = tlrt_launch_raw(b->k, plan->grid, plan->block, plan->smem_bytes, b->stream, params); break;
            }
            if (st != TLRT_SUCCESS) {
                fprintf(stderr, "launch_bench: %s: %s\n", tlrt_status_string(st), tlrt_last_error(b->ctx));
                free(per);
                free(plan);
                return 1;
            }
        }
        double t1 = now_ns();
        if (tlrt_stream_synchronize(b->ctx, b->stream) != TLRT_SUCCESS) {
            fprintf(stderr, "launch_bench: %s\n", tlrt_last_error(b->ctx));
            free(per);
            free(plan);
            return 1;
        }
        if (r >= 0) per[r] = (t1 - t0) / b->batch;
    }
    qsort(per, (size_t)b->batches, sizeof *per, cmp_double);
    *median_ns = per[b->batches / 2];
    free(per);
    free(plan);
    return 0;
}

int main(int argc, char **argv) {
    const char *driver = NULL, *ptx_path = NULL, *kname = "rmsnorm";
    long rows = 7;
    bench b = {0};
    b.batch = 200;
    b.batches = 200;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "launch_bench: %s needs a value (see the comment at the top of launch_bench.c)\n", a);
            return 2;
        }
        if (!strcmp(a, "--driver")) driver = v;
        else if (!strcmp(a, "--ptx")) ptx_path = v;
        else if (!strcmp(a, "--kernel")) kname = v;
        else if (!strcmp(a, "--rows")) rows = atol(v);
        else if (!strcmp(a, "--batch")) b.batch = atoi(v);
        else if (!strcmp(a, "--batches")) b.batches = atoi(v);
        else {
            fprintf(stderr, "launch_bench: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    if (b.batch < 1 || b.batches < 1 || rows < 1) {
        fprintf(stderr, "launch_bench: --batch, --batches and --rows must be positive\n");
        return 2;
    }
    size_t len = sizeof EMPTY_RMSNORM_PTX - 1;
    char *ptx = ptx_path ? read_file(ptx_path, &len) : NULL;
    if (ptx_path && !ptx) {
        fprintf(stderr, "launch_bench: cannot read %s\n", ptx_path);
        return 2;
    }
    tlrt_init_options o = {-1, driver};
    tlrt_status st = tlrt_init_ex(&b.ctx, &o);
    if (st != TLRT_SUCCESS) {
        printf("skipped: %s\n", tlrt_last_error(b.ctx));
        tlrt_destroy(b.ctx);
        free(ptx);
        return st == TLRT_ERROR_NO_DRIVER || st == TLRT_ERROR_NO_DEVICE ? 77 : 1;
    }
    tlrt_module *mod = NULL;
    tlrt_devptr x = 0, w = 0, y = 0;
    int rc = 1;
    const int C = 96;
    if (tlrt_module_load_ptx(b.ctx, ptx ? ptx : EMPTY_RMSNORM_PTX, len, &mod) != TLRT_SUCCESS ||
        tlrt_kernel_get(mod, kname, &b.k) != TLRT_SUCCESS || tlrt_malloc(b.ctx, (size_t)rows * C * 2, &x) != TLRT_SUCCESS ||
        tlrt_malloc(b.ctx, (size_t)C * 2, &w) != TLRT_SUCCESS || tlrt_malloc(b.ctx, (size_t)rows * C * 2, &y) != TLRT_SUCCESS ||
        tlrt_stream_create(b.ctx, &b.stream) != TLRT_SUCCESS) {
        fprintf(stderr, "launch_bench: %s\n", tlrt_last_error(b.ctx));
        goto done;
    }
    int64_t shape[2] = {rows, C}, wshape[1] = {C};
    b.args[0] = tlrt_arg_tensor(x, TLRT_F16, 2, shape, NULL);
    b.args[1] = tlrt_arg_tensor(w, TLRT_F16, 1, wshape, NULL);
    b.args[2] = tlrt_arg_tensor(y, TLRT_F16, 2, shape, NULL);
    tlrt_device_props props;
    tlrt_device_properties(b.ctx, &props);
    double plan_ns, launch_ns, raw_ns;
    if (run(&b, MODE_PLAN, &plan_ns) || run(&b, MODE_RAW, &raw_ns) || run(&b, MODE_LAUNCH, &launch_ns)) goto done;
    printf("device: %s (driver %s), kernel '%s', rows %ld, %d batches of %d calls\n", props.name,
           driver ? driver : "libcuda.so.1", kname, rows, b.batches, b.batch);
    printf("| call | host ns per call (median of batches) |\n| --- | --- |\n");
    printf("| tlrt_plan_launch (checks, grid, packing; no driver) | %.0f |\n", plan_ns);
    printf("| tlrt_launch_raw (context check + cuLaunchKernel) | %.0f |\n", raw_ns);
    printf("| tlrt_launch (all of it) | %.0f |\n", launch_ns);
    printf("| tlrt_launch - tlrt_launch_raw | %.0f |\n", launch_ns - raw_ns);
    rc = 0;
done:
    if (b.stream) tlrt_stream_destroy(b.ctx, b.stream);
    tlrt_free(b.ctx, x);
    tlrt_free(b.ctx, w);
    tlrt_free(b.ctx, y);
    if (mod) tlrt_module_unload(b.ctx, mod);
    tlrt_destroy(b.ctx);
    free(ptx);
    return rc;
}
