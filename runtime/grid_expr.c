/* Grid expressions: a tiny integer language over constants, symbolic dims and
 * integer scalar params. Text form is prefix with parentheses ("(ceildiv M
 * 4)"); the stored form is postfix so evaluation is a stack loop. */
#include <stdio.h>
#include <string.h>
#include "text_util.h"

static const struct { const char *text; tlrt_expr_op op; } binops[] = {
    {"+", TLRT_EX_ADD}, {"-", TLRT_EX_SUB}, {"*", TLRT_EX_MUL}, {"//", TLRT_EX_FLOORDIV},
    {"%", TLRT_EX_MOD}, {"ceildiv", TLRT_EX_CEILDIV}, {"min", TLRT_EX_MIN}, {"max", TLRT_EX_MAX},
    {"<", TLRT_EX_LT}, {"<=", TLRT_EX_LE}, {">", TLRT_EX_GT}, {">=", TLRT_EX_GE}, {"==", TLRT_EX_EQ},
    {"!=", TLRT_EX_NE}, {"and", TLRT_EX_AND}, {"or", TLRT_EX_OR},
};

static const char *op_text(tlrt_expr_op op) {
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (binops[i].op == op) return binops[i].text;
    return "?";
}

static bool is_operand(tlrt_expr_op op) { return op == TLRT_EX_INT || op == TLRT_EX_SYM || op == TLRT_EX_SCALAR; }
static bool is_binop(tlrt_expr_op op) { return op >= TLRT_EX_ADD && op <= TLRT_EX_OR; }

bool tlrt_expr_push(tlrt_expr *e, tlrt_expr_op op, int64_t value) {
    if (e->n < 0 || e->n >= TLRT_MAX_EXPR) return false;
    e->nodes[e->n].op = op;
    e->nodes[e->n].value = value;
    e->n++;
    return true;
}

bool tlrt_expr_check(const tlrt_expr *e, const tlrt_kernel_meta *k, char *err, size_t errlen) {
    if (e->n <= 0 || e->n > TLRT_MAX_EXPR) {
        tlrt_errf(err, errlen, "expression has %d nodes (1..%d allowed)", e->n, TLRT_MAX_EXPR);
        return false;
    }
    int depth = 0;
    for (int i = 0; i < e->n; i++) {
        const tlrt_expr_node *nd = &e->nodes[i];
        if (nd->op == TLRT_EX_SYM) {
            if (!k || nd->value < 0 || nd->value >= k->nsyms) {
                tlrt_errf(err, errlen, "expression refers to sym #%lld, which does not exist", (long long)nd->value);
                return false;
            }
        } else if (nd->op == TLRT_EX_SCALAR) {
            if (!k || nd->value < 0 || nd->value >= k->nparams || k->params[nd->value].kind != TLRT_PARAM_SCALAR ||
                !tlrt_dtype_is_int(k->params[nd->value].dtype)) {
                tlrt_errf(err, errlen, "expression refers to param #%lld, which is not an integer scalar",
                          (long long)nd->value);
                return false;
            }
        } else if (!is_operand(nd->op) && !is_binop(nd->op)) {
            tlrt_errf(err, errlen, "expression has an unknown operator (%d)", (int)nd->op);
            return false;
        }
        if (is_operand(nd->op)) depth++;
        else if (depth < 2) {
            tlrt_errf(err, errlen, "operator '%s' lacks operands", op_text(nd->op));
            return false;
        } else depth--;
    }
    if (depth != 1) {
        tlrt_errf(err, errlen, "expression leaves %d values instead of 1", depth);
        return false;
    }
    return true;
}

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

bool tlrt_expr_eval(const tlrt_expr *e, const int64_t *syms, const int64_t *scalars, int64_t *out,
                    char *err, size_t errlen) {
    int64_t st[TLRT_MAX_EXPR];
    int sp = 0;
    if (e->n <= 0 || e->n > TLRT_MAX_EXPR) {
        tlrt_errf(err, errlen, "malformed expression");
        return false;
    }
    for (int i = 0; i < e->n; i++) {
        const tlrt_expr_node *nd = &e->nodes[i];
        if (is_operand(nd->op)) {
            int64_t v = nd->value;
            if (nd->op == TLRT_EX_SYM) {
                if (!syms || v < 0 || v >= TLRT_MAX_SYMS) goto malformed;
                v = syms[v];
            } else if (nd->op == TLRT_EX_SCALAR) {
                if (!scalars || v < 0 || v >= TLRT_MAX_PARAMS) goto malformed;
                v = scalars[v];
            }
            st[sp++] = v;
            continue;
        }
        if (!is_binop(nd->op) || sp < 2) goto malformed;
        int64_t b = st[--sp], a = st[--sp], r = 0;
        bool ovf = false;
        switch (nd->op) {
        case TLRT_EX_ADD: ovf = __builtin_add_overflow(a, b, &r); break;
        case TLRT_EX_SUB: ovf = __builtin_sub_overflow(a, b, &r); break;
        case TLRT_EX_MUL: ovf = __builtin_mul_overflow(a, b, &r); break;
        case TLRT_EX_FLOORDIV:
        case TLRT_EX_MOD:
        case TLRT_EX_CEILDIV:
            if (b == 0) {
                tlrt_errf(err, errlen, "division by zero in '%s'", op_text(nd->op));
                return false;
            }
            /* INT64_MIN / -1 overflows; ceildiv negates a, so INT64_MIN is out for it. */
            if (a == INT64_MIN && (b == -1 || nd->op == TLRT_EX_CEILDIV)) { ovf = true; break; }
            if (nd->op == TLRT_EX_FLOORDIV) r = floordiv(a, b);
            else if (nd->op == TLRT_EX_MOD) {
                r = a % b; /* sign follows the divisor, like Python */
                if (r != 0 && ((r < 0) != (b < 0))) r += b;
            }
            else r = -floordiv(-a, b);
            break;
        case TLRT_EX_MIN: r = a < b ? a : b; break;
        case TLRT_EX_MAX: r = a > b ? a : b; break;
        case TLRT_EX_LT: r = a < b; break;
        case TLRT_EX_LE: r = a <= b; break;
        case TLRT_EX_GT: r = a > b; break;
        case TLRT_EX_GE: r = a >= b; break;
        case TLRT_EX_EQ: r = a == b; break;
        case TLRT_EX_NE: r = a != b; break;
        case TLRT_EX_AND: r = a != 0 && b != 0; break;
        case TLRT_EX_OR: r = a != 0 || b != 0; break;
        default: goto malformed;
        }
        if (ovf) {
            tlrt_errf(err, errlen, "integer overflow in '%s'", op_text(nd->op));
            return false;
        }
        st[sp++] = r;
    }
    if (sp != 1) goto malformed;
    *out = st[0];
    return true;
malformed:
    tlrt_errf(err, errlen, "malformed expression");
    return false;
}

/* ---- text form ---- */

static void format_node(tlrt_buf *b, const tlrt_expr *e, const int *start, int i, const tlrt_kernel_meta *k) {
    const tlrt_expr_node *nd = &e->nodes[i];
    switch (nd->op) {
    case TLRT_EX_INT: tlrt_buf_printf(b, "%lld", (long long)nd->value); return;
    case TLRT_EX_SYM:
        if (k && nd->value >= 0 && nd->value < k->nsyms) tlrt_buf_printf(b, "%s", k->syms[nd->value]);
        else tlrt_buf_printf(b, "?");
        return;
    case TLRT_EX_SCALAR:
        if (k && nd->value >= 0 && nd->value < k->nparams) tlrt_buf_printf(b, "%s", k->params[nd->value].name);
        else tlrt_buf_printf(b, "?");
        return;
    default: break;
    }
    /* Binary: right operand ends at i-1, left ends just before the right one starts. */
    int right = i - 1, left = start[right] - 1;
    if (right < 0 || left < 0) { tlrt_buf_printf(b, "?"); return; }
    tlrt_buf_printf(b, "(%s ", op_text(nd->op));
    format_node(b, e, start, left, k);
    tlrt_buf_printf(b, " ");
    format_node(b, e, start, right, k);
    tlrt_buf_printf(b, ")");
}

void tlrt_expr_format(tlrt_buf *b, const tlrt_expr *e, const tlrt_kernel_meta *k) {
    /* start[i]: first node of the subtree that ends at node i. */
    int start[TLRT_MAX_EXPR], stack[TLRT_MAX_EXPR], sp = 0;
    if (e->n <= 0 || e->n > TLRT_MAX_EXPR) { tlrt_buf_printf(b, "?"); return; }
    for (int i = 0; i < e->n; i++) {
        if (is_operand(e->nodes[i].op)) start[i] = i;
        else {
            if (sp < 2) { tlrt_buf_printf(b, "?"); return; }
            sp -= 2;
            start[i] = start[stack[sp]];
        }
        stack[sp++] = i;
    }
    if (sp != 1) { tlrt_buf_printf(b, "?"); return; }
    format_node(b, e, start, e->n - 1, k);
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }
static bool is_delim(char c) { return is_blank(c) || c == '(' || c == ')'; }

static bool parse_rec(const char **p, const char *end, const tlrt_kernel_meta *k, tlrt_expr *out, int depth,
                      char *err, size_t errlen) {
    const char *s = *p;
    while (s < end && is_blank(*s)) s++;
    if (s >= end) {
        tlrt_errf(err, errlen, "expression expected");
        return false;
    }
    if (depth > TLRT_MAX_EXPR) {
        tlrt_errf(err, errlen, "expression nested too deeply");
        return false;
    }
    if (*s == '(') {
        s++;
        while (s < end && is_blank(*s)) s++;
        const char *w = s;
        while (s < end && !is_delim(*s)) s++;
        size_t wn = (size_t)(s - w);
        int opi = -1;
        for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
            if (strlen(binops[i].text) == wn && memcmp(binops[i].text, w, wn) == 0) opi = (int)i;
        if (opi < 0) {
            tlrt_errf(err, errlen, "unknown operator '%.*s' (expected + - * // %% ceildiv min max)",
                      (int)(wn > 32 ? 32 : wn), w);
            return false;
        }
        if (!parse_rec(&s, end, k, out, depth + 1, err, errlen)) return false;
        if (!parse_rec(&s, end, k, out, depth + 1, err, errlen)) return false;
        while (s < end && is_blank(*s)) s++;
        if (s >= end || *s != ')') {
            tlrt_errf(err, errlen, "')' expected after the operands of '%s'", binops[opi].text);
            return false;
        }
        s++;
        if (!tlrt_expr_push(out, binops[opi].op, 0)) {
            tlrt_errf(err, errlen, "expression longer than %d nodes", TLRT_MAX_EXPR);
            return false;
        }
        *p = s;
        return true;
    }
    const char *w = s;
    while (s < end && !is_delim(*s)) s++;
    size_t wn = (size_t)(s - w);
    if (wn == 0) {
        tlrt_errf(err, errlen, "unexpected ')'");
        return false;
    }
    tlrt_expr_node nd = {TLRT_EX_INT, 0};
    if ((w[0] >= '0' && w[0] <= '9') || (w[0] == '-' && wn > 1)) {
        size_t i = w[0] == '-' ? 1 : 0;
        bool neg = i == 1;
        uint64_t v = 0;
        for (; i < wn; i++) {
            if (w[i] < '0' || w[i] > '9' || v > (UINT64_C(1) << 62)) {
                tlrt_errf(err, errlen, "bad integer '%.*s'", (int)(wn > 32 ? 32 : wn), w);
                return false;
            }
            v = v * 10 + (uint64_t)(w[i] - '0');
        }
        if (v > (UINT64_C(1) << 62)) {
            tlrt_errf(err, errlen, "integer '%.*s' too large", (int)(wn > 32 ? 32 : wn), w);
            return false;
        }
        nd.value = neg ? -(int64_t)v : (int64_t)v;
    } else {
        int found = -1;
        for (int i = 0; k && i < k->nsyms; i++)
            if (strlen(k->syms[i]) == wn && memcmp(k->syms[i], w, wn) == 0) found = i;
        if (found >= 0) {
            nd.op = TLRT_EX_SYM;
            nd.value = found;
        } else {
            for (int i = 0; k && i < k->nparams; i++)
                if (strlen(k->params[i].name) == wn && memcmp(k->params[i].name, w, wn) == 0) found = i;
            if (found < 0) {
                tlrt_errf(err, errlen, "unknown name '%.*s' in expression (not a sym or scalar param)",
                          (int)(wn > 64 ? 64 : wn), w);
                return false;
            }
            if (k->params[found].kind != TLRT_PARAM_SCALAR || !tlrt_dtype_is_int(k->params[found].dtype)) {
                tlrt_errf(err, errlen, "'%s' in expression is not an integer scalar param", k->params[found].name);
                return false;
            }
            nd.op = TLRT_EX_SCALAR;
            nd.value = found;
        }
    }
    if (!tlrt_expr_push(out, nd.op, nd.value)) {
        tlrt_errf(err, errlen, "expression longer than %d nodes", TLRT_MAX_EXPR);
        return false;
    }
    *p = s;
    return true;
}

bool tlrt_expr_parse_at(const char **p, const char *end, const tlrt_kernel_meta *k, tlrt_expr *out,
                        char *err, size_t errlen) {
    out->n = 0;
    return parse_rec(p, end, k, out, 0, err, errlen);
}

bool tlrt_expr_parse(const char *text, const tlrt_kernel_meta *k, tlrt_expr *out, char *err, size_t errlen) {
    const char *p = text, *end = text + strlen(text);
    if (!tlrt_expr_parse_at(&p, end, k, out, err, errlen)) return false;
    while (p < end && is_blank(*p)) p++;
    if (p != end) {
        tlrt_errf(err, errlen, "unexpected text after expression: '%.*s'", (int)((end - p) > 32 ? 32 : (end - p)), p);
        return false;
    }
    return true;
}
