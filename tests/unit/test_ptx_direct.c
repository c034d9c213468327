/* tlc's own PTX generator (codegen/ptx_direct*.c): the multipliers its
 * divisions by constants use, checked on the host by computing the
 * quotient the way the emitted instruction sequence does (mul.hi, shifts,
 * adds on 32-bit words) against C's division, over small divisors, large
 * ones, and the edge dividends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "codegen/ptx_direct_internal.h"

static uint32_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* The sequence udiv_const emits. */
static uint32_t udiv_emulated(uint32_t x, uint32_t m, int l) {
    uint32_t t = (uint32_t)(((uint64_t)x * m) >> 32);
    uint32_t u = x - t, w = u >> 1, y = t + w;
    return y >> (l - 1);
}

/* The sequence sdiv_const emits (not a power of two). */
static int32_t sdiv_emulated(int32_t x, int32_t m, int sh) {
    int32_t t = (int32_t)(((int64_t)x * m) >> 32);
    if (m < 0) t = (int32_t)((uint32_t)t + (uint32_t)x);
    if (sh > 0) t >>= sh;
    return (int32_t)((uint32_t)t + ((uint32_t)x >> 31));
}

static void check_divisor(uint32_t d, uint64_t *seed) {
    uint32_t m;
    int l;
    int32_t sm;
    int ss;
    pd_udiv_magic(d, &m, &l);
    bool signed_too = d <= (uint32_t)INT32_MAX;
    if (signed_too) pd_sdiv_magic((int32_t)d, &sm, &ss);
    uint32_t edges[] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, UINT32_MAX, UINT32_MAX - 1, 0x80000000u, 0x7fffffffu};
    for (int i = 0; i < 11 + 200; i++) {
        uint32_t x = i < 11 ? edges[i] : lcg(seed) ^ (lcg(seed) << 16);
        if (udiv_emulated(x, m, l) != x / d) fail_msg("unsigned %u / %u", x, d);
        if (signed_too && (d & (d - 1)) != 0) {
            int32_t sx = (int32_t)x;
            if (sdiv_emulated(sx, sm, ss) != sx / (int32_t)d) fail_msg("signed %d / %u", sx, d);
        }
    }
}

static void test_division_by_constants(void **state) {
    (void)state;
    uint64_t seed = 12345;
    for (uint32_t d = 3; d < 3000; d++)
        if (d & (d - 1)) check_divisor(d, &seed);
    for (int i = 0; i < 2000; i++) {
        uint32_t d = lcg(&seed) | 3u;
        check_divisor(d, &seed);
    }
    check_divisor(0x7fffffffu, &seed);
    check_divisor(0xffffffffu, &seed);
    check_divisor(0x80000001u, &seed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_division_by_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
