/* Large walks that hold no registers are run-time loops over the slots
 * (lowerkit/slot_loop.c): the fuzzer's masked (218, 480) copy into shared
 * memory, a large unmasked copy between tensors, a large fill of shared
 * memory and large Parallel loops over shared and global memory lower to a
 * loop whose body is emitted once, so the Thread IR and the PTX stay small
 * whatever the tile size (LLVM's time is bounded by what it is given, not
 * by the wall clock of a loaded machine). Walks of at most
 * TLC_UNROLLED_MAX_SLOT_GROUPS groups, and anything touching a fragment,
 * stay unrolled. Every kernel's PTX assembles where ptxas exists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "test_support.h"
#include "api/compile_backend.h"

/* What lowering made of one kernel. */
typedef struct lowered {
    int loops;        /* run-time (not unrolled) loops */
    int64_t size;     /* Thread IR statements, unrolled loops expanded */
    int ld_global;    /* global loads in the PTX */
    size_t ptx_bytes;
} lowered;

static int runtime_loops(const th_stmt *s) {
    if (!s) return 0;
    switch (s->kind) {
    case THS_SEQ: {
        int n = 0;
        for (int i = 0; i < s->u.seq.n; i++) n += runtime_loops(s->u.seq.stmts[i]);
        return n;
    }
    case THS_FOR: return !s->u.for_.unroll + runtime_loops(s->u.for_.body);
    case THS_IF: return runtime_loops(s->u.if_.then) + runtime_loops(s->u.if_.els);
    default: return 0;
    }
}

static lowered lower(const char *src, tlc_arch arch) {
    tlc_compilation c;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.arch = arch;
    th_module *m = NULL;
    if (tlc_compile_source(&c, "t.tl", src, strlen(src), &o)) m = tlc_compile_thread(&c, NULL);
    if (!m) {
        print_message("%s", tlc_sb_cstr(&c.diag.out));
        fail_msg("the test kernel did not lower");
    }
    assert_int_equal(m->nkernels, 1);
    lowered r = {runtime_loops(m->kernels[0]->body), th_unrolled_size(m->kernels[0]->body, 1 << 30), 0, 0};
    const char *ptx = tlc_compile_ptx(&c, false);
    if (!ptx) {
        print_message("%s", tlc_sb_cstr(&c.diag.out));
        fail_msg("no PTX");
    }
    r.ld_global = tst_count(ptx, "ld.global");
    r.ptx_bytes = strlen(ptx);
    tst_assemble_ptx(ptx, arch, "the PTX");
    tlc_compilation_free(&c);
    return r;
}

/* A large walk, and what lowering may make of it at most. */
typedef struct large_walk {
    const char *what;
    const char *source;
    tlc_arch arch;
    int loops;         /* run-time loops expected */
    int64_t max_size;  /* Thread IR statements */
    int max_ld_global; /* the loops' bodies, perhaps unrolled a few times by LLVM */
    size_t max_ptx_bytes;
} large_walk;

static const large_walk LARGE[] = {
    /* the fuzzer's finding: 840 masked loads per thread were 840 branches (7 s) */
    {"a masked copy into shared memory",
     "def big(A: Tensor[(128, N), float16]):\n"
     "    with Kernel(1, threads=128) as bx:\n"
     "        S = alloc_shared((218, 480), float16)\n"
     "        copy(A, S)\n",
     TLC_SM90A, 1, 40, 4, 16384},
    /* 8192 unmasked scalar copies per thread (2 s) */
    {"a copy between tensors",
     "def k(A: Tensor[(256, 1023), float16], B: Tensor[(256, 1023), float16]):\n"
     "    with Kernel(1, threads=32) as bx:\n"
     "        copy(A, B)\n",
     TLC_SM80, 1, 40, 8, 16384},
    /* 825 and 840 slots per thread, masked at the tile's edge (17 s, 263 MB) */
    {"a fill of shared memory and Parallel loops over shared and global memory",
     "def k(A: Tensor[(M, N), float16], B: Tensor[(M, N), float16]):\n"
     "    with Kernel(ceildiv(M, 218), threads=128) as bx:\n"
     "        S = alloc_shared((218, 480), float16)\n"
     "        fill(S, 1.0)\n"
     "        for i, j in Parallel(218, 480):\n"
     "            S[i, j] = S[i, j] + A[bx * 218 + i, j] * 2.0\n"
     "        for i, j in Parallel(218, 480):\n"
     "            B[bx * 218 + i, j] = S[i, j]\n"
     "        copy(S, B[bx * 218, 0])\n",
     TLC_SM90A, 4, 120, 12, 32768},
};

static void test_large_walks_are_loops(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof LARGE / sizeof LARGE[0]; i++) {
        const large_walk *w = &LARGE[i];
        lowered r = lower(w->source, w->arch);
        print_message("%-75s %d loops, %3lld statements, %2d ld.global, %5zu bytes of PTX\n", w->what, r.loops,
                      (long long)r.size, r.ld_global, r.ptx_bytes);
        assert_int_equal(r.loops, w->loops);
        assert_true(r.size <= w->max_size);
        assert_true(r.ld_global <= w->max_ld_global);
        assert_true(r.ptx_bytes <= w->max_ptx_bytes);
    }
}

/* A 1-D copy of `n` float16 elements from a tensor of symbolic length
 * (scalar, masked accesses) into shared memory, 128 threads. */
static lowered copy_1d(int64_t n) {
    char src[512];
    snprintf(src, sizeof src,
             "def k(A: Tensor[(N,), float16], B: Tensor[(%lld,), float16]):\n"
             "    with Kernel(1, threads=128) as bx:\n"
             "        S = alloc_shared((%lld,), float16)\n"
             "        copy(A[0:%lld], S)\n"
             "        copy(S, B)\n",
             (long long)n, (long long)n, (long long)n);
    return lower(src, TLC_SM90A);
}

/* At the threshold the copy is unrolled (one masked load per slot), past
 * it a loop; the copy back out (vectors of 8) stays unrolled. */
static void test_threshold(void **state) {
    (void)state;
    lowered at = copy_1d(TLC_UNROLLED_MAX_SLOT_GROUPS * 128);
    assert_int_equal(at.loops, 0);
    assert_true(at.ld_global >= TLC_UNROLLED_MAX_SLOT_GROUPS);
    lowered past = copy_1d(TLC_UNROLLED_MAX_SLOT_GROUPS * 128 + 1024);
    assert_int_equal(past.loops, 1);
    assert_true(past.ld_global < at.ld_global / 4);
}

/* Fragment registers are indexed by constants: a masked copy into a
 * fragment of 256 slots per thread and a Parallel loop over it stay
 * unrolled. */
static void test_fragments_stay_unrolled(void **state) {
    (void)state;
    lowered r = lower("def k(A: Tensor[(M, N), float16], B: Tensor[(M, N), float16]):\n"
                      "    with Kernel(ceildiv(M, 128), threads=128) as bx:\n"
                      "        f = alloc_fragment((128, 256), float16)\n"
                      "        copy(A[bx * 128, 0], f)\n"
                      "        for i, j in Parallel(128, 256):\n"
                      "            f[i, j] = f[i, j] * 2.0\n"
                      "        copy(f, B[bx * 128, 0])\n",
                      TLC_SM90A);
    assert_int_equal(r.loops, 0);
    assert_true(r.ld_global >= 256);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_walks_are_loops),
        cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_fragments_stay_unrolled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
