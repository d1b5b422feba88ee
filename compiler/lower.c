// lower.c — a kernel's expression DAG → a linear list of uops:
//   parameters; block and thread indices;
//   values that depend on no reduce variable (once per upcast combination);
//   the accumulators and the reduce loops (unrolled and upcast copies inside);
//   for a GROUP: partial sums through shared memory, a barrier, the combine;
//   then what reads the result, and the stores.
// Upcast and unroll axes are not loops: each combination of their values is
// substituted into the index expressions, and identical uops are shared.
// A vector axis (VEC) is an upcast whose lanes are lowered together into
// vector uops (vw lanes) where they line up (vinstance), else packed.
// Index arithmetic stays symbolic (symbolic.c) until the renderer prints it.
#include "fluxcc.h"

#include <stdlib.h>
#include <string.h>

static const char *const uop_name[] = {
#define X(u) #u,
  UOPS(X)
#undef X
};

typedef struct {
  Kernel *k;
  Program *p;
  int32_t *hash;            // uop CSE table
  int hcap;
  int nv, nacc;             // name counters
  int closed_lo, closed_hi; // uops of a closed loop body: out of scope, not to be shared
} Low;

static uint64_t uop_hash(const UOp *u) {
  uint64_t h = FNV_SEED;
#define MIX(v) (h = fnv_mix(h, (uint64_t)(v)))
  MIX(u->op); MIX(u->dt); MIX(u->vw); MIX(u->alu); MIX(u->src[0]); MIX(u->src[1]); MIX(u->src[2]);
  MIX(u->arg); MIX(u->arg2); MIX(u->arg3); MIX(u->rows); MIX(u->stride);
  uint64_t f;
  memcpy(&f, &u->f, 8);
  MIX(f);
#undef MIX
  return h;
}

static bool uop_eq(const UOp *a, const UOp *b) {
  return a->op == b->op && a->dt == b->dt && a->vw == b->vw && a->alu == b->alu && !memcmp(a->src, b->src, sizeof a->src) && a->arg == b->arg &&
         a->arg2 == b->arg2 && a->arg3 == b->arg3 && !memcmp(&a->f, &b->f, sizeof a->f) && a->rows == b->rows && a->stride == b->stride;
}

static int emit_raw(Low *L, UOp u) {
  vec_push(L->p->u, u);
  return L->p->u.n - 1;
}

// values (loads, arithmetic, constants) are shared when identical
static int emit_value(Low *L, UOp u, const char *prefix) {
  if (2 * (L->p->u.n + 1) >= L->hcap) {
    int cap = L->hcap ? 2 * L->hcap : 256;
    while (cap <= 2 * (L->p->u.n + 1)) cap *= 2;  // uops emitted unhashed (accumulators) count too: never a full table
    int32_t *t = xcalloc((size_t)cap, sizeof *t);
    memset(t, 0xff, sizeof *t * (size_t)cap);
    for (int i = 0; i < L->p->u.n; i++) {
      uint64_t h = uop_hash(&L->p->u.v[i]) & (uint64_t)(cap - 1);
      while (t[h] >= 0) h = (h + 1) & (uint64_t)(cap - 1);
      t[h] = i;
    }
    free(L->hash);
    L->hash = t;
    L->hcap = cap;
  }
  uint64_t h = uop_hash(&u) & (uint64_t)(L->hcap - 1);
  for (; L->hash[h] >= 0; h = (h + 1) & (uint64_t)(L->hcap - 1))
    if (uop_eq(&L->p->u.v[L->hash[h]], &u) && !(L->hash[h] >= L->closed_lo && L->hash[h] < L->closed_hi)) return L->hash[h];
  snprintf(u.name, sizeof u.name, "%s%d", prefix, L->nv++);
  L->hash[h] = L->p->u.n;
  return emit_raw(L, u);
}

// Put a set of axes on the grid (block indices) or in the block (thread
// indices). Up to three get a dimension each, the last on x; more, or sizes
// past the per-dimension limits, fold into fewer dimensions with / and %.
static void map_axes(Low *L, const int *axes, int n, int thread, uint32_t *out) {
  Kernel *k = L->k;
  int64_t lim[3] = {thread ? 1024 : 0x7fffffff, thread ? 1024 : 65535, thread ? 64 : 65535};
  int dim_of[MAXAXES];
  int64_t size[3] = {1, 1, 1}, prod = 1;
  for (int i = 0; i < n; i++) prod *= k->dims[axes[i]];
  for (int i = 0; i < n; i++) dim_of[i] = n <= 3 ? n - 1 - i : (i < n - 2 ? 2 : n - 1 - i);
  for (int i = 0; i < n; i++) size[dim_of[i]] *= k->dims[axes[i]];
  if (size[0] > lim[0] || size[1] > lim[1] || size[2] > lim[2]) {
    for (int i = 0; i < n; i++) dim_of[i] = 0;
    size[0] = prod, size[1] = size[2] = 1;
  }
  if (size[0] > lim[0]) diag_fatal("kernel %s: %lld %s exceed the limit", k->name, (long long)size[0], thread ? "threads" : "blocks");
  for (int d = 0; d < 3; d++) out[d] = (uint32_t)size[d];
  for (int i = 0; i < n; i++) {
    int64_t div = 1;
    for (int j = i + 1; j < n; j++)
      if (dim_of[j] == dim_of[i]) div *= k->dims[axes[j]];
    bool alone = size[dim_of[i]] == k->dims[axes[i]];
    UOp u = {.op = U_SPECIAL, .alu = (int16_t)thread, .src = {-1, -1, -1}, .arg = dim_of[i], .arg2 = alone ? 1 : div,
             .arg3 = alone ? 0 : (int32_t)k->dims[axes[i]]};
    axis_name(k, axes[i], u.name, sizeof u.name);
    emit_raw(L, u);
  }
}

// the values of the upcast/unroll axes for combination c (mixed radix)
static void combo_map(Low *L, const int *axes, int n, int64_t c, int *map) {
  Kernel *k = L->k;
  for (int i = n - 1; i >= 0; i--) {
    map[axes[i]] = sym_const(&k->sym, c % k->dims[axes[i]]);
    c /= k->dims[axes[i]];
  }
}

// KOp i under a variable substitution, not emitted: 0 and its uop in *u
// (prefix: its name's), or 1 and a value it is without code in *id (an exact
// cast, a padding select that always passes). val[] holds this
// combination's values of earlier ops.
static int describe(Low *L, int i, const int *map, const int *val, UOp *out, const char **prefix, int *id) {
  Kernel *k = L->k;
  KOp *o = &k->ops.v[i];
  Sym *sy = &k->sym;
  if (o->op == OP_CAST && (o->dt == DT_F32 || (k->ops.v[o->src[0]].dt == DT_BOOL && o->dt != DT_BOOL)))
    return *id = val[o->src[0]], 1;  // exact in a float register: no code
  UOp u = {.op = U_ALU, .dt = (uint8_t)o->dt, .alu = (int16_t)o->op, .src = {-1, -1, -1}, .arg = -1, .arg2 = -1};
  UOp zero = {.op = U_FCONST, .dt = DT_F32, .src = {-1, -1, -1}, .arg = -1, .arg2 = -1, .f = 0};
  for (int j = 0; j < 3; j++)
    if (o->src[j] >= 0) u.src[j] = val[o->src[j]];
  if (o->idx >= 0) u.arg = sym_translate(sy, o->idx, sy, map);
  if (o->valid >= 0) u.arg2 = sym_translate(sy, o->valid, sy, map);
  *prefix = "alu";
  if (o->op == KO_LOAD || o->op == KO_GATHER) {  // a gather: its row's id is src[0]
    u.op = U_LOAD, u.arg3 = o->slot, u.dt = (uint8_t)k->args.v[o->slot].dt, *prefix = "val";
    if (o->op == KO_GATHER) u.rows = o->rows, u.stride = o->stride;
    if (u.arg2 >= 0 && sy->n.v[u.arg2].kind == S_CONST) {
      if (sy->n.v[u.arg2].c == 0) return *out = zero, *prefix = "cst", 0;  // never valid: the value is 0
      u.arg2 = -1;
    }
  } else if (o->op == OP_CONST) {
    u.op = U_FCONST, u.f = o->c, u.arg = u.arg2 = -1, *prefix = "cst";
  } else if (o->op == KO_IDX) {
    u.op = U_INDEXF;
  } else if (o->op == KO_PADSEL && sy->n.v[u.arg2].kind == S_CONST) {
    if (sy->n.v[u.arg2].c) return *id = val[o->src[0]], 1;
    return *out = zero, *prefix = "cst", 0;
  }
  *out = u;
  return 0;
}

static int instance(Low *L, int i, const int *map, const int *val) {
  UOp u;
  const char *prefix;
  int id;
  return describe(L, i, map, val, &u, &prefix, &id) ? id : emit_value(L, u, prefix);
}

// Lane l of a value: the value itself when it is a scalar.
static int lane(Low *L, int v, int l) {
  UOp *x = &L->p->u.v[v];
  if (!x->vw) return v;
  if (x->op == U_PACK) return L->p->extra.v[x->arg + l];
  return emit_value(L, (UOp){.op = U_GEP, .dt = x->dt, .src = {v, -1, -1}, .arg = l}, "lane");
}

// A vector of n scalars (one when they are all the same value)
static int pack(Low *L, const int *v, int n, int dt) {
  bool same = true;
  for (int l = 1; l < n; l++) same &= v[l] == v[0];
  if (same) return v[0];
  for (int i = L->p->u.n - 1; i >= 0; i--) {  // the same vector already packed, in scope
    UOp *x = &L->p->u.v[i];
    if (x->op == U_PACK && x->vw == n && !(i >= L->closed_lo && i < L->closed_hi) &&
        !memcmp(&L->p->extra.v[x->arg], v, sizeof *v * (size_t)n))
      return i;
  }
  UOp u = {.op = U_PACK, .dt = (uint8_t)dt, .vw = (uint8_t)n, .src = {-1, -1, -1}, .arg = L->p->extra.n};
  for (int l = 0; l < n; l++) vec_push(L->p->extra, v[l]);
  snprintf(u.name, sizeof u.name, "vec%d", L->nv++);
  return emit_raw(L, u);
}

// does idx[l] step by 1 from idx[0] (consecutive addresses)?
static bool consecutive(Sym *sy, const int *idx, int n) {
  for (int l = 1; l < n; l++)
    if (idx[l] != sym_add(sy, idx[0], sym_const(sy, l))) return false;
  return true;
}

static bool vector_dt(int dt) { return dt == DT_F32 || dt == DT_BF16 || dt == DT_F16 || dt == DT_F8E4M3; }

// KOp i for the n lanes of a vector axis (maps[l]: lane l's substitution).
// The same uop in every lane is one scalar, or one vector op when a source
// is a vector; a load at consecutive addresses is one vector load; anything
// else is computed lane by lane and packed.
static int vinstance(Low *L, int i, int (*maps)[MAXAXES + 1], const int *val, int n) {
  if (n <= 1) return instance(L, i, maps[0], val);
  UOp u[16];
  const char *prefix[16];
  int id[16], kind[16] = {0}, idx[16];
  bool same = true;
  for (int l = 0; l < n; l++) {
    kind[l] = describe(L, i, maps[l], val, &u[l], &prefix[l], &id[l]);
    same &= kind[l] == kind[0] && (kind[0] ? id[l] == id[0] : uop_eq(&u[l], &u[0]));
  }
  if (same && kind[0]) return id[0];
  // a gather whose id is a vector reads a row per lane: lane by lane
  bool row_lanes = !kind[0] && u[0].op == U_LOAD && u[0].src[0] >= 0 && L->p->u.v[u[0].src[0]].vw;
  same &= !row_lanes;
  if (same) {
    for (int j = 0; j < 3; j++)
      if (u[0].src[j] >= 0 && L->p->u.v[u[0].src[j]].vw) u[0].vw = (uint8_t)n;
    return emit_value(L, u[0], prefix[0]);
  }
  bool load = true;
  for (int l = 0; l < n; l++) {
    load &= !kind[l] && u[l].op == U_LOAD && u[l].arg2 == u[0].arg2 && u[l].arg3 == u[0].arg3 && u[l].src[0] == u[0].src[0] && !row_lanes;
    idx[l] = u[l].arg;
  }
  if (load && vector_dt(u[0].dt) && consecutive(&L->k->sym, idx, n)) {
    u[0].vw = (uint8_t)n;
    return emit_value(L, u[0], prefix[0]);
  }
  int lanes[16];
  for (int l = 0; l < n; l++) {
    if (kind[l]) {
      lanes[l] = lane(L, id[l], l);
      continue;
    }
    for (int j = 0; j < 3; j++)
      if (u[l].src[j] >= 0) u[l].src[j] = lane(L, u[l].src[j], l);
    lanes[l] = emit_value(L, u[l], prefix[l]);
  }
  return pack(L, lanes, n, L->k->ops.v[i].dt);
}

// Which ops depend on a reduce variable (in `redmask`) — they run inside the
// reduce — and which on the reduce's result (after it). Returns the ACC op.
static int classify(Kernel *k, uint32_t redmask, bool *in_red, bool *after) {
  Sym *sy = &k->sym;
  int ki = -1;
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->op == KO_ACC) ki = i;
    after[i] = o->op == KO_ACC;
    in_red[i] = (o->idx >= 0 && (sy->n.v[o->idx].vars & redmask)) || (o->valid >= 0 && (sy->n.v[o->valid].vars & redmask));
    for (int j = 0; j < 3; j++)
      if (o->src[j] >= 0) {
        after[i] |= after[o->src[j]];
        if (o->op != KO_ACC) in_red[i] |= in_red[o->src[j]];
      }
  }
  return ki;
}

// The kernel's store under one substitution: its index in *ix and validity
// in *sv (-1 always); false when the mask never passes (PADTO's padding).
static bool store_at(Low *L, const int *map, int *ix, int *sv) {
  Kernel *k = L->k;
  Sym *sy = &k->sym;
  KOp *st = &k->ops.v[k->ops.n - 1];
  *sv = st->valid >= 0 ? sym_translate(sy, st->valid, sy, map) : -1;
  *ix = sym_translate(sy, st->idx, sy, map);
  if (*sv >= 0 && sy->n.v[*sv].kind == S_CONST) {
    if (sy->n.v[*sv].c == 0) return false;
    *sv = -1;
  }
  return true;
}

static void emit_store(Low *L, const int *map, int value) {
  int ix, sv;
  if (store_at(L, map, &ix, &sv))
    emit_raw(L, (UOp){.op = U_STORE, .dt = (uint8_t)L->k->args.v[0].dt, .src = {value, -1, -1}, .arg = ix, .arg2 = sv, .arg3 = 0});
}

// the n lanes' stores: one vector store at consecutive addresses under one mask, else lane by lane
static void vstore(Low *L, int (*maps)[MAXAXES + 1], int value, int n) {
  int ix[16], sv[16], dt = L->k->args.v[0].dt;
  bool vec = n > 1 && vector_dt(dt);
  for (int l = 0; l < n; l++) vec &= store_at(L, maps[l], &ix[l], &sv[l]) && sv[l] == sv[0];
  if (vec && consecutive(&L->k->sym, ix, n)) {
    emit_raw(L, (UOp){.op = U_STORE, .dt = (uint8_t)dt, .vw = (uint8_t)n, .src = {value, -1, -1}, .arg = ix[0], .arg2 = sv[0]});
    return;
  }
  for (int l = 0; l < n; l++) emit_store(L, maps[l], lane(L, value, l));
}

static void mark_subtree(Kernel *k, int i, bool *in) {
  if (in[i]) return;
  in[i] = true;
  for (int j = 0; j < 3; j++)
    if (k->ops.v[i].src[j] >= 0 && k->ops.v[i].op != KO_ACC) mark_subtree(k, k->ops.v[i].src[j], in);
}

// A tensor-core kernel: each warp computes 16x8 tiles of the output with
// mma.sync m16n8k16 (one per upcast combination), accumulating over k in
// steps of 16; LOCAL axes beyond the lanes are more warps per block. The
// lane's g = lane/4 and t = lane%4 pick its fragment elements (PTX ISA):
//   A a_j: row g + 8*((j>>1)&1), col 2t + (j&1) + 8*(j>>2)      (j < 8)
//   B b_j: row 2t + (j&1) + 8*(j>>1), col g                      (j < 4)
//   C c_i: row g + 8*(i>>1),        col 2t + (i&1)               (i < 4)
// With STAGE, the block first copies the A and B elements of this k step
// that any of its warps needs into shared memory (every thread a share),
// and the fragments are read from there.
static void frag_map(Kernel *k, int *map, int am, int an, int ak, int g, int t, int which, int j) {
  Sym *sy = &k->sym;
  int zero = sym_const(sy, 0);
  if (k->tc_dt == DT_F32 && which == 0) {  // tf32 m16n8k8 A a_j: row g + 8*(j&1), col t + 4*(j>>1)
    map[am] = sym_add(sy, g, sym_const(sy, 8 * (j & 1)));
    map[ak] = sym_add(sy, t, sym_const(sy, 4 * (j >> 1)));
    map[an] = zero;
  } else if (k->tc_dt == DT_F32 && which == 1) {  // tf32 B b_j: row t + 4*j, col g
    map[an] = g;
    map[ak] = sym_add(sy, t, sym_const(sy, 4 * j));
    map[am] = zero;
  } else if (which == 0) {  // A
    map[am] = sym_add(sy, g, sym_const(sy, 8 * ((j >> 1) & 1)));
    map[ak] = sym_add(sy, sym_mul(sy, t, 2), sym_const(sy, (j & 1) + 8 * (j >> 2)));
    map[an] = zero;
  } else if (which == 1) {  // B
    map[an] = g;
    map[ak] = sym_add(sy, sym_mul(sy, t, 2), sym_const(sy, (j & 1) + 8 * (j >> 1)));
    map[am] = zero;
  } else {  // C
    map[am] = sym_add(sy, g, sym_const(sy, 8 * (j >> 1)));
    map[an] = sym_add(sy, sym_mul(sy, t, 2), sym_const(sy, j & 1));
    map[ak] = zero;
  }
}

// Stage one operand: the tile is indexed by the operand's block-varying
// axes (vars), mixed radix, the last fastest. Returns the tile's size.
static int64_t tile_vars(Kernel *k, uint32_t used, int lane_axis, int *vars, int *nv) {
  int64_t size = 1;
  *nv = 0;
  for (int a = 0; a < k->naxes; a++) {
    int r = k->role[a];
    bool block_varying = (r == AX_LOCAL && a != lane_axis) || r == AX_UPCAST || r == AX_TCM || r == AX_TCN || r == AX_TCK;
    if (block_varying && ((used >> a) & 1)) vars[(*nv)++] = a, size *= k->dims[a];
  }
  return size;
}

static uint32_t subtree_vars(Kernel *k, const bool *in) {
  uint32_t m = 0;
  for (int i = 0; i < k->ops.n; i++) {
    if (!in[i]) continue;
    KOp *o = &k->ops.v[i];
    if (o->idx >= 0) m |= k->sym.n.v[o->idx].vars;
    if (o->valid >= 0) m |= k->sym.n.v[o->valid].vars;
  }
  return m;
}

// cp.async copies 16-byte chunks: an operand qualifies when it is a plain
// load of the mma's dtype (no mask; not fp8, converted on the way) whose
// index is linear, steps by 1 along k, and moves in multiples of 8 elements
// along everything else.
static int copyable_load(Kernel *k, int operand, const bool *in, int ak) {
  int ld = k->ops.v[operand].src[0];
  KOp *l = &k->ops.v[ld];
  if (k->ops.v[operand].op != OP_CAST || l->op != KO_LOAD || l->valid >= 0 || l->dt != k->tc_dt) return -1;
  for (int i = 0; i < k->ops.n; i++)
    if (in[i] && i != operand && i != ld) return -1;
  Sym *sy = &k->sym;
  for (int a = 0; a < k->naxes; a++) {
    bool lin;
    int64_t cf = sym_coef(sy, l->idx, a, &lin);
    if (!lin || (a == ak ? cf != 1 : cf % 8 != 0)) return -1;
  }
  SNode *x = &sy->n.v[l->idx];
  int64_t c0 = x->kind == S_SUM || x->kind == S_CONST ? x->c : 0;
  return c0 % 8 ? -1 : ld;
}

// one k step of an operand's tile into buffer `buf`: 8 elements per copy,
// chunk c = tid + T*r, its first element placed by the tile's mixed radix
static void emit_copies(Low *L, const int *map, int ld, const int *vars, int nvars, int64_t size, int64_t T, int tid,
                        int red_axis, int step, int base) {
  Kernel *k = L->k;
  Sym *sy = &k->sym;
  int64_t chunks = size / 8;
  for (int64_t r = 0; r * T < chunks; r++) {
    int c = sym_add(sy, tid, sym_const(sy, T * r)), e0 = sym_mul(sy, c, 8), m2[MAXAXES + 1];
    bool partial = (r + 1) * T > chunks;  // fewer chunks than threads left: some threads sit this one out
    memcpy(m2, map, sizeof m2);
    int64_t stride = 1;
    for (int i = nvars - 1; i >= 0; i--) {
      m2[vars[i]] = sym_mod(sy, sym_div(sy, e0, stride), k->dims[vars[i]]);
      stride *= k->dims[vars[i]];
    }
    m2[red_axis] = step;
    KOp *l = &k->ops.v[ld];
    if (partial) emit_raw(L, (UOp){.op = U_IF, .dt = DT_F32, .src = {-1, -1, -1}, .arg = sym_lt(sy, c, chunks)});
    emit_raw(L, (UOp){.op = U_COPY, .dt = (uint8_t)k->tc_dt, .src = {-1, -1, -1}, .arg = sym_add(sy, base, e0),
                      .arg2 = sym_translate(sy, l->idx, sy, m2), .arg3 = l->slot});
    if (partial) emit_raw(L, (UOp){.op = U_ENDIF, .dt = DT_F32, .src = {-1, -1, -1}});
  }
}

// TC's warp number in the block (*wid) and thread number (*tid), the last
// local axis being the lanes; returns the block's threads
static int64_t thread_ids(Kernel *k, const int *loc, int nl, int *wid, int *tid) {
  Sym *sy = &k->sym;
  int64_t T = 1;
  *wid = sym_const(sy, 0), *tid = sym_const(sy, 0);
  for (int i = 0; i < nl; i++) {
    *tid = sym_add(sy, sym_mul(sy, *tid, k->dims[loc[i]]), sym_var(sy, loc[i]));
    if (i < nl - 1) *wid = sym_add(sy, sym_mul(sy, *wid, k->dims[loc[i]]), sym_var(sy, loc[i]));
    T *= k->dims[loc[i]];
  }
  return T;
}

// TC's f32 staging (st32): every thread computes its share of each staged
// tile, element e = tid + T*r, into shared memory, then a barrier
static void lower_tc_stage32(Low *L, const int *map, const int *val0, int *vl, const bool *const *in_ab, const int *const *vars_ab,
                             const int *nvars_ab, const int64_t *size, const int64_t *off32, const bool *st32, int64_t T, int tid) {
  Kernel *k = L->k;
  Sym *sy = &k->sym;
  int n = k->ops.n;
  // every thread copies its share of both tiles: element e = tid + T*r
  for (int w = 0; w < 2; w++) {
    if (!st32[w]) continue;
    const int *vars = vars_ab[w];
    int nvars = nvars_ab[w], src = w ? k->tc_b : k->tc_a;
    const bool *in = in_ab[w];
    for (int64_t r = 0; r < size[w] / T; r++) {
      int e = sym_add(sy, tid, sym_const(sy, T * r)), m2[MAXAXES + 1];
      memcpy(m2, map, sizeof m2);
      int64_t stride = 1;
      for (int i = nvars - 1; i >= 0; i--) {
        m2[vars[i]] = sym_mod(sy, sym_div(sy, e, stride), k->dims[vars[i]]);
        stride *= k->dims[vars[i]];
      }
      memcpy(vl, val0, sizeof(int) * (size_t)n);
      for (int i = 0; i < n; i++)
        if (in[i]) vl[i] = instance(L, i, m2, vl);
      emit_raw(L, (UOp){.op = U_SSTORE, .dt = DT_F32, .alu = 2, .src = {vl[src], -1, -1},
                        .arg = sym_add(sy, e, sym_const(sy, off32[w]))});
    }
  }
  emit_raw(L, (UOp){.op = U_BARRIER, .dt = DT_F32, .src = {-1, -1, -1}});
}

// --weights fp8: accumulator r times the operand's row scale (k->tc_scale)
// at this C element: the scale is constant over the reduce, so it is
// evaluated with every reduce axis at 0 (where k's padding mask, if its
// loads carry one, passes); val: the values computed before the loop.
static int tc_scaled(Low *L, const int *map, const int *val, const int *red, int nr, int r) {
  Kernel *k = L->k;
  int n = k->ops.n, m0[MAXAXES + 1], *vl = xcalloc((size_t)n, sizeof *vl);
  bool *in = xcalloc((size_t)n, sizeof *in);
  memcpy(m0, map, sizeof m0);
  for (int i = 0; i < nr; i++) m0[red[i]] = sym_const(&k->sym, 0);
  memcpy(vl, val, sizeof *vl * (size_t)n);
  mark_subtree(k, k->tc_scale, in);
  for (int i = 0; i < n; i++)
    if (in[i] && vl[i] < 0) vl[i] = instance(L, i, m0, vl);
  UOp u = {.op = U_ALU, .dt = DT_F32, .alu = OP_MUL, .src = {r, vl[k->tc_scale], -1}, .arg = -1, .arg2 = -1};
  free(vl), free(in);
  return emit_value(L, u, "alu");
}

// TC's results: each accumulator (upcast combination x C element), scaled
// (fp8) and rounded to the reduce's dtype, the ops after the reduce, and the store
static void lower_tc_results(Low *L, int *map, int **val, const int *acc, int64_t ncomb, int ki, const bool *in_red, const bool *after,
                             const int *up, int nup, const int *red, int nr, int am, int an, int ak, int g, int t) {
  Kernel *k = L->k;
  int n = k->ops.n;
  int rdt = k->ops.v[ki].dt;
  for (int64_t c = 0; c < ncomb; c++) {
    combo_map(L, up, nup, c / 4, map);
    frag_map(k, map, am, an, ak, g, t, 2, (int)(c % 4));
    int r = acc[c];
    if (k->tc_scale >= 0) r = tc_scaled(L, map, val[c], red, nr, r);
    if (rdt == DT_BF16 || rdt == DT_F16) {
      UOp rv = {.op = U_ROUND, .dt = (uint8_t)rdt, .src = {r, -1, -1}};
      snprintf(rv.name, sizeof rv.name, "alu%d", L->nv++);
      r = emit_raw(L, rv);
    }
    val[c][ki] = r;
    for (int j = 0; j < n; j++) {
      KOp *o = &k->ops.v[j];
      if (o->op == KO_ACC || o->op == KO_STORE || in_red[j] || !after[j]) continue;
      val[c][j] = instance(L, j, map, val[c]);
    }
    emit_store(L, map, val[c][k->ops.v[n - 1].src[0]]);
  }
}

static void lower_tc(Low *L, Program *p) {
  Kernel *k = L->k;
  Sym *sy = &k->sym;
  int glob[MAXAXES] = {0}, ng = 0, loc[MAXAXES] = {0}, nl = 0, red[MAXAXES] = {0}, nr = 0, up[MAXAXES] = {0}, nup = 0;
  int am = -1, an = -1, ak = -1, lane_axis = -1;
  for (int a = 0; a < k->naxes; a++) {
    switch (k->role[a]) {
    case AX_GLOBAL: glob[ng++] = a; break;
    case AX_LOCAL: loc[nl++] = a; break;
    case AX_REDUCE: red[nr++] = a; break;
    case AX_UPCAST: up[nup++] = a; break;
    case AX_TCM: am = a; break;
    case AX_TCN: an = a; break;
    case AX_TCK: ak = a; break;
    }
  }
  lane_axis = loc[nl - 1];  // the lanes: the last local axis, on threadIdx.x
  map_axes(L, glob, ng, 0, p->global);
  if (ng == 0) p->global[0] = p->global[1] = p->global[2] = 1;
  map_axes(L, loc, nl, 1, p->local);
  int lane = sym_var(sy, lane_axis), g = sym_div(sy, lane, 4), t = sym_mod(sy, lane, 4);
  int wid, tid;
  int64_t T = thread_ids(k, loc, nl, &wid, &tid);
  int n = k->ops.n;
  bool *in_red = xcalloc((size_t)n, sizeof *in_red), *after = xcalloc((size_t)n, sizeof *after);
  bool *in_a = xcalloc((size_t)n, sizeof *in_a), *in_b = xcalloc((size_t)n, sizeof *in_b);
  uint32_t redmask = (1u << ak);
  for (int r = 0; r < nr; r++) redmask |= 1u << red[r];
  int ki = classify(k, redmask, in_red, after);
  mark_subtree(k, k->tc_a, in_a);
  mark_subtree(k, k->tc_b, in_b);
  int64_t nu = 1;
  for (int i = 0; i < nup; i++) nu *= k->dims[up[i]];
  int64_t ncomb = nu * 4;  // upcast combination x C element
  int map[MAXAXES + 1];
  for (int a = 0; a < k->naxes; a++) map[a] = sym_var(sy, a);
  int **val = xcalloc((size_t)ncomb, sizeof *val), *acc = xcalloc((size_t)ncomb, sizeof *acc);
  for (int64_t c = 0; c < ncomb; c++) {
    val[c] = xcalloc((size_t)n, sizeof **val);
    for (int j = 0; j < n; j++) val[c][j] = -1;
    combo_map(L, up, nup, c / 4, map);
    frag_map(k, map, am, an, ak, g, t, 2, (int)(c % 4));
    for (int j = 0; j < n; j++)
      if (!in_red[j] && !after[j] && k->ops.v[j].op != KO_STORE && k->ops.v[j].op != KO_ACC) val[c][j] = instance(L, j, map, val[c]);
  }
  // Staging, per operand (w: 0 A, 1 B): a plain bf16/f16 load that steps by
  // 1 along k goes to a double-buffered 16-bit tile filled by asynchronous
  // copies (st16); anything else (a masked tile, a GEMM prologue's computed
  // A) is computed into an f32 tile (st32), which must divide among the
  // block's threads. An st16 operand needs the other one staged too, so that
  // every fragment of a k step is read after the same barriers.
  int va[MAXAXES], nva = 0, vb[MAXAXES], nvb = 0;
  int64_t sa = tile_vars(k, subtree_vars(k, in_a), lane_axis, va, &nva), sb = tile_vars(k, subtree_vars(k, in_b), lane_axis, vb, &nvb);
  int ld16[2] = {copyable_load(k, k->tc_a, in_a, ak), copyable_load(k, k->tc_b, in_b, ak)};
  int64_t size[2] = {sa, sb};
  bool can16[2], divides[2], st16[2], st32[2];
  for (int w = 0; w < 2; w++) {
    can16[w] = k->stage && nr == 1 && ld16[w] >= 0 && size[w] % 8 == 0 && k->tc_dt != DT_F32;
    divides[w] = k->stage && size[w] % T == 0;
  }
  for (int w = 0; w < 2; w++) st16[w] = can16[w] && (can16[1 - w] || divides[1 - w]);
  for (int w = 0; w < 2; w++) st32[w] = !st16[w] && divides[w] && (st16[1 - w] || divides[1 - w]);
  bool async = st16[0] || st16[1], stage = st32[0] || st32[1];
  // offsets of the tiles in their arrays: A first; s16: one buffer of the pair
  int64_t off16[2] = {0, st16[0] ? sa : 0}, off32[2] = {0, st32[0] ? sa : 0};
  int64_t s16 = (st16[0] ? sa : 0) + (st16[1] ? sb : 0), s32 = (st32[0] ? sa : 0) + (st32[1] ? sb : 0);
  emit_raw(L, (UOp){.op = U_SMEM, .dt = DT_F32, .alu = 1, .src = {-1, -1, -1}, .arg = 384 * (T / 32)});
  if (stage) emit_raw(L, (UOp){.op = U_SMEM, .dt = DT_F32, .alu = 2, .src = {-1, -1, -1}, .arg = s32});
  if (async) emit_raw(L, (UOp){.op = U_SMEM, .dt = (uint8_t)k->tc_dt, .alu = 3, .src = {-1, -1, -1}, .arg = 2 * s16});
  for (int64_t c = 0; c < ncomb; c++) {
    UOp d = {.op = U_DEFACC, .dt = DT_F32, .alu = OP_RSUM, .src = {-1, -1, -1}};
    snprintf(d.name, sizeof d.name, "acc%d", L->nacc++);
    acc[c] = emit_raw(L, d);
  }
  if (async) {  // the first k step, before the loop
    for (int w = 0; w < 2; w++)
      if (st16[w]) emit_copies(L, map, ld16[w], w ? vb : va, w ? nvb : nva, size[w], T, tid, red[0], sym_const(sy, 0), sym_const(sy, off16[w]));
    emit_raw(L, (UOp){.op = U_COMMIT, .dt = DT_F32, .src = {-1, -1, -1}});
  }
  int loop_start = p->u.n;
  for (int r = 0; r < nr; r++) {
    UOp u = {.op = U_RANGE, .arg = k->dims[red[r]], .src = {-1, -1, -1}};
    axis_name(k, red[r], u.name, sizeof u.name);
    emit_raw(L, u);
  }
  int *vl = xcalloc((size_t)n, sizeof *vl);
  int cur = -1;  // async: this step's buffer offset
  if (async) {
    // start copying the next step into the other buffer, then wait for this one
    int rv = sym_var(sy, red[0]), next = sym_add(sy, rv, sym_const(sy, 1));
    int nbase = sym_mul(sy, sym_mod(sy, next, 2), s16);
    emit_raw(L, (UOp){.op = U_IF, .dt = DT_F32, .src = {-1, -1, -1}, .arg = sym_lt(sy, next, k->dims[red[0]])});
    for (int w = 0; w < 2; w++)
      if (st16[w]) emit_copies(L, map, ld16[w], w ? vb : va, w ? nvb : nva, size[w], T, tid, red[0], next, sym_add(sy, nbase, sym_const(sy, off16[w])));
    emit_raw(L, (UOp){.op = U_ENDIF, .dt = DT_F32, .src = {-1, -1, -1}});
    emit_raw(L, (UOp){.op = U_COMMIT, .dt = DT_F32, .src = {-1, -1, -1}});  // an empty group on the last step
    emit_raw(L, (UOp){.op = U_WAIT, .dt = DT_F32, .src = {-1, -1, -1}});    // all but the newest group are done
    emit_raw(L, (UOp){.op = U_BARRIER, .dt = DT_F32, .src = {-1, -1, -1}});
    cur = sym_mul(sy, sym_mod(sy, rv, 2), s16);
  }
  if (stage) {
    const bool *in_ab[2] = {in_a, in_b};
    const int *vars_ab[2] = {va, vb}, nvars_ab[2] = {nva, nvb};
    lower_tc_stage32(L, map, val[0], vl, in_ab, vars_ab, nvars_ab, size, off32, st32, T, tid);
  }
  for (int64_t u = 0; u < nu; u++) {
    int frag[12];
    combo_map(L, up, nup, u, map);
    int nfa = k->tc_dt == DT_F32 ? 4 : 8, nfb = k->tc_dt == DT_F32 ? 2 : 4;  // tf32 takes half as many
    for (int w = 0; w < 2; w++)
      for (int j = 0; j < (w ? nfb : nfa); j++) {
        frag_map(k, map, am, an, ak, g, t, w, j);
        if (st16[w] || st32[w]) {  // from the staged tile: the same mixed radix at this fragment's position
          int *vars = w ? vb : va, nvars = w ? nvb : nva, ix = sym_const(sy, st16[w] ? off16[w] : off32[w]);
          if (st16[w]) ix = sym_add(sy, ix, cur);
          int64_t stride = 1;
          for (int i = nvars - 1; i >= 0; i--) {
            ix = sym_add(sy, ix, sym_mul(sy, map[vars[i]], stride));
            stride *= k->dims[vars[i]];
          }
          UOp ld = {.op = U_SLOAD, .dt = st16[w] ? (uint8_t)k->tc_dt : DT_F32, .alu = st16[w] ? 3 : 2, .src = {-1, -1, -1}, .arg = ix};
          frag[w * 8 + j] = emit_value(L, ld, "frg");
        } else {
          memcpy(vl, val[0], sizeof(int) * (size_t)n);
          for (int i = 0; i < n; i++)
            if (w ? in_b[i] : in_a[i]) vl[i] = instance(L, i, map, vl);
          frag[w * 8 + j] = vl[w ? k->tc_b : k->tc_a];
        }
      }
    for (int j = nfa; j < 8; j++) frag[j] = frag[0];  // unused slots (tf32)
    for (int j = nfb; j < 4; j++) frag[8 + j] = frag[8];
    int at = p->extra.n;
    for (int j = 0; j < 12; j++) vec_push(p->extra, frag[j]);
    for (int i = 0; i < 4; i++) vec_push(p->extra, acc[u * 4 + i]);
    vec_push(p->extra, g);
    vec_push(p->extra, t);
    vec_push(p->extra, wid);
    emit_raw(L, (UOp){.op = U_WMMA, .dt = (uint8_t)k->tc_dt, .src = {-1, -1, -1}, .arg = at});
  }
  if (stage || async) emit_raw(L, (UOp){.op = U_BARRIER, .dt = DT_F32, .src = {-1, -1, -1}});  // before the next step overwrites
  free(vl);
  for (int r = 0; r < nr; r++) emit_raw(L, (UOp){.op = U_ENDRANGE, .dt = DT_F32, .src = {-1, -1, -1}});
  L->closed_lo = loop_start, L->closed_hi = p->u.n;
  lower_tc_results(L, map, val, acc, ncomb, ki, in_red, after, up, nup, red, nr, am, an, ak, g, t);
  for (int64_t c = 0; c < ncomb; c++) free(val[c]);
  free(val), free(acc), free(in_red), free(after), free(in_a), free(in_b);
}

bool uop_is_value(int op) {
  return op == U_LOAD || op == U_ALU || op == U_FCONST || op == U_INDEXF || op == U_ROUND || op == U_SLOAD || op == U_GEP || op == U_PACK;
}

// Drop values nothing uses: a constant mask can make a computed value dead
// in some upcast combinations (it is built before the mask folds).
static void dce(Program *p) {
  int n = p->u.n;
  bool *live = xcalloc((size_t)n + 1, sizeof *live);
  int *to = xcalloc((size_t)n + 1, sizeof *to);
  for (int i = n - 1; i >= 0; i--) {
    UOp *u = &p->u.v[i];
    if (!uop_is_value(u->op)) live[i] = true;
    if (!live[i]) continue;
    for (int j = 0; j < 3; j++)
      if (u->src[j] >= 0) live[u->src[j]] = true;
    if (u->op == U_WMMA)
      for (int j = 0; j < 16; j++) live[p->extra.v[u->arg + j]] = true;
    if (u->op == U_PACK)
      for (int j = 0; j < u->vw; j++) live[p->extra.v[u->arg + j]] = true;
  }
  int m = 0;
  for (int i = 0; i < n; i++) {
    to[i] = m;
    if (live[i]) p->u.v[m++] = p->u.v[i];
  }
  p->u.n = m;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < 3; j++)
      if (p->u.v[i].src[j] >= 0) p->u.v[i].src[j] = to[p->u.v[i].src[j]];
  for (int i = 0; i < m; i++) {
    int nx = p->u.v[i].op == U_WMMA ? 16 : p->u.v[i].op == U_PACK ? p->u.v[i].vw : 0;
    for (int j = 0; j < nx; j++) p->extra.v[p->u.v[i].arg + j] = to[p->extra.v[p->u.v[i].arg + j]];
  }
  free(live);
  free(to);
}

// GROUP: each thread's partial results to shared memory (slot thread *
// upcasts + u, threads ordered locals then group), and the group's first
// thread combines them in a loop into result[v] (an IF the caller closes
// after the stores)
static void lower_group_combine(Low *L, const int *loc, int nl, const int *grp, int ngr, int64_t nup_combos, int N, int rop,
                                const int *acc, int *result, int64_t nvec) {
  Kernel *k = L->k;
  Program *p = L->p;
  int nvars = k->naxes;
  // partials to shared memory: slot (thread * upcasts + u), threads ordered locals then group
  int64_t G = 1, T = (int64_t)p->local[0] * p->local[1] * p->local[2];
  for (int i = 0; i < ngr; i++) G *= k->dims[grp[i]];
  p->smem = T * nup_combos;
  emit_raw(L, (UOp){.op = U_SMEM, .dt = DT_F32, .src = {-1, -1, -1}, .arg = p->smem});
  Sym *sy = &k->sym;
  int tlin = sym_const(sy, 0), glin = sym_const(sy, 0), llin = sym_const(sy, 0);
  for (int i = 0; i < nl; i++) tlin = sym_add(sy, sym_mul(sy, tlin, k->dims[loc[i]]), sym_var(sy, loc[i]));
  for (int i = 0; i < ngr; i++) glin = sym_add(sy, sym_mul(sy, glin, k->dims[grp[i]]), sym_var(sy, grp[i]));
  for (int i = 0; i < nl; i++)
    if (k->role[loc[i]] == AX_LOCAL) llin = sym_add(sy, sym_mul(sy, llin, k->dims[loc[i]]), sym_var(sy, loc[i]));
  // tlin orders all thread axes as they are; make it (llin * G + glin) so a group's partials are adjacent
  tlin = sym_add(sy, sym_mul(sy, llin, G), glin);
  for (int64_t u = 0; u < nup_combos; u++)
    emit_raw(L, (UOp){.op = U_SSTORE, .dt = DT_F32, .src = {lane(L, acc[u / N], (int)(u % N)), -1, -1},
                       .arg = sym_add(sy, sym_mul(sy, tlin, nup_combos), sym_const(sy, u))});
  emit_raw(L, (UOp){.op = U_BARRIER, .dt = DT_F32, .src = {-1, -1, -1}});
  emit_raw(L, (UOp){.op = U_IF, .dt = DT_F32, .src = {-1, -1, -1}, .arg = sym_lt(sy, glin, 1)});
  // the combine loop's variable: one past the axes
  sy->var_size[nvars] = G;
  int gv = sym_var(sy, nvars);
  int *part = xcalloc((size_t)nup_combos, sizeof *part);
  for (int64_t u = 0; u < nup_combos; u++) {
    UOp d = {.op = U_DEFACC, .dt = DT_F32, .alu = (int16_t)rop, .src = {-1, -1, -1}};
    snprintf(d.name, sizeof d.name, "acc%d", L->nacc++);
    part[u] = emit_raw(L, d);
  }
  UOp rg = {.op = U_RANGE, .arg = G, .src = {-1, -1, -1}};
  snprintf(rg.name, sizeof rg.name, "gi");
  emit_raw(L, rg);
  for (int64_t u = 0; u < nup_combos; u++) {
    UOp ld = {.op = U_SLOAD, .dt = DT_F32, .src = {-1, -1, -1},
              .arg = sym_add(sy, sym_mul(sy, sym_add(sy, sym_mul(sy, llin, G), gv), nup_combos), sym_const(sy, u))};
    snprintf(ld.name, sizeof ld.name, "part%d", L->nv++);
    int l = emit_raw(L, ld);
    emit_raw(L, (UOp){.op = U_ACCUM, .dt = DT_F32, .alu = (int16_t)rop, .src = {part[u], l, -1}});
  }
  emit_raw(L, (UOp){.op = U_ENDRANGE, .dt = DT_F32, .src = {-1, -1, -1}});
  for (int64_t v = 0; v < nvec; v++) result[v] = pack(L, part + v * N, N, DT_F32);
  free(part);
}

void lower_kernel(Ctx *c, Schedule *s, Kernel *k, Program *p) {
  (void)c;
  (void)s;
  for (int a = 0; a < k->args.n; a++)  // a kernel made outside a schedule has no parameter names yet
    if (!k->args.v[a].name[0]) snprintf(k->args.v[a].name, sizeof k->args.v[a].name, "data%d", a);
  if (k->kind == KERNEL_ATTN) {  // generated whole by attention.c: only its geometry here
    attn_lower(k, p);
    return;
  }
  memset(p, 0, sizeof *p);
  Low L = {.k = k, .p = p};
  for (int a = 0; a < k->args.n; a++) {
    UOp u = {.op = U_PARAM, .dt = (uint8_t)k->args.v[a].dt, .src = {-1, -1, -1}, .arg = a};
    snprintf(u.name, sizeof u.name, "data%d", a);
    emit_raw(&L, u);
  }
  if (k->tc_dt >= 0) {
    lower_tc(&L, p);
    free(L.hash);
    dce(p);
    return;
  }
  int glob[MAXAXES] = {0}, ng = 0, loc[MAXAXES] = {0}, nl = 0, red[MAXAXES] = {0}, nr = 0, unr[MAXAXES] = {0}, nu = 0;
  int up[MAXAXES] = {0}, nup = 0;
  int grp[MAXAXES], ngr = 0;
  int N = 1;  // lanes: the vector axis' size (it is the last of up[], so a combination's lanes are adjacent)
  uint8_t vw = 0;  // the accumulators' width: N, or 0 (scalars) without a vector axis
  int rv = -1;  // the reduce-vector axis (RVEC): its lanes are reduce steps, added after the loop
  uint32_t redmask = 0;
  for (int a = 0; a < k->naxes; a++) {
    switch (k->role[a]) {
    case AX_GLOBAL: glob[ng++] = a; break;
    case AX_LOCAL: loc[nl++] = a; break;
    case AX_GROUP: loc[nl++] = a, grp[ngr++] = a, redmask |= 1u << a; break;
    case AX_REDUCE: red[nr++] = a, redmask |= 1u << a; break;
    case AX_UNROLL: unr[nu++] = a, redmask |= 1u << a; break;
    case AX_UPCAST: up[nup++] = a; break;
    case AX_VEC: up[nup++] = a, N = (int)k->dims[a], vw = (uint8_t)N; break;
    case AX_RVEC: rv = a, redmask |= 1u << a, N = (int)k->dims[a], vw = (uint8_t)N; break;
    }
  }
  map_axes(&L, glob, ng, 0, p->global);
  map_axes(&L, loc, nl, 1, p->local);
  if (ng == 0) p->global[0] = p->global[1] = p->global[2] = 1;
  if (nl == 0) p->local[0] = p->local[1] = p->local[2] = 1;

  int n = k->ops.n;
  bool *in_red = xcalloc((size_t)n, sizeof *in_red), *after = xcalloc((size_t)n, sizeof *after);
  int ki = classify(k, redmask, in_red, after);
  int64_t nup_combos = 1, nun_combos = 1;
  for (int i = 0; i < nup; i++) nup_combos *= k->dims[up[i]];
  for (int i = 0; i < nu; i++) nun_combos *= k->dims[unr[i]];
  // NO: lanes of the outputs (VEC: N; RVEC: 1, its lanes are reduce steps, in the loop only)
  int NO = rv >= 0 ? 1 : N;
  int64_t nvec = nup_combos / NO;  // upcast combinations of the other axes: one value (a vector of NO lanes) each
  int nvars = k->naxes;
  int maps[16][MAXAXES + 1];  // lane l's substitution
  for (int l = 0; l < N; l++) {
    for (int a = 0; a < nvars; a++) maps[l][a] = a == rv ? sym_const(&k->sym, l) : sym_var(&k->sym, a);
    maps[l][nvars] = -1;
  }
  #define LANE_MAPS(axes, na, c) for (int l = 0; l < N; l++) combo_map(&L, axes, na, (c), maps[l])
  // val[v][i]: value of op i in vector combination v
  int **val = xcalloc((size_t)nvec, sizeof *val);
  for (int64_t v = 0; v < nvec; v++) {
    val[v] = xcalloc((size_t)n, sizeof **val);
    for (int i = 0; i < n; i++) val[v][i] = -1;
  }
  // before the reduce
  for (int64_t v = 0; v < nvec; v++) {
    LANE_MAPS(up, nup, v * NO + l % NO);
    for (int i = 0; i < n; i++)
      if (!in_red[i] && !after[i] && k->ops.v[i].op != KO_STORE && k->ops.v[i].op != KO_ACC) val[v][i] = vinstance(&L, i, maps, val[v], NO);
  }
  int *result = xcalloc((size_t)nvec, sizeof *result);
  if (ki >= 0) {
    int rop = (int)k->ops.v[ki].c;
    int *acc = xcalloc((size_t)nvec, sizeof *acc);
    for (int64_t v = 0; v < nvec; v++) {
      UOp d = {.op = U_DEFACC, .dt = DT_F32, .vw = vw, .alu = (int16_t)rop, .src = {-1, -1, -1}};
      snprintf(d.name, sizeof d.name, "acc%d", L.nacc++);
      acc[v] = emit_raw(&L, d);
    }
    int loop_start = p->u.n;
    for (int r = 0; r < nr; r++) {
      UOp u = {.op = U_RANGE, .arg = k->dims[red[r]], .src = {-1, -1, -1}};
      axis_name(k, red[r], u.name, sizeof u.name);
      emit_raw(&L, u);
    }
    // the loop body: every upcast and unroll combination; each loop level
    // starts a new scope, so values are not shared with the code before it
    int *vloop = xcalloc((size_t)n, sizeof *vloop);
    for (int64_t v = 0; v < nvec; v++) {
      LANE_MAPS(up, nup, v * NO + l % NO);
      for (int64_t r = 0; r < nun_combos; r++) {
        LANE_MAPS(unr, nu, r);
        memcpy(vloop, val[v], sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
          if (in_red[i]) vloop[i] = vinstance(&L, i, maps, vloop, N);
        emit_raw(&L, (UOp){.op = U_ACCUM, .dt = DT_F32, .vw = vw, .alu = (int16_t)rop,
                           .src = {acc[v], vloop[k->ops.v[ki].src[0]], -1}});
      }
    }
    free(vloop);
    for (int r = 0; r < nr; r++) emit_raw(&L, (UOp){.op = U_ENDRANGE, .dt = DT_F32, .src = {-1, -1, -1}});
    if (nr) L.closed_lo = loop_start, L.closed_hi = p->u.n;
    for (int64_t v = 0; v < nvec; v++) result[v] = acc[v];
    for (int64_t v = 0; rv >= 0 && v < nvec; v++) {  // RVEC: the lanes' partial results combined
      result[v] = lane(&L, acc[v], 0);
      for (int l = 1; l < N; l++)
        result[v] = emit_value(&L, (UOp){.op = U_ALU, .dt = DT_F32, .alu = (int16_t)(rop == OP_RMAX ? OP_MAX : OP_ADD), .arg = -1, .arg2 = -1,
                                         .src = {result[v], lane(&L, acc[v], l), -1}}, "alu");
    }
    if (ngr) lower_group_combine(&L, loc, nl, grp, ngr, nup_combos, N, rop, acc, result, nvec);
    free(acc);
    // the reduce's value: rounded to its dtype
    int rdt = k->ops.v[ki].dt;
    for (int64_t v = 0; v < nvec; v++) {
      if (rdt == DT_BF16 || rdt == DT_F16) {
        UOp rv = {.op = U_ROUND, .dt = (uint8_t)rdt, .vw = p->u.v[result[v]].vw, .src = {result[v], -1, -1}};
        snprintf(rv.name, sizeof rv.name, "alu%d", L.nv++);
        result[v] = emit_raw(&L, rv);
      }
      val[v][ki] = result[v];
    }
  }
  // after the reduce, and the stores
  for (int64_t v = 0; v < nvec; v++) {
    LANE_MAPS(up, nup, v * NO + l % NO);
    for (int i = 0; i < n; i++) {
      KOp *o = &k->ops.v[i];
      if (o->op == KO_ACC || o->op == KO_STORE || in_red[i] || !after[i]) continue;
      val[v][i] = vinstance(&L, i, maps, val[v], NO);
    }
    vstore(&L, maps, val[v][k->ops.v[n - 1].src[0]], NO);
  }
  #undef LANE_MAPS
  if (ngr) emit_raw(&L, (UOp){.op = U_ENDIF, .dt = DT_F32, .src = {-1, -1, -1}});
  for (int64_t v = 0; v < nvec; v++) free(val[v]);
  free(val);
  free(result);
  free(in_red);
  free(after);
  free(L.hash);
  dce(p);
}

void uops_dump(Kernel *k, Program *p, FILE *out) {
  const char *vn[MAXAXES + 1];
  char store[MAXAXES + 1][16], ix[2048], va[2048];
  for (int i = 0; i < k->naxes; i++) axis_name(k, i, store[i], sizeof store[i]), vn[i] = store[i];
  vn[k->naxes] = "gi";
  fprintf(out, "  grid [%u,%u,%u] block [%u,%u,%u]\n", p->global[0], p->global[1], p->global[2], p->local[0], p->local[1],
          p->local[2]);
  if (k->kind == KERNEL_ATTN)
    fprintf(out, "  (fused attention: no uops, its text is generated by attention.c; %lld floats of shared memory)\n", (long long)p->smem);
  for (int i = 0; i < p->u.n; i++) {
    UOp *u = &p->u.v[i];
    char ty[16];
    if (u->vw) snprintf(ty, sizeof ty, "%sx%d", dtype_name[u->dt], u->vw);
    else snprintf(ty, sizeof ty, "%s", u->op == U_RANGE || u->op == U_SPECIAL ? "int" : dtype_name[u->dt]);
    fprintf(out, "  %3d %-8s %-5s %-6s", i, uop_name[u->op], ty, u->name);
    if (u->op == U_ALU || u->op == U_DEFACC || u->op == U_ACCUM)
      fprintf(out, " %s", u->alu < OP_COUNT ? op_name[u->alu] : u->alu == KO_PADSEL ? "padsel" : "?");
    if (u->op == U_ALU && u->alu == KO_PADSEL) sym_str(&k->sym, (int)u->arg2, vn, va, sizeof va), fprintf(out, " if %s", va);
    for (int j = 0; j < 3; j++)
      if (u->src[j] >= 0) fprintf(out, " %%%d", u->src[j]);
    switch (u->op) {
    case U_PARAM: fprintf(out, " slot %lld", (long long)u->arg); break;
    case U_SPECIAL:
      fprintf(out, " %s.%c", u->alu ? "thread" : "block", "xyz"[u->arg]);
      if (u->arg3) fprintf(out, " /%lld %%%d", (long long)u->arg2, u->arg3);
      break;
    case U_RANGE: fprintf(out, " 0..%lld", (long long)u->arg); break;
    case U_GEP: fprintf(out, " lane %lld", (long long)u->arg); break;
    case U_PACK:
      for (int j = 0; j < u->vw; j++) fprintf(out, " %%%d", p->extra.v[u->arg + j]);
      break;
    case U_FCONST: fprintf(out, " %.9g", u->f); break;
    case U_SMEM: fprintf(out, " %lld floats%s", (long long)u->arg, u->alu ? " (tensor-core tiles, OpenCL only)" : ""); break;
    case U_WMMA:
      fprintf(out, " m16n8k16 %s A", dtype_name[u->dt]);
      for (int j = 0; j < 16; j++) fprintf(out, "%s%%%d", j == 8 ? " B " : j == 12 ? " C " : " ", p->extra.v[u->arg + j]);
      break;
    case U_LOAD: case U_STORE:
      sym_str(&k->sym, (int)u->arg, vn, ix, sizeof ix);
      fprintf(out, " data%d[%s]", u->arg3, ix);
      if (u->arg2 >= 0) sym_str(&k->sym, (int)u->arg2, vn, va, sizeof va), fprintf(out, " if %s", va);
      break;
    case U_COPY:
      sym_str(&k->sym, (int)u->arg2, vn, ix, sizeof ix);
      sym_str(&k->sym, (int)u->arg, vn, va, sizeof va);
      fprintf(out, " 8 x %s data%d[%s] -> tile[%s]", dtype_name[u->dt], u->arg3, ix, va);
      break;
    case U_SSTORE: case U_SLOAD: case U_IF: case U_INDEXF:
      sym_str(&k->sym, (int)u->arg, vn, ix, sizeof ix);
      fprintf(out, " %s", ix);
      break;
    }
    fprintf(out, "\n");
  }
}

void program_free(Program *p) {
  free(p->u.v);
  free(p->extra.v);
  memset(p, 0, sizeof *p);
}
