/* libFuzzer target for the front end: any bytes go through the lexer, the
 * parser, the AST printer and sema, with a fresh arena and diagnostics
 * each time. Crashes, hangs, sanitizer reports, silent failures (no module
 * and no diagnostic) and Tile IR from sema that the verifier refuses are
 * bugs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/ast.h"
#include "frontend/sema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_frontend: invariant broken: %s\n", what);
        abort();
    }
}

/* Both token streams: the parser's (the Python tlc skips blanked first)
 * and every line's (the lexer alone on any bytes). */
static void run_tokens(const tlc_source *src, bool filtered) {
    tlc_arena arena;
    tlc_diag diag;
    tlc_arena_init(&arena);
    tlc_diag_init(&diag, src);
    tlc_token *toks = NULL;
    int n = filtered ? tlc_tokenize(src, &arena, &diag, &toks) : tlc_tokenize_lines(src, &arena, &diag, &toks);
    check(n >= 1, "tokenize returns at least ENDMARKER");
    check(strcmp(toks[n - 1].name, "ENDMARKER") == 0, "the last token is ENDMARKER");
    tlc_diag_free(&diag);
    tlc_arena_free(&arena);
}

static void run_parse(const tlc_source *src) {
    tlc_arena arena;
    tlc_diag diag;
    tlc_arena_init(&arena);
    tlc_diag_init(&diag, src);
    ast_module *m = tlc_parse(src, &arena, &diag);
    check(m != NULL || diag.errors > 0, "a failed parse reports an error");
    check(m == NULL || diag.errors == 0, "a parse with errors returns NULL");
    if (m) {
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        ast_print_module(&sb, m);
        tlc_sb_free(&sb);
        tlc_sema_options opt = { .arch = TLC_SM90A };
        tir_module *tir = tlc_sema(m, &opt, &arena, &diag);
        check(tir != NULL || diag.errors > 0, "sema fails without an error");
        /* what sema accepts is well formed: the verifier's complaints are
         * internal errors, for compiler bugs only */
        if (tir && diag.errors == 0 && !tir_verify_module(tir, &diag)) {
            fprintf(stderr, "%s", tlc_sb_cstr(&diag.out));
            check(0, "sema accepted what the Tile IR verifier refuses");
        }
    }
    tlc_diag_free(&diag);
    tlc_arena_free(&arena);
}

static void run_frontend(const char *text, size_t len) {
    tlc_source src = { "fuzz.tl", text, len };
    run_tokens(&src, true);
    run_tokens(&src, false);
    run_parse(&src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* sources are NUL-terminated (and may hold NULs before the end) */
    char *text = malloc(size + 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    run_frontend(text, size);
    free(text);
    return 0;
}
