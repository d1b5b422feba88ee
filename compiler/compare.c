// compare.c — `fluxcc compare MODEL --target T -o DIR`: the methods table.
//
// Every method is compiled into DIR/<method> by this same fluxcc (a child
// process, so each is exactly what `fluxcc MODEL --opt M` makes), built with
// make, run as one program on seeded random weights and inputs, checked
// against the interpreter (or RAW's output where the interpreter cannot run
// the model) and timed end to end (--bench). Per-kernel times come from
// BEST's records: BEST times RAW, HC, TC and the BEAM and MCTS choices of
// every kernel side by side in one run. Written: compare.md, compare.json,
// compare.dat + compare.gp (and compare.svg where gnuplot is installed).
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FLUXCC_COMMIT
#define FLUXCC_COMMIT "unknown"
#endif

#define NMETHODS 8                   // at most this many rows: the methods table's compared entries
#define INTERPRETER_LIMIT 50000000   // parameters: past this the float64 interpreter is not run
#define ROUNDS 5                     // of --bench per method, interleaved



typedef struct {
  bool on, built, ran;
  int check;                // 0 ok, 1 failed, -1 not run
  double e2e_ms, e2e_min_ms;
  double e2e_lo, e2e_hi;    // the lowest and highest of the rounds' medians: the spread
  double sum_us;            // per-kernel times weighted by launches
  double compile_s;         // the compile's wall time: a search's cost (best's reuses the cached searches, unless --no-cache)
  int fin_decided, fin_against;  // kernels its finals decided, and of them those against the first measurement
  char rel_l2[32];
} MethodRow;

// Run argv (in directory cwd unless NULL) with stdout and stderr to log; the
// exit status: 127 if the program is not there, -1 if it could not run.
static int run(char *const *argv, const char *log, const char *cwd) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (cwd && chdir(cwd)) _exit(126);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
    execvp(argv[0], argv);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// DIR/records.json, read and checked as every records file is; NULL (quietly) if missing or bad
static cJSON *load_records(const char *dir) {
  char path[8400], err[700];
  snprintf(path, sizeof path, "%s/records.json", dir);
  return records_read(path, err, sizeof err);
}

static double jnum(const cJSON *o, const char *k) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *k) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
  return s ? s : "";
}

static void dims3(const cJSON *a, char *buf, size_t n) {
  int v[3] = {1, 1, 1};
  for (int i = 0; i < 3; i++) {
    const cJSON *x = cJSON_GetArrayItem(a, i);
    if (cJSON_IsNumber(x)) v[i] = x->valueint;
  }
  snprintf(buf, n, "[%d, %d, %d]", v[0], v[1], v[2]);
}

// One comparison's state, shared by its phases below
typedef struct {
  Ctx *c;
  const char *self, *model, *dir;
  const CompareOpts *co;
  const Method *M[NMETHODS];  // the rows: the methods table's compared entries, in its order
  int nm, bi;               // how many; BEST's row (-1: none)
  MethodRow rows[NMETHODS];
  const char *target, *bin, *exe;  // bin: make's goal and the binary (NULL: the project's own flux, exe)
  char seed[32], budget[32], beam[32], bench[32];
  char ref[4200];           // the reference output's path
  const char *ref_from;     // what made it
  char ref_what[128];
  int64_t params;           // the model's: past INTERPRETER_LIMIT a method's own output is the reference
} Compare;

// The rows (BEST after the searches whose cached choices it reuses), those
// --methods names switched on. 0, or 2 (said).
static int select_methods(Compare *C) {
  const CompareOpts *co = C->co;
  char known[256] = "";
  C->nm = 0, C->bi = -1;
  for (const Method *x = methods; x->name && C->nm < NMETHODS; x++)
    if (x->compared) {
      if (x->kind == METHOD_BEST) C->bi = C->nm;
      snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", C->nm ? ", " : "", x->name);
      C->M[C->nm++] = x;
    }
  int nsel = 0;
  for (int m = 0; m < C->nm; m++) C->rows[m].on = !co->methods, C->rows[m].check = -1;
  for (const char *p = co->methods; p && *p;) {  // a comma-separated list of known methods
    size_t l = strcspn(p, ",");
    int found = -1;
    for (int m = 0; m < C->nm; m++)
      if (strlen(C->M[m]->name) == l && !strncmp(p, C->M[m]->name, l)) found = m;
    if (found < 0) {
      fprintf(stderr, "fluxcc: error: --methods '%s': '%.*s' is not one of %s\n", co->methods, (int)l, p, known);
      return 2;
    }
    C->rows[found].on = true;
    p += l + (p[l] == ',');
  }
  for (int m = 0; m < C->nm; m++) nsel += C->rows[m].on;
  if (!nsel) {
    fprintf(stderr, "fluxcc: error: --methods '%s' names no method\n", co->methods);
    return 2;
  }
  return 0;
}

// The reference: the interpreter's output where the model is small enough
// for it (weights and inputs by fluxcc init). 0, or 2 (said).
static int interpreter_reference(Compare *C) {
  char w[4200], in[4200], log[4200];
  C->params = 0;
  for (int i = 0; i < C->c->g.bufs.n; i++)
    if (C->c->g.bufs.v[i].kind == BUF_PARAM) C->params += shape_numel(&C->c->g.bufs.v[i].shape);
  C->ref_from = "RAW's output";
  snprintf(C->ref, sizeof C->ref, "%s/reference.safetensors", C->dir);
  if (C->params > INTERPRETER_LIMIT) return 0;
  snprintf(w, sizeof w, "%s/weights.safetensors", C->dir);
  snprintf(in, sizeof in, "%s/inputs.safetensors", C->dir);
  snprintf(log, sizeof log, "%s/reference.log", C->dir);
  char *init[] = {(char *)C->self, "init", (char *)C->model, "--seed", C->seed, "--weights", w, "--inputs", in, NULL};
  char *interp[] = {(char *)C->self, "run", (char *)C->model, "--weights", w, "--inputs", in, "-o", C->ref, NULL};
  if (run(init, log, NULL) || run(interp, log, NULL)) {
    fprintf(stderr, "fluxcc: error: the interpreter failed on %s (see %s)\n", C->model, log);
    return 2;
  }
  C->ref_from = "the interpreter (float64)";
  return 0;
}

// Each method compiled by this fluxcc in a child (best last: it reuses the
// cached BEAM and MCTS searches; always compiled: its records hold every
// method's kernel times) and its project built. 0, or 2 (said).
static int compile_methods(Compare *C) {
  const CompareOpts *co = C->co;
  char path[4200], log[4200];
  for (int m = 0; m < C->nm; m++) {
    if (!C->rows[m].on && m != C->bi) continue;
    const char *name = C->M[m]->name;
    snprintf(path, sizeof path, "%s/%s", C->dir, name);
    snprintf(log, sizeof log, "%s/%s.compile.log", C->dir, name);
    char *argv[32];
    int a = 0;
    argv[a++] = (char *)C->self, argv[a++] = (char *)C->model, argv[a++] = "--opt", argv[a++] = (char *)name;
    argv[a++] = "--target", argv[a++] = (char *)C->target, argv[a++] = "-o", argv[a++] = path;
    if (C->M[m]->kind != METHOD_FIXED) {
      argv[a++] = "--budget", argv[a++] = C->budget, argv[a++] = "--beam", argv[a++] = C->beam, argv[a++] = "--seed", argv[a++] = C->seed;
      if (co->cache) argv[a++] = "--cache", argv[a++] = (char *)co->cache;
      else argv[a++] = "--no-cache";
      if (co->from_raw) argv[a++] = "--from", argv[a++] = "raw";
    }
    if (co->tf32) argv[a++] = "--tf32";
    argv[a] = NULL;
    if (!co->quiet) fprintf(stderr, "compare: %s: compiling%s\n", name, C->M[m]->kind != METHOD_FIXED ? " (searching, unless cached)" : "");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (run(argv, log, NULL)) {
      fprintf(stderr, "fluxcc: error: compiling %s failed (see %s)\n", name, log);
      return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    C->rows[m].compile_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (!C->rows[m].on) continue;
    snprintf(log, sizeof log, "%s/%s.build.log", C->dir, name);
    char *mk[] = {"make", "-s", "-C", path, (char *)C->bin, NULL};
    if (run(mk, log, NULL)) {
      fprintf(stderr, "fluxcc: error: building %s failed (see %s)\n", name, log);
      return 2;
    }
    C->rows[m].built = true;
  }
  return 0;
}

// Past the interpreter's limit: the first method's output (RAW's, or the
// first one run) is the reference. 0, or 2 (said).
static int method_reference(Compare *C) {
  if (C->params <= INTERPRETER_LIMIT) return 0;
  char path[4200], log[4200];
  int ref_m = 0;
  while (!C->rows[ref_m].on) ref_m++;
  snprintf(C->ref_what, sizeof C->ref_what, "%s's output (the model is too large for the interpreter)", C->M[ref_m]->name);
  C->ref_from = C->ref_what;
  snprintf(path, sizeof path, "%s/%s/%s", C->dir, C->M[ref_m]->name, C->exe);
  snprintf(log, sizeof log, "%s/reference.log", C->dir);
  char *argv[] = {path, "--quiet", "--random-weights", C->seed, "--random-inputs", C->seed, "--out", C->ref, NULL};
  if (run(argv, log, NULL)) {
    fprintf(stderr, "fluxcc: error: %s's run for the reference failed (see %s)\n", C->M[ref_m]->name, log);
    return 2;
  }
  return 0;
}

// Each binary checked once, then timed in rounds, every method in turn, so
// that they see the same machine (the order rotated a place each round, so
// that no method always follows the same one): the median over rounds of
// each --bench median
static void check_and_time(Compare *C) {
  char path[4200], log[4200];
  for (int m = 0; m < C->nm; m++) {
    if (!C->rows[m].built) continue;
    if (!C->co->quiet) fprintf(stderr, "compare: %s: running and checking\n", C->M[m]->name);
    snprintf(path, sizeof path, "%s/%s/%s", C->dir, C->M[m]->name, C->exe);
    snprintf(log, sizeof log, "%s/%s.check.log", C->dir, C->M[m]->name);
    char *argv[] = {path, "--quiet", "--random-weights", C->seed, "--random-inputs", C->seed, "--check", C->ref, NULL};
    int rc = run(argv, log, NULL);
    char *out = read_text(log, NULL);
    const char *l2 = out ? strstr(out, "rel_l2=") : NULL;
    C->rows[m].check = rc == 0 ? 0 : 1;
    if (l2) sscanf(l2, "rel_l2=%31s", C->rows[m].rel_l2);
    free(out);
    if (rc != 0 && rc != 1) fprintf(stderr, "fluxcc: warning: %s's binary exited %d (see %s)\n", C->M[m]->name, rc, log);
  }
  double med[NMETHODS][ROUNDS], mins[NMETHODS][ROUNDS];
  int nr[NMETHODS] = {0};
  for (int r = 0; r < ROUNDS; r++)
    for (int q = 0; q < C->nm; q++) {
      int m = (q + r) % C->nm;
      if (!C->rows[m].built || C->rows[m].check) continue;
      if (!C->co->quiet) fprintf(stderr, "\rcompare: timing, round %d of %d: %-6s", r + 1, ROUNDS, C->M[m]->name);
      snprintf(path, sizeof path, "%s/%s/%s", C->dir, C->M[m]->name, C->exe);
      snprintf(log, sizeof log, "%s/%s.bench.log", C->dir, C->M[m]->name);
      char *argv[] = {path, "--quiet", "--random-weights", C->seed, "--random-inputs", C->seed, "--bench", C->bench, NULL};
      run(argv, log, NULL);
      char *out = read_text(log, NULL);
      const char *b = out ? strstr(out, "bench:    median ") : NULL;
      if (b && sscanf(b, "bench:    median %lf ms, min %lf ms", &med[m][nr[m]], &mins[m][nr[m]]) == 2) nr[m]++;
      free(out);
    }
  if (!C->co->quiet) fprintf(stderr, "\n");
  for (int m = 0; m < C->nm; m++) {
    if (!nr[m]) continue;
    qsort(med[m], (size_t)nr[m], sizeof(double), cmp_double);
    qsort(mins[m], (size_t)nr[m], sizeof(double), cmp_double);
    C->rows[m].ran = true, C->rows[m].e2e_ms = med[m][nr[m] / 2], C->rows[m].e2e_min_ms = mins[m][0];
    C->rows[m].e2e_lo = med[m][0], C->rows[m].e2e_hi = med[m][nr[m] - 1];
  }
}

// Per kernel, from BEST's records (ks; recs: each method's own, for its
// grid and block): each method's time, the fastest, into jk (compare.json),
// dat (compare.dat) and lines (the study's format); the sums into the rows,
// *oracle (per kernel the fastest, summed) and *flops
static void per_kernel(Compare *C, const cJSON *ks, cJSON *const *recs, cJSON *jk, Str *lines, Str *dat, double *oracle, double *flops) {
  int nk = cJSON_GetArraySize(ks);
  for (int u = 0; u < nk; u++) {
    const cJSON *k = cJSON_GetArrayItem(ks, u);
    int launches = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(k, "launch_sites"));
    double kflops = jnum(k, "flops");
    *flops += launches * kflops;
    double t[NMETHODS];
    int fastest = -1;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(k, "candidates"), *x;
    for (int m = 0; m < C->nm; m++) t[m] = NAN;
    cJSON_ArrayForEach(x, cs)
      for (int m = 0; m < C->nm; m++)
        if (m != C->bi && !strcmp(jstr(x, "from"), C->M[m]->name) && !strcmp(jstr(x, "status"), "ok")) t[m] = jnum(x, "min_us");
    if (C->bi >= 0) t[C->bi] = jnum(cJSON_GetObjectItemCaseSensitive(k, "chosen"), "min_us");
    double kmin = INFINITY;
    for (int m = 0; m < C->nm; m++)
      if (m != C->bi && isfinite(t[m]) && t[m] < kmin) kmin = t[m], fastest = m;
    *oracle += launches * kmin;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "kernel", u);
    cJSON_AddStringToObject(e, "name_before_opts", jstr(k, "name_before_opts"));
    cJSON_AddNumberToObject(e, "launches", launches);
    cJSON_AddNumberToObject(e, "flops", kflops);
    cJSON *tm = cJSON_AddObjectToObject(e, "min_us");
    for (int m = 0; m < C->nm; m++) {
      if (isfinite(t[m])) cJSON_AddNumberToObject(tm, C->M[m]->name, t[m]);
      if (isfinite(t[m])) C->rows[m].sum_us += launches * t[m];
      else if (m != C->bi) C->rows[m].sum_us = NAN;  // a method without a valid kernel here has no sum
    }
    cJSON_AddStringToObject(e, "fastest", fastest >= 0 ? C->M[fastest]->name : "none");
    cJSON_AddItemToArray(jk, e);
    str_printf(dat, "%d", u);
    for (int m = 0; m < C->nm; m++)
      if (m != C->bi) str_printf(dat, " %.6g", isfinite(t[m]) ? t[m] * launches : 0.0);
    str_printf(dat, "\n");
    // the study's own line format, one per method
    for (int m = 0; m < C->nm; m++) {
      if (m == C->bi || !isfinite(t[m])) continue;
      const cJSON *mk = recs[m] ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(recs[m], "kernels"), u) : NULL;
      char g[64] = "[?]", bl[64] = "[?]";
      if (mk) dims3(cJSON_GetObjectItemCaseSensitive(mk, "grid"), g, sizeof g), dims3(cJSON_GetObjectItemCaseSensitive(mk, "block"), bl, sizeof bl);
      char up[16];
      snprintf(up, sizeof up, "%s", C->M[m]->name);
      for (char *q = up; *q; q++) *q = (char)(*q >= 'a' && *q <= 'z' ? *q - 32 : *q);
      str_printf(lines, "kernel %d %s %s %s takes %.4g ms, %.0f GFLOPS -- %s%s\n", u, mk ? jstr(mk, "name") : jstr(k, "name"), g, bl,
                 t[m] * 1e-3, kflops / t[m] * 1e-3, up, m == fastest ? "  <- fastest" : "");
    }
  }
}

// compare.md's table, totals and provenance (md), and compare.json's (J)
static void table(Compare *C, const cJSON *best, cJSON *J, Str *md, const Str *lines, double oracle, double flops) {
  char w[64];
  const char *dev = jstr(best, "device"), *tc = jstr(best, "toolchain");
  char date[64];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  str_printf(md, "# Methods compared: %s on %s\n\n", C->model, dev);
  str_printf(md, "One executable per method, run on random weights and inputs (seed %s), checked against %s, timed end to end "
                  "with the binary's `--bench %s` (its timer, which its output names: device events on CUDA and OpenCL, the wall clock on C; median of %s forwards after one warm-up; %d rounds with the methods interleaved, the order rotated each round, the median round shown; "
                  "the spread: the fastest forward of all rounds and the lowest and highest round medians). Per-kernel times "
                  "are BEST's side-by-side measurements (min of each candidate's timed launches, outputs validated against RAW), "
                  "summed with each kernel's launch count. The last column: of the kernels a search's finals decided (its fastest "
                  "candidates and the fixed methods timed again side by side, %d interleaved rounds), those where they chose another "
                  "kernel than the first measurement would have.\n\n", C->seed, C->ref_from, C->bench, C->bench, ROUNDS, FINAL_ROUNDS);
  if (C->bin) str_printf(md, "The binaries are each project's `%s`: its CUDA text on the emulation, whose events read the CPU clock.\n\n", C->bin);
  str_printf(md, "| method | sum of kernel times (ms) | executed forward (ms, median) | fastest forward; rounds' medians (ms) | weighted GFLOPS | check | "
                  "compile (s) | search | finals overruled the first measurement |\n|---|---:|---:|---:|---:|---|---:|---|---:|\n");
  cJSON *jm = cJSON_AddArrayToObject(J, "methods");
  for (int m = 0; m < C->nm; m++) {
    if (!C->rows[m].on) continue;
    char sum[32] = "n/a", e2e[32] = "not run", gf[32] = "n/a", spread[80] = "", fin[48] = "";
    if (isfinite(C->rows[m].sum_us)) snprintf(sum, sizeof sum, "%.4g", C->rows[m].sum_us * 1e-3), snprintf(gf, sizeof gf, "%.1f", flops / C->rows[m].sum_us * 1e-3);
    if (C->rows[m].ran) snprintf(e2e, sizeof e2e, "%.4g", C->rows[m].e2e_ms), snprintf(spread, sizeof spread, "%.4g; %.4g-%.4g", C->rows[m].e2e_min_ms, C->rows[m].e2e_lo, C->rows[m].e2e_hi);
    if (C->rows[m].fin_decided) snprintf(fin, sizeof fin, "%d of %d kernels", C->rows[m].fin_against, C->rows[m].fin_decided);
    // where each search started and what decided (actions.c starts(): beam and mcts from RAW, HC and TC; tree.c: rl also from its peers)
    const char *how = C->M[m]->kind == METHOD_FIXED ? "" : C->M[m]->kind == METHOD_BEST ? "the methods' kernels side by side"
                    : C->co->from_raw ? (C->M[m] != &methods[M_rl] ? "from RAW; first measurement decides" : "from RAW and HC; first measurement decides")
                    : C->M[m] != &methods[M_rl] ? "from RAW, HC and TC; finals decide" : "from RAW and HC; finals decide";
    str_printf(md, "| %s | %s | %s | %s | %s | %s%s%s | %.1f | %s | %s |\n", C->M[m]->name, sum, e2e, spread, gf,
               C->rows[m].check == 0 ? "ok" : C->rows[m].check == 1 ? "FAILED" : "not run", C->rows[m].rel_l2[0] ? ", rel L2 " : "", C->rows[m].rel_l2,
               C->rows[m].compile_s, how, fin);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "method", C->M[m]->name);
    if (isfinite(C->rows[m].sum_us)) cJSON_AddNumberToObject(e, "sum_kernel_ms", C->rows[m].sum_us * 1e-3);
    if (isfinite(C->rows[m].sum_us)) cJSON_AddNumberToObject(e, "weighted_gflops", flops / C->rows[m].sum_us * 1e-3);
    if (C->rows[m].ran) {
      cJSON_AddNumberToObject(e, "executed_ms_median", C->rows[m].e2e_ms), cJSON_AddNumberToObject(e, "executed_ms_min", C->rows[m].e2e_min_ms);
      cJSON_AddNumberToObject(e, "executed_ms_rounds_lo", C->rows[m].e2e_lo), cJSON_AddNumberToObject(e, "executed_ms_rounds_hi", C->rows[m].e2e_hi);
    }
    cJSON_AddStringToObject(e, "check", C->rows[m].check == 0 ? "ok" : C->rows[m].check == 1 ? "failed" : "not run");
    cJSON_AddNumberToObject(e, "compile_s", C->rows[m].compile_s);
    if (C->M[m]->kind != METHOD_FIXED)
      cJSON_AddNumberToObject(e, "finals_kernels", C->rows[m].fin_decided), cJSON_AddNumberToObject(e, "finals_overruled", C->rows[m].fin_against);
    if (C->rows[m].rel_l2[0]) cJSON_AddStringToObject(e, "rel_l2", C->rows[m].rel_l2);
    cJSON_AddItemToArray(jm, e);
  }
  str_printf(md, "\n**Oracle** (per kernel the fastest method's time, summed, as the historical study reported it, never run): "
                  "%.4g ms. **BEST executed** as one program: %s ms.\n\n", oracle * 1e-3,
             C->bi >= 0 && C->rows[C->bi].ran ? (snprintf(w, sizeof w, "%.4g", C->rows[C->bi].e2e_ms), w) : "not run");
  cJSON_AddNumberToObject(J, "oracle_ms", oracle * 1e-3);
  cJSON_AddNumberToObject(J, "total_flops", flops);
  str_printf(md, "## Per kernel (the study's format; grid and block per method)\n\n```\n%s```\n\n", lines->s ? lines->s : "");
  str_printf(md, "## Provenance\n\n- device: %s\n- toolchain: %s\n- fluxcc: %s\n- model: %s, target %s, budget %s, beam %s, seed %s%s%s\n- date: %s\n",
             dev, tc, FLUXCC_COMMIT, C->model, C->target, C->budget, C->beam, C->seed, C->co->tf32 ? ", tf32" : "", C->co->from_raw ? ", --from raw" : "", date);
  cJSON *pv = cJSON_AddObjectToObject(J, "provenance");
  cJSON_AddStringToObject(pv, "device", dev);
  cJSON_AddStringToObject(pv, "toolchain", tc);
  cJSON_AddStringToObject(pv, "fluxcc_commit", FLUXCC_COMMIT);
  cJSON_AddStringToObject(pv, "model", C->model);
  cJSON_AddStringToObject(pv, "target", C->target);
  cJSON_AddStringToObject(pv, "reference", C->ref_from);
  cJSON_AddNumberToObject(pv, "budget", C->co->budget);
  cJSON_AddNumberToObject(pv, "beam", C->co->beam);
  cJSON_AddNumberToObject(pv, "seed", (double)C->co->seed);
  cJSON_AddNumberToObject(pv, "bench", C->co->bench);
  cJSON_AddStringToObject(pv, "from", C->co->from_raw ? "raw" : "fixed");
  cJSON_AddStringToObject(pv, "date", date);
}

// the chart's data (per-method executed bars) and gnuplot script (and per-kernel time by method)
static void chart(Compare *C, Str *e2e, Str *gp) {
  for (int m = 0; m < C->nm; m++)
    if (C->rows[m].ran) str_printf(e2e, "%s %.6g %.6g\n", C->M[m]->name, C->rows[m].e2e_ms, isfinite(C->rows[m].sum_us) ? C->rows[m].sum_us * 1e-3 : 0.0);
  str_printf(gp, "# gnuplot compare.gp (in this directory) -> compare.svg\nset terminal svg size 1000,800 dynamic\nset output 'compare.svg'\n"
                  "set multiplot layout 2,1\nset style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.8\n"
                  "set ylabel 'ms'\nset title 'per method: executed forward (median) and sum of kernel times'\n"
                  "plot 'compare-e2e.dat' using 2:xtic(1) title 'executed', '' using 3 title 'sum of kernels'\n"
                  "set title 'per kernel, weighted by launches: time by method (us)'\nset xlabel 'kernel'\nset logscale y\n"
                  "plot 'compare.dat' using 2:xtic(1)");
  for (int m = 0, col = 2; m < C->nm; m++)  // compare.dat's columns: the methods but BEST
    if (m != C->bi) {
      if (col > 2) str_printf(gp, ", '' using %d", col);
      str_printf(gp, " title '%s'", C->M[m]->name);
      col++;
    }
  str_printf(gp, "\nunset multiplot\n");
}

int compare(Ctx *c, const char *self, const char *model, const char *dir, const CompareOpts *co) {
  Compare C = {.c = c, .self = self, .model = model, .dir = dir, .co = co};
  if (select_methods(&C)) return 2;
  if (mkdir(dir, 0755) && errno != EEXIST) {
    fprintf(stderr, "fluxcc: error: cannot create %s: %s\n", dir, strerror(errno));
    return 2;
  }
  const DeviceOps *ops = co->target->device;
  C.target = co->target->name;
  C.bin = ops->program ? ops->program() : NULL;  // make's goal too; NULL: the project's own flux
  C.exe = C.bin ? C.bin : "flux";
  snprintf(C.seed, sizeof C.seed, "%llu", (unsigned long long)co->seed);
  snprintf(C.budget, sizeof C.budget, "%d", co->budget);
  snprintf(C.beam, sizeof C.beam, "%d", co->beam);
  snprintf(C.bench, sizeof C.bench, "%d", co->bench);
  if (interpreter_reference(&C) || compile_methods(&C) || method_reference(&C)) return 2;
  check_and_time(&C);

  // per-kernel times from BEST's records
  char path[4200], log[4200];
  snprintf(path, sizeof path, "%s/best", dir);
  cJSON *best = load_records(path);
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(best, "kernels");
  if (!cJSON_IsArray(ks)) {
    fprintf(stderr, "fluxcc: error: %s/records.json is missing or unreadable\n", path);
    cJSON_Delete(best);
    return 2;
  }
  cJSON *recs[NMETHODS] = {0};
  for (int m = 0; m < C.nm; m++) {
    snprintf(path, sizeof path, "%s/%s", dir, C.M[m]->name);
    recs[m] = m == C.bi ? NULL : load_records(path);
    if (recs[m] || m == C.bi) records_finals(m == C.bi ? best : recs[m], &C.rows[m].fin_decided, &C.rows[m].fin_against);
  }
  double oracle = 0, flops = 0;
  cJSON *J = cJSON_CreateObject(), *jk = cJSON_CreateArray();
  Str md = {0}, lines = {0}, dat = {0}, e2e = {0}, gp = {0};
  per_kernel(&C, ks, recs, jk, &lines, &dat, &oracle, &flops);
  cJSON_AddItemToObject(J, "kernels", jk);
  table(&C, best, J, &md, &lines, oracle, flops);
  chart(&C, &e2e, &gp);
  char *jt = cJSON_Print(J);
  char err[512];
  int rc = 0;
  const struct { const char *name, *text; } files[] = {
    {"compare.md", md.s}, {"compare.json", jt}, {"compare.dat", dat.s ? dat.s : ""}, {"compare-e2e.dat", e2e.s ? e2e.s : ""}, {"compare.gp", gp.s},
  };
  for (size_t i = 0; i < sizeof files / sizeof *files && rc == 0; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
    if (write_atomic(path, files[i].text, strlen(files[i].text), err, sizeof err)) fprintf(stderr, "fluxcc: error: %s\n", err), rc = 2;
  }
  int plot = -1;  // gnuplot's exit status; 127: not installed
  if (rc == 0) {
    snprintf(log, sizeof log, "%s/gnuplot.log", dir);
    char *argv[] = {"gnuplot", "compare.gp", NULL};
    plot = run(argv, log, dir);
  }
  if (rc == 0 && !co->quiet)
    fprintf(stderr, "compare: wrote %s/compare.md, compare.json, compare.gp%s\n", dir,
            plot == 0 ? ", compare.svg" : plot == 127 ? " (no gnuplot: no picture)" : " (gnuplot failed: see gnuplot.log)");
  if (rc == 0) fputs(md.s, stdout);
  free(jt), free(md.s), free(lines.s), free(dat.s), free(e2e.s), free(gp.s);
  cJSON_Delete(J);
  cJSON_Delete(best);
  for (int m = 0; m < C.nm; m++) cJSON_Delete(recs[m]);
  int bad = 0;
  for (int m = 0; m < C.nm; m++) bad |= C.rows[m].on && C.rows[m].check != 0;
  return rc ? rc : bad ? 1 : 0;
}
