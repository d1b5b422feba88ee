// backend.h — what the host program (flux_main.h) needs from a device: one
// implementation per target (backend_cuda.cu, backend_opencl.c), chosen by
// the Makefile.
//
// Every function that can fail prints one readable message to stderr (the
// API call, its error name and what was being done) and returns -1 / NULL;
// the caller only cleans up and exits.
#ifndef BACKEND_H
#define BACKEND_H

#include "flux_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

// Device memory is one allocation (the "block") holding three pools at
// Layout.base: all parameters, all inputs, and the arena with outputs and
// temporaries at their schedule offsets. A program opens its own block; a
// pipeline opens one for all its stages (dev_mem_open, sized by the stage
// that needs most), so nothing is allocated between stages and a device
// without room for the pipeline says so before the first weights load.
enum { POOL_PARAMS, POOL_INPUTS, POOL_ARENA, NPOOLS };

typedef struct {
  uint64_t bytes[NPOOLS];   // size of each pool
  uint64_t base[NPOOLS];    // each pool's byte offset in the block
  uint64_t total;           // the block's bytes
  int *pool;                // per buffer id: its pool
  uint64_t *offset;         // per buffer id: its byte offset in the pool
} Layout;

typedef struct Dev Dev;
typedef struct DevMem DevMem;

// zeroed memory or exit 3 with a message (buffers.c; the backends use it too)
void *rt_calloc(size_t n, size_t size);

// Picks the device and allocates a block of `bytes` (OpenCL: also its
// context and queue, which every Dev opened on it shares).
DevMem *dev_mem_open(uint64_t bytes);
void dev_mem_close(DevMem *m);                // NULL is fine

// Opens s on the block m (NULL: its own block of L->total bytes, closed with
// the Dev) and prepares every kernel (OpenCL: builds <dir>/<kernel.file>
// after <dir>/kernel_prelude.cl). s, L and m must outlive the Dev.
Dev *dev_open(const RtSchedule *s, const Layout *L, const char *dir, DevMem *m);
void dev_close(Dev *d);                       // NULL is fine
const char *dev_name(const Dev *d);           // "NVIDIA H200 (CUDA, sm_90, runtime 13.0, driver 13.0)"

// Synchronous copies between host memory and pool bytes [off, off+n).
// dev_upload may be called from any thread, one call at a time.
int dev_upload(Dev *d, int pool, uint64_t off, const void *src, uint64_t n);
int dev_download(Dev *d, int pool, uint64_t off, void *dst, uint64_t n);
int dev_fill(Dev *d, int pool, unsigned char byte);   // every byte of the pool

// All launches in order, then wait. sync_each waits after every launch so
// that an asynchronous device error names the launch that caused it.
int dev_forward(Dev *d, int sync_each);

// Launch i alone and wait for it; *ms is its device time (--profile): events
// on CUDA, profiling events on OpenCL (the wall clock where a driver's are
// unusable), the wall clock on C. *how names that timer.
int dev_launch(Dev *d, int i, double *ms, const char **how);

// One warm-up forward, then n timed ones: ms[i] is the device time of
// forward i. graph asks for a CUDA Graph replay (ignored where there is
// none); *how says which timer and whether a graph was used.
int dev_bench(Dev *d, int n, int graph, double *ms, const char **how);

#ifdef __cplusplus
}
#endif
#endif
