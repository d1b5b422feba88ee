// measure.c — one candidate's way from opts to a time: rendered (with the
// fault switches of the tests), deduplicated by its source, built
// (concurrently, --jobs; on OpenCL ahead in child processes first, warm.c),
// run once on seeded random inputs with a poisoned output and compared with
// RAW's output (a candidate that differs is rejected, never chosen), then
// timed with device events, one candidate at a time, and recorded. Also the
// progress line and each kernel's arguments.
#include "search.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// a candidate of a fixed method (RAW, HC, TC), not a search's
bool from_fixed(const Search *S, const Cand *c) {
  for (int i = 0; i < S->nfixed; i++)
    if (S->fixed[i] == c->from) return true;
  return false;
}

// the finals chose another kernel than the first measurement would have (a
// kernel by its name after opts: BEST's methods that chose one kernel are one finalist)
bool overruled(const Tuned *t) {
  return t->finals && t->chosen != t->first && strcmp(t->cands.v[t->chosen].name, t->cands.v[t->first].name);
}

void progress(Search *S, bool final) {
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
    fprintf(stderr, "\r\033[K%s %d/%d %s: %d timed, %s, %.1f s%s", S->method->name, S->u + 1, S->nu, S->base.name, timed, best, all, eta);
  } else if (final) {
    const Tuned *t = S->t;
    char fin[200] = "";
    if (overruled(t)) {
      const Cand *ch = &t->cands.v[t->chosen], *fi = &t->cands.v[t->first];
      int won = 0;  // the rounds the first measurement's winner was the faster in
      for (int r = 0; r < FINAL_ROUNDS && fi->fin_rounds && ch->fin_rounds; r++) won += fi->fin_us[r] < ch->fin_us[r];
      snprintf(fin, sizeof fin, "; the finals chose %s's kernel (median %.3g us) over %s's (first measured %.3g us, median %.3g, faster in %d of %d rounds)",
               t->method->name, ch->fin_med, fi->from->name, fi->tmin, fi->fin_med, won, FINAL_ROUNDS);
    }
    fprintf(stderr, "%s%s %d/%d %s -> %s: %s, %d candidates, %.1f s%s\n", S->tty ? "\r\033[K" : "", S->method->name, S->u + 1, S->nu,
            S->base.name, t->method->name, best, timed, el, fin);
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
static char *kernel_body(Search *S, Kernel *k, Program *p) {
  kernel_rename(k);
  lower_kernel(S->c, NULL, k, p);
  return render_kernel(S->c, NULL, k, p);
}

void render_job(Search *S, Job *j) {
  Program p;
  char *body = kernel_body(S, &j->k, &p);
  bool raw = j->cand.from == &methods[M_raw];  // RAW is the reference: no fault switch touches it
  for (int x = 0; x < 3; x++) j->grid[x] = p.global[x], j->block[x] = p.local[x];
  kernel_features(&j->k, &p, j->cand.feat);
  j->cand.has_feat = true;
  program_free(&p);
  Str o = {0};
  str_printf(&o, "%s\n", template_text(S->so->target, S->so->target->prelude));
  j->body_at = o.n;
  // the fault switch of the tests: this candidate stores a wrong value
  if (S->every.wrong && !raw && ++S->counted.wrong % S->every.wrong == 0)
    for (int t = 0; t < 3; t++)
      for (int w = 1; w <= 16; w *= 2) {  // st_f32, and the vector stores st_f32x2 ... st_f32x16 (VEC)
        static const char *const st[] = {"st_f32", "st_bf16", "st_f16"};
        char f[16];
        if (w == 1) snprintf(f, sizeof f, "%s", st[t]);
        else snprintf(f, sizeof f, "%sx%d", st[t], w);
        str_printf(&o, "#define %s(p, i, v) %s(p, i, (v) + 1.0f)\n", f, f);
      }
  // ... or stores far outside its output, which a GPU (and the CUDA stand-in) faults on
  if (S->every.oob && !raw && ++S->counted.oob % S->every.oob == 0)
    for (int t = 0; t < 3; t++)
      for (int w = 1; w <= 16; w *= 2) {
        static const char *const st[] = {"st_f32", "st_bf16", "st_f16"};
        char f[16];
        if (w == 1) snprintf(f, sizeof f, "%s", st[t]);
        else snprintf(f, sizeof f, "%sx%d", st[t], w);
        str_printf(&o, "#define %s(p, i, v) %s(p, (i) + (1 << 22), v)\n", f, f);
      }
  const char *bar = S->so->target->dialect->barrier;
  if (S->every.no_barrier && *bar && !raw && strstr(body, bar) && ++S->counted.no_barrier % S->every.no_barrier == 0)
    for (char *p; (p = strstr(body, bar));) memset(p, ' ', strlen(bar));  // a missing synchronization
  if (S->every.swap_args && !raw && ++S->counted.swap_args % S->every.swap_args == 0 && !swap_inputs(S, &j->k, &body))
    S->counted.swap_args--;  // no alike pair here: the next candidate that has one
  if (S->every.bad_source && !raw && ++S->counted.bad_source % S->every.bad_source == 0)
    str_printf(&o, "#error \"FLUXCC_FAULT: a candidate that does not compile\"\n");
  if (S->every.slow_build && !raw && ++S->counted.slow_build % S->every.slow_build == 0) str_printf(&o, "%s\n", SLOW_BUILD_MARK);
  if (S->every.slow_launch && !raw && ++S->counted.slow_launch % S->every.slow_launch == 0)
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
uint64_t job_hash(const Job *j) { return fnv_bytes(FNV_SEED, j->src + j->body_at, strlen(j->src + j->body_at)); }

// The same identity for a kernel not made a job (no fault switches: they
// would count it): its rendered text, as job_hash reads it
uint64_t kernel_text_hash(Search *S, Kernel *k) {
  Program p;
  char *body = kernel_body(S, k, &p);
  program_free(&p);
  uint64_t h = fnv_bytes(FNV_SEED, body, strlen(body));
  free(body);
  return h;
}

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
bool may_warm(const Search *S) { return S->ops->warm_children && S->so->jobs > 1 && !S->so->compile_only; }

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
  str_printf(o, "%s\n", template_text(S->so->target, S->so->target->prelude));
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

void programs_make(Search *S, Job **jobs, int n, bool batch, Programs *P) {
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

void programs_free(Programs *P) {
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

void compile_all(Search *S, Job **jobs, int n) {
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
double fake_us(const Job *j, int r) { return 1.0 + (double)(j->hash % 100000) * 0.01 + r; }

// One launch of a candidate's binary. A fault of the kernel that lost the
// device (CUDA's sticky errors) fails this candidate alone: the device
// renewed and the kernel's inputs uploaded again, the search goes on; where
// it cannot, the search stops (S->rc = 2).
int launch_job(Search *S, const Job *j, double *us, char *err, size_t n) {
  const DeviceOps *D = S->ops;
  if (D->launch(S->d, j->bin, j->grid, j->block, us, err, n) == 0) return 0;
  char why[400];
  int r = D->renew ? D->renew(S->d, why, sizeof why) : 1;
  for (int a = 1; r == 0 && a < S->base.args.n; a++) r = D->upload(S->d, a, S->host[a], why, sizeof why);
  if (r < 0 && S->rc == 0) fprintf(stderr, "fluxcc: error: %s: %s\n", S->info->device, why), S->rc = 2;
  return -1;
}

// A compiled candidate's checked run: validated against RAW (whose output
// becomes the reference). true: valid, to be timed (its run's time in
// j->check_us); else the status and reason are set. Running every candidate
// of a round once before timing any is what lets the fastest be timed first.
bool check_job(Search *S, Job *j) {
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
  bool is_raw = c->from == &methods[M_raw];
  if (D->upload(S->d, 0, S->host[0], err, sizeof err) || launch_job(S, j, &us, err, sizeof err) ||
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
  bool is_raw = c->from == &methods[M_raw];
  double us = j->check_us, t[64];
  int runs = S->so->runs < 64 ? S->so->runs : 64, r = 0;
  if (is_raw && us > TIMEOUT_US) {  // a very slow reference: its checked run is its time
    c->runs = 1, c->tmin = c->tmed = c->tmax = round(us * 1e3) / 1e3;
    snprintf(c->why, sizeof c->why, "timed once: its checked run took %.1f s", us * 1e-6);
    if (c->tmin < S->best) S->best = c->tmin;
    S->raw = c->tmin;
    return;
  }
  if (!S->fake_time && us > SLOW_FACTOR * S->stop_ref + FIRST_LAUNCH_US) {  // too slow already in the checked run: no timed runs
    c->status = CAND_SLOW, c->runs = 1, c->tmin = c->tmed = c->tmax = round(us * 1e3) / 1e3;
    snprintf(c->why, sizeof c->why, "stopped early: its checked run took %.3g us, over %.0fx the reference (%.3g us) + %.0f us", us,
             SLOW_FACTOR, S->stop_ref, FIRST_LAUNCH_US);
    return;
  }
  for (; r < runs; r++) {
    if (launch_job(S, j, &t[r], err, sizeof err)) {
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
  if (S->every.lucky && c->status == CAND_OK && !from_fixed(S, c) && ++S->counted.lucky % S->every.lucky == 0) {
    for (int i = 0; i < r; i++) t[i] *= 0.1;
    snprintf(c->why, sizeof c->why, "FLUXCC_FAULT=lucky-every: its timed runs read 10x faster");
  }
  qsort(t, (size_t)r, sizeof *t, cmp_double);
  c->runs = r;
  c->tmin = round(t[0] * 1e3) / 1e3;
  c->tmed = round((r % 2 ? t[r / 2] : 0.5 * (t[r / 2 - 1] + t[r / 2])) * 1e3) / 1e3;
  c->tmax = round(t[r - 1] * 1e3) / 1e3;
  if (c->status == CAND_OK && c->tmin < S->best) S->best = c->tmin;
  if (c->status == CAND_OK && S->tighten && c->tmin < S->stop_ref) S->stop_ref = c->tmin;
  if (is_raw) S->raw = c->tmin;
}

static int by_check(const void *a, const void *b) {
  const Job *x = *(Job *const *)a, *y = *(Job *const *)b;
  if (x->check_us != y->check_us) return x->check_us < y->check_us ? -1 : 1;
  return x < y ? -1 : x > y;  // as proposed
}

void seen_clear(Search *S) {
  free(S->seen.v);
  S->seen.v = NULL, S->seen.n = S->seen.cap = 0;
}

// A rendered source seen before: its index in S->seen, else -1.
int seen_find(Search *S, uint64_t h) {
  for (int s = 0; s < S->seen.n; s++)
    if (S->seen.v[s].h == h) return s;
  return -1;
}

// Keep a valid candidate's binary for the finals (candidate number i): every
// fixed method's, and the KEPT_SEARCHED fastest others (the slowest kept one
// makes room). False: not kept, the caller releases it.
static bool keep(Search *S, const Job *j, int i) {
  bool fixed = from_fixed(S, &j->cand);
  int slot = S->nkept < KEPT_MAX ? S->nkept : -1, searched = 0, slowest = -1;
  for (int x = 0; x < S->nkept; x++) {
    const Cand *c = &S->t->cands.v[S->kept[x].cand];
    if (from_fixed(S, c)) continue;
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

void kept_clear(Search *S) {
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
int evaluate(Search *S, Job *jobs, int n) {
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
    if (check_job(S, live[i])) valid[nv++] = live[i];
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

void jobs_free(Job *jobs, int n) {
  for (int i = 0; i < n; i++) {
    kernel_free(&jobs[i].k);
    free(jobs[i].src);
  }
  free(jobs);
}

// each argument's size in bytes
size_t *arg_bytes(const Schedule *s, const Kernel *k) {
  size_t *b = xcalloc((size_t)k->args.n + 1, sizeof *b);
  for (int a = 0; a < k->args.n; a++) b[a] = (size_t)shape_numel(&s->bufs.v[k->args.v[a].buf].shape) * (size_t)dtype_size[k->args.v[a].dt];
  return b;
}

// The current kernel's arguments, made when a search first needs them:
// output first (poisoned before each run), then the seeded random inputs.
int args_setup(Search *S, Schedule *s, Kernel *k) {
  if (S->ready) return S->rc;
  S->ready = true;
  const SearchOpts *so = S->so;
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
  if (rc) fprintf(stderr, "fluxcc: error: %s: %s\n", S->info->device, err), S->rc = 2;
  return S->rc;
}

void args_teardown(Search *S, int nargs) {
  if (!S->ready) return;
  for (int a = 0; a < nargs; a++) free(S->host[a]);
  free(S->host), free(S->bytes), free(S->ref), free(S->out);
  S->host = NULL, S->bytes = NULL, S->ref = S->out = NULL;
  S->ready = false;
}

