/* The shipped kernels (dsl-examples/) in the interpreter against the C
 * references (tests/ref) on small shapes, tails included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_checks.h"
#include "support/read_file.h"

static char *load(const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/dsl-examples/%s", TLC_SOURCE_DIR, name);
    char *t = tlc_read_file(path, len);
    if (!t) fail_msg("cannot read %s", path);
    return t;
}

static void expect_match(const char *what, kc_result r) {
    printf("%s: %s (max abs err %.3g, max rel err %.3g)\n", what, kc_status_name(r.status), r.max_abs_err,
           r.max_rel_err);
    if (r.status != KC_MATCH) fail_msg("%s: %s, %lld elements off\n%s", what, kc_status_name(r.status),
                                       (long long)r.bad, r.msg);
}

static void test_gemm(void **state) {
    (void)state;
    size_t len;
    char *t = load("gemm.tl", &len);
    static const struct { int64_t m, n, k; const char *dt; bool relu; } g[] = {
        {64, 64, 64, "float16", false},    {128, 128, 128, "float16", false}, {256, 128, 192, "float16", false},
        {100, 72, 136, "float16", false},  {100, 72, 136, "float16", true},   {1, 1, 1, "float16", false},
        {130, 257, 65, "bfloat16", false}, {64, 200, 100, "bfloat16", true},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "gemm %lldx%lldx%lld %s%s", (long long)g[i].m, (long long)g[i].n,
                 (long long)g[i].k, g[i].dt, g[i].relu ? " relu" : "");
        expect_match(what, kc_check_gemm("gemm.tl", t, len, g[i].m, g[i].n, g[i].k, g[i].dt, g[i].relu, NULL, 0, i));
    }
    /* other tile sizes: tails in every dim of smaller tiles */
    tlc_define small[] = {{"block_M", "64"}, {"block_N", "32"}, {"block_K", "32"}, {"num_stages", "2"}};
    expect_match("gemm 200x96x130 (64x32x32 tiles)",
                 kc_check_gemm("gemm.tl", t, len, 200, 96, 130, "float16", false, small, 4, 99));
    free(t);
}

static void test_gemm_fp8(void **state) {
    (void)state;
    size_t len;
    char *t = load("gemm_fp8.tl", &len);
    static const struct { int64_t m, n, k; double sa, sb; } g[] = {
        {128, 128, 128, 1, 1}, {256, 128, 384, 0.5, 0.25}, {100, 72, 160, 2, 1}, {1, 1, 16, 1, 3},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "gemm_fp8 %lldx%lldx%lld scales %g %g", (long long)g[i].m, (long long)g[i].n,
                 (long long)g[i].k, g[i].sa, g[i].sb);
        expect_match(what, kc_check_gemm_fp8("gemm_fp8.tl", t, len, g[i].m, g[i].n, g[i].k, g[i].sa, g[i].sb, NULL,
                                             0, 7 + i));
    }
    tlc_define small[] = {{"block_M", "64"}, {"block_N", "32"}, {"block_K", "64"}, {"num_stages", "2"},
                          {"threads", "128"}};
    expect_match("gemm_fp8 200x96x208 (64x32x64 tiles)",
                 kc_check_gemm_fp8("gemm_fp8.tl", t, len, 200, 96, 208, 1, 1, small, 5, 98));
    free(t);
}

static void test_rmsnorm(void **state) {
    (void)state;
    size_t len;
    char *t = load("rmsnorm.tl", &len);
    static const struct { const char *k; int64_t rows, c; const char *dt; double scale; } r[] = {
        {"rmsnorm", 4, 32, "float16", 1},       {"rmsnorm", 7, 96, "float16", 1},
        {"rmsnorm", 13, 1024, "float16", 1},    {"rmsnorm", 5, 256, "bfloat16", 1},
        {"rmsnorm", 3, 128, "float16", 1e-3},   {"rmsnorm_silu", 1, 64, "float16", 1},
        {"rmsnorm_silu", 9, 640, "float16", 1}, {"rmsnorm_silu", 6, 160, "bfloat16", 2},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "%s %lldx%lld %s x%g", r[i].k, (long long)r[i].rows, (long long)r[i].c, r[i].dt,
                 r[i].scale);
        expect_match(what, kc_check_rmsnorm("rmsnorm.tl", t, len, r[i].k, r[i].rows, r[i].c, r[i].dt, r[i].scale,
                                            NULL, 0, 100 + i));
    }
    free(t);
}

static void test_mla(void **state) {
    (void)state;
    size_t len;
    char *t = load("mla_decode.tl", &len);
    static const int32_t sl_a[] = {100, 197}, sl_b[] = {64, 1, 130}, sl_c[] = {300}, sl_d[] = {0, 70},
                         sl_e[] = {192, 700};
    kc_mla_cfg cfgs[] = {
        /* s_q = 1, several pages, seqlens not multiples of 64; 2 + 4 pages
         * over 1 part (nothing split), 2 (part 0 takes the second
         * sequence's first page, part 1 the rest) and 40 (38 parts idle);
         * 3 + 11 pages over 4 parts: part 0 has no room for a page of the
         * second sequence, part 1 takes 6 of its pages, part 2 the last 5 */
        {2, 1, 16, 128, 32, 1, true, "float16", sl_a, 1},
        {2, 1, 16, 128, 32, 2, true, "float16", sl_a, 2},
        {2, 1, 16, 128, 32, 4, true, "float16", sl_e, 3},
        {2, 1, 16, 128, 32, 40, true, "float16", sl_a, 8},
        /* s_q = 2 causal, rows spanning tokens, a 1-token sequence */
        {3, 2, 8, 128, 32, 2, true, "float16", sl_b, 4},
        /* s_q * h_q = 80 rows: two head blocks, the second partial */
        {1, 2, 40, 64, 32, 3, true, "float16", sl_c, 5},
        /* non-causal s_q = 2, an empty sequence, bf16 */
        {2, 2, 4, 64, 32, 2, false, "bfloat16", sl_d, 6},
        /* the real head dims */
        {1, 1, 16, 512, 64, 2, true, "float16", sl_c, 7},
        /* q_rows = 7: the combine's last block of rows is partial */
        {2, 1, 7, 64, 32, 3, true, "float16", sl_a, 9},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        kc_mla_cfg *c = &cfgs[i];
        char what[160];
        snprintf(what, sizeof what, "mla b=%lld s_q=%lld h_q=%lld dv=%lld dpe=%lld parts=%d causal=%d %s",
                 (long long)c->batch, (long long)c->s_q, (long long)c->h_q, (long long)c->dv, (long long)c->dpe,
                 c->num_parts, c->causal, c->dtype);
        expect_match(what, kc_check_mla("mla_decode.tl", t, len, c, NULL, 0));
    }
    /* The schedule over several chunks of lengths (-D chunk=2: the walk
     * runs again chunk by chunk) and over one (chunk=8: the walks' own
     * records): 5 sequences, an empty one and pieces over 3 and 4 parts. */
    static const int32_t sl_f[] = {100, 1, 0, 300, 130};
    static const char *const chunks[] = {"2", "8"};
    for (int ci = 0; ci < 2; ci++)
        for (int parts = 3; parts <= 4; parts++) {
            kc_mla_cfg c = {5, 1, 16, 64, 32, parts, true, "float16", sl_f, 10 + (uint64_t)parts};
            tlc_define chunk[1] = {{"chunk", chunks[ci]}};
            char what[96];
            snprintf(what, sizeof what, "mla schedule b=5 parts=%d chunk=%s", parts, chunks[ci]);
            expect_match(what, kc_check_mla("mla_decode.tl", t, len, &c, chunk, 1));
        }
    free(t);
}

static void test_attention(void **state) {
    (void)state;
    size_t len;
    char *t = load("flash_attention.tl", &len);
    /* small tiles: two warpgroups of 64 rows are the smallest the kernel
     * takes, so block_M 64 with 128 threads; keys in blocks of 16 so that
     * several blocks and a partial last one are walked */
    const tlc_define small[3] = {{"block_M", "64"}, {"threads", "128"}, {"block_N", "16"}};
    kc_attn_cfg cfgs[] = {
        {1, 70, 45, 2, 1, 32, false, "float16", 1},   /* GQA, partial tiles */
        {2, 30, 50, 2, 2, 16, true, "float16", 2},    /* causal, seq_q < seq_kv */
        {1, 40, 20, 3, 1, 16, true, "bfloat16", 3},   /* causal rows that see no key */
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        kc_attn_cfg *c = &cfgs[i];
        char what[160];
        snprintf(what, sizeof what, "attention b=%lld seq_q=%lld seq_kv=%lld heads=%lld/%lld dim=%lld causal=%d %s",
                 (long long)c->batch, (long long)c->seq_q, (long long)c->seq_kv, (long long)c->heads,
                 (long long)c->heads_kv, (long long)c->dim, c->causal, c->dtype);
        expect_match(what, kc_check_attention("flash_attention.tl", t, len, c, small, 3));
    }
    free(t);
}

static void test_attention_varlen(void **state) {
    (void)state;
    size_t len;
    char *t = load("flash_attention.tl", &len);
    const tlc_define small[3] = {{"block_M", "64"}, {"threads", "128"}, {"block_N", "16"}};
    /* packed sequences: one longer than a block of rows, an empty one, one
     * shorter than a key block; causal with more queries than keys (rows
     * that see no key) and fewer */
    static const int32_t q_a[] = {70, 0, 5, 33}, kv_a[] = {45, 0, 9, 40};
    static const int32_t q_b[] = {20, 3, 50}, kv_b[] = {30, 2, 17};
    kc_attn_varlen_cfg cfgs[] = {
        {4, q_a, kv_a, 4, 2, 32, false, "float16", 31},
        {3, q_b, kv_b, 2, 1, 16, true, "bfloat16", 32},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        kc_attn_varlen_cfg *c = &cfgs[i];
        char what[160];
        snprintf(what, sizeof what, "attention varlen b=%lld heads=%lld/%lld dim=%lld causal=%d %s", (long long)c->batch,
                 (long long)c->heads, (long long)c->heads_kv, (long long)c->dim, c->causal, c->dtype);
        expect_match(what, kc_check_attention_varlen("flash_attention.tl", t, len, c, small, 3));
    }
    free(t);
}

/* A function of two kernels: the split kernel writes per-split maxima and
 * sums into workspaces the run allocates, the combine kernel reads them.
 * Shapes with row tails, splits without columns (cols < num_split *
 * block_N), one column, and more column tiles than splits. */
static void test_split_logsumexp(void **state) {
    (void)state;
    size_t len;
    char *t = load("split_logsumexp.tl", &len);
    static const struct { int64_t rows, cols; } s[] = {{1, 1}, {37, 1000}, {16, 64}, {130, 200}, {5, 3000}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "split_logsumexp %lldx%lld", (long long)s[i].rows, (long long)s[i].cols);
        expect_match(what, kc_check_logsumexp("split_logsumexp.tl", t, len, s[i].rows, s[i].cols, NULL, 0, 40 + i));
    }
    tlc_define eight[] = {{"num_split", "8"}, {"block_N", "32"}};
    expect_match("split_logsumexp 9x700 (8 splits of 32 columns)",
                 kc_check_logsumexp("split_logsumexp.tl", t, len, 9, 700, eight, 2, 50));
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_attention_varlen),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_gemm_fp8),
        cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_mla),
        cmocka_unit_test(test_split_logsumexp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
