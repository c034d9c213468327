/* libtlrt without a GPU: argument checking and parameter packing
 * (tlrt_plan_launch), float conversions, the behaviour of every entry point
 * when there is no driver, and the driver-facing code against a stand-in
 * libcuda (tests/gpu/fake_libcuda.c) when the build provides it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#ifdef TLRT_FAKE_CUDA
#include <dlfcn.h>
#endif
#include "tlc/runtime.h"

static const char *RMS_META =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel rms\n"
    "// tlc.meta sym M\n"
    "// tlc.meta tensor X float16 [M,4096] align=16\n"
    "// tlc.meta tensor Y float16 [M,4096] align=16\n"
    "// tlc.meta scalar eps float32\n"
    "// tlc.meta scalar rows int32\n"
    "// tlc.meta grid (ceildiv M rows) 1 1\n"
    "// tlc.meta threads 128 1 1\n"
    "// tlc.meta smem 0\n"
    "// tlc.meta end\n";

static tlrt_module_meta parse(const char *text) {
    tlrt_module_meta m;
    char err[256];
    if (!tlrt_meta_parse(text, strlen(text), &m, err, sizeof err)) fail_msg("metadata: %s", err);
    return m;
}

/* X and Y of [shape] at fixed addresses, eps, rows: RMS_META's arguments. */
static void rms_args(tlrt_arg *args, int64_t *shape, int rows) {
    args[0] = tlrt_arg_tensor(0x10000, TLRT_F16, 2, shape, NULL);
    args[1] = tlrt_arg_tensor(0x20000, TLRT_F16, 2, shape, NULL);
    args[2] = tlrt_arg_float(TLRT_F32, 1e-5);
    args[3] = tlrt_arg_int(TLRT_I32, rows);
}

static void plan_packs_params_in_abi_order(void **state) {
    (void)state;
    tlrt_module_meta m = parse(RMS_META);
    int64_t shape[] = {300, 4096};
    tlrt_arg args[4];
    rms_args(args, shape, 4);
    tlrt_launch_plan plan;
    char err[512];
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.grid[0], 75);
    assert_int_equal(plan.grid[1], 1);
    assert_int_equal(plan.grid[2], 1);
    assert_int_equal(plan.block[0], 128);
    assert_false(plan.empty);
    assert_int_equal(plan.sym_values[0], 300);
    /* tensors, syms, scalars */
    assert_int_equal(plan.nslots, 5);
    assert_int_equal(plan.slots[0], 0x10000);
    assert_int_equal(plan.slots[1], 0x20000);
    assert_int_equal(plan.slots[2], 300);
    float eps;
    memcpy(&eps, &plan.slots[3], 4);
    assert_true(eps == 1e-5f);
    int32_t rows;
    memcpy(&rows, &plan.slots[4], 4);
    assert_int_equal(rows, 4);
    void *params[TLRT_MAX_PTX_PARAMS];
    assert_int_equal(tlrt_plan_param_pointers(&plan, params), 5);
    assert_ptr_equal(params[2], &plan.slots[2]);
    /* Explicit row-major strides are accepted; so are odd strides on extent-1 dims. */
    int64_t strides[] = {4096, 1}, one[] = {1, 4096}, odd[] = {7, 1};
    args[0].strides = strides;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    args[0].shape = args[1].shape = one;
    args[0].strides = odd;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.grid[0], 1);
    /* Zero rows: nothing to launch, not an error. */
    int64_t none[] = {0, 4096};
    args[0] = tlrt_arg_tensor(0, TLRT_F16, 2, none, NULL);
    args[1] = tlrt_arg_tensor(0, TLRT_F16, 2, none, NULL);
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_true(plan.empty);
    tlrt_meta_free(&m);
}

/* "cluster E E E": evaluated per launch like the grid, checked against it
 * (each divides its axis, at most 8 blocks in all), kept through
 * formatting; refused with persistent and out of order. */
static void plan_cluster(void **state) {
    (void)state;
    static const char *CL_META =
        "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
        "// tlc.meta kernel cl\n"
        "// tlc.meta sym M\n"
        "// tlc.meta tensor X float16 [M,4096] align=16\n"
        "// tlc.meta tensor Y float16 [M,4096] align=16\n"
        "// tlc.meta scalar eps float32\n"
        "// tlc.meta scalar rows int32\n"
        "// tlc.meta grid (ceildiv M 64) rows 1\n"
        "// tlc.meta cluster (- 2 (% (ceildiv M 64) 2)) 1 1\n"
        "// tlc.meta threads 384 1 1\n"
        "// tlc.meta smem 0\n"
        "// tlc.meta end\n";
    tlrt_module_meta m = parse(CL_META);
    assert_true(m.kernels[0].has_cluster);
    int64_t shape[] = {256, 4096};
    tlrt_arg args[4];
    rms_args(args, shape, 33);
    tlrt_launch_plan plan;
    char err[512];
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.grid[0], 4);
    assert_int_equal(plan.cluster[0], 2);
    assert_int_equal(plan.cluster[1], 1);
    assert_int_equal(plan.cluster[2], 1);
    shape[0] = 192; /* 3 head blocks: clusters of 1 */
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.cluster[0], 1);
    char *again = tlrt_meta_format(&m, err, sizeof err);
    assert_non_null(again);
    assert_non_null(strstr(again, "// tlc.meta cluster (- 2 (% (ceildiv M 64) 2)) 1 1\n"));
    free(again);
    tlrt_meta_free(&m);
    /* a cluster that does not divide the grid, or holds more than 8 blocks */
    static const struct { const char *line, *msg; } bad[] = {
        {"// tlc.meta cluster 2 1 1\n", "does not divide the grid's 3 blocks"},
        {"// tlc.meta cluster 1 (+ rows 0) 1\n", "is not between 1 and 8"},
        {"// tlc.meta cluster 3 3 1\n", "at most 8 in all"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        const char *at = strstr(CL_META, "// tlc.meta cluster");
        const char *next = strchr(at, '\n') + 1;
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - CL_META), CL_META, bad[i].line, next);
        if (i == 2) { /* a grid of 3 x 33 */
            char *g = strstr(text, "(ceildiv M 64) rows 1");
            memcpy(g, "3 (* 3 rows) 1       ", 21);
        }
        m = parse(text);
        assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
        if (!strstr(err, bad[i].msg)) fail_msg("case %zu: %s", i, err);
        tlrt_meta_free(&m);
    }
    /* refused: with persistent; before the grid line */
    char text[1024];
    snprintf(text, sizeof text, "%s", CL_META);
    char *end = strstr(text, "// tlc.meta end");
    strcpy(end, "// tlc.meta persistent 1\n// tlc.meta end\n");
    assert_false(tlrt_meta_parse(text, strlen(text), &m, err, sizeof err));
    assert_non_null(strstr(err, "cluster with persistent"));
    tlrt_meta_free(&m);
    const char *g = strstr(CL_META, "// tlc.meta grid"), *c = strstr(CL_META, "// tlc.meta cluster");
    const char *after = strchr(c, '\n') + 1;
    snprintf(text, sizeof text, "%.*s%.*s%.*s%s", (int)(g - CL_META), CL_META, (int)(after - c), c, (int)(c - g), g, after);
    assert_false(tlrt_meta_parse(text, strlen(text), &m, err, sizeof err));
    assert_non_null(strstr(err, "after the grid line"));
    tlrt_meta_free(&m);
}

typedef struct bad_case {
    const char *what;
    void (*edit)(tlrt_arg *args, int *nargs);
    const char *expect;
} bad_case;

static int64_t S300[] = {300, 4096}, S301[] = {301, 4096}, S_WIDE[] = {300, 4097}, S_NEG[] = {-1, 4096},
               S_BIG[] = {(int64_t)1 << 32, 4096}, STR_T[] = {1, 300}, S1[] = {300};
static void e_count(tlrt_arg *a, int *n) { (void)a; *n = 3; }
static void e_kind(tlrt_arg *a, int *n) { (void)n; a[2] = tlrt_arg_tensor(0x30000, TLRT_F32, 1, S1, NULL); }
static void e_kind2(tlrt_arg *a, int *n) { (void)n; a[0] = tlrt_arg_float(TLRT_F16, 1.0); }
static void e_dtype(tlrt_arg *a, int *n) { (void)n; a[1].dtype = TLRT_BF16; }
static void e_sdtype(tlrt_arg *a, int *n) { (void)n; a[2].dtype = TLRT_F16; }
static void e_rank(tlrt_arg *a, int *n) { (void)n; a[1].rank = 1; a[1].shape = S1; }
static void e_const(tlrt_arg *a, int *n) { (void)n; a[1].shape = S_WIDE; }
static void e_sym(tlrt_arg *a, int *n) { (void)n; a[1].shape = S301; }
static void e_neg(tlrt_arg *a, int *n) { (void)n; a[0].shape = S_NEG; }
static void e_big(tlrt_arg *a, int *n) { (void)n; a[0].shape = a[1].shape = S_BIG; }
static void e_strides(tlrt_arg *a, int *n) { (void)n; a[0].strides = STR_T; }
static void e_align(tlrt_arg *a, int *n) { (void)n; a[1].ptr += 8; }
static void e_null(tlrt_arg *a, int *n) { (void)n; a[0].ptr = 0; }
static void e_range(tlrt_arg *a, int *n) { (void)n; a[3].i = (int64_t)1 << 40; }
static void e_zero_rows(tlrt_arg *a, int *n) { (void)n; a[3].i = 0; }
static void e_neg_grid(tlrt_arg *a, int *n) { (void)n; a[3].i = -1; }
static void e_badkind(tlrt_arg *a, int *n) { (void)n; a[0].kind = (tlrt_arg_kind)7; }

static void plan_rejects_misuse(void **state) {
    (void)state;
    tlrt_module_meta m = parse(RMS_META);
    static const bad_case cases[] = {
        {"count", e_count, "takes 4 arguments (float16 X[M,4096], float16 Y[M,4096], float32 eps, int32 rows), got 3"},
        {"kind", e_kind, "expects a scalar, got a tensor"},
        {"kind2", e_kind2, "expects a tensor, got a scalar"},
        {"dtype", e_dtype, "argument 1 ('Y'): dtype bfloat16, but the kernel expects float16"},
        {"scalar dtype", e_sdtype, "dtype float16, but the kernel expects float32"},
        {"rank", e_rank, "rank 1, but the kernel expects rank 2"},
        {"const dim", e_const, "shape [300,4097] does not match float16 Y[M,4096]"},
        {"sym", e_sym, "dim 0 is 301, but symbolic dim 'M' was bound to 300 by argument 0 ('X') dim 0"},
        {"negative", e_neg, "dim 0 is negative"},
        {"int32 sym", e_big, "exceeds 2^31-1"},
        {"strides", e_strides, "not contiguous: strides [1,300] for shape [300,4096] (the kernel computes addresses into "
                               "this tensor from its shape, so it needs row-major [4096,1]"},
        {"align", e_align, "pointer 0x20008 is not 16-byte aligned"},
        {"null", e_null, "null device pointer"},
        {"range", e_range, "out of range for int32"},
        {"division by zero", e_zero_rows, "grid x: division by zero"},
        {"negative grid", e_neg_grid, "grid x = (ceildiv M rows) evaluates to -300"},
        {"bad kind", e_badkind, "bad argument kind"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tlrt_arg args[] = {
            tlrt_arg_tensor(0x10000, TLRT_F16, 2, S300, NULL),
            tlrt_arg_tensor(0x20000, TLRT_F16, 2, S300, NULL),
            tlrt_arg_float(TLRT_F32, 1e-5),
            tlrt_arg_int(TLRT_I32, 4),
        };
        int n = 4;
        cases[c].edit(args, &n);
        tlrt_launch_plan plan;
        char err[512] = "";
        tlrt_status st = tlrt_plan_launch(&m.kernels[0], args, n, &plan, err, sizeof err);
        if (st != TLRT_ERROR_ARG_MISMATCH) fail_msg("%s: status %s (%s)", cases[c].what, tlrt_status_string(st), err);
        if (!strstr(err, cases[c].expect)) fail_msg("%s: message '%s' lacks '%s'", cases[c].what, err, cases[c].expect);
        if (!strstr(err, "kernel 'rms'")) fail_msg("%s: message '%s' does not name the kernel", cases[c].what, err);
    }
    tlrt_launch_plan plan;
    char err[128];
    assert_int_equal(tlrt_plan_launch(NULL, NULL, 0, &plan, err, sizeof err), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], NULL, 4, &plan, err, sizeof err), TLRT_ERROR_INVALID_ARGUMENT);
    tlrt_meta_free(&m);
}

static const char *TMA_META =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel tma\n"
    "// tlc.meta sym M\n"
    "// tlc.meta sym N\n"
    "// tlc.meta tensor A bfloat16 [M,N] align=16\n"
    "// tlc.meta scalar small_ok int8\n"
    "// tlc.meta scalar flag bool\n"
    "// tlc.meta scalar h float16\n"
    "// tlc.meta tmap A box=[128,64] estrides=[1,1] swizzle=128B l2=256B oob=zero\n"
    "// tlc.meta grid (ceildiv M 128) (ceildiv N 64) 1\n"
    "// tlc.meta threads 384 1 1\n"
    "// tlc.meta smem 200000\n"
    "// tlc.meta end\n";

static void plan_tmap(void **state) {
    (void)state;
    tlrt_module_meta m = parse(TMA_META);
    int64_t shape[] = {1000, 512};
    tlrt_arg args[] = {tlrt_arg_tensor(0x40000, TLRT_BF16, 2, shape, NULL), tlrt_arg_int(TLRT_I8, -3),
                       tlrt_arg_int(TLRT_BOOL, 1), tlrt_arg_float(TLRT_F16, 1.5)};
    tlrt_launch_plan plan;
    char err[512];
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.grid[0], 8);
    assert_int_equal(plan.grid[1], 8);
    assert_int_equal(plan.smem_bytes, 200000);
    assert_int_equal(plan.ntmaps, 1);
    const tlrt_tmap_request *t = &plan.tmaps[0];
    assert_int_equal(t->rank, 2);
    assert_int_equal(t->global_dim[0], 512); /* innermost first */
    assert_int_equal(t->global_dim[1], 1000);
    assert_int_equal(t->global_strides[0], 1024);
    assert_int_equal(t->box[0], 64);
    assert_int_equal(t->box[1], 128);
    assert_int_equal(t->swizzle, TLRT_SWIZZLE_128B);
    assert_int_equal(t->l2, TLRT_L2_256B);
    assert_int_equal(t->address, 0x40000);
    /* pointer, M, N, int8, bool, half; then the tmap */
    assert_int_equal(plan.nslots, 6);
    assert_int_equal(plan.slots[1], 1000);
    assert_int_equal(plan.slots[2], 512);
    assert_int_equal((int8_t)(plan.slots[3] & 0xff), -3);
    assert_int_equal(plan.slots[4], 1);
    assert_int_equal(plan.slots[5], 0x3e00); /* 1.5 in half */
    void *params[TLRT_MAX_PTX_PARAMS];
    assert_int_equal(tlrt_plan_param_pointers(&plan, params), 7);
    assert_ptr_equal(params[6], plan.tmap_storage[0]);
    assert_int_equal((uintptr_t)params[6] % 64, 0);
    /* A row of 100 bf16 = 200 bytes is not a multiple of 16: TMA cannot describe it. */
    int64_t odd[] = {1000, 100};
    args[0].shape = odd;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "TMA needs strides that are multiples of 16 bytes"));
    assert_non_null(strstr(err, "200 bytes (100 elements of bfloat16)"));
    args[0].shape = shape;
    args[2].i = 2;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "out of range for bool"));
    args[2].i = 1;
    /* A tensor the kernel addresses itself must be row-major: padded rows are refused... */
    int64_t padded[] = {520, 1};
    args[0].strides = padded;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "not contiguous"));
    assert_non_null(strstr(err, "marked strided"));
    tlrt_meta_free(&m);
    /* ...while one reached through its tensor map only ("strided") takes them:
     * rows of 520 elements (1040 bytes) */
    char *text = strdup(TMA_META);
    char *at = strstr(text, "align=16\n");
    assert_non_null(at);
    char *meta = malloc(strlen(text) + 16);
    memcpy(meta, text, (size_t)(at - text) + 8);
    strcpy(meta + (at - text) + 8, " strided");
    strcat(meta, at + 8);
    m = parse(meta);
    assert_true(m.kernels[0].params[0].strided);
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.tmaps[0].global_strides[0], 1040);
    assert_int_equal(plan.tmaps[0].global_dim[0], 512);
    int64_t odd_row[] = {513, 1}, inner[] = {1024, 2};
    args[0].strides = odd_row; /* 1026 bytes */
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "multiples of 16 bytes"));
    args[0].strides = inner;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 4, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "innermost dim contiguous"));
    /* the flag survives formatting */
    char *again = tlrt_meta_format(&m, err, sizeof err);
    assert_non_null(again);
    assert_non_null(strstr(again, "align=16 strided\n"));
    free(again);
    tlrt_meta_free(&m);
    free(meta);
    free(text);
}

/* A convolution's maps (tests/ports/example_convolution.py on sm_90a): the
 * image in TMA's im2col mode, the filters through a view of them as a
 * matrix. */
static const char *CONV_META =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel conv\n"
    "// tlc.meta sym N\n"
    "// tlc.meta sym C\n"
    "// tlc.meta sym H\n"
    "// tlc.meta sym W\n"
    "// tlc.meta sym F\n"
    "// tlc.meta sym K\n"
    "// tlc.meta tensor data float16 [N,H,W,C] align=16 strided\n"
    "// tlc.meta tensor kernel float16 [K,K,C,F] align=16\n"
    "// tlc.meta scalar P int32\n"
    "// tlc.meta tmap data box=[1,1,64,32] estrides=[1,2,2,1] swizzle=64B l2=128B oob=zero mode=im2col\n"
    "// tlc.meta im2col (- 0 P) (- P (* 2 (- K 1))) (* 2 (- K 1))\n"
    "// tlc.meta tmap kernel box=[32,64] estrides=[1,1] swizzle=128B l2=128B oob=zero\n"
    "// tlc.meta view (* (* K K) C) F\n"
    "// tlc.meta grid 1 1 1\n"
    "// tlc.meta threads 384 1 1\n"
    "// tlc.meta smem 0\n"
    "// tlc.meta end\n";

static void plan_im2col_and_view(void **state) {
    (void)state;
    tlrt_module_meta m = parse(CONV_META);
    char err[512];
    char *again = tlrt_meta_format(&m, err, sizeof err);
    assert_non_null(again);
    assert_string_equal(again, CONV_META);
    free(again);
    int64_t img[] = {2, 30, 20, 64}, filt[] = {3, 3, 64, 128};
    tlrt_arg args[] = {tlrt_arg_tensor(0x40000, TLRT_F16, 4, img, NULL), tlrt_arg_tensor(0x80000, TLRT_F16, 4, filt, NULL),
                       tlrt_arg_int(TLRT_I32, 3)};
    tlrt_launch_plan plan;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 3, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.ntmaps, 2);
    const tlrt_tmap_request *t = &plan.tmaps[0];
    assert_true(t->im2col);
    assert_int_equal(t->global_dim[0], 64); /* C, W, H, N */
    assert_int_equal(t->global_dim[3], 2);
    assert_int_equal(t->global_strides[0], 128);
    assert_int_equal(t->global_strides[1], 128 * 20);
    assert_int_equal(t->box[0], 32); /* channels, then pixels */
    assert_int_equal(t->box[1], 64);
    assert_int_equal(t->elem_strides[1], 2);
    assert_int_equal(t->corner_lower[0], -3);
    assert_int_equal(t->corner_upper[1], 3 - 4);
    /* the filters as a [K * K * C, F] matrix */
    t = &plan.tmaps[1];
    assert_false(t->im2col);
    assert_int_equal(t->rank, 2);
    assert_int_equal(t->global_dim[0], 128);
    assert_int_equal(t->global_dim[1], 9 * 64);
    assert_int_equal(t->global_strides[0], 256);
    /* corners beyond TMA's range for a 4-d image: refused with what they are */
    args[2].i = 130;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 3, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "im2col mode cannot load 'data'"));
    assert_non_null(strstr(err, "[-128, 127]"));
    assert_non_null(strstr(err, "-130"));
    args[2].i = 1;
    int64_t big_filt[] = {66, 66, 64, 128}; /* the upper corner 1 - 2 * 65 */
    args[1].shape = big_filt;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 3, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "im2col mode"));
    args[1].shape = filt;
    /* metadata built by hand that names no expressions: refused, nothing read past them */
    m.kernels[0].tmaps[0].im2col_exprs = 0;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 3, &plan, err, sizeof err), TLRT_ERROR_INVALID_METADATA);
    m.kernels[0].tmaps[0].im2col_exprs = 1;
    m.kernels[0].tmaps[1].view = m.kernels[0].nmap_exprs;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 3, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "names no expressions"));
    tlrt_meta_free(&m);
    /* a view with more elements than its tensor is refused (the map would read past it) */
    char *text = strdup(CONV_META);
    char *at = strstr(text, "(* (* K K) C) F");
    assert_non_null(at);
    memcpy(at, "(* (* K K) F) F", 15);
    m = parse(text);
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], args, 3, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "more elements than the tensor's"));
    tlrt_meta_free(&m);
    free(text);
}

/* Every entry point takes NULL for any pointer argument and answers with an
 * error status (or nothing to do), never a crash (run under ASan + UBSan). */
static void null_arguments(void **state) {
    (void)state;
    char buf[32];
    float ms;
    tlrt_devptr p;
    tlrt_stream *st;
    tlrt_module *m;
    tlrt_kernel *k;
    tlrt_event *e;
    tlrt_device_props pr;
    assert_int_not_equal(tlrt_init(NULL, 0), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_init_ex(NULL, NULL), TLRT_SUCCESS);
    tlrt_destroy(NULL);
    assert_non_null(tlrt_last_error(NULL));
    assert_int_not_equal(tlrt_device_properties(NULL, &pr), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_device_arch(NULL, buf, sizeof buf), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_malloc(NULL, 16, &p), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_memcpy_htod(NULL, 0, NULL, 16), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_memcpy_dtoh(NULL, NULL, 0, 16), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_memcpy_dtod(NULL, 0, 0, 16), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_stream_create(NULL, &st), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_stream_from_handle(NULL, NULL, &st), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_synchronize(NULL), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_module_load_ptx(NULL, NULL, 0, &m), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_module_load_cubin(NULL, NULL, 0, NULL, 0, &m), TLRT_SUCCESS);
    void *img = NULL;
    size_t img_len = 0;
    assert_int_not_equal(tlrt_compile_ptx(NULL, NULL, 0, &img, &img_len), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_kernel_get(NULL, NULL, &k), TLRT_SUCCESS);
    assert_null(tlrt_kernel_metadata(NULL));
    assert_int_not_equal(tlrt_launch(NULL, NULL, 0, NULL), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_launch_raw(NULL, NULL, NULL, 0, NULL, NULL), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_plan_launch(NULL, NULL, 0, NULL, NULL, 0), TLRT_SUCCESS);
    assert_int_equal(tlrt_plan_param_pointers(NULL, NULL), -1);
    assert_int_not_equal(tlrt_event_create(NULL, &e), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_event_record(NULL, NULL, NULL), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_event_synchronize(NULL, NULL), TLRT_SUCCESS);
    assert_int_not_equal(tlrt_event_elapsed_ms(NULL, NULL, NULL, &ms), TLRT_SUCCESS);
    /* releasing nothing is not an error */
    tlrt_free(NULL, 0);
    tlrt_stream_destroy(NULL, NULL);
    tlrt_stream_synchronize(NULL, NULL);
    tlrt_module_unload(NULL, NULL);
    tlrt_event_destroy(NULL, NULL);
}

static void float_conversions(void **state) {
    (void)state;
    assert_int_equal(tlrt_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(tlrt_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(tlrt_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(tlrt_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(tlrt_f32_to_f16(5.9604645e-8f), 0x0001); /* 2^-24 */
    assert_int_equal(tlrt_f32_to_f16(2.0e-8f), 0x0000);
    assert_int_equal(tlrt_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00); /* tie -> even */
    assert_int_equal(tlrt_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);
    assert_int_equal(tlrt_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(tlrt_f32_to_bf16(-3.0f), 0xc040);
    for (int h = 0; h < 0x7c00; h += 7) {
        assert_int_equal(tlrt_f32_to_f16(tlrt_f16_to_f32((uint16_t)h)), h);
        assert_int_equal(tlrt_f32_to_bf16(tlrt_bf16_to_f32((uint16_t)h)), h);
    }
}

/* Every entry point on a context without a driver reports NO_DRIVER. */
static void check_all_entry_points(tlrt_context *ctx, tlrt_status want) {
    tlrt_device_props p;
    char buf[32];
    tlrt_devptr d = 0x1000;
    tlrt_stream *s = NULL;
    tlrt_event *e = NULL;
    tlrt_module *mod = NULL;
    float ms;
    char host[16];
    assert_int_equal(tlrt_device_properties(ctx, &p), want);
    assert_int_equal(tlrt_device_arch(ctx, buf, sizeof buf), want);
    assert_int_equal(tlrt_malloc(ctx, 16, &d), want);
    assert_int_equal(tlrt_free(ctx, 0x1000), want);
    assert_int_equal(tlrt_memcpy_htod(ctx, 0x1000, host, 16), want);
    assert_int_equal(tlrt_memcpy_dtoh(ctx, host, 0x1000, 16), want);
    assert_int_equal(tlrt_memcpy_dtod(ctx, 0x1000, 0x2000, 16), want);
    assert_int_equal(tlrt_memset_d8(ctx, 0x1000, 0, 16), want);
    assert_int_equal(tlrt_stream_create(ctx, &s), want);
    assert_int_equal(tlrt_stream_destroy(ctx, s), want);
    assert_int_equal(tlrt_stream_from_handle(ctx, NULL, &s), want);
    assert_int_equal(tlrt_stream_synchronize(ctx, NULL), want);
    assert_int_equal(tlrt_synchronize(ctx), want);
    assert_int_equal(tlrt_module_load_ptx(ctx, RMS_META, strlen(RMS_META), &mod), want);
    assert_null(mod);
    assert_int_equal(tlrt_module_load_cubin(ctx, "\x7f" "ELF....", 8, NULL, 0, &mod), want);
    void *img = NULL;
    size_t img_len = 1;
    assert_int_equal(tlrt_compile_ptx(ctx, RMS_META, strlen(RMS_META), &img, &img_len), want);
    assert_null(img);
    assert_int_equal(img_len, 0);
    assert_int_equal(tlrt_module_unload(ctx, NULL), want);
    assert_int_equal(tlrt_event_create(ctx, &e), want);
    assert_int_equal(tlrt_event_destroy(ctx, e), want);
    assert_int_equal(tlrt_event_record(ctx, e, NULL), want);
    assert_int_equal(tlrt_event_synchronize(ctx, e), want);
    assert_int_equal(tlrt_event_elapsed_ms(ctx, e, e, &ms), want);
}

static void no_driver(void **state) {
    (void)state;
    tlrt_context *ctx = NULL;
    tlrt_init_options o = {0, "/nonexistent/libcuda.so.1"};
    assert_int_equal(tlrt_init_ex(&ctx, &o), TLRT_ERROR_NO_DRIVER);
    assert_non_null(ctx);
    assert_non_null(strstr(tlrt_last_error(ctx), "no CUDA driver"));
    check_all_entry_points(ctx, TLRT_ERROR_NO_DRIVER);
    assert_non_null(strstr(tlrt_last_error(ctx), "no CUDA driver"));
    tlrt_destroy(ctx);

    /* The real thing: on a machine without libcuda the message is exact. */
    ctx = NULL;
    tlrt_status st = tlrt_init(&ctx, 0);
    if (st == TLRT_ERROR_NO_DRIVER) {
        assert_string_equal(tlrt_last_error(ctx), "no CUDA driver (libcuda.so.1 not found)");
        check_all_entry_points(ctx, TLRT_ERROR_NO_DRIVER);
        assert_string_equal(tlrt_last_error(ctx), "no CUDA driver (libcuda.so.1 not found)");
    } else {
        print_message("libcuda.so.1 present here (tlrt_init: %s)\n", tlrt_status_string(st));
    }
    tlrt_destroy(ctx);

    /* NULL objects. */
    assert_int_equal(tlrt_init(NULL, 0), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlrt_malloc(NULL, 16, NULL), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlrt_kernel_get(NULL, "k", NULL), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlrt_launch(NULL, NULL, 0, NULL), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlrt_launch_raw(NULL, NULL, NULL, 0, NULL, NULL), TLRT_ERROR_INVALID_ARGUMENT);
    assert_null(tlrt_kernel_metadata(NULL));
    assert_int_equal(tlrt_function_get(NULL, "f", NULL), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlrt_launch_function(NULL, NULL, 0, NULL), TLRT_ERROR_INVALID_ARGUMENT);
    assert_null(tlrt_function_metadata(NULL));
    assert_non_null(tlrt_last_error(NULL));
    tlrt_destroy(NULL);
    assert_string_equal(tlrt_status_string(TLRT_ERROR_NO_DRIVER), "TLRT_ERROR_NO_DRIVER");
    assert_string_equal(tlrt_status_string((tlrt_status)1234), "TLRT_ERROR_UNKNOWN");
}

static void bad_device_env(void **state) {
    (void)state;
    setenv("TLC_DEVICE", "1x", 1);
    tlrt_context *ctx = NULL;
    assert_int_equal(tlrt_init(&ctx, -1), TLRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tlrt_last_error(ctx), "TLC_DEVICE='1x'"));
    assert_int_equal(tlrt_synchronize(ctx), TLRT_ERROR_INVALID_ARGUMENT);
    tlrt_destroy(ctx);
    unsetenv("TLC_DEVICE");
}

/* A function of two kernels (split_logsumexp.tl's shape): f_k0 writes the
 * workspaces, f_k1 reads them. */
static const char *FN_META =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel f_k0\n// tlc.meta sym M\n// tlc.meta tensor X float32 [M,64] align=16\n"
    "// tlc.meta scalar s float32\n// tlc.meta tensor w float32 [4,M] align=16\n"
    "// tlc.meta tensor v int8 [M] align=16\n"
    "// tlc.meta grid M 1 1\n// tlc.meta threads 64 1 1\n"
    "// tlc.meta kernel f_k1\n// tlc.meta sym M\n// tlc.meta tensor Y float32 [M] align=16\n"
    "// tlc.meta tensor w float32 [4,M] align=16\n// tlc.meta grid M 1 1\n// tlc.meta threads 64 1 1\n"
    "// tlc.meta function f\n// tlc.meta sym M\n// tlc.meta tensor X float32 [M,64] align=16\n"
    "// tlc.meta tensor Y float32 [M] align=16\n// tlc.meta scalar s float32\n"
    "// tlc.meta workspace w float32 [4,M]\n// tlc.meta workspace v int8 [M]\n"
    "// tlc.meta launch f_k0\n// tlc.meta launch f_k1\n// tlc.meta check 2:5 (< M 1000)\n"
    "// tlc.meta end\n";

/* tlrt_plan_function binds the function's arguments with the kernels'
 * rules, sizes and places the workspaces, and gives each kernel its
 * arguments by name. */
static void plan_function(void **state) {
    (void)state;
    tlrt_module_meta m;
    char err[1200];
    if (!tlrt_meta_parse(FN_META, strlen(FN_META), &m, err, sizeof err)) fail_msg("%s", err);
    const tlrt_function_meta *f = tlrt_meta_find_function(&m, "f");
    assert_non_null(f);
    int64_t xs[2] = {10, 64}, ys[1] = {10};
    tlrt_arg args[] = {tlrt_arg_tensor(0x10000, TLRT_F32, 2, xs, NULL), tlrt_arg_tensor(0x20000, TLRT_F32, 1, ys, NULL),
                       tlrt_arg_float(TLRT_F32, 2.0)};
    tlrt_function_plan plan;
    assert_int_equal(tlrt_plan_function(f, args, 3, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.sym_values[0], 10);
    assert_int_equal(plan.ws_shape[0][0], 4);
    assert_int_equal(plan.ws_shape[0][1], 10);
    assert_int_equal(plan.ws_offset[0], 0);
    assert_int_equal(plan.ws_offset[1], 256); /* 160 bytes, then 256-aligned */
    assert_int_equal(plan.ws_bytes, 512);
    tlrt_arg kargs[TLRT_MAX_PARAMS];
    assert_int_equal(tlrt_function_kernel_args(f, &m.kernels[0], &plan, args, 3, 0x100000, kargs, err, sizeof err), 4);
    assert_int_equal(kargs[0].ptr, 0x10000);
    assert_true(kargs[1].kind == TLRT_ARG_SCALAR && kargs[1].f == 2.0);
    assert_int_equal(kargs[2].ptr, 0x100000);
    assert_int_equal(kargs[2].shape[1], 10);
    assert_int_equal(kargs[3].ptr, 0x100000 + 256);
    assert_int_equal(kargs[3].dtype, TLRT_I8);
    tlrt_launch_plan lp;
    assert_int_equal(tlrt_plan_launch(&m.kernels[0], kargs, 4, &lp, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(tlrt_function_kernel_args(f, &m.kernels[1], &plan, args, 3, 0x100000, kargs, err, sizeof err), 2);
    assert_int_equal(kargs[0].ptr, 0x20000);
    assert_int_equal(kargs[1].ptr, 0x100000);

    /* no rows: empty workspaces still get an address */
    xs[0] = ys[0] = 0;
    assert_int_equal(tlrt_plan_function(f, args, 3, &plan, err, sizeof err), TLRT_SUCCESS);
    assert_int_equal(plan.ws_bytes, 256);
    /* the function's rules: shapes agree, launch checks hold, the count is right */
    xs[0] = 10, ys[0] = 11;
    assert_int_equal(tlrt_plan_function(f, args, 3, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "function 'f', argument 1 ('Y')"));
    xs[0] = ys[0] = 1000;
    assert_int_equal(tlrt_plan_function(f, args, 3, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(err, "2:5"));
    assert_int_equal(tlrt_plan_function(f, args, 2, &plan, err, sizeof err), TLRT_ERROR_ARG_MISMATCH);
    assert_int_equal(tlrt_plan_function(NULL, args, 3, &plan, err, sizeof err), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlrt_function_kernel_args(f, &m.kernels[0], &plan, args, 2, 0, kargs, err, sizeof err), -1);
    tlrt_meta_free(&m);
}

#ifdef TLRT_FAKE_CUDA
typedef struct fake_launch {
    unsigned grid[3], block[3], smem;
    int nparams;
    uint64_t params[64];
    uint8_t tmap[128];
    int smem_attr;
    int launches;
    void *stream;
} fake_launch;

static const char *FAKE_PTX =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel rms\n"
    "// tlc.meta sym M\n"
    "// tlc.meta tensor X float16 [M,4096] align=16\n"
    "// tlc.meta tensor Y float16 [M,4096] align=16\n"
    "// tlc.meta scalar eps float32\n"
    "// tlc.meta scalar rows int32\n"
    "// tlc.meta grid (ceildiv M rows) 1 1\n"
    "// tlc.meta threads 128 1 1\n"
    "// tlc.meta kernel tma\n"
    "// tlc.meta sym M\n"
    "// tlc.meta sym N\n"
    "// tlc.meta tensor A bfloat16 [M,N] align=16\n"
    "// tlc.meta tmap A box=[128,64] swizzle=128B\n"
    "// tlc.meta grid (ceildiv M 128) (ceildiv N 64) 1\n"
    "// tlc.meta threads 384 1 1\n"
    "// tlc.meta smem 200000\n"
    "// tlc.meta end\n"
    ".version 8.0\n.target sm_90a\n.address_size 64\n"
    ".visible .entry rms(.param .u64 X, .param .u64 Y, .param .s64 M, .param .f32 eps, .param .s32 rows)\n{ ret; }\n"
    ".visible .entry tma(.param .u64 A, .param .s64 M, .param .s64 N, .param .align 128 .b8 A_tmap[128])\n{ ret; }\n"
    ".visible .entry plain(.param .u64 p)\n{ ret; }\n";

static void with_fake_driver(void **state) {
    (void)state;
    void *fake = dlopen(TLRT_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(fake);
    const fake_launch *(*last_launch)(void);
    int (*live_allocs)(void), (*tmap_calls)(void);
    void *p = dlsym(fake, "fake_last_launch");
    memcpy(&last_launch, &p, sizeof p);
    p = dlsym(fake, "fake_live_allocs");
    memcpy(&live_allocs, &p, sizeof p);
    p = dlsym(fake, "fake_tmap_calls");
    memcpy(&tmap_calls, &p, sizeof p);
    assert_non_null(last_launch);

    tlrt_context *ctx;
    tlrt_init_options o = {0, TLRT_FAKE_CUDA};
    assert_int_equal(tlrt_init_ex(&ctx, &o), TLRT_SUCCESS);
    tlrt_device_props props;
    assert_int_equal(tlrt_device_properties(ctx, &props), TLRT_SUCCESS);
    assert_string_equal(props.name, "Fake H100");
    assert_int_equal(props.sm, 90);
    assert_int_equal(props.sm_count, 132);
    assert_int_equal(props.max_smem_per_block_optin, 232448);
    char arch[16];
    assert_int_equal(tlrt_device_arch(ctx, arch, sizeof arch), TLRT_SUCCESS);
    assert_string_equal(arch, "sm_90a");

    /* memory */
    tlrt_devptr x, y;
    assert_int_equal(tlrt_malloc(ctx, 300 * 4096 * 2, &x), TLRT_SUCCESS);
    assert_int_equal(tlrt_malloc(ctx, 300 * 4096 * 2, &y), TLRT_SUCCESS);
    uint8_t h[64], back[64];
    for (int i = 0; i < 64; i++) h[i] = (uint8_t)i;
    assert_int_equal(tlrt_memcpy_htod(ctx, x, h, 64), TLRT_SUCCESS);
    assert_int_equal(tlrt_memcpy_dtod(ctx, y, x, 64), TLRT_SUCCESS);
    assert_int_equal(tlrt_memset_d8(ctx, y, 0xee, 8), TLRT_SUCCESS);
    assert_int_equal(tlrt_memcpy_dtoh(ctx, back, y, 64), TLRT_SUCCESS);
    assert_int_equal(back[7], 0xee);
    assert_int_equal(back[8], 8);
    assert_int_equal(back[63], 63);
    tlrt_devptr z = 1;
    assert_int_equal(tlrt_malloc(ctx, 0, &z), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(z, 0);
    assert_int_equal(tlrt_malloc(ctx, (size_t)1 << 50, &z), TLRT_ERROR_OUT_OF_MEMORY);
    assert_non_null(strstr(tlrt_last_error(ctx), "cuMemAlloc of 1125899906842624 bytes"));
    assert_int_equal(live_allocs(), 2);

    /* streams and events */
    tlrt_stream *s;
    tlrt_event *e0, *e1;
    assert_int_equal(tlrt_stream_create(ctx, &s), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_create(ctx, &e0), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_create(ctx, &e1), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_record(ctx, e0, s), TLRT_SUCCESS);

    /* module + launch */
    tlrt_module *mod;
    assert_int_equal(tlrt_module_load_ptx(ctx, FAKE_PTX, strlen(FAKE_PTX), &mod), TLRT_SUCCESS);
    tlrt_kernel *k, *k2;
    assert_int_equal(tlrt_kernel_get(mod, "rms", &k), TLRT_SUCCESS);
    assert_int_equal(tlrt_kernel_get(mod, "rms", &k2), TLRT_SUCCESS);
    assert_ptr_equal(k, k2);
    assert_non_null(tlrt_kernel_metadata(k));
    assert_int_equal(tlrt_kernel_get(mod, "nope", &k2), TLRT_ERROR_NOT_FOUND);
    assert_non_null(strstr(tlrt_last_error(ctx), "no kernel 'nope'"));
    assert_int_equal(tlrt_kernel_get(mod, "plain", &k2), TLRT_ERROR_NOT_FOUND); /* not in the metadata */
    int local = -1;
    assert_int_equal(tlrt_module_local_bytes(mod, &local), TLRT_SUCCESS);
    assert_int_equal(local, 0);
    {
        /* the same module with a kernel the driver reports 1104 bytes of local memory for */
        size_t n = strlen(FAKE_PTX) + 64;
        char *spilled = malloc(n);
        snprintf(spilled, n, "%s// FAKE_LOCAL_BYTES=1104\n", FAKE_PTX);
        tlrt_module *m2;
        assert_int_equal(tlrt_module_load_ptx(ctx, spilled, strlen(spilled), &m2), TLRT_SUCCESS);
        assert_int_equal(tlrt_module_local_bytes(m2, &local), TLRT_SUCCESS);
        assert_int_equal(local, 1104);
        assert_int_equal(tlrt_module_local_bytes(m2, NULL), TLRT_ERROR_INVALID_ARGUMENT);
        assert_int_equal(tlrt_module_unload(ctx, m2), TLRT_SUCCESS);
        free(spilled);
    }
    int64_t shape[] = {300, 4096};
    tlrt_arg args[] = {tlrt_arg_tensor(x, TLRT_F16, 2, shape, NULL), tlrt_arg_tensor(y, TLRT_F16, 2, shape, NULL),
                       tlrt_arg_float(TLRT_F32, 0.5), tlrt_arg_int(TLRT_I32, 2)};
    assert_int_equal(tlrt_launch(k, args, 4, s), TLRT_SUCCESS);
    const fake_launch *L = last_launch();
    assert_int_equal(L->launches, 1);
    assert_int_equal(L->grid[0], 150);
    assert_int_equal(L->block[0], 128);
    assert_int_equal(L->nparams, 5);
    assert_int_equal(L->params[0], x);
    assert_int_equal(L->params[1], y);
    assert_int_equal(L->params[2], 300);
    assert_int_equal(L->params[3] & 0xffffffffu, 0x3f000000u); /* 0.5f */
    assert_int_equal(L->params[4] & 0xffffffffu, 2);
    /* misuse: nothing reaches the driver */
    args[1].dtype = TLRT_BF16;
    assert_int_equal(tlrt_launch(k, args, 4, s), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(tlrt_last_error(ctx), "dtype bfloat16, but the kernel expects float16"));
    assert_int_equal(L->launches, 1);
    args[1].dtype = TLRT_F16;
    shape[0] = 0; /* empty: success without a launch */
    assert_int_equal(tlrt_launch(k, args, 4, s), TLRT_SUCCESS);
    assert_int_equal(L->launches, 1);

    /* TMA + large dynamic shared memory */
    tlrt_kernel *kt;
    assert_int_equal(tlrt_kernel_get(mod, "tma", &kt), TLRT_SUCCESS);
    int64_t ashape[] = {256, 512};
    tlrt_arg targs[] = {tlrt_arg_tensor(x, TLRT_BF16, 2, ashape, NULL)};
    assert_int_equal(tlrt_launch(kt, targs, 1, NULL), TLRT_SUCCESS);
    assert_int_equal(L->launches, 2);
    assert_int_equal(L->smem, 200000);
    assert_int_equal(L->smem_attr, 200000);
    assert_int_equal(L->nparams, 4);
    assert_int_equal(tmap_calls(), 1);
    uint64_t addr;
    memcpy(&addr, L->tmap, 8); /* the fake writes the address into the descriptor */
    assert_int_equal(addr, x);
    assert_int_equal(L->tmap[100], 0xab);
    {
        /* an im2col map goes to cuTensorMapEncodeIm2col, a view's to cuTensorMapEncodeTiled */
        int (*im2col_calls)(void);
        p = dlsym(fake, "fake_im2col_calls");
        memcpy(&im2col_calls, &p, sizeof p);
        size_t n = strlen(CONV_META) + 64;
        char *text = malloc(n);
        snprintf(text, n, "%s.entry conv(\n", CONV_META);
        tlrt_module *mc;
        tlrt_kernel *kc;
        assert_int_equal(tlrt_module_load_ptx(ctx, text, strlen(text), &mc), TLRT_SUCCESS);
        assert_int_equal(tlrt_kernel_get(mc, "conv", &kc), TLRT_SUCCESS);
        int64_t img[] = {2, 30, 20, 64}, filt[] = {3, 3, 64, 128};
        tlrt_arg cargs[] = {tlrt_arg_tensor(x, TLRT_F16, 4, img, NULL), tlrt_arg_tensor(y, TLRT_F16, 4, filt, NULL),
                            tlrt_arg_int(TLRT_I32, 1)};
        assert_int_equal(tlrt_launch(kc, cargs, 3, NULL), TLRT_SUCCESS);
        assert_int_equal(im2col_calls(), 1);
        assert_int_equal(tmap_calls(), 3);
        assert_int_equal(tlrt_module_unload(ctx, mc), TLRT_SUCCESS);
        free(text);
    }

    /* raw launch */
    unsigned grid[3] = {3, 2, 1}, block[3] = {32, 1, 1};
    void *raw[] = {&x};
    tlrt_kernel *kp;
    tlrt_module *mod2;
    const char *nometa = ".version 8.0\n.visible .entry plain(.param .u64 p)\n{ ret; }\n";
    assert_int_equal(tlrt_module_load_ptx(ctx, nometa, strlen(nometa), &mod2), TLRT_SUCCESS);
    assert_int_equal(tlrt_kernel_get(mod2, "plain", &kp), TLRT_SUCCESS);
    assert_null(tlrt_kernel_metadata(kp));
    assert_int_equal(tlrt_launch(kp, NULL, 0, NULL), TLRT_ERROR_INVALID_METADATA);
    assert_non_null(strstr(tlrt_last_error(ctx), "tlrt_launch_raw"));
    assert_int_equal(tlrt_launch_raw(kp, grid, block, 0, NULL, raw), TLRT_SUCCESS);
    assert_int_equal(L->grid[0], 3);
    assert_int_equal(L->grid[1], 2);
    assert_int_equal(L->params[0], x);
    assert_int_equal(tlrt_module_unload(ctx, mod2), TLRT_SUCCESS);

    /* module load errors */
    const char *bad_ptx = "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n// tlc.meta end\nFAKE_PTX_ERROR\n";
    assert_int_equal(tlrt_module_load_ptx(ctx, bad_ptx, strlen(bad_ptx), &mod2), TLRT_ERROR_MODULE_LOAD);
    assert_non_null(strstr(tlrt_last_error(ctx), "CUDA_ERROR_INVALID_PTX"));
    assert_non_null(strstr(tlrt_last_error(ctx), "JIT log:\nptxas fatal : fake syntax error at line 3"));
    const char *bad_meta = "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n// tlc.meta kernel k\n";
    assert_int_equal(tlrt_module_load_ptx(ctx, bad_meta, strlen(bad_meta), &mod2), TLRT_ERROR_INVALID_METADATA);
    assert_non_null(strstr(tlrt_last_error(ctx), "truncated"));
    const char *future = "// tlc.meta v1 tlc=0.1.0 arch=sm_100a\n// tlc.meta end\n";
    assert_int_equal(tlrt_module_load_ptx(ctx, future, strlen(future), &mod2), TLRT_ERROR_UNSUPPORTED);
    assert_non_null(strstr(tlrt_last_error(ctx), "targets sm_100a, the device is sm_90"));
    assert_int_equal(tlrt_module_load_cubin(ctx, "not an elf", 10, NULL, 0, &mod2), TLRT_ERROR_INVALID_ARGUMENT);
    const char nul_ptx[] = "abc\0def";
    assert_int_equal(tlrt_module_load_ptx(ctx, nul_ptx, 7, &mod2), TLRT_ERROR_INVALID_ARGUMENT);

    float ms = 0;
    assert_int_equal(tlrt_event_record(ctx, e1, s), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_synchronize(ctx, e1), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_elapsed_ms(ctx, e0, e1, &ms), TLRT_SUCCESS);
    assert_true(ms == 1.5f);
    assert_int_equal(tlrt_stream_synchronize(ctx, s), TLRT_SUCCESS);
    assert_int_equal(tlrt_synchronize(ctx), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_destroy(ctx, e0), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_destroy(ctx, e1), TLRT_SUCCESS);
    assert_int_equal(tlrt_stream_destroy(ctx, s), TLRT_SUCCESS);
    assert_int_equal(tlrt_module_unload(ctx, mod), TLRT_SUCCESS);
    assert_int_equal(tlrt_free(ctx, x), TLRT_SUCCESS);
    assert_int_equal(tlrt_free(ctx, y), TLRT_SUCCESS);
    assert_int_equal(live_allocs(), 0);
    tlrt_destroy(ctx);
    dlclose(fake);
}

static void *fake_sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    assert_non_null(p);
    return p;
}

/* tlrt_stream_from_handle: launches and events go to the wrapped stream, and
 * destroying the wrapper leaves the stream alone. */
static void external_stream(void **state) {
    (void)state;
    void *fake = dlopen(TLRT_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(fake);
    const fake_launch *(*last_launch)(void);
    void *(*external)(void), *(*foreign)(void);
    int (*destroys)(void);
    void *p = fake_sym(fake, "fake_last_launch");
    memcpy(&last_launch, &p, sizeof p);
    p = fake_sym(fake, "fake_external_stream");
    memcpy(&external, &p, sizeof p);
    p = fake_sym(fake, "fake_foreign_stream");
    memcpy(&foreign, &p, sizeof p);
    p = fake_sym(fake, "fake_stream_destroys");
    memcpy(&destroys, &p, sizeof p);

    tlrt_context *ctx;
    tlrt_init_options o = {0, TLRT_FAKE_CUDA};
    assert_int_equal(tlrt_init_ex(&ctx, &o), TLRT_SUCCESS);
    tlrt_module *mod;
    assert_int_equal(tlrt_module_load_ptx(ctx, FAKE_PTX, strlen(FAKE_PTX), &mod), TLRT_SUCCESS);
    tlrt_kernel *k;
    assert_int_equal(tlrt_kernel_get(mod, "rms", &k), TLRT_SUCCESS);
    tlrt_devptr x, y;
    assert_int_equal(tlrt_malloc(ctx, 16 * 4096 * 2, &x), TLRT_SUCCESS);
    assert_int_equal(tlrt_malloc(ctx, 16 * 4096 * 2, &y), TLRT_SUCCESS);
    int64_t shape[] = {16, 4096};
    tlrt_arg args[] = {tlrt_arg_tensor(x, TLRT_F16, 2, shape, NULL), tlrt_arg_tensor(y, TLRT_F16, 2, shape, NULL),
                       tlrt_arg_float(TLRT_F32, 0.5), tlrt_arg_int(TLRT_I32, 4)};

    tlrt_stream *ws = NULL;
    int launches0 = last_launch()->launches;
    assert_int_equal(tlrt_stream_from_handle(ctx, external(), &ws), TLRT_SUCCESS);
    assert_non_null(ws);
    assert_int_equal(tlrt_launch(k, args, 4, ws), TLRT_SUCCESS);
    const fake_launch *L = last_launch();
    assert_ptr_equal(L->stream, external());
    assert_int_equal(L->grid[0], 4);
    tlrt_event *e;
    assert_int_equal(tlrt_event_create(ctx, &e), TLRT_SUCCESS);
    assert_int_equal(tlrt_event_record(ctx, e, ws), TLRT_SUCCESS);
    assert_int_equal(tlrt_stream_synchronize(ctx, ws), TLRT_SUCCESS);
    int before = destroys();
    assert_int_equal(tlrt_stream_destroy(ctx, ws), TLRT_SUCCESS);
    assert_int_equal(destroys(), before); /* not owned: the driver's stream lives on */

    /* NULL wraps the legacy default stream. */
    assert_int_equal(tlrt_stream_from_handle(ctx, NULL, &ws), TLRT_SUCCESS);
    assert_int_equal(tlrt_launch(k, args, 4, ws), TLRT_SUCCESS);
    assert_null(L->stream);
    assert_int_equal(tlrt_stream_destroy(ctx, ws), TLRT_SUCCESS);
    assert_int_equal(destroys(), before);

    /* An owned stream is still destroyed with its wrapper. */
    tlrt_stream *own;
    assert_int_equal(tlrt_stream_create(ctx, &own), TLRT_SUCCESS);
    assert_int_equal(tlrt_stream_destroy(ctx, own), TLRT_SUCCESS);
    assert_int_equal(destroys(), before + 1);

    /* Misuse: another context's stream, a handle the driver does not know, no output. */
    ws = (tlrt_stream *)&ws;
    assert_int_equal(tlrt_stream_from_handle(ctx, foreign(), &ws), TLRT_ERROR_INVALID_ARGUMENT);
    assert_null(ws);
    assert_non_null(strstr(tlrt_last_error(ctx), "another CUDA context"));
    int bogus;
    assert_int_equal(tlrt_stream_from_handle(ctx, &bogus, &ws), TLRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tlrt_last_error(ctx), "cuStreamGetCtx"));
    assert_int_equal(tlrt_stream_from_handle(ctx, external(), NULL), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(L->launches, launches0 + 2);

    assert_int_equal(tlrt_event_destroy(ctx, e), TLRT_SUCCESS);
    assert_int_equal(tlrt_module_unload(ctx, mod), TLRT_SUCCESS);
    assert_int_equal(tlrt_free(ctx, x), TLRT_SUCCESS);
    assert_int_equal(tlrt_free(ctx, y), TLRT_SUCCESS);
    tlrt_destroy(ctx);
    dlclose(fake);
}

/* tlrt_launch_function: both kernels launched in order with the
 * workspaces; the workspace memory is made once per stream, grows when a
 * launch needs more, and goes with the module. */
static void function_launch(void **state) {
    (void)state;
    void *fake = dlopen(TLRT_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(fake);
    const fake_launch *(*last_launch)(void);
    int (*live_allocs)(void);
    void *p = fake_sym(fake, "fake_last_launch");
    memcpy(&last_launch, &p, sizeof p);
    p = fake_sym(fake, "fake_live_allocs");
    memcpy(&live_allocs, &p, sizeof p);

    tlrt_context *ctx;
    tlrt_init_options o = {0, TLRT_FAKE_CUDA};
    assert_int_equal(tlrt_init_ex(&ctx, &o), TLRT_SUCCESS);
    size_t n = strlen(FN_META);
    const char *entries = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                          ".visible .entry f_k0(.param .u64 X, .param .u64 w, .param .u64 v, .param .s64 M, "
                          ".param .f32 s)\n{ ret; }\n"
                          ".visible .entry f_k1(.param .u64 Y, .param .u64 w, .param .s64 M)\n{ ret; }\n";
    char *ptx = malloc(n + strlen(entries) + 1);
    memcpy(ptx, FN_META, n);
    strcpy(ptx + n, entries);
    tlrt_module *mod;
    assert_int_equal(tlrt_module_load_ptx(ctx, ptx, strlen(ptx), &mod), TLRT_SUCCESS);
    free(ptx);
    tlrt_function *f, *f2;
    assert_int_equal(tlrt_function_get(mod, "f", &f), TLRT_SUCCESS);
    assert_int_equal(tlrt_function_get(mod, "f", &f2), TLRT_SUCCESS);
    assert_ptr_equal(f, f2);
    assert_string_equal(tlrt_function_metadata(f)->sig.name, "f");
    assert_int_equal(tlrt_function_get(mod, "f_k0", &f2), TLRT_ERROR_NOT_FOUND);
    assert_non_null(strstr(tlrt_last_error(ctx), "it is a kernel"));
    assert_int_equal(tlrt_function_get(mod, "g", &f2), TLRT_ERROR_NOT_FOUND);

    tlrt_devptr x, y;
    assert_int_equal(tlrt_malloc(ctx, 100 * 64 * 4, &x), TLRT_SUCCESS);
    assert_int_equal(tlrt_malloc(ctx, 100 * 4, &y), TLRT_SUCCESS);
    int64_t xs[2] = {10, 64}, ys[1] = {10};
    tlrt_arg args[] = {tlrt_arg_tensor(x, TLRT_F32, 2, xs, NULL), tlrt_arg_tensor(y, TLRT_F32, 1, ys, NULL),
                       tlrt_arg_float(TLRT_F32, 2.0)};
    int allocs0 = live_allocs(), launches0 = last_launch()->launches;
    assert_int_equal(tlrt_launch_function(f, args, 3, NULL), TLRT_SUCCESS);
    const fake_launch *L = last_launch();
    assert_int_equal(L->launches, launches0 + 2);
    assert_int_equal(L->nparams, 3); /* the last launch is f_k1: Y, w, M */
    assert_int_equal(L->params[0], y);
    assert_int_equal(L->params[2], 10);
    uint64_t w = L->params[1];
    assert_true(w != 0 && w % 256 == 0);
    assert_int_equal(live_allocs(), allocs0 + 1);
    /* again, and smaller: the same memory, nothing allocated */
    assert_int_equal(tlrt_launch_function(f, args, 3, NULL), TLRT_SUCCESS);
    assert_int_equal(L->params[1], w);
    xs[0] = ys[0] = 3;
    assert_int_equal(tlrt_launch_function(f, args, 3, NULL), TLRT_SUCCESS);
    assert_int_equal(L->params[1], w);
    assert_int_equal(live_allocs(), allocs0 + 1);
    /* larger: the stream's memory grows (one allocation still) */
    xs[0] = ys[0] = 100;
    assert_int_equal(tlrt_launch_function(f, args, 3, NULL), TLRT_SUCCESS);
    assert_int_equal(live_allocs(), allocs0 + 1);
    assert_int_equal(L->launches, launches0 + 8);
    /* another stream has its own */
    tlrt_stream *s;
    assert_int_equal(tlrt_stream_create(ctx, &s), TLRT_SUCCESS);
    assert_int_equal(tlrt_launch_function(f, args, 3, s), TLRT_SUCCESS);
    assert_int_equal(live_allocs(), allocs0 + 2);
    assert_int_equal(L->launches, launches0 + 10);
    /* misuse: nothing launched, the message names the function */
    args[1].dtype = TLRT_F16;
    assert_int_equal(tlrt_launch_function(f, args, 3, s), TLRT_ERROR_ARG_MISMATCH);
    assert_non_null(strstr(tlrt_last_error(ctx), "function 'f', argument 1 ('Y')"));
    assert_int_equal(tlrt_launch_function(f, NULL, 3, s), TLRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(L->launches, launches0 + 10);

    assert_int_equal(tlrt_stream_destroy(ctx, s), TLRT_SUCCESS);
    assert_int_equal(tlrt_module_unload(ctx, mod), TLRT_SUCCESS);
    assert_int_equal(live_allocs(), allocs0);
    assert_int_equal(tlrt_free(ctx, x), TLRT_SUCCESS);
    assert_int_equal(tlrt_free(ctx, y), TLRT_SUCCESS);
    tlrt_destroy(ctx);
    dlclose(fake);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_packs_params_in_abi_order),
        cmocka_unit_test(plan_cluster),
        cmocka_unit_test(plan_rejects_misuse),
        cmocka_unit_test(plan_tmap),
        cmocka_unit_test(plan_im2col_and_view),
        cmocka_unit_test(null_arguments),
        cmocka_unit_test(float_conversions),
        cmocka_unit_test(no_driver),
        cmocka_unit_test(bad_device_env),
        cmocka_unit_test(plan_function),
#ifdef TLRT_FAKE_CUDA
        cmocka_unit_test(function_launch),
        cmocka_unit_test(with_fake_driver),
        cmocka_unit_test(external_stream),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
