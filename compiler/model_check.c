// model_check.c — a cost-model file checked before XGBoost sees it.
//
// XGBoosterLoadModelFromBuffer trusts the JSON it is given: a child index
// outside its tree or a cycle makes prediction read out of bounds or loop
// forever, num_trees past the trees array or a tree_info entry past the
// outputs crashes it. A model comes from a file anyone could have edited (and
// --model auto reads the shared tuning cache's), so every field XGBoost reads
// is checked here against what `fluxcc train` writes: one output, rank:pairwise,
// gbtree, numerical splits on fluxcc's NFEATURES features, trees whose nodes
// are each reached once from the root. The header's numbers are checked too
// (they are printed). The first problem is said, naming the key, tree and node.
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TREES 1000000      // 60 from fluxcc train, 12 more per online refit
#define MAX_NODES (1 << 20)    // max_depth 6 makes at most 127
#define ROOT_PARENT 2147483647 // XGBoost's root: kInvalidNodeId with the left-child bit cleared

typedef struct {
  char *err;
  size_t n;
  bool bad;
} Check;

static bool fail(Check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Check *c, const char *fmt, ...) {
  if (c->bad) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->n, fmt, ap);
  va_end(ap);
  c->bad = true;
  return false;
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

// a value as text for a message: short, and no control bytes
static const char *show(const cJSON *v, char *buf, size_t n) {
  if (!v) return "missing";
  if (cJSON_IsNumber(v)) snprintf(buf, n, "%.17g", v->valuedouble);
  else if (cJSON_IsString(v)) {
    size_t o = 0;
    buf[o++] = '"';
    for (const char *s = v->valuestring; *s && o + 6 < n; s++) o += (size_t)snprintf(buf + o, n - o, (unsigned char)*s < 32 || *s == 127 ? "\\x%02x" : "%c", (unsigned char)*s);
    snprintf(buf + o, n - o, "%s\"", o + 6 >= n ? "..." : "");
  } else snprintf(buf, n, "%s", cJSON_IsArray(v) ? "an array" : cJSON_IsObject(v) ? "an object" : cJSON_IsBool(v) ? "a boolean" : "null");
  return buf;
}

// a whole number in [lo, hi]
static bool whole(Check *c, const cJSON *v, double lo, double hi, const char *what, long long *out) {
  char b[80];
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
    return fail(c, "%s = %s is not a whole number from %.0f to %.0f", what, show(v, b, sizeof b), lo, hi);
  return *out = (long long)v->valuedouble, true;
}

// XGBoost's parameters are strings ("60"): decimal digits only, so that
// dmlc's reading of them is ours, in [lo, hi]
static bool param(Check *c, const cJSON *o, const char *key, long lo, long hi, const char *where, long *out) {
  const cJSON *v = get(o, key);
  const char *s = cJSON_GetStringValue(v);
  char b[80];
  long x = 0;
  bool ok = s && *s && strlen(s) <= 9 && strspn(s, "0123456789") == strlen(s);
  if (ok) x = strtol(s, NULL, 10);
  if (!ok || x < lo || x > hi) {
    if (lo == hi) return fail(c, "xgboost: %s.%s = %s, fluxcc's models have \"%ld\"", where, key, show(v, b, sizeof b), lo);
    return fail(c, "xgboost: %s.%s = %s is not a whole number from %ld to %ld (as a string)", where, key, show(v, b, sizeof b), lo, hi);
  }
  if (out) *out = x;
  return true;
}

// a float parameter ("5E-1"): all of the string read, finite
static bool param_float(Check *c, const cJSON *o, const char *key, const char *where) {
  const cJSON *v = get(o, key);
  const char *s = cJSON_GetStringValue(v);
  char *end = NULL, b[80];
  double x = s && *s && !strchr(" \t\n", *s) ? strtod(s, &end) : NAN;
  if (!end || *end || !isfinite(x) || fabs(x) > FLT_MAX) return fail(c, "xgboost: %s.%s = %s is not a finite number (as a string)", where, key, show(v, b, sizeof b));
  return true;
}

// An object with a key twice is read by cJSON (the first) and XGBoost (the
// last) differently: refused anywhere in the model. fluxcc's objects have at
// most 17 keys: more than 32 is refused, which keeps the pairwise look cheap.
static bool no_twice(Check *c, const cJSON *j) {
  int keys = 0;
  for (const cJSON *a = j->child; a && !c->bad; a = a->next) {
    if (cJSON_IsObject(j)) {
      if (++keys > 32) return fail(c, "xgboost: an object with more than 32 keys (\"%.60s\"...): fluxcc's models have at most 17", j->child->string);
      for (const cJSON *b = a->next; b; b = b->next)
        if (!strcmp(a->string, b->string)) return fail(c, "xgboost: the key \"%.60s\" twice in one object", a->string);
    }
    if (a->child && !no_twice(c, a)) return false;
  }
  return !c->bad;
}

// a tree's array of num_nodes numbers
static const cJSON *nodes_array(Check *c, const cJSON *t, int ti, const char *key, long nodes) {
  const cJSON *a = get(t, key);
  char b[80];
  if (!cJSON_IsArray(a)) return fail(c, "xgboost: trees[%d].%s is %s, not an array", ti, key, show(a, b, sizeof b)), NULL;
  int len = cJSON_GetArraySize(a);
  if (len != nodes) return fail(c, "xgboost: trees[%d].%s has %d entries, but tree_param.num_nodes is %ld", ti, key, len, nodes), NULL;
  return a;
}

// the values of a tree's array as whole numbers in [lo, hi] into v, or finite floats (whole: false)
static bool node_values(Check *c, const cJSON *t, int ti, const char *key, long nodes, bool isint, double lo, double hi, double *v) {
  const cJSON *a = nodes_array(c, t, ti, key, nodes), *e;
  if (!a) return false;
  int i = 0;
  char b[80];
  cJSON_ArrayForEach(e, a) {
    bool ok = cJSON_IsNumber(e) && isfinite(e->valuedouble) && fabs(e->valuedouble) <= FLT_MAX;
    if (ok && isint) ok = e->valuedouble == floor(e->valuedouble) && e->valuedouble >= lo && e->valuedouble <= hi;
    if (!ok) {
      if (isint && lo == hi) return fail(c, "xgboost: trees[%d].%s[%d] = %s, fluxcc's models have only %.0f there", ti, key, i, show(e, b, sizeof b), lo);
      if (isint) return fail(c, "xgboost: trees[%d].%s[%d] = %s is not a whole number from %.0f to %.0f", ti, key, i, show(e, b, sizeof b), lo, hi);
      return fail(c, "xgboost: trees[%d].%s[%d] = %s is not a finite float", ti, key, i, show(e, b, sizeof b));
    }
    if (v) v[i] = e->valuedouble;
    i++;
  }
  return true;
}

// One tree: its parameters, every array num_nodes long, and its shape: each
// node reached exactly once from the root (no cycle, no node with two
// parents, none left over), parents[] the inverse of the children.
static bool check_tree(Check *c, const cJSON *t, int ti) {
  char b[80];
  char where[40];
  snprintf(where, sizeof where, "trees[%d].tree_param", ti);
  if (!cJSON_IsObject(t)) return fail(c, "xgboost: trees[%d] is not an object", ti);
  const cJSON *id = get(t, "id");  // where XGBoost puts the tree: its place here
  if (!cJSON_IsNumber(id) || id->valuedouble != ti) return fail(c, "xgboost: trees[%d].id = %s, not the tree's place (%d)", ti, show(id, b, sizeof b), ti);
  const cJSON *tp = get(t, "tree_param");
  if (!cJSON_IsObject(tp)) return fail(c, "xgboost: %s is %s, not an object", where, show(tp, b, sizeof b));
  long nodes;
  if (!param(c, tp, "num_nodes", 1, MAX_NODES, where, &nodes) || !param(c, tp, "num_feature", NFEATURES, NFEATURES, where, NULL) ||
      !param(c, tp, "num_deleted", 0, 0, where, NULL) || !param(c, tp, "size_leaf_vector", 0, 0, where, NULL))
    return false;
  double *left = xcalloc((size_t)nodes, sizeof(double) * 4), *right = left + nodes, *parent = right + nodes, *feat = parent + nodes;
  bool ok = node_values(c, t, ti, "left_children", nodes, true, -1, INT32_MAX, left) &&
            node_values(c, t, ti, "right_children", nodes, true, -1, INT32_MAX, right) &&
            node_values(c, t, ti, "parents", nodes, true, 0, INT32_MAX, parent) &&
            node_values(c, t, ti, "split_indices", nodes, true, 0, INT32_MAX, feat) &&
            node_values(c, t, ti, "split_conditions", nodes, false, 0, 0, NULL) &&
            node_values(c, t, ti, "default_left", nodes, true, 0, 1, NULL) &&
            node_values(c, t, ti, "split_type", nodes, true, 0, 0 /* numerical splits only: fluxcc's features are numbers */, NULL) &&
            node_values(c, t, ti, "base_weights", nodes, false, 0, 0, NULL) &&
            node_values(c, t, ti, "loss_changes", nodes, false, 0, 0, NULL) &&
            node_values(c, t, ti, "sum_hessian", nodes, false, 0, 0, NULL);
  static const char *const cats[] = {"categories", "categories_nodes", "categories_segments", "categories_sizes"};
  for (int k = 0; ok && k < 4; k++) {
    const cJSON *a = get(t, cats[k]);
    if (a && (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 0))
      ok = fail(c, "xgboost: trees[%d].%s is not an empty array (fluxcc's models have no categorical splits)", ti, cats[k]);
  }
  char *seen = xcalloc((size_t)nodes, 1);
  int *queue = xcalloc((size_t)nodes, sizeof *queue), head = 0, tail = 0;
  if (ok && parent[0] != ROOT_PARENT) ok = fail(c, "xgboost: trees[%d].parents[0] = %.0f, the root's is %d", ti, parent[0], ROOT_PARENT);
  if (ok) seen[0] = 1, queue[tail++] = 0;
  while (ok && head < tail) {
    int v = queue[head++];
    if ((left[v] < 0) != (right[v] < 0)) {
      ok = fail(c, "xgboost: trees[%d] node %d has a %s child but no %s one", ti, v, left[v] < 0 ? "right" : "left", left[v] < 0 ? "left" : "right");
      break;
    }
    if (feat[v] >= NFEATURES) {
      ok = fail(c, "xgboost: trees[%d].split_indices[%d] = %.0f is not one of fluxcc's %d features", ti, v, feat[v], NFEATURES);
      break;
    }
    for (int s = 0; ok && s < 2 && left[v] >= 0; s++) {
      const char *key = s ? "right_children" : "left_children";
      double ch = s ? right[v] : left[v];
      if (ch >= nodes) ok = fail(c, "xgboost: trees[%d].%s[%d] = %.0f is outside the tree's %ld nodes", ti, key, v, ch, nodes);
      else if (ch == 0 || seen[(int)ch])
        ok = fail(c, "xgboost: trees[%d].%s[%d] = %.0f: node %.0f is reached twice from the root (a cycle, or two parents)", ti, key, v, ch, ch);
      else if (parent[(int)ch] != v)
        ok = fail(c, "xgboost: trees[%d].parents[%.0f] = %.0f, but node %d is its parent", ti, ch, parent[(int)ch], v);
      else seen[(int)ch] = 1, queue[tail++] = (int)ch;
    }
  }
  if (ok && tail != nodes) {
    int v = 0;
    while (seen[v]) v++;
    ok = fail(c, "xgboost: trees[%d] node %d is not reached from the root (%d of its %ld nodes are)", ti, v, tail, nodes);
  }
  free(seen), free(queue), free(left);
  return ok;
}

// The XGBoost model (the "xgboost" string): the learner's parameters, the
// objective, the booster, every tree.
static bool check_xgboost(Check *c, const char *text, long long trees_said) {
  char e[300], b[80];
  cJSON *x = json_parse(text, strlen(text), e, sizeof e);
  if (!x) return fail(c, "xgboost: %s", e);
  const cJSON *l = get(x, "learner"), *mp, *obj, *gb, *m, *gp, *info, *trees, *v;
  long ntrees;
  if (!no_twice(c, x)) goto out;
  if (!cJSON_IsObject(l)) {
    fail(c, "xgboost: learner is %s, not an object", show(l, b, sizeof b));
    goto out;
  }
  v = get(x, "version");
  int vi = 0;
  long long unused;
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3) {
    fail(c, "xgboost: version is %s, not XGBoost's [major, minor, patch]", show(v, b, sizeof b));
    goto out;
  }
  for (const cJSON *e = v->child; e; e = e->next, vi++) {
    char what[40];
    snprintf(what, sizeof what, "xgboost: version[%d]", vi);
    if (!whole(c, e, 0, 1000, what, &unused)) goto out;
  }
  const cJSON *names = get(l, "feature_names"), *types = get(l, "feature_types"), *at = get(l, "attributes");
  if ((names && (!cJSON_IsArray(names) || cJSON_GetArraySize(names))) || (types && (!cJSON_IsArray(types) || cJSON_GetArraySize(types)))) {
    fail(c, "xgboost: learner.feature_names and feature_types are not empty arrays (fluxcc's models name no features there)");
    goto out;
  }
  if (at && !cJSON_IsObject(at)) {
    fail(c, "xgboost: learner.attributes is %s, not an object", show(at, b, sizeof b));
    goto out;
  }
  for (const cJSON *a = at ? at->child : NULL; a; a = a->next)
    if (!cJSON_IsString(a)) {
      fail(c, "xgboost: learner.attributes.%.60s is %s, not a string", a->string, show(a, b, sizeof b));
      goto out;
    }
  mp = get(l, "learner_model_param");
  if (!cJSON_IsObject(mp)) {
    fail(c, "xgboost: learner.learner_model_param is %s, not an object", show(mp, b, sizeof b));
    goto out;
  }
  if (!param_float(c, mp, "base_score", "learner.learner_model_param") ||
      !param(c, mp, "num_class", 0, 0, "learner.learner_model_param", NULL) ||
      !param(c, mp, "num_feature", NFEATURES, NFEATURES, "learner.learner_model_param", NULL) ||
      (get(mp, "num_target") && !param(c, mp, "num_target", 1, 1, "learner.learner_model_param", NULL)) ||
      (get(mp, "boost_from_average") && !param(c, mp, "boost_from_average", 0, 1, "learner.learner_model_param", NULL)))
    goto out;
  obj = get(l, "objective");
  if (!cJSON_IsObject(obj) || !cJSON_IsString(get(obj, "name")) || strcmp(get(obj, "name")->valuestring, "rank:pairwise")) {
    fail(c, "xgboost: learner.objective.name is %s, fluxcc's models are \"rank:pairwise\"", show(cJSON_IsObject(obj) ? get(obj, "name") : obj, b, sizeof b));
    goto out;
  }
  // pairs per sample: a refit trains with the loaded objective's value (1 from fluxcc train)
  for (const cJSON *p = obj->child; p; p = p->next)
    if (cJSON_IsObject(p) && ((get(p, "num_pairsample") && !param(c, p, "num_pairsample", 1, 1, "learner.objective.lambda_rank_param", NULL)) ||
                              (get(p, "lambdarank_num_pair_per_sample") &&
                               !param(c, p, "lambdarank_num_pair_per_sample", 1, 64, "learner.objective.lambdarank_param", NULL))))
      goto out;
  gb = get(l, "gradient_booster");
  if (!cJSON_IsObject(gb) || !cJSON_IsString(get(gb, "name")) || strcmp(get(gb, "name")->valuestring, "gbtree")) {
    fail(c, "xgboost: learner.gradient_booster.name is %s, fluxcc's models are \"gbtree\"", show(cJSON_IsObject(gb) ? get(gb, "name") : gb, b, sizeof b));
    goto out;
  }
  m = get(gb, "model");
  gp = get(m, "gbtree_model_param");
  if (!cJSON_IsObject(m) || !cJSON_IsObject(gp)) {
    fail(c, "xgboost: learner.gradient_booster.model.gbtree_model_param is %s, not an object", show(gp, b, sizeof b));
    goto out;
  }
  const char *gw = "gbtree_model_param";
  if (!param(c, gp, "num_trees", 1, MAX_TREES, gw, &ntrees) || !param(c, gp, "num_parallel_tree", 1, 1, gw, NULL) ||
      (get(gp, "size_leaf_vector") && !param(c, gp, "size_leaf_vector", 0, 0, gw, NULL)))
    goto out;
  if (ntrees != trees_said) {
    fail(c, "xgboost: gbtree_model_param.num_trees = %ld, but the header's trees = %lld", ntrees, trees_said);
    goto out;
  }
  trees = get(m, "trees"), info = get(m, "tree_info");
  if (!cJSON_IsArray(trees) || cJSON_GetArraySize(trees) != ntrees) {
    fail(c, "xgboost: trees has %d entries, but gbtree_model_param.num_trees is %ld", cJSON_IsArray(trees) ? cJSON_GetArraySize(trees) : 0, ntrees);
    goto out;
  }
  if (!cJSON_IsArray(info) || cJSON_GetArraySize(info) != ntrees) {
    fail(c, "xgboost: tree_info has %d entries, but gbtree_model_param.num_trees is %ld", cJSON_IsArray(info) ? cJSON_GetArraySize(info) : 0, ntrees);
    goto out;
  }
  int i = 0;
  cJSON_ArrayForEach(v, info) {  // the output each tree adds to: the one output
    if (!cJSON_IsNumber(v) || v->valuedouble != 0) {
      fail(c, "xgboost: tree_info[%d] = %s, but the model has one output (0)", i, show(v, b, sizeof b));
      goto out;
    }
    i++;
  }
  i = 0;
  cJSON_ArrayForEach(v, trees) if (!check_tree(c, v, i++)) goto out;
out:
  cJSON_Delete(x);
  return !c->bad;
}

// The whole file: header (the caller has checked the format, feature version
// and that device and xgboost are strings) and the XGBoost model. 0, or -1 and why.
int cost_model_check(const cJSON *j, char *err, size_t n) {
  Check c = {err, n, false};
  long long rows, groups, trees;
  char b[80];
  if (!whole(&c, get(j, "rows"), 0, 1e9, "rows", &rows) || !whole(&c, get(j, "groups"), 0, 1e9, "groups", &groups) ||
      !whole(&c, get(j, "trees"), 1, MAX_TREES, "trees", &trees))
    return -1;
  if (groups > rows) return fail(&c, "groups = %lld, more kernels than the rows = %lld they are made of", groups, rows), -1;
  const char *dev = cJSON_GetStringValue(get(j, "device"));
  for (const char *s = dev; *s; s++)
    if ((unsigned char)*s < 32 || *s == 127) return fail(&c, "device = %s holds a control byte", show(get(j, "device"), b, sizeof b)), -1;
  const cJSON *names = get(j, "features");
  if (!cJSON_IsArray(names) || cJSON_GetArraySize(names) != NFEATURES)
    return fail(&c, "features is not an array of this fluxcc's %d feature names", NFEATURES), -1;
  int i = 0;
  const cJSON *f;
  cJSON_ArrayForEach(f, names) {
    if (!cJSON_IsString(f) || strcmp(f->valuestring, feature_name[i]))
      return fail(&c, "features[%d] = %s, this fluxcc's feature %d is \"%s\"", i, show(f, b, sizeof b), i, feature_name[i]), -1;
    i++;
  }
  return check_xgboost(&c, cJSON_GetStringValue(get(j, "xgboost")), trees) ? 0 : -1;
}
