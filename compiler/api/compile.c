/* The compile pipeline: source -> tokens | AST -> Tile IR (checked). Each
 * stage runs only when the caller asked for it or for a later one; the
 * compilation owns every node (arena) and every message (diag). */
#include "compile.h"
#include <string.h>
#include "../ir/thread_ir.h"

void tlc_compile_options_default(tlc_compile_options *o) {
    memset(o, 0, sizeof *o);
    o->arch = TLC_DEFAULT_ARCH;
    o->stop_after = TLC_STAGE_TIR;
    o->opt_level = 3;
    o->backend = TLC_DEFAULT_BACKEND;
}

/* A stage that failed without saying why is a compiler bug; make it visible
 * instead of exiting 1 with no message. */
static bool fail_quietly_guard(tlc_compilation *c, const char *stage) {
    if (c->diag.errors == 0)
        tlc_error(&c->diag, (tlc_loc){0, 0}, "internal error: %s failed without a diagnostic", stage);
    return false;
}

/* Lexer, parser, sema and the Tile IR verifier, as far as stop_after asks. */
static bool front_end(tlc_compilation *c, const tlc_compile_options *opt) {
    if (opt->stop_after == TLC_STAGE_TOKENS) {
        c->ntokens = tlc_tokenize(&c->src, &c->arena, &c->diag, &c->tokens);
        if (c->ntokens < 0) return fail_quietly_guard(c, "the lexer");
        return c->diag.errors == 0;
    }

    c->ast = tlc_parse(&c->src, &c->arena, &c->diag);
    if (!c->ast) return fail_quietly_guard(c, "the parser");
    if (c->diag.errors) return false;
    if (opt->stop_after == TLC_STAGE_AST) return true;

    tlc_sema_options so = {
        .arch = opt->arch,
        .defines = opt->defines,
        .ndefines = opt->ndefines,
        .kernel = opt->kernel,
        .num_sms = opt->num_sms,
    };
    c->tir = tlc_sema(c->ast, &so, &c->arena, &c->diag);
    if (!c->tir) return fail_quietly_guard(c, "semantic analysis");
    if (c->diag.errors) return false;
    if (!tir_verify_module(c->tir, &c->diag)) return fail_quietly_guard(c, "the Tile IR verifier");
    return true;
}

bool tlc_compile_source(tlc_compilation *c, const char *name, const char *text, size_t len,
                        const tlc_compile_options *opt) {
    double start = tlc_clock_ms();
    memset(c, 0, sizeof *c);
    tlc_arena_init(&c->arena);
    /* The text may hold NUL bytes (the lexer reports them); keep len and add
     * a terminator so scanners may also stop at the end. */
    char *copy = tlc_arena_alloc(&c->arena, len + 1);
    if (len) memcpy(copy, text, len);
    copy[len] = '\0';
    c->src.name = tlc_arena_strdup(&c->arena, name ? name : "<input>");
    c->src.text = copy;
    c->src.len = len;
    tlc_diag_init(&c->diag, &c->src);

    tlc_compile_options defaults;
    if (!opt) {
        tlc_compile_options_default(&defaults);
        opt = &defaults;
    }
    c->opt_level = opt->opt_level;
    c->backend = opt->backend;
    bool ok = front_end(c, opt);
    tlc_stage_times_add(&c->times, TLC_TIMED_FRONT_END, start);
    return ok;
}

void tlc_compilation_free(tlc_compilation *c) {
    tlc_diag_free(&c->diag);
    tlc_arena_free(&c->arena);
    memset(c, 0, sizeof *c);
}
