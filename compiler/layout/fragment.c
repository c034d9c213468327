/* Fragments: register tiles spread over the threads of a block, as
 * mixed-radix digits (fragment.h). Everything here is closed-form integer
 * arithmetic on at most TLC_FRAG_MAX_DIGITS digits. */
#include "fragment.h"
#include "../support/int_math.h"
#include <stdio.h>
#include <string.h>

static int64_t pow2_ceil(int64_t x) {
    int64_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Largest divisor of n that is <= cap (at least 1). */
static int64_t divisor_at_most(int64_t n, int64_t cap) {
    for (int64_t t = cap < n ? cap : n; t > 1; t--)
        if (n % t == 0) return t;
    return 1;
}

static int digit_order(const tlc_digit *x, const tlc_digit *y) {
    if (x->target != y->target) return x->target == TLC_DIGIT_THREAD ? -1 : 1;
    return x->tstride < y->tstride ? -1 : x->tstride > y->tstride ? 1 : 0;
}

void tlc_fragment_canonicalize(tlc_fragment *f) {
    int n = 0;
    for (int i = 0; i < f->ndigits; i++)
        if (f->digits[i].extent > 1) f->digits[n++] = f->digits[i];
    f->ndigits = n;
    for (int i = 1; i < n; i++) { /* insertion sort: at most 16 digits */
        tlc_digit d = f->digits[i];
        int j = i - 1;
        while (j >= 0 && digit_order(&f->digits[j], &d) > 0) {
            f->digits[j + 1] = f->digits[j];
            j--;
        }
        f->digits[j + 1] = d;
    }
    /* slot digits that continue each other (the next one's strides are the
     * first's times its extent) are one digit: a wgmma A fragment's two
     * k digits read as its accumulator's one n digit */
    int m = 0;
    for (int i = 0; i < n; i++) {
        tlc_digit *prev = m ? &f->digits[m - 1] : NULL, *d = &f->digits[i];
        if (prev && prev->target == TLC_DIGIT_SLOT && d->target == TLC_DIGIT_SLOT && prev->dim == d->dim &&
            d->dim >= 0 && d->lstride == prev->lstride * prev->extent && d->tstride == prev->tstride * prev->extent) {
            prev->extent *= d->extent;
            continue;
        }
        /* so do replication digits that continue each other (a reduce over
         * lanes and then warps replicates over both at once) */
        if (prev && prev->target == TLC_DIGIT_THREAD && d->target == TLC_DIGIT_THREAD && prev->dim < 0 &&
            d->dim < 0 && d->tstride == prev->tstride * prev->extent) {
            prev->extent *= d->extent;
            continue;
        }
        f->digits[m++] = *d;
    }
    n = f->ndigits = m;
    f->threads = 1;
    f->slots = 1;
    f->replicate = 1;
    for (int i = 0; i < n; i++) {
        const tlc_digit *d = &f->digits[i];
        if (d->target == TLC_DIGIT_THREAD) f->threads *= d->extent;
        else f->slots *= d->extent;
        if (d->dim < 0) f->replicate *= d->extent;
    }
}

static void add_digit(tlc_fragment *f, int dim, int64_t extent, int64_t lstride, tlc_digit_target target,
                      int64_t tstride) {
    if (extent <= 1 || f->ndigits >= TLC_FRAG_MAX_DIGITS) return;
    f->digits[f->ndigits++] = (tlc_digit){dim, extent, lstride, target, tstride};
}

/* The blocked fragment with at most `row_lanes` lanes along the last dim;
 * `pad_warps`: warps that no dim can take evenly go along the last dim,
 * past its end (whole warps of holes), instead of repeating other warps. */
static tlc_fragment *blocked_with(tlc_arena *a, int rank, const int64_t *shape, int64_t threads, int vec,
                                  int64_t row_lanes, bool pad_warps) {
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    f->rank = rank;
    for (int d = 0; d < rank; d++) f->shape[d] = shape[d];
    f->origin = "blocked";
    if (threads < 1) threads = 1;
    if (rank == 0) {
        add_digit(f, -1, threads, 0, TLC_DIGIT_THREAD, 1);
        tlc_fragment_canonicalize(f);
        return f;
    }
    int inner = rank - 1;
    int64_t v = vec < 1 ? 1 : vec;
    while (v > 1 && shape[inner] % v) v /= 2;

    int64_t rem[TLC_FRAG_MAX_RANK];   /* what is left of each dim, in its unit */
    int64_t unit[TLC_FRAG_MAX_RANK];  /* logical stride of the next digit of each dim */
    int64_t lanes[TLC_FRAG_MAX_RANK]; /* lane digit extent per dim */
    int64_t warps[TLC_FRAG_MAX_RANK]; /* warp digit extent per dim */
    for (int d = 0; d < rank; d++) {
        rem[d] = shape[d];
        unit[d] = 1;
        lanes[d] = 1;
        warps[d] = 1;
    }
    rem[inner] = shape[inner] / v;

    int64_t warp = threads < 32 ? threads : 32;
    int64_t nwarps = threads / warp;
    int64_t tstride = 1;

    /* Lanes: the row's vectors first (padded to a power of two), then outer dims. */
    int64_t lanes_left = warp;
    for (int d = inner; d >= 0 && lanes_left > 1; d--) {
        int64_t t = pow2_ceil(rem[d]);
        if (t > lanes_left || lanes_left % t) t = lanes_left;
        if (d == inner && t > row_lanes) t = row_lanes;
        lanes[d] = t;
        rem[d] = ceil_div(rem[d], t);
        lanes_left /= t;
    }
    /* Warps: along outer dims when there is at least one row per warp. */
    int64_t outer_rows = 1;
    for (int d = 0; d < inner; d++) outer_rows *= rem[d];
    int64_t warps_left = nwarps;
    int order[TLC_FRAG_MAX_RANK], norder = 0;
    if (outer_rows >= nwarps) {
        for (int d = inner - 1; d >= 0; d--) order[norder++] = d;
        order[norder++] = inner;
    } else {
        order[norder++] = inner;
        for (int d = inner - 1; d >= 0; d--) order[norder++] = d;
    }
    int64_t inner_rem = rem[inner];
    for (int i = 0; i < norder && warps_left > 1; i++) {
        int d = order[i];
        int64_t t = divisor_at_most(warps_left, rem[d]);
        warps[d] = t;
        rem[d] = ceil_div(rem[d], t);
        warps_left /= t;
    }
    if (pad_warps && warps_left > 1) {
        warps[inner] *= warps_left;
        rem[inner] = ceil_div(inner_rem, warps[inner]);
        warps_left = 1;
    }

    /* Digits per dim, by logical stride: [vector] [lanes] [repeats] [warps]. */
    int64_t lane_ts[TLC_FRAG_MAX_RANK], warp_ts[TLC_FRAG_MAX_RANK];
    for (int d = inner; d >= 0; d--) {
        lane_ts[d] = tstride;
        tstride *= lanes[d];
    }
    int64_t lane_rep = lanes_left; /* lanes nothing needed: replicas */
    add_digit(f, -1, lane_rep, 0, TLC_DIGIT_THREAD, tstride);
    tstride *= lane_rep;
    for (int i = 0; i < norder; i++) {
        warp_ts[order[i]] = tstride;
        tstride *= warps[order[i]];
    }
    add_digit(f, -1, warps_left, 0, TLC_DIGIT_THREAD, tstride);

    int64_t slot_ts = 1;
    if (v > 1) {
        add_digit(f, inner, v, 1, TLC_DIGIT_SLOT, 1);
        slot_ts = v;
        unit[inner] = v;
    }
    for (int d = inner; d >= 0; d--) {
        add_digit(f, d, lanes[d], unit[d], TLC_DIGIT_THREAD, lane_ts[d]);
        unit[d] *= lanes[d];
        add_digit(f, d, rem[d], unit[d], TLC_DIGIT_SLOT, slot_ts);
        slot_ts *= rem[d];
        unit[d] *= rem[d];
        add_digit(f, d, warps[d], unit[d], TLC_DIGIT_THREAD, warp_ts[d]);
        unit[d] *= warps[d];
    }
    tlc_fragment_canonicalize(f);
    return f;
}

/* The lanes of a warp go along the row first; but when the warps cannot all
 * be placed (their count has no divisor that fits what is left of the dims,
 * e.g. 5 warps over 4 rows of 80 vectors padded to 3 x 32), they become
 * replicas that repeat the same work, and padding a row of 20 vectors to 32
 * lanes idles 12 of them. Fewer lanes along the row leave a remainder the
 * warps can split (16 lanes x 5 warps = 80 vectors; 4 lanes x 5 warps = 20),
 * so the lane counts 32, 16, ..., 2 are tried (2 lanes of 16-byte vectors
 * still fill a 32-byte sector), each also with the leftover warps padding
 * the row instead of repeating it (1 row of 80 vectors over 4 warps: 32
 * lanes x 4 warps, 1.5 warps of holes, rather than 2 warps doing the same
 * work twice), and the one with the fewest slots per thread (then, without
 * padded warps, the fewest replicas) is kept; ties keep the earlier (the
 * most lanes). */
tlc_fragment *tlc_fragment_blocked(tlc_arena *a, int rank, const int64_t *shape, int64_t threads, int vec) {
    tlc_fragment *best = blocked_with(a, rank, shape, threads, vec, 32, false);
    if (rank == 0) return best;
    for (int64_t lanes = 32; lanes >= 2 && (best->replicate > 1 || tlc_fragment_has_padding(best)); lanes /= 2)
        for (int pad = lanes == 32; pad < 2; pad++) {
            tlc_fragment *f = blocked_with(a, rank, shape, threads, vec, lanes, pad);
            /* padding warps splits rows over more warps (a reduction through
             * shared memory): only worth it for fewer slots */
            if (f->slots < best->slots || (!pad && f->slots == best->slots && f->replicate < best->replicate))
                best = f;
        }
    return best;
}

tlc_fragment *tlc_fragment_relabel(tlc_arena *a, const tlc_fragment *f, const int *to, int rank, const int64_t *shape) {
    tlc_fragment *r = TLC_NEW(a, tlc_fragment);
    *r = *f;
    r->rank = rank;
    for (int d = 0; d < rank; d++) r->shape[d] = shape[d];
    for (int i = 0; i < r->ndigits; i++)
        if (r->digits[i].dim >= 0) r->digits[i].dim = to[r->digits[i].dim];
    tlc_fragment_canonicalize(r);
    return r;
}

tlc_fragment *tlc_fragment_expand(tlc_arena *a, const tlc_fragment *b, const int *map, int rank,
                                  const int64_t *shape) {
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    f->rank = rank;
    for (int d = 0; d < rank; d++) f->shape[d] = shape[d];
    bool named[TLC_FRAG_MAX_RANK] = {false};
    for (int d = 0; d < b->rank; d++)
        if (map[d] >= 0) named[map[d]] = true;
    tlc_digit rep[TLC_FRAG_MAX_DIGITS];
    int nrep = 0;
    for (int i = 0; i < b->ndigits; i++) {
        tlc_digit g = b->digits[i];
        if (g.dim < 0) {
            rep[nrep++] = g;
            continue;
        }
        g.dim = map[g.dim];
        f->digits[f->ndigits++] = g;
    }
    int64_t slots = b->slots;
    for (int m = rank - 1; m >= 0; m--) {
        if (named[m]) continue;
        int64_t ls = 1, rem = shape[m];
        /* the replicas take the new dim first, lowest thread strides first
         * (canonical order), each the largest part of it that divides what
         * is left of the dim */
        for (int i = 0; i < nrep && rem > 1; i++) {
            tlc_digit *r = &rep[i];
            int64_t take = tlc_gcd(rem, r->extent);
            if (take == 1) continue;
            if (f->ndigits >= TLC_FRAG_MAX_DIGITS) return NULL;
            f->digits[f->ndigits++] = (tlc_digit){m, take, ls, TLC_DIGIT_THREAD, r->tstride};
            r->tstride *= take;
            r->extent /= take;
            ls *= take;
            rem /= take;
        }
        if (rem > 1) {
            if (f->ndigits >= TLC_FRAG_MAX_DIGITS) return NULL;
            f->digits[f->ndigits++] = (tlc_digit){m, rem, ls, TLC_DIGIT_SLOT, slots};
            slots *= rem;
        }
    }
    for (int i = 0; i < nrep; i++) {
        if (rep[i].extent <= 1) continue;
        if (f->ndigits >= TLC_FRAG_MAX_DIGITS) return NULL;
        f->digits[f->ndigits++] = rep[i];
    }
    tlc_fragment_canonicalize(f);
    return f;
}

tlc_fragment *tlc_fragment_per_thread(tlc_arena *a, int rank, const int64_t *shape, int64_t threads) {
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    f->rank = rank;
    f->origin = "element access outside a Parallel loop";
    int64_t ts = 1;
    for (int d = rank - 1; d >= 0; d--) {
        f->shape[d] = shape[d];
        add_digit(f, d, shape[d], 1, TLC_DIGIT_SLOT, ts);
        ts *= shape[d];
    }
    add_digit(f, -1, threads, 0, TLC_DIGIT_THREAD, 1);
    tlc_fragment_canonicalize(f);
    return f;
}

bool tlc_fragment_is_per_thread(const tlc_fragment *f) {
    if (f->replicate != f->threads) return false;
    int64_t ts = 1;
    for (int d = f->rank - 1; d >= 0; d--) {
        int64_t found = 0;
        for (int i = 0; i < f->ndigits; i++) {
            const tlc_digit *g = &f->digits[i];
            if (g->dim != d) continue;
            if (g->target != TLC_DIGIT_SLOT || g->lstride != 1 || g->extent != f->shape[d] || g->tstride != ts)
                return false;
            found++;
        }
        if (found != (f->shape[d] > 1)) return false;
        ts *= f->shape[d];
    }
    return true;
}

bool tlc_fragment_dim_in_slots(const tlc_fragment *f, int d) {
    for (int i = 0; i < f->ndigits; i++)
        if (f->digits[i].dim == d && f->digits[i].target == TLC_DIGIT_THREAD) return false;
    return true;
}

/* Slot strides made dense again after slot digits were dropped, keeping
 * their order (canonical order sorts slot digits by stride, so a running
 * product in order does it). */
static void compact_slots(tlc_fragment *f) {
    tlc_fragment_canonicalize(f);
    int64_t ts = 1;
    for (int i = 0; i < f->ndigits; i++)
        if (f->digits[i].target == TLC_DIGIT_SLOT) {
            f->digits[i].tstride = ts;
            ts *= f->digits[i].extent;
        }
    tlc_fragment_canonicalize(f);
}

tlc_fragment *tlc_fragment_reduce(tlc_arena *a, const tlc_fragment *src, int dim) {
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    f->rank = src->rank - 1;
    for (int d = 0, o = 0; d < src->rank; d++)
        if (d != dim) f->shape[o++] = src->shape[d];
    f->origin = "reduce";
    for (int i = 0; i < src->ndigits; i++) {
        tlc_digit g = src->digits[i];
        if (g.dim == dim) {
            if (g.target == TLC_DIGIT_SLOT) continue;
            g.dim = -1;
            g.lstride = 0;
        } else if (g.dim > dim) {
            g.dim--;
        }
        f->digits[f->ndigits++] = g;
    }
    compact_slots(f);
    return f;
}

tlc_fragment *tlc_fragment_divide(tlc_arena *a, const tlc_fragment *src, int dim, int64_t c) {
    if (dim < 0 || dim >= src->rank || c < 1 || src->shape[dim] % c != 0) return NULL;
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    *f = *src;
    f->shape[dim] = src->shape[dim] / c;
    f->ndigits = 0;
    f->origin = "divided access";
    int64_t below = 1; /* product of the extents of dim's digits below c */
    for (int i = 0; i < src->ndigits; i++) {
        tlc_digit g = src->digits[i];
        if (g.dim == dim && g.lstride < c && g.lstride * g.extent > c) { /* across c: split it there */
            int64_t lo = c / g.lstride;
            if (c % g.lstride || g.extent % lo || f->ndigits + 2 > TLC_FRAG_MAX_DIGITS) return NULL;
            tlc_digit hi = g;
            hi.extent = g.extent / lo;
            hi.lstride = 1;
            hi.tstride = g.tstride * lo;
            f->digits[f->ndigits++] = hi;
            g.extent = lo;
        } else if (g.dim == dim && g.lstride >= c) {
            if (g.lstride % c) return NULL;
            g.lstride /= c;
            f->digits[f->ndigits++] = g;
            continue;
        }
        if (g.dim != dim) {
            f->digits[f->ndigits++] = g;
            continue;
        }
        below *= g.extent;
        if (g.target == TLC_DIGIT_SLOT) continue;
        g.dim = -1; /* threads that hold the same packed element */
        g.lstride = 0;
        f->digits[f->ndigits++] = g;
    }
    if (below != c) return NULL;
    compact_slots(f);
    return tlc_fragment_is_valid(f, NULL, 0) ? f : NULL;
}

/* Row-major strides of a shape; returns its element count. */
static int64_t flat_strides(int rank, const int64_t *shape, int64_t *stride) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= shape[d];
    }
    return s;
}

tlc_fragment *tlc_fragment_reshape(tlc_arena *a, const tlc_fragment *src, int rank, const int64_t *shape) {
    if (rank < 1 || rank > TLC_FRAG_MAX_RANK) return NULL;
    int64_t cover[TLC_FRAG_MAX_RANK], sst[TLC_FRAG_MAX_RANK], tst[TLC_FRAG_MAX_RANK];
    int64_t n = flat_strides(src->rank, src->shape, sst), m = flat_strides(rank, shape, tst);
    if (n != m || n < 1) return NULL;
    for (int d = 0; d < TLC_FRAG_MAX_RANK; d++) cover[d] = 1;
    for (int i = 0; i < src->ndigits; i++)
        if (src->digits[i].dim >= 0) cover[src->digits[i].dim] *= src->digits[i].extent;
    for (int d = 0; d < src->rank; d++)
        if (cover[d] != src->shape[d]) return NULL; /* padded: holes have no row-major place */
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    *f = *src;
    f->rank = rank;
    for (int d = 0; d < rank; d++) f->shape[d] = shape[d];
    f->ndigits = 0;
    f->origin = "reshaped";
    for (int i = 0; i < src->ndigits; i++) {
        tlc_digit g = src->digits[i];
        if (g.dim < 0) {
            if (f->ndigits == TLC_FRAG_MAX_DIGITS) return NULL;
            f->digits[f->ndigits++] = g;
            continue;
        }
        /* the digit's stride in the flat (row-major) index, then the target
         * dims it falls in, split where it crosses one's end */
        int64_t ls = g.lstride * sst[g.dim], e = g.extent, ts = g.tstride;
        for (;;) {
            int d = rank - 1;
            while (d > 0 && ls >= tst[d] * shape[d]) d--;
            if (ls % tst[d] || f->ndigits == TLC_FRAG_MAX_DIGITS) return NULL;
            int64_t lsd = ls / tst[d];
            if (lsd * e <= shape[d]) {
                f->digits[f->ndigits++] = (tlc_digit){d, e, lsd, g.target, ts};
                break;
            }
            int64_t e1 = shape[d] / lsd;
            if (shape[d] % lsd || e1 < 1 || e % e1) return NULL;
            f->digits[f->ndigits++] = (tlc_digit){d, e1, lsd, g.target, ts};
            ls *= e1;
            ts *= e1;
            e /= e1;
        }
    }
    tlc_fragment_canonicalize(f); /* keeps every element's thread and slot */
    return tlc_fragment_is_valid(f, NULL, 0) ? f : NULL;
}

tlc_fragment *tlc_fragment_add_slot_dim(tlc_arena *a, const tlc_fragment *src, int dim, int64_t extent) {
    if (src->rank >= TLC_FRAG_MAX_RANK || dim < 0 || dim > src->rank || extent < 1 || src->ndigits >= TLC_FRAG_MAX_DIGITS)
        return NULL;
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    *f = *src;
    f->rank = src->rank + 1;
    for (int d = src->rank; d > dim; d--) f->shape[d] = src->shape[d - 1];
    f->shape[dim] = extent;
    for (int i = 0; i < f->ndigits; i++)
        if (f->digits[i].dim >= dim) f->digits[i].dim++;
    f->digits[f->ndigits++] = (tlc_digit){dim, extent, 1, TLC_DIGIT_SLOT, src->slots};
    tlc_fragment_canonicalize(f);
    return tlc_fragment_is_valid(f, NULL, 0) ? f : NULL;
}

/* (x / stride) % extent for x >= 0; shifts and masks for the power-of-two
 * strides and extents of nearly every digit (layout inference and lowering
 * evaluate this for every thread of every slot). */
static inline int64_t digit_of(int64_t x, int64_t stride, int64_t extent) {
    if (x >= 0 && tlc_is_pow2(stride) && tlc_is_pow2(extent))
        return (x >> __builtin_ctzll((unsigned long long)stride)) & (extent - 1);
    return (x / stride) % extent;
}

static int64_t digit_value(const tlc_digit *g, int64_t thread, int64_t slot) {
    return digit_of(g->target == TLC_DIGIT_THREAD ? thread : slot, g->tstride, g->extent);
}

bool tlc_fragment_inverse(const tlc_fragment *f, int64_t thread, int64_t slot, int64_t *logical,
                          int64_t *replica_index) {
    if (thread < 0 || thread >= f->threads || slot < 0 || slot >= f->slots) return false;
    for (int d = 0; d < f->rank; d++) logical[d] = 0;
    int64_t rep = 0, rep_unit = 1;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        int64_t v = digit_value(g, thread, slot);
        if (g->dim < 0) {
            rep += v * rep_unit;
            rep_unit *= g->extent;
        } else {
            logical[g->dim] += v * g->lstride;
        }
    }
    if (replica_index) *replica_index = rep;
    return true;
}

void tlc_fragment_slot_part(const tlc_fragment *f, int64_t slot, int64_t *logical) {
    for (int d = 0; d < f->rank; d++) logical[d] = 0;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->target == TLC_DIGIT_SLOT && g->dim >= 0) logical[g->dim] += digit_value(g, 0, slot) * g->lstride;
    }
}

void tlc_fragment_thread_part(const tlc_fragment *f, int64_t thread, int64_t *logical) {
    for (int d = 0; d < f->rank; d++) logical[d] = 0;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->target == TLC_DIGIT_THREAD && g->dim >= 0) logical[g->dim] += digit_value(g, thread, 0) * g->lstride;
    }
}

void tlc_fragment_forward(const tlc_fragment *f, const int64_t *logical, int64_t *thread, int64_t *slot) {
    int64_t t = 0, s = 0;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->dim < 0) continue;
        int64_t v = digit_of(logical[g->dim], g->lstride, g->extent);
        if (g->target == TLC_DIGIT_THREAD) t += v * g->tstride;
        else s += v * g->tstride;
    }
    *thread = t;
    *slot = s;
}

static int64_t dim_coverage(const tlc_fragment *f, int d) {
    int64_t c = 1;
    for (int i = 0; i < f->ndigits; i++)
        if (f->digits[i].dim == d) c *= f->digits[i].extent;
    return c;
}

bool tlc_fragment_is_hole(const tlc_fragment *f, const int64_t *logical) {
    for (int d = 0; d < f->rank; d++)
        if (logical[d] < 0 || logical[d] >= f->shape[d]) return true;
    return false;
}

bool tlc_fragment_has_padding(const tlc_fragment *f) {
    for (int d = 0; d < f->rank; d++)
        if (dim_coverage(f, d) != f->shape[d]) return true;
    return false;
}

int64_t tlc_fragment_slot_of(const tlc_fragment *f, const int64_t *logical, int64_t thread) {
    if (thread < 0 || thread >= f->threads || tlc_fragment_is_hole(f, logical)) return -1;
    int64_t t0, s;
    tlc_fragment_forward(f, logical, &t0, &s);
    int64_t rep = 0;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->dim < 0) rep += digit_value(g, thread, 0) * g->tstride;
    }
    return thread - rep == t0 ? s : -1;
}

int64_t tlc_fragment_vector_len(const tlc_fragment *f) {
    if (f->rank == 0) return 1;
    int64_t len = 1;
    for (bool grew = true; grew;) {
        grew = false;
        for (int i = 0; i < f->ndigits; i++) {
            const tlc_digit *g = &f->digits[i];
            if (g->target == TLC_DIGIT_SLOT && g->dim == f->rank - 1 && g->tstride == len && g->lstride == len) {
                len *= g->extent;
                grew = true;
            }
        }
    }
    /* A run that passes the end of the dim is cut by padding: keep it only if it divides the dim. */
    while (len > 1 && f->shape[f->rank - 1] % len) len /= 2;
    return len;
}

/* Digits of one target (or of one logical dim) sorted by stride must form a
 * mixed-radix number: strides 1, e0, e0*e1, ... */
static bool check_radix(const tlc_fragment *f, bool by_dim, int key, int64_t *total, char *why, int whylen,
                        const char *what) {
    int idx[TLC_FRAG_MAX_DIGITS], n = 0;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (by_dim ? g->dim == key : (int)g->target == key) idx[n++] = i;
    }
    for (int i = 1; i < n; i++) { /* sort by the relevant stride */
        int x = idx[i], j = i - 1;
        int64_t sx = by_dim ? f->digits[x].lstride : f->digits[x].tstride;
        while (j >= 0 && (by_dim ? f->digits[idx[j]].lstride : f->digits[idx[j]].tstride) > sx) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = x;
    }
    int64_t expect = 1;
    for (int i = 0; i < n; i++) {
        const tlc_digit *g = &f->digits[idx[i]];
        int64_t s = by_dim ? g->lstride : g->tstride;
        if (g->extent < 1 || s != expect) {
            if (why) snprintf(why, (size_t)whylen, "%s digits are not a mixed-radix number (stride %lld, expected %lld)",
                              what, (long long)s, (long long)expect);
            return false;
        }
        expect *= g->extent;
    }
    *total = expect;
    return true;
}

bool tlc_fragment_is_valid(const tlc_fragment *f, char *why, int whylen) {
    if (why && whylen > 0) why[0] = '\0';
    if (f->rank < 0 || f->rank > TLC_FRAG_MAX_RANK || f->ndigits < 0 || f->ndigits > TLC_FRAG_MAX_DIGITS) {
        if (why) snprintf(why, (size_t)whylen, "rank or digit count out of range");
        return false;
    }
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->dim < -1 || g->dim >= f->rank || (g->dim < 0 && g->target != TLC_DIGIT_THREAD)) {
            if (why) snprintf(why, (size_t)whylen, "digit %d: bad dim %d", i, g->dim);
            return false;
        }
    }
    int64_t t, s, c;
    if (!check_radix(f, false, TLC_DIGIT_THREAD, &t, why, whylen, "thread")) return false;
    if (!check_radix(f, false, TLC_DIGIT_SLOT, &s, why, whylen, "slot")) return false;
    if (t != f->threads || s != f->slots) {
        if (why) snprintf(why, (size_t)whylen, "threads/slots %lld/%lld do not match the digits (%lld/%lld)",
                          (long long)f->threads, (long long)f->slots, (long long)t, (long long)s);
        return false;
    }
    for (int d = 0; d < f->rank; d++) {
        if (!check_radix(f, true, d, &c, why, whylen, "logical")) return false;
        if (c < f->shape[d]) {
            if (why) snprintf(why, (size_t)whylen, "dim %d: digits cover %lld of %lld", d, (long long)c,
                              (long long)f->shape[d]);
            return false;
        }
    }
    return true;
}

bool tlc_fragment_equal(const tlc_fragment *a, const tlc_fragment *b) {
    if (a == b) return true;
    if (!a || !b || a->rank != b->rank || a->ndigits != b->ndigits || a->threads != b->threads ||
        a->slots != b->slots)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    for (int i = 0; i < a->ndigits; i++) {
        const tlc_digit *x = &a->digits[i], *y = &b->digits[i];
        if (x->dim != y->dim || x->extent != y->extent || x->target != y->target || x->tstride != y->tstride ||
            (x->dim >= 0 && x->lstride != y->lstride))
            return false;
    }
    return true;
}

bool tlc_fragment_same(const tlc_fragment *a, const tlc_fragment *b) {
    if (tlc_fragment_equal(a, b)) return true;
    if (!a || !b || a->rank != b->rank || a->threads != b->threads || a->slots != b->slots ||
        a->replicate != b->replicate)
        return false;
    int64_t n = 1;
    for (int d = 0; d < a->rank; d++) {
        if (a->shape[d] != b->shape[d]) return false;
        n *= a->shape[d];
    }
    if (n > (1 << 20)) return false;
    int64_t idx[TLC_FRAG_MAX_RANK];
    for (int64_t e = 0; e < n; e++) {
        for (int64_t d = a->rank - 1, r = e; d >= 0; r /= a->shape[d], d--) idx[d] = r % a->shape[d];
        int64_t ta, sa, tb, sb;
        tlc_fragment_forward(a, idx, &ta, &sa);
        tlc_fragment_forward(b, idx, &tb, &sb);
        if (ta != tb || sa != sb) return false;
    }
    return true;
}

/* One line: shape, counts, then digits from the lowest thread bit up, then
 * slots: "t:d1[32]*8" = 32 values on the thread index stepping dim 1 by 8;
 * "t:rep[4]" = 4 replicas. Padded dims show their covered extent. */
void tlc_fragment_print(tlc_strbuf *sb, const tlc_fragment *f) {
    tlc_sb_puts(sb, "[");
    for (int d = 0; d < f->rank; d++) tlc_sb_printf(sb, "%s%lld", d ? ", " : "", (long long)f->shape[d]);
    tlc_sb_printf(sb, "] threads=%lld slots=%lld replicate=%lld", (long long)f->threads, (long long)f->slots,
                  (long long)f->replicate);
    for (int d = 0; d < f->rank; d++) {
        int64_t c = dim_coverage(f, d);
        if (c != f->shape[d]) tlc_sb_printf(sb, " pad(d%d: %lld)", d, (long long)c);
    }
    tlc_sb_puts(sb, " digits");
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        char tgt = g->target == TLC_DIGIT_THREAD ? 't' : 's';
        if (g->dim < 0) tlc_sb_printf(sb, " %c:rep[%lld]", tgt, (long long)g->extent);
        else tlc_sb_printf(sb, " %c:d%d[%lld]*%lld", tgt, g->dim, (long long)g->extent, (long long)g->lstride);
    }
}
