/* Private to sema*.c: the analysis context, the value model used while
 * evaluating expressions, the scoped symbol table and the builtin table. */
#ifndef TLC_SEMA_INTERNAL_H
#define TLC_SEMA_INTERNAL_H
#include "sema.h"

/* ---------------- values ---------------- */
/* What an expression means to sema. Compile-time values (dtypes, strings,
 * policies) never reach the IR; scalars are tir_exprs (folded when constant).
 * SV_ERROR marks an expression that was already diagnosed: every consumer
 * stays silent on it, so one mistake gives one message. */
typedef enum {
    SV_ERROR, SV_NONE, SV_SCALAR, SV_DTYPE, SV_STRING, SV_BUFFER, SV_TUPLE,
    SV_POLICY, SV_LAYOUT, SV_DYNAMIC,
    SV_INDEX_MAP, /* T.Layout(shape, lambda ...) (sema_global_layout.c) */
    SV_BARRIER,   /* T.alloc_barrier(...) (sema_manual_ws.c) */
    SV_DEVICE,    /* torch.cuda.get_device_properties(...): the compile target's (sema_pyfuncs.c) */
} sv_kind;

typedef struct sv sv;
typedef struct sema_index_map sema_index_map;
struct sv {
    sv_kind kind;
    tlc_loc loc;
    union {
        tir_expr *e;                      /* SCALAR */
        tir_dtype dtype;                  /* DTYPE */
        const char *str;                  /* STRING, DYNAMIC (symbol name) */
        tir_buffer *buf;                  /* BUFFER, LAYOUT (swizzled layout of buf) */
        struct { sv *items; int n; } tup; /* TUPLE */
        tir_gemm_policy policy;           /* POLICY */
        const sema_index_map *imap;       /* INDEX_MAP */
        int barrier;                      /* BARRIER: index into sema's barriers */
    } u;
};

/* ---------------- symbols ---------------- */
typedef enum {
    SYM_CONST,  /* compile-time value: @jit param, module constant, local constant */
    SYM_VAR,    /* tir_var: loop var, let, block idx, sym dim, scalar param */
    SYM_BUFFER, /* tensor param or allocation */
} sym_kind;

typedef enum {
    CONST_JIT, CONST_MODULE, CONST_LOCAL,
    CONST_LOOP,    /* a Pipelined(start, stop) loop's variable: start + the count from 0 */
    CONST_UNBOUND, /* a factory parameter without default or -D: a symbolic dim where first used */
    CONST_PYTHON,  /* a module-level name whose value is not a compile-time constant (error on use) */
} const_origin;

typedef struct sym {
    const char *name;
    sym_kind kind;
    tlc_loc loc;
    sv value;           /* SYM_CONST */
    const_origin origin;/* SYM_CONST */
    const char *why;    /* CONST_PYTHON: why the value is not a constant (may be NULL) */
    /* CONST_PYTHON: the diagnostics that have said so once (later uses there
     * are silent errors); held-back diagnostics (module-level values, a
     * factory's trial pass) do not silence a kernel's own */
    const struct tlc_diag *reported_to;
    tir_var *var;       /* SYM_VAR */
    tir_buffer *buf;    /* SYM_BUFFER */
    int prev;           /* shadowed symbol of the same name, or -1 */
} sym;

/* String -> int open-addressing map (names are compared by content). */
typedef struct sema_map {
    const char **keys;
    int *vals;
    int cap, count;
} sema_map;
void sema_map_init(sema_map *m);
void sema_map_free(sema_map *m);
int *sema_map_get(sema_map *m, const char *key);          /* NULL when absent */
void sema_map_put(sema_map *m, const char *key, int val);

/* ---------------- builtins ---------------- */
typedef enum {
    B_NONE,
    /* tile ops and hints (statements) */
    B_COPY, B_FILL, B_CLEAR, B_GEMM, B_REDUCE_MAX, B_REDUCE_SUM, B_REDUCE_MIN, B_REDUCE_ABSMAX,
    B_REDUCE_ABSSUM,
    B_ATOMIC_ADD, B_USE_SWIZZLE, B_ANNOTATE_LAYOUT, B_PDL_SYNC, B_PDL_TRIGGER, B_KEEP_REGS, B_PREFETCH, B_CUMSUM, B_IM2COL,
    /* TileLang's manual warp specialization (sema_manual_ws.c) */
    B_WS, B_BARRIER_WAIT, B_BARRIER_ARRIVE, B_TMA_COPY, B_ASYNC_GROUP, B_FINALIZE_REDUCER, B_ATTR, B_SYNC_THREADS, B_SYNC_GRID, B_SET_MAX_NREG,
    B_HINT_MAX_NREG, B_WGMMA_GEMM, B_WAIT_WGMMA, B_PTX_CP_ASYNC, B_CP_ASYNC_BARRIER, B_FENCE_PROXY_ASYNC,
    /* structure */
    B_KERNEL, B_PARALLEL, B_PIPELINED, B_SERIAL, B_RANGE, B_UNROLL, B_PERSISTENT,
    B_ALLOC_SHARED, B_ALLOC_FRAGMENT, B_ALLOC_LOCAL, B_ALLOC_VAR, B_ALLOC_GLOBAL, B_ALLOC_BARRIER, B_ALLOC_REDUCER, B_RESHAPE, B_THREAD_BINDING_RANGE, B_ATOMIC_ADDX2, B_ATOMIC_ADDX4,
    /* expressions */
    B_EXP, B_EXP2, B_LOG, B_LOG2, B_RSQRT, B_SQRT, B_ABS, B_MAX, B_MIN, B_INFINITY, B_CAST,
    B_CEILDIV, B_IF_THEN_ELSE, B_MAKE_SWIZZLED_LAYOUT, B_LAYOUT, B_DYNAMIC,
    B_TANH, B_SIGMOID, B_ERF, B_SIN, B_COS, B_FLOOR, B_CEIL, B_LOG1P, B_POW, B_CLAMP,
    B_FLOORDIV, B_FLOORMOD, B_TRUNCDIV, B_TRUNCMOD, B_CAST_DTYPE_FIRST, B_CONST, B_REINTERPRET,
    B_THREAD_BINDING, B_THREAD_BINDINGS, B_WARP_SHUFFLE, B_SHFL_SYNC, B_SHFL_XOR,
    /* declarations */
    B_TENSOR, B_JIT, B_PRIM_FUNC, B_GEMM_WARP_POLICY, B_EMPTY,
} builtin_id;

typedef enum { BK_STMT, BK_LOOP, BK_ALLOC, BK_EXPR, BK_DECL } builtin_kind;

enum { SEMA_MAX_ARGS = 10 };
typedef struct builtin_spec {
    const char *name;
    builtin_id id;
    builtin_kind kind;
    /* Named parameters in positional order; the first `nrequired` must be given.
     * When `variadic_max` > 0 the positional arguments are collected into
     * `var[]` instead (min..max of them) and params[] are keyword-only. */
    const char *params[SEMA_MAX_ARGS];
    int nparams, nrequired;
    int variadic_min, variadic_max;
} builtin_spec;

/* The builtin for a (prefix-stripped) name, e.g. "copy", "GemmWarpPolicy". */
const builtin_spec *sema_builtin_lookup(const char *name);


typedef struct sema_args {
    const ast_expr *arg[SEMA_MAX_ARGS]; /* by params[] index; NULL when not given */
    const ast_expr *var[SEMA_MAX_ARGS]; /* variadic positional arguments */
    int nvar;
} sema_args;

/* ---------------- the analysis context ---------------- */
typedef struct sema {
    tlc_arena *arena;
    tlc_diag *diag;
    const tlc_sema_options *opt;
    const ast_module *module;

    /* scoped symbols: a stack of symbols plus scope marks; `names` maps a
     * name to the index of its innermost symbol (-1 after it was popped). */
    sym *syms; int nsyms, capsyms;
    int *marks; int nmarks, capmarks;
    sema_map names;
    sema_map helper_funcs;    /* name -> index in module->funcs of each helper (sema_is_helper) */

    bool *define_used; /* per opt->defines entry */

    /* the kernel being analysed */
    tir_kernel *k;
    tlc_ptrvec buffers, sym_dims, consts_tmp;
    tlc_ptrvec *cur;          /* statements of the block being built */
    const ast_stmt *kernel_with; /* the `with Kernel` statement, once seen */
    bool in_kernel;           /* inside `with Kernel` */
    bool allow_dynamic;       /* evaluating a @jit default */
    sema_map assign_count;    /* name -> number of assignments in the kernel body */
    /* A name assigned once in the source was assigned again (a macro
     * expanded twice in one scope): lets' definitions are no longer
     * trusted for slice extents in this kernel (tir_var.def). */
    bool lets_reassigned;
    int depth;                /* expression / block nesting */
    tlc_loc parallel_loc;     /* innermost enclosing Parallel loop (line 0: none) */
    tlc_loc swizzle_loc;      /* the kernel's use_swizzle (line 0: none yet) */
    /* Constant ranges of the enclosing loops' variables, innermost last,
     * each with the run-time `if` depth it was entered at: an index into a
     * tile is checked against the range only where no `if` may guard it. */
    struct sema_range { const tir_var *v; int64_t lo, hi; int if_depth; } ranges[32];
    int nranges, if_depth;
    /* TileLang's Python-shaped kernels (sema_python.c) */
    int param_cap;            /* room in k->params */
    bool python;              /* in a Python-shaped function: its compile-time names may be reassigned */
    tlc_ptrvec bound_dims;    /* sema_dim_use: dims that some tensor must have */
    tlc_ptrvec checks;        /* asserts left for the launch (struct tir_launch_check *) */
    /* A function of several kernels (sema_function.c) is analysed once per
     * `with Kernel` block: a pass analyses block `want_block` (-1: none,
     * the function's signature) and skips the others. Outside its block a
     * pass after the first reports into a quiet diag (the first pass said
     * it all); `loud` is the compilation's. */
    bool fn_mode;
    int want_block, blocks_seen;
    tlc_diag *loud;
    tlc_ptrvec fn_workspaces; /* alloc_global at function level, in order (tir_buffer *) */
    tlc_ptrvec macros;        /* @T.macro functions defined in the kernel's factory (const ast_funcdef *) */
    int macro_depth;          /* macro calls being inlined */
    int helper_depth;         /* the file's Python functions being run (sema_pyfuncs.c) */
    int macro_expansions;     /* in this kernel (bounded: two calls per macro, nested, double at each level) */
    int64_t py_items;         /* sequence items compile-time Python made for this kernel (bounded, sema_pyfuncs.c) */
    tlc_ptrvec macros_counted; /* macros whose assignments are in assign_count */
    /* A factory that defines several @T.prim_func functions returns one,
     * chosen by compile-time values (`if num_split > 1: return main_split`):
     * a quiet pass over each such factory (`choosing`) finds it before its
     * kernels are analysed (sema_choose_factory_kernels), and every pass
     * then compiles that one (sema_kernel_holder). */
    const ast_funcdef **factory_choice; /* by index in module->funcs; NULL where not chosen */
    bool choosing;
    const ast_funcdef *chosen;
    /* The kernel's global tensors with a layout (annotate_layout with
     * T.Layout) and those accessed before any (sema_global_layout.c). */
    tlc_ptrvec global_layouts;
    /* TileLang's manual warp specialization (sema_manual_ws.c): the
     * kernel's barriers (sema_barrier *), the threads of the T.ws scope
     * being analysed (0 outside one), and whether the kernel has any. */
    tlc_ptrvec barriers;
    tlc_ptrvec reducers;   /* sema_reducer.c's records, for the kernel being analysed */
    int ws_threads;
    bool ws_seen;
    tlc_loc ws_seen_loc;   /* the first barrier statement or T.ws scope */
    bool ws_scopes;        /* a T.ws scope is among them */
    /* TileLang's asynchronous warpgroup operations (sema_hand_pipeline.c):
     * where the kernel has one, its thread ranges run at the same time */
    bool hand_async;
    tlc_loc hand_async_loc;
    /* loop bodies written out by sema's unrolling in this kernel (sema_stmt.c),
     * against a budget: nested unrolled loops cannot multiply past it */
    int unrolled_bodies;
    /* the innermost loop a break or continue would end (sema_loop_exit.c) */
    struct sema_loop_exit *loop_exit;
} sema;

/* A symbolic dim that a tensor parameter's shape must give at launch: a
 * name of T.const / T.dynamic, or a factory parameter without a default
 * that was used (param_name set). */
typedef struct sema_dim_use {
    tir_var *var;
    const char *param_name; /* the parameter's name, NULL for T.const / T.dynamic */
    const char *func;       /* the function declaring it */
    tlc_loc decl;
    bool reported;          /* a note already said to give it with -D */
    bool in_block;          /* bound inside the pass's `with Kernel` block */
} sema_dim_use;
/* The visible name (or, with only_functions, builtin function) nearest to
 * a misspelled `name`, for "did you mean"; NULL when none is close. */
const char *sema_suggest(sema *S, const char *name, bool only_functions);
/* Parallel bodies are elementwise: tile ops, allocations and nested
 * Parallel / Pipelined loops are not allowed there. Reports and returns
 * false when `what` appears inside one. */
bool sema_check_not_in_parallel(sema *S, tlc_loc at, const char *what);

/* sema.c: symbols */
void sema_push_scope(sema *S);
void sema_pop_scope(sema *S);
sym *sema_lookup(sema *S, const char *name);
sym *sema_declare(sema *S, const char *name, sym_kind kind, tlc_loc loc);
/* A name whose declaration was diagnosed: later uses are silent errors. */
void sema_declare_error(sema *S, const char *name, tlc_loc loc);
tir_var *sema_new_var(sema *S, const char *name, tir_var_kind kind, tir_dtype t, tlc_loc loc);
tir_buffer *sema_new_buffer(sema *S, const char *name, tir_scope scope, tir_dtype t, int rank, tlc_loc loc);
/* "a shared buffer", "a tensor parameter", ... */
const char *sema_buffer_desc(const tir_buffer *b);
void sema_note_decl(sema *S, const tir_buffer *b);
void sema_note_sym(sema *S, const sym *s);

/* sema_builtins.c */
/* Dotted name of a NAME / ATTR chain with T. / tl. / tilelang.language. /
 * layout. prefixes stripped ("T.layout.make_swizzled_layout" ->
 * "make_swizzled_layout"); NULL when e is not such a chain. When the chain
 * starts with a user symbol nothing is stripped. */
const char *sema_dotted_name(sema *S, const ast_expr *e);
const builtin_spec *sema_call_builtin(sema *S, const ast_expr *call);
bool sema_bind_args(sema *S, const builtin_spec *b, const ast_expr *call, sema_args *out);

/* sema_expr.c */
sv sema_eval(sema *S, const ast_expr *e);
sv sv_error(void);
/* A scalar value (an error value when e is NULL). */
sv sv_scalar(tir_expr *e, tlc_loc loc);
/* Scalar of v (VAR-scope buffers load); NULL (diagnosed unless v is an error). */
tir_expr *sema_to_scalar(sema *S, sv v, const ast_expr *at);
tir_expr *sema_eval_scalar(sema *S, const ast_expr *e);
tir_expr *sema_eval_int(sema *S, const ast_expr *e, const char *what); /* integer scalar */
/* Compile-time integer (bools count when allow_bool); false when diagnosed. */
bool sema_eval_const_int(sema *S, const ast_expr *e, const char *what, int64_t *out);
bool sema_eval_const_bool(sema *S, const ast_expr *e, const char *what, bool *out);
/* Subscript `sub` gives buffer b one index per dimension; else an error at it. */
bool sema_check_index_count(sema *S, const tir_buffer *b, const ast_expr *sub);
bool sema_eval_dtype(sema *S, const ast_expr *e, tir_dtype *out);
bool sv_as_dtype(sema *S, sv v, const ast_expr *at, tir_dtype *out);
/* Condition of if / and / or: bool, or int compared with 0. */
tir_expr *sema_to_bool(sema *S, tir_expr *x, const ast_expr *at, const char *what);
/* Arithmetic / bitwise operator with the language's typing rules. */
tir_expr *sema_arith(sema *S, ast_op op, tir_expr *x, tir_expr *y, tlc_loc loc);
tir_expr *sema_binary(sema *S, tir_binop op, tir_expr *x, tir_expr *y, tlc_loc loc);
tir_expr *sema_index(sema *S, const ast_expr *e);
bool sema_check_index_bounds(sema *S, tir_buffer *b, int dim, tir_expr *idx, const ast_expr *at);
/* A constant range an index expression is known to lie in, from the
 * enclosing loops' variables and the block indices (false: none known). */
bool sema_index_range(const sema *S, const tir_expr *e, int64_t *lo, int64_t *hi);
/* Shape of an alloc: tuple/list/single int of constants; allow_sym:
 * also sym dims (a global buffer), SEMA_SHAPE_SIZES: also expressions of
 * sym dims and constants (a tensor's view). */
enum { SEMA_SHAPE_SIZES = 2 };
bool sema_eval_shape(sema *S, const ast_expr *e, int allow_sym, tir_expr ***dims, int *rank);
/* An integer expression of values known at launch (sizes, integer scalar
 * parameters) the launch metadata can evaluate: a tensor's or a view's dim. */
bool sema_size_expr(const tir_expr *e);
void sema_describe_sv(const sv *v, char *buf, size_t n);

/* sema_pyfuncs.c: compile-time Python on compile-time values. Each
 * returns false when the call, attribute or operands are not its own
 * (the caller goes on), else true with the value in *out (an error
 * value once diagnosed). */
/* len, sum, any, all, min / max of a sequence or of 3+ arguments, and
 * Python's math module (`name` as sema_dotted_name gives it). */
bool sema_py_call(sema *S, const ast_expr *call, const char *name, sv *out);
/* x.bit_length() */
bool sema_py_method(sema *S, const ast_expr *call, sv *out);
/* math.pi, math.e, math.inf */
bool sema_py_attr(sema *S, const ast_expr *e, const char *name, sv *out);
/* props.major, .minor, .multi_processor_count of a device's properties
 * (SV_DEVICE), at e (an attribute access). */
sv sema_device_attr(sema *S, const ast_expr *e);
/* + and * on tuples, lists and strings (l, r: the evaluated operands) */
bool sema_py_binop(sema *S, const ast_expr *e, sv l, sv r, sv *out);
/* seq[i], seq[a:b:c] of a compile-time tuple, list or string */
bool sema_py_subscript(sema *S, const ast_expr *e, sv base, sv *out);
/* [elt for target in iter if cond], (elt for ...): a tuple */
sv sema_py_comprehension(sema *S, const ast_expr *e);
/* A `for` outside a kernel: run now over a compile-time sequence, its
 * body's statements read in the current scope each time (true: handled). */
bool sema_py_for(sema *S, const ast_stmt *s);
/* `xs.append(v)` / `xs.extend(seq)` of a compile-time list named xs: the
 * list changes (false when e is not such a call). */
bool sema_py_list_update(sema *S, const ast_expr *e);
/* The file's Python helper function `name` (sema_is_helper), or NULL. */
const ast_funcdef *sema_helper_named(sema *S, const char *name);
/* A call of helper h, run now: its value (None without `return`). */
sv sema_py_helper_call(sema *S, const ast_funcdef *h, const ast_expr *call);

/* sema_stmt.c */
void sema_block(sema *S, const ast_block *b, tlc_ptrvec *out);
tir_stmt *sema_block_stmt(sema *S, const ast_block *b, tlc_loc loc);
void sema_stmt(sema *S, const ast_stmt *s);
void sema_raise(sema *S, const ast_stmt *s); /* a `raise` that compile-time code reached: an error */
void sema_emit(sema *S, tir_stmt *s);
/* A condition on values known at launch (sizes, scalars) the runtime checks
 * before the kernel runs: the kernel's launch checks. */
void sema_add_launch_check(sema *S, tir_expr *cond, tlc_loc loc);
/* Statements sema writes out itself: a sequence of n statements (copied
 * into the arena), and a loop of `kind` over [0, extent[i]) for each of
 * its n vars (extent NULL: each 1, to be set by the caller). */
tir_stmt *sema_seq_stmt(sema *S, tir_stmt **v, int n, tlc_loc loc);

/* while loops, break and continue (sema_loop_exit.c) */
typedef struct sema_loop_exit sema_loop_exit;
/* Before a loop over `body` is read: its flags (a `let` each, emitted
 * here), and the loop made the one a break ends; `refused` names a loop
 * that cannot end early (NULL: a serial loop). */
sema_loop_exit *sema_loop_exit_open(sema *S, const ast_block *body, const char *refused, tlc_loc loc,
                                    sema_loop_exit **saved);
void sema_loop_exit_close(sema *S, sema_loop_exit *saved);
/* The loop built: its condition (`cond`, NULL: none, and break's flag)
 * and continue's flag cleared at each iteration's start. */
void sema_loop_exit_finish(sema *S, sema_loop_exit *x, tir_stmt *loop, tir_expr *cond);
/* The statements of b from `from` on, in the current scope, each after
 * one that may end the iteration under the flags' test. */
void sema_stmts(sema *S, const ast_block *b, int from);
void sema_loop_exit_stmt(sema *S, const ast_stmt *s); /* break, continue */
void sema_while(sema *S, const ast_stmt *s);
tir_stmt *sema_loop_stmt(sema *S, tir_for_kind kind, tir_var **vars, const int64_t *extent, int n, tir_stmt *body,
                         tlc_loc loc);
void sema_count_assignments(sema *S, const ast_block *b);
/* Declares `name` in the current scope as standing for v (a macro's
 * parameter, a comprehension's variable): a buffer, a compile-time value,
 * or a scalar (in a kernel, one that is not a constant or a variable is
 * evaluated once, here, into a let). */
void sema_bind_value(sema *S, const char *name, tlc_loc loc, sv v);
/* The argument expression of each of m's parameters at `call` (positional,
 * by keyword, or the default); NULL once diagnosed. `what` names m's kind
 * ("macro", "function") in the messages. */
const ast_expr **sema_call_args(sema *S, const ast_funcdef *m, const ast_expr *call, const char *what);

/* sema_tilelang.c: a TileLang construct (name without "T.") or dtype tlc
 * does not support: reports it with what to write instead and returns
 * true; false for any other name. */
bool sema_refuse_tilelang(sema *S, const char *name, tlc_loc loc);
bool sema_refuse_tilelang_dtype(sema *S, const char *name, tlc_loc loc);
/* A TileLang keyword argument with the value that means what tlc does
 * anyway (memory_order="relaxed" on atomic_add): accepted, ignored. */
bool sema_tilelang_kwarg_is_default(const char *fn, const ast_kwarg *kw);
/* Likewise sema_refuse_tilelang for a TileLang keyword argument `kwarg` of
 * builtin `fn`. */
bool sema_refuse_tilelang_kwarg(sema *S, const char *fn, const char *kwarg, tlc_loc loc);
/* A TileLang schedule hint tlc decides itself (copy(..., disable_tma=)):
 * warns that it is ignored and returns true. */
bool sema_ignore_tilelang_hint(sema *S, const char *fn, const char *kwarg, tlc_loc loc);
/* A call of TileLang's IKET profiler (`what`: "iket.mark", "iket.range"):
 * warns that tlc records nothing and returns true. */
bool sema_ignore_profiling_event(sema *S, const ast_expr *call, const char *what);
/* The supported dtype name nearest to a misspelled one, or NULL. */
const char *sema_suggest_dtype(const char *name);
/* The candidate nearest to a misspelled name (NULL entries skipped), or NULL. */
const char *sema_nearest(const char *name, const char *const *cands, int n);

/* sema_tileops.c */
void sema_tile_op(sema *S, const builtin_spec *b, const ast_expr *call);
/* A call of Python's print (not shadowed): a statement that does nothing
 * (TileLang runs it while it builds the kernel; sema_pyfuncs.c). */
bool sema_is_python_print(sema *S, const ast_expr *e);
/* TileLang's manual warp specialization (sema_manual_ws.c). */
void sema_ws_with(sema *S, const ast_stmt *s);
void sema_alloc_barrier(sema *S, const ast_expr *target, const ast_expr *call);
void sema_mbarrier_op(sema *S, const builtin_spec *b, const sema_args *a, tlc_loc loc);
/* T.tma_copy's barrier= checked: its group in *number, its mbarrier in *index. */
bool sema_tma_copy_barrier(sema *S, const sema_args *a, int *number, tir_expr **index);
/* The barrier an argument names (`bar`, `mbars[i]`): its group number in
 * *number, its mbarrier in *index; NULL, reported, otherwise. */
const struct sema_barrier *sema_barrier_arg(sema *S, const ast_expr *e, int *number, tir_expr **index);
/* At the end of a kernel's body: where its thread ranges run in program
 * order, its barriers' protocol checked in that order, then its mbarrier
 * and set_max_nreg statements removed; where they run at the same time
 * (hand_async), its barriers kept in tir_kernel.mbarriers. */
void sema_manual_ws_finish(sema *S);
/* TileLang's hand-pipelined warpgroup operations (sema_hand_pipeline.c):
 * T.wait_wgmma, T.ptx_cp_async (through T.access_ptr),
 * T.cp_async_barrier_noinc, T.set_max_nreg / inc_max_nreg / dec_max_nreg. */
void sema_wait_wgmma(sema *S, const sema_args *a, tlc_loc loc);
void sema_ptx_cp_async(sema *S, const sema_args *a, tlc_loc loc);
void sema_cp_async_barrier(sema *S, const sema_args *a, tlc_loc loc);
void sema_set_max_nreg(sema *S, const builtin_spec *b, const sema_args *a, tlc_loc loc);
/* Marks the kernel as one whose ranges run at the same time (first use at loc). */
void sema_note_hand_async(sema *S, tlc_loc loc);
/* The whole of buffer b as a region. */
tir_region sema_whole_region(sema *S, tir_buffer *b, tlc_loc loc);
/* TileLang's reducers (sema_reducer.c): alloc_reducer's buffer recorded
 * with its operation; finalize_reducer checked; a Parallel loop that
 * updates a reducer emitted as a loop into a partial fragment and a
 * reduce (false when st updates no reducer: emit it as it is). */
void sema_reducer_alloc(sema *S, tir_buffer *b, const ast_expr *op);
void sema_finalize_reducer(sema *S, const sema_args *a, tlc_loc loc);
/* Thread ranges (sema_thread_range.c): the kernel's ranges, one per
 * interval, and the named barrier ids taken. */
typedef struct sema_thread_ranges {
    unsigned barriers_used; /* ids the program's sync_threads(id, count) or the ranges take */
    tlc_ptrvec ranges;
} sema_thread_ranges;
void sema_thread_ranges_init(sema_thread_ranges *t, const tir_kernel *k);
void sema_thread_ranges_free(sema_thread_ranges *t);
/* The threads [*a, *b) of [lo, hi) for which c holds: comparisons of the
 * thread index of a one-axis block with constants, joined by `and`; false
 * where c is not such a test. */
bool sema_thread_range_of(const tir_kernel *k, const tir_expr *c, int lo, int hi, int *a, int *b);
/* The range of threads [lo, hi) of the branch of s (NULL: empty, or an
 * error reported: not whole warps, no barrier id left). */
const tir_thread_range *sema_thread_range(sema *S, sema_thread_ranges *t, const tir_stmt *s, int lo, int hi);
/* Every statement in s runs in range r (nested ranges set theirs later). */
void sema_set_thread_range(tir_stmt *s, const tir_thread_range *r);
/* Each fragment used in one range only (or outside any): tir_buffer.range. */
void sema_check_range_fragments(sema *S);
/* Parallel loops whose whole body is `if v < c:` run over the smaller
 * extent (sema_parallel_guard.c) */
void sema_parallel_guards(sema *S);
/* Fragments in Parallel loops at a loop variable plus a shared offset, read
 * through a view that splits the dim (sema_fragment_offsets.c) */
void sema_fragment_offsets(sema *S);
/* T.im2col: a convolution's column tile as a Parallel loop of element reads (sema_im2col.c) */
void sema_im2col(sema *S, const sema_args *a, tlc_loc loc);
bool sema_reducer_loop(sema *S, tir_stmt *st);
/* `with T.attr(comm_reducer, "reduce_scope", ...)`: TVM's thread
 * all-reduce (sema_thread_allreduce.c). */
void sema_attr_with(sema *S, const ast_stmt *s);
/* Thread-indexed code: checks what may differ between threads and marks it (sema_thread_varying.c). */
void sema_thread_varying(sema *S);

/* Layouts of global tensors (sema_global_layout.c): T.Layout's value; the
 * annotation; an element access's index through the tensor's layout (and
 * a record of the access, which a later annotation must not follow); a
 * copy to or from such a tensor (or a tile atomic_add into it), emitted as
 * a Parallel loop of elements (false: neither operand has a layout), which
 * is also how a copy of rows of a fragment into another (or into rows of
 * one) is written (`lse[k, :]` into a row: the loop's layout inference
 * serves both). */
sv sema_layout_call(sema *S, const sema_args *a, tlc_loc loc);
void sema_annotate_global_layout(sema *S, tir_buffer *b, sv layout, const ast_expr *key, const ast_expr *value);
void sema_note_global_use(sema *S, tir_buffer *b, tlc_loc loc);
tir_expr **sema_global_layout_index(sema *S, tir_buffer *b, tir_expr **idx, tlc_loc loc);
bool sema_has_global_layout(sema *S, const tir_buffer *b);
bool sema_global_layout_copy(sema *S, const tir_region *src, const tir_region *dst, bool atomic, tlc_loc loc);
/* `name = atomic_add(..., return_prev=True)`: the op, and the rank-0 var
 * buffer that receives the previous value (NULL after an error). */
tir_buffer *sema_atomic_add_prev(sema *S, const builtin_spec *b, const ast_expr *call, const char *name);

/* sema_kernel (sema.c): the `with Kernel(...)` statement. */
void sema_kernel_with(sema *S, const ast_stmt *s);

/* sema.c, for sema_python.c */
/* A @jit decorator's parameters; TileLang's jit options (out_idx=,
 * pass_configs=, ...) are skipped when `tilelang_options`. */
void sema_jit_params(sema *S, const ast_expr *dec, bool tilelang_options);
/* One compile-time parameter: its default (NULL: none), overridden by -D;
 * without either it is left unbound (CONST_UNBOUND). */
void sema_compile_time_param(sema *S, const char *name, tlc_loc loc, const ast_expr *dflt);
/* One kernel parameter (tensor or scalar) from its annotation, appended to
 * k->params; `shadow` lets it hide names of an enclosing factory. */
tir_param *sema_kernel_param(sema *S, const char *name, tlc_loc loc, const ast_expr *annotation, bool shadow);
/* A tensor parameter from a shape and a dtype expression (T.empty). */
tir_param *sema_tensor_param(sema *S, const char *name, tlc_loc loc, const ast_expr *shape, const ast_expr *dtype);
/* Whether an annotation is a tensor type (Tensor / Buffer). */
bool sema_is_tensor_annotation(sema *S, const ast_expr *ann);
/* The statements of a kernel function: constants, then `with Kernel`
 * blocks, with alloc_global workspaces before and between them. */
void sema_kernel_body(sema *S, const ast_funcdef *f);
bool sema_is_kernel_with(sema *S, const ast_stmt *s);
/* `NAME = alloc_global(...)`: at function level, a workspace. */
bool sema_is_workspace_decl(sema *S, const ast_stmt *s);
/* One kernel (or, in fn_mode, one pass over a function) from a function definition. */
tir_kernel *sema_kernel(sema *S, const ast_funcdef *f);

/* sema_function.c: a function with several `with Kernel` blocks or with
 * workspaces (alloc_global before a block). */
/* The function holding f's Kernel blocks: f, or a factory's kernel. */
const ast_funcdef *sema_kernel_holder(sema *S, const ast_funcdef *f);
/* Whether f is such a function. */
bool sema_is_multi_kernel(sema *S, const ast_funcdef *f);
/* Analyses f into its kernels (appended to kernels) and its record. */
tir_function *sema_function(sema *S, const ast_funcdef *f, tlc_ptrvec *kernels);
/* A new symbolic dim (pushed into the kernel's list). */
tir_var *sema_new_sym_dim(sema *S, const char *name, bool dynamic, tlc_loc loc);
/* The -D value of `name` as a value of the kind its text has (int, float,
 * bool, dtype, or else a string); false when there is no -D for it. */
bool sema_define_value(sema *S, const char *name, tlc_loc loc, sv *out);
/* Records a compile-time value for the dump and the metadata. */
void sema_record_const(sema *S, const char *name, const sv *v, bool overridden);
/* An unbound factory parameter, at its first use: from now on a symbolic
 * dim (eval_name and tensor dims call this). */
tir_var *sema_bind_unbound(sema *S, sym *s);
/* Where a constant is needed and `e` is not one: when `e` reads a
 * parameter without a default (an unbound factory parameter), reports
 * "MSG, but 'P' is a parameter ... give its value with -D P=VALUE" and
 * returns true; else reports nothing. */
bool sema_unbound_error(sema *S, const tir_expr *e, tlc_loc at, const char *msg);
/* The names of T.const("M, N") / T.dynamic("M, N"). */
sv sema_const_dims(sema *S, const ast_expr *call, const char *names, bool dynamic);

/* sema_python.c: TileLang's Python-shaped kernel functions (a @tilelang.jit
 * factory returning a @T.prim_func, or an eager function with T.const,
 * annotations in its body, T.empty and `return`). */
bool sema_is_python_style(const ast_funcdef *f);
/* Whether f is one of the file's Python helpers (ast_module.helpers): not
 * a kernel; sema_pyfuncs.c runs it where it is called. */
bool sema_is_helper(sema *S, const ast_funcdef *f);
/* Whether g is decorated @T.macro (a macro: its body is inlined where it
 * is called, sema_stmt.c; not a kernel). */
bool sema_decorated_macro(sema *S, const ast_funcdef *g);
/* An annotation that names a compile-time Python value (int, float, bool,
 * str, T.dtype, Optional[...] of one; none at all) rather than a tensor or
 * a typed run-time scalar. */
bool sema_python_type_annotation(sema *S, const ast_expr *ann);
void sema_python_kernel(sema *S, const ast_funcdef *f);
/* sema_stmt.c: whether fragment b fits the registers a thread may take
 * under any layout; *regs, the least it takes. */
bool sema_fragment_fits(sema *S, const tir_buffer *b, int64_t *regs);
/* The @T.prim_func functions a factory defines (its undecorated-by-macro
 * nested functions): their number, the first in *first. */
int sema_factory_functions(sema *S, const ast_funcdef *f, const ast_funcdef **first);
/* The kernel function of a factory's function g: g, or the @T.prim_func
 * of g when g is an inner factory the factory calls (`return
 * kernel_func(block_M, ...)`). */
const ast_funcdef *sema_factory_kernel(sema *S, const ast_funcdef *g);
/* For every factory of the module with several such functions, the one it
 * returns (S->factory_choice); the module scope is set up. */
void sema_choose_factory_kernels(sema *S);
/* End of a kernel: every T.const / T.dynamic name and used factory
 * parameter without a default is a dim of some tensor parameter. */
void sema_check_bound_dims(sema *S);
#endif
