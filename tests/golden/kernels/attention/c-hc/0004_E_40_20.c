// E_40_5_4 — kernel 4 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,20] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_tmp2 in  f32[1,2,20,1] (temporary)
//   p_tmp3 in  f32[1,2,20,1] (temporary)
// full shape before opts: [40, 20]  (output axes) (E_40_20)
// axes after opts: 40 global, 5 global, 4 vector
// grid [5, 40, 1], block [1, 1, 1]; 2400 FLOP, 6720 bytes per launch
// method: hc; opts: [VEC(1,4)]; measured: not timed
#include "../kernel_prelude.h"

void E_40_5_4(float *restrict p_out, const float *restrict p_tmp1, const float *restrict p_tmp2, const float *restrict p_tmp3) {
  #pragma omp parallel for collapse(2) schedule(static)
  for (int gy = 0; gy < 40; gy++)
  for (int gx = 0; gx < 5; gx++)
  {
    int gidx0 = gy;
    int gidx1 = gx;
    float val0_0 = ld_f32(p_tmp1, gidx0*20+gidx1*4);
    float val0_1 = ld_f32(p_tmp1, gidx0*20+gidx1*4+1);
    float val0_2 = ld_f32(p_tmp1, gidx0*20+gidx1*4+2);
    float val0_3 = ld_f32(p_tmp1, gidx0*20+gidx1*4+3);
    float val1 = ld_f32(p_tmp2, gidx0);
    float alu2_0 = val0_0 - val1;
    float alu2_1 = val0_1 - val1;
    float alu2_2 = val0_2 - val1;
    float alu2_3 = val0_3 - val1;
    float alu3_0 = expf(alu2_0);
    float alu3_1 = expf(alu2_1);
    float alu3_2 = expf(alu2_2);
    float alu3_3 = expf(alu2_3);
    float val4 = ld_f32(p_tmp3, gidx0);
    float alu5_0 = alu3_0 / val4;
    float alu5_1 = alu3_1 / val4;
    float alu5_2 = alu3_2 / val4;
    float alu5_3 = alu3_3 / val4;
    st_f32(p_out, gidx0*20+gidx1*4, alu5_0);
    st_f32(p_out, gidx0*20+gidx1*4+1, alu5_1);
    st_f32(p_out, gidx0*20+gidx1*4+2, alu5_2);
    st_f32(p_out, gidx0*20+gidx1*4+3, alu5_3);
  }
}

void E_40_5_4_launch(void *const *args) { E_40_5_4(args[0], args[1], args[2], args[3]); }
