/* The checking half of launching a function of several kernels: the
 * function's arguments bound by tlrt_plan_launch against its signature,
 * its workspaces sized and placed, each kernel's arguments picked by name.
 * Pure (no driver), so it is unit-tested on machines without a GPU. */
#include <stdio.h>
#include <string.h>
#include "text_util.h"
#include "tlc/runtime.h"

enum { WS_ALIGN = 256 };

tlrt_status tlrt_plan_function(const tlrt_function_meta *f, const tlrt_arg *args, int nargs, tlrt_function_plan *plan,
                               char *err, size_t errlen) {
    if (!f || !plan || (nargs > 0 && !args)) {
        tlrt_errf(err, errlen, "tlrt_plan_function: NULL argument");
        return TLRT_ERROR_INVALID_ARGUMENT;
    }
    memset(plan, 0, sizeof *plan);
    tlrt_launch_plan lp;
    tlrt_status st = tlrt_plan_launch(&f->sig, args, nargs, &lp, err, errlen);
    if (st != TLRT_SUCCESS) {
        /* the signature is the function's: say so */
        if (err && strncmp(err, "kernel '", 8) == 0) {
            char msg[1200];
            snprintf(msg, sizeof msg, "function '%s", err + 8);
            tlrt_errf(err, errlen, "%s", msg);
        }
        return st;
    }
    memcpy(plan->sym_values, lp.sym_values, sizeof plan->sym_values);
    uint64_t top = 0;
    for (int w = 0; w < f->nworkspaces; w++) {
        const tlrt_param_meta *p = &f->workspaces[w];
        uint64_t bytes = (uint64_t)tlrt_dtype_bytes(p->dtype);
        bool overflow = false;
        for (int d = 0; d < p->rank; d++) {
            int64_t v = p->dim_sym[d] >= 0 ? lp.sym_values[p->dim_sym[d]] : p->dims[d];
            plan->ws_shape[w][d] = v;
            overflow |= __builtin_mul_overflow(bytes, (uint64_t)v, &bytes);
        }
        plan->ws_offset[w] = top;
        if (overflow || __builtin_add_overflow(top, bytes, &top) || top > ((uint64_t)1 << 48)) {
            tlrt_errf(err, errlen, "function '%s': workspace '%s' is too large", f->sig.name, p->name);
            return TLRT_ERROR_ARG_MISMATCH;
        }
        top = (top + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN;
    }
    /* an empty workspace still gets an address: kernels refuse NULL tensors */
    plan->ws_bytes = f->nworkspaces && !top ? WS_ALIGN : top;
    return TLRT_SUCCESS;
}

int tlrt_function_kernel_args(const tlrt_function_meta *f, const tlrt_kernel_meta *k, const tlrt_function_plan *plan,
                              const tlrt_arg *args, int nargs, tlrt_devptr ws_base, tlrt_arg *out, char *err,
                              size_t errlen) {
    if (!f || !k || !plan || !out || (nargs > 0 && !args) || nargs < f->sig.nparams) {
        tlrt_errf(err, errlen, "tlrt_function_kernel_args: NULL argument or too few arguments");
        return -1;
    }
    for (int i = 0; i < k->nparams; i++) {
        const char *name = k->params[i].name;
        int found = -1;
        for (int j = 0; j < f->sig.nparams && found < 0; j++)
            if (strcmp(f->sig.params[j].name, name) == 0) found = j;
        if (found >= 0) {
            out[i] = args[found];
            continue;
        }
        for (int w = 0; w < f->nworkspaces && found < 0; w++)
            if (strcmp(f->workspaces[w].name, name) == 0) found = w;
        if (found < 0) {
            tlrt_errf(err, errlen, "function '%s': kernel '%s' takes '%s', which the function does not have",
                      f->sig.name, k->name, name);
            return -1;
        }
        const tlrt_param_meta *p = &f->workspaces[found];
        out[i] = tlrt_arg_tensor(ws_base + plan->ws_offset[found], p->dtype, p->rank, plan->ws_shape[found], NULL);
    }
    return k->nparams;
}
