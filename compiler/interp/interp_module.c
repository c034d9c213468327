/* Runs the kernels of a module in order on one set of named arguments; a
 * function of several kernels runs them in order with its workspaces
 * allocated for the run. */
#include "interp/interp_internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An interpreter of k with its parameters bound from the named arguments;
 * NULL (the reason in err) when one is missing or does not fit. */
static tlc_interp *bind_kernel(const tir_kernel *k, const tlc_source *src, const tlc_interp_tensor *tensors,
                               int ntensors, const tlc_interp_scalar *scalars, int nscalars, tlc_strbuf *err) {
    tlc_interp *it = tlc_interp_create(k, src);
    bool ok = true;
    for (int p = 0; p < k->nparams && ok; p++) {
        const tir_param *pa = &k->params[p];
        bool found = false;
        if (pa->kind == TIR_PARAM_TENSOR) {
            for (int i = 0; i < ntensors && !found; i++)
                if (!strcmp(tensors[i].name, pa->name)) {
                    found = true;
                    ok = tlc_interp_bind_tensor(it, pa->name, tensors[i].data, tensors[i].dtype, tensors[i].rank,
                                                tensors[i].shape);
                }
        } else {
            for (int i = 0; i < nscalars && !found; i++)
                if (!strcmp(scalars[i].name, pa->name)) {
                    found = true;
                    ok = scalars[i].is_float ? tlc_interp_bind_float(it, pa->name, scalars[i].f)
                                             : tlc_interp_bind_int(it, pa->name, scalars[i].i);
                }
        }
        if (!found) {
            tlc_sb_printf(err, "%s:%d:%d: error: no argument for parameter '%s' of %s '%s'\n",
                          src && src->name ? src->name : "<input>", pa->loc.line, pa->loc.col, pa->name,
                          k->function ? "function" : "kernel", k->function ? k->function->name : k->name);
            tlc_interp_destroy(it);
            return NULL;
        }
    }
    if (!ok) {
        tlc_sb_puts(err, tlc_interp_error(it));
        tlc_interp_destroy(it);
        return NULL;
    }
    return it;
}

static bool run_kernel(const tir_kernel *k, const tlc_source *src, const tlc_interp_tensor *tensors,
                       int ntensors, const tlc_interp_scalar *scalars, int nscalars,
                       const tlc_interp_options *opts, tlc_strbuf *err) {
    tlc_interp *it = bind_kernel(k, src, tensors, ntensors, scalars, nscalars, err);
    if (!it) return false;
    tlc_interp_set_options(it, opts);
    bool ok = tlc_interp_run(it);
    if (!ok) tlc_sb_puts(err, tlc_interp_error(it));
    tlc_interp_destroy(it);
    return ok;
}

/* A workspace for one run, its dims from the function's symbolic dims;
 * poisoned like a fresh buffer, since on the GPU it starts uninitialized. */
static bool alloc_workspace(const tir_buffer *b, tlc_interp *sig, tlc_interp_tensor *out, const tlc_source *src,
                            tlc_strbuf *err) {
    memset(out, 0, sizeof *out);
    out->name = b->name;
    out->dtype = b->dtype;
    out->rank = b->rank;
    int64_t n = 1;
    for (int d = 0; d < b->rank; d++) {
        const tir_expr *e = b->shape[d];
        int64_t v = e->kind == TE_INT ? e->u.ival : e->kind == TE_VAR ? tlc_interp_sym_dim(sig, e->u.var->name) : -1;
        if (v < 0 || (v && n > ((int64_t)1 << 32) / v)) {
            tlc_sb_printf(err, "%s:%d:%d: error: workspace '%s' has no size the interpreter can allocate\n",
                          src && src->name ? src->name : "<input>", b->loc.line, b->loc.col, b->name);
            return false;
        }
        out->shape[d] = v;
        n *= v;
    }
    out->data = malloc((size_t)(n ? n : 1) * (size_t)tir_dtype_bytes(b->dtype));
    if (!out->data) {
        tlc_sb_printf(err, "%s:%d:%d: error: out of memory for workspace '%s'\n",
                      src && src->name ? src->name : "<input>", b->loc.line, b->loc.col, b->name);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        if (tir_dtype_is_float(b->dtype)) tlc_host_store_f(out->data, b->dtype, i, NAN);
        else tlc_host_store_i(out->data, b->dtype, i, 0x5eadbeefLL);
    }
    return true;
}

/* The function's arguments bind its signature (symbolic dims checked for
 * consistency), which sizes the workspaces; then its kernels run in order,
 * the workspaces ahead of the caller's tensors of the same name. */
static bool run_function(const tir_function *f, const tlc_source *src, const tlc_interp_tensor *tensors,
                         int ntensors, const tlc_interp_scalar *scalars, int nscalars,
                         const tlc_interp_options *opts, tlc_strbuf *err) {
    tlc_interp *sig = bind_kernel(f->sig, src, tensors, ntensors, scalars, nscalars, err);
    if (!sig) return false;
    bool ok = tlc_interp_run(sig);
    if (!ok) tlc_sb_puts(err, tlc_interp_error(sig));
    tlc_interp_tensor *all = calloc((size_t)(f->nworkspaces + ntensors) + 1, sizeof *all);
    int nws = 0;
    if (!all) ok = false;
    for (int w = 0; ok && w < f->nworkspaces; w++, nws++)
        ok = alloc_workspace(f->workspaces[w], sig, &all[w], src, err);
    tlc_interp_destroy(sig);
    if (ok) memcpy(all + nws, tensors, (size_t)ntensors * sizeof *tensors);
    for (int i = 0; ok && i < f->nkernels; i++)
        ok = run_kernel(f->kernels[i], src, all, nws + ntensors, scalars, nscalars, opts, err);
    for (int w = 0; all && w < nws; w++) free(all[w].data);
    free(all);
    return ok;
}

bool tlc_interp_run_module(const tir_module *m, const tlc_source *src, const char *kernel,
                           const tlc_interp_tensor *tensors, int ntensors,
                           const tlc_interp_scalar *scalars, int nscalars, const tlc_interp_options *opts,
                           tlc_strbuf *err) {
    bool any = false;
    for (int i = 0; i < m->nkernels; i++) {
        const tir_kernel *k = m->kernels[i];
        const tir_function *f = k->function;
        if (!tir_kernel_selected(k, kernel)) continue;
        any = true;
        if (f ? f->kernels[0] == k && !run_function(f, src, tensors, ntensors, scalars, nscalars, opts, err)
              : !run_kernel(k, src, tensors, ntensors, scalars, nscalars, opts, err))
            return false;
    }
    if (!any) {
        tlc_sb_printf(err, "%s: error: no kernel named '%s'\n", src && src->name ? src->name : "<input>",
                      kernel ? kernel : "(any)");
        return false;
    }
    return true;
}
