/* Thread IR variables -> LLVM SSA values. Thread IR's control flow is
 * structured (for and if, no jumps), so the translation keeps every
 * variable's current value itself and places the phis where they belong: at
 * an if's join for each variable the two paths leave different, at a loop's
 * header for each variable the loop assigns. LLVM then starts from SSA form
 * instead of a load and a store per access, which its SROA, DSE and first
 * InstCombine would otherwise spend most of their time undoing.
 *
 * The exception is a register array that some access indexes with a value
 * known only at run time (a loop counter before unrolling): it lives in an
 * alloca, and SROA splits it once unrolling has made the indices constant. */
#include "codegen_internal.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *checked(void *p) {
    if (!p) { fputs("tlc: fatal: out of memory\n", stderr); abort(); }
    return p;
}

static void *xrealloc(void *p, size_t n) { return checked(realloc(p, n ? n : 1)); }
static void *xcalloc(size_t n) { return checked(calloc(n ? n : 1, 1)); }

/* ---------------- the slot table (open addressing on the var's address) ---------------- */
static size_t slot_hash(const th_var *v, int cap) {
    uintptr_t p = (uintptr_t)v;
    p ^= p >> 17;
    p *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(p >> 7) & (size_t)(cap - 1);
}

static void slots_grow(cg_ctx *cg) {
    int cap = cg->cap_slots ? cg->cap_slots * 2 : 64;
    cg_slot *ns = xcalloc(sizeof *ns * (size_t)cap);
    for (int i = 0; i < cg->cap_slots; i++) {
        if (!cg->slots[i].var) continue;
        size_t h = slot_hash(cg->slots[i].var, cap);
        while (ns[h].var) h = (h + 1) & (size_t)(cap - 1);
        ns[h] = cg->slots[i];
    }
    free(cg->slots);
    cg->slots = ns;
    cg->cap_slots = cap;
}

static cg_slot *slot_entry(cg_ctx *cg, const th_var *v) {
    if ((cg->nslots + 1) * 2 > cg->cap_slots) slots_grow(cg);
    size_t h = slot_hash(v, cg->cap_slots);
    while (cg->slots[h].var && cg->slots[h].var != v) h = (h + 1) & (size_t)(cg->cap_slots - 1);
    cg_slot *s = &cg->slots[h];
    if (!s->var) {
        s->var = v;
        s->value = -1;
        cg->nslots++;
    }
    return s;
}

void cg_vars_reset(cg_ctx *cg) {
    cg->nslots = 0;
    if (cg->cap_slots) memset(cg->slots, 0, sizeof(cg_slot) * (size_t)cg->cap_slots);
    cg->nvalues = 0;
}

/* The slot of v, its storage decided on first use: values in cg->values, or
 * an alloca in the entry block for an array indexed at run time. */
cg_slot *cg_var_slot(cg_ctx *cg, const th_var *v) {
    cg_slot *s = slot_entry(cg, v);
    if (s->ty) return s;
    if (v->type.base == TH_VOID) {
        cg_error(cg, "variable '%s' has type void", v->name);
        return NULL;
    }
    s->ty = cg_type(cg, v->type);
    if (v->array_len > 0 && s->runtime_index) {
        s->ty = LLVMArrayType2(s->ty, (uint64_t)v->array_len);
        s->alloca = LLVMBuildAlloca(cg->alloca_b, s->ty, v->name ? v->name : "v");
        return s;
    }
    int n = v->array_len > 0 ? v->array_len : 1;
    if (cg->nvalues + n > cg->cap_values) {
        int cap = cg->cap_values ? cg->cap_values * 2 : 256;
        while (cap < cg->nvalues + n) cap *= 2;
        cg->values = xrealloc(cg->values, sizeof *cg->values * (size_t)cap);
        cg->value_types = xrealloc(cg->value_types, sizeof *cg->value_types * (size_t)cap);
        cg->cap_values = cap;
    }
    s->value = cg->nvalues;
    for (int i = 0; i < n; i++) {
        cg->values[cg->nvalues + i] = NULL;
        cg->value_types[cg->nvalues + i] = s->ty;
    }
    cg->nvalues += n;
    return s;
}

/* ---------------- which arrays are indexed at run time ---------------- */
static void mark_index(cg_ctx *cg, const th_var *v, const th_expr *index) {
    int64_t c;
    if (v && v->array_len > 0 && index && !th_expr_const_int(index, &c)) slot_entry(cg, v)->runtime_index = true;
}

static void scan_expr(cg_ctx *cg, const th_expr *e) {
    if (!e) return;
    switch (e->kind) {
    case THE_ARRAY_READ:
        mark_index(cg, e->u.var.var, e->u.var.index);
        scan_expr(cg, e->u.var.index);
        break;
    case THE_SHARED_PTR: scan_expr(cg, e->u.offset); break;
    case THE_PTR_ADD: scan_expr(cg, e->u.ptr_add.ptr); scan_expr(cg, e->u.ptr_add.index); break;
    case THE_LOAD: scan_expr(cg, e->u.load.ptr); break;
    case THE_BIN: case THE_CMP: scan_expr(cg, e->u.bin.a); scan_expr(cg, e->u.bin.b); break;
    case THE_UN: scan_expr(cg, e->u.un.a); break;
    case THE_SELECT: scan_expr(cg, e->u.sel.cond); scan_expr(cg, e->u.sel.a); scan_expr(cg, e->u.sel.b); break;
    case THE_CONVERT: case THE_BITCAST: scan_expr(cg, e->u.conv.a); break;
    case THE_EXTRACT: scan_expr(cg, e->u.extract.vec); break;
    case THE_BUILD:
        for (int i = 0; i < e->u.build.n; i++) scan_expr(cg, e->u.build.lanes ? e->u.build.lanes[i] : NULL);
        break;
    case THE_INTRIN:
        for (int i = 0; i < e->u.intrin.nargs; i++) scan_expr(cg, e->u.intrin.args ? e->u.intrin.args[i] : NULL);
        break;
    default: break;
    }
}

void cg_scan_runtime_indices(cg_ctx *cg, const th_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) cg_scan_runtime_indices(cg, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL);
        break;
    case THS_FOR:
        scan_expr(cg, s->u.for_.start);
        scan_expr(cg, s->u.for_.end);
        scan_expr(cg, s->u.for_.cond);
        cg_scan_runtime_indices(cg, s->u.for_.body);
        break;
    case THS_IF:
        scan_expr(cg, s->u.if_.cond);
        cg_scan_runtime_indices(cg, s->u.if_.then);
        cg_scan_runtime_indices(cg, s->u.if_.els);
        break;
    case THS_ASSIGN:
        mark_index(cg, s->u.assign.var, s->u.assign.index);
        scan_expr(cg, s->u.assign.index);
        scan_expr(cg, s->u.assign.value);
        break;
    case THS_STORE: scan_expr(cg, s->u.store.ptr); scan_expr(cg, s->u.store.value); break;
    case THS_ATOMIC_ADD: scan_expr(cg, s->u.atomic.ptr); scan_expr(cg, s->u.atomic.value); break;
    case THS_ASM:
        for (int i = 0; i < s->u.asm_.nargs; i++) scan_expr(cg, s->u.asm_.args ? s->u.asm_.args[i] : NULL);
        break;
    default: break;
    }
}

/* ---------------- reading and assigning ---------------- */
LLVMValueRef cg_var_value(cg_ctx *cg, const cg_slot *s, int elem) {
    LLVMValueRef v = cg->values[s->value + elem];
    return v ? v : LLVMGetUndef(s->ty);
}

void cg_var_assign(cg_ctx *cg, const cg_slot *s, int elem, LLVMValueRef x) { cg->values[s->value + elem] = x; }

/* ---------------- if: the values each path leaves, joined by phis ---------------- */
cg_values cg_values_save(cg_ctx *cg) {
    cg_values c = {xrealloc(NULL, sizeof(LLVMValueRef) * (size_t)cg->nvalues), cg->nvalues};
    if (cg->nvalues) memcpy(c.vals, cg->values, sizeof(LLVMValueRef) * (size_t)cg->nvalues);
    return c;
}

/* Variables first seen after the copy was taken have no value on its path. */
void cg_values_restore(cg_ctx *cg, const cg_values *c) {
    if (c->n) memcpy(cg->values, c->vals, sizeof(LLVMValueRef) * (size_t)c->n);
    for (int i = c->n; i < cg->nvalues; i++) cg->values[i] = NULL;
}

void cg_values_free(cg_values *c) {
    free(c->vals);
    c->vals = NULL;
    c->n = 0;
}

void cg_values_join(cg_ctx *cg, const cg_values *other, LLVMBasicBlockRef other_end, LLVMBasicBlockRef this_end) {
    for (int i = 0; i < cg->nvalues; i++) {
        LLVMValueRef a = i < other->n ? other->vals[i] : NULL, b = cg->values[i];
        if (a == b) continue;
        LLVMTypeRef ty = cg->value_types[i];
        LLVMValueRef phi = LLVMBuildPhi(cg->b, ty, "");
        LLVMValueRef in[2] = {a ? a : LLVMGetUndef(ty), b ? b : LLVMGetUndef(ty)};
        LLVMBasicBlockRef from[2] = {other_end, this_end};
        LLVMAddIncoming(phi, in, from, 2);
        cg->values[i] = phi;
    }
}

/* ---------------- for: a phi per value the loop assigns ---------------- */
static void add_entry(cg_loop_phis *lp, int e) {
    if (lp->n == lp->cap) {
        lp->cap = lp->cap ? lp->cap * 2 : 16;
        lp->entries = xrealloc(lp->entries, sizeof *lp->entries * (size_t)lp->cap);
    }
    lp->entries[lp->n++] = e;
}

static void add_var(cg_ctx *cg, cg_loop_phis *lp, const th_var *v, const th_expr *index) {
    if (!v) return;
    cg_slot *s = cg_var_slot(cg, v);
    if (!s || s->value < 0) return;
    int64_t c = 0;
    if (v->array_len > 0) {
        if (!index || !th_expr_const_int(index, &c) || c < 0 || c >= v->array_len) return; /* reported when translated */
    }
    add_entry(lp, s->value + (int)c);
}

static void collect_assigned(cg_ctx *cg, cg_loop_phis *lp, const th_stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) collect_assigned(cg, lp, s->u.seq.stmts ? s->u.seq.stmts[i] : NULL);
        break;
    case THS_FOR:
        add_var(cg, lp, s->u.for_.var, NULL);
        collect_assigned(cg, lp, s->u.for_.body);
        break;
    case THS_IF:
        collect_assigned(cg, lp, s->u.if_.then);
        collect_assigned(cg, lp, s->u.if_.els);
        break;
    case THS_ASSIGN: add_var(cg, lp, s->u.assign.var, s->u.assign.index); break;
    case THS_ASM:
        for (int i = 0; i < s->u.asm_.nouts; i++) add_var(cg, lp, s->u.asm_.outs ? s->u.asm_.outs[i] : NULL, NULL);
        break;
    default: break;
    }
}

/* At the top of the header (the builder there): a phi for each value that
 * the loop (its variable and body) assigns, entered with its value from
 * the preheader. */
void cg_loop_phis_open(cg_ctx *cg, cg_loop_phis *lp, const th_stmt *loop, LLVMBasicBlockRef preheader) {
    memset(lp, 0, sizeof *lp);
    collect_assigned(cg, lp, loop);
    if (lp->n == 0) return;
    /* one phi per entry, whatever the number of assignments */
    char *seen = xcalloc((size_t)cg->nvalues);
    int n = 0;
    for (int i = 0; i < lp->n; i++)
        if (!seen[lp->entries[i]]) {
            seen[lp->entries[i]] = 1;
            lp->entries[n++] = lp->entries[i];
        }
    free(seen);
    lp->n = n;
    lp->phis = xrealloc(NULL, sizeof *lp->phis * (size_t)n);
    for (int i = 0; i < n; i++) {
        int e = lp->entries[i];
        LLVMTypeRef ty = cg->value_types[e];
        LLVMValueRef in = cg->values[e] ? cg->values[e] : LLVMGetUndef(ty);
        lp->phis[i] = LLVMBuildPhi(cg->b, ty, "");
        LLVMAddIncoming(lp->phis[i], &in, &preheader, 1);
        cg->values[e] = lp->phis[i];
    }
}

/* After the back edge from latch: the phis take the latch's values, and
 * after the loop (entered from the header) each value is its phi. */
void cg_loop_phis_close(cg_ctx *cg, cg_loop_phis *lp, LLVMBasicBlockRef latch) {
    for (int i = 0; i < lp->n; i++) {
        int e = lp->entries[i];
        LLVMValueRef in = cg->values[e] ? cg->values[e] : LLVMGetUndef(cg->value_types[e]);
        LLVMAddIncoming(lp->phis[i], &in, &latch, 1);
        cg->values[e] = lp->phis[i];
    }
    free(lp->entries);
    free(lp->phis);
    memset(lp, 0, sizeof *lp);
}
