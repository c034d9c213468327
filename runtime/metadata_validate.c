/* Consistency rules for one kernel's metadata, shared by the parser (reject
 * malformed input) and the writer (codegen must not emit nonsense). */
#include <string.h>
#include "text_util.h"

static bool name_ok(const char *s, size_t cap) {
    size_t n = strnlen(s, cap);
    return n < cap && tlrt_is_ident(s, n);
}

static bool name_taken(const tlrt_kernel_meta *k, const char *s, int nsyms, int nparams) {
    for (int i = 0; i < nsyms; i++)
        if (strcmp(k->syms[i], s) == 0) return true;
    for (int i = 0; i < nparams; i++)
        if (strcmp(k->params[i].name, s) == 0) return true;
    return false;
}

/* n well-formed map expressions from first - 1 (first 0: none). */
static bool map_exprs_ok(const tlrt_kernel_meta *k, const tlrt_param_meta *p, const char *what, int first, int n,
                         char *err, size_t errlen) {
    if (!first) return true;
    if (first < 1 || first - 1 + n > k->nmap_exprs || k->nmap_exprs > TLRT_MAX_MAP_EXPRS) {
        tlrt_errf(err, errlen, "tmap of '%s': its %s expressions are not in the kernel's map expressions", p->name, what);
        return false;
    }
    for (int i = 0; i < n; i++) {
        char sub[200];
        if (!tlrt_expr_check(&k->map_exprs[first - 1 + i], k, sub, sizeof sub)) {
            tlrt_errf(err, errlen, "tmap of '%s': %s: %s", p->name, what, sub);
            return false;
        }
    }
    return true;
}

static bool validate_tmap(const tlrt_kernel_meta *k, int t, char *err, size_t errlen) {
    const tlrt_tmap_meta *m = &k->tmaps[t];
    if (m->param < 0 || m->param >= k->nparams || k->params[m->param].kind != TLRT_PARAM_TENSOR) {
        tlrt_errf(err, errlen, "tmap #%d: param #%d is not a tensor param", t, m->param);
        return false;
    }
    const tlrt_param_meta *p = &k->params[m->param];
    if (m->rank < 1 || m->rank > TLRT_MAX_TMAP_RANK || (m->rank != p->rank && !m->view)) {
        tlrt_errf(err, errlen, "tmap of '%s': rank %d (must equal the tensor's rank %d, or a view's, 1..%d)", p->name,
                  m->rank, p->rank, TLRT_MAX_TMAP_RANK);
        return false;
    }
    if (!map_exprs_ok(k, p, "view", m->view, m->rank, err, errlen) ||
        !map_exprs_ok(k, p, "im2col", m->im2col_exprs, 3, err, errlen))
        return false;
    for (int d = 0; d < m->rank; d++) {
        if (m->box[d] < 1 || m->box[d] > 256) {
            tlrt_errf(err, errlen, "tmap of '%s': box dim %d is %u (1..256 allowed)", p->name, d, m->box[d]);
            return false;
        }
        if (m->elem_strides[d] < 1 || m->elem_strides[d] > 8) {
            tlrt_errf(err, errlen, "tmap of '%s': element stride %d is %u (1..8 allowed)", p->name, d,
                      m->elem_strides[d]);
            return false;
        }
    }
    int64_t inner_bytes = (int64_t)m->box[m->rank - 1] * tlrt_dtype_bytes(p->dtype);
    if (inner_bytes % 16 != 0) {
        tlrt_errf(err, errlen, "tmap of '%s': innermost box is %lld bytes, not a multiple of 16", p->name,
                  (long long)inner_bytes);
        return false;
    }
    if ((int)m->swizzle < 0 || m->swizzle > TLRT_SWIZZLE_128B || (int)m->l2 < 0 || m->l2 > TLRT_L2_256B ||
        (int)m->oob < 0 || m->oob > TLRT_OOB_NAN) {
        tlrt_errf(err, errlen, "tmap of '%s': bad swizzle / l2 / oob mode", p->name);
        return false;
    }
    int span = tlrt_swizzle_bytes(m->swizzle);
    if (span && inner_bytes > span) {
        tlrt_errf(err, errlen, "tmap of '%s': innermost box is %lld bytes, more than the %s swizzle span", p->name,
                  (long long)inner_bytes, tlrt_swizzle_name(m->swizzle));
        return false;
    }
    if (m->oob == TLRT_OOB_NAN && !(p->dtype == TLRT_F16 || p->dtype == TLRT_BF16 || p->dtype == TLRT_F32)) {
        tlrt_errf(err, errlen, "tmap of '%s': oob=nan needs a floating-point tensor", p->name);
        return false;
    }
    if (!m->im2col) {
        if (m->im2col_exprs) {
            tlrt_errf(err, errlen, "tmap of '%s': an im2col line without mode=im2col", p->name);
            return false;
        }
        return true;
    }
    if (!m->im2col_exprs) {
        tlrt_errf(err, errlen, "tmap of '%s': mode=im2col without its im2col line", p->name);
        return false;
    }
    if (m->rank < 3) {
        tlrt_errf(err, errlen, "tmap of '%s': an im2col map needs a tensor of rank 3..5, not %d", p->name, m->rank);
        return false;
    }
    for (int d = 0; d < m->rank - 2; d++)
        if (m->box[d] != 1) {
            tlrt_errf(err, errlen, "tmap of '%s': an im2col map's box is [1,..,1,PIXELS,CHANNELS]", p->name);
            return false;
        }
    return true;
}

bool tlrt_meta_validate_kernel(const tlrt_kernel_meta *k, char *err, size_t errlen) {
    size_t kn = strnlen(k->name, sizeof k->name);
    if (kn >= sizeof k->name || !tlrt_is_entry_name(k->name, kn)) {
        tlrt_errf(err, errlen, "bad kernel name");
        return false;
    }
    if (k->nsyms < 0 || k->nsyms > TLRT_MAX_SYMS || k->nparams < 0 || k->nparams > TLRT_MAX_PARAMS ||
        k->ntmaps < 0 || k->ntmaps > TLRT_MAX_TMAPS) {
        tlrt_errf(err, errlen, "kernel '%s': too many syms, params or tmaps", k->name);
        return false;
    }
    for (int i = 0; i < k->nsyms; i++) {
        if (!name_ok(k->syms[i], sizeof k->syms[i])) {
            tlrt_errf(err, errlen, "kernel '%s': sym #%d has a bad name", k->name, i);
            return false;
        }
        if (name_taken(k, k->syms[i], i, 0)) {
            tlrt_errf(err, errlen, "kernel '%s': sym '%s' declared twice", k->name, k->syms[i]);
            return false;
        }
    }
    bool sym_used[TLRT_MAX_SYMS] = {0};
    for (int i = 0; i < k->nparams; i++) {
        const tlrt_param_meta *p = &k->params[i];
        if (!name_ok(p->name, sizeof p->name)) {
            tlrt_errf(err, errlen, "kernel '%s': param #%d has a bad name", k->name, i);
            return false;
        }
        if (name_taken(k, p->name, k->nsyms, i)) {
            tlrt_errf(err, errlen, "kernel '%s': name '%s' used twice", k->name, p->name);
            return false;
        }
        if ((int)p->dtype < 0 || p->dtype >= TLRT_DTYPE_COUNT) {
            tlrt_errf(err, errlen, "kernel '%s': param '%s' has a bad dtype", k->name, p->name);
            return false;
        }
        if (p->kind == TLRT_PARAM_SCALAR) continue;
        if (p->kind != TLRT_PARAM_TENSOR) {
            tlrt_errf(err, errlen, "kernel '%s': param '%s' has a bad kind", k->name, p->name);
            return false;
        }
        if (p->rank < 0 || p->rank > TLRT_MAX_RANK) {
            tlrt_errf(err, errlen, "kernel '%s': tensor '%s' has rank %d (0..%d allowed)", k->name, p->name, p->rank,
                      TLRT_MAX_RANK);
            return false;
        }
        if (p->align < 1 || p->align > 4096 || (p->align & (p->align - 1))) {
            tlrt_errf(err, errlen, "kernel '%s': tensor '%s' has align=%d (a power of two up to 4096 expected)",
                      k->name, p->name, p->align);
            return false;
        }
        for (int d = 0; d < p->rank; d++) {
            if (p->dim_sym[d] >= 0) {
                if (p->dim_sym[d] >= k->nsyms) {
                    tlrt_errf(err, errlen, "kernel '%s': tensor '%s' dim %d refers to a missing sym", k->name,
                              p->name, d);
                    return false;
                }
                sym_used[p->dim_sym[d]] = true;
            } else if (p->dim_sym[d] != -1 || p->dims[d] < 1 || p->dims[d] > INT32_MAX) {
                tlrt_errf(err, errlen, "kernel '%s': tensor '%s' dim %d is %lld (1..2^31-1 expected)", k->name,
                          p->name, d, (long long)p->dims[d]);
                return false;
            }
        }
    }
    for (int i = 0; i < k->nsyms; i++)
        if (!sym_used[i]) {
            tlrt_errf(err, errlen, "kernel '%s': sym '%s' is not a dim of any tensor param, so it cannot be bound",
                      k->name, k->syms[i]);
            return false;
        }
    for (int t = 0; t < k->ntmaps; t++)
        if (!validate_tmap(k, t, err, errlen)) return false;
    static const char axis[3] = {'x', 'y', 'z'};
    for (int a = 0; a < 3; a++) {
        char sub[160];
        if (!tlrt_expr_check(&k->grid[a], k, sub, sizeof sub)) {
            tlrt_errf(err, errlen, "kernel '%s': grid %c: %s", k->name, axis[a], sub);
            return false;
        }
    }
    if (k->nchecks < 0 || k->nchecks > TLRT_MAX_CHECKS) {
        tlrt_errf(err, errlen, "kernel '%s': %d checks (0..%d allowed)", k->name, k->nchecks, TLRT_MAX_CHECKS);
        return false;
    }
    for (int c = 0; c < k->nchecks; c++) {
        char sub[160];
        if (k->checks[c].line < 1 || k->checks[c].col < 1 || !tlrt_expr_check(&k->checks[c].cond, k, sub, sizeof sub)) {
            tlrt_errf(err, errlen, "kernel '%s': check #%d: %s", k->name, c, k->checks[c].line < 1 || k->checks[c].col < 1 ? "bad location" : sub);
            return false;
        }
    }
    int64_t nthreads = 1;
    for (int a = 0; a < 3; a++) {
        if (k->threads[a] < 1 || k->threads[a] > 1024) {
            tlrt_errf(err, errlen, "kernel '%s': threads %c is %d (1..1024 allowed)", k->name, axis[a], k->threads[a]);
            return false;
        }
        nthreads *= k->threads[a];
    }
    if (nthreads > 1024 || k->threads[2] > 64) {
        tlrt_errf(err, errlen, "kernel '%s': %lld threads per block (at most 1024, z at most 64)", k->name,
                  (long long)nthreads);
        return false;
    }
    if (k->smem_bytes < 0 || k->smem_bytes > 256 * 1024) {
        tlrt_errf(err, errlen, "kernel '%s': smem %lld bytes (0..262144 allowed)", k->name, (long long)k->smem_bytes);
        return false;
    }
    for (int i = 0; i < TLRT_MAX_SYMS; i++)
        if (k->sym_multiple[i] < 0 || k->sym_multiple[i] > 65536 || (i >= k->nsyms && k->sym_multiple[i] > 1)) {
            tlrt_errf(err, errlen, "kernel '%s': divisible fact #%d is %lld (1..65536 for a declared sym)", k->name, i,
                      (long long)k->sym_multiple[i]);
            return false;
        }
    if (k->persistent < 0 || k->persistent > 32) {
        tlrt_errf(err, errlen, "kernel '%s': persistent %d (0..32 allowed)", k->name, k->persistent);
        return false;
    }
    if (k->has_cluster && k->persistent) {
        tlrt_errf(err, errlen, "kernel '%s': cluster with persistent", k->name);
        return false;
    }
    if (k->grid_sync && (k->persistent || k->has_cluster)) {
        tlrt_errf(err, errlen, "kernel '%s': grid_sync with persistent or cluster", k->name);
        return false;
    }
    if (k->tile_counter && !k->persistent) {
        tlrt_errf(err, errlen, "kernel '%s': tile_counter without persistent", k->name);
        return false;
    }
    return true;
}

/* Same dtype, rank and dims (a sym dim by its name, since the kernel and
 * the function number their syms apart). */
static bool same_tensor(const tlrt_param_meta *a, const tlrt_kernel_meta *ka, const tlrt_param_meta *b,
                        const tlrt_kernel_meta *kb) {
    if (a->kind != TLRT_PARAM_TENSOR || b->kind != TLRT_PARAM_TENSOR || a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++) {
        if ((a->dim_sym[d] >= 0) != (b->dim_sym[d] >= 0)) return false;
        if (a->dim_sym[d] >= 0 ? strcmp(ka->syms[a->dim_sym[d]], kb->syms[b->dim_sym[d]]) != 0 : a->dims[d] != b->dims[d])
            return false;
    }
    return true;
}

bool tlrt_meta_validate_function(const tlrt_module_meta *m, const tlrt_function_meta *f, char *err, size_t errlen) {
    const tlrt_kernel_meta *sig = &f->sig;
    if (!tlrt_meta_validate_kernel(sig, err, errlen)) return false;
    if (sig->ntmaps || sig->persistent || sig->tile_counter || sig->pdl || sig->has_cluster || sig->grid_sync) {
        tlrt_errf(err, errlen, "function '%s': tmap, persistent, tile_counter, pdl, cluster and grid_sync belong to kernels",
                  sig->name);
        return false;
    }
    if (f->nworkspaces < 0 || f->nworkspaces > TLRT_MAX_WORKSPACES) {
        tlrt_errf(err, errlen, "function '%s': %d workspaces (0..%d allowed)", sig->name, f->nworkspaces,
                  TLRT_MAX_WORKSPACES);
        return false;
    }
    for (int w = 0; w < f->nworkspaces; w++) {
        const tlrt_param_meta *p = &f->workspaces[w];
        bool taken = !name_ok(p->name, sizeof p->name) || name_taken(sig, p->name, sig->nsyms, sig->nparams);
        for (int v = 0; v < w && !taken; v++) taken = strcmp(f->workspaces[v].name, p->name) == 0;
        if (taken) {
            tlrt_errf(err, errlen, "function '%s': workspace #%d has a bad or repeated name", sig->name, w);
            return false;
        }
        bool ok = p->kind == TLRT_PARAM_TENSOR && (int)p->dtype >= 0 && p->dtype < TLRT_DTYPE_COUNT && p->rank >= 1 &&
                  p->rank <= TLRT_MAX_RANK;
        for (int d = 0; ok && d < p->rank; d++)
            ok = p->dim_sym[d] >= 0 ? p->dim_sym[d] < sig->nsyms
                                    : p->dim_sym[d] == -1 && p->dims[d] >= 1 && p->dims[d] <= INT32_MAX;
        if (!ok) {
            tlrt_errf(err, errlen, "function '%s': workspace '%s' needs a dtype and 1..%d dims, each 1..2^31-1 or a "
                      "sym of the function", sig->name, p->name, TLRT_MAX_RANK);
            return false;
        }
    }
    if (f->nlaunches < 1 || f->nlaunches > TLRT_MAX_LAUNCHES) {
        tlrt_errf(err, errlen, "function '%s': %d launch lines (1..%d allowed)", sig->name, f->nlaunches,
                  TLRT_MAX_LAUNCHES);
        return false;
    }
    for (int l = 0; l < f->nlaunches; l++) {
        if (f->launches[l] < 0 || f->launches[l] >= m->nkernels) {
            tlrt_errf(err, errlen, "function '%s': launch #%d names no kernel of the module", sig->name, l);
            return false;
        }
        const tlrt_kernel_meta *k = &m->kernels[f->launches[l]];
        for (int i = 0; i < k->nparams; i++) {
            const tlrt_param_meta *p = &k->params[i], *q = NULL;
            for (int j = 0; j < sig->nparams && !q; j++)
                if (strcmp(sig->params[j].name, p->name) == 0) q = &sig->params[j];
            for (int w = 0; w < f->nworkspaces && !q; w++)
                if (strcmp(f->workspaces[w].name, p->name) == 0) q = &f->workspaces[w];
            bool fits = q && (p->kind == TLRT_PARAM_SCALAR ? q->kind == TLRT_PARAM_SCALAR && q->dtype == p->dtype
                                                           : same_tensor(p, k, q, sig));
            if (!fits) {
                tlrt_errf(err, errlen, "function '%s': parameter '%s' of kernel '%s' is %s", sig->name, p->name,
                          k->name, q ? "not of the same kind, dtype and shape in the function"
                                     : "neither a parameter nor a workspace of the function");
                return false;
            }
        }
    }
    return true;
}
