// kernel_prelude.h — helpers every generated C kernel uses (written by fluxcc).
// bf16 and f16 are stored as uint16_t and converted in registers, rounding to
// nearest even as the GPU's conversions do (NaN kept quiet); values are
// float, as in the other targets.
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t u_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline uint16_t f2bf(float v) {
  uint32_t u = u_of(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static inline uint16_t f2h(float v) {
  uint32_t u = u_of(v), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));   // NaN
  if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);                          // 65520 and up round to inf
  if (a >= 0x38800000u) return (uint16_t)(s | ((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));  // normal
  return (uint16_t)(s | (uint32_t)nearbyintf(f_of(a) * 16777216.0f));           // subnormal: units of 2^-24
}
static inline float h2f(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31) return f_of(s | 0x7f800000u | (m << 13));
  if (e == 0) return s ? -(float)m * 5.9604644775390625e-8f : (float)m * 5.9604644775390625e-8f;
  return f_of(s | ((e + 112) << 23) | (m << 13));
}
// a gather's row: its id truncated and clamped to the table (NaN: row 0), never a read outside it
static inline int gather_row(float v, int rows) { return v >= 0.0f ? (v < (float)rows ? (int)v : rows - 1) : 0; }
static inline float ld_f32(const float *p, int i) { return p[i]; }
static inline float ld_bf16(const uint16_t *p, int i) { return f_of((uint32_t)p[i] << 16); }
static inline float ld_f16(const uint16_t *p, int i) { return h2f(p[i]); }
static inline float ld_bool(const unsigned char *p, int i) { return p[i] ? 1.0f : 0.0f; }
// float8_e4m3fn (--weights fp8): exact in float; the NaN codes never get here (refused at load)
static inline float ld_f8e4m3(const unsigned char *p, int i) {
  uint32_t b = p[i], s = (b & 0x80u) << 24, e = (b >> 3) & 15u, m = b & 7u;
  return e ? f_of(s | ((e + 120u) << 23) | (m << 20)) : (s ? -(float)m : (float)m) * 0.001953125f;
}
static inline void st_f32(float *p, int i, float v) { p[i] = v; }
static inline void st_bf16(uint16_t *p, int i, float v) { p[i] = f2bf(v); }
static inline void st_f16(uint16_t *p, int i, float v) { p[i] = f2h(v); }
static inline void st_bool(unsigned char *p, int i, float v) { p[i] = v != 0.0f; }
static inline float rnd_bf16(float v) { return f_of((uint32_t)f2bf(v) << 16); }
static inline float rnd_f16(float v) { return h2f(f2h(v)); }
