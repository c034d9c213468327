/* gpu/rmsnorm: dsl-examples/rmsnorm.tl (rmsnorm and rmsnorm_silu), compiled
 * through the JIT for this GPU, against a float64 reference on the CPU.
 *
 * C in {32 .. 32768} (widths of a video VAE and of LLM hidden sizes, and
 * 2080, which no thread count divides into vectors) x rows in {1, 7, 4096,
 * 302400} (at most 2^28 elements per buffer) x {float16, bfloat16} x
 * {plain, fused SiLU}; launch configs from tools/bench/rmsnorm_config.h's
 * rule (the benchmark's), overridden per C by $TLC_RMSNORM_CONFIGS
 * ("C:BLOCK_M:threads,...",
 * as the benchmark's --sweep writes them). Random x (each row with its own scale, never all zeros) and
 * random weights; the output is poisoned with 0xFF bytes (NaN in both
 * dtypes) before every launch and every element is checked:
 *   |y - ref| <= 1e-2 * |ref| + atol   (atol 1e-3 for float16, 2e-3 for bfloat16)
 * The host work runs on all cores (pthreads).
 *
 *   test_rmsnorm [path/to/rmsnorm.tl] [--quick]
 * (--quick: rows up to 4096 only.) Exits 0 when every case passes, 1
 * otherwise, 77 ("skipped: no CUDA driver") without a GPU. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../tools/bench/rmsnorm_config.h"
#include "gpu_test_support.h"
#include "tlc/tlc.h"

#ifndef TLC_SOURCE_DIR
#define TLC_SOURCE_DIR "."
#endif

static const int COLS[] = {32, 96, 160, 192, 256, 320, 384, 512, 640, 1024, 2048, 2080, 4096, 5120, 8192, 12288, 16384, 32768};
static const int64_t ROWS[] = {1, 7, 4096, 302400};
enum { NCOLS = sizeof COLS / sizeof COLS[0], NROWS = sizeof ROWS / sizeof ROWS[0], MAX_THREADS = 64 };

/* ---- host helpers ---- */


typedef struct job {
    /* inputs */
    tlrt_dtype dt;
    int C;
    int64_t row0, row1;
    uint64_t seed;
    uint16_t *x;
    const uint16_t *w, *y;
    const float *decode; /* 65536 entries: bits -> float for dt */
    bool silu;
    double atol;
    /* outputs of a check */
    int64_t bad, first_bad;
    double first_got, first_ref, max_err_over_tol, err2, ref2;
} job;


static void *gen_rows(void *p) {
    job *j = p;
    for (int64_t r = j->row0; r < j->row1; r++) {
        uint64_t s = j->seed ^ ((uint64_t)r * 0xd1b54a32d192ed03ull);
        double scale = exp(gts_unif(&s, log(0.05), log(20.0))); /* rows of very different magnitude */
        uint16_t *row = j->x + r * j->C;
        for (int c = 0; c < j->C; c++) row[c] = gts_encode(j->dt, (float)(scale * gts_unif(&s, -1.0, 1.0)));
        if (j->decode[row[0]] == 0.0f) row[0] = gts_encode(j->dt, (float)scale); /* never an all-zero row */
    }
    return NULL;
}

static void *check_rows(void *p) {
    job *j = p;
    j->bad = 0;
    j->first_bad = -1;
    j->max_err_over_tol = 0.0;
    j->err2 = j->ref2 = 0.0;
    const int C = j->C;
    for (int64_t r = j->row0; r < j->row1; r++) {
        const uint16_t *xr = j->x + r * C, *yr = j->y + r * C;
        double ss = 0.0;
        for (int c = 0; c < C; c++) {
            double v = j->decode[xr[c]];
            ss += v * v;
        }
        double inv = 1.0 / sqrt(ss / C + 1e-5);
        for (int c = 0; c < C; c++) {
            double ref = j->decode[xr[c]] * inv * j->decode[j->w[c]];
            if (j->silu) ref = ref / (1.0 + exp(-ref));
            double got = j->decode[yr[c]];
            double err = fabs(got - ref), tol = 1e-2 * fabs(ref) + j->atol;
            j->err2 += err * err;
            j->ref2 += ref * ref;
            if (!(err <= tol)) { /* NaN (an unwritten element) lands here too */
                if (j->first_bad < 0) {
                    j->first_bad = r * C + c;
                    j->first_got = got;
                    j->first_ref = ref;
                }
                j->bad++;
                if (err != err) err = INFINITY;
            }
            if (err / tol > j->max_err_over_tol) j->max_err_over_tol = err / tol;
        }
    }
    return NULL;
}

/* Splits rows over threads, runs fn on each part, leaves the parts in jobs[]. */
static int run_parallel(void *(*fn)(void *), const job *tmpl, int64_t rows, job *jobs, int nthreads) {
    pthread_t th[MAX_THREADS];
    int n = rows < nthreads ? (int)rows : nthreads;
    for (int i = 0; i < n; i++) {
        jobs[i] = *tmpl;
        jobs[i].row0 = rows * i / n;
        jobs[i].row1 = rows * (i + 1) / n;
    }
    int started = 0;
    for (; started < n; started++)
        if (pthread_create(&th[started], NULL, fn, &jobs[started]) != 0) break;
    for (int i = started; i < n; i++) fn(&jobs[i]); /* could not start a thread: do it here */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    return n;
}

/* ---- the test ---- */

typedef struct state {
    tlrt_context *ctx;
    tlc_jit *jit;
    const char *path;
    char *src;
    size_t len;
    int nthreads;
    float *decode[2]; /* float16, bfloat16 */
    int cases, failures;
} state;

/* `cfg`, unless the list in $env ("C:BLOCK_M:threads,...") names C. */
static tlc_rmsnorm_config env_override(tlc_rmsnorm_config cfg, const char *env) {
    const char *p = getenv(env);
    while (p && *p) {
        int c, bm, th, n = 0;
        if (sscanf(p, "%d:%d:%d%n", &c, &bm, &th, &n) != 3 || n == 0) break;
        if (c == cfg.C && bm > 0 && th > 0) cfg = (tlc_rmsnorm_config){c, bm, th};
        p += n;
        while (*p == ',' || *p == ' ' || *p == '\n') p++;
    }
    return cfg;
}

/* The header's rule for C (the same for every row count), overridden from the environment. */
static tlc_rmsnorm_config config_for(int C) { return env_override(tlc_rmsnorm_config_for(C), "TLC_RMSNORM_CONFIGS"); }

static bool load(state *s, const char *kernel, tlrt_dtype dt, tlc_rmsnorm_config cfg, tlrt_module **mod,
                 tlrt_kernel **k) {
    int C = cfg.C;
    char c[16], bm[16], th[16];
    snprintf(c, sizeof c, "%d", C);
    snprintf(bm, sizeof bm, "%d", cfg.block_m);
    snprintf(th, sizeof th, "%d", cfg.threads);
    tlc_jit_define d[] = {{"C", c}, {"BLOCK_M", bm}, {"threads", th}, {"dtype", tlrt_dtype_name(dt)}};
    char *err = NULL;
    tlc_status st = tlc_jit_load_kernel(s->jit, s->ctx, s->src, s->len, s->path, d, 4, kernel, mod, k, &err);
    if (st != TLC_OK) {
        printf("FAIL %s %s C=%d (BLOCK_M=%d threads=%d): %s: %s\n", kernel, tlrt_dtype_name(dt), C, cfg.block_m,
               cfg.threads, tlc_status_string(st), err ? err : "");
        tlc_free(err);
        return false;
    }
    return true;
}

/* One (dtype, C): both kernels, loaded once with C's config, at every row
 * count, on one buffer set sized for the most rows. */
static void test_dtype_cols(state *s, tlrt_dtype dt, int C, int64_t max_rows) {
    tlrt_module *mods[2] = {NULL, NULL};
    tlrt_kernel *ks[2] = {NULL, NULL};
    const char *names[2] = {"rmsnorm", "rmsnorm_silu"};
    bool loaded[2] = {false, false};
    tlc_rmsnorm_config cfg = config_for(C);

    /* at most 2^28 elements (512 MiB) per buffer: rows past that are left out for wide C */
    while (max_rows * C > ((int64_t)1 << 28)) {
        int64_t fewer = 0;
        for (int ri = 0; ri < NROWS; ri++)
            if (ROWS[ri] < max_rows && ROWS[ri] > fewer) fewer = ROWS[ri];
        max_rows = fewer;
    }
    size_t bytes = (size_t)max_rows * C * 2;
    uint16_t *hx = malloc(bytes), *hy = malloc(bytes), *hw = malloc((size_t)C * 2);
    tlrt_devptr dx = 0, dy = 0, dw = 0;
    job jobs[MAX_THREADS];
    if (!hx || !hy || !hw || tlrt_malloc(s->ctx, bytes, &dx) || tlrt_malloc(s->ctx, bytes, &dy) ||
        tlrt_malloc(s->ctx, (size_t)C * 2, &dw)) {
        printf("FAIL %s C=%d: out of memory: %s\n", tlrt_dtype_name(dt), C, tlrt_last_error(s->ctx));
        s->cases++, s->failures++;
        goto out;
    }
    const float *decode = s->decode[dt == TLRT_F16 ? 0 : 1];
    uint64_t ws = 0x5eed0000u + (uint64_t)C * 31 + dt;
    for (int c = 0; c < C; c++) hw[c] = gts_encode(dt, (float)gts_unif(&ws, -1.5, 1.5));
    if (tlrt_memcpy_htod(s->ctx, dw, hw, (size_t)C * 2)) goto device_error;
    for (int i = 0; i < 2; i++) loaded[i] = load(s, names[i], dt, cfg, &mods[i], &ks[i]);

    for (int ri = 0; ri < NROWS; ri++) {
        int64_t rows = ROWS[ri];
        if (rows > max_rows) continue;
        job tmpl = {.dt = dt, .C = C, .seed = 0xabcdef12345ull * (uint64_t)(ri + 1) + (uint64_t)C * 7 + dt,
                    .x = hx, .w = hw, .y = hy, .decode = decode, .atol = dt == TLRT_F16 ? 1e-3 : 2e-3};
        run_parallel(gen_rows, &tmpl, rows, jobs, s->nthreads);
        size_t nbytes = (size_t)rows * C * 2;
        if (tlrt_memcpy_htod(s->ctx, dx, hx, nbytes)) goto device_error;
        int64_t shape[2] = {rows, C}, wshape[1] = {C};
        tlrt_arg args[3] = {tlrt_arg_tensor(dx, dt, 2, shape, NULL), tlrt_arg_tensor(dw, dt, 1, wshape, NULL),
                            tlrt_arg_tensor(dy, dt, 2, shape, NULL)};
        for (int ki = 0; ki < 2; ki++) {
            s->cases++;
            if (!loaded[ki]) {
                s->failures++;
                continue;
            }
            if (tlrt_memset_d8(s->ctx, dy, 0xff, nbytes)) goto device_error;
            if (tlrt_launch(ks[ki], args, 3, NULL) != TLRT_SUCCESS || tlrt_synchronize(s->ctx) != TLRT_SUCCESS) {
                printf("FAIL %-12s %-8s C=%-5d rows=%-6lld launch: %s\n", names[ki], tlrt_dtype_name(dt), C,
                       (long long)rows, tlrt_last_error(s->ctx));
                s->failures++;
                continue;
            }
            if (tlrt_memcpy_dtoh(s->ctx, hy, dy, nbytes)) goto device_error;
            tmpl.silu = ki == 1;
            int n = run_parallel(check_rows, &tmpl, rows, jobs, s->nthreads);
            int64_t bad = 0, first = -1;
            double worst = 0, err2 = 0, ref2 = 0, got = 0, ref = 0;
            for (int i = 0; i < n; i++) {
                bad += jobs[i].bad;
                err2 += jobs[i].err2;
                ref2 += jobs[i].ref2;
                if (jobs[i].max_err_over_tol > worst) worst = jobs[i].max_err_over_tol;
                if (first < 0 && jobs[i].first_bad >= 0) {
                    first = jobs[i].first_bad;
                    got = jobs[i].first_got;
                    ref = jobs[i].first_ref;
                }
            }
            double rel = sqrt(err2 / (ref2 > 0 ? ref2 : 1));
            if (bad) {
                s->failures++;
                printf("FAIL %-12s %-8s C=%-5d rows=%-6lld %lld of %lld wrong; first y[%lld,%lld] = %g, expected %g\n",
                       names[ki], tlrt_dtype_name(dt), C, (long long)rows, (long long)bad, (long long)(rows * C),
                       (long long)(first / C), (long long)(first % C), got, ref);
            } else {
                printf("ok   %-12s %-8s C=%-5d rows=%-6lld (%dx%d) rel_l2=%.2e max_err/tol=%.3f\n", names[ki],
                       tlrt_dtype_name(dt), C, (long long)rows, cfg.block_m, cfg.threads, rel, worst);
            }
            fflush(stdout);
        }
    }
    goto out;
device_error:
    printf("FAIL %s C=%d: device error: %s\n", tlrt_dtype_name(dt), C, tlrt_last_error(s->ctx));
    s->cases++, s->failures++;
out:
    tlrt_free(s->ctx, dx);
    tlrt_free(s->ctx, dy);
    tlrt_free(s->ctx, dw);
    for (int i = 0; i < 2; i++)
        if (mods[i]) tlrt_module_unload(s->ctx, mods[i]);
    free(hx);
    free(hy);
    free(hw);
}

int main(int argc, char **argv) {
    state s = {0};
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else s.path = argv[i];
    }
    if (!s.path) s.path = access("dsl-examples/rmsnorm.tl", R_OK) == 0 ? "dsl-examples/rmsnorm.tl"
                                                                       : TLC_SOURCE_DIR "/dsl-examples/rmsnorm.tl";
    tlrt_status rs = gts_init_or_skip(&s.ctx);
    int rc = 1;
    char *err = NULL;
    if (rs != TLRT_SUCCESS) {
        printf("FAIL tlrt_init: %s\n", tlrt_last_error(s.ctx));
        goto out;
    }
    if (!(s.src = gts_read_text(s.path, &s.len))) {
        printf("FAIL %s: cannot read\n", s.path);
        goto out;
    }
    tlc_jit_options opt = {.ctx = s.ctx};
    if (tlc_jit_create(&opt, &s.jit, &err) != TLC_OK) {
        printf("FAIL tlc_jit_create: %s\n", err);
        goto out;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    s.nthreads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : (int)ncpu;
    for (int d = 0; d < 2; d++)
        if (!(s.decode[d] = gts_decode_table(d == 0 ? TLRT_F16 : TLRT_BF16))) goto out;
    tlrt_device_props props;
    if (tlrt_device_properties(s.ctx, &props) == TLRT_SUCCESS)
        printf("test_rmsnorm on %s (%s), %d host threads\n", props.name, tlc_jit_arch(s.jit), s.nthreads);

    int64_t max_rows = quick ? 4096 : ROWS[NROWS - 1];
    const tlrt_dtype dts[2] = {TLRT_F16, TLRT_BF16};
    for (int d = 0; d < 2; d++)
        for (int ci = 0; ci < NCOLS; ci++) test_dtype_cols(&s, dts[d], COLS[ci], max_rows);

    /* loading a kernel again takes its machine code from the cache: the
     * driver compiles no PTX (and the module works: a case runs on it) */
    tlc_jit_stats before, st;
    tlc_jit_get_stats(s.jit, &before);
    tlrt_module *again = NULL;
    tlrt_kernel *again_k = NULL;
    if (load(&s, "rmsnorm", TLRT_F16, config_for(COLS[0]), &again, &again_k)) {
        tlc_jit_get_stats(s.jit, &st);
        bool ok = st.machine_code_hits == before.machine_code_hits + 1 && st.hits == before.hits + 1;
        printf("%s machine code from the JIT cache: %llu -> %llu hits\n", ok ? "ok  " : "FAIL",
               (unsigned long long)before.machine_code_hits, (unsigned long long)st.machine_code_hits);
        s.cases++;
        s.failures += !ok;
        tlrt_module_unload(s.ctx, again);
    } else {
        s.cases++;
        s.failures++;
    }
    tlc_jit_get_stats(s.jit, &st);
    printf("test_rmsnorm: %d cases, %d failed (JIT: %llu cache hits, %llu compiles; machine code: %llu hits, %llu "
           "made)\n",
           s.cases, s.failures, (unsigned long long)st.hits, (unsigned long long)st.misses,
           (unsigned long long)st.machine_code_hits, (unsigned long long)st.machine_code_misses);
    rc = s.failures || s.cases == 0 ? 1 : 0;
out:
    tlc_free(err);
    tlc_jit_destroy(s.jit);
    free(s.src);
    free(s.decode[0]);
    free(s.decode[1]);
    tlrt_destroy(s.ctx);
    return rc;
}
