/* Fragments and shared layouts (compiler/layout): blocked layouts are
 * bijections (with padding holes and replicas), forward / inverse round
 * trips, reduction fragments, the mma.sync m16n8k16 accumulator written in
 * digits, and the hardware swizzle pattern. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "layout/fragment.h"

/* Every (thread, slot) maps to a logical index; every element of the shape
 * is reached by exactly `replicate` (thread, slot) pairs, once per replica,
 * and forward() finds replica 0. */
static void check_bijection(const tlc_fragment *f) {
    char why[200];
    assert_true(tlc_fragment_is_valid(f, why, sizeof why));
    int64_t elems = 1;
    for (int d = 0; d < f->rank; d++) elems *= f->shape[d];
    int *seen = calloc((size_t)elems, sizeof(int));
    int64_t lg[TLC_FRAG_MAX_RANK];
    for (int64_t t = 0; t < f->threads; t++)
        for (int64_t s = 0; s < f->slots; s++) {
            int64_t rep;
            assert_true(tlc_fragment_inverse(f, t, s, lg, &rep));
            if (tlc_fragment_is_hole(f, lg)) continue;
            int64_t lin = 0;
            for (int d = 0; d < f->rank; d++) lin = lin * f->shape[d] + lg[d];
            seen[lin]++;
            assert_int_equal(tlc_fragment_slot_of(f, lg, t), s);
            if (rep == 0) {
                int64_t t0, s0;
                tlc_fragment_forward(f, lg, &t0, &s0);
                assert_int_equal(t0, t);
                assert_int_equal(s0, s);
            }
        }
    for (int64_t i = 0; i < elems; i++) assert_int_equal(seen[i], f->replicate);
    free(seen);
}

static void test_blocked_bijective(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    struct { int rank; int64_t shape[3]; int64_t threads; int vec; } cases[] = {
        {2, {4, 1024}, 128, 8}, {2, {4, 160}, 128, 8}, {2, {1, 4096}, 128, 8}, {2, {8, 96}, 256, 8},
        {1, {160}, 128, 8},     {2, {64, 64}, 128, 4}, {3, {2, 3, 40}, 96, 8},  {2, {3, 5}, 64, 1},
        {1, {1}, 32, 8},        {2, {16, 320}, 128, 8}, {2, {1, 8192}, 1024, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tlc_fragment *f = tlc_fragment_blocked(&a, cases[i].rank, cases[i].shape, cases[i].threads, cases[i].vec);
        assert_int_equal(f->threads, cases[i].threads);
        check_bijection(f);
    }
    tlc_arena_free(&a);
}

/* The placement rules the performance of row kernels depends on. */
static void test_blocked_placement(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    /* C=1024 f16, 4 rows, 128 threads: a warp per row, 4 vectors of 8 per lane */
    int64_t s1[2] = {4, 1024};
    tlc_fragment *f = tlc_fragment_blocked(&a, 2, s1, 128, 8);
    assert_int_equal(f->slots, 32);
    assert_int_equal(f->replicate, 1);
    assert_int_equal(tlc_fragment_vector_len(f), 8);
    int64_t lg[2] = {2, 0}, t, s;
    tlc_fragment_forward(f, lg, &t, &s);
    assert_int_equal(t / 32, 2); /* row 2 lives in warp 2 */
    /* C=160: 20 vectors per row padded to 32 lanes, rows on warps */
    int64_t s2[2] = {4, 160};
    f = tlc_fragment_blocked(&a, 2, s2, 128, 8);
    assert_true(tlc_fragment_has_padding(f));
    assert_int_equal(f->slots, 8);
    lg[0] = 1;
    lg[1] = 152;
    tlc_fragment_forward(f, lg, &t, &s);
    assert_int_equal(t, 32 + 19);
    /* C=4096, one row: warps go along the row */
    int64_t s3[2] = {1, 4096};
    f = tlc_fragment_blocked(&a, 2, s3, 128, 8);
    assert_int_equal(f->slots, 32);
    assert_int_equal(f->replicate, 1);
    /* 1 row of 160 on 128 threads: 3 warps of replicas */
    int64_t s4[2] = {1, 160};
    f = tlc_fragment_blocked(&a, 2, s4, 128, 8);
    assert_int_equal(f->replicate, 4);
    tlc_arena_free(&a);
}

static void test_reduce(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    int64_t shape[2] = {4, 1024};
    tlc_fragment *f = tlc_fragment_blocked(&a, 2, shape, 128, 8);
    tlc_fragment *r = tlc_fragment_reduce(&a, f, 1);
    assert_int_equal(r->rank, 1);
    assert_int_equal(r->shape[0], 4);
    assert_int_equal(r->slots, 1);
    assert_int_equal(r->replicate, 32);
    check_bijection(r);
    /* every lane of warp w holds row w */
    int64_t lg[1] = {3};
    for (int64_t t = 96; t < 128; t++) assert_int_equal(tlc_fragment_slot_of(r, lg, t), 0);
    assert_int_equal(tlc_fragment_slot_of(r, lg, 0), -1);
    /* reducing dim 0 instead: rows are on warps -> replicated over warps */
    tlc_fragment *r0 = tlc_fragment_reduce(&a, f, 0);
    assert_int_equal(r0->shape[0], 1024);
    assert_int_equal(r0->replicate, 4);
    check_bijection(r0);
    tlc_fragment *again = tlc_fragment_reduce(&a, f, 1);
    assert_true(tlc_fragment_equal(r, again));
    assert_false(tlc_fragment_equal(r, r0));
    tlc_arena_free(&a);
}

/* mma.sync.m16n8k16 f32 accumulator (PTX ISA "Matrix Fragments for
 * mma.m16n8k16"): groupID = lane >> 2, tig = lane % 4;
 * c0,c1: row groupID, cols tig*2 + {0,1}; c2,c3: row groupID + 8. */
static void test_mma_accumulator(void **state) {
    (void)state;
    tlc_fragment f = {0};
    f.rank = 2;
    f.shape[0] = 16;
    f.shape[1] = 8;
    f.digits[f.ndigits++] = (tlc_digit){1, 2, 1, TLC_DIGIT_SLOT, 1};   /* col bit 0: c0/c1 */
    f.digits[f.ndigits++] = (tlc_digit){1, 4, 2, TLC_DIGIT_THREAD, 1}; /* col: tig */
    f.digits[f.ndigits++] = (tlc_digit){0, 8, 1, TLC_DIGIT_THREAD, 4}; /* row: groupID */
    f.digits[f.ndigits++] = (tlc_digit){0, 2, 8, TLC_DIGIT_SLOT, 2};   /* row + 8: c2/c3 */
    tlc_fragment_canonicalize(&f);
    assert_int_equal(f.threads, 32);
    assert_int_equal(f.slots, 4);
    check_bijection(&f);
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 4; i++) {
            int64_t lg[2];
            assert_true(tlc_fragment_inverse(&f, lane, i, lg, NULL));
            assert_int_equal(lg[0], (lane >> 2) + (i >= 2 ? 8 : 0));
            assert_int_equal(lg[1], (lane % 4) * 2 + (i & 1));
        }
    /* a reduction over the columns (row max of a score tile) is a quad shuffle */
    tlc_arena a;
    tlc_arena_init(&a);
    tlc_fragment *r = tlc_fragment_reduce(&a, &f, 1);
    assert_int_equal(r->replicate, 4);
    assert_int_equal(r->slots, 2);
    check_bijection(r);
    tlc_arena_free(&a);
}

static void test_invalid(void **state) {
    (void)state;
    tlc_fragment f = {0};
    f.rank = 1;
    f.shape[0] = 8;
    f.digits[f.ndigits++] = (tlc_digit){0, 4, 1, TLC_DIGIT_THREAD, 1};
    tlc_fragment_canonicalize(&f);
    char why[200];
    assert_false(tlc_fragment_is_valid(&f, why, sizeof why)); /* covers 4 of 8 */
    assert_non_null(strstr(why, "cover"));
    f.digits[f.ndigits++] = (tlc_digit){0, 2, 4, TLC_DIGIT_THREAD, 2}; /* overlaps the first digit's bits */
    tlc_fragment_canonicalize(&f);
    assert_false(tlc_fragment_is_valid(&f, why, sizeof why));
}

static void test_shared_layouts(void **state) {
    (void)state;
    tlc_arena a;
    tlc_arena_init(&a);
    int64_t shape[2] = {64, 64};
    tlc_layout *rm = tlc_layout_row_major(&a, 2, shape, 2);
    int64_t lg[2] = {3, 5};
    assert_int_equal(tlc_layout_offset(rm, lg), 3 * 64 + 5);
    assert_int_equal(rm->bytes, 64 * 64 * 2);
    tlc_layout *sw = tlc_layout_swizzled(&a, 2, shape, 2, TLC_SWIZZLE_128B);
    assert_int_equal(sw->swizzle, TLC_SWIZZLE_128B);
    /* a permutation of each 8-row x 128-byte atom, 16-byte chunks kept whole */
    char *hit = calloc(64 * 64, 1);
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 64; c++) {
            int64_t x[2] = {r, c};
            int64_t o = tlc_layout_offset(sw, x);
            assert_true(o >= 0 && o < 64 * 64);
            assert_int_equal(o / 64, r); /* stays in its row */
            hit[o]++;
            if (c % 8) {
                int64_t p[2] = {r, c - 1};
                assert_int_equal(tlc_layout_offset(sw, p) + 1, o);
            }
        }
    for (int i = 0; i < 64 * 64; i++) assert_int_equal(hit[i], 1);
    free(hit);
    /* row 1 (bytes 128..255): chunk 0 goes to chunk 1 */
    int64_t x[2] = {1, 0};
    assert_int_equal(tlc_layout_offset(sw, x), 64 + 8);
    /* rows too narrow for 128B fall back to a mode that fits */
    int64_t narrow[2] = {64, 16};
    assert_int_equal(tlc_layout_swizzled(&a, 2, narrow, 2, TLC_SWIZZLE_128B)->swizzle, TLC_SWIZZLE_32B);
    tlc_arena_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocked_bijective), cmocka_unit_test(test_blocked_placement),
        cmocka_unit_test(test_reduce),            cmocka_unit_test(test_mma_accumulator),
        cmocka_unit_test(test_invalid),           cmocka_unit_test(test_shared_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
