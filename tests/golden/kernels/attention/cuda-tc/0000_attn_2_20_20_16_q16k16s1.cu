// attn_2_20_20_16_q16k32tc2 — kernel 0 of attention.fdsl, launched 1 time per forward
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
// grid [2, 2, 1], block [32, 1, 1]; 56000 FLOP, 6400 bytes per launch
// method: tc; opts: [TC(0,0), KSTEP(0,32)]; measured: not timed
#include "../kernel_prelude.cuh"

// fused attention: softmax(q k^T / c) v, online softmax over 32-key tiles; 16 query rows per block,
// a warp per 16 rows, both products on mma.sync m16n8k16 (TC); the scores are never stored
#ifndef FLUX_UNROLL
#ifdef FLUX_EMU
#define FLUX_UNROLL
#else
#define FLUX_UNROLL _Pragma("unroll")
#endif
#endif
extern "C" __global__ void __launch_bounds__(32) attn_2_20_20_16_q16k32tc2(__nv_bfloat16 *__restrict__ p_out, const float *__restrict__ p_c, const __nv_bfloat16 *__restrict__ p_q, const float *__restrict__ p_s, const __nv_bfloat16 *__restrict__ p_k, const __nv_bfloat16 *__restrict__ p_v) {
  __shared__ float qs[272];  // this block's query rows, as the product reads them
  __shared__ float ks[512];  // one step of keys
  __shared__ float vs[512];  // and their values
  int tid = threadIdx.x, i0 = blockIdx.x * 16;
  int zz = blockIdx.y;
  int z1 = (zz / 1) % 2;
  __shared__ float red[64];  // per row, its 4 lanes' partial max (each step), then sum (at the end)
  int lane = tid % 32, g = lane / 4, t4 = lane % 4, r0 = (tid / 32) * 16 + g;  // rows r0, r0 + 8 of the block
  for (int t = tid; t < 256; t += 32) {
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
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f, o[8];  // o: the m16n8 accumulator tiles over v's channels
FLUX_UNROLL
  for (int c = 0; c < 8; c++) o[c] = 0.0f;
  for (int j0 = 0; j0 < 20; j0 += 32) {
    __syncthreads();  // the previous step's tiles (and the query rows) are read by every thread
    for (int t = tid; t < 512; t += 32) {
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
    for (int t = tid; t < 512; t += 32) {
      int j = j0 + t / 16, e = t % 16;
      float x = j < 20 ? ld_bf16(p_v, z1*320+e+j*16) : 0.0f;
      sts_f32(vs, t, x);
    }
    __syncthreads();
    float sc[16];  // the step's scores: 4 m16n8 tiles
FLUX_UNROLL
    for (int n = 0; n < 4; n++) {
      float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
FLUX_UNROLL
      for (int kk = 0; kk < 16; kk += 16) {
        int qa = r0 * 17 + kk + 2 * t4, kb = (n * 8 + g) * 16 + kk + 2 * t4;
        mma_m16n8k16_bf16(c0, c1, c2, c3, pk_bf16(lds_f32(qs, qa), lds_f32(qs, qa + 1)), pk_bf16(lds_f32(qs, qa + 136), lds_f32(qs, qa + 137)),
            pk_bf16(lds_f32(qs, qa + 8), lds_f32(qs, qa + 9)), pk_bf16(lds_f32(qs, qa + 144), lds_f32(qs, qa + 145)),
            pk_bf16(lds_f32(ks, kb), lds_f32(ks, kb + 1)), pk_bf16(lds_f32(ks, kb + 8), lds_f32(ks, kb + 9)));
      }
      int jc = j0 + n * 8 + 2 * t4;  // the keys of c0, c2 and of c1, c3: jc, jc + 1 (past the end: -infinity)
      sc[n * 4] = jc < 20 ? c0 / 4.0f : -INFINITY, sc[n * 4 + 1] = jc + 1 < 20 ? c1 / 4.0f : -INFINITY;
      sc[n * 4 + 2] = jc < 20 ? c2 / 4.0f : -INFINITY, sc[n * 4 + 3] = jc + 1 < 20 ? c3 / 4.0f : -INFINITY;
    }
    float x0 = m0, x1 = m1;
FLUX_UNROLL
    for (int n = 0; n < 4; n++) x0 = fmaxf(x0, fmaxf(sc[n * 4], sc[n * 4 + 1])), x1 = fmaxf(x1, fmaxf(sc[n * 4 + 2], sc[n * 4 + 3]));
    sts_f32(red, r0 * 4 + t4, x0);
    sts_f32(red, (r0 + 8) * 4 + t4, x1);
    __syncthreads();
    float mt0 = fmaxf(fmaxf(lds_f32(red, r0 * 4), lds_f32(red, r0 * 4 + 1)), fmaxf(lds_f32(red, r0 * 4 + 2), lds_f32(red, r0 * 4 + 3)));
    float mt1 = fmaxf(fmaxf(lds_f32(red, r0 * 4 + 32), lds_f32(red, r0 * 4 + 33)), fmaxf(lds_f32(red, r0 * 4 + 34), lds_f32(red, r0 * 4 + 35)));
    __syncthreads();  // red is written again
    float al0 = expf(m0 - mt0), al1 = expf(m1 - mt1);
    l0 *= al0, l1 *= al1;
FLUX_UNROLL
    for (int c = 0; c < 2; c++) o[c * 4] *= al0, o[c * 4 + 1] *= al0, o[c * 4 + 2] *= al1, o[c * 4 + 3] *= al1;
    unsigned pa[8];  // the probabilities, rounded to v's dtype as they pack: rows g (c0, c1) and g + 8 (c2, c3) of each tile
FLUX_UNROLL
    for (int n = 0; n < 4; n++) {
      float p0 = expf(sc[n * 4] - mt0), p1 = expf(sc[n * 4 + 1] - mt0), p2 = expf(sc[n * 4 + 2] - mt1), p3 = expf(sc[n * 4 + 3] - mt1);
      l0 += p0 + p1, l1 += p2 + p3;
      pa[n * 2] = pk_bf16(p0, p1), pa[n * 2 + 1] = pk_bf16(p2, p3);
    }
FLUX_UNROLL
    for (int c = 0; c < 2; c++) {  // 16 keys: the A tile from score tiles 2c, 2c + 1
FLUX_UNROLL
      for (int n = 0; n < 2; n++) {
        int vb = (c * 16 + 2 * t4) * 16 + n * 8 + g;
        mma_m16n8k16_bf16(o[n * 4], o[n * 4 + 1], o[n * 4 + 2], o[n * 4 + 3], pa[c * 4], pa[c * 4 + 1], pa[c * 4 + 2], pa[c * 4 + 3],
            pk_bf16(lds_f32(vs, vb), lds_f32(vs, vb + 16)), pk_bf16(lds_f32(vs, vb + 128), lds_f32(vs, vb + 144)));
      }
    }
    m0 = mt0, m1 = mt1;
  }
  sts_f32(red, r0 * 4 + t4, l0);
  sts_f32(red, (r0 + 8) * 4 + t4, l1);
  __syncthreads();
  for (int h = 0; h < 2; h++) {  // rows r0, r0 + 8: C elements c0, c1 and c2, c3
    int i = i0 + r0 + 8 * h, b = (r0 + 8 * h) * 4;
    float rl = 1.0f / (lds_f32(red, b) + lds_f32(red, b + 1) + lds_f32(red, b + 2) + lds_f32(red, b + 3));
    if (i >= 20) continue;
FLUX_UNROLL
    for (int n = 0; n < 2; n++)
      for (int c = 0; c < 2; c++) {
        int e = n * 8 + 2 * t4 + c;
        st_bf16(p_out, z1*320+i*16+e, rnd_bf16(o[n * 4 + 2 * h + c] * rl));
      }
  }
}
