// libnvrtc.c — fluxcc's stand-in for libnvrtc.so: the NVRTC functions
// compiler/device_cuda.c loads, for a machine with no GPU (`make
// cuda-stand-in`, selected with FLUXCC_CUDA_LIBS=build/cuda-stand-in/lib64).
//
// nvrtcCompileProgram does two things with the source:
// - when the real NVRTC is installed it compiles it first, with the same
//   options (the headers' folder swapped for the real toolkit's), so an sm_90
//   compile error is real, and ptxas's registers, spills and shared memory
//   come from the real compiler (FLUXCC_STAND_IN_NVRTC=0 skips it);
// - it builds the same source as C++ against the CUDA emulation
//   (templates/cuda/emu, copied to ../include) into a shared object.
// The "cubin" it hands over is that object behind a small header (the
// layout is StandInImage in stand_in.h), which only the stand-in
// libcuda.so.1 loads.
#include "stand_in.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
  NVRTC_ERROR_INVALID_INPUT = 3,
  NVRTC_ERROR_INVALID_PROGRAM = 4,
  NVRTC_ERROR_COMPILATION = 6,
};

// the real NVRTC's functions we forward to
#define REAL_FNS(X) \
  X(int, nvrtcVersion, (int *major, int *minor)) \
  X(int, nvrtcGetNumSupportedArchs, (int *n)) \
  X(int, nvrtcGetSupportedArchs, (int *archs)) \
  X(int, nvrtcCreateProgram, (void **p, const char *src, const char *name, int nhdr, const char *const *hdrs, const char *const *hdr_names)) \
  X(int, nvrtcDestroyProgram, (void **p)) \
  X(int, nvrtcCompileProgram, (void *p, int nopts, const char *const *opts)) \
  X(int, nvrtcGetProgramLogSize, (void *p, size_t *n)) \
  X(int, nvrtcGetProgramLog, (void *p, char *log)) \
  X(int, nvrtcGetPTXSize, (void *p, size_t *n)) \
  X(int, nvrtcGetPTX, (void *p, char *ptx))

static struct {
  pthread_once_t once;
  void *lib;                       // the real libnvrtc.so, or NULL
#define X(ret, f, params) ret (*f) params;
  REAL_FNS(X)
#undef X
  char self[4096];                 // our folder (lib64/)
  char emu_include[4200];          // ../include: the CUDA emulation's headers
  char real_include[4200];         // -I of the real toolkit's headers
} R = {.once = PTHREAD_ONCE_INIT};

typedef struct {
  char *src, *name;
  int nhdr;
  char **hdrs, **hdr_names;
  char *log;                       // NUL-terminated
  unsigned char *image;            // StandInImage header + shared object
  size_t nimage;
  char *ptx;                       // the real NVRTC's, when it ran
  size_t nptx;
} Prog;

int fluxcc_cuda_stand_in = 1;      // device_cuda.c looks for this symbol

static bool readable(const char *dir, const char *file) {
  char p[4400];
  return (size_t)snprintf(p, sizeof p, "%s/%s", dir, file) < sizeof p && access(p, R_OK) == 0;
}

// The real NVRTC: as device_cuda.c looks for it, never this file itself.
static void find_real(void) {
  Dl_info me;
  if (dladdr((void *)find_real, &me) && me.dli_fname) {
    snprintf(R.self, sizeof R.self, "%s", me.dli_fname);
    char *slash = strrchr(R.self, '/');
    if (slash) *slash = 0;
    else snprintf(R.self, sizeof R.self, ".");
  }
  snprintf(R.emu_include, sizeof R.emu_include, "%s/../include", R.self);
  const char *off = getenv("FLUXCC_STAND_IN_NVRTC");
  if (off && !strcmp(off, "0")) return;
  const char *home = getenv("CUDA_HOME");
  char in_home[4200] = "";
  if (home && *home) snprintf(in_home, sizeof in_home, "%s/lib64/libnvrtc.so", home);
  const char *libs[] = {in_home, "/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  for (size_t i = 0; i < sizeof libs / sizeof *libs && !R.lib; i++) {
    if (!*libs[i]) continue;
    void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    if (dlsym(h, "fluxcc_cuda_stand_in")) { dlclose(h); continue; }  // ourselves, by another name
    R.lib = h;
  }
  if (!R.lib) return;
#define X(ret, f, params) \
  if (!(R.f = (ret (*) params)dlsym(R.lib, #f))) { dlclose(R.lib); R.lib = NULL; return; }
  REAL_FNS(X)
#undef X
  char origin[4096] = "", beside[4200] = "", in_home_inc[4200] = "";
  if (home && *home) snprintf(in_home_inc, sizeof in_home_inc, "%s/include", home);
  if (dlinfo(R.lib, RTLD_DI_ORIGIN, origin) == 0) snprintf(beside, sizeof beside, "%s/../include", origin);
  const char *dirs[] = {in_home_inc, beside, "/usr/local/cuda/include"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    if (*dirs[i] && readable(dirs[i], "cuda_bf16.h")) {
      snprintf(R.real_include, sizeof R.real_include, "-I%s", dirs[i]);
      return;
    }
  dlclose(R.lib);  // NVRTC without its headers cannot compile our kernels
  R.lib = NULL;
}

static void init(void) { pthread_once(&R.once, find_real); }

const char *nvrtcGetErrorString(int r) {
  switch (r) {
  case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
  case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
  case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
  case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
  case NVRTC_ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
  case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
  }
  return "NVRTC_ERROR (stand-in)";
}

// The real NVRTC's version; 0.0 when there is none (the stand-in alone).
int nvrtcVersion(int *major, int *minor) {
  init();
  if (R.lib) return R.nvrtcVersion(major, minor);
  *major = *minor = 0;
  return NVRTC_SUCCESS;
}

static const int own_archs[] = {75, 80, 86, 89, 90};

int nvrtcGetNumSupportedArchs(int *n) {
  init();
  if (R.lib) return R.nvrtcGetNumSupportedArchs(n);
  *n = (int)(sizeof own_archs / sizeof *own_archs);
  return NVRTC_SUCCESS;
}

int nvrtcGetSupportedArchs(int *archs) {
  init();
  if (R.lib) return R.nvrtcGetSupportedArchs(archs);
  memcpy(archs, own_archs, sizeof own_archs);
  return NVRTC_SUCCESS;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void prog_free(Prog *p) {
  if (!p) return;
  for (int i = 0; i < p->nhdr; i++) free(p->hdrs[i]), free(p->hdr_names[i]);
  free(p->hdrs), free(p->hdr_names);
  free(p->src), free(p->name), free(p->log), free(p->image), free(p->ptx);
  free(p);
}

int nvrtcCreateProgram(void **out, const char *src, const char *name, int nhdr, const char *const *hdrs, const char *const *hdr_names) {
  if (!out || !src || nhdr < 0) return NVRTC_ERROR_INVALID_INPUT;
  Prog *p = calloc(1, sizeof *p);
  if (!p) return NVRTC_ERROR_OUT_OF_MEMORY;
  p->src = strdup(src), p->name = strdup(name ? name : "default_program");
  p->hdrs = calloc((size_t)nhdr + 1, sizeof *p->hdrs), p->hdr_names = calloc((size_t)nhdr + 1, sizeof *p->hdr_names);
  bool ok = p->src && p->name && p->hdrs && p->hdr_names;
  for (; ok && p->nhdr < nhdr; p->nhdr++) {
    p->hdrs[p->nhdr] = dup_or_null(hdrs ? hdrs[p->nhdr] : NULL);
    p->hdr_names[p->nhdr] = dup_or_null(hdr_names ? hdr_names[p->nhdr] : NULL);
  }
  if (!ok) return prog_free(p), NVRTC_ERROR_OUT_OF_MEMORY;
  *out = p;
  return NVRTC_SUCCESS;
}

int nvrtcDestroyProgram(void **p) {
  if (!p) return NVRTC_ERROR_INVALID_INPUT;
  prog_free(*p);
  *p = NULL;
  return NVRTC_SUCCESS;
}

// text appended to the log
static void log_add(Prog *p, const char *s, size_t n) {
  size_t had = p->log ? strlen(p->log) : 0;
  char *l = realloc(p->log, had + n + 1);
  if (!l) return;
  memcpy(l + had, s, n);
  l[had + n] = 0;
  p->log = l;
}

// The real NVRTC on the same source: its log (ptxas's report) becomes ours.
// Returns its result, or -1 when there is no real NVRTC.
static int real_compile(Prog *p, int nopts, const char *const *opts, StandInImage *h) {
  if (!R.lib) return -1;
  const char **o = calloc((size_t)nopts + 1, sizeof *o);
  if (!o) return NVRTC_ERROR_OUT_OF_MEMORY;
  int no = 0;
  for (int i = 0; i < nopts; i++)  // -I of any folder: the real toolkit's instead
    if (strncmp(opts[i], "-I", 2)) o[no++] = opts[i];
  o[no++] = R.real_include;
  void *rp = NULL;
  int r = R.nvrtcCreateProgram(&rp, p->src, p->name, p->nhdr, (const char *const *)p->hdrs, (const char *const *)p->hdr_names);
  if (r) return free(o), r;
  r = R.nvrtcCompileProgram(rp, no, o);
  free(o);
  size_t n = 0;
  char *log = NULL;
  if (R.nvrtcGetProgramLogSize(rp, &n) == 0 && (log = malloc(n + 1)) && R.nvrtcGetProgramLog(rp, log) == 0) {
    log[n] = 0;
    log_add(p, log, strlen(log));
    const char *u = strstr(log, "Used ");
    int regs;
    if (u && sscanf(u, "Used %d registers", &regs) == 1) h->regs = regs;
    const char *s = u ? strstr(u, " bytes smem") : NULL;
    if (s) {  // "..., 8192 bytes smem": the number before it
      const char *b = s;
      while (b > u && b[-1] >= '0' && b[-1] <= '9') b--;
      h->smem = atoi(b);
    }
  }
  free(log);
  if (r == 0 && R.nvrtcGetPTXSize(rp, &p->nptx) == 0 && p->nptx && (p->ptx = malloc(p->nptx)) && R.nvrtcGetPTX(rp, p->ptx))
    free(p->ptx), p->ptx = NULL, p->nptx = 0;
  R.nvrtcDestroyProgram(&rp);
  return r;
}

// The kernel: the one `__global__` function of the source (fluxcc writes one
// per program), and its __launch_bounds__ if any.
static int kernel_name(const char *src, char *name, size_t n, int *bounds) {
  const char *g = strstr(src, "__global__");
  if (!g) return -1;
  g += strlen("__global__");
  const char *lp = strchr(g, '(');
  const char *lb = strstr(g, "__launch_bounds__(");
  *bounds = 0;
  if (lb && lb < lp) {
    *bounds = atoi(lb + strlen("__launch_bounds__("));
    lp = strchr(strchr(lb, ')'), '(');
  }
  if (!lp) return -1;
  const char *e = lp, *b;
  while (e > g && e[-1] == ' ') e--;
  for (b = e; b > g && (b[-1] == '_' || (b[-1] >= '0' && b[-1] <= '9') || ((b[-1] | 32) >= 'a' && (b[-1] | 32) <= 'z')); b--) {}
  if (b == e || (size_t)(e - b) >= n) return -1;
  memcpy(name, b, (size_t)(e - b));
  name[e - b] = 0;
  return 0;
}

static int write_all(int fd, const void *buf, size_t n) {
  for (const char *s = buf; n;) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    s += w, n -= (size_t)w;
  }
  return 0;
}

static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  unsigned char *b = NULL;
  long len;
  if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)len)) &&
      fread(b, 1, (size_t)len, f) == (size_t)len)
    *n = (size_t)len;
  else free(b), b = NULL;
  if (f) fclose(f);
  return b;
}

// The source as C++ against the CUDA emulation, into a shared object that
// needs the stand-in libcuda.so.1 (where the emulation lives). What NVRTC
// has built in (__global__, threadIdx, ...) the emulation's
// cuda_runtime.h declares, included first.
static int emu_compile(Prog *p, StandInImage *h) {
  char name[256];
  int bounds = 0;
  if (kernel_name(p->src, name, sizeof name, &bounds)) {
    static const char msg[] = "stand-in: no __global__ function in the source\n";
    return log_add(p, msg, sizeof msg - 1), NVRTC_ERROR_COMPILATION;
  }
  h->bounds = bounds;
  const char *tmp = getenv("TMPDIR");
  char tdir[4200];
  snprintf(tdir, sizeof tdir, "%s/fluxcc-stand-in-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  char *d = mkdtemp(tdir);
  if (!d) return log_add(p, "stand-in: cannot make a temporary folder\n", 41), NVRTC_ERROR_COMPILATION;
  char src[4400], so[4400], errf[4400], inc[4300], lib[4300], rpath[4400];
  snprintf(src, sizeof src, "%s/k.cc", d), snprintf(so, sizeof so, "%s/k.so", d), snprintf(errf, sizeof errf, "%s/log", d);
  snprintf(inc, sizeof inc, "-I%s", R.emu_include), snprintf(lib, sizeof lib, "-L%s", R.self);
  snprintf(rpath, sizeof rpath, "-Wl,-rpath,%s", R.self);
  int r = NVRTC_ERROR_COMPILATION;
  int fd = open(src, O_WRONLY | O_CREAT | O_EXCL, 0600);
  char tail[600];
  int nt = snprintf(tail, sizeof tail, "\nextern \"C\" const void *" STAND_IN_PREFIX "%s(void) { return FLUX_KERNEL(%s); }\n", name, name);
  // the emulator's reports name the program (NAME.cu), not this temporary file
  char line[300] = "";
  if (strlen(p->name) < 256 && strspn(p->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == strlen(p->name))
    snprintf(line, sizeof line, "#line 1 \"%s\"\n", p->name);
  bool wrote = fd >= 0 && write_all(fd, line, strlen(line)) == 0 && write_all(fd, p->src, strlen(p->src)) == 0 &&
               write_all(fd, tail, (size_t)nt) == 0;
  if (fd >= 0) close(fd);
  if (wrote) {
    const char *cxx = "c++";
    char *argv[] = {(char *)cxx, "-std=c++17", "-x", "c++", "-DFLUX_EMU", "-O1", "-fPIC", "-shared", "-w", inc,
                    "-include", "cuda_runtime.h", src, "-o", so,
                    lib, "-l:libcuda.so.1", rpath, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int st = 0;
    if (posix_spawnp(&pid, cxx, &fa, NULL, argv, environ) == 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
        WEXITSTATUS(st) == 0) {
      size_t n = 0;
      unsigned char *elf = read_file(so, &n);
      if (elf && (p->image = malloc(sizeof *h + n))) {
        h->size = n;
        memcpy(p->image, h, sizeof *h);
        memcpy(p->image + sizeof *h, elf, n);
        p->nimage = sizeof *h + n;
        r = NVRTC_SUCCESS;
      }
      free(elf);
    } else {
      size_t n = 0;
      unsigned char *e = read_file(errf, &n);
      static const char head[] = "stand-in: the emulation build (c++ against the CUDA emulation) failed:\n";
      log_add(p, head, sizeof head - 1);
      if (e) log_add(p, (char *)e, n);
      else log_add(p, "c++ did not run\n", 16);
      free(e);
    }
    posix_spawn_file_actions_destroy(&fa);
  }
  unlink(src), unlink(so), unlink(errf), rmdir(d);
  return r;
}

int nvrtcCompileProgram(void *prog, int nopts, const char *const *opts) {
  Prog *p = prog;
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  init();
  free(p->log), free(p->image), free(p->ptx);
  p->log = NULL, p->image = NULL, p->ptx = NULL, p->nimage = p->nptx = 0;
  StandInImage h = {.regs = -1, .smem = -1};
  memcpy(h.magic, STAND_IN_MAGIC, sizeof h.magic);
  int r = real_compile(p, nopts, opts, &h);
  if (r > 0) return r;  // a real compile error, with the real log
  if (r < 0) {
    static const char note[] = "stand-in: no real NVRTC; registers and shared memory come from the emulation build\n";
    log_add(p, note, sizeof note - 1);
  }
  return emu_compile(p, &h);
}

int nvrtcGetProgramLogSize(void *prog, size_t *n) {
  Prog *p = prog;
  if (!p || !n) return NVRTC_ERROR_INVALID_INPUT;
  *n = p->log ? strlen(p->log) + 1 : 1;
  return NVRTC_SUCCESS;
}

int nvrtcGetProgramLog(void *prog, char *log) {
  Prog *p = prog;
  if (!p || !log) return NVRTC_ERROR_INVALID_INPUT;
  strcpy(log, p->log ? p->log : "");
  return NVRTC_SUCCESS;
}

int nvrtcGetCUBINSize(void *prog, size_t *n) {
  Prog *p = prog;
  if (!p || !n) return NVRTC_ERROR_INVALID_INPUT;
  *n = p->nimage;
  return NVRTC_SUCCESS;
}

int nvrtcGetCUBIN(void *prog, char *out) {
  Prog *p = prog;
  if (!p || !out || !p->image) return NVRTC_ERROR_INVALID_INPUT;
  memcpy(out, p->image, p->nimage);
  return NVRTC_SUCCESS;
}

// The real NVRTC's PTX when it ran (to read, not to load)
int nvrtcGetPTXSize(void *prog, size_t *n) {
  Prog *p = prog;
  if (!p || !n) return NVRTC_ERROR_INVALID_INPUT;
  *n = p->nptx;
  return p->nptx ? NVRTC_SUCCESS : NVRTC_ERROR_INVALID_INPUT;
}

int nvrtcGetPTX(void *prog, char *out) {
  Prog *p = prog;
  if (!p || !out || !p->ptx) return NVRTC_ERROR_INVALID_INPUT;
  memcpy(out, p->ptx, p->nptx);
  return NVRTC_SUCCESS;
}
