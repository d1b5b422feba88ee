// E_2_6_8 — kernel 0 of rope.fdsl, launched 1 time per forward
// project b5966673ac7adffe: the runtime refuses kernel files of another compile
// DSL: rope.fdsl:5:14
// full shape before opts: [2, 6, 8]  (output axes) (E_2_6_8)
// axes after opts: 2 global, 6 global, 8 global
// grid [8, 6, 2], block [1, 1, 1]; 4128 FLOP, 456 bytes per launch
// method: raw; opts: []; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(1) E_2_6_8(__nv_bfloat16 *__restrict__ data0, const float *__restrict__ data1, const __nv_bfloat16 *__restrict__ data2) {
  int gidx0 = blockIdx.z;
  int gidx1 = blockIdx.y;
  int gidx2 = blockIdx.x;
  float val0 = (((gidx2/2)<1)&&((gidx2%2)<1)) ? ld_f32(data1, gidx1*3) : 0.0f;
  float cst1 = 1.0f;
  float alu2 = val0 * cst1;
  float alu3 = ((gidx2/2)<1) ? alu2 : 0.0f;
  float val4 = (((gidx2%2)<1)&&(((gidx2/2)>=1)&&((gidx2/2)<2))) ? ld_f32(data1, gidx1*3+1) : 0.0f;
  float alu5 = val4 * cst1;
  float alu6 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu5 : 0.0f;
  float alu7 = alu3 + alu6;
  float val8 = (((gidx2%2)<1)&&((gidx2/2)>=2)) ? ld_f32(data1, gidx1*3+2) : 0.0f;
  float alu9 = (gidx1*2+((gidx2/2)-2)<1) ? cst1 : 0.0f;
  float cst10 = 0.00999999978f;
  float alu11 = ((gidx1*2+((gidx2/2)-2)>=1)&&(gidx1*2+((gidx2/2)-2)<2)) ? cst10 : 0.0f;
  float alu12 = alu9 + alu11;
  float alu13 = ((gidx1*2+((gidx2/2)-2)>=2)&&(gidx1*2+((gidx2/2)-2)<3)) ? cst1 : 0.0f;
  float alu14 = ((gidx1*2+((gidx2/2)-2)>=3)&&(gidx1*2+((gidx2/2)-2)<4)) ? cst10 : 0.0f;
  float alu15 = alu13 + alu14;
  float alu16 = alu12 + alu15;
  float alu17 = ((gidx1*2+((gidx2/2)-2)>=4)&&(gidx1*2+((gidx2/2)-2)<5)) ? cst1 : 0.0f;
  float alu18 = ((gidx1*2+((gidx2/2)-2)>=5)&&(gidx1*2+((gidx2/2)-2)<6)) ? cst10 : 0.0f;
  float alu19 = alu17 + alu18;
  float alu20 = ((gidx1*2+((gidx2/2)-2)>=6)&&(gidx1*2+((gidx2/2)-2)<7)) ? cst1 : 0.0f;
  float alu21 = ((gidx1*2+((gidx2/2)-2)>=7)&&(gidx1*2+((gidx2/2)-2)<8)) ? cst10 : 0.0f;
  float alu22 = alu20 + alu21;
  float alu23 = alu19 + alu22;
  float alu24 = alu16 + alu23;
  float alu25 = ((gidx1*2+((gidx2/2)-2)>=8)&&(gidx1*2+((gidx2/2)-2)<9)) ? cst1 : 0.0f;
  float alu26 = ((gidx1*2+((gidx2/2)-2)>=9)&&(gidx1*2+((gidx2/2)-2)<10)) ? cst10 : 0.0f;
  float alu27 = alu25 + alu26;
  float alu28 = ((gidx1*2+((gidx2/2)-2)>=10)&&(gidx1*2+((gidx2/2)-2)<11)) ? cst1 : 0.0f;
  float alu29 = (gidx1*2+((gidx2/2)-2)>=11) ? cst10 : 0.0f;
  float alu30 = alu28 + alu29;
  float alu31 = alu27 + alu30;
  float alu32 = alu24 + alu31;
  float alu33 = val8 * alu32;
  float alu34 = ((gidx2/2)>=2) ? alu33 : 0.0f;
  float alu35 = alu7 + alu34;
  float alu36 = cosf(alu35);
  float val37 = ((gidx2%2)<1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu38 = alu36 * val37;
  float alu39 = sinf(alu35);
  float val40 = ((gidx2%2)<1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu41 = alu39 * val40;
  float alu42 = alu38 - alu41;
  float alu43 = ((gidx2%2)<1) ? alu42 : 0.0f;
  float val44 = (((gidx2/2)<1)&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3) : 0.0f;
  float alu45 = val44 * cst1;
  float alu46 = ((gidx2/2)<1) ? alu45 : 0.0f;
  float val47 = ((((gidx2/2)>=1)&&((gidx2/2)<2))&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3+1) : 0.0f;
  float alu48 = val47 * cst1;
  float alu49 = (((gidx2/2)>=1)&&((gidx2/2)<2)) ? alu48 : 0.0f;
  float alu50 = alu46 + alu49;
  float val51 = (((gidx2/2)>=2)&&((gidx2%2)>=1)) ? ld_f32(data1, gidx1*3+2) : 0.0f;
  float alu52 = val51 * alu32;
  float alu53 = ((gidx2/2)>=2) ? alu52 : 0.0f;
  float alu54 = alu50 + alu53;
  float alu55 = sinf(alu54);
  float val56 = ((gidx2%2)>=1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2) : 0.0f;
  float alu57 = alu55 * val56;
  float alu58 = cosf(alu54);
  float val59 = ((gidx2%2)>=1) ? ld_bf16(data2, gidx0*48+gidx1*8+(gidx2/2)*2+1) : 0.0f;
  float alu60 = alu58 * val59;
  float alu61 = alu57 + alu60;
  float alu62 = ((gidx2%2)>=1) ? alu61 : 0.0f;
  float alu63 = alu43 + alu62;
  float alu64 = rnd_bf16(alu63);
  st_bf16(data0, gidx0*48+gidx1*8+gidx2, alu64);
}

extern "C" const char E_2_6_8_project[] = "b5966673ac7adffe";
