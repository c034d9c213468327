/* The JIT (include/tlc/tlc.h) without a GPU: cache hits and misses counted
 * on the jit object, a corrupted or truncated cache entry recompiled, compile
 * errors returned as file:line:col text, the optimization level in the
 * cache key, bad arguments refused, and 8
 * threads compiling the same and different sources through one jit object
 * and one cache dir getting exactly the PTX of a single-threaded compile. */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_support.h"
#include "tlc/tlc.h"

typedef struct fixture {
    char dir[64];
    char *src;
    size_t len;
} fixture;

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Paths of the cache entries (*.tlcjit) in dir; returns how many. */
static int list_entries(const char *dir, char paths[][512], int max) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 7 && !strcmp(e->d_name + l - 7, ".tlcjit") && n < max)
            snprintf(paths[n++], 512, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

/* Every file in dir, temporaries (".tmp-...") included. */
static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tlc-test-jit-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    f->src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/rmsnorm.tl", &f->len);
    if (!f->src) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    remove_tree(f->dir);
    free(f->src);
    free(f);
    return 0;
}

static tlc_jit *make_jit(const char *dir, bool disable_cache) {
    tlc_jit_options o = {.cache_dir = dir, .arch = "sm_90a", .disable_cache = disable_cache};
    tlc_jit *j = NULL;
    char *err = NULL;
    tlc_status st = tlc_jit_create(&o, &j, &err);
    if (st != TLC_OK) fail_msg("tlc_jit_create: %s", err);
    return j;
}

static const tlc_jit_define DEFS[] = {{"C", "256"}, {"BLOCK_M", "4"}, {"dtype", "bfloat16"}};

static void second_compile_is_a_cache_hit(void **state) {
    fixture *f = *state;
    tlc_jit *j = make_jit(f->dir, false);
    assert_string_equal(tlc_jit_arch(j), "sm_90a");
    assert_string_equal(tlc_jit_cache_dir(j), f->dir);
    char *p1 = NULL, *p2 = NULL, *err = NULL;
    assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", DEFS, 3, NULL, &p1, &err), TLC_OK);
    assert_null(err);
    char header[64];
    snprintf(header, sizeof header, "// tlc.meta v1 tlc=%s arch=sm_90a\n", tlc_version());
    assert_non_null(strstr(p1, header));
    assert_non_null(strstr(p1, "// tlc.meta kernel rmsnorm\n"));
    assert_non_null(strstr(p1, "// tlc.meta tensor X bfloat16 [M,256]"));
    assert_non_null(strstr(p1, ".entry rmsnorm_silu("));
    tlc_jit_stats s;
    tlc_jit_get_stats(j, &s);
    assert_int_equal(s.hits, 0);
    assert_int_equal(s.misses, 1);
    char entries[4][512];
    assert_int_equal(list_entries(f->dir, entries, 4), 1);

    /* Same inputs, defines in another order: the same key, served from the cache. */
    tlc_jit_define reordered[] = {DEFS[2], DEFS[0], DEFS[1]};
    assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", reordered, 3, NULL, &p2, &err), TLC_OK);
    tlc_jit_get_stats(j, &s);
    assert_int_equal(s.hits, 1);
    assert_int_equal(s.misses, 1);
    assert_string_equal(p1, p2);
    tlc_free(p2);

    /* Another jit object (as another process would) on the same dir hits too. */
    tlc_jit *j2 = make_jit(f->dir, false);
    assert_int_equal(tlc_jit_compile(j2, f->src, f->len, "x.tl", DEFS, 3, NULL, &p2, &err), TLC_OK);
    tlc_jit_get_stats(j2, &s);
    assert_int_equal(s.hits, 1);
    assert_string_equal(p1, p2);
    tlc_free(p2);

    /* A different define, kernel filter or arch is a different entry. */
    tlc_jit_define other[] = {{"C", "512"}};
    assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", other, 1, NULL, &p2, &err), TLC_OK);
    assert_non_null(strstr(p2, "[M,512]"));
    tlc_free(p2);
    assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", DEFS, 3, "rmsnorm", &p2, &err), TLC_OK);
    assert_null(strstr(p2, "rmsnorm_silu"));
    tlc_free(p2);
    tlc_jit_get_stats(j, &s);
    assert_int_equal(s.misses, 3);
    assert_int_equal(list_entries(f->dir, entries, 4), 3);

    /* With the cache disabled nothing is read or written. */
    tlc_jit *nc = make_jit(f->dir, true);
    assert_string_equal(tlc_jit_cache_dir(nc), "");
    assert_int_equal(tlc_jit_compile(nc, f->src, f->len, "rmsnorm.tl", DEFS, 3, NULL, &p2, &err), TLC_OK);
    assert_string_equal(p1, p2);
    tlc_jit_get_stats(nc, &s);
    assert_int_equal(s.hits, 0);
    assert_int_equal(s.misses, 1);
    tlc_free(p2);
    tlc_free(p1);
    tlc_jit_destroy(nc);
    tlc_jit_destroy(j2);
    tlc_jit_destroy(j);
}

static void corrupt_entry(const char *path, bool truncate_it) {
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    if (truncate_it) {
        assert_int_equal(ftruncate(fileno(fp), 100), 0);
    } else {
        assert_int_equal(fseek(fp, 500, SEEK_SET), 0); /* inside the PTX payload */
        int c = fgetc(fp);
        assert_int_equal(fseek(fp, 500, SEEK_SET), 0);
        fputc(c ^ 0x20, fp);
    }
    fclose(fp);
}

static void corrupted_entry_is_recompiled(void **state) {
    fixture *f = *state;
    tlc_jit *j = make_jit(f->dir, false);
    char *good = NULL, *p = NULL, *err = NULL;
    assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", DEFS, 3, "rmsnorm", &good, &err), TLC_OK);
    char entries[4][512];
    assert_int_equal(list_entries(f->dir, entries, 4), 1);

    for (int round = 0; round < 2; round++) {
        corrupt_entry(entries[0], round == 1);
        assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", DEFS, 3, "rmsnorm", &p, &err), TLC_OK);
        assert_string_equal(p, good); /* recompiled, never the damaged bytes */
        tlc_free(p);
        tlc_jit_stats s;
        tlc_jit_get_stats(j, &s);
        assert_int_equal(s.corrupt, 1);
        assert_int_equal(s.misses, round == 0 ? 2 : 1); /* round 0's jit also made the first entry */
        assert_int_equal(s.hits, 0);
        /* ... and stored again: the next compile is a hit. */
        assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", DEFS, 3, "rmsnorm", &p, &err), TLC_OK);
        assert_string_equal(p, good);
        tlc_free(p);
        tlc_jit_get_stats(j, &s);
        assert_int_equal(s.hits, 1);
        tlc_jit_destroy(j);
        j = make_jit(f->dir, false); /* fresh counters for the next round */
    }
    tlc_free(good);
    tlc_jit_destroy(j);
}

static void compile_error_has_location(void **state) {
    fixture *f = *state;
    tlc_jit *j = make_jit(f->dir, false);
    const char *bad = "@jit(C=64)\ndef k(X: Tensor[(M, C), float16]):\n    with Kernel(1, threads=32) as bx:\n        y = undefined_name + 1\n";
    char *p = (char *)"untouched", *err = NULL;
    assert_int_equal(tlc_jit_compile(j, bad, strlen(bad), "bad.tl", NULL, 0, NULL, &p, &err), TLC_ERROR_COMPILE);
    assert_null(p);
    assert_non_null(err);
    assert_non_null(strstr(err, "bad.tl:4:"));
    assert_non_null(strstr(err, "error"));
    tlc_free(err);
    /* An unknown kernel and an unknown define are compile errors too, with text. */
    assert_int_equal(tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", NULL, 0, "nope", &p, &err), TLC_ERROR_COMPILE);
    assert_non_null(strstr(err, "nope"));
    tlc_free(err);
    tlc_jit_stats s;
    tlc_jit_get_stats(j, &s);
    assert_int_equal(s.compile_errors, 2);
    char entries[4][512];
    assert_int_equal(list_entries(f->dir, entries, 4), 0); /* failures are not cached */
    /* Empty source: no kernels is fine or an error, but never a crash. */
    tlc_status st = tlc_jit_compile(j, "", 0, NULL, NULL, 0, NULL, &p, &err);
    assert_true(st == TLC_OK || st == TLC_ERROR_COMPILE);
    tlc_free(p);
    tlc_free(err);
    tlc_jit_destroy(j);
}

static tlc_jit *make_jit_at(const char *dir, tlc_opt_level level, const char *backend) {
    tlc_jit_options o = {.cache_dir = dir, .arch = "sm_90a", .opt_level = level, .backend = backend};
    tlc_jit *j = NULL;
    char *err = NULL;
    if (tlc_jit_create(&o, &j, &err) != TLC_OK) fail_msg("tlc_jit_create: %s", err);
    return j;
}

static char *compile_rmsnorm(tlc_jit *j, const fixture *f) {
    char *ptx = NULL, *err = NULL;
    if (tlc_jit_compile(j, f->src, f->len, "rmsnorm.tl", DEFS, 3, "rmsnorm", &ptx, &err) != TLC_OK)
        fail_msg("tlc_jit_compile: %s", err);
    return ptx;
}

/* Each LLVM level has its own cache entry; the default is -O3 and shares its entry. */
static void opt_level_is_part_of_the_key(void **state) {
    fixture *f = *state;
    tlc_jit *o0 = make_jit_at(f->dir, TLC_OPT_O0, "llvm"), *o3 = make_jit_at(f->dir, TLC_OPT_O3, "llvm"),
            *dflt = make_jit_at(f->dir, TLC_OPT_DEFAULT, "llvm");
    char *p0 = compile_rmsnorm(o0, f), *p3 = compile_rmsnorm(o3, f), *pd = compile_rmsnorm(dflt, f);
    tlc_jit_stats s0, s3, sd;
    tlc_jit_get_stats(o0, &s0);
    tlc_jit_get_stats(o3, &s3);
    tlc_jit_get_stats(dflt, &sd);
    assert_int_equal(s0.misses, 1);
    assert_int_equal(s3.misses, 1); /* not served -O0's entry */
    assert_int_equal(sd.hits, 1);   /* served -O3's */
    char entries[4][512];
    assert_int_equal(list_entries(f->dir, entries, 4), 2);
    assert_string_not_equal(p0, p3);
    assert_string_equal(p3, pd);
    assert_non_null(strstr(p0, ".entry rmsnorm("));
    /* -O0 keeps what -O3 removes: more PTX */
    assert_true(strlen(p0) > strlen(p3));
    tlc_free(p0);
    tlc_free(p3);
    tlc_free(pd);
    tlc_jit_destroy(o0);
    tlc_jit_destroy(o3);
    tlc_jit_destroy(dflt);
}

/* The SM count (driver.get_num_sms()) is a constant of the compile, given by
 * the options or the target's: each count has its own entry. */
static void num_sms_is_part_of_the_key(void **state) {
    fixture *f = *state;
    static const char src[] = "from tilelang.carver.arch import driver\n"
                              "@jit\n"
                              "def per_sm(X: Tensor[(4,), int32]):\n"
                              "    with Kernel(driver.get_num_sms(), threads=32) as b:\n"
                              "        X[0] = b\n";
    char *ptx[3] = {NULL, NULL, NULL}, *err = NULL;
    int counts[3] = {0, 77, 77};
    tlc_jit *j[3];
    for (int i = 0; i < 3; i++) {
        tlc_jit_options o = {.cache_dir = f->dir, .arch = "sm_90a", .num_sms = counts[i]};
        if (tlc_jit_create(&o, &j[i], &err) != TLC_OK) fail_msg("tlc_jit_create: %s", err);
        if (tlc_jit_compile(j[i], src, strlen(src), "per_sm.py", NULL, 0, NULL, &ptx[i], &err) != TLC_OK)
            fail_msg("tlc_jit_compile: %s", err);
    }
    tlc_jit_stats st[3];
    for (int i = 0; i < 3; i++) tlc_jit_get_stats(j[i], &st[i]);
    assert_int_equal(st[0].misses, 1);
    assert_int_equal(st[1].misses, 1); /* not served the target's count */
    assert_int_equal(st[2].hits, 1);
    assert_non_null(strstr(ptx[0], "grid 132 1 1")); /* sm_90a's part */
    assert_non_null(strstr(ptx[1], "grid 77 1 1"));
    tlc_jit_options neg = {.cache_dir = f->dir, .arch = "sm_90a", .num_sms = -1};
    tlc_jit *bad = NULL;
    assert_int_equal(tlc_jit_create(&neg, &bad, &err), TLC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "num_sms"));
    tlc_free(err);
    for (int i = 0; i < 3; i++) {
        tlc_free(ptx[i]);
        tlc_jit_destroy(j[i]);
    }
}

/* tlc's own generator is the default, with one entry whatever the level;
 * LLVM's PTX has entries of its own; $TLC_BACKEND picks when the options
 * do not. */
static void backend_is_part_of_the_key(void **state) {
    fixture *f = *state;
    unsetenv("TLC_BACKEND");
    tlc_jit *dflt = make_jit_at(f->dir, TLC_OPT_DEFAULT, NULL), *d0 = make_jit_at(f->dir, TLC_OPT_O0, "direct"),
            *llvm = make_jit_at(f->dir, TLC_OPT_DEFAULT, "llvm");
    assert_string_equal(tlc_jit_backend(dflt), "direct");
    assert_string_equal(tlc_jit_backend(llvm), "llvm");
    char *pd = compile_rmsnorm(dflt, f), *p0 = compile_rmsnorm(d0, f), *pl = compile_rmsnorm(llvm, f);
    tlc_jit_stats sd, s0, sl;
    tlc_jit_get_stats(dflt, &sd);
    tlc_jit_get_stats(d0, &s0);
    tlc_jit_get_stats(llvm, &sl);
    assert_int_equal(sd.misses, 1);
    assert_int_equal(s0.hits, 1); /* served the default's entry: the level does not apply */
    assert_int_equal(sl.misses, 1);
    assert_string_equal(pd, p0);
    assert_string_not_equal(pd, pl);
    /* the direct generator's registers: %vr (variables) beside LLVM's %r */
    assert_non_null(strstr(pd, "%vr"));
    assert_null(strstr(pl, "%vr"));
    tlc_free(pd);
    tlc_free(p0);
    tlc_free(pl);
    tlc_jit_destroy(dflt);
    tlc_jit_destroy(d0);
    tlc_jit_destroy(llvm);
    setenv("TLC_BACKEND", "llvm", 1);
    tlc_jit *env = make_jit_at(f->dir, TLC_OPT_DEFAULT, NULL);
    assert_string_equal(tlc_jit_backend(env), "llvm");
    char *pe = compile_rmsnorm(env, f);
    tlc_jit_stats se;
    tlc_jit_get_stats(env, &se);
    assert_int_equal(se.hits, 1); /* LLVM's -O3 entry */
    assert_null(strstr(pe, "%vr"));
    tlc_free(pe);
    tlc_jit_destroy(env);
    unsetenv("TLC_BACKEND");
}

static void bad_arguments_are_refused(void **state) {
    fixture *f = *state;
    tlc_jit *j = NULL;
    char *err = NULL, *p = NULL;
    tlc_jit_options o = {.arch = "sm_75", .cache_dir = f->dir};
    assert_int_equal(tlc_jit_create(&o, &j, &err), TLC_ERROR_INVALID_ARGUMENT);
    assert_null(j);
    assert_non_null(strstr(err, "sm_75"));
    tlc_free(err);
    tlc_jit_options bad_level = {.arch = "sm_90a", .cache_dir = f->dir, .opt_level = (tlc_opt_level)(TLC_OPT_O3 + 1)};
    assert_int_equal(tlc_jit_create(&bad_level, &j, &err), TLC_ERROR_INVALID_ARGUMENT);
    assert_null(j);
    assert_non_null(strstr(err, "opt_level 5"));
    tlc_free(err);
    tlc_jit_options bad_backend = {.arch = "sm_90a", .cache_dir = f->dir, .backend = "nvcc"};
    assert_int_equal(tlc_jit_create(&bad_backend, &j, &err), TLC_ERROR_INVALID_ARGUMENT);
    assert_null(j);
    assert_non_null(strstr(err, "unknown backend 'nvcc'"));
    tlc_free(err);
    setenv("TLC_BACKEND", "gcc", 1);
    tlc_jit_options env_backend = {.arch = "sm_90a", .cache_dir = f->dir};
    assert_int_equal(tlc_jit_create(&env_backend, &j, &err), TLC_ERROR_INVALID_ARGUMENT);
    unsetenv("TLC_BACKEND");
    assert_null(j);
    assert_non_null(strstr(err, "'gcc' in $TLC_BACKEND"));
    tlc_free(err);
    /* No arch and no GPU here (the unit tests run without one): a clear status. */
    tlc_jit_options noarch = {.cache_dir = f->dir};
    tlc_status st = tlc_jit_create(&noarch, &j, &err);
    if (st != TLC_OK) {
        assert_int_equal(st, TLC_ERROR_NO_DEVICE);
        assert_non_null(err);
        tlc_free(err);
    } else {
        tlc_jit_destroy(j);
    }
    j = make_jit(f->dir, false);
    assert_int_equal(tlc_jit_compile(NULL, f->src, f->len, "x", NULL, 0, NULL, &p, &err), TLC_ERROR_INVALID_ARGUMENT);
    tlc_free(err);
    tlc_jit_define noval[] = {{"C", NULL}};
    assert_int_equal(tlc_jit_compile(j, f->src, f->len, "x", noval, 1, NULL, &p, &err), TLC_ERROR_INVALID_ARGUMENT);
    assert_null(p);
    tlc_free(err);
    assert_int_equal(tlc_jit_compile(j, NULL, 5, "x", NULL, 0, NULL, &p, NULL), TLC_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tlc_jit_compile_file(j, "/nonexistent/x.tl", NULL, 0, NULL, &p, &err), TLC_ERROR_IO);
    assert_non_null(strstr(err, "/nonexistent/x.tl"));
    tlc_free(err);
    assert_int_equal(tlc_jit_load_kernel(j, NULL, f->src, f->len, "x", NULL, 0, "rmsnorm", NULL, NULL, &err),
                     TLC_ERROR_INVALID_ARGUMENT);
    tlc_free(err);
    assert_string_equal(tlc_status_string(TLC_ERROR_COMPILE), "TLC_ERROR_COMPILE");
    assert_true(strlen(tlc_version()) > 0);
    tlc_jit_destroy(j);
}

/* A function of several kernels: its name (or any of its kernels' names)
 * compiles all of them with the function's record; loading it without a
 * GPU driver is a clear runtime error. */
static void function_of_two_kernels(void **state) {
    fixture *f = *state;
    tlc_jit *j = make_jit(f->dir, false);
    size_t len;
    char *src = tlc_read_file(TLC_SOURCE_DIR "/dsl-examples/split_logsumexp.tl", &len);
    assert_non_null(src);
    char *ptx = NULL, *ptx1 = NULL, *err = NULL;
    if (tlc_jit_compile(j, src, len, "s.tl", NULL, 0, "split_logsumexp", &ptx, &err) != TLC_OK) fail_msg("%s", err);
    assert_non_null(strstr(ptx, "// tlc.meta function split_logsumexp\n"));
    assert_non_null(strstr(ptx, "// tlc.meta launch split_logsumexp_k1\n"));
    assert_non_null(strstr(ptx, ".entry split_logsumexp_k0("));
    assert_non_null(strstr(ptx, ".entry split_logsumexp_k1("));
    tlrt_module_meta m;
    char merr[256];
    assert_true(tlrt_meta_parse(ptx, strlen(ptx), &m, merr, sizeof merr));
    assert_int_equal(m.nfunctions, 1);
    assert_int_equal(m.functions[0].nworkspaces, 2);
    tlrt_meta_free(&m);
    assert_int_equal(tlc_jit_compile(j, src, len, "s.tl", NULL, 0, "split_logsumexp_k1", &ptx1, &err), TLC_OK);
    assert_string_equal(ptx, ptx1);
    tlc_free(ptx1);

    tlrt_context *ctx = NULL;
    tlrt_init_options o = {0, "/nonexistent/libcuda.so.1"};
    assert_int_equal(tlrt_init_ex(&ctx, &o), TLRT_ERROR_NO_DRIVER);
    tlrt_module *mod = (tlrt_module *)&mod;
    tlrt_function *fn = (tlrt_function *)&fn;
    assert_int_equal(tlc_jit_load_function(j, ctx, src, len, "s.tl", NULL, 0, "split_logsumexp", &mod, &fn, &err),
                     TLC_ERROR_RUNTIME);
    assert_null(mod);
    assert_null(fn);
    assert_non_null(strstr(err, "no CUDA driver"));
    tlc_free(err);
    assert_int_equal(tlc_jit_load_function(j, ctx, src, len, "s.tl", NULL, 0, NULL, &mod, &fn, &err),
                     TLC_ERROR_INVALID_ARGUMENT);
    tlc_free(err);
    assert_int_equal(tlc_jit_load_function(j, ctx, src, len, "s.tl", NULL, 0, "nope", &mod, &fn, &err),
                     TLC_ERROR_COMPILE);
    assert_non_null(strstr(err, "no kernel named 'nope'"));
    tlc_free(err);
    tlrt_destroy(ctx);
    tlc_free(ptx);
    free(src);
    tlc_jit_destroy(j);
}

/* ---- 8 threads, one jit object, one cache dir ---- */

enum { NTHREADS = 8, ROUNDS = 3 };

typedef struct worker {
    tlc_jit *jit;
    const char *src[2];
    size_t len[2];
    const char *want[2];
    int id;
    int mismatches, errors;
} worker;

static const tlc_jit_define C320[] = {{"C", "320"}, {"BLOCK_M", "2"}};

static void *work(void *arg) {
    worker *w = arg;
    for (int r = 0; r < ROUNDS; r++) {
        int which = (w->id + r) % 2; /* half the threads on each source, swapping */
        char *p = NULL, *err = NULL;
        if (tlc_jit_compile(w->jit, w->src[which], w->len[which], "rmsnorm.tl", which ? C320 : DEFS, which ? 2 : 3,
                            "rmsnorm", &p, &err) != TLC_OK)
            w->errors++;
        else if (strcmp(p, w->want[which]) != 0)
            w->mismatches++;
        tlc_free(p);
        tlc_free(err);
    }
    return NULL;
}

static void concurrent_compiles_agree(void **state) {
    fixture *f = *state;
    /* A second, different source: the same file with a comment appended. */
    size_t len2 = f->len + 32;
    char *src2 = malloc(len2 + 1);
    memcpy(src2, f->src, f->len);
    snprintf(src2 + f->len, 33, "\n# a different source text ...\n");
    len2 = strlen(src2);

    tlc_jit *ref = make_jit(f->dir, true);
    char *want[2] = {NULL, NULL}, *err = NULL;
    assert_int_equal(tlc_jit_compile(ref, f->src, f->len, "rmsnorm.tl", DEFS, 3, "rmsnorm", &want[0], &err), TLC_OK);
    assert_int_equal(tlc_jit_compile(ref, src2, len2, "rmsnorm.tl", C320, 2, "rmsnorm", &want[1], &err), TLC_OK);
    assert_string_not_equal(want[0], want[1]);

    tlc_jit *j = make_jit(f->dir, false);
    worker w[NTHREADS];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker){j, {f->src, src2}, {f->len, len2}, {want[0], want[1]}, i, 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++) {
        assert_int_equal(w[i].errors, 0);
        assert_int_equal(w[i].mismatches, 0);
    }
    tlc_jit_stats s;
    tlc_jit_get_stats(j, &s);
    assert_int_equal(s.hits + s.misses, NTHREADS * ROUNDS);
    assert_true(s.misses >= 2);  /* each source compiled at least once */
    assert_true(s.hits >= 1);
    assert_int_equal(s.corrupt, 0); /* no reader ever saw a half-written entry */
    char entries[4][512];
    assert_int_equal(list_entries(f->dir, entries, 4), 2);
    assert_int_equal(count_files(f->dir), 2); /* no temporary files left behind */
    tlc_free(want[0]);
    tlc_free(want[1]);
    free(src2);
    tlc_jit_destroy(j);
    tlc_jit_destroy(ref);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(second_compile_is_a_cache_hit, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupted_entry_is_recompiled, setup, teardown),
        cmocka_unit_test_setup_teardown(compile_error_has_location, setup, teardown),
        cmocka_unit_test_setup_teardown(opt_level_is_part_of_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(backend_is_part_of_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(num_sms_is_part_of_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_arguments_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(function_of_two_kernels, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_compiles_agree, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
