/* Shared-memory allocation: every shared buffer of a kernel gets a byte
 * offset in the block's dynamic shared memory, in declaration order, with
 * no reuse between buffers (lifetimes are the whole kernel today).
 * Swizzled layouts start on 1024 bytes (the 128-byte swizzle pattern repeats
 * every 8 rows of 128 bytes, and TMA / wgmma need that alignment); others
 * on 128 bytes, which keeps every 16-byte vector access aligned. */
#include "lower.h"

static int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

int64_t tlc_shared_alloc(tir_kernel *k) {
    int64_t top = 0;
    for (int i = 0; i < k->nbuffers; i++) {
        tir_buffer *b = k->buffers[i];
        if (b->scope != TIR_SCOPE_SHARED || !b->layout) continue;
        tlc_layout *l = b->layout;
        top = align_up(top, l->swizzle != TLC_SWIZZLE_NONE ? 1024 : 128);
        l->offset = top;
        top += l->bytes * (l->stages > 1 ? l->stages : 1);
    }
    return top;
}
