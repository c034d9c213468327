/* AST: a faithful, Python-shaped tree of the source. The parser builds it
 * without knowing what `copy` or `Kernel` mean; sema gives names meaning.
 * All nodes live in the compilation's arena. */
#ifndef TLC_AST_H
#define TLC_AST_H
#include <stdbool.h>
#include <stdint.h>
#include "../support/arena.h"
#include "../support/diag.h"
#include "../support/strbuf.h"
#include "toplevel.h"

/* The parser rejects trees deeper than this (statement nesting plus
 * expression nesting), so every pass may recurse over the AST freely. */
#define TLC_AST_MAX_DEPTH 500

typedef struct ast_expr ast_expr;
typedef struct ast_stmt ast_stmt;

typedef enum {
    AE_NAME,      /* x */
    AE_INT,       /* 42 (overflow is diagnosed by the lexer) */
    AE_FLOAT,     /* 1.5, 1e-5 */
    AE_STRING,    /* "col" */
    AE_BOOL,      /* True / False */
    AE_NONE,      /* None */
    AE_ELLIPSIS,  /* ... (annotations: Callable[..., Any]) */
    AE_ATTR,      /* value.name  (T.copy, GemmWarpPolicy.FullCol, T.layout.x) */
    AE_CALL,      /* func(args..., kw=value...) */
    AE_SUBSCRIPT, /* value[index, ...] ; index entries may be AE_SLICE */
    AE_SLICE,     /* lo:hi[:step], any part may be NULL */
    AE_TUPLE,     /* (a, b) or a, b */
    AE_LIST,      /* [a, b] */
    AE_DICT,      /* {k: v, ...} */
    AE_BINARY,    /* a op b */
    AE_UNARY,     /* -a, +a, not a, ~a */
    AE_COMPARE,   /* a < b (chains are nested: a < b < c -> (a<b) and (b<c) by sema) */
    AE_BOOLOP,    /* a and b, a or b */
    AE_IFEXP,     /* a if c else b */
    AE_COMP,      /* [elt for target in iter if cond] or (elt for ...): compile-time Python */
    AE_LAMBDA,    /* lambda a, b: body (T.Layout's index map) */
} ast_expr_kind;

typedef enum {
    AOP_ADD, AOP_SUB, AOP_MUL, AOP_DIV, AOP_FLOORDIV, AOP_MOD, AOP_POW,
    AOP_LSHIFT, AOP_RSHIFT, AOP_BITAND, AOP_BITOR, AOP_BITXOR,
    AOP_LT, AOP_LE, AOP_GT, AOP_GE, AOP_EQ, AOP_NE,
    AOP_IS, AOP_ISNOT, AOP_IN, AOP_NOTIN, /* on compile-time values only */
    AOP_AND, AOP_OR,
    AOP_NEG, AOP_POS, AOP_NOT, AOP_INVERT,
} ast_op;

const char *ast_op_str(ast_op op); /* "+", "//", "and", "not", ... */

typedef struct ast_kwarg {
    const char *name;
    tlc_loc loc;
    ast_expr *value;
} ast_kwarg;

struct ast_expr {
    ast_expr_kind kind;
    tlc_loc loc;
    union {
        const char *name;                                   /* AE_NAME */
        int64_t ival;                                       /* AE_INT */
        double fval;                                        /* AE_FLOAT */
        const char *str;                                    /* AE_STRING */
        bool bval;                                          /* AE_BOOL */
        struct { ast_expr *value; const char *name; } attr; /* AE_ATTR */
        struct {
            ast_expr *func;
            ast_expr **args; int nargs;
            ast_kwarg *kwargs; int nkwargs;
        } call;                                             /* AE_CALL */
        struct { ast_expr *value; ast_expr **index; int nindex; } sub; /* AE_SUBSCRIPT */
        struct { ast_expr *lo, *hi, *step; } slice;         /* AE_SLICE */
        struct { ast_expr **items; int n; } seq;            /* AE_TUPLE, AE_LIST */
        struct { ast_expr **keys, **values; int n; } dict;  /* AE_DICT */
        struct { ast_op op; ast_expr *lhs, *rhs; } bin;     /* AE_BINARY, AE_COMPARE, AE_BOOLOP */
        struct { ast_op op; ast_expr *operand; } un;        /* AE_UNARY */
        struct { ast_expr *cond, *then, *els; } ifexp;      /* AE_IFEXP */
        /* AE_COMP: one `for` clause, at most one `if` (cond may be NULL) */
        struct { ast_expr *elt, *target, *iter, *cond; bool list; } comp;
        /* AE_LAMBDA: parameter names (plain names only) and the body */
        struct { ast_expr **params; int nparams; ast_expr *body; } lambda;
    } u;
};

typedef enum {
    AS_EXPR,      /* an expression statement (a call: copy(...), gemm(...)) */
    AS_ASSIGN,    /* target = value   (target: name, subscript, tuple) */
    AS_AUGASSIGN, /* target op= value */
    AS_ANNASSIGN, /* target: annotation [= value] */
    AS_FOR,       /* for target in iter: body */
    AS_WHILE,     /* while cond: body (parsed so sema can reject it clearly) */
    AS_IF,        /* if cond: then [else: els]   (elif = else containing one AS_IF) */
    AS_WITH,      /* with item [as target]: body */
    AS_PASS,
    AS_RETURN,    /* return [value] */
    AS_BREAK, AS_CONTINUE,
    AS_ASSERT,    /* assert cond [, message]: checked when cond is a compile-time constant */
    AS_FUNCDEF,   /* nested def (a kernel inside a @jit factory is not supported; sema diagnoses) */
    AS_RAISE,     /* raise [exception]: an error where compile-time code reaches it (u.expr, may be NULL) */
} ast_stmt_kind;

typedef struct ast_block {
    ast_stmt **stmts;
    int n;
} ast_block;

typedef struct ast_param {
    const char *name;
    tlc_loc loc;
    ast_expr *annotation; /* may be NULL */
    ast_expr *default_value; /* may be NULL */
} ast_param;

typedef struct ast_decorator {
    ast_expr *expr; /* e.g. call jit(block_M=128, ...) or name `jit` */
    tlc_loc loc;
} ast_decorator;

typedef struct ast_funcdef {
    const char *name;
    tlc_loc loc;
    ast_decorator *decorators; int ndecorators;
    ast_param *params; int nparams;
    ast_block body;
} ast_funcdef;

struct ast_stmt {
    ast_stmt_kind kind;
    tlc_loc loc;
    union {
        ast_expr *expr;                                               /* AS_EXPR, AS_RETURN (may be NULL) */
        struct { ast_expr *target, *value; } assign;                  /* AS_ASSIGN */
        struct { ast_op op; ast_expr *target, *value; } aug;          /* AS_AUGASSIGN */
        struct { ast_expr *target, *annotation, *value; } ann;        /* AS_ANNASSIGN */
        struct { ast_expr *target, *iter; ast_block body; } for_;     /* AS_FOR */
        struct { ast_expr *cond; ast_block body; } while_;            /* AS_WHILE */
        struct { ast_expr *cond; ast_block then, els; } if_;          /* AS_IF */
        struct { ast_expr *item, *target; ast_block body; } with;     /* AS_WITH (target may be NULL) */
        struct { ast_expr *cond, *msg; } assert_;                     /* AS_ASSERT (msg may be NULL) */
        ast_funcdef *func;                                            /* AS_FUNCDEF */
    } u;
};

/* A whole file: top-level kernels (functions) in order. `import` / `from`
 * lines are accepted and dropped by the parser. Top-level assignments of
 * constants (NAME = expr) are kept as module-level parameters. The Python
 * the top-level filter skipped (toplevel.h) never reaches the parser; the
 * functions among it are listed for diagnostics. */
typedef struct ast_module {
    ast_funcdef **funcs; int nfuncs;
    ast_stmt **globals; int nglobals; /* top-level AS_ASSIGN statements */
    const tlc_skipped_def *skipped; int nskipped;
    /* functions among funcs that are the file's Python helpers, called by
     * its kernels (not kernels themselves; their loc is the `def` line) */
    const tlc_skipped_def *helpers; int nhelpers;
} ast_module;

/* ---- tokens (for --emit=tokens and the lexer tests) ---- */
typedef struct tlc_token {
    int kind;          /* parser token number (see parser.h) */
    const char *name;  /* token kind name: "NAME", "INDENT", "'('", ... */
    const char *text;  /* lexeme (arena copy; clipped to 64 bytes for huge lexemes) */
    tlc_loc loc;
} tlc_token;

/* Entry points of the front end (lexer.l / parser.y). Both report problems to
 * `diag` and never crash on any input; they return NULL / -1 on fatal errors. */
ast_module *tlc_parse(const tlc_source *src, tlc_arena *arena, tlc_diag *diag);
/* Fills *out with every token the parser reads (INDENT/DEDENT/NEWLINE
 * included): the Python tlc skips (toplevel.h) has none. Returns the count. */
int tlc_tokenize(const tlc_source *src, tlc_arena *arena, tlc_diag *diag, tlc_token **out);
/* The same over every line of the text, nothing skipped (for the lexer's
 * own tests on fragments). */
int tlc_tokenize_lines(const tlc_source *src, tlc_arena *arena, tlc_diag *diag, tlc_token **out);

/* Printers (ast_print.c): stable, indentation-structured text for --emit=ast. */
void ast_print_module(tlc_strbuf *sb, const ast_module *m);
void ast_print_expr(tlc_strbuf *sb, const ast_expr *e); /* source-like form */

/* Node constructors used by the parser (ast.c). */
ast_expr *ast_new_expr(tlc_arena *a, ast_expr_kind k, tlc_loc loc);
ast_stmt *ast_new_stmt(tlc_arena *a, ast_stmt_kind k, tlc_loc loc);
#endif
