/* Growable buffer and bounded error formatting for libtlrt. */
#include "text_util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tlrt_buf_printf(tlrt_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->data ? b->data + b->len : NULL, b->data ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) { b->failed = true; return; }
        if ((size_t)n < room) { b->len += (size_t)n; return; }
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) { b->failed = true; return; }
        b->data = d;
        b->cap = cap;
    }
}

void tlrt_buf_free(tlrt_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

void tlrt_errf(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static bool ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

bool tlrt_is_ident(const char *s, size_t n) {
    if (n == 0 || !ident_start(s[0])) return false;
    for (size_t i = 1; i < n; i++)
        if (!ident_char(s[i])) return false;
    return true;
}

bool tlrt_is_entry_name(const char *s, size_t n) {
    if (n == 0 || !(ident_start(s[0]) || s[0] == '$' || s[0] == '%')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(ident_char(s[i]) || s[i] == '$')) return false;
    return true;
}
