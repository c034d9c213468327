/* Reader of the `// tlc.meta` block (format: include/tlc/metadata.h). Every
 * input is untrusted: lines are length-limited, numbers range-checked, and
 * the result is validated before it is returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text_util.h"

enum { MAX_LINE = 2048, MAX_WORDS = 16 };

typedef struct parser {
    tlrt_module_meta *m;
    tlrt_kernel_meta *k; /* open kernel, or the open function's signature, or NULL */
    tlrt_function_meta *f; /* open function or NULL */
    int fcap;
    bool have_grid, have_threads, have_smem, seen_param, seen_tmap;
    int cap;
    char *err;
    size_t errlen;
    long line;
} parser;

static bool fail(parser *ps, const char *fmt, const char *a, const char *b) {
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    tlrt_errf(ps->err, ps->errlen, "tlc.meta line %ld: %s", ps->line, msg);
    return false;
}

static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!*s) return false;
    bool neg = *s == '-';
    if (neg) s++;
    if (!*s) return false;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        if (v > (INT64_MAX - 9) / 10) return false;
        v = v * 10 + (*s - '0');
    }
    if (neg) v = -v;
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* "[a,b,c]" -> items (pointers into s, which is modified). */
static int split_list(char *s, char **items, int max) {
    size_t n = strlen(s);
    if (n < 2 || s[0] != '[' || s[n - 1] != ']') return -1;
    s[n - 1] = 0;
    s++;
    if (!*s) return 0;
    int count = 0;
    for (;;) {
        if (count == max) return -1;
        items[count++] = s;
        char *c = strchr(s, ',');
        if (!c) break;
        *c = 0;
        s = c + 1;
    }
    for (int i = 0; i < count; i++)
        if (!*items[i]) return -1;
    return count;
}

static bool copy_name(char *dst, size_t cap, const char *src) {
    size_t n = strlen(src);
    if (n >= cap) return false;
    memcpy(dst, src, n + 1);
    return true;
}

static bool close_kernel(parser *ps) {
    tlrt_kernel_meta *k = ps->k;
    if (!k) return true;
    if (ps->f) {
        char sub[400];
        bool ok = tlrt_meta_validate_function(ps->m, ps->f, sub, sizeof sub);
        ps->k = NULL;
        ps->f = NULL;
        return ok ? true : fail(ps, "%s", sub, NULL);
    }
    if (!ps->have_grid) return fail(ps, "kernel '%s' has no grid line", k->name, NULL);
    if (!ps->have_threads) return fail(ps, "kernel '%s' has no threads line", k->name, NULL);
    char sub[400];
    if (!tlrt_meta_validate_kernel(k, sub, sizeof sub)) return fail(ps, "%s", sub, NULL);
    ps->k = NULL;
    return true;
}

static bool do_header(parser *ps, char **w, int nw) {
    tlrt_module_meta *m = ps->m;
    if (nw < 1 || w[0][0] != 'v') return fail(ps, "the first tlc.meta line must be 'v1 tlc=VERSION arch=SM'", NULL, NULL);
    int64_t ver;
    if (!parse_i64(w[0] + 1, 0, 1000000, &ver)) return fail(ps, "bad format version '%s'", w[0], NULL);
    if (ver != TLRT_META_VERSION) return fail(ps, "unsupported tlc.meta format %s (this runtime reads v1)", w[0], NULL);
    m->version = (int)ver;
    bool have_tlc = false, have_arch = false;
    for (int i = 1; i < nw; i++) {
        if (strncmp(w[i], "tlc=", 4) == 0 && !have_tlc) {
            if (!w[i][4] || !copy_name(m->tlc_version, sizeof m->tlc_version, w[i] + 4))
                return fail(ps, "bad tlc version '%s'", w[i], NULL);
            have_tlc = true;
        } else if (strncmp(w[i], "arch=", 5) == 0 && !have_arch) {
            const char *a = w[i] + 5;
            size_t n = strlen(a), d = 3;
            bool ok = n >= 5 && n < sizeof m->arch && strncmp(a, "sm_", 3) == 0;
            while (ok && d < n && a[d] >= '0' && a[d] <= '9') d++;
            ok = ok && d >= 5 && (d == n || (d + 1 == n && a[d] == 'a'));
            if (!ok) return fail(ps, "bad arch '%s' (expected e.g. sm_90a)", a, NULL);
            memcpy(m->arch, a, n + 1);
            have_arch = true;
        } else {
            return fail(ps, "unexpected '%s' in the header line", w[i], NULL);
        }
    }
    if (!have_tlc || !have_arch) return fail(ps, "the header needs tlc=VERSION and arch=SM", NULL, NULL);
    return true;
}

static bool do_kernel(parser *ps, char **w, int nw) {
    if (!close_kernel(ps)) return false;
    if (nw != 1) return fail(ps, "expected 'kernel NAME'", NULL, NULL);
    if (!tlrt_is_entry_name(w[0], strlen(w[0])) || strlen(w[0]) >= TLRT_MAX_KERNEL_NAME)
        return fail(ps, "bad kernel name '%.200s'", w[0], NULL);
    tlrt_module_meta *m = ps->m;
    for (int i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, w[0]) == 0) return fail(ps, "kernel '%s' described twice", w[0], NULL);
    if (m->nkernels == TLRT_MAX_KERNELS) return fail(ps, "too many kernels", NULL, NULL);
    if (m->nkernels == ps->cap) {
        int cap = ps->cap ? ps->cap * 2 : 4;
        tlrt_kernel_meta *ks = realloc(m->kernels, (size_t)cap * sizeof *ks);
        if (!ks) return fail(ps, "out of memory", NULL, NULL);
        m->kernels = ks;
        ps->cap = cap;
    }
    ps->k = &m->kernels[m->nkernels++];
    memset(ps->k, 0, sizeof *ps->k);
    memcpy(ps->k->name, w[0], strlen(w[0]) + 1);
    ps->k->threads[0] = ps->k->threads[1] = ps->k->threads[2] = 0;
    ps->have_grid = ps->have_threads = ps->have_smem = ps->seen_param = ps->seen_tmap = false;
    return true;
}

/* "function NAME" */
static bool do_function(parser *ps, char **w, int nw) {
    if (!close_kernel(ps)) return false;
    if (nw != 1) return fail(ps, "expected 'function NAME'", NULL, NULL);
    if (!tlrt_is_ident(w[0], strlen(w[0])) || strlen(w[0]) >= TLRT_MAX_KERNEL_NAME)
        return fail(ps, "bad function name '%.200s'", w[0], NULL);
    tlrt_module_meta *m = ps->m;
    for (int i = 0; i < m->nfunctions; i++)
        if (strcmp(m->functions[i].sig.name, w[0]) == 0) return fail(ps, "function '%s' described twice", w[0], NULL);
    if (m->nfunctions == TLRT_MAX_FUNCTIONS) return fail(ps, "too many functions", NULL, NULL);
    if (m->nfunctions == ps->fcap) {
        int cap = ps->fcap ? ps->fcap * 2 : 2;
        tlrt_function_meta *fs = realloc(m->functions, (size_t)cap * sizeof *fs);
        if (!fs) return fail(ps, "out of memory", NULL, NULL);
        m->functions = fs;
        ps->fcap = cap;
    }
    ps->f = &m->functions[m->nfunctions++];
    tlrt_function_meta_init(ps->f, w[0]);
    ps->k = &ps->f->sig;
    ps->have_grid = ps->have_threads = ps->have_smem = ps->seen_param = ps->seen_tmap = false;
    return true;
}

static int find_sym(const tlrt_kernel_meta *k, const char *s) {
    for (int i = 0; i < k->nsyms; i++)
        if (strcmp(k->syms[i], s) == 0) return i;
    return -1;
}

static int find_param(const tlrt_kernel_meta *k, const char *s) {
    for (int i = 0; i < k->nparams; i++)
        if (strcmp(k->params[i].name, s) == 0) return i;
    return -1;
}

static bool do_sym(parser *ps, char **w, int nw) {
    tlrt_kernel_meta *k = ps->k;
    if (nw != 1) return fail(ps, "expected 'sym NAME'", NULL, NULL);
    if (ps->seen_param || ps->seen_tmap || ps->have_grid) return fail(ps, "sym lines must come before params", NULL, NULL);
    if (k->nsyms == TLRT_MAX_SYMS) return fail(ps, "too many syms", NULL, NULL);
    if (!tlrt_is_ident(w[0], strlen(w[0])) || !copy_name(k->syms[k->nsyms], TLRT_MAX_NAME, w[0]))
        return fail(ps, "bad sym name '%.100s'", w[0], NULL);
    if (find_sym(k, w[0]) >= 0) return fail(ps, "sym '%s' declared twice", w[0], NULL);
    k->nsyms++;
    return true;
}

static tlrt_param_meta *new_param(parser *ps, const char *name, const char *dtype) {
    tlrt_kernel_meta *k = ps->k;
    if (ps->seen_tmap || ps->have_grid) {
        fail(ps, "params must come before tmap and grid lines", NULL, NULL);
        return NULL;
    }
    if (k->nparams == TLRT_MAX_PARAMS) {
        fail(ps, "too many params", NULL, NULL);
        return NULL;
    }
    tlrt_param_meta *p = &k->params[k->nparams];
    memset(p, 0, sizeof *p);
    if (!tlrt_is_ident(name, strlen(name)) || !copy_name(p->name, sizeof p->name, name)) {
        fail(ps, "bad param name '%.100s'", name, NULL);
        return NULL;
    }
    if (find_param(k, name) >= 0 || find_sym(k, name) >= 0) {
        fail(ps, "name '%s' used twice", name, NULL);
        return NULL;
    }
    if (!tlrt_dtype_parse(dtype, &p->dtype)) {
        fail(ps, "unknown dtype '%.40s'", dtype, NULL);
        return NULL;
    }
    ps->seen_param = true;
    return p;
}

/* "[d0,d1,...]": constants or the open kernel's syms. */
static bool parse_dims(parser *ps, char *list, tlrt_param_meta *p) {
    char *items[TLRT_MAX_RANK];
    int r = split_list(list, items, TLRT_MAX_RANK);
    if (r < 0) return fail(ps, "bad dims for tensor '%s' (expected [d0,d1,...], at most 8)", p->name, NULL);
    p->rank = r;
    for (int d = 0; d < r; d++) {
        int s = find_sym(ps->k, items[d]);
        if (s >= 0) {
            p->dim_sym[d] = s;
            p->dims[d] = -1;
        } else if (parse_i64(items[d], 1, INT32_MAX, &p->dims[d])) {
            p->dim_sym[d] = -1;
        } else {
            return fail(ps, "tensor dim '%.60s' is neither a declared sym nor an integer in 1..2^31-1", items[d], NULL);
        }
    }
    return true;
}

static bool do_tensor(parser *ps, char **w, int nw) {
    if (nw < 3 || nw > 5) return fail(ps, "expected 'tensor NAME DTYPE [DIMS] align=N [strided]'", NULL, NULL);
    tlrt_param_meta *p = new_param(ps, w[0], w[1]);
    if (!p) return false;
    p->kind = TLRT_PARAM_TENSOR;
    p->align = 16;
    if (!parse_dims(ps, w[2], p)) return false;
    if (nw == 5) {
        if (strcmp(w[4], "strided") != 0) return fail(ps, "bad '%.60s' (expected 'strided')", w[4], NULL);
        p->strided = true;
    }
    if (nw >= 4) {
        int64_t a;
        if (strncmp(w[3], "align=", 6) != 0 || !parse_i64(w[3] + 6, 1, 4096, &a) || (a & (a - 1)))
            return fail(ps, "bad '%.60s' (expected align=POWER_OF_TWO)", w[3], NULL);
        p->align = (int)a;
    }
    ps->k->nparams++;
    return true;
}

static bool do_scalar(parser *ps, char **w, int nw) {
    if (nw != 2) return fail(ps, "expected 'scalar NAME DTYPE'", NULL, NULL);
    tlrt_param_meta *p = new_param(ps, w[0], w[1]);
    if (!p) return false;
    p->kind = TLRT_PARAM_SCALAR;
    ps->k->nparams++;
    return true;
}

/* "workspace NAME DTYPE [DIMS]" (a function's) */
static bool do_workspace(parser *ps, char **w, int nw) {
    tlrt_function_meta *f = ps->f;
    if (nw != 3) return fail(ps, "expected 'workspace NAME DTYPE [DIMS]'", NULL, NULL);
    if (f->nlaunches) return fail(ps, "workspace lines must come before the launch lines", NULL, NULL);
    if (f->nworkspaces == TLRT_MAX_WORKSPACES) return fail(ps, "too many workspaces", NULL, NULL);
    tlrt_param_meta *p = &f->workspaces[f->nworkspaces];
    memset(p, 0, sizeof *p);
    if (!tlrt_is_ident(w[0], strlen(w[0])) || !copy_name(p->name, sizeof p->name, w[0]))
        return fail(ps, "bad workspace name '%.100s'", w[0], NULL);
    if (!tlrt_dtype_parse(w[1], &p->dtype)) return fail(ps, "unknown dtype '%.40s'", w[1], NULL);
    p->kind = TLRT_PARAM_TENSOR;
    p->align = 16;
    if (!parse_dims(ps, w[2], p)) return false;
    f->nworkspaces++;
    ps->seen_param = true;
    return true;
}

/* "launch KERNEL" (a function's): a kernel described earlier */
static bool do_launch(parser *ps, char **w, int nw) {
    tlrt_function_meta *f = ps->f;
    if (nw != 1) return fail(ps, "expected 'launch KERNEL'", NULL, NULL);
    if (f->nlaunches == TLRT_MAX_LAUNCHES) return fail(ps, "too many launch lines", NULL, NULL);
    for (int i = 0; i < ps->m->nkernels; i++)
        if (strcmp(ps->m->kernels[i].name, w[0]) == 0) {
            f->launches[f->nlaunches++] = i;
            ps->seen_param = true;
            return true;
        }
    return fail(ps, "launch: no kernel '%.200s' before this line", w[0], NULL);
}

/* A list of 1..5 integers; its length, or 0 when malformed. */
static int parse_u32_list(char *s, uint32_t *out) {
    char *items[TLRT_MAX_TMAP_RANK];
    int n = split_list(s, items, TLRT_MAX_TMAP_RANK);
    if (n < 1 || n > TLRT_MAX_TMAP_RANK) return 0;
    for (int i = 0; i < n; i++) {
        int64_t v;
        if (!parse_i64(items[i], 0, 1 << 20, &v)) return 0;
        out[i] = (uint32_t)v;
    }
    return n;
}

static bool do_tmap(parser *ps, char **w, int nw) {
    tlrt_kernel_meta *k = ps->k;
    if (nw < 1) return fail(ps, "expected 'tmap TENSOR box=[..] ...'", NULL, NULL);
    if (ps->have_grid) return fail(ps, "tmap lines must come before the grid line", NULL, NULL);
    if (k->ntmaps == TLRT_MAX_TMAPS) return fail(ps, "too many tmaps", NULL, NULL);
    int pi = find_param(k, w[0]);
    if (pi < 0 || k->params[pi].kind != TLRT_PARAM_TENSOR) return fail(ps, "tmap of '%.60s': no such tensor param", w[0], NULL);
    tlrt_tmap_meta *t = &k->tmaps[k->ntmaps];
    memset(t, 0, sizeof *t);
    t->param = pi;
    t->l2 = TLRT_L2_NONE;
    int nestrides = 0; /* the box's rank (the tensor's, or a view's: checked when the kernel closes) */
    bool have_box = false;
    for (int i = 1; i < nw; i++) {
        char *v = strchr(w[i], '=');
        if (!v) return fail(ps, "expected KEY=VALUE, got '%.60s'", w[i], NULL);
        *v++ = 0;
        const char *key = w[i];
        if (strcmp(key, "box") == 0) {
            if (!(t->rank = parse_u32_list(v, t->box))) return fail(ps, "bad box for '%s' (1..5 integers)", w[0], NULL);
            have_box = true;
        } else if (strcmp(key, "estrides") == 0) {
            if (!(nestrides = parse_u32_list(v, t->elem_strides)))
                return fail(ps, "bad estrides for '%s' (1..5 integers)", w[0], NULL);
        } else if (strcmp(key, "swizzle") == 0) {
            static const char *names[] = {"none", "32B", "64B", "128B"};
            int f = -1;
            for (int j = 0; j < 4; j++)
                if (strcmp(v, names[j]) == 0) f = j;
            if (f < 0) return fail(ps, "bad swizzle '%.20s' (none, 32B, 64B or 128B)", v, NULL);
            t->swizzle = (tlrt_swizzle)f;
        } else if (strcmp(key, "l2") == 0) {
            static const char *names[] = {"none", "64B", "128B", "256B"};
            int f = -1;
            for (int j = 0; j < 4; j++)
                if (strcmp(v, names[j]) == 0) f = j;
            if (f < 0) return fail(ps, "bad l2 promotion '%.20s' (none, 64B, 128B or 256B)", v, NULL);
            t->l2 = (tlrt_l2_promotion)f;
        } else if (strcmp(key, "mode") == 0) {
            if (strcmp(v, "im2col") == 0) t->im2col = true;
            else if (strcmp(v, "tiled") != 0) return fail(ps, "bad tmap mode '%.20s' (tiled or im2col)", v, NULL);
        } else if (strcmp(key, "oob") == 0) {
            if (strcmp(v, "zero") == 0) t->oob = TLRT_OOB_ZERO;
            else if (strcmp(v, "nan") == 0) t->oob = TLRT_OOB_NAN;
            else return fail(ps, "bad oob fill '%.20s' (zero or nan)", v, NULL);
        } else {
            return fail(ps, "unknown tmap key '%.40s'", key, NULL);
        }
    }
    if (!have_box) return fail(ps, "tmap of '%s' has no box=[..]", w[0], NULL);
    if (!nestrides)
        for (int d = 0; d < t->rank; d++) t->elem_strides[d] = 1;
    else if (nestrides != t->rank)
        return fail(ps, "tmap of '%s': estrides and box differ in length", w[0], NULL);
    k->ntmaps++;
    ps->seen_tmap = true;
    return true;
}

/* "grid E E E" or "cluster E E E" into out[3]. */
static bool do_exprs3(parser *ps, const char *what, const char *rest, tlrt_expr *out) {
    const char *p = rest, *end = rest + strlen(rest);
    for (int a = 0; a < 3; a++) {
        char sub[300];
        out[a].n = 0;
        if (!tlrt_expr_parse_at(&p, end, ps->k, &out[a], sub, sizeof sub)) return fail(ps, "%s: %s", what, sub);
        if (p < end && *p != ' ' && *p != '\t') return fail(ps, "%s: expressions must be separated by blanks", what, NULL);
    }
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p != end) return fail(ps, "%s: expected exactly 3 expressions", what, NULL);
    return true;
}

static bool do_grid(parser *ps, const char *rest) {
    if (ps->have_grid) return fail(ps, "second grid line", NULL, NULL);
    if (!do_exprs3(ps, "grid", rest, ps->k->grid)) return false;
    ps->have_grid = true;
    return true;
}

static bool do_cluster(parser *ps, const char *rest) {
    if (ps->k->has_cluster) return fail(ps, "second cluster line", NULL, NULL);
    if (!ps->have_grid) return fail(ps, "the cluster line must come after the grid line", NULL, NULL);
    if (!do_exprs3(ps, "cluster", rest, ps->k->cluster)) return false;
    ps->k->has_cluster = true;
    return true;
}

/* n expressions from `rest` into the kernel's map expressions; the index
 * of the first + 1, or 0 after a failure. */
static int map_exprs(parser *ps, const char *what, const char *rest, int n) {
    tlrt_kernel_meta *k = ps->k;
    if (k->nmap_exprs + n > TLRT_MAX_MAP_EXPRS) {
        char most[16];
        snprintf(most, sizeof most, "%d", TLRT_MAX_MAP_EXPRS);
        fail(ps, "%s: more than %s expressions in a kernel's view and im2col lines", what, most);
        return 0;
    }
    const char *p = rest, *end = rest + strlen(rest);
    for (int a = 0; a < n; a++) {
        char sub[300];
        tlrt_expr *e = &k->map_exprs[k->nmap_exprs + a];
        e->n = 0;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p == end) break; /* too few: said below */
        if (!tlrt_expr_parse_at(&p, end, k, e, sub, sizeof sub)) {
            fail(ps, "%s: %s", what, sub);
            return 0;
        }
        if (p < end && *p != ' ' && *p != '\t') {
            fail(ps, "%s: expressions must be separated by blanks", what, NULL);
            return 0;
        }
    }
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p != end || !k->map_exprs[k->nmap_exprs + n - 1].n) {
        fail(ps, "%s: expected exactly %s expressions", what, strcmp(what, "im2col") ? "one per box entry of its tmap" : "3");
        return 0;
    }
    k->nmap_exprs += n;
    return k->nmap_exprs - n + 1;
}

/* The tmap line a view or im2col line completes: the last one, before the grid. */
static tlrt_tmap_meta *last_tmap(parser *ps, const char *what) {
    tlrt_kernel_meta *k = ps->k;
    if (!k->ntmaps || ps->have_grid) {
        fail(ps, "a%s line must follow the tmap line it completes", what, NULL);
        return NULL;
    }
    return &k->tmaps[k->ntmaps - 1];
}

/* "im2col LOWER UPPER OFFSET_MAX" */
static bool do_im2col(parser *ps, const char *rest) {
    tlrt_tmap_meta *t = last_tmap(ps, "n im2col");
    if (!t) return false;
    if (!t->im2col || t->im2col_exprs)
        return fail(ps, "an im2col line must follow the tmap line with mode=im2col it completes, once", NULL, NULL);
    return (t->im2col_exprs = map_exprs(ps, "im2col", rest, 3)) != 0;
}

/* "view E E ...": one dim per box entry */
static bool do_view(parser *ps, const char *rest) {
    tlrt_tmap_meta *t = last_tmap(ps, " view");
    if (!t) return false;
    if (t->view) return fail(ps, "second view line for one tmap", NULL, NULL);
    return (t->view = map_exprs(ps, "view", rest, t->rank)) != 0;
}

static bool do_threads(parser *ps, char **w, int nw) {
    if (ps->have_threads) return fail(ps, "second threads line", NULL, NULL);
    if (nw != 3) return fail(ps, "expected 'threads X Y Z'", NULL, NULL);
    for (int a = 0; a < 3; a++) {
        int64_t v;
        if (!parse_i64(w[a], 1, 1024, &v)) return fail(ps, "bad thread count '%.20s' (1..1024)", w[a], NULL);
        ps->k->threads[a] = (int)v;
    }
    ps->have_threads = true;
    return true;
}

static bool do_smem(parser *ps, char **w, int nw) {
    if (ps->have_smem) return fail(ps, "second smem line", NULL, NULL);
    if (nw != 1 || !parse_i64(w[0], 0, 256 * 1024, &ps->k->smem_bytes))
        return fail(ps, "expected 'smem BYTES' (0..262144)", NULL, NULL);
    ps->have_smem = true;
    return true;
}

static bool do_divisible(parser *ps, char **w, int nw) {
    tlrt_kernel_meta *k = ps->k;
    int64_t m;
    if (nw != 2) return fail(ps, "expected 'divisible SYM MULTIPLE'", NULL, NULL);
    int s = find_sym(k, w[0]);
    if (s < 0) return fail(ps, "divisible: no sym '%.60s'", w[0], NULL);
    if (!parse_i64(w[1], 1, 65536, &m)) return fail(ps, "divisible %s: bad multiple '%.20s' (1..65536)", w[0], w[1]);
    if (k->sym_multiple[s] > 1) return fail(ps, "second divisible line for sym '%s'", w[0], NULL);
    k->sym_multiple[s] = m;
    return true;
}

static bool do_persistent(parser *ps, char **w, int nw) {
    int64_t b;
    if (ps->k->persistent) return fail(ps, "second persistent line", NULL, NULL);
    if (nw != 1 || !parse_i64(w[0], 1, 32, &b)) return fail(ps, "expected 'persistent BLOCKS_PER_SM' (1..32)", NULL, NULL);
    ps->k->persistent = (int)b;
    return true;
}

/* "check LINE:COL EXPR" */
static bool do_check(parser *ps, const char *rest) {
    tlrt_kernel_meta *k = ps->k;
    if (k->nchecks == TLRT_MAX_CHECKS) return fail(ps, "more than 8 check lines", NULL, NULL);
    const char *p = rest, *end = rest + strlen(rest);
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    char word[32];
    size_t n = 0;
    while (p + n < end && p[n] != ' ' && p[n] != '\t' && n < sizeof word - 1) { word[n] = p[n]; n++; }
    word[n] = 0;
    p += n;
    char *colon = strchr(word, ':');
    int64_t line, col;
    if (!colon) return fail(ps, "check: expected LINE:COL before the expression, got '%.20s'", word, NULL);
    *colon = 0;
    if (!parse_i64(word, 1, INT32_MAX, &line) || !parse_i64(colon + 1, 1, INT32_MAX, &col))
        return fail(ps, "check: bad location '%.20s'", word, NULL);
    char sub[300];
    tlrt_expr e;
    if (!tlrt_expr_parse_at(&p, end, k, &e, sub, sizeof sub)) return fail(ps, "check: %s", sub, NULL);
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p != end) return fail(ps, "check: text after the expression", NULL, NULL);
    k->checks[k->nchecks].line = (int)line;
    k->checks[k->nchecks].col = (int)col;
    k->checks[k->nchecks].cond = e;
    k->nchecks++;
    return true;
}

static bool do_pdl(parser *ps, int nw) {
    if (ps->k->pdl) return fail(ps, "second pdl line", NULL, NULL);
    if (nw != 0) return fail(ps, "unexpected text after 'pdl'", NULL, NULL);
    ps->k->pdl = true;
    return true;
}

static bool do_grid_sync(parser *ps, int nw) {
    if (ps->k->grid_sync) return fail(ps, "second grid_sync line", NULL, NULL);
    if (nw != 0) return fail(ps, "unexpected text after 'grid_sync'", NULL, NULL);
    ps->k->grid_sync = true;
    return true;
}

static bool do_tile_counter(parser *ps, int nw) {
    if (ps->k->tile_counter) return fail(ps, "second tile_counter line", NULL, NULL);
    if (nw != 0) return fail(ps, "unexpected text after 'tile_counter'", NULL, NULL);
    ps->k->tile_counter = true;
    return true;
}

/* One metadata line (prefix removed, NUL-terminated). Returns 1 at "end". */
static int do_line(parser *ps, char *text, bool first) {
    char rest_copy[MAX_LINE];
    char *w[MAX_WORDS + 1];
    int nw = 0;
    snprintf(rest_copy, sizeof rest_copy, "%s", text);
    for (char *s = text; *s;) {
        while (*s == ' ' || *s == '\t') *s++ = 0;
        if (!*s) break;
        if (nw == MAX_WORDS + 1) {
            /* an expression's line is read from its text, not its words */
            if (!strcmp(w[0], "grid") || !strcmp(w[0], "cluster") || !strcmp(w[0], "check") || !strcmp(w[0], "im2col") ||
                !strcmp(w[0], "view"))
                break;
            fail(ps, "too many words", NULL, NULL);
            return -1;
        }
        w[nw++] = s;
        while (*s && *s != ' ' && *s != '\t') s++;
    }
    if (nw == 0) { fail(ps, "empty tlc.meta line", NULL, NULL); return -1; }
    if (first) return do_header(ps, w, nw) ? 0 : -1;
    const char *d = w[0];
    if (strcmp(d, "end") == 0) {
        if (nw != 1) { fail(ps, "unexpected text after 'end'", NULL, NULL); return -1; }
        return close_kernel(ps) ? 1 : -1;
    }
    if (strcmp(d, "kernel") == 0) return do_kernel(ps, w + 1, nw - 1) ? 0 : -1;
    if (strcmp(d, "function") == 0) return do_function(ps, w + 1, nw - 1) ? 0 : -1;
    if (!ps->k) { fail(ps, "'%.40s' outside a kernel (a 'kernel NAME' line must come first)", d, NULL); return -1; }
    static const char *const function_lines[] = {"sym", "tensor", "scalar", "check", "workspace", "launch", NULL};
    bool in_function_only = strcmp(d, "workspace") == 0 || strcmp(d, "launch") == 0, allowed = !ps->f;
    for (int i = 0; ps->f && function_lines[i]; i++) allowed |= strcmp(d, function_lines[i]) == 0;
    if (!allowed || (in_function_only && !ps->f)) {
        fail(ps, ps->f ? "'%.40s' in a function (only sym, tensor, scalar, check, workspace and launch lines)"
                       : "'%.40s' outside a function", d, NULL);
        return -1;
    }
    bool ok;
    if (strcmp(d, "workspace") == 0) ok = do_workspace(ps, w + 1, nw - 1);
    else if (strcmp(d, "launch") == 0) ok = do_launch(ps, w + 1, nw - 1);
    else if (strcmp(d, "sym") == 0) ok = do_sym(ps, w + 1, nw - 1);
    else if (strcmp(d, "tensor") == 0) ok = do_tensor(ps, w + 1, nw - 1);
    else if (strcmp(d, "scalar") == 0) ok = do_scalar(ps, w + 1, nw - 1);
    else if (strcmp(d, "tmap") == 0) ok = do_tmap(ps, w + 1, nw - 1);
    else if (strcmp(d, "grid") == 0) {
        const char *r = strstr(rest_copy, "grid") + 4;
        ok = do_grid(ps, r);
    } else if (strcmp(d, "cluster") == 0) {
        ok = do_cluster(ps, strstr(rest_copy, "cluster") + 7);
    } else if (strcmp(d, "threads") == 0) ok = do_threads(ps, w + 1, nw - 1);
    else if (strcmp(d, "smem") == 0) ok = do_smem(ps, w + 1, nw - 1);
    else if (strcmp(d, "divisible") == 0) ok = do_divisible(ps, w + 1, nw - 1);
    else if (strcmp(d, "persistent") == 0) ok = do_persistent(ps, w + 1, nw - 1);
    else if (strcmp(d, "tile_counter") == 0) ok = do_tile_counter(ps, nw - 1);
    else if (strcmp(d, "grid_sync") == 0) ok = do_grid_sync(ps, nw - 1);
    else if (strcmp(d, "pdl") == 0) ok = do_pdl(ps, nw - 1);
    else if (strcmp(d, "check") == 0) ok = do_check(ps, strstr(rest_copy, "check") + 5);
    else if (strcmp(d, "im2col") == 0) ok = do_im2col(ps, strstr(rest_copy, "im2col") + 6);
    else if (strcmp(d, "view") == 0) ok = do_view(ps, strstr(rest_copy, "view") + 4);
    else ok = fail(ps, "unknown directive '%.40s'", d, NULL);
    return ok ? 0 : -1;
}

static bool is_meta_line(const char *s, size_t n) {
    static const char pre[] = "// tlc.meta";
    size_t pn = sizeof pre - 1;
    return n >= pn && memcmp(s, pre, pn) == 0 && (n == pn || s[pn] == ' ' || s[pn] == '\t');
}

bool tlrt_meta_parse(const char *text, size_t len, tlrt_module_meta *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    tlrt_errf(err, errlen, "%s", "");
    parser ps = {.m = out, .err = err, .errlen = errlen};
    enum { BEFORE, INSIDE, AFTER } state = BEFORE;
    if (!text) len = 0;
    size_t pos = 0;
    while (pos < len) {
        size_t eol = pos;
        while (eol < len && text[eol] != '\n') eol++;
        ps.line++;
        const char *s = text + pos;
        size_t n = eol - pos;
        pos = eol + 1;
        if (n && s[n - 1] == '\r') n--;
        if (!is_meta_line(s, n)) continue;
        if (state == AFTER) {
            fail(&ps, "tlc.meta line after 'end' (only one metadata block is allowed)", NULL, NULL);
            goto error;
        }
        if (n >= MAX_LINE) {
            fail(&ps, "line too long", NULL, NULL);
            goto error;
        }
        if (memchr(s, 0, n)) {
            fail(&ps, "NUL byte in a tlc.meta line", NULL, NULL);
            goto error;
        }
        char buf[MAX_LINE];
        memcpy(buf, s + 11, n - 11);
        buf[n - 11] = 0;
        int r = do_line(&ps, buf, state == BEFORE);
        if (r < 0) goto error;
        state = r == 1 ? AFTER : INSIDE;
    }
    if (state == BEFORE) {
        tlrt_errf(err, errlen, "no tlc.meta block");
        goto error;
    }
    if (state == INSIDE) {
        tlrt_errf(err, errlen, "tlc.meta block has no 'end' line (truncated?)");
        goto error;
    }
    return true;
error:
    tlrt_meta_free(out);
    return false;
}

void tlrt_meta_free(tlrt_module_meta *m) {
    if (!m) return;
    free(m->kernels);
    free(m->functions);
    memset(m, 0, sizeof *m);
}

const tlrt_kernel_meta *tlrt_meta_find(const tlrt_module_meta *m, const char *name) {
    for (int i = 0; m && name && i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0) return &m->kernels[i];
    return NULL;
}

const tlrt_function_meta *tlrt_meta_find_function(const tlrt_module_meta *m, const char *name) {
    for (int i = 0; m && name && i < m->nfunctions; i++)
        if (strcmp(m->functions[i].sig.name, name) == 0) return &m->functions[i];
    return NULL;
}
