/* Interpreter pieces without the front end: float conversions, .npy IO, and
 * small kernels built directly as Tile IR (tail masking, out-of-bounds
 * errors, gemm with transposes, reduce, symbolic dim checks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "interp/float_conv.h"
#include "ops/op_table.h"
#include "interp/npy.h"
#include "interp/interp.h"

/* ---------------- float conversions ---------------- */

static void test_f16(void **state) {
    (void)state;
    assert_int_equal(tlrt_f64_to_f16(1.0), 0x3c00);
    assert_int_equal(tlrt_f64_to_f16(-2.0), 0xc000);
    assert_int_equal(tlrt_f64_to_f16(65504.0), 0x7bff);
    assert_int_equal(tlrt_f64_to_f16(65519.0), 0x7bff);  /* below the midpoint */
    assert_int_equal(tlrt_f64_to_f16(65520.0), 0x7c00);  /* midpoint: ties to even -> inf */
    assert_int_equal(tlrt_f64_to_f16(ldexp(1, -24)), 0x0001); /* smallest subnormal */
    assert_int_equal(tlrt_f64_to_f16(ldexp(1, -25)), 0x0000); /* tie to even: 0 */
    assert_int_equal(tlrt_f64_to_f16(ldexp(3, -26)), 0x0001); /* 0.75 ulp -> 1 */
    assert_int_equal(tlrt_f64_to_f16(1.0 + ldexp(1, -11)), 0x3c00); /* tie -> even */
    assert_int_equal(tlrt_f64_to_f16(1.0 + ldexp(3, -11)), 0x3c02); /* tie -> even (up) */
    assert_true(isnan(tlrt_f16_to_f64(tlrt_f64_to_f16(NAN))));
    assert_true(tlrt_f16_to_f64(0x7c00) == INFINITY);
    assert_true(tlrt_f16_to_f64(0x3555) == 0.333251953125);
    for (unsigned b = 0; b < 0x7c00; b++) /* every finite positive half round-trips */
        assert_int_equal(tlrt_f64_to_f16(tlrt_f16_to_f64((uint16_t)b)), b);
}

static void test_bf16_fp8(void **state) {
    (void)state;
    assert_int_equal(tlrt_f64_to_bf16(1.0), 0x3f80);
    assert_int_equal(tlrt_f64_to_bf16(1.0 + ldexp(1, -8)), 0x3f80); /* tie -> even */
    assert_int_equal(tlrt_f64_to_bf16(1.0 + ldexp(3, -8)), 0x3f82);
    assert_int_equal(tlrt_f64_to_bf16(-3.0e38), 0xff62); /* 1.763 * 2^127: mantissa 97.7 -> 98 */
    assert_int_equal(tlrt_f64_to_bf16(1e39), 0x7f80);
    for (unsigned b = 0; b < 0x7f80; b += 7)
        assert_int_equal(tlrt_f64_to_bf16(tlrt_bf16_to_f64((uint16_t)b)), b);
    assert_int_equal(tlrt_f64_to_e4m3(1.0), 0x38);
    assert_int_equal(tlrt_f64_to_e4m3(448.0), 0x7e);
    assert_int_equal(tlrt_f64_to_e4m3(1000.0), 0x7e);  /* satfinite */
    assert_int_equal(tlrt_f64_to_e4m3(-1000.0), 0xfe);
    assert_int_equal(tlrt_f64_to_e4m3(ldexp(1, -9)), 0x01); /* smallest subnormal */
    assert_true(isnan(tlrt_e4m3_to_f64(0x7f)));
    for (unsigned b = 0; b < 0x7f; b++)
        assert_int_equal(tlrt_f64_to_e4m3(tlrt_e4m3_to_f64((uint8_t)b)), b);
    assert_true(tlc_round_to_dtype(TIR_F32, 0.1) == (double)0.1f);
    assert_int_equal(tir_wrap_int(TIR_I32, 0x100000005LL), 5);
    assert_int_equal(tir_wrap_int(TIR_I8, 200), -56);
    assert_int_equal(tlc_float_to_int(TIR_I32, -2.7), -2);
    assert_int_equal(tlc_float_to_int(TIR_I32, 1e20), 2147483647);
    assert_int_equal(tlc_float_to_int(TIR_I32, NAN), 0);
}

/* ---------------- .npy ---------------- */

static void test_npy_roundtrip(void **state) {
    (void)state;
    char path[] = "/tmp/tlc_npy_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[512];
    int16_t dummy;
    (void)dummy;
    uint16_t data[6];
    for (int i = 0; i < 6; i++) data[i] = tlrt_f64_to_f16(i * 0.5 - 1);
    int64_t shape[2] = {2, 3};
    assert_true(tlc_npy_write(path, TIR_F16, 2, shape, data, err, sizeof err));
    tlc_npy n;
    assert_true(tlc_npy_read(path, &n, err, sizeof err));
    assert_int_equal(n.dtype, TIR_F16);
    assert_int_equal(n.rank, 2);
    assert_int_equal(n.shape[0], 2);
    assert_int_equal(n.shape[1], 3);
    assert_memory_equal(n.data, data, sizeof data);
    tlc_npy_free(&n);
    /* header is 64-byte aligned as NumPy requires */
    FILE *f = fopen(path, "rb");
    unsigned char pre[10];
    assert_int_equal(fread(pre, 1, 10, f), 10);
    fclose(f);
    assert_int_equal((10 + (pre[8] | pre[9] << 8)) % 64, 0);

    int32_t iv[4] = {1, -2, 3, 4};
    int64_t s1[1] = {4};
    assert_true(tlc_npy_write(path, TIR_I32, 1, s1, iv, err, sizeof err));
    assert_true(tlc_npy_read(path, &n, err, sizeof err));
    assert_int_equal(n.dtype, TIR_I32);
    assert_int_equal(((int32_t *)n.data)[1], -2);
    tlc_npy_free(&n);

    /* truncated data and bad magic are errors with the file name */
    f = fopen(path, "r+b");
    assert_int_equal(ftruncate(fileno(f), 130), 0);
    fclose(f);
    assert_false(tlc_npy_read(path, &n, err, sizeof err));
    assert_non_null(strstr(err, "shorter"));
    f = fopen(path, "wb");
    fputs("hello world, not numpy", f);
    fclose(f);
    assert_false(tlc_npy_read(path, &n, err, sizeof err));
    assert_non_null(strstr(err, "bad magic"));
    /* float64 is not a kernel dtype */
    f = fopen(path, "wb");
    const char hdr[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
    unsigned char p2[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)sizeof hdr, 0};
    fwrite(p2, 1, 10, f);
    fwrite(hdr, 1, sizeof hdr - 1, f);
    fputc('\n', f);
    double one = 1;
    fwrite(&one, 8, 1, f);
    fclose(f);
    assert_false(tlc_npy_read(path, &n, err, sizeof err));
    assert_non_null(strstr(err, "unsupported dtype '<f8'"));
    /* what NumPy writes for ml_dtypes' bfloat16 and float8_e4m3fn arrays
     * (checked with ml_dtypes 0.5): void descriptors, read as raw bits */
    static const struct { const char *descr; tir_dtype t; int bytes; } ml[] = {{"<V2", TIR_BF16, 2}, {"<V1", TIR_F8E4M3, 1}};
    for (int m = 0; m < 2; m++) {
        char h[64];
        int hl = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }", ml[m].descr);
        unsigned char p3[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl + 1), 0};
        f = fopen(path, "wb");
        fwrite(p3, 1, 10, f);
        fwrite(h, 1, (size_t)hl, f);
        fputc('\n', f);
        const unsigned char vals[4] = {0xc0, 0x3f, 0x00, 0x40}; /* bf16 1.5, 2.0 (little-endian) */
        fwrite(vals, 1, (size_t)(2 * ml[m].bytes), f);
        fclose(f);
        assert_true(tlc_npy_read(path, &n, err, sizeof err));
        assert_int_equal(n.dtype, ml[m].t);
        assert_true(n.raw_bits);
        assert_int_equal(n.elems, 2);
        assert_memory_equal(n.data, vals, (size_t)(2 * ml[m].bytes));
        tlc_npy_free(&n);
    }
    unlink(path);
}

/* ---------------- hand-built Tile IR ---------------- */

typedef struct hb {
    tlc_arena a;
    tir_kernel k;
    tir_var *vars[16];
    int nv;
    tir_buffer *bufs[8];
    int nb;
    tlc_loc loc;
} hb;

static tlc_loc L(int line, int col) { return (tlc_loc){line, col}; }

static tir_var *mkvar(hb *h, const char *name, tir_var_kind kind) {
    tir_var *v = TLC_NEW(&h->a, tir_var);
    v->name = name;
    v->kind = kind;
    v->dtype = TIR_I32;
    v->id = h->nv;
    h->vars[h->nv++] = v;
    return v;
}

static tir_buffer *mkbuf(hb *h, const char *name, tir_scope scope, tir_dtype dt, int rank, tir_expr **shape) {
    tir_buffer *b = TLC_NEW(&h->a, tir_buffer);
    b->name = name;
    b->id = h->nb;
    b->scope = scope;
    b->dtype = dt;
    b->rank = rank;
    b->shape = TLC_NEW_ARRAY(&h->a, tir_expr *, (size_t)rank);
    for (int i = 0; i < rank; i++) b->shape[i] = shape[i];
    b->param_index = -1;
    h->bufs[h->nb++] = b;
    return b;
}

static tir_expr *I(hb *h, int64_t v) { return tir_int(&h->a, v, h->loc); }
static tir_expr *V(hb *h, tir_var *v) { return tir_var_ref(&h->a, v, h->loc); }

static tir_region region(hb *h, tir_buffer *b, tir_expr *s0, tir_expr *s1, int64_t e0, int64_t e1) {
    tir_region r = {.buf = b, .rank = 2, .loc = h->loc};
    r.start = TLC_NEW_ARRAY(&h->a, tir_expr *, 2);
    r.extent = TLC_NEW_ARRAY(&h->a, tir_expr *, 2);
    r.start[0] = s0;
    r.start[1] = s1;
    r.extent[0] = I(h, e0);
    r.extent[1] = I(h, e1);
    return r;
}

static tir_stmt *seq(hb *h, int n, ...) {
    tir_stmt *s = tir_new_stmt(&h->a, TS_SEQ, h->loc);
    s->u.seq.stmts = TLC_NEW_ARRAY(&h->a, tir_stmt *, (size_t)n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) s->u.seq.stmts[i] = va_arg(ap, tir_stmt *);
    va_end(ap);
    s->u.seq.n = n;
    return s;
}

static tir_stmt *alloc_stmt(hb *h, tir_buffer *b) {
    tir_stmt *s = tir_new_stmt(&h->a, TS_ALLOC, h->loc);
    s->u.alloc.buf = b;
    return s;
}

/* kernel scale(A: f16[M, 8], B: f32[M, 8]), grid ceildiv(M, 4):
 *   S = alloc_shared((4, 8), f16); copy(A[bx*4, 0], S)
 *   for i, j in Parallel(4, 8): S[i + off, j] = S[i, j] * 2
 *   copy(S, B[bx*4, 0])                         */
static void build_scale(hb *h, int64_t off) {
    memset(h, 0, sizeof *h);
    tlc_arena_init(&h->a);
    h->loc = L(3, 5);
    tir_var *M = mkvar(h, "M", TV_SYM_DIM);
    tir_var *bx = mkvar(h, "bx", TV_BLOCK_IDX);
    tir_var *i = mkvar(h, "i", TV_LOOP), *j = mkvar(h, "j", TV_LOOP);
    tir_buffer *A = mkbuf(h, "A", TIR_SCOPE_GLOBAL, TIR_F16, 2, (tir_expr *[]){V(h, M), I(h, 8)});
    tir_buffer *B = mkbuf(h, "B", TIR_SCOPE_GLOBAL, TIR_F32, 2, (tir_expr *[]){V(h, M), I(h, 8)});
    tir_buffer *S = mkbuf(h, "S", TIR_SCOPE_SHARED, TIR_F16, 2, (tir_expr *[]){I(h, 4), I(h, 8)});
    A->param_index = 0;
    B->param_index = 1;
    tir_kernel *k = &h->k;
    k->name = "scale";
    k->nparams = 2;
    k->params = TLC_NEW_ARRAY(&h->a, tir_param, 2);
    k->params[0] = (tir_param){TIR_PARAM_TENSOR, "A", A, NULL, L(1, 12), false};
    k->params[1] = (tir_param){TIR_PARAM_TENSOR, "B", B, NULL, L(1, 30), false};
    k->sym_dims = TLC_NEW_ARRAY(&h->a, tir_var *, 1);
    k->sym_dims[0] = M;
    k->nsym = 1;
    k->grid_rank = 1;
    k->grid[0] = tir_binary(&h->a, TB_FLOORDIV, tir_binary(&h->a, TB_ADD, V(h, M), I(h, 3), h->loc), I(h, 4), h->loc);
    k->block_idx[0] = bx;
    k->threads = 128;

    tir_expr *row0 = tir_binary(&h->a, TB_MUL, V(h, bx), I(h, 4), h->loc);
    tir_stmt *c1 = tlc_new_tile_op(&h->a, TS_COPY, L(5, 9));
    c1->u.copy.src = region(h, A, row0, I(h, 0), 4, 8);
    c1->u.copy.dst = region(h, S, I(h, 0), I(h, 0), 4, 8);
    h->loc = L(7, 13);
    tir_stmt *st = tir_new_stmt(&h->a, TS_STORE, L(7, 13));
    st->u.store.buf = S;
    st->u.store.idx = TLC_NEW_ARRAY(&h->a, tir_expr *, 2);
    st->u.store.idx[0] = tir_binary(&h->a, TB_ADD, V(h, i), I(h, off), L(7, 15));
    st->u.store.idx[1] = V(h, j);
    tir_expr **li = TLC_NEW_ARRAY(&h->a, tir_expr *, 2);
    li[0] = V(h, i);
    li[1] = V(h, j);
    st->u.store.value = tir_binary(&h->a, TB_MUL, tir_load(&h->a, S, li, h->loc), tir_float(&h->a, 2.0, TIR_F16, h->loc), h->loc);
    tir_stmt *loop = tir_new_stmt(&h->a, TS_FOR, L(6, 9));
    loop->u.for_.kind = TIR_FOR_PARALLEL;
    loop->u.for_.nvars = 2;
    loop->u.for_.vars = TLC_NEW_ARRAY(&h->a, tir_var *, 2);
    loop->u.for_.vars[0] = i;
    loop->u.for_.vars[1] = j;
    loop->u.for_.start = TLC_NEW_ARRAY(&h->a, tir_expr *, 2);
    loop->u.for_.extent = TLC_NEW_ARRAY(&h->a, tir_expr *, 2);
    loop->u.for_.start[0] = loop->u.for_.start[1] = I(h, 0);
    loop->u.for_.extent[0] = I(h, 4);
    loop->u.for_.extent[1] = I(h, 8);
    loop->u.for_.step = 1;
    loop->u.for_.body = st;
    h->loc = L(8, 9);
    tir_stmt *c2 = tlc_new_tile_op(&h->a, TS_COPY, L(8, 9));
    c2->u.copy.src = region(h, S, I(h, 0), I(h, 0), 4, 8);
    c2->u.copy.dst = region(h, B, tir_binary(&h->a, TB_MUL, V(h, bx), I(h, 4), h->loc), I(h, 0), 4, 8);
    k->body = seq(h, 4, alloc_stmt(h, S), c1, loop, c2);
    k->buffers = h->bufs;
    k->nbuffers = h->nb;
    k->nvars = h->nv;
}

static void test_tail_masking(void **state) {
    (void)state;
    hb h;
    build_scale(&h, 0);
    tlc_interp *it = tlc_interp_create(&h.k, NULL);
    const int64_t M = 6;
    uint16_t A[6 * 8];
    float B[7 * 8]; /* one row more than the tensor: must stay untouched */
    for (int i = 0; i < 48; i++) A[i] = tlrt_f64_to_f16(i * 0.25);
    for (int i = 0; i < 56; i++) B[i] = -7;
    assert_true(tlc_interp_bind_tensor(it, "A", A, TIR_F16, 2, (int64_t[]){M, 8}));
    assert_true(tlc_interp_bind_tensor(it, "B", B, TIR_F32, 2, (int64_t[]){M, 8}));
    assert_true(tlc_interp_run(it));
    assert_string_equal(tlc_interp_error(it), "");
    for (int i = 0; i < 48; i++) assert_true(B[i] == (float)(i * 0.5));
    for (int i = 48; i < 56; i++) assert_true(B[i] == -7);
    assert_int_equal(tlc_interp_get_stats(it).blocks, 2);
    assert_int_equal(tlc_interp_sym_dim(it, "M"), 6);
    assert_true(tlc_interp_param_written(&h.k, 1));
    assert_false(tlc_interp_param_written(&h.k, 0));
    /* wrong dtype / rank / unknown names are bind errors */
    assert_false(tlc_interp_bind_tensor(it, "A", A, TIR_F32, 2, (int64_t[]){M, 8}));
    assert_non_null(strstr(tlc_interp_error(it), "tensor 'A' is float16 but the argument is float32"));
    assert_false(tlc_interp_bind_tensor(it, "A", A, TIR_F16, 2, (int64_t[]){M, 9}));
    assert_non_null(strstr(tlc_interp_error(it), "extent 8 in dim 1"));
    assert_false(tlc_interp_bind_tensor(it, "Z", A, TIR_F16, 2, (int64_t[]){M, 8}));
    assert_non_null(strstr(tlc_interp_error(it), "no parameter 'Z'"));
    /* inconsistent symbolic dim */
    assert_true(tlc_interp_bind_tensor(it, "B", B, TIR_F32, 2, (int64_t[]){5, 8}));
    assert_false(tlc_interp_run(it));
    assert_non_null(strstr(tlc_interp_error(it), "symbolic dim 'M' is 6 from 'A' dim 0 but 5 from 'B' dim 0"));
    tlc_interp_destroy(it);
    tlc_arena_free(&h.a);
}

static void test_oob_error(void **state) {
    (void)state;
    hb h;
    build_scale(&h, 1); /* S[i + 1, j]: row 4 of a 4-row buffer */
    tlc_source src = {"k.tl", "l1\nl2\nl3\nl4\nl5\nl6\n            S[i + 1, j] = S[i, j] * 2\n", 0};
    src.len = strlen(src.text);
    tlc_interp *it = tlc_interp_create(&h.k, &src);
    uint16_t A[8 * 8] = {0};
    float B[8 * 8];
    for (int i = 0; i < 64; i++) B[i] = 3;
    assert_true(tlc_interp_bind_tensor(it, "A", A, TIR_F16, 2, (int64_t[]){8, 8}));
    assert_true(tlc_interp_bind_tensor(it, "B", B, TIR_F32, 2, (int64_t[]){8, 8}));
    assert_false(tlc_interp_run(it));
    const char *e = tlc_interp_error(it);
    assert_non_null(strstr(e, "k.tl:7:15: error: index 4 out of bounds for dim 0 of 'S' (extent 4)"));
    assert_non_null(strstr(e, "S[i + 1, j]")); /* the source line is shown */
    for (int i = 0; i < 64; i++) assert_true(B[i] == 3); /* left as it was */
    tlc_interp_destroy(it);
    tlc_arena_free(&h.a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16),
        cmocka_unit_test(test_bf16_fp8),
        cmocka_unit_test(test_npy_roundtrip),
        cmocka_unit_test(test_tail_masking),
        cmocka_unit_test(test_oob_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
