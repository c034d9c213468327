/* The layout-inference state the tile ops' layout rules work on: the rules
 * in ops/ propose, transform/layout_infer.c runs the worklist. */
#ifndef TLC_LOWERKIT_INFER_H
#define TLC_LOWERKIT_INFER_H
#include "../ir/tir.h"
#include "../layout/fragment.h"

typedef struct tlc_infer {
    tlc_arena *a;
    tlc_diag *diag;
    tir_kernel *k; /* inference may add converted copies (ops/parallel.c) */
    tlc_strength *strength;   /* per buffer id */
    const tir_stmt **setter;  /* per buffer id: the op whose proposal was taken */
    bool changed;
    bool failed;
    tlc_arch arch; /* gemm's rule depends on the target */
    tlc_ptrvec par_seen; /* const tir_par_access *: the Parallel check's answers so far, in any loop */
} tlc_infer;

/* Offers fragment `f` for `b` with strength s from op `by`. Unknown -> taken;
 * equal -> kept; a stronger proposal replaces a weaker one. Returns false on
 * a conflict (a different layout of the same or higher strength), leaving
 * the buffer as it was: the caller reports it or plans a conversion. */
bool tlc_infer_propose(tlc_infer *st, tir_buffer *b, tlc_fragment *f, tlc_strength s, const tir_stmt *by);
/* The views of base (tir_buffer.view_of) take its fragment, reshaped. */
void tlc_infer_sync_views(tlc_infer *st, const tir_buffer *base);
/* Reports a conflict on `b` at `at`, with a note where its layout came from. */
void tlc_infer_conflict(tlc_infer *st, const tir_stmt *at, const tir_buffer *b, const tlc_fragment *wanted,
                        const char *why);
/* Default vector length (elements in 16 bytes of dtype, at most 8). */
int tlc_vec_elems(tir_dtype t);
#endif
