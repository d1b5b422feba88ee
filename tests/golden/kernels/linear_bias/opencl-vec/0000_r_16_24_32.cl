// r_8_3_32_2_8 — kernel 0 of linear_bias.fdsl, launched 1 time per forward
// DSL: linear_bias.fdsl:4:14
// arguments:
//   p_out         out bf16[1,16,24] out
//   p_x           in  bf16[1,16,32] x
//   p_proj_weight in  bf16[24,32] proj.weight
//   p_proj_bias   in  bf16[24] proj.bias
// full shape before opts: [16, 24 | 32]  (output axes | reduce axes) (r_16_24_32)
// axes after opts: 8 global, 3 global, 32 reduce, 2 upcast, 8 vector
// grid [3, 8, 1], block [1, 1, 1]; 24960 FLOP, 3376 bytes per launch
// method: beam; opts: [UPCAST(0,2), VEC(1,8)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_8_3_32_2_8(__global ushort *restrict p_out, __global const ushort *restrict p_x, __global const ushort *restrict p_proj_weight, __global const ushort *restrict p_proj_bias) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
  float8 val0 = ld_bf16x8(p_proj_bias, gidx1*8);
  float8 acc0 = (float8)(0.0f);
  float8 acc1 = (float8)(0.0f);
  for (int ridx0 = 0; ridx0 < 32; ridx0++) {
    float val1 = ld_bf16(p_x, gidx0*64+ridx0);
    float val2 = ld_bf16(p_proj_weight, gidx1*256+ridx0);
    float val3 = ld_bf16(p_proj_weight, gidx1*256+ridx0+32);
    float val4 = ld_bf16(p_proj_weight, gidx1*256+ridx0+64);
    float val5 = ld_bf16(p_proj_weight, gidx1*256+ridx0+96);
    float val6 = ld_bf16(p_proj_weight, gidx1*256+ridx0+128);
    float val7 = ld_bf16(p_proj_weight, gidx1*256+ridx0+160);
    float val8 = ld_bf16(p_proj_weight, gidx1*256+ridx0+192);
    float val9 = ld_bf16(p_proj_weight, gidx1*256+ridx0+224);
    float8 vec10 = (float8)(val2, val3, val4, val5, val6, val7, val8, val9);
    acc0 += val1 * vec10;
    float val12 = ld_bf16(p_x, gidx0*64+ridx0+32);
    acc1 += val12 * vec10;
  }
  float8 alu14 = acc0 + val0;
  float8 alu15 = rnd_bf16x8(alu14);
  st_bf16x8(p_out, gidx0*48+gidx1*8, alu15);
  float8 alu16 = acc1 + val0;
  float8 alu17 = rnd_bf16x8(alu16);
  st_bf16x8(p_out, gidx0*48+gidx1*8+24, alu17);
}
