/* The tlc grammar: a Python-shaped subset, parsed by a pure LALR(1) parser
 * into the AST of ast.h. The token stream (with INDENT / DEDENT / NEWLINE)
 * comes from the lexer wrapper in lexer.l. The build fails on any conflict. */
%code top {
/* Bounded parser stack: deeply nested input becomes a clean diagnostic
 * ("memory exhausted" -> "expression nested too deeply"), never a crash. */
#define YYMAXDEPTH 10000
#define YYINITDEPTH 256
}

%code requires {
#include "frontend/ast.h"

/* A growable array of pointers in the arena (no free on error paths, so
 * bison's error recovery cannot leak). */
typedef struct tlc_pvec {
    void **items;
    int n, cap;
} tlc_pvec;

typedef struct tlc_lexer tlc_lexer;
typedef struct tlc_parser tlc_parser;

#define YYLLOC_DEFAULT(Cur, Rhs, N)                         \
    do {                                                    \
        if (N) (Cur) = YYRHSLOC(Rhs, 1);                    \
        else (Cur) = YYRHSLOC(Rhs, 0);                      \
    } while (0)
}

%code provides {
/* Lexer wrapper (lexer.l): Python-style logical lines on top of the flex
 * scanner. `text`/`textlen` (may be NULL) receive the token's lexeme. */
tlc_lexer *tlc_lexer_new(const tlc_source *src, tlc_arena *arena, tlc_diag *diag);
void tlc_lexer_free(tlc_lexer *L);
int tlc_lexer_next(tlc_lexer *L, YYSTYPE *val, YYLTYPE *loc, const char **text, size_t *textlen);
/* First token of the logical line being lexed (for "expected ':' after ..."),
 * and its lexeme. */
int tlc_lexer_line_first_token(const tlc_lexer *L, const char **text, size_t *len);
/* Line of the last error the lexer reported (0: none). */
int tlc_lexer_error_line(const tlc_lexer *L);
/* Lexeme of the most recent token (for error messages). */
const char *tlc_lexer_last_text(const tlc_lexer *L, size_t *len);
/* True once the lexer reported an error at end of file (an unclosed
 * bracket) or stopped because of too many errors: later syntax errors are
 * consequences and are not reported. */
bool tlc_lexer_gave_up(const tlc_lexer *L);
/* The functions the top-level filter skipped as Python (toplevel.h). */
const tlc_skipped_def *tlc_lexer_skipped_defs(const tlc_lexer *L, int *n);
/* The undecorated functions it kept because kernels call them (helpers). */
const tlc_skipped_def *tlc_lexer_helper_defs(const tlc_lexer *L, int *n);
/* Token kind name for --emit=tokens: "NAME", "INDENT", "'('", "'def'". */
const char *tlc_token_kind_name(int kind);
}

%define api.pure full
%define api.location.type {tlc_loc}
%define parse.error custom
%locations
%expect 0
%parse-param {tlc_parser *p}
%lex-param {tlc_parser *p}

%union {
    const char *str;
    int64_t ival;
    double fval;
    ast_expr *expr;
    ast_stmt *stmt;
    tlc_pvec *list;
    ast_kwarg *arg;
    ast_decorator *dec;
    ast_param *param;
    ast_funcdef *func;
    ast_block block;
    ast_op op;
}

%token <str> NAME
%token <ival> INT
%token <fval> FLOAT
%token <str> STRING
%token NEWLINE INDENT DEDENT
%token DEF "'def'" FOR "'for'" IN "'in'" IF "'if'" ELIF "'elif'" ELSE "'else'"
%token WITH "'with'" AS "'as'" RETURN "'return'" PASS "'pass'" BREAK "'break'"
%token CONTINUE "'continue'" WHILE "'while'" AND "'and'" OR "'or'" NOT "'not'"
%token IS "'is'" TRUE "'True'" FALSE "'False'" NONE "'None'" IMPORT "'import'"
%token FROM "'from'" LAMBDA "'lambda'" ASSERT "'assert'" RAISE "'raise'"
%token EQ "'=='" NE "'!='" LE "'<='" GE "'>='" LSHIFT "'<<'" RSHIFT "'>>'"
%token POW "'**'" FLOORDIV "'//'" ARROW "'->'" ELLIPSIS "'...'"
%token PLUSEQ "'+='" MINUSEQ "'-='" STAREQ "'*='" SLASHEQ "'/='" FLOORDIVEQ "'//='"
%token PERCENTEQ "'%='" AMPEQ "'&='" PIPEEQ "'|='" CARETEQ "'^='" LSHIFTEQ "'<<='"
%token RSHIFTEQ "'>>='" POWEQ "'**='"

%type <list> stmt simple_stmt small_stmts stmts decorators if_chain test_items chain_assign
%type <list> expr_items arg_items sub_items param_list params strings dict_items
%type <stmt> small_stmt expr_stmt compound_stmt funcdef decorated
%type <stmt> if_stmt while_stmt for_stmt with_stmt with_item
%type <list> with_items
%type <block> suite body
%type <expr> testlist exprlist test or_test and_test not_test comparison expr
%type <expr> xor_expr and_expr shift_expr arith_expr term factor power primary atom
%type <expr> subscript opt_test ret_annot
%type <dec> decorator
%type <arg> arg
%type <param> param
%type <op> augassign comp_op
%type <list> call_args comp_for lambda_params lambda_names

%code {
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tlc_parser {
    tlc_lexer *lex;
    tlc_arena *arena;
    tlc_diag *diag;
    tlc_pvec funcs, globals;
    bool after_error; /* the last statement was a syntax error */
};

static int yylex(YYSTYPE *val, YYLTYPE *loc, tlc_parser *p) {
    return tlc_lexer_next(p->lex, val, loc, NULL, NULL);
}
static void yyerror(YYLTYPE *loc, tlc_parser *p, const char *msg);

static tlc_pvec *pv_new(tlc_parser *p) { return TLC_NEW(p->arena, tlc_pvec); }

static void pv_push(tlc_parser *p, tlc_pvec *v, void *x) {
    if (v->n == v->cap) {
        int nc = v->cap ? v->cap * 2 : 4;
        void **ni = TLC_NEW_ARRAY(p->arena, void *, (size_t)nc);
        if (v->n) memcpy(ni, v->items, (size_t)v->n * sizeof(void *));
        v->items = ni;
        v->cap = nc;
    }
    v->items[v->n++] = x;
}

static tlc_pvec *pv_one(tlc_parser *p, void *x) {
    tlc_pvec *v = pv_new(p);
    if (x) pv_push(p, v, x);
    return v;
}

static tlc_pvec *pv_append(tlc_parser *p, tlc_pvec *dst, const tlc_pvec *src) {
    for (int i = 0; i < src->n; i++) pv_push(p, dst, src->items[i]);
    return dst;
}

static ast_block mk_block(const tlc_pvec *v) {
    return (ast_block){ .stmts = (ast_stmt **)v->items, .n = v->n };
}

static ast_expr *mk_bin(tlc_parser *p, ast_expr_kind k, ast_op op, ast_expr *l, ast_expr *r,
                        tlc_loc loc) {
    ast_expr *e = ast_new_expr(p->arena, k, loc);
    e->u.bin.op = op;
    e->u.bin.lhs = l;
    e->u.bin.rhs = r;
    return e;
}

static ast_expr *mk_unary(tlc_parser *p, ast_op op, ast_expr *x, tlc_loc loc) {
    ast_expr *e = ast_new_expr(p->arena, AE_UNARY, loc);
    e->u.un.op = op;
    e->u.un.operand = x;
    return e;
}

static ast_expr *mk_seq(tlc_parser *p, ast_expr_kind k, const tlc_pvec *v, tlc_loc loc) {
    ast_expr *e = ast_new_expr(p->arena, k, loc);
    e->u.seq.items = v ? (ast_expr **)v->items : NULL;
    e->u.seq.n = v ? v->n : 0;
    return e;
}

/* `a, b` (or `a,`) is a tuple; a lone `a` is itself. */
static ast_expr *mk_list_or_single(tlc_parser *p, const tlc_pvec *v, bool trailing_comma,
                                   tlc_loc loc) {
    if (v->n == 1 && !trailing_comma) return v->items[0];
    return mk_seq(p, AE_TUPLE, v, loc);
}

static ast_expr *mk_dict(tlc_parser *p, const tlc_pvec *kv, tlc_loc loc) {
    ast_expr *e = ast_new_expr(p->arena, AE_DICT, loc);
    int n = kv->n / 2;
    e->u.dict.n = n;
    e->u.dict.keys = TLC_NEW_ARRAY(p->arena, ast_expr *, (size_t)(n ? n : 1));
    e->u.dict.values = TLC_NEW_ARRAY(p->arena, ast_expr *, (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        e->u.dict.keys[i] = kv->items[2 * i];
        e->u.dict.values[i] = kv->items[2 * i + 1];
    }
    return e;
}

/* clause: target, iter, cond (may be NULL), as comp_for builds it */
static ast_expr *mk_comp(tlc_parser *p, ast_expr *elt, const tlc_pvec *clause, bool list, tlc_loc loc) {
    ast_expr *e = ast_new_expr(p->arena, AE_COMP, loc);
    e->u.comp.elt = elt;
    e->u.comp.target = clause->items[0];
    e->u.comp.iter = clause->items[1];
    e->u.comp.cond = clause->items[2];
    e->u.comp.list = list;
    return e;
}

static ast_expr *mk_call(tlc_parser *p, ast_expr *func, const tlc_pvec *args, tlc_loc loc) {
    ast_expr *e = ast_new_expr(p->arena, AE_CALL, loc);
    e->u.call.func = func;
    int npos = 0, nkw = 0;
    for (int i = 0; i < args->n; i++) {
        const ast_kwarg *a = args->items[i];
        if (a->name) nkw++;
        else npos++;
    }
    e->u.call.args = TLC_NEW_ARRAY(p->arena, ast_expr *, (size_t)(npos ? npos : 1));
    e->u.call.kwargs = TLC_NEW_ARRAY(p->arena, ast_kwarg, (size_t)(nkw ? nkw : 1));
    bool seen_kw = false;
    for (int i = 0; i < args->n; i++) {
        const ast_kwarg *a = args->items[i];
        if (a->name) {
            for (int j = 0; j < e->u.call.nkwargs; j++)
                if (strcmp(e->u.call.kwargs[j].name, a->name) == 0) {
                    tlc_error(p->diag, a->loc, "keyword argument '%s' repeated", a->name);
                    tlc_note(p->diag, e->u.call.kwargs[j].loc, "first given here");
                    break;
                }
            e->u.call.kwargs[e->u.call.nkwargs++] = *a;
            seen_kw = true;
        } else {
            if (seen_kw)
                tlc_error(p->diag, a->loc, "positional argument follows keyword argument");
            e->u.call.args[e->u.call.nargs++] = a->value;
        }
    }
    return e;
}

static const char *expr_kind_desc(const ast_expr *e) {
    switch (e->kind) {
    case AE_CALL: return "function call";
    case AE_INT: case AE_FLOAT: case AE_STRING: case AE_BOOL: case AE_NONE: return "literal";
    case AE_COMPARE: return "comparison";
    case AE_IFEXP: return "conditional expression";
    case AE_COMP: return "comprehension";
    case AE_LAMBDA: return "lambda";
    case AE_DICT: return "dict display";
    case AE_SLICE: return "slice";
    default: return "expression";
    }
}

/* Assignment / loop / with targets: names, attributes, subscripts, and
 * (when allowed) tuples or lists of those. */
static void check_target(tlc_parser *p, const ast_expr *e, bool allow_tuple, const char *what,
                         int depth) {
    if (depth > TLC_AST_MAX_DEPTH) return; /* the depth check reports it */
    switch (e->kind) {
    case AE_NAME: case AE_ATTR: case AE_SUBSCRIPT:
        return;
    case AE_TUPLE: case AE_LIST:
        if (!allow_tuple) {
            tlc_error(p->diag, e->loc, "only a single target (not a %s) is allowed in %s",
                      e->kind == AE_TUPLE ? "tuple" : "list", what);
            return;
        }
        if (e->u.seq.n == 0) {
            tlc_error(p->diag, e->loc, "cannot assign to an empty %s",
                      e->kind == AE_TUPLE ? "tuple" : "list");
            return;
        }
        for (int i = 0; i < e->u.seq.n; i++)
            check_target(p, e->u.seq.items[i], true, what, depth + 1);
        return;
    default:
        tlc_error(p->diag, e->loc, "cannot assign to %s in %s", expr_kind_desc(e), what);
        return;
    }
}

static ast_stmt *mk_assign(tlc_parser *p, ast_expr *target, ast_expr *value, tlc_loc loc) {
    check_target(p, target, true, "assignment", 0);
    ast_stmt *s = ast_new_stmt(p->arena, AS_ASSIGN, loc);
    s->u.assign.target = target;
    s->u.assign.value = value;
    return s;
}

/* a = b = v, as Python runs it: a = v, then b = a (so that an allocation
 * is made once and b names it too); a target that is not a name gets v. */
static tlc_pvec *chain_stmts(tlc_parser *p, const tlc_pvec *chain) {
    tlc_pvec *out = pv_new(p);
    ast_expr *value = chain->items[chain->n - 1];
    const ast_expr *first = chain->items[0];
    for (int i = 0; i < chain->n - 1; i++) {
        ast_expr *v = value;
        if (i > 0 && first->kind == AE_NAME) {
            v = ast_new_expr(p->arena, AE_NAME, first->loc);
            v->u.name = first->u.name;
        }
        ast_expr *t = chain->items[i];
        pv_push(p, out, mk_assign(p, t, v, t->loc));
    }
    return out;
}

static ast_stmt *mk_if(tlc_parser *p, const tlc_pvec *clauses, ast_block els) {
    /* clauses: AS_IF statements with empty else, in order; chain them so
     * that `elif` is an else block holding one AS_IF. */
    for (int i = clauses->n - 1; i >= 0; i--) {
        ast_stmt *s = clauses->items[i];
        s->u.if_.els = els;
        if (i > 0) els = mk_block(pv_one(p, s));
    }
    return clauses->items[0];
}

static ast_stmt *mk_if_clause(tlc_parser *p, ast_expr *cond, ast_block then, tlc_loc loc) {
    ast_stmt *s = ast_new_stmt(p->arena, AS_IF, loc);
    s->u.if_.cond = cond;
    s->u.if_.then = then;
    return s;
}

static const char *header_desc(int first_token);

static void missing_colon(tlc_parser *p, tlc_loc loc) {
    const char *header = header_desc(tlc_lexer_line_first_token(p->lex, NULL, NULL));
    tlc_error(p->diag, loc, "expected ':' after %s", header ? header : "block header");
}

static void add_top_level(tlc_parser *p, ast_stmt *s) {
    if (s->kind == AS_FUNCDEF) {
        pv_push(p, &p->funcs, s->u.func);
    } else if (s->kind == AS_ASSIGN && s->u.assign.target->kind == AE_NAME) {
        pv_push(p, &p->globals, s);
    } else {
        tlc_error(p->diag, s->loc, "only function definitions, imports and 'NAME = constant' "
                                   "assignments are allowed at the top level");
    }
}
}

%%

file
    : %empty
    | file stmt                 { for (int i = 0; i < $2->n; i++) add_top_level(p, $2->items[i]); }
    ;

stmt
    : simple_stmt               { p->after_error = false; }
    | compound_stmt             { $$ = pv_one(p, $1); p->after_error = false; }
    | error NEWLINE             { $$ = pv_new(p); p->after_error = true; yyerrok; }
    /* An indented block where none may start: after `if x: pass`, or the
     * body of a header that had a syntax error (already reported). The
     * block is parsed, so errors inside it are found, then dropped. */
    | INDENT {
          if (!p->after_error) tlc_error(p->diag, @1, "unexpected indent");
          p->after_error = false;
      } stmts DEDENT            { $$ = pv_new(p); }
    ;

stmts
    : stmt
    | stmts stmt                { $$ = pv_append(p, $1, $2); }
    ;

simple_stmt
    : small_stmts NEWLINE
    | small_stmts ';' NEWLINE
    ;

small_stmts
    : small_stmt                { $$ = pv_one(p, $1); }
    | chain_assign              { $$ = chain_stmts(p, $1); }
    | small_stmts ';' small_stmt { $$ = $1; if ($3) pv_push(p, $$, $3); }
    | small_stmts ';' chain_assign { $$ = pv_append(p, $1, chain_stmts(p, $3)); }
    ;

/* a = b = value: the targets, then the value */
chain_assign
    : testlist '=' testlist '=' testlist { $$ = pv_one(p, $1); pv_push(p, $$, $3); pv_push(p, $$, $5); }
    | chain_assign '=' testlist { $$ = $1; pv_push(p, $$, $3); }
    ;

small_stmt
    : expr_stmt
    | PASS                      { $$ = ast_new_stmt(p->arena, AS_PASS, @1); }
    | BREAK                     { $$ = ast_new_stmt(p->arena, AS_BREAK, @1); }
    | CONTINUE                  { $$ = ast_new_stmt(p->arena, AS_CONTINUE, @1); }
    | RETURN                    { $$ = ast_new_stmt(p->arena, AS_RETURN, @1); }
    | RETURN testlist           { $$ = ast_new_stmt(p->arena, AS_RETURN, @1); $$->u.expr = $2; }
    | RAISE                     { $$ = ast_new_stmt(p->arena, AS_RAISE, @1); }
    | RAISE test                { $$ = ast_new_stmt(p->arena, AS_RAISE, @1); $$->u.expr = $2; }
    | RAISE test FROM test      { $$ = ast_new_stmt(p->arena, AS_RAISE, @1); $$->u.expr = $2; }
    | ASSERT test               { $$ = ast_new_stmt(p->arena, AS_ASSERT, @1); $$->u.assert_.cond = $2; }
    | ASSERT test ',' test      {
          $$ = ast_new_stmt(p->arena, AS_ASSERT, @1);
          $$->u.assert_.cond = $2; $$->u.assert_.msg = $4;
      }
    | import_stmt               { $$ = NULL; }
    ;

expr_stmt
    : testlist                  { $$ = ast_new_stmt(p->arena, AS_EXPR, @1); $$->u.expr = $1; }
    | testlist '=' testlist     { $$ = mk_assign(p, $1, $3, @1); }
    | testlist augassign testlist {
          check_target(p, $1, false, "augmented assignment", 0);
          $$ = ast_new_stmt(p->arena, AS_AUGASSIGN, @1);
          $$->u.aug.op = $2; $$->u.aug.target = $1; $$->u.aug.value = $3;
      }
    | test ':' test             {
          check_target(p, $1, false, "annotated assignment", 0);
          $$ = ast_new_stmt(p->arena, AS_ANNASSIGN, @1);
          $$->u.ann.target = $1; $$->u.ann.annotation = $3;
      }
    | test ':' test '=' testlist {
          check_target(p, $1, false, "annotated assignment", 0);
          $$ = ast_new_stmt(p->arena, AS_ANNASSIGN, @1);
          $$->u.ann.target = $1; $$->u.ann.annotation = $3; $$->u.ann.value = $5;
      }
    ;

augassign
    : PLUSEQ        { $$ = AOP_ADD; }
    | MINUSEQ       { $$ = AOP_SUB; }
    | STAREQ        { $$ = AOP_MUL; }
    | SLASHEQ       { $$ = AOP_DIV; }
    | FLOORDIVEQ    { $$ = AOP_FLOORDIV; }
    | PERCENTEQ     { $$ = AOP_MOD; }
    | AMPEQ         { $$ = AOP_BITAND; }
    | PIPEEQ        { $$ = AOP_BITOR; }
    | CARETEQ       { $$ = AOP_BITXOR; }
    | LSHIFTEQ      { $$ = AOP_LSHIFT; }
    | RSHIFTEQ      { $$ = AOP_RSHIFT; }
    | POWEQ         { $$ = AOP_POW; }
    ;

/* Imports are accepted and dropped: the language has no modules. */
import_stmt
    : IMPORT dotted_as_names
    | FROM import_from_path IMPORT import_targets
    ;
dotted_name : NAME | dotted_name '.' NAME ;
dotted_as_name : dotted_name | dotted_name AS NAME ;
dotted_as_names : dotted_as_name | dotted_as_names ',' dotted_as_name ;
dots : '.' | ELLIPSIS | dots '.' | dots ELLIPSIS ;
import_from_path : dotted_name | dots | dots dotted_name ;
import_as_name : NAME | NAME AS NAME ;
import_as_names : import_as_name | import_as_names ',' import_as_name ;
import_targets
    : '*'
    | import_as_names
    | import_as_names ','
    | '(' import_as_names ')'
    | '(' import_as_names ',' ')'
    ;

compound_stmt
    : if_stmt
    | while_stmt
    | for_stmt
    | with_stmt
    | funcdef
    | decorated
    ;

if_stmt
    : if_chain                  { $$ = mk_if(p, $1, (ast_block){0}); }
    | if_chain ELSE body        { $$ = mk_if(p, $1, $3); }
    ;

if_chain
    : IF test body              { $$ = pv_one(p, mk_if_clause(p, $2, $3, @1)); }
    | if_chain ELIF test body   { $$ = $1; pv_push(p, $$, mk_if_clause(p, $3, $4, @2)); }
    ;

while_stmt
    : WHILE test body           {
          $$ = ast_new_stmt(p->arena, AS_WHILE, @1);
          $$->u.while_.cond = $2; $$->u.while_.body = $3;
      }
    ;

for_stmt
    : FOR exprlist IN testlist body {
          check_target(p, $2, true, "for-loop target", 0);
          $$ = ast_new_stmt(p->arena, AS_FOR, @1);
          $$->u.for_.target = $2; $$->u.for_.iter = $4; $$->u.for_.body = $5;
      }
    ;

/* `with A as a, B: body` is `with A as a:` around `with B: body`, as in Python */
with_stmt
    : WITH with_items body      {
          $$ = NULL;
          for (int i = $2->n - 1; i >= 0; i--) {
              ast_stmt *w = $2->items[i];
              if ($$) {
                  w->u.with.body.stmts = TLC_NEW_ARRAY(p->arena, ast_stmt *, 1);
                  w->u.with.body.stmts[0] = $$;
                  w->u.with.body.n = 1;
              } else {
                  w->u.with.body = $3;
              }
              $$ = w;
          }
          $$->loc = @1;
      }
    ;

with_items
    : with_item                 { $$ = pv_one(p, $1); }
    | with_items ',' with_item  { $$ = $1; pv_push(p, $$, $3); }
    ;

with_item
    : test                      {
          $$ = ast_new_stmt(p->arena, AS_WITH, @1);
          $$->u.with.item = $1;
      }
    | test AS expr              {
          check_target(p, $3, true, "'with ... as' target", 0);
          $$ = ast_new_stmt(p->arena, AS_WITH, @1);
          $$->u.with.item = $1; $$->u.with.target = $3;
      }
    ;

decorated
    : decorators funcdef        {
          ast_funcdef *f = $2->u.func;
          f->ndecorators = $1->n;
          f->decorators = TLC_NEW_ARRAY(p->arena, ast_decorator, (size_t)$1->n);
          for (int i = 0; i < $1->n; i++) f->decorators[i] = *(ast_decorator *)$1->items[i];
          $$ = $2;
          $$->loc = f->decorators[0].loc;
      }
    ;

decorators
    : decorator                 { $$ = pv_one(p, $1); }
    | decorators decorator      { $$ = $1; pv_push(p, $$, $2); }
    ;

decorator
    : '@' test NEWLINE          { $$ = TLC_NEW(p->arena, ast_decorator); $$->expr = $2; $$->loc = @1; }
    ;

funcdef
    : DEF NAME '(' params ')' ret_annot body {
          ast_funcdef *f = TLC_NEW(p->arena, ast_funcdef);
          f->name = $2;
          f->loc = @2;
          f->nparams = $4->n;
          f->params = TLC_NEW_ARRAY(p->arena, ast_param, (size_t)($4->n ? $4->n : 1));
          for (int i = 0; i < $4->n; i++) f->params[i] = *(const ast_param *)$4->items[i];
          f->body = $7;
          (void)$6; /* return annotations are accepted and ignored */
          $$ = ast_new_stmt(p->arena, AS_FUNCDEF, @1);
          $$->u.func = f;
      }
    ;

ret_annot
    : %empty                    { $$ = NULL; }
    | ARROW test                { $$ = $2; }
    ;

params
    : %empty                    { $$ = pv_new(p); }
    | param_list
    | param_list ','
    /* `*` alone: the parameters after it are keyword-only in Python; tlc
     * binds by name or position alike */
    | '*' ',' param_list        { $$ = $3; }
    | '*' ',' param_list ','    { $$ = $3; }
    ;

param_list
    : param                     { $$ = pv_one(p, $1); }
    | param_list ',' param      {
          for (int j = 0; j < $1->n; j++) {
              const ast_param *prev = $1->items[j];
              if (strcmp(prev->name, $3->name) == 0) {
                  tlc_error(p->diag, $3->loc, "duplicate parameter '%s'", $3->name);
                  tlc_note(p->diag, prev->loc, "first declared here");
                  break;
              }
          }
          $$ = $1; pv_push(p, $$, $3);
      }
    | param_list ',' '*'        { $$ = $1; }
    ;

param
    : NAME                      { $$ = TLC_NEW(p->arena, ast_param); $$->name = $1; $$->loc = @1; }
    | NAME ':' test             {
          $$ = TLC_NEW(p->arena, ast_param); $$->name = $1; $$->loc = @1; $$->annotation = $3;
      }
    | NAME '=' test             {
          $$ = TLC_NEW(p->arena, ast_param); $$->name = $1; $$->loc = @1; $$->default_value = $3;
      }
    | NAME ':' test '=' test    {
          $$ = TLC_NEW(p->arena, ast_param); $$->name = $1; $$->loc = @1;
          $$->annotation = $3; $$->default_value = $5;
      }
    ;

/* The body of a block header. A missing ':' before an indented block is
 * reported here and parsing goes on, so the block is still checked. */
body
    : ':' suite                 { $$ = $2; }
    | NEWLINE { missing_colon(p, @1); } INDENT stmts DEDENT { $$ = mk_block($4); }
    ;

suite
    : simple_stmt               { $$ = mk_block($1); }
    | NEWLINE INDENT stmts DEDENT { $$ = mk_block($3); }
    | NEWLINE error             { $$ = (ast_block){0}; }
    ;

/* ---- expressions, loosest binding first (Python's precedence) ---- */

testlist
    : test_items                { $$ = mk_list_or_single(p, $1, false, @1); }
    | test_items ','            { $$ = mk_list_or_single(p, $1, true, @1); }
    ;

test_items
    : test                      { $$ = pv_one(p, $1); }
    | test_items ',' test       { $$ = $1; pv_push(p, $$, $3); }
    ;

exprlist
    : expr_items                { $$ = mk_list_or_single(p, $1, false, @1); }
    | expr_items ','            { $$ = mk_list_or_single(p, $1, true, @1); }
    ;

expr_items
    : expr                      { $$ = pv_one(p, $1); }
    | expr_items ',' expr       { $$ = $1; pv_push(p, $$, $3); }
    ;

test
    : or_test
    | or_test IF or_test ELSE test {
          $$ = ast_new_expr(p->arena, AE_IFEXP, @2);
          $$->u.ifexp.then = $1; $$->u.ifexp.cond = $3; $$->u.ifexp.els = $5;
      }
    | LAMBDA lambda_params ':' test {
          $$ = ast_new_expr(p->arena, AE_LAMBDA, @1);
          $$->u.lambda.params = (ast_expr **)$2->items; $$->u.lambda.nparams = $2->n; $$->u.lambda.body = $4;
      }
    ;

lambda_params
    : %empty                    { $$ = pv_new(p); }
    | lambda_names
    | lambda_names ','
    ;

lambda_names
    : NAME                      { ast_expr *n = ast_new_expr(p->arena, AE_NAME, @1); n->u.name = $1; $$ = pv_one(p, n); }
    | lambda_names ',' NAME     { ast_expr *n = ast_new_expr(p->arena, AE_NAME, @3); n->u.name = $3; $$ = $1; pv_push(p, $$, n); }
    ;

or_test
    : and_test
    | or_test OR and_test       { $$ = mk_bin(p, AE_BOOLOP, AOP_OR, $1, $3, @2); }
    ;

and_test
    : not_test
    | and_test AND not_test     { $$ = mk_bin(p, AE_BOOLOP, AOP_AND, $1, $3, @2); }
    ;

not_test
    : NOT not_test              { $$ = mk_unary(p, AOP_NOT, $2, @1); }
    | comparison
    ;

/* A chain a < b < c is left-nested: COMPARE(<, COMPARE(<, a, b), c). */
comparison
    : expr
    | comparison comp_op expr   { $$ = mk_bin(p, AE_COMPARE, $2, $1, $3, @2); }
    ;

comp_op
    : '<'   { $$ = AOP_LT; }
    | '>'   { $$ = AOP_GT; }
    | EQ    { $$ = AOP_EQ; }
    | NE    { $$ = AOP_NE; }
    | LE    { $$ = AOP_LE; }
    | GE    { $$ = AOP_GE; }
    | IS    { $$ = AOP_IS; }
    | IS NOT { $$ = AOP_ISNOT; }
    | IN    { $$ = AOP_IN; }
    | NOT IN { $$ = AOP_NOTIN; }
    ;

expr
    : xor_expr
    | expr '|' xor_expr         { $$ = mk_bin(p, AE_BINARY, AOP_BITOR, $1, $3, @2); }
    ;

xor_expr
    : and_expr
    | xor_expr '^' and_expr     { $$ = mk_bin(p, AE_BINARY, AOP_BITXOR, $1, $3, @2); }
    ;

and_expr
    : shift_expr
    | and_expr '&' shift_expr   { $$ = mk_bin(p, AE_BINARY, AOP_BITAND, $1, $3, @2); }
    ;

shift_expr
    : arith_expr
    | shift_expr LSHIFT arith_expr { $$ = mk_bin(p, AE_BINARY, AOP_LSHIFT, $1, $3, @2); }
    | shift_expr RSHIFT arith_expr { $$ = mk_bin(p, AE_BINARY, AOP_RSHIFT, $1, $3, @2); }
    ;

arith_expr
    : term
    | arith_expr '+' term       { $$ = mk_bin(p, AE_BINARY, AOP_ADD, $1, $3, @2); }
    | arith_expr '-' term       { $$ = mk_bin(p, AE_BINARY, AOP_SUB, $1, $3, @2); }
    ;

term
    : factor
    | term '*' factor           { $$ = mk_bin(p, AE_BINARY, AOP_MUL, $1, $3, @2); }
    | term '/' factor           { $$ = mk_bin(p, AE_BINARY, AOP_DIV, $1, $3, @2); }
    | term FLOORDIV factor      { $$ = mk_bin(p, AE_BINARY, AOP_FLOORDIV, $1, $3, @2); }
    | term '%' factor           { $$ = mk_bin(p, AE_BINARY, AOP_MOD, $1, $3, @2); }
    ;

factor
    : '+' factor                { $$ = mk_unary(p, AOP_POS, $2, @1); }
    | '-' factor                { $$ = mk_unary(p, AOP_NEG, $2, @1); }
    | '~' factor                { $$ = mk_unary(p, AOP_INVERT, $2, @1); }
    | power
    ;

/* ** binds tighter than a unary operator on its left, looser on its right:
 * -2**2 == -(2**2), 2**-1 == 2**(-1); it is right-associative. */
power
    : primary
    | primary POW factor        { $$ = mk_bin(p, AE_BINARY, AOP_POW, $1, $3, @2); }
    ;

primary
    : atom
    | primary '.' NAME          {
          $$ = ast_new_expr(p->arena, AE_ATTR, @1);
          $$->u.attr.value = $1; $$->u.attr.name = $3;
      }
    | primary '(' call_args ')' { $$ = mk_call(p, $1, $3, @1); }
    | primary '(' test comp_for ')' {
          /* f(x for x in xs): the generator is the call's one argument */
          ast_kwarg *a = TLC_NEW(p->arena, ast_kwarg);
          a->loc = @3;
          a->value = mk_comp(p, $3, $4, false, @3);
          $$ = mk_call(p, $1, pv_one(p, a), @1);
      }
    | primary '[' sub_items ']' {
          $$ = ast_new_expr(p->arena, AE_SUBSCRIPT, @1);
          $$->u.sub.value = $1;
          $$->u.sub.index = (ast_expr **)$3->items;
          $$->u.sub.nindex = $3->n;
      }
    | primary '[' sub_items ',' ']' {
          $$ = ast_new_expr(p->arena, AE_SUBSCRIPT, @1);
          $$->u.sub.value = $1;
          $$->u.sub.index = (ast_expr **)$3->items;
          $$->u.sub.nindex = $3->n;
      }
    ;

call_args
    : %empty                    { $$ = pv_new(p); }
    | arg_items
    | arg_items ','
    ;

arg_items
    : arg                       { $$ = pv_one(p, $1); }
    | arg_items ',' arg         { $$ = $1; pv_push(p, $$, $3); }
    ;

arg
    : test                      { $$ = TLC_NEW(p->arena, ast_kwarg); $$->loc = @1; $$->value = $1; }
    | NAME '=' test             {
          $$ = TLC_NEW(p->arena, ast_kwarg); $$->name = $1; $$->loc = @1; $$->value = $3;
      }
    ;

sub_items
    : subscript                 { $$ = pv_one(p, $1); }
    | sub_items ',' subscript   { $$ = $1; pv_push(p, $$, $3); }
    ;

subscript
    : test
    | opt_test ':' opt_test     {
          $$ = ast_new_expr(p->arena, AE_SLICE, $1 ? @1 : @2);
          $$->u.slice.lo = $1; $$->u.slice.hi = $3;
      }
    | opt_test ':' opt_test ':' opt_test {
          $$ = ast_new_expr(p->arena, AE_SLICE, $1 ? @1 : @2);
          $$->u.slice.lo = $1; $$->u.slice.hi = $3; $$->u.slice.step = $5;
      }
    ;

opt_test
    : %empty                    { $$ = NULL; }
    | test
    ;

atom
    : NAME                      { $$ = ast_new_expr(p->arena, AE_NAME, @1); $$->u.name = $1; }
    | INT                       { $$ = ast_new_expr(p->arena, AE_INT, @1); $$->u.ival = $1; }
    | FLOAT                     { $$ = ast_new_expr(p->arena, AE_FLOAT, @1); $$->u.fval = $1; }
    | strings                   {
          /* adjacent literals concatenate ("a" "b" == "ab"), joined once */
          tlc_strbuf sb;
          tlc_sb_init(&sb);
          for (int i = 0; i < $1->n; i++) tlc_sb_puts(&sb, $1->items[i]);
          $$ = ast_new_expr(p->arena, AE_STRING, @1);
          $$->u.str = tlc_arena_strdup(p->arena, tlc_sb_cstr(&sb));
          tlc_sb_free(&sb);
      }
    | TRUE                      { $$ = ast_new_expr(p->arena, AE_BOOL, @1); $$->u.bval = true; }
    | FALSE                     { $$ = ast_new_expr(p->arena, AE_BOOL, @1); $$->u.bval = false; }
    | NONE                      { $$ = ast_new_expr(p->arena, AE_NONE, @1); }
    | ELLIPSIS                  { $$ = ast_new_expr(p->arena, AE_ELLIPSIS, @1); }
    | '(' ')'                   { $$ = mk_seq(p, AE_TUPLE, NULL, @1); }
    | '(' test_items ')'        {
          $$ = mk_list_or_single(p, $2, false, @1);
      }
    | '(' test_items ',' ')'    { $$ = mk_seq(p, AE_TUPLE, $2, @1); }
    | '(' test comp_for ')'     { $$ = mk_comp(p, $2, $3, false, @1); }
    | '[' test comp_for ']'     { $$ = mk_comp(p, $2, $3, true, @1); }
    | '[' ']'                   { $$ = mk_seq(p, AE_LIST, NULL, @1); }
    | '[' test_items ']'        { $$ = mk_seq(p, AE_LIST, $2, @1); }
    | '[' test_items ',' ']'    { $$ = mk_seq(p, AE_LIST, $2, @1); }
    | '{' '}'                   { $$ = ast_new_expr(p->arena, AE_DICT, @1); }
    | '{' dict_items '}'        { $$ = mk_dict(p, $2, @1); }
    | '{' dict_items ',' '}'    { $$ = mk_dict(p, $2, @1); }
    ;

/* for target in iter [if cond]: items 0-2 of the list (cond may be NULL) */
comp_for
    : FOR exprlist IN or_test   {
          check_target(p, $2, true, "comprehension target", 0);
          $$ = pv_one(p, $2); pv_push(p, $$, $4); pv_push(p, $$, NULL);
      }
    | FOR exprlist IN or_test IF or_test {
          check_target(p, $2, true, "comprehension target", 0);
          $$ = pv_one(p, $2); pv_push(p, $$, $4); pv_push(p, $$, $6);
      }
    ;

strings
    : STRING                    { $$ = pv_one(p, (void *)$1); }
    | strings STRING            { $$ = $1; pv_push(p, $$, (void *)$2); }
    ;

/* keys and values alternate: k0, v0, k1, v1, ... */
dict_items
    : test ':' test             { $$ = pv_one(p, $1); pv_push(p, $$, $3); }
    | dict_items ',' test ':' test { $$ = $1; pv_push(p, $$, $3); pv_push(p, $$, $5); }
    ;

%%

/* ---- error reporting ---- */

static void yyerror(YYLTYPE *loc, tlc_parser *p, const char *msg) {
    /* Only reached for a full parser stack (syntax errors go through
     * yyreport_syntax_error). */
    if (strstr(msg, "memory exhausted"))
        tlc_error(p->diag, *loc, "expression nested too deeply");
    else
        tlc_error(p->diag, *loc, "%s", msg);
}

const char *tlc_token_kind_name(int kind) {
    switch (kind) {
    case YYEOF: return "ENDMARKER";
    case NAME: return "NAME";
    case INT: return "INT";
    case FLOAT: return "FLOAT";
    case STRING: return "STRING";
    case NEWLINE: return "NEWLINE";
    case INDENT: return "INDENT";
    case DEDENT: return "DEDENT";
    default: return yysymbol_name(YYTRANSLATE(kind));
    }
}

/* "name 'x'", "end of line", "'def'", "')'": how a token is named to the user. */
static void describe_token(tlc_parser *p, yysymbol_kind_t sym, char *buf, size_t n) {
    size_t len = 0;
    const char *text = tlc_lexer_last_text(p->lex, &len);
    int shown = len > 32 ? 32 : (int)len;
    const char *more = len > 32 ? "..." : "";
    switch (sym) {
    case YYSYMBOL_YYEOF: snprintf(buf, n, "end of file"); break;
    case YYSYMBOL_NEWLINE: snprintf(buf, n, "end of line"); break;
    case YYSYMBOL_INDENT: snprintf(buf, n, "indent"); break;
    case YYSYMBOL_DEDENT: snprintf(buf, n, "unindent"); break;
    case YYSYMBOL_NAME: snprintf(buf, n, "name '%.*s%s'", shown, text, more); break;
    case YYSYMBOL_INT:
    case YYSYMBOL_FLOAT: snprintf(buf, n, "number '%.*s%s'", shown, text, more); break;
    case YYSYMBOL_STRING: snprintf(buf, n, "string literal"); break;
    default: snprintf(buf, n, "%s", yysymbol_name(sym)); break;
    }
}

static const char *header_desc(int first_token) {
    switch (first_token) {
    case FOR: return "for-loop header";
    case IF: return "'if' condition";
    case ELIF: return "'elif' condition";
    case ELSE: return "'else'";
    case WHILE: return "'while' condition";
    case WITH: return "'with' statement";
    case DEF: return "function signature";
    default: return NULL;
    }
}

static bool is_unsupported_python_keyword(const char *s, size_t n) {
    static const char *const kw[] = { "class", "try", "except", "finally", "del",
                                      "global", "nonlocal", "yield", "async",
                                      "await", "match" };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strlen(kw[i]) == n && memcmp(kw[i], s, n) == 0) return true;
    return false;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, tlc_parser *p) {
    if (tlc_lexer_gave_up(p->lex)) return 0;
    yysymbol_kind_t tok = yypcontext_token(ctx);
    tlc_loc loc = *yypcontext_location(ctx);
    yysymbol_kind_t expected[YYNTOKENS];
    int nexp = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
    if (nexp < 0) nexp = 0;
    bool exp_colon = false, exp_indent = false, exp_expr = false;
    for (int i = 0; i < nexp; i++) {
        if (expected[i] == YYTRANSLATE(':')) exp_colon = true;
        if (expected[i] == YYSYMBOL_INDENT) exp_indent = true;
        if (expected[i] == YYSYMBOL_NAME) exp_expr = true;
    }
    const char *first_text;
    size_t first_len;
    const char *header = header_desc(tlc_lexer_line_first_token(p->lex, &first_text, &first_len));
    int first_kind = tlc_lexer_line_first_token(p->lex, NULL, NULL);
    if (loc.line == tlc_lexer_error_line(p->lex)) return 0; /* the lexer said it already */
    char what[96];
    describe_token(p, tok, what, sizeof what);

    if (tok == YYSYMBOL_IS) {
        tlc_error(p->diag, loc, "the 'is' operator is not supported; use '==' or '!='");
    } else if (tok == YYSYMBOL_IN) {
        tlc_error(p->diag, loc, "the 'in' operator is not supported (only 'for x in ...')");
    } else if (first_kind == NAME && is_unsupported_python_keyword(first_text, first_len)) {
        tlc_error(p->diag, loc, "'%.*s' statements are not supported in tlc", (int)first_len,
                  first_text);
    } else if (tok == YYSYMBOL_INDENT) {
        tlc_error(p->diag, loc, "unexpected indent");
    } else if (exp_indent) {
        tlc_error(p->diag, loc, "expected an indented block");
    } else if (exp_colon && header && tok != YYTRANSLATE(':')) {
        tlc_error(p->diag, loc, "expected ':' after %s", header);
    } else if ((tok == YYSYMBOL_NEWLINE || tok == YYSYMBOL_YYEOF) && exp_expr) {
        tlc_error(p->diag, loc, "expected an expression before %s", what);
    } else if (nexp > 0 && nexp <= 4) {
        char list[256] = "";
        size_t used = 0;
        for (int i = 0; i < nexp && used < sizeof list; i++) {
            char one[96];
            describe_token(p, expected[i], one, sizeof one);
            if (expected[i] == YYSYMBOL_NAME) snprintf(one, sizeof one, "a name");
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     i == 0 ? "" : i == nexp - 1 ? " or " : ", ", one);
        }
        tlc_error(p->diag, loc, "unexpected %s; expected %s", what, list);
    } else {
        tlc_error(p->diag, loc, "unexpected %s", what);
    }
    return 0;
}

/* ---- depth limit ---- */

/* Left-nested operator chains (a + b + c + ...) build deep trees with a
 * shallow parser stack, so the tree depth is checked after parsing, without
 * recursion. Every later pass may then recurse over the AST safely. */
typedef struct depth_item {
    const void *node;
    int is_stmt;
    int depth;
} depth_item;

typedef struct depth_walk {
    depth_item *items;
    size_t n, cap;
} depth_walk;

static void dw_push(depth_walk *w, const void *node, int is_stmt, int depth) {
    if (!node) return;
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 256;
        depth_item *ni = realloc(w->items, nc * sizeof *ni);
        if (!ni) {
            fprintf(stderr, "tlc: out of memory\n");
            abort();
        }
        w->items = ni;
        w->cap = nc;
    }
    w->items[w->n++] = (depth_item){ node, is_stmt, depth };
}

static void dw_push_block(depth_walk *w, const ast_block *b, int depth) {
    for (int i = 0; i < b->n; i++) dw_push(w, b->stmts[i], 1, depth);
}

static void dw_push_func(depth_walk *w, const ast_funcdef *f, int depth) {
    for (int i = 0; i < f->ndecorators; i++) dw_push(w, f->decorators[i].expr, 0, depth);
    for (int i = 0; i < f->nparams; i++) {
        dw_push(w, f->params[i].annotation, 0, depth);
        dw_push(w, f->params[i].default_value, 0, depth);
    }
    dw_push_block(w, &f->body, depth);
}

static void dw_push_children_expr(depth_walk *w, const ast_expr *e, int d) {
    switch (e->kind) {
    case AE_NAME: case AE_INT: case AE_FLOAT: case AE_STRING: case AE_BOOL: case AE_NONE: case AE_ELLIPSIS:
        break;
    case AE_ATTR: dw_push(w, e->u.attr.value, 0, d); break;
    case AE_CALL:
        dw_push(w, e->u.call.func, 0, d);
        for (int i = 0; i < e->u.call.nargs; i++) dw_push(w, e->u.call.args[i], 0, d);
        for (int i = 0; i < e->u.call.nkwargs; i++) dw_push(w, e->u.call.kwargs[i].value, 0, d);
        break;
    case AE_SUBSCRIPT:
        dw_push(w, e->u.sub.value, 0, d);
        for (int i = 0; i < e->u.sub.nindex; i++) dw_push(w, e->u.sub.index[i], 0, d);
        break;
    case AE_SLICE:
        dw_push(w, e->u.slice.lo, 0, d);
        dw_push(w, e->u.slice.hi, 0, d);
        dw_push(w, e->u.slice.step, 0, d);
        break;
    case AE_TUPLE: case AE_LIST:
        for (int i = 0; i < e->u.seq.n; i++) dw_push(w, e->u.seq.items[i], 0, d);
        break;
    case AE_DICT:
        for (int i = 0; i < e->u.dict.n; i++) {
            dw_push(w, e->u.dict.keys[i], 0, d);
            dw_push(w, e->u.dict.values[i], 0, d);
        }
        break;
    case AE_BINARY: case AE_COMPARE: case AE_BOOLOP:
        dw_push(w, e->u.bin.lhs, 0, d);
        dw_push(w, e->u.bin.rhs, 0, d);
        break;
    case AE_UNARY: dw_push(w, e->u.un.operand, 0, d); break;
    case AE_IFEXP:
        dw_push(w, e->u.ifexp.cond, 0, d);
        dw_push(w, e->u.ifexp.then, 0, d);
        dw_push(w, e->u.ifexp.els, 0, d);
        break;
    case AE_COMP:
        dw_push(w, e->u.comp.elt, 0, d);
        dw_push(w, e->u.comp.target, 0, d);
        dw_push(w, e->u.comp.iter, 0, d);
        if (e->u.comp.cond) dw_push(w, e->u.comp.cond, 0, d);
        break;
    case AE_LAMBDA: dw_push(w, e->u.lambda.body, 0, d); break;
    }
}

static void dw_push_children_stmt(depth_walk *w, const ast_stmt *s, int d) {
    switch (s->kind) {
    case AS_EXPR: case AS_RETURN: dw_push(w, s->u.expr, 0, d); break;
    case AS_ASSIGN:
        dw_push(w, s->u.assign.target, 0, d);
        dw_push(w, s->u.assign.value, 0, d);
        break;
    case AS_AUGASSIGN:
        dw_push(w, s->u.aug.target, 0, d);
        dw_push(w, s->u.aug.value, 0, d);
        break;
    case AS_ANNASSIGN:
        dw_push(w, s->u.ann.target, 0, d);
        dw_push(w, s->u.ann.annotation, 0, d);
        dw_push(w, s->u.ann.value, 0, d);
        break;
    case AS_FOR:
        dw_push(w, s->u.for_.target, 0, d);
        dw_push(w, s->u.for_.iter, 0, d);
        dw_push_block(w, &s->u.for_.body, d);
        break;
    case AS_WHILE:
        dw_push(w, s->u.while_.cond, 0, d);
        dw_push_block(w, &s->u.while_.body, d);
        break;
    case AS_IF:
        dw_push(w, s->u.if_.cond, 0, d);
        dw_push_block(w, &s->u.if_.then, d);
        dw_push_block(w, &s->u.if_.els, d);
        break;
    case AS_WITH:
        dw_push(w, s->u.with.item, 0, d);
        dw_push(w, s->u.with.target, 0, d);
        dw_push_block(w, &s->u.with.body, d);
        break;
    case AS_FUNCDEF: dw_push_func(w, s->u.func, d); break;
    case AS_ASSERT:
        dw_push(w, s->u.assert_.cond, 0, d);
        dw_push(w, s->u.assert_.msg, 0, d);
        break;
    case AS_RAISE: dw_push(w, s->u.expr, 0, d); break;
    case AS_PASS: case AS_BREAK: case AS_CONTINUE: break;
    }
}

static bool check_depth(const ast_module *m, tlc_diag *diag) {
    depth_walk w = { 0 };
    for (int i = 0; i < m->nglobals; i++) dw_push(&w, m->globals[i], 1, 1);
    for (int i = 0; i < m->nfuncs; i++) dw_push_func(&w, m->funcs[i], 1);
    bool ok = true;
    while (w.n > 0) {
        depth_item it = w.items[--w.n];
        if (it.depth > TLC_AST_MAX_DEPTH) {
            tlc_loc loc = it.is_stmt ? ((const ast_stmt *)it.node)->loc
                                     : ((const ast_expr *)it.node)->loc;
            tlc_error(diag, loc, it.is_stmt ? "statements nested too deeply (limit %d levels)"
                                            : "expression nested too deeply (limit %d levels)",
                      TLC_AST_MAX_DEPTH);
            ok = false;
            break;
        }
        if (it.is_stmt) dw_push_children_stmt(&w, it.node, it.depth + 1);
        else dw_push_children_expr(&w, it.node, it.depth + 1);
    }
    free(w.items);
    return ok;
}

/* ---- entry point ---- */

ast_module *tlc_parse(const tlc_source *src, tlc_arena *arena, tlc_diag *diag) {
    tlc_parser p = { .arena = arena, .diag = diag };
    int errors_before = diag->errors;
    p.lex = tlc_lexer_new(src, arena, diag);
    int rc = yyparse(&p);
    int nskipped, nhelpers;
    const tlc_skipped_def *skipped = tlc_lexer_skipped_defs(p.lex, &nskipped);
    const tlc_skipped_def *helpers = tlc_lexer_helper_defs(p.lex, &nhelpers);
    tlc_lexer_free(p.lex);
    if (rc != 0 || diag->errors > errors_before) {
        if (diag->errors == errors_before) /* cannot happen; never fail silently */
            tlc_error(diag, (tlc_loc){ 0, 0 }, "parsing failed");
        return NULL;
    }
    ast_module *m = TLC_NEW(arena, ast_module);
    m->funcs = (ast_funcdef **)p.funcs.items;
    m->nfuncs = p.funcs.n;
    m->globals = (ast_stmt **)p.globals.items;
    m->nglobals = p.globals.n;
    m->skipped = skipped;
    m->nskipped = nskipped;
    m->helpers = helpers;
    m->nhelpers = nhelpers;
    if (!check_depth(m, diag)) return NULL;
    return m;
}
