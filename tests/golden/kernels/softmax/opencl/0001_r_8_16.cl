// r_8_16n1 — kernel 1 of softmax.fdsl, launched 1 time per forward
// DSL: softmax.fdsl:2:14
// arguments:
//   data0 out f32[2,4,1] (temporary)
//   data1 in  f32[2,4,16] x
//   data2 in  f32[2,4,1] (temporary)
// full shape before opts: [8 | 16]  (output axes | reduce axes) (r_8_16)
// axes after opts: 8 global, 16 reduce
// grid [8, 1, 1], block [1, 1, 1]; 384 FLOP, 576 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_8_16n1(__global float *restrict data0, __global const float *restrict data1, __global const float *restrict data2) {
  int gidx0 = get_group_id(0);
  float val0 = ld_f32(data2, gidx0);
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 16; ridx0++) {
    float val1 = ld_f32(data1, gidx0*16+ridx0);
    float alu2 = val1 - val0;
    float alu3 = exp(alu2);
    acc0 += alu3;
  }
  st_f32(data0, gidx0, acc0);
}
