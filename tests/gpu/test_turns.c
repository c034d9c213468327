/* gpu/turns: warpgroup turns (docs/language.md 11.4) beyond MLA, on sm_90a:
 * tests/gpu/turns_attention.tl, an attention loop over key blocks in a
 * persistent warp-specialized kernel, with turns=True (the row sum before
 * the output gemm, and after it: a late statement) and turns=False,
 * against a float64 reference:
 *   |out - ref| <= 2e-3 + 1e-2 * |ref|
 * Sequence lengths with an even and an odd number of key blocks (the last
 * block owned by either warpgroup) and a single block; batches that give
 * a block one tile or several.
 *
 *   test_turns [path/to/turns_attention.tl]
 * Exits 0 when every case passes, 1 otherwise, 77 without an sm_90 GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpu_test_support.h"
#include "tlc/tlc.h"

#ifndef TLC_SOURCE_DIR
#define TLC_SOURCE_DIR "."
#endif

enum { DIM = 128 };
typedef struct tcase { int64_t batch, seq; } tcase;
static const tcase CASES[] = {{2, 1024}, {3, 1088}, {1, 64}, {40, 128}, {2, 192}};
enum { NCASES = sizeof CASES / sizeof CASES[0] };

static void reference(const tcase *c, const float *q, const float *k, const float *v, float *out) {
    double *s = malloc(sizeof(double) * (size_t)c->seq), acc[DIM];
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t i = 0; i < c->seq; i++) {
            const float *qi = q + (b * c->seq + i) * DIM;
            double m = -INFINITY, l = 0;
            for (int64_t j = 0; j < c->seq; j++) {
                const float *kj = k + (b * c->seq + j) * DIM;
                double d = 0;
                for (int t = 0; t < DIM; t++) d += (double)qi[t] * kj[t];
                s[j] = d;
                if (d > m) m = d;
            }
            for (int t = 0; t < DIM; t++) acc[t] = 0;
            for (int64_t j = 0; j < c->seq; j++) {
                double p = exp2(s[j] - m);
                l += p;
                const float *vj = v + (b * c->seq + j) * DIM;
                for (int t = 0; t < DIM; t++) acc[t] += p * vj[t];
            }
            for (int t = 0; t < DIM; t++) out[(b * c->seq + i) * DIM + t] = (float)(acc[t] / l);
        }
    free(s);
}

static int run_case(tlrt_context *ctx, tlrt_kernel *kern, const char *what, const tcase *c, uint64_t seed) {
    int64_t n = c->batch * c->seq * DIM;
    size_t bytes = sizeof(uint16_t) * (size_t)n;
    uint16_t *h[4];
    float *f[3], *got = malloc(sizeof(float) * (size_t)n), *ref = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < 4; i++) h[i] = malloc(bytes);
    for (int i = 0; i < 3; i++) {
        f[i] = malloc(sizeof(float) * (size_t)n);
        for (int64_t e = 0; e < n; e++) {
            h[i][e] = gts_encode(TLRT_F16, (float)gts_unif(&seed, -1.0, 1.0));
            f[i][e] = gts_decode(TLRT_F16, h[i][e]);
        }
    }
    reference(c, f[0], f[1], f[2], ref);
    tlrt_devptr d[4] = {0};
    int bad = 1;
    for (int i = 0; i < 4; i++)
        if (tlrt_malloc(ctx, bytes, &d[i]) != TLRT_SUCCESS) {
            printf("FAIL malloc: %s\n", tlrt_last_error(ctx));
            goto out;
        }
    for (int i = 0; i < 3; i++) tlrt_memcpy_htod(ctx, d[i], h[i], bytes);
    tlrt_memset_d8(ctx, d[3], 0xff, bytes);
    int64_t shape[3] = {c->batch, c->seq, DIM};
    tlrt_arg args[4];
    for (int i = 0; i < 4; i++) args[i] = tlrt_arg_tensor(d[i], TLRT_F16, 3, shape, NULL);
    if (tlrt_launch(kern, args, 4, NULL) != TLRT_SUCCESS || tlrt_synchronize(ctx) != TLRT_SUCCESS) {
        printf("FAIL %s b=%lld s=%lld: %s\n", what, (long long)c->batch, (long long)c->seq, tlrt_last_error(ctx));
        goto out;
    }
    tlrt_memcpy_dtoh(ctx, h[3], d[3], bytes);
    for (int64_t e = 0; e < n; e++) got[e] = gts_decode(TLRT_F16, h[3][e]);
    double worst = 0;
    int64_t nbad = gts_compare("out", got, ref, n, 2e-3, 1e-2, &worst);
    printf("%s %s b=%lld s=%lld: %lld bad, worst error / tolerance %.3f\n", nbad ? "FAIL" : "ok  ", what,
           (long long)c->batch, (long long)c->seq, (long long)nbad, worst);
    bad = nbad != 0;
out:
    for (int i = 0; i < 4; i++) {
        tlrt_free(ctx, d[i]);
        free(h[i]);
    }
    for (int i = 0; i < 3; i++) free(f[i]);
    free(got);
    free(ref);
    return bad;
}

int main(int argc, char **argv) {
    tlrt_context *ctx = NULL;
    tlc_jit *jit = NULL;
    const char *src = NULL;
    size_t len = 0;
    int rc = gts_start_sm90a(argc > 1 ? argv[1] : NULL, "tests/gpu/turns_attention.tl",
                             TLC_SOURCE_DIR "/tests/gpu/turns_attention.tl", "warpgroup turns", &ctx, &jit, &src, &len);
    if (rc) return rc;
    int cases = 0, failures = 0;
    static const struct { const char *what, *turns, *roles, *late_sum; } forms[] = {
        {"turns, late sum", "True", "False", "True"}, {"turns", "True", "False", "False"},
        {"lockstep", "False", "False", "False"},      {"roles, late sum", "True", "True", "True"},
        {"roles", "True", "True", "False"}};
    const char *only = getenv("TLC_TURNS_FORM"); /* TLC_TURNS_FORM=i: form i alone (under compute-sanitizer) */
    for (int f = 0; f < (int)(sizeof forms / sizeof forms[0]); f++) {
        if (only && *only && atoi(only) != f) continue;
        tlc_jit_define defs[3] = {{"turns", forms[f].turns}, {"roles", forms[f].roles}, {"late_sum", forms[f].late_sum}};
        tlrt_module *mod = NULL;
        tlrt_kernel *k = NULL;
        char *err = NULL;
        const char *what = forms[f].what;
        if (tlc_jit_load_kernel(jit, ctx, src, len, "turns_attention.tl", defs, 3, "attn", &mod, &k, &err) != TLC_OK) {
            printf("FAIL %s: cannot load: %s\n", what, err ? err : "?");
            tlc_free(err);
            cases++;
            failures++;
            continue;
        }
        for (int i = 0; i < NCASES; i++) {
            cases++;
            failures += run_case(ctx, k, what, &CASES[i], 0x7e4e0000ull + (uint64_t)(f * 64 + i));
        }
        tlrt_module_unload(ctx, mod);
    }
    printf("test_turns: %d cases, %d failed\n", cases, failures);
    tlc_jit_destroy(jit);
    tlrt_destroy(ctx);
    return failures ? 1 : 0;
}
