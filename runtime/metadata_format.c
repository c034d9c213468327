/* Writer of the `// tlc.meta` block, and the small builders codegen uses to
 * fill tlrt_kernel_meta. The writer validates first, so whatever it emits
 * the parser reads back to the same structs. */
#include <stdlib.h>
#include <string.h>
#include "text_util.h"

static void format_dims(tlrt_buf *b, const tlrt_param_meta *p, const tlrt_kernel_meta *k) {
    tlrt_buf_printf(b, "[");
    for (int d = 0; d < p->rank; d++) {
        if (d) tlrt_buf_printf(b, ",");
        if (p->dim_sym[d] >= 0) tlrt_buf_printf(b, "%s", k->syms[p->dim_sym[d]]);
        else tlrt_buf_printf(b, "%lld", (long long)p->dims[d]);
    }
    tlrt_buf_printf(b, "]");
}

/* sym, tensor and scalar lines: a kernel's or a function's parameters */
static void format_params(tlrt_buf *b, const tlrt_kernel_meta *k) {
    for (int i = 0; i < k->nsyms; i++) tlrt_buf_printf(b, TLRT_META_PREFIX "sym %s\n", k->syms[i]);
    for (int i = 0; i < k->nparams; i++) {
        const tlrt_param_meta *p = &k->params[i];
        if (p->kind == TLRT_PARAM_SCALAR) {
            tlrt_buf_printf(b, TLRT_META_PREFIX "scalar %s %s\n", p->name, tlrt_dtype_name(p->dtype));
            continue;
        }
        tlrt_buf_printf(b, TLRT_META_PREFIX "tensor %s %s ", p->name, tlrt_dtype_name(p->dtype));
        format_dims(b, p, k);
        tlrt_buf_printf(b, " align=%d%s\n", p->align, p->strided ? " strided" : "");
    }
}

static void format_checks(tlrt_buf *b, const tlrt_kernel_meta *k) {
    for (int c = 0; c < k->nchecks; c++) {
        tlrt_buf_printf(b, TLRT_META_PREFIX "check %d:%d ", k->checks[c].line, k->checks[c].col);
        tlrt_expr_format(b, &k->checks[c].cond, k);
        tlrt_buf_printf(b, "\n");
    }
}

static void format_function(tlrt_buf *b, const tlrt_module_meta *m, const tlrt_function_meta *f) {
    tlrt_buf_printf(b, TLRT_META_PREFIX "function %s\n", f->sig.name);
    format_params(b, &f->sig);
    for (int w = 0; w < f->nworkspaces; w++) {
        const tlrt_param_meta *p = &f->workspaces[w];
        tlrt_buf_printf(b, TLRT_META_PREFIX "workspace %s %s ", p->name, tlrt_dtype_name(p->dtype));
        format_dims(b, p, &f->sig);
        tlrt_buf_printf(b, "\n");
    }
    for (int l = 0; l < f->nlaunches; l++)
        tlrt_buf_printf(b, TLRT_META_PREFIX "launch %s\n", m->kernels[f->launches[l]].name);
    format_checks(b, &f->sig);
}

/* A tmap's "view" or "im2col" line: n map expressions from first - 1
 * (first 0: no line). */
static void format_map_exprs(tlrt_buf *b, const tlrt_kernel_meta *k, const char *what, int first, int n) {
    if (!first) return;
    tlrt_buf_printf(b, TLRT_META_PREFIX "%s", what);
    for (int i = 0; i < n; i++) {
        tlrt_buf_printf(b, " ");
        tlrt_expr_format(b, &k->map_exprs[first - 1 + i], k);
    }
    tlrt_buf_printf(b, "\n");
}

static void format_kernel(tlrt_buf *b, const tlrt_kernel_meta *k) {
    tlrt_buf_printf(b, TLRT_META_PREFIX "kernel %s\n", k->name);
    format_params(b, k);
    static const char *l2[] = {"none", "64B", "128B", "256B"};
    for (int t = 0; t < k->ntmaps; t++) {
        const tlrt_tmap_meta *m = &k->tmaps[t];
        tlrt_buf_printf(b, TLRT_META_PREFIX "tmap %s box=[", k->params[m->param].name);
        for (int d = 0; d < m->rank; d++) tlrt_buf_printf(b, "%s%u", d ? "," : "", m->box[d]);
        tlrt_buf_printf(b, "] estrides=[");
        for (int d = 0; d < m->rank; d++) tlrt_buf_printf(b, "%s%u", d ? "," : "", m->elem_strides[d]);
        tlrt_buf_printf(b, "] swizzle=%s l2=%s oob=%s%s\n", tlrt_swizzle_name(m->swizzle), l2[m->l2],
                        m->oob == TLRT_OOB_NAN ? "nan" : "zero", m->im2col ? " mode=im2col" : "");
        format_map_exprs(b, k, "view", m->view, m->rank);
        format_map_exprs(b, k, "im2col", m->im2col_exprs, 3);
    }
    for (int i = 0; i < k->nsyms; i++)
        if (k->sym_multiple[i] > 1)
            tlrt_buf_printf(b, TLRT_META_PREFIX "divisible %s %lld\n", k->syms[i], (long long)k->sym_multiple[i]);
    tlrt_buf_printf(b, TLRT_META_PREFIX "grid");
    for (int a = 0; a < 3; a++) {
        tlrt_buf_printf(b, " ");
        tlrt_expr_format(b, &k->grid[a], k);
    }
    if (k->has_cluster) {
        tlrt_buf_printf(b, "\n" TLRT_META_PREFIX "cluster");
        for (int a = 0; a < 3; a++) {
            tlrt_buf_printf(b, " ");
            tlrt_expr_format(b, &k->cluster[a], k);
        }
    }
    tlrt_buf_printf(b, "\n" TLRT_META_PREFIX "threads %d %d %d\n", k->threads[0], k->threads[1], k->threads[2]);
    tlrt_buf_printf(b, TLRT_META_PREFIX "smem %lld\n", (long long)k->smem_bytes);
    if (k->persistent) tlrt_buf_printf(b, TLRT_META_PREFIX "persistent %d\n", k->persistent);
    if (k->tile_counter) tlrt_buf_printf(b, TLRT_META_PREFIX "tile_counter\n");
    if (k->pdl) tlrt_buf_printf(b, TLRT_META_PREFIX "pdl\n");
    if (k->grid_sync) tlrt_buf_printf(b, TLRT_META_PREFIX "grid_sync\n");
    format_checks(b, k);
}

char *tlrt_meta_format(const tlrt_module_meta *m, char *err, size_t errlen) {
    tlrt_module_meta check = {0};
    char sub[400];
    if (!m || m->version != TLRT_META_VERSION) {
        tlrt_errf(err, errlen, "metadata version must be %d", TLRT_META_VERSION);
        return NULL;
    }
    /* Header fields go through the same checks as on the way in. */
    tlrt_buf hdr = {0};
    tlrt_buf_printf(&hdr, TLRT_META_PREFIX "v%d tlc=%.31s arch=%.15s\n" TLRT_META_PREFIX "end\n", m->version,
                    m->tlc_version, m->arch);
    bool ok = !hdr.failed && strchr(m->tlc_version, ' ') == NULL && tlrt_meta_parse(hdr.data, hdr.len, &check, sub, sizeof sub);
    tlrt_meta_free(&check);
    tlrt_buf_free(&hdr);
    if (!ok) {
        tlrt_errf(err, errlen, "bad metadata header: %s", sub);
        return NULL;
    }
    if (m->nkernels < 0 || m->nkernels > TLRT_MAX_KERNELS || (m->nkernels && !m->kernels)) {
        tlrt_errf(err, errlen, "bad kernel count %d", m->nkernels);
        return NULL;
    }
    for (int i = 0; i < m->nkernels; i++) {
        if (!tlrt_meta_validate_kernel(&m->kernels[i], err, errlen)) return NULL;
        for (int j = 0; j < i; j++)
            if (strcmp(m->kernels[i].name, m->kernels[j].name) == 0) {
                tlrt_errf(err, errlen, "kernel '%s' described twice", m->kernels[i].name);
                return NULL;
            }
    }
    if (m->nfunctions < 0 || m->nfunctions > TLRT_MAX_FUNCTIONS || (m->nfunctions && !m->functions)) {
        tlrt_errf(err, errlen, "bad function count %d", m->nfunctions);
        return NULL;
    }
    for (int i = 0; i < m->nfunctions; i++) {
        if (!tlrt_meta_validate_function(m, &m->functions[i], err, errlen)) return NULL;
        for (int j = 0; j < i; j++)
            if (strcmp(m->functions[i].sig.name, m->functions[j].sig.name) == 0) {
                tlrt_errf(err, errlen, "function '%s' described twice", m->functions[i].sig.name);
                return NULL;
            }
    }
    tlrt_buf b = {0};
    tlrt_buf_printf(&b, TLRT_META_PREFIX "v%d tlc=%s arch=%s\n", m->version, m->tlc_version, m->arch);
    for (int i = 0; i < m->nkernels; i++) format_kernel(&b, &m->kernels[i]);
    for (int i = 0; i < m->nfunctions; i++) format_function(&b, m, &m->functions[i]);
    tlrt_buf_printf(&b, TLRT_META_PREFIX "end\n");
    if (b.failed) {
        tlrt_buf_free(&b);
        tlrt_errf(err, errlen, "out of memory");
        return NULL;
    }
    return b.data;
}

/* ---- builders ---- */

static bool set_name(char *dst, size_t cap, const char *src) {
    if (!src) return false;
    size_t n = strlen(src);
    if (n >= cap) return false;
    memcpy(dst, src, n + 1);
    return true;
}

void tlrt_kernel_meta_init(tlrt_kernel_meta *k, const char *name) {
    memset(k, 0, sizeof *k);
    set_name(k->name, sizeof k->name, name);
    for (int a = 0; a < 3; a++) {
        k->threads[a] = 1;
        tlrt_expr_push(&k->grid[a], TLRT_EX_INT, 1);
    }
}

int tlrt_kernel_meta_add_sym(tlrt_kernel_meta *k, const char *name) {
    if (k->nsyms >= TLRT_MAX_SYMS || !set_name(k->syms[k->nsyms], TLRT_MAX_NAME, name)) return -1;
    return k->nsyms++;
}

/* A tensor's fields; false when a name or dim does not fit. */
static bool fill_tensor(tlrt_param_meta *p, int nsyms, const char *name, tlrt_dtype dt, int rank, const int64_t *dims,
                        int align) {
    if (rank < 0 || rank > TLRT_MAX_RANK || (rank && !dims)) return false;
    memset(p, 0, sizeof *p);
    if (!set_name(p->name, sizeof p->name, name)) return false;
    p->kind = TLRT_PARAM_TENSOR;
    p->dtype = dt;
    p->rank = rank;
    p->align = align;
    for (int d = 0; d < rank; d++) {
        if (dims[d] >= 1) {
            p->dims[d] = dims[d];
            p->dim_sym[d] = -1;
        } else {
            if (dims[d] == 0 || -dims[d] - 1 >= nsyms) return false;
            p->dims[d] = -1;
            p->dim_sym[d] = (int)(-dims[d] - 1);
        }
    }
    return true;
}

int tlrt_kernel_meta_add_tensor(tlrt_kernel_meta *k, const char *name, tlrt_dtype dt, int rank, const int64_t *dims,
                                int align) {
    if (k->nparams >= TLRT_MAX_PARAMS || !fill_tensor(&k->params[k->nparams], k->nsyms, name, dt, rank, dims, align))
        return -1;
    return k->nparams++;
}

void tlrt_function_meta_init(tlrt_function_meta *f, const char *name) {
    memset(f, 0, sizeof *f);
    tlrt_kernel_meta_init(&f->sig, name);
}

int tlrt_function_meta_add_workspace(tlrt_function_meta *f, const char *name, tlrt_dtype dt, int rank,
                                     const int64_t *dims) {
    if (f->nworkspaces >= TLRT_MAX_WORKSPACES ||
        !fill_tensor(&f->workspaces[f->nworkspaces], f->sig.nsyms, name, dt, rank, dims, 16))
        return -1;
    return f->nworkspaces++;
}

int tlrt_function_meta_add_launch(tlrt_function_meta *f, int kernel_index) {
    if (f->nlaunches >= TLRT_MAX_LAUNCHES || kernel_index < 0) return -1;
    f->launches[f->nlaunches] = kernel_index;
    return f->nlaunches++;
}

int tlrt_kernel_meta_add_scalar(tlrt_kernel_meta *k, const char *name, tlrt_dtype dt) {
    if (k->nparams >= TLRT_MAX_PARAMS) return -1;
    tlrt_param_meta *p = &k->params[k->nparams];
    memset(p, 0, sizeof *p);
    if (!set_name(p->name, sizeof p->name, name)) return -1;
    p->kind = TLRT_PARAM_SCALAR;
    p->dtype = dt;
    return k->nparams++;
}
