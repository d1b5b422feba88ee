// stand_in.h — what the stand-in NVRTC (libnvrtc.c) hands to the stand-in
// driver (libcuda.cc): the "cubin" is this header followed by a shared object
// built against the CUDA emulation, whose kernel NAME is reached through
// `const void *flux_stand_in_NAME(void)` (a FluxEmuKernel, flux_emu.h).
#ifndef STAND_IN_H
#define STAND_IN_H
#include <stdbool.h>
#include <stdint.h>

#define STAND_IN_MAGIC "FXEMU01"   // 8 bytes with the NUL
#define STAND_IN_PREFIX "flux_stand_in_"

typedef struct {
  char magic[8];
  int32_t regs;                    // per thread, from the real ptxas; -1: not known
  int32_t smem;                    // static shared bytes, from ptxas; -1: read from the object
  int32_t bounds;                  // __launch_bounds__, 0 if none
  int32_t unused;
  uint64_t size;                   // bytes of the shared object that follows
} StandInImage;

#endif
