/* Lowering the loads of Pipelined loops (plan: pipeline_plan.c; the loop
 * skeleton is in lower.c):
 *
 *   cp.async (sm_80..sm_89): every thread copies 16-byte chunks of the tile
 *     with cp.async.cg (src-size 0..16 zero-fills what lies past the
 *     tensor's edge), one commit group per iteration; a stage is ready
 *     after cp.async.wait_group(stages-2) and a barrier.
 *   TMA (sm_90 / sm_90a): thread 0 arms the stage's mbarrier with the
 *     tile's bytes (mbarrier.arrive.expect_tx) and issues one
 *     cp.async.bulk.tensor per swizzle panel; out-of-bounds parts of the box
 *     are zero-filled by the hardware. Consumers wait on the mbarrier's
 *     phase parity (iteration / stages) & 1. The tensor maps are kernel
 *     parameters the runtime encodes from the `tmap` metadata lines.
 * Copies that cannot use 16-byte chunks at run time (a symbolic row length
 * that is not a multiple of 8 elements) fall back to ordinary loads into
 * the same stage buffer: lower.c lowers such a loop twice, under
 * tlc_pipe_aligned_cond (cp.async only) and its negation (ordinary loads
 * only), so that the loop body carries neither the test nor the other
 * version's code. */
#include <string.h>
#include "../ops/op_table.h"
#include "lower_internal.h"

static th_expr *tid_is0(tlc_lower_ctx *lc) { return th_cmp(lc->a, THC_EQ, th_read(lc->a, lc->tid), tlc_i32(lc, 0)); }

/* ---------------- tensor maps ---------------- */
/* A hand-pipelined kernel's T.tma_copy (tir_stmt.copy.tma_index) that TMA
 * can issue: global -> all rows of a 2-d shared buffer, whole panels of its
 * layout (or whole rows where it has none), the box's limits (rows <= 256,
 * an inner box of 16-byte multiples, <= 256 elements, matching the
 * swizzle); its first panel and panel count in *first, *count. Any other
 * is a copy by the branch's threads (program order's meaning). */
static bool program_tma(const tlc_lower_ctx *lc, const tir_stmt *s, int64_t *first, int64_t *count) {
    if (s->kind != TS_COPY || !s->u.copy.tma_index || !lc->k->nmbarriers || !tlc_target_of(lc->arch)->tma) return false;
    const tir_region *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tir_buffer *g = src->buf, *b = dst->buf;
    const tlc_layout *l = b->layout;
    if (g->scope != TIR_SCOPE_GLOBAL || b->scope != TIR_SCOPE_SHARED || g->dtype != b->dtype || b->rank != 2 || !l ||
        l->stages > 1 || !tlc_tma_box_fits(s))
        return false;
    int dims[16];
    if (tir_region_squeezed_dims(src, dims) != 2 || dims[1] != g->rank - 1) return false;
    int64_t rows = tir_buffer_dim(b, 0), inner = l->panel_elems > 0 ? l->panel_elems : tir_buffer_dim(b, 1);
    int64_t r0, c0, er, ec, sr, sc;
    if (!tir_expr_const_int(dst->start[0], &r0) || r0 || !tir_expr_const_int(dst->extent[0], &er) || er != rows ||
        !tir_expr_const_int(dst->start[1], &c0) || !tir_expr_const_int(dst->extent[1], &ec) || c0 % inner ||
        ec % inner || ec <= 0 || !tir_expr_const_int(src->extent[dims[0]], &sr) || sr != rows ||
        !tir_expr_const_int(src->extent[dims[1]], &sc) || sc != ec)
        return false;
    if (first) *first = c0 / inner;
    if (count) *count = ec / inner;
    return true;
}

static void collect(tlc_lower_ctx *lc, const tir_stmt *s, tlc_ptrvec *out) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) collect(lc, s->u.seq.stmts[i], out);
        break;
    case TS_FOR: {
        const tlc_pipe_plan *p = tlc_plan_pipe(lc->plan, s);
        if (p && p->tma)
            for (int i = 0; i < p->ncopies; i++)
                if (!p->gathers[i].loop) tlc_ptrvec_push(out, (void *)p->copies[i]); /* copies, im2col tiles */
        collect(lc, s->u.for_.body, out);
        break;
    }
    case TS_COPY:
        if (tlc_ws_is_preload(&lc->plan->ws, s) || program_tma(lc, s, NULL, NULL)) tlc_ptrvec_push(out, (void *)s);
        break;
    case TS_IF:
        collect(lc, s->u.if_.then, out);
        collect(lc, s->u.if_.els, out);
        break;
    default: break;
    }
}

/* The tensor map load s (a copy, or T.im2col's tile) goes through (its
 * box: the buffer's rows, one panel or row). */
static void tmap_fill(const tir_stmt *s, tlc_tmap_use *t) {
    memset(t, 0, sizeof *t);
    t->copy = s;
    const tir_buffer *b;
    if (s->kind == TS_FOR) { /* T.im2col's tile: pixels of the image's [N, H, W] by channels */
        t->im2col = s->u.for_.im2col;
        t->tensor = t->im2col->img;
        t->row_dim = 2;
        b = t->im2col->col;
    } else {
        int dims[16];
        tir_region_squeezed_dims(&s->u.copy.src, dims);
        t->tensor = s->u.copy.src.buf;
        t->row_dim = dims[0];
        b = s->u.copy.dst.buf;
    }
    t->rank = t->tensor->rank;
    t->swizzle = b->layout->swizzle;
    t->inner = b->layout->panel_elems > 0 ? b->layout->panel_elems : tir_buffer_dim(b, 1);
    t->npanels = (int)(tir_buffer_dim(b, 1) / t->inner);
    for (int d = 0; d < t->rank; d++) t->box[d] = 1;
    t->box[t->row_dim] = tir_buffer_dim(b, 0);
    t->box[t->rank - 1] = t->inner;
}

/* A program's T.tma_copy (not a pipeline's load). */
static bool program_copy(const tir_stmt *s) { return s->kind == TS_COPY && s->u.copy.tma_index; }

/* A map already made for a program's T.tma_copy with t's tensor and box. */
static const tlc_tmap_use *tmap_like(const tlc_lower_ctx *lc, const tlc_tmap_use *t) {
    for (int i = 0; i < lc->ntmaps; i++) {
        const tlc_tmap_use *u = &lc->tmaps[i];
        if (!program_copy(u->copy) || u->tensor != t->tensor || u->row_dim != t->row_dim ||
            u->swizzle != t->swizzle || u->inner != t->inner || memcmp(u->box, t->box, sizeof t->box))
            continue;
        return u;
    }
    return NULL;
}

void tlc_pipe_collect_tmaps(tlc_lower_ctx *lc, int *nparams) {
    tlc_ptrvec copies = {0};
    collect(lc, lc->k->body, &copies);
    lc->ntmaps = 0;
    lc->tmaps = TLC_NEW_ARRAY(lc->a, tlc_tmap_use, (size_t)copies.len + 1);
    for (int i = 0; i < copies.len; i++) {
        const tir_stmt *s = copies.items[i];
        tlc_tmap_use t;
        tmap_fill(s, &t);
        /* a program's T.tma_copy's take one map per tensor and box */
        if (program_copy(s) && tmap_like(lc, &t)) continue;
        if (lc->ntmaps == 8) { /* the runtime's limit (TLRT_MAX_TMAPS) */
            tlc_error(lc->diag, lc->k->loc, "kernel '%s' would need more than 8 TMA descriptors; at most 8 are "
                      "supported", lc->k->name);
            break;
        }
        t.param = (*nparams)++;
        lc->tk->params[t.param] =
            (th_param){tlc_arena_printf(lc->a, "tmap%d_%s", lc->ntmaps, t.tensor->name), th_ptr(TH_AS_GENERIC), 128};
        lc->tmaps[lc->ntmaps++] = t;
    }
    tlc_ptrvec_free(&copies);
}

void tlc_pipe_sym_facts(tlc_lower_ctx *lc) {
    const tir_kernel *k = lc->k;
    lc->sym_multiple = TLC_NEW_ARRAY(lc->a, int64_t, (size_t)k->nsym + 1);
    for (int i = 0; i < k->nsym; i++) lc->sym_multiple[i] = 1;
    for (int t = 0; t < lc->ntmaps; t++) {
        const tir_buffer *g = lc->tmaps[t].tensor;
        if (g->rank < 2) continue; /* a 1-d map has no stride */
        const tir_expr *row = g->shape[g->rank - 1];
        if (!row || row->kind != TE_VAR || row->u.var->kind != TV_SYM_DIM) continue;
        int64_t m = 16 / tir_dtype_bytes(g->dtype);
        for (int i = 0; i < k->nsym; i++)
            if (k->sym_dims[i] == row->u.var && m > lc->sym_multiple[i]) lc->sym_multiple[i] = m;
    }
}

static const tlc_tmap_use *tmap_of(const tlc_lower_ctx *lc, const tir_stmt *copy) {
    for (int i = 0; i < lc->ntmaps; i++)
        if (lc->tmaps[i].copy == copy) return &lc->tmaps[i];
    if (!program_copy(copy)) return NULL;
    tlc_tmap_use t;
    tmap_fill(copy, &t);
    return tmap_like(lc, &t);
}

/* ---------------- stages ---------------- */
void tlc_pipe_set_stage(tlc_lower_ctx *lc, const tlc_pipe_plan *pp, th_expr *stage) {
    if (!lc->stage_off) lc->stage_off = TLC_NEW_ARRAY(lc->a, th_expr *, (size_t)lc->k->nbuffers + 1);
    for (int i = 0; i < pp->ncopies; i++) {
        const tir_buffer *b = tlc_pipe_load_dst(pp, i);
        lc->stage_off[b->id] = stage ? th_bin(lc->a, THB_MUL, stage, tlc_i32(lc, b->layout->bytes)) : NULL;
    }
}

static th_expr *mbar_addr(tlc_lower_ctx *lc, tlc_pipe_state *ps, th_expr *stage) {
    th_expr *off = th_bin(lc->a, THB_ADD, tlc_i32(lc, ps->mbar), th_bin(lc->a, THB_MUL, stage, tlc_i32(lc, 8)));
    return th_convert(lc->a, th_shared_ptr(lc->a, off), th_scalar(TH_I32));
}

void tlc_pipe_begin(tlc_lower_ctx *lc, tlc_pipe_state *ps) {
    const tlc_pipe_plan *pp = ps->plan;
    if (!pp->tma) return;
    ps->mbar = pp->mbar;
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    for (int s = 0; s < pp->stages; s++) {
        th_expr *args[1] = {mbar_addr(lc, ps, tlc_i32(lc, s))};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_init(lc->a, 1), args, 1, NULL, 0);
    }
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_init_fence(), NULL, 0, NULL, 0);
    th_stmt *init = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(lc->a, tid_is0(lc), init, NULL));
    tlc_emit(lc, tlc_barrier(lc));
}

/* Indices of the copy's global region for tile element (row, col). */
static void global_idx(tlc_lower_ctx *lc, const tir_region *src, const int *dims, th_expr *row, th_expr *col,
                       th_expr **idx) {
    for (int d = 0; d < src->rank; d++) {
        idx[d] = tlc_coerce(lc, tlc_lower_expr(lc, src->start[d]), th_scalar(TH_I32));
        if (d == dims[0]) idx[d] = th_bin(lc->a, THB_ADD, idx[d], row);
        if (d == dims[1]) idx[d] = th_bin(lc->a, THB_ADD, idx[d], col);
    }
}

/* Tensor g's row length is a multiple of vec elements (g's last dim symbolic). */
static th_expr *row_multiple(tlc_lower_ctx *lc, const tir_buffer *g, int64_t vec) {
    int last = g->rank - 1;
    return th_cmp(lc->a, THC_EQ, th_bin(lc->a, THB_UREM, tlc_coerce(lc, tlc_dim_value(lc, g, last), th_scalar(TH_I32)),
                                        tlc_i32(lc, vec)), tlc_i32(lc, 0));
}

/* Row length of the load's tensor when it is symbolic and the load could
 * use 16-byte chunks if it divides by them (else NULL). A gather was
 * planned on that condition (pipeline_gather.c). */
static th_expr *symbolic_row_check(tlc_lower_ctx *lc, const tlc_pipe_plan *pp, int i) {
    const tlc_gather *ga = &pp->gathers[i];
    if (ga->loop) {
        const tir_buffer *g = ga->src->u.load.buf;
        if (tir_buffer_dim(g, g->rank - 1) >= 0) return NULL;
        return row_multiple(lc, g, 16 / tir_dtype_bytes(g->dtype));
    }
    const tir_stmt *s = pp->copies[i];
    const tir_region *src = &s->u.copy.src;
    const tir_buffer *g = src->buf;
    int64_t vec = 16 / tir_dtype_bytes(s->u.copy.dst.buf->dtype);
    int last = g->rank - 1;
    if (tlc_expr_multiple(src->start[last]) % vec || tir_buffer_dim(g, last) >= 0) return NULL;
    return row_multiple(lc, g, vec);
}

th_expr *tlc_pipe_aligned_cond(tlc_lower_ctx *lc, const tlc_pipe_plan *pp) {
    th_expr *all = NULL;
    for (int i = 0; i < pp->ncopies; i++) {
        if (pp->tma && !pp->gathers[i].loop) continue; /* a TMA copy */
        th_expr *c = symbolic_row_check(lc, pp, i);
        if (c) all = tlc_and(lc, all, c);
    }
    return all;
}

/* e does not change over the loop over v: constants, block indices,
 * symbolic dims and scalar parameters under unary and binary operators. */
static bool invariant(const tir_expr *e, const tir_var *v) {
    switch (e->kind) {
    case TE_INT: return true;
    case TE_VAR: {
        tir_var_kind k = e->u.var->kind;
        return e->u.var != v && (k == TV_BLOCK_IDX || k == TV_SYM_DIM || k == TV_SCALAR_PARAM);
    }
    case TE_BINARY: return invariant(e->u.bin.a, v) && invariant(e->u.bin.b, v);
    case TE_UNARY: return invariant(e->u.un.a, v);
    default: return false;
    }
}

/* e is affine in v: invariant parts and v under + - and * by an invariant
 * factor (so its extremes over an interval of v are at the ends). */
static bool affine_in(const tir_expr *e, const tir_var *v) {
    if (invariant(e, v)) return true;
    if (e->kind == TE_VAR) return e->u.var == v;
    if (e->kind != TE_BINARY) return false;
    const tir_expr *x = e->u.bin.a, *y = e->u.bin.b;
    switch (e->u.bin.op) {
    case TB_ADD: case TB_SUB: return affine_in(x, v) && affine_in(y, v);
    case TB_MUL: return (affine_in(x, v) && invariant(y, v)) || (invariant(x, v) && affine_in(y, v));
    default: return false;
    }
}

th_expr *tlc_pipe_interior_cond(tlc_lower_ctx *lc, const tlc_pipe_plan *pp, const tir_stmt *loop) {
    if (pp->tma) return NULL;
    tlc_arena *a = lc->a;
    const tir_var *v = loop->u.for_.vars[0];
    for (int i = 0; i < pp->ncopies; i++) {
        if (pp->gathers[i].loop) return NULL; /* its rows are chosen per row */
        const tir_region *src = &pp->copies[i]->u.copy.src;
        for (int d = 0; d < src->rank; d++)
            if (!affine_in(src->start[d], v) || !tir_expr_const_int(src->extent[d], &(int64_t){0})) return NULL;
    }
    th_expr *n = tlc_coerce(lc, tlc_lower_expr(lc, loop->u.for_.extent[0]), th_scalar(TH_I32));
    th_expr *ends[2] = {tlc_i32(lc, 0), th_bin(a, THB_SUB, n, tlc_i32(lc, 1))};
    th_expr *saved_var = lc->var_expr[v->id];
    bool saved_known = lc->var_known[v->id];
    lc->var_known[v->id] = false;
    th_expr *all = th_cmp(a, THC_GT, n, tlc_i32(lc, 0));
    for (int e = 0; e < 2; e++) {
        lc->var_expr[v->id] = ends[e];
        for (int i = 0; i < pp->ncopies; i++) {
            const tir_region *src = &pp->copies[i]->u.copy.src;
            for (int d = 0; d < src->rank; d++) {
                int64_t ext;
                tir_expr_const_int(src->extent[d], &ext);
                int64_t dim = tir_buffer_dim(src->buf, d);
                th_expr *lim = dim > 0 ? tlc_i32(lc, dim) : tlc_coerce(lc, tlc_dim_value(lc, src->buf, d), th_scalar(TH_I32));
                th_expr *start = tlc_coerce(lc, tlc_lower_expr(lc, src->start[d]), th_scalar(TH_I32));
                all = tlc_and(lc, all, th_cmp(a, THC_GE, start, tlc_i32(lc, 0)));
                all = tlc_and(lc, all, th_cmp(a, THC_LE, th_bin(a, THB_ADD, start, tlc_i32(lc, ext)), lim));
            }
        }
    }
    lc->var_expr[v->id] = saved_var;
    lc->var_known[v->id] = saved_known;
    return all;
}

/* Where a 16-byte chunk of a stage load comes from: for this thread's
 * chunk number i, at (row, col) of the shared buffer, its global address
 * and the bytes to copy (NULL: all 16; fewer are zero-filled). */
typedef void chunk_source(tlc_lower_ctx *lc, const void *ctx, int64_t i, th_expr *row, th_expr *col, th_expr **gp,
                          th_expr **bytes);

/* This thread's chunk number i of whole 2-d shared buffer b: the chunk's
 * number in the buffer (*q), its row and first column. */
static void chunk_position(tlc_lower_ctx *lc, const tir_buffer *b, int64_t i, th_expr **q, th_expr **row, th_expr **col) {
    tlc_arena *a = lc->a;
    int64_t vec = 16 / tir_dtype_bytes(b->dtype), cpr = tir_buffer_dim(b, 1) / vec, threads = lc->threads;
    th_expr *tid = th_read(a, lc->tid);
    *q = th_bin(a, THB_ADD, tid, tlc_i32(lc, i * threads));
    if (threads % cpr == 0) { /* the same column every time: rows step by threads / cpr */
        *row = th_bin(a, THB_ADD, th_bin(a, THB_UDIV, tid, tlc_i32(lc, cpr)), tlc_i32(lc, i * (threads / cpr)));
        *col = th_bin(a, THB_MUL, th_bin(a, THB_UREM, tid, tlc_i32(lc, cpr)), tlc_i32(lc, vec));
    } else {
        *row = tlc_let(lc, "cr", th_bin(a, THB_UDIV, *q, tlc_i32(lc, cpr)));
        *col = tlc_let(lc, "cc", th_bin(a, THB_MUL, th_bin(a, THB_UREM, *q, tlc_i32(lc, cpr)), tlc_i32(lc, vec)));
    }
}

/* Chunks of whole 2-d shared buffer b per thread. */
static int64_t chunks_per_thread(const tlc_lower_ctx *lc, const tir_buffer *b) {
    int64_t total = tir_buffer_dim(b, 0) * (tir_buffer_dim(b, 1) / (16 / tir_dtype_bytes(b->dtype)));
    return (total + lc->threads - 1) / lc->threads;
}

/* Every thread's cp.async chunks of whole 2-d shared buffer b. */
static void issue_chunks(tlc_lower_ctx *lc, const tir_buffer *b, chunk_source *source, const void *ctx) {
    tlc_arena *a = lc->a;
    int64_t vec = 16 / tir_dtype_bytes(b->dtype), rows = tir_buffer_dim(b, 0), cols = tir_buffer_dim(b, 1);
    int64_t cpr = cols / vec, total = rows * cpr, threads = lc->threads;
    for (int64_t i = 0; i * threads < total; i++) {
        th_expr *q, *row, *col;
        chunk_position(lc, b, i, &q, &row, &col);
        th_expr *gp, *bytes;
        source(lc, ctx, i, row, col, &gp, &bytes);
        th_expr *sidx[2] = {row, col};
        th_expr *sp = th_convert(a, tlc_shared_elem_ptr(lc, b, sidx), th_scalar(TH_I32));
        th_expr *args[3] = {sp, gp, bytes};
        th_stmt *cp = tlc_ptx_stmt(lc, tlc_ptx_cp_async_16(bytes != NULL), args, bytes ? 3 : 2, NULL, 0);
        tlc_emit(lc, total % threads && (i + 1) * threads > total
                         ? th_if(a, th_cmp(a, THC_LT, q, tlc_i32(lc, total)), cp, NULL)
                         : cp);
    }
}

typedef struct copy_chunks {
    const tlc_pipe_state *ps;
    const tir_stmt *copy;
    th_expr *lim; /* the tensor's last dim */
} copy_chunks;

static void copy_chunk(tlc_lower_ctx *lc, const void *ctx, int64_t i, th_expr *row, th_expr *col, th_expr **gp,
                       th_expr **bytes) {
    (void)i;
    const copy_chunks *c = ctx;
    tlc_arena *a = lc->a;
    const tir_region *src = &c->copy->u.copy.src;
    const tir_buffer *g = src->buf;
    int eb = tir_dtype_bytes(g->dtype);
    int64_t vec = 16 / eb;
    int dims[16];
    tir_region_squeezed_dims(src, dims);
    th_expr *idx[16];
    global_idx(lc, src, dims, row, col, idx);
    th_expr *valid = NULL;
    *bytes = NULL;
    if (c->ps->align_mode != TLC_PIPE_INTERIOR) { /* INTERIOR: no masks, tlc_pipe_interior_cond held */
        valid = tlc_global_in_bounds(lc, g, idx, NULL);
        th_expr *left = th_bin(a, THB_SUB, c->lim, idx[g->rank - 1]);
        *bytes = th_bin(a, THB_MUL, th_bin(a, THB_MIN, left, tlc_i32(lc, vec)), tlc_i32(lc, eb));
        if (valid) *bytes = th_select(a, valid, *bytes, tlc_i32(lc, 0));
    }
    *gp = tlc_global_elem_ptr(lc, g, idx);
    if (valid) *gp = th_select(a, valid, *gp, th_param_ref(a, lc->tk, lc->tensor_param[g->id]));
}

static void issue_cp_async(tlc_lower_ctx *lc, const tlc_pipe_state *ps, const tir_stmt *s) {
    tlc_arena *a = lc->a;
    const tir_region *src = &s->u.copy.src;
    const tir_buffer *g = src->buf, *b = s->u.copy.dst.buf;
    int64_t vec = 16 / tir_dtype_bytes(b->dtype);
    int last = g->rank - 1;
    int64_t lastdim = tir_buffer_dim(g, last);
    /* 16-byte chunks need 16-byte aligned rows and column starts */
    th_expr *aligned = NULL;
    if (tlc_expr_multiple(src->start[last]) % vec) {
        s->op->lower(lc, s);
        return;
    }
    if (lastdim < 0 && ps->align_mode == TLC_PIPE_ALIGN_FALLBACK) {
        s->op->lower(lc, s);
        return;
    }
    if (lastdim < 0 && ps->align_mode == TLC_PIPE_ALIGN_CHECK)
        aligned = tlc_let(lc, "al16", row_multiple(lc, g, vec));
    else if (lastdim >= 0 && lastdim % vec) {
        s->op->lower(lc, s);
        return;
    }
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    copy_chunks c = {ps, s, tlc_let(lc, "lim", tlc_coerce(lc, tlc_dim_value(lc, g, last), th_scalar(TH_I32)))};
    issue_chunks(lc, b, copy_chunk, &c);
    th_stmt *fast = tlc_lower_end(lc, saved);
    if (!aligned) {
        tlc_emit(lc, fast);
        return;
    }
    saved = tlc_lower_begin(lc);
    s->op->lower(lc, s);
    th_stmt *slow = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(a, aligned, fast, slow));
}

/* ---------------- a gather's arithmetic ahead of the loop ---------------- */
/* What a gather's chunk computes from its row alone (the pixel of an
 * im2col row: divisions by run-time sizes) is the same every iteration:
 * the maximal such parts of its indices, condition and lets, those with a
 * division or modulo, are computed per chunk once before the loop
 * (tlc_pipe_hoist) and read back where the iteration's chunk is lowered
 * (through lc->memo_expr). */
struct tlc_gather_hoist {
    const tir_expr **exprs; /* the parts */
    int n, cap;
    th_expr **values;       /* [chunk * n + k]: part k of this thread's chunk number `chunk` */
};

typedef struct hoist_scan {
    const tir_var *loop_var;
    tir_stmt *const *items; /* the loop body's statements before the gather */
    int nitems;
    const tlc_gather *g;
    struct tlc_gather_hoist *h;
    tlc_arena *a;
} hoist_scan;

static bool gather_own_var(const hoist_scan *hs, const tir_var *v) {
    if (v == hs->g->row || v == hs->g->col) return true;
    for (int i = 0; i < hs->g->nlets; i++)
        if (hs->g->lets[i]->u.let.var == v) return true;
    return false;
}

/* The value a let of the loop's body (before the gather, or the gather's
 * own) holds, NULL where none of them sets v. */
static const tir_expr *body_let_value(const hoist_scan *hs, const tir_var *v) {
    for (int i = 0; i < hs->nitems; i++)
        if ((hs->items[i]->kind == TS_LET || hs->items[i]->kind == TS_ASSIGN) && hs->items[i]->u.let.var == v)
            return hs->items[i]->kind == TS_LET && v->assigned_once ? hs->items[i]->u.let.value : NULL;
    for (int i = 0; i < hs->g->nlets; i++)
        if (hs->g->lets[i]->u.let.var == v) return v->assigned_once ? hs->g->lets[i]->u.let.value : NULL;
    return NULL;
}

static bool set_in_body(const hoist_scan *hs, const tir_var *v) {
    for (int i = 0; i < hs->nitems; i++)
        if ((hs->items[i]->kind == TS_LET || hs->items[i]->kind == TS_ASSIGN) && hs->items[i]->u.let.var == v) return true;
    return gather_own_var(hs, v) && v != hs->g->row && v != hs->g->col;
}

/* e has the same value in every iteration of the loop (for a given chunk):
 * no load, not the loop's variable nor a let of the body that is not. */
static bool iteration_invariant(const hoist_scan *hs, const tir_expr *e, int depth) {
    if (!e || depth > 32) return false;
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: return true;
    case TE_VAR: {
        const tir_var *v = e->u.var;
        if (v == hs->loop_var) return false;
        if (v == hs->g->row || v == hs->g->col) return true;
        if (v->kind == TV_LET) {
            if (!set_in_body(hs, v)) return v->assigned_once; /* set before the loop */
            const tir_expr *value = body_let_value(hs, v);
            return value && iteration_invariant(hs, value, depth + 1);
        }
        return v->kind == TV_LOOP || v->kind == TV_BLOCK_IDX || v->kind == TV_SYM_DIM || v->kind == TV_SCALAR_PARAM ||
               v->kind == TV_THREAD_IDX;
    }
    case TE_BINARY: return iteration_invariant(hs, e->u.bin.a, depth) && iteration_invariant(hs, e->u.bin.b, depth);
    case TE_UNARY: return iteration_invariant(hs, e->u.un.a, depth);
    case TE_CAST: return !e->u.cast.bits && iteration_invariant(hs, e->u.cast.a, depth);
    case TE_SELECT:
        return iteration_invariant(hs, e->u.sel.cond, depth) && iteration_invariant(hs, e->u.sel.a, depth) &&
               iteration_invariant(hs, e->u.sel.b, depth);
    default: return false;
    }
}

/* e differs between chunks (reads the row, the column or the gather's lets)
 * and divides. */
static bool per_chunk(const hoist_scan *hs, const tir_expr *e, bool *divides) {
    if (!e) return false;
    switch (e->kind) {
    case TE_VAR: return gather_own_var(hs, e->u.var);
    case TE_BINARY: {
        *divides |= e->u.bin.op == TB_FLOORDIV || e->u.bin.op == TB_FLOORMOD;
        bool a = per_chunk(hs, e->u.bin.a, divides), b = per_chunk(hs, e->u.bin.b, divides);
        return a || b;
    }
    case TE_UNARY: return per_chunk(hs, e->u.un.a, divides);
    case TE_CAST: return per_chunk(hs, e->u.cast.a, divides);
    case TE_SELECT: {
        bool c = per_chunk(hs, e->u.sel.cond, divides), a = per_chunk(hs, e->u.sel.a, divides);
        return per_chunk(hs, e->u.sel.b, divides) || c || a;
    }
    default: return false;
    }
}

static void hoist_parts(hoist_scan *hs, const tir_expr *e) {
    if (!e) return;
    bool divides = false;
    if (e->kind != TE_LOAD && iteration_invariant(hs, e, 0) && per_chunk(hs, e, &divides) && divides) {
        struct tlc_gather_hoist *h = hs->h;
        for (int i = 0; i < h->n; i++)
            if (h->exprs[i] == e) return;
        if (h->n == h->cap) {
            int cap = h->cap ? 2 * h->cap : 8;
            const tir_expr **v = TLC_NEW_ARRAY(hs->a, const tir_expr *, (size_t)cap);
            for (int i = 0; i < h->n; i++) v[i] = h->exprs[i];
            h->exprs = v;
            h->cap = cap;
        }
        h->exprs[h->n++] = e;
        return;
    }
    switch (e->kind) {
    case TE_LOAD:
        for (int d = 0; d < e->u.load.buf->rank; d++) hoist_parts(hs, e->u.load.idx[d]);
        return;
    case TE_BINARY:
        hoist_parts(hs, e->u.bin.a);
        hoist_parts(hs, e->u.bin.b);
        return;
    case TE_UNARY: hoist_parts(hs, e->u.un.a); return;
    case TE_CAST: hoist_parts(hs, e->u.cast.a); return;
    case TE_SELECT:
        hoist_parts(hs, e->u.sel.cond);
        hoist_parts(hs, e->u.sel.a);
        hoist_parts(hs, e->u.sel.b);
        return;
    default: return;
    }
}

/* Binds the gather's variables to a chunk's row and column (saving theirs). */
static void bind_chunk(tlc_lower_ctx *lc, const tlc_gather *ga, th_expr *row, th_expr *col, th_expr **saved, bool *known) {
    const tir_var *vars[2] = {ga->row, ga->col};
    th_expr *values[2] = {row, col};
    for (int i = 0; i < 2; i++) {
        saved[i] = lc->var_expr[vars[i]->id];
        known[i] = lc->var_known[vars[i]->id];
        lc->var_expr[vars[i]->id] = values[i];
        lc->var_known[vars[i]->id] = false;
    }
}

static void unbind_chunk(tlc_lower_ctx *lc, const tlc_gather *ga, th_expr *const *saved, const bool *known) {
    const tir_var *vars[2] = {ga->row, ga->col};
    for (int i = 0; i < 2; i++) {
        lc->var_expr[vars[i]->id] = saved[i];
        lc->var_known[vars[i]->id] = known[i];
    }
}

void tlc_pipe_hoist(tlc_lower_ctx *lc, tlc_pipe_state *ps) {
    const tlc_pipe_plan *pp = ps->plan;
    if (!pp->ngathers || ps->align_mode == TLC_PIPE_ALIGN_FALLBACK) return;
    int n;
    tir_stmt *const *items = tir_loop_items(ps->loop, &n);
    ps->hoist = TLC_NEW_ARRAY(lc->a, struct tlc_gather_hoist, (size_t)pp->ncopies);
    bool lets_done = false;
    for (int l = 0; l < pp->ncopies; l++) {
        const tlc_gather *ga = &pp->gathers[l];
        if (!ga->loop) continue;
        int at = 0;
        while (at < n && items[at] != ga->loop) at++;
        struct tlc_gather_hoist *h = &ps->hoist[l];
        hoist_scan hs = {ps->loop->u.for_.vars[0], items, at, ga, h, lc->a};
        for (int i = 0; i < ga->nlets; i++) hoist_parts(&hs, ga->lets[i]->u.let.value);
        for (int d = 0; d < ga->src->u.load.buf->rank; d++) hoist_parts(&hs, ga->src->u.load.idx[d]);
        hoist_parts(&hs, ga->cond);
        if (!h->n) continue;
        if (!lets_done) { /* the body's lets the parts may read, where they do not change */
            for (int i = 0; i < pp->nprefix; i++)
                if (items[i]->kind == TS_LET && iteration_invariant(&hs, items[i]->u.let.value, 0))
                    tlc_lower_stmt(lc, items[i]);
            lets_done = true;
        }
        int64_t chunks = chunks_per_thread(lc, ga->dst);
        h->values = TLC_NEW_ARRAY(lc->a, th_expr *, (size_t)(chunks * h->n));
        for (int64_t c = 0; c < chunks; c++) {
            th_expr *q, *row, *col, *saved[2];
            bool known[2];
            chunk_position(lc, ga->dst, c, &q, &row, &col);
            bind_chunk(lc, ga, row, col, saved, known);
            for (int i = 0; i < ga->nlets; i++)
                if (iteration_invariant(&hs, ga->lets[i]->u.let.value, 0)) tlc_lower_stmt(lc, ga->lets[i]);
            for (int k = 0; k < h->n; k++) h->values[c * h->n + k] = tlc_let(lc, "hz", tlc_lower_expr(lc, h->exprs[k]));
            unbind_chunk(lc, ga, saved, known);
        }
    }
}

typedef struct gather_chunks {
    const tlc_gather *g;
    const struct tlc_gather_hoist *h; /* NULL: nothing computed ahead */
    th_expr *lim; /* the tensor's last dim */
} gather_chunks;

/* The gather's row `row` at columns [col, col + 16 bytes): its loop's
 * variables bound to them, its load's indices and condition lowered. */
static void gather_chunk(tlc_lower_ctx *lc, const void *ctx, int64_t chunk, th_expr *row, th_expr *col, th_expr **gp,
                         th_expr **bytes) {
    const gather_chunks *c = ctx;
    const tlc_gather *ga = c->g;
    tlc_arena *a = lc->a;
    const tir_buffer *g = ga->src->u.load.buf;
    int eb = tir_dtype_bytes(g->dtype), last = g->rank - 1;
    th_expr *saved[2];
    bool known[2];
    bind_chunk(lc, ga, row, col, saved, known);
    if (c->h && c->h->n) {
        lc->memo_expr = c->h->exprs;
        lc->memo_value = c->h->values + chunk * c->h->n;
        lc->nmemo = c->h->n;
    }
    for (int i = 0; i < ga->nlets; i++) tlc_lower_stmt(lc, ga->lets[i]);
    th_expr *idx[16];
    for (int d = 0; d < g->rank; d++) idx[d] = tlc_coerce(lc, tlc_lower_expr(lc, ga->src->u.load.idx[d]), th_scalar(TH_I32));
    th_expr *valid = tlc_global_in_bounds(lc, g, idx, NULL);
    if (ga->cond) valid = tlc_and(lc, tlc_coerce(lc, tlc_lower_expr(lc, ga->cond), th_scalar(TH_I1)), valid);
    th_expr *left = th_bin(a, THB_SUB, c->lim, idx[last]);
    *bytes = th_bin(a, THB_MUL, th_bin(a, THB_MIN, left, tlc_i32(lc, 16 / eb)), tlc_i32(lc, eb));
    *gp = tlc_global_elem_ptr(lc, g, idx);
    if (valid) {
        valid = tlc_let(lc, "gv", valid);
        *bytes = th_select(a, valid, *bytes, tlc_i32(lc, 0));
        *gp = th_select(a, valid, *gp, th_param_ref(a, lc->tk, lc->tensor_param[g->id]));
    }
    lc->nmemo = 0;
    unbind_chunk(lc, ga, saved, known);
}

/* A gather's rows by cp.async chunks; in the loop version for unaligned
 * rows, its Parallel loop as written. */
static void issue_gather(tlc_lower_ctx *lc, const tlc_pipe_state *ps, const tlc_gather *g) {
    if (ps->align_mode == TLC_PIPE_ALIGN_FALLBACK) {
        tlc_op_of(g->loop)->lower(lc, g->loop);
        return;
    }
    const tir_buffer *t = g->src->u.load.buf;
    gather_chunks c = {g, ps->hoist ? &ps->hoist[g - ps->plan->gathers] : NULL,
                       tlc_let(lc, "lim", tlc_coerce(lc, tlc_dim_value(lc, t, t->rank - 1), th_scalar(TH_I32)))};
    issue_chunks(lc, g->dst, gather_chunk, &c);
}

/* One panel's cp.async.bulk.tensor: its arguments (the multicast mask
 * last, when `mask`). */
static th_stmt *tma_panel(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_tmap_use *t, th_expr *base, th_expr *bar, int p,
                          th_expr *mask) {
    tlc_arena *a = lc->a;
    const tir_region *src = &s->u.copy.src;
    const tir_buffer *b = s->u.copy.dst.buf;
    int64_t panel_bytes = tir_buffer_dim(b, 0) * t->inner * tir_dtype_bytes(b->dtype);
    th_expr *args[9];
    int na = 0;
    args[na++] = th_convert(a, th_shared_ptr(a, th_bin(a, THB_ADD, base, tlc_i32(lc, p * panel_bytes))), th_scalar(TH_I32));
    args[na++] = th_param_ref(a, lc->tk, t->param);
    /* coordinates, innermost dim first */
    for (int d = t->rank - 1; d >= 0; d--) {
        th_expr *c = tlc_coerce(lc, tlc_lower_expr(lc, src->start[d]), th_scalar(TH_I32));
        if (d == t->rank - 1) c = th_bin(a, THB_ADD, c, tlc_i32(lc, p * t->inner));
        args[na++] = c;
    }
    args[na++] = bar;
    if (mask) args[na++] = mask;
    return tlc_ptx_stmt(lc, mask ? tlc_ptx_tma_load_multicast(a, t->rank) : tlc_ptx_tma_load(a, t->rank), args, na, NULL, 0);
}

/* A copy's panels; with multicast (ps->mc_blocks), in a cluster of more
 * than one block panel number *next (counted over the iteration's
 * copies) goes out from the block of rank *next % blocks to all of them. */
static void issue_panels(tlc_lower_ctx *lc, const tir_stmt *s, th_expr *base, th_expr *bar, const tlc_pipe_state *ps,
                         int *next, int npanels) {
    tlc_arena *a = lc->a;
    const tlc_tmap_use *t = tmap_of(lc, s);
    if (!t) {
        tlc_error(lc->diag, s->loc, "internal error: no tensor map for this copy");
        return;
    }
    if (npanels < 0) npanels = t->npanels;
    bool multicast = ps && ps->mc_blocks;
    th_expr *all = multicast ? th_bin(a, THB_SUB, th_bin(a, THB_SHL, tlc_i32(lc, 1), ps->mc_blocks), tlc_i32(lc, 1)) : NULL;
    for (int p = 0; p < npanels; p++) {
        th_stmt *own = tma_panel(lc, s, t, base, bar, p, NULL);
        if (!multicast) {
            tlc_emit(lc, own);
            continue;
        }
        th_expr *mine = th_cmp(a, THC_EQ, ps->mc_rank, th_bin(a, THB_UREM, tlc_i32(lc, (*next)++), ps->mc_blocks));
        th_stmt *shared = th_if(a, mine, tma_panel(lc, s, t, base, bar, p, all), NULL);
        tlc_emit(lc, th_if(a, th_cmp(a, THC_GT, ps->mc_blocks, tlc_i32(lc, 1)), shared, own));
    }
}

/* Every panel of copy s. */
static void issue_copy(tlc_lower_ctx *lc, const tir_stmt *s, th_expr *base, th_expr *bar, const tlc_pipe_state *ps,
                       int *next) {
    issue_panels(lc, s, base, bar, ps, next, -1);
}

bool tlc_program_tma_copy(tlc_lower_ctx *lc, const tir_stmt *s) {
    int64_t first, count;
    const tlc_tmap_use *t = program_tma(lc, s, &first, &count) ? tmap_of(lc, s) : NULL;
    if (!t) return false;
    const tir_buffer *b = s->u.copy.dst.buf;
    int64_t panel_bytes = tir_buffer_dim(b, 0) * t->inner * tir_dtype_bytes(b->dtype);
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    th_expr *bar = tlc_let(lc, "tmabar", tlc_mbarrier_addr(lc, s->u.copy.tma_barrier, s->u.copy.tma_index));
    th_expr *args[2] = {bar, tlc_i32(lc, count * panel_bytes)};
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_expect_tx(), args, 2, NULL, 0);
    issue_panels(lc, s, tlc_i32(lc, b->layout->offset + first * panel_bytes), bar, NULL, NULL, (int)count);
    th_stmt *one = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(lc->a, tid_is0(lc), one, NULL));
    return true;
}

/* T.im2col's tile (the Parallel loop s) by TMA in im2col mode, one
 * instruction a panel: the coordinates (innermost first) are the tile's
 * first channel and, for its first pixel (n, oh, ow), the image position
 * (oh * stride - pad, ow * stride - pad) where that pixel's filter window
 * starts; TMA walks the pixels from there through the map's bounding box
 * (its corners and traversal stride, from the metadata) and adds the
 * filter position (kw, kh) * dilation, the offsets, to each. */
static void issue_im2col(tlc_lower_ctx *lc, const tir_stmt *s, th_expr *base, th_expr *bar) {
    tlc_arena *a = lc->a;
    const tir_im2col *d = s->u.for_.im2col;
    const tlc_tmap_use *t = tmap_of(lc, s);
    if (!t) {
        tlc_error(lc->diag, s->loc, "internal error: no tensor map for this im2col tile");
        return;
    }
#define I32(e) tlc_let(lc, "ic", tlc_coerce(lc, tlc_lower_expr(lc, e), th_scalar(TH_I32)))
    th_expr *p0 = I32(d->first_pixel), *oh = I32(d->out_h), *ow = I32(d->out_w), *stride = I32(d->stride);
    th_expr *pad = I32(d->pad), *dil = I32(d->dilation), *c0 = I32(d->channel), *kh = I32(d->kh), *kw = I32(d->kw);
#undef I32
    th_expr *row = th_bin(a, THB_UDIV, p0, ow);
    th_expr *w = th_bin(a, THB_SUB, th_bin(a, THB_MUL, th_bin(a, THB_UREM, p0, ow), stride), pad);
    th_expr *h = th_bin(a, THB_SUB, th_bin(a, THB_MUL, th_bin(a, THB_UREM, row, oh), stride), pad);
    th_expr *n = th_bin(a, THB_UDIV, row, oh);
    const tir_buffer *b = d->col;
    int64_t panel_bytes = tir_buffer_dim(b, 0) * t->inner * tir_dtype_bytes(b->dtype);
    for (int p = 0; p < t->npanels; p++) {
        th_expr *args[9] = {
            th_convert(a, th_shared_ptr(a, th_bin(a, THB_ADD, base, tlc_i32(lc, p * panel_bytes))), th_scalar(TH_I32)),
            th_param_ref(a, lc->tk, t->param),
            th_bin(a, THB_ADD, c0, tlc_i32(lc, p * t->inner)), w, h, n, bar,
            th_bin(a, THB_MUL, kw, dil), th_bin(a, THB_MUL, kh, dil)};
        tlc_emit_ptx(lc, tlc_ptx_tma_load_im2col(a, t->rank), args, 9, NULL, 0);
    }
}

/* Stage load i of the plan by TMA: a copy's panels, or an im2col tile's. */
static void issue_tma(tlc_lower_ctx *lc, tlc_pipe_state *ps, int i, th_expr *stage, int *next) {
    const tir_stmt *s = ps->plan->copies[i];
    const tir_buffer *b = tlc_pipe_load_dst(ps->plan, i);
    th_expr *base = th_bin(lc->a, THB_ADD, tlc_i32(lc, b->layout->offset), th_bin(lc->a, THB_MUL, stage, tlc_i32(lc, b->layout->bytes)));
    if (ps->plan->im2col[i])
        issue_im2col(lc, s, base, mbar_addr(lc, ps, stage));
    else
        issue_copy(lc, s, base, mbar_addr(lc, ps, stage), ps, next);
}

void tlc_tma_issue_copy(tlc_lower_ctx *lc, const tir_stmt *s, th_expr *base, th_expr *bar) {
    issue_copy(lc, s, base, bar, NULL, NULL);
}

void tlc_pipe_issue(tlc_lower_ctx *lc, tlc_pipe_state *ps, th_expr *it, th_expr *stage) {
    tlc_arena *a = lc->a;
    const tlc_pipe_plan *pp = ps->plan;
    const tir_var *v = ps->loop->u.for_.vars[0];
    tir_stmt *const *items = tir_loop_items(ps->loop, NULL);
    th_expr *saved_var = lc->var_expr[v->id];
    bool saved_known = lc->var_known[v->id];
    it = tlc_let(lc, "pit", it);
    stage = tlc_let(lc, "pst", stage);
    lc->var_expr[v->id] = it;
    lc->var_known[v->id] = false;
    tlc_pipe_set_stage(lc, pp, stage);
    tlc_ptrvec *saved = tlc_lower_begin(lc);
    for (int i = 0; i < pp->nprefix; i++)
        if (items[i]->kind == TS_LET) tlc_lower_stmt(lc, items[i]);
    if (ps->before_loads) tlc_emit(lc, ps->before_loads);
    if (pp->tma) { /* the copies; a gather's chunks go below */
        int64_t bytes = 0;
        for (int i = 0; i < pp->ncopies; i++)
            if (!pp->gathers[i].loop) bytes += tlc_pipe_load_dst(pp, i)->layout->bytes;
        tlc_ptrvec *inner = tlc_lower_begin(lc);
        th_expr *args[2] = {mbar_addr(lc, ps, stage), tlc_i32(lc, bytes)};
        tlc_emit_ptx(lc, tlc_ptx_mbarrier_arrive_expect_tx(), args, 2, NULL, 0);
        int next = 0;
        for (int i = 0; i < pp->ncopies; i++)
            if (!pp->gathers[i].loop) issue_tma(lc, ps, i, stage, &next);
        th_stmt *one = tlc_lower_end(lc, inner);
        tlc_emit(lc, ps->in_issuer ? one : th_if(a, tid_is0(lc), one, NULL));
    }
    for (int i = 0; i < pp->ncopies; i++) {
        if (pp->gathers[i].loop)
            issue_gather(lc, ps, &pp->gathers[i]);
        else if (!pp->tma)
            issue_cp_async(lc, ps, pp->copies[i]);
    }
    th_stmt *loads = tlc_lower_end(lc, saved);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_LT, it, ps->n), loads, NULL));
    /* one group per iteration, empty ones too, so wait_group counts iterations */
    if (tlc_pipe_has_chunks(pp)) tlc_emit_ptx(lc, tlc_ptx_cp_async_commit(), NULL, 0, NULL, 0);
    tlc_pipe_set_stage(lc, pp, NULL);
    lc->var_expr[v->id] = saved_var;
    lc->var_known[v->id] = saved_known;
}

void tlc_pipe_wait_chunks(tlc_lower_ctx *lc, tlc_pipe_state *ps) {
    /* groups of iterations > it may stay in flight; the caller's barrier follows */
    if (tlc_pipe_has_chunks(ps->plan))
        tlc_emit_ptx(lc, tlc_ptx_cp_async_wait(lc->a, ps->plan->stages - 2), NULL, 0, NULL, 0);
}

void tlc_pipe_wait(tlc_lower_ctx *lc, tlc_pipe_state *ps, th_expr *it, th_expr *stage) {
    const tlc_pipe_plan *pp = ps->plan;
    if (!pp->tma) return;
    th_expr *parity = th_bin(lc->a, THB_AND, th_bin(lc->a, THB_UDIV, it, tlc_i32(lc, pp->stages)), tlc_i32(lc, 1));
    th_expr *args[2] = {mbar_addr(lc, ps, stage), parity};
    tlc_emit_ptx(lc, tlc_ptx_mbarrier_wait_parity(), args, 2, NULL, 0);
}

void tlc_pipe_end(tlc_lower_ctx *lc, tlc_pipe_state *ps) {
    if (tlc_pipe_has_chunks(ps->plan)) tlc_emit_ptx(lc, tlc_ptx_cp_async_wait(lc->a, 0), NULL, 0, NULL, 0);
    tlc_emit(lc, tlc_barrier(lc));
}
