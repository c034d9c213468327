/* T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad):
 * one tile of the column matrix of a 2-d convolution, written out as the
 * Parallel loop of element reads it is.
 *
 * img is a global [N, H, W, C] image (channels last), col a [rows, cols]
 * shared buffer. Row r of the tile is output pixel p = nhw_step * rows + r
 * (n, oh, ow in row-major order over [N, OH, OW]); column j is position
 * k = c_step * cols + j of a filter window in [KH, KW, C] order (kh
 * slowest). The element is img[n, oh * stride - pad + kh * dilation,
 * ow * stride - pad + kw * dilation, c], and 0 where that lies outside the
 * image (the padding) or p past the last pixel. As in TileLang, a tile's
 * columns are channels of one filter position: C must be a multiple of
 * cols (checked at compile time, or at launch for a symbolic C), so kh, kw
 * and the first channel are computed once per tile, before the loop, and
 * the loop reads `cols` consecutive channels a row. The filter's size,
 * stride, dilation and pad may be known only at launch. The loop keeps a
 * description of the tile (tir_im2col), from which a TMA pipeline loads
 * it in im2col mode (transform/pipeline_plan.c). */
#include "sema_internal.h"

static tir_buffer *buffer_arg(sema *S, const ast_expr *e, const char *what) {
    sv v = sema_eval(S, e);
    if (v.kind == SV_ERROR) return NULL;
    if (v.kind != SV_BUFFER) {
        char d[128];
        sema_describe_sv(&v, d, sizeof d);
        tlc_error(S->diag, e->loc, "im2col: %s must be a buffer, got %s", what, d);
        return NULL;
    }
    return v.u.buf;
}

/* A let computed once here (before the loop) holding e. */
static tir_expr *tile_let(sema *S, const char *name, tir_expr *e, tlc_loc loc) {
    if (!e) return NULL;
    int64_t c;
    if (tir_expr_const_int(e, &c)) return e;
    tir_var *v = sema_new_var(S, name, TV_LET, e->dtype, loc);
    v->assigned_once = true;
    tir_stmt *st = tir_new_stmt(S->arena, TS_LET, loc);
    st->u.let.var = v;
    st->u.let.value = e;
    sema_emit(S, st);
    return tir_var_ref(S->arena, v, loc);
}

void sema_im2col(sema *S, const sema_args *a, tlc_loc loc) {
    tir_buffer *img = buffer_arg(S, a->arg[0], "the image");
    tir_buffer *col = buffer_arg(S, a->arg[1], "the column tile");
    bool ok = img && col;
    if (img && (img->scope != TIR_SCOPE_GLOBAL || img->rank != 4)) {
        tlc_error(S->diag, a->arg[0]->loc, "im2col: the image must be a 4-d global tensor [N, H, W, C], but '%s' is %s "
                  "of rank %d", img->name, sema_buffer_desc(img), img->rank);
        sema_note_decl(S, img);
        ok = false;
    }
    if (col && (col->scope != TIR_SCOPE_SHARED || col->rank != 2)) {
        tlc_error(S->diag, a->arg[1]->loc, "im2col: the column tile must be a 2-d shared buffer, but '%s' is %s of "
                  "rank %d", col->name, sema_buffer_desc(col), col->rank);
        sema_note_decl(S, col);
        ok = false;
    }
    if (img && col && ok && img->dtype != col->dtype) {
        tlc_error(S->diag, loc, "im2col: the image '%s' (%s) and the column tile '%s' (%s) must have one dtype",
                  img->name, tir_dtype_name(img->dtype), col->name, tir_dtype_name(col->dtype));
        ok = false;
    }
    const char *what[6] = {"nhw_step", "c_step", "kernel", "stride", "dilation", "pad"};
    tir_expr *v[6];
    for (int i = 0; i < 6; i++) {
        v[i] = sema_eval_int(S, a->arg[2 + i], what[i]);
        if (!v[i]) ok = false;
    }
    /* kernel, stride, dilation and pad: compile-time integers, or values
     * the runtime knows at launch (sizes, scalar parameters), checked
     * there to be in range: a stride of 0 would divide by zero */
    int64_t c;
    tir_expr *in_range = NULL;
    for (int i = 2; i < 6 && ok; i++) {
        int64_t least = i == 5 ? 0 : 1;
        if (tir_expr_const_int(v[i], &c)) {
            if (c < least) {
                tlc_error(S->diag, a->arg[2 + i]->loc, "im2col: %s must be %s, got %lld", what[i],
                          least ? "positive" : "0 or more", (long long)c);
                ok = false;
            }
        } else if (tir_grid_expr_nodes(v[i]) < 0) {
            tlc_error(S->diag, a->arg[2 + i]->loc, "im2col: %s must be a compile-time integer or a value known at "
                      "launch (a scalar parameter, a tensor's dimension, or an expression of those)", what[i]);
            ok = false;
        } else {
            tir_expr *ge = sema_binary(S, TB_GE, v[i], tir_int(S->arena, least, loc), loc);
            in_range = in_range ? sema_binary(S, TB_AND, in_range, ge, loc) : ge;
        }
    }
    if (ok && in_range) sema_add_launch_check(S, in_range, loc);
    if (!ok) return;
    tlc_arena *A = S->arena;
    int64_t rows = tir_buffer_dim(col, 0), cols = tir_buffer_dim(col, 1);
    tir_expr *N = img->shape[0], *H = img->shape[1], *W = img->shape[2], *C = img->shape[3];
    tir_expr *K = v[2], *stride = v[3], *dil = v[4], *pad = v[5];
    tir_expr *one = tir_int(A, 1, loc), *zero = tir_int(A, 0, loc);
#define BIN(op, x, y) sema_binary(S, op, x, y, loc)
    if (tir_expr_const_int(C, &c)) {
        if (c % cols) {
            tlc_error(S->diag, loc, "im2col: the image's channels (%lld) must be a multiple of the column tile's %lld "
                      "columns (a tile's columns are channels of one filter position)", (long long)c, (long long)cols);
            sema_note_decl(S, img);
            return;
        }
    } else {
        sema_add_launch_check(S, BIN(TB_EQ, BIN(TB_FLOORMOD, C, tir_int(A, cols, loc)), zero), loc);
    }
    /* OH = (H + 2 pad - dilation (K - 1) - 1) // stride + 1, OW alike */
    tir_expr *reach = BIN(TB_ADD, BIN(TB_MUL, dil, BIN(TB_SUB, K, one)), one);
    tir_expr *two_pad = BIN(TB_MUL, tir_int(A, 2, loc), pad);
    tir_expr *span_h = BIN(TB_SUB, BIN(TB_ADD, H, two_pad), reach);
    tir_expr *span_w = BIN(TB_SUB, BIN(TB_ADD, W, two_pad), reach);
    tir_expr *OH = tile_let(S, "im2col_oh", BIN(TB_ADD, BIN(TB_FLOORDIV, span_h, stride), one), loc);
    tir_expr *OW = tile_let(S, "im2col_ow", BIN(TB_ADD, BIN(TB_FLOORDIV, span_w, stride), one), loc);
    /* the tile's filter position and first channel */
    tir_expr *k0 = tile_let(S, "im2col_k0", BIN(TB_MUL, v[1], tir_int(A, cols, loc)), loc);
    tir_expr *c0 = tile_let(S, "im2col_c0", BIN(TB_FLOORMOD, k0, C), loc);
    tir_expr *kw = tile_let(S, "im2col_kw", BIN(TB_FLOORMOD, BIN(TB_FLOORDIV, k0, C), K), loc);
    tir_expr *kh = tile_let(S, "im2col_kh", BIN(TB_FLOORDIV, k0, BIN(TB_MUL, C, K)), loc);
    tir_expr *p0 = tile_let(S, "im2col_p0", BIN(TB_MUL, v[0], tir_int(A, rows, loc)), loc);
    tir_expr *h0 = tile_let(S, "im2col_h0", BIN(TB_SUB, BIN(TB_MUL, kh, dil), pad), loc);
    tir_expr *w0 = tile_let(S, "im2col_w0", BIN(TB_SUB, BIN(TB_MUL, kw, dil), pad), loc);
    tir_expr *ohw = tile_let(S, "im2col_ohw", BIN(TB_MUL, OH, OW), loc);
    tir_expr *npix = tile_let(S, "im2col_pixels", BIN(TB_MUL, N, ohw), loc);
    if (!OH || !OW || !c0 || !kw || !kh || !h0 || !w0 || !npix) return;
    tir_var *iv[2] = {sema_new_var(S, "im2col_r", TV_LOOP, TIR_I32, loc),
                      sema_new_var(S, "im2col_j", TV_LOOP, TIR_I32, loc)};
    tir_expr *r = tir_var_ref(A, iv[0], loc), *j = tir_var_ref(A, iv[1], loc);
    tir_expr *p = BIN(TB_ADD, p0, r);
    tir_expr *n = BIN(TB_FLOORDIV, p, ohw);
    tir_expr *oh = BIN(TB_FLOORMOD, BIN(TB_FLOORDIV, p, OW), OH);
    tir_expr *ow = BIN(TB_FLOORMOD, p, OW);
    tir_expr *h = BIN(TB_ADD, BIN(TB_MUL, oh, stride), h0);
    tir_expr *w = BIN(TB_ADD, BIN(TB_MUL, ow, stride), w0);
    tir_expr *inside = BIN(TB_AND, BIN(TB_LT, p, npix),
                           BIN(TB_AND, BIN(TB_AND, BIN(TB_GE, h, zero), BIN(TB_LT, h, H)),
                               BIN(TB_AND, BIN(TB_GE, w, zero), BIN(TB_LT, w, W))));
    tir_expr **src = TLC_NEW_ARRAY(A, tir_expr *, 4);
    src[0] = n;
    src[1] = h;
    src[2] = w;
    src[3] = BIN(TB_ADD, c0, j);
    tir_expr **dst = TLC_NEW_ARRAY(A, tir_expr *, 2);
    dst[0] = r;
    dst[1] = j;
#undef BIN
    if (!inside || !src[3]) return;
    tir_stmt *load = tir_new_stmt(A, TS_STORE, loc);
    load->u.store.buf = col;
    load->u.store.idx = dst;
    load->u.store.value = tir_load(A, img, src, loc);
    tir_stmt *pad_zero = tir_new_stmt(A, TS_STORE, loc);
    pad_zero->u.store.buf = col;
    pad_zero->u.store.idx = dst;
    pad_zero->u.store.value = tir_cast(A, zero, col->dtype, loc);
    tir_stmt *body = tir_new_stmt(A, TS_IF, loc);
    body->u.if_.cond = inside;
    body->u.if_.then = load;
    body->u.if_.els = pad_zero;
    int64_t ext[2] = {rows, cols};
    tir_stmt *loop = sema_loop_stmt(S, TIR_FOR_PARALLEL, iv, ext, 2, body, loc);
    if (loop && loop->kind == TS_FOR) {
        tir_im2col *d = TLC_NEW(A, tir_im2col);
        *d = (tir_im2col){.img = img, .col = col, .first_pixel = p0, .channel = c0, .kh = kh, .kw = kw,
                          .out_h = OH, .out_w = OW, .kernel = K, .stride = stride, .dilation = dil, .pad = pad};
        loop->u.for_.im2col = d;
    }
    sema_emit(S, loop);
}
