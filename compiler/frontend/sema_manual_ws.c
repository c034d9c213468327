/* TileLang's manual warp specialization: `with T.ws(i):` scopes, mbarriers
 * (T.alloc_barrier, T.barrier_wait / T.mbarrier_wait_parity,
 * T.barrier_arrive / T.mbarrier_arrive) and T.tma_copy(..., barrier=).
 *
 * tlc runs the statements of every T.ws scope in program order on all of
 * the block's threads, as tile-level code (docs/language.md, "Manual warp
 * specialization"): the tile program then computes what the warpgroups
 * compute together, and tlc plans its loads, pipelining and warp
 * specialization as for any kernel. That holds when program order is a
 * schedule the barriers allow: every wait finds the phase it waits for
 * completed by arrives before it. So the barriers are simulated here in
 * program order (loops with their iterations, up to SIM_ITERATIONS of
 * each) and a wait that would never complete is an error; then the
 * mbarrier statements are removed, and nothing after sema sees them.
 * T.tma_copy counts no arrival (TileLang's loads with user arrives: the
 * copy only expects the bytes), and in program order its bytes are there
 * once it is done, so it is a copy. */
#include <stdlib.h>
#include <string.h>
#include "sema_internal.h"
#include "../ops/op_table.h"
#include "../ir/tir_access.h"

typedef struct sema_barrier {
    const char *name;
    tlc_loc loc;
    int n;           /* mbarriers */
    int64_t *counts; /* arrivals per phase, per mbarrier */
} sema_barrier;

/* mbarrier.init takes counts below 2^20 */
#define MBARRIER_MAX_COUNT ((1 << 20) - 1)
#define MAX_BARRIERS 256
/* iterations of a loop simulated: enough for the parities of a pipeline
 * of up to 8 stages to repeat */
#define SIM_ITERATIONS 16
/* statements simulated in all (nested loops multiply their iterations) */
#define SIM_MAX_STEPS 1000000

/* The kernel has barrier statements or T.ws scopes: whether its ranges
 * run in program order (said then, once) is decided at its end. */
static void mark_seen(sema *S, tlc_loc loc) {
    if (S->ws_seen) return;
    S->ws_seen = true;
    S->ws_seen_loc = loc;
}

void sema_ws_with(sema *S, const ast_stmt *s) {
    const ast_expr *call = s->u.with.item;
    const builtin_spec *b = sema_builtin_lookup("ws");
    if (!S->in_kernel) {
        tlc_error(S->diag, s->loc, "'with T.ws(...)' must be inside 'with Kernel(...)'");
        return;
    }
    if (!sema_check_not_in_parallel(S, s->loc, "'with T.ws(...)'")) return;
    /* after an error the body is still analysed, for its own diagnostics */
    bool ok = true;
    if (S->ws_threads) {
        tlc_error(S->diag, s->loc, "T.ws scopes cannot be nested");
        ok = false;
    }
    if (s->u.with.target) {
        tlc_error(S->diag, s->u.with.target->loc, "'with T.ws(...)' binds no name");
        ok = false;
    }
    sema_args a;
    if (!sema_bind_args(S, b, call, &a)) {
        a.nvar = 1;
        ok = false;
    }
    int threads = S->k->threads, groups = threads / 128;
    int64_t seen[4];
    for (int i = 0; ok && i < a.nvar; i++) {
        tir_expr *e = sema_eval_scalar(S, a.var[i]);
        int64_t id;
        if (!e) {
            ok = false;
        } else if (!tir_expr_const_int(e, &id) || tir_dtype_is_float(e->dtype)) {
            tlc_error(S->diag, a.var[i]->loc, "a warpgroup of T.ws must be a compile-time integer");
            ok = false;
        } else if (threads % 128 != 0 || id < 0 || id >= groups) {
            tlc_error(S->diag, a.var[i]->loc, "T.ws(%lld): the kernel's %d threads hold %d warpgroup%s of 128%s",
                      (long long)id, threads, groups, groups == 1 ? "" : "s",
                      threads % 128 ? " (T.ws needs a multiple of 128 threads)" : "");
            ok = false;
        } else {
            for (int j = 0; j < i; j++)
                if (seen[j] == id) {
                    tlc_error(S->diag, a.var[i]->loc, "T.ws names warpgroup %lld twice", (long long)id);
                    ok = false;
                }
            seen[i] = id;
        }
    }
    if (S->depth >= 64) {
        tlc_error(S->diag, s->loc, "blocks are nested too deeply");
        return;
    }
    if (ok) {
        mark_seen(S, s->loc);
        S->ws_scopes = true;
    }
    /* as Python's `with`, the scope's names stay visible after it */
    int outer = S->ws_threads;
    S->ws_threads = 128 * a.nvar;
    S->depth++;
    sema_stmts(S, &s->u.with.body, 0); /* (a break inside guards what follows it) */
    S->depth--;
    S->ws_threads = outer;
}

void sema_alloc_barrier(sema *S, const ast_expr *target, const ast_expr *call) {
    const builtin_spec *b = sema_builtin_lookup("alloc_barrier");
    sema_args a;
    const char *name = target->u.name;
    if (!S->in_kernel) {
        tlc_error(S->diag, call->loc, "'alloc_barrier' must be inside 'with Kernel(...)'");
        sema_declare_error(S, name, target->loc);
        return;
    }
    if (!sema_bind_args(S, b, call, &a)) {
        sema_declare_error(S, name, target->loc);
        return;
    }
    sv v = sema_eval(S, a.arg[0]);
    int n = v.kind == SV_TUPLE ? v.u.tup.n : 1;
    bool ok = v.kind != SV_ERROR && n >= 1 && n <= MAX_BARRIERS && S->barriers.len < MAX_BARRIERS;
    if (v.kind != SV_ERROR && !ok)
        tlc_error(S->diag, a.arg[0]->loc, "T.alloc_barrier takes 1 to %d arrival counts (at most %d barriers a kernel)",
                  MAX_BARRIERS, MAX_BARRIERS);
    int64_t *counts = ok ? TLC_NEW_ARRAY(S->arena, int64_t, (size_t)n) : NULL;
    for (int i = 0; ok && i < n; i++) {
        const sv *c = v.kind == SV_TUPLE ? &v.u.tup.items[i] : &v;
        if (c->kind != SV_SCALAR || c->u.e->kind != TE_INT || c->u.e->u.ival < 1 ||
            c->u.e->u.ival > MBARRIER_MAX_COUNT) {
            tlc_error(S->diag, a.arg[0]->loc, "an arrival count of T.alloc_barrier must be a constant from 1 to %d",
                      MBARRIER_MAX_COUNT);
            ok = false;
        } else {
            counts[i] = c->u.e->u.ival;
        }
    }
    if (!ok) {
        sema_declare_error(S, name, target->loc);
        return;
    }
    sema_barrier *bar = TLC_NEW(S->arena, sema_barrier);
    bar->name = name;
    bar->loc = target->loc;
    bar->n = n;
    bar->counts = counts;
    sym *ns = sema_declare(S, name, SYM_CONST, target->loc);
    ns->origin = CONST_LOCAL;
    ns->value.kind = SV_BARRIER;
    ns->value.loc = target->loc;
    ns->value.u.barrier = S->barriers.len;
    tlc_ptrvec_push(&S->barriers, bar);
}

/* The barrier an argument names (`bar`, `mbars[i]`), its number in sema's
 * list in *number; *index its mbarrier. */
static const sema_barrier *barrier_arg(sema *S, const ast_expr *e, int *number, tir_expr **index) {
    const ast_expr *base = e->kind == AE_SUBSCRIPT ? e->u.sub.value : e;
    sv v = sema_eval(S, base);
    if (v.kind == SV_ERROR) return NULL;
    if (v.kind != SV_BARRIER) {
        char what[96];
        sema_describe_sv(&v, what, sizeof what);
        tlc_error(S->diag, e->loc, "expected a barrier of T.alloc_barrier, got %s", what);
        return NULL;
    }
    const sema_barrier *bar = S->barriers.items[v.u.barrier];
    *number = v.u.barrier;
    if (e->kind != AE_SUBSCRIPT) {
        if (bar->n != 1) {
            tlc_error(S->diag, e->loc, "'%s' holds %d barriers: index it (%s[i])", bar->name, bar->n, bar->name);
            return NULL;
        }
        *index = tir_int(S->arena, 0, e->loc);
        return bar;
    }
    if (e->u.sub.nindex != 1) {
        tlc_error(S->diag, e->loc, "'%s' takes one index", bar->name);
        return NULL;
    }
    tir_expr *x = sema_eval_scalar(S, e->u.sub.index[0]);
    if (!x) return NULL;
    int64_t c;
    if (tir_dtype_is_float(x->dtype) || x->dtype == TIR_BOOL) {
        tlc_error(S->diag, e->u.sub.index[0]->loc, "the index of '%s' must be an integer", bar->name);
        return NULL;
    }
    if (tir_expr_const_int(x, &c) && (c < 0 || c >= bar->n)) {
        tlc_error(S->diag, e->u.sub.index[0]->loc, "index %lld is out of range for '%s', which holds %d barrier%s",
                  (long long)c, bar->name, bar->n, bar->n == 1 ? "" : "s");
        return NULL;
    }
    *index = x;
    return bar;
}

const sema_barrier *sema_barrier_arg(sema *S, const ast_expr *e, int *number, tir_expr **index) {
    return barrier_arg(S, e, number, index);
}

void sema_mbarrier_op(sema *S, const builtin_spec *b, const sema_args *a, tlc_loc loc) {
    tir_expr *index = NULL, *parity = NULL;
    int number = 0;
    const sema_barrier *bar = barrier_arg(S, a->arg[0], &number, &index);
    bool wait = b->id == B_BARRIER_WAIT;
    if (wait) {
        parity = sema_eval_scalar(S, a->arg[1]);
        int64_t p;
        if (parity && (tir_dtype_is_float(parity->dtype) || (tir_expr_const_int(parity, &p) && p != 0 && p != 1))) {
            tlc_error(S->diag, a->arg[1]->loc, "the parity of a barrier wait is 0 or 1");
            parity = NULL;
        }
        if (!parity) return;
    }
    if (!bar) return;
    mark_seen(S, loc);
    tir_stmt *st = tlc_new_tile_op(S->arena, TS_MBARRIER, loc);
    st->u.mbarrier.wait = wait;
    st->u.mbarrier.barrier = number;
    st->u.mbarrier.index = index;
    st->u.mbarrier.parity = parity;
    st->u.mbarrier.arrivals = S->ws_threads ? S->ws_threads : S->k->threads;
    sema_emit(S, st);
}

/* The buffer an operand's name refers to, or NULL. */
static const tir_buffer *operand_buffer(sema *S, const ast_expr *e) {
    const ast_expr *base = e->kind == AE_SUBSCRIPT ? e->u.sub.value : e;
    sym *s = base->kind == AE_NAME ? sema_lookup(S, base->u.name) : NULL;
    return s && s->kind == SYM_BUFFER ? s->buf : NULL;
}

bool sema_tma_copy_barrier(sema *S, const sema_args *a, int *number, tir_expr **index) {
    if (!barrier_arg(S, a->arg[2], number, index)) return false;
    const tir_buffer *src = operand_buffer(S, a->arg[0]), *dst = operand_buffer(S, a->arg[1]);
    if ((src && src->scope != TIR_SCOPE_GLOBAL) || (dst && dst->scope != TIR_SCOPE_SHARED)) {
        tlc_error(S->diag, (src && src->scope != TIR_SCOPE_GLOBAL ? a->arg[0] : a->arg[1])->loc,
                  "T.tma_copy loads a region of a global tensor into a shared buffer");
        return false;
    }
    mark_seen(S, a->arg[2]->loc);
    return true;
}

/* ---------------- the protocol in program order ---------------- */

typedef struct binding {
    const tir_var *var;
    int64_t value;
    bool known;
} binding;

typedef struct sim {
    sema *S;
    tlc_ptrvec bindings;  /* binding * (malloc'd) */
    int64_t **phases;     /* per barrier, per mbarrier: phases completed */
    int64_t **arrived;    /* per barrier, per mbarrier: arrivals in the current phase */
    const tir_stmt *loops[16];
    int nloops;
    int64_t steps;        /* statements simulated, against SIM_MAX_STEPS */
    bool stop;            /* an error was reported, or the rest cannot be checked */
} sim;

static binding *find_binding(sim *m, const tir_var *v, bool make) {
    for (int i = 0; i < m->bindings.len; i++) {
        binding *b = m->bindings.items[i];
        if (b->var == v) return b;
    }
    if (!make) return NULL;
    binding *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->var = v;
    tlc_ptrvec_push(&m->bindings, b);
    return b;
}

static bool eval(sim *m, const tir_expr *e, int64_t *out) {
    int64_t x, y;
    switch (e->kind) {
    case TE_INT: *out = e->u.ival; return true;
    case TE_VAR: {
        const binding *b = find_binding(m, e->u.var, false);
        if (!b || !b->known) return false;
        *out = b->value;
        return true;
    }
    case TE_CAST:
        if (tir_dtype_is_float(e->dtype) || e->u.cast.bits) return false;
        return eval(m, e->u.cast.a, out);
    case TE_SELECT:
        if (!eval(m, e->u.sel.cond, &x)) return false;
        return eval(m, x ? e->u.sel.a : e->u.sel.b, out);
    case TE_UNARY:
        if (!eval(m, e->u.un.a, &x)) return false;
        switch (e->u.un.op) {
        case TU_NEG: if (x == INT64_MIN) return false; *out = -x; return true;
        case TU_NOT: *out = !x; return true;
        case TU_BITNOT: *out = ~x; return true;
        default: return false;
        }
    case TE_BINARY:
        if (!eval(m, e->u.bin.a, &x) || !eval(m, e->u.bin.b, &y)) return false;
        return tir_fold_int(e->u.bin.op, x, y, out) == TIR_FOLD_OK;
    default: return false;
    }
}

static bool holds_mbarrier(const tir_stmt *s) { return tir_stmt_has_kind(s, TS_MBARRIER); }

/* " (ko = 3, j = 0)": the simulated iteration, for messages */
static const char *iteration_text(sim *m) {
    if (!m->nloops) return "";
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    tlc_sb_puts(&sb, " (at ");
    for (int i = 0; i < m->nloops; i++) {
        const tir_var *v = m->loops[i]->u.for_.vars[0];
        const binding *b = find_binding(m, v, false);
        tlc_sb_printf(&sb, "%s%s = %lld", i ? ", " : "", v->name, b ? (long long)b->value : 0LL);
    }
    tlc_sb_puts(&sb, ")");
    const char *r = tlc_arena_strdup(m->S->arena, tlc_sb_cstr(&sb));
    tlc_sb_free(&sb);
    return r;
}

static void unchecked(sim *m, tlc_loc loc, const char *why) {
    tlc_warning(m->S->diag, loc, "the barriers' protocol is not checked from here on: %s", why);
    m->stop = true;
}

static void step_mbarrier(sim *m, const tir_stmt *s) {
    const sema_barrier *bar = m->S->barriers.items[s->u.mbarrier.barrier];
    int64_t i, p;
    if (!eval(m, s->u.mbarrier.index, &i)) {
        unchecked(m, s->loc, "the barrier's index is known only at run time");
        return;
    }
    if (i < 0 || i >= bar->n) {
        tlc_error(m->S->diag, s->loc, "index %lld is out of range for '%s', which holds %d barrier%s%s", (long long)i,
                  bar->name, bar->n, bar->n == 1 ? "" : "s", iteration_text(m));
        m->stop = true;
        return;
    }
    int b = s->u.mbarrier.barrier;
    if (s->u.mbarrier.wait) {
        if (!eval(m, s->u.mbarrier.parity, &p)) {
            unchecked(m, s->loc, "the parity is known only at run time");
            return;
        }
        if (p != 0 && p != 1) {
            tlc_error(m->S->diag, s->loc, "the parity of this wait is %lld%s; it must be 0 or 1", (long long)p,
                      iteration_text(m));
            m->stop = true;
            return;
        }
        /* a wait for parity p returns once the current phase's parity is not p */
        if ((m->phases[b][i] & 1) == p) {
            tlc_error(m->S->diag, s->loc,
                      "this wait never completes when the T.ws scopes run in program order%s: '%s%s%s' has completed "
                      "%lld phase%s (%lld of %lld arrivals in the current one), so a wait for parity %lld needs the "
                      "current phase to complete", iteration_text(m), bar->name, bar->n > 1 ? "[" : "",
                      bar->n > 1 ? tlc_arena_printf(m->S->arena, "%lld]", (long long)i) : "",
                      (long long)m->phases[b][i], m->phases[b][i] == 1 ? "" : "s", (long long)m->arrived[b][i],
                      (long long)bar->counts[i], (long long)p);
            tlc_note(m->S->diag, bar->loc, "tlc runs T.ws scopes in program order: the arrives a wait needs must come "
                     "before it in the program (the producer's scope first)");
            m->stop = true;
        }
        return;
    }
    m->arrived[b][i] += s->u.mbarrier.arrivals;
    if (m->arrived[b][i] > bar->counts[i]) {
        tlc_error(m->S->diag, s->loc, "this arrive by %d threads%s exceeds the %lld arrivals a phase of '%s%s%s' "
                  "expects (%lld arrived before it)", s->u.mbarrier.arrivals, iteration_text(m),
                  (long long)bar->counts[i], bar->name, bar->n > 1 ? "[" : "",
                  bar->n > 1 ? tlc_arena_printf(m->S->arena, "%lld]", (long long)i) : "",
                  (long long)(m->arrived[b][i] - s->u.mbarrier.arrivals));
        tlc_note(m->S->diag, bar->loc, "'%s' is allocated here", bar->name);
        m->stop = true;
        return;
    }
    if (m->arrived[b][i] == bar->counts[i]) {
        m->phases[b][i]++;
        m->arrived[b][i] = 0;
    }
}

static void walk(sim *m, const tir_stmt *s);

static void walk_loop(sim *m, const tir_stmt *s) {
    if (!holds_mbarrier(s->u.for_.body)) return;
    int64_t start, extent, n = SIM_ITERATIONS;
    if (!eval(m, s->u.for_.start[0], &start)) {
        unchecked(m, s->loc, "the loop's start is known only at run time");
        return;
    }
    if (eval(m, s->u.for_.extent[0], &extent) && extent < n) n = extent;
    if (m->nloops == (int)(sizeof m->loops / sizeof *m->loops)) {
        unchecked(m, s->loc, "loops are nested too deeply");
        return;
    }
    binding *b = find_binding(m, s->u.for_.vars[0], true);
    if (!b) {
        m->stop = true;
        return;
    }
    m->loops[m->nloops++] = s;
    for (int64_t i = 0; i < n && !m->stop; i++) {
        b->known = true;
        b->value = start + i * s->u.for_.step;
        walk(m, s->u.for_.body);
    }
    m->nloops--;
    b->known = false;
}

static void walk(sim *m, const tir_stmt *s) {
    if (!s || m->stop) return;
    if (++m->steps > SIM_MAX_STEPS) {
        unchecked(m, s->loc, "the loops holding barriers are too long to simulate");
        return;
    }
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n && !m->stop; i++) walk(m, s->u.seq.stmts[i]);
        return;
    case TS_FOR: walk_loop(m, s); return;
    case TS_IF: {
        if (!holds_mbarrier(s->u.if_.then) && !holds_mbarrier(s->u.if_.els)) return;
        int64_t c;
        if (!eval(m, s->u.if_.cond, &c)) {
            unchecked(m, s->loc, "barriers are used under an 'if' whose condition is known only at run time");
            return;
        }
        walk(m, c ? s->u.if_.then : s->u.if_.els);
        return;
    }
    case TS_LET: case TS_ASSIGN: {
        binding *b = find_binding(m, s->u.let.var, true);
        if (!b) {
            m->stop = true;
            return;
        }
        b->known = eval(m, s->u.let.value, &b->value);
        return;
    }
    case TS_MBARRIER: step_mbarrier(m, s); return;
    default: return;
    }
}

static bool program_order_only(const tir_stmt *s) { return s->kind == TS_MBARRIER || s->kind == TS_SET_MAX_NREG; }

/* s without its mbarrier and set_max_nreg statements (a loop's or
 * branch's body that is one becomes an empty sequence), its T.tma_copy's
 * plain copies */
static tir_stmt *strip(tlc_arena *a, tir_stmt *s) {
    if (!s) return NULL;
    if (program_order_only(s)) return tir_new_stmt(a, TS_SEQ, s->loc);
    switch (s->kind) {
    case TS_SEQ: {
        int n = 0;
        for (int i = 0; i < s->u.seq.n; i++) {
            tir_stmt *x = s->u.seq.stmts[i];
            if (program_order_only(x)) continue;
            s->u.seq.stmts[n++] = strip(a, x);
        }
        s->u.seq.n = n;
        return s;
    }
    case TS_FOR: s->u.for_.body = strip(a, s->u.for_.body); return s;
    case TS_IF:
        s->u.if_.then = strip(a, s->u.if_.then);
        s->u.if_.els = strip(a, s->u.if_.els);
        return s;
    case TS_COPY: s->u.copy.tma_index = NULL; return s; /* T.tma_copy: a copy in program order */
    default: return s;
    }
}

/* A serial loop whose body loads shared buffers between barrier
 * statements: a pipeline written by hand, which runs serially in program
 * order. Said once per kernel, with the way to tlc's own pipelining. */
static bool serial_hand_pipeline(sema *S, const tir_stmt *s) {
    if (!s) return false;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (serial_hand_pipeline(S, s->u.seq.stmts[i])) return true;
        return false;
    case TS_IF: return serial_hand_pipeline(S, s->u.if_.then) || serial_hand_pipeline(S, s->u.if_.els);
    case TS_FOR: {
        const tir_stmt *b = s->u.for_.body;
        bool barriers = false, loads = false;
        for (int i = 0; b->kind == TS_SEQ && i < b->u.seq.n; i++) {
            const tir_stmt *x = b->u.seq.stmts[i];
            barriers |= x->kind == TS_MBARRIER;
            loads |= x->kind == TS_COPY && x->u.copy.src.buf->scope == TIR_SCOPE_GLOBAL &&
                     x->u.copy.dst.buf->scope == TIR_SCOPE_SHARED;
        }
        if (s->u.for_.kind == TIR_FOR_SERIAL && barriers && loads) {
            tlc_warning(S->diag, s->loc, "in program order this loop loads and computes one iteration after the "
                        "other: write it as T.Pipelined(..., num_stages=3), loading whole shared buffers, for tlc to "
                        "overlap them");
            return true;
        }
        return serial_hand_pipeline(S, b);
    }
    default: return false;
    }
}

/* ---------------- the branch on the thread index ---------------- */
/* TileLang's manual warp specialization is also written as a branch on
 * the thread index (`if tid >= 128: producer ... else: consumer ...`), the
 * form the T.ws scopes stand for. Such a branch (its condition reads a
 * thread index, its branches hold barrier statements) runs like the
 * scopes: both branches in program order on all threads. Their statements
 * may not read the thread index then (a located error). */
typedef struct thread_split {
    sema *S;
    bool *derived; /* by var id: a thread index, or a let computed from one */
    bool found;
} thread_split;

static void note_derived(const tir_var *v, void *ctx) {
    thread_split *t = ctx;
    if (t->derived[v->id]) t->found = true;
}

static bool reads_thread(thread_split *t, const tir_expr *e) {
    t->found = false;
    tir_expr_vars(e, note_derived, t);
    return t->found;
}

/* How many of the block's threads take the branch `x OP c` on thread
 * index x (directly or through a let that names it, axis x of a one-axis
 * block), or -1 where that is not the form. */
static int64_t threads_taking(const tir_kernel *k, const tir_expr *c) {
    int64_t b;
    if (c->kind != TE_BINARY || !tir_expr_const_int(c->u.bin.b, &b)) return -1;
    const tir_expr *x = c->u.bin.a;
    if (x->kind == TE_VAR && x->u.var->kind == TV_LET && x->u.var->def) x = x->u.var->def;
    if (x->kind != TE_VAR || x->u.var->kind != TV_THREAD_IDX || k->thread_dims[0] != k->threads) return -1;
    int64_t n = k->threads, r;
    switch (c->u.bin.op) {
    case TB_LT: r = b; break;
    case TB_LE: r = b + 1; break;
    case TB_GE: r = n - b; break;
    case TB_GT: r = n - b - 1; break;
    default: return -1;
    }
    return r < 0 ? 0 : r > n ? n : r;
}

/* The arrives of a branch's threads count those threads (not the block's,
 * as they were made outside T.ws scopes). */
static void count_arrivals(const tir_kernel *k, tir_stmt *s, int64_t threads) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) count_arrivals(k, s->u.seq.stmts[i], threads);
        return;
    case TS_FOR: count_arrivals(k, s->u.for_.body, threads); return;
    case TS_IF:
        count_arrivals(k, s->u.if_.then, threads);
        count_arrivals(k, s->u.if_.els, threads);
        return;
    case TS_MBARRIER:
        if (!s->u.mbarrier.wait && s->u.mbarrier.arrivals == k->threads) s->u.mbarrier.arrivals = (int)threads;
        return;
    default: return;
    }
}

/* The index of the first serial loop holding barrier statements among
 * seq's statements (-1: none). */
static int role_loop(const tir_stmt *seq) {
    for (int i = 0; seq && seq->kind == TS_SEQ && i < seq->u.seq.n; i++) {
        const tir_stmt *x = seq->u.seq.stmts[i];
        if (x->kind == TS_FOR && x->u.for_.kind == TIR_FOR_SERIAL && x->u.for_.nvars == 1 && holds_mbarrier(x))
            return i;
    }
    return -1;
}

static bool is_global_load(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    return s->kind == TS_COPY && s->u.copy.src.buf->scope == TIR_SCOPE_GLOBAL &&
           s->u.copy.dst.buf->scope == TIR_SCOPE_SHARED;
}

static void push_range(tlc_ptrvec *v, const tir_stmt *seq, int from, int to) {
    for (int i = from; i < to; i++) tlc_ptrvec_push(v, seq->u.seq.stmts[i]);
}

/* Two roles that each loop over all iterations (a producer's loads, a
 * consumer's compute: `for i in range(n)` in each branch) hold in no
 * program order that runs one role whole before the other: the consumer's
 * first wait needs loads the producer makes only after waiting for the
 * consumer. Their loops are fused when they have the same bounds: each
 * role's statements before its loop, then per iteration the producer's
 * body (the loop that loads shared buffers from global memory, else the
 * first branch's) and the other's (its loop variable a let of the fused
 * one), then what follows each loop. One order the barriers may allow;
 * the simulation checks it. NULL where the branches are not of that form. */
static tir_stmt *fuse_role_loops(sema *S, tir_stmt *first, tir_stmt *second, tlc_loc loc) {
    int a = role_loop(first), b = role_loop(second);
    if (a < 0 || b < 0) return NULL;
    if (!tir_stmt_any(first->u.seq.stmts[a], is_global_load, NULL) &&
        tir_stmt_any(second->u.seq.stmts[b], is_global_load, NULL)) {
        tir_stmt *t = first;
        first = second;
        second = t;
        int i = a;
        a = b;
        b = i;
    }
    tir_stmt *la = first->u.seq.stmts[a], *lb = second->u.seq.stmts[b];
    if (la->u.for_.step != lb->u.for_.step || !tir_expr_equal(la->u.for_.start[0], lb->u.for_.start[0]) ||
        !tir_expr_equal(la->u.for_.extent[0], lb->u.for_.extent[0]))
        return NULL;
    /* the second loop's variable: a let holding the first's */
    tir_var *vb = lb->u.for_.vars[0];
    vb->kind = TV_LET;
    vb->assigned_once = true;
    vb->def = tir_var_ref(S->arena, la->u.for_.vars[0], lb->loc);
    tir_stmt *let = tir_new_stmt(S->arena, TS_LET, lb->loc);
    let->u.let.var = vb;
    let->u.let.value = tir_var_ref(S->arena, la->u.for_.vars[0], lb->loc);
    tlc_ptrvec body = {0}, out = {0};
    tlc_ptrvec_push(&body, la->u.for_.body);
    tlc_ptrvec_push(&body, let);
    tlc_ptrvec_push(&body, lb->u.for_.body);
    tir_stmt *seq = tir_new_stmt(S->arena, TS_SEQ, la->loc);
    seq->u.seq.n = body.len;
    seq->u.seq.stmts = (tir_stmt **)tlc_ptrvec_freeze(&body, S->arena);
    la->u.for_.body = seq;
    push_range(&out, first, 0, a);
    push_range(&out, second, 0, b);
    tlc_ptrvec_push(&out, la);
    push_range(&out, first, a + 1, first->u.seq.n);
    push_range(&out, second, b + 1, second->u.seq.n);
    tir_stmt *r = tir_new_stmt(S->arena, TS_SEQ, loc);
    r->u.seq.n = out.len;
    r->u.seq.stmts = (tir_stmt **)tlc_ptrvec_freeze(&out, S->arena);
    return r;
}

static tir_stmt *split_by_thread(thread_split *t, tir_stmt *s) {
    if (!s) return NULL;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) s->u.seq.stmts[i] = split_by_thread(t, s->u.seq.stmts[i]);
        return s;
    case TS_FOR: s->u.for_.body = split_by_thread(t, s->u.for_.body); return s;
    case TS_LET:
    case TS_ASSIGN:
        if (reads_thread(t, s->u.let.value)) t->derived[s->u.let.var->id] = true;
        return s;
    case TS_IF: {
        s->u.if_.then = split_by_thread(t, s->u.if_.then);
        s->u.if_.els = split_by_thread(t, s->u.if_.els);
        if (!(holds_mbarrier(s->u.if_.then) || holds_mbarrier(s->u.if_.els)) || !reads_thread(t, s->u.if_.cond))
            return s;
        t->found = false;
        tir_stmt_vars(s->u.if_.then, note_derived, t);
        tir_stmt_vars(s->u.if_.els, note_derived, t);
        int64_t taking = threads_taking(t->S->k, s->u.if_.cond);
        if (t->found)
            tlc_error(t->S->diag, s->loc, "this branch on the thread index splits the warpgroups (TileLang's manual "
                      "warp specialization), which tlc runs in program order on all threads, as T.ws scopes: its "
                      "statements cannot use the thread index");
        else if (taking < 0)
            tlc_error(t->S->diag, s->loc, "this branch on the thread index holds barrier statements (TileLang's "
                      "manual warp specialization): tlc takes it in the form 'tid < N' (or <=, >, >=) on the "
                      "thread index of a one-axis block, to count the threads that arrive in each branch");
        count_arrivals(t->S->k, s->u.if_.then, taking);
        count_arrivals(t->S->k, s->u.if_.els, t->S->k->threads - taking);
        tir_stmt *fused = fuse_role_loops(t->S, s->u.if_.then, s->u.if_.els, s->loc);
        if (fused) return fused;
        tir_stmt *seq = tir_new_stmt(t->S->arena, TS_SEQ, s->loc);
        seq->u.seq.stmts = TLC_NEW_ARRAY(t->S->arena, tir_stmt *, 2);
        seq->u.seq.stmts[seq->u.seq.n++] = s->u.if_.then;
        if (s->u.if_.els) seq->u.seq.stmts[seq->u.seq.n++] = s->u.if_.els;
        return seq;
    }
    default: return s;
    }
}

/* After the split: whether anything but a let of a thread-derived value
 * reads one (else the kernel is no longer thread-indexed). */
static bool reads_derived(thread_split *t, const tir_stmt *s) {
    if (!s) return false;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (reads_derived(t, s->u.seq.stmts[i])) return true;
        return false;
    case TS_LET:
    case TS_ASSIGN: return !t->derived[s->u.let.var->id] && reads_thread(t, s->u.let.value);
    case TS_FOR:
    case TS_IF:
        t->found = false;
        for (int i = 0; s->kind == TS_FOR && i < s->u.for_.nvars; i++)
            if (reads_thread(t, s->u.for_.start[i]) || reads_thread(t, s->u.for_.extent[i])) return true;
        if (s->kind == TS_IF && reads_thread(t, s->u.if_.cond)) return true;
        return reads_derived(t, s->kind == TS_FOR ? s->u.for_.body : s->u.if_.then) ||
               (s->kind == TS_IF && reads_derived(t, s->u.if_.els));
    default:
        t->found = false;
        tir_stmt_vars(s, note_derived, t);
        return t->found;
    }
}

static void split_thread_branches(sema *S, tir_kernel *k) {
    if (!k->thread_indexed) return;
    thread_split t = {.S = S, .derived = TLC_NEW_ARRAY(S->arena, bool, (size_t)k->nvars + 1)};
    for (int i = 0; i < 3; i++)
        if (k->thread_idx[i]) t.derived[k->thread_idx[i]->id] = true;
    k->body = split_by_thread(&t, k->body);
    k->thread_indexed = reads_derived(&t, k->body);
}

/* tir_stmt_any visitor: a warning at every set_max_nreg (ctx: the sema),
 * never a match, so that it visits them all. */
static bool warn_set_max_nreg(const tir_stmt *s, const void *ctx) {
    const sema *S = ctx;
    if (s->kind == TS_SET_MAX_NREG)
        tlc_warning(S->diag, s->loc, "'T.set_max_nreg' is ignored: tlc sets the registers of the warpgroups it "
                    "specializes (it keeps them where the thread ranges run as written, docs/language.md 11.9)");
    return false;
}

/* The kernel's ranges run at the same time: its barriers become the
 * kernel's mbarriers, in the order they were allocated. */
static void keep_barriers(sema *S, tir_kernel *k) {
    if (S->ws_scopes) {
        tlc_error(S->diag, S->hand_async_loc, "TileLang's asynchronous warpgroup operations run only where the "
                  "kernel's thread ranges run as written, on a branch on the thread index (if tid < 128: ...); tlc "
                  "runs T.ws scopes in program order");
        tlc_note(S->diag, S->ws_seen_loc, "the kernel's first T.ws scope or barrier statement");
        return;
    }
    int n = S->barriers.len, total = 0;
    k->mbarriers = TLC_NEW_ARRAY(S->arena, struct tir_mbarrier_group, (size_t)n + 1);
    for (int i = 0; i < n; i++) {
        const sema_barrier *b = S->barriers.items[i];
        k->mbarriers[i] = (struct tir_mbarrier_group){b->name, total, b->n, b->counts};
        total += b->n;
    }
    k->nmbarrier_groups = n;
    k->nmbarriers = total;
    /* what per-thread code (outside the ranges' tile work) does to shared
     * memory, the program's mbarriers order (TL_DISABLE_THREAD_STORAGE_SYNC's
     * meaning; tlc still places each range's own barriers) */
    k->program_syncs_shared = true;
}

void sema_manual_ws_finish(sema *S) {
    tir_kernel *k = S->k;
    if (k && k->body && S->hand_async) {
        keep_barriers(S, k);
    } else if (S->ws_seen && k && k->body) {
        tlc_warning(S->diag, S->ws_seen_loc, "this kernel's T.ws scopes and barriers are TileLang's manual warp "
                    "specialization: tlc runs the scopes in program order on all %d threads, checks the barriers "
                    "against that order and schedules the kernel itself", k->threads);
        split_thread_branches(S, k);
        sim m = {.S = S};
        int nb = S->barriers.len;
        m.phases = TLC_NEW_ARRAY(S->arena, int64_t *, (size_t)nb + 1);
        m.arrived = TLC_NEW_ARRAY(S->arena, int64_t *, (size_t)nb + 1);
        for (int i = 0; i < nb; i++) {
            const sema_barrier *bar = S->barriers.items[i];
            m.phases[i] = TLC_NEW_ARRAY(S->arena, int64_t, (size_t)bar->n);
            m.arrived[i] = TLC_NEW_ARRAY(S->arena, int64_t, (size_t)bar->n);
        }
        walk(&m, k->body);
        serial_hand_pipeline(S, k->body);
        for (int i = 0; i < m.bindings.len; i++) free(m.bindings.items[i]);
        tlc_ptrvec_free(&m.bindings);
        tir_stmt_any(k->body, warn_set_max_nreg, S);
        k->body = strip(S->arena, k->body);
    } else if (k && k->body && tir_stmt_has_kind(k->body, TS_SET_MAX_NREG)) {
        tir_stmt_any(k->body, warn_set_max_nreg, S);
        k->body = strip(S->arena, k->body);
    }
    tlc_ptrvec_free(&S->barriers);
    S->ws_seen = false;
    S->ws_scopes = false;
    S->hand_async = false;
    S->ws_threads = 0;
    S->unrolled_bodies = 0;
}
