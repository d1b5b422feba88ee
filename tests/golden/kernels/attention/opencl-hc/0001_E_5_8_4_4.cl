// E_5_8_4_4 — kernel 1 of attention.fdsl, launched 1 time per forward
// project 5b576a051c38cae4: the runtime refuses kernel files of another compile
// DSL: attention.fdsl:9:14
// full shape before opts: [20, 32]  (output axes) (E_20_32)
// axes after opts: 5 global, 8 local, 4 local, 4 upcast
// grid [5, 1, 1], block [4, 8, 1]; 0 FLOP, 2560 bytes per launch
// method: hc; opts: [UPCAST(1,4), LOCAL(0,4), LOCAL(1,8)]; measured: not timed

__kernel __attribute__((reqd_work_group_size(4, 8, 1))) void E_5_8_4_4(__global ushort *restrict data0, __global const ushort *restrict data1) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(1);
  int lidx1 = get_local_id(0);
  float val0 = ld_bf16(data1, gidx0*64+lidx1*16+((lidx0*4)%16)+((lidx0*4)/16)*320);
  float val1 = ld_bf16(data1, gidx0*64+lidx1*16+((lidx0*4+1)%16)+((lidx0*4+1)/16)*320);
  float val2 = ld_bf16(data1, gidx0*64+lidx1*16+((lidx0*4+2)%16)+((lidx0*4+2)/16)*320);
  float val3 = ld_bf16(data1, gidx0*64+lidx1*16+((lidx0*4+3)%16)+((lidx0*4+3)/16)*320);
  st_bf16(data0, gidx0*128+lidx1*32+lidx0*4, val0);
  st_bf16(data0, gidx0*128+lidx1*32+lidx0*4+1, val1);
  st_bf16(data0, gidx0*128+lidx1*32+lidx0*4+2, val2);
  st_bf16(data0, gidx0*128+lidx1*32+lidx0*4+3, val3);
}
