/* NumPy .npy files (format versions 1-3, little-endian, C order) for
 * `tlc run --input/--output` and the interpreter tests. dtype mapping:
 * <f2 float16, <f4 float32, |i1 int8, <i2 int16, <i4 int32, <i8 int64,
 * |u1 uint8, <u2 uint16, <u4 uint32, |b1 bool. NumPy has no bfloat16 / float8:
 * their bits are read from <V2 / <u2 (ml_dtypes arrays write V) and |V1 / |u1,
 * and written as <u2 / |u1 (tlc_npy_matches says which parameter takes which). */
#ifndef TLC_NPY_H
#define TLC_NPY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/tir.h"

#define TLC_NPY_MAX_RANK 8

typedef struct tlc_npy {
    tir_dtype dtype;
    bool raw_bits;     /* <u2/|u1/V: may be the bits of a bf16 / fp8 parameter */
    char descr[16];    /* as in the file, for messages */
    int rank;
    int64_t shape[TLC_NPY_MAX_RANK];
    int64_t elems;
    void *data;        /* malloc'd, elems * tir_dtype_bytes(dtype) bytes */
} tlc_npy;

/* false with a message in err ("path: ...") on any problem. */
bool tlc_npy_read(const char *path, tlc_npy *out, char *err, size_t errlen);
bool tlc_npy_write(const char *path, tir_dtype dtype, int rank, const int64_t *shape,
                   const void *data, char *err, size_t errlen);
void tlc_npy_free(tlc_npy *n);
/* Whether the array holds what a parameter of dtype t takes: its dtype, or
 * the raw bits of a bfloat16 / float8 parameter (<u2, |u1, V). */
bool tlc_npy_matches(const tlc_npy *n, tir_dtype t);
/* The .npy descr a dtype is written with ("<f2"). */
const char *tlc_npy_descr(tir_dtype t);
#endif
