// r_8_16 — kernel 0 of softmax.fdsl, launched 1 time per forward
// DSL: softmax.fdsl:2:14
// arguments:
//   p_out out f32[2,4,1] (temporary)
//   p_x   in  f32[2,4,16] x
// full shape before opts: [8 | 16]  (output axes | reduce axes) (r_8_16)
// axes after opts: 8 global, 16 reduce
// grid [8, 1, 1], block [1, 1, 1]; 128 FLOP, 544 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_8_16(__global float *restrict p_out, __global const float *restrict p_x) {
  int gidx0 = get_group_id(0);
  float acc0 = (-INFINITY);
  for (int ridx0 = 0; ridx0 < 16; ridx0++) {
    float val0 = ld_f32(p_x, gidx0*16+ridx0);
    acc0 = fmax(acc0, val0);
  }
  st_f32(p_out, gidx0, acc0);
}
