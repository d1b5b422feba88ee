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

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_16_24_32(__global ushort *restrict p_out, __global const ushort *restrict p_x, __global const ushort *restrict p_proj_weight, __global const ushort *restrict p_proj_bias) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
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
