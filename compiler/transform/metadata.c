/* The launch metadata of a lowered module (include/tlc/metadata.h): the
 * compiler fills the runtime's structs and the runtime's formatter, which
 * validates them first, writes the text. So there is one writer, and what
 * the compiler emits the runtime reads back to the same structs. */
#include <stdlib.h>
#include <string.h>
#include "lower_internal.h"
#include "tlc/metadata.h"

_Static_assert((int)TLRT_DTYPE_COUNT == (int)TIR_DTYPE_COUNT, "tlrt_dtype follows tir_dtype");

static int scalar_param_index(const tir_kernel *k, const tir_var *v) {
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].kind == TIR_PARAM_SCALAR && k->params[i].var == v) return i;
    return -1;
}

static int sym_index(const tir_kernel *k, const tir_var *v) {
    for (int i = 0; i < k->nsym; i++)
        if (k->sym_dims[i] == v) return i;
    return -1;
}

/* A grid expression in the runtime's postfix form: constants, symbolic
 * dims, scalar parameters and + - * // % min max. */
static bool grid_expr(const tir_kernel *k, const tir_expr *e, tlrt_expr *out);

/* A map over view g: its dims, evaluated at launch (`view` line). */
static bool view_meta(const tir_kernel *k, const tir_buffer *g, tlrt_kernel_meta *out, tlrt_tmap_meta *m) {
    if (out->nmap_exprs + g->rank > TLRT_MAX_MAP_EXPRS) return false;
    m->view = out->nmap_exprs + 1;
    for (int d = 0; d < g->rank; d++)
        if (!grid_expr(k, g->shape[d], &out->map_exprs[out->nmap_exprs++])) return false;
    return true;
}

/* An im2col map's traversal strides and its `im2col` line: the corners
 * -pad and pad - dilation * (kernel - 1), and the largest offset,
 * dilation * (kernel - 1) (the filter window's reach). The stride is a
 * constant (pipeline_plan.c). */
static bool im2col_meta(const tir_kernel *k, const tir_im2col *d, tlrt_kernel_meta *out, tlrt_tmap_meta *m) {
    int64_t stride = 1;
    tir_expr_const_int(d->stride, &stride);
    m->im2col = true;
    for (int s = 1; s < m->rank - 1; s++) m->elem_strides[s] = (uint32_t)stride;
    if (out->nmap_exprs + 3 > TLRT_MAX_MAP_EXPRS) return false;
    m->im2col_exprs = out->nmap_exprs + 1;
    tlrt_expr *lo = &out->map_exprs[out->nmap_exprs++], *hi = &out->map_exprs[out->nmap_exprs++];
    tlrt_expr *reach = &out->map_exprs[out->nmap_exprs++];
    bool ok = grid_expr(k, d->dilation, reach) && grid_expr(k, d->kernel, reach) &&
              tlrt_expr_push(reach, TLRT_EX_INT, 1) && tlrt_expr_push(reach, TLRT_EX_SUB, 0) &&
              tlrt_expr_push(reach, TLRT_EX_MUL, 0);
    ok = ok && tlrt_expr_push(lo, TLRT_EX_INT, 0) && grid_expr(k, d->pad, lo) && tlrt_expr_push(lo, TLRT_EX_SUB, 0);
    ok = ok && grid_expr(k, d->pad, hi);
    for (int i = 0; ok && i < reach->n; i++) ok = tlrt_expr_push(hi, reach->nodes[i].op, reach->nodes[i].value);
    return ok && tlrt_expr_push(hi, TLRT_EX_SUB, 0);
}

static bool grid_expr(const tir_kernel *k, const tir_expr *e, tlrt_expr *out) {
    switch (e->kind) {
    case TE_INT: return tlrt_expr_push(out, TLRT_EX_INT, e->u.ival);
    case TE_VAR: {
        int i;
        if (e->u.var->kind == TV_SYM_DIM && (i = sym_index(k, e->u.var)) >= 0)
            return tlrt_expr_push(out, TLRT_EX_SYM, i);
        if (e->u.var->kind == TV_SCALAR_PARAM && !tir_dtype_is_float(e->u.var->dtype) &&
            (i = scalar_param_index(k, e->u.var)) >= 0)
            return tlrt_expr_push(out, TLRT_EX_SCALAR, i);
        return false;
    }
    case TE_CAST: return !e->u.cast.bits && grid_expr(k, e->u.cast.a, out);
    case TE_BINARY: {
        tlrt_expr_op op;
        switch (e->u.bin.op) {
        case TB_ADD: op = TLRT_EX_ADD; break;
        case TB_SUB: op = TLRT_EX_SUB; break;
        case TB_MUL: op = TLRT_EX_MUL; break;
        case TB_FLOORDIV: op = TLRT_EX_FLOORDIV; break;
        case TB_FLOORMOD: op = TLRT_EX_MOD; break;
        case TB_MIN: op = TLRT_EX_MIN; break;
        case TB_MAX: op = TLRT_EX_MAX; break;
        case TB_LT: op = TLRT_EX_LT; break;
        case TB_LE: op = TLRT_EX_LE; break;
        case TB_GT: op = TLRT_EX_GT; break;
        case TB_GE: op = TLRT_EX_GE; break;
        case TB_EQ: op = TLRT_EX_EQ; break;
        case TB_NE: op = TLRT_EX_NE; break;
        case TB_AND: op = TLRT_EX_AND; break;
        case TB_OR: op = TLRT_EX_OR; break;
        default: return false;
        }
        return grid_expr(k, e->u.bin.a, out) && grid_expr(k, e->u.bin.b, out) && tlrt_expr_push(out, op, 0);
    }
    default: return false;
    }
}

static tlrt_swizzle swizzle_of(tlc_swizzle s) {
    switch (s) {
    case TLC_SWIZZLE_32B: return TLRT_SWIZZLE_32B;
    case TLC_SWIZZLE_64B: return TLRT_SWIZZLE_64B;
    case TLC_SWIZZLE_128B: return TLRT_SWIZZLE_128B;
    default: return TLRT_SWIZZLE_NONE;
    }
}

/* A buffer's dims for tlrt_kernel_meta_add_tensor: constants, or -(sym + 1). */
static void meta_dims(const tir_kernel *k, const tir_buffer *b, int64_t dims[TLRT_MAX_RANK]) {
    for (int d = 0; d < b->rank && d < TLRT_MAX_RANK; d++) {
        const tir_expr *e = b->shape[d];
        dims[d] = e->kind == TE_VAR ? -(int64_t)sym_index(k, e->u.var) - 1 : tir_buffer_dim(b, d);
    }
}

/* The sym, tensor and scalar lines of a kernel or a function's signature;
 * false when the runtime's limits do not hold them. */
static bool meta_params(const tir_kernel *k, tlrt_kernel_meta *out) {
    bool ok = true;
    for (int i = 0; i < k->nsym; i++) ok &= tlrt_kernel_meta_add_sym(out, k->sym_dims[i]->name) >= 0;
    for (int i = 0; i < k->nparams; i++) {
        const tir_param *p = &k->params[i];
        if (p->kind == TIR_PARAM_SCALAR) {
            ok &= tlrt_kernel_meta_add_scalar(out, p->name, (tlrt_dtype)p->var->dtype) >= 0;
            continue;
        }
        int64_t dims[TLRT_MAX_RANK];
        meta_dims(k, p->buf, dims);
        ok &= tlrt_kernel_meta_add_tensor(out, p->name, (tlrt_dtype)p->buf->dtype, p->buf->rank, dims, 16) >= 0;
    }
    return ok;
}

/* The launch checks the runtime can evaluate; a warning for the others. */
static void meta_checks(const tir_kernel *k, tlrt_kernel_meta *out, tlc_diag *diag) {
    for (int i = 0; i < k->nchecks; i++) {
        const struct tir_launch_check *c = &k->checks[i];
        tlrt_expr e = {0};
        if (out->nchecks == TLRT_MAX_CHECKS || !grid_expr(k, c->cond, &e)) {
            tlc_warning(diag, c->loc, "%s: tlc does not check this assert",
                        out->nchecks == TLRT_MAX_CHECKS
                            ? "more than 8 asserts to check at launch"
                            : "the runtime cannot evaluate its condition (integer sizes and scalars, + - * // % min "
                              "max, comparisons, and, or)");
            continue;
        }
        out->checks[out->nchecks].line = c->loc.line;
        out->checks[out->nchecks].col = c->loc.col;
        out->checks[out->nchecks].cond = e;
        out->nchecks++;
    }
}

bool tlc_kernel_metadata(tlc_lower_ctx *lc, tlrt_kernel_meta *out) {
    const tir_kernel *k = lc->k;
    tlrt_kernel_meta_init(out, k->name);
    bool ok = meta_params(k, out);
    for (int i = 0; ok && i < k->nparams; i++) {
        const tir_param *p = &k->params[i];
        if (p->kind != TIR_PARAM_TENSOR) continue;
        /* reached only through tensor maps: the runtime may take any
         * strides a map can describe */
        bool mapped = false, viewed = false; /* a view's map assumes the tensor contiguous */
        for (int t = 0; t < lc->ntmaps; t++) {
            mapped |= lc->tmaps[t].tensor == p->buf;
            viewed |= lc->tmaps[t].tensor->view_of == p->buf;
        }
        if (mapped && !viewed && !lc->addressed[p->buf->id]) out->params[i].strided = true;
    }
    for (int i = 0; i < lc->ntmaps && ok; i++) {
        const tlc_tmap_use *t = &lc->tmaps[i];
        if (out->ntmaps >= TLRT_MAX_TMAPS || t->rank > TLRT_MAX_TMAP_RANK) {
            ok = false;
            break;
        }
        tlrt_tmap_meta *m = &out->tmaps[out->ntmaps++];
        m->param = tir_buffer_storage(t->tensor)->param_index;
        m->rank = t->rank;
        for (int d = 0; d < t->rank; d++) {
            m->box[d] = (uint32_t)t->box[d];
            m->elem_strides[d] = 1;
        }
        m->swizzle = swizzle_of(t->swizzle);
        m->l2 = TLRT_L2_128B;
        m->oob = TLRT_OOB_ZERO;
        if ((t->tensor->view_of && !view_meta(k, t->tensor, out, m)) || (t->im2col && !im2col_meta(k, t->im2col, out, m))) {
            tlc_error(lc->diag, t->copy->loc, "internal error: a tensor map's sizes are not expressions the runtime can "
                      "evaluate");
            return false;
        }
    }
    /* what the kernel assumes about syms; the runtime checks it at launch */
    for (int i = 0; lc->sym_multiple && i < k->nsym && i < TLRT_MAX_SYMS; i++) out->sym_multiple[i] = lc->sym_multiple[i];
    for (int i = 0; i < k->grid_rank; i++) {
        out->grid[i].n = 0;
        if (!grid_expr(k, k->grid[i], &out->grid[i])) {
            tlc_error(lc->diag, k->loc,
                      "grid dimension %d of kernel '%s' uses something the runtime cannot evaluate (only constants, "
                      "symbolic dims, integer scalars, + - * // %% min max and comparisons)", i, k->name);
            return false;
        }
    }
    /* Clusters change nothing a kernel computes (tlc gives the source no
     * access to another block's shared memory), so a target without them
     * launches the grid as it is. */
    bool clusters = tlc_target_of(lc->plan->arch)->clusters;
    for (int i = 0; i < 3; i++) {
        if (!k->cluster[i] || !clusters) {
            out->cluster[i].n = 0;
            tlrt_expr_push(&out->cluster[i], TLRT_EX_INT, 1);
            continue;
        }
        out->has_cluster = true;
        if (!grid_expr(k, k->cluster[i], &out->cluster[i])) {
            tlc_error(lc->diag, k->loc, "cluster dimension %d of kernel '%s' uses something the runtime cannot evaluate",
                      i, k->name);
            return false;
        }
    }
    meta_checks(k, out, lc->diag);
    out->threads[0] = lc->tk->threads; /* warp specialization may add some */
    out->smem_bytes = lc->tk->dyn_shared_bytes;
    out->persistent = tlc_ws_persistent_blocks(lc);
    out->tile_counter = out->persistent && lc->plan->ws.dynamic_tiles;
    out->pdl = lc->tk->pdl_wait;
    out->grid_sync = lc->tk->grid_sync_counter != NULL;
    char err[256];
    if (!ok || !tlrt_meta_validate_kernel(out, err, sizeof err)) {
        tlc_error(lc->diag, k->loc, "kernel '%s' cannot be described to the runtime: %s", k->name,
                  ok ? err : "too many parameters, symbolic dims or TMA descriptors, or a name too long");
        return false;
    }
    return true;
}

/* A function's record: its signature (parameters, checks), workspaces and
 * the indices of its kernels in the module. */
static bool function_metadata(const tir_module *m, const tir_function *f, tlrt_function_meta *out, tlc_diag *diag) {
    tlrt_function_meta_init(out, f->name);
    bool ok = meta_params(f->sig, &out->sig);
    meta_checks(f->sig, &out->sig, diag);
    for (int w = 0; ok && w < f->nworkspaces; w++) {
        const tir_buffer *b = f->workspaces[w];
        int64_t dims[TLRT_MAX_RANK];
        meta_dims(f->sig, b, dims);
        ok = tlrt_function_meta_add_workspace(out, b->name, (tlrt_dtype)b->dtype, b->rank, dims) >= 0;
    }
    for (int i = 0; ok && i < f->nkernels; i++)
        for (int j = 0; j < m->nkernels; j++)
            if (m->kernels[j] == f->kernels[i]) ok = tlrt_function_meta_add_launch(out, j) >= 0;
    if (!ok) tlc_error(diag, f->loc, "function '%s' cannot be described to the runtime: too many parameters, "
                       "symbolic dims, workspaces or kernels, or a name too long", f->name);
    return ok;
}

const char *tlc_module_metadata(const tir_module *m, tlrt_kernel_meta *kernels, tlc_arena *a, tlc_diag *diag) {
    tlrt_function_meta *functions = TLC_NEW_ARRAY(a, tlrt_function_meta, (size_t)m->nfunctions + 1);
    for (int i = 0; i < m->nfunctions; i++)
        if (!function_metadata(m, m->functions[i], &functions[i], diag)) return NULL;
    tlrt_module_meta mm = {.version = TLRT_META_VERSION, .nkernels = m->nkernels, .kernels = kernels,
                           .nfunctions = m->nfunctions, .functions = functions};
    snprintf(mm.tlc_version, sizeof mm.tlc_version, "%s", TLC_VERSION);
    snprintf(mm.arch, sizeof mm.arch, "%s", tlc_arch_name(m->arch));
    char err[256];
    char *text = tlrt_meta_format(&mm, err, sizeof err);
    if (!text) {
        tlc_error(diag, (tlc_loc){0, 0}, "the kernels' launch metadata cannot be written: %s", err);
        return NULL;
    }
    /* codegen adds the comment prefix itself (PTX "// ", LLVM IR "; ") */
    static const char prefix[] = "// ";
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    for (const char *p = text; *p;) {
        if (strncmp(p, prefix, sizeof prefix - 1) == 0) p += sizeof prefix - 1;
        while (*p && *p != '\n') tlc_sb_putc(&sb, *p++);
        tlc_sb_putc(&sb, '\n');
        if (*p) p++;
    }
    free(text);
    const char *r = tlc_arena_strdup(a, tlc_sb_cstr(&sb));
    tlc_sb_free(&sb);
    return r;
}
