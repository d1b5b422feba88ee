// warm.c — a round's candidates built ahead in child processes.
//
// PoCL builds a kernel twice: the program at clBuildProgram and its
// work-group function at the first launch of each local size (0.15-0.2 s a
// candidate, against 0.02 s from its on-disk cache), both under one lock per
// process, so threads do not overlap them. `fluxcc --warm-worker TARGET`
// processes, --jobs of them, build and launch a round's candidates once,
// untimed (no cache flush), on zeroed buffers of the real sizes and grid
// (PoCL's cache key includes the local size and whether the grid is small),
// each taking the next job (a
// program: one candidate, or several built as one where the driver batches)
// as it finishes one; the search then finds every build in the cache. A
// grid whose every dimension is under 65535 work-items is launched as one
// group: PoCL specializes only on "small grid" or not, and a slow candidate's
// full run here would cost as much as its checked run in the search.
// A child says how far it is (its program built, then each kernel
// launched), so that the build limit falls on the kernel that is slow: most
// of an unrolled kernel's build is its first launch (an attention kernel's
// 440 KB: 2.0 s of program, 6.3 s of first launch).
// Nothing here decides anything: a child that fails, crashes or is missing
// only costs the time it would have saved, since the search's own compile and
// checked run say what is wrong with a candidate, as before.
#include "fluxcc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_WORKERS 64
#define SMALL_GRID 65535  // PoCL's CPU devices: work-items per grid dimension it calls small

typedef struct {
  pid_t pid;
  int fd;         // a socket: the job goes down it; "b\n" (built), "k\n" (a kernel launched) and "done\n" come back
  int job;        // being built, -1: idle
  int from;       // its kernels from this one on (a job sent again after a kernel was refused)
  int stage;      // 0: building the program; 1 + i: launching its kernel from + i
  double since;   // when it took the job
  double at;      // when its stage began
  double build_s; // its program's build, once built
} Worker;

// one job on the wire: a header line, then the source's bytes
static bool send_all(int fd, const void *p, size_t n) {
  for (const char *s = p; n;) {
    ssize_t w = send(fd, s, n, MSG_NOSIGNAL);  // a dead child: EPIPE, not a signal
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    s += w, n -= (size_t)w;
  }
  return true;
}

static bool send_job(int fd, const WarmJob *w, int from) {
  Str h = {0};
  str_printf(&h, "%d %d %zu", w->nk - from, w->nargs, strlen(w->src));
  for (int i = 0; i < w->nargs; i++) str_printf(&h, " %zu", w->bytes[i]);
  str_printf(&h, "\n");
  for (int i = from; i < w->nk; i++) {
    const WarmKernel *k = &w->k[i];
    str_printf(&h, "%s %u %u %u %u %u %u\n", k->fn, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2]);
  }
  bool ok = send_all(fd, h.s, strlen(h.s)) && send_all(fd, w->src, strlen(w->src));
  free(h.s);
  return ok;
}

// the child's next line: 'b' (its program built), 'k' (a kernel launched),
// 'd' ("done": one job is out at a time, so nothing follows it), 0: anything else
static int read_reply(int fd) {
  char line[8];
  size_t n = 0;
  while (n < sizeof line) {
    ssize_t r = recv(fd, line + n, 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    if (line[n++] != '\n') continue;
    if (n == 2 && (line[0] == 'b' || line[0] == 'k')) return line[0];
    return n == 5 && !memcmp(line, "done\n", 5) ? 'd' : 0;
  }
  return 0;
}

static void worker_stop(Worker *k) {
  close(k->fd);
  int st;
  while (waitpid(k->pid, &st, 0) < 0 && errno == EINTR) {
  }
  k->pid = 0, k->job = -1;
}

// What a build costs here, learned from the children's builds: seconds per
// byte of program text, over the last WARM_RATES programs of WARM_RATE_MIN
// bytes or more that built within the limit (the prelude's fixed cost is
// then small; below it, time is not proportional to text).
#define WARM_RATES 64
#define WARM_RATE_MIN 32768
struct WarmPool {
  const Target *target;
  int n;
  Worker w[MAX_WORKERS];
  double rate[WARM_RATES];
  int nrate;                // programs measured (the last WARM_RATES kept)
  double waited, capacity;  // seconds in warm_build; those times its live children
  double busy;              // children's seconds with a job, over the same calls
};

// one child into w; false: it could not be started
static bool worker_spawn(const Target *T, Worker *w) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);  // dup2 clears close-on-exec on 0 and 1
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  char *argv[] = {"fluxcc", "--warm-worker", (char *)T->name, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (rc) {
    close(sv[0]);
    return false;
  }
  *w = (Worker){.pid = pid, .fd = sv[0], .job = -1};
  return true;
}

// nprocs children, started now and kept for the whole search: a child's
// first build loads the driver's kernel library, which is worth doing once
WarmPool *warm_start(const Target *T, int nprocs) {
  WarmPool *p = xcalloc(1, sizeof *p);
  p->target = T;
  if (nprocs > MAX_WORKERS) nprocs = MAX_WORKERS;
  while (p->n < nprocs && worker_spawn(T, &p->w[p->n])) p->n++;
  return p;
}

void warm_stop(WarmPool *p) {
  if (!p) return;
  for (int i = 0; i < p->n; i++)
    if (p->w[i].pid) worker_stop(&p->w[i]);  // EOF: it exits
  free(p);
}

// What a worker's stage may still take (s; 0 or less: it is over the limit).
// The program's build may take the limit. A kernel's first launch may take
// the limit less its share of the program's build (by the length of its
// text): what it would cost built alone, charged to it and not to the
// kernels built with it.
static double stage_left(const Worker *k, const WarmJob *w, double limit_s) {
  if (k->stage == 0) return k->since + limit_s - now_s();
  size_t all = 0;
  for (int i = 0; i < w->nk; i++) all += w->k[i].len;
  double share = all ? (double)w->k[k->from + k->stage - 1].len / (double)all : 1.0 / w->nk;
  return k->at + limit_s - share * k->build_s - now_s();
}

typedef struct { int job, from; } Again;  // a job sent again, its kernels from `from` on

int warm_build(WarmPool *p, const WarmJob *jobs, int n, double limit_s, bool *late, WarmReady *ready, void *arg) {
  double t0 = now_s();
  int next = 0, built = 0, nq = 0, qat = 0, most = 1, live = 0;
  for (int i = 0; i < p->n; i++) live += p->w[i].pid != 0;
  for (int j = 0; j < n; j++) most += jobs[j].nk;
  Again *q = xcalloc((size_t)most, sizeof *q);  // each refuses a kernel: fewer than all the kernels
  for (;;) {
    // idle workers take a job sent again first, then the next job; one whose send fails is gone
    for (int i = 0; i < p->n && (qat < nq || next < n); i++) {
      Worker *k = &p->w[i];
      if (!k->pid || k->job >= 0) continue;
      Again a = qat < nq ? q[qat++] : (Again){next++, 0};
      k->job = a.job, k->from = a.from, k->stage = 0, k->since = k->at = now_s(), k->build_s = 0;
      if (!send_job(k->fd, &jobs[a.job], a.from)) worker_stop(k);
    }
    // the limit: a child over it is killed, and a new child takes its place. Over it in the
    // program's build: the job is late (which kernel is slow is not known); in a kernel's first
    // launch: that kernel is refused, and the kernels after it go to a child again
    bool killed = false;
    for (int i = 0; i < p->n && limit_s > 0; i++) {
      Worker *k = &p->w[i];
      if (!k->pid || k->job < 0 || stage_left(k, &jobs[k->job], limit_s) > 0) continue;
      const WarmJob *w = &jobs[k->job];
      int job = k->job, x = k->from + k->stage - 1;
      bool done = false;
      if (k->stage == 0) late[job] = true;
      else {
        w->k[x].late = true, built += k->stage - 1;
        if (x + 1 < w->nk) q[nq++] = (Again){job, x + 1};
        else done = true;  // it was the last: the others are built
      }
      killed = true;
      p->busy += now_s() - k->since;
      kill(k->pid, SIGKILL);
      worker_stop(k);
      worker_spawn(p->target, k);
      if (done && ready) ready(arg, job);
    }
    if (killed) continue;  // the new children take the next jobs
    struct pollfd pf[MAX_WORKERS];
    int np = 0, at[MAX_WORKERS], wait_ms = -1;
    for (int i = 0; i < p->n; i++)
      if (p->w[i].pid && p->w[i].job >= 0) {
        pf[np] = (struct pollfd){.fd = p->w[i].fd, .events = POLLIN}, at[np++] = i;
        if (limit_s > 0) {  // until the nearest limit (passed: at once)
          int ms = (int)(stage_left(&p->w[i], &jobs[p->w[i].job], limit_s) * 1e3) + 1;
          if (ms < 0) ms = 0;
          if (wait_ms < 0 || ms < wait_ms) wait_ms = ms;
        }
      }
    if (np == 0) break;
    int got = poll(pf, (nfds_t)np, wait_ms);
    if (got == 0) continue;  // a limit passed
    if (got < 0) {
      if (errno == EINTR) continue;
      for (int i = 0; i < np; i++) worker_stop(&p->w[at[i]]);
      break;
    }
    for (int i = 0; i < np; i++) {
      if (!pf[i].revents) continue;
      Worker *k = &p->w[at[i]];
      int r = read_reply(k->fd);
      if (!r) {
        p->busy += now_s() - k->since;
        worker_stop(k);  // died (or said something else): its job stays cold
        continue;
      }
      if (r == 'b') k->build_s = now_s() - k->since;
      if (r != 'd') {  // the next stage: its first kernel's launch, or the next kernel's
        k->stage++, k->at = now_s();
        continue;
      }
      int job = k->job;
      size_t len = strlen(jobs[job].src);
      if (len >= WARM_RATE_MIN && k->from == 0) p->rate[p->nrate++ % WARM_RATES] = (now_s() - k->since) / (double)len;
      built += jobs[job].nk - k->from, k->job = -1, p->busy += now_s() - k->since;
      if (ready) ready(arg, job);
    }
  }
  free(q);
  p->waited += now_s() - t0, p->capacity += (now_s() - t0) * live;
  return built;
}

void warm_usage(const WarmPool *p, double *waited_s, double *busy) {
  *waited_s = p ? p->waited : 0;
  *busy = p && p->capacity > 0 ? fmin(p->busy / p->capacity, 1.0) : 0;
}

// seconds a program of `bytes` bytes of text may take a child to build: its
// length times the rate of the slower builds so far, the 90th percentile (a
// byte's cost varies 3x from kernel to kernel: 9-19 us here, the median 13;
// an unrolled attention kernel's more). 0: not known yet (fewer than 3
// builds measured) or a program under WARM_RATE_MIN.
double warm_predict_s(const WarmPool *p, size_t bytes) {
  if (!p || bytes < WARM_RATE_MIN) return 0;
  int n = p->nrate < WARM_RATES ? p->nrate : WARM_RATES;
  if (n < 3) return 0;
  double r[WARM_RATES];
  memcpy(r, p->rate, sizeof *r * (size_t)n);
  qsort(r, (size_t)n, sizeof *r, cmp_double);
  return r[n * 9 / 10] * (double)bytes;
}

// a line to the search; false: it is gone
static bool say(const char *line) { return fputs(line, stdout) >= 0 && fflush(stdout) == 0; }

// FLUXCC_FAULT=slow-launch-every=N: kernel fn of a program is marked when the
// mark comes before its declaration and after any other kernel's
static bool launch_marked(const char *src, const char *fn) {
  char sig[WARM_FN + 8];
  snprintf(sig, sizeof sig, "void %s(", fn);
  const char *at = strstr(src, sig), *m = NULL;
  for (const char *p = src; at && (p = strstr(p, SLOW_LAUNCH_MARK)) && p < at; p++) m = p;
  const char *k = m ? strstr(m, "__kernel") : NULL, *k2 = k ? strstr(k + 1, "__kernel") : NULL;
  return k && k < at && (!k2 || k2 > at);
}

// The child: jobs from stdin until EOF; after each, "b\n" once its program
// is built (or not), "k\n" after each kernel's first launch, then "done\n".
#define MAX_BATCH 4096
_Static_assert(WARM_FN == 176, "the kernel names' scanf width below (%175s) is WARM_FN - 1");
int warm_worker(const char *target_name) {
  const Target *T = target_find(target_name);
  if (!T) return 2;
  int die_at = 0, slow = 0, slow_launch = 0;
  if (fault_setting("warm-child-dies", &die_at) < 0 || fault_setting("slow-build-every", &slow) < 0 ||
      fault_setting("slow-launch-every", &slow_launch) < 0)
    return 2;
  const DeviceOps *D = T->device;
  char err[512];
  Device *d = D->open(false, T->kflags, err, sizeof err);
  if (!d) return 1;
  size_t *bytes = NULL, *held = NULL;  // this job's argument sizes; those allocated on the device (held_n of them)
  int held_n = -1, njobs = 0;
  char *src = NULL, (*fn)[WARM_FN] = xcalloc(MAX_BATCH, sizeof *fn);
  const char **fns = xcalloc(MAX_BATCH, sizeof *fns);
  unsigned(*g)[3] = xcalloc(MAX_BATCH, sizeof *g), (*b)[3] = xcalloc(MAX_BATCH, sizeof *b);
  void **bins = xcalloc(MAX_BATCH, sizeof *bins);
  for (;;) {
    int nk, nargs;
    size_t len;
    if (scanf("%d %d %zu", &nk, &nargs, &len) != 3) break;
    if (nk < 1 || nk > MAX_BATCH || (nk > 1 && !D->compile_batch) || nargs < 0 || nargs > 4096 || len > ((size_t)1 << 30)) break;
    bytes = realloc(bytes, ((size_t)nargs + 1) * sizeof *bytes);
    bool ok = bytes != NULL;
    for (int i = 0; ok && i < nargs; i++) ok = scanf("%zu", &bytes[i]) == 1;
    for (int i = 0; ok && i < nk; i++)
      ok = scanf("%175s %u %u %u %u %u %u", fn[i], &g[i][0], &g[i][1], &g[i][2], &b[i][0], &b[i][1], &b[i][2]) == 7, fns[i] = fn[i];
    if (!ok || getchar() != '\n' || !(src = realloc(src, len + 1)) || fread(src, 1, len, stdin) != len) break;
    src[len] = 0;
    if (die_at && ++njobs == die_at) raise(SIGKILL);  // FLUXCC_FAULT=warm-child-dies=N: as a crashing compiler would
    if (slow && strstr(src, SLOW_BUILD_MARK)) sleep(600);  // FLUXCC_FAULT=slow-build-every=N: a build that never ends
    bool built = nk == 1 ? (bins[0] = D->compile(d, src, fns[0], err, sizeof err)) != NULL
                         : D->compile_batch(d, src, fns, nk, bins, err, sizeof err) == 0;
    // the arguments: allocated and zeroed again only when a job's sizes differ from the last one's (a round's share them)
    if (built && (held_n != nargs || memcmp(held, bytes, (size_t)nargs * sizeof *bytes))) {
      size_t most = 1;
      for (int i = 0; i < nargs; i++) most = bytes[i] > most ? bytes[i] : most;
      void *zeros = calloc(1, most);
      ok = zeros && D->alloc(d, nargs, bytes, err, sizeof err) == 0;
      for (int i = 0; ok && i < nargs; i++) ok = D->upload(d, i, zeros, err, sizeof err) == 0;
      free(zeros);
      size_t *tmp = held;  // held takes these sizes; bytes is reallocated by the next job
      held = bytes, bytes = tmp, held_n = ok ? nargs : -1;
    }
    bool said = say("b\n");  // built (or not): the kernels' first launches next
    for (int i = 0; built && said && i < nk; i++) {
      uint32_t grid[3] = {1, 1, 1}, block[3] = {b[i][0], b[i][1], b[i][2]};
      for (int x = 0; x < 3; x++)
        if ((uint64_t)g[i][x] * b[i][x] >= SMALL_GRID) memcpy(grid, g[i], sizeof grid);  // not small: the real grid
      if (slow_launch && launch_marked(src, fns[i])) sleep(600);  // FLUXCC_FAULT=slow-launch-every=N: a first launch that never ends
      if (held_n == nargs) D->launch(d, bins[i], grid, block, NULL, err, sizeof err);  // untimed: no cache flush
      D->release(d, bins[i]);
      said = say("k\n");
    }
    if (!said || !say("done\n")) break;
  }
  free(src), free(fn), free(fns), free(g), free(b), free(bins);
  free(bytes);
  free(held);
  D->close(d);
  return 0;
}
