/* The target table (target/target.c): names, capabilities and limits of
 * every architecture, the default, device-name mapping and name lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_capabilities_and_limits),
        cmocka_unit_test(test_device_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
