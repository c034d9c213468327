/* TileLang constructs tlc does not support, each with what to write
 * instead, so that a TileLang kernel using one is told so by name rather
 * than "unknown function". docs/language.md's compatibility table lists the
 * same decisions. */
#include <stdio.h>
#include <string.h>
#include "sema_internal.h"

typedef struct unsupported {
    const char *name; /* without the T. prefix */
    const char *instead;
} unsupported;

static const unsupported constructs[] = {
    {"print", "remove it (inspect values with 'tlc run --output NAME=FILE.npy')"},
    {"device_assert", "remove it, or guard the code it protects with an 'if'"},
    {"atomic_max", "use atomic_add, or reduce into a fragment and store the result once"},
    {"atomic_min", "use atomic_add, or reduce into a fragment and store the result once"},
    {"match_buffer", "annotate the parameter instead (A: T.Tensor((M, N), dtype)): tlc's tensors are contiguous"},
    {"StridedTensor", "use T.Tensor: tlc's tensors are contiguous, row-major"},
    {"ptr", "annotate the parameter as a tensor (A: T.Tensor((M, N), dtype))"},
    {"annotate_pass_configs", "remove it: tlc's compilation takes no pass configuration"},
    {"annotate_compile_flags", "remove it: tlc's compilation takes no flags from the kernel"},
    {"access_ptr", "T.access_ptr is taken only as an operand of T.ptx_cp_async; elsewhere index the buffer (tlc has "
                   "no pointers into buffers)"},
};

static const unsupported dtypes[] = {
    {"uint64", "use int64"},
    {"float64", "use float32"},
};

/* Keyword arguments of TileLang's versions of tlc's builtins: "fn.kwarg". */
static const unsupported kwargs[] = {
    {"atomic_add.memory_order", "tlc's atomic_add is relaxed: write memory_order=\"relaxed\" or nothing"},
    {"gemm.wg_wait", "remove it: tlc schedules the wgmma waits"},
    {"Kernel.prelude", "remove it"},
};

/* TileLang's schedule hints, which change how a kernel runs and not what it
 * computes: accepted with a warning, since tlc decides these itself. */
static const unsupported ignored_hints[] = {
    {"copy.coalesced_width", "tlc picks the vector width of a copy"},
    {"Parallel.coalesced_width", "tlc picks the vector width of a loop"},
    {"Parallel.loop_layout", "tlc infers the loop's layout"},
    {"Parallel.prefer_async", "tlc decides how a loop's loads are issued"},
    {"Parallel.annotations", "tlc decides how a loop's loads are issued"},
    {"copy.disable_tma", "tlc decides where a copy uses TMA"},
    {"gemm.k_pack", "tlc picks the gemm instruction"},
};

static const char *lookup(const unsupported *t, size_t n, const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) return t[i].instead;
    return NULL;
}

bool sema_refuse_tilelang(sema *S, const char *name, tlc_loc loc) {
    const char *instead = lookup(constructs, sizeof constructs / sizeof *constructs, name);
    if (instead) {
        tlc_error(S->diag, loc, "'T.%s' is a TileLang construct tlc does not support; %s", name, instead);
        return true;
    }
    return sema_refuse_tilelang_dtype(S, name, loc);
}

/* TileLang keyword arguments that ask for what tlc does anyway, with the
 * one value that does: accepted and ignored. */
static const unsupported same_as_tlc[] = {
    {"atomic_add.memory_order", "relaxed"},
};

bool sema_tilelang_kwarg_is_default(const char *fn, const ast_kwarg *kw) {
    if (!fn || !kw->name || !kw->value || kw->value->kind != AE_STRING) return false;
    char key[96];
    snprintf(key, sizeof key, "%s.%s", fn, kw->name);
    for (size_t i = 0; i < sizeof same_as_tlc / sizeof *same_as_tlc; i++)
        if (!strcmp(same_as_tlc[i].name, key) && !strcmp(same_as_tlc[i].instead, kw->value->u.str)) return true;
    return false;
}

/* The entry of table t for keyword argument `kwarg` of builtin `fn`. */
static const char *lookup_kwarg(const unsupported *t, size_t n, const char *fn, const char *kwarg) {
    if (!fn || !kwarg) return NULL;
    char key[96];
    snprintf(key, sizeof key, "%s.%s", fn, kwarg);
    return lookup(t, n, key);
}

bool sema_ignore_tilelang_hint(sema *S, const char *fn, const char *kwarg, tlc_loc loc) {
    const char *why = lookup_kwarg(ignored_hints, sizeof ignored_hints / sizeof *ignored_hints, fn, kwarg);
    if (!why) return false;
    tlc_warning(S->diag, loc, "'%s=' of T.%s is ignored: %s", kwarg, fn, why);
    return true;
}

bool sema_refuse_tilelang_kwarg(sema *S, const char *fn, const char *kwarg, tlc_loc loc) {
    const char *instead = lookup_kwarg(kwargs, sizeof kwargs / sizeof *kwargs, fn, kwarg);
    if (!instead) return false;
    tlc_error(S->diag, loc, "'%s=' of T.%s is a TileLang construct tlc does not support; %s", kwarg, fn, instead);
    return true;
}

bool sema_refuse_tilelang_dtype(sema *S, const char *name, tlc_loc loc) {
    const char *instead = lookup(dtypes, sizeof dtypes / sizeof *dtypes, name);
    if (!instead) return false;
    tlc_error(S->diag, loc, "'%s' is a TileLang dtype tlc does not support; %s", name, instead);
    return true;
}

/* TileLang's IKET profiling events (tilelang.tools.cuda.iket): `with
 * iket.range("name"):` around statements and `iket.mark("name", ...)`
 * record when a block reaches them, for a profiler tlc does not have. */
bool sema_ignore_profiling_event(sema *S, const ast_expr *call, const char *what) {
    if (!call || call->kind != AE_CALL) return false;
    const char *name = sema_dotted_name(S, call->u.call.func);
    size_t n = name ? strlen(name) : 0, w = strlen(what);
    if (n < w || strcmp(name + n - w, what) != 0 || (n > w && name[n - w - 1] != '.')) return false;
    tlc_warning(S->diag, call->loc, "'%s' is ignored: tlc records no IKET profiling events", name);
    return true;
}
