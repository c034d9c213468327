/* A tile op's row in the op table: everything each stage asks of a tile
 * op, from its Tile IR (operands, printing, checks) to its interpreter step
 * and its back end (layout rule, scratch, lowering). The type lives here so
 * that the Tile IR's printer, verifier and access query can reach an op's
 * parts through its node (tir_stmt.op); the rows themselves, one per op,
 * are in ops/op_table.c next to the ops' files, which implement them. */
#ifndef TLC_IR_TIR_OP_H
#define TLC_IR_TIR_OP_H
#include "tir.h"
#include "tir_access.h"

struct tlc_infer;
struct tlc_lower_ctx;
struct tlc_interp;
typedef struct tir_printer tir_printer;
typedef struct tir_verifier tir_verifier;
typedef struct tir_access_walk tir_access_walk;

typedef struct tlc_op_desc {
    tir_stmt_kind kind; /* TS_FOR: a Parallel loop (a loop to the Tile IR; only its back-end parts are here) */
    const char *name;
    /* Tile IR: the op's operands, each region or expression in program
     * order (tir_access_region / tir_access_expr; NULL: none); its line of text
     * (without indentation or newline); its structural checks. */
    void (*accesses)(const tir_access_walk *w, const tir_stmt *s);
    void (*print)(tir_printer *p, const tir_stmt *s);
    void (*verify)(tir_verifier *v, const tir_stmt *s);
    /* The interpreter's step (interp/interp_internal.h). */
    void (*interp)(struct tlc_interp *it, const tir_stmt *s);
    /* Back end: layout rule (proposals from known layouts, free_pass false,
     * or also defaults, true; true if it proposed anything; NULL: no
     * operand has a layout), shared scratch
     * its lowering needs (NULL: never any), lowering to Thread IR. */
    bool (*infer)(struct tlc_infer *st, const tir_stmt *s, bool free_pass);
    int64_t (*scratch_bytes)(const tir_kernel *k, const tir_stmt *s);
    /* Scratch its lowering may use that must share bytes with nothing (it
     * is written while asynchronous loads may still fill other buffers):
     * planning places it after everything else (NULL: never any). */
    int64_t (*fresh_scratch_bytes)(const tir_kernel *k, const tir_stmt *s);
    void (*lower)(struct tlc_lower_ctx *lc, const tir_stmt *s);
    /* The op is a block barrier: what was pending before it is ordered. */
    bool barrier;
    /* Each thread that reaches it runs it by itself, under conditions and
     * loops its threads differ on too (a hand-pipelined kernel's mbarrier
     * operations, per-thread copies and waits): never the block's work. */
    bool each_thread;
} tlc_op_desc;

/* ---- for the ops' Tile IR parts ---- */
/* Access query (tir_access.c): one region operand, and the loads in an
 * expression operand, of statement `in`. */
void tir_access_region(const tir_access_walk *w, const tir_region *r, tir_access_mode mode, const tir_stmt *in);
void tir_access_expr(const tir_access_walk *w, const tir_expr *e, const tir_stmt *in);
/* Printer (tir_print.c). */
void tir_printer_puts(tir_printer *p, const char *s);
void tir_printer_printf(tir_printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tir_printer_region(tir_printer *p, const tir_region *r);
void tir_printer_expr(tir_printer *p, const tir_expr *e);
const char *tir_bool_text(bool b); /* "true" / "false" */
/* Verifier (tir_verify.c): a region operand's buffer, bounds and loads
 * (false when it is malformed), an expression operand, and a failure. */
bool tir_verifier_region(tir_verifier *v, const tir_region *r, tlc_loc at, const char *what);
void tir_verifier_expr(tir_verifier *v, const tir_expr *e, tlc_loc at);
void tir_verifier_fail(tir_verifier *v, tlc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
