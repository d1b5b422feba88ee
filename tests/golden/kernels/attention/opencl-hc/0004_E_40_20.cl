// E_5_5_8_4 — kernel 4 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,20] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_tmp2 in  f32[1,2,20,1] (temporary)
//   p_tmp3 in  f32[1,2,20,1] (temporary)
// full shape before opts: [40, 20]  (output axes) (E_40_20)
// axes after opts: 5 global, 5 global, 8 local, 4 vector
// grid [5, 5, 1], block [8, 1, 1]; 2400 FLOP, 6720 bytes per launch
// method: hc; opts: [VEC(1,4), LOCAL(0,8)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void E_5_5_8_4(__global float *restrict p_out, __global const float *restrict p_tmp1, __global const float *restrict p_tmp2, __global const float *restrict p_tmp3) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
  int lidx0 = get_local_id(0);
  float4 val0 = ld_f32x4(p_tmp1, gidx0*160+gidx1*4+lidx0*20);
  float val1 = ld_f32(p_tmp2, gidx0*8+lidx0);
  float4 alu2 = val0 - val1;
  float4 alu3 = exp(alu2);
  float val4 = ld_f32(p_tmp3, gidx0*8+lidx0);
  float4 alu5 = alu3 / val4;
  st_f32x4(p_out, gidx0*160+gidx1*4+lidx0*20, alu5);
}
