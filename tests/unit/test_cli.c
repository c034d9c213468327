/* The tlc command line, run as a process: exit statuses (0 / 1 / 2), where
 * output and diagnostics go, every --emit kind, -D, --kernel, --arch, -o,
 * -O0..-O3, -v, --time-passes and standard input. The binary is TLC_CLI_PATH (set by
 * tests/golden/CMakeLists.txt), $TLC_BIN, or ../compiler/tlc next to this
 * test's own directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "support/read_file.h"

static char tlc_path[4096];
static char work_dir[] = "/tmp/tlc_test_cli_XXXXXX";

typedef struct result {
    int status;
    char *out, *err;
} result;

/* The file's text, "" when there is none. */
static char *slurp(const char *path) {
    char *s = tlc_read_file(path, NULL);
    return s ? s : strdup("");
}

static void write_file(const char *name, const char *text) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", work_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Runs `tlc ARGS` in the work directory; stdin from the file `in` (or
 * /dev/null). */
static result run(const char *args, const char *in) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s < %s > out.txt 2> err.txt", work_dir, tlc_path, args,
             in ? in : "/dev/null");
    int st = system(cmd);
    result r;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/out.txt", work_dir);
    r.out = slurp(path);
    snprintf(path, sizeof path, "%s/err.txt", work_dir);
    r.err = slurp(path);
    return r;
}

static void done(result *r) {
    free(r->out);
    free(r->err);
}

#define assert_contains(hay, needle)                                                   \
    do {                                                                               \
        if (!strstr((hay), (needle)))                                                  \
            fail_msg("expected to find '%s' in:\n%s", (needle), (hay));                \
    } while (0)
#define assert_lacks(hay, needle)                                                      \
    do {                                                                               \
        if (strstr((hay), (needle))) fail_msg("did not expect '%s' in:\n%s", (needle), (hay)); \
    } while (0)

static const char *kernel_src =
    "import tilelang.language as T\n"
    "\n"
    "@jit(block=64, dtype=float16)\n"
    "def scale(A: Tensor[(M, 64), dtype], B: Tensor[(M, 64), dtype]):\n"
    "    with Kernel(ceildiv(M, block), threads=128) as bx:\n"
    "        S = alloc_shared((block, 64), dtype)\n"
    "        copy(A[bx * block, 0], S)\n"
    "        copy(S, B[bx * block, 0])\n"
    "\n"
    "def second(X: Tensor[(32,), float32]):\n"
    "    with Kernel(1, threads=32) as bx:\n"
    "        F = alloc_fragment((32,), float32)\n"
    "        copy(X, F)\n"
    "        copy(F, X)\n";

/* 120 KiB of shared memory: fits sm_80 (163 KiB) and sm_90 (227 KiB), not sm_86 / sm_89 (99 KiB). */
static const char *big_shared_src =
    "def big(A: Tensor[(128, 480), float16]):\n"
    "    with Kernel(1, threads=128) as bx:\n"
    "        S = alloc_shared((128, 480), float16)\n"
    "        copy(A, S)\n";

static int setup(void **state) {
    (void)state;
    if (!mkdtemp(work_dir)) return -1;
    write_file("k.tl", kernel_src);
    write_file("big.tl", big_shared_src);
    write_file("bad.tl", "def broken(:\n");
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/adir.tl", work_dir);
    mkdir(sub, 0755);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_help(void **state) {
    (void)state;
    result r = run("--help", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "usage: tlc [options] FILE.tl");
    assert_contains(r.out, "--emit=KIND");
    assert_contains(r.out, "summary");
    assert_string_equal(r.err, "");
    done(&r);
}

static void test_version(void **state) {
    (void)state;
    result r = run("--version", NULL);
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "tlc ", 4) == 0);
    assert_true(r.out[4] >= '0' && r.out[4] <= '9');
    done(&r);
}

static void expect_usage_error(const char *args, const char *msg) {
    result r = run(args, NULL);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    assert_contains(r.err, "tlc: error: ");
    assert_contains(r.err, msg);
    assert_contains(r.err, "tlc --help");
    done(&r);
}

static void test_usage_errors(void **state) {
    (void)state;
    expect_usage_error("--frobnicate k.tl", "unknown option '--frobnicate'");
    expect_usage_error("", "no input file");
    expect_usage_error("k.tl k.tl", "more than one input file");
    expect_usage_error("--emit=bogus k.tl", "unknown --emit kind 'bogus'");
    expect_usage_error("--arch=sm_70 k.tl", "unknown --arch 'sm_70'");
    expect_usage_error("-D k.tl", "-D expects NAME=VALUE, got 'k.tl'");
    expect_usage_error("-D 1x=2 k.tl", "-D expects NAME=VALUE");
    expect_usage_error("-Dblock= k.tl", "-D expects NAME=VALUE");
    expect_usage_error("k.tl -o", "option '-o' needs a value");
    expect_usage_error("k.tl --kernel", "option '--kernel' needs a value");
    expect_usage_error("-O4 k.tl", "unknown optimization level '-O4' (expected -O0, -O1, -O2 or -O3)");
    expect_usage_error("-Ofoo k.tl", "unknown optimization level '-Ofoo'");
    expect_usage_error("-O k.tl", "unknown optimization level '-O'");
    expect_usage_error("-O00 k.tl", "unknown optimization level '-O00'");
}

/* -O sets LLVM's level (--backend=llvm): -O0 code differs from -O3's, the
 * default is -O3, the last -O wins, and stages before LLVM do not change.
 * With tlc's own generator, the default backend, an -O changes nothing and
 * says so. */
static void test_opt_levels(void **state) {
    (void)state;
    result r[4];
    for (int level = 0; level < 4; level++) {
        char args[64];
        snprintf(args, sizeof args, "-O%d --backend=llvm --emit=ptx k.tl", level);
        r[level] = run(args, NULL);
        if (r[level].status != 0) fail_msg("-O%d: exit %d\n%s", level, r[level].status, r[level].err);
        assert_contains(r[level].out, ".entry scale(");
        assert_contains(r[level].out, ".entry second(");
        assert_string_equal(r[level].err, "");
    }
    assert_string_not_equal(r[0].out, r[3].out);
    assert_true(strlen(r[0].out) > strlen(r[3].out)); /* unoptimized: longer */
    result dflt = run("--backend=llvm --emit=ptx k.tl", NULL), last = run("-O0 -O3 --backend=llvm --emit=ptx k.tl", NULL);
    assert_string_equal(dflt.out, r[3].out);
    assert_string_equal(last.out, r[3].out);
    result thread0 = run("-O0 --emit=thread k.tl", NULL), thread3 = run("--emit=thread k.tl", NULL);
    assert_string_equal(thread0.out, thread3.out);
    assert_string_equal(thread0.err, "");
    result direct = run("--emit=ptx k.tl", NULL), direct0 = run("-O0 --emit=ptx k.tl", NULL);
    assert_int_equal(direct0.status, 0);
    assert_string_equal(direct0.out, direct.out);
    assert_string_not_equal(direct.out, r[3].out);
    assert_string_equal(direct.err, "");
    assert_string_equal(direct0.err, "tlc: warning: -O0 has no effect on tlc's own PTX generator (the default): "
                                     "add --backend=llvm for LLVM's\n");
    for (int level = 0; level < 4; level++) done(&r[level]);
    done(&dflt);
    done(&last);
    done(&thread0);
    done(&thread3);
    done(&direct);
    done(&direct0);
}

/* The stage lines of a --time-passes report, in order: each "  MS  PCT%  NAME"
 * with MS >= 0 and PCT in [0, 100], the last one "total" at 100% and the
 * sum of the others. The names go to names, joined by '|'. */
static void check_time_report(const char *err, const char *input, char *names, size_t n) {
    char header[256];
    snprintf(header, sizeof header, "tlc: stage times for %s:\n        ms       %%  stage\n", input);
    const char *p = strstr(err, header);
    if (!p) fail_msg("no '%s' in:\n%s", header, err);
    p += strlen(header);
    names[0] = '\0';
    double sum = 0, total = -1;
    while (*p == ' ') {
        double ms, pct;
        int used = 0;
        if (sscanf(p, "%lf %lf%%  %n", &ms, &pct, &used) != 2 || used == 0) fail_msg("bad line in:\n%s", err);
        const char *name = p + used, *eol = strchr(name, '\n');
        assert_non_null(eol);
        assert_true(ms >= 0);
        assert_true(pct >= 0 && pct <= 100);
        size_t len = strlen(names);
        snprintf(names + len, n - len, "%s%.*s", len ? "|" : "", (int)(eol - name), name);
        if (strncmp(name, "total\n", 6) == 0) {
            total = ms;
            assert_true(pct == 100);
        } else {
            sum += ms;
        }
        p = eol + 1;
    }
    assert_true(total >= 0);
    assert_true(total - sum < 0.01 && sum - total < 0.01); /* printed to 0.001 ms each */
}

static void test_time_passes(void **state) {
    (void)state;
    result r = run("--time-passes --emit=ptx k.tl", NULL), plain = run("--emit=ptx k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, plain.out); /* the report goes to stderr only */
    char names[512];
    check_time_report(r.err, "k.tl", names, sizeof names);
    assert_string_equal(names, "front end (lex, parse, sema, verify)|layout inference + planning|"
                               "lowering to Thread IR|PTX generation|total");
    done(&r);
    done(&plain);
    /* a stage dump before the back end: only the front end ran */
    r = run("--emit=summary --time-passes k.tl", NULL);
    assert_int_equal(r.status, 0);
    check_time_report(r.err, "k.tl", names, sizeof names);
    assert_string_equal(names, "front end (lex, parse, sema, verify)|total");
    done(&r);
    /* errors: the diagnostics, then the stages that ran */
    r = run("--time-passes --emit=ptx bad.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "bad.tl:1:");
    check_time_report(r.err, "bad.tl", names, sizeof names);
    assert_string_equal(names, "front end (lex, parse, sema, verify)|total");
    done(&r);
}

/* -v: what was compiled how, which stages ran, where the output went. */
static void test_verbose(void **state) {
    (void)state;
    result r = run("-v -O1 --backend=llvm --arch=sm_80 --emit=ptx -o v.ptx k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    char path[4200];
    snprintf(path, sizeof path, "%s/v.ptx", work_dir);
    char *ptx = slurp(path);
    assert_contains(ptx, ".target sm_80");
    char want[256];
    snprintf(want, sizeof want,
             "tlc: kernels: scale, second\n"
             "tlc: stage: front end (lex, parse, sema, verify)\n"
             "tlc: stage: layout inference + planning\n"
             "tlc: stage: lowering to Thread IR\n"
             "tlc: stage: PTX generation\n"
             "tlc: output: %zu bytes to v.ptx\n",
             strlen(ptx));
    assert_contains(r.err, "tlc: input: k.tl (");
    assert_contains(r.err, "tlc: target: sm_80 (PTX ISA ");
    assert_contains(r.err, "), LLVM -O1\n");
    assert_contains(r.err, "tlc: emit: ptx\n");
    assert_contains(r.err, want);
    free(ptx);
    done(&r);
    /* without -v: nothing on stderr */
    r = run("--emit=ptx -o v.ptx k.tl", NULL);
    assert_string_equal(r.err, "");
    done(&r);
}

/* The stages past Tile IR: output on success only, a diagnostic otherwise. */
static void test_backend_emits(void **state) {
    (void)state;
    const struct { const char *kind, *needle; } kinds[] = {
        {"layout", "kernel scale"}, {"thread", "kernel scale"}, {"llvm", "tlc.meta kernel scale"},
        {"ptx", ".entry scale"}};
    for (int i = 0; i < 4; i++) {
        char args[64];
        snprintf(args, sizeof args, "--emit=%s k.tl", kinds[i].kind);
        result r = run(args, NULL);
        if (r.status != 0) fail_msg("--emit=%s: exit %d\n%s", kinds[i].kind, r.status, r.err);
        assert_contains(r.out, kinds[i].needle);
        done(&r);
    }
    /* a bad kernel: diagnostics, no output, exit 1 */
    result r = run("--emit=ptx bad.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_contains(r.err, "bad.tl:1:");
    done(&r);
}

static void test_missing_file(void **state) {
    (void)state;
    result r = run("nope.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "tlc: error: cannot open 'nope.tl': No such file or directory\n");
    done(&r);
    r = run("adir.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "tlc: error: cannot open 'adir.tl': Is a directory\n");
    done(&r);
}

static void test_emit_tokens(void **state) {
    (void)state;
    result r = run("--emit=tokens k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "1:1 ");
    assert_contains(r.out, "\"scale\"");
    assert_contains(r.out, "INDENT");
    done(&r);
}

static void test_emit_ast(void **state) {
    (void)state;
    result r = run("--emit=ast k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "scale");
    assert_contains(r.out, "second");
    assert_contains(r.out, "alloc_shared");
    done(&r);
}

static void test_emit_tir_default(void **state) {
    (void)state;
    result r = run("k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_contains(r.out, "# Tile IR of k.tl for sm_90a\n");
    assert_contains(r.out, "kernel scale\n");
    assert_contains(r.out, "  param A: global float16[M, 64]\n");
    assert_contains(r.out, "  const block = 64\n");
    assert_contains(r.out, "  grid (ceildiv(M, 64)) as (bx)\n");
    assert_contains(r.out, "alloc S: shared float16[64, 64]");
    assert_contains(r.out, "copy(A[bx * 64:bx * 64 + 64, 0:64], S[0:64, 0:64])");
    assert_contains(r.out, "kernel second\n");
    result r2 = run("--emit=tir k.tl", NULL);
    assert_int_equal(r2.status, 0);
    assert_string_equal(r.out, r2.out); /* the default is tir, and the dump is deterministic */
    done(&r);
    done(&r2);
}

static void test_emit_summary(void **state) {
    (void)state;
    result r = run("--emit=summary k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out,
                        "k.tl: scale: grid (ceildiv(M, 64)) x 128 threads, shared 8192 B, "
                        "params A[M, 64] float16, B[M, 64] float16: ok\n"
                        "k.tl: second: grid (1) x 32 threads, shared 0 B, params X[32] float32: ok\n");
    done(&r);
}

static void test_define(void **state) {
    (void)state;
    result r = run("-D block=32 k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "  const block = 32  # -D\n");
    assert_contains(r.out, "alloc S: shared float16[32, 64]");
    assert_contains(r.out, "  grid (ceildiv(M, 32)) as (bx)\n");
    done(&r);
    /* attached form, a dtype, and the later of two values wins */
    r = run("-Dblock=16 -Ddtype=bfloat16 -Dblock=128 --emit=summary k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "k.tl: scale: grid (ceildiv(M, 128)) x 128 threads, shared 16384 B, "
                           "params A[M, 64] bfloat16, B[M, 64] bfloat16: ok\n");
    done(&r);
    /* an unknown parameter is a diagnostic, not a usage error */
    r = run("-D nosuch=3 k.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_contains(r.err, "nosuch");
    done(&r);
}

static void test_kernel_filter(void **state) {
    (void)state;
    result r = run("--kernel=second k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "kernel second\n");
    assert_lacks(r.out, "kernel scale");
    done(&r);
    r = run("--kernel second --emit=summary k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "k.tl: second: grid (1) x 32 threads, shared 0 B, params X[32] float32: ok\n");
    done(&r);
    r = run("--kernel=nosuch k.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "nosuch");
    done(&r);
}

static void test_arch(void **state) {
    (void)state;
    const char *archs[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
    for (int i = 0; i < 5; i++) {
        char args[64], want[64];
        snprintf(args, sizeof args, "--arch=%s k.tl", archs[i]);
        snprintf(want, sizeof want, "# Tile IR of k.tl for %s\n", archs[i]);
        result r = run(args, NULL);
        assert_int_equal(r.status, 0);
        assert_contains(r.out, want);
        done(&r);
    }
    /* the shared-memory limit follows the arch */
    const struct { const char *arch; int status; } lim[] = {
        {"sm_80", 0}, {"sm_86", 1}, {"sm_89", 1}, {"sm_90", 0}, {"sm_90a", 0}};
    for (int i = 0; i < 5; i++) {
        char args[64];
        snprintf(args, sizeof args, "--arch %s big.tl", lim[i].arch);
        result r = run(args, NULL);
        if (r.status != lim[i].status) fail_msg("%s: exit %d, stderr:\n%s", lim[i].arch, r.status, r.err);
        if (lim[i].status) assert_contains(r.err, "big.tl:3:");
        done(&r);
    }
}

static void test_stdin(void **state) {
    (void)state;
    result r = run("--emit=summary -", "k.tl");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "<stdin>: scale: grid (ceildiv(M, 64)) x 128 threads");
    done(&r);
    r = run("-", "bad.tl");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "<stdin>:1:");
    done(&r);
}

static void test_output_file(void **state) {
    (void)state;
    result r = run("-o dump.txt k.tl", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    done(&r);
    char path[4200];
    snprintf(path, sizeof path, "%s/dump.txt", work_dir);
    char *dump = slurp(path);
    assert_contains(dump, "kernel scale\n");
    free(dump);
    r = run("-o no/such/dir/x.txt k.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "tlc: error: cannot write 'no/such/dir/x.txt'");
    done(&r);
}

static void test_diagnostic_exit(void **state) {
    (void)state;
    result r = run("bad.tl", NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_contains(r.err, "bad.tl:1:");
    assert_contains(r.err, "error: ");
    done(&r);
}

int main(int argc, char **argv) {
    (void)argc;
    const char *env = getenv("TLC_BIN");
#ifdef TLC_CLI_PATH
    const char *configured = TLC_CLI_PATH;
#else
    const char *configured = NULL;
#endif
    if (env && *env) {
        snprintf(tlc_path, sizeof tlc_path, "%s", env);
    } else if (configured) {
        snprintf(tlc_path, sizeof tlc_path, "%s", configured);
    } else {
        char self[2048];
        snprintf(self, sizeof self, "%s", argv[0]);
        char *slash = strrchr(self, '/');
        if (slash) *slash = 0;
        else snprintf(self, sizeof self, ".");
        snprintf(tlc_path, sizeof tlc_path, "%s/../compiler/tlc", self);
    }
    char resolved[4096];
    if (realpath(tlc_path, resolved)) snprintf(tlc_path, sizeof tlc_path, "%s", resolved);
    if (access(tlc_path, X_OK) != 0) {
        fprintf(stderr, "test_cli: tlc binary not found at '%s' (set TLC_BIN)\n", tlc_path);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_backend_emits),
        cmocka_unit_test(test_opt_levels),
        cmocka_unit_test(test_time_passes),
        cmocka_unit_test(test_verbose),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_emit_tokens),
        cmocka_unit_test(test_emit_ast),
        cmocka_unit_test(test_emit_tir_default),
        cmocka_unit_test(test_emit_summary),
        cmocka_unit_test(test_define),
        cmocka_unit_test(test_kernel_filter),
        cmocka_unit_test(test_arch),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_output_file),
        cmocka_unit_test(test_diagnostic_exit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
