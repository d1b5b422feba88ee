// r_3_32_2_16_8_16 — kernel 0 of linear_bias.fdsl, launched 1 time per forward
// DSL: linear_bias.fdsl:4:14
// arguments:
//   p_out         out bf16[1,16,24] out
//   p_x           in  bf16[1,16,32] x
//   p_proj_weight in  bf16[24,32] proj.weight
//   p_proj_bias   in  bf16[24] proj.bias
// full shape before opts: [16, 24 | 32]  (output axes | reduce axes) (r_16_24_32)
// axes after opts: 3 global, 32 local, 2 reduce, 16 tc-m, 8 tc-n, 16 tc-k
// grid [3, 1, 1], block [32, 1, 1]; 24960 FLOP, 3376 bytes per launch
// method: tc; opts: [TC(0,0), STAGE(0,0)]; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(32) r_3_32_2_16_8_16(__nv_bfloat16 *__restrict__ p_out, const __nv_bfloat16 *__restrict__ p_x, const __nv_bfloat16 *__restrict__ p_proj_weight, const __nv_bfloat16 *__restrict__ p_proj_bias) {
  __shared__ __align__(16) __nv_bfloat16 tc_stage16[768];
  int gidx0 = blockIdx.x;
  int lidx0 = threadIdx.x;
  float val0 = ld_bf16(p_proj_bias, gidx0*8+(lidx0%4)*2);
  float val1 = ld_bf16(p_proj_bias, gidx0*8+(lidx0%4)*2+1);
  float acc0 = 0.0f;
  float acc1 = 0.0f;
  float acc2 = 0.0f;
  float acc3 = 0.0f;
  cp_async16(tc_stage16 + lidx0*8, p_x + ((lidx0*8)/16)*32+((lidx0*8)%16));
  if (lidx0<16) {
    cp_async16(tc_stage16 + lidx0*8+256, p_proj_weight + gidx0*256+(((lidx0*8)/16)%8)*32+((lidx0*8)%16));
  }
  cp_async_commit();
  for (int ridx0 = 0; ridx0 < 2; ridx0++) {
    if (ridx0+1<2) {
      cp_async16(tc_stage16 + lidx0*8+((ridx0+1)%2)*384, p_x + ridx0*16+((lidx0*8)/16)*32+((lidx0*8)%16)+16);
      if (lidx0<16) {
        cp_async16(tc_stage16 + lidx0*8+((ridx0+1)%2)*384+256, p_proj_weight + gidx0*256+ridx0*16+(((lidx0*8)/16)%8)*32+((lidx0*8)%16)+16);
      }
    }
    cp_async_commit();
    cp_async_wait_group(1);
    __syncthreads();
    float frg2 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2);
    float frg3 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+1);
    float frg4 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+128);
    float frg5 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+129);
    float frg6 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+8);
    float frg7 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+9);
    float frg8 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+136);
    float frg9 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+137);
    float frg10 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+256);
    float frg11 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+257);
    float frg12 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+264);
    float frg13 = lds_bf16(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+265);
    mma_m16n8k16_bf16(acc0, acc1, acc2, acc3,
        pk_bf16(frg2, frg3), pk_bf16(frg4, frg5), pk_bf16(frg6, frg7), pk_bf16(frg8, frg9), pk_bf16(frg10, frg11), pk_bf16(frg12, frg13));
    __syncthreads();
  }
  float alu14 = acc0 + val0;
  float alu15 = rnd_bf16(alu14);
  st_bf16(p_out, gidx0*8+(lidx0/4)*24+(lidx0%4)*2, alu15);
  float alu16 = acc1 + val1;
  float alu17 = rnd_bf16(alu16);
  st_bf16(p_out, gidx0*8+(lidx0/4)*24+(lidx0%4)*2+1, alu17);
  float alu18 = acc2 + val0;
  float alu19 = rnd_bf16(alu18);
  st_bf16(p_out, gidx0*8+(lidx0/4)*24+(lidx0%4)*2+192, alu19);
  float alu20 = acc3 + val1;
  float alu21 = rnd_bf16(alu20);
  st_bf16(p_out, gidx0*8+(lidx0/4)*24+(lidx0%4)*2+193, alu21);
}
