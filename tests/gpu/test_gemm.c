/* gpu/gemm: dsl-examples/gemm.tl through the JIT, both code paths (sm_90a:
 * TMA + wgmma; sm_80: cp.async + ldmatrix + mma.sync, whose PTX the driver
 * also runs on Hopper), float16 and bfloat16, against a float64 reference
 * on the CPU computed from the same rounded inputs.
 *
 * Shapes: squares 64..4096 (and 8192 without --quick), sizes that are not
 * multiples of the block (1000^3, 4104 x 4088 x 4096), LLM shapes M in
 * {1, 16, 128} with N = 7168, K = 2048 (and M = 8192 without --quick), and
 * the fused ReLU. N = 1001 runs
 * on sm_80 and must be refused on sm_90a (the kernel assumes N % 8 == 0,
 * metadata `divisible`). The sm_90a kernels are persistent, and
 * 4104 x 4088 x 4096 gives every block several tiles. Inputs are
 * uniform in [-1, 1) (never zeros); C is poisoned with 0xFF (NaN) before
 * each launch. Small problems are checked everywhere, large ones at 2000
 * random elements plus the four corners:
 *   |c - ref| <= 1e-2 * |ref| + atol * sqrt(K / 3)  (atol 2e-3 f16, 8e-3 bf16)
 * (sqrt(K / 3) is the typical size of an entry, so atol is relative to it.)
 * Also times each path at 4096^3 with CUDA events (tools/bench/gemm_bench.py
 * is the comparison with cuBLAS).
 *
 *   test_gemm_gpu [path/to/gemm.tl] [--quick] [--arch sm_80|sm_90a]
 * (--quick: nothing larger than 4104 x 4088 x 4096; --arch: one path only.)
 * Exits 0 when every case passes, 1 otherwise, 77 ("skipped: no CUDA
 * driver") without a GPU. */
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

typedef struct shape { int64_t m, n, k; bool relu; } shape;
static const shape SHAPES[] = {
    {64, 64, 64, false},       {128, 128, 128, false},  {256, 256, 256, false},    {512, 512, 512, false},
    {2048, 2048, 2048, false}, {1000, 1000, 1000, false}, {4104, 4088, 4096, false}, {1, 7168, 2048, false},
    {16, 7168, 2048, false},   {128, 7168, 2048, false}, {200, 136, 72, true},     {100, 1001, 72, false},
    {4096, 4096, 4096, false}, {8192, 7168, 2048, false}, {8192, 8192, 8192, false},
};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

typedef struct path {
    const char *arch;
    const char *name;
    tlc_jit_define defs[6];
    int ndefs;
} path;
static const path PATHS[] = {
    /* warp-specialized: 2 consumer warpgroups of 64 x 256 + a TMA producer, 1 block per SM */
    {"sm_90a", "sm_90a (TMA + wgmma, WS 128x256)",
     {{"threads", "256"}, {"block_M", "128"}, {"block_N", "256"}, {"num_stages", "4"}}, 4},
    /* the benchmark's usual winner: 256 x 128, 2 consumer warpgroups, column panels of 8 */
    {"sm_90a", "sm_90a (TMA + wgmma, WS 256x128 p8)",
     {{"threads", "256"}, {"block_M", "256"}, {"block_N", "128"}, {"num_stages", "4"}, {"panel_size", "8"}}, 5},
    /* warp-specialized: 1 consumer warpgroup of 128 x 128, 2 blocks per SM */
    {"sm_90a", "sm_90a (TMA + wgmma, WS 128x128)",
     {{"threads", "128"}, {"block_M", "128"}, {"block_N", "128"}, {"num_stages", "3"}}, 4},
    {"sm_80", "sm_80 (cp.async + mma.sync)", {{"threads", "256"}, {"block_K", "32"}, {"num_stages", "4"}}, 3},
    /* float16 accumulators (the instructions' f16 forms); bfloat16 must be refused */
    {"sm_90a", "sm_90a (WS 128x256, f16 acc)",
     {{"threads", "256"}, {"block_M", "128"}, {"block_N", "256"}, {"num_stages", "4"}, {"accum_dtype", "float16"}}, 5},
    {"sm_80", "sm_80 (mma.sync, f16 acc)",
     {{"threads", "256"}, {"block_K", "32"}, {"num_stages", "4"}, {"accum_dtype", "float16"}}, 4},
};

/* Does the path accumulate in float16? */
static bool f16_acc(const path *p) {
    for (int i = 0; i < p->ndefs; i++)
        if (!strcmp(p->defs[i].name, "accum_dtype") && !strcmp(p->defs[i].value, "float16")) return true;
    return false;
}


typedef struct state {
    tlrt_context *ctx;
    const char *src;
    size_t len;
    float *decode[2];
    int cases, failures;
} state;


/* Loads matmul for a path, dtype and relu; NULL (reported) on failure. */
static tlrt_kernel *load(state *s, tlc_jit *jit, const path *p, tlrt_dtype dt, bool relu, tlrt_module **mod) {
    tlc_jit_define defs[8];
    int nd = 0;
    for (int i = 0; i < p->ndefs; i++) defs[nd++] = p->defs[i];
    defs[nd++] = (tlc_jit_define){"dtype", tlrt_dtype_name(dt)};
    defs[nd++] = (tlc_jit_define){"relu", relu ? "True" : "False"};
    tlrt_kernel *k = NULL;
    char *err = NULL;
    if (tlc_jit_load_kernel(jit, s->ctx, s->src, s->len, "gemm.tl", defs, nd, "matmul", mod, &k, &err) != TLC_OK) {
        printf("FAIL %s %s relu=%d: cannot load: %s\n", p->name, tlrt_dtype_name(dt), relu, err ? err : "?");
        tlc_free(err);
        return NULL;
    }
    return k;
}

static void run_case(state *s, tlrt_kernel *k, const path *p, tlrt_dtype dt, const shape *sh) {
    int64_t M = sh->m, N = sh->n, K = sh->k;
    size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hc = malloc(nc * 2);
    tlrt_devptr da = 0, db = 0, dc = 0;
    s->cases++;
    if (!ha || !hb || !hc || tlrt_malloc(s->ctx, na * 2, &da) || tlrt_malloc(s->ctx, nb * 2, &db) ||
        tlrt_malloc(s->ctx, nc * 2, &dc)) {
        printf("FAIL %s %s %lldx%lldx%lld: out of memory\n", p->name, tlrt_dtype_name(dt), (long long)M, (long long)N,
               (long long)K);
        s->failures++;
        goto out;
    }
    const float *dec = s->decode[dt == TLRT_F16 ? 0 : 1];
    uint64_t seed = 0x1234567ull ^ (uint64_t)(M * 31 + N * 7 + K) ^ ((uint64_t)dt << 40);
    for (size_t i = 0; i < na; i++) ha[i] = gts_encode(dt, (float)gts_unif(&seed, -1.0, 1.0));
    for (size_t i = 0; i < nb; i++) hb[i] = gts_encode(dt, (float)gts_unif(&seed, -1.0, 1.0));
    if (tlrt_memcpy_htod(s->ctx, da, ha, na * 2) || tlrt_memcpy_htod(s->ctx, db, hb, nb * 2) ||
        tlrt_memset_d8(s->ctx, dc, 0xff, nc * 2))
        goto device_error;
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
    tlrt_arg args[3] = {tlrt_arg_tensor(da, dt, 2, sa, NULL), tlrt_arg_tensor(db, dt, 2, sb, NULL),
                        tlrt_arg_tensor(dc, dt, 2, sc, NULL)};
    if (!strcmp(p->arch, "sm_90a") && N % 8) {
        /* TMA needs 16-byte row strides and the epilogue stores along rows
         * of N in vectors: the runtime must refuse the launch, saying why */
        tlrt_status st = tlrt_launch(k, args, 3, NULL);
        const char *why = tlrt_last_error(s->ctx);
        if (st == TLRT_ERROR_ARG_MISMATCH && why && strstr(why, "must be a multiple of 8")) {
            printf("ok   %-28s %-8s %5lld x %5lld x %5lld: refused (%s)\n", p->name, tlrt_dtype_name(dt), (long long)M,
                   (long long)N, (long long)K, why);
        } else {
            printf("FAIL %s %s %lldx%lldx%lld: expected a refusal (N %% 8 != 0), got status %d: %s\n", p->name,
                   tlrt_dtype_name(dt), (long long)M, (long long)N, (long long)K, (int)st, why ? why : "");
            s->failures++;
        }
        goto out;
    }
    if (tlrt_launch(k, args, 3, NULL) != TLRT_SUCCESS || tlrt_synchronize(s->ctx) != TLRT_SUCCESS) {
        printf("FAIL %s %s %lldx%lldx%lld: launch: %s\n", p->name, tlrt_dtype_name(dt), (long long)M, (long long)N,
               (long long)K, tlrt_last_error(s->ctx));
        s->failures++;
        goto out;
    }
    if (tlrt_memcpy_dtoh(s->ctx, hc, dc, nc * 2)) goto device_error;
    {
        bool full = (double)M * N * K <= (double)(1 << 27);
        int64_t nsamples = full ? M * N : 2004;
        /* a float16 accumulator rounds each k16 step's sum to 11 bits */
        double atol = (f16_acc(p) ? 1.2e-2 : dt == TLRT_F16 ? 2e-3 : 8e-3) * sqrt((double)K / 3.0), worst = 0.0;
        int64_t bad = 0;
        uint64_t rs = 0x9876ull + (uint64_t)M;
        for (int64_t t = 0; t < nsamples; t++) {
            int64_t i, j;
            if (full) {
                i = t / N;
                j = t % N;
            } else if (t < 4) {
                i = (t & 1) ? M - 1 : 0;
                j = (t & 2) ? N - 1 : 0;
            } else {
                i = (int64_t)(gts_splitmix(&rs) % (uint64_t)M);
                j = (int64_t)(gts_splitmix(&rs) % (uint64_t)N);
            }
            double ref = 0.0;
            for (int64_t q = 0; q < K; q++) ref += (double)dec[ha[i * K + q]] * (double)dec[hb[q * N + j]];
            if (sh->relu && ref < 0) ref = 0;
            double got = dec[hc[i * N + j]], err = fabs(got - ref), tol = 1e-2 * fabs(ref) + atol;
            if (!(err <= tol)) {
                if (bad < 3)
                    printf("     C[%lld,%lld] = %g, expected %g\n", (long long)i, (long long)j, got, ref);
                bad++;
            } else if (err / tol > worst) {
                worst = err / tol;
            }
        }
        if (bad) {
            s->failures++;
            printf("FAIL %-28s %-8s %5lld x %5lld x %5lld%s: %lld of %lld checked elements wrong\n", p->name,
                   tlrt_dtype_name(dt), (long long)M, (long long)N, (long long)K, sh->relu ? " relu" : "",
                   (long long)bad, (long long)nsamples);
        } else {
            printf("ok   %-28s %-8s %5lld x %5lld x %5lld%s: %lld elements checked, max err/tol %.3f\n", p->name,
                   tlrt_dtype_name(dt), (long long)M, (long long)N, (long long)K, sh->relu ? " relu" : "",
                   (long long)nsamples, worst);
        }
    }
    goto out;
device_error:
    printf("FAIL %s: device error: %s\n", p->name, tlrt_last_error(s->ctx));
    s->failures++;
out:
    fflush(stdout);
    tlrt_free(s->ctx, da);
    tlrt_free(s->ctx, db);
    tlrt_free(s->ctx, dc);
    free(ha);
    free(hb);
    free(hc);
}

/* Time at 4096^3 (median of 20 launches after 5 warm-ups). */
static void time_case(state *s, tlrt_kernel *k, const path *p, tlrt_dtype dt, int64_t n) {
    size_t bytes = (size_t)(n * n * 2);
    tlrt_devptr da = 0, db = 0, dc = 0;
    tlrt_event *e0 = NULL, *e1 = NULL;
    if (tlrt_malloc(s->ctx, bytes, &da) || tlrt_malloc(s->ctx, bytes, &db) || tlrt_malloc(s->ctx, bytes, &dc) ||
        tlrt_memset_d8(s->ctx, da, 0x3c, bytes) || tlrt_memset_d8(s->ctx, db, 0x3c, bytes) ||
        tlrt_event_create(s->ctx, &e0) || tlrt_event_create(s->ctx, &e1))
        goto out;
    int64_t sh[2] = {n, n};
    tlrt_arg args[3] = {tlrt_arg_tensor(da, dt, 2, sh, NULL), tlrt_arg_tensor(db, dt, 2, sh, NULL),
                        tlrt_arg_tensor(dc, dt, 2, sh, NULL)};
    float ms[20];
    for (int i = 0; i < 25; i++) {
        tlrt_event_record(s->ctx, e0, NULL);
        if (tlrt_launch(k, args, 3, NULL) != TLRT_SUCCESS) goto out;
        tlrt_event_record(s->ctx, e1, NULL);
        tlrt_event_synchronize(s->ctx, e1);
        if (i >= 5) tlrt_event_elapsed_ms(s->ctx, e0, e1, &ms[i - 5]);
    }
    for (int i = 1; i < 20; i++)
        for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
            float t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    printf("perf %-28s %-8s %lld^3: %.3f ms, %.1f TFLOP/s\n", p->name, tlrt_dtype_name(dt), (long long)n, ms[10],
           2.0 * n * n * n / (ms[10] * 1e-3) / 1e12);
out:
    fflush(stdout);
    if (e0) tlrt_event_destroy(s->ctx, e0);
    if (e1) tlrt_event_destroy(s->ctx, e1);
    tlrt_free(s->ctx, da);
    tlrt_free(s->ctx, db);
    tlrt_free(s->ctx, dc);
}

int main(int argc, char **argv) {
    state s = {0};
    bool quick = false;
    const char *file = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc) only = argv[++i];
        else file = argv[i];
    }
    if (!file) file = access("dsl-examples/gemm.tl", R_OK) == 0 ? "dsl-examples/gemm.tl" : TLC_SOURCE_DIR "/dsl-examples/gemm.tl";
    tlrt_status rs = gts_init_or_skip(&s.ctx);
    int rc = 1;
    if (rs != TLRT_SUCCESS) {
        printf("FAIL tlrt_init: %s\n", tlrt_last_error(s.ctx));
        goto out;
    }
    if (!(s.src = gts_read_text(file, &s.len))) {
        printf("FAIL %s: cannot read\n", file);
        goto out;
    }
    for (int d = 0; d < 2; d++)
        if (!(s.decode[d] = gts_decode_table(d == 0 ? TLRT_F16 : TLRT_BF16))) goto out;
    char devarch[32] = "";
    tlrt_device_arch(s.ctx, devarch, sizeof devarch);
    const tlrt_dtype dts[2] = {TLRT_F16, TLRT_BF16};
    for (size_t pi = 0; pi < sizeof PATHS / sizeof PATHS[0]; pi++) {
        const path *p = &PATHS[pi];
        if (only && strcmp(only, p->arch) != 0) continue;
        if (!strcmp(p->arch, "sm_90a") && strncmp(devarch, "sm_90", 5) != 0) {
            printf("skip %s: the device is %s\n", p->name, devarch);
            continue;
        }
        tlc_jit *jit = NULL;
        char *err = NULL;
        tlc_jit_options opt = {.arch = p->arch, .ctx = s.ctx};
        if (tlc_jit_create(&opt, &jit, &err) != TLC_OK) {
            printf("FAIL tlc_jit_create(%s): %s\n", p->arch, err ? err : "?");
            tlc_free(err);
            s.failures++;
            continue;
        }
        for (int d = 0; d < 2; d++)
            for (int relu = 0; relu < 2; relu++) {
                tlrt_module *mod = NULL;
                if (f16_acc(p) && dts[d] == TLRT_BF16) {
                    /* the tensor cores have no bfloat16 x bfloat16 -> float16 form: a compile error */
                    tlc_jit_define defs[8];
                    int nd = 0;
                    for (int i = 0; i < p->ndefs; i++) defs[nd++] = p->defs[i];
                    defs[nd++] = (tlc_jit_define){"dtype", "bfloat16"};
                    tlrt_kernel *k = NULL;
                    char *err2 = NULL;
                    s.cases++;
                    tlc_status st = tlc_jit_load_kernel(jit, s.ctx, s.src, s.len, "gemm.tl", defs, nd, "matmul", &mod,
                                                        &k, &err2);
                    if (st == TLC_ERROR_COMPILE && err2 && strstr(err2, "(here bfloat16 x bfloat16 -> float16)")) {
                        printf("ok   %-28s bfloat16: refused at compile time\n", p->name);
                    } else {
                        printf("FAIL %s bfloat16: expected a compile error, got status %d: %s\n", p->name, (int)st,
                               err2 ? err2 : "");
                        s.failures++;
                        if (mod) tlrt_module_unload(s.ctx, mod);
                    }
                    tlc_free(err2);
                    break;
                }
                tlrt_kernel *k = load(&s, jit, p, dts[d], relu, &mod);
                if (!k) {
                    s.cases++;
                    s.failures++;
                    continue;
                }
                for (int si = 0; si < NSHAPES; si++) {
                    const shape *sh = &SHAPES[si];
                    if (sh->relu != (relu != 0)) continue;
                    if (quick && sh->m * sh->n * sh->k > (int64_t)4104 * 4088 * 4096) continue;
                    run_case(&s, k, p, dts[d], sh);
                }
                if (!relu) time_case(&s, k, p, dts[d], 4096);
                tlrt_module_unload(s.ctx, mod);
            }
        tlc_jit_destroy(jit);
    }
    printf("test_gemm: %d cases, %d failed\n", s.cases, s.failures);
    rc = s.failures ? 1 : 0;
out:
    free((void *)s.src);
    free(s.decode[0]);
    free(s.decode[1]);
    tlrt_destroy(s.ctx);
    return rc;
}
