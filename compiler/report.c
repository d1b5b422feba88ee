// report.c — `fluxcc report DIR`: the per-kernel table of an emitted
// project, from DIR/records.json (what was compiled, how, and how much work),
// with the times a search measured, or those of the binary's own --trace.
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Device models for the roofline, the one table of them (docs/benchmarks.md, "The
// roofline"): peak FLOP/s by the units a kernel runs on, and DRAM bandwidth.
typedef struct {
  const char *name, *what;
  double tc16, tf32, f32;  // TFLOP/s: bf16/f16 tensor cores (f32 accumulate), tf32 tensor cores, f32 without tensor cores
  double gbs;              // GB/s of DRAM bandwidth
} DeviceModel;

static const DeviceModel device_models[] = {
  // H200 SXM. bf16/f16: 790 TFLOP/s, measured dense mma throughput (the
  // project brief; the datasheet's dense figure is 989). tf32: the
  // datasheet's 494.7 dense, scaled by the same measured/datasheet ratio
  // (790/989). f32: the datasheet's 67 (66.9) non-tensor-core FP32.
  // Bandwidth: the datasheet's 4.8 TB/s HBM3e (the brief: 4.3-4.8 TB/s attained).
  {.name = "h200", .what = "NVIDIA H200 SXM", .tc16 = 790, .tf32 = 395, .f32 = 67, .gbs = 4800},
  // H100 SXM, datasheet dense peaks (none measured here): 989 bf16/f16,
  // 494.7 tf32, 66.9 f32 TFLOP/s; 3.35 TB/s HBM3.
  {.name = "h100", .what = "NVIDIA H100 SXM (datasheet)", .tc16 = 989, .tf32 = 495, .f32 = 67, .gbs = 3350},
};

enum { UNITS_TC16, UNITS_TF32, UNITS_F32 };
static const char *const units_name[] = {"tc", "tf32", "f32"};

// the units a kernel runs on, from its opts: TC(0,0) bf16/f16 mma, TC(0,1) tf32
static int kernel_units(const cJSON *k) {
  const cJSON *op;
  cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(k, "opts"))
    if (!strcmp(json_str(op, "op"), "TC")) return json_num(op, "amount") == 1 ? UNITS_TF32 : UNITS_TC16;
  return UNITS_F32;
}

static double peak_of(const DeviceModel *d, int units) { return units == UNITS_TC16 ? d->tc16 : units == UNITS_TF32 ? d->tf32 : d->f32; }

// a positive finite number, or -1
static double positive(const char *v) {
  char *end;
  double x = v && *v ? strtod(v, &end) : -1;
  return v && *v && !*end && x > 0 && x < 1e9 ? x : -1;
}

// The model --device names (h200 if none), with --peak-tflops (one peak for
// every kernel, whatever units it runs on) and --peak-gbs over it; NULL and
// why on stderr.
static const DeviceModel *device_model(const ReportOpts *ro, DeviceModel *m) {
  const char *name = ro->device ? ro->device : "h200";
  const DeviceModel *d = NULL;
  for (size_t i = 0; i < sizeof device_models / sizeof *device_models; i++)
    if (!strcmp(device_models[i].name, name)) d = &device_models[i];
  if (!d) {
    fprintf(stderr, "fluxcc: error: --device '%s': the device models are", name);
    for (size_t i = 0; i < sizeof device_models / sizeof *device_models; i++) fprintf(stderr, "%s %s", i ? "," : "", device_models[i].name);
    fprintf(stderr, " (or give --peak-tflops and --peak-gbs)\n");
    return NULL;
  }
  *m = *d;
  double t = positive(ro->peak_tflops), g = positive(ro->peak_gbs);
  if (ro->peak_tflops && t < 0) return fprintf(stderr, "fluxcc: error: --peak-tflops '%s': a positive number of TFLOP/s\n", ro->peak_tflops), NULL;
  if (ro->peak_gbs && g < 0) return fprintf(stderr, "fluxcc: error: --peak-gbs '%s': a positive number of GB/s\n", ro->peak_gbs), NULL;
  if (t > 0) m->tc16 = m->tf32 = m->f32 = t;
  if (g > 0) m->gbs = g;
  return m;
}

// --trace FILE, written by the project's own `./flux --profile N --trace FILE`:
// a unique kernel's time per forward is the sum of its launches' medians,
// found by kernel file. 0, or -1 and why when the trace is not this project's
// (another compile of the same model has the same kernel files, other kernels:
// the compile's hash tells them apart).
static int trace_times(const char *path, const cJSON *root, double *us, char *dev, size_t dn, char *err, size_t n) {
  cJSON *t = json_load(path, err, n);
  if (!t) return -1;
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(t, "traceEvents"), *other = cJSON_GetObjectItemCaseSensitive(t, "otherData");
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "kernels"), *e, *k;
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(root, "project"), *got = cJSON_GetObjectItemCaseSensitive(other, "project");
  int rc = 0, nk = cJSON_GetArraySize(ks), *seen = xcalloc((size_t)nk + 1, sizeof *seen);
  char why[300];
  if (!cJSON_IsArray(ev) || !cJSON_IsObject(other)) rc = snprintf(err, n, "not a trace of ./flux --profile (no traceEvents or otherData)");
  else if (!json_line(other, "model", 4096, why, sizeof why) || !json_line(other, "device", 256, why, sizeof why) ||
           !json_line(other, "timer", 256, why, sizeof why) || (cJSON_HasObjectItem(other, "project") && !json_line(other, "project", 32, why, sizeof why)))
    rc = snprintf(err, n, "otherData: %s", why);   // (printed below: never a control byte to the terminal)
  else if (!(json_num(other, "rounds") >= 1 && json_num(other, "rounds") <= 1000 && json_num(other, "rounds") == (int)json_num(other, "rounds")))
    rc = snprintf(err, n, "otherData: 'rounds' is not a whole number from 1 to 1000 (./flux --profile N's N)");
  else if (strcmp(json_str(other, "model"), json_str(root, "model")))
    rc = snprintf(err, n, "a trace of %.100s, but the project is %.100s", json_str(other, "model"), json_str(root, "model"));
  else if (cJSON_IsString(want) && (!cJSON_IsString(got) || strcmp(got->valuestring, want->valuestring)))
    rc = snprintf(err, n, "a trace of another compile of %.100s (project %.40s), not of this one (project %.40s): run this project's "
                  "./flux --profile N --trace FILE", json_str(root, "model"), cJSON_IsString(got) ? got->valuestring : "not said", want->valuestring);
  else if (cJSON_GetArraySize(ev) != (int)json_num(root, "launches"))
    rc = snprintf(err, n, "%d launches in the trace, %d in the project", cJSON_GetArraySize(ev), (int)json_num(root, "launches"));
  const cJSON *evs = rc ? NULL : ev, *kks = NULL;
  int i = 0;
  cJSON_ArrayForEach(e, evs) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args"), *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    if (!json_line(a, "file", 1024, why, sizeof why)) {
      rc = snprintf(err, n, "traceEvents[%d].args: %s", i, why);
      break;
    }
    int j = 0;
    cJSON_ArrayForEach(k, ks) {
      if (!strcmp(json_str(k, "file"), json_str(a, "file"))) break;
      j++;
    }
    if (j == nk) {
      rc = snprintf(err, n, "traceEvents[%d]: kernel file '%.200s': not one of this project's", i, json_str(a, "file"));
      break;
    }
    // a day in microseconds bounds one launch's median; a NaN, a negative or a 1e300 is not a time
    if (!cJSON_IsNumber(dur) || !(dur->valuedouble >= 0 && dur->valuedouble <= 864e8)) {
      rc = snprintf(err, n, "traceEvents[%d] (%.200s): 'dur' is %s, not a duration in microseconds (0 to 8.64e10)", i,
                    json_str(a, "file"), !dur ? "missing" : !cJSON_IsNumber(dur) ? "not a number" : "out of range");
      break;
    }
    us[j] += dur->valuedouble, seen[j]++, i++;
  }
  int j = 0;
  kks = rc ? NULL : ks;
  cJSON_ArrayForEach(k, kks) {
    const cJSON *sites = cJSON_GetObjectItemCaseSensitive(k, "launch_sites");
    if (cJSON_IsArray(sites) && cJSON_GetArraySize(sites) != seen[j]) {
      rc = snprintf(err, n, "kernel %d (%s): %d launches in the trace, %d in the project", j, json_str(k, "file"), seen[j], cJSON_GetArraySize(sites));
      break;
    }
    j++;
  }
  if (!rc) snprintf(dev, dn, "%s (timer: %s, median of %d)", json_str(other, "device"), json_str(other, "timer"), (int)json_num(other, "rounds"));
  free(seen);
  cJSON_Delete(t);
  return rc ? -1 : 0;
}

// The cost model's rank error over the kernels where it scored measured
// candidates: the share of pairs (of one kernel, measured apart) that its
// scores order against the measured times. Nothing said without such pairs.
static void rank_error(const cJSON *ks) {
  long pairs = 0, wrong = 0;
  int kernels = 0;
  const cJSON *k, *c;
  cJSON_ArrayForEach(k, ks) {
    double s[4096], t[4096];
    int n = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(k, "candidates"))
      if (n < 4096 && !strcmp(json_str(c, "status"), "ok") && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(c, "score")))
        s[n] = json_num(c, "score"), t[n++] = json_num(c, "min_us");
    long p0 = pairs;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++)
        if (t[i] != t[j] && s[i] != s[j]) pairs++, wrong += (s[i] > s[j]) != (t[i] < t[j]);
    kernels += pairs > p0;
  }
  if (pairs)
    printf("cost model: its scores order %.1f%% of %ld pairs of measured candidates against their times (%d kernels; 50%% is chance)\n",
           100.0 * (double)wrong / (double)pairs, pairs, kernels);
}

int report(const char *dir, bool dot, const ReportOpts *ro) {
  DeviceModel dm;
  const DeviceModel *d = device_model(ro, &dm);
  if (!d) return 2;
  cJSON *root = records_load(dir);
  if (!root) return 2;
  if (dot) {
    dot_report(root, stdout);
    cJSON_Delete(root);
    return 0;
  }
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "kernels");
  double *tr = NULL;  // --trace: per unique kernel, us per forward
  char tdev[600], err[512];
  if (ro->trace) {
    tr = xcalloc((size_t)cJSON_GetArraySize(ks) + 1, sizeof *tr);
    if (trace_times(ro->trace, root, tr, tdev, sizeof tdev, err, sizeof err)) {
      fprintf(stderr, "fluxcc: error: --trace %s: %s\n", ro->trace, err);
      free(tr);
      cJSON_Delete(root);
      return 2;
    }
  }
  printf("%s: %s, method %s, %d launches, arena %.1f MiB\n", json_str(root, "model"), json_str(root, "target"), json_str(root, "method"),
         (int)json_num(root, "launches"), json_num(root, "arena_bytes") / 1048576.0);
  bool measured = tr || cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "device"));
  if (tr) printf("measured on %s by ./flux --profile (%s)\n", tdev, ro->trace);
  else if (measured) printf("measured on %s (%s)\n", json_str(root, "device"), json_str(root, "toolchain"));
  printf("roofline: %s (%s)%s: %g TFLOP/s bf16/f16 tensor cores, %g tf32, %g f32; %g GB/s\n", d->name, d->what,
         ro->peak_tflops || ro->peak_gbs ? " with --peak-tflops/--peak-gbs" : "", d->tc16, d->tf32, d->f32, d->gbs);
  printf("%4s  %-36s %-34s %8s %12s %12s", "#", "kernel", "before opts", "launches", "GFLOP/fwd", "MB/fwd");
  printf("  %-5s %-7s %10s %10s", "units", "bound", "floor us", "floor ms");
  if (measured) printf("  %-6s %12s %12s %10s %7s", tr ? "from" : "chosen", tr ? "us/launch" : "us (min)", "ms/fwd", "GFLOPS", "%floor");
  printf("  %s\n", "opts");
  double tf = 0, tb = 0, tt = 0, floor_sum = 0, floor_cb = 0, floor_one = 0, floor_timed = 0, f_time = 0;
  int i = 0;
  const cJSON *k;
  cJSON_ArrayForEach(k, ks) {
    const cJSON *sites = cJSON_GetObjectItemCaseSensitive(k, "launch_sites");
    int launches = cJSON_IsArray(sites) ? cJSON_GetArraySize(sites) : 0;
    double f = json_num(k, "flops") * launches, b = json_num(k, "bytes") * launches;
    tf += f, tb += b;
    // the floor of one launch in us: its FLOPs at the peak of its units, or its bytes at the bandwidth
    int units = kernel_units(k);
    double fc = json_num(k, "flops") / (peak_of(d, units) * 1e6), fm = json_num(k, "bytes") / (d->gbs * 1e3), fl = fc > fm ? fc : fm;
    floor_sum += fl * launches, floor_cb += fc > fm ? fl * launches : 0, f_time += fc * launches;
    floor_one += (json_num(k, "flops") / (d->tc16 * 1e6) > fm ? json_num(k, "flops") / (d->tc16 * 1e6) : fm) * launches;
    char opts[512] = "";
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(k, "opts")) {
      size_t len = strlen(opts);
      snprintf(opts + len, sizeof opts - len, "%s%s(%d,%d)", len ? " " : "", json_str(op, "op"), (int)json_num(op, "axis"), (int)json_num(op, "amount"));
    }
    printf("%4d  %-36s %-34s %8d %12.3f %12.1f", i++, json_str(k, "name"), json_str(k, "name_before_opts"), launches, f / 1e9, b / 1e6);
    printf("  %-5s %-7s %10.2f %10.4f", units_name[units], fc > fm ? "compute" : "memory", fl, fl * launches * 1e-3);
    if (measured) {
      const cJSON *ch = cJSON_GetObjectItemCaseSensitive(k, "chosen");
      double us = tr ? (launches ? tr[i - 1] / launches : 0) : json_num(ch, "min_us");
      tt += us * launches;
      floor_timed += us > 0 ? fl * launches : 0;
      printf("  %-6s %12.2f %12.4f %10.1f", tr ? "trace" : json_str(ch, "method"), us, us * launches * 1e-3,
             us > 0 ? json_num(k, "flops") / us * 1e-3 : 0);
      if (us > 0) printf(" %6.1f%%", 100 * fl / us);
      else printf(" %7s", "-");
    }
    printf("  %s\n", opts[0] ? opts : "-");
  }
  printf("%4s  %-36s %-34s %8d %12.3f %12.1f", "", "total", "", (int)json_num(root, "launches"), tf / 1e9, tb / 1e6);
  printf("  %-5s %-7s %10s %10.4f", "", "", "", floor_sum * 1e-3);
  if (measured) printf("  %-6s %12s %12.4f %10.1f %6.1f%%", "", "", tt * 1e-3, tt > 0 ? tf / tt * 1e-3 : 0, tt > 0 ? 100 * floor_timed / tt : 0);
  printf("\n");
  int nk = cJSON_GetArraySize(ks);
  printf("per forward: %d launches of %d unique kernels, %.6g TFLOP, %.6g GB of memory traffic\n", (int)json_num(root, "launches"), nk, tf / 1e12, tb / 1e9);
  printf("summed floor: %.6g ms (compute-bound kernels %.6g ms, memory-bound %.6g ms); the FLOPs alone %.6g ms, the traffic alone %.6g ms\n",
         floor_sum * 1e-3, floor_cb * 1e-3, (floor_sum - floor_cb) * 1e-3, f_time * 1e-3, tb / (d->gbs * 1e6));
  if (!ro->peak_tflops)
    printf("summed floor with every FLOP at the tensor-core peak (%g TFLOP/s, one peak for all kernels): %.6g ms\n", d->tc16, floor_one * 1e-3);
  printf("(floor of a kernel: max(FLOPs / the peak of its units, bytes / bandwidth) per launch, times its launches; units tc: bf16/f16 mma, tf32: mma tf32, f32: no tensor cores)\n");
  if (tr) printf("(per-kernel times: us per launch, the mean of its launches' median device times in the trace, each launch run alone; the sum is not an executed forward: run the binary's --bench; %%floor: the floor over the time, on the device model, not the device measured)\n");
  else if (measured) printf("(per-kernel times: the chosen candidate's minimum over its timed launches, device events; the sum is not an executed forward: run the binary's --bench; %%floor: the floor over the time, on the device model, not the device measured)\n");
  else printf("(no measured times: a fixed method; --opt beam, mcts, rl or best measure)\n");
  int decided, against;
  records_finals(root, &decided, &against);
  if (decided)  // how often one measurement at its own moment would have chosen otherwise (finals.c)
    printf("finals: %d of %d kernels decided by their finalists timed again side by side (%d interleaved rounds); "
           "%d of them chose another kernel than the first measurement\n", decided, nk, FINAL_ROUNDS, against);
  rank_error(ks);
  free(tr);
  cJSON_Delete(root);
  return 0;
}
