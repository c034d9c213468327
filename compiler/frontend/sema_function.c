/* A function whose body holds several `with Kernel` blocks, or alloc_global
 * workspaces at function level (TileLang's split + combine in one
 * prim_func): one kernel per block, named NAME_k0, NAME_k1, ..., plus the
 * function's record (tir_function).
 *
 * Each block is analysed by its own pass over the whole function
 * (parameters, the constants before the blocks, the workspaces, that block),
 * so each kernel has its own dense ids exactly as a one-block function does;
 * a last pass with no block gives the function's signature. The first pass
 * reports every diagnostic outside the blocks, the others only their
 * block's. Then each kernel keeps the parameters it uses and takes the
 * workspaces it uses as tensor parameters after them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sema_internal.h"
#include "ir/tir_access.h"
#include "tlc/metadata.h"

enum { MAX_FUNCTION_KERNELS = 16 };

const ast_funcdef *sema_kernel_holder(sema *S, const ast_funcdef *f) {
    if (!sema_is_python_style(f)) return f;
    const ast_funcdef *first = NULL;
    int n = sema_factory_functions(S, f, &first);
    if (n > 1 && S->factory_choice && S->module)
        for (int i = 0; i < S->module->nfuncs; i++)
            if (S->module->funcs[i] == f && S->factory_choice[i]) return S->factory_choice[i];
    return first ? sema_factory_kernel(S, first) : f;
}

static int count_blocks(sema *S, const ast_funcdef *h, int *workspaces) {
    int n = 0;
    *workspaces = 0;
    for (int i = 0; i < h->body.n; i++) {
        const ast_stmt *s = h->body.stmts[i];
        if (sema_is_kernel_with(S, s)) n++;
        else if (sema_is_workspace_decl(S, s)) (*workspaces)++;
    }
    return n;
}

bool sema_is_multi_kernel(sema *S, const ast_funcdef *f) {
    int ws, n = count_blocks(S, sema_kernel_holder(S, f), &ws);
    return n > 1 || (n == 1 && ws > 0);
}

/* ---------------- a kernel's share of the function ---------------- */

typedef struct uses {
    bool *var;  /* by tir_var id */
    bool *buf;  /* by buffer id */
} uses;

static void note_var(const tir_var *v, void *ctx) {
    uses *u = ctx;
    u->var[v->id] = true;
}

static void note_access(const tir_access *acc, void *ctx) {
    uses *u = ctx;
    u->buf[acc->buf->id] = true;
}

static bool has_dim(const tir_buffer *b, const tir_var *v) {
    for (int d = 0; d < b->rank; d++)
        if (b->shape[d]->kind == TE_VAR && b->shape[d]->u.var == v) return true;
    return false;
}

static bool is_workspace_of(const tlc_ptrvec *ws, const tir_buffer *b) {
    for (int i = 0; i < ws->len; i++)
        if (ws->items[i] == b) return true;
    return false;
}

/* Variable ids are dense: after parameters and symbolic dims were dropped,
 * the kept ones, the block and thread indices and the body's loop and let
 * variables are numbered again. */
static void number_body_vars(const tir_stmt *s, int *next) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) number_body_vars(s->u.seq.stmts[i], next);
        break;
    case TS_FOR:
        for (int i = 0; i < s->u.for_.nvars; i++) s->u.for_.vars[i]->id = (*next)++;
        number_body_vars(s->u.for_.body, next);
        break;
    case TS_IF:
        number_body_vars(s->u.if_.then, next);
        number_body_vars(s->u.if_.els, next);
        break;
    case TS_LET: s->u.let.var->id = (*next)++; break;
    default: break;
    }
}

static void number_vars(tir_kernel *k) {
    int next = 0;
    for (int i = 0; i < k->nsym; i++) k->sym_dims[i]->id = next++;
    for (int p = 0; p < k->nparams; p++)
        if (k->params[p].kind == TIR_PARAM_SCALAR) k->params[p].var->id = next++;
    for (int a = 0; a < k->grid_rank; a++)
        if (k->block_idx[a]) k->block_idx[a]->id = next++;
    for (int a = 0; a < 3; a++)
        if (k->thread_idx[a]) k->thread_idx[a]->id = next++;
    number_body_vars(k->body, &next);
    k->nvars = next;
}

/* Keeps the parameters kernel k uses (and, for a symbolic dim it uses that
 * no kept tensor has, the first tensor or workspace that has it), appends
 * the workspaces it uses as parameters, and renumbers buffers and
 * parameters. Launch checks stay with the function's signature. */
static void take_share(sema *S, tir_kernel *k, const tlc_ptrvec *ws) {
    uses u;
    u.var = calloc((size_t)k->nvars + 1, sizeof(bool));
    u.buf = calloc((size_t)k->nbuffers + 1, sizeof(bool));
    bool *keep = calloc((size_t)k->nbuffers + 1, sizeof(bool));
    if (!u.var || !u.buf || !keep) abort();
    tir_stmt_accesses(k->body, note_access, &u);
    tir_stmt_vars(k->body, note_var, &u);
    for (int a = 0; a < k->grid_rank; a++) tir_expr_vars(k->grid[a], note_var, &u);
    for (int i = 0; i < k->nbuffers; i++) /* an alloc_global inside the block may have symbolic dims */
        if (k->buffers[i]->param_index < 0 && !is_workspace_of(ws, k->buffers[i]))
            for (int d = 0; d < k->buffers[i]->rank; d++) tir_expr_vars(k->buffers[i]->shape[d], note_var, &u);

    /* candidates in parameter order: the function's tensors, then the workspaces */
    int ncand = 0;
    tir_buffer **cand = calloc((size_t)k->nbuffers + 1, sizeof *cand);
    if (!cand) abort();
    for (int p = 0; p < k->nparams; p++)
        if (k->params[p].kind == TIR_PARAM_TENSOR) cand[ncand++] = k->params[p].buf;
    for (int i = 0; i < ws->len; i++) cand[ncand++] = ws->items[i];
    for (int c = 0; c < ncand; c++) keep[cand[c]->id] = u.buf[cand[c]->id];
    for (int s = 0; s < k->nsym; s++) {
        const tir_var *v = k->sym_dims[s];
        if (!u.var[v->id]) continue;
        bool bound = false;
        for (int c = 0; c < ncand && !bound; c++) bound = keep[cand[c]->id] && has_dim(cand[c], v);
        for (int c = 0; c < ncand && !bound; c++)
            if (has_dim(cand[c], v)) keep[cand[c]->id] = bound = true;
    }

    int np = 0;
    tir_param *params = TLC_NEW_ARRAY(S->arena, tir_param, (size_t)(k->nparams + ws->len) + 1);
    for (int p = 0; p < k->nparams; p++) {
        const tir_param *pa = &k->params[p];
        if (pa->kind == TIR_PARAM_TENSOR ? keep[pa->buf->id] : u.var[pa->var->id]) params[np++] = *pa;
    }
    for (int i = 0; i < ws->len; i++) {
        tir_buffer *b = ws->items[i];
        if (!keep[b->id]) continue;
        b->is_workspace = false; /* to the kernel, a tensor parameter */
        params[np++] = (tir_param){.kind = TIR_PARAM_TENSOR, .name = b->name, .buf = b, .loc = b->loc, .workspace = true};
    }
    tlc_ptrvec syms = {0};
    for (int s = 0; s < k->nsym; s++)
        for (int p = 0; p < np; p++)
            if (params[p].kind == TIR_PARAM_TENSOR && has_dim(params[p].buf, k->sym_dims[s])) {
                tlc_ptrvec_push(&syms, k->sym_dims[s]);
                break;
            }
    tlc_ptrvec bufs = {0};
    for (int p = 0; p < np; p++) {
        if (params[p].kind == TIR_PARAM_TENSOR) {
            params[p].buf->param_index = p;
            tlc_ptrvec_push(&bufs, params[p].buf);
        } else {
            params[p].var->axis = p;
        }
    }
    for (int i = 0; i < k->nbuffers; i++) {
        tir_buffer *b = k->buffers[i];
        if (b->param_index < 0 && !is_workspace_of(ws, b)) tlc_ptrvec_push(&bufs, b);
    }
    for (int i = 0; i < bufs.len; i++) ((tir_buffer *)bufs.items[i])->id = i;
    k->params = params;
    k->nparams = np;
    k->nsym = syms.len;
    k->sym_dims = (tir_var **)tlc_ptrvec_freeze(&syms, S->arena);
    k->nbuffers = bufs.len;
    k->buffers = (tir_buffer **)tlc_ptrvec_freeze(&bufs, S->arena);
    k->nchecks = 0;
    number_vars(k);
    if (np > TLRT_MAX_PARAMS)
        tlc_error(S->diag, k->loc, "kernel '%s' takes %d parameters with the workspaces it uses; the launch "
                  "metadata holds at most %d", k->name, np, TLRT_MAX_PARAMS);
    free(cand);
    free(keep);
    free(u.var);
    free(u.buf);
}

/* ---------------- the function ---------------- */

tir_function *sema_function(sema *S, const ast_funcdef *f, tlc_ptrvec *kernels) {
    int nws, n = count_blocks(S, sema_kernel_holder(S, f), &nws);
    tlc_diag *loud = S->diag, quiet;
    tlc_diag_init(&quiet, loud->src);
    quiet.show_source = false;
    int errors0 = loud->errors;
    if (n > MAX_FUNCTION_KERNELS) {
        tlc_error(loud, f->loc, "function '%s' has %d 'with Kernel' blocks; at most %d are supported", f->name, n,
                  MAX_FUNCTION_KERNELS);
        n = MAX_FUNCTION_KERNELS;
    }
    tir_function *fn = TLC_NEW(S->arena, tir_function);
    fn->name = f->name;
    fn->loc = f->loc;
    fn->nkernels = n;
    fn->kernels = TLC_NEW_ARRAY(S->arena, tir_kernel *, (size_t)n + 1);
    tlc_ptrvec *shares = calloc((size_t)n + 1, sizeof *shares);
    if (!shares) abort();
    S->fn_mode = true;
    S->loud = loud;
    for (int i = 0; i <= n; i++) { /* block i; the signature last */
        S->want_block = i < n ? i : -1;
        S->diag = i == 0 ? loud : &quiet;
        tir_kernel *k = sema_kernel(S, f);
        S->diag = loud;
        k->function = fn;
        if (i == n) {
            fn->sig = k;
            fn->nworkspaces = S->fn_workspaces.len;
            fn->workspaces = (tir_buffer **)tlc_ptrvec_freeze(&S->fn_workspaces, S->arena);
            break;
        }
        char name[TLRT_MAX_KERNEL_NAME];
        if ((size_t)snprintf(name, sizeof name, "%s_k%d", f->name, i) >= sizeof name)
            tlc_error(loud, f->loc, "function name '%.40s...' is too long for the names of its kernels", f->name);
        k->name = tlc_arena_strdup(S->arena, name);
        if (S->kernel_with) k->loc = S->kernel_with->loc;
        fn->kernels[i] = k;
        shares[i] = S->fn_workspaces;
    }
    S->fn_mode = false;
    S->want_block = 0;
    tlc_diag_free(&quiet);
    if (loud->errors == errors0)
        for (int i = 0; i < n; i++) take_share(S, fn->kernels[i], &shares[i]);
    for (int i = 0; i < n; i++) {
        tlc_ptrvec_free(&shares[i]);
        tlc_ptrvec_push(kernels, fn->kernels[i]);
    }
    free(shares);
    return fn;
}
