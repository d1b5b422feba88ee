// device_cuda.c — the measuring layer on CUDA: NVRTC compiles a kernel's
// source to a cubin, the driver API runs and times it. Both libraries are
// loaded with dlopen and their few types and prototypes declared here, so
// fluxcc builds without a CUDA toolkit and runs without a GPU.
#include "fluxcc.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent, *CUstream;
typedef void *nvrtcProgram;

enum {
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
};
#define L2_FLUSH_BYTES ((size_t)256 << 20)

// (return type, symbol, parameters) of every function we call; results are ints
#define NVRTC_FNS(X) \
  X(const char *, nvrtcGetErrorString, (int r)) \
  X(int, nvrtcVersion, (int *major, int *minor)) \
  X(int, nvrtcGetNumSupportedArchs, (int *n)) \
  X(int, nvrtcGetSupportedArchs, (int *archs)) \
  X(int, nvrtcCreateProgram, (nvrtcProgram *p, const char *src, const char *name, int nhdr, const char *const *hdrs, const char *const *hdr_names)) \
  X(int, nvrtcDestroyProgram, (nvrtcProgram *p)) \
  X(int, nvrtcCompileProgram, (nvrtcProgram p, int nopts, const char *const *opts)) \
  X(int, nvrtcGetProgramLogSize, (nvrtcProgram p, size_t *n)) \
  X(int, nvrtcGetProgramLog, (nvrtcProgram p, char *log)) \
  X(int, nvrtcGetCUBINSize, (nvrtcProgram p, size_t *n)) \
  X(int, nvrtcGetCUBIN, (nvrtcProgram p, char *cubin)) \
  X(int, nvrtcGetPTXSize, (nvrtcProgram p, size_t *n)) \
  X(int, nvrtcGetPTX, (nvrtcProgram p, char *ptx))
// the _v2 names are the symbols cuda.h's macros resolve to
#define CU_FNS(X) \
  X(int, cuGetErrorName, (int r, const char **s)) \
  X(int, cuInit, (unsigned flags)) \
  X(int, cuDriverGetVersion, (int *v)) \
  X(int, cuDeviceGet, (int *dev, int ordinal)) \
  X(int, cuDeviceGetName, (char *name, int len, int dev)) \
  X(int, cuDeviceGetAttribute, (int *v, int attr, int dev)) \
  X(int, cuDevicePrimaryCtxRetain, (CUcontext *ctx, int dev)) \
  X(int, cuDevicePrimaryCtxRelease_v2, (int dev)) \
  X(int, cuCtxSetCurrent, (CUcontext ctx)) \
  X(int, cuMemAlloc_v2, (CUdeviceptr *p, size_t n)) \
  X(int, cuMemFree_v2, (CUdeviceptr p)) \
  X(int, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t n)) \
  X(int, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t n)) \
  X(int, cuMemsetD8_v2, (CUdeviceptr p, unsigned char v, size_t n)) \
  X(int, cuModuleLoadData, (CUmodule *m, const void *image)) \
  X(int, cuModuleUnload, (CUmodule m)) \
  X(int, cuModuleGetFunction, (CUfunction *f, CUmodule m, const char *name)) \
  X(int, cuFuncGetAttribute, (int *v, int attr, CUfunction f)) \
  X(int, cuLaunchKernel, (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                          unsigned smem, CUstream s, void **args, void **extra)) \
  X(int, cuEventCreate, (CUevent *e, unsigned flags)) \
  X(int, cuEventRecord, (CUevent e, CUstream s)) \
  X(int, cuEventSynchronize, (CUevent e)) \
  X(int, cuEventElapsedTime, (float *ms, CUevent start, CUevent end)) \
  X(int, cuEventDestroy_v2, (CUevent e))

typedef struct {
  CUdeviceptr p;
  size_t bytes;
} Buffer;

struct Device {
  void *nvrtc, *cuda;              // library handles; cuda is NULL when compile only
#define X(ret, f, params) ret (*f) params;
  NVRTC_FNS(X)
  CU_FNS(X)
#undef X
  bool compile_only;
  int nvrtc_major, nvrtc_minor, driver_version;
  bool stand_in, nvrtc_stand_in;   // the driver, NVRTC: fluxcc's CUDA stand-in (the emulation on the CPU)
  char nvrtc_path[1024], cuda_path[1024];  // the files loaded
  // read by compile() on many threads: set in open() and never changed
  char arch[32];                   // sm_90, or compute_NN (PTX the driver finishes) for a GPU newer than NVRTC
  char include[4200];              // -I<cuda>/include
  // the GPU: used on the thread that launches
  int dev, smem_max;
  char name[256];
  CUcontext ctx;                   // the primary context, retained
  CUevent ev[2];
  Buffer *buf;                     // the kernel's arguments
  void **argp;                     // &buf[i].p: cuLaunchKernel's parameter array
  int nbuf;
  CUdeviceptr flush;               // scratch that evicts the L2 before each timed launch
  char broken[320];                // after a sticky error: every later call fails with it
  bool renewable;                  // ... a kernel's bad address: renew() may make a new context
  int gen;                         // the context's: renew() makes the next
};

// A compiled kernel: cubin (or NUL-terminated PTX), and its module once launched.
typedef struct {
  char *code;
  size_t size;
  int regs;                        // per thread, from ptxas; -1 for PTX
  CUmodule mod;                    // loaded in context gen (a later context loads it again)
  CUfunction fn;
  int gen;
  char name[];
} Bin;

static const char *cu_name(Device *d, int r) {
  const char *s = NULL;
  return d->cuGetErrorName(r, &s) == 0 && s ? s : "CUDA_ERROR_UNKNOWN";
}

// The error's name in err. Errors a faulting kernel leaves in the context
// are sticky: nothing works in it afterwards, so the device stays broken;
// after a bad address (the kernel's own fault) renew() tries a new context.
static int cu_fail(Device *d, int r, const char *what, char *err, size_t n) {
  snprintf(err, n, "%s: %s", what, cu_name(d, r));
  if (r == 700 || r == 702 || r == 710 || (r >= 714 && r <= 719)) {
    snprintf(d->broken, sizeof d->broken, "%s: %s (the CUDA context is lost; restart to use the GPU)", what, cu_name(d, r));
    d->renewable = r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_MISALIGNED_ADDRESS;
  }
  return -1;
}

#define TRY(f, args) do { int r_ = d->f args; if (r_) return cu_fail(d, r_, #f, err, n); } while (0)

static bool has_headers(const char *dir) {
  char p[4200];
  return (size_t)snprintf(p, sizeof p, "%s/cuda_bf16.h", dir) < sizeof p && access(p, R_OK) == 0;
}

// FLUXCC_CUDA_LIBS=DIR: NVRTC and the driver from DIR and nowhere else, e.g.
// fluxcc's CUDA stand-in (build/cuda-stand-in/lib64: the CUDA emulation on
// the CPU), which is never picked up otherwise.
static const char *libs_dir(void) {
  const char *s = getenv("FLUXCC_CUDA_LIBS");
  return s && *s ? s : NULL;
}

// Every library is loaded NODELETE: mapped to the end after dlclose (as the
// OpenCL one), so what it still holds is reported by the leak checker under its
// name, not as an unknown module
#define LIB_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)

static void *open_in(const char *dir, const char *file, char *err, size_t n) {
  char p[4200];
  snprintf(p, sizeof p, "%.4000s/%s", dir, file);
  void *h = dlopen(p, LIB_FLAGS);
  if (!h) snprintf(err, n, "FLUXCC_CUDA_LIBS=%.1000s: cannot load %s: %.1000s", dir, file, dlerror());
  return h;
}

// the file the loader took, for provenance
static void lib_path(void *h, char *out, size_t n) {
  struct link_map *lm = NULL;
  snprintf(out, n, "%s", dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name ? lm->l_name : "?");
}

// NVRTC from $CUDA_HOME, the usual toolkit, then wherever the loader finds it;
// the headers (cuda_bf16.h: NVRTC has no built-in copy) from the toolkit it came with.
static int open_nvrtc(Device *d, char *err, size_t n) {
  const char *home = getenv("CUDA_HOME"), *dir = libs_dir();
  char in_home[4200] = "";
  if (dir) {
    if (!(d->nvrtc = open_in(dir, "libnvrtc.so", err, n))) return -1;
  } else {
    if (home && *home) snprintf(in_home, sizeof in_home, "%s/lib64/libnvrtc.so", home);
    const char *libs[] = {in_home, "/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (size_t i = 0; i < sizeof libs / sizeof *libs && !d->nvrtc; i++)
      if (*libs[i]) d->nvrtc = dlopen(libs[i], LIB_FLAGS);
    if (!d->nvrtc)
      return snprintf(err, n, "cannot load NVRTC (libnvrtc.so): no CUDA toolkit found; install one or set CUDA_HOME, or use --target opencl"), -1;
  }
  lib_path(d->nvrtc, d->nvrtc_path, sizeof d->nvrtc_path);
  d->nvrtc_stand_in = dlsym(d->nvrtc, "fluxcc_cuda_stand_in") != NULL;
#define X(ret, f, params) \
  if (!(d->f = (ret (*) params)dlsym(d->nvrtc, #f))) \
    return snprintf(err, n, "NVRTC lacks %s (too old); install CUDA 12 or newer, or set CUDA_HOME", #f), -1;
  NVRTC_FNS(X)
#undef X
  d->nvrtcVersion(&d->nvrtc_major, &d->nvrtc_minor);

  char origin[4200] = "", beside[4200] = "", in_home_inc[4200] = "";
  if (home && *home) snprintf(in_home_inc, sizeof in_home_inc, "%s/include", home);
  if (dlinfo(d->nvrtc, RTLD_DI_ORIGIN, origin) == 0) snprintf(beside, sizeof beside, "%.4000s/../include", origin);
  const char *dirs[] = {in_home_inc, beside, "/usr/local/cuda/include"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    if (*dirs[i] && has_headers(dirs[i])) return snprintf(d->include, sizeof d->include, "-I%.4100s", dirs[i]), 0;
  return snprintf(err, n, "NVRTC %d.%d is here but not the CUDA headers (cuda_bf16.h); set CUDA_HOME to a CUDA toolkit",
                  d->nvrtc_major, d->nvrtc_minor), -1;
}

static int open_driver(Device *d, int *cc, char *err, size_t n) {
  const char *dir = libs_dir();
  if (dir && !(d->cuda = open_in(dir, "libcuda.so.1", err, n))) return -1;
  if (!d->cuda && !(d->cuda = dlopen("libcuda.so.1", LIB_FLAGS)))
    return snprintf(err, n, "cannot load the CUDA driver (libcuda.so.1): no NVIDIA driver on this machine; use --target opencl, or run where a GPU is"), -1;
  lib_path(d->cuda, d->cuda_path, sizeof d->cuda_path);
  d->stand_in = dlsym(d->cuda, "fluxcc_cuda_stand_in") != NULL;
  // the stand-in's driver runs only the stand-in NVRTC's images, and a real driver only real cubins
  if (d->stand_in != d->nvrtc_stand_in)
    return snprintf(err, n, "%s is %s but %s is %s: set FLUXCC_CUDA_LIBS to the stand-in's folder to use both, or to neither", d->cuda_path,
                    d->stand_in ? "fluxcc's CUDA stand-in" : "a real driver", d->nvrtc_path,
                    d->stand_in ? "a real NVRTC" : "fluxcc's stand-in"), -1;
#define X(ret, f, params) \
  if (!(d->f = (ret (*) params)dlsym(d->cuda, #f))) \
    return snprintf(err, n, "the CUDA driver lacks %s (too old); update the NVIDIA driver", #f), -1;
  CU_FNS(X)
#undef X
  int r = d->cuInit(0);
  // the stand-in says why in words (a bad FLUX_STAND_IN_SMEM): no NVIDIA driver is involved
  const char *(*why)(void) = d->stand_in ? (const char *(*)(void))dlsym(d->cuda, "fluxcc_stand_in_why") : NULL;
  if (r && why && *why())
    return snprintf(err, n, "cuInit: %s: fluxcc's CUDA stand-in does not start: %.200s", cu_name(d, r), why()), -1;
  if (r)
    return snprintf(err, n, "cuInit: %s: %s", cu_name(d, r),
                    r == CUDA_ERROR_NO_DEVICE ? "no CUDA GPU" : "the NVIDIA driver does not start (see nvidia-smi)"), -1;
  int major = 0, minor = 0;
  TRY(cuDriverGetVersion, (&d->driver_version));
  TRY(cuDeviceGet, (&d->dev, 0));
  TRY(cuDevicePrimaryCtxRetain, (&d->ctx, d->dev));
  TRY(cuCtxSetCurrent, (d->ctx));
  TRY(cuDeviceGetName, (d->name, sizeof d->name, d->dev));
  TRY(cuDeviceGetAttribute, (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev));
  TRY(cuDeviceGetAttribute, (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev));
  // kernels declare their shared memory statically, which cannot opt in past this
  TRY(cuDeviceGetAttribute, (&d->smem_max, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, d->dev));
  TRY(cuEventCreate, (&d->ev[0], 0));
  TRY(cuEventCreate, (&d->ev[1], 0));
  *cc = 10 * major + minor;
  return 0;
}

// The GPU's architecture, or FLUXCC_CUDA_ARCH (default sm_90) when compiling only.
static int pick_arch(Device *d, int cc, char *err, size_t n) {
  const char *want = getenv("FLUXCC_CUDA_ARCH");
  int num = cc;
  char suffix[8] = "";
  if (d->compile_only) {
    if (!want || !*want) want = "sm_90";
    char digits[8] = "";
    size_t nd = strncmp(want, "sm_", 3) ? 0 : strspn(want + 3, "0123456789");
    if (nd && nd < sizeof digits) memcpy(digits, want + 3, nd);
    const char *tail = nd ? want + 3 + nd : "";
    if (!nd || nd >= sizeof digits || nb_parse_int(digits, 10, 999, &num) || strlen(tail) > 1 || (*tail && *tail != 'a' && *tail != 'f'))
      return snprintf(err, n, "FLUXCC_CUDA_ARCH=%s: expected an architecture like sm_80 or sm_90a", want), -1;
    snprintf(suffix, sizeof suffix, "%s", tail);
  }
  int na = 0, archs[256];
  if (d->nvrtcGetNumSupportedArchs(&na) || na < 1 || na > 256 || d->nvrtcGetSupportedArchs(archs))
    return snprintf(err, n, "NVRTC %d.%d does not list the architectures it supports", d->nvrtc_major, d->nvrtc_minor), -1;
  for (int i = 0; i < na; i++)
    if (archs[i] == num) return snprintf(d->arch, sizeof d->arch, "sm_%d%s", num, suffix), 0;
  if (!d->compile_only && num > archs[na - 1])  // a GPU newer than NVRTC: its PTX, which the driver compiles on
    return snprintf(d->arch, sizeof d->arch, "compute_%d", archs[na - 1]), 0;
  return snprintf(err, n, "NVRTC %d.%d cannot compile for sm_%d (it supports sm_%d to sm_%d)", d->nvrtc_major, d->nvrtc_minor, num,
                  archs[0], archs[na - 1]), -1;
}

static void free_bufs(Device *d) {
  for (int i = 0; i < d->nbuf; i++)
    if (d->buf[i].p) d->cuMemFree_v2(d->buf[i].p);
  free(d->buf), free(d->argp);
  d->buf = NULL, d->argp = NULL, d->nbuf = 0;
}

static void cuda_close(Device *d) {
  if (!d) return;
  if (d->ctx) {
    d->cuCtxSetCurrent(d->ctx);
    free_bufs(d);
    if (d->flush) d->cuMemFree_v2(d->flush);
    for (int i = 0; i < 2; i++)
      if (d->ev[i]) d->cuEventDestroy_v2(d->ev[i]);
    d->cuDevicePrimaryCtxRelease_v2(d->dev);
  }
  if (d->cuda) dlclose(d->cuda);
  if (d->nvrtc) dlclose(d->nvrtc);
  free(d);
}

static Device *cuda_open(bool compile_only, const char *kflags, char *err, size_t n) {
  (void)kflags;  // NVRTC takes its options in compile
  Device *d = calloc(1, sizeof *d);
  if (!d) return snprintf(err, n, "out of memory"), NULL;
  d->compile_only = compile_only;
  int cc = 0;
  if (open_nvrtc(d, err, n) || (!compile_only && open_driver(d, &cc, err, n)) || pick_arch(d, cc, err, n)) {
    cuda_close(d);
    return NULL;
  }
  return d;
}

static void cuda_describe(Device *d, char *dev, size_t n, char *toolchain, size_t m) {
  if (d->compile_only) snprintf(dev, n, "%s (compile only, no GPU)", d->arch);
  else snprintf(dev, n, "%s (%s)", d->name, d->arch);
  int k = snprintf(toolchain, m, "%sNVRTC %d.%d %s", d->nvrtc_stand_in ? "stand-in " : "", d->nvrtc_major, d->nvrtc_minor, d->nvrtc_path);
  if (d->compile_only || k < 0 || (size_t)k >= m) return;
  if (d->stand_in) snprintf(toolchain + k, m - k, ", stand-in driver %s", d->cuda_path);
  else snprintf(toolchain + k, m - k, ", driver %d.%d %s", d->driver_version / 1000, d->driver_version % 1000 / 10, d->cuda_path);
}

// Spill stores and loads summed over the functions ptxas reports; -1 if it reported none.
static int spills(const char *log, int *stores, int *loads) {
  int found = -1, st, ld;
  *stores = *loads = 0;
  for (const char *p = log; (p = strstr(p, "stack frame, ")); p++)
    if (sscanf(p, "stack frame, %d bytes spill stores, %d bytes spill loads", &st, &ld) == 2)
      *stores += st, *loads += ld, found = 0;
  return found;
}

static char *program_log(Device *d, nvrtcProgram p) {
  size_t n = 0;
  char *log = NULL;
  if (d->nvrtcGetProgramLogSize(p, &n) == 0 && (log = malloc(n + 1)) && d->nvrtcGetProgramLog(p, log) == 0) return log[n] = 0, log;
  free(log);
  return NULL;
}

// Called from several threads at once: touches only its own program and
// what open() set; the CUDA context is left alone (modules load at launch).
static void *cuda_compile(Device *d, const char *src, const char *fn, char *err, size_t n) {
  char arch[64], pname[200];
  snprintf(arch, sizeof arch, "--gpu-architecture=%s", d->arch);
  snprintf(pname, sizeof pname, "%.190s.cu", fn);
  // -w: the prelude's unused helpers would fill the log with warnings; -v: registers and spills
  const char *opts[] = {arch, d->include, "--std=c++17", "--ptxas-options=-v", "-w"};
  // The prelude includes <math.h>, which NVRTC lacks: the math functions are
  // built in, so ours only adds the constants kernels use (as CUDA's own
  // math_constants.h spells them; NVRTC has no __builtin_inff).
  const char *const hdr_names[] = {"math.h"},
                    *const hdrs[] = {"#pragma once\n#define INFINITY __int_as_float(0x7f800000)\n#define NAN __int_as_float(0x7fffffff)\n"};
  nvrtcProgram prog = NULL;
  int r = d->nvrtcCreateProgram(&prog, src, pname, 1, hdrs, hdr_names);
  if (r) return snprintf(err, n, "nvrtcCreateProgram: %s", d->nvrtcGetErrorString(r)), NULL;
  r = d->nvrtcCompileProgram(prog, sizeof opts / sizeof *opts, opts);
  char *log = program_log(d, prog);
  Bin *b = NULL;
  int st = 0, ld = 0, regs = -1;
  const char *used = log ? strstr(log, "Used ") : NULL;
  if (used) sscanf(used, "Used %d registers", &regs);
  size_t size = 0;
  bool ptx = d->nvrtcGetCUBINSize(prog, &size) != 0 || size == 0;  // no cubin for a compute_NN target
  if (r) {
    log_gist(log ? log : "", err, n);
    if (!err[0]) snprintf(err, n, "NVRTC failed without a log");
  }
  else if (log && spills(log, &st, &ld) == 0 && (st > 0 || ld > 0))
    snprintf(err, n, "spills: %d bytes spill stores, %d bytes spill loads (%d registers)", st, ld, regs);
  else if (ptx && (d->nvrtcGetPTXSize(prog, &size) != 0 || size == 0))
    snprintf(err, n, "NVRTC produced neither cubin nor PTX for %s", d->arch);
  else if (!(b = calloc(1, sizeof *b + strlen(fn) + 1)) || !(b->code = malloc(size)))
    snprintf(err, n, "out of memory"), free(b), b = NULL;
  else if ((ptx ? d->nvrtcGetPTX(prog, b->code) : d->nvrtcGetCUBIN(prog, b->code)) != 0)
    snprintf(err, n, "NVRTC did not hand over the %s", ptx ? "PTX" : "cubin"), free(b->code), free(b), b = NULL;
  else b->size = size, b->regs = ptx ? -1 : regs, strcpy(b->name, fn);
  free(log);
  d->nvrtcDestroyProgram(&prog);
  return b;
}

static void cuda_release(Device *d, void *bin) {
  Bin *b = bin;
  if (!b) return;
  if (b->mod && b->gen == d->gen) d->cuCtxSetCurrent(d->ctx), d->cuModuleUnload(b->mod);  // an older context's went with it
  free(b->code);
  free(b);
}

// What every GPU call starts with: a GPU, not broken, its context current here.
static int ready(Device *d, char *err, size_t n) {
  if (d->compile_only) return snprintf(err, n, "no GPU: compile only"), -1;
  if (d->broken[0]) return snprintf(err, n, "%s", d->broken), -1;
  TRY(cuCtxSetCurrent, (d->ctx));
  return 0;
}

static int cuda_alloc(Device *d, int nargs, const size_t *bytes, char *err, size_t n) {
  if (ready(d, err, n)) return -1;
  free_bufs(d);
  d->buf = calloc(nargs + 1, sizeof *d->buf);
  d->argp = calloc(nargs + 1, sizeof *d->argp);
  if (!d->buf || !d->argp) return free_bufs(d), snprintf(err, n, "out of memory"), -1;
  for (; d->nbuf < nargs; d->nbuf++) {
    Buffer *x = &d->buf[d->nbuf];
    x->bytes = bytes[d->nbuf];
    d->argp[d->nbuf] = &x->p;
    int r = d->cuMemAlloc_v2(&x->p, x->bytes ? x->bytes : 1);
    if (r) {
      char what[96];
      snprintf(what, sizeof what, "cuMemAlloc of %zu bytes for argument %d", x->bytes, d->nbuf);
      cu_fail(d, r, what, err, n);
      free_bufs(d);
      return -1;
    }
  }
  return 0;
}

static int check_arg(Device *d, int arg, char *err, size_t n) {
  if (arg >= 0 && arg < d->nbuf) return 0;
  return snprintf(err, n, "argument %d: only %d buffers are allocated", arg, d->nbuf), -1;
}

static int cuda_upload(Device *d, int arg, const void *src, char *err, size_t n) {
  if (ready(d, err, n) || check_arg(d, arg, err, n)) return -1;
  TRY(cuMemcpyHtoD_v2, (d->buf[arg].p, src, d->buf[arg].bytes));
  return 0;
}

static int cuda_download(Device *d, int arg, void *dst, char *err, size_t n) {
  if (ready(d, err, n) || check_arg(d, arg, err, n)) return -1;
  TRY(cuMemcpyDtoH_v2, (dst, d->buf[arg].p, d->buf[arg].bytes));
  return 0;
}

static int cuda_launch(Device *d, void *bin, const uint32_t grid[3], const uint32_t block[3], double *us, char *err, size_t n) {
  Bin *b = bin;
  if (ready(d, err, n)) return -1;
  // loaded here, not in compile(): modules belong to the context, which only this thread uses
  if (b->mod && b->gen != d->gen) b->mod = NULL, b->fn = NULL;  // loaded in a context since destroyed
  if (!b->mod) {
    TRY(cuModuleLoadData, (&b->mod, b->code));
    b->gen = d->gen;
  }
  if (!b->fn) TRY(cuModuleGetFunction, (&b->fn, b->mod, b->name));
  int max_threads = 0, smem = 0, regs = 0;
  TRY(cuFuncGetAttribute, (&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, b->fn));
  TRY(cuFuncGetAttribute, (&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, b->fn));
  TRY(cuFuncGetAttribute, (&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, b->fn));
  // the limits are the driver's to enforce; its refusal is told with them
  uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
  char what[200];
  snprintf(what, sizeof what, "launch of %.150s", b->name);
  // a cold L2 for every timed launch, so earlier launches' data does not flatter it
  if (us && !d->flush) TRY(cuMemAlloc_v2, (&d->flush, L2_FLUSH_BYTES));
  if (us) TRY(cuMemsetD8_v2, (d->flush, 0, L2_FLUSH_BYTES));
  int r = d->cuEventRecord(d->ev[0], NULL);
  if (!r) r = d->cuLaunchKernel(b->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, NULL, d->argp, NULL);
  if (!r) r = d->cuEventRecord(d->ev[1], NULL);
  if (!r) r = d->cuEventSynchronize(d->ev[1]);
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    return snprintf(err, n, "%s: %s: %llu threads per block (the function allows %d, %d registers per thread), %d bytes of static shared memory (the device allows %d per block)",
                    what, cu_name(d, r), (unsigned long long)threads, max_threads, regs, smem, d->smem_max), -1;
  if (r) return cu_fail(d, r, what, err, n);
  float ms = 0;
  if (us) TRY(cuEventElapsedTime, (&ms, d->ev[0], d->ev[1]));
  if (us) *us = ms * 1000.0;
  return 0;
}

// After a kernel's bad address lost the context: the context destroyed (the
// primary context's release; what it held goes with it) and a new one made,
// with the arguments' buffers allocated again (their contents lost: the
// caller uploads them again), so that a search goes on without the faulty
// candidate. 1: nothing was lost; -1: it cannot go on (another sticky error,
// or a driver whose new context still fails), the device stays broken.
static int cuda_renew(Device *d, char *err, size_t n) {
  if (!d->broken[0]) return 1;
  if (!d->renewable) return snprintf(err, n, "%s", d->broken), -1;
  for (int i = 0; i < 2; i++)
    if (d->ev[i]) d->cuEventDestroy_v2(d->ev[i]), d->ev[i] = NULL;
  for (int i = 0; i < d->nbuf; i++)
    if (d->buf[i].p) d->cuMemFree_v2(d->buf[i].p), d->buf[i].p = 0;
  if (d->flush) d->cuMemFree_v2(d->flush), d->flush = 0;
  d->cuDevicePrimaryCtxRelease_v2(d->dev);
  d->ctx = NULL, d->gen++;
  char why[200];
  int r = d->cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
  const char *what = "cuDevicePrimaryCtxRetain";
  if (!r) r = d->cuCtxSetCurrent(d->ctx), what = "cuCtxSetCurrent";
  for (int i = 0; i < 2 && !r; i++) r = d->cuEventCreate(&d->ev[i], 0), what = "cuEventCreate";
  for (int i = 0; i < d->nbuf && !r; i++) r = d->cuMemAlloc_v2(&d->buf[i].p, d->buf[i].bytes ? d->buf[i].bytes : 1), what = "cuMemAlloc";
  if (r) {  // a real GPU may keep the process's contexts broken: as before, the device is done
    snprintf(why, sizeof why, "%.199s", d->broken);
    snprintf(d->broken, sizeof d->broken, "%.200s; a new context fails too (%s: %s): restart to use the GPU", why, what, cu_name(d, r));
    d->renewable = false;
    return snprintf(err, n, "%s", d->broken), -1;
  }
  d->broken[0] = 0, d->renewable = false;
  return 0;
}

// With FLUXCC_CUDA_LIBS at fluxcc's stand-in, kernels run on the CUDA
// emulation: a project's `make flux-emu` runs them there too (no GPU, no nvcc).
static const char *cuda_program(void) {
  const char *dir = libs_dir();
  char err[64];
  void *h = dir ? open_in(dir, "libcuda.so.1", err, sizeof err) : NULL;
  bool si = h && dlsym(h, "fluxcc_cuda_stand_in");
  if (h) dlclose(h);
  return si ? "flux-emu" : NULL;
}

const DeviceOps device_cuda = {
  .name = "cuda",
  .open = cuda_open,
  .close = cuda_close,
  .describe = cuda_describe,
  .compile = cuda_compile,
  .release = cuda_release,
  .alloc = cuda_alloc,
  .upload = cuda_upload,
  .download = cuda_download,
  .launch = cuda_launch,
  .renew = cuda_renew,
  .program = cuda_program,
};
