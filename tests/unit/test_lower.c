/* Lowering to Thread IR and on to PTX (transform/lower.c, ops/): the
 * shipped RMSNorm at several widths and small kernels for every tile op
 * compile to PTX with 16-byte global accesses, shuffles for reductions,
 * nothing in local memory, and (where ptxas exists) assemble for sm_80
 * and sm_90a. */
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

/* Compiles to PTX (asserting success), checks the common properties, and
 * assembles it when ptxas is around. Returns the malloc'd PTX. */
static char *ptx_of(const char *src, size_t len, const tlc_define *defs, int nd, tlc_arch arch, const char *kernel) {
    char *err = NULL;
    char *ptx = tlc_compile_to_ptx("k.tl", src, len, defs, nd, arch, kernel, 3, &err);
    if (!ptx) fail_msg("compile failed: %s", err ? err : "?");
    free(err);
    assert_int_equal(tst_count(ptx, ".local"), 0); /* register arrays stayed in registers */
    assert_non_null(strstr(ptx, "// tlc.meta v1"));
    assert_non_null(strstr(ptx, "// tlc.meta end"));
    tst_assemble_ptx(ptx, arch, "the PTX");
    return ptx;
}

static void test_rmsnorm(void **state) {
    (void)state;
    size_t len;
    char *src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/rmsnorm.tl", &len);
    if (!src) skip();
    if (!tlc_ptxas_available()) print_message("note: ptxas not found; PTX is checked but not assembled\n");
    static const struct { const char *c, *bm, *threads; bool cross_warp; } cfg[] = {
        {"96", "4", "128", false},  {"160", "4", "128", false},  {"320", "4", "128", false},
        {"1024", "4", "128", false}, {"4096", "1", "128", true}, {"8192", "1", "128", true},
        {"32768", "1", "512", true},
    };
    static const char *kernels[] = {"rmsnorm", "rmsnorm_silu"};
    static const tlc_arch arches[] = {TLC_SM80, TLC_SM90A};
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        for (int k = 0; k < 2; k++)
            for (int ar = 0; ar < 2; ar++) {
                tlc_define defs[3] = {{"C", cfg[i].c}, {"BLOCK_M", cfg[i].bm}, {"threads", cfg[i].threads}};
                char *ptx = ptx_of(src, len, defs, 3, arches[ar], kernels[k]);
                assert_true(tst_count(ptx, "ld.global.nc.v4") + tst_count(ptx, "ld.global.v4") >= 1);
                assert_true(tst_count(ptx, "st.global.v4") >= 1);
                assert_true(tst_count(ptx, "shfl.sync.bfly") >= 4); /* 96 halves: 12 vectors on 16 lanes */
                assert_non_null(strstr(ptx, "rsqrt.approx"));
                /* the block's rows prefetched into L2 before the wait: one
                 * bulk prefetch (sm_90), nothing on sm_80 */
                assert_int_equal(tst_count(ptx, "cp.async.bulk.prefetch.L2.global"), arches[ar] == TLC_SM90A);
                if (k == 0 || atoi(cfg[i].c) <= 16384) {
                    /* the weight lives in registers (no shared memory, no
                     * barrier); the row sums need one barrier, between the
                     * partial sums' stores and loads, only when rows span
                     * warps (nothing used the scratch before, so none in
                     * front of the stores) */
                    assert_int_equal(tst_count(ptx, "bar.sync"), cfg[i].cross_warp ? 1 : 0);
                    assert_int_equal(tst_count(ptx, "st.shared"), cfg[i].cross_warp ? 1 : 0);
                } else {
                    /* SiLU's weight past 16384 columns in shared memory: one
                     * barrier between its stores and the first read, which
                     * the row sums' partial sums share; 16-byte stores */
                    assert_int_equal(tst_count(ptx, "bar.sync"), 1);
                    assert_true(tst_count(ptx, "st.shared.v4") >= 1);
                    assert_true(tst_count(ptx, "ld.shared") >= 1);
                }
                /* mean: a multiply by 1/C; SiLU (fast math): div.approx.f32,
                 * never the IEEE div.rn.f32 nor div.full.f32 */
                assert_int_equal(tst_count(ptx, "div.rn.f32"), 0);
                assert_int_equal(tst_count(ptx, "div.full.f32"), 0);
                assert_int_equal(tst_count(ptx, "div.approx.f32") > 0, k == 1);
                free(ptx);
            }
    free(src);
}

/* Blocks whose warps cannot split the rows evenly: no warp repeats another's
 * loads and stores. 4 rows of 640 over 160 threads (5 warps): every thread
 * holds 2 of the block's 320 16-byte vectors, so it loads 2 of X, 1 of W
 * (its 8 columns) and stores 2. */
static void test_rmsnorm_odd_warps(void **state) {
    (void)state;
    size_t len;
    char *src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/rmsnorm.tl", &len);
    if (!src) skip();
    static const char *kernels[] = {"rmsnorm", "rmsnorm_silu"};
    for (int k = 0; k < 2; k++) {
        tlc_define defs[3] = {{"C", "640"}, {"BLOCK_M", "4"}, {"threads", "160"}};
        char *ptx = ptx_of(src, len, defs, 3, TLC_SM90A, kernels[k]);
        assert_int_equal(tst_count(ptx, "st.global"), 2);
        assert_int_equal(tst_count(ptx, "st.global.v4.b32"), 2);
        assert_int_equal(tst_count(ptx, "ld.global"), 3);
        /* plain loads: the kernels call pdl_sync(), and ptxas may move an
         * ld.global.nc above its wait */
        assert_int_equal(tst_count(ptx, "ld.global.v4.b32"), 3);
        assert_int_equal(tst_count(ptx, "ld.global.nc"), 0);
        assert_int_equal(tst_count(ptx, "griddepcontrol.wait"), 1);
        free(ptx);
        /* 1 row of 640 (80 vectors) over 4 warps: 32 lanes x 4 warps with the
         * last 48 vectors holes, not 2 warps repeating the other 2: one
         * vector of X, one of W and one store per thread */
        tlc_define one[3] = {{"C", "640"}, {"BLOCK_M", "1"}, {"threads", "128"}};
        ptx = ptx_of(src, len, one, 3, TLC_SM90A, kernels[k]);
        assert_int_equal(tst_count(ptx, "ld.global"), 2);
        assert_int_equal(tst_count(ptx, "st.global"), 1);
        free(ptx);
    }
    free(src);
}

/* pdl_sync() waits where it is written, except in a warp-specialized
 * kernel, which waits first thing in both roles: MLA's combine reads the
 * schedule, then waits; gemm.tl with a pdl_sync() written after its main
 * loop still waits before the producer's first TMA load. */
static void test_pdl_sync_position(void **state) {
    (void)state;
    size_t len;
    char *src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/mla_decode.tl", &len);
    if (!src) skip();
    tlc_define bf[1] = {{"dtype", "bfloat16"}};
    char *ptx = ptx_of(src, len, bf, 1, TLC_SM90A, "mla_decode_combine");
    const char *wait = strstr(ptx, "griddepcontrol.wait"), *load = strstr(ptx, "ld.global");
    assert_int_equal(tst_count(ptx, "griddepcontrol.wait"), 1);
    assert_true(load && wait && load < wait);
    free(ptx);
    /* the split kernel lets the combine start, and waits for nothing */
    ptx = ptx_of(src, len, bf, 1, TLC_SM90A, "mla_decode_split");
    assert_int_equal(tst_count(ptx, "griddepcontrol.launch_dependents"), 1);
    assert_int_equal(tst_count(ptx, "griddepcontrol.wait"), 0);
    free(ptx);
    free(src);

    src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/gemm.tl", &len);
    if (!src) skip();
    const char *at = "        # Fused epilogue;";
    char *pos = strstr(src, at);
    assert_non_null(pos);
    const char *stmt = "        pdl_sync()\n";
    size_t pre = (size_t)(pos - src), add = strlen(stmt);
    char *edited = malloc(len + add + 1);
    assert_non_null(edited);
    memcpy(edited, src, pre);
    memcpy(edited + pre, stmt, add);
    memcpy(edited + pre + add, pos, len - pre + 1);
    ptx = ptx_of(edited, len + add, NULL, 0, TLC_SM90A, "matmul");
    wait = strstr(ptx, "griddepcontrol.wait");
    const char *tma = strstr(ptx, "cp.async.bulk.tensor");
    assert_int_equal(tst_count(ptx, "griddepcontrol.wait"), 1);
    assert_true(wait && tma && wait < tma);
    free(ptx);
    free(edited);
    free(src);
}

/* Float division: by a constant it is a multiply by the reciprocal; else div.full.f32. */
static void test_division(void **state) {
    (void)state;
    const char *div =
        "def div(A: Tensor[(M, 128), float32], B: Tensor[(M, 128), float32]):\n"
        "    with Kernel(M, threads=128) as bx:\n"
        "        a = alloc_fragment((1, 128), float32)\n"
        "        copy(A[bx, 0], a)\n"
        "        for i, j in Parallel(1, 128):\n"
        "            a[i, j] = a[i, j] / 3.0 + a[i, j] / 0.25 + 1.0 / (a[i, j] + 2.0)\n"
        "        copy(a, B[bx, 0])\n";
    char *ptx = ptx_of(div, strlen(div), NULL, 0, TLC_SM90A, NULL);
    assert_int_equal(tst_count(ptx, "div.full.f32"), 4); /* 1.0 / (a + 2.0) on 4 slots */
    assert_int_equal(tst_count(ptx, "div.rn"), 0);
    assert_non_null(strstr(ptx, "0f3EAAAAAB")); /* (float)(1/3) */
    assert_non_null(strstr(ptx, "0f40800000")); /* 1 / 0.25 = 4 */
    free(ptx);
}

static const char *rowmax =
    "@jit(N=2048)\n"
    "def rowmax(A: Tensor[(M, N), float16], O: Tensor[(M,), float32]):\n"
    "    with Kernel(ceildiv(M, 2), threads=256) as bx:\n"
    "        a = alloc_fragment((2, N), float16)\n"
    "        m = alloc_fragment((2,), float32)\n"
    "        copy(A[bx * 2, 0], a)\n"
    "        reduce_max(a, m, dim=1)\n"
    "        for i in Parallel(2):\n"
    "            O[bx * 2 + i] = m[i]\n";

static const char *staging =
    "def staging(A: Tensor[(M, 64), bfloat16], B: Tensor[(M, 64), float32], s: float32):\n"
    "    with Kernel(ceildiv(M, 32), threads=128) as bx:\n"
    "        t = alloc_shared((32, 64), bfloat16)\n"
    "        f = alloc_fragment((32, 64), float32)\n"
    "        copy(A[bx * 32, 0], t)\n"
    "        copy(t, f)\n"
    "        for i, j in Parallel(32, 64):\n"
    "            f[i, j] = exp2(f[i, j] * s) + exp(f[i, j])\n"
    "        copy(f, B[bx * 32, 0])\n";

static const char *misc =
    "@jit(BM=64, BN=64)\n"
    "def misc(A: Tensor[(M, N), float32], C: Tensor[(M, N), float32], S: Tensor[(4,), float32]):\n"
    "    with Kernel(ceildiv(N, BN), ceildiv(M, BM), threads=128) as (bx, by):\n"
    "        use_swizzle(panel_size=4, order=\"col\")\n"
    "        acc = alloc_fragment((BM, BN), float32)\n"
    "        acc2 = alloc_fragment((BN, BM), float32)\n"
    "        tot = alloc_fragment((BM,), float32)\n"
    "        clear(acc)\n"
    "        for k in range(3):\n"
    "            copy(A[by * BM, bx * BN], acc)\n"
    "            for i, j in Parallel(BM, BN):\n"
    "                acc[i, j] = max(acc[i, j], 0.0) + k\n"
    "        reduce_sum(acc, tot, dim=1, clear=False)\n"
    "        atomic_add(S[0], 1.0)\n"
    "        atomic_add(C[by * BM, bx * BN], acc)\n"
    "        for i, j in Parallel(BN, BM):\n"
    "            acc2[i, j] = 2.0\n"
    "        copy(acc, C[by * BM, bx * BN])\n";

/* atomic_add from a shared tile (64 x 64 float32 over 128 threads): 32
 * shared loads and atomics per thread, after the barrier behind the
 * stores that filled the tile; the part of the tile past M adds nothing
 * (its rows are masked at the destination too, in-bounds by construction
 * here). */
static const char atomic_from_shared[] =
    "@jit(bm=64, bn=64)\n"
    "def k(A: Tensor[(M, 64), float32], Out: Tensor[(64, 64), float32]):\n"
    "    with Kernel(ceildiv(M, bm), threads=128) as bx:\n"
    "        S = alloc_shared((bm, bn), float32)\n"
    "        for i, j in Parallel(bm, bn):\n"
    "            S[i, j] = if_then_else(bx * bm + i < M, A[bx * bm + i, j], 0.0)\n"
    "        atomic_add(Out, S)\n";

static void test_small_kernels(void **state) {
    (void)state;
    static const tlc_arch arches[] = {TLC_SM80, TLC_SM90A};
    for (int ar = 0; ar < 2; ar++) {
        char *p = ptx_of(rowmax, strlen(rowmax), NULL, 0, arches[ar], NULL);
        /* 2048 halves over 256 threads: 8 warps per row -> shuffles, then shared memory */
        assert_true(tst_count(p, "shfl.sync.bfly") >= 5);
        assert_int_equal(tst_count(p, "bar.sync"), 1);
        assert_non_null(strstr(p, "// tlc.meta grid (// (+ M 1) 2) 1 1"));
        free(p);
        p = ptx_of(staging, strlen(staging), NULL, 0, arches[ar], NULL);
        assert_true(tst_count(p, "ex2.approx") >= 1);
        assert_true(tst_count(p, "st.shared.v4") >= 1); /* 8 bf16 per store */
        assert_true(tst_count(p, "bar.sync") >= 1);     /* between the shared write and read */
        free(p);
        p = ptx_of(misc, strlen(misc), NULL, 0, arches[ar], NULL);
        assert_true(tst_count(p, "atom.global.add.f32") + tst_count(p, "red.global.add.f32") >= 33);
        assert_non_null(strstr(p, "%nctaid.y")); /* use_swizzle remap */
        free(p);
        /* copies of part of a fragment: vectors that never straddle the part's edge */
        size_t plen = 0;
        char *parts = tlc_read_file(TLC_SOURCE_DIR "/tests/golden/tir/fragment_parts.tl", &plen);
        assert_non_null(parts);
        p = ptx_of(parts, plen, NULL, 0, arches[ar], NULL);
        assert_true(tst_count(p, "st.global.v4.b32") >= 1); /* 4-aligned column part: 16-byte stores */
        assert_true(tst_count(p, "st.shared") >= 1);
        free(p);
        free(parts);
        p = ptx_of(atomic_from_shared, strlen(atomic_from_shared), NULL, 0, arches[ar], NULL);
        assert_int_equal(tst_count(p, "atom.global.add.f32") + tst_count(p, "red.global.add.f32"), 32);
        assert_int_equal(tst_count(p, "ld.shared.b32") + 4 * tst_count(p, "ld.shared.v4"), 32);
        const char *bar = strstr(p, "bar.sync"), *first_atomic = strstr(p, "atom.global.add.f32");
        if (!first_atomic) first_atomic = strstr(p, "red.global.add.f32");
        assert_true(bar && first_atomic && bar < first_atomic);
        free(p);
    }
}

static void test_thread_dump_and_errors(void **state) {
    (void)state;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    tlc_compilation c;
    assert_true(tlc_compile_source(&c, "k.tl", rowmax, strlen(rowmax), &o));
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    th_module *m = tlc_compile_thread(&c, &sb);
    assert_non_null(m);
    assert_int_equal(m->nkernels, 1);
    assert_int_equal(m->kernels[0]->nparams, 3); /* A, O, then the sym M */
    assert_int_equal(m->kernels[0]->params[2].type.base, TH_I64);
    assert_non_null(strstr(tlc_sb_cstr(&sb), "shfl.bfly"));
    tlc_sb_free(&sb);
    tlc_compilation_free(&c);

    const char *gemm =
        "def g(A: Tensor[(64, 64), float16], B: Tensor[(64, 64), float16], C: Tensor[(64, 64), float32]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        a = alloc_shared((64, 64), float16)\n"
        "        b = alloc_shared((64, 64), float16)\n"
        "        c = alloc_fragment((64, 64), float32)\n"
        "        copy(A, a)\n"
        "        copy(B, b)\n"
        "        gemm(a, b, c)\n"
        "        copy(c, C)\n";
    /* gemm is lowered (tests/unit/test_gemm.c checks it in detail) */
    char *err = NULL;
    char *ptx = tlc_compile_to_ptx("g.tl", gemm, strlen(gemm), NULL, 0, TLC_SM90A, NULL, 3, &err);
    if (!ptx) fail_msg("gemm did not compile: %s", err ? err : "?");
    assert_non_null(strstr(ptx, "wgmma.mma_async"));
    free(ptx);
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_rmsnorm_odd_warps),
        cmocka_unit_test(test_pdl_sync_position),
        cmocka_unit_test(test_division),
        cmocka_unit_test(test_small_kernels),
        cmocka_unit_test(test_thread_dump_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
