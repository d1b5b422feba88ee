// r_4_4_16_2 — kernel 0 of layer_norm.fdsl, launched 1 time per forward
// DSL: layer_norm.fdsl:5:30
// arguments:
//   p_out out f32[1,8,1] (temporary)
//   p_x   in  bf16[1,8,64] x
// full shape before opts: [8 | 64]  (output axes | reduce axes) (r_8_64)
// axes after opts: 4 global, 4 reduce, 16 reduce-vector, 2 upcast
// grid [4, 1, 1], block [1, 1, 1]; 520 FLOP, 1056 bytes per launch
// method: beam; opts: [RVEC(0,16), UPCAST(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_4_4_16_2(__global float *restrict p_out, __global const ushort *restrict p_x) {
  int gidx0 = get_group_id(0);
  float cst0 = 64.0f;
  float16 acc0 = (float16)(0.0f);
  float16 acc1 = (float16)(0.0f);
  for (int ridx0 = 0; ridx0 < 4; ridx0++) {
    float16 val1 = ld_bf16x16(p_x, gidx0*128+ridx0*16);
    acc0 += val1;
    float16 val2 = ld_bf16x16(p_x, gidx0*128+ridx0*16+64);
    acc1 += val2;
  }
  float lane3 = acc0.s0;
  float lane4 = acc0.s1;
  float alu5 = lane3 + lane4;
  float lane6 = acc0.s2;
  float alu7 = alu5 + lane6;
  float lane8 = acc0.s3;
  float alu9 = alu7 + lane8;
  float lane10 = acc0.s4;
  float alu11 = alu9 + lane10;
  float lane12 = acc0.s5;
  float alu13 = alu11 + lane12;
  float lane14 = acc0.s6;
  float alu15 = alu13 + lane14;
  float lane16 = acc0.s7;
  float alu17 = alu15 + lane16;
  float lane18 = acc0.s8;
  float alu19 = alu17 + lane18;
  float lane20 = acc0.s9;
  float alu21 = alu19 + lane20;
  float lane22 = acc0.sa;
  float alu23 = alu21 + lane22;
  float lane24 = acc0.sb;
  float alu25 = alu23 + lane24;
  float lane26 = acc0.sc;
  float alu27 = alu25 + lane26;
  float lane28 = acc0.sd;
  float alu29 = alu27 + lane28;
  float lane30 = acc0.se;
  float alu31 = alu29 + lane30;
  float lane32 = acc0.sf;
  float alu33 = alu31 + lane32;
  float lane34 = acc1.s0;
  float lane35 = acc1.s1;
  float alu36 = lane34 + lane35;
  float lane37 = acc1.s2;
  float alu38 = alu36 + lane37;
  float lane39 = acc1.s3;
  float alu40 = alu38 + lane39;
  float lane41 = acc1.s4;
  float alu42 = alu40 + lane41;
  float lane43 = acc1.s5;
  float alu44 = alu42 + lane43;
  float lane45 = acc1.s6;
  float alu46 = alu44 + lane45;
  float lane47 = acc1.s7;
  float alu48 = alu46 + lane47;
  float lane49 = acc1.s8;
  float alu50 = alu48 + lane49;
  float lane51 = acc1.s9;
  float alu52 = alu50 + lane51;
  float lane53 = acc1.sa;
  float alu54 = alu52 + lane53;
  float lane55 = acc1.sb;
  float alu56 = alu54 + lane55;
  float lane57 = acc1.sc;
  float alu58 = alu56 + lane57;
  float lane59 = acc1.sd;
  float alu60 = alu58 + lane59;
  float lane61 = acc1.se;
  float alu62 = alu60 + lane61;
  float lane63 = acc1.sf;
  float alu64 = alu62 + lane63;
  float alu65 = alu33 / cst0;
  st_f32(p_out, gidx0*2, alu65);
  float alu66 = alu64 / cst0;
  st_f32(p_out, gidx0*2+1, alu66);
}
