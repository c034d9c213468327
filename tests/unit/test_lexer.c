/* Lexer tests: tokens, logical lines (INDENT / DEDENT / NEWLINE, implicit
 * joining), literals, diagnostics, and hostile inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "frontend/ast.h"

typedef struct lexed {
    tlc_source src;
    tlc_arena arena;
    tlc_diag diag;
    tlc_token *toks;
    int n;
    tlc_strbuf kinds; /* "NAME '=' INT NEWLINE ENDMARKER" */
} lexed;

static lexed *lex_n(const char *text, size_t len) {
    lexed *l = calloc(1, sizeof *l);
    l->src = (tlc_source){ "t.tl", text, len };
    tlc_arena_init(&l->arena);
    tlc_diag_init(&l->diag, &l->src);
    l->n = tlc_tokenize_lines(&l->src, &l->arena, &l->diag, &l->toks);
    tlc_sb_init(&l->kinds);
    for (int i = 0; i < l->n; i++) {
        if (i) tlc_sb_putc(&l->kinds, ' ');
        tlc_sb_puts(&l->kinds, l->toks[i].name);
    }
    return l;
}

static lexed *lex(const char *text) { return lex_n(text, strlen(text)); }

static void done(lexed *l) {
    tlc_sb_free(&l->kinds);
    tlc_diag_free(&l->diag);
    tlc_arena_free(&l->arena);
    free(l);
}

static const char *kinds(lexed *l) { return tlc_sb_cstr(&l->kinds); }
static const char *diags(lexed *l) { return tlc_sb_cstr(&l->diag.out); }

static void assert_kinds(const char *text, const char *expected) {
    lexed *l = lex(text);
    assert_string_equal(kinds(l), expected);
    assert_int_equal(l->diag.errors, 0);
    done(l);
}

static void assert_contains(const char *hay, const char *needle) {
    if (!strstr(hay, needle)) fail_msg("expected to find \"%s\" in:\n%s", needle, hay);
}

/* ---- basics ---- */

static void test_empty_file(void **state) {
    (void)state;
    assert_kinds("", "ENDMARKER");
    assert_kinds("\n\n   \n# only a comment\n", "ENDMARKER");
    lexed *l = lex_n(NULL, 0);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->diag.errors, 0);
    done(l);
}

static void test_simple_line_with_locations(void **state) {
    (void)state;
    lexed *l = lex("x = foo(1, 2.5)  # c\n");
    assert_string_equal(kinds(l), "NAME '=' NAME '(' INT ',' FLOAT ')' NEWLINE ENDMARKER");
    assert_int_equal(l->toks[0].loc.line, 1);
    assert_int_equal(l->toks[0].loc.col, 1);
    assert_string_equal(l->toks[2].text, "foo");
    assert_int_equal(l->toks[2].loc.col, 5);
    assert_string_equal(l->toks[6].text, "2.5");
    assert_int_equal(l->toks[6].loc.col, 12);
    assert_int_equal(l->toks[8].loc.line, 1); /* NEWLINE */
    done(l);
}

static void test_no_trailing_newline(void **state) {
    (void)state;
    assert_kinds("x", "NAME NEWLINE ENDMARKER");
    assert_kinds("def f():\n    x", "'def' NAME '(' ')' ':' NEWLINE INDENT NAME NEWLINE DEDENT ENDMARKER");
}

static void test_crlf(void **state) {
    (void)state;
    assert_kinds("if a:\r\n    b\r\n", "'if' NAME ':' NEWLINE INDENT NAME NEWLINE DEDENT ENDMARKER");
}

/* ---- indentation ---- */

static void test_indent_dedent(void **state) {
    (void)state;
    assert_kinds("def f():\n"
                 "    if a:\n"
                 "        b\n"
                 "\n"
                 "      # a comment at an odd indentation is ignored\n"
                 "    c\n"
                 "d\n",
                 "'def' NAME '(' ')' ':' NEWLINE INDENT 'if' NAME ':' NEWLINE INDENT NAME NEWLINE "
                 "DEDENT NAME NEWLINE DEDENT NAME NEWLINE ENDMARKER");
}

static void test_multiple_dedents_at_once_and_at_eof(void **state) {
    (void)state;
    assert_kinds("a:\n b:\n  c:\n   d\ne\n",
                 "NAME ':' NEWLINE INDENT NAME ':' NEWLINE INDENT NAME ':' NEWLINE INDENT NAME "
                 "NEWLINE DEDENT DEDENT DEDENT NAME NEWLINE ENDMARKER");
    assert_kinds("a:\n b:\n  c\n", "NAME ':' NEWLINE INDENT NAME ':' NEWLINE INDENT NAME NEWLINE "
                                   "DEDENT DEDENT ENDMARKER");
}

static void test_tabs(void **state) {
    (void)state;
    assert_kinds("if a:\n\tb\n\tc\n", "'if' NAME ':' NEWLINE INDENT NAME NEWLINE NAME NEWLINE "
                                      "DEDENT ENDMARKER");
    lexed *l = lex("if a:\n\tb\n        c\n"); /* a tab and 8 spaces: same width, not consistent */
    assert_true(l->diag.errors > 0);
    assert_contains(diags(l), "t.tl:3:1: error: inconsistent use of tabs and spaces in indentation");
    done(l);
}

static void test_inconsistent_dedent(void **state) {
    (void)state;
    lexed *l = lex("if a:\n    b\n  c\nd\n");
    assert_int_equal(l->diag.errors, 1);
    assert_contains(diags(l), "t.tl:3:3: error: unindent does not match any outer indentation level");
    assert_string_equal(kinds(l), "'if' NAME ':' NEWLINE INDENT NAME NEWLINE DEDENT NAME NEWLINE "
                                  "NAME NEWLINE ENDMARKER");
    done(l);
}

static void test_unexpected_indent_is_reported_once(void **state) {
    (void)state;
    lexed *l = lex("a\n    b\n    c\nd\n");
    assert_int_equal(l->diag.errors, 1);
    assert_contains(diags(l), "t.tl:2:5: error: unexpected indent");
    /* no INDENT/DEDENT for the bogus level: the parser sees plain lines */
    assert_string_equal(kinds(l), "NAME NEWLINE NAME NEWLINE NAME NEWLINE NAME NEWLINE ENDMARKER");
    done(l);
}

static void test_too_many_indentation_levels(void **state) {
    (void)state;
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    for (int i = 0; i < 150; i++) {
        for (int j = 0; j < i; j++) tlc_sb_putc(&sb, ' ');
        tlc_sb_puts(&sb, "if x:\n");
    }
    lexed *l = lex(tlc_sb_cstr(&sb));
    assert_int_equal(l->diag.errors, 1);
    assert_contains(diags(l), "too many levels of indentation");
    done(l);
    tlc_sb_free(&sb);
}

/* ---- line joining ---- */

static void test_implicit_joining(void **state) {
    (void)state;
    assert_kinds("f(a,\n        b,\n\n  # c\n)\ng\n",
                 "NAME '(' NAME ',' NAME ',' ')' NEWLINE NAME NEWLINE ENDMARKER");
    assert_kinds("x = [1,\n2]\ny = {a:\n b}\n",
                 "NAME '=' '[' INT ',' INT ']' NEWLINE NAME '=' '{' NAME ':' NAME '}' NEWLINE "
                 "ENDMARKER");
}

static void test_backslash_continuation(void **state) {
    (void)state;
    assert_kinds("x = 1 + \\\n        2\ny\n", "NAME '=' INT '+' INT NEWLINE NAME NEWLINE ENDMARKER");
    lexed *l = lex("x = 1 \\ 2\n");
    assert_contains(diags(l), "t.tl:1:7: error: unexpected character after line continuation");
    done(l);
}

/* ---- literals ---- */

static void test_integers(void **state) {
    (void)state;
    lexed *l = lex("0 42 1_000_000 0x1F 0XfF_fF 0b101 0o17 9223372036854775807 00\n");
    assert_int_equal(l->diag.errors, 0);
    assert_string_equal(kinds(l), "INT INT INT INT INT INT INT INT INT NEWLINE ENDMARKER");
    assert_string_equal(l->toks[2].text, "1_000_000");
    assert_string_equal(l->toks[7].text, "9223372036854775807");
    done(l);

    l = lex("x = 9223372036854775808\ny = 0x1_0000_0000_0000_0000\nz = 007\n");
    assert_int_equal(l->diag.errors, 3);
    assert_contains(diags(l), "t.tl:1:5: error: integer literal '9223372036854775808' does not fit in 64 bits");
    assert_contains(diags(l), "t.tl:2:5: error: integer literal");
    assert_contains(diags(l), "t.tl:3:5: error: leading zeros");
    done(l);
}

static void test_floats(void **state) {
    (void)state;
    lexed *l = lex("1.5 1e-5 .5 3. 1_0.2_5 2E+3 1.e2\n");
    assert_int_equal(l->diag.errors, 0);
    assert_string_equal(kinds(l), "FLOAT FLOAT FLOAT FLOAT FLOAT FLOAT FLOAT NEWLINE ENDMARKER");
    done(l);
    l = lex("x = 1e999\n");
    assert_contains(diags(l), "t.tl:1:5: error: float literal '1e999' is out of range");
    done(l);
    /* a dot between names is an attribute, not a float */
    assert_kinds("T.copy\n", "NAME '.' NAME NEWLINE ENDMARKER");
}

static void test_strings(void **state) {
    (void)state;
    lexed *l = lex("'a' \"b\\n\" 'it\\'s' \"\\x41\\t\" '''x\ny''' \"\"\"q\"\"\" 'é'\n");
    assert_int_equal(l->diag.errors, 0);
    assert_string_equal(kinds(l), "STRING STRING STRING STRING STRING STRING STRING NEWLINE ENDMARKER");
    assert_string_equal(l->toks[4].text, "'''x\ny'''");
    assert_int_equal(l->toks[5].loc.line, 2); /* after the multi-line string */
    done(l);
}

/* String prefixes: r keeps backslashes, f keeps its text as written (a
 * message, never formatted); a name before a quote is still a name. */
static void test_string_prefixes(void **state) {
    (void)state;
    lexed *l = lex("r'a\\d' f\"{x}\" rb'\\x' F'''m\nn''' Rb\"\" buf \"s\"\n");
    assert_int_equal(l->diag.errors, 0);
    assert_string_equal(kinds(l), "STRING STRING STRING STRING STRING NAME STRING NEWLINE ENDMARKER");
    assert_string_equal(l->toks[0].text, "r'a\\d'");
    assert_string_equal(l->toks[1].text, "f\"{x}\"");
    assert_int_equal(l->toks[4].loc.line, 2);
    done(l);
}

static void test_unterminated_strings(void **state) {
    (void)state;
    lexed *l = lex("x = 'abc\ny = 2\n");
    assert_int_equal(l->diag.errors, 1);
    assert_contains(diags(l), "t.tl:1:5: error: unterminated string literal");
    /* lexing goes on: the newline still ends the line */
    assert_string_equal(kinds(l), "NAME '=' STRING NEWLINE NAME '=' INT NEWLINE ENDMARKER");
    done(l);
    l = lex("x = \"\"\"abc\n\n");
    assert_contains(diags(l), "t.tl:1:5: error: unterminated triple-quoted string literal");
    done(l);
    l = lex("x = 'abc\\");
    assert_contains(diags(l), "unterminated string literal");
    done(l);
}

/* ---- keywords and operators ---- */

static void test_keywords(void **state) {
    (void)state;
    assert_kinds("def for in if elif else with as return pass break continue while and or not "
                 "is True False None import from lambda define\n",
                 "'def' 'for' 'in' 'if' 'elif' 'else' 'with' 'as' 'return' 'pass' 'break' "
                 "'continue' 'while' 'and' 'or' 'not' 'is' 'True' 'False' 'None' 'import' 'from' "
                 "'lambda' NAME NEWLINE ENDMARKER");
}

static void test_operators(void **state) {
    (void)state;
    assert_kinds("+= -= *= /= //= %= &= |= ^= <<= >>= **= ** // << >> <= >= == != -> @ ~ ; . : ,\n",
                 "'+=' '-=' '*=' '/=' '//=' '%=' '&=' '|=' '^=' '<<=' '>>=' '**=' '**' '//' '<<' "
                 "'>>' '<=' '>=' '==' '!=' '->' '@' '~' ';' '.' ':' ',' NEWLINE ENDMARKER");
    assert_kinds("a<b>c=d+e-f*g/h%i&j|k^l\n",
                 "NAME '<' NAME '>' NAME '=' NAME '+' NAME '-' NAME '*' NAME '/' NAME '%' NAME '&' "
                 "NAME '|' NAME '^' NAME NEWLINE ENDMARKER");
}

/* ---- bad input ---- */

static void test_invalid_characters_continue(void **state) {
    (void)state;
    lexed *l = lex("x = 1 $ 2 ? y\nz = `q`\n");
    assert_int_equal(l->diag.errors, 4);
    assert_contains(diags(l), "t.tl:1:7: error: invalid character '$'");
    assert_contains(diags(l), "t.tl:1:11: error: invalid character '?'");
    assert_contains(diags(l), "t.tl:2:5: error: invalid character '`'");
    assert_string_equal(kinds(l), "NAME '=' INT INT NAME NEWLINE NAME '=' NAME NEWLINE ENDMARKER");
    done(l);
}

static void test_nul_and_non_ascii(void **state) {
    (void)state;
    static const char text[] = "x = 1\0 + 2\ny = \xc3\xa9\n# caf\xc3\xa9 ok\ns = 'caf\xc3\xa9'\n";
    lexed *l = lex_n(text, sizeof text - 1);
    assert_int_equal(l->diag.errors, 2);
    assert_contains(diags(l), "t.tl:1:6: error: invalid character NUL");
    assert_contains(diags(l), "t.tl:2:5: error: non-ASCII character 0xc3 outside a string or comment");
    done(l);
}

static void test_brackets(void **state) {
    (void)state;
    lexed *l = lex("x = (1, 2))\n");
    assert_int_equal(l->diag.errors, 1);
    assert_contains(diags(l), "t.tl:1:11: error: unmatched ')'");
    done(l);
    l = lex("x = [1, 2)\n");
    assert_contains(diags(l), "t.tl:1:10: error: closing ')' does not match opening '['");
    assert_contains(diags(l), "t.tl:1:5: note: '[' opened here");
    done(l);
    l = lex("x = foo(1,\ny = 2\n");
    assert_int_equal(l->diag.errors, 1);
    assert_contains(diags(l), "t.tl:3:1: error: unexpected end of file: '(' was never closed");
    assert_contains(diags(l), "t.tl:1:8: note: unterminated '(' opened here");
    done(l);
}

/* ---- huge inputs ---- */

static void test_huge_line(void **state) {
    (void)state;
    size_t n = 10u << 20;
    char *text = malloc(n + 8);
    memcpy(text, "x = ", 4);
    memset(text + 4, 'a', n);
    memcpy(text + 4 + n, "\n", 2);
    lexed *l = lex(text);
    assert_int_equal(l->diag.errors, 0);
    assert_string_equal(kinds(l), "NAME '=' NAME NEWLINE ENDMARKER");
    assert_int_equal(strlen(l->toks[2].text), 64); /* clipped copy */
    assert_int_equal(l->toks[3].loc.col, (int)n + 5);
    done(l);
    free(text);
}

static void test_many_nested_brackets(void **state) {
    (void)state;
    int depth = 100000;
    char *text = malloc((size_t)depth + 8);
    memcpy(text, "x = ", 4);
    memset(text + 4, '(', (size_t)depth);
    text[4 + depth] = '\0';
    lexed *l = lex(text);
    assert_int_equal(l->n, depth + 4); /* NAME '=' ( x depth, NEWLINE, ENDMARKER */
    assert_int_equal(l->diag.errors, 1);
    assert_contains(diags(l), "'(' was never closed");
    done(l);
    free(text);
}

static void test_garbage_is_bounded(void **state) {
    (void)state;
    size_t n = 1u << 20;
    unsigned char *text = malloc(n);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        text[i] = (unsigned char)(x >> 24);
    }
    lexed *l = lex_n((const char *)text, n);
    assert_true(l->diag.errors >= 1);
    assert_true(l->n >= 1);
    assert_string_equal(l->toks[l->n - 1].name, "ENDMARKER");
    assert_contains(diags(l), "too many errors");
    done(l);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_simple_line_with_locations),
        cmocka_unit_test(test_no_trailing_newline),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_indent_dedent),
        cmocka_unit_test(test_multiple_dedents_at_once_and_at_eof),
        cmocka_unit_test(test_tabs),
        cmocka_unit_test(test_inconsistent_dedent),
        cmocka_unit_test(test_unexpected_indent_is_reported_once),
        cmocka_unit_test(test_too_many_indentation_levels),
        cmocka_unit_test(test_implicit_joining),
        cmocka_unit_test(test_backslash_continuation),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_string_prefixes),
        cmocka_unit_test(test_unterminated_strings),
        cmocka_unit_test(test_keywords),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_invalid_characters_continue),
        cmocka_unit_test(test_nul_and_non_ascii),
        cmocka_unit_test(test_brackets),
        cmocka_unit_test(test_huge_line),
        cmocka_unit_test(test_many_nested_brackets),
        cmocka_unit_test(test_garbage_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
