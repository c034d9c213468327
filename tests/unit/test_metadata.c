/* Kernel metadata (include/tlc/metadata.h): round trip through the writer
 * and parser, grid expressions, and malformed / truncated / garbage input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tlc/metadata.h"
#include "ir/tir.h"

/* Codegen maps tir_dtype to tlrt_dtype by value: keep the two in step. */
_Static_assert((int)TIR_F16 == (int)TLRT_F16 && (int)TIR_BF16 == (int)TLRT_BF16 && (int)TIR_F32 == (int)TLRT_F32 &&
                   (int)TIR_F8E4M3 == (int)TLRT_F8E4M3 && (int)TIR_I8 == (int)TLRT_I8 &&
                   (int)TIR_I32 == (int)TLRT_I32 && (int)TIR_I64 == (int)TLRT_I64 &&
                   (int)TIR_BOOL == (int)TLRT_BOOL && (int)TIR_F8E5M2 == (int)TLRT_F8E5M2 &&
                   (int)TIR_DTYPE_COUNT == (int)TLRT_DTYPE_COUNT,
               "tlrt_dtype and tir_dtype differ");

static const char *SAMPLE =
    ".version 8.0\n"
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel rmsnorm_fwd\n"
    "// tlc.meta sym M\n"
    "// tlc.meta tensor X float16 [M,4096] align=16\n"
    "// tlc.meta tensor Y float16 [M,4096] align=16\n"
    "// tlc.meta scalar eps float32\n"
    "// tlc.meta scalar rows_per_block int32\n"
    "// tlc.meta tmap X box=[64,64] estrides=[1,1] swizzle=128B l2=128B oob=zero\n"
    "// tlc.meta grid (ceildiv M rows_per_block) 1 (max 1 (// M 7))\n"
    "// tlc.meta threads 128 1 1\n"
    "// tlc.meta smem 1024\n"
    "// tlc.meta kernel second\n"
    "// tlc.meta scalar n int64\n"
    "// tlc.meta grid n 2 3\n"
    "// tlc.meta threads 32 4 1\n"
    "// tlc.meta end\n"
    ".target sm_90a\n";

static void parse_sample(void **state) {
    (void)state;
    tlrt_module_meta m;
    char err[256];
    assert_true(tlrt_meta_parse(SAMPLE, strlen(SAMPLE), &m, err, sizeof err));
    assert_int_equal(m.version, 1);
    assert_string_equal(m.tlc_version, "0.1.0");
    assert_string_equal(m.arch, "sm_90a");
    assert_int_equal(m.nkernels, 2);
    const tlrt_kernel_meta *k = tlrt_meta_find(&m, "rmsnorm_fwd");
    assert_non_null(k);
    assert_int_equal(k->nsyms, 1);
    assert_string_equal(k->syms[0], "M");
    assert_int_equal(k->nparams, 4);
    assert_string_equal(k->params[0].name, "X");
    assert_int_equal(k->params[0].kind, TLRT_PARAM_TENSOR);
    assert_int_equal(k->params[0].dtype, TLRT_F16);
    assert_int_equal(k->params[0].rank, 2);
    assert_int_equal(k->params[0].dim_sym[0], 0);
    assert_int_equal(k->params[0].dim_sym[1], -1);
    assert_int_equal(k->params[0].dims[1], 4096);
    assert_int_equal(k->params[0].align, 16);
    assert_int_equal(k->params[2].kind, TLRT_PARAM_SCALAR);
    assert_int_equal(k->params[2].dtype, TLRT_F32);
    assert_int_equal(k->ntmaps, 1);
    assert_int_equal(k->tmaps[0].param, 0);
    assert_int_equal(k->tmaps[0].box[0], 64);
    assert_int_equal(k->tmaps[0].swizzle, TLRT_SWIZZLE_128B);
    assert_int_equal(k->tmaps[0].l2, TLRT_L2_128B);
    assert_int_equal(k->threads[0], 128);
    assert_int_equal(k->smem_bytes, 1024);
    int64_t syms[TLRT_MAX_SYMS] = {1000}, scalars[TLRT_MAX_PARAMS] = {0};
    scalars[3] = 3;
    int64_t v;
    assert_true(tlrt_expr_eval(&k->grid[0], syms, scalars, &v, err, sizeof err));
    assert_int_equal(v, 334);
    assert_true(tlrt_expr_eval(&k->grid[1], syms, scalars, &v, err, sizeof err));
    assert_int_equal(v, 1);
    assert_true(tlrt_expr_eval(&k->grid[2], syms, scalars, &v, err, sizeof err));
    assert_int_equal(v, 142);
    const tlrt_kernel_meta *k2 = tlrt_meta_find(&m, "second");
    assert_non_null(k2);
    assert_int_equal(k2->threads[1], 4);
    assert_int_equal(k2->smem_bytes, 0);
    assert_null(tlrt_meta_find(&m, "third"));
    tlrt_meta_free(&m);
}

/* Grid and check lines are read as expressions from their text, however
 * many words they have (a line's other directives take at most 16). */
static void long_expression_lines(void **state) {
    (void)state;
    static const char text[] =
        "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
        "// tlc.meta kernel k\n"
        "// tlc.meta sym h\n"
        "// tlc.meta sym d\n"
        "// tlc.meta sym s\n"
        "// tlc.meta tensor X float16 [h,d,s] align=16\n"
        "// tlc.meta grid h (* (// (+ d 63) 64) (// (+ s 63) 64)) (* h (- 0 (// (- 0 s) 256)))\n"
        "// tlc.meta threads 128 1 1\n"
        "// tlc.meta check 3:4 (== (% (// (+ s 255) 256) (min 8 (// (+ s 255) 256))) 0)\n"
        "// tlc.meta end\n";
    tlrt_module_meta m;
    char err[256];
    assert_true(tlrt_meta_parse(text, strlen(text), &m, err, sizeof err));
    const tlrt_kernel_meta *k = tlrt_meta_find(&m, "k");
    assert_non_null(k);
    int64_t syms[TLRT_MAX_SYMS] = {3, 130, 1000}, scalars[TLRT_MAX_PARAMS] = {0}, v;
    assert_true(tlrt_expr_eval(&k->grid[1], syms, scalars, &v, err, sizeof err));
    assert_int_equal(v, 3 * 16);
    assert_true(tlrt_expr_eval(&k->grid[2], syms, scalars, &v, err, sizeof err));
    assert_int_equal(v, 3 * 4);
    assert_int_equal(k->nchecks, 1);
    tlrt_meta_free(&m);
    /* any other directive still has at most 16 words */
    static const char many[] =
        "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
        "// tlc.meta kernel k\n"
        "// tlc.meta threads 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"
        "// tlc.meta end\n";
    assert_false(tlrt_meta_parse(many, strlen(many), &m, err, sizeof err));
    assert_non_null(strstr(err, "too many words"));
}

/* Writer output parses back to the same structs, and re-renders identically. */
static void round_trip(void **state) {
    (void)state;
    tlrt_module_meta m = {.version = 1};
    strcpy(m.tlc_version, "0.1.0");
    strcpy(m.arch, "sm_80");
    tlrt_kernel_meta k;
    tlrt_kernel_meta_init(&k, "gemm_kernel");
    assert_int_equal(tlrt_kernel_meta_add_sym(&k, "M"), 0);
    assert_int_equal(tlrt_kernel_meta_add_sym(&k, "N"), 1);
    int64_t a_dims[] = {-1, 256}, b_dims[] = {256, -2}, c_dims[] = {-1, -2};
    assert_int_equal(tlrt_kernel_meta_add_tensor(&k, "A", TLRT_BF16, 2, a_dims, 16), 0);
    assert_int_equal(tlrt_kernel_meta_add_tensor(&k, "B", TLRT_BF16, 2, b_dims, 16), 1);
    assert_int_equal(tlrt_kernel_meta_add_tensor(&k, "C", TLRT_F32, 2, c_dims, 4), 2);
    assert_int_equal(tlrt_kernel_meta_add_scalar(&k, "split", TLRT_I32), 3);
    char err[256];
    assert_true(tlrt_expr_parse("(ceildiv N 128)", &k, &k.grid[0], err, sizeof err));
    assert_true(tlrt_expr_parse("(* (ceildiv M 128) split)", &k, &k.grid[1], err, sizeof err));
    k.grid[2].n = 0;
    assert_true(tlrt_expr_push(&k.grid[2], TLRT_EX_INT, 7));
    assert_true(tlrt_expr_push(&k.grid[2], TLRT_EX_SYM, 0));
    assert_true(tlrt_expr_push(&k.grid[2], TLRT_EX_MOD, 0));
    k.threads[0] = 256;
    k.smem_bytes = 98304;
    k.pdl = true;
    k.ntmaps = 1;
    k.tmaps[0] = (tlrt_tmap_meta){.param = 1, .rank = 2, .box = {64, 64}, .elem_strides = {1, 1},
                                  .swizzle = TLRT_SWIZZLE_128B, .l2 = TLRT_L2_256B, .oob = TLRT_OOB_NAN};
    m.nkernels = 1;
    m.kernels = &k;
    char *text = tlrt_meta_format(&m, err, sizeof err);
    assert_non_null(text);
    assert_non_null(strstr(text, "// tlc.meta grid (ceildiv N 128) (* (ceildiv M 128) split) (% 7 M)\n"));
    assert_non_null(strstr(text, "// tlc.meta tensor B bfloat16 [256,N] align=16\n"));
    tlrt_module_meta back;
    assert_true(tlrt_meta_parse(text, strlen(text), &back, err, sizeof err));
    assert_int_equal(back.nkernels, 1);
    const tlrt_kernel_meta *b = &back.kernels[0];
    assert_string_equal(b->name, "gemm_kernel");
    assert_int_equal(b->nparams, 4);
    assert_int_equal(b->params[2].align, 4);
    assert_int_equal(b->params[1].dim_sym[1], 1);
    assert_int_equal(b->tmaps[0].oob, TLRT_OOB_NAN);
    assert_int_equal(b->smem_bytes, 98304);
    assert_true(b->pdl);
    assert_non_null(strstr(text, "// tlc.meta pdl\n"));
    for (int a = 0; a < 3; a++) {
        assert_int_equal(b->grid[a].n, k.grid[a].n);
        assert_memory_equal(b->grid[a].nodes, k.grid[a].nodes, sizeof(tlrt_expr_node) * (size_t)k.grid[a].n);
    }
    char *again = tlrt_meta_format(&back, err, sizeof err);
    assert_non_null(again);
    assert_string_equal(text, again);
    free(again);
    free(text);
    tlrt_meta_free(&back);

    /* The writer refuses invalid metadata instead of emitting it. */
    k.threads[0] = 2048;
    assert_null(tlrt_meta_format(&m, err, sizeof err));
    assert_non_null(strstr(err, "threads"));
}

static void expressions(void **state) {
    (void)state;
    tlrt_kernel_meta k;
    tlrt_kernel_meta_init(&k, "k");
    tlrt_kernel_meta_add_sym(&k, "N");
    int64_t dims[] = {-1};
    tlrt_kernel_meta_add_tensor(&k, "x", TLRT_F32, 1, dims, 16);
    tlrt_kernel_meta_add_scalar(&k, "s", TLRT_I64);
    tlrt_kernel_meta_add_scalar(&k, "f", TLRT_F32);
    struct { const char *text; int64_t n, s, want; } ok[] = {
        {"(ceildiv N 4)", 9, 0, 3},      {"(ceildiv N 4)", 8, 0, 2},   {"(// N 4)", -9, 0, -3},
        {"(% N 4)", -9, 0, 3},           {"(% N -4)", 9, 0, -3},       {"(ceildiv N -4)", 9, 0, -2},
        {"(min N s)", 5, 3, 3},          {"(max N s)", 5, 3, 5},       {"(- (* N 2) s)", 5, 3, 7},
        {"  ( +   N   1 )  ", 1, 0, 2},  {"42", 0, 0, 42},             {"-5", 0, 0, -5},
    };
    char err[256];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tlrt_expr e;
        assert_true(tlrt_expr_parse(ok[i].text, &k, &e, err, sizeof err));
        assert_true(tlrt_expr_check(&e, &k, err, sizeof err));
        int64_t syms[TLRT_MAX_SYMS] = {ok[i].n}, sc[TLRT_MAX_PARAMS] = {0, ok[i].s}, v;
        assert_true(tlrt_expr_eval(&e, syms, sc, &v, err, sizeof err));
        if (v != ok[i].want) fail_msg("%s: got %lld want %lld", ok[i].text, (long long)v, (long long)ok[i].want);
    }
    const char *bad[] = {"", "(", ")", "(+ N)", "(+ N 1 2)", "(pow N 2)", "(+ N 1", "M", "f", "x",
                         "(+ N 1))", "99999999999999999999", "1x", "((+ 1 2) 3)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tlrt_expr e;
        err[0] = 0;
        if (tlrt_expr_parse(bad[i], &k, &e, err, sizeof err)) fail_msg("accepted bad expression '%s'", bad[i]);
        assert_true(err[0] != 0);
    }
    /* one node past the limit, and the limit itself: 2n + 1 nodes */
    for (int n = TLRT_MAX_EXPR / 2; n >= TLRT_MAX_EXPR / 2 - 1; n--) {
        char text[8 * TLRT_MAX_EXPR];
        size_t o = 0;
        for (int i = 0; i < n; i++) o += (size_t)snprintf(text + o, sizeof text - o, "(+ ");
        o += (size_t)snprintf(text + o, sizeof text - o, "1");
        for (int i = 0; i < n; i++) o += (size_t)snprintf(text + o, sizeof text - o, " 1)");
        tlrt_expr e;
        bool ok = tlrt_expr_parse(text, &k, &e, err, sizeof err);
        if (ok != (2 * n + 1 <= TLRT_MAX_EXPR)) fail_msg("%d nodes: parse gave %d", 2 * n + 1, (int)ok);
    }
    /* Evaluation errors. */
    tlrt_expr e;
    int64_t syms[TLRT_MAX_SYMS] = {0}, sc[TLRT_MAX_PARAMS] = {0}, v;
    assert_true(tlrt_expr_parse("(// 5 N)", &k, &e, err, sizeof err));
    assert_false(tlrt_expr_eval(&e, syms, sc, &v, err, sizeof err));
    assert_non_null(strstr(err, "division by zero"));
    syms[0] = INT64_MAX;
    assert_true(tlrt_expr_parse("(* N 2)", &k, &e, err, sizeof err));
    assert_false(tlrt_expr_eval(&e, syms, sc, &v, err, sizeof err));
    assert_non_null(strstr(err, "overflow"));
    /* Hand-built malformed postfix is caught by check and eval. */
    e.n = 2;
    e.nodes[0] = (tlrt_expr_node){TLRT_EX_INT, 1};
    e.nodes[1] = (tlrt_expr_node){TLRT_EX_ADD, 0};
    assert_false(tlrt_expr_check(&e, &k, err, sizeof err));
    assert_false(tlrt_expr_eval(&e, syms, sc, &v, err, sizeof err));
    e.n = 1;
    e.nodes[0] = (tlrt_expr_node){TLRT_EX_SYM, 5};
    assert_false(tlrt_expr_check(&e, &k, err, sizeof err));
}

static void expect_bad(const char *body, const char *msg_part) {
    char text[4096], err[512];
    snprintf(text, sizeof text, "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n%s// tlc.meta end\n", body);
    tlrt_module_meta m;
    err[0] = 0;
    if (tlrt_meta_parse(text, strlen(text), &m, err, sizeof err)) fail_msg("accepted:\n%s", text);
    assert_int_equal(m.nkernels, 0);
    assert_null(m.kernels);
    if (!strstr(err, msg_part)) fail_msg("error '%s' lacks '%s' for:\n%s", err, msg_part, text);
}

#define K "// tlc.meta kernel k\n"
#define END "// tlc.meta grid 1 1 1\n// tlc.meta threads 32 1 1\n"

static void malformed(void **state) {
    (void)state;
    expect_bad(K "// tlc.meta sym N\n// tlc.meta tensor x float16 [N]\n" "// tlc.meta threads 32 1 1\n", "no grid");
    expect_bad(K "// tlc.meta grid 1 1 1\n", "no threads");
    expect_bad(K "// tlc.meta tensor x float16 [N]\n" END, "neither a declared sym");
    expect_bad(K "// tlc.meta sym N\n" END, "cannot be bound");
    expect_bad(K "// tlc.meta tensor x float99 [4]\n" END, "unknown dtype");
    expect_bad(K "// tlc.meta tensor x float16 [4,0]\n" END, "neither a declared sym");
    expect_bad(K "// tlc.meta tensor x float16 4\n" END, "bad dims");
    expect_bad(K "// tlc.meta tensor x float16 [1,2,3,4,5,6,7,8,9]\n" END, "bad dims");
    expect_bad(K "// tlc.meta tensor x float16 [4] align=3\n" END, "align");
    expect_bad(K "// tlc.meta tensor x float16 [4]\n// tlc.meta scalar x int32\n" END, "used twice");
    expect_bad(K "// tlc.meta tensor x float16 [4]\n// tlc.meta sym N\n" END, "before params");
    expect_bad(K "// tlc.meta scalar 9x int32\n" END, "bad param name");
    expect_bad(K "// tlc.meta grid 1 1\n// tlc.meta threads 32 1 1\n", "grid");
    expect_bad(K "// tlc.meta grid 1 1 1 1\n// tlc.meta threads 32 1 1\n", "exactly 3");
    expect_bad(K "// tlc.meta grid (+ q 1) 1 1\n// tlc.meta threads 32 1 1\n", "unknown name");
    expect_bad(K "// tlc.meta grid 1 1 1\n// tlc.meta threads 2048 1 1\n", "thread count");
    expect_bad(K "// tlc.meta grid 1 1 1\n// tlc.meta threads 64 64 1\n", "threads per block");
    expect_bad(K "// tlc.meta grid 1 1 1\n// tlc.meta grid 1 1 1\n// tlc.meta threads 1 1 1\n", "second grid");
    expect_bad(K END "// tlc.meta smem -1\n", "smem");
    expect_bad(K END "// tlc.meta smem 999999999\n", "smem");
    expect_bad(K END "// tlc.meta frobnicate 3\n", "unknown directive");
    expect_bad(K END "// tlc.meta pdl\n// tlc.meta pdl\n", "second pdl");
    expect_bad(K END "// tlc.meta pdl 1\n", "after 'pdl'");
    expect_bad(K END K END, "described twice");
    expect_bad("// tlc.meta sym N\n", "outside a kernel");
    expect_bad("// tlc.meta kernel bad-name\n" END, "bad kernel name");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap y box=[8,8]\n" END, "no such tensor");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8]\n" END, "rank 1");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,8,8,8,8,8]\n" END, "bad box");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,8] estrides=[1]\n" END, "differ");
    /* view and im2col lines: after their tmap line, the right count, mode=im2col and its line together */
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta view 64 64\n" END, "follow the tmap");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,8,8]\n// tlc.meta view 8 8\n" END,
               "one per box entry");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,8]\n// tlc.meta view 8 8\n"
               "// tlc.meta view 8 8\n" END, "second view");
    expect_bad(K "// tlc.meta tensor x float16 [4,4,4,64]\n// tlc.meta tmap x box=[1,1,8,8] mode=im2col\n" END,
               "without its im2col line");
    expect_bad(K "// tlc.meta tensor x float16 [4,4,4,64]\n// tlc.meta tmap x box=[1,1,8,8]\n"
               "// tlc.meta im2col -1 -1 2\n" END, "mode=im2col");
    expect_bad(K "// tlc.meta tensor x float16 [4,4,4,64]\n// tlc.meta tmap x box=[1,2,8,8] mode=im2col\n"
               "// tlc.meta im2col -1 -1 2\n" END, "[1,..,1,PIXELS,CHANNELS]");
    expect_bad(K "// tlc.meta tensor x float16 [4,64]\n// tlc.meta tmap x box=[8,8] mode=im2col\n"
               "// tlc.meta im2col -1 -1 2\n" END, "rank 3..5");
    expect_bad(K "// tlc.meta tensor x float16 [4,4,4,64]\n// tlc.meta tmap x box=[1,1,8,8] mode=im2col\n"
               "// tlc.meta im2col -1 -1\n" END, "im2col");
    expect_bad(K "// tlc.meta tensor x float16 [4,4,4,64]\n// tlc.meta tmap x box=[1,1,8,8] mode=diagonal\n" END,
               "bad tmap mode");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,4]\n" END, "multiple of 16");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,128] swizzle=128B\n" END,
               "swizzle span");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,300]\n" END, "1..256");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,8] swizzle=7B\n" END, "swizzle");
    expect_bad(K "// tlc.meta tensor x int32 [64,64]\n// tlc.meta tmap x box=[8,8] oob=nan\n" END, "floating");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x\n" END, "no box");
    expect_bad(K "// tlc.meta tensor x float16 [64,64]\n// tlc.meta tmap x box=[8,8] colour=red\n" END, "unknown tmap key");

    char err[256];
    tlrt_module_meta m;
    const char *bad_headers[] = {
        "// tlc.meta v2 tlc=0.1.0 arch=sm_90a\n// tlc.meta end\n",
        "// tlc.meta v1 arch=sm_90a\n// tlc.meta end\n",
        "// tlc.meta v1 tlc=0.1.0 arch=gfx90a\n// tlc.meta end\n",
        "// tlc.meta kernel k\n// tlc.meta end\n",
        "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n// tlc.meta end\n// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n",
        "no metadata here\n",
        "",
    };
    for (size_t i = 0; i < sizeof bad_headers / sizeof bad_headers[0]; i++)
        if (tlrt_meta_parse(bad_headers[i], strlen(bad_headers[i]), &m, err, sizeof err))
            fail_msg("accepted header case %zu", i);
    assert_false(tlrt_meta_parse(NULL, 0, &m, err, sizeof err));
    assert_string_equal(err, "no tlc.meta block");
    /* Line numbers point at the offending line of the whole file. */
    const char *t = "line1\nline2\n// tlc.meta v1 tlc=0.1.0 arch=sm_80\n// tlc.meta kernel k\n// tlc.meta bogus\n";
    assert_false(tlrt_meta_parse(t, strlen(t), &m, err, sizeof err));
    assert_non_null(strstr(err, "tlc.meta line 5:"));
    /* A NUL byte inside a metadata line. */
    const char nul[] = "// tlc.meta v1 tlc=0.1.0 arch=sm_80\n// tlc.meta kern\0el k\n// tlc.meta end\n";
    assert_false(tlrt_meta_parse(nul, sizeof nul - 1, &m, err, sizeof err));
    assert_non_null(strstr(err, "NUL"));
    /* CRLF line ends are fine. */
    const char *crlf = "// tlc.meta v1 tlc=0.1.0 arch=sm_80\r\n// tlc.meta kernel k\r\n// tlc.meta grid 1 1 1\r\n"
                       "// tlc.meta threads 1 1 1\r\n// tlc.meta end\r\n";
    assert_true(tlrt_meta_parse(crlf, strlen(crlf), &m, err, sizeof err));
    tlrt_meta_free(&m);
}

/* Every truncation of the sample either fails (the block is cut before
 * 'end') or, once 'end' is in, succeeds; never crashes. */
static void truncations(void **state) {
    (void)state;
    size_t n = strlen(SAMPLE);
    const char *end_line = strstr(SAMPLE, "// tlc.meta end\n");
    size_t complete = (size_t)(end_line - SAMPLE) + strlen("// tlc.meta end");
    char err[256];
    for (size_t len = 0; len <= n; len++) {
        char *copy = malloc(len ? len : 1); /* exact size: ASan catches reads past len */
        memcpy(copy, SAMPLE, len);
        tlrt_module_meta m;
        bool ok = tlrt_meta_parse(copy, len, &m, err, sizeof err);
        if (ok != (len >= complete)) fail_msg("truncation at %zu: parse %s (%s)", len, ok ? "succeeded" : "failed", err);
        if (ok) assert_int_equal(m.nkernels, 2);
        tlrt_meta_free(&m);
        free(copy);
    }
}

/* Random byte edits: parse must not crash; whatever it accepts must format
 * and parse back. */
static void garbage(void **state) {
    (void)state;
    size_t n = strlen(SAMPLE);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    static const char alphabet[] = "()[],= \n\t\r-0123456789aMXNz/.%+*_\x00\xff";
    char err[256];
    int accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char *copy = malloc(n);
        memcpy(copy, SAMPLE, n);
        int edits = 1 + (int)(rng % 4);
        for (int e = 0; e < edits; e++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t pos = (size_t)(rng >> 33) % n;
            copy[pos] = alphabet[(rng >> 20) % (sizeof alphabet - 1)];
        }
        tlrt_module_meta m;
        if (tlrt_meta_parse(copy, n, &m, err, sizeof err)) {
            accepted++;
            char *text = tlrt_meta_format(&m, err, sizeof err);
            if (!text) fail_msg("accepted metadata does not format: %s", err);
            tlrt_module_meta again;
            if (!tlrt_meta_parse(text, strlen(text), &again, err, sizeof err)) fail_msg("reformatted text fails: %s\n%s", err, text);
            assert_int_equal(again.nkernels, m.nkernels);
            tlrt_meta_free(&again);
            free(text);
        } else {
            assert_true(err[0] != 0);
        }
        tlrt_meta_free(&m);
        free(copy);
    }
    print_message("garbage: %d of 20000 mutants were still valid metadata\n", accepted);
}

/* A function of two kernels (dsl-examples/split_logsumexp.tl's shape). */
#define FN_KERNELS                                                                              \
    "// tlc.meta kernel f_k0\n// tlc.meta sym M\n// tlc.meta tensor X float32 [M,64] align=16\n"     \
    "// tlc.meta scalar s float32\n// tlc.meta tensor w float32 [4,M] align=16\n"                     \
    "// tlc.meta grid M 1 1\n// tlc.meta threads 64 1 1\n"                                          \
    "// tlc.meta kernel f_k1\n// tlc.meta sym M\n// tlc.meta tensor Y float32 [M] align=16\n"        \
    "// tlc.meta tensor w float32 [4,M] align=16\n// tlc.meta grid M 1 1\n// tlc.meta threads 64 1 1\n"
#define FN_HEAD                                                                                 \
    "// tlc.meta function f\n// tlc.meta sym M\n// tlc.meta tensor X float32 [M,64] align=16\n"     \
    "// tlc.meta tensor Y float32 [M] align=16\n// tlc.meta scalar s float32\n"

static void functions(void **state) {
    (void)state;
    const char *text = "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n" FN_KERNELS FN_HEAD
                       "// tlc.meta workspace w float32 [4,M]\n// tlc.meta launch f_k0\n// tlc.meta launch f_k1\n"
                       "// tlc.meta check 3:5 (> M 0)\n// tlc.meta end\n";
    tlrt_module_meta m;
    char err[512];
    if (!tlrt_meta_parse(text, strlen(text), &m, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(m.nkernels, 2);
    assert_int_equal(m.nfunctions, 1);
    const tlrt_function_meta *f = tlrt_meta_find_function(&m, "f");
    assert_non_null(f);
    assert_null(tlrt_meta_find_function(&m, "f_k0"));
    assert_int_equal(f->sig.nparams, 3);
    assert_int_equal(f->sig.nchecks, 1);
    assert_int_equal(f->nworkspaces, 1);
    assert_string_equal(f->workspaces[0].name, "w");
    assert_int_equal(f->workspaces[0].rank, 2);
    assert_int_equal(f->workspaces[0].dims[0], 4);
    assert_int_equal(f->workspaces[0].dim_sym[1], 0);
    assert_int_equal(f->nlaunches, 2);
    assert_int_equal(f->launches[0], 0);
    assert_int_equal(f->launches[1], 1);
    /* written back the same, and read again the same */
    char *out = tlrt_meta_format(&m, err, sizeof err);
    if (!out) fail_msg("%s", err);
    assert_non_null(strstr(out, "// tlc.meta function f\n"));
    assert_non_null(strstr(out, "// tlc.meta workspace w float32 [4,M]\n"));
    tlrt_module_meta again;
    assert_true(tlrt_meta_parse(out, strlen(out), &again, err, sizeof err));
    char *out2 = tlrt_meta_format(&again, err, sizeof err);
    assert_string_equal(out, out2);
    free(out);
    free(out2);
    tlrt_meta_free(&again);
    tlrt_meta_free(&m);

    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta launch f_k0\n", "neither a parameter nor a workspace");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta workspace w float16 [4,M]\n// tlc.meta launch f_k0\n",
               "not of the same kind");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta workspace w float32 [4,64]\n// tlc.meta launch f_k1\n",
               "not of the same kind");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta workspace w float32 [4,M]\n", "launch lines");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta launch g\n", "no kernel 'g' before");
    expect_bad(FN_HEAD "// tlc.meta launch f_k0\n" FN_KERNELS, "no kernel 'f_k0' before");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta workspace X float32 [4]\n// tlc.meta launch f_k0\n", "repeated name");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta workspace v float32 [K]\n", "neither a declared sym");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta workspace v float99 [4]\n", "unknown dtype");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta grid 1 1 1\n", "in a function");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta tmap X box=[8,8]\n", "in a function");
    expect_bad(FN_KERNELS "// tlc.meta workspace v float32 [4]\n", "outside a function");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta launch f_k0\n// tlc.meta workspace w float32 [4,M]\n", "before the launch");
    expect_bad(FN_KERNELS FN_HEAD "// tlc.meta workspace w float32 [4,M]\n// tlc.meta launch f_k0\n" FN_HEAD
               "// tlc.meta workspace w float32 [4,M]\n// tlc.meta launch f_k0\n", "described twice");
    expect_bad(FN_KERNELS "// tlc.meta function 9f\n", "bad function name");
}

static void dtypes(void **state) {
    (void)state;
    for (int i = 0; i < TLRT_DTYPE_COUNT; i++) {
        tlrt_dtype t;
        assert_true(tlrt_dtype_parse(tlrt_dtype_name((tlrt_dtype)i), &t));
        assert_int_equal(t, i);
        assert_true(tlrt_dtype_bytes((tlrt_dtype)i) > 0);
    }
    tlrt_dtype t;
    assert_false(tlrt_dtype_parse("half", &t));
    assert_string_equal(tlrt_dtype_name((tlrt_dtype)99), "?");
    assert_int_equal(tlrt_dtype_bytes(TLRT_BF16), 2);
    assert_true(tlrt_dtype_is_int(TLRT_BOOL));
    assert_false(tlrt_dtype_is_int(TLRT_F8E4M3));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_sample),
        cmocka_unit_test(long_expression_lines), cmocka_unit_test(round_trip),  cmocka_unit_test(expressions),
        cmocka_unit_test(malformed),    cmocka_unit_test(truncations), cmocka_unit_test(garbage),
        cmocka_unit_test(dtypes),       cmocka_unit_test(functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
