/* Layout inference (docs/architecture.md, "Layout inference"): a worklist over the tile
 * ops of a kernel until nothing changes. Each op proposes fragments for its
 * buffers from those already known, in three strengths:
 *   strict  fixed by an instruction (gemm accumulators: the GEMM issue adds
 *           gemm's rule, which proposes TLC_STRENGTH_STRICT fragments here);
 *   common  derived from a known layout (a Parallel loop follows the buffers
 *           it indexes, a reduce derives its output from its input);
 *   free    a default for what nothing constrains (blocked fragments).
 * Order: propagate common proposals to a fixed point; when buffers are
 * still unknown, take ONE free proposal (copies from global memory first,
 * since they decide the vector width, then other ops in program order,
 * fills last: a fill works with any layout, so the ops that use the
 * buffer choose) and propagate again. A conflict is reported at the op, or (fragment to
 * fragment copies) becomes a conversion through shared memory in lowering. */
#include <string.h>
#include "../ir/tir_access.h"
#include "../ops/op_table.h"
#include "passes.h"

static bool op_rule(tlc_infer *st, const tir_stmt *s, bool free_pass) {
    const tlc_op_desc *d = tlc_op_of(s);
    return d && d->infer && d->infer(st, s, free_pass);
}

static bool copy_touches_global(const tir_stmt *s) {
    return s->kind == TS_COPY &&
           (s->u.copy.src.buf->scope == TIR_SCOPE_GLOBAL || s->u.copy.dst.buf->scope == TIR_SCOPE_GLOBAL);
}

/* The pass (0, 1, 2) in which an op's free proposal is taken. */
static int free_pass_of(const tir_stmt *s) { return copy_touches_global(s) ? 0 : s->kind == TS_FILL ? 2 : 1; }

static void propagate(tlc_infer *st, void **ops, int n) {
    for (int guard = 0; guard < 64 && !st->failed; guard++) {
        st->changed = false;
        for (int i = 0; i < n && !st->failed; i++) op_rule(st, ops[i], false);
        if (!st->changed) break;
    }
}

/* A fragment element read or written outside a Parallel loop is read or
 * written by every thread (TileLang's semantics: `D_local[0] = D[bz]`,
 * `if block_mask[k]:` in a serial loop), so every thread holds the whole
 * fragment. Proposed strict, before anything else: an op that needs
 * another layout for it then reports the conflict. */
static void per_thread_access(const tir_access *x, void *ctx) {
    tlc_infer *st = ctx;
    tir_buffer *b = x->buf;
    if (x->region || b->scope != TIR_SCOPE_FRAGMENT || st->failed || b->rank > TLC_FRAG_MAX_RANK) return;
    int64_t shape[TLC_FRAG_MAX_RANK];
    for (int d = 0; d < b->rank; d++) shape[d] = tir_buffer_dim(b, d);
    /* refused here, before any rule walks its slots */
    int64_t regs = (tir_buffer_elems(b) * tir_dtype_bytes(b->dtype) + 3) / 4;
    if (regs > TLC_FRAGMENT_MAX_REGS) {
        tlc_error(st->diag, b->loc, "fragment '%s' needs %lld registers per thread (at most %d): every thread holds "
                  "all of it, since it is read or written element by element outside a Parallel loop", b->name,
                  (long long)regs, TLC_FRAGMENT_MAX_REGS);
        tlc_note(st->diag, x->loc, "'%s' is used here", b->name);
        st->failed = true;
        return;
    }
    tlc_fragment *f = tlc_fragment_per_thread(st->a, b->rank, shape, tir_buffer_threads(st->k, b));
    if (!tlc_infer_propose(st, b, f, TLC_STRENGTH_STRICT, x->stmt))
        tlc_infer_conflict(st, x->stmt, b, f, "an element access outside a Parallel loop needs all of it in every thread");
}

static void propose_per_thread(tlc_infer *st, const tir_stmt *s) {
    if (!s || st->failed) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) propose_per_thread(st, s->u.seq.stmts[i]);
        return;
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PARALLEL) return;
        tir_stmt_own_accesses(s, per_thread_access, st);
        propose_per_thread(st, s->u.for_.body);
        return;
    case TS_IF:
        tir_stmt_own_accesses(s, per_thread_access, st);
        propose_per_thread(st, s->u.if_.then);
        propose_per_thread(st, s->u.if_.els);
        return;
    default: /* a tile op's own element accesses are the loads in its regions' starts */
        tir_stmt_own_accesses(s, per_thread_access, st);
        return;
    }
}

static bool infer_kernel(tlc_infer *st, tir_kernel *k) {
    tlc_ptrvec ops = {0};
    tir_collect_tile_ops(k->body, &ops);
    void **v = ops.items;
    int n = ops.len;
    propose_per_thread(st, k->body);
    for (int round = 0; round < 4096 && !st->failed; round++) {
        propagate(st, v, n);
        if (st->failed) break;
        bool took = false;
        for (int pass = 0; pass < 3 && !took; pass++)
            for (int i = 0; i < n && !took; i++) {
                const tir_stmt *s = v[i];
                if (free_pass_of(s) != pass) continue;
                took = op_rule(st, s, true);
            }
        if (!took) break;
    }
    for (int i = 0; i < n && !st->failed; i++) {
        tir_stmt *s = v[i];
        if (s->kind == TS_FOR) tlc_parallel_check(st, s);
    }
    tlc_ptrvec_free(&ops);
    if (st->failed) return false;
    /* Fragments no op constrains (declared, maybe only filled): blocked. */
    for (int i = 0; i < k->nbuffers; i++) {
        tir_buffer *b = k->buffers[i];
        if (b->scope == TIR_SCOPE_FRAGMENT && !b->fragment && !b->view_of) {
            int64_t shape[TLC_FRAG_MAX_RANK];
            if (b->rank > TLC_FRAG_MAX_RANK) {
                tlc_error(st->diag, b->loc, "fragment '%s' has rank %d; at most %d is supported", b->name, b->rank,
                          TLC_FRAG_MAX_RANK);
                return false;
            }
            for (int d = 0; d < b->rank; d++) shape[d] = tir_buffer_dim(b, d);
            b->fragment = tlc_fragment_blocked(st->a, b->rank, shape, tir_buffer_threads(k, b), tlc_vec_elems(b->dtype));
            st->strength[b->id] = TLC_STRENGTH_FREE;
            tlc_infer_sync_views(st, b);
            if (st->failed) return false;
        }
        if (b->scope == TIR_SCOPE_SHARED && !b->layout) {
            int64_t shape[TLC_FRAG_MAX_RANK];
            if (b->rank > TLC_FRAG_MAX_RANK) {
                tlc_error(st->diag, b->loc, "shared buffer '%s' has rank %d; at most %d is supported", b->name,
                          b->rank, TLC_FRAG_MAX_RANK);
                return false;
            }
            for (int d = 0; d < b->rank; d++) shape[d] = tir_buffer_dim(b, d);
            int eb = tir_dtype_bytes(b->dtype);
            int64_t rows = 1;
            for (int d = 0; d + 1 < b->rank; d++) rows *= shape[d];
            /* Rows wider than the 128-byte swizzle atom go in 128-byte
             * panels, as a gemm operand's do: the swizzle then permutes
             * each row's chunks by the row, so the same columns of eight
             * consecutive rows fall in different banks (with whole wide
             * rows it would permute by the column instead). */
            bool panels = b->rank >= 2 && shape[b->rank - 1] * eb > 128 && shape[b->rank - 1] * eb % 128 == 0 &&
                          rows % 8 == 0;
            b->layout = b->layout_hint != TIR_LAYOUT_HINT_SWIZZLED ? tlc_layout_row_major(st->a, b->rank, shape, eb)
                        : panels ? tlc_layout_gemm_operand(st->a, b->rank, shape, eb)
                                 : tlc_layout_swizzled(st->a, b->rank, shape, eb, TLC_SWIZZLE_128B);
        }
    }
    return true;
}

bool tlc_layout_infer(tir_module *m, tlc_arena *a, tlc_diag *diag) {
    bool ok = true;
    for (int i = 0; i < m->nkernels; i++) {
        tir_kernel *k = m->kernels[i];
        tlc_infer st = {.a = a, .diag = diag, .k = k, .arch = m->arch};
        st.strength = TLC_NEW_ARRAY(a, tlc_strength, (size_t)(k->nbuffers + 1));
        st.setter = TLC_NEW_ARRAY(a, const tir_stmt *, (size_t)(k->nbuffers + 1));
        for (int b = 0; b < k->nbuffers; b++)
            if (k->buffers[b]->id < 0 || k->buffers[b]->id >= k->nbuffers) {
                tlc_error(diag, k->loc, "internal error: buffer ids are not dense");
                return false;
            }
        if (!infer_kernel(&st, k)) ok = false;
        tlc_ptrvec_free(&st.par_seen);
    }
    return ok;
}
