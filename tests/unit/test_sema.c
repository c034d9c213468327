/* Semantic analysis from source text: every construct's Tile IR shape and
 * every diagnostic's message and location. Snippets are parsed with the
 * real parser; diagnostics are rendered without source lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "frontend/sema.h"

typedef struct ctx {
    tlc_arena arena;
    tlc_source src;
    tlc_diag diag;
    tir_module *m;
} ctx;

static tir_module *run_opts(ctx *c, const char *text, const tlc_sema_options *o) {
    tlc_arena_init(&c->arena);
    c->src.name = "t.tl";
    c->src.text = text;
    c->src.len = strlen(text);
    tlc_diag_init(&c->diag, &c->src);
    c->diag.show_source = false;
    ast_module *am = tlc_parse(&c->src, &c->arena, &c->diag);
    if (!am || c->diag.errors) {
        fprintf(stderr, "parse failed:\n%s", tlc_sb_cstr(&c->diag.out));
        fail();
    }
    c->m = tlc_sema(am, o, &c->arena, &c->diag);
    return c->m;
}

static tir_module *run(ctx *c, const char *text) {
    tlc_sema_options o = {.arch = TLC_SM90A};
    return run_opts(c, text, &o);
}

static void done(ctx *c) {
    tlc_diag_free(&c->diag);
    tlc_arena_free(&c->arena);
}

static const char *out(ctx *c) { return tlc_sb_cstr(&c->diag.out); }

#define EXPECT_OK(c)                                                          \
    do {                                                                      \
        if (!(c)->m || (c)->diag.errors) {                                    \
            fprintf(stderr, "unexpected diagnostics:\n%s", out(c));           \
            fail();                                                           \
        }                                                                     \
    } while (0)

/* Asserts that the diagnostics contain `want` (a "t.tl:L:C: error: ..." prefix). */
static void expect_diag(ctx *c, const char *want) {
    if (!strstr(out(c), want)) {
        fprintf(stderr, "expected:\n  %s\ngot:\n%s", want, out(c));
        fail();
    }
    assert_null(c->m);
}

/* A kernel around `body` (lines already indented by 8 spaces); body starts on line 4. */
static char *kernel(const char *body) {
    static const char *head =
        "@jit(bm=64, dtype=float16, acc=float32)\n"
        "def k(A: Tensor[(M, 64), dtype], B: Tensor[(64, 64), dtype], C: Tensor[(M, 64), acc], n: int32):\n"
        "    with Kernel(ceildiv(M, bm), threads=128) as bx:\n";
    size_t n = strlen(head) + strlen(body) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%s%s", head, body);
    return s;
}

static tir_module *run_body(ctx *c, const char *body) {
    char *s = kernel(body);
    tir_module *m = run(c, s);
    /* the source must outlive the diagnostics: keep it in the arena */
    char *copy = tlc_arena_strdup(&c->arena, s);
    c->src.text = copy;
    free(s);
    return m;
}

static tir_stmt *body_stmt(tir_module *m, int i) {
    tir_stmt *b = m->kernels[0]->body;
    assert_true(i < b->u.seq.n);
    return b->u.seq.stmts[i];
}

/* ---------------- constructs ---------------- */

static const char *gemm_src =
    "import tilelang.language as T\n"
    "@T.jit(block_M=128, block_N=128, block_K=64, dtype=T.float16, accum_dtype=\"float32\", num_stages=3)\n"
    "def matmul(A: T.Tensor((M, K), dtype), B: Tensor[(K, N), dtype], C: Tensor[(M, N), dtype]):\n"
    "    with T.Kernel(T.ceildiv(N, block_N), ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "        A_shared = T.alloc_shared((block_M, block_K), dtype)\n"
    "        B_shared = alloc_shared((block_K, block_N), dtype)\n"
    "        C_local = alloc_fragment((block_M, block_N), accum_dtype)\n"
    "        T.use_swizzle(panel_size=4, order=\"col\")\n"
    "        T.clear(C_local)\n"
    "        for ko in T.Pipelined(ceildiv(K, block_K), num_stages=num_stages):\n"
    "            copy(A[by * block_M, ko * block_K], A_shared)\n"
    "            copy(B[ko * block_K, bx * block_N], B_shared)\n"
    "            T.gemm(A_shared, B_shared, C_local, policy=T.GemmWarpPolicy.FullRow)\n"
    "        for i, j in T.Parallel(block_M, block_N):\n"
    "            C_local[i, j] = max(C_local[i, j], 0)\n"
    "        copy(C_local, C[by * block_M, bx * block_N])\n";

static void test_gemm_kernel(void **state) {
    (void)state;
    ctx c;
    tir_module *m = run(&c, gemm_src);
    EXPECT_OK(&c);
    assert_int_equal(m->nkernels, 1);
    tir_kernel *k = m->kernels[0];
    assert_string_equal(k->name, "matmul");
    assert_int_equal(k->nparams, 3);
    assert_int_equal(k->nsym, 3); /* M, K, N */
    assert_string_equal(k->sym_dims[0]->name, "M");
    assert_int_equal(k->grid_rank, 2);
    assert_int_equal(k->grid[0]->kind, TE_BINARY); /* ceildiv(N, 128) */
    assert_int_equal(k->threads, 128);
    assert_true(k->use_swizzle && k->swizzle_col && k->swizzle_panel == 4);
    assert_int_equal(k->shared_bytes, 128 * 64 * 2 * 2);
    assert_int_equal(k->nbuffers, 6);
    for (int i = 0; i < k->nbuffers; i++) assert_int_equal(k->buffers[i]->id, i);
    assert_int_equal(k->buffers[0]->param_index, 0);
    assert_int_equal(k->buffers[3]->scope, TIR_SCOPE_SHARED);
    assert_int_equal(k->buffers[5]->scope, TIR_SCOPE_FRAGMENT);
    assert_int_equal(k->buffers[5]->dtype, TIR_F32);
    assert_int_equal(tir_buffer_dim(k->buffers[3], 0), 128);
    assert_int_equal(k->nconsts, 6);
    /* body: 3 allocs, clear, pipelined loop, parallel loop, copy */
    assert_int_equal(k->body->u.seq.n, 7);
    assert_int_equal(body_stmt(m, 0)->kind, TS_ALLOC);
    tir_stmt *clr = body_stmt(m, 3);
    assert_int_equal(clr->kind, TS_FILL);
    assert_true(clr->u.fill.is_clear);
    tir_stmt *loop = body_stmt(m, 4);
    assert_int_equal(loop->kind, TS_FOR);
    assert_int_equal(loop->u.for_.kind, TIR_FOR_PIPELINED);
    assert_int_equal(loop->u.for_.num_stages, 3);
    tir_stmt *cp = loop->u.for_.body->u.seq.stmts[0];
    assert_int_equal(cp->kind, TS_COPY);
    int64_t e;
    assert_true(tir_expr_const_int(cp->u.copy.src.extent[0], &e) && e == 128);
    assert_true(tir_expr_const_int(cp->u.copy.src.extent[1], &e) && e == 64);
    tir_stmt *g = loop->u.for_.body->u.seq.stmts[2];
    assert_int_equal(g->kind, TS_GEMM);
    assert_int_equal(g->u.gemm.m, 128);
    assert_int_equal(g->u.gemm.n, 128);
    assert_int_equal(g->u.gemm.k, 64);
    assert_int_equal(g->u.gemm.policy, TIR_POLICY_FULLROW);
    tir_stmt *par = body_stmt(m, 5);
    assert_int_equal(par->u.for_.kind, TIR_FOR_PARALLEL);
    assert_int_equal(par->u.for_.nvars, 2);
    tir_stmt *st = par->u.for_.body->u.seq.stmts[0];
    assert_int_equal(st->kind, TS_STORE);
    assert_int_equal(st->u.store.value->dtype, TIR_F32);
    /* vars dense */
    assert_true(k->nvars >= 7);
    assert_true(tir_verify_module(m, &c.diag));
    done(&c);
}

static void test_defines(void **state) {
    (void)state;
    ctx c;
    tlc_define d[] = {{"block_M", "64"}, {"dtype", "bfloat16"}, {"K", "256"}};
    tlc_sema_options o = {.arch = TLC_SM90A, .defines = d, .ndefines = 3};
    tir_module *m = run_opts(&c, gemm_src, &o);
    EXPECT_OK(&c);
    tir_kernel *k = m->kernels[0];
    assert_int_equal(tir_buffer_dim(k->buffers[3], 0), 64);
    assert_int_equal(k->buffers[0]->dtype, TIR_BF16);
    assert_int_equal(k->nsym, 2); /* K specialized */
    assert_int_equal(tir_buffer_dim(k->buffers[0], 1), 256);
    bool saw = false;
    for (int i = 0; i < k->nconsts; i++)
        if (strcmp(k->consts[i].name, "block_M") == 0) saw = k->consts[i].overridden && k->consts[i].ival == 64;
    assert_true(saw);
    done(&c);

    tlc_define bad[] = {{"blockM", "64"}};
    o.defines = bad;
    o.ndefines = 1;
    run_opts(&c, gemm_src, &o);
    expect_diag(&c, "t.tl: error: unknown parameter 'blockM' in -D");
    done(&c);

    tlc_define badtype[] = {{"block_M", "abc"}, {"dtype", "7"}};
    o.defines = badtype;
    o.ndefines = 2;
    run_opts(&c, gemm_src, &o);
    expect_diag(&c, "t.tl:2:8: error: -D block_M=abc: expected an integer (the @jit default is 128)");
    expect_diag(&c, "error: -D dtype=7: expected a dtype (the @jit default is float16)");
    assert_int_equal(c.diag.errors, 2); /* no follow-on errors from the bad parameters */
    done(&c);

    const char *dyn =
        "@jit(M=dynamic(\"m\"), order=\"row\", scale=0.5, relu=False)\n"
        "def f(A: Tensor[(M,), float32]):\n"
        "    with Kernel(M, threads=32) as bx:\n"
        "        pass\n";
    tlc_define dd[] = {{"M", "128"}};
    o.defines = dd;
    o.ndefines = 1;
    run_opts(&c, dyn, &o);
    expect_diag(&c, "t.tl:1:6: error: -D M: 'M' is a dynamic dimension and cannot be specialized");
    done(&c);

    tlc_define ok[] = {{"order", "\"col\""}, {"scale", "2"}, {"relu", "True"}};
    o.defines = ok;
    o.ndefines = 3;
    m = run_opts(&c, dyn, &o);
    EXPECT_OK(&c);
    k = m->kernels[0];
    assert_int_equal(k->nsym, 1);
    assert_true(k->sym_dims[0]->dynamic);
    assert_string_equal(k->consts[0].sval, "col");
    assert_true(k->consts[1].fval == 2.0);
    assert_int_equal(k->consts[2].kind, TIR_CONST_BOOL);
    assert_int_equal(k->consts[2].ival, 1);
    done(&c);
}

static void test_scalars_and_types(void **state) {
    (void)state;
    ctx c;
    tir_module *m = run_body(&c,
        "        x = alloc_var(float32, 0)\n"                 /* 4 */
        "        L = alloc_local((4,), float16)\n"            /* 5 */
        "        half = bm // 2\n"                            /* 6: constant */
        "        S = alloc_shared((half, 64), dtype)\n"       /* 7 */
        "        t = n * 2\n"                                 /* 8: let */
        "        t = t + 1\n"                                 /* 9: assign */
        "        x = x + L[0] * L[1]\n"                       /* 10: store */
        "        r = n / 2\n"                                 /* 11: float division */
        "        q = n // 2 + 7 % 3\n"                        /* 12 */
        "        e = exp(L[2])\n"                             /* 13 */
        "        b = 1 < n < 10\n"                            /* 14 */
        "        big = n + int64(1)\n"                        /* 15 */
        "        x += 1\n");                                  /* 16 */
    EXPECT_OK(&c);
    tir_kernel *k = m->kernels[0];
    tir_stmt *b = k->body;
    assert_int_equal(b->u.seq.stmts[0]->kind, TS_ALLOC);
    assert_int_equal(b->u.seq.stmts[0]->u.alloc.buf->scope, TIR_SCOPE_VAR);
    assert_int_equal(b->u.seq.stmts[0]->u.alloc.buf->rank, 0);
    assert_int_equal(b->u.seq.stmts[1]->kind, TS_STORE); /* init */
    assert_int_equal(b->u.seq.stmts[2]->kind, TS_ALLOC);
    tir_stmt *s = b->u.seq.stmts[3];
    assert_int_equal(s->kind, TS_ALLOC);
    assert_int_equal(tir_buffer_dim(s->u.alloc.buf, 0), 32);
    assert_int_equal(b->u.seq.stmts[4]->kind, TS_LET);
    assert_int_equal(b->u.seq.stmts[5]->kind, TS_ASSIGN);
    assert_ptr_equal(b->u.seq.stmts[4]->u.let.var, b->u.seq.stmts[5]->u.let.var);
    tir_stmt *st = b->u.seq.stmts[6];
    assert_int_equal(st->kind, TS_STORE);
    assert_null(st->u.store.idx);
    /* x + L[0]*L[1]: f16 * f16 computes in f32 */
    assert_int_equal(st->u.store.value->dtype, TIR_F32);
    assert_int_equal(st->u.store.value->kind, TE_BINARY);
    assert_int_equal(st->u.store.value->u.bin.a->kind, TE_LOAD);
    assert_int_equal(b->u.seq.stmts[7]->u.let.var->dtype, TIR_F32);
    assert_int_equal(b->u.seq.stmts[8]->u.let.var->dtype, TIR_I32);
    assert_int_equal(b->u.seq.stmts[9]->u.let.var->dtype, TIR_F32);
    assert_int_equal(b->u.seq.stmts[10]->u.let.var->dtype, TIR_BOOL);
    assert_int_equal(b->u.seq.stmts[11]->u.let.var->dtype, TIR_I64);
    assert_int_equal(b->u.seq.stmts[12]->kind, TS_STORE);
    done(&c);
}

static void test_regions_and_loops(void **state) {
    (void)state;
    ctx c;
    tir_module *m = run_body(&c,
        "        S = alloc_shared((64, 64), dtype)\n"                    /* 4 */
        "        R = alloc_fragment((64,), acc)\n"                       /* 5 */
        "        copy(A[bx * 64:(bx + 1) * 64, :], S)\n"                 /* 6 */
        "        copy(S[0, :], C[bx * 64, 0])\n"                          /* 7 */
        "        for i in range(0, 10, 3):\n"                            /* 8 */
        "            pass\n"
        "        for i in serial(10, 0, -2):\n"                          /* 10 */
        "            pass\n"
        "        for i in unroll(4):\n"
        "            pass\n"
        "        if bm == 64:\n"                                         /* 14: folded */
        "            fill(S, 1.5)\n"
        "        else:\n"
        "            fill(S, 2)\n"
        "        if n > 3:\n"                                            /* 18 */
        "            reduce_max(S, R, dim=1)\n"
        "        T.annotate_layout({S: T.layout.make_swizzled_layout(S)})\n"
        "        atomic_add(C[0, 1], 1.0)\n"
        "        atomic_add(C[bx * 64, 0], S)\n");
    EXPECT_OK(&c);
    tir_kernel *k = m->kernels[0];
    tir_stmt **s = k->body->u.seq.stmts;
    int64_t e;
    assert_int_equal(s[2]->kind, TS_COPY);
    assert_true(tir_expr_const_int(s[2]->u.copy.src.extent[0], &e) && e == 64);
    assert_true(tir_expr_const_int(s[2]->u.copy.src.extent[1], &e) && e == 64);
    /* S[0, :] is [64]; C[bx*64, 0] takes it on its trailing dim */
    assert_true(tir_expr_const_int(s[3]->u.copy.dst.extent[0], &e) && e == 1);
    assert_true(tir_expr_const_int(s[3]->u.copy.dst.extent[1], &e) && e == 64);
    assert_int_equal(s[4]->u.for_.kind, TIR_FOR_SERIAL);
    assert_true(tir_expr_const_int(s[4]->u.for_.extent[0], &e) && e == 4);
    assert_int_equal(s[4]->u.for_.step, 3);
    assert_true(tir_expr_const_int(s[5]->u.for_.extent[0], &e) && e == 5);
    assert_true(tir_expr_const_int(s[5]->u.for_.start[0], &e) && e == 10);
    assert_int_equal(s[6]->u.for_.kind, TIR_FOR_UNROLLED);
    assert_int_equal(s[7]->kind, TS_FILL); /* the constant if disappeared */
    assert_true(s[7]->u.fill.value->kind == TE_FLOAT && s[7]->u.fill.value->u.fval == 1.5);
    assert_int_equal(s[7]->u.fill.value->dtype, TIR_F16);
    assert_int_equal(s[8]->kind, TS_IF);
    /* from shared memory: through a fragment of S's shape, copied in */
    assert_int_equal(s[8]->u.if_.then->u.seq.stmts[0]->kind, TS_ALLOC);
    assert_int_equal(s[8]->u.if_.then->u.seq.stmts[1]->kind, TS_COPY);
    tir_stmt *red = s[8]->u.if_.then->u.seq.stmts[2];
    assert_int_equal(red->kind, TS_REDUCE);
    assert_int_equal(red->u.reduce.src.buf->scope, TIR_SCOPE_FRAGMENT);
    assert_int_equal(red->u.reduce.dim, 1);
    assert_true(red->u.reduce.clear);
    assert_null(s[8]->u.if_.els);
    assert_int_equal(k->buffers[3]->layout_hint, TIR_LAYOUT_HINT_SWIZZLED);
    assert_int_equal(k->shared_bytes, 64 * 64 * 2); /* 8192 is a multiple of 1024 already */
    assert_int_equal(s[9]->kind, TS_ATOMIC_ADD);
    assert_non_null(s[9]->u.atomic.value);
    assert_null(s[9]->u.atomic.src.buf);
    assert_non_null(s[10]->u.atomic.src.buf);
    done(&c);
}

static void test_shared_rounding_and_kernels(void **state) {
    (void)state;
    ctx c;
    const char *src =
        "N = 100\n"
        "def first(A: Tensor[(N,), float32]):\n"
        "    with Kernel(1) as bx:\n"
        "        S = alloc_shared((N,), float16)\n"
        "        W = alloc_shared((N,), float16)\n"
        "        annotate_layout({W: make_swizzled_layout(W)})\n"
        "def second(A: Tensor[(N,), float32]):\n"
        "    with Kernel(1, 2, threads=64):\n"
        "        pass\n";
    tir_module *m = run(&c, src);
    EXPECT_OK(&c);
    assert_int_equal(m->nkernels, 2);
    assert_int_equal(m->kernels[0]->shared_bytes, 256 + 1024);
    assert_int_equal(m->kernels[0]->threads, 128);
    assert_int_equal(m->kernels[1]->threads, 64);
    assert_int_equal(m->kernels[1]->grid_rank, 2);
    done(&c);
    tlc_sema_options o = {.arch = TLC_SM90A, .kernel = "second"};
    m = run_opts(&c, src, &o);
    EXPECT_OK(&c);
    assert_int_equal(m->nkernels, 1);
    assert_string_equal(m->kernels[0]->name, "second");
    done(&c);
    o.kernel = "third";
    run_opts(&c, src, &o);
    expect_diag(&c, "t.tl: error: no kernel named 'third' in this file");
    done(&c);
}

/* ---------------- diagnostics ---------------- */

static void test_names_and_arity(void **state) {
    (void)state;
    ctx c;
    run_body(&c,
        "        S = alloc_shared((64, 64), dtype)\n"
        "        copy(A[0, 0], S, S)\n"
        "        gemm(S, S, S, transpos_B=True)\n"
        "        fill(S)\n"
        "        x = foo + 1\n"
        "        copy(S, bar)\n"
        "        y = frobnicate(1)\n");
    expect_diag(&c, "t.tl:5:26: error: 'copy' takes 2 arguments, got 3");
    expect_diag(&c, "t.tl:6:23: error: 'gemm' has no parameter named 'transpos_B'");
    expect_diag(&c, "t.tl:7:9: error: 'fill' is missing argument 'value'");
    expect_diag(&c, "t.tl:8:13: error: unknown name 'foo'");
    expect_diag(&c, "t.tl:9:17: error: unknown name 'bar'");
    expect_diag(&c, "t.tl:10:13: error: unknown function 'frobnicate'");
    assert_int_equal(c.diag.errors, 6); /* several errors, no cascade */
    done(&c);
}

static void test_shape_errors(void **state) {
    (void)state;
    ctx c;
    run_body(&c,
        "        S = alloc_shared((64, 32), dtype)\n"          /* 4 */
        "        T2 = alloc_shared((32, 64), dtype)\n"         /* 5 */
        "        F = alloc_fragment((64, 64), acc)\n"          /* 6 */
        "        G = alloc_fragment((64, 32), acc)\n"          /* 7 */
        "        R = alloc_fragment((32,), acc)\n"             /* 8 */
        "        copy(S, T2)\n"                                /* 9 */
        "        gemm(S, S, F)\n"                              /* 10: K 32 vs 64 */
        "        gemm(S, T2, G)\n"                             /* 11: C shape */
        "        gemm(S, S, F, transpose_B=True)\n"            /* 12: ok: [64,32]x[32,64] */
        "        reduce_max(F, R, dim=1)\n"                     /* 13 */
        "        reduce_sum(F, R, dim=2)\n");                   /* 14 */
    expect_diag(&c, "t.tl:9:17: error: copy: shape mismatch: source 'S' is [64, 32] but destination 'T2' is [32, 64]");
    expect_diag(&c, "t.tl:4:9: note: 'S' declared here as a shared buffer");
    expect_diag(&c, "t.tl:10:17: error: gemm: K of A (32, from S[64, 32]) does not match K of B (64, from S[64, 32])");
    expect_diag(&c, "t.tl:11:21: error: gemm: the accumulator 'G' is [64, 32] but A x B is [64, 64]");
    expect_diag(&c, "t.tl:13:23: error: reduce_max: the destination 'R' is [32] but reducing 'F' over dim 1 gives [64]");
    expect_diag(&c, "t.tl:14:30: error: reduce_sum: dim=2 is out of range for the 2-d source 'F'");
    assert_int_equal(c.diag.errors, 5);
    done(&c);
}

static void test_scope_errors(void **state) {
    (void)state;
    ctx c;
    run_body(&c,
        "        S = alloc_shared((64, 64), dtype)\n"    /* 4 */
        "        acc_s = alloc_shared((64, 64), acc)\n"  /* 5 */
        "        F = alloc_fragment((64, 64), acc)\n"    /* 6 */
        "        gemm(S, S, acc_s)\n"                    /* 7 */
        "        gemm(B, S, F)\n"                        /* 8 */
        "        annotate_layout({F: make_swizzled_layout(F)})\n" /* 9 */
        "        with Kernel(1) as by:\n"                /* 10 */
        "            pass\n");
    expect_diag(&c, "t.tl:7:20: error: gemm: the accumulator C must be a fragment (alloc_fragment), but 'acc_s' is a shared buffer");
    expect_diag(&c, "t.tl:5:9: note: 'acc_s' declared here as a shared buffer");
    expect_diag(&c, "t.tl:8:14: error: gemm: operand A must be in shared memory or a fragment, but 'B' is a tensor parameter");
    expect_diag(&c, "t.tl:9:26: error: annotate_layout: 'F' must be a shared buffer, but it is a fragment");
    expect_diag(&c, "t.tl:10:9: error: 'with Kernel' cannot be nested");
    expect_diag(&c, "t.tl:3:5: note: the enclosing 'with Kernel' is here");
    done(&c);

    run(&c,
        "def f(A: Tensor[(4,), float32]):\n"
        "    S = alloc_shared((4,), float32)\n"
        "    copy(A, A)\n"
        "    with Kernel(1) as bx:\n"
        "        pass\n"
        "    with Kernel(1) as bx:\n"
        "        pass\n"
        "def g(A: Tensor[(4,), float32]):\n"
        "    x = 1\n");
    expect_diag(&c, "t.tl:2:9: error: 'alloc_shared' must be inside 'with Kernel(...)'");
    expect_diag(&c, "t.tl:3:5: error: 'copy' must be inside 'with Kernel(...)'");
    expect_diag(&c, "t.tl:8:5: error: kernel 'g' has no 'with Kernel(...)' block");
    done(&c);
}

static void test_limits(void **state) {
    (void)state;
    ctx c;
    const char *big =
        "def f(A: Tensor[(4,), float32]):\n"
        "    with Kernel(1, threads=256) as bx:\n"
        "        S1 = alloc_shared((256, 256), float16)\n"
        "        S2 = alloc_shared((128, 128), float32)\n"
        "        S3 = alloc_shared((10,), float16)\n";
    /* Only a buffer too big on its own is sema's error: buffers may share
     * bytes (the plan's liveness), so their sum is the plan's to check. */
    tlc_sema_options o = {.arch = TLC_SM86};
    run_opts(&c, big, &o);
    expect_diag(&c, "t.tl:3:9: error: shared buffer 'S1' (float16) needs 131072 bytes of shared memory on its own, over the sm_86 limit of 101376 bytes per block");
    assert_null(strstr(out(&c), "'S2'"));
    done(&c);
    o.arch = TLC_SM90A;
    run_opts(&c, big, &o);
    EXPECT_OK(&c);
    done(&c);

    const char *thr[] = {"0", "4096", "48"};
    for (int i = 0; i < 3; i++) {
        char src[256];
        snprintf(src, sizeof src, "def f(A: Tensor[(4,), float32]):\n    with Kernel(1, threads=%s) as bx:\n        pass\n", thr[i]);
        run(&c, src);
        char want[128];
        snprintf(want, sizeof want, "t.tl:2:28: error: threads=%s: must be a multiple of 32 between 32 and 1024", thr[i]);
        expect_diag(&c, want);
        done(&c);
    }

    run_body(&c,
        "        for k in Pipelined(4, num_stages=33):\n"        /* 4 */
        "            pass\n"
        "        S = alloc_shared((0, 64), dtype)\n"             /* 6 */
        "        S2 = alloc_shared((64 // 0, 64), dtype)\n"      /* 7 */
        "        S3 = alloc_shared((64 % (bm - 64),), dtype)\n"  /* 8 */
        "        x = 2 ** 63\n"                                  /* 9 */
        "        y = 9223372036854775807 + 1\n"                  /* 10 */
        "        S4 = alloc_shared((1 << 30, 1 << 30), dtype)\n" /* 11 */
        "        L = alloc_local((4,), float32)\n"              /* 12 */
        "        L[4] = 1\n"                                     /* 13 */
        "        copy(A[0:8, 0], L)\n"                           /* 14 */
        "        copy(B[60:68, 0], L[0:8])\n"                    /* 15 */
        "        for i in range(0, 4, 0):\n"                     /* 16 */
        "            pass\n");
    expect_diag(&c, "t.tl:4:42: error: num_stages=33: must be between 0 and 32");
    expect_diag(&c, "t.tl:6:27: error: buffer dimension must be positive, got 0");
    expect_diag(&c, "t.tl:7:31: error: division by zero in a constant expression");
    expect_diag(&c, "t.tl:8:31: error: modulo by zero in a constant expression");
    expect_diag(&c, "t.tl:9:15: error: integer overflow in a constant expression");
    expect_diag(&c, "t.tl:10:33: error: integer overflow in a constant expression");
    expect_diag(&c, "t.tl:11:39: error: buffer size overflows");
    expect_diag(&c, "t.tl:13:11: error: index 4 is out of range for dimension 0 of 'L' (size 4)");
    expect_diag(&c, "t.tl:14:25: error: copy: shape mismatch: source 'A' is [8] but destination 'L' is [4]");
    expect_diag(&c, "t.tl:15:16: warning: region [60:68] of 'B' reaches past the end of dimension 0 (size 64): the part past "
                    "it is a masked tail (reads give 0, writes are dropped)");
    expect_diag(&c, "t.tl:16:30: error: the loop step must not be zero");
    done(&c);

    run(&c, "def f(A: Tensor[(-1, 4), float32], B: Tensor[(1 << 40, 1 << 40), float32]):\n    with Kernel(1) as bx:\n        pass\n");
    expect_diag(&c, "t.tl:1:18: error: tensor dimension must be positive, got -1");
    expect_diag(&c, "t.tl:1:58: error: tensor size overflows");
    done(&c);
}

/* One file compiles to at most TLRT_MAX_KERNELS kernels (the runtime's
 * metadata): the first kernel past that is the error, located. */
static void test_kernel_count_limit(void **state) {
    (void)state;
    tlc_strbuf sb;
    for (int n = 256; n <= 258; n++) {
        tlc_sb_init(&sb);
        for (int i = 0; i < n; i++)
            tlc_sb_printf(&sb, "def k%d(A: Tensor[(4,), float32]):\n    with Kernel(1) as bx:\n        A[0] = 1.0\n", i);
        ctx c;
        run(&c, tlc_sb_cstr(&sb));
        if (n == 256) {
            EXPECT_OK(&c);
        } else {
            expect_diag(&c, "t.tl:769:5: error: 'k256' makes this file's kernel number 257: one file compiles to at "
                            "most 256 kernels (a function's 'with Kernel' blocks count one each)");
            assert_null(strstr(out(&c), "'k257'")); /* once */
        }
        done(&c);
        tlc_sb_free(&sb);
    }
    /* and at most TLRT_MAX_FUNCTIONS functions of several kernels */
    tlc_sb_init(&sb);
    for (int i = 0; i < 65; i++)
        tlc_sb_printf(&sb, "def f%d(A: Tensor[(4,), float32]):\n    with Kernel(1) as bx:\n        A[0] = 1.0\n"
                           "    with Kernel(1) as bx:\n        A[1] = 1.0\n", i);
    ctx c;
    run(&c, tlc_sb_cstr(&sb));
    expect_diag(&c, "t.tl:321:5: error: 'f64' is this file's function number 65: one file holds at most 64 "
                    "functions of several kernels");
    done(&c);
    tlc_sb_free(&sb);
}

static void test_assignment_rules(void **state) {
    (void)state;
    ctx c;
    run_body(&c,
        "        for i in serial(4):\n"     /* 4 */
        "            i = 2\n"               /* 5 */
        "        A = 3\n"                   /* 6 */
        "        bm = 32\n"                 /* 7 */
        "        bx += 1\n"                 /* 8 */
        "        x = 1.5\n"                 /* 9 */
        "        if x:\n"                   /* 10 */
        "            pass\n"
        "        while n > 0:\n"            /* 12 */
        "            pass\n"
        "        for j in n:\n"             /* 14 */
        "            pass\n"
        "        for a, b in Parallel(4):\n" /* 16 */
        "            pass\n");
    expect_diag(&c, "t.tl:5:13: error: cannot assign to loop variable 'i'");
    expect_diag(&c, "t.tl:4:13: note: 'i' declared here as a loop variable");
    expect_diag(&c, "t.tl:6:9: error: cannot assign to tensor parameter 'A'");
    expect_diag(&c, "t.tl:2:7: note: 'A' declared here as a tensor parameter");
    expect_diag(&c, "t.tl:7:9: error: cannot assign to compile-time parameter 'bm'");
    expect_diag(&c, "t.tl:8:9: error: cannot assign to block index 'bx'");
    expect_diag(&c, "t.tl:10:12: error: the condition of 'if' must be bool or int, got float32");
    expect_diag(&c, "t.tl:12:17: error: this while loop never ends once it starts: its body changes nothing its "
                    "condition reads, and has no 'break'");
    expect_diag(&c, "t.tl:14:18: error: a for loop must iterate over Parallel(...)");
    expect_diag(&c, "t.tl:16:13: error: Parallel has 1 extent but the loop has 2 variables");
    done(&c);
}

static void test_type_errors(void **state) {
    (void)state;
    ctx c;
    run_body(&c,
        "        S = alloc_shared((64, 64), dtype)\n"   /* 4 */
        "        x = S + 1\n"                           /* 5 */
        "        y = 1.5 // 2\n"                        /* 6 */
        "        z = A[0.5, 0]\n"                       /* 7 */
        "        w = A[0]\n"                            /* 8 */
        "        fill(S, float16)\n"                    /* 9 */
        "        v = infinity(int32)\n"                 /* 10 */
        "        S2 = alloc_shared((64, 64), \"float64\")\n" /* 11 */
        "        gemm(S, S, S, policy=GemmWarpPolicy.Diagonal)\n"); /* 12 */
    expect_diag(&c, "t.tl:5:13: error: buffer 'S' used as a scalar value");
    expect_diag(&c, "t.tl:6:17: error: '//' needs integer operands, got float32 and int32");
    expect_diag(&c, "t.tl:7:15: error: index must be an integer, got float32");
    expect_diag(&c, "t.tl:8:13: error: 'A' has 2 dimensions but 1 index was given");
    expect_diag(&c, "t.tl:9:17: error: expected a number, got the dtype float16");
    expect_diag(&c, "t.tl:10:22: error: infinity() needs a floating-point dtype, got int32");
    expect_diag(&c, "t.tl:11:37: error: 'float64' is a TileLang dtype tlc does not support; use float32");
    expect_diag(&c, "error: unknown warp policy 'Diagonal'");
    done(&c);
}

static void test_prefixes_and_misc(void **state) {
    (void)state;
    ctx c;
    const char *src =
        "import tilelang\n"
        "import tilelang.language as T\n"
        "from tilelang import language\n"
        "N = 64\n"
        "@tilelang.jit(out_dtype=\"bfloat16\")\n"
        "@T.prim_func\n"
        "def f(X: T.Buffer((N, N), \"float16\"), Y: tilelang.language.Tensor[(N,), out_dtype], eps: T.float32):\n"
        "    \"\"\"docstring\"\"\"\n"
        "    scale = (1.0 / N) ** 0.5\n"
        "    with tl.Kernel(1, threads=32) as (bx,):\n"
        "        acc = tilelang.language.alloc_fragment([N], T.float32)\n"
        "        cnt: int32 = 0\n"
        "        a, b = 1, 2.5\n"
        "        for i in T.Parallel(N):\n"
        "            v = float32(X[i, 0]) if i < 3 and bx == 0 or not (i > 5) else T.cast(X[i, 1], \"float32\")\n"
        "            acc[i] = T.if_then_else(v > eps, v * scale, -v) + a\n"
        "        for k in range(N):\n"
        "            cnt += k % 3\n"
        "        T.copy(acc, Y)\n";
    tlc_define d[] = {{"N", "32"}};
    tlc_sema_options o = {.arch = TLC_SM90A, .defines = d, .ndefines = 1};
    tir_module *m = run_opts(&c, src, &o);
    EXPECT_OK(&c);
    tir_kernel *k = m->kernels[0];
    assert_int_equal(k->nparams, 3);
    assert_int_equal(k->params[2].kind, TIR_PARAM_SCALAR);
    assert_int_equal(k->params[2].var->dtype, TIR_F32);
    assert_int_equal(tir_buffer_dim(k->buffers[0], 0), 32); /* module constant overridden by -D */
    assert_int_equal(k->buffers[1]->dtype, TIR_BF16);
    assert_int_equal(k->nconsts, 1);
    tir_stmt **s = k->body->u.seq.stmts;
    assert_int_equal(s[0]->kind, TS_ALLOC);
    assert_int_equal(s[1]->kind, TS_LET); /* cnt is reassigned below: a variable */
    assert_int_equal(s[1]->u.let.var->dtype, TIR_I32);
    assert_int_equal(s[2]->kind, TS_FOR);
    tir_stmt *let_v = s[2]->u.for_.body->u.seq.stmts[0];
    assert_int_equal(let_v->kind, TS_LET);
    assert_int_equal(let_v->u.let.value->kind, TE_SELECT);
    assert_int_equal(s[3]->kind, TS_FOR);
    assert_int_equal(s[3]->u.for_.body->u.seq.stmts[0]->kind, TS_ASSIGN);
    assert_int_equal(s[4]->kind, TS_COPY);
    done(&c);

    /* a tensor type that is not one, a bad decorator, a bad -D on a dim */
    const char *bad =
        "@cuda.jit\n"
        "def f(X: Tensor[(M, 4)], n: int33):\n"
        "    with Kernel(1) as bx:\n"
        "        y = X[0, 0] + n\n";
    run(&c, bad);
    expect_diag(&c, "t.tl:1:1: error: unknown decorator 'cuda.jit'");
    expect_diag(&c, "t.tl:2:10: error: a tensor type is written Tensor[(dims...), dtype]");
    expect_diag(&c, "t.tl:2:29: error: unknown name 'int33'");
    assert_int_equal(c.diag.errors, 3);
    done(&c);
}

static void test_no_crash_on_odd_input(void **state) {
    (void)state;
    ctx c;
    /* deep expression: either parsed and analysed, or diagnosed */
    char *src = malloc(40000);
    strcpy(src, "def f(A: Tensor[(4,), float32]):\n    with Kernel(1) as bx:\n        x = ");
    for (int i = 0; i < 300; i++) strcat(src, "(1 + ");
    strcat(src, "1");
    for (int i = 0; i < 300; i++) strcat(src, ")");
    strcat(src, "\n");
    tlc_arena_init(&c.arena);
    c.src = (tlc_source){"t.tl", src, strlen(src)};
    tlc_diag_init(&c.diag, &c.src);
    ast_module *am = tlc_parse(&c.src, &c.arena, &c.diag);
    if (am && !c.diag.errors) {
        tlc_sema_options o = {.arch = TLC_SM90A};
        tir_module *m = tlc_sema(am, &o, &c.arena, &c.diag);
        assert_true(m != NULL || c.diag.errors > 0);
    }
    done(&c);
    free(src);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_kernel),
        cmocka_unit_test(test_defines),
        cmocka_unit_test(test_scalars_and_types),
        cmocka_unit_test(test_regions_and_loops),
        cmocka_unit_test(test_shared_rounding_and_kernels),
        cmocka_unit_test(test_names_and_arity),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_scope_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_kernel_count_limit),
        cmocka_unit_test(test_assignment_rules),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_prefixes_and_misc),
        cmocka_unit_test(test_no_crash_on_odd_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
