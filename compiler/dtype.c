// dtype.c — storage types and their conversions (bf16/f16 done by hand so
// the rounding is the same on every compiler: round to nearest, ties to even).
#include "fluxcc.h"

#include <math.h>
#include <string.h>

const char *const dtype_name[] = {
#define X(e, s, sz, st) s,
  DTYPES(X)
#undef X
};
const char *const dtype_st_name[] = {
#define X(e, s, sz, st) st,
  DTYPES(X)
#undef X
};
const int dtype_size[] = {
#define X(e, s, sz, st) sz,
  DTYPES(X)
#undef X
};

int dtype_from_name(const char *s) {
  for (int i = 0; i < DT_COUNT; i++)
    if (!strcmp(s, dtype_name[i])) return i;
  return -1;
}

int dtype_from_st_name(const char *s) {
  for (int i = 0; i < DT_COUNT; i++)
    if (!strcmp(s, dtype_st_name[i])) return i;
  return -1;
}

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00;                // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00;               // rounds to inf (>= 65520)
  if (a < 0x38800000u) {                                    // subnormal or zero in f16
    float v = bits_f32(a) * 0x1p24f;                        // exact scaling
    float r = nearbyintf(v);                                // ties to even (default mode)
    return sign | (uint16_t)r;
  }
  uint32_t mant = a + 0xfffu + ((a >> 13) & 1);             // round at bit 13
  return sign | (uint16_t)((mant - 0x38000000u) >> 13);
}

double dtype_round(int dt, double x) {
  switch (dt) {
  case DT_BOOL: return x != 0;
  case DT_F16: return f16_to_f32(f32_to_f16((float)x));
  case DT_BF16: return bf16_to_f32(f32_to_bf16((float)x));
  case DT_F32: return (float)x;
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
  }
}
