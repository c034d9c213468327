/* gpu/split_logsumexp: dsl-examples/split_logsumexp.tl, a function of two
 * kernels (split, combine) and two workspaces, loaded through
 * tlc_jit_load_function for this GPU's arch and launched by one
 * tlrt_launch_function call per problem, against a float64 reference.
 *
 * Shapes grow and shrink (the runtime's workspace memory for the stream
 * grows once and is reused), include rows not a multiple of the block,
 * columns fewer than the splits' tiles (empty splits) and one column; the
 * output is poisoned with 0xFF (NaN) before each launch. The same problems
 * then run on a second stream, and misuse (wrong shapes, a dtype, a count)
 * must be refused with a status, launching nothing:
 *   |lse - ref| <= 1e-5 + 1e-5 * |ref|
 *
 *   test_split_logsumexp [path/to/split_logsumexp.tl]
 * Exits 0 when every case passes, 1 otherwise, 77 ("skipped: no CUDA
 * driver") without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpu_test_support.h"
#include "tlc/tlc.h"
#include "tlc_ref.h"

#ifndef TLC_SOURCE_DIR
#define TLC_SOURCE_DIR "."
#endif

typedef struct shape { int64_t rows, cols; } shape;
static const shape SHAPES[] = {{37, 1000}, {1, 1}, {4096, 4096}, {130, 200}, {5, 100000}, {16, 64}, {20000, 777}};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

static int run_case(tlrt_context *ctx, tlrt_function *f, tlrt_stream *s, shape sh, uint64_t seed) {
    int64_t n = sh.rows * sh.cols;
    float *x = malloc(sizeof(float) * (size_t)n), *lse = malloc(sizeof(float) * (size_t)sh.rows),
          *ref = malloc(sizeof(float) * (size_t)sh.rows);
    for (int64_t i = 0; i < n; i++) x[i] = (float)gts_unif(&seed, -8.0, 8.0);
    tlc_ref_logsumexp(sh.rows, sh.cols, x, ref);
    tlrt_devptr dx = 0, dl = 0;
    int bad = 1;
    if (tlrt_malloc(ctx, sizeof(float) * (size_t)n, &dx) != TLRT_SUCCESS ||
        tlrt_malloc(ctx, sizeof(float) * (size_t)sh.rows, &dl) != TLRT_SUCCESS) {
        printf("FAIL malloc: %s\n", tlrt_last_error(ctx));
        goto out;
    }
    tlrt_memcpy_htod(ctx, dx, x, sizeof(float) * (size_t)n);
    tlrt_memset_d8(ctx, dl, 0xff, sizeof(float) * (size_t)sh.rows);
    int64_t xs[2] = {sh.rows, sh.cols}, ls[1] = {sh.rows};
    tlrt_arg args[] = {tlrt_arg_tensor(dx, TLRT_F32, 2, xs, NULL), tlrt_arg_tensor(dl, TLRT_F32, 1, ls, NULL)};
    if (tlrt_launch_function(f, args, 2, s) != TLRT_SUCCESS || tlrt_stream_synchronize(ctx, s) != TLRT_SUCCESS) {
        printf("FAIL %lldx%lld: %s\n", (long long)sh.rows, (long long)sh.cols, tlrt_last_error(ctx));
        goto out;
    }
    tlrt_memcpy_dtoh(ctx, lse, dl, sizeof(float) * (size_t)sh.rows);
    double worst = 0;
    int64_t nbad = gts_compare("lse", lse, ref, sh.rows, 1e-5, 1e-5, &worst);
    printf("%s %lld x %lld%s: %lld bad, worst error / tolerance %.3f\n", nbad ? "FAIL" : "ok", (long long)sh.rows,
           (long long)sh.cols, s ? " (stream)" : "", (long long)nbad, worst);
    bad = nbad != 0;
out:
    tlrt_free(ctx, dx);
    tlrt_free(ctx, dl);
    free(x);
    free(lse);
    free(ref);
    return bad;
}

/* Wrong arguments: a status and a message, nothing launched or changed. */
static int misuse(tlrt_context *ctx, tlrt_function *f) {
    tlrt_devptr d = 0;
    if (tlrt_malloc(ctx, 4096, &d) != TLRT_SUCCESS) return 1;
    int64_t xs[2] = {4, 64}, ls[1] = {5}, l4[1] = {4};
    tlrt_arg wrong_rows[] = {tlrt_arg_tensor(d, TLRT_F32, 2, xs, NULL), tlrt_arg_tensor(d, TLRT_F32, 1, ls, NULL)};
    tlrt_arg wrong_dtype[] = {tlrt_arg_tensor(d, TLRT_F16, 2, xs, NULL), tlrt_arg_tensor(d, TLRT_F32, 1, l4, NULL)};
    int fails = 0;
    tlrt_status st = tlrt_launch_function(f, wrong_rows, 2, NULL);
    if (st != TLRT_ERROR_ARG_MISMATCH || !strstr(tlrt_last_error(ctx), "function 'split_logsumexp'")) fails++;
    printf("%s misuse (rows): %s: %s\n", fails ? "FAIL" : "ok", tlrt_status_string(st), tlrt_last_error(ctx));
    st = tlrt_launch_function(f, wrong_dtype, 2, NULL);
    if (st != TLRT_ERROR_ARG_MISMATCH) fails++;
    st = tlrt_launch_function(f, wrong_dtype, 1, NULL);
    if (st != TLRT_ERROR_ARG_MISMATCH) fails++;
    printf("%s misuse (dtype, count)\n", fails ? "FAIL" : "ok");
    tlrt_free(ctx, d);
    return fails;
}

int main(int argc, char **argv) {
    const char *file = argc > 1 ? argv[1] : NULL;
    const char *rel = "dsl-examples/split_logsumexp.tl";
    if (!file) file = access(rel, R_OK) == 0 ? rel : TLC_SOURCE_DIR "/dsl-examples/split_logsumexp.tl";
    tlrt_context *ctx = NULL;
    if (gts_init_or_skip(&ctx) != TLRT_SUCCESS) {
        printf("FAIL tlrt_init: %s\n", tlrt_last_error(ctx));
        return 1;
    }
    size_t len;
    char *src = gts_read_text(file, &len);
    if (!src) {
        printf("FAIL %s: cannot read\n", file);
        return 1;
    }
    tlc_jit *jit = NULL;
    char *err = NULL;
    tlc_jit_options opt = {.ctx = ctx};
    if (tlc_jit_create(&opt, &jit, &err) != TLC_OK) {
        printf("FAIL tlc_jit_create: %s\n", err ? err : "?");
        return 1;
    }
    tlrt_module *mod = NULL;
    tlrt_function *f = NULL;
    if (tlc_jit_load_function(jit, ctx, src, len, file, NULL, 0, "split_logsumexp", &mod, &f, &err) != TLC_OK) {
        printf("FAIL loading split_logsumexp for %s: %s\n", tlc_jit_arch(jit), err ? err : "?");
        return 1;
    }
    const tlrt_function_meta *fm = tlrt_function_metadata(f);
    printf("split_logsumexp for %s: %d kernels, %d workspaces\n", tlc_jit_arch(jit), fm->nlaunches, fm->nworkspaces);
    int fails = 0;
    for (int i = 0; i < NSHAPES; i++) fails += run_case(ctx, f, NULL, SHAPES[i], 100 + (uint64_t)i);
    tlrt_stream *s = NULL;
    if (tlrt_stream_create(ctx, &s) != TLRT_SUCCESS) {
        printf("FAIL stream: %s\n", tlrt_last_error(ctx));
        fails++;
    } else {
        for (int i = 0; i < NSHAPES; i++) fails += run_case(ctx, f, s, SHAPES[i], 200 + (uint64_t)i);
        tlrt_stream_destroy(ctx, s);
    }
    fails += misuse(ctx, f);
    tlrt_module_unload(ctx, mod);
    tlc_jit_destroy(jit);
    tlrt_destroy(ctx);
    free(src);
    printf("%s\n", fails ? "FAILED" : "all cases pass");
    return fails ? 1 : 0;
}
