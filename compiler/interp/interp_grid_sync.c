/* Kernels with sync_grid() in the interpreter (ops/sync_grid.c). The
 * interpreter runs a grid's blocks one after the other; at a sync_grid
 * every block must have done what comes before it. So the kernel body is
 * run in parts, split at its sync_grid statements (sema keeps them in the
 * body itself): each part in every block before the next part starts,
 * each block's state kept between parts as the GPU keeps it in the
 * block's registers and shared memory (its variables, and its buffers but
 * the global tensors and workspaces, which all blocks share). */
#include <stdlib.h>
#include <string.h>
#include "interp/interp_internal.h"

/* The statements of part `part` of the body (0: up to the first
 * sync_grid), in *out (a sequence over the body's own array). */
static bool body_part(const tir_kernel *k, int part, tir_stmt *out) {
    const tir_stmt *b = k->body;
    int n = b->kind == TS_SEQ ? b->u.seq.n : 1, at = 0, from = 0;
    tir_stmt *const *items = b->kind == TS_SEQ ? b->u.seq.stmts : (tir_stmt *const *)&k->body;
    for (int i = 0; i <= n; i++) {
        if (i < n && items[i]->kind != TS_SYNC_GRID) continue;
        if (at++ == part) {
            memset(out, 0, sizeof *out);
            out->kind = TS_SEQ;
            out->loc = b->loc;
            out->u.seq.stmts = items ? (tir_stmt **)items + from : NULL;
            out->u.seq.n = i - from;
            return true;
        }
        from = i + 1;
    }
    return false;
}

int tlc_interp_grid_parts(const tir_kernel *k) {
    tir_stmt part;
    int n = 0;
    while (body_part(k, n, &part)) n++;
    return n;
}

static int64_t var_count(const tlc_interp *it) { return (int64_t)it->k->nvars * (it->nthreads ? it->nthreads : 1); }

static bool kept(const tir_buffer *b) { return b->scope != TIR_SCOPE_GLOBAL && !b->is_workspace; }

static int64_t elem_count(const tlc_interp *it, const ibuf *ib) {
    return ib->per_thread ? ib->elems * it->nthreads : ib->elems;
}

void tlc_interp_grid_begin(tlc_interp *it, int64_t blocks) {
    int nb = it->k->nbuffers;
    it->gs_blocks = blocks;
    it->gs_vars = tlc_interp_xcalloc((size_t)(blocks * var_count(it)), sizeof(tlc_ival));
    it->gs_bufs = tlc_interp_xcalloc((size_t)(blocks * nb + 1), sizeof(ibuf));
    it->gs_data = tlc_interp_xcalloc((size_t)(blocks * nb + 1), sizeof(tlc_ival *));
}

void tlc_interp_grid_free(tlc_interp *it) {
    for (int64_t i = 0; it->gs_data && i < it->gs_blocks * it->k->nbuffers; i++) free(it->gs_data[i]);
    free(it->gs_data);
    free(it->gs_bufs);
    free(it->gs_vars);
    it->gs_data = NULL;
    it->gs_bufs = NULL;
    it->gs_vars = NULL;
}

void tlc_interp_grid_save(tlc_interp *it, int64_t block) {
    const tir_kernel *k = it->k;
    int64_t nv = var_count(it);
    memcpy(it->gs_vars + block * nv, it->nthreads ? it->tvars : it->vars, sizeof(tlc_ival) * (size_t)nv);
    for (int i = 0; i < k->nbuffers; i++) {
        if (!kept(k->buffers[i])) continue;
        ibuf *ib = &it->bufs[i];
        int64_t slot = block * k->nbuffers + i;
        it->gs_bufs[slot] = *ib;
        if (!ib->live || k->buffers[i]->view_of) continue;
        int64_t n = elem_count(it, ib);
        free(it->gs_data[slot]);
        it->gs_data[slot] = tlc_interp_xcalloc((size_t)n + 1, sizeof(tlc_ival));
        memcpy(it->gs_data[slot], ib->base, sizeof(tlc_ival) * (size_t)n);
    }
}

void tlc_interp_grid_restore(tlc_interp *it, int64_t block) {
    const tir_kernel *k = it->k;
    int64_t nv = var_count(it);
    memcpy(it->nthreads ? it->tvars : it->vars, it->gs_vars + block * nv, sizeof(tlc_ival) * (size_t)nv);
    for (int pass = 0; pass < 2; pass++) /* the buffers, then the views of them */
        for (int i = 0; i < k->nbuffers; i++) {
            const tir_buffer *b = k->buffers[i];
            if (!kept(b) || (pass == 0) != !b->view_of) continue;
            const ibuf *saved = &it->gs_bufs[block * k->nbuffers + i];
            ibuf *ib = &it->bufs[i];
            if (!saved->live) {
                ib->live = false;
                continue;
            }
            tlc_ival *base = ib->base;
            int64_t cap = ib->cap;
            *ib = *saved;
            ib->base = base;
            ib->cap = cap;
            if (b->view_of) {
                ib->data = it->bufs[b->view_of->id].data;
                continue;
            }
            int64_t n = elem_count(it, ib);
            if (n > ib->cap) {
                free(ib->base);
                ib->base = tlc_interp_xcalloc((size_t)n, sizeof(tlc_ival));
                ib->cap = n;
            }
            ib->data = ib->base;
            memcpy(ib->base, it->gs_data[block * k->nbuffers + i], sizeof(tlc_ival) * (size_t)n);
        }
}

void tlc_interp_grid_run_part(tlc_interp *it, int part) {
    tir_stmt seq;
    if (!body_part(it->k, part, &seq)) return;
    if (it->nthreads) tlc_interp_threads_run(it, &seq);
    else tlc_interp_exec(it, &seq);
}
