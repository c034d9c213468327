/* tlc run FILE.tl [-D NAME=VALUE ...] [--kernel=NAME] [--arch=ARCH]
 *         [--input NAME=path.npy ...] [--output NAME=path.npy ...]
 *         [--random] [--seed N] [--dim NAME=VALUE ...] [--scalar NAME=VALUE ...]
 *         [--int-max N] [--reverse] [--max-steps N]
 *
 * Tensors are matched to kernel parameters by name; the kernels of a file
 * run in order and share tensors by name (mla_decode.tl's split kernel
 * feeds its combine kernel). A tensor without --input is filled with
 * deterministic random values under --random (floats ~ normal(0, 1) rounded
 * to the dtype; integers uniform in [0, --int-max], default 0; bool 0/1),
 * otherwise with zeros. Symbolic dims come from --input files or --dim.
 * Scalar parameters come from --scalar (default 1). Every tensor some kernel
 * writes is summarised: shape, dtype, min, max, mean, sum of |x| and the
 * FNV-1a 64-bit hash of its bytes. */
#include "tlc_run.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "interp/float_conv.h"
#include "interp/npy.h"
#include "interp/random_fill.h"
#include "interp/interp.h"

enum { EXIT_ERR = 1, EXIT_USAGE = 2 };
#define MAX_ITEMS 256

typedef struct kv { const char *name; const char *value; } kv;

typedef struct run_opts {
    const char *file;
    const char *kernel;
    tlc_arch arch;
    tlc_define defines[MAX_ITEMS]; int ndefines;
    kv inputs[MAX_ITEMS]; int ninputs;
    kv outputs[MAX_ITEMS]; int noutputs;
    kv dims[MAX_ITEMS]; int ndims;
    kv scalars[MAX_ITEMS]; int nscalars;
    bool random;
    uint64_t seed;
    int64_t int_max;
    int64_t max_steps;
    bool reverse;
} run_opts;

/* One tensor of the run, shared by every kernel that names it. */
typedef struct run_tensor {
    const char *name;
    const tir_buffer *buf;  /* from the first kernel that has it */
    const tir_kernel *kernel;
    tir_dtype dtype;
    int rank;
    int64_t shape[8];
    void *data;
    bool written;
    const char *input;      /* --input path or NULL */
} run_tensor;

typedef struct named_dim { const char *name; int64_t value; const char *from; } named_dim;

static void usage(FILE *f) {
    fputs("usage: tlc run FILE.tl [-D NAME=VALUE ...] [--kernel=NAME] [--arch=ARCH]\n"
          "               [--input NAME=path.npy ...] [--output NAME=path.npy ...]\n"
          "               [--random] [--seed N] [--dim NAME=VALUE ...] [--scalar NAME=VALUE ...]\n"
          "               [--int-max N] [--reverse] [--max-steps N]\n"
          "Runs the kernels of FILE.tl (or only --kernel) in the Tile IR interpreter.\n"
          "  --input NAME=F.npy   tensor parameter NAME from a .npy file (shape and dtype must match)\n"
          "  --output NAME=F.npy  write tensor NAME after the run\n"
          "  --random             fill tensors without --input with random values (default: zeros)\n"
          "  --seed N             random seed (default 0)\n"
          "  --dim NAME=N         value of a symbolic dim not given by an --input\n"
          "  --scalar NAME=V      value of a scalar parameter (default 1)\n"
          "  --int-max N          --random integers are uniform in [0, N] (default 0)\n"
          "  --reverse            blocks and Parallel loop iterations last to first (and the sides of\n"
          "                       a thread-varying condition, concurrent thread ranges): a result that\n"
          "                       differs from the default order's depends on an order the GPU does\n"
          "                       not keep (a race)\n"
          "  --max-steps N        stop a kernel's run with an error after N steps (its blocks and loop\n"
          "                       iterations; default: no limit)\n", f);
}

static bool split_kv(const char *arg, kv *out) {
    size_t n;
    if (!tlc_opt_split_define(arg, &n, &out->value)) return false;
    out->name = strndup(arg, n);
    return out->name != NULL;
}

static bool parse_i64(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

/* Option with a value: "--opt=V" or "--opt V"; NULL when argv[*i] is not
 * that option or its value is missing (then reported as incomplete). */
static const char *opt_value(int argc, char **argv, int *i, const char *opt) {
    const char *v = NULL;
    return tlc_opt_long(opt, argc, argv, i, &v) > 0 ? v : NULL;
}

static int parse_args(int argc, char **argv, run_opts *o) {
    memset(o, 0, sizeof *o);
    o->arch = TLC_DEFAULT_ARCH;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        kv item;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return -1; }
        if (!strcmp(a, "--random")) { o->random = true; continue; }
        if (!strcmp(a, "--reverse")) { o->reverse = true; continue; }
        const char *d = NULL;
        if (tlc_opt_short('D', argc, argv, &i, &d) != 0) {
            if (!d || o->ndefines == MAX_ITEMS || !split_kv(d, &item)) {
                fprintf(stderr, "tlc run: error: -D expects NAME=VALUE\n");
                return EXIT_USAGE;
            }
            int k = 0;
            while (k < o->ndefines && strcmp(o->defines[k].name, item.name) != 0) k++;
            if (k < o->ndefines)
                fprintf(stderr, "tlc run: warning: -D %s given twice ('%s', then '%s'): using '%s'\n", item.name,
                        o->defines[k].value, item.value, item.value);
            else o->ndefines++;
            o->defines[k] = (tlc_define){item.name, item.value};
            continue;
        }
        struct { const char *opt; kv *arr; int *n; } lists[] = {
            {"--input", o->inputs, &o->ninputs}, {"--output", o->outputs, &o->noutputs},
            {"--dim", o->dims, &o->ndims}, {"--scalar", o->scalars, &o->nscalars},
        };
        bool done = false;
        for (size_t l = 0; l < sizeof lists / sizeof lists[0] && !done; l++) {
            if (strncmp(a, lists[l].opt, strlen(lists[l].opt)) != 0) continue;
            v = opt_value(argc, argv, &i, lists[l].opt);
            if (!v) continue;
            if (*lists[l].n == MAX_ITEMS || !split_kv(v, &item)) {
                fprintf(stderr, "tlc run: error: %s expects NAME=VALUE\n", lists[l].opt);
                return EXIT_USAGE;
            }
            lists[l].arr[(*lists[l].n)++] = item;
            done = true;
        }
        if (done) continue;
        if ((v = opt_value(argc, argv, &i, "--kernel"))) { o->kernel = v; continue; }
        if ((v = opt_value(argc, argv, &i, "--arch"))) {
            if (!tlc_arch_parse(v, &o->arch)) {
                fprintf(stderr, "tlc run: error: unknown --arch '%s'\n", v);
                return EXIT_USAGE;
            }
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "--seed"))) {
            int64_t s;
            if (!parse_i64(v, &s)) { fprintf(stderr, "tlc run: error: bad --seed '%s'\n", v); return EXIT_USAGE; }
            o->seed = (uint64_t)s;
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "--max-steps"))) {
            if (!parse_i64(v, &o->max_steps) || o->max_steps < 1) {
                fprintf(stderr, "tlc run: error: bad --max-steps '%s' (a positive count)\n", v);
                return EXIT_USAGE;
            }
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "--int-max"))) {
            if (!parse_i64(v, &o->int_max) || o->int_max < 0) {
                fprintf(stderr, "tlc run: error: bad --int-max '%s'\n", v);
                return EXIT_USAGE;
            }
            continue;
        }
        if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tlc run: error: unknown or incomplete option '%s'\n", a);
            return EXIT_USAGE;
        }
        if (o->file) { fprintf(stderr, "tlc run: error: more than one input file\n"); return EXIT_USAGE; }
        o->file = a;
    }
    if (!o->file) {
        fprintf(stderr, "tlc run: error: no input file\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    return 0;
}

static void free_opts(run_opts *o) {
    for (int i = 0; i < o->ndefines; i++) free((void *)o->defines[i].name);
    for (int i = 0; i < o->ninputs; i++) free((void *)o->inputs[i].name);
    for (int i = 0; i < o->noutputs; i++) free((void *)o->outputs[i].name);
    for (int i = 0; i < o->ndims; i++) free((void *)o->dims[i].name);
    for (int i = 0; i < o->nscalars; i++) free((void *)o->scalars[i].name);
}

static uint64_t fnv1a(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001b3ULL; }
    return h;
}

static int64_t elems_of(const run_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= t->shape[d];
    return n;
}

static void summarize(const run_tensor *t) {
    int64_t n = elems_of(t);
    double mn = INFINITY, mx = -INFINITY, sum = 0, sabs = 0;
    int64_t nan = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = tlc_host_load_f(t->data, t->dtype, i);
        if (isnan(v)) { nan++; continue; }
        if (v < mn) mn = v;
        if (v > mx) mx = v;
        sum += v;
        sabs += fabs(v);
    }
    printf("%s: shape [", t->name);
    for (int d = 0; d < t->rank; d++) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    printf("] %s  min %.6g  max %.6g  mean %.6g  sum|x| %.6f  fnv64 %016llx", tir_dtype_name(t->dtype),
           n - nan ? mn : NAN, n - nan ? mx : NAN, n - nan ? sum / (double)(n - nan) : NAN, sabs,
           (unsigned long long)fnv1a(t->data, (size_t)n * (size_t)tir_dtype_bytes(t->dtype)));
    if (nan) printf("  NaN %lld", (long long)nan);
    putchar('\n');
}

static named_dim *find_dim(named_dim *dims, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(dims[i].name, name)) return &dims[i];
    return NULL;
}

/* e with the dims known so far put in, folded to a constant (NULL: some
 * dim is not known, or e is not an expression of sizes). */
static tir_expr *dims_folded(tlc_arena *a, const tir_expr *e, named_dim *dims, int n, int depth) {
    if (depth > 64) return NULL;
    if (e->kind == TE_INT) return (tir_expr *)e;
    if (e->kind == TE_VAR && e->u.var->kind == TV_SYM_DIM) {
        named_dim *d = find_dim(dims, n, e->u.var->name);
        return d ? tir_int(a, d->value, e->loc) : NULL;
    }
    if (e->kind != TE_BINARY) return NULL;
    tir_expr *x = dims_folded(a, e->u.bin.a, dims, n, depth + 1);
    tir_expr *y = x ? dims_folded(a, e->u.bin.b, dims, n, depth + 1) : NULL;
    tir_fold_status st;
    tir_expr *r = y ? tir_binary_fold(a, e->u.bin.op, x, y, e->loc, &st) : NULL;
    return r && r->kind == TE_INT ? r : NULL;
}

/* A dimension the kernel gives as an expression of sizes (docs/language.md
 * 5.2: a symbolic dim its launch checks equals the expression): the
 * expression's value from the dims known so far. */
static bool derived_dim(tlc_arena *a, const tir_kernel *k, const tir_var *v, named_dim *dims, int n, int64_t *out) {
    for (int i = 0; i < k->nchecks; i++) {
        const tir_expr *c = k->checks[i].cond;
        if (c->kind != TE_BINARY || c->u.bin.op != TB_EQ || c->u.bin.a->kind != TE_VAR || c->u.bin.a->u.var != v)
            continue;
        tir_expr *r = dims_folded(a, c->u.bin.b, dims, n, 0);
        if (r && r->u.ival >= 0) {
            *out = r->u.ival;
            return true;
        }
    }
    return false;
}

static const char *lookup(const kv *items, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(items[i].name, name)) return items[i].value;
    return NULL;
}

static int run(const run_opts *o) {
    size_t len;
    char *text = tlc_read_input(o->file, &len);
    if (!text) {
        fprintf(stderr, "tlc run: error: cannot open '%s': %s\n", o->file, strerror(errno));
        return EXIT_ERR;
    }
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    co.arch = o->arch;
    co.defines = o->defines;
    co.ndefines = o->ndefines;
    co.kernel = o->kernel;
    co.stop_after = TLC_STAGE_TIR;
    tlc_compilation c;
    bool ok = tlc_compile_source(&c, o->file, text, len, &co);
    free(text);
    fputs(tlc_sb_cstr(&c.diag.out), stderr);
    if (!ok) { tlc_compilation_free(&c); return EXIT_ERR; }

    int status = EXIT_ERR;
    run_tensor tensors[MAX_ITEMS];
    int nt = 0;
    named_dim dims[2 * MAX_ITEMS + 1];
    int nd = 0;
    tlc_npy npys[MAX_ITEMS];
    int nnpy = 0;
    tlc_interp_tensor targs[MAX_ITEMS];
    tlc_interp_scalar sargs[MAX_ITEMS];
    int ns = 0;
    char err[1024];
    const tir_module *m = c.tir;

    /* Collect tensors and scalars by name over the kernels that run. */
    for (int ki = 0; ki < m->nkernels; ki++) {
        const tir_kernel *k = m->kernels[ki];
        if (!tir_kernel_selected(k, o->kernel)) continue;
        for (int p = 0; p < k->nparams; p++) {
            const tir_param *pa = &k->params[p];
            if (pa->workspace) continue; /* the run allocates it */
            if (pa->kind == TIR_PARAM_SCALAR) {
                bool seen = false;
                for (int i = 0; i < ns; i++) seen |= !strcmp(sargs[i].name, pa->name);
                if (seen) continue;
                if (ns == MAX_ITEMS) goto too_many;
                tlc_interp_scalar *s = &sargs[ns++];
                memset(s, 0, sizeof *s);
                s->name = pa->name;
                s->is_float = tir_dtype_is_float(pa->var->dtype);
                const char *v = lookup(o->scalars, o->nscalars, pa->name);
                if (!v) {
                    s->f = 1.0;
                    s->i = 1;
                    fprintf(stderr, "%s: note: scalar '%s' not given (--scalar %s=V): using 1\n", o->file,
                            pa->name, pa->name);
                } else {
                    char *end;
                    errno = 0;
                    if (s->is_float) s->f = strtod(v, &end);
                    else s->i = strtoll(v, &end, 0);
                    if (errno || end == v || *end) {
                        fprintf(stderr, "tlc run: error: bad value '%s' for scalar '%s'\n", v, pa->name);
                        goto out;
                    }
                }
                continue;
            }
            run_tensor *t = NULL;
            for (int i = 0; i < nt; i++)
                if (!strcmp(tensors[i].name, pa->name)) t = &tensors[i];
            if (t) {
                if (t->dtype != pa->buf->dtype || t->rank != pa->buf->rank) {
                    fprintf(stderr, "%s: error: tensor '%s' is %s rank %d in kernel '%s' but %s rank %d in '%s'\n",
                            o->file, pa->name, tir_dtype_name(t->dtype), t->rank, t->kernel->name,
                            tir_dtype_name(pa->buf->dtype), pa->buf->rank, k->name);
                    goto out;
                }
            } else {
                if (nt == MAX_ITEMS) goto too_many;
                t = &tensors[nt++];
                memset(t, 0, sizeof *t);
                t->name = pa->name;
                t->buf = pa->buf;
                t->kernel = k;
                t->dtype = pa->buf->dtype;
                t->rank = pa->buf->rank;
                t->input = lookup(o->inputs, o->ninputs, pa->name);
            }
            t->written |= tlc_interp_param_written(k, p);
        }
    }
    for (int i = 0; i < o->ninputs; i++) {
        bool found = false;
        for (int j = 0; j < nt; j++) found |= !strcmp(tensors[j].name, o->inputs[i].name);
        if (!found) {
            fprintf(stderr, "tlc run: error: --input '%s': no tensor parameter of that name\n", o->inputs[i].name);
            goto out;
        }
    }
    for (int i = 0; i < o->noutputs; i++) {
        bool found = false;
        for (int j = 0; j < nt; j++) found |= !strcmp(tensors[j].name, o->outputs[i].name);
        if (!found) {
            fprintf(stderr, "tlc run: error: --output '%s': no tensor parameter of that name\n", o->outputs[i].name);
            goto out;
        }
    }
    for (int i = 0; i < o->ndims; i++) {
        int64_t v;
        if (!parse_i64(o->dims[i].value, &v) || v < 0) {
            fprintf(stderr, "tlc run: error: bad --dim value '%s'\n", o->dims[i].value);
            goto out;
        }
        dims[nd++] = (named_dim){o->dims[i].name, v, "--dim"};
    }

    /* Shapes: .npy files first (they bind symbolic dims), then the rest. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nt; i++) {
            run_tensor *t = &tensors[i];
            if ((pass == 0) != (t->input != NULL)) continue;
            tlc_npy *np = NULL;
            if (t->input) {
                np = &npys[nnpy];
                if (!tlc_npy_read(t->input, np, err, sizeof err)) {
                    fprintf(stderr, "tlc run: error: %s\n", err);
                    goto out;
                }
                nnpy++;
                if (!tlc_npy_matches(np, t->dtype)) {
                    fprintf(stderr, "tlc run: error: %s: dtype '%s' (%s) does not match parameter '%s' (%s; expected descr '%s')\n",
                            t->input, np->descr, tir_dtype_name(np->dtype), t->name, tir_dtype_name(t->dtype),
                            tlc_npy_descr(t->dtype));
                    goto out;
                }
                if (np->rank != t->rank) {
                    fprintf(stderr, "tlc run: error: %s: rank %d does not match parameter '%s' (rank %d)\n",
                            t->input, np->rank, t->name, t->rank);
                    goto out;
                }
                t->data = np->data;
            }
            for (int d = 0; d < t->rank; d++) {
                const tir_expr *e = t->buf->shape[d];
                int64_t want = -1;
                const char *sym = NULL;
                if (e->kind == TE_INT) want = e->u.ival;
                else if (e->kind == TE_VAR) {
                    sym = e->u.var->name;
                    named_dim *nd_ = find_dim(dims, nd, sym);
                    if (nd_) want = nd_->value;
                }
                if (np) {
                    if (want >= 0 && want != np->shape[d]) {
                        fprintf(stderr, "tlc run: error: %s: shape mismatch for '%s' dim %d: file has %lld, expected %lld%s%s%s\n",
                                t->input, t->name, d, (long long)np->shape[d], (long long)want,
                                sym ? " (" : "", sym ? sym : "", sym ? ")" : "");
                        goto out;
                    }
                    if (want < 0 && sym && nd < 2 * MAX_ITEMS) dims[nd++] = (named_dim){sym, np->shape[d], t->input};
                    t->shape[d] = np->shape[d];
                } else {
                    if (want < 0 && sym && nd < 2 * MAX_ITEMS && derived_dim(&c.arena, t->kernel, e->u.var, dims, nd, &want))
                        dims[nd++] = (named_dim){sym, want, "its expression"};
                    if (want < 0) {
                        fprintf(stderr, "tlc run: error: tensor '%s' dim %d: symbolic dim '%s' has no value "
                                        "(give --dim %s=N or an --input that has it)\n",
                                t->name, d, sym ? sym : "?", sym ? sym : "NAME");
                        goto out;
                    }
                    t->shape[d] = want;
                }
            }
            if (!np) {
                int64_t n = 1;
                for (int d = 0; d < t->rank; d++) {
                    if (t->shape[d] && n > ((int64_t)1 << 32) / t->shape[d]) {
                        fprintf(stderr, "tlc run: error: tensor '%s' is too large for the interpreter\n", t->name);
                        goto out;
                    }
                    n *= t->shape[d];
                }
                t->data = calloc((size_t)(n ? n : 1), (size_t)tir_dtype_bytes(t->dtype));
                if (!t->data) { fprintf(stderr, "tlc run: error: out of memory\n"); goto out; }
                if (o->random) {
                    uint64_t st = o->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i * 0x632be59bd9b4e019ULL + 1;
                    tlc_random_fill(t->data, t->dtype, n, &st, o->int_max);
                    if (!tir_dtype_is_float(t->dtype) && t->dtype != TIR_BOOL && !t->written)
                        fprintf(stderr, "%s: note: integer tensor '%s' filled with values in [0, %lld] "
                                        "(--int-max N, or --input %s=file.npy)\n",
                                o->file, t->name, (long long)o->int_max, t->name);
                } else if (!t->written) {
                    fprintf(stderr, "%s: note: tensor '%s' has no --input: zeros (use --random or --input)\n",
                            o->file, t->name);
                }
            }
        }

    for (int i = 0; i < nt; i++) {
        targs[i].name = tensors[i].name;
        targs[i].data = tensors[i].data;
        targs[i].dtype = tensors[i].dtype;
        targs[i].rank = tensors[i].rank;
        memcpy(targs[i].shape, tensors[i].shape, sizeof targs[i].shape);
    }
    if (!o->kernel && m->nkernels > 1) {
        fprintf(stderr, "%s: note: running kernels", o->file);
        for (int ki = 0; ki < m->nkernels; ki++) fprintf(stderr, "%s %s", ki ? "," : "", m->kernels[ki]->name);
        fprintf(stderr, " in order, sharing tensors by name (--kernel=NAME runs one)\n");
    }
    tlc_strbuf eb;
    tlc_sb_init(&eb);
    tlc_interp_options io = {.reverse = o->reverse, .max_steps = o->max_steps};
    ok = tlc_interp_run_module(m, &c.src, o->kernel, targs, nt, sargs, ns, &io, &eb);
    fputs(tlc_sb_cstr(&eb), stderr);
    tlc_sb_free(&eb);
    if (!ok) goto out;
    for (int i = 0; i < nt; i++)
        if (tensors[i].written) summarize(&tensors[i]);
    for (int i = 0; i < o->noutputs; i++)
        for (int j = 0; j < nt; j++)
            if (!strcmp(tensors[j].name, o->outputs[i].name) &&
                !tlc_npy_write(o->outputs[i].value, tensors[j].dtype, tensors[j].rank, tensors[j].shape,
                               tensors[j].data, err, sizeof err)) {
                fprintf(stderr, "tlc run: error: %s\n", err);
                goto out;
            }
    status = 0;
    goto out;
too_many:
    fprintf(stderr, "tlc run: error: too many parameters\n");
out:
    for (int i = 0; i < nt; i++)
        if (!tensors[i].input) free(tensors[i].data);
    for (int i = 0; i < nnpy; i++) tlc_npy_free(&npys[i]);
    tlc_compilation_free(&c);
    return status;
}

int tlc_run_main(int argc, char **argv) {
    run_opts *o = malloc(sizeof *o);
    if (!o) return EXIT_ERR;
    int r = parse_args(argc, argv, o);
    if (r == 0) r = run(o);
    else if (r < 0) r = 0;
    free_opts(o);
    free(o);
    return r;
}
