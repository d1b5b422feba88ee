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
// does. Memory is checked as a GPU's is, and more closely: a kernel's load or
// store outside its allocations is CUDA_ERROR_ILLEGAL_ADDRESS (cuMemAlloc's
// guards, below), never a write into fluxcc's own memory. A broken context
// stays broken until it is destroyed (the primary context's last release),
// and the next retain makes a new one. Events read the CPU clock. The
// device's name says it is an emulation, so no record can pass for a GPU's.
// FLUX_STAND_IN_SMEM=N reports N bytes of shared memory per block instead of
// 48 KiB (to test the limit).
#include "flux_emu.h"
#include "stand_in.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
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
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
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
  Module *next;                    // the context's modules: they go with it
};
struct Event {
  double ms;
};
struct Alloc {
  char *map;                       // its reservation: guard, its pages, guard
  size_t guard, pages;
  char *p;                         // what cuMemAlloc returned: the last bytes of its pages but under 256
  size_t bytes;
};

static struct {
  pthread_mutex_t lock;
  bool init;
  CUresult sticky;                 // a kernel fault: the context is lost
  int smem_limit;
  int retained;                    // the primary context's retains; at the last release it is destroyed
  Alloc *a;                        // live allocations (mmap'ed)
  int na, cap;
  Module *mods;                    // loaded modules
  char why[256];                   // what cuInit refused, for fluxcc_stand_in_why()
} D = {PTHREAD_MUTEX_INITIALIZER, false, CUDA_SUCCESS, 48 << 10, 0, NULL, 0, 0, NULL, ""};

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
    N(CUDA_ERROR_INVALID_HANDLE) N(CUDA_ERROR_NOT_FOUND) N(CUDA_ERROR_ILLEGAL_ADDRESS) N(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    N(CUDA_ERROR_LAUNCH_FAILED)
    N(CUDA_ERROR_NOT_SUPPORTED)
#undef N
  }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

// Why cuInit failed, in words (device_cuda.c looks for this function: a
// driver's error code alone would send the user to nvidia-smi).
API const char *fluxcc_stand_in_why(void) { return D.why; }

API CUresult cuInit(unsigned flags) {
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  const char *s = getenv("FLUX_STAND_IN_SMEM");
  uint64_t v = 48 << 10;
  if (s && *s && (nb_parse_u64(s, 0, 228 << 10, &v))) {
    snprintf(D.why, sizeof D.why, "FLUX_STAND_IN_SMEM='%.100s': wants a decimal integer from 0 to %d (the shared memory per block the stand-in reports)",
             s, 228 << 10);
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

// A retain of a broken context succeeds (the calls in it fail): releasing it
// is how a program gets rid of it.
API CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  if (!D.init) return CUDA_ERROR_NOT_INITIALIZED;
  if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&D.lock);
  D.retained++;
  pthread_mutex_unlock(&D.lock);
  *ctx = &the_context;
  return CUDA_SUCCESS;
}

static void module_free(Module *m);

// The last release destroys the context, as the driver's does: its memory and
// modules are gone, and so is a kernel's fault; the next retain makes a new one.
API CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
  if (!D.init) return CUDA_ERROR_NOT_INITIALIZED;
  if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&D.lock);
  if (D.retained == 0) return pthread_mutex_unlock(&D.lock), CUDA_ERROR_INVALID_CONTEXT;
  if (--D.retained == 0) {
    for (int i = 0; i < D.na; i++) munmap(D.a[i].map, D.a[i].pages + 2 * D.a[i].guard);
    free(D.a), D.a = NULL, D.na = D.cap = 0;
    for (Module *m = D.mods, *next; m; m = next) next = m->next, module_free(m);
    D.mods = NULL;
    D.sticky = CUDA_SUCCESS;
    cudaDeviceReset();  // the emulator's own record of the fault
  }
  pthread_mutex_unlock(&D.lock);
  return CUDA_SUCCESS;
}

API CUresult cuCtxSetCurrent(void *ctx) {
  if (!D.init) return CUDA_ERROR_NOT_INITIALIZED;
  return ctx == &the_context || !ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

// Device memory is mapped pages (so zeroing a large range can drop them),
// filled with garbage at first, as a GPU's is. Each allocation lies alone in
// a reservation: GUARD bytes of PROT_NONE pages on either side of its own
// pages, and it ends within 256 bytes of the upper guard (cuMemAlloc's
// alignment is 256). A kernel reaches memory as p[i] with an int i and
// elements of at most 8 bytes, so within 16 GiB of an allocation: an access
// that misses it faults in its guards (CUDA_ERROR_ILLEGAL_ADDRESS), however
// far it goes, and cannot reach other memory. The bytes between the
// allocation and its pages (under a page before it, under 256 after) hold
// PAD, checked after every launch. Where the address space is too short for
// such guards (ulimit -v) they are a page.
#define GUARD ((size_t)16 << 30)
enum { PAD = 0xc3 };

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

API CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t n) {
  LIVE();
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  size_t pg = page_size();
  if (n > ((size_t)1 << 46)) return CUDA_ERROR_OUT_OF_MEMORY;  // more than any mapping holds (and the sums below stay small)
  size_t a = (n + 255) / 256 * 256, pages = (a + pg - 1) / pg * pg, guard = GUARD;
  void *map = mmap(NULL, pages + 2 * guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) guard = pg, map = mmap(NULL, pages + 2 * guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  char *own = (char *)map + guard, *p = own + pages - a;
  if (mprotect(own, pages, PROT_READ | PROT_WRITE)) return munmap(map, pages + 2 * guard), CUDA_ERROR_OUT_OF_MEMORY;
  memset(own, PAD, (size_t)(p - own));
  memset(p, 0xa5, n);
  memset(p + n, PAD, a - n);
  pthread_mutex_lock(&D.lock);
  if (D.na == D.cap) {
    int cap = D.cap ? 2 * D.cap : 64;
    Alloc *t = (Alloc *)realloc(D.a, (size_t)cap * sizeof *t);
    if (!t) return pthread_mutex_unlock(&D.lock), munmap(map, pages + 2 * guard), CUDA_ERROR_OUT_OF_MEMORY;
    D.a = t, D.cap = cap;
  }
  D.a[D.na++] = Alloc{(char *)map, guard, pages, p, n};
  pthread_mutex_unlock(&D.lock);
  *out = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

// [b, e) all PAD, else the first byte that is not
static const char *unpadded(const char *b, const char *e) {
  for (; b < e; b++)
    if ((unsigned char)*b != PAD) return b;
  return NULL;
}

// The first allocation whose padding a launch changed (a store just before
// it or just past it that stayed on its pages), or NULL; *at: the changed
// byte's offset from the allocation's start (negative: before it).
static const Alloc *overrun(long long *at) {
  for (int i = 0; i < D.na; i++) {
    const Alloc *x = &D.a[i];
    const char *own = x->map + x->guard, *bad = unpadded(own, x->p);
    if (!bad) bad = unpadded(x->p + x->bytes, own + x->pages);
    if (bad) return *at = (long long)(bad - x->p), x;
  }
  return NULL;
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
  munmap(a->map, a->pages + 2 * a->guard);
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
  pthread_mutex_lock(&D.lock);
  m->next = D.mods, D.mods = m;
  pthread_mutex_unlock(&D.lock);
  *mod = m;
  return CUDA_SUCCESS;
}

static void module_free(Module *m) {
  for (Function *f = m->fns, *next; f; f = next) {
    next = f->next;
    delete f->k;
    free(f);
  }
  dlclose(m->so);
  free(m);
}

// one of the context's modules: a handle from a destroyed context is not
API CUresult cuModuleUnload(void *mod) {
  pthread_mutex_lock(&D.lock);
  Module **at = &D.mods;
  while (*at && *at != mod) at = &(*at)->next;
  Module *m = *at;
  if (m) *at = m->next;
  pthread_mutex_unlock(&D.lock);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  module_free(m);
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
  if (e == cudaErrorIllegalAddress) return D.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;  // the emulator said where
  if (e) return CUDA_ERROR_INVALID_VALUE;
  long long at = 0;
  pthread_mutex_lock(&D.lock);
  const Alloc *x = overrun(&at);
  if (x)
    fprintf(stderr, "flux-emu: kernel %s: a store at byte %lld of the %zu-byte allocation at %p, outside it\n", f->k->name, at,
            x->bytes, (void *)x->p);
  pthread_mutex_unlock(&D.lock);
  return x ? D.sticky = CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_SUCCESS;
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
