/* Tile IR verifier: the structural invariants sema establishes and every
 * pass must keep. A violation is a compiler bug, reported as
 * "internal error: ..." at the offending node, never a crash: the verifier
 * checks each pointer before following it.
 *
 * Checked: ids of variables and buffers unique and in range (buffers dense,
 * params first); every variable / buffer used is a parameter or declared in
 * an enclosing scope (a let or alloc is visible for the rest of its block, a
 * loop variable inside its loop); region rank == buffer rank, constant
 * region bounds inside constant dims; tile-op operand scopes and shapes;
 * loop shapes (Parallel: constant positive extents from 0; Pipelined:
 * num_stages >= 1; a step != 0, and 1 but on serial and unroll loops); no
 * NULL where a node is required. */
#include "tir.h"
#include "tir_op.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scope_entry { bool is_buf; int id; } scope_entry;

struct tir_verifier {
    tlc_diag *diag;
    const tir_kernel *k;
    const char *kname;
    bool ok;
    /* variables, indexed by id */
    int nvars;
    const tir_var **var_decl; /* the object declared with this id */
    bool *var_live;           /* in scope now */
    /* buffers, indexed by id */
    int nbufs;
    bool *buf_live;
    bool *buf_allocated;
    /* declarations to undo when a block ends */
    scope_entry *stack;
    int nstack, capstack;
};
typedef tir_verifier verifier;

void tir_verifier_fail(tir_verifier *v, tlc_loc loc, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlc_error(v->diag, loc, "internal error: invalid Tile IR in kernel '%s': %s", v->kname, msg);
    v->ok = false;
}

static const char *nm(const char *s) { return s ? s : "<anon>"; }

static void push_scope(verifier *v, bool is_buf, int id) {
    if (v->nstack == v->capstack) {
        v->capstack = v->capstack ? v->capstack * 2 : 64;
        scope_entry *ns = realloc(v->stack, (size_t)v->capstack * sizeof *ns);
        if (!ns) abort();
        v->stack = ns;
    }
    v->stack[v->nstack++] = (scope_entry){is_buf, id};
}

static void pop_scope_to(verifier *v, int height) {
    while (v->nstack > height) {
        scope_entry e = v->stack[--v->nstack];
        if (e.is_buf) v->buf_live[e.id] = false;
        else v->var_live[e.id] = false;
    }
}

/* ---------------- variables and buffers ---------------- */

/* A declaration point of `var` (header, loop, let). */
static bool declare_var(verifier *v, const tir_var *var, tlc_loc loc, tir_var_kind want) {
    if (!var) { tir_verifier_fail(v, loc, "missing variable"); return false; }
    if (!var->name) tir_verifier_fail(v, var->loc, "variable with id %d has no name", var->id);
    if (var->kind != want) {
        tir_verifier_fail(v, var->loc, "variable '%s' has kind %d where kind %d is required", nm(var->name), (int)var->kind, (int)want);
        return false;
    }
    if ((unsigned)var->dtype >= TIR_DTYPE_COUNT) tir_verifier_fail(v, var->loc, "variable '%s' has an invalid dtype", nm(var->name));
    if (var->id < 0 || var->id >= v->nvars) {
        tir_verifier_fail(v, var->loc, "variable '%s' has id %d outside 0..%d", nm(var->name), var->id, v->nvars - 1);
        return false;
    }
    if (v->var_decl[var->id]) {
        if (v->var_decl[var->id] == var)
            tir_verifier_fail(v, var->loc, "variable '%s' (id %d) is declared twice", nm(var->name), var->id);
        else
            tir_verifier_fail(v, var->loc, "variables '%s' and '%s' share id %d", nm(var->name),
                 nm(v->var_decl[var->id]->name), var->id);
        return false;
    }
    v->var_decl[var->id] = var;
    v->var_live[var->id] = true;
    push_scope(v, false, var->id);
    return true;
}

static void use_var(verifier *v, const tir_var *var, tlc_loc loc) {
    if (!var) { tir_verifier_fail(v, loc, "reference to a missing variable"); return; }
    if (var->id < 0 || var->id >= v->nvars || v->var_decl[var->id] != var) {
        tir_verifier_fail(v, loc, "variable '%s' (id %d) is not declared in this kernel", nm(var->name), var->id);
        return;
    }
    if (!v->var_live[var->id]) tir_verifier_fail(v, loc, "variable '%s' is used outside its scope", nm(var->name));
}

static bool buffer_known(verifier *v, const tir_buffer *b, tlc_loc loc) {
    if (!b) { tir_verifier_fail(v, loc, "reference to a missing buffer"); return false; }
    if (b->id < 0 || b->id >= v->nbufs || v->k->buffers[b->id] != b) {
        tir_verifier_fail(v, loc, "buffer '%s' (id %d) is not in the kernel's buffer list", nm(b->name), b->id);
        return false;
    }
    return true;
}

static void use_buffer(verifier *v, const tir_buffer *b, tlc_loc loc) {
    if (!buffer_known(v, b, loc)) return;
    if (!v->buf_live[b->id]) tir_verifier_fail(v, loc, "buffer '%s' is used outside its scope", nm(b->name));
}

/* ---------------- expressions ---------------- */

static void check_expr(verifier *v, const tir_expr *e, tlc_loc at);

static bool is_index_dtype(tir_dtype t) { return !tir_dtype_is_float(t) && t != TIR_BOOL; }

/* Indices of a load or store: present, well formed and integers. */
static void check_expr_list(verifier *v, tir_expr *const *xs, int n, tlc_loc at, const char *what) {
    if (n > 0 && !xs) { tir_verifier_fail(v, at, "%s: missing index list", what); return; }
    for (int i = 0; i < n; i++) {
        check_expr(v, xs[i], at);
        if (xs[i] && (unsigned)xs[i]->dtype < TIR_DTYPE_COUNT && !is_index_dtype(xs[i]->dtype))
            tir_verifier_fail(v, at, "%s: index %d has dtype %s", what, i, tir_dtype_name(xs[i]->dtype));
    }
}

static void check_expr(verifier *v, const tir_expr *e, tlc_loc at) {
    if (!e) { tir_verifier_fail(v, at, "missing expression"); return; }
    tlc_loc loc = e->loc.line > 0 ? e->loc : at;
    if ((unsigned)e->dtype >= TIR_DTYPE_COUNT) tir_verifier_fail(v, loc, "expression with an invalid dtype");
    switch (e->kind) {
    case TE_INT:
    case TE_FLOAT:
        return;
    case TE_VAR:
        use_var(v, e->u.var, loc);
        return;
    case TE_LOAD: {
        const tir_buffer *b = e->u.load.buf;
        use_buffer(v, b, loc);
        if (b) check_expr_list(v, e->u.load.idx, b->rank, loc, "load");
        return;
    }
    case TE_BINARY:
        check_expr(v, e->u.bin.a, loc);
        check_expr(v, e->u.bin.b, loc);
        return;
    case TE_UNARY:
        check_expr(v, e->u.un.a, loc);
        return;
    case TE_CAST:
        check_expr(v, e->u.cast.a, loc);
        if (e->u.cast.bits && e->u.cast.a && tir_dtype_bytes(e->u.cast.a->dtype) != tir_dtype_bytes(e->dtype))
            tir_verifier_fail(v, loc, "reinterpret between dtypes of different sizes");
        return;
    case TE_SELECT:
        check_expr(v, e->u.sel.cond, loc);
        check_expr(v, e->u.sel.a, loc);
        check_expr(v, e->u.sel.b, loc);
        return;
    case TE_SHUFFLE:
        check_expr(v, e->u.shfl.value, loc);
        check_expr(v, e->u.shfl.lane, loc);
        if (e->u.shfl.width < 1 || e->u.shfl.width > 32 || (e->u.shfl.width & (e->u.shfl.width - 1)))
            tir_verifier_fail(v, loc, "shuffle width %d", e->u.shfl.width);
        if (e->u.shfl.value && e->u.shfl.value->dtype != e->dtype)
            tir_verifier_fail(v, loc, "a shuffle's dtype differs from its value's");
        return;
    }
    tir_verifier_fail(v, loc, "expression of unknown kind %d", (int)e->kind);
}

/* ---------------- regions ---------------- */

/* Returns false when the region is too broken to look at its shape. */
static bool check_region(verifier *v, const tir_region *r, tlc_loc at, const char *what) {
    tlc_loc loc = r->loc.line > 0 ? r->loc : at;
    if (!r->buf) { tir_verifier_fail(v, loc, "%s: region without a buffer", what); return false; }
    use_buffer(v, r->buf, loc);
    const tir_buffer *b = r->buf;
    if (r->rank != b->rank) {
        tir_verifier_fail(v, loc, "%s: region of '%s' has rank %d but the buffer has rank %d", what, nm(b->name), r->rank, b->rank);
        return false;
    }
    if (r->rank > 0 && (!r->start || !r->extent)) {
        tir_verifier_fail(v, loc, "%s: region of '%s' has no start/extent lists", what, nm(b->name));
        return false;
    }
    bool good = true;
    for (int d = 0; d < r->rank; d++) {
        if (!r->start[d] || !r->extent[d]) {
            tir_verifier_fail(v, loc, "%s: region of '%s' misses dim %d", what, nm(b->name), d);
            good = false;
            continue;
        }
        check_expr(v, r->start[d], loc);
        check_expr(v, r->extent[d], loc);
        if (!is_index_dtype(r->start[d]->dtype) || !is_index_dtype(r->extent[d]->dtype)) {
            tir_verifier_fail(v, loc, "%s: region of '%s' has a non-integer bound in dim %d", what, nm(b->name), d);
            good = false;
            continue;
        }
        int64_t s, n, dim = b->shape && b->shape[d] ? tir_buffer_dim(b, d) : -1;
        bool s_const = tir_expr_const_int(r->start[d], &s);
        bool n_const = tir_expr_const_int(r->extent[d], &n);
        if (n_const && n < 1) {
            tir_verifier_fail(v, loc, "%s: region of '%s' has extent %" PRId64 " in dim %d", what, nm(b->name), n, d);
            good = false;
        }
        if (s_const && s < 0) {
            tir_verifier_fail(v, loc, "%s: region of '%s' starts at %" PRId64 " in dim %d", what, nm(b->name), s, d);
            good = false;
        }
        /* Global tensors: a region may run past the end (a masked tail) but starts inside. */
        bool masked_tail = b->scope == TIR_SCOPE_GLOBAL;
        if (masked_tail) {
            if (s_const && dim > 0 && s >= dim) {
                tir_verifier_fail(v, loc, "%s: region of '%s' starts at %" PRId64 " past dim %d of size %" PRId64,
                     what, nm(b->name), s, d, dim);
                good = false;
            }
            continue;
        }
        if (s_const && n_const && dim >= 0 && s >= 0 && n >= 1 && (s > dim || n > dim - s)) {
            tir_verifier_fail(v, loc, "%s: region [%" PRId64 ", %" PRId64 ") of '%s' exceeds dim %d of size %" PRId64,
                 what, s, s + n, nm(b->name), d, dim);
            good = false;
        }
        if (n_const && dim >= 0 && n > dim) {
            if (!s_const) {
                tir_verifier_fail(v, loc, "%s: region of '%s' has extent %" PRId64 " > dim %d of size %" PRId64,
                     what, nm(b->name), n, d, dim);
                good = false;
            }
        }
    }
    return good;
}

/* ---------------- for the ops' checks (tir_op.h) ---------------- */

bool tir_verifier_region(tir_verifier *v, const tir_region *r, tlc_loc at, const char *what) {
    return check_region(v, r, at, what);
}

void tir_verifier_expr(tir_verifier *v, const tir_expr *e, tlc_loc at) { check_expr(v, e, at); }

/* ---------------- statements ---------------- */

static void check_stmt(verifier *v, const tir_stmt *s, tlc_loc at);

/* A nested block: its declarations end with it. */
static void check_block(verifier *v, const tir_stmt *s, tlc_loc at, const char *what) {
    if (!s) { tir_verifier_fail(v, at, "%s: missing body", what); return; }
    int height = v->nstack;
    check_stmt(v, s, at);
    pop_scope_to(v, height);
}

static void check_for(verifier *v, const tir_stmt *s) {
    int nv = s->u.for_.nvars;
    tir_for_kind kind = s->u.for_.kind;
    if (kind != TIR_FOR_SERIAL && kind != TIR_FOR_PARALLEL && kind != TIR_FOR_PIPELINED && kind != TIR_FOR_UNROLLED) {
        tir_verifier_fail(v, s->loc, "loop of unknown kind %d", (int)kind);
        return;
    }
    if (nv < 1 || !s->u.for_.vars || !s->u.for_.start || !s->u.for_.extent) {
        tir_verifier_fail(v, s->loc, "loop without variables, starts or extents");
        return;
    }
    if (nv > 1 && kind != TIR_FOR_PARALLEL) tir_verifier_fail(v, s->loc, "only Parallel loops have several variables (%d here)", nv);
    if (s->u.for_.step == 0) tir_verifier_fail(v, s->loc, "loop step is 0");
    if (kind != TIR_FOR_SERIAL && kind != TIR_FOR_UNROLLED && s->u.for_.step != 1)
        tir_verifier_fail(v, s->loc, "loop step %" PRId64 " on a %s loop", s->u.for_.step,
                          kind == TIR_FOR_PARALLEL ? "Parallel" : "Pipelined");
    if (kind == TIR_FOR_PIPELINED && s->u.for_.num_stages < 1)
        tir_verifier_fail(v, s->loc, "Pipelined loop with num_stages=%d", s->u.for_.num_stages);
    if (kind != TIR_FOR_PIPELINED && s->u.for_.num_stages != 0)
        tir_verifier_fail(v, s->loc, "num_stages=%d on a loop that is not Pipelined", s->u.for_.num_stages);
    /* Bounds are evaluated outside the loop: check them before its variables come into scope. */
    for (int i = 0; i < nv; i++) {
        check_expr(v, s->u.for_.start[i], s->loc);
        check_expr(v, s->u.for_.extent[i], s->loc);
        int64_t c;
        if (kind == TIR_FOR_PARALLEL) {
            if (!s->u.for_.extent[i] || !tir_expr_const_int(s->u.for_.extent[i], &c) || c < 1)
                tir_verifier_fail(v, s->loc, "Parallel loop extent %d is not a positive constant", i);
            if (!s->u.for_.start[i] || !tir_expr_const_int(s->u.for_.start[i], &c) || c != 0)
                tir_verifier_fail(v, s->loc, "Parallel loop %d does not start at 0", i);
        } else if (s->u.for_.extent[i] && tir_expr_const_int(s->u.for_.extent[i], &c) && c < 0) {
            tir_verifier_fail(v, s->loc, "loop has a negative iteration count %" PRId64, c);
        }
    }
    int height = v->nstack;
    for (int i = 0; i < nv; i++) declare_var(v, s->u.for_.vars[i], s->loc, TV_LOOP);
    if (s->u.for_.cond) {
        if (kind != TIR_FOR_SERIAL && kind != TIR_FOR_UNROLLED)
            tir_verifier_fail(v, s->loc, "a condition on a loop that is not serial");
        check_expr(v, s->u.for_.cond, s->loc);
    }
    check_block(v, s->u.for_.body, s->loc, "loop");
    pop_scope_to(v, height);
}

static void check_alloc(verifier *v, const tir_stmt *s) {
    const tir_buffer *b = s->u.alloc.buf;
    if (!buffer_known(v, b, s->loc)) return;
    if (b->param_index >= 0) {
        tir_verifier_fail(v, s->loc, "alloc of tensor parameter '%s'", nm(b->name));
        return;
    }
    if (v->buf_allocated[b->id]) {
        tir_verifier_fail(v, s->loc, "buffer '%s' is allocated twice", nm(b->name));
        return;
    }
    v->buf_allocated[b->id] = true;
    v->buf_live[b->id] = true;
    push_scope(v, true, b->id);
}

static void check_stmt(verifier *v, const tir_stmt *s, tlc_loc at) {
    if (!s) { tir_verifier_fail(v, at, "missing statement"); return; }
    if (tlc_diag_too_many(v->diag)) return;
    switch (s->kind) {
    case TS_SEQ:
        if (s->u.seq.n < 0 || (s->u.seq.n > 0 && !s->u.seq.stmts)) {
            tir_verifier_fail(v, s->loc, "statement list without statements");
            return;
        }
        for (int i = 0; i < s->u.seq.n; i++) check_stmt(v, s->u.seq.stmts[i], s->loc);
        return;
    case TS_FOR: check_for(v, s); return;
    case TS_IF:
        check_expr(v, s->u.if_.cond, s->loc);
        check_block(v, s->u.if_.then, s->loc, "if");
        if (s->u.if_.els) check_block(v, s->u.if_.els, s->loc, "else");
        return;
    case TS_ALLOC: check_alloc(v, s); return;
    case TS_LET:
        check_expr(v, s->u.let.value, s->loc); /* before the name exists */
        declare_var(v, s->u.let.var, s->loc, TV_LET);
        return;
    case TS_ASSIGN:
        check_expr(v, s->u.let.value, s->loc);
        use_var(v, s->u.let.var, s->loc);
        if (s->u.let.var && s->u.let.var->kind != TV_LET)
            tir_verifier_fail(v, s->loc, "assignment to '%s', which is not a local", nm(s->u.let.var->name));
        return;
    case TS_STORE: {
        const tir_buffer *b = s->u.store.buf;
        use_buffer(v, b, s->loc);
        if (b) check_expr_list(v, s->u.store.idx, b->rank, s->loc, "store");
        check_expr(v, s->u.store.value, s->loc);
        return;
    }
    default: /* a tile op checks its own operands */
        if (!s->op || !s->op->verify || s->op->kind != s->kind) {
            tir_verifier_fail(v, s->loc, "statement of kind %d is no known statement or a tile op without its descriptor",
                              (int)s->kind);
            return;
        }
        s->op->verify(v, s);
        return;
    }
}

/* ---------------- kernels ---------------- */

static void check_buffer_decl(verifier *v, const tir_buffer *b, int index) {
    if (!b) { tir_verifier_fail(v, v->k->loc, "buffer %d is missing", index); return; }
    if (b->id != index) tir_verifier_fail(v, b->loc, "buffer '%s' has id %d at position %d (ids must be dense)", nm(b->name), b->id, index);
    if (!b->name) tir_verifier_fail(v, b->loc, "buffer %d has no name", index);
    if ((unsigned)b->dtype >= TIR_DTYPE_COUNT) tir_verifier_fail(v, b->loc, "buffer '%s' has an invalid dtype", nm(b->name));
    if ((unsigned)b->scope > TIR_SCOPE_VAR) { tir_verifier_fail(v, b->loc, "buffer '%s' has an invalid scope", nm(b->name)); return; }
    if ((b->scope == TIR_SCOPE_VAR) != (b->rank == 0))
        tir_verifier_fail(v, b->loc, "buffer '%s' of scope %s has rank %d", nm(b->name), tir_scope_name(b->scope), b->rank);
    if (b->rank < 0 || b->rank > 8) { tir_verifier_fail(v, b->loc, "buffer '%s' has rank %d", nm(b->name), b->rank); return; }
    if (b->rank > 0 && !b->shape) { tir_verifier_fail(v, b->loc, "buffer '%s' has no shape", nm(b->name)); return; }
    for (int d = 0; d < b->rank; d++) {
        const tir_expr *e = b->shape[d];
        int64_t c;
        if (!e) { tir_verifier_fail(v, b->loc, "buffer '%s' misses dim %d", nm(b->name), d); continue; }
        if (tir_expr_const_int(e, &c)) {
            if (c < 1) tir_verifier_fail(v, b->loc, "buffer '%s' has dim %d of size %" PRId64, nm(b->name), d, c);
        } else if (b->scope != TIR_SCOPE_GLOBAL) {
            tir_verifier_fail(v, b->loc, "%s buffer '%s' has a non-constant dim %d", tir_scope_name(b->scope), nm(b->name), d);
        } else if (b->view_of) {
            /* a tensor's view: sizes computed from symbolic dims */
            check_expr(v, e, b->loc);
        } else if (e->kind != TE_VAR || !e->u.var || e->u.var->kind != TV_SYM_DIM) {
            tir_verifier_fail(v, b->loc, "dim %d of '%s' is neither a constant nor a symbolic dim", d, nm(b->name));
        } else {
            use_var(v, e->u.var, b->loc);
        }
    }
    if (b->param_index >= 0 && b->scope != TIR_SCOPE_GLOBAL)
        tir_verifier_fail(v, b->loc, "tensor parameter '%s' is not global", nm(b->name));
    if (b->is_workspace && (b->scope != TIR_SCOPE_GLOBAL || b->param_index >= 0))
        tir_verifier_fail(v, b->loc, "workspace '%s' must be a global non-parameter buffer", nm(b->name));
}

static void check_kernel(verifier *v, const tir_kernel *k) {
    v->k = k;
    v->kname = nm(k->name);
    if (!k->name) tir_verifier_fail(v, k->loc, "kernel without a name");
    if (k->nvars < 0 || k->nbuffers < 0 || k->nparams < 0 || k->nsym < 0 || k->nconsts < 0) {
        tir_verifier_fail(v, k->loc, "negative counts");
        return;
    }
    if ((k->nparams && !k->params) || (k->nbuffers && !k->buffers) || (k->nsym && !k->sym_dims) ||
        (k->nconsts && !k->consts)) {
        tir_verifier_fail(v, k->loc, "missing parameter, buffer, symbolic-dim or constant list");
        return;
    }
    v->nvars = k->nvars;
    v->var_decl = calloc((size_t)k->nvars + 1, sizeof *v->var_decl);
    v->var_live = calloc((size_t)k->nvars + 1, sizeof *v->var_live);
    v->nbufs = k->nbuffers;
    v->buf_live = calloc((size_t)k->nbuffers + 1, sizeof *v->buf_live);
    v->buf_allocated = calloc((size_t)k->nbuffers + 1, sizeof *v->buf_allocated);
    if (!v->var_decl || !v->var_live || !v->buf_live || !v->buf_allocated) abort();

    /* Kernel-level names: symbolic dims, scalar params, block indices. */
    for (int i = 0; i < k->nsym; i++) {
        declare_var(v, k->sym_dims[i], k->loc, TV_SYM_DIM);
    }
    for (int i = 0; i < k->nconsts; i++)
        if (!k->consts[i].name) tir_verifier_fail(v, k->loc, "compile-time constant %d has no name", i);
    int ntensors = 0;
    for (int i = 0; i < k->nparams; i++) {
        const tir_param *p = &k->params[i];
        if (!p->name) tir_verifier_fail(v, p->loc, "parameter %d has no name", i);
        if (p->kind == TIR_PARAM_TENSOR) {
            if (!p->buf) { tir_verifier_fail(v, p->loc, "tensor parameter '%s' has no buffer", nm(p->name)); continue; }
            if (p->buf->param_index != i)
                tir_verifier_fail(v, p->loc, "tensor parameter '%s' has param_index %d, expected %d", nm(p->name), p->buf->param_index, i);
            if (p->buf->id != ntensors)
                tir_verifier_fail(v, p->loc, "tensor parameter '%s' has buffer id %d: parameters come first", nm(p->name), p->buf->id);
            ntensors++;
        } else if (p->kind == TIR_PARAM_SCALAR) {
            if (declare_var(v, p->var, p->loc, TV_SCALAR_PARAM) && p->var->axis != i)
                tir_verifier_fail(v, p->loc, "scalar parameter '%s' has index %d, expected %d", nm(p->name), p->var->axis, i);
        } else {
            tir_verifier_fail(v, p->loc, "parameter '%s' of unknown kind", nm(p->name));
        }
    }
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers[i];
        check_buffer_decl(v, b, i);
        if (b && b->id == i && b->param_index >= 0) {
            v->buf_live[i] = true; /* parameters are in scope everywhere */
            if (b->param_index >= k->nparams || k->params[b->param_index].buf != b)
                tir_verifier_fail(v, b->loc, "buffer '%s' claims to be parameter %d", nm(b->name), b->param_index);
        }
    }
    if (k->grid_rank < 1 || k->grid_rank > 3) {
        tir_verifier_fail(v, k->loc, "grid rank %d", k->grid_rank);
    } else {
        for (int d = 0; d < k->grid_rank; d++) {
            check_expr(v, k->grid[d], k->loc); /* over sym dims and scalar params only */
            if (declare_var(v, k->block_idx[d], k->loc, TV_BLOCK_IDX) && k->block_idx[d]->axis != d)
                tir_verifier_fail(v, k->loc, "block index '%s' has axis %d, expected %d", nm(k->block_idx[d]->name), k->block_idx[d]->axis, d);
        }
    }
    if (k->threads < 32 || k->threads > 1024 || k->threads % 32 != 0)
        tir_verifier_fail(v, k->loc, "threads=%d", k->threads);
    if (k->thread_indexed && k->thread_dims[0] * k->thread_dims[1] * k->thread_dims[2] != k->threads)
        tir_verifier_fail(v, k->loc, "thread axes %d x %d x %d for threads=%d", k->thread_dims[0], k->thread_dims[1],
                          k->thread_dims[2], k->threads);
    for (int d = 0; d < 3; d++) {
        if (!k->thread_idx[d]) continue;
        if (declare_var(v, k->thread_idx[d], k->loc, TV_THREAD_IDX) && k->thread_idx[d]->axis != d)
            tir_verifier_fail(v, k->loc, "thread index '%s' has axis %d, expected %d", nm(k->thread_idx[d]->name),
                              k->thread_idx[d]->axis, d);
    }
    if (k->use_swizzle && k->swizzle_panel < 1) tir_verifier_fail(v, k->loc, "swizzle panel size %d", k->swizzle_panel);
    if (k->shared_bytes < 0) tir_verifier_fail(v, k->loc, "negative shared memory size");
    if (!k->body) tir_verifier_fail(v, k->loc, "kernel without a body");
    else if (k->body->kind != TS_SEQ) tir_verifier_fail(v, k->body->loc, "kernel body is not a statement list");
    else check_block(v, k->body, k->loc, "kernel");

    int declared = 0;
    for (int i = 0; i < k->nvars; i++) declared += v->var_decl[i] != NULL;
    if (declared != k->nvars)
        tir_verifier_fail(v, k->loc, "variable ids are not dense: %d of nvars=%d are declared", declared, k->nvars);
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers[i];
        if (b && b->id == i && b->param_index < 0 && !v->buf_allocated[i])
            tir_verifier_fail(v, b->loc, "buffer '%s' is never allocated", nm(b->name));
    }
    free(v->var_decl);
    free(v->var_live);
    free(v->buf_live);
    free(v->buf_allocated);
    v->var_decl = NULL;
    v->var_live = v->buf_live = v->buf_allocated = NULL;
    v->nstack = 0;
}

bool tir_verify_module(const tir_module *m, tlc_diag *diag) {
    verifier v = {.diag = diag, .ok = true, .kname = "?"};
    if (!m) {
        tlc_error(diag, (tlc_loc){0, 0}, "internal error: missing Tile IR module");
        return false;
    }
    if (m->nkernels < 0 || (m->nkernels > 0 && !m->kernels)) {
        tlc_error(diag, (tlc_loc){0, 0}, "internal error: Tile IR module without its kernel list");
        return false;
    }
    for (int i = 0; i < m->nkernels; i++) {
        if (!m->kernels[i]) {
            tlc_error(diag, (tlc_loc){0, 0}, "internal error: Tile IR kernel %d is missing", i);
            v.ok = false;
            continue;
        }
        for (int j = 0; j < i; j++)
            if (m->kernels[j] && m->kernels[j]->name && m->kernels[i]->name &&
                strcmp(m->kernels[j]->name, m->kernels[i]->name) == 0) {
                tlc_error(diag, m->kernels[i]->loc, "internal error: two kernels named '%s'", m->kernels[i]->name);
                v.ok = false;
            }
        check_kernel(&v, m->kernels[i]);
    }
    free(v.stack);
    return v.ok;
}
