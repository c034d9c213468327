/* T.set_max_nreg(n, is_inc) (docs/language.md 11.9): where the kernel's
 * thread ranges run as written, the warpgroup that runs it raises
 * (setmaxnreg.inc) or lowers (setmaxnreg.dec) its registers per thread to
 * n, as TileLang's hand-pipelined kernels give their consumers more than
 * the launch's even share (on targets with setmaxnreg; elsewhere nothing). Planning launches such a kernel one block per
 * SM (minnctapersm), as for its own warp specialization: a second block's
 * registers would leave an increase waiting. Elsewhere sema drops it (a
 * warning). No operands; nothing for the interpreter to do. */
#include "../ir/tir_op.h"
#include "op_table.h"

static void set_max_nreg_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    if (!tlc_target_of(lc->arch)->setmaxnreg) return; /* before sm_90a: every thread keeps the launch's */
    tlc_emit_ptx(lc, tlc_ptx_setmaxnreg(lc->a, s->u.max_nreg.inc, s->u.max_nreg.regs), NULL, 0, NULL, 0);
}

static void set_max_nreg_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_printf(p, "set_max_nreg(%d, %s)", s->u.max_nreg.regs, s->u.max_nreg.inc ? "inc" : "dec");
}

static void set_max_nreg_verify(tir_verifier *v, const tir_stmt *s) {
    int n = s->u.max_nreg.regs;
    if (n < 24 || n > 256 || n % 8) tir_verifier_fail(v, s->loc, "set_max_nreg(%d): 24 to 256, a multiple of 8", n);
}

const tlc_op_desc tlc_op_set_max_nreg = {
    .kind = TS_SET_MAX_NREG, .name = "set_max_nreg", .each_thread = true,
    .print = set_max_nreg_print, .verify = set_max_nreg_verify, .interp = tlc_op_step_nothing,
    .lower = set_max_nreg_lower, /* no operands, no layout */
};
