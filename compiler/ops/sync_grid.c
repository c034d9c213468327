/* sync_grid(): every block of the grid meets here (TileLang's
 * T.sync_grid, CUDA's grid.sync()). The runtime launches a kernel that
 * has one cooperatively (metadata `grid_sync`), so that all its blocks
 * are resident at once, or refuses the launch; a grid that does not fit
 * would wait forever.
 *
 * Lowered as cooperative groups do it: a block barrier; thread 0 fences
 * (what the block wrote before the barrier is visible at GPU scope), adds
 * to a u32 counter in global memory, 1 from every block but block 0,
 * 2^31 - (blocks - 1) from block 0, so that the grid's adds together flip
 * the counter's top bit and leave the rest as it was; it waits, loading
 * with acquire semantics, until the bit differs from the one it added to,
 * and fences again; a block barrier. The counter is a variable of the PTX
 * module (zero at load, never reset: every barrier leaves it with its top
 * bit flipped), one per kernel (th_kernel.grid_sync_counter), so two
 * launches of one loaded kernel must not run at the same time.
 *
 * It stands in the kernel body itself (sema): the interpreter, which runs
 * a grid's blocks one after the other, runs the body up to it in every
 * block, then on from it, each block keeping its state (interp.c). */
#include "../ir/tir_op.h"
#include "op_table.h"

static void sync_grid_print(tir_printer *p, const tir_stmt *s) {
    (void)s;
    tir_printer_puts(p, "sync_grid()");
}

static void sync_grid_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    (void)s;
    tlc_arena *a = lc->a;
    th_kernel *tk = lc->tk;
    if (!tk->grid_sync_counter) tk->grid_sync_counter = tlc_arena_printf(a, "tlc_grid_sync_%s", tk->name);
    tlc_emit(lc, th_barrier(a));
    /* the blocks of the grid, and this one's linear index (x fastest) */
    th_expr *nx = th_special_reg(a, THS_NCTAID_X), *ny = th_special_reg(a, THS_NCTAID_Y);
    th_expr *blocks = th_bin(a, THB_MUL, th_bin(a, THB_MUL, nx, ny), th_special_reg(a, THS_NCTAID_Z));
    th_expr *lin = th_bin(a, THB_ADD, th_special_reg(a, THS_CTAID_X),
                          th_bin(a, THB_MUL, nx, th_bin(a, THB_ADD, th_special_reg(a, THS_CTAID_Y),
                                                        th_bin(a, THB_MUL, ny, th_special_reg(a, THS_CTAID_Z)))));
    th_expr *first = th_bin(a, THB_SUB, tlc_i32(lc, (int32_t)0x80000000), th_bin(a, THB_SUB, blocks, tlc_i32(lc, 1)));
    th_expr *add = th_select(a, th_cmp(a, THC_EQ, lin, tlc_i32(lc, 0)), first, tlc_i32(lc, 1));
    tlc_ptrvec *one = tlc_lower_begin(lc);
    th_expr *args[1] = {add};
    tlc_emit_ptx(lc, tlc_ptx_grid_sync(a, tk->grid_sync_counter), args, 1, NULL, 0);
    th_stmt *one_st = tlc_lower_end(lc, one);
    tlc_emit(lc, th_if(a, th_cmp(a, THC_EQ, th_read(a, lc->tid), tlc_i32(lc, 0)), one_st, NULL));
    tlc_emit(lc, th_barrier(a));
}

const tlc_op_desc tlc_op_sync_grid = {
    .kind = TS_SYNC_GRID, .name = "sync_grid", .barrier = true,
    .print = sync_grid_print, .verify = tlc_op_check_nothing, .interp = tlc_op_step_nothing,
    .lower = sync_grid_lower, /* no operands, no layout */
};
