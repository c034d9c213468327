/* The public interpreter entry point (include/tlc/interp.h): source ->
 * checked Tile IR -> the interpreter on the caller's named arguments. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tlc/interp.h"
#include "compile.h"
#include "interp/interp.h"

enum { INTERP_RANK_MAX = (int)(sizeof ((tlc_interp_tensor *)0)->shape / sizeof(int64_t)) };

static char *copy_text(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r) memcpy(r, s, n + 1);
    return r;
}

static tlc_status fail(char **errtext, tlc_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tlc_status fail(char **errtext, tlc_status st, const char *fmt, ...) {
    if (!errtext) return st;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    *errtext = copy_text(buf);
    return st;
}

static tlc_status check_args(const tlc_interp_tensor_arg *tensors, int ntensors, const tlc_interp_scalar_arg *scalars,
                             int nscalars, tir_dtype *dtypes, char **errtext) {
    for (int i = 0; i < ntensors; i++) {
        const tlc_interp_tensor_arg *t = &tensors[i];
        if (!t->name || !t->data || (t->rank > 0 && !t->shape))
            return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: tensor %d has no name, data or shape", i);
        if (t->rank < 0 || t->rank > INTERP_RANK_MAX)
            return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: tensor '%s': rank %d (at most %d)",
                        t->name, t->rank, INTERP_RANK_MAX);
        if (!tir_dtype_parse(tlrt_dtype_name(t->dtype), &dtypes[i]))
            return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: tensor '%s': unknown dtype %d", t->name,
                        (int)t->dtype);
        for (int d = 0; d < t->rank; d++)
            if (t->shape[d] < 0)
                return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: tensor '%s': negative extent", t->name);
    }
    for (int i = 0; i < nscalars; i++)
        if (!scalars[i].name)
            return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: scalar %d has no name", i);
    return TLC_OK;
}

tlc_status tlc_interpret(const char *source, size_t len, const char *source_name, const tlc_jit_define *defines,
                         int ndefines, const char *kernel, const char *arch, const tlc_interp_tensor_arg *tensors,
                         int ntensors, const tlc_interp_scalar_arg *scalars, int nscalars, char **errtext) {
    return tlc_interpret_ex(source, len, source_name, defines, ndefines, kernel, arch, tensors, ntensors, scalars,
                            nscalars, NULL, errtext);
}

tlc_status tlc_interpret_ex(const char *source, size_t len, const char *source_name, const tlc_jit_define *defines,
                            int ndefines, const char *kernel, const char *arch, const tlc_interp_tensor_arg *tensors,
                            int ntensors, const tlc_interp_scalar_arg *scalars, int nscalars,
                            const tlc_interpret_options *options, char **errtext) {
    if (errtext) *errtext = NULL;
    if ((!source && len) || ndefines < 0 || (ndefines && !defines) || ntensors < 0 || (ntensors && !tensors) ||
        nscalars < 0 || (nscalars && !scalars))
        return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: invalid arguments");
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    if (arch && !tlc_arch_parse(arch, &o.arch)) {
        char names[128];
        tlc_arch_names(names, sizeof names, ", ");
        return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: unknown arch '%s' (%s)", arch, names);
    }
    for (int i = 0; i < ndefines; i++)
        if (!defines[i].name || !defines[i].value || !*defines[i].name)
            return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_interpret: define %d has no name or value", i);

    tir_dtype *dtypes = malloc(((size_t)ntensors + 1) * sizeof *dtypes);
    tlc_interp_tensor *targs = calloc((size_t)ntensors + 1, sizeof *targs);
    tlc_interp_scalar *sargs = calloc((size_t)nscalars + 1, sizeof *sargs);
    tlc_define *defs = malloc(((size_t)ndefines + 1) * sizeof *defs);
    tlc_status st = TLC_OK;
    if (!dtypes || !targs || !sargs || !defs) {
        st = fail(errtext, TLC_ERROR_OUT_OF_MEMORY, "tlc_interpret: out of memory");
        goto out;
    }
    st = check_args(tensors, ntensors, scalars, nscalars, dtypes, errtext);
    if (st != TLC_OK) goto out;
    for (int i = 0; i < ntensors; i++) {
        targs[i].name = tensors[i].name;
        targs[i].data = tensors[i].data;
        targs[i].dtype = dtypes[i];
        targs[i].rank = tensors[i].rank;
        for (int d = 0; d < tensors[i].rank; d++) targs[i].shape[d] = tensors[i].shape[d];
    }
    for (int i = 0; i < nscalars; i++)
        sargs[i] = (tlc_interp_scalar){scalars[i].name, scalars[i].is_float, scalars[i].f, scalars[i].i};
    /* The public define type mirrors the compiler's; copy rather than cast. */
    for (int i = 0; i < ndefines; i++) defs[i] = (tlc_define){defines[i].name, defines[i].value};
    o.defines = defs;
    o.ndefines = ndefines;
    o.kernel = kernel;
    o.stop_after = TLC_STAGE_TIR;

    tlc_compilation c;
    const char *name = source_name ? source_name : "<source>";
    if (!tlc_compile_source(&c, name, source ? source : "", source ? len : 0, &o)) {
        st = TLC_ERROR_COMPILE;
        if (errtext) *errtext = copy_text(tlc_sb_cstr(&c.diag.out));
    } else {
        tlc_strbuf err;
        tlc_sb_init(&err);
        tlc_interp_options io = {.reverse = options && options->reverse};
        if (!tlc_interp_run_module(c.tir, &c.src, kernel, targs, ntensors, sargs, nscalars, &io, &err)) {
            st = TLC_ERROR_RUNTIME;
            if (errtext) *errtext = copy_text(tlc_sb_cstr(&err));
        }
        tlc_sb_free(&err);
    }
    tlc_compilation_free(&c);
out:
    free(dtypes);
    free(targs);
    free(sargs);
    free(defs);
    return st;
}
