/* Tile IR printer: the deterministic text of --emit=tir and of the golden
 * tests. Python-shaped so a user can map it back to the source; tile ops
 * print whole with their regions; expressions get parentheses only where
 * Python's precedence needs them. No pointers or other run-dependent data
 * are printed. Names that several variables (or buffers) share inside one
 * kernel get their id appended (`i.3`) so the dump stays unambiguous. */
#include "tir.h"
#include "tir_op.h"
#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tir_printer {
    tlc_strbuf *sb;
    /* Indexed by id; true where the name is shared with another variable /
     * buffer of the kernel. NULL outside a kernel (plain names). */
    bool *var_dup;
    int nvar;
    bool *buf_dup;
    int nbuf;
};
typedef tir_printer printer;

/* ---------------- names ---------------- */

static void put_var(printer *p, const tir_var *v) {
    if (!v) { tlc_sb_puts(p->sb, "<null-var>"); return; }
    tlc_sb_puts(p->sb, v->name ? v->name : "<anon>");
    if (p->var_dup && v->id >= 0 && v->id < p->nvar && p->var_dup[v->id])
        tlc_sb_printf(p->sb, ".%d", v->id);
}

static void put_buf(printer *p, const tir_buffer *b) {
    if (!b) { tlc_sb_puts(p->sb, "<null-buffer>"); return; }
    tlc_sb_puts(p->sb, b->name ? b->name : "<anon>");
    if (p->buf_dup && b->id >= 0 && b->id < p->nbuf && p->buf_dup[b->id])
        tlc_sb_printf(p->sb, ".%d", b->id);
}

/* ---------------- expressions ---------------- */

/* Python precedence, loosest first. */
enum {
    P_SELECT = 1, P_OR, P_AND, P_NOT, P_CMP, P_BITOR, P_BITXOR, P_BITAND,
    P_SHIFT, P_ADD, P_MUL, P_UNARY, P_POW, P_ATOM
};

static int binop_prec(tir_binop op) {
    switch (op) {
    case TB_ADD: case TB_SUB: return P_ADD;
    case TB_MUL: case TB_DIV: case TB_FLOORDIV: case TB_FLOORMOD: return P_MUL;
    case TB_POW: return P_POW;
    case TB_LT: case TB_LE: case TB_GT: case TB_GE: case TB_EQ: case TB_NE: return P_CMP;
    case TB_AND: return P_AND;
    case TB_OR: return P_OR;
    case TB_BITAND: return P_BITAND;
    case TB_BITOR: return P_BITOR;
    case TB_BITXOR: return P_BITXOR;
    case TB_SHL: case TB_SHR: return P_SHIFT;
    case TB_MIN: case TB_MAX: return P_ATOM; /* printed as calls */
    }
    return P_ATOM;
}

static const char *binop_text(tir_binop op) {
    switch (op) {
    case TB_ADD: return "+";
    case TB_SUB: return "-";
    case TB_MUL: return "*";
    case TB_DIV: return "/";
    case TB_FLOORDIV: return "//";
    case TB_FLOORMOD: return "%";
    case TB_POW: return "**";
    case TB_LT: return "<";
    case TB_LE: return "<=";
    case TB_GT: return ">";
    case TB_GE: return ">=";
    case TB_EQ: return "==";
    case TB_NE: return "!=";
    case TB_AND: return "and";
    case TB_OR: return "or";
    case TB_BITAND: return "&";
    case TB_BITOR: return "|";
    case TB_BITXOR: return "^";
    case TB_SHL: return "<<";
    case TB_SHR: return ">>";
    case TB_MIN: return "min";
    case TB_MAX: return "max";
    }
    return "?";
}

static const char *unop_call_name(tir_unop op) {
    switch (op) {
    case TU_EXP: return "exp";
    case TU_EXP2: return "exp2";
    case TU_LOG: return "log";
    case TU_LOG2: return "log2";
    case TU_RSQRT: return "rsqrt";
    case TU_SQRT: return "sqrt";
    case TU_ABS: return "abs";
    case TU_TANH: return "tanh";
    case TU_SIGMOID: return "sigmoid";
    case TU_ERF: return "erf";
    case TU_SIN: return "sin";
    case TU_COS: return "cos";
    case TU_FLOOR: return "floor";
    case TU_CEIL: return "ceil";
    case TU_LOG1P: return "log1p";
    case TU_NEG: case TU_NOT: case TU_BITNOT: break;
    }
    return NULL;
}

static const char *dtype_text(tir_dtype t) {
    return (unsigned)t < TIR_DTYPE_COUNT ? tir_dtype_name(t) : "<bad-dtype>";
}

/* Shortest text that reads back as the same double, always with a '.' or an
 * exponent so it reads as a float. */
static void put_double(tlc_strbuf *sb, double v) {
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
    tlc_sb_puts(sb, buf);
}

static void print_expr(printer *p, const tir_expr *e, int min_prec);

static void open_paren(printer *p, int prec, int min_prec) {
    if (prec < min_prec) tlc_sb_putc(p->sb, '(');
}
static void close_paren(printer *p, int prec, int min_prec) {
    if (prec < min_prec) tlc_sb_putc(p->sb, ')');
}

/* ceildiv(x, b) reaches the IR as (x + (b - 1)) // b; print it back the way
 * it was written. Returns the x operand when e has that shape. */
static const tir_expr *ceildiv_operand(const tir_expr *e, int64_t *divisor) {
    int64_t b, c;
    if (e->kind != TE_BINARY || e->u.bin.op != TB_FLOORDIV || !e->u.bin.a || !e->u.bin.b) return NULL;
    if (!tir_expr_const_int(e->u.bin.b, &b) || b <= 1) return NULL;
    const tir_expr *sum = e->u.bin.a;
    if (sum->kind != TE_BINARY || !sum->u.bin.a || !sum->u.bin.b) return NULL;
    if (sum->u.bin.op == TB_ADD && tir_expr_const_int(sum->u.bin.b, &c) && c == b - 1) {
        *divisor = b;
        return sum->u.bin.a;
    }
    /* ((x + b) - 1) // b, when the constructor did not fold */
    const tir_expr *inner = sum->u.bin.a;
    if (sum->u.bin.op == TB_SUB && tir_expr_const_int(sum->u.bin.b, &c) && c == 1 &&
        inner->kind == TE_BINARY && inner->u.bin.op == TB_ADD && inner->u.bin.a && inner->u.bin.b &&
        tir_expr_const_int(inner->u.bin.b, &c) && c == b) {
        *divisor = b;
        return inner->u.bin.a;
    }
    return NULL;
}

static void print_int(printer *p, const tir_expr *e, int min_prec) {
    int64_t v = e->u.ival;
    if (e->dtype == TIR_BOOL) {
        tlc_sb_puts(p->sb, v ? "True" : "False");
        return;
    }
    bool fits32 = v >= INT32_MIN && v <= INT32_MAX;
    tir_dtype natural = fits32 ? TIR_I32 : TIR_I64;
    if (e->dtype != natural) {
        tlc_sb_printf(p->sb, "%s(%" PRId64 ")", dtype_text(e->dtype), v);
        return;
    }
    int prec = v < 0 ? P_UNARY : P_ATOM;
    open_paren(p, prec, min_prec);
    tlc_sb_printf(p->sb, "%" PRId64, v);
    close_paren(p, prec, min_prec);
}

static void print_float(printer *p, const tir_expr *e, int min_prec) {
    double v = e->u.fval;
    bool wrap = e->dtype != TIR_F32;
    if (isnan(v)) {
        tlc_sb_printf(p->sb, "nan(%s)", dtype_text(e->dtype));
        return;
    }
    if (isinf(v)) {
        int prec = v < 0 ? P_UNARY : P_ATOM;
        open_paren(p, prec, min_prec);
        tlc_sb_printf(p->sb, "%sinfinity(%s)", v < 0 ? "-" : "", dtype_text(e->dtype));
        close_paren(p, prec, min_prec);
        return;
    }
    if (wrap) {
        tlc_sb_printf(p->sb, "%s(", dtype_text(e->dtype));
        put_double(p->sb, v);
        tlc_sb_putc(p->sb, ')');
        return;
    }
    int prec = signbit(v) ? P_UNARY : P_ATOM;
    open_paren(p, prec, min_prec);
    put_double(p->sb, v);
    close_paren(p, prec, min_prec);
}

static void print_index_list(printer *p, tir_expr *const *idx, int n) {
    for (int i = 0; i < n; i++) {
        if (i) tlc_sb_puts(p->sb, ", ");
        print_expr(p, idx ? idx[i] : NULL, 0);
    }
}

static void print_expr(printer *p, const tir_expr *e, int min_prec) {
    tlc_strbuf *sb = p->sb;
    if (!e) { tlc_sb_puts(sb, "<null>"); return; }
    switch (e->kind) {
    case TE_INT: print_int(p, e, min_prec); return;
    case TE_FLOAT: print_float(p, e, min_prec); return;
    case TE_VAR: put_var(p, e->u.var); return;
    case TE_LOAD: {
        const tir_buffer *b = e->u.load.buf;
        put_buf(p, b);
        if (b && b->rank > 0) {
            tlc_sb_putc(sb, '[');
            print_index_list(p, e->u.load.idx, b->rank);
            tlc_sb_putc(sb, ']');
        }
        return;
    }
    case TE_BINARY: {
        tir_binop op = e->u.bin.op;
        int64_t divisor;
        const tir_expr *x = ceildiv_operand(e, &divisor);
        if (x) {
            tlc_sb_puts(sb, "ceildiv(");
            print_expr(p, x, 0);
            tlc_sb_printf(sb, ", %" PRId64 ")", divisor);
            return;
        }
        if (op == TB_MIN || op == TB_MAX) {
            tlc_sb_printf(sb, "%s(", binop_text(op));
            print_expr(p, e->u.bin.a, 0);
            tlc_sb_puts(sb, ", ");
            print_expr(p, e->u.bin.b, 0);
            tlc_sb_putc(sb, ')');
            return;
        }
        int prec = binop_prec(op);
        /* Left-associative operators take an equal-precedence left operand;
         * ** is right-associative and binds tighter than a unary minus on
         * its left; comparisons would chain, so both sides bind tighter. */
        int lmin = prec, rmin = prec + 1;
        if (op == TB_POW) { lmin = P_ATOM; rmin = P_UNARY; }
        if (prec == P_CMP) lmin = P_CMP + 1;
        open_paren(p, prec, min_prec);
        print_expr(p, e->u.bin.a, lmin);
        tlc_sb_printf(sb, " %s ", binop_text(op));
        print_expr(p, e->u.bin.b, rmin);
        close_paren(p, prec, min_prec);
        return;
    }
    case TE_UNARY: {
        tir_unop op = e->u.un.op;
        const char *fn = unop_call_name(op);
        if (fn) {
            tlc_sb_printf(sb, "%s(", fn);
            print_expr(p, e->u.un.a, 0);
            tlc_sb_putc(sb, ')');
            return;
        }
        int prec = op == TU_NOT ? P_NOT : P_UNARY;
        open_paren(p, prec, min_prec);
        tlc_sb_puts(sb, op == TU_NOT ? "not " : op == TU_NEG ? "-" : "~");
        /* "- -x" would read as "--x": parenthesize a nested sign. */
        const tir_expr *a = e->u.un.a;
        bool nested_sign = a && op != TU_NOT &&
            ((a->kind == TE_UNARY && a->u.un.op != TU_NOT && !unop_call_name(a->u.un.op)) ||
             (a->kind == TE_INT && a->u.ival < 0 && a->dtype != TIR_BOOL) ||
             (a->kind == TE_FLOAT && signbit(a->u.fval) && !isnan(a->u.fval)));
        print_expr(p, a, nested_sign ? P_ATOM : prec);
        close_paren(p, prec, min_prec);
        return;
    }
    case TE_CAST:
        if (e->u.cast.bits) tlc_sb_printf(sb, "reinterpret(%s, ", dtype_text(e->dtype));
        else tlc_sb_printf(sb, "%s(", dtype_text(e->dtype));
        print_expr(p, e->u.cast.a, 0);
        tlc_sb_putc(sb, ')');
        return;
    case TE_SHUFFLE:
        tlc_sb_puts(sb, e->u.shfl.xor_lanes ? "shfl_xor(" : "shfl(");
        print_expr(p, e->u.shfl.value, 0);
        tlc_sb_puts(sb, ", ");
        print_expr(p, e->u.shfl.lane, 0);
        tlc_sb_printf(sb, ", width=%d)", e->u.shfl.width);
        return;
    case TE_SELECT:
        open_paren(p, P_SELECT, min_prec);
        print_expr(p, e->u.sel.a, P_OR);
        tlc_sb_puts(sb, " if ");
        print_expr(p, e->u.sel.cond, P_OR);
        tlc_sb_puts(sb, " else ");
        print_expr(p, e->u.sel.b, P_SELECT);
        close_paren(p, P_SELECT, min_prec);
        return;
    }
    tlc_sb_printf(sb, "<bad-expr-kind %d>", (int)e->kind);
}

/* ---------------- regions ---------------- */

static void print_region(printer *p, const tir_region *r) {
    tlc_strbuf *sb = p->sb;
    put_buf(p, r->buf);
    if (r->rank <= 0) return;
    tlc_sb_putc(sb, '[');
    for (int d = 0; d < r->rank; d++) {
        if (d) tlc_sb_puts(sb, ", ");
        const tir_expr *st = r->start ? r->start[d] : NULL;
        const tir_expr *ex = r->extent ? r->extent[d] : NULL;
        int64_t s, n;
        bool s_const = st && tir_expr_const_int(st, &s);
        bool n_const = ex && tir_expr_const_int(ex, &n);
        if (n_const && n == 1) { /* an indexed dim */
            print_expr(p, st, 0);
        } else if (s_const && n_const) {
            tlc_sb_printf(sb, "%" PRId64 ":%" PRId64, s, s + n);
        } else if (s_const && s == 0) {
            tlc_sb_puts(sb, "0:");
            print_expr(p, ex, 0);
        } else {
            print_expr(p, st, 0);
            tlc_sb_putc(sb, ':');
            print_expr(p, st, P_ADD);
            tlc_sb_puts(sb, " + ");
            print_expr(p, ex, P_MUL);
        }
    }
    tlc_sb_putc(sb, ']');
}

void tir_printer_puts(tir_printer *p, const char *text) { tlc_sb_puts(p->sb, text); }

void tir_printer_printf(tir_printer *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tlc_sb_vprintf(p->sb, fmt, ap);
    va_end(ap);
}

void tir_printer_region(tir_printer *p, const tir_region *r) { print_region(p, r); }

void tir_printer_expr(tir_printer *p, const tir_expr *e) { print_expr(p, e, 0); }

/* ---------------- statements ---------------- */

static void print_shape(printer *p, const tir_buffer *b) {
    tlc_sb_printf(p->sb, "%s", dtype_text(b->dtype));
    if (b->rank <= 0) return;
    tlc_sb_putc(p->sb, '[');
    print_index_list(p, b->shape, b->rank);
    tlc_sb_putc(p->sb, ']');
}

static const char *scope_text(tir_scope s) {
    switch (s) {
    case TIR_SCOPE_GLOBAL: return "global";
    case TIR_SCOPE_SHARED: return "shared";
    case TIR_SCOPE_FRAGMENT: return "fragment";
    case TIR_SCOPE_LOCAL: return "local";
    case TIR_SCOPE_VAR: return "var";
    }
    return "<bad-scope>";
}

const char *tir_bool_text(bool b) { return b ? "true" : "false"; }

static void print_stmt(printer *p, const tir_stmt *s, int depth);

/* Body of a for / if / else: one level deeper; `pass` when empty. */
static void print_block(printer *p, const tir_stmt *s, int depth) {
    if (!s || (s->kind == TS_SEQ && s->u.seq.n == 0)) {
        tlc_sb_indent(p->sb, depth);
        tlc_sb_puts(p->sb, "pass\n");
        return;
    }
    print_stmt(p, s, depth);
}

/* An else-branch that is exactly one `if` prints as elif. */
static const tir_stmt *as_elif(const tir_stmt *els) {
    if (!els) return NULL;
    if (els->kind == TS_IF) return els;
    if (els->kind == TS_SEQ && els->u.seq.n == 1 && els->u.seq.stmts && els->u.seq.stmts[0] &&
        els->u.seq.stmts[0]->kind == TS_IF)
        return els->u.seq.stmts[0];
    return NULL;
}

static const char *for_kind_text(tir_for_kind k) {
    switch (k) {
    case TIR_FOR_SERIAL: return "serial";
    case TIR_FOR_PARALLEL: return "parallel";
    case TIR_FOR_PIPELINED: return "pipelined";
    case TIR_FOR_UNROLLED: return "unroll";
    }
    return "<bad-for-kind>";
}

static void print_loop_stop(printer *p, const tir_expr *start, const tir_expr *count, int64_t step) {
    int64_t s0, n, stop;
    bool s_const = start && tir_expr_const_int(start, &s0);
    bool n_const = count && tir_expr_const_int(count, &n);
    if (s_const && n_const && !__builtin_mul_overflow(n, step, &stop) && !__builtin_add_overflow(stop, s0, &stop)) {
        tlc_sb_printf(p->sb, "%" PRId64, stop);
        return;
    }
    if (s_const && s0 == 0 && step == 1) {
        print_expr(p, count, 0);
        return;
    }
    if (!(s_const && s0 == 0)) {
        print_expr(p, start, P_ADD);
        tlc_sb_puts(p->sb, " + ");
    }
    print_expr(p, count, P_MUL);
    if (step != 1) tlc_sb_printf(p->sb, " * %s%" PRId64 "%s", step < 0 ? "(" : "", step, step < 0 ? ")" : "");
}

static void print_for(printer *p, const tir_stmt *s, int depth) {
    tlc_strbuf *sb = p->sb;
    int nv = s->u.for_.nvars;
    tlc_sb_puts(sb, "for ");
    for (int i = 0; i < nv; i++) {
        if (i) tlc_sb_puts(sb, ", ");
        put_var(p, s->u.for_.vars ? s->u.for_.vars[i] : NULL);
    }
    tlc_sb_printf(sb, " in %s(", for_kind_text(s->u.for_.kind));
    if (s->u.for_.kind == TIR_FOR_PARALLEL) {
        /* Parallel loops start at 0 (the verifier checks it): extents only. */
        print_index_list(p, s->u.for_.extent, nv);
    } else {
        /* range-like (start, stop[, step=s]) with an exclusive stop, computed
         * from the IR's iteration count: stop = start + count * step. */
        for (int i = 0; i < nv; i++) {
            const tir_expr *st = s->u.for_.start ? s->u.for_.start[i] : NULL;
            const tir_expr *ex = s->u.for_.extent ? s->u.for_.extent[i] : NULL;
            if (i) tlc_sb_puts(sb, ", ");
            print_expr(p, st, 0);
            tlc_sb_puts(sb, ", ");
            print_loop_stop(p, st, ex, s->u.for_.step);
        }
        if (s->u.for_.step != 1) tlc_sb_printf(sb, ", step=%" PRId64, s->u.for_.step);
        if (s->u.for_.kind == TIR_FOR_PIPELINED)
            tlc_sb_printf(sb, ", num_stages=%d", s->u.for_.num_stages);
    }
    tlc_sb_puts(sb, ")");
    if (s->u.for_.cond) {
        tlc_sb_puts(sb, " while ");
        print_expr(p, s->u.for_.cond, 0);
    }
    tlc_sb_puts(sb, s->u.for_.thread_varying ? ":  # varies by thread\n" : ":\n");
    print_block(p, s->u.for_.body, depth + 1);
}

static void print_if(printer *p, const tir_stmt *s, int depth) {
    tlc_strbuf *sb = p->sb;
    tlc_sb_puts(sb, "if ");
    for (;;) {
        print_expr(p, s->u.if_.cond, 0);
        tlc_sb_puts(sb, s->u.if_.thread_varying ? ":  # varies by thread\n" : ":\n");
        print_block(p, s->u.if_.then, depth + 1);
        const tir_stmt *elif = as_elif(s->u.if_.els);
        if (elif) {
            tlc_sb_indent(sb, depth);
            tlc_sb_puts(sb, "elif ");
            s = elif;
            continue;
        }
        if (s->u.if_.els) {
            tlc_sb_indent(sb, depth);
            tlc_sb_puts(sb, "else:\n");
            print_block(p, s->u.if_.els, depth + 1);
        }
        return;
    }
}

static void print_alloc(printer *p, const tir_buffer *b) {
    tlc_strbuf *sb = p->sb;
    tlc_sb_puts(sb, "alloc ");
    put_buf(p, b);
    if (!b) { tlc_sb_putc(sb, '\n'); return; }
    tlc_sb_printf(sb, ": %s ", scope_text(b->scope));
    print_shape(p, b);
    if (b->is_workspace) tlc_sb_puts(sb, "  # workspace");
    if (b->layout_hint == TIR_LAYOUT_HINT_SWIZZLED) tlc_sb_puts(sb, "  # layout: swizzled");
    tlc_sb_putc(sb, '\n');
}

static void print_stmt(printer *p, const tir_stmt *s, int depth) {
    tlc_strbuf *sb = p->sb;
    if (s && s->kind == TS_SEQ) {
        for (int i = 0; i < s->u.seq.n; i++)
            print_stmt(p, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, depth);
        return;
    }
    tlc_sb_indent(sb, depth);
    if (!s) { tlc_sb_puts(sb, "<null-stmt>\n"); return; }
    switch (s->kind) {
    case TS_SEQ: break; /* handled above */
    case TS_FOR: print_for(p, s, depth); return;
    case TS_IF: print_if(p, s, depth); return;
    case TS_ALLOC: print_alloc(p, s->u.alloc.buf); return;
    case TS_LET:
        tlc_sb_puts(sb, "let ");
        put_var(p, s->u.let.var);
        if (s->u.let.var) tlc_sb_printf(sb, ": %s", dtype_text(s->u.let.var->dtype));
        tlc_sb_puts(sb, " = ");
        print_expr(p, s->u.let.value, 0);
        break;
    case TS_ASSIGN:
        put_var(p, s->u.let.var);
        tlc_sb_puts(sb, " = ");
        print_expr(p, s->u.let.value, 0);
        break;
    case TS_STORE: {
        const tir_buffer *b = s->u.store.buf;
        put_buf(p, b);
        if (b && b->rank > 0) {
            tlc_sb_putc(sb, '[');
            print_index_list(p, s->u.store.idx, b->rank);
            tlc_sb_putc(sb, ']');
        }
        tlc_sb_puts(sb, " = ");
        print_expr(p, s->u.store.value, 0);
        break;
    }
    default: /* a tile op prints itself */
        if (s->op && s->op->print) s->op->print(p, s);
        else tlc_sb_printf(sb, "<bad-stmt-kind %d>", (int)s->kind);
        if (s->per_thread) tlc_sb_puts(sb, "  # per thread");
        break;
    }
    tlc_sb_putc(sb, '\n');
}

/* ---------------- duplicate-name detection ---------------- */

typedef struct named { const char *name; int id; } named;

static int cmp_named(const void *x, const void *y) {
    const named *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* Marks dup[id] for every id whose name another id shares. */
static void mark_dups(named *items, int n, bool *dup, int ndup) {
    qsort(items, (size_t)n, sizeof *items, cmp_named);
    for (int i = 1; i < n; i++) {
        if (strcmp(items[i].name, items[i - 1].name) == 0 && items[i].id != items[i - 1].id) {
            if (items[i].id >= 0 && items[i].id < ndup) dup[items[i].id] = true;
            if (items[i - 1].id >= 0 && items[i - 1].id < ndup) dup[items[i - 1].id] = true;
        }
    }
}

typedef struct var_list { named *items; int n, cap; } var_list;

static void add_var(var_list *l, const tir_var *v) {
    if (!v || !v->name) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        named *ni = realloc(l->items, (size_t)l->cap * sizeof *ni);
        if (!ni) abort();
        l->items = ni;
    }
    l->items[l->n++] = (named){v->name, v->id};
}

static void collect_vars(var_list *l, const tir_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) collect_vars(l, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL);
        break;
    case TS_FOR:
        for (int i = 0; i < s->u.for_.nvars && s->u.for_.vars; i++) add_var(l, s->u.for_.vars[i]);
        collect_vars(l, s->u.for_.body);
        break;
    case TS_IF:
        collect_vars(l, s->u.if_.then);
        collect_vars(l, s->u.if_.els);
        break;
    case TS_LET: add_var(l, s->u.let.var); break;
    default: break;
    }
}

/* Vars are unique objects per id; collect each declaration once. Sym dims,
 * block indices and scalar params are declared in the header. */
static void init_dups(printer *p, const tir_kernel *k) {
    var_list l = {0};
    for (int i = 0; i < k->nsym; i++) add_var(&l, k->sym_dims ? k->sym_dims[i] : NULL);
    for (int i = 0; i < k->grid_rank && i < 3; i++) add_var(&l, k->block_idx[i]);
    for (int i = 0; i < k->nparams; i++)
        if (k->params && k->params[i].kind == TIR_PARAM_SCALAR) add_var(&l, k->params[i].var);
    collect_vars(&l, k->body);
    int maxid = k->nvars;
    for (int i = 0; i < l.n; i++)
        if (l.items[i].id + 1 > maxid) maxid = l.items[i].id + 1;
    p->nvar = maxid;
    p->var_dup = calloc((size_t)maxid + 1, sizeof(bool));
    if (!p->var_dup) abort();
    mark_dups(l.items, l.n, p->var_dup, maxid);
    free(l.items);

    named *bn = calloc((size_t)k->nbuffers + 1, sizeof *bn);
    if (!bn) abort();
    int nb = 0, maxb = 0;
    for (int i = 0; i < k->nbuffers; i++) {
        const tir_buffer *b = k->buffers ? k->buffers[i] : NULL;
        if (!b || !b->name) continue;
        bn[nb++] = (named){b->name, b->id};
        if (b->id + 1 > maxb) maxb = b->id + 1;
    }
    p->nbuf = maxb;
    p->buf_dup = calloc((size_t)maxb + 1, sizeof(bool));
    if (!p->buf_dup) abort();
    mark_dups(bn, nb, p->buf_dup, maxb);
    free(bn);
}

/* ---------------- kernels and modules ---------------- */

static void print_const(tlc_strbuf *sb, const tir_const *c) {
    tlc_sb_printf(sb, "  const %s = ", c->name ? c->name : "<anon>");
    switch (c->kind) {
    case TIR_CONST_INT: tlc_sb_printf(sb, "%" PRId64, c->ival); break;
    case TIR_CONST_FLOAT:
        if (isinf(c->fval)) tlc_sb_puts(sb, c->fval < 0 ? "-inf" : "inf");
        else if (isnan(c->fval)) tlc_sb_puts(sb, "nan");
        else put_double(sb, c->fval);
        break;
    case TIR_CONST_DTYPE: tlc_sb_puts(sb, dtype_text(c->dtype)); break;
    case TIR_CONST_STRING: tlc_sb_printf(sb, "\"%s\"", c->sval ? c->sval : ""); break;
    case TIR_CONST_BOOL: tlc_sb_puts(sb, c->ival ? "True" : "False"); break;
    }
    if (c->overridden) tlc_sb_puts(sb, "  # -D");
    tlc_sb_putc(sb, '\n');
}

static void print_kernel(printer *p, const tir_kernel *k) {
    tlc_strbuf *sb = p->sb;
    tlc_sb_printf(sb, "kernel %s\n", k->name ? k->name : "<anon>");
    for (int i = 0; i < k->nparams; i++) {
        const tir_param *prm = &k->params[i];
        tlc_sb_puts(sb, "  param ");
        if (prm->kind == TIR_PARAM_TENSOR && prm->buf) {
            put_buf(p, prm->buf);
            tlc_sb_printf(sb, ": %s ", scope_text(prm->buf->scope));
            print_shape(p, prm->buf);
            if (prm->workspace) tlc_sb_printf(sb, "  # workspace of %s", k->function ? k->function->name : "?");
        } else if (prm->var) {
            put_var(p, prm->var);
            tlc_sb_printf(sb, ": %s", dtype_text(prm->var->dtype));
        } else {
            tlc_sb_puts(sb, prm->name ? prm->name : "<anon>");
        }
        tlc_sb_putc(sb, '\n');
    }
    if (k->nsym > 0) {
        tlc_sb_puts(sb, "  sym ");
        for (int i = 0; i < k->nsym; i++) {
            const tir_var *v = k->sym_dims[i];
            if (i) tlc_sb_puts(sb, ", ");
            put_var(p, v);
            if (v && v->dynamic) tlc_sb_puts(sb, " (dynamic)");
        }
        tlc_sb_putc(sb, '\n');
    }
    for (int i = 0; i < k->nconsts; i++) print_const(sb, &k->consts[i]);
    tlc_sb_puts(sb, "  grid (");
    for (int d = 0; d < k->grid_rank && d < 3; d++) {
        if (d) tlc_sb_puts(sb, ", ");
        print_expr(p, k->grid[d], 0);
    }
    tlc_sb_puts(sb, ") as (");
    for (int d = 0; d < k->grid_rank && d < 3; d++) {
        if (d) tlc_sb_puts(sb, ", ");
        put_var(p, k->block_idx[d]);
    }
    tlc_sb_printf(sb, ")\n  threads %d", k->threads);
    if (k->thread_dims[1] > 1 || k->thread_dims[2] > 1)
        tlc_sb_printf(sb, " (%d x %d x %d)", k->thread_dims[0], k->thread_dims[1], k->thread_dims[2]);
    tlc_sb_putc(sb, '\n');
    if (tir_cluster_axes(k)) {
        tlc_sb_puts(sb, "  cluster_dims (");
        for (int d = 0; d < k->grid_rank && d < 3; d++) {
            if (d) tlc_sb_puts(sb, ", ");
            if (k->cluster[d]) print_expr(p, k->cluster[d], 0);
            else tlc_sb_puts(sb, "1");
        }
        tlc_sb_puts(sb, ")\n");
    }
    if (k->pdl_wait) tlc_sb_puts(sb, "  pdl_sync (launched as a dependent of the previous kernel)\n");
    if (k->use_swizzle)
        tlc_sb_printf(sb, "  swizzle panel_size=%d order=%s\n", k->swizzle_panel, k->swizzle_col ? "col" : "row");
    if (k->fast_math) tlc_sb_puts(sb, "  fast_math\n");
    /* a hand-pipelined kernel's mbarriers: barrier g of its statements */
    for (int g = 0; g < k->nmbarrier_groups; g++) {
        tlc_sb_printf(sb, "  mbarrier %d: %s[%d] arrivals", g, k->mbarriers[g].name, k->mbarriers[g].n);
        for (int i = 0; i < k->mbarriers[g].n; i++)
            tlc_sb_printf(sb, "%s%" PRId64, i ? ", " : " ", k->mbarriers[g].counts[i]);
        tlc_sb_putc(sb, '\n');
    }
    tlc_sb_printf(sb, "  shared %" PRId64 " B\n", k->shared_bytes);
    tlc_sb_puts(sb, "  body:\n");
    print_block(p, k->body, 2);
}

void tir_print_kernel(tlc_strbuf *sb, const tir_kernel *k) {
    printer p = {.sb = sb};
    init_dups(&p, k);
    print_kernel(&p, k);
    free(p.var_dup);
    free(p.buf_dup);
}

/* The function record: its parameters, workspaces and kernels in launch order. */
static void print_function(tlc_strbuf *sb, const tir_function *f) {
    printer p = {.sb = sb};
    init_dups(&p, f->sig);
    tlc_sb_printf(sb, "function %s\n", f->name);
    for (int i = 0; i < f->sig->nparams; i++) {
        const tir_param *prm = &f->sig->params[i];
        tlc_sb_printf(sb, "  param %s: ", prm->name);
        if (prm->kind == TIR_PARAM_TENSOR) {
            tlc_sb_printf(sb, "%s ", scope_text(prm->buf->scope));
            print_shape(&p, prm->buf);
        } else {
            tlc_sb_puts(sb, dtype_text(prm->var->dtype));
        }
        tlc_sb_putc(sb, '\n');
    }
    for (int i = 0; i < f->nworkspaces; i++) {
        tlc_sb_printf(sb, "  workspace %s: ", f->workspaces[i]->name);
        print_shape(&p, f->workspaces[i]);
        tlc_sb_puts(sb, "  # uninitialized\n");
    }
    tlc_sb_puts(sb, "  launch");
    for (int i = 0; i < f->nkernels; i++) tlc_sb_printf(sb, "%s %s", i ? "," : "", f->kernels[i]->name);
    tlc_sb_putc(sb, '\n');
    free(p.var_dup);
    free(p.buf_dup);
}

void tir_print_module(tlc_strbuf *sb, const tir_module *m) {
    tlc_sb_printf(sb, "# Tile IR of %s for %s\n", m->source_name ? m->source_name : "<input>",
                  tlc_arch_name(m->arch));
    for (int i = 0; i < m->nkernels; i++) {
        const tir_function *f = m->kernels[i]->function;
        if (f && f->kernels[0] == m->kernels[i]) {
            tlc_sb_putc(sb, '\n');
            print_function(sb, f);
        }
        tlc_sb_putc(sb, '\n');
        tir_print_kernel(sb, m->kernels[i]);
    }
}

void tir_print_expr(tlc_strbuf *sb, const tir_expr *e) {
    printer p = {.sb = sb};
    print_expr(&p, e, 0);
}

void tir_print_region(tlc_strbuf *sb, const tir_region *r) {
    printer p = {.sb = sb};
    print_region(&p, r);
}
