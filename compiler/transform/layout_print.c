/* --emit=layout: every fragment and shared buffer's layout, one line each,
 * in buffer declaration order (stable text for golden tests). */
#include "passes.h"

void tlc_layout_print_module(tlc_strbuf *sb, const tir_module *m) {
    for (int i = 0; i < m->nkernels; i++) {
        const tir_kernel *k = m->kernels[i];
        int64_t smem = 0;
        for (int b = 0; b < k->nbuffers; b++) {
            const tir_buffer *buf = k->buffers[b];
            if (buf->scope == TIR_SCOPE_SHARED && buf->layout) {
                int64_t end = buf->layout->offset + tlc_layout_total_bytes(buf->layout);
                if (end > smem) smem = end;
            }
        }
        tlc_sb_printf(sb, "kernel %s: threads=%d shared_bytes=%lld\n", k->name, k->threads, (long long)smem);
        for (int b = 0; b < k->nbuffers; b++) {
            const tir_buffer *buf = k->buffers[b];
            if (buf->scope == TIR_SCOPE_FRAGMENT) {
                tlc_sb_printf(sb, "  fragment %s %s ", buf->name, tir_dtype_name(buf->dtype));
                if (buf->fragment) {
                    tlc_fragment_print(sb, buf->fragment);
                    tlc_sb_printf(sb, " from %s", buf->fragment->origin ? buf->fragment->origin : "?");
                } else {
                    tlc_sb_puts(sb, "(no layout)");
                }
                tlc_sb_putc(sb, '\n');
            } else if (buf->scope == TIR_SCOPE_SHARED) {
                tlc_sb_printf(sb, "  shared %s %s ", buf->name, tir_dtype_name(buf->dtype));
                if (buf->layout) tlc_layout_print(sb, buf->layout);
                else tlc_sb_puts(sb, "(no layout)");
                tlc_sb_putc(sb, '\n');
            }
        }
    }
}
