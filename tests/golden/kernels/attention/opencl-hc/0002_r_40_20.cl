// r_5_2_5_4_4 — kernel 2 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,1] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
// full shape before opts: [40 | 20]  (output axes | reduce axes) (r_40_20)
// axes after opts: 5 global, 2 local, 5 reduce, 4 reduce-vector, 4 upcast
// grid [5, 1, 1], block [2, 1, 1]; 800 FLOP, 3360 bytes per launch
// method: hc; opts: [RVEC(0,4), UPCAST(0,4), LOCAL(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(2, 1, 1))) void r_5_2_5_4_4(__global float *restrict p_out, __global const float *restrict p_tmp1) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
  float4 acc0 = (float4)((-INFINITY));
  float4 acc1 = (float4)((-INFINITY));
  float4 acc2 = (float4)((-INFINITY));
  float4 acc3 = (float4)((-INFINITY));
  for (int ridx0 = 0; ridx0 < 5; ridx0++) {
    float4 val0 = ld_f32x4(p_tmp1, gidx0*160+lidx0*80+ridx0*4);
    acc0 = fmax(acc0, (float4)(val0));
    float4 val1 = ld_f32x4(p_tmp1, gidx0*160+lidx0*80+ridx0*4+20);
    acc1 = fmax(acc1, (float4)(val1));
    float4 val2 = ld_f32x4(p_tmp1, gidx0*160+lidx0*80+ridx0*4+40);
    acc2 = fmax(acc2, (float4)(val2));
    float4 val3 = ld_f32x4(p_tmp1, gidx0*160+lidx0*80+ridx0*4+60);
    acc3 = fmax(acc3, (float4)(val3));
  }
  float lane4 = acc0.s0;
  float lane5 = acc0.s1;
  float alu6 = fmax(lane4, lane5);
  float lane7 = acc0.s2;
  float alu8 = fmax(alu6, lane7);
  float lane9 = acc0.s3;
  float alu10 = fmax(alu8, lane9);
  float lane11 = acc1.s0;
  float lane12 = acc1.s1;
  float alu13 = fmax(lane11, lane12);
  float lane14 = acc1.s2;
  float alu15 = fmax(alu13, lane14);
  float lane16 = acc1.s3;
  float alu17 = fmax(alu15, lane16);
  float lane18 = acc2.s0;
  float lane19 = acc2.s1;
  float alu20 = fmax(lane18, lane19);
  float lane21 = acc2.s2;
  float alu22 = fmax(alu20, lane21);
  float lane23 = acc2.s3;
  float alu24 = fmax(alu22, lane23);
  float lane25 = acc3.s0;
  float lane26 = acc3.s1;
  float alu27 = fmax(lane25, lane26);
  float lane28 = acc3.s2;
  float alu29 = fmax(alu27, lane28);
  float lane30 = acc3.s3;
  float alu31 = fmax(alu29, lane30);
  st_f32(p_out, gidx0*8+lidx0*4, alu10);
  st_f32(p_out, gidx0*8+lidx0*4+1, alu17);
  st_f32(p_out, gidx0*8+lidx0*4+2, alu24);
  st_f32(p_out, gidx0*8+lidx0*4+3, alu31);
}
