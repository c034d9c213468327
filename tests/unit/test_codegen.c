/* Codegen: hand-built Thread IR kernels -> LLVM IR / PTX for every target
 * arch, assembled with ptxas where it exists (skipped with a note where it
 * does not). Also checks that malformed Thread IR gives internal-error
 * diagnostics instead of crashes, and prints (not asserts) codegen times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <cmocka.h>
#include "ir/thread_ir.h"

static const tlc_arch ARCHES[] = {TLC_SM80, TLC_SM86, TLC_SM89, TLC_SM90, TLC_SM90A};
static const char *const ARCH_NAMES[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
enum { NARCH = 5 };

/* ---------------- helpers to build kernels ---------------- */
typedef struct kb {
    tlc_arena a;
    th_kernel *k;
    th_module m;
    tlc_ptrvec body;
} kb;

static void kb_init(kb *b, const char *name, th_param *params, const th_param_attr *attrs, int nparams, int threads) {
    tlc_arena_init(&b->a);
    b->k = TLC_NEW(&b->a, th_kernel);
    b->k->name = name;
    b->k->params = TLC_NEW_ARRAY(&b->a, th_param, (size_t)nparams);
    memcpy(b->k->params, params, sizeof(th_param) * (size_t)nparams);
    b->k->nparams = nparams;
    if (attrs) {
        b->k->param_attrs = TLC_NEW_ARRAY(&b->a, th_param_attr, (size_t)nparams);
        memcpy(b->k->param_attrs, attrs, sizeof(th_param_attr) * (size_t)nparams);
    }
    b->k->threads = threads;
    b->m.arch = TLC_SM80;
    b->m.kernels = TLC_NEW_ARRAY(&b->a, th_kernel *, 1);
    b->m.kernels[0] = b->k;
    b->m.nkernels = 1;
    b->m.metadata = NULL;
    b->body = (tlc_ptrvec){0};
}

static void kb_add(kb *b, th_stmt *s) { tlc_ptrvec_push(&b->body, s); }

static th_stmt *seq_of(kb *b, tlc_ptrvec *v) {
    int n = v->len;
    th_stmt **ss = (th_stmt **)tlc_ptrvec_freeze(v, &b->a);
    return th_seq(&b->a, ss, n);
}

static void kb_finish(kb *b) { b->k->body = seq_of(b, &b->body); }

static th_stmt *seq2(tlc_arena *a, th_stmt *x, th_stmt *y) {
    th_stmt *s[2] = {x, y};
    return th_seq(a, s, 2);
}

static th_expr *I32(tlc_arena *a, int64_t v) { return th_int(a, TH_I32, v); }
static th_expr *F32(tlc_arena *a, double v) { return th_float(a, TH_F32, v); }
static th_expr *add(tlc_arena *a, th_expr *x, th_expr *y) { return th_bin(a, THB_ADD, x, y); }
static th_expr *mul(tlc_arena *a, th_expr *x, th_expr *y) { return th_bin(a, THB_MUL, x, y); }
static th_expr *tid(tlc_arena *a) { return th_special_reg(a, THS_TID_X); }
static th_expr *bid(tlc_arena *a) { return th_special_reg(a, THS_CTAID_X); }

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of this thread: what "one core" costs even on a loaded machine. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool has(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

/* Generates PTX for every arch, checks it, assembles it where ptxas exists.
 * `must` / `must_not`: NULL-terminated substring lists checked on every PTX. */
static void check_all_arches(kb *b, const char *const *must, const char *const *must_not) {
    bool have_ptxas = tlc_ptxas_available();
    if (!have_ptxas) printf("  note: ptxas not found; skipping assembly of '%s'\n", b->k->name);
    for (int i = 0; i < NARCH; i++) {
        tlc_diag d;
        tlc_diag_init(&d, NULL);
        tlc_codegen_options o = {.arch = ARCHES[i], .opt_level = 3};
        double t0 = now_ms();
        char *ptx = tlc_codegen_ptx(&b->m, &o, &b->a, &d);
        double t1 = now_ms();
        if (!ptx) fprintf(stderr, "%s", tlc_sb_cstr(&d.out));
        assert_non_null(ptx);
        assert_int_equal(d.errors, 0);
        printf("  %-12s %-6s PTX in %6.2f ms (%zu bytes)\n", b->k->name, ARCH_NAMES[i], t1 - t0, strlen(ptx));
        char target[32];
        snprintf(target, sizeof target, ".target %s", ARCH_NAMES[i]);
        assert_true(has(ptx, target));
        assert_true(has(ptx, ".version 8.0"));
        char entry[128];
        snprintf(entry, sizeof entry, ".entry %s(", b->k->name);
        assert_true(has(ptx, entry));
        for (int j = 0; must && must[j]; j++) {
            if (!has(ptx, must[j])) fprintf(stderr, "missing '%s' in:\n%s\n", must[j], ptx);
            assert_true(has(ptx, must[j]));
        }
        for (int j = 0; must_not && must_not[j]; j++) {
            if (has(ptx, must_not[j])) fprintf(stderr, "unexpected '%s' in:\n%s\n", must_not[j], ptx);
            assert_false(has(ptx, must_not[j]));
        }
        if (have_ptxas) {
            size_t n = 0;
            double t2 = now_ms();
            unsigned char *cubin = tlc_ptxas_assemble(ptx, ARCHES[i], &n, &b->a, &d);
            double t3 = now_ms();
            if (!cubin) fprintf(stderr, "%s\n%s", tlc_sb_cstr(&d.out), ptx);
            assert_non_null(cubin);
            assert_true(n > 64);
            assert_memory_equal(cubin, "\x7f" "ELF", 4);
            assert_int_equal(d.errors, 0);
            printf("  %-12s %-6s ptxas ok in %6.1f ms (%zu bytes cubin)\n", b->k->name, ARCH_NAMES[i], t3 - t2, n);
        }
        tlc_diag_free(&d);
    }
}

static void kb_free(kb *b) {
    tlc_ptrvec_free(&b->body);
    tlc_arena_free(&b->a);
}

/* (1) y[i] = x[i] over n f16 elements: 16-byte vector loads / stores (8 halves
 * per thread) where a whole vector is in bounds, a scalar tail otherwise. */
static void build_copy(kb *b) {
    th_param ps[] = {
        {.name = "x", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "y", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "n", .type = th_scalar(TH_I32)},
    };
    th_param_attr pa[] = {
        {.readonly = true, .align = 16},
        {.align = 16},
        {0},
    };
    kb_init(b, "copy_f16", ps, pa, 3, 256);
    b->m.metadata = "tlc-kernel copy_f16\nparams x:f16[n] y:f16[n]\ngrid ceil(n/2048)";
    tlc_arena *a = &b->a;
    th_var *g = th_new_var(a, b->k, "g", th_scalar(TH_I32), 0);
    th_var *j = th_new_var(a, b->k, "j", th_scalar(TH_I32), 0);
    th_expr *x = th_param_ref(a, b->k, 0), *y = th_param_ref(a, b->k, 1), *n = th_param_ref(a, b->k, 2);
    th_type v4 = th_vec(TH_I32, 4);
    kb_add(b, th_comment(a, "global thread index; each thread copies 8 halves"));
    kb_add(b, th_assign(a, g, NULL, add(a, mul(a, bid(a), I32(a, 256)), tid(a))));
    th_expr *base = mul(a, th_read(a, g), I32(a, 8));
    th_expr *full = th_cmp(a, THC_LE, add(a, base, I32(a, 8)), n);
    th_stmt *vec = th_store(a, th_ptr_add(a, y, th_read(a, g), v4),
                            th_load(a, th_ptr_add(a, x, th_read(a, g), v4), v4, 16), 16);
    th_type h = th_scalar(TH_F16);
    th_stmt *tail_body = th_store(a, th_ptr_add(a, y, th_read(a, j), h),
                                  th_load(a, th_ptr_add(a, x, th_read(a, j), h), h, 2), 2);
    th_stmt *tail = th_for(a, j, base, n, 1, false, tail_body);
    kb_add(b, th_if(a, full, vec, tail));
    kb_finish(b);
}

static void test_copy_kernel(void **state) {
    (void)state;
    kb b;
    build_copy(&b);
    const char *must[] = {"// tlc-kernel copy_f16\n// params x:f16[n] y:f16[n]\n// grid ceil(n/2048)\n",
                          "ld.global.nc.v4", "st.global.v4", "ld.global.nc.b16", ".maxntid 256", NULL};
    check_all_arches(&b, must, NULL);
    /* the metadata comes first, before LLVM's banner */
    tlc_diag d;
    tlc_diag_init(&d, NULL);
    tlc_codegen_options o = {.arch = TLC_SM90A, .opt_level = 3};
    char *ptx = tlc_codegen_ptx(&b.m, &o, &b.a, &d);
    assert_non_null(ptx);
    assert_true(strncmp(ptx, "// tlc-kernel copy_f16\n", 23) == 0);
    tlc_diag_free(&d);
    kb_free(&b);
}

/* (2) out[row] = sum(x[row, :]): strided per-thread sums, a butterfly over the
 * warp, warp partials through shared memory, a second butterfly in warp 0. */
static th_stmt *butterfly(tlc_arena *a, th_var *acc) {
    th_stmt *s[5];
    for (int i = 0; i < 5; i++) {
        th_expr *args[2] = {th_read(a, acc), I32(a, 16 >> i)};
        th_expr *sh = th_intrin_call(a, THI_SHFL_BFLY, th_scalar(TH_F32), args, 2);
        s[i] = th_assign(a, acc, NULL, add(a, th_read(a, acc), sh));
    }
    return th_seq(a, s, 5);
}

static void build_reduce(kb *b) {
    th_param ps[] = {
        {.name = "x", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "out", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "n", .type = th_scalar(TH_I32)},
    };
    th_param_attr pa[] = {
        {.readonly = true, .align = 16},
        {0},
        {0},
    };
    kb_init(b, "row_sum", ps, pa, 3, 256);
    b->k->dyn_shared_bytes = 8 * 4;
    b->k->min_blocks_per_sm = 4;
    tlc_arena *a = &b->a;
    th_type f = th_scalar(TH_F32);
    th_var *acc = th_new_var(a, b->k, "acc", f, 0);
    th_var *i = th_new_var(a, b->k, "i", th_scalar(TH_I32), 0);
    th_expr *x = th_param_ref(a, b->k, 0), *out = th_param_ref(a, b->k, 1), *n = th_param_ref(a, b->k, 2);
    th_expr *lane = th_special_reg(a, THS_LANEID), *warp = th_special_reg(a, THS_WARPID);
    kb_add(b, th_assign(a, acc, NULL, F32(a, 0)));
    th_expr *row = th_convert(a, bid(a), th_scalar(TH_I64));
    th_expr *rowbase = th_ptr_add(a, x, th_bin(a, THB_MUL, row, th_convert(a, n, th_scalar(TH_I64))), f);
    th_stmt *acc_step = th_assign(a, acc, NULL,
                                  add(a, th_read(a, acc), th_load(a, th_ptr_add(a, rowbase, th_read(a, i), f), f, 4)));
    kb_add(b, th_for(a, i, tid(a), n, 256, false, acc_step));
    kb_add(b, butterfly(a, acc));
    th_expr *slot = th_shared_ptr(a, mul(a, warp, I32(a, 4)));
    kb_add(b, th_if(a, th_cmp(a, THC_EQ, lane, I32(a, 0)), th_store(a, slot, th_read(a, acc), 4), NULL));
    kb_add(b, th_barrier(a));
    th_expr *partial = th_load(a, th_shared_ptr(a, mul(a, lane, I32(a, 4))), f, 4);
    th_stmt *w0 = seq2(a, th_assign(a, acc, NULL, th_select(a, th_cmp(a, THC_LT, lane, I32(a, 8)), partial, F32(a, 0))),
                       seq2(a, butterfly(a, acc),
                            th_if(a, th_cmp(a, THC_EQ, lane, I32(a, 0)),
                                  th_store(a, th_ptr_add(a, out, bid(a), f), th_read(a, acc), 4), NULL)));
    kb_add(b, th_if(a, th_cmp(a, THC_EQ, warp, I32(a, 0)), w0, NULL));
    kb_finish(b);
}

static void test_reduce_kernel(void **state) {
    (void)state;
    kb b;
    build_reduce(&b);
    const char *must[] = {"shfl.sync.bfly.b32", "bar.sync", "st.shared", "ld.shared", "__tlc_smem",
                          ".minnctapersm 4", "add.f32", NULL};
    check_all_arches(&b, must, NULL);
    kb_free(&b);
}

/* (3) A per-thread register array r[8] filled, transformed and summed by
 * unrolled loops indexed by the loop variable: after full unrolling SROA
 * keeps it in registers, so the PTX must not touch local memory. */
static void build_regarray(kb *b) {
    th_param ps[] = {
        {.name = "x", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "y", .type = th_ptr(TH_AS_GLOBAL)},
    };
    th_param_attr pa[] = {
        {.readonly = true},
        {0},
    };
    kb_init(b, "reg_array", ps, pa, 2, 128);
    tlc_arena *a = &b->a;
    th_type f = th_scalar(TH_F32);
    th_var *r = th_new_var(a, b->k, "r", f, 8);
    th_var *j = th_new_var(a, b->k, "j", th_scalar(TH_I32), 0);
    th_var *s = th_new_var(a, b->k, "s", f, 0);
    th_expr *x = th_param_ref(a, b->k, 0), *y = th_param_ref(a, b->k, 1);
    th_expr *g = add(a, mul(a, bid(a), I32(a, 128)), tid(a));
    th_expr *base = mul(a, g, I32(a, 8));
    kb_add(b, th_for(a, j, I32(a, 0), I32(a, 8), 1, true,
                     th_assign(a, r, th_read(a, j),
                               th_load(a, th_ptr_add(a, x, add(a, base, th_read(a, j)), f), f, 4))));
    th_expr *args[3] = {th_array_read(a, r, th_read(a, j)), th_array_read(a, r, th_read(a, j)), F32(a, 1.0)};
    kb_add(b, th_for(a, j, I32(a, 0), I32(a, 8), 1, true,
                     th_assign(a, r, th_read(a, j), th_intrin_call(a, THI_FMA, f, args, 3))));
    kb_add(b, th_assign(a, s, NULL, F32(a, 0)));
    kb_add(b, th_for(a, j, I32(a, 0), I32(a, 8), 1, true,
                     th_assign(a, s, NULL, add(a, th_read(a, s), th_array_read(a, r, th_read(a, j))))));
    /* reverse order write-back: index arithmetic on the loop variable */
    th_expr *rev = th_bin(a, THB_SUB, I32(a, 7), th_read(a, j));
    kb_add(b, th_for(a, j, I32(a, 0), I32(a, 8), 1, true,
                     th_store(a, th_ptr_add(a, y, add(a, base, th_read(a, j)), f),
                              th_bin(a, THB_DIV, th_array_read(a, r, rev), th_read(a, s)), 4)));
    kb_finish(b);
}

static void test_register_array_no_local_memory(void **state) {
    (void)state;
    kb b;
    build_regarray(&b);
    const char *must[] = {"fma.rn.f32", "div.full.f32", NULL}; /* f32 `/`: div.full (codegen_intrinsics.c) */
    const char *must_not[] = {".local", "ld.local", "st.local", "__local_depot", NULL};
    check_all_arches(&b, must, must_not);
    kb_free(&b);
}

/* Values that meet at joins: codegen places the phis itself (codegen_vars.c).
 * x grows in a loop on one path of an if; v[0] and v[1] (constant indices)
 * are set on different paths; t is first assigned inside the else branch;
 * y only on one path of a later if. The verifier and ptxas check the SSA
 * form; the -O0 module shows the phis. */
static void build_joins(kb *b) {
    th_param ps[] = {{.name = "out", .type = th_ptr(TH_AS_GLOBAL)}};
    kb_init(b, "joins", ps, NULL, 1, 128);
    tlc_arena *a = &b->a;
    th_type i32 = th_scalar(TH_I32);
    th_var *x = th_new_var(a, b->k, "x", i32, 0), *j = th_new_var(a, b->k, "j", i32, 0);
    th_var *v = th_new_var(a, b->k, "v", i32, 2), *t = th_new_var(a, b->k, "t", i32, 0);
    th_var *y = th_new_var(a, b->k, "y", i32, 0);
    kb_add(b, th_assign(a, x, NULL, I32(a, 0)));
    th_stmt *then = seq2(a, th_assign(a, x, NULL, add(a, th_read(a, x), th_read(a, j))),
                         th_assign(a, v, I32(a, 0), th_read(a, j)));
    th_stmt *els = seq2(a, th_assign(a, t, NULL, mul(a, th_read(a, j), I32(a, 2))),
                        th_assign(a, v, I32(a, 1), th_read(a, t)));
    kb_add(b, th_for(a, j, I32(a, 0), I32(a, 4), 1, false,
                     th_if(a, th_cmp(a, THC_LT, tid(a), th_read(a, j)), then, els)));
    kb_add(b, th_if(a, th_cmp(a, THC_EQ, tid(a), I32(a, 0)), th_assign(a, y, NULL, I32(a, 5)), NULL));
    th_expr *sum = add(a, add(a, th_read(a, x), th_array_read(a, v, I32(a, 0))),
                       add(a, th_array_read(a, v, I32(a, 1)), add(a, th_read(a, t), th_read(a, y))));
    kb_add(b, th_store(a, th_ptr_add(a, th_param_ref(a, b->k, 0), tid(a), i32), sum, 4));
    kb_finish(b);
}

static void test_joins(void **state) {
    (void)state;
    kb b;
    build_joins(&b);
    const char *must[] = {"st.global", NULL};
    const char *must_not[] = {".local", NULL};
    check_all_arches(&b, must, must_not);
    tlc_diag d;
    tlc_diag_init(&d, NULL);
    tlc_codegen_options o = {.arch = TLC_SM80, .opt_level = 0};
    char *raw = tlc_codegen_llvm_ir(&b.m, &o, &b.a, &d);
    assert_non_null(raw);
    assert_int_equal(d.errors, 0);
    assert_true(has(raw, "phi i32"));
    assert_false(has(raw, "alloca"));
    tlc_diag_free(&d);
    kb_free(&b);
}

/* (4) f16 / bf16 conversions and the fast approximations:
 * y16[i] = f16(ex2.approx(f32(x16[i]))), ybf[i] = bf16(rsqrt.approx(...)),
 * plus a vector of two halves built, bitcast and extracted. */
static void build_convert(kb *b) {
    th_param ps[] = {
        {.name = "x16", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "y16", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "ybf", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "scale", .type = th_scalar(TH_F32)},
    };
    th_param_attr pa[] = {
        {.readonly = true, .align = 4},
        {.align = 4},
        {.align = 4},
        {0},
    };
    kb_init(b, "cvt_math", ps, pa, 4, 64);
    tlc_arena *a = &b->a;
    th_type h = th_scalar(TH_F16), bf = th_scalar(TH_BF16), f = th_scalar(TH_F32);
    th_type h2 = th_vec(TH_F16, 2), bf2 = th_vec(TH_BF16, 2);
    th_var *v = th_new_var(a, b->k, "v", h2, 0);
    th_var *e0 = th_new_var(a, b->k, "e0", f, 0), *e1 = th_new_var(a, b->k, "e1", f, 0);
    th_expr *x = th_param_ref(a, b->k, 0), *y16 = th_param_ref(a, b->k, 1), *ybf = th_param_ref(a, b->k, 2);
    th_expr *scale = th_param_ref(a, b->k, 3);
    th_expr *g = add(a, mul(a, bid(a), I32(a, 64)), tid(a));
    /* load two halves as one i32 and reinterpret as f16x2 */
    th_expr *word = th_load(a, th_ptr_add(a, x, g, th_scalar(TH_I32)), th_scalar(TH_I32), 4);
    kb_add(b, th_assign(a, v, NULL, th_bitcast(a, word, h2)));
    th_expr *l0 = th_convert(a, th_extract(a, th_read(a, v), 0), f);
    th_expr *l1 = th_convert(a, th_extract(a, th_read(a, v), 1), f);
    kb_add(b, th_assign(a, e0, NULL, th_un(a, THU_EXP2_APPROX, mul(a, l0, scale))));
    kb_add(b, th_assign(a, e1, NULL, th_un(a, THU_RSQRT_APPROX, th_un(a, THU_ABS, l1))));
    th_expr *lanes16[2] = {th_convert(a, th_read(a, e0), h), th_convert(a, th_read(a, e1), h)};
    kb_add(b, th_store(a, th_ptr_add(a, y16, g, h2), th_build(a, h2, lanes16, 2), 4));
    th_expr *lanesbf[2] = {th_convert(a, th_read(a, e0), bf),
                           th_convert(a, th_un(a, THU_RCP_APPROX, th_read(a, e1)), bf)};
    th_expr *pbf = th_build(a, bf2, lanesbf, 2);
    kb_add(b, th_store(a, th_ptr_add(a, ybf, g, th_scalar(TH_I32)), th_bitcast(a, pbf, th_scalar(TH_I32)), 4));
    kb_finish(b);
}

static void test_conversions_and_approx(void **state) {
    (void)state;
    kb b;
    build_convert(&b);
    const char *must[] = {"ex2.approx.ftz.f32", "rsqrt.approx.ftz.f32", "rcp.approx.ftz.f32", "cvt.f32.f16",
                          "cvt.rn.f16", "cvt.rn.bf16", NULL};
    check_all_arches(&b, must, NULL);
    kb_free(&b);
}

/* Every other node kind once: integer ops (floor div / mod, min / max,
 * shifts, pow), float math (exp, log, sqrt, log2, rsqrt, pow, floor div),
 * comparisons, selects, conversions of every flavour, shuffles of odd types,
 * atomics, a named barrier, inline asm with outputs, an opaque byval param
 * (CUtensorMap-like), 2-D special registers and a counted-down loop. */
static void build_everything(kb *b) {
    th_param ps[] = {
        {.name = "p", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "q", .type = th_ptr(TH_AS_GLOBAL)},
        {.name = "k", .type = th_scalar(TH_I64)},
        {.name = "s", .type = th_scalar(TH_F32)},
        {.name = "desc", .byte_size_override = 128},
    };
    th_param_attr pa[] = {
        {0},
        {.align = 8},
        {0},
        {0},
        {0},
    };
    kb_init(b, "everything", ps, pa, 5, 128);
    b->k->dyn_shared_bytes = 1024;
    tlc_arena *a = &b->a;
    th_type i32 = th_scalar(TH_I32), i64 = th_scalar(TH_I64), f = th_scalar(TH_F32), h = th_scalar(TH_F16);
    th_var *vi = th_new_var(a, b->k, "vi", i32, 0);
    th_var *vl = th_new_var(a, b->k, "vl", i64, 0);
    th_var *vf = th_new_var(a, b->k, "vf", f, 0);
    th_var *vh = th_new_var(a, b->k, "vh", h, 0);
    th_var *vd = th_new_var(a, b->k, "vd", th_scalar(TH_F64), 0);
    th_var *vb = th_new_var(a, b->k, "vb", th_scalar(TH_I1), 0);
    th_var *vp = th_new_var(a, b->k, "vp", th_ptr(TH_AS_GENERIC), 0);
    th_var *v4 = th_new_var(a, b->k, "v4", th_vec(TH_F32, 4), 0);
    th_var *lo = th_new_var(a, b->k, "lo", i32, 0);
    th_var *asm_out = th_new_var(a, b->k, "asm_out", i32, 0);
    th_expr *p = th_param_ref(a, b->k, 0), *q = th_param_ref(a, b->k, 1), *k = th_param_ref(a, b->k, 2);
    th_expr *s = th_param_ref(a, b->k, 3), *desc = th_param_ref(a, b->k, 4);
    th_expr *t = add(a, th_special_reg(a, THS_TID_X), th_special_reg(a, THS_TID_Y));
    t = add(a, t, th_special_reg(a, THS_TID_Z));
    th_expr *blk = add(a, add(a, th_special_reg(a, THS_CTAID_Y), th_special_reg(a, THS_CTAID_Z)),
                       add(a, th_special_reg(a, THS_NCTAID_X), add(a, th_special_reg(a, THS_NCTAID_Y),
                                                                   th_special_reg(a, THS_NCTAID_Z))));
    kb_add(b, th_assign(a, vi, NULL, add(a, t, mul(a, blk, th_special_reg(a, THS_NTID_X)))));
    /* integer ops */
    th_binop iops[] = {THB_SUB, THB_DIV, THB_REM, THB_UDIV, THB_UREM, THB_FLOORDIV, THB_FLOORMOD, THB_MIN,
                       THB_MAX, THB_AND, THB_OR, THB_XOR, THB_SHL, THB_SHR, THB_LSHR};
    /* right operands never zero (tid.x + c) and shift amounts < 32, so LLVM cannot fold anything into UB */
    for (size_t i = 0; i < sizeof iops / sizeof iops[0]; i++) {
        th_binop op = iops[i];
        th_expr *rhs = (op == THB_SHL || op == THB_SHR || op == THB_LSHR)
                           ? th_bin(a, THB_AND, th_special_reg(a, THS_TID_X), I32(a, 7))
                           : add(a, th_special_reg(a, THS_TID_X), I32(a, (int64_t)i + 3));
        kb_add(b, th_assign(a, vi, NULL, th_bin(a, op, th_read(a, vi), rhs)));
    }
    kb_add(b, th_assign(a, vi, NULL, th_bin(a, THB_POW, th_read(a, vi), I32(a, 3))));
    /* an OR of bits known disjoint: (vi << 8) and tid.x & 255 */
    kb_add(b, th_assign(a, vi, NULL, th_bin(a, THB_OR_DISJOINT, th_bin(a, THB_SHL, th_read(a, vi), I32(a, 8)),
                                            th_bin(a, THB_AND, th_special_reg(a, THS_TID_X), I32(a, 255)))));
    kb_add(b, th_assign(a, vi, NULL, th_un(a, THU_NEG, th_un(a, THU_NOT, th_un(a, THU_ABS, th_read(a, vi))))));
    kb_add(b, th_assign(a, vl, NULL, th_bin(a, THB_FLOORDIV, th_convert(a, th_read(a, vi), i64), k)));
    /* float ops */
    kb_add(b, th_assign(a, vf, NULL, th_convert(a, th_read(a, vl), f)));
    th_unop uops[] = {THU_SQRT, THU_EXP, THU_LOG, THU_EXP2, THU_LOG2, THU_LOG2_APPROX, THU_RSQRT, THU_NEG};
    for (size_t i = 0; i < sizeof uops / sizeof uops[0]; i++)
        kb_add(b, th_assign(a, vf, NULL, th_un(a, uops[i], add(a, th_read(a, vf), s))));
    th_binop fops[] = {THB_SUB, THB_DIV, THB_REM, THB_FLOORDIV, THB_FLOORMOD, THB_MIN, THB_MAX, THB_POW};
    for (size_t i = 0; i < sizeof fops / sizeof fops[0]; i++)
        kb_add(b, th_assign(a, vf, NULL, th_bin(a, fops[i], th_read(a, vf), add(a, s, F32(a, (double)i)))));
    kb_add(b, th_assign(a, vf, NULL, th_bin(a, THB_POW, th_read(a, vf), F32(a, -2.0))));
    kb_add(b, th_assign(a, vf, NULL, th_bin(a, THB_POW, th_read(a, vf), F32(a, 0.5))));
    /* f16 math goes through f32; f64 sqrt stays f64 */
    kb_add(b, th_assign(a, vh, NULL, th_un(a, THU_EXP, th_convert(a, th_read(a, vf), h))));
    kb_add(b, th_assign(a, vd, NULL, th_un(a, THU_SQRT, th_convert(a, th_read(a, vh), th_scalar(TH_F64)))));
    /* comparisons, select, bool conversions */
    kb_add(b, th_assign(a, vb, NULL, th_cmp(a, THC_NE, th_read(a, vd), th_float(a, TH_F64, 1.5))));
    kb_add(b, th_assign(a, vf, NULL, th_select(a, th_read(a, vb), th_convert(a, th_read(a, vb), f), th_read(a, vf))));
    kb_add(b, th_assign(a, vi, NULL, th_select(a, th_read(a, vi), th_convert(a, th_read(a, vf), i32), I32(a, 7))));
    /* vectors: build, shuffle a whole vector (split in words), extract */
    th_expr *l4[4] = {th_read(a, vf), s, th_convert(a, th_read(a, vi), f), F32(a, 2)};
    kb_add(b, th_assign(a, v4, NULL, th_build(a, th_vec(TH_F32, 4), l4, 4)));
    th_expr *sa[2] = {th_read(a, v4), I32(a, 1)};
    kb_add(b, th_assign(a, v4, NULL, th_intrin_call(a, THI_SHFL_BFLY, th_vec(TH_F32, 4), sa, 2)));
    th_expr *sh[3] = {th_read(a, vh), th_special_reg(a, THS_LANEID), I32(a, 16)};
    kb_add(b, th_assign(a, vh, NULL, th_intrin_call(a, THI_SHFL_IDX, h, sh, 3)));
    th_expr *sl[2] = {th_read(a, vl), I32(a, 0)};
    kb_add(b, th_assign(a, vl, NULL, th_intrin_call(a, THI_SHFL_IDX, i64, sl, 2)));
    /* pointers: shared, generic, param block, int <-> ptr */
    kb_add(b, th_assign(a, vp, NULL, th_convert(a, th_shared_ptr(a, I32(a, 64)), th_ptr(TH_AS_GENERIC))));
    kb_add(b, th_assign(a, vl, NULL, add(a, th_read(a, vl), th_bitcast(a, th_read(a, vp), i64))));
    kb_add(b, th_assign(a, vl, NULL, add(a, th_read(a, vl), th_load(a, th_ptr_add(a, desc, I32(a, 1), i64), i64, 8))));
    /* a counted-down loop and a named barrier of 128 threads */
    th_stmt *down = th_assign(a, vi, NULL, add(a, th_read(a, vi), th_read(a, lo)));
    kb_add(b, th_for(a, lo, I32(a, 10), I32(a, 0), -2, false, down));
    kb_add(b, th_barrier_sync(a, 1, 128));
    /* inline asm with an output */
    /* inline asm with an output; the descriptor's address escapes into it
     * (like a TMA instruction's), which grid_constant turns into cvta.param */
    th_expr *asm_in[2] = {th_read(a, vi), desc};
    th_var *asm_outs[1] = {asm_out};
    kb_add(b, th_asm(a, "add.s32 $0, $1, 1; // $2", "=r,r,l", asm_in, 2, asm_outs, 1, false));
    /* results */
    th_expr *sum = th_bin(a, THB_ADD, th_convert(a, th_read(a, asm_out), f), th_extract(a, th_read(a, v4), 3));
    sum = add(a, sum, th_convert(a, th_read(a, vh), f));
    sum = add(a, sum, th_convert(a, th_read(a, vd), f));
    sum = add(a, sum, th_convert(a, th_read(a, vl), f));
    kb_add(b, th_atomic_add(a, p, sum));
    kb_add(b, th_atomic_add(a, th_ptr_add(a, q, I32(a, 1), i32), th_read(a, vi)));
    th_expr *hh[2] = {th_read(a, vh), th_read(a, vh)};
    kb_add(b, th_atomic_add(a, th_ptr_add(a, q, I32(a, 2), i32), th_build(a, th_vec(TH_F16, 2), hh, 2)));
    kb_add(b, th_store(a, th_shared_ptr(a, th_read(a, vi)), th_read(a, vf), 4));
    kb_add(b, th_barrier(a));
    kb_finish(b);
}

static void test_every_node_kind(void **state) {
    (void)state;
    kb b;
    build_everything(&b);
    const char *must[] = {"atom.global.add.f32", "bar.sync \t1, 128", "add.s32", "cvta.param", "sqrt.rn.f64",
                          "lg2.approx", "ex2.approx", "shfl.sync.idx.b32", NULL};
    const char *must_not[] = {"__local_depot", ".local", NULL};
    check_all_arches(&b, must, must_not);
    /* the printer handles every node kind too */
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    th_print_module(&sb, &b.m);
    const char *txt = tlc_sb_cstr(&sb);
    assert_true(has(txt, "kernel everything("));
    assert_true(has(txt, "|disjoint"));
    assert_true(has(txt, "param4 desc: bytes[128]"));
    assert_true(has(txt, "asm \"add.s32 $0, $1, 1; // $2\" \"=r,r,l\" outs(asm_out.9) ins(vi.0, param4)"));
    assert_true(has(txt, "bar.sync 1, 128"));
    assert_true(has(txt, "atomic_add[param0] += "));
    assert_true(has(txt, "for lo.8 in [10, 0) step -2 {"));
    assert_false(has(txt, "<expr kind"));
    assert_false(has(txt, "<stmt kind"));
    tlc_sb_free(&sb);
    kb_free(&b);
}

/* Every operation on every value type the lowering may produce (scalars and
 * vectors of each width): a lowering that combines them freely must never
 * hit an LLVM "cannot select" (which would abort the process). */
static void build_type_matrix(kb *b, th_type t, const char *name) {
    th_param ps[] = {{.name = "p", .type = th_ptr(TH_AS_GLOBAL)}, {.name = "q", .type = th_ptr(TH_AS_GLOBAL)}};
    kb_init(b, name, ps, NULL, 2, 64);
    tlc_arena *a = &b->a;
    th_expr *p = th_param_ref(a, b->k, 0), *q = th_param_ref(a, b->k, 1);
    th_var *x = th_new_var(a, b->k, "x", t, 0), *y = th_new_var(a, b->k, "y", t, 0);
    int slot = 0;
    th_expr *g = tid(a);
#define OUT(val) kb_add(b, th_store(a, th_ptr_add(a, q, add(a, mul(a, g, I32(a, 64)), I32(a, slot++)), (val)->type), (val), 0))
    kb_add(b, th_assign(a, x, NULL, th_load(a, th_ptr_add(a, p, g, t), t, 0)));
    kb_add(b, th_assign(a, y, NULL, th_load(a, th_ptr_add(a, p, add(a, g, I32(a, 64)), t), t, 0)));
    th_expr *X = th_read(a, x), *Y = th_read(a, y);
    bool fl = t.base >= TH_F16 && t.base <= TH_F64;
    if (fl) {
        th_binop ops[] = {THB_ADD, THB_SUB, THB_MUL, THB_DIV, THB_REM, THB_MIN, THB_MAX, THB_FLOORDIV, THB_FLOORMOD, THB_POW};
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) OUT(th_bin(a, ops[i], X, Y));
        th_unop uops[] = {THU_NEG, THU_ABS, THU_SQRT, THU_EXP, THU_LOG, THU_EXP2_APPROX, THU_LOG2_APPROX,
                          THU_RSQRT_APPROX, THU_RCP_APPROX, THU_EXP2, THU_LOG2, THU_RSQRT};
        for (size_t i = 0; i < sizeof uops / sizeof uops[0]; i++) OUT(th_un(a, uops[i], X));
        th_expr *fa[3] = {X, Y, X};
        OUT(th_intrin_call(a, THI_FMA, t, fa, 3));
    } else {
        th_binop ops[] = {THB_ADD, THB_SUB, THB_MUL, THB_DIV, THB_REM, THB_UDIV, THB_UREM, THB_FLOORDIV,
                          THB_FLOORMOD, THB_MIN, THB_MAX, THB_AND, THB_OR, THB_XOR, THB_SHL, THB_SHR, THB_LSHR};
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) OUT(th_bin(a, ops[i], X, Y));
        th_unop uops[] = {THU_NEG, THU_NOT, THU_ABS};
        for (size_t i = 0; i < sizeof uops / sizeof uops[0]; i++) OUT(th_un(a, uops[i], X));
    }
    th_expr *three = fl ? th_float(a, t.base, 3.0) : th_int(a, t.base, 3);
    if (t.lanes <= 1) OUT(th_bin(a, THB_POW, X, three));
    for (th_cmpop c = THC_EQ; c <= THC_GE; c++) {
        th_expr *m = th_cmp(a, c, X, Y);
        OUT(th_select(a, m, X, Y));
    }
    th_base targets[] = {TH_I8, TH_I16, TH_I32, TH_I64, TH_F16, TH_BF16, TH_F32, TH_F64};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        OUT(th_convert(a, X, th_vec(targets[i], t.lanes)));
    OUT(th_convert(a, th_convert(a, X, th_vec(TH_I1, t.lanes)), th_vec(TH_I32, t.lanes)));
    th_expr *sa[2] = {X, th_special_reg(a, THS_LANEID)};
    OUT(th_intrin_call(a, THI_SHFL_IDX, t, sa, 2));
    if (t.lanes > 1) OUT(th_extract(a, X, t.lanes - 1));
    bool atomic_ok = (t.lanes <= 1 && t.base != TH_I8 && t.base != TH_I16) ||
                     (t.lanes == 2 && (t.base == TH_F16 || t.base == TH_BF16));
    if (atomic_ok) kb_add(b, th_atomic_add(a, th_ptr_add(a, q, g, t), X));
#undef OUT
    kb_finish(b);
}

static void test_type_matrix(void **state) {
    (void)state;
    struct { th_type t; const char *name; } cases[] = {
        {th_scalar(TH_I8), "m_i8"}, {th_scalar(TH_I16), "m_i16"}, {th_scalar(TH_I32), "m_i32"},
        {th_scalar(TH_I64), "m_i64"}, {th_vec(TH_I32, 4), "m_i32x4"}, {th_vec(TH_I8, 4), "m_i8x4"},
        {th_scalar(TH_F16), "m_f16"}, {th_scalar(TH_BF16), "m_bf16"}, {th_scalar(TH_F32), "m_f32"},
        {th_scalar(TH_F64), "m_f64"}, {th_vec(TH_F16, 2), "m_f16x2"}, {th_vec(TH_BF16, 2), "m_bf16x2"}, {th_vec(TH_BF16, 8), "m_bf16x8"},
        {th_vec(TH_F32, 4), "m_f32x4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kb b;
        build_type_matrix(&b, cases[i].t, cases[i].name);
        const char *must_not[] = {"__local_depot", NULL};
        check_all_arches(&b, NULL, must_not);
        kb_free(&b);
    }
}

/* Compilations on several threads at once give the same PTX as one at a time
 * (each has its own LLVMContext; target setup is pthread_once). */
typedef struct par_job {
    void (*build)(kb *);
    tlc_arch arch;
    char *ptx; /* malloc'd */
} par_job;

static void *par_run(void *arg) {
    par_job *j = arg;
    for (int rep = 0; rep < 3; rep++) {
        kb b;
        j->build(&b);
        tlc_diag d;
        tlc_diag_init(&d, NULL);
        tlc_codegen_options o = {.arch = j->arch, .opt_level = 3};
        char *ptx = tlc_codegen_ptx(&b.m, &o, &b.a, &d);
        if (ptx && !j->ptx) j->ptx = strdup(ptx);
        else if (ptx && strcmp(ptx, j->ptx) != 0) { free(j->ptx); j->ptx = strdup("mismatch between repetitions"); }
        tlc_diag_free(&d);
        kb_free(&b);
    }
    return NULL;
}

static void test_parallel_compilations(void **state) {
    (void)state;
    void (*builders[])(kb *) = {build_copy, build_reduce, build_regarray, build_convert, build_everything};
    enum { N = 8 };
    par_job jobs[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (par_job){builders[i % 5], ARCHES[i % NARCH], NULL};
        assert_int_equal(pthread_create(&th[i], NULL, par_run, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < N; i++) {
        assert_non_null(jobs[i].ptx);
        par_job serial = {jobs[i].build, jobs[i].arch, NULL};
        par_run(&serial);
        assert_non_null(serial.ptx);
        assert_string_equal(jobs[i].ptx, serial.ptx);
        free(serial.ptx);
        free(jobs[i].ptx);
    }
}

/* --emit=llvm: the kernel with the PTX calling convention and launch bounds. */
static void test_emit_llvm(void **state) {
    (void)state;
    kb b;
    build_copy(&b);
    tlc_diag d;
    tlc_diag_init(&d, NULL);
    tlc_codegen_options o = {.arch = TLC_SM90, .opt_level = 3};
    char *ll = tlc_codegen_llvm_ir(&b.m, &o, &b.a, &d);
    assert_non_null(ll);
    assert_true(has(ll, "define ptx_kernel void @copy_f16("));
    assert_true(has(ll, "\"nvvm.maxntid\"=\"256\""));
    assert_true(has(ll, "target triple = \"nvptx64-nvidia-cuda\""));
    assert_true(has(ll, "noalias readonly align 16"));
    assert_true(has(ll, "; tlc-kernel copy_f16"));
    assert_true(has(ll, "load <4 x i32>"));
    /* --emit=llvm at -O0 shows the raw translation: scalars are SSA values
     * from the start (the tail loop's counter a phi in its header), no
     * alloca */
    o.opt_level = 0;
    char *raw = tlc_codegen_llvm_ir(&b.m, &o, &b.a, &d);
    assert_non_null(raw);
    assert_true(has(raw, "phi i32"));
    assert_false(has(raw, "alloca"));
    assert_true(has(raw, "define ptx_kernel void @copy_f16("));
    assert_int_equal(d.errors, 0);
    tlc_diag_free(&d);

    kb e;
    build_everything(&e);
    raw = tlc_codegen_llvm_ir(&e.m, &o, &e.a, &d);
    assert_non_null(raw);
    assert_true(has(raw, "or disjoint i32"));
    kb_free(&e);

    /* unroll metadata survives in the unoptimized module */
    kb r;
    build_regarray(&r);
    tlc_diag_init(&d, NULL);
    raw = tlc_codegen_llvm_ir(&r.m, &o, &r.a, &d);
    assert_non_null(raw);
    assert_true(has(raw, "llvm.loop.unroll.full"));
    /* indexed by the loop counter: an array in memory until unrolling */
    assert_true(has(raw, "alloca [8 x float]"));
    tlc_diag_free(&d);
    kb_free(&r);
    kb_free(&b);
}

/* Malformed Thread IR: each case must produce an internal-error diagnostic,
 * no output, no crash. */
static void expect_codegen_error(kb *b, const char *msg_part) {
    tlc_diag d;
    tlc_diag_init(&d, NULL);
    tlc_codegen_options o = {.arch = TLC_SM80, .opt_level = 3};
    char *ptx = tlc_codegen_ptx(&b->m, &o, &b->a, &d);
    if (ptx || !has(tlc_sb_cstr(&d.out), msg_part)) fprintf(stderr, "diag: %s\n", tlc_sb_cstr(&d.out));
    assert_null(ptx);
    assert_true(d.errors > 0);
    assert_true(has(tlc_sb_cstr(&d.out), "internal error"));
    assert_true(has(tlc_sb_cstr(&d.out), msg_part));
    tlc_diag_free(&d);
}

static void test_bad_thread_ir(void **state) {
    (void)state;
    th_param ps[] = {{.name = "p", .type = th_ptr(TH_AS_GLOBAL)}, {.name = "n", .type = th_scalar(TH_I32)}};
    {   /* assignment of a float to an int slot */
        kb b;
        kb_init(&b, "bad1", ps, NULL, 2, 32);
        th_var *v = th_new_var(&b.a, b.k, "v", th_scalar(TH_I32), 0);
        kb_add(&b, th_assign(&b.a, v, NULL, F32(&b.a, 1.0)));
        kb_add(&b, th_comment(&b.a, "after the error"));
        kb_finish(&b);
        b.k->body->u.seq.stmts[0]->loc = (tlc_loc){12, 5};
        expect_codegen_error(&b, "assignment of f32 to 'v' of type i32");
        kb_free(&b);
    }
    {   /* binary op on mismatched types, out-of-range parameter, constant index out of range */
        kb b;
        kb_init(&b, "bad2", ps, NULL, 2, 32);
        th_var *v = th_new_var(&b.a, b.k, "v", th_scalar(TH_I32), 4);
        th_expr *e = th_bin(&b.a, THB_ADD, th_param_ref(&b.a, b.k, 1), th_int(&b.a, TH_I64, 1));
        kb_add(&b, th_store(&b.a, th_param_ref(&b.a, b.k, 0), e, 4));
        kb_add(&b, th_store(&b.a, th_param_ref(&b.a, b.k, 0), th_param_ref(&b.a, b.k, 7), 4));
        kb_add(&b, th_assign(&b.a, v, I32(&b.a, 4), I32(&b.a, 0)));
        kb_finish(&b);
        expect_codegen_error(&b, "out of range for 'v[4]'");
        kb_free(&b);
    }
    {   /* bad intrinsic arity, bad barrier, step 0, bad alignment, bad asm constraints */
        kb b;
        kb_init(&b, "bad3", ps, NULL, 2, 32);
        th_var *i = th_new_var(&b.a, b.k, "i", th_scalar(TH_I32), 0);
        th_expr *one[1] = {F32(&b.a, 1)};
        kb_add(&b, th_store(&b.a, th_param_ref(&b.a, b.k, 0), th_intrin_call(&b.a, THI_FMA, th_scalar(TH_F32), one, 1), 4));
        kb_add(&b, th_barrier_sync(&b.a, 3, 100));
        kb_add(&b, th_for(&b.a, i, I32(&b.a, 0), I32(&b.a, 4), 0, false, NULL));
        kb_add(&b, th_store(&b.a, th_param_ref(&b.a, b.k, 0), F32(&b.a, 1), 3));
        kb_add(&b, th_asm(&b.a, "mov.u32 $0, 1;", "=r,r", NULL, 0, NULL, 0, true));
        kb_finish(&b);
        expect_codegen_error(&b, "fma wants three f32 operands");
        kb_free(&b);
    }
    {   /* threads > 1024 and a duplicate kernel name in one module */
        kb b;
        kb_init(&b, "dup", ps, NULL, 2, 2048);
        kb_finish(&b);
        expect_codegen_error(&b, "outside 1..1024");
        b.k->threads = 32;
        th_kernel **two = TLC_NEW_ARRAY(&b.a, th_kernel *, 2);
        two[0] = two[1] = b.k;
        b.m.kernels = two;
        b.m.nkernels = 2;
        expect_codegen_error(&b, "two kernels named 'dup'");
        kb_free(&b);
    }
}

/* ptxas failure is a diagnostic carrying ptxas's own message. */
static void test_ptxas_error(void **state) {
    (void)state;
    if (!tlc_ptxas_available()) {
        printf("  note: ptxas not found; skipping\n");
        return;
    }
    tlc_arena a;
    tlc_arena_init(&a);
    tlc_diag d;
    tlc_diag_init(&d, NULL);
    size_t n = 123;
    unsigned char *c = tlc_ptxas_assemble(".version 8.0\n.target sm_80\n.address_size 64\nthis is not ptx\n",
                                          TLC_SM80, &n, &a, &d);
    assert_null(c);
    assert_int_equal(n, 0);
    assert_true(d.errors > 0);
    assert_true(has(tlc_sb_cstr(&d.out), "ptxas -arch=sm_80 failed"));
    assert_true(has(tlc_sb_cstr(&d.out), "ptxas: "));
    tlc_diag_free(&d);
    tlc_arena_free(&a);
}

/* Timing of a cold and a warm compile of the small kernels (printed). */
static void test_codegen_timing(void **state) {
    (void)state;
    void (*builders[])(kb *) = {build_copy, build_reduce, build_regarray, build_convert};
    for (int rep = 0; rep < 2; rep++) {
        for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++) {
            kb b;
            builders[i](&b);
            tlc_diag d;
            tlc_diag_init(&d, NULL);
            tlc_codegen_options o = {.arch = TLC_SM90A, .opt_level = 3};
            double t0 = now_ms(), c0 = cpu_ms();
            char *ptx = tlc_codegen_ptx(&b.m, &o, &b.a, &d);
            double t1 = now_ms(), c1 = cpu_ms();
            assert_non_null(ptx);
            printf("  timing (pass %d): %-10s sm_90a Thread IR -> PTX %6.2f ms wall, %6.2f ms CPU\n",
                   rep + 1, b.k->name, t1 - t0, c1 - c0);
            tlc_diag_free(&d);
            kb_free(&b);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_kernel),
        cmocka_unit_test(test_reduce_kernel),
        cmocka_unit_test(test_register_array_no_local_memory),
        cmocka_unit_test(test_joins),
        cmocka_unit_test(test_conversions_and_approx),
        cmocka_unit_test(test_every_node_kind),
        cmocka_unit_test(test_type_matrix),
        cmocka_unit_test(test_parallel_compilations),
        cmocka_unit_test(test_emit_llvm),
        cmocka_unit_test(test_bad_thread_ir),
        cmocka_unit_test(test_ptxas_error),
        cmocka_unit_test(test_codegen_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
