#include "interp/npy.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *tlc_npy_descr(tir_dtype t) {
    switch (t) {
    case TIR_F16: return "<f2";
    case TIR_BF16: return "<u2";
    case TIR_F32: return "<f4";
    case TIR_F8E4M3: case TIR_F8E5M2: return "|u1";
    case TIR_I8: return "|i1";
    case TIR_I16: return "<i2";
    case TIR_U8: return "|u1";
    case TIR_U16: return "<u2";
    case TIR_U32: return "<u4";
    case TIR_I32: return "<i4";
    case TIR_I64: return "<i8";
    case TIR_BOOL: return "|b1";
    default: return "?";
    }
}

bool tlc_npy_matches(const tlc_npy *n, tir_dtype t) {
    if (n->dtype == t) return true;
    return n->raw_bits && (t == TIR_BF16 || tir_dtype_is_fp8(t)) && tir_dtype_bytes(n->dtype) == tir_dtype_bytes(t);
}

static bool descr_dtype(const char *d, tir_dtype *t, bool *raw) {
    *raw = false;
    static const struct { const char *d; tir_dtype t; bool raw; } map[] = {
        {"<f2", TIR_F16, false}, {"<f4", TIR_F32, false}, {"|i1", TIR_I8, false},
        {"<i1", TIR_I8, false},  {"<i4", TIR_I32, false}, {"<i8", TIR_I64, false},
        {"|b1", TIR_BOOL, false}, {"<i2", TIR_I16, false}, {"<u4", TIR_U32, false},
        {"<u2", TIR_U16, true},  {"|u1", TIR_U8, true},   {"<u1", TIR_U8, true},
        {"<V2", TIR_BF16, true}, {"|V2", TIR_BF16, true}, {"|V1", TIR_F8E4M3, true},
        {"<V1", TIR_F8E4M3, true},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(d, map[i].d)) { *t = map[i].t; *raw = map[i].raw; return true; }
    return false;
}

/* Finds 'key': in the header dict and returns a pointer just after the colon. */
static const char *find_key(const char *h, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

bool tlc_npy_read(const char *path, tlc_npy *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return false; }
    unsigned char pre[12];
    char *hdr = NULL;
    bool ok = false;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        snprintf(err, errlen, "%s: not a .npy file (bad magic)", path);
        goto done;
    }
    size_t hlen;
    if (pre[6] == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) { snprintf(err, errlen, "%s: truncated header", path); goto done; }
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        snprintf(err, errlen, "%s: unsupported .npy format version %d", path, pre[6]);
        goto done;
    }
    if (hlen > (1u << 20)) { snprintf(err, errlen, "%s: header too long", path); goto done; }
    hdr = malloc(hlen + 1);
    if (!hdr || fread(hdr, 1, hlen, f) != hlen) { snprintf(err, errlen, "%s: truncated header", path); goto done; }
    hdr[hlen] = 0;
    const char *p = find_key(hdr, "descr");
    if (!p || (*p != '\'' && *p != '"')) { snprintf(err, errlen, "%s: header has no 'descr'", path); goto done; }
    char q = *p++;
    size_t n = 0;
    while (p[n] && p[n] != q && n < sizeof out->descr - 1) { out->descr[n] = p[n]; n++; }
    out->descr[n] = 0;
    if (!descr_dtype(out->descr, &out->dtype, &out->raw_bits)) {
        snprintf(err, errlen, "%s: unsupported dtype '%s' (tlc reads <f2 <f4 |i1 <i4 <i8 |b1, and <u2/V2 as bfloat16 bits, |u1/V1 as float8_e4m3 or float8_e5m2 bits)",
                 path, out->descr);
        goto done;
    }
    p = find_key(hdr, "fortran_order");
    if (!p) { snprintf(err, errlen, "%s: header has no 'fortran_order'", path); goto done; }
    if (!strncmp(p, "True", 4)) {
        snprintf(err, errlen, "%s: Fortran-order arrays are not supported (save with np.ascontiguousarray)", path);
        goto done;
    }
    p = find_key(hdr, "shape");
    if (!p || *p != '(') { snprintf(err, errlen, "%s: header has no 'shape'", path); goto done; }
    p++;
    out->elems = 1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || errno) { snprintf(err, errlen, "%s: bad shape in header", path); goto done; }
        if (out->rank == TLC_NPY_MAX_RANK) { snprintf(err, errlen, "%s: rank above %d", path, TLC_NPY_MAX_RANK); goto done; }
        out->shape[out->rank++] = v;
        if (v && out->elems > INT64_MAX / 16 / v) { snprintf(err, errlen, "%s: array too large", path); goto done; }
        out->elems *= v;
        p = end;
    }
    size_t bytes = (size_t)out->elems * (size_t)tir_dtype_bytes(out->dtype);
    /* a regular file must hold the data its header declares before any of
     * it is allocated (a small file may declare terabytes) */
    struct stat st;
    long pos = ftell(f);
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && pos >= 0 &&
        (st.st_size < pos || (uint64_t)(st.st_size - pos) < (uint64_t)bytes)) {
        snprintf(err, errlen, "%s: file shorter than its shape says (%lld elements of '%s')", path,
                 (long long)out->elems, out->descr);
        goto done;
    }
    out->data = malloc(bytes ? bytes : 1);
    if (!out->data) { snprintf(err, errlen, "%s: out of memory", path); goto done; }
    if (fread(out->data, 1, bytes, f) != bytes) {
        snprintf(err, errlen, "%s: file shorter than its shape says (%lld elements of '%s')", path,
                 (long long)out->elems, out->descr);
        goto done;
    }
    ok = true;
done:
    free(hdr);
    fclose(f);
    if (!ok) { free(out->data); out->data = NULL; }
    return ok;
}

bool tlc_npy_write(const char *path, tir_dtype dtype, int rank, const int64_t *shape,
                   const void *data, char *err, size_t errlen) {
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", tlc_npy_descr(dtype));
    int64_t elems = 1;
    for (int i = 0; i < rank; i++) {
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)shape[i], i + 1 < rank ? " " : "");
        elems *= shape[i];
    }
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* Pad with spaces so magic + len + header + '\n' is a multiple of 64. */
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) { snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno)); return false; }
    unsigned hl = (unsigned)(n + pad + 1);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
    bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n;
    for (int i = 0; ok && i < pad; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    size_t bytes = (size_t)elems * (size_t)tir_dtype_bytes(dtype);
    ok = ok && fwrite(data, 1, bytes, f) == bytes;
    if (fclose(f) != 0) ok = false;
    if (!ok) snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
    return ok;
}

void tlc_npy_free(tlc_npy *n) {
    free(n->data);
    n->data = NULL;
}
