// beam.c — BEAM: tinygrad's beam search over the opt actions, from starts().
#include "search.h"

#include <stdlib.h>

static int by_time(const void *a, const void *b) {
  const Job *x = *(Job *const *)a, *y = *(Job *const *)b;
  return x->cand.tmin < y->cand.tmin ? -1 : x->cand.tmin > y->cand.tmin;
}

// BEAM: every entry extended by every legal action; the best K valid ones
// are the next beam; stop when a round finds nothing faster. It starts from
// starts(): at real width a budget of a few dozen candidates rarely rebuilds
// HC's register tiles from RAW, and refining them is where it finds time.
void beam_search(Search *S, int used) {
  const SearchOpts *so = S->so;
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
        js[n].cand.from = &methods[M_beam];
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

