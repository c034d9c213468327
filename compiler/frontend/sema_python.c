/* TileLang's Python-shaped kernel functions, read as tlc kernels:
 *
 *  - a factory: `@tilelang.jit def matmul(M, N, K, block_M, ..., dtype="float16"):`
 *    whose body computes compile-time values (`scale = (1.0 / dim) ** 0.5`),
 *    defines one `@T.prim_func def main(A: T.Tensor(...), ...)` and
 *    `return main`;
 *  - an eager function: `@tilelang.jit def matmul(A, B, block_M: int = 128):`
 *    with `M, N, K = T.const("M, N, K")`, the tensors annotated in the body
 *    (`A: T.Tensor((M, K), dtype)`), outputs `C = T.empty((M, N), dtype)`,
 *    one `with T.Kernel(...)` and `return C`.
 *
 * Either becomes one kernel named after the function. Its compile-time
 * parameters are the function's parameters that are not tensors or
 * scalars (a default is a @jit default; without one the value comes from
 * -D, or the parameter is a symbolic dim where first used and some tensor
 * must have it as a dimension). Eager kernels take their tensors and
 * scalars in the function's order, then the T.empty outputs: the caller
 * allocates the outputs (TileLang's out_idx=[-1] convention). */
#include <stdlib.h>
#include <string.h>
#include "sema_internal.h"

static bool is_docstring(const ast_stmt *s) {
    return s->kind == AS_EXPR && s->u.expr && s->u.expr->kind == AE_STRING;
}

bool sema_is_python_style(const ast_funcdef *f) {
    for (int i = 0; i < f->nparams; i++)
        if (!f->params[i].annotation || f->params[i].default_value) return true;
    for (int i = 0; i < f->body.n; i++)
        if (f->body.stmts[i]->kind == AS_FUNCDEF) return true;
    return false;
}

/* (sema_internal.h) */
bool sema_python_type_annotation(sema *S, const ast_expr *ann) {
    if (!ann) return true;
    /* Optional[float], typing.Optional[int], float | None */
    if (ann->kind == AE_SUBSCRIPT && ann->u.sub.nindex == 1) {
        const char *head = sema_dotted_name(S, ann->u.sub.value);
        if (head && (!strcmp(head, "Optional") || !strcmp(head, "typing.Optional")))
            return sema_python_type_annotation(S, ann->u.sub.index[0]);
    }
    if (ann->kind == AE_BINARY && ann->u.bin.op == AOP_BITOR) {
        const ast_expr *x = ann->u.bin.rhs->kind == AE_NONE ? ann->u.bin.lhs
                          : ann->u.bin.lhs->kind == AE_NONE ? ann->u.bin.rhs : NULL;
        return x && sema_python_type_annotation(S, x);
    }
    if (ann->kind == AE_NAME)
        return !strcmp(ann->u.name, "int") || !strcmp(ann->u.name, "float") || !strcmp(ann->u.name, "bool") ||
               !strcmp(ann->u.name, "str");
    const char *name = sema_dotted_name(S, ann);
    return name && !strcmp(name, "dtype");
}

/* `NAME: annotation` with no value */
static bool bare_annotation(const ast_stmt *s) {
    return s->kind == AS_ANNASSIGN && !s->u.ann.value && s->u.ann.target && s->u.ann.target->kind == AE_NAME;
}

static int param_index(const ast_funcdef *f, const char *name) {
    for (int i = 0; i < f->nparams; i++)
        if (!strcmp(f->params[i].name, name)) return i;
    return -1;
}

bool sema_decorated_macro(sema *S, const ast_funcdef *g) {
    for (int i = 0; i < g->ndecorators; i++) {
        const ast_expr *d = g->decorators[i].expr;
        const ast_expr *head = d && d->kind == AE_CALL ? d->u.call.func : d;
        const char *name = head ? sema_dotted_name(S, head) : NULL;
        if (name && !strcmp(name, "macro")) return true;
    }
    return false;
}

/* The factory's @T.prim_func function: its parameters are the kernel's,
 * its body the kernel's body. */
static void factory_kernel(sema *S, const ast_funcdef *g) {
    bool ok = true;
    for (int i = 0; i < g->ndecorators; i++) {
        const ast_expr *d = g->decorators[i].expr;
        const ast_expr *head = d && d->kind == AE_CALL ? d->u.call.func : d;
        const char *name = head ? sema_dotted_name(S, head) : NULL;
        const builtin_spec *b = sema_builtin_lookup(name);
        if (b && b->id == B_PRIM_FUNC) continue;
        if (!sema_refuse_tilelang(S, name, g->decorators[i].loc))
            tlc_error(S->diag, g->decorators[i].loc, "unknown decorator '%s' on a factory's kernel (expected @T.prim_func)",
                      name ? name : "?");
        ok = false;
    }
    if (!ok) return;
    sema_push_scope(S); /* its parameters may hide the factory's names, as in Python */
    for (int i = 0; i < g->nparams; i++) {
        const ast_param *p = &g->params[i];
        if (p->default_value)
            tlc_error(S->diag, p->default_value->loc, "a kernel's tensor and scalar parameters have no defaults; "
                      "give compile-time values as parameters of the factory");
        sema_kernel_param(S, p->name, p->loc, p->annotation, true);
    }
    sema_kernel_body(S, g);
    if (!S->kernel_with && !tlc_diag_too_many(S->diag))
        tlc_error(S->diag, g->loc, "kernel '%s' has no 'with Kernel(...)' block", g->name);
    sema_pop_scope(S);
}

static bool is_output(const char *name, const char *const *outputs, int nout) {
    for (int i = 0; i < nout; i++)
        if (!strcmp(outputs[i], name)) return true;
    return false;
}

/* An eager function's return: the outputs it declared. */
static void check_return(sema *S, const ast_funcdef *f, const ast_stmt *s, const char *const *outputs, int nout) {
    const ast_expr *v = s->u.expr;
    if (!v) return;
    const ast_expr *const *items = &v;
    int n = 1;
    if (v->kind == AE_TUPLE || v->kind == AE_LIST) {
        items = (const ast_expr *const *)v->u.seq.items;
        n = v->u.seq.n;
    }
    for (int i = 0; i < n; i++)
        if (items[i]->kind != AE_NAME || !is_output(items[i]->u.name, outputs, nout))
            tlc_error(S->diag, items[i]->loc, "'%s' returns the tensors it declares with T.empty; this is not one of them",
                      f->name);
}

/* Orders the kernel's parameters by key (stable) and renumbers them. */
static void order_params(sema *S, int *key) {
    tir_kernel *k = S->k;
    int n = k->nparams;
    for (int i = 1; i < n; i++) {
        tir_param p = k->params[i];
        int kp = key[i], j = i - 1;
        while (j >= 0 && key[j] > kp) {
            k->params[j + 1] = k->params[j];
            key[j + 1] = key[j];
            j--;
        }
        k->params[j + 1] = p;
        key[j + 1] = kp;
    }
    for (int i = 0; i < n; i++) {
        if (k->params[i].kind == TIR_PARAM_TENSOR) k->params[i].buf->param_index = i;
        else k->params[i].var->axis = i;
    }
    /* Buffer ids follow too: the tensor parameters first, in their new
     * order (a T.empty output declared before an input moved behind it),
     * then every other buffer as it was. Nothing has read an id yet. */
    tlc_ptrvec *bufs = &S->buffers;
    void **old = TLC_NEW_ARRAY(S->arena, void *, (size_t)bufs->len + 1);
    for (int i = 0; i < bufs->len; i++) old[i] = bufs->items[i];
    int next = 0;
    for (int i = 0; i < n; i++)
        if (k->params[i].kind == TIR_PARAM_TENSOR) bufs->items[next++] = k->params[i].buf;
    for (int i = 0; i < bufs->len && next < bufs->len; i++)
        if (((tir_buffer *)old[i])->param_index < 0) bufs->items[next++] = old[i];
    if (next != bufs->len) { /* not a permutation: leave the ids to the verifier */
        for (int i = 0; i < bufs->len; i++) bufs->items[i] = old[i];
        return;
    }
    for (int i = 0; i < bufs->len; i++) ((tir_buffer *)bufs->items[i])->id = i;
}

/* The factory's statement i as one of its @T.prim_func functions, or NULL. */
static const ast_funcdef *factory_function(sema *S, const ast_funcdef *f, int i) {
    const ast_stmt *s = f->body.stmts[i];
    return s->kind == AS_FUNCDEF && !sema_decorated_macro(S, s->u.func) ? s->u.func : NULL;
}

static bool decorated_prim_func(sema *S, const ast_funcdef *g) {
    for (int i = 0; i < g->ndecorators; i++) {
        const ast_expr *d = g->decorators[i].expr;
        const builtin_spec *b = sema_builtin_lookup(sema_dotted_name(S, d && d->kind == AE_CALL ? d->u.call.func : d));
        if (b && b->id == B_PRIM_FUNC) return true;
    }
    return false;
}

/* g's @T.prim_func function when g is an inner factory (undecorated, with
 * one among its statements: TileLang's `def kernel_func(block_M, ...)`,
 * which the factory calls and returns), else NULL. */
static const ast_funcdef *inner_prim_func(sema *S, const ast_funcdef *g) {
    if (g->ndecorators) return NULL;
    for (int i = 0; i < g->body.n; i++) {
        const ast_stmt *s = g->body.stmts[i];
        if (s->kind == AS_FUNCDEF && decorated_prim_func(S, s->u.func)) return s->u.func;
    }
    return NULL;
}

const ast_funcdef *sema_factory_kernel(sema *S, const ast_funcdef *g) {
    const ast_funcdef *p = inner_prim_func(S, g);
    return p ? p : g;
}

int sema_factory_functions(sema *S, const ast_funcdef *f, const ast_funcdef **first) {
    int n = 0;
    for (int i = 0; i < f->body.n; i++)
        if (factory_function(S, f, i) && n++ == 0 && first) *first = factory_function(S, f, i);
    return n;
}

/* ---------------- which function a factory returns ---------------- */

/* s is `return ...`, or an `if` with a `return` in a branch */
static bool holds_return(const ast_stmt *s, int depth) {
    if (s->kind == AS_RETURN) return true;
    if (s->kind != AS_IF || depth > 64) return false;
    for (int i = 0; i < s->u.if_.then.n; i++)
        if (holds_return(s->u.if_.then.stmts[i], depth + 1)) return true;
    for (int i = 0; i < s->u.if_.els.n; i++)
        if (holds_return(s->u.if_.els.stmts[i], depth + 1)) return true;
    return false;
}

/* A condition that picks the function a factory returns: true or false
 * at compile time (*ok false, reported, otherwise). */
static bool choice_condition(sema *S, const ast_expr *cond, bool *ok) {
    const char *msg = "which function the factory returns must be known at compile time";
    tir_expr *c = sema_eval_scalar(S, cond);
    if (c) c = sema_to_bool(S, c, cond, "the condition");
    *ok = c && c->kind == TE_INT;
    if (c && !*ok && !sema_unbound_error(S, c, cond->loc, msg)) tlc_error(S->diag, cond->loc, "%s", msg);
    return *ok && c->u.ival != 0;
}

/* `return h(args)` of an inner factory h: its parameters bound to the
 * arguments' values, its statements run as the factory's are (macros
 * registered, its @T.prim_func compiled as the kernel), in a scope of its
 * own. Returns its kernel function, or NULL when reported. */
static const ast_funcdef *run_inner_factory(sema *S, const ast_funcdef *h, const ast_expr *call) {
    const ast_funcdef *prim = inner_prim_func(S, h);
    if (call->u.call.nargs > h->nparams) {
        tlc_error(S->diag, call->loc, "'%s' takes %d arguments, %d given", h->name, h->nparams, call->u.call.nargs);
        return NULL;
    }
    sv *vals = TLC_NEW_ARRAY(S->arena, sv, (size_t)h->nparams + 1);
    bool ok = true;
    for (int i = 0; i < h->nparams; i++) {
        const ast_expr *e = i < call->u.call.nargs ? call->u.call.args[i] : NULL;
        for (int k = 0; !e && k < call->u.call.nkwargs; k++)
            if (call->u.call.kwargs[k].name && !strcmp(call->u.call.kwargs[k].name, h->params[i].name))
                e = call->u.call.kwargs[k].value;
        if (!e) e = h->params[i].default_value;
        if (!e) {
            tlc_error(S->diag, call->loc, "'%s' needs a value for its parameter '%s'", h->name, h->params[i].name);
            ok = false;
            continue;
        }
        vals[i] = sema_eval(S, e);
        ok = ok && vals[i].kind != SV_ERROR;
    }
    if (!ok) return NULL;
    sema_push_scope(S);
    for (int i = 0; i < h->nparams; i++) sema_bind_value(S, h->params[i].name, h->params[i].loc, vals[i]);
    sema_count_assignments(S, &h->body);
    bool returned = false;
    for (int i = 0; i < h->body.n && !tlc_diag_too_many(S->diag); i++) {
        const ast_stmt *s = h->body.stmts[i];
        if (is_docstring(s) || s->kind == AS_PASS) continue;
        if (returned) {
            tlc_error(S->diag, s->loc, "statements after 'return' are not supported");
            continue;
        }
        if (s->kind == AS_FUNCDEF && sema_decorated_macro(S, s->u.func)) {
            tlc_ptrvec_push(&S->macros, (void *)s->u.func);
        } else if (s->kind == AS_FUNCDEF && s->u.func == prim) {
            factory_kernel(S, prim);
        } else if (s->kind == AS_FUNCDEF) {
            tlc_error(S->diag, s->loc, "'%s' defines a second kernel function, '%s'", h->name, s->u.func->name);
        } else if (s->kind == AS_RETURN) {
            if (!s->u.expr || s->u.expr->kind != AE_NAME || strcmp(s->u.expr->u.name, prim->name))
                tlc_error(S->diag, s->u.expr ? s->u.expr->loc : s->loc, "'%s' returns its kernel: write 'return %s'",
                          h->name, prim->name);
            returned = true;
        } else {
            sema_stmt(S, s);
        }
    }
    sema_pop_scope(S);
    return prim;
}

/* The factory's function that `return v` returns; NULL when reported. */
static const ast_funcdef *returned_value(sema *S, const ast_funcdef *f, const ast_expr *v, tlc_loc at, int depth) {
    const ast_funcdef *first = NULL;
    int n = sema_factory_functions(S, f, &first);
    if (v && v->kind == AE_IFEXP && depth < 64) {
        bool ok, taken = choice_condition(S, v->u.ifexp.cond, &ok);
        return ok ? returned_value(S, f, taken ? v->u.ifexp.then : v->u.ifexp.els, at, depth + 1) : NULL;
    }
    for (int i = 0; v && v->kind == AE_NAME && i < f->body.n; i++) {
        const ast_funcdef *g = factory_function(S, f, i);
        if (g && !strcmp(g->name, v->u.name)) return g;
    }
    /* return kernel_func(block_M, ...): an inner factory's kernel */
    const ast_expr *callee = v && v->kind == AE_CALL ? v->u.call.func : NULL;
    for (int i = 0; callee && callee->kind == AE_NAME && i < f->body.n; i++) {
        const ast_funcdef *g = factory_function(S, f, i);
        if (!g || strcmp(g->name, callee->u.name) || !inner_prim_func(S, g)) continue;
        return S->choosing ? inner_prim_func(S, g) : run_inner_factory(S, g, v);
    }
    if (n == 1) {
        tlc_error(S->diag, v ? v->loc : at, "the factory '%s' returns its kernel: write 'return %s'", f->name,
                  first->name);
        return NULL;
    }
    char names[160];
    size_t len = 0;
    names[0] = 0;
    for (int i = 0; i < f->body.n && len < sizeof names; i++) {
        const ast_funcdef *g = factory_function(S, f, i);
        if (!g) continue;
        int w = snprintf(names + len, sizeof names - len, "%s'%s'", len ? ", " : "", g->name);
        len = w < 0 ? sizeof names : len + (size_t)w;
    }
    if (v && v->kind == AE_NAME)
        tlc_error(S->diag, v->loc, "'%s' is not one of the @T.prim_func functions of the factory '%s' (%s)", v->u.name,
                  f->name, names);
    else
        tlc_error(S->diag, v ? v->loc : at, "the factory '%s' returns one of its @T.prim_func functions (%s) by name",
                  f->name, names);
    return NULL;
}

/* Runs s (a return, or an if holding one) at compile time: the function
 * it returns, with *ended set, or NULL and *ended false when s ends
 * without returning (a branch without a return). Statements before a
 * return in a branch run too. */
static const ast_funcdef *returned_function(sema *S, const ast_funcdef *f, const ast_stmt *s, bool *ended, int depth) {
    *ended = false;
    if (s->kind == AS_RETURN) {
        *ended = true;
        return returned_value(S, f, s->u.expr, s->loc, 0);
    }
    bool ok, taken = choice_condition(S, s->u.if_.cond, &ok);
    if (!ok) {
        *ended = true;
        return NULL;
    }
    const ast_block *b = taken ? &s->u.if_.then : &s->u.if_.els;
    for (int i = 0; i < b->n && !tlc_diag_too_many(S->diag); i++) {
        const ast_stmt *t = b->stmts[i];
        if (depth < 64 && holds_return(t, 0)) {
            const ast_funcdef *r = returned_function(S, f, t, ended, depth + 1);
            if (*ended) return r;
        } else {
            sema_stmt(S, t);
        }
    }
    return NULL;
}

void sema_choose_factory_kernels(sema *S) {
    const ast_module *m = S->module;
    for (int i = 0; i < m->nfuncs && !tlc_diag_too_many(S->diag); i++) {
        const ast_funcdef *f = m->funcs[i];
        if (sema_decorated_macro(S, f) || sema_is_helper(S, f) || !sema_is_python_style(f)) continue;
        if (sema_factory_functions(S, f, NULL) < 2) continue;
        if (!S->factory_choice) S->factory_choice = TLC_NEW_ARRAY(S->arena, const ast_funcdef *, (size_t)m->nfuncs);
        /* the pass that compiles the factory reports what goes wrong here */
        tlc_diag *loud = S->diag, quiet;
        tlc_diag_init(&quiet, loud->src);
        quiet.show_source = false;
        S->diag = &quiet;
        S->choosing = true;
        S->chosen = NULL;
        sema_kernel(S, f);
        S->choosing = false;
        S->diag = loud;
        tlc_diag_free(&quiet);
        S->factory_choice[i] = S->chosen;
    }
}

void sema_python_kernel(sema *S, const ast_funcdef *f) {
    tir_kernel *k = S->k;
    const ast_funcdef *g = sema_kernel_holder(S, f); /* a factory's kernel, or NULL */
    if (g == f) g = NULL;
    S->param_cap = f->nparams + (g ? g->nparams : 0) + f->body.n + 1;
    k->params = TLC_NEW_ARRAY(S->arena, tir_param, (size_t)S->param_cap);
    int *key = TLC_NEW_ARRAY(S->arena, int, (size_t)S->param_cap);
    const char **outputs = TLC_NEW_ARRAY(S->arena, const char *, (size_t)f->body.n + 1);
    int nout = 0;

    /* an eager function annotates its tensors in its body */
    const ast_stmt **body_ann = TLC_NEW_ARRAY(S->arena, const ast_stmt *, (size_t)f->nparams + 1);
    for (int i = 0; i < f->body.n; i++) {
        const ast_stmt *s = f->body.stmts[i];
        int pi = bare_annotation(s) ? param_index(f, s->u.ann.target->u.name) : -1;
        if (pi >= 0 && !body_ann[pi]) body_ann[pi] = s;
    }
    for (int i = 0; i < f->nparams; i++) {
        const ast_param *p = &f->params[i];
        const ast_expr *ann = p->annotation ? p->annotation : body_ann[i] ? body_ann[i]->u.ann.annotation : NULL;
        if (sema_python_type_annotation(S, ann)) {
            sema_compile_time_param(S, p->name, p->loc, p->default_value);
        } else if (g) {
            tlc_error(S->diag, p->loc, "'%s' of the factory '%s' is a compile-time value: tensors and scalars are "
                      "parameters of its @T.prim_func function", p->name, f->name);
            sema_declare_error(S, p->name, p->loc);
        } else if (p->annotation) {
            int n0 = k->nparams;
            sema_kernel_param(S, p->name, p->loc, p->annotation, true);
            if (k->nparams > n0) key[n0] = i;
        } /* else declared where the body annotates it */
    }

    sema_count_assignments(S, &f->body);
    S->python = true;
    tlc_ptrvec dummy;
    memset(&dummy, 0, sizeof dummy);
    S->cur = &dummy;
    bool done = false, returned = false;
    const builtin_spec *empty = sema_builtin_lookup("empty");
    for (int i = 0; i < f->body.n; i++) {
        const ast_stmt *s = f->body.stmts[i];
        if (tlc_diag_too_many(S->diag)) break;
        if (is_docstring(s) || s->kind == AS_PASS) continue;
        if (returned) {
            /* after the factory's return was decided, its alternatives are
             * not run (`if c: return a` then `return b`) */
            if (!(g && holds_return(s, 0))) tlc_error(S->diag, s->loc, "statements after 'return' are not supported");
            continue;
        }
        if (s->kind == AS_FUNCDEF) {
            if (sema_decorated_macro(S, s->u.func)) {
                tlc_ptrvec_push(&S->macros, (void *)s->u.func);
            } else if (S->choosing || s->u.func != g) {
                /* another of the factory's functions: compiled where returned */
            } else {
                factory_kernel(S, g);
                done = true;
            }
            continue;
        }
        if (sema_is_kernel_with(S, s)) {
            if (g) {
                tlc_error(S->diag, s->loc, "'with Kernel' of a factory belongs in its kernel '%s'", g->name);
                continue;
            }
            sema_kernel_with(S, s);
            done = true;
            continue;
        }
        if (g && holds_return(s, 0)) {
            bool ended;
            const ast_funcdef *r = returned_function(S, f, s, &ended, 0);
            if (S->choosing && ended) {
                S->chosen = r;
                break;
            }
            if (ended && r && r != g)
                tlc_error(S->diag, s->loc, "which function the factory '%s' returns could not be decided before "
                          "its kernels were read", f->name);
            returned = ended;
            /* an inner factory's kernel was read there, or the return was reported */
            done = done || S->kernel_with || (ended && !r);
            continue;
        }
        if (s->kind == AS_RETURN) {
            check_return(S, f, s, outputs, nout);
            returned = true;
            continue;
        }
        /* print(main) after the kernel: it prints the kernel in TileLang, nothing here */
        if (done && s->kind == AS_EXPR && sema_is_python_print(S, s->u.expr)) continue;
        if (done && !(S->fn_mode && !g && sema_is_workspace_decl(S, s))) {
            tlc_error(S->diag, s->loc, g ? "statements after the kernel '%s' are not supported (only 'return %s')"
                                         : "statements after the 'with Kernel' block are not supported (only "
                                           "'return', alloc_global workspaces and further 'with Kernel' blocks)",
                      g ? g->name : "", g ? g->name : "");
            continue;
        }
        if (bare_annotation(s)) {
            const char *name = s->u.ann.target->u.name;
            int pi = param_index(f, name);
            if (pi < 0) {
                tlc_error(S->diag, s->loc, "'%s' is not a parameter of '%s': only a parameter is annotated without a value",
                          name, f->name);
                continue;
            }
            if (sema_python_type_annotation(S, s->u.ann.annotation)) continue; /* `n: int`: a compile-time value */
            if (f->params[pi].annotation || body_ann[pi] != s) {
                tlc_error(S->diag, s->loc, "parameter '%s' is annotated twice", name);
                continue;
            }
            if (g) continue; /* reported with the parameter */
            int n0 = k->nparams;
            sema_kernel_param(S, name, s->u.ann.target->loc, s->u.ann.annotation, true);
            if (k->nparams > n0) key[n0] = pi;
            continue;
        }
        if (s->kind == AS_ASSIGN && s->u.assign.target->kind == AE_NAME && sema_call_builtin(S, s->u.assign.value) == empty) {
            const ast_expr *t = s->u.assign.target;
            sema_args a;
            if (g) {
                tlc_error(S->diag, s->u.assign.value->loc, "T.empty declares an output of an eager function; a "
                          "factory's kernel takes its outputs as parameters");
                sema_declare_error(S, t->u.name, t->loc);
                continue;
            }
            if (param_index(f, t->u.name) >= 0) {
                tlc_error(S->diag, t->loc, "'%s' is a parameter of '%s'; an output of T.empty needs a new name",
                          t->u.name, f->name);
                continue;
            }
            if (!sema_bind_args(S, empty, s->u.assign.value, &a)) {
                sema_declare_error(S, t->u.name, t->loc);
                continue;
            }
            int n0 = k->nparams;
            sema_tensor_param(S, t->u.name, t->loc, a.arg[0], a.arg[1]);
            if (k->nparams > n0) {
                key[n0] = f->nparams + nout;
                outputs[nout++] = t->u.name;
            }
            continue;
        }
        sema_stmt(S, s); /* compile-time values before the kernel */
    }
    tlc_ptrvec_free(&dummy);
    S->cur = NULL;
    S->python = false;
    if (!done && !tlc_diag_too_many(S->diag))
        tlc_error(S->diag, f->loc, "kernel '%s' has no 'with Kernel(...)' block", f->name);
    if (!g) order_params(S, key);
}
