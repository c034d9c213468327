/* gpu/runtime_smoke: libtlrt on a real GPU with hand-written PTX. Device
 * memory, memset and copies; a vector add launched through tlrt_launch with
 * metadata (symbolic length with a tail, a float scalar); misuse rejected by
 * the real launch path; 100 KiB of dynamic shared memory (the >48 KiB opt-in);
 * a stream and event timing; a PTX error with the JIT log; on sm_90+ a TMA
 * copy through a descriptor built from the metadata. Exits 77 ("skipped")
 * where there is no driver or GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tlc/runtime.h"

static int failures;
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            failures++;                                                   \
            fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
        }                                                                 \
    } while (0)
#define CHECK_OK(ctx, call) CHECK((call) == TLRT_SUCCESS, "%s", tlrt_last_error(ctx))

static const char *MAIN_PTX =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_80\n"
    "// tlc.meta kernel vadd\n"
    "// tlc.meta sym N\n"
    "// tlc.meta tensor A float32 [N] align=16\n"
    "// tlc.meta tensor B float32 [N] align=16\n"
    "// tlc.meta tensor C float32 [N] align=16\n"
    "// tlc.meta scalar alpha float32\n"
    "// tlc.meta grid (ceildiv N 256) 1 1\n"
    "// tlc.meta threads 256 1 1\n"
    "// tlc.meta smem 0\n"
    "// tlc.meta kernel smem_rev\n"
    "// tlc.meta sym T\n"
    "// tlc.meta tensor OUT int32 [T] align=16\n"
    "// tlc.meta grid (// T 256) 1 1\n"
    "// tlc.meta threads 256 1 1\n"
    "// tlc.meta smem 102400\n"
    "// tlc.meta end\n"
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    "// C[i] = alpha * A[i] + B[i] for i < N\n"
    ".visible .entry vadd(.param .u64 A, .param .u64 B, .param .u64 C, .param .s64 N, .param .f32 alpha)\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<5>;\n"
    "    .reg .b64 %rd<10>;\n"
    "    .reg .f32 %f<5>;\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mul.wide.u32 %rd1, %r1, %r2;\n"
    "    cvt.u64.u32 %rd2, %r3;\n"
    "    add.s64 %rd1, %rd1, %rd2;\n"
    "    ld.param.s64 %rd3, [N];\n"
    "    setp.ge.s64 %p1, %rd1, %rd3;\n"
    "    @%p1 bra DONE;\n"
    "    shl.b64 %rd4, %rd1, 2;\n"
    "    ld.param.u64 %rd5, [A];\n"
    "    ld.param.u64 %rd6, [B];\n"
    "    ld.param.u64 %rd7, [C];\n"
    "    cvta.to.global.u64 %rd5, %rd5;\n"
    "    cvta.to.global.u64 %rd6, %rd6;\n"
    "    cvta.to.global.u64 %rd7, %rd7;\n"
    "    add.s64 %rd5, %rd5, %rd4;\n"
    "    add.s64 %rd6, %rd6, %rd4;\n"
    "    add.s64 %rd7, %rd7, %rd4;\n"
    "    ld.global.f32 %f1, [%rd5];\n"
    "    ld.global.f32 %f2, [%rd6];\n"
    "    ld.param.f32 %f3, [alpha];\n"
    "    fma.rn.f32 %f4, %f3, %f1, %f2;\n"
    "    st.global.f32 [%rd7], %f4;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// Dynamic shared memory beyond 48 KiB: the block fills WORDS 32-bit words of\n"
    "// shared memory (WORDS = smem / 4) with their index + block, then thread t\n"
    "// writes word (WORDS - 1 - t*STEP) to OUT[block * threads + t].\n"
    ".extern .shared .align 16 .b8 dsmem[];\n"
    ".visible .entry smem_rev(.param .u64 OUT, .param .s64 T)\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<12>;\n"
    "    .reg .b64 %rd<6>;\n"
    "    mov.u32 %r1, %tid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %ctaid.x;\n"
    "    mov.u32 %r4, dsmem;\n"
    "    mov.u32 %r5, %r1;              // word index\n"
    "FILL:\n"
    "    setp.ge.u32 %p1, %r5, 25600;   // 102400 bytes\n"
    "    @%p1 bra FILLED;\n"
    "    add.u32 %r6, %r5, %r3;\n"
    "    shl.b32 %r7, %r5, 2;\n"
    "    add.u32 %r7, %r7, %r4;\n"
    "    st.shared.u32 [%r7], %r6;\n"
    "    add.u32 %r5, %r5, %r2;\n"
    "    bra FILL;\n"
    "FILLED:\n"
    "    bar.sync 0;\n"
    "    mul.lo.u32 %r8, %r1, 100;\n"
    "    sub.u32 %r8, 25599, %r8;       // word WORDS-1 - t*100\n"
    "    shl.b32 %r9, %r8, 2;\n"
    "    add.u32 %r9, %r9, %r4;\n"
    "    ld.shared.u32 %r10, [%r9];\n"
    "    mad.lo.u32 %r11, %r3, %r2, %r1;\n"
    "    ld.param.u64 %rd1, [OUT];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    mul.wide.u32 %rd2, %r11, 4;\n"
    "    add.s64 %rd1, %rd1, %rd2;\n"
    "    st.global.u32 [%rd1], %r10;\n"
    "    ret;\n"
    "}\n";

static const char *TMA_PTX =
    "// tlc.meta v1 tlc=0.1.0 arch=sm_90a\n"
    "// tlc.meta kernel tma_copy\n"
    "// tlc.meta sym M\n"
    "// tlc.meta sym N\n"
    "// tlc.meta tensor SRC float32 [M,N] align=16\n"
    "// tlc.meta tensor DST float32 [M,N] align=16\n"
    "// tlc.meta tmap SRC box=[8,32] estrides=[1,1] swizzle=none l2=128B oob=zero\n"
    "// tlc.meta grid (ceildiv N 32) (ceildiv M 8) 1\n"
    "// tlc.meta threads 256 1 1\n"
    "// tlc.meta smem 1040\n"
    "// tlc.meta end\n"
    ".version 8.0\n"
    ".target sm_90a\n"
    ".address_size 64\n"
    "\n"
    "// One block per 8 x 32 float tile: TMA copies tile (by, bx) of SRC into\n"
    "// shared memory, then the 256 threads write it to DST at the same place.\n"
    ".extern .shared .align 1024 .b8 tsmem[];\n"
    ".visible .entry tma_copy(.param .u64 SRC, .param .u64 DST, .param .s64 M, .param .s64 N,\n"
    "                         .param .align 128 .b8 SRC_tmap[128])\n"
    "{\n"
    "    .reg .pred %p<3>;\n"
    "    .reg .b32 %r<20>;\n"
    "    .reg .b64 %rd<12>;\n"
    "    mov.u32 %r1, %tid.x;\n"
    "    mov.u32 %r2, %ctaid.x;          // tile column\n"
    "    mov.u32 %r3, %ctaid.y;          // tile row\n"
    "    mov.u32 %r4, tsmem;             // tile: 1024 bytes, barrier at +1024\n"
    "    add.u32 %r5, %r4, 1024;\n"
    "    setp.ne.u32 %p1, %r1, 0;\n"
    "    @%p1 bra WAIT;\n"
    "    mbarrier.init.shared::cta.b64 [%r5], 1;\n"
    "    fence.proxy.async.shared::cta;\n"
    "    mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r5], 1024;\n"
    "    mov.u64 %rd2, SRC_tmap;\n"
    "    cvta.param.u64 %rd2, %rd2;          // generic address of the descriptor param\n"
    "    shl.b32 %r6, %r2, 5;            // x = bx * 32\n"
    "    shl.b32 %r7, %r3, 3;            // y = by * 8\n"
    "    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [%rd2, {%r6, %r7}], [%r5];\n"
    "WAIT:\n"
    "    bar.sync 0;\n"
    "LOOP:\n"
    "    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], 0;\n"
    "    @!%p2 bra LOOP;\n"
    "    // thread t: row t / 32, col t % 32 of the tile\n"
    "    shr.u32 %r8, %r1, 5;\n"
    "    and.b32 %r9, %r1, 31;\n"
    "    shl.b32 %r10, %r1, 2;\n"
    "    add.u32 %r10, %r10, %r4;\n"
    "    ld.shared.f32 %r11, [%r10];\n"
    "    shl.b32 %r12, %r3, 3;\n"
    "    add.u32 %r12, %r12, %r8;        // global row\n"
    "    shl.b32 %r13, %r2, 5;\n"
    "    add.u32 %r13, %r13, %r9;        // global col\n"
    "    ld.param.s64 %rd3, [M];\n"
    "    ld.param.s64 %rd4, [N];\n"
    "    cvt.u64.u32 %rd5, %r12;\n"
    "    cvt.u64.u32 %rd6, %r13;\n"
    "    setp.ge.s64 %p1, %rd5, %rd3;\n"
    "    @%p1 bra DONE;\n"
    "    setp.ge.s64 %p1, %rd6, %rd4;\n"
    "    @%p1 bra DONE;\n"
    "    mad.lo.s64 %rd7, %rd5, %rd4, %rd6;\n"
    "    shl.b64 %rd7, %rd7, 2;\n"
    "    ld.param.u64 %rd8, [DST];\n"
    "    cvta.to.global.u64 %rd8, %rd8;\n"
    "    add.s64 %rd8, %rd8, %rd7;\n"
    "    st.global.f32 [%rd8], %r11;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

static void test_tma(tlrt_context *ctx) {
    tlrt_module *mod;
    CHECK_OK(ctx, tlrt_module_load_ptx(ctx, TMA_PTX, strlen(TMA_PTX), &mod));
    if (failures) return;
    tlrt_kernel *k;
    CHECK_OK(ctx, tlrt_kernel_get(mod, "tma_copy", &k));
    int64_t M = 203, N = 100; /* tails in both dims; a row is 400 bytes, a multiple of 16 */
    size_t bytes = (size_t)(M * N) * 4;
    float *src = malloc(bytes), *dst = malloc(bytes);
    for (int64_t i = 0; i < M * N; i++) src[i] = (float)i * 0.5f - 7.0f;
    tlrt_devptr dsrc, ddst;
    CHECK_OK(ctx, tlrt_malloc(ctx, bytes, &dsrc));
    CHECK_OK(ctx, tlrt_malloc(ctx, bytes, &ddst));
    CHECK_OK(ctx, tlrt_memcpy_htod(ctx, dsrc, src, bytes));
    CHECK_OK(ctx, tlrt_memset_d8(ctx, ddst, 0xff, bytes));
    int64_t shape[] = {M, N};
    tlrt_arg args[] = {tlrt_arg_tensor(dsrc, TLRT_F32, 2, shape, NULL), tlrt_arg_tensor(ddst, TLRT_F32, 2, shape, NULL)};
    CHECK_OK(ctx, tlrt_launch(k, args, 2, NULL));
    CHECK_OK(ctx, tlrt_synchronize(ctx));
    CHECK_OK(ctx, tlrt_memcpy_dtoh(ctx, dst, ddst, bytes));
    int bad = 0;
    for (int64_t i = 0; i < M * N; i++) bad += dst[i] != src[i];
    CHECK(bad == 0, "TMA copy: %d of %lld elements wrong", bad, (long long)(M * N));
    /* A row of 99 floats (396 bytes) cannot be described to TMA. */
    int64_t odd[] = {M, 99};
    args[0].shape = args[1].shape = odd;
    tlrt_status st = tlrt_launch(k, args, 2, NULL);
    CHECK(st == TLRT_ERROR_ARG_MISMATCH && strstr(tlrt_last_error(ctx), "multiples of 16 bytes"), "%s",
          tlrt_last_error(ctx));
    printf("TMA copy %lldx%lld: %s\n", (long long)M, (long long)N, bad ? "WRONG" : "ok");
    tlrt_free(ctx, dsrc);
    tlrt_free(ctx, ddst);
    free(src);
    free(dst);
    CHECK_OK(ctx, tlrt_module_unload(ctx, mod));
}

int main(void) {
    tlrt_context *ctx = NULL;
    tlrt_status st = tlrt_init(&ctx, -1);
    if (st == TLRT_ERROR_NO_DRIVER || st == TLRT_ERROR_NO_DEVICE) {
        printf("skipped: %s\n  (%s)\n", st == TLRT_ERROR_NO_DRIVER ? "no CUDA driver" : "no CUDA device",
               tlrt_last_error(ctx));
        tlrt_destroy(ctx);
        return 77;
    }
    if (st != TLRT_SUCCESS) {
        fprintf(stderr, "tlrt_init: %s: %s\n", tlrt_status_string(st), tlrt_last_error(ctx));
        tlrt_destroy(ctx);
        return 1;
    }
    tlrt_device_props p;
    char arch[16];
    CHECK_OK(ctx, tlrt_device_properties(ctx, &p));
    CHECK_OK(ctx, tlrt_device_arch(ctx, arch, sizeof arch));
    printf("device: %s, %s, %d SMs, %d KiB smem opt-in, %d MiB L2, %zu MiB, driver %d\n", p.name, arch, p.sm_count,
           p.max_smem_per_block_optin / 1024, p.l2_bytes >> 20, p.total_mem >> 20, p.driver_version);
    CHECK(p.sm >= 80 && p.sm_count > 0, "sm %d, %d SMs", p.sm, p.sm_count);

    /* memory */
    const int64_t n = (1 << 20) + 77; /* not a multiple of the block: a tail */
    size_t bytes = (size_t)n * 4;
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    for (int64_t i = 0; i < n; i++) {
        a[i] = (float)(i % 1000) * 0.25f;
        b[i] = (float)(i % 7) - 3.0f;
    }
    tlrt_devptr da, db, dc;
    CHECK_OK(ctx, tlrt_malloc(ctx, bytes, &da));
    CHECK_OK(ctx, tlrt_malloc(ctx, bytes, &db));
    CHECK_OK(ctx, tlrt_malloc(ctx, bytes + 64, &dc));
    CHECK_OK(ctx, tlrt_memcpy_htod(ctx, da, a, bytes));
    CHECK_OK(ctx, tlrt_memcpy_htod(ctx, db, b, bytes));
    CHECK_OK(ctx, tlrt_memset_d8(ctx, dc, 0xff, bytes + 64)); /* poison, including past the end */
    unsigned char *poison = malloc(bytes + 64);
    CHECK_OK(ctx, tlrt_memcpy_dtoh(ctx, poison, dc, bytes + 64));
    int not_poisoned = 0;
    for (size_t i = 0; i < bytes + 64; i++) not_poisoned += poison[i] != 0xff;
    CHECK(not_poisoned == 0, "memset: %d bytes differ", not_poisoned);

    tlrt_module *mod;
    CHECK_OK(ctx, tlrt_module_load_ptx(ctx, MAIN_PTX, strlen(MAIN_PTX), &mod));
    if (failures) return 1;
    tlrt_kernel *vadd, *rev;
    CHECK_OK(ctx, tlrt_kernel_get(mod, "vadd", &vadd));
    CHECK_OK(ctx, tlrt_kernel_get(mod, "smem_rev", &rev));
    if (failures) return 1;

    /* vector add, on a stream, timed */
    tlrt_stream *s;
    tlrt_event *e0, *e1;
    CHECK_OK(ctx, tlrt_stream_create(ctx, &s));
    CHECK_OK(ctx, tlrt_event_create(ctx, &e0));
    CHECK_OK(ctx, tlrt_event_create(ctx, &e1));
    int64_t shape[] = {n};
    tlrt_arg args[] = {tlrt_arg_tensor(da, TLRT_F32, 1, shape, NULL), tlrt_arg_tensor(db, TLRT_F32, 1, shape, NULL),
                       tlrt_arg_tensor(dc, TLRT_F32, 1, shape, NULL), tlrt_arg_float(TLRT_F32, 2.0)};
    CHECK_OK(ctx, tlrt_launch(vadd, args, 4, s)); /* warm-up */
    CHECK_OK(ctx, tlrt_event_record(ctx, e0, s));
    for (int i = 0; i < 20; i++) CHECK_OK(ctx, tlrt_launch(vadd, args, 4, s));
    CHECK_OK(ctx, tlrt_event_record(ctx, e1, s));
    CHECK_OK(ctx, tlrt_event_synchronize(ctx, e1));
    float ms = -1;
    CHECK_OK(ctx, tlrt_event_elapsed_ms(ctx, e0, e1, &ms));
    CHECK(ms > 0, "elapsed %f ms", ms);
    printf("vadd n=%lld: %.4f ms per launch, %.1f GB/s\n", (long long)n, ms / 20, 3.0 * (double)bytes / (ms / 20 * 1e6));
    CHECK_OK(ctx, tlrt_stream_synchronize(ctx, s));
    CHECK_OK(ctx, tlrt_memcpy_dtoh(ctx, poison, dc, bytes + 64));
    memcpy(c, poison, bytes);
    int wrong = 0;
    for (int64_t i = 0; i < n; i++) wrong += c[i] != 2.0f * a[i] + b[i];
    int past = 0;
    for (size_t i = bytes; i < bytes + 64; i++) past += poison[i] != 0xff;
    CHECK(wrong == 0, "vadd: %d of %lld wrong", wrong, (long long)n);
    CHECK(past == 0, "vadd wrote %d bytes past the end", past);

    /* misuse is caught before the driver sees it */
    int64_t shorter[] = {n - 1};
    args[1].shape = shorter;
    st = tlrt_launch(vadd, args, 4, s);
    CHECK(st == TLRT_ERROR_ARG_MISMATCH && strstr(tlrt_last_error(ctx), "symbolic dim 'N' was bound to"), "%s: %s",
          tlrt_status_string(st), tlrt_last_error(ctx));
    args[1].shape = shape;
    args[2].ptr = dc + 4;
    st = tlrt_launch(vadd, args, 4, s);
    CHECK(st == TLRT_ERROR_ARG_MISMATCH && strstr(tlrt_last_error(ctx), "16-byte aligned"), "%s", tlrt_last_error(ctx));
    args[2].ptr = dc;
    int64_t zero[] = {0};
    tlrt_arg empty[] = {tlrt_arg_tensor(da, TLRT_F32, 1, zero, NULL), tlrt_arg_tensor(db, TLRT_F32, 1, zero, NULL),
                        tlrt_arg_tensor(dc, TLRT_F32, 1, zero, NULL), tlrt_arg_float(TLRT_F32, 2.0)};
    CHECK_OK(ctx, tlrt_launch(vadd, empty, 4, s));

    /* 100 KiB of dynamic shared memory */
    int64_t T = 4 * 256;
    tlrt_devptr dout;
    CHECK_OK(ctx, tlrt_malloc(ctx, (size_t)T * 4, &dout));
    int64_t tshape[] = {T};
    tlrt_arg rargs[] = {tlrt_arg_tensor(dout, TLRT_I32, 1, tshape, NULL)};
    st = tlrt_launch(rev, rargs, 1, NULL);
    if (p.max_smem_per_block_optin >= 102400) {
        CHECK(st == TLRT_SUCCESS, "%s", tlrt_last_error(ctx));
        CHECK_OK(ctx, tlrt_synchronize(ctx));
        int32_t out[4 * 256];
        CHECK_OK(ctx, tlrt_memcpy_dtoh(ctx, out, dout, sizeof out));
        int bad = 0;
        for (int blk = 0; blk < 4; blk++)
            for (int t = 0; t < 256; t++) bad += out[blk * 256 + t] != 25599 - t * 100 + blk;
        CHECK(bad == 0, "smem_rev: %d wrong", bad);
        printf("dynamic smem 100 KiB: %s\n", bad ? "WRONG" : "ok");
    } else {
        CHECK(st == TLRT_ERROR_UNSUPPORTED, "%s", tlrt_last_error(ctx));
    }

    /* a PTX error comes back with the JIT log */
    const char *bad_ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry broken()\n{\n  frobnicate.u32 %r1;\n}\n";
    tlrt_module *bad_mod = NULL;
    st = tlrt_module_load_ptx(ctx, bad_ptx, strlen(bad_ptx), &bad_mod);
    CHECK(st == TLRT_ERROR_MODULE_LOAD && strstr(tlrt_last_error(ctx), "JIT log"), "%s: %s", tlrt_status_string(st),
          tlrt_last_error(ctx));
    printf("bad PTX -> %s\n", tlrt_last_error(ctx));

    /* PTX -> machine code through the driver's linker, loaded as a cubin
     * with the PTX's metadata; the bad PTX fails there with the linker log */
    void *image = NULL;
    size_t image_len = 0;
    CHECK_OK(ctx, tlrt_compile_ptx(ctx, MAIN_PTX, strlen(MAIN_PTX), &image, &image_len));
    CHECK(image && image_len > 4 && memcmp(image, "\x7f" "ELF", 4) == 0, "tlrt_compile_ptx: not an ELF image");
    tlrt_module *cubin_mod = NULL;
    if (image) CHECK_OK(ctx, tlrt_module_load_cubin(ctx, image, image_len, MAIN_PTX, strlen(MAIN_PTX), &cubin_mod));
    tlrt_kernel *cubin_k = NULL;
    if (cubin_mod) {
        CHECK_OK(ctx, tlrt_kernel_get(cubin_mod, "vadd", &cubin_k));
        CHECK_OK(ctx, tlrt_module_unload(ctx, cubin_mod));
    }
    free(image);
    image = NULL;
    size_t cubin_bytes = image_len;
    st = tlrt_compile_ptx(ctx, bad_ptx, strlen(bad_ptx), &image, &image_len);
    CHECK(st == TLRT_ERROR_MODULE_LOAD && strstr(tlrt_last_error(ctx), "linker log") && !image, "%s: %s",
          tlrt_status_string(st), tlrt_last_error(ctx));
    printf("machine code: %zu-byte cubin, loaded; bad PTX -> %s\n", cubin_bytes, tlrt_last_error(ctx));

    if (p.sm >= 90) test_tma(ctx);
    else printf("TMA: skipped (sm_%d)\n", p.sm);

    CHECK_OK(ctx, tlrt_event_destroy(ctx, e0));
    CHECK_OK(ctx, tlrt_event_destroy(ctx, e1));
    CHECK_OK(ctx, tlrt_stream_destroy(ctx, s));
    CHECK_OK(ctx, tlrt_module_unload(ctx, mod));
    CHECK_OK(ctx, tlrt_free(ctx, da));
    CHECK_OK(ctx, tlrt_free(ctx, db));
    CHECK_OK(ctx, tlrt_free(ctx, dc));
    CHECK_OK(ctx, tlrt_free(ctx, dout));
    free(a);
    free(b);
    free(c);
    free(poison);
    tlrt_destroy(ctx);
    printf("%s\n", failures ? "FAILED" : "runtime smoke: all checks passed");
    return failures ? 1 : 0;
}
