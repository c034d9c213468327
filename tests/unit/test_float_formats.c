/* The narrow float formats of libtlrt (include/tlc/runtime.h), which the
 * runtime's scalar parameters and the Tile IR interpreter share: every f16,
 * bf16 and e4m3 bit pattern round-trips, and doubles and floats convert to
 * the bits the conversions gave when the runtime and the interpreter each
 * had their own (the table and the two hashes were taken from those). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "tlc/runtime.h"

static uint64_t bits64(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static uint32_t bits32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static bool f16_is_nan(unsigned h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
static bool bf16_is_nan(unsigned h) { return (h & 0x7f80) == 0x7f80 && (h & 0x7f); }

static void round_trips(void **state) {
    (void)state;
    for (unsigned h = 0; h < 0x10000; h++) {
        uint16_t b = (uint16_t)h;
        /* from doubles: a NaN comes back as the canonical one */
        assert_int_equal(tlrt_f64_to_f16(tlrt_f16_to_f64(b)), f16_is_nan(h) ? 0x7e00 : h);
        assert_int_equal(tlrt_f64_to_bf16(tlrt_bf16_to_f64(b)), bf16_is_nan(h) ? 0x7fc0 : h);
        /* through f32: a NaN keeps its sign (bf16: and payload, made quiet) */
        assert_int_equal(tlrt_f32_to_f16(tlrt_f16_to_f32(b)), f16_is_nan(h) ? (h & 0x8000) | 0x7e00 : h);
        assert_int_equal(tlrt_f32_to_bf16(tlrt_bf16_to_f32(b)), bf16_is_nan(h) ? h | 0x40 : h);
        assert_int_equal(bits32(tlrt_bf16_to_f32(b)), h << 16);
        if (!f16_is_nan(h)) {
            assert_true(bits64(tlrt_f16_to_f64(b)) == bits64((double)tlrt_f16_to_f32(b)));
            assert_true(bits64(tlrt_round_f16(tlrt_f16_to_f64(b))) == bits64(tlrt_f16_to_f64(b)));
        }
        if (!bf16_is_nan(h)) assert_true(bits64(tlrt_round_bf16(tlrt_bf16_to_f64(b))) == bits64(tlrt_bf16_to_f64(b)));
    }
    for (unsigned h = 0; h < 0x100; h++) {
        bool nan = (h & 0x7f) == 0x7f;
        assert_int_equal(tlrt_f64_to_e4m3(tlrt_e4m3_to_f64((uint8_t)h)), nan ? 0x7f : h);
        assert_int_equal(tlrt_f32_to_e4m3(tlrt_e4m3_to_f32((uint8_t)h)), nan ? 0x7f : h);
        assert_int_equal(isnan(tlrt_e4m3_to_f64((uint8_t)h)), nan);
    }
}

/* e5m2 is the upper byte of an f16: its values are the f16's of that byte
 * shifted up; rounding to it is to nearest, ties to even, saturating at
 * +-57344 (inf included: cvt.rn.satfinite); NaN becomes 0x7e. */
static void e5m2(void **state) {
    (void)state;
    for (unsigned h = 0; h < 0x100; h++) {
        bool nan = (h & 0x7f) > 0x7c, inf = (h & 0x7f) == 0x7c;
        double v = tlrt_e5m2_to_f64((uint8_t)h);
        assert_int_equal(isnan(v), nan);
        if (!nan) assert_true(bits64(v) == bits64(tlrt_f16_to_f64((uint16_t)(h << 8))));
        unsigned back = nan ? 0x7e : inf ? (h & 0x80) | 0x7b : h;
        assert_int_equal(tlrt_f64_to_e5m2(v), back);
        assert_int_equal(tlrt_f32_to_e5m2(tlrt_e5m2_to_f32((uint8_t)h)), back);
    }
    assert_int_equal(tlrt_f64_to_e5m2(1.0), 0x3c);
    assert_int_equal(tlrt_f64_to_e5m2(1.125), 0x3c);  /* a tie: to the even 1.0 */
    assert_int_equal(tlrt_f64_to_e5m2(1.375), 0x3e);  /* a tie: to the even 1.5 */
    assert_int_equal(tlrt_f64_to_e5m2(-57344.0), 0xfb);
    assert_int_equal(tlrt_f64_to_e5m2(1e6), 0x7b);
    assert_int_equal(tlrt_f64_to_e5m2(-INFINITY), 0xfb);
    assert_int_equal(tlrt_f64_to_e5m2(ldexp(1.0, -16)), 0x01); /* the smallest subnormal */
    assert_int_equal(tlrt_f64_to_e5m2(ldexp(1.0, -18)), 0x00); /* below half of it */
    assert_true(tlrt_round_e5m2(3.3) == 3.5);
}

/* f16, bf16, e4m3 bits and the three rounded doubles of x. */
typedef struct conversion {
    double x;
    uint16_t f16, bf16;
    uint8_t e4m3;
    uint64_t round_f16, round_bf16, round_e4m3;
} conversion;

static const conversion conversions[] = {
    {0x0p+0,                 0x0000, 0x0000, 0x00, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000},
    {-0x0p+0,                0x8000, 0x8000, 0x80, 0x8000000000000000, 0x8000000000000000, 0x8000000000000000},
    {0x1p+0,                 0x3c00, 0x3f80, 0x38, 0x3ff0000000000000, 0x3ff0000000000000, 0x3ff0000000000000},
    {-0x1p+1,                0xc000, 0xc000, 0xc0, 0xc000000000000000, 0xc000000000000000, 0xc000000000000000},
    {0x1.999999999999ap-4,   0x2e66, 0x3dcd, 0x1d, 0x3fb9980000000000, 0x3fb9a00000000000, 0x3fba000000000000},
    {-0x1.999999999999ap-4,  0xae66, 0xbdcd, 0x9d, 0xbfb9980000000000, 0xbfb9a00000000000, 0xbfba000000000000},
    {0x1.5555555555555p-2,   0x3555, 0x3eab, 0x2b, 0x3fd5540000000000, 0x3fd5600000000000, 0x3fd6000000000000},
    {0x1.ffcp+15,            0x7bff, 0x4780, 0x7e, 0x40effc0000000000, 0x40f0000000000000, 0x407c000000000000},
    {0x1.ffdep+15,           0x7bff, 0x4780, 0x7e, 0x40effc0000000000, 0x40f0000000000000, 0x407c000000000000},
    {0x1.ffdfff7ced917p+15,  0x7bff, 0x4780, 0x7e, 0x40effc0000000000, 0x40f0000000000000, 0x407c000000000000},
    {0x1.ffep+15,            0x7c00, 0x4780, 0x7e, 0x7ff0000000000000, 0x40f0000000000000, 0x407c000000000000},
    {-0x1.ffep+15,           0xfc00, 0xc780, 0xfe, 0xfff0000000000000, 0xc0f0000000000000, 0xc07c000000000000},
    {0x1.86ap+16,            0x7c00, 0x47c3, 0x7e, 0x7ff0000000000000, 0x40f8600000000000, 0x407c000000000000},
    {0x1p-14,                0x0400, 0x3880, 0x00, 0x3f10000000000000, 0x3f10000000000000, 0x0000000000000000},
    {0x1p-24,                0x0001, 0x3380, 0x00, 0x3e70000000000000, 0x3e70000000000000, 0x0000000000000000},
    {0x1p-25,                0x0000, 0x3300, 0x00, 0x0000000000000000, 0x3e60000000000000, 0x0000000000000000},
    {0x1.0000000000001p-25,  0x0001, 0x3300, 0x00, 0x3e70000000000000, 0x3e60000000000000, 0x0000000000000000},
    {0x1.8p-25,              0x0001, 0x3340, 0x00, 0x3e70000000000000, 0x3e68000000000000, 0x0000000000000000},
    {0x1.002p+0,             0x3c00, 0x3f80, 0x38, 0x3ff0000000000000, 0x3ff0000000000000, 0x3ff0000000000000},
    {0x1.006p+0,             0x3c02, 0x3f80, 0x38, 0x3ff0080000000000, 0x3ff0000000000000, 0x3ff0000000000000},
    {0x1.0020000000001p+0,   0x3c01, 0x3f80, 0x38, 0x3ff0040000000000, 0x3ff0000000000000, 0x3ff0000000000000},
    {0x1.01p+0,              0x3c04, 0x3f80, 0x38, 0x3ff0100000000000, 0x3ff0000000000000, 0x3ff0000000000000},
    {0x1.03p+0,              0x3c0c, 0x3f82, 0x38, 0x3ff0300000000000, 0x3ff0400000000000, 0x3ff0000000000000},
    {-0x1.c363cbf21f28ap+127, 0xfc00, 0xff62, 0xfe, 0xfff0000000000000, 0xc7ec400000000000, 0xc07c000000000000},
    {0x1.fep+127,            0x7c00, 0x7f7f, 0x7e, 0x7ff0000000000000, 0x47efe00000000000, 0x407c000000000000},
    {0x1.ff933c78cdfadp+127, 0x7c00, 0x7f80, 0x7e, 0x7ff0000000000000, 0x7ff0000000000000, 0x407c000000000000},
    {0x1.78287f49c4a1dp+129, 0x7c00, 0x7f80, 0x7e, 0x7ff0000000000000, 0x7ff0000000000000, 0x407c000000000000},
    {0x1p-126,               0x0000, 0x0080, 0x00, 0x0000000000000000, 0x3810000000000000, 0x0000000000000000},
    {0x1p-133,               0x0000, 0x0001, 0x00, 0x0000000000000000, 0x37a0000000000000, 0x0000000000000000},
    {0x1p-134,               0x0000, 0x0000, 0x00, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000},
    {0x1.8p-134,             0x0000, 0x0001, 0x00, 0x0000000000000000, 0x37a0000000000000, 0x0000000000000000},
    {0x1.56e1fc2f8f359p-997, 0x0000, 0x0000, 0x00, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000},
    {0x1.fffffffffffffp+1023, 0x7c00, 0x7f80, 0x7e, 0x7ff0000000000000, 0x7ff0000000000000, 0x407c000000000000},
    {-0x1p-1022,             0x8000, 0x8000, 0x80, 0x8000000000000000, 0x8000000000000000, 0x8000000000000000},
    {0x0.0000000000001p-1022, 0x0000, 0x0000, 0x00, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000},
    {0x1.cp+8,               0x5f00, 0x43e0, 0x7e, 0x407c000000000000, 0x407c000000000000, 0x407c000000000000},
    {0x1.dp+8,               0x5f40, 0x43e8, 0x7e, 0x407d000000000000, 0x407d000000000000, 0x407c000000000000},
    {0x1.cffffffffffffp+8,   0x5f40, 0x43e8, 0x7e, 0x407d000000000000, 0x407d000000000000, 0x407c000000000000},
    {0x1.ep+8,               0x5f80, 0x43f0, 0x7e, 0x407e000000000000, 0x407e000000000000, 0x407c000000000000},
    {0x1.f4p+9,              0x63d0, 0x447a, 0x7e, 0x408f400000000000, 0x408f400000000000, 0x407c000000000000},
    {-0x1.f4p+9,             0xe3d0, 0xc47a, 0xfe, 0xc08f400000000000, 0xc08f400000000000, 0xc07c000000000000},
    {0x1p-6,                 0x2400, 0x3c80, 0x08, 0x3f90000000000000, 0x3f90000000000000, 0x3f90000000000000},
    {0x1p-9,                 0x1800, 0x3b00, 0x01, 0x3f60000000000000, 0x3f60000000000000, 0x3f60000000000000},
    {0x1p-10,                0x1400, 0x3a80, 0x00, 0x3f50000000000000, 0x3f50000000000000, 0x0000000000000000},
    {0x1.8p-10,              0x1600, 0x3ac0, 0x01, 0x3f58000000000000, 0x3f58000000000000, 0x3f60000000000000},
    {0x1.fffffffffffffp-7,   0x2400, 0x3c80, 0x08, 0x3f90000000000000, 0x3f90000000000000, 0x3f90000000000000},
    {0x1.8p-7,               0x2200, 0x3c40, 0x06, 0x3f88000000000000, 0x3f88000000000000, 0x3f88000000000000},
    {INFINITY,               0x7c00, 0x7f80, 0x7e, 0x7ff0000000000000, 0x7ff0000000000000, 0x407c000000000000},
    {-INFINITY,              0xfc00, 0xff80, 0xfe, 0xfff0000000000000, 0xfff0000000000000, 0xc07c000000000000},
    {NAN,                    0x7e00, 0x7fc0, 0x7f, 0x7ff8000000000000, 0x7ff8000000000000, 0x7ff8000000000000},
    {-NAN,                   0x7e00, 0x7fc0, 0x7f, 0xfff8000000000000, 0xfff8000000000000, 0xfff8000000000000},
    {0x1.921fb54442d11p+1,   0x4248, 0x4049, 0x45, 0x4009200000000000, 0x4009200000000000, 0x400a000000000000},
    {-0x1.5bf0a8b145769p+1,  0xc170, 0xc02e, 0xc3, 0xc005c00000000000, 0xc005c00000000000, 0xc006000000000000},
    {0x1.e240c9fbe76c9p+16,  0x7c00, 0x47f1, 0x7e, 0x7ff0000000000000, 0x40fe200000000000, 0x407c000000000000},
    {0x1.01f31f46ed246p-13,  0x0808, 0x3901, 0x00, 0x3f20200000000000, 0x3f20200000000000, 0x0000000000000000},
};

static void doubles_as_before(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof conversions / sizeof conversions[0]; i++) {
        const conversion *c = &conversions[i];
        conversion got = {c->x, tlrt_f64_to_f16(c->x), tlrt_f64_to_bf16(c->x), tlrt_f64_to_e4m3(c->x),
                          bits64(tlrt_round_f16(c->x)), bits64(tlrt_round_bf16(c->x)), bits64(tlrt_round_e4m3(c->x))};
        bool same = got.f16 == c->f16 && got.bf16 == c->bf16 && got.e4m3 == c->e4m3 &&
                    got.round_f16 == c->round_f16 && got.round_bf16 == c->round_bf16 && got.round_e4m3 == c->round_e4m3;
        if (!same)
            print_message("%a: got %04x %04x %02x %016llx %016llx %016llx\n", c->x, got.f16, got.bf16, got.e4m3,
                          (unsigned long long)got.round_f16, (unsigned long long)got.round_bf16,
                          (unsigned long long)got.round_e4m3);
        assert_true(same);
    }
}

static uint64_t fnv(uint64_t h, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A million doubles: half any bit pattern (NaN payloads, subnormals, huge),
 * half of magnitude 2^-93 .. 2^6 with full mantissas (every rounding case). */
static void many_doubles_as_before(void **state) {
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ULL, h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 1000000; i++) {
        uint64_t r = xorshift(&s);
        double d;
        memcpy(&d, &r, 8);
        if (i & 1) d = ldexp((double)(r >> 11), -53 - 40 + (int)(r % 60)) * ((r >> 5) & 1 ? -1 : 1);
        h = fnv(h, tlrt_f64_to_f16(d), 2);
        h = fnv(h, tlrt_f64_to_bf16(d), 2);
        h = fnv(h, tlrt_f64_to_e4m3(d), 1);
    }
    assert_true(h == 0xc343691fe419f961ULL);
}

/* Every 1009th float bit pattern, through the scalar-parameter conversions. */
static void floats_as_before(void **state) {
    (void)state;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 1009) {
        float f = float_of((uint32_t)u);
        h = fnv(h, tlrt_f32_to_f16(f), 2);
        h = fnv(h, tlrt_f32_to_bf16(f), 2);
        h = fnv(h, tlrt_f32_to_e4m3(f), 1);
    }
    assert_true(h == 0xdcfe6273033aba79ULL);
    assert_int_equal(tlrt_f32_to_f16(float_of(0xffc00001u)), 0xfe00);
    assert_int_equal(tlrt_f32_to_bf16(float_of(0xff812345u)), 0xffc1);
    assert_int_equal(bits32(tlrt_f16_to_f32(0xfd01)), 0xffa02000u); /* signalling NaN stays one */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trips),
        cmocka_unit_test(e5m2),
        cmocka_unit_test(doubles_as_before),
        cmocka_unit_test(many_doubles_as_before),
        cmocka_unit_test(floats_as_before),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
