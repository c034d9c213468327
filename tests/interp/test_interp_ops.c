/* Tile ops the shipped kernels do not all use, checked against values
 * computed here: gemm with transpose_A, reduce_min / reduce_max with
 * clear=False, reduce over dim 0, atomic_add (region and scalar forms,
 * across blocks, and return_prev), stores rounded to float8_e4m3, fill of
 * a region. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/compile.h"
#include "interp/float_conv.h"
#include "interp/random_fill.h"
#include "interp/interp.h"
#include "support/read_file.h"

static const char *SRC =
    "def ops(A: Tensor[(M, 32), float16], B: Tensor[(32, 16), float16], Out: Tensor[(M, 16), float32],\n"
    "        Mx: Tensor[(M,), float32], Acc: Tensor[(16,), float32], Cnt: Tensor[(1,), int32],\n"
    "        Q: Tensor[(M, 16), float8_e4m3]):\n"
    "    with Kernel(ceildiv(M, 16), threads=128) as bx:\n"
    "        a = alloc_shared((16, 32), float16)\n"
    "        at = alloc_shared((32, 16), float16)\n"
    "        b = alloc_shared((32, 16), float16)\n"
    "        c = alloc_fragment((16, 16), float32)\n"
    "        m = alloc_fragment((16,), float32)\n"
    "        colsum = alloc_fragment((16,), float32)\n"
    "        copy(A[bx * 16, 0], a)\n"
    "        copy(B, b)\n"
    "        for k, i in Parallel(32, 16):\n"
    "            at[k, i] = a[i, k]\n"
    "        gemm(at, b, c, transpose_A=True, clear_accum=True)\n"
    "        copy(c, Out[bx * 16, 0])\n"
    "        reduce_min(c, m, dim=1)\n"
    "        reduce_max(c, m, dim=1, clear=False)\n"
    "        copy(m, Mx[bx * 16])\n"
    "        fill(c[8:16, :], 0)\n"
    "        reduce_sum(c, colsum, dim=0)\n"
    "        atomic_add(Acc, colsum)\n"
    "        atomic_add(Cnt[0], 1)\n"
    "        copy(c, Q[bx * 16, 0])\n";

static void test_ops(void **state) {
    (void)state;
    tlc_compilation c;
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    if (!tlc_compile_source(&c, "ops.tl", SRC, strlen(SRC), &co))
        fail_msg("does not compile:\n%s", tlc_sb_cstr(&c.diag.out));
    const int64_t M = 48, nb = 3;
    uint16_t A[48 * 32], B[32 * 16];
    float Out[48 * 16], Mx[48], Acc[16];
    int32_t Cnt[1] = {5};
    uint8_t Q[48 * 16];
    uint64_t st = 9;
    tlc_random_fill(A, TIR_F16, M * 32, &st, 0);
    tlc_random_fill(B, TIR_F16, 32 * 16, &st, 0);
    for (int i = 0; i < 16; i++) Acc[i] = 1;
    tlc_interp_tensor t[] = {
        {"A", A, TIR_F16, 2, {M, 32}},   {"B", B, TIR_F16, 2, {32, 16}}, {"Out", Out, TIR_F32, 2, {M, 16}},
        {"Mx", Mx, TIR_F32, 1, {M}},     {"Acc", Acc, TIR_F32, 1, {16}}, {"Cnt", Cnt, TIR_I32, 1, {1}},
        {"Q", Q, TIR_F8E4M3, 2, {M, 16}},
    };
    tlc_strbuf err;
    tlc_sb_init(&err);
    if (!tlc_interp_run_module(c.tir, &c.src, NULL, t, 7, NULL, 0, NULL, &err)) fail_msg("%s", tlc_sb_cstr(&err));
    tlc_sb_free(&err);
    double colsum[16] = {0};
    for (int64_t i = 0; i < M; i++) {
        double mx = -INFINITY;
        for (int j = 0; j < 16; j++) {
            double ref = 0;
            for (int k = 0; k < 32; k++) ref += tlrt_f16_to_f64(A[i * 32 + k]) * tlrt_f16_to_f64(B[k * 16 + j]);
            double o = Out[i * 16 + j];
            if (fabs(o - ref) > 1e-4 * (1 + fabs(ref))) fail_msg("Out[%lld,%d] = %g, expected %g", (long long)i, j, o, ref);
            if (o > mx) mx = o;
            double q = tlrt_e4m3_to_f64(Q[i * 16 + j]);
            if (i % 16 >= 8) {
                assert_true(q == 0);
            } else {
                colsum[j] += o;
                assert_true(q == tlc_round_to_dtype(TIR_F8E4M3, o));
            }
        }
        assert_true(Mx[i] == (float)mx);
    }
    for (int j = 0; j < 16; j++)
        if (fabs(Acc[j] - (1 + colsum[j])) > 1e-4 * (1 + fabs(colsum[j])))
            fail_msg("Acc[%d] = %g, expected %g", j, Acc[j], 1 + colsum[j]);
    assert_int_equal(Cnt[0], 5 + nb);
    tlc_compilation_free(&c);
}

/* atomic_add(..., return_prev=True) (tests/golden/tir/atomic_last_block.tl):
 * each block gets the count before its add (every value once), and the last
 * block reads the others' parts. */
static void test_atomic_add_return_prev(void **state) {
    (void)state;
    tlc_compilation c;
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    const char *path = TLC_SOURCE_DIR "/tests/golden/tir/atomic_last_block.tl";
    size_t len = 0;
    char *src = tlc_read_file(path, &len);
    if (!src) fail_msg("cannot read %s", path);
    if (!tlc_compile_source(&c, "atomic_last_block.tl", src, len, &co))
        fail_msg("does not compile:\n%s", tlc_sb_cstr(&c.diag.out));
    enum { NB = 5, N = NB * 64 - 9 }; /* blocks of 64 */
    float X[N], Total[1] = {0}, Parts[NB] = {0};
    int32_t Count[1] = {0}, Order[NB];
    double sum = 0;
    for (int i = 0; i < N; i++) sum += X[i] = (float)(i % 13) - 6.0f;
    tlc_interp_tensor t[] = {
        {"X", X, TIR_F32, 1, {N}},         {"count", Count, TIR_I32, 1, {1}}, {"Total", Total, TIR_F32, 1, {1}},
        {"Parts", Parts, TIR_F32, 1, {NB}}, {"Order", Order, TIR_I32, 1, {NB}},
    };
    tlc_strbuf err;
    tlc_sb_init(&err);
    if (!tlc_interp_run_module(c.tir, &c.src, NULL, t, 5, NULL, 0, NULL, &err)) fail_msg("%s", tlc_sb_cstr(&err));
    tlc_sb_free(&err);
    bool seen[NB] = {false};
    for (int b = 0; b < NB; b++) {
        if (Order[b] < 0 || Order[b] >= NB || seen[Order[b]]) fail_msg("Order[%d] = %d", b, Order[b]);
        seen[Order[b]] = true;
    }
    assert_int_equal(Count[0], 0);
    if (fabs(Total[0] - sum) > 1e-3) fail_msg("Total = %g, expected %g", Total[0], sum);
    tlc_compilation_free(&c);
    free(src);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ops), cmocka_unit_test(test_atomic_add_return_prev)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
