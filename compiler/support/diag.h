/* Diagnostics: `file:line:col: error: message`, the source line and a caret,
 * plus notes pointing at related places. Output goes to a tlc_strbuf so the
 * CLI prints it and the JIT / tests can inspect it. One tlc_diag per
 * compilation: no global state. */
#ifndef TLC_DIAG_H
#define TLC_DIAG_H
#include <stdbool.h>
#include "strbuf.h"

typedef struct tlc_loc {
    int line, col; /* 1-based; line 0 means "no location" */
} tlc_loc;

typedef struct tlc_source {
    const char *name; /* file name shown in diagnostics */
    const char *text; /* whole file, NUL-terminated (may contain NULs: use len) */
    size_t len;
} tlc_source;

typedef enum { TLC_SEV_ERROR, TLC_SEV_WARNING, TLC_SEV_NOTE } tlc_severity;

typedef struct tlc_diag {
    const tlc_source *src;
    tlc_strbuf out;   /* rendered diagnostics */
    int errors, warnings;
    int max_errors;   /* stop recording (and let passes bail out) after this many; default 20 */
    bool show_source; /* print the source line + caret (default true) */
} tlc_diag;

void tlc_diag_init(tlc_diag *d, const tlc_source *src);
void tlc_diag_free(tlc_diag *d);
void tlc_error(tlc_diag *d, tlc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tlc_warning(tlc_diag *d, tlc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A note attaches to the preceding error/warning (e.g. "declared here"). */
void tlc_note(tlc_diag *d, tlc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* True once max_errors was reached: passes should stop early. */
bool tlc_diag_too_many(const tlc_diag *d);
#endif
