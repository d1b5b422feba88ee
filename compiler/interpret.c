// interpret.c — the reference: evaluates the graph op by op in float64 and
// rounds every node's value to its dtype (as a torch eager run stores it).
// Clarity over speed: every node is materialized, freed after its last use.
#include "fluxcc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// row-major strides of a shape
static void strides(const Shape *s, int64_t *st) {
  int64_t acc = 1;
  for (int i = s->n - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= s->d[i];
  }
}

static void unravel(int64_t i, const Shape *s, int64_t *idx) {
  for (int k = s->n - 1; k >= 0; k--) {
    idx[k] = i % s->d[k];
    i /= s->d[k];
  }
}

static double unary(int op, double x) {
  switch (op) {
  case OP_NEG: return -x;
  case OP_EXP: return exp(x);
  case OP_LOG: return log(x);
  case OP_SQRT: return sqrt(x);
  case OP_RECIP: return 1 / x;
  case OP_SIN: return sin(x);
  case OP_COS: return cos(x);
  case OP_TANH: return tanh(x);
  case OP_ABS: return fabs(x);
  case OP_NOT: return x == 0;
  case OP_CAST: return x;
  }
  return NAN;
}

static double binary(int op, double a, double b) {
  switch (op) {
  case OP_ADD: return a + b;
  case OP_SUB: return a - b;
  case OP_MUL: return a * b;
  case OP_DIV: return a / b;
  case OP_MAX: return a > b || isnan(a) ? a : b;
  case OP_MIN: return a < b || isnan(a) ? a : b;
  case OP_CMPLT: return a < b;
  case OP_CMPLE: return a <= b;
  case OP_CMPEQ: return a == b;
  case OP_CMPNE: return a != b;
  }
  return NAN;
}

static void eval_node(Graph *g, int id, double **val, HostTensor *bufs, bool round) {
  Node *x = &g->nodes.v[id];
  int64_t n = shape_numel(&x->shape);
  double *out = xcalloc((size_t)(n ? n : 1), sizeof(double));
  Shape *src_shape = x->src[0] >= 0 ? &g->nodes.v[x->src[0]].shape : NULL;
  double *a = x->src[0] >= 0 ? val[x->src[0]] : NULL;
  double *b = x->src[1] >= 0 ? val[x->src[1]] : NULL;
  double *c = x->src[2] >= 0 ? val[x->src[2]] : NULL;
  int64_t idx[MAXDIM], st[MAXDIM];
  switch (op_kind[x->op]) {
  case K_LOAD: memcpy(out, bufs[x->buf].v, sizeof(double) * (size_t)n); break;
  case K_CONST:
    for (int64_t i = 0; i < n; i++) out[i] = x->op == OP_CONST ? x->c : (double)(i % x->shape.d[x->shape.n - 1]);
    break;
  case K_UNARY:
    for (int64_t i = 0; i < n; i++) out[i] = unary(x->op, a[i]);
    break;
  case K_BINARY:
    for (int64_t i = 0; i < n; i++) out[i] = binary(x->op, a[i], b[i]);
    break;
  case K_TERNARY:
    for (int64_t i = 0; i < n; i++) out[i] = a[i] != 0 ? b[i] : c[i];
    break;
  case K_REDUCE: {
    // walk the input; its index with reduced axes zeroed is the output index
    int64_t m = shape_numel(src_shape), ost[MAXDIM];
    strides(&x->shape, ost);
    for (int64_t i = 0; i < n; i++) out[i] = x->op == OP_RSUM ? 0 : -INFINITY;
    for (int64_t i = 0; i < m; i++) {
      unravel(i, src_shape, idx);
      int64_t o = 0;
      for (int k = 0; k < x->shape.n; k++) o += x->arg[k] ? 0 : idx[k] * ost[k];
      if (x->op == OP_RSUM) out[o] += a[i];
      else if (a[i] > out[o] || isnan(a[i])) out[o] = a[i];
    }
    break;
  }
  case K_MOVE:
    strides(src_shape, st);
    for (int64_t i = 0; i < n; i++) {
      int64_t o = 0;
      bool inside = true;
      unravel(i, &x->shape, idx);
      switch (x->op) {
      case OP_RESHAPE: o = i; break;
      case OP_PERMUTE:
        for (int k = 0; k < x->shape.n; k++) o += idx[k] * st[x->arg[k]];
        break;
      case OP_EXPAND:
        for (int k = 0; k < x->shape.n; k++) o += src_shape->d[k] == 1 ? 0 : idx[k] * st[k];
        break;
      case OP_SHRINK:
        for (int k = 0; k < x->shape.n; k++) o += (idx[k] + x->arg[2 * k]) * st[k];
        break;
      case OP_PAD:
        for (int k = 0; k < x->shape.n; k++) {
          int64_t j = idx[k] - x->arg[2 * k];
          if (j < 0 || j >= src_shape->d[k]) inside = false;
          o += j * st[k];
        }
        break;
      }
      out[i] = inside ? a[o] : 0;
    }
    break;
  }
  if (round && op_kind[x->op] != K_MOVE && op_kind[x->op] != K_LOAD)
    for (int64_t i = 0; i < n; i++) out[i] = dtype_round(x->dt, out[i]);
  val[id] = out;
}

int interpret(Ctx *c, HostTensor *bufs, HostTensor *outs) {
  Graph *g = &c->g;
  int nn = g->nodes.n;
  double **val = xcalloc((size_t)nn, sizeof *val);
  int *uses = xcalloc((size_t)nn, sizeof *uses);
  bool *live = xcalloc((size_t)nn, sizeof *live);
  for (int i = 0; i < g->outs.n; i++) live[g->outs.v[i].node] = true, uses[g->outs.v[i].node]++;
  for (int i = nn - 1; i >= 0; i--)  // sources always have smaller ids
    if (live[i])
      for (int k = 0; k < 3; k++)
        if (g->nodes.v[i].src[k] >= 0) live[g->nodes.v[i].src[k]] = true, uses[g->nodes.v[i].src[k]]++;
  for (int i = 0; i < nn; i++) {
    if (!live[i]) continue;
    eval_node(g, i, val, bufs, true);
    for (int k = 0; k < 3; k++) {
      int s = g->nodes.v[i].src[k];
      if (s >= 0 && --uses[s] == 0) free(val[s]), val[s] = NULL;
    }
  }
  for (int i = 0; i < g->outs.n; i++) {
    Node *x = &g->nodes.v[g->outs.v[i].node];
    int64_t n = shape_numel(&x->shape);
    outs[i].dt = x->dt;
    outs[i].shape = x->shape;
    outs[i].v = xcalloc((size_t)(n ? n : 1), sizeof(double));
    memcpy(outs[i].v, val[g->outs.v[i].node], sizeof(double) * (size_t)n);
  }
  for (int i = 0; i < nn; i++) free(val[i]);
  free(val);
  free(uses);
  free(live);
  return 0;
}

//
// Constant folding: a value that depends only on constants (the time
// embedding's exp(arange(half) * -log(P) / half), rope's frequencies) is
// computed here once, exactly as the interpreter computes it (float64, each
// op rounded to its dtype as a torch eager run stores it), and the graph reads
// the result. Otherwise every device computes it with its own exp (an ulp
// apart) and the time embedding's 1000*t*freq magnifies that past 1e-5.
// (Rounding only once, at the end, would be closer to exact math but further
// from torch: 2.5e-6 on flux-tiny-f32's output against the NumPy reference.)
// A uniform result becomes one CONST; a table of at most FOLD_TABLE elements
// becomes a sum of zero-padded CONST runs (exact: adding zeros is exact).
// Larger or exact-anyway constants (arange, its integer arithmetic) stay.
//
#define FOLD_EVAL 65536     // constant nodes evaluated at most this big
#define FOLD_TABLE 4096     // tables made at most this big

static bool inexact_op(int op) {
  return op == OP_EXP || op == OP_LOG || op == OP_SQRT || op == OP_RECIP || op == OP_SIN || op == OP_COS ||
         op == OP_TANH || op == OP_DIV;
}

static int add_node(Ctx *c, int op, int dt, Shape sh, int a, int b, const int64_t *args, double cval) {
  Node x = {0};
  x.op = (uint8_t)op;
  x.dt = (uint8_t)dt;
  x.shape = sh;
  x.src[0] = a, x.src[1] = b, x.src[2] = -1;
  if (args) memcpy(x.arg, args, sizeof x.arg);
  x.c = cval;
  x.loc = -1;
  return g_node(c, &x);
}

// The folded form of values v (rounded to dt here) of shape sh; loc for the new nodes.
static int emit_folded(Ctx *c, int dt, Shape sh, const double *v, int loc) {
  int64_t n = shape_numel(&sh);
  double first = dtype_round(dt, v[0]);
  bool uniform = true;
  for (int64_t i = 1; i < n && uniform; i++) {
    double r = dtype_round(dt, v[i]);
    uniform = !memcmp(&r, &first, sizeof r);
  }
  int id;
  if (uniform) {
    id = add_node(c, OP_CONST, dt, sh, -1, -1, NULL, first);
  } else {
    VEC(int) parts = {0};
    Shape flat = {.n = 1, .d = {n}};
    for (int64_t a = 0, b; a < n; a = b) {  // runs of equal values; +0 runs are the padding
      double r = dtype_round(dt, v[a]), s;
      for (b = a + 1; b < n && (s = dtype_round(dt, v[b]), !memcmp(&s, &r, sizeof r)); b++) {}
      if (r == 0 && !signbit(r)) continue;
      int k = add_node(c, OP_CONST, dt, (Shape){.n = 1, .d = {b - a}}, -1, -1, NULL, r);
      int64_t pairs[2 * MAXDIM] = {a, n - b};
      vec_push(parts, add_node(c, OP_PAD, dt, flat, k, -1, pairs, 0));
    }
    while (parts.n > 1) {  // a balanced sum: depth log2 of the runs
      int m = 0;
      for (int i = 0; i + 1 < parts.n; i += 2) parts.v[m++] = add_node(c, OP_ADD, dt, flat, parts.v[i], parts.v[i + 1], NULL, 0);
      if (parts.n % 2) parts.v[m++] = parts.v[parts.n - 1];
      parts.n = m;
    }
    id = parts.v[0];
    free(parts.v);
    if (sh.n != 1) id = add_node(c, OP_RESHAPE, dt, sh, id, -1, NULL, 0);
  }
  for (int i = id; i < c->g.nodes.n; i++)
    if (c->g.nodes.v[i].loc < 0) c->g.nodes.v[i].loc = loc;
  return id;
}

void fold_constants(Ctx *c) {
  Graph old = c->g;
  int nn = old.nodes.n;
  bool *is_const = xcalloc((size_t)nn + 1, 1), *inexact = xcalloc((size_t)nn + 1, 1), *boundary = xcalloc((size_t)nn + 1, 1);
  double **val = xcalloc((size_t)nn + 1, sizeof *val);
  int *map = xcalloc((size_t)nn + 1, sizeof *map);
  for (int i = 0; i < nn; i++) {
    Node *x = &old.nodes.v[i];
    if (op_kind[x->op] == K_LOAD || shape_numel(&x->shape) > FOLD_EVAL) continue;
    bool k = true, ie = inexact_op(x->op);
    for (int s = 0; s < 3 && x->src[s] >= 0; s++) k &= is_const[x->src[s]], ie |= inexact[x->src[s]];
    if (!k) continue;
    is_const[i] = true, inexact[i] = ie;
  }
  for (int i = 0; i < nn; i++) {
    Node *x = &old.nodes.v[i];
    for (int s = 0; s < 3 && x->src[s] >= 0; s++)
      if (!is_const[i]) boundary[x->src[s]] = true;
  }
  for (int i = 0; i < old.outs.n; i++) boundary[old.outs.v[i].node] = true;
  // values of every constant node, as the interpreter computes them
  for (int i = 0; i < nn; i++)
    if (is_const[i]) eval_node(&old, i, val, NULL, true);
  c->g = (Graph){0};
  c->g.bufs = old.bufs;
  c->g.outs = old.outs;
  for (int i = 0; i < nn; i++) {
    Node x = old.nodes.v[i];
    Node *o = &old.nodes.v[i];
    if (is_const[i] && boundary[i] && inexact[i] && op_kind[o->op] != K_CONST &&
        shape_numel(&o->shape) <= FOLD_TABLE) {
      map[i] = emit_folded(c, o->dt, o->shape, val[i], o->loc);
      continue;
    }
    for (int s = 0; s < 3; s++)
      if (x.src[s] >= 0) x.src[s] = map[x.src[s]];
    map[i] = g_node(c, &x);
    if (op_kind[x.op] == K_LOAD) c->g.bufs.v[x.buf].node = map[i];
  }
  for (int i = 0; i < c->g.outs.n; i++) c->g.outs.v[i].node = map[c->g.outs.v[i].node];
  for (int i = 0; i < nn; i++) free(val[i]);
  free(val);
  free(map);
  free(is_const);
  free(inexact);
  free(boundary);
  free(old.nodes.v);
  free(old.hash);
}
