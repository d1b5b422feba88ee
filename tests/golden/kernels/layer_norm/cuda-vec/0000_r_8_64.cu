// r_2_64_4 — kernel 0 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:30
// arguments:
//   p_out out f32[1,8,1] (temporary)
//   p_x   in  bf16[1,8,64] x
// full shape before opts: [8 | 64]  (output axes | reduce axes) (r_8_64)
// axes after opts: 2 global, 64 reduce, 4 vector
// grid [2, 1, 1], block [1, 1, 1]; 520 FLOP, 1056 bytes per launch
// method: beam; opts: [VEC(0,4)]; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(1) r_2_64_4(float *__restrict__ p_out, const __nv_bfloat16 *__restrict__ p_x) {
  int gidx0 = blockIdx.x;
  float cst0 = 64.0f;
  float acc0_0 = 0.0f;
  float acc0_1 = 0.0f;
  float acc0_2 = 0.0f;
  float acc0_3 = 0.0f;
  for (int ridx0 = 0; ridx0 < 64; ridx0++) {
    float val1 = ld_bf16(p_x, gidx0*256+ridx0);
    float val2 = ld_bf16(p_x, gidx0*256+ridx0+64);
    float val3 = ld_bf16(p_x, gidx0*256+ridx0+128);
    float val4 = ld_bf16(p_x, gidx0*256+ridx0+192);
    acc0_0 += val1;
    acc0_1 += val2;
    acc0_2 += val3;
    acc0_3 += val4;
  }
  float alu6_0 = acc0_0 / cst0;
  float alu6_1 = acc0_1 / cst0;
  float alu6_2 = acc0_2 / cst0;
  float alu6_3 = acc0_3 / cst0;
  st_f32(p_out, gidx0*4, alu6_0);
  st_f32(p_out, gidx0*4+1, alu6_1);
  st_f32(p_out, gidx0*4+2, alu6_2);
  st_f32(p_out, gidx0*4+3, alu6_3);
}
