/* Lowering driver: Tile IR with layouts -> Thread IR, one th_kernel per
 * kernel. Sets up the kernel (parameters in the runtime's PTX ABI, thread
 * and block indices with the use_swizzle remap, register arrays), lowers
 * statements (tile ops through compiler/ops/), inserts barriers between
 * tile ops that communicate through shared memory, and fills the launch
 * metadata (metadata.c). */
#include <string.h>
#include "../ir/tir_access.h"
#include "lower_internal.h"

static bool indexes_registers(const tir_stmt *body, const tir_var *v);

/* ---------------- shared-memory effects and barriers ---------------- */
/* Effects are kept per shared region of the plan (a shared buffer or a
 * planned scratch, tlc_smem_plan); two regions conflict when their bytes
 * overlap (the same region, or reused bytes: the plan's alias lists). */
typedef struct effects {
    bool *r, *w; /* per region: read / written */
    bool any;
    const int *region_of_buffer;
} effects;

static int effect_ids(const tlc_lower_ctx *lc) { return lc->plan->smem.nregions; }

static int scratch_region(const tlc_lower_ctx *lc, int scratch) { return lc->plan->smem.scratch_region0 + scratch; }

static effects effects_new(tlc_lower_ctx *lc) {
    effects e = {TLC_NEW_ARRAY(lc->a, bool, (size_t)effect_ids(lc) + 1),
                 TLC_NEW_ARRAY(lc->a, bool, (size_t)effect_ids(lc) + 1), false, lc->plan->smem.region_of_buffer};
    return e;
}

static void mark_access(const tir_access *acc, void *ctx) {
    effects *e = ctx;
    int r = e->region_of_buffer[acc->buf->id];
    if (r < 0) return;
    if (acc->mode & TIR_ACCESS_READ) e->r[r] = true;
    if (acc->mode & TIR_ACCESS_WRITE) e->w[r] = true;
    e->any = true;
}

/* A tile op with planned scratch writes and then reads it (within its own
 * barriers); the scratch's bytes may be reused by other buffers. */
static void scratch_effects(const tlc_lower_ctx *lc, const tir_stmt *s, effects *e) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) scratch_effects(lc, s->u.seq.stmts[i], e);
        return;
    case TS_FOR: scratch_effects(lc, s->u.for_.body, e); break;
    case TS_IF:
        scratch_effects(lc, s->u.if_.then, e);
        scratch_effects(lc, s->u.if_.els, e);
        return;
    default: break;
    }
    const tlc_smem_scratch *p = tlc_plan_scratch(lc->plan, s);
    if (!p) return;
    int id = scratch_region(lc, (int)(p - lc->plan->smem.scratch));
    e->r[id] = e->w[id] = e->any = true;
}

static void stmt_effects(const tlc_lower_ctx *lc, const tir_stmt *s, effects *e) {
    tir_stmt_accesses(s, mark_access, e);
    scratch_effects(lc, s, e);
}

/* The effects of s without those of statement `skip` and of the copies
 * the warp-specialized loop's producer preloads (their shared bytes are
 * ordered by the preload mbarriers), reached through sequences. */
static void stmt_effects_except(const tlc_lower_ctx *lc, const tir_stmt *s, const tir_stmt *skip, effects *e) {
    if (!s || s == skip || tlc_ws_is_preload(&lc->plan->ws, s)) return;
    if (s->kind != TS_SEQ) {
        stmt_effects(lc, s, e);
        return;
    }
    for (int i = 0; i < s->u.seq.n; i++) stmt_effects_except(lc, s->u.seq.stmts[i], skip, e);
}

static bool conflicts(const effects *pending, int j, bool write) { return pending->w[j] || (write && pending->r[j]); }

/* A hazard: `next` reads bytes `pending` wrote, or writes bytes it touched. */
static bool hazard(const tlc_lower_ctx *lc, const effects *pending, const effects *next) {
    if (!pending->any || !next->any) return false;
    for (int i = 0, n = effect_ids(lc); i < n; i++) {
        if (!next->r[i] && !next->w[i]) continue;
        if (conflicts(pending, i, next->w[i])) return true;
        for (int j = 0; j < lc->plan->smem.nalias[i]; j++)
            if (conflicts(pending, lc->plan->smem.alias[i][j], next->w[i])) return true;
    }
    return false;
}

static void merge(const tlc_lower_ctx *lc, effects *into, const effects *from) {
    for (int i = 0, n = effect_ids(lc); i < n; i++) {
        into->r[i] |= from->r[i];
        into->w[i] |= from->w[i];
    }
    into->any |= from->any;
}

static void clear(const tlc_lower_ctx *lc, effects *e) {
    memset(e->r, 0, sizeof(bool) * (size_t)effect_ids(lc));
    memset(e->w, 0, sizeof(bool) * (size_t)effect_ids(lc));
    e->any = false;
}

/* ---------------- the async proxy ---------------- */
/* wgmma reads its shared operands through the async proxy, which sees
 * ordinary stores only after a fence.proxy.async by the storing threads
 * (and other threads' stores only after a barrier behind that fence).
 * lc->smem_unfenced holds the effect ids written by ordinary stores since
 * the last fence; a wgmma reading one of them (or bytes overlapping one)
 * gets the fence and a barrier first. TMA writes go through the async proxy
 * and need neither. */
static size_t unfenced_bytes(const tlc_lower_ctx *lc) { return sizeof(bool) * ((size_t)effect_ids(lc) + 1); }

static bool unfenced_id(const tlc_lower_ctx *lc, int id) {
    if (lc->smem_unfenced[id]) return true;
    for (int j = 0; j < lc->plan->smem.nalias[id]; j++)
        if (lc->smem_unfenced[lc->plan->smem.alias[id][j]]) return true;
    return false;
}

/* s reads through the async proxy bytes that ordinary stores wrote unfenced. */
static bool reads_unfenced(const tlc_lower_ctx *lc, const tir_stmt *s) {
    if (s->kind != TS_GEMM) return false;
    const tlc_gemm_plan *g = tlc_plan_gemm(lc->plan, s);
    if (!g || g->inst != TLC_INST_WGMMA) return false;
    const tir_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf;
    const int *region = lc->plan->smem.region_of_buffer;
    return (region[A->id] >= 0 && unfenced_id(lc, region[A->id])) || (region[B->id] >= 0 && unfenced_id(lc, region[B->id]));
}


static void mark_unfenced(tlc_lower_ctx *lc, const effects *e) {
    for (int i = 0, n = effect_ids(lc); i < n; i++) lc->smem_unfenced[i] |= e->w[i];
}

static bool *unfenced_copy(tlc_lower_ctx *lc) {
    bool *c = TLC_NEW_ARRAY(lc->a, bool, (size_t)effect_ids(lc) + 1);
    memcpy(c, lc->smem_unfenced, unfenced_bytes(lc));
    return c;
}

static void unfenced_union(tlc_lower_ctx *lc, const bool *other) {
    for (int i = 0, n = effect_ids(lc); i < n; i++) lc->smem_unfenced[i] |= other[i];
}

/* Lowers a tile-level statement list, tracking shared-memory accesses since
 * the last barrier in `pending` (bar.sync whenever a statement would race
 * with them; every thread reaches tile-level code, so barriers are safe). */
static void lower_tile_stmt(tlc_lower_ctx *lc, const tir_stmt *s, effects *pending);

/* The block barrier before s; where the threads have parted ways (thread-
 * indexed code) not all of them would reach it: an error at s. */
static void barrier_before(tlc_lower_ctx *lc, const tir_stmt *s, effects *pending) {
    if (lc->divergent && lc->k->program_syncs_shared) {
        /* TL_DISABLE_THREAD_STORAGE_SYNC: the program's barriers order them */
    } else if (lc->divergent)
        tlc_error(lc->diag, s->loc,
                  "this statement needs a block barrier before it (it touches shared memory that other threads "
                  "wrote or read since the last one), but it runs under a condition or loop that differs between "
                  "the block's threads, which not all of them reach: move the shared-memory access out of it (or, "
                  "where barriers of the program's own order it, say so: pass_configs={TL_DISABLE_THREAD_STORAGE_SYNC: "
                  "True})");
    else
        tlc_emit(lc, tlc_barrier(lc));
    clear(lc, pending);
}

static void barrier_if_needed(tlc_lower_ctx *lc, const tir_stmt *s, effects *pending) {
    effects e = effects_new(lc);
    stmt_effects(lc, s, &e);
    bool fence = reads_unfenced(lc, s);
    if (fence) tlc_smem_fence(lc);
    if (fence || hazard(lc, pending, &e)) barrier_before(lc, s, pending);
}

/* Nothing pending touches the bytes of s's planned scratch: s may write it
 * without a barrier first (tlc_op_scratch_barrier). */
static bool scratch_untouched(tlc_lower_ctx *lc, const tir_stmt *s, const effects *pending) {
    const tlc_smem_scratch *p = tlc_plan_scratch(lc->plan, s);
    if (!p) return false;
    effects e = effects_new(lc);
    e.w[scratch_region(lc, (int)(p - lc->plan->smem.scratch))] = true;
    e.any = true;
    return !hazard(lc, pending, &e);
}

/* Gemms a wait retired read their shared operands until then: those reads
 * join the pending effects (a barrier since their issue cleared them). */
static void hand_back_retired(tlc_lower_ctx *lc, effects *pending) {
    for (int i = 0; i < lc->wgmma_retired.len; i++) {
        effects e = effects_new(lc);
        stmt_effects(lc, lc->wgmma_retired.items[i], &e);
        merge(lc, pending, &e);
    }
    lc->wgmma_retired.len = 0;
}

/* Before `next` in its sequence (NULL: at the sequence's end, where every
 * gemm still in flight retires), the wait for the gemms planned to retire
 * there (gemm_retire.c): wait_group N leaves the N newest groups in flight. */
static void retire_gemms(tlc_lower_ctx *lc, const tir_stmt *next, effects *pending) {
    int last = -1, n = lc->wgmma_deferred.len;
    for (int i = 0; i < n; i++) {
        const tlc_gemm_op_plan *g = tlc_plan_gemm_op(lc->plan, lc->wgmma_deferred.items[i]);
        if (!next || g->retire_before == next) last = i;
    }
    if (last < 0) return;
    tlc_emit_ptx(lc, tlc_ptx_wgmma_wait(lc->a, n - 1 - last), NULL, 0, NULL, 0);
    tlc_wgmma_retire_deferred(lc, last + 1);
    hand_back_retired(lc, pending);
}

/* A sequence's statements, with the waits of the gemms it leaves in flight. */
static void lower_seq_stmt(tlc_lower_ctx *lc, const tir_stmt *x, effects *pending) {
    retire_gemms(lc, x, pending);
    lower_tile_stmt(lc, x, pending);
    hand_back_retired(lc, pending);
}

static th_var *loop_slot(tlc_lower_ctx *lc, const tir_var *v) {
    if (!lc->var_slot[v->id])
        lc->var_slot[v->id] = th_new_var(lc->a, lc->tk, v->name, th_scalar(TH_I32), 0);
    return lc->var_slot[v->id];
}

/* A Pipelined loop with a plan (pipeline_plan.c): prologue loads of the
 * first stages-1 iterations, then per iteration: wait for the oldest loads,
 * a barrier (its stage is visible, and everyone is done with the stage the
 * next loads overwrite), the loads of iteration ko+stages-1, and the body
 * without its pipelined copies, reading stage ko % stages. */
/* Every version of the loop starts from the unfenced state `entry` and
 * adds what it leaves to `exit`. */
typedef struct pipe_versions {
    const bool *entry;
    bool *exit;
} pipe_versions;

static void lower_pipelined_version(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_pipe_plan *pp, effects *pending,
                                    int align_mode, const pipe_versions *pv) {
    tlc_arena *a = lc->a;
    const tir_var *v = s->u.for_.vars[0];
    th_var *tv = loop_slot(lc, v);
    int S = pp->stages;
    tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "Pipelined loop over %s: %d stages, %d copies by %s", v->name, S,
                                                pp->ncopies, pp->tma ? "TMA" : "cp.async")));
    memcpy(lc->smem_unfenced, pv->entry, unfenced_bytes(lc));
    /* the barrier every version starts with also publishes what was
     * stored before the loop to the async proxy, once */
    if (tlc_smem_any_unfenced(lc)) tlc_smem_fence(lc);
    tlc_emit(lc, tlc_barrier(lc));
    clear(lc, pending);
    tlc_pipe_state ps = {.plan = pp, .loop = s, .align_mode = align_mode};
    ps.n = tlc_let(lc, "pn", tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.extent[0]), th_scalar(TH_I32)));
    tlc_pipe_begin(lc, &ps);
    tlc_pipe_hoist(lc, &ps);
    for (int st = 0; st < S - 1; st++) tlc_pipe_issue(lc, &ps, tlc_i32(lc, st), tlc_i32(lc, st));

    tlc_ptrvec *saved = tlc_lower_begin(lc);
    th_expr *ko = th_read(a, tv);
    th_expr *stage = tlc_let(lc, "stage", th_bin(a, THB_UREM, ko, tlc_i32(lc, S)));
    const tir_stmt *body = s->u.for_.body;
    int n = body->kind == TS_SEQ ? body->u.seq.n : 1;
    /* at the top of an iteration, what the previous one stored may be
     * unfenced, and so are stages cp.async filled (ordinary stores) */
    effects carried = effects_new(lc);
    for (int i = 0; i < n; i++) {
        const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
        int li = tlc_pipe_load_index(pp, x);
        if (li < 0 || !pp->tma || pp->gathers[li].loop) stmt_effects(lc, x, &carried);
    }
    mark_unfenced(lc, &carried);
    tlc_pipe_wait_chunks(lc, &ps);
    /* with cp.async chunks a wgmma would read, every thread fences its own
     * (now complete) chunks and stores here, under the barrier the stage
     * needs anyway, not behind a second one before the gemm */
    if (tlc_pipe_has_chunks(pp) && tlc_smem_any_unfenced(lc)) tlc_smem_fence(lc);
    tlc_emit(lc, tlc_barrier(lc));
    th_expr *next = th_bin(a, THB_ADD, ko, tlc_i32(lc, S - 1));
    /* pp->loads_under: the next stage's loads (the threads' own address
     * arithmetic and issue) go out while the body's last gemm runs; they
     * fill the stage the previous iteration's gemm read, which every thread
     * retired before the barrier above */
    const tir_stmt *last = pp->loads_under;
    bool under_gemm = last && !lc->wgmma_inflight;
    if (!under_gemm) tlc_pipe_issue(lc, &ps, next, th_bin(a, THB_UREM, next, tlc_i32(lc, S)));
    tlc_pipe_wait(lc, &ps, ko, stage);
    tlc_pipe_set_stage(lc, pp, stage);
    effects inner = effects_new(lc);
    for (int i = 0; i < n; i++) {
        const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
        if (tlc_pipe_is_copy(pp, x)) {
            retire_gemms(lc, x, &inner); /* planned against it where it stands */
            continue;
        }
        lc->wgmma_async = under_gemm && x == last;
        lower_seq_stmt(lc, x, &inner);
        lc->wgmma_async = false;
    }
    if (under_gemm) {
        tlc_pipe_issue(lc, &ps, next, th_bin(a, THB_UREM, next, tlc_i32(lc, S)));
        tlc_wgmma_wait(lc, last->u.gemm.c.buf, 0);
        hand_back_retired(lc, &inner);
    }
    retire_gemms(lc, NULL, &inner);
    tlc_pipe_set_stage(lc, pp, NULL);
    th_stmt *b = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_for(a, tv, tlc_i32(lc, 0), ps.n, 1, false, b));
    tlc_pipe_end(lc, &ps);
    merge(lc, pending, &inner); /* what the last iteration left unsynchronized */
    unfenced_union(lc, pv->exit);
    memcpy(pv->exit, lc->smem_unfenced, unfenced_bytes(lc));
}

/* Copies over symbolic row lengths (`aligned`: tlc_pipe_aligned_cond): one
 * version of the loop for 16-byte aligned rows (cp.async only), one for the
 * rest (lower_pipeline.c). */
static void lower_pipelined_masked(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_pipe_plan *pp, effects *pending,
                                   th_expr *aligned, const pipe_versions *pv) {
    if (!aligned) {
        lower_pipelined_version(lc, s, pp, pending, TLC_PIPE_ALIGN_CHECK, pv);
        return;
    }
    aligned = tlc_let(lc, "al16", aligned);
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    lower_pipelined_version(lc, s, pp, pending, TLC_PIPE_ALIGN_ASSUMED, pv);
    th_stmt *fast = tlc_lower_end(lc, saved);
    saved = tlc_lower_begin(lc);
    lower_pipelined_version(lc, s, pp, pending, TLC_PIPE_ALIGN_FALLBACK, pv);
    th_stmt *slow = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(lc->a, aligned, fast, slow));
}

/* cp.async loops get one more version, first: blocks whose tiles lie wholly
 * inside the tensors at every iteration (all blocks but the edge ones) run
 * a loop without bounds checks, byte counts or address selects. Every
 * version starts with a barrier and leaves the same effects pending. */
static void lower_pipelined_for(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_pipe_plan *pp, effects *pending) {
    th_expr *aligned = tlc_pipe_aligned_cond(lc, pp);
    th_expr *interior = tlc_pipe_interior_cond(lc, pp, s);
    pipe_versions pv = {unfenced_copy(lc), TLC_NEW_ARRAY(lc->a, bool, (size_t)effect_ids(lc) + 1)};
    if (!interior) {
        lower_pipelined_masked(lc, s, pp, pending, aligned, &pv);
    } else {
        interior = tlc_let(lc, "interior", tlc_and(lc, interior, aligned));
        tlc_ptrvec *saved = tlc_lower_begin(lc);
        lower_pipelined_version(lc, s, pp, pending, TLC_PIPE_INTERIOR, &pv);
        th_stmt *fast = tlc_lower_end(lc, saved);
        saved = tlc_lower_begin(lc);
        lower_pipelined_masked(lc, s, pp, pending, aligned, &pv);
        th_stmt *edge = tlc_lower_end(lc, saved);
        tlc_emit(lc, th_if(lc->a, interior, fast, edge));
    }
    memcpy(lc->smem_unfenced, pv.exit, unfenced_bytes(lc));
}

static bool is_pipelined_loop(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    return s->kind == TS_FOR && s->u.for_.kind == TIR_FOR_PIPELINED;
}

/* The body of the warp-specialized loop in the consumers: every statement
 * but the pipelined copies (their stages are filled by the producer and
 * ordered by mbarriers), barriers among the consumers as anywhere else,
 * and one at the end when the next iteration would race this one. */
static void lower_ws_body(tlc_lower_ctx *lc, const tir_stmt *s, void *ctx) {
    (void)ctx;
    const tlc_ws_decision *d = &lc->plan->ws;
    const tlc_pipe_plan *pp = d->pipe;
    const tir_stmt *body = s->u.for_.body;
    int n = body->kind == TS_SEQ ? body->u.seq.n : 1;
    effects all = effects_new(lc), inner = effects_new(lc);
    for (int i = 0; i < n; i++) {
        const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
        if (!tlc_pipe_is_copy(pp, x)) stmt_effects(lc, x, &all);
    }
    mark_unfenced(lc, &all);
    /* `head`: what an iteration does before its first barrier (one emitted
     * at the body's top level, so on every path); only that can race what
     * the previous iteration left pending */
    effects head = effects_new(lc);
    bool head_done = false;
    for (int i = 0; i < n; i++) {
        const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
        /* the gemms that run ahead: warp_specialize.c issues them */
        bool ahead = i >= pp->nprefix && i < pp->nprefix + d->lookahead;
        if (tlc_pipe_is_copy(pp, x) || ahead) continue;
        int first = lc->out->len;
        lower_tile_stmt(lc, x, &inner);
        if (head_done) continue;
        stmt_effects(lc, x, &head);
        for (int j = first; j < lc->out->len; j++)
            head_done |= ((const th_stmt *)lc->out->items[j])->kind == THS_BARRIER;
    }
    if (hazard(lc, &inner, &head)) tlc_emit(lc, tlc_barrier(lc));
}

/* Whether e is v + c (c a constant, 0 included); *c set. */
static bool var_plus_const(const tir_expr *e, const tir_var *v, int64_t *c) {
    int64_t k;
    /* (a cast that keeps every int32 value: a narrower one wraps) */
    if (e->kind == TE_CAST && !e->u.cast.bits && (e->dtype == TIR_I32 || e->dtype == TIR_I64)) e = e->u.cast.a;
    if (e->kind == TE_VAR && e->u.var == v) {
        *c = 0;
        return true;
    }
    if (e->kind != TE_BINARY || (e->u.bin.op != TB_ADD && e->u.bin.op != TB_SUB)) return false;
    const tir_expr *x = e->u.bin.a, *y = e->u.bin.b;
    if (e->u.bin.op == TB_ADD && tir_expr_const_int(x, &k)) {
        const tir_expr *t = x;
        x = y;
        y = t;
    }
    if (x->kind != TE_VAR || x->u.var != v || !tir_expr_const_int(y, &k)) return false;
    *c = e->u.bin.op == TB_ADD ? k : -k;
    return true;
}

/* Per shared buffer, whether every access of a loop body is an element
 * access at index v + c in one dim (the same dim and c for all): then each
 * iteration touches elements no other iteration does, in every thread
 * (the loop's iterations are the same in all of them). */
typedef struct {
    const tir_var *v;
    const int *region_of_buffer;
    int *dim;       /* per buffer id: the dim (-1: none yet, -2: not private) */
    int64_t *off;
} private_search;

static void private_access(const tir_access *acc, void *ctx) {
    private_search *q = ctx;
    int id = acc->buf->id;
    if (q->region_of_buffer[id] < 0 || q->dim[id] == -2) return;
    if (!acc->idx) {
        q->dim[id] = -2; /* a tile op's region */
        return;
    }
    int64_t c;
    for (int d = 0; d < acc->buf->rank; d++) {
        if (q->dim[id] >= 0 && q->dim[id] != d) continue;
        if (var_plus_const(acc->idx[d], q->v, &c) && (q->dim[id] < 0 || q->off[id] == c)) {
            q->dim[id] = d;
            q->off[id] = c;
            return;
        }
    }
    q->dim[id] = -2;
}

/* Takes the buffers each iteration of s touches only its own elements of
 * out of body's effects (no barrier at the back edge for them). */
static void drop_iteration_private(tlc_lower_ctx *lc, const tir_stmt *s, effects *body) {
    const tir_kernel *k = lc->k;
    private_search q = {s->u.for_.vars[0], lc->plan->smem.region_of_buffer,
                        TLC_NEW_ARRAY(lc->a, int, (size_t)k->nbuffers + 1),
                        TLC_NEW_ARRAY(lc->a, int64_t, (size_t)k->nbuffers + 1)};
    for (int i = 0; i < k->nbuffers; i++) q.dim[i] = -1;
    tir_stmt_accesses(s->u.for_.body, private_access, &q);
    for (int i = 0; i < k->nbuffers; i++) {
        int r = q.region_of_buffer[i];
        if (r >= 0 && q.dim[i] >= 0) body->r[r] = body->w[r] = false;
    }
}

/* What a loop body does before its first barrier statement (a
 * sync_threads at its top level; all of it when none): all that the next
 * iteration can race with what this one left pending. */
static void head_effects(const tlc_lower_ctx *lc, const tir_stmt *body, effects *e) {
    int n = body && body->kind == TS_SEQ ? body->u.seq.n : 1;
    for (int i = 0; i < n; i++) {
        const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
        const tlc_op_desc *op = tlc_op_of(x);
        if (op && op->barrier) return;
        stmt_effects(lc, x, e);
    }
}

/* A statement of the block's work (a tile op, a Parallel or Pipelined loop). */
static bool is_block_work(const tir_stmt *s, const void *ctx) {
    (void)ctx;
    switch (s->kind) {
    case TS_SEQ: case TS_IF: case TS_ALLOC: case TS_LET: case TS_ASSIGN: case TS_STORE: return false;
    case TS_FOR: return s->u.for_.kind == TIR_FOR_PARALLEL || s->u.for_.kind == TIR_FOR_PIPELINED;
    default: return true;
    }
}

/* The body of loop s lowered once per iteration, the variable the
 * iteration's constant in each copy (lets computed from it fold, and inner
 * loops whose bounds it decides get constant bounds and are unrolled in
 * turn where they index register arrays); NULL where the copies would pass
 * the unroll limit. */
static th_stmt *unrolled_copies(tlc_lower_ctx *lc, const tir_stmt *s, int64_t c0, int64_t n, int64_t step,
                                effects *pending) {
    const tir_var *v = s->u.for_.vars[0];
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    lc->fold_lets++;
    for (int64_t i = 0; i < n; i++) {
        lc->var_expr[v->id] = tlc_i32(lc, c0 + i * step);
        lower_tile_stmt(lc, s->u.for_.body, pending);
    }
    lc->fold_lets--;
    lc->var_expr[v->id] = NULL;
    th_stmt *all = tlc_lower_end(lc, saved);
    return th_unrolled_size(all, TLC_UNROLLED_MAX_STMTS + 1) <= TLC_UNROLLED_MAX_STMTS ? all : NULL;
}

/* lc->tid := the thread's index in lc->range. */
static void set_range_tid(tlc_lower_ctx *lc) {
    th_expr *t = th_bin(lc->a, THB_SUB, th_read(lc->a, lc->block_tid), tlc_i32(lc, lc->range->lo));
    tlc_emit(lc, th_assign(lc->a, lc->tid, NULL, t));
}

static void lower_serial_for(tlc_lower_ctx *lc, const tir_stmt *s, effects *pending) {
    if (!lc->in_parallel && tlc_ws_owns_loop(lc, s)) { /* warp_specialize.c */
        /* what was stored before the loop, published to the other consumers
         * and to the async proxy once, not per iteration */
        bool fence = tlc_smem_any_unfenced(lc);
        if (fence) tlc_smem_fence(lc);
        if (fence || pending->any) tlc_emit(lc, tlc_barrier(lc));
        clear(lc, pending);
        tlc_ws_lower_consumer_loop(lc, s, lower_ws_body, NULL);
        /* The loop's own shared memory (its stages) and the preloaded
         * buffers are ordered by the mbarriers. A barrier after it is
         * needed only when the rest of the body uses shared memory too:
         * then it also keeps one persistent tile's accesses from racing
         * the next tile's. */
        effects rest = effects_new(lc);
        stmt_effects_except(lc, lc->k->body, s, &rest);
        if (rest.any) tlc_emit(lc, tlc_barrier(lc));
        clear(lc, pending);
        return;
    }
    const tlc_pipe_plan *pp = lc->in_parallel ? NULL : tlc_plan_pipe(lc->plan, s);
    if (pp) {
        lower_pipelined_for(lc, s, pp, pending);
        return;
    }
    const tir_var *v = s->u.for_.vars[0];
    th_var *tv = loop_slot(lc, v);
    th_expr *start = tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.start[0]), th_scalar(TH_I32));
    th_expr *count = tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.extent[0]), th_scalar(TH_I32));
    int64_t step = s->u.for_.step ? s->u.for_.step : 1;
    /* Tile IR gives an iteration count; Thread IR wants [start, end) step. */
    th_expr *end = th_bin(lc->a, THB_ADD, start, th_bin(lc->a, THB_MUL, count, tlc_i32(lc, step)));
    int64_t c0, n;
    /* (bounds that fold once an unrolled outer loop's variable is a constant count too) */
    bool cs = tir_expr_const_int(s->u.for_.start[0], &c0) || th_expr_const_int(start, &c0);
    bool cn = tir_expr_const_int(s->u.for_.extent[0], &n) || th_expr_const_int(count, &n);
    if (cs && cn && step > 0) {
        lc->var_lo[v->id] = c0;
        lc->var_hi[v->id] = c0 + (n - 1) * step;
        lc->var_known[v->id] = n > 0;
    }
    effects body = effects_new(lc), head = effects_new(lc);
    stmt_effects(lc, s->u.for_.body, &body);
    if (s->u.for_.body) head_effects(lc, s->u.for_.body, &head);
    if (hazard(lc, pending, &head)) barrier_before(lc, s, pending);
    /* a loop that may end early tests its condition (which reads no shared
     * memory or fragment: sema) before the first iteration and after each */
    th_var *goes_on = s->u.for_.cond ? tlc_temp(lc, "goes_on", th_scalar(TH_I1), 0) : NULL;
    if (goes_on) tlc_emit(lc, th_assign(lc->a, goes_on, NULL, tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.cond),
                                                                          th_scalar(TH_I1))));
    lc->divergent += s->u.for_.thread_varying;
    effects inner = effects_new(lc);
    merge(lc, &inner, pending);
    /* an iteration may start with what the previous one stored unfenced;
     * after the loop, either that or (no iteration) what came before it */
    bool *entry_unfenced = unfenced_copy(lc);
    mark_unfenced(lc, &body);
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    if (!lc->in_parallel && tir_stmt_any(s->u.for_.body, is_pipelined_loop, NULL)) {
        /* A loop around a Pipelined loop (MLA's walk over sequences) runs a
         * kernel's worth of tile code per iteration. LLVM would hoist all
         * of its thread-index arithmetic (hundreds of shared and global
         * addresses) out of it and keep them live across the inner loop,
         * past the register file; reading tid anew each iteration, through
         * an asm that depends on the iteration, keeps that arithmetic in. */
        th_expr *dep[1] = {th_read(lc->a, tv)};
        th_var *out[1] = {lc->block_tid};
        tlc_emit_ptx(lc, tlc_ptx_read_tid_x(), dep, 1, out, 1);
        if (lc->range) set_range_tid(lc); /* in a thread range's branch: its index there */
    }
    int64_t tests0 = lc->bounds_tests;
    lower_tile_stmt(lc, s->u.for_.body, &inner);
    if (goes_on) tlc_emit(lc, th_assign(lc->a, goes_on, NULL, tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.cond),
                                                                          th_scalar(TH_I1))));
    /* The next iteration runs the body again after what it left pending
     * (but for buffers each iteration touches only its own elements of). */
    if (!s->u.for_.thread_varying) drop_iteration_private(lc, s, &head);
    if (!lc->in_parallel && hazard(lc, &inner, &head)) barrier_before(lc, s, &inner);
    lc->divergent -= s->u.for_.thread_varying;
    th_stmt *b = tlc_lower_end(lc, saved);
    /* a serial loop whose variable indexes register arrays (lse[k, j] in a
     * Parallel loop, a thread's local[j]) is unrolled, so that the
     * registers are indexed by constants (not local memory), where it is
     * short */
    bool indexes = s->u.for_.kind != TIR_FOR_UNROLLED && !goes_on && cn && n > 0 && n <= 64 &&
                   indexes_registers(s->u.for_.body, v);
    bool unroll = (s->u.for_.kind == TIR_FOR_UNROLLED || indexes) && !goes_on &&
                  (!cn || n <= 0 || th_unrolled_size(b, TLC_UNROLLED_MAX_STMTS + 1) <= TLC_UNROLLED_MAX_STMTS / n);
    if (unroll && indexes && cs && step > 0 && lc->k->thread_indexed && !lc->in_parallel &&
        !s->u.for_.thread_varying && !tir_stmt_any(s->u.for_.body, is_block_work, NULL)) {
        /* thread-indexed code: the body once per iteration, so that what
         * depends on the variable (inner loops' bounds, lets) folds */
        int64_t tests1 = lc->bounds_tests;
        lc->bounds_tests = tests0;
        effects copy = effects_new(lc);
        merge(lc, &copy, pending);
        th_stmt *copies = unrolled_copies(lc, s, c0, n, step, &copy);
        if (copies) {
            tlc_emit(lc, copies);
            clear(lc, pending);
            merge(lc, pending, &copy);
            unfenced_union(lc, entry_unfenced);
            lc->var_known[v->id] = false;
            return;
        }
        lc->bounds_tests = tests1;
    }
    th_stmt *loop;
    if (step > 0) {
        loop = th_for(lc->a, tv, start, end, step, unroll, b);
    } else {
        /* negative step: iterate an index upward and map it */
        th_var *it = tlc_temp(lc, "it", th_scalar(TH_I32), 0);
        th_stmt *set = th_assign(lc->a, tv, NULL, th_bin(lc->a, THB_ADD, start,
                                                          th_bin(lc->a, THB_MUL, th_read(lc->a, it), tlc_i32(lc, step))));
        th_stmt *both[2] = {set, b};
        loop = th_for(lc->a, it, tlc_i32(lc, 0), count, 1, unroll, th_seq(lc->a, both, 2));
    }
    if (goes_on) loop->u.for_.cond = th_read(lc->a, goes_on);
    tlc_emit(lc, loop);
    merge(lc, pending, &inner);
    unfenced_union(lc, entry_unfenced);
    lc->var_known[v->id] = false;
}

/* A branch's statements; in a thread range's branch, over its threads: the
 * ops' thread index counts from the range's first thread, and their
 * barriers are the range's. */
static void lower_range_branch(tlc_lower_ctx *lc, const tir_stmt *body, const tir_thread_range *r, effects *pending) {
    if (!r) {
        lower_tile_stmt(lc, body, pending);
        return;
    }
    th_var *tid = lc->tid;
    int threads = lc->threads;
    const tir_thread_range *range = lc->range;
    lc->tid = tlc_temp(lc, "range_tid", th_scalar(TH_I32), 0);
    lc->threads = r->count;
    lc->range = r;
    set_range_tid(lc);
    lower_tile_stmt(lc, body, pending);
    lc->tid = tid;
    lc->threads = threads;
    lc->range = range;
}

static void lower_tile_stmt(tlc_lower_ctx *lc, const tir_stmt *s, effects *pending) {
    if (!s || tlc_diag_too_many(lc->diag)) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) lower_seq_stmt(lc, s->u.seq.stmts[i], pending);
        retire_gemms(lc, NULL, pending);
        return;
    case TS_FOR:
        if (s->u.for_.kind != TIR_FOR_PARALLEL) {
            lower_serial_for(lc, s, pending);
            return;
        }
        break;
    case TS_IF: {
        bool split = s->u.if_.range_then || s->u.if_.range_else;
        if (split && tlc_smem_any_unfenced(lc)) {
            /* what every thread stored, published to the async proxy
             * before the ranges' wgmmas read it (each range fences only
             * its own threads' stores) */
            tlc_smem_fence(lc);
            tlc_emit(lc, tlc_barrier(lc));
            clear(lc, pending);
        }
        if (!lc->in_parallel) barrier_if_needed(lc, s, pending);
        th_expr *c = tlc_coerce(lc, tlc_lower_expr(lc, s->u.if_.cond), th_scalar(TH_I1));
        effects e1 = effects_new(lc), e2 = effects_new(lc);
        merge(lc, &e1, pending);
        merge(lc, &e2, pending);
        bool *before = unfenced_copy(lc);
        /* a branch that splits the threads into ranges: within each, its
         * threads go together (tir_thread_range) */
        int parted = s->u.if_.thread_varying && !split;
        lc->divergent += parted;
        tlc_ptrvec *saved = tlc_lower_begin(lc);
        lower_range_branch(lc, s->u.if_.then, s->u.if_.range_then, &e1);
        th_stmt *t = tlc_lower_end(lc, saved);
        th_stmt *el = NULL;
        bool *after_then = unfenced_copy(lc);
        memcpy(lc->smem_unfenced, before, unfenced_bytes(lc));
        if (s->u.if_.els) {
            saved = tlc_lower_begin(lc);
            lower_range_branch(lc, s->u.if_.els, s->u.if_.range_else, &e2);
            el = tlc_lower_end(lc, saved);
        }
        lc->divergent -= parted;
        unfenced_union(lc, after_then);
        tlc_emit(lc, th_if(lc->a, c, t, el));
        clear(lc, pending);
        merge(lc, pending, &e1);
        merge(lc, pending, &e2);
        return;
    }
    case TS_COPY:
        /* the producer's load, ordered by the preloads' mbarriers */
        if (lc->ws && tlc_ws_is_preload(&lc->plan->ws, s)) {
            tlc_ws_consumer_preload(lc, s);
            return;
        }
        /* a hand-pipelined kernel's TMA load: the program's mbarrier orders it */
        if (!lc->in_parallel && tlc_program_tma_copy(lc, s)) return;
        break;
    default: break;
    }
    const tlc_op_desc *row = tlc_op_of(s);
    if (row && row->each_thread) {
        /* a hand-pipelined kernel's own: the program's mbarriers order
         * what it touches (ops/mbarrier.c) */
        tlc_lower_stmt(lc, s);
        return;
    }
    if (!lc->in_parallel) barrier_if_needed(lc, s, pending);
    lc->scratch_hit = -1;
    lc->scratch_clear = !lc->in_parallel && scratch_untouched(lc, s, pending) ? s : NULL;
    tlc_lower_stmt(lc, s);
    lc->scratch_clear = NULL;
    effects e = effects_new(lc);
    tir_stmt_accesses(s, mark_access, &e);
    if (lc->scratch_hit >= 0 && !lc->in_parallel) {
        /* The op wrote its planned scratch and read it after a barrier:
         * only those reads are left unsynchronized. */
        clear(lc, pending);
        lc->smem_unfenced[scratch_region(lc, lc->scratch_hit)] = true;
        e.r[scratch_region(lc, lc->scratch_hit)] = true;
        e.any = true;
    }
    lc->scratch_hit = -1;
    if (!lc->in_parallel) mark_unfenced(lc, &e);
    merge(lc, pending, &e);
    const tlc_op_desc *op = tlc_op_of(s);
    if (op && op->barrier) clear(lc, pending);
}

/* Reports, once, the statement whose lowering took the kernel past
 * TLC_KERNEL_MAX_BOUNDS_TESTS. */
static void check_bounds_tests(tlc_lower_ctx *lc, tlc_loc loc) {
    if (lc->bounds_reported || lc->bounds_tests <= TLC_KERNEL_MAX_BOUNDS_TESTS) return;
    lc->bounds_reported = true;
    tlc_error(lc->diag, loc,
              "kernel '%s' needs more than %d bounds-tested element accesses per thread (%lld once this "
              "statement is lowered): compile time grows faster than their number; use fewer elements per "
              "thread (more threads or smaller tiles) or constant tensor dims the tiles divide",
              lc->k->name, TLC_KERNEL_MAX_BOUNDS_TESTS, (long long)lc->bounds_tests);
}

static void lower_stmt_kind(tlc_lower_ctx *lc, const tir_stmt *s);

void tlc_lower_stmt(tlc_lower_ctx *lc, const tir_stmt *s) {
    if (!s || tlc_diag_too_many(lc->diag) || lc->bounds_reported) return;
    lower_stmt_kind(lc, s);
    check_bounds_tests(lc, s->loc);
}

static void lower_stmt_kind(tlc_lower_ctx *lc, const tir_stmt *s) {
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) tlc_lower_stmt(lc, s->u.seq.stmts[i]);
        break;
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PARALLEL) {
            tlc_op_of(s)->lower(lc, s);
        } else {
            effects none = effects_new(lc);
            lower_serial_for(lc, s, &none);
        }
        break;
    case TS_IF: {
        th_expr *c = tlc_coerce(lc, tlc_lower_expr(lc, s->u.if_.cond), th_scalar(TH_I1));
        tlc_ptrvec *saved = tlc_lower_begin(lc);
        tlc_lower_stmt(lc, s->u.if_.then);
        th_stmt *t = tlc_lower_end(lc, saved);
        th_stmt *el = NULL;
        if (s->u.if_.els) {
            saved = tlc_lower_begin(lc);
            tlc_lower_stmt(lc, s->u.if_.els);
            el = tlc_lower_end(lc, saved);
        }
        tlc_emit(lc, th_if(lc->a, c, t, el));
        break;
    }
    case TS_ALLOC: break; /* register arrays are declared up front */
    case TS_LET:
    case TS_ASSIGN: {
        const tir_var *v = s->u.let.var;
        th_type t = tlc_reg_type(v->dtype);
        if (!lc->var_slot[v->id]) lc->var_slot[v->id] = th_new_var(lc->a, lc->tk, v->name, t, 0);
        th_expr *val = tlc_coerce_from(lc, tlc_lower_expr(lc, s->u.let.value), s->u.let.value->dtype,
                                       lc->var_slot[v->id]->type);
        int64_t c;
        if (lc->fold_lets && s->kind == TS_LET && v->assigned_once && th_expr_const_int(val, &c)) {
            lc->var_expr[v->id] = val; /* its reads in this copy are the constant */
            break;
        }
        tlc_emit(lc, th_assign(lc->a, lc->var_slot[v->id], NULL, val));
        break;
    }
    case TS_STORE: {
        th_expr *val = tlc_lower_expr(lc, s->u.store.value);
        tlc_lower_store(lc, s->u.store.buf, s->u.store.idx, val, s->loc);
        break;
    }
    default: { /* a tile op */
        const tlc_op_desc *op = tlc_op_of(s);
        if (op) op->lower(lc, s);
        else tlc_error(lc->diag, s->loc, "internal error: statement of kind %d cannot be lowered", (int)s->kind);
        break;
    }
    }
}

/* ---------------- fragments indexed by a serial loop's variable ---------------- */
static bool reads_var(const tir_expr *e, const tir_var *v, int depth) {
    if (!e || depth > 64) return false;
    switch (e->kind) {
    case TE_VAR:
        /* a let computed from v (chunk = j * size) reads it too */
        return e->u.var == v || (e->u.var->kind == TV_LET && e->u.var->def && reads_var(e->u.var->def, v, depth + 1));
    case TE_BINARY: return reads_var(e->u.bin.a, v, depth + 1) || reads_var(e->u.bin.b, v, depth + 1);
    case TE_UNARY: return reads_var(e->u.un.a, v, depth + 1);
    case TE_CAST: return reads_var(e->u.cast.a, v, depth + 1);
    case TE_SELECT:
        return reads_var(e->u.sel.cond, v, depth + 1) || reads_var(e->u.sel.a, v, depth + 1) ||
               reads_var(e->u.sel.b, v, depth + 1);
    case TE_LOAD:
        for (int i = 0; i < e->u.load.buf->rank; i++)
            if (reads_var(e->u.load.idx[i], v, depth + 1)) return true;
        return false;
    default: return false;
    }
}

typedef struct { const tir_var *v; bool found; } index_search;

static void find_register_index(const tir_access *acc, void *ctx) {
    index_search *q = ctx;
    /* a fragment's elements, or a thread's local array */
    bool registers = (acc->buf->scope == TIR_SCOPE_FRAGMENT && acc->buf->fragment) || acc->buf->scope == TIR_SCOPE_LOCAL;
    if (q->found || !registers || !acc->idx) return;
    for (int i = 0; i < acc->buf->rank && !q->found; i++) q->found = reads_var(acc->idx[i], q->v, 0);
}

static bool indexes_registers(const tir_stmt *body, const tir_var *v) {
    index_search q = {v, false};
    tir_stmt_accesses(body, find_register_index, &q);
    return q.found;
}

/* ---------------- kernel setup ---------------- */
/* Block indices. use_swizzle on a 2D grid walks blocks in panels of
 * `panel` rows (order "row": by varies fastest inside a panel, so blocks
 * launched together share the same columns of B) or columns ("col"); the
 * last panel is narrower when the grid does not divide. A bijection. */
void tlc_block_swizzle(tlc_lower_ctx *lc, th_expr *lin, th_expr *gx, th_expr *gy, th_expr **out) {
    const tir_kernel *k = lc->k;
    lin = tlc_let(lc, "blk", lin);
    th_expr *p = tlc_i32(lc, k->swizzle_panel);
    /* order "row": panels of p rows (by); "col": panels of p columns (bx) */
    th_expr *across = k->swizzle_col ? gy : gx;  /* extent walked inside a panel */
    th_expr *along = k->swizzle_col ? gx : gy;   /* extent split into panels */
    th_expr *per_panel = th_bin(lc->a, THB_MUL, p, across);
    th_expr *panel = tlc_let(lc, "pnl", th_bin(lc->a, THB_UDIV, lin, per_panel));
    th_expr *idx = tlc_let(lc, "pix", th_bin(lc->a, THB_UREM, lin, per_panel));
    th_expr *first = th_bin(lc->a, THB_MUL, panel, p);
    th_expr *h = tlc_let(lc, "pw", th_bin(lc->a, THB_MIN, p, th_bin(lc->a, THB_SUB, along, first)));
    th_expr *a_idx = tlc_let(lc, "pa", th_bin(lc->a, THB_ADD, first, th_bin(lc->a, THB_UREM, idx, h)));
    th_expr *b_idx = tlc_let(lc, "pb", th_bin(lc->a, THB_UDIV, idx, h));
    if (k->swizzle_col) {
        out[0] = a_idx;
        out[1] = b_idx;
    } else {
        out[1] = a_idx;
        out[0] = b_idx;
    }
}

/* T.get_thread_binding's axes, x fastest, taken apart from the block's
 * one-dimensional thread index (read anew wherever used: the loops around
 * Pipelined loops re-read tid). */
static void thread_indices(tlc_lower_ctx *lc) {
    const tir_kernel *k = lc->k;
    int below = 1;
    for (int i = 0; i < 3; i++) {
        if (k->thread_idx[i]) {
            th_expr *t = th_read(lc->a, lc->tid);
            if (below > 1) t = th_bin(lc->a, THB_UDIV, t, tlc_i32(lc, below));
            if (below * k->thread_dims[i] < k->threads) t = th_bin(lc->a, THB_UREM, t, tlc_i32(lc, k->thread_dims[i]));
            lc->var_expr[k->thread_idx[i]->id] = t;
        }
        below *= k->thread_dims[i];
    }
}

static void block_indices(tlc_lower_ctx *lc, th_expr **out) {
    static const th_special ctaid[3] = {THS_CTAID_X, THS_CTAID_Y, THS_CTAID_Z};
    for (int i = 0; i < 3; i++) out[i] = th_special_reg(lc->a, ctaid[i]);
    const tir_kernel *k = lc->k;
    if (!k->use_swizzle || k->grid_rank < 2 || k->swizzle_panel <= 1) return;
    th_expr *gx = th_special_reg(lc->a, THS_NCTAID_X), *gy = th_special_reg(lc->a, THS_NCTAID_Y);
    tlc_block_swizzle(lc, th_bin(lc->a, THB_ADD, th_bin(lc->a, THB_MUL, out[1], gx), out[0]), gx, gy, out);
}

/* ---------------- kernel ---------------- */

/* What lowering cannot hold: refused before anything is emitted, so that
 * no error path leaves a statement list half built. */
static bool buffers_fit(const tir_kernel *k, tlc_diag *diag) {
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers[i];
        if (b->scope == TIR_SCOPE_GLOBAL && b->param_index < 0 && !b->view_of) {
            tlc_error(diag, b->loc, "alloc_global inside 'with Kernel' is not lowered: declare '%s' before the "
                      "'with Kernel' block, where it is a workspace the runtime allocates", b->name);
            return false;
        }
        if (b->scope == TIR_SCOPE_FRAGMENT) {
            if (!b->fragment) {
                tlc_error(diag, b->loc, "internal error: fragment '%s' has no layout", b->name);
                return false;
            }
            int64_t regs = (b->fragment->slots * tir_dtype_bytes(b->dtype) + 3) / 4;
            if (regs > TLC_FRAGMENT_MAX_REGS) {
                tlc_error(diag, b->loc, "fragment '%s' needs %lld registers per thread (at most %d): "
                                        "use a smaller tile or more threads", b->name, (long long)regs,
                          TLC_FRAGMENT_MAX_REGS);
                return false;
            }
        } else if (b->scope == TIR_SCOPE_LOCAL) {
            int64_t n = tir_buffer_elems(b);
            if (n < 1 || n > TLC_LOCAL_MAX_ELEMS) {
                tlc_error(diag, b->loc, "local buffer '%s' must have 1..%d elements", b->name, TLC_LOCAL_MAX_ELEMS);
                return false;
            }
        }
    }
    return true;
}

static th_kernel *lower_kernel(const tir_module *m, int index, tlrt_kernel_meta *meta, tlc_arena *a,
                               tlc_diag *diag) {
    const tir_kernel *k = m->kernels[index];
    th_kernel *tk = TLC_NEW(a, th_kernel);
    tk->name = k->name;
    tk->threads = k->threads;
    tlc_lower_ctx lcs = {.a = a, .diag = diag, .k = k, .tk = tk, .arch = m->arch};
    tlc_lower_ctx *lc = &lcs;
    lc->lower_stmt = tlc_lower_stmt;
    lc->plan = k->plan;
    if (!lc->plan) {
        tlc_error(diag, k->loc, "internal error: kernel '%s' was not planned", k->name);
        return NULL;
    }
    lc->smem_top = lc->plan->smem_bytes;
    tk->min_blocks_per_sm = lc->plan->min_blocks_per_sm;
    tk->fast_math = k->fast_math;
    lc->scratch_hit = -1;
    lc->smem_unfenced = TLC_NEW_ARRAY(a, bool, (size_t)effect_ids(lc) + 1);
    size_t nv = (size_t)k->nvars + 1, nb = (size_t)k->nbuffers + 1;
    lc->var_expr = TLC_NEW_ARRAY(a, th_expr *, nv);
    lc->var_slot = TLC_NEW_ARRAY(a, th_var *, nv);
    lc->var_lo = TLC_NEW_ARRAY(a, int64_t, nv);
    lc->var_hi = TLC_NEW_ARRAY(a, int64_t, nv);
    lc->var_known = TLC_NEW_ARRAY(a, bool, nv);
    lc->regs = TLC_NEW_ARRAY(a, th_var *, nb);
    lc->acc_packed = TLC_NEW_ARRAY(a, th_var *, nb);
    lc->tensor_param = TLC_NEW_ARRAY(a, int, nb);
    lc->addressed = TLC_NEW_ARRAY(a, bool, nb);
    lc->sym_param = TLC_NEW_ARRAY(a, int, (size_t)k->nsym + 1);
    for (size_t i = 0; i < nb; i++) lc->tensor_param[i] = -1;

    /* Parameters: tensors, then syms, then scalars (metadata.h's ABI). */
    int np = 0;
    tk->params = TLC_NEW_ARRAY(a, th_param, (size_t)k->nparams + (size_t)k->nsym + 1 + TLC_PIPE_MAX_COPIES * 16);
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].kind == TIR_PARAM_TENSOR) {
            lc->tensor_param[k->params[i].buf->id] = np;
            tk->params[np++] = (th_param){k->params[i].name, th_ptr(TH_AS_GLOBAL), 0};
        }
    /* a view of a tensor addresses the tensor's memory */
    for (int i = 0; i < k->nbuffers; i++)
        if (k->buffers[i]->view_of && k->buffers[i]->scope == TIR_SCOPE_GLOBAL)
            lc->tensor_param[k->buffers[i]->id] = lc->tensor_param[k->buffers[i]->view_of->id];
    for (int i = 0; i < k->nsym; i++) {
        lc->sym_param[i] = np;
        tk->params[np++] = (th_param){k->sym_dims[i]->name, th_scalar(TH_I64), 0};
    }
    int first_scalar = np;
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].kind == TIR_PARAM_SCALAR)
            tk->params[np++] = (th_param){k->params[i].name, th_from_dtype(k->params[i].var->dtype), 0};
    tlc_pipe_collect_tmaps(lc, &np); /* TMA descriptors: after the scalars */
    if (lc->plan->ws.dynamic_tiles) /* run-time tiles: the counter pair, last (metadata.h's ABI) */
        tk->params[np++] = (th_param){"tile_counter", th_ptr(TH_AS_GLOBAL), 0};
    tlc_pipe_sym_facts(lc);
    tk->nparams = np;
    if (!buffers_fit(k, diag)) return NULL;

    tlc_ptrvec top = {0};
    lc->out = &top;
    if (k->pdl_wait && tlc_target_of(m->arch)->griddepcontrol) {
        tk->pdl_wait = true;
        /* pdl_sync() waits where it is written, except in a warp-
         * specialized kernel, where both roles load: there before anything,
         * in every thread (waiting earlier is always correct) */
        if (lc->plan->ws.loop) tlc_emit_ptx(lc, tlc_ptx_griddepcontrol_wait(), NULL, 0, NULL, 0);
    }
    lc->tid = th_new_var(a, tk, "tid", th_scalar(TH_I32), 0);
    lc->block_tid = lc->tid;
    lc->threads = k->threads;
    tlc_emit(lc, th_assign(a, lc->tid, NULL, th_special_reg(a, THS_TID_X)));
    for (int i = 0; i < k->nsym; i++)
        lc->var_expr[k->sym_dims[i]->id] =
            tlc_let(lc, "sym", th_convert(a, th_param_ref(a, tk, lc->sym_param[i]), th_scalar(TH_I32)));
    for (int i = 0, si = first_scalar; i < k->nparams; i++)
        if (k->params[i].kind == TIR_PARAM_SCALAR) {
            const tir_var *v = k->params[i].var;
            lc->var_expr[v->id] = tlc_coerce(lc, th_param_ref(a, tk, si++), tlc_reg_type(v->dtype));
        }
    th_expr *bidx[3];
    block_indices(lc, bidx);
    for (int i = 0; i < 3; i++)
        if (k->block_idx[i]) lc->var_expr[k->block_idx[i]->id] = bidx[i];
    thread_indices(lc);

    /* Register arrays (their sizes were checked by buffers_fit). */
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers[i];
        if (b->view_of) continue;
        if (b->scope == TIR_SCOPE_FRAGMENT)
            lc->regs[b->id] = th_new_var(a, tk, b->name, tlc_reg_type(b->dtype), (int)b->fragment->slots);
        else if (b->scope == TIR_SCOPE_LOCAL)
            lc->regs[b->id] = th_new_var(a, tk, b->name, tlc_reg_type(b->dtype), (int)tir_buffer_elems(b));
        else if (b->scope == TIR_SCOPE_VAR)
            lc->regs[b->id] = th_new_var(a, tk, b->name, tlc_reg_type(b->dtype), 0);
    }
    /* a view is its base's registers (the same slots: tlc_fragment_reshape) */
    for (int i = 0; i < k->nbuffers; i++)
        if (k->buffers[i]->view_of) lc->regs[k->buffers[i]->id] = lc->regs[k->buffers[i]->view_of->id];

    effects pending = effects_new(lc);
    tlc_mbarriers_init(lc);
    if (tlc_ws_begin(lc)) { /* producer / consumer warpgroups (warp_specialize.c) */
        tlc_ptrvec *consumers = tlc_lower_begin(lc);
        lower_tile_stmt(lc, k->body, &pending);
        tlc_ws_finish(lc, tlc_lower_end(lc, consumers));
    } else {
        lower_tile_stmt(lc, k->body, &pending);
    }
    check_bounds_tests(lc, k->loc);
    tk->body = th_seq(a, (th_stmt **)top.items, top.len);
    tlc_ptrvec_free(&top);
    tlc_ptrvec_free(&lc->wgmma_in_flight);
    tlc_ptrvec_free(&lc->wgmma_deferred);
    tlc_ptrvec_free(&lc->wgmma_retired);
    tk->dyn_shared_bytes = lc->smem_top;
    if (lc->smem_top > tlc_target_of(m->arch)->max_shared_per_block) {
        tlc_error(diag, k->loc, "kernel '%s' needs %lld bytes of shared memory (with reduction scratch); %s allows %lld",
                  k->name, (long long)lc->smem_top, tlc_arch_name(m->arch), (long long)tlc_target_of(m->arch)->max_shared_per_block);
        return NULL;
    }
    if (!tlc_kernel_metadata(lc, meta)) return NULL;
    return diag->errors ? NULL : tk;
}

th_module *tlc_lower_module(const tir_module *m, tlc_arena *a, tlc_diag *diag) {
    th_module *tm = TLC_NEW(a, th_module);
    tm->arch = m->arch;
    tm->kernels = TLC_NEW_ARRAY(a, th_kernel *, (size_t)m->nkernels + 1);
    tlrt_kernel_meta *meta = TLC_NEW_ARRAY(a, tlrt_kernel_meta, (size_t)m->nkernels + 1);
    for (int i = 0; i < m->nkernels; i++) {
        th_kernel *k = lower_kernel(m, i, &meta[i], a, diag);
        if (!k) return NULL;
        tm->kernels[tm->nkernels++] = k;
    }
    tm->metadata = tlc_module_metadata(m, meta, a, diag);
    return tm->metadata ? tm : NULL;
}
