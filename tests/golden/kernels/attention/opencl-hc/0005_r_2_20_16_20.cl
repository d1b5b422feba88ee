// r_5_2_2_4_20_8 — kernel 5 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,2,20,16] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_v    in  bf16[1,2,20,16] v
// full shape before opts: [2, 20, 16 | 20]  (output axes | reduce axes) (r_2_20_16_20)
// axes after opts: 5 global, 2 local, 2 local, 4 local, 20 unroll, 8 vector
// grid [5, 1, 1], block [4, 2, 2]; 25600 FLOP, 5760 bytes per launch
// method: hc; opts: [VEC(2,8), UNROLL(0,0), LOCAL(1,4), LOCAL(2,2), LOCAL(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(4, 2, 2))) void r_5_2_2_4_20_8(__global ushort *restrict p_out, __global const float *restrict p_tmp1, __global const ushort *restrict p_v) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(2);
  int lidx1 = get_local_id(1);
  int lidx2 = get_local_id(0);
  float8 acc0 = (float8)(0.0f);
  float val0 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20);
  float alu1 = rnd_bf16(val0);
  float8 val2 = ld_bf16x8(p_v, lidx0*320+lidx1*8);
  acc0 += alu1 * val2;
  float val4 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+1);
  float alu5 = rnd_bf16(val4);
  float8 val6 = ld_bf16x8(p_v, lidx0*320+lidx1*8+16);
  acc0 += alu5 * val6;
  float val8 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+2);
  float alu9 = rnd_bf16(val8);
  float8 val10 = ld_bf16x8(p_v, lidx0*320+lidx1*8+32);
  acc0 += alu9 * val10;
  float val12 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+3);
  float alu13 = rnd_bf16(val12);
  float8 val14 = ld_bf16x8(p_v, lidx0*320+lidx1*8+48);
  acc0 += alu13 * val14;
  float val16 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+4);
  float alu17 = rnd_bf16(val16);
  float8 val18 = ld_bf16x8(p_v, lidx0*320+lidx1*8+64);
  acc0 += alu17 * val18;
  float val20 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+5);
  float alu21 = rnd_bf16(val20);
  float8 val22 = ld_bf16x8(p_v, lidx0*320+lidx1*8+80);
  acc0 += alu21 * val22;
  float val24 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+6);
  float alu25 = rnd_bf16(val24);
  float8 val26 = ld_bf16x8(p_v, lidx0*320+lidx1*8+96);
  acc0 += alu25 * val26;
  float val28 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+7);
  float alu29 = rnd_bf16(val28);
  float8 val30 = ld_bf16x8(p_v, lidx0*320+lidx1*8+112);
  acc0 += alu29 * val30;
  float val32 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+8);
  float alu33 = rnd_bf16(val32);
  float8 val34 = ld_bf16x8(p_v, lidx0*320+lidx1*8+128);
  acc0 += alu33 * val34;
  float val36 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+9);
  float alu37 = rnd_bf16(val36);
  float8 val38 = ld_bf16x8(p_v, lidx0*320+lidx1*8+144);
  acc0 += alu37 * val38;
  float val40 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+10);
  float alu41 = rnd_bf16(val40);
  float8 val42 = ld_bf16x8(p_v, lidx0*320+lidx1*8+160);
  acc0 += alu41 * val42;
  float val44 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+11);
  float alu45 = rnd_bf16(val44);
  float8 val46 = ld_bf16x8(p_v, lidx0*320+lidx1*8+176);
  acc0 += alu45 * val46;
  float val48 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+12);
  float alu49 = rnd_bf16(val48);
  float8 val50 = ld_bf16x8(p_v, lidx0*320+lidx1*8+192);
  acc0 += alu49 * val50;
  float val52 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+13);
  float alu53 = rnd_bf16(val52);
  float8 val54 = ld_bf16x8(p_v, lidx0*320+lidx1*8+208);
  acc0 += alu53 * val54;
  float val56 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+14);
  float alu57 = rnd_bf16(val56);
  float8 val58 = ld_bf16x8(p_v, lidx0*320+lidx1*8+224);
  acc0 += alu57 * val58;
  float val60 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+15);
  float alu61 = rnd_bf16(val60);
  float8 val62 = ld_bf16x8(p_v, lidx0*320+lidx1*8+240);
  acc0 += alu61 * val62;
  float val64 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+16);
  float alu65 = rnd_bf16(val64);
  float8 val66 = ld_bf16x8(p_v, lidx0*320+lidx1*8+256);
  acc0 += alu65 * val66;
  float val68 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+17);
  float alu69 = rnd_bf16(val68);
  float8 val70 = ld_bf16x8(p_v, lidx0*320+lidx1*8+272);
  acc0 += alu69 * val70;
  float val72 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+18);
  float alu73 = rnd_bf16(val72);
  float8 val74 = ld_bf16x8(p_v, lidx0*320+lidx1*8+288);
  acc0 += alu73 * val74;
  float val76 = ld_f32(p_tmp1, gidx0*80+lidx0*400+lidx2*20+19);
  float alu77 = rnd_bf16(val76);
  float8 val78 = ld_bf16x8(p_v, lidx0*320+lidx1*8+304);
  acc0 += alu77 * val78;
  float8 alu80 = rnd_bf16x8(acc0);
  st_bf16x8(p_out, gidx0*64+lidx0*320+lidx1*8+lidx2*16, alu80);
}
