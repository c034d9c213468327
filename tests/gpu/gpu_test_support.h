/* What the JIT-driven GPU test programs (test_gemm.c, test_mla.c,
 * test_attention.c, test_rmsnorm.c) share: starting the runtime or skipping, a seeded
 * generator for inputs, the source reader and 16-bit float encoding.
 * Header-only; each program is one file. */
#ifndef TLC_GPU_TEST_SUPPORT_H
#define TLC_GPU_TEST_SUPPORT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tlc/runtime.h"
#include "tlc/tlc.h"

/* tlrt_init on the default device. Where there is no driver or GPU it
 * prints "skipped: no CUDA driver (...)" and exits 77, which ctest reports
 * as skipped (never as passed). */
static inline tlrt_status gts_init_or_skip(tlrt_context **ctx) {
    tlrt_status rs = tlrt_init(ctx, -1);
    if (rs == TLRT_ERROR_NO_DRIVER || rs == TLRT_ERROR_NO_DEVICE) {
        printf("skipped: no CUDA driver (%s)\n", tlrt_last_error(*ctx));
        tlrt_destroy(*ctx);
        exit(77);
    }
    return rs;
}

/* splitmix64: reproducible inputs from a seed, the same on every machine. */
static inline uint64_t gts_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi) from 53 random bits. */
static inline double gts_unif(uint64_t *s, double lo, double hi) {
    return lo + (hi - lo) * (double)(gts_splitmix(s) >> 11) / 9007199254740992.0;
}

/* The whole file, NUL-terminated (malloc'd; NULL when it cannot be read). */
static inline char *gts_read_text(const char *path, size_t *len) {
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

/* float <-> float16 / bfloat16 bits (round to nearest even). */
static inline uint16_t gts_encode(tlrt_dtype dt, float v) {
    return dt == TLRT_F16 ? tlrt_f32_to_f16(v) : tlrt_f32_to_bf16(v);
}
static inline float gts_decode(tlrt_dtype dt, uint16_t v) {
    return dt == TLRT_F16 ? tlrt_f16_to_f32(v) : tlrt_bf16_to_f32(v);
}
/* Every 16-bit pattern of dt decoded (65536 floats, malloc'd; NULL when out
 * of memory): checks index it instead of converting. */
static inline float *gts_decode_table(tlrt_dtype dt) {
    float *t = malloc(sizeof(float) * 65536);
    if (t)
        for (uint32_t b = 0; b < 65536; b++) t[b] = gts_decode(dt, (uint16_t)b);
    return t;
}

/* A failed runtime call in a test case: says which case and the runtime's
 * error, and counts the failure. */
static inline void gts_device_failure(tlrt_context *ctx, const char *what, int *failures) {
    printf("FAIL %s: device error: %s\n", what, tlrt_last_error(ctx));
    (*failures)++;
}

/* Compares n floats: |got - ref| <= atol + rtol * |ref|, NaN never
 * passes, infinities of the same sign match. Shows the first three bad
 * ones; *worst gets the largest error / tolerance of the good ones.
 * Returns the number bad. */
static inline int64_t gts_compare(const char *what, const float *got, const float *ref, int64_t n, double atol,
                                  double rtol, double *worst) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        bool same_inf = isinf(g) && isinf(r) && (g > 0) == (r > 0);
        bool ok = same_inf || (!isnan(g) && !isnan(r) && fabs(g - r) <= atol + rtol * fabs(r));
        if (!ok) {
            if (bad < 3) printf("     %s[%lld] = %g, expected %g\n", what, (long long)i, g, r);
            bad++;
        } else if (!same_inf) {
            double q = fabs(g - r) / (atol + rtol * fabs(r));
            if (q > *worst) *worst = q;
        }
    }
    return bad;
}

/* The start the sm_90a JIT tests (test_mla.c, test_attention.c) share:
 * the runtime (or exit 77 without a driver), an sm_90 device (exit 77 on
 * any other, naming `needs`), the DSL source (`file`, else `rel` from the
 * working directory or the source tree) and a JIT for sm_90a. Returns 0 to
 * go on, else the exit code, having said why. */
static inline int gts_start_sm90a(const char *file, const char *rel, const char *src_tree_path, const char *needs,
                                  tlrt_context **ctx, tlc_jit **jit, const char **src, size_t *len) {
    if (!file) file = access(rel, R_OK) == 0 ? rel : src_tree_path;
    if (gts_init_or_skip(ctx) != TLRT_SUCCESS) {
        printf("FAIL tlrt_init: %s\n", tlrt_last_error(*ctx));
        return 1;
    }
    char devarch[32] = "";
    tlrt_device_arch(*ctx, devarch, sizeof devarch);
    if (strncmp(devarch, "sm_90", 5) != 0) {
        printf("skipped: %s needs sm_90a (the device is %s)\n", needs, devarch);
        return 77;
    }
    if (!(*src = gts_read_text(file, len))) {
        printf("FAIL %s: cannot read\n", file);
        return 1;
    }
    char *err = NULL;
    tlc_jit_options opt = {.arch = "sm_90a", .ctx = *ctx};
    if (tlc_jit_create(&opt, jit, &err) != TLC_OK) {
        printf("FAIL tlc_jit_create: %s\n", err ? err : "?");
        tlc_free(err);
        return 1;
    }
    return 0;
}
#endif
