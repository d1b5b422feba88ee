// libcuda.cc — fluxcc's stand-in for libcuda.so.1: the driver API functions
// compiler/device_cuda.c loads, over the CUDA emulation (flux_emu.cc, linked
// into the same library). Built by `make cuda-stand-in`; used only when asked
// for (FLUXCC_CUDA_LIBS=build/cuda-stand-in/lib64).
//
// It behaves as the driver does where fluxcc can tell: modules are the
// stand-in NVRTC's images (stand_in.h; a real cubin is CUDA_ERROR_INVALID_IMAGE),
// a launch is checked against the hardware's limits with the driver's error
// codes (block and grid sizes, threads against the registers ptxas reported
// and __launch_bounds__, static + dynamic shared memory against the device
// attribute), runs on the emulator (FLUX_EMU_RACECHECK=1 applies), and a
// kernel the emulator finds faulty leaves the context broken, as a GPU fault
// does. Events read the CPU clock. The device's name says it is an emulation,
// so no record can pass for a GPU's. FLUX_STAND_IN_SMEM=N reports N bytes of
// shared memory per block instead of 48 KiB (to test the limit).
#include "flux_emu.h"
#include "stand_in.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long CUdeviceptr;

enum CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
};

enum {
  ATTR_MAX_THREADS_PER_BLOCK = 1,
  ATTR_MAX_BLOCK_DIM_X = 2, ATTR_MAX_BLOCK_DIM_Y = 3, ATTR_MAX_BLOCK_DIM_Z = 4,
  ATTR_MAX_GRID_DIM_X = 5, ATTR_MAX_GRID_DIM_Y = 6, ATTR_MAX_GRID_DIM_Z = 7,
  ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  ATTR_WARP_SIZE = 10,
  ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  ATTR_MULTIPROCESSOR_COUNT = 16,
  ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  FUNC_MAX_THREADS_PER_BLOCK = 0,
  FUNC_SHARED_SIZE_BYTES = 1,
  FUNC_NUM_REGS = 4,
};

// sm_90's limits
enum { MAX_BLOCK_THREADS = 1024, MAX_BLOCK_Z = 64, MAX_GRID_YZ = 65535, REGS_PER_BLOCK = 65536, REG_UNIT = 256, WARP = 32 };
static const unsigned MAX_GRID_X = 0x7fffffffu;

struct Function {
  const FluxEmuKernel *k;          // made by the module's flux_stand_in_NAME(), owned here
  int regs, smem, max_threads;
  Function *next;
};
struct Module {
  void *so;
  StandInImage h;
  Function *fns;                   // freed with the module, as the driver's handles are
};
struct Event {
  double ms;
};
struct Alloc {
  void *p;
  size_t bytes;
};

static struct {
  pthread_mutex_t lock;
  bool init;
  CUresult sticky;                 // a kernel fault: the context is lost
  int smem_limit;
  Alloc *a;                        // live allocations (mmap'ed)
  int na, cap;
} D = {PTHREAD_MUTEX_INITIALIZER, false, CUDA_SUCCESS, 48 << 10, NULL, 0, 0};

#define API extern "C" __attribute__((visibility("default")))
extern "C" {
__attribute__((visibility("default"))) int fluxcc_cuda_stand_in = 1;  // device_cuda.c looks for this symbol
}

#define LIVE() \
  do { \
    if (!D.init) return CUDA_ERROR_NOT_INITIALIZED; \
    if (D.sticky) return D.sticky; \
  } while (0)

API CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
#define N(e) case e: *s = #e; return CUDA_SUCCESS;
    N(CUDA_SUCCESS) N(CUDA_ERROR_INVALID_VALUE) N(CUDA_ERROR_OUT_OF_MEMORY) N(CUDA_ERROR_NOT_INITIALIZED)
    N(CUDA_ERROR_NO_DEVICE) N(CUDA_ERROR_INVALID_DEVICE) N(CUDA_ERROR_INVALID_IMAGE) N(CUDA_ERROR_INVALID_CONTEXT)
    N(CUDA_ERROR_INVALID_HANDLE) N(CUDA_ERROR_NOT_FOUND) N(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) N(CUDA_ERROR_LAUNCH_FAILED)
    N(CUDA_ERROR_NOT_SUPPORTED)
#undef N
  }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuInit(unsigned flags) {
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  const char *s = getenv("FLUX_STAND_IN_SMEM");
  uint64_t v = 48 << 10;
  if (s && *s && (nb_parse_u64(s, 0, 228 << 10, &v))) {
    fprintf(stderr, "cuda stand-in: FLUX_STAND_IN_SMEM='%s': wants a decimal integer from 0 to %d\n", s, 228 << 10);
    return CUDA_ERROR_INVALID_VALUE;
  }
  D.smem_limit = (int)v;
  D.init = true;
  return CUDA_SUCCESS;
}

API CUresult cuDriverGetVersion(int *v) {
  *v = 0;  // no driver: "driver 0.0"
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(int *dev, int ordinal) {
  LIVE();
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *dev = 0;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, int dev) {
  LIVE();
  if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);  // the emulator's workers and race check
  const char *what = strchr(p.name, ',');
  snprintf(name, (size_t)len, "CUDA emulation on the CPU (fluxcc stand-in%s)", what ? what : "");
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  LIVE();
  if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
  switch (attr) {
  case ATTR_MAX_THREADS_PER_BLOCK: *v = MAX_BLOCK_THREADS; break;
  case ATTR_MAX_BLOCK_DIM_X: case ATTR_MAX_BLOCK_DIM_Y: *v = MAX_BLOCK_THREADS; break;
  case ATTR_MAX_BLOCK_DIM_Z: *v = MAX_BLOCK_Z; break;
  case ATTR_MAX_GRID_DIM_X: *v = (int)MAX_GRID_X; break;
  case ATTR_MAX_GRID_DIM_Y: case ATTR_MAX_GRID_DIM_Z: *v = MAX_GRID_YZ; break;
  case ATTR_MAX_SHARED_MEMORY_PER_BLOCK: *v = D.smem_limit; break;
  case ATTR_WARP_SIZE: *v = WARP; break;
  case ATTR_MAX_REGISTERS_PER_BLOCK: *v = REGS_PER_BLOCK; break;
  case ATTR_MULTIPROCESSOR_COUNT: *v = 1; break;
  case ATTR_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
  case ATTR_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

static int the_context;            // the one primary context

API CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  LIVE();
  if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = &the_context;
  return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }

API CUresult cuCtxSetCurrent(void *ctx) {
  if (!D.init) return CUDA_ERROR_NOT_INITIALIZED;
  return ctx == &the_context || !ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

// Device memory is mapped pages (so zeroing a large range can drop them),
// filled with garbage at first, as a GPU's is.
API CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t n) {
  LIVE();
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  memset(p, 0xa5, n);
  pthread_mutex_lock(&D.lock);
  if (D.na == D.cap) {
    int cap = D.cap ? 2 * D.cap : 64;
    Alloc *a = (Alloc *)realloc(D.a, (size_t)cap * sizeof *a);
    if (!a) return pthread_mutex_unlock(&D.lock), munmap(p, n), CUDA_ERROR_OUT_OF_MEMORY;
    D.a = a, D.cap = cap;
  }
  D.a[D.na++] = Alloc{p, n};
  pthread_mutex_unlock(&D.lock);
  *out = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

// the allocation that holds [p, p + n), or NULL
static Alloc *find(CUdeviceptr p, size_t n) {
  for (int i = 0; i < D.na; i++) {
    uintptr_t b = (uintptr_t)D.a[i].p;
    if (p >= b && p - b <= D.a[i].bytes && n <= D.a[i].bytes - (p - b)) return &D.a[i];
  }
  return NULL;
}

API CUresult cuMemFree_v2(CUdeviceptr p) {
  if (!D.init) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&D.lock);
  Alloc *a = find(p, 0);
  if (!a || (uintptr_t)a->p != p) return pthread_mutex_unlock(&D.lock), CUDA_ERROR_INVALID_VALUE;
  munmap(a->p, a->bytes);
  *a = D.a[--D.na];
  if (D.na == 0) free(D.a), D.a = NULL, D.cap = 0;  // the table too, with the last allocation: nothing left when unloaded
  pthread_mutex_unlock(&D.lock);
  return CUDA_SUCCESS;
}

// a copy must lie inside one allocation, as on the GPU
static CUresult in_alloc(CUdeviceptr p, size_t n) {
  pthread_mutex_lock(&D.lock);
  Alloc *a = find(p, n);
  pthread_mutex_unlock(&D.lock);
  return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  LIVE();
  if (CUresult r = in_alloc(dst, n)) return r;
  memcpy((void *)(uintptr_t)dst, src, n);
  return CUDA_SUCCESS;
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  LIVE();
  if (CUresult r = in_alloc(src, n)) return r;
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return CUDA_SUCCESS;
}

// Zeroing whole pages gives them back (they read as zeros again): the L2
// flush before every timed launch costs nothing here.
API CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  LIVE();
  if (CUresult r = in_alloc(p, n)) return r;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), b = (uintptr_t)p, e = b + n;
  uintptr_t pb = (b + page - 1) / page * page, pe = e / page * page;
  if (v == 0 && pe > pb && madvise((void *)pb, pe - pb, MADV_DONTNEED) == 0) {
    memset((void *)b, 0, pb - b);
    memset((void *)pe, 0, e - pe);
  } else memset((void *)b, v, n);
  return CUDA_SUCCESS;
}

struct TlsSearch {
  uintptr_t base;
  size_t bytes;
};

static int tls_of(struct dl_phdr_info *info, size_t, void *arg) {
  TlsSearch *t = (TlsSearch *)arg;
  if (info->dlpi_addr != t->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_TLS) t->bytes = info->dlpi_phdr[i].p_memsz;
  return 1;
}

// A module is the image's shared object, written to a file of its own name
// (the loader would hand back an earlier module loaded from the same name),
// loaded, and unlinked.
API CUresult cuModuleLoadData(void **mod, const void *image) {
  LIVE();
  StandInImage h;
  if (!image) return CUDA_ERROR_INVALID_VALUE;
  memcpy(&h, image, sizeof h);
  if (memcmp(h.magic, STAND_IN_MAGIC, sizeof h.magic)) return CUDA_ERROR_INVALID_IMAGE;  // a real cubin or PTX
  const char *tmp = getenv("TMPDIR");
  char path[4200];
  snprintf(path, sizeof path, "%.4000s/fluxcc-stand-in-module-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  const char *s = (const char *)image + sizeof h;
  bool ok = true;
  for (size_t left = h.size; left && ok;) {
    ssize_t w = write(fd, s, left);
    ok = w > 0;
    if (ok) s += w, left -= (size_t)w;
  }
  close(fd);
  void *so = ok ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  unlink(path);
  if (!so) {
    if (ok) fprintf(stderr, "cuda stand-in: %s\n", dlerror());
    return ok ? CUDA_ERROR_INVALID_IMAGE : CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (h.smem < 0) {  // no ptxas report: __shared__ arrays are the object's thread-local data
    struct link_map *lm = NULL;
    TlsSearch t = {0, 0};
    if (dlinfo(so, RTLD_DI_LINKMAP, &lm) == 0 && lm) t.base = lm->l_addr, dl_iterate_phdr(tls_of, &t);
    h.smem = (int32_t)t.bytes;
  }
  Module *m = (Module *)calloc(1, sizeof *m);
  if (!m) return dlclose(so), CUDA_ERROR_OUT_OF_MEMORY;
  m->so = so, m->h = h;
  *mod = m;
  return CUDA_SUCCESS;
}

API CUresult cuModuleUnload(void *mod) {
  if (!mod) return CUDA_ERROR_INVALID_HANDLE;
  Module *m = (Module *)mod;
  for (Function *f = m->fns, *next; f; f = next) {
    next = f->next;
    delete f->k;
    free(f);
  }
  dlclose(m->so);
  free(m);
  return CUDA_SUCCESS;
}

// Threads per block the registers allow: each warp holds regs x 32 registers
// in units of 256, out of 64 Ki per block; __launch_bounds__ caps it too.
static int threads_allowed(const StandInImage *h) {
  int t = MAX_BLOCK_THREADS;
  if (h->regs > 0) {
    int per_warp = (h->regs * WARP + REG_UNIT - 1) / REG_UNIT * REG_UNIT;
    int warps = REGS_PER_BLOCK / per_warp;
    if (warps * WARP < t) t = warps * WARP;
  }
  if (h->bounds > 0 && h->bounds < t) t = h->bounds;
  return t;
}

API CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
  LIVE();
  if (!mod || !name) return CUDA_ERROR_INVALID_VALUE;
  Module *m = (Module *)mod;
  char sym[512];
  if ((size_t)snprintf(sym, sizeof sym, STAND_IN_PREFIX "%s", name) >= sizeof sym) return CUDA_ERROR_NOT_FOUND;
  const void *(*get)(void) = (const void *(*)(void))dlsym(m->so, sym);
  if (!get) return CUDA_ERROR_NOT_FOUND;
  Function *f = (Function *)calloc(1, sizeof *f);
  if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
  f->k = (const FluxEmuKernel *)get();
  f->regs = m->h.regs > 0 ? m->h.regs : 0;
  f->smem = m->h.smem;
  f->max_threads = threads_allowed(&m->h);
  f->next = m->fns, m->fns = f;
  *fn = f;
  return CUDA_SUCCESS;
}

API CUresult cuFuncGetAttribute(int *v, int attr, void *fn) {
  LIVE();
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  Function *f = (Function *)fn;
  switch (attr) {
  case FUNC_MAX_THREADS_PER_BLOCK: *v = f->max_threads; break;
  case FUNC_SHARED_SIZE_BYTES: *v = f->smem; break;
  case FUNC_NUM_REGS: *v = f->regs; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                            void *stream, void **args, void **extra) {
  LIVE();
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  if (stream || extra || (!args && ((Function *)fn)->k->nargs)) return CUDA_ERROR_INVALID_VALUE;
  Function *f = (Function *)fn;
  uint64_t threads = (uint64_t)bx * by * bz;
  if (!gx || !gy || !gz || !bx || !by || !bz || gx > MAX_GRID_X || gy > MAX_GRID_YZ || gz > MAX_GRID_YZ || bx > MAX_BLOCK_THREADS ||
      by > MAX_BLOCK_THREADS || bz > MAX_BLOCK_Z || threads > MAX_BLOCK_THREADS)
    return CUDA_ERROR_INVALID_VALUE;
  if ((uint64_t)f->smem + smem > (uint64_t)D.smem_limit) return CUDA_ERROR_INVALID_VALUE;
  if (threads > (uint64_t)f->max_threads) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  cudaError_t e = cudaLaunchKernel(f->k, dim3(gx, gy, gz), dim3(bx, by, bz), args, smem, NULL);
  if (e == cudaErrorLaunchFailure) return D.sticky = CUDA_ERROR_LAUNCH_FAILED;
  return e ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

API CUresult cuEventCreate(void **e, unsigned flags) {
  LIVE();
  (void)flags;
  *e = calloc(1, sizeof(Event));
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

// launches finish before they return, so an event's time is when it is recorded
API CUresult cuEventRecord(void *e, void *stream) {
  LIVE();
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  if (stream) return CUDA_ERROR_INVALID_VALUE;
  ((Event *)e)->ms = now_ms();
  return CUDA_SUCCESS;
}

API CUresult cuEventSynchronize(void *e) {
  LIVE();
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  LIVE();
  if (!a || !b) return CUDA_ERROR_INVALID_HANDLE;
  *ms = (float)(((Event *)b)->ms - ((Event *)a)->ms);
  return CUDA_SUCCESS;
}

API CUresult cuEventDestroy_v2(void *e) {
  free(e);
  return CUDA_SUCCESS;
}

// The real NVRTC, which the stand-in NVRTC calls, opens libcuda.so.1 itself
// and asks for the driver's private tables: there are none here.
API CUresult cuGetExportTable(const void **table, const void *id) {
  (void)id;
  if (table) *table = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}
