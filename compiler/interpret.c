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

static void eval_node(Graph *g, int id, double **val, HostTensor *bufs) {
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
  if (op_kind[x->op] != K_MOVE && op_kind[x->op] != K_LOAD)
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
    eval_node(g, i, val, bufs);
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
