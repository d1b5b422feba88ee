// r_40_20n1 — kernel 3 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,1] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_tmp2 in  f32[1,2,20,1] (temporary)
// full shape before opts: [40 | 20]  (output axes | reduce axes) (r_40_20)
// axes after opts: 40 global, 20 reduce
// grid [40, 1, 1], block [1, 1, 1]; 2400 FLOP, 3520 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void r_40_20n1(float *restrict p_out, const float *restrict p_tmp1, const float *restrict p_tmp2) {
  #pragma omp parallel for collapse(1) schedule(static)
  for (int gx = 0; gx < 40; gx++)
  {
    int gidx0 = gx;
    float val0 = ld_f32(p_tmp2, gidx0);
    float acc0 = 0.0f;
    for (int ridx0 = 0; ridx0 < 20; ridx0++) {
      float val1 = ld_f32(p_tmp1, gidx0*20+ridx0);
      float alu2 = val1 - val0;
      float alu3 = expf(alu2);
      acc0 += alu3;
    }
    st_f32(p_out, gidx0, acc0);
  }
}

void r_40_20n1_launch(void *const *args) { r_40_20n1(args[0], args[1], args[2]); }
