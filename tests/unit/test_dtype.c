// test_dtype.c — bf16/f16 conversions: exact values, ties to even, specials.
#include "fluxcc.h"
#include "check.h"
#include "numbers.h"

#include <math.h>
#include <string.h>


static float fl(uint32_t u) { return nb_bits_f32(u); }
static uint32_t bits(float f) { return nb_f32_bits(f); }

int main(void) {
  // bf16: exact values survive, ties go to even, carries into the exponent
  CHECK(f32_to_bf16(1.0f) == 0x3f80, "1.0");
  CHECK(f32_to_bf16(-2.0f) == 0xc000, "-2.0");
  CHECK(f32_to_bf16(fl(0x3f808000)) == 0x3f80, "tie rounds down to even");
  CHECK(f32_to_bf16(fl(0x3f818000)) == 0x3f82, "tie rounds up to even");
  CHECK(f32_to_bf16(fl(0x3f808001)) == 0x3f81, "above the tie rounds up");
  CHECK(f32_to_bf16(fl(0x3fffffff)) == 0x4000, "carry into the exponent");
  CHECK(bf16_to_f32(f32_to_bf16(750.0f)) == 752.0f, "1000*0.75 in bf16 is 752 (flux.md)");
  CHECK(isinf(bf16_to_f32(f32_to_bf16(fl(0x7f7fffff)))), "max float overflows to inf");
  CHECK(isnan(bf16_to_f32(f32_to_bf16(NAN))), "NaN stays NaN");
  CHECK(isnan(bf16_to_f32(f32_to_bf16(fl(0x7f800001)))), "signalling NaN stays NaN");
  // f16
  CHECK(f32_to_f16(1.0f) == 0x3c00, "f16 1.0");
  CHECK(f32_to_f16(65504.0f) == 0x7bff, "f16 max");
  CHECK(f32_to_f16(65519.0f) == 0x7bff, "f16 below the overflow threshold");
  CHECK(f32_to_f16(65520.0f) == 0x7c00, "f16 overflow to inf");
  CHECK(f32_to_f16(0x1p-24f) == 0x0001, "f16 smallest subnormal");
  CHECK(f32_to_f16(0x1p-25f) == 0x0000, "f16 half the smallest subnormal ties to zero");
  CHECK(f32_to_f16(0x1.8p-24f) == 0x0002, "f16 1.5 subnormal ulps ties to even (2)");
  CHECK(f32_to_f16(fl(0x3f801000)) == 0x3c00, "f16 tie to even (down)");
  CHECK(f32_to_f16(fl(0x3f803000)) == 0x3c02, "f16 tie to even (up)");
  CHECK(f32_to_f16(-0.0f) == 0x8000, "f16 negative zero");
  CHECK(isnan(f16_to_f32(f32_to_f16(NAN))), "f16 NaN");
  // every f16 value round-trips through f32
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = f16_to_f32((uint16_t)h);
    if (!isnan(f) && f32_to_f16(f) != h) bad++;
  }
  CHECK(bad == 0, "%d f16 values do not round-trip", bad);
  // every bf16 value round-trips
  bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = bf16_to_f32((uint16_t)h);
    if (!isnan(f) && f32_to_bf16(f) != h) bad++;
  }
  CHECK(bad == 0, "%d bf16 values do not round-trip", bad);
  // dtype_round agrees with the bit conversions
  CHECK(dtype_round(DT_BF16, 1.00390625) == 1.0, "dtype_round bf16 tie");
  CHECK(dtype_round(DT_F32, 0.1) == (double)0.1f, "dtype_round f32");
  CHECK(bits((float)dtype_round(DT_F16, 1e-8)) == 0, "dtype_round f16 underflow");
  unsigned char buf[8];
  dtype_store(DT_BF16, buf, 1, 3.0);
  CHECK(dtype_load(DT_BF16, buf, 1) == 3.0, "store/load bf16");
  dtype_store(DT_F32, buf, 1, -0.5);
  CHECK(dtype_load(DT_F32, buf, 1) == -0.5, "store/load f32");
  return CHECK_DONE();
}
