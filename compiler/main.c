// main.c — the fluxcc command line.
#include "fluxcc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
  "usage: fluxcc MODEL.fdsl --opt METHOD [--target {cuda,opencl,c}] -o DIR\n"
  "                                                  compile to a CUDA (default), OpenCL or C (OpenMP) project in DIR\n"
  "       fluxcc MODEL.fdsl --dump {ast,graph,schedule,kernels,uops} [--target T] [--opt METHOD]\n"
  "                                                  print a stage's IR as text\n"
  "       fluxcc MODEL.fdsl --dump features [--target T] [--opt METHOD]\n"
  "                                                  the cost model's features of each kernel (a table)\n"
  "       fluxcc MODEL.fdsl --dump {graph,schedule} --format dot [--opt METHOD]\n"
  "                                                  the same as a graphviz picture (dot -Tsvg)\n"
  "       fluxcc report DIR [--format dot] [--device h200|h100] [--peak-tflops X] [--peak-gbs Y] [--trace FILE]\n"
  "                                                  the per-kernel table of a compiled project (records.json),\n"
  "                                                  with each kernel's roofline floor on a device model (h200 default)\n"
  "       fluxcc compare MODEL.fdsl [--target T] -o DIR [--methods raw,hc,...] [--bench N] [search options]\n"
  "                                                  every method built, run, checked and timed: DIR/compare.md\n"
  "       fluxcc train RECORDS.json|CACHE_DIR... -o MODEL.json [--seed S]\n"
  "                                                  train the cost model (XGBoost) on measured candidates of one device\n"
  "       fluxcc train CACHE_DIR                     the same into the cache's own model for that device (--model auto)\n"
  "       fluxcc pipeline --t5 T5.fdsl --clip CLIP.fdsl --transformer FLUX.fdsl --vae VAE.fdsl --opt METHOD [--target T] -o DIR\n"
  "                                                  the text-to-image pipeline as one project: each model compiled\n"
  "                                                  into DIR/NAME/, one binary (./flux --prompt TEXT -o image.png)\n"
  "       fluxcc params MODEL.fdsl                   list parameters: key<TAB>dtype<TAB>shape, then the total\n"
  "       fluxcc init MODEL.fdsl --seed S --weights W.safetensors --inputs I.safetensors [--quiet]\n"
  "                                                  seeded random weights and inputs for the model\n"
  "       fluxcc run MODEL.fdsl --weights W --inputs I -o OUT.safetensors [--quiet]\n"
  "                                                  the reference interpreter (float64, rounded per dtype)\n"
  "                                                  (init and run say what they wrote on stdout; --quiet: nothing)\n"
  "search options (--opt beam, mcts, rl, best; compare): kernels are compiled, checked against RAW on random inputs and timed on\n"
  "         the target's device (OpenCL: the first device found; CUDA: GPU 0; C: this CPU, built by cc)\n"
  "         --beam K (default 4) entries kept per round   --budget N  at most N candidates per kernel (0: no limit)\n"
  "         --jobs N (default: cores) concurrent compiles (OpenCL: N child processes build each round ahead)\n"
  "         --runs N (default 3) timed launches per candidate\n"
  "         --build-limit S (default 5; 0: none) a candidate a child process has not built in S seconds is refused,\n"
  "                         as is one whose text would take longer at the children's rate a byte so far\n"
  "                         (where children build: OpenCL, --jobs 2 or more, after a search's first 48 candidates)\n"
  "         --cache DIR (default $XDG_CACHE_HOME/fluxcc)  --no-cache   --quiet (no progress on stderr)\n"
  "         --records FILE  replay a project's records.json: the same project, no device needed\n"
  "         --compile-only  compile what a search's first round would time, time nothing, emit nothing\n"
  "         --kernels 3,17  search only these unique kernels (numbers as in fluxcc report); the others stay raw\n"
  "         --seed S        the random inputs and the searches' random choices\n"
  "         --shard I/N     search only unique kernels u with u % N == I into the cache (scripts/tune-slurm.sh runs N)\n"
  "         --dry-run       check the command line as this compile would, then stop: exit 0, or 2 with the error;\n"
  "                         nothing is read or written (scripts/tune-slurm.sh checks its jobs' commands so)\n"
  "         --model FILE|auto|none  the learned cost model that ranks candidates (auto: the cache's for this device;\n"
  "                         default: auto for rl and best's rl, none for beam and mcts)\n"
  "         --measure K     with a model, candidates timed per round (beam: default 2x --beam; mcts: per expansion,\n"
  "                         default 4; rl: per batch, default 4)\n"
  "         --from fixed|raw  fixed (default): BEAM and MCTS start from RAW, HC and TC, and each kernel's fastest\n"
  "                         candidates are timed again against HC and TC, interleaved, and replace them only when\n"
  "                         faster beyond the noise; raw: the study's searches, from RAW alone, the first measurement decides\n"
  "compare options: --methods raw,hc,tc,beam,mcts,rl,best (default all)  --bench N (default 5) forwards per timing\n"
  "         --weights fp8   (compile, pipeline: its transformer) the linear layers' weights stored as float8_e4m3fn with an\n"
  "                         f32 scale per output row (KEY.scale_weight), converted in the kernels' loads; ./flux reads an\n"
  "                         F8_E4M3 checkpoint as it is and quantizes a bf16/f32 one at load\n"
  "options: --max-errors N (default 20), --time (stage times), --no-reuse (no shared activation memory:\n"
  "         with FLUX_OUT_ALL=1 the binary's --out then holds every intermediate), --tf32, -h/--help,\n"
  "         --tile-n N (1..4096: the outputs along n a matmul's block computes, which decides whether GEMM\n"
  "         prologues and the attention are fused; default 128 on CUDA and under tc and random, else 8 on a CPU)\n";

static void print_usage(FILE *f) {
  fputs(usage, f);
  fprintf(f, "methods:\n");
  for (const Method *m = methods; m->name; m++) fprintf(f, "  %-7s %s%s\n", m->name, m->what, m->built ? "" : " (not built yet)");
}

static void bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "fluxcc: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  print_usage(stderr);
  exit(2);
}

typedef struct {
  const char *cmd, *model, *dump, *format, *weights, *inputs, *out, *opt, *target, *cache, *records, *methods, *kernels;
  const char *device, *peak_tflops, *peak_gbs, *trace, *model_file, *from;
  const char **more;        // train's inputs after the first (as many as given: argc entries, made by the first)
  const char *shard;        // --shard I/N
  int dry_run;              // --dry-run: check the options, do nothing
  const char *stage_file[PIPELINE_STAGES];   // pipeline: --t5 FILE ...
  int nmore, measure;
  uint64_t seed;
  int have_seed, max_errors, time, no_reuse, tf32, no_cache, quiet, compile_only;
  int beam, budget, jobs, runs, bench, tile_n, build_limit;
} Opts;

// The numeric options: each read by nb_parse_u64 (numbers.h, as the binary
// reads its own) into its field, and refused outside its range, never clamped.
typedef struct { const char *name; uint64_t lo, hi; size_t at; bool u64; } IntOption;
static const IntOption int_options[] = {
  {"--seed", 0, UINT64_MAX, offsetof(Opts, seed), true},   {"--max-errors", 0, 10000, offsetof(Opts, max_errors), false},
  {"--beam", 1, 64, offsetof(Opts, beam), false},          {"--budget", 0, 100000, offsetof(Opts, budget), false},
  {"--jobs", 1, 64, offsetof(Opts, jobs), false},          {"--runs", 1, 64, offsetof(Opts, runs), false},
  {"--bench", 1, 100000, offsetof(Opts, bench), false},    {"--tile-n", 1, 4096, offsetof(Opts, tile_n), false},
  {"--measure", 1, 10000, offsetof(Opts, measure), false},  {"--build-limit", 0, 3600, offsetof(Opts, build_limit), false},
};
static const IntOption *int_option(const char *a) {
  for (size_t i = 0; i < sizeof int_options / sizeof *int_options; i++)
    if (!strcmp(a, int_options[i].name)) return &int_options[i];
  return NULL;
}

static const char *need(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) bad_usage("option '%s' needs a value", argv[*i]);
  return argv[++*i];
}

static Opts parse_args(int argc, char **argv) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  Opts o = {.max_errors = 20, .beam = 4, .runs = 3, .jobs = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores, .bench = 5,
            .build_limit = 5};
  const IntOption *io;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      print_usage(stdout);
      exit(0);
    } else if (!strcmp(a, "--dump")) o.dump = need(argc, argv, &i);
    else if (!strcmp(a, "--format")) o.format = need(argc, argv, &i);
    else if (!strcmp(a, "--weights")) o.weights = need(argc, argv, &i);
    else if (!strcmp(a, "--inputs")) o.inputs = need(argc, argv, &i);
    else if (!strcmp(a, "-o")) o.out = need(argc, argv, &i);
    else if (!strcmp(a, "--opt")) o.opt = need(argc, argv, &i);
    else if (!strcmp(a, "--target")) o.target = need(argc, argv, &i);
    else if (!strcmp(a, "--time")) o.time = 1;
    else if (!strcmp(a, "--no-reuse")) o.no_reuse = 1;
    else if (!strcmp(a, "--tf32")) o.tf32 = 1;
    else if (!strcmp(a, "--no-cache")) o.no_cache = 1;
    else if (!strcmp(a, "--quiet")) o.quiet = 1;
    else if (!strcmp(a, "--compile-only")) o.compile_only = 1;
    else if (!strcmp(a, "--cache")) o.cache = need(argc, argv, &i);
    else if (!strcmp(a, "--records")) o.records = need(argc, argv, &i);
    else if (!strcmp(a, "--methods")) o.methods = need(argc, argv, &i);
    else if (!strcmp(a, "--device")) o.device = need(argc, argv, &i);
    else if (!strcmp(a, "--peak-tflops")) o.peak_tflops = need(argc, argv, &i);
    else if (!strcmp(a, "--peak-gbs")) o.peak_gbs = need(argc, argv, &i);
    else if (!strcmp(a, "--trace")) o.trace = need(argc, argv, &i);
    else if (!strcmp(a, "--model")) o.model_file = need(argc, argv, &i);
    else if (!strcmp(a, "--shard")) o.shard = need(argc, argv, &i);
    else if (!strcmp(a, "--dry-run")) o.dry_run = 1;
    else if (!strcmp(a, "--from")) {
      o.from = need(argc, argv, &i);
      if (strcmp(o.from, "raw") && strcmp(o.from, "fixed")) bad_usage("--from '%s': raw (the study's searches) or fixed (the default)", o.from);
    }
    else if (!strcmp(a, "--kernels")) {
      o.kernels = need(argc, argv, &i);
      if (!*o.kernels || strspn(o.kernels, "0123456789,") != strlen(o.kernels)) bad_usage("--kernels '%s': unique kernel numbers, e.g. 3,17", o.kernels);
    }
    else if (!strncmp(a, "--", 2) && pipeline_stage(a + 2) >= 0) o.stage_file[pipeline_stage(a + 2)] = need(argc, argv, &i);
    else if ((io = int_option(a))) {
      const char *v = need(argc, argv, &i);
      uint64_t x;
      if (nb_parse_u64(v, io->lo, io->hi, &x)) {
        fprintf(stderr, "fluxcc: error: %s wants a decimal integer from %llu to %llu, not '%s'\n", a, (unsigned long long)io->lo,
                (unsigned long long)io->hi, v);
        print_usage(stderr);
        exit(2);
      }
      if (io->u64) *(uint64_t *)((char *)&o + io->at) = x;
      else *(int *)((char *)&o + io->at) = (int)x;
      o.have_seed |= !strcmp(a, "--seed");
    } else if (a[0] == '-' && a[1]) bad_usage("unknown option '%s'", a);
    else if (!o.cmd && !o.model && (!strcmp(a, "params") || !strcmp(a, "init") || !strcmp(a, "run") || !strcmp(a, "report") ||
                                 !strcmp(a, "compare") || !strcmp(a, "train") || !strcmp(a, "pipeline")))
      o.cmd = a;
    else if (!o.model) o.model = a;
    else if (o.cmd && !strcmp(o.cmd, "train")) {
      if (!o.more) o.more = xcalloc((size_t)argc, sizeof *o.more);
      o.more[o.nmore++] = a;
    }
    else bad_usage("unexpected argument '%s'", a);
  }
  bool pipe = o.cmd && !strcmp(o.cmd, "pipeline"), staged = false;
  for (int s = 0; s < PIPELINE_STAGES; s++) staged |= o.stage_file[s] != NULL;
  if (staged && !pipe) bad_usage("%s", "--t5, --clip, --transformer and --vae are for fluxcc pipeline");
  if (pipe && o.model) bad_usage("pipeline takes its models as --t5 FILE --clip FILE --transformer FILE --vae FILE, not '%s'", o.model);
  if (pipe) o.model = "pipeline";
  if (!o.model) bad_usage("%s", o.cmd && !strcmp(o.cmd, "train") ? "train needs records.json files or cache directories" : o.cmd ? "missing MODEL.fdsl" : "no model given");
  return o;
}


static int cmd_params(Ctx *c) {
  int64_t total = 0;
  char sh[160];
  for (int i = 0; i < c->g.bufs.n; i++) {
    Buf *b = &c->g.bufs.v[i];
    if (b->kind != BUF_PARAM) continue;
    shape_str(&b->shape, sh, sizeof sh);
    sh[strlen(sh) - 1] = 0;
    printf("%s\t%s\t%s\n", b->name, dtype_st_name[b->dt], sh + 1);
    total += shape_numel(&b->shape);
  }
  printf("total\t%lld\n", (long long)total);
  return 0;
}

static int cmd_init(Ctx *c, Opts *o) {
  if (model_init(c, o->seed, o->weights, o->inputs)) return 2;
  int np = 0, ni = 0;
  for (int i = 0; i < c->g.bufs.n; i++) np += c->g.bufs.v[i].kind == BUF_PARAM, ni += c->g.bufs.v[i].kind == BUF_INPUT;
  char w[4200], in[4200];
  if (!o->quiet)
    printf("wrote %s and %s\n", out_said(o->weights, np, w, sizeof w), out_said(o->inputs, ni, in, sizeof in));
  return 0;
}

static int cmd_run(Ctx *c, Opts *o) {
  Graph *g = &c->g;
  HostTensor *bufs = xcalloc((size_t)g->bufs.n + 1, sizeof *bufs);
  HostTensor *outs = xcalloc((size_t)g->outs.n + 1, sizeof *outs);
  int rc = 2;
  double t0 = now_s();
  if (model_load(c, o->weights, o->inputs, bufs) == 0 && interpret(c, bufs, outs) == 0)
    rc = model_save_outputs(c, o->out, outs) ? 2 : 0;
  for (int i = 0; rc == 0 && !o->quiet && i < g->outs.n; i++) {  // one line per output: enough to eyeball a run
    int64_t n = shape_numel(&outs[i].shape);
    double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
    int64_t nonfinite = 0;
    for (int64_t k = 0; k < n; k++) nonfinite += !isfinite(outs[i].v[k]);
    if (nonfinite)  // from finite weights and inputs (those are checked): overflow, log of a negative, ...
      fprintf(stderr, "fluxcc: warning: output '%s' holds %lld NaN/infinite values\n", g->outs.v[i].name, (long long)nonfinite);
    for (int64_t k = 0; k < n; k++) {
      double v = outs[i].v[k];
      sum += v, sq += v * v;
      lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    char sh[160];
    shape_str(&outs[i].shape, sh, sizeof sh);
    double mean = sum / (double)n;
    printf("%s: %s%s  mean %.6g  std %.6g  min %.6g  max %.6g\n", g->outs.v[i].name, dtype_name[outs[i].dt], sh, mean,
           sqrt(fmax(sq / (double)n - mean * mean, 0)), lo, hi);
  }
  char said[4200];
  if (rc == 0 && !o->quiet)
    printf("interpreted %d graph nodes in %.2f s (products: %s); wrote %s\n", g->nodes.n, now_s() - t0, interpret_gemm(),
           out_said(o->out, g->outs.n, said, sizeof said));
  for (int i = 0; i < g->bufs.n; i++) free(bufs[i].v);
  for (int i = 0; i < g->outs.n; i++) free(outs[i].v);
  free(bufs);
  free(outs);
  return rc;
}

// The options a compile (or pipeline, dump, compare, init, run) must agree
// on, checked before any work: a usage error exits 2 (bad_usage); -1 (said):
// another refusal. Sets *target, *method (NULL: none asked) and the shard.
static int check_compile_options(const Opts *o, const char *cmd, const Target **target_out, const Method **method_out, int *shard_i_out, int *shard_n_out) {
  if (o->model_file && strcmp(o->model_file, "auto") && strcmp(o->model_file, "none") && !*o->model_file)
    bad_usage("%s", "--model wants FILE, auto or none");
  if (!strcmp(cmd, "compare") && !o->out) bad_usage("%s", "compare needs -o DIR");
  static const char *const stages[] = {"ast", "graph", "schedule", "kernels", "uops", "features"};
  bool known = !o->dump;
  for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) known |= o->dump && !strcmp(o->dump, stages[i]);
  if (!known) bad_usage("--dump '%s': the stages are ast, graph, schedule, kernels and uops (and features: the cost model's input)", o->dump);
  const Target *target = o->target ? target_find(o->target) : &targets[TARGET_CUDA];
  if (!target) {
    char names[128], msg[400];
    target_names(names, sizeof names);
    snprintf(msg, sizeof msg, "--target '%s': use %s", o->target, names);
    bad_usage("%s", msg);
  }
  const Method *method = NULL;
  bool pipe = !strcmp(cmd, "pipeline");
  // --weights names a file for init and run; a compile's is how weights are stored
  if ((!*cmd || pipe || !strcmp(cmd, "compare")) && o->weights && strcmp(o->weights, "fp8"))
    bad_usage("--weights '%s': a compile's --weights is fp8 (linear weights as float8_e4m3fn, a scale per row); files are for init and run", o->weights);
  if (!strcmp(cmd, "compare") && o->weights) bad_usage("%s", "--weights fp8 is for a compile or pipeline, not compare");
  if (pipe && (o->dump || o->records || o->compile_only || o->kernels || o->shard))
    bad_usage("%s", "pipeline compiles and emits every stage: --dump, --records, --compile-only, --kernels and --shard are for one model");
  if ((!*cmd || pipe) && !o->dump) {
    if (!o->opt || (!o->out && !o->compile_only)) bad_usage("%s", "compile needs --opt METHOD -o DIR (or use --dump, params, init, run)");
    if (!(method = method_find(o->opt))) bad_usage("--opt '%s' is not a method (see below)", o->opt);
    if (!method->built) {
      fprintf(stderr, "fluxcc: error: --opt %s is not implemented yet\n", o->opt);
      return -1;
    }
    const char *given = o->records ? "--records" : o->compile_only ? "--compile-only" : o->model_file ? "--model" : o->measure ? "--measure" : "--from";
    char why[160];
    snprintf(why, sizeof why, "--opt %s is a fixed method: %s is for searches (beam, mcts, rl, best)", o->opt, given);
    if (method->kind == METHOD_FIXED && (o->records || o->compile_only || o->model_file || o->measure || o->from)) bad_usage("%s", why);
  }
  if (o->records) {  // read by the search: refuse a FIFO, device or directory here, before any work
    char why[256];
    int fd = open_regular(o->records, (int64_t)1 << 30, NULL, why, sizeof why);
    if (fd < 0) {
      fprintf(stderr, "fluxcc: error: --records %s: %s\n", o->records, why);
      return -1;
    }
    close(fd);
  }
  int shard_i = 0, shard_n = 0;
  if (o->shard) {  // I/N, 0 <= I < N: each number read as the integer options are
    char a[24], *slash;
    uint64_t i, n;
    snprintf(a, sizeof a, "%s", o->shard);
    if (!(slash = strchr(a, '/')) || strlen(o->shard) >= sizeof a || (*slash = 0, nb_parse_u64(slash + 1, 1, 100000, &n)) ||
        nb_parse_u64(a, 0, n - 1, &i))
      bad_usage("--shard '%s': I/N, shard I of N (0 <= I < N <= 100000), e.g. 0/4", o->shard);
    if (o->no_cache || !method || method->kind == METHOD_FIXED || o->records || o->compile_only)
      bad_usage("%s", "--shard is for a search that fills a cache (--opt beam, mcts, rl or best, no --no-cache, --records or --compile-only)");
    shard_i = (int)i, shard_n = (int)n;
  }
  *target_out = target, *method_out = method, *shard_i_out = shard_i, *shard_n_out = shard_n;
  return 0;
}

// A model compiled into kernels: scheduled, optimized or searched, then
// dumped (--dump schedule, kernels, features, uops) or emitted (-o DIR).
// A compile-only search ends the process here, as it always has.
static int compile_kernels(Ctx *c, const Opts *o, const Target *target, const Method *method, const SearchOpts *so, SearchInfo *info, const char *title, bool dot, int argc,
                           char **argv) {
  int rc;
  Schedule s = {.target = target};
  double t0 = now_s();
  if (o->opt && !method && !(method = method_find(o->opt))) bad_usage("--opt '%s' is not a method (see below)", o->opt);
  s.tile_n = o->tile_n ? o->tile_n : method ? method->tile_n : 0;  // 0: the target's (schedule_build)
  rc = schedule_build(c, &s) ? 1 : 0;
  if (rc == 0 && method && method->kind == METHOD_FIXED) optimize_schedule(c, &s, method, o->seed, o->tf32);
  else if (rc == 0 && method) rc = search_schedule(c, &s, so, info);
  if (rc == 0 && o->compile_only) {  // the search printed its summary
    schedule_free(&s);
    return 0;
  }
  if (o->time) fprintf(stderr, "schedule: %.1f ms, %d launches, %d unique kernels\n", 1e3 * (now_s() - t0), s.l.n, s.k.n);
  if (rc == 0 && o->dump && !strcmp(o->dump, "schedule") && dot) dot_schedule(c, &s, title, method ? method : &methods[M_raw], stdout);
  else if (rc == 0 && o->dump && !strcmp(o->dump, "schedule")) schedule_dump(c, &s, stdout);
  else if (rc == 0 && o->dump && !strcmp(o->dump, "kernels")) kernels_dump(c, &s, stdout);
  else if (rc == 0 && o->dump && !strcmp(o->dump, "features")) features_dump(c, &s, stdout);
  else if (rc == 0 && o->dump) {
    for (int u = 0; u < s.k.n; u++) {
      Program p;
      lower_kernel(c, &s, &s.k.v[u], &p);
      printf("kernel %d %s\n", u, s.k.v[u].name);
      uops_dump(&s.k.v[u], &p, stdout);
      program_free(&p);
    }
  } else if (rc == 0) {
    EmitOpts eo = {.model = o->model, .out_dir = o->out, .method = method, .target = target, .argc = argc, .argv = argv,
                   .search = method && method->kind != METHOD_FIXED ? info : NULL};
    t0 = now_s();
    rc = emit_project(c, &s, &eo) ? 2 : 0;
    if (o->time) fprintf(stderr, "emit: %.1f ms\n", 1e3 * (now_s() - t0));
    if (rc == 0)
      printf("%s: %d launches, %d unique kernels, arena %.1f MiB -> %s/ (make -C %s)\n", o->model, s.l.n, s.k.n,
             (double)s.arena_bytes / 1048576.0, o->out, o->out);
  }
  schedule_free(&s);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--warm-worker")) return warm_worker(argv[2]);  // a search's child (warm.c)
  Opts o = parse_args(argc, argv);
  const char *cmd = o.cmd ? o.cmd : "";
  if (!strcmp(cmd, "init") && (!o.have_seed || !o.weights || !o.inputs))
    bad_usage("%s", "init needs --seed S --weights W.safetensors --inputs I.safetensors");
  if (!strcmp(cmd, "run") && (!o.weights || !o.inputs || !o.out))
    bad_usage("%s", "run needs --weights W --inputs I -o OUT.safetensors");
  bool dot = o.format && !strcmp(o.format, "dot");
  if (o.format && !dot && strcmp(o.format, "text")) bad_usage("--format '%s': use text or dot", o.format);
  if (dot && !(o.dump && (!strcmp(o.dump, "graph") || !strcmp(o.dump, "schedule"))) && strcmp(cmd, "report"))
    bad_usage("%s", "--format dot is for --dump graph, --dump schedule and report");
  if ((o.device || o.peak_tflops || o.peak_gbs || o.trace) && (strcmp(cmd, "report") || dot))
    bad_usage("%s", "--device, --peak-tflops, --peak-gbs and --trace are for fluxcc report DIR (the text table)");
  ReportOpts ro = {.device = o.device, .peak_tflops = o.peak_tflops, .peak_gbs = o.peak_gbs, .trace = o.trace};
  if (o.dry_run && *cmd && strcmp(cmd, "pipeline"))
    bad_usage("--dry-run checks a compile's (or pipeline's) command line, not %s's", cmd);
  if (!strcmp(cmd, "report")) return report(o.model, dot, &ro);  // the "model" argument is the project directory
  if (!strcmp(cmd, "train")) {
    struct stat st;
    if (!o.out && (o.nmore || stat(o.model, &st) || !S_ISDIR(st.st_mode)))
      bad_usage("%s", "train needs -o MODEL.json (without it, one cache directory: its own model is trained)");
    const char **in = xcalloc((size_t)o.nmore + 1, sizeof *in);
    in[0] = o.model;
    for (int i = 0; i < o.nmore; i++) in[i + 1] = o.more[i];
    int rc = cmd_train(in, o.nmore + 1, o.out, o.seed, o.quiet);
    free(in), free(o.more);
    return rc;
  }
  const Target *target;
  int shard_i, shard_n;
  const Method *method;
  if (check_compile_options(&o, cmd, &target, &method, &shard_i, &shard_n)) return 2;
  if (o.dry_run) return 0;  // the options are fine; nothing read, nothing written
  bool pipe = !strcmp(cmd, "pipeline");
  SearchOpts so = {.method = method, .target = target, .beam = o.beam, .budget = o.budget, .jobs = o.jobs, .runs = o.runs, .build_limit_s = o.build_limit,
                   .records = o.records, .kernels = o.kernels, .quiet = o.quiet, .tf32 = o.tf32, .compile_only = o.compile_only, .seed = o.seed,
                   .model = o.model_file, .measure = o.measure, .shard_i = shard_i, .shard_n = shard_n,
                   .from_raw = o.from && !strcmp(o.from, "raw")};
  SearchInfo info = {0};
  char cache_dir[4096];
  if (!o.no_cache && o.cache) so.cache_dir = o.cache;
  else if (!o.no_cache) {
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (x && *x) snprintf(cache_dir, sizeof cache_dir, "%s/fluxcc", x), so.cache_dir = cache_dir;
    else if (h && *h) snprintf(cache_dir, sizeof cache_dir, "%s/.cache/fluxcc", h), so.cache_dir = cache_dir;
  }

  if (pipe) {
    EmitOpts eo = {.out_dir = o.out, .method = method, .target = target, .argc = argc, .argv = argv,
                   .search = method->kind != METHOD_FIXED ? &info : NULL};
    PipelineOpts po = {.method = method, .search = &so, .info = &info, .max_errors = o.max_errors ? o.max_errors : 1, .no_reuse = o.no_reuse,
                       .tile_n = o.tile_n ? o.tile_n : method->tile_n, .quiet = o.quiet, .seed = o.seed, .tf32 = o.tf32,
                       .fp8 = o.weights != NULL};
    return cmd_pipeline(o.stage_file, &po, &eo);
  }
  Ctx c;
  ctx_init(&c);
  c.max_errors = o.max_errors ? o.max_errors : 1;
  c.no_reuse = o.no_reuse;
  int rc;
  if (o.dump && !strcmp(o.dump, "ast")) {
    int fi = diag_load_file(&c, o.model, -1);
    Ast *items = fi >= 0 ? parse_file(&c, fi) : NULL;
    if (items) ast_dump(&c, items, stdout);
    if (c.nerrors >= c.max_errors) fprintf(stderr, "fluxcc: too many errors, stopping\n");
    rc = c.nerrors ? 1 : 0;
    ctx_free(&c);
    return rc;
  }
  double t0 = now_s();
  if (elaborate(&c, o.model)) {
    ctx_free(&c);
    return 1;
  }
  if (o.time) fprintf(stderr, "elaborate: %.1f ms, %d nodes, %d buffers\n", 1e3 * (now_s() - t0), c.g.nodes.n, c.g.bufs.n);
  if (!*cmd && o.weights && !weights_fp8(&c) && !o.quiet)   // (checked above: a compile's --weights is fp8)
    fprintf(stderr, "fluxcc: warning: --weights fp8: %s has no linear weight to store as fp8\n", o.model);
  bool kernels = (o.dump && strcmp(o.dump, "graph")) || (!*cmd && !o.dump);
  const char *slash = strrchr(o.model, '/'), *title = slash ? slash + 1 : o.model;  // pictures: the same from any path
  if (o.dump && !strcmp(o.dump, "graph")) {
    if (dot) dot_graph(&c, title, stdout);
    else graph_dump(&c, stdout);
    rc = 0;
  } else if (kernels) rc = compile_kernels(&c, &o, target, method, &so, &info, title, dot, argc, argv);
  else if (!strcmp(cmd, "params")) rc = cmd_params(&c);
  else if (!strcmp(cmd, "compare")) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    CompareOpts co = {.target = target, .budget = o.budget, .beam = o.beam, .bench = o.bench, .seed = o.seed,
                      .cache = so.cache_dir, .methods = o.methods, .tf32 = o.tf32, .quiet = o.quiet, .from_raw = so.from_raw};
    rc = compare(&c, n > 0 ? self : argv[0], o.model, o.out, &co);
  }
  else if (!strcmp(cmd, "init")) rc = cmd_init(&c, &o);
  else rc = cmd_run(&c, &o);
  ctx_free(&c);
  return rc;
}
