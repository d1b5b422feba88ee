// elaborate.c — AST → tensor graph.
//
// Runs the program like an interpreter over *values*: numbers, dtypes, lists,
// tuples, functions and tensors (graph node ids). Functions and loops unroll;
// what remains is the graph of primitive ops. Parameters get their safetensors
// key from the `in path` scopes active where they are declared.
#include "fluxcc.h"
#include "fdsl.tab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { V_NONE, V_ERR, V_INT, V_FLOAT, V_DTYPE, V_TENSOR, V_LIST, V_TUPLE, V_STR, V_FN };
static const char *const vkind_name[] = {"nothing", "error", "integer", "number", "dtype", "tensor", "list", "tuple", "string", "function"};

typedef struct Value Value;
struct Value {
  int kind;
  int64_t i;     // INT, DTYPE (the dtype), TENSOR (node id)
  double f;      // FLOAT
  int n;         // LIST/TUPLE length
  Value *items;
  char *s;       // STR
  Ast *fn;       // FN
};

typedef struct { char *name; Value v; int loc; } Binding;
typedef struct Env Env;
struct Env { VEC(Binding) b; Env *parent; };

typedef struct {
  Ctx *c;
  Env *globals;
  char *scope;        // parameter key prefix ("" at top level)
  int scope_loc, scope_end;  // the `in path` that made it (for duplicate-key errors)
  int depth;          // function call depth
  int include_depth;
  int expr_depth;
  int prelude_fi;     // file index of the prelude
  int user_loc, user_end;  // innermost location in a user file (prelude nodes point here)
  bool returned;
  bool halted;        // the work budget is spent: unwind without further errors
  int64_t work;       // evaluation steps so far (see WORK_BUDGET)
  Value ret;
  VEC(Env *) envs;    // every env, freed at the end
  VEC(Ast *) unused_at;  // the unused_keys calls, as g->unused (checked at the end)
} Elab;

// Elaboration runs user code (recursion, loops): it gets a total budget of
// evaluation steps, about 100x what FLUX.1 itself takes, a few seconds at most.
#define WORK_BUDGET 5000000
#define CALL_COST 20        // a call also allocates its environment

static const Value ERR = {.kind = V_ERR};
static const Value NONE = {.kind = V_NONE};

static bool in_prelude(Elab *E, int loc) {
  SrcFile *p = &E->c->files.v[E->prelude_fi];
  return loc >= p->base && loc <= p->base + p->len;
}

// Errors inside the prelude also point at the user's call.
static void err_at(Elab *E, Ast *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err_at(Elab *E, Ast *n, const char *fmt, ...) {
  if (E->halted) return;  // what follows the budget's error is its consequence
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(E->c, n->loc, n->end, "%s", msg);
  if (in_prelude(E, n->loc) && E->user_loc >= 0) diag_note(E->c, E->user_loc, E->user_end, "in the prelude function called here");
}

static int loc_of(Elab *E, Ast *n) { return in_prelude(E, n->loc) ? E->user_loc : n->loc; }

//
// Environments
//
static Env *env_new(Elab *E, Env *parent) {
  Env *e = xcalloc(1, sizeof *e);
  e->parent = parent;
  vec_push(E->envs, e);
  return e;
}

static Binding *env_find(Env *e, const char *name, bool local) {
  for (; e; e = local ? NULL : e->parent)
    for (int i = e->b.n - 1; i >= 0; i--)
      if (!strcmp(e->b.v[i].name, name)) return &e->b.v[i];
  return NULL;
}

static void env_set(Env *e, char *name, Value v, int loc) {
  Binding *b = env_find(e, name, true);
  if (b) b->v = v;
  else vec_push(e->b, ((Binding){name, v, loc}));
}

//
// Tensor helpers: building nodes
//
static Node *N(Elab *E, int id) { return &E->c->g.nodes.v[id]; }

static int mk(Elab *E, int op, int dt, Shape sh, int a, int b, int cc, int loc) {
  Node x = {0};
  x.op = (uint8_t)op;
  x.dt = (uint8_t)dt;
  x.shape = sh;
  x.src[0] = a; x.src[1] = b; x.src[2] = cc;
  x.loc = loc;
  return g_node(E->c, &x);
}

static int mk_const(Elab *E, int dt, Shape sh, double v, int loc) {
  Node x = {0};
  x.op = OP_CONST;
  x.dt = (uint8_t)dt;
  x.shape = sh;
  x.src[0] = x.src[1] = x.src[2] = -1;
  x.c = dtype_round(dt, v);
  x.loc = loc;
  return g_node(E->c, &x);
}

static int mk_reshape(Elab *E, int a, Shape sh, int loc) {
  Node *x = N(E, a);
  if (x->shape.n == sh.n && !memcmp(x->shape.d, sh.d, sizeof(int64_t) * (size_t)sh.n)) return a;
  if (x->op == OP_RESHAPE) a = x->src[0];  // reshape of reshape is one reshape
  return mk(E, OP_RESHAPE, N(E, a)->dt, sh, a, -1, -1, loc);
}

static int mk_expand(Elab *E, int a, Shape sh, int loc) {
  Node *x = N(E, a);
  if (!memcmp(x->shape.d, sh.d, sizeof(int64_t) * (size_t)sh.n)) return a;
  return mk(E, OP_EXPAND, x->dt, sh, a, -1, -1, loc);
}

static int mk_cast(Elab *E, int a, int dt, int loc) {
  if (N(E, a)->dt == dt) return a;
  return mk(E, OP_CAST, dt, N(E, a)->shape, a, -1, -1, loc);
}

static int mk_with_args(Elab *E, int op, int a, Shape sh, const int64_t *args, int nargs, int loc) {
  Node x = {0};
  x.op = (uint8_t)op;
  x.dt = N(E, a)->dt;
  x.shape = sh;
  x.src[0] = a; x.src[1] = x.src[2] = -1;
  memcpy(x.arg, args, sizeof(int64_t) * (size_t)nargs);
  x.loc = loc;
  return g_node(E->c, &x);
}

static Value tensor(int id) { return (Value){.kind = V_TENSOR, .i = id}; }
static Value vint(int64_t i) { return (Value){.kind = V_INT, .i = i}; }
static Value vfloat(double f) { return (Value){.kind = V_FLOAT, .f = f}; }
static bool is_num(Value v) { return v.kind == V_INT || v.kind == V_FLOAT; }
static double num(Value v) { return v.kind == V_INT ? (double)v.i : v.f; }

static void shape_fmt(const Shape *s, char *buf) { shape_str(s, buf, 160); }

// The largest tensor the language accepts, in elements (and the largest arange).
#define MAX_NUMEL ((int64_t)1 << 40)

// Every shape the language makes passes here: positive sizes, an element
// count computed with checked arithmetic and at most MAX_NUMEL.
static bool shape_ok(Elab *E, Ast *at, const Shape *s, const char *what);

// Checked 64-bit integer arithmetic: false (and an error at n) on overflow.
static bool int_arith(Elab *E, Ast *n, int op, int64_t a, int64_t b, int64_t *r) {
  bool ovf = false;
  switch (op) {
  case '+': ovf = __builtin_add_overflow(a, b, r); break;
  case '-': ovf = __builtin_sub_overflow(a, b, r); break;
  case '*': ovf = __builtin_mul_overflow(a, b, r); break;
  case '/': case '%':
    if (b == 0) {
      err_at(E, n, "division by zero in a constant expression");
      return false;
    }
    if (a == INT64_MIN && b == -1) {
      if (op == '%') {
        *r = 0;
        return true;
      }
      ovf = true;
      break;
    }
    *r = op == '/' ? a / b : a % b;
    break;
  }
  if (ovf) err_at(E, n, "integer overflow: %lld %c %lld does not fit in 64 bits", (long long)a, op, (long long)b);
  return !ovf;
}

//
// Evaluation
//
static Value eval(Elab *E, Env *env, Ast *n);
static void exec_list(Elab *E, Env *env, Ast *list, bool top);

static bool want_int(Elab *E, Env *env, Ast *n, int64_t *out, const char *what) {
  Value v = eval(E, env, n);
  if (v.kind == V_ERR) return false;
  if (v.kind != V_INT) {
    err_at(E, n, "%s must be an integer, not %s", what, vkind_name[v.kind]);
    return false;
  }
  *out = v.i;
  return true;
}

// A list of integers: [a, b, c] or a single integer.
static int int_list(Elab *E, Ast *at, Value v, int64_t *out, int max, const char *what) {
  if (v.kind == V_ERR) return -1;
  if (v.kind == V_INT) {
    out[0] = v.i;
    return 1;
  }
  if (v.kind != V_LIST && v.kind != V_TUPLE) {
    err_at(E, at, "%s must be a list of integers, not %s", what, vkind_name[v.kind]);
    return -1;
  }
  if (v.n > max) {
    err_at(E, at, "%s has %d entries; at most %d are allowed", what, v.n, max);
    return -1;
  }
  for (int i = 0; i < v.n; i++) {
    if (v.items[i].kind != V_INT) {
      err_at(E, at, "%s must be a list of integers (entry %d is %s)", what, i, vkind_name[v.items[i].kind]);
      return -1;
    }
    out[i] = v.items[i].i;
  }
  return v.n;
}

static bool norm_axis(Elab *E, Ast *at, int64_t *ax, int ndim) {
  if (*ax < -ndim || *ax >= ndim) {
    err_at(E, at, "axis %lld is out of range for a tensor of rank %d", (long long)*ax, ndim);
    return false;
  }
  if (*ax < 0) *ax += ndim;
  return true;
}

// Broadcast two tensors to one shape (numpy rules: align right, 1 stretches).
static bool broadcast2(Elab *E, Ast *at, int *a, int *b) {
  Shape sa = N(E, *a)->shape, sb = N(E, *b)->shape, out = {.n = sa.n > sb.n ? sa.n : sb.n};
  for (int i = 0; i < out.n; i++) {
    int64_t da = i < out.n - sa.n ? 1 : sa.d[i - (out.n - sa.n)];
    int64_t db = i < out.n - sb.n ? 1 : sb.d[i - (out.n - sb.n)];
    if (da != db && da != 1 && db != 1) {
      char s1[160], s2[160];
      shape_fmt(&sa, s1);
      shape_fmt(&sb, s2);
      err_at(E, at, "shapes %s and %s cannot be broadcast together (axis %d: %lld vs %lld)", s1, s2, i,
             (long long)da, (long long)db);
      return false;
    }
    out.d[i] = da > db ? da : db;
  }
  int loc = loc_of(E, at);
  int *ps[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    Shape s = N(E, *ps[k])->shape, r = {.n = out.n};
    for (int i = 0; i < out.n; i++) r.d[i] = i < out.n - s.n ? 1 : s.d[i - (out.n - s.n)];
    *ps[k] = mk_expand(E, mk_reshape(E, *ps[k], r, loc), out, loc);
  }
  return true;
}

// A number meeting a tensor becomes a constant of the tensor's dtype.
static int as_tensor(Elab *E, Value v, int like, int loc) {
  if (v.kind == V_TENSOR) return (int)v.i;
  Node *x = N(E, like);
  return mk_const(E, x->dt == DT_BOOL ? DT_F32 : x->dt, (Shape){0}, num(v), loc);
}

static Value num_binop(Elab *E, Ast *n, int op, Value a, Value b) {
  bool ints = a.kind == V_INT && b.kind == V_INT;
  double x = num(a), y = num(b);
  int64_t r = 0;
  if (ints && (op == '+' || op == '-' || op == '*')) return int_arith(E, n, op, a.i, b.i, &r) ? vint(r) : ERR;
  if (ints) {  // comparisons of integers as integers (doubles lose bits above 2^53)
    switch (op) {
    case '<': return vint(a.i < b.i);
    case '>': return vint(a.i > b.i);
    case LE: return vint(a.i <= b.i);
    case GE: return vint(a.i >= b.i);
    case EQ: return vint(a.i == b.i);
    case NE: return vint(a.i != b.i);
    }
  }
  switch (op) {
  case '+': return vfloat(x + y);
  case '-': return vfloat(x - y);
  case '*': return vfloat(x * y);
  case '/':
    if (y == 0) {
      err_at(E, n, "division by zero in a constant expression");
      return ERR;
    }
    if (ints) {
      int64_t m;
      if (!int_arith(E, n, '%', a.i, b.i, &m)) return ERR;
      if (m == 0) return int_arith(E, n, '/', a.i, b.i, &r) ? vint(r) : ERR;
    }
    return vfloat(x / y);
  case '%':
    if (!ints) {
      err_at(E, n, "'%%' needs integers");
      return ERR;
    }
    return int_arith(E, n, '%', a.i, b.i, &r) ? vint(r) : ERR;
  case '<': return vint(x < y);
  case '>': return vint(x > y);
  case LE: return vint(x <= y);
  case GE: return vint(x >= y);
  case EQ: return vint(x == y);
  case NE: return vint(x != y);
  }
  return ERR;
}

static Value tensor_binop(Elab *E, Ast *n, int op, Value va, Value vb) {
  int loc = loc_of(E, n);
  int like = va.kind == V_TENSOR ? (int)va.i : (int)vb.i;
  int a = as_tensor(E, va, like, loc), b = as_tensor(E, vb, like, loc);
  int da = N(E, a)->dt, db = N(E, b)->dt;
  if (da != db) {
    err_at(E, n, "dtype mismatch: %s %s %s (cast one side with cast(x, dtype))", dtype_name[da], binop_name(op),
           dtype_name[db]);
    return ERR;
  }
  if (da == DT_BOOL && op != EQ && op != NE) {
    err_at(E, n, "arithmetic on bool tensors; use where(cond, a, b)");
    return ERR;
  }
  if (!broadcast2(E, n, &a, &b)) return ERR;
  Shape sh = N(E, a)->shape;
  int gop, swap = 0, dt = da;
  switch (op) {
  case '+': gop = OP_ADD; break;
  case '-': gop = OP_SUB; break;
  case '*': gop = OP_MUL; break;
  case '/': gop = OP_DIV; break;
  case '<': gop = OP_CMPLT, dt = DT_BOOL; break;
  case '>': gop = OP_CMPLT, dt = DT_BOOL, swap = 1; break;
  case LE: gop = OP_CMPLE, dt = DT_BOOL; break;
  case GE: gop = OP_CMPLE, dt = DT_BOOL, swap = 1; break;
  case EQ: gop = OP_CMPEQ, dt = DT_BOOL; break;
  case NE: gop = OP_CMPNE, dt = DT_BOOL; break;
  default:
    err_at(E, n, "operator '%s' is not defined on tensors", binop_name(op));
    return ERR;
  }
  return tensor(swap ? mk(E, gop, dt, sh, b, a, -1, loc) : mk(E, gop, dt, sh, a, b, -1, loc));
}

static Value binop(Elab *E, Ast *n, int op, Value a, Value b) {
  if (a.kind == V_ERR || b.kind == V_ERR) return ERR;
  if (is_num(a) && is_num(b)) return num_binop(E, n, op, a, b);
  if ((a.kind == V_TENSOR || is_num(a)) && (b.kind == V_TENSOR || is_num(b))) return tensor_binop(E, n, op, a, b);
  if (op == EQ && a.kind == V_DTYPE && b.kind == V_DTYPE) return vint(a.i == b.i);
  if (op == NE && a.kind == V_DTYPE && b.kind == V_DTYPE) return vint(a.i != b.i);
  err_at(E, n, "operator '%s' cannot combine %s and %s", binop_name(op), vkind_name[a.kind], vkind_name[b.kind]);
  return ERR;
}

// dtype[d0, d1, ...] or a bare dtype (a scalar)
static bool eval_type(Elab *E, Env *env, Ast *n, int *dt, Shape *sh) {
  Ast *base = n->kind == A_INDEX ? n->a : n;
  Value v = eval(E, env, base);
  if (v.kind == V_ERR) return false;
  if (v.kind != V_DTYPE) {
    err_at(E, base, "expected a dtype (bf16, f16, f32), not %s", vkind_name[v.kind]);
    return false;
  }
  *dt = (int)v.i;
  sh->n = 0;
  if (n->kind != A_INDEX) return true;
  for (Ast *d = n->list; d; d = d->next) {
    if (sh->n == MAXDIM) {
      err_at(E, d, "more than %d dimensions", MAXDIM);
      return false;
    }
    if (d->kind == A_SLICE || d->kind == A_ELLIPSIS) {
      err_at(E, d, "a shape takes integer sizes");
      return false;
    }
    int64_t x;
    if (!want_int(E, env, d, &x, "a dimension")) return false;
    if (x <= 0) {
      err_at(E, d, "dimension must be positive, got %lld", (long long)x);
      return false;
    }
    sh->d[sh->n++] = x;
  }
  return shape_ok(E, n, sh, "a tensor");
}

static bool shape_ok(Elab *E, Ast *at, const Shape *s, const char *what) {
  int64_t n = 1;
  for (int i = 0; i < s->n; i++) {
    if (s->d[i] <= 0) {
      err_at(E, at, "%s needs positive sizes; axis %d has size %lld", what, i, (long long)s->d[i]);
      return false;
    }
    if (__builtin_mul_overflow(n, s->d[i], &n) || n > MAX_NUMEL) {
      char buf[160];
      shape_fmt(s, buf);
      err_at(E, at, "%s of shape %s has more than 2^40 elements", what, buf);
      return false;
    }
  }
  return true;
}

// `~ normal(m, s)`, `~ uniform(lo, hi)`, `~ grid(h, w)`, `~ zeros`, `~ integers(lo, hi)`
static bool eval_init(Elab *E, Env *env, Ast *n, Buf *b) {
  b->init = INIT_DEFAULT;
  if (!n) return true;
  static const struct { const char *name; int kind, nargs; } dists[] = {
    {"normal", INIT_NORMAL, 2}, {"uniform", INIT_UNIFORM, 2}, {"grid", INIT_GRID, 2}, {"zeros", INIT_ZEROS, 0},
    {"integers", INIT_INTEGERS, 2}};
  Ast *callee = n->kind == A_CALL ? n->a : n;
  if (callee->kind != A_NAME) goto bad;
  for (size_t k = 0; k < sizeof dists / sizeof *dists; k++) {
    if (strcmp(callee->name, dists[k].name)) continue;
    double args[2] = {0, 0};
    int na = 0;
    for (Ast *a = n->kind == A_CALL ? n->list : NULL; a; a = a->next, na++) {
      Value v = na < 2 ? eval(E, env, a) : NONE;
      if (v.kind == V_ERR) return false;
      if (na < 2 && !is_num(v)) {
        err_at(E, a, "'%s' takes numbers", dists[k].name);
        return false;
      }
      if (na < 2) args[na] = num(v);
    }
    if (na != dists[k].nargs) {
      err_at(E, n, "'%s' takes %d arguments, got %d", dists[k].name, dists[k].nargs, na);
      return false;
    }
    b->init = dists[k].kind;
    b->ia = args[0];
    b->ib = args[1];
    if (b->init == INIT_GRID && (b->shape.n != 3 || b->shape.d[2] != 3 || !(fabs(args[0] * args[1]) < 1e15) ||
                                  (int64_t)(args[0] * args[1]) != b->shape.d[1])) {
      err_at(E, n, "grid(%g, %g) fills ids of shape [B, %g, 3]", args[0], args[1], args[0] * args[1]);
      return false;
    }
    if (b->init == INIT_INTEGERS && !(args[0] == floor(args[0]) && args[1] == floor(args[1]) && args[0] < args[1] &&
                                      fabs(args[0]) <= 0x1p24 && fabs(args[1]) <= 0x1p24)) {
      err_at(E, n, "integers(lo, hi) takes whole numbers lo < hi within +-2^24 (exact in f32), got (%g, %g)", args[0], args[1]);
      return false;
    }
    return true;
  }
bad:
  err_at(E, n, "unknown initializer; use normal(mean, std), uniform(lo, hi), grid(h, w), integers(lo, hi) or zeros");
  return false;
}

static Value make_buf(Elab *E, Env *env, Ast *n, char *name, int is_param) {
  Buf b = {0};
  b.name = name;
  b.kind = is_param ? BUF_PARAM : BUF_INPUT;
  // where the user sees this key made: the param line, or the `in path` for prelude params
  // where the user sees this key made: the innermost `in path`, else the param line
  b.loc = E->scope_loc >= 0 ? E->scope_loc : !in_prelude(E, n->loc) ? n->loc : E->user_loc;
  int end = b.loc == E->scope_loc ? E->scope_end : b.loc == n->loc ? n->end : E->user_end;
  if (!eval_type(E, env, n->a, &b.dt, &b.shape)) return ERR;
  if (b.dt == DT_BOOL) {
    err_at(E, n->a, "%s cannot be bool", is_param ? "a parameter" : "an input");
    return ERR;
  }
  if (!eval_init(E, env, n->b, &b)) return ERR;
  Graph *g = &E->c->g;
  for (int i = 0; i < g->bufs.n; i++) {
    if (strcmp(g->bufs.v[i].name, name) || g->bufs.v[i].kind != b.kind) continue;
    if (is_param) {
      diag_error(E->c, b.loc, end, "duplicate parameter key '%s'", name);
      diag_note(E->c, g->bufs.v[i].loc, -1, "'%s' first declared here", name);
    } else {
      err_at(E, n, "duplicate input '%s'", name);
    }
    return ERR;
  }
  Node x = {0};
  x.op = OP_LOAD;
  x.dt = (uint8_t)b.dt;
  x.shape = b.shape;
  x.src[0] = x.src[1] = x.src[2] = -1;
  x.buf = g->bufs.n;
  x.loc = loc_of(E, n);
  b.node = g_node(E->c, &x);
  vec_push(g->bufs, b);
  return tensor(b.node);
}

//
// Builtins
//
typedef struct {
  Elab *E;
  Ast *call;
  Value *a;     // positional
  Ast **at;     // their expressions (for error locations)
  int n;
  char **kw;    // keyword names
  Value *kv;
  Ast **kat;
  int nk;
  int loc;
} Args;

static bool arg_tensor(Args *A, int i, int *id) {
  if (A->a[i].kind == V_ERR) return false;
  if (A->a[i].kind != V_TENSOR) {
    err_at(A->E, A->at[i], "expected a tensor, not %s", vkind_name[A->a[i].kind]);
    return false;
  }
  *id = (int)A->a[i].i;
  return true;
}

static Value *kwarg(Args *A, const char *name, Ast **at) {
  for (int i = 0; i < A->nk; i++)
    if (!strcmp(A->kw[i], name)) {
      if (at) *at = A->kat[i];
      return &A->kv[i];
    }
  return NULL;
}

static Value bi_unary(Args *A, int op, double (*f)(double)) {
  Elab *E = A->E;
  if (is_num(A->a[0])) return vfloat(f(num(A->a[0])));
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  if (N(E, x)->dt == DT_BOOL && op != OP_NOT) {
    err_at(E, A->at[0], "math on a bool tensor; cast it first");
    return ERR;
  }
  return tensor(mk(E, op, N(E, x)->dt, N(E, x)->shape, x, -1, -1, A->loc));
}

static double d_recip(double x) { return 1 / x; }
static double d_neg(double x) { return -x; }

#define UNARY(fname, OP, f) static Value bi_##fname(Args *A) { return bi_unary(A, OP, f); }
UNARY(exp, OP_EXP, exp)
UNARY(log, OP_LOG, log)
UNARY(sqrt, OP_SQRT, sqrt)
UNARY(sin, OP_SIN, sin)
UNARY(cos, OP_COS, cos)
UNARY(tanh, OP_TANH, tanh)
UNARY(abs, OP_ABS, fabs)
UNARY(recip, OP_RECIP, d_recip)
#undef UNARY

static Value bi_cast(Args *A) {
  Elab *E = A->E;
  int x;
  if (A->a[1].kind != V_DTYPE) {
    if (A->a[1].kind != V_ERR) err_at(E, A->at[1], "cast needs a dtype, not %s", vkind_name[A->a[1].kind]);
    return ERR;
  }
  if (!arg_tensor(A, 0, &x)) return ERR;
  return tensor(mk_cast(E, x, (int)A->a[1].i, A->loc));
}

static Value bi_dtype(Args *A) {
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  return (Value){.kind = V_DTYPE, .i = N(A->E, x)->dt};
}

static Value bi_shape(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  Shape s = N(E, x)->shape;
  if (A->n == 2) {
    if (A->a[1].kind != V_INT) {
      err_at(E, A->at[1], "axis must be an integer");
      return ERR;
    }
    int64_t ax = A->a[1].i;
    if (!norm_axis(E, A->at[1], &ax, s.n)) return ERR;
    return vint(s.d[ax]);
  }
  Value v = {.kind = V_LIST, .n = s.n, .items = arena_alloc(&E->c->arena, sizeof(Value) * (size_t)(s.n + 1))};
  for (int i = 0; i < s.n; i++) v.items[i] = vint(s.d[i]);
  return v;
}

static Value bi_ndim(Args *A) {
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  return vint(N(A->E, x)->shape.n);
}

static Value bi_len(Args *A) {
  if (A->a[0].kind != V_LIST && A->a[0].kind != V_TUPLE) {
    if (A->a[0].kind != V_ERR) err_at(A->E, A->at[0], "len needs a list");
    return ERR;
  }
  return vint(A->a[0].n);
}

// reduce over the given axes, keeping them as size 1
static Value reduce(Args *A, int op) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  Shape s = N(E, x)->shape;
  int64_t axes[MAXDIM], flags[2 * MAXDIM] = {0};
  int na;
  if (A->n == 1) {
    na = s.n;
    for (int i = 0; i < s.n; i++) axes[i] = i;
  } else {
    na = 0;
    for (int i = 1; i < A->n; i++) {
      int64_t tmp[MAXDIM];
      int k = int_list(E, A->at[i], A->a[i], tmp, MAXDIM, "axes");
      if (k < 0) return ERR;
      for (int j = 0; j < k && na < MAXDIM; j++) axes[na++] = tmp[j];
    }
  }
  Shape out = s;
  for (int i = 0; i < na; i++) {
    if (!norm_axis(E, A->at[A->n > 1 ? 1 : 0], &axes[i], s.n)) return ERR;
    flags[axes[i]] = 1;
    out.d[axes[i]] = 1;
  }
  if (N(E, x)->dt == DT_BOOL) {
    err_at(E, A->at[0], "cannot reduce a bool tensor; cast it first");
    return ERR;
  }
  bool any = false;
  for (int i = 0; i < s.n; i++) any |= flags[i] && s.d[i] != 1;
  if (!any) return tensor(x);
  return tensor(mk_with_args(E, op, x, out, flags, MAXDIM, A->loc));
}

static Value bi_sum(Args *A) { return reduce(A, OP_RSUM); }

// max(x, axis...) reduces; max(a, b) with a tensor or number b is elementwise
static Value minmax(Args *A, bool is_max) {
  Elab *E = A->E;
  if (A->n == 2 && is_num(A->a[0]) && is_num(A->a[1])) {
    double x = num(A->a[0]), y = num(A->a[1]);
    if (A->a[0].kind == V_INT && A->a[1].kind == V_INT) return vint(is_max ? (A->a[0].i > A->a[1].i ? A->a[0].i : A->a[1].i) : (A->a[0].i < A->a[1].i ? A->a[0].i : A->a[1].i));
    return vfloat(is_max ? fmax(x, y) : fmin(x, y));
  }
  bool elementwise = A->n == 2 && (A->a[1].kind == V_TENSOR || A->a[1].kind == V_FLOAT);
  if (!elementwise) {
    if (is_max) return reduce(A, OP_RMAX);
    // min = -max(-x)
    int x;
    if (!arg_tensor(A, 0, &x)) return ERR;
    Node *nx = N(E, x);
    A->a[0] = tensor(mk(E, OP_NEG, nx->dt, nx->shape, x, -1, -1, A->loc));
    Value r = reduce(A, OP_RMAX);
    if (r.kind != V_TENSOR) return r;
    return tensor(mk(E, OP_NEG, N(E, (int)r.i)->dt, N(E, (int)r.i)->shape, (int)r.i, -1, -1, A->loc));
  }
  if (A->a[0].kind != V_TENSOR && A->a[1].kind != V_TENSOR) return ERR;
  int like = A->a[0].kind == V_TENSOR ? (int)A->a[0].i : (int)A->a[1].i;
  int a = as_tensor(E, A->a[0], like, A->loc), b = as_tensor(E, A->a[1], like, A->loc);
  if (N(E, a)->dt != N(E, b)->dt) {
    err_at(E, A->call, "dtype mismatch: %s and %s", dtype_name[N(E, a)->dt], dtype_name[N(E, b)->dt]);
    return ERR;
  }
  if (!broadcast2(E, A->call, &a, &b)) return ERR;
  return tensor(mk(E, is_max ? OP_MAX : OP_MIN, N(E, a)->dt, N(E, a)->shape, a, b, -1, A->loc));
}
static Value bi_max(Args *A) { return minmax(A, true); }
static Value bi_min(Args *A) { return minmax(A, false); }

static Value bi_where(Args *A) {
  Elab *E = A->E;
  int c;
  if (!arg_tensor(A, 0, &c)) return ERR;
  if (N(E, c)->dt != DT_BOOL) {
    err_at(E, A->at[0], "where's condition must be a bool tensor (a comparison), not %s", dtype_name[N(E, c)->dt]);
    return ERR;
  }
  Value va = A->a[1], vb = A->a[2];
  if (va.kind == V_ERR || vb.kind == V_ERR) return ERR;
  if (!(va.kind == V_TENSOR || is_num(va)) || !(vb.kind == V_TENSOR || is_num(vb))) {
    err_at(E, A->call, "where takes tensors or numbers");
    return ERR;
  }
  if (va.kind != V_TENSOR && vb.kind != V_TENSOR) {
    err_at(E, A->call, "where needs at least one tensor value (to give the dtype)");
    return ERR;
  }
  int like = va.kind == V_TENSOR ? (int)va.i : (int)vb.i;
  int a = as_tensor(E, va, like, A->loc), b = as_tensor(E, vb, like, A->loc);
  if (N(E, a)->dt != N(E, b)->dt) {
    err_at(E, A->call, "dtype mismatch in where: %s and %s", dtype_name[N(E, a)->dt], dtype_name[N(E, b)->dt]);
    return ERR;
  }
  if (!broadcast2(E, A->call, &a, &b) || !broadcast2(E, A->call, &c, &a) || !broadcast2(E, A->call, &a, &b))
    return ERR;
  return tensor(mk(E, OP_WHERE, N(E, a)->dt, N(E, a)->shape, c, a, b, A->loc));
}

// take(table, ids): the rows of table [n, ...] that whole-number ids [...] pick,
// [..., table's axes after the first] (numpy.take along axis 0): a gather, each
// output element one load at its id's row. Ids outside [0, n) are errors where
// they are known (fluxcc run, and ./flux for ids that are an input).
static Value bi_take(Args *A) {
  Elab *E = A->E;
  int t, ids;
  if (!arg_tensor(A, 0, &t) || !arg_tensor(A, 1, &ids)) return ERR;
  Shape ts = N(E, t)->shape, is = N(E, ids)->shape, s = is;
  if (ts.n < 1) return err_at(E, A->at[0], "take's table must have an axis of rows"), ERR;
  if (N(E, ids)->dt == DT_BOOL) return err_at(E, A->at[1], "take's ids must be numbers (whole ones), not bool"), ERR;
  if (is.n + ts.n - 1 > MAXDIM)
    return err_at(E, A->call, "take's result would have %d axes (ids %d + table %d - 1); at most %d", is.n + ts.n - 1, is.n, ts.n,
                  MAXDIM), ERR;
  for (int i = 1; i < ts.n; i++) s.d[s.n++] = ts.d[i];
  if (!shape_ok(E, A->call, &s, "take's result")) return ERR;
  return tensor(mk(E, OP_GATHER, N(E, t)->dt, s, t, ids, -1, A->loc));
}

static Value bi_reshape(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  Shape s = {0};
  int k = int_list(E, A->at[1], A->a[1], s.d, MAXDIM, "shape");
  if (k < 0) return ERR;
  s.n = k;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < k; i++) {
    if (s.d[i] == -1 && infer < 0) infer = i;
    else if (s.d[i] <= 0) {
      err_at(E, A->at[1], "reshape sizes must be positive (one may be -1)");
      return ERR;
    } else if (__builtin_mul_overflow(known, s.d[i], &known) || known > MAX_NUMEL) {
      char s2[160];
      shape_fmt(&s, s2);
      err_at(E, A->at[1], "reshape to %s: more than 2^40 elements", s2);
      return ERR;
    }
  }
  int64_t total = shape_numel(&N(E, x)->shape);
  if (infer >= 0) s.d[infer] = known && total % known == 0 ? total / known : -1;
  if ((infer >= 0 && s.d[infer] < 0) || known * (infer >= 0 ? s.d[infer] : 1) != total) {
    char s1[160], s2[160];
    shape_fmt(&N(E, x)->shape, s1);
    shape_fmt(&s, s2);
    err_at(E, A->call, "cannot reshape %s (%lld elements) to %s", s1, (long long)total, s2);
    return ERR;
  }
  return tensor(mk_reshape(E, x, s, A->loc));
}

static Value permute(Elab *E, Ast *at, int x, int64_t *perm, int loc) {
  Shape s = N(E, x)->shape, out = {.n = s.n};
  int seen[MAXDIM] = {0};
  bool ident = true;
  for (int i = 0; i < s.n; i++) {
    if (!norm_axis(E, at, &perm[i], s.n)) return ERR;
    if (seen[perm[i]]++) {
      err_at(E, at, "permutation repeats axis %lld", (long long)perm[i]);
      return ERR;
    }
    out.d[i] = s.d[perm[i]];
    ident &= perm[i] == i;
  }
  if (ident) return tensor(x);
  return tensor(mk_with_args(E, OP_PERMUTE, x, out, perm, s.n, loc));
}

static Value bi_permute(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  int64_t p[MAXDIM];
  int k = int_list(E, A->at[1], A->a[1], p, MAXDIM, "permutation");
  if (k < 0) return ERR;
  if (k != N(E, x)->shape.n) {
    err_at(E, A->at[1], "permutation has %d axes but the tensor has rank %d", k, N(E, x)->shape.n);
    return ERR;
  }
  return permute(E, A->at[1], x, p, A->loc);
}

// unfold(x, axis, size, step = 1): the sliding windows of `size` along `axis`,
// `step` apart, as torch's Tensor.unfold: axis shrinks to (n - size) / step + 1,
// a window axis of `size` is appended; out[..., i, ..., j] = x[..., i * step + j, ...].
// A view: no copy.
static Value bi_unfold(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  Shape s = N(E, x)->shape;
  if (A->a[1].kind != V_INT) return err_at(E, A->at[1], "unfold's axis must be an integer"), ERR;
  int64_t ax = A->a[1].i;
  if (!norm_axis(E, A->at[1], &ax, s.n)) return ERR;
  if (A->a[2].kind != V_INT || A->a[2].i < 1 || A->a[2].i > s.d[ax])
    return err_at(E, A->at[2], "unfold's window size must be an integer in 1..%lld (the size of axis %lld)", (long long)s.d[ax],
                  (long long)ax), ERR;
  int64_t step = 1;
  if (A->n == 4 && (A->a[3].kind != V_INT || A->a[3].i < 1 || A->a[3].i > s.d[ax]))
    return err_at(E, A->at[3], "unfold's step must be an integer in 1..%lld (the size of axis %lld)", (long long)s.d[ax],
                  (long long)ax), ERR;
  if (A->n == 4) step = A->a[3].i;
  if (s.n == MAXDIM) return err_at(E, A->call, "unfold adds an axis: the tensor has %d already (the most)", MAXDIM), ERR;
  int64_t args[3] = {ax, A->a[2].i, step};
  s.d[ax] = (s.d[ax] - args[1]) / step + 1;
  s.d[s.n++] = args[1];
  if (!shape_ok(E, A->call, &s, "unfold's windows")) return ERR;
  return tensor(mk_with_args(E, OP_UNFOLD, x, s, args, 3, A->loc));
}

static Value bi_transpose(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  int nd = N(E, x)->shape.n;
  int64_t a, b;
  if (A->a[1].kind != V_INT || A->a[2].kind != V_INT) {
    err_at(E, A->call, "transpose(x, axis_a, axis_b) takes integer axes");
    return ERR;
  }
  a = A->a[1].i, b = A->a[2].i;
  if (!norm_axis(E, A->at[1], &a, nd) || !norm_axis(E, A->at[2], &b, nd)) return ERR;
  int64_t p[MAXDIM];
  for (int i = 0; i < nd; i++) p[i] = i;
  p[a] = b, p[b] = a;
  return permute(E, A->call, x, p, A->loc);
}

static Value bi_expand(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  Shape s = {0};
  int k = int_list(E, A->at[1], A->a[1], s.d, MAXDIM, "shape");
  if (k < 0) return ERR;
  s.n = k;
  if (!shape_ok(E, A->at[1], &s, "expand's target")) return ERR;
  Shape xs = N(E, x)->shape;
  if (xs.n > s.n) goto bad;
  for (int i = 0; i < xs.n; i++) {
    int64_t d = xs.d[xs.n - 1 - i], t = s.d[s.n - 1 - i];
    if (d != t && d != 1) goto bad;
  }
  {
    Shape r = {.n = s.n};
    for (int i = 0; i < s.n; i++) r.d[i] = i < s.n - xs.n ? 1 : xs.d[i - (s.n - xs.n)];
    return tensor(mk_expand(E, mk_reshape(E, x, r, A->loc), s, A->loc));
  }
bad:;
  char s1[160], s2[160];
  shape_fmt(&xs, s1);
  shape_fmt(&s, s2);
  err_at(E, A->call, "cannot broadcast %s to %s", s1, s2);
  return ERR;
}

static Value bi_unsqueeze(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  Shape s = N(E, x)->shape;
  int64_t ax;
  if (A->a[1].kind != V_INT) return err_at(E, A->at[1], "axis must be an integer"), ERR;
  ax = A->a[1].i;
  if (s.n == MAXDIM) return err_at(E, A->call, "more than %d dimensions", MAXDIM), ERR;
  if (!norm_axis(E, A->at[1], &ax, s.n + 1)) return ERR;
  for (int i = s.n; i > ax; i--) s.d[i] = s.d[i - 1];
  s.d[ax] = 1;
  s.n++;
  return tensor(mk_reshape(E, x, s, A->loc));
}

static Value bi_squeeze(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  Shape s = N(E, x)->shape;
  if (A->a[1].kind != V_INT) return err_at(E, A->at[1], "axis must be an integer"), ERR;
  int64_t ax = A->a[1].i;
  if (!norm_axis(E, A->at[1], &ax, s.n)) return ERR;
  if (s.d[ax] != 1) return err_at(E, A->at[1], "cannot squeeze axis %lld of size %lld", (long long)ax, (long long)s.d[ax]), ERR;
  for (int i = (int)ax; i < s.n - 1; i++) s.d[i] = s.d[i + 1];
  s.n--;
  return tensor(mk_reshape(E, x, s, A->loc));
}

static int shrink(Elab *E, int x, int axis, int64_t lo, int64_t hi, int loc) {
  Shape s = N(E, x)->shape;
  if (lo == 0 && hi == s.d[axis]) return x;
  int64_t pairs[2 * MAXDIM];
  for (int i = 0; i < s.n; i++) pairs[2 * i] = 0, pairs[2 * i + 1] = s.d[i];
  pairs[2 * axis] = lo, pairs[2 * axis + 1] = hi;
  s.d[axis] = hi - lo;
  return mk_with_args(E, OP_SHRINK, x, s, pairs, 2 * s.n, loc);
}

static int pad(Elab *E, int x, const int64_t *pairs, int loc) {
  Shape s = N(E, x)->shape;
  bool any = false;
  for (int i = 0; i < s.n; i++) {
    s.d[i] += pairs[2 * i] + pairs[2 * i + 1];  // callers checked the sizes (pad_shape_ok)
    any |= pairs[2 * i] || pairs[2 * i + 1];
  }
  return any ? mk_with_args(E, OP_PAD, x, s, pairs, 2 * s.n, loc) : x;
}

static bool pad_shape_ok(Elab *E, Ast *at, int x, const int64_t *pairs) {
  Shape s = N(E, x)->shape;
  for (int i = 0; i < s.n; i++)
    if (__builtin_add_overflow(s.d[i], pairs[2 * i], &s.d[i]) || __builtin_add_overflow(s.d[i], pairs[2 * i + 1], &s.d[i]))
      return err_at(E, at, "padded size of axis %d does not fit in 64 bits", i), false;
  return shape_ok(E, at, &s, "the padded tensor");
}

// pad(x, [[lo, hi], ...]) zero padding, one pair per axis
static Value bi_pad(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  int nd = N(E, x)->shape.n;
  Value p = A->a[1];
  if (p.kind != V_LIST || p.n != nd) return err_at(E, A->at[1], "pad needs one [before, after] pair per axis (%d)", nd), ERR;
  int64_t pairs[2 * MAXDIM];
  for (int i = 0; i < nd; i++) {
    int64_t two[2];
    if (int_list(E, A->at[1], p.items[i], two, 2, "a pad pair") != 2 || two[0] < 0 || two[1] < 0)
      return err_at(E, A->at[1], "pad pairs are two non-negative integers"), ERR;
    pairs[2 * i] = two[0], pairs[2 * i + 1] = two[1];
  }
  if (!pad_shape_ok(E, A->at[1], x, pairs)) return ERR;
  return tensor(pad(E, x, pairs, A->loc));
}

static bool get_axis_kw(Args *A, int nd, int64_t *ax, int64_t dflt) {
  Ast *at = A->call;
  Value *v = kwarg(A, "axis", &at);
  *ax = dflt;
  if (v) {
    if (v->kind != V_INT) return err_at(A->E, at, "axis must be an integer"), false;
    *ax = v->i;
  }
  return norm_axis(A->E, at, ax, nd);
}

// concat(a, b, ..., axis=k): zero-pad each part into place and add them up
static Value bi_concat(Args *A) {
  Elab *E = A->E;
  int parts[64], np = 0;
  for (int i = 0; i < A->n; i++) {
    Value v = A->a[i];
    Value *items = &A->a[i];
    int cnt = 1;
    if (v.kind == V_LIST || v.kind == V_TUPLE) items = v.items, cnt = v.n;
    for (int k = 0; k < cnt; k++) {
      if (items[k].kind == V_ERR) return ERR;
      if (items[k].kind != V_TENSOR) return err_at(E, A->at[i], "concat takes tensors, not %s", vkind_name[items[k].kind]), ERR;
      if (np == 64) return err_at(E, A->call, "too many tensors in concat"), ERR;
      parts[np++] = (int)items[k].i;
    }
  }
  if (np == 0) return err_at(E, A->call, "concat of nothing"), ERR;
  Shape s0 = N(E, parts[0])->shape;
  int64_t ax;
  if (!get_axis_kw(A, s0.n, &ax, 0)) return ERR;
  int64_t total = 0;
  for (int i = 0; i < np; i++) {
    Shape s = N(E, parts[i])->shape;
    bool ok = s.n == s0.n && N(E, parts[i])->dt == N(E, parts[0])->dt;
    for (int k = 0; ok && k < s.n; k++) ok = k == ax || s.d[k] == s0.d[k];
    if (!ok) {
      char s1[160], s2[160];
      shape_fmt(&s0, s1);
      shape_fmt(&s, s2);
      err_at(E, A->call, "concat parts differ: %s %s and %s %s (only axis %lld may differ)", dtype_name[N(E, parts[0])->dt], s1,
             dtype_name[N(E, parts[i])->dt], s2, (long long)ax);
      return ERR;
    }
    total += s.d[ax];  // at most 64 parts of at most 2^40: no overflow
  }
  {
    Shape t = s0;
    t.d[ax] = total;
    if (!shape_ok(E, A->call, &t, "concat's result")) return ERR;
  }
  int acc = -1;
  int64_t at = 0;
  for (int i = 0; i < np; i++) {
    int64_t pairs[2 * MAXDIM] = {0};
    int64_t len = N(E, parts[i])->shape.d[ax];
    pairs[2 * ax] = at, pairs[2 * ax + 1] = total - at - len;
    at += len;
    int p = pad(E, parts[i], pairs, A->loc);
    acc = acc < 0 ? p : mk(E, OP_ADD, N(E, p)->dt, N(E, p)->shape, acc, p, -1, A->loc);
  }
  return tensor(acc);
}

// split(x, [sizes], axis=k) and chunk(x, n, axis=k) -> tuple of slices
static Value split_sizes(Args *A, int x, int64_t *sizes, int n, int64_t ax) {
  Elab *E = A->E;
  int64_t tot = 0;
  for (int i = 0; i < n; i++) {
    if (sizes[i] <= 0) return err_at(E, A->at[1], "split sizes must be positive, got %lld", (long long)sizes[i]), ERR;
    if (__builtin_add_overflow(tot, sizes[i], &tot)) return err_at(E, A->at[1], "split sizes overflow 64 bits"), ERR;
  }
  if (tot != N(E, x)->shape.d[ax])
    return err_at(E, A->call, "split sizes add up to %lld but axis %lld has size %lld", (long long)tot, (long long)ax,
                  (long long)N(E, x)->shape.d[ax]), ERR;
  Value t = {.kind = V_TUPLE, .n = n, .items = arena_alloc(&E->c->arena, sizeof(Value) * (size_t)n)};
  int64_t at = 0;
  for (int i = 0; i < n; i++) {
    t.items[i] = tensor(shrink(E, x, (int)ax, at, at + sizes[i], A->loc));
    at += sizes[i];
  }
  return t;
}

static Value bi_split(Args *A) {
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  int64_t sizes[64], ax;
  int n = int_list(A->E, A->at[1], A->a[1], sizes, 64, "split sizes");
  if (n < 0 || !get_axis_kw(A, N(A->E, x)->shape.n, &ax, -1)) return ERR;
  return split_sizes(A, x, sizes, n, ax);
}

static Value bi_chunk(Args *A) {
  Elab *E = A->E;
  int x;
  if (!arg_tensor(A, 0, &x)) return ERR;
  int64_t ax;
  if (A->a[1].kind != V_INT || A->a[1].i <= 0 || A->a[1].i > 64) return err_at(E, A->at[1], "chunk count must be an integer in 1..64"), ERR;
  if (!get_axis_kw(A, N(E, x)->shape.n, &ax, -1)) return ERR;
  int n = (int)A->a[1].i;
  int64_t d = N(E, x)->shape.d[ax], sizes[64];
  if (d % n) return err_at(E, A->call, "cannot split axis of size %lld into %d equal chunks", (long long)d, n), ERR;
  for (int i = 0; i < n; i++) sizes[i] = d / n;
  return split_sizes(A, x, sizes, n, ax);
}

static Value bi_arange(Args *A) {
  Elab *E = A->E;
  if (A->a[0].kind != V_INT || A->a[0].i <= 0) return err_at(E, A->at[0], "arange needs a positive integer"), ERR;
  if (A->a[0].i > MAX_NUMEL) return err_at(E, A->at[0], "arange(%lld): more than 2^40 elements", (long long)A->a[0].i), ERR;
  int dt = DT_F32;
  Ast *at = A->call;
  Value *d = kwarg(A, "dtype", &at);
  if (d) {
    if (d->kind != V_DTYPE) return err_at(E, at, "dtype must be a dtype"), ERR;
    dt = (int)d->i;
  }
  Node x = {0};
  x.op = OP_ARANGE;
  x.dt = (uint8_t)dt;
  x.shape = (Shape){.n = 1, .d = {A->a[0].i}};
  x.src[0] = x.src[1] = x.src[2] = -1;
  x.loc = A->loc;
  return tensor(g_node(E->c, &x));
}

static Value bi_full(Args *A) {
  Elab *E = A->E;
  Shape s = {0};
  int k = int_list(E, A->at[0], A->a[0], s.d, MAXDIM, "shape");
  if (k < 0) return ERR;
  s.n = k;
  if (!shape_ok(E, A->at[0], &s, "full's shape")) return ERR;
  if (!is_num(A->a[1])) return err_at(E, A->at[1], "fill value must be a number"), ERR;
  if (A->a[2].kind != V_DTYPE) return err_at(E, A->at[2], "expected a dtype"), ERR;
  return tensor(mk_const(E, (int)A->a[2].i, s, num(A->a[1]), A->loc));
}

static Value bi_assert(Args *A) {
  if (A->a[0].kind == V_ERR) return ERR;
  if (!is_num(A->a[0])) return err_at(A->E, A->at[0], "assert needs a number"), ERR;
  if (num(A->a[0]) == 0) {
    err_at(A->E, A->call, "assertion failed%s%s", A->n > 1 && A->a[1].kind == V_STR ? ": " : "",
           A->n > 1 && A->a[1].kind == V_STR ? A->a[1].s : "");
    return ERR;
  }
  return NONE;
}

// unused_keys("prefix"): a checkpoint this model reads may also hold tensors
// under prefix that it does not use (ae.safetensors' encoder.* for the
// decoder); loading skips them instead of refusing the file.
static Value bi_unused_keys(Args *A) {
  if (A->a[0].kind != V_STR || !A->a[0].s[0]) return err_at(A->E, A->at[0], "unused_keys needs a non-empty string: a key prefix"), ERR;
  vec_push(A->E->c->g.unused, A->a[0].s);
  vec_push(A->E->unused_at, A->at[0]);
  return NONE;
}

// checkpoint("text_encoder/model.safetensors", "tokenizer"): where the model's
// weights (and its tokenizer, if it takes a prompt) are in a checkpoint folder
// of the Hugging Face layout; ./flux --model-dir DIR reads them from there.
static Value bi_checkpoint(Args *A) {
  Graph *g = &A->E->c->g;
  for (int i = 0; i < A->n; i++)
    if (A->a[i].kind != V_STR || !A->a[i].s[0] || A->a[i].s[0] == '/' || strstr(A->a[i].s, ".."))
      return err_at(A->E, A->at[i], "checkpoint needs %s: a path inside the model folder, without '..'", i ? "the tokenizer folder" : "the weights file"), ERR;
  if (g->ckpt_weights) return err_at(A->E, A->at[0], "checkpoint() given twice: a model has one weights file"), ERR;
  g->ckpt_weights = A->a[0].s;
  g->ckpt_tokenizer = A->n > 1 ? A->a[1].s : NULL;
  return NONE;
}

static Value bi_int(Args *A) {
  if (!is_num(A->a[0])) return err_at(A->E, A->at[0], "int() needs a number"), ERR;
  if (A->a[0].kind == V_INT) return A->a[0];
  double f = A->a[0].f;
  if (!(f > -9223372036854775808.0 && f < 9223372036854775808.0))  // also NaN
    return err_at(A->E, A->at[0], "int(%g) does not fit in a 64-bit integer", f), ERR;
  return vint((int64_t)f);
}

static Value bi_float(Args *A) {
  if (!is_num(A->a[0])) return err_at(A->E, A->at[0], "float() needs a number"), ERR;
  return vfloat(num(A->a[0]));
}

static const struct Builtin {
  const char *name;
  int min, max;          // positional argument counts (max -1: any)
  const char *kwargs;    // allowed keyword names, space separated
  Value (*fn)(Args *);
} builtins[] = {
  {"exp", 1, 1, "", bi_exp}, {"log", 1, 1, "", bi_log}, {"sqrt", 1, 1, "", bi_sqrt},
  {"sin", 1, 1, "", bi_sin}, {"cos", 1, 1, "", bi_cos}, {"tanh", 1, 1, "", bi_tanh},
  {"abs", 1, 1, "", bi_abs}, {"recip", 1, 1, "", bi_recip},
  {"cast", 2, 2, "", bi_cast}, {"dtype", 1, 1, "", bi_dtype}, {"shape", 1, 2, "", bi_shape},
  {"ndim", 1, 1, "", bi_ndim}, {"len", 1, 1, "", bi_len},
  {"sum", 1, -1, "", bi_sum}, {"max", 1, -1, "", bi_max}, {"min", 1, -1, "", bi_min},
  {"where", 3, 3, "", bi_where}, {"take", 2, 2, "", bi_take},
  {"reshape", 2, 2, "", bi_reshape}, {"permute", 2, 2, "", bi_permute}, {"transpose", 3, 3, "", bi_transpose},
  {"expand", 2, 2, "", bi_expand}, {"unsqueeze", 2, 2, "", bi_unsqueeze}, {"squeeze", 2, 2, "", bi_squeeze},
  {"pad", 2, 2, "", bi_pad}, {"unfold", 3, 4, "", bi_unfold}, {"concat", 1, -1, "axis", bi_concat}, {"split", 2, 2, "axis", bi_split},
  {"chunk", 2, 2, "axis", bi_chunk}, {"arange", 1, 1, "dtype", bi_arange}, {"full", 3, 3, "", bi_full},
  {"assert", 1, 2, "", bi_assert}, {"unused_keys", 1, 1, "", bi_unused_keys}, {"checkpoint", 1, 2, "", bi_checkpoint}, {"int", 1, 1, "", bi_int}, {"float", 1, 1, "", bi_float},
};

static bool kw_allowed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ' ');
    size_t k = e ? (size_t)(e - p) : strlen(p);
    if (k == n && !strncmp(p, name, n)) return true;
    p += k + (e != NULL);
  }
  return false;
}

//
// Calls
//
static Value call_user(Elab *E, Env *env, Ast *call, Ast *fn) {
  const char *fname = fn->name;
  E->work += CALL_COST;
  if (E->depth >= 200) {
    err_at(E, call, "call depth exceeds 200 (recursive function '%s'?)", fname);
    return ERR;
  }
  Env *local = env_new(E, E->globals);
  int npar = 0;
  for (Ast *p = fn->list; p; p = p->next) npar++;
  Ast **pars = arena_alloc(&E->c->arena, sizeof(Ast *) * (size_t)(npar + 1));
  bool *set = arena_alloc(&E->c->arena, sizeof(bool) * (size_t)(npar + 1));
  npar = 0;
  for (Ast *p = fn->list; p; p = p->next) pars[npar++] = p;
  int pos = 0;
  bool ok = true;
  for (Ast *a = call->list; a; a = a->next) {
    int k = -1;
    Value v;
    if (a->kind == A_KWARG) {
      for (int i = 0; i < npar; i++)
        if (!strcmp(pars[i]->name, a->name)) k = i;
      if (k < 0) {
        err_at(E, a, "'%s' has no parameter named '%s'", fname, a->name);
        ok = false;
        continue;
      }
      v = eval(E, env, a->a);
    } else {
      if (pos >= npar) {
        err_at(E, a, "too many arguments: '%s' takes %d", fname, npar);
        ok = false;
        break;
      }
      k = pos++;
      v = eval(E, env, a);
    }
    if (set[k]) {
      err_at(E, a, "argument '%s' given twice", pars[k]->name);
      ok = false;
    }
    set[k] = true;
    env_set(local, pars[k]->name, v, a->loc);
  }
  for (int i = 0; i < npar && ok; i++) {
    if (set[i]) continue;
    if (!pars[i]->a) {
      err_at(E, call, "missing argument '%s' in call to '%s'", pars[i]->name, fname);
      ok = false;
      break;
    }
    env_set(local, pars[i]->name, eval(E, E->globals, pars[i]->a), pars[i]->loc);
  }
  if (!ok) return ERR;
  int save_loc = E->user_loc, save_end = E->user_end;
  if (!in_prelude(E, call->loc)) E->user_loc = call->loc, E->user_end = call->end;
  E->depth++;
  E->returned = false;
  E->ret = NONE;
  exec_list(E, local, fn->a->list, false);
  E->depth--;
  E->user_loc = save_loc, E->user_end = save_end;
  Value r = E->ret;
  E->returned = false;
  E->ret = NONE;
  // values never refer to an environment (no closures): free this call's now
  if (E->envs.n && E->envs.v[E->envs.n - 1] == local) {
    free(local->b.v);
    free(local);
    E->envs.n--;
  }
  return r;
}

static Value eval_call(Elab *E, Env *env, Ast *n) {
  if (n->a->kind != A_NAME) {
    err_at(E, n->a, "only named functions can be called");
    return ERR;
  }
  const char *name = n->a->name;
  Binding *b = env_find(env, name, false);
  if (b && b->v.kind == V_FN) return call_user(E, env, n, b->v.fn);
  if (b && b->v.kind != V_ERR) {
    err_at(E, n->a, "'%s' is %s, not a function", name, vkind_name[b->v.kind]);
    return ERR;
  }
  if (b) return ERR;
  const struct Builtin *bi = NULL;
  for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
    if (!strcmp(builtins[i].name, name)) bi = &builtins[i];
  if (!bi) {
    err_at(E, n->a, "unknown function '%s'", name);
    return ERR;
  }
  Args A = {.E = E, .call = n, .loc = loc_of(E, n)};
  int cnt = 0;
  for (Ast *a = n->list; a; a = a->next) cnt++;
  A.a = arena_alloc(&E->c->arena, sizeof(Value) * (size_t)(cnt + 3));
  A.at = arena_alloc(&E->c->arena, sizeof(Ast *) * (size_t)(cnt + 3));
  A.kv = arena_alloc(&E->c->arena, sizeof(Value) * (size_t)(cnt + 1));
  A.kat = arena_alloc(&E->c->arena, sizeof(Ast *) * (size_t)(cnt + 1));
  A.kw = arena_alloc(&E->c->arena, sizeof(char *) * (size_t)(cnt + 1));
  bool err = false;
  for (Ast *a = n->list; a; a = a->next) {
    if (a->kind == A_KWARG) {
      if (!kw_allowed(bi->kwargs, a->name)) {
        err_at(E, a, "'%s' takes no keyword argument '%s'", name, a->name);
        return ERR;
      }
      A.kw[A.nk] = a->name;
      A.kat[A.nk] = a->a;
      A.kv[A.nk] = eval(E, env, a->a);
      err |= A.kv[A.nk++].kind == V_ERR;
    } else {
      A.at[A.n] = a;
      A.a[A.n] = eval(E, env, a);
      err |= A.a[A.n++].kind == V_ERR;
    }
  }
  if (err) return ERR;
  if (A.n < bi->min || (bi->max >= 0 && A.n > bi->max)) {
    if (bi->min == bi->max) err_at(E, n, "'%s' takes %d argument%s, got %d", name, bi->min, bi->min == 1 ? "" : "s", A.n);
    else if (bi->max < 0) err_at(E, n, "'%s' takes at least %d argument%s, got %d", name, bi->min, bi->min == 1 ? "" : "s", A.n);
    else err_at(E, n, "'%s' takes %d to %d arguments, got %d", name, bi->min, bi->max, A.n);
    return ERR;
  }
  return bi->fn(&A);
}

// x[a:b, i, ...]
static Value eval_index(Elab *E, Env *env, Ast *n) {
  Value base = eval(E, env, n->a);
  if (base.kind == V_ERR) return ERR;
  if (base.kind == V_LIST || base.kind == V_TUPLE) {
    int64_t i;
    if (!n->list || n->list->next || n->list->kind == A_SLICE || n->list->kind == A_ELLIPSIS)
      return err_at(E, n, "lists take one integer index"), ERR;
    if (!want_int(E, env, n->list, &i, "an index")) return ERR;
    if (i < -base.n || i >= base.n) return err_at(E, n->list, "index %lld out of range for a list of %d", (long long)i, base.n), ERR;
    return base.items[i < 0 ? i + base.n : i];
  }
  if (base.kind == V_DTYPE) return err_at(E, n, "a type like %s[...] is not a value here", dtype_name[base.i]), ERR;
  if (base.kind != V_TENSOR) return err_at(E, n->a, "cannot index %s", vkind_name[base.kind]), ERR;
  int x = (int)base.i, loc = loc_of(E, n);
  Shape s = N(E, x)->shape;
  int nitems = 0, nell = 0;
  for (Ast *it = n->list; it; it = it->next) nitems++, nell += it->kind == A_ELLIPSIS;
  if (nell > 1) return err_at(E, n, "only one '...' per index"), ERR;
  if (nitems - nell > s.n) return err_at(E, n, "%d indices for a tensor of rank %d", nitems - nell, s.n), ERR;
  int axis = 0;
  int64_t drop[MAXDIM];
  int ndrop = 0;
  for (Ast *it = n->list; it; it = it->next) {
    if (it->kind == A_ELLIPSIS) {
      axis += s.n - (nitems - 1);
      continue;
    }
    int64_t d = s.d[axis], lo = 0, hi = d;
    if (it->kind == A_SLICE) {
      if (it->a && !want_int(E, env, it->a, &lo, "a slice bound")) return ERR;
      if (it->b && !want_int(E, env, it->b, &hi, "a slice bound")) return ERR;
      if (lo < 0) lo += d;
      if (hi < 0) hi += d;
      if (lo < 0 || hi > d || lo >= hi)
        return err_at(E, it, "slice %lld:%lld is empty or out of range for axis %d of size %lld", (long long)lo, (long long)hi, axis,
                      (long long)d), ERR;
    } else {
      int64_t i;
      if (!want_int(E, env, it, &i, "an index")) return ERR;
      if (i < -d || i >= d) return err_at(E, it, "index %lld out of range for axis %d of size %lld", (long long)i, axis, (long long)d), ERR;
      lo = i < 0 ? i + d : i, hi = lo + 1;
      drop[ndrop++] = axis;
    }
    x = shrink(E, x, axis, lo, hi, loc);
    axis++;
  }
  if (ndrop) {
    Shape t = N(E, x)->shape, r = {0};
    for (int i = 0, k = 0; i < t.n; i++) {
      if (k < ndrop && drop[k] == i) {
        k++;
        continue;
      }
      r.d[r.n++] = t.d[i];
    }
    x = mk_reshape(E, x, r, loc);
  }
  return tensor(x);
}

// img_attn.norm.query_norm, double_blocks[i] -> "img_attn.norm.query_norm", "double_blocks.7"
static bool path_str(Elab *E, Env *env, Ast *p, char *buf, size_t n) {
  size_t len = strlen(buf);
  switch (p->kind) {
  case A_NAME: snprintf(buf + len, n - len, "%s%s", len ? "." : "", p->name); return true;
  case A_MEMBER:
    if (!path_str(E, env, p->a, buf, n)) return false;
    len = strlen(buf);
    snprintf(buf + len, n - len, ".%s", p->name);
    return true;
  case A_INDEX: {
    if (!path_str(E, env, p->a, buf, n)) return false;
    for (Ast *it = p->list; it; it = it->next) {
      int64_t i;
      if (it->kind == A_SLICE || it->kind == A_ELLIPSIS) return err_at(E, it, "a path index must be an integer"), false;
      if (!want_int(E, env, it, &i, "a path index")) return false;
      len = strlen(buf);
      snprintf(buf + len, n - len, ".%lld", (long long)i);
    }
    return true;
  }
  }
  err_at(E, p, "expected a parameter path like name.sub[0] after 'in'");
  return false;
}

static Value eval_expr(Elab *E, Env *env, Ast *n);

// One step of work; false once the budget is spent (reported once, at n).
static bool spend(Elab *E, Ast *n) {
  if (E->halted) return false;
  if (++E->work <= WORK_BUDGET) return true;
  err_at(E, n, "elaboration exceeds its budget of %d steps here (unbounded recursion or loops?)", WORK_BUDGET);
  E->halted = true;
  return false;
}

// Deeply nested source (a+a+...+a) recurses once per level: bound it.
static Value eval(Elab *E, Env *env, Ast *n) {
  if (E->c->nerrors >= E->c->max_errors || !spend(E, n)) return ERR;
  if (E->expr_depth >= 2000) {
    err_at(E, n, "expression nested more than 2000 deep");
    return ERR;
  }
  E->expr_depth++;
  Value v = eval_expr(E, env, n);
  E->expr_depth--;
  return v;
}

static Value eval_expr(Elab *E, Env *env, Ast *n) {
  switch (n->kind) {
  case A_INT: return vint(n->ival);
  case A_FLOAT: return vfloat(n->fval);
  case A_STR: return (Value){.kind = V_STR, .s = n->name};
  case A_NAME: {
    Binding *b = env_find(env, n->name, false);
    if (b) {
      if (b->v.kind == V_NONE) return err_at(E, n, "'%s' holds no value (its function returned nothing)", n->name), ERR;
      return b->v;
    }
    int dt = dtype_from_name(n->name);
    if (dt >= 0) return (Value){.kind = V_DTYPE, .i = dt};
    err_at(E, n, "unknown name '%s'", n->name);
    return ERR;
  }
  case A_LIST: {
    int cnt = 0;
    for (Ast *a = n->list; a; a = a->next) cnt++;
    Value v = {.kind = V_LIST, .n = cnt, .items = arena_alloc(&E->c->arena, sizeof(Value) * (size_t)(cnt + 1))};
    cnt = 0;
    for (Ast *a = n->list; a; a = a->next) {
      v.items[cnt] = eval(E, env, a);
      if (v.items[cnt++].kind == V_ERR) return ERR;
    }
    return v;
  }
  case A_BINOP: {
    Value a = eval(E, env, n->a);
    Value b = eval(E, env, n->b);
    return binop(E, n, n->op, a, b);
  }
  case A_NEG: {
    Value a = eval(E, env, n->a);
    if (a.kind == V_INT) {
      if (a.i == INT64_MIN) return err_at(E, n, "integer overflow: -(%lld) does not fit in 64 bits", (long long)a.i), ERR;
      return vint(-a.i);
    }
    if (a.kind == V_FLOAT) return vfloat(-a.f);
    if (a.kind == V_TENSOR) {
      Args A = {.E = E, .call = n, .a = &a, .at = &n->a, .n = 1, .loc = loc_of(E, n)};
      return bi_unary(&A, OP_NEG, d_neg);
    }
    if (a.kind != V_ERR) err_at(E, n, "cannot negate %s", vkind_name[a.kind]);
    return ERR;
  }
  case A_NOT: {
    Value a = eval(E, env, n->a);
    if (is_num(a)) return vint(num(a) == 0);
    if (a.kind == V_TENSOR && N(E, (int)a.i)->dt == DT_BOOL)
      return tensor(mk(E, OP_NOT, DT_BOOL, N(E, (int)a.i)->shape, (int)a.i, -1, -1, loc_of(E, n)));
    if (a.kind != V_ERR) err_at(E, n, "'!' needs a number or a bool tensor");
    return ERR;
  }
  case A_CALL: return eval_call(E, env, n);
  case A_INDEX: return eval_index(E, env, n);
  case A_SCOPED: {
    char path[1024] = "";
    if (!path_str(E, env, n->b, path, sizeof path)) return ERR;
    char *save = E->scope;
    int sl = E->scope_loc, se = E->scope_end;
    E->scope = *save ? arena_printf(&E->c->arena, "%s.%s", save, path) : arena_strdup(&E->c->arena, path);
    E->scope_loc = n->b->loc, E->scope_end = n->b->end;
    Value v = eval(E, env, n->a);
    E->scope = save;
    E->scope_loc = sl, E->scope_end = se;
    return v;
  }
  case A_MEMBER: err_at(E, n, "'.' only appears in parameter paths (after 'in')"); return ERR;
  case A_SLICE: case A_ELLIPSIS: err_at(E, n, "a slice is only allowed inside [...]"); return ERR;
  case A_KWARG: err_at(E, n, "keyword argument outside a call"); return ERR;
  }
  err_at(E, n, "not an expression");
  return ERR;
}

//
// Statements
//
static void bind(Elab *E, Env *env, Ast *target, Value v) {
  Binding *b = env_find(E->globals, target->name, true);
  if (b && b->v.kind == V_FN) {
    err_at(E, target, "'%s' is a function; pick another name", target->name);
    return;
  }
  env_set(env, target->name, v, target->loc);
}

static void exec_include(Elab *E, Env *env, Ast *s) {
  if (E->c->no_include) {
    err_at(E, s, "include is disabled here");
    return;
  }
  if (E->include_depth >= 16) {
    err_at(E, s, "includes nested more than 16 deep (a cycle?)");
    return;
  }
  // relative to the including file
  const char *from = NULL;
  for (int i = 0; i < E->c->files.n; i++) {
    SrcFile *f = &E->c->files.v[i];
    if (s->loc >= f->base && s->loc <= f->base + f->len) from = f->path;
  }
  char *path = s->name;
  if (from && path[0] != '/') {
    const char *slash = strrchr(from, '/');
    if (slash) path = arena_printf(&E->c->arena, "%.*s/%s", (int)(slash - from), from, s->name);
  }
  int fi = diag_load_file(E->c, path, s->loc);
  if (fi < 0) return;
  Ast *items = parse_file(E->c, fi);
  if (!items) return;
  E->include_depth++;
  exec_list(E, env, items, true);
  E->include_depth--;
}

static void exec(Elab *E, Env *env, Ast *s, bool top) {
  Ctx *c = E->c;
  switch (s->kind) {
  case A_CONST: {
    if (!top) return err_at(E, s, "'const' is only allowed at the top level");
    if (env_find(env, s->name, true)) return err_at(E, s, "redefinition of '%s'", s->name);
    if (dtype_from_name(s->name) >= 0) return err_at(E, s, "'%s' is a dtype name", s->name);
    Value v = eval(E, env, s->a);
    if (v.kind != V_ERR && !is_num(v) && v.kind != V_DTYPE && v.kind != V_LIST) {
      err_at(E, s->a, "constant '%s' must be a number, dtype or list, not %s", s->name, vkind_name[v.kind]);
      v = ERR;
    }
    env_set(env, s->name, v, s->loc);
    return;
  }
  case A_INPUT: {
    if (!top) return err_at(E, s, "'input' is only allowed at the top level");
    Value v = make_buf(E, env, s, s->name, 0);
    env_set(env, s->name, v, s->loc);
    return;
  }
  case A_PARAM: {
    char *key = *E->scope ? arena_printf(&c->arena, "%s.%s", E->scope, s->name) : s->name;
    env_set(env, s->name, make_buf(E, env, s, key, 1), s->loc);
    return;
  }
  case A_OUTPUT: {
    if (!top) return err_at(E, s, "'output' is only allowed at the top level");
    Value v = eval(E, env, s->a);
    if (v.kind == V_ERR) return;
    if (v.kind != V_TENSOR) return err_at(E, s->a, "output '%s' must be a tensor, not %s", s->name, vkind_name[v.kind]);
    for (int i = 0; i < c->g.outs.n; i++)
      if (!strcmp(c->g.outs.v[i].name, s->name)) return err_at(E, s, "duplicate output '%s'", s->name);
    for (int i = 0; i < c->g.bufs.n; i++)
      if (c->g.bufs.v[i].kind == BUF_INPUT && !strcmp(c->g.bufs.v[i].name, s->name))
        return err_at(E, s, "output '%s' has the name of an input", s->name);
    vec_push(c->g.outs, ((Output){s->name, (int)v.i, s->loc}));
    return;
  }
  case A_FN: {
    if (!top) return err_at(E, s, "functions are defined at the top level");
    Binding *b = env_find(E->globals, s->name, true);
    if (b) {
      err_at(E, s, "redefinition of '%s'", s->name);
      return diag_note(c, b->loc, -1, "previous definition is here");
    }
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
      if (!strcmp(builtins[i].name, s->name)) return err_at(E, s, "'%s' is a builtin function", s->name);
    env_set(E->globals, s->name, (Value){.kind = V_FN, .fn = s}, s->loc);
    return;
  }
  case A_ASSIGN: {
    Value v = eval(E, env, s->a);
    int nt = 0;
    for (Ast *t = s->list; t; t = t->next) nt++;
    if (nt == 1) {
      if (v.kind == V_TUPLE) return err_at(E, s->list, "%d values to unpack into 1 name", v.n), bind(E, env, s->list, ERR);
      return bind(E, env, s->list, v);
    }
    if (v.kind != V_ERR && (v.kind != V_TUPLE || v.n != nt)) {
      err_at(E, s, "cannot unpack %s%s into %d names", v.kind == V_TUPLE ? "" : vkind_name[v.kind],
             v.kind == V_TUPLE ? arena_printf(&c->arena, "%d values", v.n) : "", nt);
      v = ERR;
    }
    int i = 0;
    for (Ast *t = s->list; t; t = t->next, i++) bind(E, env, t, v.kind == V_ERR ? ERR : v.items[i]);
    return;
  }
  case A_FOR: {
    int64_t lo, hi;
    if (!want_int(E, env, s->a, &lo, "a loop bound") || !want_int(E, env, s->b, &hi, "a loop bound")) return;
    int64_t iters;
    if (__builtin_sub_overflow(hi, lo, &iters) || iters > 100000)
      return err_at(E, s, "loop %lld..%lld has more than 100000 iterations", (long long)lo, (long long)hi);
    for (int64_t i = lo; i < hi && !E->returned && c->nerrors < c->max_errors && spend(E, s); i++) {
      env_set(env, s->name, vint(i), s->loc);
      exec_list(E, env, s->c->list, top);
    }
    return;
  }
  case A_IF: {
    Value v = eval(E, env, s->a);
    if (v.kind == V_ERR) return;
    if (!is_num(v)) return err_at(E, s->a, "'if' needs a number (tensors are not known until run time)");
    if (num(v) != 0) exec_list(E, env, s->b->list, top);
    else if (s->c) exec_list(E, env, s->c->list, top);
    return;
  }
  case A_RETURN: {
    if (top) return err_at(E, s, "'return' outside a function");
    int cnt = 0;
    for (Ast *a = s->list; a; a = a->next) cnt++;
    if (cnt == 1) {
      E->ret = eval(E, env, s->list);
    } else {
      Value t = {.kind = V_TUPLE, .n = cnt, .items = arena_alloc(&c->arena, sizeof(Value) * (size_t)cnt)};
      cnt = 0;
      for (Ast *a = s->list; a; a = a->next) t.items[cnt++] = eval(E, env, a);
      E->ret = t;
    }
    E->returned = true;
    return;
  }
  case A_CALL: {  // a call for its effect (assert) or its parameters
    Value v = eval(E, env, s);
    (void)v;
    return;
  }
  case A_INCLUDE:
    if (!top) return err_at(E, s, "'include' is only allowed at the top level");
    return exec_include(E, env, s);
  }
  err_at(E, s, "not a statement");
}

static void exec_list(Elab *E, Env *env, Ast *list, bool top) {
  for (Ast *s = list; s && !E->returned && !E->halted && E->c->nerrors < E->c->max_errors && spend(E, s); s = s->next) exec(E, env, s, top);
}

#include "prelude.inc"   // const char prelude_text[]: compiler/prelude.fdsl

// fi < 0: load `path`; else elaborate the already added source fi
static int run(Ctx *c, const char *path, int fi) {
  Elab E = {.c = c, .scope = "", .scope_loc = -1, .user_loc = -1, .user_end = -1};
  E.globals = env_new(&E, NULL);
  E.prelude_fi = diag_add_source(c, "<prelude>", prelude_text);
  Ast *pre = parse_file(c, E.prelude_fi);
  if (pre) exec_list(&E, E.globals, pre, true);
  if (c->nerrors) diag_fatal("the prelude does not compile");
  if (fi < 0) fi = diag_load_file(c, path, -1);
  if (fi >= 0) {
    Ast *items = parse_file(c, fi);
    if (items) exec_list(&E, E.globals, items, true);
    if (!c->nerrors && c->g.outs.n == 0) diag_error(c, c->files.v[fi].base, -1, "the model declares no output");
  }
  for (int u = 0; u < c->g.unused.n; u++)  // a prefix that hides a parameter would skip a check
    for (int i = 0; i < c->g.bufs.n; i++)
      if (c->g.bufs.v[i].kind == BUF_PARAM && nb_has_prefix(c->g.bufs.v[i].name, &c->g.unused.v[u], 1)) {
        err_at(&E, E.unused_at.v[u], "unused_keys(\"%s\"): the model's parameter '%s' is under it", c->g.unused.v[u], c->g.bufs.v[i].name);
        break;
      }
  free(E.unused_at.v);
  if (c->nerrors >= c->max_errors) fprintf(c->err, "fluxcc: too many errors, stopping\n");
  if (!c->nerrors) fold_constants(c);
  for (int i = 0; i < E.envs.n; i++) {
    free(E.envs.v[i]->b.v);
    free(E.envs.v[i]);
  }
  free(E.envs.v);
  return c->nerrors ? -1 : 0;
}

int elaborate(Ctx *c, const char *path) { return run(c, path, -1); }

int elaborate_source(Ctx *c, const char *name, const char *text) { return run(c, NULL, diag_add_source(c, name, text)); }
