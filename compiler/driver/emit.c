/* The --emit kinds of the tlc CLI. Adding a stage dump is one row in
 * `kinds` (and, for a new pipeline stage, a value in tlc_stage). Rows
 * without a printer are planned: tlc says they are not implemented yet. */
#include "cli.h"
#include <string.h>
#include "api/compile_backend.h"

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

static bool emit_tokens(tlc_strbuf *out, tlc_compilation *c) {
    for (int i = 0; i < c->ntokens; i++) {
        const tlc_token *t = &c->tokens[i];
        tlc_sb_printf(out, "%d:%d %s", t->loc.line, t->loc.col, t->name ? t->name : "?");
        if (t->text && t->text[0]) {
            tlc_sb_putc(out, ' ');
            put_quoted(out, t->text);
        }
        tlc_sb_putc(out, '\n');
    }
    return true;
}

static bool emit_ast(tlc_strbuf *out, tlc_compilation *c) {
    ast_print_module(out, c->ast);
    return true;
}

static bool emit_tir(tlc_strbuf *out, tlc_compilation *c) {
    tir_print_module(out, c->tir);
    return true;
}

/* One line per kernel: what a user wants to know before launching it. */
static bool emit_summary(tlc_strbuf *out, tlc_compilation *c) {
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
    return true;
}

/* Stages past Tile IR run in the back half of the pipeline
 * (api/compile_backend.h); each appends its own dump. */
static bool emit_layout(tlc_strbuf *out, tlc_compilation *c) { return tlc_compile_layouts(c, out); }

static bool emit_plan(tlc_strbuf *out, tlc_compilation *c) { return tlc_compile_plan(c, out); }

static bool emit_thread(tlc_strbuf *out, tlc_compilation *c) { return tlc_compile_thread(c, out) != NULL; }

/* The launch metadata block as it travels in the PTX (include/tlc/metadata.h). */
static bool emit_metadata(tlc_strbuf *out, tlc_compilation *c) {
    th_module *m = tlc_compile_thread(c, NULL);
    if (!m) return false;
    for (const char *p = m->metadata; p && *p;) {
        size_t n = strcspn(p, "\n");
        tlc_sb_puts(out, "// ");
        tlc_sb_putn(out, p, n);
        tlc_sb_putc(out, '\n');
        p += n + (p[n] ? 1 : 0);
    }
    return true;
}

static bool emit_llvm(tlc_strbuf *out, tlc_compilation *c) {
    char *text = tlc_compile_llvm(c, false);
    if (text) tlc_sb_puts(out, text);
    return text != NULL;
}

static bool emit_ptx(tlc_strbuf *out, tlc_compilation *c) {
    char *text = tlc_compile_ptx(c, false);
    if (text) tlc_sb_puts(out, text);
    return text != NULL;
}

static bool emit_cubin(tlc_strbuf *out, tlc_compilation *c) {
    size_t size = 0;
    unsigned char *bytes = tlc_compile_cubin(c, false, &size);
    if (bytes) tlc_sb_putn(out, (const char *)bytes, size);
    return bytes != NULL;
}

static const tlc_emit_kind kinds[] = {
    {"tokens", TLC_STAGE_TOKENS, emit_tokens, "the token stream (INDENT/DEDENT/NEWLINE included)", false},
    {"ast", TLC_STAGE_AST, emit_ast, "the syntax tree", false},
    {"tir", TLC_STAGE_TIR, emit_tir, "the checked Tile IR (default)", false},
    {"summary", TLC_STAGE_TIR, emit_summary, "one line per kernel: grid, threads, shared memory, params", false},
    {"layout", TLC_STAGE_TIR, emit_layout, "every buffer's inferred layout: fragments (thread/slot digits) and shared layouts", false},
    {"plan", TLC_STAGE_TIR, emit_plan, "the plan: pipelines, gemm instructions, warp specialization, shared memory", false},
    {"thread", TLC_STAGE_TIR, emit_thread, "Thread IR (per-thread code after lowering)", false},
    {"metadata", TLC_STAGE_TIR, emit_metadata, "the launch metadata: kernels, functions of several kernels", false},
    {"llvm", TLC_STAGE_TIR, emit_llvm, "LLVM IR (NVPTX)", false},
    {"ptx", TLC_STAGE_TIR, emit_ptx, "PTX with the launch metadata", false},
    {"cubin", TLC_STAGE_TIR, emit_cubin, "cubin (needs ptxas; binary: use -o FILE)", true},
    /* Rows with a NULL printer are planned kinds: tlc answers "--emit=X is
     * not implemented yet" (exit 1). */
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
