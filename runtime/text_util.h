/* Small text helpers shared by the metadata reader/writer and the runtime:
 * a growable output buffer and bounded error formatting. Private to libtlrt. */
#ifndef TLRT_TEXT_UTIL_H
#define TLRT_TEXT_UTIL_H
#include <stdbool.h>
#include <stddef.h>
#include "tlc/metadata.h"

typedef struct tlrt_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the content is incomplete */
} tlrt_buf;

void tlrt_buf_printf(tlrt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tlrt_buf_free(tlrt_buf *b);

/* snprintf into err (when err && errlen), always NUL-terminated. */
void tlrt_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes expression e in its text form ("(ceildiv M 4)"); names come from k. */
void tlrt_expr_format(tlrt_buf *b, const tlrt_expr *e, const tlrt_kernel_meta *k);

/* Parses one expression starting at *p (leading blanks skipped), stopping
 * before the blank or end that follows it; advances *p. */
bool tlrt_expr_parse_at(const char **p, const char *end, const tlrt_kernel_meta *k, tlrt_expr *out,
                        char *err, size_t errlen);

bool tlrt_is_ident(const char *s, size_t n);       /* [A-Za-z_][A-Za-z0-9_]* */
bool tlrt_is_entry_name(const char *s, size_t n);  /* PTX identifier: also $ and . */
#endif
