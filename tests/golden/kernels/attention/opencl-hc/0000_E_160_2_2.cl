// E_160_2_2 — kernel 0 of attention.fdsl, launched 2 times per forward
// project 1e8b17f8b48e12fd: the runtime refuses kernel files of another compile
// DSL: attention.fdsl:9:14
// full shape before opts: [2, 160, 2]  (output axes) (E_2_160_2)
// axes after opts: 160 global, 2 local, 2 upcast
// grid [160, 1, 1], block [2, 1, 1]; 4480 FLOP, 5120 bytes per launch
// method: hc; opts: [UPCAST(2,0), LOCAL(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(2, 1, 1))) void E_160_2_2(__global float *restrict data0, __global const float *restrict data1, __global const ushort *restrict data2, __global const float *restrict data3) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
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
