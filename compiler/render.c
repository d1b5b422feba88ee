// render.c — uops → source text. One renderer, a dialect per target
// (target.c: CUDA C++, OpenCL C, C11 with OpenMP) and the helper preludes in
// templates/<target>/.
// Values live in float registers; bf16/f16 are rounded wherever the graph
// holds them in that dtype (rnd_bf16), so kernels compute what the
// interpreter computes. A vector uop (VEC) is one floatN in OpenCL and one
// variable per lane in CUDA and C, which have no vector arithmetic.
#include "fluxcc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static const char *const smem_name[] = {"temp0", "tc_tile", "tc_stage", "tc_stage16"};

static const char *sfx(int dt) { return dt >= 0 && dt < DT_COUNT ? dtype_name[dt] : "f32"; }   // of ld_bf16, st_f32, rnd_f16 ...

// a float literal that reads back as the same float
static void flit(char *buf, size_t n, double v) {
  float f = (float)v;
  if (isnan(f)) snprintf(buf, n, "NAN");
  else if (isinf(f)) snprintf(buf, n, f > 0 ? "INFINITY" : "(-INFINITY)");
  else {
    snprintf(buf, n, "%.9g", (double)f);
    if (!strpbrk(buf, ".en")) strncat(buf, ".0", n - strlen(buf) - 1);
    strncat(buf, "f", n - strlen(buf) - 1);
    if (f < 0) {
      memmove(buf + 1, buf, strlen(buf) + 1);
      buf[0] = '(';
      strncat(buf, ")", n - strlen(buf) - 1);
    }
  }
}

// variable names: one per axis (gidx, lidx, ridx), and the group combine loop's
static void var_names(Kernel *k, const char **names, char store[][16]) {
  for (int i = 0; i < k->naxes; i++) {
    axis_name(k, i, store[i], 16);
    names[i] = store[i];
  }
  names[k->naxes] = "gi";
}

// mma.sync on CUDA (m16n8k16; f32: m16n8k8 on tf32); on OpenCL the same
// fragment layouts through local memory, MMA_*_EMU in templates/opencl/
// kernel_prelude.cl: a wrong layout gives wrong numbers on both.
static void render_wmma(Str *o, Kernel *k, Program *p, UOp *x, const Dialect *D, int depth) {
  const int *e = &p->extra.v[x->arg];
  const UOp *u = p->u.v;
  const char *ty = x->dt == DT_BF16 ? "bf16" : "f16";
  char gs[64], ts[64], ws[256];
  const char *names[MAXAXES + 1];
  char store[MAXAXES + 1][16];
  for (int i = 0; i < k->naxes; i++) axis_name(k, i, store[i], 16), names[i] = store[i];
  names[k->naxes] = "gi";
  sym_str(&k->sym, e[16], names, gs, sizeof gs);
  sym_str(&k->sym, e[17], names, ts, sizeof ts);
  sym_str(&k->sym, e[18], names, ws, sizeof ws);  // this warp's tiles in tc_tile
  str_printf(o, "%*s", 2 * depth, "");
  if (x->dt == DT_F32 && D->mma)  // tf32: m16n8k8, operands rounded to tf32 (cvt.rna)
    str_printf(o, "mma_m16n8k8_tf32(%s, %s, %s, %s, tf32(%s), tf32(%s), tf32(%s), tf32(%s), tf32(%s), tf32(%s));\n", u[e[12]].name,
               u[e[13]].name, u[e[14]].name, u[e[15]].name, u[e[0]].name, u[e[1]].name, u[e[2]].name, u[e[3]].name, u[e[8]].name,
               u[e[9]].name);
  else if (x->dt == DT_F32)
    str_printf(o, "MMA_M16N8K8_TF32_EMU(tc_tile + (%s)*384, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s);\n", ws, gs, ts,
               u[e[12]].name, u[e[13]].name, u[e[14]].name, u[e[15]].name, u[e[0]].name, u[e[1]].name, u[e[2]].name,
               u[e[3]].name, u[e[8]].name, u[e[9]].name);
  else if (D->mma)  // A row-major 16x16, B column-major 16x8, C 16x8 f32: two values per register
    str_printf(o, "mma_m16n8k16_%s(%s, %s, %s, %s,\n%*s    pk_%s(%s, %s), pk_%s(%s, %s), pk_%s(%s, %s), pk_%s(%s, %s), pk_%s(%s, %s), pk_%s(%s, %s));\n",
               ty, u[e[12]].name, u[e[13]].name, u[e[14]].name, u[e[15]].name, 2 * depth, "", ty, u[e[0]].name, u[e[1]].name, ty,
               u[e[2]].name, u[e[3]].name, ty, u[e[4]].name, u[e[5]].name, ty, u[e[6]].name, u[e[7]].name, ty, u[e[8]].name,
               u[e[9]].name, ty, u[e[10]].name, u[e[11]].name);
  else {
    str_printf(o, "MMA_M16N8K16_EMU(tc_tile + (%s)*384, %s, %s, %s, %s, %s, %s,\n%*s   ", ws, gs, ts, u[e[12]].name, u[e[13]].name,
               u[e[14]].name, u[e[15]].name, 2 * depth, "");
    for (int j = 0; j < 12; j++) str_printf(o, " %s%s", u[e[j]].name, j < 11 ? "," : ");\n");
  }
}

// The text of value id in lane l. Without vector types a vector is one
// variable per lane (name_l); a PACK's lanes are its scalars.
static const char *operand(const Program *p, int id, int l, bool lanes, char *buf) {
  const UOp *x = &p->u.v[id];
  if (!lanes || !x->vw) return x->name;
  if (x->op == U_PACK) return p->u.v[p->extra.v[x->arg + l]].name;
  snprintf(buf, 32, "%s_%d", x->name, l);
  return buf;
}

// Without vector types: which lanes of each value are read (bit l; bit 0 of
// a scalar), so that what nothing reads gets no variable (and no
// unused-variable warning): lane l of a vector op reads lane l of its vector
// sources, a PACK's lane l its l-th scalar; an accumulator's lanes are those
// read after its loop. NULL (all read) in a kernel without vectors.
static uint16_t *lanes_read(const Program *p) {
  bool any = false;
  for (int i = 0; i < p->u.n; i++) any |= p->u.v[i].vw != 0;
  if (!any) return NULL;
  uint16_t *m = xcalloc((size_t)p->u.n + 1, sizeof *m);
  for (int i = p->u.n - 1; i >= 0; i--) {
    const UOp *x = &p->u.v[i];
    uint16_t need = x->op == U_ACCUM ? m[x->src[0]] : uop_is_value(x->op) ? m[i] : 0xffff;
    if (!need) continue;
    if (x->op == U_GEP) m[x->src[0]] |= (uint16_t)(1u << x->arg);
    if (x->op == U_PACK)
      for (int l = 0; l < x->vw; l++)
        if ((need >> l) & 1) m[p->extra.v[x->arg + l]] |= 1;
    if (x->op == U_WMMA)
      for (int j = 0; j < 16; j++) m[p->extra.v[x->arg + j]] |= 1;
    for (int j = x->op == U_ACCUM; j < 3 && x->op != U_GEP; j++)
      if (x->src[j] >= 0) m[x->src[j]] |= x->vw && p->u.v[x->src[j]].vw ? need : 1;
  }
  return m;
}

// An ALU op's expression. vec > 0: OpenCL floatN (avec: the first operand is
// a vector), where comparisons and choices go through select() (a vector
// comparison is -1 where true) and two-operand builtins get both widened.
static void alu_expr(char *e, size_t n, const Dialect *D, int alu, int dt, const char *a, const char *b, const char *cc,
                     const char *va, int vec, bool avec) {
  char t[32] = "", c[4096] = "";
  if (vec) {  // what is a 1.0f/0.0f choice in scalars: its vector condition
    snprintf(t, sizeof t, "(float%d)", vec);
    switch (alu) {
    case OP_CMPLT: snprintf(c, sizeof c, "%s < %s", a, b); break;
    case OP_CMPLE: snprintf(c, sizeof c, "%s <= %s", a, b); break;
    case OP_CMPEQ: snprintf(c, sizeof c, "%s == %s", a, b); break;
    case OP_CMPNE: snprintf(c, sizeof c, "%s != %s", a, b); break;
    case OP_NOT: snprintf(c, sizeof c, "%s == 0.0f", a); break;
    case OP_CAST: if (dt == DT_BOOL) snprintf(c, sizeof c, "%s != 0.0f", a); break;
    }
  }
  if (c[0]) {
    snprintf(e, n, "select(%s(0.0f), %s(1.0f), %s)", t, t, c);
    return;
  }
  switch (alu) {
  case OP_CAST: snprintf(e, n, dt == DT_BOOL ? "%s != 0.0f ? 1.0f : 0.0f" : D->un[alu], a); break;
  case OP_NEG: case OP_EXP: case OP_LOG: case OP_SQRT: case OP_RECIP: case OP_SIN: case OP_COS: case OP_TANH: case OP_ABS:
  case OP_NOT: snprintf(e, n, D->un[alu], a); break;
  case OP_ADD: snprintf(e, n, "%s + %s", a, b); break;
  case OP_SUB: snprintf(e, n, "%s - %s", a, b); break;
  case OP_MUL: snprintf(e, n, "%s * %s", a, b); break;
  case OP_DIV: snprintf(e, n, "%s / %s", a, b); break;
  case OP_MAX: snprintf(e, n, "%s(%s%s, %s%s)", D->fmax, t, a, t, b); break;
  case OP_MIN: snprintf(e, n, "%s(%s%s, %s%s)", D->fmin, t, a, t, b); break;
  case OP_CMPLT: snprintf(e, n, "%s < %s ? 1.0f : 0.0f", a, b); break;
  case OP_CMPLE: snprintf(e, n, "%s <= %s ? 1.0f : 0.0f", a, b); break;
  case OP_CMPEQ: snprintf(e, n, "%s == %s ? 1.0f : 0.0f", a, b); break;
  case OP_CMPNE: snprintf(e, n, "%s != %s ? 1.0f : 0.0f", a, b); break;
  case OP_WHERE:
    if (avec) snprintf(e, n, "select(%s(%s), %s(%s), %s != 0.0f)", t, cc, t, b, a);
    else snprintf(e, n, "%s != 0.0f ? %s%s : %s%s", a, t, b, t, cc);
    break;
  case KO_PADSEL: snprintf(e, n, "%s ? %s : %s0.0f", va, a, t); break;
  default: diag_fatal("internal: cannot render op %d", alu);
  }
}

// A vector sum of products is one expression (acc += a * b, which the
// compiler may fuse into FMA): 1 for such an ACCUM and for the product it
// alone reads, which then needs no variable of its own.
static int *fused_products(const Program *p, const Dialect *D) {
  const UOp *u = p->u.v;
  int *fused = xcalloc((size_t)p->u.n + 1, sizeof *fused), *readers = xcalloc((size_t)p->u.n + 1, sizeof *readers);
  for (int i = 0; i < p->u.n; i++) {
    int nx = u[i].op == U_WMMA ? 16 : u[i].op == U_PACK ? u[i].vw : 0;
    for (int j = 0; j < 3; j++)
      if (u[i].src[j] >= 0) readers[u[i].src[j]]++;
    for (int j = 0; j < nx; j++) readers[p->extra.v[u[i].arg + j]]++;
  }
  for (int i = 0; i < p->u.n; i++) {
    const UOp *m = u[i].op == U_ACCUM && u[i].alu == OP_RSUM ? &u[u[i].src[1]] : NULL;
    fused[i] = D->vectors && m && m->vw && m->op == U_ALU && m->alu == OP_MUL && m->dt == DT_F32 && readers[u[i].src[1]] == 1;
    if (fused[i]) fused[u[i].src[1]] = 1;
  }
  free(readers);
  return fused;
}

// render_kernel's state while it writes the uops
typedef struct {
  Str o;
  const Dialect *D;
  Kernel *k;
  Program *p;
  const char **names;       // the axes' variables
  int depth;                // of indentation
  const uint16_t *read;     // without vector types: the lanes of each uop something reads (NULL: all)
  const int *fused;         // the products written into the ACCUM that reads them
} Render;

// render_uop's ops computed lane by lane (or as one vector): accumulators,
// rounding, loads and stores, arithmetic
static void render_lanes(Render *r, int i, int vec, int lanes, uint16_t live) {
  Str *o = &r->o;
  const Dialect *D = r->D;
  Kernel *k = r->k;
  Program *p = r->p;
  UOp *u = p->u.v, *x = &u[i];
  const char **names = r->names;
  const int *fused = r->fused;
  char ix[4096], va[4096];
  char ty[16] = "float", vsfx[8] = "", nm[32], s0[32], zero[32] = "0.0f";
  if (vec) snprintf(ty, sizeof ty, "float%d", vec), snprintf(vsfx, sizeof vsfx, "x%d", vec), snprintf(zero, sizeof zero, "(float%d)(0.0f)", vec);
  #define PARAM(a) (k->args.v[(a)].name)
  #define IND() str_printf(o, "%*s", 2 * r->depth, "")
  #define V(j) (u[j].name)
  #define NAME(l) (lanes > 1 ? (snprintf(nm, sizeof nm, "%s_%d", x->name, (l)), nm) : x->name)
  #define SRC(j, l) operand(p, x->src[j], (l), lanes > 1, s0)
  switch (x->op) {
  case U_DEFACC:
    for (int l = 0; l < lanes; l++) {
      if (!((live >> l) & 1)) continue;
      IND();
      const char *init = x->alu == OP_RMAX ? "(-INFINITY)" : "0.0f";
      if (vec) str_printf(o, "%s %s = (%s)(%s);\n", ty, NAME(l), ty, init);
      else str_printf(o, "float %s = %s;\n", NAME(l), init);
    }
    break;
  case U_ACCUM:
    for (int l = 0; l < lanes; l++) {
      if (!((live >> l) & 1)) continue;
      char s1[32];
      const char *acc = SRC(0, l), *v = operand(p, x->src[1], l, lanes > 1, s1);
      IND();
      if (x->alu == OP_RMAX && vec) str_printf(o, "%s = %s(%s, (%s)(%s));\n", acc, D->fmax, acc, ty, v);
      else if (x->alu == OP_RMAX) str_printf(o, "%s = %s(%s, %s);\n", acc, D->fmax, acc, v);
      else if (fused[i]) {
        const UOp *m = &u[x->src[1]];
        str_printf(o, "%s += %s * %s;\n", acc, V(m->src[0]), V(m->src[1]));
      } else str_printf(o, "%s += %s;\n", acc, v);
    }
    break;
  case U_ROUND:
    for (int l = 0; l < lanes; l++) {
      if (!((live >> l) & 1)) continue;
      IND();
      if (x->dt == DT_BF16 || x->dt == DT_F16) str_printf(o, "%s %s = rnd_%s%s(%s);\n", ty, NAME(l), sfx(x->dt), vsfx, SRC(0, l));
      else str_printf(o, "%s %s = %s;\n", ty, NAME(l), SRC(0, l));
    }
    break;
  case U_LOAD:  // a vector loads lanes arg, arg+1, ...: ld_f32x4 in OpenCL, one load per lane without vectors
  case U_STORE:
    sym_str(&k->sym, (int)x->arg, names, ix, sizeof ix);
    if (x->arg2 >= 0) sym_str(&k->sym, (int)x->arg2, names, va, sizeof va);
    for (int l = 0; l < lanes; l++) {
      if (!((live >> l) & 1)) continue;
      char at[4400], row[160] = "";
      if (x->op == U_LOAD && x->src[0] >= 0)  // a gather: its row, the id clamped to the table
        snprintf(row, sizeof row, " + gather_row(%s, %lld) * %lld", SRC(0, l), (long long)x->rows, (long long)x->stride);
      if (l) snprintf(at, sizeof at, "%s+%d%s", ix, l, row);
      else snprintf(at, sizeof at, "%s%s", ix, row);
      IND();
      if (x->op == U_LOAD && x->arg2 >= 0)
        str_printf(o, "%s %s = %s ? ld_%s%s(%s, %s) : %s;\n", ty, NAME(l), va, sfx(x->dt), vsfx, PARAM(x->arg3), at, zero);
      else if (x->op == U_LOAD)
        str_printf(o, "%s %s = ld_%s%s(%s, %s);\n", ty, NAME(l), sfx(x->dt), vsfx, PARAM(x->arg3), at);
      else {
        char v[64];
        if (vec && !u[x->src[0]].vw) snprintf(v, sizeof v, "(%s)(%s)", ty, V(x->src[0]));  // a scalar stored into a vector: widened
        else snprintf(v, sizeof v, "%s", SRC(0, l));
        if (x->arg2 >= 0) str_printf(o, "if %s ", va);
        str_printf(o, "st_%s%s(%s, %s, %s);\n", sfx(x->dt), vsfx, PARAM(x->arg3), at, v);
      }
    }
    break;
  case U_ALU: {
    char e[8192];
    for (int l = 0; l < lanes; l++) {
      if (!((live >> l) & 1)) continue;
      const char *srcs[3];
      char sn[3][32];
      for (int j = 0; j < 3; j++) srcs[j] = x->src[j] >= 0 ? operand(p, x->src[j], l, lanes > 1, sn[j]) : "";
      bool avec = vec && x->src[0] >= 0 && u[x->src[0]].vw;
      va[0] = 0;
      if (x->alu == KO_PADSEL) sym_str(&k->sym, (int)x->arg2, names, va, sizeof va);
      alu_expr(e, sizeof e, D, x->alu, x->dt, srcs[0], srcs[1], srcs[2], va, vec, avec);
      IND();
      bool round = (x->dt == DT_BF16 || x->dt == DT_F16) && x->alu != KO_PADSEL;
      if (round) str_printf(o, "%s %s = rnd_%s%s(%s);\n", ty, NAME(l), sfx(x->dt), vsfx, e);
      else str_printf(o, "%s %s = %s;\n", ty, NAME(l), e);
    }
    break;
  }
  default: break;
  }
  #undef PARAM
  #undef IND
  #undef V
  #undef NAME
  #undef SRC
}

// One uop's text (render_kernel's loop): a declaration or statement per
// lane, at the current depth
static void render_uop(Render *r, int i) {
  Str *o = &r->o;
  const Dialect *D = r->D;
  Kernel *k = r->k;
  Program *p = r->p;
  UOp *u = p->u.v;
  const char **names = r->names;
  const uint16_t *read = r->read;
  const int *fused = r->fused;
  char ix[4096], lit[64];
  #define PARAM(a) (k->args.v[(a)].name)
  #define IND() str_printf(o, "%*s", 2 * r->depth, "")
  #define V(j) (u[j].name)
  UOp *x = &u[i];
  // a vector: one floatN (vec), or without vector types one variable per lane (lanes)
  int vec = x->vw && D->vectors ? x->vw : 0, lanes = x->vw && !D->vectors ? x->vw : 1;
  uint16_t live = !read || x->op == U_STORE ? 0xffff : x->op == U_ACCUM ? read[x->src[0]] : read[i];
  if (lanes == 1 && (uop_is_value(x->op) || x->op == U_DEFACC) && !live) return;  // read by nothing (a lane of a PACK nobody reads)
  if (fused[i] && x->op == U_ALU) return;  // written into the ACCUM that reads it
  char ty[16] = "float", s0[32];
  if (vec) snprintf(ty, sizeof ty, "float%d", vec);
  switch (x->op) {
  case U_PARAM: break;
  case U_PACK:
    if (!vec) break;  // lane by lane: its lanes are read where they are
    IND();
    str_printf(o, "%s %s = (%s)(", ty, x->name, ty);
    for (int l = 0; l < x->vw; l++) str_printf(o, "%s%s", l ? ", " : "", u[p->extra.v[x->arg + l]].name);
    str_printf(o, ");\n");
    break;
  case U_GEP:
    IND();
    if (D->vectors) str_printf(o, "float %s = %s.s%x;\n", x->name, V(x->src[0]), (unsigned)x->arg);
    else str_printf(o, "float %s = %s;\n", x->name, operand(p, x->src[0], (int)x->arg, true, s0));
    break;
  case U_SPECIAL: {
    const char *src = x->alu ? D->thread[x->arg] : D->group_loops && p->global[x->arg] == 1 ? "0" : D->group[x->arg];
    IND();
    if (x->arg3 == 0) str_printf(o, "int %s = %s;\n", x->name, src);
    else if (x->arg2 == 1) str_printf(o, "int %s = %s %% %d;\n", x->name, src, x->arg3);
    else str_printf(o, "int %s = (%s / %lld) %% %d;\n", x->name, src, (long long)x->arg2, x->arg3);
    break;
  }
  case U_SMEM:
    if (x->alu == 1 && D->mma) break;  // mma tiles: only the emulation uses memory
    IND();
    if (x->alu == 3) str_printf(o, D->stage16, D->type[x->dt], (long long)x->arg), str_printf(o, "\n");
    else str_printf(o, "%s %s[%lld];\n", D->smem, smem_name[x->alu], (long long)x->arg);
    break;
  case U_COPY: {
    char gx[4096];
    sym_str(&k->sym, (int)x->arg2, names, gx, sizeof gx);
    sym_str(&k->sym, (int)x->arg, names, ix, sizeof ix);
    IND();
    str_printf(o, D->copy, ix, PARAM(x->arg3), gx);
    str_printf(o, "\n");
    break;
  }
  case U_COMMIT:
    if (D->commit) IND(), str_printf(o, "%s\n", D->commit);
    break;
  case U_WAIT:
    if (D->wait) IND(), str_printf(o, "%s\n", D->wait);
    break;
  case U_WMMA: render_wmma(o, k, p, x, D, r->depth); break;
  case U_SSTORE:
    sym_str(&k->sym, (int)x->arg, names, ix, sizeof ix);
    IND();
    str_printf(o, D->sstore, smem_name[x->alu], ix, V(x->src[0]));
    str_printf(o, "\n");
    break;
  case U_SLOAD:
    sym_str(&k->sym, (int)x->arg, names, ix, sizeof ix);
    IND();
    str_printf(o, "float %s = ", x->name);
    if (x->alu == 3) str_printf(o, D->sload16, sfx(x->dt), ix);
    else str_printf(o, D->sload, smem_name[x->alu], ix);
    str_printf(o, ";\n");
    break;
  case U_BARRIER:
    if (D->barrier[0]) IND(), str_printf(o, "%s\n", D->barrier);
    break;
  case U_IF:
    sym_str(&k->sym, (int)x->arg, names, ix, sizeof ix);
    IND();
    if (ix[0] == '(') str_printf(o, "if %s {\n", ix);
    else str_printf(o, "if (%s) {\n", ix);
    r->depth++;
    break;
  case U_RANGE:
    IND();
    str_printf(o, "for (int %s = 0; %s < %lld; %s++) {\n", x->name, x->name, (long long)x->arg, x->name);
    r->depth++;
    break;
  case U_ENDRANGE:
  case U_ENDIF:
    r->depth--;
    IND();
    str_printf(o, "}\n");
    break;
  case U_FCONST:
    flit(lit, sizeof lit, x->f);
    IND();
    str_printf(o, "float %s = %s;\n", x->name, lit);
    break;
  case U_INDEXF:
    sym_str(&k->sym, (int)x->arg, names, ix, sizeof ix);
    IND();
    str_printf(o, "float %s = (float)(%s);\n", x->name, ix);
    break;
  default: render_lanes(r, i, vec, lanes, live); break;  // a value computed lane by lane
  }
  #undef PARAM
  #undef IND
  #undef V
}

char *render_kernel(Ctx *c, Schedule *s, Kernel *k, Program *p) {
  (void)c;
  (void)s;
  if (k->kind == KERNEL_ATTN) return attn_render(k, p);
  const Dialect *D = k->target->dialect;
  Str o = {0};
  const char *names[MAXAXES + 1];
  char store[MAXAXES + 1][16];
  var_names(k, names, store);
  UOp *u = p->u.v;
  #define PARAM(a) (k->args.v[(a)].name)  // set by the schedule (param_names), or lower_kernel
  // signature
  dialect_kernel(&o, D, p->local);
  str_printf(&o, " %s(", k->name);
  for (int i = 0, first = 1; i < p->u.n; i++) {
    if (u[i].op != U_PARAM) continue;
    char ty[64];
    snprintf(ty, sizeof ty, u[i].arg == 0 ? D->param_fmt : D->const_param_fmt, D->type[u[i].dt]);
    str_printf(&o, "%s%s %s", first ? "" : ", ", ty, PARAM(u[i].arg));
    first = 0;
  }
  str_printf(&o, ") {\n");
  int depth = 1, loops = 0;
  if (D->group_loops) {  // the groups, z y x, as one parallel loop nest (a dimension of size 1 is no loop)
    for (int d = 2; d >= 0; d--) loops += p->global[d] > 1;
    if (loops) str_printf(&o, "  #pragma omp parallel for collapse(%d) schedule(static)\n", loops);
    for (int d = 2; d >= 0; d--)
      if (p->global[d] > 1) str_printf(&o, "  for (int %s = 0; %s < %u; %s++)\n", D->group[d], D->group[d], p->global[d], D->group[d]);
    str_printf(&o, "  {\n");
    depth = 2;
  }
  uint16_t *read = D->vectors ? NULL : lanes_read(p);
  int *fused = fused_products(p, D);
  // shared memory declared first, then everything else in order
  Render r = {.o = o, .D = D, .k = k, .p = p, .names = names, .depth = depth, .read = read, .fused = fused};
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < p->u.n; i++)
      if ((u[i].op == U_SMEM) == (pass == 0)) render_uop(&r, i);
  o = r.o;
  #undef PARAM
  free(read);
  free(fused);
  if (D->group_loops) {  // and the launcher: the arguments as the runtime's table passes them
    str_printf(&o, "  }\n}\n\nvoid %s_launch(void *const *args) { %s(", k->name, k->name);
    for (int i = 0, first = 1; i < p->u.n; i++)
      if (u[i].op == U_PARAM) str_printf(&o, "%sargs[%lld]", first ? "" : ", ", (long long)u[i].arg), first = 0;
    str_printf(&o, "); }\n");
    return o.s;
  }
  str_printf(&o, "}\n");
  return o.s;
}
