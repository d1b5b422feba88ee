// E_2_6_8 — kernel 0 of rope.fdsl, launched 1 time per forward
// DSL: rope.fdsl:5:14
// full shape before opts: [2, 6, 8]  (output axes) (E_2_6_8)
// axes after opts: 2 global, 6 global, 8 global
// grid [8, 6, 2], block [1, 1, 1]; 3168 FLOP, 456 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void E_2_6_8(__global ushort *restrict data0, __global const float *restrict data1, __global const ushort *restrict data2) {
  int gidx0 = get_group_id(2);
  int gidx1 = get_group_id(1);
  int gidx2 = get_group_id(0);
  float val0 = (((gidx2/2)<1)&&((gidx2%2)<1)) ? ld_f32(data1, gidx1*3) : 0.0f;
  float alu1 = (float)(0);
  float cst2 = (-9.2103405f);
  float alu3 = alu1 * cst2;
  float alu4 = exp(alu3);
  float alu5 = val0 * alu4;
  float alu6 = ((gidx2/2)<1) ? alu5 : 0.0f;
  float val7 = (((gidx2%2)<1)&&(((gidx2/2)>=1)&&((gidx2/2)<2))) ? ld_f32(data1, gidx1*3+1) : 0.0f;
  float alu8 = val7 * alu4;
  float alu9 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu8 : 0.0f;
  float alu10 = alu6 + alu9;
  float val11 = (((gidx2%2)<1)&&((gidx2/2)>=2)) ? ld_f32(data1, gidx1*3+2) : 0.0f;
  float alu12 = (float)((gidx2/2)-2);
  float cst13 = (-4.60517025f);
  float alu14 = alu12 * cst13;
  float alu15 = exp(alu14);
  float alu16 = val11 * alu15;
  float alu17 = ((gidx2/2)>=2) ? alu16 : 0.0f;
  float alu18 = alu10 + alu17;
  float alu19 = cos(alu18);
  float val20 = ((gidx2%2)<1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu21 = alu19 * val20;
  float alu22 = sin(alu18);
  float val23 = ((gidx2%2)<1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu24 = alu22 * val23;
  float alu25 = alu21 - alu24;
  float alu26 = ((gidx2%2)<1) ? alu25 : 0.0f;
  float val27 = (((gidx2/2)<1)&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3) : 0.0f;
  float alu28 = val27 * alu4;
  float alu29 = ((gidx2/2)<1) ? alu28 : 0.0f;
  float val30 = ((((gidx2/2)>=1)&&((gidx2/2)<2))&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3+1) : 0.0f;
  float alu31 = val30 * alu4;
  float alu32 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu31 : 0.0f;
  float alu33 = alu29 + alu32;
  float val34 = (((gidx2/2)>=2)&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3+2) : 0.0f;
  float alu35 = val34 * alu15;
  float alu36 = ((gidx2/2)>=2) ? alu35 : 0.0f;
  float alu37 = alu33 + alu36;
  float alu38 = sin(alu37);
  float val39 = ((gidx2%2)>=1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu40 = alu38 * val39;
  float alu41 = cos(alu37);
  float val42 = ((gidx2%2)>=1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu43 = alu41 * val42;
  float alu44 = alu40 + alu43;
  float alu45 = ((gidx2%2)>=1) ? alu44 : 0.0f;
  float alu46 = alu26 + alu45;
  float alu47 = rnd_bf16(alu46);
  st_bf16(data0, gidx0*48+gidx1*8+gidx2, alu47);
}
