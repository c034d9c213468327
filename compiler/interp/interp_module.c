/* Runs the kernels of a module in order on one set of named arguments. */
#include "interp/interp_internal.h"
#include <string.h>

static bool run_kernel(const tir_kernel *k, const tlc_source *src, const tlc_interp_tensor *tensors,
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
            tlc_sb_printf(err, "%s: error: no argument for parameter '%s' of kernel '%s'\n",
                          src && src->name ? src->name : "<input>", pa->name, k->name);
            tlc_interp_destroy(it);
            return false;
        }
    }
    if (ok) ok = tlc_interp_run(it);
    if (!ok) tlc_sb_puts(err, tlc_interp_error(it));
    tlc_interp_destroy(it);
    return ok;
}

bool tlc_interp_run_module(const tir_module *m, const tlc_source *src, const char *kernel,
                           const tlc_interp_tensor *tensors, int ntensors,
                           const tlc_interp_scalar *scalars, int nscalars, tlc_strbuf *err) {
    bool any = false;
    for (int i = 0; i < m->nkernels; i++) {
        const tir_kernel *k = m->kernels[i];
        if (kernel && strcmp(kernel, k->name)) continue;
        any = true;
        if (!run_kernel(k, src, tensors, ntensors, scalars, nscalars, err)) return false;
    }
    if (!any) {
        tlc_sb_printf(err, "%s: error: no kernel named '%s'\n", src && src->name ? src->name : "<input>",
                      kernel ? kernel : "(any)");
        return false;
    }
    return true;
}
