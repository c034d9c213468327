/* The target table (target/target.c): names, capabilities and limits of
 * every architecture, the default, device-name mapping and name lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "target/ptx.h"
#include "target/target.h"

static void test_names(void **state) {
    (void)state;
    tlc_arch a;
    for (int i = 0; i < TLC_ARCH_COUNT; i++) {
        const tlc_target *t = tlc_target_of((tlc_arch)i);
        assert_int_equal(t->arch, i);
        assert_true(tlc_arch_parse(t->name, &a) && a == (tlc_arch)i);
        assert_string_equal(tlc_arch_name((tlc_arch)i), t->name);
    }
    assert_true(tlc_arch_parse("sm_90a", &a) && a == TLC_SM90A);
    assert_false(tlc_arch_parse("sm_70", &a));
    assert_false(tlc_arch_parse("SM_90A", &a));
    assert_false(tlc_arch_parse(NULL, &a));
    assert_string_equal(tlc_arch_name((tlc_arch)99), "sm_?");
    assert_int_equal(TLC_DEFAULT_ARCH, TLC_SM90A);
    char buf[128];
    tlc_arch_names(buf, sizeof buf, " or ");
    assert_string_equal(buf, "sm_80, sm_86, sm_89, sm_90 or sm_90a");
    tlc_arch_names(buf, 12, ", ");
    assert_string_equal(buf, "sm_80, sm_8"); /* truncated, terminated */
}

static void test_capabilities_and_limits(void **state) {
    (void)state;
    const tlc_target *a80 = tlc_target_of(TLC_SM80), *a89 = tlc_target_of(TLC_SM89);
    const tlc_target *a90 = tlc_target_of(TLC_SM90), *a90a = tlc_target_of(TLC_SM90A);
    assert_true(a80->cp_async && !a80->tma && !a80->wgmma && !a80->stmatrix);
    assert_true(a90->tma && a90->stmatrix && a90->clusters && !a90->wgmma && !a90->setmaxnreg);
    assert_true(a90a->tma && a90a->wgmma && a90a->setmaxnreg && a90a->arch_specific && !a90->arch_specific);
    assert_int_equal(a80->max_shared_per_block, 166912);
    assert_int_equal(a89->max_shared_per_block, 101376);
    assert_int_equal(a90->max_shared_per_block, 232448);
    assert_int_equal(a90a->shared_per_sm, 228 * 1024);
    assert_int_equal(a90a->sm, 90);
    for (int i = 0; i < TLC_ARCH_COUNT; i++) {
        const tlc_target *t = tlc_target_of((tlc_arch)i);
        assert_true(t->max_shared_per_block < t->shared_per_sm);
        assert_int_equal(t->regs_per_sm, 65536);
        assert_int_equal(t->ptx_isa, 80);
    }
}

static void test_device_mapping(void **state) {
    (void)state;
    tlc_arch a;
    assert_true(tlc_arch_for_device("sm_90a", &a) && a == TLC_SM90A);
    assert_true(tlc_arch_for_device("sm_86", &a) && a == TLC_SM86);
    assert_true(tlc_arch_for_device("sm_100", &a) && a == TLC_SM90); /* newer: the portable sm_90 */
    assert_true(tlc_arch_for_device("sm_120a", &a) && a == TLC_SM90);
    assert_false(tlc_arch_for_device("sm_75", &a));
    assert_false(tlc_arch_for_device("sm_87", &a));
    assert_false(tlc_arch_for_device("gfx90a", &a));
    assert_false(tlc_arch_for_device(NULL, &a));
}

/* Operand counts in the text and the constraints agree. */
static int dollars(const char *t) {
    int hi = -1;
    for (const char *p = strchr(t, '$'); p; p = strchr(p + 1, '$'))
        if (p[1] >= '0' && p[1] <= '9') {
            int v = atoi(p + 1);
            if (v > hi) hi = v;
        }
    return hi + 1;
}
static int constraint_count(const char *c) {
    if (!*c) return 0;
    int n = 1;
    for (; *c; c++) n += *c == ',';
    return n;
}

static void test_ptx_builders(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    tlc_ptx t = tlc_ptx_tma_load(&a, 3);
    assert_string_equal(t.text, "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
                                "[$0], [$1, {$2, $3, $4}], [$5];");
    assert_string_equal(t.constraints, "r,l,r,r,r,r");
    assert_string_equal(tlc_ptx_mbarrier_init(&a, 8).text, "mbarrier.init.shared::cta.b64 [$0], 8;");
    assert_string_equal(tlc_ptx_setmaxnreg(&a, true, 232).text, "setmaxnreg.inc.sync.aligned.u32 232;");
    assert_string_equal(tlc_ptx_setmaxnreg(&a, false, 40).text, "setmaxnreg.dec.sync.aligned.u32 40;");
    assert_string_equal(tlc_ptx_cp_async_wait(&a, 1).text, "cp.async.wait_group 1;");
    int one[1] = {0};
    tlc_wgmma_shape sb = {64, "f32", "bf16", false, false, true};
    tlc_ptx w = tlc_ptx_wgmma_chain(&a, &sb, 1, one);
    assert_non_null(strstr(w.text, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, "));
    assert_non_null(strstr(w.text, "}, $32, $33, 1, 1, 1, 0, 1;"));
    /* 32 outputs, 2 descriptors, 32 tied inputs */
    assert_int_equal(constraint_count(w.constraints), 66);
    /* f16 accumulator: 16 b32 outputs of two halves, 2 descriptors, 16 tied inputs */
    tlc_wgmma_shape sh = {64, "f16", "f16", false, false, true};
    tlc_ptx wh = tlc_ptx_wgmma_chain(&a, &sh, 1, one);
    assert_non_null(strstr(wh.text, "wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 {$0, "));
    assert_non_null(strstr(wh.text, "}, $16, $17, 1, 1, 1, 0, 1;"));
    assert_int_equal(constraint_count(wh.constraints), 34);
    assert_non_null(strstr(wh.constraints, "=r,"));
    /* a chain: k steps 0, 1 of groups 0 and 1 (A from registers); each
     * instruction names its group's outputs and its own inputs, and the
     * tied inputs follow every instruction's operands */
    int groups[4] = {0, 1, 0, 1};
    tlc_wgmma_shape sr = {16, "f32", "f16", true, false, true};
    tlc_ptx wc = tlc_ptx_wgmma_chain(&a, &sr, 4, groups);
    assert_string_equal(wc.text, "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, "
                                 "{$16, $17, $18, $19}, $20, 1, 1, 1, 1;\n\t"
                                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$8, $9, $10, $11, $12, $13, $14, "
                                 "$15}, {$21, $22, $23, $24}, $25, 1, 1, 1, 1;\n\t"
                                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, "
                                 "{$26, $27, $28, $29}, $30, 1, 1, 1, 1;\n\t"
                                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$8, $9, $10, $11, $12, $13, $14, "
                                 "$15}, {$31, $32, $33, $34}, $35, 1, 1, 1, 1;");
    /* 16 outputs, 4 x 5 inputs, 16 tied (to 0..15) */
    assert_int_equal(constraint_count(wc.constraints), 52);
    assert_non_null(strstr(wc.constraints, "=f,r,r,r,r,l,r,"));
    assert_non_null(strstr(wc.constraints, ",l,0,1,2,"));
    assert_non_null(strstr(wc.constraints, ",14,15"));
    tlc_ptx all[] = {tlc_ptx_mbarrier_init(&a, 1), tlc_ptx_mbarrier_init_fence(), tlc_ptx_mbarrier_arrive(),
                     tlc_ptx_mbarrier_arrive_expect_tx(), tlc_ptx_mbarrier_wait_parity(), tlc_ptx_cp_async_16(true),
                     tlc_ptx_cp_async_16(false), tlc_ptx_cp_async_commit(), t, tlc_ptx_ldmatrix(4, true),
                     tlc_ptx_ldmatrix(2, false), tlc_ptx_mma_m16n8k16(true, false),
                     tlc_ptx_mma_m16n8k16(false, true), tlc_ptx_wgmma_fence(),
                     tlc_ptx_wgmma_commit(), tlc_ptx_wgmma_wait(&a, 0), tlc_ptx_fence_proxy_async(),
                     tlc_ptx_stmatrix_x4(), tlc_ptx_st_shared_b32(), tlc_ptx_ld_shared_v4_b32(),
                     tlc_ptx_bar_warp_sync()};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_int_equal(dollars(all[i].text), constraint_count(all[i].constraints));
        assert_non_null(strchr(all[i].text, ';'));
    }
    tlc_arena_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_capabilities_and_limits),
        cmocka_unit_test(test_device_mapping),
        cmocka_unit_test(test_ptx_builders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
