/* gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum): C += A @ B
 * on the tensor cores, fp16 / bf16 operands, float32 accumulator, or a
 * float16 accumulator with fp16 operands (the instructions' f16 forms: two
 * halves per b32 register, in the f32 accumulator's element order, so the
 * fragment is the same), or float8_e4m3 or float8_e5m2 operands (both of one
 * kind) into float32 from sm_89 on (k32 instructions), or float32 operands
 * read as tf32 (k8): 32 bytes of K a step, as k16 is for 16-bit types, so
 * the shared layouts, descriptors and ldmatrix addresses are the same.
 * Neither wgmma nor ldmatrix transposes 8- or 32-bit elements: such operands
 * are K-major in shared memory, except a tf32 one stored MN-major, which
 * mma.sync reads one element per register.
 *
 * Layout rule (strict): C's fragment is fixed by the instruction and the
 * warp policy (layout/gemm_layouts.h); shared operands get swizzled panel
 * layouts (tlc_layout_gemm_operand), which annotate_layout's
 * make_swizzled_layout also means; an A operand in registers gets the
 * m16n8k16 A fragment, a B operand in registers the B fragment (mma.sync
 * only: wgmma reads B from shared memory).
 *
 * Lowering:
 *   sm_90a, whole warpgroups, operands in swizzled shared memory: each
 *     warpgroup issues wgmma.mma_async m64nNk16 with shared-memory matrix
 *     descriptors, between wgmma.fence and commit_group / wait_group 0.
 *     Operands written through the generic proxy (ordinary stores) get a
 *     fence.proxy.async and a barrier first; TMA-filled stage buffers do not.
 *   otherwise: each warp loads its shared operand tiles with ldmatrix
 *     (.trans for MN-major operands), takes those in registers from their
 *     fragments, and issues mma.sync m16n8k16 (float8: m16n8k32, PTX ISA
 *     8.4) per 16 x 8 tile. */
#include <stdio.h>
#include <string.h>
#include "../layout/gemm_layouts.h"
#include "../interp/interp_internal.h"
#include "../ir/tir_op.h"
#include "op_table.h"

static bool is_mma_dtype(tir_dtype t) { return t == TIR_F16 || t == TIR_BF16; }

/* K of one instruction: 32 bytes of each operand row */
static int k_step_of(tir_dtype t) { return 32 / tir_dtype_bytes(t); }

static tlc_layout *operand_layout(tlc_arena *a, const tir_buffer *b) {
    if (b->layout) return b->layout;
    int64_t shape[TLC_FRAG_MAX_RANK];
    for (int d = 0; d < b->rank && d < TLC_FRAG_MAX_RANK; d++) shape[d] = tir_buffer_dim(b, d);
    return tlc_layout_gemm_operand(a, b->rank, shape, tir_dtype_bytes(b->dtype));
}

/* Can wgmma read this operand through a descriptor? K-major: any swizzle
 * (a k16 step is 32 bytes, inside every swizzle row). MN-major: the
 * instruction's MN extent and every MN offset used must be whole swizzle
 * atoms. */
static bool wgmma_operand_ok(const tlc_layout *l, bool k_major, int mn_extent, int mn_step, int64_t mn_start) {
    if (!l || l->rank < 2 || l->swizzle == TLC_SWIZZLE_NONE) return false;
    int64_t atom = (int64_t)l->swizzle / l->elem_bytes;
    if (l->panel_elems == 0 && l->shape[l->rank - 1] != atom) return false;
    if (k_major) return true;
    return mn_extent % atom == 0 && mn_step % atom == 0 && mn_start % atom == 0;
}

/* A shared operand is read as a 2-d view of its buffer: rows are its dims
 * but the last, flattened (a buffer of stages [S, R, C] is S * R rows),
 * columns its last dim; that is how its layout stores it. */
static int64_t rows_per_index(const tir_buffer *b, int d) {
    int64_t n = 1;
    for (int e = d + 1; e + 1 < b->rank; e++) n *= tir_buffer_dim(b, e);
    return n;
}

static int64_t layout_rows(const tlc_layout *l) {
    int64_t n = 1;
    for (int d = 0; d + 1 < l->rank; d++) n *= l->shape[d];
    return n;
}

/* Where a shared operand's slice starts in the 2-d view of its buffer: the
 * constant part (rows, columns); *run_time (may be NULL) when an index of a
 * leading dim (a stage) is known only at run time. False when the slice's
 * own two dims start at run-time offsets. */
static bool operand_start(const tir_region *r, int64_t start[2], bool *run_time) {
    int rank = r->rank;
    bool rt = false;
    if (!tir_expr_const_int(r->start[rank - 2], &start[0]) || !tir_expr_const_int(r->start[rank - 1], &start[1]))
        return false;
    for (int d = 0; d + 2 < rank; d++) {
        int64_t v;
        if (tir_expr_const_int(r->start[d], &v)) start[0] += v * rows_per_index(r->buf, d);
        else rt = true;
    }
    if (run_time) *run_time = rt;
    return true;
}

/* A shared operand's slice must start where the instructions' steps can:
 * K a multiple of the k16 step, M or N of 8 rows (the swizzle pattern's
 * period; ldmatrix's 8 x 8 matrices); the slice's two dims at constant
 * offsets, the leading dims (stages) indexed, at run time too where every
 * index moves it by such a multiple of rows. */
static bool operand_start_ok(const tir_region *r, bool k_major, int k_step, char name, char *why, int whylen) {
    int64_t st[2];
    bool run_time;
    if (r->buf->scope != TIR_SCOPE_SHARED) return true;
    for (int d = 0; d + 2 < r->rank; d++) {
        int64_t e;
        if (!tir_expr_const_int(r->extent[d], &e) || e != 1) {
            snprintf(why, (size_t)whylen, "operand %c, a slice of the %d-d buffer '%s', must index every dim but the "
                     "last two (%s[i, :, :])", name, r->rank, r->buf->name, r->buf->name);
            return false;
        }
    }
    if (!operand_start(r, st, &run_time)) {
        snprintf(why, (size_t)whylen, "operand %c's slice of '%s' must start at compile-time offsets in its last two "
                 "dims", name, r->buf->name);
        return false;
    }
    int kd = k_major ? 1 : 0;
    int64_t row_step = kd == 0 ? 16 : 8;
    for (int d = 0; run_time && d + 2 < r->rank; d++) {
        int64_t v;
        if (!tir_expr_const_int(r->start[d], &v) && rows_per_index(r->buf, d) % row_step) {
            snprintf(why, (size_t)whylen, "operand %c: an index of dim %d of '%s' known only at run time moves the "
                     "slice by %lld rows, and the tensor cores need a multiple of %lld", name, d, r->buf->name,
                     (long long)rows_per_index(r->buf, d), (long long)row_step);
            return false;
        }
    }
    if (st[kd] % k_step != 0 || st[1 - kd] % 8 != 0) {
        snprintf(why, (size_t)whylen,
                 "operand %c's slice of '%s' starts at [%lld, %lld]: its K offset must be a multiple of %d and its "
                 "%s offset a multiple of 8", name, r->buf->name, (long long)st[0], (long long)st[1], k_step,
                 name == 'A' ? "M" : "N");
        return false;
    }
    return true;
}

bool tlc_gemm_choose(tlc_arena *a, const tir_kernel *k, tlc_arch arch, const tir_stmt *s, tlc_gemm_plan *p,
                     char *why, int whylen) {
    const tir_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
    bool fp8 = tir_dtype_is_fp8(A->dtype) && B->dtype == A->dtype && C->dtype == TIR_F32;
    /* float32 operands go in as tf32 (their low 13 mantissa bits unread) */
    bool tf32 = A->dtype == TIR_F32 && B->dtype == TIR_F32 && C->dtype == TIR_F32;
    bool int8 = A->dtype == TIR_I8 && B->dtype == TIR_I8 && C->dtype == TIR_I32;
    if (!fp8 && !tf32 && !int8 && (!is_mma_dtype(A->dtype) || A->dtype != B->dtype ||
                          !(C->dtype == TIR_F32 || (C->dtype == TIR_F16 && A->dtype == TIR_F16)))) {
        snprintf(why, (size_t)whylen, "the tensor cores take float16, bfloat16, float8_e4m3, float8_e5m2 or float32 "
                                      "(as tf32) operands into float32, float16 ones into float16, int8 ones into "
                                      "int32 (here %s x %s -> %s)",
                 tir_dtype_name(A->dtype), tir_dtype_name(B->dtype), tir_dtype_name(C->dtype));
        return false;
    }
    int k_step = k_step_of(A->dtype);
    /* 8- and 32-bit operands: wgmma's transpose bits and ldmatrix.trans are
     * for 16-bit types, so the instructions read them K-major from shared
     * memory; a tf32 operand stored MN-major goes to mma.sync, which reads
     * it element by element (lower_mma_sync) from a 2-d shared buffer. An A
     * operand in registers is in the instruction's own layout, whichever
     * way it is indexed (a_reg_fragment). */
    const char *kind = fp8 ? "float8" : int8 ? "int8" : "float32 (tf32)";
    bool byte_ops = fp8 || int8; /* 8-bit operands, k32 */
    bool a_mn = s->u.gemm.trans_a && A->scope == TIR_SCOPE_SHARED;
    bool b_mn = !s->u.gemm.trans_b && B->scope == TIR_SCOPE_SHARED;
    bool tf32_mn = tf32 && (a_mn || b_mn);
    if (tf32_mn && ((a_mn && A->rank != 2) || (b_mn && B->rank != 2))) {
        snprintf(why, (size_t)whylen, "a float32 (tf32) operand stored MN-major must be a whole 2-d shared buffer "
                                      "or a 2-d slice of one");
        return false;
    }
    if (byte_ops && (a_mn || b_mn)) {
        snprintf(why, (size_t)whylen, "%s operands are read K-major only: A as [M, K] and B as [N, K] with "
                                      "transpose_B=True (here transpose_A=%s, transpose_B=%s)", kind,
                 s->u.gemm.trans_a ? "True" : "False", s->u.gemm.trans_b ? "True" : "False");
        return false;
    }
    /* shared operands may be 2-d slices of buffers of more dims */
    if ((A->scope != TIR_SCOPE_SHARED ? A->rank != 2 : A->rank < 2) ||
        (B->scope != TIR_SCOPE_SHARED ? B->rank != 2 : B->rank < 2) || C->rank != 2) {
        snprintf(why, (size_t)whylen, "gemm operands must be 2-d buffers, or 2-d slices of shared buffers");
        return false;
    }
    if (!operand_start_ok(&s->u.gemm.a, !s->u.gemm.trans_a, k_step, 'A', why, whylen) ||
        !operand_start_ok(&s->u.gemm.b, s->u.gemm.trans_b, k_step, 'B', why, whylen))
        return false;
    int64_t a_start[2] = {0, 0}, b_start[2] = {0, 0};
    if (A->scope == TIR_SCOPE_SHARED) operand_start(&s->u.gemm.a, a_start, NULL);
    operand_start(&s->u.gemm.b, b_start, NULL);
    int m = s->u.gemm.m, n = s->u.gemm.n, kk = s->u.gemm.k;
    /* a per-warpgroup gemm is planned over one warpgroup and replicated */
    int threads = s->u.gemm.per_warpgroup ? 128 : tir_stmt_threads(k, s);
    bool shared_ops = A->scope == TIR_SCOPE_SHARED && B->scope == TIR_SCOPE_SHARED;
    /* A in registers (FlashAttention's P @ V) feeds wgmma too (transposed:
     * held in the transposed layout, a_reg_fragment) */
    bool a_regs = A->scope == TIR_SCOPE_FRAGMENT, b_regs = B->scope == TIR_SCOPE_FRAGMENT;
    /* a warpgroup's four warps start at a multiple of 128 threads */
    bool warpgroups = !s->range || s->range->lo % 128 == 0;
    /* B in registers (TileLang's gemm_sr / gemm_rr): mma.sync only, wgmma
     * reads B through a descriptor */
    if ((shared_ops || (a_regs && !b_regs)) && !tf32_mn && tlc_target_of(arch)->wgmma && warpgroups &&
        tlc_gemm_plan_make(p, arch, threads, m, n, kk, k_step, s->u.gemm.policy, true, why, whylen) &&
        p->inst == TLC_INST_WGMMA) {
        if (s->u.gemm.max_inst_n) tlc_gemm_plan_cap_n(p, s->u.gemm.max_inst_n);
        p->replicas = tir_stmt_threads(k, s) / threads;
        /* an MN-major operand's slice starts on a swizzle atom */
        bool ok = (a_regs || wgmma_operand_ok(operand_layout(a, A), !s->u.gemm.trans_a, 64, p->tile_m, a_start[1])) &&
                  wgmma_operand_ok(operand_layout(a, B), s->u.gemm.trans_b, p->inst_n, p->inst_n, b_start[1]) &&
                  wgmma_operand_ok(operand_layout(a, B), s->u.gemm.trans_b, p->inst_n, p->tile_n, b_start[1]);
        if (ok) return true;
    }
    if (fp8 && tlc_target_of(arch)->sm < 89) {
        snprintf(why, (size_t)whylen, "float8 gemms need sm_89 or newer (mma.sync m16n8k32, or sm_90a's wgmma); "
                                      "the target is %s", tlc_arch_name(arch));
        return false;
    }
    if (!tlc_gemm_plan_make(p, arch, threads, m, n, kk, k_step, s->u.gemm.policy, false, why, whylen)) return false;
    p->replicas = tir_stmt_threads(k, s) / threads;
    return true;
}

/* An operand fragment as the program indexes it: the instruction's, or with
 * its two dims swapped for a transposed operand (each element where the
 * transpose's would be: the registers the instruction reads are the same). */
static tlc_fragment *as_indexed(tlc_arena *a, tlc_fragment *f, bool transposed) {
    if (!transposed) return f;
    int to[2] = {1, 0};
    int64_t shape[2] = {f->shape[1], f->shape[0]};
    tlc_fragment *t = tlc_fragment_relabel(a, f, to, 2, shape);
    t->origin = f->origin;
    return t;
}

/* An A operand in registers: over [M, K], or [K, M] for transpose_A. */
static tlc_fragment *a_reg_fragment(tlc_arena *a, const tlc_gemm_plan *p, bool trans_a) {
    return as_indexed(a, tlc_gemm_a_fragment(a, p), trans_a);
}

/* A B operand in registers: over [K, N], or [N, K] for transpose_B. */
static tlc_fragment *b_reg_fragment(tlc_arena *a, const tlc_gemm_plan *p, bool trans_b) {
    return as_indexed(a, tlc_gemm_b_fragment(a, p), trans_b);
}

static const char *plan_name(tlc_arena *a, const tlc_gemm_plan *p) {
    const char *pol = tir_policy_name(p->policy);
    const char *rep = p->replicas > 1 ? tlc_arena_printf(a, ", in each of %d warpgroups", p->replicas) : "";
    if (p->inst == TLC_INST_WGMMA)
        return tlc_arena_printf(a, "gemm accumulator (wgmma m64n%dk%d, %s, %d x %d warpgroups of %d x %d%s)", p->inst_n,
                                p->k_step, pol, p->units_m, p->units_n, p->tile_m, p->tile_n, rep);
    return tlc_arena_printf(a, "gemm accumulator (mma.sync m16n8k%d, %s, %d x %d warps of %d x %d%s)", p->k_step, pol,
                            p->units_m, p->units_n, p->tile_m, p->tile_n, rep);
}

static bool gemm_infer(tlc_infer *st, const tir_stmt *s, bool free_pass) {
    (void)free_pass;
    tir_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
    bool before = st->changed;
    st->changed = false;
    /* shared operands: swizzled panels (also what make_swizzled_layout asks for) */
    tir_buffer *ops[2] = {A, B};
    for (int i = 0; i < 2; i++)
        if (ops[i]->scope == TIR_SCOPE_SHARED && !ops[i]->layout && ops[i]->rank <= TLC_FRAG_MAX_RANK) {
            ops[i]->layout = operand_layout(st->a, ops[i]);
            st->changed = true;
        }
    tlc_gemm_plan p;
    char why[512];
    if (!tlc_gemm_choose(st->a, st->k, st->arch, s, &p, why, sizeof why)) {
        tlc_error(st->diag, s->loc, "gemm cannot be mapped to the tensor cores: %s", why);
        st->failed = true;
        return false;
    }
    tlc_fragment *f = tlc_gemm_acc_fragment(st->a, &p);
    f->origin = plan_name(st->a, &p);
    if (!tlc_infer_propose(st, C, f, TLC_STRENGTH_STRICT, s))
        tlc_infer_conflict(st, s, C, f, "the gemm accumulator's layout is fixed by the instruction and the warp policy");
    if (A->scope == TIR_SCOPE_FRAGMENT) {
        tlc_fragment *fa = a_reg_fragment(st->a, &p, s->u.gemm.trans_a);
        bool wg = p.inst == TLC_INST_WGMMA;
        fa->origin = tlc_arena_printf(st->a, "gemm operand A in registers (%s%d, %s)",
                                      wg ? "wgmma m64k" : "mma.sync m16n8k", p.k_step, tir_policy_name(p.policy));
        if (!tlc_infer_propose(st, A, fa, TLC_STRENGTH_STRICT, s))
            tlc_infer_conflict(st, s, A, fa,
                               wg ? "an A operand in registers must have the wgmma A layout"
                                  : "an A operand in registers must have the mma.sync A layout");
    }
    if (B->scope == TIR_SCOPE_FRAGMENT) {
        tlc_fragment *fb = b_reg_fragment(st->a, &p, s->u.gemm.trans_b);
        fb->origin = tlc_arena_printf(st->a, "gemm operand B in registers (mma.sync m16n8k%d, %s)", p.k_step,
                                      tir_policy_name(p.policy));
        if (!tlc_infer_propose(st, B, fb, TLC_STRENGTH_STRICT, s))
            tlc_infer_conflict(st, s, B, fb, "a B operand in registers must have the mma.sync B layout");
    }
    bool changed = st->changed;
    st->changed = before || changed;
    return changed;
}

/* ---------------- lowering helpers ---------------- */
static th_var *scalar_tmp(tlc_lower_ctx *lc, const char *name, th_base b) { return tlc_temp(lc, name, th_scalar(b), 0); }

/* Accumulator registers as the instructions take them: one f32 slot each,
 * or (float16 accumulators) slots `slot`, `slot` + 1 packed in one b32. */
static bool f16_acc(const tir_buffer *C) { return C->dtype == TIR_F16; }
static int acc_per_reg(const tir_buffer *C) { return f16_acc(C) ? 2 : 1; }
static bool int_acc(const tir_buffer *C) { return C->dtype == TIR_I32; }
static th_base acc_reg_base(const tir_buffer *C) { return f16_acc(C) || int_acc(C) ? TH_I32 : TH_F32; }

/* mma.sync (synchronous): the pairs are packed before and unpacked after
 * each instruction. */
static th_expr *acc_pair_read(tlc_lower_ctx *lc, const tir_buffer *C, int64_t slot) {
    th_var *acc = lc->regs[C->id];
    if (!f16_acc(C)) return th_array_read(lc->a, acc, tlc_i32(lc, slot));
    th_expr *l2[2] = {th_array_read(lc->a, acc, tlc_i32(lc, slot)), th_array_read(lc->a, acc, tlc_i32(lc, slot + 1))};
    return th_bitcast(lc->a, th_build(lc->a, th_vec(TH_F16, 2), l2, 2), th_scalar(TH_I32));
}

static void acc_pair_write(tlc_lower_ctx *lc, const tir_buffer *C, int64_t slot, th_expr *reg) {
    th_var *acc = lc->regs[C->id];
    if (!f16_acc(C)) {
        tlc_emit(lc, th_assign(lc->a, acc, tlc_i32(lc, slot), reg));
        return;
    }
    th_expr *h2 = th_bitcast(lc->a, reg, th_vec(TH_F16, 2));
    for (int l = 0; l < 2; l++) tlc_emit(lc, th_assign(lc->a, acc, tlc_i32(lc, slot + l), th_extract(lc->a, h2, l)));
}

/* wgmma (asynchronous): a float16 accumulator lives in its b32 pairs from
 * the pack before the first wgmma of a chain to the unpack after the
 * chain's last gemm waits for all of it (wait_group 0), so that no
 * instruction touches a register an unfinished wgmma writes (unpacking
 * right after the issue read them early: wrong results once ptxas
 * scheduled it so). Planning never runs such a gemm ahead (warp
 * specialization's overlap). A float32 accumulator is its slots. */
static th_var *acc_regs(tlc_lower_ctx *lc, const tir_buffer *C) {
    if (!f16_acc(C)) return lc->regs[C->id];
    if (!lc->acc_packed[C->id])
        lc->acc_packed[C->id] = tlc_temp(lc, tlc_arena_printf(lc->a, "%s_pairs", C->name), th_scalar(TH_I32),
                                         (int)(C->fragment->slots / 2));
    return lc->acc_packed[C->id];
}

static void acc_pack(tlc_lower_ctx *lc, const tir_buffer *C) {
    if (!f16_acc(C)) return;
    th_var *pairs = acc_regs(lc, C);
    for (int64_t i = 0; i + 2 <= C->fragment->slots; i += 2)
        tlc_emit(lc, th_assign(lc->a, pairs, tlc_i32(lc, i / 2), acc_pair_read(lc, C, i)));
}

static void acc_unpack(tlc_lower_ctx *lc, const tir_buffer *C) {
    if (!f16_acc(C)) return;
    th_var *pairs = acc_regs(lc, C);
    for (int64_t i = 0; i + 2 <= C->fragment->slots; i += 2)
        acc_pair_write(lc, C, i, th_array_read(lc->a, pairs, tlc_i32(lc, i / 2)));
}

/* i32 shared address of the buffer's first byte (current stage). */
static th_expr *shared_base32(tlc_lower_ctx *lc, const tir_buffer *b) {
    th_expr *off = tlc_i32(lc, b->layout->offset);
    if (lc->stage_off && lc->stage_off[b->id]) off = th_bin(lc->a, THB_ADD, off, lc->stage_off[b->id]);
    return th_convert(lc->a, th_shared_ptr(lc->a, off), th_scalar(TH_I32));
}

/* Byte offset of element (row, col) before the swizzle (what a wgmma
 * descriptor's start address holds: the hardware swizzles the rest). */
static int64_t linear_byte(const tlc_layout *l, int64_t row, int64_t col) {
    int64_t eb = l->elem_bytes;
    if (l->panel_elems > 0) {
        int64_t p = l->panel_elems;
        return ((col / p) * layout_rows(l) * p + row * p + col % p) * eb;
    }
    return (row * l->row_elems + col) * eb;
}

static void clear_acc(tlc_lower_ctx *lc, const tir_buffer *C) {
    th_var *acc = lc->regs[C->id];
    for (int64_t i = 0; i < C->fragment->slots; i++)
        tlc_emit(lc, th_assign(lc->a, acc, tlc_i32(lc, i), tlc_zero(lc, th_scalar(acc->type.base))));
}

/* C set to 0 where `cond` holds (clear_if): at compile time where it folds
 * (an unrolled loop's variable), else a select per register, no branch
 * (a register a wgmma reads must not be written under control flow). */
static void clear_acc_if(tlc_lower_ctx *lc, const tir_buffer *C, th_expr *cond) {
    int64_t c;
    if (th_expr_const_int(cond, &c)) {
        if (c) clear_acc(lc, C);
        return;
    }
    th_var *acc = lc->regs[C->id];
    th_expr *k = tlc_let(lc, "clr", cond);
    for (int64_t i = 0; i < C->fragment->slots; i++)
        tlc_emit(lc, th_assign(lc->a, acc, tlc_i32(lc, i),
                               th_select(lc->a, k, tlc_zero(lc, th_scalar(acc->type.base)),
                                         th_array_read(lc->a, acc, tlc_i32(lc, i)))));
}

/* The rows a shared operand's slice starts at that are known only at run
 * time (indices of its leading dims), or NULL. */
static th_expr *run_time_rows(tlc_lower_ctx *lc, const tir_region *r) {
    th_expr *rows = NULL;
    if (r->buf->scope != TIR_SCOPE_SHARED) return NULL;
    for (int d = 0; d + 2 < r->rank; d++) {
        int64_t v;
        if (tir_expr_const_int(r->start[d], &v)) continue;
        th_expr *x = th_bin(lc->a, THB_MUL, tlc_coerce(lc, tlc_lower_expr(lc, r->start[d]), th_scalar(TH_I32)),
                            tlc_i32(lc, rows_per_index(r->buf, d)));
        rows = rows ? th_bin(lc->a, THB_ADD, rows, x) : x;
    }
    return rows ? tlc_let(lc, "srow", rows) : NULL;
}

/* ---------------- sm_80: ldmatrix + mma.sync ---------------- */
/* Per-thread ldmatrix addresses without per-instruction swizzle math. A
 * lane's row is row_lane + R0 and its 16-byte chunk chunk_lane + C0 / 8,
 * with R0 and C0 compile-time multiples of 8. Swizzled rows repeat every 8
 * rows, so the XOR term depends on the lane only, and the chunk's place
 * within a panel only on C0 / 8 modulo the chunks per swizzle row: one
 * precomputed offset per residue. */
typedef struct ldm_addr {
    th_expr *base;  /* i32: shared address of the buffer (stage) + the lane's row */
    th_expr *x[16]; /* per chunk residue: panel step + swizzled chunk, bytes */
    int cn;
    int64_t rowbytes, panel_bytes, elem_bytes;
} ldm_addr;

static void ldm_init(tlc_lower_ctx *lc, ldm_addr *L, const tir_buffer *b, th_expr *row_lane, th_expr *chunk_lane,
                     th_expr *stage_rows) {
    tlc_arena *a = lc->a;
    const tlc_layout *l = b->layout;
    int64_t eb = l->elem_bytes;
    L->elem_bytes = eb;
    L->rowbytes = (l->panel_elems > 0 ? l->panel_elems : l->row_elems) * eb;
    L->cn = l->swizzle == TLC_SWIZZLE_NONE ? 1 : (int)l->swizzle / 16;
    L->panel_bytes = l->swizzle == TLC_SWIZZLE_NONE ? 16 : layout_rows(l) * L->rowbytes;
    /* a stage's rows (run-time, whole multiples of 8: the XOR term stays the lane's) */
    th_expr *rows = stage_rows ? th_bin(a, THB_ADD, row_lane, stage_rows) : row_lane;
    L->base = tlc_let(lc, "lmb", th_bin(a, THB_ADD, shared_base32(lc, b), th_bin(a, THB_MUL, rows, tlc_i32(lc, L->rowbytes))));
    th_expr *xorv = L->cn == 1 ? tlc_i32(lc, 0)
                               : th_bin(a, THB_UREM, th_bin(a, THB_UDIV, th_bin(a, THB_MUL, row_lane, tlc_i32(lc, L->rowbytes)),
                                                             tlc_i32(lc, 128)), tlc_i32(lc, L->cn));
    for (int c = 0; c < L->cn; c++) {
        th_expr *ch = th_bin(a, THB_ADD, chunk_lane, tlc_i32(lc, c));
        th_expr *pan = th_bin(a, THB_MUL, th_bin(a, THB_UDIV, ch, tlc_i32(lc, L->cn)), tlc_i32(lc, L->panel_bytes));
        th_expr *in = th_bin(a, THB_MUL, th_bin(a, THB_XOR, th_bin(a, THB_UREM, ch, tlc_i32(lc, L->cn)), xorv), tlc_i32(lc, 16));
        L->x[c] = tlc_let(lc, "lmx", th_bin(a, THB_ADD, pan, in));
    }
}

static th_expr *ldm_at(tlc_lower_ctx *lc, const ldm_addr *L, int64_t r0, int64_t c0) {
    int64_t q = c0 * L->elem_bytes / 16;
    int64_t k = r0 * L->rowbytes + (q / L->cn) * L->panel_bytes;
    return th_bin(lc->a, THB_ADD, th_bin(lc->a, THB_ADD, L->base, L->x[q % L->cn]), tlc_i32(lc, k));
}

static void ldmatrix(tlc_lower_ctx *lc, bool trans, int num, th_expr *addr, th_var **outs) {
    th_expr *args[1] = {addr};
    tlc_emit_ptx(lc, tlc_ptx_ldmatrix(num, trans), args, 1, outs, num);
}

/* Element (row, col) of a 2-d shared operand as a b32 register: the
 * per-element read of a 32-bit operand stored MN-major, which ldmatrix
 * (.trans moves 16-bit elements) cannot transpose. */
static th_expr *shared_word(tlc_lower_ctx *lc, const tir_buffer *b, th_expr *row, th_expr *col) {
    th_expr *ix[2] = {row, col};
    return th_bitcast(lc->a, th_load(lc->a, tlc_shared_elem_ptr(lc, b, ix), th_scalar(TH_F32), 4), th_scalar(TH_I32));
}

/* b32 register `reg` of an operand in registers: e = 4 / element bytes
 * consecutive slots of its fragment from slot e reg (one tf32 element, two
 * 16-bit ones, four bytes; tlc_gemm_a_fragment, tlc_gemm_b_fragment), low
 * element first. */
static th_expr *reg_word(tlc_lower_ctx *lc, const tir_buffer *A, int64_t reg) {
    tlc_arena *a = lc->a;
    th_var *ar = lc->regs[A->id];
    th_type rt = tlc_reg_type(A->dtype);
    int e = 4 / tir_dtype_bytes(A->dtype);
    int64_t slot = e * reg;
    th_expr *x[4];
    for (int i = 0; i < e; i++) x[i] = tlc_coerce(lc, th_array_read(a, ar, tlc_i32(lc, slot + i)), rt);
    if (e == 1) return th_bitcast(a, x[0], th_scalar(TH_I32));
    if (e == 2)
        return th_bitcast(a, th_build(a, th_vec(A->dtype == TIR_BF16 ? TH_BF16 : TH_F16, 2), x, 2), th_scalar(TH_I32));
    th_expr *w = NULL; /* bytes: b0 | b1 << 8 | b2 << 16 | b3 << 24 */
    for (int i = 0; i < 4; i++) {
        th_expr *b = th_bin(a, THB_AND, th_convert(a, x[i], th_scalar(TH_I32)), tlc_i32(lc, 0xff));
        if (i) b = th_bin(a, THB_SHL, b, tlc_i32(lc, 8 * i));
        w = w ? th_bin(a, THB_OR, w, b) : b;
    }
    return w;
}

static void lower_mma_sync(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_gemm_plan *p) {
    tlc_arena *a = lc->a;
    const tir_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
    bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    bool bf = A->dtype == TIR_BF16, fp8 = tir_dtype_is_fp8(A->dtype), tf32 = A->dtype == TIR_F32, int8 = A->dtype == TIR_I8;
    int kst = p->k_step, mtiles = p->tile_m / 16, ntiles = p->tile_n / 8, ksteps = p->k / kst;
    th_expr *tid = th_read(a, lc->tid);
    th_expr *warp = th_bin(a, THB_UDIV, tid, tlc_i32(lc, 32));
    if (p->replicas > 1) warp = th_bin(a, THB_UREM, warp, tlc_i32(lc, p->units)); /* each warpgroup: the whole tile */
    warp = tlc_let(lc, "warp", warp);
    th_expr *lane = tlc_let(lc, "lane", th_bin(a, THB_UREM, tid, tlc_i32(lc, 32)));
    th_expr *row0 = tlc_let(lc, "wrow", th_bin(a, THB_MUL, th_bin(a, THB_UREM, warp, tlc_i32(lc, p->units_m)),
                                              tlc_i32(lc, p->tile_m)));
    th_expr *col0 = tlc_let(lc, "wcol", th_bin(a, THB_MUL, th_bin(a, THB_UDIV, warp, tlc_i32(lc, p->units_m)),
                                              tlc_i32(lc, p->tile_n)));
    /* lane -> (matrix j, row r) of an x4 ldmatrix */
    th_expr *lj = tlc_let(lc, "lj", th_bin(a, THB_UDIV, lane, tlc_i32(lc, 8)));
    th_expr *lr = tlc_let(lc, "lr", th_bin(a, THB_UREM, lane, tlc_i32(lc, 8)));
    /* (row, chunk) of the lane's ldmatrix row address, rows and 8-element chunks of the stored buffer */
    ldm_addr la, lb;
    th_expr *jl = th_bin(a, THB_UREM, lj, tlc_i32(lc, 2)), *jh = th_bin(a, THB_UDIV, lj, tlc_i32(lc, 2));
    th_expr *a_rows = run_time_rows(lc, &s->u.gemm.a), *b_rows = run_time_rows(lc, &s->u.gemm.b);
    /* tf32 operands stored MN-major: each register one element, read alone;
     * lane (g, t) = (lane / 4, lane % 4) holds A (m g [+8], k t [+4]) and
     * B (k t [+4], n g) (mma.sync m16n8k8's fragments) */
    bool b_regs = B->scope == TIR_SCOPE_FRAGMENT;
    bool a_words = tf32 && ta && A->scope == TIR_SCOPE_SHARED, b_words = tf32 && !tb && !b_regs;
    th_expr *lg = NULL, *lt = NULL;
    if (a_words || b_words) {
        lg = tlc_let(lc, "lg", th_bin(a, THB_UDIV, lane, tlc_i32(lc, 4)));
        lt = tlc_let(lc, "lt", th_bin(a, THB_UREM, lane, tlc_i32(lc, 4)));
    }
    if (A->scope == TIR_SCOPE_SHARED && !a_words) {
        if (!ta) /* A[m][k]: matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15) */
            ldm_init(lc, &la, A, th_bin(a, THB_ADD, row0, th_bin(a, THB_ADD, lr, th_bin(a, THB_MUL, jl, tlc_i32(lc, 8)))), jh,
                     a_rows);
        else /* A stored [k][m], .trans: the same matrices, transposed */
            ldm_init(lc, &la, A, th_bin(a, THB_ADD, lr, th_bin(a, THB_MUL, jh, tlc_i32(lc, 8))),
                     th_bin(a, THB_ADD, th_bin(a, THB_UDIV, row0, tlc_i32(lc, 8)), jl), a_rows);
    }
    if (b_words || b_regs) {
        /* element by element, or from B's fragment, below */
    } else if (!tb) /* B stored [k][n], .trans: matrices (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15) */
        ldm_init(lc, &lb, B, th_bin(a, THB_ADD, lr, th_bin(a, THB_MUL, jl, tlc_i32(lc, 8))),
                 th_bin(a, THB_ADD, th_bin(a, THB_UDIV, col0, tlc_i32(lc, 8)), jh), b_rows);
    else /* B stored [n][k]: matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) */
        ldm_init(lc, &lb, B, th_bin(a, THB_ADD, col0, th_bin(a, THB_ADD, lr, th_bin(a, THB_MUL, jh, tlc_i32(lc, 8)))), jl,
                 b_rows);
    int64_t as[2] = {0, 0}, bs[2] = {0, 0}; /* the operands' slices: where they start in their buffers */
    if (A->scope == TIR_SCOPE_SHARED) operand_start(&s->u.gemm.a, as, NULL);
    operand_start(&s->u.gemm.b, bs, NULL);
    th_var **af = TLC_NEW_ARRAY(a, th_var *, (size_t)mtiles * 4);
    th_var **bfr = TLC_NEW_ARRAY(a, th_var *, (size_t)(ntiles + 1) * 2);
    for (int i = 0; i < mtiles * 4; i++) af[i] = scalar_tmp(lc, "af", TH_I32);
    for (int i = 0; i < (ntiles + 1) * 2; i++) bfr[i] = scalar_tmp(lc, "bf", TH_I32);
    int per = acc_per_reg(C), nd = 4 / per; /* accumulator registers per m16n8 tile */
    th_var *d[4];
    for (int i = 0; i < nd; i++) d[i] = scalar_tmp(lc, "d", acc_reg_base(C));
    tlc_ptx mma = fp8    ? tlc_ptx_mma_m16n8k32_fp8(A->dtype == TIR_F8E5M2)
                  : int8 ? tlc_ptx_mma_m16n8k32_s8()
                  : tf32 ? tlc_ptx_mma_m16n8k8_tf32()
                         : tlc_ptx_mma_m16n8k16(bf, f16_acc(C));
    if (fp8) tlc_need_ptx_isa(lc, 84); /* mma's float8 form */
    for (int ks = 0; ks < ksteps; ks++) {
        /* A tiles */
        for (int mi = 0; mi < mtiles; mi++) {
            if (a_words) { /* A stored [k][m] */
                for (int q = 0; q < 4; q++) {
                    th_expr *k = th_bin(a, THB_ADD, lt, tlc_i32(lc, as[0] + ks * kst + (q / 2) * 4));
                    th_expr *m = th_bin(a, THB_ADD, th_bin(a, THB_ADD, row0, lg), tlc_i32(lc, as[1] + mi * 16 + (q % 2) * 8));
                    tlc_emit(lc, th_assign(a, af[mi * 4 + q], NULL, shared_word(lc, A, k, m)));
                }
            } else if (A->scope == TIR_SCOPE_SHARED) {
                th_expr *ad = !ta ? ldm_at(lc, &la, as[0] + mi * 16, as[1] + ks * kst)
                                  : ldm_at(lc, &la, as[0] + ks * kst, as[1] + mi * 16);
                ldmatrix(lc, ta, 4, ad, &af[mi * 4]);
            } else { /* registers: register 4 (ks + ksteps mi) + q of A's fragment */
                for (int q = 0; q < 4; q++)
                    tlc_emit(lc, th_assign(a, af[mi * 4 + q], NULL,
                                           reg_word(lc, A, 4 * ((int64_t)ks + (int64_t)ksteps * mi) + q)));
            }
        }
        /* B tiles, two n8 tiles per x4 */
        for (int ni = 0; b_words && ni < ntiles; ni++) /* B stored [k][n] */
            for (int q = 0; q < 2; q++) {
                th_expr *k = th_bin(a, THB_ADD, lt, tlc_i32(lc, bs[0] + ks * kst + q * 4));
                th_expr *n = th_bin(a, THB_ADD, th_bin(a, THB_ADD, col0, lg), tlc_i32(lc, bs[1] + ni * 8));
                tlc_emit(lc, th_assign(a, bfr[ni * 2 + q], NULL, shared_word(lc, B, k, n)));
            }
        for (int ni = 0; b_regs && ni < ntiles; ni++) /* registers 2 (ks + ksteps ni) + q of B's fragment */
            for (int q = 0; q < 2; q++)
                tlc_emit(lc, th_assign(a, bfr[ni * 2 + q], NULL,
                                       reg_word(lc, B, 2 * ((int64_t)ks + (int64_t)ksteps * ni) + q)));
        for (int ni = 0; !b_words && !b_regs && ni < ntiles; ni += 2) {
            int num = ni + 1 < ntiles ? 4 : 2;
            th_expr *ad = !tb ? ldm_at(lc, &lb, bs[0] + ks * kst, bs[1] + ni * 8)
                              : ldm_at(lc, &lb, bs[0] + ni * 8, bs[1] + ks * kst);
            ldmatrix(lc, !tb, num, ad, &bfr[ni * 2]);
        }
        for (int mi = 0; mi < mtiles; mi++)
            for (int ni = 0; ni < ntiles; ni++) {
                int64_t base = tlc_gemm_acc_slot(p, mi, ni, 0);
                th_expr *args[14];
                for (int q = 0; q < 4; q++) args[q] = th_read(a, af[mi * 4 + q]);
                args[4] = th_read(a, bfr[ni * 2]);
                args[5] = th_read(a, bfr[ni * 2 + 1]);
                for (int q = 0; q < nd; q++) args[6 + q] = acc_pair_read(lc, C, base + q * per);
                tlc_emit_ptx(lc, mma, args, 6 + nd, d, nd);
                for (int q = 0; q < nd; q++) acc_pair_write(lc, C, base + q * per, th_read(a, d[q]));
            }
    }
}

/* ---------------- sm_90a: wgmma ---------------- */
static int swizzle_code(tlc_swizzle s) {
    switch (s) {
    case TLC_SWIZZLE_128B: return 1;
    case TLC_SWIZZLE_64B: return 2;
    case TLC_SWIZZLE_32B: return 3;
    default: return 0;
    }
}

/* Descriptor bits other than the start address (PTX ISA "Matrix
 * Descriptor Format"): LBO bits 16-29, SBO bits 32-45, swizzle 62-63.
 * K-major swizzled: SBO = 8 rows of the swizzle width, LBO unused (1).
 * MN-major: LBO = from one swizzle atom column (panel) to the next along
 * MN, SBO = from 8 K rows to the next 8. */
static uint64_t desc_bits(const tlc_layout *l, bool k_major) {
    uint64_t sw = (uint64_t)l->swizzle;
    uint64_t sbo = 8 * sw, lbo = 16;
    if (!k_major) lbo = (uint64_t)(l->panel_elems > 0 ? layout_rows(l) * l->panel_elems * l->elem_bytes : 16);
    return ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | (uint64_t)swizzle_code(l->swizzle) << 62;
}

/* The descriptor's start-address field (bits 0-13, 16-byte units), in 32
 * bits: offsets are added to it there and the 64-bit descriptor is only
 * assembled at each wgmma (desc_at). */
static th_expr *desc_base(tlc_lower_ctx *lc, const tir_buffer *b) {
    th_expr *addr = shared_base32(lc, b);
    return tlc_let(lc, "desc", th_bin(lc->a, THB_AND, th_bin(lc->a, THB_LSHR, addr, tlc_i32(lc, 4)), tlc_i32(lc, 0x3FFF)));
}

/* A descriptor's start field moved to the slice's rows known only at run
 * time (a stage index), if any: rows are whole 16-byte units. */
static th_expr *stage_desc(tlc_lower_ctx *lc, th_expr *desc, const tir_region *r) {
    th_expr *rows = run_time_rows(lc, r);
    if (!rows) return desc;
    const tlc_layout *l = r->buf->layout;
    int64_t row_units = (l->panel_elems > 0 ? l->panel_elems : l->row_elems) * l->elem_bytes / 16;
    return tlc_let(lc, "desc", th_bin(lc->a, THB_ADD, desc, th_bin(lc->a, THB_MUL, rows, tlc_i32(lc, row_units))));
}

/* The descriptor of start field `start` plus `units`, built from its two
 * 32-bit halves (mov.b64 {lo, hi}). Built as a 64-bit add of the constant
 * bits instead, ptxas (CUDA 13.0, -O1 and up) dropped the constant's upper
 * half on some of a kernel's wgmmas: those read their operand with SBO 0
 * and no swizzle (docs/architecture.md, JIT). */
static th_expr *desc_at(tlc_lower_ctx *lc, th_expr *start, int64_t units, uint64_t bits) {
    th_expr *lo = th_bin(lc->a, THB_OR, th_bin(lc->a, THB_ADD, start, tlc_i32(lc, units)), tlc_i32(lc, (int32_t)bits));
    th_expr *halves[2] = {lo, tlc_i32(lc, (int32_t)(bits >> 32))};
    return th_bitcast(lc->a, th_build(lc->a, th_vec(TH_I32, 2), halves, 2), th_scalar(TH_I64));
}

/* An empty asm that takes and returns every accumulator register: LLVM
 * cannot move ordinary reads or writes of the accumulators across it, so
 * none lands between a wgmma and the wait_group that retires it (ptxas
 * would serialize every wgmma of the kernel, C7514). */
static void fence_acc(tlc_lower_ctx *lc, const tir_buffer *C) {
    th_var *regs = acc_regs(lc, C);
    int64_t n = C->fragment->slots / acc_per_reg(C);
    for (int64_t i = 0; i < n; i++) {
        th_var *d = scalar_tmp(lc, "fa", acc_reg_base(C));
        th_expr *args[1] = {th_array_read(lc->a, regs, tlc_i32(lc, i))};
        /* no PTX: pins the register in place */
        tlc_emit(lc, th_asm(lc->a, "", acc_reg_base(C) == TH_I32 ? "=r,0" : "=f,0", args, 1, &d, 1, true));
        tlc_emit(lc, th_assign(lc->a, regs, tlc_i32(lc, i), th_read(lc->a, d)));
    }
}

static void lower_wgmma(tlc_lower_ctx *lc, const tir_stmt *s, const tlc_gemm_plan *p) {
    tlc_arena *a = lc->a;
    const tir_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
    bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    bool a_kmajor = !ta, b_kmajor = tb;
    const char *ty = A->dtype == TIR_BF16 ? "bf16" : A->dtype == TIR_F8E4M3 ? "e4m3" : A->dtype == TIR_F8E5M2 ? "e5m2"
                   : A->dtype == TIR_F32 ? "tf32"
                   : A->dtype == TIR_I8 ? "s8" : "f16";
    /* The driver (transform/lower.c) has made the shared operands visible
     * to the async proxy: fence.proxy.async and a barrier after the
     * ordinary stores that wrote them. */
    const tlc_gemm_op_plan *chain = tlc_plan_gemm_op(lc->plan, s);
    th_expr *tid = th_read(a, lc->tid);
    th_expr *wg = tlc_let(lc, "wg", th_bin(a, THB_UDIV, tid, tlc_i32(lc, 128)));
    th_expr *um = th_bin(a, THB_UREM, wg, tlc_i32(lc, p->units_m)), *un = th_bin(a, THB_UDIV, wg, tlc_i32(lc, p->units_m));
    bool a_regs = A->scope == TIR_SCOPE_FRAGMENT;
    th_expr *da = a_regs ? NULL : desc_base(lc, A), *db = desc_base(lc, B);
    uint64_t a_bits = a_regs ? 0 : desc_bits(A->layout, a_kmajor), b_bits = desc_bits(B->layout, b_kmajor);
    /* the warpgroup's tile offset, in descriptor units (16 bytes); the
     * layouts make it linear in the unit index (panels are whole atoms) */
    const tlc_layout *la = A->layout, *lb = B->layout;
    /* the operands' slices: where they start in their buffers (a stage
     * chosen at run time moves the descriptor's start) */
    int64_t as[2] = {0, 0}, bs[2] = {0, 0};
    if (!a_regs) {
        operand_start(&s->u.gemm.a, as, NULL);
        da = stage_desc(lc, da, &s->u.gemm.a);
    }
    operand_start(&s->u.gemm.b, bs, NULL);
    db = stage_desc(lc, db, &s->u.gemm.b);
    int64_t b_unit = tb ? linear_byte(lb, p->tile_n, 0) : linear_byte(lb, 0, p->tile_n);
    if (!a_regs && p->units_m > 1) {
        int64_t a_unit = !ta ? linear_byte(la, p->tile_m, 0) : linear_byte(la, 0, p->tile_m);
        da = tlc_let(lc, "desca", th_bin(a, THB_ADD, da, th_bin(a, THB_MUL, um, tlc_i32(lc, a_unit >> 4))));
    }
    if (p->units_n > 1) db = tlc_let(lc, "descb", th_bin(a, THB_ADD, db, th_bin(a, THB_MUL, un, tlc_i32(lc, b_unit >> 4))));
    int per = acc_per_reg(C), nregs = p->inst_n / 2 / per, nin = a_regs ? 5 : 2; /* A's registers or descriptor, B's descriptor */

    /* a chained gemm's accumulators are still the previous gemm's wgmma
     * outputs in flight: nothing may touch them */
    int mreps = p->tile_m / 64, chunks = p->tile_n / p->inst_n, kst = p->k_step, ksteps = p->k / kst;
    int ngroups = mreps * chunks, ninst = ksteps * ngroups;
    /* A in registers: every k step's b32 registers packed before
     * wgmma.fence (a register defined after it and read by a wgmma makes
     * ptxas fence again, C7519); register 4 (ks + ksteps mi) + r of A's
     * fragment (a_reg_word) */
    th_var **apack = NULL;
    if (a_regs) {
        apack = TLC_NEW_ARRAY(a, th_var *, (size_t)(4 * ksteps * mreps));
        for (int i = 0; i < 4 * ksteps * mreps; i++) {
            apack[i] = scalar_tmp(lc, "ap", TH_I32);
            tlc_emit(lc, th_assign(a, apack[i], NULL, reg_word(lc, A, i)));
        }
    }
    if (!chain->chain_prev) {
        acc_pack(lc, C);
        fence_acc(lc, C);
    }
    /* Every k step of every accumulator group in one asm statement, in the
     * order the hardware runs them (k steps outermost); operands as
     * tlc_ptx_wgmma_chain lays them out. */
    int *group = TLC_NEW_ARRAY(a, int, (size_t)ninst);
    th_expr **args = TLC_NEW_ARRAY(a, th_expr *, (size_t)(ninst * nin + ngroups * nregs));
    th_var **d = TLC_NEW_ARRAY(a, th_var *, (size_t)(ngroups * nregs));
    th_var *regs = acc_regs(lc, C);
    int q = 0;
    for (int ks = 0; ks < ksteps; ks++)
        for (int mi = 0; mi < mreps; mi++)
            for (int c = 0; c < chunks; c++, q++) {
                th_expr **in = args + q * nin;
                int64_t bo = b_kmajor ? linear_byte(lb, bs[0] + (int64_t)c * p->inst_n, bs[1] + (int64_t)ks * kst)
                                      : linear_byte(lb, bs[0] + (int64_t)ks * kst, bs[1] + (int64_t)c * p->inst_n);
                if (a_regs) {
                    for (int r = 0; r < 4; r++) in[r] = th_read(a, apack[4 * (ks + ksteps * mi) + r]);
                } else {
                    int64_t ao = a_kmajor ? linear_byte(la, as[0] + (int64_t)mi * 64, as[1] + (int64_t)ks * kst)
                                          : linear_byte(la, as[0] + (int64_t)ks * kst, as[1] + (int64_t)mi * 64);
                    in[0] = desc_at(lc, da, ao >> 4, a_bits);
                }
                in[nin - 1] = desc_at(lc, db, bo >> 4, b_bits);
                group[q] = mi * chunks + c;
            }
    /* group g = mi * chunks + c: its first accumulator register */
    int64_t *first_reg = TLC_NEW_ARRAY(a, int64_t, (size_t)ngroups);
    for (int mi = 0; mi < mreps; mi++)
        for (int c = 0; c < chunks; c++) first_reg[mi * chunks + c] = tlc_gemm_acc_slot(p, mi, c, 0) / per;
    for (int g = 0; g < ngroups; g++)
        for (int i = 0; i < nregs; i++) {
            d[g * nregs + i] = scalar_tmp(lc, "d", acc_reg_base(C));
            args[ninst * nin + g * nregs + i] = th_array_read(a, regs, tlc_i32(lc, first_reg[g] + i));
        }
    tlc_wgmma_shape shape = {p->inst_n, f16_acc(C) ? "f16" : int_acc(C) ? "s32" : "f32", ty, a_regs, a_regs ? false : ta,
                             !tb};
    tlc_emit_ptx(lc, tlc_ptx_wgmma_fence(), NULL, 0, NULL, 0);
    tlc_emit_ptx(lc, tlc_ptx_wgmma_chain(a, &shape, ninst, group), args, ninst * nin + ngroups * nregs, d,
                 ngroups * nregs);
    for (int g = 0; g < ngroups; g++)
        for (int i = 0; i < nregs; i++)
            tlc_emit(lc, th_assign(a, regs, tlc_i32(lc, first_reg[g] + i), th_read(a, d[g * nregs + i])));
    tlc_emit_ptx(lc, tlc_ptx_wgmma_commit(), NULL, 0, NULL, 0);
    if (s->u.gemm.async) { /* T.wgmma_gemm: the program's T.wait_wgmma retires it */
        bool known = false;
        for (int i = 0; i < lc->wgmma_in_flight.len; i++) known |= lc->wgmma_in_flight.items[i] == C;
        if (!known) tlc_ptrvec_push(&lc->wgmma_in_flight, (void *)C);
        return;
    }
    if (chain->chain_next || lc->wgmma_async) return; /* the next gemm, or the caller, waits */
    if (chain->deferred) { /* lower.c waits before its first use */
        tlc_ptrvec_push(&lc->wgmma_deferred, (void *)s);
        return;
    }
    /* a warp-specialized consumer keeps the last group in flight while it
     * waits for the next stage (warp_specialize.c drains it); a float16
     * accumulator waits for it here, so its slots can be unpacked */
    tlc_wgmma_wait(lc, C, f16_acc(C) ? 0 : lc->wgmma_inflight);
    acc_unpack(lc, C); /* only here: the slots may change after the gemm (a later drain must not undo that) */
}

void tlc_wgmma_retired(tlc_lower_ctx *lc, const tir_buffer *C, bool all) {
    fence_acc(lc, C);
    if (all) acc_unpack(lc, C);
}

void tlc_wgmma_wait(tlc_lower_ctx *lc, const tir_buffer *C, int pending) {
    tlc_emit_ptx(lc, tlc_ptx_wgmma_wait(lc->a, pending), NULL, 0, NULL, 0);
    fence_acc(lc, C);
    if (pending == 0) tlc_wgmma_retire_deferred(lc, lc->wgmma_deferred.len);
}

/* The oldest n gemms left in flight have retired (a wait_group was
 * emitted): their accumulators fenced, their reads handed back (lower.c). */
void tlc_wgmma_retire_deferred(tlc_lower_ctx *lc, int n) {
    if (n <= 0) return;
    for (int i = 0; i < n; i++) {
        const tir_stmt *g = lc->wgmma_deferred.items[i];
        fence_acc(lc, g->u.gemm.c.buf);
        tlc_ptrvec_push(&lc->wgmma_retired, (void *)g);
    }
    int left = lc->wgmma_deferred.len - n;
    memmove(lc->wgmma_deferred.items, lc->wgmma_deferred.items + n, sizeof(void *) * (size_t)left);
    lc->wgmma_deferred.len = left;
}

static void gemm_lower(tlc_lower_ctx *lc, const tir_stmt *s) {
    const tir_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
    const tlc_gemm_plan *planned = tlc_plan_gemm(lc->plan, s);
    if (!planned) {
        tlc_error(lc->diag, s->loc, "internal error: gemm has no plan");
        return;
    }
    tlc_gemm_plan p = *planned;
    tlc_fragment *want = tlc_gemm_acc_fragment(lc->a, &p);
    if (!C->fragment || !tlc_fragment_equal(C->fragment, want) || (A->scope == TIR_SCOPE_SHARED && !A->layout) ||
        (B->scope == TIR_SCOPE_SHARED && !B->layout)) {
        tlc_error(lc->diag, s->loc, "internal error: gemm operands do not have the layouts inference chose");
        return;
    }
    if (A->scope == TIR_SCOPE_FRAGMENT &&
        (!A->fragment || !tlc_fragment_equal(A->fragment, a_reg_fragment(lc->a, &p, s->u.gemm.trans_a)))) {
        tlc_error(lc->diag, s->loc, "internal error: gemm operand A in registers has the wrong layout");
        return;
    }
    if (B->scope == TIR_SCOPE_FRAGMENT &&
        (!B->fragment || !tlc_fragment_equal(B->fragment, b_reg_fragment(lc->a, &p, s->u.gemm.trans_b)))) {
        tlc_error(lc->diag, s->loc, "internal error: gemm operand B in registers has the wrong layout");
        return;
    }
    tlc_emit(lc, th_comment(lc->a, tlc_arena_printf(lc->a, "gemm %s x %s -> %s: %s", A->name, B->name, C->name,
                                                    plan_name(lc->a, &p))));
    if (s->u.gemm.clear_accum) clear_acc(lc, C);
    if (s->u.gemm.clear_if) clear_acc_if(lc, C, tlc_coerce(lc, tlc_lower_expr(lc, s->u.gemm.clear_if), th_scalar(TH_I1)));
    if (p.inst == TLC_INST_WGMMA) {
        lower_wgmma(lc, s, &p);
    } else {
        lower_mma_sync(lc, s, &p);
    }
}

/* ---------------- Tile IR, interpreter, table row ---------------- */
static void gemm_accesses(const tir_access_walk *w, const tir_stmt *s) {
    tir_access_region(w, &s->u.gemm.a, TIR_ACCESS_READ, s);
    tir_access_region(w, &s->u.gemm.b, TIR_ACCESS_READ, s);
    tir_access_region(w, &s->u.gemm.c, s->u.gemm.clear_accum ? TIR_ACCESS_WRITE : TIR_ACCESS_READ_WRITE, s);
    if (s->u.gemm.clear_if) tir_access_expr(w, s->u.gemm.clear_if, s);
}

static void gemm_print(tir_printer *p, const tir_stmt *s) {
    tir_printer_puts(p, s->u.gemm.async ? "wgmma_gemm(" : "gemm(");
    tir_printer_region(p, &s->u.gemm.a);
    tir_printer_puts(p, ", ");
    tir_printer_region(p, &s->u.gemm.b);
    tir_printer_puts(p, ", ");
    tir_printer_region(p, &s->u.gemm.c);
    tir_printer_printf(p, ", transpose_A=%s, transpose_B=%s, policy=%s, clear_accum=",
                       tir_bool_text(s->u.gemm.trans_a), tir_bool_text(s->u.gemm.trans_b),
                       tir_policy_name(s->u.gemm.policy));
    if (s->u.gemm.clear_if) tir_printer_expr(p, s->u.gemm.clear_if);
    else tir_printer_puts(p, tir_bool_text(s->u.gemm.clear_accum));
    tir_printer_printf(p, ")  # m=%d n=%d k=%d", s->u.gemm.m, s->u.gemm.n, s->u.gemm.k);
}

static const char *name_of(const tir_region *r) { return r->buf->name ? r->buf->name : "<anon>"; }

static bool scope_in(const tir_region *r, tir_scope a, tir_scope b) {
    return r->buf && (r->buf->scope == a || r->buf->scope == b);
}

static void gemm_verify(tir_verifier *v, const tir_stmt *s) {
    bool ga = tir_verifier_region(v, &s->u.gemm.a, s->loc, "gemm A");
    bool gb = tir_verifier_region(v, &s->u.gemm.b, s->loc, "gemm B");
    bool gc = tir_verifier_region(v, &s->u.gemm.c, s->loc, "gemm C");
    if (ga && !scope_in(&s->u.gemm.a, TIR_SCOPE_SHARED, TIR_SCOPE_FRAGMENT))
        tir_verifier_fail(v, s->loc, "gemm A operand '%s' is not in shared memory or a fragment", name_of(&s->u.gemm.a));
    if (gb && !scope_in(&s->u.gemm.b, TIR_SCOPE_SHARED, TIR_SCOPE_FRAGMENT))
        tir_verifier_fail(v, s->loc, "gemm B operand '%s' is not in shared memory or a fragment", name_of(&s->u.gemm.b));
    if (gc && !scope_in(&s->u.gemm.c, TIR_SCOPE_FRAGMENT, TIR_SCOPE_FRAGMENT))
        tir_verifier_fail(v, s->loc, "gemm accumulator '%s' is not a fragment", name_of(&s->u.gemm.c));
    int m = s->u.gemm.m, n = s->u.gemm.n, k = s->u.gemm.k;
    if (m <= 0 || n <= 0 || k <= 0) {
        tir_verifier_fail(v, s->loc, "gemm has shape m=%d n=%d k=%d", m, n, k);
        return;
    }
    if (!ga || !gb || !gc) return;
    int64_t sa[8], sb[8], sc[8];
    int na = tir_region_shape(&s->u.gemm.a, sa), nb = tir_region_shape(&s->u.gemm.b, sb),
        nc = tir_region_shape(&s->u.gemm.c, sc);
    int64_t wa[2] = {s->u.gemm.trans_a ? k : m, s->u.gemm.trans_a ? m : k};
    int64_t wb[2] = {s->u.gemm.trans_b ? n : k, s->u.gemm.trans_b ? k : n};
    int64_t wc[2] = {m, n};
    const struct { const char *name; const int64_t *got; int n; const int64_t *want; } ops[3] = {
        {"A", sa, na, wa}, {"B", sb, nb, wb}, {"C", sc, nc, wc}};
    for (int i = 0; i < 3; i++) {
        if (ops[i].n < 0) continue; /* symbolic */
        /* region shapes are squeezed: an operand of m = 1 is [k], not [1, k] */
        int64_t want[2];
        int nw = 0;
        for (int d = 0; d < 2; d++)
            if (ops[i].want[d] != 1) want[nw++] = ops[i].want[d];
        if (!tir_shapes_equal(ops[i].got, ops[i].n, want, nw)) {
            char got[128], exp[128];
            tir_shape_text(got, sizeof got, ops[i].got, ops[i].n);
            tir_shape_text(exp, sizeof exp, want, nw);
            tir_verifier_fail(v, s->loc, "gemm %s operand has shape %s, expected %s for m=%d n=%d k=%d", ops[i].name,
                              got, exp, m, n, k);
        }
    }
}

static void gemm_compute(tlc_interp *it, const tir_stmt *s) {
    rregion a, b, c;
    tlc_interp_region(it, &s->u.gemm.a, &a, s->loc);
    tlc_interp_region(it, &s->u.gemm.b, &b, s->loc);
    tlc_interp_region(it, &s->u.gemm.c, &c, s->loc);
    int64_t m = s->u.gemm.m, n = s->u.gemm.n, k = s->u.gemm.k;
    if (a.elems != m * k || b.elems != k * n || c.elems != m * n)
        tlc_interp_fail(it, s->loc, "gemm: operand sizes %lld, %lld, %lld do not fit M=%lld N=%lld K=%lld",
                        (long long)a.elems, (long long)b.elems, (long long)c.elems, (long long)m,
                        (long long)n, (long long)k);
    tir_dtype ct = c.ib->b->dtype;
    bool cf = tlc_interp_isf(ct);
    bool clear = s->u.gemm.clear_accum || (s->u.gemm.clear_if && tlc_interp_eval_i(it, s->u.gemm.clear_if));
    if (!cf && !tlc_interp_isf(a.ib->b->dtype) && !tlc_interp_isf(b.ib->b->dtype)) {
        /* int8 x int8 -> int32: exact sums (int64 here) */
        tlc_ival *cv = tlc_interp_scratch(it, 2, m * n);
        tlc_interp_gather(it, &c, cv, ct);
        tlc_ival *ia = tlc_interp_scratch(it, 0, m * k), *ib = tlc_interp_scratch(it, 1, n * k);
        tlc_interp_gather(it, &a, ia, a.ib->b->dtype);
        tlc_interp_gather(it, &b, ib, b.ib->b->dtype);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t acc = clear ? 0 : cv[i * n + j].i;
                for (int64_t kk = 0; kk < k; kk++) {
                    int64_t x = s->u.gemm.trans_a ? ia[kk * m + i].i : ia[i * k + kk].i;
                    int64_t y = s->u.gemm.trans_b ? ib[j * k + kk].i : ib[kk * n + j].i;
                    acc += x * y;
                }
                cv[i * n + j].i = acc;
            }
        it->stats.gemm_macs += m * n * k;
        tlc_interp_scatter(it, &c, cv, ct);
        return;
    }
    float *fa = tlc_interp_gather_f32(it, &a, 0);
    float *fb = tlc_interp_gather_f32(it, &b, 1);
    /* Normalise to A: m x k (row-major) and Bt: n x k so the dot product is contiguous. */
    tlc_ival *at = tlc_interp_scratch(it, 0, m * k), *bt = tlc_interp_scratch(it, 1, n * k);
    float *A = (float *)at, *Bt = (float *)bt; /* tlc_ival is at least as big as a float */
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++)
            A[i * k + kk] = s->u.gemm.trans_a ? fa[kk * m + i] : fa[i * k + kk];
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++)
            Bt[j * k + kk] = s->u.gemm.trans_b ? fb[j * k + kk] : fb[kk * n + j];
    tlc_ival *cv = tlc_interp_scratch(it, 2, m * n);
    tlc_interp_gather(it, &c, cv, ct);
    for (int64_t i = 0; i < m; i++) {
        const float *ar = A + i * k;
        for (int64_t j = 0; j < n; j++) {
            const float *br = Bt + j * k;
            float acc = clear ? 0.0f : (float)(cf ? cv[i * n + j].f : (double)cv[i * n + j].i);
            /* Four partial sums: f32 accumulation as on the tensor cores, whose
             * order of additions is not sequential either. */
            float p0 = 0, p1 = 0, p2 = 0, p3 = 0;
            int64_t kk = 0;
            for (; kk + 4 <= k; kk += 4) {
                p0 += ar[kk] * br[kk];
                p1 += ar[kk + 1] * br[kk + 1];
                p2 += ar[kk + 2] * br[kk + 2];
                p3 += ar[kk + 3] * br[kk + 3];
            }
            for (; kk < k; kk++) p0 += ar[kk] * br[kk];
            acc += (p0 + p1) + (p2 + p3);
            if (cf) cv[i * n + j].f = acc;
            else cv[i * n + j].i = (int64_t)acc;
        }
    }
    it->stats.gemm_macs += m * n * k;
    tlc_interp_scatter(it, &c, cv, cf ? TIR_F32 : ct);
}

/* T.wgmma_gemm (async) leaves its accumulator in flight until a
 * T.wait_wgmma (interp/interp_wgmma.c). */
static void gemm_interp(tlc_interp *it, const tir_stmt *s) {
    if (s->u.gemm.async) tlc_interp_wgmma_begin(it);
    gemm_compute(it, s);
    if (s->u.gemm.async) tlc_interp_wgmma_issued(it, s);
}

const tlc_op_desc tlc_op_gemm = {
    .kind = TS_GEMM, .name = "gemm",
    .accesses = gemm_accesses, .print = gemm_print, .verify = gemm_verify, .interp = gemm_interp,
    .infer = gemm_infer, .lower = gemm_lower,
};
