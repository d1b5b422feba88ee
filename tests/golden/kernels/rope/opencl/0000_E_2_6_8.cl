// E_2_6_8 — kernel 0 of rope.fdsl, launched 1 time per forward
// DSL: rope.fdsl:5:14
// arguments:
//   p_out     out bf16[1,2,6,8] out
//   p_ids     in  f32[1,6,3] ids
//   p_folded0 in  f32[2] folded0
//   p_q       in  bf16[1,2,6,8] q
// full shape before opts: [2, 6, 8]  (output axes) (E_2_6_8)
// axes after opts: 2 global, 6 global, 8 global
// grid [8, 6, 2], block [1, 1, 1]; 2016 FLOP, 464 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void E_2_6_8(__global ushort *restrict p_out, __global const float *restrict p_ids, __global const float *restrict p_folded0, __global const ushort *restrict p_q) {
  int gidx0 = get_group_id(2);
  int gidx1 = get_group_id(1);
  int gidx2 = get_group_id(0);
  float val0 = (((gidx2/2)<1)&&((gidx2%2)<1)) ? ld_f32(p_ids, gidx1*3) : 0.0f;
  float cst1 = 1.0f;
  float alu2 = val0 * cst1;
  float alu3 = ((gidx2/2)<1) ? alu2 : 0.0f;
  float val4 = (((gidx2%2)<1)&&(((gidx2/2)>=1)&&((gidx2/2)<2))) ? ld_f32(p_ids, gidx1*3+1) : 0.0f;
  float alu5 = val4 * cst1;
  float alu6 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu5 : 0.0f;
  float alu7 = alu3 + alu6;
  float val8 = (((gidx2%2)<1)&&((gidx2/2)>=2)) ? ld_f32(p_ids, gidx1*3+2) : 0.0f;
  float val9 = (((gidx2%2)<1)&&((gidx2/2)>=2)) ? ld_f32(p_folded0, (gidx2/2)-2) : 0.0f;
  float alu10 = val8 * val9;
  float alu11 = ((gidx2/2)>=2) ? alu10 : 0.0f;
  float alu12 = alu7 + alu11;
  float alu13 = cos(alu12);
  float val14 = ((gidx2%2)<1) ? ld_bf16(p_q, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu15 = alu13 * val14;
  float alu16 = sin(alu12);
  float val17 = ((gidx2%2)<1) ? ld_bf16(p_q, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu18 = alu16 * val17;
  float alu19 = alu15 - alu18;
  float alu20 = ((gidx2%2)<1) ? alu19 : 0.0f;
  float val21 = (((gidx2/2)<1)&&((gidx2%2)>=1)) ? ld_f32(p_ids, gidx1*3) : 0.0f;
  float alu22 = val21 * cst1;
  float alu23 = ((gidx2/2)<1) ? alu22 : 0.0f;
  float val24 = ((((gidx2/2)>=1)&&((gidx2/2)<2))&&((gidx2%2)>=1)) ? ld_f32(p_ids, gidx1*3+1) : 0.0f;
  float alu25 = val24 * cst1;
  float alu26 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu25 : 0.0f;
  float alu27 = alu23 + alu26;
  float val28 = (((gidx2/2)>=2)&&((gidx2%2)>=1)) ? ld_f32(p_ids, gidx1*3+2) : 0.0f;
  float val29 = (((gidx2/2)>=2)&&((gidx2%2)>=1)) ? ld_f32(p_folded0, (gidx2/2)-2) : 0.0f;
  float alu30 = val28 * val29;
  float alu31 = ((gidx2/2)>=2) ? alu30 : 0.0f;
  float alu32 = alu27 + alu31;
  float alu33 = sin(alu32);
  float val34 = ((gidx2%2)>=1) ? ld_bf16(p_q, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu35 = alu33 * val34;
  float alu36 = cos(alu32);
  float val37 = ((gidx2%2)>=1) ? ld_bf16(p_q, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu38 = alu36 * val37;
  float alu39 = alu35 + alu38;
  float alu40 = ((gidx2%2)>=1) ? alu39 : 0.0f;
  float alu41 = alu20 + alu40;
  float alu42 = rnd_bf16(alu41);
  st_bf16(p_out, gidx0*48+gidx1*8+gidx2, alu42);
}
