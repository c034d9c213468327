/* The narrow float formats of include/tlc/runtime.h. One rounding, on
 * doubles, serves every entry point: a float converts to a double exactly,
 * so the f32 conversions round once too. */
#include <math.h>
#include <string.h>
#include "tlc/runtime.h"

typedef struct narrow_format {
    int mant, ebits, bias; /* explicit mantissa bits, exponent bits, exponent bias */
    double max;            /* largest finite value */
    bool saturate;         /* overflow gives +-max (e4m3) rather than +-inf */
    bool has_inf;          /* the all-ones exponent holds inf and NaN (e4m3: only all-ones is NaN) */
    uint32_t inf_bits, nan_bits;
} narrow_format;

static const narrow_format F16 = {10, 5, 15, 65504.0, false, true, 0x7c00, 0x7e00};
static const narrow_format BF16 = {7, 8, 127, 0x1.fep127, false, true, 0x7f80, 0x7fc0};
static const narrow_format E4M3 = {3, 4, 7, 448.0, true, false, 0x7f, 0x7f};

/* v >= 0 rounded to an integer, ties to even. floor is exact, so this does
 * not depend on the FPU's rounding mode as nearbyint would. */
static double round_half_even(double v) {
    double r = floor(v), frac = v - r;
    if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0)) r += 1;
    return r;
}

/* x rounded to the nearest value of f (NaN and zeros as they are). */
static double round_to(const narrow_format *f, double x) {
    if (isnan(x) || x == 0) return x;
    double a = fabs(x), r = a;
    if (!isinf(a)) {
        int e;
        frexp(a, &e); /* a = m * 2^e, m in [0.5, 1): the leading bit has exponent e - 1 */
        int emin = 1 - f->bias, q = e - 1 < emin ? emin : e - 1; /* subnormals share emin's quantum */
        double quantum = ldexp(1.0, q - f->mant);
        r = round_half_even(a / quantum) * quantum;
    }
    if (r > f->max) r = f->saturate ? f->max : INFINITY;
    return x < 0 ? -r : r;
}

/* The bits of r, a value of f (already rounded); NaN: f's canonical NaN. */
static uint32_t encode(const narrow_format *f, double r) {
    if (isnan(r)) return f->nan_bits;
    uint32_t sign = signbit(r) ? 1u << (f->mant + f->ebits) : 0;
    double a = fabs(r);
    if (isinf(a)) return sign | f->inf_bits;
    if (a == 0) return sign;
    int e;
    frexp(a, &e);
    int ex = e - 1 + f->bias;
    if (ex <= 0) /* subnormal: a = m * 2^(1 - bias - mant) */
        return sign | (uint32_t)ldexp(a, f->mant - 1 + f->bias);
    uint32_t m = (uint32_t)(ldexp(a, f->mant - (e - 1)) - ldexp(1.0, f->mant));
    return sign | ((uint32_t)ex << f->mant) | m;
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

double tlrt_round_f16(double x) { return round_to(&F16, x); }
double tlrt_round_bf16(double x) { return round_to(&BF16, x); }
double tlrt_round_e4m3(double x) { return round_to(&E4M3, x); }

uint16_t tlrt_f64_to_f16(double x) { return (uint16_t)encode(&F16, round_to(&F16, x)); }
uint16_t tlrt_f64_to_bf16(double x) { return (uint16_t)encode(&BF16, round_to(&BF16, x)); }
uint8_t tlrt_f64_to_e4m3(double x) { return (uint8_t)encode(&E4M3, round_to(&E4M3, x)); }
double tlrt_f16_to_f64(uint16_t h) { return decode(&F16, h); }
double tlrt_bf16_to_f64(uint16_t h) { return decode(&BF16, h); }
double tlrt_e4m3_to_f64(uint8_t b) { return decode(&E4M3, b); }

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

float tlrt_f16_to_f32(uint16_t h) {
    if ((h & 0x7c00u) == 0x7c00u) /* inf or NaN: sign and payload move over bit by bit */
        return float_of(((uint32_t)(h & 0x8000u) << 16) | 0x7f800000u | ((uint32_t)(h & 0x3ffu) << 13));
    return (float)tlrt_f16_to_f64(h);
}

/* bf16 is the upper half of an f32. */
float tlrt_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

float tlrt_e4m3_to_f32(uint8_t b) { return (float)tlrt_e4m3_to_f64(b); }
