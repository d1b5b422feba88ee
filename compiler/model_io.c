// model_io.c — weights and inputs files against a model: seeded random
// init, strict loading (every key, shape and dtype checked), saving outputs.
#include "fluxcc.h"
#include "numbers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// Values of one buffer, from the generator shared with the runtime.
static void fill(const Buf *b, uint64_t seed, void *data) {
  uint64_t s = nb_stream(seed, b->name);
  int64_t n = shape_numel(&b->shape);
  for (int64_t i = 0; i < n; i++)
    dtype_store(b->dt, data, (size_t)i, nb_value(&s, b->init, b->ia, b->ib, b->kind == BUF_PARAM, b->shape.n, b->shape.d, i));
}

static int write_bufs(Ctx *c, uint64_t seed, const char *path, int kind) {
  Graph *g = &c->g;
  StTensor *ts = xcalloc((size_t)g->bufs.n, sizeof *ts);
  int n = 0, rc;
  for (int i = 0; i < g->bufs.n; i++) {
    Buf *b = &g->bufs.v[i];
    if (b->kind != kind) continue;
    StTensor *t = &ts[n++];
    t->name = b->name;
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype_st_name[b->dt]);
    t->ndim = b->shape.n;
    memcpy(t->shape, b->shape.d, sizeof t->shape);
    void *data = xcalloc((size_t)shape_numel(&b->shape) + 1, (size_t)dtype_size[b->dt]);
    fill(b, seed, data);
    t->data = data;
  }
  char err[512];
  rc = st_write(path, n, ts, err, sizeof err);
  if (rc) fprintf(stderr, "fluxcc: error: %s\n", err);
  for (int i = 0; i < n; i++) free((void *)ts[i].data);
  free(ts);
  return rc;
}

int model_init(Ctx *c, uint64_t seed, const char *wpath, const char *ipath) {
  if (write_bufs(c, seed, wpath, BUF_PARAM)) return -1;
  return write_bufs(c, seed, ipath, BUF_INPUT);
}

// Check one file (or a shard index's files: StSet) against the buffers of
// one kind; fill their values.
static int load_file(Ctx *c, const char *path, int kind, HostTensor *vals) {
  Graph *g = &c->g;
  static StSet f;   // (static: 5 KB; closed before returning)
  char err[512];
  if (st_set_add(&f, path, err, sizeof err)) {
    fprintf(stderr, "fluxcc: error: %s\n", err);
    return -1;
  }
  int bad = 0, first[ST_MAXFILES + 1] = {0};
  for (int i = 0; i < f.n; i++) first[i + 1] = first[i] + f.f[i].n;
  const char *what = kind == BUF_PARAM ? "parameter" : "input";
  char *used = xcalloc((size_t)first[f.n] + 1, 1);
  for (int i = 0; i < g->bufs.n; i++) {
    Buf *b = &g->bufs.v[i];
    if (b->kind != kind) continue;
    int fi = 0;
    StTensor *t = st_set_find(&f, b->name, &fi);
    char want[160], got[160];
    shape_str(&b->shape, want, sizeof want);
    if (!t) {
      if (bad++ < 20) fprintf(stderr, "fluxcc: error: %s: missing %s '%s' (%s%s)\n", path, what, b->name, dtype_name[b->dt], want);
      continue;
    }
    const char *in = f.f[fi].path;
    used[first[fi] + (t - f.f[fi].t)] = 1;
    Shape ts = {.n = t->ndim};
    memcpy(ts.d, t->shape, sizeof ts.d);
    shape_str(&ts, got, sizeof got);
    // an 8-bit float fills any float buffer (times its KEY.scale_weight, if the file
    // has one: ComfyUI's scaled fp8), rounded to the buffer's dtype
    int fdt = dtype_from_st_name(t->dtype), fs = 0;
    bool f8 = (fdt == DT_F8E4M3 || fdt == DT_F8E5M2) && b->dt != DT_BOOL;
    char sk[1024];
    nb_scale_key(b->name, sk, sizeof sk);
    StTensor *sc = f8 ? st_set_find(&f, sk, &fs) : NULL;
    int64_t sn = 1, rows = b->shape.n ? b->shape.d[0] : 1;
    for (int d = 0; sc && d < sc->ndim; d++) sn *= sc->shape[d];
    if (sc) used[first[fs] + (sc - f.f[fs].t)] = 1;
    if (sc && (dtype_from_st_name(sc->dtype) < DT_F16 || (sn != 1 && sn != rows))) {
      if (bad++ < 20)
        fprintf(stderr, "fluxcc: error: %s: scale '%s' is %s of %lld values; a scale is a float of 1 (per tensor) or %lld (per row)\n",
                f.f[fs].path, sk, sc->dtype, (long long)sn, (long long)rows);
      continue;
    }
    if ((fdt != b->dt && !f8) || strcmp(want, got)) {
      if (bad++ < 20)
        fprintf(stderr, "fluxcc: error: %s: %s '%s' is %s%s but the model declares %s%s\n", in, what, b->name, t->dtype, got,
                dtype_name[b->dt], want);
      continue;
    }
    int64_t n = shape_numel(&b->shape);
    vals[i].dt = b->dt;
    vals[i].shape = b->shape;
    vals[i].v = xcalloc((size_t)n + 1, sizeof(double));
    int64_t nonfinite = 0, first = -1;
    for (int64_t k = 0; k < n; k++) {
      vals[i].v[k] = f8 ? dtype_round(b->dt, (float)dtype_load(fdt, t->data, (size_t)k) *
                                                  (sc ? (float)dtype_load(dtype_from_st_name(sc->dtype), sc->data, sn == 1 ? 0 : (size_t)(k / (n / rows))) : 1.0f))
                        : dtype_load(b->dt, t->data, (size_t)k);
      if (!isfinite(vals[i].v[k]) && nonfinite++ == 0) first = k;
    }
    if (nonfinite && bad++ < 20)  // the reference would compute NaN from them and say nothing
      fprintf(stderr, "fluxcc: error: %s: %s '%s' holds %lld NaN/infinite values (first at element %lld)\n", in, what, b->name,
              (long long)nonfinite, (long long)first);
  }
  for (int k = 0; k < f.n; k++)
    for (int i = 0; i < f.f[k].n; i++) {
      const char *name = f.f[k].t[i].name;
      if (!used[first[k] + i] && !(kind == BUF_PARAM && (nb_has_prefix(name, g->unused.v, g->unused.n) || !strcmp(name, "scaled_fp8"))) &&
          bad++ < 20)
        fprintf(stderr, "fluxcc: error: %s: '%s' is not a%s %s of this model\n", f.f[k].path, name, kind == BUF_PARAM ? "" : "n", what);
    }
  if (bad > 20) fprintf(stderr, "fluxcc: error: %s: %d problems in all\n", path, bad);
  free(used);
  st_set_close(&f);
  return bad ? -1 : 0;
}

int model_load(Ctx *c, const char *wpath, const char *ipath, HostTensor *vals) {
  int a = load_file(c, wpath, BUF_PARAM, vals);
  int b = load_file(c, ipath, BUF_INPUT, vals);
  return a || b ? -1 : 0;
}

int model_save_outputs(Ctx *c, const char *path, HostTensor *outs) {
  Graph *g = &c->g;
  StTensor *ts = xcalloc((size_t)g->outs.n, sizeof *ts);
  for (int i = 0; i < g->outs.n; i++) {
    StTensor *t = &ts[i];
    t->name = g->outs.v[i].name;
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype_st_name[outs[i].dt]);
    t->ndim = outs[i].shape.n;
    memcpy(t->shape, outs[i].shape.d, sizeof t->shape);
    int64_t n = shape_numel(&outs[i].shape);
    void *data = xcalloc((size_t)n + 1, (size_t)dtype_size[outs[i].dt]);
    for (int64_t k = 0; k < n; k++) dtype_store(outs[i].dt, data, (size_t)k, outs[i].v[k]);
    t->data = data;
  }
  char err[512];
  int rc = st_write(path, g->outs.n, ts, err, sizeof err);
  if (rc) fprintf(stderr, "fluxcc: error: %s\n", err);
  for (int i = 0; i < g->outs.n; i++) free((void *)ts[i].data);
  free(ts);
  return rc;
}
