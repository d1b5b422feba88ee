// E_5_8_4_4 — kernel 1 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,20,32] out
//   p_tmp1 in  bf16[1,2,20,16] (temporary)
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 5 global, 8 local, 4 local, 4 upcast
// grid [5, 1, 1], block [4, 8, 1]; 0 FLOP, 2560 bytes per launch
// method: hc; opts: [UPCAST(1,4), LOCAL(0,4), LOCAL(1,8)]; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(32) E_5_8_4_4(__nv_bfloat16 *__restrict__ p_out, const __nv_bfloat16 *__restrict__ p_tmp1) {
  int gidx0 = blockIdx.x;
  int lidx0 = threadIdx.y;
  int lidx1 = threadIdx.x;
  float val0 = ld_bf16(p_tmp1, gidx0*64+lidx1*16+((lidx0*4)/16)*320+((lidx0*4)%16));
  float val1 = ld_bf16(p_tmp1, gidx0*64+lidx1*16+((lidx0*4)/16)*320+((lidx0*4)%16)+1);
  float val2 = ld_bf16(p_tmp1, gidx0*64+lidx1*16+((lidx0*4)/16)*320+((lidx0*4)%16)+2);
  float val3 = ld_bf16(p_tmp1, gidx0*64+lidx1*16+((lidx0*4)/16)*320+((lidx0*4)%16)+3);
  st_bf16(p_out, gidx0*128+lidx0*4+lidx1*32, val0);
  st_bf16(p_out, gidx0*128+lidx0*4+lidx1*32+1, val1);
  st_bf16(p_out, gidx0*128+lidx0*4+lidx1*32+2, val2);
  st_bf16(p_out, gidx0*128+lidx0*4+lidx1*32+3, val3);
}
