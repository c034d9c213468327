/* The compile pipeline (api/compile.h): stages, options, diagnostics, the
 * verifier on IR produced by sema and then corrupted, the optimization
 * level and the stage times, and independent compilations running on
 * several threads at once. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "api/compile.h"
#include "api/compile_backend.h"

static const char *gemm_src =
    "@jit(bm=64, bn=64, bk=32)\n"
    "def mm(A: Tensor[(M, K), float16], B: Tensor[(K, N), float16], C: Tensor[(M, N), float32]):\n"
    "    with Kernel(ceildiv(N, bn), ceildiv(M, bm), threads=128) as (bx, by):\n"
    "        A_s = alloc_shared((bm, bk), float16)\n"
    "        B_s = alloc_shared((bk, bn), float16)\n"
    "        C_f = alloc_fragment((bm, bn), float32)\n"
    "        clear(C_f)\n"
    "        for ko in Pipelined(ceildiv(K, bk), num_stages=2):\n"
    "            copy(A[by * bm, ko * bk], A_s)\n"
    "            copy(B[ko * bk, bx * bn], B_s)\n"
    "            gemm(A_s, B_s, C_f)\n"
    "        for i, j in Parallel(bm, bn):\n"
    "            C_f[i, j] = max(C_f[i, j], 0)\n"
    "        copy(C_f, C[by * bm, bx * bn])\n";

static bool compile(tlc_compilation *c, const char *src, tlc_stage stage) {
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.stop_after = stage;
    bool ok = tlc_compile_source(c, "mm.tl", src, strlen(src), &o);
    if (!ok) print_message("%s", tlc_sb_cstr(&c->diag.out));
    return ok;
}

static void test_defaults(void **state) {
    (void)state;
    tlc_compile_options o;
    memset(&o, 0x5a, sizeof o);
    tlc_compile_options_default(&o);
    assert_int_equal(o.arch, TLC_SM90A);
    assert_int_equal(o.stop_after, TLC_STAGE_TIR);
    assert_null(o.defines);
    assert_int_equal(o.ndefines, 0);
    assert_null(o.kernel);
    assert_int_equal(o.opt_level, 3);
}

static char *ptx_at(tlc_compilation *c, int opt_level) {
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.opt_level = opt_level;
    o.backend = TLC_BACKEND_LLVM; /* the level is LLVM's */
    assert_true(tlc_compile_source(c, "mm.tl", gemm_src, strlen(gemm_src), &o));
    char *ptx = tlc_compile_ptx(c, false);
    if (!ptx) fail_msg("%s", tlc_sb_cstr(&c->diag.out));
    return ptx;
}

/* Each stage is timed once, when it runs; the level reaches LLVM. */
static void test_stage_times_and_opt_level(void **state) {
    (void)state;
    tlc_compilation c0, c3;
    assert_true(compile(&c3, gemm_src, TLC_STAGE_TIR));
    assert_true(c3.times.ran[TLC_TIMED_FRONT_END]);
    assert_false(c3.times.ran[TLC_TIMED_LAYOUT_PLAN]);
    tlc_compilation_free(&c3);

    char *ptx0 = ptx_at(&c0, 0), *ptx3 = ptx_at(&c3, 3);
    assert_string_not_equal(ptx0, ptx3);
    for (int s = TLC_TIMED_FRONT_END; s <= TLC_TIMED_CODEGEN; s++) {
        assert_true(c3.times.ran[s]);
        assert_true(c3.times.ms[s] >= 0);
    }
    assert_false(c3.times.ran[TLC_TIMED_PTXAS]);
    /* stages already run are not run (nor timed) again */
    double layout_ms = c3.times.ms[TLC_TIMED_LAYOUT_PLAN], lower_ms = c3.times.ms[TLC_TIMED_LOWER];
    assert_true(tlc_compile_layouts(&c3, NULL));
    assert_non_null(tlc_compile_thread(&c3, NULL));
    assert_true(c3.times.ms[TLC_TIMED_LAYOUT_PLAN] == layout_ms);
    assert_true(c3.times.ms[TLC_TIMED_LOWER] == lower_ms);
    double sum = 0;
    for (int s = 0; s < TLC_NTIMED; s++) sum += c3.times.ms[s];
    assert_true(tlc_stage_times_total(&c3.times) == sum);
    assert_true(sum > 0);
    tlc_compilation_free(&c0);
    tlc_compilation_free(&c3);
}

static void test_stages(void **state) {
    (void)state;
    tlc_compilation c;
    assert_true(compile(&c, gemm_src, TLC_STAGE_TOKENS));
    assert_true(c.ntokens > 50);
    assert_non_null(c.tokens);
    assert_null(c.ast);
    assert_null(c.tir);
    tlc_compilation_free(&c);

    assert_true(compile(&c, gemm_src, TLC_STAGE_AST));
    assert_non_null(c.ast);
    assert_int_equal(c.ast->nfuncs, 1);
    assert_null(c.tir);
    tlc_compilation_free(&c);

    assert_true(compile(&c, gemm_src, TLC_STAGE_TIR));
    assert_non_null(c.tir);
    assert_int_equal(c.tir->nkernels, 1);
    assert_string_equal(c.tir->kernels[0]->name, "mm");
    assert_int_equal(c.diag.errors, 0);
    tlc_compilation_free(&c);
}

/* The text is copied: the caller's buffer may go away right after. */
static void test_text_is_copied(void **state) {
    (void)state;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", gemm_src);
    tlc_compilation c;
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    assert_true(tlc_compile_source(&c, "mm.tl", buf, strlen(buf), &o));
    memset(buf, 'x', sizeof buf - 1);
    assert_string_equal(c.src.text, gemm_src);
    assert_int_equal(c.src.len, strlen(gemm_src));
    tlc_compilation_free(&c);
}

/* A NUL inside the text does not end it: the lexer sees and reports it. */
static void test_embedded_nul(void **state) {
    (void)state;
    const char text[] = "def f(\0):\n    pass\n";
    tlc_compilation c;
    assert_false(tlc_compile_source(&c, "nul.tl", text, sizeof text - 1, NULL));
    assert_int_equal(c.src.len, sizeof text - 1);
    assert_true(c.diag.errors > 0);
    assert_non_null(strstr(tlc_sb_cstr(&c.diag.out), "nul.tl:1:7: error:"));
    tlc_compilation_free(&c);
}

static void test_defines_and_arch(void **state) {
    (void)state;
    tlc_define defs[] = {{"bm", "128"}, {"bn", "256"}, {"bk", "256"}};
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.defines = defs;
    o.ndefines = 3;
    tlc_compilation c;
    /* (128 + 256) * 256 * 2 bytes = 196608: fits sm_90a's 227 KiB... */
    assert_true(tlc_compile_source(&c, "mm.tl", gemm_src, strlen(gemm_src), &o));
    assert_int_equal(c.tir->kernels[0]->shared_bytes, 196608);
    tlc_compilation_free(&c);
    /* ...but not sm_80's 163 KiB: each buffer fits on its own, so the plan
     * (which places them) says so, not sema */
    o.arch = TLC_SM80;
    assert_true(tlc_compile_source(&c, "mm.tl", gemm_src, strlen(gemm_src), &o));
    assert_false(tlc_compile_layouts(&c, NULL));
    assert_non_null(strstr(tlc_sb_cstr(&c.diag.out), "over the sm_80 limit"));
    tlc_compilation_free(&c);
}

/* ---- the verifier on sema's output ---- */

static tir_stmt *find_stmt(tir_stmt *s, tir_stmt_kind kind) {
    if (!s) return NULL;
    if (s->kind == kind) return s;
    tir_stmt *r = NULL;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n && !r; i++) r = find_stmt(s->u.seq.stmts[i], kind);
        return r;
    case TS_FOR: return find_stmt(s->u.for_.body, kind);
    case TS_IF:
        r = find_stmt(s->u.if_.then, kind);
        return r ? r : find_stmt(s->u.if_.els, kind);
    default: return NULL;
    }
}

static tir_buffer *find_buffer(tir_kernel *k, const char *name) {
    for (int i = 0; i < k->nbuffers; i++)
        if (strcmp(k->buffers[i]->name, name) == 0) return k->buffers[i];
    return NULL;
}

typedef void (*corruption)(tir_kernel *k);

static void expect_corruption_caught(corruption corrupt, const char *needle) {
    tlc_compilation c;
    assert_true(compile(&c, gemm_src, TLC_STAGE_TIR));
    tlc_diag d;
    tlc_diag_init(&d, &c.src);
    assert_true(tir_verify_module(c.tir, &d));
    corrupt(c.tir->kernels[0]);
    bool ok = tir_verify_module(c.tir, &d);
    const char *out = tlc_sb_cstr(&d.out);
    if (ok || !strstr(out, needle)) print_message("verifier said:\n%s\nexpected: %s\n", out, needle);
    assert_false(ok);
    assert_non_null(strstr(out, "internal error: invalid Tile IR in kernel 'mm'"));
    assert_non_null(strstr(out, needle));
    tlc_diag_free(&d);
    tlc_compilation_free(&c);
}

static void gemm_into_shared(tir_kernel *k) {
    find_buffer(k, "C_f")->scope = TIR_SCOPE_SHARED;
}
static void gemm_from_global(tir_kernel *k) {
    tir_stmt *g = find_stmt(k->body, TS_GEMM);
    g->u.gemm.a.buf = find_buffer(k, "A");
}
static void region_rank(tir_kernel *k) { find_stmt(k->body, TS_COPY)->u.copy.dst.rank = 1; }
static void parallel_symbolic(tir_kernel *k) {
    tir_stmt *loop = NULL;
    for (int i = 0; i < k->body->u.seq.n; i++) {
        tir_stmt *s = k->body->u.seq.stmts[i];
        if (s->kind == TS_FOR && s->u.for_.kind == TIR_FOR_PARALLEL) loop = s;
    }
    static tir_expr sym;
    sym.kind = TE_VAR;
    sym.dtype = TIR_I32;
    sym.u.var = k->sym_dims[0];
    loop->u.for_.extent[0] = &sym;
}
static void loop_var_escapes(tir_kernel *k) {
    /* the last copy (after the K loop) indexes with the K loop's variable */
    tir_stmt *pipe = find_stmt(k->body, TS_FOR);
    tir_stmt *last = k->body->u.seq.stmts[k->body->u.seq.n - 1];
    assert_int_equal(last->kind, TS_COPY);
    last->u.copy.dst.start[0]->kind = TE_VAR;
    last->u.copy.dst.start[0]->u.var = pipe->u.for_.vars[0];
}
static void buffer_ids(tir_kernel *k) { k->buffers[k->nbuffers - 1]->id = 0; }
static void pipelined_stages(tir_kernel *k) { find_stmt(k->body, TS_FOR)->u.for_.num_stages = 0; }
static void dangling_buffer(tir_kernel *k) {
    /* drop the alloc of the accumulator: it is used but never allocated */
    tir_stmt *seq = k->body;
    for (int i = 0; i < seq->u.seq.n; i++) {
        tir_stmt *s = seq->u.seq.stmts[i];
        if (s->kind == TS_ALLOC && strcmp(s->u.alloc.buf->name, "C_f") == 0) {
            memmove(&seq->u.seq.stmts[i], &seq->u.seq.stmts[i + 1], sizeof(tir_stmt *) * (size_t)(seq->u.seq.n - i - 1));
            seq->u.seq.n--;
            return;
        }
    }
    fail_msg("no alloc of C_f");
}
static void null_value(tir_kernel *k) {
    tir_stmt *st = find_stmt(k->body, TS_STORE);
    st->u.store.value = NULL;
}
static void threads_bad(tir_kernel *k) { k->threads = 100; }
static void op_row_missing(tir_kernel *k) { find_stmt(k->body, TS_GEMM)->op = NULL; }
static void op_row_wrong(tir_kernel *k) { find_stmt(k->body, TS_GEMM)->op = find_stmt(k->body, TS_COPY)->op; }

static void test_verify_sema_output(void **state) {
    (void)state;
    expect_corruption_caught(gemm_into_shared, "gemm accumulator 'C_f' is not a fragment");
    expect_corruption_caught(gemm_from_global, "gemm A operand 'A' is not in shared memory or a fragment");
    expect_corruption_caught(region_rank, "has rank 1 but the buffer has rank 2");
    expect_corruption_caught(parallel_symbolic, "Parallel loop extent 0 is not a positive constant");
    expect_corruption_caught(loop_var_escapes, "variable 'ko' is used outside its scope");
    expect_corruption_caught(buffer_ids, "ids must be dense");
    expect_corruption_caught(pipelined_stages, "Pipelined loop with num_stages=0");
    expect_corruption_caught(dangling_buffer, "buffer 'C_f' is used outside its scope");
    expect_corruption_caught(null_value, "missing expression");
    expect_corruption_caught(threads_bad, "threads=100");
    expect_corruption_caught(op_row_missing, "without its descriptor");
    expect_corruption_caught(op_row_wrong, "without its descriptor");
}

/* ---- no global state: compilations on several threads at once ---- */

typedef struct job {
    const char *bm;
    int64_t shared;
    bool ok;
    char dump[256];
} job;

static void *run_job(void *arg) {
    job *j = arg;
    tlc_define defs[] = {{"bm", j->bm}};
    tlc_compile_options o;
    tlc_compile_options_default(&o);
    o.defines = defs;
    o.ndefines = 1;
    for (int rep = 0; rep < 5; rep++) {
        tlc_compilation c;
        j->ok = tlc_compile_source(&c, "mm.tl", gemm_src, strlen(gemm_src), &o);
        if (j->ok) {
            j->shared = c.tir->kernels[0]->shared_bytes;
            tlc_strbuf sb;
            tlc_sb_init(&sb);
            tir_print_expr(&sb, c.tir->kernels[0]->grid[1]);
            snprintf(j->dump, sizeof j->dump, "%s", tlc_sb_cstr(&sb));
            tlc_sb_free(&sb);
        }
        tlc_compilation_free(&c);
        if (!j->ok) break;
    }
    return NULL;
}

/* pass_configs TL_ENABLE_FAST_MATH: the kernel's f32 divisions become
 * div.approx; a kernel without it (or with False) keeps div.full. */
static void test_fast_math_pass_config(void **state) {
    (void)state;
    static const char *const configs[] = {
        "", ", pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: False}",
        ", pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}",
        ", pass_configs={'tl.enable_fast_math': True, 'tl.disable_tma_lower': True}",
    };
    for (int i = 0; i < 4; i++) {
        char src[1024];
        snprintf(src, sizeof src,
                 "@jit(C=128%s)\n"
                 "def silu(X: Tensor[(M, C), float32], Y: Tensor[(M, C), float32]):\n"
                 "    with Kernel(M, threads=128) as bx:\n"
                 "        x = alloc_fragment((C,), float32)\n"
                 "        copy(X[bx, 0], x)\n"
                 "        for j in Parallel(C):\n"
                 "            x[j] = x[j] / (1.0 + exp(-x[j]))\n"
                 "        copy(x, Y[bx, 0])\n",
                 configs[i]);
        tlc_compilation c;
        tlc_compile_options o;
        tlc_compile_options_default(&o);
        assert_true(tlc_compile_source(&c, "silu.tl", src, strlen(src), &o));
        char *ptx = tlc_compile_ptx(&c, false);
        if (!ptx) fail_msg("%s", tlc_sb_cstr(&c.diag.out));
        bool fast = i >= 2;
        assert_int_equal(strstr(ptx, "div.approx.f32") != NULL, fast);
        assert_int_equal(strstr(ptx, "div.full.f32") != NULL, !fast);
        tlc_compilation_free(&c);
    }
}

static void test_threads(void **state) {
    (void)state;
    job jobs[4] = {{.bm = "16"}, {.bm = "32"}, {.bm = "64"}, {.bm = "128"}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    const int bms[4] = {16, 32, 64, 128};
    for (int i = 0; i < 4; i++) {
        assert_true(jobs[i].ok);
        /* A_s (bm x 32) + B_s (32 x 64), float16 */
        assert_int_equal(jobs[i].shared, (int64_t)(bms[i] * 32 + 32 * 64) * 2);
        char want[64];
        snprintf(want, sizeof want, "ceildiv(M, %d)", bms[i]);
        assert_string_equal(jobs[i].dump, want);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_stages),
        cmocka_unit_test(test_text_is_copied),
        cmocka_unit_test(test_embedded_nul),
        cmocka_unit_test(test_defines_and_arch),
        cmocka_unit_test(test_verify_sema_output),
        cmocka_unit_test(test_stage_times_and_opt_level),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fast_math_pass_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
