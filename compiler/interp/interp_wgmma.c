/* T.wgmma_gemm in the interpreter (docs/language.md 11.9): the gemm is
 * computed when it is issued, and its group stays in flight, until a
 * T.wait_wgmma(n) of the strand that issued it (interp_ranges.c; the
 * block's code where no ranges run at the same time) leaves at most n of
 * that strand's groups pending, the oldest retiring first. While a group
 * is in flight, using its accumulator (but by a further T.wgmma_gemm into
 * it, which the hardware chains) or writing the part of a shared buffer it
 * reads is an error: on the GPU the registers would change under the
 * program, or the tensor cores would read the new values. */
#include <stdlib.h>
#include "interp/interp_internal.h"

typedef struct group {
    const tir_buffer *acc;
    int owner;          /* the strand that issued it (-1: the block's code) */
    rregion ops[2];     /* its shared operands (A, B) */
    int nops;
    tlc_loc loc;
} group;

struct tlc_interp_wgmma {
    group *g;
    int n, cap;
};

void tlc_interp_wgmma_begin(tlc_interp *it) { it->wgmma_issuing = true; }

void tlc_interp_wgmma_issued(tlc_interp *it, const tir_stmt *s) {
    if (!it->wgmma) it->wgmma = tlc_interp_xcalloc(1, sizeof *it->wgmma);
    struct tlc_interp_wgmma *w = it->wgmma;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 8;
        w->g = tlc_interp_xrealloc(w->g, (size_t)w->cap, sizeof *w->g);
    }
    group *g = &w->g[w->n];
    *g = (group){.acc = tir_buffer_storage(s->u.gemm.c.buf), .owner = it->wgmma_owner, .loc = s->loc};
    const tir_region *ops[2] = {&s->u.gemm.a, &s->u.gemm.b};
    for (int i = 0; i < 2; i++)
        if (ops[i]->buf->scope == TIR_SCOPE_SHARED) tlc_interp_region(it, ops[i], &g->ops[g->nops++], s->loc);
    w->n++;
    it->wgmma_issuing = false;
}

void tlc_interp_wgmma_wait(tlc_interp *it, int pending) {
    struct tlc_interp_wgmma *w = it->wgmma;
    if (!w) return;
    int mine = 0;
    for (int i = 0; i < w->n; i++) mine += w->g[i].owner == it->wgmma_owner;
    int drop = mine - pending, kept = 0; /* this strand's oldest retire first */
    for (int i = 0; i < w->n; i++) {
        if (w->g[i].owner == it->wgmma_owner && drop > 0) {
            drop--;
            continue;
        }
        w->g[kept++] = w->g[i];
    }
    w->n = kept;
}

bool tlc_interp_wgmma_any(const tlc_interp *it) { return it->wgmma && it->wgmma->n && !it->wgmma_issuing; }

void tlc_interp_wgmma_check(tlc_interp *it, const tir_buffer *b, tlc_loc loc) {
    if (!tlc_interp_wgmma_any(it) || b->scope != TIR_SCOPE_FRAGMENT) return;
    const tir_buffer *s = tir_buffer_storage(b);
    for (int i = 0; i < it->wgmma->n; i++)
        if (it->wgmma->g[i].acc == s)
            tlc_interp_fail(it, loc, "'%s' is used here while a T.wgmma_gemm into it (line %d) is still in flight: a "
                            "T.wait_wgmma must retire that gemm first (on the GPU its registers would change under "
                            "this statement)", b->name, it->wgmma->g[i].loc.line);
}

/* A write to [start, start + ext) of shared buffer ib (at loc): an error
 * where an in-flight group reads any of it. */
static void check_area(tlc_interp *it, const ibuf *ib, const int64_t *start, const int64_t *ext, tlc_loc loc) {
    for (int i = 0; i < it->wgmma->n; i++) {
        const group *g = &it->wgmma->g[i];
        for (int k = 0; k < g->nops; k++) {
            const rregion *op = &g->ops[k];
            bool meet = op->ib == ib && op->elems;
            for (int d = 0; d < ib->rank && meet; d++)
                meet = start[d] < op->start[d] + op->ext[d] && op->start[d] < start[d] + ext[d];
            if (meet)
                tlc_interp_fail(it, loc, "'%s' is written here where a T.wgmma_gemm (line %d) that reads it may still "
                                "be running: the warpgroup that issued it must retire it with T.wait_wgmma before the "
                                "buffer is released (on the GPU the gemm would read the new values)", ib->b->name,
                                g->loc.line);
        }
    }
}

void tlc_interp_wgmma_check_write(tlc_interp *it, const rregion *r, tlc_loc loc) {
    if (tlc_interp_wgmma_any(it) && r->ib->b->scope == TIR_SCOPE_SHARED && r->elems)
        check_area(it, r->ib, r->start, r->ext, loc);
}

void tlc_interp_wgmma_check_store(tlc_interp *it, const tir_buffer *b, int64_t off, tlc_loc loc) {
    const ibuf *ib = &it->bufs[b->id];
    if (!tlc_interp_wgmma_any(it) || b->scope != TIR_SCOPE_SHARED || !ib->elems) return;
    int64_t at[TLC_INTERP_MAX_RANK], one[TLC_INTERP_MAX_RANK];
    for (int d = 0; d < ib->rank; d++) { /* the element's indices */
        at[d] = off / ib->strides[d] % ib->dims[d];
        one[d] = 1;
    }
    check_area(it, ib, at, one, loc);
}

void tlc_interp_wgmma_reset(tlc_interp *it) {
    if (it->wgmma) it->wgmma->n = 0;
    it->wgmma_issuing = false;
    it->wgmma_owner = -1;
}

void tlc_interp_wgmma_free(tlc_interp *it) {
    if (it->wgmma) free(it->wgmma->g);
    free(it->wgmma);
    it->wgmma = NULL;
}
