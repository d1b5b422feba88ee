// lower.c — a kernel's expression DAG → a linear list of uops:
//   params; block/thread indices; values that do not depend on the reduce;
//   the accumulator and its loops with what does; then what reads the result,
//   and the store. Index arithmetic stays symbolic (see symbolic.c) and is
//   printed by the renderer.
#include "fluxcc.h"

#include <stdlib.h>
#include <string.h>

static const char *const uop_name[] = {
#define X(u) #u,
  UOPS(X)
#undef X
};

static int emit(Program *p, UOp u) {
  vec_push(p->u, u);
  return p->u.n - 1;
}

// Map output axes to the launch grid. RAW: one thread per block, the last
// axis on x. More than three axes, or y/z beyond CUDA's 65535, fold into
// fewer grid dimensions and are recovered with / and %.
static void map_grid(Ctx *c, Kernel *k, Program *p) {
  (void)c;
  for (int i = 0; i < 3; i++) p->global[i] = p->local[i] = 1;
  int n = k->nout;
  if (n == 0) return;
  int64_t prod = 1;
  for (int i = 0; i < n; i++) prod *= k->dims[i];
  // grid dimension of each axis, and how to recover it from that dimension's index
  int dim_of[MAXDIM * 2];
  int64_t size[3] = {1, 1, 1};
  if (n <= 3) {
    for (int i = 0; i < n; i++) dim_of[i] = n - 1 - i;
  } else {
    for (int i = 0; i < n; i++) dim_of[i] = i < n - 2 ? 2 : n - 1 - i;
  }
  for (int i = 0; i < n; i++) size[dim_of[i]] *= k->dims[i];
  if (size[1] > 65535 || size[2] > 65535) {
    for (int i = 0; i < n; i++) dim_of[i] = 0;
    size[0] = prod, size[1] = size[2] = 1;
  }
  if (size[0] > 0x7fffffff) diag_fatal("kernel %s: %lld blocks exceed the grid limit", k->name, (long long)size[0]);
  for (int d = 0; d < 3; d++) p->global[d] = (uint32_t)size[d];
  // axes sharing a grid dimension: the last one varies fastest
  for (int i = 0; i < n; i++) {
    int64_t div = 1;
    for (int j = i + 1; j < n; j++)
      if (dim_of[j] == dim_of[i]) div *= k->dims[j];
    bool alone = size[dim_of[i]] == k->dims[i];
    UOp u = {.op = U_SPECIAL, .src = {-1, -1, -1}, .arg = dim_of[i], .arg2 = alone ? 1 : div, .arg3 = alone ? 0 : (int32_t)k->dims[i]};
    snprintf(u.name, sizeof u.name, "gidx%d", i);
    emit(p, u);
  }
}

void lower_kernel(Ctx *c, Schedule *s, Kernel *k, Program *p) {
  (void)s;
  memset(p, 0, sizeof *p);
  for (int a = 0; a < k->args.n; a++) {
    UOp u = {.op = U_PARAM, .dt = (uint8_t)k->args.v[a].dt, .src = {-1, -1, -1}, .arg = a};
    snprintf(u.name, sizeof u.name, "data%d", a);
    emit(p, u);
  }
  map_grid(c, k, p);
  int n = k->ops.n;
  int *val = xcalloc((size_t)n, sizeof *val);         // KOp -> uop
  bool *after = xcalloc((size_t)n, sizeof *after);    // depends on the accumulator
  for (int i = 0; i < n; i++) {
    KOp *o = &k->ops.v[i];
    after[i] = o->op == KO_ACC;
    for (int j = 0; j < 3; j++)
      if (o->src[j] >= 0) after[i] |= after[o->src[j]];
  }
  int nv = 0, nacc = 0;
  // one value uop for KOp i
  #define VALUE(i) for (;;) { \
      KOp *o = &k->ops.v[i]; \
      UOp u = {.op = U_ALU, .dt = (uint8_t)o->dt, .alu = (int16_t)o->op, .src = {-1, -1, -1}, .arg = o->idx, .arg2 = o->valid}; \
      for (int j = 0; j < 3; j++) if (o->src[j] >= 0) u.src[j] = val[o->src[j]]; \
      if ((o->op == OP_CAST && o->dt == DT_F32) || (o->op == OP_CAST && k->ops.v[o->src[0]].dt == DT_BOOL && o->dt != DT_BOOL)) { \
        val[i] = val[o->src[0]]; break; }  /* exact in a float register: no code */ \
      if (o->op == KO_LOAD) u.op = U_LOAD, u.arg3 = o->slot, u.dt = (uint8_t)k->args.v[o->slot].dt; \
      else if (o->op == OP_CONST) u.op = U_FCONST, u.f = o->c; \
      else if (o->op == KO_IDX) u.op = U_INDEXF; \
      snprintf(u.name, sizeof u.name, "%s%d", u.op == U_LOAD ? "val" : u.op == U_FCONST ? "cst" : "alu", nv++); \
      val[i] = emit(p, u); break; }
  // before the loop: what depends on neither the reduce variables nor the result
  for (int i = 0; i < n; i++) {
    KOp *o = &k->ops.v[i];
    if (!o->in_loop && !after[i] && o->op != KO_STORE) VALUE(i);
  }
  int acc = -1;
  if (k->nred) {
    int ki = -1;
    for (int i = 0; i < n; i++)
      if (k->ops.v[i].op == KO_ACC) ki = i;
    UOp d = {.op = U_DEFACC, .dt = DT_F32, .alu = (int16_t)k->ops.v[ki].c, .src = {-1, -1, -1}};
    snprintf(d.name, sizeof d.name, "acc%d", nacc++);
    acc = emit(p, d);
    for (int r = 0; r < k->nred; r++) {
      UOp u = {.op = U_RANGE, .arg = k->dims[k->nout + r], .src = {-1, -1, -1}};
      snprintf(u.name, sizeof u.name, "ridx%d", r);
      emit(p, u);
    }
    for (int i = 0; i < n; i++)
      if (k->ops.v[i].in_loop) VALUE(i);
    UOp u = {.op = U_ACCUM, .dt = DT_F32, .alu = (int16_t)k->ops.v[ki].c, .src = {acc, val[k->ops.v[ki].src[0]], -1}};
    emit(p, u);
    for (int r = 0; r < k->nred; r++) emit(p, (UOp){.op = U_ENDRANGE, .dt = DT_F32, .src = {-1, -1, -1}});
    // the reduce's value: the accumulator rounded to the reduce's dtype
    int rdt = k->ops.v[ki].dt;
    if (rdt == DT_BF16 || rdt == DT_F16) {
      UOp rv = {.op = U_ROUND, .dt = (uint8_t)rdt, .src = {acc, -1, -1}};
      snprintf(rv.name, sizeof rv.name, "alu%d", nv++);
      val[ki] = emit(p, rv);
    } else {
      val[ki] = acc;
    }
  }
  for (int i = 0; i < n; i++) {
    KOp *o = &k->ops.v[i];
    if (o->op == KO_ACC || o->op == KO_STORE || o->in_loop || !after[i]) continue;
    VALUE(i);
  }
  KOp *st = &k->ops.v[n - 1];
  emit(p, (UOp){.op = U_STORE, .dt = (uint8_t)k->args.v[0].dt, .src = {val[st->src[0]], -1, -1}, .arg = st->idx, .arg2 = -1, .arg3 = 0});
  #undef VALUE
  free(val);
  free(after);
}

void uops_dump(Kernel *k, Program *p, FILE *out) {
  static const char *const names[] = {"gidx0", "gidx1", "gidx2", "gidx3", "gidx4", "gidx5", "gidx6", "gidx7"};
  const char *vn[2 * MAXDIM];
  static const char *const rnames[] = {"ridx0", "ridx1", "ridx2", "ridx3", "ridx4", "ridx5", "ridx6", "ridx7"};
  for (int i = 0; i < k->nout + k->nred; i++) vn[i] = i < k->nout ? names[i] : rnames[i - k->nout];
  char ix[2048], va[2048];
  fprintf(out, "  grid [%u,%u,%u] block [%u,%u,%u]\n", p->global[0], p->global[1], p->global[2], p->local[0], p->local[1],
          p->local[2]);
  for (int i = 0; i < p->u.n; i++) {
    UOp *u = &p->u.v[i];
    fprintf(out, "  %3d %-8s %-5s %-6s", i, uop_name[u->op], u->op == U_RANGE || u->op == U_SPECIAL ? "int" : dtype_name[u->dt],
            u->name);
    if (u->op == U_ALU || u->op == U_DEFACC || u->op == U_ACCUM)
      fprintf(out, " %s", u->alu < OP_COUNT ? op_name[u->alu] : u->alu == KO_PADSEL ? "padsel" : "?");
    if (u->op == U_ALU && u->alu == KO_PADSEL) sym_str(&k->sym, (int)u->arg2, vn, va, sizeof va), fprintf(out, " if %s", va);
    for (int j = 0; j < 3; j++)
      if (u->src[j] >= 0) fprintf(out, " %%%d", u->src[j]);
    switch (u->op) {
    case U_PARAM: fprintf(out, " slot %lld", (long long)u->arg); break;
    case U_SPECIAL: fprintf(out, " grid.%c /%lld %%%d", "xyz"[u->arg], (long long)u->arg2, u->arg3); break;
    case U_RANGE: fprintf(out, " 0..%lld", (long long)u->arg); break;
    case U_FCONST: fprintf(out, " %.9g", u->f); break;
    case U_LOAD: case U_STORE:
      sym_str(&k->sym, (int)u->arg, vn, ix, sizeof ix);
      fprintf(out, " data%d[%s]", u->arg3, ix);
      if (u->arg2 >= 0) sym_str(&k->sym, (int)u->arg2, vn, va, sizeof va), fprintf(out, " if %s", va);
      break;
    case U_INDEXF: sym_str(&k->sym, (int)u->arg, vn, ix, sizeof ix); fprintf(out, " %s", ix); break;
    }
    fprintf(out, "\n");
  }
}

void program_free(Program *p) {
  free(p->u.v);
  memset(p, 0, sizeof *p);
}
