// E_20_32 — kernel 6 of attention.fdsl, launched 1 time per forward
// DSL: attention.fdsl:9:14
// arguments:
//   p_out  out bf16[1,20,32] out
//   p_tmp1 in  bf16[1,2,20,16] (temporary)
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 20 global, 32 global
// grid [32, 20, 1], block [1, 1, 1]; 0 FLOP, 2560 bytes per launch
// method: raw; opts: []; measured: not timed

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void E_20_32(__global ushort *restrict p_out, __global const ushort *restrict p_tmp1) {
  int gidx0 = get_group_id(1);
  int gidx1 = get_group_id(0);
  float val0 = ld_bf16(p_tmp1, gidx0*16+(gidx1/16)*320+(gidx1%16));
  st_bf16(p_out, gidx0*32+gidx1, val0);
}
