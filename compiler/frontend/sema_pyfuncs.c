/* Compile-time Python (docs/language.md 5.5): what TileLang factories
 * compute in Python from compile-time values before their kernel, taken
 * as tlc's compile-time values (tuples, strings, folded scalars): Python's
 * len, sum, any, all, min and max of a sequence, isinstance, tuple / list /
 * range as values, its math module, tilelang.math's next_power_of_2 and
 * cdiv, int.bit_length(), the sequence operators + and *, indexing and
 * slicing, comprehensions, a `for` before the kernel with list.append /
 * extend, and the file's own helper functions, run where they are called.
 * Everything is bounded per kernel (MAX_ITEMS). */
#include <math.h>
#include <string.h>
#include "../support/int_math.h"
#include "sema_internal.h"
#include "../target/target.h"

/* Above this many items a sequence is refused: its values are kept whole.
 * All the sequences and comprehension steps of a kernel (and of the module's
 * constants) together make at most MAX_ITEMS items, so that nested
 * comprehensions stay linear in the source. */
enum { MAX_SEQ_ITEMS = 4096, MAX_ITEMS = 1 << 16 };

/* Counts n more items; false (diagnosed once) past the budget. */
static bool spend(sema *S, int64_t n, tlc_loc loc) {
    if (S->py_items > MAX_ITEMS) return false;
    S->py_items += n;
    if (S->py_items <= MAX_ITEMS) return true;
    tlc_error(S->diag, loc, "compile-time Python makes more than %d sequence items here (nested comprehensions "
              "multiply): compute less at compile time", MAX_ITEMS);
    return false;
}

static sv string_value(const char *str, tlc_loc loc) {
    sv v = sv_error();
    v.kind = SV_STRING;
    v.loc = loc;
    v.u.str = str;
    return v;
}

/* Where a compile-time value is needed and v is not one: names the -D of an
 * unbound parameter it reads, else says what v is ("MSG, got ...TAIL"). */
static void not_compile_time(sema *S, sv v, tlc_loc at, const char *msg, const char *tail) {
    if (v.kind == SV_ERROR || (v.kind == SV_SCALAR && sema_unbound_error(S, v.u.e, at, msg))) return;
    char desc[128];
    sema_describe_sv(&v, desc, sizeof desc);
    tlc_error(S->diag, at, "%s, got %s%s", msg, desc, tail);
}

/* A compile-time number in `v` (an int, a bool or a float constant):
 * its value as a double, and whether it is an integer (*i). */
static bool const_number(sema *S, sv v, tlc_loc at, const char *fn, double *d, int64_t *i, bool *is_int) {
    if (v.kind == SV_ERROR) return false;
    if (v.kind == SV_SCALAR && v.u.e->kind == TE_INT) {
        *i = v.u.e->u.ival;
        *d = (double)*i;
        *is_int = true;
        return true;
    }
    if (v.kind == SV_SCALAR && v.u.e->kind == TE_FLOAT) {
        *d = v.u.e->u.fval;
        *is_int = false;
        return true;
    }
    char msg[200];
    snprintf(msg, sizeof msg, "'%s' is Python's, run at compile time: its argument must be a compile-time number", fn);
    not_compile_time(S, v, at, msg, v.kind == SV_SCALAR ? " (inside a kernel, use T.ceil, T.sqrt, T.exp, ...)" : "");
    return false;
}

/* Argument k of a call as a compile-time number. */
static bool number_arg(sema *S, const ast_expr *call, int k, const char *fn, double *d, int64_t *i, bool *is_int) {
    const ast_expr *a = call->u.call.args[k];
    return const_number(S, sema_eval(S, a), a->loc, fn, d, i, is_int);
}

static bool const_int_arg(sema *S, const ast_expr *a, const char *fn, int64_t *out) {
    double d;
    bool is_int;
    if (!const_number(S, sema_eval(S, a), a->loc, fn, &d, out, &is_int)) return false;
    if (!is_int) {
        tlc_error(S->diag, a->loc, "'%s' takes an integer, got a float", fn);
        return false;
    }
    return true;
}

static sv float_result(sema *S, double d, const char *fn, tlc_loc loc) {
    if (!isfinite(d)) {
        tlc_error(S->diag, loc, "'%s' has no finite value here (math domain error)", fn);
        return sv_error();
    }
    return sv_scalar(tir_float(S->arena, d, TIR_F32, loc), loc);
}

/* The items of a sequence argument: a tuple or a list. */
static bool seq_items(sema *S, sv v, tlc_loc at, const char *fn, sv **items, int *n) {
    if (v.kind == SV_ERROR) return false;
    if (v.kind == SV_TUPLE) {
        *items = v.u.tup.items;
        *n = v.u.tup.n;
        return true;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "'%s' takes a tuple or list known at compile time", fn);
    not_compile_time(S, v, at, msg, "");
    return false;
}

static sv make_tuple(sv *items, int n, tlc_loc loc) {
    sv v = sv_error();
    v.kind = SV_TUPLE;
    v.loc = loc;
    v.u.tup.items = items;
    v.u.tup.n = n;
    return v;
}

static bool positional_only(sema *S, const ast_expr *call, const char *fn, int lo, int hi) {
    int n = call->u.call.nargs;
    if (call->u.call.nkwargs) {
        tlc_error(S->diag, call->u.call.kwargs[0].loc, "'%s' takes no keyword arguments here", fn);
        return false;
    }
    if (n < lo || n > hi) {
        if (lo == hi) tlc_error(S->diag, call->loc, "'%s' takes %d argument%s, got %d", fn, lo, lo == 1 ? "" : "s", n);
        else tlc_error(S->diag, call->loc, "'%s' takes %d to %d arguments, got %d", fn, lo, hi, n);
        return false;
    }
    return true;
}

static int64_t next_power_of_2(int64_t x) {
    /* tilelang.math: 1 << (x - 1).bit_length() */
    int64_t m = x - 1;
    uint64_t a = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
    int bits = 0;
    while (a) {
        bits++;
        a >>= 1;
    }
    return bits >= 63 ? -1 : (int64_t)1 << bits;
}

/* sum, any, all over a sequence; min and max of a sequence or of three or
 * more arguments (two go to the min / max builtins, which also take
 * values known only at run time). */
static bool sequence_fn(sema *S, const ast_expr *call, const char *name, sv *out) {
    bool is_min = !strcmp(name, "min"), is_max = !strcmp(name, "max");
    bool is_sum = !strcmp(name, "sum"), is_any = !strcmp(name, "any"), is_all = !strcmp(name, "all");
    if (!is_min && !is_max && !is_sum && !is_any && !is_all) return false;
    int nargs = call->u.call.nargs;
    if ((is_min || is_max) && (nargs == 2 || call->u.call.nkwargs)) return false; /* the builtin's form */
    *out = sv_error();
    if (!positional_only(S, call, name, 1, is_min || is_max ? SEMA_MAX_ARGS : is_sum ? 2 : 1)) return true;
    tlc_loc loc = call->loc;
    sv *items;
    int n;
    if (nargs == 1 || is_sum) {
        if (!seq_items(S, sema_eval(S, call->u.call.args[0]), call->u.call.args[0]->loc, name, &items, &n)) return true;
    } else {
        n = nargs;
        items = TLC_NEW_ARRAY(S->arena, sv, (size_t)n);
        for (int i = 0; i < n; i++)
            if ((items[i] = sema_eval(S, call->u.call.args[i])).kind == SV_ERROR) return true;
    }
    if ((is_min || is_max) && n == 0) {
        tlc_error(S->diag, loc, "'%s' of an empty sequence", name);
        return true;
    }
    tir_expr *acc = NULL;
    if (is_sum) {
        acc = nargs == 2 ? sema_eval_scalar(S, call->u.call.args[1]) : tir_int(S->arena, 0, loc);
        if (!acc) return true;
    } else if (is_any || is_all) {
        acc = tir_int_typed(S->arena, is_all, TIR_BOOL, loc);
    }
    for (int i = 0; i < n; i++) {
        tir_expr *x = sema_to_scalar(S, items[i], call);
        if (!x) return true;
        if (is_any || is_all) {
            x = sema_to_bool(S, x, call, is_any ? "an item of any()" : "an item of all()");
            if (!x) return true;
            acc = sema_binary(S, is_any ? TB_OR : TB_AND, acc, x, loc);
        } else if (is_sum) {
            acc = sema_arith(S, AOP_ADD, acc, x, loc);
        } else if (!acc) {
            acc = x;
        } else {
            tir_dtype t = tir_promote(acc->dtype, x->dtype);
            if (tir_dtype_is_float(t)) t = TIR_F32;
            acc = sema_binary(S, is_max ? TB_MAX : TB_MIN, tir_cast(S->arena, acc, t, loc), tir_cast(S->arena, x, t, loc),
                              loc);
        }
        if (!acc) return true;
    }
    *out = sv_scalar(acc, loc);
    return true;
}

/* The characters of a string as one-character strings. */
static bool string_items(sema *S, const char *str, tlc_loc loc, sv **items, int *n) {
    size_t m = strlen(str);
    if (m > MAX_SEQ_ITEMS) {
        tlc_error(S->diag, loc, "this string has more than %d characters", MAX_SEQ_ITEMS);
        return false;
    }
    if (!spend(S, (int64_t)m, loc)) return false;
    *n = (int)m;
    *items = TLC_NEW_ARRAY(S->arena, sv, m + 1);
    for (size_t i = 0; i < m; i++) {
        char *c = TLC_NEW_ARRAY(S->arena, char, 2);
        c[0] = str[i];
        (*items)[i] = string_value(c, loc);
    }
    return true;
}

/* range(stop), range(start, stop[, step]) of compile-time integers. */
static bool range_items(sema *S, const ast_expr *call, sv **items, int *n) {
    if (!positional_only(S, call, "range", 1, 3)) return false;
    int64_t a[3] = {0, 0, 1};
    int na = call->u.call.nargs;
    for (int i = 0; i < na; i++)
        if (!const_int_arg(S, call->u.call.args[i], "range", &a[na == 1 ? 1 : i])) return false;
    int64_t start = a[0], stop = a[1], step = a[2];
    if (step == 0) {
        tlc_error(S->diag, call->loc, "range() step must not be zero");
        return false;
    }
    uint64_t count = 0; /* up to 2^64 - 1 items: counted unsigned */
    if (step > 0 && stop > start) count = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    if (step < 0 && start > stop) count = ((uint64_t)start - (uint64_t)stop - 1) / ((uint64_t)0 - (uint64_t)step) + 1;
    if (count > MAX_SEQ_ITEMS) {
        tlc_error(S->diag, call->loc, "this range has more than %d items: a comprehension keeps them all", MAX_SEQ_ITEMS);
        return false;
    }
    if (!spend(S, (int64_t)count, call->loc)) return false;
    *n = (int)count;
    *items = TLC_NEW_ARRAY(S->arena, sv, (size_t)count + 1);
    for (int64_t i = 0; i < (int64_t)count; i++)
        (*items)[i] = sv_scalar( /* between start and stop: the wrapping arithmetic is exact */
            tir_int(S->arena, (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)step), call->loc), call->loc);
    return true;
}

/* Binds a target run at compile time (a comprehension's or a loop's, an
 * assignment's in a helper): a name, or a tuple of targets, to v. */
static bool bind_target(sema *S, const ast_expr *t, sv v) {
    if (t->kind == AE_NAME) {
        sema_bind_value(S, t->u.name, t->loc, v);
        return true;
    }
    if (t->kind == AE_TUPLE || t->kind == AE_LIST) {
        if (v.kind != SV_TUPLE || v.u.tup.n != t->u.seq.n) {
            char d[128];
            sema_describe_sv(&v, d, sizeof d);
            tlc_error(S->diag, t->loc, "cannot unpack %s into %d names", d, t->u.seq.n);
            return false;
        }
        for (int i = 0; i < t->u.seq.n; i++)
            if (!bind_target(S, t->u.seq.items[i], v.u.tup.items[i])) return false;
        return true;
    }
    tlc_error(S->diag, t->loc, "a target of Python run at compile time is a name or a tuple of names");
    return false;
}

/* What a comprehension or a compile-time `for` walks: a tuple, a list, a
 * string or range(...), known at compile time. */
static bool iter_items(sema *S, const ast_expr *it, const char *what, sv **items, int *n) {
    const char *fn = it->kind == AE_CALL ? sema_dotted_name(S, it->u.call.func) : NULL;
    if (fn && (!strcmp(fn, "range") || !strcmp(fn, "serial")) && !sema_lookup(S, fn)) return range_items(S, it, items, n);
    sv v = sema_eval(S, it);
    if (v.kind == SV_STRING) return string_items(S, v.u.str, it->loc, items, n);
    if (v.kind == SV_TUPLE) {
        *items = v.u.tup.items;
        *n = v.u.tup.n;
        return true;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%s walks a tuple, list, string or range() known at compile time", what);
    not_compile_time(S, v, it->loc, msg, "");
    return false;
}

sv sema_py_comprehension(sema *S, const ast_expr *e) {
    sv *items;
    int n;
    if (!iter_items(S, e->u.comp.iter, "a comprehension", &items, &n)) return sv_error();
    sv *out = TLC_NEW_ARRAY(S->arena, sv, (size_t)n + 1);
    int m = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        if (!spend(S, 1, e->loc)) return sv_error();
        sema_push_scope(S);
        ok = bind_target(S, e->u.comp.target, items[i]);
        bool keep = true;
        if (ok && e->u.comp.cond)
            ok = sema_eval_const_bool(S, e->u.comp.cond, "the condition of a comprehension", &keep);
        if (ok && keep) {
            out[m] = sema_eval(S, e->u.comp.elt);
            ok = out[m++].kind != SV_ERROR;
        }
        sema_pop_scope(S);
    }
    return ok ? make_tuple(out, m, e->loc) : sv_error();
}

bool sema_is_python_print(sema *S, const ast_expr *e) {
    return e && e->kind == AE_CALL && e->u.call.func->kind == AE_NAME && !strcmp(e->u.call.func->u.name, "print") &&
           !sema_lookup(S, "print");
}

/* The SM count a kernel is compiled for: the JIT's device, --num-sms,
 * else the target's data-center part. */
static int compile_num_sms(const sema *S) {
    return S->opt->num_sms > 0 ? S->opt->num_sms : tlc_target_of(S->opt->arch)->num_sms;
}

bool sema_py_call(sema *S, const ast_expr *call, const char *name, sv *out) {
    tlc_loc loc = call->loc;
    if (sequence_fn(S, call, name, out)) return true;
    *out = sv_error();
    if (!strcmp(name, "print") && call->u.call.func->kind == AE_NAME) {
        /* Python's print in a factory or helper: TileLang runs it while it
         * builds the kernel; tlc's compile-time Python writes nothing, so
         * it is a call that does nothing (T.print, on the device, stays
         * refused) */
        out->kind = SV_NONE;
        out->loc = loc;
        return true;
    }
    if (!strcmp(name, "DataType") || !strcmp(name, "tvm.DataType")) {
        /* TVM's DataType(dtype): the dtype itself (its .bits is read as a dtype's) */
        tir_dtype t;
        if (positional_only(S, call, name, 1, 1) && sema_eval_dtype(S, call->u.call.args[0], &t)) {
            out->kind = SV_DTYPE;
            out->u.dtype = t;
            out->loc = loc;
        }
        return true;
    }
    if (!strcmp(name, "isinstance")) {
        if (!positional_only(S, call, name, 2, 2)) return true;
        sv v = sema_eval(S, call->u.call.args[0]);
        if (v.kind == SV_ERROR) return true;
        const ast_expr *ty = call->u.call.args[1];
        const ast_expr *const *tys = &ty;
        int nty = 1;
        if (ty->kind == AE_TUPLE) {
            tys = (const ast_expr *const *)ty->u.seq.items;
            nty = ty->u.seq.n;
        }
        bool konst = v.kind != SV_SCALAR || v.u.e->kind == TE_INT || v.u.e->kind == TE_FLOAT;
        if (!konst) {
            char msg[96];
            snprintf(msg, sizeof msg, "'isinstance' tests a compile-time value");
            if (!sema_unbound_error(S, v.u.e, call->u.call.args[0]->loc, msg))
                tlc_error(S->diag, call->u.call.args[0]->loc, "%s; this one is known only at run time", msg);
            return true;
        }
        bool yes = false;
        for (int i = 0; i < nty; i++) {
            const char *t = tys[i]->kind == AE_NAME ? tys[i]->u.name : NULL;
            if (!t || (strcmp(t, "int") && strcmp(t, "float") && strcmp(t, "bool") && strcmp(t, "str") &&
                       strcmp(t, "tuple") && strcmp(t, "list"))) {
                tlc_error(S->diag, tys[i]->loc, "isinstance() at compile time tests int, float, bool, str, tuple or list");
                return true;
            }
            bool is_bool = v.kind == SV_SCALAR && v.u.e->dtype == TIR_BOOL;
            if (!strcmp(t, "int")) yes |= v.kind == SV_SCALAR && v.u.e->kind == TE_INT; /* a bool is an int too */
            else if (!strcmp(t, "bool")) yes |= is_bool;
            else if (!strcmp(t, "float")) yes |= v.kind == SV_SCALAR && v.u.e->kind == TE_FLOAT;
            else if (!strcmp(t, "str")) yes |= v.kind == SV_STRING;
            else yes |= v.kind == SV_TUPLE; /* tlc keeps tuples and lists alike */
        }
        *out = sv_scalar(tir_int_typed(S->arena, yes, TIR_BOOL, loc), loc);
        return true;
    }
    if (!strcmp(name, "range")) { /* as a value (loops take range themselves) */
        sv *items;
        int n;
        if (range_items(S, call, &items, &n)) *out = make_tuple(items, n, loc);
        return true;
    }
    if (!strcmp(name, "tuple") || !strcmp(name, "list")) {
        if (!positional_only(S, call, name, 0, 1)) return true;
        sv *items = NULL;
        int n = 0;
        if (call->u.call.nargs) {
            sv v = sema_eval(S, call->u.call.args[0]);
            if (v.kind == SV_STRING) {
                if (!string_items(S, v.u.str, call->u.call.args[0]->loc, &items, &n)) return true;
            } else if (!seq_items(S, v, call->u.call.args[0]->loc, name, &items, &n)) {
                return true;
            }
        }
        *out = make_tuple(items ? items : TLC_NEW_ARRAY(S->arena, sv, 1), n, loc);
        return true;
    }
    if (!strcmp(name, "round")) {
        /* Python's: halves to even; an int without ndigits, else a float */
        if (!positional_only(S, call, name, 1, 2)) return true;
        double d;
        int64_t iv, nd = 0;
        bool is_int;
        if (!number_arg(S, call, 0, name, &d, &iv, &is_int)) return true;
        if (call->u.call.nargs == 2 && !const_int_arg(S, call->u.call.args[1], name, &nd)) return true;
        if (call->u.call.nargs == 1) {
            double r = is_int ? d : nearbyint(d);
            if (!(fabs(r) < 0x1p63)) {
                tlc_error(S->diag, loc, "round(%g): not an int64", d);
                return true;
            }
            *out = sv_scalar(tir_int(S->arena, is_int ? iv : (int64_t)r, loc), loc);
        } else {
            double p = pow(10.0, (double)(nd < -300 ? -300 : nd > 300 ? 300 : nd));
            *out = sv_scalar(tir_float(S->arena, nearbyint(d * p) / p, TIR_F32, loc), loc);
        }
        return true;
    }
    if (!strcmp(name, "len")) {
        if (!positional_only(S, call, name, 1, 1)) return true;
        sv v = sema_eval(S, call->u.call.args[0]);
        if (v.kind == SV_STRING) {
            *out = sv_scalar(tir_int(S->arena, (int64_t)strlen(v.u.str), loc), loc);
            return true;
        }
        sv *items;
        int n;
        if (seq_items(S, v, call->u.call.args[0]->loc, "len", &items, &n))
            *out = sv_scalar(tir_int(S->arena, n, loc), loc);
        return true;
    }
    if (!strcmp(name, "torch.cuda.get_device_capability")) {
        /* the device a kernel is compiled for is the compile target (the JIT
         * takes the GPU's): its compute capability, (9, 0) for sm_90a */
        if (!positional_only(S, call, name, 0, 1)) return true;
        int sm = tlc_target_of(S->opt->arch)->sm;
        sv *cc = TLC_NEW_ARRAY(S->arena, sv, 2);
        cc[0] = sv_scalar(tir_int(S->arena, sm / 10, loc), loc);
        cc[1] = sv_scalar(tir_int(S->arena, sm % 10, loc), loc);
        *out = make_tuple(cc, 2, loc);
        return true;
    }
    if (!strcmp(name, "torch.cuda.get_device_properties")) {
        /* the device a kernel is compiled for, as get_device_capability */
        if (!positional_only(S, call, name, 0, 1)) return true;
        sv d = sv_error();
        d.kind = SV_DEVICE;
        d.loc = loc;
        *out = d;
        return true;
    }
    if (!strcmp(name, "torch.cuda.is_available")) {
        /* a kernel compiled for a CUDA target runs on a CUDA device */
        if (!positional_only(S, call, name, 0, 0)) return true;
        *out = sv_scalar(tir_int_typed(S->arena, 1, TIR_BOOL, loc), loc);
        return true;
    }
    if (!strcmp(name, "driver.get_num_sms") || !strcmp(name, "tilelang.carver.arch.driver.get_num_sms")) {
        /* TileLang asks the driver while it builds the kernel: a constant of
         * the compile (the JIT's device, --num-sms, else the target's part) */
        if (!positional_only(S, call, name, 0, 0)) return true;
        *out = sv_scalar(tir_int(S->arena, compile_num_sms(S), loc), loc);
        return true;
    }
    if (strncmp(name, "math.", 5) != 0 && strcmp(name, "next_power_of_2") != 0) return false;
    const char *fn = strncmp(name, "math.", 5) ? name : name + 5;
    static const struct { const char *name; double (*fn)(double); } one_float[] = {
        {"sqrt", sqrt}, {"exp", exp}, {"exp2", exp2}, {"log2", log2}, {"log10", log10}, {"fabs", fabs},
        {"sin", sin}, {"cos", cos}, {"tan", tan}, {"tanh", tanh}, {"expm1", expm1}, {"log1p", log1p},
    };
    double d, d2 = 0;
    int64_t i;
    bool is_int;
    for (unsigned k = 0; k < sizeof one_float / sizeof *one_float; k++) {
        if (strcmp(fn, one_float[k].name) != 0) continue;
        if (positional_only(S, call, name, 1, 1) && number_arg(S, call, 0, name, &d, &i, &is_int))
            *out = float_result(S, one_float[k].fn(d), name, loc);
        return true;
    }
    if (!strcmp(fn, "log") || !strcmp(fn, "pow")) {
        bool is_log = fn[0] == 'l', two = call->u.call.nargs == 2;
        if (!positional_only(S, call, name, is_log ? 1 : 2, 2) || !number_arg(S, call, 0, name, &d, &i, &is_int) ||
            (two && !number_arg(S, call, 1, name, &d2, &i, &is_int)))
            return true;
        *out = float_result(S, is_log ? (two ? log(d) / log(d2) : log(d)) : pow(d, d2), name, loc);
        return true;
    }
    if (!strcmp(fn, "ceil") || !strcmp(fn, "floor") || !strcmp(fn, "trunc")) {
        if (!positional_only(S, call, name, 1, 1) || !number_arg(S, call, 0, name, &d, &i, &is_int)) return true;
        if (!is_int) {
            double r = fn[0] == 'c' ? ceil(d) : fn[0] == 'f' ? floor(d) : trunc(d);
            if (!(r >= -9.2e18 && r <= 9.2e18)) {
                tlc_error(S->diag, loc, "'%s' of %g does not fit in 64 bits", name, d);
                return true;
            }
            i = (int64_t)r;
        }
        *out = sv_scalar(tir_int(S->arena, i, loc), loc);
        return true;
    }
    if (!strcmp(fn, "gcd") || !strcmp(fn, "cdiv")) {
        int64_t a, b;
        if (!positional_only(S, call, name, 2, 2) || !const_int_arg(S, call->u.call.args[0], name, &a) ||
            !const_int_arg(S, call->u.call.args[1], name, &b))
            return true;
        if (fn[0] == 'c' && b == 0) {
            tlc_error(S->diag, loc, "'%s' divides by zero", name);
            return true;
        }
        /* tilelang.math.cdiv: (a + b - 1) // b, rounding toward minus infinity */
        int64_t r = fn[0] == 'g' ? tlc_gcd(a, b) : 0;
        if (fn[0] == 'c') {
            int64_t bm1, num;
            if (__builtin_sub_overflow(b, 1, &bm1) || __builtin_add_overflow(a, bm1, &num) ||
                (num == INT64_MIN && b == -1)) {
                tlc_error(S->diag, loc, "'%s' overflows 64 bits", name);
                return true;
            }
            r = num / b - ((num % b != 0) && ((num < 0) != (b < 0)));
        }
        *out = sv_scalar(tir_int(S->arena, r, loc), loc);
        return true;
    }
    if (!strcmp(fn, "next_power_of_2")) {
        int64_t x;
        if (!positional_only(S, call, name, 1, 1) || !const_int_arg(S, call->u.call.args[0], name, &x)) return true;
        int64_t r = next_power_of_2(x);
        if (r < 0) tlc_error(S->diag, loc, "'%s' of %lld does not fit in 64 bits", name, (long long)x);
        else *out = sv_scalar(tir_int(S->arena, r, loc), loc);
        return true;
    }
    tlc_error(S->diag, call->u.call.func->loc, "'%s' is not one of the Python math functions tlc runs at compile time "
              "(ceil, floor, trunc, sqrt, exp, exp2, log, log2, log10, pow, fabs, gcd, sin, cos, tan, tanh, expm1, "
              "log1p; tilelang.math's next_power_of_2 and cdiv)", name);
    return true;
}

bool sema_py_method(sema *S, const ast_expr *call, sv *out) {
    const ast_expr *f = call->u.call.func;
    if (f->kind != AE_ATTR || strcmp(f->u.attr.name, "bit_length") != 0) return false;
    const char *name = sema_dotted_name(S, f);
    if (name && !strcmp(name, "bit_length")) return false; /* a plain name, not a method */
    *out = sv_error();
    if (!positional_only(S, call, "int.bit_length()", 0, 0)) return true;
    int64_t x;
    if (!const_int_arg(S, f->u.attr.value, "int.bit_length()", &x)) return true;
    uint64_t a = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    int bits = 0;
    while (a) {
        bits++;
        a >>= 1;
    }
    *out = sv_scalar(tir_int(S->arena, bits, call->loc), call->loc);
    return true;
}

sv sema_device_attr(sema *S, const ast_expr *e) {
    const tlc_target *t = tlc_target_of(S->opt->arch);
    const char *a = e->u.attr.name;
    int64_t v;
    if (!strcmp(a, "major")) v = t->sm / 10;
    else if (!strcmp(a, "minor")) v = t->sm % 10;
    else if (!strcmp(a, "multi_processor_count")) v = compile_num_sms(S);
    else {
        tlc_error(S->diag, e->loc, "'%s' of the device's properties is not known when tlc compiles (it knows the "
                  "target's major, minor and multi_processor_count)", a);
        return sv_error();
    }
    return sv_scalar(tir_int(S->arena, v, e->loc), e->loc);
}

bool sema_py_attr(sema *S, const ast_expr *e, const char *name, sv *out) {
    double d;
    if (!strcmp(name, "math.pi")) d = 3.141592653589793;
    else if (!strcmp(name, "math.e")) d = 2.718281828459045;
    else if (!strcmp(name, "math.inf")) d = INFINITY;
    else return false;
    *out = sv_scalar(tir_float(S->arena, d, TIR_F32, e->loc), e->loc);
    return true;
}

/* n copies of items[0 .. m) */
static bool repeat(sema *S, sv *items, int m, int64_t times, tlc_loc loc, sv **out, int *n) {
    if (times < 0) times = 0;
    if (m && times > MAX_SEQ_ITEMS / m) {
        tlc_error(S->diag, loc, "this sequence would have more than %d items", MAX_SEQ_ITEMS);
        return false;
    }
    if (!spend(S, m * times, loc)) return false;
    *n = (int)(m * times);
    *out = TLC_NEW_ARRAY(S->arena, sv, (size_t)*n + 1);
    for (int i = 0; i < *n; i++) (*out)[i] = items[i % m];
    return true;
}

bool sema_py_binop(sema *S, const ast_expr *e, sv l, sv r, sv *out) {
    bool seq_l = l.kind == SV_TUPLE || l.kind == SV_STRING, seq_r = r.kind == SV_TUPLE || r.kind == SV_STRING;
    if (!seq_l && !seq_r) return false;
    *out = sv_error();
    tlc_loc loc = e->loc;
    ast_op op = e->u.bin.op;
    if (op == AOP_ADD && l.kind == r.kind) {
        if (l.kind == SV_STRING) {
            size_t a = strlen(l.u.str), b = strlen(r.u.str);
            if (!spend(S, (int64_t)(a + b), loc)) return true;
            char *s = TLC_NEW_ARRAY(S->arena, char, a + b + 1);
            memcpy(s, l.u.str, a);
            memcpy(s + a, r.u.str, b + 1);
            *out = string_value(s, loc);
            return true;
        }
        if (l.u.tup.n + r.u.tup.n > MAX_SEQ_ITEMS) {
            tlc_error(S->diag, loc, "this sequence would have more than %d items", MAX_SEQ_ITEMS);
            return true;
        }
        int n = l.u.tup.n + r.u.tup.n;
        if (!spend(S, n, loc)) return true;
        sv *items = TLC_NEW_ARRAY(S->arena, sv, (size_t)n + 1);
        for (int i = 0; i < l.u.tup.n; i++) items[i] = l.u.tup.items[i];
        for (int i = 0; i < r.u.tup.n; i++) items[l.u.tup.n + i] = r.u.tup.items[i];
        *out = make_tuple(items, n, loc);
        return true;
    }
    if (op == AOP_MUL && seq_l != seq_r) {
        sv seq = seq_l ? l : r, times = seq_l ? r : l;
        const ast_expr *at = seq_l ? e->u.bin.rhs : e->u.bin.lhs;
        double d;
        int64_t k;
        bool is_int;
        if (!const_number(S, times, at->loc, "a sequence repeated", &d, &k, &is_int)) return true;
        if (!is_int) {
            tlc_error(S->diag, at->loc, "a sequence is repeated a whole number of times, got a float");
            return true;
        }
        if (seq.kind == SV_STRING) {
            size_t m = strlen(seq.u.str);
            if (k < 0) k = 0;
            if (m && (uint64_t)k > (uint64_t)MAX_SEQ_ITEMS / m) {
                tlc_error(S->diag, loc, "this string would have more than %d characters", MAX_SEQ_ITEMS);
                return true;
            }
            if (!spend(S, (int64_t)m * k, loc)) return true;
            char *s = TLC_NEW_ARRAY(S->arena, char, m * (size_t)k + 1);
            for (int64_t i = 0; i < k; i++) memcpy(s + m * (size_t)i, seq.u.str, m);
            s[m * (size_t)k] = 0;
            *out = string_value(s, loc);
            return true;
        }
        sv *items;
        int n;
        if (repeat(S, seq.u.tup.items, seq.u.tup.n, k, loc, &items, &n)) *out = make_tuple(items, n, loc);
        return true;
    }
    char dl[128], dr[128];
    sema_describe_sv(&l, dl, sizeof dl);
    sema_describe_sv(&r, dr, sizeof dr);
    tlc_error(S->diag, loc, "unsupported operands of '%s': %s and %s (sequences take + with another of their kind, "
              "and * with an integer)", ast_op_str(op), dl, dr);
    return true;
}

/* A slice bound: absent, or a compile-time integer. */
static bool slice_bound(sema *S, const ast_expr *b, bool *given, int64_t *v) {
    *given = b != NULL;
    return !b || const_int_arg(S, b, "a slice of a sequence", v);
}

bool sema_py_subscript(sema *S, const ast_expr *e, sv base, sv *out) {
    if (base.kind != SV_TUPLE && base.kind != SV_STRING) return false;
    *out = sv_error();
    sv *items;
    int n;
    if (base.kind == SV_STRING) {
        if (!string_items(S, base.u.str, e->loc, &items, &n)) return true;
    } else {
        items = base.u.tup.items;
        n = base.u.tup.n;
    }
    if (e->u.sub.nindex != 1) {
        tlc_error(S->diag, e->loc, "a sequence takes one index, got %d", e->u.sub.nindex);
        return true;
    }
    const ast_expr *ix = e->u.sub.index[0];
    sv r = sv_error();
    if (ix->kind != AE_SLICE) {
        int64_t i;
        if (!const_int_arg(S, ix, "an index of a sequence", &i)) return true;
        if (i < -(int64_t)n || i >= n) {
            tlc_error(S->diag, ix->loc, "index %lld is out of range for a sequence of %d item%s", (long long)i, n,
                      n == 1 ? "" : "s");
            return true;
        }
        r = items[i < 0 ? i + n : i];
        r.loc = e->loc;
    } else {
        bool hl, hh, hs;
        int64_t lo = 0, hi = 0, st = 1;
        if (!slice_bound(S, ix->u.slice.lo, &hl, &lo) || !slice_bound(S, ix->u.slice.hi, &hh, &hi) ||
            !slice_bound(S, ix->u.slice.step, &hs, &st))
            return true;
        if (st == 0) {
            tlc_error(S->diag, ix->loc, "slice step must not be zero");
            return true;
        }
        /* Python's slice.indices(n) */
        int64_t lim_lo = st > 0 ? 0 : -1, lim_hi = st > 0 ? n : n - 1;
        if (!hl) lo = st > 0 ? lim_lo : lim_hi;
        else lo = lo < 0 ? (lo + n < lim_lo ? lim_lo : lo + n) : (lo > lim_hi ? lim_hi : lo);
        if (!hh) hi = st > 0 ? lim_hi : lim_lo;
        else hi = hi < 0 ? (hi + n < lim_lo ? lim_lo : hi + n) : (hi > lim_hi ? lim_hi : hi);
        sv *sel = TLC_NEW_ARRAY(S->arena, sv, (size_t)n + 1);
        int m = 0;
        for (int64_t i = lo; st > 0 ? i < hi : i > hi;) {
            sel[m++] = items[i];
            if (__builtin_add_overflow(i, st, &i)) break; /* a step past the int64 range ends it */
        }
        if (base.kind == SV_STRING) {
            char *str = TLC_NEW_ARRAY(S->arena, char, (size_t)m + 1);
            for (int i = 0; i < m; i++) str[i] = sel[i].u.str[0];
            str[m] = 0;
            r = string_value(str, e->loc);
        } else {
            r = make_tuple(sel, m, e->loc);
        }
    }
    *out = r;
    return true;
}

/* ---------------- the file's helper functions ---------------- */
/* A Python function of the file that a kernel or factory calls (kept by the
 * top-level filter, toplevel.h) runs where it is called, on the call's
 * values: its statements are assignments, if, for, assert, return, break,
 * continue and expressions, all on compile-time values except what the
 * function only computes (a scalar passed in flows through as an
 * expression, so `def cdiv(a, b): return (a + b - 1) // b` works at run
 * time too). */
enum { MAX_HELPER_DEPTH = 16 };

const ast_funcdef *sema_helper_named(sema *S, const char *name) {
    int *i = name ? sema_map_get(&S->helper_funcs, name) : NULL;
    return i ? S->module->funcs[*i] : NULL;
}

typedef struct run_state {
    const char *fn;
    bool returned, brk, cont;
    sv value;
} run_state;

static bool run_block(sema *S, const ast_block *b, run_state *r);

static bool run_stmt(sema *S, const ast_stmt *st, run_state *r) {
    if (!spend(S, 1, st->loc)) return false;
    switch (st->kind) {
    case AS_PASS: return true;
    case AS_EXPR: {
        if (!st->u.expr || st->u.expr->kind == AE_STRING) return true; /* docstring */
        int errors0 = S->diag->errors;
        if (sema_py_list_update(S, st->u.expr)) return S->diag->errors == errors0;
        return sema_eval(S, st->u.expr).kind != SV_ERROR;
    }
    case AS_ASSIGN: {
        sv v = sema_eval(S, st->u.assign.value);
        return v.kind != SV_ERROR && bind_target(S, st->u.assign.target, v);
    }
    case AS_ANNASSIGN: {
        if (!st->u.ann.value) return true;
        sv v = sema_eval(S, st->u.ann.value);
        return v.kind != SV_ERROR && bind_target(S, st->u.ann.target, v);
    }
    case AS_AUGASSIGN: {
        const ast_expr *t = st->u.aug.target;
        if (t->kind != AE_NAME) break;
        ast_expr both = {.kind = AE_BINARY, .loc = st->loc};
        both.u.bin.op = st->u.aug.op;
        both.u.bin.lhs = (ast_expr *)t;
        both.u.bin.rhs = st->u.aug.value;
        sv v = sema_eval(S, &both);
        return v.kind != SV_ERROR && bind_target(S, t, v);
    }
    case AS_IF: {
        bool c;
        if (!sema_eval_const_bool(S, st->u.if_.cond, "the condition of an 'if' in a function run at compile time", &c))
            return false;
        return run_block(S, c ? &st->u.if_.then : &st->u.if_.els, r);
    }
    case AS_FOR: {
        sv *items;
        int n;
        if (!iter_items(S, st->u.for_.iter, "a 'for' in a function run at compile time", &items, &n)) return false;
        for (int i = 0; i < n; i++) {
            if (!bind_target(S, st->u.for_.target, items[i]) || !run_block(S, &st->u.for_.body, r)) return false;
            r->cont = false;
            if (r->brk) {
                r->brk = false;
                break;
            }
            if (r->returned) break;
        }
        return true;
    }
    case AS_RETURN:
        r->returned = true;
        if (!st->u.expr) return true;
        r->value = sema_eval(S, st->u.expr);
        return r->value.kind != SV_ERROR;
    case AS_BREAK: r->brk = true; return true;
    case AS_CONTINUE: r->cont = true; return true;
    case AS_ASSERT: {
        int errors0 = S->diag->errors;
        sema_stmt(S, st);
        return S->diag->errors == errors0;
    }
    case AS_RAISE: sema_raise(S, st); return false;
    default: break;
    }
    tlc_error(S->diag, st->loc, "'%s' runs at compile time, where tlc takes assignments to names, if, for, assert, "
              "raise, return, break and continue: not this statement", r->fn);
    return false;
}

static bool run_block(sema *S, const ast_block *b, run_state *r) {
    for (int i = 0; i < b->n; i++) {
        if (!run_stmt(S, b->stmts[i], r)) return false;
        if (r->returned || r->brk || r->cont) break;
    }
    return true;
}

sv sema_py_helper_call(sema *S, const ast_funcdef *h, const ast_expr *call) {
    if (S->helper_depth >= MAX_HELPER_DEPTH) {
        tlc_error(S->diag, call->loc, "'%s' is called inside %d other calls of the file's functions: does it call "
                  "itself?", h->name, S->helper_depth);
        return sv_error();
    }
    const ast_expr **arg = sema_call_args(S, h, call, "function");
    if (!arg) return sv_error();
    sv *vals = TLC_NEW_ARRAY(S->arena, sv, (size_t)h->nparams + 1);
    for (int i = 0; i < h->nparams; i++)
        if ((vals[i] = sema_eval(S, arg[i])).kind == SV_ERROR) return sv_error(); /* in the caller's scope */
    int errors0 = S->diag->errors;
    sema_push_scope(S);
    for (int i = 0; i < h->nparams; i++) sema_bind_value(S, h->params[i].name, h->params[i].loc, vals[i]);
    S->helper_depth++;
    run_state r = {.fn = h->name};
    r.value = sv_error();
    r.value.kind = SV_NONE;
    r.value.loc = call->loc;
    bool ok = run_block(S, &h->body, &r);
    S->helper_depth--;
    sema_pop_scope(S);
    if (!ok || S->diag->errors > errors0) {
        if (S->helper_depth == 0 && S->diag->errors > errors0)
            tlc_note(S->diag, call->loc, "in the call of '%s' here, which tlc runs at compile time", h->name);
        return sv_error();
    }
    if (r.brk || r.cont) {
        tlc_error(S->diag, call->loc, "'%s': 'break' or 'continue' outside a loop", h->name);
        return sv_error();
    }
    r.value.loc = call->loc;
    return r.value;
}

/* ---------------- compile-time loops and list updates ---------------- */
bool sema_py_for(sema *S, const ast_stmt *s) {
    const builtin_spec *b = sema_call_builtin(S, s->u.for_.iter);
    if (b && b->kind == BK_LOOP && b->id != B_RANGE && b->id != B_SERIAL) return false; /* a kernel's loop */
    sv *items;
    int n;
    if (!iter_items(S, s->u.for_.iter, "a 'for' before the kernel", &items, &n)) return true;
    for (int i = 0; i < n && !tlc_diag_too_many(S->diag); i++) {
        if (!spend(S, 1, s->loc) || !bind_target(S, s->u.for_.target, items[i])) return true;
        for (int j = 0; j < s->u.for_.body.n && !tlc_diag_too_many(S->diag); j++) sema_stmt(S, s->u.for_.body.stmts[j]);
    }
    return true;
}

bool sema_py_list_update(sema *S, const ast_expr *e) {
    if (e->kind != AE_CALL || e->u.call.func->kind != AE_ATTR) return false;
    const ast_expr *f = e->u.call.func;
    bool append = !strcmp(f->u.attr.name, "append"), extend = !strcmp(f->u.attr.name, "extend");
    if ((!append && !extend) || f->u.attr.value->kind != AE_NAME) return false;
    sym *list = sema_lookup(S, f->u.attr.value->u.name);
    if (!list || list->kind != SYM_CONST || list->value.kind != SV_TUPLE) return false;
    if (!positional_only(S, e, append ? "list.append" : "list.extend", 1, 1)) return true;
    sv v = sema_eval(S, e->u.call.args[0]);
    if (v.kind == SV_ERROR) return true;
    sv *more = &v;
    int m = 1;
    if (extend && !seq_items(S, v, e->u.call.args[0]->loc, "list.extend", &more, &m)) return true;
    int n = list->value.u.tup.n;
    if (n + m > MAX_SEQ_ITEMS) {
        tlc_error(S->diag, e->loc, "this sequence would have more than %d items", MAX_SEQ_ITEMS);
        return true;
    }
    if (!spend(S, m, e->loc)) return true;
    sv *items = TLC_NEW_ARRAY(S->arena, sv, (size_t)(n + m) + 1);
    for (int i = 0; i < n; i++) items[i] = list->value.u.tup.items[i];
    for (int i = 0; i < m; i++) items[n + i] = more[i];
    list->value = make_tuple(items, n + m, list->value.loc); /* the list itself changes, as Python's does */
    return true;
}
