#include "diag.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tlc_diag_init(tlc_diag *d, const tlc_source *src) {
    memset(d, 0, sizeof *d);
    d->src = src;
    d->max_errors = 20;
    d->show_source = true;
    tlc_sb_init(&d->out);
}

void tlc_diag_free(tlc_diag *d) { tlc_sb_free(&d->out); }

bool tlc_diag_too_many(const tlc_diag *d) { return d->errors >= d->max_errors; }

/* Prints the source line of `loc` (clipped to 200 columns around the caret so
 * a 10 MB line does not flood the terminal) and a caret under the column. */
static void show_line(tlc_diag *d, tlc_loc loc) {
    const tlc_source *s = d->src;
    if (!s || !s->text || loc.line <= 0 || !d->show_source) return;
    const char *p = s->text, *end = s->text + s->len;
    for (int l = 1; l < loc.line && p < end; p++)
        if (*p == '\n') l++;
    if (p >= end && loc.line > 1) return;
    const char *e = p;
    while (e < end && *e != '\n') e++;
    size_t linelen = (size_t)(e - p);
    size_t col = loc.col > 0 ? (size_t)loc.col - 1 : 0;
    if (col > linelen) col = linelen;
    size_t from = col > 100 ? col - 100 : 0;
    size_t to = linelen - from > 200 ? from + 200 : linelen;
    tlc_sb_puts(&d->out, "  ");
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)p[i];
        tlc_sb_putc(&d->out, (c == '\t') ? ' ' : (c < 32 || c == 127) ? '?' : (char)c);
    }
    tlc_sb_puts(&d->out, "\n  ");
    for (size_t i = from; i < col; i++) tlc_sb_putc(&d->out, ' ');
    tlc_sb_puts(&d->out, "^\n");
}

static void emit(tlc_diag *d, tlc_severity sev, tlc_loc loc, const char *fmt, va_list ap) {
    const char *kind = sev == TLC_SEV_ERROR ? "error" : sev == TLC_SEV_WARNING ? "warning" : "note";
    const char *name = d->src && d->src->name ? d->src->name : "<input>";
    if (loc.line > 0)
        tlc_sb_printf(&d->out, "%s:%d:%d: %s: ", name, loc.line, loc.col, kind);
    else
        tlc_sb_printf(&d->out, "%s: %s: ", name, kind);
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    tlc_sb_puts(&d->out, msg);
    tlc_sb_putc(&d->out, '\n');
    show_line(d, loc);
}

void tlc_error(tlc_diag *d, tlc_loc loc, const char *fmt, ...) {
    d->errors++;
    if (d->errors > d->max_errors) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, TLC_SEV_ERROR, loc, fmt, ap);
    va_end(ap);
    if (d->errors == d->max_errors)
        tlc_sb_printf(&d->out, "%s: note: too many errors, stopping\n",
                      d->src && d->src->name ? d->src->name : "<input>");
}

void tlc_warning(tlc_diag *d, tlc_loc loc, const char *fmt, ...) {
    d->warnings++;
    va_list ap;
    va_start(ap, fmt);
    emit(d, TLC_SEV_WARNING, loc, fmt, ap);
    va_end(ap);
}

void tlc_note(tlc_diag *d, tlc_loc loc, const char *fmt, ...) {
    if (d->errors > d->max_errors) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, TLC_SEV_NOTE, loc, fmt, ap);
    va_end(ap);
}
