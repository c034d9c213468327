/* sync_threads(): a block barrier where the program writes it (bar.sync).
 * tlc places the barriers between accesses to shared memory itself; this
 * one orders what it does not track, such as one thread's stores to global
 * memory and another thread's loads of them in thread-indexed code. Every
 * thread must reach it (sema keeps it out of code where the threads part
 * ways), and a kernel with one is not warp-specialized (its warpgroups
 * would not all reach it). What was pending before it is ordered
 * (tlc_op_desc.barrier).
 *
 * sync_threads(id, count) is a named barrier of `count` threads, which
 * thread-indexed code may hold under a condition that only they take:
 * the program says which threads meet there, and what was pending is
 * ordered among them (tlc does not check that they are the ones that
 * touched it).
 *
 * No operands and no layout; the interpreter, which runs the block's
 * threads in lockstep, has nothing to do (where thread ranges run at the
 * same time, a named barrier is where they meet: interp/interp_ranges.c). */
#include "../ir/tir_op.h"
#include "op_table.h"

static void sync_threads_print(tir_printer *p, const tir_stmt *s) {
    if (s->u.sync.count)
        tir_printer_printf(p, "sync_threads(%d, %d)", s->u.sync.id, s->u.sync.count);
    else
        tir_printer_puts(p, "sync_threads()");
}

static void sync_threads_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    if (s->u.sync.count)
        tlc_emit(lc, th_barrier_sync(lc->a, s->u.sync.id, s->u.sync.count));
    else
        tlc_emit(lc, tlc_barrier(lc));
}

const tlc_op_desc tlc_op_sync_threads = {
    .kind = TS_SYNC_THREADS, .name = "sync_threads", .barrier = true,
    .print = sync_threads_print, .verify = tlc_op_check_nothing, .interp = tlc_op_step_nothing,
    .lower = sync_threads_lower, /* no operands, no layout */
};
