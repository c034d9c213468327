/* The compiler's launch metadata goes through the runtime's writer: for
 * every shipped kernel on sm_80 and sm_90a, the block in the PTX parses,
 * formats back to the same text, and describes what the kernel declares. */
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
#include "lowerkit/plan.h"
#include "tlc/metadata.h"
#include "tlc/runtime.h"

/* The `// tlc.meta` lines of a PTX text, in order. */
static char *meta_block(const char *ptx) {
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    for (const char *p = ptx; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        if (strncmp(p, TLRT_META_PREFIX, strlen(TLRT_META_PREFIX)) == 0) tlc_sb_putn(&sb, p, n);
        p += n;
    }
    char *r = strdup(tlc_sb_cstr(&sb));
    tlc_sb_free(&sb);
    return r;
}

static void round_trip(const char *file, const char *kernel, tlc_arch arch) {
    char path[512];
    snprintf(path, sizeof path, "%s/dsl-examples/%s", TLC_SOURCE_DIR, file);
    size_t len = 0;
    char *src = tlc_read_file(path, &len);
    assert_non_null(src);
    tlc_compilation c;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.arch = arch;
    o.kernel = kernel;
    assert_true(tlc_compile_source(&c, file, src, len, &o));
    char *ptx = tlc_compile_ptx(&c, false);
    if (!ptx) fail_msg("%s (%s) did not compile: %s", file, kernel ? kernel : "all kernels", tlc_sb_cstr(&c.diag.out));
    char *block = meta_block(ptx);
    tlrt_module_meta mm;
    char err[256];
    if (!tlrt_meta_parse(ptx, strlen(ptx), &mm, err, sizeof err)) fail_msg("%s: %s", file, err);
    assert_string_equal(mm.arch, tlc_arch_name(arch));
    assert_int_equal(mm.nkernels, c.tir->nkernels);
    for (int i = 0; i < mm.nkernels; i++) {
        const tir_kernel *k = c.tir->kernels[i];
        const tlrt_kernel_meta *km = &mm.kernels[i];
        assert_string_equal(km->name, k->name);
        assert_int_equal(km->nparams, k->nparams);
        assert_int_equal(km->nsyms, k->nsym);
        for (int p = 0; p < k->nparams; p++) assert_string_equal(km->params[p].name, k->params[p].name);
        assert_int_equal(km->smem_bytes, k->plan->smem_bytes); /* every shared byte is planned */
        if (k->plan->ws.loop) {
            assert_int_equal(km->threads[0], k->threads + 128 + k->plan->ws.score_threads);
            assert_int_equal(km->persistent, k->plan->ws.persistent ? k->plan->ws.blocks_per_sm : 0);
            assert_int_equal(km->tile_counter, k->plan->ws.persistent && k->plan->ws.dynamic_tiles);
        } else {
            assert_int_equal(km->threads[0], k->threads);
            assert_int_equal(km->persistent, 0);
        }
        int tma_copies = 0;
        for (int q = 0; q < k->plan->npipes; q++)
            if (k->plan->pipes[q].tma) tma_copies += k->plan->pipes[q].ncopies;
        tma_copies += k->plan->ws.npreloads; /* the producer's TMA loads before its loop */
        assert_int_equal(km->ntmaps, tma_copies);
    }
    char *again = tlrt_meta_format(&mm, err, sizeof err);
    if (!again) fail_msg("%s: %s", file, err);
    assert_string_equal(again, block);
    free(again);
    tlrt_meta_free(&mm);
    free(block);
    tlc_compilation_free(&c);
    free(src);
}

static void test_shipped_kernels(void **state) {
    (void)state;
    tlc_arch archs[] = {TLC_SM80, TLC_SM90A};
    for (int a = 0; a < 2; a++) {
        round_trip("gemm.tl", NULL, archs[a]);
        round_trip("rmsnorm.tl", NULL, archs[a]);
        round_trip("mla_decode.tl", "mla_decode_combine", archs[a]);
    }
    round_trip("mla_decode.tl", NULL, TLC_SM90A); /* the split kernel fits sm_90a only */
    round_trip("flash_attention.tl", NULL, TLC_SM90A); /* the varlen kernel takes its tiles at run time */
}

/* A grid the runtime cannot evaluate is a compile error at the kernel. */
static void test_grid_not_evaluable(void **state) {
    (void)state;
    const char *src = "def k(A: Tensor[(64,), float32], s: float32):\n"
                      "    with Kernel(ceildiv(64, 2) * (1 if s > 0.0 else 2), threads=32) as bx:\n"
                      "        A[bx] = 1.0\n";
    tlc_compilation c;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    if (!tlc_compile_source(&c, "t.tl", src, strlen(src), &o)) {
        tlc_compilation_free(&c);
        skip(); /* sema rejects the grid itself: nothing reaches the writer */
    }
    assert_null(tlc_compile_ptx(&c, false));
    assert_non_null(strstr(tlc_sb_cstr(&c.diag.out), "uses something the runtime cannot evaluate"));
    tlc_compilation_free(&c);
}

/* An assert on sizes and integer scalars becomes a `check` line, and the
 * runtime refuses a launch that fails it, naming the line and the values;
 * one on anything else is a warning. */
static void test_launch_checks(void **state) {
    (void)state;
    const char *src = "def k(A: Tensor[(M, N), float32], B: Tensor[(N, M), float32], n: int32, x: float32):\n"
                      "    assert N >= M and N % 4 == 0, \"N must be at least M and a multiple of 4\"\n"
                      "    assert n > 0\n"
                      "    assert x > 0.0\n"
                      "    with Kernel(ceildiv(M, 4), threads=128) as bx:\n"
                      "        for i, j in Parallel(4, 32):\n"
                      "            B[j, bx * 4 + i] = A[bx * 4 + i, j] * x\n";
    tlc_compilation c;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    assert_true(tlc_compile_source(&c, "k.tl", src, strlen(src), &o));
    char *ptx = tlc_compile_ptx(&c, false);
    if (!ptx) fail_msg("did not compile: %s", tlc_sb_cstr(&c.diag.out));
    assert_non_null(strstr(ptx, "// tlc.meta check 2:5 (and (>= N M) (== (% N 4) 0))\n"));
    assert_non_null(strstr(ptx, "// tlc.meta check 3:5 (> n 0)\n"));
    assert_non_null(strstr(tlc_sb_cstr(&c.diag.out), "k.tl:4:5: warning: the runtime cannot evaluate its condition"));
    tlrt_module_meta mm;
    char err[512];
    if (!tlrt_meta_parse(ptx, strlen(ptx), &mm, err, sizeof err)) fail_msg("%s", err);
    const tlrt_kernel_meta *km = &mm.kernels[0];
    assert_int_equal(km->nchecks, 2);
    tlrt_launch_plan *plan = malloc(sizeof *plan);
    int64_t sa[2] = {8, 32}, sb[2] = {32, 8};
    tlrt_arg args[4] = {tlrt_arg_tensor(0x1000, TLRT_F32, 2, sa, NULL), tlrt_arg_tensor(0x2000, TLRT_F32, 2, sb, NULL),
                        tlrt_arg_int(TLRT_I32, 3), tlrt_arg_float(TLRT_F32, 1.0)};
    assert_int_equal(tlrt_plan_launch(km, args, 4, plan, err, sizeof err), TLRT_SUCCESS);
    sa[1] = sb[0] = 30; /* N % 4 != 0 */
    assert_int_equal(tlrt_plan_launch(km, args, 4, plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "fails the assert at line 2:5, (and (>= N M) (== (% N 4) 0)), with N = 30, M = 8"));
    sa[1] = sb[0] = 32;
    args[2] = tlrt_arg_int(TLRT_I32, 0);
    assert_int_equal(tlrt_plan_launch(km, args, 4, plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "fails the assert at line 3:5, (> n 0), with n = 0"));
    free(plan);
    tlrt_meta_free(&mm);
    tlc_compilation_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_kernels),
        cmocka_unit_test(test_grid_not_evaluable),
        cmocka_unit_test(test_launch_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
