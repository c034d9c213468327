/* gpu/mla: dsl-examples/mla_decode.tl on the GPU through the JIT:
 * mla_decode_split (TMA + wgmma, sm_90a) then mla_decode_combine, against
 * the plain C references of tests/ref (tlc_ref_mla_split for the split
 * kernel's Glse / Output_partial, tlc_ref_mla_decode for the final Output),
 * computed in double from the same rounded inputs.
 *
 * Cases: float16 and bfloat16; batch 2 and 8; h_q 16 and 128 (s_q * h_q =
 * 256 rows: several head blocks of 64); s_q 1 and 2 (causal: query token t
 * sees keys up to seqlen - s_q + t); num_split 4, plus 1 and 8; one
 * non-causal case. Sequence lengths are random and never multiples of 64
 * (the last page is partial), some shorter than a page, some with fewer
 * pages than splits (empty splits: Glse -inf, partial 0), and one length 1
 * with s_q = 2 (query token 0 sees no key: output 0). The cache pages are
 * distinct and shuffled (block_table), with a page nobody uses. Inputs are
 * uniform in [-1, 1); every output is poisoned (0xFF bytes: NaN) before
 * each launch, so an element never written fails.
 *
 * Tolerances: Output and Output_partial |got - ref| <= atol + rtol * |ref|
 * with (atol, rtol) = (2e-3, 1e-2) for float16 and (8e-3, 2e-2) for
 * bfloat16. The softmax weights P are rounded to the input dtype before the
 * second gemm (relative 2^-11 / 2^-8), which moves an output by at most that
 * times max |KV| = 1, and the output itself is rounded to the dtype (rtol);
 * a wrong page, mask or race moves outputs by their own size (0.02 .. 1).
 * Glse (base-2 log-sum-exp of the split's scores, float32): |got - ref| <=
 * 2e-3 + 1e-3 * |ref|, and infinities must agree.
 *
 *   test_mla [path/to/mla_decode.tl] [--perf]
 * (--perf also times batch 64, h_q 128, seqlen 4096, s_q 1.)
 * Exits 0 when every case passes, 1 otherwise, 77 ("skipped: no CUDA
 * driver") without a GPU, and 77 on a GPU that is not sm_90 (the split
 * kernel needs sm_90a's 227 KiB of shared memory and wgmma). */
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

enum { DV = 512, DPE = 64, PAGE = 64 };

typedef struct mla_case {
    int64_t batch, s_q, h_q;
    int num_split;
    bool causal;
    int64_t max_len;   /* sequence lengths are drawn from [1, max_len] */
    bool seqlen_one;   /* sequence 0 has length 1 */
    bool both_dtypes;  /* else float16 only */
} mla_case;

static const mla_case CASES[] = {
    {2, 1, 16, 4, true, 1100, false, true},  {2, 2, 16, 4, true, 1100, true, true},
    {2, 1, 128, 4, true, 700, false, true},  {2, 2, 128, 4, true, 700, false, true},
    {8, 1, 16, 4, true, 1500, false, true},  {8, 2, 16, 4, true, 900, false, true},
    {8, 1, 128, 4, true, 600, false, true},  {8, 2, 128, 4, true, 500, false, true},
    {2, 2, 16, 1, true, 300, false, false},  {8, 1, 16, 8, true, 2000, false, false},
    {2, 2, 16, 4, false, 500, false, false}, {8, 2, 128, 8, true, 2500, false, false},
};
enum { NCASES = sizeof CASES / sizeof CASES[0] };


typedef struct state {
    tlrt_context *ctx;
    tlc_jit *jit;
    const char *src;
    size_t len;
    int cases, failures;
} state;


/* A kernel pair for (dtype, num_split, causal); false (reported) on failure. */
typedef struct pair {
    tlrt_module *mod[2];
    tlrt_kernel *split, *combine;
} pair;

static bool load_pair(state *s, tlrt_dtype dt, int num_split, bool causal, pair *p) {
    char ns[16];
    snprintf(ns, sizeof ns, "%d", num_split);
    tlc_jit_define defs[3] = {{"dtype", tlrt_dtype_name(dt)}, {"num_split", ns}, {"causal", causal ? "True" : "False"}};
    const char *names[2] = {"mla_decode_split", "mla_decode_combine"};
    tlrt_kernel **outs[2] = {&p->split, &p->combine};
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 2; i++) {
        char *err = NULL;
        if (tlc_jit_load_kernel(s->jit, s->ctx, s->src, s->len, "mla_decode.tl", defs, 3, names[i], &p->mod[i], outs[i],
                                &err) != TLC_OK) {
            printf("FAIL %s %s num_split=%d: cannot load: %s\n", names[i], tlrt_dtype_name(dt), num_split,
                   err ? err : "?");
            tlc_free(err);
            return false;
        }
    }
    return true;
}

static void unload_pair(state *s, pair *p) {
    for (int i = 0; i < 2; i++)
        if (p->mod[i]) tlrt_module_unload(s->ctx, p->mod[i]);
}

/* Device buffers of one problem. */
typedef struct problem {
    int64_t B, S, H, num_pages, max_pages;
    tlrt_devptr q, qpe, kv, kpe, bt, sl, glse, part, out;
} problem;

static void free_problem(state *s, problem *pr) {
    tlrt_devptr *all[] = {&pr->q, &pr->qpe, &pr->kv, &pr->kpe, &pr->bt, &pr->sl, &pr->glse, &pr->part, &pr->out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i]) tlrt_free(s->ctx, *all[i]);
}

static tlrt_status launch_pair(const pair *p, const problem *pr, tlrt_dtype dt, int num_split, double sm_scale) {
    int64_t sq[4] = {pr->B, pr->S, pr->H, DV}, sqpe[4] = {pr->B, pr->S, pr->H, DPE};
    int64_t skv[4] = {pr->num_pages, PAGE, 1, DV}, skpe[4] = {pr->num_pages, PAGE, 1, DPE};
    int64_t sbt[2] = {pr->B, pr->max_pages}, ssl[1] = {pr->B};
    int64_t sg[4] = {pr->B, pr->S, pr->H, num_split}, sp[5] = {pr->B, pr->S, pr->H, num_split, DV};
    tlrt_arg a[9] = {tlrt_arg_tensor(pr->q, dt, 4, sq, NULL),       tlrt_arg_tensor(pr->qpe, dt, 4, sqpe, NULL),
                     tlrt_arg_tensor(pr->kv, dt, 4, skv, NULL),     tlrt_arg_tensor(pr->kpe, dt, 4, skpe, NULL),
                     tlrt_arg_tensor(pr->bt, TLRT_I32, 2, sbt, NULL), tlrt_arg_tensor(pr->sl, TLRT_I32, 1, ssl, NULL),
                     tlrt_arg_tensor(pr->glse, TLRT_F32, 4, sg, NULL), tlrt_arg_tensor(pr->part, TLRT_F32, 5, sp, NULL),
                     tlrt_arg_float(TLRT_F32, sm_scale)};
    tlrt_status st = tlrt_launch(p->split, a, 9, NULL);
    if (st != TLRT_SUCCESS) return st;
    tlrt_arg c[3] = {tlrt_arg_tensor(pr->glse, TLRT_F32, 4, sg, NULL), tlrt_arg_tensor(pr->part, TLRT_F32, 5, sp, NULL),
                     tlrt_arg_tensor(pr->out, dt, 4, sq, NULL)};
    return tlrt_launch(p->combine, c, 3, NULL);
}

/* Compares n values; counts and shows the bad ones. Returns the number bad. */
static int64_t compare(const char *what, const float *got, const float *ref, int64_t n, double atol, double rtol,
                       double *worst) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        bool ok;
        if (isinf(r) || isinf(g)) ok = g == r;
        else ok = !isnan(g) && !isnan(r) && fabs(g - r) <= atol + rtol * fabs(r);
        if (!ok) {
            if (bad < 3) printf("     %s[%lld] = %g, expected %g\n", what, (long long)i, g, r);
            bad++;
        } else if (isfinite(r)) {
            double q = fabs(g - r) / (atol + rtol * fabs(r));
            if (q > *worst) *worst = q;
        }
    }
    return bad;
}

static void run_case(state *s, const pair *p, tlrt_dtype dt, const mla_case *mc, uint64_t seed) {
    problem pr = {.B = mc->batch, .S = mc->s_q, .H = mc->h_q};
    int ns = mc->num_split;
    s->cases++;
    uint64_t st = seed;
    int32_t *sl = malloc(sizeof(int32_t) * (size_t)pr.B);
    for (int64_t b = 0; b < pr.B; b++) {
        int64_t len = 1 + (int64_t)(gts_splitmix(&st) % (uint64_t)mc->max_len);
        if (b == 1) len = 1 + (int64_t)(gts_splitmix(&st) % 63);     /* shorter than a page */
        if (len % PAGE == 0) len++;                               /* a partial last page */
        if (mc->seqlen_one && b == 0) len = 1;
        sl[b] = (int32_t)len;
    }
    pr.max_pages = 1;
    for (int64_t b = 0; b < pr.B; b++)
        if ((sl[b] + PAGE - 1) / PAGE > pr.max_pages) pr.max_pages = (sl[b] + PAGE - 1) / PAGE;
    pr.num_pages = pr.B * pr.max_pages + 1; /* + one page nobody uses */
    int64_t rows = pr.B * pr.S * pr.H;
    size_t nq = (size_t)(rows * DV), nqpe = (size_t)(rows * DPE);
    size_t nkv = (size_t)(pr.num_pages * PAGE * DV), nkpe = (size_t)(pr.num_pages * PAGE * DPE);
    size_t nbt = (size_t)(pr.B * pr.max_pages), ng = (size_t)(rows * ns), np = (size_t)(rows * ns * DV);
    uint16_t *hq = malloc(nq * 2), *hqpe = malloc(nqpe * 2), *hkv = malloc(nkv * 2), *hkpe = malloc(nkpe * 2);
    uint16_t *hout = malloc(nq * 2);
    float *fq = malloc(nq * 4), *fqpe = malloc(nqpe * 4), *fkv = malloc(nkv * 4), *fkpe = malloc(nkpe * 4);
    float *glse = malloc(ng * 4), *part = malloc(np * 4), *out = malloc(nq * 4);
    float *rglse = malloc(ng * 4), *rpart = malloc(np * 4), *rout = malloc(nq * 4);
    int32_t *bt = malloc(nbt * 4);
    char what[160];
    snprintf(what, sizeof what, "%-8s b=%lld s_q=%lld h_q=%3lld splits=%d%s seqlens=%d,%d..", tlrt_dtype_name(dt),
             (long long)pr.B, (long long)pr.S, (long long)pr.H, ns, mc->causal ? "" : " non-causal", sl[0],
             pr.B > 1 ? sl[1] : 0);
    if (!hq || !hqpe || !hkv || !hkpe || !hout || !fq || !fqpe || !fkv || !fkpe || !glse || !part || !out || !rglse ||
        !rpart || !rout || !bt) {
        printf("FAIL %s: out of host memory\n", what);
        s->failures++;
        goto out;
    }
    struct { uint16_t *h; float *f; size_t n; } in[4] = {{hq, fq, nq}, {hqpe, fqpe, nqpe}, {hkv, fkv, nkv}, {hkpe, fkpe, nkpe}};
    for (int i = 0; i < 4; i++)
        for (size_t j = 0; j < in[i].n; j++) {
            in[i].h[j] = gts_encode(dt, (float)gts_unif(&st, -1.0, 1.0));
            in[i].f[j] = gts_decode(dt, in[i].h[j]);
        }
    /* distinct pages, shuffled */
    for (size_t i = 0; i < nbt; i++) bt[i] = (int32_t)(pr.num_pages - 1 - (int64_t)i);
    for (size_t i = nbt - 1; i > 0; i--) {
        size_t j = (size_t)(gts_splitmix(&st) % (uint64_t)(i + 1));
        int32_t x = bt[i];
        bt[i] = bt[j];
        bt[j] = x;
    }
    if (tlrt_malloc(s->ctx, nq * 2, &pr.q) || tlrt_malloc(s->ctx, nqpe * 2, &pr.qpe) ||
        tlrt_malloc(s->ctx, nkv * 2, &pr.kv) || tlrt_malloc(s->ctx, nkpe * 2, &pr.kpe) ||
        tlrt_malloc(s->ctx, nbt * 4, &pr.bt) || tlrt_malloc(s->ctx, (size_t)pr.B * 4, &pr.sl) ||
        tlrt_malloc(s->ctx, ng * 4, &pr.glse) || tlrt_malloc(s->ctx, np * 4, &pr.part) ||
        tlrt_malloc(s->ctx, nq * 2, &pr.out))
        goto device_error;
    if (tlrt_memcpy_htod(s->ctx, pr.q, hq, nq * 2) || tlrt_memcpy_htod(s->ctx, pr.qpe, hqpe, nqpe * 2) ||
        tlrt_memcpy_htod(s->ctx, pr.kv, hkv, nkv * 2) || tlrt_memcpy_htod(s->ctx, pr.kpe, hkpe, nkpe * 2) ||
        tlrt_memcpy_htod(s->ctx, pr.bt, bt, nbt * 4) || tlrt_memcpy_htod(s->ctx, pr.sl, sl, (size_t)pr.B * 4) ||
        tlrt_memset_d8(s->ctx, pr.glse, 0xff, ng * 4) || tlrt_memset_d8(s->ctx, pr.part, 0xff, np * 4) ||
        tlrt_memset_d8(s->ctx, pr.out, 0xff, nq * 2))
        goto device_error;
    double sm_scale = 1.0 / sqrt((double)(DV + DPE));
    if (launch_pair(p, &pr, dt, ns, sm_scale) != TLRT_SUCCESS || tlrt_synchronize(s->ctx) != TLRT_SUCCESS) {
        printf("FAIL %s: launch: %s\n", what, tlrt_last_error(s->ctx));
        s->failures++;
        goto out;
    }
    if (tlrt_memcpy_dtoh(s->ctx, glse, pr.glse, ng * 4) || tlrt_memcpy_dtoh(s->ctx, part, pr.part, np * 4) ||
        tlrt_memcpy_dtoh(s->ctx, hout, pr.out, nq * 2))
        goto device_error;
    for (size_t i = 0; i < nq; i++) out[i] = gts_decode(dt, hout[i]);
    {
        tlc_ref_mla_shape sh = {pr.B, pr.S, pr.H, DV, DPE, pr.num_pages, PAGE, pr.max_pages, mc->causal};
        tlc_ref_mla_split(&sh, ns, fq, fqpe, fkv, fkpe, bt, sl, sm_scale, rglse, rpart);
        tlc_ref_mla_decode(&sh, fq, fqpe, fkv, fkpe, bt, sl, sm_scale, rout);
        for (size_t i = 0; i < nq; i++) rout[i] = gts_decode(dt, gts_encode(dt, rout[i])); /* the output's rounding */
        double atol = dt == TLRT_F16 ? 2e-3 : 8e-3, rtol = dt == TLRT_F16 ? 1e-2 : 2e-2, worst = 0;
        int64_t bad = compare("Glse", glse, rglse, (int64_t)ng, 2e-3, 1e-3, &worst);
        bad += compare("Output_partial", part, rpart, (int64_t)np, atol, rtol, &worst);
        bad += compare("Output", out, rout, (int64_t)nq, atol, rtol, &worst);
        if (bad) {
            s->failures++;
            printf("FAIL %s: %lld elements wrong\n", what, (long long)bad);
        } else {
            printf("ok   %s: %zu outputs checked, max err/tol %.3f\n", what, ng + np + nq, worst);
        }
    }
    goto out;
device_error:
    printf("FAIL %s: device error: %s\n", what, tlrt_last_error(s->ctx));
    s->failures++;
out:
    fflush(stdout);
    free_problem(s, &pr);
    free(hq); free(hqpe); free(hkv); free(hkpe); free(hout);
    free(fq); free(fqpe); free(fkv); free(fkpe);
    free(glse); free(part); free(out); free(rglse); free(rpart); free(rout);
    free(bt); free(sl);
}

/* Times split + combine on a decode-sized problem (median of 20 after 5
 * warm-ups); reports the KV cache bytes read per second. */
static void time_case(state *s, const pair *p, tlrt_dtype dt, int64_t B, int64_t H, int64_t seqlen, int ns) {
    problem pr = {.B = B, .S = 1, .H = H};
    pr.max_pages = (seqlen + PAGE - 1) / PAGE;
    pr.num_pages = B * pr.max_pages;
    int64_t rows = B * H;
    size_t nq = (size_t)(rows * DV), nqpe = (size_t)(rows * DPE), nkv = (size_t)(pr.num_pages * PAGE * DV);
    size_t nkpe = (size_t)(pr.num_pages * PAGE * DPE), nbt = (size_t)(B * pr.max_pages);
    int32_t *bt = malloc(nbt * 4), *sl = malloc((size_t)B * 4);
    tlrt_event *e0 = NULL, *e1 = NULL;
    if (!bt || !sl) goto out;
    for (size_t i = 0; i < nbt; i++) bt[i] = (int32_t)i;
    for (int64_t b = 0; b < B; b++) sl[b] = (int32_t)seqlen;
    if (tlrt_malloc(s->ctx, nq * 2, &pr.q) || tlrt_malloc(s->ctx, nqpe * 2, &pr.qpe) ||
        tlrt_malloc(s->ctx, nkv * 2, &pr.kv) || tlrt_malloc(s->ctx, nkpe * 2, &pr.kpe) ||
        tlrt_malloc(s->ctx, nbt * 4, &pr.bt) || tlrt_malloc(s->ctx, (size_t)B * 4, &pr.sl) ||
        tlrt_malloc(s->ctx, (size_t)(rows * ns) * 4, &pr.glse) ||
        tlrt_malloc(s->ctx, (size_t)(rows * ns * DV) * 4, &pr.part) || tlrt_malloc(s->ctx, nq * 2, &pr.out) ||
        tlrt_memset_d8(s->ctx, pr.q, 0x3c, nq * 2) || tlrt_memset_d8(s->ctx, pr.qpe, 0x3c, nqpe * 2) ||
        tlrt_memset_d8(s->ctx, pr.kv, 0x30, nkv * 2) || tlrt_memset_d8(s->ctx, pr.kpe, 0x30, nkpe * 2) ||
        tlrt_memcpy_htod(s->ctx, pr.bt, bt, nbt * 4) || tlrt_memcpy_htod(s->ctx, pr.sl, sl, (size_t)B * 4) ||
        tlrt_event_create(s->ctx, &e0) || tlrt_event_create(s->ctx, &e1)) {
        printf("perf: device error: %s\n", tlrt_last_error(s->ctx));
        goto out;
    }
    float ms[20];
    for (int i = 0; i < 25; i++) {
        tlrt_event_record(s->ctx, e0, NULL);
        if (launch_pair(p, &pr, dt, ns, 0.04) != TLRT_SUCCESS) {
            printf("perf: launch: %s\n", tlrt_last_error(s->ctx));
            goto out;
        }
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
    double bytes = (double)B * (double)seqlen * (DV + DPE) * 2.0;
    printf("perf %-8s b=%lld h_q=%lld seqlen=%lld splits=%d: %.3f ms, KV cache read at %.0f GB/s\n",
           tlrt_dtype_name(dt), (long long)B, (long long)H, (long long)seqlen, ns, ms[10], bytes / (ms[10] * 1e-3) / 1e9);
out:
    fflush(stdout);
    if (e0) tlrt_event_destroy(s->ctx, e0);
    if (e1) tlrt_event_destroy(s->ctx, e1);
    free_problem(s, &pr);
    free(bt);
    free(sl);
}

int main(int argc, char **argv) {
    state s = {0};
    bool perf = false;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--perf")) perf = true;
        else file = argv[i];
    }
    if (!file)
        file = access("dsl-examples/mla_decode.tl", R_OK) == 0 ? "dsl-examples/mla_decode.tl"
                                                                : TLC_SOURCE_DIR "/dsl-examples/mla_decode.tl";
    tlrt_status rs = gts_init_or_skip(&s.ctx);
    int rc = 1;
    if (rs != TLRT_SUCCESS) {
        printf("FAIL tlrt_init: %s\n", tlrt_last_error(s.ctx));
        goto done;
    }
    char devarch[32] = "";
    tlrt_device_arch(s.ctx, devarch, sizeof devarch);
    if (strncmp(devarch, "sm_90", 5) != 0) {
        printf("skipped: mla_decode_split needs sm_90a (the device is %s)\n", devarch);
        rc = 77;
        goto done;
    }
    if (!(s.src = gts_read_text(file, &s.len))) {
        printf("FAIL %s: cannot read\n", file);
        goto done;
    }
    char *err = NULL;
    tlc_jit_options opt = {.arch = "sm_90a", .ctx = s.ctx};
    if (tlc_jit_create(&opt, &s.jit, &err) != TLC_OK) {
        printf("FAIL tlc_jit_create: %s\n", err ? err : "?");
        tlc_free(err);
        goto done;
    }
    const tlrt_dtype dts[2] = {TLRT_F16, TLRT_BF16};
    for (int d = 0; d < 2; d++)
        for (int ci = 0; ci < NCASES; ci++) {
            const mla_case *mc = &CASES[ci];
            if (d == 1 && !mc->both_dtypes) continue;
            pair p;
            if (!load_pair(&s, dts[d], mc->num_split, mc->causal, &p)) {
                s.cases++;
                s.failures++;
                unload_pair(&s, &p);
                continue;
            }
            run_case(&s, &p, dts[d], mc, 0x5eed0000ull + (uint64_t)ci * 7919u + (uint64_t)d);
            unload_pair(&s, &p);
        }
    if (perf) {
        pair p;
        if (load_pair(&s, TLRT_F16, 4, true, &p)) time_case(&s, &p, TLRT_F16, 64, 128, 4096, 4);
        unload_pair(&s, &p);
    }
    printf("test_mla: %d cases, %d failed\n", s.cases, s.failures);
    rc = s.failures ? 1 : 0;
done:
    if (s.jit) tlc_jit_destroy(s.jit);
    free((void *)s.src);
    tlrt_destroy(s.ctx);
    return rc;
}
