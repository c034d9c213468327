/* The TileLang builtins of tests/ptx/tilelang/compat.tl run in the
 * interpreter and checked against C: the math functions (the interpreter
 * computes each in double and rounds to float32 once, so the check allows
 * one float32 rounding: 2^-24 relative, plus 1e-30 absolute near 0),
 * integer division in both roundings, casts, reduce_abssum and
 * Pipelined(start, stop) with and without stages. */
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
#include "interp/interp.h"
#include "interp/random_fill.h"
#include "support/read_file.h"

static tlc_compilation *compile_compat(void) {
    static tlc_compilation c;
    static bool done;
    if (done) return &c;
    size_t len;
    char *text = tlc_read_file(TLC_SOURCE_DIR "/tests/ptx/tilelang/compat.tl", &len);
    if (!text) fail_msg("cannot read compat.tl");
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    if (!tlc_compile_source(&c, "compat.tl", text, len, &co)) fail_msg("does not compile:\n%s", tlc_sb_cstr(&c.diag.out));
    free(text);
    done = true;
    return &c;
}

static void run(const char *kernel, const tlc_interp_tensor *t, int n) {
    tlc_compilation *c = compile_compat();
    tlc_strbuf err;
    tlc_sb_init(&err);
    if (!tlc_interp_run_module(c->tir, &c->src, kernel, t, n, NULL, 0, NULL, &err)) fail_msg("%s: %s", kernel, tlc_sb_cstr(&err));
    tlc_sb_free(&err);
}

/* got is ref rounded once to float32. */
static void expect_f32(const char *what, int64_t i, double got, double ref) {
    if (isnan(ref) && isnan(got)) return;
    if (fabs(got - ref) > 0x1p-24 * fabs(ref) + 1e-30) fail_msg("%s of element %lld: %.9g, expected %.9g", what, (long long)i, got, ref);
}

static void test_math(void **state) {
    (void)state;
    enum { M = 256 }; /* a multiple of the block: element stores past the end are errors here */
    float X[M], Y[M * 12];
    for (int i = 0; i < M; i++) X[i] = (float)((i - 128) * 0.0625 + (i % 7) * 0.01); /* -8 .. 8, integers too */
    X[0] = 1e-5f;
    X[1] = -3e-4f;
    tlc_interp_tensor t[] = {{"X", X, TIR_F32, 1, {M}}, {"Y", Y, TIR_F32, 2, {M, 12}}};
    run("math_fns", t, 2);
    static const char *const names[] = {"tanh", "sigmoid", "erf", "sin", "cos", "floor", "ceil", "log1p", "pow",
                                        "clamp", "Select", "Cast"};
    for (int64_t i = 0; i < M; i++) {
        double x = X[i], ax = fabs(x);
        double ref[12] = {tanh(x), 1 / (1 + exp(-x)), erf(x), sin(x), cos(x), floor(x), ceil(x), log1p(ax),
                          pow(ax, 1.5), fmin(fmax(x, -0.5), 0.75), x > 0 ? x : 2 * x,
                          tlrt_f16_to_f64(tlrt_f64_to_f16(x))};
        for (int f = 0; f < 12; f++) expect_f32(names[f], i, Y[i * 12 + f], ref[f]);
    }
}

static void test_int_div(void **state) {
    (void)state;
    enum { M = 64 };
    int32_t A[M], B[M], J[M * 6];
    for (int i = 0; i < M; i++) {
        A[i] = (i * 37) % 41 - 20; /* -20 .. 20, zero included */
        B[i] = (i % 2 ? 1 : -1) * (1 + i % 7);
    }
    tlc_interp_tensor t[] = {{"A", A, TIR_I32, 1, {M}}, {"B", B, TIR_I32, 1, {M}}, {"J", J, TIR_I32, 2, {M, 6}}};
    run("int_div", t, 3);
    for (int i = 0; i < M; i++) {
        int32_t a = A[i], b = B[i];
        int32_t tq = a / b, tr = a % b; /* C rounds toward zero */
        int32_t fq = tq - ((tr != 0) && ((tr < 0) != (b < 0))), fr = a - fq * b;
        int32_t want[6] = {fq, fr, tq, tr, fq, fr};
        for (int f = 0; f < 6; f++)
            if (J[i * 6 + f] != want[f]) fail_msg("J[%d, %d] for %d, %d: %d, expected %d", i, f, a, b, J[i * 6 + f], want[f]);
    }
}

static void test_casts(void **state) {
    (void)state;
    enum { M = 64 };
    float X[M * 8];
    uint16_t H[M * 8];
    int32_t N[M * 8];
    uint8_t Q[M * 8];
    for (int i = 0; i < M * 8; i++) X[i] = (float)((i - 256) * 0.37);
    tlc_interp_tensor t[] = {{"X", X, TIR_F32, 2, {M, 8}}, {"H", H, TIR_F16, 2, {M, 8}},
                             {"N", N, TIR_I32, 2, {M, 8}}};
    run("casts", t, 3);
    tlc_interp_tensor t8[] = {{"X", X, TIR_F32, 2, {M, 8}}, {"Q", Q, TIR_F8E4M3, 2, {M, 8}}};
    run("casts_fp8", t8, 2);
    for (int i = 0; i < M * 8; i++) {
        assert_true(H[i] == tlrt_f64_to_f16(X[i]));
        assert_int_equal(N[i], (int32_t)X[i]);
        assert_true(Q[i] == tlrt_f64_to_e4m3(X[i]));
    }
}

static void test_reduce_abs(void **state) {
    (void)state;
    enum { M = 48 };
    float X[M * 32], S[M], S2[M], Mn[M];
    uint64_t st = 5;
    tlc_random_fill(X, TIR_F32, M * 32, &st, 0);
    tlc_interp_tensor t[] = {{"X", X, TIR_F32, 2, {M, 32}}, {"S", S, TIR_F32, 1, {M}},
                             {"S2", S2, TIR_F32, 1, {M}}, {"Mn", Mn, TIR_F32, 1, {M}}};
    run("reduce_abs", t, 4);
    for (int i = 0; i < M; i++) {
        double s = 0, mn = INFINITY;
        for (int j = 0; j < 32; j++) {
            s += fabs(X[i * 32 + j]);
            mn = fmin(mn, X[i * 32 + j]);
        }
        expect_f32("reduce_abssum", i, S[i], s);
        expect_f32("reduce_abssum(clear=False)", i, S2[i], (double)(float)s + s);
        assert_true(Mn[i] == (float)mn);
    }
}

static void test_pipelined_start(void **state) {
    (void)state;
    enum { M = 40, K = 160 }; /* 5 column blocks; the sum skips block 0 */
    uint16_t X[M * K];
    float P[M * 32], Z[M * 32];
    uint64_t st = 11;
    tlc_random_fill(X, TIR_F16, M * K, &st, 0);
    tlc_interp_tensor t[] = {{"X", X, TIR_F16, 2, {M, K}}, {"P", P, TIR_F32, 2, {M, 32}}, {"Z", Z, TIR_F32, 2, {M, 32}}};
    run("pipe_sum", t, 3);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < 32; j++) {
            float ref = 0; /* the kernel's order: block 1 first, each sum rounded to float32 */
            for (int b = 1; b < K / 32; b++) ref += (float)tlrt_f16_to_f64(X[i * K + b * 32 + j]);
            if (P[i * 32 + j] != ref || Z[i * 32 + j] != ref)
                fail_msg("sum at [%d, %d]: pipelined %g, serial %g, expected %g", i, j, P[i * 32 + j], Z[i * 32 + j], ref);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_math),   cmocka_unit_test(test_int_div),         cmocka_unit_test(test_casts),
        cmocka_unit_test(test_reduce_abs), cmocka_unit_test(test_pipelined_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
