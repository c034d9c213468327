/* The tensor-core GEMM (layout/gemm_layouts.c, ops/gemm.c, the Pipelined
 * loop lowering): accumulator fragments against the PTX ISA's tables, warp
 * policies (the MLA split of docs/architecture.md, "Layouts"), swizzled panel
 * layouts, and dsl-examples/gemm.tl compiled for both paths with the
 * instructions each must use, assembled by ptxas when it is around. */
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
#include "layout/gemm_layouts.h"
#include "tlc/runtime.h"

/* mma.sync m16n8k16 / wgmma m64nNk16 accumulator tables (PTX ISA). */
static void check_acc(const tlc_gemm_plan *p, const tlc_fragment *f) {
    char why[200];
    assert_true(tlc_fragment_is_valid(f, why, sizeof why));
    int unit_threads = p->inst == TLC_INST_WGMMA ? 128 : 32;
    int mt = p->tile_m / p->inst_m, nt = p->inst == TLC_INST_WGMMA ? p->tile_n / p->inst_n : p->tile_n / 8;
    int regs = p->inst == TLC_INST_WGMMA ? p->inst_n / 2 : 4;
    for (int t = 0; t < p->units * unit_threads; t++) {
        int unit = t / unit_threads, lane = t % 32, warp = (t % unit_threads) / 32;
        int um = unit % p->units_m, un = unit / p->units_m;
        for (int mi = 0; mi < mt; mi++)
            for (int ni = 0; ni < nt; ni++)
                for (int r = 0; r < regs; r++) {
                    int64_t row, col;
                    if (p->inst == TLC_INST_WGMMA) {
                        row = 16 * warp + 8 * ((r / 2) % 2) + lane / 4 + 64 * mi;
                        col = 8 * (r / 4) + 2 * (lane % 4) + r % 2 + (int64_t)p->inst_n * ni;
                    } else {
                        row = lane / 4 + 8 * (r / 2) + 16 * mi;
                        col = 2 * (lane % 4) + r % 2 + 8 * ni;
                    }
                    int64_t lg[2];
                    int64_t slot = tlc_gemm_acc_slot(p, mi, ni, r);
                    assert_true(tlc_fragment_inverse(f, t, slot, lg, NULL));
                    assert_int_equal(lg[0], row + (int64_t)um * p->tile_m);
                    assert_int_equal(lg[1], col + (int64_t)un * p->tile_n);
                }
    }
}

static void test_plans_and_fragments(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    char why[256];
    tlc_gemm_plan p;
    /* gemm.tl defaults on sm_80: 4 warps, Square -> 2 x 2 warps of 64 x 64 */
    assert_true(tlc_gemm_plan_make(&p, TLC_SM80, 128, 128, 128, 64, 16, TIR_POLICY_SQUARE, true, why, sizeof why));
    assert_int_equal(p.inst, TLC_INST_MMA_SYNC);
    assert_int_equal(p.units_m, 2);
    assert_int_equal(p.units_n, 2);
    check_acc(&p, tlc_gemm_acc_fragment(&a, &p));
    /* on sm_90a: one warpgroup, m64n128k16 twice along M */
    assert_true(tlc_gemm_plan_make(&p, TLC_SM90A, 128, 128, 128, 64, 16, TIR_POLICY_SQUARE, true, why, sizeof why));
    assert_int_equal(p.inst, TLC_INST_WGMMA);
    assert_int_equal(p.inst_n, 128);
    assert_int_equal(p.tile_m, 128);
    tlc_fragment *f = tlc_gemm_acc_fragment(&a, &p);
    assert_int_equal(f->slots, 128);
    check_acc(&p, f);
    /* MLA (section 3): 256 threads, FullCol: the warpgroups split N, 64 x 32 each */
    assert_true(tlc_gemm_plan_make(&p, TLC_SM90A, 256, 64, 64, 512, 16, TIR_POLICY_FULLCOL, true, why, sizeof why));
    assert_int_equal(p.inst, TLC_INST_WGMMA);
    assert_int_equal(p.units_m, 1);
    assert_int_equal(p.units_n, 2);
    assert_int_equal(p.tile_n, 32);
    assert_int_equal(p.inst_n, 32);
    f = tlc_gemm_acc_fragment(&a, &p);
    assert_int_equal(f->slots, 16);
    check_acc(&p, f);
    /* acc_o: 64 x 512 -> two m64n256k16 halves */
    assert_true(tlc_gemm_plan_make(&p, TLC_SM90A, 256, 64, 512, 64, 16, TIR_POLICY_FULLCOL, true, why, sizeof why));
    assert_int_equal(p.inst_n, 256);
    check_acc(&p, tlc_gemm_acc_fragment(&a, &p));
    /* FullRow on sm_80 with 8 warps: all along M */
    assert_true(tlc_gemm_plan_make(&p, TLC_SM80, 256, 128, 64, 32, 16, TIR_POLICY_FULLROW, true, why, sizeof why));
    assert_int_equal(p.units_m, 8);
    check_acc(&p, tlc_gemm_acc_fragment(&a, &p));
    /* the A fragment in registers is a valid layout with replicas over the N warps */
    assert_true(tlc_gemm_plan_make(&p, TLC_SM80, 128, 64, 64, 32, 16, TIR_POLICY_SQUARE, false, why, sizeof why));
    tlc_fragment *fa = tlc_gemm_a_fragment(&a, &p);
    assert_true(tlc_fragment_is_valid(fa, why, sizeof why));
    assert_int_equal(fa->replicate, p.units_n);
    /* no split: K not a multiple of 16, M too small */
    assert_false(tlc_gemm_plan_make(&p, TLC_SM80, 128, 64, 64, 40, 16, TIR_POLICY_SQUARE, true, why, sizeof why));
    assert_false(tlc_gemm_plan_make(&p, TLC_SM80, 128, 8, 64, 32, 16, TIR_POLICY_FULLROW, true, why, sizeof why) &&
                 p.tile_m < 16);
    tlc_arena_free(&a);
}

static void test_operand_layouts(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    int64_t s1[2] = {128, 64}, s2[2] = {64, 128}, s3[2] = {64, 16}, s4[2] = {64, 8};
    tlc_layout *l = tlc_layout_gemm_operand(&a, 2, s1, 2);
    assert_int_equal(l->swizzle, TLC_SWIZZLE_128B);
    assert_int_equal(l->panel_elems, 0);
    l = tlc_layout_gemm_operand(&a, 2, s2, 2);
    assert_int_equal(l->swizzle, TLC_SWIZZLE_128B);
    assert_int_equal(l->panel_elems, 64);
    /* panels: column 64 starts the second [64, 64] block; rows swizzle by row % 8 */
    int64_t x[2] = {0, 64}, y[2] = {1, 0}, z[2] = {9, 70};
    assert_int_equal(tlc_layout_offset(l, x), 64 * 64);
    assert_int_equal(tlc_layout_offset(l, y), 64 + 8);
    assert_int_equal(tlc_layout_offset(l, z), 64 * 64 + 9 * 64 + ((0 ^ 1) * 8) + 6);
    /* a bijection */
    char *hit = calloc(64 * 128, 1);
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 128; c++) {
            int64_t q[2] = {r, c};
            hit[tlc_layout_offset(l, q)]++;
        }
    for (int i = 0; i < 64 * 128; i++) assert_int_equal(hit[i], 1);
    free(hit);
    assert_int_equal(tlc_layout_gemm_operand(&a, 2, s3, 2)->swizzle, TLC_SWIZZLE_32B);
    assert_int_equal(tlc_layout_gemm_operand(&a, 2, s4, 2)->swizzle, TLC_SWIZZLE_NONE);
    tlc_arena_free(&a);
}

static char *compile(const char *src, size_t len, const tlc_define *d, int nd, tlc_arch arch) {
    char *err = NULL;
    char *ptx = tlc_compile_to_ptx("gemm.tl", src, len, d, nd, arch, NULL, 3, &err);
    if (!ptx) fail_msg("compile failed: %s", err ? err : "?");
    free(err);
    assert_int_equal(tst_count(ptx, ".local"), 0);
    tst_assemble_ptx(ptx, arch, "the PTX");
    return ptx;
}

/* A warp-specialized gemm whose epilogue goes through shared memory: the
 * consumers synchronise among themselves (bar.sync 1, 128; the producer
 * warpgroup never reaches it), after the loop too, so that one persistent
 * tile's reads of C_shared do not race the next tile's writes. */
static void test_ws_staged_epilogue(void **state) {
    (void)state;
    const char *src =
        "@jit(dtype=float16)\n"
        "def mm(A: Tensor[(M, K), dtype], B: Tensor[(K, N), dtype], C: Tensor[(M, N), dtype]):\n"
        "    with Kernel(ceildiv(N, 128), ceildiv(M, 128), threads=128) as (bx, by):\n"
        "        A_s = alloc_shared((128, 64), dtype)\n"
        "        B_s = alloc_shared((64, 128), dtype)\n"
        "        C_s = alloc_shared((128, 128), dtype)\n"
        "        C_l = alloc_fragment((128, 128), float32)\n"
        "        clear(C_l)\n"
        "        for ko in Pipelined(ceildiv(K, 64), num_stages=3):\n"
        "            copy(A[by * 128, ko * 64], A_s)\n"
        "            copy(B[ko * 64, bx * 128], B_s)\n"
        "            gemm(A_s, B_s, C_l)\n"
        "        copy(C_l, C_s)\n"
        "        copy(C_s, C[by * 128, bx * 128])\n";
    char *ptx = compile(src, strlen(src), NULL, 0, TLC_SM90A);
    assert_non_null(strstr(ptx, "setmaxnreg.dec"));
    assert_true(tst_count(ptx, "bar.sync \t1, 128;") >= 2);
    free(ptx);
}

static void test_gemm_tl(void **state) {
    (void)state;
    size_t len = 0;
    char *src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/gemm.tl", &len);
    assert_non_null(src);
    /* sm_90a, 128 x 128 x 64 over one warpgroup, 3 stages: warp-specialized
     * (warp_specialize.c): a producer warpgroup issues TMA into the stages,
     * the user's 128 threads consume them with wgmma m64n128k16 (2 x 4 per
     * K tile; LLVM may peel the first iteration, so a multiple of 8) */
    tlc_define d90[4] = {{"block_M", "128"}, {"block_N", "128"}, {"threads", "128"}, {"num_stages", "3"}};
    char *ptx = compile(src, len, d90, 4, TLC_SM90A);
    int nw = tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16");
    assert_true(nw >= 8 && nw % 8 == 0);
    assert_true(tst_count(ptx, "wgmma.fence.sync.aligned") >= 1);
    assert_true(tst_count(ptx, "wgmma.commit_group.sync.aligned") >= 1);
    assert_true(tst_count(ptx, "wgmma.wait_group.sync.aligned 1;") >= 1); /* one group stays in flight */
    assert_true(tst_count(ptx, "wgmma.wait_group.sync.aligned 0;") >= 1); /* drained before the epilogue */
    assert_true(tst_count(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") >= 3);
    assert_true(tst_count(ptx, "mbarrier.try_wait.parity") >= 2);         /* consumers on full, producer on empty */
    assert_int_equal(tst_count(ptx, "mbarrier.init.shared::cta.b64"), 6); /* full + empty per stage */
    assert_true(tst_count(ptx, "mbarrier.arrive.shared::cta.b64") >= 1);  /* consumers release a stage */
    assert_int_equal(tst_count(ptx, "setmaxnreg.dec.sync.aligned.u32 40;"), 1);
    assert_int_equal(tst_count(ptx, "setmaxnreg.inc.sync.aligned.u32 "), 1);
    assert_non_null(strstr(ptx, ".maxntid 256"));
    assert_non_null(strstr(ptx, ".minnctapersm"));
    assert_non_null(strstr(ptx, "// tlc.meta threads 256 1 1"));
    /* nothing after the loop uses shared memory: no consumer barrier at all
     * (each warp starts its epilogue when its own wgmmas are done) */
    assert_null(strstr(ptx, "bar.sync \t1,"));
    assert_non_null(strstr(ptx, "// tlc.meta tmap A box=[128,64] estrides=[1,1] swizzle=128B l2=128B oob=zero"));
    assert_non_null(strstr(ptx, "// tlc.meta tmap B box=[64,64] estrides=[1,1] swizzle=128B l2=128B oob=zero"));
    assert_non_null(strstr(ptx, ".param .align 64 .b8"));
    assert_non_null(strstr(ptx, "cvta.param"));
    assert_int_equal(tst_count(ptx, "ld.global"), 0); /* operands only through TMA */
    /* N and K are row lengths of TMA-mapped tensors (16-byte strides), so the
     * kernel may assume N % 8 == 0: a row's 16-byte chunks lie wholly
     * inside C or wholly outside */
    assert_non_null(strstr(ptx, "// tlc.meta divisible N 8\n"));
    assert_non_null(strstr(ptx, "// tlc.meta divisible K 8\n"));
    assert_null(strstr(ptx, "divisible M"));
    assert_int_equal(tst_count(ptx, "st.global.b16"), 0);
    /* the accumulator goes through stmatrix (4 pairs of slots each, so 16
     * for 128 accumulators) into a per-warp scratch and out as one 16-byte
     * row chunk per lane and group: in tiles wholly inside C, and in the
     * edge tiles with each chunk's store masked (LLVM may merge a stmatrix
     * or a load the two versions share) */
    assert_true(tst_count(ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") >= 16);
    assert_int_equal(tst_count(ptx, "st.global.v4.b32"), 32);
    assert_true(tst_count(ptx, "ld.shared.v4.b32") >= 16);
    assert_int_equal(tst_count(ptx, "st.global.b32"), 0);
    /* persistent: 2 blocks per SM walk the tiles */
    assert_non_null(strstr(ptx, "// tlc.meta persistent 2\n"));
    assert_true(tst_count(ptx, "%nctaid.x") >= 1); /* the roles step over the tiles by the launched grid */
    free(ptx);
    /* 128 x 256 over two consumer warpgroups: one m64n256k16 per warpgroup
     * and k16 step (the Square split that reads the least shared memory),
     * the 64K registers split 40 (producer) / 232 (consumers) */
    tlc_define d256[4] = {{"block_M", "128"}, {"block_N", "256"}, {"threads", "256"}, {"num_stages", "4"}};
    ptx = compile(src, len, d256, 4, TLC_SM90A);
    nw = tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16");
    assert_true(nw >= 4 && nw % 4 == 0);
    assert_int_equal(tst_count(ptx, "setmaxnreg.inc.sync.aligned.u32 232;"), 1);
    assert_non_null(strstr(ptx, ".maxntid 384"));
    assert_non_null(strstr(ptx, "// tlc.meta threads 384 1 1"));
    assert_int_equal(tst_count(ptx, "mbarrier.init.shared::cta.b64"), 8);
    free(ptx);
    /* 3 consumer warpgroups of m64n256 would leave 128 registers at entry
     * (64K / 512 threads), under what the instruction needs: the plain
     * pipeline instead, which ptxas accepts (compile() assembles it) */
    tlc_define d384[4] = {{"block_M", "192"}, {"block_N", "256"}, {"threads", "384"}, {"num_stages", "4"}};
    ptx = compile(src, len, d384, 4, TLC_SM90A);
    assert_true(tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n256k16") > 0);
    assert_int_equal(tst_count(ptx, "setmaxnreg"), 0);
    assert_non_null(strstr(ptx, "// tlc.meta threads 384 1 1"));
    free(ptx);
    /* bfloat16 + ReLU on sm_90a */
    tlc_define bf[6] = {{"dtype", "bfloat16"}, {"relu", "True"}, d90[0], d90[1], d90[2], d90[3]};
    ptx = compile(src, len, bf, 6, TLC_SM90A);
    nw = tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
    assert_true(nw >= 8 && nw % 8 == 0);
    assert_true(tst_count(ptx, "max.f32") > 0);
    free(ptx);
    /* sm_80: cp.async 16-byte chunks with commit / wait groups, ldmatrix (.trans for B), mma.sync */
    tlc_define d80[3] = {{"threads", "256"}, {"block_K", "32"}, {"num_stages", "4"}};
    ptx = compile(src, len, d80, 3, TLC_SM80);
    assert_true(tst_count(ptx, "cp.async.cg.shared.global") >= 4);
    assert_true(tst_count(ptx, "cp.async.commit_group") >= 2);
    assert_non_null(strstr(ptx, "cp.async.wait_group 2"));
    assert_true(tst_count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
    assert_true(tst_count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") > 0);
    /* 8 warps of 64 x 32 (2 x 4), K step 32: 4 x 4 tiles x 2 k16 steps, in
     * each of the loop's three versions (every tile inside A and B at every
     * iteration: cp.async without masks; K and N multiples of 8 at run
     * time: masked cp.async only; otherwise ordinary loads only) */
    assert_int_equal(tst_count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), 96);
    /* (A: 128 x 32, B: 32 x 128 in 16-byte chunks over 256 threads: 4 per
     * iteration, 3 prologue stages + the loop's: 16 of each form) */
    assert_int_equal(tst_count(ptx, "], 16;"), 16);
    assert_int_equal(tst_count(ptx, "], 16, %r"), 16);
    assert_true(tst_count(ptx, "ld.global.nc.u16") + tst_count(ptx, "ld.global.u16") + tst_count(ptx, "ld.global.nc.b16") +
                    tst_count(ptx, "ld.global.b16") > 0);
    /* 64 accumulators per thread: two blocks per SM (ptxas keeps to 128 registers) */
    assert_non_null(strstr(ptx, ".minnctapersm 2"));
    assert_int_equal(tst_count(ptx, "wgmma"), 0);
    assert_int_equal(tst_count(ptx, "stmatrix"), 0); /* sm_90 and later only */
    /* the epilogue of a whole tile whose rows keep 16-byte chunks aligned
     * (N % 8 == 0, checked at run time): 32 words per warp and 8-row band
     * through a shared scratch (st.shared.b32 where stmatrix would write),
     * back as 16-byte row chunks; other tiles: masked single halves */
    assert_int_equal(tst_count(ptx, "st.shared.b32"), 4 * 8);
    assert_int_equal(tst_count(ptx, "ld.shared.v4.b32"), 8);
    assert_int_equal(tst_count(ptx, "st.global.v4.b32"), 8);
    assert_int_equal(tst_count(ptx, "st.global.b16"), 64);
    assert_null(strstr(ptx, "tlc.meta tmap"));
    /* no TMA: nothing is assumed about N, nothing is persistent */
    assert_null(strstr(ptx, "tlc.meta divisible"));
    assert_null(strstr(ptx, "tlc.meta persistent"));
    free(ptx);
    /* the sm_80 path on sm_90a too (a block that is not whole warpgroups) */
    tlc_define d64[3] = {{"threads", "64"}, {"block_M", "64"}, {"block_N", "64"}};
    ptx = compile(src, len, d64, 3, TLC_SM90A);
    assert_true(tst_count(ptx, "mma.sync.aligned.m16n8k16") > 0);
    free(ptx);
    free(src);
}

/* transpose_A / transpose_B and A from registers compile on both paths. */
static void test_transposes(void **state) {
    (void)state;
    const char *fmt =
        "def g(A: Tensor[(%s), float16], B: Tensor[(%s), float16], C: Tensor[(64, 64), float16]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        a = alloc_shared((%s), float16)\n"
        "        b = alloc_shared((%s), float16)\n"
        "        c = alloc_fragment((64, 64), float32)\n"
        "        copy(A, a)\n"
        "        copy(B, b)\n"
        "        gemm(a, b, c, transpose_A=%s, transpose_B=%s, clear_accum=True)\n"
        "        copy(c, C)\n";
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int arch = 0; arch < 2; arch++) {
                char src[2048];
                const char *as = ta ? "32, 64" : "64, 32", *bs = tb ? "64, 32" : "32, 64";
                snprintf(src, sizeof src, fmt, as, bs, as, bs, ta ? "True" : "False", tb ? "True" : "False");
                char *ptx = compile(src, strlen(src), NULL, 0, arch ? TLC_SM90A : TLC_SM80);
                if (arch) assert_true(tst_count(ptx, "wgmma.mma_async") > 0);
                else assert_true(tst_count(ptx, "mma.sync.aligned") > 0);
                free(ptx);
            }
    const char *reg =
        "def g(A: Tensor[(64, 32), float16], B: Tensor[(32, 64), float16], C: Tensor[(64, 64), float32]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        a = alloc_fragment((64, 32), float16)\n"
        "        b = alloc_shared((32, 64), float16)\n"
        "        c = alloc_fragment((64, 64), float32)\n"
        "        copy(A, a)\n"
        "        copy(B, b)\n"
        "        clear(c)\n"
        "        gemm(a, b, c)\n"
        "        copy(c, C)\n";
    /* A in registers: wgmma with A's four b32 registers per k step on
     * sm_90a, mma.sync on sm_80 */
    char *ptx = compile(reg, strlen(reg), NULL, 0, TLC_SM90A);
    assert_int_equal(tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), 2);
    assert_int_equal(tst_count(ptx, "mma.sync.aligned.m16n8k16"), 0);
    assert_int_equal(tst_count(ptx, "ldmatrix"), 0);
    free(ptx);
    ptx = compile(reg, strlen(reg), NULL, 0, TLC_SM80);
    assert_true(tst_count(ptx, "mma.sync.aligned.m16n8k16") > 0);
    free(ptx);
}

/* Work between the gemms (here on the accumulator) still gets a producer
 * warpgroup: the consumers wait for each stage and release it when their
 * iteration is done, every thread arriving. Loads whose coordinates come
 * from a tensor the kernel itself writes stay with the single-role
 * pipeline: a producer could not see the consumers' stores in order. */
static void test_not_warp_specialized(void **state) {
    (void)state;
    const char *src =
        "def g(A: Tensor[(M, K), float16], B: Tensor[(K, N), float16], C: Tensor[(M, N), float16],\n"
        "      Row: Tensor[(T,), int32]):\n"
        "    with Kernel(ceildiv(N, 128), ceildiv(M, 128), threads=128) as (bx, by):\n"
        "        a = alloc_shared((128, 64), float16)\n"
        "        b = alloc_shared((64, 128), float16)\n"
        "        c = alloc_fragment((128, 128), float32)\n"
        "        clear(c)\n"
        "        for ko in Pipelined(ceildiv(K, 64), num_stages=3):\n"
        "            copy(A[by * 128, ko * 64], a)\n"
        "            copy(B[ko * 64, bx * 128], b)\n"
        "            gemm(a, b, c)\n"
        "            for i, j in Parallel(128, 128):\n"
        "                c[i, j] = c[i, j] * 0.5\n"
        "        copy(c, C[by * 128, bx * 128])\n"
        "        for i in Parallel(1):\n"
        "            Row[by] = by\n";
    char *ptx = compile(src, strlen(src), NULL, 0, TLC_SM90A);
    assert_true(tst_count(ptx, "wgmma.mma_async") > 0);
    assert_int_equal(tst_count(ptx, "setmaxnreg"), 2);
    assert_non_null(strstr(ptx, "mbarrier.init.shared::cta.b64 [%r"));
    assert_true(tst_count(ptx, ", 128;") >= 1); /* empty barriers: 128 consumer arrivals */
    assert_non_null(strstr(ptx, "// tlc.meta threads 256 1 1"));
    free(ptx);
    const char *written =
        "def g(A: Tensor[(M, K), float16], B: Tensor[(K, N), float16], C: Tensor[(M, N), float16],\n"
        "      Row: Tensor[(T,), int32]):\n"
        "    with Kernel(ceildiv(N, 128), ceildiv(M, 128), threads=128) as (bx, by):\n"
        "        a = alloc_shared((128, 64), float16)\n"
        "        b = alloc_shared((64, 128), float16)\n"
        "        c = alloc_fragment((128, 128), float32)\n"
        "        clear(c)\n"
        "        for ko in Pipelined(ceildiv(K, 64), num_stages=3):\n"
        "            copy(A[Row[by] * 128, ko * 64], a)\n"
        "            copy(B[ko * 64, bx * 128], b)\n"
        "            gemm(a, b, c)\n"
        "        copy(c, C[by * 128, bx * 128])\n"
        "        for i in Parallel(1):\n"
        "            Row[by] = by\n";
    ptx = compile(written, strlen(written), NULL, 0, TLC_SM90A);
    assert_true(tst_count(ptx, "wgmma.mma_async") > 0);
    assert_int_equal(tst_count(ptx, "setmaxnreg"), 0);
    assert_int_equal(tst_count(ptx, "mbarrier.init.shared::cta.b64"), 3);
    assert_non_null(strstr(ptx, "// tlc.meta threads 128 1 1"));
    free(ptx);
}

/* The runtime side of "divisible" and "persistent": parsed, written back
 * the same, and a launch binding N to a non-multiple refused with the
 * tensors named. */
static void test_divisible_and_persistent_metadata(void **state) {
    (void)state;
    const char *text = "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
                       "// tlc.meta kernel matmul\n"
                       "// tlc.meta sym M\n"
                       "// tlc.meta sym N\n"
                       "// tlc.meta tensor B float16 [64,N] align=16\n"
                       "// tlc.meta tensor C float16 [M,N] align=16\n"
                       "// tlc.meta divisible N 8\n"
                       "// tlc.meta grid (// (+ N 127) 128) (// (+ M 127) 128) 1\n"
                       "// tlc.meta threads 384 1 1\n"
                       "// tlc.meta smem 1024\n"
                       "// tlc.meta persistent 1\n"
                       "// tlc.meta tile_counter\n"
                       "// tlc.meta end\n";
    tlrt_module_meta m;
    char err[512];
    assert_true(tlrt_meta_parse(text, strlen(text), &m, err, sizeof err));
    const tlrt_kernel_meta *k = &m.kernels[0];
    assert_int_equal(k->sym_multiple[1], 8);
    assert_true(k->sym_multiple[0] <= 1);
    assert_int_equal(k->persistent, 1);
    assert_true(k->tile_counter);
    char *out = tlrt_meta_format(&m, err, sizeof err);
    assert_non_null(out);
    assert_string_equal(out, text);
    free(out);
    int64_t sb[2] = {64, 1000}, sc[2] = {300, 1000};
    tlrt_arg args[2] = {tlrt_arg_tensor(0x1000, TLRT_F16, 2, sb, NULL), tlrt_arg_tensor(0x2000, TLRT_F16, 2, sc, NULL)};
    tlrt_launch_plan *plan = malloc(sizeof *plan);
    assert_int_equal(tlrt_plan_launch(k, args, 2, plan, err, sizeof err), TLRT_SUCCESS);
    /* the grid stays logical; tlrt_launch folds it onto the SMs */
    assert_int_equal(plan->grid[0], 8);
    assert_int_equal(plan->grid[1], 3);
    sb[1] = sc[1] = 1001;
    assert_int_equal(tlrt_plan_launch(k, args, 2, plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "symbolic dim 'N' = 1001 must be a multiple of 8"));
    assert_non_null(strstr(err, "tensors 'B', 'C'"));
    free(plan);
    tlrt_meta_free(&m);
    /* bad lines */
    const char *bad[] = {"// tlc.meta divisible Q 8\n", "// tlc.meta divisible N 0\n", "// tlc.meta divisible N\n",
                         "// tlc.meta persistent 0\n", "// tlc.meta persistent 99\n",
                         "// tlc.meta tile_counter 1\n", "// tlc.meta check 2 (> N 0)\n",
                         "// tlc.meta check 0:1 (> N 0)\n", "// tlc.meta check 2:5 (> Q 0)\n",
                         "// tlc.meta check 2:5 (> N\n", "// tlc.meta check 2:5 (> N 0) 7\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n// tlc.meta kernel g\n// tlc.meta sym N\n"
                 "// tlc.meta tensor C float16 [N] align=16\n%s// tlc.meta grid 1 1 1\n// tlc.meta threads 32 1 1\n"
                 "// tlc.meta end\n",
                 bad[i]);
        assert_false(tlrt_meta_parse(t, strlen(t), &m, err, sizeof err));
        assert_non_null(strstr(err, "tlc.meta line 5"));
    }
    /* a counter without persistent tiles has no meaning */
    const char *lone = "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n// tlc.meta kernel g\n// tlc.meta grid 1 1 1\n"
                       "// tlc.meta threads 32 1 1\n// tlc.meta tile_counter\n// tlc.meta end\n";
    assert_false(tlrt_meta_parse(lone, strlen(lone), &m, err, sizeof err));
    assert_non_null(strstr(err, "tile_counter without persistent"));
}

/* float16 accumulators: gemm.tl with accum_dtype=float16 issues the f16
 * forms (accumulators two halves to a b32 register), warp-specialized
 * wgmma on sm_90a and mma.sync on sm_80; bfloat16 operands cannot. */
static void test_f16_accumulator(void **state) {
    (void)state;
    size_t len = 0;
    char *src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/gemm.tl", &len);
    assert_non_null(src);
    tlc_define d90[] = {{"accum_dtype", "float16"}, {"threads", "256"}, {"block_N", "256"}, {"num_stages", "4"}};
    char *ptx = compile(src, len, d90, 4, TLC_SM90A);
    assert_true(tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f16.f16.f16") >= 4);
    assert_int_equal(tst_count(ptx, ".f32.f16.f16"), 0);
    assert_non_null(strstr(ptx, "setmaxnreg.dec"));
    free(ptx);
    tlc_define d80[] = {{"accum_dtype", "float16"}};
    ptx = compile(src, len, d80, 1, TLC_SM80);
    assert_true(tst_count(ptx, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") >= 16);
    assert_int_equal(tst_count(ptx, ".f32.f16.f16.f32"), 0);
    free(ptx);
    tlc_define dbf[] = {{"accum_dtype", "float16"}, {"dtype", "bfloat16"}};
    char *err = NULL;
    ptx = tlc_compile_to_ptx("gemm.tl", src, len, dbf, 2, TLC_SM90A, NULL, 3, &err);
    assert_null(ptx);
    assert_non_null(strstr(err, "bfloat16 x bfloat16 -> float16"));
    free(err);
    free(src);
    /* clear_accum into a float16 accumulator (MLA's score gemm, with its
     * warpgroup turns): the zeros are float16 too */
    src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/mla_decode.tl", &len);
    assert_non_null(src);
    tlc_define dm[] = {{"accum_dtype", "float16"}};
    ptx = tlc_compile_to_ptx("mla_decode.tl", src, len, dm, 1, TLC_SM90A, "mla_decode_split", 3, &err);
    if (!ptx) fail_msg("mla_decode_split with float16 accumulators: %s", err ? err : "?");
    assert_true(tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16") >= 36);
    free(ptx);
    free(src);
}

static void test_errors(void **state) {
    (void)state;
    const char *bad =
        "def g(A: Tensor[(64, 24), float16], B: Tensor[(24, 64), float16], C: Tensor[(64, 64), float32]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        a = alloc_shared((64, 24), float16)\n"
        "        b = alloc_shared((24, 64), float16)\n"
        "        c = alloc_fragment((64, 64), float32)\n"
        "        copy(A, a)\n"
        "        copy(B, b)\n"
        "        gemm(a, b, c)\n"
        "        copy(c, C)\n";
    char *err = NULL;
    char *ptx = tlc_compile_to_ptx("g.tl", bad, strlen(bad), NULL, 0, TLC_SM90A, NULL, 3, &err);
    assert_null(ptx);
    assert_non_null(strstr(err, "g.tl:8:9: error: gemm cannot be mapped to the tensor cores: K (24)"));
    free(err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans_and_fragments), cmocka_unit_test(test_operand_layouts),
        cmocka_unit_test(test_gemm_tl),
        cmocka_unit_test(test_ws_staged_epilogue),
        cmocka_unit_test(test_transposes),
        cmocka_unit_test(test_not_warp_specialized),
        cmocka_unit_test(test_divisible_and_persistent_metadata),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_f16_accumulator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
