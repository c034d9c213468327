/* A run-time loop over the slots of a fragment, for walks that hold no
 * registers (copies and fills between memories, Parallel loops over shared
 * and global memory only): past TLC_UNROLLED_MAX_SLOT_GROUPS groups the
 * unrolled form costs LLVM more than it gains, so the body is emitted once,
 * its logical index computed from the loop counter. */
#include "lower_ctx.h"

bool tlc_slot_loop_wanted(const tlc_fragment *f, int64_t group) {
    return group > 0 && f->slots / group > TLC_UNROLLED_MAX_SLOT_GROUPS;
}

void tlc_slot_loop_begin(tlc_lower_ctx *lc, tlc_slot_loop *l, const tlc_fragment *f, int64_t group,
                         th_expr *const *tidx) {
    tlc_arena *a = lc->a;
    l->groups = f->slots / group;
    l->counter = tlc_temp(lc, "sg", th_scalar(TH_I32), 0);
    l->saved = tlc_lower_begin(lc);
    th_expr *g = th_read(a, l->counter);
    th_expr *s0 = th_bin(a, THB_MUL, g, tlc_i32(lc, group));
    th_expr *part[TLC_FRAG_MAX_RANK];
    for (int d = 0; d < f->rank; d++) part[d] = tlc_i32(lc, 0);
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *x = &f->digits[i];
        if (x->target != TLC_DIGIT_SLOT || x->dim < 0) continue;
        /* the digit's value in the group's first slot: from the counter
         * when the digit is above the group, else from the slot index */
        th_expr *v = x->tstride % group == 0 ? th_bin(a, THB_UDIV, g, tlc_i32(lc, x->tstride / group))
                                             : th_bin(a, THB_UDIV, s0, tlc_i32(lc, x->tstride));
        if (x->tstride * x->extent < f->slots) v = th_bin(a, THB_UREM, v, tlc_i32(lc, x->extent));
        part[x->dim] = th_bin(a, THB_ADD, part[x->dim], th_bin(a, THB_MUL, v, tlc_i32(lc, x->lstride)));
    }
    for (int d = 0; d < f->rank; d++) l->ilog[d] = tlc_let(lc, "sl", th_bin(a, THB_ADD, tidx[d], part[d]));
    l->valid = tlc_frag_valid_at(lc, f, l->ilog);
}

void tlc_slot_loop_end(tlc_lower_ctx *lc, tlc_slot_loop *l) {
    th_stmt *body = tlc_lower_end(lc, l->saved);
    tlc_emit(lc, th_for(lc->a, l->counter, tlc_i32(lc, 0), tlc_i32(lc, l->groups), 1, false, body));
}
