// bench.c — timing a program on its device: --bench N (whole forwards,
// timed by dev_bench), --profile N (each launch alone, timed by dev_launch)
// and --trace FILE (the profile as a Chrome / Perfetto trace).
#define _POSIX_C_SOURCE 200809L

#include "files.h"
#include "flux_main.h"

#include <cjson/cJSON.h>

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

// the median of n times (the middle two's mean for even n)
static double median(double *t, int n) {  // sorts t
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

// --bench N: one warm-up forward, then N timed ones (dev_bench); the median
// and the spread in one line. 0, or -1 for a device error.
int bench_forwards(Dev *d, const RtSchedule *s, int n, int graph) {
  double *ms = rt_calloc((size_t)n, sizeof *ms);
  const char *how = "";
  if (dev_bench(d, n, graph, ms, &how)) {
    free(ms);
    return -1;
  }
  double med = median(ms, n);  // sorts ms
  // the spread: one median hides how much this machine moves (2x between runs on a noisy VM)
  printf("bench:    median %.3f ms, min %.3f ms per forward (%d launches) over %d forwards after 1 warm-up; "
         "quartiles %.3f-%.3f ms, max %.3f ms; %s\n", med, ms[0], s->nlaunches, n, ms[(n - 1) / 4], ms[3 * (n - 1) / 4], ms[n - 1], how);
  free(ms);
  return 0;
}

// --profile N: every launch run alone N times and timed by the device (see
// dev_launch); per launch its median, in the study's line format, in launch
// order, then each unique kernel's total and share of the forward. The sum
// of medians leaves out what a forward overlaps or saves between launches:
// --bench times the forward itself. --trace FILE writes the same medians as a
// Chrome / Perfetto trace (chrome://tracing, ui.perfetto.dev), launches laid
// end to end.
static int write_trace(const RtSchedule *s, const Dev *d, const double *med, int rounds, const char *how, const char *path) {
  cJSON *root = cJSON_CreateObject(), *ev = cJSON_AddArrayToObject(root, "traceEvents");
  double at = 0;
  for (int i = 0; i < s->nlaunches; i++) {
    const RtKernel *K = &s->kernels[s->launches[i].kernel];
    cJSON *e = cJSON_CreateObject(), *a = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", K->name);
    cJSON_AddStringToObject(e, "cat", "kernel");
    cJSON_AddStringToObject(e, "ph", "X");
    cJSON_AddNumberToObject(e, "ts", at * 1e3);   // microseconds
    cJSON_AddNumberToObject(e, "dur", med[i] * 1e3);
    cJSON_AddNumberToObject(e, "pid", 0);
    cJSON_AddNumberToObject(e, "tid", 0);
    cJSON_AddNumberToObject(a, "launch", i);
    cJSON_AddStringToObject(a, "file", K->file);
    int g[3] = {(int)K->global[0], (int)K->global[1], (int)K->global[2]}, b[3] = {(int)K->local[0], (int)K->local[1], (int)K->local[2]};
    cJSON_AddItemToObject(a, "grid", cJSON_CreateIntArray(g, 3));
    cJSON_AddItemToObject(a, "block", cJSON_CreateIntArray(b, 3));
    cJSON_AddNumberToObject(a, "flops", (double)K->flops);
    cJSON_AddNumberToObject(a, "bytes", (double)K->bytes);
    cJSON_AddItemToObject(e, "args", a);
    cJSON_AddItemToArray(ev, e);
    at += med[i];
  }
  cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
  cJSON *o = cJSON_AddObjectToObject(root, "otherData");
  cJSON_AddStringToObject(o, "model", s->model);
  cJSON_AddStringToObject(o, "project", s->project);   // the compile (fluxcc report --trace refuses another's)
  cJSON_AddStringToObject(o, "device", dev_name(d));
  cJSON_AddStringToObject(o, "timer", how);
  cJSON_AddNumberToObject(o, "rounds", rounds);
  cJSON_AddStringToObject(o, "how", "each launch run alone; its median device time; launches laid end to end");
  char *text = cJSON_Print(root), err[1024];
  cJSON_Delete(root);
  if (!text) return fprintf(stderr, "flux: error: out of memory writing the trace\n"), -1;
  size_t len = strlen(text);
  const void *parts[] = {text, "\n"};
  const size_t lens[] = {len, 1};
  int rc = out_write(path, 2, parts, lens, err, sizeof err);
  free(text);
  if (rc) fprintf(stderr, "flux: error: %s\n", err);
  return rc;
}

// 0, or 1 for a device error, 2 when the trace cannot be written
int profile_launches(Dev *d, const RtSchedule *s, int rounds, const char *trace, int quiet) {
  int nl = s->nlaunches;
  double *t = rt_calloc((size_t)nl * (size_t)rounds, sizeof *t), *med = rt_calloc((size_t)nl + 1, sizeof *med);
  double *per = rt_calloc((size_t)s->nkernels, sizeof *per), sum = 0;
  int *count = rt_calloc((size_t)s->nkernels, sizeof *count), *order = rt_calloc((size_t)s->nkernels, sizeof *order), rc = 0;
  const char *how = "";
  for (int r = 0; r < rounds && !rc; r++)
    for (int i = 0; i < nl && !rc; i++) rc = dev_launch(d, i, &t[(size_t)i * (size_t)rounds + (size_t)r], &how) ? 1 : 0;
  if (rc) goto out;
  for (int i = 0; i < nl; i++) {
    med[i] = median(t + (size_t)i * (size_t)rounds, rounds);
    per[s->launches[i].kernel] += med[i], count[s->launches[i].kernel]++, sum += med[i];
  }
  if (trace && write_trace(s, d, med, rounds, how, trace)) {
    rc = 2;  // the output's fault, not the device's
    goto out;
  }
  printf("profile:  each launch run alone, median of %d (timer: %s); %.3f ms per forward in all\n", rounds, how, sum);
  for (int i = 0; i < nl; i++) {
    const RtKernel *K = &s->kernels[s->launches[i].kernel];
    double sec = med[i] * 1e-3;
    printf("kernel %d %s [%u, %u, %u] [%u, %u, %u] takes %.4g ms, %.3g GFLOPS, %.3g GB/s\n", i, K->name, K->global[0], K->global[1],
           K->global[2], K->local[0], K->local[1], K->local[2], med[i], sec > 0 ? K->flops / sec * 1e-9 : 0,
           sec > 0 ? K->bytes / sec * 1e-9 : 0);
  }
  for (int k = 0; k < s->nkernels; k++) order[k] = k;
  for (int a = 1; a < s->nkernels; a++)  // slowest first (insertion sort: a few hundred kernels)
    for (int b = a; b > 0 && per[order[b]] > per[order[b - 1]]; b--) {
      int x = order[b];
      order[b] = order[b - 1], order[b - 1] = x;
    }
  printf("per kernel, slowest first:\n  %10s %6s %8s  %s\n", "ms/forward", "share", "launches", "kernel");
  for (int j = 0; j < s->nkernels; j++) {
    int k = order[j];
    if (count[k]) printf("  %10.3f %5.1f%% %8d  %s\n", per[k], sum > 0 ? 100 * per[k] / sum : 0, count[k], s->kernels[k].file);
  }
  if (trace && !quiet) printf("trace:    %s\n", trace);
out:
  free(t), free(med), free(per), free(count), free(order);
  return rc;
}
