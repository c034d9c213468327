/* Parallel loops: `for i, j in Parallel(d0, d1): body`, an elementwise
 * computation over a tile.
 *
 * Layout rule (common): the loop iterates over a fragment of shape
 * (d0, d1, ...): the fragment of a buffer it indexes with exactly its loop
 * variables in order (x[i, j]); buffers indexed with a subset of them in
 * order (row[i]) get that fragment reduced over the missing dims, i.e.
 * replicated over the threads that share a row. A loop that decides nothing
 * (no fragment known) gets a blocked fragment of its own (free).
 *
 * Lowering: each thread runs the body once per slot of the loop fragment
 * (fully unrolled, so register arrays are indexed by constants and stay in
 * registers), with the loop variables bound to the logical index of
 * (thread, slot): a thread-dependent part computed once plus a constant. */
#include <stdlib.h>
#include <string.h>
#include "../ir/tir_access.h"
#include "op_table.h"

/* ---------------- access patterns ---------------- */
/* A Parallel body holds no tile ops: its accesses (tir_access.h) are all
 * element loads and stores. */

/* Loop variable map[d] runs over all of b's dim d, for every dim the map
 * names (a shorter loop reads part of the buffer: another layout). */
static bool extents_match(const tir_stmt *loop, const tir_buffer *b, const int *map) {
    for (int d = 0; d < b->rank; d++) {
        int64_t e;
        if (map[d] >= 0 && (!tir_expr_const_int(loop->u.for_.extent[map[d]], &e) || e != tir_buffer_dim(b, d)))
            return false;
    }
    return true;
}

static bool is_full(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx) {
    int map[TLC_FRAG_MAX_RANK];
    if (b->rank != loop->u.for_.nvars || b->rank > TLC_FRAG_MAX_RANK || !tlc_par_access_map(loop, b, idx, map))
        return false;
    for (int d = 0; d < b->rank; d++)
        if (map[d] != d) return false;
    return extents_match(loop, b, map);
}

/* An access through a constant index (TLC_PAR_MAP_ZERO) proposes nothing:
 * such a buffer's layout comes from elsewhere (the reduce that wrote it). */
static bool has_zero_dim(const int *map, int rank) {
    for (int d = 0; d < rank; d++)
        if (map[d] == TLC_PAR_MAP_ZERO) return true;
    return false;
}

/* The buffer is indexed by all the loop's variables in some order (x[j, i]):
 * its map, a permutation. */
static bool is_permuted_full(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx, int *map) {
    return b->rank == loop->u.for_.nvars && b->rank <= TLC_FRAG_MAX_RANK && tlc_par_access_map(loop, b, idx, map) &&
           !has_zero_dim(map, b->rank) && extents_match(loop, b, map);
}

/* The buffer is indexed by some of the loop's variables (row[i] in a loop
 * over (i, k)), each dim as long as the loop's: its map. */
static bool covers_its_dims(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx, int *map) {
    return b->rank <= TLC_FRAG_MAX_RANK && tlc_par_access_map(loop, b, idx, map) && extents_match(loop, b, map);
}

static bool loop_shape(const tir_stmt *s, int64_t *shape) {
    if (s->u.for_.nvars > TLC_FRAG_MAX_RANK) return false;
    for (int v = 0; v < s->u.for_.nvars; v++)
        if (!tir_expr_const_int(s->u.for_.extent[v], &shape[v]) || shape[v] < 1) return false;
    return true;
}

const tlc_fragment *tlc_parallel_loop_fragment(tlc_arena *a, const tir_kernel *k, const tir_stmt *s,
                                               bool allow_default) {
    tir_access_list l = {0};
    tir_access_list_collect(s->u.for_.body, &l);
    const tlc_fragment *f = NULL, *whole = NULL, *permuted = NULL, *part = NULL;
    int perm[TLC_FRAG_MAX_RANK], part_map[TLC_FRAG_MAX_RANK];
    int min_bytes = 4;
    for (int i = 0; i < l.n; i++) {
        const tir_access *x = &l.v[i];
        int eb = tir_dtype_bytes(x->buf->dtype);
        if (eb < min_bytes && x->buf->scope != TIR_SCOPE_VAR) min_bytes = eb;
        if (x->buf->scope != TIR_SCOPE_FRAGMENT || !x->buf->fragment) continue;
        /* a fragment every thread holds whole fits any loop: another decides */
        if (is_full(s, x->buf, x->idx)) {
            if (tlc_fragment_is_per_thread(x->buf->fragment)) {
                if (!whole) whole = x->buf->fragment;
            } else if (!f) {
                f = x->buf->fragment;
            }
        } else if (tlc_fragment_is_per_thread(x->buf->fragment)) {
            continue;
        } else if (is_permuted_full(s, x->buf, x->idx, perm)) {
            if (!permuted) permuted = x->buf->fragment;
        } else if (!part && covers_its_dims(s, x->buf, x->idx, part_map)) {
            part = x->buf->fragment;
        }
    }
    tir_access_list_free(&l);
    if (!f && permuted) { /* read transposed: the loop's iteration (i, j) where x[j, i] is */
        int64_t shape[TLC_FRAG_MAX_RANK];
        for (int d = 0; d < permuted->rank; d++) shape[perm[d]] = permuted->shape[d];
        tlc_fragment *t = tlc_fragment_relabel(a, permuted, perm, permuted->rank, shape);
        t->origin = "parallel loop (transposed access)";
        f = t;
    }
    if (!f) f = whole;
    if (f || !allow_default) return f;
    int64_t shape[TLC_FRAG_MAX_RANK];
    if (!loop_shape(s, shape)) return NULL;
    /* Where the loop itself decides (nothing indexes it whole): around a
     * fragment it indexes with some of its variables (row[i] in a loop over
     * (i, k)), so that each thread reads its own row's element. */
    tlc_fragment *e = part ? tlc_fragment_expand(a, part, part_map, s->u.for_.nvars, shape) : NULL;
    if (e) {
        e->origin = "parallel loop (over a fragment of fewer dims)";
        return e;
    }
    tlc_fragment *d = tlc_fragment_blocked(a, s->u.for_.nvars, shape, tir_stmt_threads(k, s), 16 / min_bytes);
    d->origin = "parallel loop";
    return d;
}

/* L reduced over the loop dims that `map` does not name, its other dims
 * in the buffer's order (map may permute them: x[j, i]). */
static tlc_fragment *project(tlc_arena *a, const tlc_fragment *L, const int *map, int rank) {
    const tlc_fragment *f = L;
    int kept_rank[TLC_FRAG_MAX_RANK]; /* loop dim -> its dim after the reductions, -1 if reduced */
    for (int m = L->rank - 1; m >= 0; m--) {
        bool kept = false;
        for (int d = 0; d < rank; d++) kept |= map[d] == m;
        if (!kept) f = tlc_fragment_reduce(a, f, m);
    }
    for (int m = 0, n = 0; m < L->rank; m++) {
        bool kept = false;
        for (int d = 0; d < rank; d++) kept |= map[d] == m;
        kept_rank[m] = kept ? n++ : -1;
    }
    int to[TLC_FRAG_MAX_RANK];
    int64_t shape[TLC_FRAG_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        to[kept_rank[map[d]]] = d;
        shape[d] = f->shape[kept_rank[map[d]]];
    }
    tlc_fragment *r = tlc_fragment_relabel(a, f, to, rank, shape);
    r->origin = "parallel loop (broadcast)";
    return r;
}

/* For each slot of L, the slot of B that access `map` reaches (NULL if a
 * thread would need another's registers). A kernel's Parallel loops repeat
 * the same accesses over the same layouts (acc_o scaled by a row
 * statistic, ...): a table some loop already recorded (st->par_seen) is
 * shared. */
_Static_assert(TIR_PAR_ACCESS_MAX_RANK == TLC_FRAG_MAX_RANK, "a recorded access map holds a fragment's rank");
static const int64_t *access_slots(tlc_infer *st, const tlc_fragment *L, const tlc_fragment *B, const int *map,
                                   int brank) {
    if (B->threads < L->threads) return NULL;
    for (int i = 0; i < st->par_seen.len; i++) {
        const tir_par_access *x = st->par_seen.items[i];
        if (x->buf->rank == brank && memcmp(x->map, map, sizeof(int) * (size_t)brank) == 0 &&
            tlc_fragment_equal(x->loop_frag, L) && tlc_fragment_equal(x->buf_frag, B))
            return x->slot;
    }
    int64_t *slot = TLC_NEW_ARRAY(st->a, int64_t, (size_t)L->slots);
    for (int64_t s = 0; s < L->slots; s++) {
        slot[s] = tlc_par_access_slot(L, B, map, brank, s);
        if (slot[s] == -2) return NULL;
    }
    return slot;
}

/* 4-byte registers per thread a fragment may take so that a thread holds
 * every value of an index a Parallel loop's iterations share. */
#define TLC_SHARED_INDEX_MAX_REGS 64

static bool has_shared_dim(const int *map, int rank) {
    for (int d = 0; d < rank; d++)
        if (map[d] == TLC_PAR_MAP_SHARED) return true;
    return false;
}

/* The layout of a fragment read packed (b[i, j // 2]) or at an index the
 * iterations share (lse[k, j] in a serial loop over k): L with each divided
 * dim divided (tlc_fragment_divide), projected as a plain access on the
 * other dims, and each shared dim added in slots. */
static tlc_fragment *general_projection(tlc_arena *a, const tlc_fragment *L, const int *map, const tir_buffer *b) {
    const tlc_fragment *f = L;
    int plain[TLC_FRAG_MAX_RANK], n = 0;
    for (int d = 0; d < b->rank; d++) {
        if (map[d] == TLC_PAR_MAP_SHARED) continue;
        plain[n] = tlc_par_map_dim(map[d]);
        if (tlc_par_map_divisor(map[d]) > 1 && !(f = tlc_fragment_divide(a, f, plain[n], tlc_par_map_divisor(map[d]))))
            return NULL;
        n++;
    }
    tlc_fragment *r = project(a, f, plain, n);
    for (int d = 0; d < b->rank && r; d++)
        if (map[d] == TLC_PAR_MAP_SHARED) r = tlc_fragment_add_slot_dim(a, r, d, tir_buffer_dim(b, d));
    if (r) r->origin = has_shared_dim(map, b->rank) ? "parallel loop (an index its iterations share)"
                                                     : "parallel loop (packed access)";
    return r;
}

/* A fragment access only the general map reads: packed (b[i, j // 2]) or at
 * an index the iterations share (lse[k, j]); its map in `map`. */
static bool special_access(const tir_stmt *s, const tir_access *x, int *map) {
    return x->buf->scope == TIR_SCOPE_FRAGMENT && x->buf->rank <= TLC_FRAG_MAX_RANK &&
           !tlc_par_access_map(s, x->buf, x->idx, map) && tlc_par_access_map_general(s, x->buf, x->idx, map) &&
           !has_zero_dim(map, x->buf->rank);
}

/* Every value of each index the iterations share in a thread's own slots. */
static bool shared_dims_in_slots(const tlc_fragment *B, const int *map, int rank) {
    for (int d = 0; d < rank; d++)
        if (map[d] == TLC_PAR_MAP_SHARED && !tlc_fragment_dim_in_slots(B, d)) return false;
    return true;
}

/* Whether fragment B serves the access `map` of a loop laid out as L: every
 * thread finds its iterations' elements in its own registers. */
static bool serves(const tlc_fragment *L, const tlc_fragment *B, const int *map, int rank) {
    if (!shared_dims_in_slots(B, map, rank) || B->threads < L->threads) return false;
    for (int64_t slot = 0; slot < L->slots; slot++)
        if (tlc_par_access_slot(L, B, map, rank, slot) == -2) return false;
    return true;
}

/* The loop's layout where a fragment whose layout an op fixed (a gemm's
 * register operand) is read at indices its iterations share and one loop
 * variable per other dim (x[i, jj, j] in a loop over (i, j)): that
 * fragment's placement of the loop's dims, its shared dims (held in
 * slots) dropped, so that each thread runs the iterations whose elements
 * it holds. NULL where no access has that form. */
static const tlc_fragment *loop_from_shared_read(tlc_infer *st, const tir_stmt *s, const tir_access_list *l) {
    int64_t shape[TLC_FRAG_MAX_RANK];
    if (!loop_shape(s, shape)) return NULL;
    for (int i = 0; i < l->n; i++) {
        const tir_access *x = &l->v[i];
        const tir_buffer *b = x->buf;
        int map[TLC_FRAG_MAX_RANK];
        if (!b->fragment || st->strength[b->id] < TLC_STRENGTH_STRICT || !special_access(s, x, map) ||
            !has_shared_dim(map, b->rank) || !shared_dims_in_slots(b->fragment, map, b->rank))
            continue;
        int to[TLC_FRAG_MAX_RANK], n = 0;
        unsigned named = 0;
        bool plain = true;
        for (int d = 0; d < b->rank && plain; d++) {
            if (map[d] == TLC_PAR_MAP_SHARED) continue;
            plain = map[d] >= 0 && tlc_par_map_divisor(map[d]) == 1 && shape[map[d]] == tir_buffer_dim(b, d);
            if (plain) to[n++] = map[d], named |= 1u << map[d];
        }
        if (!plain || n != s->u.for_.nvars || named != (1u << n) - 1) continue;
        const tlc_fragment *f = b->fragment;
        for (int d = b->rank - 1; d >= 0 && f; d--)
            if (map[d] == TLC_PAR_MAP_SHARED) f = tlc_fragment_reduce(st->a, f, d);
        tlc_fragment *r = f ? tlc_fragment_relabel(st->a, f, to, n, shape) : NULL;
        if (r) {
            r->origin = "parallel loop (over a fragment read at an index its iterations share)";
            return r;
        }
    }
    return NULL;
}

static bool parallel_infer(tlc_infer *st, const tir_stmt *s, bool free_pass) {
    if (s->u.for_.kind != TIR_FOR_PARALLEL) return false;
    const tlc_fragment *L = tlc_parallel_loop_fragment(st->a, st->k, s, false);
    tir_access_list l = {0};
    tir_access_list_collect(s->u.for_.body, &l);
    if (!L) L = loop_from_shared_read(st, s, &l);
    bool any_unknown = false;
    for (int i = 0; i < l.n; i++)
        if (l.v[i].buf->scope == TIR_SCOPE_FRAGMENT && !l.v[i].buf->fragment) any_unknown = true;
    bool proposed = false;
    if (!L && free_pass && any_unknown) L = tlc_parallel_loop_fragment(st->a, st->k, s, true);
    if (!L && free_pass) { /* a packed or shared-index read may override a weaker layout */
        for (int i = 0; i < l.n && !any_unknown; i++) {
            int map[TLC_FRAG_MAX_RANK];
            any_unknown = special_access(s, &l.v[i], map);
        }
        if (any_unknown) L = tlc_parallel_loop_fragment(st->a, st->k, s, true);
    }
    if (L && any_unknown) {
        for (int i = 0; i < l.n && !st->failed; i++) {
            const tir_access *x = &l.v[i];
            int map[TLC_FRAG_MAX_RANK];
            if (x->buf->scope != TIR_SCOPE_FRAGMENT || x->buf->fragment) continue;
            if (x->buf->rank > TLC_FRAG_MAX_RANK || !tlc_par_access_map(s, x->buf, x->idx, map) ||
                has_zero_dim(map, x->buf->rank))
                continue;
            tlc_fragment *f;
            if (is_full(s, x->buf, x->idx)) {
                f = TLC_NEW(st->a, tlc_fragment);
                *f = *L;
            } else {
                f = project(st->a, L, map, x->buf->rank);
            }
            proposed |= tlc_infer_propose(st, x->buf, f, free_pass ? TLC_STRENGTH_FREE : TLC_STRENGTH_COMMON, s);
        }
    }
    for (int i = 0; i < l.n && L && !st->failed; i++) { /* packed reads (b[i, j // 2]), shared indices (lse[k, j]) */
        const tir_access *x = &l.v[i];
        int map[TLC_FRAG_MAX_RANK];
        if (!special_access(s, x, map)) continue;
        bool shared = has_shared_dim(map, x->buf->rank);
        if (x->buf->fragment && serves(L, x->buf->fragment, map, x->buf->rank)) continue;
        tlc_fragment *f = general_projection(st->a, L, map, x->buf);
        if (!f) continue;
        if (!x->buf->fragment && !shared) { /* a packed read of a fragment with no layout yet: the loops' strength */
            proposed |= tlc_infer_propose(st, x->buf, f, free_pass ? TLC_STRENGTH_FREE : TLC_STRENGTH_COMMON, s);
            continue;
        }
        /* no other layout serves this access: stronger than the loops' and copies' proposals, where a
         * shared index's dims in slots cost a thread at most TLC_SHARED_INDEX_MAX_REGS registers, or hold no
         * element twice (a column read of a large tile would hold the whole tile in every thread: a
         * conflict instead) */
        if (!shared || f->replicate == 1 || (f->slots * tir_dtype_bytes(x->buf->dtype) + 3) / 4 <= TLC_SHARED_INDEX_MAX_REGS)
            proposed |= tlc_infer_propose(st, x->buf, f, TLC_STRENGTH_STRICT, s);
    }
    tir_access_list_free(&l);
    return proposed;
}

/* ---- a fragment the loop reads in another placement: a converted copy ---- */
/* The slot in the kernel's statements that holds s, or NULL. */
static tir_stmt **slot_of(tir_stmt **at, const tir_stmt *s) {
    tir_stmt *x = *at;
    if (!x) return NULL;
    if (x == s) return at;
    tir_stmt **r = NULL;
    switch (x->kind) {
    case TS_SEQ:
        for (int i = 0; i < x->u.seq.n && !r; i++) r = slot_of(&x->u.seq.stmts[i], s);
        return r;
    case TS_FOR: return slot_of(&x->u.for_.body, s);
    case TS_IF:
        r = slot_of(&x->u.if_.then, s);
        return r ? r : slot_of(&x->u.if_.els, s);
    default: return NULL;
    }
}

static void retarget_expr(tir_expr *e, const tir_buffer *from, tir_buffer *to) {
    if (!e) return;
    switch (e->kind) {
    case TE_LOAD:
        if (e->u.load.buf == from) e->u.load.buf = to;
        for (int i = 0; i < e->u.load.buf->rank; i++) retarget_expr(e->u.load.idx[i], from, to);
        return;
    case TE_BINARY: retarget_expr(e->u.bin.a, from, to); retarget_expr(e->u.bin.b, from, to); return;
    case TE_UNARY: retarget_expr(e->u.un.a, from, to); return;
    case TE_CAST: retarget_expr(e->u.cast.a, from, to); return;
    case TE_SELECT:
        retarget_expr(e->u.sel.cond, from, to);
        retarget_expr(e->u.sel.a, from, to);
        retarget_expr(e->u.sel.b, from, to);
        return;
    default: return;
    }
}

/* The loads of `from` in a loop body's statements read `to` instead. */
static void retarget_stmt(tir_stmt *s, const tir_buffer *from, tir_buffer *to) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) retarget_stmt(s->u.seq.stmts[i], from, to);
        return;
    case TS_FOR: retarget_stmt(s->u.for_.body, from, to); return;
    case TS_IF:
        retarget_expr(s->u.if_.cond, from, to);
        retarget_stmt(s->u.if_.then, from, to);
        retarget_stmt(s->u.if_.els, from, to);
        return;
    case TS_LET: case TS_ASSIGN: retarget_expr(s->u.let.value, from, to); return;
    case TS_STORE:
        retarget_expr(s->u.store.value, from, to);
        for (int i = 0; i < s->u.store.buf->rank; i++) retarget_expr(s->u.store.idx[i], from, to);
        return;
    default: return;
    }
}

/* A fragment the loop only reads, whole, by its variables (`scale[i]` in
 * a loop over (i, j)), placed for other work than this loop's (a row
 * statistic a 1-d loop wrote): a copy of it in the loop's placement, made
 * right before the loop (a fragment-to-fragment copy, which lowering
 * converts through shared memory), which the loop reads instead. NULL
 * where that is not the case. */
static tir_buffer *converted_copy(tlc_infer *st, tir_stmt *s, const tlc_fragment *L, const tir_buffer *b,
                                  tir_expr *const *idx) {
    int map[TLC_FRAG_MAX_RANK]; /* plain: each index a loop variable */
    if (b->view_of || b->rank > TLC_FRAG_MAX_RANK || !tlc_par_access_map(s, b, idx, map) || has_zero_dim(map, b->rank))
        return NULL;
    tir_stmt **at = slot_of(&st->k->body, s);
    tlc_fragment *f = at ? project(st->a, L, map, b->rank) : NULL;
    if (!f || !tlc_fragment_is_valid(f, NULL, 0)) return NULL;
    tir_kernel *k = st->k;
    tir_buffer *c = TLC_NEW(st->a, tir_buffer);
    *c = *b;
    c->name = tlc_arena_printf(st->a, "%s.for_line%d", b->name, s->loc.line);
    c->id = k->nbuffers;
    c->fragment = f;
    f->origin = "a copy in the placement of the loop that reads it";
    tir_buffer **bufs = TLC_NEW_ARRAY(st->a, tir_buffer *, (size_t)k->nbuffers + 1);
    memcpy(bufs, k->buffers, sizeof *bufs * (size_t)k->nbuffers);
    bufs[k->nbuffers++] = c;
    k->buffers = bufs;
    tir_stmt *al = tir_new_stmt(st->a, TS_ALLOC, s->loc);
    al->u.alloc.buf = c;
    tir_stmt *cp = tlc_new_tile_op(st->a, TS_COPY, s->loc);
    tir_expr **zero = TLC_NEW_ARRAY(st->a, tir_expr *, (size_t)b->rank);
    for (int d = 0; d < b->rank; d++) zero[d] = tir_int(st->a, 0, s->loc);
    cp->u.copy.src = (tir_region){.buf = (tir_buffer *)b, .rank = b->rank, .start = zero, .extent = b->shape, .loc = s->loc};
    cp->u.copy.dst = (tir_region){.buf = c, .rank = b->rank, .start = zero, .extent = c->shape, .loc = s->loc};
    tir_stmt *seq = tir_new_stmt(st->a, TS_SEQ, s->loc);
    seq->u.seq.stmts = TLC_NEW_ARRAY(st->a, tir_stmt *, 3);
    seq->u.seq.stmts[0] = al;
    seq->u.seq.stmts[1] = cp;
    seq->u.seq.stmts[2] = s;
    seq->u.seq.n = 3;
    *at = seq;
    retarget_stmt(s->u.for_.body, b, c);
    return c;
}

/* After inference: every fragment access of the loop must be one the
 * thread can serve from its own registers. */
bool tlc_parallel_check(tlc_infer *st, tir_stmt *s) {
    tir_access_list l = {0};
    tir_access_list_collect(s->u.for_.body, &l);
    /* the loop's layout: the one a fragment it covers fixes, else the one a
     * fixed fragment read at an index the iterations share needs, else its
     * own; recorded for lowering */
    const tlc_fragment *L = tlc_parallel_loop_fragment(st->a, st->k, s, false);
    if (!L) L = loop_from_shared_read(st, s, &l);
    if (!L) L = tlc_parallel_loop_fragment(st->a, st->k, s, true);
    if (!L) {
        tlc_error(st->diag, s->loc, "Parallel loop extents must be constants (at most %d loop variables)",
                  TLC_FRAG_MAX_RANK);
        st->failed = true;
        tir_access_list_free(&l);
        return false;
    }
    tir_par_access *acc = TLC_NEW_ARRAY(st->a, tir_par_access, (size_t)l.n + 1);
    int nacc = 0;
    bool ok = true;
    for (int i = 0; i < l.n && ok; i++) {
        const tir_access *x = &l.v[i];
        if (x->buf->scope != TIR_SCOPE_FRAGMENT) continue;
        if (x->buf->fragment && tlc_fragment_is_per_thread(x->buf->fragment)) {
            /* read at any index (lowering finds its register); written only
             * where every thread runs every iteration, so no copy goes stale */
            if ((x->mode & TIR_ACCESS_WRITE) && !(tlc_fragment_is_per_thread(L) && L->threads >= tir_stmt_threads(st->k, s))) {
                tlc_infer_conflict(st, s, x->buf, L,
                                   "every thread holds all of it (it is used outside a Parallel loop), so a "
                                   "Parallel loop that spreads its iterations over the threads cannot write it");
                ok = false;
            }
            continue;
        }
        int map[TLC_FRAG_MAX_RANK];
        if (x->buf->rank > TLC_FRAG_MAX_RANK || !tlc_par_access_map_general(s, x->buf, x->idx, map)) {
            tlc_error(st->diag, x->loc,
                      "fragment '%s' must be indexed by distinct variables of the Parallel loop (e.g. %s[i, j], "
                      "or %s[i, j // 2] for a packed one)",
                      x->buf->name, x->buf->name, x->buf->name);
            tlc_note(st->diag, s->loc, "in this Parallel loop");
            st->failed = true;
            ok = false;
        } else {
            bool known = false; /* the loop's earlier access of the same elements */
            for (int j = 0; j < nacc && !known; j++)
                known = acc[j].buf == x->buf && memcmp(acc[j].map, map, sizeof(int) * (size_t)x->buf->rank) == 0;
            if (known) continue;
            if (x->buf->fragment && !shared_dims_in_slots(x->buf->fragment, map, x->buf->rank)) {
                tlc_infer_conflict(st, s, x->buf, L,
                                   "an index this Parallel loop's iterations share needs every thread to hold that "
                                   "whole dim, which another thread holds part of");
                ok = false;
                continue;
            }
            const int64_t *slot = x->buf->fragment ? access_slots(st, L, x->buf->fragment, map, x->buf->rank) : NULL;
            tir_buffer *conv = NULL;
            if (!slot && x->buf->fragment && !(x->mode & TIR_ACCESS_WRITE) &&
                !tir_stmt_touches(s->u.for_.body, x->buf, TIR_ACCESS_WRITE) &&
                (conv = converted_copy(st, s, L, x->buf, x->idx))) {
                slot = access_slots(st, L, conv->fragment, map, conv->rank);
                for (int j = i + 1; j < l.n; j++) /* its other loads, now of the copy */
                    if (l.v[j].buf == x->buf) l.v[j].buf = conv;
            }
            if (!slot) {
                tlc_infer_conflict(st, s, x->buf, L,
                                   "a thread of this Parallel loop would read or write elements held by another thread");
                ok = false;
                continue;
            }
            tir_par_access *r = &acc[nacc++];
            r->loop_frag = L;
            r->buf = conv ? conv : x->buf;
            r->buf_frag = r->buf->fragment;
            memcpy(r->map, map, sizeof(int) * (size_t)x->buf->rank);
            r->slot = slot;
            tlc_ptrvec_push(&st->par_seen, r);
        }
    }
    tir_access_list_free(&l);
    if (ok) {
        s->u.for_.par_access = acc;
        s->u.for_.npar_access = nacc;
        s->u.for_.par_layout = L;
    }
    return ok;
}

/* ---------------- lowering ---------------- */
/* Fragment registers are indexed by constants: a body that touches one is
 * unrolled whatever its size. */
static bool touches_fragments(const tir_stmt *s) {
    tir_access_list l = {0};
    tir_access_list_collect(s->u.for_.body, &l);
    bool any = false;
    for (int i = 0; i < l.n && !any; i++) any = l.v[i].buf->scope == TIR_SCOPE_FRAGMENT;
    tir_access_list_free(&l);
    return any;
}

/* The body once, with the loop variables at logical index `ilog` (slot
 * `slot` of L), under `cond` (NULL: always). */
static void lower_body_at(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_fragment *L, th_expr *const *ilog,
                          int64_t slot, th_expr *cond) {
    for (int v = 0; v < s->u.for_.nvars; v++) {
        const tir_var *var = s->u.for_.vars[v];
        lc->var_expr[var->id] = ilog[v];
        lc->var_lo[var->id] = 0;
        lc->var_hi[var->id] = L->shape[v] - 1;
        lc->var_known[var->id] = true;
    }
    tlc_par_ctx pc = {s, L, slot};
    const tlc_par_ctx *saved_par = lc->par;
    lc->par = &pc;
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    lc->lower_stmt(lc, s->u.for_.body);
    th_stmt *body = tlc_lower_end(lc, saved);
    lc->par = saved_par;
    tlc_emit(lc, cond ? th_if(lc->a, cond, body, NULL) : body);
}

static void parallel_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    if (lc->in_parallel) {
        tlc_error(lc->diag, s->loc, "nested Parallel loops are not supported; use one Parallel(d0, d1, ...)");
        return;
    }
    const tlc_fragment *L = s->u.for_.par_layout ? s->u.for_.par_layout : tlc_parallel_loop_fragment(lc->a, lc->k, s, true);
    if (!L) {
        tlc_error(lc->diag, s->loc, "Parallel loop extents must be constants");
        return;
    }
    int n = s->u.for_.nvars;
    th_expr *tidx[TLC_FRAG_MAX_RANK];
    tlc_frag_thread_index(lc, L, tidx);
    th_expr *valid_thread = NULL;
    if (L->threads < lc->threads)
        valid_thread = th_cmp(lc->a, THC_LT, th_read(lc->a, lc->tid), tlc_i32(lc, L->threads));
    bool looped = tlc_slot_loop_wanted(L, 1) && !touches_fragments(s);
    tlc_emit(lc, th_comment(lc->a, tlc_arena_printf(lc->a, "Parallel loop at line %d: %lld slots per thread%s",
                                                    s->loc.line, (long long)L->slots, looped ? ", in a loop" : "")));
    lc->in_parallel = true;
    if (looped) {
        tlc_slot_loop l;
        tlc_slot_loop_begin(lc, &l, L, 1, tidx);
        lower_body_at(lc, s, L, l.ilog, 0, tlc_and(lc, valid_thread, l.valid));
        tlc_slot_loop_end(lc, &l);
    }
    for (int64_t slot = 0; slot < L->slots && !looped; slot++) {
        int64_t c[TLC_FRAG_MAX_RANK];
        tlc_fragment_slot_part(L, slot, c);
        th_expr *ilog[TLC_FRAG_MAX_RANK];
        for (int v = 0; v < n; v++) ilog[v] = th_bin(lc->a, THB_ADD, tidx[v], tlc_i32(lc, c[v]));
        lower_body_at(lc, s, L, ilog, slot, tlc_and(lc, valid_thread, tlc_frag_valid(lc, L, tidx, slot)));
    }
    lc->in_parallel = false;
    for (int v = 0; v < n; v++) {
        lc->var_expr[s->u.for_.vars[v]->id] = NULL;
        lc->var_known[s->u.for_.vars[v]->id] = false;
    }
}

/* ---------------- table row ---------------- */
/* To the Tile IR, its printer, verifier and interpreter a Parallel loop is
 * a loop; the back end treats it as a tile op. */
const tlc_op_desc tlc_op_parallel = {
    .kind = TS_FOR, .name = "Parallel", .infer = parallel_infer, .lower = parallel_lower,
};
