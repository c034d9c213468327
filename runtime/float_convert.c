/* float32 <-> float16 / bfloat16 / float8_e4m3 bit conversions for scalar
 * kernel params (round to nearest even, like the hardware's cvt.rn). */
#include <math.h>
#include <string.h>
#include "tlc/runtime.h"

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t tlrt_f32_to_bf16(float f) {
    uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float tlrt_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t tlrt_f32_to_f16(float f) {
    uint32_t u = bits_of(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;        /* NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u;       /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                             /* below 2^-14: subnormal or zero */
        if (a < 0x33000000u) return sign;              /* below half the smallest subnormal */
        uint32_t mant = (a & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(a >> 23); /* value / 2^-24 = mant * 2^(exp - 126) */
        uint32_t q = mant >> (shift), rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return sign | (uint16_t)q;
    }
    uint32_t r = a - 0x38000000u; /* rebias exponent 127 -> 15 */
    uint32_t q = r >> 13, rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
    return sign | (uint16_t)q;
}

float tlrt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return float_of(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    return float_of(sign | ((e + 112u) << 23) | (m << 13));
}

float tlrt_e4m3_to_f32(uint8_t b) {
    uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
    float v;
    if (e == 15 && m == 7) v = NAN;
    else if (e == 0) v = ldexpf((float)m, -9);
    else v = ldexpf((float)(m | 8u), (int)e - 10);
    return (b & 0x80u) ? -v : v;
}

uint8_t tlrt_f32_to_e4m3(float f) {
    /* e4m3 (OCP FP8, "fn"): bias 7, no infinities, 0x7f is NaN, max 448. Saturates. */
    uint8_t sign = (bits_of(f) >> 24) & 0x80u;
    if (isnan(f)) return 0x7fu;
    float a = fabsf(f);
    if (a >= 448.0f) return sign | 0x7eu;
    if (a < ldexpf(1.0f, -6)) { /* subnormal: multiples of 2^-9 */
        float q = rintf(a * 512.0f);
        return sign | (uint8_t)q;
    }
    int e;
    float fr = frexpf(a, &e);              /* a = fr * 2^e, fr in [0.5, 1) */
    float m = rintf((fr * 2.0f - 1.0f) * 8.0f); /* 3 mantissa bits, rounded to nearest even */
    int be = e - 1 + 7;
    if (m >= 8.0f) { m = 0.0f; be++; }
    if (be > 15 || (be == 15 && m > 6.0f)) return sign | 0x7eu;
    return sign | (uint8_t)((be << 3) | (int)m);
}
