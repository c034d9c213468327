/* libFuzzer target for the .npy reader (`tlc run --input`): any bytes, as a
 * file, are read or refused with a message, never a crash, and never an
 * allocation larger than the file can back. What is read is consistent: its
 * element count is the product of its shape, and writing it and reading it
 * back gives the same shape and bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *detail) {
    if (!ok) {
        fprintf(stderr, "fuzz_npy: invariant broken: %s (%s)\n", what, detail ? detail : "");
        abort();
    }
}

/* One scratch file per process, rewritten for every input. */
static const char *scratch_path(void) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/tlc-fuzz-npy-%ld.npy", (long)getpid());
    return path;
}

static bool write_bytes(const char *path, const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = scratch_path();
    if (!write_bytes(path, data, size)) return 0;
    tlc_npy n;
    char err[512] = "";
    if (!tlc_npy_read(path, &n, err, sizeof err)) {
        check(err[0] != '\0', "a refusal without a message", NULL);
        unlink(path);
        return 0;
    }
    int64_t elems = 1;
    for (int d = 0; d < n.rank; d++) elems *= n.shape[d];
    check(elems == n.elems, "elements are not the product of the shape", NULL);
    size_t bytes = (size_t)n.elems * (size_t)tir_dtype_bytes(n.dtype);
    check(bytes <= size, "more data than the file holds", NULL);
    check(tlc_npy_write(path, n.dtype, n.rank, n.shape, n.data, err, sizeof err), "what was read cannot be written", err);
    tlc_npy back;
    check(tlc_npy_read(path, &back, err, sizeof err), "what was written cannot be read", err);
    check(back.rank == n.rank && back.elems == n.elems && tlc_npy_matches(&back, n.dtype) &&
              memcmp(back.shape, n.shape, sizeof n.shape) == 0 && (bytes == 0 || memcmp(back.data, n.data, bytes) == 0),
          "a round trip changed the array", NULL);
    tlc_npy_free(&back);
    tlc_npy_free(&n);
    unlink(path);
    return 0;
}
