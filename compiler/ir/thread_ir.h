/* Thread IR: the per-thread program after lowering (docs/architecture.md,
 * "Lowering to Thread IR"). Structured (loops / ifs, no CFG), typed, close to PTX:
 * what one thread of the block executes. Scalar variables and per-thread
 * register arrays are mutable slots (codegen makes them allocas; LLVM's SROA
 * / mem2reg turn them into SSA registers once loops over register arrays are
 * fully unrolled). Everything lives in the compilation's arena.
 *
 * Lowering (compiler/transform/lower_*.c) builds it from Tile IR + layouts;
 * codegen (compiler/codegen/) turns it into an LLVM module and PTX. */
#ifndef TLC_THREAD_IR_H
#define TLC_THREAD_IR_H
#include <stdbool.h>
#include <stdint.h>
#include "../support/arena.h"
#include "../support/strbuf.h"
#include "tir.h"

/* ---------------- types ---------------- */
typedef enum {
    TH_VOID, TH_I1, TH_I8, TH_I16, TH_I32, TH_I64,
    TH_F16, TH_BF16, TH_F32, TH_F64,
    TH_PTR, /* pointer; see addrspace */
} th_base;

typedef enum { TH_AS_GENERIC = 0, TH_AS_GLOBAL = 1, TH_AS_SHARED = 3, TH_AS_CONST = 4, TH_AS_LOCAL = 5 } th_addrspace;

typedef struct th_type {
    th_base base;
    uint8_t lanes;     /* vector width: 1 scalar, 2/4/8 for vector loads/stores */
    uint8_t addrspace; /* TH_PTR only */
} th_type;

th_type th_scalar(th_base b);
th_type th_vec(th_base b, int lanes);
th_type th_ptr(th_addrspace as);
th_type th_from_dtype(tir_dtype t); /* float8 -> I8 storage, bool -> I8 storage in memory */
int th_type_bytes(th_type t);        /* size of one value (lanes * elem) */
bool th_type_eq(th_type a, th_type b);

/* ---------------- variables ---------------- */
typedef struct th_var {
    const char *name;
    int id;
    th_type type;
    int array_len; /* 0: scalar slot; > 0: per-thread register array of array_len elements */
} th_var;

/* ---------------- expressions ---------------- */
typedef enum {
    THE_INT, THE_FLOAT,
    THE_VAR,        /* read scalar slot */
    THE_ARRAY_READ, /* read element of a register array: var[index] */
    THE_PARAM,      /* kernel parameter #index (value) */
    THE_SPECIAL,    /* special register */
    THE_SHARED_PTR, /* pointer (addrspace 3) to dynamic shared memory + byte offset expr */
    THE_PTR_ADD,    /* ptr + index elements of elem type (GEP) */
    THE_LOAD,       /* load `type` (scalar or vector) from ptr; align in bytes */
    THE_BIN, THE_UN, THE_CMP, THE_SELECT,
    THE_CONVERT,    /* numeric conversion to type (fp<->int, widths, f32->f16 rn) */
    THE_BITCAST,    /* same size reinterpretation (e.g. vec<2 x f16> <-> i32) */
    THE_EXTRACT,    /* vector lane: a[lane] (lane constant) */
    THE_BUILD,      /* vector from lanes[] */
    THE_INTRIN,     /* intrinsic call with a value (see th_intrin) */
} th_expr_kind;

typedef enum {
    THS_TID_X, THS_TID_Y, THS_TID_Z, THS_NTID_X,
    THS_CTAID_X, THS_CTAID_Y, THS_CTAID_Z,
    THS_NCTAID_X, THS_NCTAID_Y, THS_NCTAID_Z,
    THS_LANEID, THS_WARPID /* tid.x / 32, computed, not %warpid */,
} th_special;

typedef enum {
    THB_ADD, THB_SUB, THB_MUL, THB_DIV /* float div, or signed int div */, THB_REM /* signed */,
    THB_UDIV, THB_UREM, THB_FLOORDIV, THB_FLOORMOD, /* Python semantics on signed ints */
    THB_MIN, THB_MAX, /* float: maxnum semantics; int: signed */
    THB_AND, THB_OR, THB_XOR, THB_SHL, THB_SHR /* arithmetic */, THB_LSHR,
    THB_POW,
    THB_OR_DISJOINT, /* x | y where x and y have no bit in common (so also x + y) */
    THB_UMIN, THB_UMAX, /* unsigned ints */
} th_binop;
typedef enum { THU_NEG, THU_NOT /* bitwise, i1 logical */, THU_ABS, THU_SQRT,
               THU_EXP, THU_LOG, THU_EXP2_APPROX, THU_LOG2_APPROX, THU_RSQRT_APPROX,
               THU_RCP_APPROX, THU_EXP2, THU_LOG2, THU_RSQRT,
               THU_FLOOR, THU_CEIL, THU_SIN_APPROX, THU_COS_APPROX } th_unop;
typedef enum { THC_EQ, THC_NE, THC_LT, THC_LE, THC_GT, THC_GE, /* signed / ordered */
               THC_ULT, THC_ULE, THC_UGT, THC_UGE /* unsigned ints */ } th_cmpop;

typedef enum {
    THI_SHFL_BFLY,   /* shfl.sync.bfly.b32 (value i32/f32, lane mask, width 32): args value, xor-mask */
    THI_SHFL_IDX,    /* shfl.sync.idx.b32: args value, src lane */
    THI_FMA,         /* fma(a, b, c) */
    THI_E4M3_TO_F32, /* a float8_e4m3 value's bits (i8) -> f32 (cvt.rn.f16x2.e4m3x2) */
    THI_F32_TO_E4M3, /* f32 -> float8_e4m3 bits (i8): nearest, saturated to +-448 (cvt.rn.satfinite.e4m3x2.f32) */
    THI_E5M2_TO_F32, /* a float8_e5m2 value's bits (i8) -> f32 (cvt.rn.f16x2.e5m2x2) */
    THI_F32_TO_E5M2, /* f32 -> float8_e5m2 bits (i8): nearest, saturated to +-57344 (cvt.rn.satfinite.e5m2x2.f32) */
} th_intrin;

typedef struct th_expr th_expr;
struct th_expr {
    th_expr_kind kind;
    th_type type;
    union {
        int64_t ival;
        double fval;
        struct { struct th_var *var; th_expr *index; } var;  /* VAR (index NULL), ARRAY_READ */
        int param;                                           /* PARAM */
        th_special special;
        th_expr *offset;                                     /* SHARED_PTR: byte offset (i32) */
        struct { th_expr *ptr, *index; } ptr_add;            /* element type = expr type's pointee: see elem */
        struct { th_expr *ptr; int align; } load;
        struct { int op; th_expr *a, *b; } bin;              /* BIN (th_binop), CMP (th_cmpop) */
        struct { th_unop op; th_expr *a; } un;
        struct { th_expr *cond, *a, *b; } sel;
        /* CONVERT, BITCAST; uns (CONVERT): the integer side is unsigned (zero
         * extension, unsigned <-> float) */
        struct { th_expr *a; bool uns; } conv;
        struct { th_expr *vec; int lane; } extract;
        struct { th_expr **lanes; int n; } build;
        struct { th_intrin id; th_expr **args; int nargs; } intrin;
    } u;
    th_type elem; /* PTR_ADD: element type the index scales by */
};

/* ---------------- statements ---------------- */
typedef enum {
    THS_SEQ,
    THS_FOR,     /* for var in [start, end) step: body; unroll: fully unroll (constant trip count) */
    THS_IF,
    THS_ASSIGN,  /* var = value  or  var[index] = value */
    THS_STORE,   /* *ptr = value (scalar or vector); align in bytes */
    THS_BARRIER, /* bar.sync id (0: whole block), nthreads (0: all) */
    THS_ATOMIC_ADD, /* atomicAdd(ptr, value) (f32 / i32 / f16x2) */
    THS_ASM,     /* inline PTX with operands (escape hatch for wgmma / TMA / mbarrier later) */
    THS_COMMENT, /* printed in --emit=thread, ignored by codegen */
} th_stmt_kind;

typedef struct th_stmt th_stmt;
struct th_stmt {
    th_stmt_kind kind;
    tlc_loc loc; /* source location the statement came from (for debug dumps) */
    union {
        struct { th_stmt **stmts; int n; } seq;
        /* cond (NULL: none): the loop also stops once it is false, tested
         * at the head before each iteration (while loops, break) */
        struct { th_var *var; th_expr *start, *end, *cond; int64_t step; bool unroll; th_stmt *body; } for_;
        struct { th_expr *cond; th_stmt *then, *els; } if_;
        struct { th_var *var; th_expr *index; th_expr *value; } assign;
        struct { th_expr *ptr; th_expr *value; int align; } store;
        struct { int id; int nthreads; } barrier;
        struct { th_expr *ptr; th_expr *value; } atomic;
        struct {
            const char *text;        /* PTX template with $0.. operands */
            const char *constraints; /* LLVM constraint string */
            th_expr **args; int nargs;
            th_var **outs; int nouts; /* scalar slots receiving outputs */
            bool has_side_effects;
        } asm_;
        const char *comment;
    } u;
};

/* ---------------- kernel ---------------- */
typedef struct th_param {
    const char *name;
    th_type type; /* TH_PTR (global) for tensors, ints / floats for dims and scalars */
    int byte_size_override; /* > 0: opaque .param byte block (e.g. 128-byte CUtensorMap), aligned 64 */
} th_param;

/* Optional facts about a pointer parameter (th_kernel.param_attrs), kept out
 * of th_param so existing positional th_param initializers stay valid. */
typedef struct th_param_attr {
    bool readonly; /* the kernel never writes through it -> `noalias readonly`, so NVPTX
                      loads through it with ld.global.nc */
    int align;     /* byte alignment of the base that the runtime checks at launch (0: none) */
} th_param_attr;

typedef struct th_kernel {
    const char *name;
    th_param *params; int nparams;
    th_var **vars; int nvars;
    int threads;               /* maxntid */
    int min_blocks_per_sm;     /* minnctapersm (0: unset) */
    bool fast_math;            /* the Tile IR kernel's: codegen approximates as with tlc_codegen_options.fast_math */
    /* Waits for the stream's previous grid at its start (griddepcontrol.wait,
     * pdl_sync): its pointers are not `noalias`, so that no load becomes
     * ld.global.nc, which ptxas may move above the wait. */
    bool pdl_wait;
    /* sync_grid's counter (ops/sync_grid.c): a u32 variable of the PTX
     * module by this name, which the generators declare; NULL: none */
    const char *grid_sync_counter;
    int64_t dyn_shared_bytes;  /* dynamic shared memory, base aligned to 1024 */
    /* The PTX ISA version (x 10) its instructions need when the target's
     * (tlc_target.ptx_isa) is older (float8 forms: 8.1, 8.4); 0: the target's */
    int ptx_isa;
    th_stmt *body;
    /* Added with codegen: */
    th_param_attr *param_attrs; /* NULL, or nparams entries */
    int vars_cap;               /* capacity of vars (th_new_var grows it; 0 if set by hand) */
} th_kernel;

typedef struct th_module {
    tlc_arch arch;
    th_kernel **kernels; int nkernels;
    /* The launch metadata block that travels with the PTX (include/tlc/
     * metadata.h), its lines without the comment prefix codegen adds. */
    const char *metadata;
} th_module;

/* The PTX ISA version (x 10) a module is emitted with: the target's
 * target_isa, or what a kernel needs beyond it. */
int th_module_ptx_isa(const th_module *m, int target_isa);

/* Constructors (thread_ir.c). */
th_var *th_new_var(tlc_arena *a, th_kernel *k, const char *name, th_type t, int array_len);
th_expr *th_int(tlc_arena *a, th_base t, int64_t v);
th_expr *th_float(tlc_arena *a, th_base t, double v);
th_expr *th_read(tlc_arena *a, th_var *v);
th_expr *th_array_read(tlc_arena *a, th_var *v, th_expr *index);
th_expr *th_param_ref(tlc_arena *a, const th_kernel *k, int index);
th_expr *th_special_reg(tlc_arena *a, th_special s);
th_expr *th_shared_ptr(tlc_arena *a, th_expr *byte_offset);
th_expr *th_ptr_add(tlc_arena *a, th_expr *ptr, th_expr *index, th_type elem);
th_expr *th_load(tlc_arena *a, th_expr *ptr, th_type t, int align);
th_expr *th_bin(tlc_arena *a, th_binop op, th_expr *x, th_expr *y);   /* folds constants */
th_expr *th_un(tlc_arena *a, th_unop op, th_expr *x);
th_expr *th_cmp(tlc_arena *a, th_cmpop op, th_expr *x, th_expr *y);
th_expr *th_select(tlc_arena *a, th_expr *c, th_expr *x, th_expr *y);
th_expr *th_convert(tlc_arena *a, th_expr *x, th_type t);            /* no-op if same type */
th_expr *th_convert_unsigned(tlc_arena *a, th_expr *x, th_type t);   /* x or the result an unsigned int */
th_expr *th_bitcast(tlc_arena *a, th_expr *x, th_type t);
th_expr *th_extract(tlc_arena *a, th_expr *vec, int lane);
th_expr *th_build(tlc_arena *a, th_type t, th_expr **lanes, int n);
th_expr *th_intrin_call(tlc_arena *a, th_intrin id, th_type t, th_expr **args, int nargs);
th_stmt *th_seq(tlc_arena *a, th_stmt **stmts, int n);
th_stmt *th_for(tlc_arena *a, th_var *v, th_expr *start, th_expr *end, int64_t step, bool unroll, th_stmt *body);
/* Statements codegen emits for s, counting an unrolled loop's body once per
 * iteration (constant bounds), saturating at `cap`. */
int64_t th_unrolled_size(const th_stmt *s, int64_t cap);
th_stmt *th_if(tlc_arena *a, th_expr *c, th_stmt *then, th_stmt *els);
th_stmt *th_assign(tlc_arena *a, th_var *v, th_expr *index, th_expr *value);
th_stmt *th_store(tlc_arena *a, th_expr *ptr, th_expr *value, int align);
th_stmt *th_barrier(tlc_arena *a);
th_stmt *th_comment(tlc_arena *a, const char *text);
/* Added with codegen: */
th_stmt *th_barrier_sync(tlc_arena *a, int id, int nthreads); /* bar.sync id, nthreads (0: all) */
th_stmt *th_atomic_add(tlc_arena *a, th_expr *ptr, th_expr *value);
th_stmt *th_asm(tlc_arena *a, const char *text, const char *constraints, th_expr **args, int nargs,
                th_var **outs, int nouts, bool has_side_effects);
bool th_expr_const_int(const th_expr *e, int64_t *out); /* true if e is THE_INT */
/* Walking Thread IR: the direct operands of an expression (a load's
 * pointer, a vector's lanes, an intrinsic's arguments, ...), the
 * expressions a statement itself evaluates (a loop's bounds, an if's
 * condition, an assignment's index and value, a store's pointer and value,
 * an asm's inputs) and the statements nested in one (a sequence's, a
 * loop's body, an if's paths). Each returns an array of *n entries, some
 * of which may be NULL: the node's own array, or tmp filled in. */
const th_expr *const *th_expr_children(const th_expr *e, int *n, const th_expr *tmp[3]);
const th_expr *const *th_stmt_exprs(const th_stmt *s, int *n, const th_expr *tmp[3]);
const th_stmt *const *th_stmt_children(const th_stmt *s, int *n, const th_stmt *tmp[2]);
/* v wrapped to the width of integer type t (i1: 0 / 1; i8, i16, i32 sign-extended). */
int64_t th_wrap_int(th_base t, uint64_t v);
/* x op y on constants of integer type t, as th_bin folds them (wrapped;
 * false where the result is not defined: division by 0, shifts out of
 * range, or op not folded, e.g. unsigned division). */
bool th_fold_int(th_binop op, th_base t, int64_t x, int64_t y, int64_t *r);
/* Folds a comparison of integer constants of type t; false if op is unknown. */
bool th_fold_cmp(th_cmpop op, th_base t, int64_t x, int64_t y, bool *out);
/* A power's exponent that codegen expands into multiplications: an integer
 * constant in -64..64 (also a whole float, also through a conversion). */
bool th_pow_small_int(const th_expr *e, int64_t *n);
const char *th_type_name(th_type t, char buf[32]);      /* "i32", "f16x8", "ptr<global>" */
void th_print_expr(tlc_strbuf *sb, const th_expr *e);
void th_print_stmt(tlc_strbuf *sb, const th_stmt *s, int indent);

/* Printer (thread_print.c): --emit=thread. */
void th_print_module(tlc_strbuf *sb, const th_module *m);

/* Codegen (compiler/codegen/): Thread IR -> LLVM module -> PTX text.
 * Returns an arena string (PTX with the kernels' metadata as leading
 * comment lines), or NULL with an error in diag. */
/* Who turns Thread IR into PTX: tlc's own generator (codegen/ptx_direct.c,
 * the default), which leaves the optimization to ptxas, or LLVM's NVPTX
 * backend. */
typedef enum { TLC_BACKEND_LLVM = 0, TLC_BACKEND_DIRECT = 1 } tlc_backend;
/* What the CLI, the compile options and the JIT take when not told. */
#define TLC_DEFAULT_BACKEND TLC_BACKEND_DIRECT

typedef struct tlc_codegen_options {
    tlc_arch arch;
    int opt_level;  /* 3 by default */
    bool fast_math; /* approximate exp2/rsqrt already explicit in IR; this allows reassociation */
    tlc_backend backend;
} tlc_codegen_options;
char *tlc_codegen_llvm_ir(const th_module *m, const tlc_codegen_options *o, tlc_arena *a, tlc_diag *diag); /* --emit=llvm */
char *tlc_codegen_ptx(const th_module *m, const tlc_codegen_options *o, tlc_arena *a, tlc_diag *diag);     /* --emit=ptx */
/* ptxas on the PTX (path from $TLC_PTXAS, the build-time TLC_PTXAS, or PATH); returns cubin bytes. */
unsigned char *tlc_ptxas_assemble(const char *ptx, tlc_arch arch, size_t *size, tlc_arena *a, tlc_diag *diag);
bool tlc_ptxas_available(void);
#endif
