// E_20_32 — kernel 6 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,20,32] out
//   p_tmp1 in  bf16[1,2,20,16] (temporary)
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 20 global, 32 global
// grid [32, 20, 1], block [1, 1, 1]; 0 FLOP, 2560 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void E_20_32(uint16_t *restrict p_out, const uint16_t *restrict p_tmp1) {
  #pragma omp parallel for collapse(2) schedule(static)
  for (int gy = 0; gy < 20; gy++)
  for (int gx = 0; gx < 32; gx++)
  {
    int gidx0 = gy;
    int gidx1 = gx;
    float val0 = ld_bf16(p_tmp1, gidx0*16+(gidx1/16)*320+(gidx1%16));
    st_bf16(p_out, gidx0*32+gidx1, val0);
  }
}

void E_20_32_launch(void *const *args) { E_20_32(args[0], args[1]); }
