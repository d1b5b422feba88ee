// finals.c — the finals: a search's fastest candidates and the fixed
// methods timed again side by side, interleaved, and the choice they make.
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

// the finals' choice; without finals the fastest valid candidate, ties to
// the earliest (raw, hc, tc, beam order)
void choose(Tuned *t) {
  int best = t->finals ? t->chosen : -1;
  for (int i = 0; i < t->cands.n && !t->finals; i++) {
    Cand *c = &t->cands.v[i];
    if (c->status == CAND_OK && (best < 0 || c->tmin < t->cands.v[best].tmin)) best = i;
  }
  t->chosen = best;
  if (best < 0) {  // nothing valid (RAW failed): RAW, unmeasured
    t->method = &methods[M_raw];
    t->nopts = 0;
    return;
  }
  Cand *c = &t->cands.v[best];
  t->method = c->from;
  memcpy(t->opts, c->opts, sizeof c->opts);
  t->nopts = c->nopts;
  t->tmin = c->tmin, t->tmed = c->tmed, t->runs = c->runs;
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

void finals(Search *S, bool all) {
  Tuned *t = S->t;
  t->finals = false, t->first = t->incumbent = t->chosen = -1;
  if (S->so->from_raw || S->so->compile_only || S->rc) return;
  double fixed_best = INFINITY;
  int first = -1;
  for (int i = 0; i < t->cands.n; i++) {
    const Cand *c = &t->cands.v[i];
    if (c->status != CAND_OK) continue;
    if (first < 0 || c->tmin < t->cands.v[first].tmin) first = i;
    if (from_fixed(S, c) && c->tmin < fixed_best) fixed_best = c->tmin;
  }
  if (first < 0 || !isfinite(fixed_best)) return;
  int idx[FINALISTS + 16], n = 0, nfixed;
  for (int i = 0; i < t->cands.n && n < 8; i++)  // the fixed methods near the best of them
    if (t->cands.v[i].status == CAND_OK && from_fixed(S, &t->cands.v[i]) && t->cands.v[i].tmin <= FINAL_NEAR * fixed_best)
      idx[n++] = i;
  nfixed = n;
  for (int k = 0; k < (all ? 8 : FINALISTS); k++) {  // the search's fastest, near enough to win
    int pick = -1;
    for (int i = 0; i < t->cands.n; i++) {
      const Cand *c = &t->cands.v[i];
      bool taken = false;
      for (int x = nfixed; x < n; x++) taken |= idx[x] == i;
      if (c->status == CAND_OK && !taken && !from_fixed(S, c) && (all || c->tmin <= FINAL_NEAR * fixed_best) &&
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
      js[k].cand.from = c->from;  // round 0: built however long it takes
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
    if (!built || check_job(S, live[i])) of[m] = of[i], live[m++] = live[i];
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
        if (launch_job(S, live[i], &us, err, sizeof err)) dead[i] = true, us = INFINITY;
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

