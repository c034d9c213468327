/* tlc-interp-bench [DIR]: time of the Tile IR interpreter on the issue's
 * targets (each should take under 1 s): GEMM 256^3 (float16) and MLA decode
 * at batch 2, 512 cached tokens, h_q 16, dv 512, dpe 64 (split + combine).
 * Compile time is reported apart from run time. A benchmark, not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "interp/random_fill.h"
#include "kernel_checks.h"
#include "support/read_file.h"
#include "interp/interp.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *rnd(tir_dtype t, int64_t n, uint64_t *st) {
    void *p = calloc((size_t)n, (size_t)tir_dtype_bytes(t));
    tlc_random_fill(p, t, n, st, 0);
    return p;
}

static int bench(const char *label, const char *path, const tlc_define *defs, int nd, tlc_interp_tensor *ts, int nt,
                 const tlc_interp_scalar *sc, int ns, int reps) {
    size_t len;
    char *text = tlc_read_file(path, &len);
    if (!text) { fprintf(stderr, "cannot read %s\n", path); return 1; }
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    co.defines = defs;
    co.ndefines = nd;
    tlc_compilation c;
    double t0 = now();
    bool ok = tlc_compile_source(&c, path, text, len, &co);
    double tc = now() - t0;
    free(text);
    if (!ok) { fputs(tlc_sb_cstr(&c.diag.out), stderr); tlc_compilation_free(&c); return 1; }
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        tlc_strbuf err;
        tlc_sb_init(&err);
        t0 = now();
        ok = tlc_interp_run_module(c.tir, &c.src, NULL, ts, nt, sc, ns, NULL, &err);
        double t = now() - t0;
        if (!ok) { fputs(tlc_sb_cstr(&err), stderr); tlc_sb_free(&err); tlc_compilation_free(&c); return 1; }
        tlc_sb_free(&err);
        if (t < best) best = t;
    }
    printf("%-55s run %8.3f s (best of %d)  compile %6.3f s  %s\n", label, best, reps, tc,
           best < 1.0 ? "ok: under 1 s" : "SLOW: over 1 s");
    tlc_compilation_free(&c);
    return best < 1.0 ? 0 : 1;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "dsl-examples";
    char path[4096];
    uint64_t st = 42;
    int fails = 0;

    {
        const int64_t n = 256;
        tlc_interp_tensor ts[3] = {
            {"A", rnd(TIR_F16, n * n, &st), TIR_F16, 2, {n, n}},
            {"B", rnd(TIR_F16, n * n, &st), TIR_F16, 2, {n, n}},
            {"C", rnd(TIR_F16, n * n, &st), TIR_F16, 2, {n, n}},
        };
        snprintf(path, sizeof path, "%s/gemm.tl", dir);
        fails += bench("gemm.tl matmul 256x256x256 float16", path, NULL, 0, ts, 3, NULL, 0, 3);
        for (int i = 0; i < 3; i++) free(ts[i].data);
    }
    {
        const int64_t b = 2, t = 512, h = 16, d = 576, dv = 512, parts = 4, slots = b + parts, pages = b * t / 64;
        int32_t *bt = malloc(sizeof(int32_t) * (size_t)pages), sl[2] = {t, t};
        for (int64_t i = 0; i < pages; i++) bt[i] = (int32_t)((i * 7) % pages);
        tlc_interp_tensor ts[9] = {
            {"Q", rnd(TIR_F16, b * h * d, &st), TIR_F16, 3, {b, h, d}},
            {"KV", rnd(TIR_F16, pages * 64 * d, &st), TIR_F16, 4, {pages, 64, 1, d}},
            {"block_table", bt, TIR_I32, 2, {b, t / 64}},
            {"cache_seqlens", sl, TIR_I32, 1, {b}},
            {"sched", rnd(TIR_I32, parts * 4, &st), TIR_I32, 2, {parts, 4}},
            {"seq_splits", rnd(TIR_I32, b * 2, &st), TIR_I32, 2, {b, 2}},
            {"Glse", rnd(TIR_F32, slots * h, &st), TIR_F32, 2, {slots, h}},
            {"Output_partial", rnd(TIR_F32, slots * h * dv, &st), TIR_F32, 3, {slots, h, dv}},
            {"Output", rnd(TIR_F16, b * h * dv, &st), TIR_F16, 3, {b, h, dv}},
        };
        tlc_interp_scalar sc[2] = {{.name = "sm_scale", .is_float = true, .f = 0.0417}, {.name = "h_q", .i = h}};
        snprintf(path, sizeof path, "%s/mla_decode.tl", dir);
        fails += bench("mla_decode.tl b=2 t=512 h_q=16 dv=512 dpe=64 parts=4", path, NULL, 0, ts, 9, sc, 2, 3);
        for (int i = 0; i < 9; i++)
            if (i != 3) free(ts[i].data);
    }
    return fails ? 1 : 0;
}
