// fp8.c — 8-bit weights at load: a --weights fp8 binary's linear weights
// (float8_e4m3fn, one f32 scale per output row, KEY.scale_weight) from an
// F8_E4M3 checkpoint as they are (ComfyUI's scaled-fp8 layout: its per-tensor
// scale_weight is every row's), or quantized from a float checkpoint or the
// seeded generator (per row: scale = absmax / 448, q = e4m3(x / scale)); and
// any binary's float weight from an F8_E4M3 tensor and its scale.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"
#include "numbers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// The file's scale of weight `key` (KEY.scale_weight), or NULL.
const StTensor *fp8_scale_tensor(StSet *f, const char *key) {
  char sk[512];
  nb_scale_key(key, sk, sizeof sk);
  return f && f->n ? st_set_find(f, sk, NULL) : NULL;
}

// Row r's scale from a scale tensor of 1 value (every row's) or one per row.
static double scale_at(const StTensor *ts, int64_t r) {
  int64_t n = 1;
  for (int d = 0; d < ts->ndim; d++) n *= ts->shape[d];
  return dt_load(src_code(ts->dtype), ts->data, n == 1 ? 0 : r);
}

// Whether scale tensor ts fits a weight of `rows` rows: a float of one value
// or of `rows`; else why not, into why.
int fp8_scale_bad(const StTensor *ts, int64_t rows, char *why, size_t n) {
  int64_t k = 1;
  for (int d = 0; d < ts->ndim; d++) k *= ts->shape[d];
  int code = src_code(ts->dtype);
  if (code < RT_F16) return snprintf(why, n, "has dtype %s; a scale is a float (F32, BF16, F16)", ts->dtype), 1;
  if (k != 1 && (k != rows || ts->ndim != 1))
    return snprintf(why, n, "holds %lld values; a scale has 1 (per tensor) or one per output row (%lld)", (long long)k, (long long)rows), 1;
  return 0;
}

// Weight b (RT_F8E4M3, rows x cols) as bytes, and its row scales into
// scale[rows]: from f's tensor (F8 as it is; a float quantized) or random.
const void *fp8_values(const RtBuffer *b, StSet *f, uint64_t seed, void **tmp, uint64_t *cap, float *scale) {
  int64_t rows = b->shape[0], cols = b->shape[1];
  const StTensor *t = f && f->n ? st_set_find(f, b->name, NULL) : NULL;
  int code = t ? src_code(t->dtype) : -1;
  if (code == RT_F8E4M3) {
    const StTensor *ts = fp8_scale_tensor(f, b->name);
    for (int64_t r = 0; r < rows; r++) scale[r] = ts ? (float)scale_at(ts, r) : 1.0f;   // no scale: 1
    return t->data;
  }
  if (*cap < b->bytes) {
    free(*tmp);
    *tmp = xmalloc((size_t)b->bytes);
    *cap = b->bytes;
  }
  unsigned char *q = *tmp;
  float *row = xmalloc((size_t)cols * sizeof *row);
  uint64_t st = nb_stream(seed, b->name);
  for (int64_t r = 0; r < rows; r++) {
    float amax = 0;
    for (int64_t c = 0; c < cols; c++) {
      double x = t ? dt_load(code, t->data, r * cols + c)
                   : nb_value(&st, b->init, b->ia, b->ib, 1, b->ndim, b->shape, r * cols + c);
      float v = 0;
      if (!t) dt_store(b->qfrom, &v, 0, x), x = dt_load(b->qfrom, &v, 0);  // as `fluxcc init` writes it
      row[c] = (float)x;
      if (fabsf(row[c]) > amax || isnan(row[c])) amax = fabsf(row[c]);
    }
    scale[r] = amax > 0 ? amax / 448.0f : 1.0f;
    for (int64_t c = 0; c < cols; c++) q[r * cols + c] = f32_to_f8e4m3(row[c] / scale[r]);
  }
  free(row);
  return q;
}

// The values of float buffer b from F8_E4M3 tensor t times its scale (if f
// holds one), rounded to b's dtype, into out.
void fp8_dequant(const RtBuffer *b, const StTensor *t, StSet *f, void *out) {
  const StTensor *ts = fp8_scale_tensor(f, b->name);
  int64_t n = numel(b), cols = b->ndim ? n / (b->shape[0] ? b->shape[0] : 1) : 1;
  for (int64_t k = 0; k < n; k++)
    dt_store(b->dtype, out, k, (float)f8e4m3_to_f32(((const unsigned char *)t->data)[k]) * (ts ? (float)scale_at(ts, k / cols) : 1.0f));
}
