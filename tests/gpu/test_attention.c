/* gpu/attention: dsl-examples/flash_attention.tl on the GPU through the JIT
 * (sm_90a: TMA, wgmma, warp specialization), against tests/ref's
 * tlc_ref_attention computed in double from the same rounded inputs.
 *
 * The configurations cover the warp-specialized attention loop with 1, 2
 * and 3 consumer warpgroups (threads 128, 256, 384; block_M = 64 rows per
 * warpgroup), with two stages (no overlap) and three (each iteration's
 * P @ V deferred to the next one, under its softmax), with block_N 64 and
 * the kernel's own (128 or 112), and the kernel's own tile (at head_dim 64
 * without the causal mask: 192 x 112, 3 consumer warpgroups, 2 stages; the
 * same tile with 4 stages and the overlap too); float16 and bfloat16;
 * head_dim 64 and 128; causal and not; GQA (heads 4 or 6 over 1 or 2 kv
 * heads) and MHA; query and key lengths that are not multiples of the tiles,
 * seq_q < seq_kv (causal rows offset to the end of the keys) and seq_q >
 * seq_kv (causal rows that see no key: output 0, lse -inf). Every output
 * is poisoned (0xFF bytes: NaN) before the launch. The same configurations
 * run flash_attention_varlen over packed sequences (an empty one, lengths
 * that are not multiples of the tiles) against tlc_ref_attention_varlen.
 * Two configurations are also compiled for sm_80 (mma.sync, cp.async, no
 * warp specialization) and run on this GPU.
 *
 * Tolerances: Output |got - ref| <= atol + rtol * |ref|, (atol, rtol) =
 * (2e-3, 1e-2) for float16 and (8e-3, 2e-2) for bfloat16 (P is rounded to
 * the input dtype before P @ V; the output to the dtype); Lse within 1e-3
 * relative + 1e-3. A wrong key block, mask, stage or race moves outputs by
 * their own size.
 *
 *   test_attention [path/to/flash_attention.tl]
 * TLC_ATTENTION_CONFIG=i runs only configuration i (0-based) of CONFIGS.
 * Exits 0 when every case passes, 1 otherwise, 77 without a GPU or on a GPU
 * that is not sm_90. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpu_test_support.h"
#include "tlc/tlc.h"
#include "tlc_ref.h"

#ifndef TLC_SOURCE_DIR
#define TLC_SOURCE_DIR "."
#endif

/* the tile a configuration asks for: block_M = threads / 2 and block_N 64;
 * block_M = threads / 2 and the kernel's own block_N; or the kernel's own
 * tile, threads and stages (threads and stages then say what it picks) */
typedef enum { TILE_N64, TILE_DEFAULT_N, TILE_DEFAULT } attn_tile;

typedef struct attn_config {
    int threads, stages, dim;
    bool causal, bf16;
    attn_tile tile;
} attn_config;

typedef struct attn_case {
    int64_t batch, seq_q, seq_kv, heads, heads_kv;
} attn_case;

static const attn_config CONFIGS[] = {
    {128, 3, 128, false, true, TILE_N64},       {128, 2, 64, true, false, TILE_N64},
    {256, 3, 128, true, true, TILE_N64},        {256, 3, 64, false, false, TILE_N64},
    {256, 2, 128, false, true, TILE_N64},       {384, 3, 64, true, true, TILE_N64},
    {384, 2, 64, false, false, TILE_N64},       {384, 3, 128, false, true, TILE_N64},
    {256, 3, 128, true, false, TILE_DEFAULT_N}, {256, 3, 64, false, true, TILE_DEFAULT_N},
    {384, 4, 64, false, true, TILE_DEFAULT_N},  {384, 2, 64, false, true, TILE_DEFAULT},
    {384, 2, 64, false, false, TILE_DEFAULT},
};
static const attn_case CASES[] = {
    {2, 200, 333, 4, 2}, {1, 517, 517, 6, 1}, {3, 70, 41, 2, 2}, {1, 1, 1000, 4, 4},
};
/* compiled for sm_80 (threads / 32 warps over the rows), run on the same GPU */
static const attn_config SM80_CONFIGS[] = {
    {256, 2, 128, false, true, TILE_N64}, {128, 2, 64, true, false, TILE_N64}, {384, 2, 64, false, true, TILE_DEFAULT}};
enum { NCONFIGS = sizeof CONFIGS / sizeof CONFIGS[0], NCASES = sizeof CASES / sizeof CASES[0],
       NSM80 = sizeof SM80_CONFIGS / sizeof SM80_CONFIGS[0] };

typedef struct state {
    tlrt_context *ctx;
    tlc_jit *jit;
    const char *src;
    size_t len;
    int cases, failures;
} state;

/* Q, K and V: uniform in [-1, 1), rounded to dt (h: the bits, f: their values). */
static void random_inputs(tlrt_dtype dt, uint64_t seed, uint16_t *hq, float *fq, size_t nq, uint16_t *hk, float *fk,
                          uint16_t *hv, float *fv, size_t nk) {
    uint64_t st = seed;
    struct { uint16_t *h; float *f; size_t n; } in[3] = {{hq, fq, nq}, {hk, fk, nk}, {hv, fv, nk}};
    for (int i = 0; i < 3; i++)
        for (size_t j = 0; j < in[i].n; j++) {
            in[i].h[j] = gts_encode(dt, (float)gts_unif(&st, -1.0, 1.0));
            in[i].f[j] = gts_decode(dt, in[i].h[j]);
        }
}

/* Output (against the reference rounded to dt) and Lse within the tolerances of the file comment. */
static void check_outputs(state *s, const char *what, tlrt_dtype dt, const float *out, float *rout, size_t nq,
                          const float *lse, const float *rlse, size_t nl) {
    for (size_t i = 0; i < nq; i++) rout[i] = gts_decode(dt, gts_encode(dt, rout[i]));
    double atol = dt == TLRT_F16 ? 2e-3 : 8e-3, rtol = dt == TLRT_F16 ? 1e-2 : 2e-2, worst = 0, lworst = 0;
    int64_t bad = gts_compare("Output", out, rout, (int64_t)nq, atol, rtol, &worst);
    bad += gts_compare("Lse", lse, rlse, (int64_t)nl, 1e-3, 1e-3, &lworst);
    if (bad) {
        s->failures++;
        printf("FAIL %s: %lld elements wrong\n", what, (long long)bad);
    } else {
        printf("ok   %s: max err/tol %.3f (lse %.3f)\n", what, worst, lworst);
    }
}

/* Launches k, waits, and reads Output (decoded into out) and Lse back;
 * false (said and counted) when any of it fails. */
static bool launch_and_read(state *s, const char *what, tlrt_kernel *k, tlrt_arg *args, int nargs, tlrt_dtype dt,
                            tlrt_devptr dout, uint16_t *ho, float *out, size_t nq, tlrt_devptr dlse, float *lse,
                            size_t nl, tlrt_stream *stream) {
    if (tlrt_launch(k, args, nargs, stream) != TLRT_SUCCESS || tlrt_synchronize(s->ctx) != TLRT_SUCCESS ||
        tlrt_memcpy_dtoh(s->ctx, ho, dout, nq * 2) || tlrt_memcpy_dtoh(s->ctx, lse, dlse, nl * 4)) {
        printf("FAIL %s: launch: %s\n", what, tlrt_last_error(s->ctx));
        s->failures++;
        return false;
    }
    for (size_t i = 0; i < nq; i++) out[i] = gts_decode(dt, ho[i]);
    return true;
}

static void run_case(state *s, tlrt_kernel *k, const attn_config *cf, const attn_case *ac, uint64_t seed) {
    tlrt_dtype dt = cf->bf16 ? TLRT_BF16 : TLRT_F16;
    int64_t B = ac->batch, SQ = ac->seq_q, SK = ac->seq_kv, H = ac->heads, HK = ac->heads_kv, D = cf->dim;
    s->cases++;
    char what[160];
    snprintf(what, sizeof what, "%-8s threads=%d stages=%d dim=%lld%s b=%lld seq_q=%lld seq_kv=%lld heads=%lld/%lld",
             tlrt_dtype_name(dt), cf->threads, cf->stages, (long long)D, cf->causal ? " causal" : "", (long long)B,
             (long long)SQ, (long long)SK, (long long)H, (long long)HK);
    size_t nq = (size_t)(B * SQ * H * D), nk = (size_t)(B * SK * HK * D), nl = (size_t)(B * H * SQ);
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *ho = malloc(nq * 2);
    float *fq = malloc(nq * 4), *fk = malloc(nk * 4), *fv = malloc(nk * 4), *out = malloc(nq * 4), *rout = malloc(nq * 4);
    float *lse = malloc(nl * 4), *rlse = malloc(nl * 4);
    tlrt_devptr dq = 0, dk = 0, dv = 0, dout = 0, dlse = 0;
    if (!hq || !hk || !hv || !ho || !fq || !fk || !fv || !out || !rout || !lse || !rlse) {
        printf("FAIL %s: out of host memory\n", what);
        s->failures++;
        goto out;
    }
    random_inputs(dt, seed, hq, fq, nq, hk, fk, hv, fv, nk);
    if (tlrt_malloc(s->ctx, nq * 2, &dq) || tlrt_malloc(s->ctx, nk * 2, &dk) || tlrt_malloc(s->ctx, nk * 2, &dv) ||
        tlrt_malloc(s->ctx, nq * 2, &dout) || tlrt_malloc(s->ctx, nl * 4, &dlse))
        goto device_error;
    if (tlrt_memcpy_htod(s->ctx, dq, hq, nq * 2) || tlrt_memcpy_htod(s->ctx, dk, hk, nk * 2) ||
        tlrt_memcpy_htod(s->ctx, dv, hv, nk * 2) || tlrt_memset_d8(s->ctx, dout, 0xff, nq * 2) ||
        tlrt_memset_d8(s->ctx, dlse, 0xff, nl * 4))
        goto device_error;
    double sm_scale = 1.0 / sqrt((double)D);
    int64_t sq[4] = {B, SQ, H, D}, sk[4] = {B, SK, HK, D}, sl[3] = {B, H, SQ};
    tlrt_arg args[6] = {tlrt_arg_tensor(dq, dt, 4, sq, NULL),      tlrt_arg_tensor(dk, dt, 4, sk, NULL),
                        tlrt_arg_tensor(dv, dt, 4, sk, NULL),      tlrt_arg_tensor(dout, dt, 4, sq, NULL),
                        tlrt_arg_tensor(dlse, TLRT_F32, 3, sl, NULL), tlrt_arg_float(TLRT_F32, sm_scale)};
    if (!launch_and_read(s, what, k, args, 6, dt, dout, ho, out, nq, dlse, lse, nl, NULL)) goto out;
    {
        tlc_ref_attn_shape sh = {B, SQ, SK, H, HK, D, cf->causal};
        tlc_ref_attention(&sh, fq, fk, fv, sm_scale, rout, rlse);
        check_outputs(s, what, dt, out, rout, nq, lse, rlse, nl);
    }
    if (cf->causal && tlrt_kernel_metadata(k)->tile_counter) {
        /* run-time tiles: again on a stream of its own (a counter pair of
         * its own; the default stream's was zeroed by its last block) */
        tlrt_stream *st = NULL;
        char again[200];
        snprintf(again, sizeof again, "%s, again on another stream", what);
        s->cases++;
        if (tlrt_memset_d8(s->ctx, dout, 0xff, nq * 2) || tlrt_memset_d8(s->ctx, dlse, 0xff, nl * 4) ||
            tlrt_stream_create(s->ctx, &st) != TLRT_SUCCESS)
            goto device_error;
        bool ok = launch_and_read(s, again, k, args, 6, dt, dout, ho, out, nq, dlse, lse, nl, st);
        tlrt_stream_destroy(s->ctx, st);
        if (ok) check_outputs(s, again, dt, out, rout, nq, lse, rlse, nl);
    }
    goto out;
device_error:
    printf("FAIL %s: device error: %s\n", what, tlrt_last_error(s->ctx));
    s->failures++;
out:
    fflush(stdout);
    tlrt_devptr all[5] = {dq, dk, dv, dout, dlse};
    for (int i = 0; i < 5; i++)
        if (all[i]) tlrt_free(s->ctx, all[i]);
    free(hq); free(hk); free(hv); free(ho); free(fq); free(fk); free(fv); free(out); free(rout); free(lse); free(rlse);
}

/* flash_attention_varlen: packed sequences (lengths not multiples of the
 * tiles, an empty one, causal rows that see no key), against
 * tlc_ref_attention_varlen. */
typedef struct varlen_case {
    int nseq;
    int32_t seq_q[5], seq_kv[5];
    int64_t heads, heads_kv;
} varlen_case;
static const varlen_case VARLEN_CASES[] = {
    {4, {300, 0, 17, 129}, {250, 64, 40, 500}, 4, 2},
    {3, {1, 200, 64}, {700, 100, 64}, 6, 1},
};
enum { NVARLEN = sizeof VARLEN_CASES / sizeof VARLEN_CASES[0] };

static void run_varlen_case(state *s, tlrt_kernel *k, const attn_config *cf, const varlen_case *vc, uint64_t seed) {
    tlrt_dtype dt = cf->bf16 ? TLRT_BF16 : TLRT_F16;
    int64_t B = vc->nseq, H = vc->heads, HK = vc->heads_kv, D = cf->dim, TQ = 0, TK = 0, max_q = 0;
    int32_t cq[6] = {0}, ck[6] = {0};
    for (int64_t b = 0; b < B; b++) {
        cq[b + 1] = cq[b] + vc->seq_q[b];
        ck[b + 1] = ck[b] + vc->seq_kv[b];
        if (vc->seq_q[b] > max_q) max_q = vc->seq_q[b];
    }
    TQ = cq[B];
    TK = ck[B];
    s->cases++;
    char what[160];
    snprintf(what, sizeof what, "%-8s threads=%d stages=%d dim=%lld%s varlen %d sequences (%lld / %lld rows) heads=%lld/%lld",
             tlrt_dtype_name(dt), cf->threads, cf->stages, (long long)D, cf->causal ? " causal" : "", vc->nseq,
             (long long)TQ, (long long)TK, (long long)H, (long long)HK);
    size_t nq = (size_t)(TQ * H * D), nk = (size_t)(TK * HK * D), nl = (size_t)(H * TQ);
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *ho = malloc(nq * 2);
    float *fq = malloc(nq * 4), *fk = malloc(nk * 4), *fv = malloc(nk * 4), *out = malloc(nq * 4), *rout = malloc(nq * 4);
    float *lse = malloc(nl * 4), *rlse = malloc(nl * 4);
    tlrt_devptr dq = 0, dk = 0, dv = 0, dout = 0, dlse = 0, dcq = 0, dck = 0;
    if (!hq || !hk || !hv || !ho || !fq || !fk || !fv || !out || !rout || !lse || !rlse) {
        printf("FAIL %s: out of host memory\n", what);
        s->failures++;
        goto out;
    }
    random_inputs(dt, seed, hq, fq, nq, hk, fk, hv, fv, nk);
    if (tlrt_malloc(s->ctx, nq * 2, &dq) || tlrt_malloc(s->ctx, nk * 2, &dk) || tlrt_malloc(s->ctx, nk * 2, &dv) ||
        tlrt_malloc(s->ctx, nq * 2, &dout) || tlrt_malloc(s->ctx, nl * 4, &dlse) ||
        tlrt_malloc(s->ctx, (size_t)(B + 1) * 4, &dcq) || tlrt_malloc(s->ctx, (size_t)(B + 1) * 4, &dck))
        goto device_error;
    if (tlrt_memcpy_htod(s->ctx, dq, hq, nq * 2) || tlrt_memcpy_htod(s->ctx, dk, hk, nk * 2) ||
        tlrt_memcpy_htod(s->ctx, dv, hv, nk * 2) || tlrt_memcpy_htod(s->ctx, dcq, cq, (size_t)(B + 1) * 4) ||
        tlrt_memcpy_htod(s->ctx, dck, ck, (size_t)(B + 1) * 4) || tlrt_memset_d8(s->ctx, dout, 0xff, nq * 2) ||
        tlrt_memset_d8(s->ctx, dlse, 0xff, nl * 4))
        goto device_error;
    double sm_scale = 1.0 / sqrt((double)D);
    int64_t sq[3] = {TQ, H, D}, sk[3] = {TK, HK, D}, sl[2] = {H, TQ}, sc[1] = {B + 1};
    tlrt_arg args[9] = {tlrt_arg_tensor(dq, dt, 3, sq, NULL),        tlrt_arg_tensor(dk, dt, 3, sk, NULL),
                        tlrt_arg_tensor(dv, dt, 3, sk, NULL),        tlrt_arg_tensor(dcq, TLRT_I32, 1, sc, NULL),
                        tlrt_arg_tensor(dck, TLRT_I32, 1, sc, NULL), tlrt_arg_tensor(dout, dt, 3, sq, NULL),
                        tlrt_arg_tensor(dlse, TLRT_F32, 2, sl, NULL), tlrt_arg_int(TLRT_I32, max_q),
                        tlrt_arg_float(TLRT_F32, sm_scale)};
    if (!launch_and_read(s, what, k, args, 9, dt, dout, ho, out, nq, dlse, lse, nl, NULL)) goto out;
    {
        tlc_ref_attn_varlen_shape sh = {B, cq, ck, H, HK, D, cf->causal};
        tlc_ref_attention_varlen(&sh, fq, fk, fv, sm_scale, rout, rlse);
        check_outputs(s, what, dt, out, rout, nq, lse, rlse, nl);
    }
    goto out;
device_error:
    printf("FAIL %s: device error: %s\n", what, tlrt_last_error(s->ctx));
    s->failures++;
out:
    fflush(stdout);
    tlrt_devptr all[7] = {dq, dk, dv, dout, dlse, dcq, dck};
    for (int i = 0; i < 7; i++)
        if (all[i]) tlrt_free(s->ctx, all[i]);
    free(hq); free(hk); free(hv); free(ho); free(fq); free(fk); free(fv); free(out); free(rout); free(lse); free(rlse);
}

/* One configuration: both kernels, compiled by `jit`, on every case. */
static void run_config(state *s, tlc_jit *jit, const attn_config *cf, int c) {
    char threads[16], block_m[16], stages[16], dim[16];
    snprintf(threads, sizeof threads, "%d", cf->threads);
    snprintf(block_m, sizeof block_m, "%d", cf->threads / 2);
    snprintf(stages, sizeof stages, "%d", cf->stages);
    snprintf(dim, sizeof dim, "%d", cf->dim);
    tlc_jit_define defs[7] = {{"dim", dim}, {"causal", cf->causal ? "True" : "False"},
                              {"dtype", cf->bf16 ? "bfloat16" : "float16"}};
    int ndefs = 3;
    if (cf->tile != TILE_DEFAULT) {
        defs[ndefs++] = (tlc_jit_define){"threads", threads};
        defs[ndefs++] = (tlc_jit_define){"block_M", block_m};
        defs[ndefs++] = (tlc_jit_define){"num_stages", stages};
    }
    if (cf->tile == TILE_N64) defs[ndefs++] = (tlc_jit_define){"block_N", "64"};
    static const char *const tile_names[] = {"block_N=64", "block_N default", "the kernel's tile"};
    printf("-- %s, threads=%d stages=%d dim=%d, %s\n", tlc_jit_arch(jit), cf->threads, cf->stages, cf->dim,
           tile_names[cf->tile]);
    for (int varlen = 0; varlen < 2; varlen++) {
        const char *kname = varlen ? "flash_attention_varlen" : "flash_attention";
        tlrt_module *mod = NULL;
        tlrt_kernel *k = NULL;
        char *err = NULL;
        if (tlc_jit_load_kernel(jit, s->ctx, s->src, s->len, "flash_attention.tl", defs, ndefs, kname, &mod, &k, &err) !=
            TLC_OK) {
            printf("FAIL %s %s threads=%d stages=%d dim=%d: cannot load: %s\n", tlc_jit_arch(jit), kname, cf->threads,
                   cf->stages, cf->dim, err ? err : "?");
            tlc_free(err);
            s->cases++;
            s->failures++;
            continue;
        }
        if (varlen)
            for (int i = 0; i < NVARLEN; i++)
                run_varlen_case(s, k, cf, &VARLEN_CASES[i], 0x7a41e000ull + (uint64_t)(c * 31 + i));
        else
            for (int i = 0; i < NCASES; i++) run_case(s, k, cf, &CASES[i], 0xa77e0000ull + (uint64_t)(c * 31 + i));
        tlrt_module_unload(s->ctx, mod);
    }
}

int main(int argc, char **argv) {
    state s = {0};
    int rc = gts_start_sm90a(argc > 1 ? argv[1] : NULL, "dsl-examples/flash_attention.tl",
                             TLC_SOURCE_DIR "/dsl-examples/flash_attention.tl", "the warp-specialized attention", &s.ctx,
                             &s.jit, &s.src, &s.len);
    if (rc) goto done;
    /* TLC_ATTENTION_CONFIG=i runs configuration i alone (SM80_CONFIGS count
     * on from NCONFIGS) */
    const char *only = getenv("TLC_ATTENTION_CONFIG");
    for (int c = 0; c < NCONFIGS; c++)
        if (!only || !*only || atoi(only) == c) run_config(&s, s.jit, &CONFIGS[c], c);
    /* the sm_80 path (mma.sync, cp.async, no warp specialization) runs on
     * this GPU too */
    tlc_jit *jit80 = NULL;
    char *err = NULL;
    tlc_jit_options o80 = {.arch = "sm_80", .ctx = s.ctx};
    if (tlc_jit_create(&o80, &jit80, &err) != TLC_OK) {
        printf("FAIL tlc_jit_create sm_80: %s\n", err ? err : "?");
        tlc_free(err);
        s.cases++;
        s.failures++;
    } else {
        for (int c = 0; c < NSM80; c++)
            if (!only || !*only || atoi(only) == NCONFIGS + c) run_config(&s, jit80, &SM80_CONFIGS[c], NCONFIGS + c);
        tlc_jit_destroy(jit80);
    }
    printf("test_attention: %d cases, %d failed\n", s.cases, s.failures);
    rc = s.failures ? 1 : 0;
done:
    if (s.jit) tlc_jit_destroy(s.jit);
    free((void *)s.src);
    tlrt_destroy(s.ctx);
    return rc;
}
