/* AST printers for --emit=ast and the tests. Expressions print in source
 * form with explicit parentheses around every compound operand, so the
 * dump shows how precedence was resolved: `a + b * c` -> `a + (b * c)`.
 * Statements print one per line, indented by nesting, with line:col.
 * Recursion is safe: the parser bounds the depth (TLC_AST_MAX_DEPTH). */
#include "ast.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void print_expr(tlc_strbuf *sb, const ast_expr *e, bool operand);

static bool is_compound(const ast_expr *e) {
    switch (e->kind) {
    case AE_BINARY: case AE_UNARY: case AE_COMPARE: case AE_BOOLOP: case AE_IFEXP: case AE_LAMBDA:
        return true;
    case AE_INT: return e->u.ival < 0;
    case AE_FLOAT: return signbit(e->u.fval);
    default: return false;
    }
}

static void print_string(tlc_strbuf *sb, const char *s) {
    tlc_sb_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '\n': tlc_sb_puts(sb, "\\n"); break;
        case '\t': tlc_sb_puts(sb, "\\t"); break;
        case '\r': tlc_sb_puts(sb, "\\r"); break;
        case '\\': tlc_sb_puts(sb, "\\\\"); break;
        case '"': tlc_sb_puts(sb, "\\\""); break;
        default:
            if (*p < 32 || *p == 127) tlc_sb_printf(sb, "\\x%02x", *p);
            else tlc_sb_putc(sb, (char)*p);
        }
    }
    tlc_sb_putc(sb, '"');
}

/* Shortest form that reads back as the same double, always float-looking. */
static void print_float(tlc_strbuf *sb, double v) {
    if (isinf(v)) {
        tlc_sb_puts(sb, v > 0 ? "inf" : "-inf");
        return;
    }
    if (isnan(v)) {
        tlc_sb_puts(sb, "nan");
        return;
    }
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    tlc_sb_puts(sb, buf);
    if (!strpbrk(buf, ".eEn")) tlc_sb_puts(sb, ".0");
}

static void print_list(tlc_strbuf *sb, ast_expr *const *items, int n) {
    for (int i = 0; i < n; i++) {
        if (i) tlc_sb_puts(sb, ", ");
        print_expr(sb, items[i], false);
    }
}

static void print_expr(tlc_strbuf *sb, const ast_expr *e, bool operand) {
    if (!e) {
        tlc_sb_puts(sb, "<null>");
        return;
    }
    bool paren = operand && is_compound(e);
    if (paren) tlc_sb_putc(sb, '(');
    switch (e->kind) {
    case AE_NAME: tlc_sb_puts(sb, e->u.name); break;
    case AE_INT: tlc_sb_printf(sb, "%lld", (long long)e->u.ival); break;
    case AE_FLOAT: print_float(sb, e->u.fval); break;
    case AE_STRING: print_string(sb, e->u.str); break;
    case AE_BOOL: tlc_sb_puts(sb, e->u.bval ? "True" : "False"); break;
    case AE_NONE: tlc_sb_puts(sb, "None"); break;
    case AE_ELLIPSIS: tlc_sb_puts(sb, "..."); break;
    case AE_ATTR:
        print_expr(sb, e->u.attr.value, true);
        tlc_sb_printf(sb, ".%s", e->u.attr.name);
        break;
    case AE_CALL:
        print_expr(sb, e->u.call.func, true);
        tlc_sb_putc(sb, '(');
        print_list(sb, e->u.call.args, e->u.call.nargs);
        for (int i = 0; i < e->u.call.nkwargs; i++) {
            if (i || e->u.call.nargs) tlc_sb_puts(sb, ", ");
            tlc_sb_printf(sb, "%s=", e->u.call.kwargs[i].name);
            print_expr(sb, e->u.call.kwargs[i].value, false);
        }
        tlc_sb_putc(sb, ')');
        break;
    case AE_SUBSCRIPT:
        print_expr(sb, e->u.sub.value, true);
        tlc_sb_putc(sb, '[');
        print_list(sb, e->u.sub.index, e->u.sub.nindex);
        tlc_sb_putc(sb, ']');
        break;
    case AE_SLICE:
        if (e->u.slice.lo) print_expr(sb, e->u.slice.lo, false);
        tlc_sb_putc(sb, ':');
        if (e->u.slice.hi) print_expr(sb, e->u.slice.hi, false);
        if (e->u.slice.step) {
            tlc_sb_putc(sb, ':');
            print_expr(sb, e->u.slice.step, false);
        }
        break;
    case AE_TUPLE:
        tlc_sb_putc(sb, '(');
        print_list(sb, e->u.seq.items, e->u.seq.n);
        if (e->u.seq.n == 1) tlc_sb_putc(sb, ',');
        tlc_sb_putc(sb, ')');
        break;
    case AE_LIST:
        tlc_sb_putc(sb, '[');
        print_list(sb, e->u.seq.items, e->u.seq.n);
        tlc_sb_putc(sb, ']');
        break;
    case AE_DICT:
        tlc_sb_putc(sb, '{');
        for (int i = 0; i < e->u.dict.n; i++) {
            if (i) tlc_sb_puts(sb, ", ");
            print_expr(sb, e->u.dict.keys[i], false);
            tlc_sb_puts(sb, ": ");
            print_expr(sb, e->u.dict.values[i], false);
        }
        tlc_sb_putc(sb, '}');
        break;
    case AE_BINARY: case AE_COMPARE: case AE_BOOLOP:
        print_expr(sb, e->u.bin.lhs, true);
        tlc_sb_printf(sb, " %s ", ast_op_str(e->u.bin.op));
        print_expr(sb, e->u.bin.rhs, true);
        break;
    case AE_UNARY:
        tlc_sb_puts(sb, ast_op_str(e->u.un.op));
        if (e->u.un.op == AOP_NOT) tlc_sb_putc(sb, ' ');
        print_expr(sb, e->u.un.operand, true);
        break;
    case AE_IFEXP:
        print_expr(sb, e->u.ifexp.then, true);
        tlc_sb_puts(sb, " if ");
        print_expr(sb, e->u.ifexp.cond, true);
        tlc_sb_puts(sb, " else ");
        print_expr(sb, e->u.ifexp.els, true);
        break;
    case AE_COMP:
        tlc_sb_putc(sb, e->u.comp.list ? '[' : '(');
        print_expr(sb, e->u.comp.elt, true);
        tlc_sb_puts(sb, " for ");
        print_expr(sb, e->u.comp.target, true);
        tlc_sb_puts(sb, " in ");
        print_expr(sb, e->u.comp.iter, true);
        if (e->u.comp.cond) {
            tlc_sb_puts(sb, " if ");
            print_expr(sb, e->u.comp.cond, true);
        }
        tlc_sb_putc(sb, e->u.comp.list ? ']' : ')');
        break;
    case AE_LAMBDA:
        tlc_sb_puts(sb, "lambda");
        for (int i = 0; i < e->u.lambda.nparams; i++)
            tlc_sb_printf(sb, "%s%s", i ? ", " : " ", e->u.lambda.params[i]->u.name);
        tlc_sb_puts(sb, ": ");
        print_expr(sb, e->u.lambda.body, false);
        break;
    }
    if (paren) tlc_sb_putc(sb, ')');
}

void ast_print_expr(tlc_strbuf *sb, const ast_expr *e) { print_expr(sb, e, false); }

static void print_loc(tlc_strbuf *sb, tlc_loc loc) { tlc_sb_printf(sb, " @%d:%d\n", loc.line, loc.col); }

static void print_func(tlc_strbuf *sb, const ast_funcdef *f, int depth);

static void print_block(tlc_strbuf *sb, const ast_block *b, int depth) {
    for (int i = 0; i < b->n; i++) {
        const ast_stmt *s = b->stmts[i];
        if (s->kind == AS_FUNCDEF) {
            print_func(sb, s->u.func, depth);
            continue;
        }
        tlc_sb_indent(sb, depth);
        switch (s->kind) {
        case AS_EXPR:
            tlc_sb_puts(sb, "Expr ");
            ast_print_expr(sb, s->u.expr);
            break;
        case AS_ASSIGN:
            tlc_sb_puts(sb, "Assign ");
            ast_print_expr(sb, s->u.assign.target);
            tlc_sb_puts(sb, " = ");
            ast_print_expr(sb, s->u.assign.value);
            break;
        case AS_AUGASSIGN:
            tlc_sb_puts(sb, "AugAssign ");
            ast_print_expr(sb, s->u.aug.target);
            tlc_sb_printf(sb, " %s= ", ast_op_str(s->u.aug.op));
            ast_print_expr(sb, s->u.aug.value);
            break;
        case AS_ANNASSIGN:
            tlc_sb_puts(sb, "AnnAssign ");
            ast_print_expr(sb, s->u.ann.target);
            tlc_sb_puts(sb, ": ");
            ast_print_expr(sb, s->u.ann.annotation);
            if (s->u.ann.value) {
                tlc_sb_puts(sb, " = ");
                ast_print_expr(sb, s->u.ann.value);
            }
            break;
        case AS_FOR:
            tlc_sb_puts(sb, "For ");
            ast_print_expr(sb, s->u.for_.target);
            tlc_sb_puts(sb, " in ");
            ast_print_expr(sb, s->u.for_.iter);
            break;
        case AS_WHILE:
            tlc_sb_puts(sb, "While ");
            ast_print_expr(sb, s->u.while_.cond);
            break;
        case AS_IF:
            tlc_sb_puts(sb, "If ");
            ast_print_expr(sb, s->u.if_.cond);
            break;
        case AS_WITH:
            tlc_sb_puts(sb, "With ");
            ast_print_expr(sb, s->u.with.item);
            if (s->u.with.target) {
                tlc_sb_puts(sb, " as ");
                ast_print_expr(sb, s->u.with.target);
            }
            break;
        case AS_PASS: tlc_sb_puts(sb, "Pass"); break;
        case AS_RETURN:
            tlc_sb_puts(sb, "Return");
            if (s->u.expr) {
                tlc_sb_putc(sb, ' ');
                ast_print_expr(sb, s->u.expr);
            }
            break;
        case AS_BREAK: tlc_sb_puts(sb, "Break"); break;
        case AS_CONTINUE: tlc_sb_puts(sb, "Continue"); break;
        case AS_ASSERT:
            tlc_sb_puts(sb, "Assert ");
            ast_print_expr(sb, s->u.assert_.cond);
            if (s->u.assert_.msg) {
                tlc_sb_puts(sb, ", ");
                ast_print_expr(sb, s->u.assert_.msg);
            }
            break;
        case AS_RAISE:
            tlc_sb_puts(sb, "Raise");
            if (s->u.expr) {
                tlc_sb_putc(sb, ' ');
                ast_print_expr(sb, s->u.expr);
            }
            break;
        case AS_FUNCDEF: break; /* handled above */
        }
        print_loc(sb, s->loc);
        switch (s->kind) {
        case AS_FOR: print_block(sb, &s->u.for_.body, depth + 1); break;
        case AS_WHILE: print_block(sb, &s->u.while_.body, depth + 1); break;
        case AS_WITH: print_block(sb, &s->u.with.body, depth + 1); break;
        case AS_IF:
            print_block(sb, &s->u.if_.then, depth + 1);
            if (s->u.if_.els.n) {
                tlc_sb_indent(sb, depth);
                tlc_sb_puts(sb, "Else\n");
                print_block(sb, &s->u.if_.els, depth + 1);
            }
            break;
        default: break;
        }
    }
}

static void print_func(tlc_strbuf *sb, const ast_funcdef *f, int depth) {
    tlc_sb_indent(sb, depth);
    tlc_sb_printf(sb, "FuncDef %s", f->name);
    print_loc(sb, f->loc);
    for (int i = 0; i < f->ndecorators; i++) {
        tlc_sb_indent(sb, depth + 1);
        tlc_sb_puts(sb, "Decorator ");
        ast_print_expr(sb, f->decorators[i].expr);
        print_loc(sb, f->decorators[i].loc);
    }
    for (int i = 0; i < f->nparams; i++) {
        const ast_param *prm = &f->params[i];
        tlc_sb_indent(sb, depth + 1);
        tlc_sb_printf(sb, "Param %s", prm->name);
        if (prm->annotation) {
            tlc_sb_puts(sb, ": ");
            ast_print_expr(sb, prm->annotation);
        }
        if (prm->default_value) {
            tlc_sb_puts(sb, " = ");
            ast_print_expr(sb, prm->default_value);
        }
        print_loc(sb, prm->loc);
    }
    print_block(sb, &f->body, depth + 1);
}

void ast_print_module(tlc_strbuf *sb, const ast_module *m) {
    tlc_sb_puts(sb, "Module\n");
    if (!m) return;
    for (int i = 0; i < m->nglobals; i++) {
        const ast_stmt *s = m->globals[i];
        tlc_sb_indent(sb, 1);
        tlc_sb_puts(sb, "Global ");
        ast_print_expr(sb, s->u.assign.target);
        tlc_sb_puts(sb, " = ");
        ast_print_expr(sb, s->u.assign.value);
        print_loc(sb, s->loc);
    }
    for (int i = 0; i < m->nfuncs; i++) print_func(sb, m->funcs[i], 1);
}
