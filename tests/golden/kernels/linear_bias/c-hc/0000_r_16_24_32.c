// r_16_6_4_8_4 — kernel 0 of linear_bias.fdsl, launched 1 time per forward
// DSL: linear_bias.fdsl:4:14
// arguments:
//   p_out         out bf16[1,16,24] out
//   p_x           in  bf16[1,16,32] x
//   p_proj_weight in  bf16[24,32] proj.weight
//   p_proj_bias   in  bf16[24] proj.bias
// full shape before opts: [16, 24 | 32]  (output axes | reduce axes) (r_16_24_32)
// axes after opts: 16 global, 6 global, 4 reduce, 8 reduce-vector, 4 upcast
// grid [6, 16, 1], block [1, 1, 1]; 24960 FLOP, 3376 bytes per launch
// method: hc; opts: [RVEC(0,8), UPCAST(1,4)]; measured: not timed
#include "../kernel_prelude.h"

void r_16_6_4_8_4(uint16_t *restrict p_out, const uint16_t *restrict p_x, const uint16_t *restrict p_proj_weight, const uint16_t *restrict p_proj_bias) {
  #pragma omp parallel for collapse(2) schedule(static)
  for (int gy = 0; gy < 16; gy++)
  for (int gx = 0; gx < 6; gx++)
  {
    int gidx0 = gy;
    int gidx1 = gx;
    float val0 = ld_bf16(p_proj_bias, gidx1*4);
    float val1 = ld_bf16(p_proj_bias, gidx1*4+1);
    float val2 = ld_bf16(p_proj_bias, gidx1*4+2);
    float val3 = ld_bf16(p_proj_bias, gidx1*4+3);
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
    float acc2_0 = 0.0f;
    float acc2_1 = 0.0f;
    float acc2_2 = 0.0f;
    float acc2_3 = 0.0f;
    float acc2_4 = 0.0f;
    float acc2_5 = 0.0f;
    float acc2_6 = 0.0f;
    float acc2_7 = 0.0f;
    float acc3_0 = 0.0f;
    float acc3_1 = 0.0f;
    float acc3_2 = 0.0f;
    float acc3_3 = 0.0f;
    float acc3_4 = 0.0f;
    float acc3_5 = 0.0f;
    float acc3_6 = 0.0f;
    float acc3_7 = 0.0f;
    for (int ridx0 = 0; ridx0 < 4; ridx0++) {
      float val4_0 = ld_bf16(p_x, gidx0*32+ridx0*8);
      float val4_1 = ld_bf16(p_x, gidx0*32+ridx0*8+1);
      float val4_2 = ld_bf16(p_x, gidx0*32+ridx0*8+2);
      float val4_3 = ld_bf16(p_x, gidx0*32+ridx0*8+3);
      float val4_4 = ld_bf16(p_x, gidx0*32+ridx0*8+4);
      float val4_5 = ld_bf16(p_x, gidx0*32+ridx0*8+5);
      float val4_6 = ld_bf16(p_x, gidx0*32+ridx0*8+6);
      float val4_7 = ld_bf16(p_x, gidx0*32+ridx0*8+7);
      float val5_0 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8);
      float val5_1 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+1);
      float val5_2 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+2);
      float val5_3 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+3);
      float val5_4 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+4);
      float val5_5 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+5);
      float val5_6 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+6);
      float val5_7 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+7);
      float alu6_0 = val4_0 * val5_0;
      float alu6_1 = val4_1 * val5_1;
      float alu6_2 = val4_2 * val5_2;
      float alu6_3 = val4_3 * val5_3;
      float alu6_4 = val4_4 * val5_4;
      float alu6_5 = val4_5 * val5_5;
      float alu6_6 = val4_6 * val5_6;
      float alu6_7 = val4_7 * val5_7;
      acc0_0 += alu6_0;
      acc0_1 += alu6_1;
      acc0_2 += alu6_2;
      acc0_3 += alu6_3;
      acc0_4 += alu6_4;
      acc0_5 += alu6_5;
      acc0_6 += alu6_6;
      acc0_7 += alu6_7;
      float val7_0 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32);
      float val7_1 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32+1);
      float val7_2 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32+2);
      float val7_3 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32+3);
      float val7_4 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32+4);
      float val7_5 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32+5);
      float val7_6 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32+6);
      float val7_7 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+32+7);
      float alu8_0 = val4_0 * val7_0;
      float alu8_1 = val4_1 * val7_1;
      float alu8_2 = val4_2 * val7_2;
      float alu8_3 = val4_3 * val7_3;
      float alu8_4 = val4_4 * val7_4;
      float alu8_5 = val4_5 * val7_5;
      float alu8_6 = val4_6 * val7_6;
      float alu8_7 = val4_7 * val7_7;
      acc1_0 += alu8_0;
      acc1_1 += alu8_1;
      acc1_2 += alu8_2;
      acc1_3 += alu8_3;
      acc1_4 += alu8_4;
      acc1_5 += alu8_5;
      acc1_6 += alu8_6;
      acc1_7 += alu8_7;
      float val9_0 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64);
      float val9_1 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64+1);
      float val9_2 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64+2);
      float val9_3 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64+3);
      float val9_4 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64+4);
      float val9_5 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64+5);
      float val9_6 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64+6);
      float val9_7 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+64+7);
      float alu10_0 = val4_0 * val9_0;
      float alu10_1 = val4_1 * val9_1;
      float alu10_2 = val4_2 * val9_2;
      float alu10_3 = val4_3 * val9_3;
      float alu10_4 = val4_4 * val9_4;
      float alu10_5 = val4_5 * val9_5;
      float alu10_6 = val4_6 * val9_6;
      float alu10_7 = val4_7 * val9_7;
      acc2_0 += alu10_0;
      acc2_1 += alu10_1;
      acc2_2 += alu10_2;
      acc2_3 += alu10_3;
      acc2_4 += alu10_4;
      acc2_5 += alu10_5;
      acc2_6 += alu10_6;
      acc2_7 += alu10_7;
      float val11_0 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96);
      float val11_1 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96+1);
      float val11_2 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96+2);
      float val11_3 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96+3);
      float val11_4 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96+4);
      float val11_5 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96+5);
      float val11_6 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96+6);
      float val11_7 = ld_bf16(p_proj_weight, gidx1*128+ridx0*8+96+7);
      float alu12_0 = val4_0 * val11_0;
      float alu12_1 = val4_1 * val11_1;
      float alu12_2 = val4_2 * val11_2;
      float alu12_3 = val4_3 * val11_3;
      float alu12_4 = val4_4 * val11_4;
      float alu12_5 = val4_5 * val11_5;
      float alu12_6 = val4_6 * val11_6;
      float alu12_7 = val4_7 * val11_7;
      acc3_0 += alu12_0;
      acc3_1 += alu12_1;
      acc3_2 += alu12_2;
      acc3_3 += alu12_3;
      acc3_4 += alu12_4;
      acc3_5 += alu12_5;
      acc3_6 += alu12_6;
      acc3_7 += alu12_7;
    }
    float lane13 = acc0_0;
    float lane14 = acc0_1;
    float alu15 = lane13 + lane14;
    float lane16 = acc0_2;
    float alu17 = alu15 + lane16;
    float lane18 = acc0_3;
    float alu19 = alu17 + lane18;
    float lane20 = acc0_4;
    float alu21 = alu19 + lane20;
    float lane22 = acc0_5;
    float alu23 = alu21 + lane22;
    float lane24 = acc0_6;
    float alu25 = alu23 + lane24;
    float lane26 = acc0_7;
    float alu27 = alu25 + lane26;
    float lane28 = acc1_0;
    float lane29 = acc1_1;
    float alu30 = lane28 + lane29;
    float lane31 = acc1_2;
    float alu32 = alu30 + lane31;
    float lane33 = acc1_3;
    float alu34 = alu32 + lane33;
    float lane35 = acc1_4;
    float alu36 = alu34 + lane35;
    float lane37 = acc1_5;
    float alu38 = alu36 + lane37;
    float lane39 = acc1_6;
    float alu40 = alu38 + lane39;
    float lane41 = acc1_7;
    float alu42 = alu40 + lane41;
    float lane43 = acc2_0;
    float lane44 = acc2_1;
    float alu45 = lane43 + lane44;
    float lane46 = acc2_2;
    float alu47 = alu45 + lane46;
    float lane48 = acc2_3;
    float alu49 = alu47 + lane48;
    float lane50 = acc2_4;
    float alu51 = alu49 + lane50;
    float lane52 = acc2_5;
    float alu53 = alu51 + lane52;
    float lane54 = acc2_6;
    float alu55 = alu53 + lane54;
    float lane56 = acc2_7;
    float alu57 = alu55 + lane56;
    float lane58 = acc3_0;
    float lane59 = acc3_1;
    float alu60 = lane58 + lane59;
    float lane61 = acc3_2;
    float alu62 = alu60 + lane61;
    float lane63 = acc3_3;
    float alu64 = alu62 + lane63;
    float lane65 = acc3_4;
    float alu66 = alu64 + lane65;
    float lane67 = acc3_5;
    float alu68 = alu66 + lane67;
    float lane69 = acc3_6;
    float alu70 = alu68 + lane69;
    float lane71 = acc3_7;
    float alu72 = alu70 + lane71;
    float alu73 = alu27 + val0;
    float alu74 = rnd_bf16(alu73);
    st_bf16(p_out, gidx0*24+gidx1*4, alu74);
    float alu75 = alu42 + val1;
    float alu76 = rnd_bf16(alu75);
    st_bf16(p_out, gidx0*24+gidx1*4+1, alu76);
    float alu77 = alu57 + val2;
    float alu78 = rnd_bf16(alu77);
    st_bf16(p_out, gidx0*24+gidx1*4+2, alu78);
    float alu79 = alu72 + val3;
    float alu80 = rnd_bf16(alu79);
    st_bf16(p_out, gidx0*24+gidx1*4+3, alu80);
  }
}

void r_16_6_4_8_4_launch(void *const *args) { r_16_6_4_8_4(args[0], args[1], args[2], args[3]); }
