/* gpu/slot_loop: walks lowered as run-time loops over the slots
 * (lowerkit/slot_loop.c) compute what their unrolled form computes. One
 * kernel, compiled through the JIT for the device's arch and for sm_80,
 * fills a shared tile, copies a global tile into most of it (masked: rows
 * past M and columns past N read 0; N is symbolic and not a multiple of 8,
 * so the accesses are scalar), updates it with a Parallel loop over shared
 * memory, writes a masked Parallel loop over shared and global memory to B,
 * and copies the whole tile out to T. The large configurations (hundreds of
 * slots per thread) take the loop form of all five walks, the small one
 * the unrolled form; both are checked against a host reference:
 *   s = 3 in the tile's last two rows, else A[g] (0 outside A)
 *   S = f16(2 s + 1),  T[g] = S,  B[g] = f16(S - A[g]) inside A
 * Outputs are poisoned with 0xFF (NaN) before each launch, so an element
 * not written fails.
 *
 *   test_slot_loop_gpu
 * Exits 0 when every case passes, 1 otherwise, 77 ("skipped: no CUDA
 * driver") without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu_test_support.h"
#include "tlc/tlc.h"

static const char SOURCE[] =
    "@jit(R=218, C=480, threads=128)\n"
    "def masked_tile(A: Tensor[(M, N), float16], B: Tensor[(M, N), float16], T: Tensor[(MT, NT), float16]):\n"
    "    with Kernel(ceildiv(M, R), ceildiv(N, C), threads=threads) as (bx, by):\n"
    "        S = alloc_shared((R, C), float16)\n"
    "        fill(S, 3.0)\n"
    "        copy(A[bx * R, by * C], S[0:R - 2, 0:C])\n"
    "        for i, j in Parallel(R, C):\n"
    "            S[i, j] = S[i, j] * 2.0 + 1.0\n"
    "        for i, j in Parallel(R, C):\n"
    "            B[bx * R + i, by * C + j] = S[i, j] - A[bx * R + i, by * C + j]\n"
    "        copy(S, T[bx * R, by * C])\n";

typedef struct config {
    int rows, cols, threads;
    int64_t smem; /* bytes of the tile */
} config;
static const config CONFIGS[] = {
    {218, 480, 128, 218 * 480 * 2}, /* 840 slots per thread: loops; more shared memory than sm_80 has */
    {96, 400, 64, 96 * 400 * 2},    /* 600: loops */
    {16, 200, 128, 16 * 200 * 2},   /* 25: unrolled */
};
static const int64_t SHAPES[][2] = {{1, 7}, {300, 1001}, {218, 480}, {437, 963}, {1000, 37}};
enum { NCONFIGS = sizeof CONFIGS / sizeof CONFIGS[0], NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

typedef struct state {
    tlrt_context *ctx;
    int cases, failures;
} state;

static float f16(float v) { return tlrt_f16_to_f32(tlrt_f32_to_f16(v)); }

/* Checks one output element; prints the first few wrong ones. */
static void check(int64_t *bad, const char *what, int64_t i, int64_t j, uint16_t got_bits, float ref) {
    float got = tlrt_f16_to_f32(got_bits);
    if (fabsf(got - ref) <= 1e-3f * fabsf(ref) + 1e-3f) return;
    if (*bad < 3) printf("     %s[%lld,%lld] = %g, expected %g\n", what, (long long)i, (long long)j, got, ref);
    (*bad)++;
}

static void run_shape(state *s, tlrt_kernel *k, const char *arch, const config *c, int64_t M, int64_t N) {
    int64_t MT = (M + c->rows - 1) / c->rows * c->rows, NT = (N + c->cols - 1) / c->cols * c->cols;
    size_t na = (size_t)(M * N), nt = (size_t)(MT * NT);
    uint16_t *ha = malloc(na * 2), *hb = malloc(na * 2), *ht = malloc(nt * 2);
    tlrt_devptr da = 0, db = 0, dt = 0;
    s->cases++;
    const char *fail = NULL;
    if (!ha || !hb || !ht || tlrt_malloc(s->ctx, na * 2, &da) || tlrt_malloc(s->ctx, na * 2, &db) ||
        tlrt_malloc(s->ctx, nt * 2, &dt)) {
        fail = "out of memory";
        goto out;
    }
    uint64_t seed = 0x51075eedull ^ (uint64_t)(M * 131 + N);
    for (size_t i = 0; i < na; i++) ha[i] = tlrt_f32_to_f16((float)gts_unif(&seed, -1.0, 1.0));
    int64_t sa[2] = {M, N}, st[2] = {MT, NT};
    tlrt_arg args[3] = {tlrt_arg_tensor(da, TLRT_F16, 2, sa, NULL), tlrt_arg_tensor(db, TLRT_F16, 2, sa, NULL),
                        tlrt_arg_tensor(dt, TLRT_F16, 2, st, NULL)};
    if (tlrt_memcpy_htod(s->ctx, da, ha, na * 2) || tlrt_memset_d8(s->ctx, db, 0xff, na * 2) ||
        tlrt_memset_d8(s->ctx, dt, 0xff, nt * 2) || tlrt_launch(k, args, 3, NULL) ||
        tlrt_synchronize(s->ctx) || tlrt_memcpy_dtoh(s->ctx, hb, db, na * 2) ||
        tlrt_memcpy_dtoh(s->ctx, ht, dt, nt * 2)) {
        fail = tlrt_last_error(s->ctx);
        goto out;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < MT; i++)
        for (int64_t j = 0; j < NT; j++) {
            bool inside = i < M && j < N;
            float a = inside ? tlrt_f16_to_f32(ha[i * N + j]) : 0.0f;
            float sv = f16(2.0f * (i % c->rows >= c->rows - 2 ? 3.0f : a) + 1.0f);
            check(&bad, "T", i, j, ht[i * NT + j], sv);
            if (inside) check(&bad, "B", i, j, hb[i * N + j], f16(sv - a));
        }
    if (bad) {
        printf("FAIL %-6s R=%3d C=%3d threads=%3d  %4lld x %4lld: %lld elements wrong\n", arch, c->rows, c->cols,
               c->threads, (long long)M, (long long)N, (long long)bad);
        s->failures++;
    } else {
        printf("ok   %-6s R=%3d C=%3d threads=%3d  %4lld x %4lld\n", arch, c->rows, c->cols, c->threads, (long long)M,
               (long long)N);
    }
out:
    if (fail) {
        printf("FAIL %s R=%d C=%d %lldx%lld: %s\n", arch, c->rows, c->cols, (long long)M, (long long)N, fail);
        s->failures++;
    }
    tlrt_free(s->ctx, da);
    tlrt_free(s->ctx, db);
    tlrt_free(s->ctx, dt);
    free(ha);
    free(hb);
    free(ht);
}

/* Every config and shape with the JIT for `arch` (NULL: the device's). */
static void run_arch(state *s, const char *arch) {
    tlc_jit *jit = NULL;
    char *err = NULL;
    tlc_jit_options opt = {.arch = arch, .ctx = s->ctx};
    if (tlc_jit_create(&opt, &jit, &err) != TLC_OK) {
        printf("FAIL tlc_jit_create(%s): %s\n", arch ? arch : "device", err ? err : "?");
        tlc_free(err);
        s->cases++, s->failures++;
        return;
    }
    const char *name = tlc_jit_arch(jit);
    for (int ci = 0; ci < NCONFIGS; ci++) {
        const config *c = &CONFIGS[ci];
        if (c->smem > 160 * 1024 && strncmp(name, "sm_90", 5) != 0) {
            printf("skip %-6s R=%3d C=%3d: %lld bytes of shared memory\n", name, c->rows, c->cols, (long long)c->smem);
            continue;
        }
        char r[16], col[16], th[16];
        snprintf(r, sizeof r, "%d", c->rows);
        snprintf(col, sizeof col, "%d", c->cols);
        snprintf(th, sizeof th, "%d", c->threads);
        tlc_jit_define d[] = {{"R", r}, {"C", col}, {"threads", th}};
        tlrt_module *mod = NULL;
        tlrt_kernel *k = NULL;
        if (tlc_jit_load_kernel(jit, s->ctx, SOURCE, sizeof SOURCE - 1, "slot_loop.tl", d, 3, "masked_tile", &mod, &k,
                                &err) != TLC_OK) {
            printf("FAIL %s R=%d C=%d: cannot load: %s\n", name, c->rows, c->cols, err ? err : "?");
            tlc_free(err);
            err = NULL;
            s->cases++, s->failures++;
            continue;
        }
        for (int si = 0; si < NSHAPES; si++) run_shape(s, k, name, c, SHAPES[si][0], SHAPES[si][1]);
        tlrt_module_unload(s->ctx, mod);
    }
    tlc_jit_destroy(jit);
}

int main(void) {
    state s = {0};
    tlrt_status rs = gts_init_or_skip(&s.ctx);
    if (rs != TLRT_SUCCESS) {
        printf("FAIL tlrt_init: %s\n", tlrt_last_error(s.ctx));
        tlrt_destroy(s.ctx);
        return 1;
    }
    run_arch(&s, NULL);
    run_arch(&s, "sm_80");
    printf("test_slot_loop: %d cases, %d failed\n", s.cases, s.failures);
    tlrt_destroy(s.ctx);
    return s.failures || s.cases == 0 ? 1 : 0;
}
