/* Tile ops for the interpreter, as loops in C over whole regions (no
 * per-element tree walking). A region is gathered into a dense scratch array
 * in region order (row-major over its extents) and scattered back; reads
 * outside a global tensor give 0 and writes there are dropped (tail masking),
 * any other out-of-bounds element is an error at the op's location. */
#include "interp/interp_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *p, int64_t *cap, int64_t n, size_t sz) {
    if (n <= *cap) return p;
    int64_t nc = n > 2 * *cap ? n : 2 * *cap;
    void *q = realloc(p, (size_t)nc * sz);
    if (!q) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    *cap = nc;
    return q;
}

static tlc_ival *scratch(tlc_interp *it, int slot, int64_t n) {
    it->scr[slot] = grow(it->scr[slot], &it->scr_cap[slot], n ? n : 1, sizeof(tlc_ival));
    return it->scr[slot];
}

static void eval_region(tlc_interp *it, const tir_region *r, rregion *out, tlc_loc loc) {
    out->ib = tlc_interp_buf(it, r->buf, r->loc.line ? r->loc : loc);
    out->rank = r->rank;
    out->loc = r->loc.line ? r->loc : loc;
    out->elems = 1;
    if (r->rank != out->ib->rank)
        tlc_interp_fail(it, out->loc, "region of '%s' has rank %d but the buffer has rank %d", r->buf->name,
                        r->rank, out->ib->rank);
    for (int d = 0; d < r->rank; d++) {
        out->start[d] = tlc_interp_eval_i(it, r->start[d]);
        out->ext[d] = tlc_interp_eval_i(it, r->extent[d]);
        if (out->ext[d] < 0)
            tlc_interp_fail(it, out->loc, "region of '%s' has negative extent %lld in dim %d", r->buf->name,
                            (long long)out->ext[d], d);
        out->elems *= out->ext[d];
    }
}

/* Squeezed shape (extents != 1) of a region. */
static int squeeze(const rregion *r, int64_t *shape) {
    int n = 0;
    for (int d = 0; d < r->rank; d++)
        if (r->ext[d] != 1) shape[n++] = r->ext[d];
    return n;
}

static void shape_str(char *buf, size_t len, const int64_t *s, int n) {
    size_t o = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

static void check_same_shape(tlc_interp *it, const rregion *a, const rregion *b, tlc_loc loc, const char *op) {
    int64_t sa[TLC_INTERP_MAX_RANK], sb[TLC_INTERP_MAX_RANK];
    int na = squeeze(a, sa), nb = squeeze(b, sb);
    bool same = na == nb;
    for (int i = 0; same && i < na; i++) same = sa[i] == sb[i];
    if (!same) {
        char x[128], y[128];
        shape_str(x, sizeof x, sa, na);
        shape_str(y, sizeof y, sb, nb);
        tlc_interp_fail(it, loc, "%s: region of '%s' has shape %s but region of '%s' has shape %s", op,
                        a->ib->b->name, x, b->ib->b->name, y);
    }
}

static bool in_bounds(const rregion *r) {
    for (int d = 0; d < r->rank; d++)
        if (r->ext[d] && (r->start[d] < 0 || r->start[d] + r->ext[d] > r->ib->dims[d])) return false;
    return true;
}

/* Reports the first out-of-bounds dim of element `pos` (indices) of a non-global region. */
static noreturn void oob(tlc_interp *it, const rregion *r, const int64_t *idx) {
    for (int d = 0; d < r->rank; d++)
        if (idx[d] < 0 || idx[d] >= r->ib->dims[d])
            tlc_interp_fail(it, r->loc, "index %lld out of bounds for dim %d of '%s' (extent %lld)",
                            (long long)idx[d], d, r->ib->b->name, (long long)r->ib->dims[d]);
    tlc_interp_fail(it, r->loc, "internal error: region of '%s' out of bounds", r->ib->b->name);
}

/* Visits every element of r in region order: fn(offset or -1 if masked, i).
 * Written as two loops (fast in-bounds path, checked path) via a macro so the
 * per-element work stays inline. */
#define FOR_REGION(it, r, OFF, I, BODY)                                                     \
    do {                                                                                    \
        const rregion *r_ = (r);                                                            \
        int rk_ = r_->rank;                                                                 \
        if (r_->elems == 0) break;                                                          \
        if (rk_ == 0) { int64_t OFF = 0, I = 0; BODY; break; }                              \
        const int64_t *st_ = r_->ib->strides;                                               \
        int64_t idx_[TLC_INTERP_MAX_RANK];                                                  \
        for (int d_ = 0; d_ < rk_; d_++) idx_[d_] = 0;                                      \
        int64_t inner_ = r_->ext[rk_ - 1], is_ = st_[rk_ - 1];                              \
        bool fast_ = in_bounds(r_);                                                         \
        bool global_ = r_->ib->b->scope == TIR_SCOPE_GLOBAL;                                \
        int64_t I = 0;                                                                      \
        for (;;) {                                                                          \
            int64_t base_ = 0;                                                              \
            bool rowok_ = true;                                                             \
            for (int d_ = 0; d_ < rk_ - 1; d_++) {                                          \
                int64_t x_ = r_->start[d_] + idx_[d_];                                      \
                if (x_ < 0 || x_ >= r_->ib->dims[d_]) rowok_ = false;                       \
                base_ += x_ * st_[d_];                                                      \
            }                                                                               \
            int64_t s0_ = r_->start[rk_ - 1];                                               \
            for (int64_t j_ = 0; j_ < inner_; j_++, I++) {                                  \
                int64_t OFF = base_ + (s0_ + j_) * is_;                                     \
                if (!fast_) {                                                               \
                    int64_t x_ = s0_ + j_;                                                  \
                    if (!rowok_ || x_ < 0 || x_ >= r_->ib->dims[rk_ - 1]) {                 \
                        if (!global_) {                                                     \
                            int64_t full_[TLC_INTERP_MAX_RANK];                             \
                            for (int d_ = 0; d_ < rk_; d_++) full_[d_] = r_->start[d_] + idx_[d_]; \
                            full_[rk_ - 1] = x_;                                            \
                            oob(it, r_, full_);                                             \
                        }                                                                   \
                        OFF = -1;                                                           \
                    }                                                                       \
                }                                                                           \
                BODY;                                                                       \
            }                                                                               \
            int d_ = rk_ - 2;                                                               \
            while (d_ >= 0 && ++idx_[d_] == r_->ext[d_]) idx_[d_--] = 0;                    \
            if (d_ < 0) break;                                                              \
        }                                                                                   \
    } while (0)

/* Region values into out[] (region order), converted to dtype `to`. */
static void gather(tlc_interp *it, const rregion *r, tlc_ival *out, tir_dtype to) {
    tir_dtype from = r->ib->b->dtype;
    tlc_ival *data = r->ib->data;
    bool conv = from != to && !(to == TIR_F32 && tlc_interp_isf(from)) && !(from == to);
    bool isf = tlc_interp_isf(to);
    FOR_REGION(it, r, off, i, {
        if (off < 0) { if (isf) out[i].f = 0; else out[i].i = 0; }
        else out[i] = conv ? tlc_interp_convert(data[off], from, to) : data[off];
    });
}

/* in[] (region order, dtype `from`) stored into the region, rounded to its dtype. */
static void scatter(tlc_interp *it, const rregion *r, const tlc_ival *in, tir_dtype from) {
    tir_dtype to = r->ib->b->dtype;
    tlc_ival *data = r->ib->data;
    bool conv = from != to;
    FOR_REGION(it, r, off, i, {
        if (off >= 0) data[off] = conv ? tlc_interp_convert(in[i], from, to) : in[i];
    });
}

void tlc_interp_copy(tlc_interp *it, const tir_stmt *s) {
    rregion src, dst;
    eval_region(it, &s->u.copy.src, &src, s->loc);
    eval_region(it, &s->u.copy.dst, &dst, s->loc);
    check_same_shape(it, &src, &dst, s->loc, "copy");
    tir_dtype sd = src.ib->b->dtype;
    tlc_ival *tmp = scratch(it, 0, src.elems);
    gather(it, &src, tmp, sd);
    scatter(it, &dst, tmp, sd);
}

void tlc_interp_fill(tlc_interp *it, const tir_stmt *s) {
    rregion dst;
    eval_region(it, &s->u.fill.dst, &dst, s->loc);
    tir_dtype t = dst.ib->b->dtype;
    tlc_ival v;
    if (s->u.fill.is_clear || !s->u.fill.value) {
        if (tlc_interp_isf(t)) v.f = 0; else v.i = 0;
    } else {
        v = tlc_interp_convert(tlc_interp_eval(it, s->u.fill.value), s->u.fill.value->dtype, t);
    }
    tlc_ival *data = dst.ib->data;
    FOR_REGION(it, &dst, off, i, {
        (void)i;
        if (off >= 0) data[off] = v;
    });
}

/* Region into a dense float array (values are already of the region's dtype). */
static float *gather_f32(tlc_interp *it, const rregion *r, int slot) {
    tlc_ival *tmp = scratch(it, 2, r->elems);
    gather(it, r, tmp, tlc_interp_isf(r->ib->b->dtype) ? r->ib->b->dtype : TIR_F32);
    float **pf = slot == 0 ? &it->fa : &it->fb;
    int64_t *cap = slot == 0 ? &it->fa_cap : &it->fb_cap;
    *pf = grow(*pf, cap, r->elems ? r->elems : 1, sizeof(float));
    float *f = *pf;
    if (tlc_interp_isf(r->ib->b->dtype))
        for (int64_t i = 0; i < r->elems; i++) f[i] = (float)tmp[i].f;
    else
        for (int64_t i = 0; i < r->elems; i++) f[i] = (float)tmp[i].i;
    return f;
}

void tlc_interp_gemm(tlc_interp *it, const tir_stmt *s) {
    rregion a, b, c;
    eval_region(it, &s->u.gemm.a, &a, s->loc);
    eval_region(it, &s->u.gemm.b, &b, s->loc);
    eval_region(it, &s->u.gemm.c, &c, s->loc);
    int64_t m = s->u.gemm.m, n = s->u.gemm.n, k = s->u.gemm.k;
    if (a.elems != m * k || b.elems != k * n || c.elems != m * n)
        tlc_interp_fail(it, s->loc, "gemm: operand sizes %lld, %lld, %lld do not fit M=%lld N=%lld K=%lld",
                        (long long)a.elems, (long long)b.elems, (long long)c.elems, (long long)m,
                        (long long)n, (long long)k);
    float *fa = gather_f32(it, &a, 0);
    float *fb = gather_f32(it, &b, 1);
    /* Normalise to A: m x k (row-major) and Bt: n x k so the dot product is contiguous. */
    tlc_ival *at = scratch(it, 0, m * k), *bt = scratch(it, 1, n * k);
    float *A = (float *)at, *Bt = (float *)bt; /* tlc_ival is at least as big as a float */
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++)
            A[i * k + kk] = s->u.gemm.trans_a ? fa[kk * m + i] : fa[i * k + kk];
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++)
            Bt[j * k + kk] = s->u.gemm.trans_b ? fb[j * k + kk] : fb[kk * n + j];
    tlc_ival *cv = scratch(it, 2, m * n);
    tir_dtype ct = c.ib->b->dtype;
    gather(it, &c, cv, ct);
    bool cf = tlc_interp_isf(ct);
    for (int64_t i = 0; i < m; i++) {
        const float *ar = A + i * k;
        for (int64_t j = 0; j < n; j++) {
            const float *br = Bt + j * k;
            float acc = s->u.gemm.clear_accum ? 0.0f : (float)(cf ? cv[i * n + j].f : (double)cv[i * n + j].i);
            /* Four partial sums: f32 accumulation as on the tensor cores, whose
             * order of additions is not sequential either. */
            float p0 = 0, p1 = 0, p2 = 0, p3 = 0;
            int64_t kk = 0;
            for (; kk + 4 <= k; kk += 4) {
                p0 += ar[kk] * br[kk];
                p1 += ar[kk + 1] * br[kk + 1];
                p2 += ar[kk + 2] * br[kk + 2];
                p3 += ar[kk + 3] * br[kk + 3];
            }
            for (; kk < k; kk++) p0 += ar[kk] * br[kk];
            acc += (p0 + p1) + (p2 + p3);
            if (cf) cv[i * n + j].f = acc;
            else cv[i * n + j].i = (int64_t)acc;
        }
    }
    it->stats.gemm_macs += m * n * k;
    scatter(it, &c, cv, cf ? TIR_F32 : ct);
}

void tlc_interp_reduce(tlc_interp *it, const tir_stmt *s) {
    rregion src, dst;
    eval_region(it, &s->u.reduce.src, &src, s->loc);
    eval_region(it, &s->u.reduce.dst, &dst, s->loc);
    int dim = s->u.reduce.dim;
    if (dim < 0 || dim >= src.rank)
        tlc_interp_fail(it, s->loc, "reduce: dim %d out of range for rank %d", dim, src.rank);
    int64_t outer = 1, inner = 1, R = src.ext[dim];
    for (int d = 0; d < dim; d++) outer *= src.ext[d];
    for (int d = dim + 1; d < src.rank; d++) inner *= src.ext[d];
    if (dst.elems != outer * inner)
        tlc_interp_fail(it, s->loc, "reduce: destination '%s' has %lld elements, expected %lld",
                        dst.ib->b->name, (long long)dst.elems, (long long)(outer * inner));
    tlc_ival *sv = scratch(it, 0, src.elems), *dv = scratch(it, 1, dst.elems);
    gather(it, &src, sv, TIR_F32);
    tir_dtype dt = dst.ib->b->dtype;
    tir_reduce_kind kind = s->u.reduce.kind;
    if (!s->u.reduce.clear) gather(it, &dst, dv, TIR_F32);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double acc = kind == TIR_REDUCE_MAX ? -INFINITY : kind == TIR_REDUCE_MIN ? INFINITY : 0.0;
            const tlc_ival *p = sv + o * R * inner + in;
            for (int64_t r = 0; r < R; r++) {
                double x = p[r * inner].f;
                switch (kind) {
                case TIR_REDUCE_MAX: acc = fmax(acc, x); break;
                case TIR_REDUCE_MIN: acc = fmin(acc, x); break;
                case TIR_REDUCE_SUM: acc += x; break;
                case TIR_REDUCE_ABSMAX: acc = fmax(acc, fabs(x)); break;
                }
            }
            tlc_ival *d = &dv[o * inner + in];
            if (!s->u.reduce.clear) {
                switch (kind) {
                case TIR_REDUCE_MAX: acc = fmax(acc, d->f); break;
                case TIR_REDUCE_MIN: acc = fmin(acc, d->f); break;
                case TIR_REDUCE_SUM: acc += d->f; break;
                case TIR_REDUCE_ABSMAX: acc = fmax(acc, d->f); break;
                }
            }
            d->f = (double)(float)acc;
        }
    (void)dt;
    scatter(it, &dst, dv, TIR_F32);
}

void tlc_interp_atomic_add(tlc_interp *it, const tir_stmt *s) {
    rregion dst;
    eval_region(it, &s->u.atomic.dst, &dst, s->loc);
    tir_dtype dt = dst.ib->b->dtype;
    tlc_ival *dv = scratch(it, 1, dst.elems);
    gather(it, &dst, dv, TIR_F32);
    bool df = tlc_interp_isf(dt);
    if (!df) gather(it, &dst, dv, TIR_I64);
    if (s->u.atomic.src.buf) {
        rregion src;
        eval_region(it, &s->u.atomic.src, &src, s->loc);
        check_same_shape(it, &src, &dst, s->loc, "atomic_add");
        tlc_ival *sv = scratch(it, 0, src.elems);
        gather(it, &src, sv, df ? TIR_F32 : TIR_I64);
        for (int64_t i = 0; i < dst.elems; i++) {
            if (df) dv[i].f = tlc_round_to_dtype(dt, dv[i].f + sv[i].f);
            else dv[i].i = tlc_wrap_int(dt, (int64_t)((uint64_t)dv[i].i + (uint64_t)sv[i].i));
        }
    } else {
        tlc_ival v = tlc_interp_eval(it, s->u.atomic.value);
        tir_dtype vt = s->u.atomic.value->dtype;
        for (int64_t i = 0; i < dst.elems; i++) {
            if (df) dv[i].f = tlc_round_to_dtype(dt, dv[i].f + (tlc_interp_isf(vt) ? v.f : (double)v.i));
            else dv[i].i = tlc_wrap_int(dt, (int64_t)((uint64_t)dv[i].i +
                                                       (uint64_t)(tlc_interp_isf(vt) ? tlc_float_to_int(TIR_I64, v.f) : v.i)));
        }
    }
    scatter(it, &dst, dv, df ? dt : TIR_I64);
}
