/* Thread IR constructors (types, constant folding, variable registry) and
 * the --emit=thread printer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ir/thread_ir.h"

static void test_types(void **state) {
    (void)state;
    char buf[32];
    assert_int_equal(th_type_bytes(th_vec(TH_F16, 8)), 16);
    assert_int_equal(th_type_bytes(th_vec(TH_I32, 4)), 16);
    assert_int_equal(th_type_bytes(th_scalar(TH_BF16)), 2);
    assert_int_equal(th_type_bytes(th_ptr(TH_AS_SHARED)), 8);
    assert_int_equal(th_type_bytes(th_scalar(TH_I1)), 1);
    assert_true(th_type_eq(th_scalar(TH_F32), th_vec(TH_F32, 1)));
    assert_false(th_type_eq(th_scalar(TH_F32), th_vec(TH_F32, 2)));
    assert_false(th_type_eq(th_ptr(TH_AS_GLOBAL), th_ptr(TH_AS_SHARED)));
    assert_false(th_type_eq(th_scalar(TH_F16), th_scalar(TH_BF16)));
    assert_string_equal(th_type_name(th_vec(TH_F16, 8), buf), "f16x8");
    assert_string_equal(th_type_name(th_scalar(TH_BF16), buf), "bf16");
    assert_string_equal(th_type_name(th_ptr(TH_AS_GLOBAL), buf), "ptr<global>");
    assert_string_equal(th_type_name(th_ptr(TH_AS_SHARED), buf), "ptr<shared>");
    assert_int_equal(th_from_dtype(TIR_F16).base, TH_F16);
    assert_int_equal(th_from_dtype(TIR_BF16).base, TH_BF16);
    assert_int_equal(th_from_dtype(TIR_F8E4M3).base, TH_I8);
    assert_int_equal(th_from_dtype(TIR_BOOL).base, TH_I8);
    assert_int_equal(th_from_dtype(TIR_I64).base, TH_I64);
}

static int64_t folded(th_expr *e) {
    int64_t v = 0;
    assert_true(th_expr_const_int(e, &v));
    return v;
}

static void test_int_folding(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    th_expr *x = th_int(&a, TH_I32, INT32_MAX);
    assert_int_equal(folded(th_bin(&a, THB_ADD, x, th_int(&a, TH_I32, 1))), INT32_MIN); /* wraps like hardware */
    assert_int_equal(folded(th_bin(&a, THB_FLOORDIV, th_int(&a, TH_I32, -7), th_int(&a, TH_I32, 2))), -4);
    assert_int_equal(folded(th_bin(&a, THB_FLOORMOD, th_int(&a, TH_I32, -7), th_int(&a, TH_I32, 2))), 1);
    assert_int_equal(folded(th_bin(&a, THB_FLOORMOD, th_int(&a, TH_I32, 7), th_int(&a, TH_I32, -2))), -1);
    assert_int_equal(folded(th_bin(&a, THB_DIV, th_int(&a, TH_I32, -7), th_int(&a, TH_I32, 2))), -3);
    assert_int_equal(folded(th_bin(&a, THB_REM, th_int(&a, TH_I32, -7), th_int(&a, TH_I32, 2))), -1);
    assert_int_equal(folded(th_bin(&a, THB_SHR, th_int(&a, TH_I32, -8), th_int(&a, TH_I32, 1))), -4);
    assert_int_equal(folded(th_bin(&a, THB_LSHR, th_int(&a, TH_I32, -8), th_int(&a, TH_I32, 28))), 15);
    assert_int_equal(folded(th_bin(&a, THB_MIN, th_int(&a, TH_I64, -8), th_int(&a, TH_I64, 3))), -8);
    assert_int_equal(folded(th_int(&a, TH_I8, 300)), 44);
    /* no folding where it would hide a runtime fault or is undefined */
    assert_int_equal(th_bin(&a, THB_DIV, th_int(&a, TH_I32, 1), th_int(&a, TH_I32, 0))->kind, THE_BIN);
    assert_int_equal(th_bin(&a, THB_SHL, th_int(&a, TH_I32, 1), th_int(&a, TH_I32, 40))->kind, THE_BIN);
    assert_int_equal(th_bin(&a, THB_DIV, th_int(&a, TH_I64, INT64_MIN), th_int(&a, TH_I64, -1))->kind, THE_BIN);
    /* identities keep index arithmetic short */
    th_expr *t = th_special_reg(&a, THS_TID_X);
    assert_ptr_equal(th_bin(&a, THB_ADD, t, th_int(&a, TH_I32, 0)), t);
    assert_ptr_equal(th_bin(&a, THB_ADD, th_int(&a, TH_I32, 0), t), t);
    assert_ptr_equal(th_bin(&a, THB_MUL, t, th_int(&a, TH_I32, 1)), t);
    assert_ptr_equal(th_bin(&a, THB_MUL, th_int(&a, TH_I32, 1), t), t);
    assert_int_equal(th_bin(&a, THB_MUL, t, th_int(&a, TH_I32, 2))->kind, THE_BIN);
    /* but not across types: i64 constant with an i32 operand stays a node for codegen to reject */
    assert_int_equal(th_bin(&a, THB_ADD, t, th_int(&a, TH_I64, 0))->kind, THE_BIN);
    /* comparisons and selects */
    assert_int_equal(folded(th_cmp(&a, THC_LT, th_int(&a, TH_I32, 2), th_int(&a, TH_I32, 3))), 1);
    assert_int_equal(th_cmp(&a, THC_LT, t, th_int(&a, TH_I32, 3))->type.base, TH_I1);
    th_expr *u = th_special_reg(&a, THS_LANEID);
    assert_ptr_equal(th_select(&a, th_int(&a, TH_I1, 1), t, u), t);
    assert_ptr_equal(th_select(&a, th_int(&a, TH_I1, 0), t, u), u);
    assert_int_equal(folded(th_un(&a, THU_NEG, th_int(&a, TH_I32, INT32_MIN))), INT32_MIN);
    tlc_arena_free(&a);
}

static void test_float_and_conversion_folding(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    th_expr *f = th_float(&a, TH_F32, 0.1);
    assert_true(f->u.fval == (double)0.1f); /* f32 constants hold the f32 value */
    th_expr *s = th_bin(&a, THB_MUL, th_float(&a, TH_F32, 1.5), th_float(&a, TH_F32, 4.0));
    assert_int_equal(s->kind, THE_FLOAT);
    assert_true(s->u.fval == 6.0);
    th_expr *c = th_convert(&a, th_int(&a, TH_I32, 300), th_scalar(TH_I8));
    assert_int_equal(folded(c), 44);
    c = th_convert(&a, th_int(&a, TH_I32, 5), th_scalar(TH_I1));
    assert_int_equal(folded(c), 1);
    c = th_convert(&a, th_int(&a, TH_I32, -3), th_scalar(TH_F32));
    assert_int_equal(c->kind, THE_FLOAT);
    assert_true(c->u.fval == -3.0);
    /* f16 conversions stay explicit (rounding is the hardware's) */
    c = th_convert(&a, th_float(&a, TH_F32, 0.1), th_scalar(TH_F16));
    assert_int_equal(c->kind, THE_CONVERT);
    /* same type: no node */
    th_expr *t = th_special_reg(&a, THS_TID_X);
    assert_ptr_equal(th_convert(&a, t, th_scalar(TH_I32)), t);
    assert_ptr_equal(th_bitcast(&a, t, th_scalar(TH_I32)), t);
    /* vector lanes */
    th_expr *lanes[2] = {th_float(&a, TH_F16, 1), th_float(&a, TH_F16, 2)};
    th_expr *v = th_build(&a, th_vec(TH_F16, 2), lanes, 2);
    assert_ptr_equal(th_extract(&a, v, 1), lanes[1]);
    th_expr *e = th_extract(&a, th_bitcast(&a, t, th_vec(TH_F16, 2)), 0);
    assert_int_equal(e->kind, THE_EXTRACT);
    assert_true(th_type_eq(e->type, th_scalar(TH_F16)));
    /* pointer + 0 is the pointer */
    th_expr *p = th_shared_ptr(&a, th_int(&a, TH_I32, 0));
    assert_ptr_equal(th_ptr_add(&a, p, th_int(&a, TH_I32, 0), th_scalar(TH_F32)), p);
    assert_int_equal(th_ptr_add(&a, p, t, th_scalar(TH_F32))->type.addrspace, TH_AS_SHARED);
    tlc_arena_free(&a);
}

static void test_var_registry(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    th_kernel k;
    memset(&k, 0, sizeof k);
    for (int i = 0; i < 100; i++) {
        th_var *v = th_new_var(&a, &k, "v", th_scalar(TH_I32), i % 3);
        assert_int_equal(v->id, i);
    }
    assert_int_equal(k.nvars, 100);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(k.vars[i]->id, i);
        assert_int_equal(k.vars[i]->array_len, i % 3);
    }
    /* a var list set up by hand (no capacity) is copied, not overrun */
    th_var *own[3];
    for (int i = 0; i < 3; i++) own[i] = k.vars[i];
    k.vars = own;
    k.nvars = 3;
    k.vars_cap = 0;
    th_var *w = th_new_var(&a, &k, "w", th_scalar(TH_F32), 0);
    assert_int_equal(w->id, 3);
    assert_ptr_not_equal(k.vars, own);
    assert_ptr_equal(k.vars[0], own[0]);
    assert_ptr_equal(k.vars[3], w);
    /* params by reference */
    th_param ps[2] = {{.name = "x", .type = th_ptr(TH_AS_GLOBAL)}, {.name = "tm", .byte_size_override = 128}};
    k.params = ps;
    k.nparams = 2;
    assert_true(th_type_eq(th_param_ref(&a, &k, 0)->type, th_ptr(TH_AS_GLOBAL)));
    assert_true(th_type_eq(th_param_ref(&a, &k, 1)->type, th_ptr(TH_AS_GENERIC)));
    assert_int_equal(th_param_ref(&a, &k, 5)->type.base, TH_VOID);
    tlc_arena_free(&a);
}

static void test_printer(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    th_kernel k;
    memset(&k, 0, sizeof k);
    th_param_attr pa[3] = {{.readonly = true, .align = 16}, {0}, {0}};
    th_param ps[3] = {{.name = "x", .type = th_ptr(TH_AS_GLOBAL)},
                      {.name = "n", .type = th_scalar(TH_I32)},
                      {.name = "tm", .byte_size_override = 128}};
    k.name = "demo";
    k.params = ps;
    k.nparams = 3;
    k.param_attrs = pa;
    k.threads = 128;
    k.min_blocks_per_sm = 2;
    k.dyn_shared_bytes = 4096;
    th_var *acc = th_new_var(&a, &k, "acc", th_scalar(TH_F32), 0);
    th_var *r = th_new_var(&a, &k, "r", th_vec(TH_F16, 8), 2);
    th_var *i = th_new_var(&a, &k, "i", th_scalar(TH_I32), 0);
    th_expr *x = th_param_ref(&a, &k, 0);
    th_expr *ld = th_load(&a, th_ptr_add(&a, x, th_read(&a, i), th_vec(TH_F16, 8)), th_vec(TH_F16, 8), 16);
    th_expr *sh_args[2] = {th_read(&a, acc), th_int(&a, TH_I32, 16)};
    th_stmt *body[] = {
        th_comment(&a, "two\nlines"),
        th_assign(&a, acc, NULL, th_float(&a, TH_F32, 0)),
        th_for(&a, i, th_int(&a, TH_I32, 0), th_int(&a, TH_I32, 2), 1, true, th_assign(&a, r, th_read(&a, i), ld)),
        th_assign(&a, acc, NULL,
                  th_bin(&a, THB_ADD, th_read(&a, acc),
                         th_convert(&a, th_extract(&a, th_array_read(&a, r, th_int(&a, TH_I32, 1)), 7), th_scalar(TH_F32)))),
        th_assign(&a, acc, NULL, th_intrin_call(&a, THI_SHFL_BFLY, th_scalar(TH_F32), sh_args, 2)),
        th_if(&a, th_cmp(&a, THC_EQ, th_special_reg(&a, THS_LANEID), th_int(&a, TH_I32, 0)),
              th_store(&a, th_shared_ptr(&a, th_int(&a, TH_I32, 64)), th_un(&a, THU_RSQRT_APPROX, th_read(&a, acc)), 4),
              th_barrier(&a)),
        th_barrier_sync(&a, 2, 64),
    };
    k.body = th_seq(&a, body, (int)(sizeof body / sizeof body[0]));
    th_kernel *kp = &k;
    th_module m = {.arch = TLC_SM90A, .kernels = &kp, .nkernels = 1, .metadata = "meta line 1\nmeta line 2"};
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    th_print_module(&sb, &m);
    const char *want =
        "// thread IR for sm_90a\n"
        "// meta line 1\n"
        "// meta line 2\n"
        "kernel demo(param0 x: ptr<global> readonly align 16, param1 n: i32, param2 tm: bytes[128]) threads=128 "
        "min_blocks=2 dyn_shared=4096 {\n"
        "  var acc.0: f32\n"
        "  var r.1: f16x8[2]\n"
        "  var i.2: i32\n"
        "  // two\n"
        "  // lines\n"
        "  acc.0 = 0\n"
        "  for i.2 in [0, 2) step 1 unroll {\n"
        "    r.1[i.2] = load.f16x8.a16[(param0 +f16x8 i.2)]\n"
        "  }\n"
        "  acc.0 = (acc.0 + cvt.f32(r.1[1].lane7))\n"
        "  acc.0 = shfl.bfly.f32(acc.0, 16)\n"
        "  if (%laneid == 0) {\n"
        "    store.a4[smem+64] = rsqrt.approx(acc.0)\n"
        "  } else {\n"
        "    bar.sync 0\n"
        "  }\n"
        "  bar.sync 2, 64\n"
        "}\n";
    if (strcmp(tlc_sb_cstr(&sb), want) != 0) print_error("got:\n%s", tlc_sb_cstr(&sb));
    assert_string_equal(tlc_sb_cstr(&sb), want);
    tlc_sb_free(&sb);
    tlc_arena_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_int_folding),
        cmocka_unit_test(test_float_and_conversion_folding),
        cmocka_unit_test(test_var_registry),
        cmocka_unit_test(test_printer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
