// flux_emu.cc — the CUDA emulation behind flux_emu.h (see there for what it
// covers). A launch runs its blocks on a few worker threads (FLUX_EMU_THREADS,
// default the core count); a block's threads run as fibers on one worker, so
// __syncthreads() and the warp instructions are real rendezvous points and
// one thread_local per worker is one __shared__ copy per block.
//
// FLUX_EMU_RACECHECK=1 checks shared memory between barriers and barriers
// reached by only part of a block, and fails the launch on a finding.
// FLUX_EMU_SEED=S runs a block's threads in an order shuffled by S (a new
// order after every rendezvous), so order-dependent bugs show up.
//
// A kernel's load or store that faults (SIGSEGV, SIGBUS: an unmapped or
// protected address, its fiber's stack overflowed) fails the launch with
// cudaErrorIllegalAddress, as a GPU's memory fault does, instead of killing
// the process: the faulting thread is ended, the launch stops, and every
// later call fails until cudaDeviceReset(). A stray access into memory that
// is mapped and writable is not a fault: that needs the allocations'
// guards (the CUDA stand-in's cuMemAlloc has them).
#include "flux_emu.h"
#include "numbers.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include <ucontext.h>

enum { F_READY, F_BARRIER, F_WARP, F_DONE };
enum { MAX_THREADS = 1024, STACK_BYTES = 256 << 10, MAX_REPORTS = 8 };

struct Copy {              // a cp.async not yet retired
  void *dst;
  const void *src;
  long group;              // the commit_group that closes it
  const char *what, *file;
  int line;
};

struct Fiber {
#if defined(__x86_64__)
  void *sp;
#else
  ucontext_t uc;
#endif
  FluxEmuIdx idx;
  int tid, state;
  const char *bar_file;
  int bar_line;
  Copy *copies;
  int ncopies, capcopies;
  long committed;          // commit_group calls so far
};

// racecheck: what happened to one 2-byte unit of shared memory in this block
struct Shadow {
  uintptr_t key;
  uint32_t gen;            // the block it belongs to; others count as empty
  int wtid, wepoch, rtid, repoch, rmulti;
  const char *wwhat, *wfile, *rwhat, *rfile;
  int wline, rline;
};

struct Slot {              // one lane's operands of a warp instruction
  unsigned a[4], b[2];
  float c[4];
};

struct Worker {
  Fiber *f;
  char *stacks;
  int cap;                 // fibers with stacks
  char *altstack;          // where a fault's handler runs (a fiber's stack may be what overflowed)
#if defined(__x86_64__)
  void *sched_sp;
#else
  ucontext_t sched_uc;
#endif
  Fiber *cur;
  volatile sig_atomic_t in_fiber;  // cur is running (not the scheduler): a fault there is the kernel's
  // the block being run
  const FluxEmuKernel *k;
  void **args;
  int n, arrived, epoch;
  int warp_arrived[MAX_THREADS / 32];
  Slot slot[MAX_THREADS / 32][32];
  uint64_t rng;
  // racecheck
  Shadow *sh;
  size_t shcap, shused;
  uint32_t gen;
  int problems;            // findings in this launch
};

struct FluxEmuStream {
  int capturing;
  FluxEmuGraph *graph;
};
struct FluxEmuEvent {
  double ms;
};
struct Node {
  const FluxEmuKernel *k;
  dim3 grid, block;
  unsigned char argv[32][8];   // argument values, copied at capture as CUDA does
  void *argp[32];
};
struct FluxEmuGraph {
  Node *node;
  int n, cap;
};

// The emulated device: one per process, as a driver's state is.
struct Emu {
  pthread_once_t once = PTHREAD_ONCE_INIT;
  int nworkers = 0, racecheck = 0, shuffle = 0;
  uint64_t seed = 0;
  Worker *w = NULL;
  cudaError_t sticky = cudaSuccess;   // a failed launch fails every later call, as on a GPU
  // the running launch
  std::atomic<long> next{0};          // its next block
  std::atomic<int> problems{0};
  std::atomic<int> faulted{0};        // a thread's load or store faulted: the launch stops
  // the first fault: where, and which thread (written by the handler that set faulted)
  uintptr_t fault_addr = 0;
  int fault_sig = 0;
  FluxEmuIdx fault_idx = {};
  struct sigaction old_segv, old_bus; // the handlers the launch's own replaced
  const FluxEmuKernel *k = NULL;
  dim3 grid, block;
  void **args = NULL;
};
static Emu emu;

static thread_local Worker *tl;

// the emulator's own memory (not what the kernels' API calls ask for, which
// reports cudaErrorMemoryAllocation): zeroed, grown, or exit 3 saying so
static void *emu_xrealloc(void *p, size_t n, bool zero) {
  p = zero ? calloc(1, n ? n : 1) : realloc(p, n ? n : 1);
  if (!p) {
    fprintf(stderr, "flux-emu: out of memory (%zu bytes)\n", n);
    exit(3);
  }
  return p;
}
static void *emu_xcalloc(size_t n) { return emu_xrealloc(NULL, n, true); }

// an environment variable, read as every numeric option is (numbers.h);
// garbage or out of range: exit 2 naming it
static uint64_t env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt, bool *set) {
  const char *s = getenv(name);
  uint64_t v = dflt;
  if (set) *set = s && *s;
  if (s && *s && nb_parse_u64(s, lo, hi, &v)) {
    fprintf(stderr, "flux-emu: error: %s='%s': wants a decimal integer from %llu to %llu\n", name, s, (unsigned long long)lo,
            (unsigned long long)hi);
    exit(2);
  }
  return v;
}

static void emu_init(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  emu.nworkers = (int)env_u64("FLUX_EMU_THREADS", 1, 64, cores < 1 ? 1 : cores > 64 ? 64 : (uint64_t)cores, NULL);
  emu.racecheck = env_u64("FLUX_EMU_RACECHECK", 0, 1, 0, NULL) == 1;
  bool seeded;
  emu.seed = env_u64("FLUX_EMU_SEED", 0, UINT64_MAX, 0, &seeded);
  emu.shuffle = seeded;
  emu.w = (Worker *)emu_xcalloc((size_t)emu.nworkers * sizeof(Worker));
}

// one report line per finding, at most MAX_REPORTS per launch and worker
static void report(Worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(Worker *w, const char *fmt, ...) {
  if (w->problems++ >= MAX_REPORTS) return;
  const FluxEmuIdx *b = &w->f[0].idx;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "flux-emu: kernel %s, block (%u,%u,%u): %s\n", w->k->name, b->block.x, b->block.y, b->block.z, msg);
}

// ---------------------------------------------------------------------------
// Fibers

#if defined(__x86_64__)
// saves the callee-saved registers and the stack pointer in *save, resumes
// the fiber whose stack pointer is load
extern "C" void flux_emu_switch(void **save, void *load);
asm(".text\n"
    ".p2align 4\n"
    ".globl flux_emu_switch\n"
    ".type flux_emu_switch,@function\n"
    "flux_emu_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size flux_emu_switch, .-flux_emu_switch\n");
static void to_sched(Worker *w, Fiber *f) { flux_emu_switch(&f->sp, w->sched_sp); }
static void to_fiber(Worker *w, Fiber *f) { flux_emu_switch(&w->sched_sp, f->sp); }
#else
static void to_sched(Worker *w, Fiber *f) { swapcontext(&f->uc, &w->sched_uc); }
static void to_fiber(Worker *w, Fiber *f) { swapcontext(&w->sched_uc, &f->uc); }
#endif

static void fiber_main(void) {
  Worker *w = tl;
  w->k->call(w->k->fn, w->args);
  Fiber *f = w->cur;
  if (emu.racecheck && f->ncopies)
    report(w, "thread %d exits with %d cp.async cop%s never retired by cp.async.wait_group (the first at %s:%d)", f->tid,
           f->ncopies, f->ncopies == 1 ? "y" : "ies", f->copies[0].file, f->copies[0].line);
  f->state = F_DONE;
  to_sched(w, f);
  abort();  // a finished fiber is never resumed
}

static void start_fiber(Worker *w, Fiber *f, int i) {
  char *top = w->stacks + (size_t)(i + 1) * STACK_BYTES;
#if defined(__x86_64__)
  void **sp = (void **)top;
  *--sp = NULL;                  // keeps fiber_main's frame 16-byte aligned
  *--sp = (void *)fiber_main;    // where flux_emu_switch returns to
  for (int r = 0; r < 6; r++) *--sp = NULL;
  f->sp = sp;
#else
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = top - STACK_BYTES + 4096;
  f->uc.uc_stack.ss_size = STACK_BYTES - 4096;
  f->uc.uc_link = NULL;
  makecontext(&f->uc, fiber_main, 0);
#endif
}

// ---------------------------------------------------------------------------
// Faults: a kernel's bad load or store

// Where a faulting fiber resumes, on its own stack: it has ended, as if it
// returned; the scheduler sees `faulted` and stops the block.
static void fiber_fault_exit(void) {
  Worker *w = tl;
  Fiber *f = w->cur;
  f->state = F_DONE;
  to_sched(w, f);
  abort();  // never resumed
}

// SIGSEGV or SIGBUS. On a fiber of a launch (a kernel's thread, its stack
// overflowed or not): recorded, and the fiber resumes in fiber_fault_exit
// at the top of its stack. Anything else is not a kernel's: the handler the
// launch replaced takes it (the instruction faults again).
static void on_fault(int sig, siginfo_t *si, void *ctx) {
  Worker *w = tl;
  ucontext_t *uc = (ucontext_t *)ctx;
  if (!w || !w->in_fiber) {
    sigaction(sig, sig == SIGSEGV ? &emu.old_segv : &emu.old_bus, NULL);
    return;
  }
  int none = 0;
  if (emu.faulted.compare_exchange_strong(none, 1))
    emu.fault_addr = (uintptr_t)si->si_addr, emu.fault_sig = sig, emu.fault_idx = w->cur->idx;
  uintptr_t top = (uintptr_t)w->stacks + (size_t)(w->cur->tid + 1) * STACK_BYTES;
  uintptr_t entry = ((top - 256) & ~(uintptr_t)15) - 8;  // as a call leaves it: 16-byte aligned before the return address
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RSP] = (greg_t)entry;
  uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)fiber_fault_exit;
#elif defined(__aarch64__)
  uc->uc_mcontext.sp = entry + 8;  // no return address on the stack here
  uc->uc_mcontext.pc = (uintptr_t)fiber_fault_exit;
#endif
}

// The launch's handlers, on the fault signals (not where the fault cannot be
// redirected: there it stays the crash it was).
static void faults_catch(bool on) {
#if defined(__x86_64__) || defined(__aarch64__)
  if (on) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &emu.old_segv);
    sigaction(SIGBUS, &sa, &emu.old_bus);
  } else {
    sigaction(SIGSEGV, &emu.old_segv, NULL);
    sigaction(SIGBUS, &emu.old_bus, NULL);
  }
#else
  (void)on;
#endif
}

// fibers and their stacks (each with a guard page below it) for n threads
static void reserve(Worker *w, int n) {
  if (n <= w->cap) return;
  if (w->stacks) munmap(w->stacks, (size_t)w->cap * STACK_BYTES);
  for (int i = 0; i < w->cap; i++) free(w->f[i].copies);
  free(w->f);
  w->stacks = (char *)mmap(NULL, (size_t)n * STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (w->stacks == MAP_FAILED) {
    fprintf(stderr, "flux-emu: cannot map stacks for %d threads\n", n);
    exit(3);
  }
  for (int i = 0; i < n; i++) mprotect(w->stacks + (size_t)i * STACK_BYTES, 4096, PROT_NONE);
  w->f = (Fiber *)emu_xcalloc((size_t)n * sizeof(Fiber));
  w->cap = n;
}

// ---------------------------------------------------------------------------
// Rendezvous: the block barrier and the warp's

static void yield(Worker *w, int state) {
  Fiber *f = w->cur;
  f->state = state;
  to_sched(w, f);
}

void flux_emu_syncthreads(const char *file, int line) {
  Worker *w = tl;
  Fiber *f = w->cur;
  f->bar_file = file, f->bar_line = line;
  if (++w->arrived < w->n) {
    yield(w, F_BARRIER);
    return;
  }
  // the last one in: everyone goes on, and a new epoch of shared accesses begins
  if (emu.racecheck)
    for (int i = 0; i < w->n; i++)
      if (w->f[i].state == F_BARRIER && (w->f[i].bar_line != line || strcmp(w->f[i].bar_file, file))) {
        report(w, "threads wait at different __syncthreads(): thread %d at %s:%d, thread %d at %s:%d", i,
               w->f[i].bar_file, w->f[i].bar_line, f->tid, file, line);
        break;
      }
  for (int i = 0; i < w->n; i++)
    if (w->f[i].state == F_BARRIER) w->f[i].state = F_READY;
  w->arrived = 0;
  w->epoch++;
  yield(w, F_READY);  // let the others run first: a fresh order after every barrier
}

static void warp_sync(Worker *w, int warp) {
  int size = w->n - warp * 32 < 32 ? w->n - warp * 32 : 32;
  if (++w->warp_arrived[warp] < size) {
    yield(w, F_WARP);
    return;
  }
  for (int i = warp * 32; i < warp * 32 + size; i++)
    if (w->f[i].state == F_WARP) w->f[i].state = F_READY;
  w->warp_arrived[warp] = 0;
}

// ---------------------------------------------------------------------------
// Shared memory checks

static Shadow *shadow(Worker *w, uintptr_t key) {
  if (2 * (w->shused + 1) > w->shcap) {  // grow, keeping this block's entries
    size_t ncap = w->shcap ? 2 * w->shcap : 1 << 16;
    Shadow *old = w->sh, *nsh = (Shadow *)emu_xcalloc(ncap * sizeof(Shadow));
    w->sh = nsh;
    size_t ocap = w->shcap;
    w->shcap = ncap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i].gen == w->gen) {
        size_t h = (old[i].key * 0x9e3779b97f4a7c15ull) >> 7 & (ncap - 1);
        while (nsh[h].gen == w->gen) h = (h + 1) & (ncap - 1);
        nsh[h] = old[i];
      }
    free(old);
  }
  size_t h = (key * 0x9e3779b97f4a7c15ull) >> 7 & (w->shcap - 1);
  for (;; h = (h + 1) & (w->shcap - 1)) {
    Shadow *s = &w->sh[h];
    if (s->gen != w->gen) {  // a unit nobody touched in this block yet
      *s = Shadow{key, w->gen, -1, -1, -1, -1, 0, NULL, NULL, NULL, NULL, 0, 0};
      w->shused++;
      return s;
    }
    if (s->key == key) return s;
  }
}

static void touch(Worker *w, int tid, const void *p, int bytes, int write, const char *what, const char *file, int line) {
  int e = w->epoch;
  for (int off = 0; off < bytes; off += 2) {
    Shadow *s = shadow(w, ((uintptr_t)p + (uintptr_t)off) >> 1);
    if (write) {
      if (s->wtid >= 0 && s->wepoch == e && s->wtid != tid)
        report(w, "race: thread %d writes %s at %s:%d, which thread %d wrote (%s at %s:%d) since the last __syncthreads()", tid,
               what, file, line, s->wtid, s->wwhat, s->wfile, s->wline);
      else if (s->repoch == e && (s->rmulti || s->rtid != tid))
        report(w, "race: thread %d writes %s at %s:%d, which thread %d read (%s at %s:%d) since the last __syncthreads()", tid,
               what, file, line, s->rtid, s->rwhat, s->rfile, s->rline);
      s->wtid = tid, s->wepoch = e, s->wwhat = what, s->wfile = file, s->wline = line;
    } else {
      if (s->wtid < 0)
        report(w, "thread %d reads %s at %s:%d, which no thread of the block has written", tid, what, file, line);
      else if (s->wepoch == e && s->wtid != tid)
        report(w, "race: thread %d reads %s at %s:%d, which thread %d wrote (%s at %s:%d) since the last __syncthreads()", tid,
               what, file, line, s->wtid, s->wwhat, s->wfile, s->wline);
      if (s->repoch != e) s->rtid = tid, s->repoch = e, s->rmulti = 0;
      else if (s->rtid != tid) s->rmulti = 1;
      s->rwhat = what, s->rfile = file, s->rline = line;
    }
    if (w->problems > MAX_REPORTS) return;  // enough said about this launch
  }
}

void flux_emu_shared(const void *p, int bytes, int write, const char *what, const char *file, int line) {
  if (!emu.racecheck) return;
  Worker *w = tl;
  touch(w, w->cur->tid, p, bytes, write, what, file, line);
}

// ---------------------------------------------------------------------------
// cp.async

void flux_emu_cp_async16(void *dst, const void *src, const char *what, const char *file, int line) {
  Fiber *f = tl->cur;
  if (f->ncopies == f->capcopies) {
    f->capcopies = f->capcopies ? 2 * f->capcopies : 16;
    f->copies = (Copy *)emu_xrealloc(f->copies, (size_t)f->capcopies * sizeof(Copy), false);
  }
  f->copies[f->ncopies++] = Copy{dst, src, f->committed, what, file, line};
}

void flux_emu_cp_async_commit(void) { tl->cur->committed++; }

// retires every group but the n most recent: their copies land now
void flux_emu_cp_async_wait(int n, const char *file, int line) {
  (void)file, (void)line;
  Worker *w = tl;
  Fiber *f = w->cur;
  int kept = 0;
  for (int i = 0; i < f->ncopies; i++) {
    Copy *c = &f->copies[i];
    if (c->group < f->committed - n) {
      if (emu.racecheck) touch(w, f->tid, c->dst, 16, 1, c->what, c->file, c->line);
      memcpy(c->dst, c->src, 16);
    } else f->copies[kept++] = *c;
  }
  f->ncopies = kept;
}

// ---------------------------------------------------------------------------
// mma.sync, with the fragment layouts of the PTX ISA ("Matrix Fragments for
// mma.m16n8k16 with floating point type", "... for mma.m16n8k8", .tf32):
// groupID = lane >> 2, threadID_in_group = lane % 4.

static float half_of(unsigned r, int hi, int kind) {
  uint16_t h = (uint16_t)(hi ? r >> 16 : r & 0xffff);
  return kind == FLUX_EMU_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

void flux_emu_mma(int kind, float *d0, float *d1, float *d2, float *d3, const unsigned a[4], const unsigned b[2]) {
  Worker *w = tl;
  Fiber *f = w->cur;
  int warp = f->tid / 32, lane = f->tid % 32;
  if (w->n % 32) {
    report(w, "mma.sync in a block of %d threads: warp %d is not complete", w->n, warp);
    return;
  }
  Slot *me = &w->slot[warp][lane];
  memcpy(me->a, a, sizeof me->a);
  memcpy(me->b, b, sizeof me->b);
  me->c[0] = *d0, me->c[1] = *d1, me->c[2] = *d2, me->c[3] = *d3;
  warp_sync(w, warp);  // every lane's operands are in
  float A[16][16], B[16][8];
  int K = kind == FLUX_EMU_TF32 ? 8 : 16;
  for (int l = 0; l < 32; l++) {
    const Slot *s = &w->slot[warp][l];
    int g = l >> 2, t = l % 4;
    if (kind == FLUX_EMU_TF32) {  // A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); B: b0 (t, g), b1 (t+4, g)
      for (int i = 0; i < 4; i++) A[g + 8 * (i & 1)][t + 4 * (i >> 1)] = nb_bits_f32(s->a[i]);
      for (int i = 0; i < 2; i++) B[t + 4 * i][g] = nb_bits_f32(s->b[i]);
    } else {  // element i of A (two per register, low half first) and of B
      for (int i = 0; i < 8; i++) {
        int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
        A[row][col] = half_of(s->a[i / 2], i & 1, kind);
      }
      for (int i = 0; i < 4; i++) B[t * 2 + (i & 1) + (i >= 2 ? 8 : 0)][g] = half_of(s->b[i / 2], i & 1, kind);
    }
  }
  float *d[4] = {d0, d1, d2, d3};
  int g = lane >> 2, t = lane % 4;
  for (int i = 0; i < 4; i++) {  // C/D: c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1)
    int row = g + (i >= 2 ? 8 : 0), col = t * 2 + (i & 1);
    float acc = me->c[i];
    for (int kk = 0; kk < K; kk++) acc += A[row][kk] * B[kk][col];  // products are exact in f32
    *d[i] = acc;
  }
  warp_sync(w, warp);  // nobody reuses its slot before all have read
}

// ---------------------------------------------------------------------------
// Running a launch

const FluxEmuIdx *flux_emu_idx() { return &tl->cur->idx; }

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void run_block(Worker *w, long bid) {
  dim3 g = emu.grid, b = emu.block;
  int n = (int)(b.x * b.y * b.z);
  reserve(w, n);
  w->k = emu.k, w->args = emu.args, w->n = n;
  w->arrived = 0, w->epoch = 0, w->gen++, w->shused = 0;
  memset(w->warp_arrived, 0, sizeof w->warp_arrived);
  uint3 blk = {(unsigned)(bid % g.x), (unsigned)(bid / g.x % g.y), (unsigned)(bid / g.x / g.y)};
  for (int i = 0; i < n; i++) {
    Fiber *f = &w->f[i];
    f->idx.thread = uint3{(unsigned)i % b.x, (unsigned)i / b.x % b.y, (unsigned)i / b.x / b.y};
    f->idx.block = blk, f->idx.block_dim = b, f->idx.grid_dim = g;
    f->tid = i, f->state = F_READY, f->ncopies = 0, f->committed = 0;
    start_fiber(w, f, i);
  }
  int order[MAX_THREADS];
  for (int i = 0; i < n; i++) order[i] = i;
  w->rng = mix(emu.seed ^ (uint64_t)bid * 0x9e3779b97f4a7c15ull);
  for (int ran = 1; ran && !emu.faulted;) {
    ran = 0;
    if (emu.shuffle)
      for (int i = n - 1; i > 0; i--) {  // Fisher-Yates, seeded per block
        w->rng = mix(w->rng + 0x9e3779b97f4a7c15ull);
        int j = (int)(w->rng % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
      }
    for (int i = 0; i < n && !emu.faulted; i++) {
      Fiber *f = &w->f[order[i]];
      if (f->state != F_READY) continue;
      w->cur = f;
      w->in_fiber = 1;
      to_fiber(w, f);
      w->in_fiber = 0;
      ran++;
    }
  }
  w->cur = NULL;
  if (emu.faulted) return;  // the launch has failed: the block's other threads are left where they are
  int done = 0, bar = 0, wrp = 0, line = 0;
  const char *file = "";
  for (int i = 0; i < n; i++) {
    Fiber *f = &w->f[i];
    done += f->state == F_DONE, wrp += f->state == F_WARP;
    if (f->state == F_BARRIER) bar++, file = f->bar_file, line = f->bar_line;
  }
  if (done < n) {  // stuck: always an error, it would hang a GPU
    if (bar) report(w, "__syncthreads() at %s:%d reached by only %d of %d threads (%d exited, %d wait at a warp instruction)", file,
                    line, bar, n, done, wrp);
    else report(w, "a warp instruction reached by only part of a warp: %d of %d threads wait, %d exited", wrp, n, done);
    if (w->problems == 0) w->problems = 1;
  }
}

// A worker runs blocks until none is left or a thread has faulted; a fault's
// handler runs on its own stack.
static void *worker_main(void *arg) {
  Worker *w = (Worker *)arg;
  tl = w;
  enum { ALT_BYTES = 64 << 10 };
  if (!w->altstack) w->altstack = (char *)emu_xcalloc(ALT_BYTES);
  stack_t alt, had;
  alt.ss_sp = w->altstack, alt.ss_size = ALT_BYTES, alt.ss_flags = 0;
  bool swapped = sigaltstack(&alt, &had) == 0;
  long nblocks = (long)emu.grid.x * emu.grid.y * emu.grid.z;
  for (long bid; !emu.faulted && (bid = emu.next++) < nblocks;) run_block(w, bid);
  emu.problems += w->problems;
  if (swapped) sigaltstack(&had, NULL);
  return NULL;
}

static cudaError_t run_launch(const FluxEmuKernel *k, dim3 grid, dim3 block, void **args) {
  long nblocks = (long)grid.x * grid.y * grid.z, nthreads = (long)block.x * block.y * block.z;
  if (nblocks <= 0 || nthreads <= 0 || nthreads > MAX_THREADS || grid.y > 65535 || grid.z > 65535) {
    fprintf(stderr, "flux-emu: kernel %s: cannot launch a grid of %ux%ux%u blocks of %ux%ux%u threads\n", k->name, grid.x, grid.y,
            grid.z, block.x, block.y, block.z);
    return cudaErrorInvalidConfiguration;
  }
  emu.k = k, emu.grid = grid, emu.block = block, emu.args = args;
  emu.next = 0, emu.problems = 0, emu.faulted = 0;
  faults_catch(true);
  int nw = nblocks < emu.nworkers ? (int)nblocks : emu.nworkers;
  pthread_t th[64];
  for (int i = 0; i < nw; i++) emu.w[i].problems = 0;
  for (int i = 1; i < nw; i++)
    if (pthread_create(&th[i], NULL, worker_main, &emu.w[i])) {
      fprintf(stderr, "flux-emu: cannot start a worker thread\n");
      exit(3);
    }
  worker_main(&emu.w[0]);
  for (int i = 1; i < nw; i++) pthread_join(th[i], NULL);
  faults_catch(false);
  if (emu.faulted) {
    const FluxEmuIdx *x = &emu.fault_idx;
    fprintf(stderr, "flux-emu: kernel %s, block (%u,%u,%u), thread (%u,%u,%u): %s at address %p (outside every allocation)\n", k->name,
            x->block.x, x->block.y, x->block.z, x->thread.x, x->thread.y, x->thread.z,
            emu.fault_sig == SIGBUS ? "a bus error" : "a load or store that faulted", (void *)emu.fault_addr);
    return emu.sticky = cudaErrorIllegalAddress;
  }
  if (emu.problems) {
    fprintf(stderr, "flux-emu: kernel %s failed its checks (%d finding%s)\n", k->name, emu.problems.load(),
            emu.problems == 1 ? "" : "s");
    return emu.sticky = cudaErrorLaunchFailure;
  }
  return cudaSuccess;
}

// ---------------------------------------------------------------------------
// The runtime API

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
  case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
  case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
  case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
  case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
  }
  return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorLaunchFailure: return "the emulator found a problem in a kernel (see above)";
  case cudaErrorIllegalAddress: return "an illegal memory access was encountered (see above)";
  case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
  default: return "emulated CUDA call failed";
  }
}

#define STICKY() \
  do {           \
    pthread_once(&emu.once, emu_init); \
    if (emu.sticky) return emu.sticky; \
  } while (0)

// a new device: what a failed launch left is forgotten
cudaError_t cudaDeviceReset(void) {
  pthread_once(&emu.once, emu_init);
  emu.sticky = cudaSuccess;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *dev) {
  STICKY();
  *dev = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev) {
  STICKY();
  if (dev != 0) return cudaErrorInvalidValue;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "flux-emu: CUDA emulated on the CPU, %d worker thread%s%s", emu.nworkers,
           emu.nworkers == 1 ? "" : "s", emu.racecheck ? ", race check" : "");
  p->major = 9, p->minor = 0;
  p->totalGlobalMem = (size_t)1 << 40, p->sharedMemPerBlock = 48 << 10;
  p->maxThreadsPerBlock = MAX_THREADS, p->warpSize = 32, p->multiProcessorCount = emu.nworkers;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v) {
  *v = 0;  // no CUDA runtime: "runtime 0.0" in the device name says so
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v) {
  *v = 0;
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *fn) {
  STICKY();
  if (!fn) return cudaErrorInvalidDeviceFunction;
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = MAX_THREADS;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t n) {
  STICKY();
  void *m = NULL;
  if (posix_memalign(&m, 256, n ? n : 1)) return cudaErrorMemoryAllocation;
  memset(m, 0xa5, n);  // device memory starts with garbage, not zeros
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
  free(p);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  STICKY();
  (void)flags;
  *s = (cudaStream_t)calloc(1, sizeof(FluxEmuStream));
  return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

static void graph_free(FluxEmuGraph *g) {
  if (!g) return;
  free(g->node);
  free(g);
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (!s) return cudaErrorInvalidResourceHandle;
  graph_free(s->graph);
  free(s);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  STICKY();
  return s ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  STICKY();
  (void)kind;
  if (s && s->capturing) return cudaErrorStreamCaptureUnsupported;
  memcpy(dst, src, n);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int byte, size_t n, cudaStream_t s) {
  STICKY();
  if (s && s->capturing) return cudaErrorStreamCaptureUnsupported;
  memset(p, byte, n);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) {
  STICKY();
  *e = (cudaEvent_t)calloc(1, sizeof(FluxEmuEvent));
  return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  free(e);
  return cudaSuccess;
}

// launches run when they are made, so an event's time is the time it is recorded
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  STICKY();
  if (s && s->capturing) return cudaErrorStreamCaptureUnsupported;
  e->ms = now_ms();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  STICKY();
  return e ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  STICKY();
  *ms = (float)(b->ms - a->ms);
  return cudaSuccess;
}

static cudaError_t add_node(FluxEmuGraph *g, const FluxEmuKernel *k, dim3 grid, dim3 block, void **args) {
  if (k->nargs > 32) return cudaErrorInvalidValue;
  if (g->n == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 64;
    g->node = (Node *)realloc(g->node, (size_t)g->cap * sizeof(Node));
    if (!g->node) return cudaErrorMemoryAllocation;
  }
  Node *n = &g->node[g->n++];
  n->k = k, n->grid = grid, n->block = block;
  for (int i = 0; i < k->nargs; i++) {
    if (k->arg_size[i] > sizeof n->argv[i]) return cudaErrorInvalidValue;
    memcpy(n->argv[i], args[i], k->arg_size[i]);
  }
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void *fn, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t s) {
  STICKY();
  (void)shmem;  // dynamic shared memory: none of our kernels asks for it
  if (!fn) return cudaErrorInvalidDeviceFunction;
  const FluxEmuKernel *k = (const FluxEmuKernel *)fn;  // what FLUX_KERNEL made
  if (s && s->capturing) return add_node(s->graph, k, grid, block, args);
  return run_launch(k, grid, block, args);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
  STICKY();
  (void)mode;
  if (!s || s->capturing) return cudaErrorInvalidValue;
  s->graph = (FluxEmuGraph *)calloc(1, sizeof(FluxEmuGraph));
  if (!s->graph) return cudaErrorMemoryAllocation;
  s->capturing = 1;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  if (!s || !s->capturing) return cudaErrorInvalidValue;
  s->capturing = 0;
  *g = s->graph;
  s->graph = NULL;
  return emu.sticky;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags) {
  STICKY();
  (void)flags;
  FluxEmuGraph *e = (FluxEmuGraph *)calloc(1, sizeof(FluxEmuGraph));
  if (!e) return cudaErrorMemoryAllocation;
  e->n = e->cap = g->n;
  e->node = (Node *)emu_xrealloc(NULL, (size_t)g->n * sizeof(Node), false);
  memcpy(e->node, g->node, (size_t)g->n * sizeof(Node));
  *exec = e;
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  STICKY();
  if (s && s->capturing) return cudaErrorStreamCaptureUnsupported;
  for (int i = 0; i < exec->n; i++) {
    Node *n = &exec->node[i];
    for (int a = 0; a < n->k->nargs; a++) n->argp[a] = n->argv[a];
    cudaError_t e = run_launch(n->k, n->grid, n->block, n->argp);
    if (e) return e;
  }
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  graph_free(g);
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  graph_free(exec);
  return cudaSuccess;
}
