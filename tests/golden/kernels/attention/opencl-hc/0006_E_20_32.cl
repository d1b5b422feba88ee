// E_5_2_4_16 — kernel 6 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,20,32] out
//   p_tmp1 in  bf16[1,2,20,16] (temporary)
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 5 global, 2 local, 4 local, 16 vector
// grid [5, 1, 1], block [4, 2, 1]; 0 FLOP, 2560 bytes per launch
// method: hc; opts: [VEC(1,16), LOCAL(0,4), LOCAL(1,2)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(4, 2, 1))) void E_5_2_4_16(__global ushort *restrict p_out, __global const ushort *restrict p_tmp1) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(1);
  int lidx1 = get_local_id(0);
  float16 val0 = ld_bf16x16(p_tmp1, gidx0*64+lidx0*320+lidx1*16);
  st_bf16x16(p_out, gidx0*128+lidx0*16+lidx1*32, val0);
}
