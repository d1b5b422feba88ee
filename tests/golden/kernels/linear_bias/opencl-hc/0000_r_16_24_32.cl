// r_6_16_4_8_4 — kernel 0 of linear_bias.fdsl, launched 1 time per forward
// DSL: linear_bias.fdsl:4:14
// arguments:
//   p_out         out bf16[1,16,24] out
//   p_x           in  bf16[1,16,32] x
//   p_proj_weight in  bf16[24,32] proj.weight
//   p_proj_bias   in  bf16[24] proj.bias
// full shape before opts: [16, 24 | 32]  (output axes | reduce axes) (r_16_24_32)
// axes after opts: 6 global, 16 local, 4 reduce, 8 reduce-vector, 4 upcast
// grid [6, 1, 1], block [16, 1, 1]; 24960 FLOP, 3376 bytes per launch
// method: hc; opts: [RVEC(0,8), UPCAST(1,4), LOCAL(0,16)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(16, 1, 1))) void r_6_16_4_8_4(__global ushort *restrict p_out, __global const ushort *restrict p_x, __global const ushort *restrict p_proj_weight, __global const ushort *restrict p_proj_bias) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
  float val0 = ld_bf16(p_proj_bias, gidx0*4);
  float val1 = ld_bf16(p_proj_bias, gidx0*4+1);
  float val2 = ld_bf16(p_proj_bias, gidx0*4+2);
  float val3 = ld_bf16(p_proj_bias, gidx0*4+3);
  float8 acc0 = (float8)(0.0f);
  float8 acc1 = (float8)(0.0f);
  float8 acc2 = (float8)(0.0f);
  float8 acc3 = (float8)(0.0f);
  for (int ridx0 = 0; ridx0 < 4; ridx0++) {
    float8 val4 = ld_bf16x8(p_x, lidx0*32+ridx0*8);
    float8 val5 = ld_bf16x8(p_proj_weight, gidx0*128+ridx0*8);
    acc0 += val4 * val5;
    float8 val7 = ld_bf16x8(p_proj_weight, gidx0*128+ridx0*8+32);
    acc1 += val4 * val7;
    float8 val9 = ld_bf16x8(p_proj_weight, gidx0*128+ridx0*8+64);
    acc2 += val4 * val9;
    float8 val11 = ld_bf16x8(p_proj_weight, gidx0*128+ridx0*8+96);
    acc3 += val4 * val11;
  }
  float lane13 = acc0.s0;
  float lane14 = acc0.s1;
  float alu15 = lane13 + lane14;
  float lane16 = acc0.s2;
  float alu17 = alu15 + lane16;
  float lane18 = acc0.s3;
  float alu19 = alu17 + lane18;
  float lane20 = acc0.s4;
  float alu21 = alu19 + lane20;
  float lane22 = acc0.s5;
  float alu23 = alu21 + lane22;
  float lane24 = acc0.s6;
  float alu25 = alu23 + lane24;
  float lane26 = acc0.s7;
  float alu27 = alu25 + lane26;
  float lane28 = acc1.s0;
  float lane29 = acc1.s1;
  float alu30 = lane28 + lane29;
  float lane31 = acc1.s2;
  float alu32 = alu30 + lane31;
  float lane33 = acc1.s3;
  float alu34 = alu32 + lane33;
  float lane35 = acc1.s4;
  float alu36 = alu34 + lane35;
  float lane37 = acc1.s5;
  float alu38 = alu36 + lane37;
  float lane39 = acc1.s6;
  float alu40 = alu38 + lane39;
  float lane41 = acc1.s7;
  float alu42 = alu40 + lane41;
  float lane43 = acc2.s0;
  float lane44 = acc2.s1;
  float alu45 = lane43 + lane44;
  float lane46 = acc2.s2;
  float alu47 = alu45 + lane46;
  float lane48 = acc2.s3;
  float alu49 = alu47 + lane48;
  float lane50 = acc2.s4;
  float alu51 = alu49 + lane50;
  float lane52 = acc2.s5;
  float alu53 = alu51 + lane52;
  float lane54 = acc2.s6;
  float alu55 = alu53 + lane54;
  float lane56 = acc2.s7;
  float alu57 = alu55 + lane56;
  float lane58 = acc3.s0;
  float lane59 = acc3.s1;
  float alu60 = lane58 + lane59;
  float lane61 = acc3.s2;
  float alu62 = alu60 + lane61;
  float lane63 = acc3.s3;
  float alu64 = alu62 + lane63;
  float lane65 = acc3.s4;
  float alu66 = alu64 + lane65;
  float lane67 = acc3.s5;
  float alu68 = alu66 + lane67;
  float lane69 = acc3.s6;
  float alu70 = alu68 + lane69;
  float lane71 = acc3.s7;
  float alu72 = alu70 + lane71;
  float alu73 = alu27 + val0;
  float alu74 = rnd_bf16(alu73);
  st_bf16(p_out, gidx0*4+lidx0*24, alu74);
  float alu75 = alu42 + val1;
  float alu76 = rnd_bf16(alu75);
  st_bf16(p_out, gidx0*4+lidx0*24+1, alu76);
  float alu77 = alu57 + val2;
  float alu78 = rnd_bf16(alu77);
  st_bf16(p_out, gidx0*4+lidx0*24+2, alu78);
  float alu79 = alu72 + val3;
  float alu80 = rnd_bf16(alu79);
  st_bf16(p_out, gidx0*4+lidx0*24+3, alu80);
}
