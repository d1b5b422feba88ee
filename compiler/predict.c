// predict.c — the cost model in the searches: scores of candidates' features,
// BEAM's round cut to its best-scored candidates, and the ranked but untimed
// ones into the records.
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// The model's scores of n feature rows into out (0 each without a model; a
// failure is said once and scores nothing).
void score_rows(Search *S, CostModel *m, const float *rows, int n, double *out) {
  char err[400];
  for (int i = 0; i < n; i++) out[i] = 0;
  if (m && cost_model_predict(m, rows, n, out, err, sizeof err) && !S->said_predict) {
    fprintf(stderr, "fluxcc: warning: the cost model: %s (the search goes on without its scores)\n", err);
    S->said_predict = true;
    for (int i = 0; i < n; i++) out[i] = 0;
  }
}

// a candidate the model ranked but the search did not time, into the records
void record_predicted(Search *S, const Cand *cand, int rank, int of) {
  Cand c = *cand;
  c.status = CAND_PREDICTED, c.runs = 0, c.tmin = c.tmed = 0, c.err = 0;
  c.at_s = round((now_s() - S->t0) * 1e3) / 1e3;
  snprintf(c.why, sizeof c.why, "not measured: the cost model ranked it %d of %d", rank, of);
  vec_push(S->t->cands, c);
}

int by_rank(const void *a, const void *b) {
  const Ranked *x = a, *y = b;
  if (x->s != y->s) return x->s > y->s ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

// With a model, a round times only its `keep` best-scored candidates not
// evaluated before: they move to the front of js (the return is how many);
// the next ones by score are recorded as predicted (at most PREDICTED_KEPT).
int top_predicted(Search *S, Job *js, int n, int keep) {
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

