/* Warpgroup turns (docs/architecture.md, "Warpgroup turns"): the analysis
 * of a `Pipelined(..., turns=True)` loop, before layout inference, since
 * it decides the score gemms' layout.
 *
 * The body, after its loads (lets and copies from global to shared), must
 * start with the score gemms: a chain into one fragment S that clears it,
 * with both operands in shared memory. Every later item is either
 *   shared: it writes an output accumulator (the C of a later gemm) and
 *           nothing else; both warpgroups run it every iteration;
 *   owner:  anything else; only the iteration's owner (warpgroup k % 2)
 *           runs it. It writes fragments (R, which S joins) and shared
 *           buffers (staged: P for the other warpgroup's gemm), never
 *           global memory or scalars, and reads no output accumulator.
 * Owner items come before shared ones, except late ones:
 *   late:   an owner item after the shared ones; it writes only fragments
 *           that no shared item reads and reads no output accumulator and
 *           no staged buffer (MLA's row sum). The owner runs it while the
 *           output gemm executes.
 * R fragments the shared items read are published each turn; R fragments
 * the next owner reads before writing them whole (loop-carried: the
 * running max, the running sum) or that code outside the loop reads are
 * handed over; both go through shared memory (warp_specialize.c). The
 * score gemms become per-warpgroup: each warpgroup computes whole tiles,
 * its own iterations'.
 *
 * The shape is checked on every target; the turns are taken only on
 * targets with wgmma, setmaxnreg and TMA, where the loop can be warp-
 * specialized, in blocks of two warpgroups; elsewhere the hint is
 * ignored. */
#include "../ir/tir_access.h"
#include "../target/target.h"
#include "passes.h"

static bool is_load_item(const tir_stmt *x) {
    return x->kind == TS_LET || (x->kind == TS_COPY && x->u.copy.src.buf->scope == TIR_SCOPE_GLOBAL &&
                                 x->u.copy.dst.buf->scope == TIR_SCOPE_SHARED);
}

/* Does x write all of b (so that what b held before is not read)? */
static bool writes_whole(const tir_stmt *x, const tir_buffer *b) {
    switch (x->kind) {
    case TS_COPY: return x->u.copy.dst.buf == b && tir_region_is_whole(&x->u.copy.dst);
    case TS_FILL: return x->u.fill.dst.buf == b && tir_region_is_whole(&x->u.fill.dst);
    case TS_REDUCE: return x->u.reduce.dst.buf == b && x->u.reduce.clear && tir_region_is_whole(&x->u.reduce.dst);
    case TS_GEMM: return x->u.gemm.c.buf == b && x->u.gemm.clear_accum && tir_region_is_whole(&x->u.gemm.c);
    case TS_FOR: {
        /* Parallel over b's shape storing b[vars] at the body's top level */
        if (x->u.for_.kind != TIR_FOR_PARALLEL || x->u.for_.nvars != b->rank) return false;
        for (int d = 0; d < b->rank; d++) {
            int64_t e;
            if (!tir_expr_const_int(x->u.for_.extent[d], &e) || e != tir_buffer_dim(b, d)) return false;
        }
        const tir_stmt *body = x->u.for_.body;
        int n = body->kind == TS_SEQ ? body->u.seq.n : 1;
        for (int i = 0; i < n; i++) {
            const tir_stmt *y = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
            if (y->kind != TS_STORE || y->u.store.buf != b) continue;
            bool at_vars = true;
            for (int d = 0; d < b->rank; d++) {
                const tir_expr *ix = y->u.store.idx[d];
                at_vars &= ix->kind == TE_VAR && ix->u.var == x->u.for_.vars[d];
            }
            if (at_vars) return true;
        }
        return false;
    }
    default: return false;
    }
}

typedef struct analysis {
    tlc_arena *a;
    tlc_diag *diag;
    const tir_kernel *k;
    const tir_stmt *loop;
    bool applies; /* the target has what turns need (wgmma, setmaxnreg, TMA) */
    bool *read_outside;
} analysis;

static void outside_read(const tir_access *acc, void *ctx) {
    analysis *an = ctx;
    if (acc->mode & TIR_ACCESS_READ) an->read_outside[acc->buf->id] = true;
}

/* Reads of every statement of the kernel outside `loop`. */
static void reads_outside(analysis *an, const tir_stmt *s) {
    if (!s || s == an->loop) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) reads_outside(an, s->u.seq.stmts[i]);
        return;
    case TS_FOR:
        tir_stmt_own_accesses(s, outside_read, an);
        reads_outside(an, s->u.for_.body);
        return;
    case TS_IF:
        tir_stmt_own_accesses(s, outside_read, an);
        reads_outside(an, s->u.if_.then);
        reads_outside(an, s->u.if_.els);
        return;
    default: tir_stmt_accesses(s, outside_read, an); return;
    }
}

static tir_buffer **buffer_list(analysis *an, const bool *in, int *n) {
    int c = 0;
    for (int i = 0; i < an->k->nbuffers; i++) c += in[i];
    tir_buffer **v = TLC_NEW_ARRAY(an->a, tir_buffer *, (size_t)c + 1);
    *n = 0;
    for (int i = 0; i < an->k->nbuffers; i++)
        if (in[i]) v[(*n)++] = an->k->buffers[i];
    return v;
}

static bool analyse(analysis *an, tir_stmt *loop) {
    const tir_kernel *k = an->k;
    const char *hint = loop->u.for_.roles_hint ? "roles=True" : "turns=True";
    tlc_diag *diag = an->diag;
    tir_stmt *body = loop->u.for_.body;
    if (body->kind != TS_SEQ) {
        tlc_error(diag, loop->loc, "%s: the loop body must start with its loads and score gemms", hint);
        return false;
    }
    int n = body->u.seq.n, i = 0;
    tir_stmt **items = body->u.seq.stmts;
    while (i < n && is_load_item(items[i])) i++;
    int first = i;
    const tir_buffer *S = i < n && items[i]->kind == TS_GEMM ? items[i]->u.gemm.c.buf : NULL;
    while (i < n && items[i]->kind == TS_GEMM && items[i]->u.gemm.c.buf == S && (i == first || !items[i]->u.gemm.clear_accum) &&
           items[i]->u.gemm.a.buf->scope == TIR_SCOPE_SHARED && items[i]->u.gemm.b.buf->scope == TIR_SCOPE_SHARED)
        i++;
    if (i == first || !items[first]->u.gemm.clear_accum || S->scope != TIR_SCOPE_FRAGMENT) {
        tlc_error(diag, i < n ? items[i]->loc : loop->loc,
                  "%s: after its loads the loop body must start with the score gemms (a chain into one "
                  "fragment, the first with clear_accum=True, operands in shared memory)", hint);
        return false;
    }
    tir_turns *t = TLC_NEW(an->a, tir_turns);
    t->first = first;
    t->nchain = i - first;
    t->role = TLC_NEW_ARRAY(an->a, tir_turn_role, (size_t)n);
    for (int j = 0; j < i; j++) t->role[j] = j < first ? TIR_TURN_LOADS : TIR_TURN_OWNER;
    int nb = k->nbuffers;
    size_t sz = (size_t)nb + 1;
    bool *outputs = TLC_NEW_ARRAY(an->a, bool, sz), *owned = TLC_NEW_ARRAY(an->a, bool, sz),
         *staged = TLC_NEW_ARRAY(an->a, bool, sz), *published = TLC_NEW_ARRAY(an->a, bool, sz),
         *handed = TLC_NEW_ARRAY(an->a, bool, sz), *whole = TLC_NEW_ARRAY(an->a, bool, sz),
         *carried = TLC_NEW_ARRAY(an->a, bool, sz), *rd = TLC_NEW_ARRAY(an->a, bool, sz),
         *wr = TLC_NEW_ARRAY(an->a, bool, sz);
    an->read_outside = TLC_NEW_ARRAY(an->a, bool, sz);
    bool ok = true;
    for (int j = i; j < n; j++)
        if (items[j]->kind == TS_GEMM) outputs[items[j]->u.gemm.c.buf->id] = true;
    owned[S->id] = whole[S->id] = true;
    bool shared_seen = false;
    for (int j = i; ok && j < n; j++) {
        tir_stmt *x = items[j];
        tir_stmt_buffers_read_written(x, nb, rd, wr);
        bool writes_output = false;
        for (int b = 0; b < nb; b++) writes_output |= wr[b] && outputs[b];
        if (writes_output) {
            if (t->late) {
                tlc_error(diag, x->loc, "%s: the statements that update the output accumulator must come "
                                        "together, after those that compute from the scores", hint);
                ok = false;
                break;
            }
            t->role[j] = TIR_TURN_SHARED;
            shared_seen = true;
            for (int b = 0; b < nb && ok; b++) {
                const tir_buffer *B = k->buffers[b];
                if (wr[b] && !outputs[b]) {
                    tlc_error(diag, x->loc, "%s: a statement that updates the output accumulator may not "
                                            "also write '%s'", hint, B->name);
                    ok = false;
                } else if (rd[b] && B == S) {
                    tlc_error(diag, x->loc, "%s: the output gemm must read the scores from shared memory "
                                            "(each warpgroup holds only its own iterations' scores)", hint);
                    ok = false;
                } else if (rd[b] && owned[b]) {
                    published[b] = true;
                }
            }
            continue;
        }
        bool late = shared_seen;
        t->role[j] = late ? TIR_TURN_LATE : TIR_TURN_OWNER;
        t->late |= late;
        for (int b = 0; b < nb && ok && late; b++) {
            const tir_buffer *B = k->buffers[b];
            if (wr[b] && (B->scope != TIR_SCOPE_FRAGMENT || published[b])) {
                tlc_error(diag, x->loc, "%s: a statement after those that update the output accumulator "
                                        "may write only fragments they do not read; '%s' is not one", hint, B->name);
                ok = false;
            }
        }
        for (int b = 0; b < nb && ok; b++) {
            tir_buffer *B = k->buffers[b];
            if (rd[b] && outputs[b]) {
                tlc_error(diag, x->loc, "%s: only the statements that update the output accumulator may "
                                        "read '%s'", hint, B->name);
                ok = false;
            } else if (wr[b] && B->scope != TIR_SCOPE_FRAGMENT && B->scope != TIR_SCOPE_SHARED) {
                tlc_error(diag, x->loc, "%s: '%s' is written by only one warpgroup per iteration; "
                                        "compute from the scores into fragments and shared memory only", hint, B->name);
                ok = false;
            } else if (rd[b] && staged[b]) {
                tlc_error(diag, x->loc, "%s: shared buffer '%s' is written for the output gemm and read "
                                        "again %s it", hint, B->name, late ? "after" : "before");
                ok = false;
            }
            if (rd[b] && B->scope == TIR_SCOPE_FRAGMENT && !whole[b] && B != S) carried[b] = true;
        }
        for (int b = 0; b < nb && ok; b++) {
            if (!wr[b]) continue;
            tir_buffer *B = k->buffers[b];
            if (B->scope == TIR_SCOPE_SHARED) staged[b] = true;
            else owned[b] = true;
            if (writes_whole(x, B)) whole[b] = true;
        }
    }
    if (ok) {
        an->loop = loop;
        reads_outside(an, k->body);
        for (int b = 0; b < nb && ok; b++) {
            tir_buffer *B = k->buffers[b];
            if (!owned[b] && !staged[b]) continue;
            if (an->read_outside[b] && (B == S || staged[b])) {
                tlc_error(diag, B->loc, "%s: '%s' holds one warpgroup's iteration only and cannot be read "
                                        "outside the loop", hint, B->name);
                ok = false;
            } else if (owned[b] && B != S && (carried[b] || an->read_outside[b])) {
                handed[b] = true;
            }
        }
    }
    if (ok) {
        t->published = buffer_list(an, published, &t->npublished);
        t->handed = buffer_list(an, handed, &t->nhanded);
        t->staged = buffer_list(an, staged, &t->nstaged);
        /* the shape is checked everywhere; the turns taken only where
         * they can run (the plan says why not otherwise) */
        if (an->applies && k->threads == 256) {
            for (int j = first; j < first + t->nchain; j++) items[j]->u.gemm.per_warpgroup = true;
            /* roles add a score warpgroup: 512 threads, 128 registers each
             * at entry, and ptxas refuses a wgmma whose accumulator does
             * not fit them (m64n256 in float32 asks for about 154) */
            if (loop->u.for_.roles_hint)
                for (int j = first + t->nchain; j < n; j++)
                    if (t->role[j] == TIR_TURN_SHARED && items[j]->kind == TS_GEMM) items[j]->u.gemm.max_inst_n = 128;
            loop->u.for_.turns = t;
        }
    }
    return ok;
}

static bool walk(analysis *an, tir_stmt *s) {
    if (!s) return true;
    switch (s->kind) {
    case TS_SEQ: {
        bool ok = true;
        for (int i = 0; i < s->u.seq.n; i++) ok &= walk(an, s->u.seq.stmts[i]);
        return ok;
    }
    case TS_FOR:
        if (s->u.for_.kind == TIR_FOR_PIPELINED && s->u.for_.turns_hint) return analyse(an, s);
        return walk(an, s->u.for_.body);
    case TS_IF: {
        bool ok = walk(an, s->u.if_.then);
        return walk(an, s->u.if_.els) && ok;
    }
    default: return true;
    }
}

bool tlc_plan_turns(tir_module *m, tlc_arena *a, tlc_diag *diag) {
    const tlc_target *t = tlc_target_of(m->arch);
    bool ok = true;
    for (int i = 0; i < m->nkernels; i++) {
        analysis an = {.a = a, .diag = diag, .k = m->kernels[i], .applies = t->wgmma && t->setmaxnreg && t->tma &&
                                                                     !m->kernels[i]->thread_indexed &&
                                                                     !m->kernels[i]->program_barriers};
        ok &= walk(&an, m->kernels[i]->body);
    }
    return ok;
}
