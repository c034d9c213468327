/* A program outside the tlc tree, built against an installed tlc (through
 * find_package or pkg-config) or through add_subdirectory: it JIT-compiles
 * a kernel to PTX and runs it in the interpreter, with no GPU.
 * usage: consumer EXPECTED_VERSION */
#include <stdio.h>
#include <string.h>
#include <tlc/interp.h>
#include <tlc/tlc.h>

static const char source[] =
    "@jit(N=256, threads=128)\n"
    "def scale(X: Tensor[(N,), float32], Y: Tensor[(N,), float32], s: float32):\n"
    "    with Kernel(1, threads=threads) as bx:\n"
    "        x = alloc_fragment((N,), float32)\n"
    "        copy(X, x)\n"
    "        for i in Parallel(N):\n"
    "            x[i] = x[i] * s\n"
    "        copy(x, Y)\n";

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: consumer EXPECTED_VERSION\n");
        return 2;
    }
    if (strcmp(tlc_version(), argv[1]) != 0) {
        fprintf(stderr, "consumer: libtlc is version %s, expected %s\n", tlc_version(), argv[1]);
        return 1;
    }

    tlc_jit_options opt = {.arch = "sm_90a", .disable_cache = true};
    tlc_jit *jit = NULL;
    char *err = NULL, *ptx = NULL;
    if (tlc_jit_create(&opt, &jit, &err) != TLC_OK) {
        fprintf(stderr, "consumer: tlc_jit_create: %s\n", err);
        return 1;
    }
    tlc_jit_define n = {"N", "64"};
    tlc_status st = tlc_jit_compile(jit, source, strlen(source), "scale.tl", &n, 1, "scale", &ptx, &err);
    tlc_jit_destroy(jit);
    if (st != TLC_OK) {
        fprintf(stderr, "consumer: tlc_jit_compile: %s: %s\n", tlc_status_string(st), err);
        tlc_free(err);
        return 1;
    }
    int ok = strstr(ptx, ".entry scale") && strstr(ptx, "// tlc.meta tensor X float32 [64]");
    printf("consumer: %zu bytes of PTX for sm_90a\n", strlen(ptx));
    tlc_free(ptx);
    if (!ok) {
        fprintf(stderr, "consumer: the PTX lacks the kernel's entry or its metadata\n");
        return 1;
    }

    float x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = (float)i - 10.0f, y[i] = 0.0f;
    int64_t shape[1] = {64};
    tlc_interp_tensor_arg tensors[2] = {{"X", x, TLRT_F32, 1, shape}, {"Y", y, TLRT_F32, 1, shape}};
    tlc_interp_scalar_arg s = {"s", true, 2.5, 0};
    st = tlc_interpret(source, strlen(source), "scale.tl", &n, 1, NULL, NULL, tensors, 2, &s, 1, &err);
    if (st != TLC_OK) {
        fprintf(stderr, "consumer: tlc_interpret: %s: %s\n", tlc_status_string(st), err);
        tlc_free(err);
        return 1;
    }
    for (int i = 0; i < 64; i++)
        if (y[i] != x[i] * 2.5f) {
            fprintf(stderr, "consumer: interpreter: Y[%d] = %g, expected %g\n", i, y[i], x[i] * 2.5f);
            return 1;
        }
    printf("consumer: the interpreter computed Y = 2.5 * X\n");
    return 0;
}
