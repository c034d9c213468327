/* Work is bounded before it is done: the worst inputs known (tiles of
 * millions of elements, -D values at the edges of the shipped kernels) are
 * compiled or refused within 2 s and 200 MB. Each case runs in a child
 * process, so that its time and peak memory are its own (wait4's rusage).
 * Under the sanitizers and in unoptimized builds the limits are scaled (the
 * sanitizers' memory is their own, so only time is checked there); a
 * Release build checks the limits as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_support.h"
#include "api/compile_backend.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

enum { LIMIT_MS = 2000, LIMIT_MB = 200 };

typedef struct bound_case {
    const char *what;
    const char *file;   /* under dsl-examples/, or NULL: source */
    const char *source;
    tlc_define defines[2];
    int ndefines;
    const char *error; /* expected in the diagnostics; NULL: compiles */
} bound_case;

static const bound_case cases[] = {
    {"rmsnorm -D BLOCK_M=1048576", "rmsnorm.tl", NULL, {{"BLOCK_M", "1048576"}}, 1, "registers per thread"},
    {"mla_decode -D threads=32", "mla_decode.tl", NULL, {{"threads", "32"}}, 1, "registers per thread"},
    {"mla_decode -D dv=1", "mla_decode.tl", NULL, {{"dv", "1"}}, 1, "error:"},
    {"gemm -D block_M=1", "gemm.tl", NULL, {{"block_M", "1"}}, 1, "tensor cores"},
    {"gemm -D block_K=1048576", "gemm.tl", NULL, {{"block_K", "1048576"}}, 1, "shared memory"},
    {"a (1048576, 1024) fragment under Parallel", NULL,
     "def k(A: Tensor[(1048576, 1024), float32]):\n"
     "    with Kernel(1, threads=1024) as bx:\n"
     "        f = alloc_fragment((1048576, 1024), float32)\n"
     "        for i, j in Parallel(1048576, 1024):\n"
     "            f[i, j] = 1.0\n"
     "        copy(f, A)\n",
     {{0}}, 0, "registers per thread"},
    {"Parallel(1048576, 1048576) over a tensor", NULL,
     "def k(A: Tensor[(1048576, 1048576), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        for i, j in Parallel(1048576, 1048576):\n"
     "            A[i, j] = 1.0\n",
     {{0}}, 0, "iterations, more than 1024 per thread"},
    {"a copy of a 2^40-element tensor", NULL,
     "def k(A: Tensor[(1048576, 1048576), float32], B: Tensor[(1048576, 1048576), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        copy(A, B)\n",
     {{0}}, 0, "bytes outside registers"},
    {"a fill of a 2^40-element tensor", NULL,
     "def k(A: Tensor[(1048576, 1048576), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        fill(A, 0.0)\n",
     {{0}}, 0, "bytes outside registers"},
    {"a local buffer of 2^80 elements", NULL,
     "def k(A: Tensor[(64,), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        l = alloc_local((1048576, 1048576, 1048576, 1048576), float32)\n"
     "        l[0, 0, 0, 0] = 1.0\n",
     {{0}}, 0, "overflows"},
    {"Parallel, copy and local buffer at their limits", NULL,
     "def k(A: Tensor[(128, 1024), float32], B: Tensor[(128, 1024), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        l = alloc_local((4096,), int8)\n"
     "        l[0] = 1\n"
     "        for i, j in Parallel(128, 1024):\n"
     "            B[i, j] = A[i, j] + l[0]\n"
     "        copy(A, B)\n",
     {{0}}, 0, NULL},
    {"a grid the runtime evaluates", NULL,
     "def k(A: Tensor[(M, N), float32], n: int32):\n"
     "    with Kernel(ceildiv(N, 64) * max(n, 1), min(M, 65535) % 7 + 1, threads=128) as (bx, by):\n"
     "        A[bx, by] = 1.0\n",
     {{0}}, 0, NULL},
    {"nested unroll(64) loops around a Parallel loop of 1024 elements per thread", NULL,
     "def k(A: Tensor[(128, 1024), float32], B: Tensor[(128, 1024), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        for u in unroll(64):\n"
     "            for v in unroll(64):\n"
     "                for i, j in Parallel(128, 1024):\n"
     "                    B[i, j] = A[i, j] + 1.0\n",
     {{0}}, 0, NULL},
    {"a masked copy of 840 elements per thread into shared memory", NULL,
     "def k(A: Tensor[(128, N), float16]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        S = alloc_shared((218, 480), float16)\n"
     "        copy(A, S)\n",
     {{0}}, 0, NULL},
    {"a copy of 8192 elements per thread between tensors", NULL,
     "def k(A: Tensor[(256, 1023), float16], B: Tensor[(256, 1023), float16]):\n"
     "    with Kernel(1, threads=32) as bx:\n"
     "        copy(A, B)\n",
     {{0}}, 0, NULL},
    /* 512 bounds-tested elements per thread each way (1,024, the limit):
     * about 0.8-1.1 s of processor time. 768 each way took 1.1-2.6 s and
     * 1024 (the register limit for int8) 1.7 s and more, and are refused
     * (TLC_KERNEL_MAX_BOUNDS_TESTS, docs/fuzzing.md). */
    {"a (128, 512) int8 fragment copied in and out under bounds tests", NULL,
     "def k(A: Tensor[(M, N), int8], B: Tensor[(M, N), int8]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        f = alloc_fragment((128, 512), int8)\n"
     "        copy(A[0:128, 0:512], f)\n"
     "        copy(f, B[0:128, 0:512])\n",
     {{0}}, 0, NULL},
    {"the same through Parallel loops", NULL,
     "def k(A: Tensor[(M, N), int8], B: Tensor[(M, N), int8]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        f = alloc_fragment((128, 512), int8)\n"
     "        for i, j in Parallel(128, 512):\n"
     "            f[i, j] = A[i, j]\n"
     "        for i, j in Parallel(128, 512):\n"
     "            B[i, j] = f[i, j] + 1\n",
     {{0}}, 0, NULL},
    {"a (128, 768) int8 fragment copied in and out under bounds tests", NULL,
     "def k(A: Tensor[(M, N), int8], B: Tensor[(M, N), int8]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        f = alloc_fragment((128, 768), int8)\n"
     "        copy(A[0:128, 0:768], f)\n"
     "        copy(f, B[0:128, 0:768])\n",
     {{0}}, 0, "bounds-tested element accesses per thread"},
    {"a (128, 1024) int8 fragment copied in and out under bounds tests", NULL,
     "def k(A: Tensor[(M, N), int8], B: Tensor[(M, N), int8]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        f = alloc_fragment((128, 1024), int8)\n"
     "        copy(A[0:128, 0:1024], f)\n"
     "        copy(f, B[0:128, 0:1024])\n",
     {{0}}, 0, "bounds-tested element accesses per thread"},
    {"two masked reads and a masked store per element of a (128, 1024) int8 fragment", NULL,
     "def k(A: Tensor[(M, N), int8], C: Tensor[(M, N), int8], B: Tensor[(M, N), int8]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        f = alloc_fragment((128, 1024), int8)\n"
     "        for i, j in Parallel(128, 1024):\n"
     "            f[i, j] = A[i, j] + C[i, j]\n"
     "            B[i, j] = f[i, j]\n",
     {{0}}, 0, "bounds-tested element accesses per thread"},
    {"unroll(100000000)", NULL,
     "def k(A: Tensor[(64,), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        for i in unroll(100000000):\n"
     "            A[0] = A[0] + 1.0\n",
     {{0}}, 0, NULL},
    {"comprehensions nested three deep, 4000 items each", NULL,
     "import tilelang\n"
     "import tilelang.language as T\n"
     "@tilelang.jit\n"
     "def k(block=64):\n"
     "    x = [[[i + j + k for k in range(4000)] for j in range(4000)] for i in range(4000)]\n"
     "    y = [(\"ab\" * 2000) * 2 for i in range(4000)]\n"
     "    @T.prim_func\n"
     "    def main(A: T.Tensor((64,), \"float32\")):\n"
     "        with T.Kernel(1, threads=64) as bx:\n"
     "            A[0] = len(x) + len(y)\n"
     "    return main\n",
     {{0}}, 0, "compute less at compile time"},
};

static char *case_source(const bound_case *c, size_t *len) {
    if (!c->file) {
        *len = strlen(c->source);
        char *s = malloc(*len + 1);
        memcpy(s, c->source, *len + 1);
        return s;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/dsl-examples/%s", TLC_SOURCE_DIR, c->file);
    char *s = tlc_read_file(path, len);
    if (!s) fail_msg("cannot read %s", path);
    return s;
}

/* Sources written out at run time: a head, one statement written `times`
 * times (its %d, if any, the repetition's number), a tail (each
 * compiles). */
typedef struct repeated_case {
    const char *what, *head, *repeat, *tail;
    int times;
} repeated_case;

static const repeated_case repeated[] = {
    /* tlc's PTX generator (the default) kept every common subexpression of
     * a fragment's old values in one hash bucket: quadratic in the
     * statements updating the fragment, 54 s here (0.3 s now) */
    {"8,000 Parallel loops updating one fragment",
     "def k(A: Tensor[(128,), float32], B: Tensor[(128,), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        f = alloc_fragment((128,), float32)\n"
     "        copy(A, f)\n",
     "        for i in Parallel(128):\n"
     "            f[i] = f[i] * 1.0001 + 1.0\n",
     "        copy(f, B)\n", 8000},
    /* lowering kept its shared-memory effects per buffer, every scalar
     * variable's too: 0.7 s and 849 MB here (33 MB now) */
    {"10,000 scalar variables",
     "def k(A: Tensor[(128,), float32]):\n"
     "    with Kernel(1, threads=128) as bx:\n",
     "        v%d = alloc_var(float32, 1.0)\n",
     "        A[0] = v0 + v9999\n", 10000},
    /* the file's helper functions: each a chain's link, kept through the
     * top-level filter's worklist and run where the kernel calls the first
     * (16 calls deep at most, then an error) */
    {"10,000 helper functions, each calling the next",
     "import tilelang\n"
     "import tilelang.language as T\n",
     "def h%d(x):\n"
     "    return h_next(x) + 1\n",
     "def h_next(x):\n"
     "    return x\n"
     "@tilelang.jit\n"
     "def k(block=64):\n"
     "    @T.prim_func\n"
     "    def main(A: T.Tensor((64,), \"float32\")):\n"
     "        with T.Kernel(1, threads=64) as bx:\n"
     "            A[0] = h0(1) + h9999(2)\n"
     "    return main\n", 10000},
};

static char *repeated_source(const repeated_case *r) {
    size_t head = strlen(r->head), rep = strlen(r->repeat) + 16, tail = strlen(r->tail);
    char *s = malloc(head + rep * (size_t)r->times + tail + 1), *p = s;
    memcpy(p, r->head, head);
    p += head;
    for (int i = 0; i < r->times; i++) p += snprintf(p, rep, r->repeat, i);
    memcpy(p, r->tail, tail + 1);
    return s;
}

/* In the child: 0 when the outcome is the expected one. */
static int run_case(const bound_case *c, int backend) {
    size_t len;
    char *src = case_source(c, &len);
    char *err = NULL;
    char *ptx = tlc_compile_to_ptx_backend(c->file ? c->file : "case.tl", src, len, c->defines, c->ndefines,
                                           TLC_SM90A, NULL, 3, backend, &err);
    int rc = 0;
    if (c->error && ptx) {
        fprintf(stderr, "%s: compiled, expected an error with '%s'\n", c->what, c->error);
        rc = 1;
    } else if (!c->error && !ptx) {
        fprintf(stderr, "%s: expected to compile:\n%s", c->what, err);
        rc = 1;
    } else if (c->error && (!strstr(err, c->error) || strstr(err, "internal error"))) {
        fprintf(stderr, "%s: expected '%s' in:\n%s", c->what, c->error, err);
        rc = 1;
    }
    free(ptx);
    free(err);
    free(src);
    return rc;
}

/* Case c in a child process through PTX generator `backend`, within the
 * limits. */
static void check_case(const bound_case *c, int backend) {
    bool optimized = false;
#ifdef NDEBUG
    optimized = true;
#endif
    long time_limit = LIMIT_MS * (SANITIZED ? 10 : optimized ? 1 : 4);
    {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) _exit(run_case(c, backend));
        int status;
        struct rusage ru;
        assert_int_equal(wait4(pid, &status, 0, &ru), pid);
        /* The child's processor time, not the wall clock: the bound is on
         * the compiler's work, which other tests running beside this one
         * do not change. */
        long ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L
                + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
        long mb = ru.ru_maxrss / 1024;
        print_message("%-45s %5ld ms %5ld MB\n", c->what, ms, mb);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("%s: wrong outcome (status %d)", c->what, status);
        if (ms > time_limit) fail_msg("%s took %ld ms (at most %ld)", c->what, ms, time_limit);
        if (!SANITIZED && mb > LIMIT_MB) fail_msg("%s took %ld MB (at most %d)", c->what, mb, LIMIT_MB);
    }
}

static void test_worst_cases(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], TLC_BACKEND_LLVM);
}

static void test_repeated_statements(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof repeated / sizeof repeated[0]; i++) {
        char *src = repeated_source(&repeated[i]);
        bound_case c = {repeated[i].what, NULL, src, {{0}}, 0, NULL};
        check_case(&c, TLC_DEFAULT_BACKEND);
        free(src);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worst_cases),
        cmocka_unit_test(test_repeated_statements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
