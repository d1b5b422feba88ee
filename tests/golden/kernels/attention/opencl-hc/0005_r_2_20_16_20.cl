// r_5_2_20_4_16 — kernel 5 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,2,20,16] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_v    in  bf16[1,2,20,16] v
// full shape before opts: [2, 20, 16 | 20]  (output axes | reduce axes) (r_2_20_16_20)
// axes after opts: 5 global, 2 local, 20 reduce, 4 upcast, 16 vector
// grid [5, 1, 1], block [2, 1, 1]; 25600 FLOP, 5760 bytes per launch
// method: hc; opts: [VEC(2,16), UPCAST(1,4), LOCAL(0,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(2, 1, 1))) void r_5_2_20_4_16(__global ushort *restrict p_out, __global const float *restrict p_tmp1, __global const ushort *restrict p_v) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
  float16 acc0 = (float16)(0.0f);
  float16 acc1 = (float16)(0.0f);
  float16 acc2 = (float16)(0.0f);
  float16 acc3 = (float16)(0.0f);
  for (int ridx0 = 0; ridx0 < 20; ridx0++) {
    float val0 = ld_f32(p_tmp1, gidx0*80+lidx0*400+ridx0);
    float alu1 = rnd_bf16(val0);
    float16 val2 = ld_bf16x16(p_v, lidx0*320+ridx0*16);
    acc0 += alu1 * val2;
    float val4 = ld_f32(p_tmp1, gidx0*80+lidx0*400+ridx0+20);
    float alu5 = rnd_bf16(val4);
    acc1 += alu5 * val2;
    float val7 = ld_f32(p_tmp1, gidx0*80+lidx0*400+ridx0+40);
    float alu8 = rnd_bf16(val7);
    acc2 += alu8 * val2;
    float val10 = ld_f32(p_tmp1, gidx0*80+lidx0*400+ridx0+60);
    float alu11 = rnd_bf16(val10);
    acc3 += alu11 * val2;
  }
  float16 alu13 = rnd_bf16x16(acc0);
  st_bf16x16(p_out, gidx0*64+lidx0*320, alu13);
  float16 alu14 = rnd_bf16x16(acc1);
  st_bf16x16(p_out, gidx0*64+lidx0*320+16, alu14);
  float16 alu15 = rnd_bf16x16(acc2);
  st_bf16x16(p_out, gidx0*64+lidx0*320+32, alu15);
  float16 alu16 = rnd_bf16x16(acc3);
  st_bf16x16(p_out, gidx0*64+lidx0*320+48, alu16);
}
