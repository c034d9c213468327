/* Errors the interpreter and `tlc run` must report clearly: out-of-bounds
 * accesses with their source location, division by zero, .npy shape and
 * dtype mismatches, missing dims; plus `tlc run` outputs and determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "api/compile.h"
#include "interp/npy.h"
#include "interp/interp.h"

/* Compiles src and runs kernel `k` with tensor A (float32, n elements, all 1)
 * and scalar `n` (if the kernel has it), with options o (NULL: none).
 * Returns the interpreter's error text (malloc'd; "" on success). */
static char *run_src_with(const char *src, int64_t n, int64_t scalar_n, const tlc_interp_options *o) {
    tlc_compilation c;
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    if (!tlc_compile_source(&c, "t.tl", src, strlen(src), &co))
        fail_msg("test kernel does not compile:\n%s", tlc_sb_cstr(&c.diag.out));
    float *a = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) a[i] = 1;
    tlc_interp_tensor t = {"A", a, TIR_F32, 1, {n}};
    tlc_interp_scalar s = {.name = "n", .i = scalar_n};
    tlc_strbuf err;
    tlc_sb_init(&err);
    bool ok = tlc_interp_run_module(c.tir, &c.src, NULL, &t, 1, &s, 1, o, &err);
    char *out = strdup(tlc_sb_cstr(&err));
    assert_true(ok == (out[0] == 0));
    tlc_sb_free(&err);
    tlc_compilation_free(&c);
    free(a);
    return out;
}

static char *run_src(const char *src, int64_t n, int64_t scalar_n) { return run_src_with(src, n, scalar_n, NULL); }

static void expect_in(const char *text, const char *want) {
    if (!strstr(text, want)) fail_msg("expected \"%s\" in:\n%s", want, text);
}

static void test_oob_fragment_store(void **state) {
    (void)state;
    const char *src =
        "def k(A: Tensor[(64,), float32]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        s = alloc_fragment((64,), float32)\n"
        "        clear(s)\n"
        "        for i in Parallel(64):\n"
        "            s[(i + 6) % 70] = A[i]\n"
        "        copy(s, A)\n";
    /* (sema refuses s[i + 6] outright; a modulus it does not follow reaches
     * the interpreter, which stops at the first index past the end) */
    char *e = run_src(src, 64, 0);
    expect_in(e, "t.tl:6:");
    expect_in(e, "error: index 64 out of bounds for dim 0 of 's' (extent 64)");
    expect_in(e, "s[(i + 6) % 70] = A[i]");
    free(e);
}

static void test_oob_global_load(void **state) {
    (void)state;
    const char *src =
        "def k(A: Tensor[(M,), float32]):\n"
        "    with Kernel(ceildiv(M, 32), threads=128) as bx:\n"
        "        s = alloc_fragment((32,), float32)\n"
        "        for i in Parallel(32):\n"
        "            s[i] = A[bx * 32 + i] * 2\n"
        "        copy(s, A[bx * 32])\n";
    char *e = run_src(src, 64, 0); /* multiple of 32: fine */
    assert_string_equal(e, "");
    free(e);
    e = run_src(src, 50, 0); /* element loads are not masked: row 50 is an error */
    expect_in(e, "t.tl:5:");
    expect_in(e, "index 50 out of bounds for dim 0 of 'A' (extent 50)");
    free(e);
}

static void test_oob_shared_copy(void **state) {
    (void)state;
    const char *src =
        "def k(A: Tensor[(64,), float32]):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        s = alloc_shared((64,), float32)\n"
        "        copy(A, s)\n"
        "        for j in serial(4):\n"
        "            copy(s[j * 16:j * 16 + 32], A[0:32])\n";
    char *e = run_src(src, 64, 0);
    expect_in(e, "t.tl:6:");
    expect_in(e, "index 64 out of bounds for dim 0 of 's' (extent 64)");
    free(e);
}

/* A global region's start must not be negative (only the end of a dim is
 * masked, and the GPU's masks test the end alone): an error, not a mask. */
static void test_negative_region_start(void **state) {
    (void)state;
    const char *src =
        "def k(A: Tensor[(M,), float32], n: int32):\n"
        "    with Kernel(1, threads=128) as bx:\n"
        "        s = alloc_fragment((32,), float32)\n"
        "        copy(A[n:n + 32], s)\n"
        "        copy(s, A[0:32])\n";
    char *e = run_src(src, 64, 16);
    assert_string_equal(e, "");
    free(e);
    e = run_src(src, 64, -8);
    expect_in(e, "t.tl:4:");
    expect_in(e, "region of 'A' starts at -8 in dim 0: a start must not be negative");
    free(e);
}

static void test_div_zero(void **state) {
    (void)state;
    const char *src =
        "def k(A: Tensor[(8,), float32], n: int32):\n"
        "    with Kernel(1, threads=32) as bx:\n"
        "        s = alloc_fragment((8,), float32)\n"
        "        for i in Parallel(8):\n"
        "            s[i] = A[i] + i // n\n"
        "        copy(s, A)\n";
    char *e = run_src(src, 8, 2);
    assert_string_equal(e, "");
    free(e);
    e = run_src(src, 8, 0);
    expect_in(e, "t.tl:5:");
    expect_in(e, "integer division by zero");
    free(e);
}

/* A run past tlc_interp_options.max_steps (its blocks and loop iterations)
 * stops at the statement it reached; below the limit it completes. */
static void test_step_limit(void **state) {
    (void)state;
    const char *src =
        "def k(A: Tensor[(8,), float32], n: int32):\n"
        "    with Kernel(n, threads=32) as bx:\n"
        "        s = alloc_fragment((8,), float32)\n"
        "        clear(s)\n"
        "        for j in range(n):\n"
        "            for i in Parallel(8):\n"
        "                s[i] = s[i] + A[i]\n"
        "        copy(s, A)\n";
    /* 4 blocks, 4 x 4 serial and 4 x 4 x 8 Parallel iterations: 148 steps */
    tlc_interp_options o = {.max_steps = 148};
    char *e = run_src_with(src, 8, 4, &o);
    assert_string_equal(e, "");
    free(e);
    o.max_steps = 147;
    e = run_src_with(src, 8, 4, &o);
    expect_in(e, "t.tl:6:");
    expect_in(e, "error: the run stops here: it has taken more than 147 steps (blocks and loop iterations)");
    free(e);
}

/* In thread-indexed code each thread's loop iteration is a step: 32
 * threads that each loop forever stop after the limit's worth of their
 * iterations, not after that many rounds of all of them (a run that took
 * 43 s under the fuzzer's 2^16 steps). */
static void test_step_limit_per_thread(void **state) {
    (void)state;
    const char *src =
        "def k(A: Tensor[(32,), float32], n: int32):\n"
        "    with Kernel(1, threads=32) as bx:\n"
        "        tx = get_thread_binding()\n"
        "        x = alloc_var(float32)\n"
        "        x = A[tx] * n\n"
        "        while x > 0:\n"
        "            x = x - 1\n"
        "        A[tx] = x\n";
    /* 1 block and 32 threads x 4 iterations: 129 steps */
    tlc_interp_options o = {.max_steps = 129};
    char *e = run_src_with(src, 32, 4, &o);
    assert_string_equal(e, "");
    free(e);
    o.max_steps = 128;
    e = run_src_with(src, 32, 4, &o);
    expect_in(e, "t.tl:6:");
    expect_in(e, "more than 128 steps");
    free(e);
    /* a loop that never ends (n = 2^30 iterations a thread) stops at once */
    o.max_steps = 1 << 16;
    e = run_src_with(src, 32, 1 << 30, &o);
    expect_in(e, "more than 65536 steps");
    free(e);
}

/* ---------------- tlc run ---------------- */

static char tmpdir[64];

static char *sh(const char *cmd, int *status) {
    char full[8192];
    snprintf(full, sizeof full, "cd %s && %s 2>&1", tmpdir, cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, p)) > 0) n += r;
    buf[n] = 0;
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

static void write_npy(const char *name, tir_dtype dt, int rank, const int64_t *shape) {
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    void *d = calloc((size_t)n, (size_t)tir_dtype_bytes(dt));
    assert_true(tlc_npy_write(path, dt, rank, shape, d, err, sizeof err));
    free(d);
}

/* A small .npy whose header declares an enormous array is refused before
 * anything of that size is allocated (under ASan an attempt would abort). */
static void test_npy_declared_size(void **state) {
    (void)state;
    char path[] = "/tmp/tlc_npy_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char hdr[128];
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 16), }");
    while ((hl + 11) % 64) hdr[hl++] = ' ';
    hdr[hl++] = '\n';
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)hl, 0};
    assert_int_equal(write(fd, pre, 10), 10);
    assert_int_equal(write(fd, hdr, (size_t)hl), hl);
    char pad[512] = {0};
    assert_int_equal(write(fd, pad, sizeof pad), (int)sizeof pad);
    close(fd);
    tlc_npy n;
    char err[256];
    assert_false(tlc_npy_read(path, &n, err, sizeof err));
    assert_non_null(strstr(err, "file shorter than its shape says"));
    assert_null(n.data);
    unlink(path);
}

static void test_run_cli(void **state) {
    (void)state;
    strcpy(tmpdir, "/tmp/tlc_run_XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    char cmd[4096];
    int st;
    const char *gemm = TLC_SOURCE_DIR "/dsl-examples/gemm.tl";

    /* random inputs: summary of C, deterministic, --output written */
    snprintf(cmd, sizeof cmd, "%s run %s --random --seed 3 --dim M=64 --dim N=48 --dim K=80 --output C=c.npy",
             TLC_BINARY, gemm);
    char *o1 = sh(cmd, &st);
    assert_int_equal(st, 0);
    expect_in(o1, "C: shape [64, 48] float16");
    expect_in(o1, "fnv64 ");
    char *o2 = sh(cmd, &st);
    assert_string_equal(o1, o2);
    free(o2);
    tlc_npy n;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/c.npy", tmpdir);
    assert_true(tlc_npy_read(path, &n, err, sizeof err));
    assert_int_equal(n.dtype, TIR_F16);
    assert_int_equal(n.shape[0], 64);
    assert_int_equal(n.shape[1], 48);
    tlc_npy_free(&n);
    /* another seed gives other numbers */
    snprintf(cmd, sizeof cmd, "%s run %s --random --seed 4 --dim M=64 --dim N=48 --dim K=80", TLC_BINARY, gemm);
    o2 = sh(cmd, &st);
    assert_int_equal(st, 0);
    assert_string_not_equal(o1, o2);
    free(o1);
    free(o2);

    /* .npy inputs bind the symbolic dims */
    write_npy("a.npy", TIR_F16, 2, (int64_t[]){32, 16});
    write_npy("b.npy", TIR_F16, 2, (int64_t[]){16, 24});
    snprintf(cmd, sizeof cmd, "%s run %s --input A=a.npy --input B=b.npy", TLC_BINARY, gemm);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 0);
    expect_in(o1, "C: shape [32, 24] float16  min 0  max 0  mean 0");
    free(o1);

    /* dtype mismatch */
    write_npy("a32.npy", TIR_F32, 2, (int64_t[]){32, 16});
    snprintf(cmd, sizeof cmd, "%s run %s --input A=a32.npy --input B=b.npy", TLC_BINARY, gemm);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 1);
    expect_in(o1, "a32.npy: dtype '<f4' (float32) does not match parameter 'A' (float16");
    free(o1);

    /* shape mismatch through a symbolic dim */
    write_npy("b2.npy", TIR_F16, 2, (int64_t[]){20, 24});
    snprintf(cmd, sizeof cmd, "%s run %s --input A=a.npy --input B=b2.npy", TLC_BINARY, gemm);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 1);
    expect_in(o1, "b2.npy: shape mismatch for 'B' dim 0: file has 20, expected 16 (K)");
    free(o1);

    /* rank mismatch */
    write_npy("r1.npy", TIR_F16, 1, (int64_t[]){16});
    snprintf(cmd, sizeof cmd, "%s run %s --input A=r1.npy --input B=b.npy", TLC_BINARY, gemm);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 1);
    expect_in(o1, "r1.npy: rank 1 does not match parameter 'A' (rank 2)");
    free(o1);

    /* a symbolic dim nobody gives */
    snprintf(cmd, sizeof cmd, "%s run %s --random --dim M=8 --dim N=8", TLC_BINARY, gemm);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 1);
    expect_in(o1, "symbolic dim 'K' has no value");
    free(o1);

    /* unknown tensor, bad usage */
    snprintf(cmd, sizeof cmd, "%s run %s --input Z=a.npy", TLC_BINARY, gemm);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 1);
    expect_in(o1, "--input 'Z': no tensor parameter of that name");
    free(o1);
    snprintf(cmd, sizeof cmd, "%s run --bogus", TLC_BINARY);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 2);
    free(o1);

    /* --reverse: a race-free kernel gives the same bytes; one whose
     * Parallel iterations all write one element gives the last writer's,
     * which the reverse order changes */
    snprintf(cmd, sizeof cmd, "%s run %s --random --seed 3 --dim M=64 --dim N=48 --dim K=80", TLC_BINARY, gemm);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 0);
    snprintf(cmd, sizeof cmd, "%s run %s --random --seed 3 --dim M=64 --dim N=48 --dim K=80 --reverse", TLC_BINARY,
             gemm);
    o2 = sh(cmd, &st);
    assert_int_equal(st, 0);
    assert_string_equal(o1, o2);
    free(o1);
    free(o2);
    char racy[300];
    snprintf(racy, sizeof racy, "%s/racy.tl", tmpdir);
    FILE *rf = fopen(racy, "w");
    assert_non_null(rf);
    fputs("def racy(X: Tensor[(8,), float32], Y: Tensor[(1,), float32]):\n"
          "    with Kernel(1, threads=32) as bx:\n"
          "        s = alloc_shared((1,), float32)\n"
          "        for i in Parallel(8):\n"
          "            s[0] = X[i]\n"
          "        copy(s, Y)\n",
          rf);
    fclose(rf);
    snprintf(cmd, sizeof cmd, "%s run %s --random", TLC_BINARY, racy);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 0);
    expect_in(o1, "Y: shape [1] float32");
    snprintf(cmd, sizeof cmd, "%s run %s --random --reverse", TLC_BINARY, racy);
    o2 = sh(cmd, &st);
    assert_int_equal(st, 0);
    assert_string_not_equal(o1, o2);
    free(o1);
    free(o2);
    /* --max-steps: one block and its 8 Parallel iterations are 9 steps */
    snprintf(cmd, sizeof cmd, "%s run %s --random --max-steps 9", TLC_BINARY, racy);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 0);
    free(o1);
    snprintf(cmd, sizeof cmd, "%s run %s --random --max-steps 8", TLC_BINARY, racy);
    o1 = sh(cmd, &st);
    assert_int_not_equal(st, 0);
    expect_in(o1, "racy.tl:4:");
    expect_in(o1, "more than 8 steps");
    free(o1);
    snprintf(cmd, sizeof cmd, "%s run %s --max-steps 0", TLC_BINARY, racy);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 2);
    expect_in(o1, "bad --max-steps '0'");
    free(o1);

    /* the MLA file: the three kernels run, sharing the workspaces by name */
    snprintf(cmd, sizeof cmd,
             "%s run %s/dsl-examples/mla_decode.tl -D dv=64 -D dpe=32 --random --int-max 0 --dim batch=1 "
             "--dim q_rows=4 --dim num_pages=2 --dim max_pages=1 --dim num_parts=3 --dim num_slots=4 "
             "--scalar sm_scale=0.1 --scalar h_q=4",
             TLC_BINARY, TLC_SOURCE_DIR);
    o1 = sh(cmd, &st);
    assert_int_equal(st, 0);
    expect_in(o1, "Output: shape [1, 4, 64] float16");
    expect_in(o1, "Glse: shape [4, 4] float32");
    expect_in(o1, "sched: shape [3, 4] int32");
    free(o1);

    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oob_fragment_store),
        cmocka_unit_test(test_oob_global_load),
        cmocka_unit_test(test_oob_shared_copy),
        cmocka_unit_test(test_negative_region_start),
        cmocka_unit_test(test_div_zero),
        cmocka_unit_test(test_step_limit),
        cmocka_unit_test(test_step_limit_per_thread),
        cmocka_unit_test(test_npy_declared_size),
        cmocka_unit_test(test_run_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
