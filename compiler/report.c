// report.c — `fluxcc report DIR`: the per-kernel table of an emitted
// project, from DIR/records.json (what was compiled, how, and how much work).
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double num(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(x) ? x->valuestring : "?";
}

// DIR/records.json parsed, or NULL (said why on stderr)
cJSON *records_load(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/records.json", dir);
  size_t n;
  char why[256];
  int fd = open_regular(path, (int64_t)1 << 30, NULL, why, sizeof why);  // says what a FIFO or directory is
  if (fd >= 0) close(fd);
  char *text = fd >= 0 ? read_text(path, &n) : NULL;
  if (!text) {
    fprintf(stderr, "fluxcc: error: %s: %s (is %s a project fluxcc wrote?)\n", path, fd < 0 ? why : strerror(errno), dir);
    return NULL;
  }
  cJSON *root = cJSON_ParseWithLength(text, n);
  free(text);
  if (!cJSON_IsArray(root ? cJSON_GetObjectItemCaseSensitive(root, "kernels") : NULL)) {
    fprintf(stderr, "fluxcc: error: %s: not a records file (no \"kernels\" array)\n", path);
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

int report(const char *dir, bool dot) {
  cJSON *root = records_load(dir);
  if (!root) return 2;
  if (dot) {
    dot_report(root, stdout);
    cJSON_Delete(root);
    return 0;
  }
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "kernels");
  printf("%s: %s, method %s, %d launches, arena %.1f MiB\n", str(root, "model"), str(root, "target"), str(root, "method"),
         (int)num(root, "launches"), num(root, "arena_bytes") / 1048576.0);
  bool measured = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "device"));
  if (measured) printf("measured on %s (%s)\n", str(root, "device"), str(root, "toolchain"));
  printf("%4s  %-36s %-34s %8s %12s %12s", "#", "kernel", "before opts", "launches", "GFLOP/fwd", "MB/fwd");
  if (measured) printf("  %-6s %12s %12s %10s", "chosen", "us (min)", "ms/fwd", "GFLOPS");
  printf("  %s\n", "opts");
  double tf = 0, tb = 0, tt = 0;
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
    printf("%4d  %-36s %-34s %8d %12.3f %12.1f", i++, str(k, "name"), str(k, "name_before_opts"), launches, f / 1e9, b / 1e6);
    if (measured) {
      const cJSON *ch = cJSON_GetObjectItemCaseSensitive(k, "chosen");
      double us = num(ch, "min_us");
      tt += us * launches;
      printf("  %-6s %12.2f %12.4f %10.1f", str(ch, "method"), us, us * launches * 1e-3, us > 0 ? num(k, "flops") / us * 1e-3 : 0);
    }
    printf("  %s\n", opts[0] ? opts : "-");
  }
  printf("%4s  %-36s %-34s %8d %12.3f %12.1f", "", "total", "", (int)num(root, "launches"), tf / 1e9, tb / 1e6);
  if (measured) printf("  %-6s %12s %12.4f %10.1f", "", "", tt * 1e-3, tt > 0 ? tf / tt * 1e-3 : 0);
  printf("\n");
  if (measured) printf("(per-kernel times: the chosen candidate's minimum over its timed launches, device events; the sum is not an executed forward: run the binary's --bench)\n");
  else printf("(no measured times: a fixed method; --opt beam, mcts or best measure)\n");
  cJSON_Delete(root);
  return 0;
}
