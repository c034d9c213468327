/* The narrow float formats of include/tlc/runtime.h. One rounding, on
 * doubles, serves every entry point: a float converts to a double exactly,
 * so the f32 conversions round once too. */
#include <math.h>
#include <string.h>
#include "tlc/runtime.h"

typedef struct narrow_format {
    int mant, ebits, bias; /* explicit mantissa bits, exponent bits, exponent bias */
    uint32_t max_bits;     /* the largest finite value */
    bool saturate;         /* overflow gives +-max (e4m3) rather than +-inf */
    bool has_inf;          /* the all-ones exponent holds inf and NaN (e4m3: only all-ones is NaN) */
    uint32_t inf_bits, nan_bits;
} narrow_format;

static const narrow_format F16 = {10, 5, 15, 0x7bff, false, true, 0x7c00, 0x7e00};
static const narrow_format BF16 = {7, 8, 127, 0x7f7f, false, true, 0x7f80, 0x7fc0};
static const narrow_format E4M3 = {3, 4, 7, 0x7e, true, false, 0x7f, 0x7f};
static const narrow_format E5M2 = {2, 5, 15, 0x7b, true, true, 0x7c, 0x7e};

/* The bits of the value of f nearest to x (not NaN), ties to even, in
 * integer arithmetic on x's bits: exact, independent of the FPU's rounding
 * mode, and cheap enough for bulk conversion. */
static uint32_t encode(const narrow_format *f, double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t sign = (uint32_t)(u >> 63) << (f->mant + f->ebits);
    uint64_t a = u & 0x7fffffffffffffffull;
    uint32_t overflow = f->saturate ? f->max_bits : f->inf_bits;
    if (a >= 0x7ff0000000000000ull) return sign | overflow; /* +-inf */
    int dexp = (int)(a >> 52);
    if (dexp == 0) return sign; /* zero, or a double subnormal: below half of every format's smallest value */
    uint64_t m = (a & ((1ull << 52) - 1)) | (1ull << 52); /* x = m * 2^(e - 52) */
    int e = dexp - 1023, emin = 1 - f->bias;
    int q = (e < emin ? emin : e) - f->mant; /* the quantum's exponent: subnormals share emin's */
    int shift = q - (e - 52);                /* > 0: every format is narrower than a double */
    uint64_t n = 0;
    if (shift <= 54) {
        n = m >> shift;
        uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        if (rem > half || (rem == half && (n & 1))) n++;
    }
    if (n == 0) return sign;
    uint64_t lead = 1ull << f->mant;
    int ex = q + f->mant;
    if (n >= 2 * lead) { /* rounded up to the next power of two */
        n >>= 1;
        ex++;
    }
    uint64_t mag = n < lead ? n : ((uint64_t)(ex + f->bias) << f->mant) | (n - lead);
    return sign | (mag > f->max_bits ? overflow : (uint32_t)mag);
}

static double decode(const narrow_format *f, uint32_t bits) {
    uint32_t sign = (bits >> (f->mant + f->ebits)) & 1;
    uint32_t ex = (bits >> f->mant) & ((1u << f->ebits) - 1);
    uint32_t m = bits & ((1u << f->mant) - 1);
    uint32_t ex_ones = (1u << f->ebits) - 1, m_ones = (1u << f->mant) - 1;
    double v;
    if (ex == 0) v = ldexp((double)m, 1 - f->bias - f->mant);
    else if (f->has_inf && ex == ex_ones) v = m ? NAN : INFINITY;
    else if (!f->has_inf && ex == ex_ones && m == m_ones) v = NAN;
    else v = ldexp((double)(m | (1u << f->mant)), (int)ex - f->bias - f->mant);
    return sign ? -v : v;
}

/* x rounded to the nearest value of f (NaN as it is). */
static double round_to(const narrow_format *f, double x) { return isnan(x) ? x : decode(f, encode(f, x)); }

double tlrt_round_f16(double x) { return round_to(&F16, x); }
double tlrt_round_bf16(double x) { return round_to(&BF16, x); }
double tlrt_round_e4m3(double x) { return round_to(&E4M3, x); }
double tlrt_round_e5m2(double x) { return round_to(&E5M2, x); }

uint16_t tlrt_f64_to_f16(double x) { return (uint16_t)(isnan(x) ? F16.nan_bits : encode(&F16, x)); }
uint16_t tlrt_f64_to_bf16(double x) { return (uint16_t)(isnan(x) ? BF16.nan_bits : encode(&BF16, x)); }
uint8_t tlrt_f64_to_e4m3(double x) { return (uint8_t)(isnan(x) ? E4M3.nan_bits : encode(&E4M3, x)); }
uint8_t tlrt_f64_to_e5m2(double x) { return (uint8_t)(isnan(x) ? E5M2.nan_bits : encode(&E5M2, x)); }
double tlrt_f16_to_f64(uint16_t h) { return decode(&F16, h); }
double tlrt_bf16_to_f64(uint16_t h) { return decode(&BF16, h); }
double tlrt_e4m3_to_f64(uint8_t b) { return decode(&E4M3, b); }
double tlrt_e5m2_to_f64(uint8_t b) { return decode(&E5M2, b); }

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

uint16_t tlrt_f32_to_f16(float f) {
    if (isnan(f)) return (uint16_t)(((bits_of(f) >> 16) & 0x8000u) | 0x7e00u);
    return tlrt_f64_to_f16(f);
}

uint16_t tlrt_f32_to_bf16(float f) {
    if (isnan(f)) return (uint16_t)((bits_of(f) >> 16) | 0x40u); /* quiet NaN */
    return tlrt_f64_to_bf16(f);
}

uint8_t tlrt_f32_to_e4m3(float f) { return tlrt_f64_to_e4m3(f); }
uint8_t tlrt_f32_to_e5m2(float f) { return tlrt_f64_to_e5m2(f); }

float tlrt_f16_to_f32(uint16_t h) {
    if ((h & 0x7c00u) == 0x7c00u) /* inf or NaN: sign and payload move over bit by bit */
        return float_of(((uint32_t)(h & 0x8000u) << 16) | 0x7f800000u | ((uint32_t)(h & 0x3ffu) << 13));
    return (float)tlrt_f16_to_f64(h);
}

/* bf16 is the upper half of an f32. */
float tlrt_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

float tlrt_e4m3_to_f32(uint8_t b) { return (float)tlrt_e4m3_to_f64(b); }
float tlrt_e5m2_to_f32(uint8_t b) { return (float)tlrt_e5m2_to_f64(b); }
