/* The top-level filter (toplevel.h): Python's logical lines, grouped into
 * top-level statements by indentation, each kept or blanked.
 *
 * A file with no kernel decorator (jit, prim_func or macro) anywhere is
 * kept whole. In any other file, kept are: imports; functions decorated
 * with a kernel decorator (their other decorators are blanked);
 * undecorated functions that hold a `with ...Kernel(...)` line, or a
 * nested kernel decorator and a `return` (a factory); `NAME = expression`
 * lines whose expression tlc's grammar reads. Everything else is blanked. */
#include "toplevel.h"
#include <string.h>

enum { MAX_FSTRING_DEPTH = 16, MAX_OPEN = 64 };

typedef struct scanner {
    const char *t;
    size_t n, i;       /* text, length, position */
    int line;          /* line of t[i] */
    size_t line_start; /* offset of that line's first byte */
} scanner;

static void adv(scanner *s) {
    if (s->t[s->i] == '\n') {
        s->line++;
        s->line_start = s->i + 1;
    }
    s->i++;
}

static tlc_loc here(const scanner *s) {
    size_t c = s->i - s->line_start + 1;
    return (tlc_loc){ s->line, c > 1000000000 ? 1000000000 : (int)c };
}

static bool is_ident_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static bool is_ident_char(unsigned char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
static bool is_quote(char c) { return c == '\'' || c == '"'; }

/* A string prefix (r, b, f, rb, fr, ...) of length n at p: returns whether
 * it is one, and whether it makes an f-string (f or t). */
static bool string_prefix(const char *p, size_t n, bool *fmt) {
    if (n == 0 || n > 2) return false;
    *fmt = false;
    for (size_t k = 0; k < n; k++) {
        char c = (char)(p[k] | 0x20);
        if (c != 'r' && c != 'b' && c != 'u' && c != 'f' && c != 't') return false;
        if (c == 'f' || c == 't') *fmt = true;
    }
    return true;
}

static void scan_fexpr(scanner *s, int depth, bool single_line);

/* s->i is at the opening quote. Leaves s->i after the closing quote and
 * returns true; at an unescaped newline of a single-quoted string (left
 * unconsumed) or at the end of the file returns false. */
static bool scan_string(scanner *s, bool fmt, int depth) {
    char q = s->t[s->i];
    int qlen = s->i + 2 < s->n && s->t[s->i + 1] == q && s->t[s->i + 2] == q ? 3 : 1;
    for (int k = 0; k < qlen; k++) adv(s);
    while (s->i < s->n) {
        char c = s->t[s->i];
        if (c == '\\') {
            adv(s);
            if (s->i < s->n) adv(s);
            continue;
        }
        if (c == '\n' && qlen == 1) return false;
        if (c == q) {
            if (qlen == 1) {
                adv(s);
                return true;
            }
            if (s->i + 2 < s->n && s->t[s->i + 1] == q && s->t[s->i + 2] == q) {
                adv(s), adv(s), adv(s);
                return true;
            }
            adv(s);
            continue;
        }
        if (fmt && c == '{' && depth < MAX_FSTRING_DEPTH) {
            adv(s);
            if (s->i < s->n && s->t[s->i] == '{') {
                adv(s);
                continue;
            }
            scan_fexpr(s, depth + 1, qlen == 1);
            continue;
        }
        adv(s);
    }
    return false;
}

/* Skips an identifier at s->i; when it is a string prefix followed by a
 * quote, the string too. Returns whether a string was scanned, and its end
 * state in *closed. */
static bool scan_word(scanner *s, int depth, bool *closed) {
    size_t b = s->i;
    while (s->i < s->n && is_ident_char((unsigned char)s->t[s->i])) adv(s);
    bool fmt;
    if (s->i < s->n && is_quote(s->t[s->i]) && string_prefix(s->t + b, s->i - b, &fmt)) {
        *closed = scan_string(s, fmt, depth);
        return true;
    }
    return false;
}

static void scan_number(scanner *s) {
    bool hex = s->i + 1 < s->n && s->t[s->i] == '0' && (s->t[s->i + 1] | 0x20) == 'x';
    while (s->i < s->n) {
        unsigned char c = (unsigned char)s->t[s->i];
        if (is_ident_char(c) || c == '.') {
            adv(s);
        } else if ((c == '+' || c == '-') && !hex && (s->t[s->i - 1] | 0x20) == 'e') {
            adv(s);
        } else {
            break;
        }
    }
}

/* The expression of an f-string's replacement field, up to its '}'. */
static void scan_fexpr(scanner *s, int depth, bool single_line) {
    int br = 0;
    while (s->i < s->n) {
        char c = s->t[s->i];
        if (c == '\n' && single_line) return;
        if (c == '}' && br == 0) {
            adv(s);
            return;
        }
        if (c == '(' || c == '[' || c == '{') br++;
        else if ((c == ')' || c == ']' || c == '}') && br > 0) br--;
        if (is_quote(c)) {
            scan_string(s, false, depth);
            continue;
        }
        if (is_ident_start((unsigned char)c)) {
            bool closed;
            scan_word(s, depth, &closed);
            continue;
        }
        adv(s);
    }
}

/* ---- logical lines ---- */

typedef struct lline {
    size_t start, end; /* first byte; the ending newline (or the end of the file) */
    tlc_loc loc;
    bool indented;
    bool open;       /* the file ended inside a bracket or triple-quoted string */
    tlc_loc open_loc;
    char open_ch;    /* '(', '[', '{', or '"' for a string */
} lline;

/* Scans one logical line starting at s->i; leaves s->i after its newline. */
static void scan_logical(scanner *s, lline *L) {
    tlc_loc open[MAX_OPEN];
    char open_ch[MAX_OPEN];
    int depth = 0;
    while (s->i < s->n) {
        char c = s->t[s->i];
        if (c == '\n') {
            if (depth == 0) {
                L->end = s->i;
                adv(s);
                return;
            }
            adv(s);
            continue;
        }
        if (c == '#') {
            while (s->i < s->n && s->t[s->i] != '\n') adv(s);
            continue;
        }
        if (c == '\\' && s->i + 1 < s->n && (s->t[s->i + 1] == '\n' || s->t[s->i + 1] == '\r')) {
            adv(s);
            if (s->t[s->i] == '\r' && s->i + 1 < s->n && s->t[s->i + 1] == '\n') adv(s);
            adv(s);
            continue;
        }
        if (c == '(' || c == '[' || c == '{') {
            if (depth < MAX_OPEN) {
                open[depth] = here(s);
                open_ch[depth] = c;
            }
            depth++;
            adv(s);
            continue;
        }
        if (c == ')' || c == ']' || c == '}') {
            if (depth > 0) depth--;
            adv(s);
            continue;
        }
        bool is_str = false, closed = true;
        tlc_loc at = here(s);
        if (is_quote(c)) {
            is_str = true;
            closed = scan_string(s, false, 0);
        } else if (is_ident_start((unsigned char)c)) {
            is_str = scan_word(s, 0, &closed);
        } else if (c >= '0' && c <= '9') {
            scan_number(s);
        } else {
            adv(s);
        }
        if (is_str && !closed) {
            if (s->i >= s->n) { /* a triple-quoted string to the end of the file */
                L->end = s->n;
                L->open = true;
                L->open_loc = at;
                L->open_ch = '"';
                return;
            }
            depth = 0; /* as the lexer: brackets before a broken string cannot be trusted */
        }
    }
    L->end = s->n;
    if (depth > 0) {
        int k = depth <= MAX_OPEN ? depth - 1 : MAX_OPEN - 1;
        L->open = true;
        L->open_loc = open[k];
        L->open_ch = open_ch[k];
    }
}

typedef struct lines {
    lline *v;
    int n, cap;
} lines;

static void split_lines(const char *t, size_t n, lines *out, tlc_arena *arena) {
    scanner s = { t, n, 0, 1, 0 };
    tlc_ptrvec v = { 0 };
    while (s.i < n) {
        size_t ls = s.i;
        while (s.i < n && (t[s.i] == ' ' || t[s.i] == '\t' || t[s.i] == '\f' || t[s.i] == '\r')) adv(&s);
        if (s.i >= n) break;
        if (t[s.i] == '\n') {
            adv(&s);
            continue;
        }
        if (t[s.i] == '#') {
            while (s.i < n && t[s.i] != '\n') adv(&s);
            continue;
        }
        lline *L = TLC_NEW(arena, lline);
        L->start = s.i;
        L->loc = here(&s);
        L->indented = s.i > ls;
        scan_logical(&s, L);
        tlc_ptrvec_push(&v, L);
    }
    out->n = v.len;
    out->v = TLC_NEW_ARRAY(arena, lline, v.len ? (size_t)v.len : 1);
    for (int i = 0; i < v.len; i++) out->v[i] = *(lline *)v.items[i];
    tlc_ptrvec_free(&v);
}

/* ---- tokens of one logical line, for classifying it ---- */

typedef enum { TK_END, TK_NAME, TK_NUM, TK_STR, TK_OP } tkind;

typedef struct tok {
    tkind k;
    size_t off, len;
    bool prefixed; /* a string with a prefix (f"", r"", b"") */
} tok;

typedef struct tokcur {
    scanner s;
    size_t end;
} tokcur;

static tokcur tokens_of(const char *t, const lline *L) {
    tokcur c = { { t, L->end, L->start, 1, L->start }, L->end };
    return c;
}

static const char *const ops3[] = { "**=", "//=", ">>=", "<<=", "...", NULL };
static const char *const ops2[] = { "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=",
                                    "*=", "/=", "%=", "&=", "|=", "^=", "@=", NULL };

static tok next_tok(tokcur *c) {
    scanner *s = &c->s;
    for (;;) {
        while (s->i < c->end && (s->t[s->i] == ' ' || s->t[s->i] == '\t' || s->t[s->i] == '\f' ||
                                 s->t[s->i] == '\r' || s->t[s->i] == '\n'))
            adv(s);
        if (s->i >= c->end) return (tok){ TK_END, s->i, 0, false };
        if (s->t[s->i] == '#') {
            while (s->i < c->end && s->t[s->i] != '\n') adv(s);
            continue;
        }
        if (s->t[s->i] == '\\' && s->i + 1 < c->end && (s->t[s->i + 1] == '\n' || s->t[s->i + 1] == '\r')) {
            adv(s);
            continue;
        }
        break;
    }
    size_t b = s->i;
    char ch = s->t[b];
    if (is_quote(ch)) {
        scan_string(s, false, 0);
        return (tok){ TK_STR, b, s->i - b, false };
    }
    if (is_ident_start((unsigned char)ch)) {
        bool closed;
        if (scan_word(s, 0, &closed)) return (tok){ TK_STR, b, s->i - b, true };
        return (tok){ TK_NAME, b, s->i - b, false };
    }
    if ((ch >= '0' && ch <= '9') || (ch == '.' && b + 1 < c->end && s->t[b + 1] >= '0' && s->t[b + 1] <= '9')) {
        scan_number(s);
        return (tok){ TK_NUM, b, s->i - b, false };
    }
    for (int k = 0; ops3[k]; k++)
        if (b + 3 <= c->end && memcmp(s->t + b, ops3[k], 3) == 0) {
            s->i += 3;
            return (tok){ TK_OP, b, 3, false };
        }
    for (int k = 0; ops2[k]; k++)
        if (b + 2 <= c->end && memcmp(s->t + b, ops2[k], 2) == 0) {
            s->i += 2;
            return (tok){ TK_OP, b, 2, false };
        }
    adv(s);
    return (tok){ TK_OP, b, 1, false };
}

static bool tok_is(const char *t, tok k, const char *text) {
    size_t n = strlen(text);
    return k.len == n && memcmp(t + k.off, text, n) == 0;
}

static bool is_python_keyword(const char *t, tok k) {
    static const char *const kw[] = { "False", "None", "True", "and", "as", "assert", "async", "await",
                                      "break", "class", "continue", "def", "del", "elif", "else", "except",
                                      "finally", "for", "from", "global", "if", "import", "in", "is",
                                      "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
                                      "while", "with", "yield", NULL };
    for (int i = 0; kw[i]; i++)
        if (tok_is(t, k, kw[i])) return true;
    return false;
}

/* A number as tlc's lexer reads it (no complex or long suffixes). */
static bool tlc_number(const char *p, size_t n) {
    size_t i = 0;
    if (n > 2 && p[0] == '0' && ((p[1] | 0x20) == 'x' || (p[1] | 0x20) == 'o' || (p[1] | 0x20) == 'b')) {
        char base = (char)(p[1] | 0x20);
        for (i = 2; i < n; i++) {
            char c = (char)(p[i] | 0x20);
            bool ok = c == '_' || (c >= '0' && c <= (base == 'b' ? '1' : base == 'o' ? '7' : '9')) ||
                      (base == 'x' && c >= 'a' && c <= 'f');
            if (!ok) return false;
        }
        return true;
    }
    bool digits = false;
    while (i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == '_')) i++, digits = true;
    if (i < n && p[i] == '.') {
        i++;
        while (i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == '_')) i++, digits = true;
    }
    if (!digits) return false;
    if (i < n && (p[i] | 0x20) == 'e') {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        bool exp = false;
        while (i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == '_')) i++, exp = true;
        if (!exp) return false;
    }
    return i == n;
}

/* `@a.b.c(...)`: the dotted head, as name tokens; returns how many parts
 * (0 when the line is not such a decorator). */
enum { MAX_PARTS = 8 };
static int decorator_head(const char *t, const lline *L, tok parts[MAX_PARTS]) {
    tokcur c = tokens_of(t, L);
    tok k = next_tok(&c);
    if (k.k != TK_OP || !tok_is(t, k, "@")) return 0;
    int n = 0;
    for (;;) {
        k = next_tok(&c);
        if (k.k != TK_NAME || n == MAX_PARTS) return 0;
        parts[n++] = k;
        k = next_tok(&c);
        if (k.k != TK_OP || !tok_is(t, k, ".")) return n;
    }
}

static bool is_module_prefix(const char *t, tok k) {
    return tok_is(t, k, "T") || tok_is(t, k, "tl") || tok_is(t, k, "tilelang") || tok_is(t, k, "language");
}

/* @jit, @tilelang.jit, @T.prim_func, @T.macro, ... */
static bool kernel_decorator(const char *t, const lline *L) {
    tok parts[MAX_PARTS];
    int n = decorator_head(t, L, parts);
    if (n == 0) return false;
    tok last = parts[n - 1];
    if (!tok_is(t, last, "jit") && !tok_is(t, last, "prim_func") && !tok_is(t, last, "macro")) return false;
    for (int i = 0; i < n - 1; i++)
        if (!is_module_prefix(t, parts[i])) return false;
    return true;
}

static tok first_tok(const char *t, const lline *L) {
    tokcur c = tokens_of(t, L);
    return next_tok(&c);
}

/* `import a.b as c, d` / `from x import (y, z)`: only names, dots, commas,
 * brackets and `*` (anything else, such as a `;` and a second statement, is
 * not an import tlc reads). */
static bool plain_import(const char *t, const lline *L) {
    tokcur c = tokens_of(t, L);
    for (tok k = next_tok(&c); k.k != TK_END; k = next_tok(&c)) {
        if (k.k == TK_NAME) continue;
        if (k.k == TK_OP && k.len == 1 && strchr(".,()*", t[k.off])) continue;
        return false;
    }
    return true;
}

static bool ascii_name(const char *t, tok k) {
    for (size_t i = 0; i < k.len; i++)
        if ((unsigned char)t[k.off + i] >= 0x80) return false;
    return true;
}

/* `NAME = expression`, the expression in tlc's grammar as far as tokens
 * tell: no comprehensions, lambdas, slices, `@`, unpacking, string
 * prefixes or second statement; `a = b = value` chains names only). */
static bool constant_assignment(const char *t, const lline *L) {
    tokcur c = tokens_of(t, L);
    tok k = next_tok(&c);
    if (k.k != TK_NAME || is_python_keyword(t, k) || !ascii_name(t, k)) return false;
    k = next_tok(&c);
    if (k.k != TK_OP || !tok_is(t, k, "=")) return false;
    int depth = 0, braces = 0, n = 0, since_eq = 0; /* since_eq: tokens since the last '=' */
    /* per open brace: tokens since it, and whether a ':' made it a dict (a set display is not tlc's) */
    int in_brace[MAX_OPEN] = {0};
    bool dict[MAX_OPEN] = {false};
    tok prev = k;
    for (k = next_tok(&c); k.k != TK_END; prev = k, k = next_tok(&c), n++, since_eq++) {
        if (braces > 0 && !(k.k == TK_OP && tok_is(t, k, "}"))) in_brace[braces - 1]++;
        switch (k.k) {
        case TK_NAME:
            if (is_python_keyword(t, k) && !tok_is(t, k, "True") && !tok_is(t, k, "False") &&
                !tok_is(t, k, "None") && !tok_is(t, k, "and") && !tok_is(t, k, "or") &&
                !tok_is(t, k, "not") && !tok_is(t, k, "if") && !tok_is(t, k, "else"))
                return false;
            if (!ascii_name(t, k)) return false;
            break;
        case TK_NUM:
            if (!tlc_number(t + k.off, k.len)) return false;
            break;
        case TK_STR:
            if (k.prefixed) return false;
            break;
        case TK_OP: {
            static const char *const ok[] = { "+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^",
                                              "~", "<", ">", "<=", ">=", "==", "!=", "(", ")", "[", "]",
                                              ",", ".", "=", NULL };
            bool allowed = false;
            for (int i = 0; ok[i]; i++)
                if (tok_is(t, k, ok[i])) allowed = true;
            /* dict displays (`PASS_CFG = {key: value, ...}`): ':' only inside braces */
            if (tok_is(t, k, "{")) {
                if (braces == MAX_OPEN) return false;
                in_brace[braces] = 0;
                dict[braces++] = false;
                allowed = true;
            } else if (tok_is(t, k, "}") && braces > 0) {
                braces--;
                if (in_brace[braces] && !dict[braces]) return false; /* {x}: a set */
                allowed = true;
            } else if (tok_is(t, k, ":") && braces > 0) {
                dict[braces - 1] = true;
                allowed = true;
            } else if (tok_is(t, k, ",") && braces > 0 && !dict[braces - 1]) {
                return false; /* {x, y}: a set */
            }
            if (!allowed) return false;
            if (tok_is(t, k, "(") || tok_is(t, k, "[")) depth++;
            if ((tok_is(t, k, ")") || tok_is(t, k, "]")) && depth > 0) depth--;
            if (tok_is(t, k, "=") && depth == 0) {
                /* a = b = value: only names between the '=' */
                if (since_eq != 1 || prev.k != TK_NAME || is_python_keyword(t, prev)) return false;
                since_eq = -1;
            }
            /* *args / **kwargs */
            if ((tok_is(t, k, "*") || tok_is(t, k, "**")) &&
                (prev.k == TK_OP && (tok_is(t, prev, "(") || tok_is(t, prev, ",") || tok_is(t, prev, "=") ||
                                     tok_is(t, prev, "["))))
                return false;
            break;
        }
        case TK_END: break;
        }
    }
    return n > 0;
}

/* A `with ...Kernel(...)` line. */
static bool kernel_with_line(const char *t, const lline *L) {
    tok k = first_tok(t, L);
    if (k.k != TK_NAME || !tok_is(t, k, "with")) return false;
    tokcur c = tokens_of(t, L);
    for (k = next_tok(&c); k.k != TK_END; k = next_tok(&c))
        if (k.k == TK_NAME && tok_is(t, k, "Kernel")) return true;
    return false;
}

/* Whether an undecorated function's body (lines first..last) makes it a
 * kernel: a `with ...Kernel(...)` line outside any nested def, or a kernel
 * decorator and a `return` at the body's own indentation (a factory returns
 * its kernel; a Python function that only defines and runs one, such as a
 * test, does not, nor does one whose nested function is the factory, as an
 * autotuner's `def get_best_config(M, N, K): def kernel(block_M=None, ...)`). */
static bool kernel_body(const char *t, const lines *ls, int first, int last) {
    bool nested = false, returns = false;
    int body_col = first <= last ? ls->v[first].loc.col : 0;
    int def_col = -1; /* the column of the nested def the lines are in, or -1 */
    for (int b = first; b <= last; b++) {
        const lline *L = &ls->v[b];
        tok k = first_tok(t, L);
        if (def_col >= 0 && L->loc.col <= def_col) def_col = -1;
        if (def_col < 0 && k.k == TK_NAME && tok_is(t, k, "def")) {
            def_col = L->loc.col;
            continue;
        }
        if (k.k == TK_OP && tok_is(t, k, "@") && L->loc.col == body_col) nested = nested || kernel_decorator(t, L);
        if (k.k == TK_NAME && tok_is(t, k, "return") && L->loc.col == body_col) returns = true;
        if (def_col < 0 && kernel_with_line(t, L)) return true;
    }
    return nested && returns;
}

/* Whether a function (lines first..last) is one the grammar reads and sema
 * can run at compile time: no star parameters, no nested decorator or def,
 * none of Python's statements tlc lacks. A function that fails this stays
 * skipped (a call of it is then an unknown function), so that one helper
 * tlc cannot read does not stop the file's other kernels. */
static bool helper_readable(const char *t, const lines *ls, int first, int last) {
    static const char *const lacks[] = { "class", "try", "while", "with", "yield", "global",
                                         "nonlocal", "del", "async", "await", "import", "from", "def", NULL };
    for (int b = first; b <= last; b++) {
        tokcur c = tokens_of(t, &ls->v[b]);
        int idx = 0;
        for (tok k = next_tok(&c); k.k != TK_END; k = next_tok(&c), idx++) {
            if (b == first && idx == 0) continue; /* its own `def` */
            if (k.k == TK_OP && (tok_is(t, k, "@") || (b == first && (tok_is(t, k, "*") || tok_is(t, k, "**")))))
                return false;
            if (k.k != TK_NAME) continue;
            for (int w = 0; lacks[w]; w++)
                if (tok_is(t, k, lacks[w])) return false;
        }
    }
    return true;
}

/* FNV-1a of a name's bytes */
static unsigned name_hash(const char *p, size_t n) {
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

static void blank(char *t, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (t[i] != '\n') t[i] = ' ';
}

void tlc_toplevel_filter(const tlc_source *src, tlc_arena *arena, tlc_diag *diag, tlc_toplevel *out) {
    size_t n = src->text ? src->len : 0;
    char *t = tlc_arena_alloc(arena, n + 1);
    if (n) memcpy(t, src->text, n);
    t[n] = '\0';
    memset(out, 0, sizeof *out);
    out->text = t;
    lines ls;
    split_lines(t, n, &ls, arena);

    /* A file without any kernel decorator is not a TileLang module: it is
     * read whole, as tlc always read its files (plain `def` kernels), unless
     * it has other decorators and no `with ...Kernel(...)` line (a Triton
     * file, a benchmark script): that is Python, filtered like a TileLang
     * file, which leaves no kernel to report instead of its Python. */
    bool tilelang_file = false, decorated = false, with_kernel = false;
    for (int i = 0; i < ls.n && !tilelang_file; i++) {
        tilelang_file = kernel_decorator(t, &ls.v[i]);
        tok k = first_tok(t, &ls.v[i]);
        decorated = decorated || (k.k == TK_OP && tok_is(t, k, "@"));
        with_kernel = with_kernel || kernel_with_line(t, &ls.v[i]);
    }
    if (!tilelang_file && (!decorated || with_kernel)) {
        out->defs = TLC_NEW(arena, tlc_skipped_def);
        return;
    }

    /* First the statements and what is kept of them; then the undecorated
     * functions a kept statement calls by name (the file's compile-time
     * helpers), and the ones those call; then the rest is blanked. */
    typedef struct stmt_span {
        int first, head, last;
        size_t from, to;
        bool keep, is_def;  /* is_def: `def` or `async def` (listed when skipped) */
        bool plain_def;     /* an undecorated def tlc can read: a helper if called */
        tok name;
    } stmt_span;
    stmt_span *st = TLC_NEW_ARRAY(arena, stmt_span, (size_t)ls.n + 1);
    int nst = 0;
    int i = 0;
    while (i < ls.n && ls.v[i].indented) i++; /* an indented start: the lexer reports it */
    while (i < ls.n) {
        /* one statement: decorators, a first line, its indented block */
        int first = i, head = i;
        while (head < ls.n && !ls.v[head].indented && first_tok(t, &ls.v[head]).k == TK_OP &&
               tok_is(t, first_tok(t, &ls.v[head]), "@"))
            head++;
        if (head == ls.n) head = ls.n - 1;
        int last = head;
        while (last + 1 < ls.n && ls.v[last + 1].indented) last++;
        i = last + 1;
        stmt_span *S = &st[nst++];
        S->first = first, S->head = head, S->last = last;
        S->from = ls.v[first].start, S->to = i < ls.n ? ls.v[i].start : n;

        const lline *H = &ls.v[head];
        tokcur c = tokens_of(t, H);
        tok k0 = next_tok(&c), k1 = next_tok(&c);
        bool is_def = k0.k == TK_NAME && tok_is(t, k0, "def");
        S->name = is_def ? k1 : next_tok(&c);
        if (k0.k == TK_NAME && tok_is(t, k0, "async") && k1.k == TK_NAME && tok_is(t, k1, "def")) is_def = false;
        bool keep = false, decorated = head > first;
        S->is_def = is_def || (k0.k == TK_NAME && tok_is(t, k0, "async"));
        S->plain_def = is_def && !decorated && S->name.k == TK_NAME && helper_readable(t, &ls, head, last);
        if (decorated) {
            bool any = false;
            for (int d = first; d < head; d++) any = any || kernel_decorator(t, &ls.v[d]);
            keep = any && is_def;
            if (keep)
                for (int d = first; d < head; d++)
                    if (!kernel_decorator(t, &ls.v[d])) blank(t, ls.v[d].start, ls.v[d].end);
        } else if (is_def) {
            keep = kernel_body(t, &ls, head + 1, last);
        } else if (k0.k == TK_NAME && (tok_is(t, k0, "import") || tok_is(t, k0, "from"))) {
            keep = plain_import(t, H);
        } else {
            keep = constant_assignment(t, H);
        }
        S->keep = keep;
        if (keep) S->plain_def = false;
    }

    /* The helpers, by a worklist over called names: each statement's lines
     * are read once; the candidates by name in a hash table. */
    int cap = 16;
    while (cap < 2 * nst) cap *= 2;
    int *slot = TLC_NEW_ARRAY(arena, int, (size_t)cap);
    for (int h = 0; h < cap; h++) slot[h] = -1;
    for (int a = 0; a < nst; a++) {
        if (!st[a].plain_def) continue;
        unsigned h = name_hash(t + st[a].name.off, st[a].name.len) & (unsigned)(cap - 1);
        while (slot[h] >= 0) h = (h + 1) & (unsigned)(cap - 1);
        slot[h] = a;
    }
    tlc_ptrvec helpers = { 0 };
    int *work = TLC_NEW_ARRAY(arena, int, (size_t)nst + 1), nwork = 0;
    for (int a = 0; a < nst; a++)
        if (st[a].keep) work[nwork++] = a;
    while (nwork > 0) {
        int b = work[--nwork];
        for (int ln = st[b].first; ln <= st[b].last; ln++) {
            tokcur c = tokens_of(t, &ls.v[ln]);
            tok prev = { TK_END, 0, 0, false }, k = next_tok(&c);
            while (k.k != TK_END) {
                tok nx = next_tok(&c);
                if (k.k == TK_NAME && nx.k == TK_OP && tok_is(t, nx, "(") && !(prev.k == TK_OP && tok_is(t, prev, ".")) &&
                    !(prev.k == TK_NAME && tok_is(t, prev, "def"))) {
                    unsigned h = name_hash(t + k.off, k.len) & (unsigned)(cap - 1);
                    for (; slot[h] >= 0; h = (h + 1) & (unsigned)(cap - 1)) {
                        stmt_span *A = &st[slot[h]];
                        if (A->keep || A->name.len != k.len || memcmp(t + A->name.off, t + k.off, k.len) != 0) continue;
                        A->keep = true;
                        work[nwork++] = slot[h];
                        tlc_skipped_def *hd = TLC_NEW(arena, tlc_skipped_def);
                        hd->name = tlc_arena_strndup(arena, t + A->name.off, A->name.len);
                        hd->loc = ls.v[A->head].loc;
                        tlc_ptrvec_push(&helpers, hd);
                    }
                }
                prev = k;
                k = nx;
            }
        }
    }

    tlc_ptrvec defs = { 0 };
    for (int a = 0; a < nst; a++) {
        const stmt_span *S = &st[a];
        if (S->keep) continue;
        const lline *H = &ls.v[S->head];
        if (S->is_def && S->name.k == TK_NAME) {
            tlc_skipped_def *d = TLC_NEW(arena, tlc_skipped_def);
            d->name = tlc_arena_strndup(arena, t + S->name.off, S->name.len);
            scanner at = { t, n, H->start, H->loc.line, H->start - (size_t)(H->loc.col - 1) };
            while (at.i < S->name.off) adv(&at);
            d->loc = here(&at);
            tlc_ptrvec_push(&defs, d);
        }
        const lline *E = &ls.v[S->last];
        if (E->open) {
            if (E->open_ch == '"')
                tlc_error(diag, E->open_loc, "unterminated triple-quoted string literal (in Python code tlc skips)");
            else
                tlc_error(diag, E->open_loc, "'%c' was never closed (in Python code tlc skips)", E->open_ch);
        }
        blank(t, S->from, S->to);
    }
    out->nhelpers = helpers.len;
    out->helpers = TLC_NEW_ARRAY(arena, tlc_skipped_def, helpers.len ? (size_t)helpers.len : 1);
    for (int d = 0; d < helpers.len; d++) out->helpers[d] = *(tlc_skipped_def *)helpers.items[d];
    tlc_ptrvec_free(&helpers);
    out->ndefs = defs.len;
    out->defs = TLC_NEW_ARRAY(arena, tlc_skipped_def, defs.len ? (size_t)defs.len : 1);
    for (int d = 0; d < defs.len; d++) out->defs[d] = *(tlc_skipped_def *)defs.items[d];
    tlc_ptrvec_free(&defs);
}
