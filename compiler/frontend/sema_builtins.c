/* The builtin table (every name the language gives meaning to) and the
 * binding of call arguments to a builtin's parameters, with the arity and
 * keyword diagnostics shared by every builtin. */
#include <string.h>
#include "sema_internal.h"

#define P(...) {__VA_ARGS__}
static const builtin_spec builtins[] = {
    /* name, id, kind, params, nparams, nrequired, variadic min, max */
    {"copy", B_COPY, BK_STMT, P("src", "dst"), 2, 2, 0, 0},
    {"fill", B_FILL, BK_STMT, P("buffer", "value"), 2, 2, 0, 0},
    {"clear", B_CLEAR, BK_STMT, P("buffer"), 1, 1, 0, 0},
    {"gemm", B_GEMM, BK_STMT,
     P("A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum"), 7, 3, 0, 0},
    {"reduce_max", B_REDUCE_MAX, BK_STMT, P("buffer", "out", "dim", "clear"), 4, 2, 0, 0},
    {"reduce_sum", B_REDUCE_SUM, BK_STMT, P("buffer", "out", "dim", "clear"), 4, 2, 0, 0},
    {"reduce_min", B_REDUCE_MIN, BK_STMT, P("buffer", "out", "dim", "clear"), 4, 2, 0, 0},
    {"reduce_absmax", B_REDUCE_ABSMAX, BK_STMT, P("buffer", "out", "dim", "clear"), 4, 2, 0, 0},
    {"reduce_abssum", B_REDUCE_ABSSUM, BK_STMT, P("buffer", "out", "dim", "clear"), 4, 2, 0, 0},
    {"atomic_add", B_ATOMIC_ADD, BK_STMT, P("dst", "value", "return_prev", "use_tma"), 4, 2, 0, 0},
    /* TileLang's vector forms: elements dst .. dst+n-1 += value .. value+n-1 */
    {"atomic_addx2", B_ATOMIC_ADDX2, BK_STMT, P("dst", "value"), 2, 2, 0, 0},
    {"atomic_addx4", B_ATOMIC_ADDX4, BK_STMT, P("dst", "value"), 2, 2, 0, 0},
    {"use_swizzle", B_USE_SWIZZLE, BK_STMT, P("panel_size", "order", "enable"), 3, 1, 0, 0},
    {"annotate_layout", B_ANNOTATE_LAYOUT, BK_STMT, P("layout_map"), 1, 1, 0, 0},
    {"disable_warp_group_reg_alloc", B_KEEP_REGS, BK_STMT, P(NULL), 0, 0, 0, 0},
    {"no_set_max_nreg", B_KEEP_REGS, BK_STMT, P(NULL), 0, 0, 0, 0},
    {"pdl_sync", B_PDL_SYNC, BK_STMT, P(NULL), 0, 0, 0, 0},
    {"pdl_trigger", B_PDL_TRIGGER, BK_STMT, P(NULL), 0, 0, 0, 0},
    {"prefetch", B_PREFETCH, BK_STMT, P("src"), 1, 1, 0, 0},
    {"cumsum", B_CUMSUM, BK_STMT, P("src", "dst", "dim", "reverse"), 4, 1, 0, 0},
    /* eviction_policy and annotations: TileLang's TMA hints, accepted */
    {"im2col", B_IM2COL, BK_STMT,
     P("img", "col", "nhw_step", "c_step", "kernel", "stride", "dilation", "pad", "eviction_policy", "annotations"), 10, 8,
     0, 0},
    {"c2d_im2col", B_IM2COL, BK_STMT,
     P("img", "col", "nhw_step", "c_step", "kernel", "stride", "dilation", "pad", "eviction_policy", "annotations"), 10, 8,
     0, 0},
    /* TileLang's manual warp specialization (sema_manual_ws.c) */
    {"ws", B_WS, BK_STMT, P(NULL), 0, 0, 1, 4},
    {"barrier_wait", B_BARRIER_WAIT, BK_STMT, P("barrier_id", "parity"), 2, 2, 0, 0},
    {"mbarrier_wait_parity", B_BARRIER_WAIT, BK_STMT, P("mbarrier", "parity"), 2, 2, 0, 0},
    {"barrier_arrive", B_BARRIER_ARRIVE, BK_STMT, P("barrier_id"), 1, 1, 0, 0},
    {"mbarrier_arrive", B_BARRIER_ARRIVE, BK_STMT, P("mbarrier"), 1, 1, 0, 0},
    {"tma_copy", B_TMA_COPY, BK_STMT, P("src", "dst", "barrier"), 3, 3, 0, 0},
    /* TileLang's cp.async groups around Parallel loops it issues
     * asynchronously (prefer_async=True): nothing to do in tlc */
    {"finalize_reducer", B_FINALIZE_REDUCER, BK_STMT, P("reducer"), 1, 1, 0, 0},
    {"sync_threads", B_SYNC_THREADS, BK_STMT, P("barrier_id", "arrive_count"), 2, 0, 0, 0},
    {"sync_grid", B_SYNC_GRID, BK_STMT, P(NULL), 0, 0, 0, 0},
    /* TVM's attribute scope: tlc takes it around a thread all-reduce (sema_thread_allreduce.c) */
    {"attr", B_ATTR, BK_STMT, P("node", "attr_key", "value"), 3, 3, 0, 0},
    {"ptx_commit_group", B_ASYNC_GROUP, BK_STMT, P(NULL), 0, 0, 0, 0},
    {"ptx_wait_group", B_ASYNC_GROUP, BK_STMT, P("num"), 1, 0, 0, 0},
    {"set_max_nreg", B_SET_MAX_NREG, BK_STMT, P("reg_count", "is_inc"), 2, 2, 0, 0},
    {"inc_max_nreg", B_SET_MAX_NREG, BK_STMT, P("reg_count"), 1, 1, 0, 0},
    {"dec_max_nreg", B_SET_MAX_NREG, BK_STMT, P("reg_count"), 1, 1, 0, 0},
    {"annotate_producer_reg_dealloc", B_HINT_MAX_NREG, BK_STMT, P("reg_count"), 1, 0, 0, 0},
    {"annotate_consumer_reg_alloc", B_HINT_MAX_NREG, BK_STMT, P("reg_count"), 1, 0, 0, 0},
    /* TileLang's hand-pipelined warpgroups (sema_hand_pipeline.c) */
    {"wgmma_gemm", B_WGMMA_GEMM, BK_STMT,
     P("A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum"), 7, 3, 0, 0},
    {"wait_wgmma", B_WAIT_WGMMA, BK_STMT, P("id"), 1, 1, 0, 0},
    {"ptx_cp_async", B_PTX_CP_ASYNC, BK_STMT, P("dst_access_ptr", "src_access_ptr", "num_elems", "predicate"), 4, 3,
     0, 0},
    {"cp_async_barrier_noinc", B_CP_ASYNC_BARRIER, BK_STMT, P("barrier"), 1, 1, 0, 0},
    {"fence_proxy_async", B_FENCE_PROXY_ASYNC, BK_STMT, P(NULL), 0, 0, 0, 0},

    {"Kernel", B_KERNEL, BK_DECL, P("threads", "cluster_dims"), 2, 0, 1, 3},
    {"Parallel", B_PARALLEL, BK_LOOP, P(NULL), 0, 0, 1, 8},
    /* TVM's T.parallel: the same elementwise loop */
    {"parallel", B_PARALLEL, BK_LOOP, P(NULL), 0, 0, 1, 8},
    /* order= ... annotations= are TileLang's manual schedule: bound here so
     * that the loop can refuse them by name */
    {"Pipelined", B_PIPELINED, BK_LOOP, P("num_stages", "order", "stage", "sync", "group", "annotations", "turns", "roles"), 8, 0, 1, 2},
    /* its three required arguments checked where it is written out (sema_stmt.c) */
    {"Persistent", B_PERSISTENT, BK_LOOP, P("domain", "wave_size", "index", "group_size"), 4, 0, 0, 0},
    {"serial", B_SERIAL, BK_LOOP, P(NULL), 0, 0, 1, 3},
    {"Serial", B_SERIAL, BK_LOOP, P(NULL), 0, 0, 1, 3},
    {"range", B_RANGE, BK_LOOP, P(NULL), 0, 0, 1, 3},
    {"unroll", B_UNROLL, BK_LOOP, P(NULL), 0, 0, 1, 3},
    {"Unroll", B_UNROLL, BK_LOOP, P(NULL), 0, 0, 1, 3},
    /* a per-thread loop the code generator may vectorize: unroll's meaning */
    {"vectorized", B_UNROLL, BK_LOOP, P(NULL), 0, 0, 1, 2},
    {"Vectorized", B_UNROLL, BK_LOOP, P(NULL), 0, 0, 1, 2},

    /* scope: TileLang's storage scope, checked against what the alloc makes */
    {"alloc_shared", B_ALLOC_SHARED, BK_ALLOC, P("shape", "dtype", "scope"), 3, 2, 0, 0},
    {"alloc_fragment", B_ALLOC_FRAGMENT, BK_ALLOC, P("shape", "dtype", "scope"), 3, 2, 0, 0},
    {"alloc_local", B_ALLOC_LOCAL, BK_ALLOC, P("shape", "dtype", "scope"), 3, 2, 0, 0},
    {"alloc_var", B_ALLOC_VAR, BK_ALLOC, P("dtype", "init"), 2, 1, 0, 0},
    {"alloc_global", B_ALLOC_GLOBAL, BK_ALLOC, P("shape", "dtype"), 2, 2, 0, 0},
    {"alloc_barrier", B_ALLOC_BARRIER, BK_ALLOC, P("arrive_count"), 1, 1, 0, 0},
    /* TileLang's reducer: a fragment that Parallel loops update with += (sema_reducer.c) */
    {"alloc_reducer", B_ALLOC_REDUCER, BK_ALLOC, P("shape", "dtype", "op", "replication"), 4, 2, 0, 0},
    /* another shape of a fragment's elements (sema_stmt.c, reshape_stmt) */
    {"reshape", B_RESHAPE, BK_ALLOC, P("buffer", "shape"), 2, 2, 0, 0},
    {"view", B_RESHAPE, BK_ALLOC, P("buffer", "shape", "dtype"), 3, 2, 0, 0},

    {"exp", B_EXP, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"exp2", B_EXP2, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"log", B_LOG, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"log2", B_LOG2, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"rsqrt", B_RSQRT, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"sqrt", B_SQRT, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"abs", B_ABS, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"max", B_MAX, BK_EXPR, P("a", "b"), 2, 2, 0, 0},
    {"min", B_MIN, BK_EXPR, P("a", "b"), 2, 2, 0, 0},
    {"infinity", B_INFINITY, BK_EXPR, P("dtype"), 1, 1, 0, 0},
    {"cast", B_CAST, BK_EXPR, P("x", "dtype"), 2, 2, 0, 0},
    {"ceildiv", B_CEILDIV, BK_EXPR, P("a", "b"), 2, 2, 0, 0},
    {"cdiv", B_CEILDIV, BK_EXPR, P("a", "b"), 2, 2, 0, 0}, /* TileLang's alias (tilelang.cdiv) */
    {"if_then_else", B_IF_THEN_ELSE, BK_EXPR, P("cond", "then_value", "else_value"), 3, 3, 0, 0},
    {"Select", B_IF_THEN_ELSE, BK_EXPR, P("condition", "true_value", "false_value"), 3, 3, 0, 0},
    {"Cast", B_CAST_DTYPE_FIRST, BK_EXPR, P("dtype", "value"), 2, 2, 0, 0},
    {"tanh", B_TANH, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"sigmoid", B_SIGMOID, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"erf", B_ERF, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"sin", B_SIN, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"cos", B_COS, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"floor", B_FLOOR, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"ceil", B_CEIL, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"log1p", B_LOG1P, BK_EXPR, P("x"), 1, 1, 0, 0},
    {"pow", B_POW, BK_EXPR, P("x", "y"), 2, 2, 0, 0},
    {"clamp", B_CLAMP, BK_EXPR, P("dst", "min_val", "max_val"), 3, 3, 0, 0},
    {"floordiv", B_FLOORDIV, BK_EXPR, P("a", "b"), 2, 2, 0, 0},
    {"floormod", B_FLOORMOD, BK_EXPR, P("a", "b"), 2, 2, 0, 0},
    {"truncdiv", B_TRUNCDIV, BK_EXPR, P("a", "b"), 2, 2, 0, 0},
    {"truncmod", B_TRUNCMOD, BK_EXPR, P("a", "b"), 2, 2, 0, 0},
    {"make_swizzled_layout", B_MAKE_SWIZZLED_LAYOUT, BK_EXPR, P("buffer"), 1, 1, 0, 0},
    /* tilelang.cuda.intrinsics' swizzle for ldmatrix: the same request (tlc picks the swizzle) */
    {"make_mma_swizzle_layout", B_MAKE_SWIZZLED_LAYOUT, BK_EXPR, P("buffer", "is_smooth"), 2, 1, 0, 0},
    {"Layout", B_LAYOUT, BK_EXPR, P("shape", "forward_fn"), 2, 2, 0, 0},
    {"dynamic", B_DYNAMIC, BK_EXPR, P("name", "dtype"), 2, 1, 0, 0},
    {"symbolic", B_DYNAMIC, BK_EXPR, P("name", "dtype"), 2, 1, 0, 0},
    {"const", B_CONST, BK_EXPR, P("name", "dtype"), 2, 1, 0, 0}, /* TVM's tir.const(value, dtype) too */
    /* TVM's reinterpret(dtype, value), also written reinterpret(value, dtype=...) */
    {"reinterpret", B_REINTERPRET, BK_EXPR, P("value", "dtype"), 2, 2, 0, 0},
    /* this thread's index along a thread axis of T.Kernel(threads=(x, y, z)) */
    {"get_thread_binding", B_THREAD_BINDING, BK_EXPR, P("dim"), 1, 0, 0, 0},
    {"get_thread_bindings", B_THREAD_BINDINGS, BK_EXPR, P(NULL), 0, 0, 0, 0},
    /* TVM's T.thread_binding(0, threads, thread="threadIdx.x") as a value */
    {"thread_binding", B_THREAD_BINDING_RANGE, BK_EXPR, P("begin", "end", "thread", "annotations"), 4, 3, 0, 0},
    /* warp shuffles: TVM's tvm_warp_shuffle(mask, value, lane, width,
     * warp_size) (CUDA's __shfl_sync), and the value of lane `lane` or of
     * lane laneid ^ lane_mask of this thread's width-lane part */
    {"tvm_warp_shuffle", B_WARP_SHUFFLE, BK_EXPR, P("mask", "value", "warp_id", "width", "warp_size"), 5, 5, 0, 0},
    {"shfl_sync", B_SHFL_SYNC, BK_EXPR, P("value", "lane", "width"), 3, 2, 0, 0},
    {"shfl_xor", B_SHFL_XOR, BK_EXPR, P("value", "lane_mask", "width"), 3, 2, 0, 0},

    /* (TileLang's T.Tensor(shape) is float32) */
    /* data: TileLang's `T.Tensor(shape, dtype, X.data)` in a kernel, a view of X */
    {"Tensor", B_TENSOR, BK_DECL, P("shape", "dtype", "data"), 3, 1, 0, 0},
    {"Buffer", B_TENSOR, BK_DECL, P("shape", "dtype", "data"), 3, 1, 0, 0},
    {"empty", B_EMPTY, BK_DECL, P("shape", "dtype"), 2, 2, 0, 0},
    {"jit", B_JIT, BK_DECL, P(NULL), 0, 0, 0, 0},
    {"prim_func", B_PRIM_FUNC, BK_DECL, P(NULL), 0, 0, 0, 0},
    {"GemmWarpPolicy", B_GEMM_WARP_POLICY, BK_DECL, P(NULL), 0, 0, 0, 0},
};
#undef P

const builtin_spec *sema_builtin_lookup(const char *name) {
    if (!name) return NULL;
    for (unsigned i = 0; i < sizeof builtins / sizeof *builtins; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}

/* Prefixes that only name the module a builtin lives in. */
static bool is_module_prefix(const char *s) {
    return strcmp(s, "T") == 0 || strcmp(s, "tl") == 0 || strcmp(s, "tilelang") == 0 ||
           strcmp(s, "language") == 0 || strcmp(s, "layout") == 0 || strcmp(s, "tvm") == 0 || strcmp(s, "tir") == 0 ||
           strcmp(s, "tirx") == 0;
}

enum { MAX_CHAIN = 16 };

const char *sema_dotted_name(sema *S, const ast_expr *e) {
    const char *parts[MAX_CHAIN];
    int n = 0;
    while (e && e->kind == AE_ATTR) {
        if (n == MAX_CHAIN) return NULL;
        parts[n++] = e->u.attr.name;
        e = e->u.attr.value;
    }
    if (!e || e->kind != AE_NAME || n == MAX_CHAIN) return NULL;
    parts[n++] = e->u.name;
    /* parts[] is innermost-last: parts[n-1] is the root name. */
    int first = n - 1;
    if (n > 1 && !sema_lookup(S, parts[first]))
        while (first > 0 && is_module_prefix(parts[first])) first--;
    if (first == 0) return parts[0];
    tlc_strbuf sb;
    tlc_sb_init(&sb);
    for (int i = first; i >= 0; i--) {
        tlc_sb_puts(&sb, parts[i]);
        if (i) tlc_sb_putc(&sb, '.');
    }
    const char *r = tlc_arena_strdup(S->arena, tlc_sb_cstr(&sb));
    tlc_sb_free(&sb);
    return r;
}

const builtin_spec *sema_call_builtin(sema *S, const ast_expr *call) {
    if (!call || call->kind != AE_CALL) return NULL;
    const ast_expr *f = call->u.call.func;
    /* a user symbol of the same name hides the builtin */
    if (f->kind == AE_NAME && sema_lookup(S, f->u.name)) return NULL;
    return sema_builtin_lookup(sema_dotted_name(S, f));
}

bool sema_bind_args(sema *S, const builtin_spec *b, const ast_expr *call, sema_args *out) {
    memset(out, 0, sizeof *out);
    bool ok = true;
    int npos = call->u.call.nargs;
    if (b->variadic_max > 0) {
        if (npos < b->variadic_min) {
            tlc_error(S->diag, call->loc, "'%s' expects at least %d argument%s, got %d", b->name,
                      b->variadic_min, b->variadic_min == 1 ? "" : "s", npos);
            ok = false;
        } else if (npos > b->variadic_max) {
            tlc_error(S->diag, call->u.call.args[b->variadic_max]->loc,
                      "'%s' expects at most %d argument%s, got %d", b->name, b->variadic_max,
                      b->variadic_max == 1 ? "" : "s", npos);
            ok = false;
        }
        for (int i = 0; i < npos && i < b->variadic_max; i++) out->var[out->nvar++] = call->u.call.args[i];
    } else {
        if (npos > b->nparams) {
            tlc_error(S->diag, call->u.call.args[b->nparams]->loc,
                      "'%s' takes %d argument%s, got %d", b->name, b->nparams,
                      b->nparams == 1 ? "" : "s", npos);
            ok = false;
        }
        for (int i = 0; i < npos && i < b->nparams; i++) out->arg[i] = call->u.call.args[i];
    }
    for (int i = 0; i < call->u.call.nkwargs; i++) {
        const ast_kwarg *kw = &call->u.call.kwargs[i];
        int p = -1;
        for (int j = 0; j < b->nparams; j++)
            if (kw->name && strcmp(b->params[j], kw->name) == 0) p = j;
        if (p < 0) {
            if (sema_tilelang_kwarg_is_default(b->name, kw) || sema_ignore_tilelang_hint(S, b->name, kw->name, kw->loc))
                continue;
            if (!sema_refuse_tilelang_kwarg(S, b->name, kw->name, kw->loc))
                tlc_error(S->diag, kw->loc, "'%s' has no parameter named '%s'", b->name, kw->name ? kw->name : "?");
            ok = false;
        } else if (out->arg[p]) {
            tlc_error(S->diag, kw->loc, "argument '%s' of '%s' given more than once", kw->name, b->name);
            ok = false;
        } else {
            out->arg[p] = kw->value;
        }
    }
    if (ok)
        for (int j = 0; j < b->nrequired; j++)
            if (!out->arg[j]) {
                tlc_error(S->diag, call->loc, "'%s' is missing argument '%s'", b->name, b->params[j]);
                ok = false;
            }
    return ok;
}

/* Edit distance (insertions, deletions, substitutions), capped: names are
 * short, and anything past the cap is no suggestion anyway. */
static int edit_distance(const char *a, const char *b, int cap) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return cap + 1;
    if ((la > lb ? la - lb : lb - la) > (size_t)cap) return cap + 1;
    int prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

/* Closest first; among equally close, the one of the same length (exp3:
 * exp2 rather than exp). */
static void consider(const char *name, const char *cand, int cap, const char **best, int *best_d) {
    if (!cand || !*cand || !strcmp(cand, name)) return;
    int d = edit_distance(name, cand, cap);
    if (d > cap) return;
    size_t ln = strlen(name), lc = strlen(cand);
    int score = 4 * d + (ln == lc ? 0 : 1);
    if (score < *best_d) {
        *best = cand;
        *best_d = score;
    }
}

const char *sema_suggest(sema *S, const char *name, bool only_functions) {
    if (!name) return NULL;
    int cap = strlen(name) <= 4 ? 1 : 2, best_d = 4 * cap + 2;
    const char *best = NULL;
    if (!only_functions)
        for (int i = S->nsyms - 1; i >= 0; i--) consider(name, S->syms[i].name, cap, &best, &best_d);
    for (unsigned i = 0; i < sizeof builtins / sizeof *builtins; i++)
        if (!only_functions || builtins[i].kind == BK_EXPR) consider(name, builtins[i].name, cap, &best, &best_d);
    for (int i = 0; i < TIR_DTYPE_COUNT; i++) /* dtypes are values, and casts when called */
        consider(name, tir_dtype_name((tir_dtype)i), cap, &best, &best_d);
    return best;
}

const char *sema_suggest_dtype(const char *name) {
    const char *names[TIR_DTYPE_COUNT];
    for (int i = 0; i < TIR_DTYPE_COUNT; i++) names[i] = tir_dtype_name((tir_dtype)i);
    return sema_nearest(name, names, TIR_DTYPE_COUNT);
}

const char *sema_nearest(const char *name, const char *const *cands, int n) {
    if (!name) return NULL;
    int cap = strlen(name) <= 4 ? 1 : 2, best_d = 4 * cap + 2;
    const char *best = NULL;
    for (int i = 0; i < n; i++) consider(name, cands[i], cap, &best, &best_d);
    return best;
}
