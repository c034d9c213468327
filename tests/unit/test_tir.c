/* Tile IR constructors (tir.c): constant folding with Python semantics,
 * overflow / division-by-zero detection, promotion, region shapes, arch and
 * dtype helpers, linear differences for slice extents. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ir/tir.h"

static const tlc_loc L = {1, 1};

static int setup(void **state) {
    tlc_arena *a = malloc(sizeof *a);
    tlc_arena_init(a);
    *state = a;
    return 0;
}
static int teardown(void **state) {
    tlc_arena_free(*state);
    free(*state);
    return 0;
}

static int64_t fold_i(tlc_arena *a, tir_binop op, int64_t x, int64_t y, tir_fold_status *st) {
    tir_expr *e = tir_binary_fold(a, op, tir_int(a, x, L), tir_int(a, y, L), L, st);
    if (!e) return INT64_MIN;
    assert_int_equal(e->kind, TE_INT);
    return e->u.ival;
}

static void test_int_folding(void **state) {
    tlc_arena *a = *state;
    tir_fold_status st;
    assert_int_equal(fold_i(a, TB_ADD, 2, 3, &st), 5);
    assert_int_equal(fold_i(a, TB_MUL, 2, 64, &st), 128);
    /* Python floor division and modulo */
    assert_int_equal(fold_i(a, TB_FLOORDIV, -7, 2, &st), -4);
    assert_int_equal(fold_i(a, TB_FLOORMOD, -7, 2, &st), 1);
    assert_int_equal(fold_i(a, TB_FLOORDIV, 7, -2, &st), -4);
    assert_int_equal(fold_i(a, TB_FLOORMOD, 7, -2, &st), -1);
    assert_int_equal(fold_i(a, TB_POW, 2, 10, &st), 1024);
    assert_int_equal(fold_i(a, TB_SHL, 1, 40, &st), (int64_t)1 << 40);
    assert_int_equal(fold_i(a, TB_MIN, 3, -1, &st), -1);
    assert_int_equal(st, TIR_FOLD_OK);
    /* result type widens when the value does not fit int32 */
    tir_expr *big = tir_binary(a, TB_MUL, tir_int(a, 1 << 20, L), tir_int(a, 1 << 20, L), L);
    assert_int_equal(big->dtype, TIR_I64);
    assert_int_equal(tir_int(a, 7, L)->dtype, TIR_I32);
    /* comparisons give bool */
    tir_expr *lt = tir_binary(a, TB_LT, tir_int(a, 1, L), tir_int(a, 2, L), L);
    assert_int_equal(lt->dtype, TIR_BOOL);
    assert_int_equal(lt->u.ival, 1);
}

static void test_fold_errors(void **state) {
    tlc_arena *a = *state;
    tir_fold_status st;
    fold_i(a, TB_ADD, INT64_MAX, 1, &st);
    assert_int_equal(st, TIR_FOLD_OVERFLOW);
    fold_i(a, TB_MUL, INT64_MAX / 2, 3, &st);
    assert_int_equal(st, TIR_FOLD_OVERFLOW);
    fold_i(a, TB_FLOORDIV, INT64_MIN, -1, &st);
    assert_int_equal(st, TIR_FOLD_OVERFLOW);
    fold_i(a, TB_POW, 2, 64, &st);
    assert_int_equal(st, TIR_FOLD_OVERFLOW);
    fold_i(a, TB_SHL, 1, 63, &st);
    assert_int_equal(st, TIR_FOLD_OVERFLOW);
    fold_i(a, TB_SHL, 1, 64, &st);
    assert_int_equal(st, TIR_FOLD_BAD_SHIFT);
    fold_i(a, TB_FLOORDIV, 5, 0, &st);
    assert_int_equal(st, TIR_FOLD_DIV_ZERO);
    fold_i(a, TB_FLOORMOD, 5, 0, &st);
    assert_int_equal(st, TIR_FOLD_DIV_ZERO);
    /* x // 0 with x unknown is still a division by zero */
    tir_var v = {.name = "x", .kind = TV_LET, .dtype = TIR_I32};
    assert_null(tir_binary_fold(a, TB_FLOORDIV, tir_var_ref(a, &v, L), tir_int(a, 0, L), L, &st));
    assert_int_equal(st, TIR_FOLD_DIV_ZERO);
    /* float division by zero in a constant is reported too */
    assert_null(tir_binary_fold(a, TB_DIV, tir_float(a, 1, TIR_F32, L), tir_float(a, 0, TIR_F32, L), L, &st));
    assert_int_equal(st, TIR_FOLD_DIV_ZERO);
    /* tir_binary never fails: it builds the node */
    tir_expr *e = tir_binary(a, TB_FLOORDIV, tir_int(a, 1, L), tir_int(a, 0, L), L);
    assert_int_equal(e->kind, TE_BINARY);
}

static void test_identities(void **state) {
    tlc_arena *a = *state;
    tir_var v = {.name = "x", .kind = TV_LET, .dtype = TIR_I32};
    tir_expr *x = tir_var_ref(a, &v, L);
    assert_ptr_equal(tir_binary(a, TB_ADD, x, tir_int(a, 0, L), L), x);
    assert_ptr_equal(tir_binary(a, TB_MUL, tir_int(a, 1, L), x, L), x);
    tir_expr *z = tir_binary(a, TB_MUL, x, tir_int(a, 0, L), L);
    assert_int_equal(z->kind, TE_INT);
    assert_int_equal(z->u.ival, 0);
    tir_expr *s = tir_binary(a, TB_ADD, x, tir_int(a, 1, L), L);
    assert_int_equal(s->kind, TE_BINARY);
    /* float: 0.5 * 4 folds */
    tir_expr *f = tir_binary(a, TB_MUL, tir_float(a, 0.5, TIR_F32, L), tir_int(a, 4, L), L);
    assert_int_equal(f->kind, TE_FLOAT);
    assert_true(f->u.fval == 2.0);
    assert_int_equal(f->dtype, TIR_F32);
    /* unary and cast folding */
    assert_int_equal(tir_unary(a, TU_NEG, tir_int(a, 5, L), L)->u.ival, -5);
    assert_true(tir_unary(a, TU_EXP2, tir_float(a, 3, TIR_F32, L), L)->u.fval == 8.0);
    assert_int_equal(tir_cast(a, tir_float(a, 2.75, TIR_F32, L), TIR_I32, L)->u.ival, 2);
    assert_int_equal(tir_cast(a, tir_int(a, 300, L), TIR_I8, L)->u.ival, 44);
    assert_ptr_equal(tir_cast(a, x, TIR_I32, L), x);
    tir_expr *sel = tir_select(a, tir_int_typed(a, 0, TIR_BOOL, L), tir_int(a, 1, L), tir_int(a, 2, L), L);
    assert_int_equal(sel->u.ival, 2);
}

static void test_promotion(void **state) {
    (void)state;
    assert_int_equal(tir_promote(TIR_I32, TIR_I32), TIR_I32);
    assert_int_equal(tir_promote(TIR_I32, TIR_I64), TIR_I64);
    assert_int_equal(tir_promote(TIR_I8, TIR_I8), TIR_I32);
    assert_int_equal(tir_promote(TIR_F16, TIR_I32), TIR_F16);
    assert_int_equal(tir_promote(TIR_F16, TIR_F32), TIR_F32);
    assert_int_equal(tir_promote(TIR_F16, TIR_BF16), TIR_F32);
    assert_int_equal(tir_promote(TIR_BOOL, TIR_BOOL), TIR_I32);
    assert_int_equal(tir_promote(TIR_F8E4M3, TIR_BF16), TIR_BF16);
}

static void test_dtype_arch(void **state) {
    (void)state;
    tir_dtype t;
    assert_true(tir_dtype_parse("half", &t) && t == TIR_F16);
    assert_true(tir_dtype_parse("float", &t) && t == TIR_F32);
    assert_true(tir_dtype_parse("int", &t) && t == TIR_I32);
    assert_true(tir_dtype_parse("float8_e4m3", &t) && t == TIR_F8E4M3);
    assert_true(tir_dtype_parse("float8_e5m2", &t) && t == TIR_F8E5M2);
    assert_int_equal(tir_dtype_bytes(TIR_F8E5M2), 1);
    assert_int_equal(tir_promote(TIR_F8E4M3, TIR_F8E5M2), TIR_F32);
    assert_false(tir_dtype_parse("float64", &t));
    assert_string_equal(tir_dtype_name(TIR_BF16), "bfloat16");
    assert_int_equal(tir_dtype_bytes(TIR_I64), 8);
    assert_int_equal(tir_dtype_bytes(TIR_BOOL), 1);
    assert_true(tir_dtype_is_float(TIR_F8E4M3));
    assert_false(tir_dtype_is_float(TIR_I8));
    assert_string_equal(tir_binop_name(TB_FLOORDIV), "//");
    assert_string_equal(tir_unop_name(TU_RSQRT), "rsqrt");
    assert_string_equal(tir_policy_name(TIR_POLICY_FULLCOL), "FullCol");
    assert_string_equal(tir_reduce_name(TIR_REDUCE_ABSMAX), "absmax");
    assert_string_equal(tir_scope_name(TIR_SCOPE_FRAGMENT), "fragment");
}

static void test_regions(void **state) {
    tlc_arena *a = *state;
    tir_var m = {.name = "M", .kind = TV_SYM_DIM, .dtype = TIR_I32};
    tir_expr *shape[3] = {tir_var_ref(a, &m, L), tir_int(a, 64, L), tir_int(a, 32, L)};
    tir_buffer b = {.name = "A", .rank = 3, .shape = shape, .dtype = TIR_F16};
    assert_int_equal(tir_buffer_dim(&b, 0), -1);
    assert_int_equal(tir_buffer_dim(&b, 2), 32);
    assert_int_equal(tir_buffer_dim(&b, 3), -1);
    assert_int_equal(tir_buffer_elems(&b), -1);
    b.shape[0] = tir_int(a, 2, L);
    assert_int_equal(tir_buffer_elems(&b), 2 * 64 * 32);
    tir_expr *start[3] = {tir_int(a, 0, L), tir_int(a, 0, L), tir_int(a, 0, L)};
    tir_expr *ext[3] = {tir_int(a, 1, L), tir_int(a, 64, L), tir_int(a, 16, L)};
    tir_region r = {.buf = &b, .rank = 3, .start = start, .extent = ext};
    int64_t s[8];
    assert_int_equal(tir_region_shape(&r, s), 2);
    assert_int_equal(s[0], 64);
    assert_int_equal(s[1], 16);
    assert_int_equal(tir_region_elems(&r), 1024);
    ext[1] = tir_var_ref(a, &m, L);
    assert_int_equal(tir_region_shape(&r, s), -1);
    assert_int_equal(tir_region_elems(&r), -1);
}

static void test_const_difference(void **state) {
    tlc_arena *a = *state;
    tir_var bx = {.name = "bx", .kind = TV_BLOCK_IDX, .dtype = TIR_I32};
    tir_var k = {.name = "k", .kind = TV_LOOP, .dtype = TIR_I32};
    tir_expr *B = tir_var_ref(a, &bx, L);
    /* (bx + 1) * 64 - bx * 64 == 64 */
    tir_expr *hi = tir_binary(a, TB_MUL, tir_binary(a, TB_ADD, B, tir_int(a, 1, L), L), tir_int(a, 64, L), L);
    tir_expr *lo = tir_binary(a, TB_MUL, tir_var_ref(a, &bx, L), tir_int(a, 64, L), L);
    int64_t d = 0;
    assert_true(tir_const_difference(hi, lo, false, &d));
    assert_int_equal(d, 64);
    /* bx * 64 + k*32 + 32 - (bx*64 + k*32) */
    tir_expr *base = tir_binary(a, TB_ADD, lo, tir_binary(a, TB_MUL, tir_var_ref(a, &k, L), tir_int(a, 32, L), L), L);
    assert_true(tir_const_difference(tir_binary(a, TB_ADD, base, tir_int(a, 32, L), L), base, false, &d));
    assert_int_equal(d, 32);
    /* bx vs k: not constant */
    assert_false(tir_const_difference(tir_var_ref(a, &bx, L), tir_var_ref(a, &k, L), false, &d));
    /* lets with a definition: end - start == 64 only when they are seen through */
    tir_var start = {.name = "start", .kind = TV_LET, .dtype = TIR_I32, .assigned_once = true, .def = base};
    tir_var end = {.name = "end", .kind = TV_LET, .dtype = TIR_I32, .assigned_once = true,
                   .def = tir_binary(a, TB_ADD, tir_var_ref(a, &start, L), tir_int(a, 64, L), L)};
    assert_false(tir_const_difference(tir_var_ref(a, &end, L), tir_var_ref(a, &start, L), false, &d));
    assert_true(tir_const_difference(tir_var_ref(a, &end, L), tir_var_ref(a, &start, L), true, &d));
    assert_int_equal(d, 64);
    assert_true(tir_const_difference(tir_var_ref(a, &end, L), base, true, &d));
    assert_int_equal(d, 64);
    /* a chain of lets each twice the last: the expansion is bounded, not exponential */
    tir_var chain[40];
    tir_expr *prev = tir_var_ref(a, &k, L);
    for (int i = 0; i < 40; i++) {
        chain[i] = (tir_var){.name = "c", .kind = TV_LET, .dtype = TIR_I32, .assigned_once = true,
                             .def = tir_binary(a, TB_ADD, prev, prev, L)};
        prev = tir_var_ref(a, &chain[i], L);
    }
    assert_false(tir_const_difference(prev, tir_var_ref(a, &k, L), true, &d));
    /* structural equality */
    assert_true(tir_expr_equal(lo, tir_binary(a, TB_MUL, tir_var_ref(a, &bx, L), tir_int(a, 64, L), L)));
    assert_false(tir_expr_equal(lo, hi));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_int_folding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fold_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_identities, setup, teardown),
        cmocka_unit_test_setup_teardown(test_promotion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dtype_arch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_regions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_const_difference, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
