// E_5_4_4_8 — kernel 6 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,20,32] out
//   p_tmp1 in  bf16[1,2,20,16] (temporary)
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 5 global, 4 local, 4 upcast, 8 vector
// grid [5, 1, 1], block [4, 1, 1]; 0 FLOP, 2560 bytes per launch
// method: hc; opts: [VEC(1,8), UPCAST(1,4), LOCAL(0,4)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(4, 1, 1))) void E_5_4_4_8(__global ushort *restrict p_out, __global const ushort *restrict p_tmp1) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
  float8 val0 = ld_bf16x8(p_tmp1, gidx0*64+lidx0*16);
  float8 val1 = ld_bf16x8(p_tmp1, gidx0*64+lidx0*16+8);
  float8 val2 = ld_bf16x8(p_tmp1, gidx0*64+lidx0*16+320);
  float8 val3 = ld_bf16x8(p_tmp1, gidx0*64+lidx0*16+328);
  st_bf16x8(p_out, gidx0*128+lidx0*32, val0);
  st_bf16x8(p_out, gidx0*128+lidx0*32+8, val1);
  st_bf16x8(p_out, gidx0*128+lidx0*32+16, val2);
  st_bf16x8(p_out, gidx0*128+lidx0*32+24, val3);
}
