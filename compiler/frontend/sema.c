/* Semantic analysis driver: module constants, -D binding over @jit defaults,
 * kernel parameters (tensors with symbolic dims, scalars), the
 * `with Kernel(...)` block, and the per-block resource checks. The scoped
 * symbol table lives here too. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sema_internal.h"
#include "ir/tir_access.h"
#include "tlc/metadata.h"

/* ---------------- string map ---------------- */

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

void sema_map_init(sema_map *m) { memset(m, 0, sizeof *m); }
void sema_map_free(sema_map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static int map_slot(const sema_map *m, const char *key) {
    size_t mask = (size_t)m->cap - 1, i = (size_t)hash_str(key) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
    return (int)i;
}

int *sema_map_get(sema_map *m, const char *key) {
    if (!m->cap || !key) return NULL;
    int i = map_slot(m, key);
    return m->keys[i] ? &m->vals[i] : NULL;
}

void sema_map_put(sema_map *m, const char *key, int val) {
    if ((m->count + 1) * 2 > m->cap) {
        sema_map old = *m;
        m->cap = old.cap ? old.cap * 2 : 64;
        m->keys = calloc((size_t)m->cap, sizeof *m->keys);
        m->vals = calloc((size_t)m->cap, sizeof *m->vals);
        if (!m->keys || !m->vals) abort();
        m->count = 0;
        for (int i = 0; i < old.cap; i++)
            if (old.keys[i]) sema_map_put(m, old.keys[i], old.vals[i]);
        free(old.keys);
        free(old.vals);
    }
    int i = map_slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->count++;
    }
    m->vals[i] = val;
}

/* ---------------- scopes ---------------- */

void sema_push_scope(sema *S) {
    if (S->nmarks == S->capmarks) {
        S->capmarks = S->capmarks ? S->capmarks * 2 : 16;
        S->marks = realloc(S->marks, (size_t)S->capmarks * sizeof *S->marks);
        if (!S->marks) abort();
    }
    S->marks[S->nmarks++] = S->nsyms;
}

void sema_pop_scope(sema *S) {
    int to = S->marks[--S->nmarks];
    while (S->nsyms > to) {
        sym *s = &S->syms[--S->nsyms];
        sema_map_put(&S->names, s->name, s->prev);
    }
}

sym *sema_lookup(sema *S, const char *name) {
    int *i = sema_map_get(&S->names, name);
    return (i && *i >= 0) ? &S->syms[*i] : NULL;
}

sym *sema_declare(sema *S, const char *name, sym_kind kind, tlc_loc loc) {
    if (S->nsyms == S->capsyms) {
        S->capsyms = S->capsyms ? S->capsyms * 2 : 64;
        S->syms = realloc(S->syms, (size_t)S->capsyms * sizeof *S->syms);
        if (!S->syms) abort();
    }
    int *prev = sema_map_get(&S->names, name);
    sym *s = &S->syms[S->nsyms];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->kind = kind;
    s->loc = loc;
    s->prev = prev ? *prev : -1;
    sema_map_put(&S->names, name, S->nsyms++);
    return s;
}

void sema_declare_error(sema *S, const char *name, tlc_loc loc) {
    if (!name) return;
    sym *s = sema_declare(S, name, SYM_CONST, loc);
    s->value = sv_error();
    s->origin = CONST_LOCAL;
}

tir_var *sema_new_var(sema *S, const char *name, tir_var_kind kind, tir_dtype t, tlc_loc loc) {
    tir_var *v = TLC_NEW(S->arena, tir_var);
    v->name = name;
    v->kind = kind;
    v->dtype = t;
    v->loc = loc;
    v->id = S->k ? S->k->nvars++ : 0;
    return v;
}

tir_buffer *sema_new_buffer(sema *S, const char *name, tir_scope scope, tir_dtype t, int rank, tlc_loc loc) {
    tir_buffer *b = TLC_NEW(S->arena, tir_buffer);
    b->name = name;
    b->scope = scope;
    b->dtype = t;
    b->rank = rank;
    b->loc = loc;
    b->param_index = -1;
    b->id = S->buffers.len;
    tlc_ptrvec_push(&S->buffers, b);
    return b;
}

const char *sema_buffer_desc(const tir_buffer *b) {
    switch (b->scope) {
    case TIR_SCOPE_GLOBAL: return b->is_workspace ? "a global workspace (alloc_global)" : "a tensor parameter";
    case TIR_SCOPE_SHARED: return "a shared buffer";
    case TIR_SCOPE_FRAGMENT: return "a fragment";
    case TIR_SCOPE_LOCAL: return "a local buffer";
    case TIR_SCOPE_VAR: return "a scalar variable (alloc_var)";
    }
    return "a buffer";
}

void sema_note_decl(sema *S, const tir_buffer *b) {
    tlc_note(S->diag, b->loc, "'%s' declared here as %s", b->name, sema_buffer_desc(b));
}

void sema_note_sym(sema *S, const sym *s) {
    if (s->kind == SYM_BUFFER) {
        sema_note_decl(S, s->buf);
        return;
    }
    const char *what = "a value";
    if (s->kind == SYM_CONST)
        what = s->origin == CONST_JIT ? "a compile-time parameter"
             : s->origin == CONST_MODULE ? "a module constant" : s->origin == CONST_LOOP ? "a loop variable" : "a constant";
    else
        switch (s->var->kind) {
        case TV_LOOP: what = "a loop variable"; break;
        case TV_LET: what = "a scalar"; break;
        case TV_BLOCK_IDX: what = "a block index"; break;
        case TV_SYM_DIM: what = "a symbolic dimension"; break;
        case TV_SCALAR_PARAM: what = "a scalar parameter"; break;
        case TV_THREAD_IDX: what = "a thread index"; break;
        }
    if (s->loc.line > 0) tlc_note(S->diag, s->loc, "'%s' declared here as %s", s->name, what);
}

/* ---------------- -D values ---------------- */

static const tlc_define *find_define(sema *S, const char *name, int *index) {
    const tlc_define *found = NULL;
    for (int i = 0; S->opt && i < S->opt->ndefines; i++) /* the last one wins */
        if (S->opt->defines[i].name && strcmp(S->opt->defines[i].name, name) == 0) {
            found = &S->opt->defines[i];
            if (index) *index = i;
        }
    return found;
}

typedef struct dvalue {
    bool is_int, is_float, is_bool, is_dtype;
    int64_t ival;
    double fval;
    bool bval;
    tir_dtype dtype;
    const char *str; /* the string meaning: unquoted text */
} dvalue;

static void parse_define_value(sema *S, const char *text, dvalue *v) {
    memset(v, 0, sizeof *v);
    if (!text) text = "";
    size_t n = strlen(text);
    if (n >= 2 && (text[0] == '"' || text[0] == '\'') && text[n - 1] == text[0]) {
        v->str = tlc_arena_strndup(S->arena, text + 1, n - 2);
        v->is_dtype = tir_dtype_parse(v->str, &v->dtype);
        return;
    }
    v->str = text;
    /* integers: decimal or hex, optional sign, '_' separators */
    char digits[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k < sizeof digits - 1; i++)
        if (text[i] != '_') digits[k++] = text[i];
    digits[k] = 0;
    if (k > 0 && k < sizeof digits - 1) {
        char *end;
        errno = 0;
        long long iv = strtoll(digits, &end, 0);
        if (*end == 0 && errno == 0 && (isdigit((unsigned char)digits[0]) || digits[0] == '-' || digits[0] == '+')) {
            v->is_int = v->is_float = true;
            v->ival = iv;
            v->fval = (double)iv;
            return;
        }
        errno = 0;
        double fv = strtod(digits, &end);
        if (*end == 0 && errno == 0 && strpbrk(digits, "0123456789")) {
            v->is_float = true;
            v->fval = fv;
            return;
        }
    }
    if (strcmp(text, "True") == 0 || strcmp(text, "true") == 0) { v->is_bool = true; v->bval = true; return; }
    if (strcmp(text, "False") == 0 || strcmp(text, "false") == 0) { v->is_bool = true; v->bval = false; return; }
    v->is_dtype = tir_dtype_parse(text, &v->dtype);
}

/* Replaces *value (a @jit default / module constant) with the -D value.
 * `loc` is where the parameter is declared. Returns false when diagnosed. */
static bool apply_define(sema *S, const char *name, tlc_loc loc, sv *value, bool *overridden) {
    int di = -1;
    const tlc_define *d = find_define(S, name, &di);
    *overridden = false;
    if (!d) return true;
    S->define_used[di] = true;
    dvalue dv;
    parse_define_value(S, d->value, &dv);
    const char *text = d->value ? d->value : "";
    sv nv = *value;
    switch (value->kind) {
    case SV_SCALAR:
        if (value->u.e->dtype == TIR_BOOL) {
            if (!dv.is_bool && !(dv.is_int && (dv.ival == 0 || dv.ival == 1))) {
                tlc_error(S->diag, loc, "-D %s=%s: expected True or False (the @jit default is a bool)", name, text);
                return false;
            }
            nv.u.e = tir_int_typed(S->arena, dv.is_bool ? dv.bval : dv.ival != 0, TIR_BOOL, loc);
        } else if (value->u.e->kind == TE_INT) {
            if (!dv.is_int) {
                tlc_error(S->diag, loc, "-D %s=%s: expected an integer (the @jit default is %lld)", name, text,
                          (long long)value->u.e->u.ival);
                return false;
            }
            nv.u.e = tir_int(S->arena, dv.ival, loc);
        } else {
            if (!dv.is_float) {
                tlc_error(S->diag, loc, "-D %s=%s: expected a number (the @jit default is a float)", name, text);
                return false;
            }
            nv.u.e = tir_float(S->arena, dv.fval, value->u.e->dtype, loc);
        }
        break;
    case SV_DTYPE:
        if (!dv.is_dtype) {
            tlc_error(S->diag, loc, "-D %s=%s: expected a dtype (the @jit default is %s)", name, text,
                      tir_dtype_name(value->u.dtype));
            return false;
        }
        nv.u.dtype = dv.dtype;
        break;
    case SV_STRING: nv.u.str = dv.str; break;
    case SV_DYNAMIC:
        tlc_error(S->diag, loc, "-D %s: '%s' is a dynamic dimension and cannot be specialized", name, name);
        return false;
    case SV_NONE: /* a None default (TileLang: computed when not given) takes any -D */
        sema_define_value(S, name, loc, &nv);
        break;
    default:
        tlc_error(S->diag, loc, "-D %s: this parameter's default cannot be overridden", name);
        return false;
    }
    *value = nv;
    *overridden = true;
    return true;
}

/* One -D value's text as a value of the kind its text has; "(a, b)" or
 * "[a, b]" is a tuple of such values (not nested). */
static void define_sv(sema *S, const char *text, tlc_loc loc, sv *out) {
    size_t n = strlen(text);
    memset(out, 0, sizeof *out);
    out->loc = loc;
    if (n >= 2 && ((text[0] == '(' && text[n - 1] == ')') || (text[0] == '[' && text[n - 1] == ']'))) {
        int cap = 1;
        for (size_t i = 1; i + 1 < n; i++) cap += text[i] == ',';
        sv *items = TLC_NEW_ARRAY(S->arena, sv, (size_t)cap);
        int m = 0;
        size_t from = 1;
        for (size_t i = 1; i < n; i++) {
            if (text[i] != ',' && i + 1 < n) continue;
            size_t a = from, b = i;
            while (a < b && isspace((unsigned char)text[a])) a++;
            while (b > a && isspace((unsigned char)text[b - 1])) b--;
            if (b > a) define_sv(S, tlc_arena_strndup(S->arena, text + a, b - a), loc, &items[m++]);
            from = i + 1;
        }
        out->kind = SV_TUPLE;
        out->u.tup.items = items;
        out->u.tup.n = m;
        return;
    }
    dvalue dv;
    parse_define_value(S, text, &dv);
    bool quoted = n >= 2 && (text[0] == '"' || text[0] == '\'') && text[n - 1] == text[0];
    if (dv.is_int) {
        out->kind = SV_SCALAR;
        out->u.e = tir_int(S->arena, dv.ival, loc);
    } else if (dv.is_float) {
        out->kind = SV_SCALAR;
        out->u.e = tir_float(S->arena, dv.fval, TIR_F32, loc);
    } else if (dv.is_bool) {
        out->kind = SV_SCALAR;
        out->u.e = tir_int_typed(S->arena, dv.bval, TIR_BOOL, loc);
    } else if (dv.is_dtype && !quoted) {
        out->kind = SV_DTYPE;
        out->u.dtype = dv.dtype;
    } else {
        out->kind = SV_STRING;
        out->u.str = dv.str;
    }
}

bool sema_define_value(sema *S, const char *name, tlc_loc loc, sv *out) {
    int di = -1;
    const tlc_define *d = find_define(S, name, &di);
    if (!d) return false;
    S->define_used[di] = true;
    define_sv(S, d->value ? d->value : "", loc, out);
    return true;
}

static bool sv_is_constant(const sv *v) {
    switch (v->kind) {
    case SV_SCALAR: return v->u.e->kind == TE_INT || v->u.e->kind == TE_FLOAT;
    case SV_DTYPE: case SV_STRING: case SV_NONE: case SV_POLICY: case SV_DYNAMIC: return true;
    case SV_TUPLE:
        for (int i = 0; i < v->u.tup.n; i++)
            if (!sv_is_constant(&v->u.tup.items[i])) return false;
        return true;
    default: return false;
    }
}

void sema_record_const(sema *S, const char *name, const sv *v, bool overridden) {
    tir_const *c = TLC_NEW(S->arena, tir_const);
    c->name = name;
    c->overridden = overridden;
    switch (v->kind) {
    case SV_SCALAR:
        if (v->u.e->dtype == TIR_BOOL) { c->kind = TIR_CONST_BOOL; c->ival = v->u.e->u.ival; }
        else if (v->u.e->kind == TE_INT) { c->kind = TIR_CONST_INT; c->ival = v->u.e->u.ival; }
        else { c->kind = TIR_CONST_FLOAT; c->fval = v->u.e->u.fval; }
        break;
    case SV_DTYPE: c->kind = TIR_CONST_DTYPE; c->dtype = v->u.dtype; break;
    case SV_STRING: c->kind = TIR_CONST_STRING; c->sval = v->u.str; break;
    default: return;
    }
    tlc_ptrvec_push(&S->consts_tmp, c);
}

/* ---------------- module level ---------------- */

/* A module-level assignment is evaluated with its diagnostics held back:
 * in a TileLang file most of them are Python (`kernel = matmul(1024, ...)`,
 * `a = torch.randn(...)`), which tlc neither runs nor needs. A name whose
 * value is not a compile-time constant is an error only where a kernel uses
 * it, with the first held-back diagnostic as the reason. */
static void sema_globals(sema *S) {
    for (int i = 0; i < S->module->nglobals; i++) {
        const ast_stmt *g = S->module->globals[i];
        if (g->kind != AS_ASSIGN || !g->u.assign.target || g->u.assign.target->kind != AE_NAME) {
            tlc_error(S->diag, g->loc, "only 'NAME = constant' assignments are allowed at module level");
            continue;
        }
        const ast_expr *t = g->u.assign.target;
        tlc_diag quiet, *loud = S->diag;
        tlc_diag_init(&quiet, loud->src);
        quiet.show_source = false;
        S->diag = &quiet;
        sv v = sema_eval(S, g->u.assign.value);
        S->diag = loud;
        const char *why = NULL;
        if (quiet.errors > 0) {
            /* "file:line:col: error: MESSAGE\n": keep MESSAGE */
            const char *msg = strstr(tlc_sb_cstr(&quiet.out), "error: ");
            if (msg) {
                msg += 7;
                why = tlc_arena_strndup(S->arena, msg, strcspn(msg, "\n"));
            }
            v = sv_error();
        } else if (!sv_is_constant(&v) || v.kind == SV_DYNAMIC) {
            v = sv_error();
        }
        tlc_diag_free(&quiet);
        bool ov;
        sym *s = sema_declare(S, t->u.name, SYM_CONST, t->loc);
        if (v.kind == SV_ERROR && sema_define_value(S, t->u.name, t->loc, &v)) {
            /* a value the file computes from what tlc cannot run (a torch
             * tensor's shape), given with -D */
            s->value = v;
            s->origin = CONST_MODULE;
            continue;
        }
        if (v.kind == SV_ERROR) {
            s->origin = CONST_PYTHON;
            s->why = why;
            s->value = v;
            continue;
        }
        if (!apply_define(S, t->u.name, t->loc, &v, &ov)) v = sv_error();
        s->value = v;
        s->origin = CONST_MODULE;
    }
}

/* Collects the names a -D may refer to: @jit parameters, names used in
 * parameter annotations (implicit symbolic dims) and module constants. */
static void collect_names_expr(sema_map *m, const ast_expr *e, int depth) {
    if (!e || depth > 100) return;
    switch (e->kind) {
    case AE_NAME: sema_map_put(m, e->u.name, 1); break;
    case AE_SUBSCRIPT:
        collect_names_expr(m, e->u.sub.value, depth + 1);
        for (int i = 0; i < e->u.sub.nindex; i++) collect_names_expr(m, e->u.sub.index[i], depth + 1);
        break;
    case AE_CALL:
        for (int i = 0; i < e->u.call.nargs; i++) collect_names_expr(m, e->u.call.args[i], depth + 1);
        for (int i = 0; i < e->u.call.nkwargs; i++) collect_names_expr(m, e->u.call.kwargs[i].value, depth + 1);
        break;
    case AE_TUPLE: case AE_LIST:
        for (int i = 0; i < e->u.seq.n; i++) collect_names_expr(m, e->u.seq.items[i], depth + 1);
        break;
    default: break;
    }
}

/* Names of "M, N" in T.const("M, N") / T.dynamic(...) */
static void collect_dim_names(sema *S, sema_map *m, const ast_expr *v) {
    if (!v || v->kind != AE_CALL || v->u.call.nargs < 1 || v->u.call.args[0]->kind != AE_STRING) return;
    const char *fn = sema_dotted_name(S, v->u.call.func);
    if (!fn || (strcmp(fn, "const") != 0 && strcmp(fn, "dynamic") != 0 && strcmp(fn, "symbolic") != 0)) return;
    const char *p = v->u.call.args[0]->u.str;
    for (;;) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *q = p;
        while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
        sema_map_put(m, tlc_arena_strndup(S->arena, p, (size_t)(q - p)), 1);
        p = q;
    }
}

/* A TileLang function's -D names: its parameters, the names of its
 * T.const / T.dynamic, the dims in the annotations of its body and of a
 * factory's kernel. */
static void collect_python_names(sema *S, sema_map *m, const ast_funcdef *fn) {
    for (int p = 0; p < fn->nparams; p++) sema_map_put(m, fn->params[p].name, 1);
    for (int i = 0; i < fn->body.n; i++) {
        const ast_stmt *st = fn->body.stmts[i];
        if (st->kind == AS_ANNASSIGN) collect_names_expr(m, st->u.ann.annotation, 0);
        if (st->kind == AS_ASSIGN) {
            collect_dim_names(S, m, st->u.assign.value);
            if (st->u.assign.value && st->u.assign.value->kind == AE_CALL)
                for (int a = 0; a < st->u.assign.value->u.call.nargs; a++)
                    collect_names_expr(m, st->u.assign.value->u.call.args[a], 0);
        }
        if (st->kind == AS_FUNCDEF) {
            const ast_funcdef *g = st->u.func;
            for (int p = 0; p < g->nparams; p++) collect_names_expr(m, g->params[p].annotation, 0);
            for (int j = 0; j < g->body.n; j++)
                if (g->body.stmts[j]->kind == AS_ASSIGN) collect_dim_names(S, m, g->body.stmts[j]->u.assign.value);
        }
    }
}

static void check_defines_known(sema *S) {
    if (!S->opt || S->opt->ndefines == 0) return;
    sema_map known;
    sema_map_init(&known);
    for (int i = 0; i < S->module->nglobals; i++) {
        const ast_stmt *g = S->module->globals[i];
        if (g->kind == AS_ASSIGN && g->u.assign.target && g->u.assign.target->kind == AE_NAME)
            sema_map_put(&known, g->u.assign.target->u.name, 1);
    }
    for (int f = 0; f < S->module->nfuncs; f++) {
        const ast_funcdef *fn = S->module->funcs[f];
        if (sema_is_helper(S, fn)) continue;
        for (int d = 0; d < fn->ndecorators; d++) {
            const ast_expr *e = fn->decorators[d].expr;
            if (e && e->kind == AE_CALL)
                for (int i = 0; i < e->u.call.nkwargs; i++)
                    if (e->u.call.kwargs[i].name) sema_map_put(&known, e->u.call.kwargs[i].name, 1);
        }
        for (int p = 0; p < fn->nparams; p++) collect_names_expr(&known, fn->params[p].annotation, 0);
        if (sema_is_python_style(fn)) collect_python_names(S, &known, fn);
    }
    for (int i = 0; i < S->opt->ndefines; i++) {
        const char *n = S->opt->defines[i].name;
        if (n && sema_map_get(&known, n)) continue;
        const char *near = sema_nearest(n, known.keys, known.cap);
        if (near) tlc_error(S->diag, (tlc_loc){0, 0}, "unknown parameter '%s' in -D; did you mean '%s'?", n, near);
        else tlc_error(S->diag, (tlc_loc){0, 0}, "unknown parameter '%s' in -D", n ? n : "");
    }
    sema_map_free(&known);
}

/* ---------------- kernel parameters ---------------- */

/* TileLang's jit options: they choose how TileLang builds and calls the
 * kernel, which tlc decides itself. */
static bool is_tilelang_jit_option(const char *name) {
    static const char *const opts[] = { "out_idx", "target", "target_host", "execution_backend", "verbose",
                                        "pass_configs", "debug_root_path", "compile_flags", NULL };
    for (int i = 0; opts[i]; i++)
        if (name && strcmp(opts[i], name) == 0) return true;
    return false;
}

/* A compile-time parameter's value: its default, which -D may replace. */
static void declare_jit_param(sema *S, const char *name, tlc_loc loc, const ast_expr *dflt) {
    sym *prev = sema_lookup(S, name);
    if (prev && prev->kind == SYM_CONST && (prev->origin == CONST_JIT || prev->origin == CONST_UNBOUND)) {
        tlc_error(S->diag, loc, "duplicate @jit parameter '%s'", name);
        return;
    }
    S->allow_dynamic = true;
    sv v = sema_eval(S, dflt);
    S->allow_dynamic = false;
    if (v.kind != SV_ERROR && !(v.kind == SV_SCALAR && (v.u.e->kind == TE_INT || v.u.e->kind == TE_FLOAT)) &&
        v.kind != SV_DTYPE && v.kind != SV_STRING && v.kind != SV_DYNAMIC && v.kind != SV_NONE) {
        tlc_error(S->diag, dflt->loc, "the default of @jit parameter '%s' must be an int, float, bool, "
                  "string, dtype, None or dynamic(\"name\")", name);
        v = sv_error();
    }
    bool ov = false;
    if (v.kind != SV_ERROR && !apply_define(S, name, loc, &v, &ov)) v = sv_error();
    sym *s = sema_declare(S, name, SYM_CONST, loc);
    s->value = v;
    s->origin = CONST_JIT;
    if (v.kind != SV_ERROR) sema_record_const(S, name, &v, ov);
}

/* pass_configs={...}: TileLang's compiler switches. tlc honours two, fast
 * math (tilelang.PassConfigKey.TL_ENABLE_FAST_MATH or "tl.enable_fast_math")
 * and TL_DISABLE_THREAD_STORAGE_SYNC ("tl.disable_thread_storage_sync");
 * the others choose TileLang passes tlc does not have and are ignored. */
static const struct { const char *key, *string; } kernel_switches[] = {
    {"TL_ENABLE_FAST_MATH", "tl.enable_fast_math"},
    {"TL_DISABLE_THREAD_STORAGE_SYNC", "tl.disable_thread_storage_sync"},
};
static void jit_pass_configs(sema *S, const ast_expr *v) {
    /* pass_configs=get_pass_configs(): a function of the file, without
     * arguments, that returns a dict written out */
    int *fi = v->kind == AE_CALL && v->u.call.func->kind == AE_NAME && !v->u.call.nargs && !v->u.call.nkwargs
                  ? sema_map_get(&S->helper_funcs, v->u.call.func->u.name)
                  : NULL;
    const ast_funcdef *f = fi ? S->module->funcs[*fi] : NULL;
    const ast_stmt *r = f && !f->nparams && f->body.n ? f->body.stmts[f->body.n - 1] : NULL;
    if (r && r->kind == AS_RETURN && r->u.expr && r->u.expr->kind == AE_DICT) v = r->u.expr;
    /* pass_configs=PASS_CFG: a module-level name assigned a dict written out */
    for (int i = 0; v->kind == AE_NAME && i < S->module->nglobals; i++) {
        const ast_stmt *g = S->module->globals[i];
        if (g->kind == AS_ASSIGN && g->u.assign.target && g->u.assign.target->kind == AE_NAME &&
            strcmp(g->u.assign.target->u.name, v->u.name) == 0 && g->u.assign.value->kind == AE_DICT)
            v = g->u.assign.value;
    }
    if (v->kind != AE_DICT) {
        tlc_error(S->diag, v->loc, "pass_configs must be a dict such as {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}");
        return;
    }
    for (int i = 0; i < v->u.dict.n; i++) {
        const ast_expr *key = v->u.dict.keys[i], *val = v->u.dict.values[i];
        const char *name = key->kind == AE_STRING ? key->u.str : sema_dotted_name(S, key);
        if (!name) continue;
        const char *dot = strrchr(name, '.');
        int sw = -1;
        for (int j = 0; j < (int)(sizeof kernel_switches / sizeof kernel_switches[0]); j++)
            if (key->kind == AE_STRING ? !strcmp(name, kernel_switches[j].string)
                                       : !strcmp(dot ? dot + 1 : name, kernel_switches[j].key))
                sw = j;
        if (sw < 0) continue;
        if (val->kind != AE_BOOL) {
            tlc_error(S->diag, val->loc, "%s takes True or False", kernel_switches[sw].key);
            continue;
        }
        if (sw == 0) S->k->fast_math = val->u.bval;
        else S->k->program_syncs_shared = val->u.bval;
    }
}

void sema_jit_params(sema *S, const ast_expr *dec, bool tilelang_options) {
    if (dec->kind != AE_CALL) return; /* bare @jit: no parameters */
    if (dec->u.call.nargs > 0)
        tlc_error(S->diag, dec->u.call.args[0]->loc, "@jit parameters must be given as name=default");
    for (int i = 0; i < dec->u.call.nkwargs; i++) {
        const ast_kwarg *kw = &dec->u.call.kwargs[i];
        if (kw->name && strcmp(kw->name, "pass_configs") == 0) {
            jit_pass_configs(S, kw->value);
            continue;
        }
        if (!kw->name || (tilelang_options && is_tilelang_jit_option(kw->name))) continue;
        declare_jit_param(S, kw->name, kw->loc, kw->value);
    }
}

void sema_compile_time_param(sema *S, const char *name, tlc_loc loc, const ast_expr *dflt) {
    if (dflt) {
        declare_jit_param(S, name, loc, dflt);
        return;
    }
    sv v;
    sym *s;
    if (sema_define_value(S, name, loc, &v)) {
        s = sema_declare(S, name, SYM_CONST, loc);
        s->value = v;
        s->origin = CONST_JIT;
        sema_record_const(S, name, &v, true);
        return;
    }
    s = sema_declare(S, name, SYM_CONST, loc);
    s->value.kind = SV_NONE;
    s->value.loc = loc;
    s->origin = CONST_UNBOUND;
}

/* The runtime's launch metadata (tlc/metadata.h) holds names of a bounded
 * length: a longer one is refused where it is written. */
static void check_name_length(sema *S, const char *what, const char *name, int limit, tlc_loc loc) {
    if (name && strlen(name) >= (size_t)limit)
        tlc_error(S->diag, loc, "%s '%.40s...' is %zu characters long; the launch metadata takes at most %d", what, name,
                  strlen(name), limit - 1);
}

tir_var *sema_new_sym_dim(sema *S, const char *name, bool dynamic, tlc_loc loc) {
    if (S->sym_dims.len == TLRT_MAX_SYMS)
        tlc_error(S->diag, loc, "symbolic dim '%s' is one more than the %d the launch metadata holds per kernel", name,
                  TLRT_MAX_SYMS);
    check_name_length(S, "symbolic dim", name, TLRT_MAX_NAME, loc);
    tir_var *v = sema_new_var(S, name, TV_SYM_DIM, TIR_I32, loc);
    v->dynamic = dynamic;
    tlc_ptrvec_push(&S->sym_dims, v);
    return v;
}

static void must_be_dim(sema *S, tir_var *v, const char *param, tlc_loc decl) {
    sema_dim_use *u = TLC_NEW(S->arena, sema_dim_use);
    u->var = v;
    u->param_name = param;
    u->func = S->k ? S->k->name : "";
    u->decl = decl;
    u->in_block = S->in_kernel;
    tlc_ptrvec_push(&S->bound_dims, u);
}

tir_var *sema_bind_unbound(sema *S, sym *s) {
    tir_var *v = sema_new_sym_dim(S, s->name, false, s->loc);
    must_be_dim(S, v, s->name, s->loc);
    s->kind = SYM_VAR;
    s->var = v;
    return v;
}

static sema_dim_use *find_unbound(sema *S, const tir_expr *e, int depth) {
    if (!e || depth > 64) return NULL;
    switch (e->kind) {
    case TE_VAR:
        for (int i = 0; e->u.var->kind == TV_SYM_DIM && i < S->bound_dims.len; i++) {
            sema_dim_use *u = S->bound_dims.items[i];
            if (u->var == e->u.var && u->param_name) return u;
        }
        return NULL;
    case TE_BINARY: {
        sema_dim_use *u = find_unbound(S, e->u.bin.a, depth + 1);
        return u ? u : find_unbound(S, e->u.bin.b, depth + 1);
    }
    case TE_UNARY: return find_unbound(S, e->u.un.a, depth + 1);
    case TE_CAST: return find_unbound(S, e->u.cast.a, depth + 1);
    case TE_SELECT: {
        sema_dim_use *u = find_unbound(S, e->u.sel.cond, depth + 1);
        if (!u) u = find_unbound(S, e->u.sel.a, depth + 1);
        return u ? u : find_unbound(S, e->u.sel.b, depth + 1);
    }
    default: return NULL;
    }
}

bool sema_unbound_error(sema *S, const tir_expr *e, tlc_loc at, const char *msg) {
    sema_dim_use *u = find_unbound(S, e, 0);
    if (!u) return false;
    u->reported = true;
    tlc_error(S->diag, at, "%s, but '%s' is a parameter of '%s' without a default: give its value with -D %s=VALUE",
              msg, u->param_name, u->func, u->param_name);
    return true;
}

void sema_check_bound_dims(sema *S) {
    const tir_kernel *k = S->k;
    for (int i = 0; i < S->bound_dims.len; i++) {
        sema_dim_use *u = S->bound_dims.items[i];
        bool found = false;
        for (int p = 0; p < k->nparams && !found; p++) {
            const tir_buffer *b = k->params[p].kind == TIR_PARAM_TENSOR ? k->params[p].buf : NULL;
            for (int d = 0; b && d < b->rank && !found; d++)
                found = b->shape[d] && b->shape[d]->kind == TE_VAR && b->shape[d]->u.var == u->var;
        }
        if (found || u->reported) continue;
        /* a function's kernel after its first is analysed quietly but for
         * its own block (sema_function.c): a dim bound there is its own */
        tlc_diag *diag = S->fn_mode && S->loud && u->in_block ? S->loud : S->diag;
        if (u->param_name)
            tlc_error(diag, u->decl, "parameter '%s' of '%s' has no default and is not a dimension of any tensor: "
                      "give its value with -D %s=VALUE", u->param_name, u->func, u->param_name);
        else
            tlc_error(diag, u->decl, "'%s' is not a dimension of any tensor parameter, so the launch cannot bind it; "
                      "use it in a tensor's shape or give its value with -D %s=VALUE", u->var->name, u->var->name);
    }
    tlc_ptrvec_free(&S->bound_dims);
}

sv sema_const_dims(sema *S, const ast_expr *call, const char *names, bool dynamic) {
    /* "M, N, K" or "M N K": names split at commas and spaces */
    sv items[TLRT_MAX_SYMS + 1];
    int n = 0;
    const char *p = names;
    for (;;) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *q = p;
        while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
        const char *name = tlc_arena_strndup(S->arena, p, (size_t)(q - p));
        p = q;
        bool ident = isalpha((unsigned char)name[0]) || name[0] == '_';
        for (const char *c = name; *c && ident; c++) ident = isalnum((unsigned char)*c) || *c == '_';
        if (!ident) {
            tlc_error(S->diag, call->loc, "'%s' is not a name for a dimension", name);
            return sv_error();
        }
        if (n == TLRT_MAX_SYMS) {
            tlc_error(S->diag, call->loc, "more dimensions than the %d the launch metadata holds per kernel", TLRT_MAX_SYMS);
            return sv_error();
        }
        sv v = { .kind = SV_SCALAR, .loc = call->loc };
        sv dv;
        tir_var *existing = NULL;
        for (int i = 0; i < S->sym_dims.len; i++)
            if (strcmp(((tir_var *)S->sym_dims.items[i])->name, name) == 0) existing = S->sym_dims.items[i];
        if (existing) {
            v.u.e = tir_var_ref(S->arena, existing, call->loc);
        } else if (sema_define_value(S, name, call->loc, &dv)) {
            if (dynamic) {
                tlc_error(S->diag, call->loc, "-D %s: '%s' is a dynamic dimension and cannot be specialized", name, name);
                return sv_error();
            }
            if (dv.kind != SV_SCALAR || dv.u.e->kind != TE_INT || dv.u.e->dtype == TIR_BOOL || dv.u.e->u.ival <= 0) {
                tlc_error(S->diag, call->loc, "-D %s: a tensor dimension must be a positive integer", name);
                return sv_error();
            }
            v.u.e = dv.u.e;
            sema_record_const(S, name, &dv, true);
        } else {
            tir_var *dim = sema_new_sym_dim(S, name, dynamic, call->loc);
            must_be_dim(S, dim, NULL, call->loc);
            v.u.e = tir_var_ref(S->arena, dim, call->loc);
        }
        items[n++] = v;
    }
    if (n == 0) {
        tlc_error(S->diag, call->loc, "no dimension names in this string");
        return sv_error();
    }
    if (n == 1) return items[0];
    sv t = { .kind = SV_TUPLE, .loc = call->loc };
    t.u.tup.n = n;
    t.u.tup.items = TLC_NEW_ARRAY(S->arena, sv, (size_t)n);
    memcpy(t.u.tup.items, items, (size_t)n * sizeof *items);
    return t;
}

/* An integer expression of values known at launch (constants, symbolic
 * dims and integer scalar parameters with + - * // % min max, as
 * T.ceildiv(N, 128) is), small enough for a launch check beside its own
 * dim and the comparison: a tensor dimension or a view's may be one. */
bool sema_size_expr(const tir_expr *e) {
    int nodes = tir_grid_expr_nodes(e);
    return nodes >= 0 && nodes <= TLRT_MAX_EXPR - 2 && e->dtype != TIR_BOOL && !tir_dtype_is_float(e->dtype);
}

/* What a tensor dimension may be: a positive constant, a symbolic dim, or
 * an expression of sizes; NULL, reported, otherwise. */
static tir_expr *dim_value(sema *S, tir_expr *x, tlc_loc at) {
    if (x->kind == TE_INT && x->dtype != TIR_BOOL) {
        if (x->u.ival <= 0) {
            tlc_error(S->diag, at, "tensor dimension must be positive, got %lld", (long long)x->u.ival);
            return NULL;
        }
        return x;
    }
    if (sema_size_expr(x)) return x;
    const char *msg = "tensor dimension must be a constant integer, a name or an expression of sizes and integer "
                      "scalar parameters (+ - * // % min max, T.ceildiv)";
    if (!sema_unbound_error(S, x, at, msg)) tlc_error(S->diag, at, "%s", msg);
    return NULL;
}

/* A tensor dimension given by a value (a tuple's item). */
static tir_expr *tensor_dim_value(sema *S, sv v, const ast_expr *at) {
    tir_expr *x = sema_to_scalar(S, v, at);
    if (!x) return NULL;
    if (x->kind == TE_VAR && x->u.var->kind == TV_SYM_DIM) return tir_var_ref(S->arena, x->u.var, at->loc);
    return dim_value(S, x, at->loc);
}

/* One tensor dimension: a constant, a compile-time param, or a name that
 * becomes (or already is) a symbolic dimension. */
static tir_expr *tensor_dim(sema *S, const ast_expr *e) {
    if (e->kind == AE_NAME) {
        sym *s = sema_lookup(S, e->u.name);
        if (s && s->kind == SYM_CONST && s->value.kind == SV_DYNAMIC) {
            tir_var *v = sema_new_sym_dim(S, s->name, true, s->loc);
            s->kind = SYM_VAR;
            s->var = v;
            return tir_var_ref(S->arena, v, e->loc);
        }
        if (s && s->kind == SYM_CONST && s->origin == CONST_UNBOUND)
            return tir_var_ref(S->arena, sema_bind_unbound(S, s), e->loc);
        /* a module-level Python value does not hide a dim of the same name */
        if (s && s->kind == SYM_CONST && s->origin == CONST_PYTHON) s = NULL;
        if (!s && !tir_dtype_parse(e->u.name, &(tir_dtype){0}) && !sema_builtin_lookup(e->u.name)) {
            int di = -1;
            const tlc_define *d = find_define(S, e->u.name, &di);
            if (d) { /* -D on an implicit symbolic dim: specialize it */
                S->define_used[di] = true;
                dvalue dv;
                parse_define_value(S, d->value, &dv);
                if (!dv.is_int || dv.ival <= 0) {
                    tlc_error(S->diag, e->loc, "-D %s=%s: a tensor dimension must be a positive integer",
                              e->u.name, d->value ? d->value : "");
                    return NULL;
                }
                sym *c = sema_declare(S, e->u.name, SYM_CONST, e->loc);
                c->origin = CONST_JIT;
                c->value.kind = SV_SCALAR;
                c->value.loc = e->loc;
                c->value.u.e = tir_int(S->arena, dv.ival, e->loc);
                sema_record_const(S, e->u.name, &c->value, true);
                return tir_int(S->arena, dv.ival, e->loc);
            }
            tir_var *v = sema_new_sym_dim(S, e->u.name, false, e->loc);
            sym *ns = sema_declare(S, e->u.name, SYM_VAR, e->loc);
            ns->var = v;
            return tir_var_ref(S->arena, v, e->loc);
        }
    }
    tir_expr *x = sema_eval_scalar(S, e);
    if (!x) return NULL;
    if (x->kind == TE_VAR && x->u.var->kind == TV_SYM_DIM) return x;
    return dim_value(S, x, e->loc);
}

void sema_add_launch_check(sema *S, tir_expr *cond, tlc_loc loc) {
    for (int i = 0; i < S->checks.len; i++) /* made once: the first place that asks for it */
        if (tir_expr_equal(((struct tir_launch_check *)S->checks.items[i])->cond, cond)) return;
    struct tir_launch_check *lc = TLC_NEW(S->arena, struct tir_launch_check);
    lc->cond = cond;
    lc->loc = loc;
    tlc_ptrvec_push(&S->checks, lc);
}

/* A dimension given as an expression of sizes (T.ceildiv(N, 128)) is a
 * symbolic dim of its own, NAME_dimD, bound at launch from the tensor's
 * shape like any other; a launch check says it equals the expression. */
static tir_expr *derived_dim(sema *S, const char *name, int d, tir_expr *x, tlc_loc at) {
    if (S->checks.len >= TLRT_MAX_CHECKS) {
        tlc_error(S->diag, at, "more than %d launch checks in this kernel (asserts on sizes and tensor dimensions "
                  "given as expressions): give this dimension as a name or a constant", TLRT_MAX_CHECKS);
        return NULL;
    }
    char buf[TLRT_MAX_NAME];
    if ((size_t)snprintf(buf, sizeof buf, "%s_dim%d", name, d) >= sizeof buf) {
        tlc_error(S->diag, at, "the name of tensor '%s' is too long for the dimension it gives as an expression",
                  name);
        return NULL;
    }
    for (int i = 0; i < S->sym_dims.len; i++)
        if (!strcmp(((tir_var *)S->sym_dims.items[i])->name, buf)) {
            tlc_error(S->diag, at, "dimension %d of '%s' is an expression, whose size is named '%s', but '%s' is "
                      "already a dimension's name", d, name, buf, buf);
            return NULL;
        }
    tir_var *v = sema_new_sym_dim(S, tlc_arena_strdup(S->arena, buf), false, at);
    sema_add_launch_check(S, tir_binary(S->arena, TB_EQ, tir_var_ref(S->arena, v, at), x, at), at);
    return tir_var_ref(S->arena, v, at);
}

/* Tensor[(d0, d1), dtype], Tensor((d0, d1), dtype), T.Buffer(...). Returns
 * false when the annotation is not a tensor type at all. */
static bool tensor_annotation(sema *S, const ast_expr *ann, const ast_expr **shape, const ast_expr **dtype) {
    const ast_expr *head = ann->kind == AE_SUBSCRIPT ? ann->u.sub.value : ann->kind == AE_CALL ? ann->u.call.func : NULL;
    if (!head) return false;
    const builtin_spec *b = sema_builtin_lookup(sema_dotted_name(S, head));
    if (!b || b->id != B_TENSOR) return false;
    *shape = *dtype = NULL;
    if (ann->kind == AE_SUBSCRIPT) {
        if (ann->u.sub.nindex == 2) {
            *shape = ann->u.sub.index[0];
            *dtype = ann->u.sub.index[1];
        }
    } else {
        sema_args a;
        if (sema_bind_args(S, b, ann, &a)) {
            *shape = a.arg[0];
            *dtype = a.arg[1];
        } else {
            return true;
        }
    }
    if (!*shape)
        tlc_error(S->diag, ann->loc, "a tensor type is written Tensor[(dims...), dtype]");
    return true;
}

bool sema_is_tensor_annotation(sema *S, const ast_expr *ann) {
    const ast_expr *head = !ann ? NULL : ann->kind == AE_SUBSCRIPT ? ann->u.sub.value
                         : ann->kind == AE_CALL ? ann->u.call.func : NULL;
    const builtin_spec *b = head ? sema_builtin_lookup(sema_dotted_name(S, head)) : NULL;
    return b && b->id == B_TENSOR;
}

static tir_param *new_param(sema *S, const char *name, tlc_loc loc) {
    tir_kernel *k = S->k;
    if (k->nparams >= S->param_cap) return NULL; /* callers size the array: cannot happen */
    tir_param *tp = &k->params[k->nparams];
    tp->name = name;
    tp->loc = loc;
    check_name_length(S, "parameter", name, TLRT_MAX_NAME, loc);
    if (k->nparams == TLRT_MAX_PARAMS)
        tlc_error(S->diag, loc, "parameter '%s' is one more than the %d the launch metadata holds per kernel", name,
                  TLRT_MAX_PARAMS);
    k->nparams++;
    return tp;
}

tir_param *sema_tensor_param(sema *S, const char *name, tlc_loc loc, const ast_expr *shape, const ast_expr *dtype_e) {
    /* the shape: a tuple or list written out, a name of a tuple (a factory's
     * `shape = [batch, seq_len, heads, dim]`), or one dim */
    const ast_expr *const *items = (const ast_expr *const *)&shape;
    int n = 1;
    const sv *values = NULL;
    if (shape->kind == AE_TUPLE || shape->kind == AE_LIST) {
        items = (const ast_expr *const *)shape->u.seq.items;
        n = shape->u.seq.n;
    } else if (shape->kind == AE_NAME) {
        sym *s = sema_lookup(S, shape->u.name);
        if (s && s->kind == SYM_CONST && s->value.kind == SV_TUPLE) {
            values = s->value.u.tup.items;
            n = s->value.u.tup.n;
        }
    }
    tir_dtype t = TIR_F32; /* Tensor(shape): TileLang's default dtype */
    bool ok = !dtype_e || sema_eval_dtype(S, dtype_e, &t);
    if (n < 1 || n > 8) {
        tlc_error(S->diag, shape->loc, "a tensor needs 1 to 8 dimensions, got %d", n);
        sema_declare_error(S, name, loc);
        return NULL;
    }
    tir_expr **dims = TLC_NEW_ARRAY(S->arena, tir_expr *, n);
    int64_t total = tir_dtype_bytes(ok ? t : TIR_I8);
    for (int d = 0; d < n; d++) {
        const ast_expr *at = values ? shape : items[d];
        dims[d] = values ? tensor_dim_value(S, values[d], shape) : tensor_dim(S, items[d]);
        if (dims[d] && dims[d]->kind != TE_INT && dims[d]->kind != TE_VAR)
            dims[d] = derived_dim(S, name, d, dims[d], at->loc);
        int64_t c;
        if (!dims[d]) ok = false;
        else if (tir_expr_const_int(dims[d], &c) && __builtin_mul_overflow(total, c, &total)) {
            tlc_error(S->diag, at->loc, "tensor size overflows");
            ok = false;
        }
    }
    if (!ok) {
        sema_declare_error(S, name, loc);
        return NULL;
    }
    tir_param *tp = new_param(S, name, loc);
    if (!tp) return NULL;
    tir_buffer *b = sema_new_buffer(S, name, TIR_SCOPE_GLOBAL, t, n, loc);
    b->shape = dims;
    b->param_index = S->k->nparams - 1;
    tp->kind = TIR_PARAM_TENSOR;
    tp->buf = b;
    sym *s = sema_declare(S, name, SYM_BUFFER, loc);
    s->buf = b;
    return tp;
}

tir_param *sema_kernel_param(sema *S, const char *name, tlc_loc loc, const ast_expr *annotation, bool shadow) {
    sym *prev = sema_lookup(S, name);
    if (prev && !shadow && !(prev->kind == SYM_CONST && (prev->origin == CONST_MODULE || prev->origin == CONST_PYTHON))) {
        tlc_error(S->diag, loc, "parameter '%s' is already defined", name);
        sema_note_sym(S, prev);
        return NULL;
    }
    if (!annotation) {
        tlc_error(S->diag, loc, "parameter '%s' needs a type: Tensor[(dims...), dtype] or a scalar dtype", name);
        sema_declare_error(S, name, loc);
        return NULL;
    }
    const ast_expr *shape, *dtype_e;
    if (tensor_annotation(S, annotation, &shape, &dtype_e)) {
        if (!shape) {
            sema_declare_error(S, name, loc);
            return NULL;
        }
        return sema_tensor_param(S, name, loc, shape, dtype_e);
    }
    tir_dtype t;
    if (!sema_eval_dtype(S, annotation, &t)) {
        sema_declare_error(S, name, loc);
        return NULL;
    }
    tir_param *tp = new_param(S, name, loc);
    if (!tp) return NULL;
    tir_var *v = sema_new_var(S, name, TV_SCALAR_PARAM, t, loc);
    v->axis = S->k->nparams - 1;
    tp->kind = TIR_PARAM_SCALAR;
    tp->var = v;
    sym *s = sema_declare(S, name, SYM_VAR, loc);
    s->var = v;
    return tp;
}

/* A tlc kernel's parameters: all annotated, none with a default (a
 * default makes the function Python-shaped: sema_python.c). */
static void kernel_params(sema *S, const ast_funcdef *f) {
    for (int i = 0; i < f->nparams; i++) {
        const ast_param *p = &f->params[i];
        sema_kernel_param(S, p->name, p->loc, p->annotation, false);
    }
}
/* A grid or cluster dimension: an integer the runtime evaluates at launch
 * (constants, symbolic dims, integer scalars; + - * // % min max), between
 * 1 and `max` where it is a constant. */
static tir_expr *launch_dim(sema *S, const ast_expr *e, const char *what, int64_t max) {
    tir_expr *g = sema_eval_int(S, e, what);
    int64_t c;
    if (!g) return NULL;
    bool ok = true;
    if (tir_expr_const_int(g, &c) && (c <= 0 || c > max)) {
        tlc_error(S->diag, e->loc, "%s must be between 1 and %lld, got %lld", what, (long long)max, (long long)c);
        ok = false;
    }
    int nodes = tir_grid_expr_nodes(g);
    if (nodes < 0) {
        tlc_error(S->diag, e->loc, "a %s is evaluated at launch, from constants, symbolic dims "
                                   "and integer scalars with + - * // %% min max only", what);
        ok = false;
    } else if (nodes > TLRT_MAX_EXPR) {
        tlc_error(S->diag, e->loc, "this %s has %d operands and operators; the launch metadata holds at most %d", what,
                  nodes, TLRT_MAX_EXPR);
        ok = false;
    }
    return ok ? g : NULL;
}

/* threads=N, or threads=(x, y[, z]) as TileLang's thread axes (x
 * fastest): tlc's block is one-dimensional, x * y * z threads, and
 * T.get_thread_binding(axis) takes the thread's index apart. */
static bool kernel_threads(sema *S, tir_kernel *k, const ast_expr *e) {
    const ast_expr *const *items = &e;
    int n = 1;
    if (e->kind == AE_TUPLE || e->kind == AE_LIST) {
        items = (const ast_expr *const *)e->u.seq.items;
        n = e->u.seq.n;
        if (n < 1 || n > 3) {
            tlc_error(S->diag, e->loc, "threads=(...) has %d axes: give one to three", n);
            return false;
        }
    }
    int64_t total = 1, dims[3] = {1, 1, 1};
    for (int i = 0; i < n; i++) {
        if (!sema_eval_const_int(S, items[i], "threads", &dims[i])) return false;
        if (items != &e && (dims[i] < 1 || dims[i] > 1024)) {
            tlc_error(S->diag, items[i]->loc, "a thread axis of %lld: must be between 1 and 1024", (long long)dims[i]);
            return false;
        }
        total *= dims[i];
    }
    if (total < 32 || total > 1024 || total % 32 != 0) {
        if (n > 1)
            tlc_error(S->diag, e->loc, "threads=(...) makes %lld threads: tlc needs a multiple of 32 between 32 and 1024",
                      (long long)total);
        else
            tlc_error(S->diag, e->loc, "threads=%lld: must be a multiple of 32 between 32 and 1024", (long long)total);
        return false;
    }
    k->threads = (int)total;
    for (int i = 0; i < 3; i++) k->thread_dims[i] = (int)dims[i];
    return true;
}

/* cluster_dims=N or (x, y[, z]) of T.Kernel: blocks per thread block
 * cluster along the grid's axes (at most 8 in all, the portable limit). */
static bool kernel_cluster(sema *S, tir_kernel *k, const ast_expr *e) {
    const ast_expr *const *items = &e;
    int n = 1;
    if (e->kind == AE_TUPLE || e->kind == AE_LIST) {
        items = (const ast_expr *const *)e->u.seq.items;
        n = e->u.seq.n;
    }
    if (n < 1 || n > k->grid_rank) {
        tlc_error(S->diag, e->loc, "cluster_dims has %d entr%s but the grid has %d dimension%s", n, n == 1 ? "y" : "ies",
                  k->grid_rank, k->grid_rank == 1 ? "" : "s");
        return false;
    }
    bool ok = true, consts = true;
    int64_t product = 1;
    for (int i = 0; i < n; i++) {
        tir_expr *c = launch_dim(S, items[i], "cluster dimension", 8);
        int64_t v;
        if (!c) {
            ok = false;
            continue;
        }
        if (!tir_expr_const_int(c, &v)) consts = false, v = 2; /* known at launch: may be more than 1 */
        product *= v;
        if (v != 1) k->cluster[i] = c; /* 1 (NULL): no cluster along that axis */
    }
    if (ok && consts && product > 8) {
        tlc_error(S->diag, e->loc, "cluster_dims holds %lld blocks; a cluster holds at most 8", (long long)product);
        ok = false;
    }
    return ok;
}

/* ---------------- with Kernel(...) ---------------- */

/* sync_grid() stands in the kernel body itself (top: s is one of the
 * body's statements): every block reaches it, and the interpreter runs
 * the body in parts between them (interp_grid_sync.c). */
static void check_grid_syncs(sema *S, const tir_stmt *s, bool top) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) check_grid_syncs(S, s->u.seq.stmts[i], false);
        return;
    case TS_FOR: check_grid_syncs(S, s->u.for_.body, false); return;
    case TS_IF:
        check_grid_syncs(S, s->u.if_.then, false);
        check_grid_syncs(S, s->u.if_.els, false);
        return;
    case TS_SYNC_GRID:
        if (!top)
            tlc_error(S->diag, s->loc, "sync_grid() must stand in the kernel body itself, not inside a loop or "
                      "condition: every block of the grid must reach it the same number of times");
        return;
    default: return;
    }
}

void sema_kernel_with(sema *S, const ast_stmt *s) {
    tir_kernel *k = S->k;
    const ast_expr *call = s->u.with.item;
    if (S->in_kernel) {
        tlc_error(S->diag, s->loc, "'with Kernel' cannot be nested");
        tlc_note(S->diag, S->kernel_with->loc, "the enclosing 'with Kernel' is here");
        return;
    }
    tlc_diag *outside = S->diag;
    if (S->fn_mode) {
        if (S->blocks_seen++ != S->want_block) return; /* another pass's block */
        S->diag = S->loud;
    } else if (S->kernel_with) {
        tlc_error(S->diag, s->loc, "a kernel has exactly one 'with Kernel' block");
        tlc_note(S->diag, S->kernel_with->loc, "the first one is here");
        return;
    }
    S->kernel_with = s;
    const builtin_spec *b = sema_builtin_lookup("Kernel");
    sema_args a;
    bool ok = sema_bind_args(S, b, call, &a);
    k->grid_rank = a.nvar;
    for (int i = 0; i < a.nvar; i++) {
        tir_expr *g = launch_dim(S, a.var[i], "grid dimension", INT32_MAX);
        if (!g) ok = false;
        k->grid[i] = g;
    }
    k->threads = 128;
    k->thread_dims[0] = 128;
    k->thread_dims[1] = k->thread_dims[2] = 1;
    if (a.arg[0] && !kernel_threads(S, k, a.arg[0])) ok = false;
    if (a.arg[1] && !kernel_cluster(S, k, a.arg[1])) ok = false;
    sema_push_scope(S);
    const ast_expr *tgt = s->u.with.target;
    if (tgt) {
        const ast_expr *const *names = &tgt;
        int n = 1;
        if (tgt->kind == AE_TUPLE || tgt->kind == AE_LIST) {
            names = (const ast_expr *const *)tgt->u.seq.items;
            n = tgt->u.seq.n;
        }
        if (ok && n != k->grid_rank) {
            tlc_error(S->diag, tgt->loc, "Kernel has %d grid dimension%s but %d block index name%s",
                      k->grid_rank, k->grid_rank == 1 ? "" : "s", n, n == 1 ? "" : "s");
        }
        for (int i = 0; i < n && i < 3; i++) {
            if (names[i]->kind != AE_NAME) {
                tlc_error(S->diag, names[i]->loc, "expected a name for the block index");
                continue;
            }
            tir_var *v = sema_new_var(S, names[i]->u.name, TV_BLOCK_IDX, TIR_I32, names[i]->loc);
            v->axis = i;
            if (i < k->grid_rank) k->block_idx[i] = v;
            sym *sy = sema_declare(S, names[i]->u.name, SYM_VAR, names[i]->loc);
            sy->var = v;
        }
    }
    if (k->grid_rank == 0) k->grid_rank = 1, k->grid[0] = tir_int(S->arena, 1, call->loc);
    for (int i = 0; i < k->grid_rank; i++)
        if (!k->grid[i]) k->grid[i] = tir_int(S->arena, 1, call->loc);
    /* `with Kernel(...)` without `as` (or with fewer names): the block
     * indices still exist, they just have no name in the source. */
    for (int i = 0; i < k->grid_rank; i++)
        if (!k->block_idx[i]) {
            static const char *const anon[3] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
            tir_var *v = sema_new_var(S, anon[i], TV_BLOCK_IDX, TIR_I32, call->loc);
            v->axis = i;
            k->block_idx[i] = v;
        }
    S->in_kernel = true;
    tlc_ptrvec body;
    memset(&body, 0, sizeof body);
    sema_block(S, &s->u.with.body, &body);
    S->in_kernel = false;
    sema_pop_scope(S);
    tir_stmt *seq = tir_new_stmt(S->arena, TS_SEQ, s->loc);
    seq->u.seq.n = body.len;
    seq->u.seq.stmts = (tir_stmt **)tlc_ptrvec_freeze(&body, S->arena);
    k->body = seq;
    for (int i = 0; i < seq->u.seq.n; i++) check_grid_syncs(S, seq->u.seq.stmts[i], true);
    sema_manual_ws_finish(S);
    sema_parallel_guards(S);
    sema_fragment_offsets(S);
    sema_thread_varying(S);
    tlc_ptrvec_free(&S->reducers);
    S->diag = outside;
}

/* ---------------- shared memory ---------------- */

static int64_t shared_buffer_bytes(const tir_buffer *b) {
    int64_t e = tir_buffer_elems(b), bytes, align = b->layout_hint == TIR_LAYOUT_HINT_SWIZZLED ? 1024 : 128;
    if (e < 0 || __builtin_mul_overflow(e, (int64_t)tir_dtype_bytes(b->dtype), &bytes)) return INT64_MAX / 4;
    return (bytes + align - 1) / align * align;
}

/* The sum of the shared buffers, before pipelining and before liveness
 * lets buffers share bytes: what `--emit=tir` shows. Whether the kernel
 * fits its target is the plan's question (transform/plan.c), asked of the
 * bytes it places; here only a buffer too big for the target on its own is
 * an error. */
static void check_shared(sema *S) {
    tir_kernel *k = S->k;
    tlc_arch arch = S->opt ? S->opt->arch : TLC_DEFAULT_ARCH;
    int64_t total = 0, max = tlc_target_of(arch)->max_shared_per_block;
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers[i];
        if (b->scope != TIR_SCOPE_SHARED) continue;
        int64_t bytes = shared_buffer_bytes(b);
        if (bytes > max)
            tlc_error(S->diag, b->loc, "shared buffer '%s' (%s) needs %lld bytes of shared memory on its own, over the %s limit of %lld bytes per block",
                      b->name, tir_dtype_name(b->dtype), (long long)bytes, tlc_arch_name(arch), (long long)max);
        total += bytes;
        if (total > INT64_MAX / 4) total = INT64_MAX / 4;
    }
    k->shared_bytes = total;
}

/* ---------------- kernels ---------------- */

static bool is_docstring(const ast_stmt *s) {
    return s->kind == AS_EXPR && s->u.expr && s->u.expr->kind == AE_STRING;
}

bool sema_is_kernel_with(sema *S, const ast_stmt *s) {
    if (s->kind != AS_WITH) return false;
    const builtin_spec *b = sema_call_builtin(S, s->u.with.item);
    return b && b->id == B_KERNEL;
}

bool sema_is_workspace_decl(sema *S, const ast_stmt *s) {
    if (s->kind != AS_ASSIGN || !s->u.assign.target || s->u.assign.target->kind != AE_NAME) return false;
    const builtin_spec *b = sema_call_builtin(S, s->u.assign.value);
    return b && b->id == B_ALLOC_GLOBAL;
}

void sema_kernel_body(sema *S, const ast_funcdef *f) {
    sema_count_assignments(S, &f->body);
    tlc_ptrvec dummy;
    memset(&dummy, 0, sizeof dummy);
    S->cur = &dummy;
    for (int i = 0; i < f->body.n; i++) {
        const ast_stmt *s = f->body.stmts[i];
        if (tlc_diag_too_many(S->diag)) break;
        if (is_docstring(s) || s->kind == AS_PASS) continue;
        if (sema_is_kernel_with(S, s)) {
            sema_kernel_with(S, s);
            continue;
        }
        if ((S->kernel_with || S->blocks_seen) && !(S->fn_mode && sema_is_workspace_decl(S, s))) {
            tlc_error(S->diag, s->loc, "statements after the 'with Kernel' block are not supported "
                      "(only alloc_global workspaces and further 'with Kernel' blocks)");
            continue;
        }
        /* before the Kernel block only compile-time constants may be defined */
        sema_stmt(S, s);
    }
    tlc_ptrvec_free(&dummy);
    S->cur = NULL;
}

tir_kernel *sema_kernel(sema *S, const ast_funcdef *f) {
    tir_kernel *k = TLC_NEW(S->arena, tir_kernel);
    k->name = f->name;
    k->loc = f->loc;
    S->k = k;
    S->kernel_with = NULL;
    S->swizzle_loc = (tlc_loc){0, 0};
    S->parallel_loc = (tlc_loc){0, 0};
    S->in_kernel = false;
    memset(&S->buffers, 0, sizeof S->buffers);
    memset(&S->sym_dims, 0, sizeof S->sym_dims);
    memset(&S->consts_tmp, 0, sizeof S->consts_tmp);
    memset(&S->bound_dims, 0, sizeof S->bound_dims);
    memset(&S->checks, 0, sizeof S->checks);
    memset(&S->fn_workspaces, 0, sizeof S->fn_workspaces);
    memset(&S->macros, 0, sizeof S->macros);
    S->macro_expansions = 0;
    S->py_items = 0;
    memset(&S->macros_counted, 0, sizeof S->macros_counted);
    memset(&S->global_layouts, 0, sizeof S->global_layouts);
    S->blocks_seen = 0;
    S->lets_reassigned = false;
    sema_map_init(&S->assign_count);
    sema_push_scope(S);

    int errors0 = S->diag->errors;
    bool python = sema_is_python_style(f);
    bool not_kernel = false; /* a TileLang @T.macro: refused, its body unread */
    for (int i = 0; i < f->ndecorators; i++) {
        const ast_expr *d = f->decorators[i].expr;
        const ast_expr *head = d && d->kind == AE_CALL ? d->u.call.func : d;
        const char *name = head ? sema_dotted_name(S, head) : NULL;
        const builtin_spec *b = sema_builtin_lookup(name);
        if (b && b->id == B_JIT) sema_jit_params(S, d, python);
        else if (b && b->id == B_PRIM_FUNC) continue;
        else if (sema_refuse_tilelang(S, name, f->decorators[i].loc)) not_kernel = true;
        else tlc_error(S->diag, f->decorators[i].loc, "unknown decorator '%s' (expected @jit or @prim_func)", name ? name : "?");
    }
    check_name_length(S, "kernel name", f->name, TLRT_MAX_KERNEL_NAME, f->loc);
    if (python && !not_kernel) {
        sema_python_kernel(S, f);
    } else {
        S->param_cap = f->nparams ? f->nparams : 1;
        k->params = TLC_NEW_ARRAY(S->arena, tir_param, (size_t)S->param_cap);
        if (!not_kernel) {
            kernel_params(S, f);
            sema_kernel_body(S, f);
        }
        if (!S->kernel_with && !not_kernel && !tlc_diag_too_many(S->diag))
            tlc_error(S->diag, f->loc, "kernel '%s' has no 'with Kernel(...)' block", f->name);
    }
    if (S->diag->errors == errors0) sema_check_bound_dims(S); /* after other errors a tensor may be missing */
    tlc_ptrvec_free(&S->bound_dims);
    k->nchecks = S->checks.len;
    k->checks = TLC_NEW_ARRAY(S->arena, struct tir_launch_check, (size_t)k->nchecks + 1);
    for (int i = 0; i < k->nchecks; i++) k->checks[i] = *(struct tir_launch_check *)S->checks.items[i];
    tlc_ptrvec_free(&S->checks);

    k->nbuffers = S->buffers.len;
    k->buffers = (tir_buffer **)tlc_ptrvec_freeze(&S->buffers, S->arena);
    k->nsym = S->sym_dims.len;
    k->sym_dims = (tir_var **)tlc_ptrvec_freeze(&S->sym_dims, S->arena);
    k->nconsts = S->consts_tmp.len;
    k->consts = TLC_NEW_ARRAY(S->arena, tir_const, k->nconsts ? k->nconsts : 1);
    for (int i = 0; i < k->nconsts; i++) k->consts[i] = *(tir_const *)S->consts_tmp.items[i];
    tlc_ptrvec_free(&S->consts_tmp);
    if (!k->body) k->body = tir_new_stmt(S->arena, TS_SEQ, f->loc);
    if (k->grid_rank == 0) {
        k->grid_rank = 1;
        k->grid[0] = tir_int(S->arena, 1, f->loc);
    }
    check_shared(S);
    sema_pop_scope(S);
    sema_map_free(&S->assign_count);
    tlc_ptrvec_free(&S->macros);
    tlc_ptrvec_free(&S->macros_counted);
    tlc_ptrvec_free(&S->global_layouts);
    S->k = NULL;
    return k;
}

/* Whether the --kernel filter names f, or one of its kernels when it has
 * several (NAME_k0, ...: the whole function is compiled). */
bool sema_is_helper(sema *S, const ast_funcdef *f) {
    int *i = f->name ? sema_map_get(&S->helper_funcs, f->name) : NULL;
    return i && S->module->funcs[*i] == f;
}

/* The module's helpers by name: the functions the top-level filter kept as
 * helpers (the same name on the same line). */
static void find_helpers(sema *S) {
    const ast_module *m = S->module;
    sema_map lines;
    sema_map_init(&lines);
    for (int i = 0; i < m->nhelpers; i++) sema_map_put(&lines, m->helpers[i].name, m->helpers[i].loc.line);
    for (int i = 0; i < m->nfuncs; i++) {
        const ast_funcdef *f = m->funcs[i];
        int *line = f->name ? sema_map_get(&lines, f->name) : NULL;
        if (line && *line == f->loc.line) sema_map_put(&S->helper_funcs, f->name, i);
    }
    sema_map_free(&lines);
}

static bool selected(sema *S, const ast_funcdef *f) {
    const char *want = S->opt->kernel;
    if (sema_decorated_macro(S, f) || sema_is_helper(S, f)) return false;
    size_t n = f->name ? strlen(f->name) : 0;
    if (!f->name || strncmp(want, f->name, n) != 0) return false;
    if (!want[n]) return true;
    if (strncmp(want + n, "_k", 2) != 0 || !want[n + 2]) return false;
    for (const char *p = want + n + 2; *p; p++)
        if (!isdigit((unsigned char)*p)) return false;
    return sema_is_multi_kernel(S, f);
}

/* A function's kernels are named NAME_k0, NAME_k1, ...: another function of
 * that name would give the module two kernels of one name. */
static void check_kernel_names(sema *S, const tir_module *out) {
    for (int f = 0; f < out->nfunctions; f++)
        for (int i = 0; i < out->functions[f]->nkernels; i++) {
            const tir_kernel *k = out->functions[f]->kernels[i];
            for (int j = 0; j < S->module->nfuncs; j++) {
                const ast_funcdef *g = S->module->funcs[j];
                if (!g->name || strcmp(g->name, k->name) != 0 || sema_is_helper(S, g)) continue;
                tlc_error(S->diag, g->loc, "'%s' is also the name of kernel %d of function '%s' (its kernels are "
                          "named %s_k0, %s_k1, ...): rename one of them", g->name, i, out->functions[f]->name,
                          out->functions[f]->name, out->functions[f]->name);
                tlc_note(S->diag, out->functions[f]->loc, "function '%s' is here", out->functions[f]->name);
            }
        }
}

tir_module *tlc_sema(const ast_module *m, const tlc_sema_options *opt, tlc_arena *arena, tlc_diag *diag) {
    if (!m) return NULL;
    sema S;
    memset(&S, 0, sizeof S);
    tlc_sema_options defaults = {.arch = TLC_DEFAULT_ARCH};
    S.arena = arena;
    S.diag = diag;
    S.opt = opt ? opt : &defaults;
    S.module = m;
    sema_map_init(&S.names);
    sema_map_init(&S.helper_funcs);
    find_helpers(&S);
    int errors0 = diag->errors;
    S.define_used = calloc((size_t)(S.opt->ndefines > 0 ? S.opt->ndefines : 1), sizeof(bool));
    if (!S.define_used) abort();

    tir_module *out = TLC_NEW(arena, tir_module);
    out->source_name = diag->src && diag->src->name ? diag->src->name : "<input>";
    out->arch = S.opt->arch;
    check_defines_known(&S);
    sema_push_scope(&S); /* module scope */
    sema_globals(&S);
    sema_choose_factory_kernels(&S);

    bool found = !S.opt->kernel;
    for (int i = 0; i < m->nfuncs; i++)
        if (S.opt->kernel && selected(&S, m->funcs[i])) found = true;
    if (!found) {
        tlc_error(diag, (tlc_loc){0, 0}, "no kernel named '%s' in this file", S.opt->kernel);
        for (int i = 0; i < m->nskipped; i++)
            if (strcmp(m->skipped[i].name, S.opt->kernel) == 0) {
                tlc_note(diag, m->skipped[i].loc, "'%s' is read as Python, not as a kernel: a kernel is decorated "
                         "with @jit, @tilelang.jit or @T.prim_func, or holds a 'with T.Kernel(...)' block",
                         S.opt->kernel);
                break;
            }
    }
    int nkernels = 0; /* macros are not kernels */
    for (int i = 0; i < m->nfuncs; i++) nkernels += !sema_decorated_macro(&S, m->funcs[i]) && !sema_is_helper(&S, m->funcs[i]);
    if (nkernels == 0 && !S.opt->kernel) {
        tlc_error(diag, (tlc_loc){0, 0}, "no kernel in this file");
        if (m->nfuncs > 0)
            tlc_note(diag, m->funcs[0]->loc, "'%s' is a @T.macro: it is expanded where a kernel calls it",
                     m->funcs[0]->name ? m->funcs[0]->name : "?");
        if (m->nskipped > 0)
            tlc_note(diag, m->skipped[0].loc, "functions such as '%s' are read as Python, not as kernels: a kernel "
                     "is decorated with @jit, @tilelang.jit or @T.prim_func", m->skipped[0].name);
    }

    tlc_ptrvec kernels, functions;
    memset(&kernels, 0, sizeof kernels);
    memset(&functions, 0, sizeof functions);
    for (int i = 0; i < m->nfuncs && !tlc_diag_too_many(diag); i++) {
        const ast_funcdef *f = m->funcs[i];
        if (S.opt->kernel && !selected(&S, f)) continue;
        if (sema_decorated_macro(&S, f)) continue; /* inlined where it is called */
        if (sema_is_helper(&S, f)) continue;        /* run where it is called */
        for (int j = 0; j < i; j++)
            if (f->name && m->funcs[j]->name && strcmp(f->name, m->funcs[j]->name) == 0) {
                tlc_error(diag, f->loc, "kernel '%s' is defined twice", f->name);
                tlc_note(diag, m->funcs[j]->loc, "the first definition is here");
                break;
            }
        int had_kernels = kernels.len, had_functions = functions.len;
        if (sema_is_multi_kernel(&S, f)) tlc_ptrvec_push(&functions, sema_function(&S, f, &kernels));
        else tlc_ptrvec_push(&kernels, sema_kernel(&S, f));
        /* the runtime's metadata describes at most so many of each per module */
        if (had_kernels <= TLRT_MAX_KERNELS && kernels.len > TLRT_MAX_KERNELS)
            tlc_error(diag, f->loc, "'%s' makes this file's kernel number %d: one file compiles to at most %d "
                      "kernels (a function's 'with Kernel' blocks count one each)", f->name ? f->name : "?",
                      kernels.len, TLRT_MAX_KERNELS);
        if (had_functions <= TLRT_MAX_FUNCTIONS && functions.len > TLRT_MAX_FUNCTIONS)
            tlc_error(diag, f->loc, "'%s' is this file's function number %d: one file holds at most %d functions "
                      "of several kernels", f->name ? f->name : "?", functions.len, TLRT_MAX_FUNCTIONS);
    }
    sema_pop_scope(&S);
    out->nkernels = kernels.len;
    out->kernels = (tir_kernel **)tlc_ptrvec_freeze(&kernels, arena);
    out->nfunctions = functions.len;
    out->functions = (tir_function **)tlc_ptrvec_freeze(&functions, arena);
    check_kernel_names(&S, out);

    free(S.define_used);
    free(S.syms);
    free(S.marks);
    sema_map_free(&S.names);
    sema_map_free(&S.helper_funcs);
    return diag->errors > errors0 ? NULL : out;
}
