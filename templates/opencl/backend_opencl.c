// backend_opencl.c — backend.h on OpenCL 1.2.
//
// Each kernel file is built as its own program, after kernel_prelude.cl
// (the shared helpers the emitter writes). Device memory is one cl_mem (the
// block, with its context and queue: a DevMem); every buffer is passed to
// kernels as a sub-buffer of it, so that temporaries can share arena memory
// exactly as the schedule planned.
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120

#include "backend.h"

#include <CL/cl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct DevMem {
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q;
  cl_mem block;
  char name[512];
};

struct Dev {
  const RtSchedule *s;
  const Layout *L;
  DevMem *m;
  int own;                  // m is this Dev's own block
  cl_device_id dev;         // m's
  cl_context ctx;           // m's
  cl_command_queue q;       // m's
  cl_program *progs;        // per kernel; NULL where it shares an earlier kernel's file
  cl_kernel *kerns;         // per kernel
  cl_mem *mem;              // per buffer: its sub-buffer of the block (NULL if empty)
  char name[512];
};

static const char *cl_error_name(cl_int e) {
  switch (e) {
#define E(x) case x: return #x;
  E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
  E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
  E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
  E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
  E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
  E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
  E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
  E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE)
  E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE)
  E(CL_INVALID_HOST_PTR) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
  E(CL_INVALID_IMAGE_SIZE) E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
  E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
  E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
  E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
  E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
  E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
  E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
  E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
  E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
  E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";   // the ICD loader found no driver
  }
  return "unknown OpenCL error";
}

// Prints "flux: error: clFoo: CL_BAR (code) while <what>" and returns -1.
static int fail(const char *fn, cl_int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(const char *fn, cl_int e, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "flux: error: %s: %s (%d) while ", fn, cl_error_name(e), (int)e);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  return -1;
}

// CHECK(clFinish, (d->q), "what %d", x): call, and on error print and return -1.
#define CHECK(fn, args, ...)                             \
  do {                                                   \
    cl_int e_ = fn args;                                 \
    if (e_ != CL_SUCCESS) return fail(#fn, e_, __VA_ARGS__); \
  } while (0)

// A whole file as a string; NULL (errno set) if it cannot be read. A FIFO,
// device or directory is refused (EINVAL), not read forever.
static char *read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat sb;
  if (fd < 0) return NULL;
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
    close(fd);
    errno = EINVAL;
    return NULL;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *s = malloc(cap);
  for (;;) {
    if (!s) break;
    n += fread(s + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char *t = realloc(s, cap *= 2);
    if (!t) { free(s); s = NULL; }
    else s = t;
  }
  int bad = !s || ferror(f);
  fclose(f);
  if (bad) {
    free(s);
    errno = errno ? errno : EIO;
    return NULL;
  }
  s[n] = 0;
  *len = n;
  return s;
}

// ---------------------------------------------------------------------------
// Device

// The first GPU of any platform, else the first device at all.
static int pick_device(DevMem *d) {
  cl_uint np = 0;
  cl_int e = clGetPlatformIDs(0, NULL, &np);
  if (e == CL_SUCCESS && np == 0) e = CL_DEVICE_NOT_FOUND;
  if (e != CL_SUCCESS)
    return fail("clGetPlatformIDs", e, "looking for OpenCL platforms (is an ICD such as pocl-opencl-icd installed?)");
  cl_platform_id *ps = rt_calloc(np, sizeof *ps);
  e = clGetPlatformIDs(np, ps, NULL);
  int found = 0;
  for (int pass = 0; pass < 2 && !found && e == CL_SUCCESS; pass++)
    for (cl_uint i = 0; i < np && !found; i++) {
      cl_uint nd = 0;
      cl_device_type t = pass == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
      if (clGetDeviceIDs(ps[i], t, 1, &d->dev, &nd) == CL_SUCCESS && nd > 0) found = 1;
    }
  free(ps);
  if (e != CL_SUCCESS) return fail("clGetPlatformIDs", e, "listing OpenCL platforms");
  if (!found) return fail("clGetDeviceIDs", CL_DEVICE_NOT_FOUND, "looking for any OpenCL device");
  char dn[200] = "", pn[200] = "";
  cl_platform_id p;
  CHECK(clGetDeviceInfo, (d->dev, CL_DEVICE_NAME, sizeof dn - 1, dn, NULL), "asking the device name");
  CHECK(clGetDeviceInfo, (d->dev, CL_DEVICE_PLATFORM, sizeof p, &p, NULL), "asking the device platform");
  CHECK(clGetPlatformInfo, (p, CL_PLATFORM_NAME, sizeof pn - 1, pn, NULL), "asking the platform name");
  snprintf(d->name, sizeof d->name, "%s (OpenCL, %s)", dn, pn);
  return 0;
}

// Builds kernel k: prelude + its file, one program per file.
static int build_kernel(Dev *d, int k, const char *dir, const char *prelude) {
  const RtKernel *K = &d->s->kernels[k];
  // Kernels in the same file share its program.
  for (int j = 0; j < k; j++)
    if (!strcmp(d->s->kernels[j].file, K->file)) {
      cl_int e;   // j is the first kernel of that file: it owns the program
      d->kerns[k] = clCreateKernel(d->progs[j], K->name, &e);
      if (e != CL_SUCCESS) return fail("clCreateKernel", e, "creating kernel '%s' of %s/%s", K->name, dir, K->file);
      return 0;
    }

  size_t plen = strlen(dir) + strlen(K->file) + 2, len;
  char *path = rt_calloc(plen, 1);
  snprintf(path, plen, "%s/%s", dir, K->file);
  char *body = read_file(path, &len);
  if (!body) {
    fprintf(stderr, "flux: error: %s: cannot read kernel '%s': %s\n", path, K->name, strerror(errno));
    free(path);
    return -1;
  }
  // (project.c checked its content hash: the file fluxcc wrote, or --allow-edited)
  // #line makes the build log name the file and line an error is in.
  size_t n = strlen(prelude) + len + strlen(K->file) + 64;
  char *src = rt_calloc(n, 1);
  snprintf(src, n, "#line 1 \"kernel_prelude.cl\"\n%s\n#line 1 \"%s\"\n%s", prelude, K->file, body);
  free(body);
  const char *srcs[1] = {src};
  cl_int e;
  cl_program p = clCreateProgramWithSource(d->ctx, 1, srcs, NULL, &e);
  free(src);
  if (e != CL_SUCCESS) {
    fail("clCreateProgramWithSource", e, "loading %s", path);
    free(path);
    return -1;
  }
  d->progs[k] = p;
  e = clBuildProgram(p, 1, &d->dev, "-cl-std=CL1.2", NULL, NULL);
  if (e != CL_SUCCESS) {
    fail("clBuildProgram", e, "building %s (after kernel_prelude.cl)", path);
    size_t loglen = 0;
    if (clGetProgramBuildInfo(p, d->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen) == CL_SUCCESS && loglen > 1) {
      char *log = rt_calloc(loglen + 1, 1);
      if (clGetProgramBuildInfo(p, d->dev, CL_PROGRAM_BUILD_LOG, loglen, log, NULL) == CL_SUCCESS)
        fprintf(stderr, "%s: build log:\n%s\n", path, log);
      free(log);
    }
    free(path);
    return -1;
  }
  d->kerns[k] = clCreateKernel(p, K->name, &e);
  if (e != CL_SUCCESS) {
    fail("clCreateKernel", e, "creating kernel '%s' of %s", K->name, path);
    free(path);
    return -1;
  }
  cl_uint nargs = 0;
  e = clGetKernelInfo(d->kerns[k], CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
  if (e == CL_SUCCESS && nargs != (cl_uint)K->nargs) {
    fprintf(stderr, "flux: error: %s: kernel '%s' takes %u arguments but the schedule passes %d\n", path, K->name,
            nargs, K->nargs);
    e = CL_INVALID_KERNEL_ARGS;
  } else if (e != CL_SUCCESS) {
    fail("clGetKernelInfo", e, "counting the arguments of kernel '%s' of %s", K->name, path);
  }
  free(path);
  return e == CL_SUCCESS ? 0 : -1;
}

static int build_all(Dev *d, const char *dir) {
  size_t plen = strlen(dir) + 32, len = 0;
  char *path = rt_calloc(plen, 1);
  snprintf(path, plen, "%s/kernel_prelude.cl", dir);
  char *prelude = read_file(path, &len);
  if (!prelude && errno != ENOENT) {
    fprintf(stderr, "flux: error: %s: cannot read: %s\n", path, strerror(errno));
    free(path);
    return -1;
  }
  free(path);
  int rc = 0;
  for (int k = 0; k < d->s->nkernels && rc == 0; k++) rc = build_kernel(d, k, dir, prelude ? prelude : "");
  free(prelude);
  return rc;
}

// Every buffer's sub-buffer of the block, where the layout put it. (Copies
// and fills address the block itself: m->block at L->base[pool] + offset.)
static int make_sub_buffers(Dev *d) {
  cl_uint align_bits = 0;
  CHECK(clGetDeviceInfo, (d->dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL),
        "asking the sub-buffer alignment");
  uint64_t align = align_bits / 8 ? align_bits / 8 : 1;
  static const char *const pool_name[] = {"parameters", "inputs", "arena"};
  for (int i = 0; i < d->s->nbufs; i++) {
    int p = d->L->pool[i];
    uint64_t n = d->s->bufs[i].bytes;
    if (n == 0) continue;   // passed as a NULL buffer
    const char *what = d->s->bufs[i].name;
    cl_buffer_region r = {(size_t)(d->L->base[p] + d->L->offset[i]), (size_t)n};
    if (r.origin % align) {
      fprintf(stderr,
              "flux: error: '%s' is at byte %llu of the device memory (the %s), not a multiple of the device's sub-buffer "
              "alignment (CL_DEVICE_MEM_BASE_ADDR_ALIGN = %llu bytes): compile for a larger arena alignment\n",
              what, (unsigned long long)r.origin, pool_name[p], (unsigned long long)align);
      return -1;
    }
    cl_int e;
    d->mem[i] = clCreateSubBuffer(d->m->block, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
    if (e != CL_SUCCESS)
      return fail("clCreateSubBuffer", e, "making buffer '%s' (bytes %llu..%llu of the device memory: the %s)", what,
                  (unsigned long long)r.origin, (unsigned long long)(r.origin + r.size), pool_name[p]);
  }
  return 0;
}

DevMem *dev_mem_open(uint64_t bytes) {
  DevMem *m = rt_calloc(1, sizeof *m);
  cl_int e = CL_SUCCESS;
  cl_ulong max_alloc = 0;
  if (pick_device(m)) goto fail;
  m->ctx = clCreateContext(NULL, 1, &m->dev, NULL, NULL, &e);
  if (e != CL_SUCCESS) {
    fail("clCreateContext", e, "opening %s", m->name);
    goto fail;
  }
  // Profiling is on for --bench; its cost per launch is negligible.
  m->q = clCreateCommandQueue(m->ctx, m->dev, CL_QUEUE_PROFILING_ENABLE, &e);
  if (e != CL_SUCCESS) {
    fail("clCreateCommandQueue", e, "opening %s", m->name);
    goto fail;
  }
  if ((e = clGetDeviceInfo(m->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL)) != CL_SUCCESS) {
    fail("clGetDeviceInfo", e, "asking the largest allocation");
    goto fail;
  }
  if (bytes > max_alloc) {
    fprintf(stderr, "flux: error: the device memory is %.1f MiB in one buffer but the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE is %.1f MiB\n",
            bytes / 1048576.0, max_alloc / 1048576.0);
    goto fail;
  }
  m->block = clCreateBuffer(m->ctx, CL_MEM_READ_WRITE, bytes ? (size_t)bytes : 1, NULL, &e);
  if (e != CL_SUCCESS) {
    fail("clCreateBuffer", e, "allocating %.1f MiB of device memory on %s", bytes / 1048576.0, m->name);
    goto fail;
  }
  return m;
fail:
  dev_mem_close(m);
  return NULL;
}

void dev_mem_close(DevMem *m) {
  if (!m) return;
  if (m->q) clFinish(m->q);
  if (m->block) clReleaseMemObject(m->block);
  if (m->q) clReleaseCommandQueue(m->q);
  if (m->ctx) clReleaseContext(m->ctx);
  free(m);
}

Dev *dev_open(const RtSchedule *s, const Layout *L, const char *dir, DevMem *m) {
  Dev *d = rt_calloc(1, sizeof *d);
  d->s = s;
  d->L = L;
  d->own = !m;
  d->progs = rt_calloc((size_t)s->nkernels, sizeof *d->progs);
  d->kerns = rt_calloc((size_t)s->nkernels, sizeof *d->kerns);
  d->mem = rt_calloc((size_t)s->nbufs, sizeof *d->mem);
  if (!m && !(m = dev_mem_open(L->total))) goto fail;
  d->m = m, d->dev = m->dev, d->ctx = m->ctx, d->q = m->q;
  memcpy(d->name, m->name, sizeof d->name);
  if (make_sub_buffers(d) || build_all(d, dir)) goto fail;
  return d;
fail:
  dev_close(d);
  return NULL;
}

void dev_close(Dev *d) {
  if (!d) return;
  if (d->q) clFinish(d->q);
  for (int k = 0; k < d->s->nkernels; k++) {
    if (d->kerns[k]) clReleaseKernel(d->kerns[k]);
    if (d->progs[k]) clReleaseProgram(d->progs[k]);
  }
  for (int i = 0; i < d->s->nbufs; i++)
    if (d->mem[i]) clReleaseMemObject(d->mem[i]);
  if (d->own) dev_mem_close(d->m);
  free(d->kerns);
  free(d->progs);
  free(d->mem);
  free(d);
}

const char *dev_name(const Dev *d) { return d->name; }

// ---------------------------------------------------------------------------
// Memory

int dev_upload(Dev *d, int pool, uint64_t off, const void *src, uint64_t n) {
  CHECK(clEnqueueWriteBuffer, (d->q, d->m->block, CL_TRUE, (size_t)(d->L->base[pool] + off), (size_t)n, src, 0, NULL, NULL),
        "uploading %llu bytes at offset %llu", (unsigned long long)n, (unsigned long long)off);
  return 0;
}

int dev_download(Dev *d, int pool, uint64_t off, void *dst, uint64_t n) {
  CHECK(clEnqueueReadBuffer, (d->q, d->m->block, CL_TRUE, (size_t)(d->L->base[pool] + off), (size_t)n, dst, 0, NULL, NULL),
        "downloading %llu bytes at offset %llu", (unsigned long long)n, (unsigned long long)off);
  return 0;
}

int dev_fill(Dev *d, int pool, unsigned char byte) {
  if (d->L->bytes[pool] == 0) return 0;
  CHECK(clEnqueueFillBuffer, (d->q, d->m->block, &byte, 1, (size_t)d->L->base[pool], (size_t)d->L->bytes[pool], 0, NULL, NULL),
        "filling %llu bytes with 0x%02x", (unsigned long long)d->L->bytes[pool], byte);
  CHECK(clFinish, (d->q), "filling %llu bytes with 0x%02x", (unsigned long long)d->L->bytes[pool], byte);
  return 0;
}

// ---------------------------------------------------------------------------
// Launches

// Enqueues launch i; ev (if not NULL) gets its event.
static int launch(Dev *d, int i, cl_event *ev) {
  const RtLaunch *l = &d->s->launches[i];
  const RtKernel *K = &d->s->kernels[l->kernel];
  cl_kernel k = d->kerns[l->kernel];
  for (int a = 0; a < K->nargs; a++) {
    int b = d->s->arg_bufs[l->args + a];
    CHECK(clSetKernelArg, (k, (cl_uint)a, sizeof(cl_mem), &d->mem[b]), "passing buffer '%s' as argument %d of launch %d (%s)",
          d->s->bufs[b].name, a, i, K->name);
  }
  size_t local[3], global[3];
  for (int x = 0; x < 3; x++) {
    local[x] = K->local[x];
    global[x] = (size_t)K->global[x] * K->local[x];
  }
  CHECK(clEnqueueNDRangeKernel, (d->q, k, 3, NULL, global, local, 0, NULL, ev),
        "launching %d: kernel '%s' of %s, %zux%zux%zu work-groups of %zux%zux%zu", i, K->name, K->file,
        global[0] / local[0], global[1] / local[1], global[2] / local[2], local[0], local[1], local[2]);
  return 0;
}

static double wall_ms(void);
static double profiled_ms(cl_event first, cl_event last);

// All launches; first/last get the events of the first and last one.
static int enqueue_forward(Dev *d, int sync_each, cl_event *first, cl_event *last) {
  int n = d->s->nlaunches;
  for (int i = 0; i < n; i++) {
    cl_event *ev = i == 0 ? first : i == n - 1 ? last : NULL;
    if (launch(d, i, ev)) return -1;
    if (sync_each)
      CHECK(clFinish, (d->q), "waiting for launch %d (kernel '%s')", i, d->s->kernels[d->s->launches[i].kernel].name);
  }
  return 0;
}

int dev_launch(Dev *d, int i, double *ms, const char **how) {
  cl_event ev = NULL;
  double t0 = wall_ms();
  if (launch(d, i, &ev)) return -1;
  cl_int e = clFinish(d->q);
  double wall = wall_ms() - t0;
  *ms = e == CL_SUCCESS ? profiled_ms(ev, ev) : -1;
  if (ev) clReleaseEvent(ev);
  if (e != CL_SUCCESS) return fail("clFinish", e, "waiting for launch %d (kernel '%s')", i, d->s->kernels[d->s->launches[i].kernel].name);
  // as in dev_bench: a driver's odd timestamps give way to the wall clock
  *how = "OpenCL profiling events of the launch";
  if (*ms < 0 || *ms > wall * 1.05 + 0.05) *ms = wall, *how = "wall clock around the launch and clFinish (profiling info unusable)";
  return 0;
}

int dev_forward(Dev *d, int sync_each) {
  if (enqueue_forward(d, sync_each, NULL, NULL)) return -1;
  CHECK(clFinish, (d->q), "running the forward (FLUX_SYNC=1 names the failing launch)");
  return 0;
}

static double wall_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// Device time from the start of the first launch to the end of the last.
// Returns < 0 if the profiling info is missing or makes no sense.
static double profiled_ms(cl_event first, cl_event last) {
  cl_ulong t0 = 0, t1 = 0;
  if (clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
      clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS || t1 <= t0)
    return -1;
  return (t1 - t0) * 1e-6;
}

int dev_bench(Dev *d, int n, int graph, double *ms, const char **how) {
  int nl = d->s->nlaunches;
  if (dev_forward(d, 0)) return -1;   // warm-up
  // Device time from profiling events on the first and last launch. Some
  // CPU drivers give missing or odd timestamps: then all runs are timed
  // with the wall clock around clFinish instead.
  double *wall = rt_calloc((size_t)n, sizeof *wall);
  int profiled = nl > 0;
  for (int i = 0; i < n; i++) {
    cl_event first = NULL, last = NULL;
    double t0 = wall_ms();
    int rc = enqueue_forward(d, 0, nl ? &first : NULL, nl > 1 ? &last : NULL);
    cl_int e = rc ? CL_SUCCESS : clFinish(d->q);
    wall[i] = wall_ms() - t0;
    ms[i] = rc || e != CL_SUCCESS || !first ? -1 : profiled_ms(first, last ? last : first);
    if (first) clReleaseEvent(first);
    if (last) clReleaseEvent(last);
    if (rc || e != CL_SUCCESS) {
      free(wall);
      return rc ? -1 : fail("clFinish", e, "running timed forward %d", i);
    }
    if (ms[i] < 0 || ms[i] > wall[i] * 1.05 + 0.05) profiled = 0;
  }
  if (!profiled) memcpy(ms, wall, (size_t)n * sizeof *ms);
  free(wall);
  *how = profiled ? (graph ? "timer: OpenCL profiling events, first launch start to last launch end (no graphs on OpenCL)"
                           : "timer: OpenCL profiling events, first launch start to last launch end")
                  : (graph ? "timer: wall clock around clFinish, profiling info unusable (no graphs on OpenCL)"
                           : "timer: wall clock around clFinish, profiling info unusable");
  return 0;
}
