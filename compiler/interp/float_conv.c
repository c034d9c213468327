#include "interp/float_conv.h"
#include <math.h>
#include <string.h>
#include "tlc/runtime.h"

/* Round |a| (finite, > 0) to a binary format with `mant` explicit mantissa
 * bits and minimum normal exponent `emin`: subnormals share emin's quantum. */
static double round_mag(double a, int mant, int emin) {
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): leading bit has exponent e-1 */
    int q = e - 1 < emin ? emin : e - 1;
    double quantum = ldexp(1.0, q - mant);
    return nearbyint(a / quantum) * quantum; /* default rounding mode: ties to even */
}

static double round_fmt(double x, int mant, int emin, double maxv, bool saturate) {
    if (isnan(x) || x == 0) return x;
    double a = fabs(x);
    double r = isinf(a) ? a : round_mag(a, mant, emin);
    if (r > maxv) r = saturate ? maxv : INFINITY;
    return x < 0 ? -r : r;
}

static const double F16_MAX = 65504.0;
#define BF16_MAX (ldexp(255.0, 120)) /* (2 - 2^-7) * 2^127 */
static const double FP8_MAX = 448.0;

int64_t tlc_wrap_int(tir_dtype t, int64_t v) {
    switch (t) {
    case TIR_I8: return (int8_t)(uint8_t)((uint64_t)v & 0xff);
    case TIR_I32: return (int32_t)(uint32_t)((uint64_t)v & 0xffffffffu);
    case TIR_BOOL: return v != 0;
    default: return v;
    }
}

/* Float -> integer as cvt.rzi.sat: truncate, saturate, NaN -> 0. */
int64_t tlc_float_to_int(tir_dtype t, double x) {
    if (t == TIR_BOOL) return x != 0;
    if (isnan(x)) return 0;
    double lo = t == TIR_I8 ? -128.0 : t == TIR_I32 ? -2147483648.0 : -9223372036854775808.0;
    double hi = t == TIR_I8 ? 127.0 : t == TIR_I32 ? 2147483647.0 : 9223372036854774784.0;
    x = trunc(x);
    if (x < lo) x = lo;
    if (x > hi) x = hi;
    return (int64_t)x;
}

double tlc_round_to_dtype(tir_dtype t, double x) {
    switch (t) {
    case TIR_F32: return (double)(float)x;
    case TIR_F16: return round_fmt(x, 10, -14, F16_MAX, false);
    case TIR_BF16: return round_fmt(x, 7, -126, BF16_MAX, false);
    case TIR_F8E4M3: return round_fmt(x, 3, -6, FP8_MAX, true);
    default: return (double)tlc_float_to_int(t, x);
    }
}

/* Bits of a value already rounded to the dtype: exact in float32, so the
 * runtime's float32 encoders (the one implementation of these formats)
 * add no second rounding. */
uint16_t tlc_f16_from_double(double x) { return tlrt_f32_to_f16((float)tlc_round_to_dtype(TIR_F16, x)); }
double tlc_f16_to_double(uint16_t b) { return tlrt_f16_to_f32(b); }
uint16_t tlc_bf16_from_double(double x) { return tlrt_f32_to_bf16((float)tlc_round_to_dtype(TIR_BF16, x)); }
double tlc_bf16_to_double(uint16_t b) { return tlrt_bf16_to_f32(b); }
uint8_t tlc_fp8e4m3_from_double(double x) { return tlrt_f32_to_e4m3((float)tlc_round_to_dtype(TIR_F8E4M3, x)); }
double tlc_fp8e4m3_to_double(uint8_t b) { return tlrt_e4m3_to_f32(b); }

double tlc_host_load_f(const void *data, tir_dtype t, int64_t i) {
    switch (t) {
    case TIR_F16: return tlc_f16_to_double(((const uint16_t *)data)[i]);
    case TIR_BF16: return tlc_bf16_to_double(((const uint16_t *)data)[i]);
    case TIR_F32: return ((const float *)data)[i];
    case TIR_F8E4M3: return tlc_fp8e4m3_to_double(((const uint8_t *)data)[i]);
    default: return (double)tlc_host_load_i(data, t, i);
    }
}

int64_t tlc_host_load_i(const void *data, tir_dtype t, int64_t i) {
    switch (t) {
    case TIR_I8: return ((const int8_t *)data)[i];
    case TIR_I32: return ((const int32_t *)data)[i];
    case TIR_I64: return ((const int64_t *)data)[i];
    case TIR_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: return tlc_float_to_int(TIR_I64, tlc_host_load_f(data, t, i));
    }
}

void tlc_host_store_f(void *data, tir_dtype t, int64_t i, double v) {
    switch (t) {
    case TIR_F16: ((uint16_t *)data)[i] = tlc_f16_from_double(v); break;
    case TIR_BF16: ((uint16_t *)data)[i] = tlc_bf16_from_double(v); break;
    case TIR_F32: ((float *)data)[i] = (float)v; break;
    case TIR_F8E4M3: ((uint8_t *)data)[i] = tlc_fp8e4m3_from_double(v); break;
    default: tlc_host_store_i(data, t, i, tlc_float_to_int(t, v)); break;
    }
}

void tlc_host_store_i(void *data, tir_dtype t, int64_t i, int64_t v) {
    switch (t) {
    case TIR_I8: ((int8_t *)data)[i] = (int8_t)tlc_wrap_int(t, v); break;
    case TIR_I32: ((int32_t *)data)[i] = (int32_t)tlc_wrap_int(t, v); break;
    case TIR_I64: ((int64_t *)data)[i] = v; break;
    case TIR_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: tlc_host_store_f(data, t, i, (double)v); break;
    }
}
