// kernel_prelude.cl — helpers every generated OpenCL kernel uses (written by fluxcc).
// bf16 is stored as ushort and converted in registers (round to nearest even,
// NaN kept); f16 uses vload_half/vstore_half_rte, so no fp16 extension is needed.
static ushort f2bf(float v) {
  uint u = as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
static float ld_f32(__global const float *p, int i) { return p[i]; }
static float ld_bf16(__global const ushort *p, int i) { return as_float((uint)p[i] << 16); }
static float ld_f16(__global const half *p, int i) { return vload_half(i, p); }
static float ld_bool(__global const uchar *p, int i) { return p[i] ? 1.0f : 0.0f; }
static void st_f32(__global float *p, int i, float v) { p[i] = v; }
static void st_bf16(__global ushort *p, int i, float v) { p[i] = f2bf(v); }
static void st_f16(__global half *p, int i, float v) { vstore_half_rte(v, i, p); }
static void st_bool(__global uchar *p, int i, float v) { p[i] = v != 0.0f; }
static float rnd_bf16(float v) { return as_float((uint)f2bf(v) << 16); }
// tf32 as cvt.rna.tf32.f32 makes it: 10 mantissa bits, ties away from zero
static float rnd_tf32(float v) { uint u = as_uint(v); if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u; return as_float(u); }
static float ld_bf16_l(__local const ushort *p, int i) { return as_float((uint)p[i] << 16); }
static float ld_f16_l(__local const ushort *p, int i) { return vload_half(i, (__local const half *)p); }
static float rnd_f16(float v) { ushort h; vstore_half_rte(v, 0, (half *)&h); return vload_half(0, (half *)&h); }
// VEC: the same on floatN, lanes at p[i], p[i+1], ... (N = 2, 4, 8, 16)
#define FLUX_VEC(N) \
static float##N ld_f32x##N(__global const float *p, int i) { return vload##N(0, p + i); } \
static float##N ld_bf16x##N(__global const ushort *p, int i) { return as_float##N(convert_uint##N(vload##N(0, p + i)) << 16); } \
static float##N ld_f16x##N(__global const half *p, int i) { return vload_half##N(0, p + i); } \
static float##N rnd_bf16x##N(float##N v) { \
  uint##N u = as_uint##N(v), r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u; \
  return as_float##N(select(r, (u & 0xffff0000u) | 0x400000u, (u & 0x7fffffffu) > 0x7f800000u)); \
} \
static float##N rnd_f16x##N(float##N v) { ushort h[N]; vstore_half##N##_rte(v, 0, (half *)h); return vload_half##N(0, (half *)h); } \
static void st_f32x##N(__global float *p, int i, float##N v) { vstore##N(v, 0, p + i); } \
static void st_bf16x##N(__global ushort *p, int i, float##N v) { vstore##N(convert_ushort##N(as_uint##N(rnd_bf16x##N(v)) >> 16), 0, p + i); } \
static void st_f16x##N(__global half *p, int i, float##N v) { vstore_half##N##_rte(v, 0, p + i); }
FLUX_VEC(2)
FLUX_VEC(4)
FLUX_VEC(8)
FLUX_VEC(16)
