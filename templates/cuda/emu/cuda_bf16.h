// cuda_bf16.h for `make emu`: the CUDA emulation on the CPU (flux_emu.h).
#include "flux_emu.h"
