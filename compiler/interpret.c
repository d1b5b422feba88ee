// interpret.c — the reference: evaluates the graph op by op in float64 and
// rounds every node's value to its dtype (as a torch eager run stores it).
//
// Memory is bounded by the tensors the graph names, never by a broadcast:
// - a movement op (reshape, permute, expand, shrink) is a strided view of its
//   source, not a copy (a reshape copies only when no strides can express it);
// - an elementwise node whose one consumer is a reduce (or another such node)
//   is computed inside that reduce's loop and never stored, so the product of
//   a linear, [tokens, out, in], is never materialized;
// - a sum over a product of two views (linear, matmul, attention) is a batched
//   GEMM in float64: both operands packed at their own size, the products
//   through OpenBLAS's cblas_dgemm when libopenblas is installed (loaded at run
//   time, so fluxcc itself needs no BLAS), else a blocked loop here.
// A product inside such a sum is not stored, so it is not rounded: it is exact
// in float64, as in the NumPy reference's matmul (and closer to torch's fused
// multiply-adds than an f32-rounded product); the sum is rounded once. For
// bf16/f16 operands (cast to f32) the product is exact in f32 anyway.
// Large loops run on all cores; every value is the same whatever the count.
#include "fluxcc.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {          // element idx of a node's value is base[off + sum idx[k] * st[k]]
  double *base;
  int64_t off, st[MAXDIM];
  int owner;              // the node whose array base is (-1: a buffer the caller owns)
} View;

// cblas_dgemm with its enums as ints (CblasRowMajor 101, CblasNoTrans 111)
typedef void (*DgemmFn)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                        double *, int);

typedef struct {
  Graph *g;
  const HostTensor *bufs;
  View *v;                // per node, once computed
  double **mem;           // per node: the array it allocated (NULL: none, or freed)
  int *refs;              // per node: values (its own and views of it) still reading mem
  int *uses;              // per node: consumers not yet computed (+1 per output it is)
  bool *inl;              // computed inside its reduce's loop, never stored
  int nthreads;
  DgemmFn dgemm;
  int bad_gather;         // a gather whose ids hold one that is not a row of its table (-1: none) ...
  int64_t bad_elem;       // ... the first such id's element (row-major, of the ids)
  double bad_id;          // ... and its value
} Interp;

static const Node *node(const Interp *I, int id) { return &I->g->nodes.v[id]; }

static void contiguous(const Shape *s, int64_t *st) {
  int64_t acc = 1;
  for (int i = s->n - 1; i >= 0; i--) st[i] = acc, acc *= s->d[i];
}

// row-major index of flat element i
static void unravel(int64_t i, const Shape *s, int64_t *idx) {
  for (int k = s->n - 1; k >= 0; k--) idx[k] = i % s->d[k], i /= s->d[k];
}

// the next index in row-major order
static void step(int64_t *idx, const Shape *s) {
  for (int k = s->n - 1; k >= 0; k--) {
    if (++idx[k] < s->d[k]) return;
    idx[k] = 0;
  }
}

static double at(const View *v, const int64_t *idx, int n) {
  int64_t o = v->off;
  for (int k = 0; k < n; k++) o += idx[k] * v->st[k];
  return v->base[o];
}

// fn(ctx, lo, hi) over [0, n) split across the cores, at least `grain` items a thread
typedef void (*SpanFn)(void *ctx, int64_t lo, int64_t hi);
typedef struct { SpanFn fn; void *ctx; int64_t lo, hi; } Span;
static void *span_run(void *p) {
  Span *s = p;
  s->fn(s->ctx, s->lo, s->hi);
  return NULL;
}
static void par_for(const Interp *I, int64_t n, int64_t grain, SpanFn fn, void *ctx) {
  int t = I->nthreads;
  if (n / (grain > 0 ? grain : 1) < t) t = (int)(n / (grain > 0 ? grain : 1));
  if (t <= 1) {
    fn(ctx, 0, n);
    return;
  }
  Span sp[64];
  pthread_t th[64];
  bool started[64] = {0};
  for (int i = 0; i < t; i++) sp[i] = (Span){fn, ctx, n * i / t, n * (i + 1) / t};
  for (int i = 1; i < t; i++) started[i] = !pthread_create(&th[i], NULL, span_run, &sp[i]);
  span_run(&sp[0]);
  for (int i = 1; i < t; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    else span_run(&sp[i]);  // no thread to be had: run it here
  }
}

static double unary(int op, double x) {
  switch (op) {
  case OP_NEG: return -x;
  case OP_EXP: return exp(x);
  case OP_LOG: return log(x);
  case OP_SQRT: return sqrt(x);
  case OP_RECIP: return 1 / x;
  case OP_SIN: return sin(x);
  case OP_COS: return cos(x);
  case OP_TANH: return tanh(x);
  case OP_ABS: return fabs(x);
  case OP_NOT: return x == 0;
  case OP_CAST: return x;
  }
  return NAN;
}

static double binary(int op, double a, double b) {
  switch (op) {
  case OP_ADD: return a + b;
  case OP_SUB: return a - b;
  case OP_MUL: return a * b;
  case OP_DIV: return a / b;
  case OP_MAX: return a > b || isnan(a) ? a : b;
  case OP_MIN: return a < b || isnan(a) ? a : b;
  case OP_CMPLT: return a < b;
  case OP_CMPLE: return a <= b;
  case OP_CMPEQ: return a == b;
  case OP_CMPNE: return a != b;
  }
  return NAN;
}

static double ev(const Interp *I, int id, const int64_t *idx);

// an elementwise node's value at idx (its shape's index), rounded to its dtype if round
static double compute(const Interp *I, int id, const int64_t *idx, bool round) {
  const Node *x = node(I, id);
  double r = NAN;
  switch (op_kind[x->op]) {
  case K_UNARY: r = unary(x->op, ev(I, x->src[0], idx)); break;
  case K_BINARY: r = binary(x->op, ev(I, x->src[0], idx), ev(I, x->src[1], idx)); break;
  case K_TERNARY: r = ev(I, x->src[0], idx) != 0 ? ev(I, x->src[1], idx) : ev(I, x->src[2], idx); break;
  }
  return round ? dtype_round(x->dt, r) : r;
}

static double ev(const Interp *I, int id, const int64_t *idx) {
  return I->inl[id] ? compute(I, id, idx, true) : at(&I->v[id], idx, node(I, id)->shape.n);
}

// a sum whose products are not stored (see the top of the file)
static bool contraction(const Interp *I, const Node *x) {
  return x->op == OP_RSUM && I->inl[x->src[0]] && node(I, x->src[0])->op == OP_MUL && node(I, x->src[0])->dt == DT_F32;
}

//
// Materialized values: an elementwise node, a pad, a generic reduce.
//
typedef struct { const Interp *I; int id; double *out; } Job;

static void elementwise_span(void *p, int64_t lo, int64_t hi) {
  Job *j = p;
  const Shape *s = &node(j->I, j->id)->shape;
  int64_t idx[MAXDIM];
  unravel(lo, s, idx);
  for (int64_t i = lo; i < hi; i++, step(idx, s)) j->out[i] = compute(j->I, j->id, idx, true);
}

// out[i..., j...] = table[ids[i...], j...]; the ids are checked before (gather_ids_ok)
static void gather_span(void *p, int64_t lo, int64_t hi) {
  Job *j = p;
  const Node *x = node(j->I, j->id), *t = node(j->I, x->src[0]);
  const View *vt = &j->I->v[x->src[0]], *vi = &j->I->v[x->src[1]];
  int ni = node(j->I, x->src[1])->shape.n;
  int64_t idx[MAXDIM];
  unravel(lo, &x->shape, idx);
  for (int64_t i = lo; i < hi; i++, step(idx, &x->shape)) {
    int64_t o = vt->off + (int64_t)at(vi, idx, ni) * vt->st[0];
    for (int k = 1; k < t->shape.n; k++) o += idx[ni + k - 1] * vt->st[k];
    j->out[i] = vt->base[o];
  }
}

// every id a whole number in [0, rows); else the first bad one is noted
static bool gather_ids_ok(Interp *I, int id) {
  const Node *x = node(I, id);
  const Shape *s = &node(I, x->src[1])->shape;
  int64_t rows = node(I, x->src[0])->shape.d[0], n = shape_numel(s), idx[MAXDIM] = {0};
  for (int64_t i = 0; i < n; i++, step(idx, s)) {
    double v = at(&I->v[x->src[1]], idx, s->n);
    if (!(v >= 0 && v < (double)rows && v == floor(v))) {
      I->bad_gather = id, I->bad_elem = i, I->bad_id = v;
      return false;
    }
  }
  return true;
}

static void pad_span(void *p, int64_t lo, int64_t hi) {
  Job *j = p;
  const Node *x = node(j->I, j->id);
  const Shape *src = &node(j->I, x->src[0])->shape;
  const View *v = &j->I->v[x->src[0]];
  int64_t idx[MAXDIM];
  unravel(lo, &x->shape, idx);
  for (int64_t i = lo; i < hi; i++, step(idx, &x->shape)) {
    int64_t o = v->off;
    bool inside = true;
    for (int k = 0; k < x->shape.n; k++) {
      int64_t q = idx[k] - x->arg[2 * k];
      inside &= q >= 0 && q < src->d[k];
      o += q * v->st[k];
    }
    j->out[i] = inside ? v->base[o] : 0;
  }
}

// every output element walks its reduced axes; the source computed on the way
static void reduce_span(void *p, int64_t lo, int64_t hi) {
  Job *j = p;
  const Node *x = node(j->I, j->id);
  const Shape *src = &node(j->I, x->src[0])->shape;
  bool top_round = !contraction(j->I, x), inl = j->I->inl[x->src[0]];
  Shape red = {.n = src->n};  // the reduced axes' sizes, 1 elsewhere
  int64_t rn = 1;
  for (int k = 0; k < src->n; k++) red.d[k] = x->arg[k] ? src->d[k] : 1, rn *= red.d[k];
  for (int64_t i = lo; i < hi; i++) {
    int64_t base[MAXDIM], r[MAXDIM] = {0}, idx[MAXDIM];
    unravel(i, &x->shape, base);
    double acc = x->op == OP_RSUM ? 0 : -INFINITY;
    for (int64_t t = 0; t < rn; t++, step(r, &red)) {
      for (int k = 0; k < src->n; k++) idx[k] = base[k] + r[k];
      double a = inl ? compute(j->I, x->src[0], idx, top_round) : at(&j->I->v[x->src[0]], idx, src->n);
      if (x->op == OP_RSUM) acc += a;
      else if (a > acc || isnan(a)) acc = a;
    }
    j->out[i] = acc;
  }
}

//
// A sum over the product of two views is a batched GEMM. The product's axes:
// reduced (K), broadcast in a (N: b varies along it), broadcast in b (M), or
// neither (batch). Each operand is packed at its own size.
//
typedef struct { int n; int ax[MAXDIM]; } Axes;

static void pack(const View *v, const Shape *s, const Axes *const *groups, int ng, double *dst) {
  Shape d = {0};
  int64_t st[MAXDIM];
  for (int g = 0; g < ng; g++)
    for (int i = 0; i < groups[g]->n; i++) st[d.n] = v->st[groups[g]->ax[i]], d.d[d.n++] = s->d[groups[g]->ax[i]];
  int64_t n = shape_numel(&d), idx[MAXDIM] = {0};
  for (int64_t i = 0; i < n; i++, step(idx, &d)) {
    int64_t o = v->off;
    for (int k = 0; k < d.n; k++) o += idx[k] * st[k];
    dst[i] = v->base[o];
  }
}

typedef struct {
  const Interp *I;
  const double *a, *b;
  double *c;
  int64_t m, n, k;
} Gemm;

// rows [lo, hi) of every batch's C = A B (row-major), blocked for the cache
static void gemm_rows(void *p, int64_t lo, int64_t hi) {
  Gemm *G = p;
  for (int64_t r = lo; r < hi; r++) {
    int64_t bt = r / G->m, i = r % G->m;
    const double *A = G->a + (bt * G->m + i) * G->k, *B = G->b + bt * G->k * G->n;
    double *C = G->c + (bt * G->m + i) * G->n;
    for (int64_t j = 0; j < G->n; j++) C[j] = 0;
    for (int64_t j0 = 0; j0 < G->n; j0 += 256) {
      int64_t j1 = j0 + 256 < G->n ? j0 + 256 : G->n;
      for (int64_t q = 0; q < G->k; q++) {
        double s = A[q];
        const double *Bq = B + q * G->n;
        for (int64_t j = j0; j < j1; j++) C[j] += s * Bq[j];
      }
    }
  }
}

static void gemm_reduce(const Interp *I, int id, double *out) {
  const Node *x = node(I, id), *m = node(I, x->src[0]);
  const View *va = &I->v[m->src[0]], *vb = &I->v[m->src[1]];
  const Shape *s = &m->shape;
  Axes bat = {0}, am = {0}, bn = {0}, kk = {0};
  int64_t nb = 1, M = 1, N = 1, K = 1;
  for (int k = 0; k < s->n; k++) {
    if (s->d[k] == 1) continue;
    if (x->arg[k]) kk.ax[kk.n++] = k, K *= s->d[k];
    else if (va->st[k] == 0) bn.ax[bn.n++] = k, N *= s->d[k];
    else if (vb->st[k] == 0) am.ax[am.n++] = k, M *= s->d[k];
    else bat.ax[bat.n++] = k, nb *= s->d[k];
  }
  double *A = xcalloc((size_t)(nb * M * K), sizeof *A), *B = xcalloc((size_t)(nb * K * N), sizeof *B);
  double *C = xcalloc((size_t)(nb * M * N), sizeof *C);
  pack(va, s, (const Axes *[]){&bat, &am, &kk}, 3, A);
  pack(vb, s, (const Axes *[]){&bat, &kk, &bn}, 3, B);
  if (I->dgemm && M * N * K >= 32768 && M < INT32_MAX && N < INT32_MAX && K < INT32_MAX) {
    for (int64_t t = 0; t < nb; t++)
      I->dgemm(101, 111, 111, (int)M, (int)N, (int)K, 1.0, A + t * M * K, (int)K, B + t * K * N, (int)N, 0.0,
               C + t * M * N, (int)N);
  } else {
    Gemm G = {I, A, B, C, M, N, K};
    par_for(I, nb * M, 1 + 65536 / (N * K), gemm_rows, &G);
  }
  // scatter C [batch, M, N] to the output (contiguous in x's shape)
  View o = {.base = out};
  contiguous(&x->shape, o.st);
  Shape d = {0};
  int64_t st[MAXDIM], idx[MAXDIM] = {0};
  const Axes *g3[] = {&bat, &am, &bn};
  for (int g = 0; g < 3; g++)
    for (int i = 0; i < g3[g]->n; i++) st[d.n] = o.st[g3[g]->ax[i]], d.d[d.n++] = s->d[g3[g]->ax[i]];
  for (int64_t i = 0, n = nb * M * N; i < n; i++, step(idx, &d)) {
    int64_t q = 0;
    for (int k = 0; k < d.n; k++) q += idx[k] * st[k];
    out[q] = C[i];
  }
  free(A), free(B), free(C);
}

//
// Views
//
// A reshape as strides of the source's, or false when the source's strides
// cannot express it (then it is copied). Groups of source and target axes
// with equal products are matched; a group's source axes must be contiguous
// among themselves.
static bool reshape_view(const Shape *from, const int64_t *fst, const Shape *to, int64_t *tst) {
  int64_t sd[MAXDIM], ss[MAXDIM];
  int m = 0, i = 0;
  for (int k = 0; k < from->n; k++)
    if (from->d[k] != 1) sd[m] = from->d[k], ss[m++] = fst[k];
  for (int j = 0; j < to->n;) {
    if (to->d[j] == 1) {
      tst[j++] = 0;
      continue;
    }
    int i0 = i, j0 = j;
    int64_t pa = sd[i++], pb = to->d[j++];
    while (pa != pb) {
      if (pa < pb) pa *= sd[i++];
      else pb *= to->d[j++];
    }
    for (int k = i0; k + 1 < i; k++)
      if (ss[k] != ss[k + 1] * sd[k + 1]) return false;
    int64_t s = ss[i - 1];
    for (int k = j - 1; k >= j0; k--) tst[k] = to->d[k] == 1 ? 0 : s, s *= to->d[k];
  }
  return true;
}

static double *alloc_value(Interp *I, int id, int64_t n) {
  I->mem[id] = xcalloc((size_t)(n ? n : 1), sizeof(double));
  I->refs[id] = 1;
  I->v[id] = (View){.base = I->mem[id], .owner = id};
  contiguous(&node(I, id)->shape, I->v[id].st);
  return I->mem[id];
}

static void view_of(Interp *I, int id, const View *src) {
  I->v[id] = *src;
  if (src->owner >= 0) I->refs[src->owner]++;
}

static void unref(Interp *I, int owner) {
  if (owner >= 0 && --I->refs[owner] == 0) free(I->mem[owner]), I->mem[owner] = NULL;
}

// one consumer of id is done; an inlined node passes it on to its sources
static void drop(Interp *I, int id) {
  if (--I->uses[id] > 0) return;
  if (!I->inl[id]) {
    unref(I, I->v[id].owner);
    return;
  }
  for (int k = 0; k < 3; k++)
    if (node(I, id)->src[k] >= 0) drop(I, node(I, id)->src[k]);
}

static void eval(Interp *I, int id) {
  const Node *x = node(I, id);
  int64_t n = shape_numel(&x->shape);
  const View *sv = x->src[0] >= 0 ? &I->v[x->src[0]] : NULL;
  const Shape *ss = x->src[0] >= 0 ? &node(I, x->src[0])->shape : NULL;
  Job job = {I, id, NULL};
  switch (op_kind[x->op]) {
  case K_LOAD:  // a folded constant's values are the graph's own
    I->v[id] = (View){.base = I->g->bufs.v[x->buf].kind == BUF_CONST ? I->g->bufs.v[x->buf].data : I->bufs[x->buf].v, .owner = -1};
    contiguous(&x->shape, I->v[id].st);
    return;
  case K_CONST: {
    int last = x->shape.n - 1;
    double *o = alloc_value(I, id, x->op == OP_CONST ? 1 : x->shape.d[last]);
    memset(I->v[id].st, 0, sizeof I->v[id].st);
    if (x->op == OP_CONST) o[0] = dtype_round(x->dt, x->c);
    else
      for (int64_t i = 0; i < x->shape.d[last]; i++) o[i] = dtype_round(x->dt, (double)i);
    if (x->op == OP_ARANGE) I->v[id].st[last] = 1;
    return;
  }
  case K_UNARY: case K_BINARY: case K_TERNARY:
    job.out = alloc_value(I, id, n);
    par_for(I, n, 4096, elementwise_span, &job);
    return;
  case K_REDUCE:
    job.out = alloc_value(I, id, n);
    if (contraction(I, x) && !I->inl[node(I, x->src[0])->src[0]] && !I->inl[node(I, x->src[0])->src[1]])
      gemm_reduce(I, id, job.out);
    else
      par_for(I, n, 1 + 65536 / (shape_numel(ss) / (n ? n : 1)), reduce_span, &job);
    for (int64_t i = 0; i < n; i++) job.out[i] = dtype_round(x->dt, job.out[i]);
    return;
  case K_GATHER:
    job.out = alloc_value(I, id, n);
    if (gather_ids_ok(I, id)) par_for(I, n, 4096, gather_span, &job);
    return;
  case K_MOVE:
    break;
  }
  View v = *sv;
  switch (x->op) {
  case OP_RESHAPE:
    if (reshape_view(ss, sv->st, &x->shape, v.st)) break;
    job.out = alloc_value(I, id, n);  // a copy in the source's order is the reshape
    pack(sv, ss, (const Axes *[]){&(Axes){ss->n, {0, 1, 2, 3, 4, 5, 6, 7}}}, 1, job.out);
    return;
  case OP_PERMUTE:
    for (int k = 0; k < x->shape.n; k++) v.st[k] = sv->st[x->arg[k]];
    break;
  case OP_EXPAND:
    for (int k = 0; k < x->shape.n; k++) v.st[k] = ss->d[k] == 1 ? 0 : sv->st[k];
    break;
  case OP_SHRINK:
    for (int k = 0; k < x->shape.n; k++) v.off += x->arg[2 * k] * sv->st[k];
    break;
  case OP_PAD:
    job.out = alloc_value(I, id, n);
    par_for(I, n, 4096, pad_span, &job);
    return;
  case OP_UNFOLD:  // the window axis steps as the unfolded one does; the windows `step` of them apart
    v.st[x->shape.n - 1] = sv->st[x->arg[0]];
    v.st[x->arg[0]] = sv->st[x->arg[0]] * x->arg[2];
    break;
  }
  view_of(I, id, &v);
}

static DgemmFn load_dgemm(void) {
  const char *libs[] = {"libopenblas.so.0", "libopenblas.so", "libblas.so.3"};
  for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
    void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, "cblas_dgemm") : NULL;
    if (f) return (DgemmFn)f;  // the library stays loaded for the process
    if (h) dlclose(h);
  }
  return NULL;
}

// Values of the nodes marked in want (contiguous, in vals[node]; the caller
// frees them), computing only what they need.
// A gather's bad id stops it: false, and the gather, the id's element and value in *bad.
typedef struct { int node; int64_t elem; double id; } BadId;
static bool evaluate(Graph *g, const HostTensor *bufs, const bool *want, double **vals, bool blas, BadId *bad) {
  int nn = g->nodes.n;
  Interp I = {.g = g, .bufs = bufs, .bad_gather = -1};
  I.v = xcalloc((size_t)nn + 1, sizeof *I.v);
  I.mem = xcalloc((size_t)nn + 1, sizeof *I.mem);
  I.refs = xcalloc((size_t)nn + 1, sizeof *I.refs);
  I.uses = xcalloc((size_t)nn + 1, sizeof *I.uses);
  I.inl = xcalloc((size_t)nn + 1, sizeof *I.inl);
  bool *live = xcalloc((size_t)nn + 1, sizeof *live);
  int *user = xcalloc((size_t)nn + 1, sizeof *user);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  I.nthreads = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
  I.dgemm = blas ? load_dgemm() : NULL;
  for (int i = 0; i < nn; i++) live[i] = want[i], I.uses[i] = want[i];
  for (int i = nn - 1; i >= 0; i--)  // sources always have smaller ids
    if (live[i])
      for (int k = 0; k < 3; k++) {
        int s = g->nodes.v[i].src[k];
        if (s >= 0) live[s] = true, I.uses[s]++, user[s] = i;
      }
  for (int i = nn - 1; i >= 0; i--) {  // consumers first: an inlined chain ends at a reduce
    int kind = op_kind[g->nodes.v[i].op], u = user[i];
    I.inl[i] = live[i] && !want[i] && I.uses[i] == 1 && (kind == K_UNARY || kind == K_BINARY || kind == K_TERNARY) &&
               (op_kind[g->nodes.v[u].op] == K_REDUCE || I.inl[u]);
  }
  for (int i = 0; i < nn && I.bad_gather < 0; i++) {
    if (!live[i] || I.inl[i]) continue;
    eval(&I, i);
    for (int k = 0; k < 3; k++)
      if (g->nodes.v[i].src[k] >= 0) drop(&I, g->nodes.v[i].src[k]);
    if (want[i]) {
      Shape *s = &g->nodes.v[i].shape;
      vals[i] = xcalloc((size_t)shape_numel(s) + 1, sizeof(double));
      pack(&I.v[i], s, (const Axes *[]){&(Axes){s->n, {0, 1, 2, 3, 4, 5, 6, 7}}}, 1, vals[i]);
      drop(&I, i);
    }
  }
  for (int i = 0; i < nn; i++) free(I.mem[i]);
  free(I.v), free(I.mem), free(I.refs), free(I.uses), free(I.inl), free(live), free(user);
  if (bad) *bad = (BadId){I.bad_gather, I.bad_elem, I.bad_id};
  return I.bad_gather < 0;
}

// The model buffer a node is, through views and casts, or -1
static int buf_below(const Graph *g, int id) {
  const Node *x = &g->nodes.v[graph_below_views(g, id)];
  return x->op == OP_LOAD ? x->buf : -1;
}

// "take at FILE:L:C: id 49408 at [0, 3] of input 'tokens' is not a row of the 49408 of 'KEY'"
static void say_bad_id(Ctx *c, const BadId *b) {
  const Graph *g = &c->g;
  const Node *x = &g->nodes.v[b->node], *ids = &g->nodes.v[x->src[1]];
  char where[256], at[256] = "", of[300] = "the ids", tab[300] = "the table";
  int64_t idx[MAXDIM];
  unravel(b->elem, &ids->shape, idx);
  size_t w = 0;
  for (int k = 0; k < ids->shape.n; k++) w += (size_t)snprintf(at + w, sizeof at - w, "%s%lld", k ? ", " : "", (long long)idx[k]);
  int ib = buf_below(g, x->src[1]), tb = buf_below(g, x->src[0]);
  if (ib >= 0) snprintf(of, sizeof of, "%s '%s'", buf_kind_name[g->bufs.v[ib].kind], g->bufs.v[ib].name);
  if (tb >= 0) snprintf(tab, sizeof tab, "'%s'", g->bufs.v[tb].name);
  diag_where(c, x->loc, where, sizeof where);
  int64_t rows = g->nodes.v[x->src[0]].shape.d[0];
  fprintf(stderr, "fluxcc: error: take at %s: id %.17g at [%s] of %s is %s the %lld rows of %s\n", where, b->id, at, of,
          b->id == floor(b->id) ? "outside" : "not a whole number: it picks none of", (long long)rows, tab);
}

const char *interpret_gemm(void) { return load_dgemm() ? "OpenBLAS dgemm" : "built-in loops (install libopenblas0 for speed)"; }

int interpret(Ctx *c, HostTensor *bufs, HostTensor *outs) {
  Graph *g = &c->g;
  int nn = g->nodes.n;
  bool *want = xcalloc((size_t)nn + 1, sizeof *want);
  double **vals = xcalloc((size_t)nn + 1, sizeof *vals);
  for (int i = 0; i < g->outs.n; i++) want[g->outs.v[i].node] = true;
  BadId bad;
  int rc = evaluate(g, bufs, want, vals, true, &bad) ? 0 : -1;
  if (rc) say_bad_id(c, &bad);
  for (int i = 0; rc == 0 && i < g->outs.n; i++) {  // an output named twice gets its own copy each time
    Node *x = &g->nodes.v[g->outs.v[i].node];
    int64_t n = shape_numel(&x->shape);
    outs[i].dt = x->dt;
    outs[i].shape = x->shape;
    outs[i].v = xcalloc((size_t)n + 1, sizeof(double));
    memcpy(outs[i].v, vals[g->outs.v[i].node], sizeof(double) * (size_t)n);
  }
  for (int i = 0; i < nn; i++) free(vals[i]);
  free(vals);
  free(want);
  return rc;
}

//
// Constant folding: a value that depends only on constants (the time
// embedding's exp(arange(half) * -log(P) / half), rope's frequencies) is
// computed here once, exactly as the interpreter computes it (float64, each
// op rounded to its dtype as a torch eager run stores it), and the graph reads
// the result. Otherwise every device computes it with its own exp (an ulp
// apart) and the time embedding's 1000*t*freq magnifies that past 1e-5.
// (Rounding only once, at the end, would be closer to exact math but further
// from torch: 2.5e-6 on flux-tiny-f32's output against the NumPy reference.)
// A uniform result becomes one CONST; a table of at most FOLD_TABLE elements
// becomes a constant buffer (BUF_CONST): the kernels load it like a weight,
// the emitted schedule.c carries its values, and the runtime uploads them.
// Larger or exact-anyway constants (arange, its integer arithmetic) stay.
//
#define FOLD_EVAL 65536     // constant nodes evaluated at most this big
#define FOLD_TABLE 4096     // tables made at most this big

static bool inexact_op(int op) {
  return op == OP_EXP || op == OP_LOG || op == OP_SQRT || op == OP_RECIP || op == OP_SIN || op == OP_COS ||
         op == OP_TANH || op == OP_DIV;
}

static int add_node(Ctx *c, int op, int dt, Shape sh, int a, int b, const int64_t *args, double cval) {
  Node x = {0};
  x.op = (uint8_t)op;
  x.dt = (uint8_t)dt;
  x.shape = sh;
  x.src[0] = a, x.src[1] = b, x.src[2] = -1;
  if (args) memcpy(x.arg, args, sizeof x.arg);
  x.c = cval;
  x.loc = -1;
  return g_node(c, &x);
}

// The folded form of values v (rounded to dt here) of shape sh: one CONST if
// uniform, else a constant buffer holding the table (one buffer per distinct
// table); loc for the new nodes.
static int emit_folded(Ctx *c, int dt, Shape sh, const double *v, int loc) {
  int64_t n = shape_numel(&sh);
  double *t = xcalloc((size_t)n, sizeof *t);
  bool uniform = true;
  for (int64_t i = 0; i < n; i++) t[i] = dtype_round(dt, v[i]), uniform &= !memcmp(&t[i], &t[0], sizeof *t);
  if (uniform) {
    int id = add_node(c, OP_CONST, dt, sh, -1, -1, NULL, t[0]);
    free(t);
    if (c->g.nodes.v[id].loc < 0) c->g.nodes.v[id].loc = loc;
    return id;
  }
  Buf b = {.kind = BUF_CONST, .dt = dt, .shape = sh, .loc = loc, .data = t, .node = -1};
  int k = 0;
  for (int i = 0; i < c->g.bufs.n; i++) {
    Buf *o = &c->g.bufs.v[i];
    if (o->kind != BUF_CONST) continue;
    if (o->dt == dt && !memcmp(&o->shape, &sh, sizeof sh) && !memcmp(o->data, t, (size_t)n * sizeof *t)) {
      free(t);
      return o->node;
    }
    k++;
  }
  b.name = arena_printf(&c->arena, "folded%d", k);
  Node x = {.op = OP_LOAD, .dt = (uint8_t)dt, .shape = sh, .src = {-1, -1, -1}, .buf = c->g.bufs.n, .loc = loc};
  b.node = g_node(c, &x);
  vec_push(c->g.bufs, b);
  return b.node;
}

void fold_constants(Ctx *c) {
  Graph old = c->g;
  int nn = old.nodes.n;
  bool *is_const = xcalloc((size_t)nn + 1, 1), *inexact = xcalloc((size_t)nn + 1, 1), *boundary = xcalloc((size_t)nn + 1, 1);
  double **val = xcalloc((size_t)nn + 1, sizeof *val);
  int *map = xcalloc((size_t)nn + 1, sizeof *map);
  for (int i = 0; i < nn; i++) {
    Node *x = &old.nodes.v[i];
    if (op_kind[x->op] == K_LOAD || op_kind[x->op] == K_GATHER || shape_numel(&x->shape) > FOLD_EVAL) continue;
    bool k = true, ie = inexact_op(x->op);
    for (int s = 0; s < 3 && x->src[s] >= 0; s++) k &= is_const[x->src[s]], ie |= inexact[x->src[s]];
    if (!k) continue;
    is_const[i] = true, inexact[i] = ie;
  }
  for (int i = 0; i < nn; i++) {
    Node *x = &old.nodes.v[i];
    for (int s = 0; s < 3 && x->src[s] >= 0; s++)
      if (!is_const[i]) boundary[x->src[s]] = true;
  }
  for (int i = 0; i < old.outs.n; i++) boundary[old.outs.v[i].node] = true;
  // the values of the constants to fold, as the interpreter computes them
  // (below the views a boundary value is seen through: rope's frequencies, not
  // their broadcast over the tokens)
  bool *fold = xcalloc((size_t)nn + 1, 1);
  for (int i = 0; i < nn; i++) {
    if (!is_const[i] || !boundary[i] || !inexact[i]) continue;
    int j = i, op;
    while ((op = old.nodes.v[j].op) == OP_RESHAPE || op == OP_EXPAND || op == OP_PERMUTE) j = old.nodes.v[j].src[0];
    fold[j] = inexact[j] && op_kind[old.nodes.v[j].op] != K_CONST && shape_numel(&old.nodes.v[j].shape) <= FOLD_TABLE;
  }
  evaluate(&old, NULL, fold, val, false, NULL);   // (no gathers: never constant, see above)
  c->g = (Graph){0};
  c->g.bufs = old.bufs;
  c->g.outs = old.outs;
  c->g.unused = old.unused;
  c->g.ckpt_weights = old.ckpt_weights, c->g.ckpt_tokenizer = old.ckpt_tokenizer;
  for (int i = 0; i < nn; i++) {
    Node x = old.nodes.v[i];
    Node *o = &old.nodes.v[i];
    if (fold[i]) {
      map[i] = emit_folded(c, o->dt, o->shape, val[i], o->loc);
      continue;
    }
    for (int s = 0; s < 3; s++)
      if (x.src[s] >= 0) x.src[s] = map[x.src[s]];
    map[i] = g_node(c, &x);
    if (op_kind[x.op] == K_LOAD) c->g.bufs.v[x.buf].node = map[i];
  }
  for (int i = 0; i < c->g.outs.n; i++) c->g.outs.v[i].node = map[c->g.outs.v[i].node];
  for (int i = 0; i < nn; i++) free(val[i]);
  free(val);
  free(map);
  free(is_const);
  free(fold);
  free(inexact);
  free(boundary);
  free(old.nodes.v);
  free(old.hash);
}
