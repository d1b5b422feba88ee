// E_2_160_2 — kernel 0 of attention.fdsl, launched 2 times per forward
// DSL: attention.fdsl:9:14
// arguments (the buffers of its first launch):
//   p_out out f32[1,2,20,8,2] (temporary)
//   p_c   in  f32[1,1,20,8] c
//   p_in2 in  bf16[1,2,20,16] q
//   p_s   in  f32[1,1,20,8] s
// full shape before opts: [2, 160, 2]  (output axes) (E_2_160_2)
// axes after opts: 2 global, 160 global, 2 global
// grid [2, 160, 2], block [1, 1, 1]; 4480 FLOP, 5120 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void E_2_160_2(float *restrict p_out, const float *restrict p_c, const uint16_t *restrict p_in2, const float *restrict p_s) {
  #pragma omp parallel for collapse(3) schedule(static)
  for (int gz = 0; gz < 2; gz++)
  for (int gy = 0; gy < 160; gy++)
  for (int gx = 0; gx < 2; gx++)
  {
    int gidx0 = gz;
    int gidx1 = gy;
    int gidx2 = gx;
    float val0 = (gidx2<1) ? ld_f32(p_c, gidx1) : 0.0f;
    float val1 = (gidx2<1) ? ld_bf16(p_in2, gidx0*320+gidx1*2) : 0.0f;
    float alu2 = val0 * val1;
    float val3 = (gidx2<1) ? ld_f32(p_s, gidx1) : 0.0f;
    float val4 = (gidx2<1) ? ld_bf16(p_in2, gidx0*320+gidx1*2+1) : 0.0f;
    float alu5 = val3 * val4;
    float alu6 = alu2 - alu5;
    float alu7 = (gidx2<1) ? alu6 : 0.0f;
    float val8 = (gidx2>=1) ? ld_f32(p_s, gidx1) : 0.0f;
    float val9 = (gidx2>=1) ? ld_bf16(p_in2, gidx0*320+gidx1*2) : 0.0f;
    float alu10 = val8 * val9;
    float val11 = (gidx2>=1) ? ld_f32(p_c, gidx1) : 0.0f;
    float val12 = (gidx2>=1) ? ld_bf16(p_in2, gidx0*320+gidx1*2+1) : 0.0f;
    float alu13 = val11 * val12;
    float alu14 = alu10 + alu13;
    float alu15 = (gidx2>=1) ? alu14 : 0.0f;
    float alu16 = alu7 + alu15;
    st_f32(p_out, gidx0*320+gidx1*2+gidx2, alu16);
  }
}

void E_2_160_2_launch(void *const *args) { E_2_160_2(args[0], args[1], args[2], args[3]); }
