// r_10_5_4_4 — kernel 2 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,1] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
// full shape before opts: [40 | 20]  (output axes | reduce axes) (r_40_20)
// axes after opts: 10 global, 5 reduce, 4 reduce-vector, 4 upcast
// grid [10, 1, 1], block [1, 1, 1]; 800 FLOP, 3360 bytes per launch
// method: hc; opts: [RVEC(0,4), UPCAST(0,4)]; measured: not timed
#include "../kernel_prelude.h"

void r_10_5_4_4(float *restrict p_out, const float *restrict p_tmp1) {
  #pragma omp parallel for collapse(1) schedule(static)
  for (int gx = 0; gx < 10; gx++)
  {
    int gidx0 = gx;
    float acc0_0 = (-INFINITY);
    float acc0_1 = (-INFINITY);
    float acc0_2 = (-INFINITY);
    float acc0_3 = (-INFINITY);
    float acc1_0 = (-INFINITY);
    float acc1_1 = (-INFINITY);
    float acc1_2 = (-INFINITY);
    float acc1_3 = (-INFINITY);
    float acc2_0 = (-INFINITY);
    float acc2_1 = (-INFINITY);
    float acc2_2 = (-INFINITY);
    float acc2_3 = (-INFINITY);
    float acc3_0 = (-INFINITY);
    float acc3_1 = (-INFINITY);
    float acc3_2 = (-INFINITY);
    float acc3_3 = (-INFINITY);
    for (int ridx0 = 0; ridx0 < 5; ridx0++) {
      float val0_0 = ld_f32(p_tmp1, gidx0*80+ridx0*4);
      float val0_1 = ld_f32(p_tmp1, gidx0*80+ridx0*4+1);
      float val0_2 = ld_f32(p_tmp1, gidx0*80+ridx0*4+2);
      float val0_3 = ld_f32(p_tmp1, gidx0*80+ridx0*4+3);
      acc0_0 = fmaxf(acc0_0, val0_0);
      acc0_1 = fmaxf(acc0_1, val0_1);
      acc0_2 = fmaxf(acc0_2, val0_2);
      acc0_3 = fmaxf(acc0_3, val0_3);
      float val1_0 = ld_f32(p_tmp1, gidx0*80+ridx0*4+20);
      float val1_1 = ld_f32(p_tmp1, gidx0*80+ridx0*4+20+1);
      float val1_2 = ld_f32(p_tmp1, gidx0*80+ridx0*4+20+2);
      float val1_3 = ld_f32(p_tmp1, gidx0*80+ridx0*4+20+3);
      acc1_0 = fmaxf(acc1_0, val1_0);
      acc1_1 = fmaxf(acc1_1, val1_1);
      acc1_2 = fmaxf(acc1_2, val1_2);
      acc1_3 = fmaxf(acc1_3, val1_3);
      float val2_0 = ld_f32(p_tmp1, gidx0*80+ridx0*4+40);
      float val2_1 = ld_f32(p_tmp1, gidx0*80+ridx0*4+40+1);
      float val2_2 = ld_f32(p_tmp1, gidx0*80+ridx0*4+40+2);
      float val2_3 = ld_f32(p_tmp1, gidx0*80+ridx0*4+40+3);
      acc2_0 = fmaxf(acc2_0, val2_0);
      acc2_1 = fmaxf(acc2_1, val2_1);
      acc2_2 = fmaxf(acc2_2, val2_2);
      acc2_3 = fmaxf(acc2_3, val2_3);
      float val3_0 = ld_f32(p_tmp1, gidx0*80+ridx0*4+60);
      float val3_1 = ld_f32(p_tmp1, gidx0*80+ridx0*4+60+1);
      float val3_2 = ld_f32(p_tmp1, gidx0*80+ridx0*4+60+2);
      float val3_3 = ld_f32(p_tmp1, gidx0*80+ridx0*4+60+3);
      acc3_0 = fmaxf(acc3_0, val3_0);
      acc3_1 = fmaxf(acc3_1, val3_1);
      acc3_2 = fmaxf(acc3_2, val3_2);
      acc3_3 = fmaxf(acc3_3, val3_3);
    }
    float lane4 = acc0_0;
    float lane5 = acc0_1;
    float alu6 = fmaxf(lane4, lane5);
    float lane7 = acc0_2;
    float alu8 = fmaxf(alu6, lane7);
    float lane9 = acc0_3;
    float alu10 = fmaxf(alu8, lane9);
    float lane11 = acc1_0;
    float lane12 = acc1_1;
    float alu13 = fmaxf(lane11, lane12);
    float lane14 = acc1_2;
    float alu15 = fmaxf(alu13, lane14);
    float lane16 = acc1_3;
    float alu17 = fmaxf(alu15, lane16);
    float lane18 = acc2_0;
    float lane19 = acc2_1;
    float alu20 = fmaxf(lane18, lane19);
    float lane21 = acc2_2;
    float alu22 = fmaxf(alu20, lane21);
    float lane23 = acc2_3;
    float alu24 = fmaxf(alu22, lane23);
    float lane25 = acc3_0;
    float lane26 = acc3_1;
    float alu27 = fmaxf(lane25, lane26);
    float lane28 = acc3_2;
    float alu29 = fmaxf(alu27, lane28);
    float lane30 = acc3_3;
    float alu31 = fmaxf(alu29, lane30);
    st_f32(p_out, gidx0*4, alu10);
    st_f32(p_out, gidx0*4+1, alu17);
    st_f32(p_out, gidx0*4+2, alu24);
    st_f32(p_out, gidx0*4+3, alu31);
  }
}

void r_10_5_4_4_launch(void *const *args) { r_10_5_4_4(args[0], args[1]); }
