/* gpu/mla: dsl-examples/mla_decode.tl on the GPU through the JIT:
 * mla_decode_schedule, mla_decode_split (TMA + wgmma, sm_90a) and
 * mla_decode_combine, in FlashMLA's layout (Q [b, s_q, h_q, 576] viewed as
 * [b, s_q * h_q, 576], the cache [pages, 64, 1, 576]), against the plain C references of tests/ref:
 * tlc_ref_mla_schedule for the schedule (sched, seq_splits, exactly) and
 * tlc_ref_mla_decode for Output, computed in double from the same rounded
 * inputs.
 *
 * Cases: float16 and bfloat16; batch 2, 8 and 33; h_q 16, 64 and 128 (s_q *
 * h_q up to 256 rows: several head blocks of 64); s_q 1, 2 and 4 (causal:
 * query token t sees keys up to seqlen - s_q + t); one non-causal case; the
 * work spread over 1 part (nothing split), a few, 66 or 132 (one block per
 * SM: many sequences split, pieces with no page), and more parts than
 * units (idle parts). The schedule also runs alone for batches of 1,030 to
 * 4,096 (several chunks of lengths; run_schedule_case). Sequence lengths are random and never multiples of
 * 64 (the last page is partial), some shorter than a page, one 0 (output
 * 0), and one 1 with s_q = 2 (query token 0 sees no key: output 0). The
 * cache pages are distinct and shuffled (block_table), with a page nobody
 * uses; in two cases the cache is a strided view (head 0 of a
 * [pages, 64, 2, 576] tensor whose head 1 is NaN), which the kernel reads
 * through TMA only (metadata `strided`). Inputs are uniform in [-1, 1); every output and workspace is
 * poisoned (0xFF bytes: NaN, -1) before each launch, so an element never
 * written fails.
 *
 * Tolerances: Output |got - ref| <= atol + rtol * |ref| with (atol, rtol) =
 * (2e-3, 1e-2) for float16 and (8e-3, 2e-2) for bfloat16. The softmax
 * weights P are rounded to the input dtype before the second gemm
 * (relative 2^-11 / 2^-8), which moves an output by at most that times max
 * |KV| = 1, and the output itself is rounded to the dtype (rtol); a wrong
 * page, mask, piece or race moves outputs by their own size (0.02 .. 1).
 *
 *   test_mla [path/to/mla_decode.tl]
 * TLC_MLA_CASE=i runs only case i (0-based) of CASES.
 * Exits 0 when every case passes, 1 otherwise, 77 ("skipped: no CUDA
 * driver") without a GPU, and 77 on a GPU that is not sm_90 (the split
 * kernel needs sm_90a's 227 KiB of shared memory and wgmma).
 * tools/bench/mla_bench.py times the kernels against FlashMLA. */
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

enum { DV = 512, DPE = 64, D = DV + DPE, PAGE = 64, OVERHEAD = 5 /* mla_decode.tl's overhead */ };

typedef struct mla_case {
    int64_t batch, s_q, h_q;
    int num_parts;
    bool causal;
    int64_t max_len;   /* sequence lengths are drawn from [1, max_len] */
    bool seqlen_one;   /* sequence 0 has length 1 */
    bool seqlen_zero;  /* the last sequence has length 0 */
    bool both_dtypes;  /* else float16 only */
    bool strided_kv;   /* the cache is head 0 of a [pages, 64, 2, 576] tensor (a strided view) */
} mla_case;

static const mla_case CASES[] = {
    {2, 1, 16, 1, true, 1100, false, false, true, false},   {2, 2, 16, 3, true, 1100, true, false, true, false},
    {2, 1, 128, 66, true, 700, false, false, true, true}, {2, 2, 128, 5, true, 700, false, true, true, false},
    {8, 1, 16, 132, true, 1500, false, false, true, false}, {8, 2, 16, 7, true, 900, false, true, true, false},
    {8, 1, 128, 66, true, 600, false, false, true, false},  {8, 2, 128, 66, true, 500, false, false, true, false},
    {2, 2, 16, 1, true, 300, false, false, false, false},   {33, 1, 16, 132, true, 2000, false, true, false, false},
    {2, 2, 16, 4, false, 500, false, false, false, false},  {8, 2, 128, 66, true, 2500, false, false, false, false},
    {4, 4, 16, 33, true, 800, false, false, false, true}, {3, 1, 64, 400, true, 200, false, false, false, false},
};
enum { NCASES = sizeof CASES / sizeof CASES[0] };

typedef struct state {
    tlrt_context *ctx;
    tlc_jit *jit;
    const char *src;
    size_t len;
    int cases, failures;
    const char *cluster; /* mla_decode_split's -D cluster (NULL: its default) */
    const char *roles;   /* and its -D roles (NULL: its default) */
} state;

/* The three kernels for (dtype, causal); false (reported) on failure. */
enum { NK = 3 };
static const char *const KNAMES[NK] = {"mla_decode_schedule", "mla_decode_split", "mla_decode_combine"};
typedef struct trio {
    tlrt_module *mod[NK];
    tlrt_kernel *k[NK];
} trio;

static bool load_trio(state *s, tlrt_dtype dt, bool causal, trio *p) {
    tlc_jit_define defs[4] = {{"dtype", tlrt_dtype_name(dt)}, {"causal", causal ? "True" : "False"}};
    int ndefs = 2;
    if (s->cluster) defs[ndefs++] = (tlc_jit_define){"cluster", s->cluster};
    if (s->roles) defs[ndefs++] = (tlc_jit_define){"roles", s->roles};
    memset(p, 0, sizeof *p);
    for (int i = 0; i < NK; i++) {
        char *err = NULL;
        if (tlc_jit_load_kernel(s->jit, s->ctx, s->src, s->len, "mla_decode.tl", defs, i == 1 ? ndefs : 2, KNAMES[i],
                                &p->mod[i], &p->k[i], &err) != TLC_OK) {
            printf("FAIL %s %s: cannot load: %s\n", KNAMES[i], tlrt_dtype_name(dt), err ? err : "?");
            tlc_free(err);
            return false;
        }
    }
    return true;
}

static void unload_trio(state *s, trio *p) {
    for (int i = 0; i < NK; i++)
        if (p->mod[i]) tlrt_module_unload(s->ctx, p->mod[i]);
}

/* Device buffers of one problem. */
typedef struct problem {
    int64_t B, S, H, num_pages, max_pages, parts;
    tlrt_devptr q, kv, bt, sl, sched, splits, glse, part, out;
} problem;

static void free_problem(state *s, problem *pr) {
    tlrt_devptr *all[] = {&pr->q, &pr->kv, &pr->bt, &pr->sl, &pr->sched, &pr->splits, &pr->glse, &pr->part, &pr->out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i]) tlrt_free(s->ctx, *all[i]);
}

static tlrt_status launch_trio(const trio *p, const problem *pr, tlrt_dtype dt, double sm_scale, bool strided_kv) {
    int64_t slots = pr->B + pr->parts;
    int64_t rows = pr->S * pr->H;
    int64_t sq[3] = {pr->B, rows, D}, skv[4] = {pr->num_pages, PAGE, 1, D};
    int64_t kv_strides[4] = {PAGE * 2 * D, 2 * D, D, 1}; /* head 0 of [pages, 64, 2, D] */
    int64_t sbt[2] = {pr->B, pr->max_pages}, ssl[1] = {pr->B}, ssch[2] = {pr->parts, 4}, ssp[2] = {pr->B, 2};
    int64_t sg[2] = {slots, rows}, sp[3] = {slots, rows, DV}, so[3] = {pr->B, rows, DV};
    tlrt_arg sched = tlrt_arg_tensor(pr->sched, TLRT_I32, 2, ssch, NULL);
    tlrt_arg splits = tlrt_arg_tensor(pr->splits, TLRT_I32, 2, ssp, NULL);
    tlrt_arg sl = tlrt_arg_tensor(pr->sl, TLRT_I32, 1, ssl, NULL);
    tlrt_arg glse = tlrt_arg_tensor(pr->glse, TLRT_F32, 2, sg, NULL);
    tlrt_arg part = tlrt_arg_tensor(pr->part, TLRT_F32, 3, sp, NULL);
    tlrt_arg out = tlrt_arg_tensor(pr->out, dt, 3, so, NULL);
    tlrt_arg a0[3] = {sl, sched, splits};
    tlrt_status st = tlrt_launch(p->k[0], a0, 3, NULL);
    if (st != TLRT_SUCCESS) return st;
    tlrt_arg a1[11] = {tlrt_arg_tensor(pr->q, dt, 3, sq, NULL),
                       tlrt_arg_tensor(pr->kv, dt, 4, skv, strided_kv ? kv_strides : NULL),
                       tlrt_arg_tensor(pr->bt, TLRT_I32, 2, sbt, NULL), sl, sched, splits, glse, part, out,
                       tlrt_arg_float(TLRT_F32, sm_scale), tlrt_arg_int(TLRT_I32, pr->H)};
    st = tlrt_launch(p->k[1], a1, 11, NULL);
    if (st != TLRT_SUCCESS) return st;
    tlrt_arg a2[4] = {splits, glse, part, out};
    return tlrt_launch(p->k[2], a2, 4, NULL);
}

/* Compares n values; counts and shows the bad ones. Returns the number bad. */
static int64_t compare_int(const char *what, const int32_t *got, const int32_t *ref, int64_t n) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (got[i] != ref[i]) {
            if (bad < 3) printf("     %s[%lld] = %d, expected %d\n", what, (long long)i, got[i], ref[i]);
            bad++;
        }
    return bad;
}

/* p NULL: the case's kernels did not load, and it counts as failed. */
static void run_case(state *s, const trio *p, tlrt_dtype dt, const mla_case *mc, uint64_t seed) {
    problem pr = {.B = mc->batch, .S = mc->s_q, .H = mc->h_q, .parts = mc->num_parts};
    s->cases++;
    if (!p) {
        s->failures++;
        return;
    }
    uint64_t st = seed;
    int32_t *sl = malloc(sizeof(int32_t) * (size_t)pr.B);
    for (int64_t b = 0; b < pr.B; b++) {
        int64_t len = 1 + (int64_t)(gts_splitmix(&st) % (uint64_t)mc->max_len);
        if (b == 1) len = 1 + (int64_t)(gts_splitmix(&st) % 63);     /* shorter than a page */
        if (len % PAGE == 0) len++;                               /* a partial last page */
        if (mc->seqlen_one && b == 0) len = 1;
        if (mc->seqlen_zero && b == pr.B - 1) len = 0;
        sl[b] = (int32_t)len;
    }
    pr.max_pages = 1;
    for (int64_t b = 0; b < pr.B; b++)
        if ((sl[b] + PAGE - 1) / PAGE > pr.max_pages) pr.max_pages = (sl[b] + PAGE - 1) / PAGE;
    pr.num_pages = pr.B * pr.max_pages + 1; /* + one page nobody uses */
    int64_t rows = pr.B * pr.S * pr.H, slots = pr.B + pr.parts;
    size_t nq = (size_t)(rows * D), nkv = (size_t)(pr.num_pages * PAGE * D), no = (size_t)(rows * DV);
    size_t nbt = (size_t)(pr.B * pr.max_pages), nsch = (size_t)(4 * pr.parts), nsp = (size_t)(2 * pr.B);
    size_t ng = (size_t)(slots * pr.S * pr.H), np = ng * DV;
    uint16_t *hq = malloc(nq * 2), *hkv = malloc(nkv * 2), *hout = malloc(no * 2);
    float *fq = malloc(nq * 4), *fkv = malloc(nkv * 4), *out = malloc(no * 4), *rout = malloc(no * 4);
    int32_t *bt = malloc(nbt * 4), *sched = malloc(nsch * 4), *splits = malloc(nsp * 4);
    int32_t *rsched = malloc(nsch * 4), *rsplits = malloc(nsp * 4);
    char what[192];
    snprintf(what, sizeof what, "%-8s b=%lld s_q=%lld h_q=%3lld parts=%lld%s%s%s%s%s seqlens=%d,%d..", tlrt_dtype_name(dt),
             (long long)pr.B, (long long)pr.S, (long long)pr.H, (long long)pr.parts, mc->causal ? "" : " non-causal",
             mc->strided_kv ? " strided-cache" : "", s->cluster ? " cluster=" : "", s->cluster ? s->cluster : "",
             s->roles ? " roles" : "", sl[0],
             pr.B > 1 ? sl[1] : 0);
    if (!hq || !hkv || !hout || !fq || !fkv || !out || !rout || !bt || !sched || !splits || !rsched || !rsplits) {
        printf("FAIL %s: out of host memory\n", what);
        s->failures++;
        goto out;
    }
    struct { uint16_t *h; float *f; size_t n; } in[2] = {{hq, fq, nq}, {hkv, fkv, nkv}};
    for (int i = 0; i < 2; i++)
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
    /* a strided cache: tokens interleaved with a second head of NaNs (0xFFFF),
     * which a wrong stride would read */
    size_t kv_bytes = nkv * 2 * (mc->strided_kv ? 2 : 1);
    uint16_t *dkv = hkv;
    if (mc->strided_kv) {
        dkv = malloc(kv_bytes);
        if (!dkv) goto device_error;
        for (size_t t = 0; t < nkv / D; t++) {
            memcpy(dkv + (2 * t) * D, hkv + t * D, D * 2);
            memset(dkv + (2 * t + 1) * D, 0xff, D * 2);
        }
    }
    if (tlrt_malloc(s->ctx, nq * 2, &pr.q) || tlrt_malloc(s->ctx, kv_bytes, &pr.kv) ||
        tlrt_malloc(s->ctx, nbt * 4, &pr.bt) || tlrt_malloc(s->ctx, (size_t)pr.B * 4, &pr.sl) ||
        tlrt_malloc(s->ctx, nsch * 4, &pr.sched) || tlrt_malloc(s->ctx, nsp * 4, &pr.splits) ||
        tlrt_malloc(s->ctx, ng * 4, &pr.glse) || tlrt_malloc(s->ctx, np * 4, &pr.part) ||
        tlrt_malloc(s->ctx, no * 2, &pr.out))
        goto device_error;
    bool copied = tlrt_memcpy_htod(s->ctx, pr.kv, dkv, kv_bytes) == TLRT_SUCCESS;
    if (dkv != hkv) free(dkv);
    if (!copied) goto device_error;
    if (tlrt_memcpy_htod(s->ctx, pr.q, hq, nq * 2) ||
        tlrt_memcpy_htod(s->ctx, pr.bt, bt, nbt * 4) || tlrt_memcpy_htod(s->ctx, pr.sl, sl, (size_t)pr.B * 4) ||
        tlrt_memset_d8(s->ctx, pr.sched, 0xff, nsch * 4) || tlrt_memset_d8(s->ctx, pr.splits, 0xff, nsp * 4) ||
        tlrt_memset_d8(s->ctx, pr.glse, 0xff, ng * 4) || tlrt_memset_d8(s->ctx, pr.part, 0xff, np * 4) ||
        tlrt_memset_d8(s->ctx, pr.out, 0xff, no * 2))
        goto device_error;
    double sm_scale = 1.0 / sqrt((double)D);
    if (launch_trio(p, &pr, dt, sm_scale, mc->strided_kv) != TLRT_SUCCESS || tlrt_synchronize(s->ctx) != TLRT_SUCCESS) {
        printf("FAIL %s: launch: %s\n", what, tlrt_last_error(s->ctx));
        s->failures++;
        goto out;
    }
    if (tlrt_memcpy_dtoh(s->ctx, sched, pr.sched, nsch * 4) || tlrt_memcpy_dtoh(s->ctx, splits, pr.splits, nsp * 4) ||
        tlrt_memcpy_dtoh(s->ctx, hout, pr.out, no * 2))
        goto device_error;
    for (size_t i = 0; i < no; i++) out[i] = gts_decode(dt, hout[i]);
    {
        tlc_ref_mla_shape sh = {pr.B, pr.S, pr.H, DV, DPE, pr.num_pages, PAGE, pr.max_pages, mc->causal};
        tlc_ref_mla_decode(&sh, fq, fkv, bt, sl, sm_scale, rout);
        for (size_t i = 0; i < no; i++) rout[i] = gts_decode(dt, gts_encode(dt, rout[i])); /* the output's rounding */
        tlc_ref_mla_schedule(pr.B, sl, PAGE, OVERHEAD, pr.parts, rsched, rsplits);
        double atol = dt == TLRT_F16 ? 2e-3 : 8e-3, rtol = dt == TLRT_F16 ? 1e-2 : 2e-2, worst = 0;
        int64_t bad = compare_int("sched", sched, rsched, (int64_t)nsch);
        bad += compare_int("seq_splits", splits, rsplits, (int64_t)nsp);
        bad += gts_compare("Output", out, rout, (int64_t)no, atol, rtol, &worst);
        int64_t pieces = 0;
        for (int64_t b = 0; b < pr.B; b++) pieces += rsplits[2 * b + 1] > 1 ? rsplits[2 * b + 1] : 0;
        if (bad) {
            s->failures++;
            printf("FAIL %s: %lld elements wrong\n", what, (long long)bad);
        } else {
            printf("ok   %s: %zu outputs checked (%lld pieces of split sequences), max err/tol %.3f\n", what, no,
                   (long long)pieces, worst);
        }
    }
    goto out;
device_error:
    gts_device_failure(s->ctx, what, &s->failures);
out:
    fflush(stdout);
    free_problem(s, &pr);
    free(hq); free(hkv); free(hout); free(fq); free(fkv); free(out); free(rout);
    free(bt); free(sched); free(splits); free(rsched); free(rsplits); free(sl);
}

/* The schedule alone for batches past one chunk of lengths (1024) and
 * parts from 7 to 132: lengths drawn from 0, 1, 63, 64, 65, 1000, 4096 and
 * 20000 tokens (many sequences split, zero-length ones), or uniform in
 * [0, 9000); sched and seq_splits compared exactly with
 * tlc_ref_mla_schedule. */
static void run_schedule_case(state *s, const trio *p, int64_t B, int64_t parts, bool uniform, uint64_t seed) {
    static const int32_t mix[] = {0, 1, 63, 64, 65, 1000, 4096, 20000};
    s->cases++;
    uint64_t st = seed;
    size_t nsch = (size_t)(4 * parts), nsp = (size_t)(2 * B);
    int32_t *sl = malloc((size_t)B * 4), *sched = malloc(nsch * 4), *splits = malloc(nsp * 4);
    int32_t *rsched = malloc(nsch * 4), *rsplits = malloc(nsp * 4);
    tlrt_devptr dsl = 0, dsched = 0, dsplits = 0;
    char what[96];
    snprintf(what, sizeof what, "schedule b=%lld parts=%lld %s lengths", (long long)B, (long long)parts,
             uniform ? "uniform" : "mixed");
    if (!sl || !sched || !splits || !rsched || !rsplits) {
        printf("FAIL %s: out of host memory\n", what);
        s->failures++;
        goto out;
    }
    for (int64_t b = 0; b < B; b++)
        sl[b] = uniform ? (int32_t)(gts_splitmix(&st) % 9000u) : mix[gts_splitmix(&st) % 8u];
    int64_t ssl[1] = {B}, ssch[2] = {parts, 4}, ssp[2] = {B, 2};
    if (tlrt_malloc(s->ctx, (size_t)B * 4, &dsl) || tlrt_malloc(s->ctx, nsch * 4, &dsched) ||
        tlrt_malloc(s->ctx, nsp * 4, &dsplits) || tlrt_memcpy_htod(s->ctx, dsl, sl, (size_t)B * 4) ||
        tlrt_memset_d8(s->ctx, dsched, 0xff, nsch * 4) || tlrt_memset_d8(s->ctx, dsplits, 0xff, nsp * 4))
        goto device_error;
    tlrt_arg a[3] = {tlrt_arg_tensor(dsl, TLRT_I32, 1, ssl, NULL), tlrt_arg_tensor(dsched, TLRT_I32, 2, ssch, NULL),
                     tlrt_arg_tensor(dsplits, TLRT_I32, 2, ssp, NULL)};
    if (tlrt_launch(p->k[0], a, 3, NULL) || tlrt_synchronize(s->ctx) ||
        tlrt_memcpy_dtoh(s->ctx, sched, dsched, nsch * 4) || tlrt_memcpy_dtoh(s->ctx, splits, dsplits, nsp * 4))
        goto device_error;
    tlc_ref_mla_schedule(B, sl, PAGE, OVERHEAD, parts, rsched, rsplits);
    int64_t bad = compare_int("sched", sched, rsched, (int64_t)nsch) + compare_int("seq_splits", splits, rsplits, (int64_t)nsp);
    if (bad) {
        s->failures++;
        printf("FAIL %s: %lld values wrong\n", what, (long long)bad);
    } else {
        printf("ok   %s\n", what);
    }
    goto out;
device_error:
    gts_device_failure(s->ctx, what, &s->failures);
out:
    fflush(stdout);
    tlrt_devptr *all[] = {&dsl, &dsched, &dsplits};
    for (size_t i = 0; i < 3; i++)
        if (*all[i]) tlrt_free(s->ctx, *all[i]);
    free(sl); free(sched); free(splits); free(rsched); free(rsplits);
}

int main(int argc, char **argv) {
    state s = {0};
    int rc = gts_start_sm90a(argc > 1 ? argv[1] : NULL, "dsl-examples/mla_decode.tl",
                             TLC_SOURCE_DIR "/dsl-examples/mla_decode.tl", "mla_decode_split", &s.ctx, &s.jit, &s.src,
                             &s.len);
    if (rc) goto done;
    /* TLC_MLA_CASE=i runs case i (0-based, of CASES) alone (under compute-sanitizer) */
    const char *only = getenv("TLC_MLA_CASE");
    const tlrt_dtype dts[2] = {TLRT_F16, TLRT_BF16};
    for (int d = 0; d < 2; d++)
        for (int causal = 1; causal >= 0; causal--) {
            trio p = {0};
            bool loaded = false, tried = false;
            for (int ci = 0; ci < NCASES; ci++) {
                const mla_case *mc = &CASES[ci];
                if ((d == 1 && !mc->both_dtypes) || mc->causal != (causal == 1)) continue;
                if (only && *only && atoi(only) != ci) continue;
                if (!tried) { /* compiled only for a (dtype, causal) that has cases */
                    loaded = load_trio(&s, dts[d], causal, &p);
                    tried = true;
                }
                run_case(&s, loaded ? &p : NULL, dts[d], mc, 0x5eed0000ull + (uint64_t)ci * 7919u + (uint64_t)d);
            }
            if (loaded && d == 0 && causal == 1 && !(only && *only)) {
                static const struct { int64_t B, parts; } big[] = {{2500, 132}, {1500, 7}, {1030, 66}, {4096, 132}};
                for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
                    for (int u = 0; u < 2; u++)
                        run_schedule_case(&s, &p, big[i].B, big[i].parts, u == 1, 0x5c4ed000ull + i * 31u + (uint64_t)u);
            }
            unload_trio(&s, &p);
        }
    /* A score warpgroup beside the two consumer warpgroups (-D roles=True,
     * three consumer warpgroups in all): every case, float16 and bfloat16,
     * causal and not, and the pairs of head blocks as clusters after */
    s.roles = "True";
    for (int d = 0; d < 2 && !(only && *only); d++)
        for (int causal = 1; causal >= 0; causal--) {
            trio p = {0};
            bool loaded = load_trio(&s, dts[d], causal, &p);
            for (int ci = 0; ci < NCASES; ci++) {
                const mla_case *mc = &CASES[ci];
                if ((d == 1 && !mc->both_dtypes) || mc->causal != (causal == 1)) continue;
                run_case(&s, loaded ? &p : NULL, dts[d], mc, 0x401e5000ull + (uint64_t)ci * 7919u + (uint64_t)d);
            }
            unload_trio(&s, &p);
        }
    /* Head blocks in pairs as thread block clusters (-D cluster=2: the
     * pages multicast to both): the cases with an even number of head
     * blocks (h_q * s_q a multiple of 128), float16 and bfloat16, causal */
    s.cluster = "2";
    for (int d = 0; d < 2 && !(only && *only); d++) {
        trio p = {0};
        bool loaded = load_trio(&s, dts[d], true, &p);
        for (int ci = 0; ci < NCASES; ci++) {
            const mla_case *mc = &CASES[ci];
            if (!mc->causal || (mc->h_q * mc->s_q) % 128) continue;
            run_case(&s, loaded ? &p : NULL, dts[d], mc, 0xc1057e00ull + (uint64_t)ci * 7919u + (uint64_t)d);
        }
        unload_trio(&s, &p);
    }
    printf("test_mla: %d cases, %d failed\n", s.cases, s.failures);
    rc = s.failures ? 1 : 0;
done:
    if (s.jit) tlc_jit_destroy(s.jit);
    free((void *)s.src);
    tlrt_destroy(s.ctx);
    return rc;
}
