// r_4_4_16_2n1 — kernel 1 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:30
// arguments:
//   p_out  out f32[1,8,1] (temporary)
//   p_x    in  bf16[1,8,64] x
//   p_tmp2 in  f32[1,8,1] (temporary)
// full shape before opts: [8 | 64]  (output axes | reduce axes) (r_8_64)
// axes after opts: 4 global, 4 reduce, 16 reduce-vector, 2 upcast
// grid [4, 1, 1], block [1, 1, 1]; 1568 FLOP, 1088 bytes per launch
// method: beam; opts: [RVEC(0,16), UPCAST(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_4_4_16_2n1(__global float *restrict p_out, __global const ushort *restrict p_x, __global const float *restrict p_tmp2) {
  int gidx0 = get_group_id(0);
  float val0 = ld_f32(p_tmp2, gidx0*2);
  float cst1 = 64.0f;
  float cst2 = 9.99999997e-07f;
  float val3 = ld_f32(p_tmp2, gidx0*2+1);
  float16 acc0 = (float16)(0.0f);
  float16 acc1 = (float16)(0.0f);
  for (int ridx0 = 0; ridx0 < 4; ridx0++) {
    float16 val4 = ld_bf16x16(p_x, gidx0*128+ridx0*16);
    float16 alu5 = val4 - val0;
    acc0 += alu5 * alu5;
    float16 val7 = ld_bf16x16(p_x, gidx0*128+ridx0*16+64);
    float16 alu8 = val7 - val3;
    acc1 += alu8 * alu8;
  }
  float lane10 = acc0.s0;
  float lane11 = acc0.s1;
  float alu12 = lane10 + lane11;
  float lane13 = acc0.s2;
  float alu14 = alu12 + lane13;
  float lane15 = acc0.s3;
  float alu16 = alu14 + lane15;
  float lane17 = acc0.s4;
  float alu18 = alu16 + lane17;
  float lane19 = acc0.s5;
  float alu20 = alu18 + lane19;
  float lane21 = acc0.s6;
  float alu22 = alu20 + lane21;
  float lane23 = acc0.s7;
  float alu24 = alu22 + lane23;
  float lane25 = acc0.s8;
  float alu26 = alu24 + lane25;
  float lane27 = acc0.s9;
  float alu28 = alu26 + lane27;
  float lane29 = acc0.sa;
  float alu30 = alu28 + lane29;
  float lane31 = acc0.sb;
  float alu32 = alu30 + lane31;
  float lane33 = acc0.sc;
  float alu34 = alu32 + lane33;
  float lane35 = acc0.sd;
  float alu36 = alu34 + lane35;
  float lane37 = acc0.se;
  float alu38 = alu36 + lane37;
  float lane39 = acc0.sf;
  float alu40 = alu38 + lane39;
  float lane41 = acc1.s0;
  float lane42 = acc1.s1;
  float alu43 = lane41 + lane42;
  float lane44 = acc1.s2;
  float alu45 = alu43 + lane44;
  float lane46 = acc1.s3;
  float alu47 = alu45 + lane46;
  float lane48 = acc1.s4;
  float alu49 = alu47 + lane48;
  float lane50 = acc1.s5;
  float alu51 = alu49 + lane50;
  float lane52 = acc1.s6;
  float alu53 = alu51 + lane52;
  float lane54 = acc1.s7;
  float alu55 = alu53 + lane54;
  float lane56 = acc1.s8;
  float alu57 = alu55 + lane56;
  float lane58 = acc1.s9;
  float alu59 = alu57 + lane58;
  float lane60 = acc1.sa;
  float alu61 = alu59 + lane60;
  float lane62 = acc1.sb;
  float alu63 = alu61 + lane62;
  float lane64 = acc1.sc;
  float alu65 = alu63 + lane64;
  float lane66 = acc1.sd;
  float alu67 = alu65 + lane66;
  float lane68 = acc1.se;
  float alu69 = alu67 + lane68;
  float lane70 = acc1.sf;
  float alu71 = alu69 + lane70;
  float alu72 = alu40 / cst1;
  float alu73 = alu72 + cst2;
  float alu74 = sqrt(alu73);
  float alu75 = 1.0f / alu74;
  st_f32(p_out, gidx0*2, alu75);
  float alu76 = alu71 / cst1;
  float alu77 = alu76 + cst2;
  float alu78 = sqrt(alu77);
  float alu79 = 1.0f / alu78;
  st_f32(p_out, gidx0*2+1, alu79);
}
