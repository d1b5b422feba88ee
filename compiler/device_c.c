// device_c.c — the measuring layer of the C target: each candidate is built
// by the system C compiler into a shared object (with the flags the emitted
// Makefile builds kernels with), loaded, and called through its launcher;
// its time is the wall clock around that call, on this CPU's cores (OpenMP).
#include "fluxcc.h"
#include "../templates/c/host_cpu.h"  // the C backend's, so both name the CPU alike

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAXFLAGS 32

struct Device {
  char cc[256];             // $CC, else cc
  char flags[512];          // the target's kflags (the emitted Makefile's KFLAGS)
  char split[512];          // the same, split into argv's words
  char *argv[MAXFLAGS + 8]; // cc, the flags, then per compile: -shared -fPIC -o SO SRC
  int nflags;
  void *pin;                // the probe's object, never unloaded: it keeps the OpenMP runtime mapped
  void **mem;               // the current kernel's argument buffers
  size_t *bytes;
  int nargs;
  char name[256], toolchain[512];
  unsigned char *flush;     // written before each timed launch: evicts the CPU's caches (as device_opencl.c)
  unsigned flushes;
};

#define CACHE_FLUSH_BYTES ((size_t)64 << 20)

typedef struct { void *so; void (*launch)(void *const *); } CBinary;

// The kernel flags are the C target's (its entry in target.c), which the
// emitted Makefile's KFLAGS line holds too: a search times what the project builds.
static void kernel_flags(Device *d, const char *kflags) {
  snprintf(d->flags, sizeof d->flags, "%s", kflags ? kflags : "");
  const char *cc = getenv("CC");
  snprintf(d->cc, sizeof d->cc, "%s", cc && *cc ? cc : "cc");
  d->argv[d->nflags++] = d->cc;
  snprintf(d->split, sizeof d->split, "%s", d->flags);
  char *save = NULL;
  for (char *t = strtok_r(d->split, " \t", &save); t && d->nflags < MAXFLAGS; t = strtok_r(NULL, " \t", &save)) d->argv[d->nflags++] = t;
}

// cc FLAGS -shared -fPIC -o SO SRC, its diagnostics into LOG; 0 if it built
static int run_cc(Device *d, const char *so, const char *src, const char *log, char *err, size_t n) {
  char *argv[MAXFLAGS + 8];
  int a = 0;
  for (int i = 0; i < d->nflags; i++) argv[a++] = d->argv[i];
  argv[a++] = "-shared", argv[a++] = "-fPIC", argv[a++] = "-o", argv[a++] = (char *)so, argv[a++] = (char *)src, argv[a] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, d->cc, &fa, NULL, argv, environ), st = 0;
  posix_spawn_file_actions_destroy(&fa);
  if (rc) return snprintf(err, n, "cannot run the C compiler '%s': %s", d->cc, strerror(rc)), -1;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  char *text = read_text(log, NULL), gist[1024];
  log_gist(text ? text : "", gist, sizeof gist);
  free(text);
  if (gist[0]) snprintf(err, n, "%s failed: %s", d->cc, gist);
  else snprintf(err, n, "%s failed: exit status %d", d->cc, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  return -1;
}

// src built and loaded; fn NULL: only built and loaded (the probe)
static CBinary *build(Device *d, const char *src, const char *fn, int mode, char *err, size_t n) {
  const char *tmp = getenv("TMPDIR");
  char dir[512], path[600], so[600], log[600];
  snprintf(dir, sizeof dir, "%s/fluxcc-c-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return snprintf(err, n, "cannot make a temporary folder in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno)), NULL;
  snprintf(path, sizeof path, "%s/k.c", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  char why[256];
  CBinary *b = NULL;
  if (write_atomic(path, src, strlen(src), why, sizeof why)) snprintf(err, n, "%s", why);
  else if (run_cc(d, so, path, log, err, n) == 0) {
    void *so_h = dlopen(so, RTLD_NOW | RTLD_LOCAL | mode);
    if (!so_h) snprintf(err, n, "dlopen: %s", dlerror());
    else {
      b = xcalloc(1, sizeof *b);
      b->so = so_h;
      if (fn) {
        char sym[200];
        snprintf(sym, sizeof sym, "%s_launch", fn);
        if (!(*(void **)&b->launch = dlsym(so_h, sym))) {
          snprintf(err, n, "the kernel has no %s", sym);
          dlclose(so_h);
          free(b);
          b = NULL;
        }
      }
    }
  }
  unlink(path), unlink(so), unlink(log), rmdir(dir);
  return b;
}

static void c_close(Device *d) {
  if (!d) return;
  for (int i = 0; i < d->nargs; i++) free(d->mem[i]);
  free(d->mem);
  free(d->bytes);
  free(d->flush);
  free(d);  // d->pin stays loaded (RTLD_NODELETE)
}

static Device *c_open(bool compile_only, const char *kflags, char *err, size_t n) {
  (void)compile_only;
  Device *d = xcalloc(1, sizeof *d);
  kernel_flags(d, kflags);
  // a probe: the compiler runs, builds OpenMP into a shared object, and its
  // object stays loaded (NODELETE) so the OpenMP runtime outlives every
  // candidate's dlclose (its worker threads would run unmapped code otherwise)
  static const char probe[] = "int flux_probe(void) { int s = 0;\n#pragma omp parallel for reduction(+:s)\n"
                              "for (int i = 0; i < 64; i++) s += i;\nreturn s; }\n";
  char why[512];
  CBinary *b = build(d, probe, NULL, RTLD_NODELETE, why, sizeof why);
  if (!b) {
    snprintf(err, n, "the C compiler cannot build the kernels (%s %s): %s", d->cc, d->flags, why);
    return c_close(d), NULL;
  }
  d->pin = b->so;
  free(b);
  host_cpu_name(d->name, sizeof d->name);  // what it runs on, as the C backend says it
  // the compiler's version line
  char ver[200] = "", line[512];
  FILE *f;
  snprintf(line, sizeof line, "'%s' --version 2>/dev/null", d->cc);
  if (!strchr(d->cc, '\'') && (f = popen(line, "r"))) {
    if (fgets(ver, sizeof ver, f)) ver[strcspn(ver, "\n")] = 0;
    pclose(f);
  }
  snprintf(d->toolchain, sizeof d->toolchain, "%.200s; %.280s", ver[0] ? ver : d->cc, d->flags);
  return d;
}

static void c_describe(Device *d, char *dev, size_t n, char *tc, size_t m) {
  snprintf(dev, n, "%s", d->name);
  snprintf(tc, m, "%s", d->toolchain);
}

static void *c_compile(Device *d, const char *src, const char *fn, char *err, size_t n) { return build(d, src, fn, 0, err, n); }

static void c_release(Device *d, void *bin) {
  (void)d;
  CBinary *b = bin;
  if (!b) return;
  dlclose(b->so);
  free(b);
}

static int c_alloc(Device *d, int nargs, const size_t *bytes, char *err, size_t n) {
  for (int i = 0; i < d->nargs; i++) free(d->mem[i]);
  free(d->mem);
  free(d->bytes);
  d->nargs = nargs;
  d->mem = xcalloc((size_t)nargs + 1, sizeof *d->mem);
  d->bytes = xcalloc((size_t)nargs + 1, sizeof *d->bytes);
  for (int i = 0; i < nargs; i++) {
    d->bytes[i] = bytes[i] ? bytes[i] : 1;
    if (!(d->mem[i] = aligned_alloc(64, (d->bytes[i] + 63) & ~(size_t)63)))
      return snprintf(err, n, "out of memory allocating %zu bytes for argument %d", d->bytes[i], i), -1;
  }
  return 0;
}

static int c_upload(Device *d, int arg, const void *src, char *err, size_t n) {
  (void)err, (void)n;
  memcpy(d->mem[arg], src, d->bytes[arg]);
  return 0;
}

static int c_download(Device *d, int arg, void *dst, char *err, size_t n) {
  (void)err, (void)n;
  memcpy(dst, d->mem[arg], d->bytes[arg]);
  return 0;
}

static int c_launch(Device *d, void *bin, const uint32_t grid[3], const uint32_t block[3], double *us, char *err, size_t n) {
  CBinary *b = bin;
  (void)grid;  // the kernel's loops hold its groups
  if ((uint64_t)block[0] * block[1] * block[2] != 1)
    return snprintf(err, n, "%u threads per group: the C target runs one work-item per group", block[0] * block[1] * block[2]), -1;
  if (us && !d->flush && !(d->flush = malloc(CACHE_FLUSH_BYTES)))
    return snprintf(err, n, "out of memory for the cache flush (%zu bytes)", CACHE_FLUSH_BYTES), -1;
  if (us) memset(d->flush, (int)(++d->flushes & 0xff), CACHE_FLUSH_BYTES);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  b->launch(d->mem);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (us) *us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-3;
  return 0;
}

const DeviceOps device_c = {
  .name = "c", .open = c_open, .close = c_close, .describe = c_describe, .compile = c_compile,
  .release = c_release, .alloc = c_alloc, .upload = c_upload, .download = c_download, .launch = c_launch,
};
