// graph.c — the tensor graph: hash-consed nodes of primitive ops and its dump.
#include "fluxcc.h"

#include <stdlib.h>
#include <string.h>

const char *const op_name[] = {
#define X(e, k, s) s,
  OPS(X)
#undef X
};
const char *const buf_kind_name[] = {"input", "param", "const"};  // BUF_*
const int op_kind[] = {
#define X(e, k, s) k,
  OPS(X)
#undef X
};

int graph_below_views(const Graph *g, int id) {
  while (g->nodes.v[id].op == OP_CAST || op_kind[g->nodes.v[id].op] == K_MOVE) id = g->nodes.v[id].src[0];
  return id;
}

int64_t shape_numel(const Shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->n; i++) n *= s->d[i];
  return n;
}

void shape_str(const Shape *s, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < s->n && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)s->d[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
}

// Only the fields that define a node's value take part in hashing and equality;
// the location is the first creation's.
static uint64_t node_hash(const Node *x) {
  uint64_t h = FNV_SEED;
#define MIX(v) (h = fnv_mix(h, (uint64_t)(v)))
  MIX(x->op); MIX(x->dt); MIX(x->buf);
  for (int i = 0; i < 3; i++) MIX(x->src[i]);
  MIX(x->shape.n);
  for (int i = 0; i < x->shape.n; i++) MIX(x->shape.d[i]);
  for (int i = 0; i < 2 * MAXDIM; i++) MIX(x->arg[i]);
  uint64_t cb;
  memcpy(&cb, &x->c, 8);
  MIX(cb);
#undef MIX
  return h;
}

static bool node_eq(const Node *a, const Node *b) {
  return a->op == b->op && a->dt == b->dt && a->buf == b->buf &&
         !memcmp(a->src, b->src, sizeof a->src) && a->shape.n == b->shape.n &&
         !memcmp(a->shape.d, b->shape.d, sizeof a->shape.d) && !memcmp(a->arg, b->arg, sizeof a->arg) &&
         !memcmp(&a->c, &b->c, sizeof a->c);
}

int g_node(Ctx *c, Node *proto) {
  Graph *g = &c->g;
  // canonical padding so memcmp/hash see no garbage
  for (int i = proto->shape.n; i < MAXDIM; i++) proto->shape.d[i] = 0;
  if (op_kind[proto->op] != K_LOAD) proto->buf = -1;
  if (2 * g->nodes.n >= g->hcap) {
    int cap = g->hcap ? 2 * g->hcap : 1024;
    int32_t *t = xcalloc((size_t)cap, sizeof *t);
    for (int i = 0; i < cap; i++) t[i] = -1;
    for (int i = 0; i < g->nodes.n; i++) {
      uint64_t h = node_hash(&g->nodes.v[i]) & (uint64_t)(cap - 1);
      while (t[h] >= 0) h = (h + 1) & (uint64_t)(cap - 1);
      t[h] = i;
    }
    free(g->hash);
    g->hash = t;
    g->hcap = cap;
  }
  uint64_t h = node_hash(proto) & (uint64_t)(g->hcap - 1);
  for (; g->hash[h] >= 0; h = (h + 1) & (uint64_t)(g->hcap - 1))
    if (node_eq(&g->nodes.v[g->hash[h]], proto)) return g->hash[h];
  g->hash[h] = g->nodes.n;
  vec_push(g->nodes, *proto);
  return g->nodes.n - 1;
}

static void print_pairs(FILE *out, const Node *x) {
  fprintf(out, " [");
  for (int i = 0; i < x->shape.n; i++)
    fprintf(out, "%s%lld:%lld", i ? "," : "", (long long)x->arg[2 * i], (long long)x->arg[2 * i + 1]);
  fprintf(out, "]");
}

void graph_dump(Ctx *c, FILE *out) {
  Graph *g = &c->g;
  char sh[128], where[256];
  for (int i = 0; i < g->nodes.n; i++) {
    Node *x = &g->nodes.v[i];
    shape_str(&x->shape, sh, sizeof sh);
    fprintf(out, "%%%d = %s %s%s", i, op_name[x->op], dtype_name[x->dt], sh);
    for (int k = 0; k < 3 && x->src[k] >= 0; k++) fprintf(out, " %%%d", x->src[k]);
    switch (x->op) {
    case OP_LOAD: fprintf(out, " %s %s", buf_kind_name[g->bufs.v[x->buf].kind], g->bufs.v[x->buf].name); break;
    case OP_CONST: fprintf(out, " %.17g", x->c); break;
    case OP_ARANGE: fprintf(out, " axis=%lld", (long long)x->arg[0]); break;
    case OP_RSUM: case OP_RMAX:
      fprintf(out, " axes=[");
      for (int k = 0, first = 1; k < x->shape.n; k++)
        if (x->arg[k]) fprintf(out, "%s%d", first ? "" : ",", k), first = 0;
      fprintf(out, "]");
      break;
    case OP_PERMUTE:
      fprintf(out, " [");
      for (int k = 0; k < x->shape.n; k++) fprintf(out, "%s%lld", k ? "," : "", (long long)x->arg[k]);
      fprintf(out, "]");
      break;
    case OP_SHRINK: case OP_PAD: print_pairs(out, x); break;
    case OP_UNFOLD:
      fprintf(out, " axis=%lld size=%lld", (long long)x->arg[0], (long long)x->arg[1]);
      if (x->arg[2] > 1) fprintf(out, " step=%lld", (long long)x->arg[2]);
      break;
    }
    fprintf(out, "  # %s\n", diag_where(c, x->loc, where, sizeof where));
  }
  for (int i = 0; i < g->outs.n; i++) fprintf(out, "output %s = %%%d\n", g->outs.v[i].name, g->outs.v[i].node);
}

void graph_free(Graph *g) {
  for (int i = 0; i < g->bufs.n; i++) free(g->bufs.v[i].data);
  free(g->nodes.v);
  free(g->bufs.v);
  free(g->outs.v);
  free(g->unused.v);
  free(g->hash);
  memset(g, 0, sizeof *g);
}
