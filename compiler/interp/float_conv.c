#include "interp/float_conv.h"
#include <math.h>
#include <string.h>

/* Float -> integer as cvt.rzi.sat: truncate, saturate, NaN -> 0. */
int64_t tlc_float_to_int(tir_dtype t, double x) {
    if (t == TIR_BOOL) return x != 0;
    if (isnan(x)) return 0;
    int64_t lo, hi;
    if (!tir_dtype_int_range(t, &lo, &hi)) return 0;
    x = trunc(x);
    if (x <= (double)lo) return lo;
    if (t == TIR_I64 ? x >= 9223372036854775808.0 : x >= (double)hi) return hi;
    return (int64_t)x;
}

double tlc_round_to_dtype(tir_dtype t, double x) {
    switch (t) {
    case TIR_F32: return (double)(float)x;
    case TIR_F16: return tlrt_round_f16(x);
    case TIR_BF16: return tlrt_round_bf16(x);
    case TIR_F8E4M3: return tlrt_round_e4m3(x);
    case TIR_F8E5M2: return tlrt_round_e5m2(x);
    default: return (double)tlc_float_to_int(t, x);
    }
}

double tlc_host_load_f(const void *data, tir_dtype t, int64_t i) {
    switch (t) {
    case TIR_F16: return tlrt_f16_to_f64(((const uint16_t *)data)[i]);
    case TIR_BF16: return tlrt_bf16_to_f64(((const uint16_t *)data)[i]);
    case TIR_F32: return ((const float *)data)[i];
    case TIR_F8E4M3: return tlrt_e4m3_to_f64(((const uint8_t *)data)[i]);
    case TIR_F8E5M2: return tlrt_e5m2_to_f64(((const uint8_t *)data)[i]);
    default: return (double)tlc_host_load_i(data, t, i);
    }
}

int64_t tlc_host_load_i(const void *data, tir_dtype t, int64_t i) {
    switch (t) {
    case TIR_I8: return ((const int8_t *)data)[i];
    case TIR_I16: return ((const int16_t *)data)[i];
    case TIR_U8: return ((const uint8_t *)data)[i];
    case TIR_U16: return ((const uint16_t *)data)[i];
    case TIR_U32: return ((const uint32_t *)data)[i];
    case TIR_I32: return ((const int32_t *)data)[i];
    case TIR_I64: return ((const int64_t *)data)[i];
    case TIR_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: return tlc_float_to_int(TIR_I64, tlc_host_load_f(data, t, i));
    }
}

void tlc_host_store_f(void *data, tir_dtype t, int64_t i, double v) {
    switch (t) {
    case TIR_F16: ((uint16_t *)data)[i] = tlrt_f64_to_f16(v); break;
    case TIR_BF16: ((uint16_t *)data)[i] = tlrt_f64_to_bf16(v); break;
    case TIR_F32: ((float *)data)[i] = (float)v; break;
    case TIR_F8E4M3: ((uint8_t *)data)[i] = tlrt_f64_to_e4m3(v); break;
    case TIR_F8E5M2: ((uint8_t *)data)[i] = tlrt_f64_to_e5m2(v); break;
    default: tlc_host_store_i(data, t, i, tlc_float_to_int(t, v)); break;
    }
}

void tlc_host_store_i(void *data, tir_dtype t, int64_t i, int64_t v) {
    switch (t) {
    case TIR_I8: ((int8_t *)data)[i] = (int8_t)tir_wrap_int(t, v); break;
    case TIR_I16: ((int16_t *)data)[i] = (int16_t)tir_wrap_int(t, v); break;
    case TIR_U8: ((uint8_t *)data)[i] = (uint8_t)tir_wrap_int(t, v); break;
    case TIR_U16: ((uint16_t *)data)[i] = (uint16_t)tir_wrap_int(t, v); break;
    case TIR_U32: ((uint32_t *)data)[i] = (uint32_t)tir_wrap_int(t, v); break;
    case TIR_I32: ((int32_t *)data)[i] = (int32_t)tir_wrap_int(t, v); break;
    case TIR_I64: ((int64_t *)data)[i] = v; break;
    case TIR_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: tlc_host_store_f(data, t, i, (double)v); break;
    }
}
