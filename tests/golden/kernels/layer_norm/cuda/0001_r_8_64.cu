// r_8_64n1 — kernel 1 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:30
// arguments:
//   p_out  out f32[1,8,1] (temporary)
//   p_x    in  bf16[1,8,64] x
//   p_tmp2 in  f32[1,8,1] (temporary)
// full shape before opts: [8 | 64]  (output axes | reduce axes) (r_8_64)
// axes after opts: 8 global, 64 reduce
// grid [8, 1, 1], block [1, 1, 1]; 1568 FLOP, 1088 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(1) r_8_64n1(float *__restrict__ p_out, const __nv_bfloat16 *__restrict__ p_x, const float *__restrict__ p_tmp2) {
  int gidx0 = blockIdx.x;
  float val0 = ld_f32(p_tmp2, gidx0);
  float cst1 = 64.0f;
  float cst2 = 9.99999997e-07f;
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 64; ridx0++) {
    float val3 = ld_bf16(p_x, gidx0*64+ridx0);
    float alu4 = val3 - val0;
    float alu5 = alu4 * alu4;
    acc0 += alu5;
  }
  float alu6 = acc0 / cst1;
  float alu7 = alu6 + cst2;
  float alu8 = sqrtf(alu7);
  float alu9 = 1.0f / alu8;
  st_f32(p_out, gidx0, alu9);
}
