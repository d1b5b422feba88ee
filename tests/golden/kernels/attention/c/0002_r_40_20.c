// r_40_20 — kernel 2 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,1] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
// full shape before opts: [40 | 20]  (output axes | reduce axes) (r_40_20)
// axes after opts: 40 global, 20 reduce
// grid [40, 1, 1], block [1, 1, 1]; 800 FLOP, 3360 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void r_40_20(float *restrict p_out, const float *restrict p_tmp1) {
  #pragma omp parallel for collapse(1) schedule(static)
  for (int gx = 0; gx < 40; gx++)
  {
    int gidx0 = gx;
    float acc0 = (-INFINITY);
    for (int ridx0 = 0; ridx0 < 20; ridx0++) {
      float val0 = ld_f32(p_tmp1, gidx0*20+ridx0);
      acc0 = fmaxf(acc0, val0);
    }
    st_f32(p_out, gidx0, acc0);
  }
}

void r_40_20_launch(void *const *args) { r_40_20(args[0], args[1]); }
