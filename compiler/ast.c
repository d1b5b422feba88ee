// ast.c — parse-tree nodes and their text dump (--dump ast).
#include "fluxcc.h"
#include "fdsl.tab.h"

static const char *const kind_name[] = {
#define X(k) #k,
  AST_KINDS(X)
#undef X
};

Ast *ast_new(Ctx *c, int kind, int loc, int end) {
  Ast *n = arena_alloc(&c->arena, sizeof *n);
  n->kind = kind;
  n->loc = loc;
  n->end = end;
  return n;
}

const char *binop_name(int op) {
  switch (op) {
  case '+': return "+";
  case '-': return "-";
  case '*': return "*";
  case '/': return "/";
  case '%': return "%";
  case '<': return "<";
  case '>': return ">";
  case LE: return "<=";
  case GE: return ">=";
  case EQ: return "==";
  case NE: return "!=";
  }
  return "?";
}

static void dump(Ctx *c, Ast *n, FILE *out, int depth) {
  if (n && depth > 2000) {  // elaboration rejects such nesting; just don't overflow the stack
    fprintf(out, "%*s...\n", 2 * depth, "");
    return;
  }
  for (; n; n = n->next) {
    char where[256];
    fprintf(out, "%*s%s", 2 * depth, "", kind_name[n->kind]);
    switch (n->kind) {
    case A_INT: fprintf(out, " %lld", (long long)n->ival); break;
    case A_FLOAT: fprintf(out, " %.17g", n->fval); break;
    case A_BINOP: fprintf(out, " %s", binop_name(n->op)); break;
    case A_STR: fprintf(out, " \"%s\"", n->name); break;
    default:
      if (n->name) fprintf(out, " %s", n->name);
    }
    fprintf(out, "  @%s\n", diag_where(c, n->loc, where, sizeof where));
    dump(c, n->a, out, depth + 1);
    dump(c, n->b, out, depth + 1);
    dump(c, n->c, out, depth + 1);
    dump(c, n->list, out, depth + 1);
  }
}

void ast_dump(Ctx *c, Ast *n, FILE *out) { dump(c, n, out, 0); }
