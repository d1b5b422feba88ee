// cache.c — the tuning cache: one JSON file per (kernel, device, toolchain,
// settings, rules), written atomically; and replay: the opts of a
// records.json applied with no device.
#include "search.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Bump when the actions, the validation or the scoring change: cache entries
// made under other rules are then not used.
#define SEARCH_RULES 21  // 6: TC pads unaligned m, n, k; 7: VEC; 8: checked runs first, timed fastest first; 9: RVEC, HC starts BEAM;
                         // 10: OpenCL launches timed with the CPU caches flushed; 11: RL's forward budget;
                         // 12: a checked run is called slow only beyond FIRST_LAUNCH_US more;
                         // 13: RL expands HC's kernel from the start; a build over --build-limit is refused;
                         // 14: RL times the kernels chosen for earlier kernels of the same shape in its first batch;
                         // 15: RL stops a kernel with peers after RL_PATIENCE_PEERED batches without a gain;
                         // 16: a candidate whose text would build over --build-limit is refused unbuilt;
                         // 17: sums render in one order, so two paths to one kernel are one candidate;
                         // 18: RL's batch before its patience ends times HC's untimed children first;
                         // 19: the cost model's leaves need a weight of 8 (costmodel.c LEAF_WEIGHT);
                         // 20: BEAM and MCTS start from RAW, HC and TC; the finals decide (--from raw, in the key: neither);
                         // 21: HC on a CPU takes 16-lane vectors first; TC takes fp8 weights (both change the starts)

char *cache_key(Search *S, const Method *method, bool guided) {
  Job j = {0};
  kernel_copy(&j.k, &S->base);
  Faults f = S->every;  // the key's source is the kernel's own
  S->every = (Faults){0};
  render_job(S, &j);
  S->every = f;
  const SearchOpts *so = S->so;
  Str k = {0};
  // guided or blind, not which model: RL's results stay cached when the cache's model is retrained
  char guide[64] = "blind";
  if (guided) snprintf(guide, sizeof guide, "guided measure %d", so->measure);
  str_printf(&k, "fluxcc search rules %d\nmethod %s beam %d budget %d runs %d build limit %d tf32 %d seed %llu fault %d%s%s %s%s\ndevice %s\ntoolchain %s\n%s",
             SEARCH_RULES, method->name, so->beam, so->budget, so->runs, so->build_limit_s, so->tf32, (unsigned long long)so->seed, f.wrong, f.no_barrier || f.swap_args ? " no-barrier/swap-args" : f.lucky ? " lucky" : f.oob ? " oob" : "", S->fake_time ? " fake-time" : "", guide,
             so->from_raw ? " from raw" : "", S->info->device,
             S->info->toolchain, j.src);
  kernel_free(&j.k);
  free(j.src);
  return k.s;
}

static void cache_path(const char *dir, const char *key, char *path, size_t n) {
  snprintf(path, n, "%s/%016llx.json", dir, (unsigned long long)fnv_bytes(FNV_SEED, key, strlen(key)));
}

// An opt read back from a cache entry or records applied to k, as opt_apply
// does; tf32 tensor cores also need this compile's --tf32
int apply_recorded(Kernel *k, Opt o, bool tf32, char *why, size_t n) {
  if (o.op == OPT_TC && o.amount && !tf32) return snprintf(why, n, "tf32 tensor cores, but this compile has no --tf32"), -1;
  return opt_apply(k, o, why, n);
}

// An entry is used only when it is one fluxcc could have written for this
// kernel: readable, its key this one, every field in range, its opts legal
// here. Otherwise one line says why, and the kernel is searched again (and
// the entry overwritten).
bool cache_load(Search *S, const char *dir, const char *key, Tuned *t, bool say) {
  char path[4200], err[700] = "";
  cache_path(dir, key, path, sizeof path);
  if (access(path, F_OK)) return false;  // not cached: nothing to say
  cJSON *j = json_load(path, err, sizeof err);
  bool ok = j && cache_entry_read(j, key, t, err, sizeof err) == 0;
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

void cache_store(Search *S, const char *key) {
  char path[4200], err[512];
  const char *dir = S->so->cache_dir;
  if (make_dirs(dir, err, sizeof err)) {
    fprintf(stderr, "fluxcc: warning: the cache directory: %s\n", err);
    return;
  }
  cache_path(dir, key, path, sizeof path);
  cJSON *j = cache_entry(key, S->info->device, S->t, &S->base);
  char *text = cJSON_Print(j);
  cJSON_Delete(j);
  if (write_atomic(path, text, strlen(text), err, sizeof err)) fprintf(stderr, "fluxcc: warning: %s (the search result is not cached)\n", err);
  free(text);
}

//
// Replay: the opts of a records.json, no device
//
int replay(Ctx *c, Schedule *s, const SearchOpts *so, SearchInfo *info) {
  (void)c;
  char err[700];
  info->replayed = so->records;
  cJSON *root = records_read(so->records, err, sizeof err);
  if (!root) {
    fprintf(stderr, "fluxcc: error: --records %s: %s\n", so->records, err);
    return 2;
  }
  RecordsHead h;
  records_head(root, &h);   // (checked: method and target are there)
  int rc = 0;
  if (strcmp(h.method, so->method->name) || strcmp(h.target, so->target->name)) {
    fprintf(stderr, "fluxcc: error: --records %s: made by --opt %s --target %s, not --opt %s --target %s\n", so->records, h.method,
            h.target, so->method->name, so->target->name);
    rc = 2;
  } else if (h.tile_n && h.tile_n != s->tile_n) {  // (records older than tile_n have none)
    fprintf(stderr, "fluxcc: error: --records %s: made on a schedule with --tile-n %d (GEMM prologues and attention fused "
            "or not), this compile's is %d: add --tile-n %d\n", so->records, h.tile_n, s->tile_n, h.tile_n);
    rc = 2;
  } else if (!h.device || !h.toolchain) {
    fprintf(stderr, "fluxcc: error: --records %s: no device or toolchain: it was not made by a search\n", so->records);
    rc = 2;
  } else if (h.nk != s->k.n) {
    fprintf(stderr, "fluxcc: error: --records %s: %d kernels, but the model has %d: records of another model?\n", so->records,
            h.nk, s->k.n);
    rc = 2;
  }
  if (rc == 0) {
    snprintf(info->device, sizeof info->device, "%s", h.device);
    snprintf(info->toolchain, sizeof info->toolchain, "%s", h.toolchain);
    s->tuned = xcalloc((size_t)s->k.n + 1, sizeof *s->tuned);
  }
  for (int u = 0; rc == 0 && u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    RecordsKernel rk;
    const cJSON *j = records_kernel(root, u, &rk);
    const char *before = rk.name_before_opts;
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

