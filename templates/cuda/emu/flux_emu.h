// flux_emu.h — CUDA on the CPU, for `make emu` (./flux-emu).
//
// The project's very own kernels/*.cu, kernel_table.cu and backend_cuda.cu
// are compiled as C++ by the host compiler with -DFLUX_EMU -Iemu: the
// headers <cuda_runtime.h>, <cuda_bf16.h> and <cuda_fp16.h> in emu/ all
// lead here. This header supplies what that code uses of CUDA:
// - qualifiers and built-ins: __global__, __shared__ (one copy per block:
//   a block's threads are fibers on one worker thread, so a thread_local
//   static is exactly "one per block"), threadIdx, blockIdx, blockDim,
//   gridDim, __syncthreads (a real barrier between the fibers);
// - __nv_bfloat16 / __half with CUDA's conversions (round to nearest even);
// - the warp-level instructions behind kernel_prelude.cuh's helpers
//   (mma.sync, cvt.rna.tf32, cp.async) as the PTX ISA defines them;
// - the runtime API calls of backend_cuda.cu (memory, streams, events,
//   launches, graph capture and replay).
// flux_emu.cc implements it. What it does not model: speed, and whatever
// ptxas and the hardware decide (registers, occupancy, memory ordering
// beyond barriers).
#ifndef FLUX_EMU_H
#define FLUX_EMU_H

#ifndef FLUX_EMU
#define FLUX_EMU 1
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <utility>

#include "../numbers.h"

// ---------------------------------------------------------------------------
// Qualifiers

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local

// ---------------------------------------------------------------------------
// Built-in variables: those of the fiber that is running

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct FluxEmuIdx {
  uint3 thread, block;
  dim3 block_dim, grid_dim;
};
const FluxEmuIdx *flux_emu_idx();
#define threadIdx (flux_emu_idx()->thread)
#define blockIdx (flux_emu_idx()->block)
#define blockDim (flux_emu_idx()->block_dim)
#define gridDim (flux_emu_idx()->grid_dim)

// every thread of the block waits here; with FLUX_EMU_RACECHECK=1 a barrier
// that only part of the block reaches fails the launch
void flux_emu_syncthreads(const char *file, int line);
#define __syncthreads() flux_emu_syncthreads(__FILE__, __LINE__)

// ---------------------------------------------------------------------------
// 16-bit floats: storage as CUDA has it, conversions from numbers.h

struct __nv_bfloat16 {
  uint16_t x;
};
struct __half {
  uint16_t x;
};
static inline float __bfloat162float(__nv_bfloat16 h) { return bf16_to_f32(h.x); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16{f32_to_bf16(f)}; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }
static inline float __half2float(__half h) { return f16_to_f32(h.x); }
static inline __half __float2half_rn(float f) { return __half{f32_to_f16(f)}; }
static inline unsigned short __half_as_ushort(__half h) { return h.x; }

// ---------------------------------------------------------------------------
// Warp-level instructions (kernel_prelude.cuh calls these under FLUX_EMU)

// cvt.rna.tf32.f32: 10 mantissa bits, rounded to nearest, ties away from zero
static inline unsigned flux_emu_tf32(float v) {
  uint32_t u = nb_f32_bits(v);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  return u;
}

// mma.sync.aligned.{m16n8k16 bf16|f16, m16n8k8 tf32}.row.col.f32: all 32
// lanes of the warp must call it; each passes its A and B registers and its
// four accumulators, which it gets back as D = A*B + C.
enum { FLUX_EMU_BF16, FLUX_EMU_F16, FLUX_EMU_TF32 };
void flux_emu_mma(int kind, float *d0, float *d1, float *d2, float *d3, const unsigned a[4], const unsigned b[2]);

// cp.async.cg.shared.global (16 bytes), commit_group, wait_group N: a copy
// lands in shared memory only when a wait_group retires its group, the
// latest point the PTX memory model allows, so an early read sees old data.
void flux_emu_cp_async16(void *dst, const void *src, const char *what, const char *file, int line);
void flux_emu_cp_async_commit(void);
void flux_emu_cp_async_wait(int n, const char *file, int line);

// Every shared-memory access of a kernel goes through kernel_prelude.cuh's
// lds_* / sts_*, which call this first: with FLUX_EMU_RACECHECK=1 it reports
// a location that one thread writes and another reads or writes between
// the same two barriers, or that is read before any thread wrote it.
void flux_emu_shared(const void *p, int bytes, int write, const char *what, const char *file, int line);

// ---------------------------------------------------------------------------
// Kernels: kernel_table.cu lists FLUX_KERNEL(name), which here records the
// function's parameter types so a launch can call it with its arguments.

struct FluxEmuKernel {
  const char *name;
  const void *fn;
  int nargs;
  const size_t *arg_size;
  void (*call)(const void *fn, void **args);
};

template <class... A, size_t... I>
static void flux_emu_call_with(const void *fn, void **args, std::index_sequence<I...>) {
  ((void (*)(A...))fn)(*(A *)args[I]...);
}
template <class... A>
static void flux_emu_call(const void *fn, void **args) {
  flux_emu_call_with<A...>(fn, args, std::index_sequence_for<A...>{});
}
template <class... A>
static const void *flux_emu_kernel(void (*fn)(A...), const char *name) {
  static const size_t size[] = {sizeof(A)...};
  return new FluxEmuKernel{name, (const void *)fn, (int)sizeof...(A), size, flux_emu_call<A...>};
}
#define FLUX_KERNEL(f) flux_emu_kernel(f, #f)

// ---------------------------------------------------------------------------
// The runtime API, as much of it as backend_cuda.cu uses

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
};
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed };
#define cudaStreamNonBlocking 0x01u

typedef struct FluxEmuStream *cudaStream_t;
typedef struct FluxEmuEvent *cudaEvent_t;
typedef struct FluxEmuGraph *cudaGraph_t;
typedef struct FluxEmuGraph *cudaGraphExec_t;

struct cudaDeviceProp {
  char name[256];
  int major, minor;
  size_t totalGlobalMem, sharedMemPerBlock;
  int maxThreadsPerBlock, warpSize, multiProcessorCount;
};
struct cudaFuncAttributes {
  int maxThreadsPerBlock, numRegs;
  size_t sharedSizeBytes, localSizeBytes;
};

const char *cudaGetErrorName(cudaError_t e);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaGetDevice(int *dev);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev);
cudaError_t cudaRuntimeGetVersion(int *v);
cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *fn);
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s);
cudaError_t cudaMemsetAsync(void *p, int byte, size_t n, cudaStream_t s);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaLaunchKernel(const void *fn, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t s);
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphDestroy(cudaGraph_t g);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);

#endif
