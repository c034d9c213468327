/* Thread IR statements -> LLVM basic blocks. Structured control flow only:
 * a for loop is header / body / latch / exit blocks, the values it assigns
 * (its induction variable among them) phis in the header (codegen_vars.c);
 * `unroll` puts llvm.loop.unroll.full on the back edge so loops over
 * register arrays are flattened and SROA can keep arrays indexed by their
 * counter in registers (no local memory). */
#include "codegen_internal.h"
#include <llvm-c/DebugInfo.h>
#include <string.h>

static void set_loop_unroll_full(cg_ctx *cg, LLVMValueRef backedge) {
    /* !llvm.loop !0, !0 = distinct !{!0, !1}, !1 = !{!"llvm.loop.unroll.full"} */
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(cg->ctx, NULL, 0);
    static const char full[] = "llvm.loop.unroll.full";
    LLVMMetadataRef str = LLVMMDStringInContext2(cg->ctx, full, sizeof full - 1);
    LLVMMetadataRef hint = LLVMMDNodeInContext2(cg->ctx, &str, 1);
    LLVMMetadataRef ops[2] = {tmp, hint};
    LLVMMetadataRef loop = LLVMMDNodeInContext2(cg->ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(tmp, loop); /* self reference; frees tmp */
    unsigned kind = LLVMGetMDKindIDInContext(cg->ctx, "llvm.loop", 9);
    LLVMSetMetadata(backedge, kind, LLVMMetadataAsValue(cg->ctx, loop));
}

static LLVMBasicBlockRef new_block(cg_ctx *cg, const char *name) {
    return LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, name);
}

static void for_stmt(cg_ctx *cg, const th_stmt *s) {
    const th_var *v = s->u.for_.var;
    char b1[32];
    if (!v || v->array_len > 0 || !cg_is_int(v->type) || v->type.base == TH_I1 || v->type.lanes > 1) {
        cg_error(cg, "loop variable must be a scalar integer slot");
        return;
    }
    if (!s->u.for_.start || !s->u.for_.end || !th_type_eq(s->u.for_.start->type, v->type) ||
        !th_type_eq(s->u.for_.end->type, v->type)) {
        cg_error(cg, "loop bounds of '%s' must have its type %s", v->name, th_type_name(v->type, b1));
        return;
    }
    int64_t step = s->u.for_.step;
    if (step == 0) { cg_error(cg, "loop over '%s' with step 0", v->name); return; }
    cg_slot *slot = cg_var_slot(cg, v);
    if (!slot) return;
    LLVMBuilderRef B = cg->b;
    LLVMValueRef start = cg_expr(cg, s->u.for_.start);
    LLVMValueRef end = cg_expr(cg, s->u.for_.end); /* evaluated once, like range() */
    cg_var_assign(cg, slot, 0, start);
    LLVMBasicBlockRef preheader = LLVMGetInsertBlock(B);
    LLVMBasicBlockRef header = new_block(cg, "for.head"), body = new_block(cg, "for.body");
    LLVMBasicBlockRef latch = new_block(cg, "for.latch"), exit = new_block(cg, "for.end");
    LLVMBuildBr(B, header);

    LLVMPositionBuilderAtEnd(B, header);
    cg_loop_phis lp;
    cg_loop_phis_open(cg, &lp, s, preheader);
    LLVMValueRef i = cg_var_value(cg, slot, 0);
    LLVMValueRef more = LLVMBuildICmp(B, step > 0 ? LLVMIntSLT : LLVMIntSGT, i, end, "");
    if (s->u.for_.cond) more = LLVMBuildAnd(B, more, cg_cond(cg, s->u.for_.cond), "");
    LLVMBuildCondBr(B, more, body, exit);

    LLVMPositionBuilderAtEnd(B, body);
    if (s->u.for_.body) cg_stmt(cg, s->u.for_.body);
    LLVMBuildBr(B, latch);

    LLVMPositionBuilderAtEnd(B, latch);
    LLVMValueRef cur = cg_var_value(cg, slot, 0);
    /* nsw: the bound check runs before every increment, so it never wraps */
    LLVMValueRef next = LLVMBuildNSWAdd(B, cur, LLVMConstInt(slot->ty, (unsigned long long)step, 1), "");
    cg_var_assign(cg, slot, 0, next);
    LLVMValueRef back = LLVMBuildBr(B, header);
    if (s->u.for_.unroll && !s->u.for_.cond) set_loop_unroll_full(cg, back);
    cg_loop_phis_close(cg, &lp, latch);

    LLVMPositionBuilderAtEnd(B, exit);
}

static void if_stmt(cg_ctx *cg, const th_stmt *s) {
    if (!s->u.if_.cond) { cg_error(cg, "if without a condition"); return; }
    LLVMValueRef c = cg_cond(cg, s->u.if_.cond);
    LLVMBuilderRef B = cg->b;
    LLVMBasicBlockRef then = new_block(cg, "if.then"), join = new_block(cg, "if.end");
    LLVMBasicBlockRef els = s->u.if_.els ? new_block(cg, "if.else") : join;
    LLVMBasicBlockRef else_end = LLVMGetInsertBlock(B);
    LLVMBuildCondBr(B, c, then, els);
    cg_values before = cg_values_save(cg);
    LLVMPositionBuilderAtEnd(B, then);
    if (s->u.if_.then) cg_stmt(cg, s->u.if_.then);
    LLVMBasicBlockRef then_end = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, join);
    cg_values after_then = cg_values_save(cg);
    cg_values_restore(cg, &before);
    cg_values_free(&before);
    if (s->u.if_.els) {
        LLVMPositionBuilderAtEnd(B, els);
        cg_stmt(cg, s->u.if_.els);
        else_end = LLVMGetInsertBlock(B);
        LLVMBuildBr(B, join);
    }
    LLVMPositionBuilderAtEnd(B, join);
    cg_values_join(cg, &after_then, then_end, else_end);
    cg_values_free(&after_then);
}

static void assign_stmt(cg_ctx *cg, const th_stmt *s) {
    const th_var *v = s->u.assign.var;
    const th_expr *val = s->u.assign.value;
    char b1[32], b2[32];
    if (!v || !val) { cg_error(cg, "assignment without a variable or value"); return; }
    if (!th_type_eq(v->type, val->type)) {
        cg_error(cg, "assignment of %s to '%s' of type %s", th_type_name(val->type, b1), v->name,
                 th_type_name(v->type, b2));
        return;
    }
    LLVMValueRef x = cg_expr(cg, val);
    if (s->u.assign.index) {
        if (v->array_len <= 0) { cg_error(cg, "'%s' is not a register array", v->name); return; }
        int64_t c;
        if (th_expr_const_int(s->u.assign.index, &c) && (c < 0 || c >= v->array_len)) {
            cg_error(cg, "index %lld out of range for '%s[%d]'", (long long)c, v->name, v->array_len);
            return;
        }
        const th_expr *ix = s->u.assign.index;
        if (!cg_is_int(ix->type) || ix->type.lanes > 1 || ix->type.base == TH_I1) {
            cg_error(cg, "register array index has type %s", th_type_name(ix->type, b1));
            return;
        }
        cg_slot *slot = cg_var_slot(cg, v);
        if (!slot) return;
        if (!slot->alloca) {
            if (!th_expr_const_int(s->u.assign.index, &c)) { cg_error(cg, "'%s' indexed at run time has no alloca", v->name); return; }
            cg_var_assign(cg, slot, (int)c, x);
            return;
        }
        LLVMValueRef gi[2] = {LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0), cg_expr(cg, ix)};
        LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, slot->ty, slot->alloca, gi, 2, "");
        LLVMBuildStore(cg->b, x, p);
        return;
    }
    if (v->array_len > 0) { cg_error(cg, "register array '%s' assigned without an index", v->name); return; }
    cg_slot *slot = cg_var_slot(cg, v);
    if (slot) cg_var_assign(cg, slot, 0, x);
}

static void store_stmt(cg_ctx *cg, const th_stmt *s) {
    const th_expr *p = s->u.store.ptr, *val = s->u.store.value;
    if (!p || !val || p->type.base != TH_PTR) { cg_error(cg, "store needs a pointer and a value"); return; }
    int al = s->u.store.align;
    if (al < 0 || (al & (al - 1)) != 0) { cg_error(cg, "alignment %d is not a power of two", al); return; }
    if (val->type.base == TH_VOID) { cg_error(cg, "store of a void value"); return; }
    LLVMValueRef ptr = cg_expr(cg, p);
    LLVMValueRef x = cg_expr(cg, val);
    LLVMValueRef st = LLVMBuildStore(cg->b, x, ptr);
    if (al == 0) al = th_type_bytes(th_scalar(val->type.base));
    LLVMSetAlignment(st, (unsigned)(al > 0 ? al : 1));
}

static void atomic_stmt(cg_ctx *cg, const th_stmt *s) {
    const th_expr *p = s->u.atomic.ptr, *val = s->u.atomic.value;
    char b1[32];
    if (!p || !val || p->type.base != TH_PTR) { cg_error(cg, "atomic add needs a pointer and a value"); return; }
    th_type t = val->type;
    bool fp = cg_is_float(t);
    bool ok = (t.lanes <= 1 && (t.base == TH_I32 || t.base == TH_I64 || t.base == TH_F32 || t.base == TH_F64 ||
                                t.base == TH_F16 || t.base == TH_BF16)) ||
              (t.lanes == 2 && (t.base == TH_F16 || t.base == TH_BF16));
    if (!ok) { cg_error(cg, "atomic add on %s", th_type_name(t, b1)); return; }
    LLVMValueRef ptr = cg_expr(cg, p), x = cg_expr(cg, val);
    /* relaxed, device scope: CUDA's atomicAdd */
    unsigned scope = LLVMGetSyncScopeID(cg->ctx, "device", 6);
    LLVMValueRef r = LLVMBuildAtomicRMWSyncScope(cg->b, fp ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd, ptr, x,
                                                 LLVMAtomicOrderingMonotonic, scope);
    LLVMSetAlignment(r, (unsigned)th_type_bytes(t));
}

/* Counts the operand constraints of an inline asm constraint string
 * ("=r,=f,r,l,~{memory}"): outputs start with '=', clobbers with '~'. */
static bool count_constraints(const char *c, int *outs, int *ins) {
    *outs = *ins = 0;
    if (!c || !*c) return true;
    const char *p = c;
    while (*p) {
        const char *q = p;
        while (*q && *q != ',') q++;
        if (q == p) return false;
        if (*p == '=') ++*outs;
        else if (*p != '~') ++*ins;
        p = *q ? q + 1 : q;
    }
    return true;
}

static void asm_stmt(cg_ctx *cg, const th_stmt *s) {
    int nargs = s->u.asm_.nargs, nouts = s->u.asm_.nouts;
    int co, ci;
    if (!count_constraints(s->u.asm_.constraints, &co, &ci) || co != nouts || ci != nargs) {
        cg_error(cg, "inline asm constraints \"%s\" do not match %d outputs and %d inputs",
                 s->u.asm_.constraints ? s->u.asm_.constraints : "", nouts, nargs);
        return;
    }
    /* wgmma m64n256k16 has 128 accumulator outputs and 130 inputs */
    enum { MAX_ASM_OPERANDS = 320 };
    if (nargs > MAX_ASM_OPERANDS || nouts > MAX_ASM_OPERANDS) { cg_error(cg, "inline asm with too many operands"); return; }
    LLVMValueRef args[MAX_ASM_OPERANDS];
    LLVMTypeRef atys[MAX_ASM_OPERANDS], otys[MAX_ASM_OPERANDS];
    for (int i = 0; i < nargs; i++) {
        if (!s->u.asm_.args[i]) { cg_error(cg, "inline asm with a missing operand"); return; }
        args[i] = cg_expr(cg, s->u.asm_.args[i]);
        atys[i] = LLVMTypeOf(args[i]);
    }
    for (int i = 0; i < nouts; i++) {
        const th_var *v = s->u.asm_.outs[i];
        if (!v || v->array_len > 0) { cg_error(cg, "inline asm output must be a scalar slot"); return; }
        otys[i] = cg_type(cg, v->type);
    }
    LLVMTypeRef rty = nouts == 0 ? LLVMVoidTypeInContext(cg->ctx)
                    : nouts == 1 ? otys[0] : LLVMStructTypeInContext(cg->ctx, otys, (unsigned)nouts, 0);
    LLVMTypeRef fty = LLVMFunctionType(rty, atys, (unsigned)nargs, 0);
    const char *text = s->u.asm_.text ? s->u.asm_.text : "";
    const char *cons = s->u.asm_.constraints ? s->u.asm_.constraints : "";
    LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons),
                                       s->u.asm_.has_side_effects, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef call = LLVMBuildCall2(cg->b, fty, fn, args, (unsigned)nargs, "");
    for (int i = 0; i < nouts; i++) {
        cg_slot *slot = cg_var_slot(cg, s->u.asm_.outs[i]);
        if (!slot) return;
        LLVMValueRef x = nouts == 1 ? call : LLVMBuildExtractValue(cg->b, call, (unsigned)i, "");
        cg_var_assign(cg, slot, 0, x);
    }
}

void cg_stmt(cg_ctx *cg, const th_stmt *s) {
    if (!s || tlc_diag_too_many(cg->diag)) return;
    tlc_loc saved = cg->loc;
    if (s->loc.line > 0) cg->loc = s->loc;
    switch (s->kind) {
    case THS_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) cg_stmt(cg, s->u.seq.stmts[i]);
        break;
    case THS_FOR: for_stmt(cg, s); break;
    case THS_IF: if_stmt(cg, s); break;
    case THS_ASSIGN: assign_stmt(cg, s); break;
    case THS_STORE: store_stmt(cg, s); break;
    case THS_BARRIER: cg_barrier(cg, s->u.barrier.id, s->u.barrier.nthreads); break;
    case THS_ATOMIC_ADD: atomic_stmt(cg, s); break;
    case THS_ASM: asm_stmt(cg, s); break;
    case THS_COMMENT: break;
    default: cg_error(cg, "unknown statement kind %d", (int)s->kind); break;
    }
    cg->loc = saved;
}
