/* fdsl.y — the .fdsl grammar. Builds the AST of compiler/fluxcc.h.
   Statements need no separators: every statement starts with a keyword or
   with `name =` / `name, name =`, so the grammar stays LALR(1). */
%define api.pure full
%define api.prefix {fdsl}
%define parse.error detailed
%locations
%define api.location.type {Span}
%lex-param {void *scanner}
%parse-param {void *scanner} {struct Lex *lx}

%code requires {
#include "fluxcc.h"
typedef struct { int loc, end; } Span;
struct Lex { Ctx *c; int base; int off; Ast *result; };
#define YYLLOC_DEFAULT(Cur, Rhs, N) do { \
    if (N) { (Cur).loc = YYRHSLOC(Rhs, 1).loc; (Cur).end = YYRHSLOC(Rhs, N).end; } \
    else { (Cur).loc = (Cur).end = YYRHSLOC(Rhs, 0).end; } } while (0)
}

%code {
#include <string.h>
int fdslparse(void *scanner, struct Lex *lx);
int fdsllex(FDSLSTYPE *lval, Span *lloc, void *scanner);
static void fdslerror(Span *l, void *scanner, struct Lex *lx, const char *msg) {
  (void)scanner;
  if (!strcmp(msg, "memory exhausted")) msg = "nested too deeply (the parser's stack is full)";
  diag_error(lx->c, l->loc, l->end, "%s", msg);
}
#define C (lx->c)
static Ast *mk(struct Lex *lx, int kind, Span s) { return ast_new(lx->c, kind, s.loc, s.end); }
static Ast *append(Ast *list, Ast *x) {
  if (!list) return x;
  if (!x) return list;
  Ast *p = list;
  while (p->next) p = p->next;
  p->next = x;
  return list;
}
static Ast *bin(struct Lex *lx, int op, Ast *a, Ast *b, Span s) {
  Ast *n = mk(lx, A_BINOP, s);
  n->op = op; n->a = a; n->b = b;
  return n;
}
}

%union { int64_t ival; double fval; char *str; Ast *ast; }

%token CONST "const" INPUT "input" OUTPUT "output" PARAM "param" FN "fn"
%token RETURN "return" FOR "for" IN "in" IF "if" ELSE "else" INCLUDE "include"
%token <str> IDENT "identifier" STRING "string"
%token <ival> INT "integer"
%token <fval> FLOAT "number"
%token EQ "==" NE "!=" LE "<=" GE ">=" DOTDOT ".." ELLIPSIS "..."

%type <ast> stmts stmt block else_opt init_opt fparams fparam_list fparam targets
%type <ast> exprs exprs_opt expr postfix primary args arg_list arg idx idxitem expr_opt

%precedence IN
%nonassoc '<' '>' LE GE EQ NE
%left '+' '-'
%left '*' '/' '%'
%precedence UMINUS '!'

%%

program: stmts                 { lx->result = $1; }
  ;
stmts: %empty                  { $$ = NULL; }
  | stmts stmt                 { $$ = append($1, $2); }
  ;
stmt: CONST IDENT '=' expr     { $$ = mk(lx, A_CONST, @$); $$->name = $2; $$->a = $4; }
  | INPUT IDENT ':' expr init_opt  { $$ = mk(lx, A_INPUT, @$); $$->name = $2; $$->a = $4; $$->b = $5; }
  | OUTPUT IDENT '=' expr      { $$ = mk(lx, A_OUTPUT, @$); $$->name = $2; $$->a = $4; }
  | PARAM IDENT ':' expr init_opt  { $$ = mk(lx, A_PARAM, @$); $$->name = $2; $$->a = $4; $$->b = $5; }
  | FN IDENT '(' fparams ')' block { $$ = mk(lx, A_FN, @$); $$->name = $2; $$->list = $4; $$->a = $6; }
  | targets '=' expr           { $$ = mk(lx, A_ASSIGN, @$); $$->list = $1; $$->a = $3; }
  | FOR IDENT IN expr DOTDOT expr block
                               { $$ = mk(lx, A_FOR, @$); $$->name = $2; $$->a = $4; $$->b = $6; $$->c = $7; }
  | IF expr block else_opt     { $$ = mk(lx, A_IF, @$); $$->a = $2; $$->b = $3; $$->c = $4; }
  | RETURN exprs               { $$ = mk(lx, A_RETURN, @$); $$->list = $2; }
  | IDENT '(' args ')'         { Ast *f = mk(lx, A_NAME, @1); f->name = $1;
                                 $$ = mk(lx, A_CALL, @$); $$->a = f; $$->list = $3; }
  | INCLUDE STRING             { $$ = mk(lx, A_INCLUDE, @$); $$->name = $2; }
  | ';'                        { $$ = NULL; }
  | error                      { $$ = NULL; }
  ;
block: '{' stmts '}'           { $$ = mk(lx, A_BLOCK, @$); $$->list = $2; }
  ;
else_opt: %empty               { $$ = NULL; }
  | ELSE block                 { $$ = $2; }
  | ELSE IF expr block else_opt
                               { Ast *i = mk(lx, A_IF, @$); i->a = $3; i->b = $4; i->c = $5;
                                 $$ = mk(lx, A_BLOCK, @$); $$->list = i; }
  ;
init_opt: %empty               { $$ = NULL; }
  | '~' expr                   { $$ = $2; }
  ;
fparams: %empty                { $$ = NULL; }
  | fparam_list                { $$ = $1; }
  ;
fparam_list: fparam            { $$ = $1; }
  | fparam_list ',' fparam     { $$ = append($1, $3); }
  ;
fparam: IDENT                  { $$ = mk(lx, A_NAME, @$); $$->name = $1; }
  | IDENT '=' expr             { $$ = mk(lx, A_NAME, @$); $$->name = $1; $$->a = $3; }
  ;
targets: IDENT                 { $$ = mk(lx, A_NAME, @$); $$->name = $1; }
  | targets ',' IDENT          { Ast *n = mk(lx, A_NAME, @3); n->name = $3; $$ = append($1, n); }
  ;
exprs: expr                    { $$ = $1; }
  | exprs ',' expr             { $$ = append($1, $3); }
  ;
exprs_opt: %empty              { $$ = NULL; }
  | exprs                      { $$ = $1; }
  | exprs ','                  { $$ = $1; }
  ;
expr: expr IN postfix          { $$ = mk(lx, A_SCOPED, @$); $$->a = $1; $$->b = $3; }
  | expr '<' expr              { $$ = bin(lx, '<', $1, $3, @$); }
  | expr '>' expr              { $$ = bin(lx, '>', $1, $3, @$); }
  | expr LE expr               { $$ = bin(lx, LE, $1, $3, @$); }
  | expr GE expr               { $$ = bin(lx, GE, $1, $3, @$); }
  | expr EQ expr               { $$ = bin(lx, EQ, $1, $3, @$); }
  | expr NE expr               { $$ = bin(lx, NE, $1, $3, @$); }
  | expr '+' expr              { $$ = bin(lx, '+', $1, $3, @$); }
  | expr '-' expr              { $$ = bin(lx, '-', $1, $3, @$); }
  | expr '*' expr              { $$ = bin(lx, '*', $1, $3, @$); }
  | expr '/' expr              { $$ = bin(lx, '/', $1, $3, @$); }
  | expr '%' expr              { $$ = bin(lx, '%', $1, $3, @$); }
  | '-' expr %prec UMINUS      { $$ = mk(lx, A_NEG, @$); $$->a = $2; }
  | '!' expr                   { $$ = mk(lx, A_NOT, @$); $$->a = $2; }
  | postfix                    { $$ = $1; }
  ;
postfix: primary               { $$ = $1; }
  | postfix '(' args ')'       { $$ = mk(lx, A_CALL, @$); $$->a = $1; $$->list = $3; }
  | postfix '[' idx ']'        { $$ = mk(lx, A_INDEX, @$); $$->a = $1; $$->list = $3; }
  | postfix '.' IDENT          { $$ = mk(lx, A_MEMBER, @$); $$->a = $1; $$->name = $3; }
  ;
primary: INT                   { $$ = mk(lx, A_INT, @$); $$->ival = $1; }
  | FLOAT                      { $$ = mk(lx, A_FLOAT, @$); $$->fval = $1; }
  | STRING                     { $$ = mk(lx, A_STR, @$); $$->name = $1; }
  | IDENT                      { $$ = mk(lx, A_NAME, @$); $$->name = $1; }
  | '(' expr ')'               { $$ = $2; }
  | '[' exprs_opt ']'          { $$ = mk(lx, A_LIST, @$); $$->list = $2; }
  ;
args: %empty                   { $$ = NULL; }
  | arg_list                   { $$ = $1; }
  | arg_list ','               { $$ = $1; }
  ;
arg_list: arg                  { $$ = $1; }
  | arg_list ',' arg           { $$ = append($1, $3); }
  ;
arg: expr                      { $$ = $1; }
  | IDENT '=' expr             { $$ = mk(lx, A_KWARG, @$); $$->name = $1; $$->a = $3; }
  ;
idx: idxitem                   { $$ = $1; }
  | idx ',' idxitem            { $$ = append($1, $3); }
  ;
idxitem: expr                  { $$ = $1; }
  | expr_opt ':' expr_opt      { $$ = mk(lx, A_SLICE, @$); $$->a = $1; $$->b = $3; }
  | ELLIPSIS                   { $$ = mk(lx, A_ELLIPSIS, @$); }
  ;
expr_opt: %empty               { $$ = NULL; }
  | expr                       { $$ = $1; }
  ;

%%
