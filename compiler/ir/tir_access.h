/* What a Tile IR statement reads and writes: the one answer every pass and
 * the interpreter use (barrier placement, shared-memory liveness, pipeline
 * planning, Parallel-loop layouts, which parameters a kernel writes).
 *
 * An access is one buffer touched by one statement, either a tile op's
 * operand (a region) or one element (a load in an expression, an element
 * store). Tile-op operands:
 *   copy        src read, dst written
 *   fill        dst written
 *   gemm        A and B read; C written with clear_accum, else read and written
 *   reduce      src read; dst written with clear, else read and written
 *   atomic_add  dst read and written; src read
 * Loads inside indices, region starts and extents, loop bounds, conditions
 * and values are reads. Accesses come in program order: a region's buffer
 * before the loads in its starts and extents, an element store before the
 * loads in its indices and value, a loop's bounds before its body. */
#ifndef TLC_TIR_ACCESS_H
#define TLC_TIR_ACCESS_H
#include "tir.h"

typedef enum { TIR_ACCESS_READ = 1, TIR_ACCESS_WRITE = 2, TIR_ACCESS_READ_WRITE = 3 } tir_access_mode;

typedef struct tir_access {
    tir_buffer *buf;
    tir_access_mode mode;
    const tir_region *region; /* a tile op's operand; NULL for one element */
    tir_expr *const *idx;     /* one element: buf->rank indices (none for var scope); NULL for a region */
    const tir_stmt *stmt;     /* the innermost statement the access belongs to */
    tlc_loc loc;
} tir_access;

typedef void (*tir_access_fn)(const tir_access *acc, void *ctx);

/* Every access of s and of the statements inside it. */
void tir_stmt_accesses(const tir_stmt *s, tir_access_fn fn, void *ctx);
/* The accesses of s itself, not of the statements nested in it: a loop's
 * bounds, an if's condition; for every other statement the same as
 * tir_stmt_accesses (a sequence has none). */
void tir_stmt_own_accesses(const tir_stmt *s, tir_access_fn fn, void *ctx);
/* Per buffer id (0 .. nbuffers - 1), whether s (with the statements inside
 * it) reads it and whether it writes it. */
void tir_stmt_buffers_read_written(const tir_stmt *s, int nbuffers, bool *reads, bool *writes);
/* The loads in e (as reads of statement `in`). */
void tir_expr_accesses(const tir_expr *e, const tir_stmt *in, tir_access_fn fn, void *ctx);

/* Collected accesses (heap memory: tir_access_list_free). */
typedef struct tir_access_list {
    tir_access *v;
    int n, cap;
} tir_access_list;
void tir_access_list_collect(const tir_stmt *s, tir_access_list *out); /* appends tir_stmt_accesses(s) */
void tir_access_list_free(tir_access_list *l);

/* Every variable read in s and the statements inside it (loop variables
 * where they are used, not where they are bound), in no promised order. */
void tir_stmt_vars(const tir_stmt *s, void (*fn)(const tir_var *v, void *ctx), void *ctx);
/* Every variable read in e. */
void tir_expr_vars(const tir_expr *e, void (*fn)(const tir_var *v, void *ctx), void *ctx);
/* Whether a warp shuffle (TE_SHUFFLE) is in s (own: in s itself, as
 * tir_stmt_own_accesses; else also in the statements inside it), in e. */
bool tir_stmt_has_shuffle(const tir_stmt *s, bool own);
bool tir_expr_has_shuffle(const tir_expr *e);

/* Whether s (or anything in it) accesses buffer b in a way of `mode`
 * (TIR_ACCESS_READ_WRITE: either), and whether it writes it. */
bool tir_stmt_touches(const tir_stmt *s, const tir_buffer *b, tir_access_mode mode);
bool tir_stmt_writes(const tir_stmt *s, const tir_buffer *b);
/* Sets written[buffer id] for every buffer s (or anything in it) writes. */
void tir_stmt_mark_written(const tir_stmt *s, bool *written);
/* A loop's body as a list of statements: a sequence's, or the body itself
 * as the only one (none for no body); *n their count (n may be NULL). */
tir_stmt *const *tir_loop_items(const tir_stmt *loop, int *n);
#endif
