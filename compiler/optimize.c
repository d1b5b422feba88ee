// optimize.c — opt actions on a kernel's iteration space (the moves BEAM and
// MCTS search over), and the methods built from them.
//
// Every action splits one axis in two (shift_to) and gives the new piece a
// role: LOCAL (threads of a block), UPCAST (output values per thread, in
// registers), UNROLL (reduce steps unrolled), GROUP (a reduce split across
// threads, combined in shared memory). Index expressions are rewritten with
// the split (v = outer*n + inner), so the kernel computes the same function;
// the lowering gives each role its code. An opt list is data: replaying it on
// the unoptimized kernel rebuilds the same kernel.
#include "fluxcc.h"

#include <stdlib.h>
#include <string.h>

const char *const axis_role_name[] = {
#define X(e, name, mark, var) name,
  AXIS_ROLES(X)
#undef X
};
const char *const axis_role_mark[] = {
#define X(e, name, mark, var) mark,
  AXIS_ROLES(X)
#undef X
};
const char *const axis_role_var[] = {
#define X(e, name, mark, var) var,
  AXIS_ROLES(X)
#undef X
};

#define MAX_UPCAST 256       // registers per thread: product of upcast and unroll pieces

// A kernel's variants: the searches hold many copies, and every opt rebuilds
// its indices in a new variable space.
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

void opt_str(const Opt *o, char *buf, size_t n) {
  if (o->op == OPT_NOLOCALS) snprintf(buf, n, "NOLOCALS");
  else snprintf(buf, n, "%s(%d,%d)", opt_names[o->op], o->axis, o->amount);
}

static int count_role(const Kernel *k, int role) {
  int n = 0;
  for (int i = 0; i < k->naxes; i++) n += k->role[i] == role;
  return n;
}

static int64_t prod_role(const Kernel *k, int role) {
  int64_t p = 1;
  for (int i = 0; i < k->naxes; i++)
    if (k->role[i] == role) p *= k->dims[i];
  return p;
}

// output values per thread (upcasts and the vector axis), and with the unrolled reduce steps the registers they take
static int64_t outputs_per_thread(const Kernel *k) { return prod_role(k, AX_UPCAST) * prod_role(k, AX_VEC); }
static int64_t values_per_thread(const Kernel *k) {
  return outputs_per_thread(k) * prod_role(k, AX_UNROLL) * prod_role(k, AX_RVEC);
}

int kernel_threads(const Kernel *k) { return (int)(prod_role(k, AX_LOCAL) * prod_role(k, AX_GROUP)); }

void kernel_rename(Kernel *k) {
  if (k->kind == KERNEL_ATTN) {
    attn_rename(k);
    return;
  }
  int n = snprintf(k->name, sizeof k->name, "%s", k->red_op >= 0 ? "r" : "E");
  for (int i = 0; i < k->naxes; i++) n += snprintf(k->name + n, sizeof k->name - (size_t)n, "_%lld", (long long)k->dims[i]);
  if (k->naxes == 0) snprintf(k->name + n, sizeof k->name - (size_t)n, "_1");
}

void axis_name(const Kernel *k, int axis, char *buf, size_t n) {
  int r = k->role[axis], nth = 0;
  bool local = r == AX_LOCAL || r == AX_GROUP;
  for (int i = 0; i < axis; i++)
    nth += local ? (k->role[i] == AX_LOCAL || k->role[i] == AX_GROUP) : k->role[i] == r;
  snprintf(buf, n, "%s%d", axis_role_var[r], nth);
}

// Rebuild the kernel with axis `a` split into outer (size dims[a]/amount, its
// role) and inner (size amount, role `role`); `top` puts the new piece on the
// outer side instead. Axes are then ordered by role (stable).
static void split(Kernel *k, int a, int64_t amount, bool top, int role) {
  int64_t d[MAXAXES + 1];
  uint8_t r[MAXAXES + 1];
  int n = 0, old_of_new[MAXAXES + 1], part[MAXAXES + 1];  // part: 0 whole, 1 outer, 2 inner
  for (int i = 0; i < k->naxes; i++) {
    if (i != a) {
      d[n] = k->dims[i], r[n] = k->role[i], old_of_new[n] = i, part[n++] = 0;
      continue;
    }
    int64_t rest = k->dims[i] / amount;
    // the piece that keeps the old role, and the new piece
    d[n] = rest, r[n] = k->role[i], old_of_new[n] = i, part[n++] = 1;
    d[n] = amount, r[n] = (uint8_t)role, old_of_new[n] = i, part[n++] = 2;
  }
  // stable order by role; pieces of size 1 are dropped (their variable is 0)
  int order[MAXAXES + 1], m = 0;
  for (int role_i = AX_GLOBAL; role_i <= AX_TCK; role_i++)
    for (int i = 0; i < n; i++)
      if (r[i] == role_i && d[i] > 1) order[m++] = i;
  Sym to = {0};
  int64_t nd[MAXAXES + 1];
  uint8_t nr[MAXAXES + 1];
  int pos[MAXAXES + 1];
  for (int i = 0; i < n; i++) pos[i] = -1;
  for (int j = 0; j < m; j++) nd[j] = d[order[j]], nr[j] = r[order[j]], pos[order[j]] = j, to.var_size[j] = nd[j];
  to.nvars = m;
  int map[MAXAXES] = {0}, zero = sym_const(&to, 0);
  for (int i = 0; i < n; i++)
    if (part[i] == 0) map[old_of_new[i]] = pos[i] >= 0 ? sym_var(&to, pos[i]) : zero;
  int outer = pos[a] >= 0 ? sym_var(&to, pos[a]) : zero, inner = pos[a + 1] >= 0 ? sym_var(&to, pos[a + 1]) : zero;
  // a = outer * amount + inner; or, with the new piece on top, inner * rest + outer
  int64_t rest = k->dims[a] / amount;
  map[a] = top ? sym_add(&to, sym_mul(&to, inner, rest), outer) : sym_add(&to, sym_mul(&to, outer, amount), inner);
  kernel_reindex(k, &to, map);
  k->naxes = m;
  memcpy(k->dims, nd, sizeof(int64_t) * (size_t)m);
  memcpy(k->role, nr, (size_t)m);
}

// the i-th axis of the given roles
static int nth_axis(const Kernel *k, int i, bool reduce) {
  for (int a = 0; a < k->naxes; a++) {
    int r = k->role[a];
    bool is_red = r == AX_REDUCE;
    bool is_out = r == AX_GLOBAL || r == AX_LOCAL;
    if ((reduce && is_red) || (!reduce && is_out)) {
      if (i == 0) return a;
      i--;
    }
  }
  return -1;
}

#define REFUSE(...) do { snprintf(why, n, __VA_ARGS__); return -1; } while (0)

// amt times the threads per block, past the target's limit: -1 and why
static int past_threads(const Kernel *k, int64_t amt, const char *opt, char *why, size_t n) {
  const Target *T = k->target;
  if (kernel_threads(k) * amt <= T->max_threads) return 0;
  REFUSE("%s: more than %d thread%s per block on target %s", opt, T->max_threads, T->max_threads == 1 ? "" : "s", T->name);
}

// variables an op's value depends on (through its loads' indices)
static uint32_t op_vars(const Kernel *k, int i) {
  const KOp *o = &k->ops.v[i];
  uint32_t m = 0;
  if (o->idx >= 0) m |= k->sym.n.v[o->idx].vars;
  if (o->valid >= 0) m |= k->sym.n.v[o->valid].vars;
  for (int j = 0; j < 3; j++)
    if (o->src[j] >= 0) m |= op_vars(k, o->src[j]);
  return m;
}

// An operand the tensor core can take (*i, the KOp that becomes the
// fragment), its dtype or -1: an f32 cast of a bf16/f16 value (exact); or
// --weights fp8's cast(q) * scale, whose q is exact in bf16 and f16 alike
// (DT_F8E4M3: either) and whose scale, constant over every reduce axis
// (redmask), leaves the sum (sum_k a q s = s sum_k a q) for the accumulators
// (*scale; -1 none).
static int tc_operand(Kernel *k, int *i, uint32_t redmask, int *scale) {
  KOp *o = &k->ops.v[*i];
  *scale = -1;
  for (int s = 0; o->op == OP_MUL && s < 2; s++) {
    int q = o->src[s], f = o->src[1 - s];
    KOp *c = &k->ops.v[q];
    if (c->op == OP_CAST && c->dt == DT_F32 && k->ops.v[c->src[0]].dt == DT_F8E4M3 && !(op_vars(k, f) & redmask))
      return *i = q, *scale = f, DT_F8E4M3;
  }
  if (o->op != OP_CAST || o->dt != DT_F32) return -1;
  int dt = k->ops.v[o->src[0]].dt;
  return dt == DT_BF16 || dt == DT_F16 ? dt : -1;
}

// Add an axis of the given size and role that no index uses yet.
static void add_axis(Kernel *k, int64_t size, int role) {
  int64_t d[MAXAXES];
  uint8_t r[MAXAXES];
  int n = 0, pos[MAXAXES] = {0};
  for (int role_i = AX_GLOBAL; role_i <= AX_TCK; role_i++) {
    for (int i = 0; i < k->naxes; i++)
      if (k->role[i] == role_i) pos[i] = n, d[n] = k->dims[i], r[n++] = (uint8_t)role_i;
    if (role_i == role) d[n] = size, r[n++] = (uint8_t)role;
  }
  Sym to = {0};
  for (int i = 0; i < n; i++) to.var_size[i] = d[i];
  to.nvars = n;
  int map[MAXAXES];
  for (int i = 0; i < k->naxes; i++) map[i] = sym_var(&to, pos[i]);
  kernel_reindex(k, &to, map);
  k->naxes = n;
  memcpy(k->dims, d, sizeof(int64_t) * (size_t)n);
  memcpy(k->role, r, (size_t)n);
}

// Axis a grows to size nd (same variable, larger range); returns the mask
// "still inside the old size" for the accesses to carry.
static int grow_axis(Kernel *k, int a, int64_t nd) {
  int64_t d = k->dims[a];
  Sym to = {0};
  int map[MAXAXES];
  for (int i = 0; i < k->naxes; i++) to.var_size[i] = i == a ? nd : k->dims[i];
  to.nvars = k->naxes;
  for (int i = 0; i < k->naxes; i++) map[i] = sym_var(&to, i);
  kernel_reindex(k, &to, map);
  k->dims[a] = nd;
  return sym_lt(&k->sym, sym_var(&k->sym, a), d);
}

// The ops a reduce's padded positions flow through (the ACC's operand
// subtree) in `in`; false when one of them does not keep zero (constants,
// exp, division, ...): only a sum of products, sums and casts of loads may
// have its reduce axis padded with masked (zero) loads.
static bool reduce_keeps_zero(Kernel *k, bool *in) {
  int acc = -1;
  for (int i = 0; i < k->ops.n; i++)
    if (k->ops.v[i].op == KO_ACC) acc = i;
  in[k->ops.v[acc].src[0]] = true;
  bool ok = true;
  for (int i = k->ops.n - 1; i >= 0; i--) {
    if (!in[i]) continue;
    KOp *x = &k->ops.v[i];
    bool zero_safe = x->op == KO_LOAD || x->op == OP_MUL || x->op == OP_ADD || x->op == OP_SUB || x->op == OP_NEG ||
                     (x->op == OP_CAST && x->dt != DT_BOOL) || x->op == KO_PADSEL;
    if (!zero_safe) ok = false;
    for (int j = 0; j < 3; j++)
      if (x->src[j] >= 0) in[x->src[j]] = true;
  }
  return ok;
}

static void and_valid(Kernel *k, KOp *x, int mask) { x->valid = x->valid >= 0 ? sym_and(&k->sym, x->valid, mask) : mask; }

// Grow axis a (by index) to the next multiple of amt and mask the extra
// positions: on an output axis the loads that use it read 0 and the store
// skips them; on a reduce axis every load of the reduce reads 0 there (the
// caller checked reduce_keeps_zero).
static void pad_axis(Kernel *k, int a, int64_t amt) {
  int64_t d = k->dims[a];
  bool reduce = k->role[a] == AX_REDUCE;
  bool *in = xcalloc((size_t)k->ops.n, sizeof *in);
  if (reduce) reduce_keeps_zero(k, in);
  int mask = grow_axis(k, a, (d + amt - 1) / amt * amt);
  for (int i = 0; i < k->ops.n; i++) {
    KOp *x = &k->ops.v[i];
    bool uses = reduce ? in[i] : (x->idx >= 0 && sym_uses(&k->sym, x->idx, a)) || x->op == KO_STORE;
    if ((x->op == KO_LOAD || x->op == KO_GATHER || (!reduce && x->op == KO_STORE)) && uses) and_valid(k, x, mask);
  }
  free(in);
}

// PADTO(axis, n): grow an axis to a multiple of n; the extra positions are
// masked. Loads that use the axis read 0 there and the store skips them; on
// a reduce axis every load in the reduce is masked, so only a sum of
// products, sums and casts of loads (zero in, zero out) may be padded.
static int apply_padto(Kernel *k, Opt o, char *why, size_t n) {
  if (k->tc_dt >= 0) REFUSE("PADTO after TC");
  int a = nth_axis(k, o.axis, false);
  bool reduce = false;
  if (o.amount < 0) {  // a negative amount pads reduce axis `axis` (the opt list keeps it as data)
    a = nth_axis(k, o.axis, true);
    reduce = true;
  }
  int64_t amt = o.amount < 0 ? -o.amount : o.amount;
  if (a < 0) REFUSE("PADTO: no %s axis %d", reduce ? "reduce" : "output", o.axis);
  if (k->role[a] != AX_GLOBAL && k->role[a] != AX_REDUCE) REFUSE("PADTO needs a global or reduce axis");
  int64_t d = k->dims[a];
  if (amt < 2 || d % amt == 0) REFUSE("PADTO: axis %d of size %lld is already a multiple of %lld", o.axis, (long long)d, (long long)amt);
  if (d <= amt / 4) REFUSE("PADTO: more than quadruple the work");
  if (reduce) {
    if (k->red_op != OP_RSUM) REFUSE("PADTO of a reduce axis needs a sum");
    bool *in = xcalloc((size_t)k->ops.n, sizeof *in), ok = reduce_keeps_zero(k, in), shared = false;
    for (int j = 0; j < k->ops.n; j++) {  // its masked loads are the reduce's alone: one read after it too would be masked there
      if (in[j] || k->ops.v[j].op == KO_ACC) continue;
      for (int x = 0; x < 3; x++) shared |= k->ops.v[j].src[x] >= 0 && in[k->ops.v[j].src[x]];
    }
    free(in);
    if (!ok) REFUSE("PADTO: the reduce has ops that do not keep zero (constants, exp, division, ...)");
    if (shared) REFUSE("PADTO: a value of the reduce is used after it too (its padded reads would be masked there)");
  }
  pad_axis(k, a, amt);
  k->opts[k->nopts++] = o;
  return 0;
}

// TC: map a matmul-shaped reduce onto mma.sync m16n8k16 (one warp per block).
// The sum of a product of two bf16/f16 values (cast to f32; an fp8 weight
// times its row scale takes the other's dtype, the scale applied after), one constant
// along an output axis m, the other along an output axis n, a reduce axis k
// (further reduce axes loop around the mma steps); m, n and k are padded to multiples of 16, 8 and 16 (masked) where they
// are not; it must be the first opt.
static int apply_tc(Kernel *k, Opt o, char *why, size_t n) {
  if (!k->target->tc) REFUSE("TC: target %s has no tensor cores", k->target->name);
  if (k->nopts) REFUSE("TC must be the first opt");
  if (k->red_op != OP_RSUM) REFUSE("TC needs a sum");
  if (count_role(k, AX_REDUCE) < 1) REFUSE("TC needs a reduce axis");
  int acc = -1;
  for (int i = 0; i < k->ops.n; i++)
    if (k->ops.v[i].op == KO_ACC) acc = i;
  KOp *mul = &k->ops.v[k->ops.v[acc].src[0]];
  if (mul->op != OP_MUL) REFUSE("TC needs a sum of products");
  int x = mul->src[0], y = mul->src[1], scx, scy;
  uint32_t redmask = 0;
  for (int a = 0; a < k->naxes; a++)
    if (k->role[a] == AX_REDUCE) redmask |= 1u << a;
  int dx = tc_operand(k, &x, redmask, &scx), dy = tc_operand(k, &y, redmask, &scy);
  if (scx >= 0 && scy >= 0) REFUSE("TC: both operands are scaled fp8 (one scale per accumulator)");
  // an fp8 operand takes the other's dtype (bf16 when both are fp8)
  if (dx == DT_F8E4M3) dx = dy == DT_F16 ? DT_F16 : DT_BF16;
  if (dy == DT_F8E4M3) dy = dx == DT_F16 ? DT_F16 : DT_BF16;
  // TC(_, 1): f32 operands may go through tf32 (m16n8k8), which rounds them to 10 mantissa bits
  bool tf32 = (dx < 0 || dx != dy) && o.amount == 1 && k->ops.v[x].dt == DT_F32 && k->ops.v[y].dt == DT_F32;
  if (tf32) dx = dy = DT_F32;
  if (dx < 0 || dx != dy) {
    int sx = k->ops.v[x].op == OP_CAST ? k->ops.v[k->ops.v[x].src[0]].dt : k->ops.v[x].dt;
    int sy = k->ops.v[y].op == OP_CAST ? k->ops.v[k->ops.v[y].src[0]].dt : k->ops.v[y].dt;
    REFUSE("TC: the operands are %s and %s; it needs two bf16 or two f16 (two f32 with --tf32)", dtype_name[sx], dtype_name[sy]);
  }
  int64_t kstep = tf32 ? 8 : 16;
  uint32_t vx = op_vars(k, x), vy = op_vars(k, y);
  // k: the longest reduce axis both operands move along (a convolution's input
  // channels); other reduce axes (its window's taps) stay loops around the mma steps
  int ka = -1, ma = -1, na = -1;
  for (int a = 0; a < k->naxes; a++)
    if (k->role[a] == AX_REDUCE && ((vx >> a) & 1) && ((vy >> a) & 1) && (ka < 0 || k->dims[a] > k->dims[ka])) ka = a;
  if (ka < 0) REFUSE("TC: both operands must use a reduce axis");
  for (int a = 0; a < k->naxes; a++) {
    if (k->role[a] != AX_GLOBAL) continue;
    bool in_x = (vx >> a) & 1, in_y = (vy >> a) & 1;
    if (in_x && !in_y) ma = a;
    if (in_y && !in_x) na = a;
  }
  if (ma < 0 || na < 0 || ma == na) REFUSE("TC: no output axis that only one operand moves along");
  // Unaligned dims are padded to the tile (tinygrad's TC level 2): m and n
  // with masked loads and stores, k with masked (zero) loads. Of the two ways
  // round (which operand is A), the one with less padded work; ties keep x as A.
#define UP(d, t) (((d) + (t) - 1) / (t) * (t))
  if (UP(k->dims[na], 16) * UP(k->dims[ma], 8) < UP(k->dims[ma], 16) * UP(k->dims[na], 8)) {
    int t = x;
    x = y, y = t, t = ma, ma = na, na = t;
  }
#undef UP
  static const char *const axis_letter[] = {"m", "n", "k"};
  int tile_axis[3] = {ma, na, ka};
  int64_t tile[3] = {16, 8, kstep};
  for (int i = 0; i < 3; i++) {
    int64_t d = k->dims[tile_axis[i]];
    if (d % tile[i] && d <= tile[i] / 4)
      REFUSE("TC: %s %lld padded to %lld is more than quadruple the work", axis_letter[i], (long long)d, (long long)tile[i]);
  }
  if (k->dims[ka] % kstep) {
    bool *in = xcalloc((size_t)k->ops.n, sizeof *in), ok = reduce_keeps_zero(k, in);
    free(in);
    if (!ok) REFUSE("TC: k %lld is not a multiple of %lld and the operands do not keep zero when padded", (long long)k->dims[ka], (long long)kstep);
  }
  for (int i = 0; i < 3; i++)
    if (k->dims[tile_axis[i]] % tile[i]) pad_axis(k, tile_axis[i], tile[i]);
  // split later axes first: a split can drop a piece of size 1, which moves
  // the axes after it but never the ones before
  split(k, ka, kstep, false, AX_TCK);
  if (na > ma) {
    split(k, na, 8, false, AX_TCN);
    split(k, ma, 16, false, AX_TCM);
  } else {
    split(k, ma, 16, false, AX_TCM);
    split(k, na, 8, false, AX_TCN);
  }
  add_axis(k, 32, AX_LOCAL);  // the warp's lanes
  k->tc_a = x, k->tc_b = y, k->tc_dt = dx, k->tc_scale = scx >= 0 ? scx : scy;
  k->opts[k->nopts++] = o;
  return 0;
}

int opt_apply(Kernel *k, Opt o, char *why, size_t n) {
  if (k->kind == KERNEL_ATTN) return attn_opt(k, o, why, n);
  if (o.op >= OPT_QROWS) REFUSE("%s is the fused attention's", opt_names[o.op]);
  if (k->nopts == MAXOPTS) REFUSE("too many opts");
  bool reduce_axis = o.op == OPT_UNROLL || o.op == OPT_GROUP || o.op == OPT_GROUPTOP || o.op == OPT_RVEC;
  int a = -1;
  int64_t amt = o.amount;
  if (o.op == OPT_NOLOCALS) {
    if (count_role(k, AX_LOCAL) || count_role(k, AX_GROUP)) REFUSE("NOLOCALS after locals");
    if (k->nolocals) REFUSE("NOLOCALS twice");
    k->nolocals = true;
    k->opts[k->nopts++] = o;
    return 0;
  }
  if (o.op == OPT_TC) return apply_tc(k, o, why, n);
  if (o.op == OPT_STAGE) {
    if (k->tc_dt < 0) REFUSE("STAGE needs TC");
    if (k->stage) REFUSE("STAGE twice");
    k->stage = true;  // the lowering checks the tiles divide among the block's threads
    k->opts[k->nopts++] = o;
    return 0;
  }
  if (k->tc_dt >= 0 && o.op != OPT_LOCAL && o.op != OPT_UPCAST) REFUSE("after TC only LOCAL, UPCAST and STAGE");
  if (k->stage) REFUSE("STAGE must be the last opt");
  if (o.op == OPT_PADTO) return apply_padto(k, o, why, n);
  if (o.op == OPT_SWAP) {
    int b = o.amount;
    int x = nth_axis(k, o.axis, false), y = nth_axis(k, b, false);
    if (x < 0 || y < 0 || x == y || k->role[x] != AX_GLOBAL || k->role[y] != AX_GLOBAL) REFUSE("SWAP needs two distinct global axes");
    // swap the two axes' positions: variables x and y trade places
    Sym to = {0};
    int map[MAXAXES];
    for (int i = 0; i < k->naxes; i++) to.var_size[i] = k->dims[i == x ? y : i == y ? x : i];
    to.nvars = k->naxes;
    for (int i = 0; i < k->naxes; i++) map[i] = sym_var(&to, i == x ? y : i == y ? x : i);
    kernel_reindex(k, &to, map);
    int64_t t = k->dims[x];
    k->dims[x] = k->dims[y], k->dims[y] = t;
    k->opts[k->nopts++] = o;
    return 0;
  }
  a = nth_axis(k, o.axis, reduce_axis);
  if (a < 0) REFUSE("%s: no %s axis %d", opt_names[o.op], reduce_axis ? "reduce" : "output", o.axis);
  int64_t size = k->dims[a];
  if (amt == 0) amt = size;
  if (amt < 1 || size % amt) REFUSE("%s: %lld does not divide axis %d of size %lld", opt_names[o.op], (long long)amt, o.axis, (long long)size);
  int64_t upcast = values_per_thread(k);
  switch (o.op) {
  case OPT_LOCAL:
    if (k->nolocals) REFUSE("LOCAL after NOLOCALS");
    if (k->role[a] != AX_GLOBAL) REFUSE("LOCAL needs a global axis");
    if (past_threads(k, amt, "LOCAL", why, n)) return -1;
    split(k, a, amt, false, AX_LOCAL);
    break;
  case OPT_UPCAST:
    if (k->role[a] != AX_GLOBAL && k->role[a] != AX_LOCAL) REFUSE("UPCAST needs an output axis");
    if (k->tc_dt >= 0 && k->role[a] != AX_GLOBAL) REFUSE("UPCAST of a TC kernel needs a global (tile) axis");
    if (k->tc_dt >= 0 && upcast * amt > 16) REFUSE("UPCAST: at most 16 fragments per warp");
    if (amt > 16) REFUSE("UPCAST: at most 16 at a time");
    if (upcast * amt > MAX_UPCAST) REFUSE("UPCAST: more than %d values per thread", MAX_UPCAST);
    split(k, a, amt, false, AX_UPCAST);
    break;
  case OPT_VEC:  // an UPCAST held as one vector (lowering and rendering give it vector code)
    if (k->role[a] != AX_GLOBAL && k->role[a] != AX_LOCAL) REFUSE("VEC needs an output axis");
    if (k->tc_dt >= 0) REFUSE("VEC: not with TC");
    if (count_role(k, AX_VEC) || count_role(k, AX_RVEC)) REFUSE("one VEC or RVEC per kernel");
    if (amt != 2 && amt != 4 && amt != 8 && amt != 16) REFUSE("VEC: a width of 2, 4, 8 or 16");
    if (upcast * amt > MAX_UPCAST) REFUSE("VEC: more than %d values per thread", MAX_UPCAST);
    split(k, a, amt, false, AX_VEC);
    break;
  case OPT_RVEC:  // an UNROLL held as one vector of partial results, combined after the loop
    if (k->tc_dt >= 0) REFUSE("RVEC: not with TC");
    if (count_role(k, AX_VEC) || count_role(k, AX_RVEC)) REFUSE("one VEC or RVEC per kernel");
    if (count_role(k, AX_GROUP)) REFUSE("RVEC: not with GROUP (its partial results are scalars)");
    if (amt != 2 && amt != 4 && amt != 8 && amt != 16) REFUSE("RVEC: a width of 2, 4, 8 or 16");
    if (upcast * amt > MAX_UPCAST) REFUSE("RVEC: more than %d values per thread", MAX_UPCAST);
    split(k, a, amt, false, AX_RVEC);
    break;
  case OPT_UNROLL:
    if (amt > 32) REFUSE("UNROLL: at most 32");
    if (upcast * amt > MAX_UPCAST) REFUSE("UNROLL: more than %d values per thread", MAX_UPCAST);
    split(k, a, amt, false, AX_UNROLL);
    break;
  case OPT_GROUP: case OPT_GROUPTOP: {
    if (k->nolocals) REFUSE("GROUP after NOLOCALS");
    if (count_role(k, AX_GROUP)) REFUSE("one GROUP per kernel");
    if (count_role(k, AX_RVEC)) REFUSE("GROUP: not with RVEC (its partial results are scalars)");
    if (past_threads(k, amt, "GROUP", why, n)) return -1;
    int64_t smem = kernel_threads(k) * amt * outputs_per_thread(k) * 4;
    if (smem > k->target->max_smem) REFUSE("GROUP: %lld bytes of shared memory", (long long)smem);
    split(k, a, amt, o.op == OPT_GROUPTOP, AX_GROUP);
    break;
  }
  default: REFUSE("unknown opt");
  }
  k->opts[k->nopts++] = o;
  return 0;
}

// how an axis is read by the kernel's loads: moving buffers and their strides
static void axis_strides(Kernel *k, int a, int *moving, int64_t *stride_sum, bool *in_mask) {
  *moving = 0, *stride_sum = 0, *in_mask = false;
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->valid >= 0 && sym_uses(&k->sym, o->valid, a)) *in_mask = true;
    if (o->op != KO_LOAD) continue;
    bool lin;
    int64_t c = sym_coef(&k->sym, o->idx, a, &lin);
    if (!lin || c) (*moving)++, *stride_sum += lin ? (c < 0 ? -c : c) : 1000000;
  }
}

static bool try_opt(Kernel *k, int op, int axis, int amount) {
  char why[256];
  return opt_apply(k, (Opt){op, axis, amount}, why, sizeof why) == 0;
}

static int n_out_axes(Kernel *k) { return count_role(k, AX_GLOBAL) + count_role(k, AX_LOCAL); }

// Does the vector opt o (VEC or RVEC) give every access along its axis
// consecutive addresses? Tried on a copy: after the split, the lane variable
// must step each load (and, for VEC, the store) by 1; a reduce over a merged
// [heads, channels] axis passes where 8 divides the channels (its div/mod fold).
static bool vector_fits(const Kernel *k, Opt o) {
  Kernel t;
  kernel_copy(&t, k);
  bool ok = try_opt(&t, o.op, o.axis, o.amount);
  int lane = -1, seen = 0;
  for (int a = 0; ok && a < t.naxes; a++)
    if (t.role[a] == (o.op == OPT_VEC ? AX_VEC : AX_RVEC)) lane = a;
  for (int i = 0; ok && lane >= 0 && i < t.ops.n; i++) {
    KOp *x = &t.ops.v[i];
    bool store = x->op == KO_STORE && o.op == OPT_VEC;
    if (!store && (x->op != KO_LOAD || !sym_uses(&t.sym, x->idx, lane))) continue;
    bool lin;
    ok = sym_coef(&t.sym, x->idx, lane, &lin) == 1 && lin;
    seen += x->op == KO_LOAD;
  }
  kernel_free(&t);
  return ok && lane >= 0 && seen;
}

static bool try_vector(Kernel *k, int op, int axis, int amount) {
  return vector_fits(k, (Opt){op, axis, amount}) && try_opt(k, op, axis, amount);
}

// The widest vector that fits, 16 lanes first: one AVX-512 register of f32.
// On this project's CPU (Zen 5, two 512-bit FMA pipes) 16 lanes ran the
// decoder's 3x3 convolutions about 1.5-2x and flux-mid's forward 1.1-1.4x
// faster than 8 (docs/notes/2026-12-08-cpu-vectors.md); a CPU with 256-bit
// registers splits each into two.
static bool try_widest_vector(Kernel *k, int op, int axis) {
  return try_vector(k, op, axis, 16) || try_vector(k, op, axis, 8) || try_vector(k, op, axis, 4);
}

// HC's 1.: matrix-vector, a sum over the product of two loads that step by 1
// along the reduce, one of them a vector (it moves along no output axis):
// GROUP, LOCAL and UPCAST. true: applied (HC is done).
static bool hc_matvec(Kernel *k, int64_t outsize) {
  int ra = nth_axis(k, 0, true), unit = 0, loads = 0;
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->op != KO_LOAD || !sym_uses(&k->sym, o->idx, ra)) continue;
    bool lin;
    loads++;
    unit += sym_coef(&k->sym, o->idx, ra, &lin) == 1 && lin;
  }
  int last = n_out_axes(k) - 1;
  if (loads == 2 && unit == 2 && k->dims[nth_axis(k, last, false)] % 16 == 0 && k->dims[ra] % 8 == 0 &&
      outsize >= 16 && k->dims[ra] >= 256) {
    // only when one operand is a vector: it moves along no output axis
    int still = 0;
    for (int i = 0; i < k->ops.n; i++) {
      KOp *o = &k->ops.v[i];
      if (o->op != KO_LOAD || !sym_uses(&k->sym, o->idx, ra)) continue;
      bool moves = false;
      for (int j = 0; j < n_out_axes(k); j++) moves |= sym_uses(&k->sym, o->idx, nth_axis(k, j, false));
      still += !moves;
    }
    return still == 1 && try_opt(k, OPT_GROUP, 0, 8) && try_opt(k, OPT_LOCAL, last, 4) && try_opt(k, OPT_UPCAST, last, 4);
  }
  return false;
}

// An upcast by 4 of output axis i after padding it to a multiple of 4 (its
// extra positions masked), or nothing: tried on a copy first.
static bool try_padded_upcast(Kernel *k, int i) {
  Kernel t;
  kernel_copy(&t, k);
  bool ok = try_opt(&t, OPT_PADTO, i, 4) && try_opt(&t, OPT_UPCAST, i, 4);
  kernel_free(&t);
  return ok && try_opt(k, OPT_PADTO, i, 4) && try_opt(k, OPT_UPCAST, i, 4);
}

// HC's 4.: upcast broadcast axes while the output is big: an axis not upcast yet,
// along which some load does not move while it moves along every axis
// upcast so far (so each upcast adds reuse); fewest moving loads first. On a
// CPU an axis of at least 16 that neither 4 nor 3 divides (CLIP's 77 tokens,
// the rows of its GEMMs) is padded to a multiple of 4 for its tile, rather
// than left without one: a row tile reuses each weight vector it loads,
// which took CLIP-L's GEMMs from about 85 to about 140 GFLOPS on PoCL. An axis
// that needs no padding goes first.
static void hc_upcast_broadcast(Kernel *k) {
  bool upcasted[MAXAXES] = {false};
  while (prod_role(k, AX_GLOBAL) >= 1024) {
    int best = -1, best_amt = 0, best_moving = 1 << 30, best_pad = 1;
    int64_t best_stride = 0;
    for (int i = 0; i < n_out_axes(k); i++) {
      int a = nth_axis(k, i, false);
      if (upcasted[i] || k->role[a] != AX_GLOBAL) continue;
      bool reuse = false;
      for (int j = 0; j < k->ops.n && !reuse; j++) {
        KOp *o = &k->ops.v[j];
        if (o->op != KO_LOAD || sym_uses(&k->sym, o->idx, a)) continue;
        bool moves_on_upcasts = true;
        for (int u = 0; u < k->naxes; u++)
          if (k->role[u] == AX_UPCAST && !sym_uses(&k->sym, o->idx, u)) moves_on_upcasts = false;
        reuse = moves_on_upcasts;
      }
      if (!reuse) continue;
      int mv;
      int64_t ss;
      bool masked;
      axis_strides(k, a, &mv, &ss, &masked);
      int amt = k->dims[a] % 4 == 0 ? 4 : k->dims[a] % 3 == 0 ? 3 : 0, pad = 0;
      if (!amt && k->target->cpu && k->dims[a] >= 16) amt = 4, pad = 1;
      if (!amt) continue;
      if (best < 0 || pad < best_pad || (pad == best_pad && (mv < best_moving || (mv == best_moving && ss < best_stride))))
        best = i, best_amt = amt, best_moving = mv, best_stride = ss, best_pad = pad;
    }
    if (best < 0 || !(best_pad ? try_padded_upcast(k, best) : try_opt(k, OPT_UPCAST, best, best_amt))) break;
    upcasted[best] = true;
  }
}

// HC's 7.: locals on up to 3 axes, broadcast axes first, at most 128 threads
static void hc_locals(Kernel *k) {
  int order[MAXAXES], no = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n_out_axes(k); i++) {
      int a = nth_axis(k, i, false);
      if (k->role[a] != AX_GLOBAL) continue;
      int mv;
      int64_t ss;
      bool masked;
      axis_strides(k, a, &mv, &ss, &masked);
      int nloads = 0;
      for (int j = 0; j < k->ops.n; j++) nloads += k->ops.v[j].op == KO_LOAD;
      bool broadcast = mv < nloads;
      if ((pass == 0) == broadcast) order[no++] = i;
    }
  int used = 0;
  for (int j = 0; j < no && used < 3; j++) {
    static const int sizes[] = {32, 16, 8, 4, 3, 2};
    // axis indices shift as locals are added: find the axis again by its position among output axes
    int i = order[j];
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      int a = nth_axis(k, i, false);
      if (a < 0 || k->role[a] != AX_GLOBAL) break;
      if (k->dims[a] % sizes[s] == 0 && kernel_threads(k) * sizes[s] <= 128) {
        if (try_opt(k, OPT_LOCAL, i, sizes[s])) used++;
        break;
      }
    }
  }
}

// tinygrad's hand-coded sequence, adapted to this kernel model
void opt_hc(Kernel *k) {
  if (k->kind == KERNEL_ATTN) {
    attn_hc(k);
    return;
  }
  int nred = count_role(k, AX_REDUCE);
  int64_t outsize = prod_role(k, AX_GLOBAL);
  // 0. on a CPU: a reduce whose loads step by 1 along its last axis (a linear's
  // rows of x and W, LayerNorm's row) is summed as dot products of vectors
  // (RVEC, the widest that fits): vector loads and FMAs, where threads would gather. Then register
  // tiles (4.) and locals (7.); GROUP (shared memory) and UNROLL are left out.
  bool cpu = k->target->cpu, rvec = false;
  if (cpu && nred >= 1 && (k->red_op == OP_RSUM || k->red_op == OP_RMAX))
    rvec = try_widest_vector(k, OPT_RVEC, nred - 1);
  // ... else an output axis along which the store and every load that moves
  // step by 1 (attention's p v along the channels, elementwise kernels) is
  // computed as one vector (VEC, the widest that fits): vector loads and stores
  bool vec = false;
  for (int i = n_out_axes(k) - 1; cpu && !rvec && !vec && i >= 0; i--)
    vec = try_widest_vector(k, OPT_VEC, i);
  // 1. matrix-vector (hc_matvec)
  if (!rvec && k->red_op == OP_RSUM && nred == 1 && n_out_axes(k) >= 1 && hc_matvec(k, outsize)) return;
  // 2. small output with a long reduce: split the reduce across a block
  if (!rvec && nred >= 1 && outsize <= 2048) {
    int ra = nth_axis(k, 0, true);
    int64_t rs = k->dims[ra];
    if (rs >= 256 && (try_opt(k, OPT_GROUPTOP, 0, 256) || try_opt(k, OPT_GROUPTOP, 0, 16))) return;
  }
  // 3. small masked output axes are upcast whole
  for (int i = 0; i < n_out_axes(k); i++) {
    int a = nth_axis(k, i, false);
    int mv;
    int64_t ss;
    bool masked;
    axis_strides(k, a, &mv, &ss, &masked);
    if (masked && k->dims[a] <= 7 && k->dims[a] > 1) try_opt(k, OPT_UPCAST, i, 0);
  }
  // 3b. on a CPU, an elementwise kernel not vectorized above still gains from the
  // vector arithmetic alone: RoPE's rotation (pairs at stride 2, loaded and
  // stored lane by lane) runs 6x faster on PoCL with 16 lanes along its pairs
  // than as scalars (what BEAM found). Its lanes are loaded and stored one by
  // one, so no register tiles go on top (4.), and lanes x upcasts x ops stay
  // bounded: the kernel's text stays small.
  bool packed = false;
  int64_t text = (int64_t)k->ops.n * outputs_per_thread(k);
  for (int i = n_out_axes(k) - 1; cpu && nred == 0 && !vec && i >= 0; i--)
    vec = packed = k->dims[nth_axis(k, i, false)] >= 16 && ((text * 16 <= 2048 && try_opt(k, OPT_VEC, i, 16)) ||
                                                           (text * 8 <= 2048 && try_opt(k, OPT_VEC, i, 8)));
  // 4. upcast broadcast axes while the output is big (hc_upcast_broadcast)
  if (!packed) hc_upcast_broadcast(k);
  // 5. unroll the last reduce axis whole if short, else by 4
  nred = count_role(k, AX_REDUCE);
  if (nred >= 1 && !rvec) {
    int last = nred - 1, a = nth_axis(k, last, true);
    if (k->dims[a] <= 32) {
      try_opt(k, OPT_UNROLL, last, 0);
      if (nred >= 2) {
        int b = nth_axis(k, last - 1, true);
        if (k->dims[b] <= 3) try_opt(k, OPT_UNROLL, last - 1, 0);
      }
    } else if (k->dims[a] % 4 == 0) {
      try_opt(k, OPT_UNROLL, last, 4);
    }
  }
  // 6. something upcast
  if (count_role(k, AX_UPCAST) == 0 && n_out_axes(k) >= 1) {
    int last = n_out_axes(k) - 1;
    if (k->dims[nth_axis(k, last, false)] % 4 == 0) try_opt(k, OPT_UPCAST, last, 4);
  }
  // 7. locals on up to 3 axes, broadcast axes first, at most 128 threads (hc_locals)
  hc_locals(k);
}

// TC where it applies (else RAW), then more fragments per warp and more
// warps per block along the tile axes, and the block's tiles staged in
// shared memory where they divide among its threads.
void opt_tc(Kernel *k, bool tf32) {
  if (k->kind == KERNEL_ATTN) {
    attn_tc(k);
    return;
  }
  char why[256];
  if (opt_apply(k, (Opt){OPT_TC, 0, tf32}, why, sizeof why)) return;
  int nout = n_out_axes(k) - 1;  // the lane is the last output axis; tiles are the globals before it
  for (int i = nout - 1, ups = 0; i >= 0 && ups < 2; i--) {
    int a = nth_axis(k, i, false);
    if (a >= 0 && k->role[a] == AX_GLOBAL && k->dims[a] % 2 == 0 && k->dims[a] >= 4 && try_opt(k, OPT_UPCAST, i, 2)) ups++;
  }
  for (int i = n_out_axes(k) - 2, warps = 0; i >= 0 && warps < 2; i--) {
    int a = nth_axis(k, i, false);
    if (a >= 0 && k->role[a] == AX_GLOBAL && k->dims[a] % 2 == 0 && try_opt(k, OPT_LOCAL, i, 2)) warps++;
  }
  try_opt(k, OPT_STAGE, 0, 0);
}

// Matmul-shaped: a sum whose summand is a product of two values, each moving
// along an output axis the other does not (an m and an n), e.g. a linear
// layer or attention's two products; not a matrix-vector product, not a
// sum of squares.
static bool matmul_shaped(const Kernel *k) {
  if (k->kind != KERNEL_PLAIN || k->red_op != OP_RSUM) return false;  // a fused attention has its own products
  int acc = -1;
  for (int i = 0; i < k->ops.n; i++)
    if (k->ops.v[i].op == KO_ACC) acc = i;
  if (acc < 0) return false;
  const KOp *mul = &k->ops.v[k->ops.v[acc].src[0]];
  if (mul->op != OP_MUL) return false;
  uint32_t vx = op_vars(k, mul->src[0]), vy = op_vars(k, mul->src[1]), out = 0;
  for (int a = 0; a < k->naxes; a++) out |= (uint32_t)(k->role[a] == AX_GLOBAL) << a;
  return (vx & ~vy & out) && (vy & ~vx & out);
}

// Why `--opt tc` leaves a matmul-shaped kernel (before opts) off the tensor
// cores: true and the reason in why; false when TC applies or the kernel is
// not matmul-shaped.
bool tc_refusal(const Kernel *k, bool tf32, char *why, size_t n) {
  if (!matmul_shaped(k)) return false;
  Kernel t;
  kernel_copy(&t, k);
  bool refused = opt_apply(&t, (Opt){OPT_TC, 0, tf32}, why, n) != 0;
  kernel_free(&t);
  return refused;
}

// A random legal sequence: the randomized property test applies these and
// checks the kernel still computes what RAW computes.
void opt_random(Kernel *k, uint64_t *rng, int steps) {
  if (k->kind == KERNEL_ATTN) {
    attn_random(k, rng);
    return;
  }
  lcg_next(rng);
  if ((*rng >> 40) % 2) {  // half the time try tensor cores first; then only LOCAL, UPCAST, STAGE apply (no VEC)
    char why[256];
    opt_apply(k, (Opt){OPT_TC, 0, 0}, why, sizeof why);
  }
  int vec_at = (*rng >> 41) % 2 ? (int)((*rng >> 44) % (uint64_t)steps) : -1;  // half the time a VEC or RVEC at this step
  int vec_op = (*rng >> 50) % 2 ? OPT_RVEC : OPT_VEC;
  for (int s = 0; s < steps; s++) {
    for (int tries = 0; s == vec_at && tries < 20; tries++) {
      lcg_next(rng);
      static const int widths[] = {2, 4, 8, 16};
      char why[256];
      if (opt_apply(k, (Opt){vec_op, (int)((*rng >> 33) % 3), widths[(*rng >> 40) % 4]}, why, sizeof why) == 0) break;
    }
    for (int tries = 0; tries < 20; tries++) {
      lcg_next(rng);
      uint64_t r = *rng >> 33;
      static const int ops[] = {OPT_LOCAL, OPT_UPCAST, OPT_UNROLL, OPT_GROUP, OPT_GROUPTOP, OPT_SWAP, OPT_NOLOCALS, OPT_STAGE, OPT_PADTO, OPT_VEC};
      static const int amounts[] = {0, 2, 3, 4, 8, 16};
      Opt o = {ops[r % 10], (int)((r >> 3) % 3), amounts[(r >> 6) % 6]};
      if (o.op == OPT_PADTO) o.amount = ((r >> 9) % 2 ? -1 : 1) * (int)(5 + (r >> 10) % 12);  // reduce (negative) or output axis
      if (o.op == OPT_SWAP) o.amount = (int)((r >> 9) % 3);
      if (o.op == OPT_NOLOCALS && (r >> 12) % 4) continue;  // rarely
      // keep the unrolled code small enough to build quickly
      int64_t reg = values_per_thread(k);
      if ((o.op == OPT_UPCAST || o.op == OPT_UNROLL || o.op == OPT_VEC || o.op == OPT_RVEC) && reg * (o.amount ? o.amount : 16) > 32) continue;
      char why[256];
      if (opt_apply(k, o, why, sizeof why) == 0) break;
    }
  }
}
