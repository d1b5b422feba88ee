// schedule.c — graph → kernels.
//
// Which nodes get their own buffer (are "realized"):
//   - inputs and parameters (no kernel), and the model's outputs;
//   - every reduce, except that elementwise consumers reading it through a
//     same-size reshape fuse into its store (bias, gate, residual into a matmul):
//     the last node of that chain is realized instead (but for final reshapes
//     and a final widening cast to f32, which its readers apply on load);
//   - a computed value that a reduce reads through a broadcast (the matmul's
//     x[..., 1, K] expanded over N) — recomputing it per output would repeat work;
//     except a matmul's GEMM prologue (see prologue_ok): a small elementwise
//     function of realized values, computed while the matmul loads its A tiles;
//   - on a CPU target, the zero-padded image a convolution's windows read;
//   - a gather's table (its rows are picked by data).
// Everything else is inlined into the kernels that read it. Each kernel is an
// expression DAG over symbolic indices of its iteration space; adjacent axes
// that every access sees as one are merged; kernels with equal text share a
// source; intermediate buffers share an arena by liveness.
#include "fluxcc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  Ctx *c;
  Graph *g;
  Schedule *s;
  bool *live;
  int *nuse;          // consumers among live nodes
  int *consumer;      // one consumer (meaningful when nuse == 1)
  int *buf_of;        // node -> schedule buffer (-1: not realized)
  int *stamp;         // visit marks for the broadcast walk
  int stamp_now;
  bool *inner;        // inside a recognized attention: never realized, computed by its fused kernel
  bool *chain;        // on a reduce's chain of single-consumer elementwise ops and reshapes (its epilogue)
  int *attn_of;       // reduce node -> its attention (the second product's reduce), else -1
  VEC(struct AttnMatch) attn;
} Sched;

// A recognized attention: the prelude's softmax(mm(q, k^T) / c) followed by
// mm(cast(p), v). The nodes between the two products' operands and the second
// product's reduce are computed by one fused kernel (KERNEL_ATTN).
typedef struct AttnMatch {
  int r1, r2;               // the reduces of q k^T and of p v
  int q, k, v;              // the products' operands (the mul's sources) on the q, k and v sides
  int scale_op;             // OP_DIV / OP_MUL of the logits by `scale`
  double scale;
  int8_t pcast[4], npcast;  // casts between p and the product, innermost first
  int end;                  // the realized node: r2, then reshapes and casts
  int64_t rsize;            // the length of the row statistics folded into q and k (0: none)
} AttnMatch;

static Node *NODE(Sched *S, int id) { return &S->g->nodes.v[id]; }
static bool is_elementwise(int op) { return op_kind[op] == K_UNARY || op_kind[op] == K_BINARY || op_kind[op] == K_TERNARY; }

// A view that really repeats data: an expand where some axis goes from 1 to
// more, or an unfold whose windows overlap.
static bool expands(Sched *S, Node *x) {
  if (x->op == OP_UNFOLD) return x->arg[1] > x->arg[2];
  if (x->op != OP_EXPAND) return false;
  Node *src = NODE(S, x->src[0]);
  for (int i = 0; i < x->shape.n; i++)
    if (src->shape.d[i] == 1 && x->shape.d[i] > 1) return true;
  return false;
}

// Cheap to recompute per use: casts and movement of buffers and constants.
static bool cheap(Sched *S, int id) {
  for (;;) {  // a loop, not recursion: chains of views can be long
    Node *x = NODE(S, id);
    if (S->buf_of[id] >= 0 || op_kind[x->op] == K_LOAD || op_kind[x->op] == K_CONST) return true;
    if (x->op != OP_CAST && op_kind[x->op] != K_MOVE) return false;
    id = x->src[0];
  }
}

static const int buf_rt_kind[] = {RT_INPUT, RT_PARAM, RT_CONST};  // by BUF_*

static int add_buf(Sched *S, int node, int kind, const char *name) {
  Node *x = NODE(S, node);
  SBuf b = {0};
  b.name = (char *)name;
  b.kind = kind;
  b.dt = x->dt;
  b.shape = x->shape;
  b.node = node;
  b.gbuf = op_kind[x->op] == K_LOAD ? x->buf : -1;
  b.bytes = (uint64_t)shape_numel(&x->shape) * (uint64_t)dtype_size[x->dt];
  b.first = b.last = -1;
  vec_push(S->s->bufs, b);
  S->buf_of[node] = S->s->bufs.n - 1;
  return S->s->bufs.n - 1;
}

static bool prologue_ok(Sched *S, int id);

// Walk a reduce's input; realize computed values found under a broadcast,
// but for a matmul (prologue true) those that prologue_ok inlines.
// An explicit stack (node * 2 + under_expand): graphs can be deep.
static void mark_broadcast(Sched *S, int root, bool prologue) {
  VEC(int) st = {0};
  vec_push(st, root * 2);
  while (st.n) {
    int top = st.v[--st.n], id = top / 2;
    bool under_expand = top & 1;
    Node *x = NODE(S, id);
    int mark = S->stamp_now * 2 + under_expand;
    if (S->stamp[id] == mark) continue;
    S->stamp[id] = mark;
    if (S->buf_of[id] >= 0 || op_kind[x->op] == K_LOAD || op_kind[x->op] == K_REDUCE) continue;
    // a convolution's windows over a zero-padded image: on a CPU the padded
    // image is realized (with what computes it: GroupNorm + swish, the 2x
    // upsample), so the convolution's loads carry no masks and load a row of
    // outputs' taps as one vector; a masked tap is loaded lane by lane
    if (x->op == OP_UNFOLD && x->arg[1] > 1 && S->s->target->cpu) {
      int p = x->src[0];
      while (NODE(S, p)->op == OP_UNFOLD) p = NODE(S, p)->src[0];
      if (NODE(S, p)->op == OP_PAD && S->buf_of[p] < 0) add_buf(S, p, RT_TEMP, NULL);
    }
    // under a broadcast, casts and views are applied on load; what they read is realized
    if (under_expand && x->op != OP_CAST && op_kind[x->op] != K_MOVE && !cheap(S, id) && !S->inner[id]) {
      if (!(prologue && prologue_ok(S, id))) add_buf(S, id, RT_TEMP, NULL);
      continue;  // a prologue's leaves are realized, loads, constants and reduces: nothing below to mark
    }
    bool below = under_expand || expands(S, x);
    for (int k = 2; k >= 0; k--)
      if (x->src[k] >= 0) vec_push(st, x->src[k] * 2 + below);
  }
  free(st.v);
}

//
// Recognizing attention
//
typedef VEC(int) IntVec;
static int linear(Sym *sy, const Shape *sh, const int *idx);
// Follow casts and views (reshape, permute, expand, shrink) from node id, read
// at index idx, down to the first other node; returns it, with its index in
// out. The casts passed go to casts (outermost first, at most 4: else -1);
// with casts NULL a cast ends the walk too. seen, if given, collects the nodes
// passed.
static int view_walk(Sched *S, Sym *sy, int id, const int *idx, int *out, int8_t *casts, int8_t *ncasts, IntVec *seen) {
  int cur[MAXDIM], nxt[MAXDIM];
  memcpy(cur, idx, sizeof(int) * (size_t)NODE(S, id)->shape.n);
  if (ncasts) *ncasts = 0;
  for (;;) {
    Node *x = NODE(S, id);
    bool view = x->op == OP_RESHAPE || x->op == OP_PERMUTE || x->op == OP_EXPAND || x->op == OP_SHRINK || x->op == OP_UNFOLD;
    if (!view && !(x->op == OP_CAST && casts)) break;
    Node *src = NODE(S, x->src[0]);
    switch (x->op) {
    case OP_CAST:
      if (*ncasts == 4) return -1;
      casts[(*ncasts)++] = (int8_t)x->dt;
      memcpy(nxt, cur, sizeof(int) * (size_t)x->shape.n);
      break;
    case OP_RESHAPE: {
      int lin = linear(sy, &x->shape, cur);
      int64_t stride = 1;
      for (int i = src->shape.n - 1; i >= 0; i--) {
        nxt[i] = sym_mod(sy, sym_div(sy, lin, stride), src->shape.d[i]);
        stride *= src->shape.d[i];
      }
      break;
    }
    case OP_PERMUTE:
      for (int i = 0; i < x->shape.n; i++) nxt[x->arg[i]] = cur[i];
      break;
    case OP_EXPAND:
      for (int i = 0; i < x->shape.n; i++) nxt[i] = src->shape.d[i] == 1 ? sym_const(sy, 0) : cur[i];
      break;
    case OP_UNFOLD:
      memcpy(nxt, cur, sizeof(int) * (size_t)src->shape.n);
      nxt[x->arg[0]] = sym_add(sy, sym_mul(sy, cur[x->arg[0]], x->arg[2]), cur[x->shape.n - 1]);
      break;
    default:  // OP_SHRINK
      for (int i = 0; i < x->shape.n; i++) nxt[i] = sym_add(sy, cur[i], sym_const(sy, x->arg[2 * i]));
      break;
    }
    if (seen) vec_push(*seen, id);
    memcpy(cur, nxt, sizeof(int) * (size_t)src->shape.n);
    id = x->src[0];
  }
  memcpy(out, cur, sizeof(int) * (size_t)NODE(S, id)->shape.n);
  return id;
}

// A walk without casts that must reach an `op` node read at index want (n entries).
static int walk_to(Sched *S, Sym *sy, int id, const int *idx, int op, const int *want, int n, IntVec *seen) {
  int out[MAXDIM];
  int to = view_walk(S, sy, id, idx, out, NULL, NULL, seen);
  if (NODE(S, to)->op != op || NODE(S, to)->shape.n != n || memcmp(out, want, sizeof(int) * (size_t)n)) return -1;
  return to;
}

static bool reduces_last(Node *r) {  // a reduce over its last axis only
  for (int a = 0; a < r->shape.n; a++)
    if (!!r->arg[a] != (a == r->shape.n - 1)) return false;
  return true;
}

static bool uses_var(Sym *sy, const int *idx, int n, int v) {
  for (int a = 0; a < n; a++)
    if (sy->n.v[idx[a]].vars & (1u << v)) return true;
  return false;
}

// Match the attention whose second product reduces at r2. The index spaces
// are those of the fused kernel: z.. (batch), i (query), e (v's channel),
// j (key), d (q's channel); every edge between the operands and r2 is checked
// to read the value the softmax needs at that index (equal symbolic indices).
static bool attn_match(Sched *S, int r2, const bool *is_out, AttnMatch *m, IntVec *seen) {
  Node *R2 = NODE(S, r2);
  if (R2->op != OP_RSUM) return false;
  Node *mul2 = NODE(S, R2->src[0]);
  int r = mul2->shape.n;
  if (mul2->op != OP_MUL || r < 3 || r + 1 > MAXDIM || !reduces_last(R2)) return false;
  int nb = r - 3, I = nb, J = nb + 2, D = nb + 3;
  Sym sy = {0};
  for (int a = 0; a < r; a++) sy.var_size[a] = mul2->shape.d[a];
  sy.var_size[D] = 1;  // set from the first product below, before its variable is made
  sy.nvars = nb + 4;
  int ix2[MAXDIM], pij[MAXDIM], pi0[MAXDIM], lij0[MAXDIM], out[MAXDIM];
  for (int a = 0; a < r; a++) ix2[a] = sym_var(&sy, a);
  for (int a = 0; a < nb; a++) pij[a] = pi0[a] = lij0[a] = ix2[a];
  pij[nb] = pi0[nb] = lij0[nb] = ix2[I];
  pij[nb + 1] = lij0[nb + 1] = ix2[J];
  pi0[nb + 1] = lij0[nb + 2] = sym_const(&sy, 0);
  bool ok = false;
  int p = -1;
  seen->n = 0;
  for (int side = 0; side < 2 && p < 0; side++) {  // p on one side (maybe through casts), v on the other
    int8_t vc[4], nvc;
    seen->n = 0;
    int pn = view_walk(S, &sy, mul2->src[side], ix2, out, m->pcast, &m->npcast, seen);
    if (pn < 0 || NODE(S, pn)->op != OP_DIV || NODE(S, pn)->shape.n != nb + 2 || memcmp(out, pij, sizeof(int) * (size_t)(nb + 2))) continue;
    int vn = view_walk(S, &sy, mul2->src[1 - side], ix2, out, vc, &nvc, NULL);
    if (vn < 0 || uses_var(&sy, out, NODE(S, vn)->shape.n, I)) continue;
    p = pn, m->v = mul2->src[1 - side];
  }
  if (p < 0) goto done;
  for (int a = 0; a < m->npcast / 2; a++) {  // innermost first
    int8_t t = m->pcast[a];
    m->pcast[a] = m->pcast[m->npcast - 1 - a], m->pcast[m->npcast - 1 - a] = t;
  }
  // p = e / sum(e), e = exp(l - max(l)), the sums and max over j
  Node *P = NODE(S, p);
  int e = walk_to(S, &sy, P->src[0], pij, OP_EXP, pij, nb + 2, seen);
  int zs = walk_to(S, &sy, P->src[1], pij, OP_RSUM, pi0, nb + 2, seen);
  if (e < 0 || zs < 0 || !reduces_last(NODE(S, zs)) || walk_to(S, &sy, NODE(S, zs)->src[0], pij, OP_EXP, pij, nb + 2, seen) != e) goto done;
  int sub = NODE(S, e)->src[0];
  if (NODE(S, sub)->op != OP_SUB) goto done;
  int l = view_walk(S, &sy, NODE(S, sub)->src[0], pij, out, NULL, NULL, seen);
  if (memcmp(out, pij, sizeof(int) * (size_t)(nb + 2)) || (NODE(S, l)->op != OP_DIV && NODE(S, l)->op != OP_MUL)) goto done;
  int mx = walk_to(S, &sy, NODE(S, sub)->src[1], pij, OP_RMAX, pi0, nb + 2, seen);
  if (mx < 0 || !reduces_last(NODE(S, mx)) || walk_to(S, &sy, NODE(S, mx)->src[0], pij, NODE(S, l)->op, pij, nb + 2, seen) != l) goto done;
  // l = (q k^T) / c, or * c
  Node *L = NODE(S, l);
  int r1 = -1;
  for (int side = 0; side < 2 && r1 < 0; side++) {
    if (side && L->op == OP_DIV) break;
    int c = view_walk(S, &sy, L->src[1 - side], pij, out, NULL, NULL, NULL);
    if (NODE(S, c)->op != OP_CONST) continue;
    int n0 = seen->n;
    r1 = walk_to(S, &sy, L->src[side], pij, OP_RSUM, lij0, nb + 3, seen);
    if (r1 < 0) seen->n = n0;
    m->scale_op = L->op, m->scale = NODE(S, c)->c;
  }
  if (r1 < 0 || !reduces_last(NODE(S, r1))) goto done;
  Node *mul1 = NODE(S, NODE(S, r1)->src[0]);
  if (mul1->op != OP_MUL || mul1->shape.d[nb + 2] < 1) goto done;
  for (int a = 0; a < nb + 2; a++)
    if (mul1->shape.d[a] != (a < nb + 1 ? mul2->shape.d[a] : mul2->shape.d[J])) goto done;
  sy.var_size[D] = mul1->shape.d[nb + 2];
  int ix1[MAXDIM];
  for (int a = 0; a < nb + 2; a++) ix1[a] = lij0[a];
  ix1[nb + 2] = sym_var(&sy, D);
  m->q = m->k = -1;
  for (int side = 0; side < 2; side++) {
    int8_t cs[4], nc;
    int x = view_walk(S, &sy, mul1->src[side], ix1, out, cs, &nc, NULL);
    if (x < 0) goto done;
    int n = NODE(S, x)->shape.n;
    bool ui = uses_var(&sy, out, n, I), uj = uses_var(&sy, out, n, J);
    if (ui && !uj) m->q = mul1->src[side];
    if (uj && !ui) m->k = mul1->src[side];
  }
  if (m->q < 0 || m->k < 0) goto done;
  const int named[] = {p, e, zs, sub, l, mx, r1, NODE(S, r1)->src[0], r2, R2->src[0]};
  for (size_t a = 0; a < sizeof named / sizeof *named; a++) vec_push(*seen, named[a]);
  for (int a = 0; a < seen->n; a++)
    if (is_out[seen->v[a]]) goto done;
  m->r1 = r1, m->r2 = r2;
  ok = true;
done:
  sym_free(&sy);
  return ok;
}

static bool fold_operand(Sched *S, AttnMatch *m, int operand, bool is_q);

// The attentions of the graph: each match's inner nodes, whose only
// consumers must be inner nodes too (else the scores are needed elsewhere and
// the five kernels stay); the operands' roots realized; the output r2 then
// reshapes and casts.
static void find_attention(Sched *S, const bool *is_out) {
  int nn = S->g->nodes.n;
  IntVec seen = {0};
  for (int i = 0; i < nn; i++) {
    AttnMatch m = {0};
    if (!S->live[i] || !attn_match(S, i, is_out, &m, &seen)) continue;
    for (int a = 0; a < seen.n; a++) S->inner[seen.v[a]] = true;
    bool alone = true;
    for (int n = 0; n < nn && alone; n++) {
      if (!S->live[n] || S->inner[n]) continue;
      for (int k = 0; k < 3 && NODE(S, n)->src[k] >= 0; k++) {
        int s = NODE(S, n)->src[k];
        if (S->inner[s] && s != m.r2 && S->attn_of[s] < 0) alone = false;  // an earlier match's r2 is read outside too
      }
    }
    if (!alone) {
      for (int a = 0; a < seen.n; a++) S->inner[seen.v[a]] = false;
      continue;
    }
    m.end = m.r2;
    while (!is_out[m.end] && S->nuse[m.end] == 1) {
      Node *y = NODE(S, S->consumer[m.end]);
      if (y->op != OP_RESHAPE && y->op != OP_CAST) break;
      m.end = S->consumer[m.end];
    }
    const int roots[3] = {m.q, m.k, m.v};
    for (int a = 0; a < 3; a++) {
      // q and k: what only they read is computed in the kernel's loads (QK-norm, RoPE)
      if (a < 2 && (S->inner[roots[a]] || fold_operand(S, &m, roots[a], a == 0))) continue;
      int out[MAXDIM], idx[MAXDIM] = {0};
      Sym sy = {0};
      Node *x = NODE(S, roots[a]);
      for (int d = 0; d < x->shape.n; d++) sy.var_size[d] = x->shape.d[d], idx[d] = sym_var(&sy, d);
      sy.nvars = x->shape.n;
      int8_t cs[4], nc;
      IntVec path = {0};
      int root = view_walk(S, &sy, roots[a], idx, out, cs, &nc, &path);
      sym_free(&sy);
      // what the graph narrows right away (the projection's cast to bf16) is stored narrow: the same values, half the bytes
      int above = path.n ? path.v[path.n - 1] : -1;
      if (root >= 0 && above >= 0 && NODE(S, above)->op == OP_CAST && S->nuse[root] == 1 &&
          dtype_size[NODE(S, above)->dt] < dtype_size[NODE(S, root)->dt])
        root = above;
      free(path.v);
      if (root >= 0 && op_kind[NODE(S, root)->op] != K_LOAD && S->buf_of[root] < 0) add_buf(S, root, RT_TEMP, NULL);
    }
    S->attn_of[m.r2] = S->attn.n;
    vec_push(S->attn, m);
  }
  free(seen.v);
}

//
// GEMM prologues
//
// Elementwise work between reductions and a matmul's A operand (LayerNorm's
// normalize + modulate, the single blocks' concat of attention and
// gelu(mlp), the double blocks' gelu) would be realized by the broadcast rule:
// a kernel of its own writing the operand out, which the matmul reads back.
// For a matmul-shaped reduce it is inlined instead, into the A loads (and the
// shared-memory stage under STAGE): along n it is recomputed, which is cheap
// next to the 2K FLOPs per output of the product, and the round trip through
// memory is gone. The graph's casts stay in the inlined expression, so the
// values are bit for bit those of the realized tensor.

// Matmul-shaped: a sum of a product whose two operands, followed through
// casts and views, each move along an output axis the other does not, and
// both along a reduced one (as TC needs; not a matrix-vector product, not a
// sum of squares).
static bool matmul_reduce(Sched *S, int r) {
  Node *R = NODE(S, r), *mul = NODE(S, R->src[0]);
  if (R->op != OP_RSUM || mul->op != OP_MUL) return false;
  Sym sy = {0};
  int idx[MAXDIM], out[MAXDIM];
  uint32_t used[2] = {0, 0}, red = 0, outs = 0;
  for (int a = 0; a < mul->shape.n; a++) {
    sy.var_size[a] = mul->shape.d[a];
    if (R->arg[a]) red |= 1u << a;
    else if (mul->shape.d[a] > 1) outs |= 1u << a;
  }
  sy.nvars = mul->shape.n;
  for (int a = 0; a < mul->shape.n; a++) idx[a] = sym_var(&sy, a);
  for (int side = 0; side < 2; side++) {
    int x = view_walk(S, &sy, mul->src[side], idx, out, NULL, NULL, NULL);
    for (int d = 0; d < NODE(S, x)->shape.n; d++) used[side] |= sy.n.v[out[d]].vars;
  }
  sym_free(&sy);
  return (used[0] & used[1] & red) && (used[0] & ~used[1] & outs) && (used[1] & ~used[0] & outs);
}

// A prologue: the value is an elementwise, cast and movement (pads, so
// concat, included) function of realized values, loads, constants and
// reduces (each realized at the end of its own chain, which every path to it
// passes through), of at most MAX_PROLOGUE_OPS elementwise ops and casts
// (LayerNorm + modulate is 7, gelu 9, concat(attention, gelu) 12; the bound keeps
// the recomputation along n small next to the product's 2K FLOPs per output);
// movement is index arithmetic and is bounded by MAX_PROLOGUE_NODES.
// Its recompute is counted too: each A element is computed once per block
// along n, N / T times for a block tile of T outputs along n (the schedule's
// tile_n: a GPU block's tile, the tensor cores' 128, or a CPU
// work-item's register tile of about 8), against 2N FLOPs of the product per
// A element: the prologue is fused when its cost per element (transcendental
// ops counted as 8) is at most T/2, i.e. at most a quarter of the product's
// work; else it is realized (one small kernel writes it, the matmul reads it).
#define MAX_PROLOGUE_OPS 32
#define MAX_PROLOGUE_NODES 128

static int recompute_cost(int op) {
  switch (op) {
  case OP_EXP: case OP_LOG: case OP_SIN: case OP_COS: case OP_TANH: case OP_SQRT: case OP_RECIP: case OP_DIV: return 8;
  default: return 1;
  }
}

// The nodes that a reduce's kernel will compute after it (its store chain:
// single-consumer elementwise ops and reshapes, see schedule_build), before
// realization decides where each chain ends. A prologue counts them as
// leaves: the chain's end is realized (where a prologue reads it) and
// computed by the reduce's kernel, not by the matmul's. (A chain that a
// realized node cuts shorter leaves a few more ops in the matmul than
// counted; that only loosens the bound a little.)
static void mark_chains(Sched *S, const bool *is_out) {
  for (int i = 0; i < S->g->nodes.n; i++) {  // sources always have smaller ids
    Node *x = NODE(S, i);
    if (!S->live[i] || !(is_elementwise(x->op) || x->op == OP_RESHAPE)) continue;
    for (int k = 0; k < 3 && x->src[k] >= 0; k++) {
      int s = x->src[k];
      bool reduce = op_kind[NODE(S, s)->op] == K_REDUCE && (!S->inner[s] || S->attn_of[s] >= 0);
      if (S->nuse[s] == 1 && !is_out[s] && (reduce || S->chain[s])) S->chain[i] = true;
    }
  }
}

static bool prologue_ok(Sched *S, int id) {
  if (S->chain[id]) return false;  // realized, it ends its chain: the reduce's kernel stores it (in its dtype)
  int seen[MAX_PROLOGUE_NODES], nseen = 0, st[MAX_PROLOGUE_NODES * 3 + 1], nst = 0, ops = 0, cost = 0;
  st[nst++] = id;
  while (nst) {
    int n = st[--nst];
    bool dup = false;
    for (int i = 0; i < nseen && !dup; i++) dup = seen[i] == n;
    if (dup) continue;
    Node *x = NODE(S, n);
    int kind = op_kind[x->op];
    if (S->buf_of[n] >= 0 || kind == K_LOAD || kind == K_CONST || S->chain[n]) continue;
    if (kind == K_REDUCE && (!S->inner[n] || S->attn_of[n] >= 0)) continue;  // a fused attention's output, not its insides
    if (S->inner[n] || nseen == MAX_PROLOGUE_NODES) return false;
    if (is_elementwise(x->op)) ops++, cost += recompute_cost(x->op);
    else if (kind != K_MOVE) return false;
    if (ops > MAX_PROLOGUE_OPS || 2 * cost > S->s->tile_n) return false;
    seen[nseen++] = n;
    for (int k = 0; k < 3 && x->src[k] >= 0; k++) st[nst++] = x->src[k];
  }
  return true;
}

// Bounds on inlining. A kernel's expression is built recursively, once per
// level of inlined nodes: a node more than MAX_INLINE_DEPTH levels above a
// realized one is realized itself. A value read by several consumers is
// recomputed in each: one whose inlined expression exceeds MAX_DUP_COST ops is
// realized instead (a chain `y = y - sum(y)` would otherwise inline the whole
// chain into every reduce: quadratic work, kernels and dumps). Both are far
// above what FLUX.1 needs, so its kernels do not change.
#define MAX_INLINE_DEPTH 256
#define MAX_DUP_COST 64

static void bound_inlining(Sched *S) {
  int nn = S->g->nodes.n;
  int *depth = xcalloc((size_t)nn, sizeof *depth), *cost = xcalloc((size_t)nn, sizeof *cost);
  for (int i = 0; i < nn; i++) {  // sources always have smaller ids
    Node *x = NODE(S, i);
    if (!S->live[i] || S->buf_of[i] >= 0 || op_kind[x->op] == K_LOAD || S->inner[i]) continue;
    int d = 0;
    int64_t c = 1;
    for (int k = 0; k < 3 && x->src[k] >= 0; k++) {
      int s = x->src[k];
      if (depth[s] > d) d = depth[s];
      c += cost[s];
    }
    depth[i] = d + 1;
    cost[i] = c > (1 << 30) ? 1 << 30 : (int)c;
    if (depth[i] > MAX_INLINE_DEPTH || (S->nuse[i] > 1 && cost[i] > MAX_DUP_COST && !cheap(S, i))) {
      add_buf(S, i, RT_TEMP, NULL);
      depth[i] = cost[i] = 0;
    }
  }
  free(depth);
  free(cost);
}

//
// Building one kernel
//
typedef struct {
  Sched *S;
  Kernel *k;
  int red_node;             // the reduce computed inside this kernel (-1: none)
  int nvars_out;
  // the fused attention's operands: reduces folded into them are row statistics over
  // variable stat_var (0: none; never variable 0), their masks without drop_var's
  // conditions (the rows they sum over do not depend on the channel that reads them)
  int stat_var, drop_var;
  const bool *only;         // a trial build (fold_operand): nodes outside it are leaves
  bool bad;                 // the trial met a reduce that is not a row statistic

  // memo of (node, index vector, valid) -> kop, with an open-addressing table
  struct { int node, valid, nidx; int idx[MAXDIM]; int kop; } *memo;
  int nmemo, capmemo;
  int *mtab;                // memo entries by hash, -1 empty
  int mcap;
} KB;

static int kop(KB *b, KOp o) {
  vec_push(b->k->ops, o);
  return b->k->ops.n - 1;
}

static int arg_slot(KB *b, int buf) {
  for (int i = 0; i < b->k->args.n; i++)
    if (b->k->args.v[i].buf == buf) return i;
  vec_push(b->k->args, ((KArg){buf, b->S->s->bufs.v[buf].dt, ""}));
  return b->k->args.n - 1;
}

// row-major linear index of idx in shape
static int linear(Sym *sy, const Shape *sh, const int *idx) {
  int e = sym_const(sy, 0);
  int64_t stride = 1;
  for (int i = sh->n - 1; i >= 0; i--) {
    e = sym_add(sy, e, sym_mul(sy, idx[i], stride));
    stride *= sh->d[i];
  }
  return e;
}

static int build(KB *b, int id, const int *idx, int valid);

static uint64_t memo_hash(int id, const int *idx, int n, int valid) {
  uint64_t h = fnv_mix(fnv_mix(FNV_SEED, (uint64_t)id), (uint64_t)valid);
  for (int i = 0; i < n; i++) h = fnv_mix(h, (uint64_t)idx[i]);
  return h;
}

static int memo_slot(KB *b, int id, const int *idx, int n, int valid) {  // the entry's slot, or the free one
  uint64_t h = memo_hash(id, idx, n, valid) & (uint64_t)(b->mcap - 1);
  for (; b->mtab[h] >= 0; h = (h + 1) & (uint64_t)(b->mcap - 1)) {
    int i = b->mtab[h];
    if (b->memo[i].node == id && b->memo[i].valid == valid && b->memo[i].nidx == n &&
        !memcmp(b->memo[i].idx, idx, sizeof(int) * (size_t)n))
      break;
  }
  return (int)h;
}

// valid without its conditions on variable v (a conjunction of them)
static int drop_var(Sym *sy, int e, int v) {
  SNode x = sy->n.v[e];
  if (!((x.vars >> v) & 1)) return e;
  if (x.kind != S_AND) return sym_const(sy, 1);
  return sym_and(sy, drop_var(sy, x.a, v), drop_var(sy, x.b, v));
}

static int build_memo(KB *b, int id, const int *idx, int valid) {
  int n = NODE(b->S, id)->shape.n;
  if (b->stat_var && valid >= 0 && op_kind[NODE(b->S, id)->op] == K_REDUCE) {
    valid = drop_var(&b->k->sym, valid, b->drop_var);
    if (b->k->sym.n.v[valid].kind == S_CONST && b->k->sym.n.v[valid].c) valid = -1;  // always
  }
  if (b->mcap) {
    int h = memo_slot(b, id, idx, n, valid);
    if (b->mtab[h] >= 0) return b->memo[b->mtab[h]].kop;
  }
  int r = build(b, id, idx, valid);
  if (b->nmemo == b->capmemo) {
    b->capmemo = b->capmemo ? 2 * b->capmemo : 64;
    b->memo = xrealloc(b->memo, sizeof *b->memo * (size_t)b->capmemo);
  }
  b->memo[b->nmemo].node = id;
  b->memo[b->nmemo].valid = valid;
  b->memo[b->nmemo].nidx = n;
  memcpy(b->memo[b->nmemo].idx, idx, sizeof(int) * (size_t)n);
  b->memo[b->nmemo].kop = r;
  b->nmemo++;
  if (2 * b->nmemo > b->mcap) {  // grow and rehash
    free(b->mtab);
    b->mcap = b->mcap ? 2 * b->mcap : 256;
    b->mtab = xcalloc((size_t)b->mcap, sizeof *b->mtab);
    for (int i = 0; i < b->mcap; i++) b->mtab[i] = -1;
    for (int i = 0; i < b->nmemo; i++) b->mtab[memo_slot(b, b->memo[i].node, b->memo[i].idx, b->memo[i].nidx, b->memo[i].valid)] = i;
  } else {
    b->mtab[memo_slot(b, id, idx, n, valid)] = b->nmemo - 1;
  }
  return r;
}

// A reduce inside the fused attention's operand (QK-norm's mean of squares):
// an ACC over the stat variable, which the kernel computes once per row.
static int stat_acc(KB *b, int id, const int *idx, int valid) {
  Node *x = NODE(b->S, id);
  Sym *sy = &b->k->sym;
  int n = x->shape.n;
  bool mine = b->only ? b->only[id] : b->S->inner[id];
  if (!mine || !reduces_last(x) || NODE(b->S, x->src[0])->shape.d[n - 1] != sy->var_size[b->stat_var]) {
    if (!b->only) diag_fatal("internal: reduce %%%d in the fused attention's operand is not a row statistic", id);
    b->bad = true;
    return kop(b, (KOp){.op = OP_CONST, .dt = x->dt, .src = {-1, -1, -1}, .slot = -1, .idx = -1, .valid = -1});
  }
  int sidx[MAXDIM];
  memcpy(sidx, idx, sizeof(int) * (size_t)n);
  sidx[n - 1] = sym_var(sy, b->stat_var);
  int src = build_memo(b, x->src[0], sidx, valid);
  return kop(b, (KOp){.op = KO_ACC, .dt = x->dt, .src = {src, -1, -1}, .slot = -1, .idx = -1, .valid = -1, .c = x->op});
}

static int build(KB *b, int id, const int *idx, int valid) {
  Sched *S = b->S;
  Sym *sy = &b->k->sym;
  Node *x = NODE(S, id);
  KOp o = {.op = x->op, .dt = x->dt, .src = {-1, -1, -1}, .slot = -1, .idx = -1, .valid = -1};
  int sidx[MAXDIM];
  bool leaf = b->only && !b->only[id] && op_kind[x->op] != K_CONST;
  if ((S->buf_of[id] >= 0 && id != b->k->node) || leaf) {  // realized elsewhere: read it
    o.op = KO_LOAD;
    o.slot = leaf ? -1 : arg_slot(b, S->buf_of[id]);
    o.idx = linear(sy, &x->shape, idx);
    o.valid = valid;
    return kop(b, o);
  }
  switch (op_kind[x->op]) {
  case K_LOAD: diag_fatal("internal: unrealized load");
  case K_CONST:
    if (x->op == OP_CONST) {
      o.c = x->c;
      return kop(b, o);
    }
    o.op = KO_IDX;  // arange: the index itself
    o.idx = idx[x->shape.n - 1];
    return kop(b, o);
  case K_UNARY: case K_BINARY: case K_TERNARY:
    for (int k = 0; k < 3 && x->src[k] >= 0; k++) o.src[k] = build_memo(b, x->src[k], idx, valid);
    return kop(b, o);
  case K_GATHER: {  // the ids computed here; the table realized (schedule_build): one load at the id's row
    Node *t = NODE(S, x->src[0]);
    int ni = NODE(S, x->src[1])->shape.n;
    sidx[0] = sym_const(sy, 0);
    for (int i = 1; i < t->shape.n; i++) sidx[i] = idx[ni + i - 1];
    o.op = KO_GATHER;
    o.src[0] = build_memo(b, x->src[1], idx, valid);
    o.slot = arg_slot(b, S->buf_of[x->src[0]]);
    o.idx = linear(sy, &t->shape, sidx);
    o.valid = valid;
    o.rows = t->shape.d[0];
    o.stride = shape_numel(&t->shape) / o.rows;
    return kop(b, o);
  }
  case K_REDUCE: {
    if (id != b->red_node && b->stat_var) return stat_acc(b, id, idx, valid);
    if (id != b->red_node) diag_fatal("internal: second reduce %%%d in the kernel of %%%d (reduce %%%d)", id, b->k->node, b->red_node);
    for (int i = 0, r = b->nvars_out; i < x->shape.n; i++) sidx[i] = x->arg[i] ? sym_var(sy, r++) : idx[i];
    o.op = KO_ACC;
    o.src[0] = build_memo(b, x->src[0], sidx, valid);
    o.c = x->op;
    return kop(b, o);
  }
  case K_MOVE: {
    Node *src = NODE(S, x->src[0]);
    int v = valid;
    switch (x->op) {
    case OP_RESHAPE: {
      int lin = linear(sy, &x->shape, idx);
      int64_t stride = 1;
      for (int i = src->shape.n - 1; i >= 0; i--) {
        sidx[i] = sym_mod(sy, sym_div(sy, lin, stride), src->shape.d[i]);
        stride *= src->shape.d[i];
      }
      break;
    }
    case OP_PERMUTE:
      for (int i = 0; i < x->shape.n; i++) sidx[x->arg[i]] = idx[i];
      break;
    case OP_EXPAND:
      for (int i = 0; i < x->shape.n; i++) sidx[i] = src->shape.d[i] == 1 ? sym_const(sy, 0) : idx[i];
      break;
    case OP_SHRINK:
      for (int i = 0; i < x->shape.n; i++) sidx[i] = sym_add(sy, idx[i], sym_const(sy, x->arg[2 * i]));
      break;
    case OP_UNFOLD:
      memcpy(sidx, idx, sizeof(int) * (size_t)src->shape.n);
      sidx[x->arg[0]] = sym_add(sy, sym_mul(sy, idx[x->arg[0]], x->arg[2]), idx[x->shape.n - 1]);
      break;
    case OP_PAD: {
      int mask = sym_const(sy, 1);
      for (int i = 0; i < x->shape.n; i++) {
        int64_t lo = x->arg[2 * i];
        sidx[i] = sym_assume(sy, sym_add(sy, idx[i], sym_const(sy, -lo)), 0, src->shape.d[i] - 1);
        mask = sym_and(sy, mask, sym_and(sy, sym_ge(sy, idx[i], lo), sym_lt(sy, idx[i], lo + src->shape.d[i])));
      }
      int inner = build_memo(b, x->src[0], sidx, valid < 0 ? mask : sym_and(sy, valid, mask));
      if (sy->n.v[mask].kind == S_CONST && sy->n.v[mask].c == 1) return inner;
      o.op = KO_PADSEL;
      o.src[0] = inner;
      o.valid = mask;
      return kop(b, o);
    }
    }
    return build_memo(b, x->src[0], sidx, v);
  }
  }
  diag_fatal("internal: cannot build op %s", op_name[x->op]);
}

// Find the reduce this realized node computes inside its kernel, if any:
// the node itself or the head of its fused chain.
static int find_reduce(Sched *S, int id) {
  Node *x = NODE(S, id);
  if (op_kind[x->op] == K_REDUCE) return id;
  for (int k = 0; k < 3 && x->src[k] >= 0; k++) {
    int s = x->src[k];
    Node *y = NODE(S, s);
    if (S->buf_of[s] >= 0) continue;
    if (op_kind[y->op] == K_REDUCE) return s;
    if (is_elementwise(y->op) || y->op == OP_RESHAPE) {
      int r = find_reduce(S, s);
      if (r >= 0) return r;
    }
  }
  return -1;
}

// every symbolic expression of the kernel, for merging
static int kernel_exprs(Kernel *k, int **out) {
  int n = 0;
  *out = xcalloc((size_t)(2 * k->ops.n + 1), sizeof(int));
  for (int i = 0; i < k->ops.n; i++) {
    if (k->ops.v[i].idx >= 0) (*out)[n++] = k->ops.v[i].idx;
    if (k->ops.v[i].valid >= 0) (*out)[n++] = k->ops.v[i].valid;
  }
  return n;
}

// Merge axis a+1 into a where every access sees them as one strided axis;
// drop axes of size 1. Rebuilds the kernel's Sym with the new variables.
static void merge_axes(Kernel *k) {
  for (;;) {
    int nv = k->nout + k->nred, *ex, ne = kernel_exprs(k, &ex);
    int drop = -1, merge = -1;
    for (int v = 0; v < nv && drop < 0; v++)
      if (k->dims[v] == 1) drop = v;
    for (int v = 0; v + 1 < nv && drop < 0 && merge < 0; v++) {
      if (v + 1 == k->nout) continue;  // never merge an output axis with a reduce axis
      bool ok = true;
      for (int i = 0; i < ne && ok; i++) {
        bool la, lb;
        int64_t ca = sym_coef(&k->sym, ex[i], v, &la), cb = sym_coef(&k->sym, ex[i], v + 1, &lb);
        ok = la && lb && ca == cb * k->dims[v + 1];
      }
      if (ok) merge = v;
    }
    free(ex);
    if (drop < 0 && merge < 0) return;
    Sym to = {0};
    int map[2 * MAXDIM], nn = 0;
    int64_t dims[2 * MAXDIM];
    for (int v = 0; v < nv; v++) {
      if (v == drop) continue;
      if (merge >= 0 && v == merge + 1) continue;
      dims[nn] = v == merge ? k->dims[v] * k->dims[v + 1] : k->dims[v];
      to.var_size[nn] = dims[nn];
      nn++;
    }
    to.nvars = nn;
    for (int v = 0, w = 0; v < nv; v++) {
      if (v == drop) {
        map[v] = sym_const(&to, 0);
      } else if (v == merge) {
        map[v] = sym_const(&to, 0);                    // a contributes through b's coefficient
        map[v + 1] = sym_var(&to, w++);
        v++;
      } else {
        map[v] = sym_var(&to, w++);
      }
    }
    kernel_reindex(k, &to, map);
    int removed_out = (drop >= 0 && drop < k->nout) || (merge >= 0 && merge < k->nout);
    if (removed_out) k->nout--;
    else k->nred--;
    memcpy(k->dims, dims, sizeof(int64_t) * (size_t)nn);
  }
}

// FLOPs and bytes (the arguments' sizes) of a kernel, for the records and
// the report's roofline floor. An op after the reduce counts once per output,
// the accumulation once per (output, reduce step), and an op inside the
// reduce loop once per point of the axes its value depends on: a GEMM
// prologue's ops do not depend on n, so they count once per (m, k), the
// algorithmic minimum, although a kernel computes them again along n (once
// per tile element and block of n under STAGE, at every n unstaged). The
// floor stays a floor; in a matmul their share is small (about ops/(2N)).
static void count_work(Sched *S, Kernel *k) {
  int64_t outs = 1, reds = 1;
  for (int i = 0; i < k->nout; i++) outs *= k->dims[i];
  for (int i = k->nout; i < k->nout + k->nred; i++) reds *= k->dims[i];
  int64_t f = 0;
  uint32_t *vars = xcalloc((size_t)k->ops.n + 1, sizeof *vars);
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->idx >= 0) vars[i] |= k->sym.n.v[o->idx].vars;
    if (o->valid >= 0) vars[i] |= k->sym.n.v[o->valid].vars;
    for (int j = 0; j < 3; j++)
      if (o->src[j] >= 0) vars[i] |= vars[o->src[j]];
    bool alu = o->op < OP_COUNT && op_kind[o->op] != K_CONST && o->op != OP_CAST;
    if (o->op == KO_ACC) f += outs * reds;
    else if (alu && !o->in_loop) f += outs;
    else if (alu) {
      int64_t points = 1;
      for (int a = 0; a < k->nout + k->nred; a++)
        if ((vars[i] >> a) & 1) points *= k->dims[a];
      f += points;
    }
  }
  k->flops = f;
  k->bytes = 0;
  // a table read only by gathers moves at most a row per id, not its whole size
  int64_t *gathered = xcalloc((size_t)k->args.n + 1, sizeof *gathered);
  bool *plain = xcalloc((size_t)k->args.n + 1, sizeof *plain);
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->op == KO_GATHER) {
      int64_t ids = 1;  // the points of the axes its id moves along
      uint32_t v = o->src[0] >= 0 ? vars[o->src[0]] : 0;
      for (int a = 0; a < k->nout + k->nred; a++)
        if ((v >> a) & 1) ids *= k->dims[a];
      gathered[o->slot] += ids * o->stride * dtype_size[k->args.v[o->slot].dt];
    } else if (o->slot >= 0) {
      plain[o->slot] = true;
    }
  }
  for (int i = 0; i < k->args.n; i++) {
    int64_t b = (int64_t)S->s->bufs.v[k->args.v[i].buf].bytes;
    k->bytes += plain[i] || !gathered[i] || gathered[i] > b ? b : gathered[i];
  }
  free(gathered), free(plain);
  free(vars);
}

static void make_kernel(Sched *S, int node) {
  Schedule *s = S->s;
  Kernel k = {.target = s->target};
  Node *x = NODE(S, node);
  k.node = node;
  k.loc = x->loc;
  k.red_op = -1;
  KB b = {.S = S, .k = &k, .red_node = find_reduce(S, node)};
  // variables: output axes, then the reduce's reduced axes
  k.nout = x->shape.n;
  for (int i = 0; i < x->shape.n; i++) k.dims[i] = k.sym.var_size[i] = x->shape.d[i];
  if (b.red_node >= 0) {
    Node *r = NODE(S, b.red_node), *src = NODE(S, r->src[0]);
    k.red_op = r->op;
    for (int i = 0; i < r->shape.n; i++)
      if (r->arg[i]) k.dims[k.nout + k.nred] = k.sym.var_size[k.nout + k.nred] = src->shape.d[i], k.nred++;
  }
  k.sym.nvars = k.nout + k.nred;
  b.nvars_out = k.nout;
  int idx[MAXDIM];
  for (int i = 0; i < x->shape.n; i++) idx[i] = sym_var(&k.sym, i);
  int out_buf = S->buf_of[node];
  vec_push(k.args, ((KArg){out_buf, s->bufs.v[out_buf].dt, ""}));
  // the stored value: realized nodes are loads everywhere but in their own kernel
  int val = build(&b, node, idx, -1);
  if (x->op == OP_LOAD) diag_fatal("internal: kernel for a load");
  KOp st = {.op = KO_STORE, .dt = x->dt, .src = {val, -1, -1}, .slot = 0, .idx = linear(&k.sym, &x->shape, idx), .valid = -1};
  kop(&b, st);
  free(b.memo);
  free(b.mtab);
  merge_axes(&k);
  // which ops run inside the reduce loop
  uint32_t redmask = 0;
  for (int v = k.nout; v < k.nout + k.nred; v++) redmask |= 1u << v;
  for (int i = 0; i < k.ops.n; i++) {
    KOp *o = &k.ops.v[i];
    bool in = (o->idx >= 0 && (k.sym.n.v[o->idx].vars & redmask)) || (o->valid >= 0 && (k.sym.n.v[o->valid].vars & redmask));
    for (int j = 0; j < 3; j++)
      if (o->src[j] >= 0 && o->op != KO_ACC) in |= k.ops.v[o->src[j]].in_loop;
    o->in_loop = in;
  }
  k.tc_a = k.tc_b = k.tc_dt = k.tc_scale = -1;
  k.naxes = k.nout + k.nred;
  for (int i = 0; i < k.naxes; i++) k.role[i] = i < k.nout ? AX_GLOBAL : AX_REDUCE, k.orig_dims[i] = k.dims[i];
  kernel_rename(&k);
  memcpy(k.orig_name, k.name, sizeof k.name);
  count_work(S, &k);
  vec_push(s->k, k);
}

// One operand of the fused attention: the load and the casts its value takes
// (what the two products read), built at the kernel's index idx.
static int operand_chain(KB *b, int node, const int *idx) {
  int top = build_memo(b, node, idx, -1);
  for (int x = top;; x = b->k->ops.v[x].src[0]) {
    KOp *o = &b->k->ops.v[x];
    if (o->op == KO_LOAD && o->valid < 0) break;
    if (o->op != OP_CAST) diag_fatal("internal: attention operand %%%d is not a load and casts", node);
  }
  return top;
}

// The fused attention's iteration space: axes [batch.. | Lq, E | Lk, D (| R)]
// with R, the row statistics' channel, where QK-norm is folded into the loads;
// the operands' indices ix1 (z, i, j, d) and ix2 (z, i, e, j), the store's io.
static void attn_space(Sched *S, AttnMatch *m, Kernel *k, int *ix1, int *ix2, int *io) {
  Node *mul2 = NODE(S, NODE(S, m->r2)->src[0]), *mul1 = NODE(S, NODE(S, m->r1)->src[0]);
  int nb = mul2->shape.n - 3, I = nb, E = nb + 1, J = nb + 2, D = nb + 3;
  k->nout = nb + 2, k->nred = m->rsize ? 3 : 2, k->naxes = k->nout + k->nred;
  for (int a = 0; a < nb + 3; a++) k->dims[a] = mul2->shape.d[a];
  k->dims[D] = mul1->shape.d[nb + 2];
  k->dims[nb + 4] = m->rsize ? m->rsize : 1;
  for (int a = 0; a < nb + 5; a++) {
    k->sym.var_size[a] = k->orig_dims[a] = k->dims[a];
    k->role[a] = a < k->nout ? AX_GLOBAL : AX_REDUCE;
  }
  k->sym.nvars = k->naxes;
  for (int a = 0; a < nb; a++) ix1[a] = ix2[a] = io[a] = sym_var(&k->sym, a);
  ix1[nb] = ix2[nb] = io[nb] = sym_var(&k->sym, I);
  ix1[nb + 1] = sym_var(&k->sym, J), ix1[nb + 2] = sym_var(&k->sym, D);
  ix2[nb + 1] = io[nb + 1] = sym_var(&k->sym, E), ix2[nb + 2] = sym_var(&k->sym, J);
  io[nb + 2] = sym_const(&k->sym, 0);
}

// The variables that KOp i and what it reads use; *nested set if an ACC is among them.
static uint32_t kop_vars(const Kernel *k, int i, bool *nested) {
  const KOp *o = &k->ops.v[i];
  uint32_t v = 0;
  if (o->idx >= 0) v |= k->sym.n.v[o->idx].vars;
  if (o->valid >= 0) v |= k->sym.n.v[o->valid].vars;
  for (int j = 0; j < 3 && o->src[j] >= 0; j++) {
    if (k->ops.v[o->src[j]].op == KO_ACC) *nested = true;
    v |= kop_vars(k, o->src[j], nested);
  }
  return v;
}

// Fold what only the q (or k) operand reads into the fused kernel's loads
// (RoPE, QK-norm: each row's mean of squares computed from the row the kernel
// loads anyway), removing the round trips of their kernels. A trial build
// checks that every reduce met is a row statistic: over the last axis, its
// rows not depending on the channel d (nor on the other operand's row), no
// reduce inside it, all of one length. Else the operand stays a buffer.
static bool fold_operand(Sched *S, AttnMatch *m, int operand, bool is_q) {
  int nn = S->g->nodes.n;
  Node *mul1 = NODE(S, NODE(S, m->r1)->src[0]);
  int *uses = xcalloc((size_t)nn, sizeof *uses);
  bool *fold = xcalloc((size_t)nn, sizeof *fold), worth = false;
  IntVec cand = {0};
  int64_t rsize = m->rsize;
  for (int a = 0; a < 2; a++) uses[operand] += mul1->src[a] == operand;
  vec_push(cand, operand);
  while (cand.n) {  // highest id first: every consumer is decided before its sources
    int at = 0;
    for (int c = 1; c < cand.n; c++)
      if (cand.v[c] > cand.v[at]) at = c;
    int n = cand.v[at];
    cand.v[at] = cand.v[--cand.n];
    Node *x = NODE(S, n);
    if (uses[n] != S->nuse[n] || op_kind[x->op] == K_LOAD || op_kind[x->op] == K_CONST || S->buf_of[n] >= 0 || S->inner[n]) continue;
    fold[n] = true;
    worth |= x->op != OP_CAST && op_kind[x->op] != K_MOVE;
    if (op_kind[x->op] == K_REDUCE && !rsize) rsize = NODE(S, x->src[0])->shape.d[x->shape.n - 1];
    for (int j = 0; j < 3 && x->src[j] >= 0; j++) {
      if (!uses[x->src[j]]) vec_push(cand, x->src[j]);
      uses[x->src[j]]++;
    }
  }
  free(cand.v);
  free(uses);
  if (worth) {  // the trial
    Kernel k = {.target = S->s->target};
    AttnMatch t = *m;
    t.rsize = rsize ? rsize : 1;
    int ix1[MAXDIM], ix2[MAXDIM], io[MAXDIM];
    attn_space(S, &t, &k, ix1, ix2, io);
    int nb = k.nout - 2, D = nb + 3;
    KB b = {.S = S, .k = &k, .red_node = -1, .stat_var = nb + 4, .drop_var = D, .only = fold};
    build_memo(&b, operand, ix1, -1);
    uint32_t other = 1u << (is_q ? nb + 2 : nb);  // a q row's statistic must not depend on j, a k row's on i
    for (int i = 0; i < k.ops.n && !b.bad; i++) {
      bool nested = false;
      if (k.ops.v[i].op == KO_ACC && (kop_vars(&k, k.ops.v[i].src[0], &nested) & ((1u << D) | other) || nested)) b.bad = true;
    }
    worth = !b.bad;
    free(b.memo);
    free(b.mtab);
    kernel_free(&k);
  }
  if (worth) {
    for (int n = 0; n < nn; n++) S->inner[n] |= fold[n];
    if (rsize) m->rsize = rsize;
  }
  free(fold);
  return worth;
}

// The fused attention's kernel: axes [batch.. | Lq, E | Lk, D (| R)], the
// operands as expressions at (z, i, d), (z, j, d), (z, j, e): loads and casts,
// and for q and k what fold_operand folded; the store at r2's (z, i, e).
static void make_attn_kernel(Sched *S, AttnMatch *m) {
  Kernel k = {.target = S->s->target};  // attn_init checks its tiles against the target's limits
  Node *x = NODE(S, m->end), *r2 = NODE(S, m->r2), *mul2 = NODE(S, r2->src[0]);
  int nb = mul2->shape.n - 3, I = nb, E = nb + 1, J = nb + 2, D = nb + 3;
  k.kind = KERNEL_ATTN;
  k.node = m->end;
  k.loc = r2->loc;
  k.red_op = OP_RSUM;
  int ix1[MAXDIM], ix2[MAXDIM], io[MAXDIM];
  attn_space(S, m, &k, ix1, ix2, io);
  KB b = {.S = S, .k = &k, .red_node = -1, .stat_var = m->rsize ? nb + 4 : 0, .drop_var = D};
  vec_push(k.args, ((KArg){S->buf_of[m->end], S->s->bufs.v[S->buf_of[m->end]].dt, ""}));
  k.at.nb = nb;
  k.at.q = build_memo(&b, m->q, ix1, -1);
  k.at.k = build_memo(&b, m->k, ix1, -1);
  k.at.v = operand_chain(&b, m->v, ix2);
  free(b.memo);
  free(b.mtab);
  k.at.scale_op = m->scale_op, k.at.scale = m->scale;
  memcpy(k.at.pcast, m->pcast, sizeof m->pcast), k.at.npcast = m->npcast;
  for (int n = m->r2; n != m->end;) {  // the output's casts, innermost first
    n = S->consumer[n];
    if (NODE(S, n)->op == OP_CAST && k.at.nocast < 4) k.at.ocast[k.at.nocast++] = (int8_t)NODE(S, n)->dt;
  }
  // r2, its reshapes and casts keep the row-major order: r2's linear index is the end's
  KOp st = {.op = KO_STORE, .dt = x->dt, .src = {-1, -1, -1}, .slot = 0, .idx = linear(&k.sym, &r2->shape, io), .valid = -1};
  vec_push(k.ops, st);
  k.tc_a = k.tc_b = k.tc_dt = k.tc_scale = -1;
  attn_init(&k);
  kernel_rename(&k);
  memcpy(k.orig_name, k.name, sizeof k.name);
  int64_t z = 1;
  for (int a = 0; a < nb; a++) z *= k.dims[a];
  // two products (2 FLOP per multiply-add each) and the softmax (scale, max, exp, sum, rescale)
  k.flops = z * k.dims[I] * k.dims[J] * (2 * k.dims[D] + 2 * k.dims[E] + 6);
  int nst[2] = {0, 0};  // and the row statistics folded into q and k: a multiply-add per channel, once per row
  attn_stats(&k, nst);
  k.flops += z * (k.dims[I] * nst[0] + k.dims[J] * nst[1]) * 2 * k.dims[nb + 4];
  for (int a = 0; a < k.args.n; a++) k.bytes += (int64_t)S->s->bufs.v[k.args.v[a].buf].bytes;
  vec_push(S->s->k, k);
}

//
// Dumps and hashing
//
static void kop_text(Kernel *k, int i, char *buf, size_t n) {
  KOp *o = &k->ops.v[i];
  char ix[1024] = "", va[1024] = "", store[MAXAXES][16];
  const char *names[MAXAXES];
  for (int a = 0; a < k->naxes; a++) axis_name(k, a, store[a], sizeof store[a]), names[a] = store[a];
  if (o->idx >= 0) sym_str(&k->sym, o->idx, names, ix, sizeof ix);
  if (o->valid >= 0) sym_str(&k->sym, o->valid, names, va, sizeof va);
  const char *name = o->op < OP_COUNT ? op_name[o->op]
                   : o->op == KO_LOAD ? "load" : o->op == KO_ACC ? "acc" : o->op == KO_IDX ? "idx"
                   : o->op == KO_PADSEL ? "padsel" : o->op == KO_GATHER ? "gather" : "store";
  size_t w = (size_t)snprintf(buf, n, "  k%d = %s %s%s", i, name, dtype_name[o->dt], o->in_loop ? " loop" : "");
  for (int j = 0; j < 3 && o->src[j] >= 0 && o->op != KO_GATHER; j++) w += (size_t)snprintf(buf + w, n - w, " k%d", o->src[j]);
  if (o->op == KO_ACC) w += (size_t)snprintf(buf + w, n - w, " %s", op_name[(int)o->c]);
  if (o->op == KO_GATHER)
    w += (size_t)snprintf(buf + w, n - w, " data%d[%s + row(k%d, %lld) * %lld]", o->slot, ix, o->src[0], (long long)o->rows, (long long)o->stride);
  else if (o->slot >= 0) w += (size_t)snprintf(buf + w, n - w, " data%d[%s]", o->slot, ix);
  else if (o->idx >= 0) w += (size_t)snprintf(buf + w, n - w, " %s", ix);
  if (o->valid >= 0) w += (size_t)snprintf(buf + w, n - w, " if %s", va);
  if (o->op == OP_CONST) snprintf(buf + w, n - w, " %.9g", o->c);
}

static uint64_t kernel_hash(Kernel *k) {
  char line[4096];
  uint64_t h = fnv_bytes(FNV_SEED, k->name, strlen(k->name));
  for (int i = 0; i < k->args.n; i++) h = fnv_mix(h, (uint64_t)k->args.v[i].dt);
  if (k->kind == KERNEL_ATTN) {  // what its KOps do not say
    uint64_t sc;
    memcpy(&sc, &k->at.scale, 8);
    h = fnv_mix(fnv_mix(fnv_mix(h, (uint64_t)k->at.scale_op), sc), (uint64_t)(k->at.q * 4096 + k->at.k * 64 + k->at.v));
    h = fnv_bytes(fnv_bytes(h, k->at.pcast, (size_t)k->at.npcast), k->at.ocast, (size_t)k->at.nocast);
  }
  for (int i = 0; i < k->ops.n; i++) {
    kop_text(k, i, line, sizeof line);
    h = fnv_bytes(h, line, strlen(line));
  }
  return h;
}

// Unique kernels: launches whose kernels print the same share one. The
// kernels made one per launch become launches of the unique ones.
static void dedup(Schedule *s) {
  int n = s->k.n, nu = 0;
  for (int i = 0; i < n; i++) {
    Kernel *k = &s->k.v[i];
    k->hash = kernel_hash(k);
    int u = 0;
    while (u < nu && s->k.v[u].hash != k->hash) u++;
    Launch l = {.kernel = u, .loc = k->loc};
    l.args.v = xcalloc((size_t)k->args.n + 1, sizeof *l.args.v);
    memcpy(l.args.v, k->args.v, (size_t)k->args.n * sizeof *k->args.v);
    l.args.n = l.args.cap = k->args.n;
    vec_push(s->l, l);
    if (u < nu) kernel_free(k);
    else s->k.v[nu++] = *k;   // moved down: unique kernels first, in order of first launch
  }
  s->k.n = nu;
}

// Parameter names, for a reader of the kernel: what the buffers its
// launches bind to an argument are called in common, as p_NAME. Checkpoint
// keys keep their shared trailing components after the last block index
// (double_blocks.0.img_attn.qkv.weight and double_blocks.1.img_attn.qkv.weight:
// p_img_attn_qkv_weight); the output is p_out, an intermediate p_tmpN, and
// buffers with nothing in common p_inN.
static int trailing_common(const char *a, const char *b) {  // bytes of a's suffix of whole components that b ends with too
  size_t la = strlen(a), lb = strlen(b), n = 0;
  while (n < la && n < lb && a[la - 1 - n] == b[lb - 1 - n]) n++;
  while (n > 0 && !((n == la || a[la - n - 1] == '.') && (n == lb || b[lb - n - 1] == '.'))) n--;
  return (int)n;
}

static void param_names(Schedule *s) {
  for (int u = 0; u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    for (int a = 0; a < k->args.n; a++) {
      const char *first = NULL;
      int common = -1;  // bytes of first's common suffix
      for (int i = 0; i < s->l.n && common != 0; i++) {
        if (s->l.v[i].kernel != u) continue;
        const char *nm = s->bufs.v[s->l.v[i].args.v[a].buf].name;
        if (!nm) common = 0, first = NULL;
        else if (!first) first = nm, common = (int)strlen(nm);
        else {
          int c = trailing_common(first, nm);
          if (c < common) common = c;
        }
      }
      char base[48];
      if (a == 0) snprintf(base, sizeof base, "out");
      else if (!first) snprintf(base, sizeof base, "tmp%d", a);
      else if (common <= 0) snprintf(base, sizeof base, "in%d", a);
      else {
        const char *t = first + strlen(first) - common, *cut = t;
        for (const char *p = t; *p; p += strcspn(p, ".") + (p[strcspn(p, ".")] == '.')) {  // past the last all-digit component
          size_t len = strcspn(p, ".");
          if (len && strspn(p, "0123456789") == len && p[len]) cut = p + len + 1;
        }
        size_t n = 0;
        for (const char *p = cut; *p && n + 1 < 40; p++) base[n++] = isalnum((unsigned char)*p) ? *p : '_';
        base[n] = 0;
      }
      snprintf(k->args.v[a].name, sizeof k->args.v[a].name, "p_%.40s", base);
      for (int b = 0; b < a; b++)  // two arguments of one name: the later one numbered
        if (!strcmp(k->args.v[b].name, k->args.v[a].name)) {
          snprintf(k->args.v[a].name, sizeof k->args.v[a].name, "p_%.36s_%d", base, a % 1000);  // (MAXARGS is far below)
          break;
        }
    }
  }
}

// Names from the (optimized) shapes; a name shared by different unique
// kernels gets n1, n2, ... in order.
void schedule_names(Schedule *s) {
  for (int u = 0; u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    kernel_rename(k);
    int clash = 0;
    for (int v = 0; v < u; v++) {
      const char *o = s->k.v[v].name;
      size_t n = strlen(k->name);
      if (!strncmp(o, k->name, n) && (o[n] == 0 || (o[n] == 'n' && o[n + 1] >= '0' && o[n + 1] <= '9'))) clash++;
    }
    if (clash) snprintf(k->name + strlen(k->name), sizeof k->name - strlen(k->name), "n%d", clash);
  }
}

// Liveness over launches, then first-fit offsets in one arena.
typedef struct { uint64_t off, size; } Block;

static void plan_memory(Schedule *s, bool reuse) {
  for (int i = 0; i < s->l.n; i++) {
    Launch *k = &s->l.v[i];
    for (int a = 0; a < k->args.n; a++) {
      SBuf *b = &s->bufs.v[k->args.v[a].buf];
      if (a == 0 && b->first < 0) b->first = i;
      b->last = i;
    }
  }
  VEC(Block) used = {0};
  uint64_t peak = 0;
  s->naive_bytes = 0;
  for (int i = 0; i < s->l.n; i++) {
    SBuf *b = &s->bufs.v[s->l.v[i].args.v[0].buf];
    if (b->first == i) {
      uint64_t size = (b->bytes + 511) & ~(uint64_t)511, off = 0;  // 512: OpenCL sub-buffer alignment on NVIDIA
      s->naive_bytes += size;
      // first fit: the lowest offset not overlapping any live block (kept sorted)
      int at = 0;
      for (; at < used.n; at++) {
        if (off + size <= used.v[at].off) break;
        if (used.v[at].off + used.v[at].size > off) off = used.v[at].off + used.v[at].size;
      }
      vec_push(used, ((Block){0, 0}));
      memmove(&used.v[at + 1], &used.v[at], sizeof(Block) * (size_t)(used.n - 1 - at));
      used.v[at] = (Block){off, size};
      b->offset = off;
      if (off + size > peak) peak = off + size;
    }
    // free what this launch read last (outputs stay to the end)
    for (int j = 0; j < s->bufs.n; j++) {
      SBuf *x = &s->bufs.v[j];
      if (!reuse || x->last != i || x->kind != RT_TEMP || x->first < 0) continue;
      for (int u = 0; u < used.n; u++)
        if (used.v[u].off == x->offset) {
          memmove(&used.v[u], &used.v[u + 1], sizeof(Block) * (size_t)(used.n - u - 1));
          used.n--;
          break;
        }
    }
  }
  free(used.v);
  s->arena_bytes = peak;
}

int schedule_build(Ctx *c, Schedule *s) {
  Graph *g = &c->g;
  int nn = g->nodes.n;
  Sched S = {.c = c, .g = g, .s = s};
  if (!s->tile_n) s->tile_n = s->target->tile_n;
  S.live = xcalloc((size_t)nn, sizeof *S.live);
  S.nuse = xcalloc((size_t)nn, sizeof *S.nuse);
  S.consumer = xcalloc((size_t)nn, sizeof *S.consumer);
  S.buf_of = xcalloc((size_t)nn, sizeof *S.buf_of);
  S.stamp = xcalloc((size_t)nn, sizeof *S.stamp);
  S.inner = xcalloc((size_t)nn, sizeof *S.inner);
  S.chain = xcalloc((size_t)nn, sizeof *S.chain);
  S.attn_of = xcalloc((size_t)nn, sizeof *S.attn_of);
  for (int i = 0; i < nn; i++) S.buf_of[i] = -1, S.attn_of[i] = -1;
  for (int i = 0; i < g->outs.n; i++) S.live[g->outs.v[i].node] = true;
  for (int i = nn - 1; i >= 0; i--) {
    if (!S.live[i]) continue;
    for (int k = 0; k < 3 && g->nodes.v[i].src[k] >= 0; k++) {
      int src = g->nodes.v[i].src[k];
      S.live[src] = true;
      S.nuse[src]++;
      S.consumer[src] = i;
    }
  }
  // model buffers first, in declaration order
  for (int i = 0; i < g->bufs.n; i++)
    if (S.live[g->bufs.v[i].node]) add_buf(&S, g->bufs.v[i].node, buf_rt_kind[g->bufs.v[i].kind], g->bufs.v[i].name);
  // a gather's table is read at rows only the data knows: realized (a parameter
  // already is); ids that are an input are checked by the binary (IdCheck)
  for (int i = 0; i < nn; i++) {
    Node *x = &g->nodes.v[i];
    if (!S.live[i] || x->op != OP_GATHER) continue;
    if (S.buf_of[x->src[0]] < 0) add_buf(&S, x->src[0], RT_TEMP, NULL);
    int t = graph_below_views(g, x->src[0]), d = graph_below_views(g, x->src[1]);
    if (NODE(&S, d)->op != OP_LOAD || g->bufs.v[NODE(&S, d)->buf].kind != BUF_INPUT) continue;
    IdCheck q = {S.buf_of[d], NODE(&S, x->src[0])->shape.d[0], "a computed table", x->loc};
    if (NODE(&S, t)->op == OP_LOAD) q.table = arena_printf(&c->arena, "'%s'", g->bufs.v[NODE(&S, t)->buf].name);
    bool dup = false;
    for (int j = 0; j < s->ids.n; j++) dup |= s->ids.v[j].buf == q.buf && s->ids.v[j].rows <= q.rows;
    if (!dup) vec_push(s->ids, q);
  }
  bool *is_out = xcalloc((size_t)nn, sizeof *is_out);
  for (int i = 0; i < g->outs.n; i++) is_out[g->outs.v[i].node] = true;
  // attention first: its scores, max, sums and probabilities are never realized
  // The fused attention's blocks (query rows x key steps in shared memory,
  // barriers between the steps) are shaped for a GPU or tensor-core tiles;
  // where a block is a CPU work-item's register tile (tile_n below 64), the
  // attention stays unfused: its products are GEMMs the CPU rules vectorize
  // (RVEC, VEC), its softmax row reductions likewise. A target of one
  // work-item per group (C) has no block to share its tiles either.
  if (s->tile_n >= 64 && s->target->max_threads > 1) find_attention(&S, is_out);
  mark_chains(&S, is_out);
  // the broadcast rule, for every reduce (an attention's: its q, k, v operands only)
  for (int i = 0; i < nn; i++) {
    if (!S.live[i] || op_kind[g->nodes.v[i].op] != K_REDUCE || S.inner[i]) continue;
    S.stamp_now++;
    mark_broadcast(&S, g->nodes.v[i].src[0], matmul_reduce(&S, i));
  }
  for (int a = 0; a < S.attn.n; a++) {
    const int ops[3] = {S.attn.v[a].q, S.attn.v[a].k, S.attn.v[a].v};
    for (int o = 0; o < 3; o++) {
      // from below the operand's own broadcast over the other side's rows: the kernel
      // loads each row once (what it computes in its loads is inner, never realized)
      int r = ops[o];
      while (NODE(&S, r)->op == OP_CAST || NODE(&S, r)->op == OP_EXPAND || NODE(&S, r)->op == OP_RESHAPE) r = NODE(&S, r)->src[0];
      S.stamp_now++, mark_broadcast(&S, r, false);
    }
  }
  // each reduce, or the end of its single-consumer chain of same-size
  // reshapes and elementwise ops (never into a node realized already or on
  // another reduce's chain: one kernel computes one reduce)
  int *owner = xcalloc((size_t)nn, sizeof *owner);
  for (int i = 0; i < nn; i++) owner[i] = -1;
  for (int i = 0; i < nn; i++) {
    if (!S.live[i] || op_kind[g->nodes.v[i].op] != K_REDUCE) continue;
    if (S.attn_of[i] >= 0) {  // the fused attention stores at its own end
      int end = S.attn.v[S.attn_of[i]].end;
      for (int n = S.consumer[i]; end != i; n = S.consumer[n]) {
        owner[n] = i;
        if (n == end) break;
      }
      if (S.buf_of[end] < 0) add_buf(&S, end, RT_TEMP, NULL);
      continue;
    }
    if (S.inner[i]) continue;
    int end = i;
    while (!is_out[end] && S.nuse[end] == 1) {
      int next = S.consumer[end];
      Node *y = &g->nodes.v[next];
      if (!(is_elementwise(y->op) || y->op == OP_RESHAPE) || owner[next] >= 0) break;
      end = next;
      owner[end] = i;
      if (S.buf_of[next] >= 0) break;  // a broadcast value: it becomes this kernel's store
    }
    // reshapes at the chain's end are the readers' views, not its store: a
    // convolution read by GroupNorm as [groups, C/groups*H*W] keeps its own
    // [C, H, W] iteration space (rows along W for vectors and register tiles)
    while (end != i && g->nodes.v[end].op == OP_RESHAPE && S.buf_of[end] < 0 && !is_out[end])
      owner[end] = -1, end = g->nodes.v[end].src[0];
    // a chain ending in an exact widening cast (bf16/f16 -> f32: linear's
    // cast back to f32 for the next op) stores the narrow value: the readers
    // apply the cast on load, and the buffer is half the size
    Node *e = &g->nodes.v[end];
    if (end != i && e->op == OP_CAST && e->dt == DT_F32 && S.buf_of[end] < 0 && !is_out[end]) {
      int src_dt = g->nodes.v[e->src[0]].dt;
      if (src_dt == DT_BF16 || src_dt == DT_F16) owner[end] = -1, end = e->src[0];
    }
    if (S.buf_of[end] < 0) add_buf(&S, end, RT_TEMP, NULL);
  }
  // outputs (a loaded tensor as an output still gets a copy kernel)
  for (int i = 0; i < g->outs.n; i++) {
    int n = g->outs.v[i].node;
    if (S.buf_of[n] >= 0 && s->bufs.v[S.buf_of[n]].kind == RT_TEMP) {
      s->bufs.v[S.buf_of[n]].kind = RT_OUTPUT;
      s->bufs.v[S.buf_of[n]].name = g->outs.v[i].name;
    } else if (S.buf_of[n] < 0) {
      add_buf(&S, n, RT_OUTPUT, g->outs.v[i].name);
    } else {
      diag_error(c, g->outs.v[i].loc, -1, "output '%s' is an input or parameter as is; compute something from it", g->outs.v[i].name);
    }
  }
  free(is_out);
  free(owner);
  bound_inlining(&S);
  // one kernel per realized computed node, in graph (topological) order
  int *attn_end = xcalloc((size_t)nn, sizeof *attn_end);
  for (int i = 0; i < nn; i++) attn_end[i] = -1;
  for (int a = 0; a < S.attn.n; a++) attn_end[S.attn.v[a].end] = a;
  for (int i = 0; i < nn; i++) {
    if (S.buf_of[i] < 0 || op_kind[g->nodes.v[i].op] == K_LOAD) continue;
    if (attn_end[i] >= 0) make_attn_kernel(&S, &S.attn.v[attn_end[i]]);
    else make_kernel(&S, i);
  }
  free(attn_end);
  dedup(s);
  param_names(s);
  schedule_names(s);
  plan_memory(s, !c->no_reuse);
  free(S.live);
  free(S.nuse);
  free(S.consumer);
  free(S.buf_of);
  free(S.stamp);
  free(S.inner);
  free(S.chain);
  free(S.attn_of);
  free(S.attn.v);
  return c->nerrors ? -1 : 0;
}

static const char *kind_name(int kind) {
  static const char *const n[] = {"input", "param", "output", "temp", "const"};  // by RT_*
  return n[kind];
}

void schedule_dump(Ctx *c, Schedule *s, FILE *out) {
  char sh[160], where[256];
  int nparam = 0, ninput = 0;
  uint64_t pbytes = 0;
  for (int i = 0; i < s->bufs.n; i++) {
    SBuf *b = &s->bufs.v[i];
    if (b->kind == RT_PARAM) nparam++, pbytes += b->bytes;
    if (b->kind == RT_INPUT) ninput++;
  }
  fprintf(out, "# %d launches, %d unique kernels, %d buffers (%d params, %.1f MiB; %d inputs)\n", s->l.n, s->k.n,
          s->bufs.n, nparam, (double)pbytes / 1048576.0, ninput);
  fprintf(out, "# activation arena %.1f MiB (%.1f MiB without reuse)\n", (double)s->arena_bytes / 1048576.0,
          (double)s->naive_bytes / 1048576.0);
  for (int i = 0; i < s->bufs.n; i++) {
    SBuf *b = &s->bufs.v[i];
    if (b->kind == RT_PARAM || b->kind == RT_INPUT) continue;
    shape_str(&b->shape, sh, sizeof sh);
    fprintf(out, "buf%d %s %s%s", i, kind_name(b->kind), dtype_name[b->dt], sh);
    if (b->name) fprintf(out, " %s", b->name);
    fprintf(out, " @%llu live %d..%d\n", (unsigned long long)b->offset, b->first, b->last);
  }
  for (int i = 0; i < s->l.n; i++) {
    Launch *k = &s->l.v[i];
    fprintf(out, "%4d %-36s k%d buf%d <-", i, s->k.v[k->kernel].name, k->kernel, k->args.v[0].buf);
    for (int a = 1; a < k->args.n; a++) {
      SBuf *b = &s->bufs.v[k->args.v[a].buf];
      if (b->name) fprintf(out, " %s", b->name);
      else fprintf(out, " buf%d", k->args.v[a].buf);
    }
    fprintf(out, "  # %s\n", diag_where(c, k->loc, where, sizeof where));
  }
}

void kernels_dump(Ctx *c, Schedule *s, FILE *out) {
  char line[4096], where[256];
  for (int u = 0; u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    int sites = 0;
    for (int i = 0; i < s->l.n; i++) sites += s->l.v[i].kernel == u;
    fprintf(out, "kernel %d %s  dims [", u, k->name);
    for (int i = 0; i < k->naxes; i++) fprintf(out, "%s%lld%s", i ? "," : "", (long long)k->dims[i], axis_role_mark[k->role[i]]);
    fprintf(out, "]  %d launch%s  first at %s\n", sites, sites == 1 ? "" : "es", diag_where(c, k->loc, where, sizeof where));
    for (int a = 0; a < k->args.n; a++) {
      SBuf *b = &s->bufs.v[k->args.v[a].buf];
      shape_str(&b->shape, line, sizeof line);
      fprintf(out, "  data%d %s %s%s\n", a, a ? "in " : "out", dtype_name[b->dt], line);
    }
    if (k->nopts) {
      fprintf(out, "  opts");
      for (int i = 0; i < k->nopts; i++) opt_str(&k->opts[i], line, sizeof line), fprintf(out, " %s", line);
      fprintf(out, "  (from %s)\n", k->orig_name);
    }
    if (k->kind == KERNEL_ATTN) {
      fprintf(out, "  attention: q k%d, k k%d, v k%d; logits %s %.9g; p cast", k->at.q, k->at.k, k->at.v,
              k->at.scale_op == OP_DIV ? "/" : "*", k->at.scale);
      for (int i = 0; i < k->at.npcast; i++) fprintf(out, " %s", dtype_name[k->at.pcast[i]]);
      fprintf(out, "%s; out cast", k->at.npcast ? "" : " none");
      for (int i = 0; i < k->at.nocast; i++) fprintf(out, " %s", dtype_name[k->at.ocast[i]]);
      fprintf(out, "%s\n", k->at.nocast ? "" : " none");
    }
    for (int i = 0; i < k->ops.n; i++) {
      kop_text(k, i, line, sizeof line);
      fprintf(out, "%s\n", line);
    }
  }
}

void schedule_free(Schedule *s) {
  for (int i = 0; i < s->k.n; i++) kernel_free(&s->k.v[i]);
  for (int i = 0; i < s->l.n; i++) free(s->l.v[i].args.v);
  for (int u = 0; s->tuned && u < s->k.n; u++) free(s->tuned[u].cands.v);
  free(s->tuned);
  free(s->k.v);
  free(s->l.v);
  free(s->bufs.v);
  free(s->ids.v);
  memset(s, 0, sizeof *s);
}
