// attn_2_20_20_16_q16k32s1 — kernel 0 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out out bf16[1,2,20,16] (temporary)
//   p_c   in  f32[1,1,20,8] c
//   p_q   in  bf16[1,2,20,16] q
//   p_s   in  f32[1,1,20,8] s
//   p_k   in  bf16[1,2,20,16] k
//   p_v   in  bf16[1,2,20,16] v
// full shape before opts: [1, 2, 20, 16 | 20, 16]  (output axes | reduce axes) (attn_2_20_20_16_q16k16s1)
// axes after opts: 1 global, 2 global, 20 global, 16 global, 20 reduce, 16 reduce
// grid [2, 2, 1], block [16, 1, 1]; 56000 FLOP, 6400 bytes per launch
// method: hc; opts: [QROWS(0,16), KSTEP(0,32)]; measured: not timed
#include "../kernel_prelude.cuh"

// fused attention: softmax(q k^T / c) v, online softmax over 32-key tiles; 16 query rows per block,
// 1 thread per row (16 output channels each); the scores are never stored
#ifndef FLUX_UNROLL
#ifdef FLUX_EMU
#define FLUX_UNROLL
#else
#define FLUX_UNROLL _Pragma("unroll")
#endif
#endif
extern "C" __global__ void __launch_bounds__(16) attn_2_20_20_16_q16k32s1(__nv_bfloat16 *__restrict__ p_out, const float *__restrict__ p_c, const __nv_bfloat16 *__restrict__ p_q, const float *__restrict__ p_s, const __nv_bfloat16 *__restrict__ p_k, const __nv_bfloat16 *__restrict__ p_v) {
  __shared__ float qs[272];  // this block's query rows, as the product reads them
  __shared__ float ks[512];  // one step of keys
  __shared__ float vs[512];  // and their values
  int tid = threadIdx.x, i0 = blockIdx.x * 16;
  int zz = blockIdx.y;
  int z1 = (zz / 1) % 2;
  int row = tid / 1, part = tid % 1;
  for (int t = tid; t < 256; t += 16) {
    int i = i0 + t / 16, d = t % 16;
    float x = 0.0f;
    if (i < 20) {
      float x0 = ((d%2)<1) ? ld_f32(p_c, i*8+(d/2)) : 0.0f;
      float x1 = ((d%2)<1) ? ld_bf16(p_q, z1*320+i*16+(d/2)*2) : 0.0f;
      float x3 = x0 * x1;
      float x4 = ((d%2)<1) ? ld_f32(p_s, i*8+(d/2)) : 0.0f;
      float x5 = ((d%2)<1) ? ld_bf16(p_q, z1*320+i*16+(d/2)*2+1) : 0.0f;
      float x7 = x4 * x5;
      float x8 = x3 - x7;
      float x9 = ((d%2)<1) ? x8 : 0.0f;
      float x10 = ((d%2)>=1) ? ld_f32(p_s, i*8+(d/2)) : 0.0f;
      float x11 = ((d%2)>=1) ? ld_bf16(p_q, z1*320+i*16+(d/2)*2) : 0.0f;
      float x13 = x10 * x11;
      float x14 = ((d%2)>=1) ? ld_f32(p_c, i*8+(d/2)) : 0.0f;
      float x15 = ((d%2)>=1) ? ld_bf16(p_q, z1*320+i*16+(d/2)*2+1) : 0.0f;
      float x17 = x14 * x15;
      float x18 = x13 + x17;
      float x19 = ((d%2)>=1) ? x18 : 0.0f;
      float x20 = x9 + x19;
      float x21 = rnd_bf16(x20);
      x = x21;
    }
    sts_f32(qs, (t / 16) * 17 + d, x);
  }
  float m = -INFINITY, l = 0.0f, acc[16];
FLUX_UNROLL
  for (int c = 0; c < 16; c++) acc[c] = 0.0f;
  for (int j0 = 0; j0 < 20; j0 += 32) {
    __syncthreads();  // the previous step's tiles (and the query rows) are read by every thread
    for (int t = tid; t < 512; t += 16) {
      int j = j0 + t / 16, d = t % 16;
      float x = 0.0f;
      if (j < 20) {
        float y23 = ((d%2)<1) ? ld_f32(p_c, j*8+(d/2)) : 0.0f;
        float y24 = ((d%2)<1) ? ld_bf16(p_k, z1*320+j*16+(d/2)*2) : 0.0f;
        float y26 = y23 * y24;
        float y27 = ((d%2)<1) ? ld_f32(p_s, j*8+(d/2)) : 0.0f;
        float y28 = ((d%2)<1) ? ld_bf16(p_k, z1*320+j*16+(d/2)*2+1) : 0.0f;
        float y30 = y27 * y28;
        float y31 = y26 - y30;
        float y32 = ((d%2)<1) ? y31 : 0.0f;
        float y33 = ((d%2)>=1) ? ld_f32(p_s, j*8+(d/2)) : 0.0f;
        float y34 = ((d%2)>=1) ? ld_bf16(p_k, z1*320+j*16+(d/2)*2) : 0.0f;
        float y36 = y33 * y34;
        float y37 = ((d%2)>=1) ? ld_f32(p_c, j*8+(d/2)) : 0.0f;
        float y38 = ((d%2)>=1) ? ld_bf16(p_k, z1*320+j*16+(d/2)*2+1) : 0.0f;
        float y40 = y37 * y38;
        float y41 = y36 + y40;
        float y42 = ((d%2)>=1) ? y41 : 0.0f;
        float y43 = y32 + y42;
        float y44 = rnd_bf16(y43);
        x = y44;
      }
      sts_f32(ks, t, x);
    }
    for (int t = tid; t < 512; t += 16) {
      int j = j0 + t / 16, e = t % 16;
      float x = j < 20 ? ld_bf16(p_v, z1*320+e+j*16) : 0.0f;
      sts_f32(vs, t, x);
    }
    __syncthreads();
    float sc[32], mt = m;
FLUX_UNROLL
    for (int jj = 0; jj < 32; jj++) {
      float dot = 0.0f;
      for (int d = 0; d < 16; d++) dot += lds_f32(qs, row * 17 + d) * lds_f32(ks, jj * 16 + d);
      sc[jj] = j0 + jj < 20 ? dot / 4.0f : -INFINITY;
      mt = fmaxf(mt, sc[jj]);
    }
    float alpha = expf(m - mt);
    l *= alpha;
FLUX_UNROLL
    for (int c = 0; c < 16; c++) acc[c] *= alpha;
FLUX_UNROLL
    for (int jj = 0; jj < 32; jj++) {
      float p = expf(sc[jj] - mt);
      l += p;
      float pr = rnd_bf16(p);  // rounded as the product with v reads it
FLUX_UNROLL
      for (int c = 0; c < 16; c++) acc[c] += pr * lds_f32(vs, jj * 16 + part * 16 + c);
    }
    m = mt;
  }
  int i = i0 + row;
  if (i < 20) {
    float rl = 1.0f / l;
FLUX_UNROLL
    for (int c = 0; c < 16; c++) {
      int e = part * 16 + c;
      st_bf16(p_out, z1*320+i*16+e, rnd_bf16(acc[c] * rl));
    }
  }
}
