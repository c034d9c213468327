/* Warp specialization of a TMA-fed wgmma loop (docs/architecture.md,
 * "Warp specialization"), sm_90a only: the decision (a planning step) and
 * the lowering of the split kernel.
 *
 * Which kernels: the first Pipelined loop, reached through sequences and
 * serial loops, whose plan is TMA and whose body holds a wgmma, when the
 * producer can compute what its loads need: the loop's trip count, its
 * leading lets and its copies' coordinates, and the enclosing loops'
 * bounds depend only on block indices, symbolic dims, scalar parameters,
 * global tensors the kernel does not write, those loops' variables and a
 * slice of scalar statements at the loop's own level (producer_slice).
 * Anything else keeps the single-role pipeline of lower_pipeline.c.
 *
 * The split: the user's `threads` become the consumer warpgroups (so every
 * fragment layout, which is a function of tid, is unchanged) and one
 * producer warpgroup is added after them: the kernel is launched with
 * threads + 128 and minnctapersm set, so that setmaxnreg is honoured.
 *
 *   all:       thread 0 inits full[s] (count 1) and empty[s] (count:
 *              consumer warps, or consumer threads for attention bodies);
 *              bar.sync 0
 *   producer:  setmaxnreg.dec; thread `threads` alone replays the loop's
 *              ancestors and the slice, and at each run of the loop, for it
 *              in 0..n: the loads' lets (a page number from the block table),
 *              wait empty[g % S] (from g >= S on), arrive.expect_tx
 *              on full[g % S], issue the stage's TMA loads (g counts
 *              iterations over every run)
 *   consumers: setmaxnreg.inc; the rest of the body, with the loop as:
 *              gemm-only bodies: wait full[g % S]; wgmma ... wait_group 1;
 *              lane 0 of each warp arrives on empty[(g - 1) % S], whose
 *              wgmmas wait_group 1 just retired; wait_group 0 after the loop.
 *              Attention bodies: wait full[g % S] (or, with the overlap,
 *              the gemms issued ahead), the body through the driver's
 *              barrier tracker, every thread arrives on empty[g % S].
 *              Block barriers become bar.sync 1, threads (the producer
 *              never reaches them).
 * Register budget: every warp starts with R = 64K / (threads of the blocks
 * per SM); the producer keeps 40 (24 with 3 consumer warpgroups) and the
 * consumers take what it gives back, in multiples of 8, at most 240
 * (setmaxnreg.inc draws on the block's own pool).
 *
 * Preloads: copies global -> shared before the loop whose buffers only the
 * loop reads (attention's Q tile) are issued by the producer by TMA on their
 * own mbarrier pair, each run's after the run's first stage loads; the
 * consumers wait where the copy stands and release them after the last
 * read (plan.h).
 *
 * Persistent (a loop at the top level): the runtime launches min(tiles,
 * SMs x blocks per SM) blocks (metadata `persistent`), and both roles walk
 * the logical grid's tiles in rounds (tile_loop_begin), so the producer
 * loads the next tile's first stages while the consumers run the epilogue.
 * Stage and phase count iterations over all tiles and runs of the block
 * (`base` + ko). */
#include <stdlib.h>
#include <string.h>
#include "../ir/tir_access.h"
#include "../support/int_math.h"
#include "lower_internal.h"

/* Lowering state of a warp-specialized kernel; the decision is the plan's. */
struct tlc_ws_plan {
    const tlc_ws_decision *d;
    th_var *blk[3];      /* block indices, assigned per tile (persistent) */
    th_expr *grid[3], *ntiles; /* the logical grid */
    th_var *base;        /* consumers: pipeline iterations of earlier tiles */
    const tir_buffer *ahead_acc; /* overlap: the accumulator of the gemms run ahead */
    th_var *ahead_regs;          /* ... and its second register copy, which they fill */
    th_expr *counter;            /* run-time tiles: the counter pair's address (last parameter) */
    th_var *pre_count, *ppre_count; /* preloads waited for (consumers) / issued (producer) so far */
    th_expr *cluster_rank, *cluster_blocks; /* multicast: this block's rank, the cluster's blocks */
    th_var *role_waits; /* roles: the phases of the other side's mbarrier waited for so far (per role) */
};

static bool is_stmt(const tir_stmt *s, const void *x) { return s == x; }

/* ---------------- the decision (planning) ---------------- */
/* The producer's slice of the kernel: the scalar statements the loads
 * depend on. `path` holds the loop's ancestors (sequences and serial
 * loops), outermost first; needed vars and var buffers grow to a fixed
 * point. Global tensors the kernel writes cannot be read by the producer
 * (the consumers' writes are not ordered before its reads). */
typedef struct slicer {
    const tir_kernel *k;
    const tir_stmt *loop;
    const tlc_pipe_plan *pp;
    const tir_stmt *path[64]; int depth;
    bool *var_needed, *buf_needed, *written;
    tlc_ptrvec slice;
    bool ok, changed;
} slicer;

/* The producer replays the loop and its ancestors, so it has their loop
 * variables and no others. */
static bool loop_var_in_reach(const slicer *sl, const tir_var *v) {
    if (sl->loop->u.for_.vars[0] == v) return true;
    for (int i = 0; i < sl->depth; i++)
        if (sl->path[i]->kind == TS_FOR && sl->path[i]->u.for_.vars[0] == v) return true;
    return false;
}

static void need_var(slicer *sl, const tir_var *v) {
    if (v->kind == TV_LOOP && !loop_var_in_reach(sl, v)) sl->ok = false;
    if ((v->kind == TV_LET || v->kind == TV_LOOP) && !sl->var_needed[v->id]) sl->var_needed[v->id] = sl->changed = true;
}

static void need_expr(slicer *sl, const tir_expr *e) {
    if (!e || !sl->ok) return;
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: return;
    case TE_VAR: need_var(sl, e->u.var); return;
    case TE_LOAD: {
        const tir_buffer *b = e->u.load.buf;
        if (b->scope == TIR_SCOPE_VAR) {
            if (!sl->buf_needed[b->id]) sl->buf_needed[b->id] = sl->changed = true;
            return;
        }
        if (b->scope != TIR_SCOPE_GLOBAL || sl->written[b->id]) {
            sl->ok = false;
            return;
        }
        for (int d = 0; d < b->rank; d++) need_expr(sl, e->u.load.idx[d]);
        return;
    }
    case TE_BINARY:
        need_expr(sl, e->u.bin.a);
        need_expr(sl, e->u.bin.b);
        return;
    case TE_UNARY: need_expr(sl, e->u.un.a); return;
    case TE_CAST: need_expr(sl, e->u.cast.a); return;
    case TE_SELECT:
        need_expr(sl, e->u.sel.cond);
        need_expr(sl, e->u.sel.a);
        need_expr(sl, e->u.sel.b);
        return;
    case TE_SHUFFLE: sl->ok = false; return; /* not in warp-specialized (not thread-indexed) kernels */
    }
}

static bool on_path(const slicer *sl, const tir_stmt *s) {
    for (int i = 0; i < sl->depth; i++)
        if (sl->path[i] == s) return true;
    return false;
}

static void add_to_slice(slicer *sl, const tir_stmt *s) {
    for (int i = 0; i < sl->slice.len; i++)
        if (sl->slice.items[i] == s) return;
    tlc_ptrvec_push(&sl->slice, (void *)s);
    sl->changed = true;
}

/* A scalar statement that defines something needed joins the slice when it
 * runs at the loop's own level (in a sequence on the path); anywhere else
 * (inside another loop, an if, the loop's body) the producer could not
 * follow it. */
static void scan_slice(slicer *sl, const tir_stmt *s, bool level) {
    if (!s || !sl->ok) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) scan_slice(sl, s->u.seq.stmts[i], level);
        return;
    case TS_FOR:
        if (s == sl->loop) {
            const tir_stmt *body = s->u.for_.body;
            int n = body->kind == TS_SEQ ? body->u.seq.n : 1;
            for (int i = sl->pp->nprefix; i < n; i++)
                scan_slice(sl, body->kind == TS_SEQ ? body->u.seq.stmts[i] : body, false);
            return;
        }
        scan_slice(sl, s->u.for_.body, level && on_path(sl, s));
        return;
    case TS_IF:
        scan_slice(sl, s->u.if_.then, false);
        scan_slice(sl, s->u.if_.els, false);
        return;
    case TS_LET: case TS_ASSIGN:
        if (!sl->var_needed[s->u.let.var->id]) return;
        if (!level) sl->ok = false;
        add_to_slice(sl, s);
        need_expr(sl, s->u.let.value);
        return;
    case TS_STORE:
        if (s->u.store.buf->scope != TIR_SCOPE_VAR || !sl->buf_needed[s->u.store.buf->id]) return;
        if (!level) sl->ok = false;
        add_to_slice(sl, s);
        need_expr(sl, s->u.store.value);
        return;
    default: return;
    }
}

/* Grows the slice until every needed value is defined in it. */
static bool slice_fixed_point(const tir_kernel *k, slicer *sl) {
    for (int round = 0; sl->ok && round <= k->nvars + k->nbuffers; round++) {
        sl->changed = false;
        scan_slice(sl, k->body, true);
        if (!sl->changed) break;
    }
    return sl->ok;
}

/* The producer's slice for the loop at the end of `path` (false: none). */
static bool producer_slice(const tir_kernel *k, slicer *sl, tlc_arena *a) {
    sl->k = k;
    sl->var_needed = TLC_NEW_ARRAY(a, bool, (size_t)k->nvars + 1);
    sl->buf_needed = TLC_NEW_ARRAY(a, bool, (size_t)k->nbuffers + 1);
    sl->written = TLC_NEW_ARRAY(a, bool, (size_t)k->nbuffers + 1);
    tir_stmt_mark_written(k->body, sl->written);
    sl->ok = true;
    const tir_stmt *s = sl->loop;
    need_expr(sl, s->u.for_.start[0]);
    need_expr(sl, s->u.for_.extent[0]);
    const tir_stmt *body = s->u.for_.body;
    for (int i = 0; i < sl->pp->nprefix; i++) {
        const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
        if (x->kind == TS_LET) need_expr(sl, x->u.let.value);
    }
    for (int c = 0; c < sl->pp->ncopies; c++) { /* the prefix's copies and those issued with them */
        const tir_im2col *ic = sl->pp->im2col[c];
        if (ic) { /* what the im2col instruction's coordinates and offsets are made of */
            const tir_expr *use[] = {ic->first_pixel, ic->channel, ic->kh, ic->kw, ic->out_h, ic->out_w,
                                     ic->stride, ic->dilation, ic->pad};
            for (size_t u = 0; u < sizeof use / sizeof use[0]; u++) need_expr(sl, use[u]);
            continue;
        }
        const tir_region *src = &sl->pp->copies[c]->u.copy.src;
        for (int d = 0; d < src->rank; d++) need_expr(sl, src->start[d]);
    }
    for (int i = 0; i < sl->depth; i++) {
        const tir_stmt *p = sl->path[i];
        if (p->kind != TS_FOR) continue;
        if (p->u.for_.step <= 0) return false;
        need_expr(sl, p->u.for_.start[0]);
        need_expr(sl, p->u.for_.extent[0]);
    }
    return slice_fixed_point(k, sl);
}

/* How the body after the loads uses the stages: *gemm_only when it is
 * nothing but wgmma gemms on stage buffers; false when it holds no wgmma
 * at all (nothing for consumers to overlap). *max_n: the widest wgmma. */
static bool is_wgmma(const tlc_kernel_plan *p, const tir_stmt *x) {
    const tlc_gemm_plan *g = x->kind == TS_GEMM ? tlc_plan_gemm(p, x) : NULL;
    return g && g->inst == TLC_INST_WGMMA;
}

static bool body_qualifies(const tlc_kernel_plan *p, const tir_stmt *body, int first, bool *gemm_only, int *max_n) {
    tlc_ptrvec ops = {0};
    int n = body->kind == TS_SEQ ? body->u.seq.n : 1;
    *gemm_only = true;
    *max_n = 0;
    int wgmmas = 0;
    for (int i = first; i < n; i++) {
        const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
        if (!is_wgmma(p, x)) *gemm_only = false;
        tir_collect_tile_ops(x, &ops);
    }
    for (int i = 0; i < ops.len; i++) {
        const tir_stmt *x = ops.items[i];
        const tlc_gemm_plan *g = x->kind == TS_GEMM ? tlc_plan_gemm(p, x) : NULL;
        if (!g || g->inst != TLC_INST_WGMMA) continue;
        wgmmas++;
        if (g->inst_n > *max_n) *max_n = g->inst_n;
    }
    tlc_ptrvec_free(&ops);
    return wgmmas > 0;
}

/* The body's shape G X P R O and what each part may touch (plan.h). */
static void plan_defer(const tlc_kernel_plan *p, const tir_kernel *k, const tlc_pipe_plan *pp, const tir_stmt *body,
                       int *defer_x, int *defer_p, int *defer_r) {
    *defer_x = *defer_p = *defer_r = 0;
    /* a stage is released one iteration later than the body's own end:
     * with two, the next load would start only when it is already needed
     * (attention at head_dim 128 measured 12% slower on the H100) */
    if (body->kind != TS_SEQ || pp->stages < 3) return;
    int n = body->u.seq.n, first = pp->nprefix;
    tir_stmt *const *it = body->u.seq.stmts;
    /* G: the score gemm chain, after statements that only set its
     * accumulator (TileLang's examples start it at the mask: 0 or -inf)
     * and copies the producer issues */
    int gfirst = first;
    while (gfirst < n && !is_wgmma(p, it[gfirst])) gfirst++;
    if (gfirst >= n) return;
    int gend = gfirst;
    while (gend < n && is_wgmma(p, it[gend]) && (gend == gfirst || tlc_plan_gemm_op(p, it[gend])->chain_prev)) gend++;
    const tir_stmt *O = it[n - 1];
    if (gend >= n - 1 || !is_wgmma(p, O) || tlc_plan_gemm_op(p, O)->chain_prev) return;
    const tir_buffer *A = O->u.gemm.a.buf, *C = O->u.gemm.c.buf, *S = it[gfirst]->u.gemm.c.buf;
    if (A->scope != TIR_SCOPE_FRAGMENT || C->scope != TIR_SCOPE_FRAGMENT || C->dtype != TIR_F32 || C == S) return;
    size_t nb = (size_t)k->nbuffers + 1;
    bool *rd = calloc(nb, 1), *wr = calloc(nb, 1);
    int pidx = 0;
    bool ok = rd && wr;
    for (int j = first; ok && j < gfirst; j++) {
        if (tlc_pipe_is_copy(pp, it[j])) continue;
        tir_stmt_buffers_read_written(it[j], k->nbuffers, rd, wr);
        for (int b = 0; b < k->nbuffers; b++) ok &= !wr[b] || b == S->id;
        ok &= !rd[C->id]; /* R and O of the previous iteration now run after it */
    }
    for (int j = gend; ok && j < n - 1; j++) {
        if (tlc_pipe_is_copy(pp, it[j])) continue;
        tir_stmt_buffers_read_written(it[j], k->nbuffers, rd, wr);
        if (wr[A->id]) pidx = j;
        for (int b = 0; b < k->nbuffers; b++)
            if (wr[b] && k->buffers[b]->scope == TIR_SCOPE_SHARED) ok = false; /* no barriers to track */
        tlc_ptrvec ops = {0};
        tir_collect_tile_ops(it[j], &ops);
        for (int i = 0; i < ops.len; i++) ok &= !is_wgmma(p, ops.items[i]);
        tlc_ptrvec_free(&ops);
    }
    for (int j = gend; ok && pidx && j < n - 1; j++) {
        if (tlc_pipe_is_copy(pp, it[j])) continue;
        tir_stmt_buffers_read_written(it[j], k->nbuffers, rd, wr);
        if (j < pidx) { /* X: runs while O(k - 1) reads A and accumulates into C */
            ok = !rd[C->id] && !wr[C->id] && !wr[A->id];
        } else if (j > pidx) { /* R: runs while G(k) accumulates into S */
            for (int b = 0; b < k->nbuffers; b++) ok &= !wr[b] || b == C->id;
            ok &= !rd[S->id];
        } else { /* P */
            ok = !rd[C->id] && !wr[C->id];
        }
    }
    free(rd);
    free(wr);
    if (ok && pidx) {
        *defer_x = gend;
        *defer_p = pidx;
        *defer_r = pidx + 1;
    }
}

static bool region_constant(const tir_region *r) {
    for (int d = 0; d < r->rank; d++) {
        int64_t v;
        if (!tir_expr_const_int(r->start[d], &v)) return false;
    }
    return true;
}

/* Consumer overlap (plan.h, `lookahead`): at least three stages, and the
 * body after the loads starts with a chain of wgmma gemms into a float32
 * accumulator (a float16 one is waited for at every gemm, ops/gemm.c) whose first clears it, whose
 * operands nothing in the body writes (the stages aside) and whose regions
 * do not move with the iteration, and more follows it. */
static int plan_lookahead(const tlc_kernel_plan *p, const tir_stmt *loop, const tlc_pipe_plan *pp) {
    const tir_stmt *body = loop->u.for_.body;
    /* Running ahead waits for the next iteration's loads at the top of this
     * one. With two stages those were only just issued (their stage was
     * released at the end of the previous iteration), so the consumers
     * would wait out the whole load every iteration: MLA decode ran at
     * 0.65x instead of 0.79x of FlashMLA on the H100. A third stage keeps
     * a load in flight for a whole iteration. */
    if (pp->stages < 3 || body->kind != TS_SEQ) return 0;
    int n = body->u.seq.n, first = pp->nprefix, m = 0;
    const tir_buffer *C = NULL;
    for (int i = first; i < n; i++) {
        const tir_stmt *x = body->u.seq.stmts[i];
        const tlc_gemm_op_plan *g = x->kind == TS_GEMM ? tlc_plan_gemm_op(p, x) : NULL;
        if (!g || g->inst.inst != TLC_INST_WGMMA) break;
        if (i == first) {
            if (!x->u.gemm.clear_accum || x->u.gemm.c.buf->dtype != TIR_F32) return 0;
            C = x->u.gemm.c.buf;
        } else if (!g->chain_prev) {
            break;
        }
        if (x->u.gemm.a.buf->scope != TIR_SCOPE_SHARED || !region_constant(&x->u.gemm.a) ||
            !region_constant(&x->u.gemm.b) || !region_constant(&x->u.gemm.c))
            return 0;
        const tir_buffer *ops[2] = {x->u.gemm.a.buf, x->u.gemm.b.buf};
        for (int o = 0; o < 2; o++)
            for (int j = 0; j < n; j++) {
                const tir_stmt *y = body->u.seq.stmts[j];
                if (!tlc_pipe_is_copy(pp, y) && tir_stmt_writes(y, ops[o])) return 0;
            }
        m++;
        if (!g->chain_next) break;
    }
    if (!C || C->scope != TIR_SCOPE_FRAGMENT || first + m >= n) return 0;
    return m;
}

/* The first qualifying Pipelined loop, reached through sequences and serial
 * loops (sl->path). */
static const tir_stmt *find_loop(const tlc_kernel_plan *p, const tir_kernel *k, const tir_stmt *s, slicer *sl,
                                 tlc_arena *a) {
    if (!s || sl->depth >= (int)(sizeof sl->path / sizeof sl->path[0])) return NULL;
    if (s->kind == TS_FOR && s->u.for_.kind == TIR_FOR_PIPELINED) {
        const tlc_pipe_plan *pp = tlc_plan_pipe(p, s);
        if (!pp || !pp->tma || pp->ngathers) return NULL; /* (its producer issues TMA only) */
        sl->loop = s;
        sl->pp = pp;
        return producer_slice(k, sl, a) ? s : NULL;
    }
    /* (a loop that may end early, a while loop's, keeps its Pipelined
     * loops in every thread: the producer would need its condition) */
    bool serial = s->kind == TS_FOR && (s->u.for_.kind == TIR_FOR_SERIAL || s->u.for_.kind == TIR_FOR_UNROLLED) &&
                  !s->u.for_.cond;
    if (s->kind != TS_SEQ && !serial) return NULL;
    sl->path[sl->depth++] = s;
    if (serial) {
        const tir_stmt *r = find_loop(p, k, s->u.for_.body, sl, a);
        if (r) return r;
    } else {
        for (int i = 0; i < s->u.seq.n; i++) {
            slicer keep = *sl;
            const tir_stmt *r = find_loop(p, k, s->u.seq.stmts[i], sl, a);
            if (r) return r;
            if (sl->slice.items != keep.slice.items) tlc_ptrvec_free(&sl->slice); /* a failed try's */
            *sl = keep;
        }
    }
    sl->depth--;
    return NULL;
}

/* ---------------- preloads (plan.h) ---------------- */
typedef struct buffer_uses {
    const tir_buffer *b;
    int reads, writes;
} buffer_uses;

static void count_use(const tir_access *acc, void *ctx) {
    buffer_uses *u = ctx;
    if (acc->buf != u->b) return;
    if (acc->mode & TIR_ACCESS_READ) u->reads++;
    if (acc->mode & TIR_ACCESS_WRITE) u->writes++;
}

static buffer_uses uses_in(const tir_stmt *s, const tir_buffer *b) {
    buffer_uses u = {b, 0, 0};
    tir_stmt_accesses(s, count_use, &u);
    return u;
}

/* Copy s writes its buffer, which only the loop's body reads and nothing
 * else writes. */
static bool only_loop_reads(const tir_kernel *k, const tir_stmt *loop, const tir_stmt *s) {
    const tir_buffer *b = s->u.copy.dst.buf;
    buffer_uses all = uses_in(k->body, b), in_loop = uses_in(loop->u.for_.body, b), own = uses_in(s, b);
    return in_loop.writes == 0 && own.reads == 0 && all.writes == own.writes && all.reads == in_loop.reads;
}

/* The copies before the loop in its own sequence that the producer can
 * issue, and the slice grown by what their regions need (none when it
 * cannot compute that). */
static void plan_preloads(const tlc_kernel_plan *p, const tir_kernel *k, slicer *sl, tlc_ws_decision *w, tlc_arena *a) {
    if (p->ws_no_preload || sl->depth == 0 || sl->path[sl->depth - 1]->kind != TS_SEQ) return;
    const tir_stmt *seq = sl->path[sl->depth - 1];
    int tmaps = 0; /* the runtime encodes at most 8 tensor maps: every TMA pipeline's copies and the preloads */
    for (int i = 0; i < p->npipes; i++) tmaps += p->pipes[i].tma ? p->pipes[i].ncopies : 0;
    for (int i = 0; i < seq->u.seq.n && seq->u.seq.stmts[i] != w->loop; i++) {
        const tir_stmt *s = seq->u.seq.stmts[i];
        if (w->npreloads == TLC_WS_MAX_PRELOADS || tmaps >= 8) break;
        if (s->kind != TS_COPY || !tlc_tma_copy_fits(s) || sl->written[s->u.copy.src.buf->id]) continue;
        if (!only_loop_reads(k, w->loop, s)) continue;
        w->preloads[w->npreloads++] = s;
        tmaps++;
    }
    if (!w->npreloads) return;
    bool *var_needed = TLC_NEW_ARRAY(a, bool, (size_t)k->nvars + 1), *buf_needed = TLC_NEW_ARRAY(a, bool, (size_t)k->nbuffers + 1);
    memcpy(var_needed, sl->var_needed, (size_t)k->nvars * sizeof *var_needed);
    memcpy(buf_needed, sl->buf_needed, (size_t)k->nbuffers * sizeof *buf_needed);
    int len = sl->slice.len;
    for (int i = 0; i < w->npreloads; i++) {
        const tir_region *src = &w->preloads[i]->u.copy.src;
        for (int d = 0; d < src->rank; d++) need_expr(sl, src->start[d]);
    }
    if (slice_fixed_point(k, sl)) return;
    /* the slice as it was, without preloads */
    sl->var_needed = var_needed;
    sl->buf_needed = buf_needed;
    sl->slice.len = len;
    sl->ok = true;
    w->npreloads = 0;
}

/* With the deferred output gemm, the preloads may be released once the
 * last score gemm retires when nothing after the score gemms reads them. */
static bool preload_released_early(const tlc_ws_decision *w) {
    if (!w->defer_p) return false;
    const tir_stmt *body = w->loop->u.for_.body;
    for (int j = 0; j < body->u.seq.n; j++) {
        if (j >= w->pipe->nprefix && j < w->defer_x) continue;
        for (int i = 0; i < w->npreloads; i++)
            if (tir_stmt_touches(body->u.seq.stmts[j], w->preloads[i]->u.copy.dst.buf, TIR_ACCESS_READ_WRITE)) return false;
    }
    return true;
}

/* What a consumer thread keeps in registers: a wgmma m64nN needs about
 * N / 2 + 32, and an attention body holds all its fragments (the
 * accumulators, scores, their 16-bit copy, the overlap's second copy) at
 * once, plus about 32 for addresses and indices. */
static int fragment_regs(const tir_buffer *b) {
    return b->scope == TIR_SCOPE_FRAGMENT && b->fragment ? (int)((b->fragment->slots * tir_dtype_bytes(b->dtype) + 3) / 4) : 0;
}

/* Roles: the fragments the score warpgroup computes (written by the score
 * gemms, the owner and the late statements); *read: those they read. */
static void score_fragments(const tir_kernel *k, const tlc_ws_decision *w, bool *owned, bool *read) {
    const tir_turns *t = w->turns;
    const tir_stmt *body = w->loop->u.for_.body;
    size_t nb = (size_t)k->nbuffers + 1;
    bool *rd = calloc(nb, 1), *wr = calloc(nb, 1);
    for (int j = t->first; rd && wr && j < body->u.seq.n; j++) {
        if (t->role[j] != TIR_TURN_OWNER && t->role[j] != TIR_TURN_LATE) continue;
        tir_stmt_buffers_read_written(body->u.seq.stmts[j], k->nbuffers, rd, wr);
        for (int b = 0; b < k->nbuffers; b++) {
            bool frag = k->buffers[b]->scope == TIR_SCOPE_FRAGMENT;
            owned[b] |= frag && wr[b];
            if (read) read[b] |= frag && rd[b];
        }
    }
    free(rd);
    free(wr);
}

static int consumer_regs_needed(const tir_kernel *k, const tlc_ws_decision *w) {
    int64_t frag = 0;
    bool *owned = w->roles ? calloc((size_t)k->nbuffers + 1, 1) : NULL;
    if (owned) score_fragments(k, w, owned, NULL);
    for (int i = 0; i < k->nbuffers; i++) /* with roles, the score warpgroup's are not theirs */
        if (!owned || !owned[i]) frag += fragment_regs(k->buffers[i]);
    free(owned);
    if (w->lookahead) frag += w->loop->u.for_.body->u.seq.stmts[w->pipe->nprefix]->u.gemm.c.buf->fragment->slots;
    int64_t need = frag + 32;
    return (int)(need > w->max_wgmma_n / 2 + 32 ? need : w->max_wgmma_n / 2 + 32);
}

/* A consumer's registers after setmaxnreg with `blocks` blocks per SM:
 * every warp starts with R = 64K / (threads of the blocks on the SM), in
 * multiples of 8 (ptxas takes the whole cap when setmaxnreg is used), and
 * setmaxnreg.inc draws only on what the block's own producer gave back
 * with setmaxnreg.dec: asking for more blocks the consumers forever
 * (measured on the H100 with two 384-thread blocks per SM). At most 240. */
static int entry_regs(const tlc_target *t, const tlc_ws_decision *w, int blocks) {
    int total = w->consumer_threads + w->producer_threads + w->score_threads;
    return t->regs_per_sm / (blocks * total) / 8 * 8;
}

static int consumer_regs(const tlc_target *t, const tlc_ws_decision *w, int blocks) {
    int R = entry_regs(t, w, blocks);
    if (w->keep_regs) return R;
    int freed = w->producer_threads * (R - w->reg_dec) + w->score_threads * (R - w->reg_score);
    int inc = (R + freed / w->consumer_threads) / 8 * 8;
    return inc > 240 ? 240 : inc;
}

/* Which block indices (bit i: axis i) an expression depends on, through
 * the slice's lets and assignments (mask[var id], filled in source order);
 * a var buffer's value counts as depending on all. */
static int block_deps(const tir_expr *e, const int *mask) {
    if (!e) return 0;
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: return 0;
    case TE_VAR:
        return e->u.var->kind == TV_BLOCK_IDX ? 1 << e->u.var->axis : mask[e->u.var->id];
    case TE_LOAD: {
        if (e->u.load.buf->scope == TIR_SCOPE_VAR) return 7;
        int m = 0;
        for (int d = 0; d < e->u.load.buf->rank; d++) m |= block_deps(e->u.load.idx[d], mask);
        return m;
    }
    case TE_BINARY: return block_deps(e->u.bin.a, mask) | block_deps(e->u.bin.b, mask);
    case TE_UNARY: return block_deps(e->u.un.a, mask);
    case TE_CAST: return block_deps(e->u.cast.a, mask);
    case TE_SELECT:
        return block_deps(e->u.sel.cond, mask) | block_deps(e->u.sel.a, mask) | block_deps(e->u.sel.b, mask);
    case TE_SHUFFLE: return 7;
    }
    return 7;
}

/* The block indices the slice's lets and assignments depend on, per var
 * (calloc'd; NULL when out of memory). */
static int *slice_block_deps(const tir_kernel *k, const tlc_ws_decision *w) {
    int *mask = calloc((size_t)k->nvars + 1, sizeof *mask);
    if (!mask) return NULL;
    for (int i = 0; i < w->nslice; i++) {
        const tir_stmt *s = w->slice[i];
        if (s->kind == TS_LET || s->kind == TS_ASSIGN) mask[s->u.let.var->id] |= block_deps(s->u.let.value, mask);
    }
    return mask;
}

/* Multicast: the block indices the producer's program depends on: the
 * loop's trip count, its ancestors' bounds and its loads' coordinates. */
static int producer_block_deps(const tir_kernel *k, const tlc_ws_decision *w, const tir_stmt *const *path, int depth) {
    int *mask = slice_block_deps(k, w);
    if (!mask) return 7;
    int m = block_deps(w->loop->u.for_.extent[0], mask);
    /* the lets in front of the loads (a page number read from a table) */
    const tir_stmt *body = w->loop->u.for_.body;
    for (int i = 0; body->kind == TS_SEQ && i < w->pipe->nprefix; i++) {
        const tir_stmt *s = body->u.seq.stmts[i];
        if (s->kind == TS_LET) mask[s->u.let.var->id] |= block_deps(s->u.let.value, mask);
    }
    for (int i = 0; i < depth; i++)
        if (path[i]->kind == TS_FOR)
            m |= block_deps(path[i]->u.for_.start[0], mask) | block_deps(path[i]->u.for_.extent[0], mask);
    for (int i = 0; i < w->pipe->ncopies; i++) {
        if (w->pipe->im2col[i]) { /* (not traced: taken as depending on every block index) */
            free(mask);
            return 7;
        }
        const tir_region *r = &w->pipe->copies[i]->u.copy.src;
        for (int d = 0; d < r->buf->rank; d++) m |= block_deps(r->start[d], mask);
    }
    free(mask);
    return m;
}

static const char *multicast_refusal(const tir_kernel *k, const tlc_ws_decision *w, const tir_stmt *const *path,
                                     int depth, tlc_arena *a) {
    if (w->npreloads) return "the loop has preloads";
    if (k->use_swizzle) return "use_swizzle remaps the block indices, so a cluster's blocks need not share them";
    int deps = producer_block_deps(k, w, path, depth) & tir_cluster_axes(k);
    if (!deps) return NULL;
    int axis = deps & 1 ? 0 : deps & 2 ? 1 : 2;
    return tlc_arena_printf(a, "the producer's loads depend on block index %s, which varies within a cluster",
                            k->block_idx[axis] ? k->block_idx[axis]->name : "?");
}

static int trip_count_block_deps(const tir_kernel *k, const tlc_ws_decision *w) {
    int *mask = slice_block_deps(k, w);
    if (!mask) return 7;
    int m = block_deps(w->loop->u.for_.extent[0], mask);
    free(mask);
    return m;
}

/* Warpgroup turns: does each warpgroup hold the whole of f (its thread
 * digits within 128 threads, the warpgroups replicas)? */
static bool held_per_warpgroup(const tlc_fragment *f, int threads) {
    if (!f || f->threads != threads) return false;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->target == TLC_DIGIT_THREAD && g->dim >= 0 && g->tstride * g->extent > 128) return false;
    }
    return true;
}

typedef struct turn_check {
    tlc_arena *a;
    int threads;
    const char *why;
} turn_check;

static void check_owned_write(const tir_access *acc, void *ctx) {
    turn_check *c = ctx;
    const tir_buffer *b = acc->buf;
    if (c->why || !(acc->mode & TIR_ACCESS_WRITE) || b->scope != TIR_SCOPE_FRAGMENT) return;
    if (!held_per_warpgroup(b->fragment, c->threads))
        c->why = tlc_arena_printf(c->a, "fragment '%s' is spread over both warpgroups", b->name);
}

static const char *exchanged_refusal(tlc_arena *a, tir_buffer *const *v, int n) {
    for (int i = 0; i < n; i++)
        if ((v[i]->dtype != TIR_F32 && v[i]->dtype != TIR_I32) || tlc_fragment_has_padding(v[i]->fragment))
            return tlc_arena_printf(a, "fragment '%s' would pass between the warpgroups, which takes float32 "
                                       "or int32 fragments without padding",
                                    v[i]->name);
    return NULL;
}

/* Why the loop's warpgroup turns (turns=True) cannot be taken (NULL: they
 * can). The analysis (turns.c) records them only for blocks of two
 * warpgroups. */
static const char *turns_refusal(const tir_kernel *k, const tlc_ws_decision *w, tlc_arena *a) {
    const tir_turns *t = w->loop->u.for_.turns;
    if (!t) return "it takes two consumer warpgroups";
    if (w->gemm_only) return "the body is nothing but gemms";
    if (w->pipe->nprefix > t->first) return "a pipelined load comes after the score gemms";
    const tir_stmt *body = w->loop->u.for_.body;
    turn_check c = {a, k->threads, NULL};
    for (int j = 0; j < body->u.seq.n && !c.why; j++)
        if (t->role[j] == TIR_TURN_OWNER || t->role[j] == TIR_TURN_LATE)
            tir_stmt_accesses(body->u.seq.stmts[j], check_owned_write, &c);
    if (c.why) return c.why;
    const char *why = exchanged_refusal(a, t->published, t->npublished);
    return why ? why : exchanged_refusal(a, t->handed, t->nhanded);
}

/* A slice's statements in source order (the slice's vector freed). */
static const tir_stmt **source_order(tlc_ptrvec *v, int *n, tlc_arena *a) {
    const tir_stmt **out = TLC_NEW_ARRAY(a, const tir_stmt *, (size_t)v->len + 1);
    for (int i = 0; i < v->len; i++) {
        const tir_stmt *x = v->items[i];
        int j = i;
        for (; j > 0 && (out[j - 1]->loc.line > x->loc.line ||
                         (out[j - 1]->loc.line == x->loc.line && out[j - 1]->loc.col > x->loc.col));
             j--)
            out[j] = out[j - 1];
        out[j] = x;
    }
    *n = v->len;
    tlc_ptrvec_free(v);
    return out;
}

/* ---------------- warpgroup roles (plan.h) ---------------- */
/* The variables the loop's body defines (its lets, its loops' variables):
 * the score warpgroup computes them itself. */
static void mark_defined(const tir_stmt *s, bool *defined) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) mark_defined(s->u.seq.stmts[i], defined);
        return;
    case TS_FOR:
        for (int i = 0; i < s->u.for_.nvars; i++) defined[s->u.for_.vars[i]->id] = true;
        mark_defined(s->u.for_.body, defined);
        return;
    case TS_IF:
        mark_defined(s->u.if_.then, defined);
        mark_defined(s->u.if_.els, defined);
        return;
    case TS_LET: defined[s->u.let.var->id] = true; return;
    default: return;
    }
}

typedef struct score_seed {
    slicer *sl;
    const bool *defined;
} score_seed;

static void seed_score_var(const tir_var *v, void *ctx) {
    score_seed *ss = ctx;
    if (!ss->defined[v->id]) need_var(ss->sl, v);
}

static void seed_score_buffer(const tir_access *acc, void *ctx) {
    slicer *sl = ((score_seed *)ctx)->sl;
    const tir_buffer *b = acc->buf;
    if ((acc->mode & TIR_ACCESS_READ) && b->scope == TIR_SCOPE_VAR && !sl->buf_needed[b->id])
        sl->buf_needed[b->id] = sl->changed = true;
}

static void seed_score_stmt(score_seed *ss, const tir_stmt *x) {
    tir_stmt_vars(x, seed_score_var, ss);
    tir_stmt_accesses(x, seed_score_buffer, ss);
}

/* The statements before the loop in its sequence that set the handed-over
 * fragments (the running max and sum start values); NULL, or why the
 * score warpgroup cannot run them. */
static const char *find_score_inits(const tir_kernel *k, tlc_ws_decision *w, const slicer *sl, tlc_ptrvec *inits,
                                    tlc_arena *a) {
    const tir_turns *t = w->turns;
    if (!t->nhanded) return NULL;
    const tir_stmt *seq = sl->depth ? sl->path[sl->depth - 1] : NULL;
    if (!seq || seq->kind != TS_SEQ) return "the loop is not in a sequence of statements";
    size_t nb = (size_t)k->nbuffers + 1;
    bool *rd = calloc(nb, 1), *wr = calloc(nb, 1), *handed = calloc(nb, 1), *set = calloc(nb, 1);
    const char *why = !rd || !wr || !handed || !set ? "out of memory" : NULL;
    for (int i = 0; !why && i < t->nhanded; i++) handed[t->handed[i]->id] = true;
    for (int i = 0; !why && i < seq->u.seq.n && seq->u.seq.stmts[i] != w->loop; i++) {
        const tir_stmt *x = seq->u.seq.stmts[i];
        tir_stmt_buffers_read_written(x, k->nbuffers, rd, wr);
        const tir_buffer *sets = NULL;
        for (int b = 0; b < k->nbuffers && !sets; b++)
            if (wr[b] && handed[b]) sets = k->buffers[b];
        if (!sets) continue;
        for (int b = 0; !why && b < k->nbuffers; b++) {
            const tir_buffer *B = k->buffers[b];
            if (wr[b] && !handed[b])
                why = tlc_arena_printf(a, "the statement at line %d sets '%s' with '%s'", x->loc.line, B->name,
                                       sets->name);
            else if (rd[b] && B->scope != TIR_SCOPE_GLOBAL && B->scope != TIR_SCOPE_VAR)
                why = tlc_arena_printf(a, "the statement at line %d sets a handed-over fragment from '%s'", x->loc.line,
                                       B->name);
            if (wr[b]) set[b] = true;
        }
        tlc_ptrvec_push(inits, (void *)x);
    }
    for (int i = 0; !why && i < t->nhanded; i++)
        if (!set[t->handed[i]->id])
            why = tlc_arena_printf(a, "'%s' is not set before the loop in the loop's own sequence", t->handed[i]->name);
    free(rd);
    free(wr);
    free(handed);
    free(set);
    return why;
}

/* Why roles cannot be taken for the turns loop (NULL: they are, with the
 * score warpgroup's program and registers in w). `tmpl` holds the loop's
 * path. */
static const char *plan_roles(const tlc_target *t, const tir_kernel *k, tlc_ws_decision *w, const slicer *tmpl,
                              tlc_arena *a) {
    if (w->dynamic_tiles) return "the blocks take their tiles at run time";
    size_t nb = (size_t)k->nbuffers + 1;
    bool *owned = TLC_NEW_ARRAY(a, bool, nb), *read = TLC_NEW_ARRAY(a, bool, nb);
    score_fragments(k, w, owned, read);
    for (int b = 0; b < k->nbuffers; b++)
        if (read[b] && !owned[b])
            return tlc_arena_printf(a, "'%s' is computed outside the loop, where the score warpgroup does not run",
                                    k->buffers[b]->name);
    tlc_ptrvec inits = {0};
    const char *why = find_score_inits(k, w, tmpl, &inits, a);
    if (why) {
        tlc_ptrvec_free(&inits);
        return why;
    }
    /* the scalar statements the score warpgroup replays: the producer's
     * (the trip count, the loads' lets) and what its statements need */
    slicer sl = {.loop = tmpl->loop, .pp = tmpl->pp, .depth = tmpl->depth};
    memcpy(sl.path, tmpl->path, sizeof sl.path);
    bool ok = producer_slice(k, &sl, a);
    if (ok) {
        bool *defined = TLC_NEW_ARRAY(a, bool, (size_t)k->nvars + 1);
        mark_defined(w->loop->u.for_.body, defined);
        score_seed ss = {&sl, defined};
        const tir_turns *tt = w->turns;
        const tir_stmt *body = w->loop->u.for_.body;
        for (int j = tt->first; j < body->u.seq.n; j++)
            if (tt->role[j] == TIR_TURN_OWNER || tt->role[j] == TIR_TURN_LATE) seed_score_stmt(&ss, body->u.seq.stmts[j]);
        for (int i = 0; i < inits.len; i++) seed_score_stmt(&ss, inits.items[i]);
        ok = slice_fixed_point(k, &sl);
    }
    if (!ok) {
        tlc_ptrvec_free(&sl.slice);
        tlc_ptrvec_free(&inits);
        return "the score statements need a value the score warpgroup cannot compute where the loop stands";
    }
    w->score_slice = source_order(&sl.slice, &w->nscore_slice, a);
    w->score_inits = source_order(&inits, &w->nscore_inits, a);
    /* registers: the score warpgroup keeps its fragments and about 48 for
     * addresses and indices; the consumers get what is left */
    w->score_threads = 128;
    int score = 48;
    for (int b = 0; b < k->nbuffers; b++)
        if (owned[b]) score += fragment_regs(k->buffers[b]);
    w->reg_score = (score + 7) / 8 * 8;
    w->roles = true;
    if (w->reg_score < entry_regs(t, w, 1) && consumer_regs(t, w, 1) >= consumer_regs_needed(k, w)) return NULL;
    w->roles = false;
    w->score_threads = w->reg_score = w->nscore_slice = w->nscore_inits = 0;
    return "the registers of four warpgroups do not fit the score warpgroup and the consumers";
}

void tlc_plan_warp_specialization(tlc_kernel_plan *p, const tir_kernel *k, tlc_arena *a) {
    p->ws = (tlc_ws_decision){0};
    const tlc_target *t = tlc_target_of(p->arch);
    /* thread-indexed code keeps every thread's index (no producer warpgroup);
     * a program's own block barrier needs every warpgroup to reach it */
    if (!t->tma || !t->wgmma || !t->setmaxnreg || k->threads % 128 || k->threads < 128 || k->threads > 384 ||
        k->thread_indexed || k->program_barriers)
        return;
    tlc_ws_decision w = {.consumer_threads = k->threads, .producer_threads = 128, .keep_regs = k->keep_regs};
    slicer sl = {0};
    w.loop = find_loop(p, k, k->body, &sl, a);
    if (!w.loop) {
        tlc_ptrvec_free(&sl.slice);
        return;
    }
    w.pipe = sl.pp;
    plan_preloads(p, k, &sl, &w, a);
    bool any_wgmma = body_qualifies(p, w.loop->u.for_.body, w.pipe->nprefix, &w.gemm_only, &w.max_wgmma_n);
    w.late_release = w.gemm_only && w.pipe->stages >= 3;
    for (int i = 0; i < sl.depth; i++) w.nested |= sl.path[i]->kind == TS_FOR;
    w.slice = source_order(&sl.slice, &w.nslice, a);
    if (!any_wgmma) return; /* nothing for the consumers to overlap */
    bool clustered = tir_cluster_axes(k) != 0;
    if (clustered && w.pipe->tma) {
        w.multicast_refused = multicast_refusal(k, &w, sl.path, sl.depth, a);
        w.multicast = !w.multicast_refused;
    }
    /* a persistent grid is folded onto the SMs, which a cluster launch's
     * grid cannot be */
    w.persistent = k->grid_rank >= 1 && !w.nested && !p->ws_one_tile && !clustered;
    if (w.loop->u.for_.turns_hint) {
        w.turns_refused = turns_refusal(k, &w, a);
        if (!w.turns_refused) w.turns = w.loop->u.for_.turns;
    }
    /* with turns, each warpgroup's scores run under the other's work instead */
    if (!w.gemm_only && !w.turns)
        plan_defer(p, k, w.pipe, w.loop->u.for_.body, &w.defer_x, &w.defer_p, &w.defer_r);
    if (!w.gemm_only && !w.turns && !w.defer_p) w.lookahead = plan_lookahead(p, w.loop, w.pipe);
    w.preload_early = w.npreloads && preload_released_early(&w);
    if (w.persistent && !w.gemm_only) {
        int deps = trip_count_block_deps(k, &w);
        w.dynamic_tiles = deps != 0;
        w.heaviest_first = (deps & 1) && !(k->use_swizzle && k->grid_rank >= 2 && k->swizzle_panel > 1);
    }
    /* without room for the consumers' registers, no specialization; ptxas
     * also wants every instruction to fit the registers at entry (a wgmma
     * m64n256 under 128 is refused, C7602) */
    w.reg_dec = k->threads == 384 ? 24 : 40;
    if (w.turns && w.loop->u.for_.roles_hint && w.keep_regs) {
        w.roles_refused = "disable_warp_group_reg_alloc() keeps every warpgroup's registers, and the score "
                          "warpgroup gives some back";
    } else if (w.turns && w.loop->u.for_.roles_hint) {
        int dec = w.reg_dec;
        w.reg_dec = 24; /* four warpgroups */
        w.roles_refused = plan_roles(t, k, &w, &sl, a);
        if (w.roles_refused) w.reg_dec = dec;
    }
    int total = w.consumer_threads + w.producer_threads + w.score_threads;
    if (consumer_regs(t, &w, 1) < consumer_regs_needed(k, &w) || t->regs_per_sm / total < w.max_wgmma_n / 2 + 32) return;
    p->ws = w;
}

static int64_t *place_slots(tlc_arena *a, tir_buffer *const *v, int n, int64_t *top) {
    int64_t *at = TLC_NEW_ARRAY(a, int64_t, (size_t)n + 1);
    for (int i = 0; i < n; i++) {
        int64_t bytes = tir_dtype_bytes(v[i]->dtype);
        for (int d = 0; d < v[i]->rank; d++) bytes *= tir_buffer_dim(v[i], d);
        at[i] = tlc_align_up(*top, 16);
        *top = at[i] + bytes;
    }
    return at;
}

/* Turns: the owner statements may not use shared scratch (its barriers
 * would wait for the other warpgroup); the published and handed-over
 * fragments' slots follow the mbarriers. */
static void turn_slots(tlc_kernel_plan *p, tlc_ws_decision *w, int64_t *top, tlc_arena *a) {
    const tir_turns *t = w->turns;
    const tir_stmt *body = w->loop->u.for_.body;
    for (int j = 0; j < body->u.seq.n; j++) {
        if (t->role[j] != TIR_TURN_OWNER && t->role[j] != TIR_TURN_LATE) continue;
        tlc_ptrvec ops = {0};
        tir_collect_tile_ops(body->u.seq.stmts[j], &ops);
        bool scratch = false;
        for (int i = 0; i < ops.len; i++)
            scratch |= tlc_plan_scratch(p, ops.items[i]) != NULL || tlc_plan_fresh_scratch(p, ops.items[i]) != NULL;
        tlc_ptrvec_free(&ops);
        if (scratch) {
            w->turns = NULL;
            w->turns_refused = "a statement that computes from the scores needs shared scratch";
            return;
        }
    }
    w->published_at = place_slots(a, t->published, t->npublished, top);
    w->handed_at = place_slots(a, t->handed, t->nhanded, top);
}

void tlc_plan_warp_specialization_shared(tlc_kernel_plan *p, const tir_kernel *k, int64_t *top, tlc_arena *a) {
    tlc_ws_decision *w = &p->ws;
    if (!w->loop) return;
    const tlc_target *t = tlc_target_of(p->arch);
    int total = w->consumer_threads + w->producer_threads + w->score_threads, need = consumer_regs_needed(k, w);
    int S = w->pipe->stages;
    /* the stage loads that wait only for stages freed before the preloads:
     * with the early release (three stages or more), all but the last two
     * of the previous run */
    w->preload_after_loads = w->preload_early ? S - 2 : S;
    /* blocks per SM that the shared memory allows (1 KiB per block is the
     * hardware's reserve), at most 2 */
    int64_t smem = *top + 16 * (int64_t)S + (w->dynamic_tiles ? TLC_WS_TILE_RING_BYTES : 0) + (w->npreloads ? 16 : 0) + 1024 + 128;
    /* two blocks when the consumers' registers and, at entry, every
     * warp's cover a wgmma (ptxas, C7602) */
    bool regs2 = consumer_regs(t, w, 2) >= need && t->regs_per_sm / (2 * total) >= w->max_wgmma_n / 2 + 32 &&
                 (!w->roles || w->reg_score < entry_regs(t, w, 2)); /* the score warpgroup gives back, never takes */
    w->blocks_per_sm = smem * 2 <= t->shared_per_sm && total * 2 <= 1024 && regs2 ? 2 : 1;
    w->reg_inc = consumer_regs(t, w, w->blocks_per_sm);
    if (w->keep_regs) w->reg_dec = w->reg_inc;
    w->full = tlc_align_up(*top, 128);
    w->empty = tlc_align_up(w->full + 8 * (int64_t)S, 128);
    *top = w->empty + 8 * (int64_t)S;
    if (w->npreloads) {
        w->pre_full = *top;
        w->pre_empty = w->pre_full + 8;
        *top = w->pre_empty + 8;
    }
    if (w->roles) {
        w->role_published = *top;
        w->role_freed = w->role_published + 8;
        *top = w->role_freed + 8;
    }
    if (w->turns) turn_slots(p, w, top, a);
    if (w->dynamic_tiles) {
        w->tile_full = *top;
        w->tile_empty = w->tile_full + 16;
        w->tile_slots = w->tile_empty + 16;
        *top = w->tile_full + TLC_WS_TILE_RING_BYTES;
    }
}

/* A producer warpgroup costs a block its threads and, through setmaxnreg,
 * holds the consumers' registers for one or two blocks per SM. A kernel of
 * few threads whose unspecialized form fits twice the warpgroups then runs
 * more of its work at once without it, each block hiding the others' waits
 * and serial gemms (H200, docs/benchmarks.md: TileLang's FlashAttention
 * backward 1.5-1.7x, its softpipe GEMM 1.45x, the convolution at its
 * example tiles 1.1-1.4x faster unspecialized). Except where a persistent
 * producer's running ahead into the next tile matters more: a loop of a
 * constant trip count of at most 8 x (stages - 1), whose unspecialized
 * pipeline would fill anew every few iterations (DeepSeek V3.2's fp8 index
 * kernel, 4 iterations of 2 stages: 5-8% slower unspecialized). What the
 * program asked of the specialized kernel (turns, roles, its registers kept
 * by disable_warp_group_reg_alloc) and a cluster's multicast keep it. */
const char *tlc_ws_occupancy_refusal(const tlc_kernel_plan *p, const tir_kernel *k, int *blocks, tlc_arena *a) {
    const tlc_ws_decision *w = &p->ws;
    if (!w->loop || w->loop->u.for_.turns_hint || w->loop->u.for_.roles_hint || w->keep_regs || w->multicast)
        return NULL;
    int64_t trips;
    if (w->persistent && tir_expr_const_int(w->loop->u.for_.extent[0], &trips) && trips <= 8 * (w->pipe->stages - 1))
        return NULL;
    const tlc_target *t = tlc_target_of(p->arch);
    tlc_ws_decision plain = *w; /* the same fragments, without the overlap's second copy */
    plain.lookahead = 0;
    int need = consumer_regs_needed(k, &plain);
    if (need > t->max_regs_per_thread) need = t->max_regs_per_thread;
    need = (need + 7) / 8 * 8;
    /* blocks the shared memory (1 KiB reserve each), the registers (the
     * estimate, which minnctapersm then holds ptxas to) and an sm_90 SM's
     * 2048 threads allow */
    int n = (int)(t->shared_per_sm / (p->smem_bytes + 1024));
    int by_regs = t->regs_per_sm / (k->threads * need), by_threads = 2048 / k->threads;
    if (by_regs < n) n = by_regs;
    if (by_threads < n) n = by_threads;
    int specialized = w->blocks_per_sm * w->consumer_threads / 128, unspecialized = n * k->threads / 128;
    if (unspecialized < 2 * specialized) return NULL;
    *blocks = n;
    return tlc_arena_printf(a, "the loop over %s at line %d qualifies, but without a producer warpgroup %d block(s) "
                            "of %d warpgroup(s) fit an SM, against %d of %d with one",
                            w->loop->u.for_.vars[0]->name, w->loop->loc.line, n, k->threads / 128, w->blocks_per_sm,
                            w->consumer_threads / 128);
}

/* ---------------- lowering ---------------- */
bool tlc_ws_begin(tlc_lower_ctx *lc) {
    lc->ws = NULL;
    const tir_kernel *k = lc->k;
    const tlc_ws_decision *d = &lc->plan->ws;
    if (!d->loop) return false;
    tlc_ws_plan *w = TLC_NEW(lc->a, tlc_ws_plan);
    w->d = d;
    lc->tk->threads = d->consumer_threads + d->producer_threads + d->score_threads;
    lc->ws = w;
    /* persistent tiles: the logical grid (evaluated once, before the role
     * split) and block indices that each tile assigns */
    if (d->persistent) {
        th_expr *n = tlc_i32(lc, 1);
        for (int i = 0; i < 3; i++) {
            w->grid[i] = i < k->grid_rank ? tlc_let(lc, "gdim", tlc_coerce(lc, tlc_lower_expr(lc, k->grid[i]), th_scalar(TH_I32)))
                                          : tlc_i32(lc, 1);
            n = th_bin(lc->a, THB_MUL, n, w->grid[i]);
            if (k->block_idx[i]) {
                w->blk[i] = th_new_var(lc->a, lc->tk, k->block_idx[i]->name, th_scalar(TH_I32), 0);
                lc->var_expr[k->block_idx[i]->id] = th_read(lc->a, w->blk[i]);
            }
        }
        w->ntiles = tlc_let(lc, "ntiles", n);
    }
    if (d->dynamic_tiles) w->counter = th_param_ref(lc->a, lc->tk, lc->tk->nparams - 1);
    if (d->multicast) {
        th_var *v = tlc_temp(lc, "crank", th_scalar(TH_I32), 0);
        tlc_emit_ptx(lc, tlc_ptx_cluster_rank(), NULL, 0, &v, 1);
        w->cluster_rank = tlc_let(lc, "crank", th_read(lc->a, v));
        v = tlc_temp(lc, "cblocks", th_scalar(TH_I32), 0);
        tlc_emit_ptx(lc, tlc_ptx_cluster_blocks(), NULL, 0, &v, 1);
        w->cluster_blocks = tlc_let(lc, "cblocks", th_read(lc->a, v));
    }
    if (d->persistent || d->nested) w->base = tlc_temp(lc, "wsbase", th_scalar(TH_I32), 0);
    if (d->npreloads) w->pre_count = tlc_temp(lc, "precount", th_scalar(TH_I32), 0);
    if (d->roles) w->role_waits = tlc_temp(lc, "rolewaits", th_scalar(TH_I32), 0);
    if (d->lookahead) {
        const tir_buffer *C = d->loop->u.for_.body->u.seq.stmts[d->pipe->nprefix]->u.gemm.c.buf;
        w->ahead_acc = C;
        w->ahead_regs = th_new_var(lc->a, lc->tk, tlc_arena_printf(lc->a, "%s_ahead", C->name), tlc_reg_type(C->dtype),
                                   (int)C->fragment->slots);
    }
    return true;
}

int tlc_ws_persistent_blocks(const tlc_lower_ctx *lc) { return lc->ws && lc->ws->d->persistent ? lc->ws->d->blocks_per_sm : 0; }

typedef struct tile_loop {
    tlc_ptrvec *outer, *inner;
    th_var *round;
    th_expr *t;
    th_expr *bound; /* run-time tiles: the rounds' bound, tiles + 1 */
    th_expr *group; /* heaviest first: planes (y, z) per group of tiles */
    bool producer;
} tile_loop;

static th_expr *bar_addr(tlc_lower_ctx *lc, int64_t base, th_expr *stage);
static void wait_parity(tlc_lower_ctx *lc, th_expr *bar, th_expr *parity);
static th_stmt *wait_released(tlc_lower_ctx *lc, th_expr *bar, th_expr *round, th_expr *later);
static void mbar_arrive(tlc_lower_ctx *lc, th_expr *bar);

/* Run-time tiles, round j: the producer waits until the consumers have read
 * slot j % 2's previous tile, takes the next tile from the counter and
 * publishes it; the consumers wait for it, read it and free the slot. A
 * tile past the end ends both roles' loops. */
static th_expr *take_dynamic_tile(tlc_lower_ctx *lc, bool producer, th_expr *j) {
    tlc_arena *a = lc->a;
    const tlc_ws_decision *d = lc->ws->d;
    th_expr *slot = tlc_let(lc, "tslot", th_bin(a, THB_AND, j, tlc_i32(lc, 1)));
    th_expr *use = tlc_let(lc, "tuse", th_bin(a, THB_SHR, j, tlc_i32(lc, 1)));
    th_expr *slot_addr = th_convert(a, th_shared_ptr(a, th_bin(a, THB_ADD, tlc_i32(lc, d->tile_slots), th_bin(a, THB_MUL, slot, tlc_i32(lc, 4)))),
                                    th_scalar(TH_I32));
    th_var *t = tlc_temp(lc, "tile", th_scalar(TH_I32), 0);
    if (producer) {
        tlc_emit(lc, wait_released(lc, bar_addr(lc, d->tile_empty, slot), use, th_cmp(a, THC_GE, j, tlc_i32(lc, 2))));
        th_expr *args[2] = {lc->ws->counter, tlc_i32(lc, 1)};
        th_var *outs[1] = {t};
        tlc_emit_ptx(lc, tlc_ptx_atom_add_global_u32(), args, 2, outs, 1);
        th_expr *st[2] = {slot_addr, th_read(a, t)};
        tlc_emit_ptx(lc, tlc_ptx_st_shared_b32(), st, 2, NULL, 0);
        mbar_arrive(lc, bar_addr(lc, d->tile_full, slot));
    } else {
        wait_parity(lc, bar_addr(lc, d->tile_full, slot), th_bin(a, THB_AND, use, tlc_i32(lc, 1)));
        th_expr *ld[1] = {slot_addr};
        th_var *outs[1] = {t};
        tlc_emit_ptx(lc, tlc_ptx_ld_shared_b32(), ld, 1, outs, 1);
        mbar_arrive(lc, bar_addr(lc, d->tile_empty, slot));
    }
    return th_read(a, t);
}

/* The producer that took the tile past the end counts its block as
 * finished; the last block zeroes the counter pair for the next launch
 * (every block has taken its last tile by then). */
static void finish_dynamic_tiles(tlc_lower_ctx *lc) {
    tlc_arena *a = lc->a;
    tlc_emit_ptx(lc, tlc_ptx_fence_acq_rel_gpu(), NULL, 0, NULL, 0);
    th_expr *done_addr = th_ptr_add(a, lc->ws->counter, tlc_i32(lc, 1), th_scalar(TH_I32));
    th_var *done = tlc_temp(lc, "tdone", th_scalar(TH_I32), 0);
    th_expr *args[2] = {done_addr, tlc_i32(lc, 1)};
    th_var *outs[1] = {done};
    tlc_emit_ptx(lc, tlc_ptx_atom_add_global_u32(), args, 2, outs, 1);
    tlc_ptrvec *rs = tlc_lower_begin(lc);
    th_expr *z0[2] = {lc->ws->counter, tlc_i32(lc, 0)}, *z1[2] = {done_addr, tlc_i32(lc, 0)};
    tlc_emit_ptx(lc, tlc_ptx_st_global_u32(), z0, 2, NULL, 0);
    tlc_emit_ptx(lc, tlc_ptx_st_global_u32(), z1, 2, NULL, 0);
    th_stmt *reset = tlc_lower_end(lc, rs);
    th_expr *last = th_bin(a, THB_SUB, th_special_reg(a, THS_NCTAID_X), tlc_i32(lc, 1));
    tlc_emit(lc, th_if(a, th_cmp(a, THC_EQ, th_read(a, done), last), reset, NULL));
}

/* Persistent tile loop. Static turns: in round j a block takes tile
 * j * nctaid.x + ctaid.x, or nctaid.x - 1 - ctaid.x in odd rounds (a block
 * that took an early tile of one round takes a late one of the next):
 * tiles whose work grows along the grid even out over the blocks, where a
 * plain stride would hand some blocks the heavy ones round after round.
 * Run-time tiles (the plan's dynamic_tiles): round j takes the counter's
 * next tile. Begin emits the tile index and opens the body (block indices
 * of the tile, then what the caller emits); end closes it under t < tiles
 * and wraps it in the loop over rounds. */
static tile_loop tile_loop_begin(tlc_lower_ctx *lc, bool producer) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    const tir_kernel *k = lc->k;
    tile_loop tl = {.producer = producer};
    tl.round = tlc_temp(lc, "tile_it", th_scalar(TH_I32), 0);
    /* run-time tiles: at most every tile in one block, then the tile past
     * the end, which stops the loop (its variable set to the bound) */
    if (w->d->dynamic_tiles) tl.bound = tlc_let(lc, "ntile_it", th_bin(a, THB_ADD, w->ntiles, tlc_i32(lc, 1)));
    if (w->d->heaviest_first) {
        /* planes per group: enough for three tiles per block (a group's K
         * and V stay in L2 while its tiles run; three rounds of light tiles
         * end it), at most all */
        th_expr *rounds = th_bin(a, THB_MUL, th_special_reg(a, THS_NCTAID_X), tlc_i32(lc, 3));
        th_expr *g = th_bin(a, THB_UDIV, th_bin(a, THB_ADD, rounds, th_bin(a, THB_SUB, w->grid[0], tlc_i32(lc, 1))), w->grid[0]);
        th_expr *planes = th_bin(a, THB_MUL, w->grid[1], w->grid[2]);
        tl.group = tlc_let(lc, "tgroup", th_select(a, th_cmp(a, THC_LT, g, planes), g, planes));
    }
    tl.outer = tlc_lower_begin(lc);
    th_expr *j = th_read(a, tl.round), *c = th_special_reg(a, THS_CTAID_X), *n = th_special_reg(a, THS_NCTAID_X);
    if (w->d->dynamic_tiles) {
        tl.t = take_dynamic_tile(lc, producer, j);
    } else {
        th_expr *odd = th_cmp(a, THC_NE, th_bin(a, THB_AND, j, tlc_i32(lc, 1)), tlc_i32(lc, 0));
        th_expr *within = th_select(a, odd, th_bin(a, THB_SUB, th_bin(a, THB_SUB, n, tlc_i32(lc, 1)), c), c);
        tl.t = tlc_let(lc, "tile", th_bin(a, THB_ADD, th_bin(a, THB_MUL, j, n), within));
    }
    tl.inner = tlc_lower_begin(lc);
    th_expr *out[3];
    if (w->d->heaviest_first) {
        /* groups of `group` planes, one after the other; within a group x
         * descends slowest, so each group hands out its heaviest tiles first
         * over all its planes and ends with its lightest */
        th_expr *span = tlc_let(lc, "tspan", th_bin(a, THB_MUL, tl.group, w->grid[0]));
        th_expr *gi = tlc_let(lc, "tgi", th_bin(a, THB_UDIV, tl.t, span));
        th_expr *r = tlc_let(lc, "tr", th_bin(a, THB_SUB, tl.t, th_bin(a, THB_MUL, gi, span)));
        th_expr *first = th_bin(a, THB_MUL, gi, tl.group);
        th_expr *left = th_bin(a, THB_SUB, th_bin(a, THB_MUL, w->grid[1], w->grid[2]), first);
        th_expr *here = tlc_let(lc, "there", th_select(a, th_cmp(a, THC_LT, left, tl.group), left, tl.group));
        th_expr *pl = tlc_let(lc, "tplane", th_bin(a, THB_ADD, first, th_bin(a, THB_UREM, r, here)));
        out[0] = th_bin(a, THB_SUB, th_bin(a, THB_SUB, w->grid[0], tlc_i32(lc, 1)), th_bin(a, THB_UDIV, r, here));
        out[1] = th_bin(a, THB_UREM, pl, w->grid[1]);
        out[2] = th_bin(a, THB_UDIV, pl, w->grid[1]);
    } else {
        th_expr *plane = th_bin(a, THB_MUL, w->grid[0], w->grid[1]);
        th_expr *lin = th_bin(a, THB_UREM, tl.t, plane);
        out[2] = th_bin(a, THB_UDIV, tl.t, plane);
        if (k->use_swizzle && k->grid_rank >= 2 && k->swizzle_panel > 1) {
            tlc_block_swizzle(lc, lin, w->grid[0], w->grid[1], out);
        } else {
            out[0] = th_bin(a, THB_UREM, lin, w->grid[0]);
            out[1] = th_bin(a, THB_UDIV, lin, w->grid[0]);
        }
    }
    for (int i = 0; i < 3; i++)
        if (w->blk[i]) tlc_emit(lc, th_assign(a, w->blk[i], NULL, out[i]));
    return tl;
}

static void tile_loop_end(tlc_lower_ctx *lc, tile_loop *tl) {
    tlc_arena *a = lc->a;
    th_stmt *work = tlc_lower_end(lc, tl->inner);
    if (lc->ws->d->dynamic_tiles) {
        tlc_ptrvec *st = tlc_lower_begin(lc);
        if (tl->producer) finish_dynamic_tiles(lc);
        tlc_emit(lc, th_assign(a, tl->round, NULL, tl->bound));
        th_stmt *stop = tlc_lower_end(lc, st);
        tlc_emit(lc, th_if(a, th_cmp(a, THC_LT, tl->t, lc->ws->ntiles), work, stop));
        th_stmt *body = tlc_lower_end(lc, tl->outer);
        tlc_emit(lc, th_for(a, tl->round, tlc_i32(lc, 0), tl->bound, 1, false, body));
        return;
    }
    tlc_emit(lc, th_if(a, th_cmp(a, THC_LT, tl->t, lc->ws->ntiles), work, NULL));
    th_stmt *body = tlc_lower_end(lc, tl->outer);
    /* every block walks ceil(tiles / blocks) rounds; a block whose tile in
     * the last round is past the end skips it */
    th_expr *nct = th_special_reg(a, THS_NCTAID_X);
    th_expr *num = th_bin(a, THB_SUB, th_bin(a, THB_ADD, lc->ws->ntiles, nct), tlc_i32(lc, 1));
    th_expr *count = tlc_let(lc, "ntile_it", th_bin(a, THB_UDIV, num, nct));
    tlc_emit(lc, th_for(a, tl->round, tlc_i32(lc, 0), count, 1, false, body));
}

bool tlc_ws_owns_loop(const tlc_lower_ctx *lc, const tir_stmt *loop) { return lc->ws && lc->ws->d->loop == loop; }

static th_expr *bar_addr(tlc_lower_ctx *lc, int64_t base, th_expr *stage) {
    th_expr *off = th_bin(lc->a, THB_ADD, tlc_i32(lc, base), th_bin(lc->a, THB_MUL, stage, tlc_i32(lc, 8)));
    return th_convert(lc->a, th_shared_ptr(lc->a, off), th_scalar(TH_I32));
}

static void wait_parity(tlc_lower_ctx *lc, th_expr *bar, th_expr *parity) {
    th_expr *args[2] = {bar, parity};
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_wait_parity(), args, 2, NULL, 0);
}

/* The producer before it fills round `round` of the buffers behind `bar`
 * (an `empty` mbarrier): when `later` (there was a round before), wait
 * until the consumers have released that one, phase round - 1. */
static th_stmt *wait_released(tlc_lower_ctx *lc, th_expr *bar, th_expr *round, th_expr *later) {
    tlc_ptrvec *wt = tlc_lower_begin(lc);
    wait_parity(lc, bar, th_bin(lc->a, THB_AND, th_bin(lc->a, THB_ADD, round, tlc_i32(lc, 1)), tlc_i32(lc, 1)));
    return th_if(lc->a, later, tlc_lower_end(lc, wt), NULL);
}

static void mbar_arrive(tlc_lower_ctx *lc, th_expr *bar) {
    th_expr *args[1] = {bar};
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_arrive(), args, 1, NULL, 0);
}

/* Consumers: wait until the loads of iteration g (counted over every run),
 * in `stage` (g % stages), have arrived: round g / stages of its full
 * barrier. */
static void wait_stage_loaded(tlc_lower_ctx *lc, th_expr *g, th_expr *stage) {
    th_expr *round = th_bin(lc->a, THB_UDIV, g, tlc_i32(lc, lc->ws->d->pipe->stages));
    wait_parity(lc, bar_addr(lc, lc->ws->d->full, stage), th_bin(lc->a, THB_AND, round, tlc_i32(lc, 1)));
}

/* A consumer thread (or a warp's lane 0) hands `stage` back to the producer. */
static void release_stage(tlc_lower_ctx *lc, th_expr *stage) {
    const tlc_ws_plan *w = lc->ws;
    if (!w->d->multicast) {
        mbar_arrive(lc, bar_addr(lc, w->d->empty, stage));
        return;
    }
    /* Multicast: any block of the cluster may refill the stage in this
     * one, so each warp tells every block's producer, by its lane 0 once
     * the warp's reads are done (gemm_only: only lane 0 gets here). */
    tlc_arena *a = lc->a;
    tlc_ptrvec *one = tlc_lower_begin(lc);
    th_var *r = tlc_temp(lc, "crk", th_scalar(TH_I32), 0);
    tlc_ptrvec *each = tlc_lower_begin(lc);
    th_expr *args[2] = {bar_addr(lc, w->d->empty, stage), th_read(a, r)};
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_arrive_remote(), args, 2, NULL, 0);
    tlc_emit(lc, th_for(a, r, tlc_i32(lc, 0), w->cluster_blocks, 1, false, tlc_lower_end(lc, each)));
    th_stmt *tell = tlc_lower_end(lc, one);
    if (w->d->gemm_only) {
        tlc_emit(lc, tell);
        return;
    }
    tlc_emit_ptx(lc, tlc_ptx_bar_warp_sync(), NULL, 0, NULL, 0);
    th_expr *lane = th_bin(a, THB_AND, th_read(a, lc->tid), tlc_i32(lc, 31));
    tlc_emit(lc, th_if(a, th_cmp(a, THC_EQ, lane, tlc_i32(lc, 0)), tell, NULL));
}

/* ---------------- preloads ---------------- */
/* Round c of the preloads: the consumers wait for phase c of `preload
 * full`; the producer refills the buffers after phase c - 1 of `preload
 * empty`, which every consumer thread arrives at once the loop has read
 * them. */
void tlc_ws_consumer_preload(tlc_lower_ctx *lc, const tir_stmt *s) {
    const tlc_ws_plan *w = lc->ws;
    if (s != w->d->preloads[0]) return;
    tlc_arena *a = lc->a;
    th_expr *c = tlc_let(lc, "prc", th_read(a, w->pre_count));
    wait_parity(lc, bar_addr(lc, w->d->pre_full, tlc_i32(lc, 0)), th_bin(a, THB_AND, c, tlc_i32(lc, 1)));
    tlc_emit(lc, th_assign(a, w->pre_count, NULL, th_bin(a, THB_ADD, c, tlc_i32(lc, 1))));
}

static void release_preloads(tlc_lower_ctx *lc) { mbar_arrive(lc, bar_addr(lc, lc->ws->d->pre_empty, tlc_i32(lc, 0))); }

/* The producer's preloads of one run: wait until the consumers have
 * released the previous run's buffers, arm `preload full` with all their
 * bytes, issue every copy. */
static void producer_preloads(tlc_lower_ctx *lc) {
    tlc_arena *a = lc->a;
    const tlc_ws_decision *d = lc->ws->d;
    th_var *count = lc->ws->ppre_count;
    th_expr *c = tlc_let(lc, "ppc", th_read(a, count));
    tlc_emit(lc, wait_released(lc, bar_addr(lc, d->pre_empty, tlc_i32(lc, 0)), c, th_cmp(a, THC_GE, c, tlc_i32(lc, 1))));
    int64_t bytes = 0;
    for (int i = 0; i < d->npreloads; i++) bytes += d->preloads[i]->u.copy.dst.buf->layout->bytes;
    th_expr *full = bar_addr(lc, d->pre_full, tlc_i32(lc, 0));
    th_expr *args[2] = {full, tlc_i32(lc, bytes)};
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_arrive_expect_tx(), args, 2, NULL, 0);
    tlc_emit(lc, th_assign(a, count, NULL, th_bin(a, THB_ADD, c, tlc_i32(lc, 1))));
    for (int i = 0; i < d->npreloads; i++)
        tlc_tma_issue_copy(lc, d->preloads[i], tlc_i32(lc, d->preloads[i]->u.copy.dst.buf->layout->offset), full);
}

/* The run's preloads, issued when `cond` holds (nothing without preloads). */
static void producer_preloads_if(tlc_lower_ctx *lc, th_expr *cond) {
    if (!lc->ws->d->npreloads) return;
    tlc_ptrvec *pl = tlc_lower_begin(lc);
    producer_preloads(lc);
    tlc_emit(lc, th_if(lc->a, cond, tlc_lower_end(lc, pl), NULL));
}

static th_var *loop_var_slot(tlc_lower_ctx *lc, const tir_var *v) {
    if (!lc->var_slot[v->id]) lc->var_slot[v->id] = th_new_var(lc->a, lc->tk, v->name, th_scalar(TH_I32), 0);
    return lc->var_slot[v->id];
}

/* Overlap: issue the gemms that run ahead, for the iteration whose loads
 * sit in `stage`, into the second register copy of their accumulator; no
 * wait (the caller's). */
static void issue_ahead(tlc_lower_ctx *lc, th_expr *stage) {
    const tlc_ws_plan *w = lc->ws;
    const tlc_pipe_plan *pp = w->d->pipe;
    const tir_stmt *body = w->d->loop->u.for_.body;
    th_var *own = lc->regs[w->ahead_acc->id];
    tlc_pipe_set_stage(lc, pp, stage);
    lc->regs[w->ahead_acc->id] = w->ahead_regs;
    lc->wgmma_async = true;
    for (int i = 0; i < w->d->lookahead; i++) tlc_lower_stmt(lc, body->u.seq.stmts[pp->nprefix + i]);
    lc->wgmma_async = false;
    lc->regs[w->ahead_acc->id] = own;
    tlc_pipe_set_stage(lc, pp, NULL);
}

/* Overlap: wait for the gemms run ahead (and everything before them) and
 * take their result as this iteration's accumulator. */
static void take_ahead(tlc_lower_ctx *lc) {
    const tlc_ws_plan *w = lc->ws;
    const tir_buffer *C = w->ahead_acc;
    th_var *own = lc->regs[C->id];
    lc->regs[C->id] = w->ahead_regs;
    tlc_wgmma_wait(lc, C, 0);
    lc->regs[C->id] = own;
    for (int64_t i = 0; i < C->fragment->slots; i++)
        tlc_emit(lc, th_assign(lc->a, own, tlc_i32(lc, i), th_array_read(lc->a, w->ahead_regs, tlc_i32(lc, i))));
}

/* The consumers' loop variable, a comment naming the loop (`how`, with the
 * stage count), its trip count and (nested or persistent) the iterations
 * of its earlier runs. */
static void consumer_loop_head(tlc_lower_ctx *lc, const tir_stmt *s, const char *how, th_var **tv, th_expr **n,
                               th_expr **base) {
    tlc_arena *a = lc->a;
    const tir_var *v = s->u.for_.vars[0];
    *tv = loop_var_slot(lc, v);
    const char *what = tlc_arena_printf(a, how, lc->ws->d->pipe->stages);
    tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "Pipelined loop over %s, consumers of a warp-specialized %s", v->name, what)));
    *n = tlc_let(lc, "pn", tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.extent[0]), th_scalar(TH_I32)));
    *base = lc->ws->base ? tlc_let(lc, "base", th_read(a, lc->ws->base)) : NULL;
}

/* An iteration of the turns or roles: g = base + ko counts iterations over
 * every run; wait for its stage, point the stage buffers at it and run the
 * loads' lets (the producer issues the copies). Returns the stage. */
static th_expr *enter_stage(tlc_lower_ctx *lc, const tir_stmt *body, int nloads, th_expr *base, th_expr *ko) {
    tlc_arena *a = lc->a;
    const tlc_pipe_plan *pp = lc->ws->d->pipe;
    th_expr *g = base ? tlc_let(lc, "git", th_bin(a, THB_ADD, base, ko)) : ko;
    th_expr *stage = tlc_let(lc, "stage", th_bin(a, THB_UREM, g, tlc_i32(lc, pp->stages)));
    wait_stage_loaded(lc, g, stage);
    tlc_pipe_set_stage(lc, pp, stage);
    for (int j = 0; j < nloads; j++)
        if (!tlc_pipe_is_copy(pp, body->u.seq.stmts[j])) tlc_lower_stmt(lc, body->u.seq.stmts[j]);
    return stage;
}

/* ---------------- warpgroup turns ---------------- */
/* Named barriers of the turns (0 is the block's, 1 the consumers'): the
 * owner of iteration k has published its turn; its turn is done (its
 * output gemm has retired, so the staged buffers are read, and its late
 * statements have handed over). Each is arrived at by the
 * owner and waited for by the other warpgroup (256 threads), one barrier
 * per parity of k: the owner of k + 1 may wait for that turn before the
 * other warpgroup has waited for turn k, which on one barrier would
 * complete turn k's phase with the wrong threads. */
enum { TURN_PUBLISHED = 2, TURN_DONE = 4 };

/* Whether the turns use `turn done`: a staged buffer the next owner must
 * not overwrite early, or late statements whose hand-over it waits for. */
static bool turn_done_used(const tir_turns *t) { return t->nstaged > 0 || t->late; }

/* A turn barrier of known parity (0: even iterations), as a statement. */
static th_stmt *turn_barrier_at(tlc_lower_ctx *lc, int id, int parity, bool arrive) {
    tlc_ptrvec *v = tlc_lower_begin(lc);
    if (arrive) tlc_emit_ptx(lc, tlc_ptx_bar_arrive(lc->a, id + parity, 256), NULL, 0, NULL, 0);
    else tlc_emit(lc, th_barrier_sync(lc->a, id + parity, 256));
    return tlc_lower_end(lc, v);
}

/* A wait at turn barrier `id` for iteration k, whose parity is known only
 * at run time. */
static th_stmt *turn_wait(tlc_lower_ctx *lc, int id, th_expr *k) {
    th_expr *odd = th_cmp(lc->a, THC_NE, th_bin(lc->a, THB_AND, k, tlc_i32(lc, 1)), tlc_i32(lc, 0));
    return th_if(lc->a, odd, turn_barrier_at(lc, id, 1, false), turn_barrier_at(lc, id, 0, false));
}

/* Every slot of fragment b to (store) or from its slot in shared memory at
 * byte offset `at`, element (i, j, ...) at its row-major place: each
 * warpgroup's copy of an element sits in the same place. A store is the
 * owner's, by the first of the lanes that hold the element in its
 * warpgroup. */
static void move_fragment(tlc_lower_ctx *lc, const tir_buffer *b, int64_t at, bool store) {
    tlc_arena *a = lc->a;
    const tlc_fragment *f = b->fragment;
    th_expr *ti[TLC_FRAG_MAX_RANK];
    tlc_frag_thread_index(lc, f, ti);
    th_expr *lin = tlc_i32(lc, 0);
    int64_t stride = 1;
    for (int d = b->rank - 1; d >= 0; d--) {
        lin = th_bin(a, THB_ADD, lin, th_bin(a, THB_MUL, ti[d], tlc_i32(lc, stride)));
        stride *= tir_buffer_dim(b, d);
    }
    int eb = tir_dtype_bytes(b->dtype);
    th_expr *base = tlc_let(lc, "turnslot", th_bin(a, THB_ADD, tlc_i32(lc, at), th_bin(a, THB_MUL, lin, tlc_i32(lc, eb))));
    th_var *regs = lc->regs[b->id];
    bool in_turn = lc->in_turn;
    lc->in_turn = true; /* replica 0 within the owner's warpgroup */
    th_expr *writer = store ? tlc_frag_replica0(lc, f) : NULL;
    lc->in_turn = in_turn;
    tlc_ptrvec *saved = writer ? tlc_lower_begin(lc) : NULL;
    for (int64_t sl = 0; sl < f->slots; sl++) {
        int64_t sp[TLC_FRAG_MAX_RANK], off = 0;
        tlc_fragment_slot_part(f, sl, sp);
        stride = 1;
        for (int d = b->rank - 1; d >= 0; d--) {
            off += sp[d] * stride;
            stride *= tir_buffer_dim(b, d);
        }
        th_expr *ptr = th_shared_ptr(a, th_bin(a, THB_ADD, base, tlc_i32(lc, off * eb)));
        if (store)
            tlc_emit(lc, th_store(a, ptr, th_array_read(a, regs, tlc_i32(lc, sl)), eb));
        else
            tlc_emit(lc, th_assign(a, regs, tlc_i32(lc, sl), th_load(a, ptr, regs->type, eb)));
    }
    if (writer) {
        th_stmt *stores = tlc_lower_end(lc, saved);
        tlc_emit(lc, th_if(a, writer, stores, NULL));
    }
}

static void move_fragments(tlc_lower_ctx *lc, tir_buffer *const *v, const int64_t *at, int n, bool store) {
    for (int i = 0; i < n; i++) move_fragment(lc, v[i], at[i], store);
}

static bool has_barrier(const th_stmt *s) {
    if (!s) return false;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (has_barrier(s->u.seq.stmts[i])) return true;
        return false;
    case THS_FOR: return has_barrier(s->u.for_.body);
    case THS_IF: return has_barrier(s->u.if_.then) || has_barrier(s->u.if_.els);
    case THS_BARRIER: return true;
    default: return false;
    }
}

static bool writes_staged(const tir_turns *t, const tir_stmt *x) {
    for (int i = 0; i < t->nstaged; i++)
        if (tir_stmt_writes(x, t->staged[i])) return true;
    return false;
}

/* A statement only the owner runs: it may take no barrier of the block. */
static void lower_owner_stmt(tlc_lower_ctx *lc, const tir_stmt *x) {
    int from = lc->out->len;
    tlc_lower_stmt(lc, x);
    for (int i = from; i < lc->out->len; i++)
        if (has_barrier(lc->out->items[i])) {
            tlc_error(lc->diag, x->loc, "%s: this statement needs a barrier of the whole block, which "
                                        "one warpgroup alone cannot take", lc->ws->d->roles ? "roles=True" : "turns=True");
            return;
        }
}

/* The owner of iteration k > 0 (`later`): the handed-over fragments,
 * after `wait` if any. */
static void take_handed(tlc_lower_ctx *lc, const tir_turns *t, const tlc_ws_decision *d, th_expr *later,
                        th_stmt *wait) {
    tlc_ptrvec *take = tlc_lower_begin(lc);
    if (wait) tlc_emit(lc, wait);
    move_fragments(lc, t->handed, d->handed_at, t->nhanded, false);
    tlc_emit(lc, th_if(lc->a, later, tlc_lower_end(lc, take), NULL));
}

/* Iteration ko of the turns as a warpgroup runs it, owning it (`own`:
 * ko % 2 is the warpgroup) or not; `parity` is ko % 2, known where the
 * iteration is emitted:
 *   both:   wait for the stage; the loads' lets
 *   owner:  take the handed-over fragments (ko > 0), the score gemms, the
 *           statements that compute from them (before the first write of a
 *           staged buffer: wait until the previous owner's turn is done,
 *           its output gemm has read them), publish, arrive `published`;
 *           with late statements, run them and hand over
 *   other:  wait `published`, take the published fragments
 *   both:   the statements that update the output accumulator; the owner
 *           arrives `turn done`; release the stage
 * With late statements the next owner takes the handed-over fragments
 * after its score gemms, once the last turn is done (the hand-over came
 * after `published`). */
static void turn_half(tlc_lower_ctx *lc, const tir_stmt *body, th_var *tv, th_expr *ko, th_expr *base, int parity,
                      bool own) {
    tlc_arena *a = lc->a;
    const tlc_ws_decision *d = lc->ws->d;
    const tir_turns *t = d->turns;
    const tlc_pipe_plan *pp = d->pipe;
    bool staged = t->nstaged > 0;
    int nitems = body->u.seq.n;
    ko = tlc_let(lc, "tk", ko);
    tlc_emit(lc, th_assign(a, tv, NULL, ko));
    th_expr *stage = enter_stage(lc, body, t->first, base, ko);
    th_expr *later = tlc_let(lc, "notfirst", th_cmp(a, THC_GT, ko, tlc_i32(lc, 0)));
    if (own) {
        if (t->nhanded && !t->late) take_handed(lc, t, d, later, NULL);
        lc->in_turn = true;
        bool waited = false;
        for (int j = t->first; j < nitems; j++) {
            const tir_stmt *x = body->u.seq.stmts[j];
            if (t->role[j] != TIR_TURN_OWNER) continue;
            if (staged && !waited && writes_staged(t, x)) {
                tlc_emit(lc, th_if(a, later, turn_barrier_at(lc, TURN_DONE, 1 - parity, false), NULL));
                waited = true;
            }
            lower_owner_stmt(lc, x);
            if (t->late && j == t->first + t->nchain - 1) {
                /* the last turn's late statements and hand-over are done when
                 * its `turn done` is: wait for it after the score gemms (its
                 * output gemm has retired long since), then take them */
                take_handed(lc, t, d, later, turn_barrier_at(lc, TURN_DONE, 1 - parity, false));
                waited = true;
            }
        }
        lc->in_turn = false;
        if (staged) tlc_emit_ptx(lc, tlc_ptx_fence_proxy_async(), NULL, 0, NULL, 0); /* for the output gemm's wgmma */
        /* A row's slot is read by every lane holding the row and written by
         * one of them: the other lanes' reads (this turn's hand-over, the last
         * turn's publication) must be done. The wgmma in between converge the
         * warp but order no memory; a warp barrier does. */
        tlc_emit_ptx(lc, tlc_ptx_bar_warp_sync(), NULL, 0, NULL, 0);
        move_fragments(lc, t->published, d->published_at, t->npublished, true);
        if (!t->late) move_fragments(lc, t->handed, d->handed_at, t->nhanded, true);
        tlc_emit(lc, turn_barrier_at(lc, TURN_PUBLISHED, parity, true));
        if (t->late) {
            /* off the other warpgroup's path: the late statements (they touch
             * nothing the output statements read or write), then the hand-over */
            lc->in_turn = true;
            for (int j = t->first; j < nitems; j++)
                if (t->role[j] == TIR_TURN_LATE) lower_owner_stmt(lc, body->u.seq.stmts[j]);
            lc->in_turn = false;
            move_fragments(lc, t->handed, d->handed_at, t->nhanded, true);
        }
    } else {
        tlc_emit(lc, turn_barrier_at(lc, TURN_PUBLISHED, parity, false));
        move_fragments(lc, t->published, d->published_at, t->npublished, false);
    }
    for (int j = t->first; j < nitems; j++)
        if (t->role[j] == TIR_TURN_SHARED) tlc_lower_stmt(lc, body->u.seq.stmts[j]);
    if (own && turn_done_used(t)) tlc_emit(lc, turn_barrier_at(lc, TURN_DONE, parity, true));
    tlc_pipe_set_stage(lc, pp, NULL);
    release_stage(lc, stage);
}

/* The consumers' loop under warpgroup turns: iteration k belongs to
 * warpgroup k % 2, and each warpgroup runs a program of its own, a loop
 * over pairs of iterations (2j, then 2j + 1 if there is one) in which it
 * owns one and not the other. Nothing in a warpgroup's loop branches on
 * who owns an iteration, so ptxas sees each warpgroup's wgmmas in
 * straight-line code (a loop with one branch on the owner measured 2%
 * slower on MLA decode's split kernel). After the loop every consumer
 * takes the handed-over fragments (the last owner's), and the warpgroup
 * that did not own the last iteration waits for its `turn done`, so that
 * every barrier phase is complete. */
static void lower_turns_loop(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    const tlc_ws_decision *d = w->d;
    const tir_turns *t = d->turns;
    const tir_stmt *body = s->u.for_.body;
    th_var *tv;
    th_expr *n, *base;
    consumer_loop_head(lc, s, "pipeline (%d stages), the two warpgroups taking iterations in turns, a program each",
                       &tv, &n, &base);
    th_expr *wg = tlc_let(lc, "turnwg", th_bin(a, THB_UDIV, th_read(a, lc->tid), tlc_i32(lc, 128)));
    th_expr *pairs = tlc_let(lc, "npairs", th_bin(a, THB_UDIV, th_bin(a, THB_ADD, n, tlc_i32(lc, 1)), tlc_i32(lc, 2)));
    th_stmt *prog[2];
    for (int me = 0; me < 2; me++) {
        tlc_ptrvec *outer = tlc_lower_begin(lc);
        th_var *jv = th_new_var(a, lc->tk, "tj", th_scalar(TH_I32), 0);
        tlc_ptrvec *lp = tlc_lower_begin(lc);
        th_expr *k0 = tlc_let(lc, "tk0", th_bin(a, THB_MUL, th_read(a, jv), tlc_i32(lc, 2)));
        turn_half(lc, body, tv, k0, base, 0, me == 0);
        tlc_ptrvec *second = tlc_lower_begin(lc);
        turn_half(lc, body, tv, th_bin(a, THB_ADD, k0, tlc_i32(lc, 1)), base, 1, me == 1);
        th_stmt *sec = tlc_lower_end(lc, second);
        tlc_emit(lc, th_if(a, th_cmp(a, THC_LT, th_bin(a, THB_ADD, k0, tlc_i32(lc, 1)), n), sec, NULL));
        th_stmt *b = tlc_lower_end(lc, lp);
        tlc_emit(lc, th_for(a, jv, tlc_i32(lc, 0), pairs, 1, false, b));
        prog[me] = tlc_lower_end(lc, outer);
    }
    tlc_emit(lc, th_if(a, th_cmp(a, THC_EQ, wg, tlc_i32(lc, 0)), prog[0], prog[1]));
    /* after the loop */
    tlc_ptrvec *after = tlc_lower_begin(lc);
    if (turn_done_used(t)) {
        th_expr *last_owner = th_bin(a, THB_AND, th_bin(a, THB_SUB, n, tlc_i32(lc, 1)), tlc_i32(lc, 1));
        th_stmt *ws = turn_wait(lc, TURN_DONE, th_bin(a, THB_SUB, n, tlc_i32(lc, 1)));
        tlc_emit(lc, th_if(a, th_cmp(a, THC_NE, wg, last_owner), ws, NULL));
    }
    /* the last owner's lanes read what one of them stored after its last
     * warp barrier */
    if (t->late) tlc_emit_ptx(lc, tlc_ptx_bar_warp_sync(), NULL, 0, NULL, 0);
    move_fragments(lc, t->handed, d->handed_at, t->nhanded, false);
    th_stmt *af = tlc_lower_end(lc, after);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_GT, n, tlc_i32(lc, 0)), af, NULL));
    if (base) tlc_emit(lc, th_assign(a, w->base, NULL, th_bin(a, THB_ADD, base, n)));
}

/* ---------------- warpgroup roles (plan.h) ---------------- */
/* The roles' mbarriers (plan.h), each arrived at by every thread of one
 * side and waited for by the other: `published` by the score warpgroup,
 * `freed` by the consumers. Each side's next arrival follows its wait for
 * the other side's last, so a side is never two phases ahead and the
 * parity of the waits counted so far names the phase. */
static th_expr *role_bar(tlc_lower_ctx *lc, bool published) {
    const tlc_ws_decision *d = lc->ws->d;
    return bar_addr(lc, published ? d->role_published : d->role_freed, tlc_i32(lc, 0));
}

static void role_wait(tlc_lower_ctx *lc, bool published) {
    tlc_arena *a = lc->a;
    th_var *count = lc->ws->role_waits;
    th_expr *c = tlc_let(lc, "rolew", th_read(a, count));
    wait_parity(lc, role_bar(lc, published), th_bin(a, THB_AND, c, tlc_i32(lc, 1)));
    tlc_emit(lc, th_assign(a, count, NULL, th_bin(a, THB_ADD, c, tlc_i32(lc, 1))));
}

/* The consumers' loop with roles: iteration k's shared statements (the
 * output gemm) once the score warpgroup has published k; then they free
 * its staged buffers and release the stage. Before the loop they tell the
 * score warpgroup that their shared-memory writes are done (Q); after it
 * they take the handed-over fragments. */
static void lower_roles_loop(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    const tlc_ws_decision *d = w->d;
    const tir_turns *t = d->turns;
    const tlc_pipe_plan *pp = d->pipe;
    const tir_stmt *body = s->u.for_.body;
    th_var *tv;
    th_expr *n, *base;
    consumer_loop_head(lc, s, "pipeline (%d stages), the output statements of a score warpgroup's iterations", &tv, &n,
                       &base);
    /* written by generic stores, read by the score warpgroup's wgmma */
    tlc_emit_ptx(lc, tlc_ptx_fence_proxy_async(), NULL, 0, NULL, 0);
    mbar_arrive(lc, role_bar(lc, false));
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    th_expr *ko = th_read(a, tv);
    th_expr *stage = enter_stage(lc, body, t->first, base, ko);
    role_wait(lc, true);
    move_fragments(lc, t->published, d->published_at, t->npublished, false);
    for (int j = t->first; j < body->u.seq.n; j++)
        if (t->role[j] == TIR_TURN_SHARED) tlc_lower_stmt(lc, body->u.seq.stmts[j]);
    tlc_pipe_set_stage(lc, pp, NULL);
    release_stage(lc, stage);
    mbar_arrive(lc, role_bar(lc, false));
    th_stmt *b = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_for(a, tv, tlc_i32(lc, 0), n, 1, false, b));
    role_wait(lc, true);
    move_fragments(lc, t->handed, d->handed_at, t->nhanded, false);
    if (base) tlc_emit(lc, th_assign(a, w->base, NULL, th_bin(a, THB_ADD, base, n)));
}

/* The score warpgroup's run of the loop: iteration k's loads' lets, score
 * gemms, owner statements (before the first write of a staged buffer or
 * of the published slots, from k = 1 on, it waits until iteration k - 1's
 * output gemm has retired), publication, late statements; it releases the
 * stage. After the run it waits for the last output gemm and hands over. */
static void score_loop(tlc_lower_ctx *lc, th_var *sbase) {
    tlc_arena *a = lc->a;
    const tlc_ws_decision *d = lc->ws->d;
    const tir_turns *t = d->turns;
    const tlc_pipe_plan *pp = d->pipe;
    const tir_stmt *s = d->loop, *body = s->u.for_.body;
    int nitems = body->u.seq.n;
    th_var *tv = loop_var_slot(lc, s->u.for_.vars[0]);
    tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "Pipelined loop over %s, the score warpgroup's program", s->u.for_.vars[0]->name)));
    th_expr *n = tlc_let(lc, "sn", tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.extent[0]), th_scalar(TH_I32)));
    th_expr *b0 = sbase ? tlc_let(lc, "sb0", th_read(a, sbase)) : NULL;
    /* the consumers' writes before the loop (Q) are done, and so are the
     * producer's preloads (its score gemms read them) */
    role_wait(lc, false);
    if (d->npreloads) tlc_ws_consumer_preload(lc, d->preloads[0]);
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    th_expr *ko = th_read(a, tv);
    th_expr *stage = enter_stage(lc, body, t->first, b0, ko);
    th_expr *later = tlc_let(lc, "snotfirst", th_cmp(a, THC_GT, ko, tlc_i32(lc, 0)));
    tlc_ptrvec *wt = tlc_lower_begin(lc);
    role_wait(lc, false);
    th_stmt *wait_prev = th_if(a, later, tlc_lower_end(lc, wt), NULL);
    bool waited = false;
    lc->in_turn = true;
    for (int j = t->first; j < nitems; j++) {
        const tir_stmt *x = body->u.seq.stmts[j];
        if (t->role[j] != TIR_TURN_OWNER) continue;
        if (!waited && writes_staged(t, x)) {
            tlc_emit(lc, wait_prev);
            waited = true;
        }
        lower_owner_stmt(lc, x);
    }
    lc->in_turn = false;
    if (!waited) tlc_emit(lc, wait_prev);
    if (t->nstaged) tlc_emit_ptx(lc, tlc_ptx_fence_proxy_async(), NULL, 0, NULL, 0); /* for the output gemm's wgmma */
    /* a row's slot is read by every lane that holds the row and written by
     * one of them (move_fragment) */
    tlc_emit_ptx(lc, tlc_ptx_bar_warp_sync(), NULL, 0, NULL, 0);
    move_fragments(lc, t->published, d->published_at, t->npublished, true);
    mbar_arrive(lc, role_bar(lc, true));
    lc->in_turn = true;
    for (int j = t->first; j < nitems; j++)
        if (t->role[j] == TIR_TURN_LATE) lower_owner_stmt(lc, body->u.seq.stmts[j]);
    lc->in_turn = false;
    tlc_pipe_set_stage(lc, pp, NULL);
    release_stage(lc, stage);
    th_stmt *b = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_for(a, tv, tlc_i32(lc, 0), n, 1, false, b));
    /* the last output gemm has retired: the next run's first iteration may
     * write the staged buffers, and every phase of the barrier completes */
    tlc_ptrvec *last = tlc_lower_begin(lc);
    role_wait(lc, false);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_GT, n, tlc_i32(lc, 0)), tlc_lower_end(lc, last), NULL));
    if (d->npreloads) release_preloads(lc); /* its score gemms have retired */
    tlc_emit_ptx(lc, tlc_ptx_bar_warp_sync(), NULL, 0, NULL, 0);
    lc->in_turn = true;
    move_fragments(lc, t->handed, d->handed_at, t->nhanded, true);
    lc->in_turn = false;
    mbar_arrive(lc, role_bar(lc, true));
    if (sbase) tlc_emit(lc, th_assign(a, sbase, NULL, th_bin(a, THB_ADD, b0, n)));
}

/* ---------------- the deferred output gemm (plan.h) ---------------- */
/* Items from .. to - 1 of the body, but the copies the producer issues. */
static void lower_items(tlc_lower_ctx *lc, const tir_stmt *body, int from, int to, bool async) {
    lc->wgmma_async = async;
    for (int j = from; j < to; j++)
        if (!tlc_pipe_is_copy(lc->ws->d->pipe, body->u.seq.stmts[j])) tlc_lower_stmt(lc, body->u.seq.stmts[j]);
    lc->wgmma_async = false;
}

static void lower_defer_loop(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    const tlc_ws_decision *d = w->d;
    const tlc_pipe_plan *pp = d->pipe;
    const tir_stmt *body = s->u.for_.body;
    int S = pp->stages, n_items = body->u.seq.n, first = pp->nprefix, gend = d->defer_x;
    const tir_buffer *Sacc = body->u.seq.stmts[gend - 1]->u.gemm.c.buf, *Oacc = body->u.seq.stmts[n_items - 1]->u.gemm.c.buf;
    th_var *tv;
    th_expr *n, *base;
    consumer_loop_head(lc, s, "pipeline: %d stages filled by TMA from the producer warpgroup, the output gemm "
                              "deferred to the next iteration", &tv, &n, &base);
    th_var *kr = th_new_var(a, lc->tk, "kr", th_scalar(TH_I32), 0); /* the loop's counter; tv is the body's k */
    th_expr *g0 = base ? base : tlc_i32(lc, 0);
    /* iteration 0: G X P */
    tlc_ptrvec *pro = tlc_lower_begin(lc);
    th_expr *st0 = tlc_let(lc, "stage", th_bin(a, THB_UREM, g0, tlc_i32(lc, S)));
    wait_stage_loaded(lc, g0, st0);
    tlc_emit(lc, th_assign(a, tv, NULL, tlc_i32(lc, 0)));
    tlc_pipe_set_stage(lc, pp, st0);
    lower_items(lc, body, first, d->defer_r, false);
    tlc_pipe_set_stage(lc, pp, NULL);
    th_stmt *p0 = tlc_lower_end(lc, pro);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_GT, n, tlc_i32(lc, 0)), p0, NULL));
    if (d->preload_early) { /* no score gemm after iteration 0's */
        tlc_ptrvec *rel = tlc_lower_begin(lc);
        release_preloads(lc);
        tlc_emit(lc, th_if(a, th_cmp(a, THC_LE, n, tlc_i32(lc, 1)), tlc_lower_end(lc, rel), NULL));
    }
    /* iterations 1 .. n - 1 */
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    th_expr *ko = th_read(a, kr);
    th_expr *g = base ? tlc_let(lc, "git", th_bin(a, THB_ADD, base, ko)) : ko;
    th_expr *stage = tlc_let(lc, "stage", th_bin(a, THB_UREM, g, tlc_i32(lc, S)));
    th_expr *prev = tlc_let(lc, "sprev", th_bin(a, THB_UREM, th_bin(a, THB_ADD, g, tlc_i32(lc, S - 1)), tlc_i32(lc, S)));
    wait_stage_loaded(lc, g, stage);
    tlc_emit(lc, th_assign(a, tv, NULL, ko));
    tlc_pipe_set_stage(lc, pp, stage);
    lower_items(lc, body, first, gend, true); /* G(k), in flight */
    tlc_emit(lc, th_assign(a, tv, NULL, th_bin(a, THB_SUB, ko, tlc_i32(lc, 1))));
    tlc_pipe_set_stage(lc, pp, prev);
    lower_items(lc, body, d->defer_r, n_items, true); /* R(k - 1), O(k - 1) in flight */
    tlc_wgmma_wait(lc, Sacc, 1);                        /* G(k) retired */
    if (d->preload_early) { /* the last score gemm has read them */
        tlc_ptrvec *rel = tlc_lower_begin(lc);
        release_preloads(lc);
        th_expr *last_it = th_cmp(a, THC_EQ, ko, th_bin(a, THB_SUB, n, tlc_i32(lc, 1)));
        tlc_emit(lc, th_if(a, last_it, tlc_lower_end(lc, rel), NULL));
    }
    tlc_emit(lc, th_assign(a, tv, NULL, ko));
    tlc_pipe_set_stage(lc, pp, stage);
    lower_items(lc, body, gend, d->defer_p, false);    /* X(k) under O(k - 1) */
    tlc_wgmma_wait(lc, Oacc, 0);                        /* O(k - 1) retired: its stage is free */
    release_stage(lc, prev);
    lower_items(lc, body, d->defer_p, d->defer_r, false); /* P(k) */
    tlc_pipe_set_stage(lc, pp, NULL);
    th_stmt *b = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_for(a, kr, tlc_i32(lc, 1), n, 1, false, b));
    /* the last iteration's R O */
    tlc_ptrvec *epi = tlc_lower_begin(lc);
    th_expr *last = tlc_let(lc, "slast", th_bin(a, THB_UREM, th_bin(a, THB_ADD, g0, th_bin(a, THB_SUB, n, tlc_i32(lc, 1))),
                                                tlc_i32(lc, S)));
    tlc_emit(lc, th_assign(a, tv, NULL, th_bin(a, THB_SUB, n, tlc_i32(lc, 1))));
    tlc_pipe_set_stage(lc, pp, last);
    lower_items(lc, body, d->defer_r, n_items, false);
    tlc_pipe_set_stage(lc, pp, NULL);
    release_stage(lc, last);
    th_stmt *e = tlc_lower_end(lc, epi);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_GT, n, tlc_i32(lc, 0)), e, NULL));
    if (base) tlc_emit(lc, th_assign(a, w->base, NULL, th_bin(a, THB_ADD, base, n)));
}

static void lower_stage_loop(tlc_lower_ctx *lc, const tir_stmt *s, tlc_ws_body_fn lower_body, void *ctx);

void tlc_ws_lower_consumer_loop(tlc_lower_ctx *lc, const tir_stmt *s, tlc_ws_body_fn lower_body, void *ctx) {
    const tlc_ws_decision *d = lc->ws->d;
    if (d->roles) lower_roles_loop(lc, s);
    else if (d->turns) lower_turns_loop(lc, s);
    else if (d->defer_p) lower_defer_loop(lc, s);
    else lower_stage_loop(lc, s, lower_body, ctx);
    if (d->npreloads && !d->preload_early) release_preloads(lc); /* every read of them has retired */
}

/* The loop without turns or deferral: each iteration waits for its stage
 * (or the gemms run ahead), runs the body and releases a stage. */
static void lower_stage_loop(tlc_lower_ctx *lc, const tir_stmt *s, tlc_ws_body_fn lower_body, void *ctx) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    const tlc_pipe_plan *pp = w->d->pipe;
    bool gemm_only = w->d->gemm_only;
    int S = pp->stages;
    th_var *tv;
    th_expr *n, *base;
    consumer_loop_head(lc, s, "pipeline: %d stages filled by TMA from the producer warpgroup", &tv, &n, &base);
    /* gemm-only: one arrival per warp on `empty`: wgmma.wait_group is
     * warp-aligned, so when lane 0 passes it the whole warp's wgmmas have
     * retired */
    th_expr *lane0 = NULL;
    if (gemm_only) {
        th_expr *lane = th_bin(a, THB_UREM, th_read(a, lc->tid), tlc_i32(lc, 32));
        lane0 = tlc_let(lc, "lane0", th_cmp(a, THC_EQ, lane, tlc_i32(lc, 0)));
    }
    if (w->d->lookahead) {
        /* the first iteration's gemms, before the loop */
        tlc_ptrvec *pro = tlc_lower_begin(lc);
        th_expr *g0 = base ? base : tlc_i32(lc, 0);
        th_expr *st0 = tlc_let(lc, "stage", th_bin(a, THB_UREM, g0, tlc_i32(lc, S)));
        wait_stage_loaded(lc, g0, st0);
        issue_ahead(lc, st0);
        th_stmt *p = tlc_lower_end(lc, pro);
        tlc_emit(lc, th_if(a, th_cmp(a, THC_GT, n, tlc_i32(lc, 0)), p, NULL));
    }
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    th_expr *ko = th_read(a, tv);
    th_expr *g = base ? tlc_let(lc, "git", th_bin(a, THB_ADD, base, ko)) : ko; /* iteration over all runs */
    th_expr *stage = tlc_let(lc, "stage", th_bin(a, THB_UREM, g, tlc_i32(lc, S)));
    if (w->d->lookahead) {
        /* this iteration's gemms ran under the previous one's body; the
         * next iteration's go now, under this one's */
        take_ahead(lc);
        tlc_ptrvec *nx = tlc_lower_begin(lc);
        th_expr *g1 = tlc_let(lc, "gnext", th_bin(a, THB_ADD, g, tlc_i32(lc, 1)));
        th_expr *st1 = tlc_let(lc, "snext", th_bin(a, THB_UREM, g1, tlc_i32(lc, S)));
        wait_stage_loaded(lc, g1, st1);
        issue_ahead(lc, st1);
        th_stmt *next = tlc_lower_end(lc, nx);
        tlc_emit(lc, th_if(a, th_cmp(a, THC_LT, th_bin(a, THB_ADD, ko, tlc_i32(lc, 1)), n), next, NULL));
    } else {
        wait_stage_loaded(lc, g, stage);
    }
    tlc_pipe_set_stage(lc, pp, stage);
    bool late = w->d->late_release;
    lc->wgmma_inflight = late ? 1 : 0;
    lower_body(lc, s, ctx);
    lc->wgmma_inflight = 0;
    tlc_pipe_set_stage(lc, pp, NULL);
    if (late) {
        /* the previous iteration's wgmmas have retired: its stage may be refilled */
        tlc_ptrvec *rel = tlc_lower_begin(lc);
        th_expr *prev = th_bin(a, THB_UREM, th_bin(a, THB_ADD, g, tlc_i32(lc, S - 1)), tlc_i32(lc, S));
        release_stage(lc, prev);
        th_stmt *release = tlc_lower_end(lc, rel);
        tlc_emit(lc, th_if(a, tlc_and(lc, th_cmp(a, THC_GT, ko, tlc_i32(lc, 0)), lane0), release, NULL));
    } else if (gemm_only) {
        /* this iteration's wgmmas have retired: one arrival per warp */
        tlc_ptrvec *rel = tlc_lower_begin(lc);
        release_stage(lc, stage);
        th_stmt *release = tlc_lower_end(lc, rel);
        tlc_emit(lc, th_if(a, lane0, release, NULL));
    } else {
        /* every wgmma of the iteration has been waited for and every read
         * of the stage is done: each consumer thread releases it */
        release_stage(lc, stage);
    }
    th_stmt *b = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_for(a, tv, tlc_i32(lc, 0), n, 1, false, b));
    if (late) {
        const tir_stmt *body = s->u.for_.body;
        int nitems = body->kind == TS_SEQ ? body->u.seq.n : 1;
        for (int i = pp->nprefix; i < nitems; i++)
            tlc_wgmma_wait(lc, (body->kind == TS_SEQ ? body->u.seq.stmts[i] : body)->u.gemm.c.buf, 0);
    }
    if (base) {
        if (late) {
            /* the run's last stage is free now; the next run goes on from here */
            th_expr *last = th_bin(a, THB_UREM, th_bin(a, THB_ADD, base, th_bin(a, THB_SUB, n, tlc_i32(lc, 1))), tlc_i32(lc, S));
            tlc_ptrvec *fin = tlc_lower_begin(lc);
            release_stage(lc, last);
            th_stmt *fr = tlc_lower_end(lc, fin);
            tlc_emit(lc, th_if(a, tlc_and(lc, th_cmp(a, THC_GT, n, tlc_i32(lc, 0)), lane0), fr, NULL));
        }
        tlc_emit(lc, th_assign(a, w->base, NULL, th_bin(a, THB_ADD, base, n)));
    }
}

/* Consumer barriers: only the consumer warpgroups take part. */
static void retarget_barriers(th_stmt *s, int nthreads) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) retarget_barriers(s->u.seq.stmts[i], nthreads);
        break;
    case THS_FOR: retarget_barriers(s->u.for_.body, nthreads); break;
    case THS_IF:
        retarget_barriers(s->u.if_.then, nthreads);
        retarget_barriers(s->u.if_.els, nthreads);
        break;
    case THS_BARRIER:
        if (s->u.barrier.id == 0 && s->u.barrier.nthreads == 0) {
            s->u.barrier.id = 1;
            s->u.barrier.nthreads = nthreads;
        }
        break;
    default: break;
    }
}

/* One run of the loop in the producer: wait until the consumers released
 * a stage, then issue its loads. `pbase` counts iterations over all runs. */
static void producer_loads(tlc_lower_ctx *lc, th_var *pbase) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    const tlc_pipe_plan *pp = w->d->pipe;
    int S = pp->stages;
    const tir_stmt *s = w->d->loop;
    tlc_pipe_state ps = {.plan = pp, .loop = s, .mbar = w->d->full, .in_issuer = true};
    ps.n = tlc_let(lc, "pn", tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.extent[0]), th_scalar(TH_I32)));
    th_expr *b0 = pbase ? tlc_let(lc, "pb0", th_read(a, pbase)) : NULL;
    th_var *it = tlc_temp(lc, "pit", th_scalar(TH_I32), 0);
    tlc_ptrvec *body = tlc_lower_begin(lc);
    th_expr *i = th_read(a, it);
    th_expr *g = b0 ? tlc_let(lc, "pg", th_bin(a, THB_ADD, b0, i)) : i; /* iteration over all runs */
    th_expr *stage = tlc_let(lc, "pst", th_bin(a, THB_UREM, g, tlc_i32(lc, S)));
    /* round r = g / S refills a stage the consumers released in round r - 1;
     * after the loads' lets: a page number read from global memory is on
     * its way while the producer waits */
    ps.before_loads = wait_released(lc, bar_addr(lc, w->d->empty, stage), th_bin(a, THB_UDIV, g, tlc_i32(lc, S)),
                                    th_cmp(a, THC_GE, g, tlc_i32(lc, S)));
    if (w->d->multicast) {
        ps.mc_rank = w->cluster_rank;
        ps.mc_blocks = w->cluster_blocks;
    }
    tlc_pipe_issue(lc, &ps, i, stage);
    /* the run's preloads after its first P loads (plan.h), or after the
     * loop when it has fewer */
    int P = w->d->preload_after_loads;
    producer_preloads_if(lc, th_cmp(a, THC_EQ, i, tlc_i32(lc, P - 1)));
    th_stmt *b = tlc_lower_end(lc, body);
    tlc_emit(lc, th_for(a, it, tlc_i32(lc, 0), ps.n, 1, false, b));
    producer_preloads_if(lc, th_cmp(a, THC_LT, ps.n, tlc_i32(lc, P)));
    if (pbase) tlc_emit(lc, th_assign(a, pbase, NULL, th_bin(a, THB_ADD, b0, ps.n)));
}

static bool listed(const tir_stmt *const *v, int n, const tir_stmt *s) {
    for (int i = 0; i < n; i++)
        if (v[i] == s) return true;
    return false;
}

/* The producer's program (score: the score warpgroup's): the loop's
 * ancestors replayed (serial loops with the same bounds), the slice's
 * scalar statements where they stand (and the score warpgroup's starting
 * values of the handed-over fragments), and at the loop its loads (the
 * score warpgroup's run); nothing else. */
static void replay_walk(tlc_lower_ctx *lc, const tir_stmt *s, th_var *base, bool score) {
    const tlc_ws_decision *d = lc->ws->d;
    if (!s) return;
    if (s == d->loop) {
        if (score) score_loop(lc, base);
        else producer_loads(lc, base);
        return;
    }
    if (score && listed(d->score_inits, d->nscore_inits, s)) {
        lower_owner_stmt(lc, s);
        return;
    }
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) replay_walk(lc, s->u.seq.stmts[i], base, score);
        return;
    case TS_FOR: {
        if (!tir_stmt_any(s, is_stmt, d->loop)) return;
        tlc_arena *a = lc->a;
        th_var *tv = loop_var_slot(lc, s->u.for_.vars[0]);
        th_expr *start = tlc_let(lc, "pstart", tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.start[0]), th_scalar(TH_I32)));
        th_expr *count = tlc_coerce(lc, tlc_lower_expr(lc, s->u.for_.extent[0]), th_scalar(TH_I32));
        int64_t step = s->u.for_.step; /* > 0 (planning) */
        th_expr *end = th_bin(a, THB_ADD, start, th_bin(a, THB_MUL, count, tlc_i32(lc, step)));
        tlc_ptrvec *saved = tlc_lower_begin(lc);
        replay_walk(lc, s->u.for_.body, base, score);
        th_stmt *b = tlc_lower_end(lc, saved);
        tlc_emit(lc, th_for(a, tv, start, end, step, false, b));
        return;
    }
    case TS_LET: case TS_ASSIGN: case TS_STORE:
        if (score ? listed(d->score_slice, d->nscore_slice, s) : listed(d->slice, d->nslice, s)) tlc_lower_stmt(lc, s);
        return;
    default: return;
    }
}

/* The score warpgroup (roles): its fragments are warpgroup 0's copies, so
 * it computes them with tid - consumers. */
static th_stmt *score_program(tlc_lower_ctx *lc) {
    tlc_arena *a = lc->a;
    const tlc_ws_decision *d = lc->ws->d;
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    tlc_emit_ptx(lc, tlc_ptx_setmaxnreg(a, false, d->reg_score), NULL, 0, NULL, 0);
    /* its own counters, the consumers' put back after */
    th_var *cons_waits = lc->ws->role_waits, *cons_preloads = lc->ws->pre_count;
    lc->ws->role_waits = tlc_temp(lc, "srolewaits", th_scalar(TH_I32), 0);
    tlc_emit(lc, th_assign(a, lc->ws->role_waits, NULL, tlc_i32(lc, 0)));
    if (d->npreloads) {
        lc->ws->pre_count = tlc_temp(lc, "sprecount", th_scalar(TH_I32), 0);
        tlc_emit(lc, th_assign(a, lc->ws->pre_count, NULL, tlc_i32(lc, 0)));
    }
    th_var *tid = lc->tid;
    lc->tid = tlc_temp(lc, "stid", th_scalar(TH_I32), 0);
    tlc_emit(lc, th_assign(a, lc->tid, NULL, th_bin(a, THB_SUB, th_read(a, tid), tlc_i32(lc, d->consumer_threads))));
    th_var *sbase = NULL;
    if (d->nested || d->persistent) {
        sbase = tlc_temp(lc, "sbase", th_scalar(TH_I32), 0);
        tlc_emit(lc, th_assign(a, sbase, NULL, tlc_i32(lc, 0)));
    }
    if (d->persistent) { /* the consumers' tiles, in the same order */
        tile_loop tl = tile_loop_begin(lc, false);
        replay_walk(lc, lc->k->body, sbase, true);
        tile_loop_end(lc, &tl);
    } else {
        replay_walk(lc, lc->k->body, sbase, true);
    }
    lc->ws->pre_count = cons_preloads;
    lc->ws->role_waits = cons_waits;
    lc->tid = tid;
    return tlc_lower_end(lc, saved);
}

static th_stmt *producer(tlc_lower_ctx *lc) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    if (!w->d->keep_regs) tlc_emit_ptx(lc, tlc_ptx_setmaxnreg(a, false, w->d->reg_dec), NULL, 0, NULL, 0);
    tlc_ptrvec *one = tlc_lower_begin(lc);
    th_var *pbase = NULL;
    if (w->d->npreloads) {
        lc->ws->ppre_count = tlc_temp(lc, "ppcount", th_scalar(TH_I32), 0);
        tlc_emit(lc, th_assign(a, lc->ws->ppre_count, NULL, tlc_i32(lc, 0)));
    }
    if (w->d->persistent || w->d->nested) {
        pbase = tlc_temp(lc, "pbase", th_scalar(TH_I32), 0);
        tlc_emit(lc, th_assign(a, pbase, NULL, tlc_i32(lc, 0)));
    }
    if (w->d->persistent) {
        tile_loop tl = tile_loop_begin(lc, true);
        replay_walk(lc, lc->k->body, pbase, false);
        tile_loop_end(lc, &tl);
    } else {
        replay_walk(lc, lc->k->body, pbase, false);
    }
    th_stmt *issuer = tlc_lower_end(lc, one);
    int first = w->d->consumer_threads + w->d->score_threads;
    tlc_emit(lc, th_if(a, th_cmp(a, THC_EQ, th_read(a, lc->tid), tlc_i32(lc, first)), issuer, NULL));
    return tlc_lower_end(lc, saved);
}

void tlc_ws_finish(tlc_lower_ctx *lc, th_stmt *consumer_body) {
    tlc_arena *a = lc->a;
    const tlc_ws_plan *w = lc->ws;
    int S = w->d->pipe->stages;
    retarget_barriers(consumer_body, w->d->consumer_threads);
    tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "warp specialization: %d consumer threads, 1 producer warpgroup, "
                                                   "%s %d / %d, %d block(s) per SM%s", w->d->consumer_threads,
                                                w->d->keep_regs ? "no setmaxnreg, registers" : "setmaxnreg",
                                                w->d->reg_inc, w->d->reg_dec, w->d->blocks_per_sm,
                                                w->d->persistent ? ", persistent tiles" : "")));
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    for (int st = 0; st < S; st++) {
        th_expr *f[1] = {bar_addr(lc, w->d->full, tlc_i32(lc, st))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, 1), f, 1, NULL, 0);
        th_expr *e[2] = {bar_addr(lc, w->d->empty, tlc_i32(lc, st)), NULL};
        int readers = w->d->consumer_threads + w->d->score_threads;
        int arrivals = w->d->gemm_only || w->d->multicast ? readers / 32 : readers;
        if (w->d->multicast) { /* every warp of every block of the cluster */
            e[1] = th_bin(a, THB_MUL, w->cluster_blocks, tlc_i32(lc, arrivals));
            tlc_emit_ptx(lc, tlc_ptx_mbarrier_init_count(), e, 2, NULL, 0);
        } else {
            tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, arrivals), e, 1, NULL, 0);
        }
    }
    if (w->d->roles) {
        th_expr *pb[1] = {bar_addr(lc, w->d->role_published, tlc_i32(lc, 0))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, w->d->score_threads), pb, 1, NULL, 0);
        th_expr *fb[1] = {bar_addr(lc, w->d->role_freed, tlc_i32(lc, 0))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, w->d->consumer_threads), fb, 1, NULL, 0);
    }
    if (w->d->npreloads) {
        th_expr *f[1] = {bar_addr(lc, w->d->pre_full, tlc_i32(lc, 0))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, 1), f, 1, NULL, 0);
        th_expr *e[1] = {bar_addr(lc, w->d->pre_empty, tlc_i32(lc, 0))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, w->d->consumer_threads + w->d->score_threads), e, 1, NULL, 0);
    }
    for (int st = 0; w->d->dynamic_tiles && st < 2; st++) {
        th_expr *f[1] = {bar_addr(lc, w->d->tile_full, tlc_i32(lc, st))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, 1), f, 1, NULL, 0);
        th_expr *e[1] = {bar_addr(lc, w->d->tile_empty, tlc_i32(lc, st))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(a, w->d->consumer_threads), e, 1, NULL, 0);
    }
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_init_fence(), NULL, 0, NULL, 0);
    th_stmt *init = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_EQ, th_read(a, lc->tid), tlc_i32(lc, 0)), init, NULL));
    tlc_emit(lc, th_barrier(a));
    /* the other blocks' producers arrive at this block's cluster mbarriers
     * and their loads complete on its full ones: all initialized first */
    if (w->d->multicast) tlc_emit_ptx(lc, tlc_ptx_cluster_sync(), NULL, 0, NULL, 0);
    th_stmt *prod = producer(lc);
    th_stmt *score = w->d->roles ? score_program(lc) : NULL;
    saved = tlc_lower_begin(lc);
    if (!w->d->keep_regs) tlc_emit_ptx(lc, tlc_ptx_setmaxnreg(a, true, w->d->reg_inc), NULL, 0, NULL, 0);
    if (w->base) tlc_emit(lc, th_assign(a, w->base, NULL, tlc_i32(lc, 0)));
    if (w->pre_count) tlc_emit(lc, th_assign(a, w->pre_count, NULL, tlc_i32(lc, 0)));
    if (w->role_waits) tlc_emit(lc, th_assign(a, w->role_waits, NULL, tlc_i32(lc, 0)));
    if (w->d->persistent) {
        tile_loop tl = tile_loop_begin(lc, false);
        tlc_emit(lc, consumer_body);
        tile_loop_end(lc, &tl);
    } else {
        tlc_emit(lc, consumer_body);
    }
    th_stmt *cons = tlc_lower_end(lc, saved);
    th_expr *tid = th_read(a, lc->tid);
    if (score) cons = th_if(a, th_cmp(a, THC_GE, tid, tlc_i32(lc, w->d->consumer_threads)), score, cons);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_GE, tid, tlc_i32(lc, w->d->consumer_threads + w->d->score_threads)), prod, cons));
    /* no block leaves while another may still reach its shared memory */
    if (w->d->multicast) tlc_emit_ptx(lc, tlc_ptx_cluster_sync(), NULL, 0, NULL, 0);
}
