// numbers.h — bf16/f16 conversions, the seeded random values of
// `fluxcc init` / `--random-weights`, the one integer parser of every
// numeric option and environment variable, and the FNV-1a hash. Header-only
// and shared by fluxcc and the emitted runtime, so both make bit-identical
// data from one seed and read "12" the same way.
#ifndef NUMBERS_H
#define NUMBERS_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

// float8_e4m3fn (torch's name; --weights fp8): 1 sign, 4 exponent bits (bias
// 7), 3 mantissa bits; no infinities, 0x7f and 0xff are NaN, 448 the largest.
// Every value is exact in f16, bf16 and f32.
static inline int f8e4m3_is_nan(uint8_t b) { return (b & 0x7f) == 0x7f; }
static inline float f8e4m3_to_f32(uint8_t b) {
  uint32_t e = (b >> 3) & 15, m = b & 7;
  float v = f8e4m3_is_nan(b) ? NAN : e ? nb_bits_f32(((e + 120) << 23) | (m << 20)) : (float)m * 0x1p-9f;
  return b & 0x80 ? -v : v;
}
// round to nearest, ties to even; past 448 saturates (a quantizer's choice:
// torch gives NaN there), NaN stays NaN
static inline uint8_t f32_to_f8e4m3(float f) {
  uint8_t sign = (uint8_t)(nb_f32_bits(f) >> 24 & 0x80);
  float a = fabsf(f);
  if (isnan(f)) return sign | 0x7f;
  if (a >= 464) return sign | 0x7e;                       // 464: halfway to 480, which is NaN's code
  if (a < 0x1p-6f) return sign | (uint8_t)nearbyintf(a * 0x1p9f);   // subnormal steps of 2^-9 (8 is 2^-6's code)
  int e;
  frexpf(a, &e);                                          // a = f * 2^e, f in [0.5, 1)
  uint32_t m = (uint32_t)nearbyintf((ldexpf(a, 1 - e) - 1) * 8);   // exact scaling; m == 8 carries into the exponent
  uint32_t code = ((uint32_t)(e - 1 + 7) << 3) + m;
  return sign | (uint8_t)(code > 0x7e ? 0x7e : code);
}
// float8_e5m2: the upper byte of an f16 (read from checkpoints; the encoder
// rounds through f16, which can round twice, for the tests' sake only)
static inline float f8e5m2_to_f32(uint8_t b) { return f16_to_f32((uint16_t)(b << 8)); }
static inline uint8_t f32_to_f8e5m2(float f) {
  uint16_t h = f32_to_f16(f);
  if ((h & 0x7fff) > 0x7c00) return (uint8_t)(h >> 8 | 2);
  return (uint8_t)((h + 0x7f + (h >> 8 & 1)) >> 8);
}
// The per-output-row scale of an fp8 weight KEY: ComfyUI's scaled-fp8 name,
// KEY's ".weight" replaced by ".scale_weight" (KEY + ".scale_weight" else).
static inline void nb_scale_key(const char *key, char *out, size_t n) {
  size_t k = strlen(key), w = strlen(".weight");
  if (k > w && !strcmp(key + k - w, ".weight")) k -= w;
  snprintf(out, n, "%.*s.scale_weight", (int)k, key);
}

// The one integer parser (fluxcc's and the binary's options, FLUX_EMU_*,
// FLUXCC_FAULT): decimal digits only (no sign, space, 0x or exponent; 010 is
// ten), in [lo, hi]. 0: *out set; -1: not a decimal integer; -2: out of range
// (also past 2^64). Nothing is clamped: the caller names the option and range.
static inline int nb_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!s || !*s) return -1;
  uint64_t v = 0;
  int big = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) big = 1;
    else v = v * 10 + d;
  }
  if (big || v < lo || v > hi) return -2;
  *out = v;
  return 0;
}
static inline int nb_parse_int(const char *s, int lo, int hi, int *out) {
  uint64_t v;
  int rc = nb_parse_u64(s, lo < 0 ? 0 : (uint64_t)lo, hi < 0 ? 0 : (uint64_t)hi, &v);
  if (rc == 0) *out = (int)v;
  return rc;
}

// FNV-1a over bytes, from NB_FNV_SEED: the one hash (fluxcc's tables, cache
// keys, the kernel files' content hashes the runtime checks, the streams below)
#define NB_FNV_SEED 14695981039346656037ull
static inline uint64_t nb_fnv(uint64_t h, const void *p, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
  return h;
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
  return seed ^ nb_fnv(1469598103934665603ull, name, strlen(name));  // (not NB_FNV_SEED: the streams predate it)
}

// Whether key starts with one of the n prefixes (unused_keys: tensors a
// checkpoint may hold that the model does not read).
static inline int nb_has_prefix(const char *key, const char *const *prefixes, int n) {
  for (int i = 0; i < n; i++)
    if (!strncmp(key, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

// The offset of the first byte that is not well-formed UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF included), or -1 when all of s[0..n)
// is: the one check of a prompt, before either tokenizer sees it.
static inline long long nb_utf8_bad(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned c = p[i], len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!len || i + len > n) return (long long)i;
    unsigned lo = 0x80, hi = 0xBF;  // the second byte's range, narrower after E0, ED, F0, F4
    if (c == 0xE0) lo = 0xA0; else if (c == 0xED) hi = 0x9F; else if (c == 0xF0) lo = 0x90; else if (c == 0xF4) hi = 0x8F;
    for (unsigned k = 1; k < len; k++)
      if (p[i + k] < (k == 1 ? lo : 0x80) || p[i + k] > (k == 1 ? hi : 0xBF)) return (long long)i;
    i += len;
  }
  return -1;
}

// Initializers (fluxcc's INIT_*, the runtime's RT_INIT_*): the same codes.
enum { NB_DEFAULT, NB_NORMAL, NB_UNIFORM, NB_GRID, NB_ZEROS, NB_INTEGERS };

// Value i of a buffer. Defaults: inputs N(0,1); parameters of rank >= 2
// N(0, 1/last_dim) (std 1/sqrt(fan_in)), rank-1 parameters N(0, 0.05^2).
// grid(h, w) fills ids [B, h*w, 3] with (0, row, col); integers(lo, hi) draws
// whole numbers in [lo, hi) (token ids).
static inline double nb_value(uint64_t *s, int init, double ia, double ib, int is_param, int ndim,
                              const int64_t *shape, int64_t i) {
  switch (init) {
  case NB_NORMAL: return ia + ib * nb_normal(s);
  case NB_UNIFORM: return ia + (ib - ia) * nb_uniform(s);
  case NB_ZEROS: return 0;
  case NB_INTEGERS: return floor(ia + (ib - ia) * nb_uniform(s));
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
