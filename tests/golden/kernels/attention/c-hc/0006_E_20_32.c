// E_20_2_16 — kernel 6 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,20,32] out
//   p_tmp1 in  bf16[1,2,20,16] (temporary)
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 20 global, 2 global, 16 vector
// grid [2, 20, 1], block [1, 1, 1]; 0 FLOP, 2560 bytes per launch
// method: hc; opts: [VEC(1,16)]; measured: not timed
#include "../kernel_prelude.h"

void E_20_2_16(uint16_t *restrict p_out, const uint16_t *restrict p_tmp1) {
  #pragma omp parallel for collapse(2) schedule(static)
  for (int gy = 0; gy < 20; gy++)
  for (int gx = 0; gx < 2; gx++)
  {
    int gidx0 = gy;
    int gidx1 = gx;
    float val0_0 = ld_bf16(p_tmp1, gidx0*16+gidx1*320);
    float val0_1 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+1);
    float val0_2 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+2);
    float val0_3 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+3);
    float val0_4 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+4);
    float val0_5 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+5);
    float val0_6 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+6);
    float val0_7 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+7);
    float val0_8 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+8);
    float val0_9 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+9);
    float val0_10 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+10);
    float val0_11 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+11);
    float val0_12 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+12);
    float val0_13 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+13);
    float val0_14 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+14);
    float val0_15 = ld_bf16(p_tmp1, gidx0*16+gidx1*320+15);
    st_bf16(p_out, gidx0*32+gidx1*16, val0_0);
    st_bf16(p_out, gidx0*32+gidx1*16+1, val0_1);
    st_bf16(p_out, gidx0*32+gidx1*16+2, val0_2);
    st_bf16(p_out, gidx0*32+gidx1*16+3, val0_3);
    st_bf16(p_out, gidx0*32+gidx1*16+4, val0_4);
    st_bf16(p_out, gidx0*32+gidx1*16+5, val0_5);
    st_bf16(p_out, gidx0*32+gidx1*16+6, val0_6);
    st_bf16(p_out, gidx0*32+gidx1*16+7, val0_7);
    st_bf16(p_out, gidx0*32+gidx1*16+8, val0_8);
    st_bf16(p_out, gidx0*32+gidx1*16+9, val0_9);
    st_bf16(p_out, gidx0*32+gidx1*16+10, val0_10);
    st_bf16(p_out, gidx0*32+gidx1*16+11, val0_11);
    st_bf16(p_out, gidx0*32+gidx1*16+12, val0_12);
    st_bf16(p_out, gidx0*32+gidx1*16+13, val0_13);
    st_bf16(p_out, gidx0*32+gidx1*16+14, val0_14);
    st_bf16(p_out, gidx0*32+gidx1*16+15, val0_15);
  }
}

void E_20_2_16_launch(void *const *args) { E_20_2_16(args[0], args[1]); }
