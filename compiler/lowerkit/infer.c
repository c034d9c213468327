/* The layout-inference state's protocol (infer.h). */
#include "infer.h"

int tlc_vec_elems(tir_dtype t) {
    int b = tir_dtype_bytes(t);
    int v = b > 0 ? 16 / b : 1;
    return v > 8 ? 8 : v < 1 ? 1 : v;
}

static bool frag_fits(const tir_buffer *b, const tlc_fragment *f) {
    if (b->rank != f->rank) return false;
    for (int d = 0; d < b->rank; d++)
        if (tir_buffer_dim(b, d) != f->shape[d]) return false;
    return true;
}

bool tlc_infer_propose(tlc_infer *st, tir_buffer *b, tlc_fragment *f, tlc_strength s, const tir_stmt *by) {
    if (!b || b->scope != TIR_SCOPE_FRAGMENT || !f || !frag_fits(b, f)) return false;
    if (!b->fragment || s > st->strength[b->id]) {
        b->fragment = f;
        st->strength[b->id] = s;
        st->setter[b->id] = by;
        st->changed = true;
        return true;
    }
    return tlc_fragment_equal(b->fragment, f);
}

void tlc_infer_conflict(tlc_infer *st, const tir_stmt *at, const tir_buffer *b, const tlc_fragment *wanted,
                        const char *why) {
    tlc_strbuf x, y;
    tlc_sb_init(&x);
    tlc_sb_init(&y);
    if (b->fragment) tlc_fragment_print(&x, b->fragment);
    if (wanted) tlc_fragment_print(&y, wanted);
    tlc_error(st->diag, at->loc, "layout conflict on fragment '%s': %s", b->name, why);
    if (wanted) tlc_note(st->diag, at->loc, "this op needs %s", tlc_sb_cstr(&y));
    const tir_stmt *setter = st->setter[b->id];
    if (setter && b->fragment)
        tlc_note(st->diag, setter->loc, "'%s' got %s here (%s)", b->name, tlc_sb_cstr(&x),
                 b->fragment->origin ? b->fragment->origin : "?");
    else
        tlc_note(st->diag, b->loc, "'%s' declared here", b->name);
    tlc_sb_free(&x);
    tlc_sb_free(&y);
    st->failed = true;
}
