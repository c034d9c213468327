/* Shared-memory allocation by liveness: every shared buffer of a kernel,
 * and the shared scratch that lowering gives some tile ops (the cross-warp
 * exchange of a reduce, a fragment -> fragment layout conversion), gets a
 * byte offset in the block's dynamic shared memory; two of them may share
 * bytes when their live ranges do not overlap.
 *
 * Live ranges are intervals of program positions (one per tile-level
 * statement, a Parallel loop counting as one; a serial or Pipelined loop and
 * an `if` also take a position for their header):
 *   - a buffer lives from its first to its last use; a wgmma gemm left in
 *     flight (gemm_retire.c) uses its operands until its wait;
 *   - a buffer used inside a loop lives over the whole loop, unless its
 *     value never crosses an iteration: every use is inside the loop body
 *     and the first one overwrites all of it (a copy or fill of the whole
 *     buffer) at the top level of a body that holds every use: the loop's,
 *     an inner loop's, or a branch of an `if` inside the loop. MLA's
 *     S_shared is such a buffer, and so is its O_shared, used only in the
 *     branch that writes a whole sequence's output;
 *   - the stage buffers of a Pipelined loop (pipeline_plan.c) live from the
 *     kernel's start to the loop's end: asynchronous loads fill them ahead
 *     of the iteration that reads them;
 *   - a buffer never used lives over the whole kernel (no surprise offsets);
 *   - an op's scratch (its size asked of the op through the op table)
 *     lives only at the op: the op itself begins with a block barrier
 *     before it writes the scratch (ops/reduce.c, ops/copy.c);
 *   - the branches of an `if` that splits the threads into ranges
 *     (tir_thread_range) run at the same time: what either uses (buffers
 *     and scratch) lives over the whole `if`;
 *   - in a kernel the plan warp-specializes (warp_specialize.c), the
 *     stages of its loop and the buffers its producer preloads live over
 *     the whole kernel: the producer fills them ahead of the consumers,
 *     across tiles and runs of the loop.
 *     What only the consumers use is reused as anywhere else (barriers
 *     among the consumers order it), except in a persistent kernel, whose
 *     next tile starts with no barrier after the last.
 * Placement is first fit in declaration order (then the scratch in program
 * order): the lowest offset, aligned, that overlaps no placed object whose
 * range overlaps. Swizzled layouts start on 1024 bytes (the 128-byte
 * swizzle repeats every 8 rows of 128 bytes; TMA and wgmma need it), the
 * rest on 128, which keeps every 16-byte vector access aligned. mbarriers
 * are placed after everything by the planning pass (plan.c), never reused.
 *
 * A kernel that needs more than half an SM's shared memory (one block per
 * SM either way) places its scratch in bytes of its own when they fit.
 *
 * Lowering (lower.c) keys its barriers by bytes, not by buffer: the plan
 * lists, per buffer or scratch, the others that overlap it, so a write to
 * reused bytes waits for the last reads of their previous owner. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "../ir/tir_access.h"
#include "../ops/op_table.h"
#include "../support/int_math.h"
#include "passes.h"

typedef struct use {
    int pos, id; /* position, buffer id */
    bool write;
} use;

typedef struct loop_span {
    const tir_stmt *s;
    int start, end; /* header position, last position of the body */
} loop_span;

/* A body that runs as a unit: a serial or Pipelined loop's, or one branch
 * of an `if`. */
typedef struct body_span {
    const tir_stmt *s; /* the loop or the if */
    int first, last;   /* its positions; empty when last < first */
} body_span;

typedef struct scratch_req {
    const tir_stmt *op;
    int pos;
    int64_t bytes;
} scratch_req;

/* Program positions and what happens at them. */
typedef struct walk {
    tlc_arena *a;
    const tir_kernel *k;
    const tlc_kernel_plan *plan;
    int npos;
    const tir_stmt **leaf, **encl; int cap_pos; /* per position: statement, innermost enclosing loop / if */
    use *uses; int nuses, cap_uses;
    loop_span *loops; int nloops, cap_loops;
    body_span *bodies; int nbodies, cap_bodies;
    scratch_req *scr; int nscr, cap_scr;
    loop_span *splits; int nsplits, cap_splits; /* ifs that split the threads into ranges */
} walk;

/* Arena arrays that double when full (the old copy is left in the arena). */
static void *grow(tlc_arena *a, void *old, int n, int *cap, size_t elem) {
    if (n < *cap) return old;
    int nc = *cap ? *cap * 2 : 64;
    char *p = tlc_arena_calloc(a, (size_t)nc, elem);
    if (old) memcpy(p, old, (size_t)n * elem);
    *cap = nc;
    return p;
}

static int new_pos(walk *w, const tir_stmt *s, const tir_stmt *encl) {
    int cap = w->cap_pos;
    w->leaf = grow(w->a, w->leaf, w->npos, &cap, sizeof *w->leaf);
    w->encl = grow(w->a, w->encl, w->npos, &w->cap_pos, sizeof *w->encl);
    w->leaf[w->npos] = s;
    w->encl[w->npos] = encl;
    return w->npos++;
}

static void add_use(walk *w, int pos, const tir_buffer *b, bool write) {
    if (!b || b->scope != TIR_SCOPE_SHARED || !b->layout || b->id < 0 || b->id >= w->k->nbuffers) return;
    w->uses = grow(w->a, w->uses, w->nuses, &w->cap_uses, sizeof *w->uses);
    w->uses[w->nuses++] = (use){pos, b->id, write};
}

typedef struct use_sink {
    walk *w;
    int pos;
} use_sink;

static void note_use(const tir_access *acc, void *ctx) {
    use_sink *u = ctx;
    if (acc->mode & TIR_ACCESS_READ) add_use(u->w, u->pos, acc->buf, false);
    if (acc->mode & TIR_ACCESS_WRITE) add_use(u->w, u->pos, acc->buf, true);
}

/* The accesses of s at position `pos`: all of them (`own` false) or a loop
 * header's and an if's own (its bounds, its condition). */
static void stmt_uses(walk *w, int pos, const tir_stmt *s, bool own) {
    use_sink u = {w, pos};
    if (own) tir_stmt_own_accesses(s, note_use, &u);
    else tir_stmt_accesses(s, note_use, &u);
}

static void add_body(walk *w, const tir_stmt *s, int first) {
    w->bodies = grow(w->a, w->bodies, w->nbodies, &w->cap_bodies, sizeof *w->bodies);
    w->bodies[w->nbodies++] = (body_span){s, first, w->npos - 1};
}

/* A gemm left in flight (gemm_retire.c) reads its shared operands until
 * its wait, just before `next` (NULL: the sequence's end): they are used at
 * the position before it. */
static void retired_before(walk *w, const tir_stmt *seq, int next) {
    if (!w->plan || w->npos == 0) return;
    const tir_stmt *at = next < seq->u.seq.n ? seq->u.seq.stmts[next] : NULL;
    for (int i = next > TLC_GEMM_MAX_AHEAD + 1 ? next - TLC_GEMM_MAX_AHEAD - 1 : 0; i < next; i++) {
        const tir_stmt *g = seq->u.seq.stmts[i];
        const tlc_gemm_op_plan *gp = g->kind == TS_GEMM ? tlc_plan_gemm_op(w->plan, g) : NULL;
        if (gp && gp->deferred && gp->retire_before == at) stmt_uses(w, w->npos - 1, g, false);
    }
}

/* Numbers the statements (see the file comment). */
static void walk_stmt(walk *w, const tir_stmt *s, const tir_stmt *encl) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) {
            retired_before(w, s, i);
            walk_stmt(w, s->u.seq.stmts[i], encl);
        }
        retired_before(w, s, s->u.seq.n);
        return;
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PARALLEL) break;
        {
            int p = new_pos(w, s, encl);
            stmt_uses(w, p, s, true);
            walk_stmt(w, s->u.for_.body, s);
            add_body(w, s, p + 1);
            w->loops = grow(w->a, w->loops, w->nloops, &w->cap_loops, sizeof *w->loops);
            w->loops[w->nloops++] = (loop_span){s, p, w->npos - 1};
        }
        return;
    case TS_IF: {
        int p = new_pos(w, s, encl);
        stmt_uses(w, p, s, true);
        walk_stmt(w, s->u.if_.then, s);
        add_body(w, s, p + 1);
        int els = w->npos;
        walk_stmt(w, s->u.if_.els, s);
        add_body(w, s, els);
        if (s->u.if_.range_then || s->u.if_.range_else) {
            w->splits = grow(w->a, w->splits, w->nsplits, &w->cap_splits, sizeof *w->splits);
            w->splits[w->nsplits++] = (loop_span){s, p, w->npos - 1};
        }
        return;
    }
    case TS_ALLOC: return;
    default: break;
    }
    int p = new_pos(w, s, encl);
    stmt_uses(w, p, s, false);
    int64_t sb = tlc_op_scratch_bytes(w->k, s);
    if (sb > 0) {
        w->scr = grow(w->a, w->scr, w->nscr, &w->cap_scr, sizeof *w->scr);
        w->scr[w->nscr++] = (scratch_req){s, p, sb};
    }
}

/* The statement at `pos` overwrites all of buffer `id`, reads none of it,
 * and sits at the top level of a body inside L that holds every use of the
 * buffer: L's own, an inner loop's (MLA's sequence loop around its
 * Pipelined loop) or an if branch's (MLA's whole-sequence output). Then no
 * value of the buffer crosses an iteration of L. */
static bool kills(const walk *w, const loop_span *L, int id, int pos) {
    const tir_stmt *s = w->leaf[pos];
    const body_span *M = NULL;
    for (int b = 0; b < w->nbodies; b++)
        if (w->bodies[b].s == w->encl[pos] && w->bodies[b].first <= pos && pos <= w->bodies[b].last)
            M = &w->bodies[b];
    if (!M || M->first <= L->start || M->last > L->end) return false;
    for (int i = 0; i < w->nuses; i++)
        if (w->uses[i].id == id && (w->uses[i].pos < M->first || w->uses[i].pos > M->last)) return false;
    const tir_region *dst = s->kind == TS_COPY ? &s->u.copy.dst : s->kind == TS_FILL ? &s->u.fill.dst : NULL;
    if (!dst || !dst->buf || dst->buf->id != id || !tir_region_is_whole(dst)) return false;
    for (int i = 0; i < w->nuses; i++)
        if (w->uses[i].pos == pos && w->uses[i].id == id && !w->uses[i].write) return false;
    return true;
}

/* A Pipelined loop's stage buffers. */
static bool stage_buffer(const tlc_kernel_plan *plan, const tir_stmt *loop, int id) {
    const tlc_pipe_plan *pp = tlc_plan_pipe(plan, loop);
    for (int i = 0; pp && i < pp->ncopies; i++)
        if (tlc_pipe_load_dst(pp, i)->id == id) return true;
    return false;
}

/* A buffer the warp-specialized loop's producer preloads (plan.h). */
static bool preloaded(const tlc_ws_decision *d, int id) {
    for (int i = 0; i < d->npreloads; i++)
        if (d->preloads[i]->u.copy.dst.buf->id == id) return true;
    return false;
}

typedef struct obj {
    int first, last;
    int64_t bytes, align, offset;
    int64_t claim; /* start of the bytes it holds: its offset less the alignment padding in front */
} obj;

static int by_claim(const void *x, const void *y) {
    const obj *a = *(const obj *const *)x, *b = *(const obj *const *)y;
    return a->claim < b->claim ? -1 : a->claim > b->claim;
}

/* First fit: the lowest aligned offset clear of every placed object whose
 * live range overlaps. The alignment padding in front of an object stays
 * with it, so objects that are all live at once keep the declaration-order
 * offsets of a plain bump allocation. Returns the end of the last object. */
static int64_t place(tlc_arena *a, obj *o, int n) {
    const obj **live = TLC_NEW_ARRAY(a, const obj *, (size_t)n + 1);
    int64_t top = 0;
    for (int i = 0; i < n; i++) {
        if (o[i].bytes <= 0) continue; /* not in shared memory */
        int nl = 0;
        for (int j = 0; j < i; j++)
            if (o[j].bytes > 0 && o[j].first <= o[i].last && o[i].first <= o[j].last) live[nl++] = &o[j];
        qsort(live, (size_t)nl, sizeof *live, by_claim);
        int64_t u = 0; /* lowest free byte so far, before alignment */
        for (int j = 0; j < nl; j++) {
            int64_t end = live[j]->offset + live[j]->bytes;
            if (end <= u) continue;
            if (live[j]->claim >= tlc_align_up(u, o[i].align) + o[i].bytes) break;
            u = end;
        }
        o[i].claim = u;
        o[i].offset = tlc_align_up(u, o[i].align);
        if (o[i].offset + o[i].bytes > top) top = o[i].offset + o[i].bytes;
    }
    return top;
}

/* Objects used inside an if that splits the threads into ranges live over
 * the whole if: its branches run at the same time. */
static void concurrent_ranges(const walk *w, obj *o, int n) {
    for (int s = 0; s < w->nsplits; s++) {
        const loop_span *S = &w->splits[s];
        for (int i = 0; i < n; i++) {
            if (o[i].last < 0 || o[i].last <= S->start || o[i].first > S->end) continue;
            if (S->start < o[i].first) o[i].first = S->start;
            if (S->end > o[i].last) o[i].last = S->end;
        }
    }
}

/* The plan without aliasing lists; buffer offsets in offs[id] (-1: not shared). */
static void plan_offsets(const tlc_kernel_plan *plan, const tir_kernel *k, tlc_arena *a, int64_t *offs,
                         tlc_smem_plan *p) {
    walk w = {.a = a, .k = k, .plan = plan};
    walk_stmt(&w, k->body, NULL);
    int nb = k->nbuffers, whole_last = w.npos > 0 ? w.npos - 1 : 0;
    bool no_reuse = plan->ws.loop && plan->ws.persistent; /* tiles follow each other with no barrier between */
    obj *o = TLC_NEW_ARRAY(a, obj, (size_t)(nb + w.nscr) + 1);
    for (int i = 0; i < nb; i++) {
        o[i].first = INT_MAX;
        o[i].last = -1;
        offs[i] = -1;
        const tir_buffer *b = k->buffers[i];
        if (b->scope == TIR_SCOPE_SHARED && b->layout) {
            o[i].bytes = tlc_layout_total_bytes(b->layout);
            o[i].align = b->layout->swizzle != TLC_SWIZZLE_NONE ? 1024 : 128;
        }
    }
    for (int u = 0; u < w.nuses; u++) {
        obj *x = &o[w.uses[u].id];
        if (w.uses[u].pos < x->first) x->first = w.uses[u].pos;
        if (w.uses[u].pos > x->last) x->last = w.uses[u].pos;
    }
    /* loops: a value that may cross an iteration keeps its bytes over the whole loop */
    for (int l = 0; l < w.nloops; l++) {
        const loop_span *L = &w.loops[l];
        for (int i = 0; i < nb; i++) {
            if (!o[i].bytes) continue;
            int first_in = INT_MAX;
            bool outside = false;
            for (int u = 0; u < w.nuses; u++) {
                if (w.uses[u].id != i) continue;
                if (w.uses[u].pos > L->start && w.uses[u].pos <= L->end) {
                    if (w.uses[u].pos < first_in) first_in = w.uses[u].pos;
                } else {
                    outside = true;
                }
            }
            if (first_in == INT_MAX) continue;
            if (stage_buffer(plan, L->s, i)) {
                o[i].first = 0;
                if (L->end > o[i].last) o[i].last = L->end;
                continue;
            }
            if (!outside && kills(&w, L, i, first_in)) continue;
            if (L->start < o[i].first) o[i].first = L->start;
            if (L->end > o[i].last) o[i].last = L->end;
        }
    }
    concurrent_ranges(&w, o, nb);
    for (int i = 0; i < nb; i++) {
        bool ws_stage = plan->ws.loop && (stage_buffer(plan, plan->ws.loop, i) || preloaded(&plan->ws, i));
        if (no_reuse || ws_stage || o[i].last < 0) {
            o[i].first = 0;
            o[i].last = whole_last;
        }
    }
    p->nbuffers = nb;
    p->nscratch = w.nscr;
    p->scratch = TLC_NEW_ARRAY(a, tlc_smem_scratch, (size_t)w.nscr + 1);
    for (int s = 0; s < w.nscr; s++) {
        obj *x = &o[nb + s];
        x->first = x->last = w.scr[s].pos;
        if (no_reuse) {
            x->first = 0;
            x->last = whole_last;
        }
        x->bytes = w.scr[s].bytes;
        x->align = 128;
    }
    concurrent_ranges(&w, o + nb, w.nscr);
    p->top = place(a, o, nb + w.nscr);
    /* A kernel that takes more than half an SM's shared memory runs one
     * block per SM whatever it uses, so scratch gets bytes of its own when
     * they fit (with room for the mbarriers and for the ops' fresh scratch
     * planned after, if that fits at all): then writing it never waits for the readers of the
     * buffer it would share bytes with (MLA's row max and S_shared). */
    const tlc_target *t = tlc_target_of(plan->arch);
    if (w.nscr && p->top * 2 > t->shared_per_sm) {
        int64_t fresh = 0;
        tlc_ptrvec ops = {0};
        tir_collect_tile_ops(k->body, &ops);
        for (int i = 0; i < ops.len; i++) {
            const tlc_op_desc *op = tlc_op_of(ops.items[i]);
            if (op && op->fresh_scratch_bytes) fresh += tlc_align_up(op->fresh_scratch_bytes(k, ops.items[i]), 128);
        }
        tlc_ptrvec_free(&ops);
        /* fresh scratch that would not fit anyway claims nothing */
        if (p->top + 1024 + fresh > t->max_shared_per_block) fresh = 0;
        for (int s = 0; s < w.nscr; s++) { /* in program order, while they fit */
            obj kept = o[nb + s];
            o[nb + s].first = 0;
            o[nb + s].last = whole_last;
            int64_t own_top = place(a, o, nb + w.nscr);
            if (own_top + 1024 + fresh > t->max_shared_per_block) {
                o[nb + s] = kept;
                own_top = place(a, o, nb + w.nscr);
            }
            p->top = own_top;
        }
    }
    for (int i = 0; i < nb; i++)
        if (o[i].bytes) offs[i] = o[i].offset;
    for (int s = 0; s < w.nscr; s++)
        p->scratch[s] = (tlc_smem_scratch){w.scr[s].op, o[nb + s].offset, o[nb + s].bytes};
}

void tlc_plan_shared_memory(tlc_kernel_plan *plan, tir_kernel *k, tlc_arena *a) {
    int nb = k->nbuffers;
    int64_t *offs = TLC_NEW_ARRAY(a, int64_t, (size_t)nb + 1);
    tlc_smem_plan *p = &plan->smem;
    plan_offsets(plan, k, a, offs, p);
    for (int i = 0; i < nb; i++)
        if (offs[i] >= 0) k->buffers[i]->layout->offset = offs[i];
    p->region_of_buffer = TLC_NEW_ARRAY(a, int, (size_t)nb + 1);
    int nshared = 0;
    for (int i = 0; i < nb; i++) {
        const tir_buffer *b = k->buffers[i];
        p->region_of_buffer[i] = b->scope == TIR_SCOPE_SHARED && b->layout ? nshared++ : -1;
    }
    p->scratch_region0 = nshared;
    int n = p->nregions = nshared + p->nscratch;
    int64_t *lo = TLC_NEW_ARRAY(a, int64_t, (size_t)n + 1), *hi = TLC_NEW_ARRAY(a, int64_t, (size_t)n + 1);
    for (int i = 0; i < nb; i++) {
        int r = p->region_of_buffer[i];
        if (r < 0) continue;
        lo[r] = k->buffers[i]->layout->offset;
        hi[r] = lo[r] + tlc_layout_total_bytes(k->buffers[i]->layout);
    }
    for (int i = 0; i < p->nscratch; i++) {
        lo[nshared + i] = p->scratch[i].offset;
        hi[nshared + i] = lo[nshared + i] + p->scratch[i].bytes;
    }
    p->nalias = TLC_NEW_ARRAY(a, int, (size_t)n + 1);
    p->alias = TLC_NEW_ARRAY(a, int *, (size_t)n + 1);
    for (int i = 0; i < n; i++) {
        if (hi[i] <= lo[i]) continue;
        for (int j = 0; j < n; j++)
            if (j != i && hi[j] > lo[j] && lo[i] < hi[j] && lo[j] < hi[i]) p->nalias[i]++;
        p->alias[i] = TLC_NEW_ARRAY(a, int, (size_t)p->nalias[i] + 1);
        int m = 0;
        for (int j = 0; j < n; j++)
            if (j != i && hi[j] > lo[j] && lo[i] < hi[j] && lo[j] < hi[i]) p->alias[i][m++] = j;
    }
    p->top = 0;
    for (int i = 0; i < n; i++)
        if (hi[i] > p->top) p->top = hi[i];
}
