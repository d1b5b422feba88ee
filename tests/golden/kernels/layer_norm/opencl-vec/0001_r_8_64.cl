// r_64_8 — kernel 1 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:30
// arguments:
//   p_out  out f32[1,8,1] (temporary)
//   p_x    in  bf16[1,8,64] x
//   p_tmp2 in  f32[1,8,1] (temporary)
// full shape before opts: [8 | 64]  (output axes | reduce axes) (r_8_64)
// axes after opts: 64 reduce, 8 vector
// grid [1, 1, 1], block [1, 1, 1]; 1568 FLOP, 1088 bytes per launch
// method: beam; opts: [VEC(0,8)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_64_8(__global float *restrict p_out, __global const ushort *restrict p_x, __global const float *restrict p_tmp2) {
  float8 val0 = ld_f32x8(p_tmp2, 0);
  float cst1 = 64.0f;
  float cst2 = 9.99999997e-07f;
  float8 acc0 = (float8)(0.0f);
  for (int ridx0 = 0; ridx0 < 64; ridx0++) {
    float val3 = ld_bf16(p_x, ridx0);
    float val4 = ld_bf16(p_x, ridx0+64);
    float val5 = ld_bf16(p_x, ridx0+128);
    float val6 = ld_bf16(p_x, ridx0+192);
    float val7 = ld_bf16(p_x, ridx0+256);
    float val8 = ld_bf16(p_x, ridx0+320);
    float val9 = ld_bf16(p_x, ridx0+384);
    float val10 = ld_bf16(p_x, ridx0+448);
    float8 vec11 = (float8)(val3, val4, val5, val6, val7, val8, val9, val10);
    float8 alu12 = vec11 - val0;
    acc0 += alu12 * alu12;
  }
  float8 alu14 = acc0 / cst1;
  float8 alu15 = alu14 + cst2;
  float8 alu16 = sqrt(alu15);
  float8 alu17 = 1.0f / alu16;
  st_f32x8(p_out, 0, alu17);
}
