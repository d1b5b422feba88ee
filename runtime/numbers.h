// numbers.h — bf16/f16 conversions and the seeded random values of
// `fluxcc init` / `--random-weights`. Header-only and shared by fluxcc and
// the emitted runtime, so both make bit-identical data from one seed.
#ifndef NUMBERS_H
#define NUMBERS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t nb_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float nb_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float bf16_to_f32(uint16_t h) { return nb_bits_f32((uint32_t)h << 16); }

// round to nearest, ties to even; NaN stays NaN
static inline uint16_t f32_to_bf16(float f) {
  uint32_t u = nb_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return nb_bits_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
  }
  return nb_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t f32_to_f16(float f) {
  uint32_t u = nb_f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00;                // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00;               // rounds to inf (>= 65520)
  if (a < 0x38800000u) {                                    // subnormal or zero in f16
    float r = nearbyintf(nb_bits_f32(a) * 0x1p24f);         // exact scaling, ties to even
    return sign | (uint16_t)r;
  }
  uint32_t mant = a + 0xfffu + ((a >> 13) & 1);             // round at bit 13
  return sign | (uint16_t)((mant - 0x38000000u) >> 13);
}

// splitmix64: small, seedable, the same stream on every platform
static inline uint64_t nb_rng(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline double nb_uniform(uint64_t *s) { return (double)(nb_rng(s) >> 11) * 0x1p-53; }
static inline double nb_normal(uint64_t *s) {
  double u = nb_uniform(s), v = nb_uniform(s);
  return sqrt(-2 * log(u + 0x1p-60)) * cos(2 * 3.14159265358979323846 * v);
}

// Each buffer has its own stream: seed ^ hash(name), so adding a buffer
// does not change the others.
static inline uint64_t nb_stream(uint64_t seed, const char *name) {
  uint64_t h = 1469598103934665603ull;
  while (*name) h = (h ^ (unsigned char)*name++) * 1099511628211ull;
  return seed ^ h;
}

// Initializers (fluxcc's INIT_*, the runtime's RT_INIT_*): the same codes.
enum { NB_DEFAULT, NB_NORMAL, NB_UNIFORM, NB_GRID, NB_ZEROS };

// Value i of a buffer. Defaults: inputs N(0,1); parameters of rank >= 2
// N(0, 1/last_dim) (std 1/sqrt(fan_in)), rank-1 parameters N(0, 0.05^2).
// grid(h, w) fills ids [B, h*w, 3] with (0, row, col).
static inline double nb_value(uint64_t *s, int init, double ia, double ib, int is_param, int ndim,
                              const int64_t *shape, int64_t i) {
  switch (init) {
  case NB_NORMAL: return ia + ib * nb_normal(s);
  case NB_UNIFORM: return ia + (ib - ia) * nb_uniform(s);
  case NB_ZEROS: return 0;
  case NB_GRID: {
    int64_t tok = (i / 3) % shape[1], w = (int64_t)ib;
    return i % 3 == 0 ? 0 : i % 3 == 1 ? (double)(tok / w) : (double)(tok % w);
  }
  }
  if (!is_param) return nb_normal(s);
  double std = ndim >= 2 ? 1 / sqrt((double)shape[ndim - 1]) : 0.05;
  return std * nb_normal(s);
}

#endif
