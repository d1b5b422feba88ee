// test_stand_in.c — the CUDA stand-in (cuda-stand-in/) through the calls
// device_cuda.c makes: a kernel compiled by the stand-in NVRTC runs on the
// stand-in driver and computes what it should; the driver refuses what a GPU
// refuses, with the driver's error codes (block and grid sizes, shared
// memory, threads the registers allow, a real cubin); NVRTC's errors are real;
// a load or store outside an allocation, near or far, is
// CUDA_ERROR_ILLEGAL_ADDRESS and loses the context until it is destroyed.
// Usage: test_stand_in LIBDIR (build/cuda-stand-in/lib64)
#include "check.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../cuda-stand-in/stand_in.h"

typedef unsigned long long CUdeviceptr;
static int (*cuInit)(unsigned), (*cuDeviceGetName)(char *, int, int), (*cuDeviceGetAttribute)(int *, int, int);
static int (*cuMemAlloc_v2)(CUdeviceptr *, size_t), (*cuMemFree_v2)(CUdeviceptr);
static int (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t), (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
static int (*cuMemsetD8_v2)(CUdeviceptr, unsigned char, size_t);
static int (*cuModuleLoadData)(void **, const void *), (*cuModuleUnload)(void *), (*cuModuleGetFunction)(void **, void *, const char *);
static int (*cuFuncGetAttribute)(int *, int, void *);
static int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
static int (*nvrtcCreateProgram)(void **, const char *, const char *, int, const char *const *, const char *const *);
static int (*nvrtcCompileProgram)(void *, int, const char *const *), (*nvrtcDestroyProgram)(void **);
static int (*nvrtcGetCUBINSize)(void *, size_t *), (*nvrtcGetCUBIN)(void *, char *);
static int (*nvrtcGetProgramLogSize)(void *, size_t *), (*nvrtcGetProgramLog)(void *, char *);
static int (*nvrtcVersion)(int *, int *);
static int (*cuDevicePrimaryCtxRetain)(void **, int), (*cuDevicePrimaryCtxRelease_v2)(int);

enum { INVALID_VALUE = 1, INVALID_IMAGE = 200, INVALID_HANDLE = 400, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700, OUT_OF_RESOURCES = 701 };

// one thread stores (or loads and stores back) p[at]: in bounds or not
static const char *const POKE =
    "extern \"C\" __global__ void poke(float *p, long long at, int load) {\n"
    "  if (load) p[0] = p[at]; else p[at] = 1.0f;\n"
    "}\n";

// y[i] = 2 * x[i] + i, one thread per element; 4 KiB of shared memory
static const char *const SAXPY =
    "#include <cuda_bf16.h>\n"
    "extern \"C\" __global__ void __launch_bounds__(512) twice(float *y, const float *x, int n) {\n"
    "  __shared__ float s[1024];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) s[threadIdx.x] = x[i];\n"
    "  __syncthreads();\n"
    "  if (i < n) y[i] = 2.0f * s[threadIdx.x] + (float)i;\n"
    "}\n";

static char *compile(const char *src, char **log, int *rc) {
  void *p = NULL;
  const char *opts[] = {"--gpu-architecture=sm_90", "--std=c++17", "--ptxas-options=-v", "-w"};
  char *bin = NULL;
  *rc = nvrtcCreateProgram(&p, src, "t.cu", 0, NULL, NULL);
  if (*rc) return NULL;
  *rc = nvrtcCompileProgram(p, 4, opts);
  size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) == 0 && (*log = malloc(n + 1))) nvrtcGetProgramLog(p, *log), (*log)[n] = 0;
  if (*rc == 0 && nvrtcGetCUBINSize(p, &n) == 0 && (bin = malloc(n))) nvrtcGetCUBIN(p, bin);
  nvrtcDestroyProgram(&p);
  return bin;
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: test_stand_in LIBDIR\n"), 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/libcuda.so.1", argv[1]);
  void *cu = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  snprintf(path, sizeof path, "%s/libnvrtc.so", argv[1]);
  void *nv = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!cu || !nv) return fprintf(stderr, "cannot load the stand-in: %s\n", dlerror()), 2;
#define L(h, f) *(void **)&f = dlsym(h, #f); if (!f) return fprintf(stderr, "no %s\n", #f), 2;
  L(cu, cuInit) L(cu, cuDeviceGetName) L(cu, cuDeviceGetAttribute) L(cu, cuMemAlloc_v2) L(cu, cuMemFree_v2)
  L(cu, cuMemcpyHtoD_v2) L(cu, cuMemcpyDtoH_v2) L(cu, cuMemsetD8_v2) L(cu, cuModuleLoadData) L(cu, cuModuleUnload) L(cu, cuModuleGetFunction)
  L(cu, cuFuncGetAttribute) L(cu, cuLaunchKernel) L(nv, nvrtcCreateProgram) L(nv, nvrtcCompileProgram) L(nv, nvrtcDestroyProgram)
  L(nv, nvrtcGetCUBINSize) L(nv, nvrtcGetCUBIN) L(nv, nvrtcGetProgramLogSize) L(nv, nvrtcGetProgramLog) L(nv, nvrtcVersion)
  L(cu, cuDevicePrimaryCtxRetain) L(cu, cuDevicePrimaryCtxRelease_v2)
#undef L
  CHECK(dlsym(cu, "fluxcc_cuda_stand_in") && dlsym(nv, "fluxcc_cuda_stand_in"), "both say they are the stand-in");
  CHECK(cuInit(0) == 0, "cuInit");
  void *ctx = NULL;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, 0) == 0 && ctx, "the primary context");
  char name[256] = "";
  CHECK(cuDeviceGetName(name, sizeof name, 0) == 0 && strstr(name, "CUDA emulation on the CPU"), "device name says emulation: %s", name);
  int smem_max = 0;
  CHECK(cuDeviceGetAttribute(&smem_max, 8, 0) == 0 && smem_max == 48 << 10, "48 KiB of shared memory per block: %d", smem_max);

  char *log = NULL;
  int rc;
  char *img = compile(SAXPY, &log, &rc);
  CHECK(img && rc == 0, "compiles (rc %d): %s", rc, log ? log : "");
  if (!img) return CHECK_DONE();
  StandInImage h;
  memcpy(&h, img, sizeof h);
  CHECK(!memcmp(h.magic, STAND_IN_MAGIC, sizeof h.magic) && h.bounds == 512, "an image with its launch bounds (%d)", h.bounds);
  void *mod = NULL, *fn = NULL;
  CHECK(cuModuleLoadData(&mod, img) == 0 && cuModuleGetFunction(&fn, mod, "twice") == 0, "loads; the kernel is found");
  void *other = NULL;
  CHECK(cuModuleGetFunction(&other, mod, "thrice") == NOT_FOUND, "an unknown kernel is CUDA_ERROR_NOT_FOUND");
  int smem = 0, maxt = 0;
  CHECK(cuFuncGetAttribute(&smem, 1, fn) == 0 && smem >= 4096 && smem < 4200, "static shared memory 4 KiB: %d", smem);
  CHECK(cuFuncGetAttribute(&maxt, 0, fn) == 0 && maxt == 512, "max threads per block = launch bounds: %d", maxt);

  // it computes: 1000 elements, blocks of 256, inputs poisoned around
  enum { N = 1000 };
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i % 17) - 8.0f;
  CUdeviceptr dx, dy;
  CHECK(cuMemAlloc_v2(&dx, sizeof x) == 0 && cuMemAlloc_v2(&dy, sizeof y) == 0, "alloc");
  CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x) == 0 && cuMemsetD8_v2(dy, 0xff, sizeof y) == 0, "upload, poison");
  CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x + 4) == INVALID_VALUE, "a copy past the allocation is refused");
  int n = N;
  void *args[] = {&dy, &dx, &n};
  CHECK(cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL) == 0, "launch");
  CHECK(cuMemcpyDtoH_v2(y, dy, sizeof y) == 0, "download");
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += y[i] != 2.0f * x[i] + (float)i;
  CHECK(wrong == 0, "%d of %d outputs wrong", wrong, N);

  // what a GPU refuses
  CHECK(cuLaunchKernel(fn, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL) == INVALID_VALUE, "1025 threads per block");
  CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 65, 0, NULL, args, NULL) == INVALID_VALUE, "block z over 64");
  CHECK(cuLaunchKernel(fn, 1, 65536, 1, 32, 1, 1, 0, NULL, args, NULL) == INVALID_VALUE, "grid y over 65535");
  CHECK(cuLaunchKernel(fn, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL) == INVALID_VALUE, "an empty grid");
  CHECK(cuLaunchKernel(fn, 1, 1, 1, 1024, 1, 1, 0, NULL, args, NULL) == OUT_OF_RESOURCES, "over __launch_bounds__(512)");
  CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 45 << 10, NULL, args, NULL) == INVALID_VALUE, "4 KiB static + 45 KiB dynamic shared");

  // registers: 255 per thread leave 8 warps of a 64 Ki register file
  memcpy(img + offsetof(StandInImage, regs), &(int32_t){255}, 4);
  memcpy(img + offsetof(StandInImage, bounds), &(int32_t){0}, 4);
  void *mod2 = NULL, *fn2 = NULL;
  int regs = 0;
  CHECK(cuModuleLoadData(&mod2, img) == 0 && cuModuleGetFunction(&fn2, mod2, "twice") == 0, "reload");
  CHECK(cuFuncGetAttribute(&maxt, 0, fn2) == 0 && maxt == 256 && cuFuncGetAttribute(&regs, 4, fn2) == 0 && regs == 255,
        "255 registers allow 256 threads: %d", maxt);
  CHECK(cuLaunchKernel(fn2, 2, 1, 1, 512, 1, 1, 0, NULL, args, NULL) == OUT_OF_RESOURCES, "512 threads at 255 registers");
  CHECK(cuLaunchKernel(fn2, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL) == 0, "256 threads at 255 registers");

  // a real cubin or PTX is not the stand-in's
  CHECK(cuModuleLoadData(&other, "\x7f" "ELF\2\1\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0") == INVALID_IMAGE, "an ELF cubin");
  CHECK(cuModuleLoadData(&other, ".version 8.0\n.target sm_90\n") == INVALID_IMAGE, "PTX text");

  // compile errors: the emulation's, and the real NVRTC's where it is installed
  free(log), log = NULL;
  char *bad = compile("extern \"C\" __global__ void k(float *p) { p[0] = undeclared; }\n", &log, &rc);
  CHECK(!bad && rc == 6 && log && strstr(log, "undeclared"), "a compile error is NVRTC_ERROR_COMPILATION with the log: %s", log ? log : "");
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  if (major) {  // a real NVRTC behind the stand-in: ptxas's error, which the C++ build never sees
    free(log), log = NULL;
    bad = compile("extern \"C\" __global__ void k(float *p) {\n#ifndef FLUX_EMU\n  asm volatile(\"not.an.instruction;\");\n#endif\n}\n",
                  &log, &rc);
    CHECK(!bad && rc == 6 && log && strstr(log, "ptxas"), "the real NVRTC's error: %s", log ? log : "");
    CHECK(h.regs > 0, "registers from the real ptxas: %d", h.regs);
  } else printf("no real NVRTC: its checks not run\n");
  free(log), free(img);
  log = NULL;
  CHECK(cuModuleUnload(mod) == 0 && cuModuleUnload(mod2) == 0, "unload");
  cuMemFree_v2(dx), cuMemFree_v2(dy);

  // memory checked as a GPU's: an access outside the allocation (1000 floats)
  // fails the launch, the context stays lost, a new one works. Near: into the
  // padding up to 256 bytes (a store is seen after the launch), the guard
  // page past it, the one before; far: 4 GiB either way, into the guards
  // (nowhere near fluxcc's own memory).
  char *pimg = compile(POKE, &log, &rc);
  CHECK(pimg && rc == 0, "the poking kernel compiles: %s", log ? log : "");
  if (!pimg) return CHECK_DONE();
  static const struct { long long at; int load; const char *what; } pokes[] = {
    {1000, 0, "a store just past the end (its padding)"}, {1024, 0, "a store past the allocation's pages"},
    {-1, 0, "a store just before it"}, {1LL << 30, 0, "a store 4 GiB past it"}, {-(1LL << 30), 0, "a store 4 GiB before it"},
    {1024, 1, "a load past its pages"}, {1LL << 30, 1, "a load 4 GiB past it"},
  };
  for (size_t i = 0; i < sizeof pokes / sizeof *pokes; i++) {
    void *pm = NULL, *pf = NULL;
    CUdeviceptr dp = 0;
    long long at = 999;
    int load = pokes[i].load;
    void *pargs[] = {&dp, &at, &load};
    CHECK(cuModuleLoadData(&pm, pimg) == 0 && cuModuleGetFunction(&pf, pm, "poke") == 0 && cuMemAlloc_v2(&dp, 1000 * sizeof(float)) == 0,
          "%s: load, alloc", pokes[i].what);
    CHECK(cuLaunchKernel(pf, 1, 1, 1, 32, 1, 1, 0, NULL, pargs, NULL) == 0, "%s: the last element first", pokes[i].what);
    at = pokes[i].at;
    int r = cuLaunchKernel(pf, 1, 1, 1, 32, 1, 1, 0, NULL, pargs, NULL);
    CHECK(r == ILLEGAL_ADDRESS, "%s: CUDA_ERROR_ILLEGAL_ADDRESS (%d)", pokes[i].what, r);
    float back[4];
    CUdeviceptr dq = 0;
    CHECK(cuMemcpyDtoH_v2(back, dp, sizeof back) == ILLEGAL_ADDRESS && cuMemAlloc_v2(&dq, 64) == ILLEGAL_ADDRESS &&
          cuLaunchKernel(pf, 1, 1, 1, 32, 1, 1, 0, NULL, pargs, NULL) == ILLEGAL_ADDRESS && cuModuleLoadData(&other, pimg) == ILLEGAL_ADDRESS,
          "%s: sticky: every later call fails with it", pokes[i].what);
    CHECK(cuDevicePrimaryCtxRelease_v2(0) == 0 && cuDevicePrimaryCtxRetain(&ctx, 0) == 0, "%s: the context destroyed, a new one",
          pokes[i].what);
    CHECK(cuModuleUnload(pm) == INVALID_HANDLE, "%s: the old context's module went with it", pokes[i].what);
    float one = 0;
    at = 999, load = 0;
    CHECK(cuModuleLoadData(&pm, pimg) == 0 && cuModuleGetFunction(&pf, pm, "poke") == 0 && cuMemAlloc_v2(&dp, 1000 * sizeof(float)) == 0 &&
          cuLaunchKernel(pf, 1, 1, 1, 32, 1, 1, 0, NULL, pargs, NULL) == 0 && cuMemcpyDtoH_v2(&one, dp + 999 * sizeof(float), 4) == 0 &&
          one == 1.0f, "%s: the new context works", pokes[i].what);
    CHECK(cuModuleUnload(pm) == 0 && cuMemFree_v2(dp) == 0, "%s: unload, free", pokes[i].what);
  }
  free(pimg), free(log);
  CHECK(cuDevicePrimaryCtxRelease_v2(0) == 0 && cuDevicePrimaryCtxRelease_v2(0) == 201, "released; once too often is CUDA_ERROR_INVALID_CONTEXT");
  return CHECK_DONE();
}
