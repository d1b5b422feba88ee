// r_2_20_16_20 — kernel 5 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,2,20,16] (temporary)
//   p_tmp1 in  f32[1,2,20,20] (temporary)
//   p_v    in  bf16[1,2,20,16] v
// full shape before opts: [2, 20, 16 | 20]  (output axes | reduce axes) (r_2_20_16_20)
// axes after opts: 2 global, 20 global, 16 global, 20 reduce
// grid [16, 20, 2], block [1, 1, 1]; 25600 FLOP, 5760 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void r_2_20_16_20(__global ushort *restrict p_out, __global const float *restrict p_tmp1, __global const ushort *restrict p_v) {
  int gidx0 = get_group_id(2);
  int gidx1 = get_group_id(1);
  int gidx2 = get_group_id(0);
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 20; ridx0++) {
    float val0 = ld_f32(p_tmp1, gidx0*400+gidx1*20+ridx0);
    float alu1 = rnd_bf16(val0);
    float val2 = ld_bf16(p_v, gidx0*320+gidx2+ridx0*16);
    float alu3 = alu1 * val2;
    acc0 += alu3;
  }
  float alu4 = rnd_bf16(acc0);
  st_bf16(p_out, gidx0*320+gidx1*16+gidx2, alu4);
}
