/* Shared state and helpers of tlc's own PTX generator (private to
 * codegen/): ptx_direct.c emits kernels and statements, ptx_direct_expr.c
 * expressions, arithmetic, memory accesses and the common subexpressions.
 * No LLVM here. */
#ifndef TLC_PTX_DIRECT_INTERNAL_H
#define TLC_PTX_DIRECT_INTERNAL_H
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include "../ir/thread_ir.h"
#include "../support/strbuf.h"
#include "../target/target.h"

typedef enum { RC_P, RC_H, RC_R, RC_D } reg_class; /* .pred, .b16, .b32, .b64 */

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
    const th_expr *def; /* the value of its one assignment (with assigns == 1) */
    int ptr_param;      /* a pointer assigned once from parameter ptr_param (+ offsets); -1 */
    /* the scan of an if's path for predication (predicable()): reads and
     * assignments in it, elements assigned so far, a read of a value from
     * before it */
    int path_scan, path_reads, path_assigns;
    bool *path_written;
    bool path_live_in;
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

/* The CSE table's first buckets; they double whenever the entries
 * outnumber them twice (stale entries stay until their scope ends). */
enum { PD_CSE_BUCKETS = 4096 };
/* An if's path of at most this many assignments and stores is predicated, not branched around. */
enum { PD_PREDICATED_STMTS = 256 };

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
    int *cse_head, ncse_buckets;
    /* loads of a run of statements merged into wider ones: each load
     * expression's lane (pd_merge_loads) */
    struct { const th_expr *e, *wide; int lane; bool done; pd_opnd v; } *merged;
    int nmerged, cap_merged;
    bool merge_window; /* a sequence's window of merged loads is being emitted */
    /* an if's path emitted predicated: the predicate its memory accesses
     * run under (pd_ins_access) */
    const char *guard;
    int path_scan;
    int loop_mark; /* the innermost loop being emitted (its mark; 0: none) */
    tlc_loc loc;
    bool used_smem; /* the kernel being emitted reads the shared window's base */
    bool failed;
} pd_ctx;


void pd_error(pd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* p with room for element n (elem bytes each): doubled when full. */
void *pd_realloc(void *p, size_t bytes); /* aborts when out of memory */
void *pd_grow(void *p, int n, int *cap, size_t elem);
/* Loads in the expressions of stmts[0..n) (assignments only: nothing in
 * between writes memory) that read adjacent elements through one address
 * become one vector load, emitted where the first of them is evaluated;
 * the others take its lanes. Returns how many statements it looked at. */
int pd_merge_loads(pd_ctx *c, const th_stmt *const *stmts, int n);
/* The multiplier of a 32-bit division by the constant d >= 2 (not a power
 * of two): unsigned, q = (t + ((x - t) >> 1)) >> (l - 1) with t the high
 * word of x * m; signed (Hacker's Delight's magic()), q = (mulhi(x, m)
 * [+ x where m < 0]) >> shift, plus 1 where x < 0. */
void pd_udiv_magic(uint32_t d, uint32_t *m, int *l);
void pd_sdiv_magic(int32_t d, int32_t *mult, int *shift);
/* Marks the variables s assigns with `mark` (pd_var.loop_mark). */
void pd_mark_assigned(pd_ctx *c, const th_stmt *s, int mark);
/* e is pure and reads no variable marked with `mark`. */
bool pd_loop_invariant(pd_ctx *c, const th_expr *e, int mark);
/* A global pointer p + (x + y) elements with p and exactly one of x, y
 * invariant in the loop `mark`, as (p + invariant) + the other (the
 * address arithmetic is 64-bit and wraps, so the order is free): the inner
 * sum is then hoisted, and one add is left in the loop. Otherwise e. */
const th_expr *pd_ptr_reassoc(pd_ctx *c, const th_expr *e, int mark);
const char *pd_address(pd_ctx *c, const th_expr *p, int64_t *off);
const char *pd_as_reg(pd_ctx *c, pd_opnd o, reg_class rc);
pd_opnd pd_convert_lane(pd_ctx *c, pd_opnd x, th_type from, th_type to);
int pd_cse_mark(const pd_ctx *c);
void pd_cse_truncate(pd_ctx *c, int mark);
pd_val pd_expr(pd_ctx *c, const th_expr *e);
const char *pd_f32_imm(pd_ctx *c, double v);
const char *pd_f64_imm(pd_ctx *c, double v);
void pd_ins(pd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A memory access: under the guard of a predicated path, if any. */
void pd_ins_access(pd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
pd_opnd pd_int_op(pd_ctx *c, int64_t v);
const char *pd_local_addr(pd_ctx *c, pd_var *pv, pd_opnd index);
/* Element `index` of a register array that lives in local memory, stored. */
void pd_local_store(pd_ctx *c, pd_var *pv, pd_opnd index, const pd_val *x);
const char *pd_newreg(pd_ctx *c, reg_class rc);
const char *pd_newreg_t(pd_ctx *c, th_type t);
const char *pd_param_name(pd_ctx *c, int i);
pd_opnd pd_param_value(pd_ctx *c, int i, th_type want);
int pd_ptr_param_of(pd_ctx *c, const th_expr *e);
void pd_read_elem(pd_ctx *c, pd_var *pv, int elem, pd_val *v);
/* One lane of element `elem` (for a vector of 16-bit lanes kept as words,
 * only the lane's word is unpacked). */
pd_opnd pd_read_lane(pd_ctx *c, pd_var *pv, int elem, int lane);
const char *pd_space_of(pd_ctx *c, const th_expr *ptr, bool load);
pd_opnd pd_special(pd_ctx *c, th_special s);
const th_expr *pd_split_pointer(pd_ctx *c, const th_expr *e, int64_t *off);
void pd_store(pd_ctx *c, const th_expr *p, const pd_val *val, th_type t, int align);
int pd_to_words(pd_ctx *c, const pd_val *v, th_type t, int wbytes, const char **w);
void pd_touch(pd_ctx *c, pd_var *pv);
pd_var *pd_var_entry(pd_ctx *c, const th_var *v);

static inline int base_bytes(th_base b) { return th_type_bytes(th_scalar(b)); }

static inline bool is_intb(th_base b) { return b >= TH_I1 && b <= TH_I64; }

static inline bool is_floatb(th_base b) { return b >= TH_F16 && b <= TH_F64; }

static inline reg_class class_of(th_type t) {
    switch (t.base) {
    case TH_I1: return RC_P;
    case TH_I8: case TH_I16: case TH_F16: case TH_BF16: return RC_H;
    case TH_I32: case TH_F32: return RC_R;
    case TH_PTR: return t.addrspace == TH_AS_SHARED ? RC_R : RC_D;
    default: return RC_D;
    }
}

static inline bool is_var_reg(const char *r) { return r && r[0] == '%' && r[1] == 'v'; }

static inline int lanes_of(th_type t) { return t.lanes > 1 ? t.lanes : 1; }

static inline const char *bits_of(reg_class rc) {
    static const char *const b[] = {"pred", "b16", "b32", "b64"};
    return b[rc];
}

static inline const char *stype(th_base b) {
    switch (b) {
    case TH_I8: case TH_I16: return "s16";
    case TH_I32: return "s32";
    default: return "s64";
    }
}

static inline const char *utype(th_base b) {
    switch (b) {
    case TH_I8: case TH_I16: return "u16";
    case TH_I32: return "u32";
    default: return "u64";
    }
}

static inline const char *btype(th_base b) {
    switch (b) {
    case TH_I8: case TH_I16: case TH_F16: case TH_BF16: return "b16";
    case TH_I32: case TH_F32: return "b32";
    default: return "b64";
    }
}

static inline pd_opnd reg_op(const char *r) { return (pd_opnd){r, false, 0, NULL, TH_VOID, NULL, false, false, 0}; }

static inline int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

static inline int64_t wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

static inline int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
#endif
