/* The error paths of layout inference, planning and lowering: kernels that
 * sema accepts and a later stage refuses, each with a located diagnostic
 * (never an internal error), through the compile API and through the JIT
 * (whose failed compiles must not leak: this test runs under LeakSanitizer
 * in the sanitizer build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "api/compile_backend.h"
#include "tlc/tlc.h"

#define HEADER                                                                                            \
    "def k(A: Tensor[(64, 64), float32], B: Tensor[(64, 64), float32], C: Tensor[(64,), float32]):\n" \
    "    with Kernel(1, threads=128) as bx:\n"

typedef struct error_case {
    const char *body; /* after HEADER */
    const char *error;
} error_case;

static const error_case cases[] = {
    {"        f = alloc_fragment((2, 2, 2, 2, 2), float32)\n"
     "        clear(f)\n",
     "3:9: error: fragment 'f' has rank 5; at most 4 is supported"},
    {"        s = alloc_shared((2, 2, 2, 2, 2), float32)\n"
     "        fill(s, 0.0)\n",
     "3:9: error: shared buffer 's' has rank 5; at most 4 is supported"},
    {"        g = alloc_global((64,), float32)\n"
     "        g[0] = 1.0\n",
     "3:9: error: alloc_global inside 'with Kernel' is not lowered: declare 'g' before the 'with Kernel' block, where it is a workspace the runtime allocates"},
    {"        l = alloc_local((64,), float32)\n"
     "        atomic_add(C, l)\n",
     "4:9: error: atomic_add from a local region is not supported: copy it into a fragment first"},
    {"        f = alloc_fragment((64, 64), float32)\n"
     "        l = alloc_local((64,), float32)\n"
     "        reduce_sum(f, l, dim=1)\n",
     "5:9: error: reduce from or into local memory is not lowered yet"},
    {"        f = alloc_fragment((64, 64), int64)\n"
     "        g = alloc_fragment((64,), int64)\n"
     "        clear(f)\n"
     "        reduce_sum(f, g, dim=1)\n",
     "6:9: error: reduce into int64 is not supported"},
    {"        f = alloc_fragment((64, 64), float32)\n"
     "        g = alloc_fragment((64,), float32)\n"
     "        clear(f)\n"
     "        reduce_sum(f, g, dim=1)\n"
     "        for i, j in Parallel(64, 64):\n"
     "            f[i, j] = g[j]\n"
     "            g[j] = 0.0\n",
     "7:9: error: layout conflict on fragment 'g'"},
    {"        l = alloc_local((64,), float32)\n"
     "        copy(C, l)\n",
     "4:9: error: copy to or from local buffers is not lowered yet"},
    {"        f = alloc_fragment((64, 64), float32)\n"
     "        g = alloc_fragment((64, 64), float32)\n"
     "        copy(A, f)\n"
     "        copy(f[0:32, 0:64], g[32:64, 0:64])\n"
     "        copy(g, B)\n",
     "6:9: error: copy of part of a fragment into another fragment is not supported"},
    {"        f = alloc_fragment((64, 64), float32)\n"
     "        g = alloc_fragment((64, 64), float32)\n"
     "        copy(A, f)\n"
     "        for i, j in Parallel(64, 64):\n"
     "            g[i, j] = f[i, 63 - j]\n"
     "        copy(g, B)\n",
     "7:23: error: fragment 'f' must be indexed by distinct variables of the Parallel loop"},
    /* a fragment every thread holds whole (used outside a Parallel loop),
     * written by a loop whose iterations are spread over the threads */
    {"        f = alloc_fragment((64, 64), float32)\n"
     "        s = alloc_fragment((64,), float32)\n"
     "        copy(A, f)\n"
     "        s[0] = 1.0\n"
     "        for i, j in Parallel(64, 64):\n"
     "            s[i] = f[i, j]\n"
     "        copy(f, B)\n",
     "7:9: error: layout conflict on fragment 's': every thread holds all of it"},
    {"        a = alloc_shared((64, 1), float16)\n"
     "        b = alloc_shared((1, 64), float16)\n"
     "        f = alloc_fragment((64, 64), float32)\n"
     "        clear(f)\n"
     "        gemm(a, b, f)\n"
     "        copy(f, A)\n",
     "7:9: error: gemm cannot be mapped to the tensor cores"},
};

static char *case_source(const error_case *c) {
    size_t n = strlen(HEADER) + strlen(c->body) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%s%s", HEADER, c->body);
    return s;
}

static void check_error(const error_case *c, const char *err) {
    if (!err || !strstr(err, c->error) || strstr(err, "internal error"))
        fail_msg("expected 'case.tl:%s' in:\n%s", c->error, err ? err : "(nothing)");
    if (strncmp(err, "case.tl:", 8) != 0) fail_msg("the first error has no location:\n%s", err);
}

static void test_compile_api(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *src = case_source(&cases[i]);
        char *err = NULL;
        char *ptx = tlc_compile_to_ptx("case.tl", src, strlen(src), NULL, 0, TLC_SM90A, NULL, 3, &err);
        if (ptx) fail_msg("case %zu compiled; expected '%s'", i, cases[i].error);
        check_error(&cases[i], err);
        free(err);
        free(src);
    }
}

static void test_jit(void **state) {
    (void)state;
    tlc_jit_options o = {.arch = "sm_90a", .disable_cache = true};
    tlc_jit *jit;
    char *err = NULL;
    assert_int_equal(tlc_jit_create(&o, &jit, &err), TLC_OK);
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char *src = case_source(&cases[i]);
            char *ptx = NULL;
            err = NULL;
            assert_int_equal(tlc_jit_compile(jit, src, strlen(src), "case.tl", NULL, 0, NULL, &ptx, &err),
                             TLC_ERROR_COMPILE);
            assert_null(ptx);
            check_error(&cases[i], err);
            tlc_free(err);
            free(src);
        }
    tlc_jit_stats st;
    tlc_jit_get_stats(jit, &st);
    assert_int_equal(st.compile_errors, 3 * (sizeof cases / sizeof cases[0]));
    tlc_jit_destroy(jit);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_api),
        cmocka_unit_test(test_jit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
