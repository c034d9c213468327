/* Shared-memory layouts (fragment.h): row-major with a padded innermost row
 * and an optional XOR swizzle of 16-byte chunks, the pattern TMA writes and
 * wgmma descriptors read. */
#include "fragment.h"

static tlc_layout *make(tlc_arena *a, int rank, const int64_t *shape, int elem_bytes, tlc_swizzle s) {
    tlc_layout *l = TLC_NEW(a, tlc_layout);
    l->rank = rank;
    int64_t elems = 1;
    for (int d = 0; d < rank; d++) {
        l->shape[d] = shape[d];
        elems *= shape[d];
    }
    l->row_elems = rank ? shape[rank - 1] : 1;
    l->elem_bytes = elem_bytes;
    l->swizzle = s;
    l->bytes = elems * elem_bytes;
    l->stages = 1;
    return l;
}

tlc_layout *tlc_layout_row_major(tlc_arena *a, int rank, const int64_t *shape, int elem_bytes) {
    return make(a, rank, shape, elem_bytes, TLC_SWIZZLE_NONE);
}

tlc_layout *tlc_layout_swizzled(tlc_arena *a, int rank, const int64_t *shape, int elem_bytes, tlc_swizzle s) {
    /* The swizzle permutes 16-byte chunks inside `s`-byte row segments: rows
     * narrower than the segment (or not a multiple of it) take the widest
     * mode that fits, down to none. */
    int64_t row_bytes = rank ? shape[rank - 1] * elem_bytes : elem_bytes;
    while (s != TLC_SWIZZLE_NONE && row_bytes % (int64_t)s)
        s = s == TLC_SWIZZLE_128B ? TLC_SWIZZLE_64B : s == TLC_SWIZZLE_64B ? TLC_SWIZZLE_32B : TLC_SWIZZLE_NONE;
    return make(a, rank, shape, elem_bytes, s);
}

int64_t tlc_layout_total_bytes(const tlc_layout *l) { return l->bytes * (l->stages > 1 ? l->stages : 1); }

int64_t tlc_layout_offset(const tlc_layout *l, const int64_t *logical) {
    if (l->rank == 0) return 0;
    int64_t row = 0;
    for (int d = 0; d < l->rank - 1; d++) row = row * l->shape[d] + logical[d];
    int64_t col = logical[l->rank - 1];
    int64_t off = row * l->row_elems + col;
    if (l->panel_elems > 0) {
        int64_t rows = l->bytes / l->elem_bytes / l->row_elems;
        off = (col / l->panel_elems) * rows * l->panel_elems + row * l->panel_elems + col % l->panel_elems;
    }
    if (l->swizzle == TLC_SWIZZLE_NONE) return off;
    /* The hardware modes (TMA, wgmma descriptors): the 16-byte chunk index
     * inside each `swizzle`-byte segment is XORed with bits 7.. of the byte
     * address, i.e. with the 128-byte row number modulo the chunk count. */
    int64_t byte = off * l->elem_bytes;
    int64_t chunks = (int64_t)l->swizzle / 16;
    int64_t chunk = (byte / 16) % chunks;
    int64_t swz = chunk ^ ((byte / 128) % chunks);
    byte += (swz - chunk) * 16;
    return byte / l->elem_bytes;
}

void tlc_layout_print(tlc_strbuf *sb, const tlc_layout *l) {
    tlc_sb_puts(sb, "[");
    for (int d = 0; d < l->rank; d++) tlc_sb_printf(sb, "%s%lld", d ? ", " : "", (long long)l->shape[d]);
    tlc_sb_puts(sb, "] ");
    if (l->swizzle != TLC_SWIZZLE_NONE) {
        tlc_sb_printf(sb, "swizzle=%dB", (int)l->swizzle);
        if (l->panel_elems > 0) tlc_sb_printf(sb, " panels=%lld", (long long)l->panel_elems);
    } else if (l->rank && l->row_elems != l->shape[l->rank - 1]) tlc_sb_printf(sb, "padded(row=%lld)", (long long)l->row_elems);
    else tlc_sb_puts(sb, "row-major");
    tlc_sb_printf(sb, " offset=%lld bytes=%lld stages=%d", (long long)l->offset, (long long)l->bytes, l->stages);
}
