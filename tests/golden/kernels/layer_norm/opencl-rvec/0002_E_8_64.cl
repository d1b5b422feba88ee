// E_4_4_2_16 — kernel 2 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:14
// arguments:
//   p_out   out bf16[1,8,64] out
//   p_scale in  bf16[1,1,64] scale
//   p_x     in  bf16[1,8,64] x
//   p_tmp3  in  f32[1,8,1] (temporary)
//   p_tmp4  in  f32[1,8,1] (temporary)
//   p_shift in  bf16[1,1,64] shift
// full shape before opts: [8, 64]  (output axes) (E_8_64)
// axes after opts: 4 global, 4 global, 2 upcast, 16 vector
// grid [4, 4, 1], block [1, 1, 1]; 2560 FLOP, 2368 bytes per launch
// method: beam; opts: [VEC(1,16), UPCAST(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void E_4_4_2_16(__global ushort *restrict p_out, __global const ushort *restrict p_scale, __global const ushort *restrict p_x, __global const float *restrict p_tmp3, __global const float *restrict p_tmp4, __global const ushort *restrict p_shift) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
  float cst0 = 1.0f;
  float16 val1 = ld_bf16x16(p_scale, gidx1*16);
  float16 alu2 = rnd_bf16x16(cst0 + val1);
  float16 val3 = ld_bf16x16(p_x, gidx0*128+gidx1*16);
  float val4 = ld_f32(p_tmp3, gidx0*2);
  float16 alu5 = val3 - val4;
  float val6 = ld_f32(p_tmp4, gidx0*2);
  float16 alu7 = alu5 * val6;
  float16 alu8 = rnd_bf16x16(alu7);
  float16 alu9 = rnd_bf16x16(alu2 * alu8);
  float16 val10 = ld_bf16x16(p_shift, gidx1*16);
  float16 alu11 = rnd_bf16x16(alu9 + val10);
  float16 val12 = ld_bf16x16(p_x, gidx0*128+gidx1*16+64);
  float val13 = ld_f32(p_tmp3, gidx0*2+1);
  float16 alu14 = val12 - val13;
  float val15 = ld_f32(p_tmp4, gidx0*2+1);
  float16 alu16 = alu14 * val15;
  float16 alu17 = rnd_bf16x16(alu16);
  float16 alu18 = rnd_bf16x16(alu2 * alu17);
  float16 alu19 = rnd_bf16x16(alu18 + val10);
  st_bf16x16(p_out, gidx0*128+gidx1*16, alu11);
  st_bf16x16(p_out, gidx0*128+gidx1*16+64, alu19);
}
