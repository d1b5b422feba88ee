// fp8.c — `--weights fp8`: the linear layers' weights stored as
// float8_e4m3fn with one f32 scale per output row, a graph rewrite before
// scheduling. A 2-D float parameter read only as a matmul operand (through
// casts to f32 and views into a product that is summed) becomes
//   cast(q, f32) * expand(scale[rows, 1])     q: f8e4m3 KEY, scale: f32 KEY.scale_weight
// an elementwise prologue that the schedule fuses into the GEMM's load, so a
// kernel reads one byte per weight and converts it in registers. The runtime
// (runtime/fp8.c) fills q and scale from an F8_E4M3 checkpoint, or quantizes.
#include "fluxcc.h"

#include <stdlib.h>
#include <string.h>

typedef VEC(int) IntVec;

// Whether every path from node `id` through users is f32 casts and views
// ending in a product that only sums read (a matmul operand), and one is.
// A user nothing reads is no path (mm's view of a 2-D operand for a batched
// one is made for both ranks, one left unread).
static bool matmul_operand(const Graph *g, const IntVec *users, const bool *is_out, int id) {
  if (is_out[id] || !users[id].n) return false;
  bool live = false;
  for (int u = 0; u < users[id].n; u++) {
    const Node *y = &g->nodes.v[users[id].v[u]];
    int yi = users[id].v[u];
    if (!users[yi].n && !is_out[yi]) continue;
    live = true;
    if (y->op == OP_MUL) {
      if (is_out[yi] || !users[yi].n) return false;
      for (int k = 0; k < users[yi].n; k++)
        if (g->nodes.v[users[yi].v[k]].op != OP_RSUM) return false;
    } else if ((y->op == OP_CAST && y->dt == DT_F32) || y->op == OP_RESHAPE || y->op == OP_EXPAND || y->op == OP_PERMUTE) {
      if (!matmul_operand(g, users, is_out, yi)) return false;
    } else return false;
  }
  return live;
}

static int node(Ctx *c, int op, int dt, Shape sh, int a, int b, int loc) {
  Node x = {.op = (uint8_t)op, .dt = (uint8_t)dt, .src = {a, b, -1}, .shape = sh, .buf = -1, .loc = loc};
  return g_node(c, &x);
}

// The rewrite; returns how many weights it stores as fp8.
int weights_fp8(Ctx *c) {
  Graph old = c->g;
  int nn = old.nodes.n, nb = old.bufs.n, count = 0;
  IntVec *users = xcalloc((size_t)nn + 1, sizeof *users);
  bool *is_out = xcalloc((size_t)nn + 1, 1), *q = xcalloc((size_t)nb + 1, 1);
  for (int i = 0; i < nn; i++)
    for (int s = 0; s < 3 && old.nodes.v[i].src[s] >= 0; s++) vec_push(users[old.nodes.v[i].src[s]], i);
  for (int i = 0; i < old.outs.n; i++) is_out[old.outs.v[i].node] = true;
  for (int i = 0; i < nb; i++) {
    Buf *b = &old.bufs.v[i];
    q[i] = b->kind == BUF_PARAM && b->shape.n == 2 && (b->dt == DT_F32 || b->dt == DT_BF16 || b->dt == DT_F16) &&
           b->node >= 0 && matmul_operand(&old, users, is_out, b->node);
  }
  int *map = xcalloc((size_t)nn + 1, sizeof *map);
  c->g = (Graph){0};
  c->g.bufs = old.bufs, c->g.outs = old.outs, c->g.unused = old.unused;
  c->g.ckpt_weights = old.ckpt_weights, c->g.ckpt_tokenizer = old.ckpt_tokenizer;
  for (int i = 0; i < nn; i++) {
    Node x = old.nodes.v[i];
    for (int s = 0; s < 3; s++)
      if (x.src[s] >= 0) x.src[s] = map[x.src[s]];
    if (x.op == OP_LOAD && q[x.buf]) {
      // q (the weight's own key, now one byte) and its row scales, dequantized in the load
      Buf *w = &c->g.bufs.v[x.buf];
      w->decl_dt = w->dt, w->dt = DT_F8E4M3;
      x.dt = DT_F8E4M3;
      int ld = g_node(c, &x);
      w = &c->g.bufs.v[x.buf], w->node = ld;
      char key[1024];
      nb_scale_key(w->name, key, sizeof key);
      Shape rows = {.d = {w->shape.d[0]}, .n = 1}, col = {.d = {w->shape.d[0], 1}, .n = 2};
      Buf sb = {.name = arena_strdup(&c->arena, key), .kind = BUF_PARAM, .dt = DT_F32, .shape = rows, .loc = w->loc,
                .init = INIT_DEFAULT, .decl_dt = DT_F32};
      Node sl = {.op = OP_LOAD, .dt = DT_F32, .src = {-1, -1, -1}, .shape = rows, .buf = c->g.bufs.n, .loc = x.loc};
      vec_push(c->g.bufs, sb);
      int sc = g_node(c, &sl);
      c->g.bufs.v[sl.buf].node = sc;
      sc = node(c, OP_EXPAND, DT_F32, x.shape, node(c, OP_RESHAPE, DT_F32, col, sc, -1, x.loc), -1, x.loc);
      map[i] = node(c, OP_MUL, DT_F32, x.shape, node(c, OP_CAST, DT_F32, x.shape, ld, -1, x.loc), sc, x.loc);
      count++;
      continue;
    }
    // what read the weight now reads f32: its casts go, its views follow
    if (x.op == OP_CAST && c->g.nodes.v[x.src[0]].dt == x.dt) {
      map[i] = x.src[0];
      continue;
    }
    if (op_kind[x.op] == K_MOVE) x.dt = c->g.nodes.v[x.src[0]].dt;
    map[i] = g_node(c, &x);
    if (op_kind[x.op] == K_LOAD) c->g.bufs.v[x.buf].node = map[i];
  }
  for (int i = 0; i < c->g.outs.n; i++) c->g.outs.v[i].node = map[c->g.outs.v[i].node];
  for (int i = 0; i < nn; i++) free(users[i].v);
  free(users), free(is_out), free(q), free(map);
  free(old.nodes.v), free(old.hash);
  return count;
}
