// dtype.c — storage types: names, sizes, rounding, loads and stores.
#include "fluxcc.h"
#include "numbers.h"   // the conversions themselves (shared with the runtime)

#include <math.h>
#include <string.h>

const char *const dtype_name[] = {
#define X(e, s, sz, st, dsl) s,
  DTYPES(X)
#undef X
};
const char *const dtype_st_name[] = {
#define X(e, s, sz, st, dsl) st,
  DTYPES(X)
#undef X
};
const char *const dtype_rt_name[] = {
#define X(e, s, sz, st, dsl) "RT_" #e,
  DTYPES(X)
#undef X
};
static const bool dtype_dsl[] = {
#define X(e, s, sz, st, dsl) dsl,
  DTYPES(X)
#undef X
};
const int dtype_size[] = {
#define X(e, s, sz, st, dsl) sz,
  DTYPES(X)
#undef X
};

// a dtype the DSL names (the 8-bit floats are not: storage only)
int dtype_from_name(const char *s) {
  for (int i = 0; i < DT_COUNT; i++)
    if (dtype_dsl[i] && !strcmp(s, dtype_name[i])) return i;
  return -1;
}

int dtype_from_st_name(const char *s) {
  for (int i = 0; i < DT_COUNT; i++)
    if (!strcmp(s, dtype_st_name[i])) return i;
  return -1;
}

double dtype_round(int dt, double x) {
  switch (dt) {
  case DT_BOOL: return x != 0;
  case DT_F16: return f16_to_f32(f32_to_f16((float)x));
  case DT_BF16: return bf16_to_f32(f32_to_bf16((float)x));
  case DT_F32: return (float)x;
  case DT_F8E4M3: return f8e4m3_to_f32(f32_to_f8e4m3((float)x));
  case DT_F8E5M2: return f8e5m2_to_f32(f32_to_f8e5m2((float)x));
  }
  return x;
}

double dtype_load(int dt, const void *p, size_t i) {
  const unsigned char *b = p;
  uint16_t h;
  float f;
  switch (dt) {
  case DT_BOOL: return b[i] != 0;
  case DT_F16: memcpy(&h, b + 2 * i, 2); return f16_to_f32(h);
  case DT_BF16: memcpy(&h, b + 2 * i, 2); return bf16_to_f32(h);
  case DT_F32: memcpy(&f, b + 4 * i, 4); return f;
  case DT_F8E4M3: return f8e4m3_to_f32(b[i]);
  case DT_F8E5M2: return f8e5m2_to_f32(b[i]);
  }
  return 0;
}

void dtype_store(int dt, void *p, size_t i, double x) {
  unsigned char *b = p;
  uint16_t h;
  float f;
  switch (dt) {
  case DT_BOOL: b[i] = x != 0; break;
  case DT_F16: h = f32_to_f16((float)x); memcpy(b + 2 * i, &h, 2); break;
  case DT_BF16: h = f32_to_bf16((float)x); memcpy(b + 2 * i, &h, 2); break;
  case DT_F32: f = (float)x; memcpy(b + 4 * i, &f, 4); break;
  case DT_F8E4M3: b[i] = f32_to_f8e4m3((float)x); break;
  case DT_F8E5M2: b[i] = f32_to_f8e5m2((float)x); break;
  }
}
