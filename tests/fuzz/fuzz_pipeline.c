/* libFuzzer target for the whole compiler: any bytes go through sema, the
 * Tile IR verifier, layout inference, planning, lowering to Thread IR and
 * both PTX generators (LLVM's NVPTX back end, then tlc's own), with the
 * printers of each stage.
 *
 * Command-line options come from the input itself, from lines starting with
 * `# RUN:` (a comment to the language, the golden tests' convention): the
 * words `-D NAME=VALUE` (or `-DNAME=VALUE`), `--arch=sm_XX` (or `-arch=`)
 * and `--kernel=NAME`; other words are ignored. So the golden files are
 * seeds as they are, and mutations vary the -D values too.
 *
 * A bug, reported by abort() after printing the input's diagnostics:
 * - "internal error" in the diagnostics (that is for compiler bugs only),
 * - an error without a file:line:col location, except the two about the
 *   command line itself (an unknown -D name, no such --kernel),
 * - a failed stage without an error, or a successful one with errors,
 * - a crash, a hang or a sanitizer report (libFuzzer's and the sanitizers'
 *   own checks). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compile.h"
#include "api/compile_backend.h"
#include "target/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEFINES 16
#define MAX_WORD 128

typedef struct run_options {
    tlc_define defines[MAX_DEFINES];
    int ndefines;
    char define_text[MAX_DEFINES][MAX_WORD];
    tlc_arch arch;
    const char *kernel;
    char kernel_text[MAX_WORD];
} run_options;

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

static void add_define(run_options *o, const char *text) {
    if (o->ndefines == MAX_DEFINES) return;
    char *slot = o->define_text[o->ndefines];
    snprintf(slot, MAX_WORD, "%s", text);
    char *eq = strchr(slot, '=');
    if (!eq || eq == slot) return; /* the CLI refuses it before compiling */
    *eq = '\0';
    o->defines[o->ndefines++] = (tlc_define){slot, eq + 1};
}

static void parse_run_line(run_options *o, const char *p, const char *end) {
    char w[MAX_WORD];
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
        }
    }
}

static void parse_options(run_options *o, const char *text, size_t len) {
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

static void fail(tlc_compilation *c, const char *what) {
    fprintf(stderr, "fuzz_pipeline: %s\n--- diagnostics ---\n%s--- end ---\n", what,
            tlc_sb_cstr(&c->diag.out));
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

static void check_diagnostics(tlc_compilation *c) {
    const char *out = tlc_sb_cstr(&c->diag.out);
    for (const char *line = out; *line;) {
        bool located;
        const char *msg = error_message(line, c->src.name, &located);
        if (msg && strncmp(msg, "internal error", 14) == 0) fail(c, "an internal error from source");
        if (msg && !located && !error_about_command_line(msg)) fail(c, "an error without a location");
        const char *eol = strchr(line, '\n');
        if (!eol) break;
        line = eol + 1;
    }
}

static void run_pipeline(const char *text, size_t len) {
    run_options o;
    parse_options(&o, text, len);
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    co.arch = o.arch;
    co.defines = o.defines;
    co.ndefines = o.ndefines;
    co.kernel = o.kernel;
    co.backend = TLC_BACKEND_LLVM; /* then the same Thread IR through tlc's own generator */
    tlc_compilation c;
    bool ok = tlc_compile_source(&c, "fuzz.tl", text, len, &co);
    if (ok) {
        tlc_strbuf dump;
        tlc_sb_init(&dump);
        ok = tlc_compile_layouts(&c, &dump) && tlc_compile_plan(&c, &dump) && tlc_compile_thread(&c, &dump);
        char *ptx = ok ? tlc_compile_ptx(&c, false) : NULL;
        if (ok && !ptx) ok = false;
        if (ok && !strstr(ptx, ".entry")) fail(&c, "PTX without a kernel entry");
        if (ok) {
            c.backend = TLC_BACKEND_DIRECT;
            ptx = tlc_compile_ptx(&c, false);
            if (!ptx) ok = false;
            else if (!strstr(ptx, ".entry")) fail(&c, "direct PTX without a kernel entry");
        }
        tlc_sb_free(&dump);
    }
    if (!ok && c.diag.errors == 0) fail(&c, "a stage failed without an error");
    if (ok && c.diag.errors != 0) fail(&c, "a stage succeeded with errors");
    check_diagnostics(&c);
    tlc_compilation_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* sources are NUL-terminated (and may hold NULs before the end) */
    char *text = malloc(size + 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    run_pipeline(text, size);
    free(text);
    return 0;
}
