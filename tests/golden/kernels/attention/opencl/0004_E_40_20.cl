// E_40_20 — kernel 4 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,20] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_tmp2 in  f32[1,2,20,1] (temporary)
//   p_tmp3 in  f32[1,2,20,1] (temporary)
// full shape before opts: [40, 20]  (output axes) (E_40_20)
// axes after opts: 40 global, 20 global
// grid [20, 40, 1], block [1, 1, 1]; 2400 FLOP, 6720 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void E_40_20(__global float *restrict p_out, __global const float *restrict p_tmp1, __global const float *restrict p_tmp2, __global const float *restrict p_tmp3) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
  float val0 = ld_f32(p_tmp1, gidx0*20+gidx1);
  float val1 = ld_f32(p_tmp2, gidx0);
  float alu2 = val0 - val1;
  float alu3 = exp(alu2);
  float val4 = ld_f32(p_tmp3, gidx0);
  float alu5 = alu3 / val4;
  st_f32(p_out, gidx0*20+gidx1, alu5);
}
