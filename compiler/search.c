// search.c — the methods, and the measured searches over opt actions.
//
// A fixed method (raw, hc, tc) is a function of the kernel. BEAM and MCTS are
// measured: tinygrad's algorithms over our opt actions; BEST times RAW, HC,
// TC and their choices side by side. Every candidate is rendered,
// deduplicated by its source, compiled (concurrently, --jobs; on OpenCL built
// ahead in child processes first, warm.c), run once on
// seeded random inputs with a poisoned output and compared with RAW's output
// (a candidate that differs is rejected, never chosen), then timed with
// device events, one candidate at a time. What was measured is kept per
// unique kernel (Tuned): it goes into records.json and the kernel headers, is
// cached on disk (one file per kernel, written atomically), and a records.json
// can be replayed with no device at all. Both files are written, read back and
// checked by records.c.
#include "fluxcc.h"

#include <ctype.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// Bump when the actions, the validation or the scoring change: cache entries
// made under other rules are then not used.
#define SEARCH_RULES 20  // 6: TC pads unaligned m, n, k; 7: VEC; 8: checked runs first, timed fastest first; 9: RVEC, HC starts BEAM;
                         // 10: OpenCL launches timed with the CPU caches flushed; 11: RL's forward budget;
                         // 12: a checked run is called slow only beyond FIRST_LAUNCH_US more;
                         // 13: RL expands HC's kernel from the start; a build over --build-limit is refused;
                         // 14: RL times the kernels chosen for earlier kernels of the same shape in its first batch;
                         // 15: RL stops a kernel with peers after RL_PATIENCE_PEERED batches without a gain;
                         // 16: a candidate whose text would build over --build-limit is refused unbuilt;
                         // 17: sums render in one order, so two paths to one kernel are one candidate;
                         // 18: RL's batch before its patience ends times HC's untimed children first;
                         // 19: the cost model's leaves need a weight of 8 (costmodel.c LEAF_WEIGHT);
                         // 20: BEAM and MCTS start from RAW, HC and TC; the finals decide (--from raw, in the key: neither)
#define TIMEOUT_US 10e6       // a candidate whose first launch takes longer is not timed further
#define SLOW_FACTOR 3.0       // early stop: a candidate already this much slower than the reference (stop_ref)
// What a first launch may cost beyond a warm one (PoCL, flux-tiny's kernels:
// typically 2-5 us more, up to ~30): a checked run is over the reference by
// SLOW_FACTOR plus this before it alone calls a candidate slow; under it, one
// timed run decides. Without it a 1 us kernel's every new candidate looked 3x
// slower than the timed baselines, and RL and MCTS never timed one.
#define FIRST_LAUNCH_US 50.0
#define RL_PEERS 2            // RL: earlier kernels of the same shape whose chosen kernels it starts from
// The finals (finals()): a search's FINALISTS fastest candidates against the
// fixed methods, FINAL_ROUNDS rounds of FINAL_LAUNCHES launches each, a
// round's time their least (one launch a round: flux-tiny's sub-microsecond
// kernels read 0.4 us first and 9 us at the finals' median; each launch
// flushes the caches, ~2 ms here, so the finals cost ~10% of a flux-tiny
// BEAM --budget 16); a challenger must be faster in the upper quartile of the
// rounds' ratios and by FINAL_MARGIN at their median.
#define FINALISTS 2
#define FINAL_LAUNCHES 3
#define FINAL_MARGIN 0.01
#define FINAL_NEAR 1.5        // only candidates within this factor of the best fixed method's first measurement

//
// The methods
//
static void m_raw(Kernel *k, uint64_t seed, bool tf32) { (void)k, (void)seed, (void)tf32; }
static void m_hc(Kernel *k, uint64_t seed, bool tf32) { (void)seed, (void)tf32; opt_hc(k); }
static void m_tc(Kernel *k, uint64_t seed, bool tf32) { (void)seed; opt_tc(k, tf32); }
static void m_random(Kernel *k, uint64_t seed, bool tf32) { (void)tf32; opt_random(k, &seed, 6); }

static void beam_search(Search *S, int used);
static void mcts_search(Search *S, int used);
static void rl_search(Search *S, int used);
static bool runs_rl(const Method *m) { return m->search == rl_search || m->kind == METHOD_BEST; }  // BEST runs RL too

const Method methods[] = {
#define X(name, kind, apply, search, what, built, compared, tc_notes, tile_n) \
  {#name, kind, apply, search, what, built, compared, tc_notes, tile_n},
  METHODS(X)
#undef X
  {NULL, 0, NULL, NULL, NULL, false, false, false, 0},
};

// the fixed methods of compare's table, in order (RAW first): the baselines
static int fixed_methods(const Method **out) {
  int n = 0;
  for (const Method *m = methods; m->name && n < 8; m++)
    if (m->kind == METHOD_FIXED && m->compared) out[n++] = m;
  return n;
}

const Method *method_find(const char *name) {
  for (const Method *m = methods; m->name; m++)
    if (!strcmp(m->name, name)) return m;
  return NULL;
}

int optimize_schedule(Ctx *c, Schedule *s, const char *method, uint64_t seed, bool tf32) {
  const Method *m = method_find(method);
  if (!m || !m->apply) return -1;
  int refused = 0, shaped = 0;
  for (int u = 0; u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    char why[256], where[512];
    if (m->tc_notes && tc_refusal(k, tf32, why, sizeof why)) {
      fprintf(stderr, "fluxcc: note: kernel %d %s (%s): no tensor cores: %s\n", u, k->orig_name, diag_where(c, k->loc, where, sizeof where), why);
      refused++;
    }
    m->apply(&s->k.v[u], seed * 0x9e3779b97f4a7c15ull + (uint64_t)u * 0xbf58476d1ce4e5b9ull + 1, tf32);
    shaped += m->tc_notes && k->tc_dt >= 0;
  }
  if (m->tc_notes) fprintf(stderr, "fluxcc: note: tensor cores on %d of %d matmul-shaped unique kernels\n", shaped, shaped + refused);
  schedule_names(s);
  return 0;
}

//
// One kernel's search
//
typedef struct {
  Kernel k;
  char *src;
  size_t body_at;           // where src's kernel starts (after the kernel prelude)
  void *bin;
  char err[256];
  uint32_t grid[3], block[3];
  uint64_t hash;            // of src
  Cand cand;
  double check_us;          // its checked run's time (us)
  bool late;                // its build in a child passed --build-limit: refused, not built here
} Job;

typedef struct { uint64_t h; double t; } Seen;   // a rendered source evaluated, and its time
// A valid candidate's binary kept for the finals (keep()): building it again
// took most of the finals' time (flux-tiny: 5.8 of 12.6 s, and 1.2 s checking).
typedef struct { int cand; void *bin; uint32_t grid[3], block[3]; uint64_t hash; } Kept;
#define KEPT_SEARCHED 8       // the fastest searched candidates kept (BEST's finals take up to 8 methods' kernels)
#define KEPT_MAX 12           // and every fixed method's (RAW, HC, TC)

// The candidate-marking test switches of FLUXCC_FAULT, each its N (0: off)
// or, as a count, the candidates it has seen: the Nth of them is marked.
typedef struct {
  int wrong;                // wrong-every=N: the Nth candidate stores a wrong value
  int no_barrier;           // no-barrier-every=N: the Nth candidate with barriers loses them
  int swap_args;            // swap-args-every=N: the Nth candidate with two alike inputs takes them swapped
  int bad_source;           // bad-source-every=N: the Nth candidate does not compile
  int slow_build;           // slow-build-every=N: the Nth candidate's build never ends in a child
  int slow_launch;          // slow-launch-every=N: the Nth candidate's first launch never ends in a child
  int lucky;                // lucky-every=N: the Nth timed search candidate's runs read 10x faster (a quiet moment)
} Faults;

struct Search {
  Ctx *c;
  SearchOpts *so;
  const DeviceOps *ops;
  Device *d;
  Kernel base;              // the unoptimized kernel
  int u, nu;                // which unique kernel, of how many
  size_t *bytes;            // per argument
  void **host;              // per argument: the seeded random inputs (0: the poison)
  void *ref, *out;          // RAW's output, the candidate's
  double tol;               // relative L2 allowed against RAW
  double best, raw;         // best valid time so far, RAW's (us)
  Kernel hc, tc;            // HC's and TC's kernels where they validated and differ from RAW's (naxes 0: not):
  double hc_t, tc_t;        // starts of BEAM, MCTS (and HC of RL); their times (us)
  double stop_ref;          // a candidate SLOW_FACTOR slower than this stops being timed
  bool tighten;             // BEAM: a faster candidate of this round lowers stop_ref
  VEC(Seen) seen;           // rendered sources already evaluated (this kernel, this method)
  const char *method;       // the search under way (best runs beam and mcts)
  bool ready;               // arguments allocated and filled for this kernel
  int rc;                   // 2 after a device error
  Tuned *t;
  Faults every, counted;     // the test switches' N, and the candidates each has seen
  bool fake_time;           // test switch FLUXCC_FAULT=fake-time: times are a function of the source
  int first_launch_us;      // FLUXCC_FAULT=first-launch-us=N: every checked run takes N us longer (a slow first launch)
  int build_rate_us;        // FLUXCC_FAULT=build-rate-us=N: a build's predicted time is N us a byte (not learned)
  bool no_batch;            // FLUXCC_FAULT=no-batch: each candidate its own program (what batching must equal)
  CostModel *model;         // --model's (guides every search), or auto's for RL alone; NULL: none
  bool model_all;           // --model given: BEAM and MCTS are guided too (else they stay blind)
  TrainSet online;          // RL: the measured candidates of the kernels searched before this one
  bool said_predict;        // a failed prediction was said once
  double t0, all_t0;        // this kernel's and the whole search's start
  double finals_s;          // the finals' share of the wall time, all kernels so far
  Kept kept[KEPT_MAX];      // this kernel's binaries the finals may time (keep())
  int nkept;
  int done_before;          // kernels searched (not cached) before this one
  WarmPool *warm;           // the children that build candidates ahead (warm.c), from the first round on
  int warm_asked, warmed;   // candidates sent to them, built there
  int too_long;             // candidates refused unbuilt, their text too long to build in time
  int compiled;             // candidates compiled, all kernels so far
  int *allot;               // RL's forward budget: timed candidates per unique kernel (NULL: --budget for each)
  const Tuned *tuned;       // every unique kernel's search so far (those before u are done): RL's peers
  double *share;            // each kernel's share of the forward by its baselines
  bool tty;
};

// a candidate of a fixed method (RAW, HC, TC), not a search's
static bool from_fixed(const Cand *c) { return method_find(c->from)->kind == METHOD_FIXED; }

// the finals chose another kernel than the first measurement would have (a
// kernel by its name after opts: BEST's methods that chose one kernel are one finalist)
static bool overruled(const Tuned *t) {
  return t->finals && t->chosen != t->first && strcmp(t->cands.v[t->chosen].name, t->cands.v[t->first].name);
}

static void progress(Search *S, bool final) {
  if (S->so->quiet) return;
  double el = final ? S->t->wall_s : now_s() - S->t0, all = now_s() - S->all_t0;
  int timed = 0;
  for (int i = 0; i < S->t->cands.n; i++) timed += S->t->cands.v[i].status != CAND_PREDICTED;
  char best[64] = "none valid";
  if (S->best < INFINITY) snprintf(best, sizeof best, "best %.1f us (%.2fx raw)", S->best, S->raw / S->best);
  if (S->tty && !final) {
    // the ETA assumes the kernels left take what the searched ones took on average
    double per = S->done_before ? (all - el) / S->done_before : 0;
    char eta[48] = "";
    if (per > 0) snprintf(eta, sizeof eta, ", ETA %.0f s", per * (S->nu - S->u) - el);
    fprintf(stderr, "\r\033[K%s %d/%d %s: %d timed, %s, %.1f s%s", S->method, S->u + 1, S->nu, S->base.name, timed, best, all, eta);
  } else if (final) {
    const Tuned *t = S->t;
    char fin[200] = "";
    if (overruled(t)) {
      const Cand *ch = &t->cands.v[t->chosen], *fi = &t->cands.v[t->first];
      int won = 0;  // the rounds the first measurement's winner was the faster in
      for (int r = 0; r < FINAL_ROUNDS && fi->fin_rounds && ch->fin_rounds; r++) won += fi->fin_us[r] < ch->fin_us[r];
      snprintf(fin, sizeof fin, "; the finals chose %s's kernel (median %.3g us) over %s's (first measured %.3g us, median %.3g, faster in %d of %d rounds)",
               t->method, ch->fin_med, fi->from, fi->tmin, fi->fin_med, won, FINAL_ROUNDS);
    }
    fprintf(stderr, "%s%s %d/%d %s -> %s: %s, %d candidates, %.1f s%s\n", S->tty ? "\r\033[K" : "", S->method, S->u + 1, S->nu,
            S->base.name, t->method, best, timed, el, fin);
  }
}

// seeded uniform values in [-1, 1) in the argument's dtype
static void fill_random(void *p, int dt, int64_t n, uint64_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  for (int64_t i = 0; i < n; i++) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    double v = (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
    dtype_store(dt, p, (size_t)i, dt == DT_BOOL ? v > 0 : v);
  }
}

// Relative L2 distance of out from ref; NaN and infinity must sit where RAW has them.
static double distance(const void *out, const void *ref, int dt, int64_t n) {
  if (dt == DT_BOOL) return memcmp(out, ref, (size_t)n) ? INFINITY : 0;
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = dtype_load(dt, out, (size_t)i), b = dtype_load(dt, ref, (size_t)i);
    if (!isfinite(b) || !isfinite(a)) {
      if (!(isnan(a) && isnan(b)) && a != b) return INFINITY;
      continue;
    }
    num += (a - b) * (a - b), den += b * b;
  }
  if (num == 0) return 0;
  return den > 0 ? sqrt(num / den) : INFINITY;
}

// The fault switch swap-args-every: the kernel's signature names two inputs
// of one dtype and size (so no access leaves its buffer) in each other's
// place, as a wrong argument order would. false when it has no such pair.
static bool swap_inputs(Search *S, const Kernel *k, char **body) {
  int a = 0, b = 0;
  for (int i = 1; i < k->args.n && !a; i++)
    for (int j = i + 1; j < k->args.n && !a; j++)
      if (S->bytes && k->args.v[i].dt == k->args.v[j].dt && S->bytes[i] == S->bytes[j]) a = i, b = j;
  char *name = a ? strstr(*body, k->name) : NULL, *open = name ? strchr(name, '(') : NULL, *close = open ? strchr(open, ')') : NULL;
  if (!close) return false;
  char pa[48], pb[48];
  snprintf(pa, sizeof pa, "%s", k->args.v[a].name), snprintf(pb, sizeof pb, "%s", k->args.v[b].name);
  Str o = {0};
  str_printf(&o, "%.*s", (int)(open - *body), *body);
  for (const char *p = open; p < close;) {  // each name's token, not its prefix (p_in1 of p_in10)
    size_t la = strlen(pa), lb = strlen(pb);
    bool at_a = !strncmp(p, pa, la) && !isdigit((unsigned char)p[la]), at_b = !strncmp(p, pb, lb) && !isdigit((unsigned char)p[lb]);
    if (at_a || at_b) str_printf(&o, "%s", at_a ? pb : pa), p += at_a ? la : lb;
    else str_printf(&o, "%c", *p++);
  }
  str_printf(&o, "%s", close);
  free(*body);
  *body = o.s;
  return true;
}

// Lower and render a candidate; the source a device compiles is the kernel
// prelude followed by the kernel.
static void render_job(Search *S, Job *j) {
  Program p;
  kernel_rename(&j->k);
  lower_kernel(S->c, NULL, &j->k, &p);
  char *body = render_kernel(S->c, NULL, &j->k, &p, S->so->target);
  for (int x = 0; x < 3; x++) j->grid[x] = p.global[x], j->block[x] = p.local[x];
  kernel_features(&j->k, &p, j->cand.feat);
  j->cand.has_feat = true;
  program_free(&p);
  Str o = {0};
  str_printf(&o, "%s\n", template_text(S->so->target, targets[S->so->target].prelude));
  j->body_at = o.n;
  // the fault switch of the tests: this candidate stores a wrong value
  if (S->every.wrong && strcmp(j->cand.from, "raw") && ++S->counted.wrong % S->every.wrong == 0)
    for (int t = 0; t < 3; t++)
      for (int w = 1; w <= 16; w *= 2) {  // st_f32, and the vector stores st_f32x2 ... st_f32x16 (VEC)
        static const char *const st[] = {"st_f32", "st_bf16", "st_f16"};
        char f[16];
        if (w == 1) snprintf(f, sizeof f, "%s", st[t]);
        else snprintf(f, sizeof f, "%sx%d", st[t], w);
        str_printf(&o, "#define %s(p, i, v) %s(p, i, (v) + 1.0f)\n", f, f);
      }
  const char *bar = targets[S->so->target].dialect->barrier;
  if (S->every.no_barrier && *bar && strcmp(j->cand.from, "raw") && strstr(body, bar) && ++S->counted.no_barrier % S->every.no_barrier == 0)
    for (char *p; (p = strstr(body, bar));) memset(p, ' ', strlen(bar));  // a missing synchronization
  if (S->every.swap_args && strcmp(j->cand.from, "raw") && ++S->counted.swap_args % S->every.swap_args == 0 && !swap_inputs(S, &j->k, &body))
    S->counted.swap_args--;  // no alike pair here: the next candidate that has one
  if (S->every.bad_source && strcmp(j->cand.from, "raw") && ++S->counted.bad_source % S->every.bad_source == 0)
    str_printf(&o, "#error \"FLUXCC_FAULT: a candidate that does not compile\"\n");
  if (S->every.slow_build && strcmp(j->cand.from, "raw") && ++S->counted.slow_build % S->every.slow_build == 0) str_printf(&o, "%s\n", SLOW_BUILD_MARK);
  if (S->every.slow_launch && strcmp(j->cand.from, "raw") && ++S->counted.slow_launch % S->every.slow_launch == 0)
    str_printf(&o, "%s\n", SLOW_LAUNCH_MARK);
  str_printf(&o, "%s", body);
  free(body);
  j->src = o.s;
  snprintf(j->cand.name, sizeof j->cand.name, "%s", j->k.name);
  j->cand.nopts = j->k.nopts;
  memcpy(j->cand.opts, j->k.opts, sizeof j->k.opts);
}

// A candidate's identity: its kernel's text (the prelude before it is the
// same for all), so equal sources are one candidate and fake times do not
// move when the prelude does
static uint64_t job_hash(const Job *j) { return fnv_bytes(FNV_SEED, j->src + j->body_at, strlen(j->src + j->body_at)); }

typedef struct {
  Search *S;
  Job **jobs;
  int n, next;
  pthread_mutex_t mu;
} Pool;

static void *compile_worker(void *arg) {
  Pool *P = arg;
  for (;;) {
    pthread_mutex_lock(&P->mu);
    int i = P->next++;
    pthread_mutex_unlock(&P->mu);
    if (i >= P->n) return NULL;
    Job *j = P->jobs[i];
    if (!j->late) j->bin = P->S->ops->compile(P->S->d, j->src, j->k.name, j->err, sizeof j->err);
  }
}

// A child's first build costs PoCL about 0.85 s (its kernel library loaded
// into a new process): children start once a search has shown it is long
#define WARM_AFTER 48  // candidates compiled in this process first

// children may build ahead for this search (whether or not they have started)
static bool may_warm(const Search *S) { return S->ops->warm_children && S->so->jobs > 1 && !S->so->compile_only; }

// the programs sent to the children (ncand candidates in them), each
// within --build-limit; late[b]: program b was not built within it; ready:
// called with each program as a child has built it
static void build_ahead(Search *S, const WarmJob *wj, int nj, int ncand, bool *late, WarmReady *ready, void *arg) {
  if (!S->warm) S->warm = warm_start(S->so->target, S->so->jobs);
  S->warmed += warm_build(S->warm, wj, nj, S->so->build_limit_s, late, ready, arg);
  S->warm_asked += ncand;
}

static WarmKernel warm_kernel(const Job *j, const char *fn) {
  WarmKernel k = {.fn = fn, .len = strlen(j->src + j->body_at)};
  memcpy(k.grid, j->grid, sizeof k.grid), memcpy(k.block, j->block, sizeof k.block);
  return k;
}

// A candidate a child did not build within --build-limit (launch: its first
// launch ran past it): refused, but for a baseline (round 0), which is built
// here however long it takes.
static void refuse_late(Search *S, Job *j, bool launch) {
  if (j->cand.round == 0 || j->late) return;
  j->late = true;
  snprintf(j->err, sizeof j->err, "not built within %d s (--build-limit) in a child process%s", S->so->build_limit_s,
           launch ? " (in its first launch)" : "");
}

// A late program's candidates (those not refused already, by their first
// launch): one alone is refused; several are each built alone, within the
// limit again, so that only a slow one is refused (the others are then in
// the driver's cache for this process to build).
static void late_alone(Search *S, Job **jobs, int n) {
  WarmJob *wj = xcalloc((size_t)n + 1, sizeof *wj);
  WarmKernel *wk = xcalloc((size_t)n + 1, sizeof *wk);
  bool *late = xcalloc((size_t)n + 1, sizeof *late);
  Job **alone = xcalloc((size_t)n + 1, sizeof *alone);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!jobs[i]->late) alone[m++] = jobs[i];
  for (int i = 0; i < m; i++) {
    wk[i] = warm_kernel(alone[i], alone[i]->k.name);
    wj[i] = (WarmJob){.src = alone[i]->src, .nk = 1, .k = &wk[i], .nargs = S->base.args.n, .bytes = S->bytes};
  }
  if (n > 1 && m > 0) S->warmed += warm_build(S->warm, wj, m, S->so->build_limit_s, late, NULL, NULL);
  else late[0] = true;  // the program's one candidate was the slow one
  for (int i = 0; i < m; i++)
    if (late[i] || wk[i].late) refuse_late(S, alone[i], !late[i]);
  free(wj), free(wk), free(late), free(alone);
}

// Batched: n candidates as one program's text, the prelude once, each kernel
// renamed NAME_bI (candidates of one kernel may share a name); the fault
// switches' #defines end with their candidate. false: a kernel's signature
// was not found (the round is compiled one candidate at a time).
static bool batch_text(Search *S, Job **jobs, int n, Str *o, char (*fn)[WARM_FN]) {
  str_printf(o, "%s\n", template_text(S->so->target, targets[S->so->target].prelude));
  for (int i = 0; i < n; i++) {
    const char *part = jobs[i]->src + jobs[i]->body_at;
    char sig[200];
    snprintf(sig, sizeof sig, "void %s(", jobs[i]->k.name);
    const char *at = strstr(part, sig);
    if (!at) return false;
    snprintf(fn[i], sizeof *fn, "%s_b%d", jobs[i]->k.name, i);
    str_printf(o, "%.*svoid %s(%s\n", (int)(at - part), part, fn[i], at + strlen(sig));
    for (const char *l = part; l && l < at; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
      if (!strncmp(l, "#define ", 8)) str_printf(o, "#undef %.*s\n", (int)strcspn(l + 8, "( \n"), l + 8);
  }
  return true;
}

// A round's programs. A driver whose programs cost more than their kernels
// (PoCL) builds the round as one program, or as one per child where children
// may build ahead, whether or not they have started (so RL's first pass, its
// prebuild and the search's baselines are the same texts, found in the
// driver's cache); else, or where a signature is not found, each candidate
// is its own program. One per child: the children build theirs side by side,
// so the candidates are dealt out by the length of their kernels' text, the
// longest first to the lightest program (a build's time grows with the code
// an unrolled kernel makes, and one candidate can take seconds).
typedef struct {
  bool batched;
  int nb;
  Job **jobs;               // the candidates, program by program
  int *at;                  // program b: jobs[at[b]] to jobs[at[b + 1] - 1]
  Str *src;                 // batched: each program's text
  char (*fn)[WARM_FN];      // each candidate's kernel name in it
  const char **names;
  WarmKernel *wk;
  WarmJob *wj;              // the nb programs
} Programs;

// jobs dealt into P->nb programs (P->jobs, P->at): each in turn, the longest
// kernel text first, to the program with the least text so far; a program
// keeps its candidates in their order
static void programs_deal(Programs *P, Job **jobs, int n) {
  int *to = xcalloc((size_t)n + 1, sizeof *to), *by = xcalloc((size_t)n + 1, sizeof *by);
  size_t *len = xcalloc((size_t)n + 1, sizeof *len), *load = xcalloc((size_t)P->nb + 1, sizeof *load);
  for (int i = 0; i < n; i++) by[i] = i, len[i] = strlen(jobs[i]->src + jobs[i]->body_at);
  for (int i = 1; i < n; i++)  // by length, longest first; stable, so ties keep their order
    for (int k = i; k > 0 && len[by[k]] > len[by[k - 1]]; k--) {
      int t = by[k];
      by[k] = by[k - 1], by[k - 1] = t;
    }
  for (int i = 0; i < n; i++) {
    int b = 0;
    for (int x = 1; x < P->nb; x++)
      if (load[x] < load[b]) b = x;
    to[by[i]] = b, load[b] += len[by[i]];
  }
  int m = 0;
  for (int b = 0; b < P->nb; b++) {
    P->at[b] = m;
    for (int i = 0; i < n; i++)
      if (to[i] == b) P->jobs[m++] = jobs[i];
  }
  P->at[P->nb] = n;
  free(to), free(by), free(len), free(load);
}

static void programs_make(Search *S, Job **jobs, int n, bool batch, Programs *P) {
  *P = (Programs){.batched = batch && S->ops->compile_batch && !S->no_batch && n > 1};
  P->nb = !P->batched ? n : may_warm(S) ? (S->so->jobs < n ? S->so->jobs : n) : 1;
  P->jobs = xcalloc((size_t)n + 1, sizeof *P->jobs);
  P->at = xcalloc((size_t)P->nb + 1, sizeof *P->at);
  programs_deal(P, jobs, n);
  jobs = P->jobs;
  P->src = xcalloc((size_t)P->nb + 1, sizeof *P->src);
  P->fn = xcalloc((size_t)n + 1, sizeof *P->fn);
  P->names = xcalloc((size_t)n + 1, sizeof *P->names);
  P->wk = xcalloc((size_t)n + 1, sizeof *P->wk);
  P->wj = xcalloc((size_t)P->nb + 1, sizeof *P->wj);
  for (int b = 0; b < P->nb; b++) {
    int lo = P->at[b], hi = P->at[b + 1];
    if (P->batched && !batch_text(S, jobs + lo, hi - lo, &P->src[b], P->fn + lo)) {  // one at a time
      Job **was = P->jobs;
      for (int i = 0; i <= b; i++) free(P->src[i].s);
      free(P->src), free(P->fn), free(P->names), free(P->wk), free(P->wj), free(P->at);
      programs_make(S, was, n, false, P);
      free(was);
      return;
    }
    for (int i = lo; i < hi; i++) {
      if (!P->batched) snprintf(P->fn[i], sizeof *P->fn, "%s", jobs[i]->k.name);
      P->names[i] = P->fn[i], P->wk[i] = warm_kernel(jobs[i], P->fn[i]);
    }
    P->wj[b] = (WarmJob){.src = P->batched ? P->src[b].s : jobs[lo]->src, .nk = hi - lo, .k = P->wk + lo, .nargs = S->base.args.n, .bytes = S->bytes};
  }
}

static void programs_free(Programs *P) {
  for (int b = 0; b < P->nb; b++) free(P->src[b].s);
  free(P->src), free(P->fn), free(P->names), free(P->wk), free(P->wj), free(P->jobs), free(P->at);
}

// Program b built in this process (from the driver's cache where a child
// built it). A batched program that does not build is built again one
// candidate at a time, so that each says its own error; a late one's
// candidates one at a time, the late ones not at all.
// A candidate whose first launch ran past the limit in a child is refused
// here (its program's others were built).
static void program_build(Search *S, Programs *P, int b, bool late) {
  Job **jobs = P->jobs;
  int lo = P->at[b], hi = P->at[b + 1];
  void *bins[hi - lo + 1];
  char err[256];
  for (int i = lo; i < hi; i++)
    if (P->wk[i].late) refuse_late(S, jobs[i], true);
  bool whole = P->batched && !late && S->ops->compile_batch(S->d, P->src[b].s, P->names + lo, hi - lo, bins, err, sizeof err) == 0;
  for (int i = lo; i < hi; i++) {
    if (whole && jobs[i]->late) S->ops->release(S->d, bins[i - lo]), bins[i - lo] = NULL;
    jobs[i]->bin = whole ? bins[i - lo] : jobs[i]->late ? NULL : S->ops->compile(S->d, jobs[i]->src, jobs[i]->k.name, jobs[i]->err, sizeof jobs[i]->err);
  }
}

// a child has built program b: this process builds it now, while the other
// children are still at theirs
typedef struct { Search *S; Programs *P; bool *built; } Ready;
static void ready_build(void *arg, int b) {
  Ready *r = arg;
  program_build(r->S, r->P, b, false);
  r->built[b] = true;
}

// A candidate whose text would take a child longer than --build-limit to
// build is refused before it is sent: a build's time grows with its text
// (an unrolled kernel's can be 4x the longest program built in time: 764 KB
// against 175 KB), and one over the limit costs a child the limit (twice
// where the time goes in its program's build: the program is built again
// one candidate at a time). The time is its length at the children's slower
// rate so far (warm_predict_s); under fake time, only at a rate given by
// FLUXCC_FAULT=build-rate-us=N, so that such searches stay reproducible. A
// baseline (round 0) is built however long it takes. true: refused.
static bool too_long_to_build(Search *S, Job *j) {
  int limit = S->so->build_limit_s;
  size_t len = strlen(j->src);
  double s = S->build_rate_us ? S->build_rate_us * 1e-6 * (double)len : S->fake_time ? 0 : warm_predict_s(S->warm, len);
  if (limit <= 0 || j->cand.round == 0 || s <= limit) return false;
  j->late = true, S->too_long++;
  snprintf(j->err, sizeof j->err, "not built: its %zu bytes of text would take about %.1f s to build here, over --build-limit %d s", len, s, limit);
  return true;
}

static void compile_all(Search *S, Job **jobs, int n) {
  S->compiled += n;
  bool warm = may_warm(S) && S->bytes && n > 1 && S->compiled - n >= WARM_AFTER;
  Job **sent = xcalloc((size_t)n + 1, sizeof *sent);
  int m = 0;
  for (int i = 0; i < n; i++)  // the ones too long to build are not sent (nor built here)
    if (!warm || !too_long_to_build(S, jobs[i])) sent[m++] = jobs[i];
  jobs = sent, n = m;
  Programs P;
  programs_make(S, jobs, n, true, &P);
  bool *late = xcalloc((size_t)P.nb + 1, sizeof *late), *built = xcalloc((size_t)P.nb + 1, sizeof *built);
  Ready r = {S, &P, built};
  if (warm) build_ahead(S, P.wj, P.nb, n, late, P.batched ? ready_build : NULL, &r);
  for (int i = 0; i < n; i++)  // a first launch past the limit: refused (program_build does it as a child builds)
    if (P.wk[i].late) refuse_late(S, P.jobs[i], true);
  for (int b = 0; b < P.nb; b++)
    if (late[b]) late_alone(S, P.jobs + P.at[b], P.at[b + 1] - P.at[b]);
  if (P.batched) {
    for (int b = 0; b < P.nb; b++)
      if (!built[b]) program_build(S, &P, b, late[b]);
  } else {
    Pool Q = {.S = S, .jobs = jobs, .n = n};
    pthread_mutex_init(&Q.mu, NULL);
    int nt = S->so->jobs < n ? S->so->jobs : n;
    pthread_t th[64];
    if (nt > 64) nt = 64;
    int started = 0;
    for (int i = 1; i < nt; i++)
      if (pthread_create(&th[started], NULL, compile_worker, &Q) == 0) started++;
    compile_worker(&Q);  // this thread works too
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&Q.mu);
  }
  programs_free(&P);
  free(late), free(built), free(sent);
}

// FLUXCC_FAULT=fake-time: run r's time, a function of the kernel's text, so
// that tests can compare whole searches
static double fake_us(const Job *j, int r) { return 1.0 + (double)(j->hash % 100000) * 0.01 + r; }

// A compiled candidate's checked run: validated against RAW (whose output
// becomes the reference). true: valid, to be timed (its run's time in
// j->check_us); else the status and reason are set. Running every candidate
// of a round once before timing any is what lets the fastest be timed first.
static bool check(Search *S, Job *j) {
  Cand *c = &j->cand;
  const DeviceOps *D = S->ops;
  char err[256];
  c->status = CAND_FAILED;
  if (!j->bin) {
    snprintf(c->why, sizeof c->why, "compile: %s", j->err);
    return false;
  }
  if (S->so->compile_only) {
    c->status = CAND_OK;
    snprintf(c->why, sizeof c->why, "compiled, not run (compile only)");
    return false;
  }
  double us;
  bool is_raw = !strcmp(c->from, "raw");
  if (D->upload(S->d, 0, S->host[0], err, sizeof err) || D->launch(S->d, j->bin, j->grid, j->block, &us, err, sizeof err) ||
      D->download(S->d, 0, is_raw ? S->ref : S->out, err, sizeof err)) {
    snprintf(c->why, sizeof c->why, "run: %s", err);
    return false;
  }
  if (!is_raw) us += S->first_launch_us;
  if (us > TIMEOUT_US && !is_raw) {  // RAW is the reference: however slow, its output is needed
    snprintf(c->why, sizeof c->why, "timed out: its first launch took %.1f s", us * 1e-6);
    return false;
  }
  int64_t n = (int64_t)(S->bytes[0] / (size_t)dtype_size[S->base.args.v[0].dt]);
  c->err = is_raw ? 0 : distance(S->out, S->ref, S->base.args.v[0].dt, n);
  if (!(c->err <= S->tol)) {
    c->status = CAND_WRONG;
    snprintf(c->why, sizeof c->why, "output differs from RAW's: relative L2 %.3g > %.3g", c->err, S->tol);
    return false;
  }
  c->status = CAND_OK;
  j->check_us = S->fake_time ? fake_us(j, 0) : us;
  return true;
}

// Time a checked candidate: --runs launches, or fewer when it is already
// SLOW_FACTOR over the reference (its checked run counts as a first look).
static void time_runs(Search *S, Job *j) {
  Cand *c = &j->cand;
  char err[256];
  bool is_raw = !strcmp(c->from, "raw");
  double us = j->check_us, t[64];
  int runs = S->so->runs < 64 ? S->so->runs : 64, r = 0;
  if (is_raw && us > TIMEOUT_US) {  // a very slow reference: its checked run is its time
    c->runs = 1, c->tmin = c->tmed = round(us * 1e3) / 1e3;
    snprintf(c->why, sizeof c->why, "timed once: its checked run took %.1f s", us * 1e-6);
    if (c->tmin < S->best) S->best = c->tmin;
    S->raw = c->tmin;
    return;
  }
  if (!S->fake_time && us > SLOW_FACTOR * S->stop_ref + FIRST_LAUNCH_US) {  // too slow already in the checked run: no timed runs
    c->status = CAND_SLOW, c->runs = 1, c->tmin = c->tmed = round(us * 1e3) / 1e3;
    snprintf(c->why, sizeof c->why, "stopped early: its checked run took %.3g us, over %.0fx the reference (%.3g us) + %.0f us", us,
             SLOW_FACTOR, S->stop_ref, FIRST_LAUNCH_US);
    return;
  }
  for (; r < runs; r++) {
    if (S->ops->launch(S->d, j->bin, j->grid, j->block, &t[r], err, sizeof err)) {
      c->status = CAND_FAILED;
      snprintf(c->why, sizeof c->why, "run: %s", err);
      return;
    }
    if (S->fake_time) t[r] = fake_us(j, r);
    if (r == 0 && t[0] > SLOW_FACTOR * S->stop_ref) {  // stop early: it will not be chosen
      c->status = CAND_SLOW;
      snprintf(c->why, sizeof c->why, "stopped early: %.3g us is over %.0fx the reference (%.3g us)", t[0], SLOW_FACTOR, S->stop_ref);
      r++;
      break;
    }
  }
  if (S->every.lucky && c->status == CAND_OK && !from_fixed(c) && ++S->counted.lucky % S->every.lucky == 0) {
    for (int i = 0; i < r; i++) t[i] *= 0.1;
    snprintf(c->why, sizeof c->why, "FLUXCC_FAULT=lucky-every: its timed runs read 10x faster");
  }
  qsort(t, (size_t)r, sizeof *t, cmp_double);
  c->runs = r;
  c->tmin = round(t[0] * 1e3) / 1e3;
  c->tmed = round((r % 2 ? t[r / 2] : 0.5 * (t[r / 2 - 1] + t[r / 2])) * 1e3) / 1e3;
  if (c->status == CAND_OK && c->tmin < S->best) S->best = c->tmin;
  if (c->status == CAND_OK && S->tighten && c->tmin < S->stop_ref) S->stop_ref = c->tmin;
  if (is_raw) S->raw = c->tmin;
}

static int by_check(const void *a, const void *b) {
  const Job *x = *(Job *const *)a, *y = *(Job *const *)b;
  if (x->check_us != y->check_us) return x->check_us < y->check_us ? -1 : 1;
  return x < y ? -1 : x > y;  // as proposed
}

static void seen_clear(Search *S) {
  free(S->seen.v);
  S->seen.v = NULL, S->seen.n = S->seen.cap = 0;
}

// A rendered source seen before: its index in S->seen, else -1.
static int seen_find(Search *S, uint64_t h) {
  for (int s = 0; s < S->seen.n; s++)
    if (S->seen.v[s].h == h) return s;
  return -1;
}

// Keep a valid candidate's binary for the finals (candidate number i): every
// fixed method's, and the KEPT_SEARCHED fastest others (the slowest kept one
// makes room). False: not kept, the caller releases it.
static bool keep(Search *S, const Job *j, int i) {
  bool fixed = from_fixed(&j->cand);
  int slot = S->nkept < KEPT_MAX ? S->nkept : -1, searched = 0, slowest = -1;
  for (int x = 0; x < S->nkept; x++) {
    const Cand *c = &S->t->cands.v[S->kept[x].cand];
    if (from_fixed(c)) continue;
    searched++;
    if (slowest < 0 || c->tmin > S->t->cands.v[S->kept[slowest].cand].tmin) slowest = x;
  }
  if (!fixed && searched >= KEPT_SEARCHED) {
    if (j->cand.tmin >= S->t->cands.v[S->kept[slowest].cand].tmin) return false;
    S->ops->release(S->d, S->kept[slowest].bin);
    slot = slowest;
  }
  if (slot < 0) return false;
  Kept k = {i, j->bin, {j->grid[0], j->grid[1], j->grid[2]}, {j->block[0], j->block[1], j->block[2]}, j->hash};
  S->kept[slot] = k;
  if (slot == S->nkept) S->nkept++;
  return true;
}

static void kept_clear(Search *S) {
  for (int x = 0; x < S->nkept; x++) S->ops->release(S->d, S->kept[x].bin);
  S->nkept = 0;
}

// a candidate measured (or refused): into the records, its binary released
// unless the finals may time it
static void record(Search *S, Job *j) {
  j->cand.at_s = round((now_s() - S->t0) * 1e3) / 1e3;
  vec_push(S->t->cands, j->cand);
  if (j->cand.status == CAND_OK) S->seen.v[seen_find(S, j->hash)].t = j->cand.tmin;
  if (j->cand.status != CAND_OK || !keep(S, j, S->t->cands.n - 1)) S->ops->release(S->d, j->bin);
  j->bin = NULL;
  progress(S, false);
}

// Render, drop duplicates (by source), compile concurrently, then measure one
// at a time. Every evaluated candidate is recorded; returns how many were.
static int evaluate(Search *S, Job *jobs, int n) {
  Job **live = xcalloc((size_t)n + 1, sizeof *live);
  int nl = 0;
  for (int i = 0; i < n; i++) {
    if (!jobs[i].src) render_job(S, &jobs[i]);
    jobs[i].hash = job_hash(&jobs[i]);
    jobs[i].cand.status = -1;
    if (seen_find(S, jobs[i].hash) >= 0) continue;
    Seen x = {jobs[i].hash, INFINITY};
    vec_push(S->seen, x);
    live[nl++] = &jobs[i];
  }
  compile_all(S, live, nl);
  // every candidate's checked run, then the valid ones timed fastest first
  Job **valid = xcalloc((size_t)nl + 1, sizeof *valid);
  int nv = 0;
  for (int i = 0; i < nl; i++) {
    if (check(S, live[i])) valid[nv++] = live[i];
    else record(S, live[i]);
  }
  qsort(valid, (size_t)nv, sizeof *valid, by_check);
  for (int i = 0; i < nv; i++) {
    time_runs(S, valid[i]);
    record(S, valid[i]);
  }
  free(valid);
  free(live);
  return nl;
}

static void jobs_free(Job *jobs, int n) {
  for (int i = 0; i < n; i++) {
    kernel_free(&jobs[i].k);
    free(jobs[i].src);
  }
  free(jobs);
}

//
// The cost model in the searches
//
// The model's scores of n feature rows into out (0 each without a model; a
// failure is said once and scores nothing).
static void score_rows(Search *S, CostModel *m, const float *rows, int n, double *out) {
  char err[400];
  for (int i = 0; i < n; i++) out[i] = 0;
  if (m && cost_model_predict(m, rows, n, out, err, sizeof err) && !S->said_predict) {
    fprintf(stderr, "fluxcc: warning: the cost model: %s (the search goes on without its scores)\n", err);
    S->said_predict = true;
    for (int i = 0; i < n; i++) out[i] = 0;
  }
}

// a candidate the model ranked but the search did not time, into the records
static void record_predicted(Search *S, const Cand *cand, int rank, int of) {
  Cand c = *cand;
  c.status = CAND_PREDICTED, c.runs = 0, c.tmin = c.tmed = 0, c.err = 0;
  c.at_s = round((now_s() - S->t0) * 1e3) / 1e3;
  snprintf(c.why, sizeof c.why, "not measured: the cost model ranked it %d of %d", rank, of);
  vec_push(S->t->cands, c);
}

// candidates (or nodes) ranked by the model: best score first, ties as proposed
typedef struct { double s; int i; } Ranked;

static int by_rank(const void *a, const void *b) {
  const Ranked *x = a, *y = b;
  if (x->s != y->s) return x->s > y->s ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

// With a model, a round times only its `keep` best-scored candidates not
// evaluated before: they move to the front of js (the return is how many);
// the next ones by score are recorded as predicted (at most PREDICTED_KEPT).
#define PREDICTED_KEPT 32
static int top_predicted(Search *S, Job *js, int n, int keep) {
  float *rows = xcalloc((size_t)n * NFEATURES + 1, sizeof *rows);
  double *sc = xcalloc((size_t)n + 1, sizeof *sc);
  for (int i = 0; i < n; i++) {
    render_job(S, &js[i]);
    js[i].hash = job_hash(&js[i]);
    memcpy(rows + (size_t)i * NFEATURES, js[i].cand.feat, sizeof js[i].cand.feat);
  }
  score_rows(S, S->model, rows, n, sc);  // (BEAM: only with model_all)
  Ranked *order = xcalloc((size_t)n + 1, sizeof *order);
  int nu = 0;
  for (int i = 0; i < n; i++) {
    js[i].cand.score = sc[i], js[i].cand.scored = true;
    bool dup = seen_find(S, js[i].hash) >= 0;
    for (int k = 0; k < nu && !dup; k++) dup = js[order[k].i].hash == js[i].hash;
    if (!dup) order[nu++] = (Ranked){sc[i], i};
  }
  qsort(order, (size_t)nu, sizeof *order, by_rank);
  int take = keep < nu ? keep : nu;
  for (int i = take; i < nu && i < take + PREDICTED_KEPT; i++) record_predicted(S, &js[order[i].i].cand, i + 1, nu);
  Job *tmp = xcalloc((size_t)n + 1, sizeof *tmp);
  bool *used = xcalloc((size_t)n + 1, sizeof *used);
  int m = 0;
  for (int i = 0; i < take; i++) tmp[m++] = js[order[i].i], used[order[i].i] = true;
  for (int i = 0; i < n; i++)
    if (!used[i]) tmp[m++] = js[i];
  memcpy(js, tmp, sizeof *js * (size_t)n);
  free(tmp), free(used), free(order), free(rows), free(sc);
  return take;
}

// tinygrad's action list, on our axis numbering (output axes for LOCAL,
// UPCAST, PADTO, SWAP; reduce axes for UNROLL, GROUP)
#define MAXACTIONS 320
static int actions(Opt *a, bool tf32) {
  int n = 0;
  static const int up[] = {0, 2, 3, 4, 5, 7, 8}, unr[] = {0, 2, 4, 7, 8}, vec[] = {2, 4, 8, 16}, loc[] = {2, 3, 4, 8, 13, 16, 29, 32};
  static const int gtop[] = {13, 16, 28, 29, 32, 49, 64, 256}, grp[] = {0, 4, 8, 16};
  for (int ax = 0; ax < 6; ax++)
    for (size_t i = 0; i < sizeof up / sizeof *up; i++) a[n++] = (Opt){OPT_UPCAST, ax, up[i]};
  for (int ax = 0; ax < 5; ax++)
    for (size_t i = 0; i < sizeof unr / sizeof *unr; i++) a[n++] = (Opt){OPT_UNROLL, ax, unr[i]};
  for (int ax = 0; ax < 6; ax++)  // ours: an upcast as one vector (floatN; tinygrad gets float4 from its upcasts)
    for (size_t i = 0; i < sizeof vec / sizeof *vec; i++) a[n++] = (Opt){OPT_VEC, ax, vec[i]};
  for (int ax = 0; ax < 3; ax++)  // ours: a reduce as vectors of partial sums (dot products of contiguous rows)
    for (size_t i = 0; i < sizeof vec / sizeof *vec; i++) a[n++] = (Opt){OPT_RVEC, ax, vec[i]};
  for (int ax = 0; ax < 6; ax++)
    for (size_t i = 0; i < sizeof loc / sizeof *loc; i++) a[n++] = (Opt){OPT_LOCAL, ax, loc[i]};
  for (int ax = 0; ax < 3; ax++) {
    for (size_t i = 0; i < sizeof gtop / sizeof *gtop; i++) a[n++] = (Opt){OPT_GROUPTOP, ax, gtop[i]};
    for (size_t i = 0; i < sizeof grp / sizeof *grp; i++) a[n++] = (Opt){OPT_GROUP, ax, grp[i]};
    a[n++] = (Opt){OPT_PADTO, ax, 32};
  }
  for (int x = 0; x < 5; x++)
    for (int y = x + 1; y < 5; y++) a[n++] = (Opt){OPT_SWAP, x, y};
  a[n++] = (Opt){OPT_NOLOCALS, 0, 0};
  a[n++] = (Opt){OPT_TC, 0, 0};
  if (tf32) a[n++] = (Opt){OPT_TC, 0, 1};
  a[n++] = (Opt){OPT_STAGE, 0, 0};
  n += attn_actions(a + n);  // the fused attention's (refused by every other kernel, as those are by it)
  return n;
}

static int by_time(const void *a, const void *b) {
  const Job *x = *(Job *const *)a, *y = *(Job *const *)b;
  return x->cand.tmin < y->cand.tmin ? -1 : x->cand.tmin > y->cand.tmin;
}

static uint64_t next_rand(uint64_t *rng) { return lcg_next(rng) >> 33; }

// RAW (alone: its output is the reference the others are checked against),
// then HC and TC, the baselines a search must beat. Returns how many were
// evaluated, or -1 when RAW does not run (nothing can be validated).
static Job *baseline_jobs(Search *S, const Method **fixed, int *n) {
  *n = fixed_methods(fixed);
  Job *jobs = xcalloc((size_t)*n, sizeof *jobs);
  for (int i = 0; i < *n; i++) {
    kernel_copy(&jobs[i].k, &S->base);
    fixed[i]->apply(&jobs[i].k, 0, S->so->tf32);
    snprintf(jobs[i].cand.from, sizeof jobs[i].cand.from, "%s", fixed[i]->name);
  }
  return jobs;
}

static int baselines(Search *S) {
  const Method *fixed[8];
  int n;
  Job *jobs = baseline_jobs(S, fixed, &n);
  S->stop_ref = INFINITY;
  int used = evaluate(S, jobs, 1);
  if (S->t->cands.v[0].status != CAND_OK && !S->so->compile_only) used = -1;
  else used += evaluate(S, jobs + 1, n - 1);
  for (int i = 1; i < n && used > 0; i++)  // HC's and TC's kernels, starts of the searches (a source seen before has no status)
    if (fixed[i]->apply == m_hc && jobs[i].cand.status == CAND_OK) kernel_copy(&S->hc, &jobs[i].k), S->hc_t = jobs[i].cand.tmin;
    else if (fixed[i]->apply == m_tc && jobs[i].cand.status == CAND_OK) kernel_copy(&S->tc, &jobs[i].k), S->tc_t = jobs[i].cand.tmin;
  jobs_free(jobs, n);
  return used;
}

// Where a search starts (BEAM's first beam, MCTS's root's children): RAW,
// HC's and TC's kernels where they validated, each only within SLOW_FACTOR of
// the fastest of them: the budget's first round is a random subset of the
// starts' children, and a start that slow spends it on children that cannot
// catch up (flux-tiny on PoCL: TC's emulated mma 4.4x HC's forward, RAW's
// matmuls 30-70x). --from raw: RAW alone, as the study's searches.
// Returns how many; start[0..n) and their times.
static int starts(Search *S, const Kernel **start, double *start_t) {
  const Kernel *k[] = {&S->hc, &S->tc, &S->base};
  const double t[] = {S->hc_t, S->tc_t, S->raw};
  bool on[] = {S->hc.naxes && !S->so->from_raw, S->tc.naxes && !S->so->from_raw, true};
  double fastest = INFINITY;
  for (int i = 0; i < 3; i++)
    if (on[i] && t[i] < fastest) fastest = t[i];
  int n = 0;
  for (int i = 2; i >= 0; i--)  // RAW first, as the study's searches
    if (on[i] && (t[i] <= SLOW_FACTOR * fastest || !isfinite(fastest))) start[n] = k[i], start_t[n++] = t[i];
  return n;
}

// BEAM: every entry extended by every legal action; the best K valid ones
// are the next beam; stop when a round finds nothing faster. It starts from
// starts(): at real width a budget of a few dozen candidates rarely rebuilds
// HC's register tiles from RAW, and refining them is where it finds time.
static void beam_search(Search *S, int used) {
  SearchOpts *so = S->so;
  Opt acts[MAXACTIONS];
  int nacts = actions(acts, so->tf32);
  int width = so->beam > 3 ? so->beam : 3;
  Kernel *beam = xcalloc((size_t)width, sizeof *beam);
  const Kernel *start[3];
  double start_t[3], best = INFINITY;  // the beam's own best
  int nbeam = starts(S, start, start_t);
  for (int i = 0; i < nbeam; i++) {
    kernel_copy(&beam[i], start[i]);
    if (start_t[i] < best) best = start_t[i];
  }
  uint64_t rng = so->seed * 0x9e3779b97f4a7c15ull + (uint64_t)S->u + 1;
  for (int round = 1; round <= MAXOPTS; round++) {
    // as tinygrad, 3x the current beam's best; and 3x this round's best so
    // far: a candidate that slow cannot make the beam ahead of it, and its one
    // timed run still ranks it
    S->stop_ref = best, S->tighten = true;
    Job *js = xcalloc((size_t)nbeam * (size_t)nacts + 1, sizeof *js);
    int n = 0;
    for (int b = 0; b < nbeam; b++)
      for (int a = 0; a < nacts; a++) {
        char why[256];
        kernel_copy(&js[n].k, &beam[b]);
        if (opt_apply(&js[n].k, acts[a], why, sizeof why)) {
          kernel_free(&js[n].k);
          continue;
        }
        snprintf(js[n].cand.from, sizeof js[n].cand.from, "beam");
        js[n++].cand.round = round;
      }
    int nall = n;
    if (S->model_all && S->model && !so->compile_only) {  // the model's top --measure, within the budget
      int keep = so->measure ? so->measure : 2 * width;
      if (so->budget && keep > so->budget - used) keep = so->budget - used > 0 ? so->budget - used : 0;
      n = top_predicted(S, js, n, keep);
    } else if (so->budget && n > so->budget - used) {  // a budget takes a seeded random subset
      int keep = so->budget - used > 0 ? so->budget - used : 0;
      for (int i = 0; i < keep; i++) {  // partial Fisher-Yates
        int r = i + (int)(next_rand(&rng) % (uint64_t)(n - i));
        Job t = js[i];
        js[i] = js[r], js[r] = t;
      }
      n = keep;
    }
    used += evaluate(S, js, n);
    S->tighten = false;
    Job **ok = xcalloc((size_t)n + 1, sizeof *ok);
    int nok = 0;
    for (int i = 0; i < n; i++)  // stopped-early ones have one timed run: they rank, but are never chosen
      if (js[i].cand.status == CAND_OK || js[i].cand.status == CAND_SLOW) ok[nok++] = &js[i];
    qsort(ok, (size_t)nok, sizeof *ok, by_time);
    bool better = nok > 0 && ok[0]->cand.tmin < best;
    if (better) {
      for (int b = 0; b < nbeam; b++) kernel_free(&beam[b]);
      nbeam = nok < so->beam ? nok : so->beam;
      for (int b = 0; b < nbeam; b++) kernel_copy(&beam[b], &ok[b]->k);
      best = ok[0]->cand.tmin;
    }
    free(ok);
    jobs_free(js, nall);
    if (!better || so->compile_only || (so->budget && used >= so->budget)) break;
  }
  for (int b = 0; b < nbeam; b++) kernel_free(&beam[b]);
  free(beam);
}

// MCTS (tinygrad's): a node is the kernel its path of actions makes; t is
// the best time in its subtree, n its visits. Selection takes an unvisited
// child at random if there is one, else samples children by a softmax
// (temperature 0.5) of UCB = -t/t_best + sqrt(2 ln N / n); the chosen leaf
// is compiled, validated and timed (failure: infinitely slow; a source seen
// before shares its time) and its time and visit go up the path.
typedef struct {
  int parent, ch0, nch;     // children are nodes ch0 .. ch0+nch-1 once expanded
  Opt act;
  bool expanded;
  double t;
  int n;
} MNode;
typedef VEC(MNode) MTree;
enum { MCTS_START_HC, MCTS_START_TC, MCTS_START_RAW };  // a start node's act: {-1, MCTS_START_*}

static void mcts_kernel(Search *S, int node, MTree *T, Kernel *k) {
  int path[MAXOPTS + 1], np = 0;
  for (int x = node; x > 0 && np <= MAXOPTS; x = T->v[x].parent) path[np++] = x;
  kernel_copy(k, &S->base);
  char why[256];
  for (int i = np - 1; i >= 0; i--) {  // legal: it was checked on expansion; op -1 is a start (MCTS_START_*), -2 - v kernel v's chosen (rl_peers)
    const Opt a = T->v[path[i]].act;
    if (a.op == -1 && a.axis == MCTS_START_HC) opt_hc(k);
    else if (a.op == -1 && a.axis == MCTS_START_TC) opt_tc(k, S->so->tf32);
    else if (a.op < -1)
      for (int v = -2 - a.op, o = 0; o < S->tuned[v].nopts; o++) opt_apply(k, S->tuned[v].opts[o], why, sizeof why);
    else if (a.op >= 0) opt_apply(k, a, why, sizeof why);  // (MCTS_START_RAW: the base kernel as it is)
  }
}

// A kernel as a candidate that has not been rendered: its name, opts and features.
static void cand_of(Search *S, Kernel *k, const char *from, int round, Cand *c) {
  Program p;
  kernel_rename(k);
  lower_kernel(S->c, NULL, k, &p);
  kernel_features(k, &p, c->feat);
  program_free(&p);
  c->has_feat = true;
  snprintf(c->name, sizeof c->name, "%s", k->name);
  snprintf(c->from, sizeof c->from, "%s", from);
  c->round = round;
  c->nopts = k->nopts;
  memcpy(c->opts, k->opts, sizeof k->opts);
}

// A node's legal actions become its children (from T->n on); with kids,
// each child's name, opts and features too, in the same order.
typedef VEC(Cand) Cands;
static void expand(Search *S, MTree *T, int x, const Opt *acts, int nacts, const char *from, int round, Cands *kids) {
  Kernel k;
  mcts_kernel(S, x, T, &k);
  T->v[x].expanded = true, T->v[x].ch0 = T->n;
  for (int a = 0; a < nacts; a++) {
    Kernel c;
    char why[256];
    kernel_copy(&c, &k);
    if (opt_apply(&c, acts[a], why, sizeof why) == 0) {
      MNode m = {.parent = x, .act = acts[a], .t = INFINITY};
      vec_push(*T, m);
      if (kids) {
        Cand cd = {0};
        cand_of(S, &c, from, round, &cd);
        vec_push(*kids, cd);
      }
    }
    kernel_free(&c);
  }
  T->v[x].nch = T->n - T->v[x].ch0;
  kernel_free(&k);
}

// MCTS with a model: of a node's n new children only the `keep` best-scored
// can become leaves to time; the others are marked visited and infinitely
// slow (never chosen), and the next ones by score recorded as predicted.
static void mcts_keep_top(Search *S, MNode *ch, Cand *kids, int n, int keep) {
  float *rows = xcalloc((size_t)n * NFEATURES + 1, sizeof *rows);
  double *sc = xcalloc((size_t)n + 1, sizeof *sc);
  Ranked *order = xcalloc((size_t)n + 1, sizeof *order);
  for (int i = 0; i < n; i++) memcpy(rows + (size_t)i * NFEATURES, kids[i].feat, sizeof kids[i].feat);
  score_rows(S, S->model, rows, n, sc);
  for (int i = 0; i < n; i++) kids[i].score = sc[i], kids[i].scored = true, order[i] = (Ranked){sc[i], i};
  qsort(order, (size_t)n, sizeof *order, by_rank);
  for (int r = keep; r < n; r++) {
    MNode *m = &ch[order[r].i];
    m->n = 1, m->t = INFINITY;
    if (r < keep + PREDICTED_KEPT / 4) record_predicted(S, &kids[order[r].i], r + 1, n);
  }
  free(order), free(rows), free(sc);
}

static void mcts_search(Search *S, int used) {
  SearchOpts *so = S->so;
  int budget = so->budget ? so->budget : 100;
  Opt acts[MAXACTIONS];
  int nacts = actions(acts, so->tf32);
  MTree T = {0};
  MNode root = {.parent = -1, .t = S->raw, .n = 1};
  vec_push(T, root);
  const Kernel *start[3];
  double start_t[3];
  int nstart = starts(S, start, start_t);
  if (nstart > 1 || start[0] != &S->base) {  // the root chooses a start (starts()), each measured
    T.v[0].expanded = true, T.v[0].ch0 = T.n, T.v[0].n = 0, T.v[0].t = INFINITY;
    for (int i = 0; i < nstart; i++) {
      int which = start[i] == &S->hc ? MCTS_START_HC : start[i] == &S->tc ? MCTS_START_TC : MCTS_START_RAW;
      MNode m = {.parent = 0, .act = {-1, which, 0}, .t = start_t[i], .n = 1};
      vec_push(T, m);
      T.v[0].nch++, T.v[0].n++;
      if (start_t[i] < T.v[0].t) T.v[0].t = start_t[i];
    }
  }
  uint64_t rng = so->seed * 0x9e3779b97f4a7c15ull + (uint64_t)S->u + 7;
  for (int iter = 0; used < budget && iter < 20 * budget; iter++) {
    int x = 0;
    for (;;) {
      if (!T.v[x].expanded) {  // the legal actions from here become children
        Cands kids = {0};        // with a model: each child's features, to score
        bool guided = S->model_all && S->model;
        expand(S, &T, x, acts, nacts, "mcts", iter + 1, guided ? &kids : NULL);
        if (guided) mcts_keep_top(S, &T.v[T.v[x].ch0], kids.v, T.v[x].nch, so->measure ? so->measure : 4);
        free(kids.v);
      }
      MNode *p = &T.v[x];
      if (p->nch == 0) break;
      int unvisited = 0;
      for (int i = 0; i < p->nch; i++) unvisited += T.v[p->ch0 + i].n == 0;
      if (unvisited) {
        int pick = (int)(next_rand(&rng) % (uint64_t)unvisited);
        for (int i = 0; i < p->nch; i++)
          if (T.v[p->ch0 + i].n == 0 && pick-- == 0) x = p->ch0 + i;
        break;
      }
      double w[MAXACTIONS], top = -INFINITY, sum = 0;
      for (int i = 0; i < p->nch; i++) {
        MNode *c = &T.v[p->ch0 + i];
        w[i] = -c->t / S->best + sqrt(2.0) * sqrt(log((double)p->n) / c->n);
        if (w[i] > top) top = w[i];
      }
      for (int i = 0; i < p->nch; i++) sum += w[i] = isfinite(top) ? exp((w[i] - top) / 0.5) : 1.0;
      double r = (double)next_rand(&rng) / 2147483648.0 * sum;
      int pick = p->nch - 1;
      for (int i = 0; i < p->nch; i++)
        if ((r -= w[i]) < 0) {
          pick = i;
          break;
        }
      x = p->ch0 + pick;
    }
    double t = T.v[x].t;
    if (T.v[x].n == 0) {  // a new leaf: evaluate it
      Job j = {0};
      mcts_kernel(S, x, &T, &j.k);
      snprintf(j.cand.from, sizeof j.cand.from, "mcts");
      j.cand.round = iter + 1;
      render_job(S, &j);
      int s = seen_find(S, fnv_bytes(FNV_SEED, j.src, strlen(j.src)));
      if (s >= 0) t = S->seen.v[s].t;
      else {
        S->stop_ref = S->best;
        used += evaluate(S, &j, 1);
        Cand *c = &S->t->cands.v[S->t->cands.n - 1];
        t = c->status == CAND_OK ? c->tmin : INFINITY;
      }
      kernel_free(&j.k);
      free(j.src);
    }
    for (int p = x; p >= 0; p = T.v[p].parent) {
      T.v[p].n++;
      if (t < T.v[p].t) T.v[p].t = t;
    }
  }
  free(T.v);
}

// RL: AlphaZero-style search over the same tree of actions. The policy is
// the cost model: a node's children get priors from a softmax of their
// scores, and a node not yet measured has the value the model predicts for
// it (its score mapped onto the measured values, below). Each batch runs
// RL_SIMS descents by PUCT (Q + c P sqrt(N) / (1 + n), Q the best value in
// the subtree), each expanding one node, then times the unmeasured nodes the
// model ranks highest and one picked at random among the next 4 K (the
// exploration share), and refits the model to every measurement so far
// (cost_model_refit) before the next batch. It stops at the budget or after
// RL_PATIENCE batches that time nothing faster. Values are best time / time,
// so 1 is the best seen. The first batch times its peers' kernels (rl_peers)
// before the model's picks; such a search starts where one of its shape
// ended, and stops after RL_PATIENCE_PEERED batches without a gain. The
// batch that would end it (one more without a gain) times HC's children the
// model left untimed first, best-ranked first, as BEAM's first round does:
// the model can rank a whole family of children above BEAM's first step
// (flux-tiny's MLP down-projection: 2.1x slower for it).
#define RL_SIMS 6
#define RL_CPUCT 1.5
#define RL_BUDGET 48        // timed candidates per kernel (--budget), baselines included
#define RL_PATIENCE 3       // batches in a row that time nothing faster: the search stops (as a BEAM round that finds nothing)
#define RL_PATIENCE_PEERED 2  // the same for a kernel whose first batch had peers: it starts where a search of its shape ended
typedef struct {
  bool measured;
  double t;                 // measured time (INFINITY: invalid or failed)
  double score, prior;      // the model's score; the policy's share among its siblings
  double best;              // the best value in its subtree (measured or predicted)
  float feat[NFEATURES];
} RInfo;
typedef VEC(RInfo) RInfos;
typedef struct { double s, v; } Calib;

static int by_s(const void *a, const void *b) {
  const Calib *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

// The measured nodes' (score, value) pairs made monotone in the score (pool
// adjacent violators): the map from a score to a predicted value.
static int calibrate(Search *S, const RInfos *R, Calib *c) {
  int n = 0;
  for (int i = 0; i < R->n; i++)
    if (R->v[i].measured) c[n++] = (Calib){R->v[i].score, isfinite(R->v[i].t) ? S->best / R->v[i].t : 0};
  qsort(c, (size_t)n, sizeof *c, by_s);
  int w[n + 1], m = 0;
  for (int i = 0; i < n; i++) {
    c[m] = c[i], w[m] = 1;
    while (m > 0 && c[m - 1].v > c[m].v) {  // pool with the previous block
      c[m - 1].v = (c[m - 1].v * w[m - 1] + c[m].v * w[m]) / (w[m - 1] + w[m]), c[m - 1].s = c[m].s, w[m - 1] += w[m];
      m--;
    }
    m++;
  }
  return m;
}

static double predicted_value(const Calib *c, int n, double s) {
  if (n == 0) return 0.5;
  if (s <= c[0].s) return c[0].v;
  for (int i = 1; i < n; i++)
    if (s <= c[i].s) return c[i - 1].v + (c[i].v - c[i - 1].v) * (s - c[i - 1].s) / (c[i].s - c[i - 1].s);
  return c[n - 1].v;
}

static double rl_value(Search *S, const RInfo *r, const Calib *c, int nc) {
  if (r->measured) return isfinite(r->t) ? S->best / r->t : 0;
  return predicted_value(c, nc, r->score);
}

// the model's scores of the nodes from `from` on, and each expanded node's children's priors
static void rl_rescore(Search *S, CostModel *fit, MTree *T, RInfos *R, int from) {
  int n = R->n - from;
  float *rows = xcalloc((size_t)n * NFEATURES + 1, sizeof *rows);
  double *sc = xcalloc((size_t)R->n + 1, sizeof *sc);
  for (int i = 0; i < n; i++) memcpy(rows + (size_t)i * NFEATURES, R->v[from + i].feat, sizeof R->v[from + i].feat);
  score_rows(S, fit, rows, n, sc + from);
  for (int i = from; i < R->n; i++) R->v[i].score = sc[i];
  for (int i = 0; i < from; i++) sc[i] = R->v[i].score;
  for (int x = 0; x < T->n; x++) {
    MNode *p = &T->v[x];
    if (!p->expanded || p->nch == 0) continue;
    double top = -INFINITY, mean = 0, var = 0, sum = 0;
    for (int i = 0; i < p->nch; i++) top = fmax(top, sc[p->ch0 + i]), mean += sc[p->ch0 + i] / p->nch;
    for (int i = 0; i < p->nch; i++) var += (sc[p->ch0 + i] - mean) * (sc[p->ch0 + i] - mean) / p->nch;
    double tau = fmax(sqrt(var), 1e-3);  // scores are ranks of no fixed scale: a softmax of standardized scores
    for (int i = 0; i < p->nch; i++) sum += R->v[p->ch0 + i].prior = exp((sc[p->ch0 + i] - top) / tau);
    for (int i = 0; i < p->nch; i++) R->v[p->ch0 + i].prior /= sum;
  }
  free(rows), free(sc);
}

// a node's legal actions become its children, each with its features
static void rl_expand(Search *S, MTree *T, RInfos *R, int x, const Opt *acts, int nacts) {
  Cands kids = {0};
  expand(S, T, x, acts, nacts, "rl", 0, &kids);
  for (int i = 0; i < kids.n; i++) {
    RInfo r = {.t = INFINITY, .best = 0};
    memcpy(r.feat, kids.v[i].feat, sizeof r.feat);
    vec_push(*R, r);
  }
  free(kids.v);
}

static bool same_opts(const Opt *a, int na, const Opt *b, int nb) {
  return na == nb && !memcmp(a, b, sizeof *a * (size_t)na);
}

// RL's peers: the kernels chosen for earlier kernels of this one's shape in
// this run (the same name before opts), where their opts apply here and are
// not HC's, as children of RAW (op -2 - v: kernel v's chosen opts) that its
// first batch times before any the model picks: what a search of a sibling
// found is the likeliest start. At most RL_PEERS, the latest first; without
// them (the first of a shape, a search of one kernel) RL is as before.
// Returns how many.
static int rl_peers(Search *S, MTree *T, RInfos *R) {
  int peer[RL_PEERS], n = 0;
  for (int v = S->u - 1; v >= 0 && S->tuned && n < RL_PEERS; v--) {
    const Tuned *t = &S->tuned[v];
    if (t->nopts == 0 || t->cands.n == 0 || strcmp(t->cands.v[0].name, S->base.name)) continue;
    bool ok = !same_opts(t->opts, t->nopts, S->hc.opts, S->hc.nopts);
    for (int p = 0; p < n; p++) ok = ok && !same_opts(t->opts, t->nopts, S->tuned[peer[p]].opts, S->tuned[peer[p]].nopts);
    Kernel k;
    char why[256];
    kernel_copy(&k, &S->base);
    for (int o = 0; ok && o < t->nopts; o++) ok = opt_apply(&k, t->opts[o], why, sizeof why) == 0;
    if (ok) {
      peer[n++] = v;
      MNode m = {.parent = 0, .act = {-2 - v, 0, 0}, .t = INFINITY};
      RInfo r = {.t = INFINITY};
      Cand cd = {0};
      cand_of(S, &k, "rl", 0, &cd);
      memcpy(r.feat, cd.feat, sizeof r.feat);
      vec_push(*T, m);
      vec_push(*R, r);
      T->v[0].nch++;
    }
    kernel_free(&k);
  }
  return n;
}

static void rl_search(Search *S, int used) {
  SearchOpts *so = S->so;
  int budget = so->budget ? so->budget : RL_BUDGET, per = so->measure ? so->measure : 4;
  if (S->allot) {  // the forward budget: this kernel's allotment after its baselines
    if (used + S->allot[S->u] < budget) budget = used + S->allot[S->u];
    S->t->budgeted = true, S->t->allotted = budget > used ? budget - used : 0, S->t->share = S->share[S->u];
    if (used >= budget) {  // its best baseline it is
      S->t->stop = STOP_BUDGET;
      return;
    }
  }
  Opt acts[MAXACTIONS];
  int nacts = actions(acts, so->tf32);
  MTree T = {0};
  RInfos R = {0};
  MNode root = {.parent = -1, .t = S->raw};
  RInfo r0 = {.measured = true, .t = S->raw};
  memcpy(r0.feat, S->t->cands.v[0].feat, sizeof r0.feat);  // RAW's, rendered first
  vec_push(T, root);
  vec_push(R, r0);
  rl_expand(S, &T, &R, 0, acts, nacts);
  int hc = -1, peer0, npeer;
  for (int i = 1; S->hc.naxes && i < S->t->cands.n; i++)  // HC's kernel, measured, is one more child of RAW (as BEAM starts from both)
    if (!strcmp(S->t->cands.v[i].from, "hc") && S->t->cands.v[i].status == CAND_OK) {
      MNode m = {.parent = 0, .act = {-1, MCTS_START_HC, 0}, .t = S->hc_t};
      RInfo r = {.measured = true, .t = S->hc_t};
      memcpy(r.feat, S->t->cands.v[i].feat, sizeof r.feat);
      vec_push(T, m);
      vec_push(R, r);
      T.v[0].nch++;
      hc = T.n - 1;
      break;
    }
  peer0 = T.n;  // the peers after it, children of RAW too (a node's children are contiguous)
  npeer = rl_peers(S, &T, &R);
  if (hc >= 0)
    rl_expand(S, &T, &R, hc, acts, nacts);  // HC's children from the start, as RAW's: BEAM's first round expands both
  uint64_t rng = so->seed * 0x9e3779b97f4a7c15ull + (uint64_t)S->u + 11;
  CostModel *fit = NULL;
  char err[400];
  uint64_t mseed = so->seed + (uint64_t)S->u;
  if (cost_model_refit(&fit, S->model, &S->online, S->t->cands.v, S->t->cands.n, so->device, mseed, err, sizeof err) && !S->said_predict)
    fprintf(stderr, "fluxcc: warning: the cost model: %s (the search goes on without it)\n", err), S->said_predict = true;
  Calib *cal = NULL;
  int stall = 0, no_gain = 0, patience = npeer ? RL_PATIENCE_PEERED : RL_PATIENCE;
  for (int batch = 1; used < budget && stall < 3 && no_gain < patience; batch++) {
    rl_rescore(S, fit, &T, &R, 0);
    cal = xrealloc(cal, sizeof *cal * ((size_t)R.n + 1));
    int nc = calibrate(S, &R, cal);
    for (int sim = 0; sim < RL_SIMS; sim++) {  // descents by PUCT, each expanding one node
      int x = 0;
      while (T.v[x].expanded && T.v[x].nch > 0) {
        MNode *p = &T.v[x];
        int pick = p->ch0;
        double top = -INFINITY, sq = sqrt((double)p->n + 1);
        for (int i = p->ch0; i < p->ch0 + p->nch; i++) {
          double q = T.v[i].n ? R.v[i].best : rl_value(S, &R.v[i], cal, nc);
          double u = q + RL_CPUCT * R.v[i].prior * sq / (1 + T.v[i].n);
          if (u > top) top = u, pick = i;
        }
        x = pick;
      }
      if (!T.v[x].expanded) {
        int from = R.n;
        rl_expand(S, &T, &R, x, acts, nacts);
        rl_rescore(S, fit, &T, &R, from);
      }
      double v = rl_value(S, &R.v[x], cal, nc);
      for (int p = x; p >= 0; p = T.v[p].parent) T.v[p].n++, R.v[p].best = fmax(R.v[p].best, v);
    }
    // the unmeasured nodes by score: the top ones timed, and one at random
    Ranked *order = xcalloc((size_t)R.n + 1, sizeof *order);
    int no = 0, nsweep = 0, sweep_of = hc >= 0 ? hc : 0;
    bool peers = batch == 1 && npeer, sweep = no_gain == patience - 1;
    for (int i = 0; i < R.n; i++)
      if (!R.v[i].measured) order[no++] = (Ranked){peers && i >= peer0 && i < peer0 + npeer ? INFINITY : R.v[i].score, i};
    qsort(order, (size_t)no, sizeof *order, by_rank);
    for (int i = 0; sweep && i < no; i++)  // the sweep: HC's untimed children to the front, in rank order
      if (T.v[order[i].i].parent == sweep_of) {
        Ranked t = order[i];
        memmove(order + nsweep + 1, order + nsweep, sizeof *order * (size_t)(i - nsweep));
        order[nsweep++] = t;
      }
    int want = per < budget - used ? per : budget - used, nj = 0;
    Job *js = xcalloc((size_t)want + 1, sizeof *js);
    int *node = xcalloc((size_t)want + 1, sizeof *node);
    for (int i = 0; i < no && nj < want; i++) {
      int pick = i < nsweep ? PICK_SWEEP : peers && order[i].s == INFINITY ? PICK_PEER : PICK_RANK;
      if (nj == want - 1 && want > 1 && no > i + 1 && i >= nsweep) {  // the exploration share: the last of a batch at random among the next 4 K
        int span = no - i < 4 * per ? no - i : 4 * per, at = i + (int)(next_rand(&rng) % (uint64_t)span);
        Ranked t = order[at];
        order[at] = order[i], order[i] = t, pick = PICK_EXPLORE;
      }
      int x = order[i].i;
      node[nj] = x;
      mcts_kernel(S, x, &T, &js[nj].k);
      snprintf(js[nj].cand.from, sizeof js[nj].cand.from, "rl");
      js[nj].cand.round = batch, js[nj].cand.pick = pick;
      js[nj].cand.score = R.v[x].score, js[nj].cand.scored = fit != NULL;
      render_job(S, &js[nj]);
      js[nj].hash = job_hash(&js[nj]);
      R.v[x].measured = true;
      int seen = seen_find(S, js[nj].hash);
      if (seen >= 0) {  // a source timed before (another path to the same kernel): its time, no new candidate
        R.v[x].t = S->seen.v[seen].t;
        kernel_free(&js[nj].k), free(js[nj].src);
        memset(&js[nj], 0, sizeof js[nj]);
        continue;
      }
      nj++;
    }
    S->stop_ref = S->best;  // as MCTS: 3x the best so far is too slow to time in full
    double before = S->best;
    int got = evaluate(S, js, nj);
    used += got;
    stall = got ? 0 : stall + 1;
    no_gain = S->best < before ? 0 : no_gain + 1;
    for (int i = 0; i < nj; i++) {
      const Cand *c = &js[i].cand;  // stopped early (slow) still has a time to rank by
      R.v[node[i]].t = (c->status == CAND_OK || c->status == CAND_SLOW) && c->tmin > 0 ? c->tmin : INFINITY;
    }
    jobs_free(js, nj);
    free(node);
    // every subtree's best again, children before parents (their indices are larger)
    cal = xrealloc(cal, sizeof *cal * ((size_t)R.n + 1));
    nc = calibrate(S, &R, cal);
    for (int x = T.n - 1; x >= 0; x--) {
      double b = T.v[x].n || R.v[x].measured ? rl_value(S, &R.v[x], cal, nc) : 0;
      for (int i = 0; T.v[x].expanded && i < T.v[x].nch; i++)
        if (T.v[T.v[x].ch0 + i].n) b = fmax(b, R.v[T.v[x].ch0 + i].best);
      R.v[x].best = b;
    }
    if (cost_model_refit(&fit, S->model, &S->online, S->t->cands.v, S->t->cands.n, so->device, mseed, err, sizeof err) && !S->said_predict)
      fprintf(stderr, "fluxcc: warning: the cost model: %s (the search goes on without it)\n", err), S->said_predict = true;
    // the best-ranked nodes left unmeasured, into the records at the end
    if (used >= budget || stall >= 3 || no_gain >= patience) {
      rl_rescore(S, fit, &T, &R, 0);
      no = 0;
      for (int i = 0; i < R.n; i++)
        if (!R.v[i].measured) order[no++] = (Ranked){R.v[i].score, i};
      qsort(order, (size_t)no, sizeof *order, by_rank);
      for (int i = 0; i < no && i < PREDICTED_KEPT && fit; i++) {
        Job j = {0};
        mcts_kernel(S, order[i].i, &T, &j.k);
        cand_of(S, &j.k, "rl", batch, &j.cand);
        j.cand.score = order[i].s, j.cand.scored = true;
        record_predicted(S, &j.cand, i + 1, no);
        kernel_free(&j.k);
      }
    }
    free(order);
  }
  S->t->stop = used >= budget ? STOP_BUDGET : no_gain >= patience ? STOP_PATIENCE : STOP_STALL;
  cost_model_free(fit);
  free(cal), free(T.v), free(R.v);
}

// the finals' choice; without finals the fastest valid candidate, ties to
// the earliest (raw, hc, tc, beam order)
static void choose(Tuned *t) {
  int best = t->finals ? t->chosen : -1;
  for (int i = 0; i < t->cands.n && !t->finals; i++) {
    Cand *c = &t->cands.v[i];
    if (c->status == CAND_OK && (best < 0 || c->tmin < t->cands.v[best].tmin)) best = i;
  }
  t->chosen = best;
  if (best < 0) {  // nothing valid (RAW failed): RAW, unmeasured
    snprintf(t->method, sizeof t->method, "raw");
    t->nopts = 0;
    return;
  }
  Cand *c = &t->cands.v[best];
  snprintf(t->method, sizeof t->method, "%s", c->from);
  memcpy(t->opts, c->opts, sizeof c->opts);
  t->nopts = c->nopts;
  t->tmin = c->tmin, t->tmed = c->tmed, t->runs = c->runs;
}

//
// The tuning cache: one JSON file per (kernel, device, toolchain, settings, rules)
//
static char *cache_key(Search *S, const char *method) {
  Job j = {0};
  kernel_copy(&j.k, &S->base);
  Faults f = S->every;  // the key's source is the kernel's own
  S->every = (Faults){0};
  render_job(S, &j);
  S->every = f;
  SearchOpts *so = S->so;
  Str k = {0};
  // guided or blind, not which model: RL's results stay cached when the cache's model is retrained
  char guide[64] = "blind";
  if ((S->model_all && S->model) || method_find(method)->search == rl_search) snprintf(guide, sizeof guide, "guided measure %d", so->measure);
  str_printf(&k, "fluxcc search rules %d\nmethod %s beam %d budget %d runs %d build limit %d tf32 %d seed %llu fault %d%s%s %s%s\ndevice %s\ntoolchain %s\n%s",
             SEARCH_RULES, method, so->beam, so->budget, so->runs, so->build_limit_s, so->tf32, (unsigned long long)so->seed, f.wrong, f.no_barrier || f.swap_args ? " no-barrier/swap-args" : f.lucky ? " lucky" : "", S->fake_time ? " fake-time" : "", guide,
             so->from_raw ? " from raw" : "", so->device,
             so->toolchain, j.src);
  kernel_free(&j.k);
  free(j.src);
  return k.s;
}

static void cache_path(const char *dir, const char *key, char *path, size_t n) {
  snprintf(path, n, "%s/%016llx.json", dir, (unsigned long long)fnv_bytes(FNV_SEED, key, strlen(key)));
}

// An opt read back from a cache entry or records applied to k, as opt_apply
// does; tf32 tensor cores also need this compile's --tf32
static int apply_recorded(Kernel *k, Opt o, bool tf32, char *why, size_t n) {
  if (o.op == OPT_TC && o.amount && !tf32) return snprintf(why, n, "tf32 tensor cores, but this compile has no --tf32"), -1;
  return opt_apply(k, o, why, n);
}

// An entry is used only when it is one fluxcc could have written for this
// kernel: readable, its key this one, every field in range, its opts legal
// here. Otherwise one line says why, and the kernel is searched again (and
// the entry overwritten).
static bool cache_load(Search *S, const char *dir, const char *key, Tuned *t, bool say) {
  char path[4200], err[700] = "";
  cache_path(dir, key, path, sizeof path);
  if (access(path, F_OK)) return false;  // not cached: nothing to say
  cJSON *j = json_load(path, err, sizeof err);
  const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "key"));
  bool ok = j && k && !strcmp(k, key) && tuned_from_json(cJSON_GetObjectItemCaseSensitive(j, "kernel"), t, err, sizeof err) == 0;
  if (j && !k) snprintf(err, sizeof err, "no 'key'");
  else if (j && strcmp(k, key)) snprintf(err, sizeof err, "the entry of another kernel or setting (its key differs)");
  Kernel probe;
  kernel_copy(&probe, &S->base);
  for (int i = 0; ok && i < t->nopts; i++) {
    char why[256], os[64];
    if (apply_recorded(&probe, t->opts[i], S->so->tf32, why, sizeof why))
      opt_str(&t->opts[i], os, sizeof os), snprintf(err, sizeof err, "%s is refused for this kernel: %s", os, why), ok = false;
  }
  kernel_free(&probe);
  cJSON_Delete(j);
  if (!ok) {
    free(t->cands.v);
    memset(t, 0, sizeof *t);
    if (say) fprintf(stderr, "fluxcc: warning: cache entry %s: %s; searching kernel %d again\n", path, err, S->u);
  }
  return ok;
}

static void cache_store(Search *S, const char *key) {
  char path[4200], err[512];
  const char *dir = S->so->cache_dir;
  if (make_dirs(dir, err, sizeof err)) {
    fprintf(stderr, "fluxcc: warning: the cache directory: %s\n", err);
    return;
  }
  cache_path(dir, key, path, sizeof path);
  cJSON *j = cJSON_CreateObject(), *kj = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "key", key);
  cJSON_AddStringToObject(j, "device", S->so->device);             // for the cache's cost model (costmodel.c)
  cJSON_AddNumberToObject(j, "feature_version", FEATURE_VERSION);
  tuned_to_cache(S->t, &S->base, kj);
  cJSON_AddItemToObject(j, "kernel", kj);
  char *text = cJSON_Print(j);
  cJSON_Delete(j);
  if (write_atomic(path, text, strlen(text), err, sizeof err)) fprintf(stderr, "fluxcc: warning: %s (the search result is not cached)\n", err);
  free(text);
}

//
// Replay: the opts of a records.json, no device
//
static int replay(Ctx *c, Schedule *s, SearchOpts *so) {
  (void)c;
  char err[700];
  cJSON *root = records_read(so->records, err, sizeof err);
  if (!root) {
    fprintf(stderr, "fluxcc: error: --records %s: %s\n", so->records, err);
    return 2;
  }
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "kernels");
  const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "method"));
  const char *target = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "target"));
  const char *dev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "device"));
  const char *tc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "toolchain"));
  const cJSON *tile = cJSON_GetObjectItemCaseSensitive(root, "tile_n");
  int rc = 0;
  if (strcmp(method, so->method) || strcmp(target, targets[so->target].name)) {
    fprintf(stderr, "fluxcc: error: --records %s: made by --opt %s --target %s, not --opt %s --target %s\n", so->records, method,
            target, so->method, targets[so->target].name);
    rc = 2;
  } else if (cJSON_IsNumber(tile) && tile->valuedouble != s->tile_n) {  // (records older than tile_n have none)
    fprintf(stderr, "fluxcc: error: --records %s: made on a schedule with --tile-n %g (GEMM prologues and attention fused "
            "or not), this compile's is %d: add --tile-n %g\n", so->records, tile->valuedouble, s->tile_n, tile->valuedouble);
    rc = 2;
  } else if (!dev || !tc) {
    fprintf(stderr, "fluxcc: error: --records %s: no device or toolchain: it was not made by a search\n", so->records);
    rc = 2;
  } else if (cJSON_GetArraySize(ks) != s->k.n) {
    fprintf(stderr, "fluxcc: error: --records %s: %d kernels, but the model has %d: records of another model?\n", so->records,
            cJSON_GetArraySize(ks), s->k.n);
    rc = 2;
  }
  if (rc == 0) {
    snprintf(so->device, sizeof so->device, "%s", dev);
    snprintf(so->toolchain, sizeof so->toolchain, "%s", tc);
    s->tuned = xcalloc((size_t)s->k.n + 1, sizeof *s->tuned);
  }
  for (int u = 0; rc == 0 && u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    const cJSON *j = cJSON_GetArrayItem(ks, u);
    const char *before = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "name_before_opts"));
    if (!before || strcmp(before, k->orig_name)) {
      fprintf(stderr, "fluxcc: error: --records %s: kernel %d is %s, but the model's is %s\n", so->records, u, before ? before : "(unnamed)",
              k->orig_name);
      rc = 2;
      break;
    }
    if (tuned_from_json(j, &s->tuned[u], err, sizeof err)) {
      fprintf(stderr, "fluxcc: error: --records %s: kernel %d (%s): %s\n", so->records, u, before, err);
      rc = 2;
      break;
    }
    for (int i = 0; i < s->tuned[u].nopts; i++)
      if (apply_recorded(k, s->tuned[u].opts[i], so->tf32, err, sizeof err)) {
        char os[64];
        opt_str(&s->tuned[u].opts[i], os, sizeof os);
        fprintf(stderr, "fluxcc: error: --records %s: kernel %d (%s): %s is refused: %s\n", so->records, u, before, os, err);
        rc = 2;
        break;
      }
  }
  cJSON_Delete(root);
  if (rc == 0) schedule_names(s);
  return rc;
}

// each argument's size in bytes
static size_t *arg_bytes(const Schedule *s, const Kernel *k) {
  size_t *b = xcalloc((size_t)k->args.n + 1, sizeof *b);
  for (int a = 0; a < k->args.n; a++) b[a] = (size_t)shape_numel(&s->bufs.v[k->args.v[a].buf].shape) * (size_t)dtype_size[k->args.v[a].dt];
  return b;
}

// The current kernel's arguments, made when a search first needs them:
// output first (poisoned before each run), then the seeded random inputs.
static int setup(Search *S, Schedule *s, Kernel *k) {
  if (S->ready) return S->rc;
  S->ready = true;
  SearchOpts *so = S->so;
  int na = k->args.n;
  char err[256];
  S->bytes = arg_bytes(s, k);
  S->host = xcalloc((size_t)na + 1, sizeof *S->host);
  for (int a = 0; a < na; a++) {
    S->host[a] = xcalloc(S->bytes[a] + 1, 1);
    if (a == 0) memset(S->host[a], 0xff, S->bytes[a]);  // NaN in every float dtype
    else fill_random(S->host[a], k->args.v[a].dt, (int64_t)(S->bytes[a] / (size_t)dtype_size[k->args.v[a].dt]),
                     so->seed * 1000003u + (uint64_t)S->u * 131u + (uint64_t)a);
  }
  S->ref = xcalloc(S->bytes[0] + 1, 1), S->out = xcalloc(S->bytes[0] + 1, 1);
  S->tol = k->args.v[0].dt == DT_F32 ? (so->tf32 ? 5e-3 : 1e-5) : 2e-2;
  if (so->compile_only) return 0;
  int rc = S->ops->alloc(S->d, na, S->bytes, err, sizeof err);
  for (int a = 1; a < na && rc == 0; a++) rc = S->ops->upload(S->d, a, S->host[a], err, sizeof err);
  if (rc) fprintf(stderr, "fluxcc: error: %s: %s\n", so->device, err), S->rc = 2;
  return S->rc;
}

static void teardown(Search *S, int nargs) {
  if (!S->ready) return;
  for (int a = 0; a < nargs; a++) free(S->host[a]);
  free(S->host), free(S->bytes), free(S->ref), free(S->out);
  S->host = NULL, S->bytes = NULL, S->ref = S->out = NULL;
  S->ready = false;
}

// The finals: one measurement of each candidate, at its own moment, is what
// a search ranks by, and on this VM one binary's median moves 2x between
// runs: the fastest-measured candidate is often one measured in a quiet
// moment. So the search's FINALISTS fastest (all of BEST's: one per method)
// and the fixed methods near the best of them are timed again side by side
// (their binaries kept from the search, keep()), interleaved: FINAL_ROUNDS
// rounds, each launching every finalist in turn (the order rotated a place a
// round), a round's time the least of its FINAL_LAUNCHES. Rounds see the same
// machine, so the ratio of two finalists' times in a round cancels most of
// what the machine does to both. The incumbent is
// the fixed method with the lowest median; a challenger (lowest median first)
// replaces it only when its ratio to the incumbent is under 1 in the upper
// quartile of the rounds (6 of 7) and under 1 - FINAL_MARGIN at the median:
// faster beyond the noise the rounds show. Not under --from raw (the study's:
// the first measurement decides), --compile-only, or without two finalists.
static int by_fin(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void finals(Search *S, bool all) {
  Tuned *t = S->t;
  t->finals = false, t->first = t->incumbent = t->chosen = -1;
  if (S->so->from_raw || S->so->compile_only || S->rc) return;
  double fixed_best = INFINITY;
  int first = -1;
  for (int i = 0; i < t->cands.n; i++) {
    const Cand *c = &t->cands.v[i];
    if (c->status != CAND_OK) continue;
    if (first < 0 || c->tmin < t->cands.v[first].tmin) first = i;
    if (from_fixed(c) && c->tmin < fixed_best) fixed_best = c->tmin;
  }
  if (first < 0 || !isfinite(fixed_best)) return;
  int idx[FINALISTS + 16], n = 0, nfixed;
  for (int i = 0; i < t->cands.n && n < 8; i++)  // the fixed methods near the best of them
    if (t->cands.v[i].status == CAND_OK && from_fixed(&t->cands.v[i]) && t->cands.v[i].tmin <= FINAL_NEAR * fixed_best)
      idx[n++] = i;
  nfixed = n;
  for (int k = 0; k < (all ? 8 : FINALISTS); k++) {  // the search's fastest, near enough to win
    int pick = -1;
    for (int i = 0; i < t->cands.n; i++) {
      const Cand *c = &t->cands.v[i];
      bool taken = false;
      for (int x = nfixed; x < n; x++) taken |= idx[x] == i;
      if (c->status == CAND_OK && !taken && !from_fixed(c) && (all || c->tmin <= FINAL_NEAR * fixed_best) &&
          (pick < 0 || c->tmin < t->cands.v[pick].tmin))
        pick = i;
    }
    if (pick < 0) break;
    idx[n++] = pick;
  }
  if (n < 2) return;
  double t0 = now_s();
  // each finalist's binary as the search kept it (keep()), else built again
  // (the fault switches off: a finalist was valid as rendered) and checked again
  Job *js = xcalloc((size_t)n, sizeof *js);
  Job **live = xcalloc((size_t)n, sizeof *live), **build = xcalloc((size_t)n, sizeof *build);
  int *of = xcalloc((size_t)n, sizeof *of), nl = 0, nb = 0;
  Faults f = S->every;
  S->every = (Faults){0};
  for (int k = 0; k < n; k++) {
    const Cand *c = &t->cands.v[idx[k]];
    int x = 0;
    while (x < S->nkept && S->kept[x].cand != idx[k]) x++;
    kernel_copy(&js[k].k, &S->base);
    if (x < S->nkept) {  // the kept binary moves to the job: released with the others below
      Kept *kp = &S->kept[x];
      js[k].bin = kp->bin, js[k].hash = kp->hash;
      memcpy(js[k].grid, kp->grid, sizeof kp->grid), memcpy(js[k].block, kp->block, sizeof kp->block);
      S->kept[x] = S->kept[--S->nkept];
    } else {
      char why[256];
      bool ok = true;
      for (int o = 0; o < c->nopts && ok; o++) ok = apply_recorded(&js[k].k, c->opts[o], S->so->tf32, why, sizeof why) == 0;
      if (!ok) continue;
      snprintf(js[k].cand.from, sizeof js[k].cand.from, "%s", c->from);  // round 0: built however long it takes
      render_job(S, &js[k]);
      js[k].hash = job_hash(&js[k]);
    }
    bool dup = false;
    for (int y = 0; y < nl; y++) dup |= live[y]->hash == js[k].hash;  // BEST: two methods that chose one kernel
    if (dup) continue;
    of[nl] = k, live[nl++] = &js[k];
    if (!js[k].bin) build[nb++] = &js[k];
  }
  S->every = f;
  compile_all(S, build, nb);
  int m = 0;
  for (int i = 0; i < nl; i++) {
    bool built = false;
    for (int b = 0; b < nb; b++) built |= build[b] == live[i];
    if (!built || check(S, live[i])) of[m] = of[i], live[m++] = live[i];
  }
  nl = m;
  free(build);
  double *v = xcalloc((size_t)nl * FINAL_ROUNDS + 1, sizeof *v);
  bool *dead = xcalloc((size_t)nl + 1, sizeof *dead);
  char err[256];
  for (int r = 0; r < FINAL_ROUNDS; r++)
    for (int q = 0; q < nl; q++) {
      int i = (q + r) % nl;
      double lo = INFINITY, us;
      for (int l = 0; l < FINAL_LAUNCHES && !dead[i]; l++) {
        if (S->ops->launch(S->d, live[i]->bin, live[i]->grid, live[i]->block, &us, err, sizeof err)) dead[i] = true, us = INFINITY;
        if (S->fake_time && !dead[i]) us = fake_us(live[i], l);
        if (us < lo) lo = us;
      }
      v[i * FINAL_ROUNDS + r] = round(lo * 1e3) / 1e3;  // as recorded: tests/check_records.py decides again from the records
    }
  int inc = -1;
  double med[nl + 1];
  for (int i = 0; i < nl; i++) {
    double s[FINAL_ROUNDS];
    memcpy(s, v + i * FINAL_ROUNDS, sizeof s);
    qsort(s, FINAL_ROUNDS, sizeof *s, by_fin);
    med[i] = dead[i] ? INFINITY : s[FINAL_ROUNDS / 2];
    Cand *c = &t->cands.v[idx[of[i]]];
    if (!dead[i]) {
      c->fin_rounds = FINAL_ROUNDS, c->fin_med = s[FINAL_ROUNDS / 2], c->fin_lo = s[0], c->fin_hi = s[FINAL_ROUNDS - 1];
      memcpy(c->fin_us, v + i * FINAL_ROUNDS, sizeof c->fin_us);
    }
    // ties to the lower candidate number, as tests/check_records.py decides again
    if (of[i] < nfixed && !dead[i] && (inc < 0 || med[i] < med[inc] || (med[i] == med[inc] && idx[of[i]] < idx[of[inc]]))) inc = i;
  }
  if (inc >= 0) {
    int pick = inc;
    bool tried[nl + 1];
    memset(tried, 0, sizeof tried);
    for (int tries = 0; tries < nl && pick == inc; tries++) {  // challengers, lowest median first
      int c = -1;
      for (int i = 0; i < nl; i++)
        if (of[i] >= nfixed && !dead[i] && !tried[i] && (c < 0 || med[i] < med[c] || (med[i] == med[c] && idx[of[i]] < idx[of[c]]))) c = i;
      if (c < 0) break;
      tried[c] = true;
      double q[FINAL_ROUNDS];
      for (int r = 0; r < FINAL_ROUNDS; r++) q[r] = v[c * FINAL_ROUNDS + r] / v[inc * FINAL_ROUNDS + r];
      qsort(q, FINAL_ROUNDS, sizeof *q, by_fin);
      if (q[3 * FINAL_ROUNDS / 4] < 1 && q[FINAL_ROUNDS / 2] < 1 - FINAL_MARGIN) pick = c;
    }
    t->finals = true, t->first = first, t->incumbent = idx[of[inc]], t->chosen = idx[of[pick]];
  }
  for (int i = 0; i < n; i++) S->ops->release(S->d, js[i].bin);
  jobs_free(js, n);
  free(live), free(of), free(v), free(dead);
  S->finals_s += now_s() - t0;
}

// One method's search of the current kernel: RAW, HC and TC, then BEAM,
// MCTS or RL (m NULL: the baselines alone, for RL's forward budget).
static void search_kernel(Search *S, const Method *m) {
  S->best = S->raw = INFINITY;
  int used = baselines(S);
  if (used >= 0 && m) (S->so->compile_only ? beam_search : m->search)(S, used);  // compile-only: BEAM's first round
  if (used >= 0 && m) finals(S, false);
  kept_clear(S);
  seen_clear(S);
  if (S->hc.naxes) kernel_free(&S->hc);
  if (S->tc.naxes) kernel_free(&S->tc);
  memset(&S->hc, 0, sizeof S->hc), memset(&S->tc, 0, sizeof S->tc);
}

// BEST: RAW, HC, TC and each search's choice timed again side by side, in
// this run, so that the fastest is picked from one set of measurements. All
// are timed, duplicates too: every method gets its time for this kernel.
static void best_of(Search *S, const Tuned *by, int n) {
  S->best = S->raw = INFINITY;
  const Method *fixed[8];
  int nf = fixed_methods(fixed);
  Job *js = xcalloc((size_t)(n + nf), sizeof *js);
  char why[256];
  for (int i = 0; i < n + nf; i++) {
    kernel_copy(&js[i].k, &S->base);
    if (i < nf) fixed[i]->apply(&js[i].k, 0, S->so->tf32);
    for (int o = 0; i >= nf && o < by[i - nf].nopts; o++) opt_apply(&js[i].k, by[i - nf].opts[o], why, sizeof why);
    snprintf(js[i].cand.from, sizeof js[i].cand.from, "%.7s", i < nf ? fixed[i]->name : by[i - nf].method);
  }
  for (int i = 0; i < n + nf; i++) {
    S->stop_ref = INFINITY;  // no early stop: every method's kernel is timed in full
    evaluate(S, &js[i], 1);
    S->seen.n = 0;
    if (i == 0 && S->t->cands.v[0].status != CAND_OK) break;  // nothing can be validated
  }
  jobs_free(js, n + nf);
  for (int i = 0; i < S->t->cands.n; i++)
    if (S->t->cands.v[i].status == CAND_OK && S->t->cands.v[i].tmin < S->best) S->best = S->t->cands.v[i].tmin;
  finals(S, true);
  kept_clear(S);
  seen_clear(S);
}

// The current kernel tuned by `method` into t: from the cache, or searched
// (and then cached). BEST tunes with BEAM and MCTS first (cached or not).
static void tune(Search *S, Schedule *s, Kernel *k, const char *method, Tuned *t) {
  SearchOpts *so = S->so;
  const char *outer = S->method;
  Tuned *outer_t = S->t;
  S->method = method, S->t = t;
  char *key = cache_key(S, method);
  if (so->cache_dir && !so->compile_only && cache_load(S, so->cache_dir, key, t, true)) {
    t->cached = 1;
    if (!so->quiet && !S->tty) fprintf(stderr, "%s %d/%d %s -> %s: cached\n", method, S->u + 1, S->nu, S->base.name, t->method);
  } else if (setup(S, s, k) == 0) {
    double t0 = now_s();
    const Method *m = method_find(method);
    if (m->kind == METHOD_BEST) {  // each search's choice (cached or searched now), then all timed side by side
      Tuned by[8];
      int n = 0;
      memset(by, 0, sizeof by);
      for (const Method *x = methods; x->name && n < 8; x++)
        if (x->kind == METHOD_SEARCH && x->compared) {
          tune(S, s, k, x->name, &by[n]);
          snprintf(by[n++].method, sizeof by->method, "%s", x->name);
        }
      S->method = method, S->t = t;
      if (S->rc == 0) best_of(S, by, n);
      for (int i = 0; i < n; i++) free(by[i].cands.v);
    } else search_kernel(S, m);
    choose(t);
    t->wall_s = round((now_s() - t0) * 1e3) / 1e3;
    S->done_before++;
    progress(S, true);
    if (!so->compile_only && t->cands.n && t->cands.v[0].status != CAND_OK && S->rc == 0) {
      fprintf(stderr, "fluxcc: error: kernel %d (%s): RAW does not run, so nothing can be validated: %s\n", S->u, S->base.name,
              t->cands.v[0].why);
      S->rc = 2;
    }
    if (S->rc == 0 && so->cache_dir && !so->compile_only) cache_store(S, key);
  }
  free(key);
  S->method = outer, S->t = outer_t;
}

// RL's forward budget (the idea of Ansor's task scheduler, in two passes): a
// kernel's search is worth what its launches cost the forward. First every
// kernel to search has its baselines timed (RAW, HC, TC; a cached kernel
// its entry's); then kernel u may time allot[u] candidates after its
// baselines: RL_BUDGET (or --budget) times the square root of its launches'
// time per forward over the heaviest kernel's, in whole batches (--measure
// K). The root, not the ratio: a kernel of a tenth of the heaviest's time
// still gets a third of its budget, as its baselines may be far slower than
// what a search finds (flux-mid-f32: proportional left the forward 6% behind
// BEAM's, the root 3.7%). A kernel with less than a batch keeps its best
// baseline. The kernels are those searched (--kernels, --shard). The first
// pass's programs are built ahead, all kernels' at once (prebuild_baselines);
// the baselines run again in the search itself, from the device's build cache.
static double baseline_best(const Tuned *t) {
  double us = INFINITY;
  for (int i = 0; i < t->cands.n; i++)
    if (t->cands.v[i].status == CAND_OK && from_fixed(&t->cands.v[i]) && t->cands.v[i].tmin < us)
      us = t->cands.v[i].tmin;
  return us;
}

// The first pass built ahead: each kernel's baselines rendered as
// baselines() renders them (the fault switches' counts put back after), as
// the same programs, and sent to the children at once, so that the builds
// of many kernels overlap (of one kernel's, two or three could); the pass
// then finds them in the driver's cache. Only time: a program not built here
// is built by the pass, as before. Returns the kernels built (*asked: sent).
#define PREBUILD_MIN 8  // programs: fewer are not worth the children's start (0.85 s)
static int prebuild_baselines(Search *S, Schedule *s, const bool *todo, int *asked) {
  *asked = 0;
  if (!may_warm(S)) return 0;
  const Method *fixed[8];
  int nf = 0, nu = s->k.n, nprog = 0;
  Faults counted = S->counted;
  Job **jobs = xcalloc((size_t)nu + 1, sizeof *jobs);
  size_t **bytes = xcalloc((size_t)nu + 1, sizeof *bytes);
  Programs(*P)[2] = xcalloc((size_t)nu + 1, sizeof *P);
  for (int u = 0; u < nu; u++) {
    if (!todo[u]) continue;
    kernel_copy(&S->base, &s->k.v[u]);
    kernel_rename(&S->base);
    S->bytes = bytes[u] = arg_bytes(s, &S->base);
    jobs[u] = baseline_jobs(S, fixed, &nf);
    Job *live[8];
    int nl = 0;
    for (int i = 0; i < nf; i++) {  // RAW, then the others that are not a source seen before (as evaluate())
      Job *j = &jobs[u][i];
      render_job(S, j);
      j->hash = job_hash(j);
      bool dup = i > 0 && jobs[u][0].hash == j->hash;
      for (int x = 0; x < nl; x++) dup = dup || live[x]->hash == j->hash;
      if (!dup && i > 0) live[nl++] = j;
    }
    Job *raw = &jobs[u][0];
    programs_make(S, &raw, 1, true, &P[u][0]);
    programs_make(S, live, nl, true, &P[u][1]);
    nprog += P[u][0].nb + P[u][1].nb;
    kernel_free(&S->base);
  }
  S->bytes = NULL;
  S->counted = counted;
  WarmJob *all = xcalloc((size_t)nprog + 1, sizeof *all);
  int n = 0, built = 0;
  for (int u = 0; u < nu; u++)
    for (int r = 0; todo[u] && r < 2; r++)
      for (int b = 0; b < P[u][r].nb; b++) all[n++] = P[u][r].wj[b], *asked += P[u][r].wj[b].nk;
  if (nprog >= PREBUILD_MIN) {
    if (!S->warm) S->warm = warm_start(S->so->target, S->so->jobs);
    built = warm_build(S->warm, all, n, 0, NULL, NULL, NULL);  // baselines: no limit (RAW is the reference)
  } else
    *asked = 0;
  for (int u = 0; u < nu; u++) {
    if (!todo[u]) continue;
    programs_free(&P[u][0]), programs_free(&P[u][1]);
    jobs_free(jobs[u], nf);
    free(bytes[u]);
  }
  free(all), free(P), free(bytes), free(jobs);
  return built;
}

// Kernel u's best baseline (us): from its cache entry, or timed (time:
// true); NAN when it has no entry and is not to be timed yet.
static double first_pass_kernel(Search *S, Schedule *s, int u, bool time) {
  Tuned t = {0};
  double us = NAN;
  S->u = u, S->t = &t, S->t0 = now_s();
  kernel_copy(&S->base, &s->k.v[u]);
  kernel_rename(&S->base);
  char *key = cache_key(S, S->so->method);
  if (S->so->cache_dir && cache_load(S, S->so->cache_dir, key, &t, false)) us = baseline_best(&t);
  else if (time) us = setup(S, s, &s->k.v[u]) == 0 ? (search_kernel(S, NULL), S->best) : INFINITY;
  teardown(S, s->k.v[u].args.n);
  kernel_free(&S->base);
  free(t.cands.v), free(key);
  return us;
}

static void forward_budget(Search *S, Schedule *s, const bool *marked) {
  SearchOpts *so = S->so;
  int nu = s->k.n, per = so->measure ? so->measure : 4, cap = so->budget ? so->budget : RL_BUDGET, n = 0, total = 0, asked = 0, built = 0;
  double *w = xcalloc((size_t)nu + 1, sizeof *w), *us = xcalloc((size_t)nu + 1, sizeof *us), top = 0, sum = 0, t0 = now_s();
  bool *todo = xcalloc((size_t)nu + 1, sizeof *todo);
  for (int i = 0; i < s->l.n; i++) w[s->l.v[i].kernel] += 1;  // launches per forward
  for (int u = 0; u < nu; u++)  // the cached kernels first, then (built ahead) the others
    todo[u] = (!marked || marked[u]) && isnan(us[u] = first_pass_kernel(S, s, u, false));
  built = prebuild_baselines(S, s, todo, &asked);
  for (int u = 0; u < nu && S->rc == 0; u++)
    if (todo[u]) us[u] = first_pass_kernel(S, s, u, true);
  for (int u = 0; u < nu; u++) {
    w[u] *= (marked && !marked[u]) || !isfinite(us[u]) ? 0 : us[u];  // nothing valid: the search says so
    top = fmax(top, w[u]), sum += w[u];
  }
  free(todo), free(us);
  S->allot = xcalloc((size_t)nu + 1, sizeof *S->allot);
  S->share = xcalloc((size_t)nu + 1, sizeof *S->share);
  for (int u = 0; u < nu; u++) {
    S->share[u] = sum > 0 ? w[u] / sum : 0;
    S->allot[u] = top > 0 ? (int)(cap * sqrt(w[u] / top) / per) * per : cap;
    n += S->allot[u] > 0, total += S->allot[u];
  }
  if (!so->quiet)
    fprintf(stderr, "fluxcc: %s: the forward by the baselines: %.1f us; %d of %d kernels searched further, at most %d candidates in all (%.1f s",
            so->method, sum, n, nu, total, now_s() - t0);
  if (!so->quiet && asked) fprintf(stderr, "; %d of %d baselines built ahead in child processes", built, asked);
  if (!so->quiet) fprintf(stderr, ")\n");
  free(w);
  S->t = NULL;
}

// --kernels 3,17 as a mark per unique kernel in *marked (NULL without the
// option: every kernel is searched); -1 (said) when a number names none
static int kernels_marked(const char *list, int nu, bool **marked) {
  *marked = list ? xcalloc((size_t)nu + 1, sizeof **marked) : NULL;
  for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
    char item[24];
    int v, n = (int)strcspn(p, ",");
    snprintf(item, sizeof item, "%.*s", n < 23 ? n : 23, p);
    if (n > 22 || nb_parse_int(item, 0, nu - 1, &v)) {
      fprintf(stderr, "fluxcc: error: --kernels %s: '%.*s' is not a unique kernel of this model (0 to %d, as in fluxcc report)\n", list,
              n, p, nu - 1);
      free(*marked);
      return -1;
    }
    (*marked)[v] = true;
  }
  return 0;
}

// --model: FILE (must load, for this device), auto (the cache's model for
// this device if there is one, else a note and a blind search), none. The
// method decides without it: auto for rl, none for the others. 0, or -1 (said).
static int open_model(SearchOpts *so, CostModel **m) {
  bool rl = runs_rl(method_find(so->method));
  const char *want = so->model ? so->model : rl ? "auto" : "none";
  char err[1200], path[4200], d[160];
  *m = NULL;
  so->model_used[0] = 0;
  if (!strcmp(want, "none") || so->compile_only) return 0;
  bool au = !strcmp(want, "auto");
  if (au && !so->cache_dir) {
    if (!so->quiet) fprintf(stderr, "fluxcc: note: --model auto: no cache directory (--no-cache), so no cost model: a blind search%s\n",
                            rl ? " (RL learns from this search's measurements alone)" : "");
    return 0;
  }
  if (au) cost_model_cache_path(so->cache_dir, so->device, path, sizeof path);
  else snprintf(path, sizeof path, "%s", want);
  if (au && access(path, F_OK)) {
    if (!so->quiet) fprintf(stderr, "fluxcc: note: --model auto: no cost model for %s in %s yet: a blind search%s\n", so->device,
                            so->cache_dir, rl ? " (RL learns from this search's measurements alone)" : "");
    return 0;
  }
  if (!(*m = cost_model_load(path, so->device, err, sizeof err))) {
    fprintf(stderr, "fluxcc: %s: --model %s: %s%s\n", au ? "note" : "error", path, err, au ? ": a blind search" : "");
    return au ? 0 : -1;
  }
  snprintf(so->model_used, sizeof so->model_used, "%.400s %s", path, cost_model_describe(*m, d, sizeof d));
  if (!so->quiet) fprintf(stderr, "fluxcc: cost model %s\n", so->model_used);
  return 0;
}

// After a search that measured something: the cache's model for this device
// trained again on all of the cache's entries for it, written atomically.
static void retrain_cache_model(SearchOpts *so) {
  char err[1200], path[4200], d[160];
  if (!cost_model_available(err, sizeof err)) return;  // nothing to train with: said where a model is asked for
  TrainSet t = {0};
  CostModel *m = NULL;
  cost_model_cache_path(so->cache_dir, so->device, path, sizeof path);
  if (trainset_read(&t, so->cache_dir, so->device, err, sizeof err) == 0 && t.rows > 0 && (m = cost_model_train(&t, 1, err, sizeof err)) &&
      cost_model_save(m, path, err, sizeof err) == 0) {
    if (!so->quiet) fprintf(stderr, "fluxcc: cost model for this device trained on %d candidates of %d kernels: %s (%s)\n", t.rows,
                            t.group.n, path, cost_model_describe(m, d, sizeof d));
  } else if (t.rows > 0) fprintf(stderr, "fluxcc: warning: the cache's cost model was not trained: %s\n", err);
  cost_model_free(m);
  trainset_free(&t);
}

int search_schedule(Ctx *c, Schedule *s, SearchOpts *so) {
  bool *marked;
  if (kernels_marked(so->kernels, s->k.n, &marked)) return 2;
  if (so->shard_n) {  // --shard I/N: every Nth unique kernel (of those --kernels names)
    if (!marked) {
      marked = xcalloc((size_t)s->k.n + 1, sizeof *marked);
      for (int u = 0; u < s->k.n; u++) marked[u] = true;
    }
    for (int u = 0; u < s->k.n; u++) marked[u] = marked[u] && u % so->shard_n == so->shard_i;
  }
  if (so->records) {
    free(marked);
    return replay(c, s, so);
  }
  int unused, fake_time = fault_setting("fake-time", &unused), no_batch = 0, first_launch = 0, build_rate = 0;
  Faults every = {0};
  if (fake_time < 0 || (no_batch = fault_setting("no-batch", &unused)) < 0 || fault_setting("wrong-every", &every.wrong) < 0 ||
      fault_setting("first-launch-us", &first_launch) < 0 || fault_setting("no-barrier-every", &every.no_barrier) < 0 ||
      fault_setting("swap-args-every", &every.swap_args) < 0 || fault_setting("bad-source-every", &every.bad_source) < 0 ||
      fault_setting("slow-build-every", &every.slow_build) < 0 || fault_setting("slow-launch-every", &every.slow_launch) < 0 ||
      fault_setting("build-rate-us", &build_rate) < 0 || fault_setting("lucky-every", &every.lucky) < 0) {
    free(marked);
    return 2;
  }
  const DeviceOps *ops = targets[so->target].device;
  char err[512];
  Device *d = ops->open(so->compile_only, targets[so->target].kflags, err, sizeof err);
  if (!d) {
    fprintf(stderr, "fluxcc: error: --opt %s --target %s needs a device to time kernels on: %s\n", so->method, ops->name, err);
    free(marked);
    return 2;
  }
  ops->describe(d, so->device, sizeof so->device, so->toolchain, sizeof so->toolchain);
  if (!so->quiet) fprintf(stderr, "fluxcc: %s search of %d kernels on %s (%s)\n", so->method, s->k.n, so->device, so->toolchain);
  CostModel *model = NULL;
  if (open_model(so, &model)) {
    ops->close(d);
    free(marked);
    return 2;
  }
  s->tuned = xcalloc((size_t)s->k.n + 1, sizeof *s->tuned);
  Search S = {.c = c, .so = so, .ops = ops, .d = d, .nu = s->k.n, .all_t0 = now_s(), .tty = isatty(2), .method = so->method, .model = model,
              .model_all = so->model != NULL};
  S.tuned = s->tuned;
  S.every = every, S.fake_time = fake_time, S.no_batch = no_batch, S.first_launch_us = first_launch, S.build_rate_us = build_rate;
  int failed = 0, compiled = 0, searched = 0, finaled = 0, changed = 0;
  if (runs_rl(method_find(so->method)) && !so->compile_only) forward_budget(&S, s, marked);
  for (int u = 0; u < s->k.n && S.rc == 0; u++) {
    Kernel *k = &s->k.v[u];
    S.u = u, S.t0 = now_s();
    kernel_copy(&S.base, k);
    kernel_rename(&S.base);
    if (!marked || marked[u]) tune(&S, s, k, so->method, &s->tuned[u]);
    else snprintf(s->tuned[u].method, sizeof s->tuned[u].method, "raw");  // not searched: RAW, untimed
    teardown(&S, k->args.n);
    kernel_free(&S.base);
    Tuned *t = &s->tuned[u];
    trainset_add(&S.online, t->cands.v, t->cands.n);  // what RL learns from on the kernels after this one
    searched += !t->cached && t->cands.n > 0;
    finaled += !t->cached && t->finals, changed += !t->cached && overruled(t);
    for (int i = 0; i < t->cands.n; i++) {
      compiled++;
      if (t->cands.v[i].status == CAND_FAILED) {
        failed++;
        if (so->compile_only) fprintf(stderr, "  %s: %s\n", t->cands.v[i].name, t->cands.v[i].why);
      }
    }
    for (int i = 0; S.rc == 0 && i < t->nopts; i++)
      if (opt_apply(k, t->opts[i], err, sizeof err)) {  // a cache entry from different rules would do this
        fprintf(stderr, "fluxcc: error: kernel %d: the chosen opts do not apply: %s (clear the cache?)\n", u, err);
        S.rc = 2;
      }
  }
  double waited = 0, busy = 0;
  warm_usage(S.warm, &waited, &busy);
  warm_stop(S.warm);
  ops->close(d);
  free(marked), free(S.allot), free(S.share);
  cost_model_free(model);
  trainset_free(&S.online);
  so->wall_s = now_s() - S.all_t0;
  if (S.rc == 0 && searched && so->cache_dir && !so->compile_only) retrain_cache_model(so);
  if (so->compile_only) {
    printf("compiled %d candidates of %d kernels for %s (%s): %d failed\n", compiled, s->k.n, so->device, so->toolchain, failed);
    return S.rc ? S.rc : failed ? 1 : 0;
  }
  if (S.rc == 0) schedule_names(s);
  if (!so->quiet && S.rc == 0) {
    fprintf(stderr, "fluxcc: %s search done in %.1f s", so->method, so->wall_s);
    if (S.warm_asked) {
      fprintf(stderr, " (%d of %d candidates built ahead in child processes", S.warmed, S.warm_asked);
      if (waited > 0) fprintf(stderr, "; the search waited on them %.*f s, they were busy %.0f%% of it", waited < 1 ? 2 : 1, waited, busy * 100);
      if (S.too_long) fprintf(stderr, "; %d not built, their text too long to build within --build-limit", S.too_long);
      fprintf(stderr, ")");
    }
    if (finaled)
      fprintf(stderr, "; the finals decided %d kernels, %d of them against the first measurement (%.1f s of it)", finaled, changed, S.finals_s);
    fprintf(stderr, "\n");
  }
  return S.rc;
}
