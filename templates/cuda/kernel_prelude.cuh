// kernel_prelude.cuh — helpers every generated CUDA kernel uses (written by fluxcc).
// Values are computed in float; bf16/f16 storage is converted on load and store,
// and rnd_* rounds a value to the precision its dtype holds (nearest even).
// Warp-level instructions and shared-memory accesses are named helpers: inline
// PTX on the GPU; built with FLUX_EMU (`make emu`), the emulation in emu/flux_emu.h.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#define FLUX_D static __device__ __forceinline__
// a gather's row: its id truncated and clamped to the table (NaN: row 0), never a read outside it
FLUX_D int gather_row(float v, int rows) { return v >= 0.0f ? (v < (float)rows ? (int)v : rows - 1) : 0; }
FLUX_D float ld_f32(const float *p, int i) { return p[i]; }
FLUX_D float ld_bf16(const __nv_bfloat16 *p, int i) { return __bfloat162float(p[i]); }
FLUX_D float ld_f16(const __half *p, int i) { return __half2float(p[i]); }
FLUX_D float ld_bool(const unsigned char *p, int i) { return p[i] ? 1.0f : 0.0f; }
// float8_e4m3fn (--weights fp8): (8 + m) 2^(e - 10), subnormal m 2^-9, exact in float by
// integer and power-of-two products (no bit casts: NVRTC has no C library headers for memcpy, the emulation no
// __uint_as_float); the NaN codes never get here (refused at load)
FLUX_D float ld_f8e4m3(const unsigned char *p, int i) {
  unsigned b = p[i], e = (b >> 3) & 15u, m = b & 7u;
  float f = e ? (float)((8u + m) << e) * 0.0009765625f : (float)m * 0.001953125f;
  return (b & 0x80u) ? -f : f;
}
FLUX_D void st_f32(float *p, int i, float v) { p[i] = v; }
FLUX_D void st_bf16(__nv_bfloat16 *p, int i, float v) { p[i] = __float2bfloat16_rn(v); }
FLUX_D void st_f16(__half *p, int i, float v) { p[i] = __float2half_rn(v); }
FLUX_D void st_bool(unsigned char *p, int i, float v) { p[i] = v != 0.0f; }
FLUX_D float rnd_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
FLUX_D float rnd_f16(float v) { return __half2float(__float2half_rn(v)); }
// two values as the 16-bit halves of one register (the first in the low half), for mma.sync
FLUX_D unsigned pk_bf16(float lo, float hi) {
  return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) | ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
}
FLUX_D unsigned pk_f16(float lo, float hi) {
  return (unsigned)__half_as_ushort(__float2half_rn(lo)) | ((unsigned)__half_as_ushort(__float2half_rn(hi)) << 16);
}

#ifndef FLUX_EMU
// cvt.rna.tf32.f32: the operand of a tf32 mma.sync
FLUX_D unsigned tf32(float v) { unsigned r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v)); return r; }
// mma.sync: D = A*B + C on one warp's fragments (PTX ISA layouts), C and D in d0..d3
FLUX_D void mma_m16n8k16_bf16(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                              unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
FLUX_D void mma_m16n8k16_f16(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                             unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
FLUX_D void mma_m16n8k8_tf32(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                             unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// cp.async: 16 bytes from global to shared memory, asynchronously; commit_group
// closes a group of copies, wait_group(n) waits for all but the n most recent groups
FLUX_D void cp_async16(void *smem, const void *gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(smem)), "l"(gmem));
}
FLUX_D void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
#define cp_async_wait_group(n) asm volatile("cp.async.wait_group " #n ";" ::: "memory")
// shared memory
FLUX_D float lds_f32(const float *p, int i) { return p[i]; }
FLUX_D float lds_bf16(const __nv_bfloat16 *p, int i) { return __bfloat162float(p[i]); }
FLUX_D float lds_f16(const __half *p, int i) { return __half2float(p[i]); }
FLUX_D void sts_f32(float *p, int i, float v) { p[i] = v; }
#else
FLUX_D unsigned tf32(float v) { return flux_emu_tf32(v); }
#define FLUX_MMA(name, kind)                                                                                               \
  FLUX_D void name(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1, unsigned a2, unsigned a3,         \
                   unsigned b0, unsigned b1) {                                                                             \
    const unsigned a[4] = {a0, a1, a2, a3}, b[2] = {b0, b1};                                                                \
    flux_emu_mma(kind, &d0, &d1, &d2, &d3, a, b);                                                                           \
  }
FLUX_MMA(mma_m16n8k16_bf16, FLUX_EMU_BF16)
FLUX_MMA(mma_m16n8k16_f16, FLUX_EMU_F16)
FLUX_MMA(mma_m16n8k8_tf32, FLUX_EMU_TF32)
#undef FLUX_MMA
// the emulation sees where each access comes from, for its race reports
#define cp_async16(smem, gmem) flux_emu_cp_async16(smem, gmem, #smem, __FILE__, __LINE__)
#define cp_async_commit() flux_emu_cp_async_commit()
#define cp_async_wait_group(n) flux_emu_cp_async_wait(n, __FILE__, __LINE__)
#define lds_f32(p, i) (flux_emu_shared(&(p)[i], 4, 0, #p "[" #i "]", __FILE__, __LINE__), (p)[i])
#define lds_bf16(p, i) (flux_emu_shared(&(p)[i], 2, 0, #p "[" #i "]", __FILE__, __LINE__), __bfloat162float((p)[i]))
#define lds_f16(p, i) (flux_emu_shared(&(p)[i], 2, 0, #p "[" #i "]", __FILE__, __LINE__), __half2float((p)[i]))
#define sts_f32(p, i, v) (flux_emu_shared(&(p)[i], 4, 1, #p "[" #i "]", __FILE__, __LINE__), (void)((p)[i] = (v)))
#endif
