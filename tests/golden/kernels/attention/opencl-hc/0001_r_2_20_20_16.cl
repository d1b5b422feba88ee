// r_5_5_2_4_2_8_4 — kernel 1 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out f32[1,2,20,20] (temporary)
//   p_tmp1 in  f32[1,2,20,8,2] (temporary)
//   p_tmp2 in  f32[1,2,20,8,2] (temporary)
// full shape before opts: [2, 20, 20 | 16]  (output axes | reduce axes) (r_2_20_20_16)
// axes after opts: 5 global, 5 global, 2 local, 4 local, 2 reduce, 8 reduce-vector, 4 upcast
// grid [5, 5, 1], block [4, 2, 1]; 26400 FLOP, 8320 bytes per launch
// method: hc; opts: [RVEC(0,8), UPCAST(2,4), LOCAL(1,4), LOCAL(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(4, 2, 1))) void r_5_5_2_4_2_8_4(__global float *restrict p_out, __global const float *restrict p_tmp1, __global const float *restrict p_tmp2) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
  int lidx0 = get_local_id(1);
  int lidx1 = get_local_id(0);
  float cst0 = 4.0f;
  float8 acc0 = (float8)(0.0f);
  float8 acc1 = (float8)(0.0f);
  float8 acc2 = (float8)(0.0f);
  float8 acc3 = (float8)(0.0f);
  for (int ridx0 = 0; ridx0 < 2; ridx0++) {
    float8 val1 = ld_f32x8(p_tmp1, gidx0*64+lidx0*320+lidx1*16+ridx0*8);
    float8 alu2 = rnd_bf16x8(val1);
    float8 val3 = ld_f32x8(p_tmp2, gidx1*64+lidx0*320+ridx0*8);
    float8 alu4 = rnd_bf16x8(val3);
    acc0 += alu2 * alu4;
    float8 val6 = ld_f32x8(p_tmp2, gidx1*64+lidx0*320+ridx0*8+16);
    float8 alu7 = rnd_bf16x8(val6);
    acc1 += alu2 * alu7;
    float8 val9 = ld_f32x8(p_tmp2, gidx1*64+lidx0*320+ridx0*8+32);
    float8 alu10 = rnd_bf16x8(val9);
    acc2 += alu2 * alu10;
    float8 val12 = ld_f32x8(p_tmp2, gidx1*64+lidx0*320+ridx0*8+48);
    float8 alu13 = rnd_bf16x8(val12);
    acc3 += alu2 * alu13;
  }
  float lane15 = acc0.s0;
  float lane16 = acc0.s1;
  float alu17 = lane15 + lane16;
  float lane18 = acc0.s2;
  float alu19 = alu17 + lane18;
  float lane20 = acc0.s3;
  float alu21 = alu19 + lane20;
  float lane22 = acc0.s4;
  float alu23 = alu21 + lane22;
  float lane24 = acc0.s5;
  float alu25 = alu23 + lane24;
  float lane26 = acc0.s6;
  float alu27 = alu25 + lane26;
  float lane28 = acc0.s7;
  float alu29 = alu27 + lane28;
  float lane30 = acc1.s0;
  float lane31 = acc1.s1;
  float alu32 = lane30 + lane31;
  float lane33 = acc1.s2;
  float alu34 = alu32 + lane33;
  float lane35 = acc1.s3;
  float alu36 = alu34 + lane35;
  float lane37 = acc1.s4;
  float alu38 = alu36 + lane37;
  float lane39 = acc1.s5;
  float alu40 = alu38 + lane39;
  float lane41 = acc1.s6;
  float alu42 = alu40 + lane41;
  float lane43 = acc1.s7;
  float alu44 = alu42 + lane43;
  float lane45 = acc2.s0;
  float lane46 = acc2.s1;
  float alu47 = lane45 + lane46;
  float lane48 = acc2.s2;
  float alu49 = alu47 + lane48;
  float lane50 = acc2.s3;
  float alu51 = alu49 + lane50;
  float lane52 = acc2.s4;
  float alu53 = alu51 + lane52;
  float lane54 = acc2.s5;
  float alu55 = alu53 + lane54;
  float lane56 = acc2.s6;
  float alu57 = alu55 + lane56;
  float lane58 = acc2.s7;
  float alu59 = alu57 + lane58;
  float lane60 = acc3.s0;
  float lane61 = acc3.s1;
  float alu62 = lane60 + lane61;
  float lane63 = acc3.s2;
  float alu64 = alu62 + lane63;
  float lane65 = acc3.s3;
  float alu66 = alu64 + lane65;
  float lane67 = acc3.s4;
  float alu68 = alu66 + lane67;
  float lane69 = acc3.s5;
  float alu70 = alu68 + lane69;
  float lane71 = acc3.s6;
  float alu72 = alu70 + lane71;
  float lane73 = acc3.s7;
  float alu74 = alu72 + lane73;
  float alu75 = alu29 / cst0;
  st_f32(p_out, gidx0*80+gidx1*4+lidx0*400+lidx1*20, alu75);
  float alu76 = alu44 / cst0;
  st_f32(p_out, gidx0*80+gidx1*4+lidx0*400+lidx1*20+1, alu76);
  float alu77 = alu59 / cst0;
  st_f32(p_out, gidx0*80+gidx1*4+lidx0*400+lidx1*20+2, alu77);
  float alu78 = alu74 / cst0;
  st_f32(p_out, gidx0*80+gidx1*4+lidx0*400+lidx1*20+3, alu78);
}
