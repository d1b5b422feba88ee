// r_8_3_32_2_8 — kernel 0 of linear_bias.fdsl, launched 1 time per forward
// DSL: linear_bias.fdsl:4:14
// arguments:
//   p_out         out bf16[1,16,24] out
//   p_x           in  bf16[1,16,32] x
//   p_proj_weight in  bf16[24,32] proj.weight
//   p_proj_bias   in  bf16[24] proj.bias
// full shape before opts: [16, 24 | 32]  (output axes | reduce axes) (r_16_24_32)
// axes after opts: 8 global, 3 global, 32 reduce, 2 upcast, 8 vector
// grid [3, 8, 1], block [1, 1, 1]; 24960 FLOP, 3376 bytes per launch
// method: beam; opts: [UPCAST(0,2), VEC(1,8)]; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(1) r_8_3_32_2_8(__nv_bfloat16 *__restrict__ p_out, const __nv_bfloat16 *__restrict__ p_x, const __nv_bfloat16 *__restrict__ p_proj_weight, const __nv_bfloat16 *__restrict__ p_proj_bias) {
  int gidx0 = blockIdx.y;
  int gidx1 = blockIdx.x;
  float val0_0 = ld_bf16(p_proj_bias, gidx1*8);
  float val0_1 = ld_bf16(p_proj_bias, gidx1*8+1);
  float val0_2 = ld_bf16(p_proj_bias, gidx1*8+2);
  float val0_3 = ld_bf16(p_proj_bias, gidx1*8+3);
  float val0_4 = ld_bf16(p_proj_bias, gidx1*8+4);
  float val0_5 = ld_bf16(p_proj_bias, gidx1*8+5);
  float val0_6 = ld_bf16(p_proj_bias, gidx1*8+6);
  float val0_7 = ld_bf16(p_proj_bias, gidx1*8+7);
  float acc0_0 = 0.0f;
  float acc0_1 = 0.0f;
  float acc0_2 = 0.0f;
  float acc0_3 = 0.0f;
  float acc0_4 = 0.0f;
  float acc0_5 = 0.0f;
  float acc0_6 = 0.0f;
  float acc0_7 = 0.0f;
  float acc1_0 = 0.0f;
  float acc1_1 = 0.0f;
  float acc1_2 = 0.0f;
  float acc1_3 = 0.0f;
  float acc1_4 = 0.0f;
  float acc1_5 = 0.0f;
  float acc1_6 = 0.0f;
  float acc1_7 = 0.0f;
  for (int ridx0 = 0; ridx0 < 32; ridx0++) {
    float val1 = ld_bf16(p_x, gidx0*64+ridx0);
    float val2 = ld_bf16(p_proj_weight, gidx1*256+ridx0);
    float val3 = ld_bf16(p_proj_weight, gidx1*256+ridx0+32);
    float val4 = ld_bf16(p_proj_weight, gidx1*256+ridx0+64);
    float val5 = ld_bf16(p_proj_weight, gidx1*256+ridx0+96);
    float val6 = ld_bf16(p_proj_weight, gidx1*256+ridx0+128);
    float val7 = ld_bf16(p_proj_weight, gidx1*256+ridx0+160);
    float val8 = ld_bf16(p_proj_weight, gidx1*256+ridx0+192);
    float val9 = ld_bf16(p_proj_weight, gidx1*256+ridx0+224);
    float alu11_0 = val1 * val2;
    float alu11_1 = val1 * val3;
    float alu11_2 = val1 * val4;
    float alu11_3 = val1 * val5;
    float alu11_4 = val1 * val6;
    float alu11_5 = val1 * val7;
    float alu11_6 = val1 * val8;
    float alu11_7 = val1 * val9;
    acc0_0 += alu11_0;
    acc0_1 += alu11_1;
    acc0_2 += alu11_2;
    acc0_3 += alu11_3;
    acc0_4 += alu11_4;
    acc0_5 += alu11_5;
    acc0_6 += alu11_6;
    acc0_7 += alu11_7;
    float val12 = ld_bf16(p_x, gidx0*64+ridx0+32);
    float alu13_0 = val12 * val2;
    float alu13_1 = val12 * val3;
    float alu13_2 = val12 * val4;
    float alu13_3 = val12 * val5;
    float alu13_4 = val12 * val6;
    float alu13_5 = val12 * val7;
    float alu13_6 = val12 * val8;
    float alu13_7 = val12 * val9;
    acc1_0 += alu13_0;
    acc1_1 += alu13_1;
    acc1_2 += alu13_2;
    acc1_3 += alu13_3;
    acc1_4 += alu13_4;
    acc1_5 += alu13_5;
    acc1_6 += alu13_6;
    acc1_7 += alu13_7;
  }
  float alu14_0 = acc0_0 + val0_0;
  float alu14_1 = acc0_1 + val0_1;
  float alu14_2 = acc0_2 + val0_2;
  float alu14_3 = acc0_3 + val0_3;
  float alu14_4 = acc0_4 + val0_4;
  float alu14_5 = acc0_5 + val0_5;
  float alu14_6 = acc0_6 + val0_6;
  float alu14_7 = acc0_7 + val0_7;
  float alu15_0 = rnd_bf16(alu14_0);
  float alu15_1 = rnd_bf16(alu14_1);
  float alu15_2 = rnd_bf16(alu14_2);
  float alu15_3 = rnd_bf16(alu14_3);
  float alu15_4 = rnd_bf16(alu14_4);
  float alu15_5 = rnd_bf16(alu14_5);
  float alu15_6 = rnd_bf16(alu14_6);
  float alu15_7 = rnd_bf16(alu14_7);
  st_bf16(p_out, gidx0*48+gidx1*8, alu15_0);
  st_bf16(p_out, gidx0*48+gidx1*8+1, alu15_1);
  st_bf16(p_out, gidx0*48+gidx1*8+2, alu15_2);
  st_bf16(p_out, gidx0*48+gidx1*8+3, alu15_3);
  st_bf16(p_out, gidx0*48+gidx1*8+4, alu15_4);
  st_bf16(p_out, gidx0*48+gidx1*8+5, alu15_5);
  st_bf16(p_out, gidx0*48+gidx1*8+6, alu15_6);
  st_bf16(p_out, gidx0*48+gidx1*8+7, alu15_7);
  float alu16_0 = acc1_0 + val0_0;
  float alu16_1 = acc1_1 + val0_1;
  float alu16_2 = acc1_2 + val0_2;
  float alu16_3 = acc1_3 + val0_3;
  float alu16_4 = acc1_4 + val0_4;
  float alu16_5 = acc1_5 + val0_5;
  float alu16_6 = acc1_6 + val0_6;
  float alu16_7 = acc1_7 + val0_7;
  float alu17_0 = rnd_bf16(alu16_0);
  float alu17_1 = rnd_bf16(alu16_1);
  float alu17_2 = rnd_bf16(alu16_2);
  float alu17_3 = rnd_bf16(alu16_3);
  float alu17_4 = rnd_bf16(alu16_4);
  float alu17_5 = rnd_bf16(alu16_5);
  float alu17_6 = rnd_bf16(alu16_6);
  float alu17_7 = rnd_bf16(alu16_7);
  st_bf16(p_out, gidx0*48+gidx1*8+24, alu17_0);
  st_bf16(p_out, gidx0*48+gidx1*8+24+1, alu17_1);
  st_bf16(p_out, gidx0*48+gidx1*8+24+2, alu17_2);
  st_bf16(p_out, gidx0*48+gidx1*8+24+3, alu17_3);
  st_bf16(p_out, gidx0*48+gidx1*8+24+4, alu17_4);
  st_bf16(p_out, gidx0*48+gidx1*8+24+5, alu17_5);
  st_bf16(p_out, gidx0*48+gidx1*8+24+6, alu17_6);
  st_bf16(p_out, gidx0*48+gidx1*8+24+7, alu17_7);
}
