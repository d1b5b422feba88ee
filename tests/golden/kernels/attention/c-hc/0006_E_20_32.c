// E_20_4_8 — kernel 6 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,20,32] out
//   p_tmp1 in  bf16[1,2,20,16] (temporary)
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 20 global, 4 upcast, 8 vector
// grid [20, 1, 1], block [1, 1, 1]; 0 FLOP, 2560 bytes per launch
// method: hc; opts: [VEC(1,8), UPCAST(1,4)]; measured: not timed
#include "../kernel_prelude.h"

void E_20_4_8(uint16_t *restrict p_out, const uint16_t *restrict p_tmp1) {
  #pragma omp parallel for collapse(1) schedule(static)
  for (int gx = 0; gx < 20; gx++)
  {
    int gidx0 = gx;
    float val0_0 = ld_bf16(p_tmp1, gidx0*16);
    float val0_1 = ld_bf16(p_tmp1, gidx0*16+1);
    float val0_2 = ld_bf16(p_tmp1, gidx0*16+2);
    float val0_3 = ld_bf16(p_tmp1, gidx0*16+3);
    float val0_4 = ld_bf16(p_tmp1, gidx0*16+4);
    float val0_5 = ld_bf16(p_tmp1, gidx0*16+5);
    float val0_6 = ld_bf16(p_tmp1, gidx0*16+6);
    float val0_7 = ld_bf16(p_tmp1, gidx0*16+7);
    float val1_0 = ld_bf16(p_tmp1, gidx0*16+8);
    float val1_1 = ld_bf16(p_tmp1, gidx0*16+8+1);
    float val1_2 = ld_bf16(p_tmp1, gidx0*16+8+2);
    float val1_3 = ld_bf16(p_tmp1, gidx0*16+8+3);
    float val1_4 = ld_bf16(p_tmp1, gidx0*16+8+4);
    float val1_5 = ld_bf16(p_tmp1, gidx0*16+8+5);
    float val1_6 = ld_bf16(p_tmp1, gidx0*16+8+6);
    float val1_7 = ld_bf16(p_tmp1, gidx0*16+8+7);
    float val2_0 = ld_bf16(p_tmp1, gidx0*16+320);
    float val2_1 = ld_bf16(p_tmp1, gidx0*16+320+1);
    float val2_2 = ld_bf16(p_tmp1, gidx0*16+320+2);
    float val2_3 = ld_bf16(p_tmp1, gidx0*16+320+3);
    float val2_4 = ld_bf16(p_tmp1, gidx0*16+320+4);
    float val2_5 = ld_bf16(p_tmp1, gidx0*16+320+5);
    float val2_6 = ld_bf16(p_tmp1, gidx0*16+320+6);
    float val2_7 = ld_bf16(p_tmp1, gidx0*16+320+7);
    float val3_0 = ld_bf16(p_tmp1, gidx0*16+328);
    float val3_1 = ld_bf16(p_tmp1, gidx0*16+328+1);
    float val3_2 = ld_bf16(p_tmp1, gidx0*16+328+2);
    float val3_3 = ld_bf16(p_tmp1, gidx0*16+328+3);
    float val3_4 = ld_bf16(p_tmp1, gidx0*16+328+4);
    float val3_5 = ld_bf16(p_tmp1, gidx0*16+328+5);
    float val3_6 = ld_bf16(p_tmp1, gidx0*16+328+6);
    float val3_7 = ld_bf16(p_tmp1, gidx0*16+328+7);
    st_bf16(p_out, gidx0*32, val0_0);
    st_bf16(p_out, gidx0*32+1, val0_1);
    st_bf16(p_out, gidx0*32+2, val0_2);
    st_bf16(p_out, gidx0*32+3, val0_3);
    st_bf16(p_out, gidx0*32+4, val0_4);
    st_bf16(p_out, gidx0*32+5, val0_5);
    st_bf16(p_out, gidx0*32+6, val0_6);
    st_bf16(p_out, gidx0*32+7, val0_7);
    st_bf16(p_out, gidx0*32+8, val1_0);
    st_bf16(p_out, gidx0*32+8+1, val1_1);
    st_bf16(p_out, gidx0*32+8+2, val1_2);
    st_bf16(p_out, gidx0*32+8+3, val1_3);
    st_bf16(p_out, gidx0*32+8+4, val1_4);
    st_bf16(p_out, gidx0*32+8+5, val1_5);
    st_bf16(p_out, gidx0*32+8+6, val1_6);
    st_bf16(p_out, gidx0*32+8+7, val1_7);
    st_bf16(p_out, gidx0*32+16, val2_0);
    st_bf16(p_out, gidx0*32+16+1, val2_1);
    st_bf16(p_out, gidx0*32+16+2, val2_2);
    st_bf16(p_out, gidx0*32+16+3, val2_3);
    st_bf16(p_out, gidx0*32+16+4, val2_4);
    st_bf16(p_out, gidx0*32+16+5, val2_5);
    st_bf16(p_out, gidx0*32+16+6, val2_6);
    st_bf16(p_out, gidx0*32+16+7, val2_7);
    st_bf16(p_out, gidx0*32+24, val3_0);
    st_bf16(p_out, gidx0*32+24+1, val3_1);
    st_bf16(p_out, gidx0*32+24+2, val3_2);
    st_bf16(p_out, gidx0*32+24+3, val3_3);
    st_bf16(p_out, gidx0*32+24+4, val3_4);
    st_bf16(p_out, gidx0*32+24+5, val3_5);
    st_bf16(p_out, gidx0*32+24+6, val3_6);
    st_bf16(p_out, gidx0*32+24+7, val3_7);
  }
}

void E_20_4_8_launch(void *const *args) { E_20_4_8(args[0], args[1]); }
