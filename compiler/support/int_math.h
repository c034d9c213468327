/* Integer helpers used across the compiler. */
#ifndef TLC_SUPPORT_INT_MATH_H
#define TLC_SUPPORT_INT_MATH_H
#include <stdbool.h>
#include <stdint.h>

static inline bool tlc_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
/* x rounded up to a multiple of a (a > 0, x >= 0). */
static inline int64_t tlc_align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }
/* Greatest common divisor of |a| and |b| (0 when both are 0), saturated at
 * INT64_MAX (|INT64_MIN|). */
static inline int64_t tlc_gcd(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x > INT64_MAX ? INT64_MAX : (int64_t)x;
}
#endif
