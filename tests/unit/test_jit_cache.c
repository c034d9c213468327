/* The JIT's on-disk cache (compiler/api/jit_cache.h): SHA-256, keys, hits and
 * misses, corrupted and truncated entries, concurrent writers (threads and
 * processes), and the latency of a hit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "api/jit_cache.h"
#include "api/jit_sha256.h"
#include "support/read_file.h"

static void hex(const uint8_t *d, char *out) {
    for (int i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha256_vectors(void **state) {
    (void)state;
    uint8_t d[32];
    char h[65];
    tlc_sha256("", 0, d);
    hex(d, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    tlc_sha256("abc", 3, d);
    hex(d, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    tlc_sha256(m448, strlen(m448), d);
    hex(d, h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* a million 'a', fed in uneven pieces */
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    tlc_sha256_ctx s;
    tlc_sha256_init(&s);
    size_t off = 0, step = 1;
    while (off < 1000000) {
        size_t n = step < 1000000 - off ? step : 1000000 - off;
        tlc_sha256_update(&s, a + off, n);
        off += n;
        step = step * 3 % 997 + 1;
    }
    tlc_sha256_final(&s, d);
    hex(d, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static tlc_jit_key key_of(const char *src, const tlc_define *defs, int ndefs, const char *kernel, const char *arch) {
    tlc_jit_key_input in = {src, strlen(src), defs, ndefs, kernel, arch, "0.1.0", NULL};
    tlc_jit_key k;
    tlc_jit_key_compute(&in, &k);
    return k;
}

static bool same(tlc_jit_key a, tlc_jit_key b) { return memcmp(a.bytes, b.bytes, 32) == 0; }

static void keys(void **state) {
    (void)state;
    tlc_define d1[] = {{"BLOCK", "128"}, {"DTYPE", "float16"}}, d2[] = {{"DTYPE", "float16"}, {"BLOCK", "128"}},
               d3[] = {{"BLOCK", "256"}, {"DTYPE", "float16"}}, r1[] = {{"N", "1"}, {"N", "2"}},
               r2[] = {{"N", "2"}, {"N", "1"}}, j1[] = {{"AB", "C"}}, j2[] = {{"A", "BC"}};
    tlc_jit_key base = key_of("src", d1, 2, NULL, "sm_90a");
    assert_true(same(base, key_of("src", d1, 2, NULL, "sm_90a")));
    assert_true(same(base, key_of("src", d2, 2, NULL, "sm_90a"))); /* -D order does not matter */
    assert_false(same(base, key_of("src", d3, 2, NULL, "sm_90a")));
    assert_false(same(base, key_of("src ", d1, 2, NULL, "sm_90a")));
    assert_false(same(base, key_of("src", d1, 2, "k", "sm_90a")));
    assert_false(same(base, key_of("src", d1, 2, "", "sm_90a")));  /* "" differs from NULL */
    assert_false(same(base, key_of("src", d1, 2, NULL, "sm_80")));
    assert_false(same(base, key_of("src", d1, 1, NULL, "sm_90a")));
    assert_false(same(key_of("s", r1, 2, NULL, "sm_80"), key_of("s", r2, 2, NULL, "sm_80"))); /* last repeat wins */
    assert_false(same(key_of("s", j1, 1, NULL, "sm_80"), key_of("s", j2, 1, NULL, "sm_80")));
    tlc_jit_key_input in = {"src", 3, d1, 2, NULL, "sm_90a", "0.2.0", NULL};
    tlc_jit_key k;
    tlc_jit_key_compute(&in, &k);
    assert_false(same(base, k)); /* compiler version */
    in.compiler_version = "0.1.0";
    in.options = "O3";
    tlc_jit_key_compute(&in, &k);
    assert_false(same(base, k));
    char h[65];
    tlc_jit_key_hex(&base, h);
    assert_int_equal(strlen(h), 64);
}

static char *make_tmpdir(void) {
    char *t = strdup("/tmp/tlc-jit-cache-test-XXXXXX");
    assert_non_null(mkdtemp(t));
    return t;
}

static void rm_rf(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_rf(p);
        else unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int count_files(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) n++;
    if (d) closedir(d);
    return n;
}

static const char *PAYLOAD = "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n// tlc.meta end\n.version 8.0\n.target sm_90a\n";

static void hit_and_miss(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    char sub[4200], err[512];
    snprintf(sub, sizeof sub, "%s/a/b/c", dir); /* created on store, like mkdir -p */
    tlc_jit_key k = key_of("kernel source", NULL, 0, NULL, "sm_90a"), other = key_of("x", NULL, 0, NULL, "sm_90a");
    char *payload;
    size_t len;
    assert_int_equal(tlc_jit_cache_lookup(sub, &k, &payload, &len, err, sizeof err), TLC_JIT_CACHE_MISS);
    assert_true(tlc_jit_cache_store(sub, &k, PAYLOAD, strlen(PAYLOAD), err, sizeof err));
    assert_int_equal(tlc_jit_cache_lookup(sub, &k, &payload, &len, err, sizeof err), TLC_JIT_CACHE_HIT);
    assert_int_equal(len, strlen(PAYLOAD));
    assert_string_equal(payload, PAYLOAD); /* NUL-terminated */
    free(payload);
    assert_int_equal(tlc_jit_cache_lookup(sub, &other, &payload, &len, err, sizeof err), TLC_JIT_CACHE_MISS);
    assert_null(payload);
    /* overwrite with a new payload */
    assert_true(tlc_jit_cache_store(sub, &k, "v2", 2, err, sizeof err));
    assert_int_equal(tlc_jit_cache_lookup(sub, &k, &payload, &len, err, sizeof err), TLC_JIT_CACHE_HIT);
    assert_string_equal(payload, "v2");
    free(payload);
    /* empty payload is a valid entry */
    assert_true(tlc_jit_cache_store(sub, &other, "", 0, err, sizeof err));
    assert_int_equal(tlc_jit_cache_lookup(sub, &other, &payload, &len, err, sizeof err), TLC_JIT_CACHE_HIT);
    assert_int_equal(len, 0);
    free(payload);
    assert_int_equal(count_files(sub, ".tmp-"), 0);
    /* A file where the directory should be. */
    char file[4200];
    snprintf(file, sizeof file, "%s/plainfile", dir);
    close(open(file, O_CREAT | O_WRONLY, 0644));
    assert_false(tlc_jit_cache_store(file, &k, "x", 1, err, sizeof err));
    assert_true(err[0] != 0);
    rm_rf(dir);
    free(dir);
}

static void read_file(const char *path, char **data, size_t *len) {
    *data = tlc_read_file(path, len);
    assert_non_null(*data);
}

static void write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Every damaged form of an entry is a miss (CORRUPT), and is removed. */
static void corruption(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    char err[512], path[4200];
    tlc_jit_key k = key_of("src", NULL, 0, NULL, "sm_80"), k2 = key_of("src2", NULL, 0, NULL, "sm_80");
    assert_true(tlc_jit_cache_store(dir, &k, PAYLOAD, strlen(PAYLOAD), err, sizeof err));
    assert_true(tlc_jit_cache_entry_path(dir, &k, path, sizeof path));
    char *good;
    size_t good_len;
    read_file(path, &good, &good_len);
    assert_int_equal(good_len, TLC_JIT_ENTRY_HEADER_BYTES + strlen(PAYLOAD));
    char *payload;
    size_t len;
    /* flip one bit at every offset, header and payload */
    for (size_t off = 0; off < good_len; off++) {
        if (off >= 12 && off < 16) continue; /* reserved bytes are not checked */
        good[off] ^= 0x10;
        write_file(path, good, good_len);
        good[off] ^= 0x10;
        tlc_jit_cache_result r = tlc_jit_cache_lookup(dir, &k, &payload, &len, err, sizeof err);
        if (r != TLC_JIT_CACHE_CORRUPT) fail_msg("flipped byte %zu: result %d", off, (int)r);
        assert_null(payload);
        assert_int_equal(access(path, F_OK), -1); /* removed */
        assert_int_equal(tlc_jit_cache_lookup(dir, &k, &payload, &len, err, sizeof err), TLC_JIT_CACHE_MISS);
    }
    /* every truncation, and one extra byte */
    for (size_t n = 0; n < good_len; n++) {
        write_file(path, good, n);
        assert_int_equal(tlc_jit_cache_lookup(dir, &k, &payload, &len, err, sizeof err), TLC_JIT_CACHE_CORRUPT);
    }
    char *longer = malloc(good_len + 1);
    memcpy(longer, good, good_len);
    longer[good_len] = 'x';
    write_file(path, longer, good_len + 1);
    assert_int_equal(tlc_jit_cache_lookup(dir, &k, &payload, &len, err, sizeof err), TLC_JIT_CACHE_CORRUPT);
    free(longer);
    /* an intact entry under another key's name */
    char path2[4200];
    assert_true(tlc_jit_cache_entry_path(dir, &k2, path2, sizeof path2));
    write_file(path2, good, good_len);
    assert_int_equal(tlc_jit_cache_lookup(dir, &k2, &payload, &len, err, sizeof err), TLC_JIT_CACHE_CORRUPT);
    assert_non_null(strstr(err, "failed verification"));
    /* a directory in place of the entry */
    mkdir(path, 0755);
    tlc_jit_cache_result r = tlc_jit_cache_lookup(dir, &k, &payload, &len, err, sizeof err);
    assert_true(r == TLC_JIT_CACHE_CORRUPT || r == TLC_JIT_CACHE_ERROR);
    rmdir(path);
    /* a FIFO in place of the entry: refused at once, never waited on (the
     * alarm turns a blocking open into a failed test) */
    assert_int_equal(mkfifo(path, 0644), 0);
    alarm(10);
    r = tlc_jit_cache_lookup(dir, &k, &payload, &len, err, sizeof err);
    alarm(0);
    assert_int_equal(r, TLC_JIT_CACHE_CORRUPT);
    unlink(path);
    /* and after all that, a store makes it whole again */
    assert_true(tlc_jit_cache_store(dir, &k, PAYLOAD, strlen(PAYLOAD), err, sizeof err));
    assert_int_equal(tlc_jit_cache_lookup(dir, &k, &payload, &len, err, sizeof err), TLC_JIT_CACHE_HIT);
    free(payload);
    free(good);
    rm_rf(dir);
    free(dir);
}

typedef struct worker {
    const char *dir;
    const char *payload;
    size_t len;
    int bad;
} worker;

static void *writer(void *arg) {
    worker *w = arg;
    tlc_jit_key k = key_of("shared", NULL, 0, NULL, "sm_90a");
    char err[512];
    for (int i = 0; i < 40; i++) {
        if (!tlc_jit_cache_store(w->dir, &k, w->payload, w->len, err, sizeof err)) w->bad++;
        char *p;
        size_t n;
        tlc_jit_cache_result r = tlc_jit_cache_lookup(w->dir, &k, &p, &n, err, sizeof err);
        if (r == TLC_JIT_CACHE_HIT && (n != w->len || memcmp(p, w->payload, n) != 0)) w->bad++;
        if (r != TLC_JIT_CACHE_HIT && r != TLC_JIT_CACHE_MISS) w->bad++;
        free(p);
    }
    return NULL;
}

static void concurrent_writers(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    size_t len = 200000;
    char *payload = malloc(len);
    for (size_t i = 0; i < len; i++) payload[i] = (char)('a' + i % 26);
    /* processes, each with threads */
    enum { PROCS = 3, THREADS = 4 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0) {
            pthread_t th[THREADS];
            worker w[THREADS];
            for (int t = 0; t < THREADS; t++) {
                w[t] = (worker){dir, payload, len, 0};
                pthread_create(&th[t], NULL, writer, &w[t]);
            }
            int bad = 0;
            for (int t = 0; t < THREADS; t++) {
                pthread_join(th[t], NULL);
                bad += w[t].bad;
            }
            _exit(bad ? 1 : 0);
        }
    }
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t] = (worker){dir, payload, len, 0};
        pthread_create(&th[t], NULL, writer, &w[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(w[t].bad, 0);
    }
    for (int p = 0; p < PROCS; p++) {
        int status;
        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    tlc_jit_key k = key_of("shared", NULL, 0, NULL, "sm_90a");
    char *got, err[512];
    size_t n;
    assert_int_equal(tlc_jit_cache_lookup(dir, &k, &got, &n, err, sizeof err), TLC_JIT_CACHE_HIT);
    assert_int_equal(n, len);
    assert_memory_equal(got, payload, len);
    free(got);
    assert_int_equal(count_files(dir, ".tmp-"), 0);
    assert_int_equal(count_files(dir, ""), 3); /* ".", "..", the entry */
    free(payload);
    rm_rf(dir);
    free(dir);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void hit_latency(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    size_t sizes[] = {16 * 1024, 100 * 1024};
    for (size_t s = 0; s < 2; s++) {
        char *payload = malloc(sizes[s]), err[512], source[4097];
        memset(payload, 'p', sizes[s]);
        memset(source, 's', 4096); /* a kernel source of 4 KiB */
        source[4096] = 0;
        tlc_jit_key k = key_of(source, NULL, 0, NULL, "sm_90a");
        assert_true(tlc_jit_cache_store(dir, &k, payload, sizes[s], err, sizeof err));
        enum { N = 500 };
        double t0 = now_s();
        for (int i = 0; i < N; i++) {
            char *p;
            size_t n;
            tlc_jit_key kk = key_of(source, NULL, 0, NULL, "sm_90a"); /* a hit includes hashing the key */
            assert_int_equal(tlc_jit_cache_lookup(dir, &kk, &p, &n, err, sizeof err), TLC_JIT_CACHE_HIT);
            free(p);
        }
        double per = (now_s() - t0) / N;
        print_message("jit cache hit (key + lookup), %zu KiB PTX: %.1f us\n", sizes[s] / 1024, per * 1e6);
        free(payload);
    }
    rm_rf(dir);
    free(dir);
}

static void default_dir(void **state) {
    (void)state;
    char buf[256], err[256];
    setenv("TLC_CACHE_DIR", "/some/where", 1);
    assert_true(tlc_jit_cache_default_dir(buf, sizeof buf, err, sizeof err));
    assert_string_equal(buf, "/some/where");
    unsetenv("TLC_CACHE_DIR");
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/home/u", 1);
    assert_true(tlc_jit_cache_default_dir(buf, sizeof buf, err, sizeof err));
    assert_string_equal(buf, "/home/u/.cache/tlc");
    unsetenv("HOME");
    assert_false(tlc_jit_cache_default_dir(buf, sizeof buf, err, sizeof err));
    assert_non_null(strstr(err, "TLC_CACHE_DIR"));
    if (home) setenv("HOME", home, 1);
    free(home);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors), cmocka_unit_test(keys),        cmocka_unit_test(hit_and_miss),
        cmocka_unit_test(corruption),     cmocka_unit_test(concurrent_writers), cmocka_unit_test(hit_latency),
        cmocka_unit_test(default_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
