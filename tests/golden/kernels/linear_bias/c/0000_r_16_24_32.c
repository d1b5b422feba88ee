// r_16_24_32 — kernel 0 of linear_bias.fdsl, launched 1 time per forward
// DSL: linear_bias.fdsl:4:14
// arguments:
//   p_out         out bf16[1,16,24] out
//   p_x           in  bf16[1,16,32] x
//   p_proj_weight in  bf16[24,32] proj.weight
//   p_proj_bias   in  bf16[24] proj.bias
// full shape before opts: [16, 24 | 32]  (output axes | reduce axes) (r_16_24_32)
// axes after opts: 16 global, 24 global, 32 reduce
// grid [24, 16, 1], block [1, 1, 1]; 24960 FLOP, 3376 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.h"

void r_16_24_32(uint16_t *restrict p_out, const uint16_t *restrict p_x, const uint16_t *restrict p_proj_weight, const uint16_t *restrict p_proj_bias) {
  #pragma omp parallel for collapse(2) schedule(static)
  for (int gy = 0; gy < 16; gy++)
  for (int gx = 0; gx < 24; gx++)
  {
    int gidx0 = gy;
    int gidx1 = gx;
    float val0 = ld_bf16(p_proj_bias, gidx1);
    float acc0 = 0.0f;
    for (int ridx0 = 0; ridx0 < 32; ridx0++) {
      float val1 = ld_bf16(p_x, gidx0*32+ridx0);
      float val2 = ld_bf16(p_proj_weight, gidx1*32+ridx0);
      float alu3 = val1 * val2;
      acc0 += alu3;
    }
    float alu4 = acc0 + val0;
    float alu5 = rnd_bf16(alu4);
    st_bf16(p_out, gidx0*24+gidx1, alu5);
  }
}

void r_16_24_32_launch(void *const *args) { r_16_24_32(args[0], args[1], args[2], args[3]); }
