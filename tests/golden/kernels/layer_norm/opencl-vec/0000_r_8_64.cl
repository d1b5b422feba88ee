// r_2_64_4 — kernel 0 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:30
// arguments:
//   p_out out f32[1,8,1] (temporary)
//   p_x   in  bf16[1,8,64] x
// full shape before opts: [8 | 64]  (output axes | reduce axes) (r_8_64)
// axes after opts: 2 global, 64 reduce, 4 vector
// grid [2, 1, 1], block [1, 1, 1]; 520 FLOP, 1056 bytes per launch
// method: beam; opts: [VEC(0,4)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_2_64_4(__global float *restrict p_out, __global const ushort *restrict p_x) {
  int gidx0 = get_group_id(0);
  float cst0 = 64.0f;
  float4 acc0 = (float4)(0.0f);
  for (int ridx0 = 0; ridx0 < 64; ridx0++) {
    float val1 = ld_bf16(p_x, gidx0*256+ridx0);
    float val2 = ld_bf16(p_x, gidx0*256+ridx0+64);
    float val3 = ld_bf16(p_x, gidx0*256+ridx0+128);
    float val4 = ld_bf16(p_x, gidx0*256+ridx0+192);
    float4 vec5 = (float4)(val1, val2, val3, val4);
    acc0 += vec5;
  }
  float4 alu6 = acc0 / cst0;
  st_f32x4(p_out, gidx0*4, alu6);
}
