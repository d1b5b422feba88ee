// E_2_6_8 — kernel 0 of rope.fdsl, launched 1 time per forward
// DSL: rope.fdsl:5:14
// full shape: [2, 6, 8]  (output axes)
// grid [8, 6, 2], block [1, 1, 1]; 3168 FLOP, 456 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(1) E_2_6_8(__nv_bfloat16 *__restrict__ data0, const float *__restrict__ data1, const __nv_bfloat16 *__restrict__ data2) {
  int gidx0 = blockIdx.z;
  int gidx1 = blockIdx.y;
  int gidx2 = blockIdx.x;
  float val0 = (((gidx2/2)<1)&&((gidx2%2)<1)) ? ld_f32(data1, gidx1*3) : 0.0f;
  float alu1 = (float)(0);
  float cst2 = (-9.2103405f);
  float alu3 = alu1 * cst2;
  float alu4 = expf(alu3);
  float alu5 = val0 * alu4;
  float alu6 = ((gidx2/2)<1) ? alu5 : 0.0f;
  float val7 = (((gidx2%2)<1)&&(((gidx2/2)>=1)&&((gidx2/2)<2))) ? ld_f32(data1, gidx1*3+1) : 0.0f;
  float alu8 = (float)(0);
  float cst9 = (-9.2103405f);
  float alu10 = alu8 * cst9;
  float alu11 = expf(alu10);
  float alu12 = val7 * alu11;
  float alu13 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu12 : 0.0f;
  float alu14 = alu6 + alu13;
  float val15 = (((gidx2%2)<1)&&((gidx2/2)>=2)) ? ld_f32(data1, gidx1*3+2) : 0.0f;
  float alu16 = (float)((gidx2/2)-2);
  float cst17 = (-4.60517025f);
  float alu18 = alu16 * cst17;
  float alu19 = expf(alu18);
  float alu20 = val15 * alu19;
  float alu21 = ((gidx2/2)>=2) ? alu20 : 0.0f;
  float alu22 = alu14 + alu21;
  float alu23 = cosf(alu22);
  float val24 = ((gidx2%2)<1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu25 = alu23 * val24;
  float alu26 = sinf(alu22);
  float val27 = ((gidx2%2)<1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu28 = alu26 * val27;
  float alu29 = alu25 - alu28;
  float alu30 = ((gidx2%2)<1) ? alu29 : 0.0f;
  float val31 = (((gidx2/2)<1)&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3) : 0.0f;
  float alu32 = (float)(0);
  float cst33 = (-9.2103405f);
  float alu34 = alu32 * cst33;
  float alu35 = expf(alu34);
  float alu36 = val31 * alu35;
  float alu37 = ((gidx2/2)<1) ? alu36 : 0.0f;
  float val38 = ((((gidx2/2)>=1)&&((gidx2/2)<2))&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3+1) : 0.0f;
  float alu39 = (float)(0);
  float cst40 = (-9.2103405f);
  float alu41 = alu39 * cst40;
  float alu42 = expf(alu41);
  float alu43 = val38 * alu42;
  float alu44 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu43 : 0.0f;
  float alu45 = alu37 + alu44;
  float val46 = (((gidx2/2)>=2)&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3+2) : 0.0f;
  float alu47 = (float)((gidx2/2)-2);
  float cst48 = (-4.60517025f);
  float alu49 = alu47 * cst48;
  float alu50 = expf(alu49);
  float alu51 = val46 * alu50;
  float alu52 = ((gidx2/2)>=2) ? alu51 : 0.0f;
  float alu53 = alu45 + alu52;
  float alu54 = sinf(alu53);
  float val55 = ((gidx2%2)>=1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu56 = alu54 * val55;
  float alu57 = cosf(alu53);
  float val58 = ((gidx2%2)>=1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu59 = alu57 * val58;
  float alu60 = alu56 + alu59;
  float alu61 = ((gidx2%2)>=1) ? alu60 : 0.0f;
  float alu62 = alu30 + alu61;
  float alu63 = rnd_bf16(alu62);
  st_bf16(data0, gidx0*48+gidx1*8+gidx2, alu63);
}
