/* Loops that end early (docs/language.md, "while, break and continue"):
 * `while cond:`, and `break` / `continue` in serial loops and while loops.
 *
 * Tile IR has one loop statement with a known iteration count, and every
 * pass reads it; an early end is written in it as data rather than
 * control flow. A serial loop gets a condition (tir_stmt.for_.cond),
 * tested before each iteration: a while loop is a serial loop over
 * [0, 2^31 - 1) whose condition is the program's. `break` sets a flag
 * the loop's condition tests; `continue` sets a flag cleared at the start
 * of each iteration; the statements after one that may set either run
 * under `if` the flags are clear (sema_stmts). So the interpreter,
 * layout inference, planning and the thread-varying analysis see nothing
 * new but a condition, and lowering gives the loop a real exit test
 * (Thread IR's loop condition). */
#include <string.h>
#include "sema_internal.h"
#include "../ir/tir_access.h"

enum { MAX_GUARDS = 100 }; /* statements that may end an iteration, per block */

struct sema_loop_exit {
    tir_var *brk, *cont;  /* the flags (NULL where the body has no break / continue) */
    const char *refused;  /* a loop that cannot end early ("a Parallel loop"); NULL: serial */
    int guards;           /* guards open around the statement being read (nesting depth) */
};

/* s may end this iteration of its loop: a break or continue in it, not
 * inside a loop of its own. */
static bool exits(const ast_stmt *s, int kind, int depth) {
    if (!s || depth > 200) return false;
    const ast_block *blocks[2] = {NULL, NULL};
    switch (s->kind) {
    case AS_BREAK: case AS_CONTINUE: return kind < 0 || (int)s->kind == kind;
    case AS_IF: blocks[0] = &s->u.if_.then; blocks[1] = &s->u.if_.els; break;
    case AS_WITH: blocks[0] = &s->u.with.body; break;
    default: return false;
    }
    for (int b = 0; b < 2; b++)
        for (int i = 0; blocks[b] && i < blocks[b]->n; i++)
            if (exits(blocks[b]->stmts[i], kind, depth + 1)) return true;
    return false;
}

static bool block_exits(const ast_block *b, int kind) {
    for (int i = 0; i < b->n; i++)
        if (exits(b->stmts[i], kind, 0)) return true;
    return false;
}

static tir_expr *flag_clear(sema *S, tir_var *v, tlc_loc loc) {
    return sema_binary(S, TB_EQ, tir_var_ref(S->arena, v, loc), tir_int(S->arena, 0, loc), loc);
}

/* The flags clear: the rest of an iteration runs. */
static tir_expr *running(sema *S, const sema_loop_exit *x, tlc_loc loc) {
    tir_expr *c = NULL;
    if (x->brk) c = flag_clear(S, x->brk, loc);
    if (x->cont) {
        tir_expr *k = flag_clear(S, x->cont, loc);
        c = c ? sema_binary(S, TB_AND, c, k, loc) : k;
    }
    return c;
}

static void set_flag(sema *S, tir_stmt_kind kind, tir_var *v, int value, tlc_loc loc) {
    tir_stmt *st = tir_new_stmt(S->arena, kind, loc);
    st->u.let.var = v;
    st->u.let.value = tir_int(S->arena, value, loc);
    sema_emit(S, st);
}

static tir_var *new_flag(sema *S, const char *name, tlc_loc loc) {
    tir_var *v = sema_new_var(S, name, TV_LET, TIR_I32, loc);
    set_flag(S, TS_LET, v, 0, loc); /* before the loop */
    return v;
}

sema_loop_exit *sema_loop_exit_open(sema *S, const ast_block *body, const char *refused, tlc_loc loc,
                                    sema_loop_exit **saved) {
    sema_loop_exit *x = TLC_NEW(S->arena, sema_loop_exit);
    x->refused = refused;
    if (!refused) {
        if (block_exits(body, AS_BREAK)) x->brk = new_flag(S, "brk", loc);
        if (block_exits(body, AS_CONTINUE)) x->cont = new_flag(S, "cont", loc);
    }
    *saved = S->loop_exit;
    S->loop_exit = x;
    return x;
}

void sema_loop_exit_close(sema *S, sema_loop_exit *saved) { S->loop_exit = saved; }

void sema_loop_exit_finish(sema *S, sema_loop_exit *x, tir_stmt *loop, tir_expr *cond) {
    if (!loop) return;
    tlc_loc loc = loop->loc;
    if (x->brk) {
        tir_expr *c = flag_clear(S, x->brk, loc);
        cond = cond ? sema_binary(S, TB_AND, cond, c, loc) : c;
    }
    loop->u.for_.cond = cond;
    if (x->cont && loop->u.for_.body) {
        /* each iteration starts with continue's flag clear */
        tlc_ptrvec v;
        memset(&v, 0, sizeof v);
        tlc_ptrvec *was = S->cur;
        S->cur = &v;
        set_flag(S, TS_ASSIGN, x->cont, 0, loc);
        sema_emit(S, loop->u.for_.body);
        S->cur = was;
        loop->u.for_.body = sema_seq_stmt(S, (tir_stmt **)v.items, v.len, loc);
        tlc_ptrvec_free(&v);
    }
}

void sema_stmts(sema *S, const ast_block *b, int from) {
    for (int i = from; i < b->n && !tlc_diag_too_many(S->diag); i++) {
        const ast_stmt *st = b->stmts[i];
        sema_stmt(S, st);
        sema_loop_exit *x = S->loop_exit;
        if (st->kind == AS_BREAK || st->kind == AS_CONTINUE) return; /* what follows never runs */
        if (!x || x->refused || i + 1 >= b->n || !exits(st, -1, 0)) continue;
        if (x->guards >= MAX_GUARDS) {
            tlc_error(S->diag, st->loc, "more than %d statements in one loop body may end its iteration, one after "
                      "the other: merge their conditions", MAX_GUARDS);
            return;
        }
        /* the rest of the block runs only where this one ended nothing */
        tlc_ptrvec rest;
        memset(&rest, 0, sizeof rest);
        tlc_ptrvec *was = S->cur;
        S->cur = &rest;
        x->guards++;
        sema_stmts(S, b, i + 1);
        x->guards--;
        S->cur = was;
        tlc_loc loc = b->stmts[i + 1]->loc;
        tir_stmt *g = tir_new_stmt(S->arena, TS_IF, loc);
        g->u.if_.cond = running(S, x, loc);
        g->u.if_.then = sema_seq_stmt(S, (tir_stmt **)rest.items, rest.len, loc);
        tlc_ptrvec_free(&rest);
        sema_emit(S, g);
        return;
    }
}

void sema_loop_exit_stmt(sema *S, const ast_stmt *s) {
    const char *what = s->kind == AS_BREAK ? "break" : "continue";
    sema_loop_exit *x = S->loop_exit;
    if (!S->in_kernel) {
        tlc_error(S->diag, s->loc, "'%s' outside the kernel is not supported here", what);
        return;
    }
    if (!x) {
        tlc_error(S->diag, s->loc, "'%s' outside a loop", what);
        return;
    }
    if (x->refused) {
        tlc_error(S->diag, s->loc, "'%s' in %s: its iterations are the block's work, spread over the threads, and "
                  "cannot end early; use a serial loop, or a condition around the iteration's statements",
                  what, x->refused);
        return;
    }
    set_flag(S, TS_ASSIGN, s->kind == AS_BREAK ? x->brk : x->cont, 1, s->loc);
}

/* e reads shared memory or a fragment: a loop condition may not (it is
 * tested by each thread at the loop's head, where tlc places no barrier). */
static void block_buffer(const tir_access *acc, void *ctx) {
    const tir_buffer **found = ctx;
    if (!*found && (acc->buf->scope == TIR_SCOPE_SHARED || acc->buf->scope == TIR_SCOPE_FRAGMENT)) *found = acc->buf;
}

/* What a while loop's body changes of what its condition reads: a
 * condition that reads only values the body leaves alone (and no global
 * memory, which other blocks may change) holds forever once true. */
typedef struct cond_reads {
    const tir_expr *cond;
    bool changes; /* the body writes something the condition reads */
    const tir_var *var;
    const tir_buffer *buf;
} cond_reads;

static void var_in_cond(const tir_var *v, void *ctx) {
    cond_reads *r = ctx;
    if (v == r->var) r->changes = true;
}

static void buf_in_cond(const tir_access *acc, void *ctx) {
    cond_reads *r = ctx;
    if (acc->buf == r->buf) r->changes = true;
}

static void written(const tir_access *acc, void *ctx) {
    cond_reads *r = ctx;
    if (!(acc->mode & TIR_ACCESS_WRITE) || r->changes) return;
    r->buf = acc->buf;
    tir_expr_accesses(r->cond, NULL, buf_in_cond, r);
}

static void assigned(cond_reads *r, const tir_stmt *s) {
    if (!s || r->changes) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) assigned(r, s->u.seq.stmts[i]);
        return;
    case TS_IF: assigned(r, s->u.if_.then); assigned(r, s->u.if_.els); return;
    case TS_FOR: assigned(r, s->u.for_.body); return;
    case TS_LET: case TS_ASSIGN:
        r->var = s->u.let.var;
        tir_expr_vars(r->cond, var_in_cond, r);
        return;
    default: return;
    }
}

static void global_read(const tir_access *acc, void *ctx) {
    if (acc->buf->scope == TIR_SCOPE_GLOBAL) *(bool *)ctx = true;
}

static bool body_changes_cond(const tir_expr *cond, const tir_stmt *body) {
    bool global = false;
    tir_expr_accesses(cond, NULL, global_read, &global);
    cond_reads r = {cond, global, NULL, NULL};
    assigned(&r, body);
    if (!r.changes) tir_stmt_accesses(body, written, &r);
    return r.changes;
}

void sema_while(sema *S, const ast_stmt *s) {
    if (!S->in_kernel) {
        tlc_error(S->diag, s->loc, "while loops outside the kernel are not supported");
        return;
    }
    if (!sema_check_not_in_parallel(S, s->loc, "a while loop")) return;
    int emitted = S->cur ? S->cur->len : 0;
    tir_expr *c = sema_eval_scalar(S, s->u.while_.cond);
    if (c) c = sema_to_bool(S, c, s->u.while_.cond, "the condition of 'while'");
    if (c && S->cur && S->cur->len != emitted) {
        tlc_error(S->diag, s->u.while_.cond->loc, "the condition of 'while' makes a statement (an atomic_add): it would "
                  "run once, before the loop; make it at the end of the body into a T.alloc_var and test that");
        c = NULL;
    }
    const tir_buffer *blk = NULL;
    if (c) tir_expr_accesses(c, NULL, block_buffer, &blk);
    if (blk) {
        tlc_error(S->diag, s->u.while_.cond->loc, "the condition of 'while' reads %s '%s': each thread tests it at "
                  "the loop's head, with no barrier there; copy the value into a T.alloc_var at the end of the body "
                  "and test that", blk->scope == TIR_SCOPE_SHARED ? "shared buffer" : "fragment", blk->name);
        c = NULL;
    }
    if (c && c->kind == TE_INT && c->u.ival && !block_exits(&s->u.while_.body, AS_BREAK)) {
        tlc_error(S->diag, s->u.while_.cond->loc, "this while loop never ends: its condition is always true and "
                  "its body has no 'break'");
        c = NULL;
    }
    if (c && c->kind == TE_INT && !c->u.ival) return; /* never runs */
    sema_loop_exit *saved;
    sema_loop_exit *x = sema_loop_exit_open(S, &s->u.while_.body, NULL, s->loc, &saved);
    sema_push_scope(S);
    tir_var *v = sema_new_var(S, "w", TV_LOOP, TIR_I32, s->loc);
    tir_stmt *body = sema_block_stmt(S, &s->u.while_.body, s->loc);
    sema_pop_scope(S);
    sema_loop_exit_close(S, saved);
    if (!c) return;
    if (c->kind != TE_INT && !x->brk && !body_changes_cond(c, body)) {
        tlc_error(S->diag, s->u.while_.cond->loc, "this while loop never ends once it starts: its body changes nothing "
                  "its condition reads, and has no 'break'");
        return;
    }
    int64_t count = INT32_MAX;
    tir_stmt *loop = sema_loop_stmt(S, TIR_FOR_SERIAL, &v, &count, 1, body, s->loc);
    sema_loop_exit_finish(S, x, loop, c->kind == TE_INT ? NULL : c);
    sema_emit(S, loop);
}
