// kernel_prelude.cl — helpers every generated OpenCL kernel uses (written by fluxcc).
// bf16 is stored as ushort and converted in registers (round to nearest even,
// NaN kept); f16 uses vload_half/vstore_half_rte, so no fp16 extension is needed.
static ushort f2bf(float v) {
  uint u = as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
// a gather's row: its id truncated and clamped to the table (NaN: row 0), never a read outside it
static int gather_row(float v, int rows) { return v >= 0.0f ? (v < (float)rows ? (int)v : rows - 1) : 0; }
static float ld_f32(__global const float *p, int i) { return p[i]; }
static float ld_bf16(__global const ushort *p, int i) { return as_float((uint)p[i] << 16); }
static float ld_f16(__global const half *p, int i) { return vload_half(i, p); }
static float ld_bool(__global const uchar *p, int i) { return p[i] ? 1.0f : 0.0f; }
// float8_e4m3fn (--weights fp8): exact in float; the NaN codes never get here (refused at load)
static float ld_f8e4m3(__global const uchar *p, int i) {
  uint b = p[i], s = (b & 0x80u) << 24, e = (b >> 3) & 15u, m = b & 7u;
  return e ? as_float(s | ((e + 120u) << 23) | (m << 20)) : (s ? -(float)m : (float)m) * 0.001953125f;
}
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
/* fp8: a byte vector widened, its fields by integer vector ops; a subnormal's m 2^-9 is */ \
/* 2^-6 (1 + m/8) - 2^-6 (exact), chosen by select: no lane by lane, no float conversion */ \
static float##N ld_f8e4m3x##N(__global const uchar *p, int i) { \
  uint##N b = convert_uint##N(vload##N(0, p + i)), e = (b >> 3) & 15u, m = (b & 7u) << 20; \
  float##N sub = as_float##N(m | (121u << 23)) - 0.015625f; \
  return as_float##N(((b & 0x80u) << 24) | as_uint##N(select(sub, as_float##N(((e + 120u) << 23) | m), e != 0u))); \
} \
static void st_bf16x##N(__global ushort *p, int i, float##N v) { vstore##N(convert_ushort##N(as_uint##N(rnd_bf16x##N(v)) >> 16), 0, p + i); } \
static void st_f16x##N(__global half *p, int i, float##N v) { vstore_half##N##_rte(v, 0, p + i); }
FLUX_VEC(2)
FLUX_VEC(4)
FLUX_VEC(8)
FLUX_VEC(16)
// TC without tensor cores: mma.sync's fragment layouts (PTX ISA) through the
// warp's tiles in local memory (t: 384 floats; A at t[row*K+col], B at
// t[256+row*8+col]). Lane 4 g + t4 stores its A and B elements where the
// layout says they are, then computes its C elements c0..c3 from the tiles, so
// a wrong layout gives wrong numbers here as on a GPU. Macros, not functions:
// their barriers stay in the kernel's body, as the inline text they replace.
// The product of the stored tiles, the same for every shape:
#define MMA_EMU_PRODUCT(K, c0, c1, c2, c3) \
  barrier(CLK_LOCAL_MEM_FENCE); \
  for (int kk = 0; kk < K; kk++) { \
    c0 += mma_t[mma_g*K+kk] * mma_t[256+kk*8+mma_t4*2]; \
    c1 += mma_t[mma_g*K+kk] * mma_t[256+kk*8+mma_t4*2+1]; \
    c2 += mma_t[(mma_g+8)*K+kk] * mma_t[256+kk*8+mma_t4*2]; \
    c3 += mma_t[(mma_g+8)*K+kk] * mma_t[256+kk*8+mma_t4*2+1]; \
  } \
  barrier(CLK_LOCAL_MEM_FENCE);
// m16n8k16 (bf16, f16: the values are already rounded to the operand dtype)
#define MMA_M16N8K16_EMU(tile, g, t4, c0, c1, c2, c3, a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3) do { \
  __local float *mma_t = (tile); int mma_g = (g), mma_t4 = (t4); \
  mma_t[mma_g*16+mma_t4*2] = (a0), mma_t[mma_g*16+mma_t4*2+1] = (a1); \
  mma_t[(mma_g+8)*16+mma_t4*2] = (a2), mma_t[(mma_g+8)*16+mma_t4*2+1] = (a3); \
  mma_t[mma_g*16+mma_t4*2+8] = (a4), mma_t[mma_g*16+mma_t4*2+9] = (a5); \
  mma_t[(mma_g+8)*16+mma_t4*2+8] = (a6), mma_t[(mma_g+8)*16+mma_t4*2+9] = (a7); \
  mma_t[256+(mma_t4*2)*8+mma_g] = (b0), mma_t[256+(mma_t4*2+1)*8+mma_g] = (b1); \
  mma_t[256+(mma_t4*2+8)*8+mma_g] = (b2), mma_t[256+(mma_t4*2+9)*8+mma_g] = (b3); \
  MMA_EMU_PRODUCT(16, c0, c1, c2, c3) \
} while (0)
// m16n8k8 tf32: the operands rounded as cvt.rna does
#define MMA_M16N8K8_TF32_EMU(tile, g, t4, c0, c1, c2, c3, a0, a1, a2, a3, b0, b1) do { \
  __local float *mma_t = (tile); int mma_g = (g), mma_t4 = (t4); \
  mma_t[mma_g*8+mma_t4] = rnd_tf32(a0), mma_t[(mma_g+8)*8+mma_t4] = rnd_tf32(a1); \
  mma_t[mma_g*8+mma_t4+4] = rnd_tf32(a2), mma_t[(mma_g+8)*8+mma_t4+4] = rnd_tf32(a3); \
  mma_t[256+mma_t4*8+mma_g] = rnd_tf32(b0), mma_t[256+(mma_t4+4)*8+mma_g] = rnd_tf32(b1); \
  MMA_EMU_PRODUCT(8, c0, c1, c2, c3) \
} while (0)
