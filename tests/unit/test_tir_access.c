/* The access-region query (ir/tir_access.c): every statement kind reports
 * its buffers with the right read / write mode, in program order, with
 * loads inside indices, region bounds, loop bounds and conditions as
 * reads; own accesses stop at nested statements; tir_stmt_writes sees
 * every kind of write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "test_support.h"
#include "api/compile.h"
#include "ir/tir_access.h"

static void compile_tir(tlc_compilation *c, const char *src) {
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    if (!tlc_compile_source(c, "t.tl", src, strlen(src), &o)) {
        print_message("%s", tlc_sb_cstr(&c->diag.out));
        fail_msg("the test kernel did not check");
    }
}

static const char *mode_name(tir_access_mode m) {
    return m == TIR_ACCESS_READ ? "r" : m == TIR_ACCESS_WRITE ? "w" : "rw";
}

/* "name:mode:kind" per access, kind 'R' for a region, 'E' for an element. */
static void describe(const tir_access *acc, void *ctx) {
    tlc_strbuf *sb = ctx;
    tlc_sb_printf(sb, "%s:%s:%c ", acc->buf->name, mode_name(acc->mode), acc->region ? 'R' : 'E');
    assert_true((acc->region != NULL) != (acc->idx != NULL || acc->buf->rank == 0));
    assert_non_null(acc->stmt);
}

/* The accesses of top-level statement i of the kernel body. */
static char *accesses_of(const tlc_compilation *c, int i, bool own) {
    const tir_stmt *body = c->tir->kernels[0]->body;
    assert_true(i < body->u.seq.n);
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    if (own) tir_stmt_own_accesses(body->u.seq.stmts[i], describe, &sb);
    else tir_stmt_accesses(body->u.seq.stmts[i], describe, &sb);
    char *r = strdup(tlc_sb_cstr(&sb));
    tlc_sb_free(&sb);
    return r;
}

static const tir_buffer *buffer(const tlc_compilation *c, const char *name) {
    const tir_kernel *k = c->tir->kernels[0];
    for (int i = 0; i < k->nbuffers; i++)
        if (!strcmp(k->buffers[i]->name, name)) return k->buffers[i];
    fail_msg("no buffer %s", name);
    return NULL;
}

#define EXPECT_ACCESSES(c, i, own, text)                                                                             \
    do {                                                                                                             \
        char *got_ = accesses_of(c, i, own);                                                                         \
        assert_string_equal(got_, text);                                                                             \
        free(got_);                                                                                                  \
    } while (0)

static const char *const KERNEL =
    "def k(A: Tensor[(64, 64), float16], B: Tensor[(64, 64), float16], Idx: Tensor[(4,), int32],\n"
    "      T: Tensor[(64,), float32]):\n"
    "    with Kernel(1, threads=128) as bx:\n"
    "        a = alloc_shared((64, 64), float16)\n"
    "        b = alloc_shared((64, 64), float16)\n"
    "        acc = alloc_fragment((64, 64), float32)\n"
    "        row = alloc_fragment((64,), float32)\n"
    "        copy(A[Idx[0], 0], a)\n"                                   /* 4 */
    "        fill(b, 0)\n"                                              /* 5 */
    "        gemm(a, b, acc)\n"                                         /* 6 */
    "        gemm(a, b, acc, clear_accum=True)\n"                       /* 7 */
    "        reduce_max(acc, row, dim=1)\n"                             /* 8 */
    "        reduce_sum(acc, row, dim=1, clear=False)\n"                /* 9 */
    "        atomic_add(T, row)\n"                                      /* 10 */
    "        for i, j in Parallel(64, 64):\n"                           /* 11 */
    "            acc[i, j] = acc[i, j] * row[i] + a[i, Idx[1]]\n"
    "        for t in serial(Idx[2]):\n"                                /* 12 */
    "            if Idx[3] > t:\n"
    "                copy(acc, B)\n";

static void test_modes_and_order(void **state) {
    (void)state;
    tlc_compilation c;
    compile_tir(&c, KERNEL);
    const tir_stmt *body = c.tir->kernels[0]->body;
    int first = 0;
    while (body->u.seq.stmts[first]->kind == TS_ALLOC) first++;
    EXPECT_ACCESSES(&c, first + 0, false, "A:r:R Idx:r:E a:w:R ");
    EXPECT_ACCESSES(&c, first + 1, false, "b:w:R ");
    EXPECT_ACCESSES(&c, first + 2, false, "a:r:R b:r:R acc:rw:R ");
    EXPECT_ACCESSES(&c, first + 3, false, "a:r:R b:r:R acc:w:R ");
    EXPECT_ACCESSES(&c, first + 4, false, "acc:r:R row:w:R ");
    EXPECT_ACCESSES(&c, first + 5, false, "acc:r:R row:rw:R ");
    EXPECT_ACCESSES(&c, first + 6, false, "T:rw:R row:r:R ");
    EXPECT_ACCESSES(&c, first + 7, false, "acc:w:E acc:r:E row:r:E a:r:E Idx:r:E ");
    EXPECT_ACCESSES(&c, first + 7, true, "");
    EXPECT_ACCESSES(&c, first + 8, false, "Idx:r:E Idx:r:E acc:r:R B:w:R ");
    EXPECT_ACCESSES(&c, first + 8, true, "Idx:r:E ");
    tlc_compilation_free(&c);
}

static void test_writes(void **state) {
    (void)state;
    tlc_compilation c;
    compile_tir(&c, KERNEL);
    const tir_stmt *body = c.tir->kernels[0]->body;
    assert_true(tir_stmt_writes(body, buffer(&c, "B")));
    assert_true(tir_stmt_writes(body, buffer(&c, "T")));
    assert_true(tir_stmt_writes(body, buffer(&c, "acc")));
    assert_true(tir_stmt_writes(body, buffer(&c, "row")));
    assert_false(tir_stmt_writes(body, buffer(&c, "A")));
    assert_false(tir_stmt_writes(body, buffer(&c, "Idx")));
    tir_access_list l = {0};
    tir_access_list_collect(body, &l);
    assert_int_equal(l.n, 25); /* the sum of test_modes_and_order's lists */
    tir_access_list_free(&l);
    assert_null(l.v);
    tlc_compilation_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_and_order),
        cmocka_unit_test(test_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
