/* Host values of Tile IR dtypes for the interpreter, carried as doubles
 * (floats) or int64 (integers). The narrow float formats themselves (f16,
 * bf16, fp8 e4m3 and e5m2: rounding, encoding, decoding) are libtlrt's, declared in
 * include/tlc/runtime.h. */
#ifndef TLC_FLOAT_CONV_H
#define TLC_FLOAT_CONV_H
#include <stdint.h>
#include "ir/tir.h"
#include "tlc/runtime.h"

/* x rounded to the nearest value of dtype (ties to even). Floats: fp16 and
 * bf16 overflow to +-inf; fp8 e4m3 and e5m2 saturate to +-448 and +-57344 (cvt.rn.satfinite).
 * Integers: truncation toward zero, then wrap-around to the width (bool: != 0). */
double tlc_round_to_dtype(tir_dtype t, double x);

/* Element i of a host array of dtype t, as a double (integers converted). */
double tlc_host_load_f(const void *data, tir_dtype t, int64_t i);
int64_t tlc_host_load_i(const void *data, tir_dtype t, int64_t i);
/* Stores (rounding / wrapping to t). */
void tlc_host_store_f(void *data, tir_dtype t, int64_t i, double v);
void tlc_host_store_i(void *data, tir_dtype t, int64_t i, int64_t v);
/* Float -> integer dtype as cvt.rzi.sat: truncate, saturate, NaN -> 0. */
int64_t tlc_float_to_int(tir_dtype t, double x);
#endif
