#include "interp/random_fill.h"
#include "interp/float_conv.h"

uint64_t tlc_rand_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double tlc_rand_uniform(uint64_t *s) { return (double)(tlc_rand_next(s) >> 11) * 0x1.0p-53; }

double tlc_rand_normalish(uint64_t *s) {
    double u = tlc_rand_uniform(s) + tlc_rand_uniform(s) + tlc_rand_uniform(s) + tlc_rand_uniform(s);
    return (u - 2.0) * 1.7320508075688772; /* variance 4/12 -> 1 */
}

void tlc_random_fill(void *data, tir_dtype t, int64_t n, uint64_t *state, int64_t int_max) {
    for (int64_t i = 0; i < n; i++) {
        if (tir_dtype_is_float(t)) {
            tlc_host_store_f(data, t, i, tlc_rand_normalish(state));
        } else if (t == TIR_BOOL) {
            tlc_host_store_i(data, t, i, (int64_t)(tlc_rand_next(state) & 1));
        } else {
            uint64_t range = int_max < 0 ? 1 : (uint64_t)int_max + 1;
            tlc_host_store_i(data, t, i, (int64_t)(tlc_rand_next(state) % range));
        }
    }
}
