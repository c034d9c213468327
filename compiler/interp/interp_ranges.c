/* Thread ranges that run at the same time (TileLang's hand-pipelined
 * warpgroups, docs/language.md 11.9) in the interpreter.
 *
 * A block's threads are divided into strands: a strand is a set of threads
 * that run in lockstep (interp_threads.c runs the statements), and a
 * condition on which its threads part ways, with a barrier wait inside,
 * makes one strand of each side; the strand that reached it waits until
 * both have finished. A strand runs until it reaches a barrier wait whose
 * phase has not completed, or a T.wait_wgmma (where it lets the others go
 * first); then the next strand runs, in a fixed round, so that a run is one
 * interleaving the GPU could take (a deterministic one).
 * When every unfinished strand waits, the kernel would hang on the GPU:
 * the run stops with an error naming each wait. Under opts.reverse each
 * round runs the strands last to first: another interleaving, so that a
 * result that depends on one (a range reading what another writes with no
 * barrier between) differs between the two orders.
 *
 * Everything a barrier orders completes at once here: a cp.async or TMA
 * copy when it is issued (so a TMA copy's bytes complete what its
 * expect_tx adds, and neither is tracked), a wgmma's result too, though
 * its group stays in flight for interp_wgmma.c's checks until a
 * T.wait_wgmma of the strand retires it. The mbarriers
 * count arrivals and completed phases, as the hardware does: a wait for
 * parity p returns once the phase of that parity has completed, that is,
 * when the number of completed phases has the other parity.
 *
 * Only the statements on the way to a wait are resumable (a sequence, a
 * loop, a condition, the wait itself or T.wait_wgmma); everything else
 * runs whole through interp_threads.c. Each strand has its own condition
 * masks and per-level values, since strands at the same depth would
 * otherwise share them.
 * Fragments stay one copy a block: sema gives each fragment to one range
 * of threads, so no two strands share one. */
#include <stdio.h>
#include <stdlib.h>
#include "interp/interp_internal.h"

typedef struct frame {
    const tir_stmt *s;
    int level;
    bool entered;        /* a loop's bounds or a condition evaluated */
    int64_t i;           /* a sequence's next statement; a loop's next iteration */
    int64_t start, ext;  /* a loop's bounds */
} frame;

typedef struct strand {
    frame *frames;
    int nframes, cap;
    bool *masks;         /* levels x nthreads, as tlc_interp.masks */
    int64_t *lv_a, *lv_b;
    int parent;          /* the strand waiting for this one; -1 for the block's */
    int children;        /* strands it waits for */
    const tir_stmt *waiting; /* the barrier wait it is stopped at */
    bool done;
} strand;

struct tlc_interp_ranges {
    strand *v;
    int n, cap;
    bool *masks;         /* the interpreter's own masks and values, while a strand's are in use */
    int64_t *lv_a, *lv_b;
    bool *taken;         /* nthreads: a condition's value in each thread (fork) */
    int64_t *pending;    /* per mbarrier: arrivals missing in its current phase */
    int64_t *phases;     /* per mbarrier: phases completed */
    /* named barriers (sync_threads(id, count)) met by several strands:
     * threads arrived in the current round, rounds completed */
    int64_t named_arrived[16], named_rounds[16];
};

static void free_strands(tlc_interp_ranges *r) {
    for (int i = 0; i < r->n; i++) {
        free(r->v[i].frames);
        free(r->v[i].masks);
        free(r->v[i].lv_a);
        free(r->v[i].lv_b);
    }
    r->n = 0;
}

void tlc_interp_ranges_restore(tlc_interp *it) {
    tlc_interp_ranges *r = it->ranges;
    if (!r) return;
    it->masks = r->masks;
    it->lv_a = r->lv_a;
    it->lv_b = r->lv_b;
    it->wgmma_owner = -1;
}

void tlc_interp_ranges_free(tlc_interp *it) {
    tlc_interp_ranges *r = it->ranges;
    if (!r) return;
    tlc_interp_ranges_restore(it);
    free_strands(r);
    free(r->v);
    free(r->pending);
    free(r->phases);
    free(r->taken);
    free(r);
    it->ranges = NULL;
}

/* A barrier wait, a named barrier (several strands may meet there), or
 * T.wait_wgmma: there the strand lets the others run first (the warpgroup
 * waits for its tensor cores on the GPU too), so that a range that releases
 * a buffer before its wgmmas reading it retire is caught writing it
 * (interp_wgmma.c). */
static bool is_wait(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    return (s->kind == TS_MBARRIER && s->u.mbarrier.wait) || s->kind == TS_WAIT_WGMMA ||
           (s->kind == TS_SYNC_THREADS && s->u.sync.count > 0);
}

static bool has_wait(const tir_stmt *s) { return s && tir_stmt_any(s, is_wait, NULL); }

static bool *mask_at(tlc_interp *it, int level) { return it->masks + (size_t)level * (size_t)it->nthreads; }

/* A new strand (its masks all false); an index, since the array moves. */
static int new_strand(tlc_interp *it, int parent) {
    tlc_interp_ranges *r = it->ranges;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 8;
        r->v = tlc_interp_xrealloc(r->v, (size_t)r->cap, sizeof *r->v);
    }
    size_t cells = (size_t)it->levels * (size_t)it->nthreads;
    strand *s = &r->v[r->n];
    *s = (strand){.parent = parent};
    s->masks = tlc_interp_xcalloc(cells, sizeof *s->masks);
    s->lv_a = tlc_interp_xcalloc(cells, sizeof *s->lv_a);
    s->lv_b = tlc_interp_xcalloc(cells, sizeof *s->lv_b);
    return r->n++;
}

static void push(tlc_interp *it, int si, const tir_stmt *s, int level) {
    strand *st = &it->ranges->v[si];
    if (st->nframes == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 8;
        st->frames = tlc_interp_xrealloc(st->frames, (size_t)st->cap, sizeof *st->frames);
    }
    st->frames[st->nframes++] = (frame){.s = s, .level = level};
}

static void use_strand(tlc_interp *it, int si) {
    const strand *st = &it->ranges->v[si];
    it->masks = st->masks;
    it->lv_a = st->lv_a;
    it->lv_b = st->lv_b;
    it->wgmma_owner = si; /* (its T.wgmma_gemm groups, interp_wgmma.c) */
}

/* The mbarrier a barrier statement names (its index in the group checked). */
static int64_t barrier_of(tlc_interp *it, const tir_stmt *s) {
    const struct tir_mbarrier_group *g = &it->k->mbarriers[s->u.mbarrier.barrier];
    int64_t i = tlc_interp_eval_i(it, s->u.mbarrier.index);
    if (i < 0 || i >= g->n)
        tlc_interp_fail(it, s->loc, "barrier index %lld is outside '%s', which has %d barrier%s", (long long)i,
                        g->name, g->n, g->n == 1 ? "" : "s");
    return g->first + i;
}

void tlc_interp_mbarrier_arrive(tlc_interp *it, const tir_stmt *s) {
    tlc_interp_ranges *r = it->ranges;
    if (!r) tlc_interp_fail(it, s->loc, "internal error: a barrier arrival outside a run of thread ranges");
    const struct tir_mbarrier_group *g = &it->k->mbarriers[s->u.mbarrier.barrier];
    int64_t b = barrier_of(it, s);
    if (--r->pending[b] == 0) { /* the phase completes; the next one expects the count again */
        r->phases[b]++;
        r->pending[b] = g->counts[b - g->first];
    }
}

/* Whether barrier wait s (in the current thread's values) would return. */
static bool wait_passes(tlc_interp *it, const tir_stmt *s) {
    int64_t b = barrier_of(it, s), parity = tlc_interp_eval_i(it, s->u.mbarrier.parity);
    return (it->ranges->phases[b] & 1) != (parity & 1);
}

void tlc_interp_mbarrier_check_wait(tlc_interp *it, const tir_stmt *s) {
    if (!it->ranges || !wait_passes(it, s))
        tlc_interp_fail(it, s->loc, "internal error: a barrier wait outside the interpreter's thread ranges");
}

/* A condition whose threads part ways around a wait: a strand for each side. */
static void fork(tlc_interp *it, int si, const tir_stmt *s, int level) {
    int n = it->nthreads;
    const bool *mask = mask_at(it, level);
    bool *taken = it->ranges->taken;
    for (int t = 0; t < n; t++) {
        if (!mask[t]) continue;
        tlc_interp_use_thread(it, t);
        taken[t] = tlc_interp_truthy(it, s->u.if_.cond);
    }
    for (int branch = 1; branch >= 0; branch--) {
        const tir_stmt *body = branch ? s->u.if_.then : s->u.if_.els;
        bool any = false;
        for (int t = 0; t < n && body; t++) any |= mask[t] && taken[t] == branch;
        if (!any) continue;
        int c = new_strand(it, si); /* (moves the strands, not the masks) */
        strand *child = &it->ranges->v[c];
        for (int t = 0; t < n; t++) child->masks[(size_t)(level + 1) * (size_t)n + (size_t)t] = mask[t] && taken[t] == branch;
        push(it, c, body, level + 1);
        it->ranges->v[si].children++;
    }
}

/* Runs strand si until it waits, finishes or starts strands of its own;
 * whether it got anywhere. */
static bool advance(tlc_interp *it, int si) {
    tlc_interp_ranges *r = it->ranges;
    bool moved = false;
    use_strand(it, si);
    for (;;) {
        strand *st = &r->v[si];
        if (st->children) return moved;
        if (!st->nframes) {
            st->done = true;
            if (st->parent >= 0) r->v[st->parent].children--;
            return true;
        }
        frame *f = &st->frames[st->nframes - 1];
        const tir_stmt *s = f->s;
        const bool *mask = mask_at(it, f->level);
        it->active = mask;
        switch (s->kind) {
        case TS_SEQ:
            if (f->i == s->u.seq.n) {
                st->nframes--;
                continue;
            }
            s = s->u.seq.stmts[f->i++];
            if (has_wait(s)) push(it, si, s, f->level);
            else tlc_interp_threads_exec(it, s, f->level);
            moved = true;
            continue;
        case TS_FOR: {
            const tir_var *v = s->u.for_.vars[0];
            int first = tlc_interp_first_thread(it, mask);
            if (!f->entered) {
                if (s->u.for_.nvars != 1 || s->u.for_.kind == TIR_FOR_PARALLEL)
                    tlc_interp_fail(it, s->loc, "a barrier wait inside a loop of this kind is not supported here");
                tlc_interp_use_thread(it, first);
                f->start = tlc_interp_eval_i(it, s->u.for_.start[0]);
                f->ext = tlc_interp_eval_i(it, s->u.for_.extent[0]);
                for (int t = first + 1; t < it->nthreads && s->u.for_.thread_varying; t++) {
                    if (!mask[t]) continue;
                    tlc_interp_use_thread(it, t);
                    if (tlc_interp_eval_i(it, s->u.for_.start[0]) != f->start ||
                        tlc_interp_eval_i(it, s->u.for_.extent[0]) != f->ext)
                        tlc_interp_fail(it, s->loc, "threads %d and %d of a range run this loop, which holds a barrier "
                                        "wait, over different iterations; the interpreter runs a range's threads "
                                        "together", first, t);
                }
                f->entered = true;
            }
            int64_t step = s->u.for_.step ? s->u.for_.step : 1;
            if (f->i == f->ext) {
                st->nframes--;
                continue;
            }
            for (int t = 0; t < it->nthreads; t++)
                if (mask[t]) tlc_interp_set_thread_var(it, v, t, f->start + f->i * step);
            if (s->u.for_.cond) {
                tlc_interp_use_thread(it, first);
                if (!tlc_interp_loop_goes_on(it, s, f->i)) {
                    st->nframes--;
                    continue;
                }
            }
            f->i++;
            tlc_interp_step(it, s->loc);
            push(it, si, s->u.for_.body, f->level);
            moved = true;
            continue;
        }
        case TS_IF:
            if (f->entered) {
                st->nframes--;
                continue;
            }
            f->entered = true;
            if (s->u.if_.thread_varying) {
                fork(it, si, s, f->level);
                moved = true;
                continue;
            } else {
                tlc_interp_use_thread(it, tlc_interp_first_thread(it, mask));
                const tir_stmt *body = tlc_interp_truthy(it, s->u.if_.cond) ? s->u.if_.then : s->u.if_.els;
                if (body) push(it, si, body, f->level);
            }
            moved = true;
            continue;
        case TS_SYNC_THREADS: { /* a named barrier: its count of threads, from any strands, meet */
            int id = s->u.sync.id, here = 0;
            for (int t = 0; t < it->nthreads; t++) here += mask[t];
            if (!f->entered && here < s->u.sync.count) { /* (a range that holds them all meets itself) */
                f->entered = true;
                f->i = r->named_rounds[id];
                r->named_arrived[id] += here;
                if (r->named_arrived[id] > s->u.sync.count)
                    tlc_interp_fail(it, s->loc, "named barrier %d is for %d threads, but %lld have arrived at it",
                                    id, s->u.sync.count, (long long)r->named_arrived[id]);
                if (r->named_arrived[id] < s->u.sync.count) {
                    st->waiting = s;
                    return true; /* (it arrived) */
                }
                r->named_arrived[id] = 0; /* the last to arrive: the round completes */
                r->named_rounds[id]++;
            } else if (f->entered && r->named_rounds[id] == f->i) {
                return moved;
            }
            st->waiting = NULL;
            st->nframes--;
            moved = true;
            continue;
        }
        case TS_WAIT_WGMMA:
            if (!f->entered) { /* the others first */
                f->entered = true;
                return true;
            }
            tlc_interp_wgmma_wait(it, s->u.wait_wgmma.pending);
            st->nframes--;
            moved = true;
            continue;
        case TS_MBARRIER:
            tlc_interp_use_thread(it, tlc_interp_first_thread(it, mask));
            if (!wait_passes(it, s)) {
                st->waiting = s;
                return moved;
            }
            st->waiting = NULL;
            st->nframes--;
            moved = true;
            continue;
        default:
            tlc_interp_fail(it, s->loc, "internal error: a statement of kind %d on the way to a barrier wait",
                            (int)s->kind);
        }
    }
}

/* What strand st waits for: its threads, the barrier, the parity, the
 * barrier's completed phases and the arrivals its phase still misses. */
static void describe_wait(tlc_interp *it, int si, char *out, size_t cap) {
    tlc_interp_ranges *r = it->ranges;
    const strand *st = &r->v[si];
    use_strand(it, si);
    const bool *mask = mask_at(it, st->frames[st->nframes - 1].level);
    int lo = tlc_interp_first_thread(it, mask), hi = lo;
    for (int t = lo; t < it->nthreads; t++)
        if (mask[t]) hi = t;
    tlc_interp_use_thread(it, lo);
    const tir_stmt *s = st->waiting;
    if (s->kind == TS_SYNC_THREADS) {
        snprintf(out, cap, "threads %d-%d wait here at named barrier %d (%lld of its %d threads have arrived)", lo, hi,
                 s->u.sync.id, (long long)r->named_arrived[s->u.sync.id], s->u.sync.count);
        return;
    }
    int64_t b = barrier_of(it, s), parity = tlc_interp_eval_i(it, s->u.mbarrier.parity);
    const struct tir_mbarrier_group *g = &it->k->mbarriers[s->u.mbarrier.barrier];
    snprintf(out, cap, "threads %d-%d wait here for '%s'[%lld] (phase parity %lld; %lld phases completed, %lld "
             "arrivals missing in the current one)", lo, hi, g->name, (long long)(b - g->first), (long long)parity,
             (long long)r->phases[b], (long long)r->pending[b]);
}

/* Every unfinished strand waits: an error at the first wait, a note at each
 * other one. */
static noreturn void deadlock(tlc_interp *it) {
    tlc_interp_ranges *r = it->ranges;
    bool first = true;
    for (int i = 0; i < r->n; i++) {
        const strand *st = &r->v[i];
        if (st->done || st->children || !st->waiting) continue;
        char what[512];
        describe_wait(it, i, what, sizeof what);
        if (first)
            tlc_error(&it->diag, st->waiting->loc, "every thread range of the block waits on a barrier: the kernel "
                      "would hang here; %s", what);
        else
            tlc_note(&it->diag, st->waiting->loc, "%s", what);
        first = false;
    }
    if (first) tlc_error(&it->diag, it->k->loc, "internal error: thread ranges stopped with no wait");
    longjmp(it->jb, 1);
}

void tlc_interp_ranges_run(tlc_interp *it, const tir_stmt *body) {
    const tir_kernel *k = it->k;
    if (!it->ranges) {
        it->ranges = tlc_interp_xcalloc(1, sizeof *it->ranges);
        it->ranges->pending = tlc_interp_xcalloc((size_t)k->nmbarriers, sizeof(int64_t));
        it->ranges->phases = tlc_interp_xcalloc((size_t)k->nmbarriers, sizeof(int64_t));
        it->ranges->taken = tlc_interp_xcalloc((size_t)it->nthreads, sizeof(bool));
        it->ranges->masks = it->masks;
        it->ranges->lv_a = it->lv_a;
        it->ranges->lv_b = it->lv_b;
    }
    tlc_interp_ranges *r = it->ranges;
    tlc_interp_ranges_restore(it);
    free_strands(r);
    for (int i = 0; i < 16; i++) r->named_arrived[i] = r->named_rounds[i] = 0;
    for (int g = 0; g < k->nmbarrier_groups; g++)
        for (int i = 0; i < k->mbarriers[g].n; i++) {
            r->pending[k->mbarriers[g].first + i] = k->mbarriers[g].counts[i];
            r->phases[k->mbarriers[g].first + i] = 0;
        }
    int root = new_strand(it, -1);
    for (int t = 0; t < it->nthreads; t++) r->v[root].masks[t] = true;
    push(it, root, body, 0);
    while (!r->v[root].done) {
        /* a round: first strand to last, or (opts.reverse) last to first;
         * strands started in a round run from the next one */
        bool moved = false;
        for (int j = 0, n = r->n; j < n; j++) {
            int i = it->opts.reverse ? n - 1 - j : j;
            if (!r->v[i].done) moved |= advance(it, i);
        }
        if (!moved) deadlock(it);
    }
    tlc_interp_ranges_restore(it);
}
