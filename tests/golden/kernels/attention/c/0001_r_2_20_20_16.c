// r_2_20_20_16 — kernel 1 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,20] (temporary)
//   p_tmp1 in  f32[1,2,20,8,2] (temporary)
//   p_tmp2 in  f32[1,2,20,8,2] (temporary)
// full shape before opts: [2, 20, 20 | 16]  (output axes | reduce axes) (r_2_20_20_16)
// axes after opts: 2 global, 20 global, 20 global, 16 reduce
// grid [20, 20, 2], block [1, 1, 1]; 26400 FLOP, 8320 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void r_2_20_20_16(float *restrict p_out, const float *restrict p_tmp1, const float *restrict p_tmp2) {
  #pragma omp parallel for collapse(3) schedule(static)
  for (int gz = 0; gz < 2; gz++)
  for (int gy = 0; gy < 20; gy++)
  for (int gx = 0; gx < 20; gx++)
  {
    int gidx0 = gz;
    int gidx1 = gy;
    int gidx2 = gx;
    float cst0 = 4.0f;
    float acc0 = 0.0f;
    for (int ridx0 = 0; ridx0 < 16; ridx0++) {
      float val1 = ld_f32(p_tmp1, gidx0*320+gidx1*16+ridx0);
      float alu2 = rnd_bf16(val1);
      float val3 = ld_f32(p_tmp2, gidx0*320+gidx2*16+ridx0);
      float alu4 = rnd_bf16(val3);
      float alu5 = alu2 * alu4;
      acc0 += alu5;
    }
    float alu6 = acc0 / cst0;
    st_f32(p_out, gidx0*400+gidx1*20+gidx2, alu6);
  }
}

void r_2_20_20_16_launch(void *const *args) { r_2_20_20_16(args[0], args[1], args[2]); }
