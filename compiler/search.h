// search.h — what the search's files share (search.c the driver, measure.c,
// predict.c, beam.c, tree.c, finals.c, cache.c): one kernel's search state
// (Search) and the candidate jobs it measures. Nothing outside them reads it.
#ifndef FLUXCC_SEARCH_H
#define FLUXCC_SEARCH_H
#include "fluxcc.h"

#define TIMEOUT_US 10e6       // a candidate whose first launch takes longer is not timed further
#define SLOW_FACTOR 3.0       // early stop: a candidate already this much slower than the reference (stop_ref)
// What a first launch may cost beyond a warm one (PoCL, flux-tiny's kernels:
// typically 2-5 us more, up to ~30): a checked run is over the reference by
// SLOW_FACTOR plus this before it alone calls a candidate slow; under it, one
// timed run decides. Without it a 1 us kernel's every new candidate looked 3x
// slower than the timed baselines, and RL and MCTS never timed one.
#define FIRST_LAUNCH_US 50.0
#define RL_BUDGET 48          // RL's timed candidates per kernel (--budget), baselines included
#define MAXACTIONS 320        // actions() fills at most this many
#define PREDICTED_KEPT 32     // the candidates ranked by the model but not timed that go into the records

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
  int oob;                  // oob-every=N: the Nth candidate stores 4 Mi elements past its output (CUDA only)
} Faults;

struct Search {
  Ctx *c;
  const SearchOpts *so;
  SearchInfo *info;         // device and toolchain (once the device is open), the cost model used, the wall time
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
  const Method *method;     // the search under way (best runs beam, mcts and rl)
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
  const Method *fixed[8];   // the fixed methods (RAW first): a candidate from one is a baseline (from_fixed)
  int nfixed;
  bool tty;
};


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

typedef VEC(Cand) Cands;
// candidates (or nodes) ranked by the model: best score first, ties as proposed
typedef struct { double s; int i; } Ranked;

// actions.c: what the searches may do
int actions(Opt *a, bool tf32);
uint64_t next_rand(uint64_t *rng);
int starts(Search *S, const Kernel **start, double *start_t);

// measure.c: a candidate rendered, built, checked against RAW and timed
bool from_fixed(const Search *S, const Cand *c);
bool overruled(const Tuned *t);
void progress(Search *S, bool final);
void render_job(Search *S, Job *j);
uint64_t kernel_text_hash(Search *S, Kernel *k);  // job_hash of a kernel not rendered as a job
uint64_t job_hash(const Job *j);
bool may_warm(const Search *S);
void programs_make(Search *S, Job **jobs, int n, bool batch, Programs *P);
void programs_free(Programs *P);
void compile_all(Search *S, Job **jobs, int n);
double fake_us(const Job *j, int r);
bool check_job(Search *S, Job *j);
int launch_job(Search *S, const Job *j, double *us, char *err, size_t n);
int seen_find(Search *S, uint64_t h);
void seen_clear(Search *S);
void kept_clear(Search *S);
int evaluate(Search *S, Job *jobs, int n);
void jobs_free(Job *jobs, int n);
size_t *arg_bytes(const Schedule *s, const Kernel *k);
int args_setup(Search *S, Schedule *s, Kernel *k);
void args_teardown(Search *S, int nargs);

// predict.c: the cost model in the searches
void score_rows(Search *S, CostModel *m, const float *rows, int n, double *out);
void record_predicted(Search *S, const Cand *cand, int rank, int of);
int by_rank(const void *a, const void *b);
int top_predicted(Search *S, Job *js, int n, int keep);

// beam.c, tree.c: the searches (Method.search)
void beam_search(Search *S, int used);
void mcts_search(Search *S, int used);
void rl_search(Search *S, int used);

// finals.c: the finalists timed again side by side, and the choice
void finals(Search *S, bool all);
void choose(Tuned *t);

// cache.c: the tuning cache, and replay of a records.json
char *cache_key(Search *S, const Method *method, bool guided);
int apply_recorded(Kernel *k, Opt o, bool tf32, char *why, size_t n);
bool cache_load(Search *S, const char *dir, const char *key, Tuned *t, bool say);
void cache_store(Search *S, const char *key);
int replay(Ctx *c, Schedule *s, const SearchOpts *so, SearchInfo *info);
#endif
