/* fuzz_source.h: the source-driven fuzz targets' options and checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_source.h"
#include "target/target.h"

/* Copies the word at p (up to whitespace or end) into out; returns its end. */
static const char *word(const char *p, const char *end, char *out, size_t cap) {
    size_t n = 0;
    while (p < end && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
        if (n + 1 < cap) out[n++] = *p;
        p++;
    }
    out[n] = '\0';
    return p;
}

static void add_define(fuzz_options *o, const char *text) {
    if (o->ndefines == FUZZ_MAX_DEFINES) return;
    char *slot = o->define_text[o->ndefines];
    snprintf(slot, FUZZ_MAX_WORD, "%s", text);
    char *eq = strchr(slot, '=');
    if (!eq || eq == slot) return; /* the CLI refuses it before compiling */
    *eq = '\0';
    o->defines[o->ndefines++] = (tlc_define){slot, eq + 1};
}

/* --dim=NAME=VALUE (a value outside 0 .. 2^20 is ignored) */
static void add_dim(fuzz_options *o, const char *text) {
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || o->ndims == FUZZ_MAX_DIMS || (size_t)(eq - text) >= FUZZ_MAX_WORD) return;
    char *endp;
    long long v = strtoll(eq + 1, &endp, 10);
    if (*endp || endp == eq + 1 || v < 0 || v > (1 << 20)) return;
    memcpy(o->dims[o->ndims].name, text, (size_t)(eq - text));
    o->dims[o->ndims].name[eq - text] = '\0';
    o->dims[o->ndims++].value = v;
}

static void parse_run_line(fuzz_options *o, const char *p, const char *end) {
    char w[FUZZ_MAX_WORD];
    bool define_next = false;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
        if (p >= end) break;
        p = word(p, end, w, sizeof w);
        if (define_next) {
            add_define(o, w);
            define_next = false;
        } else if (strcmp(w, "-D") == 0) {
            define_next = true;
        } else if (strncmp(w, "-D", 2) == 0) {
            add_define(o, w + 2);
        } else if (strncmp(w, "--arch=", 7) == 0 || strncmp(w, "-arch=", 6) == 0) {
            tlc_arch a;
            if (tlc_arch_parse(strchr(w, '=') + 1, &a)) o->arch = a;
        } else if (strncmp(w, "--kernel=", 9) == 0) {
            snprintf(o->kernel_text, sizeof o->kernel_text, "%s", w + 9);
            o->kernel = o->kernel_text;
        } else if (strncmp(w, "--dim=", 6) == 0) {
            add_dim(o, w + 6);
        }
    }
}

void fuzz_parse_options(fuzz_options *o, const char *text, size_t len) {
    memset(o, 0, sizeof *o);
    o->arch = TLC_DEFAULT_ARCH;
    static const char tag[] = "# RUN:";
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol) eol = end;
        if ((size_t)(eol - line) >= sizeof tag - 1 && memcmp(line, tag, sizeof tag - 1) == 0)
            parse_run_line(o, line + sizeof tag - 1, eol);
        line = eol + 1;
    }
}

void fuzz_compile_options(const fuzz_options *o, tlc_compile_options *co) {
    tlc_compile_options_default(co);
    co->arch = o->arch;
    co->defines = o->defines;
    co->ndefines = o->ndefines;
    co->kernel = o->kernel;
}

char *fuzz_source_text(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return NULL;
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

void fuzz_fail(const char *target, const char *what, const char *diagnostics) {
    fprintf(stderr, "%s: %s\n--- diagnostics ---\n%s--- end ---\n", target, what, diagnostics);
    abort();
}

/* Errors the command line (not the source) causes have no location. */
static bool error_about_command_line(const char *msg) {
    return strncmp(msg, "unknown parameter '", 19) == 0 || strncmp(msg, "no kernel", 9) == 0;
}

/* The message of a diagnostic line `NAME[:LINE:COL]: error: MESSAGE`, or
 * NULL for other lines (notes, warnings, the quoted source, carets). */
static const char *error_message(const char *line, const char *name, bool *located) {
    size_t nlen = strlen(name);
    if (strncmp(line, name, nlen) != 0) return NULL;
    const char *p = line + nlen;
    *located = false;
    if (p[0] == ':' && p[1] >= '0' && p[1] <= '9') {
        p++;
        while (*p >= '0' && *p <= '9') p++;
        if (*p++ != ':') return NULL;
        while (*p >= '0' && *p <= '9') p++;
        *located = true;
    }
    return strncmp(p, ": error: ", 9) == 0 ? p + 9 : NULL;
}

void fuzz_check_diagnostics(const char *target, const char *name, const char *out) {
    for (const char *line = out; *line;) {
        bool located;
        const char *msg = error_message(line, name, &located);
        if (msg && strncmp(msg, "internal error", 14) == 0) fuzz_fail(target, "an internal error from source", out);
        if (msg && !located && !error_about_command_line(msg)) fuzz_fail(target, "an error without a location", out);
        const char *eol = strchr(line, '\n');
        if (!eol) break;
        line = eol + 1;
    }
}
