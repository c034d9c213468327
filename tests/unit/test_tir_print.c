/* Tile IR printer and verifier on IR built by hand with the tir.h
 * constructors (independent of the front end): the exact text of each
 * statement kind and of expression precedence, and one verifier error per
 * kind of corruption. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "ir/tir.h"
#include "ops/op_table.h"

static const tlc_loc L = {1, 1};

typedef struct fixture {
    tlc_arena arena;
    tlc_diag diag;
    tlc_strbuf sb;
    tlc_ptrvec bufs, stmts;
    int nvars;
    tir_kernel *k;
    tir_module *m;
    /* handles into the kernel, for corrupting it */
    tir_var *M, *bx, *i, *j, *ko;
    tir_buffer *A, *S, *F, *R;
    tir_stmt *gemm, *par, *copy, *reduce, *store;
} fixture;

static tlc_arena *AR;

static tir_var *mk_var(fixture *f, const char *name, tir_var_kind kind) {
    tir_var *v = TLC_NEW(&f->arena, tir_var);
    v->name = name;
    v->kind = kind;
    v->dtype = TIR_I32;
    v->id = f->nvars++;
    v->loc = L;
    return v;
}

static tir_expr *I(int64_t v) { return tir_int(AR, v, L); }
static tir_expr *V(tir_var *v) { return tir_var_ref(AR, v, L); }
static tir_expr *B(tir_binop op, tir_expr *x, tir_expr *y) { return tir_binary(AR, op, x, y, L); }

static tir_buffer *mk_buf(fixture *f, const char *name, tir_scope scope, tir_dtype t, int rank, tir_expr **shape) {
    tir_buffer *b = TLC_NEW(&f->arena, tir_buffer);
    b->name = name;
    b->id = f->bufs.len;
    b->scope = scope;
    b->dtype = t;
    b->rank = rank;
    b->shape = shape;
    b->param_index = -1;
    b->loc = L;
    tlc_ptrvec_push(&f->bufs, b);
    return b;
}

static tir_expr **list2(tir_expr *a, tir_expr *b) {
    tir_expr **l = TLC_NEW_ARRAY(AR, tir_expr *, 2);
    l[0] = a;
    l[1] = b;
    return l;
}

static tir_region whole(tir_buffer *b) {
    tir_region r = {.buf = b, .rank = b->rank, .loc = L};
    r.start = TLC_NEW_ARRAY(AR, tir_expr *, b->rank);
    r.extent = TLC_NEW_ARRAY(AR, tir_expr *, b->rank);
    for (int d = 0; d < b->rank; d++) {
        r.start[d] = I(0);
        r.extent[d] = b->shape[d];
    }
    return r;
}

static tir_stmt *push(fixture *f, tir_stmt *s) {
    tlc_ptrvec_push(&f->stmts, s);
    return s;
}

static tir_stmt *seq_of(tir_stmt **items, int n) {
    tir_stmt *s = tir_new_stmt(AR, TS_SEQ, L);
    s->u.seq.stmts = TLC_NEW_ARRAY(AR, tir_stmt *, n);
    if (n > 0) memcpy(s->u.seq.stmts, items, sizeof(tir_stmt *) * (size_t)n);
    s->u.seq.n = n;
    return s;
}

/* A small gemm kernel using every statement kind. */
static int setup(void **state) {
    static fixture fx;
    fixture *f = &fx;
    memset(f, 0, sizeof *f);
    tlc_arena_init(&f->arena);
    AR = &f->arena;
    tlc_diag_init(&f->diag, NULL);
    tlc_sb_init(&f->sb);

    tir_kernel *k = TLC_NEW(AR, tir_kernel);
    f->k = k;
    k->name = "mm";
    k->loc = L;
    f->M = mk_var(f, "M", TV_SYM_DIM);
    f->bx = mk_var(f, "bx", TV_BLOCK_IDX);
    tir_var *eps = mk_var(f, "eps", TV_SCALAR_PARAM);
    eps->dtype = TIR_F32;
    eps->axis = 1;

    f->A = mk_buf(f, "A", TIR_SCOPE_GLOBAL, TIR_F16, 2, list2(V(f->M), I(64)));
    f->A->param_index = 0;
    k->params = TLC_NEW_ARRAY(AR, tir_param, 2);
    k->params[0] = (tir_param){TIR_PARAM_TENSOR, "A", f->A, NULL, L, false};
    k->params[1] = (tir_param){TIR_PARAM_SCALAR, "eps", NULL, eps, L, false};
    k->nparams = 2;
    k->sym_dims = TLC_NEW_ARRAY(AR, tir_var *, 1);
    k->sym_dims[0] = f->M;
    k->nsym = 1;
    k->consts = TLC_NEW_ARRAY(AR, tir_const, 3);
    k->consts[0] = (tir_const){.name = "block", .kind = TIR_CONST_INT, .ival = 64, .overridden = true};
    k->consts[1] = (tir_const){.name = "dtype", .kind = TIR_CONST_DTYPE, .dtype = TIR_F16};
    k->consts[2] = (tir_const){.name = "order", .kind = TIR_CONST_STRING, .sval = "col"};
    k->nconsts = 3;
    k->grid_rank = 1;
    k->grid[0] = B(TB_FLOORDIV, B(TB_SUB, B(TB_ADD, V(f->M), I(64)), I(1)), I(64));
    k->block_idx[0] = f->bx;
    f->bx->axis = 0;
    k->threads = 128;
    k->use_swizzle = true;
    k->swizzle_panel = 4;
    k->swizzle_col = true;

    f->S = mk_buf(f, "S", TIR_SCOPE_SHARED, TIR_F16, 2, list2(I(64), I(64)));
    f->S->layout_hint = TIR_LAYOUT_HINT_SWIZZLED;
    f->F = mk_buf(f, "F", TIR_SCOPE_FRAGMENT, TIR_F32, 2, list2(I(64), I(64)));
    tir_expr **r1 = TLC_NEW_ARRAY(AR, tir_expr *, 1);
    r1[0] = I(64);
    f->R = mk_buf(f, "R", TIR_SCOPE_FRAGMENT, TIR_F32, 1, r1);
    tir_buffer *acc = mk_buf(f, "acc", TIR_SCOPE_VAR, TIR_F32, 0, NULL);
    k->shared_bytes = 64 * 64 * 2;

    tir_buffer *allocs[] = {f->S, f->F, f->R, acc};
    for (int n = 0; n < 4; n++) {
        tir_stmt *s = push(f, tir_new_stmt(AR, TS_ALLOC, L));
        s->u.alloc.buf = allocs[n];
    }
    tir_stmt *clr = push(f, tlc_new_tile_op(AR, TS_FILL, L));
    clr->u.fill.dst = whole(f->F);
    clr->u.fill.is_clear = true;

    /* for ko in pipelined(0, ceildiv(M, 64), num_stages=2): copy A tile -> S; gemm */
    f->ko = mk_var(f, "ko", TV_LOOP);
    tir_stmt *pipe = push(f, tir_new_stmt(AR, TS_FOR, L));
    pipe->u.for_.kind = TIR_FOR_PIPELINED;
    pipe->u.for_.nvars = 1;
    pipe->u.for_.vars = TLC_NEW_ARRAY(AR, tir_var *, 1);
    pipe->u.for_.vars[0] = f->ko;
    pipe->u.for_.start = TLC_NEW_ARRAY(AR, tir_expr *, 1);
    pipe->u.for_.start[0] = I(0);
    pipe->u.for_.extent = TLC_NEW_ARRAY(AR, tir_expr *, 1);
    pipe->u.for_.extent[0] = B(TB_FLOORDIV, B(TB_ADD, V(f->M), I(63)), I(64));
    pipe->u.for_.step = 1;
    pipe->u.for_.num_stages = 2;
    f->copy = tlc_new_tile_op(AR, TS_COPY, L);
    f->copy->u.copy.src = (tir_region){f->A, 2, list2(B(TB_MUL, V(f->ko), I(64)), I(0)), list2(I(64), I(64)), L};
    f->copy->u.copy.dst = whole(f->S);
    f->gemm = tlc_new_tile_op(AR, TS_GEMM, L);
    f->gemm->u.gemm.a = whole(f->S);
    f->gemm->u.gemm.b = whole(f->S);
    f->gemm->u.gemm.c = whole(f->F);
    f->gemm->u.gemm.trans_b = true;
    f->gemm->u.gemm.policy = TIR_POLICY_FULLCOL;
    f->gemm->u.gemm.m = f->gemm->u.gemm.n = f->gemm->u.gemm.k = 64;
    tir_stmt *body[] = {f->copy, f->gemm};
    pipe->u.for_.body = seq_of(body, 2);

    /* for i, j in parallel(64, 64): F[i, j] = max(F[i, j], 0.0) * eps */
    f->i = mk_var(f, "i", TV_LOOP);
    f->j = mk_var(f, "j", TV_LOOP);
    f->par = push(f, tir_new_stmt(AR, TS_FOR, L));
    f->par->u.for_.kind = TIR_FOR_PARALLEL;
    f->par->u.for_.nvars = 2;
    f->par->u.for_.vars = TLC_NEW_ARRAY(AR, tir_var *, 2);
    f->par->u.for_.vars[0] = f->i;
    f->par->u.for_.vars[1] = f->j;
    f->par->u.for_.start = list2(I(0), I(0));
    f->par->u.for_.extent = list2(I(64), I(64));
    f->par->u.for_.step = 1;
    f->store = tir_new_stmt(AR, TS_STORE, L);
    f->store->u.store.buf = f->F;
    f->store->u.store.idx = list2(V(f->i), V(f->j));
    tir_expr *ld = tir_load(AR, f->F, list2(V(f->i), V(f->j)), L);
    f->store->u.store.value = B(TB_MUL, B(TB_MAX, ld, tir_float(AR, 0.0, TIR_F32, L)), V(eps));
    f->par->u.for_.body = seq_of(&f->store, 1);

    f->reduce = push(f, tlc_new_tile_op(AR, TS_REDUCE, L));
    f->reduce->u.reduce.kind = TIR_REDUCE_MAX;
    f->reduce->u.reduce.src = whole(f->F);
    f->reduce->u.reduce.dst = whole(f->R);
    f->reduce->u.reduce.dim = 1;
    f->reduce->u.reduce.clear = true;

    /* let t: int32 = bx * 64; if t < M: atomic_add(A[t, 0], 1.0) elif ...: acc = 2.0 else: pass */
    tir_var *t = mk_var(f, "t", TV_LET);
    tir_stmt *let = push(f, tir_new_stmt(AR, TS_LET, L));
    let->u.let.var = t;
    let->u.let.value = B(TB_MUL, V(f->bx), I(64));
    tir_stmt *iff = push(f, tir_new_stmt(AR, TS_IF, L));
    iff->u.if_.cond = B(TB_LT, V(t), V(f->M));
    tir_stmt *at = tlc_new_tile_op(AR, TS_ATOMIC_ADD, L);
    at->u.atomic.dst = (tir_region){f->A, 2, list2(V(t), I(0)), list2(I(1), I(1)), L};
    at->u.atomic.value = tir_float(AR, 1.0, TIR_F16, L);
    iff->u.if_.then = seq_of(&at, 1);
    tir_stmt *elif = tir_new_stmt(AR, TS_IF, L);
    elif->u.if_.cond = B(TB_EQ, V(t), I(0));
    tir_stmt *st2 = tir_new_stmt(AR, TS_STORE, L);
    st2->u.store.buf = acc;
    st2->u.store.value = tir_float(AR, 2.0, TIR_F32, L);
    elif->u.if_.then = seq_of(&st2, 1);
    elif->u.if_.els = seq_of(NULL, 0);
    iff->u.if_.els = seq_of(&elif, 1);
    tir_stmt *as = push(f, tir_new_stmt(AR, TS_ASSIGN, L));
    as->u.let.var = t;
    as->u.let.value = B(TB_ADD, V(t), I(1));
    tir_stmt *fill = push(f, tlc_new_tile_op(AR, TS_FILL, L));
    fill->u.fill.dst = (tir_region){f->S, 2, list2(I(0), I(32)), list2(I(64), I(32)), L};
    fill->u.fill.value = tir_float(AR, -INFINITY, TIR_F32, L);

    k->body = seq_of((tir_stmt **)f->stmts.items, f->stmts.len);
    k->buffers = (tir_buffer **)tlc_ptrvec_freeze(&f->bufs, AR);
    k->nbuffers = 5;
    k->nvars = f->nvars;
    f->m = TLC_NEW(AR, tir_module);
    f->m->source_name = "mm.tl";
    f->m->arch = TLC_SM90A;
    f->m->kernels = TLC_NEW_ARRAY(AR, tir_kernel *, 1);
    f->m->kernels[0] = k;
    f->m->nkernels = 1;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    tlc_ptrvec_free(&f->stmts);
    tlc_sb_free(&f->sb);
    tlc_diag_free(&f->diag);
    tlc_arena_free(&f->arena);
    return 0;
}

static const char *expected_dump =
    "# Tile IR of mm.tl for sm_90a\n"
    "\n"
    "kernel mm\n"
    "  param A: global float16[M, 64]\n"
    "  param eps: float32\n"
    "  sym M\n"
    "  const block = 64  # -D\n"
    "  const dtype = float16\n"
    "  const order = \"col\"\n"
    "  grid (ceildiv(M, 64)) as (bx)\n"
    "  threads 128\n"
    "  swizzle panel_size=4 order=col\n"
    "  shared 8192 B\n"
    "  body:\n"
    "    alloc S: shared float16[64, 64]  # layout: swizzled\n"
    "    alloc F: fragment float32[64, 64]\n"
    "    alloc R: fragment float32[64]\n"
    "    alloc acc: var float32\n"
    "    clear(F[0:64, 0:64])\n"
    "    for ko in pipelined(0, ceildiv(M, 64), num_stages=2):\n"
    "      copy(A[ko * 64:ko * 64 + 64, 0:64], S[0:64, 0:64])\n"
    "      gemm(S[0:64, 0:64], S[0:64, 0:64], F[0:64, 0:64], transpose_A=false, transpose_B=true, "
    "policy=FullCol, clear_accum=false)  # m=64 n=64 k=64\n"
    "    for i, j in parallel(64, 64):\n"
    "      F[i, j] = max(F[i, j], 0.0) * eps\n"
    "    reduce_max(F[0:64, 0:64], R[0:64], dim=1, clear=true)\n"
    "    let t: int32 = bx * 64\n"
    "    if t < M:\n"
    "      atomic_add(A[t, 0], float16(1.0))\n"
    "    elif t == 0:\n"
    "      acc = 2.0\n"
    "    else:\n"
    "      pass\n"
    "    t = t + 1\n"
    "    fill(S[0:64, 32:64], -infinity(float32))\n";

static void test_dump(void **state) {
    fixture *f = *state;
    tir_print_module(&f->sb, f->m);
    assert_string_equal(tlc_sb_cstr(&f->sb), expected_dump);
    /* deterministic: a second print is identical */
    tlc_strbuf again;
    tlc_sb_init(&again);
    tir_print_module(&again, f->m);
    assert_string_equal(tlc_sb_cstr(&again), expected_dump);
    tlc_sb_free(&again);
}

static void test_verify_ok(void **state) {
    fixture *f = *state;
    bool ok = tir_verify_module(f->m, &f->diag);
    if (!ok) print_message("%s", tlc_sb_cstr(&f->diag.out));
    assert_true(ok);
    assert_int_equal(f->diag.errors, 0);
}

/* expression precedence: parentheses exactly where Python needs them */
static void expect_expr(tir_expr *e, const char *want) {
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    tir_print_expr(&sb, e);
    assert_string_equal(tlc_sb_cstr(&sb), want);
    tlc_sb_free(&sb);
}

static void test_precedence(void **state) {
    fixture *f = *state;
    tir_expr *x = V(f->i), *y = V(f->j), *z = V(f->ko);
    expect_expr(B(TB_MUL, B(TB_ADD, x, y), z), "(i + j) * ko");
    expect_expr(B(TB_ADD, x, B(TB_MUL, y, z)), "i + j * ko");
    expect_expr(B(TB_SUB, x, B(TB_SUB, y, z)), "i - (j - ko)");
    expect_expr(B(TB_SUB, B(TB_SUB, x, y), z), "i - j - ko");
    expect_expr(B(TB_FLOORDIV, x, B(TB_MUL, y, z)), "i // (j * ko)");
    expect_expr(B(TB_FLOORMOD, B(TB_MUL, x, y), z), "i * j % ko");
    expect_expr(B(TB_POW, B(TB_POW, x, y), z), "(i ** j) ** ko");
    expect_expr(B(TB_POW, x, B(TB_POW, y, z)), "i ** j ** ko");
    expect_expr(tir_unary(AR, TU_NEG, B(TB_ADD, x, y), L), "-(i + j)");
    expect_expr(B(TB_POW, tir_unary(AR, TU_NEG, x, L), y), "(-i) ** j");
    expect_expr(B(TB_SUB, x, I(-3)), "i - -3");
    expect_expr(B(TB_AND, B(TB_LT, x, y), tir_unary(AR, TU_NOT, B(TB_EQ, y, z), L)), "i < j and not j == ko");
    expect_expr(B(TB_AND, B(TB_OR, B(TB_LT, x, y), B(TB_LT, y, z)), B(TB_LT, x, z)), "(i < j or j < ko) and i < ko");
    expect_expr(B(TB_LT, B(TB_LT, x, y), z), "(i < j) < ko");
    expect_expr(B(TB_BITAND, B(TB_SHL, x, I(2)), B(TB_BITOR, y, z)), "i << 2 & (j | ko)");
    expect_expr(tir_select(AR, B(TB_GT, x, y), x, y, L), "i if i > j else j");
    expect_expr(B(TB_ADD, tir_select(AR, B(TB_GT, x, y), x, y, L), I(1)), "(i if i > j else j) + 1");
    expect_expr(tir_unary(AR, TU_EXP2, tir_cast(AR, B(TB_SUB, x, y), TIR_F32, L), L), "exp2(float32(i - j))");
    expect_expr(B(TB_MIN, x, B(TB_ADD, y, I(1))), "min(i, j + 1)");
    expect_expr(tir_float(AR, 1e-5, TIR_F32, L), "1e-05");
    expect_expr(tir_float(AR, 0.1, TIR_F32, L), "0.1");
    expect_expr(tir_float(AR, 3.0, TIR_F32, L), "3.0");
    expect_expr(tir_float(AR, INFINITY, TIR_F16, L), "infinity(float16)");
    expect_expr(tir_int_typed(AR, 1, TIR_BOOL, L), "True");
    expect_expr(tir_int_typed(AR, 5, TIR_I64, L), "int64(5)");
    expect_expr(I(INT64_C(5000000000)), "5000000000");
    expect_expr(B(TB_FLOORDIV, B(TB_ADD, x, I(127)), I(128)), "ceildiv(i, 128)");
    expect_expr(B(TB_FLOORDIV, B(TB_ADD, x, I(128)), I(128)), "(i + 128) // 128");
}

/* Two different variables named the same get their ids in the dump. */
static void test_duplicate_names(void **state) {
    fixture *f = *state;
    f->j->name = "i";
    tir_print_kernel(&f->sb, f->k);
    char want[64];
    snprintf(want, sizeof want, "for i.%d, i.%d in parallel(64, 64):", f->i->id, f->j->id);
    assert_non_null(strstr(tlc_sb_cstr(&f->sb), want));
}

/* ---- verifier: each corruption is reported as an internal error ---- */

static void expect_invalid(fixture *f, const char *needle) {
    bool ok = tir_verify_module(f->m, &f->diag);
    const char *out = tlc_sb_cstr(&f->diag.out);
    if (ok || !strstr(out, needle)) print_message("verifier said:\n%s\nexpected: %s\n", out, needle);
    assert_false(ok);
    assert_true(f->diag.errors > 0);
    assert_non_null(strstr(out, "internal error"));
    assert_non_null(strstr(out, needle));
}

static void test_bad_region_rank(void **state) {
    fixture *f = *state;
    f->copy->u.copy.dst.rank = 1;
    expect_invalid(f, "region of 'S' has rank 1 but the buffer has rank 2");
}

static void test_bad_region_bounds(void **state) {
    fixture *f = *state;
    f->copy->u.copy.dst.start[1] = I(8);
    expect_invalid(f, "exceeds dim 1 of size 64");
}

static void test_gemm_accumulator_scope(void **state) {
    fixture *f = *state;
    f->gemm->u.gemm.c = whole(f->S);
    expect_invalid(f, "gemm accumulator 'S' is not a fragment");
}

static void test_gemm_shape(void **state) {
    fixture *f = *state;
    f->gemm->u.gemm.k = 32;
    expect_invalid(f, "gemm A operand has shape [64, 64], expected [64, 32]");
}

static void test_parallel_extent(void **state) {
    fixture *f = *state;
    f->par->u.for_.extent[1] = V(f->M);
    expect_invalid(f, "Parallel loop extent 1 is not a positive constant");
}

static void test_var_out_of_scope(void **state) {
    fixture *f = *state;
    /* the reduce sits after the parallel loop: i is no longer in scope */
    f->reduce->u.reduce.src.start[0] = V(f->i);
    f->reduce->u.reduce.src.extent[0] = I(1);
    expect_invalid(f, "variable 'i' is used outside its scope");
}

static void test_duplicate_var_id(void **state) {
    fixture *f = *state;
    f->j->id = f->i->id;
    expect_invalid(f, "share id");
}

static void test_buffer_ids_dense(void **state) {
    fixture *f = *state;
    f->R->id = 7;
    expect_invalid(f, "ids must be dense");
}

static void test_null_expr(void **state) {
    fixture *f = *state;
    f->store->u.store.value = NULL;
    expect_invalid(f, "missing expression");
}

static void test_buffer_used_before_alloc(void **state) {
    fixture *f = *state;
    tir_stmt **stmts = f->k->body->u.seq.stmts;
    tir_stmt *tmp = stmts[0]; /* alloc S after the loop that uses S */
    stmts[0] = stmts[5];
    stmts[5] = tmp;
    expect_invalid(f, "buffer 'S' is used outside its scope");
}

static void test_reduce_shape(void **state) {
    fixture *f = *state;
    f->reduce->u.reduce.dim = 0;
    f->reduce->u.reduce.dst.extent[0] = I(32);
    expect_invalid(f, "reduce destination has shape [32], expected [64]");
}

static void test_float_index(void **state) {
    fixture *f = *state;
    f->store->u.store.idx[1] = tir_float(AR, 1.0, TIR_F32, L);
    expect_invalid(f, "store: index 1 has dtype float32");
}

static void test_null_module(void **state) {
    fixture *f = *state;
    assert_false(tir_verify_module(NULL, &f->diag));
    assert_non_null(strstr(tlc_sb_cstr(&f->diag.out), "internal error"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dump, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_region_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_region_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gemm_accumulator_scope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gemm_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parallel_extent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_var_out_of_scope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_var_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffer_ids_dense, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_expr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffer_used_before_alloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_float_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_module, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
