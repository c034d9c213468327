/* Stand-in for libFuzzer where the compiler has none (GCC): feeds every
 * corpus file, then deterministic random mutations of them, to
 * LLVMFuzzerTestOneInput. Usage: fuzz_TARGET CORPUS_DIR [MUTATIONS] */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct input {
    uint8_t *data;
    size_t len;
} input;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) { /* xorshift64*: reproducible across runs */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* Fragments that tend to reach interesting lexer/parser states. */
static const char *const fragments[] = {
    "(", ")", "[", "]", "{", "}", ":", ",", "\n", "    ", "\t", "'", "\"", "\"\"\"", "\\",
    "\\\n", "#", "0x", "1e", "1e999", "99999999999999999999", "@", "**", "//=", ".", "=",
    "def ", "if ", "elif ", "else:", "for ", " in ", "with ", " as ", "return", "lambda",
    "not ", " is ", "(((((((((", ")))))", "\n        ", "\n  ", "\x00", "\xff", "\xc3\xa9",
    "T.", "copy(", "gemm(", "Kernel(", "Parallel(", "alloc_shared(", "-", "~", "!", "$",
};

static input mutate(const input *in, const input *all, size_t nall) {
    size_t cap = in->len * 2 + 256;
    uint8_t *out = malloc(cap);
    size_t len = in->len;
    memcpy(out, in->data, len);
    int rounds = 1 + (int)below(4);
    for (int r = 0; r < rounds; r++) {
        switch (below(6)) {
        case 0: /* flip a byte */
            if (len) out[below(len)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: { /* insert a fragment */
            const char *f = fragments[below(sizeof fragments / sizeof fragments[0])];
            size_t fl = f[0] ? strlen(f) : 1, at = below(len + 1);
            if (len + fl > cap) break;
            memmove(out + at + fl, out + at, len - at);
            memcpy(out + at, f, fl);
            len += fl;
            break;
        }
        case 2: { /* delete a range */
            if (!len) break;
            size_t at = below(len), n = 1 + below(len - at < 16 ? len - at : 16);
            memmove(out + at, out + at + n, len - at - n);
            len -= n;
            break;
        }
        case 3: { /* duplicate a range */
            if (!len) break;
            size_t at = below(len), n = 1 + below(len - at < 32 ? len - at : 32);
            if (len + n > cap) break;
            memmove(out + at + n, out + at, len - at);
            len += n;
            break;
        }
        case 4: { /* splice in part of another input */
            const input *o = &all[below(nall)];
            if (!o->len) break;
            size_t from = below(o->len), n = 1 + below(o->len - from < 64 ? o->len - from : 64);
            size_t at = below(len + 1);
            if (len + n > cap) break;
            memmove(out + at + n, out + at, len - at);
            memcpy(out + at, o->data + from, n);
            len += n;
            break;
        }
        default: /* truncate */
            len = below(len + 1);
            break;
        }
    }
    return (input){ out, len };
}

static int read_file(const char *path, input *in) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *in = (input){ buf, len };
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS]\n", argv[0]);
        return 2;
    }
    long mutations = argc > 2 ? strtol(argv[2], NULL, 10) : 3000;
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 2;
    }
    input *all = NULL;
    size_t n = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        input in;
        if (!read_file(path, &in)) continue;
        all = realloc(all, (n + 1) * sizeof *all);
        all[n++] = in;
    }
    closedir(d);
    if (n == 0) {
        fprintf(stderr, "%s: empty corpus\n", argv[1]);
        return 2;
    }
    for (size_t i = 0; i < n; i++) LLVMFuzzerTestOneInput(all[i].data, all[i].len);
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    for (long m = 0; m < mutations; m++) {
        input x = mutate(&all[below(n)], all, n);
        LLVMFuzzerTestOneInput(x.data, x.len);
        free(x.data);
    }
    printf("%s: %zu corpus files and %ld mutations ran cleanly\n", argv[0], n, mutations);
    for (size_t i = 0; i < n; i++) free(all[i].data);
    free(all);
    return 0;
}
