/* The interpreter tests can fail: mutated copies of the shipped kernels
 * (text substitutions made here, at test time) must be reported as
 * MISMATCH by the same comparison that passes the originals. Each mutant
 * is first checked to differ from the original (the substitution applied). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_checks.h"
#include "support/read_file.h"

static char *load(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/dsl-examples/%s", TLC_SOURCE_DIR, name);
    char *t = tlc_read_file(path, NULL);
    if (!t) fail_msg("cannot read %s", path);
    return t;
}

static char *mutate(const char *text, const char *from, const char *to, bool all) {
    char *m = kc_replace(text, from, to, all);
    if (!m) fail_msg("mutation target '%s' not found in the kernel (was it rewritten?)", from);
    return m;
}

static void expect_caught(const char *what, kc_result r) {
    printf("mutant %s: %s (%lld elements off, max rel err %.3g)\n", what, kc_status_name(r.status),
           (long long)r.bad, r.max_rel_err);
    if (r.status != KC_MISMATCH)
        fail_msg("mutant '%s' was not reported as a mismatch: %s\n%s", what, kc_status_name(r.status), r.msg);
}

static const int32_t mla_seqlens[] = {130, 700}; /* 3 + 11 pages over 2 parts: the second is split, 2 + 9 */
static const kc_mla_cfg mla_cfg = {2, 1, 16, 128, 32, 2, true, "float16", mla_seqlens, 21};
/* 3 + 32 pages over 4 parts: the second sequence also takes whole parts */
static const int32_t mla_seqlens_long[] = {130, 2000};
static const kc_mla_cfg mla_cfg_long = {2, 1, 16, 128, 32, 4, true, "float16", mla_seqlens_long, 23};
/* 3 + 32 pages over 3 parts: the second sequence in three pieces (odd) */
static const kc_mla_cfg mla_cfg_odd = {2, 1, 16, 128, 32, 3, true, "float16", mla_seqlens_long, 24};
static const int32_t mla_seqlens2[] = {150, 130};
static const kc_mla_cfg mla_cfg_sq2 = {2, 2, 8, 64, 32, 2, true, "float16", mla_seqlens2, 22};

static void check_mla_mutant(const char *what, const char *from, const char *to, bool all, const kc_mla_cfg *cfg) {
    char *t = load("mla_decode.tl");
    kc_result orig = kc_check_mla("mla_decode.tl", t, strlen(t), cfg, NULL, 0);
    if (orig.status != KC_MATCH) fail_msg("the original MLA kernel does not match:\n%s", orig.msg);
    char *m = mutate(t, from, to, all);
    expect_caught(what, kc_check_mla("mla_decode.tl(mutant)", m, strlen(m), cfg, NULL, 0));
    free(m);
    free(t);
}

static const kc_attn_cfg attn_cfg = {1, 40, 70, 4, 2, 16, true, "float16", 23};
static const tlc_define attn_small[3] = {{"block_M", "64"}, {"threads", "128"}, {"block_N", "16"}};

static void check_attention_mutant(const char *what, const char *from, const char *to) {
    char *t = load("flash_attention.tl");
    kc_result orig = kc_check_attention("flash_attention.tl", t, strlen(t), &attn_cfg, attn_small, 3);
    if (orig.status != KC_MATCH) fail_msg("the original attention kernel does not match:\n%s", orig.msg);
    char *m = mutate(t, from, to, false);
    expect_caught(what, kc_check_attention("flash_attention.tl(mutant)", m, strlen(m), &attn_cfg, attn_small, 3));
    free(m);
    free(t);
}

static void test_attention_causal_off_by_one(void **state) {
    (void)state;
    check_attention_mutant("attention: a row sees one key too few", "row0 + i + 1 + seq_kv", "row0 + i + seq_kv");
}

static void test_attention_kv_head(void **state) {
    (void)state;
    check_attention_mutant("attention: query heads interleaved over the kv heads", "hk = by // (heads // heads_kv)",
                           "hk = by % heads_kv");
}

static const int32_t varlen_q[] = {70, 0, 21}, varlen_kv[] = {45, 5, 30};
static const kc_attn_varlen_cfg varlen_cfg = {3, varlen_q, varlen_kv, 2, 1, 16, false, "float16", 24};

static void check_varlen_mutant(const char *what, const char *from, const char *to) {
    char *t = load("flash_attention.tl");
    kc_result orig = kc_check_attention_varlen("flash_attention.tl", t, strlen(t), &varlen_cfg, attn_small, 3);
    if (orig.status != KC_MATCH) fail_msg("the original varlen attention kernel does not match:\n%s", orig.msg);
    char *m = mutate(t, from, to, false);
    expect_caught(what,
                  kc_check_attention_varlen("flash_attention.tl(mutant)", m, strlen(m), &varlen_cfg, attn_small, 3));
    free(m);
    free(t);
}

static void test_varlen_kv_start(void **state) {
    (void)state;
    check_varlen_mutant("attention varlen: keys from the query offsets", "kv0 = cu_seqlens_kv[bz]",
                        "kv0 = cu_seqlens_q[bz]");
}

static void test_varlen_lse_row(void **state) {
    (void)state;
    check_varlen_mutant("attention varlen: lse rows not offset to the sequence", "Lse[by, q0 + row0 + i]",
                        "Lse[by, row0 + i]");
}

static void test_mla_exp_instead_of_exp2(void **state) {
    (void)state;
    check_mla_mutant("mla: exp instead of exp2 in the online softmax", "acc_s[i, j] = exp2(", "acc_s[i, j] = exp(",
                     false, &mla_cfg);
}

static void test_mla_rescale_exp(void **state) {
    (void)state;
    check_mla_mutant("mla: exp instead of exp2 in the rescale factor", "scores_scale[i] = exp2(",
                     "scores_scale[i] = exp(", false, &mla_cfg);
}

static void test_mla_split_offset(void **state) {
    (void)state;
    check_mla_mutant("mla: a piece's first page off by one", "lo = if_then_else(bid == first_seq, sched[part, 1], 0)",
                     "lo = if_then_else(bid == first_seq, sched[part, 1] + 1, 0)", false, &mla_cfg);
}

static void test_mla_schedule_last_part(void **state) {
    (void)state;
    check_mla_mutant("mla schedule: a sequence's piece count off by one", "seq_splits[b, 1] = last - first + 1",
                     "seq_splits[b, 1] = last - first", false, &mla_cfg);
}

static void test_mla_schedule_whole_part(void **state) {
    (void)state;
    check_mla_mutant("mla schedule: a whole part's first page off by one", "sched[p0 + 1 + w, 1] = here + w * cap",
                     "sched[p0 + 1 + w, 1] = here + w * cap + 1", false, &mla_cfg_long);
}

static void test_mla_schedule_walk_whole(void **state) {
    (void)state;
    check_mla_mutant("mla schedule: a walk's count of whole parts off by one", "whole = ceildiv(rest, trial_cap) - 1",
                     "whole = ceildiv(rest, trial_cap)", false, &mla_cfg_long);
}

/* A race: every sequence with pages in a part writes the part's last
 * entries, so the result is whichever thread writes last; caught because
 * the checks also run the Parallel loops' iterations in reverse. */
static void test_mla_schedule_last_entries_race(void **state) {
    (void)state;
    check_mla_mutant("mla schedule: every sequence of a part writes its last entries (a race)",
                     "if split or not next_here:", "if here >= 0:", false, &mla_cfg_long);
}

static void test_mla_causal_off_by_one(void **state) {
    (void)state;
    check_mla_mutant("mla: causal limit off by one", "seqlen - s_q + 1 + (row0 + i) // h_q",
                     "seqlen - s_q + (row0 + i) // h_q", false, &mla_cfg_sq2);
}

static void test_mla_combine_rescale_exp(void **state) {
    (void)state;
    /* four pieces: the combine takes two a step, so the max must grow
     * from one step to the next for the rescale to matter */
    check_mla_mutant("mla combine: exp instead of exp2 in the rescale", "old = exp2(m[i, d] - m_new)",
                     "old = exp(m[i, d] - m_new)", false, &mla_cfg_long);
}

static void test_mla_combine_rescale(void **state) {
    (void)state;
    check_mla_mutant("mla combine: the output sum not rescaled when the max grows", "o[i, d] = o[i, d] * old + w",
                     "o[i, d] = o[i, d] + w", false, &mla_cfg_long);
}

static void test_mla_combine_odd_piece(void **state) {
    (void)state;
    /* an odd number of pieces: the last step's second piece is the first again */
    check_mla_mutant("mla combine: the missing second piece weighted as a real one",
                     "w_b = if_then_else(has_b, exp2(lse_b - m_new), 0.0)", "w_b = exp2(lse_b - m_new)", false,
                     &mla_cfg_odd);
}

static void check_rms_mutant(const char *what, const char *kernel, const char *from, const char *to, double scale) {
    char *t = load("rmsnorm.tl");
    kc_result orig = kc_check_rmsnorm("rmsnorm.tl", t, strlen(t), kernel, 7, 96, "float16", scale, NULL, 0, 31);
    if (orig.status != KC_MATCH) fail_msg("the original %s does not match:\n%s", kernel, orig.msg);
    char *m = mutate(t, from, to, true);
    expect_caught(what, kc_check_rmsnorm("rmsnorm.tl(mutant)", m, strlen(m), kernel, 7, 96, "float16", scale, NULL, 0, 31));
    free(m);
    free(t);
}

static void test_rms_no_mean(void **state) {
    (void)state;
    check_rms_mutant("rmsnorm: sum instead of mean", "rmsnorm", "sumsq[i] / C + eps", "sumsq[i] + eps", 1.0);
}

static void test_rms_no_eps(void **state) {
    (void)state;
    /* eps only matters for small rows: x ~ 1e-3, mean(x^2) ~ 1e-6 << eps */
    check_rms_mutant("rmsnorm: eps dropped", "rmsnorm", "sumsq[i] / C + eps", "sumsq[i] / C", 1e-3);
}

static void test_rms_silu_sign(void **state) {
    (void)state;
    check_rms_mutant("rmsnorm_silu: exp(v) instead of exp(-v)", "rmsnorm_silu", "exp(-v)", "exp(v)", 1.0);
}

static void check_gemm_mutant(const char *what, const char *from, const char *to) {
    char *t = load("gemm.tl");
    kc_result orig = kc_check_gemm("gemm.tl", t, strlen(t), 100, 200, 136, "float16", false, NULL, 0, 41);
    if (orig.status != KC_MATCH) fail_msg("the original gemm does not match:\n%s", orig.msg);
    char *m = mutate(t, from, to, false);
    expect_caught(what, kc_check_gemm("gemm.tl(mutant)", m, strlen(m), 100, 200, 136, "float16", false, NULL, 0, 41));
    free(m);
    free(t);
}

/* gemm_fp8.tl with one of its dequantization scales dropped. */
static void test_gemm_fp8_scale_dropped(void **state) {
    (void)state;
    char *t = load("gemm_fp8.tl");
    kc_result orig = kc_check_gemm_fp8("gemm_fp8.tl", t, strlen(t), 100, 72, 160, 0.5, 2, NULL, 0, 5);
    if (orig.status != KC_MATCH) fail_msg("the original gemm_fp8 does not match:\n%s", orig.msg);
    char *m = mutate(t, "scale = scale_a * scale_b", "scale = scale_a", false);
    expect_caught("gemm_fp8: scale_b dropped",
                  kc_check_gemm_fp8("gemm_fp8.tl(mutant)", m, strlen(m), 100, 72, 160, 0.5, 2, NULL, 0, 5));
    free(m);
    free(t);
}

/* The split kernel's running sum not rescaled when the max grows. */
static void test_lse_no_rescale(void **state) {
    (void)state;
    char *t = load("split_logsumexp.tl");
    char *m = mutate(t, "l[i] * exp(m_prev[i] - m[i])", "l[i]", false);
    expect_caught("split_logsumexp without rescale", kc_check_logsumexp("m.tl", m, strlen(m), 7, 900, NULL, 0, 3));
    free(m);
    free(t);
}

/* The combine kernel reads one split fewer. */
static void test_lse_combine_drops_split(void **state) {
    (void)state;
    char *t = load("split_logsumexp.tl");
    char *m = mutate(t, "for s in serial(num_split):\n            for i in Parallel(threads):\n                if bx * threads + i < M:\n                    acc",
                     "for s in serial(num_split - 1):\n            for i in Parallel(threads):\n                if bx * threads + i < M:\n                    acc", false);
    expect_caught("split_logsumexp combining 3 of 4 splits", kc_check_logsumexp("m.tl", m, strlen(m), 7, 900, NULL, 0, 4));
    free(m);
    free(t);
}

static void test_gemm_swapped_block_index(void **state) {
    (void)state;
    check_gemm_mutant("gemm: B tile indexed by by", "copy(B[ko * block_K, bx * block_N]", "copy(B[ko * block_K, by * block_N]");
}

static void test_gemm_no_clear(void **state) {
    (void)state;
    check_gemm_mutant("gemm: accumulator not cleared", "clear(C_local)", "pass");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_causal_off_by_one),
        cmocka_unit_test(test_lse_no_rescale),
        cmocka_unit_test(test_lse_combine_drops_split),
        cmocka_unit_test(test_attention_kv_head),
        cmocka_unit_test(test_varlen_kv_start),
        cmocka_unit_test(test_varlen_lse_row),
        cmocka_unit_test(test_mla_exp_instead_of_exp2),
        cmocka_unit_test(test_mla_rescale_exp),
        cmocka_unit_test(test_mla_split_offset),
        cmocka_unit_test(test_mla_schedule_last_part),
        cmocka_unit_test(test_mla_schedule_whole_part),
        cmocka_unit_test(test_mla_schedule_walk_whole),
        cmocka_unit_test(test_mla_schedule_last_entries_race),
        cmocka_unit_test(test_mla_causal_off_by_one),
        cmocka_unit_test(test_mla_combine_rescale_exp),
        cmocka_unit_test(test_mla_combine_rescale),
        cmocka_unit_test(test_mla_combine_odd_piece),
        cmocka_unit_test(test_rms_no_mean),
        cmocka_unit_test(test_rms_no_eps),
        cmocka_unit_test(test_rms_silu_sign),
        cmocka_unit_test(test_gemm_swapped_block_index),
        cmocka_unit_test(test_gemm_fp8_scale_dropped),
        cmocka_unit_test(test_gemm_no_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
