// buffers.c — what every part of ./flux does with a buffer: its values read
// and written in their dtype (as fluxcc's, so that random data matches
// `fluxcc init`), its shape and name said in a message, looked up by name;
// and host memory that exits 3 with a message when there is none.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"
#include "numbers.h"

#include <stdlib.h>
#include <string.h>

const char *const dt_name[] = {"bool", "f16", "bf16", "f32", "f8e4m3"};
const char *const dt_st[] = {"BOOL", "F16", "BF16", "F32", "F8_E4M3"};

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "flux: error: out of memory (%zu bytes)\n", n);
    exit(EXIT_DEVICE);
  }
  return p;
}

void *rt_calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    fprintf(stderr, "flux: error: out of memory (%zu x %zu bytes)\n", n, size);
    exit(EXIT_DEVICE);
  }
  return p;
}

int64_t numel(const RtBuffer *b) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) n *= b->shape[i];
  return n;
}

void shape_text(const int64_t *shape, int ndim, char *out, size_t n) {
  size_t o = (size_t)snprintf(out, n, "[");
  for (int i = 0; i < ndim && o < n; i++)
    o += (size_t)snprintf(out + o, n - o, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (o < n) snprintf(out + o, n - o, "]");
}

// A name from a file, made safe for a one-line message.
const char *safe_name(const char *s, char *buf, size_t n) {
  size_t i = 0;
  for (; s[i] && i + 4 < n && i < 200; i++)
    buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  if (s[i]) { memcpy(buf + i, "...", 3); i += 3; }
  buf[i] = 0;
  return buf;
}

int src_code(const char *st) {
  for (int i = 0; i <= RT_F8E4M3; i++)
    if (!strcmp(st, dt_st[i])) return i;
  return !strcmp(st, "F64") ? SRC_F64 : !strcmp(st, "F8_E5M2") ? SRC_F8E5M2 : -1;
}

double dt_load(int code, const void *p, int64_t i) {
  const unsigned char *b = p;
  uint16_t h;
  float f;
  double d;
  switch (code) {
  case RT_BOOL: return b[i] != 0;
  case RT_F16: memcpy(&h, b + 2 * i, 2); return f16_to_f32(h);
  case RT_BF16: memcpy(&h, b + 2 * i, 2); return bf16_to_f32(h);
  case RT_F32: memcpy(&f, b + 4 * i, 4); return f;
  case RT_F8E4M3: return f8e4m3_to_f32(b[i]);
  case SRC_F64: memcpy(&d, b + 8 * i, 8); return d;
  case SRC_F8E5M2: return f8e5m2_to_f32(b[i]);
  }
  return 0;
}

// As fluxcc's dtype_store, so that random data matches `fluxcc init`.
void dt_store(int dt, void *p, int64_t i, double x) {
  unsigned char *b = p;
  uint16_t h;
  float f;
  switch (dt) {
  case RT_BOOL: b[i] = x != 0; break;
  case RT_F16: h = f32_to_f16((float)x); memcpy(b + 2 * i, &h, 2); break;
  case RT_BF16: h = f32_to_bf16((float)x); memcpy(b + 2 * i, &h, 2); break;
  case RT_F32: f = (float)x; memcpy(b + 4 * i, &f, 4); break;
  case RT_F8E4M3: b[i] = f32_to_f8e4m3((float)x); break;
  }
}

// Whether a file dtype can fill a buffer: floats from any float dtype,
// bool only from BOOL.
int dtype_ok(int dt, int code) {
  if (dt == RT_BOOL) return code == RT_BOOL;
  return code >= RT_F16;
}

int same_shape(const RtBuffer *a, const RtBuffer *b) {
  return a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

int find_buf(const RtSchedule *s, const char *name, int kind) {
  for (int i = 0; i < s->nbufs; i++)
    if (s->bufs[i].kind == kind && !strcmp(s->bufs[i].name, name)) return i;
  return -1;
}
