/* copy(src, dst) between global, shared and fragment regions.
 *
 * Layout rule: a fragment copied to or from memory gets (free) a blocked
 * fragment whose vector is 16 bytes of the memory side's dtype; fragment to
 * fragment copies propagate one side's layout to the other (common).
 *
 * Lowering: one iteration fragment I over the copy (the fragment side's
 * own layout, else a blocked fragment of the copy shape). Each thread walks
 * its slots in vector groups: a 16-byte (or narrower) load or store where
 * the memory side's start column, row length and alignment allow, scalar
 * otherwise (a symbolic row length counts as a multiple of what the kernel
 * records about its sym: lower.h's sym_multiple, checked at launch). Global accesses are masked against the tensor's dims (reads
 * outside give 0, writes outside are dropped); padding holes of I are
 * skipped; dtypes are converted per element; only replica 0 writes memory.
 * A large fragment -> global store (a gemm epilogue) is emitted twice: for
 * a region wholly inside the tensor without masks, else masked.
 * Fragment to fragment with different layouts goes through shared memory. */
#include "../support/int_math.h"
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

static void propose_blocked(tlc_infer *st, const tir_stmt *s, tir_buffer *frag, tir_dtype mem_dtype, const char *why) {
    int64_t shape[TLC_FRAG_MAX_RANK];
    if (frag->rank > TLC_FRAG_MAX_RANK) return;
    for (int d = 0; d < frag->rank; d++) shape[d] = tir_buffer_dim(frag, d);
    tlc_fragment *f = tlc_fragment_blocked(st->a, frag->rank, shape, tir_stmt_threads(st->k, s), tlc_vec_elems(mem_dtype));
    f->origin = why;
    tlc_infer_propose(st, frag, f, TLC_STRENGTH_FREE, s);
}

static bool copy_infer(tlc_infer *st, const tir_stmt *s, bool free_pass) {
    tir_buffer *src = s->u.copy.src.buf, *dst = s->u.copy.dst.buf;
    bool fs = src->scope == TIR_SCOPE_FRAGMENT, fd = dst->scope == TIR_SCOPE_FRAGMENT;
    bool before = st->changed;
    st->changed = false;
    if (fs && fd) {
        bool same_shape = src->rank == dst->rank;
        for (int d = 0; same_shape && d < src->rank; d++) same_shape = tir_buffer_dim(src, d) == tir_buffer_dim(dst, d);
        if (same_shape && src->fragment && !dst->fragment) tlc_infer_propose(st, dst, src->fragment, TLC_STRENGTH_COMMON, s);
        else if (same_shape && dst->fragment && !src->fragment) tlc_infer_propose(st, src, dst->fragment, TLC_STRENGTH_COMMON, s);
        else if (free_pass && !src->fragment) propose_blocked(st, s, src, src->dtype, tlc_arena_printf(st->a, "copy to %s", dst->name));
        else if (free_pass && !dst->fragment) propose_blocked(st, s, dst, dst->dtype, tlc_arena_printf(st->a, "copy from %s", src->name));
    } else if (free_pass && fs && !src->fragment) {
        propose_blocked(st, s, src, dst->dtype, tlc_arena_printf(st->a, "copy to %s", dst->name));
    } else if (free_pass && fd && !dst->fragment) {
        propose_blocked(st, s, dst, src->dtype, tlc_arena_printf(st->a, "copy from %s", src->name));
    }
    bool changed = st->changed;
    st->changed = before || changed;
    return changed;
}

/* ---------------- lowering ---------------- */
typedef struct side {
    const tir_buffer *b;
    const tir_region *r;          /* NULL: the whole buffer from 0 (scratch) */
    int imap[TLC_FRAG_MAX_RANK * 2]; /* buffer dim -> I dim, or -1 (extent-1 dim) */
    th_expr *start[TLC_FRAG_MAX_RANK * 2];
    int64_t start_hi[TLC_FRAG_MAX_RANK * 2]; /* -1: unknown */
} side;

#define MAXR (TLC_FRAG_MAX_RANK * 2)

/* Maps the buffer dims of a side onto I's dims: squeezed dims in order. */
static bool side_init(tlc_lower_ctx *lc, side *sd, const tir_buffer *b, const tir_region *r, const tlc_fragment *I,
                      const int *idims, int nidims) {
    sd->b = b;
    sd->r = r;
    if (b->rank > MAXR) return false;
    int dims[MAXR];
    int n = r ? tir_region_squeezed_dims(r, dims) : 0;
    if (!r) {
        for (int d = 0; d < b->rank; d++) dims[n++] = d;
    }
    if (n != nidims) return false;
    for (int d = 0; d < b->rank; d++) sd->imap[d] = -1;
    for (int i = 0; i < n; i++) sd->imap[dims[i]] = idims[i];
    for (int d = 0; d < b->rank; d++) {
        if (r) {
            sd->start[d] = tlc_coerce(lc, tlc_lower_expr(lc, r->start[d]), th_scalar(TH_I32));
            int64_t lo, hi;
            sd->start_hi[d] = tlc_expr_range(lc, r->start[d], &lo, &hi) && lo >= 0 ? hi : -1;
        } else {
            sd->start[d] = tlc_i32(lc, 0);
            sd->start_hi[d] = 0;
        }
        if (sd->start_hi[d] >= 0 && sd->imap[d] >= 0) sd->start_hi[d] += I->shape[sd->imap[d]] - 1;
    }
    return true;
}

/* Widest vector (elements) this memory side allows along I's last dim. */
static int64_t side_vec(const tlc_lower_ctx *lc, const side *sd, const tlc_fragment *I, int64_t want) {
    const tir_buffer *b = sd->b;
    if (b->scope == TIR_SCOPE_FRAGMENT) return want;
    int last = b->rank - 1;
    if (last < 0 || sd->imap[last] != I->rank - 1) return 1;
    int eb = tir_dtype_bytes(b->dtype);
    int64_t v = want;
    while (v > 1 && v * eb > 16) v /= 2;
    if (sd->r) {
        int64_t m = tlc_expr_multiple(sd->r->start[last]);
        while (v > 1 && m % v) v /= 2;
    }
    int64_t row = b->scope == TIR_SCOPE_SHARED && b->layout ? b->layout->row_elems : tir_buffer_dim(b, last);
    /* A symbolic row length: rows start anywhere unless a recorded fact (a
     * TMA map's 16-byte strides, checked at launch) says it divides. */
    if (row < 0) row = tlc_dim_multiple(lc, b->shape[last]);
    while (v > 1 && row % v) v /= 2;
    return v;
}

static void side_index(tlc_lower_ctx *lc, const side *sd, th_expr *const *ilog, th_expr **idx, int64_t *maxv) {
    for (int d = 0; d < sd->b->rank; d++) {
        idx[d] = sd->imap[d] >= 0 ? th_bin(lc->a, THB_ADD, sd->start[d], ilog[sd->imap[d]]) : sd->start[d];
        maxv[d] = sd->start_hi[d];
    }
}

/* What every group of slots of one copy shares. */
typedef struct copy_walk {
    const side *src, *dst;
    int64_t vw;         /* lanes per group */
    bool unmasked;      /* the caller proved the global side in bounds */
    th_expr *writer;    /* replica 0 (NULL: no replicas) */
    th_var *lanes;      /* vw lanes, in the source's type */
    th_type dt;         /* the destination's element type */
} copy_walk;

/* One group: vw lanes at logical index `ilog` (slot s0 of a fragment side). */
static void copy_group(tlc_lower_ctx *lc, const copy_walk *w, th_expr *const *ilog, int64_t s0) {
    tlc_arena *a = lc->a;
    const side *src = w->src, *dst = w->dst;
    int64_t vw = w->vw;
    th_type dt = w->dt;
    /* read vw lanes */
    th_expr *idx[MAXR];
    int64_t maxv[MAXR];
    if (src->b->scope == TIR_SCOPE_FRAGMENT) {
        for (int64_t i = 0; i < vw; i++)
            tlc_emit(lc, th_assign(a, w->lanes, tlc_i32(lc, i), th_array_read(a, lc->regs[src->b->id], tlc_i32(lc, s0 + i))));
    } else {
        side_index(lc, src, ilog, idx, maxv);
        th_type mt = tlc_mem_type(src->b->dtype);
        th_type vt = vw > 1 ? th_vec(mt.base, (int)vw) : mt;
        int align = (int)(vw * tir_dtype_bytes(src->b->dtype));
        th_expr *ptr = src->b->scope == TIR_SCOPE_GLOBAL ? tlc_global_elem_ptr(lc, src->b, idx)
                                                          : tlc_shared_elem_ptr(lc, src->b, idx);
        th_expr *ld = th_load(a, ptr, vt, align);
        th_expr *mask = src->b->scope == TIR_SCOPE_GLOBAL && !w->unmasked ? tlc_global_in_bounds(lc, src->b, idx, maxv) : NULL;
        th_var *tmp = tlc_temp(lc, "ld", vt, 0);
        if (mask) {
            tlc_emit(lc, th_assign(a, tmp, NULL, tlc_zero(lc, vt)));
            tlc_emit(lc, th_if(a, mask, th_assign(a, tmp, NULL, ld), NULL));
        } else {
            tlc_emit(lc, th_assign(a, tmp, NULL, ld));
        }
        for (int64_t i = 0; i < vw; i++) {
            th_expr *lane = vw > 1 ? th_extract(a, th_read(a, tmp), (int)i) : th_read(a, tmp);
            tlc_emit(lc, th_assign(a, w->lanes, tlc_i32(lc, i), lane));
        }
    }
    /* convert and write vw lanes */
    th_expr *conv[16];
    for (int64_t i = 0; i < vw; i++) {
        th_expr *x = th_array_read(a, w->lanes, tlc_i32(lc, i));
        conv[i] = tlc_convert_value(lc, x, src->b->dtype, dst->b->dtype, dt);
    }
    if (dst->b->scope == TIR_SCOPE_FRAGMENT) {
        for (int64_t i = 0; i < vw; i++)
            tlc_emit(lc, th_assign(a, lc->regs[dst->b->id], tlc_i32(lc, s0 + i), conv[i]));
    } else {
        side_index(lc, dst, ilog, idx, maxv);
        th_type vt = vw > 1 ? th_vec(dt.base, (int)vw) : dt;
        int align = (int)(vw * tir_dtype_bytes(dst->b->dtype));
        th_expr *ptr = dst->b->scope == TIR_SCOPE_GLOBAL ? tlc_global_elem_ptr(lc, dst->b, idx)
                                                          : tlc_shared_elem_ptr(lc, dst->b, idx);
        th_expr *val = vw > 1 ? th_build(a, vt, conv, (int)vw) : conv[0];
        th_expr *mask = dst->b->scope == TIR_SCOPE_GLOBAL && !w->unmasked ? tlc_global_in_bounds(lc, dst->b, idx, maxv) : NULL;
        mask = tlc_and(lc, w->writer, mask);
        th_stmt *stst = th_store(a, ptr, val, align);
        tlc_emit(lc, mask ? th_if(a, mask, stst, NULL) : stst);
    }
}

/* One group under its condition (NULL: none). */
static void copy_group_if(tlc_lower_ctx *lc, const copy_walk *w, th_expr *const *ilog, int64_t s0, th_expr *cond) {
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    copy_group(lc, w, ilog, s0);
    th_stmt *body = tlc_lower_end(lc, saved);
    tlc_emit(lc, cond ? th_if(lc->a, cond, body, NULL) : body);
}

/* Lanes per group that keep a group wholly inside or outside `part`. */
static int64_t part_vec(const tir_region *part, int64_t vw) {
    int last = part ? part->rank - 1 : -1;
    if (last < 0) return vw;
    int64_t s0, e;
    if (!tir_expr_const_int(part->start[last], &s0) || !tir_expr_const_int(part->extent[last], &e)) return 1;
    while (vw > 1 && (s0 % vw || e % vw)) vw /= 2;
    return vw;
}

/* Emits the copy over iteration fragment I: lanes go from `src` to `dst`.
 * A fragment side must have I as its layout; `part` is its region when the
 * copy takes part of it (NULL: all). Between memories, past
 * TLC_UNROLLED_MAX_SLOT_GROUPS groups, a run-time loop over the groups. */
static void emit_copy(tlc_lower_ctx *lc, const tlc_fragment *I, const side *src, const side *dst, bool unmasked,
                      const tir_region *part) {
    tlc_arena *a = lc->a;
    int64_t vlen = tlc_fragment_vector_len(I);
    vlen &= -vlen; /* a run of 24 consecutive slots is copied as vectors of 8 */
    int64_t vw = side_vec(lc, src, I, vlen);
    int64_t v2 = side_vec(lc, dst, I, vlen);
    if (v2 < vw) vw = v2;
    vw = part_vec(part, vw);
    if (vw < 1) vw = 1;
    th_expr *tidx[TLC_FRAG_MAX_RANK];
    tlc_frag_thread_index(lc, I, tidx);
    th_expr *who = NULL;
    if (I->threads < lc->threads) who = th_cmp(a, THC_LT, th_read(a, lc->tid), tlc_i32(lc, I->threads));
    copy_walk w = {src, dst, vw, unmasked, NULL, NULL, tlc_mem_type(dst->b->dtype)};
    w.writer = dst->b->scope == TIR_SCOPE_FRAGMENT ? NULL : tlc_frag_replica0(lc, I);
    if (w.writer) w.writer = tlc_let(lc, "rep0", w.writer);
    th_type st = tlc_mem_type(src->b->dtype);
    if (src->b->scope == TIR_SCOPE_FRAGMENT) st = tlc_reg_type(src->b->dtype);
    if (dst->b->scope == TIR_SCOPE_FRAGMENT) w.dt = tlc_reg_type(dst->b->dtype);
    w.lanes = tlc_temp(lc, "cv", st, (int)vw);
    bool looped = src->b->scope != TIR_SCOPE_FRAGMENT && dst->b->scope != TIR_SCOPE_FRAGMENT &&
                  tlc_slot_loop_wanted(I, vw);
    tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "copy %s -> %s: %lld slots per thread, vectors of %lld%s", src->b->name,
                                                dst->b->name, (long long)I->slots, (long long)vw,
                                                looped ? ", in a loop" : "")));
    if (looped) {
        tlc_slot_loop l;
        tlc_slot_loop_begin(lc, &l, I, vw, tidx);
        copy_group_if(lc, &w, l.ilog, 0, tlc_and(lc, who, l.valid));
        tlc_slot_loop_end(lc, &l);
        return;
    }
    for (int64_t s0 = 0; s0 < I->slots; s0 += vw) {
        int64_t c[TLC_FRAG_MAX_RANK];
        tlc_fragment_slot_part(I, s0, c);
        th_expr *valid = tlc_frag_valid(lc, I, tidx, s0);
        if (valid && valid->kind == THE_INT && valid->u.ival == 0) continue;
        th_expr *ilog[TLC_FRAG_MAX_RANK];
        for (int d = 0; d < I->rank; d++) ilog[d] = th_bin(a, THB_ADD, tidx[d], tlc_i32(lc, c[d]));
        copy_group_if(lc, &w, ilog, s0, tlc_and(lc, tlc_and(lc, who, valid), part ? tlc_region_holds(lc, part, ilog) : NULL));
    }
}

/* Fragment -> global stores of many slots per thread (a gemm epilogue):
 * the condition that the whole region lies inside the tensor, when some dim
 * needs a run-time mask; NULL otherwise (nothing to gain). *partial: a
 * region can lie partly inside (a dim with a mask has extent > 1). */
static th_expr *whole_tile_cond(tlc_lower_ctx *lc, const side *g, const tlc_fragment *I, bool *partial) {
    *partial = false;
    if (I->slots < 32 || !g->r) return NULL;
    th_expr *cond = NULL;
    for (int d = 0; d < g->b->rank; d++) {
        int64_t dim = tir_buffer_dim(g->b, d);
        if (dim > 0 && g->start_hi[d] >= 0 && g->start_hi[d] < dim) continue;
        int64_t ext = g->imap[d] >= 0 ? I->shape[g->imap[d]] : 1;
        if (ext > 1) *partial = true;
        th_expr *lim = dim > 0 ? tlc_i32(lc, dim) : tlc_coerce(lc, tlc_dim_value(lc, g->b, d), th_scalar(TH_I32));
        cond = tlc_and(lc, cond, th_cmp(lc->a, THC_LE, th_bin(lc->a, THB_ADD, g->start[d], tlc_i32(lc, ext)), lim));
    }
    return cond;
}

/* Shared address of 16-byte chunk `ch` of row `r` in a scratch buffer of 8
 * rows x 64 bytes: r * 64 + (ch ^ (r / 2 % 4)) * 16. */
static th_expr *swizzled_chunk(tlc_lower_ctx *lc, th_expr *base, th_expr *r, th_expr *ch) {
    tlc_arena *a = lc->a;
    th_expr *sw = th_bin(a, THB_UREM, th_bin(a, THB_UDIV, r, tlc_i32(lc, 2)), tlc_i32(lc, 4));
    th_expr *off = th_bin(a, THB_ADD, th_bin(a, THB_MUL, r, tlc_i32(lc, 64)),
                          th_bin(a, THB_MUL, th_bin(a, THB_XOR, ch, sw), tlc_i32(lc, 16)));
    return th_bin(a, THB_ADD, base, off);
}

/* The accumulator layout the chunked store needs (see chunk_store),
 * from the fragment alone: `first` (slots / 2 entries) gets, per group of
 * four slot pairs and pair m, the pair's first slot. */
static bool staging_groups(const tlc_fragment *I, int threads, int64_t *grp, int64_t *first) {
    if (I->rank != 2 || I->threads != threads || I->threads % 32 || I->replicate > 1 || tlc_fragment_has_padding(I) ||
        I->slots % 8 || I->slots > 4096)
        return false;
    /* groups of four slot pairs: slot parts (i, j + 8m), (i, j + 8m + 1) */
    int64_t ngroups = I->slots / 8;
    for (int64_t p = 0; p < I->slots / 2; p++) grp[p] = -1;
    int64_t g = 0;
    for (int64_t p = 0; p < I->slots / 2; p++) {
        if (grp[p] >= 0) continue;
        int64_t c0[TLC_FRAG_MAX_RANK], c1[TLC_FRAG_MAX_RANK];
        tlc_fragment_slot_part(I, 2 * p, c0);
        if (c0[1] % 8 || g >= ngroups) return false;
        for (int m = 0; m < 4; m++) {
            int64_t found = -1;
            for (int64_t q = p; q < I->slots / 2 && found < 0; q++) {
                if (grp[q] >= 0) continue;
                tlc_fragment_slot_part(I, 2 * q, c1);
                if (c1[0] != c0[0] || c1[1] != c0[1] + 8 * m) continue;
                tlc_fragment_slot_part(I, 2 * q + 1, c1);
                if (c1[0] == c0[0] && c1[1] == c0[1] + 8 * m + 1) found = q;
            }
            if (found < 0) return false;
            grp[found] = g * 4 + m;
            first[g * 4 + m] = 2 * found;
        }
        g++;
    }
    /* thread parts: (R + l/4, C + 2(l%4)) with R, C those of the warp's lane 0 */
    for (int64_t t = 0; t < I->threads; t++) {
        int64_t tp[TLC_FRAG_MAX_RANK], t0[TLC_FRAG_MAX_RANK];
        tlc_fragment_thread_part(I, t, tp);
        tlc_fragment_thread_part(I, t - t % 32, t0);
        int64_t l = t % 32;
        if (t0[1] % 8 || tp[0] != t0[0] + l / 4 || tp[1] != t0[1] + 2 * (l % 4)) return false;
    }
    return true;
}

/* Fresh scratch of a staged store (1 KiB per warp): fresh bytes, since a
 * warp-specialized producer may refill the pipeline's stages meanwhile. */
static int64_t copy_fresh_scratch_bytes(const tir_kernel *k, const tir_stmt *s) {
    const tir_buffer *src = s->u.copy.src.buf, *dst = s->u.copy.dst.buf;
    if (src->scope != TIR_SCOPE_FRAGMENT || !src->fragment || dst->scope != TIR_SCOPE_GLOBAL ||
        tir_dtype_bytes(dst->dtype) != 2)
        return 0;
    const tlc_fragment *I = src->fragment;
    if (I->slots < 8 || I->slots > 4096) return 0;
    tlc_arena a;
    tlc_arena_init(&a);
    bool ok = staging_groups(I, tir_stmt_threads(k, s), TLC_NEW_ARRAY(&a, int64_t, (size_t)I->slots / 2),
                             TLC_NEW_ARRAY(&a, int64_t, (size_t)I->slots / 2));
    tlc_arena_free(&a);
    return ok ? I->threads / 32 * 1024 : 0;
}

/* An accumulator in the mma layout (per warp and slot group: lane l holds
 * row R + l/4, columns C + 8m + 2(l%4) and the next, m = 0..3, in four
 * pairs of slots) stored to global memory as one 16-byte row chunk per
 * lane, C + 8(l%4) .. + 7 of row R + l/4: a warp's store then covers 8 rows
 * x 64 contiguous bytes instead of 8 x 16 bytes, a quarter of the store
 * instructions with whole sectors. The lane gets its chunk either through
 * a per-warp shared scratch (sm_90: stmatrix into two 8 x 64 byte buffers,
 * 16-byte chunks swizzled by row/2 so stmatrix is conflict-free; sm_80:
 * st.shared) read back with one ld.shared.v4, or, when the plan had no
 * room for the scratch (attention's epilogue, beside three stages), by a
 * 4 x 4 transpose of the pairs within each quad of lanes: two rounds of
 * shfl.bfly, each lane sending one word of each pair of words it swaps.
 * In an edge tile each chunk's store is masked (a chunk lies wholly
 * inside the tensor or wholly outside: rows keep 16-byte chunks).
 * staging_plan: whether the fragment allows it, and with which of the
 * two; chunk_store emits it when the copy keeps 16-byte row chunks. */
typedef struct staging {
    int64_t off, bytes; /* the planned scratch; bytes 0: none, the quad transpose */
    int64_t *first;     /* group * 4 + m -> the first slot of its pair */
} staging;

static bool staging_plan(tlc_lower_ctx *lc, const tir_stmt *op, const tlc_fragment *I, const side *src,
                         const side *dst, staging *st) {
    tlc_arena *a = lc->a;
    if (src->b->scope != TIR_SCOPE_FRAGMENT || dst->b->scope != TIR_SCOPE_GLOBAL || tir_dtype_bytes(dst->b->dtype) != 2)
        return false;
    if (I->slots < 8) return false;
    int64_t *grp = TLC_NEW_ARRAY(a, int64_t, (size_t)I->slots / 2); /* pair -> group * 4 + m, -1 free */
    st->first = TLC_NEW_ARRAY(a, int64_t, (size_t)I->slots / 8 * 4);
    if (!staging_groups(I, lc->threads, grp, st->first)) return false;
    const tlc_smem_scratch *planned = tlc_plan_fresh_scratch(lc->plan, op);
    st->bytes = planned ? planned->bytes : 0;
    st->off = planned ? planned->offset : 0;
    return true;
}

/* How a lane gets its 16-byte chunk: through the per-warp scratch
 * (addresses set up once) or by the quad transpose (its lane bits). */
typedef struct chunk_source {
    bool scratch, stmatrix;
    th_expr *st_addr, *ld_addr, *st_word[4]; /* scratch */
    th_expr *upper[2]; /* transpose: the lane is the upper one of the pair round r swaps */
} chunk_source;

static chunk_source chunk_source_init(tlc_lower_ctx *lc, const staging *st, th_expr *tid, th_expr *lane, th_expr *lq) {
    tlc_arena *a = lc->a;
    chunk_source cs = {.scratch = st->bytes > 0};
    cs.stmatrix = cs.scratch && tlc_target_of(lc->arch)->stmatrix;
    if (!cs.scratch) {
        for (int r = 0; r < 2; r++)
            cs.upper[r] = tlc_let(lc, "sup", th_cmp(a, THC_NE, th_bin(a, THB_AND, lane, tlc_i32(lc, 1 << r)),
                                                    tlc_i32(lc, 0)));
        return cs;
    }
    th_expr *wbase = th_bin(a, THB_ADD, th_convert(a, th_shared_ptr(a, tlc_i32(lc, st->off)), th_scalar(TH_I32)),
                            th_bin(a, THB_MUL, th_bin(a, THB_UDIV, tid, tlc_i32(lc, 32)), tlc_i32(lc, 1024)));
    wbase = tlc_let(lc, "swb", wbase);
    /* stmatrix: lane l gives row l % 8 of matrix l / 8; the read back: lane
     * l takes chunk l % 4 of row l / 4 */
    cs.st_addr = tlc_let(lc, "sta", swizzled_chunk(lc, wbase, th_bin(a, THB_UREM, lane, tlc_i32(lc, 8)),
                                                   th_bin(a, THB_UDIV, lane, tlc_i32(lc, 8))));
    /* no stmatrix (sm_80): the lane writes its word m where stmatrix would
     * put it, byte 4 (l % 4) of row l / 4 of matrix m; still conflict-free */
    for (int m = 0; m < 4 && !cs.stmatrix; m++)
        cs.st_word[m] = tlc_let(lc, "stw", th_bin(a, THB_ADD, th_bin(a, THB_MUL, lq, tlc_i32(lc, 4)),
                                                  swizzled_chunk(lc, wbase, th_bin(a, THB_UDIV, lane, tlc_i32(lc, 4)),
                                                                 tlc_i32(lc, m))));
    cs.ld_addr = tlc_let(lc, "lda", swizzled_chunk(lc, wbase, th_bin(a, THB_UDIV, lane, tlc_i32(lc, 4)), lq));
    return cs;
}

/* Pairs of words the quad transpose swaps in its rounds (xor masks 1, 2). */
static const int quad_pairs[2][2][2] = {{{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}};

/* Band gi's chunk of the lane into lanes[0..3] (column order), from its
 * packed pairs word[m]. */
static void lane_chunk(tlc_lower_ctx *lc, const chunk_source *cs, int64_t gi, th_expr *const *word, th_expr **lanes) {
    tlc_arena *a = lc->a;
    if (cs->scratch) {
        th_expr *buf = th_bin(a, THB_ADD, cs->st_addr, tlc_i32(lc, (gi % 2) * 512));
        th_expr *args[5] = {buf, word[0], word[1], word[2], word[3]};
        if (cs->stmatrix) {
            tlc_emit_ptx(lc, tlc_ptx_stmatrix_x4(), args, 5, NULL, 0);
        } else {
            for (int m = 0; m < 4; m++) {
                th_expr *wa[2] = {th_bin(a, THB_ADD, cs->st_word[m], tlc_i32(lc, (gi % 2) * 512)), word[m]};
                tlc_emit_ptx(lc, tlc_ptx_st_shared_b32(), wa, 2, NULL, 0);
            }
        }
        tlc_emit_ptx(lc, tlc_ptx_bar_warp_sync(), NULL, 0, NULL, 0);
        th_var *w[4];
        for (int m = 0; m < 4; m++) w[m] = tlc_temp(lc, "sw", th_scalar(TH_I32), 0);
        th_expr *la[1] = {th_bin(a, THB_ADD, cs->ld_addr, tlc_i32(lc, (gi % 2) * 512))};
        tlc_emit_ptx(lc, tlc_ptx_ld_shared_v4_b32(), la, 1, w, 4);
        for (int m = 0; m < 4; m++) lanes[m] = th_read(a, w[m]);
        return;
    }
    /* round r swaps bit r of the word index with bit r of the lane (within
     * its quad): afterwards lane l holds pair j of group l % 4 as word j */
    for (int m = 0; m < 4; m++) lanes[m] = tlc_let(lc, "sq", word[m]);
    for (int r = 0; r < 2; r++)
        for (int p = 0; p < 2; p++) {
            int lo = quad_pairs[r][p][0], hi = quad_pairs[r][p][1];
            th_expr *send = th_select(a, cs->upper[r], lanes[lo], lanes[hi]);
            th_expr *args[2] = {send, tlc_i32(lc, 1 << r)};
            th_expr *got = tlc_let(lc, "sx", th_intrin_call(a, THI_SHFL_BFLY, th_scalar(TH_I32), args, 2));
            th_expr *nlo = tlc_let(lc, "sq", th_select(a, cs->upper[r], got, lanes[lo]));
            lanes[hi] = tlc_let(lc, "sq", th_select(a, cs->upper[r], lanes[hi], got));
            lanes[lo] = nlo;
        }
}

static void chunk_store(tlc_lower_ctx *lc, const tlc_fragment *I, const side *src, const side *dst,
                        const staging *st, bool masked) {
    tlc_arena *a = lc->a;
    const int64_t *first = st->first;
    const char *how = st->bytes <= 0 ? "a 4 x 4 transpose within each quad of lanes (shfl.bfly)"
                      : tlc_arena_printf(a, "%s through %lld bytes of shared scratch",
                                         tlc_target_of(lc->arch)->stmatrix ? "stmatrix" : "st.shared.b32",
                                         (long long)st->bytes);
    tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "copy %s -> %s: %s, 16-byte row chunks", src->b->name,
                                                dst->b->name, how)));
    th_expr *tid = th_read(a, lc->tid);
    th_expr *lane = tlc_let(lc, "sl", th_bin(a, THB_UREM, tid, tlc_i32(lc, 32)));
    th_expr *lq = th_bin(a, THB_UREM, lane, tlc_i32(lc, 4));
    chunk_source cs = chunk_source_init(lc, st, tid, lane, lq);
    th_expr *tidx[TLC_FRAG_MAX_RANK];
    tlc_frag_thread_index(lc, I, tidx);
    /* the lane's chunk starts 6 (l % 4) columns right of its own first pair */
    th_expr *col = tlc_let(lc, "scol", th_bin(a, THB_ADD, tidx[1], th_bin(a, THB_MUL, lq, tlc_i32(lc, 6))));
    th_type dt = tlc_reg_type(dst->b->dtype);
    th_type h2 = th_vec(dt.base, 2);
    th_type v4 = th_vec(TH_I32, 4);
    for (int64_t gi = 0; gi < I->slots / 8; gi++) {
        th_expr *word[4]; /* the lane's pair m, packed */
        for (int m = 0; m < 4; m++) {
            th_expr *x[2];
            for (int e = 0; e < 2; e++) {
                th_expr *v = th_array_read(a, lc->regs[src->b->id], tlc_i32(lc, first[gi * 4 + m] + e));
                x[e] = tlc_convert_value(lc, v, src->b->dtype, dst->b->dtype, dt);
            }
            word[m] = th_bitcast(a, th_build(a, h2, x, 2), th_scalar(TH_I32));
        }
        th_expr *lanes[4];
        lane_chunk(lc, &cs, gi, word, lanes);
        int64_t c[TLC_FRAG_MAX_RANK];
        tlc_fragment_slot_part(I, first[gi * 4], c);
        th_expr *ilog[2] = {th_bin(a, THB_ADD, tidx[0], tlc_i32(lc, c[0])), th_bin(a, THB_ADD, col, tlc_i32(lc, c[1]))};
        th_expr *idx[MAXR];
        int64_t maxv[MAXR];
        side_index(lc, dst, ilog, idx, maxv);
        th_stmt *store = th_store(a, tlc_global_elem_ptr(lc, dst->b, idx), th_build(a, v4, lanes, 4), 16);
        th_expr *inside = masked ? tlc_global_in_bounds(lc, dst->b, idx, maxv) : NULL;
        tlc_emit(lc, inside ? th_if(a, inside, store, NULL) : store);
    }
}

/* Every dim of a memory side provably inside its buffer (no masks). */
static bool in_bounds(const side *g) {
    if (!g->r) return false;
    for (int d = 0; d < g->b->rank; d++) {
        int64_t dim = tir_buffer_dim(g->b, d);
        if (dim <= 0 || g->start_hi[d] < 0 || g->start_hi[d] >= dim) return false;
    }
    return true;
}

/* Register-to-register copy where every thread already holds its elements. */
static bool reg_copy(tlc_lower_ctx *lc, const tir_buffer *src, const tir_buffer *dst) {
    const tlc_fragment *S = src->fragment, *D = dst->fragment;
    if (S->rank != D->rank) return false;
    int64_t *map = TLC_NEW_ARRAY(lc->a, int64_t, (size_t)D->slots);
    int64_t logical[TLC_FRAG_MAX_RANK];
    /* the same layout without holes (a cast: acc_s into its 16-bit copy):
     * every thread's slot s is its slot s */
    bool same = tlc_fragment_equal(S, D) && !tlc_fragment_has_padding(D);
    for (int64_t s = 0; s < D->slots && same; s++) map[s] = s;
    for (int64_t s = 0; s < D->slots && !same; s++) {
        map[s] = -1;
        for (int64_t t = 0; t < D->threads; t++) {
            if (!tlc_fragment_inverse(D, t, s, logical, NULL) || tlc_fragment_is_hole(D, logical)) continue;
            int64_t ss = tlc_fragment_slot_of(S, logical, t);
            if (ss < 0 || (map[s] >= 0 && map[s] != ss)) return false;
            map[s] = ss;
        }
    }
    th_type dt = tlc_reg_type(dst->dtype);
    for (int64_t s = 0; s < D->slots; s++) {
        if (map[s] < 0) continue;
        th_expr *x = th_array_read(lc->a, lc->regs[src->id], tlc_i32(lc, map[s]));
        tlc_emit(lc, th_assign(lc->a, lc->regs[dst->id], tlc_i32(lc, s), tlc_convert_value(lc, x, src->dtype, dst->dtype, dt)));
    }
    return true;
}

/* A global side whose row length is a sym not known to divide by 16-byte
 * chunks: the sym's index, and in *cond the run-time check that it does
 * (the fast version of a whole-tile store may then assume it); else -1. */
static int row_chunk_check(tlc_lower_ctx *lc, const side *g, int64_t vec, th_expr **cond) {
    int last = g->b->rank - 1;
    if (last < 0 || !g->r || tir_buffer_dim(g->b, last) >= 0 || tlc_expr_multiple(g->r->start[last]) % vec) return -1;
    const tir_expr *row = g->b->shape[last];
    if (!row || row->kind != TE_VAR || row->u.var->kind != TV_SYM_DIM || tlc_dim_multiple(lc, row) % vec == 0)
        return -1;
    for (int i = 0; i < lc->k->nsym; i++) {
        if (lc->k->sym_dims[i] != row->u.var) continue;
        th_expr *n = tlc_coerce(lc, tlc_dim_value(lc, g->b, last), th_scalar(TH_I32));
        *cond = th_cmp(lc->a, THC_EQ, th_bin(lc->a, THB_UREM, n, tlc_i32(lc, vec)), tlc_i32(lc, 0));
        return i;
    }
    return -1;
}

/* Shared scratch of a fragment -> fragment copy between different
 * layouts: the whole tile, row-major (the conversion in copy_lower). */
static int64_t copy_scratch_bytes(const tir_kernel *k, const tir_stmt *s) {
    (void)k;
    const tir_buffer *src = s->u.copy.src.buf, *dst = s->u.copy.dst.buf;
    if (src->scope != TIR_SCOPE_FRAGMENT || dst->scope != TIR_SCOPE_FRAGMENT || !src->fragment || !dst->fragment ||
        tlc_fragment_equal(src->fragment, dst->fragment))
        return 0;
    int64_t n = tir_dtype_bytes(src->dtype);
    for (int d = 0; d < src->fragment->rank; d++) n *= src->fragment->shape[d];
    return n;
}

static void copy_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tir_region *rs = &s->u.copy.src, *rd = &s->u.copy.dst;
    const tir_buffer *src = rs->buf, *dst = rd->buf;
    bool fs = src->scope == TIR_SCOPE_FRAGMENT, fd = dst->scope == TIR_SCOPE_FRAGMENT;
    if (src->scope == TIR_SCOPE_LOCAL || src->scope == TIR_SCOPE_VAR || dst->scope == TIR_SCOPE_LOCAL ||
        dst->scope == TIR_SCOPE_VAR) {
        tlc_error(lc->diag, s->loc, "copy to or from local buffers is not lowered yet; use element assignments");
        return;
    }
    const tir_region *part = fs && !tir_region_is_whole(rs) ? rs : fd && !tir_region_is_whole(rd) ? rd : NULL;
    if (part && fs && fd) {
        tlc_error(lc->diag, s->loc, "copy of part of a fragment into another fragment is not supported: copy "
                  "through a shared buffer, or copy whole fragments");
        return;
    }
    int idims[MAXR];
    side a_side, b_side;
    if (fs && fd) {
        if (reg_copy(lc, src, dst)) return;
        /* layouts differ: through shared memory */
        const tlc_fragment *S = src->fragment;
        int64_t shape[TLC_FRAG_MAX_RANK];
        tir_buffer *tmp = TLC_NEW(a, tir_buffer);
        tmp->name = "conv";
        tmp->scope = TIR_SCOPE_SHARED;
        tmp->dtype = src->dtype;
        tmp->rank = S->rank;
        tmp->id = -1;
        tmp->param_index = -1;
        tmp->shape = TLC_NEW_ARRAY(a, tir_expr *, (size_t)S->rank + 1);
        for (int d = 0; d < S->rank; d++) {
            shape[d] = S->shape[d];
            tmp->shape[d] = tir_int(a, shape[d], s->loc);
        }
        tmp->layout = tlc_layout_row_major(a, S->rank, shape, tir_dtype_bytes(src->dtype));
        tmp->layout->offset = tlc_op_scratch(lc, s, tmp->layout->bytes);
        tlc_emit(lc, th_comment(a, tlc_arena_printf(a, "layout conversion %s -> %s through shared memory", src->name, dst->name)));
        for (int d = 0; d < S->rank; d++) idims[d] = d;
        tlc_op_scratch_barrier(lc, s);
        side_init(lc, &a_side, src, rs, S, idims, S->rank);
        side_init(lc, &b_side, tmp, NULL, S, idims, S->rank);
        emit_copy(lc, S, &a_side, &b_side, false, NULL);
        tlc_emit(lc, tlc_barrier(lc));
        const tlc_fragment *D = dst->fragment;
        side_init(lc, &a_side, tmp, NULL, D, idims, D->rank);
        side_init(lc, &b_side, dst, rd, D, idims, D->rank);
        emit_copy(lc, D, &a_side, &b_side, false, NULL);
        return;
    }
    const tlc_fragment *I;
    int nidims = 0;
    if (fs || fd) {
        const tir_region *fr = fs ? rs : rd;
        I = fr->buf->fragment;
        nidims = tir_region_squeezed_dims(fr, idims);
    } else {
        int64_t shape[MAXR];
        int n = tir_region_shape(rs, shape);
        if (n < 0) n = tir_region_shape(rd, shape);
        if (n < 0 || n > TLC_FRAG_MAX_RANK) {
            tlc_error(lc->diag, s->loc, "copy between memory regions needs a constant shape of at most %d dims",
                      TLC_FRAG_MAX_RANK);
            return;
        }
        if (n == 0) shape[n++] = 1;
        int eb = tir_dtype_bytes(src->dtype) > tir_dtype_bytes(dst->dtype) ? tir_dtype_bytes(src->dtype)
                                                                            : tir_dtype_bytes(dst->dtype);
        tlc_fragment *f = tlc_fragment_blocked(a, n, shape, lc->threads, 16 / eb);
        I = f;
        for (int d = 0; d < n; d++) idims[d] = d;
        nidims = n;
        /* a copy of a single element: the squeezed region has no dims */
        int tmpd[MAXR];
        if (tir_region_squeezed_dims(rs, tmpd) == 0 && tir_region_squeezed_dims(rd, tmpd) == 0) nidims = 0;
    }
    if (!I) {
        tlc_error(lc->diag, s->loc, "internal error: copy fragment has no layout");
        return;
    }
    if (!side_init(lc, &a_side, src, rs, I, idims, fs ? nidims : nidims) ||
        !side_init(lc, &b_side, dst, rd, I, idims, nidims)) {
        tlc_error(lc->diag, s->loc, "copy: the regions' shapes do not line up (after dropping extent-1 dims)");
        return;
    }
    if (part) {
        /* the memory side's element for fragment index l is its start plus
         * l minus the part's start; elements outside the part are skipped */
        side *mem = fs ? &b_side : &a_side;
        for (int d = 0; d < mem->b->rank; d++) {
            if (mem->imap[d] < 0) continue;
            th_expr *fst = tlc_coerce(lc, tlc_lower_expr(lc, part->start[mem->imap[d]]), th_scalar(TH_I32));
            mem->start[d] = th_bin(a, THB_SUB, mem->start[d], fst);
            mem->start_hi[d] = -1;
        }
        emit_copy(lc, I, &a_side, &b_side, false, part);
        return;
    }
    bool partial = false;
    th_expr *whole = fs && dst->scope == TIR_SCOPE_GLOBAL ? whole_tile_cond(lc, &b_side, I, &partial) : NULL;
    staging st;
    if (!whole) {
        if (fs && dst->scope == TIR_SCOPE_GLOBAL && in_bounds(&b_side) && side_vec(lc, &b_side, I, 8) == 8 &&
            staging_plan(lc, s, I, &a_side, &b_side, &st)) {
            chunk_store(lc, I, &a_side, &b_side, &st, false);
            return;
        }
        emit_copy(lc, I, &a_side, &b_side, false, NULL);
        return;
    }
    bool staged = staging_plan(lc, s, I, &a_side, &b_side, &st);
    /* a tile wholly inside the tensor (all but the edge tiles) stores
     * without per-element masks; with a symbolic row length (no TMA map
     * vouches for it, as on sm_80), also only when rows keep 16-byte
     * chunks aligned, so the stores can be vectors */
    th_expr *rows_ok = NULL;
    int sym = row_chunk_check(lc, &b_side, 16 / tir_dtype_bytes(dst->dtype), &rows_ok);
    if (sym >= 0) whole = tlc_and(lc, whole, rows_ok);
    whole = tlc_let(lc, "whole", whole);
    if (sym >= 0 && !lc->sym_multiple) {
        lc->sym_multiple = TLC_NEW_ARRAY(a, int64_t, (size_t)lc->k->nsym + 1);
        for (int i = 0; i < lc->k->nsym; i++) lc->sym_multiple[i] = 1;
    }
    int64_t known = sym >= 0 ? lc->sym_multiple[sym] : 0;
    if (sym >= 0) lc->sym_multiple[sym] = 16 / tir_dtype_bytes(dst->dtype);
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    /* 16-byte row chunks: the start and the row length multiples of 8 */
    if (staged && side_vec(lc, &b_side, I, 8) == 8) chunk_store(lc, I, &a_side, &b_side, &st, false);
    else emit_copy(lc, I, &a_side, &b_side, true, NULL);
    th_stmt *fast = tlc_lower_end(lc, saved);
    if (sym >= 0) lc->sym_multiple[sym] = known;
    /* bounded only along dims of extent 1: a tile not wholly inside has
     * no element inside either, so the masked path would store nothing */
    if (!partial && sym < 0) {
        tlc_emit(lc, th_if(a, whole, fast, NULL));
        return;
    }
    saved = tlc_lower_begin(lc);
    if (staged && side_vec(lc, &b_side, I, 8) == 8) chunk_store(lc, I, &a_side, &b_side, &st, true);
    else emit_copy(lc, I, &a_side, &b_side, false, NULL);
    th_stmt *edge = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(a, whole, fast, edge));
}

/* ---------------- Tile IR, interpreter, table row ---------------- */
static void copy_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_region(w, &s->u.copy.src, TIR_ACCESS_READ, s);
    tir_access_region(w, &s->u.copy.dst, TIR_ACCESS_WRITE, s);
    if (s->u.copy.tma_index) tir_access_expr(w, s->u.copy.tma_index, s);
}

static void copy_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_puts(p, "copy(");
    tir_printer_region(p, &s->u.copy.src);
    tir_printer_puts(p, ", ");
    tir_printer_region(p, &s->u.copy.dst);
    if (s->u.copy.tma_index) { /* T.tma_copy's: kept where the ranges run as written */
        tir_printer_printf(p, ", barrier %d[", s->u.copy.tma_barrier);
        tir_printer_expr(p, s->u.copy.tma_index);
        tir_printer_puts(p, "]");
    }
    tir_printer_puts(p, ")");
}

static void copy_verify(tir_verifier *v, const tir_stmt *s) {
    bool gs = tir_verifier_region(v, &s->u.copy.src, s->loc, "copy source");
    bool gd = tir_verifier_region(v, &s->u.copy.dst, s->loc, "copy destination");
    if (!gs || !gd) return;
    int64_t ss[8], sd[8];
    int ns = tir_region_shape(&s->u.copy.src, ss), nd = tir_region_shape(&s->u.copy.dst, sd);
    if (ns < 0 || nd < 0) return;
    if (!tir_shapes_equal(ss, ns, sd, nd)) {
        char a[128], b[128];
        tir_shape_text(a, sizeof a, ss, ns);
        tir_shape_text(b, sizeof b, sd, nd);
        tir_verifier_fail(v, s->loc, "copy between regions of shapes %s and %s", a, b);
    }
}

static void copy_interp(tlc_interp *it, const tir_stmt *s) {
    rregion src, dst;
    tlc_interp_region(it, &s->u.copy.src, &src, s->loc);
    tlc_interp_region(it, &s->u.copy.dst, &dst, s->loc);
    tlc_interp_same_shape(it, &src, &dst, s->loc, "copy");
    tir_dtype sd = src.ib->b->dtype;
    tlc_ival *tmp = tlc_interp_scratch(it, 0, src.elems);
    tlc_interp_gather(it, &src, tmp, sd);
    tlc_interp_scatter(it, &dst, tmp, sd);
}

const tlc_op_desc tlc_op_copy = {
    .kind = TS_COPY, .name = "copy",
    .accesses = copy_accesses, .print = copy_print, .verify = copy_verify, .interp = copy_interp,
    .infer = copy_infer, .scratch_bytes = copy_scratch_bytes, .fresh_scratch_bytes = copy_fresh_scratch_bytes,
    .lower = copy_lower,
};
