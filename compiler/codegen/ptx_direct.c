/* Thread IR -> PTX text without LLVM: tlc's own code generator
 * (tlc_codegen_options.backend = TLC_BACKEND_DIRECT).
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
#include "codegen_internal.h"
#include "../support/int_math.h"
#include "tlc/runtime.h"
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lanes of a value (Thread IR's vectors are at most 16 bytes wide; 32
 * keeps room for 2-byte lanes of a 64-byte one) and operands of an asm. */
enum { PD_MAX_LANES = 32, PD_MAX_ASM_OPERANDS = 320 };

/* One lane of a value: a register name or an immediate. */
typedef struct pd_opnd {
    const char *s;
    bool is_int; /* integer immediate iv (s is its text) */
    int64_t iv;
    /* a 16-bit float rounded from this f32 register (by this expression):
     * two such lanes packed into a word are one cvt.rn.{bf16,f16}x2.f32 */
    const char *f32src;
    th_base half;
    /* a 16-bit value that is one half of a 32-bit word (unpacked from a
     * load, or converted as a pair): the word and which half; two halves of
     * one word packed again are that word */
    const char *pair;
    bool pair_hi;
    bool hconst; /* a 16-bit constant: its bits */
    uint16_t hbits;
} pd_opnd;

typedef struct pd_val {
    int n;
    pd_opnd l[PD_MAX_LANES];
} pd_val;

typedef struct pd_var {
    const th_var *var;
    const char **regs;  /* elements x lanes; NULL entries until first use */
    int nregs;
    bool runtime_index; /* a register array indexed at run time: local memory */
    const char *local_sym;
    bool bound;         /* an unrolled loop's variable: the constant cval */
    int64_t cval;
    int reads, assigns; /* static counts over the kernel */
    int assigned_at;    /* the assignment stamp of its last assignment (CSE validity) */
    const char **half_word; /* per register: the word its 16-bit value is half of (see pd_opnd.pair) */
    bool *half_hi;
    int loop_mark;      /* the loop being entered assigns it (loop hoisting) */
    int ptr_param;      /* a pointer assigned once from parameter ptr_param (+ offsets); -1 */
} pd_var;

/* A value computed earlier: the same expression (structurally, reading
 * variables not assigned since) reuses it. Entries form a stack so that
 * those made inside an if's path or a loop body go when it ends. */
typedef struct pd_cse {
    const th_expr *e;
    uint64_t hash;
    int stamp;
    int prev; /* the bucket's previous entry */
    int n;
    pd_opnd *lanes;
} pd_cse;

enum { PD_CSE_BUCKETS = 4096 };

typedef struct pd_ctx {
    tlc_arena *a;
    tlc_diag *diag;
    const tlc_codegen_options *opt;
    const th_kernel *k;
    tlc_strbuf body;
    tlc_strbuf locals;
    int nreg[4]; /* p, rs, r, rd */
    int nvreg[4]; /* the same for variables' registers */
    int nlabel, nuid, nlocal;
    pd_var *vars;
    int cap, nvars;
    const th_stmt **skip; /* assignments folded into an asm's tied outputs */
    int nskip, cap_skip;
    /* read once at the kernel's entry: parameters, special registers and
     * the shared window's base, as the scan found them used */
    bool *param_used;
    const char **param_reg;
    bool special_used[THS_WARPID + 1];
    const char *special_reg[THS_WARPID + 1];
    const char *smem_reg;
    pd_cse *cse;
    int ncse, cap_cse, stamp;
    /* halves recorded (var, register index), so that those recorded inside
     * an if's path or a loop body can be forgotten when it ends */
    struct { pd_var *v; int j; } *pair_log;
    const th_stmt **hoisted; /* assignments emitted before their loop instead of in it */
    int nhoisted, cap_hoisted, nloops;
    int npair_log, cap_pair_log;
    int cse_head[PD_CSE_BUCKETS];
    tlc_loc loc;
    bool used_smem;
    bool failed;
} pd_ctx;

static void pd_error(pd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pd_error(pd_ctx *c, const char *fmt, ...) {
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

static void ins(pd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ins(pd_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tlc_sb_putc(&c->body, '\t');
    tlc_sb_vprintf(&c->body, fmt, ap);
    tlc_sb_puts(&c->body, ";\n");
    va_end(ap);
}

static void label(pd_ctx *c, int l) { tlc_sb_printf(&c->body, "$Ltlc%d:\n", l); }

/* ---------------- types and registers ---------------- */
typedef enum { RC_P, RC_H, RC_R, RC_D } reg_class;

static int base_bytes(th_base b) { return th_type_bytes(th_scalar(b)); }
static bool is_intb(th_base b) { return b >= TH_I1 && b <= TH_I64; }
static bool is_floatb(th_base b) { return b >= TH_F16 && b <= TH_F64; }

static reg_class class_of(th_type t) {
    switch (t.base) {
    case TH_I1: return RC_P;
    case TH_I8: case TH_I16: case TH_F16: case TH_BF16: return RC_H;
    case TH_I32: case TH_F32: return RC_R;
    case TH_PTR: return t.addrspace == TH_AS_SHARED ? RC_R : RC_D;
    default: return RC_D;
    }
}

static const char *newreg(pd_ctx *c, reg_class rc) {
    static const char *const prefix[] = {"%p", "%rs", "%r", "%rd"};
    return tlc_arena_printf(c->a, "%s%d", prefix[rc], ++c->nreg[rc]);
}

static const char *newreg_t(pd_ctx *c, th_type t) { return newreg(c, class_of(t)); }

/* A variable's register: its own range (%vr, ...), so that a value held in
 * one is known to change when the variable is assigned. */
static const char *new_var_reg(pd_ctx *c, reg_class rc) {
    static const char *const prefix[] = {"%vp", "%vrs", "%vr", "%vrd"};
    return tlc_arena_printf(c->a, "%s%d", prefix[rc], ++c->nvreg[rc]);
}

static bool is_var_reg(const char *r) { return r && r[0] == '%' && r[1] == 'v'; }

static int lanes_of(th_type t) { return t.lanes > 1 ? t.lanes : 1; }

/* The bit type of a register class ("b32"). */
static const char *bits_of(reg_class rc) {
    static const char *const b[] = {"pred", "b16", "b32", "b64"};
    return b[rc];
}

/* Integer instruction types: signed, unsigned, bits. */
static const char *stype(th_base b) {
    switch (b) {
    case TH_I8: case TH_I16: return "s16";
    case TH_I32: return "s32";
    default: return "s64";
    }
}
static const char *utype(th_base b) {
    switch (b) {
    case TH_I8: case TH_I16: return "u16";
    case TH_I32: return "u32";
    default: return "u64";
    }
}
static const char *btype(th_base b) {
    switch (b) {
    case TH_I8: case TH_I16: case TH_F16: case TH_BF16: return "b16";
    case TH_I32: case TH_F32: return "b32";
    default: return "b64";
    }
}

/* Two's complement arithmetic on constants (hostile input may overflow). */
static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static pd_opnd reg_op(const char *r) { return (pd_opnd){r, false, 0, NULL, TH_VOID, NULL, false, false, 0}; }

static pd_opnd int_op(pd_ctx *c, int64_t v) { return (pd_opnd){tlc_arena_printf(c->a, "%" PRId64, v), true, v, NULL, TH_VOID, NULL, false, false, 0}; }

/* v wrapped to the width of integer base b (i8 / i16 sign-extended: the
 * value a b16 register of that type holds). */
static int64_t wrap_int(th_base b, int64_t v) {
    switch (b) {
    case TH_I1: return v & 1;
    case TH_I8: return (int8_t)(uint8_t)v;
    case TH_I16: return (int16_t)(uint16_t)v;
    case TH_I32: return (int32_t)(uint32_t)v;
    default: return v;
    }
}

static const char *f32_imm(pd_ctx *c, double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return tlc_arena_printf(c->a, "0f%08X", u);
}

static const char *f64_imm(pd_ctx *c, double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    return tlc_arena_printf(c->a, "0d%016" PRIX64, u);
}

/* An operand as a register of class rc (immediates are moved into one). */
static const char *as_reg(pd_ctx *c, pd_opnd o, reg_class rc) {
    if (!o.is_int && o.s && o.s[0] == '%') return o.s;
    const char *r = newreg(c, rc);
    if (rc == RC_P) {
        ins(c, "setp.ne.u32 %s, %d, 0", r, o.is_int ? (o.iv & 1) != 0 : 1);
        return r;
    }
    ins(c, "mov.%s %s, %s", bits_of(rc), r, o.s);
    return r;
}

static void mov_into(pd_ctx *c, const char *dst, pd_opnd src, reg_class rc) {
    if (!src.is_int && src.s == dst) return;
    if (!src.is_int && src.s && strcmp(src.s, dst) == 0) return;
    if (rc == RC_P) {
        if (src.is_int) ins(c, "setp.ne.u32 %s, %d, 0", dst, (src.iv & 1) != 0);
        else ins(c, "mov.pred %s, %s", dst, src.s);
        return;
    }
    ins(c, "mov.%s %s, %s", bits_of(rc), dst, src.s);
}

/* ---------------- variables ---------------- */
static size_t var_hash(const th_var *v, int cap) {
    uintptr_t p = (uintptr_t)v;
    p ^= p >> 17;
    p *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(p >> 7) & (size_t)(cap - 1);
}

static pd_var *var_entry(pd_ctx *c, const th_var *v) {
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

/* The register of element `elem`, lane `lane` of v. */
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
    if (c->npair_log == c->cap_pair_log) {
        c->cap_pair_log = c->cap_pair_log ? c->cap_pair_log * 2 : 256;
        c->pair_log = realloc(c->pair_log, sizeof *c->pair_log * (size_t)c->cap_pair_log);
        if (!c->pair_log) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    }
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

/* The lanes of element `elem` of pv. */
static void read_elem(pd_ctx *c, pd_var *pv, int elem, pd_val *v) {
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
        const char *lo = newreg(c, RC_H), *hi = newreg(c, RC_H);
        ins(c, "mov.b32 {%s, %s}, %s", lo, hi, word);
        v->l[2 * w] = reg_op(lo);
        v->l[2 * w + 1] = reg_op(hi);
        /* within this expression the halves are still the word's */
        v->l[2 * w].pair = v->l[2 * w + 1].pair = word;
        v->l[2 * w + 1].pair_hi = true;
    }
}

/* ---------------- the scan before a kernel: reads, assignments, run-time indices ---------------- */
static void scan_expr(pd_ctx *c, const th_expr *e);

static void scan_expr(pd_ctx *c, const th_expr *e) {
    if (!e) return;
    switch (e->kind) {
    case THE_VAR: if (e->u.var.var) var_entry(c, e->u.var.var)->reads++; break;
    case THE_PARAM:
        if (c->k && e->u.param >= 0 && e->u.param < c->k->nparams) c->param_used[e->u.param] = true;
        break;
    case THE_SPECIAL:
        if ((unsigned)e->u.special <= THS_WARPID) c->special_used[e->u.special] = true;
        break;
    case THE_ARRAY_READ:
        if (e->u.var.var) var_entry(c, e->u.var.var)->reads++;
        scan_expr(c, e->u.var.index);
        break;
    case THE_SHARED_PTR: c->used_smem = true; scan_expr(c, e->u.offset); break;
    case THE_PTR_ADD: scan_expr(c, e->u.ptr_add.ptr); scan_expr(c, e->u.ptr_add.index); break;
    case THE_LOAD: scan_expr(c, e->u.load.ptr); break;
    case THE_BIN: case THE_CMP: scan_expr(c, e->u.bin.a); scan_expr(c, e->u.bin.b); break;
    case THE_UN: scan_expr(c, e->u.un.a); break;
    case THE_SELECT: scan_expr(c, e->u.sel.cond); scan_expr(c, e->u.sel.a); scan_expr(c, e->u.sel.b); break;
    case THE_CONVERT: case THE_BITCAST: scan_expr(c, e->u.conv.a); break;
    case THE_EXTRACT: scan_expr(c, e->u.extract.vec); break;
    case THE_BUILD:
        for (int i = 0; i < e->u.build.n; i++) scan_expr(c, e->u.build.lanes ? e->u.build.lanes[i] : NULL);
        break;
    case THE_INTRIN:
        for (int i = 0; i < e->u.intrin.nargs; i++) scan_expr(c, e->u.intrin.args ? e->u.intrin.args[i] : NULL);
        break;
    default: break;
    }
}

static void scan_stmt(pd_ctx *c, const th_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) scan_stmt(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL);
        break;
    case THS_FOR:
        if (s->u.for_.var) var_entry(c, s->u.for_.var)->assigns += 2;
        scan_expr(c, s->u.for_.start);
        scan_expr(c, s->u.for_.end);
        scan_stmt(c, s->u.for_.body);
        break;
    case THS_IF: scan_expr(c, s->u.if_.cond); scan_stmt(c, s->u.if_.then); scan_stmt(c, s->u.if_.els); break;
    case THS_ASSIGN:
        if (s->u.assign.var) var_entry(c, s->u.assign.var)->assigns++;
        scan_expr(c, s->u.assign.index);
        scan_expr(c, s->u.assign.value);
        break;
    case THS_STORE: scan_expr(c, s->u.store.ptr); scan_expr(c, s->u.store.value); break;
    case THS_ATOMIC_ADD: scan_expr(c, s->u.atomic.ptr); scan_expr(c, s->u.atomic.value); break;
    case THS_ASM:
        for (int i = 0; i < s->u.asm_.nargs; i++) scan_expr(c, s->u.asm_.args ? s->u.asm_.args[i] : NULL);
        for (int i = 0; i < s->u.asm_.nouts; i++)
            if (s->u.asm_.outs && s->u.asm_.outs[i]) var_entry(c, s->u.asm_.outs[i])->assigns++;
        break;
    default: break;
    }
}

/* ---------------- expressions ---------------- */
static pd_val expr(pd_ctx *c, const th_expr *e);

static pd_val scalar(pd_opnd o) {
    pd_val v;
    v.n = 1;
    v.l[0] = o;
    return v;
}

static pd_val undef_val(pd_ctx *c, th_type t) {
    pd_val v;
    v.n = lanes_of(t) > PD_MAX_LANES ? PD_MAX_LANES : lanes_of(t);
    for (int i = 0; i < v.n; i++) v.l[i] = int_op(c, 0);
    return v;
}

/* The parameter a pointer expression is based on (through offsets), or -1. */
static int ptr_param_of(pd_ctx *c, const th_expr *e) {
    while (e && e->kind == THE_PTR_ADD) e = e->u.ptr_add.ptr;
    if (!e) return -1;
    if (e->kind == THE_PARAM) return e->u.param;
    if (e->kind == THE_VAR && e->u.var.var && e->u.var.var->array_len <= 0) {
        pd_var *pv = var_entry(c, e->u.var.var);
        return pv->assigns == 1 ? pv->ptr_param : -1;
    }
    return -1;
}

static const char *param_name(pd_ctx *c, int i) { return tlc_arena_printf(c->a, "%s_param_%d", c->k->name, i); }

static pd_opnd param_value(pd_ctx *c, int i, th_type want) {
    const th_param *p = &c->k->params[i];
    if (c->param_reg && c->param_reg[i]) return reg_op(c->param_reg[i]);
    if (p->byte_size_override > 0) { /* the .param block's generic address */
        const char *t = newreg(c, RC_D), *r = newreg(c, RC_D);
        ins(c, "mov.b64 %s, %s", t, param_name(c, i));
        ins(c, "cvta.param.u64 %s, %s", r, t);
        return reg_op(r);
    }
    th_type t = p->type;
    if (!th_type_eq(t, want)) pd_error(c, "parameter '%s' read with another type", p->name);
    if (t.base == TH_I1) {
        const char *h = newreg(c, RC_H), *r = newreg(c, RC_P);
        ins(c, "ld.param.u8 %s, [%s]", h, param_name(c, i));
        ins(c, "setp.ne.u16 %s, %s, 0", r, h);
        return reg_op(r);
    }
    const char *r = newreg_t(c, t);
    const char *ty = t.base == TH_I8 ? "s8" : t.base == TH_PTR ? "u64" : btype(t.base);
    ins(c, "ld.param.%s %s, [%s]", ty, r, param_name(c, i));
    return reg_op(r);
}

static pd_opnd special(pd_ctx *c, th_special s) {
    if ((unsigned)s <= THS_WARPID && c->special_reg[s]) return reg_op(c->special_reg[s]);
    static const char *const names[] = {"%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ctaid.x", "%ctaid.y", "%ctaid.z",
                                        "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid"};
    const char *r = newreg(c, RC_R);
    if (s == THS_WARPID) {
        const char *t = newreg(c, RC_R);
        ins(c, "mov.u32 %s, %%tid.x", t);
        ins(c, "shr.u32 %s, %s, 5", r, t);
        return reg_op(r);
    }
    if ((unsigned)s > THS_LANEID) { pd_error(c, "unknown special register %d", (int)s); return int_op(c, 0); }
    ins(c, "mov.u32 %s, %s", r, names[s]);
    return reg_op(r);
}

/* Sign-extends the low 8 bits of an i8 held in a b16 register. */
static pd_opnd norm_i8(pd_ctx *c, pd_opnd o) {
    if (o.is_int) return int_op(c, (int8_t)(uint8_t)o.iv);
    const char *r = newreg(c, RC_H);
    ins(c, "cvt.s16.s8 %s, %s", r, o.s);
    return reg_op(r);
}

/* f16 / bf16 lane -> f32 register, and back (round to nearest even). */
static const char *half_to_f32(pd_ctx *c, pd_opnd o, th_base b) {
    const char *h = as_reg(c, o, RC_H), *r = newreg(c, RC_R);
    if (b == TH_F16) ins(c, "cvt.f32.f16 %s, %s", r, h);
    else if (tlc_target_of(c->opt->arch)->sm >= 90) ins(c, "cvt.f32.bf16 %s, %s", r, h);
    else {
        const char *w = newreg(c, RC_R);
        ins(c, "cvt.u32.u16 %s, %s", w, h);
        ins(c, "shl.b32 %s, %s, 16", r, w);
    }
    return r;
}

static const char *f32_to_half(pd_ctx *c, const char *f, th_base b) {
    const char *h = newreg(c, RC_H);
    ins(c, "cvt.rn.%s.f32 %s, %s", b == TH_F16 ? "f16" : "bf16", h, f);
    return h;
}

static const char *f64_to_f32(pd_ctx *c, pd_opnd o) {
    const char *r = newreg(c, RC_R);
    ins(c, "cvt.rn.f32.f64 %s, %s", r, o.s);
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
        const char *r = newreg(c, RC_D);
        ins(c, "cvt.f64.f32 %s, %s", r, f.s);
        return reg_op(r);
    }
    const char *src = as_reg(c, f, RC_R);
    pd_opnd h = reg_op(f32_to_half(c, src, b));
    h.f32src = src;
    h.half = b;
    return h;
}

static pd_opnd float_const(pd_ctx *c, th_base b, double v) {
    if (b == TH_F32) return (pd_opnd){f32_imm(c, v), false, 0, NULL, TH_VOID, NULL, false, false, 0};
    if (b == TH_F64) return (pd_opnd){f64_imm(c, v), false, 0, NULL, TH_VOID, NULL, false, false, 0};
    uint16_t bits = b == TH_F16 ? tlrt_f32_to_f16((float)v) : tlrt_f32_to_bf16((float)v);
    const char *r = newreg(c, RC_H);
    ins(c, "mov.b16 %s, 0x%04X", r, bits);
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
static const char *udiv_const(pd_ctx *c, const char *x, uint32_t d) {
    /* l = ceil(log2 d); m = floor(2^32 (2^l - d) / d) + 1;
     * q = (t + ((x - t) >> 1)) >> (l - 1) with t = mulhi(x, m) */
    int l = 0;
    while (l < 32 && ((uint64_t)1 << l) < d) l++;
    unsigned __int128 num = ((unsigned __int128)1 << 32) * (((uint64_t)1 << l) - d);
    uint32_t m = (uint32_t)(num / d + 1);
    const char *t = newreg(c, RC_R), *u = newreg(c, RC_R), *w = newreg(c, RC_R), *y = newreg(c, RC_R), *q = newreg(c, RC_R);
    ins(c, "mul.hi.u32 %s, %s, %u", t, x, m);
    ins(c, "sub.s32 %s, %s, %s", u, x, t);
    ins(c, "shr.u32 %s, %s, 1", w, u);
    ins(c, "add.s32 %s, %s, %s", y, t, w);
    ins(c, "shr.u32 %s, %s, %d", q, y, l - 1);
    return q;
}

/* Signed: the multiplier and shift of Hacker's Delight's magic() for d >= 2. */
static void signed_magic(int32_t d, int32_t *mult, int *shift) {
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
        const char *sg = newreg(c, RC_R), *b = newreg(c, RC_R), *s = newreg(c, RC_R);
        q = newreg(c, RC_R);
        ins(c, "shr.s32 %s, %s, 31", sg, x);
        ins(c, "shr.u32 %s, %s, %d", b, sg, 32 - k);
        ins(c, "add.s32 %s, %s, %s", s, x, b);
        ins(c, "shr.s32 %s, %s, %d", q, s, k);
        return q;
    }
    int32_t m;
    int sh;
    signed_magic(d, &m, &sh);
    const char *t = newreg(c, RC_R), *sgn = newreg(c, RC_R);
    ins(c, "mul.hi.s32 %s, %s, %d", t, x, m);
    if (m < 0) {
        const char *t2 = newreg(c, RC_R);
        ins(c, "add.s32 %s, %s, %s", t2, t, x);
        t = t2;
    }
    if (sh > 0) {
        const char *t3 = newreg(c, RC_R);
        ins(c, "shr.s32 %s, %s, %d", t3, t, sh);
        t = t3;
    }
    q = newreg(c, RC_R);
    ins(c, "shr.u32 %s, %s, 31", sgn, x); /* + 1 for a negative x: toward zero */
    ins(c, "add.s32 %s, %s, %s", q, t, sgn);
    return q;
}

/* ---- integer arithmetic on one lane ---- */
/* Python's floor division and modulo (y != 0, not INT64_MIN / -1). */
static int64_t floor_div(int64_t x, int64_t y) {
    int64_t q = x / y;
    return (x % y != 0 && ((x % y) ^ y) < 0) ? q - 1 : q;
}
static int64_t floor_mod(int64_t x, int64_t y) {
    int64_t r = x % y;
    return (r != 0 && (r ^ y) < 0) ? r + y : r;
}

static bool fold_int_bin(th_binop op, th_base b, int64_t x, int64_t y, int64_t *out) {
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    int bits = b == TH_I1 ? 1 : base_bytes(b) * 8;
    uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    switch (op) {
    case THB_ADD: *out = (int64_t)(ux + uy); break;
    case THB_SUB: *out = (int64_t)(ux - uy); break;
    case THB_MUL: *out = (int64_t)(ux * uy); break;
    case THB_DIV: if (y == 0 || (x == INT64_MIN && y == -1)) return false; *out = x / y; break;
    case THB_REM: if (y == 0 || (x == INT64_MIN && y == -1)) return false; *out = x % y; break;
    case THB_UDIV: if ((uy & mask) == 0) return false; *out = (int64_t)((ux & mask) / (uy & mask)); break;
    case THB_UREM: if ((uy & mask) == 0) return false; *out = (int64_t)((ux & mask) % (uy & mask)); break;
    case THB_FLOORDIV: if (y == 0 || (x == INT64_MIN && y == -1)) return false; *out = floor_div(x, y); break;
    case THB_FLOORMOD: if (y == 0 || (x == INT64_MIN && y == -1)) return false; *out = floor_mod(x, y); break;
    case THB_MIN: *out = x < y ? x : y; break;
    case THB_MAX: *out = x > y ? x : y; break;
    case THB_AND: *out = x & y; break;
    case THB_OR: case THB_OR_DISJOINT: *out = x | y; break;
    case THB_XOR: *out = x ^ y; break;
    case THB_SHL: if (y < 0 || y >= bits) return false; *out = (int64_t)(ux << y); break;
    case THB_SHR: if (y < 0 || y >= bits) return false; *out = x >> y; break;
    case THB_LSHR: if (y < 0 || y >= bits) return false; *out = (int64_t)((ux & mask) >> y); break;
    default: return false;
    }
    *out = wrap_int(b, *out);
    return true;
}

static pd_opnd int_bin(pd_ctx *c, th_binop op, th_base b, pd_opnd x, pd_opnd y) {
    int64_t f;
    if (x.is_int && y.is_int && fold_int_bin(op, b, x.iv, y.iv, &f)) return int_op(c, f);
    if (b == TH_I1) {
        const char *r = newreg(c, RC_P);
        const char *px = as_reg(c, x, RC_P), *py = as_reg(c, y, RC_P);
        switch (op) {
        case THB_AND: case THB_MIN: case THB_MUL: ins(c, "and.pred %s, %s, %s", r, px, py); break;
        case THB_OR: case THB_OR_DISJOINT: case THB_MAX: ins(c, "or.pred %s, %s, %s", r, px, py); break;
        case THB_XOR: case THB_ADD: case THB_SUB: ins(c, "xor.pred %s, %s, %s", r, px, py); break;
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
        if (op == THB_UDIV) return int_bin(c, THB_LSHR, b, x, int_op(c, sh));
        if (op == THB_UREM) return int_bin(c, THB_AND, b, x, int_op(c, y.iv - 1));
        if (op == THB_MUL) return int_bin(c, THB_SHL, b, x, int_op(c, sh));
    }
    reg_class rc = class_of(th_scalar(b));
    const char *r = newreg(c, rc);
    bool commutes = op == THB_ADD || op == THB_MUL || op == THB_AND || op == THB_OR || op == THB_OR_DISJOINT ||
                    op == THB_XOR || op == THB_MIN || op == THB_MAX;
    if (x.is_int && !y.is_int && commutes) { /* PTX takes an immediate as the second operand */
        pd_opnd t = x;
        x = y;
        y = t;
    }
    const char *xs = as_reg(c, x, rc), *ys = y.s;
    const char *bt = btype(b), *st = stype(b), *ut = utype(b);
    switch (op) {
    case THB_ADD: ins(c, "add.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_SUB: ins(c, "sub.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_MUL: ins(c, "mul.lo.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_DIV: ins(c, "div.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_REM: ins(c, "rem.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_UDIV:
    case THB_UREM: {
        const char *ux = xs, *uy = ys;
        if (b == TH_I8) { /* the low 8 bits, zero-extended */
            const char *t1 = newreg(c, RC_H), *t2 = newreg(c, RC_H);
            ins(c, "and.b16 %s, %s, 255", t1, xs);
            ins(c, "and.b16 %s, %s, 255", t2, ys);
            ux = t1;
            uy = t2;
        }
        ins(c, "%s.%s %s, %s, %s", op == THB_UDIV ? "div" : "rem", ut, r, ux, uy);
        break;
    }
    case THB_FLOORDIV:
    case THB_FLOORMOD: {
        /* q = a / b toward -inf; r = a - q * b, the sign of b */
        const char *q = newreg(c, rc), *m = newreg(c, rc), *x2 = newreg(c, rc);
        const char *pnz = newreg(c, RC_P), *pneg = newreg(c, RC_P), *adj = newreg(c, RC_P);
        ins(c, "div.%s %s, %s, %s", st, q, xs, ys);
        ins(c, "rem.%s %s, %s, %s", st, m, xs, ys);
        ins(c, "setp.ne.%s %s, %s, 0", st, pnz, m);
        ins(c, "xor.%s %s, %s, %s", bt, x2, m, ys);
        ins(c, "setp.lt.%s %s, %s, 0", st, pneg, x2);
        ins(c, "and.pred %s, %s, %s", adj, pnz, pneg);
        if (op == THB_FLOORMOD) {
            const char *s2 = newreg(c, rc);
            ins(c, "add.%s %s, %s, %s", st, s2, m, ys);
            ins(c, "selp.%s %s, %s, %s, %s", bt, r, s2, m, adj);
        } else {
            const char *s2 = newreg(c, rc);
            ins(c, "sub.%s %s, %s, 1", st, s2, q);
            ins(c, "selp.%s %s, %s, %s, %s", bt, r, s2, q, adj);
        }
        break;
    }
    case THB_MIN: ins(c, "min.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_MAX: ins(c, "max.%s %s, %s, %s", st, r, xs, ys); break;
    case THB_AND: ins(c, "and.%s %s, %s, %s", bt, r, xs, ys); break;
    case THB_OR: case THB_OR_DISJOINT: ins(c, "or.%s %s, %s, %s", bt, r, xs, ys); break;
    case THB_XOR: ins(c, "xor.%s %s, %s, %s", bt, r, xs, ys); break;
    case THB_SHL: case THB_SHR: case THB_LSHR: {
        /* the shift amount is a u32 whatever the width */
        const char *amt = ys;
        if (!y.is_int && b != TH_I32) {
            const char *t = newreg(c, RC_R);
            ins(c, "cvt.u32.%s %s, %s", ut, t, ys);
            amt = t;
        }
        const char *sx = xs;
        if (op == THB_LSHR && b == TH_I8) {
            const char *t = newreg(c, RC_H);
            ins(c, "and.b16 %s, %s, 255", t, xs);
            sx = t;
        }
        if (op == THB_SHL) ins(c, "shl.%s %s, %s, %s", bt, r, sx, amt);
        else if (op == THB_SHR) ins(c, "shr.%s %s, %s, %s", st, r, sx, amt);
        else ins(c, "shr.%s %s, %s, %s", ut, r, sx, amt);
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
        const char *r = newreg(c, RC_D);
        ins(c, "div.rn.f64 %s, %s, %s", r, as_reg(c, x, RC_D), y.s);
        return reg_op(r);
    }
    pd_opnd fx = to_f32(c, x, b), fy = to_f32(c, y, b);
    const char *r = newreg(c, RC_R);
    if (b == TH_F32) ins(c, "div.%s.f32 %s, %s, %s", fast_math(c) ? "approx" : "full", r, as_reg(c, fx, RC_R), fy.s);
    else ins(c, "div.rn.f32 %s, %s, %s", r, as_reg(c, fx, RC_R), fy.s);
    return from_f32(c, reg_op(r), b);
}

static pd_opnd float_bin(pd_ctx *c, th_binop op, th_base b, pd_opnd x, pd_opnd y) {
    if (op == THB_DIV) return fdiv(c, x, y, b);
    bool d = b == TH_F64;
    reg_class rc = d ? RC_D : RC_R;
    const char *ft = d ? "f64" : "f32";
    pd_opnd fx = d ? x : to_f32(c, x, b), fy = d ? y : to_f32(c, y, b);
    const char *xs = as_reg(c, fx, rc), *ys = fy.s;
    const char *r = newreg(c, rc);
    switch (op) {
    case THB_ADD: ins(c, "add.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_SUB: ins(c, "sub.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_MUL: ins(c, "mul.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_MIN: ins(c, "min.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_MAX: ins(c, "max.%s %s, %s, %s", ft, r, xs, ys); break;
    case THB_REM:
    case THB_FLOORDIV:
    case THB_FLOORMOD: {
        /* q = x / y rounded (toward zero for REM, down otherwise); r = x - q * y */
        const char *q = newreg(c, rc), *qi = newreg(c, rc), *p = newreg(c, rc);
        ins(c, "div.rn.%s %s, %s, %s", ft, q, xs, ys);
        ins(c, "cvt.%s.%s.%s %s, %s", op == THB_REM ? "rzi" : "rmi", ft, ft, qi, q);
        if (op == THB_FLOORDIV) {
            r = qi;
            break;
        }
        ins(c, "mul.rn.%s %s, %s, %s", ft, p, qi, ys);
        ins(c, "sub.rn.%s %s, %s, %s", ft, r, xs, p);
        break;
    }
    default: pd_error(c, "binary operation %d is not defined on floats", (int)op); break;
    }
    return d ? reg_op(r) : from_f32(c, reg_op(r), b);
}

static pd_opnd math_f32(pd_ctx *c, th_unop op, const char *x) {
    const char *r = newreg(c, RC_R);
    switch (op) {
    case THU_SQRT: ins(c, "sqrt.rn.f32 %s, %s", r, x); break;
    case THU_EXP2: ins(c, "ex2.approx.f32 %s, %s", r, x); break;
    case THU_EXP2_APPROX: ins(c, "ex2.approx.ftz.f32 %s, %s", r, x); break;
    case THU_EXP: {
        const char *t = newreg(c, RC_R);
        ins(c, "mul.f32 %s, %s, 0f3FB8AA3B", t, x);
        ins(c, "ex2.approx.f32 %s, %s", r, t);
        break;
    }
    case THU_LOG2: ins(c, "lg2.approx.f32 %s, %s", r, x); break;
    case THU_LOG2_APPROX: ins(c, "lg2.approx.ftz.f32 %s, %s", r, x); break;
    case THU_LOG: {
        const char *t = newreg(c, RC_R);
        ins(c, "lg2.approx.f32 %s, %s", t, x);
        ins(c, "mul.f32 %s, %s, 0f3F317218", r, t);
        break;
    }
    case THU_RSQRT: {
        const char *t = newreg(c, RC_R);
        ins(c, "sqrt.rn.f32 %s, %s", t, x);
        ins(c, "div.rn.f32 %s, 0f3F800000, %s", r, t);
        break;
    }
    case THU_RSQRT_APPROX: ins(c, "rsqrt.approx.ftz.f32 %s, %s", r, x); break;
    case THU_RCP_APPROX: ins(c, "rcp.approx.ftz.f32 %s, %s", r, x); break;
    case THU_FLOOR: ins(c, "cvt.rmi.f32.f32 %s, %s", r, x); break;
    case THU_CEIL: ins(c, "cvt.rpi.f32.f32 %s, %s", r, x); break;
    case THU_SIN_APPROX: ins(c, "sin.approx.f32 %s, %s", r, x); break;
    case THU_COS_APPROX: ins(c, "cos.approx.f32 %s, %s", r, x); break;
    default: pd_error(c, "unary operation %d is not a math function", (int)op); break;
    }
    return reg_op(r);
}

static pd_opnd float_un(pd_ctx *c, th_unop op, th_base b, pd_opnd x) {
    if (b == TH_F64 && (op == THU_SQRT || op == THU_NEG || op == THU_ABS)) {
        const char *r = newreg(c, RC_D), *xs = as_reg(c, x, RC_D);
        ins(c, "%s.f64 %s, %s", op == THU_SQRT ? "sqrt.rn" : op == THU_NEG ? "neg" : "abs", r, xs);
        return reg_op(r);
    }
    if (op == THU_NEG || op == THU_ABS) {
        if (b == TH_F32) {
            const char *r = newreg(c, RC_R);
            ins(c, "%s.f32 %s, %s", op == THU_NEG ? "neg" : "abs", r, as_reg(c, x, RC_R));
            return reg_op(r);
        }
        /* f16 / bf16: the sign bit */
        const char *r = newreg(c, RC_H);
        ins(c, "%s.b16 %s, %s, %s", op == THU_NEG ? "xor" : "and", r, as_reg(c, x, RC_H),
            op == THU_NEG ? "0x8000" : "0x7FFF");
        return reg_op(r);
    }
    pd_opnd f = to_f32(c, x, b);
    return from_f32(c, math_f32(c, op, as_reg(c, f, RC_R)), b);
}

static pd_opnd pow_lane(pd_ctx *c, th_base b, pd_opnd x, const th_expr *exponent, pd_opnd ey);

/* ---- comparisons ---- */
static pd_opnd cmp_lane(pd_ctx *c, th_cmpop op, th_type t, pd_opnd x, pd_opnd y) {
    static const char *const fop[] = {"eq", "neu", "lt", "le", "gt", "ge"};
    static const char *const iop[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    if ((unsigned)op > THC_GE) { pd_error(c, "unknown comparison %d", (int)op); return int_op(c, 0); }
    const char *r = newreg(c, RC_P);
    if (is_floatb(t.base)) {
        bool d = t.base == TH_F64;
        pd_opnd fx = d ? x : to_f32(c, x, t.base), fy = d ? y : to_f32(c, y, t.base);
        ins(c, "setp.%s.%s %s, %s, %s", fop[op], d ? "f64" : "f32", r, as_reg(c, fx, d ? RC_D : RC_R), fy.s);
        return reg_op(r);
    }
    if (t.base == TH_I1) {
        if (x.is_int && y.is_int) return int_op(c, 0); /* unreachable: folded by the caller */
        const char *px = as_reg(c, x, RC_P), *py = as_reg(c, y, RC_P);
        if (op == THC_EQ || op == THC_NE) {
            ins(c, "xor.pred %s, %s, %s", r, px, py);
            if (op == THC_EQ) ins(c, "not.pred %s, %s", r, r);
            return reg_op(r);
        }
        const char *ux = newreg(c, RC_R), *uy = newreg(c, RC_R);
        ins(c, "selp.u32 %s, 1, 0, %s", ux, px);
        ins(c, "selp.u32 %s, 1, 0, %s", uy, py);
        ins(c, "setp.%s.u32 %s, %s, %s", iop[op], r, ux, uy);
        return reg_op(r);
    }
    const char *ty = t.base != TH_PTR ? stype(t.base) : t.addrspace == TH_AS_SHARED ? "u32" : "u64";
    reg_class rc = class_of(t);
    ins(c, "setp.%s.%s %s, %s, %s", iop[op], ty, r, as_reg(c, x, rc), y.s);
    return reg_op(r);
}

static bool fold_cmp(th_cmpop op, int64_t x, int64_t y, bool *out) {
    switch (op) {
    case THC_EQ: *out = x == y; return true;
    case THC_NE: *out = x != y; return true;
    case THC_LT: *out = x < y; return true;
    case THC_LE: *out = x <= y; return true;
    case THC_GT: *out = x > y; return true;
    case THC_GE: *out = x >= y; return true;
    }
    return false;
}

/* ---- conversions (one lane) ---- */
static pd_opnd convert_lane(pd_ctx *c, pd_opnd x, th_type from, th_type to) {
    th_base fb = from.base, tb = to.base;
    if (fb == tb && (fb != TH_PTR || from.addrspace == to.addrspace)) return x;
    if (fb == TH_PTR || tb == TH_PTR) {
        bool fs = fb == TH_PTR && from.addrspace == TH_AS_SHARED, ts = tb == TH_PTR && to.addrspace == TH_AS_SHARED;
        if (fb == TH_PTR && tb == TH_PTR) {
            /* address-space casts through generic */
            const char *r;
            if (fs) { /* shared (32-bit) -> generic */
                const char *w = newreg(c, RC_D);
                ins(c, "cvt.u64.u32 %s, %s", w, as_reg(c, x, RC_R));
                r = newreg(c, RC_D);
                ins(c, "cvta.shared.u64 %s, %s", r, w);
                if (to.addrspace == TH_AS_GENERIC) return reg_op(r);
                x = reg_op(r);
                from = th_ptr(TH_AS_GENERIC);
            } else if (from.addrspace != TH_AS_GENERIC) {
                static const char *const sp[] = {"", "global", "", "shared", "const", "local"};
                r = newreg(c, RC_D);
                ins(c, "cvta.%s.u64 %s, %s", sp[from.addrspace <= 5 ? from.addrspace : 1], r, as_reg(c, x, RC_D));
                x = reg_op(r);
                if (to.addrspace == TH_AS_GENERIC) return x;
            }
            static const char *const sp[] = {"", "global", "", "shared", "const", "local"};
            r = newreg(c, RC_D);
            ins(c, "cvta.to.%s.u64 %s, %s", sp[to.addrspace <= 5 ? to.addrspace : 1], r, as_reg(c, x, RC_D));
            if (ts) {
                const char *n = newreg(c, RC_R);
                ins(c, "cvt.u32.u64 %s, %s", n, r);
                return reg_op(n);
            }
            return reg_op(r);
        }
        /* pointer <-> integer: the address bits */
        int pbits = (fb == TH_PTR ? fs : ts) ? 32 : 64;
        th_base ib = fb == TH_PTR ? tb : fb;
        int ibits = base_bytes(ib) * 8;
        if (x.is_int) return int_op(c, x.iv);
        if (pbits == ibits) return x;
        if (fb == TH_PTR) { /* narrow or widen the address to the integer */
            const char *r = newreg(c, class_of(th_scalar(ib)));
            ins(c, "cvt.%s.%s %s, %s", utype(ib), pbits == 64 ? "u64" : "u32", r, x.s);
            return reg_op(r);
        }
        const char *r = newreg(c, pbits == 64 ? RC_D : RC_R);
        ins(c, "cvt.%s.%s %s, %s", pbits == 64 ? "u64" : "u32", utype(ib), r, x.s);
        return reg_op(r);
    }
    if (is_intb(fb) && is_intb(tb)) {
        if (tb == TH_I1) {
            if (x.is_int) return int_op(c, x.iv != 0);
            const char *r = newreg(c, RC_P);
            ins(c, "setp.ne.%s %s, %s, 0", btype(fb), r, x.s);
            return reg_op(r);
        }
        if (fb == TH_I1) {
            if (x.is_int) return int_op(c, x.iv & 1);
            const char *r = newreg(c, class_of(to));
            ins(c, "selp.%s %s, 1, 0, %s", btype(tb), r, x.s);
            return reg_op(r);
        }
        if (x.is_int) return int_op(c, wrap_int(tb, x.iv));
        int fbits = base_bytes(fb) * 8, tbits = base_bytes(tb) * 8;
        if (fb == TH_I8 && tb == TH_I16) return x; /* i8 is kept sign-extended in 16 bits */
        if (fbits == tbits) return x;
        const char *r = newreg(c, class_of(to));
        if (fbits < tbits) ins(c, "cvt.%s.%s %s, %s", stype(tb), fb == TH_I8 ? "s8" : stype(fb), r, x.s);
        else ins(c, "cvt.%s.%s %s, %s", utype(tb), utype(fb), r, x.s);
        pd_opnd o = reg_op(r);
        return tb == TH_I8 ? norm_i8(c, o) : o;
    }
    if (is_intb(fb) && is_floatb(tb)) {
        if (x.is_int) return float_const(c, tb, (double)x.iv);
        const char *f = newreg(c, tb == TH_F64 ? RC_D : RC_R);
        if (fb == TH_I1) ins(c, "selp.f32 %s, 0f3F800000, 0f00000000, %s", f, x.s);
        else ins(c, "cvt.rn.%s.%s %s, %s", tb == TH_F64 ? "f64" : "f32", stype(fb), f, x.s);
        if (fb == TH_I1 && tb == TH_F64) {
            const char *d = newreg(c, RC_D);
            ins(c, "cvt.f64.f32 %s, %s", d, f);
            return reg_op(d);
        }
        return tb == TH_F64 || tb == TH_F32 ? reg_op(f) : from_f32(c, reg_op(f), tb);
    }
    if (is_floatb(fb) && is_intb(tb)) {
        bool d = fb == TH_F64;
        pd_opnd f = d ? x : to_f32(c, x, fb);
        const char *fs = as_reg(c, f, d ? RC_D : RC_R);
        if (tb == TH_I1) {
            const char *r = newreg(c, RC_P);
            ins(c, "setp.neu.%s %s, %s, %s", d ? "f64" : "f32", r, fs, d ? "0d0000000000000000" : "0f00000000");
            return reg_op(r);
        }
        /* cvt.rzi saturates; an i8 goes through i16 and keeps its low byte */
        const char *r = newreg(c, class_of(to));
        ins(c, "cvt.rzi.%s.%s %s, %s", stype(tb), d ? "f64" : "f32", r, fs);
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
    return int_op(c, 0);
}

/* ---- values as 32-bit words (bitcasts, vector memory accesses) ---- */
/* The value's bytes as words of `wbytes` (2, 4 or 8) bytes: n lanes of
 * esize bytes packed little-endian. */
static int to_words(pd_ctx *c, const pd_val *v, th_type t, int wbytes, const char **w) {
    int esize = base_bytes(t.base), n = v->n, total = esize * n, nw = total / wbytes;
    reg_class wc = wbytes == 2 ? RC_H : wbytes == 4 ? RC_R : RC_D;
    if (t.base == TH_I1) {
        pd_error(c, "i1 values have no memory layout");
        return 0;
    }
    if (esize == wbytes) {
        for (int i = 0; i < n; i++) w[i] = as_reg(c, v->l[i], wc);
        return n;
    }
    if (esize > wbytes) { /* split each lane */
        int per = esize / wbytes;
        for (int i = 0; i < n; i++) {
            const char *src = as_reg(c, v->l[i], class_of(th_scalar(t.base)));
            tlc_strbuf sb;
            tlc_sb_init(&sb);
            tlc_sb_puts(&sb, "{");
            for (int j = 0; j < per; j++) {
                w[i * per + j] = newreg(c, wc);
                tlc_sb_printf(&sb, "%s%s", j ? ", " : "", w[i * per + j]);
            }
            tlc_sb_puts(&sb, "}");
            ins(c, "mov.b%d %s, %s", esize * 8, tlc_sb_cstr(&sb), src);
            tlc_sb_free(&sb);
        }
        return nw;
    }
    int per = wbytes / esize;
    for (int i = 0; i < nw; i++) {
        w[i] = newreg(c, wc);
        if (esize == 1) { /* bytes: shift and or into the word */
            const char *acc = NULL;
            for (int j = 0; j < per; j++) {
                const char *h = as_reg(c, v->l[i * per + j], RC_H);
                const char *u = newreg(c, wc);
                ins(c, "cvt.u%d.u8 %s, %s", wbytes * 8, u, h);
                if (j) {
                    const char *s = newreg(c, wc);
                    ins(c, "shl.b%d %s, %s, %d", wbytes * 8, s, u, 8 * j);
                    const char *o = newreg(c, wc);
                    ins(c, "or.b%d %s, %s, %s", wbytes * 8, o, acc, s);
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
            ins(c, "mov.b32 %s, 0x%04X%04X", w[i], hi->hbits, lo->hbits);
            continue;
        }
        if (per == 2 && lo->f32src && hi->f32src && lo->half == hi->half) {
            ins(c, "cvt.rn.%s.f32 %s, %s, %s", lo->half == TH_F16 ? "f16x2" : "bf16x2", w[i], hi->f32src, lo->f32src);
            continue;
        }
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        reg_class ec = class_of(th_scalar(t.base));
        for (int j = 0; j < per; j++) tlc_sb_printf(&sb, "%s%s", j ? ", " : "", as_reg(c, v->l[i * per + j], ec));
        ins(c, "mov.b%d %s, {%s}", wbytes * 8, w[i], tlc_sb_cstr(&sb));
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
            const char *r = newreg(c, ec);
            tlc_strbuf sb;
            tlc_sb_init(&sb);
            for (int j = 0; j < per; j++) tlc_sb_printf(&sb, "%s%s", j ? ", " : "", w[i * per + j]);
            ins(c, "mov.b%d %s, {%s}", esize * 8, r, tlc_sb_cstr(&sb));
            tlc_sb_free(&sb);
            v->l[i] = reg_op(r);
        }
        return;
    }
    int per = wbytes / esize;
    for (int i = 0; i < nw; i++) {
        if (esize == 1) {
            for (int j = 0; j < per; j++) {
                const char *s = newreg(c, wbytes == 8 ? RC_D : wbytes == 4 ? RC_R : RC_H);
                ins(c, "shr.u%d %s, %s, %d", wbytes * 8, s, w[i], 8 * j);
                const char *h = newreg(c, RC_H);
                if (wbytes == 2) ins(c, "mov.b16 %s, %s", h, s);
                else ins(c, "cvt.u16.u%d %s, %s", wbytes * 8, h, s);
                v->l[i * per + j] = norm_i8(c, reg_op(h));
            }
            continue;
        }
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        for (int j = 0; j < per; j++) {
            const char *r = newreg(c, ec);
            v->l[i * per + j] = reg_op(r);
            if (per == 2 && wbytes == 4 && !is_var_reg(w[i])) {
                v->l[i * per + j].pair = w[i];
                v->l[i * per + j].pair_hi = j == 1;
            }
            tlc_sb_printf(&sb, "%s%s", j ? ", " : "", r);
        }
        ins(c, "mov.b%d {%s}, %s", wbytes * 8, tlc_sb_cstr(&sb), w[i]);
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
        pd_var *pv = var_entry(c, e->u.var.var);
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
        if (!x || !is_intb(x->type.base) || x->type.base == TH_I1 || base_bytes(x->type.base) > base_bytes(e->type.base))
            return e;
        th_expr *r = split_offset(c, (th_expr *)x, off, depth + 1);
        if (*off == 0) return e;
        return r ? th_convert(c->a, r, e->type) : NULL;
    }
    default: return e;
    }
}

/* A pointer expression as a pointer without constant offsets plus *off bytes. */
static const th_expr *split_pointer(pd_ctx *c, const th_expr *e, int64_t *off) {
    *off = 0;
    if (!e) return e;
    if (e->kind == THE_PTR_ADD) {
        int64_t po, io;
        const th_expr *pr = split_pointer(c, e->u.ptr_add.ptr, &po);
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
static const char *address(pd_ctx *c, const th_expr *p, int64_t *off) {
    const th_expr *base = split_pointer(c, p, off);
    if (*off < -(1ll << 31) || *off >= (1ll << 31)) { /* beyond an immediate: the whole address */
        base = p;
        *off = 0;
    }
    pd_opnd a = expr(c, base).l[0];
    if (a.is_int) {
        *off = wadd(*off, a.iv);
        return as_reg(c, int_op(c, 0), class_of(p->type));
    }
    return as_reg(c, a, class_of(p->type));
}

/* ---- memory accesses ---- */
static const char *space_of(pd_ctx *c, const th_expr *ptr, bool load) {
    switch (ptr->type.addrspace) {
    case TH_AS_GLOBAL: {
        if (load && !c->k->pdl_wait) {
            int p = ptr_param_of(c, ptr);
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
    if (!p || p->type.base != TH_PTR) { pd_error(c, "load through a non-pointer"); return undef_val(c, t); }
    int64_t boff;
    const char *base = address(c, p, &boff);
    const char *space = space_of(c, p, true);
    int esize = base_bytes(t.base), total = esize * lanes_of(t);
    if (t.base == TH_I1) { /* a byte */
        const char *h = newreg(c, RC_H), *r = newreg(c, RC_P);
        ins(c, "ld%s.u8 %s, [%s+%" PRId64 "]", space, h, base, boff);
        ins(c, "setp.ne.u16 %s, %s, 0", r, h);
        return scalar(reg_op(r));
    }
    int unit, wbytes, k;
    access_shape(total, e->u.load.align > 0 ? e->u.load.align : esize, esize, &unit, &wbytes, &k);
    const char *words[PD_MAX_LANES];
    int nw = 0;
    for (int off = 0; off < total; off += unit) {
        reg_class wc = wbytes == 1 || wbytes == 2 ? RC_H : wbytes == 4 ? RC_R : RC_D;
        const char *ty = wbytes == 1 ? "u8" : wbytes == 2 ? "b16" : wbytes == 4 ? "b32" : "b64";
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        for (int j = 0; j < k; j++) {
            words[nw + j] = newreg(c, wc);
            tlc_sb_printf(&sb, "%s%s", j ? ", " : "", words[nw + j]);
        }
        if (k > 1) ins(c, "ld%s.v%d.%s {%s}, [%s+%" PRId64 "]", space, k, ty, tlc_sb_cstr(&sb), base, wadd(boff, off));
        else ins(c, "ld%s.%s %s, [%s+%" PRId64 "]", space, ty, tlc_sb_cstr(&sb), base, wadd(boff, off));
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

static void store(pd_ctx *c, const th_expr *p, const pd_val *val, th_type t, int align) {
    int64_t boff;
    const char *base = address(c, p, &boff);
    const char *space = space_of(c, p, false);
    int esize = base_bytes(t.base), total = esize * val->n;
    if (t.base == TH_I1) {
        const char *h = newreg(c, RC_H);
        ins(c, "selp.u16 %s, 1, 0, %s", h, as_reg(c, val->l[0], RC_P));
        ins(c, "st%s.u8 [%s+%" PRId64 "], %s", space, base, boff, h);
        return;
    }
    int unit, wbytes, k;
    access_shape(total, align > 0 ? align : esize, esize, &unit, &wbytes, &k);
    const char *words[PD_MAX_LANES];
    int nw;
    if (wbytes == 1) {
        nw = val->n;
        for (int i = 0; i < nw; i++) words[i] = val->l[i].is_int ? val->l[i].s : as_reg(c, val->l[i], RC_H);
    } else {
        nw = to_words(c, val, t, wbytes, words);
    }
    const char *ty = wbytes == 1 ? "u8" : wbytes == 2 ? "b16" : wbytes == 4 ? "b32" : "b64";
    int w = 0;
    for (int off = 0; off < total && w + k <= nw; off += unit, w += k) {
        tlc_strbuf sb;
        tlc_sb_init(&sb);
        for (int j = 0; j < k; j++) tlc_sb_printf(&sb, "%s%s", j ? ", " : "", words[w + j]);
        if (k > 1) ins(c, "st%s.v%d.%s [%s+%" PRId64 "], {%s}", space, k, ty, base, wadd(boff, off), tlc_sb_cstr(&sb));
        else ins(c, "st%s.%s [%s+%" PRId64 "], %s", space, ty, base, wadd(boff, off), tlc_sb_cstr(&sb));
        tlc_sb_free(&sb);
    }
}

/* ---- register arrays indexed at run time: local memory ---- */
static const char *local_addr(pd_ctx *c, pd_var *pv, pd_opnd index) {
    const th_var *v = pv->var;
    int esize = th_type_bytes(v->type);
    if (!pv->local_sym) {
        pv->local_sym = tlc_arena_printf(c->a, "__tlc_local%d", c->nlocal++);
        tlc_sb_printf(&c->locals, "\t.local .align 16 .b8 %s[%d];\n", pv->local_sym, esize * v->array_len);
    }
    const char *b = newreg(c, RC_D), *i64 = newreg(c, RC_D), *r = newreg(c, RC_D);
    ins(c, "mov.u64 %s, %s", b, pv->local_sym);
    if (index.is_int) {
        ins(c, "add.s64 %s, %s, %" PRId64, r, b, wmul(index.iv, esize));
        return r;
    }
    ins(c, "cvt.s64.s32 %s, %s", i64, index.s);
    ins(c, "mad.lo.s64 %s, %s, %d, %s", r, i64, esize, b);
    return r;
}

static pd_val array_read(pd_ctx *c, const th_expr *e) {
    const th_var *var = e->u.var.var;
    if (!var || var->array_len <= 0) { pd_error(c, "array read of a non-array"); return undef_val(c, e->type); }
    pd_var *pv = var_entry(c, var);
    pd_val ix = expr(c, e->u.var.index);
    const th_expr *ie = e->u.var.index;
    pd_opnd idx = ix.l[0];
    if (ie && ie->type.base != TH_I32 && !idx.is_int) idx = convert_lane(c, idx, ie->type, th_scalar(TH_I32));
    pd_val v;
    v.n = lanes_of(var->type);
    if (pv->runtime_index) {
        const char *addr = local_addr(c, pv, idx);
        pd_val r = {0};
        th_expr fake = {0};
        (void)fake;
        int esize = base_bytes(var->type.base);
        const char *words[PD_MAX_LANES];
        int wb = esize < 4 ? esize : 4;
        if (esize == 8) wb = 8;
        for (int i = 0; i < v.n * esize / wb; i++) {
            words[i] = newreg(c, wb == 2 || wb == 1 ? RC_H : wb == 4 ? RC_R : RC_D);
            ins(c, "ld.local.%s %s, [%s+%d]", wb == 1 ? "u8" : wb == 2 ? "b16" : wb == 4 ? "b32" : "b64", words[i],
                addr, i * wb);
        }
        if (var->type.base == TH_I1) { pd_error(c, "i1 array in local memory"); return undef_val(c, e->type); }
        if (wb == 1) {
            r.n = v.n;
            for (int i = 0; i < v.n; i++) r.l[i] = norm_i8(c, reg_op(words[i]));
            return r;
        }
        from_words(c, words, v.n * esize / wb, wb, var->type, &r);
        return r;
    }
    if (!idx.is_int) { pd_error(c, "'%s' indexed at run time is not in local memory", var->name); return undef_val(c, e->type); }
    if (idx.iv < 0 || idx.iv >= var->array_len) {
        pd_error(c, "index %" PRId64 " out of range for '%s[%d]'", idx.iv, var->name, var->array_len);
        return undef_val(c, e->type);
    }
    read_elem(c, pv, (int)idx.iv, &v);
    return v;
}

static pd_opnd ptr_add(pd_ctx *c, const th_expr *e) {
    const th_expr *p = e->u.ptr_add.ptr, *ix = e->u.ptr_add.index;
    pd_opnd base = expr(c, p).l[0];
    pd_opnd idx = expr(c, ix).l[0];
    int64_t size = th_type_bytes(e->elem);
    bool narrow = p->type.addrspace == TH_AS_SHARED;
    reg_class rc = narrow ? RC_R : RC_D;
    if (idx.is_int) {
        if (idx.iv == 0) return base;
        if (base.is_int) return int_op(c, wadd(base.iv, wmul(idx.iv, size)));
        const char *r = newreg(c, rc);
        ins(c, "add.s%d %s, %s, %" PRId64, narrow ? 32 : 64, r, base.s, wmul(idx.iv, size));
        return reg_op(r);
    }
    const char *b = as_reg(c, base, rc);
    const char *r = newreg(c, rc);
    if (narrow) {
        const char *i32 = idx.s;
        if (ix->type.base == TH_I64) {
            const char *t = newreg(c, RC_R);
            ins(c, "cvt.u32.u64 %s, %s", t, idx.s);
            i32 = t;
        } else if (ix->type.base != TH_I32) {
            pd_opnd w = convert_lane(c, idx, ix->type, th_scalar(TH_I32));
            i32 = w.s;
        }
        ins(c, "mad.lo.s32 %s, %s, %" PRId64 ", %s", r, i32, size, b);
        return reg_op(r);
    }
    if (ix->type.base == TH_I64) {
        ins(c, "mad.lo.s64 %s, %s, %" PRId64 ", %s", r, idx.s, size, b);
        return reg_op(r);
    }
    pd_opnd w = ix->type.base == TH_I32 ? idx : convert_lane(c, idx, ix->type, th_scalar(TH_I32));
    const char *off = newreg(c, RC_D);
    ins(c, "mul.wide.s32 %s, %s, %" PRId64, off, w.s, size);
    ins(c, "add.s64 %s, %s, %s", r, b, off);
    return reg_op(r);
}

/* ---- shuffles ---- */
static const char *shfl32(pd_ctx *c, bool bfly, const char *v, pd_opnd lane, int width) {
    const char *r = newreg(c, RC_R);
    ins(c, "shfl.sync.%s.b32 %s, %s, %s, %d, -1", bfly ? "bfly" : "idx", r, v, lane.s, ((32 - width) << 8) | 0x1f);
    return r;
}

static pd_val shuffle(pd_ctx *c, bool bfly, const pd_val *x, th_type t, pd_opnd lane, int width) {
    pd_val r = {0};
    int esize = base_bytes(t.base), total = esize * x->n;
    if (t.base == TH_I1) {
        const char *u = newreg(c, RC_R);
        ins(c, "selp.u32 %s, 1, 0, %s", u, as_reg(c, x->l[0], RC_P));
        const char *s = shfl32(c, bfly, u, lane, width);
        const char *p = newreg(c, RC_P);
        ins(c, "setp.ne.u32 %s, %s, 0", p, s);
        return scalar(reg_op(p));
    }
    if (total < 4) { /* one 8- or 16-bit lane, widened */
        const char *u = newreg(c, RC_R);
        ins(c, "cvt.u32.u16 %s, %s", u, as_reg(c, x->l[0], RC_H));
        const char *s = shfl32(c, bfly, u, lane, width);
        const char *h = newreg(c, RC_H);
        ins(c, "cvt.u16.u32 %s, %s", h, s);
        return scalar(t.base == TH_I8 ? norm_i8(c, reg_op(h)) : reg_op(h));
    }
    if (total % 4 || total > 4 * PD_MAX_LANES) { pd_error(c, "cannot shuffle a value of %d bytes", total); return *x; }
    const char *w[PD_MAX_LANES];
    int nw = to_words(c, x, t, 4, w);
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
        pd_val x = expr(c, args[0]);
        pd_opnd lane = expr(c, args[1]).l[0];
        lane = convert_lane(c, lane, args[1]->type, th_scalar(TH_I32));
        return shuffle(c, e->u.intrin.id == THI_SHFL_BFLY, &x, e->type, lane, (int)width);
    }
    case THI_FMA: {
        if (n != 3) { pd_error(c, "fma wants three operands"); return undef_val(c, e->type); }
        pd_val a = expr(c, args[0]), b = expr(c, args[1]), d = expr(c, args[2]);
        pd_val r;
        r.n = a.n;
        th_base bt = e->type.base;
        for (int i = 0; i < a.n; i++) {
            bool dd = bt == TH_F64;
            reg_class rc = dd ? RC_D : RC_R;
            pd_opnd fa = dd ? a.l[i] : to_f32(c, a.l[i], bt), fb = dd ? b.l[i] : to_f32(c, b.l[i], bt);
            pd_opnd fd = dd ? d.l[i] : to_f32(c, d.l[i], bt);
            const char *o = newreg(c, rc);
            ins(c, "fma.rn.%s %s, %s, %s, %s", dd ? "f64" : "f32", o, as_reg(c, fa, rc), fb.s, fd.s);
            r.l[i] = dd ? reg_op(o) : from_f32(c, reg_op(o), bt);
        }
        return r;
    }
    }
    pd_error(c, "unknown intrinsic %d", (int)e->u.intrin.id);
    return undef_val(c, e->type);
}

/* Exponent as a small integer constant (also through a conversion). */
static bool const_small_int(const th_expr *e, int64_t *n) {
    while (e && e->kind == THE_CONVERT) e = e->u.conv.a;
    if (!e) return false;
    if (e->kind == THE_INT) { *n = e->u.ival; return *n >= -64 && *n <= 64; }
    if (e->kind == THE_FLOAT && e->u.fval == floor(e->u.fval) && fabs(e->u.fval) <= 64) {
        *n = (int64_t)e->u.fval;
        return true;
    }
    return false;
}

static pd_opnd mul_any(pd_ctx *c, th_base b, pd_opnd x, pd_opnd y) {
    return is_floatb(b) ? float_bin(c, THB_MUL, b, x, y) : int_bin(c, THB_MUL, b, x, y);
}

static pd_opnd pow_lane(pd_ctx *c, th_base b, pd_opnd x, const th_expr *exponent, pd_opnd ey) {
    int64_t n;
    if (const_small_int(exponent, &n)) {
        if (n < 0 && !is_floatb(b)) { pd_error(c, "integer power with a negative exponent"); return int_op(c, 0); }
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
        if (!have) return is_floatb(b) ? float_const(c, b, 1.0) : int_op(c, 1);
        if (n < 0) return float_bin(c, THB_DIV, b, float_const(c, b, 1.0), acc);
        return acc;
    }
    if (!is_floatb(b)) { pd_error(c, "integer power needs a constant exponent in -64..64"); return int_op(c, 0); }
    if (exponent && exponent->kind == THE_FLOAT && exponent->u.fval == 0.5) return float_un(c, THU_SQRT, b, x);
    pd_opnd l = float_un(c, THU_LOG2, b, x);
    pd_opnd p = float_bin(c, THB_MUL, b, ey, l);
    return float_un(c, THU_EXP2, b, p);
}

/* ---- common subexpressions ---- */
static void touch(pd_ctx *c, pd_var *pv) { pv->assigned_at = ++c->stamp; }


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
    case THE_VAR: {
        pd_var *pv = var_entry(c, e->u.var.var);
        x = mix(x, pv->bound ? (uint64_t)pv->cval * 31 + 1 : (uint64_t)(uintptr_t)e->u.var.var);
        break;
    }
    case THE_ARRAY_READ: {
        uint64_t ih;
        if (var_entry(c, e->u.var.var)->runtime_index || !cse_hash(c, e->u.var.index, &ih)) return false;
        x = mix(mix(x, (uint64_t)(uintptr_t)e->u.var.var), ih);
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
        return var_entry(c, a->u.var.var)->assigned_at <= stamp;
    }
    case THE_ARRAY_READ:
        return a->u.var.var == b->u.var.var && var_entry(c, a->u.var.var)->assigned_at <= stamp &&
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
    case THE_CONVERT: case THE_BITCAST: return cse_same(c, a->u.conv.a, b->u.conv.a, stamp);
    case THE_EXTRACT: return a->u.extract.lane == b->u.extract.lane && cse_same(c, a->u.extract.vec, b->u.extract.vec, stamp);
    case THE_BUILD:
        if (a->u.build.n != b->u.build.n) return false;
        for (int i = 0; i < a->u.build.n; i++)
            if (!cse_same(c, a->u.build.lanes[i], b->u.build.lanes[i], stamp)) return false;
        return true;
    default: return false;
    }
}

static int cse_mark(const pd_ctx *c) { return c->ncse; }

static void cse_truncate(pd_ctx *c, int mark) {
    while (c->ncse > mark) {
        pd_cse *x = &c->cse[--c->ncse];
        c->cse_head[x->hash % PD_CSE_BUCKETS] = x->prev;
    }
}

static pd_val expr_uncached(pd_ctx *c, const th_expr *e);

static pd_val expr(pd_ctx *c, const th_expr *e) {
    if (!e || e->kind == THE_INT || e->kind == THE_FLOAT || e->kind == THE_VAR || e->kind == THE_PARAM ||
        e->kind == THE_SPECIAL || e->kind == THE_LOAD || e->kind == THE_INTRIN)
        return expr_uncached(c, e);
    uint64_t h;
    if (!cse_hash(c, e, &h)) return expr_uncached(c, e);
    for (int i = c->cse_head[h % PD_CSE_BUCKETS]; i >= 0; i = c->cse[i].prev) {
        const pd_cse *x = &c->cse[i];
        if (x->hash == h && cse_same(c, x->e, e, x->stamp)) {
            pd_val v;
            v.n = x->n;
            memcpy(v.l, x->lanes, sizeof *x->lanes * (size_t)x->n);
            return v;
        }
    }
    pd_val v = expr_uncached(c, e);
    if (c->ncse == c->cap_cse) {
        c->cap_cse = c->cap_cse ? c->cap_cse * 2 : 1024;
        c->cse = realloc(c->cse, sizeof *c->cse * (size_t)c->cap_cse);
        if (!c->cse) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    }
    pd_cse *x = &c->cse[c->ncse];
    x->e = e;
    x->hash = h;
    x->stamp = c->stamp;
    x->prev = c->cse_head[h % PD_CSE_BUCKETS];
    x->n = v.n;
    x->lanes = tlc_arena_alloc(c->a, sizeof *x->lanes * (size_t)(v.n > 0 ? v.n : 1));
    memcpy(x->lanes, v.l, sizeof *v.l * (size_t)v.n);
    c->cse_head[h % PD_CSE_BUCKETS] = c->ncse++;
    return v;
}

static pd_val expr_uncached(pd_ctx *c, const th_expr *e) {
    if (!e) { pd_error(c, "missing expression"); return scalar(int_op(c, 0)); }
    th_type t = e->type;
    if (lanes_of(t) > PD_MAX_LANES) { pd_error(c, "vector of %d lanes", lanes_of(t)); return scalar(int_op(c, 0)); }
    pd_val v = {0};
    v.n = lanes_of(t);
    switch (e->kind) {
    case THE_INT:
        for (int i = 0; i < v.n; i++) v.l[i] = is_floatb(t.base) ? float_const(c, t.base, (double)e->u.ival)
                                                                 : int_op(c, wrap_int(t.base, e->u.ival));
        return v;
    case THE_FLOAT:
        for (int i = 0; i < v.n; i++) v.l[i] = is_floatb(t.base) ? float_const(c, t.base, e->u.fval)
                                                                 : int_op(c, (int64_t)e->u.fval);
        return v;
    case THE_VAR: {
        const th_var *var = e->u.var.var;
        if (!var || var->array_len > 0) { pd_error(c, "read of a register array without an index"); return undef_val(c, t); }
        pd_var *pv = var_entry(c, var);
        if (pv->bound) return scalar(int_op(c, pv->cval));
        read_elem(c, pv, 0, &v);
        return v;
    }
    case THE_ARRAY_READ: return array_read(c, e);
    case THE_PARAM:
        if (!c->k || e->u.param < 0 || e->u.param >= c->k->nparams) { pd_error(c, "parameter %d does not exist", e->u.param); return undef_val(c, t); }
        return scalar(param_value(c, e->u.param, t));
    case THE_SPECIAL: return scalar(special(c, e->u.special));
    case THE_SHARED_PTR: {
        const char *b = c->smem_reg;
        if (!b) {
            b = newreg(c, RC_R);
            ins(c, "mov.u32 %s, __tlc_smem", b);
        }
        if (!e->u.offset) return scalar(reg_op(b));
        pd_opnd off = expr(c, e->u.offset).l[0];
        if (e->u.offset->type.base == TH_I64) off = convert_lane(c, off, e->u.offset->type, th_scalar(TH_I32));
        if (off.is_int && off.iv == 0) return scalar(reg_op(b));
        const char *r = newreg(c, RC_R);
        ins(c, "add.s32 %s, %s, %s", r, b, off.s);
        return scalar(reg_op(r));
    }
    case THE_PTR_ADD: return scalar(ptr_add(c, e));
    case THE_LOAD: return load(c, e);
    case THE_BIN: {
        th_binop op = (th_binop)e->u.bin.op;
        if (op == THB_POW) {
            pd_val x = expr(c, e->u.bin.a);
            int64_t n;
            pd_val y = const_small_int(e->u.bin.b, &n) ? x : expr(c, e->u.bin.b);
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
            pd_val xv = expr(c, e->u.bin.a), yv = expr(c, e->u.bin.b);
            pd_opnd qv = expr(c, q).l[0], x0 = xv.l[0], y0 = yv.l[0];
            if (!qv.is_int || !x0.is_int || !y0.is_int) {
                pd_opnd r = int_bin(c, THB_SUB, t.base, x0, int_bin(c, THB_MUL, t.base, qv, y0));
                if (op == THB_REM || op == THB_UREM) {
                    v.l[0] = r;
                    return v;
                }
                /* floor: one less (plus b) where the remainder is not 0 and its sign is not b's */
                reg_class rc = class_of(th_scalar(t.base));
                const char *st = stype(t.base), *bt = btype(t.base);
                const char *rr = as_reg(c, r, rc), *x2 = newreg(c, rc), *out = newreg(c, rc), *s2 = newreg(c, rc);
                const char *pnz = newreg(c, RC_P), *pneg = newreg(c, RC_P), *adj = newreg(c, RC_P);
                ins(c, "setp.ne.%s %s, %s, 0", st, pnz, rr);
                ins(c, "xor.%s %s, %s, %s", bt, x2, rr, y0.s);
                ins(c, "setp.lt.%s %s, %s, 0", st, pneg, x2);
                ins(c, "and.pred %s, %s, %s", adj, pnz, pneg);
                if (op == THB_FLOORMOD) {
                    ins(c, "add.%s %s, %s, %s", st, s2, rr, y0.s);
                    ins(c, "selp.%s %s, %s, %s, %s", bt, out, s2, rr, adj);
                } else {
                    const char *qq = as_reg(c, qv, rc);
                    ins(c, "sub.%s %s, %s, 1", st, s2, qq);
                    ins(c, "selp.%s %s, %s, %s, %s", bt, out, s2, qq, adj);
                }
                v.l[0] = reg_op(out);
                return v;
            }
        }
        pd_val x = expr(c, e->u.bin.a), y = expr(c, e->u.bin.b);
        for (int i = 0; i < v.n; i++)
            v.l[i] = is_floatb(t.base) ? float_bin(c, op, t.base, x.l[i], y.l[i]) : int_bin(c, op, t.base, x.l[i], y.l[i]);
        return v;
    }
    case THE_UN: {
        pd_val x = expr(c, e->u.un.a);
        for (int i = 0; i < v.n; i++) {
            pd_opnd o = x.l[i];
            if (is_floatb(t.base)) { v.l[i] = float_un(c, e->u.un.op, t.base, o); continue; }
            if (o.is_int) {
                int64_t r = e->u.un.op == THU_NEG ? wsub(0, o.iv) : e->u.un.op == THU_NOT ? ~o.iv : o.iv < 0 ? wsub(0, o.iv) : o.iv;
                v.l[i] = int_op(c, wrap_int(t.base, r));
                continue;
            }
            const char *r = newreg_t(c, th_scalar(t.base));
            if (t.base == TH_I1) {
                if (e->u.un.op == THU_NOT) ins(c, "not.pred %s, %s", r, o.s);
                else r = o.s; /* -x and |x| of one bit */
                v.l[i] = reg_op(r);
                continue;
            }
            switch (e->u.un.op) {
            case THU_NEG: ins(c, "neg.%s %s, %s", stype(t.base), r, o.s); break;
            case THU_NOT: ins(c, "not.%s %s, %s", btype(t.base), r, o.s); break;
            case THU_ABS: ins(c, "abs.%s %s, %s", stype(t.base), r, o.s); break;
            default: pd_error(c, "unary operation %d on an integer", (int)e->u.un.op); break;
            }
            v.l[i] = t.base == TH_I8 ? norm_i8(c, reg_op(r)) : reg_op(r);
        }
        return v;
    }
    case THE_CMP: {
        const th_expr *xa = e->u.bin.a;
        pd_val x = expr(c, xa), y = expr(c, e->u.bin.b);
        th_type at = th_scalar(xa->type.base);
        at.addrspace = xa->type.addrspace;
        for (int i = 0; i < v.n; i++) {
            bool r;
            if (x.l[i].is_int && y.l[i].is_int && !is_floatb(at.base) && at.base != TH_PTR &&
                fold_cmp((th_cmpop)e->u.bin.op, x.l[i].iv, y.l[i].iv, &r)) {
                v.l[i] = int_op(c, r);
                continue;
            }
            v.l[i] = cmp_lane(c, (th_cmpop)e->u.bin.op, at, x.l[i], y.l[i]);
        }
        return v;
    }
    case THE_SELECT: {
        pd_val cv = expr(c, e->u.sel.cond);
        th_type ct = e->u.sel.cond->type;
        if (ct.base != TH_I1) { /* any scalar: != 0 */
            th_type st = th_scalar(ct.base);
            st.addrspace = ct.addrspace;
            for (int i = 0; i < cv.n; i++) cv.l[i] = convert_lane(c, cv.l[i], st, th_scalar(TH_I1));
        }
        if (cv.n == 1 && cv.l[0].is_int) return expr(c, cv.l[0].iv ? e->u.sel.a : e->u.sel.b);
        pd_val x = expr(c, e->u.sel.a), y = expr(c, e->u.sel.b);
        reg_class rc = class_of(t);
        for (int i = 0; i < v.n; i++) {
            pd_opnd cl = cv.l[cv.n > 1 ? i : 0];
            if (cl.is_int) { v.l[i] = cl.iv ? x.l[i] : y.l[i]; continue; }
            const char *r = newreg(c, rc);
            if (rc == RC_P) {
                const char *px = as_reg(c, x.l[i], RC_P), *py = as_reg(c, y.l[i], RC_P);
                const char *t1 = newreg(c, RC_P), *t2 = newreg(c, RC_P), *nc = newreg(c, RC_P);
                ins(c, "and.pred %s, %s, %s", t1, cl.s, px);
                ins(c, "not.pred %s, %s", nc, cl.s);
                ins(c, "and.pred %s, %s, %s", t2, nc, py);
                ins(c, "or.pred %s, %s, %s", r, t1, t2);
            } else {
                ins(c, "selp.%s %s, %s, %s, %s", bits_of(rc), r, x.l[i].s, y.l[i].s, cl.s);
            }
            v.l[i] = reg_op(r);
        }
        return v;
    }
    case THE_CONVERT: {
        const th_expr *x = e->u.conv.a;
        pd_val xv = expr(c, x);
        th_type ft = th_scalar(x->type.base), tt = th_scalar(t.base);
        ft.addrspace = x->type.addrspace;
        tt.addrspace = t.addrspace;
        for (int i = 0; i < v.n; i++) v.l[i] = convert_lane(c, xv.l[i], ft, tt);
        return v;
    }
    case THE_BITCAST: {
        const th_expr *x = e->u.conv.a;
        pd_val xv = expr(c, x);
        if (th_type_eq(x->type, t)) return xv;
        if (x->type.base == TH_PTR || t.base == TH_PTR) {
            th_type ft = th_scalar(x->type.base), tt = th_scalar(t.base);
            ft.addrspace = x->type.addrspace;
            tt.addrspace = t.addrspace;
            return scalar(convert_lane(c, xv.l[0], ft, tt));
        }
        int total = th_type_bytes(x->type);
        if (total != th_type_bytes(t)) { pd_error(c, "bitcast changes the size"); return undef_val(c, t); }
        if (total > 4 * PD_MAX_LANES) { pd_error(c, "bitcast of %d bytes", total); return undef_val(c, t); }
        int fe = base_bytes(x->type.base), te = base_bytes(t.base);
        if (fe == te) { /* same lane width: the registers as they are */
            for (int i = 0; i < v.n; i++) v.l[i] = reg_op(as_reg(c, xv.l[i], class_of(th_scalar(t.base))));
            return v;
        }
        (void)fe;
        (void)te;
        int wb = total >= 4 ? 4 : 2; /* 16-bit lanes pack into 32-bit words */
        const char *w[PD_MAX_LANES];
        if (total < 2) { pd_error(c, "bitcast of one byte"); return undef_val(c, t); }
        int nw = to_words(c, &xv, x->type, wb, w);
        from_words(c, w, nw, wb, t, &v);
        return v;
    }
    case THE_EXTRACT: {
        pd_val x = expr(c, e->u.extract.vec);
        int l = e->u.extract.lane;
        if (l < 0 || l >= x.n) { pd_error(c, "lane %d of a %d-lane vector", l, x.n); return undef_val(c, t); }
        return scalar(x.l[l]);
    }
    case THE_BUILD: {
        if (e->u.build.n != v.n) { pd_error(c, "vector built from %d lanes", e->u.build.n); return undef_val(c, t); }
        for (int i = 0; i < v.n; i++) v.l[i] = expr(c, e->u.build.lanes[i]).l[0];
        return v;
    }
    case THE_INTRIN: return intrin(c, e);
    }
    pd_error(c, "unknown expression kind %d", (int)e->kind);
    return undef_val(c, t);
}

/* ---------------- statements ---------------- */
static void stmt(pd_ctx *c, const th_stmt *s);

static bool skipped(pd_ctx *c, const th_stmt *s) {
    for (int i = c->nskip - 1; i >= 0; i--)
        if (c->skip[i] == s) return true;
    return false;
}

static void add_skip(pd_ctx *c, const th_stmt *s) {
    if (c->nskip == c->cap_skip) {
        c->cap_skip = c->cap_skip ? c->cap_skip * 2 : 256;
        c->skip = realloc(c->skip, sizeof *c->skip * (size_t)c->cap_skip);
        if (!c->skip) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    }
    c->skip[c->nskip++] = s;
}

static void assign_value(pd_ctx *c, const th_var *v, int elem, const pd_val *x) {
    pd_var *pv = var_entry(c, v);
    if (pv->bound) { pd_error(c, "assignment to the unrolled loop variable '%s'", v->name); return; }
    if (packed(v)) {
        const char *w[PD_MAX_LANES];
        int nw = to_words(c, x, v->type, 4, w);
        for (int i = 0; i < nw; i++) mov_into(c, var_reg(c, pv, elem, i), reg_op(w[i]), RC_R);
        touch(c, pv);
        return;
    }
    reg_class rc = class_of(th_scalar(v->type.base));
    if (v->type.base == TH_PTR) rc = class_of(v->type);
    for (int i = 0; i < x->n; i++) mov_into(c, var_reg(c, pv, elem, i), x->l[i], rc);
    touch(c, pv);
    for (int i = 0; i < x->n; i++) set_half(c, pv, elem * x->n + i, x->l[i].pair, x->l[i].pair_hi);
}

static void assign_stmt(pd_ctx *c, const th_stmt *s) {
    const th_var *v = s->u.assign.var;
    const th_expr *val = s->u.assign.value;
    if (!v || !val) { pd_error(c, "assignment without a variable or value"); return; }
    if (!th_type_eq(v->type, val->type)) { pd_error(c, "assignment to '%s' of another type", v->name); return; }
    pd_val x = expr(c, val);
    pd_var *pv = var_entry(c, v);
    if (v->type.base == TH_PTR && !s->u.assign.index) pv->ptr_param = ptr_param_of(c, val);
    if (!s->u.assign.index) {
        if (v->array_len > 0) { pd_error(c, "register array '%s' assigned without an index", v->name); return; }
        assign_value(c, v, 0, &x);
        return;
    }
    pd_opnd idx = expr(c, s->u.assign.index).l[0];
    if (s->u.assign.index->type.base != TH_I32 && !idx.is_int)
        idx = convert_lane(c, idx, s->u.assign.index->type, th_scalar(TH_I32));
    if (pv->runtime_index) {
        touch(c, pv);
        const char *addr = local_addr(c, pv, idx);
        const char *w[PD_MAX_LANES];
        int esize = base_bytes(v->type.base);
        int wb = esize < 4 ? esize : 4;
        if (esize == 8) wb = 8;
        if (wb == 1) {
            for (int i = 0; i < x.n; i++) ins(c, "st.local.u8 [%s+%d], %s", addr, i, as_reg(c, x.l[i], RC_H));
            return;
        }
        int nw = to_words(c, &x, v->type, wb, w);
        for (int i = 0; i < nw; i++)
            ins(c, "st.local.%s [%s+%d], %s", wb == 2 ? "b16" : wb == 4 ? "b32" : "b64", addr, i * wb, w[i]);
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
    if (v && v->array_len > 0 && index && !reads_only_bound(index, b)) var_entry(c, v)->runtime_index = true;
}

static void scan_runtime_expr(pd_ctx *c, const th_expr *e, const pd_bound_set *b) {
    if (!e) return;
    switch (e->kind) {
    case THE_ARRAY_READ:
        note_array(c, e->u.var.var, e->u.var.index, b);
        scan_runtime_expr(c, e->u.var.index, b);
        break;
    case THE_SHARED_PTR: scan_runtime_expr(c, e->u.offset, b); break;
    case THE_PTR_ADD: scan_runtime_expr(c, e->u.ptr_add.ptr, b); scan_runtime_expr(c, e->u.ptr_add.index, b); break;
    case THE_LOAD: scan_runtime_expr(c, e->u.load.ptr, b); break;
    case THE_BIN: case THE_CMP: scan_runtime_expr(c, e->u.bin.a, b); scan_runtime_expr(c, e->u.bin.b, b); break;
    case THE_UN: scan_runtime_expr(c, e->u.un.a, b); break;
    case THE_SELECT:
        scan_runtime_expr(c, e->u.sel.cond, b);
        scan_runtime_expr(c, e->u.sel.a, b);
        scan_runtime_expr(c, e->u.sel.b, b);
        break;
    case THE_CONVERT: case THE_BITCAST: scan_runtime_expr(c, e->u.conv.a, b); break;
    case THE_EXTRACT: scan_runtime_expr(c, e->u.extract.vec, b); break;
    case THE_BUILD:
        for (int i = 0; i < e->u.build.n; i++) scan_runtime_expr(c, e->u.build.lanes ? e->u.build.lanes[i] : NULL, b);
        break;
    case THE_INTRIN:
        for (int i = 0; i < e->u.intrin.nargs; i++) scan_runtime_expr(c, e->u.intrin.args ? e->u.intrin.args[i] : NULL, b);
        break;
    default: break;
    }
}

static void scan_runtime_stmt(pd_ctx *c, const th_stmt *s, pd_bound_set *b) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) scan_runtime_stmt(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, b);
        break;
    case THS_FOR: {
        scan_runtime_expr(c, s->u.for_.start, b);
        scan_runtime_expr(c, s->u.for_.end, b);
        bool unrolled = s->u.for_.unroll && const_bounds(s, b);
        if (unrolled) {
            if (b->n == b->cap) {
                b->cap = b->cap ? b->cap * 2 : 16;
                b->vars = realloc(b->vars, sizeof *b->vars * (size_t)b->cap);
                if (!b->vars) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
            }
            b->vars[b->n++] = s->u.for_.var;
        }
        scan_runtime_stmt(c, s->u.for_.body, b);
        if (unrolled) b->n--;
        break;
    }
    case THS_IF:
        scan_runtime_expr(c, s->u.if_.cond, b);
        scan_runtime_stmt(c, s->u.if_.then, b);
        scan_runtime_stmt(c, s->u.if_.els, b);
        break;
    case THS_ASSIGN:
        note_array(c, s->u.assign.var, s->u.assign.index, b);
        scan_runtime_expr(c, s->u.assign.index, b);
        scan_runtime_expr(c, s->u.assign.value, b);
        break;
    case THS_STORE: scan_runtime_expr(c, s->u.store.ptr, b); scan_runtime_expr(c, s->u.store.value, b); break;
    case THS_ATOMIC_ADD: scan_runtime_expr(c, s->u.atomic.ptr, b); scan_runtime_expr(c, s->u.atomic.value, b); break;
    case THS_ASM:
        for (int i = 0; i < s->u.asm_.nargs; i++) scan_runtime_expr(c, s->u.asm_.args ? s->u.asm_.args[i] : NULL, b);
        break;
    default: break;
    }
}

static bool is_hoisted(const pd_ctx *c, const th_stmt *s);

/* Marks every variable s assigns as assigned now. */
static void touch_assigned(pd_ctx *c, const th_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) touch_assigned(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL);
        break;
    case THS_FOR:
        if (s->u.for_.var) touch(c, var_entry(c, s->u.for_.var));
        touch_assigned(c, s->u.for_.body);
        break;
    case THS_IF: touch_assigned(c, s->u.if_.then); touch_assigned(c, s->u.if_.els); break;
    case THS_ASSIGN:
        if (s->u.assign.var && !is_hoisted(c, s)) {
            touch(c, var_entry(c, s->u.assign.var));
            clear_pairs(var_entry(c, s->u.assign.var));
        }
        break;
    case THS_ASM:
        for (int i = 0; i < s->u.asm_.nouts; i++)
            if (s->u.asm_.outs && s->u.asm_.outs[i]) touch(c, var_entry(c, s->u.asm_.outs[i]));
        break;
    default: break;
    }
}

/* ---- loop-invariant assignments ---- */
/* Marks the variables s assigns (not counting hoisted statements) with `mark`. */
static bool is_hoisted(const pd_ctx *c, const th_stmt *s) {
    for (int i = 0; i < c->nhoisted; i++)
        if (c->hoisted[i] == s) return true;
    return false;
}

static void mark_assigned(pd_ctx *c, const th_stmt *s, int mark) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) mark_assigned(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, mark);
        break;
    case THS_FOR:
        if (s->u.for_.var) var_entry(c, s->u.for_.var)->loop_mark = mark;
        mark_assigned(c, s->u.for_.body, mark);
        break;
    case THS_IF: mark_assigned(c, s->u.if_.then, mark); mark_assigned(c, s->u.if_.els, mark); break;
    case THS_ASSIGN:
        if (s->u.assign.var && !is_hoisted(c, s)) var_entry(c, s->u.assign.var)->loop_mark = mark;
        break;
    case THS_ASM:
        for (int i = 0; i < s->u.asm_.nouts; i++)
            if (s->u.asm_.outs && s->u.asm_.outs[i]) var_entry(c, s->u.asm_.outs[i])->loop_mark = mark;
        break;
    default: break;
    }
}

/* e is pure and reads nothing the loop (mark) assigns. */
static bool loop_invariant(pd_ctx *c, const th_expr *e, int mark) {
    if (!e) return false;
    switch (e->kind) {
    case THE_INT: case THE_FLOAT: case THE_PARAM: case THE_SPECIAL: return true;
    case THE_VAR: {
        pd_var *pv = var_entry(c, e->u.var.var);
        return !pv->bound && pv->loop_mark != mark && e->u.var.var->array_len <= 0;
    }
    case THE_SHARED_PTR: return !e->u.offset || loop_invariant(c, e->u.offset, mark);
    case THE_PTR_ADD: return loop_invariant(c, e->u.ptr_add.ptr, mark) && loop_invariant(c, e->u.ptr_add.index, mark);
    case THE_BIN: case THE_CMP: return loop_invariant(c, e->u.bin.a, mark) && loop_invariant(c, e->u.bin.b, mark);
    case THE_UN: return loop_invariant(c, e->u.un.a, mark);
    case THE_SELECT:
        return loop_invariant(c, e->u.sel.cond, mark) && loop_invariant(c, e->u.sel.a, mark) &&
               loop_invariant(c, e->u.sel.b, mark);
    case THE_CONVERT: case THE_BITCAST: return loop_invariant(c, e->u.conv.a, mark);
    default: return false;
    }
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
        pd_var *pv = var_entry(c, v);
        if (pv->assigns != 1 || pv->bound || !loop_invariant(c, s->u.assign.value, mark)) break;
        if (c->nhoisted == c->cap_hoisted) {
            c->cap_hoisted = c->cap_hoisted ? c->cap_hoisted * 2 : 64;
            c->hoisted = realloc(c->hoisted, sizeof *c->hoisted * (size_t)c->cap_hoisted);
            if (!c->hoisted) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
        }
        c->hoisted[c->nhoisted++] = s;
        pv->loop_mark = 0;
        n++;
        break;
    }
    default: break; /* nested loops keep theirs (they hoist them themselves) */
    }
    return n;
}

/* Emits the statements of s that are hoisted (from `from` on), in order. */
static void emit_hoisted(pd_ctx *c, const th_stmt *s, int from);

/* Whether e reads only variables assigned at or before stamp `pre` (none
 * the loop being entered assigns) and nothing else that can change. */
static bool invariant(pd_ctx *c, const th_expr *e, int pre) {
    if (!e) return false;
    switch (e->kind) {
    case THE_INT: case THE_FLOAT: case THE_PARAM: case THE_SPECIAL: return true;
    case THE_VAR: {
        pd_var *pv = var_entry(c, e->u.var.var);
        return !pv->bound && pv->assigned_at <= pre;
    }
    case THE_BIN: case THE_CMP: return invariant(c, e->u.bin.a, pre) && invariant(c, e->u.bin.b, pre);
    case THE_UN: return invariant(c, e->u.un.a, pre);
    case THE_CONVERT: case THE_BITCAST: return invariant(c, e->u.conv.a, pre);
    case THE_SELECT:
        return invariant(c, e->u.sel.cond, pre) && invariant(c, e->u.sel.a, pre) && invariant(c, e->u.sel.b, pre);
    case THE_SHARED_PTR: return !e->u.offset || invariant(c, e->u.offset, pre);
    case THE_PTR_ADD: return invariant(c, e->u.ptr_add.ptr, pre) && invariant(c, e->u.ptr_add.index, pre);
    default: return false;
    }
}

static void hoist_expr(pd_ctx *c, const th_expr *e, int pre);
static void hoist_address(pd_ctx *c, const th_expr *p, int pre);

/* Integer divisions (not by a power of two) in the loop body that do not
 * change from one iteration to the next, computed once before the loop: the
 * body's copies then reuse them (ptxas keeps them in the loop). */
static void hoist_stmt(pd_ctx *c, const th_stmt *s, int pre) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) hoist_stmt(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, pre);
        break;
    case THS_FOR: hoist_expr(c, s->u.for_.start, pre); hoist_expr(c, s->u.for_.end, pre); hoist_stmt(c, s->u.for_.body, pre); break;
    case THS_IF: hoist_expr(c, s->u.if_.cond, pre); hoist_stmt(c, s->u.if_.then, pre); hoist_stmt(c, s->u.if_.els, pre); break;
    case THS_ASSIGN: hoist_expr(c, s->u.assign.index, pre); hoist_expr(c, s->u.assign.value, pre); break;
    case THS_STORE: hoist_address(c, s->u.store.ptr, pre); hoist_expr(c, s->u.store.value, pre); break;
    case THS_ATOMIC_ADD: hoist_address(c, s->u.atomic.ptr, pre); hoist_expr(c, s->u.atomic.value, pre); break;
    case THS_ASM:
        for (int i = 0; i < s->u.asm_.nargs; i++) hoist_expr(c, s->u.asm_.args ? s->u.asm_.args[i] : NULL, pre);
        break;
    default: break;
    }
}

/* An access's address as address() will compute it: its base without the constant offset. */
static void hoist_address(pd_ctx *c, const th_expr *p, int pre) {
    int64_t off;
    const th_expr *base = split_pointer(c, p, &off);
    hoist_expr(c, base, pre);
}

static void hoist_expr(pd_ctx *c, const th_expr *e, int pre) {
    if (!e) return;
    switch (e->kind) {
    case THE_BIN: {
        th_binop op = (th_binop)e->u.bin.op;
        bool div = op == THB_DIV || op == THB_REM || op == THB_UDIV || op == THB_UREM || op == THB_FLOORDIV ||
                   op == THB_FLOORMOD;
        const th_expr *d = e->u.bin.b;
        if (div && is_intb(e->type.base) && e->type.lanes <= 1 && !(d && d->kind == THE_INT && tlc_is_pow2(d->u.ival)) &&
            invariant(c, e, pre)) {
            (void)expr(c, e);
            return;
        }
        hoist_expr(c, e->u.bin.a, pre);
        hoist_expr(c, e->u.bin.b, pre);
        break;
    }
    case THE_CMP: hoist_expr(c, e->u.bin.a, pre); hoist_expr(c, e->u.bin.b, pre); break;
    case THE_UN: hoist_expr(c, e->u.un.a, pre); break;
    case THE_SELECT: hoist_expr(c, e->u.sel.cond, pre); hoist_expr(c, e->u.sel.a, pre); hoist_expr(c, e->u.sel.b, pre); break;
    case THE_CONVERT: case THE_BITCAST: hoist_expr(c, e->u.conv.a, pre); break;
    case THE_PTR_ADD: hoist_expr(c, e->u.ptr_add.ptr, pre); hoist_expr(c, e->u.ptr_add.index, pre); break;
    case THE_SHARED_PTR: hoist_expr(c, e->u.offset, pre); break;
    case THE_LOAD: hoist_address(c, e->u.load.ptr, pre); break;
    case THE_ARRAY_READ: hoist_expr(c, e->u.var.index, pre); break;
    case THE_EXTRACT: hoist_expr(c, e->u.extract.vec, pre); break;
    case THE_BUILD:
        for (int i = 0; i < e->u.build.n; i++) hoist_expr(c, e->u.build.lanes ? e->u.build.lanes[i] : NULL, pre);
        break;
    case THE_INTRIN:
        for (int i = 0; i < e->u.intrin.nargs; i++) hoist_expr(c, e->u.intrin.args ? e->u.intrin.args[i] : NULL, pre);
        break;
    default: break;
    }
}

static void for_stmt(pd_ctx *c, const th_stmt *s) {
    const th_var *v = s->u.for_.var;
    if (!v || v->array_len > 0 || !is_intb(v->type.base) || v->type.base == TH_I1 || v->type.lanes > 1) {
        pd_error(c, "loop variable must be a scalar integer slot");
        return;
    }
    int64_t step = s->u.for_.step;
    if (step == 0) { pd_error(c, "loop over '%s' with step 0", v->name); return; }
    pd_opnd start = expr(c, s->u.for_.start).l[0];
    pd_opnd end = expr(c, s->u.for_.end).l[0];
    pd_var *pv = var_entry(c, v);
    if (s->u.for_.unroll && start.is_int && end.is_int) {
        bool was_bound = pv->bound;
        int64_t was = pv->cval;
        int64_t i = start.iv;
        for (; step > 0 ? i < end.iv : i > end.iv; i += step) {
            pv->bound = true;
            pv->cval = i;
            touch(c, pv);
            if (s->u.for_.body) stmt(c, s->u.for_.body);
            if (c->failed && tlc_diag_too_many(c->diag)) break;
        }
        pv->bound = was_bound;
        pv->cval = was;
        touch(c, pv);
        if (!was_bound) mov_into(c, var_reg(c, pv, 0, 0), int_op(c, i), class_of(v->type));
        return;
    }
    const char *iv = var_reg(c, pv, 0, 0);
    const char *endr = end.is_int ? end.s : NULL;
    if (!endr) { /* range() evaluates its bound once */
        endr = newreg_t(c, v->type);
        mov_into(c, endr, end, class_of(v->type));
    }
    mov_into(c, iv, start, class_of(v->type));
    /* invariant assignments first, before the loop */
    int lmark = ++c->nloops, from = c->nhoisted;
    pv->loop_mark = lmark;
    mark_assigned(c, s->u.for_.body, lmark);
    (void)find_hoistable(c, s->u.for_.body, lmark); /* one pass in program order: a use after its def */
    if (c->nhoisted > from) emit_hoisted(c, s->u.for_.body, from);
    /* what the loop assigns differs at its head from before it */
    int pre = c->stamp;
    touch(c, pv);
    touch_assigned(c, s->u.for_.body);
    hoist_stmt(c, s->u.for_.body, pre);
    int mark = cse_mark(c), pmark = c->npair_log;
    int head = ++c->nlabel, done = ++c->nlabel;
    const char *p = newreg(c, RC_P);
    label(c, head);
    ins(c, "setp.%s.%s %s, %s, %s", step > 0 ? "ge" : "le", stype(v->type.base), p, iv, endr);
    ins(c, "@%s bra $Ltlc%d", p, done);
    if (s->u.for_.body) stmt(c, s->u.for_.body);
    ins(c, "add.%s %s, %s, %" PRId64, stype(v->type.base), iv, iv, step);
    if (v->type.base == TH_I8) ins(c, "cvt.s16.s8 %s, %s", iv, iv);
    ins(c, "bra $Ltlc%d", head);
    label(c, done);
    cse_truncate(c, mark);
    forget_pairs(c, pmark);
    c->nhoisted = from; /* an unrolled loop around this one emits it again */
}

/* The addresses the loads and stores of a path use, computed before its
 * branch when they read nothing the path assigns (LLVM's speculation of
 * cheap instructions on a divergent target does the same): the paths of
 * an unrolled copy, each behind its own bounds test, then share them. */
static void speculate_expr(pd_ctx *c, const th_expr *e, int mark);

static void speculate_address(pd_ctx *c, const th_expr *p, int mark) {
    int64_t off;
    const th_expr *base = split_pointer(c, p, &off);
    if (base && base->kind != THE_PARAM && base->kind != THE_VAR && loop_invariant(c, base, mark)) (void)expr(c, base);
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

static void if_stmt(pd_ctx *c, const th_stmt *s) {
    const th_expr *ce = s->u.if_.cond;
    if (!ce) { pd_error(c, "if without a condition"); return; }
    pd_opnd cv = expr(c, ce).l[0];
    if (ce->type.base != TH_I1) {
        th_type st = th_scalar(ce->type.base);
        st.addrspace = ce->type.addrspace;
        cv = convert_lane(c, cv, st, th_scalar(TH_I1));
    }
    if (cv.is_int) { /* a condition known here: the path taken alone */
        const th_stmt *taken = cv.iv ? s->u.if_.then : s->u.if_.els;
        if (taken) stmt(c, taken);
        return;
    }
    int els = ++c->nlabel, done = s->u.if_.els ? ++c->nlabel : els;
    if (s->u.if_.then && !s->u.if_.els) {
        int smark = ++c->nloops;
        mark_assigned(c, s->u.if_.then, smark);
        speculate_stmt(c, s->u.if_.then, smark);
    }
    ins(c, "@!%s bra $Ltlc%d", cv.s, els);
    int mark = cse_mark(c), pmark = c->npair_log;
    if (s->u.if_.then) stmt(c, s->u.if_.then);
    cse_truncate(c, mark);
    forget_pairs(c, pmark);
    if (s->u.if_.els) {
        ins(c, "bra $Ltlc%d", done);
        label(c, els);
        stmt(c, s->u.if_.els);
        cse_truncate(c, mark);
        forget_pairs(c, pmark);
    }
    label(c, done);
}

static void store_stmt(pd_ctx *c, const th_stmt *s) {
    const th_expr *p = s->u.store.ptr, *val = s->u.store.value;
    if (!p || !val || p->type.base != TH_PTR) { pd_error(c, "store needs a pointer and a value"); return; }
    pd_val x = expr(c, val);
    store(c, p, &x, val->type, s->u.store.align);
}

static void atomic_stmt(pd_ctx *c, const th_stmt *s) {
    const th_expr *p = s->u.atomic.ptr, *val = s->u.atomic.value;
    if (!p || !val || p->type.base != TH_PTR) { pd_error(c, "atomic add needs a pointer and a value"); return; }
    th_type t = val->type;
    pd_val x = expr(c, val);
    int64_t boff;
    const char *base = address(c, p, &boff);
    const char *space = space_of(c, p, false);
    const char *ty, *operand;
    if (t.lanes == 2 && (t.base == TH_F16 || t.base == TH_BF16)) {
        const char *w[2];
        to_words(c, &x, t, 4, w);
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
        operand = as_reg(c, x.l[0], class_of(th_scalar(t.base)));
    }
    ins(c, "red.relaxed.gpu%s.add.%s [%s+%" PRId64 "], %s", space, ty, base, boff, operand);
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

/* The var and element an expression reads, if it is a plain variable read. */
static bool plain_read(pd_ctx *c, const th_expr *e, const th_var **v, int *elem) {
    if (!e) return false;
    if (e->kind == THE_VAR && e->u.var.var && e->u.var.var->array_len <= 0 && e->u.var.var->type.lanes <= 1) {
        if (var_entry(c, e->u.var.var)->bound) return false;
        *v = e->u.var.var;
        *elem = 0;
        return true;
    }
    if (e->kind == THE_ARRAY_READ && e->u.var.var && e->u.var.var->type.lanes <= 1) {
        pd_var *pv = var_entry(c, e->u.var.var);
        if (pv->runtime_index) return false;
        int64_t ix;
        if (!th_expr_const_int(e->u.var.index, &ix)) {
            pd_val iv = {0};
            (void)iv;
            /* an unrolled loop's index: fold it without emitting anything */
            const th_expr *ie = e->u.var.index;
            if (!ie || ie->kind != THE_VAR || !var_entry(c, ie->u.var.var)->bound) return false;
            ix = var_entry(c, ie->u.var.var)->cval;
        }
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
        if (s->u.assign.index) {
            if (!th_expr_const_int(s->u.assign.index, &ix)) {
                const th_expr *ie = s->u.assign.index;
                if (!ie || ie->kind != THE_VAR || !var_entry(c, ie->u.var.var)->bound) continue;
                ix = var_entry(c, ie->u.var.var)->cval;
            }
        }
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
        if (var_entry(c, out)->reads != 1 || th_type_bytes(v->type) != th_type_bytes(out->type)) continue;
        const th_stmt *back = assign_back(c, seq, nseq, at + 1, v, elem, out);
        if (!back) continue;
        in_place[k.tie] = true;
        outreg[k.tie] = var_reg(c, var_entry(c, v), elem, 0);
        add_skip(c, back);
    }
    for (int i = 0; i < nouts; i++) {
        const th_var *v = s->u.asm_.outs[i];
        if (!v || v->array_len > 0) { pd_error(c, "inline asm output must be a scalar slot"); return; }
        if (!in_place[i]) outreg[i] = var_reg(c, var_entry(c, v), 0, 0);
        opnd[i] = outreg[i];
    }
    for (int i = 0; i < nargs; i++) {
        pd_constraint k = cons[nouts + i];
        const th_expr *a = s->u.asm_.args[i];
        if (!a) { pd_error(c, "inline asm with a missing operand"); return; }
        if (k.kind == 't') {
            if (k.tie < 0 || k.tie >= nouts) { pd_error(c, "inline asm ties input %d to no output", i); return; }
            if (!in_place[k.tie]) {
                pd_opnd x = expr(c, a).l[0];
                mov_into(c, outreg[k.tie], x, letter_class(cons[k.tie].letter));
            }
            opnd[nouts + i] = outreg[k.tie];
            continue;
        }
        pd_val x = expr(c, a);
        if (x.n != 1) { pd_error(c, "inline asm operand %d is a vector", i); return; }
        opnd[nouts + i] = as_reg(c, x.l[0], letter_class(k.letter));
    }
    /* the outputs change when the asm has run (after its inputs were read) */
    for (int i = 0; i < nouts; i++) touch(c, var_entry(c, s->u.asm_.outs[i]));
    for (int i = 0; i < nargs; i++) {
        const th_var *v;
        int elem;
        if (cons[nouts + i].kind == 't' && in_place[cons[nouts + i].tie] && plain_read(c, s->u.asm_.args[i], &v, &elem)) {
            touch(c, var_entry(c, v));
            clear_half(var_entry(c, v), elem);
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

static void emit_hoisted(pd_ctx *c, const th_stmt *s, int from) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) emit_hoisted(c, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL, from);
        break;
    case THS_IF: emit_hoisted(c, s->u.if_.then, from); emit_hoisted(c, s->u.if_.els, from); break;
    case THS_ASSIGN:
        for (int i = from; i < c->nhoisted; i++)
            if (c->hoisted[i] == s) assign_stmt(c, s);
        break;
    default: break;
    }
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
    pd_var *pv = var_entry(c, v);
    if (pv->runtime_index || pv->bound) return false;
    pd_opnd ia = expr(c, a->u.assign.index).l[0], ib = expr(c, b->u.assign.index).l[0];
    if (!ia.is_int || !ib.is_int || ia.iv % 2 != 0 || ib.iv != ia.iv + 1 || ib.iv >= v->array_len) return false;
    tlc_loc saved = c->loc;
    if (a->loc.line > 0) c->loc = a->loc;
    const char *fa = as_reg(c, expr(c, xa).l[0], RC_R), *fb = as_reg(c, expr(c, xb).l[0], RC_R);
    const char *w = newreg(c, RC_R);
    ins(c, "cvt.rn.%s.f32 %s, %s, %s", v->type.base == TH_F16 ? "f16x2" : "bf16x2", w, fb, fa);
    ins(c, "mov.b32 {%s, %s}, %s", var_reg(c, pv, (int)ia.iv, 0), var_reg(c, pv, (int)ib.iv, 0), w);
    touch(c, pv);
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
        int mark = c->nskip;
        for (int i = 0; i < s->u.seq.n; i++) {
            const th_stmt *x = s->u.seq.stmts[i];
            if (!x) continue;
            if (c->nskip > mark && skipped(c, x)) continue;
            if (x->kind == THS_ASM) asm_stmt(c, x, s->u.seq.stmts, s->u.seq.n, i);
            else if (i + 1 < s->u.seq.n && assign_pair(c, x, s->u.seq.stmts[i + 1])) i++;
            else stmt(c, x);
        }
        c->nskip = mark;
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
        if (n == 0) ins(c, "bar.sync %d", id);
        else ins(c, "bar.sync %d, %d", id, n);
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
    const char *name = param_name(c, i);
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
    for (int i = 0; i < PD_CSE_BUCKETS; i++) c->cse_head[i] = -1;
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
    bool smem_before = c->used_smem;
    c->used_smem = false;
    scan_stmt(c, k->body);
    /* the entry block: what every path may read, read once */
    const char **preg = tlc_arena_calloc(c->a, (size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *preg);
    for (int i = 0; i < k->nparams; i++)
        if (c->param_used[i]) preg[i] = param_value(c, i, k->params[i].byte_size_override > 0 ? th_ptr(TH_AS_GENERIC)
                                                                                          : k->params[i].type).s;
    c->param_reg = preg;
    for (int s = 0; s <= THS_WARPID; s++)
        if (c->special_used[s]) c->special_reg[s] = special(c, (th_special)s).s;
    if (c->used_smem) {
        c->smem_reg = newreg(c, RC_R);
        ins(c, "mov.u32 %s, __tlc_smem", c->smem_reg);
    }
    c->used_smem = c->used_smem || smem_before;
    pd_bound_set bs = {0};
    scan_runtime_stmt(c, k->body, &bs);
    free(bs.vars);
    for (int i = 0; i < k->nvars; i++)
        if (k->vars && k->vars[i]) var_entry(c, k->vars[i]);
    if (k->body) stmt(c, k->body);
    ins(c, "ret");

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
    bool ok = true;
    for (int i = 0; i < m->nkernels && !tlc_diag_too_many(diag); i++) {
        if (!m->kernels[i]) continue;
        for (int j = 0; j < i; j++)
            if (m->kernels[j] && m->kernels[j]->name && m->kernels[i]->name &&
                strcmp(m->kernels[j]->name, m->kernels[i]->name) == 0) {
                c.k = m->kernels[i];
                pd_error(&c, "two kernels named '%s'", m->kernels[i]->name);
            }
        if (m->kernels[i]->dyn_shared_bytes > 0) c.used_smem = true;
        if (!emit_kernel(&c, m->kernels[i], &kernels)) ok = false;
    }
    free(c.vars);
    free(c.skip);
    free(c.cse);
    free(c.pair_log);
    free(c.hoisted);
    char *r = NULL;
    if (ok && !c.failed) {
        tlc_strbuf out;
        tlc_sb_init(&out);
        tlc_sb_printf(&out, "\n.version %d.%d\n.target %s\n.address_size 64\n\n", tg->ptx_isa / 10, tg->ptx_isa % 10,
                      tg->name);
        if (c.used_smem) tlc_sb_puts(&out, ".extern .shared .align 1024 .b8 __tlc_smem[];\n");
        tlc_sb_puts(&out, tlc_sb_cstr(&kernels));
        r = tlc_arena_strdup(a, tlc_sb_cstr(&out));
        tlc_sb_free(&out);
    }
    tlc_sb_free(&kernels);
    return r;
}
