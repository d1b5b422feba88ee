// r_64_8 — kernel 1 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:30
// arguments:
//   p_out  out f32[1,8,1] (temporary)
//   p_x    in  bf16[1,8,64] x
//   p_tmp2 in  f32[1,8,1] (temporary)
// full shape before opts: [8 | 64]  (output axes | reduce axes) (r_8_64)
// axes after opts: 64 reduce, 8 vector
// grid [1, 1, 1], block [1, 1, 1]; 1568 FLOP, 1088 bytes per launch
// method: beam; opts: [VEC(0,8)]; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(1) r_64_8(float *__restrict__ p_out, const __nv_bfloat16 *__restrict__ p_x, const float *__restrict__ p_tmp2) {
  float val0_0 = ld_f32(p_tmp2, 0);
  float val0_1 = ld_f32(p_tmp2, 0+1);
  float val0_2 = ld_f32(p_tmp2, 0+2);
  float val0_3 = ld_f32(p_tmp2, 0+3);
  float val0_4 = ld_f32(p_tmp2, 0+4);
  float val0_5 = ld_f32(p_tmp2, 0+5);
  float val0_6 = ld_f32(p_tmp2, 0+6);
  float val0_7 = ld_f32(p_tmp2, 0+7);
  float cst1 = 64.0f;
  float cst2 = 9.99999997e-07f;
  float acc0_0 = 0.0f;
  float acc0_1 = 0.0f;
  float acc0_2 = 0.0f;
  float acc0_3 = 0.0f;
  float acc0_4 = 0.0f;
  float acc0_5 = 0.0f;
  float acc0_6 = 0.0f;
  float acc0_7 = 0.0f;
  for (int ridx0 = 0; ridx0 < 64; ridx0++) {
    float val3 = ld_bf16(p_x, ridx0);
    float val4 = ld_bf16(p_x, ridx0+64);
    float val5 = ld_bf16(p_x, ridx0+128);
    float val6 = ld_bf16(p_x, ridx0+192);
    float val7 = ld_bf16(p_x, ridx0+256);
    float val8 = ld_bf16(p_x, ridx0+320);
    float val9 = ld_bf16(p_x, ridx0+384);
    float val10 = ld_bf16(p_x, ridx0+448);
    float alu12_0 = val3 - val0_0;
    float alu12_1 = val4 - val0_1;
    float alu12_2 = val5 - val0_2;
    float alu12_3 = val6 - val0_3;
    float alu12_4 = val7 - val0_4;
    float alu12_5 = val8 - val0_5;
    float alu12_6 = val9 - val0_6;
    float alu12_7 = val10 - val0_7;
    float alu13_0 = alu12_0 * alu12_0;
    float alu13_1 = alu12_1 * alu12_1;
    float alu13_2 = alu12_2 * alu12_2;
    float alu13_3 = alu12_3 * alu12_3;
    float alu13_4 = alu12_4 * alu12_4;
    float alu13_5 = alu12_5 * alu12_5;
    float alu13_6 = alu12_6 * alu12_6;
    float alu13_7 = alu12_7 * alu12_7;
    acc0_0 += alu13_0;
    acc0_1 += alu13_1;
    acc0_2 += alu13_2;
    acc0_3 += alu13_3;
    acc0_4 += alu13_4;
    acc0_5 += alu13_5;
    acc0_6 += alu13_6;
    acc0_7 += alu13_7;
  }
  float alu14_0 = acc0_0 / cst1;
  float alu14_1 = acc0_1 / cst1;
  float alu14_2 = acc0_2 / cst1;
  float alu14_3 = acc0_3 / cst1;
  float alu14_4 = acc0_4 / cst1;
  float alu14_5 = acc0_5 / cst1;
  float alu14_6 = acc0_6 / cst1;
  float alu14_7 = acc0_7 / cst1;
  float alu15_0 = alu14_0 + cst2;
  float alu15_1 = alu14_1 + cst2;
  float alu15_2 = alu14_2 + cst2;
  float alu15_3 = alu14_3 + cst2;
  float alu15_4 = alu14_4 + cst2;
  float alu15_5 = alu14_5 + cst2;
  float alu15_6 = alu14_6 + cst2;
  float alu15_7 = alu14_7 + cst2;
  float alu16_0 = sqrtf(alu15_0);
  float alu16_1 = sqrtf(alu15_1);
  float alu16_2 = sqrtf(alu15_2);
  float alu16_3 = sqrtf(alu15_3);
  float alu16_4 = sqrtf(alu15_4);
  float alu16_5 = sqrtf(alu15_5);
  float alu16_6 = sqrtf(alu15_6);
  float alu16_7 = sqrtf(alu15_7);
  float alu17_0 = 1.0f / alu16_0;
  float alu17_1 = 1.0f / alu16_1;
  float alu17_2 = 1.0f / alu16_2;
  float alu17_3 = 1.0f / alu16_3;
  float alu17_4 = 1.0f / alu16_4;
  float alu17_5 = 1.0f / alu16_5;
  float alu17_6 = 1.0f / alu16_6;
  float alu17_7 = 1.0f / alu16_7;
  st_f32(p_out, 0, alu17_0);
  st_f32(p_out, 0+1, alu17_1);
  st_f32(p_out, 0+2, alu17_2);
  st_f32(p_out, 0+3, alu17_3);
  st_f32(p_out, 0+4, alu17_4);
  st_f32(p_out, 0+5, alu17_5);
  st_f32(p_out, 0+6, alu17_6);
  st_f32(p_out, 0+7, alu17_7);
}
