/* Tile IR interpreter: binding of arguments, the grid loop and statements.
 * Tile ops are in interp_tileops.c, expressions in interp_expr.c. Errors
 * unwind with longjmp to tlc_interp_run; every allocation is owned by the
 * interpreter object so nothing leaks on that path. */
#include "interp/interp_internal.h"
#include "ir/tir_access.h"
#include "ir/tir_op.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *tlc_interp_xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    return p;
}

void *tlc_interp_xrealloc(void *p, size_t n, size_t sz) {
    void *q = realloc(p, (n ? n : 1) * (sz ? sz : 1));
    if (!q) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    return q;
}

noreturn void tlc_interp_fail(tlc_interp *it, tlc_loc loc, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlc_error(&it->diag, loc, "%s", msg);
    longjmp(it->jb, 1);
}

tlc_interp *tlc_interp_create(const tir_kernel *k, const tlc_source *src) {
    tlc_interp *it = tlc_interp_xcalloc(1, sizeof *it);
    it->k = k;
    it->wgmma_owner = -1;
    if (src) { it->src = *src; it->have_src = true; }
    tlc_diag_init(&it->diag, it->have_src ? &it->src : NULL);
    if (k->thread_indexed || k->nmbarriers) tlc_interp_threads_create(it);
    else it->vars = tlc_interp_xcalloc((size_t)k->nvars, sizeof *it->vars);
    it->bufs = tlc_interp_xcalloc((size_t)k->nbuffers, sizeof *it->bufs);
    it->targs = tlc_interp_xcalloc((size_t)k->nparams, sizeof *it->targs);
    it->sargs = tlc_interp_xcalloc((size_t)k->nparams, sizeof *it->sargs);
    it->symval = tlc_interp_xcalloc((size_t)k->nsym, sizeof *it->symval);
    for (int i = 0; i < k->nsym; i++) it->symval[i] = -1;
    return it;
}

void tlc_interp_destroy(tlc_interp *it) {
    if (!it) return;
    for (int i = 0; i < it->k->nbuffers; i++) free(it->bufs[i].base);
    for (int i = 0; i < 3; i++) free(it->scr[i]);
    free(it->fa);
    free(it->fb);
    tlc_interp_grid_free(it);
    tlc_interp_ranges_free(it);
    tlc_interp_wgmma_free(it);
    if (it->nthreads) tlc_interp_threads_destroy(it);
    else free(it->vars);
    free(it->bufs);
    free(it->targs);
    free(it->sargs);
    free(it->symval);
    tlc_diag_free(&it->diag);
    free(it);
}

const char *tlc_interp_error(const tlc_interp *it) {
    return it->diag.out.data ? it->diag.out.data : "";
}

tlc_interp_stats tlc_interp_get_stats(const tlc_interp *it) { return it->stats; }

void tlc_interp_set_options(tlc_interp *it, const tlc_interp_options *o) {
    it->opts = o ? *o : (tlc_interp_options){0};
}

static void reset_errors(tlc_interp *it) {
    tlc_diag_free(&it->diag);
    tlc_diag_init(&it->diag, it->have_src ? &it->src : NULL);
}

/* An error outside a run (binding): recorded without unwinding. */
static bool bind_error(tlc_interp *it, tlc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool bind_error(tlc_interp *it, tlc_loc loc, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlc_error(&it->diag, loc, "%s", msg);
    return false;
}

static const tir_param *find_param(tlc_interp *it, const char *name, int *index) {
    for (int i = 0; i < it->k->nparams; i++)
        if (!strcmp(it->k->params[i].name, name)) { *index = i; return &it->k->params[i]; }
    return NULL;
}

bool tlc_interp_bind_tensor(tlc_interp *it, const char *name, void *data, tir_dtype dtype,
                            int rank, const int64_t *shape) {
    reset_errors(it);
    int pi;
    const tir_param *p = find_param(it, name, &pi);
    if (!p) return bind_error(it, it->k->loc, "kernel '%s' has no parameter '%s'", it->k->name, name);
    if (p->kind != TIR_PARAM_TENSOR)
        return bind_error(it, p->loc, "parameter '%s' is a scalar, not a tensor", name);
    const tir_buffer *b = p->buf;
    if (dtype != b->dtype)
        return bind_error(it, p->loc, "tensor '%s' is %s but the argument is %s", name,
                          tir_dtype_name(b->dtype), tir_dtype_name(dtype));
    if (rank != b->rank)
        return bind_error(it, p->loc, "tensor '%s' has rank %d but the argument has rank %d", name, b->rank, rank);
    targ *t = &it->targs[pi];
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0) return bind_error(it, p->loc, "tensor '%s': negative extent in dim %d", name, d);
        int64_t c = tir_buffer_dim(b, d);
        if (c >= 0 && c != shape[d])
            return bind_error(it, p->loc, "tensor '%s' has extent %lld in dim %d but the argument has %lld",
                              name, (long long)c, d, (long long)shape[d]);
        t->shape[d] = shape[d];
    }
    t->bound = true;
    t->data = data;
    t->dtype = dtype;
    t->rank = rank;
    return true;
}

static bool bind_scalar(tlc_interp *it, const char *name, bool isf, tlc_ival v) {
    reset_errors(it);
    int pi;
    const tir_param *p = find_param(it, name, &pi);
    if (!p) return bind_error(it, it->k->loc, "kernel '%s' has no parameter '%s'", it->k->name, name);
    if (p->kind != TIR_PARAM_SCALAR)
        return bind_error(it, p->loc, "parameter '%s' is a tensor, not a scalar", name);
    it->sargs[pi].bound = true;
    it->sargs[pi].isf = isf;
    it->sargs[pi].v = v;
    return true;
}

bool tlc_interp_bind_int(tlc_interp *it, const char *name, int64_t value) {
    tlc_ival v = {.i = value};
    return bind_scalar(it, name, false, v);
}

bool tlc_interp_bind_float(tlc_interp *it, const char *name, double value) {
    tlc_ival v = {.f = value};
    return bind_scalar(it, name, true, v);
}

int64_t tlc_interp_sym_dim(const tlc_interp *it, const char *name) {
    for (int i = 0; i < it->k->nsym; i++)
        if (!strcmp(it->k->sym_dims[i]->name, name)) return it->symval[i];
    return -1;
}

/* ---------------- buffers ---------------- */

static void poison(ibuf *ib, int64_t n) {
    if (tlc_interp_isf(ib->b->dtype))
        for (int64_t i = 0; i < n; i++) ib->base[i].f = NAN;
    else
        for (int64_t i = 0; i < n; i++) ib->base[i].i = tir_wrap_int(ib->b->dtype, 0x5eadbeefLL);
}

/* Allocates ib's elements: one copy, or one per thread when per_thread. */
static void room(tlc_interp *it, ibuf *ib, bool per_thread) {
    int64_t n = per_thread ? ib->elems * it->nthreads : ib->elems;
    if (n > ib->cap) {
        free(ib->base);
        ib->base = tlc_interp_xcalloc((size_t)n, sizeof(tlc_ival));
        ib->cap = n;
    }
    ib->data = ib->base;
    ib->per_thread = per_thread;
    ib->live = true;
}

/* Gives ib room for the given dims (row-major strides). */
static void shape_buf(tlc_interp *it, ibuf *ib, const tir_buffer *b, const int64_t *dims, tlc_loc loc) {
    ib->b = b;
    ib->rank = b->rank;
    int64_t n = 1;
    for (int d = b->rank - 1; d >= 0; d--) {
        ib->dims[d] = dims[d];
        ib->strides[d] = n;
        if (dims[d] && n > ((int64_t)1 << 40) / dims[d])
            tlc_interp_fail(it, loc, "buffer '%s' is too large for the interpreter", b->name);
        n *= dims[d];
    }
    ib->elems = n;
    if (it->nthreads && n > ((int64_t)1 << 40) / it->nthreads)
        tlc_interp_fail(it, loc, "buffer '%s' is too large for the interpreter", b->name);
}

static void alloc_buffer(tlc_interp *it, const tir_buffer *b, tlc_loc loc) {
    int64_t dims[TLC_INTERP_MAX_RANK];
    if (b->rank > TLC_INTERP_MAX_RANK)
        tlc_interp_fail(it, loc, "buffer '%s' has rank %d (the interpreter supports %d)", b->name, b->rank,
                        TLC_INTERP_MAX_RANK);
    for (int d = 0; d < b->rank; d++) {
        dims[d] = tlc_interp_eval_i(it, b->shape[d]);
        if (dims[d] < 0) tlc_interp_fail(it, loc, "buffer '%s' has negative extent %lld in dim %d", b->name,
                                         (long long)dims[d], d);
    }
    ibuf *ib = &it->bufs[b->id];
    shape_buf(it, ib, b, dims, loc);
    if (b->view_of) { /* T.reshape: the base's elements, row-major, under another shape */
        const ibuf *base = &it->bufs[b->view_of->id];
        if (!base->live)
            tlc_interp_fail(it, loc, "'%s' reshapes '%s', which is not allocated here", b->name, b->view_of->name);
        if (base->elems != ib->elems)
            tlc_interp_fail(it, loc, "'%s' (%lld elements) is a view of '%s' (%lld elements): the counts must match",
                            b->name, (long long)ib->elems, b->view_of->name, (long long)base->elems);
        ib->data = base->data;
        ib->per_thread = base->per_thread;
        ib->live = true;
        return;
    }
    bool per_thread = it->nthreads && (b->scope == TIR_SCOPE_LOCAL || b->scope == TIR_SCOPE_VAR);
    room(it, ib, per_thread);
    poison(ib, per_thread ? ib->elems * it->nthreads : ib->elems);
    if (per_thread) tlc_interp_use_thread(it, it->thread);
}

/* ---------------- statements ---------------- */

static void exec(tlc_interp *it, const tir_stmt *s);

static void store(tlc_interp *it, const tir_stmt *s) {
    const tir_buffer *b = s->u.store.buf;
    int64_t off = tlc_interp_offset(it, b, s->u.store.idx, s->loc);
    tlc_ival v = tlc_interp_eval(it, s->u.store.value);
    if (it->wgmma) tlc_interp_wgmma_check_store(it, b, off, s->loc);
    it->bufs[b->id].data[off] = tlc_interp_convert(v, s->u.store.value->dtype, b->dtype);
}

static void exec_for(tlc_interp *it, const tir_stmt *s) {
    int nv = s->u.for_.nvars;
    int64_t start[TLC_INTERP_MAX_RANK], ext[TLC_INTERP_MAX_RANK], cur[TLC_INTERP_MAX_RANK];
    if (nv < 1 || nv > TLC_INTERP_MAX_RANK)
        tlc_interp_fail(it, s->loc, "loop with %d variables is not supported", nv);
    for (int v = 0; v < nv; v++) {
        start[v] = tlc_interp_eval_i(it, s->u.for_.start[v]);
        ext[v] = tlc_interp_eval_i(it, s->u.for_.extent[v]);
        if (ext[v] <= 0) return;
        cur[v] = 0;
    }
    int64_t step = s->u.for_.step ? s->u.for_.step : 1;
    /* a Parallel loop's iterations last to first under opts.reverse */
    bool rev = it->opts.reverse && s->u.for_.kind == TIR_FOR_PARALLEL;
    if (rev)
        for (int v = 0; v < nv; v++) cur[v] = ext[v] - 1;
    for (;;) {
        for (int v = 0; v < nv; v++) {
            tir_var *var = s->u.for_.vars[v];
            it->vars[var->id].i = tir_wrap_int(var->dtype, start[v] + cur[v] * (nv == 1 ? step : 1));
        }
        if (s->u.for_.cond && !tlc_interp_loop_goes_on(it, s, cur[0])) break;
        tlc_interp_step(it, s->loc);
        exec(it, s->u.for_.body);
        int v = nv - 1;
        if (rev) {
            for (; v >= 0; v--) {
                if (cur[v] > 0) {
                    cur[v]--;
                    break;
                }
                cur[v] = ext[v] - 1;
            }
        } else {
            while (v >= 0 && ++cur[v] == ext[v]) cur[v--] = 0;
        }
        if (v < 0) break;
    }
}

void tlc_interp_exec(tlc_interp *it, const tir_stmt *s) { exec(it, s); }

static void check_steps(tlc_interp *it, tlc_loc loc) {
    if (it->opts.max_steps > 0 && it->stats.blocks + it->stats.elem_evals > it->opts.max_steps)
        tlc_interp_fail(it, loc, "the run stops here: it has taken more than %lld steps (blocks and loop iterations), "
                        "the limit it was given", (long long)it->opts.max_steps);
}

void tlc_interp_step(tlc_interp *it, tlc_loc loc) { tlc_interp_steps(it, loc, 1); }

void tlc_interp_steps(tlc_interp *it, tlc_loc loc, int64_t n) {
    it->stats.elem_evals += n;
    check_steps(it, loc);
}

bool tlc_interp_loop_goes_on(tlc_interp *it, const tir_stmt *loop, int64_t iteration) {
    const tir_expr *c = loop->u.for_.cond;
    tlc_ival v = tlc_interp_eval(it, c);
    bool on = tlc_interp_isf(c->dtype) ? v.f != 0 : v.i != 0;
    if (on && iteration >= TLC_INTERP_MAX_WHILE)
        tlc_interp_fail(it, loop->loc, "this loop ran %d iterations without ending; the interpreter stops here",
                        TLC_INTERP_MAX_WHILE);
    return on;
}

static void exec(tlc_interp *it, const tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) exec(it, s->u.seq.stmts[i]);
        break;
    case TS_FOR: exec_for(it, s); break;
    case TS_IF: {
        const tir_expr *c = s->u.if_.cond;
        tlc_ival v = tlc_interp_eval(it, c);
        bool t = tlc_interp_isf(c->dtype) ? v.f != 0 : v.i != 0;
        exec(it, t ? s->u.if_.then : s->u.if_.els);
        break;
    }
    case TS_ALLOC:
        /* tensors are bound before the run; a view of one is made here */
        if (!s->u.alloc.buf->is_workspace && (s->u.alloc.buf->scope != TIR_SCOPE_GLOBAL || s->u.alloc.buf->view_of))
            alloc_buffer(it, s->u.alloc.buf, s->loc);
        break;
    case TS_LET:
    case TS_ASSIGN: {
        tir_var *var = s->u.let.var;
        tlc_ival v = tlc_interp_eval(it, s->u.let.value);
        it->vars[var->id] = tlc_interp_convert(v, s->u.let.value->dtype, var->dtype);
        break;
    }
    case TS_STORE: store(it, s); break;
    default: /* a tile op: its row's step */
        if (!s->op || !s->op->interp) tlc_interp_fail(it, s->loc, "unknown statement kind %d", (int)s->kind);
        s->op->interp(it, s);
        break;
    }
}

/* ---------------- the run ---------------- */

/* Binds symbolic dims from the tensor arguments and checks they agree. */
static void bind_dims(tlc_interp *it) {
    const tir_kernel *k = it->k;
    int *from_param = tlc_interp_xcalloc((size_t)k->nsym, sizeof(int) * 2);
    for (int i = 0; i < k->nsym; i++) it->symval[i] = -1;
    char msg[512] = "";
    tlc_loc loc = {0, 0};
    for (int pi = 0; pi < k->nparams && !msg[0]; pi++) {
        const tir_param *p = &k->params[pi];
        if (p->kind != TIR_PARAM_TENSOR) continue;
        const tir_buffer *b = p->buf;
        for (int d = 0; d < b->rank && !msg[0]; d++) {
            const tir_expr *e = b->shape[d];
            if (e->kind != TE_VAR || e->u.var->kind != TV_SYM_DIM) continue;
            int si = -1;
            for (int j = 0; j < k->nsym; j++)
                if (k->sym_dims[j] == e->u.var) si = j;
            if (si < 0) continue;
            int64_t v = it->targs[pi].shape[d];
            if (it->symval[si] < 0) {
                it->symval[si] = v;
                from_param[2 * si] = pi;
                from_param[2 * si + 1] = d;
            } else if (it->symval[si] != v) {
                const tir_param *q = &k->params[from_param[2 * si]];
                snprintf(msg, sizeof msg,
                         "symbolic dim '%s' is %lld from '%s' dim %d but %lld from '%s' dim %d",
                         e->u.var->name, (long long)it->symval[si], q->name, from_param[2 * si + 1],
                         (long long)v, p->name, d);
                loc = p->loc;
            }
        }
    }
    free(from_param);
    if (msg[0]) tlc_interp_fail(it, loc, "%s", msg);
    for (int i = 0; i < k->nsym; i++) {
        tir_var *v = k->sym_dims[i];
        if (it->symval[i] < 0)
            tlc_interp_fail(it, v->loc, "symbolic dim '%s' is not bound by any tensor argument", v->name);
        it->vars[v->id].i = it->symval[i];
    }
}

/* tir_expr_vars callback: marks the scalar parameters a check reads
 * (ctx: bool per variable id). */
static void mark_scalar(const tir_var *v, void *ctx) {
    if (v->kind == TV_SCALAR_PARAM) ((bool *)ctx)[v->id] = true;
}

/* The kernel's launch checks (asserts on sizes and scalars, tensor
 * dimensions given as expressions, operations' ranges), as the runtime
 * makes them; the message gives the sizes and the scalars read. */
static void check_launch(tlc_interp *it) {
    const tir_kernel *k = it->k;
    for (int i = 0; i < k->nchecks; i++) {
        if (tlc_interp_eval_i(it, k->checks[i].cond)) continue;
        char vals[256] = "";
        size_t len = 0;
        for (int d = 0; d < k->nsym && len < sizeof vals; d++) {
            int w = snprintf(vals + len, sizeof vals - len, "%s%s=%lld", len ? ", " : "", k->sym_dims[d]->name,
                             (long long)it->symval[d]);
            len = w < 0 ? sizeof vals : len + (size_t)w;
        }
        bool *read = calloc((size_t)k->nvars + 1, sizeof *read);
        if (read) tir_expr_vars(k->checks[i].cond, mark_scalar, read);
        for (int pi = 0; read && pi < k->nparams && len < sizeof vals; pi++) {
            const tir_param *p = &k->params[pi];
            if (p->kind != TIR_PARAM_SCALAR || !read[p->var->id] || tlc_interp_isf(p->var->dtype)) continue;
            int w = snprintf(vals + len, sizeof vals - len, "%s%s=%lld", len ? ", " : "", p->name,
                             (long long)it->vars[p->var->id].i);
            len = w < 0 ? sizeof vals : len + (size_t)w;
        }
        free(read);
        tlc_interp_fail(it, k->checks[i].loc, "this launch fails the check here (an assert on sizes or scalars, a "
                        "tensor dimension given as an expression, or an operation's range), with %s",
                        vals[0] ? vals : "no sizes");
    }
}

/* Copies the host tensors into the interpreter's widened storage. */
static void load_globals(tlc_interp *it) {
    const tir_kernel *k = it->k;
    for (int pi = 0; pi < k->nparams; pi++) {
        const tir_param *p = &k->params[pi];
        if (p->kind == TIR_PARAM_SCALAR) {
            if (!it->sargs[pi].bound) tlc_interp_fail(it, p->loc, "scalar parameter '%s' is not bound", p->name);
            tlc_ival v = it->sargs[pi].v;
            it->vars[p->var->id] = tlc_interp_convert(v, it->sargs[pi].isf ? TIR_F32 : TIR_I64, p->var->dtype);
            if (it->sargs[pi].isf && tlc_interp_isf(p->var->dtype))
                it->vars[p->var->id].f = tlc_round_to_dtype(p->var->dtype, v.f);
            continue;
        }
        targ *t = &it->targs[pi];
        ibuf *ib = &it->bufs[p->buf->id];
        shape_buf(it, ib, p->buf, t->shape, p->loc);
        room(it, ib, false);
        if (tlc_interp_isf(t->dtype))
            for (int64_t i = 0; i < ib->elems; i++) ib->data[i].f = tlc_host_load_f(t->data, t->dtype, i);
        else
            for (int64_t i = 0; i < ib->elems; i++) ib->data[i].i = tlc_host_load_i(t->data, t->dtype, i);
    }
}

static void store_globals(tlc_interp *it) {
    const tir_kernel *k = it->k;
    for (int pi = 0; pi < k->nparams; pi++) {
        const tir_param *p = &k->params[pi];
        if (p->kind != TIR_PARAM_TENSOR || !tlc_interp_param_written(k, pi)) continue;
        targ *t = &it->targs[pi];
        ibuf *ib = &it->bufs[p->buf->id];
        if (tlc_interp_isf(t->dtype))
            for (int64_t i = 0; i < ib->elems; i++) tlc_host_store_f(t->data, t->dtype, i, ib->data[i].f);
        else
            for (int64_t i = 0; i < ib->elems; i++) tlc_host_store_i(t->data, t->dtype, i, ib->data[i].i);
    }
}

static bool run_body(tlc_interp *it) {
    const tir_kernel *k = it->k;
    for (int pi = 0; pi < k->nparams; pi++)
        if (k->params[pi].kind == TIR_PARAM_TENSOR && !it->targs[pi].bound)
            tlc_interp_fail(it, k->params[pi].loc, "tensor parameter '%s' is not bound", k->params[pi].name);
    if (k->nmbarriers && tlc_interp_grid_parts(k) > 1)
        tlc_interp_fail(it, k->loc, "kernel '%s' waits on mbarriers and on the grid (sync_grid); the interpreter "
                        "runs one or the other", k->name);
    bind_dims(it);
    load_globals(it);
    check_launch(it);
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers[i];
        if (b->is_workspace) alloc_buffer(it, b, b->loc);
    }
    int64_t g[3] = {1, 1, 1};
    for (int a = 0; a < k->grid_rank; a++) {
        g[a] = tlc_interp_eval_i(it, k->grid[a]);
        if (g[a] <= 0)
            tlc_interp_fail(it, k->grid[a]->loc, "grid dimension %d is %lld (must be positive)", a, (long long)g[a]);
    }
    int64_t nblocks = g[0] * g[1] * g[2];
    int parts = tlc_interp_grid_parts(k);
    if (parts > 1) tlc_interp_grid_begin(it, nblocks);
    for (int part = 0; part < parts; part++) /* one part per sync_grid (interp_grid_sync.c) */
        for (int64_t b = 0; b < nblocks; b++) {
            int64_t lin = it->opts.reverse ? nblocks - 1 - b : b; /* x fastest; last to first under opts.reverse */
            if (part > 0) {
                tlc_interp_grid_restore(it, lin);
                tlc_interp_grid_run_part(it, part);
                tlc_interp_grid_save(it, lin);
                continue;
            }
            int64_t idx[3] = {lin % g[0], lin / g[0] % g[1], lin / (g[0] * g[1])};
            if (it->nthreads) tlc_interp_use_thread(it, 0); /* the block's values in thread 0's variables */
            for (int a = 0; a < 3; a++)
                if (k->block_idx[a]) it->vars[k->block_idx[a]->id].i = idx[a];
            for (int i = 0; i < k->nbuffers; i++)
                if (k->buffers[i]->scope != TIR_SCOPE_GLOBAL) it->bufs[i].live = false;
            it->stats.blocks++;
            check_steps(it, k->loc);
            tlc_interp_wgmma_reset(it); /* (a block ends with nothing in flight) */
            if (it->nthreads) tlc_interp_threads_setup(it);
            tlc_interp_grid_run_part(it, 0); /* the whole body where there is no sync_grid */
            if (parts > 1) tlc_interp_grid_save(it, lin);
        }
    tlc_interp_grid_free(it);
    store_globals(it);
    return true;
}

bool tlc_interp_run(tlc_interp *it) {
    reset_errors(it);
    memset(&it->stats, 0, sizeof it->stats);
    for (int i = 0; i < it->k->nbuffers; i++) it->bufs[i].live = false;
    tlc_interp_ranges_restore(it); /* (an earlier run may have stopped inside a strand) */
    if (setjmp(it->jb)) return false;
    return run_body(it);
}

/* ---------------- which parameters a kernel writes ---------------- */

bool tlc_interp_param_written(const tir_kernel *k, int param_index) {
    if (param_index < 0 || param_index >= k->nparams) return false;
    const tir_param *p = &k->params[param_index];
    return p->kind == TIR_PARAM_TENSOR && tir_stmt_writes(k->body, p->buf);
}
