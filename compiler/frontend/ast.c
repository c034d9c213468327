/* AST node constructors: zeroed nodes in the compilation's arena. */
#include "ast.h"

ast_expr *ast_new_expr(tlc_arena *a, ast_expr_kind k, tlc_loc loc) {
    ast_expr *e = TLC_NEW(a, ast_expr);
    e->kind = k;
    e->loc = loc;
    return e;
}

ast_stmt *ast_new_stmt(tlc_arena *a, ast_stmt_kind k, tlc_loc loc) {
    ast_stmt *s = TLC_NEW(a, ast_stmt);
    s->kind = k;
    s->loc = loc;
    return s;
}

const char *ast_op_str(ast_op op) {
    switch (op) {
    case AOP_ADD: return "+";
    case AOP_SUB: return "-";
    case AOP_MUL: return "*";
    case AOP_DIV: return "/";
    case AOP_FLOORDIV: return "//";
    case AOP_MOD: return "%";
    case AOP_POW: return "**";
    case AOP_LSHIFT: return "<<";
    case AOP_RSHIFT: return ">>";
    case AOP_BITAND: return "&";
    case AOP_BITOR: return "|";
    case AOP_BITXOR: return "^";
    case AOP_LT: return "<";
    case AOP_LE: return "<=";
    case AOP_GT: return ">";
    case AOP_GE: return ">=";
    case AOP_EQ: return "==";
    case AOP_NE: return "!=";
    case AOP_IS: return "is";
    case AOP_ISNOT: return "is not";
    case AOP_IN: return "in";
    case AOP_NOTIN: return "not in";
    case AOP_AND: return "and";
    case AOP_OR: return "or";
    case AOP_NEG: return "-";
    case AOP_POS: return "+";
    case AOP_NOT: return "not";
    case AOP_INVERT: return "~";
    }
    return "?";
}
