// report.c — `fluxcc report DIR`: the per-kernel table of an emitted
// project, from DIR/records.json (what was compiled, how, and how much work).
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0;
  *n = 0;
  for (;;) {
    if (*n + 65536 > cap) cap = 2 * cap + 65536, buf = xrealloc(buf, cap);
    size_t k = fread(buf + *n, 1, cap - *n - 1, f);
    *n += k;
    if (k == 0) break;
  }
  fclose(f);
  buf[*n] = 0;
  return buf;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(x) ? x->valuestring : "?";
}

int report(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/records.json", dir);
  size_t n;
  char *text = slurp(path, &n);
  if (!text) {
    fprintf(stderr, "fluxcc: error: %s: %s (is %s a project fluxcc wrote?)\n", path, strerror(errno), dir);
    return 2;
  }
  cJSON *root = cJSON_ParseWithLength(text, n);
  free(text);
  const cJSON *ks = root ? cJSON_GetObjectItemCaseSensitive(root, "kernels") : NULL;
  if (!cJSON_IsArray(ks)) {
    fprintf(stderr, "fluxcc: error: %s: not a records file (no \"kernels\" array)\n", path);
    cJSON_Delete(root);
    return 2;
  }
  printf("%s: %s, method %s, %d launches, arena %.1f MiB\n", str(root, "model"), str(root, "target"), str(root, "method"),
         (int)num(root, "launches"), num(root, "arena_bytes") / 1048576.0);
  printf("%4s  %-36s %-34s %8s %12s %12s  %s\n", "#", "kernel", "before opts", "launches", "GFLOP/fwd", "MB/fwd", "opts");
  double tf = 0, tb = 0;
  int i = 0;
  const cJSON *k;
  cJSON_ArrayForEach(k, ks) {
    const cJSON *sites = cJSON_GetObjectItemCaseSensitive(k, "launch_sites");
    int launches = cJSON_IsArray(sites) ? cJSON_GetArraySize(sites) : 0;
    double f = num(k, "flops") * launches, b = num(k, "bytes") * launches;
    tf += f, tb += b;
    char opts[512] = "";
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(k, "opts")) {
      size_t len = strlen(opts);
      snprintf(opts + len, sizeof opts - len, "%s%s(%d,%d)", len ? " " : "", str(op, "op"), (int)num(op, "axis"), (int)num(op, "amount"));
    }
    printf("%4d  %-36s %-34s %8d %12.3f %12.1f  %s\n", i++, str(k, "name"), str(k, "name_before_opts"), launches, f / 1e9, b / 1e6,
           opts[0] ? opts : "-");
  }
  printf("%4s  %-36s %-34s %8d %12.3f %12.1f\n", "", "total", "", (int)num(root, "launches"), tf / 1e9, tb / 1e6);
  printf("(no measured times: records of searches come with BEAM/MCTS)\n");
  cJSON_Delete(root);
  return 0;
}
