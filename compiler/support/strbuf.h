/* Growable string buffer used by every printer (--emit dumps) and by
 * diagnostics, so dumps can go to a FILE or be compared in memory by tests. */
#ifndef TLC_STRBUF_H
#define TLC_STRBUF_H
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef struct tlc_strbuf {
    char *data; /* always NUL-terminated once anything was appended */
    size_t len, cap;
} tlc_strbuf;

void tlc_sb_init(tlc_strbuf *sb);
void tlc_sb_free(tlc_strbuf *sb);
void tlc_sb_putc(tlc_strbuf *sb, char c);
void tlc_sb_puts(tlc_strbuf *sb, const char *s);
void tlc_sb_putn(tlc_strbuf *sb, const char *s, size_t n);
void tlc_sb_printf(tlc_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tlc_sb_vprintf(tlc_strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void tlc_sb_indent(tlc_strbuf *sb, int levels); /* 2 spaces per level */
const char *tlc_sb_cstr(tlc_strbuf *sb);        /* "" when empty */
char *tlc_sb_take(tlc_strbuf *sb);              /* caller frees; sb is reset */
#endif
