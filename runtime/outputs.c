// outputs.c — what ./flux does with a program's outputs once they are on the
// host: written (--out as safetensors, --png as an 8-bit image, a sampled
// program's `latents`), checked against a reference (--check), and summed
// up in one line each.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"
#include "image_png.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// FLUX_OUT_ALL=1 also writes every intermediate (compile with fluxcc
// --no-reuse so none is overwritten): kernels can then be compared one by one.
int write_outputs(const RtSchedule *s, void **host, const char *path, int all, int quiet) {
  StTensor *ts = rt_calloc((size_t)s->nbufs, sizeof *ts);
  int n = 0;
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    if (b->kind != RT_OUTPUT && !(all && b->kind == RT_TEMP)) continue;
    StTensor *t = &ts[n++];
    t->name = (char *)b->name;
    snprintf(t->dtype, sizeof t->dtype, "%s", dt_st[b->dtype]);
    t->ndim = b->ndim;
    memcpy(t->shape, b->shape, sizeof t->shape);
    t->data = host[i];
  }
  char err[1024];
  int rc = st_write(path, n, ts, err, sizeof err);
  char said[4200];
  if (rc) fprintf(stderr, "flux: error: %s\n", err);
  else if (!quiet) printf("wrote:    %s\n", out_said(path, n, said, sizeof said));
  free(ts);
  return rc;
}

// --steps with --out: the sampled latents (x, lat's dtype and shape) as the
// one tensor `latents`. 0, or -1 with a message.
int write_latents(const RtBuffer *lat, const void *x, const char *path, int quiet) {
  StTensor t = {.name = (char *)lat->name, .ndim = lat->ndim, .data = x};
  snprintf(t.dtype, sizeof t.dtype, "%s", dt_st[lat->dtype]);
  memcpy(t.shape, lat->shape, sizeof t.shape);
  char err[1024], said[4200];
  if (st_write(path, 1, &t, err, sizeof err)) {
    fprintf(stderr, "flux: error: %s\n", err);
    return -1;
  }
  if (!quiet) printf("wrote:    %s\n", out_said(path, 1, said, sizeof said));
  return 0;
}

#ifdef FLUX_PNG
// The output b ([1, 3 or 1, H, W]) as an 8-bit PNG in memory (*data, *len;
// the caller frees it). An image with a NaN or an infinity is refused (its
// pixels would be a silent black): 0, or -1 with the reason in err.
int encode_png(const RtBuffer *b, const void *x, unsigned char **data, size_t *len, char *err, size_t errlen) {
  int64_t n = numel(b), bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(dt_load(b->dtype, x, i)) && bad++ == 0) first = i;
  if (bad)
    return snprintf(err, errlen, "the output `%s` has %lld of %lld values not finite (the first at %lld): the run diverged "
                    "(look at the option values and the inputs)", b->name, (long long)bad, (long long)n, (long long)first), -1;
  PngBytes png;
  if (png_encode_chw((int)b->shape[1], b->shape[2], b->shape[3], dt_load, b->dtype, x, &png, err, errlen)) return -1;
  *data = png.data, *len = png.len;
  return 0;
}

// --png: the output b (checked before the run) as an 8-bit PNG, written by
// out_write; not written when encode_png refuses it. 0, or -1 with a message.
// (Without libpng --png is refused on the command line.)
int write_png(const RtBuffer *b, const void *x, const char *path, int quiet) {
  char err[4400];
  unsigned char *png;
  size_t len;
  if (encode_png(b, x, &png, &len, err, sizeof err)) {
    fprintf(stderr, "flux: error: %s: not written: %s\n", path, err);
    return -1;
  }
  const void *part = png;
  int rc = out_write(path, 1, &part, &len, err, sizeof err);
  free(png);
  if (rc) {
    fprintf(stderr, "flux: error: %s\n", err);
    return -1;
  }
  if (!quiet) printf("wrote:    %s (PNG, %lldx%lld)\n", path, (long long)b->shape[3], (long long)b->shape[2]);
  return 0;
}
#endif

// One output against the reference: returns 1 if it passes.
int check_output(const RtBuffer *b, const void *out, const StTensor *ref, const Opts *o) {
  int code = src_code(ref->dtype);
  int64_t n = numel(b), nonfinite = 0;
  double diff2 = 0, ref2 = 0, max_abs = 0, max_rel = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = dt_load(b->dtype, out, i), r = dt_load(code, ref->data, i), e = fabs(a - r);
    if (!isfinite(a)) {   // counted, and kept out of the errors so that they still say something
      nonfinite++;
      continue;
    }
    diff2 += e * e;
    ref2 += r * r;
    if (e > max_abs) max_abs = e;
    double rel = e / fmax(fabs(r), 1e-30);
    if (rel > max_rel) max_rel = rel;
  }
  double rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : diff2 == 0 ? 0 : INFINITY;
  double rtol = o->has_rtol ? o->rtol : b->dtype == RT_F32 ? 1e-5 : 2e-2;
  int ok = nonfinite == 0 && rel_l2 <= rtol && (!o->has_atol || max_abs <= o->atol);   // NaN fails
  printf("check %s: rel_l2=%.3e max_abs=%.3e max_rel=%.3e nonfinite=%lld  %s\n", b->name, rel_l2, max_abs, max_rel,
         (long long)nonfinite, ok ? "ok" : "FAIL");
  return ok;
}

void print_stats(const RtBuffer *b, const void *out) {
  int64_t n = numel(b), bad = 0, good = 0;
  double sum = 0, sum2 = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    double v = dt_load(b->dtype, out, i);
    if (!isfinite(v)) { bad++; continue; }
    good++;
    sum += v;
    sum2 += v * v;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  double mean = good ? sum / good : 0, var = good ? sum2 / good - mean * mean : 0;
  char sh[200];
  shape_text(b->shape, b->ndim, sh, sizeof sh);
  printf("output %s: %s%s mean=%.6g std=%.6g min=%.6g max=%.6g", b->name, dt_name[b->dtype], sh, mean,
         sqrt(var > 0 ? var : 0), good ? lo : 0, good ? hi : 0);
  if (bad) printf(" nonfinite=%lld", (long long)bad);
  printf("\n");
}
