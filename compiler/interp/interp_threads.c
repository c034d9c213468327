/* Thread-indexed kernels in the interpreter (docs/language.md, "Thread-
 * indexed code"): a block's threads run in lockstep, statement by
 * statement, each with its own variables and its own copy of the per-
 * thread buffers (alloc_local, alloc_var).
 *
 * A condition or serial loop whose threads part ways (thread_varying,
 * marked by sema) runs its body for the threads that take it. A tile op or
 * Parallel loop is the block's work and runs once, in thread 0's values
 * (sema keeps such work out of parted code and away from per-thread
 * values, so every thread holds the same ones), and what it writes into
 * per-thread buffers is given to every thread; the ops each thread runs by
 * itself (tir_stmt.per_thread) run once per thread. An element store runs
 * in two phases, every thread's address and value first, so a statement
 * reads what earlier statements wrote, as across the barriers tlc places
 * on the GPU. */
#include <stdlib.h>
#include <string.h>
#include "interp/interp_internal.h"
#include "ir/tir_access.h"
#include "ir/tir_op.h"

/* Nesting depth of conditions and loops in s. */
static int depth(const tir_stmt *s) {
    if (!s) return 0;
    switch (s->kind) {
    case TS_SEQ: {
        int d = 0;
        for (int i = 0; i < s->u.seq.n; i++) {
            int x = depth(s->u.seq.stmts[i]);
            if (x > d) d = x;
        }
        return d;
    }
    case TS_IF: {
        int a = depth(s->u.if_.then), b = depth(s->u.if_.els);
        return 1 + (a > b ? a : b);
    }
    case TS_FOR: return 1 + depth(s->u.for_.body);
    default: return 0;
    }
}

void tlc_interp_threads_create(tlc_interp *it) {
    const tir_kernel *k = it->k;
    size_t n = (size_t)k->threads;
    it->nthreads = k->threads;
    it->tvars = tlc_interp_xcalloc(n * (size_t)(k->nvars ? k->nvars : 1), sizeof *it->tvars);
    it->vars = it->tvars;
    it->levels = depth(k->body) + 2;
    it->masks = tlc_interp_xcalloc(n * (size_t)it->levels, sizeof *it->masks);
    it->lv_a = tlc_interp_xcalloc(n * (size_t)it->levels, sizeof *it->lv_a);
    it->lv_b = tlc_interp_xcalloc(n * (size_t)it->levels, sizeof *it->lv_b);
    it->st_off = tlc_interp_xcalloc(n, sizeof *it->st_off);
    it->st_val = tlc_interp_xcalloc(n, sizeof *it->st_val);
}

void tlc_interp_threads_destroy(tlc_interp *it) {
    free(it->tvars);
    free(it->masks);
    free(it->lv_a);
    free(it->lv_b);
    free(it->st_off);
    free(it->st_val);
}

void tlc_interp_use_thread(tlc_interp *it, int t) {
    const tir_kernel *k = it->k;
    it->thread = t;
    it->vars = it->tvars + (size_t)t * (size_t)k->nvars;
    for (int i = 0; i < k->nbuffers; i++) {
        ibuf *ib = &it->bufs[i];
        if (ib->per_thread) ib->data = ib->base + (size_t)t * (size_t)ib->elems;
    }
}

int tlc_interp_first_thread(const tlc_interp *it, const bool *mask) {
    for (int t = 0; t < it->nthreads; t++)
        if (mask[t]) return t;
    return 0;
}

static void run(tlc_interp *it, const tir_stmt *s, int level);

/* The block's work (or a thread range's, in its branch), run once in its
 * first thread's values; what it wrote into per-thread buffers is every
 * one of its threads'. */
static void run_block_work(tlc_interp *it, const tir_stmt *s, const bool *mask) {
    int lo = s->range ? s->range->lo : 0, hi = s->range ? s->range->lo + s->range->count : it->nthreads;
    for (int t = 0; t < it->nthreads; t++)
        if (mask[t] != (t >= lo && t < hi))
            tlc_interp_fail(it, s->loc, "internal error: the block's work under a condition that differs between "
                            "threads");
    tlc_interp_use_thread(it, lo);
    tlc_interp_exec(it, s);
    const tir_kernel *k = it->k;
    for (int i = 0; i < k->nbuffers; i++) {
        ibuf *ib = &it->bufs[i];
        if (!ib->per_thread || !tir_stmt_writes(s, k->buffers[i])) continue;
        for (int t = lo + 1; t < hi; t++)
            memcpy(ib->base + (size_t)t * (size_t)ib->elems, ib->base + (size_t)lo * (size_t)ib->elems,
                   sizeof(tlc_ival) * (size_t)ib->elems);
    }
}

void tlc_interp_set_thread_var(tlc_interp *it, const tir_var *v, int t, int64_t value) {
    it->tvars[(size_t)t * (size_t)it->k->nvars + (size_t)v->id].i = tir_wrap_int(v->dtype, value);
}

static void run_for(tlc_interp *it, const tir_stmt *s, int level) {
    int n = it->nthreads;
    const bool *mask = it->masks + (size_t)level * (size_t)n;
    if (s->u.for_.kind == TIR_FOR_PARALLEL) {
        run_block_work(it, s, mask);
        return;
    }
    if (s->u.for_.nvars != 1) tlc_interp_fail(it, s->loc, "loop with %d variables is not supported", s->u.for_.nvars);
    const tir_var *v = s->u.for_.vars[0];
    int64_t step = s->u.for_.step ? s->u.for_.step : 1;
    if (!s->u.for_.thread_varying) {
        tlc_interp_use_thread(it, tlc_interp_first_thread(it, mask));
        int64_t start = tlc_interp_eval_i(it, s->u.for_.start[0]), ext = tlc_interp_eval_i(it, s->u.for_.extent[0]);
        int64_t active = 0;
        for (int t = 0; t < n; t++) active += mask[t];
        for (int64_t i = 0; i < ext; i++) {
            for (int t = 0; t < n; t++)
                if (mask[t]) tlc_interp_set_thread_var(it, v, t, start + i * step);
            if (s->u.for_.cond) { /* the same in every thread here */
                tlc_interp_use_thread(it, tlc_interp_first_thread(it, mask));
                if (!tlc_interp_loop_goes_on(it, s, i)) break;
            }
            tlc_interp_steps(it, s->loc, active);
            run(it, s->u.for_.body, level);
        }
        return;
    }
    int64_t *start = it->lv_a + (size_t)level * (size_t)n, *ext = it->lv_b + (size_t)level * (size_t)n, most = 0;
    for (int t = 0; t < n; t++) {
        if (!mask[t]) continue;
        tlc_interp_use_thread(it, t);
        start[t] = tlc_interp_eval_i(it, s->u.for_.start[0]);
        ext[t] = tlc_interp_eval_i(it, s->u.for_.extent[0]);
        if (ext[t] > most) most = ext[t];
    }
    bool *sub = it->masks + (size_t)(level + 1) * (size_t)n;
    for (int64_t i = 0; i < most; i++) {
        int64_t active = 0;
        for (int t = 0; t < n; t++) {
            sub[t] = mask[t] && i < ext[t];
            if (!sub[t]) continue;
            tlc_interp_set_thread_var(it, v, t, start[t] + i * step);
            if (s->u.for_.cond) {
                tlc_interp_use_thread(it, t);
                if (!tlc_interp_loop_goes_on(it, s, i)) ext[t] = i, sub[t] = false; /* this thread's loop ended */
            }
            active += sub[t];
        }
        if (!active) break;
        tlc_interp_steps(it, s->loc, active);
        run(it, s->u.for_.body, level + 1);
    }
}

static void run_if(tlc_interp *it, const tir_stmt *s, int level) {
    int n = it->nthreads;
    const bool *mask = it->masks + (size_t)level * (size_t)n;
    if (!s->u.if_.thread_varying) {
        tlc_interp_use_thread(it, tlc_interp_first_thread(it, mask));
        run(it, tlc_interp_truthy(it, s->u.if_.cond) ? s->u.if_.then : s->u.if_.els, level);
        return;
    }
    int64_t *taken = it->lv_a + (size_t)level * (size_t)n;
    for (int t = 0; t < n; t++) {
        if (!mask[t]) continue;
        tlc_interp_use_thread(it, t);
        taken[t] = tlc_interp_truthy(it, s->u.if_.cond);
    }
    bool *sub = it->masks + (size_t)(level + 1) * (size_t)n;
    /* then, else; under opts.reverse else first: on the GPU the two sides
     * run in no set order, so a result that depends on it is a race */
    for (int k = 0; k < 2; k++) {
        int branch = it->opts.reverse ? k : 1 - k;
        const tir_stmt *body = branch ? s->u.if_.then : s->u.if_.els;
        if (!body) continue;
        bool any = false;
        for (int t = 0; t < n; t++) any |= sub[t] = mask[t] && taken[t] == branch;
        if (any) run(it, body, level + 1);
    }
}

/* A let or assignment: every thread's value first (a shuffle reads
 * another thread's variables as they were before the statement). */
static void run_assign(tlc_interp *it, const tir_stmt *s, const bool *mask) {
    const tir_var *v = s->u.let.var;
    for (int t = 0; t < it->nthreads; t++) {
        if (!mask[t]) continue;
        tlc_interp_use_thread(it, t);
        it->st_val[t] = tlc_interp_convert(tlc_interp_eval(it, s->u.let.value), s->u.let.value->dtype, v->dtype);
    }
    for (int t = 0; t < it->nthreads; t++)
        if (mask[t]) it->tvars[(size_t)t * (size_t)it->k->nvars + (size_t)v->id] = it->st_val[t];
}

tlc_ival tlc_interp_shuffle(tlc_interp *it, const tir_expr *e) {
    int t = it->thread, w = e->u.shfl.width;
    if (!it->nthreads || !it->active)
        tlc_interp_fail(it, e->loc, "internal error: a warp shuffle outside thread-indexed code");
    int64_t lane = tlc_interp_eval_i(it, e->u.shfl.lane);
    int laneid = t % 32, seg = laneid & ~(w - 1), j;
    if (e->u.shfl.xor_lanes) {
        j = laneid ^ (int)(lane & 31);
        if (j < seg || j > (seg | (w - 1))) j = laneid; /* outside this thread's part: its own value */
    } else {
        j = seg | (int)(lane & (w - 1));
    }
    int src = t - laneid + j;
    if (src >= it->nthreads || !it->active[src])
        tlc_interp_fail(it, e->loc, "this shuffle in thread %d reads lane %d of its warp (thread %d), which does not "
                        "run the statement", t, j, src);
    tlc_interp_use_thread(it, src);
    tlc_ival v = tlc_interp_eval(it, e->u.shfl.value);
    tlc_interp_use_thread(it, t);
    return v;
}

static void run_store(tlc_interp *it, const tir_stmt *s, const bool *mask) {
    const tir_buffer *b = s->u.store.buf;
    for (int t = 0; t < it->nthreads; t++) {
        if (!mask[t]) continue;
        tlc_interp_use_thread(it, t);
        it->st_off[t] = tlc_interp_offset(it, b, s->u.store.idx, s->loc);
        it->st_val[t] = tlc_interp_convert(tlc_interp_eval(it, s->u.store.value), s->u.store.value->dtype, b->dtype);
    }
    for (int t = 0; t < it->nthreads; t++) {
        if (!mask[t]) continue;
        tlc_interp_use_thread(it, t);
        if (it->wgmma) tlc_interp_wgmma_check_store(it, b, it->st_off[t], s->loc);
        it->bufs[b->id].data[it->st_off[t]] = it->st_val[t];
    }
}

static void run(tlc_interp *it, const tir_stmt *s, int level) {
    if (!s) return;
    int n = it->nthreads;
    const bool *mask = it->masks + (size_t)level * (size_t)n;
    it->active = mask;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) run(it, s->u.seq.stmts[i], level);
        return;
    case TS_IF: run_if(it, s, level); return;
    case TS_FOR: run_for(it, s, level); return;
    case TS_ALLOC:
        tlc_interp_use_thread(it, 0);
        tlc_interp_exec(it, s);
        return;
    case TS_LET:
    case TS_ASSIGN: run_assign(it, s, mask); return;
    case TS_STORE: run_store(it, s, mask); return;
    default:
        if (!s->per_thread) {
            run_block_work(it, s, mask);
            return;
        }
        for (int t = 0; t < n; t++) {
            if (!mask[t]) continue;
            tlc_interp_use_thread(it, t);
            tlc_interp_exec(it, s);
        }
        return;
    }
}

void tlc_interp_threads_setup(tlc_interp *it) {
    const tir_kernel *k = it->k;
    int n = it->nthreads;
    /* thread 0 holds the block's values (sizes, parameters, block indices) */
    for (int t = 1; t < n; t++)
        memcpy(it->tvars + (size_t)t * (size_t)k->nvars, it->tvars, sizeof(tlc_ival) * (size_t)k->nvars);
    for (int t = 0; t < n; t++) {
        int below = 1;
        for (int a = 0; a < 3; a++) {
            if (k->thread_idx[a]) tlc_interp_set_thread_var(it, k->thread_idx[a], t, t / below % k->thread_dims[a]);
            below *= k->thread_dims[a];
        }
        it->masks[t] = true;
    }
}

void tlc_interp_threads_exec(tlc_interp *it, const tir_stmt *s, int level) { run(it, s, level); }

void tlc_interp_threads_run(tlc_interp *it, const tir_stmt *s) {
    if (it->k->nmbarriers) { /* ranges that wait for each other (interp_ranges.c) */
        tlc_interp_ranges_run(it, s);
        return;
    }
    for (int t = 0; t < it->nthreads; t++) it->masks[t] = true;
    tlc_interp_use_thread(it, 0);
    run(it, s, 0);
}
