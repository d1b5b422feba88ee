// schedule.c — graph → kernels.
//
// Which nodes get their own buffer (are "realized"):
//   - inputs and parameters (no kernel), and the model's outputs;
//   - every reduce, except that elementwise consumers reading it through a
//     same-size reshape fuse into its store (bias, gate, residual into a matmul):
//     the last node of that chain is realized instead;
//   - a computed value that a reduce reads through a broadcast (the matmul's
//     x[..., 1, K] expanded over N) — recomputing it per output would repeat work.
// Everything else is inlined into the kernels that read it. Each kernel is an
// expression DAG over symbolic indices of its iteration space; adjacent axes
// that every access sees as one are merged; kernels with equal text share a
// source; intermediate buffers share an arena by liveness.
#include "fluxcc.h"

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
} Sched;

static Node *NODE(Sched *S, int id) { return &S->g->nodes.v[id]; }
static bool is_elementwise(int op) { return op_kind[op] == K_UNARY || op_kind[op] == K_BINARY || op_kind[op] == K_TERNARY; }

// A broadcast that really repeats data: some axis goes from 1 to more.
static bool expands(Sched *S, Node *x) {
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

// Walk a reduce's input; realize computed values found under a broadcast.
// An explicit stack (node * 2 + under_expand): graphs can be deep.
static void mark_broadcast(Sched *S, int root) {
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
    // under a broadcast, casts and views are applied on load; what they read is realized
    if (under_expand && x->op != OP_CAST && op_kind[x->op] != K_MOVE && !cheap(S, id)) {
      add_buf(S, id, RT_TEMP, NULL);
      continue;
    }
    bool below = under_expand || (x->op == OP_EXPAND && expands(S, x));
    for (int k = 2; k >= 0; k--)
      if (x->src[k] >= 0) vec_push(st, x->src[k] * 2 + below);
  }
  free(st.v);
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
    if (!S->live[i] || S->buf_of[i] >= 0 || op_kind[x->op] == K_LOAD) continue;
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
  vec_push(b->k->args, ((KArg){buf, b->S->s->bufs.v[buf].dt}));
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

static int build_memo(KB *b, int id, const int *idx, int valid) {
  int n = NODE(b->S, id)->shape.n;
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

static int build(KB *b, int id, const int *idx, int valid) {
  Sched *S = b->S;
  Sym *sy = &b->k->sym;
  Node *x = NODE(S, id);
  KOp o = {.op = x->op, .dt = x->dt, .src = {-1, -1, -1}, .slot = -1, .idx = -1, .valid = -1};
  int sidx[MAXDIM];
  if (S->buf_of[id] >= 0 && id != b->k->node) {  // realized elsewhere: read it
    o.op = KO_LOAD;
    o.slot = arg_slot(b, S->buf_of[id]);
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
  case K_REDUCE: {
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

// Every index and mask of the kernel, rebuilt in a new variable space.
void kernel_reindex(Kernel *k, Sym *to, const int *map) {
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->idx >= 0) o->idx = sym_translate(&k->sym, o->idx, to, map);
    if (o->valid >= 0) o->valid = sym_translate(&k->sym, o->valid, to, map);
  }
  sym_free(&k->sym);
  k->sym = *to;
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

static void count_work(Sched *S, Kernel *k) {
  int64_t outs = 1, reds = 1;
  for (int i = 0; i < k->nout; i++) outs *= k->dims[i];
  for (int i = k->nout; i < k->nout + k->nred; i++) reds *= k->dims[i];
  int64_t f = 0;
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    bool alu = o->op < OP_COUNT && op_kind[o->op] != K_CONST && o->op != OP_CAST;
    if (alu || o->op == KO_ACC) f += o->in_loop || o->op == KO_ACC ? outs * reds : outs;
  }
  k->flops = f;
  k->bytes = 0;
  for (int i = 0; i < k->args.n; i++) k->bytes += (int64_t)S->s->bufs.v[k->args.v[i].buf].bytes;
}

static void make_kernel(Sched *S, int node) {
  Schedule *s = S->s;
  Kernel k = {0};
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
  vec_push(k.args, ((KArg){out_buf, s->bufs.v[out_buf].dt}));
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
  k.tc_a = k.tc_b = k.tc_dt = -1;
  k.naxes = k.nout + k.nred;
  for (int i = 0; i < k.naxes; i++) k.role[i] = i < k.nout ? AX_GLOBAL : AX_REDUCE, k.orig_dims[i] = k.dims[i];
  kernel_rename(&k);
  memcpy(k.orig_name, k.name, sizeof k.name);
  count_work(S, &k);
  vec_push(s->k, k);
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
                   : o->op == KO_PADSEL ? "padsel" : "store";
  size_t w = (size_t)snprintf(buf, n, "  k%d = %s %s%s", i, name, dtype_name[o->dt], o->in_loop ? " loop" : "");
  for (int j = 0; j < 3 && o->src[j] >= 0; j++) w += (size_t)snprintf(buf + w, n - w, " k%d", o->src[j]);
  if (o->op == KO_ACC) w += (size_t)snprintf(buf + w, n - w, " %s", op_name[(int)o->c]);
  if (o->slot >= 0) w += (size_t)snprintf(buf + w, n - w, " data%d[%s]", o->slot, ix);
  else if (o->idx >= 0) w += (size_t)snprintf(buf + w, n - w, " %s", ix);
  if (o->valid >= 0) w += (size_t)snprintf(buf + w, n - w, " if %s", va);
  if (o->op == OP_CONST) snprintf(buf + w, n - w, " %.9g", o->c);
}

static uint64_t kernel_hash(Kernel *k) {
  char line[4096];
  uint64_t h = fnv_bytes(FNV_SEED, k->name, strlen(k->name));
  for (int i = 0; i < k->args.n; i++) h = fnv_mix(h, (uint64_t)k->args.v[i].dt);
  for (int i = 0; i < k->ops.n; i++) {
    kop_text(k, i, line, sizeof line);
    h = fnv_bytes(h, line, strlen(line));
  }
  return h;
}

// Unique kernels: launches whose kernels print the same share one.
static void dedup(Schedule *s) {
  for (int i = 0; i < s->k.n; i++) {
    Kernel *k = &s->k.v[i];
    k->hash = kernel_hash(k);
    k->unique = -1;
    for (int u = 0; u < s->uniq.n && k->unique < 0; u++)
      if (s->k.v[s->uniq.v[u]].hash == k->hash) k->unique = u;
    if (k->unique >= 0) continue;
    k->unique = s->uniq.n;
    vec_push(s->uniq, i);
  }
}

// Names from the (optimized) shapes; a name shared by different unique
// kernels gets n1, n2, ... in order. Every launch takes its kernel's name.
void schedule_names(Schedule *s) {
  for (int u = 0; u < s->uniq.n; u++) {
    Kernel *k = &s->k.v[s->uniq.v[u]];
    kernel_rename(k);
    int clash = 0;
    for (int v = 0; v < u; v++) {
      const char *o = s->k.v[s->uniq.v[v]].name;
      size_t n = strlen(k->name);
      if (!strncmp(o, k->name, n) && (o[n] == 0 || (o[n] == 'n' && o[n + 1] >= '0' && o[n + 1] <= '9'))) clash++;
    }
    if (clash) snprintf(k->name + strlen(k->name), sizeof k->name - strlen(k->name), "n%d", clash);
  }
  for (int i = 0; i < s->k.n; i++) memcpy(s->k.v[i].name, s->k.v[s->uniq.v[s->k.v[i].unique]].name, sizeof s->k.v[i].name);
}

// Liveness over launches, then first-fit offsets in one arena.
typedef struct { uint64_t off, size; } Block;

static void plan_memory(Schedule *s, bool reuse) {
  for (int i = 0; i < s->k.n; i++) {
    Kernel *k = &s->k.v[i];
    for (int a = 0; a < k->args.n; a++) {
      SBuf *b = &s->bufs.v[k->args.v[a].buf];
      if (a == 0 && b->first < 0) b->first = i;
      b->last = i;
    }
  }
  VEC(Block) used = {0};
  uint64_t peak = 0;
  s->naive_bytes = 0;
  for (int i = 0; i < s->k.n; i++) {
    SBuf *b = &s->bufs.v[s->k.v[i].args.v[0].buf];
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
  S.live = xcalloc((size_t)nn, sizeof *S.live);
  S.nuse = xcalloc((size_t)nn, sizeof *S.nuse);
  S.consumer = xcalloc((size_t)nn, sizeof *S.consumer);
  S.buf_of = xcalloc((size_t)nn, sizeof *S.buf_of);
  S.stamp = xcalloc((size_t)nn, sizeof *S.stamp);
  for (int i = 0; i < nn; i++) S.buf_of[i] = -1;
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
    if (S.live[g->bufs.v[i].node]) add_buf(&S, g->bufs.v[i].node, g->bufs.v[i].is_param ? RT_PARAM : RT_INPUT, g->bufs.v[i].name);
  bool *is_out = xcalloc((size_t)nn, sizeof *is_out);
  for (int i = 0; i < g->outs.n; i++) is_out[g->outs.v[i].node] = true;
  // the broadcast rule, for every reduce
  for (int i = 0; i < nn; i++) {
    if (!S.live[i] || op_kind[g->nodes.v[i].op] != K_REDUCE) continue;
    S.stamp_now++;
    mark_broadcast(&S, g->nodes.v[i].src[0]);
  }
  // each reduce, or the end of its single-consumer chain of same-size
  // reshapes and elementwise ops (never into a node realized already or on
  // another reduce's chain: one kernel computes one reduce)
  int *owner = xcalloc((size_t)nn, sizeof *owner);
  for (int i = 0; i < nn; i++) owner[i] = -1;
  for (int i = 0; i < nn; i++) {
    if (!S.live[i] || op_kind[g->nodes.v[i].op] != K_REDUCE) continue;
    int end = i;
    while (!is_out[end] && S.nuse[end] == 1) {
      int next = S.consumer[end];
      Node *y = &g->nodes.v[next];
      if (!(is_elementwise(y->op) || y->op == OP_RESHAPE) || owner[next] >= 0) break;
      end = next;
      owner[end] = i;
      if (S.buf_of[next] >= 0) break;  // a broadcast value: it becomes this kernel's store
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
  for (int i = 0; i < nn; i++)
    if (S.buf_of[i] >= 0 && op_kind[g->nodes.v[i].op] != K_LOAD) make_kernel(&S, i);
  dedup(s);
  schedule_names(s);
  plan_memory(s, !c->no_reuse);
  free(S.live);
  free(S.nuse);
  free(S.consumer);
  free(S.buf_of);
  free(S.stamp);
  return c->nerrors ? -1 : 0;
}

static const char *kind_name(int kind) {
  static const char *const n[] = {"input", "param", "output", "temp"};
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
  fprintf(out, "# %d launches, %d unique kernels, %d buffers (%d params, %.1f MiB; %d inputs)\n", s->k.n, s->uniq.n,
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
  for (int i = 0; i < s->k.n; i++) {
    Kernel *k = &s->k.v[i];
    fprintf(out, "%4d %-36s k%d buf%d <-", i, k->name, k->unique, k->args.v[0].buf);
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
  for (int u = 0; u < s->uniq.n; u++) {
    Kernel *k = &s->k.v[s->uniq.v[u]];
    int sites = 0;
    for (int i = 0; i < s->k.n; i++) sites += s->k.v[i].unique == u;
    static const char *const role_mark[] = {"", "l", "g", "r", "u", "up", "tm", "tn", "tk"};
    fprintf(out, "kernel %d %s  dims [", u, k->name);
    for (int i = 0; i < k->naxes; i++) fprintf(out, "%s%lld%s", i ? "," : "", (long long)k->dims[i], role_mark[k->role[i]]);
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
    for (int i = 0; i < k->ops.n; i++) {
      kop_text(k, i, line, sizeof line);
      fprintf(out, "%s\n", line);
    }
  }
}

void kernel_copy(Kernel *dst, const Kernel *src) {
  *dst = *src;
  dst->ops.v = xcalloc((size_t)src->ops.n + 1, sizeof *src->ops.v);
  dst->args.v = xcalloc((size_t)src->args.n + 1, sizeof *src->args.v);
  memcpy(dst->ops.v, src->ops.v, (size_t)src->ops.n * sizeof *src->ops.v);
  memcpy(dst->args.v, src->args.v, (size_t)src->args.n * sizeof *src->args.v);
  dst->ops.cap = src->ops.n, dst->args.cap = src->args.n;
  sym_copy(&dst->sym, &src->sym);
}

void kernel_free(Kernel *k) {
  free(k->ops.v);
  free(k->args.v);
  sym_free(&k->sym);
  memset(k, 0, sizeof *k);
}

void schedule_free(Schedule *s) {
  for (int i = 0; i < s->k.n; i++) kernel_free(&s->k.v[i]);
  for (int u = 0; s->tuned && u < s->uniq.n; u++) free(s->tuned[u].cands.v);
  free(s->tuned);
  free(s->k.v);
  free(s->bufs.v);
  free(s->uniq.v);
  memset(s, 0, sizeof *s);
}
