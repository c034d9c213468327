/* Thread-indexed code (docs/language.md, "Thread-indexed code"). A kernel
 * that asks for its thread's index (T.get_thread_binding) runs its scalar
 * statements in every thread, each with its own values. This pass finds the
 * values that may differ between a block's threads (varying): the thread
 * indices, scalars computed from them or assigned under a condition or loop
 * that reads them, and per-thread buffers (alloc_local, alloc_var) written
 * so; a load at a varying index is varying, a load of shared or global
 * memory at the same index is not.
 *
 * Tile operations and Parallel loops are the block's: their work is spread
 * over the threads, so they may not sit under a varying condition or loop,
 * nor read a varying value (a located error), unless each thread runs them
 * by itself: an op that writes only per-thread buffers, or an element
 * atomic_add (every thread that reaches it adds). The pass records what
 * lowering and the interpreter read: the conditions and serial loops whose
 * threads part ways (thread_varying: no barrier inside, the interpreter
 * splits the threads) and the per-thread ops (tir_stmt.per_thread). A warp
 * shuffle's value is another lane's, so varying, and takes every lane:
 * never under varying control.
 *
 * A fragment that only ever has single elements read and written outside
 * Parallel loops (no tile op, no Parallel loop, no view uses it) is what
 * TileLang keeps in each thread's registers; stored a value that differs
 * between threads, it is taken as the per-thread buffer it then is (the
 * scope of an alloc_local) and the analysis runs again. */
#include <stdio.h>
#include "sema_internal.h"
#include "../ir/tir_access.h"
#include "../ir/tir_op.h"

typedef struct tv {
    sema *S;
    tir_kernel *k;
    bool *var;     /* by var id: may differ between threads */
    bool *buf;     /* by buffer id: a per-thread buffer that may hold values that differ */
    bool *element_only; /* by buffer id: a fragment only ever accessed element by element outside Parallel loops */
    tlc_ptrvec per_thread; /* such fragments stored a varying value: to become per-thread buffers */
    bool changed;
    bool found;    /* scratch of the walkers below */
    /* the thread range being checked: [lo, hi) of the block (the block
     * itself outside range branches) */
    int lo, hi;
    sema_thread_ranges ranges; /* the kernel's (sema_thread_range.c) */
} tv;

static bool per_thread_scope(const tir_buffer *b) {
    return b->scope == TIR_SCOPE_LOCAL || b->scope == TIR_SCOPE_VAR;
}

static void var_read(const tir_var *v, void *ctx) {
    tv *t = ctx;
    if (t->var[v->id]) t->found = true;
}

static void load_read(const tir_access *acc, void *ctx) {
    tv *t = ctx;
    if ((acc->mode & TIR_ACCESS_READ) && per_thread_scope(acc->buf) && t->buf[acc->buf->id]) t->found = true;
}

/* e may differ between threads: it reads a varying variable (indices
 * included) or a varying per-thread buffer. */
static bool varying(tv *t, const tir_expr *e) {
    if (!e) return false;
    if (tir_expr_has_shuffle(e)) return true; /* another lane's value */
    t->found = false;
    tir_expr_vars(e, var_read, t);
    if (!t->found) tir_expr_accesses(e, NULL, load_read, t);
    return t->found;
}

/* s, or a statement inside it, reads a varying value (another lane's
 * through a shuffle included). */
static bool reads_varying(tv *t, const tir_stmt *s) {
    if (tir_stmt_has_shuffle(s, false)) return true;
    t->found = false;
    tir_stmt_vars(s, var_read, t);
    if (!t->found) tir_stmt_accesses(s, load_read, t);
    return t->found;
}

static void mark_var(tv *t, const tir_var *v) {
    if (!t->var[v->id]) t->var[v->id] = t->changed = true;
}

static void varying_written(const tir_access *acc, void *ctx) {
    tv *t = ctx;
    if ((acc->mode & TIR_ACCESS_WRITE) && per_thread_scope(acc->buf) && t->buf[acc->buf->id]) t->found = true;
}

static void mark_written(const tir_access *acc, void *ctx) {
    tv *t = ctx;
    if ((acc->mode & TIR_ACCESS_WRITE) && per_thread_scope(acc->buf) && !t->buf[acc->buf->id])
        t->buf[acc->buf->id] = t->changed = true;
}

typedef struct { bool per_thread, other; } writes;

static void classify_write(const tir_access *acc, void *ctx) {
    writes *w = ctx;
    if (!(acc->mode & TIR_ACCESS_WRITE)) return;
    if (per_thread_scope(acc->buf)) w->per_thread = true;
    else w->other = true;
}

/* A tile op (or Parallel loop) each thread runs by itself. */
static bool runs_per_thread(const tir_stmt *s) {
    if (s->op && s->op->each_thread) return true;
    if (s->kind == TS_ATOMIC_ADD) return !s->u.atomic.src.buf; /* return_prev: each thread its own value */
    writes w = {false, false};
    tir_stmt_accesses(s, classify_write, &w);
    return w.per_thread && !w.other;
}

static bool loop_bounds_vary(tv *t, const tir_stmt *s) {
    for (int i = 0; i < s->u.for_.nvars; i++)
        if (varying(t, s->u.for_.start[i]) || varying(t, s->u.for_.extent[i])) return true;
    return varying(t, s->u.for_.cond);
}

/* ---------------- thread ranges ----------------
 * A branch on the thread index whose branches hold tile work (`if tid <
 * 32: ... else: ...`, DeepSeek mHC's pre kernel) splits the threads into
 * ranges (sema_thread_range.c), each branch's tile ops the work of its
 * range's threads: its values are the same in all of them, and differ
 * between threads only after the branch. */

static bool is_block_work(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    if (s->kind == TS_FOR) return s->u.for_.kind == TIR_FOR_PARALLEL || s->u.for_.kind == TIR_FOR_PIPELINED;
    return s->op && s->kind != TS_SYNC_THREADS && s->kind != TS_THREAD_ALLREDUCE && !runs_per_thread(s);
}

/* The ranges of if s when it splits the threads of [t->lo, t->hi) into
 * ranges holding tile work (then [*a, *b), else the rest); false else. */
static bool splits_threads(tv *t, const tir_stmt *s, int *a, int *b, int *ea, int *eb) {
    bool work = tir_stmt_any(s->u.if_.then, is_block_work, NULL) || tir_stmt_any(s->u.if_.els, is_block_work, NULL);
    if (!work || !sema_thread_range_of(t->k, s->u.if_.cond, t->lo, t->hi, a, b)) return false;
    /* the else branch's: an interval when the condition cuts one end off */
    *ea = *a == t->lo ? *b : t->lo;
    *eb = *a == t->lo ? t->hi : *a;
    return true;
}

/* The variables and per-thread buffers the branches of range-splitting if
 * `split` set, read anywhere outside them: varying there (each thread
 * holds what its own branch left), so varying (a conservative mark: also
 * inside the branch). */
typedef struct escape {
    tv *t;
    const tir_stmt *split;
    bool *set_var, *set_buf;
} escape;

static void note_set(const tir_access *acc, void *ctx) {
    escape *x = ctx;
    if ((acc->mode & TIR_ACCESS_WRITE) && per_thread_scope(acc->buf)) x->set_buf[acc->buf->id] = true;
}

static void collect_set(escape *x, const tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) collect_set(x, s->u.seq.stmts[i]);
        return;
    case TS_FOR: collect_set(x, s->u.for_.body); return;
    case TS_IF:
        collect_set(x, s->u.if_.then);
        collect_set(x, s->u.if_.els);
        return;
    case TS_LET:
    case TS_ASSIGN: x->set_var[s->u.let.var->id] = true; return;
    default: tir_stmt_accesses(s, note_set, x); return;
    }
}

static void escaped_var(const tir_var *v, void *ctx) {
    escape *x = ctx;
    if (x->set_var[v->id]) mark_var(x->t, v);
}

static void escaped_buf(const tir_access *acc, void *ctx) {
    escape *x = ctx;
    if ((acc->mode & TIR_ACCESS_READ) && per_thread_scope(acc->buf) && x->set_buf[acc->buf->id] &&
        !x->t->buf[acc->buf->id])
        x->t->buf[acc->buf->id] = x->t->changed = true;
}

static void mark_read_outside(escape *x, const tir_stmt *s) {
    if (!s || s == x->split) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) mark_read_outside(x, s->u.seq.stmts[i]);
        return;
    case TS_FOR:
        for (int i = 0; i < s->u.for_.nvars; i++) {
            tir_expr_vars(s->u.for_.start[i], escaped_var, x);
            tir_expr_vars(s->u.for_.extent[i], escaped_var, x);
        }
        if (s->u.for_.cond) tir_expr_vars(s->u.for_.cond, escaped_var, x);
        mark_read_outside(x, s->u.for_.body);
        return;
    case TS_IF:
        tir_expr_vars(s->u.if_.cond, escaped_var, x);
        mark_read_outside(x, s->u.if_.then);
        mark_read_outside(x, s->u.if_.els);
        return;
    default:
        tir_stmt_vars(s, escaped_var, x);
        tir_stmt_accesses(s, escaped_buf, x);
        return;
    }
}

static void escaping(tv *t, const tir_stmt *split) {
    escape x = {t, split, TLC_NEW_ARRAY(t->S->arena, bool, (size_t)t->k->nvars + 1),
                TLC_NEW_ARRAY(t->S->arena, bool, (size_t)t->S->buffers.len + 1)};
    collect_set(&x, split->u.if_.then);
    collect_set(&x, split->u.if_.els);
    mark_read_outside(&x, t->k->body);
}

/* One pass over s: what becomes varying, given that the statements run
 * under varying control when ctl. Repeated until nothing changes (loops
 * carry values around). */
static void propagate(tv *t, const tir_stmt *s, bool ctl) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) propagate(t, s->u.seq.stmts[i], ctl);
        return;
    case TS_IF: {
        int a, b, ea, eb, lo = t->lo, hi = t->hi;
        if (!ctl && splits_threads(t, s, &a, &b, &ea, &eb)) {
            /* each range's threads take their branch together; what a
             * branch sets differs between threads outside it */
            t->lo = a, t->hi = b;
            propagate(t, s->u.if_.then, false);
            t->lo = ea, t->hi = eb;
            propagate(t, s->u.if_.els, false);
            t->lo = lo, t->hi = hi;
            escaping(t, s);
            return;
        }
        bool c = ctl || varying(t, s->u.if_.cond);
        propagate(t, s->u.if_.then, c);
        propagate(t, s->u.if_.els, c);
        return;
    }
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PARALLEL) {
            propagate(t, s->u.for_.body, ctl);
            return;
        }
        for (int i = 0; i < s->u.for_.nvars; i++)
            if (varying(t, s->u.for_.start[i])) mark_var(t, s->u.for_.vars[i]);
        propagate(t, s->u.for_.body, ctl || loop_bounds_vary(t, s));
        return;
    case TS_LET:
    case TS_ASSIGN:
        /* a value set by some threads only differs, even if it is a constant */
        if (ctl || varying(t, s->u.let.value)) mark_var(t, s->u.let.var);
        return;
    case TS_STORE: {
        const tir_buffer *b = s->u.store.buf;
        if (!per_thread_scope(b) || t->buf[b->id]) return;
        bool v = ctl || varying(t, s->u.store.value);
        for (int i = 0; i < b->rank && !v; i++) v = varying(t, s->u.store.idx[i]);
        if (v) t->buf[b->id] = t->changed = true;
        return;
    }
    case TS_ALLOC: return;
    default:
        if (ctl || reads_varying(t, s)) tir_stmt_accesses(s, mark_written, t);
        return;
    }
}

/* The block's work writes what every thread holds alike: a per-thread
 * buffer whose values differ between threads would lose them (an error). */
static bool writes_varying_buffer(tv *t, const tir_stmt *s) {
    t->found = false;
    tir_stmt_accesses(s, varying_written, t);
    if (t->found)
        tlc_error(t->S->diag, s->loc, "this is the whole block's work, and it writes a per-thread buffer whose values "
                  "differ between threads: write that buffer in statements of its own");
    return t->found;
}

static void refuse(tv *t, const tir_stmt *s, bool ctl) {
    char what[64];
    if (s->kind == TS_FOR)
        snprintf(what, sizeof what, "a %s loop", s->u.for_.kind == TIR_FOR_PIPELINED ? "Pipelined" : "Parallel");
    else
        snprintf(what, sizeof what, "T.%s", s->op && s->op->name ? s->op->name : "?");
    if (ctl)
        tlc_error(t->S->diag, s->loc,
                  "%s is the whole block's work, but here it runs under a condition or loop that differs between the "
                  "block's threads (thread-indexed code): every thread must reach it; move it out of that condition",
                  what);
    else
        tlc_error(t->S->diag, s->loc,
                  "%s is the whole block's work, spread over its threads, but it reads a value that differs between "
                  "them (from get_thread_binding): compute per-thread values in scalar statements and serial loops, "
                  "or give the operation values every thread shares",
                  what);
}

/* Checks s and records the marks, ctl as in propagate. */
static void check(tv *t, const tir_stmt *s, bool ctl) {
    if (!s || tlc_diag_too_many(t->S->diag)) return;
    if (ctl && s->kind != TS_SEQ && tir_stmt_has_shuffle(s, true)) {
        tlc_error(t->S->diag, s->loc, "a warp shuffle takes every lane of the warp, but this one runs under a "
                  "condition or loop that differs between the block's threads: move it out of that condition");
        return;
    }
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) check(t, s->u.seq.stmts[i], ctl);
        return;
    case TS_IF: {
        tir_stmt *m = (tir_stmt *)s;
        m->u.if_.thread_varying = varying(t, s->u.if_.cond);
        int a, b, ea, eb, lo = t->lo, hi = t->hi;
        if (!ctl && splits_threads(t, s, &a, &b, &ea, &eb)) {
            if (a != lo && b != hi && s->u.if_.els && tir_stmt_any(s->u.if_.els, is_block_work, NULL)) {
                tlc_error(t->S->diag, s->loc, "this branch on the thread index takes threads [%d, %d) from the middle "
                          "of [%d, %d), and its else branch holds tile work, which tlc gives to an interval of threads "
                          "only: split the threads with nested conditions (if tid < %d: ... elif tid < %d: ...)",
                          a, b, lo, hi, a, b);
                return;
            }
            m->u.if_.thread_varying = true;
            m->u.if_.range_then = sema_thread_range(t->S, &t->ranges, s, a, b);
            m->u.if_.range_else = s->u.if_.els ? sema_thread_range(t->S, &t->ranges, s, ea, eb) : NULL;
            const tir_thread_range *rs[2] = {m->u.if_.range_then, m->u.if_.range_else};
            tir_stmt *branch[2] = {m->u.if_.then, m->u.if_.els};
            for (int i = 0; i < 2; i++) {
                if (!branch[i]) continue;
                t->lo = i ? ea : a, t->hi = i ? eb : b;
                if (rs[i]) sema_set_thread_range(branch[i], rs[i]);
                check(t, branch[i], false);
            }
            t->lo = lo, t->hi = hi;
            return;
        }
        check(t, s->u.if_.then, ctl || m->u.if_.thread_varying);
        check(t, s->u.if_.els, ctl || m->u.if_.thread_varying);
        return;
    }
    case TS_FOR: {
        tir_stmt *m = (tir_stmt *)s;
        if (s->u.for_.kind == TIR_FOR_PARALLEL || s->u.for_.kind == TIR_FOR_PIPELINED) {
            bool bad = ctl || loop_bounds_vary(t, s);
            if (s->u.for_.kind == TIR_FOR_PARALLEL) {
                /* the body's statements are the loop's iterations: what they read */
                if (reads_varying(t, s->u.for_.body) || bad) {
                    refuse(t, s, bad);
                    return;
                }
                if (writes_varying_buffer(t, s)) return;
            } else if (bad) {
                refuse(t, s, ctl);
                return;
            }
            check(t, s->u.for_.body, false);
            return;
        }
        m->u.for_.thread_varying = loop_bounds_vary(t, s);
        check(t, s->u.for_.body, ctl || m->u.for_.thread_varying);
        return;
    }
    case TS_LET:
    case TS_ASSIGN:
    case TS_ALLOC:
        return;
    case TS_STORE: {
        const tir_buffer *b = s->u.store.buf;
        if (b->scope != TIR_SCOPE_FRAGMENT) return;
        bool v = ctl || varying(t, s->u.store.value);
        for (int i = 0; i < b->rank && !v; i++) v = varying(t, s->u.store.idx[i]);
        if (v && t->element_only[b->id]) {
            bool known = false;
            for (int i = 0; i < t->per_thread.len; i++) known |= t->per_thread.items[i] == b;
            if (!known) tlc_ptrvec_push(&t->per_thread, (void *)b);
        } else if (v)
            tlc_error(t->S->diag, s->loc,
                      "fragment '%s' is the block's, spread over its threads: it cannot hold a value that differs "
                      "between them (thread-indexed code); keep per-thread values in T.alloc_local",
                      b->name);
        return;
    }
    default:
        if (s->kind == TS_THREAD_ALLREDUCE) {
            /* every thread's value combined: it reads what differs, and every thread reaches it */
            if (ctl) refuse(t, s, true);
            else ((tir_stmt *)s)->per_thread = true;
            return;
        }
        /* a named barrier: the threads the program sends here meet (in
         * the interpreter's lockstep, nothing to do in each) */
        if (s->kind == TS_SYNC_THREADS && s->u.sync.count) {
            ((tir_stmt *)s)->per_thread = true;
            return;
        }
        if (runs_per_thread(s) && !tir_stmt_has_shuffle(s, true)) {
            ((tir_stmt *)s)->per_thread = true;
            return;
        }
        if (ctl || reads_varying(t, s)) {
            refuse(t, s, ctl);
            return;
        }
        writes_varying_buffer(t, s);
        return;
    }
}

/* ---- fragments used only element by element (per_thread above) ---- */
static void not_element_only(const tir_access *acc, void *ctx) {
    tv *t = ctx;
    if (acc->buf->scope == TIR_SCOPE_FRAGMENT) t->element_only[acc->buf->id] = false;
}

static void region_use(const tir_access *acc, void *ctx) {
    if (acc->region) not_element_only(acc, ctx);
}

static void find_element_only(tv *t, const tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) find_element_only(t, s->u.seq.stmts[i]);
        return;
    case TS_IF:
        find_element_only(t, s->u.if_.then);
        find_element_only(t, s->u.if_.els);
        return;
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PARALLEL)
            tir_stmt_accesses(s, not_element_only, t);
        else
            find_element_only(t, s->u.for_.body);
        return;
    default: tir_stmt_accesses(s, region_use, t); return;
    }
}

static void analyse(tv *t) {
    tir_kernel *k = t->k;
    sema *S = t->S;
    t->var = TLC_NEW_ARRAY(S->arena, bool, (size_t)k->nvars + 1);
    /* (the kernel's buffer list is made after its body: count sema's) */
    t->buf = TLC_NEW_ARRAY(S->arena, bool, (size_t)S->buffers.len + 1);
    t->element_only = TLC_NEW_ARRAY(S->arena, bool, (size_t)S->buffers.len + 1);
    for (int i = 0; i < S->buffers.len; i++) {
        const tir_buffer *b = S->buffers.items[i];
        if (b->scope == TIR_SCOPE_FRAGMENT) t->element_only[b->id] = true;
    }
    for (int i = 0; i < S->buffers.len; i++) { /* a view's base is used as the view is */
        const tir_buffer *b = S->buffers.items[i];
        if (b->view_of) t->element_only[b->view_of->id] = false;
    }
    find_element_only(t, k->body);
    for (int i = 0; i < 3; i++)
        if (k->thread_idx[i]) t->var[k->thread_idx[i]->id] = true;
    /* each round marks at least one more variable or buffer */
    do {
        t->changed = false;
        propagate(t, k->body, false);
    } while (t->changed);
    check(t, k->body, false);
}

void sema_thread_varying(sema *S) {
    tir_kernel *k = S->k;
    if (!k || !k->body || !k->thread_indexed) return;
    tv t = {.S = S, .k = k, .lo = 0, .hi = k->threads};
    sema_thread_ranges_init(&t.ranges, k);
    int errors = S->diag->errors;
    analyse(&t);
    /* those fragments are per-thread buffers: everything read from them may
     * vary, so the analysis runs again, and a fragment stored from one may
     * join them in turn; each round takes at least one more (after other
     * errors, another round would repeat them) */
    while (t.per_thread.len && S->diag->errors == errors) {
        for (int i = 0; i < t.per_thread.len; i++) ((tir_buffer *)t.per_thread.items[i])->scope = TIR_SCOPE_LOCAL;
        t.per_thread.len = 0;
        analyse(&t);
    }
    tlc_ptrvec_free(&t.per_thread);
    if (t.ranges.ranges.len) sema_check_range_fragments(S);
    sema_thread_ranges_free(&t.ranges);
}
