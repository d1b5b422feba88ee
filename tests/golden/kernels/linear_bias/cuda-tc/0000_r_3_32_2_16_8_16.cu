// r_3_32_2_16_8_16 — kernel 0 of linear_bias.fdsl, launched 1 time per forward
// DSL: linear_bias.fdsl:4:14
// full shape before opts: [16, 24 | 32]  (output axes | reduce axes) (r_16_24_32)
// axes after opts: 3 global, 32 local, 2 reduce, 16 tc-m, 8 tc-n, 16 tc-k
// grid [3, 1, 1], block [32, 1, 1]; 24960 FLOP, 3376 bytes per launch
// method: tc; opts: [TC(0,0), STAGE(0,0)]; measured: not timed
#include "../kernel_prelude.cuh"

extern "C" __global__ void __launch_bounds__(32) r_3_32_2_16_8_16(__nv_bfloat16 *__restrict__ data0, const __nv_bfloat16 *__restrict__ data1, const __nv_bfloat16 *__restrict__ data2, const __nv_bfloat16 *__restrict__ data3) {
  int gidx0 = blockIdx.x;
  int lidx0 = threadIdx.x;
  float val0 = ld_bf16(data3, gidx0*8+(lidx0%4)*2);
  float val1 = ld_bf16(data3, gidx0*8+(lidx0%4)*2+1);
  __shared__ float tc_stage[384];
  float acc0 = 0.0f;
  float acc1 = 0.0f;
  float acc2 = 0.0f;
  float acc3 = 0.0f;
  for (int ridx0 = 0; ridx0 < 2; ridx0++) {
    float val2 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32);
    tc_stage[lidx0] = val2;
    float val3 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32+64);
    tc_stage[lidx0+32] = val3;
    float val4 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32+128);
    tc_stage[lidx0+64] = val4;
    float val5 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32+192);
    tc_stage[lidx0+96] = val5;
    float val6 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32+256);
    tc_stage[lidx0+128] = val6;
    float val7 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32+320);
    tc_stage[lidx0+160] = val7;
    float val8 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32+384);
    tc_stage[lidx0+192] = val8;
    float val9 = ld_bf16(data1, ridx0*16+(lidx0%16)+(lidx0/16)*32+448);
    tc_stage[lidx0+224] = val9;
    float val10 = ld_bf16(data2, gidx0*256+ridx0*16+(lidx0%16)+(lidx0/16)*32);
    tc_stage[lidx0+256] = val10;
    float val11 = ld_bf16(data2, gidx0*256+ridx0*16+(lidx0%16)+(lidx0/16)*32+64);
    tc_stage[lidx0+288] = val11;
    float val12 = ld_bf16(data2, gidx0*256+ridx0*16+(lidx0%16)+(lidx0/16)*32+128);
    tc_stage[lidx0+320] = val12;
    float val13 = ld_bf16(data2, gidx0*256+ridx0*16+(lidx0%16)+(lidx0/16)*32+192);
    tc_stage[lidx0+352] = val13;
    __syncthreads();
    float frg14 = tc_stage[(lidx0/4)*16+(lidx0%4)*2];
    float frg15 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+1];
    float frg16 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+128];
    float frg17 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+129];
    float frg18 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+8];
    float frg19 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+9];
    float frg20 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+136];
    float frg21 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+137];
    float frg22 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+256];
    float frg23 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+257];
    float frg24 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+264];
    float frg25 = tc_stage[(lidx0/4)*16+(lidx0%4)*2+265];
    {  // mma.sync m16n8k16: A row-major 16x16, B column-major 16x8, C 16x8 f32
      unsigned a0 = pk_bf16(frg14, frg15), a1 = pk_bf16(frg16, frg17), a2 = pk_bf16(frg18, frg19), a3 = pk_bf16(frg20, frg21);
      unsigned b0 = pk_bf16(frg22, frg23), b1 = pk_bf16(frg24, frg25);
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
          : "+f"(acc0), "+f"(acc1), "+f"(acc2), "+f"(acc3)
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    __syncthreads();
  }
  float alu26 = acc0 + val0;
  float alu27 = rnd_bf16(alu26);
  st_bf16(data0, gidx0*8+(lidx0/4)*24+(lidx0%4)*2, alu27);
  float alu28 = acc1 + val1;
  float alu29 = rnd_bf16(alu28);
  st_bf16(data0, gidx0*8+(lidx0/4)*24+(lidx0%4)*2+1, alu29);
  float alu30 = acc2 + val0;
  float alu31 = rnd_bf16(alu30);
  st_bf16(data0, gidx0*8+(lidx0/4)*24+(lidx0%4)*2+192, alu31);
  float alu32 = acc3 + val1;
  float alu33 = rnd_bf16(alu32);
  st_bf16(data0, gidx0*8+(lidx0/4)*24+(lidx0%4)*2+193, alu33);
}
