// backend_cuda.cu — backend.h on the CUDA runtime API.
//
// The kernels are compiled into the executable (kernels/*.cu), and the
// generated kernel_table.cu lists their host stubs in schedule order (the
// schedule's `table`), so a launch is cudaLaunchKernel(table[k], ...). Everything runs on
// one non-blocking stream; copies go through it too, so that they are
// ordered with the launches without device-wide synchronization.
#include "backend.h"

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// kernel_table.cu's host stubs, one per kernel
static const void *stub(const RtSchedule *s, int k) { return ((const void *const *)s->table)[k]; }

struct DevMem {
  char *block;
};

struct Dev {
  const RtSchedule *s;
  const Layout *L;
  DevMem *m;
  int own;                 // m is this Dev's own block
  cudaStream_t stream;
  cudaEvent_t ev[2];
  char *pool[NPOOLS];      // in m's block, at L->base
  void **ptr;              // per buffer: its device address
  void ***args;            // per launch: pointers to its argument values (into ptr)
  char name[320];
};

// Prints "flux: error: cudaFoo: cudaErrorBar (text) while <what>", returns -1.
static int fail(const char *fn, cudaError_t e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(const char *fn, cudaError_t e, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "flux: error: %s: %s (%s) while ", fn, cudaGetErrorName(e), cudaGetErrorString(e));
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  return -1;
}

// CHECK(cudaFoo, (args), "what %d", x): call, and on error print and return -1.
#define CHECK(fn, args, ...)                                  \
  do {                                                        \
    cudaError_t e_ = fn args;                                 \
    if (e_ != cudaSuccess) return fail(#fn, e_, __VA_ARGS__); \
  } while (0)

static const char *const pool_name[] = {"parameters", "inputs", "arena"};

static int setup(Dev *d) {
  const RtSchedule *s = d->s;
  int dev = 0, rt = 0, drv = 0;
  cudaDeviceProp p;
  CHECK(cudaGetDevice, (&dev), "choosing a CUDA device (is there a GPU and a driver?)");
  CHECK(cudaGetDeviceProperties, (&p, dev), "asking the properties of device %d", dev);
  CHECK(cudaRuntimeGetVersion, (&rt), "asking the CUDA runtime version");
  CHECK(cudaDriverGetVersion, (&drv), "asking the CUDA driver version");
  snprintf(d->name, sizeof d->name, "%.256s (CUDA, sm_%d%d, runtime %d.%d, driver %d.%d)", p.name, p.major, p.minor,
           rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10);
  CHECK(cudaStreamCreateWithFlags, (&d->stream, cudaStreamNonBlocking), "creating a stream on %s", p.name);
  for (int i = 0; i < 2; i++) CHECK(cudaEventCreate, (&d->ev[i]), "creating timing events");

  // Every kernel pointer must be a registered kernel; asking its attributes
  // also loads it now (CUDA loads modules lazily), not in the first forward.
  for (int k = 0; k < s->nkernels; k++) {
    const RtKernel *K = &s->kernels[k];
    cudaFuncAttributes a;
    if (!s->table || !stub(s, k)) {
      fprintf(stderr, "flux: error: kernel_table.cu: no entry for kernel %d '%s' (%s)\n", k, K->name, K->file);
      return -1;
    }
    CHECK(cudaFuncGetAttributes, (&a, stub(s, k)), "loading kernel %d '%s' of %s", k, K->name, K->file);
    unsigned threads = K->local[0] * K->local[1] * K->local[2];
    if ((int)threads > a.maxThreadsPerBlock) {
      fprintf(stderr, "flux: error: kernel '%s' of %s: blocks of %ux%ux%u threads but it allows at most %d "
              "(%d registers per thread)\n", K->name, K->file, K->local[0], K->local[1], K->local[2],
              a.maxThreadsPerBlock, a.numRegs);
      return -1;
    }
  }

  for (int i = 0; i < NPOOLS; i++) d->pool[i] = d->m->block + d->L->base[i];
  for (int b = 0; b < s->nbufs; b++)
    d->ptr[b] = s->bufs[b].bytes ? d->pool[d->L->pool[b]] + d->L->offset[b] : NULL;
  for (int l = 0; l < s->nlaunches; l++) {
    const RtLaunch *la = &s->launches[l];
    int n = s->kernels[la->kernel].nargs;
    d->args[l] = (void **)rt_calloc((size_t)n, sizeof(void *));
    for (int a = 0; a < n; a++) d->args[l][a] = &d->ptr[s->arg_bufs[la->args + a]];
  }
  return 0;
}

static int mem_alloc(DevMem *m, uint64_t bytes) {
  int dev = 0;
  CHECK(cudaGetDevice, (&dev), "choosing a CUDA device (is there a GPU and a driver?)");
  if (bytes) CHECK(cudaMalloc, ((void **)&m->block, (size_t)bytes), "allocating %.1f MiB of device memory on device %d", bytes / 1048576.0, dev);
  return 0;
}

DevMem *dev_mem_open(uint64_t bytes) {
  DevMem *m = (DevMem *)rt_calloc(1, sizeof *m);
  if (mem_alloc(m, bytes)) {
    free(m);
    return NULL;
  }
  return m;
}

void dev_mem_close(DevMem *m) {
  if (!m) return;
  if (m->block) cudaFree(m->block);
  free(m);
}

Dev *dev_open(const RtSchedule *s, const Layout *L, const char *dir, DevMem *m) {
  (void)dir;   // the kernels are linked in
  Dev *d = (Dev *)rt_calloc(1, sizeof *d);
  d->s = s;
  d->L = L;
  d->own = !m;
  d->ptr = (void **)rt_calloc((size_t)s->nbufs, sizeof *d->ptr);
  d->args = (void ***)rt_calloc((size_t)s->nlaunches, sizeof *d->args);
  if (!m) m = dev_mem_open(L->total);
  d->m = m;
  if (!m || setup(d)) {
    dev_close(d);
    return NULL;
  }
  return d;
}

// Errors here are not reported: after a device fault every call fails the
// same way, and the fault itself has been reported already.
void dev_close(Dev *d) {
  if (!d) return;
  if (d->stream) cudaStreamSynchronize(d->stream);
  if (d->own) dev_mem_close(d->m);
  for (int i = 0; i < 2; i++)
    if (d->ev[i]) cudaEventDestroy(d->ev[i]);
  if (d->stream) cudaStreamDestroy(d->stream);
  for (int l = 0; l < d->s->nlaunches; l++) free(d->args[l]);
  free(d->args);
  free(d->ptr);
  free(d);
}

const char *dev_name(const Dev *d) { return d->name; }

// ---------------------------------------------------------------------------
// Memory

int dev_upload(Dev *d, int pool, uint64_t off, const void *src, uint64_t n) {
  CHECK(cudaMemcpyAsync, (d->pool[pool] + off, src, (size_t)n, cudaMemcpyHostToDevice, d->stream),
        "uploading %llu bytes to the %s at offset %llu", (unsigned long long)n, pool_name[pool], (unsigned long long)off);
  CHECK(cudaStreamSynchronize, (d->stream), "uploading %llu bytes to the %s", (unsigned long long)n, pool_name[pool]);
  return 0;
}

int dev_download(Dev *d, int pool, uint64_t off, void *dst, uint64_t n) {
  CHECK(cudaMemcpyAsync, (dst, d->pool[pool] + off, (size_t)n, cudaMemcpyDeviceToHost, d->stream),
        "downloading %llu bytes of the %s at offset %llu", (unsigned long long)n, pool_name[pool], (unsigned long long)off);
  CHECK(cudaStreamSynchronize, (d->stream), "downloading %llu bytes of the %s", (unsigned long long)n, pool_name[pool]);
  return 0;
}

int dev_fill(Dev *d, int pool, unsigned char byte) {
  size_t n = (size_t)d->L->bytes[pool];
  if (n == 0) return 0;
  CHECK(cudaMemsetAsync, (d->pool[pool], byte, n, d->stream), "filling the %s with 0x%02x", pool_name[pool], byte);
  CHECK(cudaStreamSynchronize, (d->stream), "filling the %s with 0x%02x", pool_name[pool], byte);
  return 0;
}

// ---------------------------------------------------------------------------
// Launches

static int launch(Dev *d, int l, int sync) {
  const RtSchedule *s = d->s;
  const RtKernel *K = &s->kernels[s->launches[l].kernel];
  dim3 grid(K->global[0], K->global[1], K->global[2]), block(K->local[0], K->local[1], K->local[2]);
  CHECK(cudaLaunchKernel, (stub(s, s->launches[l].kernel), grid, block, d->args[l], 0, d->stream),
        "launching %d: kernel '%s' of %s, grid %ux%ux%u, block %ux%ux%u", l, K->name, K->file, grid.x, grid.y,
        grid.z, block.x, block.y, block.z);
  if (sync) CHECK(cudaStreamSynchronize, (d->stream), "running launch %d: kernel '%s' of %s", l, K->name, K->file);
  return 0;
}

static int enqueue_forward(Dev *d, int sync_each) {
  for (int l = 0; l < d->s->nlaunches; l++)
    if (launch(d, l, sync_each)) return -1;
  return 0;
}

int dev_launch(Dev *d, int l, double *ms, const char **how) {
  float t = 0;
  CHECK(cudaEventRecord, (d->ev[0], d->stream), "starting the timer of launch %d", l);
  if (launch(d, l, 0)) return -1;
  CHECK(cudaEventRecord, (d->ev[1], d->stream), "stopping the timer of launch %d", l);
  CHECK(cudaEventSynchronize, (d->ev[1]), "running launch %d: kernel '%s'", l, d->s->kernels[d->s->launches[l].kernel].name);
  CHECK(cudaEventElapsedTime, (&t, d->ev[0], d->ev[1]), "reading the timer of launch %d", l);
  *ms = t;
  *how = "CUDA events around the launch";
  return 0;
}

int dev_forward(Dev *d, int sync_each) {
  if (enqueue_forward(d, sync_each)) return -1;
  CHECK(cudaStreamSynchronize, (d->stream), "running the forward (FLUX_SYNC=1 names the failing launch)");
  return 0;
}

// The forward captured into a CUDA Graph once, for replay.
static int capture(Dev *d, cudaGraphExec_t *exec) {
  cudaGraph_t g = NULL;
  CHECK(cudaStreamBeginCapture, (d->stream, cudaStreamCaptureModeThreadLocal), "starting to capture the forward");
  int rc = enqueue_forward(d, 0);
  cudaError_t e = cudaStreamEndCapture(d->stream, &g);   // always, to leave capture mode
  if (rc == 0 && e != cudaSuccess) rc = fail("cudaStreamEndCapture", e, "capturing the forward");
  if (rc == 0) {
    e = cudaGraphInstantiate(exec, g, 0);
    if (e != cudaSuccess) rc = fail("cudaGraphInstantiate", e, "instantiating the graph of %d launches", d->s->nlaunches);
  }
  if (g) cudaGraphDestroy(g);
  return rc;
}

// One forward between the two events: plain launches or a graph replay.
static int timed(Dev *d, cudaGraphExec_t exec, double *ms) {
  float t = 0;
  CHECK(cudaEventRecord, (d->ev[0], d->stream), "starting the timer");
  if (exec) CHECK(cudaGraphLaunch, (exec, d->stream), "replaying the graph of the forward");
  else if (enqueue_forward(d, 0)) return -1;
  CHECK(cudaEventRecord, (d->ev[1], d->stream), "stopping the timer");
  CHECK(cudaEventSynchronize, (d->ev[1]), "running a timed forward");
  CHECK(cudaEventElapsedTime, (&t, d->ev[0], d->ev[1]), "reading the timer");
  *ms = t;
  return 0;
}

int dev_bench(Dev *d, int n, int graph, double *ms, const char **how) {
  cudaGraphExec_t exec = NULL;
  if (graph && capture(d, &exec)) return -1;
  double warm;
  int rc = timed(d, exec, &warm);   // warm-up
  for (int i = 0; i < n && rc == 0; i++) rc = timed(d, exec, &ms[i]);
  if (exec) cudaGraphExecDestroy(exec);
  *how = graph ? "CUDA Graph (captured once, replayed per forward), timer: CUDA events around each replay"
               : "timer: CUDA events around the launches of each forward";
  return rc;
}
