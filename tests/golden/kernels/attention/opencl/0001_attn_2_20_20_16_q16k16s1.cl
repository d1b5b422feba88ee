// attn_2_20_20_16_q16k16s1 — kernel 1 of attention.fdsl, launched 1 time per forward
// project c2c748698c04fc3f: the runtime refuses kernel files of another compile
// DSL: attention.fdsl:9:14
// full shape before opts: [1, 2, 20, 16 | 20, 16]  (output axes | reduce axes) (attn_2_20_20_16_q16k16s1)
// axes after opts: 1 global, 2 global, 20 global, 16 global, 20 reduce, 16 reduce
// grid [2, 2, 1], block [16, 1, 1]; 56000 FLOP, 7680 bytes per launch
// method: raw; opts: []; measured: not timed

// fused attention: softmax(q k^T / c) v, online softmax over 16-key tiles; 16 query rows per block,
// 1 thread per row (16 output channels each); the scores are never stored
__kernel __attribute__((reqd_work_group_size(16, 1, 1))) void attn_2_20_20_16_q16k16s1(__global ushort *restrict data0, __global const float *restrict data1, __global const float *restrict data2, __global const ushort *restrict data3) {
  __local float qs[272];  // this block's query rows, as the product reads them
  __local float ks[256];  // one step of keys
  __local float vs[256];  // and their values
  int tid = get_local_id(0), zz = get_group_id(1), i0 = get_group_id(0) * 16;
  int z1 = (zz / 1) % 2;
  int row = tid / 1, part = tid % 1;
  for (int t = tid; t < 256; t += 16) {
    int i = i0 + t / 16, d = t % 16;
    float x = i < 20 ? rnd_bf16(ld_f32(data1, z1*320+i*16+d)) : 0.0f;
    qs[(t / 16) * 17 + d] = x;
  }
  float m = -INFINITY, l = 0.0f, acc[16];
#pragma unroll
  for (int c = 0; c < 16; c++) acc[c] = 0.0f;
  for (int j0 = 0; j0 < 20; j0 += 16) {
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous step's tiles (and the query rows) are read by every thread
    for (int t = tid; t < 256; t += 16) {
      int j = j0 + t / 16, d = t % 16;
      float x = j < 20 ? rnd_bf16(ld_f32(data2, z1*320+j*16+d)) : 0.0f;
      ks[t] = x;
    }
    for (int t = tid; t < 256; t += 16) {
      int j = j0 + t / 16, e = t % 16;
      float x = j < 20 ? ld_bf16(data3, z1*320+j*16+e) : 0.0f;
      vs[t] = x;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float sc[16], mt = m;
#pragma unroll
    for (int jj = 0; jj < 16; jj++) {
      float dot = 0.0f;
      for (int d = 0; d < 16; d++) dot += qs[row * 17 + d] * ks[jj * 16 + d];
      sc[jj] = j0 + jj < 20 ? dot / 4.0f : -INFINITY;
      mt = fmax(mt, sc[jj]);
    }
    float alpha = exp(m - mt);
    l *= alpha;
#pragma unroll
    for (int c = 0; c < 16; c++) acc[c] *= alpha;
#pragma unroll
    for (int jj = 0; jj < 16; jj++) {
      float p = exp(sc[jj] - mt);
      l += p;
      float pr = rnd_bf16(p);  // rounded as the product with v reads it
#pragma unroll
      for (int c = 0; c < 16; c++) acc[c] += pr * vs[jj * 16 + part * 16 + c];
    }
    m = mt;
  }
  int i = i0 + row;
  if (i < 20) {
    float rl = 1.0f / l;
#pragma unroll
    for (int c = 0; c < 16; c++) {
      int e = part * 16 + c;
      st_bf16(data0, z1*320+i*16+e, rnd_bf16(acc[c] * rl));
    }
  }
}
