/* What the JIT-driven GPU test programs (test_gemm.c, test_mla.c,
 * test_rmsnorm.c) share: starting the runtime or skipping, a seeded
 * generator for inputs, the source reader and 16-bit float encoding.
 * Header-only; each program is one file. */
#ifndef TLC_GPU_TEST_SUPPORT_H
#define TLC_GPU_TEST_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "tlc/runtime.h"

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

#endif
