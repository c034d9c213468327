/* Parser tests: every construct of the language surface, precedence,
 * error messages and recovery, and depth limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "frontend/ast.h"

typedef struct parsed {
    tlc_source src;
    tlc_arena arena;
    tlc_diag diag;
    ast_module *m;
    tlc_strbuf dump;
} parsed;

static parsed *parse_n(const char *text, size_t len) {
    parsed *p = calloc(1, sizeof *p);
    p->src = (tlc_source){ "t.tl", text, len };
    tlc_arena_init(&p->arena);
    tlc_diag_init(&p->diag, &p->src);
    p->diag.show_source = false;
    p->m = tlc_parse(&p->src, &p->arena, &p->diag);
    tlc_sb_init(&p->dump);
    if (p->m) ast_print_module(&p->dump, p->m);
    return p;
}

static parsed *parse(const char *text) { return parse_n(text, strlen(text)); }

static void done(parsed *p) {
    tlc_sb_free(&p->dump);
    tlc_diag_free(&p->diag);
    tlc_arena_free(&p->arena);
    free(p);
}

static const char *diags(parsed *p) { return tlc_sb_cstr(&p->diag.out); }

static void assert_contains(const char *hay, const char *needle) {
    if (!strstr(hay, needle)) fail_msg("expected to find \"%s\" in:\n%s", needle, hay);
}

static void assert_dump(const char *text, const char *expected) {
    parsed *p = parse(text);
    if (p->diag.errors) fail_msg("unexpected diagnostics:\n%s", diags(p));
    assert_non_null(p->m);
    assert_string_equal(tlc_sb_cstr(&p->dump), expected);
    done(p);
}

/* Parses `x = <expr>` and returns the printed expression. */
static void assert_expr(const char *expr, const char *expected) {
    tlc_strbuf src;
    tlc_sb_init(&src);
    tlc_sb_printf(&src, "x = %s\n", expr);
    parsed *p = parse(tlc_sb_cstr(&src));
    if (p->diag.errors) fail_msg("diagnostics for %s:\n%s", expr, diags(p));
    assert_int_equal(p->m->nglobals, 1);
    tlc_strbuf out;
    tlc_sb_init(&out);
    ast_print_expr(&out, p->m->globals[0]->u.assign.value);
    if (strcmp(tlc_sb_cstr(&out), expected) != 0)
        fail_msg("%s printed as '%s', expected '%s'", expr, tlc_sb_cstr(&out), expected);
    tlc_sb_free(&out);
    tlc_sb_free(&src);
    done(p);
}

/* Parses text that must fail; every needle must appear in the diagnostics. */
static void assert_errors(const char *text, int nerrors, const char *const *needles) {
    parsed *p = parse(text);
    assert_null(p->m);
    if (nerrors >= 0 && p->diag.errors != nerrors)
        fail_msg("expected %d errors, got %d:\n%s", nerrors, p->diag.errors, diags(p));
    for (const char *const *n = needles; *n; n++) assert_contains(diags(p), *n);
    done(p);
}

#define ERRORS(text, n, ...) assert_errors((text), (n), (const char *const[]){ __VA_ARGS__, NULL })

/* ---- the language example ---- */

static const char *const gemm_src =
    "import tilelang.language as T\n"
    "\n"
    "@jit(block_M=128, block_N=128, block_K=64, dtype=float16, accum_dtype=float32, num_stages=3)\n"
    "def matmul(A: Tensor[(M, K), dtype], B: Tensor[(K, N), dtype], C: Tensor[(M, N), dtype]):\n"
    "    with Kernel(ceildiv(N, block_N), ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "        A_shared = alloc_shared((block_M, block_K), dtype)\n"
    "        B_shared = alloc_shared((block_K, block_N), dtype)\n"
    "        C_local = alloc_fragment((block_M, block_N), accum_dtype)\n"
    "        use_swizzle(panel_size=4, order=\"col\")\n"
    "        clear(C_local)\n"
    "        for ko in Pipelined(ceildiv(K, block_K), num_stages=num_stages):\n"
    "            copy(A[by * block_M, ko * block_K], A_shared)\n"
    "            copy(B[ko * block_K, bx * block_N], B_shared)\n"
    "            gemm(A_shared, B_shared, C_local)\n"
    "        for i, j in Parallel(block_M, block_N):\n"
    "            C_local[i, j] = max(C_local[i, j], 0)\n"
    "        copy(C_local, C[by * block_M, bx * block_N])\n";

static void test_gemm_example(void **state) {
    (void)state;
    assert_dump(gemm_src,
        "Module\n"
        "  FuncDef matmul @4:5\n"
        "    Decorator jit(block_M=128, block_N=128, block_K=64, dtype=float16, accum_dtype=float32, num_stages=3) @3:1\n"
        "    Param A: Tensor[(M, K), dtype] @4:12\n"
        "    Param B: Tensor[(K, N), dtype] @4:38\n"
        "    Param C: Tensor[(M, N), dtype] @4:64\n"
        "    With Kernel(ceildiv(N, block_N), ceildiv(M, block_M), threads=128) as (bx, by) @5:5\n"
        "      Assign A_shared = alloc_shared((block_M, block_K), dtype) @6:9\n"
        "      Assign B_shared = alloc_shared((block_K, block_N), dtype) @7:9\n"
        "      Assign C_local = alloc_fragment((block_M, block_N), accum_dtype) @8:9\n"
        "      Expr use_swizzle(panel_size=4, order=\"col\") @9:9\n"
        "      Expr clear(C_local) @10:9\n"
        "      For ko in Pipelined(ceildiv(K, block_K), num_stages=num_stages) @11:9\n"
        "        Expr copy(A[by * block_M, ko * block_K], A_shared) @12:13\n"
        "        Expr copy(B[ko * block_K, bx * block_N], B_shared) @13:13\n"
        "        Expr gemm(A_shared, B_shared, C_local) @14:13\n"
        "      For (i, j) in Parallel(block_M, block_N) @15:9\n"
        "        Assign C_local[i, j] = max(C_local[i, j], 0) @16:13\n"
        "      Expr copy(C_local, C[by * block_M, bx * block_N]) @17:9\n");
}

static void test_gemm_example_structure(void **state) {
    (void)state;
    parsed *p = parse(gemm_src);
    assert_non_null(p->m);
    assert_int_equal(p->m->nfuncs, 1);
    const ast_funcdef *f = p->m->funcs[0];
    assert_int_equal(f->ndecorators, 1);
    const ast_expr *d = f->decorators[0].expr;
    assert_int_equal(d->kind, AE_CALL);
    assert_int_equal(d->u.call.nargs, 0);
    assert_int_equal(d->u.call.nkwargs, 6);
    assert_string_equal(d->u.call.kwargs[5].name, "num_stages");
    assert_int_equal(d->u.call.kwargs[5].value->u.ival, 3);
    assert_int_equal(f->nparams, 3);
    const ast_expr *ann = f->params[0].annotation;
    assert_int_equal(ann->kind, AE_SUBSCRIPT);
    assert_int_equal(ann->u.sub.nindex, 2);
    assert_int_equal(ann->u.sub.index[0]->kind, AE_TUPLE);
    assert_int_equal(f->body.n, 1);
    const ast_stmt *w = f->body.stmts[0];
    assert_int_equal(w->kind, AS_WITH);
    assert_int_equal(w->u.with.target->kind, AE_TUPLE);
    assert_int_equal(w->u.with.target->u.seq.n, 2);
    assert_int_equal(w->u.with.body.n, 8);
    const ast_stmt *loop = w->u.with.body.stmts[6];
    assert_int_equal(loop->kind, AS_FOR);
    assert_int_equal(loop->u.for_.target->kind, AE_TUPLE);
    done(p);
}

/* ---- statements ---- */

static void test_statements(void **state) {
    (void)state;
    assert_dump(
        "from tilelang import language as T, jit\n"
        "import a.b, c as d\n"
        "from . import (x, y,)\n"
        "N = 128\n"
        "eps = 1e-5\n"
        "@T.prim_func\n"
        "@tilelang.jit(out_idx=[-1],)\n"
        "def k(x: float32, n: int32 = 4, m=2,) -> None:\n"
        "    import math\n"
        "    a: int32 = 0\n"
        "    b: float32\n"
        "    a += 1; a -= 2; a *= 3; a /= 4; a //= 5; a %= 6\n"
        "    a &= 7; a |= 8; a ^= 9; a <<= 1; a >>= 2; a **= 2;\n"
        "    c, d = d, c\n"
        "    [e, f] = g\n"
        "    X[i, j] = Y.z\n"
        "    while a < 10:\n"
        "        a = a + 1\n"
        "        if a == 3: continue\n"
        "        break\n"
        "    if a:\n"
        "        pass\n"
        "    elif b:\n"
        "        return\n"
        "    elif c:\n"
        "        return 1, 2\n"
        "    else:\n"
        "        return a\n"
        "    with Kernel(1) as bx:\n"
        "        with scope():\n"
        "            pass\n"
        "    for i in range(0, n, 2): pass\n"
        "    def inner(): return 0\n",
        "Module\n"
        "  Global N = 128 @4:1\n"
        "  Global eps = 1e-05 @5:1\n"
        "  FuncDef k @8:5\n"
        "    Decorator T.prim_func @6:1\n"
        "    Decorator tilelang.jit(out_idx=[-1]) @7:1\n"
        "    Param x: float32 @8:7\n"
        "    Param n: int32 = 4 @8:19\n"
        "    Param m = 2 @8:33\n"
        "    AnnAssign a: int32 = 0 @10:5\n"
        "    AnnAssign b: float32 @11:5\n"
        "    AugAssign a += 1 @12:5\n"
        "    AugAssign a -= 2 @12:13\n"
        "    AugAssign a *= 3 @12:21\n"
        "    AugAssign a /= 4 @12:29\n"
        "    AugAssign a //= 5 @12:37\n"
        "    AugAssign a %= 6 @12:46\n"
        "    AugAssign a &= 7 @13:5\n"
        "    AugAssign a |= 8 @13:13\n"
        "    AugAssign a ^= 9 @13:21\n"
        "    AugAssign a <<= 1 @13:29\n"
        "    AugAssign a >>= 2 @13:38\n"
        "    AugAssign a **= 2 @13:47\n"
        "    Assign (c, d) = (d, c) @14:5\n"
        "    Assign [e, f] = g @15:5\n"
        "    Assign X[i, j] = Y.z @16:5\n"
        "    While a < 10 @17:5\n"
        "      Assign a = a + 1 @18:9\n"
        "      If a == 3 @19:9\n"
        "        Continue @19:20\n"
        "      Break @20:9\n"
        "    If a @21:5\n"
        "      Pass @22:9\n"
        "    Else\n"
        "      If b @23:5\n"
        "        Return @24:9\n"
        "      Else\n"
        "        If c @25:5\n"
        "          Return (1, 2) @26:9\n"
        "        Else\n"
        "          Return a @28:9\n"
        "    With Kernel(1) as bx @29:5\n"
        "      With scope() @30:9\n"
        "        Pass @31:13\n"
        "    For i in range(0, n, 2) @32:5\n"
        "      Pass @32:30\n"
        "    FuncDef inner @33:9\n"
        "      Return 0 @33:18\n");
}

static void test_elif_is_nested_if(void **state) {
    (void)state;
    parsed *p = parse("def f():\n    if a:\n        pass\n    elif b:\n        pass\n");
    assert_non_null(p->m);
    const ast_stmt *s = p->m->funcs[0]->body.stmts[0];
    assert_int_equal(s->kind, AS_IF);
    assert_int_equal(s->u.if_.els.n, 1);
    const ast_stmt *e = s->u.if_.els.stmts[0];
    assert_int_equal(e->kind, AS_IF);
    assert_int_equal(e->u.if_.cond->kind, AE_NAME);
    assert_string_equal(e->u.if_.cond->u.name, "b");
    assert_int_equal(e->u.if_.els.n, 0);
    done(p);
}

static void test_empty_and_import_only_files(void **state) {
    (void)state;
    assert_dump("", "Module\n");
    assert_dump("# nothing\n\nimport tilelang\n", "Module\n");
}

static void test_several_kernels(void **state) {
    (void)state;
    parsed *p = parse("def a():\n    pass\n\n\ndef b():\n    pass\nC = 3\n");
    assert_non_null(p->m);
    assert_int_equal(p->m->nfuncs, 2);
    assert_string_equal(p->m->funcs[1]->name, "b");
    assert_int_equal(p->m->nglobals, 1);
    done(p);
}

/* ---- expressions ---- */

static void test_literals(void **state) {
    (void)state;
    assert_expr("42", "42");
    assert_expr("0x10", "16");
    assert_expr("1_000", "1000");
    assert_expr("1.5", "1.5");
    assert_expr("3.", "3.0");
    assert_expr(".5", "0.5");
    assert_expr("'a' \"b\"", "\"ab\"");
    assert_expr("'tab\\t'", "\"tab\\t\"");
    assert_expr("True", "True");
    assert_expr("False", "False");
    assert_expr("None", "None");
}

static void test_precedence(void **state) {
    (void)state;
    assert_expr("a + b * c", "a + (b * c)");
    assert_expr("(a + b) * c", "(a + b) * c");
    assert_expr("a - b - c", "(a - b) - c");
    assert_expr("a ** b ** c", "a ** (b ** c)");
    assert_expr("-a ** 2", "-(a ** 2)");
    assert_expr("2 ** -1", "2 ** (-1)");
    assert_expr("a // b % c * d / e", "(((a // b) % c) * d) / e");
    assert_expr("a << 1 + 2", "a << (1 + 2)");
    assert_expr("a & b | c ^ d", "(a & b) | (c ^ d)");
    assert_expr("a | b ^ c & d", "a | (b ^ (c & d))");
    assert_expr("~a + -b", "(~a) + (-b)");
    assert_expr("a < b + 1", "a < (b + 1)");
    assert_expr("a < b < c", "(a < b) < c");
    assert_expr("a == b != c >= d <= e > f", "((((a == b) != c) >= d) <= e) > f");
    assert_expr("not a == b", "not (a == b)");
    assert_expr("not a and b or c", "((not a) and b) or c");
    assert_expr("a or b and c", "a or (b and c)");
    assert_expr("a if c else b", "a if c else b");
    assert_expr("a if c else b if d else e", "a if c else (b if d else e)");
    assert_expr("x or y if c else z", "(x or y) if c else z");
    assert_expr("T.exp2(x * scale - m)", "T.exp2((x * scale) - m)");
}

static void test_primaries_and_displays(void **state) {
    (void)state;
    assert_expr("r\"a\\nb\"", "\"a\\\\nb\"");  /* raw: the backslash stays */
    assert_expr("a is None", "a is None");
    assert_expr("lambda b, l: [b, l // 8, 4 * (l % 8)]", "lambda b, l: [b, l // 8, 4 * (l % 8)]");
    assert_expr("lambda: 1 if c else 2", "lambda: 1 if c else 2");
    assert_expr("a is not None", "a is not None");
    assert_expr("a in (1, 2)", "a in (1, 2)");
    assert_expr("not a not in b", "not (a not in b)");
    assert_expr("f\"{x}!\"", "\"{x}!\"");      /* an f-string's text, not formatted */
    assert_expr("T.GemmWarpPolicy.FullCol", "T.GemmWarpPolicy.FullCol");
    assert_expr("f()", "f()");
    assert_expr("f(a, b,)", "f(a, b)");
    assert_expr("f(a, k=1, j=g(2))", "f(a, k=1, j=g(2))");
    assert_expr("A[i]", "A[i]");
    assert_expr("A[i, j]", "A[i, j]");
    assert_expr("A[a:b, :]", "A[a:b, :]");
    assert_expr("A[::2, 1:, :n, 0:n:2]", "A[::2, 1:, :n, 0:n:2]");
    assert_expr("A[(i, j)]", "A[(i, j)]");
    assert_expr("A[i][j].x(1)[2]", "A[i][j].x(1)[2]");
    assert_expr("()", "()");
    assert_expr("(a,)", "(a,)");
    assert_expr("(a, b,)", "(a, b)");
    assert_expr("a, b", "(a, b)");
    assert_expr("a,", "(a,)");
    assert_expr("[]", "[]");
    assert_expr("[a, [b, c],]", "[a, [b, c]]");
    assert_expr("{}", "{}");
    assert_expr("{A_shared: make_swizzled_layout(A_shared), B: 1,}",
                "{A_shared: make_swizzled_layout(A_shared), B: 1}");
    assert_expr("(\n  a +\n  b\n)", "a + b");
    assert_expr("f(a,\n  b)[\n 1]", "f(a, b)[1]");
}

static void test_call_structure(void **state) {
    (void)state;
    parsed *p = parse("x = gemm(A, B, C, transpose_B=True, policy=GemmWarpPolicy.FullCol)\n");
    assert_non_null(p->m);
    const ast_expr *c = p->m->globals[0]->u.assign.value;
    assert_int_equal(c->kind, AE_CALL);
    assert_int_equal(c->u.call.nargs, 3);
    assert_int_equal(c->u.call.nkwargs, 2);
    assert_string_equal(c->u.call.kwargs[0].name, "transpose_B");
    assert_int_equal(c->u.call.kwargs[0].value->kind, AE_BOOL);
    assert_true(c->u.call.kwargs[0].value->u.bval);
    assert_int_equal(c->u.call.kwargs[1].loc.col, 37);
    assert_int_equal(c->u.call.kwargs[1].value->kind, AE_ATTR);
    done(p);
}

static void test_operator_locations(void **state) {
    (void)state;
    parsed *p = parse("x = a + b // 0\n");
    assert_non_null(p->m);
    const ast_expr *e = p->m->globals[0]->u.assign.value;
    assert_int_equal(e->kind, AE_BINARY);
    assert_int_equal(e->u.bin.op, AOP_ADD);
    assert_int_equal(e->loc.col, 7); /* binary nodes point at their operator */
    assert_int_equal(e->u.bin.rhs->u.bin.op, AOP_FLOORDIV);
    assert_int_equal(e->u.bin.rhs->loc.col, 11);
    done(p);
}

/* ---- diagnostics ---- */

static void test_missing_colons(void **state) {
    (void)state;
    ERRORS("def f():\n    for i in range(n)\n        x = 1\n", 1,
           "t.tl:2:22: error: expected ':' after for-loop header");
    ERRORS("def f():\n    if x\n        pass\n", 1, "t.tl:2:9: error: expected ':' after 'if' condition");
    ERRORS("def f():\n    while x y:\n        pass\n", 1,
           "t.tl:2:13: error: expected ':' after 'while' condition");
    ERRORS("def f()\n    pass\n", 1, "t.tl:1:8: error: expected ':' after function signature");
    ERRORS("def f():\n    with K(1) as b\n        pass\n", 1,
           "t.tl:2:19: error: expected ':' after 'with' statement");
}

static void test_indentation_errors(void **state) {
    (void)state;
    ERRORS("def f():\n    x = 1\n        y = 2\n", 1, "t.tl:3:9: error: unexpected indent");
    ERRORS("def f():\nx = 1\n", 1, "t.tl:2:1: error: expected an indented block");
    ERRORS("def f():\n    if x:\n    y = 2\n", 1, "t.tl:3:5: error: expected an indented block");
    ERRORS("def f():\n        x = 1\n    y = 2\n", 1,
           "t.tl:3:5: error: unindent does not match any outer indentation level");
}

static void test_expression_errors(void **state) {
    (void)state;
    ERRORS("x = 1 +\n", 1, "t.tl:1:8: error: expected an expression before end of line");
    ERRORS("x = f(a=1, b)\n", 1, "t.tl:1:12: error: positional argument follows keyword argument");
    ERRORS("x = f(a=1, a=2)\n", 1, "t.tl:1:12: error: keyword argument 'a' repeated",
           "t.tl:1:7: note: first given here");
    ERRORS("x = lambda a=1: a\n", 1, "t.tl:1:13: error: unexpected '='; expected ':'");
    ERRORS("x = a is\n", 1, "t.tl:1:9: error: expected an expression before end of line");
    ERRORS("x = a not b\n", 1, "t.tl:1:11: error: unexpected name 'b'; expected 'in'");
    ERRORS("x = (1, 2\n", 1, "t.tl:2:1: error: unexpected end of file: '(' was never closed",
           "t.tl:1:5: note: unterminated '(' opened here");
    ERRORS("x = a b\n", 1, "t.tl:1:7: error: unexpected name 'b'");
}

static void test_target_errors(void **state) {
    (void)state;
    ERRORS("def f():\n    1 = x\n", 1, "t.tl:2:5: error: cannot assign to literal in assignment");
    ERRORS("def f():\n    g(x) = 1\n", 1, "t.tl:2:5: error: cannot assign to function call in assignment");
    ERRORS("def f():\n    a, b += 1\n", 1,
           "t.tl:2:5: error: only a single target (not a tuple) is allowed in augmented assignment");
    ERRORS("def f():\n    for f(i) in x:\n        pass\n", 1,
           "t.tl:2:9: error: cannot assign to function call in for-loop target");
    ERRORS("def f():\n    with K() as 1:\n        pass\n", 1, "cannot assign to literal");
    ERRORS("def f(a, b, a):\n    pass\n", 1, "t.tl:1:13: error: duplicate parameter 'a'",
           "t.tl:1:7: note: first declared here");
}

/* a = b = v runs as a = v, then b = a */
static void test_chained_assignment(void **state) {
    (void)state;
    assert_dump("BK = BV = 64\ndef f():\n    x = y = z = g(1); w = 2\n",
        "Module\n"
        "  Global BK = 64 @1:1\n"
        "  Global BV = BK @1:6\n"
        "  FuncDef f @2:5\n"
        "    Assign x = g(1) @3:5\n"
        "    Assign y = x @3:9\n"
        "    Assign z = x @3:13\n"
        "    Assign w = 2 @3:23\n");
    ERRORS("def f():\n    x = 1 = y\n", 1, "t.tl:2:9: error: cannot assign to literal in assignment");
}

static void test_top_level_rules(void **state) {
    (void)state;
    ERRORS("print(1)\n", 1, "t.tl:1:1: error: only function definitions, imports and 'NAME = constant' "
                            "assignments are allowed at the top level");
    ERRORS("class A:\n    pass\n", -1, "'class' statements are not supported");
}

static void test_recovery_reports_several_errors(void **state) {
    (void)state;
    const char *src =
        "def f(x):\n"
        "    x = 1 +\n"            /* expected an expression */
        "    y = (2))\n"           /* unmatched ')' */
        "    if x\n"               /* expected ':' */
        "        pass\n"
        "    z = [1, 2)\n"         /* mismatched closer */
        "    w = 3 $ 4\n"          /* invalid character */
        "    ok = 5\n"
        "def g(x) y:\n"            /* a broken header... */
        "    a = 1 +\n"            /* ...whose body is still checked */
        "def h():\n"
        "    return 7\n";
    parsed *p = parse(src);
    assert_null(p->m);
    assert_int_equal(p->diag.errors, 7);
    const char *d = diags(p);
    const char *order[] = { "t.tl:2:12:", "t.tl:3:12:", "t.tl:4:9:", "t.tl:6:14:", "t.tl:7:11:",
                            "t.tl:9:10:", "t.tl:10:12:" };
    const char *at = d;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *hit = strstr(at, order[i]);
        if (!hit) fail_msg("missing or out of order: %s in\n%s", order[i], d);
        at = hit;
    }
    done(p);
}

static void test_too_many_errors_stops(void **state) {
    (void)state;
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    for (int i = 0; i < 200; i++) tlc_sb_puts(&sb, "x = = 1\n");
    parsed *p = parse(tlc_sb_cstr(&sb));
    assert_null(p->m);
    assert_int_equal(p->diag.errors, p->diag.max_errors);
    assert_contains(diags(p), "too many errors, stopping");
    done(p);
    tlc_sb_free(&sb);
}

/* ---- depth ---- */

static char *repeat3(const char *pre, const char *unit, int n, const char *mid, const char *unit2,
                     const char *post) {
    size_t u = strlen(unit), u2 = strlen(unit2);
    size_t len = strlen(pre) + (u + u2) * (size_t)n + strlen(mid) + strlen(post) + 1;
    char *s = malloc(len), *q = s;
    q += sprintf(q, "%s", pre);
    for (int i = 0; i < n; i++) q += sprintf(q, "%s", unit);
    q += sprintf(q, "%s", mid);
    for (int i = 0; i < n; i++) q += sprintf(q, "%s", unit2);
    sprintf(q, "%s", post);
    return s;
}

static void test_deep_nesting_is_a_diagnostic(void **state) {
    (void)state;
    clock_t t0 = clock();
    char *s = repeat3("x = ", "(", 100000, "1", ")", "\n");
    parsed *p = parse(s);
    assert_null(p->m);
    assert_int_equal(p->diag.errors, 1);
    assert_contains(diags(p), "error: expression nested too deeply");
    done(p);
    free(s);

    s = repeat3("x = ", "(", 100000, "", "", "\n"); /* and never closed */
    p = parse(s);
    assert_null(p->m);
    assert_int_equal(p->diag.errors, 1);
    assert_contains(diags(p), "error: expression nested too deeply");
    done(p);
    free(s);

    s = repeat3("x = ", "-", 100000, "y", "", "\n");
    p = parse(s);
    assert_null(p->m);
    assert_contains(diags(p), "nested too deeply");
    done(p);
    free(s);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 10.0);
}

static void test_tree_depth_limit(void **state) {
    (void)state;
    /* nested lists just under and over the limit */
    char *s = repeat3("x = ", "[", TLC_AST_MAX_DEPTH - 10, "1", "]", "\n");
    parsed *p = parse(s);
    if (!p->m) fail_msg("%s", diags(p));
    done(p);
    free(s);
    s = repeat3("x = ", "[", TLC_AST_MAX_DEPTH + 10, "1", "]", "\n");
    p = parse(s);
    assert_null(p->m);
    assert_contains(diags(p), "t.tl:1:");
    assert_contains(diags(p), "error: expression nested too deeply (limit");
    done(p);
    free(s);
    /* a long left-nested chain has a shallow parser stack but a deep tree */
    s = repeat3("x = a", "+a", 100000, "", "", "\n");
    p = parse(s);
    assert_null(p->m);
    assert_int_equal(p->diag.errors, 1);
    assert_contains(diags(p), "expression nested too deeply");
    done(p);
    free(s);
}

static void test_huge_flat_line(void **state) {
    (void)state;
    /* ~10 MB on one line: a flat list parses fine and fast */
    char *s = repeat3("x = [", "1234567, ", 1100000, "0", "", "]\n");
    parsed *p = parse(s);
    if (!p->m) fail_msg("%s", diags(p));
    assert_int_equal(p->m->globals[0]->u.assign.value->u.seq.n, 1100001);
    done(p);
    free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_example),
        cmocka_unit_test(test_gemm_example_structure),
        cmocka_unit_test(test_statements),
        cmocka_unit_test(test_elif_is_nested_if),
        cmocka_unit_test(test_empty_and_import_only_files),
        cmocka_unit_test(test_several_kernels),
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_primaries_and_displays),
        cmocka_unit_test(test_call_structure),
        cmocka_unit_test(test_operator_locations),
        cmocka_unit_test(test_missing_colons),
        cmocka_unit_test(test_indentation_errors),
        cmocka_unit_test(test_expression_errors),
        cmocka_unit_test(test_target_errors),
        cmocka_unit_test(test_chained_assignment),
        cmocka_unit_test(test_top_level_rules),
        cmocka_unit_test(test_recovery_reports_several_errors),
        cmocka_unit_test(test_too_many_errors_stops),
        cmocka_unit_test(test_deep_nesting_is_a_diagnostic),
        cmocka_unit_test(test_tree_depth_limit),
        cmocka_unit_test(test_huge_flat_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
