// backend_c.c — backend.h on this CPU: the "device" is host memory and the
// kernels are C functions compiled into the executable (kernels/*.c), each
// running its work-groups on OpenMP threads. The generated kernel_table.c
// lists their launchers in schedule order (the schedule's `table`), so a
// launch is table[k](its arguments' addresses).
#define _POSIX_C_SOURCE 200809L

#include "backend.h"
#include "host_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*Launcher)(void *const *args);   // kernel_table.c: one per kernel

struct DevMem {
  unsigned char *block;
};

struct Dev {
  const RtSchedule *s;
  const Layout *L;
  DevMem *m;
  int own;                  // m is this Dev's own block
  unsigned char *pool[NPOOLS];   // in m's block, at L->base
  void **args;              // per launch, its arguments' addresses: arg_bufs order
  char name[320];
};

DevMem *dev_mem_open(uint64_t bytes) {
  DevMem *m = rt_calloc(1, sizeof *m);
  size_t n = (size_t)((bytes + 63) & ~(uint64_t)63);
  if (!(m->block = aligned_alloc(64, n ? n : 64))) {
    fprintf(stderr, "flux: error: out of memory allocating %.1f MiB of device memory\n", bytes / 1048576.0);
    free(m);
    return NULL;
  }
  return m;
}

void dev_mem_close(DevMem *m) {
  if (!m) return;
  free(m->block);
  free(m);
}

Dev *dev_open(const RtSchedule *s, const Layout *L, const char *dir, DevMem *m) {
  (void)dir;  // the kernels are in the executable
  Dev *d = rt_calloc(1, sizeof *d);
  d->s = s;
  d->L = L;
  if (!s->table) {
    fprintf(stderr, "flux: error: schedule.c of %s names no kernel table (a fluxcc bug)\n", s->model);
    dev_close(d);
    return NULL;
  }
  d->own = !m;
  if (!m && !(m = dev_mem_open(L->total))) {
    dev_close(d);
    return NULL;
  }
  d->m = m;
  for (int p = 0; p < NPOOLS; p++) d->pool[p] = m->block + L->base[p];
  size_t nargs = 0;
  for (int i = 0; i < s->nlaunches; i++) nargs += (size_t)s->kernels[s->launches[i].kernel].nargs;
  d->args = rt_calloc(nargs + 1, sizeof *d->args);
  for (int i = 0; i < s->nlaunches; i++) {
    const RtLaunch *l = &s->launches[i];
    for (int a = 0; a < s->kernels[l->kernel].nargs; a++) {
      int b = s->arg_bufs[l->args + a];
      d->args[l->args + a] = s->bufs[b].bytes ? d->pool[L->pool[b]] + L->offset[b] : NULL;
    }
  }
  host_cpu_name(d->name, sizeof d->name);
  return d;
}

void dev_close(Dev *d) {
  if (!d) return;
  if (d->own) dev_mem_close(d->m);
  free(d->args);
  free(d);
}

const char *dev_name(const Dev *d) { return d->name; }

int dev_upload(Dev *d, int pool, uint64_t off, const void *src, uint64_t n) {
  memcpy(d->pool[pool] + off, src, (size_t)n);
  return 0;
}

int dev_download(Dev *d, int pool, uint64_t off, void *dst, uint64_t n) {
  memcpy(dst, d->pool[pool] + off, (size_t)n);
  return 0;
}

int dev_fill(Dev *d, int pool, unsigned char byte) {
  memset(d->pool[pool], byte, (size_t)d->L->bytes[pool]);
  return 0;
}

// A kernel returns when all its work-groups have run: every launch is
// synchronous, and there are no asynchronous errors to attribute.
static void run(Dev *d, int i) {
  const RtLaunch *l = &d->s->launches[i];
  ((const Launcher *)d->s->table)[l->kernel](d->args + l->args);
}

static double wall_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int dev_launch(Dev *d, int i, double *ms, const char **how) {
  double t0 = wall_ms();
  run(d, i);
  *ms = wall_ms() - t0;
  *how = "wall clock around the launch";
  return 0;
}

int dev_forward(Dev *d, int sync_each) {
  (void)sync_each;
  for (int i = 0; i < d->s->nlaunches; i++) run(d, i);
  return 0;
}

int dev_bench(Dev *d, int n, int graph, double *ms, const char **how) {
  dev_forward(d, 0);  // warm-up: OpenMP's threads start
  for (int i = 0; i < n; i++) {
    double t0 = wall_ms();
    dev_forward(d, 0);
    ms[i] = wall_ms() - t0;
  }
  *how = graph ? "timer: wall clock around the forward (no graphs on the C target)" : "timer: wall clock around the forward";
  return 0;
}
