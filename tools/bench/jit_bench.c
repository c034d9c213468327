/* JIT latency: a cold compile of a DSL file to PTX (cache disabled), and a
 * cache hit (same source and defines, warm cache), each the median of many.
 * Needs no GPU (the arch is given). Run on one core:
 *
 *   taskset -c 0 jit_bench [FILE] [-D NAME=VALUE]... [--kernel K] [--arch sm_90a]
 *                          [--cold N] [--hits N] [--ptx OUT.ptx] [--load N]
 *
 * FILE defaults to dsl-examples/rmsnorm.tl; --ptx also writes the PTX.
 * --load N (a GPU, and --kernel): tlc_jit_load_kernel on a warm cache, the
 * module load included (the cache keeps the driver's machine code), N
 * times, beside loading the PTX itself (the driver compiles it). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tlc/runtime.h"
#include "tlc/tlc.h"

#ifndef TLC_SOURCE_DIR
#define TLC_SOURCE_DIR "."
#endif

enum { MAX_DEFINES = 32 };

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            *len = fread(buf, 1, (size_t)n, f);
            buf[*len] = 0;
        }
    }
    fclose(f);
    return buf;
}

/* --load: a cache hit through tlc_jit_load_kernel (machine code from the
 * cache) against loading the PTX (the driver compiles it), n times each. */
static int time_loads(tlc_jit *jit, const char *src, size_t len, const char *path, const tlc_jit_define *defs,
                      int ndefs, const char *kernel, int n, double *t) {
    tlrt_context *ctx = NULL;
    if (tlrt_init(&ctx, -1) != TLRT_SUCCESS) {
        printf("module loads: skipped (%s)\n", tlrt_last_error(ctx));
        tlrt_destroy(ctx);
        return 0;
    }
    char *err = NULL, *ptx = NULL;
    tlrt_module *m = NULL;
    tlrt_kernel *k = NULL;
    int rc = 1;
    /* the first load makes the machine code and keeps it */
    if (tlc_jit_load_kernel(jit, ctx, src, len, path, defs, ndefs, kernel, &m, &k, &err) != TLC_OK) goto out;
    tlrt_module_unload(ctx, m);
    tlc_jit_stats before, after;
    tlc_jit_get_stats(jit, &before);
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (tlc_jit_load_kernel(jit, ctx, src, len, path, defs, ndefs, kernel, &m, &k, &err) != TLC_OK) goto out;
        t[i] = now_ms() - t0;
        tlrt_module_unload(ctx, m);
    }
    tlc_jit_get_stats(jit, &after);
    double hit = median(t, n), hit_min = t[0]; /* median sorts t */
    if (tlc_jit_compile(jit, src, len, path, defs, ndefs, kernel, &ptx, &err) != TLC_OK) goto out;
    int np = n < 5 ? n : 5;
    for (int i = 0; i < np; i++) {
        double t0 = now_ms();
        if (tlrt_module_load_ptx(ctx, ptx, strlen(ptx), &m) != TLRT_SUCCESS) goto out;
        t[i] = now_ms() - t0;
        tlrt_module_unload(ctx, m);
    }
    /* the first load of the PTX in the process has the driver compile it;
     * later ones may come from the driver's own cache (~/.nv/ComputeCache,
     * when enabled and not full) */
    double first = t[0], later = np > 1 ? median(t + 1, np - 1) : first;
    printf("| load, cache hit (machine code) | %.2f ms | %.2f ms | %d |\n", hit, hit_min, n);
    printf("| first load of the PTX (the driver compiles it) | %.1f ms | | 1 |\n", first);
    if (np > 1) printf("| later loads of the PTX (driver's cache) | %.2f ms | | %d |\n", later, np - 1);
    rc = after.machine_code_hits - before.machine_code_hits == (uint64_t)n ? 0 : 1;
    if (rc) fprintf(stderr, "expected %d machine-code hits, counted %llu\n", n,
                    (unsigned long long)(after.machine_code_hits - before.machine_code_hits));
out:
    if (err) fprintf(stderr, "%s\n", err);
    if (rc && !err) fprintf(stderr, "%s\n", tlrt_last_error(ctx));
    tlc_free(err);
    tlc_free(ptx);
    tlrt_destroy(ctx);
    return rc;
}

static int usage(void) {
    fprintf(stderr, "usage: jit_bench [FILE] [-D NAME=VALUE]... [--kernel K] [--arch A] [--cold N] [--hits N] [--ptx OUT]"
                    " [--load N]\n");
    return 2;
}

int main(int argc, char **argv) {
    const char *path = TLC_SOURCE_DIR "/dsl-examples/rmsnorm.tl", *kernel = NULL, *arch = "sm_90a", *ptx_out = NULL;
    int ncold = 20, nhits = 1000, ndefs = 0, nload = 0;
    tlc_jit_define defs[MAX_DEFINES];
    char *defbuf[MAX_DEFINES];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-D") && i + 1 < argc && ndefs < MAX_DEFINES) {
            char *eq = strchr(defbuf[ndefs] = strdup(argv[++i]), '=');
            if (!eq) return usage();
            *eq = 0;
            defs[ndefs] = (tlc_jit_define){defbuf[ndefs], eq + 1};
            ndefs++;
        } else if (!strcmp(a, "--kernel") && i + 1 < argc) kernel = argv[++i];
        else if (!strcmp(a, "--arch") && i + 1 < argc) arch = argv[++i];
        else if (!strcmp(a, "--cold") && i + 1 < argc) ncold = atoi(argv[++i]);
        else if (!strcmp(a, "--hits") && i + 1 < argc) nhits = atoi(argv[++i]);
        else if (!strcmp(a, "--ptx") && i + 1 < argc) ptx_out = argv[++i];
        else if (!strcmp(a, "--load") && i + 1 < argc) nload = atoi(argv[++i]);
        else if (a[0] == '-') return usage();
        else path = a;
    }
    if (ncold < 1 || nhits < 1 || nload < 0 || (nload && !kernel)) return usage();
    size_t len = 0;
    char *src = read_text(path, &len);
    if (!src) {
        fprintf(stderr, "%s: cannot read\n", path);
        return 1;
    }

    char dir[] = "/tmp/tlc-jit-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char *err = NULL, *ptx = NULL;
    tlc_jit *cold = NULL, *warm = NULL;
    tlc_jit_options ocold = {.arch = arch, .disable_cache = true}, owarm = {.arch = arch, .cache_dir = dir};
    if (tlc_jit_create(&ocold, &cold, &err) || tlc_jit_create(&owarm, &warm, &err)) {
        fprintf(stderr, "tlc_jit_create: %s\n", err);
        return 1;
    }

    double *t = malloc(sizeof(double) * (size_t)(ncold > nhits ? ncold : nhits));
    size_t ptx_len = 0;
    for (int i = 0; i < ncold; i++) {
        double t0 = now_ms();
        tlc_status st = tlc_jit_compile(cold, src, len, path, defs, ndefs, kernel, &ptx, &err);
        t[i] = now_ms() - t0;
        if (st != TLC_OK) {
            fprintf(stderr, "%s\n%s", tlc_status_string(st), err ? err : "");
            return 1;
        }
        ptx_len = strlen(ptx);
        if (i == 0 && ptx_out) {
            FILE *f = fopen(ptx_out, "w");
            if (!f || fputs(ptx, f) < 0 || fclose(f)) {
                fprintf(stderr, "%s: cannot write\n", ptx_out);
                return 1;
            }
        }
        tlc_free(ptx);
    }
    double cold_med = median(t, ncold);
    double cold_min = t[0];

    /* Fill the cache, then time hits. */
    if (tlc_jit_compile(warm, src, len, path, defs, ndefs, kernel, &ptx, &err) != TLC_OK) return 1;
    tlc_free(ptx);
    for (int i = 0; i < nhits; i++) {
        double t0 = now_ms();
        tlc_status st = tlc_jit_compile(warm, src, len, path, defs, ndefs, kernel, &ptx, &err);
        t[i] = now_ms() - t0;
        if (st != TLC_OK) return 1;
        tlc_free(ptx);
    }
    double hit_med = median(t, nhits);
    tlc_jit_stats s;
    tlc_jit_get_stats(warm, &s);
    int rc = s.hits == (uint64_t)nhits ? 0 : 1;

    printf("jit_bench: %s (%d defines, kernel %s, %s), PTX %zu bytes\n", path, ndefs, kernel ? kernel : "all", arch,
           ptx_len);
    printf("| measurement | median | min | n |\n| --- | --- | --- | --- |\n");
    printf("| cold compile to PTX | %.2f ms | %.2f ms | %d |\n", cold_med, cold_min, ncold);
    printf("| cache hit | %.3f ms | %.3f ms | %d |\n", hit_med, t[0], nhits);
    if (rc) fprintf(stderr, "expected %d cache hits, counted %llu\n", nhits, (unsigned long long)s.hits);
    if (nload && !rc) rc = time_loads(warm, src, len, path, defs, ndefs, kernel, nload, t);

    /* Clean the temporary cache. */
    char key_path[4200];
    snprintf(key_path, sizeof key_path, "rm -rf '%s'", dir);
    if (system(key_path) != 0) fprintf(stderr, "could not remove %s\n", dir);
    tlc_jit_destroy(cold);
    tlc_jit_destroy(warm);
    for (int i = 0; i < ndefs; i++) free(defbuf[i]);
    free(t);
    free(src);
    return rc;
}
