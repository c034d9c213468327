/* The checking half of a launch: arguments against metadata, symbolic dims,
 * grid, packed parameter values and TMA descriptor requests. Pure (no
 * driver), so it is unit-tested on machines without a GPU. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "text_util.h"
#include "tlc/runtime.h"

typedef struct checker {
    const tlrt_kernel_meta *k;
    char *err;
    size_t errlen;
} checker;

static void describe_param(char *buf, size_t n, const tlrt_kernel_meta *k, const tlrt_param_meta *p) {
    if (p->kind == TLRT_PARAM_SCALAR) {
        snprintf(buf, n, "%s %s", tlrt_dtype_name(p->dtype), p->name);
        return;
    }
    size_t len = (size_t)snprintf(buf, n, "%s %s[", tlrt_dtype_name(p->dtype), p->name);
    for (int d = 0; d < p->rank && len < n; d++) {
        if (p->dim_sym[d] >= 0) len += (size_t)snprintf(buf + len, n - len, "%s%s", d ? "," : "", k->syms[p->dim_sym[d]]);
        else len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? "," : "", (long long)p->dims[d]);
    }
    if (len < n) snprintf(buf + len, n - len, "]");
}

static void format_dims(char *buf, size_t n, const int64_t *v, int rank) {
    size_t len = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < rank && len < n; d++) len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? "," : "", (long long)v[d]);
    if (len < n) snprintf(buf + len, n - len, "]");
}

static tlrt_status mismatch(checker *c, int i, const char *fmt, const char *a, const char *b) {
    char msg[1100]; /* holds the 1024-byte messages of check_tensor */
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    if (i >= 0)
        tlrt_errf(c->err, c->errlen, "kernel '%s', argument %d ('%s'): %s", c->k->name, i, c->k->params[i].name, msg);
    else
        tlrt_errf(c->err, c->errlen, "kernel '%s': %s", c->k->name, msg);
    return TLRT_ERROR_ARG_MISMATCH;
}

static tlrt_status check_tensor(checker *c, int i, const tlrt_arg *a, int64_t *syms, int *sym_src) {
    const tlrt_kernel_meta *k = c->k;
    const tlrt_param_meta *p = &k->params[i];
    char x[128], y[128];
    if (a->rank != p->rank) {
        snprintf(x, sizeof x, "%d", a->rank);
        snprintf(y, sizeof y, "%d", p->rank);
        return mismatch(c, i, "rank %s, but the kernel expects rank %s", x, y);
    }
    if (a->rank < 0 || a->rank > TLRT_MAX_RANK || (a->rank && !a->shape))
        return mismatch(c, i, "bad rank or missing shape", NULL, NULL);
    int64_t elems = 1;
    for (int d = 0; d < p->rank; d++) {
        int64_t v = a->shape[d];
        if (v < 0) {
            snprintf(x, sizeof x, "%d", d);
            snprintf(y, sizeof y, "%lld", (long long)v);
            return mismatch(c, i, "dim %s is negative (%s)", x, y);
        }
        if (__builtin_mul_overflow(elems, v, &elems)) return mismatch(c, i, "shape too large", NULL, NULL);
        if (p->dim_sym[d] < 0) {
            if (v != p->dims[d]) {
                format_dims(x, sizeof x, a->shape, a->rank);
                describe_param(y, sizeof y, k, p);
                return mismatch(c, i, "shape %s does not match %s", x, y);
            }
            continue;
        }
        int s = p->dim_sym[d];
        if (v > INT32_MAX) {
            snprintf(x, sizeof x, "%lld", (long long)v);
            return mismatch(c, i, "symbolic dim '%s' = %s exceeds 2^31-1", k->syms[s], x);
        }
        if (sym_src[s] < 0) {
            syms[s] = v;
            sym_src[s] = i * TLRT_MAX_RANK + d;
        } else if (syms[s] != v) {
            int src = sym_src[s] / TLRT_MAX_RANK, sd = sym_src[s] % TLRT_MAX_RANK;
            char msg[300];
            snprintf(msg, sizeof msg, "dim %d is %lld, but symbolic dim '%s' was bound to %lld by argument %d ('%s') dim %d",
                     d, (long long)v, k->syms[s], (long long)syms[s], src, k->params[src].name, sd);
            return mismatch(c, i, "%s", msg, NULL);
        }
    }
    int64_t esz = tlrt_dtype_bytes(p->dtype), bytes;
    if (__builtin_mul_overflow(elems, esz, &bytes)) return mismatch(c, i, "shape too large", NULL, NULL);
    if (a->strides && p->strided) {
        /* reached through tensor maps only: their rules (plan_tmap) */
    } else if (a->strides) {
        int64_t want = 1;
        for (int d = p->rank - 1; d >= 0; d--) {
            if (a->shape[d] != 1 && a->strides[d] != want && elems != 0) {
                int64_t exp[TLRT_MAX_RANK], w = 1;
                for (int e = p->rank - 1; e >= 0; e--) {
                    exp[e] = w;
                    w *= a->shape[e] ? a->shape[e] : 1;
                }
                char s1[128], s2[128], msg[1024];
                format_dims(s1, sizeof s1, a->strides, a->rank);
                format_dims(s2, sizeof s2, exp, a->rank);
                format_dims(x, sizeof x, a->shape, a->rank);
                snprintf(msg, sizeof msg,
                         "not contiguous: strides %s for shape %s (the kernel computes addresses into this tensor "
                         "from its shape, so it needs row-major %s; only tensors it reaches through TMA alone, "
                         "marked strided in its metadata, take other strides)",
                         s1, x, s2);
                return mismatch(c, i, "%s", msg, NULL);
            }
            want *= a->shape[d];
        }
    }
    if (elems != 0 && a->ptr == 0) return mismatch(c, i, "null device pointer", NULL, NULL);
    if (a->ptr % (uint64_t)p->align != 0) {
        snprintf(x, sizeof x, "0x%llx", (unsigned long long)a->ptr);
        snprintf(y, sizeof y, "%d", p->align);
        return mismatch(c, i, "pointer %s is not %s-byte aligned, as the kernel assumes", x, y);
    }
    return TLRT_SUCCESS;
}

static tlrt_status pack_scalar(checker *c, int i, const tlrt_arg *a, uint64_t *slot, int64_t *int_value) {
    const tlrt_param_meta *p = &c->k->params[i];
    char x[64];
    *slot = 0;
    if (tlrt_dtype_is_int(p->dtype)) {
        int64_t v = a->i, lo = INT64_MIN, hi = INT64_MAX;
        switch (p->dtype) {
        case TLRT_I8: lo = INT8_MIN, hi = INT8_MAX; break;
        case TLRT_I16: lo = INT16_MIN, hi = INT16_MAX; break;
        case TLRT_I32: lo = INT32_MIN, hi = INT32_MAX; break;
        case TLRT_U8: lo = 0, hi = UINT8_MAX; break;
        case TLRT_U16: lo = 0, hi = UINT16_MAX; break;
        case TLRT_U32: lo = 0, hi = UINT32_MAX; break;
        case TLRT_BOOL: lo = 0, hi = 1; break;
        default: break;
        }
        if (v < lo || v > hi) {
            snprintf(x, sizeof x, "%lld", (long long)v);
            return mismatch(c, i, "value %s is out of range for %s", x, tlrt_dtype_name(p->dtype));
        }
        *int_value = v;
        switch (p->dtype) {
        case TLRT_I8: case TLRT_U8: case TLRT_BOOL: { uint8_t t = (uint8_t)v; memcpy(slot, &t, 1); break; }
        case TLRT_I16: case TLRT_U16: { uint16_t t = (uint16_t)v; memcpy(slot, &t, 2); break; }
        case TLRT_I32: case TLRT_U32: { uint32_t t = (uint32_t)v; memcpy(slot, &t, 4); break; }
        default: memcpy(slot, &v, 8); break;
        }
        return TLRT_SUCCESS;
    }
    float f = (float)a->f;
    switch (p->dtype) {
    case TLRT_F32: memcpy(slot, &f, 4); break;
    case TLRT_F16: { uint16_t h = tlrt_f32_to_f16(f); memcpy(slot, &h, 2); break; }
    case TLRT_BF16: { uint16_t h = tlrt_f32_to_bf16(f); memcpy(slot, &h, 2); break; }
    case TLRT_F8E4M3: { uint8_t h = tlrt_f32_to_e4m3(f); memcpy(slot, &h, 1); break; }
    case TLRT_F8E5M2: { uint8_t h = tlrt_f32_to_e5m2(f); memcpy(slot, &h, 1); break; }
    default: return mismatch(c, i, "unsupported scalar dtype", NULL, NULL);
    }
    return TLRT_SUCCESS;
}

/* A view map's dims (outermost first), evaluated; their product may not
 * exceed the tensor's elements. */
static tlrt_status view_dims(checker *c, const tlrt_tmap_meta *m, const tlrt_arg *a, const int64_t *syms,
                             const int64_t *scalars, int64_t *dims) {
    const tlrt_param_meta *p = &c->k->params[m->param];
    int64_t elems = 1, view = 1;
    if (m->rank < 1 || m->rank > TLRT_MAX_TMAP_RANK || m->view < 1 || m->view - 1 + m->rank > c->k->nmap_exprs ||
        c->k->nmap_exprs > TLRT_MAX_MAP_EXPRS)
        return mismatch(c, m->param, "its tensor map's view names no expressions of the kernel's", NULL, NULL);
    for (int d = 0; d < p->rank; d++)
        if (__builtin_mul_overflow(elems, a->shape[d], &elems)) elems = INT64_MAX;
    for (int d = 0; d < m->rank; d++) {
        char sub[200];
        if (!tlrt_expr_eval(&c->k->map_exprs[m->view - 1 + d], syms, scalars, &dims[d], sub, sizeof sub))
            return mismatch(c, m->param, "the view its tensor map is built over: %s", sub, NULL);
        if (dims[d] < 1 || __builtin_mul_overflow(view, dims[d], &view) || view > elems) {
            char msg[200];
            snprintf(msg, sizeof msg, "the view its tensor map is built over has dim %d = %lld, more elements than the "
                     "tensor's %lld (or none)", d, (long long)dims[d], (long long)elems);
            return mismatch(c, m->param, "%s", msg, NULL);
        }
    }
    return TLRT_SUCCESS;
}

static tlrt_status plan_tmap(checker *c, const tlrt_tmap_meta *m, const tlrt_arg *a, const int64_t *syms,
                             const int64_t *scalars, tlrt_tmap_request *r) {
    const tlrt_param_meta *p = &c->k->params[m->param];
    int64_t esz = tlrt_dtype_bytes(p->dtype);
    int64_t view[TLRT_MAX_TMAP_RANK];
    const int64_t *shape = a->shape;
    if (m->view) {
        tlrt_status st = view_dims(c, m, a, syms, scalars, view);
        if (st != TLRT_SUCCESS) return st;
        shape = view;
    }
    memset(r, 0, sizeof *r);
    r->param = m->param;
    r->dtype = p->dtype;
    r->rank = m->rank;
    r->address = a->ptr;
    r->swizzle = m->swizzle;
    r->l2 = m->l2;
    r->oob = m->oob;
    if (a->ptr % 16 != 0) return mismatch(c, m->param, "TMA needs a 16-byte aligned base address", NULL, NULL);
    /* strides: the argument's for a strided tensor (dims of extent 1 keep
     * the contiguous one, which nothing reads), else row-major */
    bool given = a->strides && p->strided && !m->view;
    if (given && a->shape[m->rank - 1] > 1 && a->strides[m->rank - 1] != 1) {
        char msg[200];
        snprintf(msg, sizeof msg, "TMA needs the innermost dim contiguous (stride 1); it has stride %lld",
                 (long long)a->strides[m->rank - 1]);
        return mismatch(c, m->param, "%s", msg, NULL);
    }
    int64_t stride = esz;
    for (int j = 0; j < m->rank; j++) {
        int d = m->rank - 1 - j; /* j counts from the innermost dim */
        r->global_dim[j] = (uint64_t)shape[d];
        r->box[j] = m->box[d];
        r->elem_strides[j] = m->elem_strides[d];
        if (shape[d] > ((int64_t)1 << 32)) return mismatch(c, m->param, "TMA dims must be at most 2^32", NULL, NULL);
        if (j > 0 && given && a->shape[d] > 1 && __builtin_mul_overflow(a->strides[d], esz, &stride))
            return mismatch(c, m->param, "stride too large", NULL, NULL);
        if (j > 0 && given && a->shape[d] > 1 && stride <= 0)
            return mismatch(c, m->param, "TMA needs positive strides", NULL, NULL);
        if (j > 0) {
            if (stride % 16 != 0 || stride >= ((int64_t)1 << 40)) {
                char msg[300];
                snprintf(msg, sizeof msg,
                         "TMA needs strides that are multiples of 16 bytes (and below 2^40); dim %d has a stride of "
                         "%lld bytes (%lld elements of %s)",
                         d, (long long)stride, (long long)(stride / esz), tlrt_dtype_name(p->dtype));
                return mismatch(c, m->param, "%s", msg, NULL);
            }
            r->global_strides[j - 1] = (uint64_t)stride;
        }
        if (__builtin_mul_overflow(stride, shape[d] ? shape[d] : 1, &stride))
            return mismatch(c, m->param, "shape too large", NULL, NULL);
    }
    return TLRT_SUCCESS;
}

/* An im2col map's corners, evaluated and checked against the ranges TMA
 * takes for the tensor's rank (the driver's cuTensorMapEncodeIm2col
 * documentation; the offsets are the PTX instruction's). */
static tlrt_status plan_im2col(const tlrt_kernel_meta *k, const tlrt_tmap_meta *m, const int64_t *syms,
                               const int64_t *scalars, tlrt_tmap_request *r, char *err, size_t errlen) {
    static const int64_t corner_max[6] = {0, 0, 0, 32767, 127, 15}, offset_limit[6] = {0, 0, 0, 65535, 255, 31};
    const char *name = k->params[m->param].name;
    static const char *what[3] = {"lower corner", "upper corner", "largest offset"};
    int64_t v[3];
    if (m->rank < 3 || m->rank > 5 || m->im2col_exprs < 1 || m->im2col_exprs + 2 > k->nmap_exprs ||
        k->nmap_exprs > TLRT_MAX_MAP_EXPRS) { /* metadata built by hand, not by the parser */
        tlrt_errf(err, errlen, "kernel '%s': the im2col map of '%s' has rank %d (3..5) or no corner expressions",
                  k->name, name, m->rank);
        return TLRT_ERROR_INVALID_METADATA;
    }
    for (int i = 0; i < 3; i++) {
        char sub[200];
        if (!tlrt_expr_eval(&k->map_exprs[m->im2col_exprs - 1 + i], syms, scalars, &v[i], sub, sizeof sub)) {
            tlrt_errf(err, errlen, "kernel '%s': the im2col map of '%s': %s: %s", k->name, name, what[i], sub);
            return TLRT_ERROR_ARG_MISMATCH;
        }
    }
    int64_t cmax = corner_max[m->rank], omax = offset_limit[m->rank];
    if (v[0] < -cmax - 1 || v[0] > cmax || v[1] < -cmax - 1 || v[1] > cmax || v[2] < 0 || v[2] > omax) {
        tlrt_errf(err, errlen,
                  "kernel '%s': TMA's im2col mode cannot load '%s' (rank %d): its bounding box corners must be within "
                  "[%lld, %lld] and its offsets within [0, %lld], but they are %lld (lower: the negated padding), %lld "
                  "(upper: padding - dilation * (kernel - 1)) and up to %lld (dilation * (kernel - 1))",
                  k->name, name, m->rank, (long long)(-cmax - 1), (long long)cmax, (long long)omax, (long long)v[0],
                  (long long)v[1], (long long)v[2]);
        return TLRT_ERROR_ARG_MISMATCH;
    }
    r->im2col = true;
    for (int d = 0; d < m->rank - 2; d++) {
        r->corner_lower[d] = (int)v[0];
        r->corner_upper[d] = (int)v[1];
    }
    return TLRT_SUCCESS;
}

tlrt_status tlrt_plan_launch(const tlrt_kernel_meta *k, const tlrt_arg *args, int nargs, tlrt_launch_plan *plan,
                             char *err, size_t errlen) {
    if (!k || !plan || (nargs > 0 && !args)) {
        tlrt_errf(err, errlen, "tlrt_plan_launch: NULL kernel metadata, plan or arguments");
        return TLRT_ERROR_INVALID_ARGUMENT;
    }
    if (k->nparams < 0 || k->nparams > TLRT_MAX_PARAMS || k->nsyms < 0 || k->nsyms > TLRT_MAX_SYMS ||
        k->ntmaps < 0 || k->ntmaps > TLRT_MAX_TMAPS) {
        tlrt_errf(err, errlen, "kernel metadata with %d params, %d syms, %d tmaps (at most %d, %d, %d)", k->nparams,
                  k->nsyms, k->ntmaps, TLRT_MAX_PARAMS, TLRT_MAX_SYMS, TLRT_MAX_TMAPS);
        return TLRT_ERROR_INVALID_METADATA;
    }
    checker c = {k, err, errlen};
    /* Every field before tmaps is zeroed; a tmap request is cleared when it
     * is filled (plan_tmap) and tmap_storage is the launcher's, so the 2.3 KB
     * of those two arrays are not cleared on every launch. */
    memset(plan, 0, offsetof(tlrt_launch_plan, tmaps));
    if (nargs != k->nparams) {
        char list[1200], one[200];
        size_t len = 0;
        list[0] = 0;
        for (int i = 0; i < k->nparams && len < sizeof list; i++) {
            describe_param(one, sizeof one, k, &k->params[i]);
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", one);
        }
        tlrt_errf(err, errlen, "kernel '%s' takes %d arguments (%s), got %d", k->name, k->nparams, list, nargs);
        return TLRT_ERROR_ARG_MISMATCH;
    }
    int sym_src[TLRT_MAX_SYMS];
    for (int s = 0; s < TLRT_MAX_SYMS; s++) sym_src[s] = -1;
    int64_t scalar_ints[TLRT_MAX_PARAMS] = {0}; /* the grid may read any of them */
    uint64_t scalar_slots[TLRT_MAX_PARAMS];     /* written before read, for i < nparams */
    tlrt_status st;
    for (int i = 0; i < k->nparams; i++) {
        const tlrt_param_meta *p = &k->params[i];
        const tlrt_arg *a = &args[i];
        bool want_tensor = p->kind == TLRT_PARAM_TENSOR;
        if (a->kind != TLRT_ARG_TENSOR && a->kind != TLRT_ARG_SCALAR) return mismatch(&c, i, "bad argument kind", NULL, NULL);
        if ((a->kind == TLRT_ARG_TENSOR) != want_tensor)
            return mismatch(&c, i, "the kernel expects a %s, got a %s", want_tensor ? "tensor" : "scalar",
                            want_tensor ? "scalar" : "tensor");
        if (a->dtype != p->dtype)
            return mismatch(&c, i, "dtype %s, but the kernel expects %s", tlrt_dtype_name(a->dtype), tlrt_dtype_name(p->dtype));
        st = want_tensor ? check_tensor(&c, i, a, plan->sym_values, sym_src)
                         : pack_scalar(&c, i, a, &scalar_slots[i], &scalar_ints[i]);
        if (st != TLRT_SUCCESS) return st;
    }
    /* ABI order: tensor pointers, sym values, scalars, tmaps (metadata.h). */
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].kind == TLRT_PARAM_TENSOR) plan->slots[plan->nslots++] = args[i].ptr;
    for (int s = 0; s < k->nsyms; s++) {
        if (sym_src[s] < 0) {
            tlrt_errf(err, errlen, "kernel '%s': symbolic dim '%s' is not bound by any argument", k->name, k->syms[s]);
            return TLRT_ERROR_INVALID_METADATA;
        }
        memcpy(&plan->slots[plan->nslots++], &plan->sym_values[s], 8);
    }
    /* "divisible" facts: the kernel's code relies on them (vector stores
     * along a symbolic row length, TMA row strides) */
    for (int s = 0; s < k->nsyms; s++) {
        int64_t m = k->sym_multiple[s];
        if (m <= 1 || plan->sym_values[s] % m == 0) continue;
        char users[300];
        size_t len = 0;
        users[0] = 0;
        for (int i = 0; i < k->nparams && len < sizeof users; i++) {
            const tlrt_param_meta *p = &k->params[i];
            bool uses = false;
            for (int d = 0; p->kind == TLRT_PARAM_TENSOR && d < p->rank; d++) uses |= p->dim_sym[d] == s;
            if (uses) len += (size_t)snprintf(users + len, sizeof users - len, "%s'%s'", len ? ", " : "", p->name);
        }
        tlrt_errf(err, errlen,
                  "kernel '%s': symbolic dim '%s' = %lld must be a multiple of %lld: the kernel was compiled assuming "
                  "it (16-byte row strides for TMA, vector accesses) for tensor%s %s",
                  k->name, k->syms[s], (long long)plan->sym_values[s], (long long)m, strchr(users, ',') ? "s" : "",
                  users);
        return TLRT_ERROR_ARG_MISMATCH;
    }
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].kind == TLRT_PARAM_SCALAR) plan->slots[plan->nslots++] = scalar_slots[i];
    for (int t = 0; t < k->ntmaps; t++) {
        const tlrt_tmap_meta *m = &k->tmaps[t];
        if (m->param < 0 || m->param >= k->nparams || k->params[m->param].kind != TLRT_PARAM_TENSOR) {
            tlrt_errf(err, errlen, "kernel '%s': tmap #%d does not name a tensor", k->name, t);
            return TLRT_ERROR_INVALID_METADATA;
        }
        st = plan_tmap(&c, m, &args[m->param], plan->sym_values, scalar_ints, &plan->tmaps[t]);
        if (st != TLRT_SUCCESS) return st;
        if (m->im2col) {
            st = plan_im2col(k, m, plan->sym_values, scalar_ints, &plan->tmaps[t], err, errlen);
            if (st != TLRT_SUCCESS) return st;
        }
        plan->ntmaps++;
    }
    static const int64_t grid_max[3] = {INT32_MAX, 65535, 65535};
    for (int a = 0; a < 3; a++) {
        int64_t v;
        char sub[200];
        if (!tlrt_expr_eval(&k->grid[a], plan->sym_values, scalar_ints, &v, sub, sizeof sub)) {
            tlrt_errf(err, errlen, "kernel '%s': grid %c: %s", k->name, "xyz"[a], sub);
            return TLRT_ERROR_ARG_MISMATCH;
        }
        if (v < 0 || v > grid_max[a]) {
            tlrt_buf eb = {0};
            tlrt_expr_format(&eb, &k->grid[a], k);
            tlrt_errf(err, errlen, "kernel '%s': grid %c = %s evaluates to %lld (0..%lld allowed)", k->name, "xyz"[a],
                      eb.data ? eb.data : "?", (long long)v, (long long)grid_max[a]);
            tlrt_buf_free(&eb);
            return TLRT_ERROR_ARG_MISMATCH;
        }
        plan->grid[a] = (uint32_t)v;
        if (v == 0) plan->empty = true;
        plan->block[a] = (uint32_t)k->threads[a];
    }
    int64_t cluster_blocks = 1;
    for (int a = 0; a < 3; a++) {
        int64_t v = 1;
        char sub[200];
        if (k->has_cluster && !tlrt_expr_eval(&k->cluster[a], plan->sym_values, scalar_ints, &v, sub, sizeof sub)) {
            tlrt_errf(err, errlen, "kernel '%s': cluster %c: %s", k->name, "xyz"[a], sub);
            return TLRT_ERROR_ARG_MISMATCH;
        }
        if (v < 1 || v > 8 || (plan->grid[a] && plan->grid[a] % v)) {
            tlrt_buf eb = {0};
            tlrt_expr_format(&eb, &k->cluster[a], k);
            tlrt_errf(err, errlen, "kernel '%s': cluster %c = %s evaluates to %lld, which %s the grid's %u blocks on that axis",
                      k->name, "xyz"[a], eb.data ? eb.data : "?", (long long)v,
                      v < 1 || v > 8 ? "is not between 1 and 8 for" : "does not divide", plan->grid[a]);
            tlrt_buf_free(&eb);
            return TLRT_ERROR_ARG_MISMATCH;
        }
        plan->cluster[a] = (uint32_t)v;
        cluster_blocks *= v;
    }
    if (cluster_blocks > 8) {
        tlrt_errf(err, errlen, "kernel '%s': a cluster of %u x %u x %u blocks (at most 8 in all)", k->name,
                  plan->cluster[0], plan->cluster[1], plan->cluster[2]);
        return TLRT_ERROR_ARG_MISMATCH;
    }
    for (int c = 0; c < k->nchecks; c++) {
        int64_t v;
        char sub[200];
        const tlrt_expr *e = &k->checks[c].cond;
        if (!tlrt_expr_eval(e, plan->sym_values, scalar_ints, &v, sub, sizeof sub)) {
            tlrt_errf(err, errlen, "kernel '%s': the assert at line %d:%d: %s", k->name, k->checks[c].line,
                      k->checks[c].col, sub);
            return TLRT_ERROR_ARG_MISMATCH;
        }
        if (v) continue;
        /* the condition and the values it read */
        tlrt_buf eb = {0};
        tlrt_expr_format(&eb, e, k);
        char vals[256] = "";
        size_t used = 0;
        bool shown_sym[TLRT_MAX_SYMS] = {false}, shown_param[TLRT_MAX_PARAMS] = {false};
        for (int i = 0; i < e->n && used + 1 < sizeof vals; i++) {
            const tlrt_expr_node *nd = &e->nodes[i];
            const char *name = NULL;
            int64_t x = 0;
            if (nd->op == TLRT_EX_SYM && !shown_sym[nd->value]) {
                shown_sym[nd->value] = true;
                name = k->syms[nd->value];
                x = plan->sym_values[nd->value];
            } else if (nd->op == TLRT_EX_SCALAR && !shown_param[nd->value]) {
                shown_param[nd->value] = true;
                name = k->params[nd->value].name;
                x = scalar_ints[nd->value];
            }
            if (!name) continue;
            int w = snprintf(vals + used, sizeof vals - used, "%s%s = %lld", used ? ", " : "", name, (long long)x);
            if (w < 0) break;
            used += (size_t)w < sizeof vals - used ? (size_t)w : sizeof vals - used - 1;
        }
        tlrt_errf(err, errlen, "kernel '%s': this launch fails the assert at line %d:%d, %s, with %s", k->name,
                  k->checks[c].line, k->checks[c].col, eb.data ? eb.data : "?", used ? vals : "no sizes");
        tlrt_buf_free(&eb);
        return TLRT_ERROR_ARG_MISMATCH;
    }
    plan->smem_bytes = (uint32_t)k->smem_bytes;
    if (k->persistent) { /* the grid stays logical here; launch.c folds it onto the SMs */
        int64_t tiles = (int64_t)plan->grid[0] * plan->grid[1] * plan->grid[2];
        if (tiles >= ((int64_t)1 << 30)) {
            tlrt_errf(err, errlen, "kernel '%s': %lld tiles for a persistent kernel (below 2^30 allowed)", k->name,
                      (long long)tiles);
            return TLRT_ERROR_ARG_MISMATCH;
        }
    }
    return TLRT_SUCCESS;
}

int tlrt_plan_param_pointers(tlrt_launch_plan *plan, void **params) {
    if (!plan || !params) return -1;
    int n = 0;
    for (int i = 0; i < plan->nslots; i++) params[n++] = &plan->slots[i];
    for (int t = 0; t < plan->ntmaps; t++) params[n++] = plan->tmap_storage[t];
    return n;
}
