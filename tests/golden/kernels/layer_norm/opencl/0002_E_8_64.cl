// E_8_64 — kernel 2 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:14
// arguments:
//   p_out   out bf16[1,8,64] out
//   p_scale in  bf16[1,1,64] scale
//   p_x     in  bf16[1,8,64] x
//   p_tmp3  in  f32[1,8,1] (temporary)
//   p_tmp4  in  f32[1,8,1] (temporary)
//   p_shift in  bf16[1,1,64] shift
// full shape before opts: [8, 64]  (output axes) (E_8_64)
// axes after opts: 8 global, 64 global
// grid [64, 8, 1], block [1, 1, 1]; 2560 FLOP, 2368 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void E_8_64(__global ushort *restrict p_out, __global const ushort *restrict p_scale, __global const ushort *restrict p_x, __global const float *restrict p_tmp3, __global const float *restrict p_tmp4, __global const ushort *restrict p_shift) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
  float cst0 = 1.0f;
  float val1 = ld_bf16(p_scale, gidx1);
  float alu2 = rnd_bf16(cst0 + val1);
  float val3 = ld_bf16(p_x, gidx0*64+gidx1);
  float val4 = ld_f32(p_tmp3, gidx0);
  float alu5 = val3 - val4;
  float val6 = ld_f32(p_tmp4, gidx0);
  float alu7 = alu5 * val6;
  float alu8 = rnd_bf16(alu7);
  float alu9 = rnd_bf16(alu2 * alu8);
  float val10 = ld_bf16(p_shift, gidx1);
  float alu11 = rnd_bf16(alu9 + val10);
  st_bf16(p_out, gidx0*64+gidx1, alu11);
}
