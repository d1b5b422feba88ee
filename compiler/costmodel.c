// costmodel.c — the learned cost model: gradient-boosted trees (XGBoost's C
// API, the choice of TVM's Ansor) that rank the candidates of one kernel.
//
// Training data is every measured candidate on disk: records.json files and
// tuning-cache entries, each candidate's features (features.c) with its time.
// One kernel is one query group, and the objective is pairwise ranking within
// it (rank:pairwise): across kernels times are not comparable, within one the
// order is all a search needs. A model's output is a score, higher = faster;
// it is never shown as a time.
//
// XGBoost is loaded with dlopen (as OpenCL and CUDA are), so fluxcc builds
// and runs without it; training, --model and the online model of --opt rl
// then say to install libxgboost0. Its few prototypes are declared here.
//
// A model file is JSON written atomically: our header (format, feature
// version and names, device, rows and kernels trained on) and XGBoost's own
// JSON model as one string. A file that is not one, from another feature
// version or another device, or whose XGBoost model XGBoost could not safely
// read (model_check.c) is refused with the reason.
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODEL_FORMAT 1
#define TRAIN_ROUNDS 60      // trees of a model trained from the records
#define ONLINE_ROUNDS 12     // trees added per retraining during a search
// The least evidence (XGBoost's min_child_weight, a sum of the pairwise
// loss's hessians) a leaf needs: 8, not XGBoost's 1. A model from records
// must rank kernels it never saw. With 1, the model of two matmuls' 137
// candidates had 44% of its leaves under a weight of 2 and picked flux-tiny's
// candidates worse than chance (scripts/rank-transfer.py on BEAM's records:
// the best of its top 4 per kernel 1.85x the best, at random 1.75x; with 8,
// 1.53x). Online trees use 8 as well: with 1 for them, flux-tiny's cold RL
// searched slower (docs/notes/2026-12-cost-model-measurements.md, search rules 19).
#define LEAF_WEIGHT "8"

typedef uint64_t bst_ulong;
typedef void *DMatrixHandle, *BoosterHandle;
typedef struct {
  const char *(*last_error)(void);
  int (*set_global)(const char *);
  int (*dm_create)(const float *, bst_ulong, bst_ulong, float, DMatrixHandle *);
  int (*dm_set_float)(DMatrixHandle, const char *, const float *, bst_ulong);
  int (*dm_set_uint)(DMatrixHandle, const char *, const unsigned *, bst_ulong);
  int (*dm_free)(DMatrixHandle);
  int (*create)(const DMatrixHandle *, bst_ulong, BoosterHandle *);
  int (*free)(BoosterHandle);
  int (*set_param)(BoosterHandle, const char *, const char *);
  int (*update)(BoosterHandle, int, DMatrixHandle);
  int (*predict)(BoosterHandle, DMatrixHandle, int, unsigned, int, bst_ulong *, const float **);
  int (*save)(BoosterHandle, const char *, bst_ulong *, const char **);
  int (*load)(BoosterHandle, const void *, bst_ulong);
} Xgb;

struct CostModel {
  BoosterHandle b;
  const Xgb *x;
  char device[256];
  int rows, groups, rounds;
  uint64_t hash;            // of the XGBoost model's text: provenance says which model guided a search
};

// XGBoost's functions, loaded once per process (a read-only table after that)
static const Xgb *xgb(char *err, size_t n) {
  static Xgb x;
  static int state;  // 0 not tried, 1 loaded, -1 missing
  static char why[300];
  int unused;
  if (state == 0) {
    bool hide = fault_setting("no-xgboost", &unused) > 0;  // the test switch: as if it were not installed
    void *h = hide ? NULL : dlopen("libxgboost.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h && !hide) h = dlopen("libxgboost.so", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    struct { void **fn; const char *name; } syms[] = {
      {(void **)&x.last_error, "XGBGetLastError"}, {(void **)&x.set_global, "XGBSetGlobalConfig"},
      {(void **)&x.dm_create, "XGDMatrixCreateFromMat"}, {(void **)&x.dm_set_float, "XGDMatrixSetFloatInfo"},
      {(void **)&x.dm_set_uint, "XGDMatrixSetUIntInfo"}, {(void **)&x.dm_free, "XGDMatrixFree"},
      {(void **)&x.create, "XGBoosterCreate"}, {(void **)&x.free, "XGBoosterFree"}, {(void **)&x.set_param, "XGBoosterSetParam"},
      {(void **)&x.update, "XGBoosterUpdateOneIter"}, {(void **)&x.predict, "XGBoosterPredict"},
      {(void **)&x.save, "XGBoosterSaveModelToBuffer"}, {(void **)&x.load, "XGBoosterLoadModelFromBuffer"},
    };
    state = 1;
    if (!h) snprintf(why, sizeof why, "XGBoost is not installed (libxgboost.so.0: install libxgboost0)"), state = -1;
    for (size_t i = 0; state > 0 && i < sizeof syms / sizeof *syms; i++)
      if (!(*syms[i].fn = dlsym(h, syms[i].name)))
        snprintf(why, sizeof why, "libxgboost.so.0 has no %s (XGBoost 1.6 or later is needed)", syms[i].name), state = -1;
    if (state > 0) x.set_global("{\"verbosity\": 0}");
  }
  if (state < 0) return snprintf(err, n, "%s", why), NULL;
  return &x;
}

bool cost_model_available(char *err, size_t n) { return xgb(err, n) != NULL; }

static int xerr(const Xgb *x, const char *what, char *err, size_t n) {
  const char *e = x->last_error();
  const char *nl = e ? strchr(e, '\n') : NULL;
  snprintf(err, n, "XGBoost: %s: %.*s", what, e ? (nl ? (int)(nl - e) : 200) : 7, e ? e : "failed");
  return -1;
}

// XGBoost's threads, for training and prediction alike, on every booster from
// its creation: with more, OpenMP's idle worker spins after each prediction
// against the search's build children (1.6 s of CPU a flux-tiny RL search)
#define XGB_THREADS "1"

static int set_params(CostModel *m, uint64_t seed, char *err, size_t n) {
  char s[32];
  snprintf(s, sizeof s, "%llu", (unsigned long long)(seed % 2147483647u));
  const char *kv[][2] = {{"objective", "rank:pairwise"}, {"eta", "0.3"}, {"max_depth", "6"}, {"min_child_weight", LEAF_WEIGHT},
                         {"tree_method", "hist"}, {"nthread", XGB_THREADS}, {"seed", s}, {"eval_metric", "ndcg"}};
  for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
    if (m->x->set_param(m->b, kv[i][0], kv[i][1])) return xerr(m->x, "setting a parameter", err, n);
  return 0;
}

static uint64_t model_hash(CostModel *m) {
  bst_ulong len = 0;
  const char *buf = NULL;
  if (m->x->save(m->b, "{\"format\": \"json\"}", &len, &buf)) return 0;
  return fnv_bytes(FNV_SEED, buf, (size_t)len);
}

//
// Training data
//
void trainset_free(TrainSet *t) {
  free(t->x.v), free(t->y.v), free(t->group.v);
  memset(t, 0, sizeof *t);
}

// A kernel's candidates as one query group: the measured ones with features.
// Relevance (higher = faster) falls by 2 per doubling of the time from the
// group's best, down to 0; a candidate that failed to build or run is 0.
// A wrong output is not a speed and is left out. Returns rows added.
int trainset_add(TrainSet *t, const Cand *c, int n) {
  double best = INFINITY;
  int rows = 0;
  for (int i = 0; i < n; i++)
    if (c[i].has_feat && (c[i].status == CAND_OK || c[i].status == CAND_SLOW) && c[i].tmin > 0 && c[i].tmin < best) best = c[i].tmin;
  if (!isfinite(best)) return 0;
  for (int i = 0; i < n; i++) {
    bool timed = (c[i].status == CAND_OK || c[i].status == CAND_SLOW) && c[i].tmin > 0;
    if (!c[i].has_feat || !(timed || c[i].status == CAND_FAILED)) continue;
    float y = timed ? (float)fmax(0.0, 16.0 - 2.0 * log2(c[i].tmin / best)) : 0.0f;
    for (int f = 0; f < NFEATURES; f++) vec_push(t->x, c[i].feat[f]);
    vec_push(t->y, y);
    rows++;
  }
  if (rows < 2) {  // a group of one ranks nothing
    t->x.n -= rows * NFEATURES, t->y.n -= rows;
    return 0;
  }
  vec_push(t->group, (unsigned)rows);
  t->rows += rows;
  return rows;
}

// One file's or entry's device must be the set's (the first one read sets it).
static int same_device(TrainSet *t, const char *dev, const char *path, char *err, size_t n) {
  if (!dev) return snprintf(err, n, "%s: no device (not made by a search)", path), -1;
  if (!t->device[0]) snprintf(t->device, sizeof t->device, "%s", dev);
  else if (strcmp(t->device, dev))
    return snprintf(err, n, "%s: measured on \"%.120s\", but earlier files on \"%.120s\": a model is for one device (train one per device)", path,
                    dev, t->device), -1;
  return 0;
}

static int version_of(const RecordsHead *h, const char *path, char *err, size_t n) {
  if (!h->has_version) return snprintf(err, n, "%s: no feature_version (made before fluxcc recorded features: search again)", path), -1;
  if (h->feature_version != FEATURE_VERSION)
    return snprintf(err, n, "%s: features of version %g, this fluxcc computes version %d (search again)", path, h->feature_version,
                    FEATURE_VERSION), -1;
  return 0;
}

// A records.json (every kernel a group) or a cache entry (one group).
static int add_file(TrainSet *t, const char *path, const char *device, char *err, size_t n) {
  char e[700];
  cJSON *root = json_load(path, e, sizeof e);
  if (!root) return snprintf(err, n, "%s: %s", path, e), -1;
  int rc = 0;
  RecordsHead h;
  records_head(root, &h);
  if (h.kind == FILE_RECORDS) {
    cJSON_Delete(root);
    if (!(root = records_read(path, e, sizeof e))) return snprintf(err, n, "%s: %s", path, e), -1;
    records_head(root, &h);
    const char *dev = h.device;
    if (device && dev && strcmp(dev, device)) return cJSON_Delete(root), 0;  // another device's: not this model's
    bool checked = false;  // a fixed method's records have no candidates: no version or device to check
    for (int u = 0; u < h.nk; u++) {
      Tuned tu;
      RecordsKernel rk;
      const cJSON *k = records_kernel(root, u, &rk);
      if (rc || !rk.searched) continue;
      if (!checked && (version_of(&h, path, err, n) || same_device(t, dev, path, err, n))) {
        rc = -1;
        continue;
      }
      checked = true;
      if (tuned_from_json(k, &tu, e, sizeof e)) {
        snprintf(err, n, "%s: %s", path, e), rc = -1;
        continue;
      }
      trainset_add(t, tu.cands.v, tu.cands.n);
      free(tu.cands.v);
    }
    t->files += rc == 0;
  } else if (h.kind == FILE_CACHE_ENTRY) {
    Tuned tu;
    if (device && h.device && strcmp(h.device, device)) return cJSON_Delete(root), 0;
    if (version_of(&h, path, err, n) || same_device(t, h.device, path, err, n)) rc = -1;
    else if (cache_entry_read(root, NULL, &tu, e, sizeof e)) snprintf(err, n, "%s: %s", path, e), rc = -1;
    else trainset_add(t, tu.cands.v, tu.cands.n), free(tu.cands.v), t->files++;
  } else {
    snprintf(err, n, "%s: neither a records.json nor a tuning-cache entry", path);
    rc = -1;
  }
  cJSON_Delete(root);
  return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// A file, or a directory of cache entries (its *.json but model files, in
// name order: the same directory trains the same model). device: only its
// entries (NULL: all, which must agree). Entries of an older feature version
// in a directory are skipped and counted; a file given by name must be usable.
int trainset_read(TrainSet *t, const char *path, const char *device, char *err, size_t n) {
  DIR *d = opendir(path);
  if (!d) return add_file(t, path, device, err, n);
  VEC(char *) names = {0};
  for (struct dirent *e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    if (l > 5 && !strcmp(e->d_name + l - 5, ".json") && strncmp(e->d_name, "model-", 6)) {
      char *p = xcalloc(strlen(path) + l + 2, 1);
      sprintf(p, "%s/%s", path, e->d_name);
      vec_push(names, p);
    }
  }
  closedir(d);
  qsort(names.v, (size_t)names.n, sizeof *names.v, by_name);
  for (int i = 0; i < names.n; i++) {
    char e[1000];
    if (add_file(t, names.v[i], device, e, sizeof e)) t->skipped++;
    free(names.v[i]);
  }
  free(names.v);
  return 0;
}

//
// Models
//
// A model without trees: its booster is made by the first training (XGBoost
// takes the number of features from the matrix it is made with) or here for
// a model to be loaded (load: true).
static CostModel *model_new(const char *device, bool load, char *err, size_t n) {
  const Xgb *x = xgb(err, n);
  if (!x) return NULL;
  CostModel *m = xcalloc(1, sizeof *m);
  m->x = x;
  snprintf(m->device, sizeof m->device, "%s", device ? device : "");
  if (load && (x->create(NULL, 0, &m->b) || x->set_param(m->b, "nthread", XGB_THREADS))) {
    xerr(x, "creating a booster", err, n);
    cost_model_free(m);
    return NULL;
  }
  return m;
}

void cost_model_free(CostModel *m) {
  if (!m) return;
  if (m->b) m->x->free(m->b);
  free(m);
}

static DMatrixHandle matrix(const Xgb *x, const float *rows, int n, char *err, size_t en) {
  DMatrixHandle d = NULL;
  if (x->dm_create(rows, (bst_ulong)n, NFEATURES, NAN, &d)) return xerr(x, "making a matrix", err, en), NULL;
  return d;
}

// Rounds of boosting on t: the first trees of a new model, or more trees.
static int boost(CostModel *m, const TrainSet *t, int rounds, uint64_t seed, char *err, size_t n) {
  DMatrixHandle d = matrix(m->x, t->x.v, t->rows, err, n);
  if (!d) return -1;
  int rc = 0;
  if (m->x->dm_set_float(d, "label", t->y.v, (bst_ulong)t->rows) || m->x->dm_set_uint(d, "group", t->group.v, (bst_ulong)t->group.n))
    rc = xerr(m->x, "setting labels", err, n);
  if (rc == 0 && !m->b && m->x->create(&d, 1, &m->b)) rc = xerr(m->x, "creating a booster", err, n);
  if (rc == 0) rc = set_params(m, seed, err, n);
  // the booster must see this matrix to train on it (XGBoosterCreate's cache)
  for (int r = 0; rc == 0 && r < rounds; r++)
    if (m->x->update(m->b, m->rounds + r, d)) rc = xerr(m->x, "training", err, n);
  m->x->dm_free(d);
  if (rc == 0) m->rounds += rounds, m->rows += t->rows, m->groups += t->group.n, m->hash = model_hash(m);
  return rc;
}

CostModel *cost_model_train(const TrainSet *t, uint64_t seed, char *err, size_t n) {
  if (t->rows == 0 || t->group.n == 0)
    return snprintf(err, n, "no training data: no kernel with two or more measured candidates with features"), NULL;
  CostModel *m = model_new(t->device, false, err, n);
  if (m && boost(m, t, TRAIN_ROUNDS, seed, err, n)) cost_model_free(m), m = NULL;
  return m;
}

// Online: more trees fitted to a search's own measurements (one group),
// starting from what m predicts. A NULL m: a new model.
int cost_model_update(CostModel **m, const TrainSet *t, const char *device, uint64_t seed, char *err, size_t n) {
  if (t->rows == 0 || t->group.n == 0) return 0;
  if (!*m && !(*m = model_new(device, false, err, n))) return -1;
  return boost(*m, t, ONLINE_ROUNDS, seed, err, n);
}

// RL's refit: a copy of base (NULL: none) with more trees fitted to the
// earlier kernels' groups and this kernel's candidates c[0..n). *fit is
// replaced; on failure it is left NULL and err says why.
int cost_model_refit(CostModel **fit, CostModel *base, const TrainSet *earlier, const Cand *c, int n, const char *device, uint64_t seed,
                     char *err, size_t en) {
  TrainSet t = {.rows = earlier->rows};
  for (int i = 0; i < earlier->x.n; i++) vec_push(t.x, earlier->x.v[i]);
  for (int i = 0; i < earlier->y.n; i++) vec_push(t.y, earlier->y.v[i]);
  for (int i = 0; i < earlier->group.n; i++) vec_push(t.group, earlier->group.v[i]);
  trainset_add(&t, c, n);
  cost_model_free(*fit);
  *fit = NULL;
  int rc = 0;
  if (base && !(*fit = cost_model_clone(base, err, en))) rc = -1;
  if (rc == 0 && cost_model_update(fit, &t, device, seed, err, en)) cost_model_free(*fit), *fit = NULL, rc = -1;
  trainset_free(&t);
  return rc;
}

int cost_model_predict(CostModel *m, const float *rows, int nrows, double *score, char *err, size_t n) {
  if (nrows == 0) return 0;
  DMatrixHandle d = matrix(m->x, rows, nrows, err, n);
  if (!d) return -1;
  bst_ulong len = 0;
  const float *out = NULL;
  int rc = 0;
  if (m->x->predict(m->b, d, 0, 0, 0, &len, &out) || len != (bst_ulong)nrows) rc = xerr(m->x, "predicting", err, n);
  for (int i = 0; rc == 0 && i < nrows; i++) score[i] = out[i];
  m->x->dm_free(d);
  return rc;
}

// a copy (RL refits one per batch, the loaded model stays as it was)
CostModel *cost_model_clone(CostModel *m, char *err, size_t n) {
  bst_ulong len = 0;
  const char *buf = NULL;
  if (m->x->save(m->b, "{\"format\": \"json\"}", &len, &buf)) return xerr(m->x, "copying", err, n), NULL;
  char *text = xcalloc((size_t)len + 1, 1);
  memcpy(text, buf, (size_t)len);
  CostModel *c = model_new(m->device, true, err, n);
  if (c && c->x->load(c->b, text, len)) xerr(c->x, "copying", err, n), cost_model_free(c), c = NULL;
  free(text);
  if (c) c->rows = m->rows, c->groups = m->groups, c->rounds = m->rounds, c->hash = m->hash;
  return c;
}

const char *cost_model_describe(const CostModel *m, char *buf, size_t n) {
  snprintf(buf, n, "%016llx (%d trees, trained on %d candidates of %d kernels)", (unsigned long long)m->hash, m->rounds, m->rows, m->groups);
  return buf;
}
uint64_t cost_model_hash(const CostModel *m) { return m->hash; }

int cost_model_save(CostModel *m, const char *path, char *err, size_t n) {
  bst_ulong len = 0;
  const char *buf = NULL;
  if (m->x->save(m->b, "{\"format\": \"json\"}", &len, &buf)) return xerr(m->x, "saving", err, n);
  char *text = xcalloc((size_t)len + 1, 1);
  memcpy(text, buf, (size_t)len);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "fluxcc_cost_model", MODEL_FORMAT);
  cJSON_AddNumberToObject(j, "feature_version", FEATURE_VERSION);
  cJSON *names = cJSON_AddArrayToObject(j, "features");
  for (int i = 0; i < NFEATURES; i++) cJSON_AddItemToArray(names, cJSON_CreateString(feature_name[i]));
  cJSON_AddStringToObject(j, "device", m->device);
  cJSON_AddNumberToObject(j, "rows", m->rows);
  cJSON_AddNumberToObject(j, "groups", m->groups);  // kernels
  cJSON_AddNumberToObject(j, "trees", m->rounds);
  cJSON_AddStringToObject(j, "xgboost", text);
  free(text);
  char *out = cJSON_Print(j);
  cJSON_Delete(j);
  int rc = write_atomic(path, out, strlen(out), err, n);
  free(out);
  return rc;
}

// A model file back; device: the device it must be for (NULL: any). NULL and why.
CostModel *cost_model_load(const char *path, const char *device, char *err, size_t n) {
  char e[700];
  cJSON *j = json_load(path, e, sizeof e);
  if (!j) return snprintf(err, n, "%s", e), NULL;
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(j, "fluxcc_cost_model"), *ver = cJSON_GetObjectItemCaseSensitive(j, "feature_version");
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows"), *ks = cJSON_GetObjectItemCaseSensitive(j, "groups");
  const cJSON *trees = cJSON_GetObjectItemCaseSensitive(j, "trees");
  const char *dev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "device"));
  const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "xgboost"));
  CostModel *m = NULL;
  if (!cJSON_IsNumber(fmt) || fmt->valuedouble != MODEL_FORMAT || !dev || !text || !cJSON_IsNumber(rows) || !cJSON_IsNumber(ks) ||
      !cJSON_IsNumber(trees))
    snprintf(err, n, "not a fluxcc cost model (format %d: fluxcc_cost_model, feature_version, device, rows, groups, trees, xgboost)",
             MODEL_FORMAT);
  else if (!cJSON_IsNumber(ver) || ver->valuedouble != FEATURE_VERSION)
    snprintf(err, n, "a model of feature version %g; this fluxcc computes version %d (train it again: fluxcc train)",
             cJSON_IsNumber(ver) ? ver->valuedouble : -1, FEATURE_VERSION);
  else if (cost_model_check(j, err, n)) {
  }  // said: a hostile model never reaches XGBoost
  else if (device && strcmp(dev, device))
    snprintf(err, n, "a model of device \"%.100s\", not of this search's \"%.100s\"", dev, device);
  else if ((m = model_new(dev, true, err, n)) && m->x->load(m->b, text, strlen(text))) {
    xerr(m->x, "loading the model", err, n);
    cost_model_free(m), m = NULL;
  }
  if (m) {
    m->rows = (int)rows->valuedouble, m->groups = (int)ks->valuedouble;  // whole and in range (cost_model_check)
    m->rounds = (int)trees->valuedouble, m->hash = model_hash(m);
    float probe[NFEATURES] = {0};  // a model that loads but predicts for another width of input is refused here, not mid-search
    double s;
    if (cost_model_predict(m, probe, 1, &s, e, sizeof e)) snprintf(err, n, "%s", e), cost_model_free(m), m = NULL;
  }
  cJSON_Delete(j);
  return m;
}

// The tuning cache's model for a device: DIR/model-<hash of device>-f<version>.json
void cost_model_cache_path(const char *dir, const char *device, char *path, size_t n) {
  snprintf(path, n, "%s/model-%016llx-f%d.json", dir, (unsigned long long)fnv_bytes(FNV_SEED, device, strlen(device)), FEATURE_VERSION);
}

// fluxcc train INPUT... -o MODEL: every input read (a bad one stops it, named),
// one model trained, written atomically.
int cmd_train(const char *const *inputs, int n, const char *out, uint64_t seed, bool quiet) {
  char err[1200];
  if (!cost_model_available(err, sizeof err)) {
    fprintf(stderr, "fluxcc: error: train: %s\n", err);
    return 2;
  }
  TrainSet t = {0};
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++)
    if (trainset_read(&t, inputs[i], NULL, err, sizeof err)) fprintf(stderr, "fluxcc: error: train: %s\n", err), rc = 2;
  CostModel *m = NULL;
  if (rc == 0 && !(m = cost_model_train(&t, seed, err, sizeof err))) fprintf(stderr, "fluxcc: error: train: %s%s\n", err,
                                                                          t.skipped ? " (cache entries skipped: see fluxcc train's notes)" : ""), rc = 2;
  char own[4200];
  if (rc == 0 && !out) cost_model_cache_path(inputs[0], t.device, own, sizeof own), out = own;  // a cache directory's own model
  if (rc == 0 && cost_model_save(m, out, err, sizeof err)) fprintf(stderr, "fluxcc: error: train: %s\n", err), rc = 2;
  char d[160];
  if (rc == 0 && !quiet)
    printf("trained on %d candidates of %d kernels (%d files%s), measured on %s: wrote %s, model %s\n", t.rows, t.group.n, t.files,
           t.skipped ? ", some cache entries skipped: older features or unreadable" : "", t.device, out, cost_model_describe(m, d, sizeof d));
  cost_model_free(m);
  trainset_free(&t);
  return rc;
}
