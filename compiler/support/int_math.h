/* Integer helpers used across the compiler. */
#ifndef TLC_SUPPORT_INT_MATH_H
#define TLC_SUPPORT_INT_MATH_H
#include <stdbool.h>
#include <stdint.h>

static inline bool tlc_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
/* x rounded up to a multiple of a (a > 0, x >= 0). */
static inline int64_t tlc_align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }
#endif
