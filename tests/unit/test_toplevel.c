/* The top-level filter (frontend/toplevel.c): which statements of a
 * TileLang file are kept for the parser and which are blanked, with
 * strings, f-strings, comments, brackets and continuations read as Python
 * reads them, and the text's length and line breaks unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "frontend/ast.h"
#include "frontend/toplevel.h"

typedef struct filtered {
    tlc_source src;
    tlc_arena arena;
    tlc_diag diag;
    tlc_toplevel top;
    char sig[512];
} filtered;

/* One character per line of the input: 'K' kept as it is, '-' blanked,
 * 'P' partly blanked, ' ' a line with nothing in the input. */
static void signature(filtered *f) {
    const char *in = f->src.text, *out = f->top.text;
    size_t n = f->src.len, b = 0;
    int k = 0;
    while (b < n && k < (int)sizeof f->sig - 1) {
        size_t e = b;
        while (e < n && in[e] != '\n') e++;
        bool blank_in = true, blank_out = true, same = true;
        for (size_t i = b; i < e; i++) {
            if (in[i] != ' ' && in[i] != '\t' && in[i] != '\r') blank_in = false;
            if (out[i] != ' ' && out[i] != '\t' && out[i] != '\r') blank_out = false;
            if (in[i] != out[i]) same = false;
        }
        f->sig[k++] = blank_in ? ' ' : same ? 'K' : blank_out ? '-' : 'P';
        b = e + 1;
    }
    f->sig[k] = '\0';
}

static filtered *filter_n(const char *text, size_t len) {
    filtered *f = calloc(1, sizeof *f);
    f->src = (tlc_source){ "t.py", text, len };
    tlc_arena_init(&f->arena);
    tlc_diag_init(&f->diag, &f->src);
    f->diag.show_source = false;
    tlc_toplevel_filter(&f->src, &f->arena, &f->diag, &f->top);
    for (size_t i = 0; i < len; i++)
        if ((text[i] == '\n') != (f->top.text[i] == '\n')) fail_msg("line break %zu moved", i);
    signature(f);
    return f;
}

static filtered *filter(const char *text) { return filter_n(text, strlen(text)); }

static void done(filtered *f) {
    tlc_diag_free(&f->diag);
    tlc_arena_free(&f->arena);
    free(f);
}

static void expect(const char *text, const char *sig) {
    filtered *f = filter(text);
    if (strcmp(f->sig, sig) != 0) fail_msg("signature %s, expected %s for:\n%s", f->sig, sig, text);
    if (f->diag.errors) fail_msg("unexpected diagnostics:\n%s", tlc_sb_cstr(&f->diag.out));
    done(f);
}

#define KERNEL "@tilelang.jit\ndef k(A):\n    with T.Kernel(1):\n        pass\n"

static void test_no_kernel_decorator_reads_everything(void **state) {
    (void)state;
    expect("print(1)\nclass A:\n    pass\ndef f(x):\n    return x\n", "KKKKK");
}

static void test_statements_kept_and_skipped(void **state) {
    (void)state;
    expect("import torch\n"
           "from a.b import (c,\n    d)\n"
           "import os; print(1)\n"
           "X = 64\n"
           "Y = torch.zeros(4, device=\"cuda\")\n"
           "Z = [i for i in range(3)]\n"
           "W = a @ b\n"
           "V = f(*args)\n"
           "U = {1: 2}\n"
           "S = {1, 2}\n"
           "R = {k: 1 for k in x}\n"
           "A = B = 1\n"
           "C = D[0] = 1\n"
           "n: int = 4\n"
           "n += 1\n"
           "print(n)\n"
           "if __name__ == \"__main__\":\n    main()\n"
           KERNEL,
           "KKK-KK---K--K------KKKK");
}

static void test_functions(void **state) {
    (void)state;
    /* undecorated: kept with a Kernel block or a nested kernel decorator */
    expect("def ref(a, b):\n    return a @ b\n"
           "def plain(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        pass\n"
           "def factory(N):\n    @T.prim_func\n    def main(A: T.Tensor((N,), \"float32\")):\n        pass\n    return main\n"
           "async def go():\n    await x\n"
           "@torch.no_grad()\ndef inference(x):\n    return x\n"
           "@cuda.jit\ndef numba_kernel(x):\n    pass\n"
           "@autotune(configs=[{\"a\": i} for i in range(2)])\n@tilelang.jit(out_idx=[-1])\ndef tuned(A):\n    pass\n"
           "@T.macro\ndef helper(x):\n    pass\n",
           "--KKKKKKKK---------KKKKKK");
    /* a function that defines a kernel and runs it, without returning it */
    expect("def test_k():\n    @T.prim_func\n    def k(A):\n        return A\n    run(k)\n" KERNEL, "-----KKKK");
}

static void test_skipped_def_names(void **state) {
    (void)state;
    filtered *f = filter("def ref(a):\n    return a\n\n@torch.compile\ndef   compiled():\n    pass\n" KERNEL);
    assert_int_equal(f->top.ndefs, 2);
    assert_string_equal(f->top.defs[0].name, "ref");
    assert_int_equal(f->top.defs[0].loc.line, 1);
    assert_int_equal(f->top.defs[0].loc.col, 5);
    assert_string_equal(f->top.defs[1].name, "compiled");
    assert_int_equal(f->top.defs[1].loc.line, 5);
    assert_int_equal(f->top.defs[1].loc.col, 7);
    done(f);
}

static void test_strings(void **state) {
    (void)state;
    /* what looks like code inside strings is not a statement */
    expect("\"\"\"doc\n@tilelang.jit\ndef fake():\n\"\"\"\n" KERNEL, "----KKKK");
    expect("s = '''a\n\"\"\"\n@T.prim_func\n'''\n" KERNEL, "KKKKKKKK"); /* a string constant */
    expect("s = \"a \\\" b\" '\\''\n" KERNEL, "KKKKK");
    expect("r = r\"C:\\dir\\\"x\"\nb = rb'\\x00' + Rb\"\"\n" KERNEL, "--KKKK");
    /* a comment holding a quote */
    expect("x = 1  # it's\n" KERNEL, "KKKKK");
    /* a single-quoted string ends at its line: the next line is a statement
     * (this one is kept, and the lexer reports the string) */
    expect("s = 'never closed\n" KERNEL, "KKKKK");
    expect("print('never closed\n" KERNEL, "-KKKK");
}

static void test_fstrings(void **state) {
    (void)state;
    expect("a = f\"{x['k']}\"\n" KERNEL, "-KKKK");
    /* Python 3.12: the same quote inside the replacement field */
    expect("a = f\"{x[\"k\"]}\"\n" KERNEL, "-KKKK");
    expect("a = f\"{v:>{w}} {{}} {'}'}\"\n" KERNEL, "-KKKK");
    expect("a = f'''{\n1 +\n2}\n@tilelang.jit\n'''\n" KERNEL, "-----KKKK");
    expect("a = F\"{f'{1}'}\"\n" KERNEL, "-KKKK");
}

static void test_brackets_and_continuations(void **state) {
    (void)state;
    expect("data = [\n1,\n2,\n]\n" KERNEL, "KKKKKKKK");
    expect("data = foo(\n1,\n2)\nprint(data,\n'x')\n" KERNEL, "KKK--KKKK");
    expect("total = 1 + \\\n2\nother = a + \\\nb @ c\n" KERNEL, "KK--KKKK");
    expect("def f():\n    x = (1,\n2)\n    return x\n" KERNEL, "----KKKK");
}

static void test_line_endings_and_bytes(void **state) {
    (void)state;
    expect("print(1)\r\n@tilelang.jit\r\ndef k(A):\r\n    with T.Kernel(1):\r\n        pass\r\n", "-KKKK");
    /* non-ASCII, tabs and NUL in skipped code */
    static const char nul[] = "s = '\xcf\x80'\nπ = 3\nprint('\0')\nif x:\n\ty = 1\n" KERNEL;
    filtered *f = filter_n(nul, sizeof nul - 1);
    assert_string_equal(f->sig, "K----KKKK");
    assert_int_equal(f->diag.errors, 0);
    done(f);
}

static void test_indented_start_is_kept(void **state) {
    (void)state;
    expect("    x = 1\nprint(2)\n" KERNEL, "K-KKKK");
}

static void test_unterminated_in_skipped_code(void **state) {
    (void)state;
    filtered *f = filter(KERNEL "def f():\n    x = (1,\n    2\n");
    assert_int_equal(f->diag.errors, 1);
    if (!strstr(tlc_sb_cstr(&f->diag.out), "t.py:6:9: error: '(' was never closed (in Python code tlc skips)"))
        fail_msg("got:\n%s", tlc_sb_cstr(&f->diag.out));
    done(f);
    f = filter(KERNEL "x = f'''{1}\n");
    assert_int_equal(f->diag.errors, 1);
    if (!strstr(tlc_sb_cstr(&f->diag.out), "t.py:5:5: error: unterminated triple-quoted string literal"))
        fail_msg("got:\n%s", tlc_sb_cstr(&f->diag.out));
    done(f);
}

static void test_empty_and_garbage(void **state) {
    (void)state;
    expect("", "");
    expect("@tilelang.jit\n", "-"); /* decorates nothing */
    expect("@tilelang.jit", "-");
    expect("@\n@@\n" KERNEL, "--KKKK");
    /* deep f-string nesting and many brackets stay bounded */
    char *deep = malloc(200000);
    size_t n = 0;
    n += (size_t)sprintf(deep + n, KERNEL);
    for (int i = 0; i < 30000; i++) n += (size_t)sprintf(deep + n, "f\"{");
    for (int i = 0; i < 10000; i++) deep[n++] = '(';
    deep[n] = '\0';
    filtered *f = filter_n(deep, n);
    assert_true(f->diag.errors <= 1);
    done(f);
    free(deep);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_kernel_decorator_reads_everything),
        cmocka_unit_test(test_statements_kept_and_skipped),
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_skipped_def_names),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_fstrings),
        cmocka_unit_test(test_brackets_and_continuations),
        cmocka_unit_test(test_line_endings_and_bytes),
        cmocka_unit_test(test_indented_start_is_kept),
        cmocka_unit_test(test_unterminated_in_skipped_code),
        cmocka_unit_test(test_empty_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
