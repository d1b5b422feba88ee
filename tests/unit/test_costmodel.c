// test_costmodel.c — features of known kernels, and the cost model on
// synthetic data whose order is known: it learns it, ranks unseen rows by
// it, trains the same model twice from the same data, saves and loads
// without changing a prediction, refits, and refuses what is not a model.
#include "fluxcc.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Ctx c;
static Schedule s;

static int feature(const char *name) {
  for (int i = 0; i < NFEATURES; i++)
    if (!strcmp(feature_name[i], name)) return i;
  return -1;
}

static void features_of(Kernel *k, float *f) {
  Program p;
  lower_kernel(&c, &s, k, &p);
  kernel_features(k, &p, f);
  program_free(&p);
}

// a group of n candidates of one "kernel": the time falls with feature 0
// and rises with feature 1; the other features are noise
static void group(TrainSet *t, int n, uint64_t *rng) {
  Cand *cs = calloc((size_t)n, sizeof *cs);
  for (int i = 0; i < n; i++) {
    for (int f = 0; f < NFEATURES; f++) cs[i].feat[f] = (float)((lcg_next(rng) >> 40) % 1000) / 100.0f;
    cs[i].has_feat = true, cs[i].status = CAND_OK;
    cs[i].tmin = 10.0 * exp2(0.5 * cs[i].feat[1] - 0.3 * cs[i].feat[0]);
  }
  trainset_add(t, cs, n);
  free(cs);
}

// the share of pairs of rows the scores order as the times do
static double concordance(const float *x, const double *score, int n) {
  long ok = 0, all = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double ti = 0.5 * x[i * NFEATURES + 1] - 0.3 * x[i * NFEATURES], tj = 0.5 * x[j * NFEATURES + 1] - 0.3 * x[j * NFEATURES];
      if (ti == tj) continue;
      all++, ok += (score[i] > score[j]) == (ti < tj);
    }
  return all ? (double)ok / (double)all : 0;
}

int main(int argc, char **argv) {
  char err[1200], path[4200], path2[4200];
  if (argc != 2) return fprintf(stderr, "usage: test_costmodel DIR (a folder of its own for the model files)\n"), 2;
  // features: a matmul under HC, read from the IR
  ctx_init(&c);
  const char *mm = "input a: f32[64, 32]\ninput b: f32[32, 48]\noutput out = matmul(a, b)\n";
  s.target = &targets[TARGET_CUDA];
  CHECK(elaborate_source(&c, "t.fdsl", mm) == 0 && schedule_build(&c, &s) == 0, "matmul schedules");
  Kernel *k = &s.k.v[0];
  float raw[NFEATURES], hc[NFEATURES];
  features_of(k, raw);
  CHECK(raw[feature("size_global")] == (float)log2(64.0 * 48), "RAW: a grid of 64x48, got 2^%g", raw[feature("size_global")]);
  CHECK(raw[feature("size_reduce")] == 5, "RAW: a reduce loop of 32, got 2^%g", raw[feature("size_reduce")]);
  CHECK(raw[feature("reduction")] == 1 && raw[feature("tensor_cores")] == 0, "RAW: a reduction, no tensor cores");
  CHECK(raw[feature("flops")] > 17 && raw[feature("flops")] < 18, "RAW: 2*64*48*32 FLOPs, log2(1+x) ~ 17.6, got %g", raw[feature("flops")]);
  opt_hc(k);
  features_of(k, hc);
  CHECK(hc[feature("outputs_per_thread")] > raw[feature("outputs_per_thread")], "HC computes more outputs per thread (%g vs %g)",
        hc[feature("outputs_per_thread")], raw[feature("outputs_per_thread")]);
  CHECK(hc[feature("nopts")] == (float)k->nopts && k->nopts > 0, "nopts is HC's opt count");
  bool differ = false;
  for (int i = 0; i < NFEATURES; i++) differ |= hc[i] != raw[i];
  CHECK(differ, "HC's features differ from RAW's");

  char e[400];
  if (!cost_model_available(e, sizeof e)) {
    printf("(XGBoost is not installed: %s; the model checks are skipped)\n", e);
    schedule_free(&s);
    ctx_free(&c);
    return CHECK_DONE();
  }
  // the model learns the order of synthetic groups
  TrainSet t = {0};
  uint64_t rng = 12345;
  for (int g = 0; g < 40; g++) group(&t, 25, &rng);
  snprintf(t.device, sizeof t.device, "unit test device");
  CHECK(t.rows == 1000 && t.group.n == 40, "40 groups of 25 rows, got %d rows in %d", t.rows, t.group.n);
  CostModel *m = cost_model_train(&t, 1, err, sizeof err);
  CHECK(m != NULL, "trains: %s", err);
  TrainSet held = {0};
  group(&held, 200, &rng);
  double *sc = calloc(200, sizeof *sc), *sc2 = calloc(200, sizeof *sc2);
  CHECK(m && cost_model_predict(m, held.x.v, 200, sc, err, sizeof err) == 0, "predicts: %s", err);
  double conc = concordance(held.x.v, sc, 200);
  CHECK(conc > 0.85, "ranks unseen rows: %.3f of pairs in order (chance 0.5)", conc);
  CostModel *m2 = cost_model_train(&t, 1, err, sizeof err);
  CHECK(m && m2 && cost_model_hash(m) == cost_model_hash(m2), "the same data and seed: the same model");
  cost_model_free(m2);
  // saved and loaded: the same predictions; another device's or a broken file refused
  snprintf(path, sizeof path, "%s/model.json", argv[1]);
  snprintf(path2, sizeof path2, "%s/bad.json", argv[1]);
  CHECK(m && cost_model_save(m, path, err, sizeof err) == 0, "saves: %s", err);
  CostModel *l = cost_model_load(path, "unit test device", err, sizeof err);
  CHECK(l && cost_model_predict(l, held.x.v, 200, sc2, err, sizeof err) == 0 && !memcmp(sc, sc2, 200 * sizeof *sc),
        "loaded, predicts the same: %s", l ? "" : err);
  CHECK(!cost_model_load(path, "another device", err, sizeof err) && strstr(err, "a model of device"), "another device's: %s", err);
  FILE *f = fopen(path2, "w");
  fputs("{\"fluxcc_cost_model\": 1}", f);
  fclose(f);
  CHECK(!cost_model_load(path2, NULL, err, sizeof err) && strstr(err, "not a fluxcc cost model"), "not a model: %s", err);
  // refit: more trees on one group, from a copy; the copy the loaded model was is unchanged
  TrainSet none = {0};
  Cand cs[6] = {0};
  for (int i = 0; i < 6; i++) memcpy(cs[i].feat, held.x.v + i * NFEATURES, sizeof cs[i].feat), cs[i].has_feat = true, cs[i].status = CAND_OK, cs[i].tmin = 1 + i;
  CostModel *fit = NULL;
  CHECK(cost_model_refit(&fit, l, &none, cs, 6, "unit test device", 1, err, sizeof err) == 0 && fit, "refits: %s", err);
  CHECK(fit && l && cost_model_hash(fit) != cost_model_hash(l), "the refit has more trees");
  CHECK(l && cost_model_predict(l, held.x.v, 200, sc2, err, sizeof err) == 0 && !memcmp(sc, sc2, 200 * sizeof *sc), "the base is unchanged");
  // an empty training set
  TrainSet empty = {0};
  CHECK(!cost_model_train(&empty, 1, err, sizeof err) && strstr(err, "no training data"), "empty: %s", err);
  unlink(path), unlink(path2);
  cost_model_free(fit), cost_model_free(l), cost_model_free(m);
  trainset_free(&t), trainset_free(&held);
  free(sc), free(sc2);
  schedule_free(&s);
  ctx_free(&c);
  return CHECK_DONE();
}
