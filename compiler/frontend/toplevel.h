/* Which top-level statements of a file the parser reads. A TileLang kernel
 * file is a Python module: besides its kernels it holds imports, helper
 * functions, classes, `if __name__ == "__main__":` blocks and any other
 * Python. Before lexing, the file is read the way Python's tokenizer reads
 * it (strings, triple-quoted strings, comments, brackets, backslash
 * continuations), split into top-level statements by indentation, and every
 * statement tlc does not read is blanked out (its bytes become spaces, its
 * newlines stay), so the lexer never sees it and every kept line keeps its
 * line and column. docs/language.md section 3 gives the rules. */
#ifndef TLC_TOPLEVEL_H
#define TLC_TOPLEVEL_H
#include <stdbool.h>
#include <stddef.h>
#include "../support/arena.h"
#include "../support/diag.h"

/* A function that was skipped as Python (for diagnostics naming it). */
typedef struct tlc_skipped_def {
    const char *name;
    tlc_loc loc; /* of its name */
} tlc_skipped_def;

typedef struct tlc_toplevel {
    const char *text; /* the file with the skipped statements blanked (arena); len as the source's */
    tlc_skipped_def *defs;
    int ndefs;
    /* undecorated functions kept because a kept statement calls them (the
     * file's compile-time helpers, sema_pyfuncs.c); loc: their `def` line */
    tlc_skipped_def *helpers;
    int nhelpers;
} tlc_toplevel;

/* Fills *out. Reports, as errors, only what makes the skipped Python itself
 * unreadable: a bracket or triple-quoted string still open at the end of the
 * file (it would swallow everything after it). */
void tlc_toplevel_filter(const tlc_source *src, tlc_arena *arena, tlc_diag *diag, tlc_toplevel *out);

#endif
