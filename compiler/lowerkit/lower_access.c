/* Lowering helpers for memory: element addresses in global and shared
 * memory, bounds masks for tails, fragment index arithmetic, constant
 * range / alignment facts about Tile IR index expressions. */
#include <string.h>
#include "../support/int_math.h"
#include "../target/target.h"
#include "lower_ctx.h"

/* ---------------- constants and types ---------------- */
th_expr *tlc_i32(tlc_lower_ctx *lc, int64_t v) { return th_int(lc->a, TH_I32, v); }
th_expr *tlc_i64(tlc_lower_ctx *lc, int64_t v) { return th_int(lc->a, TH_I64, v); }

th_expr *tlc_and(tlc_lower_ctx *lc, th_expr *x, th_expr *y) {
    if (!x) return y;
    if (!y) return x;
    return th_bin(lc->a, THB_AND, x, y);
}

th_type tlc_reg_type(tir_dtype t) { return t == TIR_BOOL ? th_scalar(TH_I1) : th_from_dtype(t); }
th_type tlc_mem_type(tir_dtype t) { return th_from_dtype(t); }

static bool is_float_base(th_base b) { return b == TH_F16 || b == TH_BF16 || b == TH_F32 || b == TH_F64; }

th_expr *tlc_coerce(tlc_lower_ctx *lc, th_expr *e, th_type t) {
    if (th_type_eq(e->type, t)) return e;
    if (t.base == TH_I1 && e->type.base != TH_I1) {
        th_expr *zero = is_float_base(e->type.base) ? th_float(lc->a, e->type.base, 0.0) : th_int(lc->a, e->type.base, 0);
        return th_cmp(lc->a, THC_NE, e, zero);
    }
    if (e->type.base == TH_I1 && t.base != TH_I1) {
        th_expr *one = is_float_base(t.base) ? th_float(lc->a, t.base, 1.0) : th_int(lc->a, t.base, 1);
        th_expr *zero = is_float_base(t.base) ? th_float(lc->a, t.base, 0.0) : th_int(lc->a, t.base, 0);
        return th_select(lc->a, e, one, zero);
    }
    return th_convert(lc->a, e, t);
}

static bool is_int_base(th_base b) { return b == TH_I8 || b == TH_I16 || b == TH_I32 || b == TH_I64; }

void tlc_need_ptx_isa(tlc_lower_ctx *lc, int isa) {
    if (lc->tk->ptx_isa < isa) lc->tk->ptx_isa = isa;
}

/* float8 values are bytes in Thread IR (th_from_dtype); their value is
 * what these conversions make of the bits (cvt ... e4m3x2, e5m2x2). */
static void fp8_check_target(tlc_lower_ctx *lc, tir_dtype t) {
    int sm = tlc_target_of(lc->arch)->sm;
    /* PTX ISA 8.0 (the targets') has the conversions from sm_90 on, 8.1 on sm_89 */
    if (sm == 89) tlc_need_ptx_isa(lc, 81);
    if (lc->fp8_refused || sm >= 89) return;
    lc->fp8_refused = true;
    tlc_error(lc->diag, lc->k->loc, "kernel '%s' converts %s values, which needs sm_89 or newer "
              "(cvt ... %sx2); the target is %s", lc->k->name, tir_dtype_name(t), t == TIR_F8E5M2 ? "e5m2" : "e4m3",
              tlc_arch_name(lc->arch));
}

static th_expr *fp8_decode(tlc_lower_ctx *lc, th_expr *bits, tir_dtype t) {
    fp8_check_target(lc, t);
    th_expr *args[1] = {tlc_coerce(lc, bits, th_scalar(TH_I8))};
    return th_intrin_call(lc->a, t == TIR_F8E5M2 ? THI_E5M2_TO_F32 : THI_E4M3_TO_F32, th_scalar(TH_F32), args, 1);
}

static th_expr *fp8_encode(tlc_lower_ctx *lc, th_expr *f32, tir_dtype t) {
    fp8_check_target(lc, t);
    th_expr *args[1] = {tlc_coerce(lc, f32, th_scalar(TH_F32))};
    return th_intrin_call(lc->a, t == TIR_F8E5M2 ? THI_F32_TO_E5M2 : THI_F32_TO_E4M3, th_scalar(TH_I8), args, 1);
}

th_expr *tlc_coerce_from(tlc_lower_ctx *lc, th_expr *e, tir_dtype from, th_type t) {
    /* a float8 value read as anything but its own bits */
    if (tir_dtype_is_fp8(from) && e->type.base == TH_I8 && t.base != TH_I8)
        return tlc_coerce(lc, fp8_decode(lc, e, from), t);
    if (!tir_dtype_is_unsigned(from) || !is_int_base(e->type.base) || th_type_eq(e->type, t)) return tlc_coerce(lc, e, t);
    if (is_int_base(t.base) && th_type_bytes(t) > th_type_bytes(e->type)) return th_convert_unsigned(lc->a, e, t);
    if (t.base == TH_F32 || t.base == TH_F64) return th_convert_unsigned(lc->a, e, t);
    if (t.base == TH_F16 || t.base == TH_BF16) return tlc_coerce(lc, th_convert_unsigned(lc->a, e, th_scalar(TH_F32)), t);
    return tlc_coerce(lc, e, t); /* narrower, the same width, or a bool: the bits decide */
}

th_expr *tlc_convert_value(tlc_lower_ctx *lc, th_expr *e, tir_dtype from, tir_dtype to, th_type rt) {
    if (from != to && tir_dtype_is_fp8(from) && e->type.base == TH_I8) {
        e = fp8_decode(lc, e, from);
        from = TIR_F32;
    }
    if (from != to && tir_dtype_is_fp8(to))
        return tlc_coerce(lc, fp8_encode(lc, tlc_convert_value(lc, e, from, TIR_F32, th_scalar(TH_F32)), to), rt);
    th_base fb = e->type.base;
    if ((rt.base == TH_F16 || rt.base == TH_BF16) && (fb == TH_F16 || fb == TH_BF16) && fb != rt.base)
        e = th_convert(lc->a, e, th_scalar(TH_F32)); /* f16 <-> bf16: one rounding, through f32 */
    if (tir_dtype_is_unsigned(to) && is_float_base(fb)) {
        if (fb == TH_F16 || fb == TH_BF16) e = th_convert(lc->a, e, th_scalar(TH_F32));
        return th_convert_unsigned(lc->a, e, rt);
    }
    return tlc_coerce_from(lc, e, from, rt);
}

th_expr *tlc_zero(tlc_lower_ctx *lc, th_type t) {
    th_type s = th_scalar(t.base);
    th_expr *z = is_float_base(t.base) ? th_float(lc->a, t.base, 0.0) : th_int(lc->a, t.base, 0);
    if (t.lanes <= 1) return z;
    th_expr *lanes[16];
    for (int i = 0; i < t.lanes && i < 16; i++) lanes[i] = z;
    (void)s;
    return th_build(lc->a, t, lanes, t.lanes > 16 ? 16 : t.lanes);
}

/* ---------------- statements and temporaries ---------------- */
void tlc_emit(tlc_lower_ctx *lc, th_stmt *s) {
    if (s) tlc_ptrvec_push(lc->out, s);
}

th_stmt *tlc_barrier(tlc_lower_ctx *lc) {
    if (lc->range && lc->range->count < lc->k->threads)
        return th_barrier_sync(lc->a, lc->range->barrier, lc->range->count);
    return th_barrier(lc->a);
}

tlc_ptrvec *tlc_lower_begin(tlc_lower_ctx *lc) {
    tlc_ptrvec *saved = lc->out;
    lc->out = TLC_NEW(lc->a, tlc_ptrvec);
    return saved;
}

th_stmt *tlc_lower_end(tlc_lower_ctx *lc, tlc_ptrvec *saved) {
    int n = lc->out->len;
    void **items = tlc_ptrvec_freeze(lc->out, lc->a);
    lc->out = saved;
    return th_seq(lc->a, (th_stmt **)items, n);
}

th_stmt *tlc_ptx_stmt(tlc_lower_ctx *lc, tlc_ptx p, th_expr **args, int nargs, th_var **outs, int nouts) {
    return th_asm(lc->a, p.text, p.constraints, args, nargs, outs, nouts, true);
}

void tlc_emit_ptx(tlc_lower_ctx *lc, tlc_ptx p, th_expr **args, int nargs, th_var **outs, int nouts) {
    tlc_emit(lc, tlc_ptx_stmt(lc, p, args, nargs, outs, nouts));
}

th_var *tlc_temp(tlc_lower_ctx *lc, const char *prefix, th_type t, int array_len) {
    return th_new_var(lc->a, lc->tk, tlc_arena_printf(lc->a, "%s%d", prefix, lc->ntemp++), t, array_len);
}

th_expr *tlc_let(tlc_lower_ctx *lc, const char *prefix, th_expr *e) {
    if (e->kind == THE_INT || e->kind == THE_FLOAT || e->kind == THE_VAR || e->kind == THE_PARAM) return e;
    th_var *v = tlc_temp(lc, prefix, e->type, 0);
    tlc_emit(lc, th_assign(lc->a, v, NULL, e));
    return th_read(lc->a, v);
}

int64_t tlc_scratch(tlc_lower_ctx *lc, int64_t bytes) {
    int64_t off = tlc_align_up(lc->smem_top, 128);
    lc->smem_top = off + bytes;
    return off;
}

int64_t tlc_op_scratch(tlc_lower_ctx *lc, const tir_stmt *op, int64_t bytes) {
    const tlc_smem_scratch *p = tlc_plan_scratch(lc->plan, op);
    if (!p || bytes > p->bytes || lc->scratch_hit >= 0) return tlc_scratch(lc, bytes);
    lc->scratch_hit = (int)(p - lc->plan->smem.scratch);
    return p->offset;
}

void tlc_op_scratch_barrier(tlc_lower_ctx *lc, const tir_stmt *op) {
    if (lc->scratch_hit < 0 || lc->scratch_clear != op) tlc_emit(lc, tlc_barrier(lc));
}

/* ---------------- fragments ---------------- */
void tlc_frag_thread_index(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr **out) {
    th_expr *tid = th_read(lc->a, lc->tid);
    for (int d = 0; d < f->rank; d++) {
        th_expr *sum = tlc_i32(lc, 0);
        for (int i = 0; i < f->ndigits; i++) {
            const tlc_digit *g = &f->digits[i];
            if (g->target != TLC_DIGIT_THREAD || g->dim != d) continue;
            th_expr *v = th_bin(lc->a, THB_UDIV, tid, tlc_i32(lc, g->tstride));
            if (g->tstride * g->extent < lc->threads) v = th_bin(lc->a, THB_UREM, v, tlc_i32(lc, g->extent));
            sum = th_bin(lc->a, THB_ADD, sum, th_bin(lc->a, THB_MUL, v, tlc_i32(lc, g->lstride)));
        }
        out[d] = tlc_let(lc, "ti", sum);
    }
}

th_expr *tlc_frag_replica0(tlc_lower_ctx *lc, const tlc_fragment *f) {
    if (f->replicate <= 1) return NULL;
    th_expr *tid = th_read(lc->a, lc->tid);
    if (lc->in_turn) tid = th_bin(lc->a, THB_UREM, tid, tlc_i32(lc, 128)); /* its warpgroup's copy */
    th_expr *rep = tlc_i32(lc, 0);
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->dim >= 0) continue;
        th_expr *v = th_bin(lc->a, THB_UDIV, tid, tlc_i32(lc, g->tstride));
        if (g->tstride * g->extent < lc->threads) v = th_bin(lc->a, THB_UREM, v, tlc_i32(lc, g->extent));
        rep = th_bin(lc->a, THB_OR, rep, v);
    }
    return th_cmp(lc->a, THC_EQ, rep, tlc_i32(lc, 0));
}

/* The largest part of dim d's logical index that f's digits on `target` give. */
static int64_t digits_max(const tlc_fragment *f, int d, tlc_digit_target target) {
    int64_t m = 0;
    for (int i = 0; i < f->ndigits; i++) {
        const tlc_digit *g = &f->digits[i];
        if (g->target == target && g->dim == d) m += (g->extent - 1) * g->lstride;
    }
    return m;
}

th_expr *tlc_frag_valid(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr *const *thread_idx, int64_t slot) {
    int64_t c[TLC_FRAG_MAX_RANK];
    tlc_fragment_slot_part(f, slot, c);
    th_expr *cond = NULL;
    for (int d = 0; d < f->rank; d++) {
        int64_t tmax = digits_max(f, d, TLC_DIGIT_THREAD);
        if (c[d] + tmax < f->shape[d]) continue;      /* never a hole */
        if (c[d] >= f->shape[d]) return th_int(lc->a, TH_I1, 0); /* always a hole */
        /* The thread part is a multiple of g (the smallest thread digit
         * stride of d); when g divides the extent, slot offsets below g do
         * not change the answer: every slot of a vector shares one test. */
        int64_t g = 0;
        for (int i = 0; i < f->ndigits; i++) {
            const tlc_digit *x = &f->digits[i];
            if (x->target == TLC_DIGIT_THREAD && x->dim == d && (g == 0 || x->lstride < g)) g = x->lstride;
        }
        int64_t ce = g > 0 && f->shape[d] % g == 0 ? c[d] - c[d] % g : c[d];
        cond = tlc_and(lc, cond, th_cmp(lc->a, THC_LT, th_bin(lc->a, THB_ADD, thread_idx[d], tlc_i32(lc, ce)),
                                        tlc_i32(lc, f->shape[d])));
    }
    return cond;
}

th_expr *tlc_frag_valid_at(tlc_lower_ctx *lc, const tlc_fragment *f, th_expr *const *logical) {
    th_expr *cond = NULL;
    for (int d = 0; d < f->rank; d++)
        if (digits_max(f, d, TLC_DIGIT_SLOT) + digits_max(f, d, TLC_DIGIT_THREAD) >= f->shape[d])
            cond = tlc_and(lc, cond, th_cmp(lc->a, THC_LT, logical[d], tlc_i32(lc, f->shape[d])));
    return cond;
}

th_expr *tlc_region_holds(tlc_lower_ctx *lc, const tir_region *r, th_expr *const *l) {
    th_expr *cond = NULL;
    for (int d = 0; d < r->rank; d++) {
        int64_t s0, e;
        if (tir_expr_const_int(r->start[d], &s0) && tir_expr_const_int(r->extent[d], &e) && s0 == 0 &&
            e == tir_buffer_dim(r->buf, d))
            continue;
        th_expr *st = tlc_coerce(lc, tlc_lower_expr(lc, r->start[d]), th_scalar(TH_I32));
        th_expr *ex = tlc_coerce(lc, tlc_lower_expr(lc, r->extent[d]), th_scalar(TH_I32));
        cond = tlc_and(lc, cond, tlc_and(lc, th_cmp(lc->a, THC_GE, l[d], st),
                                         th_cmp(lc->a, THC_LT, l[d], th_bin(lc->a, THB_ADD, st, ex))));
    }
    return cond;
}

/* ---------------- Tile IR facts ---------------- */
bool tlc_expr_range(const tlc_lower_ctx *lc, const tir_expr *e, int64_t *lo, int64_t *hi) {
    int64_t a0, a1, b0, b1;
    switch (e->kind) {
    case TE_INT: *lo = *hi = e->u.ival; return true;
    case TE_VAR: {
        const tir_var *v = e->u.var;
        if (v->kind == TV_BLOCK_IDX) {
            int64_t g;
            if (v->axis >= 0 && v->axis < lc->k->grid_rank && tir_expr_const_int(lc->k->grid[v->axis], &g) && g >= 1) {
                *lo = 0;
                *hi = g - 1;
                return true;
            }
            return false;
        }
        if (v->kind == TV_THREAD_IDX) {
            *lo = 0;
            *hi = lc->k->thread_dims[v->axis] - 1;
            return true;
        }
        if (v->kind == TV_LET && v->def) return tlc_expr_range(lc, v->def, lo, hi);
        if (v->id >= 0 && v->id < lc->k->nvars && lc->var_known[v->id]) {
            *lo = lc->var_lo[v->id];
            *hi = lc->var_hi[v->id];
            return true;
        }
        return false;
    }
    case TE_CAST: return !e->u.cast.bits && tlc_expr_range(lc, e->u.cast.a, lo, hi);
    case TE_BINARY:
        if (e->u.bin.op == TB_BITAND && tir_expr_const_int(e->u.bin.b, &b0) && b0 >= 0) {
            *lo = 0; /* a mask that is not negative bounds the value, whatever it masks */
            *hi = b0;
            return true;
        }
        if (!tlc_expr_range(lc, e->u.bin.a, &a0, &a1)) {
            if (e->u.bin.op == TB_FLOORMOD && tir_expr_const_int(e->u.bin.b, &b0) && b0 > 0) {
                *lo = 0;
                *hi = b0 - 1;
                return true;
            }
            return false;
        }
        if (!tlc_expr_range(lc, e->u.bin.b, &b0, &b1)) return false;
        if (a0 < -(1LL << 40) || a1 > (1LL << 40) || b0 < -(1LL << 40) || b1 > (1LL << 40)) return false;
        switch (e->u.bin.op) {
        case TB_ADD: *lo = a0 + b0; *hi = a1 + b1; return true;
        case TB_SUB: *lo = a0 - b1; *hi = a1 - b0; return true;
        case TB_MUL: {
            int64_t p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
            *lo = *hi = p[0];
            for (int i = 1; i < 4; i++) {
                if (p[i] < *lo) *lo = p[i];
                if (p[i] > *hi) *hi = p[i];
            }
            return true;
        }
        case TB_FLOORDIV:
            if (b0 != b1 || b0 <= 0 || a0 < 0) return false;
            *lo = a0 / b0;
            *hi = a1 / b0;
            return true;
        case TB_FLOORMOD:
            if (b0 != b1 || b0 <= 0) return false;
            *lo = 0;
            *hi = b0 - 1;
            return true;
        case TB_MIN: *lo = a0 < b0 ? a0 : b0; *hi = a1 < b1 ? a1 : b1; return true;
        case TB_MAX: *lo = a0 > b0 ? a0 : b0; *hi = a1 > b1 ? a1 : b1; return true;
        default: return false;
        }
    default: return false;
    }
}

static int64_t pow2_factor(int64_t v) {
    if (v == 0) return 1024;
    int64_t p = 1;
    while (p < 1024 && v % (p * 2) == 0) p *= 2;
    return p;
}

int64_t tlc_expr_multiple_with(const tir_expr *e, tlc_var_multiple_fn *var, void *ctx) {
    if (!e) return 1;
    switch (e->kind) {
    case TE_INT: return pow2_factor(e->u.ival);
    case TE_VAR: return var ? var(e->u.var, ctx) : 1;
    case TE_CAST: return e->u.cast.bits ? 1 : tlc_expr_multiple_with(e->u.cast.a, var, ctx);
    case TE_BINARY: {
        int64_t a = tlc_expr_multiple_with(e->u.bin.a, var, ctx), b = tlc_expr_multiple_with(e->u.bin.b, var, ctx);
        switch (e->u.bin.op) {
        case TB_ADD: case TB_SUB: return a < b ? a : b;
        /* a % b = a - b * (a // b) */
        case TB_FLOORMOD: return a < b ? a : b;
        case TB_MUL: return a * b > 1024 ? 1024 : a * b;
        case TB_SHL: {
            int64_t s;
            if (tir_expr_const_int(e->u.bin.b, &s) && s >= 0 && s < 11) return a << s > 1024 ? 1024 : a << s;
            return a;
        }
        default: return 1;
        }
    }
    default: return 1;
    }
}

int64_t tlc_expr_multiple(const tir_expr *e) { return tlc_expr_multiple_with(e, NULL, NULL); }

int64_t tlc_dim_multiple(const tlc_lower_ctx *lc, const tir_expr *dim) {
    int64_t c;
    if (tir_expr_const_int(dim, &c)) return c > 0 ? pow2_factor(c) : 1;
    if (dim && dim->kind == TE_VAR && dim->u.var->kind == TV_SYM_DIM && lc->sym_multiple)
        for (int i = 0; i < lc->k->nsym; i++)
            if (lc->k->sym_dims[i] == dim->u.var) return lc->sym_multiple[i] > 1 ? lc->sym_multiple[i] : 1;
    return 1;
}

/* ---------------- global and shared memory ---------------- */
bool tlc_smem_any_unfenced(const tlc_lower_ctx *lc) {
    bool wgmma = false;
    for (int i = 0; i < lc->plan->ngemms; i++) wgmma |= lc->plan->gemms[i].inst.inst == TLC_INST_WGMMA;
    if (!wgmma) return false;
    for (int i = 0, n = lc->plan->smem.nregions; i < n; i++)
        if (lc->smem_unfenced[i]) return true;
    return false;
}

void tlc_smem_fence(tlc_lower_ctx *lc) {
    tlc_emit_ptx(lc, tlc_ptx_fence_proxy_async(), NULL, 0, NULL, 0);
    memset(lc->smem_unfenced, 0, sizeof(bool) * ((size_t)lc->plan->smem.nregions + 1));
}

th_expr *tlc_dim_value(tlc_lower_ctx *lc, const tir_buffer *b, int d) {
    const tir_expr *e = b->shape[d];
    int64_t c;
    if (tir_expr_const_int(e, &c)) return tlc_i64(lc, c);
    if (e->kind == TE_VAR && e->u.var->kind == TV_SYM_DIM) {
        for (int i = 0; i < lc->k->nsym; i++)
            if (lc->k->sym_dims[i] == e->u.var) return th_param_ref(lc->a, lc->tk, lc->sym_param[i]);
    }
    return tlc_coerce(lc, tlc_lower_expr(lc, e), th_scalar(TH_I64));
}

th_expr *tlc_global_elem_ptr(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx) {
    th_expr *off = tlc_i64(lc, 0);
    for (int d = 0; d < b->rank; d++) {
        if (d) off = th_bin(lc->a, THB_MUL, off, tlc_dim_value(lc, b, d));
        off = th_bin(lc->a, THB_ADD, off, tlc_coerce(lc, idx[d], th_scalar(TH_I64)));
    }
    int pi = lc->tensor_param[b->id];
    if (lc->addressed) lc->addressed[b->id] = lc->addressed[tir_buffer_storage(b)->id] = true;
    th_expr *base = pi >= 0 ? th_param_ref(lc->a, lc->tk, pi) : th_int(lc->a, TH_I64, 0);
    return th_ptr_add(lc->a, base, off, tlc_mem_type(b->dtype));
}

/* Byte address of element idx of a shared buffer: rows (all dims but the
 * last, linearized) times the row's bytes, plus the byte in the row; with
 * column panels, the panel first. A swizzle XORs byte bits 4.. with bits
 * 7.. of the address ((a >> 7) & (chunks - 1)) << 4. When the row takes at
 * most 128 bytes and at least the swizzle's, those bits 7.. come from the
 * row part H alone and the XOR touches only the in-row part L, so the
 * address is H + (L ^ mask(H)): in a fragment's copy the mask is then a
 * per-thread value and each element costs an XOR with a constant, not the
 * whole formula again. H is a multiple of the row's bytes (a power of two)
 * and L ^ mask below it, so the + is an OR of disjoint bits, said so for
 * LLVM, which would otherwise prove it with known-bits queries (0.6% of
 * mla_decode_split's compile; the PTX is the same). */
th_expr *tlc_shared_elem_ptr(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx) {
    const tlc_layout *l = b->layout;
    int eb = tir_dtype_bytes(b->dtype);
    tlc_arena *a = lc->a;
    th_expr *lin = tlc_i32(lc, 0);
    for (int d = 0; d + 1 < b->rank; d++) {
        if (d) lin = th_bin(a, THB_MUL, lin, tlc_i32(lc, l ? l->shape[d] : tir_buffer_dim(b, d)));
        lin = th_bin(a, THB_ADD, lin, tlc_coerce(lc, idx[d], th_scalar(TH_I32)));
    }
    th_expr *rows_part = NULL, *in_row = tlc_i32(lc, 0); /* element offsets: H / eb and L / eb */
    int64_t row_bytes = 0;
    if (b->rank && l && l->panel_elems > 0) {
        /* column panels (gemm_layouts.h): panel, then row, then column in panel */
        int64_t p = l->panel_elems, rows = l->bytes / l->elem_bytes / l->row_elems;
        th_expr *col = tlc_coerce(lc, idx[b->rank - 1], th_scalar(TH_I32));
        th_expr *panel = th_bin(a, THB_UDIV, col, tlc_i32(lc, p));
        in_row = th_bin(a, THB_UREM, col, tlc_i32(lc, p));
        rows_part = th_bin(a, THB_ADD, th_bin(a, THB_MUL, panel, tlc_i32(lc, rows * p)),
                           th_bin(a, THB_MUL, lin, tlc_i32(lc, p)));
        row_bytes = p * eb;
    } else if (b->rank) {
        int64_t row = l ? l->row_elems : tir_buffer_dim(b, b->rank - 1);
        rows_part = b->rank > 1 ? th_bin(a, THB_MUL, lin, tlc_i32(lc, row)) : tlc_i32(lc, 0);
        in_row = tlc_coerce(lc, idx[b->rank - 1], th_scalar(TH_I32));
        row_bytes = row * eb;
    } else {
        rows_part = lin;
    }
    th_expr *hi = th_bin(a, THB_MUL, rows_part, tlc_i32(lc, eb));
    th_expr *lo = th_bin(a, THB_MUL, in_row, tlc_i32(lc, eb));
    th_expr *byte;
    if (l && l->swizzle != TLC_SWIZZLE_NONE) {
        int64_t chunks = (int64_t)l->swizzle / 16;
        bool split = row_bytes >= (int64_t)l->swizzle && row_bytes <= 128 && tlc_is_pow2(row_bytes);
        th_expr *from = split ? hi : th_bin(a, THB_ADD, hi, lo);
        th_expr *mask = th_bin(a, THB_SHL, th_bin(a, THB_AND, th_bin(a, THB_LSHR, from, tlc_i32(lc, 7)),
                                                  tlc_i32(lc, chunks - 1)),
                               tlc_i32(lc, 4));
        byte = split ? th_bin(a, THB_OR_DISJOINT, hi, th_bin(a, THB_XOR, lo, mask)) : th_bin(a, THB_XOR, from, mask);
    } else {
        byte = th_bin(a, THB_ADD, hi, lo);
    }
    int64_t base = l ? l->offset : 0;
    th_expr *off = th_bin(a, THB_ADD, byte, tlc_i32(lc, base));
    /* multi-buffered by a Pipelined loop: the current stage's copy */
    if (lc->stage_off && b->id >= 0 && b->id < lc->k->nbuffers && lc->stage_off[b->id])
        off = th_bin(a, THB_ADD, off, lc->stage_off[b->id]);
    return th_shared_ptr(a, off);
}

th_expr *tlc_global_in_bounds(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx, const int64_t *max_idx) {
    th_expr *cond = NULL;
    for (int d = 0; d < b->rank; d++) {
        int64_t dim = tir_buffer_dim(b, d);
        if (dim > 0 && max_idx && max_idx[d] >= 0 && max_idx[d] < dim) continue;
        th_expr *lim = dim > 0 ? tlc_i32(lc, dim) : tlc_coerce(lc, tlc_dim_value(lc, b, d), th_scalar(TH_I32));
        cond = tlc_and(lc, cond, th_cmp(lc->a, THC_LT, tlc_coerce(lc, idx[d], th_scalar(TH_I32)), lim));
    }
    if (cond) lc->bounds_tests++;
    return cond;
}

/* ---------------- element loads and stores ---------------- */
static void lower_indices(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, th_expr **out, int64_t *maxv) {
    for (int d = 0; d < b->rank; d++) {
        out[d] = tlc_coerce(lc, tlc_lower_expr(lc, idx[d]), th_scalar(TH_I32));
        int64_t lo, hi;
        maxv[d] = tlc_expr_range(lc, idx[d], &lo, &hi) && lo >= 0 ? hi : -1;
    }
}

static th_expr *local_index(tlc_lower_ctx *lc, const tir_buffer *b, th_expr **idx) {
    th_expr *lin = tlc_i32(lc, 0);
    for (int d = 0; d < b->rank; d++) {
        if (d) lin = th_bin(lc->a, THB_MUL, lin, tlc_i32(lc, tir_buffer_dim(b, d)));
        lin = th_bin(lc->a, THB_ADD, lin, idx[d]);
    }
    return lin;
}

#define MAX_RANK 8

/* The register of fragment b's element at idx. A fragment every thread
 * holds whole (tlc_fragment_is_per_thread) is a per-thread array: a
 * constant slot where the Parallel loop's slot decides it, else its
 * row-major index at run time, like a local array's. */
static th_expr *fragment_slot(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc) {
    if (b->fragment && tlc_fragment_is_per_thread(b->fragment)) {
        int map[TLC_FRAG_MAX_RANK];
        const tlc_par_ctx *p = lc->par;
        if (p && b->rank <= TLC_FRAG_MAX_RANK && tlc_par_access_map(p->loop, b, idx, map) && p->slot >= 0 &&
            p->slot < p->frag->slots) {
            int64_t r = tlc_par_access_slot(p->frag, b->fragment, map, b->rank, p->slot);
            if (r >= 0) return tlc_i32(lc, r);
        }
        th_expr *ix[MAX_RANK];
        int64_t maxv[MAX_RANK];
        lower_indices(lc, b, idx, ix, maxv);
        return local_index(lc, b, ix);
    }
    return tlc_parallel_access_slot(lc, b, idx, loc);
}

th_expr *tlc_lower_load(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc) {
    th_type rt = tlc_reg_type(b->dtype);
    if (b->rank > MAX_RANK) {
        tlc_error(lc->diag, loc, "buffer '%s': rank %d is not supported", b->name, b->rank);
        return th_int(lc->a, TH_I32, 0);
    }
    th_expr *ix[MAX_RANK];
    int64_t maxv[MAX_RANK];
    switch (b->scope) {
    case TIR_SCOPE_FRAGMENT: return th_array_read(lc->a, lc->regs[b->id], fragment_slot(lc, b, idx, loc));
    case TIR_SCOPE_VAR: return th_read(lc->a, lc->regs[b->id]);
    case TIR_SCOPE_LOCAL:
        lower_indices(lc, b, idx, ix, maxv);
        return th_array_read(lc->a, lc->regs[b->id], local_index(lc, b, ix));
    case TIR_SCOPE_SHARED: {
        lower_indices(lc, b, idx, ix, maxv);
        int eb = tir_dtype_bytes(b->dtype);
        return tlc_coerce(lc, th_load(lc->a, tlc_shared_elem_ptr(lc, b, ix), tlc_mem_type(b->dtype), eb), rt);
    }
    case TIR_SCOPE_GLOBAL: {
        lower_indices(lc, b, idx, ix, maxv);
        int eb = tir_dtype_bytes(b->dtype);
        th_expr *ld = th_load(lc->a, tlc_global_elem_ptr(lc, b, ix), tlc_mem_type(b->dtype), eb);
        th_expr *cond = tlc_global_in_bounds(lc, b, ix, maxv);
        if (!cond) return tlc_coerce(lc, ld, rt);
        th_var *t = tlc_temp(lc, "g", tlc_mem_type(b->dtype), 0);
        tlc_emit(lc, th_assign(lc->a, t, NULL, tlc_zero(lc, tlc_mem_type(b->dtype))));
        tlc_emit(lc, th_if(lc->a, cond, th_assign(lc->a, t, NULL, ld), NULL));
        return tlc_coerce(lc, th_read(lc->a, t), rt);
    }
    }
    return th_int(lc->a, TH_I32, 0);
}

void tlc_lower_store(tlc_lower_ctx *lc, const tir_buffer *b, tir_expr *const *idx, th_expr *value, tlc_loc loc) {
    if (b->rank > MAX_RANK) {
        tlc_error(lc->diag, loc, "buffer '%s': rank %d is not supported", b->name, b->rank);
        return;
    }
    th_expr *ix[MAX_RANK];
    int64_t maxv[MAX_RANK];
    th_type rt = tlc_reg_type(b->dtype), mt = tlc_mem_type(b->dtype);
    th_expr *guard = NULL;
    if (lc->par && (b->scope == TIR_SCOPE_GLOBAL || b->scope == TIR_SCOPE_SHARED))
        guard = tlc_frag_replica0(lc, lc->par->frag); /* replicas compute the same value: one stores */
    th_stmt *st = NULL;
    switch (b->scope) {
    case TIR_SCOPE_FRAGMENT:
        st = th_assign(lc->a, lc->regs[b->id], fragment_slot(lc, b, idx, loc), tlc_coerce(lc, value, rt));
        break;
    case TIR_SCOPE_VAR: st = th_assign(lc->a, lc->regs[b->id], NULL, tlc_coerce(lc, value, rt)); break;
    case TIR_SCOPE_LOCAL:
        lower_indices(lc, b, idx, ix, maxv);
        st = th_assign(lc->a, lc->regs[b->id], local_index(lc, b, ix), tlc_coerce(lc, value, rt));
        break;
    case TIR_SCOPE_SHARED:
        lower_indices(lc, b, idx, ix, maxv);
        st = th_store(lc->a, tlc_shared_elem_ptr(lc, b, ix), tlc_coerce(lc, value, mt), tir_dtype_bytes(b->dtype));
        break;
    case TIR_SCOPE_GLOBAL:
        lower_indices(lc, b, idx, ix, maxv);
        st = th_store(lc->a, tlc_global_elem_ptr(lc, b, ix), tlc_coerce(lc, value, mt), tir_dtype_bytes(b->dtype));
        guard = tlc_and(lc, guard, tlc_global_in_bounds(lc, b, ix, maxv));
        break;
    }
    tlc_emit(lc, guard ? th_if(lc->a, guard, st, NULL) : st);
}
