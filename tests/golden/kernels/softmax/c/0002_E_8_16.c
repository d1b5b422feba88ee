// E_8_16 — kernel 2 of softmax.fdsl, launched 1 time per forward
// DSL: softmax.fdsl:2:14
// arguments:
//   p_out  out f32[2,4,16] out
//   p_x    in  f32[2,4,16] x
//   p_tmp2 in  f32[2,4,1] (temporary)
//   p_tmp3 in  f32[2,4,1] (temporary)
// full shape before opts: [8, 16]  (output axes) (E_8_16)
// axes after opts: 8 global, 16 global
// grid [16, 8, 1], block [1, 1, 1]; 384 FLOP, 1088 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void E_8_16(float *restrict p_out, const float *restrict p_x, const float *restrict p_tmp2, const float *restrict p_tmp3) {
  #pragma omp parallel for collapse(2) schedule(static)
  for (int gy = 0; gy < 8; gy++)
  for (int gx = 0; gx < 16; gx++)
  {
    int gidx0 = gy;
    int gidx1 = gx;
    float val0 = ld_f32(p_x, gidx0*16+gidx1);
    float val1 = ld_f32(p_tmp2, gidx0);
    float alu2 = val0 - val1;
    float alu3 = expf(alu2);
    float val4 = ld_f32(p_tmp3, gidx0);
    float alu5 = alu3 / val4;
    st_f32(p_out, gidx0*16+gidx1, alu5);
  }
}

void E_8_16_launch(void *const *args) { E_8_16(args[0], args[1], args[2], args[3]); }
