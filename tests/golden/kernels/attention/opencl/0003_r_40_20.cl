// r_40_20n1 — kernel 3 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,1] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_tmp2 in  f32[1,2,20,1] (temporary)
// full shape before opts: [40 | 20]  (output axes | reduce axes) (r_40_20)
// axes after opts: 40 global, 20 reduce
// grid [40, 1, 1], block [1, 1, 1]; 2400 FLOP, 3520 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_40_20n1(__global float *restrict p_out, __global const float *restrict p_tmp1, __global const float *restrict p_tmp2) {
  int gidx0 = get_group_id(0);
  float val0 = ld_f32(p_tmp2, gidx0);
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 20; ridx0++) {
    float val1 = ld_f32(p_tmp1, gidx0*20+ridx0);
    float alu2 = val1 - val0;
    float alu3 = exp(alu2);
    acc0 += alu3;
  }
  st_f32(p_out, gidx0, acc0);
}
