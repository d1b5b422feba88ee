// E_2_160_2 — kernel 0 of attention.fdsl, launched 2 times per forward
// DSL: attention.fdsl:9:14
// arguments (the buffers of its first launch):
//   p_out out f32[1,2,20,8,2] (temporary)
//   p_c   in  f32[1,1,20,8] c
//   p_in2 in  bf16[1,2,20,16] q
//   p_s   in  f32[1,1,20,8] s
// full shape before opts: [2, 160, 2]  (output axes) (E_2_160_2)
// axes after opts: 2 global, 160 global, 2 global
// grid [2, 160, 2], block [1, 1, 1]; 4480 FLOP, 5120 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void E_2_160_2(__global float *restrict p_out, __global const float *restrict p_c, __global const ushort *restrict p_in2, __global const float *restrict p_s) {
  int gidx0 = get_group_id(2);
  int gidx1 = get_group_id(1);
  int gidx2 = get_group_id(0);
  float val0 = (gidx2<1) ? ld_f32(p_c, gidx1) : 0.0f;
  float val1 = (gidx2<1) ? ld_bf16(p_in2, gidx0*320+gidx1*2) : 0.0f;
  float alu2 = val0 * val1;
  float val3 = (gidx2<1) ? ld_f32(p_s, gidx1) : 0.0f;
  float val4 = (gidx2<1) ? ld_bf16(p_in2, gidx0*320+gidx1*2+1) : 0.0f;
  float alu5 = val3 * val4;
  float alu6 = alu2 - alu5;
  float alu7 = (gidx2<1) ? alu6 : 0.0f;
  float val8 = (gidx2>=1) ? ld_f32(p_s, gidx1) : 0.0f;
  float val9 = (gidx2>=1) ? ld_bf16(p_in2, gidx0*320+gidx1*2) : 0.0f;
  float alu10 = val8 * val9;
  float val11 = (gidx2>=1) ? ld_f32(p_c, gidx1) : 0.0f;
  float val12 = (gidx2>=1) ? ld_bf16(p_in2, gidx0*320+gidx1*2+1) : 0.0f;
  float alu13 = val11 * val12;
  float alu14 = alu10 + alu13;
  float alu15 = (gidx2>=1) ? alu14 : 0.0f;
  float alu16 = alu7 + alu15;
  st_f32(p_out, gidx0*320+gidx1*2+gidx2, alu16);
}
