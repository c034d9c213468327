/* The planning pass (transform/plan.c): what it decides for the shipped
 * kernels on sm_80 and sm_90a, and that lowering takes those decisions from
 * the plan instead of deciding again: a plan changed after planning shows
 * up in the PTX. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "test_support.h"
#include "api/compile_backend.h"
#include "lowerkit/plan.h"

/* A compilation of dsl-examples/FILE (kernel `kernel`) planned for arch. */
static bool plan_example(tlc_compilation *c, const char *file, const char *kernel, tlc_arch arch) {
    char path[512];
    snprintf(path, sizeof path, "%s/dsl-examples/%s", TLC_SOURCE_DIR, file);
    size_t len = 0;
    char *src = tlc_read_file(path, &len);
    if (!src) return false;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.arch = arch;
    o.kernel = kernel;
    bool ok = tlc_compile_source(c, file, src, len, &o) && tlc_compile_layouts(c, NULL);
    free(src);
    if (!ok) {
        print_message("%s", tlc_sb_cstr(&c->diag.out));
        fail_msg("%s did not plan", file);
    }
    return true;
}

static const tir_buffer *buffer(const tir_kernel *k, const char *name) {
    for (int i = 0; i < k->nbuffers; i++)
        if (!strcmp(k->buffers[i]->name, name)) return k->buffers[i];
    fail_msg("no buffer %s", name);
    return NULL;
}

/* Plans `src` (file name `name`) for sm_90a with the defines given;
 * `kernel` NULL: the file's only kernel. Fails the test on an error. */
static void plan_sm90a(tlc_compilation *c, const char *name, const char *src, size_t len, const char *kernel,
                       tlc_define *defs, int ndefs) {
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.arch = TLC_SM90A;
    o.defines = defs;
    o.ndefines = ndefs;
    o.kernel = kernel;
    bool ok = tlc_compile_source(c, name, src, len, &o) && tlc_compile_layouts(c, NULL);
    if (!ok) print_message("%s", tlc_sb_cstr(&c->diag.out));
    assert_true(ok);
}

/* The text of the file at `rel` in the source tree. */
static char *source_file(const char *rel, size_t *len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TLC_SOURCE_DIR, rel);
    char *src = tlc_read_file(path, len);
    assert_non_null(src);
    return src;
}

/* mla_decode_split (dsl-examples/mla_decode.tl) planned for sm_90a with
 * `defs`: its plan. */
static const tlc_kernel_plan *plan_mla_split(tlc_compilation *c, tlc_define *defs, int ndefs) {
    size_t len = 0;
    char *src = source_file("dsl-examples/mla_decode.tl", &len);
    plan_sm90a(c, "mla_decode.tl", src, len, "mla_decode_split", defs, ndefs);
    free(src);
    return c->tir->kernels[0]->plan;
}

static void test_gemm_sm90a(void **state) {
    (void)state;
    tlc_compilation c;
    if (!plan_example(&c, "gemm.tl", "matmul", TLC_SM90A)) skip();
    const tir_kernel *k = c.tir->kernels[0];
    const tlc_kernel_plan *p = k->plan;
    assert_non_null(p);
    assert_int_equal(p->npipes, 1);
    assert_true(p->pipes[0].tma);
    assert_int_equal(p->pipes[0].stages, 3);
    assert_int_equal(p->pipes[0].ncopies, 2);
    assert_int_equal(p->ngemms, 1);
    assert_int_equal(p->gemms[0].inst.inst, TLC_INST_WGMMA);
    assert_int_equal(p->gemms[0].inst.inst_n, 128);
    assert_ptr_equal(tlc_plan_gemm(p, p->gemms[0].op), &p->gemms[0].inst);
    /* warp-specialized: the pipeline's loop, one consumer warpgroup */
    assert_ptr_equal(p->ws.loop, p->pipes[0].loop);
    assert_ptr_equal(p->ws.pipe, &p->pipes[0]);
    assert_int_equal(p->ws.consumer_threads, 128);
    assert_int_equal(p->ws.producer_threads, 128);
    assert_true(p->ws.persistent);
    /* its mbarriers after the stage buffers, the stage buffers' 3 copies */
    assert_int_equal(buffer(k, "A_shared")->layout->stages, 3);
    assert_true(p->ws.full >= p->smem.top && p->ws.empty >= p->ws.full + 8 * 3);
    /* the epilogue's staging scratch (1 KiB per warp) after everything, fresh */
    assert_int_equal(p->nfresh, 1);
    assert_int_equal(p->fresh[0].op->kind, TS_COPY);
    assert_int_equal(p->fresh[0].bytes, 4 * 1024);
    assert_true(p->fresh[0].offset >= p->ws.empty + 8 * 3 && p->fresh[0].offset % 128 == 0);
    assert_ptr_equal(tlc_plan_fresh_scratch(p, p->fresh[0].op), &p->fresh[0]);
    assert_int_equal(p->smem_bytes, p->fresh[0].offset + p->fresh[0].bytes);
    assert_int_equal(p->min_blocks_per_sm, p->ws.blocks_per_sm);
    tlc_compilation_free(&c);
}

static void test_gemm_sm80(void **state) {
    (void)state;
    tlc_compilation c;
    if (!plan_example(&c, "gemm.tl", "matmul", TLC_SM80)) skip();
    const tlc_kernel_plan *p = c.tir->kernels[0]->plan;
    assert_int_equal(p->npipes, 1);
    assert_false(p->pipes[0].tma);
    assert_int_equal(p->pipes[0].mbar, -1);
    assert_int_equal(p->gemms[0].inst.inst, TLC_INST_MMA_SYNC);
    assert_null(p->ws.loop);
    /* (16 KiB A + 16 KiB B) x 3 stages, then the epilogue's staging scratch */
    assert_int_equal(p->nfresh, 1);
    assert_int_equal(p->fresh[0].offset, 98304);
    assert_int_equal(p->smem_bytes, 98304 + 4096);
    tlc_compilation_free(&c);
}

/* MLA's split kernel on sm_90a with -D roles=False: the page loop is
 * warp-specialized inside the walk over sequences and, with turns=True,
 * its two consumer warpgroups take the pages in turns: the score gemms run
 * in each warpgroup over the whole 64 x 64 tile, the softmax's reductions
 * stay within warps (no scratch), the scale is published and the running
 * max and sum handed over in shared memory after the mbarriers. */
static void test_mla_sm90a(void **state) {
    (void)state;
    tlc_define no_roles[1] = {{"roles", "False"}};
    tlc_compilation c;
    const tlc_kernel_plan *p = plan_mla_split(&c, no_roles, 1);
    const tir_kernel *k = c.tir->kernels[0];
    assert_int_equal(p->npipes, 1);
    assert_true(p->pipes[0].tma);
    /* not persistent, stages counted over all runs, and the producer
     * replays the scalar statements its loads depend on (first_seq,
     * last_seq, seqlen, n_pages, lo, hi) */
    assert_ptr_equal(p->ws.loop, p->pipes[0].loop);
    assert_true(p->ws.nested);
    assert_false(p->ws.gemm_only);
    assert_false(p->ws.persistent);
    assert_int_equal(p->ws.consumer_threads, 256);
    assert_int_equal(p->ws.nslice, 6);
    for (int i = 0; i < p->ws.nslice; i++)
        assert_true(p->ws.slice[i]->kind == TS_LET || p->ws.slice[i]->kind == TS_STORE);
    assert_int_equal(p->ws.lookahead, 0);
    /* Q preloaded by the producer would keep bytes of its own, which
     * O_shared shares: that plan is over the limit, so none */
    assert_true(p->ws_no_preload);
    assert_int_equal(p->ws.npreloads, 0);
    /* the turns: what passes between the warpgroups */
    const tir_turns *t = p->ws.turns;
    assert_non_null(t);
    assert_null(p->ws.turns_refused);
    assert_int_equal(t->nchain, 2);
    assert_int_equal(t->npublished, 1);
    assert_string_equal(t->published[0]->name, "scores_scale");
    assert_int_equal(t->nhanded, 2);
    assert_string_equal(t->handed[0]->name, "scores_max");
    assert_string_equal(t->handed[1]->name, "logsum");
    assert_int_equal(t->nstaged, 1);
    assert_ptr_equal(t->staged[0], buffer(k, "S_shared"));
    /* the row sum and the running sum's update come after the output gemm
     * in the source: late, run by the owner after publishing */
    assert_true(t->late);
    const tir_stmt *loop_body = p->ws.loop->u.for_.body;
    int nlate = 0;
    for (int j = 0; j < loop_body->u.seq.n; j++) {
        if (t->role[j] != TIR_TURN_LATE) continue;
        nlate++;
        assert_true(j > 0 && t->role[j - 1] != TIR_TURN_OWNER); /* after the shared statements */
    }
    assert_int_equal(nlate, 2);
    assert_false(p->ws.multicast); /* cluster=1 */
    assert_true(p->ws.published_at[0] >= p->ws.empty + 8 * p->pipes[0].stages);
    assert_true(p->ws.handed_at[0] >= p->ws.published_at[0] + 64 * 4);
    assert_true(p->ws.handed_at[1] >= p->ws.handed_at[0] + 64 * 4);
    assert_int_equal(p->smem_bytes, p->ws.handed_at[1] + 64 * 4);
    assert_int_equal(p->nfresh, 0); /* float32 partials: no staged store */
    assert_int_equal(p->smem.nscratch, 0);
    /* Q @ KV^T and Q_pe @ K_pe^T: one warpgroup's 64 x 64 tile, held by
     * each, chained; P @ V split over both (FullCol) */
    assert_int_equal(p->ngemms, 3);
    for (int i = 0; i < 2; i++) {
        assert_true(p->gemms[i].op->u.gemm.per_warpgroup);
        assert_int_equal(p->gemms[i].inst.units, 1);
        assert_int_equal(p->gemms[i].inst.replicas, 2);
        assert_int_equal(p->gemms[i].inst.inst_n, 64);
    }
    assert_true(p->gemms[0].chain_next && !p->gemms[0].chain_prev);
    assert_true(p->gemms[1].chain_prev && !p->gemms[1].chain_next);
    assert_false(p->gemms[2].chain_prev || p->gemms[2].chain_next);
    assert_int_equal(p->gemms[2].inst.units_n, 2);
    assert_true(p->gemms[2].inst.replicas <= 1);
    /* Lowered, a program per warpgroup over pairs of pages: in each, one
     * wait for the chained pair (its own page) and one for P @ V per page;
     * the async proxy is fenced once before the loop (for Q, stored by
     * threads) and in each program once per own page before P @ V (for
     * S_shared) */
    char *ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    assert_int_equal(tst_count(ptx, "wgmma.wait_group.sync.aligned 0;"), 6);
    assert_int_equal(tst_count(ptx, "fence.proxy.async"), 3);
    /* the warp-specialized form: 256 consumers + a producer warpgroup, two
     * stages each with a full (1 arrival + TMA bytes) and an empty barrier
     * (every consumer arrives), the block table read by the producer's one
     * issuing thread; the turns' named barriers, one per parity of the
     * page: published (2, 3) and staged-free (4, 5), each arrived at by the
     * owner and waited for by the other warpgroup */
    assert_non_null(strstr(ptx, ".maxntid 384"));
    assert_int_equal(tst_count(ptx, "setmaxnreg.dec.sync.aligned.u32 40;"), 1);
    assert_int_equal(tst_count(ptx, "setmaxnreg.inc.sync.aligned.u32 232;"), 1);
    assert_int_equal(tst_count(ptx, "mbarrier.init.shared::cta.b64"), 4);
    assert_int_equal(tst_count(ptx, "], 256;"), 2);
    for (int id = 2; id <= 5; id++) {
        char arrive[32], sync[32];
        snprintf(arrive, sizeof arrive, "bar.arrive %d, 256;", id);
        snprintf(sync, sizeof sync, "bar.sync \t%d, 256;", id);
        assert_int_equal(tst_count(ptx, arrive), 1);
        assert_true(tst_count(ptx, sync) >= 1);
    }
    assert_true(tst_count(ptx, "bar.sync \t1, 256;") >= 1);
    assert_int_equal(tst_count(ptx, "bar.sync \t0;"), 1);
    /* before the owner writes the rows' slots, a warp barrier (once in
     * each program): the other lanes holding a row have read its slot
     * (hand-over, publication); another after the loop, before the last
     * owner's lanes read the hand-over one of them wrote. Each program
     * releases a stage after each of its two pages */
    assert_int_equal(tst_count(ptx, "bar.warp.sync -1;"), 3);
    assert_int_equal(tst_count(ptx, "mbarrier.arrive.expect_tx"), 1);
    assert_int_equal(tst_count(ptx, "mbarrier.arrive.shared::cta.b64"), 4);
    assert_null(strstr(ptx, "cluster ("));
    tlc_compilation_free(&c);
}

/* mla_decode_split with -D roles=True: a score warpgroup after the two
 * consumer warpgroups computes every page's scores and softmax and
 * publishes them; the consumers run only the rescale and the output gemm,
 * in m64n128 pieces (512 threads leave 128 registers at entry). */
static void test_mla_roles_sm90a(void **state) {
    (void)state;
    tlc_define roles[1] = {{"roles", "True"}};
    tlc_compilation c;
    const tlc_kernel_plan *p = plan_mla_split(&c, roles, 1);
    assert_true(p->ws.roles);
    assert_null(p->ws.roles_refused);
    assert_non_null(p->ws.turns);
    assert_int_equal(p->ws.consumer_threads, 256);
    assert_int_equal(p->ws.score_threads, 128);
    assert_int_equal(p->ws.reg_dec, 24);
    assert_true(p->ws.reg_score < 128 && p->ws.reg_score >= 64);
    /* registers: 512 threads x 128 at entry, what the producer and the
     * score warpgroup give back goes to the consumers */
    assert_true(128 * (p->ws.reg_dec + p->ws.reg_score) + 256 * p->ws.reg_inc <= 65536);
    assert_true(p->ws.reg_inc >= 160);
    /* the score warpgroup sets the running max and sum before each run
     * (fill, clear) and replays what its statements need: the sequence's
     * lets, masked_from and the scale among them */
    assert_int_equal(p->ws.nscore_inits, 2);
    assert_true(p->ws.nscore_slice > p->ws.nslice);
    assert_int_equal(p->gemms[2].inst.inst_n, 128);
    assert_int_equal(p->gemms[0].inst.inst_n, 64);
    char *ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, ".maxntid 512"));
    assert_int_equal(tst_count(ptx, "setmaxnreg.dec.sync.aligned.u32 24;"), 1);
    assert_int_equal(tst_count(ptx, "setmaxnreg.dec.sync.aligned.u32"), 2);
    assert_int_equal(tst_count(ptx, "setmaxnreg.inc.sync.aligned.u32"), 1);
    /* the empty barriers count the consumers and the score warpgroup */
    assert_int_equal(tst_count(ptx, "], 384;"), 2);
    /* the roles' mbarriers: `published` (the score warpgroup's 128
     * threads arrive: each page's publication, each run's hand-over) and
     * `freed` (the 256 consumers arrive: their Q is written, each page's
     * output gemm has retired); no named barrier between the sides */
    assert_int_equal(tst_count(ptx, "], 128;"), 1);
    assert_int_equal(tst_count(ptx, "], 256;"), 1);
    assert_int_equal(tst_count(ptx, "bar.arrive"), 0);
    assert_int_equal(tst_count(ptx, "bar.sync \t2"), 0);
    assert_int_equal(tst_count(ptx, "bar.sync \t3"), 0);
    if (!tst_assemble_ptx(ptx, TLC_SM90A, "the MLA split kernel with roles"))
        print_message("note: ptxas not found; the roles PTX is checked but not assembled\n");
    tlc_compilation_free(&c);
}

/* mla_decode_split with -D cluster=2: head blocks in pairs as clusters;
 * the producer never reads hb, so the pages are multicast. */
static void test_mla_cluster_sm90a(void **state) {
    (void)state;
    tlc_define defs[2] = {{"cluster", "2"}, {"roles", "False"}};
    tlc_compilation c;
    const tlc_kernel_plan *p = plan_mla_split(&c, defs, 2);
    assert_true(p->ws.multicast);
    assert_null(p->ws.multicast_refused);
    char *ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    /* each of the 9 panels of a page (8 of KV, 1 of K_pe) also in a form
     * sent to the whole cluster; each consumer warp's lane 0, after a warp
     * barrier, releases a stage in every block of the cluster (the empty
     * barriers count 8 warps x the cluster's blocks, a register), after
     * each page of each warpgroup's program (4 warp barriers, with the
     * owners' 2 and the one after the loop: 7); a cluster barrier after
     * the mbarriers' initialization and one at the end */
    assert_int_equal(tst_count(ptx, ".multicast::cluster"), 9);
    assert_int_equal(tst_count(ptx, "cp.async.bulk.tensor"), 18);
    assert_true(tst_count(ptx, "mbarrier.arrive.shared::cluster.b64") >= 1);
    assert_int_equal(tst_count(ptx, "mbarrier.arrive.shared::cta.b64"), 0);
    assert_int_equal(tst_count(ptx, "bar.warp.sync -1;"), 7);
    assert_int_equal(tst_count(ptx, "barrier.cluster.arrive.release.aligned;"), 2);
    assert_non_null(strstr(ptx, "// tlc.meta cluster 2 1 1\n"));
    tlc_compilation_free(&c);
}

/* dsl-examples/flash_attention.tl's flash_attention planned for sm_90a
 * with `stages` stages and block_N (NULL: the kernel's own). */
static void plan_attention_stages(tlc_compilation *c, int stages, const char *block_n) {
    size_t len = 0;
    char *src = source_file("dsl-examples/flash_attention.tl", &len);
    char st[8];
    snprintf(st, sizeof st, "%d", stages);
    tlc_define defs[2] = {{"num_stages", st}, {"block_N", block_n}};
    plan_sm90a(c, "flash_attention.tl", src, len, "flash_attention", defs, block_n ? 2 : 1);
    free(src);
}

/* dsl-examples/flash_attention.tl: with three stages the output gemm (P @ V)
 * is deferred to the next iteration (plan.h, defer_p): the score gemm is
 * issued before the loop (iteration 0) and in it, P @ V in it and after it,
 * and the loop waits for the score gemm alone (wait_group 1) so that the
 * softmax runs while P @ V executes; with two stages neither. */
static void test_attention_overlap(void **state) {
    (void)state;
    for (int stages = 2; stages <= 3; stages++) {
        tlc_compilation c;
        plan_attention_stages(&c, stages, "64");
        const tlc_kernel_plan *p = c.tir->kernels[0]->plan;
        assert_non_null(p->ws.loop);
        assert_false(p->ws.gemm_only);
        assert_int_equal(p->ws.lookahead, 0);
        /* P is the copy into acc_s_cast, R the rescale of acc_o, O the last statement */
        const tir_stmt *body = p->ws.loop->u.for_.body;
        assert_int_equal(p->ws.defer_p, stages == 3 ? body->u.seq.n - 3 : 0);
        assert_int_equal(p->ws.defer_r, stages == 3 ? body->u.seq.n - 2 : 0);
        char *ptx = tlc_compile_ptx(&c, false);
        assert_non_null(ptx);
        /* Q @ K^T: 128 / 16 k steps of m64n64k16 per issue; P @ V: 64 / 16 of m64n128k16 */
        assert_int_equal(tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16"), stages == 3 ? 16 : 8);
        assert_int_equal(tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16"), stages == 3 ? 8 : 4);
        assert_int_equal(tst_count(ptx, "wgmma.wait_group.sync.aligned 1;"), stages == 3 ? 1 : 0);
        tlc_compilation_free(&c);
    }
}

/* TileLang's MHA example on three stages: its scores start at the mask
 * (a Parallel loop writing acc_s before the gemm) and its V copy stands
 * further down the body, and P @ V is deferred all the same. */
static void test_port_attention_deferred(void **state) {
    (void)state;
    size_t len = 0;
    char *src = source_file("tests/ports/example_mha_fwd_bshd.py", &len);
    tlc_define defs[3] = {{"num_stages", "3"}, {"dim", "64"}, {"is_causal", "False"}};
    tlc_compilation c;
    plan_sm90a(&c, "example_mha_fwd_bshd.py", src, len, NULL, defs, 3);
    free(src);
    const tlc_kernel_plan *p = c.tir->kernels[0]->plan;
    assert_non_null(p->ws.loop);
    assert_true(p->ws.defer_x > p->pipes[0].nprefix); /* the mask's statement comes before the score gemm */
    assert_true(p->ws.defer_p > p->ws.defer_x);
    char *ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    assert_int_equal(tst_count(ptx, "wgmma.wait_group.sync.aligned 1;"), 1);
    tlc_compilation_free(&c);
}

/* Replaces the first `from` in the heap string *s with `to`. */
static void replace_first(char **s, const char *from, const char *to) {
    char *at = strstr(*s, from);
    assert_non_null(at);
    size_t head = (size_t)(at - *s), nf = strlen(from), nt = strlen(to), rest = strlen(at + nf);
    char *r = malloc(head + nt + rest + 1);
    assert_non_null(r);
    memcpy(r, *s, head);
    memcpy(r + head, to, nt);
    memcpy(r + head + nt, at + nf, rest + 1);
    free(*s);
    *s = r;
}

/* The overlap that runs the score gemm one iteration ahead (plan.h,
 * lookahead) where the output gemm cannot be deferred: flash_attention with
 * P staged in shared memory (the deferral wants P in registers and no
 * shared writes in the body). Three stages: the score gemm is issued before
 * the loop and in it (into a second register copy of acc_s). */
static void test_attention_lookahead(void **state) {
    (void)state;
    size_t len = 0;
    char *src = source_file("dsl-examples/flash_attention.tl", &len);
    replace_first(&src, "        K_shared = alloc_shared((tile_N, dim), dtype)\n",
                  "        K_shared = alloc_shared((tile_N, dim), dtype)\n"
                  "        P_shared = alloc_shared((tile_M, tile_N), dtype)\n");
    replace_first(&src, "copy(acc_s, acc_s_cast)", "copy(acc_s, P_shared)");
    replace_first(&src, "gemm(acc_s_cast, V_shared, acc_o", "gemm(P_shared, V_shared, acc_o");
    tlc_define defs[2] = {{"num_stages", "3"}, {"block_N", "64"}};
    tlc_compilation c;
    plan_sm90a(&c, "flash_attention.tl", src, strlen(src), "flash_attention", defs, 2);
    free(src);
    const tlc_kernel_plan *p = c.tir->kernels[0]->plan;
    assert_non_null(p->ws.loop);
    assert_int_equal(p->ws.defer_p, 0);
    assert_int_equal(p->ws.lookahead, 1);
    char *ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    assert_int_equal(tst_count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16"), 16);
    tlc_compilation_free(&c);
}

/* The Q tile of flash_attention, copied before the loop and read only by
 * the score gemm, is preloaded by the producer (plan.h, preloads): issued
 * by TMA on its own mbarrier pair after the tile's first stage loads,
 * waited for by the consumers, and
 * released once the last score gemm has retired (three stages: deferred
 * output gemm) or after the loop (two). No thread loads it. Read after
 * the loop as well, or loaded from a tensor the kernel writes, it is not
 * preloaded. */
static void test_attention_preload(void **state) {
    (void)state;
    for (int stages = 2; stages <= 3; stages++) {
        tlc_compilation c;
        plan_attention_stages(&c, stages, NULL);
        const tir_kernel *k = c.tir->kernels[0];
        const tlc_kernel_plan *p = k->plan;
        assert_non_null(p->ws.loop);
        assert_int_equal(p->ws.npreloads, 1);
        assert_ptr_equal(p->ws.preloads[0]->u.copy.dst.buf, buffer(k, "Q_shared"));
        assert_int_equal(p->ws.preload_early, stages == 3);
        /* the producer issues the next tile's Q after the stage loads that
         * wait only for stages freed before Q's release: one of three (the
         * last two are freed after the last score gemm), both of two */
        assert_int_equal(p->ws.preload_after_loads, stages == 3 ? 1 : 2);
        assert_true(p->ws.pre_full >= p->ws.empty + 8 * stages && p->ws.pre_empty == p->ws.pre_full + 8);
        char *ptx = tlc_compile_ptx(&c, false);
        assert_non_null(ptx);
        assert_int_equal(tst_count(ptx, "ld.global"), 0);
        assert_int_equal(tst_count(ptx, "mbarrier.init.shared::cta.b64"), 2 * stages + 2);
        assert_int_equal(tst_count(ptx, "[128]"), 3); /* tensor maps: K, V and Q */
        tlc_compilation_free(&c);
    }
    size_t len = 0;
    char *src = source_file("dsl-examples/flash_attention.tl", &len);
    replace_first(&src, "        copy(acc_o, Output[bz, row0:row0 + tile_M, by, :])\n",
                  "        copy(acc_o, Output[bz, row0:row0 + tile_M, by, :])\n"
                  "        copy(Q_shared, Output[bz, row0:row0 + tile_M, by, :])\n");
    tlc_compilation c;
    plan_sm90a(&c, "flash_attention.tl", src, strlen(src), "flash_attention", NULL, 0);
    free(src);
    assert_non_null(c.tir->kernels[0]->plan->ws.loop);
    assert_int_equal(c.tir->kernels[0]->plan->ws.npreloads, 0);
    tlc_compilation_free(&c);
    /* Nor when the kernel writes the tensor it is loaded from (the
     * producer's load of the next tile would not be ordered after the
     * consumers' store of this one). */
    src = source_file("dsl-examples/flash_attention.tl", &len);
    replace_first(&src, "        copy(acc_o, Output[bz, row0:row0 + tile_M, by, :])\n",
                  "        copy(acc_o, Output[bz, row0:row0 + tile_M, by, :])\n"
                  "        copy(acc_o, Q[bz, row0:row0 + tile_M, by, :])\n");
    plan_sm90a(&c, "flash_attention.tl", src, strlen(src), "flash_attention", NULL, 0);
    free(src);
    assert_non_null(c.tir->kernels[0]->plan->ws.loop);
    assert_int_equal(c.tir->kernels[0]->plan->ws.npreloads, 0);
    tlc_compilation_free(&c);
}

/* Lowering reads the plan: decisions changed after planning reach the PTX. */
static void test_lowering_reads_the_plan(void **state) {
    (void)state;
    tlc_compilation c;
    if (!plan_example(&c, "gemm.tl", "matmul", TLC_SM90A)) skip();
    tlc_kernel_plan *p = c.tir->kernels[0]->plan;
    p->min_blocks_per_sm = 1;
    p->ws.blocks_per_sm = 1;
    p->ws.reg_inc = 208;
    p->ws.reg_dec = 56;
    char *ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, "setmaxnreg.inc.sync.aligned.u32 208;"));
    assert_non_null(strstr(ptx, "setmaxnreg.dec.sync.aligned.u32 56;"));
    assert_non_null(strstr(ptx, ".minnctapersm 1"));
    assert_non_null(strstr(ptx, "tlc.meta persistent 1"));
    tlc_compilation_free(&c);

    /* no warp specialization when the plan says so */
    if (!plan_example(&c, "gemm.tl", "matmul", TLC_SM90A)) skip();
    p = c.tir->kernels[0]->plan;
    p->ws = (tlc_ws_decision){0};
    p->pipes[0].mbar = p->smem.top; /* the plain TMA pipeline needs its own mbarriers */
    p->min_blocks_per_sm = 0;
    ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    assert_null(strstr(ptx, "setmaxnreg"));
    assert_non_null(strstr(ptx, ".maxntid 128"));
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor"));
    assert_non_null(strstr(ptx, "wgmma.mma_async"));
    assert_non_null(strstr(ptx, "stmatrix"));
    tlc_compilation_free(&c);

    /* no staged epilogue when the plan gives it no scratch */
    if (!plan_example(&c, "gemm.tl", "matmul", TLC_SM90A)) skip();
    c.tir->kernels[0]->plan->nfresh = 0;
    ptx = tlc_compile_ptx(&c, false);
    assert_non_null(ptx);
    assert_null(strstr(ptx, "stmatrix"));
    tlc_compilation_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_sm90a),
        cmocka_unit_test(test_gemm_sm80),
        cmocka_unit_test(test_mla_sm90a),
        cmocka_unit_test(test_mla_roles_sm90a),
        cmocka_unit_test(test_mla_cluster_sm90a),
        cmocka_unit_test(test_attention_overlap),
        cmocka_unit_test(test_attention_lookahead),
        cmocka_unit_test(test_port_attention_deferred),
        cmocka_unit_test(test_attention_preload),
        cmocka_unit_test(test_lowering_reads_the_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
