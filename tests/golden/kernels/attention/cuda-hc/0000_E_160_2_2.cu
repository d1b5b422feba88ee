// E_160_2_2 — kernel 0 of attention.fdsl, launched 2 times per forward
// project 9bd606dbc163779d: the runtime refuses kernel files of another compile
// DSL: attention.fdsl:9:14
// full shape before opts: [2, 160, 2]  (output axes) (E_2_160_2)
// axes after opts: 160 global, 2 local, 2 upcast
// grid [160, 1, 1], block [2, 1, 1]; 4480 FLOP, 5120 bytes per launch
// method: hc; opts: [UPCAST(2,0), LOCAL(0,2)]; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(2) E_160_2_2(float *__restrict__ data0, const float *__restrict__ data1, const __nv_bfloat16 *__restrict__ data2, const float *__restrict__ data3) {
  int gidx0 = blockIdx.x;
  int lidx0 = threadIdx.x;
  float val0 = ld_f32(data1, gidx0);
  float val1 = ld_bf16(data2, gidx0*2+lidx0*320);
  float alu2 = val0 * val1;
  float val3 = ld_f32(data3, gidx0);
  float val4 = ld_bf16(data2, gidx0*2+lidx0*320+1);
  float alu5 = val3 * val4;
  float alu6 = alu2 - alu5;
  float cst7 = 0.0f;
  float alu10 = alu6 + cst7;
  float alu12 = val3 * val1;
  float alu13 = val0 * val4;
  float alu14 = alu12 + alu13;
  float alu15 = cst7 + alu14;
  st_f32(data0, gidx0*2+lidx0*320, alu10);
  st_f32(data0, gidx0*2+lidx0*320+1, alu15);
}

extern "C" const char E_160_2_2_project[] = "9bd606dbc163779d";
