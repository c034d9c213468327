/* T.wgmma_gemm in the interpreter (docs/language.md 11.9): the gemm is
 * computed when it is issued, and its accumulator stays in flight, one
 * group per gemm, until T.wait_wgmma(n) leaves at most n groups of the
 * warpgroup pending. Reading or writing an accumulator in flight (but by a
 * further T.wgmma_gemm into it, which the hardware chains) is an error:
 * on the GPU the registers change under the program while the tensor cores
 * run. The groups belong to the block, or to the running strand where
 * ranges run at the same time (interp_ranges.c swaps tlc_interp.wgmma). */
#include <stdlib.h>
#include "interp/interp_internal.h"

void tlc_interp_wgmma_begin(tlc_interp *it) { it->wgmma_issuing = true; }

void tlc_interp_wgmma_issued(tlc_interp *it, const tir_buffer *acc) {
    struct tlc_interp_wgmma *w = it->wgmma;
    it->wgmma_issuing = false;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 8;
        w->acc = tlc_interp_xrealloc(w->acc, (size_t)w->cap, sizeof *w->acc);
    }
    w->acc[w->n++] = tir_buffer_storage(acc);
}

void tlc_interp_wgmma_wait(tlc_interp *it, int pending) {
    struct tlc_interp_wgmma *w = it->wgmma;
    if (w->n <= pending) return;
    int drop = w->n - pending; /* the oldest groups retire first */
    for (int i = 0; i < pending; i++) w->acc[i] = w->acc[i + drop];
    w->n = pending;
}

void tlc_interp_wgmma_check(tlc_interp *it, const tir_buffer *b, tlc_loc loc) {
    const struct tlc_interp_wgmma *w = it->wgmma;
    if (!w || !w->n || it->wgmma_issuing || b->scope != TIR_SCOPE_FRAGMENT) return;
    const tir_buffer *s = tir_buffer_storage(b);
    for (int i = 0; i < w->n; i++)
        if (w->acc[i] == s)
            tlc_interp_fail(it, loc, "'%s' is used here while a T.wgmma_gemm into it is still in flight: a "
                            "T.wait_wgmma must retire that gemm first (on the GPU its registers would change "
                            "under this statement)", b->name);
}

void tlc_interp_wgmma_free(struct tlc_interp_wgmma *w) {
    free(w->acc);
    *w = (struct tlc_interp_wgmma){0};
}
