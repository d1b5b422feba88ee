// attention.c — the fused attention kernel (KERNEL_ATTN).
//
// schedule.c recognizes the prelude's attention, softmax(q k^T / c) then the
// product of the probabilities (rounded to v's dtype) with v, and makes it one
// kernel whose KOps are the three operands (a load and casts each) and the
// store. This file gives that kernel its opt actions, its launch geometry and
// its text: templates/attention*.in filled in the target's dialect. The scores are never stored: each block holds
// QROWS query rows and walks the keys KSTEP at a time (K and V tiles in shared
// memory), keeping per row a running max m and sum l of exp(s - m) and an
// accumulator of p v rescaled by exp(m_old - m_new) whenever the max grows
// (the online softmax of FlashAttention). RSPLIT threads share a row, each
// owning E / RSPLIT output channels, so the accumulators stay in registers.
#include "fluxcc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// binary ops of folded operands: %1$s, %2$s the arguments (max, min: the dialect's fmax/fmin)
static const char *const binops[OP_COUNT] = {
  [OP_ADD] = "%s + %s", [OP_SUB] = "%s - %s", [OP_MUL] = "%s * %s", [OP_DIV] = "%s / %s",
  [OP_MAX] = "fmax(%s, %s)", [OP_MIN] = "fmin(%s, %s)",
  [OP_CMPLT] = "%s < %s ? 1.0f : 0.0f", [OP_CMPLE] = "%s <= %s ? 1.0f : 0.0f",
  [OP_CMPEQ] = "%s == %s ? 1.0f : 0.0f", [OP_CMPNE] = "%s != %s ? 1.0f : 0.0f",
};

static const char *sfx(int dt) { return dt >= 0 && dt < DT_COUNT ? dtype_name[dt] : "f32"; }   // of ld_bf16, st_f32, rnd_f16 ...

// the sizes, by role
typedef struct { int nb; int64_t z, lq, e, lk, d; } ASizes;
static ASizes sizes(const Kernel *k) {
  ASizes s = {.nb = k->at.nb, .z = 1};
  for (int a = 0; a < s.nb; a++) s.z *= k->dims[a];
  s.lq = k->dims[s.nb], s.e = k->dims[s.nb + 1], s.lk = k->dims[s.nb + 2], s.d = k->dims[s.nb + 3];
  return s;
}

// The ops an operand's value reads (mark[i]), not through an ACC: that is a
// row statistic, computed before the tile's loads; its ACCs in acc (n of them).
static void reach(const Kernel *k, int root, bool *mark, int *acc, int *n) {
  if (mark[root]) return;
  mark[root] = true;
  const KOp *o = &k->ops.v[root];
  if (o->op == KO_ACC) {
    acc[(*n)++] = root;
    return;
  }
  for (int j = 0; j < 3 && o->src[j] >= 0; j++) reach(k, o->src[j], mark, acc, n);
}

// how many row statistics q's and k's loads compute
void attn_stats(const Kernel *k, int *n) {
  bool *mark = calloc((size_t)k->ops.n, 1);
  int *acc = calloc((size_t)k->ops.n, sizeof *acc);
  const int roots[2] = {k->at.q, k->at.k};
  for (int a = 0; a < 2; a++) {
    memset(mark, 0, (size_t)k->ops.n);
    n[a] = 0;
    reach(k, roots[a], mark, acc, &n[a]);
  }
  free(mark);
  free(acc);
}

static int64_t smem_bytes(const Kernel *k, int bm, int bn) {
  ASizes s = sizes(k);
  int nst[2];
  attn_stats(k, nst);  // each statistic: one float per row of the tile
  int64_t red = k->at.tc ? 4 * bm : 0;  // TC: the rows' partial max and sum, 4 lanes each
  return 4 * ((int64_t)bm * (s.d + 1) + (int64_t)bn * (s.d + s.e) + (int64_t)nst[0] * bm + (int64_t)nst[1] * bn + red);
}

// Why the two products cannot run on mma.sync m16n8k16, or NULL: q, k and v
// (and the probabilities, rounded for the product with v) of one 16-bit dtype,
// q's channels a multiple of 16 (the k of the first product), v's of 8.
static const char *tc_why(const Kernel *k) {
  ASizes s = sizes(k);
  int dt = attn_operand_dt(k, k->at.v), narrow = 0, pdt = -1;
  for (int i = 0; i < k->at.npcast; i++)
    if (k->at.pcast[i] == DT_BF16 || k->at.pcast[i] == DT_F16) narrow++, pdt = k->at.pcast[i];
  if (dt != DT_BF16 && dt != DT_F16) return "v is not bf16 or f16";
  if (attn_operand_dt(k, k->at.q) != dt || attn_operand_dt(k, k->at.k) != dt) return "q, k and v differ in dtype";
  if (narrow != 1 || pdt != dt) return "the probabilities are not rounded to v's dtype (once)";
  if (s.d % 16) return "q's channels are not a multiple of 16";
  if (s.e % 8) return "v's channels are not a multiple of 8";
  return NULL;
}

// Tiles that fit, else the reason.
static const char *check(const Kernel *k, int bm, int bn, int tp) {
  ASizes s = sizes(k);
  if (k->at.tc && (bm % 16 || bn % 16)) return "TC: 16 query rows per warp and keys 16 at a time";
  if (s.e % tp) return "RSPLIT must divide v's channels";
  if (bm * tp > k->target->max_threads) return "too many threads per block";
  if (smem_bytes(k, bm, bn) > k->target->max_smem) return "the tiles exceed the target's shared memory (48 KiB)";
  if (s.e / tp + bn > 160) return "too many registers per thread (accumulators + scores)";
  return NULL;
}

// Defaults (RAW): small tiles, and enough threads per row that the
// accumulators stay at most 32 registers.
void attn_init(Kernel *k) {
  ASizes s = sizes(k);
  k->at.bm = 16, k->at.bn = 16, k->at.tp = 1;
  while (s.e / k->at.tp > 32 && s.e % (2 * k->at.tp) == 0) k->at.tp *= 2;
  while (k->at.bn > 1 && check(k, k->at.bm, k->at.bn, k->at.tp)) k->at.bn /= 2;
  while (k->at.bm > 1 && check(k, k->at.bm, k->at.bn, k->at.tp)) k->at.bm /= 2;
}

static bool pow2(int x) { return x > 0 && !(x & (x - 1)); }

int attn_opt(Kernel *k, Opt o, char *why, size_t n) {
  if (k->nopts == MAXOPTS) return snprintf(why, n, "too many opts"), -1;
  int bm = k->at.bm, bn = k->at.bn, tp = k->at.tp;
  for (int i = 0; i < k->nopts; i++)
    if (k->opts[i].op == o.op) return snprintf(why, n, "%s twice", opt_names[o.op]), -1;
  switch (o.op) {
  case OPT_QROWS: bm = o.amount; break;
  case OPT_KSTEP: bn = o.amount; break;
  case OPT_RSPLIT:
    if (k->at.tc) return snprintf(why, n, "RSPLIT: under TC a warp owns 16 rows"), -1;
    tp = o.amount;
    break;
  case OPT_TC: {  // 16 rows per warp: 2 threads per row is the same geometry for the scalar kernel (OpenCL)
    const char *no = k->target->tc ? tc_why(k) : "the target has no tensor cores";
    if (!no && k->nopts) no = "TC comes first (it fixes the threads per row)";
    if (no) return snprintf(why, n, "TC: %s", no), -1;
    Kernel t = *k;
    t.at.tc = true;
    const char *bad = check(&t, bm < 16 ? 16 : bm, bn < 16 ? 16 : bn, 2);
    if (bad) return snprintf(why, n, "TC: %s", bad), -1;
    k->at.tc = true, k->at.tp = 2, k->at.bm = bm < 16 ? 16 : bm, k->at.bn = bn < 16 ? 16 : bn;
    k->opts[k->nopts++] = o;
    return 0;
  }
  case OPT_STAGE: return snprintf(why, n, "STAGE: the fused attention does not pipeline its tiles yet"), -1;
  default: return snprintf(why, n, "%s does not apply to the fused attention (QROWS, KSTEP, RSPLIT do)", opt_names[o.op]), -1;
  }
  if (o.axis != 0 || !pow2(o.amount) || o.amount > 256)
    return snprintf(why, n, "%s(%d,%d): axis 0 and a power of two up to 256", opt_names[o.op], o.axis, o.amount), -1;
  const char *bad = check(k, bm, bn, tp);
  if (bad) return snprintf(why, n, "%s(0,%d): %s", opt_names[o.op], o.amount, bad), -1;
  k->at.bm = bm, k->at.bn = bn, k->at.tp = tp;
  k->opts[k->nopts++] = o;
  return 0;
}

static bool try_opt(Kernel *k, int op, int amount) {
  char why[256];
  return attn_opt(k, (Opt){op, 0, amount}, why, sizeof why) == 0;
}

// 64 rows per block where the rows are many (fewer K/V tile loads per row),
// 32 keys per step, threads per row so that each owns 16 channels.
void attn_hc(Kernel *k) {
  ASizes s = sizes(k);
  int tp = 1;
  while (s.e / tp > 16 && s.e % (2 * tp) == 0) tp *= 2;
  if (tp != k->at.tp) try_opt(k, OPT_RSPLIT, tp);
  int bm = s.lq >= 256 ? 64 : s.lq >= 64 ? 32 : 16;
  while (bm > 1 && !try_opt(k, OPT_QROWS, bm)) bm /= 2;
  for (int bn = 32; bn >= 8 && !try_opt(k, OPT_KSTEP, bn); bn /= 2) {}
}

// TC where the dtypes and sizes allow: 4 warps (64 rows) where the rows are
// many, 32 keys per step; else attn_hc.
void attn_tc(Kernel *k) {
  if (!try_opt(k, OPT_TC, 0)) {
    attn_hc(k);
    return;
  }
  ASizes s = sizes(k);
  int bm = s.lq >= 256 ? 64 : s.lq >= 64 ? 32 : 16;
  while (bm > 16 && !try_opt(k, OPT_QROWS, bm)) bm /= 2;
  for (int bn = 32; bn >= 16 && !try_opt(k, OPT_KSTEP, bn); bn /= 2) {}
}

void attn_random(Kernel *k, uint64_t *rng) {
  static const int ops[] = {OPT_QROWS, OPT_KSTEP, OPT_RSPLIT};
  lcg_next(rng);
  if ((*rng >> 40) & 1) try_opt(k, OPT_TC, 0);  // half the time, where it applies
  for (int s = 0; s < 3; s++) {
    lcg_next(rng);
    uint64_t r = *rng >> 33;
    try_opt(k, ops[r % 3], 1 << (r >> 3) % 7);
  }
}

int attn_actions(Opt *a) {
  int n = 0;
  static const int rows[] = {8, 16, 32, 64, 128}, keys[] = {8, 16, 32, 64}, split[] = {1, 2, 4, 8};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) a[n++] = (Opt){OPT_QROWS, 0, rows[i]};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) a[n++] = (Opt){OPT_KSTEP, 0, keys[i]};
  for (size_t i = 0; i < sizeof split / sizeof *split; i++) a[n++] = (Opt){OPT_RSPLIT, 0, split[i]};
  a[n++] = (Opt){OPT_TC, 0, 0};
  return n;
}

void attn_rename(Kernel *k) {
  ASizes s = sizes(k);
  int w = snprintf(k->name, sizeof k->name, "attn_%lld_%lld_%lld_%lld", (long long)s.z, (long long)s.lq, (long long)s.lk, (long long)s.d);
  if (s.e != s.d) w += snprintf(k->name + w, sizeof k->name - (size_t)w, "_e%lld", (long long)s.e);
  snprintf(k->name + w, sizeof k->name - (size_t)w, "_q%dk%d%s%d", k->at.bm, k->at.bn, k->at.tc ? "tc" : "s", k->at.tp);
}

void attn_lower(Kernel *k, Program *p) {
  ASizes s = sizes(k);
  memset(p, 0, sizeof *p);
  p->global[0] = (uint32_t)((s.lq + k->at.bm - 1) / k->at.bm), p->global[1] = (uint32_t)s.z, p->global[2] = 1;
  p->local[0] = (uint32_t)(k->at.bm * k->at.tp), p->local[1] = p->local[2] = 1;
  p->smem = smem_bytes(k, k->at.bm, k->at.bn) / 4;
}

int attn_operand_dt(const Kernel *k, int kop) {
  // the value's dtype: that of the op under the casts to f32 (which hold it exactly); an op of a
  // 16-bit dtype is rounded to it (and a pad's select keeps it), a load is its buffer's
  const KOp *o = &k->ops.v[kop];
  while (o->op == OP_CAST && o->dt == DT_F32) o = &k->ops.v[o->src[0]];
  return o->op == KO_LOAD ? k->args.v[o->slot].dt : o->dt;
}

// An operand's value as an expression: the load, then its casts rounding.
static void chain_expr(const Kernel *k, int x, const char *const *names, Str *o) {
  const KOp *op = &k->ops.v[x];
  if (op->op == KO_LOAD) {
    char ix[2048];
    sym_str((Sym *)&k->sym, op->idx, names, ix, sizeof ix);
    str_printf(o, "ld_%s(%s, %s)", sfx(k->args.v[op->slot].dt), k->args.v[op->slot].name, ix);
    return;
  }
  bool rnd = op->dt == DT_BF16 || op->dt == DT_F16;
  if (rnd) str_printf(o, "rnd_%s(", sfx(op->dt));
  chain_expr(k, op->src[0], names, o);
  if (rnd) str_printf(o, ")");
}

static void flit(char *buf, size_t n, double v);

// An operand that is a load and its casts (rendered as one expression).
static bool is_chain(const Kernel *k, int x) {
  for (; k->ops.v[x].op == OP_CAST; x = k->ops.v[x].src[0]) {}
  return k->ops.v[x].op == KO_LOAD && k->ops.v[x].valid < 0;
}

// The op whose value op i is: a cast to f32 holds its source's value exactly (no code)
static int alias(const Kernel *k, int i) {
  while (k->ops.v[i].op == OP_CAST && k->ops.v[i].dt == DT_F32) i = k->ops.v[i].src[0];
  return i;
}

// One op of a folded operand as a C expression of its sources' values
// (named pfx + op index); computed in float, rounded where the graph holds
// bf16/f16, as render.c does. A row statistic reads its shared-memory array.
static void op_text(const Dialect *D, const Kernel *k, int i, const int *vn, const char *const *names, char pfx, const char *row, Str *o) {
  const KOp *x = &k->ops.v[i];
  char a[3][24], ix[2048] = "", va[2048] = "", lit[64];
  for (int j = 0; j < 3; j++) snprintf(a[j], sizeof a[j], "%c%d", pfx, x->src[j] >= 0 ? vn[alias(k, x->src[j])] : -1);
  if (x->idx >= 0) sym_str((Sym *)&k->sym, x->idx, names, ix, sizeof ix);
  if (x->valid >= 0) sym_str((Sym *)&k->sym, x->valid, names, va, sizeof va);
  bool rnd = (x->dt == DT_BF16 || x->dt == DT_F16) && x->op < OP_COUNT;
  if (rnd) str_printf(o, "rnd_%s(", sfx(x->dt));
  if (x->op == KO_LOAD && x->valid >= 0) str_printf(o, "%s ? ld_%s(%s, %s) : 0.0f", va, sfx(k->args.v[x->slot].dt), k->args.v[x->slot].name, ix);
  else if (x->op == KO_LOAD) str_printf(o, "ld_%s(%s, %s)", sfx(k->args.v[x->slot].dt), k->args.v[x->slot].name, ix);
  else if (x->op == KO_GATHER)
    str_printf(o, "%s%sld_%s(%s, %s + gather_row(%s, %lld) * %lld)%s", va, va[0] ? " ? " : "", sfx(k->args.v[x->slot].dt),
               k->args.v[x->slot].name, ix, a[0], (long long)x->rows, (long long)x->stride, va[0] ? " : 0.0f" : "");
  else if (x->op == KO_ACC) snprintf(a[0], sizeof a[0], "st%d", i), str_printf(o, D->sload, a[0], row);
  else if (x->op == KO_IDX) str_printf(o, "(float)(%s)", ix);
  else if (x->op == KO_PADSEL) str_printf(o, "%s ? %s : 0.0f", va, a[0]);
  else if (x->op == OP_CONST) flit(lit, sizeof lit, x->c), str_printf(o, "%s", lit);
  else if (x->op == OP_CAST && x->dt == DT_BOOL) str_printf(o, "%s != 0.0f ? 1.0f : 0.0f", a[0]);
  else if (x->op == OP_WHERE) str_printf(o, "%s != 0.0f ? %s : %s", a[0], a[1], a[2]);
  else if (x->op < OP_COUNT && D->un[x->op]) str_printf(o, D->un[x->op], a[0]);
  else if (x->op < OP_COUNT && binops[x->op]) str_printf(o, binops[x->op], a[0], a[1]);
  else diag_fatal("internal: the fused attention cannot render op %d", x->op);
  if (rnd) str_printf(o, ")");
  (void)row;
}

// `float <pfx><i> = ...;` for every marked op, sources first, numbered by
// value as the uop path is: an op whose expression is one already written
// (a constant, the same load) is no new variable, vn[i] names the first
static void stmts(const Dialect *D, const Kernel *k, const bool *mark, const char *const *names, char pfx, const char *row,
                  int ind, int *vn, Str *o) {
  char **text = calloc((size_t)k->ops.n + 1, sizeof *text);
  for (int i = 0; i < k->ops.n; i++) vn[i] = i;
  for (int i = 0; i < k->ops.n; i++) {
    if (!mark[i] || alias(k, i) != i) continue;
    Str e = {0};
    op_text(D, k, i, vn, names, pfx, row, &e);
    text[i] = e.s;
    for (int j = 0; j < i && vn[i] == i; j++)
      if (text[j] && !strcmp(text[j], e.s)) vn[i] = j;
    if (vn[i] == i) str_printf(o, "%*sfloat %c%d = %s;\n", ind, "", pfx, i, e.s);
  }
  for (int i = 0; i < k->ops.n; i++) free(text[i]);
  free(text);
}

// The tile of one operand (q: rows i0.., k: rows j0..) into shared memory
// `arr` (rows of `stride` floats). A load and casts is one expression; a
// folded operand (RoPE, QK-norm) is computed in full, its row statistics
// first, one thread per row, into st<ACC>[rows] (the rows' channels are read
// twice: for the statistic, then for the values, from cache).
typedef struct { int root; char row, pfx; const char *row0; int rows; int64_t len; const char *arr; long long stride; } Tile;
static void tile_load(const Dialect *D, const Kernel *k, const Tile *t, const char *const *names, int nt, int ind, Str *o) {
  ASizes s = sizes(k);
  long long n = (long long)t->rows * s.d;
  if (is_chain(k, t->root)) {
    str_printf(o, "%*sfor (int t = tid; t < %lld; t += %d) {\n", ind, "", n, nt);
    str_printf(o, "%*s  int %c = %s + t / %lld, d = t %% %lld;\n", ind, "", t->row, t->row0, (long long)s.d, (long long)s.d);
    str_printf(o, "%*s  float x = %c < %lld ? ", ind, "", t->row, (long long)t->len);
    chain_expr(k, t->root, names, o);
    str_printf(o, " : 0.0f;\n%*s  ", ind, "");
  } else {
    bool *mark = calloc((size_t)k->ops.n, 1), *smark = calloc((size_t)k->ops.n, 1);
    int *acc = calloc((size_t)k->ops.n, sizeof *acc), nacc = 0, *vn = calloc((size_t)k->ops.n + 1, sizeof *vn);
    reach(k, t->root, mark, acc, &nacc);
    if (nacc) {
      str_printf(o, "%*sfor (int t = tid; t < %d; t += %d) {  // the rows' statistics (QK-norm's mean of squares)\n", ind, "", t->rows, nt);
      str_printf(o, "%*s  int %c = %s + t;\n", ind, "", t->row, t->row0);
      for (int a = 0; a < nacc; a++) {
        int dummy = 0, *none = calloc((size_t)k->ops.n, sizeof *none);
        reach(k, k->ops.v[acc[a]].src[0], smark, none, &dummy);
        free(none);
        str_printf(o, "%*s  float a%d = %s;\n", ind, "", acc[a], k->ops.v[acc[a]].c == OP_RMAX ? "-INFINITY" : "0.0f");
      }
      str_printf(o, "%*s  if (%c < %lld) {\n", ind, "", t->row, (long long)t->len);
      str_printf(o, "%*s    for (int r = 0; r < %lld; r++) {\n", ind, "", (long long)k->dims[s.nb + 4]);
      stmts(D, k, smark, names, 'u', "", ind + 6, vn, o);
      for (int a = 0; a < nacc; a++) {
        const KOp *x = &k->ops.v[acc[a]];
        if (x->c == OP_RMAX) str_printf(o, "%*s      a%d = %s(a%d, u%d);\n", ind, "", acc[a], D->fmax, acc[a], vn[alias(k, x->src[0])]);
        else str_printf(o, "%*s      a%d += u%d;\n", ind, "", acc[a], vn[alias(k, x->src[0])]);
      }
      str_printf(o, "%*s    }\n%*s  }\n", ind, "", ind, "");
      for (int a = 0; a < nacc; a++) {
        char arr[24], v[48];
        snprintf(arr, sizeof arr, "st%d", acc[a]);
        bool rnd = k->ops.v[acc[a]].dt == DT_BF16 || k->ops.v[acc[a]].dt == DT_F16;
        snprintf(v, sizeof v, rnd ? "rnd_%s(a%d)" : "%.0sa%d", sfx(k->ops.v[acc[a]].dt), acc[a]);
        str_printf(o, "%*s  ", ind, "");
        str_printf(o, D->sstore, arr, "t", v);
        str_printf(o, "\n");
      }
      str_printf(o, "%*s}\n%*s%s  // the statistics are read by every thread\n", ind, "", ind, "", D->barrier);
    }
    char row[64];
    snprintf(row, sizeof row, "t / %lld", (long long)s.d);
    str_printf(o, "%*sfor (int t = tid; t < %lld; t += %d) {\n", ind, "", n, nt);
    str_printf(o, "%*s  int %c = %s + t / %lld, d = t %% %lld;\n", ind, "", t->row, t->row0, (long long)s.d, (long long)s.d);
    str_printf(o, "%*s  float x = 0.0f;\n%*s  if (%c < %lld) {\n", ind, "", ind, "", t->row, (long long)t->len);
    stmts(D, k, mark, names, t->pfx, row, ind + 4, vn, o);
    str_printf(o, "%*s    x = %c%d;\n%*s  }\n%*s  ", ind, "", t->pfx, vn[alias(k, t->root)], ind, "", ind, "");
    free(mark);
    free(smark);
    free(acc);
    free(vn);
  }
  char ix[96];
  snprintf(ix, sizeof ix, t->stride == s.d ? "t" : "(t / %lld) * %lld + d", (long long)s.d, t->stride);
  str_printf(o, D->sstore, t->arr, ix, "x");
  str_printf(o, "\n%*s}\n", ind, "");
}

static void casts_expr(Str *o, const int8_t *c, int n, const char *v) {
  for (int i = n - 1; i >= 0; i--)
    if (c[i] == DT_BF16 || c[i] == DT_F16) str_printf(o, "rnd_%s(", sfx(c[i]));
  str_printf(o, "%s", v);
  for (int i = 0; i < n; i++)
    if (c[i] == DT_BF16 || c[i] == DT_F16) str_printf(o, ")");
}

static void flit(char *buf, size_t n, double v) {
  if (isinf((float)v) || isnan((float)v)) {
    snprintf(buf, n, "%s", isnan((float)v) ? "NAN" : v > 0 ? "INFINITY" : "(-INFINITY)");
    return;
  }
  snprintf(buf, n, "%.9g", (double)(float)v);
  if (!strpbrk(buf, ".en")) strncat(buf, ".0", n - strlen(buf) - 1);
  strncat(buf, "f", n - strlen(buf) - 1);
}

// A template's keys and their values; numbers formatted here.
typedef struct { const char *kv[48][2]; char num[48][32]; int n; } Keys;
static void key(Keys *t, const char *name, const char *value) {
  if (t->n == 48) diag_fatal("internal: too many template keys");
  t->kv[t->n][0] = name, t->kv[t->n++][1] = value;
}
static void key_n(Keys *t, const char *name, long long v) {
  snprintf(t->num[t->n], sizeof t->num[t->n], "%lld", v);
  key(t, name, t->num[t->n]);
}
static char *fill(const char *tmpl, Keys *t) { return template_fill(template_text(NULL, tmpl), (const char *const (*)[2])t->kv, t->n); }

// The store of the output element (z, i, e): value through the output's casts.
static char *store_text(const Kernel *k, const char *const *names, const char *value) {
  char st[2048];
  Str o = {0};
  sym_str((Sym *)&k->sym, k->ops.v[k->ops.n - 1].idx, names, st, sizeof st);
  str_printf(&o, "st_%s(%s, %s, ", sfx(k->args.v[0].dt), k->args.v[0].name, st);
  casts_expr(&o, k->at.ocast, k->at.nocast, value);
  str_printf(&o, ")");
  return o.s;
}

// TC (CUDA), templates/attention_step_tc.in: each warp owns 16 query rows and
// computes both products with mma.sync m16n8k16 (PTX ISA fragment layouts:
// lane = 4 g + t4; A holds rows g, g+8 and columns 2 t4, 2 t4 + 1 (+8); B
// columns g, rows 2 t4.. (+8); C rows g, g+8, columns 2 t4, 2 t4 + 1). The
// scores' C tiles are the probabilities' A tiles (no shuffle); a row's max
// over its 4 lanes goes through shared memory; each lane sums its own
// exp(s - m) and the 4 partial sums meet at the end.
static char *tc_step(const Kernel *k, const char *const *names, const char *lit) {
  ASizes s = sizes(k);
  int bn = k->at.bn, tdt = attn_operand_dt(k, k->at.v);
  long long qst = s.d + 1;
  Keys t = {0};
  char *st = store_text(k, names, "o[n * 4 + 2 * h + c] * rl");
  key_n(&t, "bn_2", bn / 2), key_n(&t, "bn_4", bn / 4), key_n(&t, "bn_8", bn / 8), key_n(&t, "bn_16", bn / 16);
  key_n(&t, "d", s.d), key_n(&t, "e", s.e), key_n(&t, "e_8", s.e / 8), key_n(&t, "e8", 8 * s.e), key_n(&t, "e9", 9 * s.e);
  key_n(&t, "qs_row", qst), key_n(&t, "qs_row8", 8 * qst), key_n(&t, "qs_row8_1", 8 * qst + 1);
  key_n(&t, "qs_row8_8", 8 * qst + 8), key_n(&t, "qs_row8_9", 8 * qst + 9);
  key_n(&t, "lk", s.lk), key_n(&t, "lq", s.lq);
  key(&t, "mma", tdt == DT_F16 ? "mma_m16n8k16_f16" : "mma_m16n8k16_bf16"), key(&t, "pk", tdt == DT_F16 ? "pk_f16" : "pk_bf16");
  key(&t, "scale_op", k->at.scale_op == OP_DIV ? "/" : "*"), key(&t, "scale", lit), key(&t, "store", st);
  char *text = fill("attention_step_tc.in", &t);
  free(st);
  return text;
}

// The scalar kernel, templates/attention_step.in: a thread's share of a
// row's channels; the row's scores from the tiles in shared memory.
// Under TC (OpenCL, C) it sums each row's exp in the 4 partial sums of the
// mma lanes that hold it (keys 2t, 2t+1 of every 8 in lane t, added at the
// end), so that all dialects give the same bits.
static char *scalar_step(const Dialect *D, const Kernel *k, const char *const *names, const char *lit) {
  ASizes s = sizes(k);
  long long ep = s.e / k->at.tp, qst = s.d + 1;
  Keys t = {0};
  char qx[96], kx[96], vx[128];
  Str q = {0}, kk = {0}, v = {0}, ea = {0}, ep_ = {0}, pr = {0};
  snprintf(qx, sizeof qx, "row * %lld + d", qst);
  snprintf(kx, sizeof kx, "jj * %lld + d", (long long)s.d);
  snprintf(vx, sizeof vx, "jj * %lld + part * %lld + c", (long long)s.e, ep);
  str_printf(&q, D->sload, "qs", qx), str_printf(&kk, D->sload, "ks", kx), str_printf(&v, D->sload, "vs", vx);
  str_printf(&ea, D->un[OP_EXP], "m - mt"), str_printf(&ep_, D->un[OP_EXP], "sc[jj] - mt");
  casts_expr(&pr, k->at.pcast, k->at.npcast, "p");
  char *st = store_text(k, names, "acc[c] * rl");
  key_n(&t, "bn", k->at.bn), key_n(&t, "d", s.d), key_n(&t, "lk", s.lk), key_n(&t, "lq", s.lq), key_n(&t, "ep", ep);
  key(&t, "unroll", D->unroll), key(&t, "fmax", D->fmax), key(&t, "q_d", q.s), key(&t, "k_d", kk.s), key(&t, "v_c", v.s);
  key(&t, "scale_op", k->at.scale_op == OP_DIV ? "/" : "*"), key(&t, "scale", lit);
  key(&t, "exp_alpha", ea.s), key(&t, "exp_p", ep_.s), key(&t, "p_rounded", pr.s), key(&t, "store", st);
  key(&t, "rescale_sum", k->at.tc ? "    for (int c = 0; c < 4; c++) lp[c] *= alpha;" : "    l *= alpha;");
  key(&t, "add_p", k->at.tc ? "      if (jj % 2 == 0) ph = p;\n      else lp[(jj % 8) / 2] += ph + p;" : "      l += p;");
  key(&t, "sum", k->at.tc ? "(lp[0] + lp[1] + lp[2] + lp[3])" : "l");
  char *text = fill("attention_step.in", &t);
  free(q.s), free(kk.s), free(v.s), free(ea.s), free(ep_.s), free(pr.s), free(st);
  return text;
}

// The kernel, templates/attention.in: its frame, the operands' tile loads
// (generated from their KOps), then the step and store of one of the above.
char *attn_render(Kernel *k, Program *p) {
  const Dialect *D = k->target->dialect;
  ASizes s = sizes(k);
  int bm = k->at.bm, bn = k->at.bn, tp = k->at.tp, nt = bm * tp;
  long long ep = s.e / tp, qst = s.d + 1;  // qs rows padded by one: threads of a warp read different rows
  bool tc = k->at.tc && D->mma;  // else the scalar kernel, 2 threads per row (the same geometry)
  (void)p;
  // names of the index variables in the operands' and the store's expressions
  char zn[MAXDIM][16];
  const char *names[MAXAXES + 1];
  for (int a = 0; a < s.nb; a++) snprintf(zn[a], sizeof zn[a], "z%d", a), names[a] = zn[a];
  names[s.nb] = "i", names[s.nb + 1] = "e", names[s.nb + 2] = "j", names[s.nb + 3] = "d", names[s.nb + 4] = "r";
  Str how = {0}, sig = {0}, stats = {0}, batch = {0}, lanes = {0}, qt = {0}, accs = {0}, kt = {0}, vv = {0}, vst = {0};
  if (tc) str_printf(&how, "// a warp per 16 rows, both products on mma.sync m16n8k16 (TC); the scores are never stored");
  else
    str_printf(&how, "// %d thread%s per row (%lld output channels each); the scores are never stored%s", tp, tp == 1 ? "" : "s", ep,
               k->at.tc ? "\n// (TC: mma.sync on CUDA; here the same function, scalar, in the same launch geometry)" : "");
  str_printf(&sig, "%s", D->head);
  dialect_kernel(&sig, D, (const uint32_t[3]){(uint32_t)nt, 1, 1});
  str_printf(&sig, " %s(", k->name);
  for (int a = 0; a < k->args.n; a++) {
    char ty[64];
    snprintf(ty, sizeof ty, a == 0 ? D->param_fmt : D->const_param_fmt, D->type[k->args.v[a].dt]);
    str_printf(&sig, "%s%s %s", a ? ", " : "", ty, k->args.v[a].name);
  }
  str_printf(&sig, ")");
  for (int a = 0; a < 2; a++) {  // the row statistics folded into q's and k's loads
    bool *mark = calloc((size_t)k->ops.n, 1);
    int *acc = calloc((size_t)k->ops.n, sizeof *acc), nacc = 0;
    reach(k, a ? k->at.k : k->at.q, mark, acc, &nacc);
    for (int x = 0; x < nacc; x++) str_printf(&stats, "  %s st%d[%d];  // a statistic of each %s row\n", D->smem, acc[x], a ? bn : bm, a ? "key" : "query");
    free(mark);
    free(acc);
  }
  // batch indices from the block's y (row-major over the batch axes), those the indices use
  uint32_t used = 0;
  for (int x = 0; x < k->ops.n; x++) {
    if (k->ops.v[x].idx >= 0) used |= k->sym.n.v[k->ops.v[x].idx].vars;
    if (k->ops.v[x].valid >= 0) used |= k->sym.n.v[k->ops.v[x].valid].vars;
  }
  // (zz is declared only where used: nvcc warns of a variable set and never read, (void) or not)
  if (used & ((1u << s.nb) - 1)) str_printf(&batch, "  int zz = %s;\n", D->group[1]);
  for (int a = s.nb - 1, div = 1; a >= 0; a--) {
    if (used & (1u << a)) str_printf(&batch, "  int z%d = (zz / %d) %% %lld;\n", a, div, (long long)k->dims[a]);
    div *= (int)k->dims[a];
  }
  if (tc) {
    str_printf(&lanes, "  __shared__ float red[%d];  // per row, its 4 lanes' partial max (each step), then sum (at the end)\n", 4 * bm);
    str_printf(&lanes, "  int lane = tid %% 32, g = lane / 4, t4 = lane %% 4, r0 = (tid / 32) * 16 + g;  // rows r0, r0 + 8 of the block\n");
    str_printf(&accs, "  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f, o[%lld];  // o: the m16n8 accumulator tiles over v's channels\n", (long long)s.e / 2);
    str_printf(&accs, "%s\n  for (int c = 0; c < %lld; c++) o[c] = 0.0f;\n", D->unroll, (long long)s.e / 2);
  } else {
    str_printf(&lanes, "  int row = tid / %d, part = tid %% %d;\n", tp, tp);
    if (k->at.tc) str_printf(&accs, "  float m = -INFINITY, lp[4] = {0.0f, 0.0f, 0.0f, 0.0f}, ph = 0.0f, acc[%lld];\n", ep);
    else str_printf(&accs, "  float m = -INFINITY, l = 0.0f, acc[%lld];\n", ep);
    str_printf(&accs, "%s\n  for (int c = 0; c < %lld; c++) acc[c] = 0.0f;\n", D->unroll, ep);
  }
  tile_load(D, k, &(Tile){k->at.q, 'i', 'x', "i0", bm, s.lq, "qs", qst}, names, nt, 2, &qt);
  tile_load(D, k, &(Tile){k->at.k, 'j', 'y', "j0", bn, s.lk, "ks", s.d}, names, nt, 4, &kt);
  chain_expr(k, k->at.v, names, &vv);
  str_printf(&vst, D->sstore, "vs", "t", "x");
  char lit[64];
  flit(lit, sizeof lit, k->at.scale);
  char *step = tc ? tc_step(k, names, lit) : scalar_step(D, k, names, lit);
  Keys t = {0};
  key(&t, "scale_op", k->at.scale_op == OP_DIV ? "/" : "*"), key_n(&t, "bn", bn), key_n(&t, "bm", bm), key(&t, "how", how.s);
  key(&t, "signature", sig.s), key(&t, "smem", D->smem), key_n(&t, "qs_size", bm * qst), key_n(&t, "ks_size", (long long)bn * s.d);
  key_n(&t, "vs_size", (long long)bn * s.e), key(&t, "stat_arrays", stats.s ? stats.s : "");
  key(&t, "thread", D->thread[0]), key(&t, "group_x", D->group[0]);
  key(&t, "batch_indices", batch.s ? batch.s : ""), key(&t, "lanes", lanes.s), key(&t, "q_tile", qt.s), key(&t, "accumulators", accs.s);
  key_n(&t, "lk", s.lk), key(&t, "barrier", D->barrier), key(&t, "k_tile", kt.s), key_n(&t, "threads", nt), key_n(&t, "e", s.e);
  key(&t, "v_value", vv.s), key(&t, "v_store", vst.s), key(&t, "step_and_store", step);
  char *text = fill("attention.in", &t);
  free(how.s), free(sig.s), free(stats.s), free(batch.s), free(lanes.s), free(qt.s), free(accs.s), free(kt.s), free(vv.s), free(vst.s);
  free(step);
  return text;
}
