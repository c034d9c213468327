/* How the iterations of a Parallel loop reach the fragments they index
 * (lower_ctx.h): shared by the Parallel op's layout rule, its check and
 * every element access lowered inside its body. */
#include <string.h>
#include "lower_ctx.h"

/* Whether e reads one of the loop's variables. */
static bool names_loop_var(const tir_stmt *loop, const tir_expr *e, int depth) {
    if (!e || depth > 64) return true;
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: return false;
    case TE_VAR:
        for (int v = 0; v < loop->u.for_.nvars; v++)
            if (loop->u.for_.vars[v] == e->u.var) return true;
        return false;
    case TE_BINARY: return names_loop_var(loop, e->u.bin.a, depth + 1) || names_loop_var(loop, e->u.bin.b, depth + 1);
    case TE_UNARY: return names_loop_var(loop, e->u.un.a, depth + 1);
    case TE_CAST: return names_loop_var(loop, e->u.cast.a, depth + 1);
    default: return true; /* loads, selects: not taken as shared */
    }
}

static bool access_map(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx, int *map, bool divided) {
    unsigned used = 0;
    for (int d = 0; d < b->rank; d++) {
        const tir_expr *e = idx[d];
        int64_t c, div = 1;
        if (e && tir_expr_const_int(e, &c) && c == 0 && tir_buffer_dim(b, d) == 1) {
            map[d] = TLC_PAR_MAP_ZERO;
            continue;
        }
        if (divided && e && !tir_dtype_is_float(e->dtype) && !names_loop_var(loop, e, 0)) {
            map[d] = TLC_PAR_MAP_SHARED;
            continue;
        }
        if (divided && e && e->kind == TE_BINARY && e->u.bin.op == TB_FLOORDIV &&
            tir_expr_const_int(e->u.bin.b, &c) && c > 1 && c <= (1 << 20)) {
            div = c;
            e = e->u.bin.a;
        }
        if (!e || e->kind != TE_VAR) return false;
        int m = -1;
        for (int v = 0; v < loop->u.for_.nvars; v++)
            if (loop->u.for_.vars[v] == e->u.var) m = v;
        if (m < 0 || (used >> m & 1u)) return false;
        map[d] = TLC_PAR_MAP_DIVIDED(m, div);
        used |= 1u << m;
    }
    return true;
}

bool tlc_par_access_map(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx, int *map) {
    return access_map(loop, b, idx, map, false);
}

bool tlc_par_access_map_general(const tir_stmt *loop, const tir_buffer *b, tir_expr *const *idx, int *map) {
    return access_map(loop, b, idx, map, true);
}

/* B is the loop's own fragment, indexed by the loop variables in order:
 * every thread finds its element at the loop's slot. */
static bool is_own_fragment(const tlc_fragment *L, const tlc_fragment *B, const int *map, int brank) {
    if (brank != L->rank || tlc_fragment_has_padding(L) || !(L == B || tlc_fragment_equal(L, B))) return false;
    for (int d = 0; d < brank; d++)
        if (map[d] != d) return false;
    return true;
}

int64_t tlc_par_access_slot(const tlc_fragment *L, const tlc_fragment *B, const int *map, int brank, int64_t slot) {
    if (slot >= 0 && slot < L->slots && is_own_fragment(L, B, map, brank)) return slot;
    int64_t r = -1;
    int64_t logical[TLC_FRAG_MAX_RANK], bl[TLC_FRAG_MAX_RANK];
    for (int64_t t = 0; t < L->threads; t++) {
        if (!tlc_fragment_inverse(L, t, slot, logical, NULL) || tlc_fragment_is_hole(L, logical)) continue;
        for (int d = 0; d < brank; d++) {
            int m = map[d]; /* a shared index: its element 0, the others in the same thread's slots */
            bl[d] = m < 0 ? 0 : logical[m % TLC_PAR_MAP_STEP] / tlc_par_map_divisor(m);
        }
        int64_t bs = tlc_fragment_slot_of(B, bl, t);
        if (bs < 0 || (r >= 0 && bs != r)) return -2;
        r = bs;
    }
    return r;
}

th_expr *tlc_parallel_access_slot(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc) {
    const tlc_par_ctx *p = lc->par;
    int map[TLC_FRAG_MAX_RANK];
    if (!p || !b->fragment || b->rank > TLC_FRAG_MAX_RANK || !tlc_par_access_map_general(p->loop, b, idx, map)) {
        tlc_error(lc->diag, loc,
                  "fragment '%s' can be accessed only inside a Parallel loop, indexed by its loop variables",
                  b->name);
        return tlc_i32(lc, 0);
    }
    /* what layout inference's check found, if the layouts are still those
     * it saw, else anew */
    int64_t r = -3;
    const tir_stmt *loop = p->loop;
    for (int i = 0; i < loop->u.for_.npar_access && r == -3; i++) {
        const tir_par_access *x = &loop->u.for_.par_access[i];
        if (x->buf == b && x->buf_frag == b->fragment && memcmp(x->map, map, sizeof(int) * (size_t)b->rank) == 0 &&
            tlc_fragment_equal(x->loop_frag, p->frag) && p->slot >= 0 && p->slot < p->frag->slots)
            r = x->slot[p->slot];
    }
    if (r == -3) r = tlc_par_access_slot(p->frag, b->fragment, map, b->rank, p->slot);
    if (r == -2) {
        tlc_error(lc->diag, loc, "fragment '%s': this thread does not hold the element it needs here", b->name);
        return tlc_i32(lc, 0);
    }
    th_expr *slot = tlc_i32(lc, r < 0 ? 0 : r); /* -1: no thread runs this iteration (holes only) */
    /* an index the iterations share (lse[k, j]): the slot above is its
     * element 0's; its slot digits add the rest at run time */
    for (int d = 0; d < b->rank; d++) {
        if (map[d] != TLC_PAR_MAP_SHARED) continue;
        th_expr *v = tlc_let(lc, "shared_ix", tlc_coerce(lc, tlc_lower_expr(lc, idx[d]), th_scalar(TH_I32)));
        for (int i = 0; i < b->fragment->ndigits; i++) {
            const tlc_digit *g = &b->fragment->digits[i];
            if (g->dim != d) continue;
            th_expr *digit = th_bin(lc->a, THB_UREM, th_bin(lc->a, THB_UDIV, v, tlc_i32(lc, g->lstride)),
                                    tlc_i32(lc, g->extent));
            slot = th_bin(lc->a, THB_ADD, slot, th_bin(lc->a, THB_MUL, digit, tlc_i32(lc, g->tstride)));
        }
    }
    return slot;
}
