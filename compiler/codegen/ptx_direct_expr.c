/* tlc's own PTX generator: expressions (ptx_direct.c has the kernels and
 * statements). Each Thread IR expression becomes a value of one operand
 * per lane (a register or an immediate); integer arithmetic on constants
 * folds; pure expressions are shared (common subexpressions, below);
 * divisions by constants become multiplications; an access's address is a
 * register plus the constant part of its index as the instruction's
 * immediate offset. */
#include "ptx_direct_internal.h"
#include "../support/int_math.h"
#include "tlc/runtime.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- expressions ---------------- */

static pd_val scalar(pd_opnd o) {
    pd_val v;
    v.n = 1;
    v.l[0] = o;
    return v;
}

static pd_val undef_val(pd_ctx *c, th_type t) {
    pd_val v;
    v.n = lanes_of(t) > PD_MAX_LANES ? PD_MAX_LANES : lanes_of(t);
    for (int i = 0; i < v.n; i++) v.l[i] = pd_int_op(c, 0);
    return v;
}

/* The parameter a pointer expression is based on (through offsets), or -1. */
int pd_ptr_param_of(pd_ctx *c, const th_expr *e) {
    while (e && e->kind == THE_PTR_ADD) e = e->u.ptr_add.ptr;
    if (!e) return -1;
    if (e->kind == THE_PARAM) return e->u.param;
    if (e->kind == THE_VAR && e->u.var.var && e->u.var.var->array_len <= 0) {
        pd_var *pv = pd_var_entry(c, e->u.var.var);
        return pv->assigns == 1 ? pv->ptr_param : -1;
    }
    return -1;
}

/* Predicates live in memory (parameters, tensors, local arrays) as a byte
 * each: 1 or 0 into a 16-bit register for a store, and back. */
static const char *byte_of_pred(pd_ctx *c, pd_opnd p) {
    const char *h = pd_newreg(c, RC_H);
    pd_ins(c, "selp.u16 %s, 1, 0, %s", h, pd_as_reg(c, p, RC_P));
    return h;
}

static pd_opnd pred_of_byte(pd_ctx *c, const char *h) {
    const char *r = pd_newreg(c, RC_P);
    pd_ins(c, "setp.ne.u16 %s, %s, 0", r, h);
    return reg_op(r);
}

const char *pd_param_name(pd_ctx *c, int i) { return tlc_arena_printf(c->a, "%s_param_%d", c->k->name, i); }

pd_opnd pd_param_value(pd_ctx *c, int i, th_type want) {
    const th_param *p = &c->k->params[i];
    if (c->param_reg && c->param_reg[i]) return reg_op(c->param_reg[i]);
    if (p->byte_size_override > 0) { /* the .param block's generic address */
        const char *t = pd_newreg(c, RC_D), *r = pd_newreg(c, RC_D);
        pd_ins(c, "mov.b64 %s, %s", t, pd_param_name(c, i));
        pd_ins(c, "cvta.param.u64 %s, %s", r, t);
        return reg_op(r);
    }
    th_type t = p->type;
    if (!th_type_eq(t, want)) pd_error(c, "parameter '%s' read with another type", p->name);
    if (t.base == TH_I1) {
        const char *h = pd_newreg(c, RC_H);
        pd_ins(c, "ld.param.u8 %s, [%s]", h, pd_param_name(c, i));
        return pred_of_byte(c, h);
    }
    const char *r = pd_newreg_t(c, t);
    const char *ty = t.base == TH_I8 ? "s8" : t.base == TH_PTR ? "u64" : btype(t.base);
    pd_ins(c, "ld.param.%s %s, [%s]", ty, r, pd_param_name(c, i));
    return reg_op(r);
}

pd_opnd pd_special(pd_ctx *c, th_special s) {
    if ((unsigned)s <= THS_WARPID && c->special_reg[s]) return reg_op(c->special_reg[s]);
    static const char *const names[] = {"%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ctaid.x", "%ctaid.y", "%ctaid.z",
                                        "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid"};
    const char *r = pd_newreg(c, RC_R);
    if (s == THS_WARPID) {
        const char *t = pd_newreg(c, RC_R);
        pd_ins(c, "mov.u32 %s, %%tid.x", t);
        pd_ins(c, "shr.u32 %s, %s, 5", r, t);
        return reg_op(r);
    }
    if ((unsigned)s > THS_LANEID) { pd_error(c, "unknown special register %d", (int)s); return pd_int_op(c, 0); }
    pd_ins(c, "mov.u32 %s, %s", r, names[s]);
    return reg_op(r);
}

/* Sign-extends the low 8 bits of an i8 held in a b16 register. */
static pd_opnd norm_i8(pd_ctx *c, pd_opnd o) {
    if (o.is_int) return pd_int_op(c, (int8_t)(uint8_t)o.iv);
    const char *r = pd_newreg(c, RC_H);
    pd_ins(c, "cvt.s16.s8 %s, %s", r, o.s);
    return reg_op(r);
}

/* f16 / bf16 lane -> f32 register, and back (round to nearest even). */
static const char *half_to_f32(pd_ctx *c, pd_opnd o, th_base b) {
    const char *h = pd_as_reg(c, o, RC_H), *r = pd_newreg(c, RC_R);
    if (b == TH_F16) pd_ins(c, "cvt.f32.f16 %s, %s", r, h);
    else if (tlc_target_of(c->opt->arch)->sm >= 90) pd_ins(c, "cvt.f32.bf16 %s, %s", r, h);
    else {
        const char *w = pd_newreg(c, RC_R);
        pd_ins(c, "cvt.u32.u16 %s, %s", w, h);
        pd_ins(c, "shl.b32 %s, %s, 16", r, w);
    }
    return r;
}

static const char *f32_to_half(pd_ctx *c, const char *f, th_base b) {
    const char *h = pd_newreg(c, RC_H);
    pd_ins(c, "cvt.rn.%s.f32 %s, %s", b == TH_F16 ? "f16" : "bf16", h, f);
    return h;
}

static const char *f64_to_f32(pd_ctx *c, pd_opnd o) {
    const char *r = pd_newreg(c, RC_R);
    pd_ins(c, "cvt.rn.f32.f64 %s, %s", r, o.s);
    return r;
}

/* Any float lane as an f32 operand. */
static pd_opnd to_f32(pd_ctx *c, pd_opnd o, th_base b) {
    if (b == TH_F32) return o;
    if (b == TH_F64) return reg_op(f64_to_f32(c, o));
    return reg_op(half_to_f32(c, o, b));
}

static pd_opnd from_f32(pd_ctx *c, pd_opnd f, th_base b) {
    if (b == TH_F32) return f;
    if (b == TH_F64) {
        const char *r = pd_newreg(c, RC_D);
        pd_ins(c, "cvt.f64.f32 %s, %s", r, f.s);
        return reg_op(r);
    }
    const char *src = pd_as_reg(c, f, RC_R);
    pd_opnd h = reg_op(f32_to_half(c, src, b));
    h.f32src = src;
    h.half = b;
    return h;
}

static pd_opnd float_const(pd_ctx *c, th_base b, double v) {
    if (b == TH_F32) return (pd_opnd){pd_f32_imm(c, v), false, 0, NULL, TH_VOID, NULL, false, false, 0};
    if (b == TH_F64) return (pd_opnd){pd_f64_imm(c, v), false, 0, NULL, TH_VOID, NULL, false, false, 0};
    uint16_t bits = b == TH_F16 ? tlrt_f32_to_f16((float)v) : tlrt_f32_to_bf16((float)v);
    const char *r = pd_newreg(c, RC_H);
    pd_ins(c, "mov.b16 %s, 0x%04X", r, bits);
    pd_opnd o = reg_op(r);
    o.hconst = true;
    o.hbits = bits;
    return o;
}

/* ---- 32-bit division by a constant: a multiplication by its reciprocal ----
 * ptxas leaves `div.u32 x, 3` a full division (a float reciprocal and its
 * corrections), so the quotient by a constant d is computed here as LLVM
 * does, from a "magic" multiplier (Granlund and Montgomery; Hacker's
 * Delight, chapter 10). */
void pd_udiv_magic(uint32_t d, uint32_t *m, int *l) {
    /* l = ceil(log2 d); m = floor(2^32 (2^l - d) / d) + 1 */
    int k = 0;
    while (k < 32 && ((uint64_t)1 << k) < d) k++;
    unsigned __int128 num = ((unsigned __int128)1 << 32) * (((uint64_t)1 << k) - d);
    *m = (uint32_t)(num / d + 1);
    *l = k;
}

static const char *udiv_const(pd_ctx *c, const char *x, uint32_t d) {
    /* q = (t + ((x - t) >> 1)) >> (l - 1) with t = mulhi(x, m) */
    uint32_t m;
    int l;
    pd_udiv_magic(d, &m, &l);
    const char *t = pd_newreg(c, RC_R), *u = pd_newreg(c, RC_R), *w = pd_newreg(c, RC_R), *y = pd_newreg(c, RC_R), *q = pd_newreg(c, RC_R);
    pd_ins(c, "mul.hi.u32 %s, %s, %u", t, x, m);
    pd_ins(c, "sub.s32 %s, %s, %s", u, x, t);
    pd_ins(c, "shr.u32 %s, %s, 1", w, u);
    pd_ins(c, "add.s32 %s, %s, %s", y, t, w);
    pd_ins(c, "shr.u32 %s, %s, %d", q, y, l - 1);
    return q;
}

void pd_sdiv_magic(int32_t d, int32_t *mult, int *shift) {
    const uint32_t two31 = 0x80000000u;
    uint32_t ad = (uint32_t)d, t = two31 + ((uint32_t)d >> 31);
    uint32_t anc = t - 1 - t % ad;
    int p = 31;
    uint32_t q1 = two31 / anc, r1 = two31 - q1 * anc, q2 = two31 / ad, r2 = two31 - q2 * ad, delta;
    do {
        p++;
        q1 *= 2;
        r1 *= 2;
        if (r1 >= anc) { q1++; r1 -= anc; }
        q2 *= 2;
        r2 *= 2;
        if (r2 >= ad) { q2++; r2 -= ad; }
        delta = ad - r2;
    } while (q1 < delta || (q1 == delta && r1 == 0));
    *mult = (int32_t)(q2 + 1);
    *shift = p - 32;
}

static const char *sdiv_const(pd_ctx *c, const char *x, int32_t d) {
    const char *q;
    if (tlc_is_pow2(d)) { /* (x + (x < 0 ? d - 1 : 0)) >> k */
        int k = 0;
        while ((1 << k) < d) k++;
        const char *sg = pd_newreg(c, RC_R), *b = pd_newreg(c, RC_R), *s = pd_newreg(c, RC_R);
        q = pd_newreg(c, RC_R);
        pd_ins(c, "shr.s32 %s, %s, 31", sg, x);
        pd_ins(c, "shr.u32 %s, %s, %d", b, sg, 32 - k);
        pd_ins(c, "add.s32 %s, %s, %s", s, x, b);
        pd_ins(c, "shr.s32 %s, %s, %d", q, s, k);
        return q;
    }
    int32_t m;
    int sh;
    pd_sdiv_magic(d, &m, &sh);
    const char *t = pd_newreg(c, RC_R), *sgn = pd_newreg(c, RC_R);
    pd_ins(c, "mul.hi.s32 %s, %s, %d", t, x, m);
    if (m < 0) {
        const char *t2 = pd_newreg(c, RC_R);
        pd_ins(c, "add.s32 %s, %s, %s", t2, t, x);
        t = t2;
    }
    if (sh > 0) {
        const char *t3 = pd_newreg(c, RC_R);
        pd_ins(c, "shr.s32 %s, %s, %d", t3, t, sh);
        t = t3;
    }
    q = pd_newreg(c, RC_R);
    pd_ins(c, "shr.u32 %s, %s, 31", sgn, x); /* + 1 for a negative x: toward zero */
    pd_ins(c, "add.s32 %s, %s, %s", q, t, sgn);
    return q;
}

/* ---- integer arithmetic on one lane ---- */
/* Constants folded as th_bin folds them, and unsigned division, which
 * th_bin leaves (the operands' low bits, as the instruction reads them). */
static bool fold_int_bin(th_binop op, th_base b, int64_t x, int64_t y, int64_t *out) {
    if (op != THB_UDIV && op != THB_UREM) return th_fold_int(op, b, x, y, out);
    int bits = b == TH_I1 ? 1 : base_bytes(b) * 8;
    uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1), ux = (uint64_t)x & mask, uy = (uint64_t)y & mask;
    if (uy == 0) return false;
    *out = th_wrap_int(b, op == THB_UDIV ? ux / uy : ux % uy);
    return true;
}

/* Python's floor division or modulo from the truncating quotient q and
 * remainder r of x by y: one less (r plus y) where r is not 0 and its sign
 * is not y's. */
static pd_opnd floor_from(pd_ctx *c, th_binop op, th_base b, pd_opnd q, pd_opnd r, pd_opnd y) {
    reg_class rc = class_of(th_scalar(b));
    const char *st = stype(b), *bt = btype(b);
    const char *rr = pd_as_reg(c, r, rc), *x2 = pd_newreg(c, rc), *out = pd_newreg(c, rc), *s2 = pd_newreg(c, rc);
    const char *pnz = pd_newreg(c, RC_P), *pneg = pd_newreg(c, RC_P), *adj = pd_newreg(c, RC_P);
    pd_ins(c, "setp.ne.%s %s, %s, 0", st, pnz, rr);
    pd_ins(c, "xor.%s %s, %s, %s", bt, x2, rr, y.s);
    pd_ins(c, "setp.lt.%s %s, %s, 0", st, pneg, x2);
    pd_ins(c, "and.pred %s, %s, %s", adj, pnz, pneg);
    if (op == THB_FLOORMOD) {
        pd_ins(c, "add.%s %s, %s, %s", st, s2, rr, y.s);
        pd_ins(c, "selp.%s %s, %s, %s, %s", bt, out, s2, rr, adj);
    } else {
        const char *qq = pd_as_reg(c, q, rc);
        pd_ins(c, "sub.%s %s, %s, 1", st, s2, qq);
        pd_ins(c, "selp.%s %s, %s, %s, %s", bt, out, s2, qq, adj);
    }
    return reg_op(out);
}

/* An 8-bit value (kept sign-extended in 16 bits) as its byte, zero-extended:
 * what the unsigned operations read. */
static const char *low_byte(pd_ctx *c, const char *x) {
    const char *t = pd_newreg(c, RC_H);
    pd_ins(c, "and.b16 %s, %s, 255", t, x);
    return t;
}

static pd_opnd int_bin(pd_ctx *c, th_binop op, th_base b, pd_opnd x, pd_opnd y) {
    int64_t f;
    if (x.is_int && y.is_int && fold_int_bin(op, b, x.iv, y.iv, &f)) return pd_int_op(c, f);
    if (b == TH_I1) {
        const char *r = pd_newreg(c, RC_P);
        const char *px = pd_as_reg(c, x, RC_P), *py = pd_as_reg(c, y, RC_P);
        switch (op) {
        case THB_AND: case THB_MIN: case THB_UMIN: case THB_MUL: pd_ins(c, "and.pred %s, %s, %s", r, px, py); break;
        case THB_OR: case THB_OR_DISJOINT: case THB_MAX: case THB_UMAX: pd_ins(c, "or.pred %s, %s, %s", r, px, py); break;
        case THB_XOR: case THB_ADD: case THB_SUB: pd_ins(c, "xor.pred %s, %s, %s", r, px, py); break;
        default: pd_error(c, "binary operation %d on i1", (int)op);
        }
        return reg_op(r);
    }
    /* identities that unrolled index arithmetic meets often */
    if (y.is_int && y.iv == 0 && (op == THB_ADD || op == THB_SUB || op == THB_OR || op == THB_OR_DISJOINT ||
                                  op == THB_XOR || op == THB_SHL || op == THB_SHR || op == THB_LSHR))
        return x;
    if (x.is_int && x.iv == 0 && (op == THB_ADD || op == THB_OR || op == THB_OR_DISJOINT || op == THB_XOR)) return y;
    if (y.is_int && y.iv == 1 && (op == THB_MUL || op == THB_DIV || op == THB_UDIV || op == THB_FLOORDIV)) return x;
    if (x.is_int && x.iv == 1 && op == THB_MUL) return y;
    if (b == TH_I32 && !x.is_int && y.is_int && y.iv >= 2 && y.iv <= INT32_MAX) {
        if (op == THB_UDIV && !tlc_is_pow2(y.iv)) return reg_op(udiv_const(c, x.s, (uint32_t)y.iv));
        if (op == THB_DIV) return reg_op(sdiv_const(c, x.s, (int32_t)y.iv));
    }
    /* unsigned division and remainder by a power of two, a multiplication by one */
    if (y.is_int && y.iv > 0 && tlc_is_pow2(y.iv) && b != TH_I8) {
        int sh = 0;
        while ((1ll << sh) < y.iv) sh++;
        if (op == THB_UDIV) return int_bin(c, THB_LSHR, b, x, pd_int_op(c, sh));
        if (op == THB_UREM) return int_bin(c, THB_AND, b, x, pd_int_op(c, y.iv - 1));
        if (op == THB_MUL) return int_bin(c, THB_SHL, b, x, pd_int_op(c, sh));
    }
    reg_class rc = class_of(th_scalar(b));
    const char *r = pd_newreg(c, rc);
    bool commutes = op == THB_ADD || op == THB_MUL || op == THB_AND || op == THB_OR || op == THB_OR_DISJOINT ||
                    op == THB_XOR || op == THB_MIN || op == THB_MAX || op == THB_UMIN || op == THB_UMAX;
    if (x.is_int && !y.is_int && commutes) { /* PTX takes an immediate as the second operand */
        pd_opnd t = x;
        x = y;
        y = t;
    }
    const char *xs = pd_as_reg(c, x, rc), *ys = y.s;
    const char *bt = btype(b), *st = stype(b), *ut = utype(b);
    switch (op) {
    case THB_ADD: pd_ins(c, "add.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_SUB: pd_ins(c, "sub.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_MUL: pd_ins(c, "mul.lo.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_DIV: pd_ins(c, "div.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_REM: pd_ins(c, "rem.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_UDIV: case THB_UREM: case THB_UMIN: case THB_UMAX: {
        const char *ux = b == TH_I8 ? low_byte(c, xs) : xs, *uy = b == TH_I8 ? low_byte(c, ys) : ys;
        const char *name = op == THB_UDIV ? "div" : op == THB_UREM ? "rem" : op == THB_UMIN ? "min" : "max";
        pd_ins(c, "%s.%s %s, %s, %s", name, ut, r, ux, uy);
        break;
    }
    case THB_FLOORDIV:
    case THB_FLOORMOD: {
        const char *q = pd_newreg(c, rc), *m = pd_newreg(c, rc);
        pd_ins(c, "div.%s %s, %s, %s", st, q, xs, ys);
        pd_ins(c, "rem.%s %s, %s, %s", st, m, xs, ys);
        r = floor_from(c, op, b, reg_op(q), reg_op(m), y).s;
        break;
    }
    case THB_MIN: pd_ins(c, "min.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_MAX: pd_ins(c, "max.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_AND: pd_ins(c, "and.%s %s, %s, %s", bt, r, xs, ys); break;
    case THB_OR: case THB_OR_DISJOINT: pd_ins(c, "or.%s %s, %s, %s", bt, r, xs, ys); break;
    case THB_XOR: pd_ins(c, "xor.%s %s, %s, %s", bt, r, xs, ys); break;
    case THB_SHL: case THB_SHR: case THB_LSHR: {
        /* the shift amount is a u32 whatever the width */
        const char *amt = ys;
        if (!y.is_int && b != TH_I32) {
            const char *t = pd_newreg(c, RC_R);
            pd_ins(c, "cvt.u32.%s %s, %s", ut, t, ys);
            amt = t;
        }
        const char *sx = op == THB_LSHR && b == TH_I8 ? low_byte(c, xs) : xs;
        if (op == THB_SHL) pd_ins(c, "shl.%s %s, %s, %s", bt, r, sx, amt);
        else if (op == THB_SHR) pd_ins(c, "shr.%s %s, %s, %s", st, r, sx, amt);
        else pd_ins(c, "shr.%s %s, %s, %s", ut, r, sx, amt);
        break;
    }
    default: pd_error(c, "unknown integer operation %d", (int)op); break;
    }
    pd_opnd o = reg_op(r);
    return b == TH_I8 && op != THB_SHR && op != THB_DIV && op != THB_REM && op != THB_MIN && op != THB_MAX
               ? norm_i8(c, o) : o;
}

/* ---- float arithmetic on one lane (f16 / bf16 through f32, one rounding) ---- */
static bool fast_math(const pd_ctx *c) { return (c->opt && c->opt->fast_math) || (c->k && c->k->fast_math); }

static pd_opnd fdiv(pd_ctx *c, pd_opnd x, pd_opnd y, th_base b) {
    if (b == TH_F64) {
        const char *r = pd_newreg(c, RC_D);
        pd_ins(c, "div.rn.f64 %s, %s, %s", r, pd_as_reg(c, x, RC_D), y.s);
        return reg_op(r);
    }
    pd_opnd fx = to_f32(c, x, b), fy = to_f32(c, y, b);
    const char *r = pd_newreg(c, RC_R);
    if (b == TH_F32) pd_ins(c, "div.%s.f32 %s, %s, %s", fast_math(c) ? "approx" : "full", r, pd_as_reg(c, fx, RC_R), fy.s);
    else pd_ins(c, "div.rn.f32 %s, %s, %s", r, pd_as_reg(c, fx, RC_R), fy.s);
    return from_f32(c, reg_op(r), b);
}

static pd_opnd float_bin(pd_ctx *c, th_binop op, th_base b, pd_opnd x, pd_opnd y) {
    if (op == THB_DIV) return fdiv(c, x, y, b);
    bool d = b == TH_F64;
    reg_class rc = d ? RC_D : RC_R;
    const char *ft = d ? "f64" : "f32";
    pd_opnd fx = d ? x : to_f32(c, x, b), fy = d ? y : to_f32(c, y, b);
    const char *xs = pd_as_reg(c, fx, rc), *ys = fy.s;
    const char *r = pd_newreg(c, rc);
    switch (op) {
    case THB_ADD: pd_ins(c, "add.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_SUB: pd_ins(c, "sub.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_MUL: pd_ins(c, "mul.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_MIN: pd_ins(c, "min.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_MAX: pd_ins(c, "max.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_REM:
    case THB_FLOORDIV:
    case THB_FLOORMOD: {
        /* q = x / y rounded (toward zero for REM, down otherwise); r = x - q * y */
        const char *q = pd_newreg(c, rc), *qi = pd_newreg(c, rc), *p = pd_newreg(c, rc);
        pd_ins(c, "div.rn.%s %s, %s, %s", ft, q, xs, ys);
        pd_ins(c, "cvt.%s.%s.%s %s, %s", op == THB_REM ? "rzi" : "rmi", ft, ft, qi, q);
        if (op == THB_FLOORDIV) {
            r = qi;
            break;
        }
        pd_ins(c, "mul.rn.%s %s, %s, %s", ft, p, qi, ys);
        pd_ins(c, "sub.rn.%s %s, %s, %s", ft, r, xs, p);
        break;
    }
    default: pd_error(c, "binary operation %d is not defined on floats", (int)op); break;
    }
    return d ? reg_op(r) : from_f32(c, reg_op(r), b);
}

static pd_opnd math_f32(pd_ctx *c, th_unop op, const char *x) {
    const char *r = pd_newreg(c, RC_R);
    switch (op) {
    case THU_SQRT: pd_ins(c, "sqrt.rn.f32 %s, %s", r, x); break;
    case THU_EXP2: pd_ins(c, "ex2.approx.f32 %s, %s", r, x); break;
    case THU_EXP2_APPROX: pd_ins(c, "ex2.approx.ftz.f32 %s, %s", r, x); break;
    case THU_EXP: {
        const char *t = pd_newreg(c, RC_R);
        pd_ins(c, "mul.f32 %s, %s, 0f3FB8AA3B", t, x);
        pd_ins(c, "ex2.approx.f32 %s, %s", r, t);
        break;
    }
    case THU_LOG2: pd_ins(c, "lg2.approx.f32 %s, %s", r, x); break;
    case THU_LOG2_APPROX: pd_ins(c, "lg2.approx.ftz.f32 %s, %s", r, x); break;
    case THU_LOG: {
        const char *t = pd_newreg(c, RC_R);
        pd_ins(c, "lg2.approx.f32 %s, %s", t, x);
        pd_ins(c, "mul.f32 %s, %s, 0f3F317218", r, t);
        break;
    }
    case THU_RSQRT: {
        const char *t = pd_newreg(c, RC_R);
        pd_ins(c, "sqrt.rn.f32 %s, %s", t, x);
        pd_ins(c, "div.rn.f32 %s, 0f3F800000, %s", r, t);
        break;
    }
    case THU_RSQRT_APPROX: pd_ins(c, "rsqrt.approx.ftz.f32 %s, %s", r, x); break;
    case THU_RCP_APPROX: pd_ins(c, "rcp.approx.ftz.f32 %s, %s", r, x); break;
    case THU_FLOOR: pd_ins(c, "cvt.rmi.f32.f32 %s, %s", r, x); break;
    case THU_CEIL: pd_ins(c, "cvt.rpi.f32.f32 %s, %s", r, x); break;
    case THU_SIN_APPROX: pd_ins(c, "sin.approx.f32 %s, %s", r, x); break;
    case THU_COS_APPROX: pd_ins(c, "cos.approx.f32 %s, %s", r, x); break;
    default: pd_error(c, "unary operation %d is not a math function", (int)op); break;
    }
    return reg_op(r);
}

static pd_opnd float_un(pd_ctx *c, th_unop op, th_base b, pd_opnd x) {
    if (b == TH_F64 && (op == THU_SQRT || op == THU_NEG || op == THU_ABS)) {
        const char *r = pd_newreg(c, RC_D), *xs = pd_as_reg(c, x, RC_D);
        pd_ins(c, "%s.f64 %s, %s", op == THU_SQRT ? "sqrt.rn" : op == THU_NEG ? "neg" : "abs", r, xs);
        return reg_op(r);
    }
    if (op == THU_NEG || op == THU_ABS) {
        if (b == TH_F32) {
            const char *r = pd_newreg(c, RC_R);
            pd_ins(c, "%s.f32 %s, %s", op == THU_NEG ? "neg" : "abs", r, pd_as_reg(c, x, RC_R));
            return reg_op(r);
        }
        /* f16 / bf16: the sign bit */
        const char *r = pd_newreg(c, RC_H);
        pd_ins(c, "%s.b16 %s, %s, %s", op == THU_NEG ? "xor" : "and", r, pd_as_reg(c, x, RC_H),
            op == THU_NEG ? "0x8000" : "0x7FFF");
        return reg_op(r);
    }
    pd_opnd f = to_f32(c, x, b);
    return from_f32(c, math_f32(c, op, pd_as_reg(c, f, RC_R)), b);
}

static pd_opnd pow_lane(pd_ctx *c, th_base b, pd_opnd x, const th_expr *exponent, pd_opnd ey);

/* ---- comparisons ---- */
static pd_opnd cmp_lane(pd_ctx *c, th_cmpop op, th_type t, pd_opnd x, pd_opnd y) {
    static const char *const fop[] = {"eq", "neu", "lt", "le", "gt", "ge"};
    static const char *const iop[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"};
    if ((unsigned)op > THC_UGE || (op > THC_GE && (is_floatb(t.base) || t.base == TH_I1))) {
        pd_error(c, "unknown comparison %d", (int)op);
        return pd_int_op(c, 0);
    }
    const char *r = pd_newreg(c, RC_P);
    if (is_floatb(t.base)) {
        bool d = t.base == TH_F64;
        pd_opnd fx = d ? x : to_f32(c, x, t.base), fy = d ? y : to_f32(c, y, t.base);
        pd_ins(c, "setp.%s.%s %s, %s, %s", fop[op], d ? "f64" : "f32", r, pd_as_reg(c, fx, d ? RC_D : RC_R), fy.s);
        return reg_op(r);
    }
    if (t.base == TH_I1) {
        if (x.is_int && y.is_int) return pd_int_op(c, 0); /* unreachable: folded by the caller */
        const char *px = pd_as_reg(c, x, RC_P), *py = pd_as_reg(c, y, RC_P);
        if (op == THC_EQ || op == THC_NE) {
            pd_ins(c, "xor.pred %s, %s, %s", r, px, py);
            if (op == THC_EQ) pd_ins(c, "not.pred %s, %s", r, r);
            return reg_op(r);
        }
        const char *ux = pd_newreg(c, RC_R), *uy = pd_newreg(c, RC_R);
        pd_ins(c, "selp.u32 %s, 1, 0, %s", ux, px);
        pd_ins(c, "selp.u32 %s, 1, 0, %s", uy, py);
        pd_ins(c, "setp.%s.u32 %s, %s, %s", iop[op], r, ux, uy);
        return reg_op(r);
    }
    bool uns = op >= THC_ULT;
    const char *ty = t.base != TH_PTR ? (uns ? utype(t.base) : stype(t.base)) : t.addrspace == TH_AS_SHARED ? "u32" : "u64";
    reg_class rc = class_of(t);
    const char *xs = pd_as_reg(c, x, rc), *ys = y.s;
    if (uns && t.base == TH_I8) {
        xs = low_byte(c, xs);
        ys = low_byte(c, y.is_int ? pd_as_reg(c, y, RC_H) : ys);
    }
    pd_ins(c, "setp.%s.%s %s, %s, %s", iop[op], ty, r, xs, ys);
    return reg_op(r);
}

/* ---- conversions (one lane) ---- */
static pd_opnd convert_lane(pd_ctx *c, pd_opnd x, th_type from, th_type to, bool uns);

pd_opnd pd_convert_lane(pd_ctx *c, pd_opnd x, th_type from, th_type to) { return convert_lane(c, x, from, to, false); }

/* The PTX type of an integer conversion's narrow side: 8-bit values are kept
 * sign-extended in 16-bit registers, and cvt reads or saturates the byte. */
static const char *int_cvt_type(th_base b, bool uns) {
    if (b == TH_I8) return uns ? "u8" : "s8";
    return uns ? utype(b) : stype(b);
}

static pd_opnd convert_lane(pd_ctx *c, pd_opnd x, th_type from, th_type to, bool uns) {
    th_base fb = from.base, tb = to.base;
    if (fb == tb && (fb != TH_PTR || from.addrspace == to.addrspace)) return x;
    if (fb == TH_PTR || tb == TH_PTR) {
        bool fs = fb == TH_PTR && from.addrspace == TH_AS_SHARED, ts = tb == TH_PTR && to.addrspace == TH_AS_SHARED;
        if (fb == TH_PTR && tb == TH_PTR) {
            /* address-space casts through generic */
            const char *r;
            if (fs) { /* shared (32-bit) -> generic */
                const char *w = pd_newreg(c, RC_D);
                pd_ins(c, "cvt.u64.u32 %s, %s", w, pd_as_reg(c, x, RC_R));
                r = pd_newreg(c, RC_D);
                pd_ins(c, "cvta.shared.u64 %s, %s", r, w);
                if (to.addrspace == TH_AS_GENERIC) return reg_op(r);
                x = reg_op(r);
                from = th_ptr(TH_AS_GENERIC);
            } else if (from.addrspace != TH_AS_GENERIC) {
                static const char *const sp[] = {"", "global", "", "shared", "const", "local"};
                r = pd_newreg(c, RC_D);
                pd_ins(c, "cvta.%s.u64 %s, %s", sp[from.addrspace <= 5 ? from.addrspace : 1], r, pd_as_reg(c, x, RC_D));
                x = reg_op(r);
                if (to.addrspace == TH_AS_GENERIC) return x;
            }
            static const char *const sp[] = {"", "global", "", "shared", "const", "local"};
            r = pd_newreg(c, RC_D);
            pd_ins(c, "cvta.to.%s.u64 %s, %s", sp[to.addrspace <= 5 ? to.addrspace : 1], r, pd_as_reg(c, x, RC_D));
            if (ts) {
                const char *n = pd_newreg(c, RC_R);
                pd_ins(c, "cvt.u32.u64 %s, %s", n, r);
                return reg_op(n);
            }
            return reg_op(r);
        }
        /* pointer <-> integer: the address bits */
        int pbits = (fb == TH_PTR ? fs : ts) ? 32 : 64;
        th_base ib = fb == TH_PTR ? tb : fb;
        int ibits = base_bytes(ib) * 8;
        if (x.is_int) return pd_int_op(c, x.iv);
        if (pbits == ibits) return x;
        if (fb == TH_PTR) { /* narrow or widen the address to the integer */
            const char *r = pd_newreg(c, class_of(th_scalar(ib)));
            pd_ins(c, "cvt.%s.%s %s, %s", utype(ib), pbits == 64 ? "u64" : "u32", r, x.s);
            return reg_op(r);
        }
        const char *r = pd_newreg(c, pbits == 64 ? RC_D : RC_R);
        pd_ins(c, "cvt.%s.%s %s, %s", pbits == 64 ? "u64" : "u32", utype(ib), r, x.s);
        return reg_op(r);
    }
    if (is_intb(fb) && is_intb(tb)) {
        if (tb == TH_I1) {
            if (x.is_int) return pd_int_op(c, x.iv != 0);
            const char *r = pd_newreg(c, RC_P);
            pd_ins(c, "setp.ne.%s %s, %s, 0", btype(fb), r, x.s);
            return reg_op(r);
        }
        if (fb == TH_I1) {
            if (x.is_int) return pd_int_op(c, x.iv & 1);
            const char *r = pd_newreg(c, class_of(to));
            pd_ins(c, "selp.%s %s, 1, 0, %s", btype(tb), r, x.s);
            return reg_op(r);
        }
        int fbits = base_bytes(fb) * 8, tbits = base_bytes(tb) * 8;
        if (x.is_int) {
            int64_t v = x.iv;
            if (uns && fbits < 64) v = (int64_t)((uint64_t)v & ((1ull << fbits) - 1));
            return pd_int_op(c, th_wrap_int(tb, v));
        }
        if (fb == TH_I8 && tb == TH_I16) return uns ? reg_op(low_byte(c, x.s)) : x; /* i8: sign-extended in 16 bits */
        if (fbits == tbits) return x;
        const char *r = pd_newreg(c, class_of(to));
        if (fbits < tbits) pd_ins(c, "cvt.%s.%s %s, %s", uns ? utype(tb) : stype(tb), int_cvt_type(fb, uns), r, x.s);
        else pd_ins(c, "cvt.%s.%s %s, %s", utype(tb), utype(fb), r, x.s);
        pd_opnd o = reg_op(r);
        return tb == TH_I8 ? norm_i8(c, o) : o;
    }
    if (is_intb(fb) && is_floatb(tb)) {
        int fbits = base_bytes(fb) * 8;
        if (x.is_int)
            return float_const(c, tb, uns && fb != TH_I1 && fbits < 64 ? (double)((uint64_t)x.iv & ((1ull << fbits) - 1))
                                                                        : (double)x.iv);
        const char *f = pd_newreg(c, tb == TH_F64 ? RC_D : RC_R);
        if (fb == TH_I1) pd_ins(c, "selp.f32 %s, 0f3F800000, 0f00000000, %s", f, x.s);
        else pd_ins(c, "cvt.rn.%s.%s %s, %s", tb == TH_F64 ? "f64" : "f32", int_cvt_type(fb, uns), f, x.s);
        if (fb == TH_I1 && tb == TH_F64) {
            const char *d = pd_newreg(c, RC_D);
            pd_ins(c, "cvt.f64.f32 %s, %s", d, f);
            return reg_op(d);
        }
        return tb == TH_F64 || tb == TH_F32 ? reg_op(f) : from_f32(c, reg_op(f), tb);
    }
    if (is_floatb(fb) && is_intb(tb)) {
        bool d = fb == TH_F64;
        pd_opnd f = d ? x : to_f32(c, x, fb);
        const char *fs = pd_as_reg(c, f, d ? RC_D : RC_R);
        if (tb == TH_I1) {
            const char *r = pd_newreg(c, RC_P);
            pd_ins(c, "setp.neu.%s %s, %s, %s", d ? "f64" : "f32", r, fs, d ? "0d0000000000000000" : "0f00000000");
            return reg_op(r);
        }
        /* cvt.rzi saturates to the destination's range (an 8-bit one too) */
        const char *r = pd_newreg(c, class_of(to));
        pd_ins(c, "cvt.rzi.%s.%s %s, %s", int_cvt_type(tb, uns), d ? "f64" : "f32", r, fs);
        return tb == TH_I8 ? norm_i8(c, reg_op(r)) : reg_op(r);
    }
    if (is_floatb(fb) && is_floatb(tb)) {
        if (fb == TH_F64 && tb == TH_F32) return reg_op(f64_to_f32(c, x));
        if (fb == TH_F32 && tb == TH_F64) return from_f32(c, x, TH_F64);
        pd_opnd f = to_f32(c, x, fb);
        return from_f32(c, f, tb);
    }
    char b1[32], b2[32];
    pd_error(c, "conversion from %s to %s", th_type_name(from, b1), th_type_name(to, b2));
    return pd_int_op(c, 0);
}

/* ---- values as 32-bit words (bitcasts, vector memory accesses) ---- */
/* The value's bytes as words of `wbytes` (2, 4 or 8) bytes: n lanes of
 * esize bytes packed little-endian. */
int pd_to_words(pd_ctx *c, const pd_val *v, th_type t, int wbytes, const char **w) {
    int esize = base_bytes(t.base), n = v->n, total = esize * n, nw = total / wbytes;
    reg_class wc = wbytes == 2 ? RC_H : wbytes == 4 ? RC_R : RC_D;
    if (t.base == TH_I1) {
        pd_error(c, "i1 values have no memory layout");
        return 0;
    }
    if (esize == wbytes) {
        for (int i = 0; i < n; i++) w[i] = pd_as_reg(c, v->l[i], wc);
        return n;
    }
    if (esize > wbytes) { /* split each lane */
        int per = esize / wbytes;
        for (int i = 0; i < n; i++) {
            const char *src = pd_as_reg(c, v->l[i], class_of(th_scalar(t.base)));
            tlc_strbuf sb;
            tlc_sb_init(&sb);
            tlc_sb_puts(&sb, "{");
            for (int j = 0; j < per; j++) {
                w[i * per + j] = pd_newreg(c, wc);
                tlc_sb_printf(&sb, "%s%s", j ? ", " : "", w[i * per + j]);
            }
            tlc_sb_puts(&sb, "}");
            pd_ins(c, "mov.b%d %s, %s", esize * 8, tlc_sb_cstr(&sb), src);
            tlc_sb_free(&sb);
        }
        return nw;
    }
    int per = wbytes / esize;
    for (int i = 0; i < nw; i++) {
        w[i] = pd_newreg(c, wc);
        if (esize == 1) { /* bytes: shift and or into the word */
            const char *acc = NULL;
            for (int j = 0; j < per; j++) {
                const char *h = pd_as_reg(c, v->l[i * per + j], RC_H);
                const char *u = pd_newreg(c, wc);
                pd_ins(c, "cvt.u%d.u8 %s, %s", wbytes * 8, u, h);
                if (j) {
                    const char *s = pd_newreg(c, wc);
                    pd_ins(c, "shl.b%d %s, %s, %d", wbytes * 8, s, u, 8 * j);
                    const char *o = pd_newreg(c, wc);
                    pd_ins(c, "or.b%d %s, %s, %s", wbytes * 8, o, acc, s);
                    acc = o;
                } else acc = u;
            }
            w[i] = acc;
            continue;
        }
        const pd_opnd *lo = &v->l[i * per], *hi = &v->l[i * per + 1];
        if (per == 2 && lo->pair && lo->pair == hi->pair && !lo->pair_hi && hi->pair_hi) {
            w[i] = lo->pair;
            continue;
        }
        if (per == 2 && lo->hconst && hi->hconst) {
            pd_ins(c, "mov.b32 %s, 0x%04X%04X", w[i], hi->hbits, lo->hbits);
            continue;
        }
        if (per == 2 && lo->f32src && hi->f32src && lo->half == hi->half) {
            pd_ins(c, "cvt.rn.%s.f32 %s, %s, %s", lo->half == TH_F16 ? "f16x2" : "bf16x2", w[i], hi->f32src, lo->f32src);
            continue;
        }
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        reg_class ec = class_of(th_scalar(t.base));
        for (int j = 0; j < per; j++) tlc_sb_printf(&sb, "%s%s", j ? ", " : "", pd_as_reg(c, v->l[i * per + j], ec));
        pd_ins(c, "mov.b%d %s, {%s}", wbytes * 8, w[i], tlc_sb_cstr(&sb));
        tlc_sb_free(&sb);
    }
    return nw;
}

/* The inverse: lanes of type t from words. */
static void from_words(pd_ctx *c, const char **w, int nw, int wbytes, th_type t, pd_val *v) {
    int esize = base_bytes(t.base);
    int n = nw * wbytes / esize;
    v->n = n;
    reg_class ec = class_of(th_scalar(t.base));
    if (esize == wbytes) {
        for (int i = 0; i < n; i++) v->l[i] = reg_op(w[i]);
        return;
    }
    if (esize > wbytes) {
        int per = esize / wbytes;
        for (int i = 0; i < n; i++) {
            const char *r = pd_newreg(c, ec);
            tlc_strbuf sb;
            tlc_sb_init(&sb);
            for (int j = 0; j < per; j++) tlc_sb_printf(&sb, "%s%s", j ? ", " : "", w[i * per + j]);
            pd_ins(c, "mov.b%d %s, {%s}", esize * 8, r, tlc_sb_cstr(&sb));
            tlc_sb_free(&sb);
            v->l[i] = reg_op(r);
        }
        return;
    }
    int per = wbytes / esize;
    for (int i = 0; i < nw; i++) {
        if (esize == 1) {
            for (int j = 0; j < per; j++) {
                const char *s = pd_newreg(c, wbytes == 8 ? RC_D : wbytes == 4 ? RC_R : RC_H);
                pd_ins(c, "shr.u%d %s, %s, %d", wbytes * 8, s, w[i], 8 * j);
                const char *h = pd_newreg(c, RC_H);
                if (wbytes == 2) pd_ins(c, "mov.b16 %s, %s", h, s);
                else pd_ins(c, "cvt.u16.u%d %s, %s", wbytes * 8, h, s);
                v->l[i * per + j] = norm_i8(c, reg_op(h));
            }
            continue;
        }
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        for (int j = 0; j < per; j++) {
            const char *r = pd_newreg(c, ec);
            v->l[i * per + j] = reg_op(r);
            if (per == 2 && wbytes == 4 && !is_var_reg(w[i])) {
                v->l[i * per + j].pair = w[i];
                v->l[i * per + j].pair_hi = j == 1;
            }
            tlc_sb_printf(&sb, "%s%s", j ? ", " : "", r);
        }
        pd_ins(c, "mov.b%d {%s}, %s", wbytes * 8, tlc_sb_cstr(&sb), w[i]);
        tlc_sb_free(&sb);
    }
}

/* ---- addresses: a register plus a constant offset ---- */
static th_expr *sum(pd_ctx *c, th_expr *x, th_expr *y) {
    if (!x) return y;
    if (!y) return x;
    return th_bin(c->a, THB_ADD, x, y);
}

/* e (a scalar integer) as rest + *off, the constant parts gathered into
 * *off (NULL rest: e is the constant). Lowering's index arithmetic does not
 * overflow, so the offset may also come out of a widening conversion:
 * the accesses of an unrolled copy then share one address register and
 * differ in the instruction's immediate offset, as with LLVM's
 * SeparateConstOffsetFromGEP. */
static th_expr *split_offset(pd_ctx *c, th_expr *e, int64_t *off, int depth) {
    *off = 0;
    if (!e || depth > 16 || !is_intb(e->type.base) || e->type.base == TH_I1 || e->type.lanes > 1) return e;
    switch (e->kind) {
    case THE_INT: *off = e->u.ival; return NULL;
    case THE_VAR: {
        pd_var *pv = pd_var_entry(c, e->u.var.var);
        if (pv->bound) {
            *off = pv->cval;
            return NULL;
        }
        return e;
    }
    case THE_BIN: {
        th_binop op = (th_binop)e->u.bin.op;
        int64_t oa, ob, k;
        if (op == THB_ADD || op == THB_OR_DISJOINT || op == THB_SUB) {
            th_expr *ra = split_offset(c, e->u.bin.a, &oa, depth + 1), *rb = split_offset(c, e->u.bin.b, &ob, depth + 1);
            if (oa == 0 && ob == 0) return e;
            if (op == THB_SUB) {
                *off = wsub(oa, ob);
                if (!rb) return ra ? ra : NULL;
                return th_bin(c->a, THB_SUB, ra ? ra : th_int(c->a, e->type.base, 0), rb);
            }
            *off = wadd(oa, ob);
            return sum(c, ra, rb);
        }
        if ((op == THB_MUL || op == THB_SHL) && th_expr_const_int(e->u.bin.b, &k) && (op == THB_MUL || (k >= 0 && k < 32))) {
            th_expr *ra = split_offset(c, e->u.bin.a, &oa, depth + 1);
            if (oa == 0) return e;
            *off = op == THB_MUL ? wmul(oa, k) : (int64_t)((uint64_t)oa << k);
            return ra ? th_bin(c->a, op, ra, e->u.bin.b) : NULL;
        }
        if (op == THB_MUL && th_expr_const_int(e->u.bin.a, &k)) {
            th_expr *rb = split_offset(c, e->u.bin.b, &ob, depth + 1);
            if (ob == 0) return e;
            *off = wmul(ob, k);
            return rb ? th_bin(c->a, op, e->u.bin.a, rb) : NULL;
        }
        return e;
    }
    case THE_CONVERT: {
        const th_expr *x = e->u.conv.a;
        if (!x || !is_intb(x->type.base) || x->type.base == TH_I1 || base_bytes(x->type.base) > base_bytes(e->type.base) ||
            e->u.conv.uns)
            return e;
        th_expr *r = split_offset(c, (th_expr *)x, off, depth + 1);
        if (*off == 0) return e;
        return r ? th_convert(c->a, r, e->type) : NULL;
    }
    default: return e;
    }
}

/* A pointer expression as a pointer without constant offsets plus *off bytes. */
const th_expr *pd_split_pointer(pd_ctx *c, const th_expr *e, int64_t *off) {
    *off = 0;
    if (!e) return e;
    if (e->kind == THE_PTR_ADD) {
        int64_t po, io;
        const th_expr *pr = pd_split_pointer(c, e->u.ptr_add.ptr, &po);
        th_expr *ir = split_offset(c, e->u.ptr_add.index, &io, 0);
        *off = wadd(po, wmul(io, th_type_bytes(e->elem)));
        if (!ir) return pr;
        if (pr == e->u.ptr_add.ptr && ir == e->u.ptr_add.index) return e;
        th_expr *n = tlc_arena_calloc(c->a, 1, sizeof *n);
        *n = *e;
        n->u.ptr_add.ptr = (th_expr *)pr;
        n->u.ptr_add.index = ir;
        return n;
    }
    if (e->kind == THE_SHARED_PTR && e->u.offset) {
        th_expr *r = split_offset(c, e->u.offset, off, 0);
        if (r == e->u.offset) return e;
        th_expr *n = tlc_arena_calloc(c->a, 1, sizeof *n);
        *n = *e;
        n->u.offset = r;
        return n;
    }
    return e;
}

/* The address of an access through p: a register and an immediate offset. */
const char *pd_address(pd_ctx *c, const th_expr *p, int64_t *off) {
    const th_expr *base = pd_split_pointer(c, p, off);
    if (*off < -(1ll << 31) || *off >= (1ll << 31)) { /* beyond an immediate: the whole address */
        base = p;
        *off = 0;
    }
    pd_opnd a = pd_expr(c, base).l[0];
    if (a.is_int) {
        *off = wadd(*off, a.iv);
        return pd_as_reg(c, pd_int_op(c, 0), class_of(p->type));
    }
    return pd_as_reg(c, a, class_of(p->type));
}

/* ---- memory accesses ---- */
/* The type of a memory word of `bytes` bytes (1 .. 8). */
static const char *mem_type(int bytes) { return bytes == 1 ? "u8" : bytes == 2 ? "b16" : bytes == 4 ? "b32" : "b64"; }

const char *pd_space_of(pd_ctx *c, const th_expr *ptr, bool load) {
    switch (ptr->type.addrspace) {
    case TH_AS_GLOBAL: {
        if (load && !c->k->pdl_wait) {
            int p = pd_ptr_param_of(c, ptr);
            if (p >= 0 && c->k->param_attrs && c->k->param_attrs[p].readonly) return ".global.nc";
        }
        return ".global";
    }
    case TH_AS_SHARED: return ".shared";
    case TH_AS_CONST: return ".const";
    case TH_AS_LOCAL: return ".local";
    default: return "";
    }
}

/* How an access of `total` bytes at alignment `align` is split: pieces of
 * `unit` bytes, each `k` words of `wbytes`. */
static void access_shape(int total, int align, int esize, int *unit, int *wbytes, int *k) {
    int u = total;
    if (align > 0 && align < u) u = align;
    if (u > 16) u = 16;
    while (u > esize && (total % u != 0 || (u & (u - 1)) != 0)) u /= 2;
    if (u < esize) u = esize;
    int w = u >= 4 ? 4 : u;
    if (esize > w) w = esize;
    *unit = u;
    *wbytes = w;
    *k = u / w;
}

static pd_val load(pd_ctx *c, const th_expr *e) {
    const th_expr *p = e->u.load.ptr;
    th_type t = e->type;
    pd_val v = {0};
    for (int i = 0; i < c->nmerged; i++) {
        if (c->merged[i].e != e) continue;
        if (!c->merged[i].done) { /* the first of its run to be evaluated: the wide load, now */
            const th_expr *wide = c->merged[i].wide;
            pd_val wv = load(c, wide);
            for (int j = 0; j < c->nmerged; j++)
                if (c->merged[j].wide == wide && c->merged[j].lane < wv.n) {
                    c->merged[j].v = wv.l[c->merged[j].lane];
                    c->merged[j].done = true;
                }
        }
        return scalar(c->merged[i].v);
    }
    if (!p || p->type.base != TH_PTR) { pd_error(c, "load through a non-pointer"); return undef_val(c, t); }
    int64_t boff;
    const char *base = pd_address(c, p, &boff);
    const char *space = pd_space_of(c, p, true);
    int esize = base_bytes(t.base), total = esize * lanes_of(t);
    if (t.base == TH_I1) { /* a byte */
        const char *h = pd_newreg(c, RC_H);
        pd_ins_access(c, "ld%s.u8 %s, [%s+%" PRId64 "]", space, h, base, boff);
        return scalar(pred_of_byte(c, h));
    }
    int unit, wbytes, k;
    access_shape(total, e->u.load.align > 0 ? e->u.load.align : esize, esize, &unit, &wbytes, &k);
    const char *words[PD_MAX_LANES];
    int nw = 0;
    for (int off = 0; off < total; off += unit) {
        reg_class wc = wbytes == 1 || wbytes == 2 ? RC_H : wbytes == 4 ? RC_R : RC_D;
        const char *ty = mem_type(wbytes);
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        for (int j = 0; j < k; j++) {
            words[nw + j] = pd_newreg(c, wc);
            tlc_sb_printf(&sb, "%s%s", j ? ", " : "", words[nw + j]);
        }
        if (k > 1) pd_ins_access(c, "ld%s.v%d.%s {%s}, [%s+%" PRId64 "]", space, k, ty, tlc_sb_cstr(&sb), base, wadd(boff, off));
        else pd_ins_access(c, "ld%s.%s %s, [%s+%" PRId64 "]", space, ty, tlc_sb_cstr(&sb), base, wadd(boff, off));
        tlc_sb_free(&sb);
        nw += k;
    }
    if (wbytes == 1) { /* byte loads: the lanes themselves */
        v.n = nw;
        for (int i = 0; i < nw; i++) v.l[i] = norm_i8(c, reg_op(words[i]));
        return v;
    }
    from_words(c, words, nw, wbytes, t, &v);
    return v;
}

void pd_store(pd_ctx *c, const th_expr *p, const pd_val *val, th_type t, int align) {
    int64_t boff;
    const char *base = pd_address(c, p, &boff);
    const char *space = pd_space_of(c, p, false);
    int esize = base_bytes(t.base), total = esize * val->n;
    if (t.base == TH_I1) {
        pd_ins_access(c, "st%s.u8 [%s+%" PRId64 "], %s", space, base, boff, byte_of_pred(c, val->l[0]));
        return;
    }
    int unit, wbytes, k;
    access_shape(total, align > 0 ? align : esize, esize, &unit, &wbytes, &k);
    const char *words[PD_MAX_LANES];
    int nw;
    if (wbytes == 1) {
        nw = val->n;
        for (int i = 0; i < nw; i++) words[i] = val->l[i].is_int ? val->l[i].s : pd_as_reg(c, val->l[i], RC_H);
    } else {
        nw = pd_to_words(c, val, t, wbytes, words);
    }
    const char *ty = mem_type(wbytes);
    int w = 0;
    for (int off = 0; off < total && w + k <= nw; off += unit, w += k) {
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        for (int j = 0; j < k; j++) tlc_sb_printf(&sb, "%s%s", j ? ", " : "", words[w + j]);
        if (k > 1) pd_ins_access(c, "st%s.v%d.%s [%s+%" PRId64 "], {%s}", space, k, ty, base, wadd(boff, off), tlc_sb_cstr(&sb));
        else pd_ins_access(c, "st%s.%s [%s+%" PRId64 "], %s", space, ty, base, wadd(boff, off), tlc_sb_cstr(&sb));
        tlc_sb_free(&sb);
    }
}

/* ---- adjacent loads merged (LLVM's load/store vectorizer) ---- */
static bool cse_same(pd_ctx *c, const th_expr *a, const th_expr *b, int stamp);

/* The largest power of two (up to 1024) known to divide e's value. */
static int64_t known_align(pd_ctx *c, const th_expr *e, int depth) {
    const int64_t max = 1024;
    if (!e || depth > 12) return 1;
    switch (e->kind) {
    case THE_INT: {
        uint64_t v = (uint64_t)e->u.ival;
        if (v == 0) return max;
        int64_t a = (int64_t)(v & (~v + 1));
        return a > max || a <= 0 ? max : a;
    }
    case THE_VAR: {
        pd_var *pv = pd_var_entry(c, e->u.var.var);
        if (pv->bound) {
            uint64_t v = (uint64_t)pv->cval;
            if (v == 0) return max;
            int64_t a = (int64_t)(v & (~v + 1));
            return a > max || a <= 0 ? max : a;
        }
        return pv->assigns == 1 && pv->def ? known_align(c, pv->def, depth + 1) : 1;
    }
    case THE_BIN: {
        int64_t a = known_align(c, e->u.bin.a, depth + 1), b = known_align(c, e->u.bin.b, depth + 1), k;
        switch ((th_binop)e->u.bin.op) {
        case THB_ADD: case THB_SUB: case THB_OR_DISJOINT: return a < b ? a : b;
        case THB_MUL: return a * b > max ? max : a * b;
        case THB_SHL:
            if (th_expr_const_int(e->u.bin.b, &k) && k >= 0 && k < 11) return a << k > max ? max : a << k;
            return a;
        case THB_AND: return a > b ? a : b;
        default: return 1;
        }
    }
    case THE_CONVERT:
        return e->u.conv.a && is_intb(e->u.conv.a->type.base) ? known_align(c, e->u.conv.a, depth + 1) : 1;
    case THE_SHARED_PTR: return e->u.offset ? known_align(c, e->u.offset, depth + 1) : max;
    case THE_PARAM: {
        int p = e->u.param;
        return c->k->param_attrs && p >= 0 && p < c->k->nparams && c->k->param_attrs[p].align > 0
                   ? c->k->param_attrs[p].align : 1;
    }
    case THE_PTR_ADD: {
        int64_t a = known_align(c, e->u.ptr_add.ptr, depth + 1);
        int64_t i = known_align(c, e->u.ptr_add.index, depth + 1) * th_type_bytes(e->elem);
        if (i > max) i = max;
        return a < i ? a : i;
    }
    default: return 1;
    }
}

typedef struct { const th_expr *e, *base; int64_t off; int stmt; } pd_scalar_load;

static void collect_loads(const th_expr *e, int stmt, pd_scalar_load *out, int *n, int cap) {
    if (!e) return;
    if (e->kind == THE_LOAD && e->type.lanes <= 1 && (e->type.base == TH_F16 || e->type.base == TH_BF16 ||
                                                      e->type.base == TH_I16 || e->type.base == TH_F32 ||
                                                      e->type.base == TH_I32)) {
        if (*n < cap) {
            out[*n].e = e;
            out[*n].stmt = stmt;
            (*n)++;
        }
        return;
    }
    const th_expr *tmp[3];
    int k;
    const th_expr *const *kids = th_expr_children(e, &k, tmp);
    for (int i = 0; i < k; i++) collect_loads(kids[i], stmt, out, n, cap);
}

static void add_merged(pd_ctx *c, const th_expr *e, const th_expr *wide, int lane) {
    c->merged = pd_grow(c->merged, c->nmerged, &c->cap_merged, sizeof *c->merged);
    c->merged[c->nmerged].e = e;
    c->merged[c->nmerged].wide = wide;
    c->merged[c->nmerged].lane = lane;
    c->merged[c->nmerged].done = false;
    c->nmerged++;
}

/* Appends the assignments of s (an assignment, a comment, or a sequence of
 * those) to leaves; false if s holds anything else. */
static bool flat_assignments(const th_stmt *s, const th_stmt **leaves, int *n, int cap) {
    if (!s || s->kind == THS_COMMENT) return true;
    if (s->kind == THS_ASSIGN) {
        if (*n >= cap) return false;
        leaves[(*n)++] = s;
        return true;
    }
    if (s->kind != THS_SEQ) return false;
    for (int i = 0; i < s->u.seq.n; i++)
        if (!flat_assignments(s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, leaves, n, cap)) return false;
    return true;
}

int pd_merge_loads(pd_ctx *c, const th_stmt *const *top, int ntop) {
    enum { WINDOW = 64, MAXLOADS = 128 };
    const th_stmt *stmts[WINDOW];
    int w = 0, n = 0;
    while (w < ntop) {
        int before = n;
        if (!flat_assignments(top[w], stmts, &n, WINDOW)) {
            n = before;
            break;
        }
        w++;
    }
    if (n < 2) return w;
    pd_scalar_load loads[MAXLOADS];
    int nl = 0;
    for (int i = 0; i < n; i++) collect_loads(stmts[i]->u.assign.value, i, loads, &nl, MAXLOADS);
    if (nl < 2) return w;
    for (int i = 0; i < nl; i++) loads[i].base = pd_split_pointer(c, loads[i].e->u.load.ptr, &loads[i].off);
    bool used[MAXLOADS] = {0};
    for (int i = 0; i < nl; i++) {
        if (used[i]) continue;
        const th_expr *li = loads[i].e;
        int esize = th_type_bytes(li->type);
        /* the run from loads[i]: the loads at off + esize, off + 2 esize, ... through the same address */
        int run[8] = {i}, len = 1;
        for (int want = 1; want < 8 && len == want; want++)
            for (int j = 0; j < nl; j++)
                if (!used[j] && j != i && loads[j].e->type.base == li->type.base &&
                    loads[j].e->u.load.ptr->type.addrspace == li->u.load.ptr->type.addrspace &&
                    loads[j].off == loads[i].off + want * esize && cse_same(c, loads[j].base, loads[i].base, c->stamp)) {
                    run[len++] = j;
                    break;
                }
        /* the widest aligned power-of-two prefix of the run (4 .. 16 bytes) */
        int64_t align = known_align(c, loads[i].base, 0);
        int take = 0;
        for (int k = len; k >= 2; k--) {
            int64_t bytes = (int64_t)k * esize;
            if ((k & (k - 1)) == 0 && bytes >= 4 && bytes <= 16 && align % bytes == 0 && loads[i].off % bytes == 0) {
                take = k;
                break;
            }
        }
        if (take < 2) continue;
        /* the address must mean the same from the run's first statement to its last:
         * no statement in between assigns what it reads */
        int lo = loads[run[0]].stmt, hi = lo;
        for (int k = 0; k < take; k++) {
            if (loads[run[k]].stmt < lo) lo = loads[run[k]].stmt;
            if (loads[run[k]].stmt > hi) hi = loads[run[k]].stmt;
        }
        int mark = ++c->nloops;
        for (int k = lo; k < hi; k++) pd_mark_assigned(c, stmts[k], mark);
        if (!pd_loop_invariant(c, loads[i].base, mark)) continue;
        th_expr *wide = tlc_arena_alloc(c->a, sizeof *wide);
        *wide = *li;
        wide->type = th_vec(li->type.base, take);
        wide->u.load.align = take * esize;
        for (int k = 0; k < take; k++) {
            used[run[k]] = true;
            add_merged(c, loads[run[k]].e, wide, k);
        }
    }
    return w;
}

/* ---- register arrays indexed at run time: local memory ---- */
/* The word an element of `esize` bytes is loaded and stored by. */
static int local_word(int esize) { return esize == 8 ? 8 : esize < 4 ? esize : 4; }

void pd_local_store(pd_ctx *c, pd_var *pv, pd_opnd index, const pd_val *x) {
    const th_var *v = pv->var;
    const char *addr = pd_local_addr(c, pv, index);
    int wb = local_word(base_bytes(v->type.base));
    if (v->type.base == TH_I1) { /* a byte per predicate */
        for (int i = 0; i < x->n; i++) pd_ins_access(c, "st.local.u8 [%s+%d], %s", addr, i, byte_of_pred(c, x->l[i]));
        return;
    }
    if (wb == 1) {
        for (int i = 0; i < x->n; i++) pd_ins_access(c, "st.local.u8 [%s+%d], %s", addr, i, pd_as_reg(c, x->l[i], RC_H));
        return;
    }
    const char *w[PD_MAX_LANES];
    int nw = pd_to_words(c, x, v->type, wb, w);
    for (int i = 0; i < nw; i++) pd_ins_access(c, "st.local.%s [%s+%d], %s", mem_type(wb), addr, i * wb, w[i]);
}

const char *pd_local_addr(pd_ctx *c, pd_var *pv, pd_opnd index) {
    const th_var *v = pv->var;
    int esize = th_type_bytes(v->type);
    if (!pv->local_sym) {
        pv->local_sym = tlc_arena_printf(c->a, "__tlc_local%d", c->nlocal++);
        tlc_sb_printf(&c->locals, "\t.local .align 16 .b8 %s[%d];\n", pv->local_sym, esize * v->array_len);
    }
    const char *b = pd_newreg(c, RC_D), *i64 = pd_newreg(c, RC_D), *r = pd_newreg(c, RC_D);
    pd_ins(c, "mov.u64 %s, %s", b, pv->local_sym);
    if (index.is_int) {
        pd_ins(c, "add.s64 %s, %s, %" PRId64, r, b, wmul(index.iv, esize));
        return r;
    }
    pd_ins(c, "cvt.s64.s32 %s, %s", i64, index.s);
    pd_ins(c, "mad.lo.s64 %s, %s, %d, %s", r, i64, esize, b);
    return r;
}

/* A register array read's index, as an i32 operand. */
static pd_opnd array_index(pd_ctx *c, const th_expr *e) {
    const th_expr *ie = e->u.var.index;
    pd_opnd idx = pd_expr(c, ie).l[0];
    if (ie && ie->type.base != TH_I32 && !idx.is_int) idx = pd_convert_lane(c, idx, ie->type, th_scalar(TH_I32));
    return idx;
}

/* The element a register-held array's index picks: a constant in range
 * after unrolling, else -1 (after an error). */
static int register_elem(pd_ctx *c, const th_var *var, pd_opnd idx) {
    if (!idx.is_int) { pd_error(c, "'%s' indexed at run time is not in local memory", var->name); return -1; }
    if (idx.iv < 0 || idx.iv >= var->array_len) {
        pd_error(c, "index %" PRId64 " out of range for '%s[%d]'", idx.iv, var->name, var->array_len);
        return -1;
    }
    return (int)idx.iv;
}

static pd_val array_read(pd_ctx *c, const th_expr *e) {
    const th_var *var = e->u.var.var;
    if (!var || var->array_len <= 0) { pd_error(c, "array read of a non-array"); return undef_val(c, e->type); }
    pd_var *pv = pd_var_entry(c, var);
    pd_opnd idx = array_index(c, e);
    pd_val v;
    v.n = lanes_of(var->type);
    if (pv->runtime_index) {
        const char *addr = pd_local_addr(c, pv, idx);
        pd_val r = {0};
        int esize = base_bytes(var->type.base), wb = local_word(esize);
        const char *words[PD_MAX_LANES];
        for (int i = 0; i < v.n * esize / wb; i++) {
            words[i] = pd_newreg(c, wb == 2 || wb == 1 ? RC_H : wb == 4 ? RC_R : RC_D);
            pd_ins_access(c, "ld.local.%s %s, [%s+%d]", mem_type(wb), words[i], addr, i * wb);
        }
        if (var->type.base == TH_I1) {
            r.n = v.n;
            for (int i = 0; i < v.n; i++) r.l[i] = pred_of_byte(c, words[i]);
            return r;
        }
        if (wb == 1) {
            r.n = v.n;
            for (int i = 0; i < v.n; i++) r.l[i] = norm_i8(c, reg_op(words[i]));
            return r;
        }
        from_words(c, words, v.n * esize / wb, wb, var->type, &r);
        return r;
    }
    int elem = register_elem(c, var, idx);
    if (elem < 0) return undef_val(c, e->type);
    pd_read_elem(c, pv, elem, &v);
    return v;
}

static pd_opnd ptr_add(pd_ctx *c, const th_expr *e) {
    const th_expr *whole = e;
    e = pd_ptr_reassoc(c, e, c->loop_mark);
    const th_expr *p = e->u.ptr_add.ptr, *ix = e->u.ptr_add.index;
    if (e != whole && ix->type.base == TH_I64) {
        /* the loop's part of a reassociated address: its offset in bytes
         * is shared by the accesses it moves (one column offset for the
         * rows of a tile), one add each */
        th_expr *bytes = th_bin(c->a, THB_MUL, (th_expr *)ix, th_int(c->a, TH_I64, th_type_bytes(e->elem)));
        const char *b = pd_as_reg(c, pd_expr(c, p).l[0], RC_D);
        pd_opnd off = pd_expr(c, bytes).l[0];
        const char *r = pd_newreg(c, RC_D);
        pd_ins(c, "add.s64 %s, %s, %s", r, b, pd_as_reg(c, off, RC_D));
        return reg_op(r);
    }
    pd_opnd base = pd_expr(c, p).l[0];
    pd_opnd idx = pd_expr(c, ix).l[0];
    int64_t size = th_type_bytes(e->elem);
    bool narrow = p->type.addrspace == TH_AS_SHARED;
    reg_class rc = narrow ? RC_R : RC_D;
    if (idx.is_int) {
        if (idx.iv == 0) return base;
        if (base.is_int) return pd_int_op(c, wadd(base.iv, wmul(idx.iv, size)));
        const char *r = pd_newreg(c, rc);
        pd_ins(c, "add.s%d %s, %s, %" PRId64, narrow ? 32 : 64, r, base.s, wmul(idx.iv, size));
        return reg_op(r);
    }
    const char *b = pd_as_reg(c, base, rc);
    const char *r = pd_newreg(c, rc);
    if (narrow) {
        const char *i32 = idx.s;
        if (ix->type.base == TH_I64) {
            const char *t = pd_newreg(c, RC_R);
            pd_ins(c, "cvt.u32.u64 %s, %s", t, idx.s);
            i32 = t;
        } else if (ix->type.base != TH_I32) {
            pd_opnd w = pd_convert_lane(c, idx, ix->type, th_scalar(TH_I32));
            i32 = w.s;
        }
        pd_ins(c, "mad.lo.s32 %s, %s, %" PRId64 ", %s", r, i32, size, b);
        return reg_op(r);
    }
    if (ix->type.base == TH_I64) {
        pd_ins(c, "mad.lo.s64 %s, %s, %" PRId64 ", %s", r, idx.s, size, b);
        return reg_op(r);
    }
    pd_opnd w = ix->type.base == TH_I32 ? idx : pd_convert_lane(c, idx, ix->type, th_scalar(TH_I32));
    const char *off = pd_newreg(c, RC_D);
    pd_ins(c, "mul.wide.s32 %s, %s, %" PRId64, off, w.s, size);
    pd_ins(c, "add.s64 %s, %s, %s", r, b, off);
    return reg_op(r);
}

/* ---- shuffles ---- */
static const char *shfl32(pd_ctx *c, bool bfly, const char *v, pd_opnd lane, int width) {
    const char *r = pd_newreg(c, RC_R);
    pd_ins(c, "shfl.sync.%s.b32 %s, %s, %s, %d, -1", bfly ? "bfly" : "idx", r, v, lane.s, ((32 - width) << 8) | 0x1f);
    return r;
}

static pd_val shuffle(pd_ctx *c, bool bfly, const pd_val *x, th_type t, pd_opnd lane, int width) {
    pd_val r = {0};
    int esize = base_bytes(t.base), total = esize * x->n;
    if (t.base == TH_I1) {
        const char *u = pd_newreg(c, RC_R);
        pd_ins(c, "selp.u32 %s, 1, 0, %s", u, pd_as_reg(c, x->l[0], RC_P));
        const char *s = shfl32(c, bfly, u, lane, width);
        const char *p = pd_newreg(c, RC_P);
        pd_ins(c, "setp.ne.u32 %s, %s, 0", p, s);
        return scalar(reg_op(p));
    }
    if (total < 4) { /* one 8- or 16-bit lane, widened */
        const char *u = pd_newreg(c, RC_R);
        pd_ins(c, "cvt.u32.u16 %s, %s", u, pd_as_reg(c, x->l[0], RC_H));
        const char *s = shfl32(c, bfly, u, lane, width);
        const char *h = pd_newreg(c, RC_H);
        pd_ins(c, "cvt.u16.u32 %s, %s", h, s);
        return scalar(t.base == TH_I8 ? norm_i8(c, reg_op(h)) : reg_op(h));
    }
    if (total % 4 || total > 4 * PD_MAX_LANES) { pd_error(c, "cannot shuffle a value of %d bytes", total); return *x; }
    const char *w[PD_MAX_LANES];
    int nw = pd_to_words(c, x, t, 4, w);
    for (int i = 0; i < nw; i++) w[i] = shfl32(c, bfly, w[i], lane, width);
    from_words(c, w, nw, 4, t, &r);
    return r;
}

static pd_val intrin(pd_ctx *c, const th_expr *e) {
    int n = e->u.intrin.nargs;
    th_expr **args = e->u.intrin.args;
    for (int i = 0; i < n; i++)
        if (!args || !args[i]) { pd_error(c, "intrinsic with a missing argument"); return undef_val(c, e->type); }
    switch (e->u.intrin.id) {
    case THI_SHFL_BFLY:
    case THI_SHFL_IDX: {
        int64_t width = 32;
        if (n < 2 || n > 3 || (n == 3 && (!th_expr_const_int(args[2], &width) || width < 1 || width > 32 ||
                                          (width & (width - 1))))) {
            pd_error(c, "shuffle wants (value, lane[, constant width])");
            return undef_val(c, e->type);
        }
        pd_val x = pd_expr(c, args[0]);
        pd_opnd lane = pd_expr(c, args[1]).l[0];
        lane = pd_convert_lane(c, lane, args[1]->type, th_scalar(TH_I32));
        return shuffle(c, e->u.intrin.id == THI_SHFL_BFLY, &x, e->type, lane, (int)width);
    }
    case THI_FMA: {
        if (n != 3) { pd_error(c, "fma wants three operands"); return undef_val(c, e->type); }
        pd_val a = pd_expr(c, args[0]), b = pd_expr(c, args[1]), d = pd_expr(c, args[2]);
        pd_val r;
        r.n = a.n;
        th_base bt = e->type.base;
        for (int i = 0; i < a.n; i++) {
            bool dd = bt == TH_F64;
            reg_class rc = dd ? RC_D : RC_R;
            pd_opnd fa = dd ? a.l[i] : to_f32(c, a.l[i], bt), fb = dd ? b.l[i] : to_f32(c, b.l[i], bt);
            pd_opnd fd = dd ? d.l[i] : to_f32(c, d.l[i], bt);
            const char *o = pd_newreg(c, rc);
            pd_ins(c, "fma.rn.%s %s, %s, %s, %s", dd ? "f64" : "f32", o, pd_as_reg(c, fa, rc), fb.s, fd.s);
            r.l[i] = dd ? reg_op(o) : from_f32(c, reg_op(o), bt);
        }
        return r;
    }
    case THI_E4M3_TO_F32:
    case THI_E5M2_TO_F32: { /* the byte in the low half of a b16: the low f16 of the pair */
        const char *fmt = e->u.intrin.id == THI_E5M2_TO_F32 ? "e5m2" : "e4m3";
        if (n != 1) { pd_error(c, "cvt.f32.%s wants one operand", fmt); return undef_val(c, e->type); }
        pd_opnd x = pd_expr(c, args[0]).l[0];
        const char *pair = pd_newreg(c, RC_R), *lo = pd_newreg(c, RC_H), *hi = pd_newreg(c, RC_H);
        const char *f = pd_newreg(c, RC_R);
        pd_ins(c, "cvt.rn.f16x2.%sx2 %s, %s", fmt, pair, pd_as_reg(c, x, RC_H));
        pd_ins(c, "mov.b32 {%s, %s}, %s", lo, hi, pair);
        pd_ins(c, "cvt.f32.f16 %s, %s", f, lo);
        return scalar(reg_op(f));
    }
    case THI_F32_TO_E4M3:
    case THI_F32_TO_E5M2: { /* the low byte of the pair, as an i8 value */
        const char *fmt = e->u.intrin.id == THI_F32_TO_E5M2 ? "e5m2" : "e4m3";
        if (n != 1) { pd_error(c, "cvt.%s.f32 wants one operand", fmt); return undef_val(c, e->type); }
        pd_opnd x = pd_expr(c, args[0]).l[0];
        const char *r = pd_as_reg(c, x, RC_R), *h = pd_newreg(c, RC_H);
        pd_ins(c, "cvt.rn.satfinite.%sx2.f32 %s, %s, %s", fmt, h, r, r);
        return scalar(norm_i8(c, reg_op(h)));
    }
    }
    pd_error(c, "unknown intrinsic %d", (int)e->u.intrin.id);
    return undef_val(c, e->type);
}

static pd_opnd mul_any(pd_ctx *c, th_base b, pd_opnd x, pd_opnd y) {
    return is_floatb(b) ? float_bin(c, THB_MUL, b, x, y) : int_bin(c, THB_MUL, b, x, y);
}

static pd_opnd pow_lane(pd_ctx *c, th_base b, pd_opnd x, const th_expr *exponent, pd_opnd ey) {
    int64_t n;
    if (th_pow_small_int(exponent, &n)) {
        if (n < 0 && !is_floatb(b)) { pd_error(c, "integer power with a negative exponent"); return pd_int_op(c, 0); }
        uint64_t m = (uint64_t)(n < 0 ? -n : n);
        pd_opnd acc = {0}, sq = x;
        bool have = false;
        while (m) {
            if (m & 1) {
                acc = have ? mul_any(c, b, acc, sq) : sq;
                have = true;
            }
            m >>= 1;
            if (m) sq = mul_any(c, b, sq, sq);
        }
        if (!have) return is_floatb(b) ? float_const(c, b, 1.0) : pd_int_op(c, 1);
        if (n < 0) return float_bin(c, THB_DIV, b, float_const(c, b, 1.0), acc);
        return acc;
    }
    if (!is_floatb(b)) { pd_error(c, "integer power needs a constant exponent in -64..64"); return pd_int_op(c, 0); }
    if (exponent && exponent->kind == THE_FLOAT && exponent->u.fval == 0.5) return float_un(c, THU_SQRT, b, x);
    pd_opnd l = float_un(c, THU_LOG2, b, x);
    pd_opnd p = float_bin(c, THB_MUL, b, ey, l);
    return float_un(c, THU_EXP2, b, p);
}

/* ---- common subexpressions ---- */
void pd_touch(pd_ctx *c, pd_var *pv) { pv->assigned_at = ++c->stamp; }


static uint64_t mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

/* Structural hash; false for what must not be reused (memory, shuffles). */
static bool cse_hash(pd_ctx *c, const th_expr *e, uint64_t *h) {
    if (!e) return false;
    uint64_t x = mix((uint64_t)e->kind * 131 + (uint64_t)e->type.base, (uint64_t)e->type.lanes * 7 + e->type.addrspace);
    switch (e->kind) {
    case THE_INT: x = mix(x, (uint64_t)e->u.ival); break;
    case THE_FLOAT: {
        uint64_t u;
        memcpy(&u, &e->u.fval, 8);
        x = mix(x, u);
        break;
    }
    /* a variable's last assignment is part of the hash: the entries of an
     * expression over it from before that assignment (never reusable) do
     * not pile up in one bucket, which made a body of many statements
     * updating one fragment quadratic */
    case THE_VAR: {
        pd_var *pv = pd_var_entry(c, e->u.var.var);
        x = mix(x, pv->bound ? (uint64_t)pv->cval * 31 + 1
                             : mix((uint64_t)(uintptr_t)e->u.var.var, (uint64_t)pv->assigned_at));
        break;
    }
    case THE_ARRAY_READ: {
        uint64_t ih;
        pd_var *pv = pd_var_entry(c, e->u.var.var);
        if (pv->runtime_index || !cse_hash(c, e->u.var.index, &ih)) return false;
        x = mix(mix(mix(x, (uint64_t)(uintptr_t)e->u.var.var), (uint64_t)pv->assigned_at), ih);
        break;
    }
    case THE_PARAM: x = mix(x, (uint64_t)e->u.param); break;
    case THE_SPECIAL: x = mix(x, (uint64_t)e->u.special); break;
    case THE_SHARED_PTR: {
        uint64_t oh = 0;
        if (e->u.offset && !cse_hash(c, e->u.offset, &oh)) return false;
        x = mix(x, oh);
        break;
    }
    case THE_PTR_ADD: {
        uint64_t a, b;
        if (!cse_hash(c, e->u.ptr_add.ptr, &a) || !cse_hash(c, e->u.ptr_add.index, &b)) return false;
        x = mix(mix(mix(x, a), b), (uint64_t)th_type_bytes(e->elem));
        break;
    }
    case THE_BIN: case THE_CMP: {
        uint64_t a, b;
        if (!cse_hash(c, e->u.bin.a, &a) || !cse_hash(c, e->u.bin.b, &b)) return false;
        x = mix(mix(mix(x, (uint64_t)e->u.bin.op), a), b);
        break;
    }
    case THE_UN: {
        uint64_t a;
        if (!cse_hash(c, e->u.un.a, &a)) return false;
        x = mix(mix(x, (uint64_t)e->u.un.op), a);
        break;
    }
    case THE_SELECT: {
        uint64_t a, b, d;
        if (!cse_hash(c, e->u.sel.cond, &a) || !cse_hash(c, e->u.sel.a, &b) || !cse_hash(c, e->u.sel.b, &d)) return false;
        x = mix(mix(mix(x, a), b), d);
        break;
    }
    case THE_CONVERT: case THE_BITCAST: {
        uint64_t a;
        if (!cse_hash(c, e->u.conv.a, &a)) return false;
        x = mix(x, a);
        if (e->u.conv.uns) x = mix(x, 1);
        break;
    }
    case THE_EXTRACT: {
        uint64_t a;
        if (!cse_hash(c, e->u.extract.vec, &a)) return false;
        x = mix(mix(x, a), (uint64_t)e->u.extract.lane);
        break;
    }
    case THE_BUILD:
        for (int i = 0; i < e->u.build.n; i++) {
            uint64_t a;
            if (!e->u.build.lanes || !cse_hash(c, e->u.build.lanes[i], &a)) return false;
            x = mix(x, a);
        }
        break;
    default: return false; /* loads, intrinsics */
    }
    *h = x;
    return true;
}

/* a (made at `stamp`) and b compute the same value now. */
static bool cse_same(pd_ctx *c, const th_expr *a, const th_expr *b, int stamp) {
    if (!a || !b || a->kind != b->kind || !th_type_eq(a->type, b->type)) return false;
    switch (a->kind) {
    case THE_INT: return a->u.ival == b->u.ival;
    case THE_FLOAT: return memcmp(&a->u.fval, &b->u.fval, sizeof a->u.fval) == 0;
    case THE_VAR: {
        if (a->u.var.var != b->u.var.var) return false;
        return pd_var_entry(c, a->u.var.var)->assigned_at <= stamp;
    }
    case THE_ARRAY_READ:
        return a->u.var.var == b->u.var.var && pd_var_entry(c, a->u.var.var)->assigned_at <= stamp &&
               cse_same(c, a->u.var.index, b->u.var.index, stamp);
    case THE_PARAM: return a->u.param == b->u.param;
    case THE_SPECIAL: return a->u.special == b->u.special;
    case THE_SHARED_PTR:
        return (!a->u.offset && !b->u.offset) || cse_same(c, a->u.offset, b->u.offset, stamp);
    case THE_PTR_ADD:
        return th_type_bytes(a->elem) == th_type_bytes(b->elem) && cse_same(c, a->u.ptr_add.ptr, b->u.ptr_add.ptr, stamp) &&
               cse_same(c, a->u.ptr_add.index, b->u.ptr_add.index, stamp);
    case THE_BIN: case THE_CMP:
        return a->u.bin.op == b->u.bin.op && cse_same(c, a->u.bin.a, b->u.bin.a, stamp) &&
               cse_same(c, a->u.bin.b, b->u.bin.b, stamp);
    case THE_UN: return a->u.un.op == b->u.un.op && cse_same(c, a->u.un.a, b->u.un.a, stamp);
    case THE_SELECT:
        return cse_same(c, a->u.sel.cond, b->u.sel.cond, stamp) && cse_same(c, a->u.sel.a, b->u.sel.a, stamp) &&
               cse_same(c, a->u.sel.b, b->u.sel.b, stamp);
    case THE_CONVERT: case THE_BITCAST:
        return a->u.conv.uns == b->u.conv.uns && cse_same(c, a->u.conv.a, b->u.conv.a, stamp);
    case THE_EXTRACT: return a->u.extract.lane == b->u.extract.lane && cse_same(c, a->u.extract.vec, b->u.extract.vec, stamp);
    case THE_BUILD:
        if (a->u.build.n != b->u.build.n) return false;
        for (int i = 0; i < a->u.build.n; i++)
            if (!cse_same(c, a->u.build.lanes[i], b->u.build.lanes[i], stamp)) return false;
        return true;
    default: return false;
    }
}

int pd_cse_mark(const pd_ctx *c) { return c->ncse; }

void pd_cse_truncate(pd_ctx *c, int mark) {
    while (c->ncse > mark) {
        pd_cse *x = &c->cse[--c->ncse];
        c->cse_head[x->hash % (uint64_t)c->ncse_buckets] = x->prev;
    }
}

/* Twice the buckets, every entry relinked in index order (each bucket's
 * chain newest first, as pd_cse_truncate expects). */
static void cse_rehash(pd_ctx *c) {
    int nb = c->ncse_buckets * 2;
    int *head = c->cse_head = pd_realloc(c->cse_head, sizeof *head * (size_t)nb);
    for (int i = 0; i < nb; i++) head[i] = -1;
    for (int i = 0; i < c->ncse; i++) {
        uint64_t b = c->cse[i].hash % (uint64_t)nb;
        c->cse[i].prev = head[b];
        head[b] = i;
    }
    c->ncse_buckets = nb;
}

static pd_val expr_uncached(pd_ctx *c, const th_expr *e);

pd_val pd_expr(pd_ctx *c, const th_expr *e) {
    if (!e || e->kind == THE_INT || e->kind == THE_FLOAT || e->kind == THE_VAR || e->kind == THE_PARAM ||
        e->kind == THE_SPECIAL || e->kind == THE_LOAD || e->kind == THE_INTRIN)
        return expr_uncached(c, e);
    uint64_t h;
    if (!cse_hash(c, e, &h)) return expr_uncached(c, e);
    for (int i = c->cse_head[h % (uint64_t)c->ncse_buckets]; i >= 0; i = c->cse[i].prev) {
        const pd_cse *x = &c->cse[i];
        if (x->hash == h && cse_same(c, x->e, e, x->stamp)) {
            pd_val v;
            v.n = x->n;
            memcpy(v.l, x->lanes, sizeof *x->lanes * (size_t)x->n);
            return v;
        }
    }
    pd_val v = expr_uncached(c, e);
    if (c->ncse >= 2 * c->ncse_buckets) cse_rehash(c);
    c->cse = pd_grow(c->cse, c->ncse, &c->cap_cse, sizeof *c->cse);
    pd_cse *x = &c->cse[c->ncse];
    x->e = e;
    x->hash = h;
    x->stamp = c->stamp;
    x->prev = c->cse_head[h % (uint64_t)c->ncse_buckets];
    x->n = v.n;
    x->lanes = tlc_arena_alloc(c->a, sizeof *x->lanes * (size_t)(v.n > 0 ? v.n : 1));
    memcpy(x->lanes, v.l, sizeof *v.l * (size_t)v.n);
    c->cse_head[h % (uint64_t)c->ncse_buckets] = c->ncse++;
    return v;
}

/* The terms of a tree of f32 additions, left to right (at most cap; a
 * subtree past that is one term). */
static int sum_terms(const th_expr *e, const th_expr **out, int n, int cap) {
    if (e->kind == THE_BIN && e->u.bin.op == THB_ADD && th_type_eq(e->type, th_scalar(TH_F32)) && n + 2 <= cap)
        return sum_terms(e->u.bin.b, out, sum_terms(e->u.bin.a, out, n, cap), cap);
    out[n] = e;
    return n + 1;
}

/* Under fast math, a sum of more than two terms is added up in one chain:
 * ptxas fuses each term's product into an fma then, where a tree (the
 * order reductions are written in) leaves half of them as multiplies. */
static bool chained_sum(pd_ctx *c, const th_expr *e, pd_opnd *out) {
    enum { MAX_TERMS = 256 };
    if (!fast_math(c) || !th_type_eq(e->type, th_scalar(TH_F32))) return false;
    const th_expr *a = e->u.bin.a, *b = e->u.bin.b;
    bool tree_a = a->kind == THE_BIN && a->u.bin.op == THB_ADD, tree_b = b->kind == THE_BIN && b->u.bin.op == THB_ADD;
    if (!tree_a && !tree_b) return false;
    const th_expr *terms[MAX_TERMS];
    int n = sum_terms(e, terms, 0, MAX_TERMS);
    pd_opnd acc = pd_expr(c, terms[0]).l[0];
    for (int i = 1; i < n; i++) acc = float_bin(c, THB_ADD, TH_F32, acc, pd_expr(c, terms[i]).l[0]);
    *out = acc;
    return true;
}

/* In a loop, an offset x + y with x or y loop-invariant (and not a
 * leaf): a constant belongs with that part, hoisted together, rather than
 * added in every iteration. */
static bool joins_invariant(pd_ctx *c, const th_expr *off) {
    if (c->loop_mark <= 0 || !off || off->kind != THE_BIN ||
        (off->u.bin.op != THB_ADD && off->u.bin.op != THB_OR_DISJOINT))
        return false;
    const th_expr *x = off->u.bin.a, *y = off->u.bin.b;
    return (x->kind != THE_VAR && pd_loop_invariant(c, x, c->loop_mark)) ||
           (y->kind != THE_VAR && pd_loop_invariant(c, y, c->loop_mark));
}

static pd_val expr_uncached(pd_ctx *c, const th_expr *e) {
    if (!e) { pd_error(c, "missing expression"); return scalar(pd_int_op(c, 0)); }
    th_type t = e->type;
    if (lanes_of(t) > PD_MAX_LANES) { pd_error(c, "vector of %d lanes", lanes_of(t)); return scalar(pd_int_op(c, 0)); }
    pd_val v = {0};
    v.n = lanes_of(t);
    switch (e->kind) {
    case THE_INT:
        for (int i = 0; i < v.n; i++) v.l[i] = is_floatb(t.base) ? float_const(c, t.base, (double)e->u.ival)
                                                                 : pd_int_op(c, th_wrap_int(t.base, e->u.ival));
        return v;
    case THE_FLOAT:
        for (int i = 0; i < v.n; i++) v.l[i] = is_floatb(t.base) ? float_const(c, t.base, e->u.fval)
                                                                 : pd_int_op(c, (int64_t)e->u.fval);
        return v;
    case THE_VAR: {
        const th_var *var = e->u.var.var;
        if (!var || var->array_len > 0) { pd_error(c, "read of a register array without an index"); return undef_val(c, t); }
        pd_var *pv = pd_var_entry(c, var);
        if (pv->bound) return scalar(pd_int_op(c, pv->cval));
        pd_read_elem(c, pv, 0, &v);
        return v;
    }
    case THE_ARRAY_READ: return array_read(c, e);
    case THE_PARAM:
        if (!c->k || e->u.param < 0 || e->u.param >= c->k->nparams) { pd_error(c, "parameter %d does not exist", e->u.param); return undef_val(c, t); }
        return scalar(pd_param_value(c, e->u.param, t));
    case THE_SPECIAL: return scalar(pd_special(c, e->u.special));
    case THE_SHARED_PTR: {
        int64_t k;
        const th_expr *rest = pd_split_pointer(c, e, &k);
        if (k != 0 && rest != e && !joins_invariant(c, rest->u.offset)) {
            /* the constant added last, where ptxas folds it into the using
             * instruction's immediate ([r+imm]; an mbarrier's uniform base
             * then needs no vector register, which ptxas would schedule
             * late to spare one) */
            const char *b = pd_as_reg(c, pd_expr(c, rest).l[0], RC_R);
            const char *r = pd_newreg(c, RC_R);
            pd_ins(c, "add.s32 %s, %s, %" PRId64, r, b, k);
            return scalar(reg_op(r));
        }
        const char *b = c->smem_reg;
        if (!b) {
            b = pd_newreg(c, RC_R);
            pd_ins(c, "mov.u32 %s, __tlc_smem", b);
        }
        if (!e->u.offset) return scalar(reg_op(b));
        pd_opnd off = pd_expr(c, e->u.offset).l[0];
        if (e->u.offset->type.base == TH_I64) off = pd_convert_lane(c, off, e->u.offset->type, th_scalar(TH_I32));
        if (off.is_int && off.iv == 0) return scalar(reg_op(b));
        const char *r = pd_newreg(c, RC_R);
        pd_ins(c, "add.s32 %s, %s, %s", r, b, off.s);
        return scalar(reg_op(r));
    }
    case THE_PTR_ADD: return scalar(ptr_add(c, e));
    case THE_LOAD: return load(c, e);
    case THE_BIN: {
        th_binop op = (th_binop)e->u.bin.op;
        if (op == THB_POW) {
            pd_val x = pd_expr(c, e->u.bin.a);
            int64_t n;
            pd_val y = th_pow_small_int(e->u.bin.b, &n) ? x : pd_expr(c, e->u.bin.b);
            for (int i = 0; i < v.n; i++) v.l[i] = pow_lane(c, t.base, x.l[i], e->u.bin.b, y.l[i < y.n ? i : 0]);
            return v;
        }
        bool pow2 = e->u.bin.b->kind == THE_INT && tlc_is_pow2(e->u.bin.b->u.ival);
        if ((op == THB_REM || op == THB_UREM || op == THB_FLOORDIV || op == THB_FLOORMOD) && is_intb(t.base) &&
            t.base != TH_I1 && t.base != TH_I8 && v.n == 1 && !(pow2 && op == THB_UREM)) {
            /* a % b as a - (a / b) * b, the quotient shared with a / b (one division); Python's
             * floor division and modulo from the same quotient and remainder */
            th_expr *q = tlc_arena_calloc(c->a, 1, sizeof *q);
            *q = *e;
            q->u.bin.op = op == THB_UREM ? THB_UDIV : THB_DIV;
            pd_val xv = pd_expr(c, e->u.bin.a), yv = pd_expr(c, e->u.bin.b);
            pd_opnd qv = pd_expr(c, q).l[0], x0 = xv.l[0], y0 = yv.l[0];
            if (!qv.is_int || !x0.is_int || !y0.is_int) {
                pd_opnd r = int_bin(c, THB_SUB, t.base, x0, int_bin(c, THB_MUL, t.base, qv, y0));
                if (op == THB_REM || op == THB_UREM) {
                    v.l[0] = r;
                    return v;
                }
                v.l[0] = floor_from(c, op, t.base, qv, r, y0);
                return v;
            }
        }
        if (op == THB_ADD && chained_sum(c, e, &v.l[0])) return v;
        pd_val x = pd_expr(c, e->u.bin.a), y = pd_expr(c, e->u.bin.b);
        for (int i = 0; i < v.n; i++)
            v.l[i] = is_floatb(t.base) ? float_bin(c, op, t.base, x.l[i], y.l[i]) : int_bin(c, op, t.base, x.l[i], y.l[i]);
        return v;
    }
    case THE_UN: {
        pd_val x = pd_expr(c, e->u.un.a);
        for (int i = 0; i < v.n; i++) {
            pd_opnd o = x.l[i];
            if (is_floatb(t.base)) { v.l[i] = float_un(c, e->u.un.op, t.base, o); continue; }
            if (o.is_int) {
                int64_t r = e->u.un.op == THU_NEG ? wsub(0, o.iv) : e->u.un.op == THU_NOT ? ~o.iv : o.iv < 0 ? wsub(0, o.iv) : o.iv;
                v.l[i] = pd_int_op(c, th_wrap_int(t.base, r));
                continue;
            }
            const char *r = pd_newreg_t(c, th_scalar(t.base));
            if (t.base == TH_I1) {
                if (e->u.un.op == THU_NOT) pd_ins(c, "not.pred %s, %s", r, o.s);
                else r = o.s; /* -x and |x| of one bit */
                v.l[i] = reg_op(r);
                continue;
            }
            switch (e->u.un.op) {
            case THU_NEG: pd_ins(c, "neg.%s %s, %s", stype(t.base), r, o.s); break;
            case THU_NOT: pd_ins(c, "not.%s %s, %s", btype(t.base), r, o.s); break;
            case THU_ABS: pd_ins(c, "abs.%s %s, %s", stype(t.base), r, o.s); break;
            default: pd_error(c, "unary operation %d on an integer", (int)e->u.un.op); break;
            }
            v.l[i] = t.base == TH_I8 ? norm_i8(c, reg_op(r)) : reg_op(r);
        }
        return v;
    }
    case THE_CMP: {
        const th_expr *xa = e->u.bin.a;
        pd_val x = pd_expr(c, xa), y = pd_expr(c, e->u.bin.b);
        th_type at = th_scalar(xa->type.base);
        at.addrspace = xa->type.addrspace;
        for (int i = 0; i < v.n; i++) {
            bool r;
            if (x.l[i].is_int && y.l[i].is_int && !is_floatb(at.base) && at.base != TH_PTR &&
                th_fold_cmp((th_cmpop)e->u.bin.op, at.base, x.l[i].iv, y.l[i].iv, &r)) {
                v.l[i] = pd_int_op(c, r);
                continue;
            }
            v.l[i] = cmp_lane(c, (th_cmpop)e->u.bin.op, at, x.l[i], y.l[i]);
        }
        return v;
    }
    case THE_SELECT: {
        pd_val cv = pd_expr(c, e->u.sel.cond);
        th_type ct = e->u.sel.cond->type;
        if (ct.base != TH_I1) { /* any scalar: != 0 */
            th_type st = th_scalar(ct.base);
            st.addrspace = ct.addrspace;
            for (int i = 0; i < cv.n; i++) cv.l[i] = pd_convert_lane(c, cv.l[i], st, th_scalar(TH_I1));
        }
        if (cv.n == 1 && cv.l[0].is_int) return pd_expr(c, cv.l[0].iv ? e->u.sel.a : e->u.sel.b);
        pd_val x = pd_expr(c, e->u.sel.a), y = pd_expr(c, e->u.sel.b);
        reg_class rc = class_of(t);
        for (int i = 0; i < v.n; i++) {
            pd_opnd cl = cv.l[cv.n > 1 ? i : 0];
            if (cl.is_int) { v.l[i] = cl.iv ? x.l[i] : y.l[i]; continue; }
            const char *r = pd_newreg(c, rc);
            if (rc == RC_P) {
                const char *px = pd_as_reg(c, x.l[i], RC_P), *py = pd_as_reg(c, y.l[i], RC_P);
                const char *t1 = pd_newreg(c, RC_P), *t2 = pd_newreg(c, RC_P), *nc = pd_newreg(c, RC_P);
                pd_ins(c, "and.pred %s, %s, %s", t1, cl.s, px);
                pd_ins(c, "not.pred %s, %s", nc, cl.s);
                pd_ins(c, "and.pred %s, %s, %s", t2, nc, py);
                pd_ins(c, "or.pred %s, %s, %s", r, t1, t2);
            } else {
                pd_ins(c, "selp.%s %s, %s, %s, %s", bits_of(rc), r, x.l[i].s, y.l[i].s, cl.s);
            }
            v.l[i] = reg_op(r);
        }
        return v;
    }
    case THE_CONVERT: {
        const th_expr *x = e->u.conv.a;
        pd_val xv = pd_expr(c, x);
        th_type ft = th_scalar(x->type.base), tt = th_scalar(t.base);
        ft.addrspace = x->type.addrspace;
        tt.addrspace = t.addrspace;
        for (int i = 0; i < v.n; i++) v.l[i] = convert_lane(c, xv.l[i], ft, tt, e->u.conv.uns);
        return v;
    }
    case THE_BITCAST: {
        const th_expr *x = e->u.conv.a;
        pd_val xv = pd_expr(c, x);
        if (th_type_eq(x->type, t)) return xv;
        if (x->type.base == TH_PTR || t.base == TH_PTR) {
            th_type ft = th_scalar(x->type.base), tt = th_scalar(t.base);
            ft.addrspace = x->type.addrspace;
            tt.addrspace = t.addrspace;
            return scalar(pd_convert_lane(c, xv.l[0], ft, tt));
        }
        int total = th_type_bytes(x->type);
        if (total != th_type_bytes(t)) { pd_error(c, "bitcast changes the size"); return undef_val(c, t); }
        if (total > 4 * PD_MAX_LANES) { pd_error(c, "bitcast of %d bytes", total); return undef_val(c, t); }
        int fe = base_bytes(x->type.base), te = base_bytes(t.base);
        if (fe == te) { /* same lane width: the registers as they are */
            for (int i = 0; i < v.n; i++) v.l[i] = reg_op(pd_as_reg(c, xv.l[i], class_of(th_scalar(t.base))));
            return v;
        }
        if (fe == 4 && te == 8 && xv.n == 2 && xv.l[1].is_int && !xv.l[0].is_int) {
            /* two words, the high one a constant (a wgmma descriptor's
             * layout bits): or'ed in as an immediate, not moved through a
             * register that ptxas then keeps in the vector file */
            const char *r = pd_newreg(c, RC_D);
            uint64_t hi = (uint64_t)(uint32_t)xv.l[1].iv << 32;
            pd_ins(c, "cvt.u64.u32 %s, %s", r, xv.l[0].s);
            if (hi) pd_ins(c, "or.b64 %s, %s, %" PRIu64, r, r, hi);
            return scalar(reg_op(r));
        }
        int wb = total >= 4 ? 4 : 2; /* 16-bit lanes pack into 32-bit words */
        const char *w[PD_MAX_LANES];
        if (total < 2) { pd_error(c, "bitcast of one byte"); return undef_val(c, t); }
        int nw = pd_to_words(c, &xv, x->type, wb, w);
        from_words(c, w, nw, wb, t, &v);
        return v;
    }
    case THE_EXTRACT: {
        const th_expr *vec = e->u.extract.vec;
        int l = e->u.extract.lane;
        const th_var *var = vec && (vec->kind == THE_VAR || vec->kind == THE_ARRAY_READ) ? vec->u.var.var : NULL;
        if (var && l >= 0 && l < lanes_of(vec->type)) { /* a lane of a variable: its word alone */
            pd_var *pv = pd_var_entry(c, var);
            if (vec->kind == THE_VAR && var->array_len <= 0 && !pv->bound) return scalar(pd_read_lane(c, pv, 0, l));
            if (vec->kind == THE_ARRAY_READ && var->array_len > 0 && !pv->runtime_index) {
                int elem = register_elem(c, var, array_index(c, vec));
                return elem < 0 ? undef_val(c, t) : scalar(pd_read_lane(c, pv, elem, l));
            }
        }
        pd_val x = pd_expr(c, vec);
        if (l < 0 || l >= x.n) { pd_error(c, "lane %d of a %d-lane vector", l, x.n); return undef_val(c, t); }
        return scalar(x.l[l]);
    }
    case THE_BUILD: {
        if (e->u.build.n != v.n) { pd_error(c, "vector built from %d lanes", e->u.build.n); return undef_val(c, t); }
        for (int i = 0; i < v.n; i++) v.l[i] = pd_expr(c, e->u.build.lanes[i]).l[0];
        return v;
    }
    case THE_INTRIN: return intrin(c, e);
    }
    pd_error(c, "unknown expression kind %d", (int)e->kind);
    return undef_val(c, t);
}
