/* A function of several kernels in the interpreter (tlc_interpret): its
 * kernels run in order on one set of arguments, its workspaces are
 * allocated for the run (not arguments) and start poisoned, the function's
 * arguments are checked as a whole, and naming any of its kernels runs all
 * of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tlc/interp.h"

static const char src[] =
    "def twice(A: Tensor[(n, 32), float32], B: Tensor[(n, 32), float32], C: Tensor[(n,), float32]):\n"
    "    w = alloc_global((n, 32), float32)\n"
    "    with Kernel(n, threads=32) as b:\n"
    "        for i in Parallel(32):\n"
    "            w[b, i] = A[b, i] * 2.0\n"
    "    unread = alloc_global((n,), float32)\n"
    "    with Kernel(n, threads=32) as b:\n"
    "        for i in Parallel(32):\n"
    "            B[b, i] = w[b, i] + 1.0\n"
    "    with Kernel(n, threads=32) as b:\n"
    "        for i in Parallel(1):\n"
    "            C[b] = unread[b]\n";

enum { N = 3 };

static tlc_status run(const char *kernel, int64_t b_rows, char **err, float *A, float *B, float *C) {
    int64_t sa[2] = {N, 32}, sb[2] = {b_rows, 32}, sc[1] = {N};
    tlc_interp_tensor_arg t[] = {{"A", A, TLRT_F32, 2, sa}, {"B", B, TLRT_F32, 2, sb}, {"C", C, TLRT_F32, 1, sc}};
    return tlc_interpret(src, strlen(src), "f.tl", NULL, 0, kernel, NULL, t, 3, NULL, 0, err);
}

static void test_kernels_in_order(void **state) {
    (void)state;
    float A[N * 32], B[N * 32], C[N];
    for (int i = 0; i < N * 32; i++) A[i] = (float)i;
    char *err = NULL;
    tlc_status st = run(NULL, N, &err, A, B, C);
    if (st != TLC_OK) fail_msg("%s", err ? err : "?");
    for (int i = 0; i < N * 32; i++) assert_true(B[i] == 2.0f * (float)i + 1.0f);
    /* a workspace nobody wrote reads as the interpreter's poison (on the GPU: uninitialized memory) */
    for (int i = 0; i < N; i++) assert_true(isnan(C[i]));
    tlc_free(err);
    /* naming one kernel of the function (or the function) runs them all */
    memset(B, 0, sizeof B);
    assert_int_equal(run("twice_k1", N, &err, A, B, C), TLC_OK);
    assert_true(B[5] == 11.0f);
    memset(B, 0, sizeof B);
    assert_int_equal(run("twice", N, &err, A, B, C), TLC_OK);
    assert_true(B[5] == 11.0f);
}

static void test_arguments_checked_as_a_whole(void **state) {
    (void)state;
    float A[N * 32] = {0}, B[(N + 1) * 32], C[N];
    char *err = NULL;
    /* B's rows disagree with A's: found before any kernel runs */
    for (int i = 0; i < (N + 1) * 32; i++) B[i] = -1.0f;
    assert_int_equal(run(NULL, N + 1, &err, A, B, C), TLC_ERROR_RUNTIME);
    assert_non_null(strstr(err, "symbolic dim 'n' is 3 from 'A' dim 0 but 4 from 'B' dim 0"));
    assert_true(B[0] == -1.0f);
    tlc_free(err);
    err = NULL;
    /* a missing argument names the function */
    int64_t sa[2] = {N, 32};
    tlc_interp_tensor_arg t[] = {{"A", A, TLRT_F32, 2, sa}};
    assert_int_equal(tlc_interpret(src, strlen(src), "f.tl", NULL, 0, NULL, NULL, t, 1, NULL, 0, &err),
                     TLC_ERROR_RUNTIME);
    assert_non_null(strstr(err, "no argument for parameter 'B' of function 'twice'"));
    tlc_free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_in_order),
        cmocka_unit_test(test_arguments_checked_as_a_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
