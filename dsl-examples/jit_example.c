/* Embedding tlc's JIT in a C program: compile rmsnorm.tl at run time for
 * this GPU, run it on random float16 data and check it against a float64
 * reference computed here.
 *
 *   jit_example [path/to/rmsnorm.tl]
 *
 * Prints "PASS max_abs_err=..." and exits 0; exits 1 on a wrong result or
 * any error, 77 ("skipped: no CUDA driver") where there is no GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tlc/tlc.h"

#ifndef TLC_SOURCE_DIR
#define TLC_SOURCE_DIR "."
#endif

enum { ROWS = 1000, COLS = 1024 };

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static double uniform(double lo, double hi) { /* xorshift64*: reproducible, no global libc state */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    uint64_t r = rng_state * 0x2545f4914f6cdd1dull;
    return lo + (hi - lo) * (double)(r >> 11) / 9007199254740992.0;
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            *len = fread(buf, 1, (size_t)n, f);
            buf[*len] = 0;
        }
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : TLC_SOURCE_DIR "/dsl-examples/rmsnorm.tl";
    tlrt_context *ctx = NULL;
    tlrt_status rs = tlrt_init(&ctx, -1);
    if (rs == TLRT_ERROR_NO_DRIVER || rs == TLRT_ERROR_NO_DEVICE) {
        printf("skipped: no CUDA driver (%s)\n", tlrt_last_error(ctx));
        tlrt_destroy(ctx);
        return 77;
    }
    if (rs != TLRT_SUCCESS) {
        fprintf(stderr, "tlrt_init: %s\n", tlrt_last_error(ctx));
        tlrt_destroy(ctx);
        return 1;
    }

    int rc = 1;
    char *err = NULL, *src = NULL;
    tlc_jit *jit = NULL;
    tlrt_module *mod = NULL;
    tlrt_kernel *kern = NULL;
    tlrt_devptr dx = 0, dw = 0, dy = 0;
    uint16_t *hx = malloc(sizeof(uint16_t) * ROWS * COLS), *hy = malloc(sizeof(uint16_t) * ROWS * COLS);
    uint16_t hw[COLS];
    size_t len = 0;
    if (!hx || !hy) goto out;
    if (!(src = read_text(path, &len))) {
        fprintf(stderr, "%s: cannot read\n", path);
        goto out;
    }

    tlc_jit_options opt = {.ctx = ctx}; /* arch from this GPU, cache in $TLC_CACHE_DIR or ~/.cache/tlc */
    if (tlc_jit_create(&opt, &jit, &err) != TLC_OK) {
        fprintf(stderr, "tlc_jit_create: %s\n", err);
        goto out;
    }
    char cols[16];
    snprintf(cols, sizeof cols, "%d", COLS);
    tlc_jit_define defs[] = {{"C", cols}, {"dtype", "float16"}};
    tlc_status st = tlc_jit_load_kernel(jit, ctx, src, len, path, defs, 2, "rmsnorm", &mod, &kern, &err);
    if (st != TLC_OK) {
        fprintf(stderr, "%s: %s\n", tlc_status_string(st), err);
        goto out;
    }

    for (size_t i = 0; i < (size_t)ROWS * COLS; i++) hx[i] = tlrt_f32_to_f16((float)uniform(-3.0, 3.0));
    for (int j = 0; j < COLS; j++) hw[j] = tlrt_f32_to_f16((float)uniform(0.5, 1.5));
    size_t xbytes = sizeof(uint16_t) * ROWS * COLS;
    if (tlrt_malloc(ctx, xbytes, &dx) || tlrt_malloc(ctx, xbytes, &dy) || tlrt_malloc(ctx, sizeof hw, &dw) ||
        tlrt_memcpy_htod(ctx, dx, hx, xbytes) || tlrt_memcpy_htod(ctx, dw, hw, sizeof hw) ||
        tlrt_memset_d8(ctx, dy, 0xff, xbytes)) { /* poison: 0xffff is a NaN */
        fprintf(stderr, "device memory: %s\n", tlrt_last_error(ctx));
        goto out;
    }
    int64_t xshape[2] = {ROWS, COLS}, wshape[1] = {COLS};
    tlrt_arg args[3] = {tlrt_arg_tensor(dx, TLRT_F16, 2, xshape, NULL), tlrt_arg_tensor(dw, TLRT_F16, 1, wshape, NULL),
                        tlrt_arg_tensor(dy, TLRT_F16, 2, xshape, NULL)};
    if (tlrt_launch(kern, args, 3, NULL) || tlrt_synchronize(ctx) || tlrt_memcpy_dtoh(ctx, hy, dy, xbytes)) {
        fprintf(stderr, "launch: %s\n", tlrt_last_error(ctx));
        goto out;
    }

    /* float64 reference; fp16 output: allow ~2 ulps of the result plus a little. */
    double max_err = 0.0;
    long bad = 0;
    for (int r = 0; r < ROWS; r++) {
        double ss = 0.0;
        for (int j = 0; j < COLS; j++) {
            double v = tlrt_f16_to_f32(hx[(size_t)r * COLS + j]);
            ss += v * v;
        }
        double inv = 1.0 / sqrt(ss / COLS + 1e-5);
        for (int j = 0; j < COLS; j++) {
            size_t i = (size_t)r * COLS + j;
            double ref = tlrt_f16_to_f32(hx[i]) * inv * tlrt_f16_to_f32(hw[j]);
            double got = tlrt_f16_to_f32(hy[i]);
            double e = fabs(got - ref);
            if (!(e <= 1e-2 * fabs(ref) + 1e-3)) {
                if (bad++ < 5) fprintf(stderr, "y[%d,%d] = %g, expected %g\n", r, j, got, ref);
            }
            if (e > max_err || e != e) max_err = e;
        }
    }
    if (bad) {
        printf("FAIL: %ld of %d elements wrong, max_abs_err=%g\n", bad, ROWS * COLS, max_err);
    } else {
        printf("PASS rmsnorm %dx%d float16 on %s, max_abs_err=%.3g\n", ROWS, COLS, tlc_jit_arch(jit), max_err);
        rc = 0;
    }
out:
    tlrt_free(ctx, dx);
    tlrt_free(ctx, dw);
    tlrt_free(ctx, dy);
    if (mod) tlrt_module_unload(ctx, mod);
    tlc_jit_destroy(jit);
    tlc_free(err);
    free(src);
    free(hx);
    free(hy);
    tlrt_destroy(ctx);
    return rc;
}
