// r_8_16n1 — kernel 1 of softmax.fdsl, launched 1 time per forward
// DSL: softmax.fdsl:2:14
// arguments:
//   p_out  out f32[2,4,1] (temporary)
//   p_x    in  f32[2,4,16] x
//   p_tmp2 in  f32[2,4,1] (temporary)
// full shape before opts: [8 | 16]  (output axes | reduce axes) (r_8_16)
// axes after opts: 8 global, 16 reduce
// grid [8, 1, 1], block [1, 1, 1]; 384 FLOP, 576 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void r_8_16n1(float *restrict p_out, const float *restrict p_x, const float *restrict p_tmp2) {
  #pragma omp parallel for collapse(1) schedule(static)
  for (int gx = 0; gx < 8; gx++)
  {
    int gidx0 = gx;
    float val0 = ld_f32(p_tmp2, gidx0);
    float acc0 = 0.0f;
    for (int ridx0 = 0; ridx0 < 16; ridx0++) {
      float val1 = ld_f32(p_x, gidx0*16+ridx0);
      float alu2 = val1 - val0;
      float alu3 = expf(alu2);
      acc0 += alu3;
    }
    st_f32(p_out, gidx0, acc0);
  }
}

void r_8_16n1_launch(void *const *args) { r_8_16n1(args[0], args[1], args[2]); }
