/* Deterministic pseudo-random tensor contents for `tlc run --random` and the
 * interpreter tests: the same seed gives the same bytes on every machine. */
#ifndef TLC_RANDOM_FILL_H
#define TLC_RANDOM_FILL_H
#include <stdint.h>
#include "ir/tir.h"

/* splitmix64 step: next 64 random bits. */
uint64_t tlc_rand_next(uint64_t *state);
/* Uniform in [0, 1). */
double tlc_rand_uniform(uint64_t *state);
/* Roughly normal(0, 1) (Irwin-Hall of 4 uniforms, rescaled), within +-3.47. */
double tlc_rand_normalish(uint64_t *state);
/* Fills n elements of dtype t: floats normal-ish (rounded to t), integers
 * uniform in [0, int_max], bool 0/1. */
void tlc_random_fill(void *data, tir_dtype t, int64_t n, uint64_t *state, int64_t int_max);
#endif
