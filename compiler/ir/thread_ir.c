/* Thread IR constructors and type helpers (thread_ir.h). Constructors only
 * build nodes; they never report errors. Type mismatches that a lowering bug
 * could create are caught by codegen, which reports them through diag. */
#include "thread_ir.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------- types ---------------- */
th_type th_scalar(th_base b) { return (th_type){b, 1, 0}; }
th_type th_vec(th_base b, int lanes) { return (th_type){b, (uint8_t)(lanes < 1 ? 1 : lanes), 0}; }
th_type th_ptr(th_addrspace as) { return (th_type){TH_PTR, 1, (uint8_t)as}; }

th_type th_from_dtype(tir_dtype t) {
    switch (t) {
    case TIR_F16: return th_scalar(TH_F16);
    case TIR_BF16: return th_scalar(TH_BF16);
    case TIR_F32: return th_scalar(TH_F32);
    case TIR_I32: case TIR_U32: return th_scalar(TH_I32);
    case TIR_I16: case TIR_U16: return th_scalar(TH_I16);
    case TIR_I64: return th_scalar(TH_I64);
    case TIR_F8E4M3: case TIR_F8E5M2: /* storage only: bytes */
    case TIR_I8:
    case TIR_BOOL:
    default: return th_scalar(TH_I8);
    }
}

static int base_bytes(th_base b) {
    switch (b) {
    case TH_VOID: return 0;
    case TH_I1: case TH_I8: return 1;
    case TH_I16: case TH_F16: case TH_BF16: return 2;
    case TH_I32: case TH_F32: return 4;
    case TH_I64: case TH_F64: case TH_PTR: return 8;
    }
    return 0;
}

int th_type_bytes(th_type t) { return base_bytes(t.base) * (t.lanes ? t.lanes : 1); }

bool th_type_eq(th_type a, th_type b) {
    int la = a.lanes ? a.lanes : 1, lb = b.lanes ? b.lanes : 1;
    if (a.base != b.base || la != lb) return false;
    return a.base != TH_PTR || a.addrspace == b.addrspace;
}

static bool is_int(th_base b) { return b >= TH_I1 && b <= TH_I64; }
static bool is_float(th_base b) { return b >= TH_F16 && b <= TH_F64; }

const char *th_type_name(th_type t, char buf[32]) {
    static const char *const names[] = {"void", "i1", "i8", "i16", "i32", "i64",
                                        "f16", "bf16", "f32", "f64", "ptr"};
    if (t.base == TH_PTR) {
        const char *as = t.addrspace == TH_AS_GLOBAL ? "global" : t.addrspace == TH_AS_SHARED ? "shared"
                       : t.addrspace == TH_AS_CONST ? "const" : t.addrspace == TH_AS_LOCAL ? "local"
                       : t.addrspace == TH_AS_GENERIC ? "generic" : "?";
        snprintf(buf, 32, "ptr<%s>", as);
    } else if ((unsigned)t.base <= TH_F64) {
        if (t.lanes > 1) snprintf(buf, 32, "%sx%d", names[t.base], t.lanes);
        else snprintf(buf, 32, "%s", names[t.base]);
    } else {
        snprintf(buf, 32, "?type%d", (int)t.base);
    }
    return buf;
}

/* Wraps v to the width of integer type b (two's complement), like the hardware does. */
int64_t th_wrap_int(th_base b, uint64_t v) {
    switch (b) {
    case TH_I1: return (int64_t)(v & 1);
    case TH_I8: return (int8_t)(uint8_t)v;
    case TH_I16: return (int16_t)(uint16_t)v;
    case TH_I32: return (int32_t)(uint32_t)v;
    default: return (int64_t)v;
    }
}

/* ---------------- variables ---------------- */
th_var *th_new_var(tlc_arena *a, th_kernel *k, const char *name, th_type t, int array_len) {
    th_var *v = TLC_NEW(a, th_var);
    v->name = name ? name : "v";
    v->type = t;
    v->array_len = array_len > 0 ? array_len : 0;
    v->id = -1;
    if (k) {
        if (k->nvars >= k->vars_cap) {
            int cap = k->nvars < 8 ? 16 : k->nvars * 2;
            th_var **nv = TLC_NEW_ARRAY(a, th_var *, (size_t)cap);
            if (k->nvars > 0) memcpy(nv, k->vars, sizeof(th_var *) * (size_t)k->nvars);
            k->vars = nv;
            k->vars_cap = cap;
        }
        v->id = k->nvars;
        k->vars[k->nvars++] = v;
    }
    return v;
}

/* ---------------- expressions ---------------- */
static th_expr *new_expr(tlc_arena *a, th_expr_kind k, th_type t) {
    th_expr *e = TLC_NEW(a, th_expr);
    e->kind = k;
    e->type = t;
    return e;
}

th_expr *th_int(tlc_arena *a, th_base t, int64_t v) {
    th_expr *e = new_expr(a, THE_INT, th_scalar(t));
    e->u.ival = is_int(t) ? th_wrap_int(t, (uint64_t)v) : v;
    return e;
}

th_expr *th_float(tlc_arena *a, th_base t, double v) {
    th_expr *e = new_expr(a, THE_FLOAT, th_scalar(t));
    e->u.fval = t == TH_F32 ? (double)(float)v : v;
    return e;
}

const th_expr *const *th_expr_children(const th_expr *e, int *n, const th_expr *tmp[3]) {
    *n = 0;
    if (!e) return tmp;
    switch (e->kind) {
    case THE_BUILD:
        *n = e->u.build.lanes ? e->u.build.n : 0;
        return (const th_expr *const *)e->u.build.lanes;
    case THE_INTRIN:
        *n = e->u.intrin.args ? e->u.intrin.nargs : 0;
        return (const th_expr *const *)e->u.intrin.args;
    case THE_ARRAY_READ: tmp[0] = e->u.var.index; *n = 1; break;
    case THE_SHARED_PTR: tmp[0] = e->u.offset; *n = 1; break;
    case THE_PTR_ADD: tmp[0] = e->u.ptr_add.ptr; tmp[1] = e->u.ptr_add.index; *n = 2; break;
    case THE_LOAD: tmp[0] = e->u.load.ptr; *n = 1; break;
    case THE_BIN: case THE_CMP: tmp[0] = e->u.bin.a; tmp[1] = e->u.bin.b; *n = 2; break;
    case THE_UN: tmp[0] = e->u.un.a; *n = 1; break;
    case THE_SELECT: tmp[0] = e->u.sel.cond; tmp[1] = e->u.sel.a; tmp[2] = e->u.sel.b; *n = 3; break;
    case THE_CONVERT: case THE_BITCAST: tmp[0] = e->u.conv.a; *n = 1; break;
    case THE_EXTRACT: tmp[0] = e->u.extract.vec; *n = 1; break;
    default: break;
    }
    return tmp;
}

const th_expr *const *th_stmt_exprs(const th_stmt *s, int *n, const th_expr *tmp[3]) {
    *n = 0;
    if (!s) return tmp;
    switch (s->kind) {
    case THS_ASM:
        *n = s->u.asm_.args ? s->u.asm_.nargs : 0;
        return (const th_expr *const *)s->u.asm_.args;
    case THS_FOR:
        tmp[0] = s->u.for_.start;
        tmp[1] = s->u.for_.end;
        tmp[2] = s->u.for_.cond;
        *n = s->u.for_.cond ? 3 : 2;
        break;
    case THS_IF: tmp[0] = s->u.if_.cond; *n = 1; break;
    case THS_ASSIGN: tmp[0] = s->u.assign.index; tmp[1] = s->u.assign.value; *n = 2; break;
    case THS_STORE: tmp[0] = s->u.store.ptr; tmp[1] = s->u.store.value; *n = 2; break;
    case THS_ATOMIC_ADD: tmp[0] = s->u.atomic.ptr; tmp[1] = s->u.atomic.value; *n = 2; break;
    default: break;
    }
    return tmp;
}

const th_stmt *const *th_stmt_children(const th_stmt *s, int *n, const th_stmt *tmp[2]) {
    *n = 0;
    if (!s) return tmp;
    switch (s->kind) {
    case THS_SEQ:
        *n = s->u.seq.stmts ? s->u.seq.n : 0;
        return (const th_stmt *const *)s->u.seq.stmts;
    case THS_FOR: tmp[0] = s->u.for_.body; *n = 1; break;
    case THS_IF: tmp[0] = s->u.if_.then; tmp[1] = s->u.if_.els; *n = 2; break;
    default: break;
    }
    return tmp;
}

bool th_pow_small_int(const th_expr *e, int64_t *n) {
    while (e && e->kind == THE_CONVERT) e = e->u.conv.a;
    if (!e) return false;
    if (e->kind == THE_INT) { *n = e->u.ival; return *n >= -64 && *n <= 64; }
    if (e->kind == THE_FLOAT && e->u.fval == floor(e->u.fval) && fabs(e->u.fval) <= 64) {
        *n = (int64_t)e->u.fval;
        return true;
    }
    return false;
}

bool th_expr_const_int(const th_expr *e, int64_t *out) {
    if (!e || e->kind != THE_INT) return false;
    if (out) *out = e->u.ival;
    return true;
}

th_expr *th_read(tlc_arena *a, th_var *v) {
    th_expr *e = new_expr(a, THE_VAR, v->type);
    e->u.var.var = v;
    return e;
}

th_expr *th_array_read(tlc_arena *a, th_var *v, th_expr *index) {
    th_expr *e = new_expr(a, THE_ARRAY_READ, v->type);
    e->u.var.var = v;
    e->u.var.index = index;
    return e;
}

th_expr *th_param_ref(tlc_arena *a, const th_kernel *k, int index) {
    th_type t = th_scalar(TH_VOID); /* out of range: codegen reports it */
    if (k && index >= 0 && index < k->nparams)
        t = k->params[index].byte_size_override > 0 ? th_ptr(TH_AS_GENERIC) : k->params[index].type;
    th_expr *e = new_expr(a, THE_PARAM, t);
    e->u.param = index;
    return e;
}

th_expr *th_special_reg(tlc_arena *a, th_special s) {
    th_expr *e = new_expr(a, THE_SPECIAL, th_scalar(TH_I32));
    e->u.special = s;
    return e;
}

th_expr *th_shared_ptr(tlc_arena *a, th_expr *byte_offset) {
    th_expr *e = new_expr(a, THE_SHARED_PTR, th_ptr(TH_AS_SHARED));
    e->u.offset = byte_offset;
    return e;
}

th_expr *th_ptr_add(tlc_arena *a, th_expr *ptr, th_expr *index, th_type elem) {
    int64_t c;
    if (th_expr_const_int(index, &c) && c == 0) return ptr;
    th_expr *e = new_expr(a, THE_PTR_ADD, ptr->type);
    e->u.ptr_add.ptr = ptr;
    e->u.ptr_add.index = index;
    e->elem = elem;
    return e;
}

th_expr *th_load(tlc_arena *a, th_expr *ptr, th_type t, int align) {
    th_expr *e = new_expr(a, THE_LOAD, t);
    e->u.load.ptr = ptr;
    e->u.load.align = align;
    return e;
}

/* Folds integer constant arithmetic; returns false where folding could
 * change meaning (division by zero, overflowing signed division). */
bool th_fold_int(th_binop op, th_base t, int64_t x, int64_t y, int64_t *r) {
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    int bits = base_bytes(t) * 8;
    if (t == TH_I1) bits = 1;
    switch (op) {
    case THB_ADD: *r = th_wrap_int(t, ux + uy); return true;
    case THB_SUB: *r = th_wrap_int(t, ux - uy); return true;
    case THB_MUL: *r = th_wrap_int(t, ux * uy); return true;
    case THB_AND: *r = th_wrap_int(t, ux & uy); return true;
    case THB_OR: case THB_OR_DISJOINT: *r = th_wrap_int(t, ux | uy); return true;
    case THB_XOR: *r = th_wrap_int(t, ux ^ uy); return true;
    case THB_MIN: *r = x < y ? x : y; return true;
    case THB_MAX: *r = x > y ? x : y; return true;
    case THB_UMIN: case THB_UMAX: {
        uint64_t m = bits == 64 ? ~0ull : ((1ull << bits) - 1);
        bool lt = (ux & m) < (uy & m);
        *r = (op == THB_UMIN) == lt ? x : y;
        return true;
    }
    case THB_SHL: if (y < 0 || y >= bits) return false; *r = th_wrap_int(t, ux << y); return true;
    case THB_SHR: if (y < 0 || y >= bits) return false; *r = x >= 0 ? x >> y : ~(~x >> y); return true;
    case THB_LSHR: {
        if (y < 0 || y >= bits) return false;
        uint64_t m = bits == 64 ? ~0ull : ((1ull << bits) - 1);
        *r = th_wrap_int(t, (ux & m) >> y);
        return true;
    }
    case THB_DIV: case THB_REM: case THB_FLOORDIV: case THB_FLOORMOD: {
        if (y == 0 || (y == -1 && x == INT64_MIN)) return false;
        int64_t q = x / y, m = x % y;
        if ((op == THB_FLOORDIV || op == THB_FLOORMOD) && m != 0 && ((m < 0) != (y < 0))) { q -= 1; m += y; }
        *r = th_wrap_int(t, (uint64_t)(op == THB_DIV || op == THB_FLOORDIV ? q : m));
        return true;
    }
    default: return false;
    }
}

th_expr *th_bin(tlc_arena *a, th_binop op, th_expr *x, th_expr *y) {
    bool scalar_int = is_int(x->type.base) && x->type.lanes <= 1 && th_type_eq(x->type, y->type);
    if (scalar_int && x->kind == THE_INT && y->kind == THE_INT && x->type.base != TH_I1) {
        int64_t r;
        if (th_fold_int(op, x->type.base, x->u.ival, y->u.ival, &r)) return th_int(a, x->type.base, r);
    }
    if (scalar_int) {
        /* identities that keep index arithmetic readable in --emit=thread */
        int64_t c;
        if (th_expr_const_int(y, &c)) {
            if (c == 0 && (op == THB_ADD || op == THB_SUB || op == THB_OR || op == THB_OR_DISJOINT || op == THB_XOR ||
                           op == THB_SHL || op == THB_SHR || op == THB_LSHR)) return x;
            if (c == 1 && (op == THB_MUL || op == THB_DIV || op == THB_FLOORDIV || op == THB_UDIV)) return x;
        }
        if (th_expr_const_int(x, &c)) {
            if (c == 0 && (op == THB_ADD || op == THB_OR || op == THB_OR_DISJOINT || op == THB_XOR)) return y;
            if (c == 1 && op == THB_MUL) return y;
        }
    }
    if (is_float(x->type.base) && x->kind == THE_FLOAT && y->kind == THE_FLOAT &&
        th_type_eq(x->type, y->type) && x->type.lanes <= 1) {
        double fx = x->u.fval, fy = y->u.fval;
        switch (op) {
        case THB_ADD: return th_float(a, x->type.base, fx + fy);
        case THB_SUB: return th_float(a, x->type.base, fx - fy);
        case THB_MUL: return th_float(a, x->type.base, fx * fy);
        default: break;
        }
    }
    th_expr *e = new_expr(a, THE_BIN, x->type);
    e->u.bin.op = op;
    e->u.bin.a = x;
    e->u.bin.b = y;
    return e;
}

th_expr *th_un(tlc_arena *a, th_unop op, th_expr *x) {
    if (op == THU_NEG && x->kind == THE_INT && is_int(x->type.base) && x->type.base != TH_I1)
        return th_int(a, x->type.base, th_wrap_int(x->type.base, 0 - (uint64_t)x->u.ival));
    if (op == THU_NEG && x->kind == THE_FLOAT) return th_float(a, x->type.base, -x->u.fval);
    th_expr *e = new_expr(a, THE_UN, x->type);
    e->u.un.op = op;
    e->u.un.a = x;
    return e;
}

bool th_fold_cmp(th_cmpop op, th_base t, int64_t x, int64_t y, bool *out) {
    int bits = t == TH_I1 ? 1 : base_bytes(t) * 8;
    uint64_t m = bits >= 64 ? ~0ull : ((1ull << bits) - 1), ux = (uint64_t)x & m, uy = (uint64_t)y & m;
    switch (op) {
    case THC_EQ: *out = x == y; return true;
    case THC_NE: *out = x != y; return true;
    case THC_LT: *out = x < y; return true;
    case THC_LE: *out = x <= y; return true;
    case THC_GT: *out = x > y; return true;
    case THC_GE: *out = x >= y; return true;
    case THC_ULT: *out = ux < uy; return true;
    case THC_ULE: *out = ux <= uy; return true;
    case THC_UGT: *out = ux > uy; return true;
    case THC_UGE: *out = ux >= uy; return true;
    }
    return false;
}

th_expr *th_cmp(tlc_arena *a, th_cmpop op, th_expr *x, th_expr *y) {
    bool r;
    if (x->kind == THE_INT && y->kind == THE_INT && th_type_eq(x->type, y->type) &&
        th_fold_cmp(op, x->type.base, x->u.ival, y->u.ival, &r))
        return th_int(a, TH_I1, r);
    th_expr *e = new_expr(a, THE_CMP, th_vec(TH_I1, x->type.lanes));
    e->u.bin.op = op;
    e->u.bin.a = x;
    e->u.bin.b = y;
    return e;
}

th_expr *th_select(tlc_arena *a, th_expr *c, th_expr *x, th_expr *y) {
    if (c->kind == THE_INT && c->type.lanes <= 1) return c->u.ival ? x : y;
    th_expr *e = new_expr(a, THE_SELECT, x->type);
    e->u.sel.cond = c;
    e->u.sel.a = x;
    e->u.sel.b = y;
    return e;
}

th_expr *th_convert(tlc_arena *a, th_expr *x, th_type t) {
    if (th_type_eq(x->type, t)) return x;
    if (t.lanes <= 1 && x->type.lanes <= 1) {
        if (x->kind == THE_INT && is_int(t.base)) {
            int64_t v = x->type.base == TH_I1 ? (x->u.ival & 1) : x->u.ival;
            return th_int(a, t.base, t.base == TH_I1 ? v != 0 : v);
        }
        if (x->kind == THE_INT && is_float(t.base) && x->type.base != TH_I1)
            return th_float(a, t.base, (double)x->u.ival);
        if (x->kind == THE_FLOAT && is_float(t.base) && (t.base == TH_F32 || t.base == TH_F64))
            return th_float(a, t.base, x->u.fval);
    }
    th_expr *e = new_expr(a, THE_CONVERT, t);
    e->u.conv.a = x;
    return e;
}

th_expr *th_convert_unsigned(tlc_arena *a, th_expr *x, th_type t) {
    if (th_type_eq(x->type, t)) return x;
    if (t.lanes <= 1 && x->type.lanes <= 1 && x->kind == THE_INT && is_int(x->type.base) && x->type.base != TH_I1) {
        int bits = base_bytes(x->type.base) * 8;
        uint64_t v = (uint64_t)x->u.ival & (bits >= 64 ? ~0ull : ((1ull << bits) - 1));
        if (is_int(t.base) && t.base != TH_I1) return th_int(a, t.base, (int64_t)v);
        if (t.base == TH_F32 || t.base == TH_F64) return th_float(a, t.base, (double)v);
    }
    th_expr *e = new_expr(a, THE_CONVERT, t);
    e->u.conv.a = x;
    e->u.conv.uns = true;
    return e;
}

th_expr *th_bitcast(tlc_arena *a, th_expr *x, th_type t) {
    if (th_type_eq(x->type, t)) return x;
    th_expr *e = new_expr(a, THE_BITCAST, t);
    e->u.conv.a = x;
    return e;
}

th_expr *th_extract(tlc_arena *a, th_expr *vec, int lane) {
    if (vec->kind == THE_BUILD && lane >= 0 && lane < vec->u.build.n) return vec->u.build.lanes[lane];
    th_expr *e = new_expr(a, THE_EXTRACT, th_scalar(vec->type.base));
    e->type.addrspace = vec->type.addrspace;
    e->u.extract.vec = vec;
    e->u.extract.lane = lane;
    return e;
}

th_expr *th_build(tlc_arena *a, th_type t, th_expr **lanes, int n) {
    th_expr *e = new_expr(a, THE_BUILD, t);
    e->u.build.lanes = TLC_NEW_ARRAY(a, th_expr *, (size_t)(n > 0 ? n : 1));
    if (n > 0) memcpy(e->u.build.lanes, lanes, sizeof(th_expr *) * (size_t)n);
    e->u.build.n = n;
    return e;
}

th_expr *th_intrin_call(tlc_arena *a, th_intrin id, th_type t, th_expr **args, int nargs) {
    th_expr *e = new_expr(a, THE_INTRIN, t);
    e->u.intrin.id = id;
    e->u.intrin.args = TLC_NEW_ARRAY(a, th_expr *, (size_t)(nargs > 0 ? nargs : 1));
    if (nargs > 0) memcpy(e->u.intrin.args, args, sizeof(th_expr *) * (size_t)nargs);
    e->u.intrin.nargs = nargs;
    return e;
}

/* ---------------- statements ---------------- */
static th_stmt *new_stmt(tlc_arena *a, th_stmt_kind k) {
    th_stmt *s = TLC_NEW(a, th_stmt);
    s->kind = k;
    return s;
}

th_stmt *th_seq(tlc_arena *a, th_stmt **stmts, int n) {
    th_stmt *s = new_stmt(a, THS_SEQ);
    s->u.seq.stmts = TLC_NEW_ARRAY(a, th_stmt *, (size_t)(n > 0 ? n : 1));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (stmts[i]) s->u.seq.stmts[m++] = stmts[i];
    s->u.seq.n = m;
    return s;
}

int64_t th_unrolled_size(const th_stmt *s, int64_t cap) {
    if (!s) return 0;
    int64_t n = 0;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n && n < cap; i++) n += th_unrolled_size(s->u.seq.stmts[i], cap - n);
        break;
    case THS_FOR: {
        int64_t body = th_unrolled_size(s->u.for_.body, cap);
        int64_t trips = 1;
        if (s->u.for_.unroll && s->u.for_.start->kind == THE_INT && s->u.for_.end->kind == THE_INT && s->u.for_.step > 0) {
            int64_t span = s->u.for_.end->u.ival - s->u.for_.start->u.ival;
            trips = span > 0 ? (span + s->u.for_.step - 1) / s->u.for_.step : 0;
        }
        n = 1 + (body > 0 && trips > (cap - 1) / body ? cap : body * trips);
        break;
    }
    case THS_IF: n = 1 + th_unrolled_size(s->u.if_.then, cap) + th_unrolled_size(s->u.if_.els, cap); break;
    default: n = 1; break;
    }
    return n < cap ? n : cap;
}

th_stmt *th_for(tlc_arena *a, th_var *v, th_expr *start, th_expr *end, int64_t step, bool unroll, th_stmt *body) {
    th_stmt *s = new_stmt(a, THS_FOR);
    s->u.for_.var = v;
    s->u.for_.start = start;
    s->u.for_.end = end;
    s->u.for_.step = step;
    s->u.for_.unroll = unroll;
    s->u.for_.body = body;
    return s;
}

th_stmt *th_if(tlc_arena *a, th_expr *c, th_stmt *then, th_stmt *els) {
    th_stmt *s = new_stmt(a, THS_IF);
    s->u.if_.cond = c;
    s->u.if_.then = then;
    s->u.if_.els = els;
    return s;
}

th_stmt *th_assign(tlc_arena *a, th_var *v, th_expr *index, th_expr *value) {
    th_stmt *s = new_stmt(a, THS_ASSIGN);
    s->u.assign.var = v;
    s->u.assign.index = index;
    s->u.assign.value = value;
    return s;
}

th_stmt *th_store(tlc_arena *a, th_expr *ptr, th_expr *value, int align) {
    th_stmt *s = new_stmt(a, THS_STORE);
    s->u.store.ptr = ptr;
    s->u.store.value = value;
    s->u.store.align = align;
    return s;
}

th_stmt *th_barrier(tlc_arena *a) { return th_barrier_sync(a, 0, 0); }

th_stmt *th_barrier_sync(tlc_arena *a, int id, int nthreads) {
    th_stmt *s = new_stmt(a, THS_BARRIER);
    s->u.barrier.id = id;
    s->u.barrier.nthreads = nthreads;
    return s;
}

th_stmt *th_atomic_add(tlc_arena *a, th_expr *ptr, th_expr *value) {
    th_stmt *s = new_stmt(a, THS_ATOMIC_ADD);
    s->u.atomic.ptr = ptr;
    s->u.atomic.value = value;
    return s;
}

th_stmt *th_asm(tlc_arena *a, const char *text, const char *constraints, th_expr **args, int nargs,
                th_var **outs, int nouts, bool has_side_effects) {
    th_stmt *s = new_stmt(a, THS_ASM);
    s->u.asm_.text = text ? text : "";
    s->u.asm_.constraints = constraints ? constraints : "";
    s->u.asm_.args = TLC_NEW_ARRAY(a, th_expr *, (size_t)(nargs > 0 ? nargs : 1));
    if (nargs > 0) memcpy(s->u.asm_.args, args, sizeof(th_expr *) * (size_t)nargs);
    s->u.asm_.nargs = nargs;
    s->u.asm_.outs = TLC_NEW_ARRAY(a, th_var *, (size_t)(nouts > 0 ? nouts : 1));
    if (nouts > 0) memcpy(s->u.asm_.outs, outs, sizeof(th_var *) * (size_t)nouts);
    s->u.asm_.nouts = nouts;
    s->u.asm_.has_side_effects = has_side_effects;
    return s;
}

th_stmt *th_comment(tlc_arena *a, const char *text) {
    th_stmt *s = new_stmt(a, THS_COMMENT);
    s->u.comment = text ? text : "";
    return s;
}

int th_module_ptx_isa(const th_module *m, int target_isa) {
    int v = target_isa;
    for (int i = 0; m && i < m->nkernels; i++)
        if (m->kernels[i] && m->kernels[i]->ptx_isa > v) v = m->kernels[i]->ptx_isa;
    return v;
}
