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

__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void r_3_32_2_16_8_16(__global ushort *restrict p_out, __global const ushort *restrict p_x, __global const ushort *restrict p_proj_weight, __global const ushort *restrict p_proj_bias) {
  __local float tc_tile[384];
  __local ushort tc_stage16[768];
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
  float val0 = ld_bf16(p_proj_bias, gidx0*8+(lidx0%4)*2);
  float val1 = ld_bf16(p_proj_bias, gidx0*8+(lidx0%4)*2+1);
  float acc0 = 0.0f;
  float acc1 = 0.0f;
  float acc2 = 0.0f;
  float acc3 = 0.0f;
  for (int c = 0; c < 8; c++) tc_stage16[lidx0*8 + c] = ((__global const ushort *)p_x)[((lidx0*8)/16)*32+((lidx0*8)%16) + c];  // cp.async on CUDA
  if (lidx0<16) {
    for (int c = 0; c < 8; c++) tc_stage16[lidx0*8+256 + c] = ((__global const ushort *)p_proj_weight)[gidx0*256+(((lidx0*8)/16)%8)*32+((lidx0*8)%16) + c];  // cp.async on CUDA
  }
  for (int ridx0 = 0; ridx0 < 2; ridx0++) {
    if (ridx0+1<2) {
      for (int c = 0; c < 8; c++) tc_stage16[lidx0*8+((ridx0+1)%2)*384 + c] = ((__global const ushort *)p_x)[ridx0*16+((lidx0*8)/16)*32+((lidx0*8)%16)+16 + c];  // cp.async on CUDA
      if (lidx0<16) {
        for (int c = 0; c < 8; c++) tc_stage16[lidx0*8+((ridx0+1)%2)*384+256 + c] = ((__global const ushort *)p_proj_weight)[gidx0*256+ridx0*16+(((lidx0*8)/16)%8)*32+((lidx0*8)%16)+16 + c];  // cp.async on CUDA
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float frg2 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2);
    float frg3 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+1);
    float frg4 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+128);
    float frg5 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+129);
    float frg6 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+8);
    float frg7 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+9);
    float frg8 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+136);
    float frg9 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+137);
    float frg10 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+256);
    float frg11 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+257);
    float frg12 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+264);
    float frg13 = ld_bf16_l(tc_stage16, ridx0*384+(lidx0/4)*16+(lidx0%4)*2+265);
    MMA_M16N8K16_EMU(tc_tile + (0)*384, (lidx0/4), (lidx0%4), acc0, acc1, acc2, acc3,
        frg2, frg3, frg4, frg5, frg6, frg7, frg8, frg9, frg10, frg11, frg12, frg13);
    barrier(CLK_LOCAL_MEM_FENCE);
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
