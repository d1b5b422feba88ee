// device_opencl.c — the measuring layer on any OpenCL 1.2 device (PoCL on
// the CPU here). libOpenCL is loaded with dlopen, and the few types and
// constants we use are declared below, so fluxcc needs no OpenCL headers or
// library to build and runs without them (it says so when asked to measure).
#include "fluxcc.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef struct cl_opaque *cl_handle;   // platform, device, context, queue, program, kernel, mem, event
enum {
  CL_SUCCESS = 0, CL_DEVICE_NOT_FOUND = -1, CL_BUILD_PROGRAM_FAILURE = -11, CL_PLATFORM_NOT_FOUND_KHR = -1001,
  CL_PLATFORM_NAME = 0x0902, CL_PLATFORM_VERSION = 0x0901,
  CL_DEVICE_NAME = 0x102B, CL_DRIVER_VERSION = 0x102D, CL_DEVICE_VERSION = 0x102F,
  CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004, CL_DEVICE_LOCAL_MEM_SIZE = 0x1023,
  CL_QUEUE_PROFILING_ENABLE = 1 << 1, CL_MEM_READ_WRITE = 1 << 0,
  CL_PROGRAM_BUILD_LOG = 0x1183, CL_PROFILING_COMMAND_START = 0x1282, CL_PROFILING_COMMAND_END = 0x1283,
  CL_KERNEL_WORK_GROUP_SIZE = 0x11B0, CL_KERNEL_LOCAL_MEM_SIZE = 0x11B2,
};
static const cl_ulong CL_DEVICE_TYPE_ALL = 0xFFFFFFFF;

// the entry points we call, loaded by name
#define CL_FUNCS(X) \
  X(cl_int, clGetPlatformIDs, (cl_uint, cl_handle *, cl_uint *)) \
  X(cl_int, clGetPlatformInfo, (cl_handle, cl_uint, size_t, void *, size_t *)) \
  X(cl_int, clGetDeviceIDs, (cl_handle, cl_ulong, cl_uint, cl_handle *, cl_uint *)) \
  X(cl_int, clGetDeviceInfo, (cl_handle, cl_uint, size_t, void *, size_t *)) \
  X(cl_handle, clCreateContext, (const intptr_t *, cl_uint, const cl_handle *, void *, void *, cl_int *)) \
  X(cl_handle, clCreateCommandQueue, (cl_handle, cl_handle, cl_ulong, cl_int *)) \
  X(cl_handle, clCreateProgramWithSource, (cl_handle, cl_uint, const char **, const size_t *, cl_int *)) \
  X(cl_int, clBuildProgram, (cl_handle, cl_uint, const cl_handle *, const char *, void *, void *)) \
  X(cl_int, clGetProgramBuildInfo, (cl_handle, cl_handle, cl_uint, size_t, void *, size_t *)) \
  X(cl_handle, clCreateKernel, (cl_handle, const char *, cl_int *)) \
  X(cl_int, clGetKernelWorkGroupInfo, (cl_handle, cl_handle, cl_uint, size_t, void *, size_t *)) \
  X(cl_int, clSetKernelArg, (cl_handle, cl_uint, size_t, const void *)) \
  X(cl_handle, clCreateBuffer, (cl_handle, cl_ulong, size_t, void *, cl_int *)) \
  X(cl_int, clEnqueueWriteBuffer, (cl_handle, cl_handle, cl_uint, size_t, size_t, const void *, cl_uint, const cl_handle *, cl_handle *)) \
  X(cl_int, clEnqueueReadBuffer, (cl_handle, cl_handle, cl_uint, size_t, size_t, void *, cl_uint, const cl_handle *, cl_handle *)) \
  X(cl_int, clEnqueueNDRangeKernel, (cl_handle, cl_handle, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint, const cl_handle *, cl_handle *)) \
  X(cl_int, clWaitForEvents, (cl_uint, const cl_handle *)) \
  X(cl_int, clGetEventProfilingInfo, (cl_handle, cl_uint, size_t, void *, size_t *)) \
  X(cl_int, clReleaseEvent, (cl_handle)) \
  X(cl_int, clReleaseMemObject, (cl_handle)) \
  X(cl_int, clReleaseKernel, (cl_handle)) \
  X(cl_int, clReleaseProgram, (cl_handle)) \
  X(cl_int, clRetainProgram, (cl_handle)) \
  X(cl_int, clReleaseCommandQueue, (cl_handle)) \
  X(cl_int, clReleaseContext, (cl_handle))

struct Device {
  void *lib;
#define X(ret, name, args) ret(*name) args;
  CL_FUNCS(X)
#undef X
  cl_handle dev, ctx, q;
  size_t max_threads;
  cl_ulong local_mem;
  cl_handle *mem;           // the current kernel's argument buffers
  size_t *bytes;
  int nargs;
  char name[256], toolchain[256];
  const char *builtins;     // PoCL: templates/pocl_builtins.cl, built in place of opencl-c.h (cl_build); NULL: the header
  unsigned char *flush;     // written before each timed launch: evicts the CPU's caches
  unsigned flushes;
};

// As the CUDA timing flushes the L2, every launch here starts with the caches
// holding none of its data: the OpenCL device is this CPU (PoCL), and writing
// more than its last-level cache from the host evicts it. Without this a
// candidate was timed on inputs and weights warm from its previous run, unlike
// in a forward: BEAM picked kernels 1.6x slower in the forward than HC's.
#define CACHE_FLUSH_BYTES ((size_t)64 << 20)

typedef struct { cl_handle prog, kern; } ClBinary;

static void say(char *err, size_t n, const char *what, cl_int e) {
  const char *name = e == CL_DEVICE_NOT_FOUND ? "CL_DEVICE_NOT_FOUND" : e == CL_PLATFORM_NOT_FOUND_KHR ? "no OpenCL platform (ICD) installed"
                   : e == CL_BUILD_PROGRAM_FAILURE ? "CL_BUILD_PROGRAM_FAILURE" : "";
  snprintf(err, n, "%s: OpenCL error %d%s%s", what, (int)e, *name ? ", " : "", name);
}

static void cl_close(Device *d) {
  if (!d) return;
  for (int i = 0; i < d->nargs; i++)
    if (d->mem[i]) d->clReleaseMemObject(d->mem[i]);
  free(d->mem);
  free(d->bytes);
  free(d->flush);
  if (d->q) d->clReleaseCommandQueue(d->q);
  if (d->ctx) d->clReleaseContext(d->ctx);
  if (d->lib) dlclose(d->lib);
  free(d);
}

static Device *cl_open(bool compile_only, const char *kflags, char *err, size_t n) {
  (void)compile_only, (void)kflags;  // OpenCL compiles for a device, so it needs one either way
  Device *d = xcalloc(1, sizeof *d);
  // NODELETE: the ICD loader and PoCL stay mapped after dlclose, so what they
  // keep to the end is reported by the leak checker against their names
  // (tests/lsan-pocl.supp), not as an unknown module
  d->lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!d->lib) d->lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!d->lib) {
    snprintf(err, n, "cannot load the OpenCL library (libOpenCL.so.1); on Debian: apt-get install ocl-icd-libopencl1 pocl-opencl-icd");
    cl_close(d);
    return NULL;
  }
#define X(ret, name, args) \
  if (!(*(void **)&d->name = dlsym(d->lib, #name))) { \
    snprintf(err, n, "the OpenCL library has no %s", #name); cl_close(d); return NULL; }
  CL_FUNCS(X)
#undef X
  cl_handle plats[16];
  cl_uint np = 0;
  cl_int e = d->clGetPlatformIDs(16, plats, &np);
  if (e != CL_SUCCESS || np == 0) {
    snprintf(err, n, "no OpenCL platform found (error %d); install a driver, e.g. apt-get install pocl-opencl-icd for the CPU", (int)e);
    cl_close(d);
    return NULL;
  }
  char pname[128] = "", pver[128] = "";
  for (cl_uint p = 0; p < np && !d->dev; p++) {  // the first platform with a device
    cl_uint nd = 0;
    if (d->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &d->dev, &nd) != CL_SUCCESS || nd == 0) d->dev = NULL;
    else {
      d->clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
      d->clGetPlatformInfo(plats[p], CL_PLATFORM_VERSION, sizeof pver, pver, NULL);
    }
  }
  if (!d->dev) {
    snprintf(err, n, "no OpenCL device found on %u platform%s", np, np == 1 ? "" : "s");
    cl_close(d);
    return NULL;
  }
  char dname[128] = "", drv[128] = "";
  d->clGetDeviceInfo(d->dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  d->clGetDeviceInfo(d->dev, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
  d->clGetDeviceInfo(d->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_threads, &d->max_threads, NULL);
  d->clGetDeviceInfo(d->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem, &d->local_mem, NULL);
  snprintf(d->name, sizeof d->name, "%.120s (%.120s)", dname, pname);
  int unused;  // test switch FLUXCC_FAULT=pocl-header: PoCL's builds with opencl-c.h, to compare the code with
  if (strstr(pname, "Portable Computing Language") && fault_setting("pocl-header", &unused) != 1) d->builtins = template_text(NULL, "pocl_builtins.cl");
  snprintf(d->toolchain, sizeof d->toolchain, "%.160s; driver %.60s", pver, drv);
  d->ctx = d->clCreateContext(NULL, 1, &d->dev, NULL, NULL, &e);
  if (d->ctx) d->q = d->clCreateCommandQueue(d->ctx, d->dev, CL_QUEUE_PROFILING_ENABLE, &e);
  if (!d->q) {
    say(err, n, "creating an OpenCL context and queue", e);
    cl_close(d);
    return NULL;
  }
  return d;
}

static void cl_describe(Device *d, char *dev, size_t n, char *tc, size_t m) {
  snprintf(dev, n, "%s", d->name);
  snprintf(tc, m, "%s", d->toolchain);
}

// The build log's gist (PoCL's logs are long), its temporary file's path
// ("/cache/tempfile_x3Fq.cl:77:2") said as "line 77:2", the same each run.
static void build_log(Device *d, cl_handle prog, char *err, size_t n) {
  size_t len = 0;
  d->clGetProgramBuildInfo(prog, d->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
  char *log = xcalloc(len + 1, 1);
  d->clGetProgramBuildInfo(prog, d->dev, CL_PROGRAM_BUILD_LOG, len, log, NULL);
  for (char *p, *from = log; (p = strstr(from, ".cl:"));) {
    char *a = p;
    while (a > log && !strchr(" \n\"'", a[-1])) a--;
    from = p + 4;
    if (p - a < 1) continue;  // no name before ".cl": nothing to shorten
    memcpy(a, "line ", 5);    // fits: a name, ".cl" and ":" are at least 5 bytes
    memmove(a + 5, p + 4, strlen(p + 4) + 1);
    from = a + 5;
  }
  char gist[1024];
  log_gist(log, gist, sizeof gist);
  snprintf(err, n, "build failed: %s", gist[0] ? gist : "no log");
  free(log);
}

static void cl_release(Device *d, void *bin) {
  ClBinary *b = bin;
  if (!b) return;
  d->clReleaseKernel(b->kern);
  d->clReleaseProgram(b->prog);
  free(b);
}

// PoCL parses clang's opencl-c.h (0.9 MB) twice per program, to key its cache
// and to compile: ~0.08 s of a program's ~0.15 s before its kernels. Built
// with -D_OPENCL_H_ (the header's guard) after the declarations of the
// builtins we call as the header makes them (templates/pocl_builtins.cl), the
// machine code is the same (a test compares it) and a cold flux-tiny RL search
// ~18% shorter. A build that fails so and not with the header says the list
// misses a builtin: a warning, and the header from then on.
static cl_handle cl_build(Device *d, const char *src, cl_int *e) {
  const char *lean[2] = {d->builtins, src};
  cl_handle prog = d->builtins ? d->clCreateProgramWithSource(d->ctx, 2, lean, NULL, e) : NULL;
  if (prog && (*e = d->clBuildProgram(prog, 1, &d->dev, "-cl-std=CL1.2 -D_OPENCL_H_", NULL, NULL)) == CL_SUCCESS) return prog;
  if (prog) d->clReleaseProgram(prog);
  prog = d->clCreateProgramWithSource(d->ctx, 1, &src, NULL, e);
  if (prog && (*e = d->clBuildProgram(prog, 1, &d->dev, "-cl-std=CL1.2", NULL, NULL)) == CL_SUCCESS && d->builtins) {
    fprintf(stderr, "fluxcc: warning: PoCL: a program built with opencl-c.h and not without it: a builtin missing from "
                    "templates/pocl_builtins.cl (scripts/gen-pocl-builtins.sh); the header from now on\n");
    d->builtins = NULL;
  }
  return prog;
}

// One program defining n kernels: PoCL spends most of a small program's build
// on the program itself (its kernel library linked in and optimized, ~0.3 s),
// so a round's candidates built as one program cost that once. All or none:
// -1 and the log's gist in err, and the caller builds them one at a time.
static int cl_compile_batch(Device *d, const char *src, const char *const *fns, int nk, void **bins, char *err, size_t n) {
  cl_int e;
  cl_handle prog = cl_build(d, src, &e);
  if (!prog) {
    say(err, n, "clCreateProgramWithSource", e);
    return -1;
  }
  if (e != CL_SUCCESS) build_log(d, prog, err, n);
  int made = 0;
  for (; e == CL_SUCCESS && made < nk; made++) {
    cl_handle kern = d->clCreateKernel(prog, fns[made], &e);
    if (!kern) {
      say(err, n, "clCreateKernel", e);
      break;
    }
    ClBinary *b = xcalloc(1, sizeof *b);
    b->prog = prog, b->kern = kern;
    d->clRetainProgram(prog);  // each binary holds the program once (cl_release)
    bins[made] = b;
  }
  d->clReleaseProgram(prog);  // the binaries' references keep it
  if (made == nk) return 0;
  for (int i = 0; i < made; i++) cl_release(d, bins[i]), bins[i] = NULL;
  return -1;
}

static void *cl_compile(Device *d, const char *src, const char *fn, char *err, size_t n) {
  void *bin = NULL;
  return cl_compile_batch(d, src, &fn, 1, &bin, err, n) ? NULL : bin;
}

static int cl_alloc(Device *d, int nargs, const size_t *bytes, char *err, size_t n) {
  for (int i = 0; i < d->nargs; i++)
    if (d->mem[i]) d->clReleaseMemObject(d->mem[i]);
  free(d->mem);
  free(d->bytes);
  d->nargs = nargs;
  d->mem = xcalloc((size_t)nargs + 1, sizeof *d->mem);
  d->bytes = xcalloc((size_t)nargs + 1, sizeof *d->bytes);
  for (int i = 0; i < nargs; i++) {
    cl_int e;
    d->bytes[i] = bytes[i] ? bytes[i] : 1;
    d->mem[i] = d->clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, d->bytes[i], NULL, &e);
    if (!d->mem[i]) {
      char what[96];
      snprintf(what, sizeof what, "allocating %zu bytes for argument %d", d->bytes[i], i);
      say(err, n, what, e);
      return -1;
    }
  }
  return 0;
}

static int cl_upload(Device *d, int arg, const void *src, char *err, size_t n) {
  cl_int e = d->clEnqueueWriteBuffer(d->q, d->mem[arg], 1, 0, d->bytes[arg], src, 0, NULL, NULL);
  if (e != CL_SUCCESS) say(err, n, "clEnqueueWriteBuffer", e);
  return e == CL_SUCCESS ? 0 : -1;
}

static int cl_download(Device *d, int arg, void *dst, char *err, size_t n) {
  cl_int e = d->clEnqueueReadBuffer(d->q, d->mem[arg], 1, 0, d->bytes[arg], dst, 0, NULL, NULL);
  if (e != CL_SUCCESS) say(err, n, "clEnqueueReadBuffer", e);
  return e == CL_SUCCESS ? 0 : -1;
}

static int cl_launch(Device *d, void *bin, const uint32_t grid[3], const uint32_t block[3], double *us, char *err, size_t n) {
  ClBinary *b = bin;
  size_t threads = (size_t)block[0] * block[1] * block[2], limit = 0;
  cl_ulong lmem = 0;
  d->clGetKernelWorkGroupInfo(b->kern, d->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, NULL);
  d->clGetKernelWorkGroupInfo(b->kern, d->dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
  if (threads > d->max_threads || (limit && threads > limit)) {
    snprintf(err, n, "%zu threads per block: the device allows %zu for this kernel", threads, limit ? limit : d->max_threads);
    return -1;
  }
  if (lmem > d->local_mem) {
    snprintf(err, n, "%llu bytes of local memory: the device has %llu", (unsigned long long)lmem, (unsigned long long)d->local_mem);
    return -1;
  }
  for (int i = 0; i < d->nargs; i++) {
    cl_int e = d->clSetKernelArg(b->kern, (cl_uint)i, sizeof(cl_handle), &d->mem[i]);
    if (e != CL_SUCCESS) {
      say(err, n, "clSetKernelArg", e);
      return -1;
    }
  }
  size_t global[3], local[3];
  for (int x = 0; x < 3; x++) local[x] = block[x], global[x] = (size_t)grid[x] * block[x];
  if (us && !d->flush && !(d->flush = malloc(CACHE_FLUSH_BYTES))) {
    snprintf(err, n, "out of memory for the cache flush (%zu bytes)", CACHE_FLUSH_BYTES);
    return -1;
  }
  if (us) memset(d->flush, (int)(++d->flushes & 0xff), CACHE_FLUSH_BYTES);
  cl_handle ev = NULL;
  cl_int e = d->clEnqueueNDRangeKernel(d->q, b->kern, 3, NULL, global, local, 0, NULL, &ev);
  if (e == CL_SUCCESS) e = d->clWaitForEvents(1, &ev);
  cl_ulong t0 = 0, t1 = 0;
  if (e == CL_SUCCESS && us) e = d->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  if (e == CL_SUCCESS && us) e = d->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
  if (ev) d->clReleaseEvent(ev);
  if (e != CL_SUCCESS) {
    say(err, n, "launching the kernel", e);
    return -1;
  }
  if (us) *us = (double)(t1 - t0) * 1e-3;
  return 0;
}

const DeviceOps device_opencl = {
  .name = "opencl", .open = cl_open, .close = cl_close, .describe = cl_describe, .compile = cl_compile,
  .compile_batch = cl_compile_batch, .release = cl_release, .alloc = cl_alloc, .upload = cl_upload, .download = cl_download, .launch = cl_launch,
  .warm_children = true,
};
