/* Thread IR -> PTX text without LLVM: tlc's own code generator
 * (tlc_codegen_options.backend = TLC_BACKEND_DIRECT; docs/architecture.md
 * section 9). This file has the module, kernels, variables and statements;
 * ptx_direct_expr.c the expressions, memory accesses and common
 * subexpressions.
 *
 * PTX registers are mutable and ptxas is an optimizing compiler (SSA,
 * copy propagation, common subexpressions, scheduling, allocation), so the
 * translation is direct: every Thread IR variable element is one PTX
 * register, control flow stays structured (branches around an if's paths,
 * a loop's test at its head), and each expression node becomes one or a
 * few instructions into fresh virtual registers. What LLVM's passes did
 * that ptxas does not is done here:
 * - loops marked `unroll` with constant bounds are unrolled while emitting,
 *   the loop variable a constant, so register arrays are indexed by
 *   constants; integer arithmetic on constants is folded, and an if whose
 *   condition folds emits only the path taken;
 * - a register array indexed at run time lives in local memory;
 * - loads through a read-only tensor parameter use ld.global.nc;
 * - an inline asm output tied to an input that the statements right after
 *   it assign back (`asm "=f,0" outs(d) ins(acc[i])` then `acc[i] = d`,
 *   d read nowhere else) is written in place: no copy touches a wgmma
 *   accumulator between the instruction and its wait, which ptxas would
 *   answer by serializing every wgmma.
 * Register classes follow LLVM's NVPTX output: .pred, .b16 (8- and 16-bit
 * values), .b32 (i32, f32, 32-bit shared pointers), .b64 (i64, f64,
 * global and generic pointers). */
#include "ptx_direct_internal.h"
#include "codegen_internal.h"
#include "../support/int_math.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pd_error(pd_ctx *c, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlc_error(c->diag, c->loc, "internal error: PTX generation of kernel '%s': %s",
              c->k && c->k->name ? c->k->name : "?", msg);
    c->failed = true;
}

static void *pd_xcalloc(size_t n) {
    void *p = calloc(n ? n : 1, 1);
    if (!p) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    return p;
}

void *pd_realloc(void *p, size_t bytes) {
    p = realloc(p, bytes);
    if (!p) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    return p;
}

void *pd_grow(void *p, int n, int *cap, size_t elem) {
    if (n < *cap) return p;
    *cap = *cap ? *cap * 2 : 64;
    return pd_realloc(p, elem * (size_t)*cap);
}

/* One instruction line, under `guard` when there is one. */
static void ins_line(pd_ctx *c, const char *guard, const char *fmt, va_list ap) {
    tlc_sb_putc(&c->body, '\t');
    if (guard) tlc_sb_printf(&c->body, "@%s ", guard);
    tlc_sb_vprintf(&c->body, fmt, ap);
    tlc_sb_puts(&c->body, ";\n");
}

void pd_ins(pd_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ins_line(c, NULL, fmt, ap);
    va_end(ap);
}

void pd_ins_access(pd_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ins_line(c, c->guard, fmt, ap);
    va_end(ap);
}

static void label(pd_ctx *c, int l) { tlc_sb_printf(&c->body, "$Ltlc%d:\n", l); }

/* ---------------- registers ---------------- */
const char *pd_newreg(pd_ctx *c, reg_class rc) {
    static const char *const prefix[] = {"%p", "%rs", "%r", "%rd"};
    return tlc_arena_printf(c->a, "%s%d", prefix[rc], ++c->nreg[rc]);
}

const char *pd_newreg_t(pd_ctx *c, th_type t) { return pd_newreg(c, class_of(t)); }

/* A variable's register: its own range (%vr, ...), so that a value held in
 * one is known to change when the variable is assigned. */
static const char *new_var_reg(pd_ctx *c, reg_class rc) {
    static const char *const prefix[] = {"%vp", "%vrs", "%vr", "%vrd"};
    return tlc_arena_printf(c->a, "%s%d", prefix[rc], ++c->nvreg[rc]);
}

pd_opnd pd_int_op(pd_ctx *c, int64_t v) { return (pd_opnd){tlc_arena_printf(c->a, "%" PRId64, v), true, v, NULL, TH_VOID, NULL, false, false, 0}; }

const char *pd_f32_imm(pd_ctx *c, double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return tlc_arena_printf(c->a, "0f%08X", u);
}

const char *pd_f64_imm(pd_ctx *c, double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    return tlc_arena_printf(c->a, "0d%016" PRIX64, u);
}

/* An operand as a register of class rc (immediates are moved into one). */
const char *pd_as_reg(pd_ctx *c, pd_opnd o, reg_class rc) {
    if (!o.is_int && o.s && o.s[0] == '%') return o.s;
    const char *r = pd_newreg(c, rc);
    if (rc == RC_P) {
        pd_ins(c, "setp.ne.u32 %s, %d, 0", r, o.is_int ? (o.iv & 1) != 0 : 1);
        return r;
    }
    pd_ins(c, "mov.%s %s, %s", bits_of(rc), r, o.s);
    return r;
}

static void mov_into(pd_ctx *c, const char *dst, pd_opnd src, reg_class rc) {
    if (!src.is_int && src.s && strcmp(src.s, dst) == 0) return;
    if (rc == RC_P) {
        if (src.is_int) pd_ins(c, "setp.ne.u32 %s, %d, 0", dst, (src.iv & 1) != 0);
        else pd_ins(c, "mov.pred %s, %s", dst, src.s);
        return;
    }
    pd_ins(c, "mov.%s %s, %s", bits_of(rc), dst, src.s);
}

/* ---------------- variables ---------------- */
static size_t var_hash(const th_var *v, int cap) {
    uintptr_t p = (uintptr_t)v;
    p ^= p >> 17;
    p *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(p >> 7) & (size_t)(cap - 1);
}

pd_var *pd_var_entry(pd_ctx *c, const th_var *v) {
    if ((c->nvars + 1) * 2 > c->cap) {
        int cap = c->cap ? c->cap * 2 : 256;
        pd_var *nv = pd_xcalloc(sizeof *nv * (size_t)cap);
        for (int i = 0; i < c->cap; i++) {
            if (!c->vars[i].var) continue;
            size_t h = var_hash(c->vars[i].var, cap);
            while (nv[h].var) h = (h + 1) & (size_t)(cap - 1);
            nv[h] = c->vars[i];
        }
        free(c->vars);
        c->vars = nv;
        c->cap = cap;
    }
    size_t h = var_hash(v, c->cap);
    while (c->vars[h].var && c->vars[h].var != v) h = (h + 1) & (size_t)(c->cap - 1);
    pd_var *e = &c->vars[h];
    if (!e->var) {
        e->var = v;
        e->ptr_param = -1;
        c->nvars++;
    }
    return e;
}

/* A vector of 16-bit lanes is kept as 32-bit words, two lanes each, as it
 * is loaded and stored: copying one moves words, not halves that ptxas
 * would pack again. */
static bool packed(const th_var *v) {
    return v->type.lanes >= 2 && v->type.lanes % 2 == 0 &&
           (v->type.base == TH_F16 || v->type.base == TH_BF16 || v->type.base == TH_I16);
}

/* Register `lane` of element `elem` (for a packed vector: word `lane`). */
static const char *var_reg(pd_ctx *c, pd_var *pv, int elem, int lane) {
    const th_var *v = pv->var;
    int lanes = packed(v) ? lanes_of(v->type) / 2 : lanes_of(v->type);
    int n = (v->array_len > 0 ? v->array_len : 1) * lanes;
    if (!pv->regs) {
        pv->regs = tlc_arena_calloc(c->a, (size_t)n, sizeof *pv->regs);
        pv->nregs = n;
    }
    int i = elem * lanes + lane;
    if (i < 0 || i >= pv->nregs) { pd_error(c, "element %d of '%s' out of range", elem, v->name); return "%r0"; }
    if (!pv->regs[i]) pv->regs[i] = new_var_reg(c, packed(v) ? RC_R : class_of(v->type));
    return pv->regs[i];
}

static void clear_half(pd_var *pv, int reg) {
    if (pv->half_word && reg >= 0 && reg < pv->nregs) pv->half_word[reg] = NULL;
}

static void clear_pairs(pd_var *pv) {
    if (pv->half_word) memset(pv->half_word, 0, sizeof *pv->half_word * (size_t)pv->nregs);
}

/* Register `reg` of pv now holds half `hi` of `word` (NULL: nothing known). */
static void set_half(pd_ctx *c, pd_var *pv, int reg, const char *word, bool hi) {
    if (!word || is_var_reg(word)) {
        clear_half(pv, reg);
        return;
    }
    if (!pv->half_word) {
        pv->half_word = tlc_arena_calloc(c->a, (size_t)(pv->nregs > 0 ? pv->nregs : 1), sizeof *pv->half_word);
        pv->half_hi = tlc_arena_calloc(c->a, (size_t)(pv->nregs > 0 ? pv->nregs : 1), sizeof *pv->half_hi);
    }
    if (reg < 0 || reg >= pv->nregs) return;
    pv->half_word[reg] = word;
    pv->half_hi[reg] = hi;
    c->pair_log = pd_grow(c->pair_log, c->npair_log, &c->cap_pair_log, sizeof *c->pair_log);
    c->pair_log[c->npair_log].v = pv;
    c->pair_log[c->npair_log].j = reg;
    c->npair_log++;
}

/* The operand of register `reg` of pv, with what is known of its half. */
static pd_opnd var_opnd(pd_var *pv, int reg, const char *r) {
    pd_opnd o = reg_op(r);
    if (pv->half_word && reg < pv->nregs && pv->half_word[reg]) {
        o.pair = pv->half_word[reg];
        o.pair_hi = pv->half_hi[reg];
    }
    return o;
}

/* Forgets the pair words recorded since `mark` (a path or body ended). */
static void forget_pairs(pd_ctx *c, int mark) {
    while (c->npair_log > mark) {
        c->npair_log--;
        clear_half(c->pair_log[c->npair_log].v, c->pair_log[c->npair_log].j);
    }
}

pd_opnd pd_read_lane(pd_ctx *c, pd_var *pv, int elem, int lane) {
    if (!packed(pv->var)) {
        pd_val v;
        pd_read_elem(c, pv, elem, &v);
        return v.l[lane];
    }
    const char *word = var_reg(c, pv, elem, lane / 2);
    const char *lo = pd_newreg(c, RC_H), *hi = pd_newreg(c, RC_H);
    pd_ins(c, "mov.b32 {%s, %s}, %s", lo, hi, word);
    pd_opnd o = reg_op(lane % 2 ? hi : lo);
    o.pair = word;
    o.pair_hi = lane % 2 != 0;
    return o;
}

/* The lanes of element `elem` of pv. */
void pd_read_elem(pd_ctx *c, pd_var *pv, int elem, pd_val *v) {
    const th_var *var = pv->var;
    v->n = lanes_of(var->type);
    if (!packed(var)) {
        for (int i = 0; i < v->n; i++) {
            const char *r = var_reg(c, pv, elem, i);
            v->l[i] = var_opnd(pv, elem * v->n + i, r);
        }
        return;
    }
    for (int w = 0; w < v->n / 2; w++) {
        const char *word = var_reg(c, pv, elem, w);
        const char *lo = pd_newreg(c, RC_H), *hi = pd_newreg(c, RC_H);
        pd_ins(c, "mov.b32 {%s, %s}, %s", lo, hi, word);
        v->l[2 * w] = reg_op(lo);
        v->l[2 * w + 1] = reg_op(hi);
        /* within this expression the halves are still the word's */
        v->l[2 * w].pair = v->l[2 * w + 1].pair = word;
        v->l[2 * w + 1].pair_hi = true;
    }
}

/* ---------------- the scan before a kernel: reads, assignments, run-time indices ---------------- */

static void scan_expr(pd_ctx *c, const th_expr *e) {
    if (!e) return;
    switch (e->kind) {
    case THE_VAR: case THE_ARRAY_READ:
        if (e->u.var.var) pd_var_entry(c, e->u.var.var)->reads++;
        break;
    case THE_PARAM:
        if (c->k && e->u.param >= 0 && e->u.param < c->k->nparams) c->param_used[e->u.param] = true;
        break;
    case THE_SPECIAL:
        if ((unsigned)e->u.special <= THS_WARPID) c->special_used[e->u.special] = true;
        break;
    case THE_SHARED_PTR: c->used_smem = true; break;
    default: break;
    }
    const th_expr *tmp[3];
    int n;
    const th_expr *const *kids = th_expr_children(e, &n, tmp);
    for (int i = 0; i < n; i++) scan_expr(c, kids[i]);
}

static void scan_stmt(pd_ctx *c, const th_stmt *s) {
    if (!s) return;
    if (s->kind == THS_FOR && s->u.for_.var) pd_var_entry(c, s->u.for_.var)->assigns += 2;
    if (s->kind == THS_ASSIGN && s->u.assign.var) {
        pd_var *pv = pd_var_entry(c, s->u.assign.var);
        pv->assigns++;
        if (!s->u.assign.index) pv->def = s->u.assign.value;
    }
    if (s->kind == THS_ASM)
        for (int i = 0; i < s->u.asm_.nouts; i++)
            if (s->u.asm_.outs && s->u.asm_.outs[i]) pd_var_entry(c, s->u.asm_.outs[i])->assigns++;
    const th_expr *etmp[3];
    int ne;
    const th_expr *const *es = th_stmt_exprs(s, &ne, etmp);
    for (int i = 0; i < ne; i++) scan_expr(c, es[i]);
    const th_stmt *tmp[2];
    int n;
    const th_stmt *const *kids = th_stmt_children(s, &n, tmp);
    for (int i = 0; i < n; i++) scan_stmt(c, kids[i]);
}

/* ---------------- statements ---------------- */
static void stmt(pd_ctx *c, const th_stmt *s);

static bool skipped(pd_ctx *c, const th_stmt *s) {
    for (int i = c->nskip - 1; i >= 0; i--)
        if (c->skip[i] == s) return true;
    return false;
}

static void add_skip(pd_ctx *c, const th_stmt *s) {
    c->skip = pd_grow(c->skip, c->nskip, &c->cap_skip, sizeof *c->skip);
    c->skip[c->nskip++] = s;
}

static void assign_value(pd_ctx *c, const th_var *v, int elem, const pd_val *x) {
    pd_var *pv = pd_var_entry(c, v);
    if (pv->bound) { pd_error(c, "assignment to the unrolled loop variable '%s'", v->name); return; }
    if (packed(v)) {
        const char *w[PD_MAX_LANES];
        int nw = pd_to_words(c, x, v->type, 4, w);
        for (int i = 0; i < nw; i++) mov_into(c, var_reg(c, pv, elem, i), reg_op(w[i]), RC_R);
        pd_touch(c, pv);
        return;
    }
    reg_class rc = class_of(th_scalar(v->type.base));
    if (v->type.base == TH_PTR) rc = class_of(v->type);
    for (int i = 0; i < x->n; i++) mov_into(c, var_reg(c, pv, elem, i), x->l[i], rc);
    pd_touch(c, pv);
    for (int i = 0; i < x->n; i++) set_half(c, pv, elem * x->n + i, x->l[i].pair, x->l[i].pair_hi);
}

static void assign_stmt(pd_ctx *c, const th_stmt *s) {
    const th_var *v = s->u.assign.var;
    const th_expr *val = s->u.assign.value;
    if (!v || !val) { pd_error(c, "assignment without a variable or value"); return; }
    if (!th_type_eq(v->type, val->type)) { pd_error(c, "assignment to '%s' of another type", v->name); return; }
    pd_val x = pd_expr(c, val);
    pd_var *pv = pd_var_entry(c, v);
    if (v->type.base == TH_PTR && !s->u.assign.index) pv->ptr_param = pd_ptr_param_of(c, val);
    if (!s->u.assign.index) {
        if (v->array_len > 0) { pd_error(c, "register array '%s' assigned without an index", v->name); return; }
        assign_value(c, v, 0, &x);
        return;
    }
    pd_opnd idx = pd_expr(c, s->u.assign.index).l[0];
    if (s->u.assign.index->type.base != TH_I32 && !idx.is_int)
        idx = pd_convert_lane(c, idx, s->u.assign.index->type, th_scalar(TH_I32));
    if (pv->runtime_index) {
        pd_touch(c, pv);
        pd_local_store(c, pv, idx, &x);
        return;
    }
    if (!idx.is_int || idx.iv < 0 || idx.iv >= v->array_len) {
        pd_error(c, "index of '%s' is not a constant in range", v->name);
        return;
    }
    assign_value(c, v, (int)idx.iv, &x);
}

/* An index is constant after unrolling when it reads only constants and
 * variables of enclosing unrolled loops with constant bounds. */
typedef struct { const th_var **vars; int n, cap; } pd_bound_set;

static bool reads_only_bound(const th_expr *e, const pd_bound_set *b) {
    if (!e) return true;
    switch (e->kind) {
    case THE_INT: case THE_FLOAT: return true;
    case THE_VAR:
        for (int i = 0; i < b->n; i++)
            if (b->vars[i] == e->u.var.var) return true;
        return false;
    case THE_BIN: case THE_CMP: return reads_only_bound(e->u.bin.a, b) && reads_only_bound(e->u.bin.b, b);
    case THE_UN: return reads_only_bound(e->u.un.a, b);
    case THE_CONVERT: return reads_only_bound(e->u.conv.a, b);
    case THE_SELECT:
        return reads_only_bound(e->u.sel.cond, b) && reads_only_bound(e->u.sel.a, b) && reads_only_bound(e->u.sel.b, b);
    default: return false;
    }
}

static bool const_bounds(const th_stmt *s, const pd_bound_set *b) {
    return reads_only_bound(s->u.for_.start, b) && reads_only_bound(s->u.for_.end, b);
}

static void scan_runtime_expr(pd_ctx *c, const th_expr *e, const pd_bound_set *b);

static void note_array(pd_ctx *c, const th_var *v, const th_expr *index, const pd_bound_set *b) {
    if (v && v->array_len > 0 && index && !reads_only_bound(index, b)) pd_var_entry(c, v)->runtime_index = true;
}

static void scan_runtime_expr(pd_ctx *c, const th_expr *e, const pd_bound_set *b) {
    if (!e) return;
    if (e->kind == THE_ARRAY_READ) note_array(c, e->u.var.var, e->u.var.index, b);
    const th_expr *tmp[3];
    int n;
    const th_expr *const *kids = th_expr_children(e, &n, tmp);
    for (int i = 0; i < n; i++) scan_runtime_expr(c, kids[i], b);
}

static void scan_runtime_stmt(pd_ctx *c, const th_stmt *s, pd_bound_set *b) {
    if (!s) return;
    if (s->kind == THS_ASSIGN) note_array(c, s->u.assign.var, s->u.assign.index, b);
    const th_expr *etmp[3];
    int ne;
    const th_expr *const *es = th_stmt_exprs(s, &ne, etmp);
    for (int i = 0; i < ne; i++) scan_runtime_expr(c, es[i], b);
    /* an unrolled loop's variable is a constant in its body */
    bool unrolled = s->kind == THS_FOR && s->u.for_.unroll && const_bounds(s, b);
    if (unrolled) {
        b->vars = pd_grow(b->vars, b->n, &b->cap, sizeof *b->vars);
        b->vars[b->n++] = s->u.for_.var;
    }
    const th_stmt *tmp[2];
    int n;
    const th_stmt *const *kids = th_stmt_children(s, &n, tmp);
    for (int i = 0; i < n; i++) scan_runtime_stmt(c, kids[i], b);
    if (unrolled) b->n--;
}

static bool is_hoisted(const pd_ctx *c, const th_stmt *s);

/* Calls fn(c, v, arg) for each variable s (and what it nests) assigns:
 * loop variables, assignments not hoisted out of their loop, asm outputs. */
static void each_assigned(pd_ctx *c, const th_stmt *s, void (*fn)(pd_ctx *, pd_var *, int), int arg) {
    if (!s) return;
    if (s->kind == THS_FOR && s->u.for_.var) fn(c, pd_var_entry(c, s->u.for_.var), arg);
    if (s->kind == THS_ASSIGN && s->u.assign.var && !is_hoisted(c, s)) fn(c, pd_var_entry(c, s->u.assign.var), arg);
    if (s->kind == THS_ASM)
        for (int i = 0; i < s->u.asm_.nouts; i++)
            if (s->u.asm_.outs && s->u.asm_.outs[i]) fn(c, pd_var_entry(c, s->u.asm_.outs[i]), arg);
    const th_stmt *tmp[2];
    int n;
    const th_stmt *const *kids = th_stmt_children(s, &n, tmp);
    for (int i = 0; i < n; i++) each_assigned(c, kids[i], fn, arg);
}

static void touch_and_forget(pd_ctx *c, pd_var *pv, int unused) {
    (void)unused;
    pd_touch(c, pv);
    clear_pairs(pv);
}

/* Marks every variable s assigns as assigned now. */
static void touch_assigned(pd_ctx *c, const th_stmt *s) { each_assigned(c, s, touch_and_forget, 0); }

/* ---- loop-invariant assignments ---- */
static bool is_hoisted(const pd_ctx *c, const th_stmt *s) {
    for (int i = 0; i < c->nhoisted; i++)
        if (c->hoisted[i] == s) return true;
    return false;
}

static void set_loop_mark(pd_ctx *c, pd_var *pv, int mark) {
    (void)c;
    pv->loop_mark = mark;
}

/* Marks the variables s assigns (not counting hoisted statements) with `mark`. */
void pd_mark_assigned(pd_ctx *c, const th_stmt *s, int mark) { each_assigned(c, s, set_loop_mark, mark); }

/* e is pure and reads nothing the loop (mark) assigns. */
bool pd_loop_invariant(pd_ctx *c, const th_expr *e, int mark) {
    if (!e) return false;
    switch (e->kind) {
    case THE_INT: case THE_FLOAT: case THE_PARAM: case THE_SPECIAL: return true;
    case THE_VAR: {
        pd_var *pv = pd_var_entry(c, e->u.var.var);
        return !pv->bound && pv->loop_mark != mark && e->u.var.var->array_len <= 0;
    }
    case THE_SHARED_PTR: return !e->u.offset || pd_loop_invariant(c, e->u.offset, mark);
    case THE_PTR_ADD: return pd_loop_invariant(c, e->u.ptr_add.ptr, mark) && pd_loop_invariant(c, e->u.ptr_add.index, mark);
    case THE_BIN: case THE_CMP: return pd_loop_invariant(c, e->u.bin.a, mark) && pd_loop_invariant(c, e->u.bin.b, mark);
    case THE_UN: return pd_loop_invariant(c, e->u.un.a, mark);
    case THE_SELECT:
        return pd_loop_invariant(c, e->u.sel.cond, mark) && pd_loop_invariant(c, e->u.sel.a, mark) &&
               pd_loop_invariant(c, e->u.sel.b, mark);
    case THE_CONVERT: case THE_BITCAST: return pd_loop_invariant(c, e->u.conv.a, mark);
    default: return false;
    }
}

const th_expr *pd_ptr_reassoc(pd_ctx *c, const th_expr *e, int mark) {
    if (mark <= 0 || !e || e->kind != THE_PTR_ADD || e->type.addrspace == TH_AS_SHARED) return e;
    const th_expr *ix = e->u.ptr_add.index;
    if (!ix || ix->kind != THE_BIN || ix->u.bin.op != THB_ADD || ix->type.base != TH_I64 || ix->type.lanes > 1 ||
        !pd_loop_invariant(c, e->u.ptr_add.ptr, mark))
        return e;
    bool inv_a = pd_loop_invariant(c, ix->u.bin.a, mark), inv_b = pd_loop_invariant(c, ix->u.bin.b, mark);
    if (inv_a == inv_b) return e;
    th_expr *inner = tlc_arena_alloc(c->a, sizeof *inner), *outer = tlc_arena_alloc(c->a, sizeof *outer);
    *inner = *e;
    inner->u.ptr_add.index = inv_a ? ix->u.bin.a : ix->u.bin.b;
    *outer = *e;
    outer->u.ptr_add.ptr = inner;
    outer->u.ptr_add.index = inv_a ? ix->u.bin.b : ix->u.bin.a;
    return outer;
}

/* Scalar variables assigned once in the whole kernel, in this loop, from a
 * loop-invariant expression (as lowering writes `wg = tid / 128` in every
 * iteration): such an assignment moves before the loop, so the variable and
 * what is computed from it are invariant too. Returns how many moved. */
static int find_hoistable(pd_ctx *c, const th_stmt *s, int mark) {
    if (!s) return 0;
    int n = 0;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) n += find_hoistable(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, mark);
        break;
    case THS_IF: n += find_hoistable(c, s->u.if_.then, mark) + find_hoistable(c, s->u.if_.els, mark); break;
    case THS_ASSIGN: {
        const th_var *v = s->u.assign.var;
        if (!v || s->u.assign.index || v->array_len > 0 || is_hoisted(c, s)) break;
        pd_var *pv = pd_var_entry(c, v);
        if (pv->assigns != 1 || pv->bound || !pd_loop_invariant(c, s->u.assign.value, mark)) break;
        c->hoisted = pd_grow(c->hoisted, c->nhoisted, &c->cap_hoisted, sizeof *c->hoisted);
        c->hoisted[c->nhoisted++] = s;
        pv->loop_mark = 0;
        n++;
        break;
    }
    default: break; /* nested loops keep theirs (they hoist them themselves) */
    }
    return n;
}

static void hoist_expr(pd_ctx *c, const th_expr *e, int mark);
static void hoist_address(pd_ctx *c, const th_expr *p, int mark);

/* Computations in the loop body worth a register (worth_hoisting) that
 * do not change from one iteration to the next, computed once before the
 * loop: the body's copies then reuse them (ptxas keeps them in the loop). */
static void hoist_stmt(pd_ctx *c, const th_stmt *s, int mark) {
    if (!s) return;
    const th_expr *etmp[3];
    int ne;
    const th_expr *const *es = th_stmt_exprs(s, &ne, etmp);
    bool address_first = s->kind == THS_STORE || s->kind == THS_ATOMIC_ADD;
    for (int i = 0; i < ne; i++) {
        if (i == 0 && address_first) hoist_address(c, es[0], mark);
        else hoist_expr(c, es[i], mark);
    }
    const th_stmt *tmp[2];
    int n;
    const th_stmt *const *kids = th_stmt_children(s, &n, tmp);
    for (int i = 0; i < n; i++) hoist_stmt(c, kids[i], mark);
}

/* An access's address as pd_address() will compute it: its base without the constant offset. */
static void hoist_address(pd_ctx *c, const th_expr *p, int mark) {
    int64_t off;
    const th_expr *base = pd_split_pointer(c, p, &off);
    hoist_expr(c, base, mark);
}

/* Operations in e (up to `limit`): what computing it in the loop costs. */
static int op_count(const th_expr *e, int limit) {
    if (!e || limit <= 0) return 0;
    int n = 0;
    switch (e->kind) {
    case THE_INT: case THE_FLOAT: case THE_VAR: case THE_PARAM: case THE_SPECIAL: return 0;
    case THE_SHARED_PTR: n = e->u.offset ? 1 : 0; break;
    default: n = 1; break;
    }
    const th_expr *tmp[3];
    int k;
    const th_expr *const *kids = th_expr_children(e, &k, tmp);
    for (int i = 0; i < k && n < limit; i++) n += op_count(kids[i], limit - n);
    return n;
}

/* Worth a register held through the loop when invariant: an integer
 * division (not by a power of two), or an integer or address computation
 * of three operations or more (a swizzled shared offset, a row's address).
 * Cheaper ones stay in the loop: hoisting every one costs registers that
 * the big loops, MLA's, spill. */
static bool worth_hoisting(const th_expr *e) {
    if (e->type.lanes > 1 || !(is_intb(e->type.base) || e->type.base == TH_PTR)) return false;
    if (e->kind == THE_BIN) {
        th_binop op = (th_binop)e->u.bin.op;
        const th_expr *d = e->u.bin.b;
        if ((op == THB_DIV || op == THB_REM || op == THB_UDIV || op == THB_UREM || op == THB_FLOORDIV ||
             op == THB_FLOORMOD) &&
            !(d && d->kind == THE_INT && tlc_is_pow2(d->u.ival)))
            return true;
    }
    return op_count(e, 3) >= 3;
}

static void hoist_expr(pd_ctx *c, const th_expr *e, int mark) {
    if (!e) return;
    if (e->kind == THE_LOAD) {
        hoist_address(c, e->u.load.ptr, mark);
        return;
    }
    if (worth_hoisting(e) && pd_loop_invariant(c, e, mark)) {
        (void)pd_expr(c, e);
        return;
    }
    const th_expr *r = pd_ptr_reassoc(c, e, mark);
    if (r != e) {
        hoist_expr(c, r, mark);
        return;
    }
    const th_expr *tmp[3];
    int n;
    const th_expr *const *kids = th_expr_children(e, &n, tmp);
    for (int i = 0; i < n; i++) hoist_expr(c, kids[i], mark);
}

static void for_stmt(pd_ctx *c, const th_stmt *s) {
    const th_var *v = s->u.for_.var;
    if (!v || v->array_len > 0 || !is_intb(v->type.base) || v->type.base == TH_I1 || v->type.lanes > 1) {
        pd_error(c, "loop variable must be a scalar integer slot");
        return;
    }
    int64_t step = s->u.for_.step;
    if (step == 0) { pd_error(c, "loop over '%s' with step 0", v->name); return; }
    pd_opnd start = pd_expr(c, s->u.for_.start).l[0];
    pd_opnd end = pd_expr(c, s->u.for_.end).l[0];
    pd_var *pv = pd_var_entry(c, v);
    if (s->u.for_.unroll && !s->u.for_.cond && start.is_int && end.is_int) {
        bool was_bound = pv->bound;
        int64_t was = pv->cval;
        int64_t i = start.iv;
        for (; step > 0 ? i < end.iv : i > end.iv; i += step) {
            pv->bound = true;
            pv->cval = i;
            pd_touch(c, pv);
            if (s->u.for_.body) stmt(c, s->u.for_.body);
            if (c->failed && tlc_diag_too_many(c->diag)) break;
        }
        pv->bound = was_bound;
        pv->cval = was;
        pd_touch(c, pv);
        if (!was_bound) mov_into(c, var_reg(c, pv, 0, 0), pd_int_op(c, i), class_of(v->type));
        return;
    }
    const char *iv = var_reg(c, pv, 0, 0);
    const char *endr = end.is_int ? end.s : NULL;
    if (!endr) { /* range() evaluates its bound once */
        endr = pd_newreg_t(c, v->type);
        mov_into(c, endr, end, class_of(v->type));
    }
    mov_into(c, iv, start, class_of(v->type));
    /* invariant assignments first, before the loop */
    int lmark = ++c->nloops, from = c->nhoisted;
    pv->loop_mark = lmark;
    pd_mark_assigned(c, s->u.for_.body, lmark);
    (void)find_hoistable(c, s->u.for_.body, lmark); /* one pass in program order: a use after its def */
    for (int i = from; i < c->nhoisted; i++) assign_stmt(c, c->hoisted[i]);
    /* what the loop assigns differs at its head from before it */
    pd_touch(c, pv);
    touch_assigned(c, s->u.for_.body);
    int outer_mark = c->loop_mark;
    c->loop_mark = lmark;
    hoist_stmt(c, s->u.for_.body, lmark);
    int mark = pd_cse_mark(c), pmark = c->npair_log;
    int head = ++c->nlabel, done = ++c->nlabel;
    const char *p = pd_newreg(c, RC_P);
    label(c, head);
    pd_ins(c, "setp.%s.%s %s, %s, %s", step > 0 ? "ge" : "le", stype(v->type.base), p, iv, endr);
    pd_ins(c, "@%s bra $Ltlc%d", p, done);
    if (s->u.for_.cond) {
        pd_opnd cv = pd_expr(c, s->u.for_.cond).l[0];
        if (s->u.for_.cond->type.base != TH_I1)
            cv = pd_convert_lane(c, cv, th_scalar(s->u.for_.cond->type.base), th_scalar(TH_I1));
        if (cv.is_int) {
            if (!cv.iv) pd_ins(c, "bra $Ltlc%d", done);
        } else {
            pd_ins(c, "@!%s bra $Ltlc%d", cv.s, done);
        }
    }
    if (s->u.for_.body) stmt(c, s->u.for_.body);
    pd_ins(c, "add.%s %s, %s, %" PRId64, stype(v->type.base), iv, iv, step);
    if (v->type.base == TH_I8) pd_ins(c, "cvt.s16.s8 %s, %s", iv, iv);
    pd_ins(c, "bra $Ltlc%d", head);
    label(c, done);
    pd_cse_truncate(c, mark);
    forget_pairs(c, pmark);
    c->loop_mark = outer_mark;
    c->nhoisted = from; /* an unrolled loop around this one emits it again */
}

/* The addresses the loads and stores of a path use, computed before its
 * branch when they read nothing the path assigns (LLVM's speculation of
 * cheap instructions on a divergent target does the same): the paths of
 * an unrolled copy, each behind its own bounds test, then share them. */
static void speculate_expr(pd_ctx *c, const th_expr *e, int mark);

static void speculate_address(pd_ctx *c, const th_expr *p, int mark) {
    int64_t off;
    const th_expr *base = pd_split_pointer(c, p, &off);
    if (base && base->kind != THE_PARAM && base->kind != THE_VAR && pd_loop_invariant(c, base, mark)) (void)pd_expr(c, base);
}

static void speculate_expr(pd_ctx *c, const th_expr *e, int mark) {
    if (!e) return;
    switch (e->kind) {
    case THE_LOAD: speculate_address(c, e->u.load.ptr, mark); break;
    case THE_BIN: case THE_CMP: speculate_expr(c, e->u.bin.a, mark); speculate_expr(c, e->u.bin.b, mark); break;
    case THE_UN: speculate_expr(c, e->u.un.a, mark); break;
    case THE_CONVERT: case THE_BITCAST: speculate_expr(c, e->u.conv.a, mark); break;
    case THE_BUILD:
        for (int i = 0; i < e->u.build.n; i++) speculate_expr(c, e->u.build.lanes ? e->u.build.lanes[i] : NULL, mark);
        break;
    default: break;
    }
}

static void speculate_stmt(pd_ctx *c, const th_stmt *s, int mark) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) speculate_stmt(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, mark);
        break;
    case THS_ASSIGN: speculate_expr(c, s->u.assign.value, mark); break;
    case THS_STORE: speculate_address(c, s->u.store.ptr, mark); speculate_expr(c, s->u.store.value, mark); break;
    default: break; /* not into nested branches or loops */
    }
}

/* ---- predicated paths ----
 * A path qualifies when it is straight-line work a predicate can guard (no
 * branch, loop, barrier, asm or warp shuffle, whose partners must all run
 * it; at most PD_PREDICATED_STMTS statements) and every variable it
 * assigns is its own: read and assigned nowhere else, each element
 * assigned there before it is read. Then only its memory accesses need the
 * guard; its variables' registers are dead outside it. The scan counts
 * each variable's reads and assignments in the path. */
static pd_var *path_entry(pd_ctx *c, const th_var *v) {
    pd_var *pv = pd_var_entry(c, v);
    if (pv->path_scan != c->path_scan) {
        pv->path_scan = c->path_scan;
        pv->path_reads = pv->path_assigns = 0;
        pv->path_live_in = false;
        pv->path_written = tlc_arena_calloc(c->a, (size_t)(v->array_len > 0 ? v->array_len : 1), sizeof(bool));
    }
    return pv;
}

static bool path_elem(const th_var *v, const th_expr *index, int64_t *i) {
    *i = 0;
    if (!index) return v->array_len <= 0;
    return th_expr_const_int(index, i) && *i >= 0 && *i < v->array_len;
}

static bool predicable_expr(pd_ctx *c, const th_expr *e) {
    if (!e) return true;
    if (e->kind == THE_INTRIN && e->u.intrin.id != THI_FMA) return false;
    if ((e->kind == THE_VAR || e->kind == THE_ARRAY_READ) && e->u.var.var) {
        pd_var *pv = path_entry(c, e->u.var.var);
        pv->path_reads++;
        int64_t i;
        if (!path_elem(e->u.var.var, e->kind == THE_ARRAY_READ ? e->u.var.index : NULL, &i) || !pv->path_written[i])
            pv->path_live_in = true;
    }
    const th_expr *tmp[3];
    int n;
    const th_expr *const *kids = th_expr_children(e, &n, tmp);
    for (int i = 0; i < n; i++)
        if (!predicable_expr(c, kids[i])) return false;
    return true;
}

static bool predicable(pd_ctx *c, const th_stmt *s, int *budget) {
    if (!s) return true;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!predicable(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, budget)) return false;
        return true;
    case THS_COMMENT: return true;
    case THS_ASSIGN: case THS_STORE: {
        if (--*budget < 0) return false;
        const th_expr *tmp[3];
        int n;
        const th_expr *const *es = th_stmt_exprs(s, &n, tmp);
        for (int i = 0; i < n; i++)
            if (!predicable_expr(c, es[i])) return false;
        const th_var *v = s->kind == THS_ASSIGN ? s->u.assign.var : NULL;
        if (v) {
            pd_var *pv = path_entry(c, v);
            pv->path_assigns++;
            int64_t i;
            if (path_elem(v, s->u.assign.index, &i)) pv->path_written[i] = true;
        }
        return true;
    }
    default: return false;
    }
}

/* pv appears only in the path just scanned, each element assigned there
 * before it is read. */
static bool scanned_local(const pd_ctx *c, const pd_var *pv) {
    return pv->path_scan == c->path_scan && !pv->path_live_in && pv->path_reads == pv->reads &&
           pv->path_assigns == pv->assigns;
}

/* Every variable s assigns is local to the path just scanned. */
static bool assigns_only_local(pd_ctx *c, const th_stmt *s) {
    if (!s) return true;
    if (s->kind == THS_ASSIGN && s->u.assign.var && !scanned_local(c, pd_var_entry(c, s->u.assign.var))) return false;
    const th_stmt *tmp[2];
    int n;
    const th_stmt *const *kids = th_stmt_children(s, &n, tmp);
    for (int i = 0; i < n; i++)
        if (!assigns_only_local(c, kids[i])) return false;
    return true;
}

/* e computes without touching memory or other lanes: safe to evaluate
 * where the program would not have. */
static bool harmless(const th_expr *e) {
    if (!e) return true;
    if (e->kind == THE_LOAD || (e->kind == THE_INTRIN && e->u.intrin.id != THI_FMA)) return false;
    /* a register array at a run-time index may live in local memory */
    if (e->kind == THE_ARRAY_READ && (!e->u.var.index || e->u.var.index->kind != THE_INT)) return false;
    const th_expr *tmp[3];
    int n;
    const th_expr *const *kids = th_expr_children(e, &n, tmp);
    for (int i = 0; i < n; i++)
        if (!harmless(kids[i])) return false;
    return true;
}

/* The one statement of s, looking through sequences of one. */
static const th_stmt *only_stmt(const th_stmt *s) {
    while (s && s->kind == THS_SEQ && s->u.seq.n == 1 && s->u.seq.stmts) s = s->u.seq.stmts[0];
    return s;
}

/* One path of an if: what it computes and learns of halves is forgotten
 * after it. */
static void if_path(pd_ctx *c, const th_stmt *s) {
    int mark = pd_cse_mark(c), pmark = c->npair_log;
    stmt(c, s);
    pd_cse_truncate(c, mark);
    forget_pairs(c, pmark);
}

static void if_stmt(pd_ctx *c, const th_stmt *s) {
    const th_expr *ce = s->u.if_.cond;
    if (!ce) { pd_error(c, "if without a condition"); return; }
    const th_stmt *inner = only_stmt(s->u.if_.then);
    if (!s->u.if_.els && inner && inner->kind == THS_IF && !inner->u.if_.els && inner->u.if_.cond &&
        ce->type.base == TH_I1 && inner->u.if_.cond->type.base == TH_I1 && ce->type.lanes <= 1 &&
        inner->u.if_.cond->type.lanes <= 1 && harmless(inner->u.if_.cond)) {
        /* if (a) { if (b) S } as if (a & b) S: one condition, and S's
         * path may then be predicated (an element's row test around its
         * bounds test, as masked stores are written) */
        th_stmt *merged = tlc_arena_alloc(c->a, sizeof *merged);
        *merged = *inner;
        merged->u.if_.cond = th_bin(c->a, THB_AND, (th_expr *)ce, inner->u.if_.cond);
        if (s->loc.line > 0 && merged->loc.line <= 0) merged->loc = s->loc;
        if_stmt(c, merged);
        return;
    }
    pd_opnd cv = pd_expr(c, ce).l[0];
    if (ce->type.base != TH_I1) {
        th_type st = th_scalar(ce->type.base);
        st.addrspace = ce->type.addrspace;
        cv = pd_convert_lane(c, cv, st, th_scalar(TH_I1));
    }
    if (cv.is_int) { /* a condition known here: the path taken alone */
        const th_stmt *taken = cv.iv ? s->u.if_.then : s->u.if_.els;
        if (taken) stmt(c, taken);
        return;
    }
    int els = ++c->nlabel, done = s->u.if_.els ? ++c->nlabel : els;
    if (s->u.if_.then && !s->u.if_.els) {
        int smark = ++c->nloops;
        pd_mark_assigned(c, s->u.if_.then, smark);
        speculate_stmt(c, s->u.if_.then, smark);
    }
    int budget = PD_PREDICATED_STMTS;
    ++c->path_scan;
    if (s->u.if_.then && !s->u.if_.els && !c->guard && predicable(c, s->u.if_.then, &budget) &&
        assigns_only_local(c, s->u.if_.then)) {
        /* a path that only stores: one basic block, so that ptxas may move
         * the stores up among the work before them (a branch would keep
         * them after it); its memory accesses run under the condition, the
         * rest unguarded. A path that assigns values used after it keeps
         * its branch, which saves the work where the condition fails. */
        c->guard = cv.s; /* the condition's variable, if any, is not the path's to assign */
        if_path(c, s->u.if_.then);
        c->guard = NULL;
        return;
    }
    pd_ins(c, "@!%s bra $Ltlc%d", cv.s, els);
    if_path(c, s->u.if_.then);
    if (s->u.if_.els) {
        pd_ins(c, "bra $Ltlc%d", done);
        label(c, els);
        if_path(c, s->u.if_.els);
    }
    label(c, done);
}

static void store_stmt(pd_ctx *c, const th_stmt *s) {
    const th_expr *p = s->u.store.ptr, *val = s->u.store.value;
    if (!p || !val || p->type.base != TH_PTR) { pd_error(c, "store needs a pointer and a value"); return; }
    pd_val x = pd_expr(c, val);
    pd_store(c, p, &x, val->type, s->u.store.align);
}

/* bfloat16 adds before sm_90 (no red.add.bf16): a compare-and-swap loop on
 * the 16 or 32 bits, each lane added in float32 and rounded back. */
static void bf16_add_by_cas(pd_ctx *c, const char *space, const char *base, int64_t boff, const pd_val *x, int lanes) {
    int bits = 16 * lanes;
    reg_class rc = lanes == 2 ? RC_R : RC_H;
    const char *old = pd_newreg(c, rc), *assumed = pd_newreg(c, rc), *sum = pd_newreg(c, rc), *p = pd_newreg(c, RC_P);
    pd_ins(c, "ld%s.b%d %s, [%s+%" PRId64 "]", space, bits, old, base, boff);
    int again = ++c->nlabel;
    label(c, again);
    pd_ins(c, "mov.b%d %s, %s", bits, assumed, old);
    const char *h[2] = {assumed, NULL}, *out[2];
    if (lanes == 2) {
        h[0] = pd_newreg(c, RC_H);
        h[1] = pd_newreg(c, RC_H);
        pd_ins(c, "mov.b32 {%s, %s}, %s", h[0], h[1], assumed);
    }
    for (int i = 0; i < lanes; i++) {
        pd_opnd cur = pd_convert_lane(c, reg_op(h[i]), th_scalar(TH_BF16), th_scalar(TH_F32));
        pd_opnd add = pd_convert_lane(c, x->l[i], th_scalar(TH_BF16), th_scalar(TH_F32));
        const char *f = pd_newreg(c, RC_R);
        pd_ins(c, "add.rn.f32 %s, %s, %s", f, pd_as_reg(c, cur, RC_R), add.s);
        out[i] = pd_newreg(c, RC_H);
        pd_ins(c, "cvt.rn.bf16.f32 %s, %s", out[i], f);
    }
    if (lanes == 2) pd_ins(c, "mov.b32 %s, {%s, %s}", sum, out[0], out[1]);
    else pd_ins(c, "mov.b16 %s, %s", sum, out[0]);
    pd_ins(c, "atom%s.cas.b%d %s, [%s+%" PRId64 "], %s, %s", space, bits, old, base, boff, assumed, sum);
    pd_ins(c, "setp.ne.b%d %s, %s, %s", bits, p, old, assumed);
    pd_ins(c, "@%s bra $Ltlc%d", p, again);
}

static void atomic_stmt(pd_ctx *c, const th_stmt *s) {
    const th_expr *p = s->u.atomic.ptr, *val = s->u.atomic.value;
    if (!p || !val || p->type.base != TH_PTR) { pd_error(c, "atomic add needs a pointer and a value"); return; }
    th_type t = val->type;
    pd_val x = pd_expr(c, val);
    int64_t boff;
    const char *base = pd_address(c, p, &boff);
    const char *space = pd_space_of(c, p, false);
    const char *ty, *operand;
    if (t.base == TH_BF16 && tlc_target_of(c->opt->arch)->sm < 90) {
        if (c->guard) { pd_error(c, "a bfloat16 atomic add under a predicate"); return; }
        bf16_add_by_cas(c, space, base, boff, &x, t.lanes == 2 ? 2 : 1);
        return;
    }
    if (t.lanes == 2 && (t.base == TH_F16 || t.base == TH_BF16)) {
        const char *w[2];
        pd_to_words(c, &x, t, 4, w);
        ty = t.base == TH_F16 ? "noftz.f16x2" : "noftz.bf16x2";
        operand = w[0];
    } else {
        switch (t.base) {
        case TH_I32: ty = "u32"; break;
        case TH_I64: ty = "u64"; break;
        case TH_F32: ty = "f32"; break;
        case TH_F64: ty = "f64"; break;
        case TH_F16: ty = "noftz.f16"; break;
        case TH_BF16: ty = "noftz.bf16"; break;
        default: pd_error(c, "atomic add on this type"); return;
        }
        operand = pd_as_reg(c, x.l[0], class_of(th_scalar(t.base)));
    }
    pd_ins_access(c, "red.relaxed.gpu%s.add.%s [%s+%" PRId64 "], %s", space, ty, base, boff, operand);
}

/* Inline asm: $N operands, ${:uid}, tied inputs ("0" .. ), clobbers. */
typedef struct {
    char kind; /* 'o' output, 'i' input, 't' tied input */
    char letter;
    int tie;
} pd_constraint;

static int parse_constraints(const char *cs, pd_constraint *out, int max) {
    int n = 0;
    const char *p = cs ? cs : "";
    while (*p) {
        const char *q = p;
        while (*q && *q != ',') q++;
        if (*p != '~') {
            if (n == max) return -1;
            pd_constraint k = {0};
            if (*p == '=') {
                k.kind = 'o';
                k.letter = p[1];
            } else if (*p >= '0' && *p <= '9') {
                k.kind = 't';
                k.tie = atoi(p);
            } else {
                k.kind = 'i';
                k.letter = *p;
            }
            out[n++] = k;
        }
        p = *q ? q + 1 : q;
    }
    return n;
}

static reg_class letter_class(char l) {
    switch (l) {
    case 'l': case 'd': return RC_D;
    case 'h': return RC_H;
    case 'b': return RC_P;
    default: return RC_R;
    }
}

/* A register array's index known now: a constant, or an unrolled loop's
 * variable (folded without emitting anything). */
static bool known_index(pd_ctx *c, const th_expr *ix, int64_t *out) {
    if (th_expr_const_int(ix, out)) return true;
    if (!ix || ix->kind != THE_VAR || !pd_var_entry(c, ix->u.var.var)->bound) return false;
    *out = pd_var_entry(c, ix->u.var.var)->cval;
    return true;
}

/* The var and element an expression reads, if it is a plain variable read. */
static bool plain_read(pd_ctx *c, const th_expr *e, const th_var **v, int *elem) {
    if (!e) return false;
    if (e->kind == THE_VAR && e->u.var.var && e->u.var.var->array_len <= 0 && e->u.var.var->type.lanes <= 1) {
        if (pd_var_entry(c, e->u.var.var)->bound) return false;
        *v = e->u.var.var;
        *elem = 0;
        return true;
    }
    if (e->kind == THE_ARRAY_READ && e->u.var.var && e->u.var.var->type.lanes <= 1) {
        pd_var *pv = pd_var_entry(c, e->u.var.var);
        if (pv->runtime_index) return false;
        int64_t ix;
        if (!known_index(c, e->u.var.index, &ix)) return false;
        if (ix < 0 || ix >= e->u.var.var->array_len) return false;
        *v = e->u.var.var;
        *elem = (int)ix;
        return true;
    }
    return false;
}

/* The statement assigning `v[elem] = out` among the assignments right
 * after the asm (seq[from..]), or NULL. */
static const th_stmt *assign_back(pd_ctx *c, th_stmt **seq, int n, int from, const th_var *v, int elem, const th_var *out) {
    for (int i = from; i < n; i++) {
        const th_stmt *s = seq[i];
        if (!s || s->kind != THS_ASSIGN) break;
        const th_expr *val = s->u.assign.value;
        if (!val || val->kind != THE_VAR || val->u.var.var != out) continue;
        if (s->u.assign.var != v) continue;
        int64_t ix = 0;
        if (s->u.assign.index && !known_index(c, s->u.assign.index, &ix)) continue;
        if (ix == elem) return s;
    }
    return NULL;
}

static void asm_stmt(pd_ctx *c, const th_stmt *s, th_stmt **seq, int nseq, int at) {
    int nargs = s->u.asm_.nargs, nouts = s->u.asm_.nouts;
    pd_constraint cons[2 * PD_MAX_ASM_OPERANDS];
    int nc = parse_constraints(s->u.asm_.constraints, cons, 2 * PD_MAX_ASM_OPERANDS);
    if (nc != nargs + nouts || nargs > PD_MAX_ASM_OPERANDS || nouts > PD_MAX_ASM_OPERANDS) {
        pd_error(c, "inline asm constraints \"%s\" do not match %d outputs and %d inputs",
                 s->u.asm_.constraints ? s->u.asm_.constraints : "", nouts, nargs);
        return;
    }
    const char *text = s->u.asm_.text ? s->u.asm_.text : "";
    const char *opnd[2 * PD_MAX_ASM_OPERANDS];
    const char *outreg[PD_MAX_ASM_OPERANDS];
    bool in_place[PD_MAX_ASM_OPERANDS] = {0};
    /* outputs tied to an input assigned back right after: written in place */
    for (int i = 0; i < nargs; i++) {
        pd_constraint k = cons[nouts + i];
        if (k.kind != 't' || k.tie < 0 || k.tie >= nouts || !seq) continue;
        const th_var *v, *out = s->u.asm_.outs[k.tie];
        int elem;
        if (!out || !plain_read(c, s->u.asm_.args[i], &v, &elem)) continue;
        if (pd_var_entry(c, out)->reads != 1 || th_type_bytes(v->type) != th_type_bytes(out->type)) continue;
        const th_stmt *back = assign_back(c, seq, nseq, at + 1, v, elem, out);
        if (!back) continue;
        in_place[k.tie] = true;
        outreg[k.tie] = var_reg(c, pd_var_entry(c, v), elem, 0);
        add_skip(c, back);
    }
    for (int i = 0; i < nouts; i++) {
        const th_var *v = s->u.asm_.outs[i];
        if (!v || v->array_len > 0) { pd_error(c, "inline asm output must be a scalar slot"); return; }
        if (!in_place[i]) outreg[i] = var_reg(c, pd_var_entry(c, v), 0, 0);
        opnd[i] = outreg[i];
    }
    for (int i = 0; i < nargs; i++) {
        pd_constraint k = cons[nouts + i];
        const th_expr *a = s->u.asm_.args[i];
        if (!a) { pd_error(c, "inline asm with a missing operand"); return; }
        if (k.kind == 't') {
            if (k.tie < 0 || k.tie >= nouts) { pd_error(c, "inline asm ties input %d to no output", i); return; }
            if (!in_place[k.tie]) {
                pd_opnd x = pd_expr(c, a).l[0];
                mov_into(c, outreg[k.tie], x, letter_class(cons[k.tie].letter));
            }
            opnd[nouts + i] = outreg[k.tie];
            continue;
        }
        pd_val x = pd_expr(c, a);
        if (x.n != 1) { pd_error(c, "inline asm operand %d is a vector", i); return; }
        opnd[nouts + i] = pd_as_reg(c, x.l[0], letter_class(k.letter));
    }
    /* the outputs change when the asm has run (after its inputs were read) */
    for (int i = 0; i < nouts; i++) pd_touch(c, pd_var_entry(c, s->u.asm_.outs[i]));
    for (int i = 0; i < nargs; i++) {
        const th_var *v;
        int elem;
        if (cons[nouts + i].kind == 't' && in_place[cons[nouts + i].tie] && plain_read(c, s->u.asm_.args[i], &v, &elem)) {
            pd_touch(c, pd_var_entry(c, v));
            clear_half(pd_var_entry(c, v), elem);
        }
    }
    if (!*text) return;
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    int uid = ++c->nuid;
    for (const char *p = text; *p; p++) {
        if (*p != '$') { tlc_sb_putc(&sb, *p); continue; }
        if (p[1] == '$') { tlc_sb_putc(&sb, '$'); p++; continue; }
        if (strncmp(p, "${:uid}", 7) == 0) { tlc_sb_printf(&sb, "%d", uid); p += 6; continue; }
        if (p[1] >= '0' && p[1] <= '9') {
            char *end;
            long n = strtol(p + 1, &end, 10);
            if (n < 0 || n >= nouts + nargs) { pd_error(c, "inline asm operand $%ld out of range", n); break; }
            tlc_sb_puts(&sb, opnd[n]);
            p = end - 1;
            continue;
        }
        tlc_sb_putc(&sb, '$');
    }
    tlc_sb_printf(&c->body, "\t// begin inline asm\n\t%s\n\t// end inline asm\n", tlc_sb_cstr(&sb));
    tlc_sb_free(&sb);
}


/* The f32 operand a 16-bit float conversion rounds, if e is one. */
static const th_expr *rounded_f32(const th_expr *e) {
    if (!e || e->kind != THE_CONVERT || e->type.lanes > 1 || (e->type.base != TH_F16 && e->type.base != TH_BF16))
        return NULL;
    const th_expr *x = e->u.conv.a;
    return x && x->type.base == TH_F32 && x->type.lanes <= 1 ? x : NULL;
}

/* `A[2j] = cvt(x)` followed by `A[2j + 1] = cvt(y)` (A a 16-bit float
 * register array): one packed conversion, its word recorded for the pair's
 * later reads. */
static bool assign_pair(pd_ctx *c, const th_stmt *a, const th_stmt *b) {
    if (!a || !b || a->kind != THS_ASSIGN || b->kind != THS_ASSIGN || a->u.assign.var != b->u.assign.var) return false;
    const th_var *v = a->u.assign.var;
    if (!v || v->array_len <= 0 || v->type.lanes > 1 || !a->u.assign.index || !b->u.assign.index) return false;
    const th_expr *xa = rounded_f32(a->u.assign.value), *xb = rounded_f32(b->u.assign.value);
    if (!xa || !xb || a->u.assign.value->type.base != b->u.assign.value->type.base ||
        a->u.assign.value->type.base != v->type.base)
        return false;
    pd_var *pv = pd_var_entry(c, v);
    if (pv->runtime_index || pv->bound) return false;
    pd_opnd ia = pd_expr(c, a->u.assign.index).l[0], ib = pd_expr(c, b->u.assign.index).l[0];
    if (!ia.is_int || !ib.is_int || ia.iv % 2 != 0 || ib.iv != ia.iv + 1 || ib.iv >= v->array_len) return false;
    tlc_loc saved = c->loc;
    if (a->loc.line > 0) c->loc = a->loc;
    const char *fa = pd_as_reg(c, pd_expr(c, xa).l[0], RC_R), *fb = pd_as_reg(c, pd_expr(c, xb).l[0], RC_R);
    const char *w = pd_newreg(c, RC_R);
    pd_ins(c, "cvt.rn.%s.f32 %s, %s, %s", v->type.base == TH_F16 ? "f16x2" : "bf16x2", w, fb, fa);
    /* the high half's register named first: the order the PTX has always
     * had, now fixed rather than left to the host compiler's choice of
     * argument order */
    const char *hi = var_reg(c, pv, (int)ib.iv, 0);
    const char *lo = var_reg(c, pv, (int)ia.iv, 0);
    pd_ins(c, "mov.b32 {%s, %s}, %s", lo, hi, w);
    pd_touch(c, pv);
    set_half(c, pv, (int)ia.iv, w, false);
    set_half(c, pv, (int)ib.iv, w, true);
    c->loc = saved;
    return true;
}

static void stmt(pd_ctx *c, const th_stmt *s) {
    if (!s || tlc_diag_too_many(c->diag)) return;
    tlc_loc saved = c->loc;
    if (s->loc.line > 0) c->loc = s->loc;
    switch (s->kind) {
    case THS_SEQ: {
        /* merged loads: a window of this sequence's statements, unless an
         * enclosing sequence's window holds this one */
        int mark = c->nskip, merged_end = 0;
        bool own = !c->merge_window;
        for (int i = 0; i < s->u.seq.n; i++) {
            const th_stmt *x = s->u.seq.stmts[i];
            if (!x) continue;
            if (own && i >= merged_end) {
                c->nmerged = 0;
                c->merge_window = false;
                int seen = pd_merge_loads(c, (const th_stmt *const *)s->u.seq.stmts + i, s->u.seq.n - i);
                merged_end = i + (seen > 0 ? seen : 1);
                c->merge_window = c->nmerged > 0;
            }
            if (c->nskip > mark && skipped(c, x)) continue;
            if (x->kind == THS_ASM) asm_stmt(c, x, s->u.seq.stmts, s->u.seq.n, i);
            else if (i + 1 < s->u.seq.n && assign_pair(c, x, s->u.seq.stmts[i + 1])) i++;
            else stmt(c, x);
        }
        c->nskip = mark;
        if (own) {
            c->nmerged = 0;
            c->merge_window = false;
        }
        break;
    }
    case THS_FOR: for_stmt(c, s); break;
    case THS_IF: if_stmt(c, s); break;
    case THS_ASSIGN:
        if (!is_hoisted(c, s)) assign_stmt(c, s);
        break;
    case THS_STORE: store_stmt(c, s); break;
    case THS_BARRIER: {
        int id = s->u.barrier.id, n = s->u.barrier.nthreads;
        if (id < 0 || id > 15 || n < 0 || n % 32 != 0 || n > 1024) { pd_error(c, "barrier %d, %d threads", id, n); break; }
        if (n == 0) pd_ins(c, "bar.sync %d", id);
        else pd_ins(c, "bar.sync %d, %d", id, n);
        break;
    }
    case THS_ATOMIC_ADD: atomic_stmt(c, s); break;
    case THS_ASM: asm_stmt(c, s, NULL, 0, 0); break;
    case THS_COMMENT: break;
    default: pd_error(c, "unknown statement kind %d", (int)s->kind); break;
    }
    c->loc = saved;
}

/* ---------------- kernels and the module ---------------- */
static const char *param_decl(pd_ctx *c, const th_kernel *k, int i) {
    const th_param *p = &k->params[i];
    const char *name = pd_param_name(c, i);
    if (p->byte_size_override > 0) return tlc_arena_printf(c->a, ".param .align 64 .b8 %s[%d]", name, p->byte_size_override);
    th_type t = p->type;
    if (t.base == TH_PTR) {
        th_param_attr pa = k->param_attrs ? k->param_attrs[i] : (th_param_attr){0};
        if (t.addrspace == TH_AS_GLOBAL)
            return tlc_arena_printf(c->a, ".param .u64 .ptr .global .align %d %s", pa.align > 0 ? pa.align : 1, name);
        return tlc_arena_printf(c->a, ".param .u64 %s", name);
    }
    const char *ty;
    switch (t.base) {
    case TH_I1: case TH_I8: ty = "u8"; break;
    case TH_I16: ty = "u16"; break;
    case TH_I32: ty = "u32"; break;
    case TH_I64: ty = "u64"; break;
    case TH_F16: case TH_BF16: ty = "b16"; break;
    case TH_F32: ty = "f32"; break;
    case TH_F64: ty = "f64"; break;
    default: pd_error(c, "parameter '%s' of type void", p->name); ty = "u32"; break;
    }
    return tlc_arena_printf(c->a, ".param .%s %s", ty, name);
}

static bool emit_kernel(pd_ctx *c, const th_kernel *k, tlc_strbuf *out) {
    c->k = k;
    c->loc = (tlc_loc){0, 0};
    memset(c->nreg, 0, sizeof c->nreg);
    memset(c->nvreg, 0, sizeof c->nvreg);
    c->nlabel = c->nuid = c->nlocal = 0;
    c->nvars = 0;
    if (c->cap) memset(c->vars, 0, sizeof *c->vars * (size_t)c->cap);
    c->nskip = 0;
    c->ncse = 0;
    c->stamp = 0;
    c->npair_log = 0;
    c->nhoisted = 0;
    c->nloops = 0;
    if (!c->cse_head) { /* an earlier kernel's buckets serve as they are */
        c->ncse_buckets = PD_CSE_BUCKETS;
        c->cse_head = pd_realloc(NULL, sizeof *c->cse_head * PD_CSE_BUCKETS);
    }
    for (int i = 0; i < c->ncse_buckets; i++) c->cse_head[i] = -1;
    if (!k->name || !*k->name) { pd_error(c, "kernel without a name"); return false; }
    if (k->threads < 0 || k->threads > 1024) { pd_error(c, "threads = %d is outside 1..1024", k->threads); return false; }
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].type.base == TH_PTR && k->param_attrs && k->param_attrs[i].align > 0 &&
            !tlc_is_pow2(k->param_attrs[i].align)) {
            pd_error(c, "parameter '%s': alignment %d is not a power of two", k->params[i].name, k->param_attrs[i].align);
            return false;
        }
    tlc_sb_init(&c->body);
    tlc_sb_init(&c->locals);
    c->param_used = tlc_arena_calloc(c->a, (size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *c->param_used);
    c->param_reg = NULL;
    memset(c->special_used, 0, sizeof c->special_used);
    memset(c->special_reg, 0, sizeof c->special_reg);
    c->smem_reg = NULL;
    c->used_smem = false;
    scan_stmt(c, k->body);
    /* the entry block: what every path may read, read once */
    const char **preg = tlc_arena_calloc(c->a, (size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *preg);
    for (int i = 0; i < k->nparams; i++)
        if (c->param_used[i]) preg[i] = pd_param_value(c, i, k->params[i].byte_size_override > 0 ? th_ptr(TH_AS_GENERIC)
                                                                                          : k->params[i].type).s;
    c->param_reg = preg;
    for (int s = 0; s <= THS_WARPID; s++)
        if (c->special_used[s]) c->special_reg[s] = pd_special(c, (th_special)s).s;
    if (c->used_smem) {
        c->smem_reg = pd_newreg(c, RC_R);
        pd_ins(c, "mov.u32 %s, __tlc_smem", c->smem_reg);
    }
    pd_bound_set bs = {0};
    scan_runtime_stmt(c, k->body, &bs);
    free(bs.vars);
    if (k->body) stmt(c, k->body);
    pd_ins(c, "ret");

    tlc_sb_printf(out, "\n\t// .globl\t%s\n.visible .entry %s(\n", k->name, k->name);
    for (int i = 0; i < k->nparams; i++) tlc_sb_printf(out, "\t%s%s\n", param_decl(c, k, i), i + 1 < k->nparams ? "," : "");
    tlc_sb_puts(out, ")\n");
    if (k->threads > 0) tlc_sb_printf(out, ".maxntid %d\n", k->threads);
    if (k->min_blocks_per_sm > 0) tlc_sb_printf(out, ".minnctapersm %d\n", k->min_blocks_per_sm);
    tlc_sb_puts(out, "{\n");
    tlc_sb_puts(out, tlc_sb_cstr(&c->locals));
    static const char *const decl[] = {".pred \t%p", ".b16 \t%rs", ".b32 \t%r", ".b64 \t%rd"};
    for (int rc = 0; rc < 4; rc++)
        if (c->nreg[rc]) tlc_sb_printf(out, "\t.reg %s<%d>;\n", decl[rc], c->nreg[rc] + 1);
    static const char *const vdecl[] = {".pred \t%vp", ".b16 \t%vrs", ".b32 \t%vr", ".b64 \t%vrd"};
    for (int rc = 0; rc < 4; rc++)
        if (c->nvreg[rc]) tlc_sb_printf(out, "\t.reg %s<%d>;\n", vdecl[rc], c->nvreg[rc] + 1);
    tlc_sb_puts(out, "\n");
    tlc_sb_puts(out, tlc_sb_cstr(&c->body));
    tlc_sb_puts(out, "}\n");
    tlc_sb_free(&c->body);
    tlc_sb_free(&c->locals);
    return !c->failed;
}

char *cg_direct_ptx(const th_module *m, const tlc_codegen_options *o, tlc_arena *a, tlc_diag *diag) {
    if (!m || (m->nkernels > 0 && !m->kernels)) {
        tlc_error(diag, (tlc_loc){0, 0}, "internal error: PTX generation: empty thread IR module");
        return NULL;
    }
    const tlc_target *tg = tlc_target_of(o->arch);
    if (!tg) {
        tlc_error(diag, (tlc_loc){0, 0}, "internal error: PTX generation: unknown target");
        return NULL;
    }
    pd_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.diag = diag;
    c.opt = o;
    tlc_strbuf kernels;
    tlc_sb_init(&kernels);
    bool ok = true, declare_smem = false;
    for (int i = 0; i < m->nkernels && !tlc_diag_too_many(diag); i++) {
        if (!m->kernels[i]) continue;
        for (int j = 0; j < i; j++)
            if (m->kernels[j] && m->kernels[j]->name && m->kernels[i]->name &&
                strcmp(m->kernels[j]->name, m->kernels[i]->name) == 0) {
                c.k = m->kernels[i];
                pd_error(&c, "two kernels named '%s'", m->kernels[i]->name);
            }
        if (!emit_kernel(&c, m->kernels[i], &kernels)) ok = false;
        declare_smem = declare_smem || c.used_smem || m->kernels[i]->dyn_shared_bytes > 0;
    }
    free(c.vars);
    free(c.skip);
    free(c.cse);
    free(c.cse_head);
    free(c.pair_log);
    free(c.hoisted);
    free(c.merged);
    char *r = NULL;
    if (ok && !c.failed) {
        tlc_strbuf out;
        tlc_sb_init(&out);
        int isa = th_module_ptx_isa(m, tg->ptx_isa);
        tlc_sb_printf(&out, "\n.version %d.%d\n.target %s\n.address_size 64\n\n", isa / 10, isa % 10, tg->name);
        if (declare_smem) tlc_sb_puts(&out, ".extern .shared .align 1024 .b8 __tlc_smem[];\n");
        for (int i = 0; i < m->nkernels; i++) /* sync_grid's counters (ops/sync_grid.c) */
            if (m->kernels[i] && m->kernels[i]->grid_sync_counter)
                tlc_sb_printf(&out, ".global .align 4 .u32 %s = 0;\n", m->kernels[i]->grid_sync_counter);
        tlc_sb_puts(&out, tlc_sb_cstr(&kernels));
        r = tlc_arena_strdup(a, tlc_sb_cstr(&out));
        tlc_sb_free(&out);
    }
    tlc_sb_free(&kernels);
    return r;
}
