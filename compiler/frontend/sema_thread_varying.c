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
 * never under varying control. */
#include <stdio.h>
#include "sema_internal.h"
#include "../ir/tir_access.h"
#include "../ir/tir_op.h"

typedef struct tv {
    sema *S;
    tir_kernel *k;
    bool *var;     /* by var id: may differ between threads */
    bool *buf;     /* by buffer id: a per-thread buffer that may hold values that differ */
    bool changed;
    bool found;    /* scratch of the walkers below */
    /* the thread range being checked: [lo, hi) of the block (the block
     * itself outside range branches) */
    int lo, hi;
    const tir_thread_range *range;
    unsigned barriers_used; /* named barrier ids the program or the ranges take */
    tlc_ptrvec ranges;      /* the kernel's thread ranges, one per interval */
    bool split;             /* some branch splits the threads into ranges */
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
 * ranges, each branch's tile ops the work of its range's threads: laid out
 * over them, its barriers named barriers among them. The condition must
 * pick an interval of the current range's threads (comparisons of the
 * thread index of a one-axis block with constants, joined by `and`), each
 * side a whole number of warps. */

/* The thread index behind e (directly, or through a let naming it). */
static bool is_thread_index(const tir_kernel *k, const tir_expr *e) {
    if (e->kind == TE_VAR && e->u.var->kind == TV_LET && e->u.var->def) e = e->u.var->def;
    return e->kind == TE_VAR && e->u.var->kind == TV_THREAD_IDX && e->u.var->axis == 0 &&
           k->thread_dims[0] == k->threads;
}

/* The threads [*a, *b) of [lo, hi) for which c holds; false where c is not
 * such a test. */
static bool range_of(const tir_kernel *k, const tir_expr *c, int lo, int hi, int *a, int *b) {
    if (c->kind != TE_BINARY) return false;
    if (c->u.bin.op == TB_AND) {
        int a1, b1, a2, b2;
        if (!range_of(k, c->u.bin.a, lo, hi, &a1, &b1) || !range_of(k, c->u.bin.b, lo, hi, &a2, &b2)) return false;
        *a = a1 > a2 ? a1 : a2;
        *b = b1 < b2 ? b1 : b2;
        if (*b < *a) *b = *a;
        return true;
    }
    tir_binop op = c->u.bin.op;
    int64_t v;
    const tir_expr *x = c->u.bin.a;
    if (tir_expr_const_int(c->u.bin.a, &v)) { /* 128 <= tid: tid >= 128 */
        x = c->u.bin.b;
        op = op == TB_LT ? TB_GT : op == TB_LE ? TB_GE : op == TB_GT ? TB_LT : op == TB_GE ? TB_LE : op;
    } else if (!tir_expr_const_int(c->u.bin.b, &v)) {
        return false;
    }
    if (!is_thread_index(k, x) || v < INT32_MIN / 2 || v > INT32_MAX / 2) return false;
    int64_t from = lo, to = hi;
    switch (op) {
    case TB_LT: to = v; break;
    case TB_LE: to = v + 1; break;
    case TB_GE: from = v; break;
    case TB_GT: from = v + 1; break;
    default: return false;
    }
    *a = (int)(from < lo ? lo : from > hi ? hi : from);
    *b = (int)(to > hi ? hi : to < *a ? *a : to);
    return true;
}

static bool is_block_work(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    if (s->kind == TS_FOR) return s->u.for_.kind == TIR_FOR_PARALLEL || s->u.for_.kind == TIR_FOR_PIPELINED;
    return s->op && s->kind != TS_SYNC_THREADS && s->kind != TS_THREAD_ALLREDUCE && !runs_per_thread(s);
}

/* The ranges of if s when it splits the threads of [t->lo, t->hi) into
 * ranges holding tile work (then [*a, *b), else the rest); false else. */
static bool splits_threads(tv *t, const tir_stmt *s, int *a, int *b) {
    bool work = tir_stmt_any(s->u.if_.then, is_block_work, NULL) || tir_stmt_any(s->u.if_.els, is_block_work, NULL);
    if (!work || !range_of(t->k, s->u.if_.cond, t->lo, t->hi, a, b)) return false;
    return true;
}

static const tir_thread_range *new_range(tv *t, const tir_stmt *s, int lo, int hi) {
    if (lo >= hi) return NULL;
    if (lo % 32 || hi % 32) {
        tlc_error(t->S->diag, s->loc, "this branch on the thread index gives tile work to threads [%d, %d), which is "
                  "not a whole number of warps: split the threads at multiples of 32", lo, hi);
        return NULL;
    }
    for (int i = 0; i < t->ranges.len; i++) {
        const tir_thread_range *r = t->ranges.items[i];
        if (r->lo == lo && r->count == hi - lo) return r;
    }
    int id = 15;
    while (id > 5 && (t->barriers_used >> id & 1)) id--;
    if (id <= 5) {
        tlc_error(t->S->diag, s->loc, "too many distinct ranges of threads with tile work: tlc gives each a named "
                  "barrier of its own (ids 6..15, those the program's sync_threads leave free)");
        return NULL;
    }
    t->barriers_used |= 1u << id;
    t->split = true;
    tir_thread_range *r = TLC_NEW(t->S->arena, tir_thread_range);
    r->lo = lo;
    r->count = hi - lo;
    r->barrier = id;
    tlc_ptrvec_push(&t->ranges, r);
    return r;
}

/* Every statement in s runs in range r (nested ranges set theirs later). */
static void set_range(tir_stmt *s, const tir_thread_range *r) {
    if (!s) return;
    s->range = r;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) set_range(s->u.seq.stmts[i], r);
        return;
    case TS_FOR: set_range(s->u.for_.body, r); return;
    case TS_IF:
        set_range(s->u.if_.then, r);
        set_range(s->u.if_.els, r);
        return;
    default: return;
    }
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
        int a, b, lo = t->lo, hi = t->hi;
        if (!ctl && splits_threads(t, s, &a, &b)) {
            /* each range's threads take their branch together; what a
             * branch sets differs between threads outside it */
            t->lo = a, t->hi = b;
            propagate(t, s->u.if_.then, false);
            t->lo = a == lo ? b : lo, t->hi = a == lo ? hi : a;
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
        int a, b, lo = t->lo, hi = t->hi;
        if (!ctl && splits_threads(t, s, &a, &b)) {
            /* the rest of the range is the else branch's: an interval when
             * the condition's cuts one end off */
            int ea = a == lo ? b : lo, eb = a == lo ? hi : a;
            if (a != lo && b != hi && s->u.if_.els && tir_stmt_any(s->u.if_.els, is_block_work, NULL)) {
                tlc_error(t->S->diag, s->loc, "this branch on the thread index takes threads [%d, %d) from the middle "
                          "of [%d, %d), and its else branch holds tile work, which tlc gives to an interval of threads "
                          "only: split the threads with nested conditions (if tid < %d: ... elif tid < %d: ...)",
                          a, b, lo, hi, a, b);
                return;
            }
            const tir_thread_range *saved = t->range;
            m->u.if_.thread_varying = true;
            m->u.if_.range_then = new_range(t, s, a, b);
            m->u.if_.range_else = s->u.if_.els ? new_range(t, s, ea, eb) : NULL;
            const tir_thread_range *rs[2] = {m->u.if_.range_then, m->u.if_.range_else};
            tir_stmt *branch[2] = {m->u.if_.then, m->u.if_.els};
            for (int i = 0; i < 2; i++) {
                if (!branch[i]) continue;
                t->range = rs[i] ? rs[i] : saved;
                t->lo = i ? ea : a, t->hi = i ? eb : b;
                if (rs[i]) set_range(branch[i], rs[i]);
                check(t, branch[i], false);
            }
            t->range = saved;
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
        if (v)
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

/* The ids of the program's own named barriers (sync_threads(id, count)). */
static unsigned program_barrier_ids(const tir_stmt *s) {
    if (!s) return 0;
    switch (s->kind) {
    case TS_SEQ: {
        unsigned m = 0;
        for (int i = 0; i < s->u.seq.n; i++) m |= program_barrier_ids(s->u.seq.stmts[i]);
        return m;
    }
    case TS_FOR: return program_barrier_ids(s->u.for_.body);
    case TS_IF: return program_barrier_ids(s->u.if_.then) | program_barrier_ids(s->u.if_.els);
    case TS_SYNC_THREADS: return s->u.sync.count && s->u.sync.id >= 0 && s->u.sync.id < 16 ? 1u << s->u.sync.id : 0;
    default: return 0;
    }
}

static void range_text(const tir_kernel *k, const tir_thread_range *r, char *buf, size_t n) {
    if (r) snprintf(buf, n, "threads [%d, %d)", r->lo, r->lo + r->count);
    else snprintf(buf, n, "the whole block (%d threads)", k->threads);
}

/* A fragment is laid out over the one range that uses it (the block's
 * threads outside any): used by two, it is an error. */
typedef struct range_uses {
    tv *t;
    const tir_stmt *s;
    bool *seen;
    bool failed;
} range_uses;

static void note_frag(const tir_access *acc, void *ctx) {
    range_uses *u = ctx;
    tir_buffer *b = tir_buffer_storage(acc->buf);
    const tir_thread_range *r = u->s->range;
    if (b->scope != TIR_SCOPE_FRAGMENT || u->failed) return;
    if (!u->seen[b->id]) {
        u->seen[b->id] = true;
        b->range = r;
    } else if (b->range != r) {
        char x[64], y[64];
        range_text(u->t->k, b->range, x, sizeof x);
        range_text(u->t->k, r, y, sizeof y);
        tlc_error(u->t->S->diag, u->s->loc, "fragment '%s' is laid out over %s, where it is used first, but this "
                  "statement uses it in %s: a fragment belongs to one range of threads (a branch on the thread index "
                  "with tile work); initialize and use it inside one branch, and pass values between ranges, or to "
                  "the whole block, through shared memory", b->name, x, y);
        u->failed = true;
    }
}

static void range_walk(range_uses *u, const tir_stmt *s) {
    if (!s || u->failed) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) range_walk(u, s->u.seq.stmts[i]);
        return;
    case TS_FOR:
        if (s->u.for_.kind != TIR_FOR_PARALLEL) {
            range_walk(u, s->u.for_.body);
            return;
        }
        break;
    case TS_IF:
        range_walk(u, s->u.if_.then);
        range_walk(u, s->u.if_.els);
        return;
    default: break;
    }
    u->s = s;
    tir_stmt_accesses(s, note_frag, u);
}

static void check_range_uses(tv *t) {
    range_uses u = {.t = t, .seen = TLC_NEW_ARRAY(t->S->arena, bool, (size_t)t->S->buffers.len + 1)};
    range_walk(&u, t->k->body);
}

void sema_thread_varying(sema *S) {
    tir_kernel *k = S->k;
    if (!k || !k->body || !k->thread_indexed) return;
    tv t = {.S = S, .k = k, .lo = 0, .hi = k->threads};
    t.barriers_used = program_barrier_ids(k->body);
    t.var = TLC_NEW_ARRAY(S->arena, bool, (size_t)k->nvars + 1);
    /* (the kernel's buffer list is made after its body: count sema's) */
    t.buf = TLC_NEW_ARRAY(S->arena, bool, (size_t)S->buffers.len + 1);
    for (int i = 0; i < 3; i++)
        if (k->thread_idx[i]) t.var[k->thread_idx[i]->id] = true;
    /* each round marks at least one more variable or buffer */
    do {
        t.changed = false;
        propagate(&t, k->body, false);
    } while (t.changed);
    check(&t, k->body, false);
    if (t.split) check_range_uses(&t);
    tlc_ptrvec_free(&t.ranges);
}
