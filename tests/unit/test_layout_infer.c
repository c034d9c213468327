/* Layout inference on small kernels (transform/layout_infer.c and the
 * ops' layout rules): which fragment each buffer gets, propagation through
 * Parallel loops and reductions, and conflicts reported at the source line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "api/compile_backend.h"
#include "layout/fragment.h"

static bool infer(tlc_compilation *c, const char *src, tlc_strbuf *dump) {
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    if (!tlc_compile_source(c, "t.tl", src, strlen(src), &o)) {
        print_message("%s", tlc_sb_cstr(&c->diag.out));
        fail_msg("front end rejected the test kernel");
    }
    return tlc_compile_layouts(c, dump);
}

static const tir_buffer *buf(const tlc_compilation *c, const char *name) {
    const tir_kernel *k = c->tir->kernels[0];
    for (int i = 0; i < k->nbuffers; i++)
        if (!strcmp(k->buffers[i]->name, name)) return k->buffers[i];
    fail_msg("no buffer %s", name);
    return NULL;
}

static const char *rms =
    "@jit(C=1024)\n"
    "def rms(X: Tensor[(M, C), float16], Y: Tensor[(M, C), float16]):\n"
    "    with Kernel(ceildiv(M, 4), threads=128) as bx:\n"
    "        x = alloc_fragment((4, C), float32)\n"
    "        sq = alloc_fragment((4, C), float32)\n"
    "        ss = alloc_fragment((4,), float32)\n"
    "        copy(X[bx * 4, 0], x)\n"
    "        for i, j in Parallel(4, C):\n"
    "            sq[i, j] = x[i, j] * x[i, j]\n"
    "        reduce_sum(sq, ss, dim=1)\n"
    "        for i, j in Parallel(4, C):\n"
    "            x[i, j] = x[i, j] * rsqrt(ss[i] / C)\n"
    "        copy(x, Y[bx * 4, 0])\n";

static void test_propagation(void **state) {
    (void)state;
    tlc_compilation c;
    tlc_strbuf dump;
    tlc_sb_init(&dump);
    assert_true(infer(&c, rms, &dump));
    const tir_buffer *x = buf(&c, "x"), *sq = buf(&c, "sq"), *ss = buf(&c, "ss");
    assert_non_null(x->fragment);
    /* vector = 16 bytes of the global side (f16), not of the f32 fragment */
    assert_int_equal(tlc_fragment_vector_len(x->fragment), 8);
    assert_true(tlc_fragment_equal(x->fragment, sq->fragment));
    tlc_arena a;
    tlc_arena_init(&a);
    assert_true(tlc_fragment_equal(ss->fragment, tlc_fragment_reduce(&a, sq->fragment, 1)));
    tlc_arena_free(&a);
    assert_int_equal(ss->fragment->replicate, 32); /* a row per warp */
    assert_non_null(strstr(tlc_sb_cstr(&dump), "fragment ss float32 [4] threads=128 slots=1 replicate=32"));
    /* idempotent */
    assert_true(tlc_compile_layouts(&c, NULL));
    tlc_sb_free(&dump);
    tlc_compilation_free(&c);
}

static void test_shared_alloc(void **state) {
    (void)state;
    tlc_compilation c;
    const char *src =
        "def k(A: Tensor[(64, 64), float16]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        s1 = alloc_shared((3, 5), float16)\n"
        "        s2 = alloc_shared((64, 64), float16)\n"
        "        annotate_layout({s2: make_swizzled_layout(s2)})\n"
        "        s3 = alloc_shared((8,), float32)\n"
        "        copy(A, s2)\n";
    assert_true(infer(&c, src, NULL));
    const tlc_layout *l1 = buf(&c, "s1")->layout, *l2 = buf(&c, "s2")->layout, *l3 = buf(&c, "s3")->layout;
    assert_int_equal(l1->offset, 0);
    assert_int_equal(l2->swizzle, TLC_SWIZZLE_128B);
    assert_int_equal(l2->offset, 1024); /* swizzled: 1024-aligned */
    assert_int_equal(l3->offset, 1024 + 8192);
    assert_int_equal(l3->offset % 128, 0);
    tlc_compilation_free(&c);
}

static void test_conflict(void **state) {
    (void)state;
    tlc_compilation c;
    const char *src =
        "def k(A: Tensor[(64, 64), float32], B: Tensor[(64, 64), float32]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        a = alloc_fragment((64, 64), float32)\n"
        "        r = alloc_fragment((64,), float32)\n"
        "        c = alloc_fragment((64, 64), float32)\n"
        "        copy(A, a)\n"
        "        reduce_sum(a, r, dim=1)\n"
        "        for i, j in Parallel(64, 64):\n"
        "            c[i, j] = r[j]\n"
        "            r[j] = 0.0\n"
        "        copy(c, B)\n";
    assert_false(infer(&c, src, NULL));
    const char *out = tlc_sb_cstr(&c.diag.out);
    assert_non_null(strstr(out, "t.tl:8:9: error: layout conflict on fragment 'r'"));
    assert_non_null(strstr(out, "t.tl:7:9: note: 'r' got"));
    tlc_compilation_free(&c);
}

static void test_bad_index(void **state) {
    (void)state;
    tlc_compilation c;
    const char *src =
        "def k(A: Tensor[(64, 64), float32]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        a = alloc_fragment((64, 64), float32)\n"
        "        copy(A, a)\n"
        "        for i, j in Parallel(64, 64):\n"
        "            a[i, j] = a[j, i]\n"
        "        copy(a, A)\n";
    assert_false(infer(&c, src, NULL));
    assert_non_null(strstr(tlc_sb_cstr(&c.diag.out), "t.tl:5:9: error: layout conflict on fragment 'a'"));
    tlc_compilation_free(&c);
}

/* A loop that decides nothing gets its own blocked fragment and passes it on. */
static void test_free_parallel(void **state) {
    (void)state;
    tlc_compilation c;
    const char *src =
        "def k(A: Tensor[(32, 64), float32]):\n"
        "    with Kernel(1, threads=64) as bx:\n"
        "        g = alloc_fragment((32, 64), float32)\n"
        "        h = alloc_fragment((32,), float32)\n"
        "        for i, j in Parallel(32, 64):\n"
        "            g[i, j] = 1.0\n"
        "        reduce_max(g, h, dim=1)\n"
        "        for i, j in Parallel(32, 64):\n"
        "            A[i, j] = g[i, j] - h[i]\n";
    assert_true(infer(&c, src, NULL));
    const tir_buffer *g = buf(&c, "g"), *h = buf(&c, "h");
    assert_string_equal(g->fragment->origin, "parallel loop");
    assert_int_equal(g->fragment->threads, 64);
    assert_int_equal(h->fragment->rank, 1);
    tlc_compilation_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_propagation), cmocka_unit_test(test_shared_alloc), cmocka_unit_test(test_conflict),
        cmocka_unit_test(test_bad_index),   cmocka_unit_test(test_free_parallel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
