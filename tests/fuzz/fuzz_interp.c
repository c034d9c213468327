/* libFuzzer target for the Tile IR interpreter: any bytes go through sema
 * and, where they compile, every kernel runs in the interpreter on small
 * tensors of random values (fuzz_source.h: options from `# RUN:` lines;
 * a symbolic dim takes its `--dim=NAME=VALUE`, else 8; integer tensors
 * hold 0 .. 3, scalar parameters are 1 or 0.5). A kernel whose tensors
 * have dims the interpreter would have to derive (an expression of
 * symbolic dims), or more than 2^18 elements, is not run. Each kernel runs
 * in both orders (tlc_interp_options.reverse, the second on the first's
 * outputs); a run stops after 2^16 steps (blocks and loop iterations), an
 * error like any other.
 *
 * A bug, reported by abort() after printing the diagnostics:
 * - "internal error" in the compiler's or the interpreter's diagnostics,
 * - an error of either without a file:line:col location (but those about
 *   the command line),
 * - a crash, a hang or a sanitizer report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compile.h"
#include "fuzz_source.h"
#include "interp/interp.h"
#include "interp/random_fill.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TARGET "fuzz_interp"
#define MAX_ELEMS ((int64_t)1 << 18)
#define MAX_STEPS ((int64_t)1 << 16)

static int64_t dim_value(const fuzz_options *o, const char *name) {
    for (int i = 0; i < o->ndims; i++)
        if (strcmp(o->dims[i].name, name) == 0) return o->dims[i].value;
    return 8;
}

/* Kernel k's arguments (false: a shape the harness does not make). */
static bool make_args(const fuzz_options *o, const tir_kernel *k, tlc_interp_tensor *t, int *nt, tlc_interp_scalar *s,
                      int *ns, uint64_t *seed) {
    *nt = *ns = 0;
    for (int i = 0; i < k->nparams; i++) {
        const tir_param *p = &k->params[i];
        if (p->kind != TIR_PARAM_TENSOR) {
            bool f = tir_dtype_is_float(p->var->dtype);
            s[(*ns)++] = (tlc_interp_scalar){p->name, f, 0.5, 1};
            continue;
        }
        if (p->workspace) continue; /* the run allocates it */
        const tir_buffer *b = p->buf;
        if (b->rank > 8) return false;
        tlc_interp_tensor *x = &t[(*nt)++];
        *x = (tlc_interp_tensor){.name = p->name, .dtype = b->dtype, .rank = b->rank};
        int64_t n = 1;
        for (int d = 0; d < b->rank; d++) {
            const tir_expr *e = b->shape[d];
            int64_t v = tir_buffer_dim(b, d);
            if (v < 0 && e->kind == TE_VAR) v = dim_value(o, e->u.var->name);
            if (v < 0) return false;
            x->shape[d] = v;
            if (v && n > MAX_ELEMS / v) return false;
            n *= v;
        }
        x->data = calloc((size_t)(n ? n : 1), (size_t)tir_dtype_bytes(b->dtype));
        if (!x->data) return false;
        tlc_random_fill(x->data, b->dtype, n, seed, 3);
    }
    return true;
}

static void run_kernels(const fuzz_options *o, tlc_compilation *c) {
    const tir_module *m = c->tir;
    uint64_t seed = 1;
    for (int ki = 0; ki < m->nkernels; ki++) {
        const tir_kernel *k = m->kernels[ki];
        if (!tir_kernel_selected(k, o->kernel)) continue;
        /* a function of several kernels runs whole, on its signature's arguments */
        if (k->function && k->function->kernels[0] != k) continue;
        const tir_kernel *sig = k->function ? k->function->sig : k;
        tlc_interp_tensor *t = calloc((size_t)sig->nparams + 1, sizeof *t);
        tlc_interp_scalar *s = calloc((size_t)sig->nparams + 1, sizeof *s);
        int nt = 0, ns = 0;
        if (t && s && make_args(o, sig, t, &nt, s, &ns, &seed)) {
            for (int reverse = 0; reverse < 2; reverse++) { /* both orders (the second on the first's outputs) */
                tlc_strbuf err;
                tlc_sb_init(&err);
                tlc_interp_options io = {.reverse = reverse, .max_steps = MAX_STEPS};
                if (!tlc_interp_run_module(m, &c->src, k->name, t, nt, s, ns, &io, &err))
                    fuzz_check_diagnostics(TARGET, c->src.name, tlc_sb_cstr(&err));
                tlc_sb_free(&err);
            }
        }
        for (int i = 0; t && i < nt; i++) free(t[i].data);
        free(t);
        free(s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_source_text(data, size);
    if (!text) return 0;
    fuzz_options o;
    fuzz_parse_options(&o, text, size);
    tlc_compile_options co;
    fuzz_compile_options(&o, &co);
    co.stop_after = TLC_STAGE_TIR;
    tlc_compilation c;
    bool ok = tlc_compile_source(&c, "fuzz.tl", text, size, &co);
    if (!ok && c.diag.errors == 0) fuzz_fail(TARGET, "sema failed without an error", tlc_sb_cstr(&c.diag.out));
    fuzz_check_diagnostics(TARGET, c.src.name, tlc_sb_cstr(&c.diag.out));
    if (ok) run_kernels(&o, &c);
    tlc_compilation_free(&c);
    free(text);
    return 0;
}
