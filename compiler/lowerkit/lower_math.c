/* The math functions the GPU has no instruction for, built in f32 from the
 * hardware approximations (ex2.approx, lg2.approx, sin.approx, cos.approx)
 * and plain arithmetic. Each keeps a relative error of a few 1e-7 where
 * its value is small, so that it can stand next to exp and log:
 *   sigmoid(x) = 1 / (1 + exp(-x))
 *   tanh(x)    odd Taylor polynomial below |x| = 0.25 (where 1 - 2/(e+1)
 *              would cancel), else sign(x) * (1 - 2 / (exp(2|x|) + 1))
 *   erf(x)     Taylor polynomial below |x| = 0.5, else Abramowitz and
 *              Stegun 7.1.26 (absolute error 1.5e-7), odd in x
 *   log1p(x)   Taylor polynomial for |x| < 0.25, else log(1 + x)
 *   sin, cos   x reduced to [-pi, pi] by Cody and Waite's two-part 2*pi
 *              with fma, then sin.approx / cos.approx
 * docs/language.md states the accuracy of each. */
#include "lower_ctx.h"

static th_expr *c32(tlc_lower_ctx *lc, double v) { return th_float(lc->a, TH_F32, v); }
static th_expr *add(tlc_lower_ctx *lc, th_expr *x, th_expr *y) { return th_bin(lc->a, THB_ADD, x, y); }
static th_expr *sub(tlc_lower_ctx *lc, th_expr *x, th_expr *y) { return th_bin(lc->a, THB_SUB, x, y); }
static th_expr *mul(tlc_lower_ctx *lc, th_expr *x, th_expr *y) { return th_bin(lc->a, THB_MUL, x, y); }
static th_expr *fdiv(tlc_lower_ctx *lc, th_expr *x, th_expr *y) { return th_bin(lc->a, THB_DIV, x, y); }

static th_expr *fma3(tlc_lower_ctx *lc, th_expr *x, th_expr *y, th_expr *z) {
    th_expr *args[3] = {x, y, z};
    return th_intrin_call(lc->a, THI_FMA, th_scalar(TH_F32), args, 3);
}

/* exp(x) as the language's exp: ex2.approx(x * log2(e)). */
static th_expr *fexp(tlc_lower_ctx *lc, th_expr *x) {
    return th_un(lc->a, THU_EXP2_APPROX, mul(lc, x, c32(lc, 1.4426950408889634)));
}

/* c[0] + t * (c[1] + t * (... c[n-1])) */
static th_expr *horner(tlc_lower_ctx *lc, th_expr *t, const double *c, int n) {
    th_expr *p = c32(lc, c[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = add(lc, c32(lc, c[i]), mul(lc, t, p));
    return p;
}

static th_expr *select_lt(tlc_lower_ctx *lc, th_expr *x, double bound, th_expr *below, th_expr *above) {
    return th_select(lc->a, th_cmp(lc->a, THC_LT, x, c32(lc, bound)), below, above);
}

/* -v where x < 0, else v (v >= 0): the sign of an odd function. */
static th_expr *with_sign_of(tlc_lower_ctx *lc, th_expr *x, th_expr *v) {
    v = tlc_let(lc, "mag", v);
    return select_lt(lc, x, 0.0, th_un(lc->a, THU_NEG, v), v);
}

static th_expr *lower_tanh(tlc_lower_ctx *lc, th_expr *x) {
    /* x + x^3 * (-1/3 + x^2 * (2/15 + x^2 * (-17/315 + x^2 * 62/2835))) */
    static const double c[] = {-1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835};
    th_expr *x2 = tlc_let(lc, "x2", mul(lc, x, x));
    th_expr *small = add(lc, x, mul(lc, mul(lc, x, x2), horner(lc, x2, c, 4)));
    th_expr *ax = tlc_let(lc, "ax", th_un(lc->a, THU_ABS, x));
    th_expr *e = fexp(lc, mul(lc, ax, c32(lc, 2.0)));
    th_expr *big = with_sign_of(lc, x, sub(lc, c32(lc, 1.0), fdiv(lc, c32(lc, 2.0), add(lc, e, c32(lc, 1.0)))));
    return select_lt(lc, ax, 0.25, small, big);
}

static th_expr *lower_erf(tlc_lower_ctx *lc, th_expr *x) {
    /* 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320) */
    static const double taylor[] = {1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320};
    static const double as[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
    th_expr *x2 = tlc_let(lc, "x2", mul(lc, x, x));
    th_expr *small = mul(lc, mul(lc, x, c32(lc, 1.1283791670955126)), horner(lc, x2, taylor, 6));
    th_expr *ax = tlc_let(lc, "ax", th_un(lc->a, THU_ABS, x));
    th_expr *t = tlc_let(lc, "t", fdiv(lc, c32(lc, 1.0), add(lc, c32(lc, 1.0), mul(lc, ax, c32(lc, 0.3275911)))));
    th_expr *poly = mul(lc, t, horner(lc, t, as, 5));
    th_expr *big = sub(lc, c32(lc, 1.0), mul(lc, poly, fexp(lc, th_un(lc->a, THU_NEG, x2))));
    return select_lt(lc, ax, 0.5, small, with_sign_of(lc, x, big));
}

static th_expr *lower_log1p(tlc_lower_ctx *lc, th_expr *x) {
    /* x * (1 - x/2 + x^2/3 - ... - x^10/11) */
    double c[11];
    for (int i = 0; i < 11; i++) c[i] = (i % 2 ? -1.0 : 1.0) / (i + 1);
    th_expr *small = mul(lc, x, horner(lc, x, c, 11));
    th_expr *big = mul(lc, th_un(lc->a, THU_LOG2, add(lc, c32(lc, 1.0), x)), c32(lc, 0.6931471805599453));
    th_expr *ax = th_un(lc->a, THU_ABS, x);
    return select_lt(lc, ax, 0.25, small, big);
}

/* x - k * 2pi for the k that puts it in [-pi, pi]: 2pi in two parts, the
 * first exact in f32, each product subtracted with one rounding (fma). */
static th_expr *reduce_2pi(tlc_lower_ctx *lc, th_expr *x) {
    const double two_pi = 6.283185307179586476925;
    double hi = (double)(float)two_pi, lo = (double)(float)(two_pi - hi);
    th_expr *k = th_un(lc->a, THU_FLOOR, add(lc, mul(lc, x, c32(lc, 1.0 / two_pi)), c32(lc, 0.5)));
    k = tlc_let(lc, "k", th_un(lc->a, THU_NEG, k));
    th_expr *r = fma3(lc, k, c32(lc, hi), x);
    return fma3(lc, k, c32(lc, lo), r);
}

th_expr *tlc_lower_math(tlc_lower_ctx *lc, tir_unop op, th_expr *x) {
    x = tlc_let(lc, "mx", x);
    switch (op) {
    case TU_SIGMOID: return fdiv(lc, c32(lc, 1.0), add(lc, c32(lc, 1.0), fexp(lc, th_un(lc->a, THU_NEG, x))));
    case TU_TANH: return lower_tanh(lc, x);
    case TU_ERF: return lower_erf(lc, x);
    case TU_LOG1P: return lower_log1p(lc, x);
    case TU_SIN: return th_un(lc->a, THU_SIN_APPROX, reduce_2pi(lc, x));
    case TU_COS: return th_un(lc->a, THU_COS_APPROX, reduce_2pi(lc, x));
    default: break;
    }
    tlc_error(lc->diag, (tlc_loc){0, 0}, "internal error: '%s' is not a composed math function", tir_unop_name(op));
    return x;
}
