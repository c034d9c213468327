/* The --emit kinds of the tlc CLI. Adding a stage dump is one row in
 * `kinds` (and, for a new pipeline stage, a value in tlc_stage). Rows
 * without a printer are planned: tlc says they are not implemented yet. */
#include "cli.h"
#include <string.h>

/* Lexemes may hold anything (NUL, control bytes, a 10 MB line clipped by
 * the lexer): print them as a quoted, escaped, single-line string. */
static void put_quoted(tlc_strbuf *out, const char *s) {
    tlc_sb_putc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '\n': tlc_sb_puts(out, "\\n"); break;
        case '\t': tlc_sb_puts(out, "\\t"); break;
        case '\r': tlc_sb_puts(out, "\\r"); break;
        case '\\': tlc_sb_puts(out, "\\\\"); break;
        case '"': tlc_sb_puts(out, "\\\""); break;
        default:
            if (*p < 32 || *p >= 127) tlc_sb_printf(out, "\\x%02x", *p);
            else tlc_sb_putc(out, (char)*p);
        }
    }
    tlc_sb_putc(out, '"');
}

static void emit_tokens(tlc_strbuf *out, const tlc_compilation *c) {
    for (int i = 0; i < c->ntokens; i++) {
        const tlc_token *t = &c->tokens[i];
        tlc_sb_printf(out, "%d:%d %s", t->loc.line, t->loc.col, t->name ? t->name : "?");
        if (t->text && t->text[0]) {
            tlc_sb_putc(out, ' ');
            put_quoted(out, t->text);
        }
        tlc_sb_putc(out, '\n');
    }
}

static void emit_ast(tlc_strbuf *out, const tlc_compilation *c) { ast_print_module(out, c->ast); }

static void emit_tir(tlc_strbuf *out, const tlc_compilation *c) { tir_print_module(out, c->tir); }

/* One line per kernel: what a user wants to know before launching it. */
static void emit_summary(tlc_strbuf *out, const tlc_compilation *c) {
    const tir_module *m = c->tir;
    for (int i = 0; i < m->nkernels; i++) {
        const tir_kernel *k = m->kernels[i];
        tlc_sb_printf(out, "%s: %s: grid (", c->src.name, k->name);
        for (int d = 0; d < k->grid_rank; d++) {
            if (d) tlc_sb_puts(out, ", ");
            tir_print_expr(out, k->grid[d]);
        }
        tlc_sb_printf(out, ") x %d threads, shared %lld B, params ", k->threads,
                      (long long)k->shared_bytes);
        if (k->nparams == 0) tlc_sb_puts(out, "none");
        for (int p = 0; p < k->nparams; p++) {
            const tir_param *prm = &k->params[p];
            if (p) tlc_sb_puts(out, ", ");
            tlc_sb_puts(out, prm->name);
            if (prm->kind == TIR_PARAM_TENSOR && prm->buf) {
                tlc_sb_putc(out, '[');
                for (int d = 0; d < prm->buf->rank; d++) {
                    if (d) tlc_sb_puts(out, ", ");
                    tir_print_expr(out, prm->buf->shape[d]);
                }
                tlc_sb_printf(out, "] %s", tir_dtype_name(prm->buf->dtype));
            } else if (prm->var) {
                tlc_sb_printf(out, " %s", tir_dtype_name(prm->var->dtype));
            }
        }
        tlc_sb_puts(out, ": ok\n");
    }
}

static const tlc_emit_kind kinds[] = {
    {"tokens", TLC_STAGE_TOKENS, emit_tokens, "the token stream (INDENT/DEDENT/NEWLINE included)"},
    {"ast", TLC_STAGE_AST, emit_ast, "the syntax tree"},
    {"tir", TLC_STAGE_TIR, emit_tir, "the checked Tile IR (default)"},
    {"summary", TLC_STAGE_TIR, emit_summary, "one line per kernel: grid, threads, shared memory, params"},
    /* planned stages (later issues) */
    {"layout", TLC_STAGE_TIR, NULL, "Tile IR with inferred layouts (not implemented yet)"},
    {"thread", TLC_STAGE_TIR, NULL, "Thread IR (not implemented yet)"},
    {"llvm", TLC_STAGE_TIR, NULL, "LLVM IR (not implemented yet)"},
    {"ptx", TLC_STAGE_TIR, NULL, "PTX (not implemented yet)"},
    {"cubin", TLC_STAGE_TIR, NULL, "cubin (not implemented yet)"},
};

const tlc_emit_kind *tlc_emit_find(const char *name) {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
    return NULL;
}

void tlc_emit_help(tlc_strbuf *out) {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        tlc_sb_printf(out, "                        %-8s %s\n", kinds[i].name, kinds[i].help);
}

void tlc_emit_list(tlc_strbuf *out) {
    bool first = true;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!kinds[i].print) continue;
        tlc_sb_printf(out, "%s%s", first ? "" : ", ", kinds[i].name);
        first = false;
    }
}
