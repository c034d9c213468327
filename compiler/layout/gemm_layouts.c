/* Tensor-core layouts (gemm_layouts.h). Register fragments follow the PTX
 * ISA's "Matrix Fragments" sections:
 *   mma.m16n8k16 f32 accumulator, per warp: lane = 4 * groupID + tig,
 *     c[r]: row groupID + 8 * (r / 2), col 2 * tig + r % 2;
 *   wgmma m64nNk16 f32 accumulator, per warpgroup (warp w of 4): d[r]:
 *     row 16 * w + 8 * ((r / 2) % 2) + groupID, col 8 * (r / 4) + 2 * tig + r % 2;
 *   mma.m16n8k16 A (f16/bf16), per warp: a[r]: row groupID + 8 * ((r / 2) % 2),
 *     col 2 * tig + r % 2 + 8 * (r / 4).
 * So the wgmma accumulator is the mma.sync one with the four warps stacked
 * in M and the n8 tiles continued along N: one digit form covers both. */
#include "gemm_layouts.h"
#include <stdio.h>

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* How good a split is (lower is better). FullRow: units along M as much
 * as possible; FullCol: along N; Square: fewest operand bytes per unit
 * (mma.sync: the per-unit tile closest to square; wgmma: the bytes its
 * instructions read from shared memory), ties to more units along M. */
static int64_t wgmma_n_under(int64_t tile_n, int64_t max_n) {
    int64_t w = imin(tile_n, max_n);
    while (w > 8 && (tile_n % w || w % 8)) w -= 8;
    return w;
}

static int64_t wgmma_n(int64_t tile_n) { return wgmma_n_under(tile_n, 256); }

void tlc_gemm_plan_cap_n(tlc_gemm_plan *p, int max_n) {
    if (p->inst == TLC_INST_WGMMA && p->inst_n > max_n) p->inst_n = (int)wgmma_n_under(p->tile_n, max_n);
}

static int64_t split_cost(tir_gemm_policy pol, int64_t um, int64_t un, int64_t m, int64_t n, bool wg) {
    switch (pol) {
    case TIR_POLICY_FULLROW: return un;
    case TIR_POLICY_FULLCOL: return um;
    default:
        if (wg) { /* shared-memory bytes the unit's wgmmas read per k16: A once per
                   * n chunk, B once per m64 row block (wide n chunks win) */
            int64_t tm = m / um, tn = n / un;
            return ((tn / wgmma_n(tn)) * tm + (tm / 64) * tn) * 1024 + un;
        }
        return (m / um + n / un) * 1024 + un;
    }
}

bool tlc_gemm_plan_make(tlc_gemm_plan *p, tlc_arch arch, int threads, int m, int n, int k, int k_step,
                        tir_gemm_policy policy, bool allow_wgmma, char *why, int whylen) {
    *p = (tlc_gemm_plan){0};
    p->m = m;
    p->n = n;
    p->k = k;
    p->k_step = k_step;
    p->policy = policy;
    if (k % k_step) {
        snprintf(why, (size_t)whylen, "K (%d) must be a multiple of %d for the tensor cores", k, k_step);
        return false;
    }
    bool wg = allow_wgmma && tlc_target_of(arch)->wgmma && threads % 128 == 0;
    for (int pass = wg ? 0 : 1; pass < 2; pass++) {
        bool use_wg = pass == 0;
        int unit_threads = use_wg ? 128 : 32;
        int im = use_wg ? 64 : 16, in = 8;
        int units = threads / unit_threads;
        if (units < 1) break;
        int64_t best = -1;
        int bm = 0, bn = 0;
        for (int um = 1; um <= units; um++) {
            if (units % um) continue;
            int un = units / um;
            if (m % (um * im) || n % (un * in)) continue;
            int64_t c = split_cost(policy, um, un, m, n, use_wg);
            if (best < 0 || c < best) {
                best = c;
                bm = um;
                bn = un;
            }
        }
        if (best < 0) continue;
        p->inst = use_wg ? TLC_INST_WGMMA : TLC_INST_MMA_SYNC;
        p->units = units;
        p->units_m = bm;
        p->units_n = bn;
        p->tile_m = m / bm;
        p->tile_n = n / bn;
        p->inst_m = im;
        p->inst_n = in;
        if (use_wg) {
            /* the widest wgmma N (multiple of 8, at most 256) dividing the unit's N */
            p->inst_n = (int)wgmma_n(p->tile_n);
        }
        return true;
    }
    snprintf(why, (size_t)whylen,
             "a %d x %d tile cannot be split over %d threads in m16n8 pieces per warp "
             "(M must be a multiple of 16 x the warps along M, N of 8 x the warps along N)",
             m, n, threads);
    return false;
}

static void add(tlc_fragment *f, int dim, int64_t extent, int64_t lstride, tlc_digit_target t, int64_t ts) {
    if (extent > 1 && f->ndigits < TLC_FRAG_MAX_DIGITS) f->digits[f->ndigits++] = (tlc_digit){dim, extent, lstride, t, ts};
}

tlc_fragment *tlc_gemm_acc_fragment(tlc_arena *a, const tlc_gemm_plan *p) {
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    f->rank = 2;
    f->shape[0] = p->m;
    f->shape[1] = p->n;
    bool wg = p->inst == TLC_INST_WGMMA;
    int64_t ntiles = p->tile_n / 8, mtiles = p->tile_m / p->inst_m;
    /* threads: lane % 4, lane / 4, [warp in warpgroup], units along M, units along N */
    add(f, 1, 4, 2, TLC_DIGIT_THREAD, 1);
    add(f, 0, 8, 1, TLC_DIGIT_THREAD, 4);
    int64_t ts = 32;
    if (wg) {
        add(f, 0, 4, 16, TLC_DIGIT_THREAD, 32);
        ts = 128;
    }
    add(f, 0, p->units_m, p->tile_m, TLC_DIGIT_THREAD, ts);
    add(f, 1, p->units_n, p->tile_n, TLC_DIGIT_THREAD, ts * p->units_m);
    add(f, -1, p->replicas, 0, TLC_DIGIT_THREAD, ts * p->units);
    /* slots: col bit 0, row + 8, n8 tiles, instruction tiles along M */
    add(f, 1, 2, 1, TLC_DIGIT_SLOT, 1);
    add(f, 0, 2, 8, TLC_DIGIT_SLOT, 2);
    add(f, 1, ntiles, 8, TLC_DIGIT_SLOT, 4);
    add(f, 0, mtiles, p->inst_m, TLC_DIGIT_SLOT, 4 * ntiles);
    tlc_fragment_canonicalize(f);
    return f;
}

int64_t tlc_gemm_acc_slot(const tlc_gemm_plan *p, int mi, int ni, int r) {
    int64_t ntiles = p->tile_n / 8;
    if (p->inst == TLC_INST_WGMMA) return (int64_t)mi * 4 * ntiles + (int64_t)ni * (p->inst_n / 2) + r;
    return 4 * ((int64_t)ni + ntiles * mi) + r;
}

tlc_fragment *tlc_gemm_a_fragment(tlc_arena *a, const tlc_gemm_plan *p) {
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    f->rank = 2;
    f->shape[0] = p->m;
    f->shape[1] = p->k;
    bool wg = p->inst == TLC_INST_WGMMA;
    /* wgmma: each warp of a warpgroup holds 16 of its 64 rows, laid out as
     * mma.sync's m16k16 A (PTX ISA, wgmma register fragments). A register
     * holds e = k_step / 8 elements of a row (tf32: 1, 16-bit: 2, 8-bit:
     * 4): lane (g, t) holds columns e t .. e t + e - 1 of rows g and g + 8
     * and the same 4 e columns on; the registers a0..a3 are slots
     * e (row half + 2 column half) .. + e - 1 of each k step */
    int64_t e = p->k_step / 8;
    int64_t ktiles = p->k / p->k_step, mtiles = p->tile_m / (wg ? 64 : 16), ts = 32;
    add(f, 1, 4, e, TLC_DIGIT_THREAD, 1);
    add(f, 0, 8, 1, TLC_DIGIT_THREAD, 4);
    if (wg) {
        add(f, 0, 4, 16, TLC_DIGIT_THREAD, 32);
        ts = 128;
    }
    add(f, 0, p->units_m, p->tile_m, TLC_DIGIT_THREAD, ts);
    add(f, -1, p->units_n, 0, TLC_DIGIT_THREAD, ts * p->units_m); /* units along N hold the same A */
    add(f, -1, p->replicas, 0, TLC_DIGIT_THREAD, ts * p->units);
    if (e > 1) add(f, 1, e, 1, TLC_DIGIT_SLOT, 1);
    add(f, 0, 2, 8, TLC_DIGIT_SLOT, e);
    add(f, 1, 2, 4 * e, TLC_DIGIT_SLOT, 2 * e);
    add(f, 1, ktiles, p->k_step, TLC_DIGIT_SLOT, 4 * e);
    add(f, 0, mtiles, wg ? 64 : 16, TLC_DIGIT_SLOT, 4 * e * ktiles);
    tlc_fragment_canonicalize(f);
    return f;
}

tlc_fragment *tlc_gemm_b_fragment(tlc_arena *a, const tlc_gemm_plan *p) {
    tlc_fragment *f = TLC_NEW(a, tlc_fragment);
    f->rank = 2;
    f->shape[0] = p->k;
    f->shape[1] = p->n;
    /* mma.sync's B (PTX ISA, mma.m16n8k*): lane (g, t) holds e = k_step / 8
     * consecutive K elements of column g from row e t, in b0, and the same
     * 4 e rows on, in b1 */
    int64_t e = p->k_step / 8;
    int64_t ktiles = p->k / p->k_step, ntiles = p->tile_n / 8;
    add(f, 0, 4, e, TLC_DIGIT_THREAD, 1);
    add(f, 1, 8, 1, TLC_DIGIT_THREAD, 4);
    add(f, -1, p->units_m, 0, TLC_DIGIT_THREAD, 32); /* units along M hold the same B */
    add(f, 1, p->units_n, p->tile_n, TLC_DIGIT_THREAD, 32 * p->units_m);
    add(f, -1, p->replicas, 0, TLC_DIGIT_THREAD, 32 * p->units);
    if (e > 1) add(f, 0, e, 1, TLC_DIGIT_SLOT, 1);
    add(f, 0, 2, 4 * e, TLC_DIGIT_SLOT, e);
    add(f, 0, ktiles, p->k_step, TLC_DIGIT_SLOT, 2 * e);
    add(f, 1, ntiles, 8, TLC_DIGIT_SLOT, 2 * e * ktiles);
    tlc_fragment_canonicalize(f);
    return f;
}

tlc_layout *tlc_layout_gemm_operand(tlc_arena *a, int rank, const int64_t *shape, int elem_bytes) {
    int64_t row_bytes = rank ? shape[rank - 1] * elem_bytes : elem_bytes;
    int64_t rows = 1;
    for (int d = 0; d + 1 < rank; d++) rows *= shape[d];
    tlc_swizzle s = TLC_SWIZZLE_128B;
    while (s != TLC_SWIZZLE_NONE && row_bytes % (int64_t)s)
        s = s == TLC_SWIZZLE_128B ? TLC_SWIZZLE_64B : s == TLC_SWIZZLE_64B ? TLC_SWIZZLE_32B : TLC_SWIZZLE_NONE;
    if (rank < 2 || rows % 8) s = TLC_SWIZZLE_NONE;
    tlc_layout *l = s == TLC_SWIZZLE_NONE ? tlc_layout_row_major(a, rank, shape, elem_bytes)
                                          : tlc_layout_swizzled(a, rank, shape, elem_bytes, s);
    if (s != TLC_SWIZZLE_NONE && row_bytes > (int64_t)s) l->panel_elems = (int64_t)s / elem_bytes;
    return l;
}
