/* Pipeline planning (docs/architecture.md, "Planning"). A Pipelined(n,
 * num_stages=s) loop multi-buffers the shared buffers that the copies from
 * global memory at the top of its body write (only those: a shared buffer
 * produced and consumed inside one iteration, like MLA's S_shared, keeps
 * one copy), so that the loads of iteration i+s-1 overlap the compute of
 * iteration i. The loads become cp.async (16 bytes, commit / wait groups)
 * on sm_80..sm_89 and TMA (cp.async.bulk.tensor on mbarriers) on sm_90 /
 * sm_90a when every one of them fits a tensor map box.
 *
 * A loop qualifies when its body starts with lets and such copies (the
 * lets are re-evaluated for the prefetched iteration), or holds such a
 * copy further down that could as well open the body: nothing before it
 * in the iteration touches its destination, writes what it reads or sets
 * a variable its region uses (TileLang's attention examples load V in a
 * macro after the softmax). Its loads go out with the stage's and the
 * statement is skipped where it stands. Parallel loops that gather rows
 * into a whole shared buffer (pipeline_gather.c) are stage loads on the
 * same terms. Anything else stays a serial loop with single-buffered shared
 * memory. */
#include "../ir/tir_access.h"
#include "lower_internal.h"

/* A copy global -> whole 2-d shared buffer, rows along some dim of the
 * tensor and columns along its contiguous last dim, same dtype. */
static bool pipelinable_copy(const tir_stmt *s) {
    if (s->kind != TS_COPY) return false;
    const tir_region *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tir_buffer *g = src->buf, *b = dst->buf;
    if (g->scope != TIR_SCOPE_GLOBAL || b->scope != TIR_SCOPE_SHARED || g->dtype != b->dtype) return false;
    if (b->rank != 2 || !b->layout || g->rank > TLC_FRAG_MAX_RANK * 2) return false;
    int dims[16];
    if (tir_region_squeezed_dims(src, dims) != 2 || dims[1] != g->rank - 1) return false;
    for (int d = 0; d < 2; d++) {
        int64_t e, s0;
        if (!tir_expr_const_int(src->extent[dims[d]], &e) || e != tir_buffer_dim(b, d)) return false;
        if (!tir_expr_const_int(dst->start[d], &s0) || s0 != 0) return false;
        if (!tir_expr_const_int(dst->extent[d], &e) || e != tir_buffer_dim(b, d)) return false;
    }
    int eb = tir_dtype_bytes(b->dtype);
    if ((tir_buffer_dim(b, 1) * eb) % 16) return false;
    if (b->layout->panel_elems > 0 && (b->layout->panel_elems * eb) % 16) return false;
    return true;
}

/* A box of shared buffer b's rows by one panel of its layout (or a whole
 * row) fits a tensor map: at most 256 rows, an inner box of 16-byte
 * multiples and at most 256 elements, as wide as the swizzle. */
static bool shared_box_fits(const tir_buffer *b) {
    const tlc_layout *l = b->layout;
    if (tir_buffer_dim(b, 0) > 256) return false;
    int64_t inner = l->panel_elems > 0 ? l->panel_elems : tir_buffer_dim(b, 1);
    int eb = tir_dtype_bytes(b->dtype);
    if (inner > 256 || (inner * eb) % 16) return false;
    if (l->swizzle != TLC_SWIZZLE_NONE && inner * eb != (int64_t)l->swizzle) return false;
    return true;
}

/* A tensor map can be built over global tensor g: a tensor parameter, or
 * a view of one (T.Tensor(shape, dtype, X.data)) whose dims the runtime
 * can evaluate at launch (metadata `view` line). */
static bool mappable(const tir_buffer *g) {
    if (g->rank > 5) return false;
    if (!g->view_of) return g->param_index >= 0;
    if (g->view_of->param_index < 0) return false;
    for (int d = 0; d < g->rank; d++) {
        int n = tir_grid_expr_nodes(g->shape[d]);
        if (n < 0 || n > TLRT_MAX_EXPR) return false;
    }
    return true;
}

bool tlc_tma_box_fits(const tir_stmt *s) { return mappable(s->u.copy.src.buf) && shared_box_fits(s->u.copy.dst.buf); }

/* TMA's im2col mode can load T.im2col's tile d: the image a tensor
 * parameter (not a view), the tile's box one that
 * fits, and a compile-time stride TMA can step by (its traversal stride,
 * 1..8). The pad, dilation and filter size may be known only at launch:
 * the runtime checks the corners they give against TMA's ranges. */
static bool im2col_fits(const tir_im2col *d) {
    int64_t stride;
    if (d->img->view_of || !mappable(d->img) || d->img->rank != 4 || !d->col->layout) return false;
    if (!tir_expr_const_int(d->stride, &stride) || stride < 1 || stride > 8) return false;
    /* the map's upper corner, pad - dilation * (kernel - 1), the longest of
     * its expressions (metadata.c) */
    int np = tir_grid_expr_nodes(d->pad), nd = tir_grid_expr_nodes(d->dilation), nk = tir_grid_expr_nodes(d->kernel);
    if (np < 0 || nd < 0 || nk < 0 || np + nd + nk + 4 > TLRT_MAX_EXPR) return false;
    return shared_box_fits(d->col);
}

bool tlc_tma_copy_fits(const tir_stmt *s) { return pipelinable_copy(s) && tlc_tma_box_fits(s); }

typedef struct other_writes {
    const tir_buffer *b;
    const tir_stmt *except;
    bool found;
} other_writes;

static void note_other_write(const tir_access *acc, void *ctx) {
    other_writes *q = ctx;
    if (acc->buf == q->b && acc->stmt != q->except && (acc->mode & TIR_ACCESS_WRITE)) q->found = true;
}

/* Something in s other than statement `except` writes b. */
static bool written_elsewhere(const tir_stmt *s, const tir_buffer *b, const tir_stmt *except) {
    other_writes q = {b, except, false};
    tir_stmt_accesses(s, note_other_write, &q);
    return q.found;
}

/* Something in items[from, to) accesses b in a way of `mode`. */
static bool touched(tir_stmt *const *items, int from, int to, const tir_buffer *b, tir_access_mode mode) {
    for (int i = from; i < to; i++)
        if (tir_stmt_touches(items[i], b, mode)) return true;
    return false;
}

/* s sets variable v (a let or an assignment). */
static bool sets_var(const tir_stmt *s, const void *v) {
    return (s->kind == TS_LET || s->kind == TS_ASSIGN) && s->u.let.var == v;
}

typedef struct var_query {
    tir_stmt *const *items;
    int from, to;
    bool set;
} var_query;

static void note_set_var(const tir_var *v, void *ctx) {
    var_query *q = ctx;
    for (int i = q->from; i < q->to && !q->set; i++) q->set = tir_stmt_any(q->items[i], sets_var, v);
}

/* The load items[i] (filling dst) may be issued before items[from, i)
 * instead of after. */
static bool hoistable(tir_stmt *const *items, int from, int i, const tir_buffer *dst) {
    const tir_stmt *s = items[i];
    if (touched(items, from, i, dst, TIR_ACCESS_READ_WRITE)) return false;
    tir_access_list acc = {0};
    tir_access_list_collect(s, &acc);
    bool ok = true;
    for (int a = 0; a < acc.n && ok; a++)
        if ((acc.v[a].mode & TIR_ACCESS_READ) && touched(items, from, i, acc.v[a].buf, TIR_ACCESS_WRITE)) ok = false;
    tir_access_list_free(&acc);
    var_query q = {items, from, i, false};
    if (ok) tir_stmt_vars(s, note_set_var, &q);
    return ok && !q.set;
}

/* items[i] (of the loop body's n) is a load the stage can take besides
 * those already in `out` (a copy, or with `gathers` a gather, *g then
 * describing it): the only writer of a buffer none of them fills.
 * `gathers`: NULL, or by buffer id whether the kernel writes it. */
static bool stageable(const tlc_pipe_plan *out, const tir_stmt *body, tir_stmt *const *items, int n, int i,
                      const bool *gathers, tlc_gather *g) {
    const tir_stmt *s = items[i];
    *g = (tlc_gather){0};
    if (out->ncopies >= TLC_PIPE_MAX_COPIES) return false;
    const tir_buffer *b;
    if (pipelinable_copy(s))
        b = s->u.copy.dst.buf;
    else if (gathers && tlc_gather_match(s, items, i, gathers, g))
        b = g->dst;
    else
        return false;
    for (int j = 0; j < out->ncopies; j++)
        if (tlc_pipe_load_dst(out, j) == b) return false;
    if (!g->loop) return !written_elsewhere(body, b, s);
    for (int j = 0; j < n; j++)
        if (j != i && tir_stmt_touches(items[j], b, TIR_ACCESS_WRITE)) return false;
    return true;
}

static void add_load(tlc_pipe_plan *out, const tir_stmt *s, const tlc_gather *g) {
    out->gathers[out->ncopies] = *g;
    out->copies[out->ncopies++] = s;
    if (g->loop)
        out->ngathers++;
    else if (!tlc_tma_box_fits(s))
        out->tma = false;
}

/* The plan of one loop; false when it stays a serial loop. With
 * `gathers` (stageable's), gathers are stage loads too. */
static bool loop_plan(tlc_arch arch, const tir_stmt *loop, const bool *gathers, tlc_pipe_plan *out) {
    *out = (tlc_pipe_plan){.loop = loop, .mbar = -1};
    if (loop->kind != TS_FOR || loop->u.for_.kind != TIR_FOR_PIPELINED || loop->u.for_.num_stages < 2) return false;
    if (loop->u.for_.nvars != 1 || loop->u.for_.step != 1) return false;
    const tir_stmt *body = loop->u.for_.body;
    int n;
    tir_stmt *const *items = tir_loop_items(loop, &n);
    out->stages = loop->u.for_.num_stages;
    out->tma = tlc_target_of(arch)->tma;
    tlc_gather g;
    for (int i = 0; i < n; i++) {
        if (items[i]->kind == TS_LET) continue;
        if (!stageable(out, body, items, n, i, gathers, &g)) break;
        add_load(out, items[i], &g);
        out->nprefix = i + 1;
    }
    for (int i = out->nprefix; i < n; i++)
        if (stageable(out, body, items, n, i, gathers, &g) &&
            hoistable(items, out->nprefix, i, g.loop ? g.dst : items[i]->u.copy.dst.buf))
            add_load(out, items[i], &g);
    /* T.im2col's tiles by TMA in im2col mode where every copy takes TMA */
    for (int i = 0; i < out->ncopies && out->tma; i++) {
        const tir_stmt *x = out->gathers[i].loop;
        if (!x || !x->u.for_.im2col || !im2col_fits(x->u.for_.im2col)) continue;
        out->im2col[i] = x->u.for_.im2col;
        out->gathers[i] = (tlc_gather){0};
        out->ngathers--;
    }
    if (out->ngathers == out->ncopies) out->tma = false; /* no copy for TMA: a cp.async pipeline */
    return out->ncopies > 0;
}

static void visit(tlc_arena *a, tlc_ptrvec *found, tlc_arch arch, const bool *gathers, const tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) visit(a, found, arch, gathers, s->u.seq.stmts[i]);
        break;
    case TS_FOR: {
        tlc_pipe_plan pp;
        if (loop_plan(arch, s, gathers, &pp)) {
            tlc_pipe_plan *rec = TLC_NEW(a, tlc_pipe_plan);
            *rec = pp;
            tlc_ptrvec_push(found, rec);
        }
        visit(a, found, arch, gathers, s->u.for_.body);
        break;
    }
    case TS_IF:
        visit(a, found, arch, gathers, s->u.if_.then);
        visit(a, found, arch, gathers, s->u.if_.els);
        break;
    default: break;
    }
}

void tlc_plan_pipeline_overlap(tlc_kernel_plan *p) {
    for (int i = 0; i < p->npipes; i++) {
        tlc_pipe_plan *pp = &p->pipes[i];
        int n;
        tir_stmt *const *items = tir_loop_items(pp->loop, &n);
        if (!n) continue;
        const tir_stmt *last = items[n - 1];
        const tlc_gemm_op_plan *g = last->kind == TS_GEMM ? tlc_plan_gemm_op(p, last) : NULL;
        if (!tlc_pipe_has_chunks(pp) || !g || g->inst.inst != TLC_INST_WGMMA || g->chain_prev ||
            last->u.gemm.c.buf->dtype != TIR_F32)
            continue;
        pp->loads_under = last;
    }
}

void tlc_plan_pipelines(tlc_kernel_plan *p, const tir_kernel *k, tlc_arena *a) {
    tlc_ptrvec found = {0};
    /* the buffers the kernel writes, which gathers may not read ahead (and
     * none in thread-indexed code, where a gather's indices may differ
     * between threads) */
    bool *written = k->thread_indexed ? NULL : TLC_NEW_ARRAY(a, bool, (size_t)k->nbuffers + 1);
    if (written) tir_stmt_mark_written(k->body, written);
    visit(a, &found, p->arch, written, k->body);
    p->npipes = found.len;
    p->pipes = TLC_NEW_ARRAY(a, tlc_pipe_plan, (size_t)found.len + 1);
    for (int i = 0; i < found.len; i++) {
        p->pipes[i] = *(tlc_pipe_plan *)found.items[i];
        for (int c = 0; c < p->pipes[i].ncopies; c++) {
            tlc_layout *l = tlc_pipe_load_dst(&p->pipes[i], c)->layout;
            if (l->stages < p->pipes[i].stages) l->stages = p->pipes[i].stages;
        }
    }
    tlc_ptrvec_free(&found);
}
