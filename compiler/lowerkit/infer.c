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

static tlc_fragment *shaped_as(tlc_arena *a, const tlc_fragment *f, const tir_buffer *b) {
    int64_t shape[TLC_FRAG_MAX_RANK];
    if (b->rank > TLC_FRAG_MAX_RANK) return NULL;
    for (int d = 0; d < b->rank; d++) shape[d] = tir_buffer_dim(b, d);
    return tlc_fragment_reshape(a, f, b->rank, shape);
}

void tlc_infer_sync_views(tlc_infer *st, const tir_buffer *base) {
    for (int i = 0; i < st->k->nbuffers; i++) {
        tir_buffer *v = st->k->buffers[i];
        if (v->view_of != base || !base->fragment) continue;
        tlc_fragment *f = shaped_as(st->a, base->fragment, v);
        if (!f) {
            tlc_error(st->diag, v->loc, "fragment '%s' takes no layout as '%s' reshaped: its layout splits elements "
                      "that the new shape's dims cannot keep together", base->name, v->name);
            st->failed = true;
            return;
        }
        f->origin = "reshaped";
        v->fragment = f;
        st->strength[v->id] = st->strength[base->id];
        st->setter[v->id] = st->setter[base->id];
    }
}

bool tlc_infer_propose(tlc_infer *st, tir_buffer *b, tlc_fragment *f, tlc_strength s, const tir_stmt *by) {
    if (!b || b->scope != TIR_SCOPE_FRAGMENT || !f || !frag_fits(b, f)) return false;
    if (b->view_of) {
        /* a view's layout is its base's, reshaped: proposed to the base */
        tlc_fragment *bf = shaped_as(st->a, f, b->view_of);
        if (!bf) return false;
        bf->origin = f->origin;
        if (!tlc_infer_propose(st, b->view_of, bf, s, by)) return false;
        return tlc_fragment_same(b->fragment, f);
    }
    if (!b->fragment || s > st->strength[b->id]) {
        b->fragment = f;
        st->strength[b->id] = s;
        st->setter[b->id] = by;
        st->changed = true;
        tlc_infer_sync_views(st, b);
        return true;
    }
    if (tlc_fragment_equal(b->fragment, f)) return true;
    /* a fragment with views may get its proposals back reshaped twice */
    for (int i = 0; i < st->k->nbuffers; i++)
        if (st->k->buffers[i]->view_of == b) return tlc_fragment_same(b->fragment, f);
    return false;
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
