/* Thread ranges (docs/language.md 9.1): the intervals of a block's threads
 * that a branch on the thread index gives tile work to (`if tid < 32: ...
 * else: ...`), each branch's ops laid out over its own threads with a
 * named barrier of its own. sema_thread_varying.c decides where a branch
 * splits the threads; this file reads the condition's interval, makes one
 * tir_thread_range per interval (its barrier id clear of the program's
 * own), marks the statements of a branch and checks that every fragment
 * belongs to one range. */
#include <stdio.h>
#include "sema_internal.h"
#include "../ir/tir_access.h"

/* The thread index behind e (directly, or through a let naming it). */
static bool is_thread_index(const tir_kernel *k, const tir_expr *e) {
    if (e->kind == TE_VAR && e->u.var->kind == TV_LET && e->u.var->def) e = e->u.var->def;
    return e->kind == TE_VAR && e->u.var->kind == TV_THREAD_IDX && e->u.var->axis == 0 &&
           k->thread_dims[0] == k->threads;
}

bool sema_thread_range_of(const tir_kernel *k, const tir_expr *c, int lo, int hi, int *a, int *b) {
    if (c->kind != TE_BINARY) return false;
    if (c->u.bin.op == TB_AND) {
        int a1, b1, a2, b2;
        if (!sema_thread_range_of(k, c->u.bin.a, lo, hi, &a1, &b1) ||
            !sema_thread_range_of(k, c->u.bin.b, lo, hi, &a2, &b2))
            return false;
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

const tir_thread_range *sema_thread_range(sema *S, sema_thread_ranges *t, const tir_stmt *s, int lo, int hi) {
    if (lo >= hi) return NULL;
    if (lo % 32 || hi % 32) {
        tlc_error(S->diag, s->loc, "this branch on the thread index gives tile work to threads [%d, %d), which is "
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
        tlc_error(S->diag, s->loc, "too many distinct ranges of threads with tile work: tlc gives each a named "
                  "barrier of its own (ids 6..15, those the program's sync_threads leave free)");
        return NULL;
    }
    t->barriers_used |= 1u << id;
    tir_thread_range *r = TLC_NEW(S->arena, tir_thread_range);
    r->lo = lo;
    r->count = hi - lo;
    r->barrier = id;
    tlc_ptrvec_push(&t->ranges, r);
    return r;
}


void sema_set_thread_range(tir_stmt *s, const tir_thread_range *r) {
    if (!s) return;
    s->range = r;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) sema_set_thread_range(s->u.seq.stmts[i], r);
        return;
    case TS_FOR: sema_set_thread_range(s->u.for_.body, r); return;
    case TS_IF:
        sema_set_thread_range(s->u.if_.then, r);
        sema_set_thread_range(s->u.if_.els, r);
        return;
    default: return;
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
    sema *S;
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
        range_text(u->S->k, b->range, x, sizeof x);
        range_text(u->S->k, r, y, sizeof y);
        tlc_error(u->S->diag, u->s->loc, "fragment '%s' is laid out over %s, where it is used first, but this "
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

void sema_check_range_fragments(sema *S) {
    range_uses u = {.S = S, .seen = TLC_NEW_ARRAY(S->arena, bool, (size_t)S->buffers.len + 1)};
    range_walk(&u, S->k->body);
}

void sema_thread_ranges_init(sema_thread_ranges *t, const tir_kernel *k) {
    *t = (sema_thread_ranges){.barriers_used = program_barrier_ids(k->body)};
}

void sema_thread_ranges_free(sema_thread_ranges *t) { tlc_ptrvec_free(&t->ranges); }

