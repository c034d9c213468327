/* --emit=thread: a readable dump of Thread IR. One statement per line,
 * expressions in infix with explicit types where they matter (loads,
 * conversions, vectors, pointers). Meant for humans and golden tests, so the
 * format is stable and every node kind prints. */
#include "thread_ir.h"
#include <inttypes.h>

static const char *binop_str(int op) {
    switch ((th_binop)op) {
    case THB_ADD: return "+"; case THB_SUB: return "-"; case THB_MUL: return "*";
    case THB_DIV: return "/"; case THB_REM: return "%"; case THB_UDIV: return "/u";
    case THB_UREM: return "%u"; case THB_FLOORDIV: return "//"; case THB_FLOORMOD: return "%floor";
    case THB_MIN: return "min"; case THB_MAX: return "max"; case THB_AND: return "&";
    case THB_OR: return "|"; case THB_XOR: return "^"; case THB_SHL: return "<<";
    case THB_SHR: return ">>"; case THB_LSHR: return ">>u"; case THB_POW: return "**";
    case THB_OR_DISJOINT: return "|disjoint"; case THB_UMIN: return "minu"; case THB_UMAX: return "maxu";
    }
    return "?bin";
}

static const char *unop_str(th_unop op) {
    switch (op) {
    case THU_NEG: return "neg"; case THU_NOT: return "not"; case THU_ABS: return "abs";
    case THU_SQRT: return "sqrt"; case THU_EXP: return "exp"; case THU_LOG: return "log";
    case THU_EXP2_APPROX: return "ex2.approx"; case THU_LOG2_APPROX: return "lg2.approx";
    case THU_RSQRT_APPROX: return "rsqrt.approx"; case THU_RCP_APPROX: return "rcp.approx";
    case THU_EXP2: return "exp2"; case THU_LOG2: return "log2"; case THU_RSQRT: return "rsqrt";
    case THU_FLOOR: return "floor"; case THU_CEIL: return "ceil";
    case THU_SIN_APPROX: return "sin.approx"; case THU_COS_APPROX: return "cos.approx";
    }
    return "?un";
}

static const char *cmp_str(int op) {
    switch ((th_cmpop)op) {
    case THC_EQ: return "=="; case THC_NE: return "!="; case THC_LT: return "<";
    case THC_LE: return "<="; case THC_GT: return ">"; case THC_GE: return ">=";
    case THC_ULT: return "<u"; case THC_ULE: return "<=u"; case THC_UGT: return ">u"; case THC_UGE: return ">=u";
    }
    return "?cmp";
}

static const char *special_str(th_special s) {
    switch (s) {
    case THS_TID_X: return "%tid.x"; case THS_TID_Y: return "%tid.y"; case THS_TID_Z: return "%tid.z";
    case THS_NTID_X: return "%ntid.x"; case THS_CTAID_X: return "%ctaid.x";
    case THS_CTAID_Y: return "%ctaid.y"; case THS_CTAID_Z: return "%ctaid.z";
    case THS_NCTAID_X: return "%nctaid.x"; case THS_NCTAID_Y: return "%nctaid.y";
    case THS_NCTAID_Z: return "%nctaid.z"; case THS_LANEID: return "%laneid";
    case THS_WARPID: return "%warp";
    }
    return "%?";
}

static const char *intrin_str(th_intrin id) {
    switch (id) {
    case THI_SHFL_BFLY: return "shfl.bfly"; case THI_SHFL_IDX: return "shfl.idx"; case THI_FMA: return "fma";
    case THI_E4M3_TO_F32: return "cvt.f32.e4m3"; case THI_F32_TO_E4M3: return "cvt.e4m3.f32";
    case THI_E5M2_TO_F32: return "cvt.f32.e5m2"; case THI_F32_TO_E5M2: return "cvt.e5m2.f32";
    }
    return "?intrin";
}

static void put_type(tlc_strbuf *sb, th_type t) {
    char buf[32];
    tlc_sb_puts(sb, th_type_name(t, buf));
}

static void put_var(tlc_strbuf *sb, const th_var *v) {
    if (!v) { tlc_sb_puts(sb, "<null var>"); return; }
    if (v->id >= 0) tlc_sb_printf(sb, "%s.%d", v->name, v->id);
    else tlc_sb_puts(sb, v->name);
}

/* Quoted string with C escapes, for asm text and comments that span lines. */
static void put_quoted(tlc_strbuf *sb, const char *s) {
    tlc_sb_putc(sb, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n') tlc_sb_puts(sb, "\\n");
        else if (c == '\t') tlc_sb_puts(sb, "\\t");
        else if (c == '"' || c == '\\') { tlc_sb_putc(sb, '\\'); tlc_sb_putc(sb, (char)c); }
        else if (c < 32 || c == 127) tlc_sb_printf(sb, "\\x%02x", c);
        else tlc_sb_putc(sb, (char)c);
    }
    tlc_sb_putc(sb, '"');
}

void th_print_expr(tlc_strbuf *sb, const th_expr *e) {
    if (!e) { tlc_sb_puts(sb, "<null>"); return; }
    switch (e->kind) {
    case THE_INT:
        if (e->type.base == TH_I32) tlc_sb_printf(sb, "%" PRId64, e->u.ival);
        else { tlc_sb_printf(sb, "%" PRId64 ":", e->u.ival); put_type(sb, e->type); }
        return;
    case THE_FLOAT:
        tlc_sb_printf(sb, "%.9g", e->u.fval);
        if (e->type.base != TH_F32) { tlc_sb_putc(sb, ':'); put_type(sb, e->type); }
        return;
    case THE_VAR: put_var(sb, e->u.var.var); return;
    case THE_ARRAY_READ:
        put_var(sb, e->u.var.var);
        tlc_sb_putc(sb, '[');
        th_print_expr(sb, e->u.var.index);
        tlc_sb_putc(sb, ']');
        return;
    case THE_PARAM: tlc_sb_printf(sb, "param%d", e->u.param); return;
    case THE_SPECIAL: tlc_sb_puts(sb, special_str(e->u.special)); return;
    case THE_SHARED_PTR:
        tlc_sb_puts(sb, "smem+");
        th_print_expr(sb, e->u.offset);
        return;
    case THE_PTR_ADD:
        tlc_sb_puts(sb, "(");
        th_print_expr(sb, e->u.ptr_add.ptr);
        tlc_sb_puts(sb, " +");
        put_type(sb, e->elem);
        tlc_sb_puts(sb, " ");
        th_print_expr(sb, e->u.ptr_add.index);
        tlc_sb_puts(sb, ")");
        return;
    case THE_LOAD:
        tlc_sb_puts(sb, "load.");
        put_type(sb, e->type);
        tlc_sb_printf(sb, ".a%d[", e->u.load.align);
        th_print_expr(sb, e->u.load.ptr);
        tlc_sb_putc(sb, ']');
        return;
    case THE_BIN:
        if (e->u.bin.op == THB_MIN || e->u.bin.op == THB_MAX || e->u.bin.op == THB_UMIN || e->u.bin.op == THB_UMAX) {
            tlc_sb_printf(sb, "%s(", binop_str(e->u.bin.op));
            th_print_expr(sb, e->u.bin.a);
            tlc_sb_puts(sb, ", ");
            th_print_expr(sb, e->u.bin.b);
            tlc_sb_putc(sb, ')');
            return;
        }
        /* fallthrough */
    case THE_CMP:
        tlc_sb_putc(sb, '(');
        th_print_expr(sb, e->u.bin.a);
        tlc_sb_printf(sb, " %s ", e->kind == THE_CMP ? cmp_str(e->u.bin.op) : binop_str(e->u.bin.op));
        th_print_expr(sb, e->u.bin.b);
        tlc_sb_putc(sb, ')');
        return;
    case THE_UN:
        tlc_sb_printf(sb, "%s(", unop_str(e->u.un.op));
        th_print_expr(sb, e->u.un.a);
        tlc_sb_putc(sb, ')');
        return;
    case THE_SELECT:
        tlc_sb_puts(sb, "select(");
        th_print_expr(sb, e->u.sel.cond);
        tlc_sb_puts(sb, ", ");
        th_print_expr(sb, e->u.sel.a);
        tlc_sb_puts(sb, ", ");
        th_print_expr(sb, e->u.sel.b);
        tlc_sb_putc(sb, ')');
        return;
    case THE_CONVERT:
    case THE_BITCAST:
        tlc_sb_puts(sb, e->kind == THE_BITCAST ? "bitcast." : e->u.conv.uns ? "cvtu." : "cvt.");
        put_type(sb, e->type);
        tlc_sb_putc(sb, '(');
        th_print_expr(sb, e->u.conv.a);
        tlc_sb_putc(sb, ')');
        return;
    case THE_EXTRACT:
        th_print_expr(sb, e->u.extract.vec);
        tlc_sb_printf(sb, ".lane%d", e->u.extract.lane);
        return;
    case THE_BUILD:
        put_type(sb, e->type);
        tlc_sb_putc(sb, '{');
        for (int i = 0; i < e->u.build.n; i++) {
            if (i) tlc_sb_puts(sb, ", ");
            th_print_expr(sb, e->u.build.lanes[i]);
        }
        tlc_sb_putc(sb, '}');
        return;
    case THE_INTRIN:
        tlc_sb_printf(sb, "%s.", intrin_str(e->u.intrin.id));
        put_type(sb, e->type);
        tlc_sb_putc(sb, '(');
        for (int i = 0; i < e->u.intrin.nargs; i++) {
            if (i) tlc_sb_puts(sb, ", ");
            th_print_expr(sb, e->u.intrin.args[i]);
        }
        tlc_sb_putc(sb, ')');
        return;
    }
    tlc_sb_printf(sb, "<expr kind %d>", (int)e->kind);
}

void th_print_stmt(tlc_strbuf *sb, const th_stmt *s, int indent) {
    if (!s) return;
    if (s->kind == THS_SEQ) {
        for (int i = 0; i < s->u.seq.n; i++) th_print_stmt(sb, s->u.seq.stmts[i], indent);
        return;
    }
    tlc_sb_indent(sb, indent);
    switch (s->kind) {
    case THS_SEQ: break;
    case THS_FOR:
        tlc_sb_puts(sb, "for ");
        put_var(sb, s->u.for_.var);
        tlc_sb_puts(sb, " in [");
        th_print_expr(sb, s->u.for_.start);
        tlc_sb_puts(sb, ", ");
        th_print_expr(sb, s->u.for_.end);
        tlc_sb_printf(sb, ") step %" PRId64 "%s", s->u.for_.step, s->u.for_.unroll ? " unroll" : "");
        if (s->u.for_.cond) {
            tlc_sb_puts(sb, " while ");
            th_print_expr(sb, s->u.for_.cond);
        }
        tlc_sb_puts(sb, " {\n");
        th_print_stmt(sb, s->u.for_.body, indent + 1);
        tlc_sb_indent(sb, indent);
        tlc_sb_puts(sb, "}\n");
        return;
    case THS_IF:
        tlc_sb_puts(sb, "if ");
        th_print_expr(sb, s->u.if_.cond);
        tlc_sb_puts(sb, " {\n");
        th_print_stmt(sb, s->u.if_.then, indent + 1);
        tlc_sb_indent(sb, indent);
        if (s->u.if_.els) {
            tlc_sb_puts(sb, "} else {\n");
            th_print_stmt(sb, s->u.if_.els, indent + 1);
            tlc_sb_indent(sb, indent);
        }
        tlc_sb_puts(sb, "}\n");
        return;
    case THS_ASSIGN:
        put_var(sb, s->u.assign.var);
        if (s->u.assign.index) {
            tlc_sb_putc(sb, '[');
            th_print_expr(sb, s->u.assign.index);
            tlc_sb_putc(sb, ']');
        }
        tlc_sb_puts(sb, " = ");
        th_print_expr(sb, s->u.assign.value);
        break;
    case THS_STORE:
        tlc_sb_printf(sb, "store.a%d[", s->u.store.align);
        th_print_expr(sb, s->u.store.ptr);
        tlc_sb_puts(sb, "] = ");
        th_print_expr(sb, s->u.store.value);
        break;
    case THS_BARRIER:
        tlc_sb_printf(sb, "bar.sync %d", s->u.barrier.id);
        if (s->u.barrier.nthreads) tlc_sb_printf(sb, ", %d", s->u.barrier.nthreads);
        break;
    case THS_ATOMIC_ADD:
        tlc_sb_puts(sb, "atomic_add[");
        th_print_expr(sb, s->u.atomic.ptr);
        tlc_sb_puts(sb, "] += ");
        th_print_expr(sb, s->u.atomic.value);
        break;
    case THS_ASM:
        tlc_sb_puts(sb, s->u.asm_.has_side_effects ? "asm volatile " : "asm ");
        put_quoted(sb, s->u.asm_.text);
        tlc_sb_puts(sb, " ");
        put_quoted(sb, s->u.asm_.constraints);
        tlc_sb_puts(sb, " outs(");
        for (int i = 0; i < s->u.asm_.nouts; i++) {
            if (i) tlc_sb_puts(sb, ", ");
            put_var(sb, s->u.asm_.outs[i]);
        }
        tlc_sb_puts(sb, ") ins(");
        for (int i = 0; i < s->u.asm_.nargs; i++) {
            if (i) tlc_sb_puts(sb, ", ");
            th_print_expr(sb, s->u.asm_.args[i]);
        }
        tlc_sb_putc(sb, ')');
        break;
    case THS_COMMENT:
        tlc_sb_puts(sb, "// ");
        for (const char *c = s->u.comment; c && *c; c++) {
            tlc_sb_putc(sb, *c);
            if (*c == '\n' && c[1]) { tlc_sb_indent(sb, indent); tlc_sb_puts(sb, "// "); }
        }
        break;
    default:
        tlc_sb_printf(sb, "<stmt kind %d>", (int)s->kind);
        break;
    }
    tlc_sb_putc(sb, '\n');
}

static void print_kernel(tlc_strbuf *sb, const th_kernel *k) {
    tlc_sb_printf(sb, "kernel %s(", k->name ? k->name : "<anon>");
    for (int i = 0; i < k->nparams; i++) {
        const th_param *p = &k->params[i];
        if (i) tlc_sb_puts(sb, ", ");
        tlc_sb_printf(sb, "param%d %s: ", i, p->name ? p->name : "");
        if (p->byte_size_override > 0) tlc_sb_printf(sb, "bytes[%d]", p->byte_size_override);
        else put_type(sb, p->type);
        if (k->param_attrs && k->param_attrs[i].readonly) tlc_sb_puts(sb, " readonly");
        if (k->param_attrs && k->param_attrs[i].align > 0) tlc_sb_printf(sb, " align %d", k->param_attrs[i].align);
    }
    tlc_sb_printf(sb, ") threads=%d", k->threads);
    if (k->min_blocks_per_sm > 0) tlc_sb_printf(sb, " min_blocks=%d", k->min_blocks_per_sm);
    if (k->fast_math) tlc_sb_puts(sb, " fast_math");
    if (k->pdl_wait) tlc_sb_puts(sb, " pdl_wait");
    tlc_sb_printf(sb, " dyn_shared=%" PRId64 " {\n", k->dyn_shared_bytes);
    for (int i = 0; i < k->nvars; i++) {
        const th_var *v = k->vars[i];
        if (!v) continue;
        tlc_sb_indent(sb, 1);
        tlc_sb_puts(sb, "var ");
        put_var(sb, v);
        tlc_sb_puts(sb, ": ");
        put_type(sb, v->type);
        if (v->array_len > 0) tlc_sb_printf(sb, "[%d]", v->array_len);
        tlc_sb_putc(sb, '\n');
    }
    th_print_stmt(sb, k->body, 1);
    tlc_sb_puts(sb, "}\n");
}

void th_print_module(tlc_strbuf *sb, const th_module *m) {
    tlc_sb_printf(sb, "// thread IR for %s\n", tlc_arch_name(m->arch));
    if (m->metadata && *m->metadata) {
        const char *p = m->metadata;
        while (*p) {
            tlc_sb_puts(sb, "// ");
            while (*p && *p != '\n') tlc_sb_putc(sb, *p++);
            tlc_sb_putc(sb, '\n');
            if (*p) p++;
        }
    }
    for (int i = 0; i < m->nkernels; i++) {
        if (i) tlc_sb_putc(sb, '\n');
        print_kernel(sb, m->kernels[i]);
    }
}
