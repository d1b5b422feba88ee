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

// fused attention: softmax(q k^T / c) v, online softmax over 32-key tiles; 16 query rows per block,
// 2 threads per row (8 output channels each); the scores are never stored
// (TC: mma.sync on CUDA; here the same function, scalar, in the same launch geometry)
__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void attn_2_20_20_16_q16k32tc2(__global ushort *restrict p_out, __global const float *restrict p_c, __global const ushort *restrict p_q, __global const float *restrict p_s, __global const ushort *restrict p_k, __global const ushort *restrict p_v) {
  __local float qs[272];  // this block's query rows, as the product reads them
  __local float ks[512];  // one step of keys
  __local float vs[512];  // and their values
  int tid = get_local_id(0), i0 = get_group_id(0) * 16;
  int zz = get_group_id(1);
  int z1 = (zz / 1) % 2;
  int row = tid / 2, part = tid % 2;
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
    qs[(t / 16) * 17 + d] = x;
  }
  float m = -INFINITY, lp[4] = {0.0f, 0.0f, 0.0f, 0.0f}, ph = 0.0f, acc[8];
#pragma unroll
  for (int c = 0; c < 8; c++) acc[c] = 0.0f;
  for (int j0 = 0; j0 < 20; j0 += 32) {
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous step's tiles (and the query rows) are read by every thread
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
      ks[t] = x;
    }
    for (int t = tid; t < 512; t += 32) {
      int j = j0 + t / 16, e = t % 16;
      float x = j < 20 ? ld_bf16(p_v, z1*320+e+j*16) : 0.0f;
      vs[t] = x;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float sc[32], mt = m;
#pragma unroll
    for (int jj = 0; jj < 32; jj++) {
      float dot = 0.0f;
      for (int d = 0; d < 16; d++) dot += qs[row * 17 + d] * ks[jj * 16 + d];
      sc[jj] = j0 + jj < 20 ? dot / 4.0f : -INFINITY;
      mt = fmax(mt, sc[jj]);
    }
    float alpha = exp(m - mt);
    for (int c = 0; c < 4; c++) lp[c] *= alpha;
#pragma unroll
    for (int c = 0; c < 8; c++) acc[c] *= alpha;
#pragma unroll
    for (int jj = 0; jj < 32; jj++) {
      float p = exp(sc[jj] - mt);
      if (jj % 2 == 0) ph = p;
      else lp[(jj % 8) / 2] += ph + p;
      float pr = rnd_bf16(p);  // rounded as the product with v reads it
#pragma unroll
      for (int c = 0; c < 8; c++) acc[c] += pr * vs[jj * 16 + part * 8 + c];
    }
    m = mt;
  }
  int i = i0 + row;
  if (i < 20) {
    float rl = 1.0f / (lp[0] + lp[1] + lp[2] + lp[3]);
#pragma unroll
    for (int c = 0; c < 8; c++) {
      int e = part * 8 + c;
      st_bf16(p_out, z1*320+i*16+e, rnd_bf16(acc[c] * rl));
    }
  }
}
