#include "strbuf.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tlc_sb_init(tlc_strbuf *sb) { sb->data = NULL; sb->len = sb->cap = 0; }
void tlc_sb_free(tlc_strbuf *sb) { free(sb->data); tlc_sb_init(sb); }

static void grow(tlc_strbuf *sb, size_t extra) {
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t nc = sb->cap ? sb->cap : 256;
    while (nc < sb->len + extra + 1) nc *= 2;
    char *nd = realloc(sb->data, nc);
    if (!nd) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    sb->data = nd;
    sb->cap = nc;
}

void tlc_sb_putn(tlc_strbuf *sb, const char *s, size_t n) {
    grow(sb, n);
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = 0;
}
void tlc_sb_putc(tlc_strbuf *sb, char c) { tlc_sb_putn(sb, &c, 1); }
void tlc_sb_puts(tlc_strbuf *sb, const char *s) { tlc_sb_putn(sb, s, strlen(s)); }

void tlc_sb_vprintf(tlc_strbuf *sb, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n > 0) {
        grow(sb, (size_t)n);
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void tlc_sb_printf(tlc_strbuf *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tlc_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

void tlc_sb_indent(tlc_strbuf *sb, int levels) {
    for (int i = 0; i < levels; i++) tlc_sb_puts(sb, "  ");
}
const char *tlc_sb_cstr(tlc_strbuf *sb) { return sb->data ? sb->data : ""; }
char *tlc_sb_take(tlc_strbuf *sb) {
    char *d = sb->data;
    if (!d) { d = malloc(1); if (d) d[0] = 0; }
    tlc_sb_init(sb);
    return d;
}
