/* --emit=plan: every kernel's plan (lowerkit/plan.h), one decision per
 * line, statements named by their source line (stable text for golden
 * tests). */
#include "../ops/op_table.h"
#include "passes.h"

static const char *op_name(const tir_stmt *s) {
    const tlc_op_desc *op = tlc_op_of(s);
    return op ? op->name : "statement";
}

static void print_pipe(tlc_strbuf *sb, const tlc_pipe_plan *pp, bool warp_specialized) {
    tlc_sb_printf(sb, "  pipeline: Pipelined loop over %s at line %d: %d stages, %s", pp->loop->u.for_.vars[0]->name,
                  pp->loop->loc.line, pp->stages,
                  pp->tma ? (pp->ngathers ? "TMA, the gathers by cp.async" : "TMA") : "cp.async");
    if (pp->tma && !warp_specialized) tlc_sb_printf(sb, " (mbarriers at %lld)", (long long)pp->mbar);
    if (warp_specialized) tlc_sb_puts(sb, " (warp-specialized)");
    tlc_sb_puts(sb, "; stage buffers");
    for (int c = 0; c < pp->ncopies; c++) {
        const tir_buffer *b = tlc_pipe_load_dst(pp, c);
        tlc_sb_printf(sb, "%s %s", c ? "," : "", b->name);
        if (pp->gathers[c].loop) tlc_sb_printf(sb, " (gathered at line %d)", pp->gathers[c].loop->loc.line);
        if (pp->im2col[c]) tlc_sb_printf(sb, " (im2col by TMA at line %d)", pp->copies[c]->loc.line);
    }
    /* copies further down the body, issued with the stage's */
    const tir_stmt *body = pp->loop->u.for_.body;
    int n = body->kind == TS_SEQ ? body->u.seq.n : 1;
    for (int gathers = 0; gathers < 2; gathers++) {
        bool any = false;
        for (int i = pp->nprefix; i < n; i++) {
            const tir_stmt *x = body->kind == TS_SEQ ? body->u.seq.stmts[i] : body;
            if (!tlc_pipe_is_copy(pp, x) || (x->kind == TS_FOR) != gathers) continue;
            tlc_sb_printf(sb, "%s %d", any ? "," : gathers ? "; the gather at line(s)" : "; the copy at line(s)",
                          x->loc.line);
            any = true;
        }
        if (any) tlc_sb_puts(sb, " loaded with the stage, not where it stands");
    }
    if (pp->loads_under)
        tlc_sb_printf(sb, "; the next loads issued under the gemm at line %d", pp->loads_under->loc.line);
    tlc_sb_putc(sb, '\n');
}

static void print_gemm(tlc_strbuf *sb, const tlc_gemm_op_plan *g) {
    const tlc_gemm_plan *p = &g->inst;
    bool wg = p->inst == TLC_INST_WGMMA;
    tlc_sb_printf(sb, "  gemm at line %d: %s x %s -> %s: ", g->op->loc.line, g->op->u.gemm.a.buf->name,
                  g->op->u.gemm.b.buf->name, g->op->u.gemm.c.buf->name);
    if (wg) tlc_sb_printf(sb, "wgmma m64n%dk%d", p->inst_n, p->k_step);
    else tlc_sb_printf(sb, "mma.sync m16n8k%d", p->k_step);
    tlc_sb_printf(sb, ", %s, %d x %d %s of %d x %d%s%s", tir_policy_name(p->policy), p->units_m, p->units_n,
                  wg ? "warpgroups" : "warps", p->tile_m, p->tile_n, p->replicas > 1 ? ", in each warpgroup" : "",
                  g->chain_next ? ", in flight into the next gemm" : "");
    if (g->deferred && g->retire_before)
        tlc_sb_printf(sb, ", in flight until line %d", g->retire_before->loc.line);
    else if (g->deferred)
        tlc_sb_puts(sb, ", in flight until the end of its body");
    tlc_sb_putc(sb, '\n');
}

static void print_lines(tlc_strbuf *sb, const tir_stmt *body, const tir_turns *t, tir_turn_role role) {
    int c = 0;
    for (int j = t->first; j < body->u.seq.n; j++)
        if (t->role[j] == role) tlc_sb_printf(sb, "%s %d", c++ ? "," : "", body->u.seq.stmts[j]->loc.line);
}

static void print_slots(tlc_strbuf *sb, const char *what, tir_buffer *const *v, const int64_t *at, int n) {
    if (!n) return;
    tlc_sb_printf(sb, "; %s", what);
    for (int i = 0; i < n; i++) tlc_sb_printf(sb, "%s %s at %lld", i ? "," : "", v[i]->name, (long long)at[i]);
}

static void print_staged(tlc_strbuf *sb, const tir_turns *t) {
    if (!t->nstaged) return;
    tlc_sb_puts(sb, "; staged");
    for (int i = 0; i < t->nstaged; i++) tlc_sb_printf(sb, "%s %s", i ? "," : "", t->staged[i]->name);
}

static void print_roles(tlc_strbuf *sb, const tlc_ws_decision *w) {
    const tir_turns *t = w->turns;
    const tir_stmt *body = w->loop->u.for_.body;
    tlc_sb_printf(sb, "    roles: a score warpgroup (threads %d-%d, setmaxnreg %d) runs every iteration's lines",
                  w->consumer_threads, w->consumer_threads + w->score_threads - 1, w->reg_score);
    print_lines(sb, body, t, TIR_TURN_OWNER);
    if (t->late) {
        tlc_sb_puts(sb, ", then after publishing lines");
        print_lines(sb, body, t, TIR_TURN_LATE);
    }
    tlc_sb_puts(sb, "; the consumers run lines");
    print_lines(sb, body, t, TIR_TURN_SHARED);
    tlc_sb_puts(sb, " under the next iteration's scores");
    print_slots(sb, "published", t->published, w->published_at, t->npublished);
    print_slots(sb, "handed over after each run", t->handed, w->handed_at, t->nhanded);
    print_staged(sb, t);
    tlc_sb_putc(sb, '\n');
    if (!w->nscore_inits && !w->nscore_slice) return;
    tlc_sb_puts(sb, "    score warpgroup also runs");
    for (int i = 0; i < w->nscore_inits; i++) tlc_sb_printf(sb, "%s %d", i ? "," : " lines", w->score_inits[i]->loc.line);
    if (w->nscore_inits) tlc_sb_puts(sb, " before the loop");
    for (int i = 0; i < w->nscore_slice; i++)
        tlc_sb_printf(sb, "%s %d", i ? "," : w->nscore_inits ? " and the statements at lines" : " the statements at lines",
                      w->score_slice[i]->loc.line);
    tlc_sb_putc(sb, '\n');
}

static void print_turns(tlc_strbuf *sb, const tlc_ws_decision *w) {
    if (w->roles) {
        print_roles(sb, w);
        return;
    }
    if (w->roles_refused) tlc_sb_printf(sb, "    roles: not taken (%s)\n", w->roles_refused);
    else if (w->loop->u.for_.roles_hint) tlc_sb_puts(sb, "    roles: not taken (they need the turns, below)\n");
    if (!w->turns) {
        tlc_sb_printf(sb, "    turns: not taken (%s)\n", w->turns_refused ? w->turns_refused : "?");
        return;
    }
    const tir_turns *t = w->turns;
    const tir_stmt *body = w->loop->u.for_.body;
    tlc_sb_puts(sb, "    turns: warpgroup k % 2 alone runs iteration k's lines");
    print_lines(sb, body, t, TIR_TURN_OWNER);
    tlc_sb_puts(sb, "; both run lines");
    print_lines(sb, body, t, TIR_TURN_SHARED);
    if (t->late) {
        tlc_sb_puts(sb, "; the owner runs lines");
        print_lines(sb, body, t, TIR_TURN_LATE);
        tlc_sb_puts(sb, " after publishing, then hands over");
    }
    print_slots(sb, "published", t->published, w->published_at, t->npublished);
    print_slots(sb, "handed over", t->handed, w->handed_at, t->nhanded);
    print_staged(sb, t);
    tlc_sb_putc(sb, '\n');
}

static void print_ws(tlc_strbuf *sb, const tlc_ws_decision *w, const char *refused) {
    if (!w->loop) {
        if (refused) tlc_sb_printf(sb, "  warp specialization: none (%s)\n", refused);
        else tlc_sb_puts(sb, "  warp specialization: none\n");
        return;
    }
    tlc_sb_printf(sb,
                  "  warp specialization: loop over %s at line %d; %d consumer warpgroup(s) (%d threads) + 1 producer "
                  "warpgroup (%d threads); %s %d / %d; %d block(s) per SM; %s; mbarriers full %lld, empty %lld\n",
                  w->loop->u.for_.vars[0]->name, w->loop->loc.line, w->consumer_threads / 128 + w->score_threads / 128,
                  w->consumer_threads + w->score_threads, w->producer_threads,
                  w->keep_regs ? "no setmaxnreg (disable_warp_group_reg_alloc), registers" : "setmaxnreg", w->reg_inc,
                  w->reg_dec, w->blocks_per_sm,
                  w->persistent ? "persistent tiles" : "one tile per block", (long long)w->full, (long long)w->empty);
    if (w->multicast)
        tlc_sb_puts(sb, "    multicast: the loads shared out over each cluster's blocks, sent to all of them; every "
                        "consumer warp releases a stage in all of them\n");
    else if (w->multicast_refused)
        tlc_sb_printf(sb, "    multicast: not taken (%s)\n", w->multicast_refused);
    tlc_sb_printf(sb, "    consumers: %s%s\n",
                  w->late_release ? "the last wgmma group stays in flight, a stage is released one iteration late"
                  : w->gemm_only ? "a stage is released at the end of its iteration, once its wgmmas have retired"
                  : w->defer_p ? "a stage is released one iteration late, after the deferred output gemm"
                               : "a stage is released at the end of its iteration",
                  w->nested ? "; stages counted over every run of the loop (it sits in serial loops)" : "");
    if (w->dynamic_tiles)
        tlc_sb_printf(sb, "    tiles: taken at run time from a counter in global memory%s (the trip count depends on the "
                          "block indices); mbarriers tile full %lld, tile empty %lld, slots %lld\n",
                      w->heaviest_first ? "; groups of (y, z) planes, x descending within a group (heaviest first)" : "", (long long)w->tile_full,
                      (long long)w->tile_empty, (long long)w->tile_slots);
    if (w->defer_p) {
        const tir_stmt *body = w->loop->u.for_.body;
        int n = body->u.seq.n;
        tlc_sb_printf(sb, "    overlap: the output gemm at line %d", body->u.seq.stmts[n - 1]->loc.line);
        int nr = 0;
        for (int i = w->defer_r; i < n - 1; i++) {
            if (tlc_pipe_is_copy(w->pipe, body->u.seq.stmts[i])) continue; /* the producer's */
            tlc_sb_printf(sb, "%s %d", nr++ ? "," : " and the line(s)", body->u.seq.stmts[i]->loc.line);
        }
        if (nr) tlc_sb_puts(sb, " before it");
        tlc_sb_printf(sb, " run in the next iteration, issued after its score gemm(s) and executing under its "
                          "softmax; line %d, which writes the gemm's A operand, waits for it\n",
                      body->u.seq.stmts[w->defer_p]->loc.line);
    }
    if (w->lookahead) {
        const tir_stmt *body = w->loop->u.for_.body;
        tlc_sb_puts(sb, "    overlap: the gemm(s) at line(s)");
        for (int i = 0; i < w->lookahead; i++)
            tlc_sb_printf(sb, "%s %d", i ? "," : "", body->u.seq.stmts[w->pipe->nprefix + i]->loc.line);
        tlc_sb_puts(sb, " run one iteration ahead, under the rest of the body\n");
    }
    if (w->loop->u.for_.turns_hint) print_turns(sb, w);
    if (w->npreloads) {
        tlc_sb_puts(sb, "    preloads: the copies at line(s)");
        for (int i = 0; i < w->npreloads; i++)
            tlc_sb_printf(sb, "%s %d (%s)", i ? "," : "", w->preloads[i]->loc.line, w->preloads[i]->u.copy.dst.buf->name);
        tlc_sb_printf(sb, " issued by the producer by TMA after %d stage load(s) of the run, released %s",
                      w->preload_after_loads, w->preload_early ? "when the last score gemm has retired" : "after the loop");
        tlc_sb_printf(sb, "; mbarriers preload full %lld, empty %lld\n", (long long)w->pre_full, (long long)w->pre_empty);
    }
    if (w->nslice) {
        tlc_sb_puts(sb, "    producer also runs the statements at lines");
        for (int i = 0; i < w->nslice; i++) tlc_sb_printf(sb, "%s %d", i ? "," : "", w->slice[i]->loc.line);
        tlc_sb_putc(sb, '\n');
    }
}

/* A function of several kernels: the order of its launches and the
 * workspaces the runtime allocates for them. */
static void print_function(tlc_strbuf *sb, const tir_function *f) {
    tlc_sb_printf(sb, "function %s: launches", f->name);
    for (int i = 0; i < f->nkernels; i++) tlc_sb_printf(sb, "%s %s", i ? "," : "", f->kernels[i]->name);
    tlc_sb_puts(sb, " in order\n");
    for (int w = 0; w < f->nworkspaces; w++) {
        const tir_buffer *b = f->workspaces[w];
        tlc_sb_printf(sb, "  workspace %s: %s[", b->name, tir_dtype_name(b->dtype));
        for (int d = 0; d < b->rank; d++) {
            if (d) tlc_sb_puts(sb, ", ");
            tir_print_expr(sb, b->shape[d]);
        }
        tlc_sb_puts(sb, "], allocated by the runtime at launch\n");
    }
}

void tlc_plan_print_module(tlc_strbuf *sb, const tir_module *m) {
    for (int i = 0; i < m->nkernels; i++) {
        const tir_kernel *k = m->kernels[i];
        const tlc_kernel_plan *p = k->plan;
        if (k->function && k->function->kernels[0] == k) print_function(sb, k->function);
        tlc_sb_printf(sb, "kernel %s (%s): %d threads\n", k->name, tlc_arch_name(m->arch), k->threads);
        if (!p) {
            tlc_sb_puts(sb, "  (not planned)\n");
            continue;
        }
        for (int j = 0; j < p->npipes; j++) print_pipe(sb, &p->pipes[j], p->pipes[j].loop == p->ws.loop);
        for (int j = 0; j < p->ngemms; j++) print_gemm(sb, &p->gemms[j]);
        print_ws(sb, &p->ws, p->ws_refused);
        for (int b = 0; b < k->nbuffers; b++) {
            const tir_buffer *buf = k->buffers[b];
            if (buf->scope != TIR_SCOPE_SHARED || !buf->layout) continue;
            const tlc_layout *l = buf->layout;
            tlc_sb_printf(sb, "  shared %s: offset %lld, %lld bytes", buf->name, (long long)l->offset, (long long)l->bytes);
            if (l->stages > 1) tlc_sb_printf(sb, " x %d stages", l->stages);
            tlc_sb_putc(sb, '\n');
        }
        for (int j = 0; j < p->smem.nscratch; j++) {
            const tlc_smem_scratch *s = &p->smem.scratch[j];
            tlc_sb_printf(sb, "  scratch of the %s at line %d: offset %lld, %lld bytes\n", op_name(s->op), s->op->loc.line,
                          (long long)s->offset, (long long)s->bytes);
        }
        if (p->user_mbar >= 0)
            tlc_sb_printf(sb, "  the program's mbarriers (%d): offset %lld, %lld bytes\n", k->nmbarriers,
                          (long long)p->user_mbar, 8LL * k->nmbarriers);
        for (int j = 0; j < p->nfresh; j++) {
            const tlc_smem_scratch *s = &p->fresh[j];
            tlc_sb_printf(sb, "  fresh scratch of the %s at line %d: offset %lld, %lld bytes\n", op_name(s->op),
                          s->op->loc.line, (long long)s->offset, (long long)s->bytes);
        }
        tlc_sb_printf(sb, "  shared memory: %lld bytes planned\n", (long long)p->smem_bytes);
        if (p->min_blocks_per_sm) tlc_sb_printf(sb, "  blocks per SM: %d\n", p->min_blocks_per_sm);
    }
}
