// sampler.h — the rectified-flow sampler of BFL's sampling code (flux.sampling), for
// `./flux --steps N`: the timestep schedule and the rounding of the Euler
// update, in the arithmetic the official code does them (float32 tensors; a
// bf16 or f16 latent is rounded after each tensor op, as torch stores it).
// Header-only: sample.c runs the model and the update.
#ifndef SAMPLER_H
#define SAMPLER_H

#include "flux_rt.h"
#include "numbers.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define SMP_MAX_STEPS 1000

// get_schedule(steps, tokens, shift): torch.linspace(1, 0, steps + 1) in
// float32 (its halves from each end, as ATen computes it); with shift (dev),
// time_shift(mu, 1, t) = e^mu / (e^mu + (1/t - 1)), float32 tensor ops with mu
// linear in the image tokens through (256, 0.5) and (4096, 1.15). t[0..steps].
static inline void smp_schedule(int steps, int shift, int64_t tokens, double *t) {
  int64_t points = steps + 1, halfway = points / 2;
  float step = (0.0f - 1.0f) / (float)(points - 1);
  double m = (1.15 - 0.5) / (4096.0 - 256.0), mu = m * (double)tokens + (0.5 - m * 256.0);
  float e = (float)exp(mu);
  for (int64_t i = 0; i < points; i++) {
    float v = i < halfway ? 1.0f + step * (float)i : 0.0f - step * (float)(points - i - 1);
    if (shift) v = e / (e + (1.0f / v - 1.0f));  // t = 0: 1/t is inf, and so 0
    t[i] = v;
  }
}

// x rounded to dtype dt (RT_F32, RT_BF16 or RT_F16), as torch stores a tensor op's result
static inline float smp_round(int dt, float x) {
  if (dt == RT_BF16) return bf16_to_f32(f32_to_bf16(x));
  if (dt == RT_F16) return f16_to_f32(f32_to_f16(x));
  return x;
}

#endif
