// E_10_2_2_16 — kernel 0 of attention.fdsl, launched 2 times per forward
// DSL: attention.fdsl:9:14
// arguments (the buffers of its first launch):
//   p_out out f32[1,2,20,8,2] (temporary)
//   p_c   in  f32[1,1,20,8] c
//   p_in2 in  bf16[1,2,20,16] q
//   p_s   in  f32[1,1,20,8] s
// full shape before opts: [2, 160, 2]  (output axes) (E_2_160_2)
// axes after opts: 10 global, 2 local, 2 upcast, 16 vector
// grid [10, 1, 1], block [2, 1, 1]; 4480 FLOP, 5120 bytes per launch
// method: hc; opts: [UPCAST(2,0), VEC(1,16), LOCAL(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(2, 1, 1))) void E_10_2_2_16(__global float *restrict p_out, __global const float *restrict p_c, __global const ushort *restrict p_in2, __global const float *restrict p_s) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
  float16 val0 = ld_f32x16(p_c, gidx0*16);
  float val1 = ld_bf16(p_in2, gidx0*32+lidx0*320);
  float val2 = ld_bf16(p_in2, gidx0*32+lidx0*320+2);
  float val3 = ld_bf16(p_in2, gidx0*32+lidx0*320+4);
  float val4 = ld_bf16(p_in2, gidx0*32+lidx0*320+6);
  float val5 = ld_bf16(p_in2, gidx0*32+lidx0*320+8);
  float val6 = ld_bf16(p_in2, gidx0*32+lidx0*320+10);
  float val7 = ld_bf16(p_in2, gidx0*32+lidx0*320+12);
  float val8 = ld_bf16(p_in2, gidx0*32+lidx0*320+14);
  float val9 = ld_bf16(p_in2, gidx0*32+lidx0*320+16);
  float val10 = ld_bf16(p_in2, gidx0*32+lidx0*320+18);
  float val11 = ld_bf16(p_in2, gidx0*32+lidx0*320+20);
  float val12 = ld_bf16(p_in2, gidx0*32+lidx0*320+22);
  float val13 = ld_bf16(p_in2, gidx0*32+lidx0*320+24);
  float val14 = ld_bf16(p_in2, gidx0*32+lidx0*320+26);
  float val15 = ld_bf16(p_in2, gidx0*32+lidx0*320+28);
  float val16 = ld_bf16(p_in2, gidx0*32+lidx0*320+30);
  float16 vec17 = (float16)(val1, val2, val3, val4, val5, val6, val7, val8, val9, val10, val11, val12, val13, val14, val15, val16);
  float16 alu18 = val0 * vec17;
  float16 val19 = ld_f32x16(p_s, gidx0*16);
  float val20 = ld_bf16(p_in2, gidx0*32+lidx0*320+1);
  float val21 = ld_bf16(p_in2, gidx0*32+lidx0*320+3);
  float val22 = ld_bf16(p_in2, gidx0*32+lidx0*320+5);
  float val23 = ld_bf16(p_in2, gidx0*32+lidx0*320+7);
  float val24 = ld_bf16(p_in2, gidx0*32+lidx0*320+9);
  float val25 = ld_bf16(p_in2, gidx0*32+lidx0*320+11);
  float val26 = ld_bf16(p_in2, gidx0*32+lidx0*320+13);
  float val27 = ld_bf16(p_in2, gidx0*32+lidx0*320+15);
  float val28 = ld_bf16(p_in2, gidx0*32+lidx0*320+17);
  float val29 = ld_bf16(p_in2, gidx0*32+lidx0*320+19);
  float val30 = ld_bf16(p_in2, gidx0*32+lidx0*320+21);
  float val31 = ld_bf16(p_in2, gidx0*32+lidx0*320+23);
  float val32 = ld_bf16(p_in2, gidx0*32+lidx0*320+25);
  float val33 = ld_bf16(p_in2, gidx0*32+lidx0*320+27);
  float val34 = ld_bf16(p_in2, gidx0*32+lidx0*320+29);
  float val35 = ld_bf16(p_in2, gidx0*32+lidx0*320+31);
  float16 vec36 = (float16)(val20, val21, val22, val23, val24, val25, val26, val27, val28, val29, val30, val31, val32, val33, val34, val35);
  float16 alu37 = val19 * vec36;
  float16 alu38 = alu18 - alu37;
  float cst39 = 0.0f;
  float16 alu42 = alu38 + cst39;
  float16 alu44 = val19 * vec17;
  float16 alu45 = val0 * vec36;
  float16 alu46 = alu44 + alu45;
  float16 alu47 = cst39 + alu46;
  float lane48 = alu42.s0;
  st_f32(p_out, gidx0*32+lidx0*320, lane48);
  float lane49 = alu42.s1;
  st_f32(p_out, gidx0*32+lidx0*320+2, lane49);
  float lane50 = alu42.s2;
  st_f32(p_out, gidx0*32+lidx0*320+4, lane50);
  float lane51 = alu42.s3;
  st_f32(p_out, gidx0*32+lidx0*320+6, lane51);
  float lane52 = alu42.s4;
  st_f32(p_out, gidx0*32+lidx0*320+8, lane52);
  float lane53 = alu42.s5;
  st_f32(p_out, gidx0*32+lidx0*320+10, lane53);
  float lane54 = alu42.s6;
  st_f32(p_out, gidx0*32+lidx0*320+12, lane54);
  float lane55 = alu42.s7;
  st_f32(p_out, gidx0*32+lidx0*320+14, lane55);
  float lane56 = alu42.s8;
  st_f32(p_out, gidx0*32+lidx0*320+16, lane56);
  float lane57 = alu42.s9;
  st_f32(p_out, gidx0*32+lidx0*320+18, lane57);
  float lane58 = alu42.sa;
  st_f32(p_out, gidx0*32+lidx0*320+20, lane58);
  float lane59 = alu42.sb;
  st_f32(p_out, gidx0*32+lidx0*320+22, lane59);
  float lane60 = alu42.sc;
  st_f32(p_out, gidx0*32+lidx0*320+24, lane60);
  float lane61 = alu42.sd;
  st_f32(p_out, gidx0*32+lidx0*320+26, lane61);
  float lane62 = alu42.se;
  st_f32(p_out, gidx0*32+lidx0*320+28, lane62);
  float lane63 = alu42.sf;
  st_f32(p_out, gidx0*32+lidx0*320+30, lane63);
  float lane64 = alu47.s0;
  st_f32(p_out, gidx0*32+lidx0*320+1, lane64);
  float lane65 = alu47.s1;
  st_f32(p_out, gidx0*32+lidx0*320+3, lane65);
  float lane66 = alu47.s2;
  st_f32(p_out, gidx0*32+lidx0*320+5, lane66);
  float lane67 = alu47.s3;
  st_f32(p_out, gidx0*32+lidx0*320+7, lane67);
  float lane68 = alu47.s4;
  st_f32(p_out, gidx0*32+lidx0*320+9, lane68);
  float lane69 = alu47.s5;
  st_f32(p_out, gidx0*32+lidx0*320+11, lane69);
  float lane70 = alu47.s6;
  st_f32(p_out, gidx0*32+lidx0*320+13, lane70);
  float lane71 = alu47.s7;
  st_f32(p_out, gidx0*32+lidx0*320+15, lane71);
  float lane72 = alu47.s8;
  st_f32(p_out, gidx0*32+lidx0*320+17, lane72);
  float lane73 = alu47.s9;
  st_f32(p_out, gidx0*32+lidx0*320+19, lane73);
  float lane74 = alu47.sa;
  st_f32(p_out, gidx0*32+lidx0*320+21, lane74);
  float lane75 = alu47.sb;
  st_f32(p_out, gidx0*32+lidx0*320+23, lane75);
  float lane76 = alu47.sc;
  st_f32(p_out, gidx0*32+lidx0*320+25, lane76);
  float lane77 = alu47.sd;
  st_f32(p_out, gidx0*32+lidx0*320+27, lane77);
  float lane78 = alu47.se;
  st_f32(p_out, gidx0*32+lidx0*320+29, lane78);
  float lane79 = alu47.sf;
  st_f32(p_out, gidx0*32+lidx0*320+31, lane79);
}
