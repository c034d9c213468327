/* Region primitives for the tile ops' interpreter steps (each op's step is
 * in its ops/ file), as loops in C over whole regions (no per-element tree
 * walking). A region is gathered into a dense scratch array
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

tlc_ival *tlc_interp_scratch(tlc_interp *it, int slot, int64_t n) {
    it->scr[slot] = grow(it->scr[slot], &it->scr_cap[slot], n ? n : 1, sizeof(tlc_ival));
    return it->scr[slot];
}

void tlc_interp_region(tlc_interp *it, const tir_region *r, rregion *out, tlc_loc loc) {
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
        /* only a global tensor's end is masked (the GPU tests idx < dim) */
        if (out->start[d] < 0 && out->ext[d] > 0 && r->buf->scope == TIR_SCOPE_GLOBAL)
            tlc_interp_fail(it, out->loc, "region of '%s' starts at %lld in dim %d: a start must not be negative",
                            r->buf->name, (long long)out->start[d], d);
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

void tlc_interp_same_shape(tlc_interp *it, const rregion *a, const rregion *b, tlc_loc loc, const char *op) {
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
void tlc_interp_gather(tlc_interp *it, const rregion *r, tlc_ival *out, tir_dtype to) {
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
void tlc_interp_scatter(tlc_interp *it, const rregion *r, const tlc_ival *in, tir_dtype from) {
    if (it->wgmma) tlc_interp_wgmma_check_write(it, r, r->loc);
    tir_dtype to = r->ib->b->dtype;
    tlc_ival *data = r->ib->data;
    bool conv = from != to;
    FOR_REGION(it, r, off, i, {
        if (off >= 0) data[off] = conv ? tlc_interp_convert(in[i], from, to) : in[i];
    });
}



/* Region into a dense float array (values are already of the region's dtype). */
float *tlc_interp_gather_f32(tlc_interp *it, const rregion *r, int slot) {
    tlc_ival *tmp = tlc_interp_scratch(it, 2, r->elems);
    tlc_interp_gather(it, r, tmp, tlc_interp_isf(r->ib->b->dtype) ? r->ib->b->dtype : TIR_F32);
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

void tlc_interp_set_all(tlc_interp *it, const rregion *r, tlc_ival v) {
    if (it->wgmma) tlc_interp_wgmma_check_write(it, r, r->loc);
    tlc_ival *data = r->ib->data;
    FOR_REGION(it, r, off, i, {
        (void)i;
        if (off >= 0) data[off] = v;
    });
}
