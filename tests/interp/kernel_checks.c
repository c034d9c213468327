#include "kernel_checks.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/float_conv.h"
#include "interp/random_fill.h"
#include "interp/interp.h"
#include "tlc_ref.h"

const char *kc_status_name(kc_status s) {
    return s == KC_MATCH ? "matches reference" : s == KC_MISMATCH ? "MISMATCH" : "ERROR";
}

char *kc_replace(const char *text, const char *from, const char *to, bool all) {
    size_t fl = strlen(from), tl = strlen(to), count = 0;
    for (const char *p = strstr(text, from); p; p = all ? strstr(p + fl, from) : NULL) count++;
    if (!count) return NULL;
    char *out = malloc(strlen(text) + count * (tl + 1) + 1), *o = out;
    const char *p = text, *q;
    size_t done = 0;
    while ((q = strstr(p, from)) && (all || done == 0)) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, to, tl);
        o += tl;
        p = q + fl;
        done++;
    }
    strcpy(o, p);
    return out;
}

static void say(kc_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(kc_result *r, const char *fmt, ...) {
    size_t n = strlen(r->msg);
    if (n + 1 >= sizeof r->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg + n, sizeof r->msg - n, fmt, ap);
    va_end(ap);
}

/* A host tensor plus the float view of its (dtype-rounded) values. */
typedef struct host_t {
    tlc_interp_tensor t;
    float *f;
    int64_t n;
} host_t;

static void host_init(host_t *h, const char *name, tir_dtype dt, int rank, const int64_t *shape) {
    memset(h, 0, sizeof *h);
    h->t.name = name;
    h->t.dtype = dt;
    h->t.rank = rank;
    h->n = 1;
    for (int d = 0; d < rank; d++) { h->t.shape[d] = shape[d]; h->n *= shape[d]; }
    h->t.data = calloc((size_t)(h->n ? h->n : 1), (size_t)tir_dtype_bytes(dt));
    h->f = calloc((size_t)(h->n ? h->n : 1), sizeof(float));
}

static void host_random(host_t *h, uint64_t *st) {
    tlc_random_fill(h->t.data, h->t.dtype, h->n, st, 0);
    for (int64_t i = 0; i < h->n; i++) h->f[i] = (float)tlc_host_load_f(h->t.data, h->t.dtype, i);
}

/* Outputs start as NaN so elements the kernel never writes show up. */
static void host_poison(host_t *h) {
    for (int64_t i = 0; i < h->n; i++) tlc_host_store_f(h->t.data, h->t.dtype, i, NAN);
}

static void host_free(host_t *h) {
    free(h->t.data);
    free(h->f);
}

/* Compares output h (after the run) with ref (float, rounded to h's dtype
 * first). |out - ref| <= atol * max|ref| + rtol * |ref|; infinities must agree. */
static void compare(kc_result *r, const host_t *h, const float *ref, double atol, double rtol) {
    double mref = 0;
    for (int64_t i = 0; i < h->n; i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > mref) mref = fabs(ref[i]);
    if (mref == 0) mref = 1;
    int shown = 0;
    double maxerr = 0;
    for (int64_t i = 0; i < h->n; i++) {
        double o = tlc_host_load_f(h->t.data, h->t.dtype, i);
        double e = tlc_round_to_dtype(h->t.dtype, ref[i]);
        double err;
        bool bad;
        if (isinf(e) || isinf(o)) { err = (o == e) ? 0 : INFINITY; bad = o != e; }
        else if (isnan(o) || isnan(e)) { err = INFINITY; bad = true; }
        else { err = fabs(o - e); bad = err > atol * mref + rtol * fabs(e); }
        if (err > maxerr) maxerr = err;
        if (bad) {
            r->bad++;
            if (shown++ < 4) say(r, "  %s[%lld]: got %.6g, expected %.6g\n", h->t.name, (long long)i, o, e);
        }
    }
    if (maxerr > r->max_abs_err) r->max_abs_err = maxerr;
    if (maxerr / mref > r->max_rel_err) r->max_rel_err = maxerr / mref;
    if (r->bad && r->status == KC_MATCH) r->status = KC_MISMATCH;
}

/* Compares an int32 [rows, cols] output with ref exactly. */
static void compare_ints(kc_result *r, const char *name, const int32_t *got, const int32_t *ref, int64_t rows,
                         int64_t cols) {
    for (int64_t i = 0; i < rows * cols; i++)
        if (got[i] != ref[i] && r->bad++ < 8)
            say(r, "%s[%lld, %lld] = %d, expected %d\n", name, (long long)(i / cols), (long long)(i % cols), got[i],
                ref[i]);
    if (r->bad && r->status == KC_MATCH) r->status = KC_MISMATCH;
}

static bool compile(kc_result *r, tlc_compilation *c, const char *name, const char *text, size_t len,
                    const tlc_define *defs, int ndefs) {
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    co.defines = defs;
    co.ndefines = ndefs;
    if (!tlc_compile_source(c, name, text, len, &co)) {
        r->status = KC_ERROR;
        say(r, "%s", tlc_sb_cstr(&c->diag.out));
        return false;
    }
    return true;
}

/* Runs the kernel(s) twice from the same inputs, in the interpreter's
 * default order and with blocks and Parallel iterations last to first
 * (tlc_interp_options.reverse): the two results must be identical, bit
 * for bit, or the kernel depends on an order the GPU does not keep. The
 * tensors hold the second run's result. */
static bool run(kc_result *r, tlc_compilation *c, const char *kernel, host_t *hs, int nh,
                const tlc_interp_scalar *sc, int ns) {
    tlc_interp_tensor t[16];
    void *inputs[16], *first[16];
    size_t bytes[16];
    for (int i = 0; i < nh; i++) {
        t[i] = hs[i].t;
        bytes[i] = (size_t)(hs[i].n ? hs[i].n : 1) * (size_t)tir_dtype_bytes(hs[i].t.dtype);
        inputs[i] = malloc(bytes[i]);
        first[i] = malloc(bytes[i]);
        memcpy(inputs[i], hs[i].t.data, bytes[i]);
    }
    tlc_strbuf err;
    tlc_sb_init(&err);
    const tlc_interp_options reverse = {.reverse = true};
    bool ok = tlc_interp_run_module(c->tir, &c->src, kernel, t, nh, sc, ns, NULL, &err);
    for (int i = 0; ok && i < nh; i++) {
        memcpy(first[i], hs[i].t.data, bytes[i]);
        memcpy(hs[i].t.data, inputs[i], bytes[i]);
    }
    ok = ok && tlc_interp_run_module(c->tir, &c->src, kernel, t, nh, sc, ns, &reverse, &err);
    if (!ok) {
        r->status = KC_ERROR;
        say(r, "%s", tlc_sb_cstr(&err));
    }
    for (int i = 0; ok && i < nh; i++) {
        if (!memcmp(first[i], hs[i].t.data, bytes[i])) continue;
        size_t eb = (size_t)tir_dtype_bytes(hs[i].t.dtype), e = 0;
        while (!memcmp((char *)first[i] + e * eb, (char *)hs[i].t.data + e * eb, eb)) e++;
        r->status = KC_MISMATCH;
        r->bad++;
        say(r, "%s: element %zu differs between the default order and blocks and Parallel iterations run last "
               "to first (%g / %g): the result depends on an order the GPU does not keep\n",
            hs[i].t.name, e, tlc_host_load_f(first[i], hs[i].t.dtype, (int64_t)e),
            tlc_host_load_f(hs[i].t.data, hs[i].t.dtype, (int64_t)e));
        ok = false;
    }
    for (int i = 0; i < nh; i++) {
        free(inputs[i]);
        free(first[i]);
    }
    tlc_sb_free(&err);
    return ok;
}

static int add_defs(tlc_define *defs, int n, const tlc_define *extra, int nextra) {
    for (int i = 0; i < nextra && n < 32; i++) defs[n++] = extra[i];
    return n;
}

kc_result kc_check_gemm(const char *name, const char *text, size_t len, int64_t M, int64_t N, int64_t K,
                        const char *dtype, bool relu, const tlc_define *extra, int nextra, uint64_t seed) {
    kc_result r = {0};
    tir_dtype dt;
    if (!tir_dtype_parse(dtype, &dt)) { r.status = KC_ERROR; say(&r, "bad dtype %s\n", dtype); return r; }
    tlc_define defs[32] = {{"dtype", dtype}, {"relu", relu ? "True" : "False"}};
    int nd = add_defs(defs, 2, extra, nextra);
    tlc_compilation c;
    if (!compile(&r, &c, name, text, len, defs, nd)) { tlc_compilation_free(&c); return r; }
    host_t h[3];
    host_init(&h[0], "A", dt, 2, (int64_t[]){M, K});
    host_init(&h[1], "B", dt, 2, (int64_t[]){K, N});
    host_init(&h[2], "C", dt, 2, (int64_t[]){M, N});
    uint64_t st = seed;
    host_random(&h[0], &st);
    host_random(&h[1], &st);
    host_poison(&h[2]);
    if (run(&r, &c, "matmul", h, 3, NULL, 0)) {
        float *ref = malloc(sizeof(float) * (size_t)(M * N > 0 ? M * N : 1));
        tlc_ref_gemm(M, N, K, h[0].f, h[1].f, ref, relu);
        compare(&r, &h[2], ref, 1e-3, dt == TIR_BF16 ? 1.6e-2 : 2e-3);
        free(ref);
    }
    for (int i = 0; i < 3; i++) host_free(&h[i]);
    tlc_compilation_free(&c);
    return r;
}

kc_result kc_check_gemm_fp8(const char *name, const char *text, size_t len, int64_t M, int64_t N, int64_t K,
                            double scale_a, double scale_b, const tlc_define *extra, int nextra, uint64_t seed) {
    kc_result r = {0};
    tlc_define defs[32];
    int nd = add_defs(defs, 0, extra, nextra);
    tlc_compilation c;
    if (!compile(&r, &c, name, text, len, defs, nd)) { tlc_compilation_free(&c); return r; }
    host_t h[3];
    host_init(&h[0], "A", TIR_F8E4M3, 2, (int64_t[]){M, K});
    host_init(&h[1], "B", TIR_F8E4M3, 2, (int64_t[]){N, K});
    host_init(&h[2], "C", TIR_BF16, 2, (int64_t[]){M, N});
    uint64_t st = seed;
    host_random(&h[0], &st);
    host_random(&h[1], &st);
    host_poison(&h[2]);
    tlc_interp_scalar sc[2] = {{.name = "scale_a", .is_float = true, .f = scale_a},
                               {.name = "scale_b", .is_float = true, .f = scale_b}};
    if (run(&r, &c, "matmul_fp8", h, 3, sc, 2)) {
        float *ref = malloc(sizeof(float) * (size_t)(M * N > 0 ? M * N : 1));
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0;
                for (int64_t k = 0; k < K; k++) acc += (double)h[0].f[i * K + k] * h[1].f[j * K + k];
                ref[i * N + j] = (float)(acc * scale_a * scale_b);
            }
        compare(&r, &h[2], ref, 1e-3, 1.6e-2);
        free(ref);
    }
    for (int i = 0; i < 3; i++) host_free(&h[i]);
    tlc_compilation_free(&c);
    return r;
}

kc_result kc_check_rmsnorm(const char *name, const char *text, size_t len, const char *kernel, int64_t rows,
                           int64_t C, const char *dtype, double x_scale, const tlc_define *extra, int nextra,
                           uint64_t seed) {
    kc_result r = {0};
    tir_dtype dt;
    if (!tir_dtype_parse(dtype, &dt)) { r.status = KC_ERROR; say(&r, "bad dtype %s\n", dtype); return r; }
    char cbuf[32];
    snprintf(cbuf, sizeof cbuf, "%lld", (long long)C);
    tlc_define defs[32] = {{"dtype", dtype}, {"C", cbuf}};
    int nd = add_defs(defs, 2, extra, nextra);
    tlc_compilation c;
    if (!compile(&r, &c, name, text, len, defs, nd)) { tlc_compilation_free(&c); return r; }
    host_t h[3];
    host_init(&h[0], "X", dt, 2, (int64_t[]){rows, C});
    host_init(&h[1], "W", dt, 1, (int64_t[]){C});
    host_init(&h[2], "Y", dt, 2, (int64_t[]){rows, C});
    uint64_t st = seed;
    host_random(&h[0], &st);
    for (int64_t i = 0; i < h[0].n; i++) {
        tlc_host_store_f(h[0].t.data, dt, i, h[0].f[i] * x_scale);
        h[0].f[i] = (float)tlc_host_load_f(h[0].t.data, dt, i);
    }
    host_random(&h[1], &st);
    host_poison(&h[2]);
    if (run(&r, &c, kernel, h, 3, NULL, 0)) {
        float *ref = malloc(sizeof(float) * (size_t)(rows * C > 0 ? rows * C : 1));
        /* eps = 1e-5 as documented: a kernel that drops it must fail */
        tlc_ref_rmsnorm(rows, C, h[0].f, h[1].f, 1e-5, strstr(kernel, "silu") != NULL, ref);
        compare(&r, &h[2], ref, 1e-3, dt == TIR_BF16 ? 1.6e-2 : 2e-3);
        free(ref);
    }
    for (int i = 0; i < 3; i++) host_free(&h[i]);
    tlc_compilation_free(&c);
    return r;
}

kc_result kc_check_logsumexp(const char *name, const char *text, size_t len, int64_t rows, int64_t cols,
                             const tlc_define *extra, int nextra, uint64_t seed) {
    kc_result r = {0};
    tlc_define defs[32];
    int nd = add_defs(defs, 0, extra, nextra);
    tlc_compilation c;
    if (!compile(&r, &c, name, text, len, defs, nd)) { tlc_compilation_free(&c); return r; }
    host_t h[2];
    host_init(&h[0], "X", TIR_F32, 2, (int64_t[]){rows, cols});
    host_init(&h[1], "LSE", TIR_F32, 1, (int64_t[]){rows});
    uint64_t st = seed;
    host_random(&h[0], &st);
    for (int64_t i = 0; i < h[0].n; i++) { /* spread the values so that the max matters */
        tlc_host_store_f(h[0].t.data, TIR_F32, i, h[0].f[i] * 8.0);
        h[0].f[i] = (float)tlc_host_load_f(h[0].t.data, TIR_F32, i);
    }
    host_poison(&h[1]);
    if (run(&r, &c, NULL, h, 2, NULL, 0)) {
        float *ref = malloc(sizeof(float) * (size_t)(rows > 0 ? rows : 1));
        tlc_ref_logsumexp(rows, cols, h[0].f, ref);
        compare(&r, &h[1], ref, 1e-5, 1e-5);
        free(ref);
    }
    for (int i = 0; i < 2; i++) host_free(&h[i]);
    tlc_compilation_free(&c);
    return r;
}

kc_result kc_check_mla(const char *name, const char *text, size_t len, const kc_mla_cfg *g,
                       const tlc_define *extra, int nextra) {
    kc_result r = {0};
    tir_dtype dt;
    if (!tir_dtype_parse(g->dtype, &dt)) { r.status = KC_ERROR; say(&r, "bad dtype %s\n", g->dtype); return r; }
    const int64_t page = 64, overhead = 5; /* mla_decode.tl's block_N and overhead */
    char sdv[24], sdpe[24];
    snprintf(sdv, sizeof sdv, "%lld", (long long)g->dv);
    snprintf(sdpe, sizeof sdpe, "%lld", (long long)g->dpe);
    tlc_define defs[32] = {{"dtype", g->dtype}, {"dv", sdv}, {"dpe", sdpe}, {"causal", g->causal ? "True" : "False"}};
    int nd = add_defs(defs, 4, extra, nextra);
    tlc_compilation c;
    if (!compile(&r, &c, name, text, len, defs, nd)) { tlc_compilation_free(&c); return r; }

    int64_t B = g->batch, S = g->s_q, H = g->h_q, np = g->num_parts, max_pages = 1, D = g->dv + g->dpe;
    for (int64_t b = 0; b < B; b++) {
        int64_t p = (g->seqlens[b] + page - 1) / page;
        if (p > max_pages) max_pages = p;
    }
    int64_t num_pages = B * max_pages + 1; /* + one page nobody uses */
    int64_t slots = B + np;
    host_t h[10];
    host_init(&h[0], "Q", dt, 3, (int64_t[]){B, S * H, D});
    host_init(&h[1], "KV", dt, 4, (int64_t[]){num_pages, page, 1, D});
    host_init(&h[2], "block_table", TIR_I32, 2, (int64_t[]){B, max_pages});
    host_init(&h[3], "cache_seqlens", TIR_I32, 1, (int64_t[]){B});
    host_init(&h[4], "sched", TIR_I32, 2, (int64_t[]){np, 4});
    host_init(&h[5], "seq_splits", TIR_I32, 2, (int64_t[]){B, 2});
    host_init(&h[6], "Glse", TIR_F32, 2, (int64_t[]){slots, S * H});
    host_init(&h[7], "Output_partial", TIR_F32, 3, (int64_t[]){slots, S * H, g->dv});
    host_init(&h[8], "Output", dt, 3, (int64_t[]){B, S * H, g->dv});
    uint64_t st = g->seed;
    for (int i = 0; i < 2; i++) host_random(&h[i], &st);
    /* Distinct pages in a shuffled order: paging bugs cannot hide. */
    int32_t *bt = h[2].t.data, *sl = h[3].t.data, *sched = h[4].t.data, *splits = h[5].t.data;
    for (int64_t i = 0; i < B * max_pages; i++) bt[i] = (int32_t)(num_pages - 1 - i);
    for (int64_t i = B * max_pages - 1; i > 0; i--) {
        int64_t j = (int64_t)(tlc_rand_next(&st) % (uint64_t)(i + 1));
        int32_t x = bt[i]; bt[i] = bt[j]; bt[j] = x;
    }
    for (int64_t b = 0; b < B; b++) sl[b] = g->seqlens[b];
    for (int64_t i = 0; i < 4 * np; i++) sched[i] = -7; /* every entry must be written */
    for (int64_t i = 0; i < 2 * B; i++) splits[i] = -7;
    for (int i = 6; i < 9; i++) host_poison(&h[i]);
    double sm_scale = 1.0 / sqrt((double)D);
    tlc_interp_scalar sc[2] = {{.name = "sm_scale", .is_float = true, .f = sm_scale}, {.name = "h_q", .i = H}};
    if (run(&r, &c, NULL, h, 9, sc, 2)) {
        tlc_ref_mla_shape s = {B, S, H, g->dv, g->dpe, num_pages, page, max_pages, g->causal};
        float *out = malloc(sizeof(float) * (size_t)h[8].n);
        int32_t *rsched = malloc(sizeof(int32_t) * (size_t)(4 * np)), *rsplits = malloc(sizeof(int32_t) * (size_t)(2 * B));
        tlc_ref_mla_decode(&s, h[0].f, h[1].f, bt, sl, sm_scale, out);
        compare(&r, &h[8], out, 2e-3, 1e-2);
        tlc_ref_mla_schedule(B, sl, page, overhead, np, rsched, rsplits);
        compare_ints(&r, "sched", sched, rsched, np, 4);
        compare_ints(&r, "seq_splits", splits, rsplits, B, 2);
        free(out);
        free(rsched);
        free(rsplits);
    }
    for (int i = 0; i < 9; i++) host_free(&h[i]);
    tlc_compilation_free(&c);
    return r;
}

/* flash_attention.tl compiled with its dtype, causal and dim defines (and
 * `extra`); false with r set when the dtype is unknown or it does not compile. */
static bool compile_attention(kc_result *r, tlc_compilation *c, tir_dtype *dt, const char *name, const char *text,
                              size_t len, const char *dtype, bool causal, int64_t dim, const tlc_define *extra,
                              int nextra) {
    if (!tir_dtype_parse(dtype, dt)) {
        r->status = KC_ERROR;
        say(r, "bad dtype %s\n", dtype);
        return false;
    }
    char sdim[24];
    snprintf(sdim, sizeof sdim, "%lld", (long long)dim);
    tlc_define defs[32] = {{"dtype", dtype}, {"causal", causal ? "True" : "False"}, {"dim", sdim}};
    int nd = add_defs(defs, 3, extra, nextra);
    if (compile(r, c, name, text, len, defs, nd)) return true;
    tlc_compilation_free(c);
    return false;
}

kc_result kc_check_attention(const char *name, const char *text, size_t len, const kc_attn_cfg *g,
                             const tlc_define *extra, int nextra) {
    kc_result r = {0};
    tir_dtype dt;
    tlc_compilation c;
    if (!compile_attention(&r, &c, &dt, name, text, len, g->dtype, g->causal, g->dim, extra, nextra)) return r;
    int64_t B = g->batch, SQ = g->seq_q, SK = g->seq_kv, H = g->heads, HK = g->heads_kv, D = g->dim;
    host_t h[5];
    host_init(&h[0], "Q", dt, 4, (int64_t[]){B, SQ, H, D});
    host_init(&h[1], "K", dt, 4, (int64_t[]){B, SK, HK, D});
    host_init(&h[2], "V", dt, 4, (int64_t[]){B, SK, HK, D});
    host_init(&h[3], "Output", dt, 4, (int64_t[]){B, SQ, H, D});
    host_init(&h[4], "Lse", TIR_F32, 3, (int64_t[]){B, H, SQ});
    uint64_t st = g->seed;
    for (int i = 0; i < 3; i++) host_random(&h[i], &st);
    host_poison(&h[3]);
    host_poison(&h[4]);
    double sm_scale = 1.0 / sqrt((double)D);
    tlc_interp_scalar sc[1] = {{"sm_scale", true, sm_scale, 0}};
    if (run(&r, &c, "flash_attention", h, 5, sc, 1)) {
        float *out = malloc(sizeof(float) * (size_t)(h[3].n + 1)), *lse = malloc(sizeof(float) * (size_t)(h[4].n + 1));
        tlc_ref_attn_shape sh = {B, SQ, SK, H, HK, D, g->causal};
        tlc_ref_attention(&sh, h[0].f, h[1].f, h[2].f, sm_scale, out, lse);
        compare(&r, &h[3], out, 2e-3, dt == TIR_BF16 ? 2e-2 : 1e-2);
        compare(&r, &h[4], lse, 1e-3, 1e-3);
        free(out);
        free(lse);
    }
    for (int i = 0; i < 5; i++) host_free(&h[i]);
    tlc_compilation_free(&c);
    return r;
}

kc_result kc_check_attention_varlen(const char *name, const char *text, size_t len, const kc_attn_varlen_cfg *g,
                                    const tlc_define *extra, int nextra) {
    kc_result r = {0};
    tir_dtype dt;
    tlc_compilation c;
    if (!compile_attention(&r, &c, &dt, name, text, len, g->dtype, g->causal, g->dim, extra, nextra)) return r;
    int64_t B = g->batch, H = g->heads, HK = g->heads_kv, D = g->dim, TQ = 0, TK = 0, max_q = 0;
    for (int64_t b = 0; b < B; b++) {
        TQ += g->seq_q[b];
        TK += g->seq_kv[b];
        if (g->seq_q[b] > max_q) max_q = g->seq_q[b];
    }
    host_t h[7];
    host_init(&h[0], "Q", dt, 3, (int64_t[]){TQ, H, D});
    host_init(&h[1], "K", dt, 3, (int64_t[]){TK, HK, D});
    host_init(&h[2], "V", dt, 3, (int64_t[]){TK, HK, D});
    host_init(&h[3], "cu_seqlens_q", TIR_I32, 1, (int64_t[]){B + 1});
    host_init(&h[4], "cu_seqlens_kv", TIR_I32, 1, (int64_t[]){B + 1});
    host_init(&h[5], "Output", dt, 3, (int64_t[]){TQ, H, D});
    host_init(&h[6], "Lse", TIR_F32, 2, (int64_t[]){H, TQ});
    int32_t *cq = h[3].t.data, *ck = h[4].t.data;
    cq[0] = ck[0] = 0;
    for (int64_t b = 0; b < B; b++) {
        cq[b + 1] = cq[b] + g->seq_q[b];
        ck[b + 1] = ck[b] + g->seq_kv[b];
    }
    uint64_t st = g->seed;
    for (int i = 0; i < 3; i++) host_random(&h[i], &st);
    host_poison(&h[5]);
    host_poison(&h[6]);
    double sm_scale = 1.0 / sqrt((double)D);
    tlc_interp_scalar sc[2] = {{.name = "sm_scale", .is_float = true, .f = sm_scale}, {.name = "max_seqlen_q", .i = max_q}};
    if (run(&r, &c, "flash_attention_varlen", h, 7, sc, 2)) {
        float *out = malloc(sizeof(float) * (size_t)(h[5].n + 1)), *lse = malloc(sizeof(float) * (size_t)(h[6].n + 1));
        tlc_ref_attn_varlen_shape sh = {B, cq, ck, H, HK, D, g->causal};
        tlc_ref_attention_varlen(&sh, h[0].f, h[1].f, h[2].f, sm_scale, out, lse);
        compare(&r, &h[5], out, 2e-3, dt == TIR_BF16 ? 2e-2 : 1e-2);
        compare(&r, &h[6], lse, 1e-3, 1e-3);
        free(out);
        free(lse);
    }
    for (int i = 0; i < 7; i++) host_free(&h[i]);
    tlc_compilation_free(&c);
    return r;
}
