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
#include "../kernel_prelude.h"

void r_8_64n1(float *restrict p_out, const uint16_t *restrict p_x, const float *restrict p_tmp2) {
  #pragma omp parallel for collapse(1) schedule(static)
  for (int gx = 0; gx < 8; gx++)
  {
    int gidx0 = gx;
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
}

void r_8_64n1_launch(void *const *args) { r_8_64n1(args[0], args[1], args[2]); }
