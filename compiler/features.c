// features.c — a fixed-length description of an optimized kernel, the cost
// model's input (costmodel.c).
//
// Computed from the kernel IR (its axes and roles, its KOps' symbolic
// indices) and from the lowered uops (counts per thread, each weighted by the
// trip counts of the loops around it), never from the rendered text. Sizes
// are log2(x), counts log2(1 + x): the model splits on them, and a tile twice as
// large is one step. The list (FEATURES, fluxcc.h) is the documentation (`fluxcc --dump
// features` prints it as the header); FEATURE_VERSION says which list a
// record or a model was made with, and goes up whenever a line changes.
#include "fluxcc.h"

#include <math.h>
#include <string.h>

const char *const feature_name[NFEATURES] = {
#define X(name, what) #name,
  FEATURES(X)
#undef X
};
const char *const feature_what[NFEATURES] = {
#define X(name, what) what,
  FEATURES(X)
#undef X
};

enum {
#define X(name, what) F_##name,
  FEATURES(X)
#undef X
};

static float lg(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

static double prod_of(const Kernel *k, int role) {
  double p = 1;
  for (int i = 0; i < k->naxes; i++)
    if (k->role[i] == role) p *= (double)k->dims[i];
  return p;
}

// the axis that varies fastest across a block's threads (the last thread
// axis goes on x); without threads, the last grid axis. -1: none.
static int fastest_axis(const Kernel *k) {
  int last_thread = -1, last_global = -1;
  for (int i = 0; i < k->naxes; i++) {
    if (k->role[i] == AX_LOCAL || k->role[i] == AX_GROUP) last_thread = i;
    if (k->role[i] == AX_GLOBAL) last_global = i;
  }
  return last_thread >= 0 ? last_thread : last_global;
}

// the innermost reduce axis a thread loops over (reduce, then unroll), -1: none
static int inner_reduce_axis(const Kernel *k) {
  int r = -1;
  for (int i = 0; i < k->naxes; i++)
    if (k->role[i] == AX_REDUCE || k->role[i] == AX_UNROLL || k->role[i] == AX_RVEC) r = i;
  return r;
}

// Memory accesses of the KOps: how each load's address moves with the
// fastest thread axis (0: every thread reads the same value; 1: neighbours
// read neighbours; else strided) and with the innermost reduce axis.
static void access_features(Kernel *k, float *f) {
  int fx = fastest_axis(k), rx = inner_reduce_axis(k);
  double loads = 0, bcast = 0, coal = 0, strided = 0, kcontig = 0, in16 = 0, gathers = 0;
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->op != KO_LOAD && o->op != KO_GATHER && o->op != KO_STORE) continue;
    gathers += o->op == KO_GATHER;
    bool linear = true;
    int64_t cx = fx >= 0 && o->idx >= 0 ? sym_coef(&k->sym, o->idx, fx, &linear) : 0;
    if (o->op == KO_STORE) {
      f[F_store_coalesced] = linear && (cx == 1 || cx == -1);
      continue;
    }
    loads++;
    in16 += dtype_size[o->dt] == 2;
    if (!linear) strided++;
    else if (cx == 0) bcast++;
    else if (cx == 1 || cx == -1) coal++;
    else strided++;
    bool rl = true;
    int64_t cr = rx >= 0 && o->idx >= 0 ? sym_coef(&k->sym, o->idx, rx, &rl) : 0;
    kcontig += rl && (cr == 1 || cr == -1);
  }
  if (loads > 0) {
    f[F_load_broadcast] = (float)(bcast / loads), f[F_load_coalesced] = (float)(coal / loads);
    f[F_load_strided] = (float)(strided / loads), f[F_load_k_contiguous] = (float)(kcontig / loads);
    f[F_in_16bit] = (float)(in16 / loads), f[F_load_gather] = (float)(gathers / loads);
  }
  f[F_loads_kernel] = lg(loads);
}

// Uop counts per thread: each weighted by the trip counts of the loops around it.
static void uop_features(const Program *p, float *f) {
  double mult[64], m = 1, ld = 0, ldv = 0, st = 0, alu = 0, acc = 0, sld = 0, bar = 0, iters = 1, wmma = 0;
  int depth = 0, maxdepth = 0;
  mult[0] = 1;
  for (int i = 0; i < p->u.n; i++) {
    const UOp *u = &p->u.v[i];
    double lanes = u->vw ? u->vw : 1;
    switch (u->op) {
    case U_RANGE:
      if (depth < 63) mult[++depth] = m, m *= (double)(u->arg > 0 ? u->arg : 1);
      if (depth > maxdepth) maxdepth = depth;
      if (m > iters) iters = m;
      break;
    case U_ENDRANGE:
      if (depth > 0) m = mult[depth--];
      break;
    case U_LOAD:
      if (u->vw) ldv += m;
      else ld += m;
      break;
    case U_STORE: st += m * lanes; break;
    case U_ALU: alu += m * lanes; break;
    case U_ACCUM: alu += m * lanes; break;
    case U_DEFACC: acc += lanes; break;
    case U_SLOAD: sld += m * lanes; break;
    case U_BARRIER: bar += m; break;
    case U_WMMA: wmma += m; break;
    default: break;
    }
  }
  f[F_loads] = lg(ld), f[F_vector_loads] = lg(ldv), f[F_stores] = lg(st), f[F_alu] = lg(alu), f[F_accumulators] = lg(acc);
  f[F_shared_loads] = lg(sld), f[F_barriers] = lg(bar), f[F_loop_iters] = lg(iters), f[F_loop_depth] = (float)maxdepth;
  f[F_mma] = lg(wmma), f[F_uops] = lg(p->u.n);
  f[F_shared_bytes] = lg((double)p->smem * 4);
  double groups = (double)p->global[0] * p->global[1] * p->global[2], threads = (double)p->local[0] * p->local[1] * p->local[2];
  f[F_groups] = lg(groups), f[F_block_threads] = lg(threads), f[F_work_items] = lg(groups * threads);
  f[F_alu_per_load] = lg(alu / (ld + ldv + sld + 1));
}

void kernel_features(Kernel *k, const Program *p, float *f) {
  memset(f, 0, sizeof(float) * NFEATURES);
  static const int roles[] = {AX_GLOBAL, AX_LOCAL, AX_GROUP, AX_REDUCE, AX_UNROLL, AX_RVEC, AX_UPCAST, AX_VEC, AX_TCM, AX_TCN, AX_TCK};
  for (int i = 0; i < (int)(sizeof roles / sizeof *roles); i++) f[F_size_global + i] = (float)log2(prod_of(k, roles[i]));
  f[F_outputs_per_thread] = lg(prod_of(k, AX_UPCAST) * prod_of(k, AX_VEC));
  int vmax = 0;
  for (int i = 0; i < k->naxes; i++)
    if ((k->role[i] == AX_VEC || k->role[i] == AX_RVEC) && k->dims[i] > vmax) vmax = (int)k->dims[i];
  f[F_vector_width] = lg(vmax);
  f[F_flops] = lg((double)k->flops), f[F_bytes] = lg((double)k->bytes);
  f[F_intensity] = (float)log2(((double)k->flops + 1) / ((double)k->bytes + 1));
  f[F_tensor_cores] = k->tc_dt >= 0 || (k->kind == KERNEL_ATTN && k->at.tc);
  f[F_tf32] = k->tc_dt == DT_F32;
  f[F_staged] = k->stage || (k->kind == KERNEL_ATTN && k->at.stage);
  f[F_nolocals] = k->nolocals;
  f[F_reduction] = k->red_op >= 0;
  f[F_out_16bit] = k->args.n > 0 && dtype_size[k->args.v[0].dt] == 2;
  f[F_nopts] = (float)k->nopts;
  if (k->kind == KERNEL_ATTN) {
    f[F_attention] = 1;
    f[F_attn_rows] = lg(k->at.bm), f[F_attn_keys] = lg(k->at.bn), f[F_attn_split] = lg(k->at.tp);
  } else access_features(k, f);
  uop_features(p, f);
}

// --dump features: the list, then one row per unique kernel
void features_dump(Ctx *c, Schedule *s, FILE *out) {
  fprintf(out, "# fluxcc features, version %d: %d per kernel (sizes as log2 x, counts as log2(1 + x))\n", FEATURE_VERSION, NFEATURES);
  for (int i = 0; i < NFEATURES; i++) fprintf(out, "#  %2d %-20s %s\n", i, feature_name[i], feature_what[i]);
  fprintf(out, "kernel\tname");
  for (int i = 0; i < NFEATURES; i++) fprintf(out, "\t%s", feature_name[i]);
  fprintf(out, "\n");
  for (int u = 0; u < s->k.n; u++) {
    Program p;
    float f[NFEATURES];
    lower_kernel(c, s, &s->k.v[u], &p);
    kernel_features(&s->k.v[u], &p, f);
    program_free(&p);
    fprintf(out, "%d\t%s", u, s->k.v[u].name);
    for (int i = 0; i < NFEATURES; i++) fprintf(out, "\t%.4g", f[i]);
    fprintf(out, "\n");
  }
}
