/* Shared-memory allocation by liveness (transform/shared_alloc.c) and the
 * barriers lowering puts between reused bytes (transform/lower.c): buffers
 * with disjoint live ranges share bytes, overlapping ones (loop-carried
 * values included) never do, alignment survives reuse, a reduce's scratch
 * goes into bytes that are dead at the reduce, a block barrier separates
 * the last read of the old owner from the first write of the new one, and
 * the shipped MLA split kernel fits sm_90a and assembles. */
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
#include "layout/fragment.h"
#include "lowerkit/plan.h"
#include "transform/passes.h"

static void compile_layouts(tlc_compilation *c, const char *src, tlc_arch arch) {
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.arch = arch;
    if (!tlc_compile_source(c, "t.tl", src, strlen(src), &o) || !tlc_compile_layouts(c, NULL)) {
        print_message("%s", tlc_sb_cstr(&c->diag.out));
        fail_msg("the test kernel did not compile");
    }
}

static const tir_buffer *buf(const tlc_compilation *c, const char *name) {
    const tir_kernel *k = c->tir->kernels[0];
    for (int i = 0; i < k->nbuffers; i++)
        if (!strcmp(k->buffers[i]->name, name)) return k->buffers[i];
    fail_msg("no buffer %s", name);
    return NULL;
}

static int64_t lo(const tir_buffer *b) { return b->layout->offset; }
static int64_t hi(const tir_buffer *b) {
    return b->layout->offset + tlc_layout_total_bytes(b->layout);
}
static bool share_bytes(const tir_buffer *x, const tir_buffer *y) { return lo(x) < hi(y) && lo(y) < hi(x); }

/* --emit=thread text of the compilation (asserting success). */
static char *thread_text(tlc_compilation *c) {
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    if (!tlc_compile_thread(c, &sb)) {
        print_message("%s", tlc_sb_cstr(&c->diag.out));
        fail_msg("lowering failed");
    }
    char *t = strdup(tlc_sb_cstr(&sb));
    tlc_sb_free(&sb);
    return t;
}

/* The text between the first `from` and the next `to` after it holds a
 * block barrier. */
static bool barrier_between(const char *text, const char *from, const char *to) {
    const char *a = strstr(text, from);
    if (!a) fail_msg("'%s' not in the Thread IR", from);
    const char *b = strstr(a + strlen(from), to);
    if (!b) fail_msg("'%s' not after '%s' in the Thread IR", to, from);
    const char *bar = strstr(a, "bar.sync");
    return bar && bar < b;
}

/* a dies before b is born: same bytes, and a barrier between a's last read
 * and b's first write. */
static void test_disjoint_ranges_share(void **state) {
    (void)state;
    tlc_compilation c;
    compile_layouts(&c,
                    "def k(A: Tensor[(64, 64), float16], B: Tensor[(64, 64), float16]):\n"
                    "    with Kernel(1, threads=128) as bx:\n"
                    "        a = alloc_shared((64, 64), float16)\n"
                    "        b = alloc_shared((64, 64), float16)\n"
                    "        f = alloc_fragment((64, 64), float16)\n"
                    "        copy(A, a)\n"
                    "        copy(a, f)\n"
                    "        copy(f, b)\n"
                    "        copy(b, B)\n",
                    TLC_SM90A);
    assert_int_equal(lo(buf(&c, "a")), lo(buf(&c, "b")));
    char *t = thread_text(&c);
    assert_true(barrier_between(t, "// copy a -> f", "// copy f -> b"));
    assert_non_null(strstr(t, "tlc.meta smem 8192"));
    free(t);
    tlc_compilation_free(&c);
}

/* a is read again after b is written: they must not share. */
static void test_overlapping_ranges_do_not_share(void **state) {
    (void)state;
    tlc_compilation c;
    compile_layouts(&c,
                    "def k(A: Tensor[(64, 64), float16], B: Tensor[(64, 64), float16]):\n"
                    "    with Kernel(1, threads=128) as bx:\n"
                    "        a = alloc_shared((64, 64), float16)\n"
                    "        b = alloc_shared((64, 64), float16)\n"
                    "        f = alloc_fragment((64, 64), float16)\n"
                    "        copy(A, a)\n"
                    "        copy(a, f)\n"
                    "        copy(f, b)\n"
                    "        copy(a, f)\n"
                    "        copy(b, B)\n",
                    TLC_SM90A);
    assert_false(share_bytes(buf(&c, "a"), buf(&c, "b")));
    tlc_compilation_free(&c);
}

/* Inside a serial loop: c's value crosses iterations (read at the top of
 * the body, written below), so it lives over the whole loop and d, used
 * only in the body's tail, may not take its bytes, although their first to
 * last uses are disjoint. e and g are iteration-local (overwritten whole
 * before any read) and share bytes, with a barrier between e's read and
 * g's write and one on the way back to the top of the loop. */
static void test_loops(void **state) {
    (void)state;
    tlc_compilation c;
    compile_layouts(&c,
                    "def k(A: Tensor[(256, 64), float16], B: Tensor[(64, 64), float16]):\n"
                    "    with Kernel(1, threads=128) as bx:\n"
                    "        cc = alloc_shared((64, 64), float16)\n"
                    "        d = alloc_shared((64, 64), float16)\n"
                    "        e = alloc_shared((64, 64), float16)\n"
                    "        g = alloc_shared((64, 64), float16)\n"
                    "        f = alloc_fragment((64, 64), float16)\n"
                    "        copy(A[0:64, 0:64], cc)\n"
                    "        for ko in range(4):\n"
                    "            copy(cc, f)\n"
                    "            copy(A[ko * 64, 0], cc)\n"
                    "            copy(f, d)\n"
                    "            copy(d, B)\n"
                    "        for ko in range(4):\n"
                    "            copy(A[ko * 64, 0], e)\n"
                    "            copy(e, f)\n"
                    "            copy(f, g)\n"
                    "            copy(g, B)\n",
                    TLC_SM90A);
    assert_false(share_bytes(buf(&c, "cc"), buf(&c, "d")));
    assert_int_equal(lo(buf(&c, "e")), lo(buf(&c, "g")));
    char *t = thread_text(&c);
    assert_true(barrier_between(t, "// copy e -> f", "// copy f -> g"));
    /* back edge: g's last read (copy g -> B) before the next copy into e */
    const char *last = strstr(t, "// copy g -> B");
    assert_non_null(last);
    assert_non_null(strstr(last, "bar.sync"));
    free(t);
    tlc_compilation_free(&c);
}

/* A branch of an `if` inside a loop is a body of its own: o, overwritten
 * whole at the top of the branch and used nowhere else, does not cross an
 * iteration and takes q's bytes (q is dead once the branch starts); r,
 * written in the branch but read after the `if` too, may hold a value of
 * an earlier iteration there, so it lives over the whole loop and shares
 * nothing with q. */
static void test_if_branch_kills(void **state) {
    (void)state;
    tlc_compilation c;
    compile_layouts(&c,
                    "def k(A: Tensor[(256, 64), float16], B: Tensor[(64, 64), float16], n: int32):\n"
                    "    with Kernel(1, threads=128) as bx:\n"
                    "        q = alloc_shared((64, 64), float16)\n"
                    "        o = alloc_shared((64, 64), float16)\n"
                    "        r = alloc_shared((64, 64), float16)\n"
                    "        f = alloc_fragment((64, 64), float16)\n"
                    "        for ko in range(4):\n"
                    "            copy(A[ko * 64, 0], q)\n"
                    "            copy(q, f)\n"
                    "            if ko < n:\n"
                    "                copy(f, o)\n"
                    "                copy(o, B)\n"
                    "                copy(f, r)\n"
                    "            copy(r, B)\n",
                    TLC_SM90A);
    assert_int_equal(lo(buf(&c, "o")), lo(buf(&c, "q")));
    assert_false(share_bytes(buf(&c, "r"), buf(&c, "q")));
    assert_false(share_bytes(buf(&c, "r"), buf(&c, "o")));
    char *t = thread_text(&c);
    assert_true(barrier_between(t, "// copy q -> f", "// copy f -> o"));
    assert_true(barrier_between(t, "// copy f -> o", "// copy o -> B"));
    free(t);
    tlc_compilation_free(&c);
}

/* A swizzled buffer reusing the bytes of a dead row-major one keeps its
 * 1024-byte alignment (small sits at 512, right after x; s at 1024, inside
 * small's old bytes); x, live throughout, is never overlapped. */
static void test_alignment(void **state) {
    (void)state;
    tlc_compilation c;
    compile_layouts(&c,
                    "def k(A: Tensor[(64, 64), float16], S: Tensor[(3, 40), float32], B: Tensor[(64, 64), float16]):\n"
                    "    with Kernel(1, threads=128) as bx:\n"
                    "        x = alloc_shared((3, 40), float32)\n"
                    "        small = alloc_shared((64, 64), float16)\n"
                    "        s = alloc_shared((64, 64), float16)\n"
                    "        annotate_layout({s: make_swizzled_layout(s)})\n"
                    "        f = alloc_fragment((64, 64), float16)\n"
                    "        copy(S, x)\n"
                    "        copy(A, small)\n"
                    "        copy(small, B)\n"
                    "        copy(A, s)\n"
                    "        copy(s, f)\n"
                    "        copy(f, B)\n"
                    "        copy(x, S)\n",
                    TLC_SM90A);
    const tir_buffer *x = buf(&c, "x"), *small = buf(&c, "small"), *s = buf(&c, "s");
    assert_int_equal(s->layout->swizzle, TLC_SWIZZLE_128B);
    assert_int_equal(lo(s) % 1024, 0);
    assert_int_equal(lo(small) % 128, 0);
    assert_false(share_bytes(x, small));
    assert_false(share_bytes(x, s));
    assert_true(share_bytes(small, s)); /* small is dead when s is born */
    tlc_compilation_free(&c);
}

/* A cross-warp reduce's scratch goes into bytes dead at the reduce (t's,
 * whose last read is before it), and a buffer written after the reduce over
 * the scratch's bytes waits for the reduce's reads of them. */
static void test_reduce_scratch_reuse(void **state) {
    (void)state;
    tlc_compilation c;
    compile_layouts(&c,
                    "def k(X: Tensor[(1, 1024), float32], Y: Tensor[(1, 1024), float32], Z: Tensor[(1,), float32]):\n"
                    "    with Kernel(1, threads=128) as bx:\n"
                    "        t = alloc_shared((1, 1024), float32)\n"
                    "        u = alloc_shared((1, 1024), float32)\n"
                    "        x = alloc_fragment((1, 1024), float32)\n"
                    "        s = alloc_fragment((1,), float32)\n"
                    "        copy(X, t)\n"
                    "        copy(t, x)\n"
                    "        reduce_sum(x, s, dim=1)\n"
                    "        copy(x, u)\n"
                    "        copy(u, Y)\n"
                    "        copy(s, Z)\n",
                    TLC_SM90A);
    const tir_kernel *k = c.tir->kernels[0];
    const tlc_smem_plan *p = &k->plan->smem;
    assert_int_equal(p->nscratch, 1);
    assert_int_equal(p->scratch[0].bytes, 128 * 4); /* one word per thread */
    const tir_buffer *tb = buf(&c, "t"), *ub = buf(&c, "u");
    int64_t so = p->scratch[0].offset, se = so + p->scratch[0].bytes;
    assert_true(so < hi(tb) && lo(tb) < se);  /* in t's dead bytes */
    assert_true(so < hi(ub) && lo(ub) < se);  /* u reuses them after the reduce */
    assert_int_equal(lo(tb), lo(ub));
    assert_true(p->top <= 4096);               /* nothing but one 4 KiB tile */
    /* the planned scratch and u overlap: the plan says so */
    bool listed = false;
    int scratch = p->scratch_region0;
    assert_true(p->region_of_buffer[ub->id] >= 0);
    for (int i = 0; i < p->nalias[scratch]; i++) listed |= p->alias[scratch][i] == p->region_of_buffer[ub->id];
    assert_true(listed);
    char *t = thread_text(&c);
    char needle[80];
    if (so == 0) snprintf(needle, sizeof needle, "store.a4[smem+(tid.0 * 4)]");
    else snprintf(needle, sizeof needle, "store.a4[smem+((tid.0 * 4) + %lld)]", (long long)so);
    assert_non_null(strstr(t, needle)); /* the reduce's partials go to the planned bytes */
    assert_true(barrier_between(t, "// reduce_sum x -> s", "// copy x -> u"));
    /* and the barrier comes after the reduce's last read of the scratch */
    const char *r = strstr(t, "// reduce_sum x -> s"), *cp = strstr(t, "// copy x -> u");
    const char *last_load = NULL;
    for (const char *q = strstr(r, "load.f32.a4[smem+"); q && q < cp; q = strstr(q + 1, "load.f32.a4[smem+")) last_load = q;
    assert_non_null(last_load);
    const char *bar = strstr(last_load, "bar.sync");
    assert_true(bar && bar < cp);
    assert_non_null(strstr(t, "tlc.meta smem 4096"));
    free(t);
    tlc_compilation_free(&c);
}

/* dsl-examples/mla_decode.tl's split kernel at its defaults (num_stages=2)
 * fits sm_90a's 232448 bytes: every buffer keeps its bytes, no reduction
 * needs scratch (the warpgroups take the pages in turns, each reducing its
 * own rows); the PTX assembles. */
static void test_mla_split_fits_sm90a(void **state) {
    (void)state;
    size_t len;
    char *src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/mla_decode.tl", &len);
    if (!src) skip();
    static const char *dtypes[] = {"float16", "bfloat16"};
    for (int d = 0; d < 2; d++) {
        tlc_define defs[1] = {{"dtype", dtypes[d]}};
        char *err = NULL;
        char *ptx = tlc_compile_to_ptx("mla_decode.tl", src, len, defs, 1, TLC_SM90A, "mla_decode_split", 3, &err);
        if (!ptx) fail_msg("mla_decode_split (%s) did not compile: %s", dtypes[d], err ? err : "?");
        free(err);
        const char *m = strstr(ptx, "// tlc.meta smem ");
        assert_non_null(m);
        long long smem = atoll(m + strlen("// tlc.meta smem "));
        assert_true(smem > 224 * 1024 && smem <= 232448);
        assert_null(strstr(ptx, ".local")); /* no register arrays in local memory */
        assert_non_null(strstr(ptx, "wgmma.mma_async"));
        assert_non_null(strstr(ptx, "cp.async.bulk.tensor"));
        if (!tst_assemble_ptx(ptx, TLC_SM90A, "the MLA split kernel"))
            print_message("note: ptxas not found; the MLA PTX is checked but not assembled\n");
        free(ptx);
    }

    /* the plan behind it */
    tlc_compilation c;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.arch = TLC_SM90A;
    o.kernel = "mla_decode_split";
    tlc_define turns[1] = {{"roles", "False"}}; /* the turns form, whose barriers are checked below */
    o.defines = turns;
    o.ndefines = 1;
    assert_true(tlc_compile_source(&c, "mla_decode.tl", src, len, &o));
    assert_true(tlc_compile_layouts(&c, NULL));
    const tir_kernel *k = c.tir->kernels[0];
    const tlc_smem_plan *p = &k->plan->smem;
    const tir_buffer *S = buf(&c, "S_shared"), *Q = buf(&c, "Q_shared"), *KV = buf(&c, "KV_shared"),
                     *O = buf(&c, "O_shared");
    assert_int_equal(KV->layout->stages, 2);
    assert_int_equal(p->nscratch, 0); /* each warpgroup reduces its own rows within warps */
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers[i];
        if (b->scope != TIR_SCOPE_SHARED) continue;
        if (b->layout->swizzle != TLC_SWIZZLE_NONE) assert_int_equal(lo(b) % 1024, 0);
        for (int j = 0; j < i; j++) /* Q, Q_pe, the stages and S_shared are all live in the loop */
            if (k->buffers[j]->scope == TIR_SCOPE_SHARED && b != O && k->buffers[j] != O)
                assert_false(share_bytes(b, k->buffers[j]));
    }
    assert_false(share_bytes(Q, S));
    /* O_shared, written only in the branch that stores a whole sequence's
     * output, lives there alone: it takes Q_shared's bytes (Q is dead from
     * the last page to the next sequence) and no one else's */
    assert_int_equal(lo(O), lo(Q));
    for (int i = 0; i < k->nbuffers; i++)
        if (k->buffers[i]->scope == TIR_SCOPE_SHARED && k->buffers[i] != O && k->buffers[i] != Q)
            assert_false(share_bytes(O, k->buffers[i]));
    assert_true(p->top + 1024 <= 232448);
    /* per page the warpgroups meet only through the turns' named barriers
     * (one of each pair per parity): in each warpgroup's program the
     * other warpgroup waits for the owner's publication and the next owner
     * for S_shared to be free; after the loop the warpgroup that did not
     * own the last page waits for its turn (one wait per parity). No
     * barrier of all the consumers until the loop is done, none closing
     * an iteration */
    char *t = thread_text(&c);
    const char *loop = strstr(t, "// Pipelined loop over k, consumers");
    assert_non_null(loop);
    const char *end = strstr(loop, "bar.sync 1, 256");
    assert_non_null(end);
    int bars = 0;
    for (const char *q = strstr(loop, "bar.sync"); q && q < end; q = strstr(q + 1, "bar.sync")) bars++;
    assert_int_equal(bars, 6);
    assert_non_null(strstr(loop, "mbarrier.arrive.shared::cta.b64"));
    /* after the loop, a barrier of the consumers before acc_o goes into
     * Q_shared's bytes (the last score gemms read Q there) and one before
     * the rows go out (each thread stores rows others wrote) */
    const char *stage_o = strstr(end, "// copy acc_o -> O_shared");
    assert_non_null(stage_o);
    const char *bar = strstr(end, "bar.sync 1, 256");
    assert_true(bar && bar < stage_o);
    assert_true(barrier_between(t, "// copy acc_o -> O_shared", "// copy O_shared -> Output"));
    /* the owner's slot stores: after a warp barrier, by one lane per row
     * (the first of the four in its warpgroup that hold the row) */
    const char *wsync = strstr(loop, "bar.warp.sync -1");
    assert_non_null(wsync);
    const char *slot = strstr(wsync, "store.a4[smem+turnslot");
    assert_non_null(slot);
    const char *only = strstr(wsync, "if ((((tid.0 %u 128) %u 4)");
    assert_true(only && only < slot);
    free(t);
    tlc_compilation_free(&c);
    free(src);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disjoint_ranges_share),
        cmocka_unit_test(test_overlapping_ranges_do_not_share),
        cmocka_unit_test(test_loops),
        cmocka_unit_test(test_if_branch_kills),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_reduce_scratch_reuse),
        cmocka_unit_test(test_mla_split_fits_sm90a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
