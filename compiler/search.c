// search.c — the methods, and the driver of the measured searches.
//
// A fixed method (raw, hc, tc) is a function of the kernel. BEAM and MCTS are
// measured: tinygrad's algorithms over our opt actions (beam.c, tree.c); RL
// searches the same tree guided by a cost model it refits to every
// measurement (tree.c); BEST times RAW, HC, TC and the searches' choices side
// by side. Per unique kernel the driver takes a cache entry (cache.c) or
// runs the baselines (RAW, HC, TC), the method's search, and the finals
// (finals.c); every candidate is rendered, built, checked against RAW's output
// and timed by measure.c. What was measured is kept per unique kernel (Tuned):
// it goes into records.json and the kernel headers, is cached on disk, and a
// records.json can be replayed with no device at all (cache.c). Both files
// are written, read back and checked by records.c.
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//
// The methods
//
static void m_raw(Kernel *k, uint64_t seed, bool tf32) { (void)k, (void)seed, (void)tf32; }
static void m_hc(Kernel *k, uint64_t seed, bool tf32) { (void)seed, (void)tf32; opt_hc(k); }
static void m_tc(Kernel *k, uint64_t seed, bool tf32) { (void)seed; opt_tc(k, tf32); }
static void m_random(Kernel *k, uint64_t seed, bool tf32) { (void)tf32; opt_random(k, &seed, 6); }

static bool runs_rl(const Method *m) { return m->search == rl_search || m->kind == METHOD_BEST; }  // BEST runs RL too

// a search the cost model guides: RL always, BEAM and MCTS with --model (BEST's key: its own searches' are theirs)
static bool guided(const Search *S, const Method *m) { return (S->model_all && S->model) || m->search == rl_search; }

const Method methods[] = {
#define X(NAME, KIND, APPLY, SEARCH, WHAT, BUILT, COMPARED, TC_NOTES, TILE_N) \
  {.name = #NAME, .kind = KIND, .apply = APPLY, .search = SEARCH, .what = WHAT, .built = BUILT, .compared = COMPARED, \
   .tc_notes = TC_NOTES, .tile_n = TILE_N},
  METHODS(X)
#undef X
  {.name = NULL},
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

int optimize_schedule(Ctx *c, Schedule *s, const Method *m, uint64_t seed, bool tf32) {
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

// RAW (alone: its output is the reference the others are checked against),
// then HC and TC, the baselines a search must beat. Returns how many were
// evaluated, or -1 when RAW does not run (nothing can be validated).
static Job *baseline_jobs(Search *S, const Method **fixed, int *n) {
  *n = fixed_methods(fixed);
  Job *jobs = xcalloc((size_t)*n, sizeof *jobs);
  for (int i = 0; i < *n; i++) {
    kernel_copy(&jobs[i].k, &S->base);
    fixed[i]->apply(&jobs[i].k, 0, S->so->tf32);
    jobs[i].cand.from = fixed[i];
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
    js[i].cand.from = i < nf ? fixed[i] : by[i - nf].method;
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
static void tune(Search *S, Schedule *s, Kernel *k, const Method *method, Tuned *t) {
  const SearchOpts *so = S->so;
  const Method *outer = S->method;
  Tuned *outer_t = S->t;
  S->method = method, S->t = t;
  char *key = cache_key(S, method, guided(S, method));
  if (so->cache_dir && !so->compile_only && cache_load(S, so->cache_dir, key, t, true)) {
    t->cached = 1;
    if (!so->quiet && !S->tty) fprintf(stderr, "%s %d/%d %s -> %s: cached\n", method->name, S->u + 1, S->nu, S->base.name, t->method->name);
  } else if (args_setup(S, s, k) == 0) {
    double t0 = now_s();
    if (method->kind == METHOD_BEST) {  // each search's choice (cached or searched now), then all timed side by side
      Tuned by[8];
      int n = 0;
      memset(by, 0, sizeof by);
      for (const Method *x = methods; x->name && n < 8; x++)
        if (x->kind == METHOD_SEARCH && x->compared) {
          tune(S, s, k, x, &by[n]);
          by[n++].method = x;   // its search's name, whichever method's kernel it chose
        }
      S->method = method, S->t = t;
      if (S->rc == 0) best_of(S, by, n);
      for (int i = 0; i < n; i++) free(by[i].cands.v);
    } else search_kernel(S, method);
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
static double baseline_best(const Search *S, const Tuned *t) {
  double us = INFINITY;
  for (int i = 0; i < t->cands.n; i++)
    if (t->cands.v[i].status == CAND_OK && from_fixed(S, &t->cands.v[i]) && t->cands.v[i].tmin < us)
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
  char *key = cache_key(S, S->so->method, guided(S, S->so->method));
  if (S->so->cache_dir && cache_load(S, S->so->cache_dir, key, &t, false)) us = baseline_best(S, &t);
  else if (time) us = args_setup(S, s, &s->k.v[u]) == 0 ? (search_kernel(S, NULL), S->best) : INFINITY;
  args_teardown(S, s->k.v[u].args.n);
  kernel_free(&S->base);
  free(t.cands.v), free(key);
  return us;
}

static void forward_budget(Search *S, Schedule *s, const bool *marked) {
  const SearchOpts *so = S->so;
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
            so->method->name, sum, n, nu, total, now_s() - t0);
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
// this device if there is one and it loads, else a note or a warning and a
// blind search), none. The
// method decides without it: auto for rl, none for the others. 0, or -1 (said).
static int open_model(const SearchOpts *so, SearchInfo *info, CostModel **m) {
  bool rl = runs_rl(so->method);
  const char *want = so->model ? so->model : rl ? "auto" : "none";
  char err[1200], path[4200], d[160];
  *m = NULL;
  info->model_used[0] = 0;
  if (!strcmp(want, "none") || so->compile_only) return 0;
  bool au = !strcmp(want, "auto");
  if (au && !so->cache_dir) {
    if (!so->quiet) fprintf(stderr, "fluxcc: note: --model auto: no cache directory (--no-cache), so no cost model: a blind search%s\n",
                            rl ? " (RL learns from this search's measurements alone)" : "");
    return 0;
  }
  if (au) cost_model_cache_path(so->cache_dir, info->device, path, sizeof path);
  else snprintf(path, sizeof path, "%s", want);
  if (au && access(path, F_OK)) {
    if (!so->quiet) fprintf(stderr, "fluxcc: note: --model auto: no cost model for %s in %s yet: a blind search%s\n", info->device,
                            so->cache_dir, rl ? " (RL learns from this search's measurements alone)" : "");
    return 0;
  }
  // a cache model that cannot be used (unreadable, or hostile: model_check.c) is
  // one file in a shared cache: warned of and searched without, not a stop to
  // every rl search there; the search's retraining then replaces it
  if (!(*m = cost_model_load(path, info->device, err, sizeof err))) {
    fprintf(stderr, "fluxcc: %s: --model %s: %s%s\n", au ? "warning" : "error", path, err,
            au ? ": not used, a blind search (a search that measures trains the cache's model again)" : "");
    return au ? 0 : -1;
  }
  snprintf(info->model_used, sizeof info->model_used, "%.400s %s", path, cost_model_describe(*m, d, sizeof d));
  if (!so->quiet) fprintf(stderr, "fluxcc: cost model %s\n", info->model_used);
  return 0;
}

// After a search that measured something: the cache's model for this device
// trained again on all of the cache's entries for it, written atomically.
static void retrain_cache_model(const SearchOpts *so, const char *device) {
  char err[1200], path[4200], d[160];
  if (!cost_model_available(err, sizeof err)) return;  // nothing to train with: said where a model is asked for
  TrainSet t = {0};
  CostModel *m = NULL;
  cost_model_cache_path(so->cache_dir, device, path, sizeof path);
  if (trainset_read(&t, so->cache_dir, device, err, sizeof err) == 0 && t.rows > 0 && (m = cost_model_train(&t, 1, err, sizeof err)) &&
      cost_model_save(m, path, err, sizeof err) == 0) {
    if (!so->quiet) fprintf(stderr, "fluxcc: cost model for this device trained on %d candidates of %d kernels: %s (%s)\n", t.rows,
                            t.group.n, path, cost_model_describe(m, d, sizeof d));
  } else if (t.rows > 0) fprintf(stderr, "fluxcc: warning: the cache's cost model was not trained: %s\n", err);
  cost_model_free(m);
  trainset_free(&t);
}

int search_schedule(Ctx *c, Schedule *s, const SearchOpts *so, SearchInfo *info) {
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
    return replay(c, s, so, info);
  }
  int unused, fake_time = fault_setting("fake-time", &unused), no_batch = 0, first_launch = 0, build_rate = 0;
  Faults every = {0};
  if (fake_time < 0 || (no_batch = fault_setting("no-batch", &unused)) < 0 || fault_setting("wrong-every", &every.wrong) < 0 ||
      fault_setting("first-launch-us", &first_launch) < 0 || fault_setting("no-barrier-every", &every.no_barrier) < 0 ||
      fault_setting("swap-args-every", &every.swap_args) < 0 || fault_setting("bad-source-every", &every.bad_source) < 0 ||
      fault_setting("slow-build-every", &every.slow_build) < 0 || fault_setting("slow-launch-every", &every.slow_launch) < 0 ||
      fault_setting("build-rate-us", &build_rate) < 0 || fault_setting("lucky-every", &every.lucky) < 0 ||
      fault_setting("oob-every", &every.oob) < 0) {
    free(marked);
    return 2;
  }
  if (every.oob && !so->target->device->renew) {  // elsewhere such a store lands in fluxcc's own memory
    fprintf(stderr, "fluxcc: error: FLUXCC_FAULT=oob-every=%d: only on --target cuda, whose device catches the stores\n", every.oob);
    free(marked);
    return 2;
  }
  const DeviceOps *ops = so->target->device;
  char err[512];
  Device *d = ops->open(so->compile_only, so->target->kflags, err, sizeof err);
  if (!d) {
    fprintf(stderr, "fluxcc: error: --opt %s --target %s needs a device to time kernels on: %s\n", so->method->name, ops->name, err);
    free(marked);
    return 2;
  }
  ops->describe(d, info->device, sizeof info->device, info->toolchain, sizeof info->toolchain);
  if (!so->quiet) fprintf(stderr, "fluxcc: %s search of %d kernels on %s (%s)\n", so->method->name, s->k.n, info->device, info->toolchain);
  CostModel *model = NULL;
  if (open_model(so, info, &model)) {
    ops->close(d);
    free(marked);
    return 2;
  }
  s->tuned = xcalloc((size_t)s->k.n + 1, sizeof *s->tuned);
  Search S = {.c = c, .so = so, .info = info, .ops = ops, .d = d, .nu = s->k.n, .all_t0 = now_s(), .tty = isatty(2), .method = so->method, .model = model,
              .model_all = so->model != NULL};
  S.tuned = s->tuned;
  S.nfixed = fixed_methods(S.fixed);
  S.every = every, S.fake_time = fake_time, S.no_batch = no_batch, S.first_launch_us = first_launch, S.build_rate_us = build_rate;
  int failed = 0, compiled = 0, searched = 0, finaled = 0, changed = 0;
  if (runs_rl(so->method) && !so->compile_only) forward_budget(&S, s, marked);
  for (int u = 0; u < s->k.n && S.rc == 0; u++) {
    Kernel *k = &s->k.v[u];
    S.u = u, S.t0 = now_s();
    kernel_copy(&S.base, k);
    kernel_rename(&S.base);
    if (!marked || marked[u]) tune(&S, s, k, so->method, &s->tuned[u]);
    else s->tuned[u].method = &methods[M_raw];  // not searched: RAW, untimed
    args_teardown(&S, k->args.n);
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
  info->wall_s = now_s() - S.all_t0;
  if (S.rc == 0 && searched && so->cache_dir && !so->compile_only) retrain_cache_model(so, info->device);
  if (so->compile_only) {
    printf("compiled %d candidates of %d kernels for %s (%s): %d failed\n", compiled, s->k.n, info->device, info->toolchain, failed);
    return S.rc ? S.rc : failed ? 1 : 0;
  }
  if (S.rc == 0) schedule_names(s);
  if (!so->quiet && S.rc == 0) {
    fprintf(stderr, "fluxcc: %s search done in %.1f s", so->method->name, info->wall_s);
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

