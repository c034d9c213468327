/* Narrow float formats as the GPU stores them: fp16, bf16 and fp8 e4m3 (the
 * "fn" variant: no infinities, max 448) with round-to-nearest-even. Values are
 * carried as doubles; rounding first and encoding the rounded value second
 * means no double rounding when a double result is stored to a narrow type. */
#ifndef TLC_FLOAT_CONV_H
#define TLC_FLOAT_CONV_H
#include <stdint.h>
#include "ir/tir.h"

/* x rounded to the nearest value of dtype (ties to even). Floats: fp16 and
 * bf16 overflow to +-inf; fp8 e4m3 saturates to +-448 (cvt.rn.satfinite).
 * Integers: truncation toward zero, then wrap-around to the width (bool: != 0). */
double tlc_round_to_dtype(tir_dtype t, double x);

uint16_t tlc_f16_from_double(double x);
double tlc_f16_to_double(uint16_t bits);
uint16_t tlc_bf16_from_double(double x);
double tlc_bf16_to_double(uint16_t bits);
uint8_t tlc_fp8e4m3_from_double(double x);
double tlc_fp8e4m3_to_double(uint8_t bits);

/* Element i of a host array of dtype t, as a double (integers converted). */
double tlc_host_load_f(const void *data, tir_dtype t, int64_t i);
int64_t tlc_host_load_i(const void *data, tir_dtype t, int64_t i);
/* Stores (rounding / wrapping to t). */
void tlc_host_store_f(void *data, tir_dtype t, int64_t i, double v);
void tlc_host_store_i(void *data, tir_dtype t, int64_t i, int64_t v);
/* Float -> integer dtype as cvt.rzi.sat: truncate, saturate, NaN -> 0. */
int64_t tlc_float_to_int(tir_dtype t, double x);
/* Integer v wrapped to the width of integer dtype t (bool: 0/1). */
int64_t tlc_wrap_int(tir_dtype t, int64_t v);
#endif
