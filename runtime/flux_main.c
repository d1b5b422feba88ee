// flux_main.c — the host program of a project emitted by fluxcc.
//
// It loads (or generates) parameters and inputs, runs the launches of the
// generated schedule (schedule.c) on a device through backend.h, and then
// writes, checks and times the outputs. The same file serves every target.
//
// Exit status: 0 ok, 1 --check failed, 2 bad usage or bad input (files,
// keys, shapes, or an inconsistent schedule), 3 device error.
#define _POSIX_C_SOURCE 200809L

#include "backend.h"
#include "flux_rt.h"
#include "numbers.h"
#include "safetensors.h"
#include "image_png.h"
#include "sampler.h"
#include "tokenizer.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_CHECK = 1, EXIT_USAGE = 2, EXIT_DEVICE = 3 };

// A project defines rt_schedule (one program) or rt_pipeline (several):
// the other stays a null weak reference.
#pragma weak rt_schedule
#pragma weak rt_pipeline

// Offsets of parameters and inputs inside their pools. OpenCL passes every
// buffer as a sub-buffer, whose origin must be a multiple of the device's
// CL_DEVICE_MEM_BASE_ADDR_ALIGN: 4096 bits (512 bytes) on NVIDIA.
#define PACK_ALIGN 512
#define BLOCK_ALIGN 4096  // where each pool starts in the device memory (a multiple of PACK_ALIGN)

#define MAX_MESSAGES 20
#define MAX_BINDS 16

static const char *const dt_name[] = {"bool", "f16", "bf16", "f32"};
static const char *const dt_st[] = {"BOOL", "F16", "BF16", "F32"};
static const int dt_size[] = {1, 2, 2, 4};
static const char *const kind_name[] = {"input", "parameter", "output", "temporary", "constant"};

static const char usage[] =
  "usage: ./flux [options]\n"
  "Runs the compiled model once on the device.\n"
  "\n"
  "  --weights W.safetensors   parameters from a file (float dtypes are converted);\n"
  "                            repeat it for several files, or name the shards'\n"
  "                            index (model.safetensors.index.json, HF layout)\n"
  "  --random-weights SEED     seeded random parameters, as `fluxcc init --seed SEED`\n"
  "  --inputs I.safetensors    model inputs from a file\n"
  "  --random-inputs SEED      seeded random inputs, as `fluxcc init --seed SEED`\n"
  "  --out O.safetensors       write the outputs (and say so: path, tensors, bytes)\n"
  "  --check REF.safetensors   compare the outputs with a reference: fail when an\n"
  "                            output has NaN/inf or relative L2 error > rtol\n"
  "  --rtol R                  relative L2 tolerance (default 1e-5 for f32\n"
  "                            outputs, 2e-2 otherwise)\n"
  "  --atol A                  also fail when the max absolute error > A\n"
  "  --bench N                 time N forwards after one warm-up\n"
  "  --steps N                 sample: N Euler steps of BFL's denoise from the input\n"
  "                            `img` as the noise (seeded N(0,1), or from --inputs),\n"
  "                            the model's `out` as the velocity; the schedule shifted\n"
  "                            when the model has a `guidance` input (dev), as BFL's\n"
  "                            get_schedule; --out and --check then hold `latents`,\n"
  "                            the final img\n"
  "  --png FILE                write the output `image` ([1, 3 or 1, H, W], about\n"
  "                            [-1, 1]) as an 8-bit PNG, as BFL's code makes pixels:\n"
  "                            clamp to [-1, 1], then 127.5 (x + 1) truncated\n"
  "  --model-dir M             the weights (and with --prompt the tokenizer) from a\n"
  "                            checkpoint folder of the Hugging Face layout, where\n"
  "                            the model's checkpoint() puts them (M/text_encoder/\n"
  "                            model.safetensors, or its .index.json for shards)\n"
  "  --input NAME=FILE[:TENSOR]  the input NAME from tensor TENSOR (default NAME) of\n"
  "                            FILE, over --inputs or the random ones; repeatable:\n"
  "                            one program's output into the next one's input\n"
  "                            (--input txt=t5.safetensors:hidden)\n"
  "  --prompt TEXT             fill the input `tokens` ([B, T] ids) from TEXT, every row\n"
  "                            the same: T ids as transformers' tokenizer makes them\n"
  "                            for FLUX (truncated to T, end token, padding to T)\n"
  "  --tokenizer DIR           with --prompt: the checkpoint's tokenizer folder, T5's\n"
  "                            (spiece.model: SentencePiece, then the end token, pad\n"
  "                            to T) or CLIP's (vocab.json, merges.txt; the pad token\n"
  "                            from special_tokens_map.json where present)\n"
  "  --guidance G              with --steps, for a model with a `guidance` input: its\n"
  "                            value at every step (default 3.5)\n"
  "  --graph                   with --bench on CUDA: replay a CUDA Graph of the forward\n"
  "  --profile N               run each launch alone N times (after the forward) and\n"
  "                            print each launch's median device time (kernel N name\n"
  "                            [grid] [block] takes X ms, Y GFLOPS, Z GB/s), then each\n"
  "                            unique kernel's total and share of the forward\n"
  "  --trace FILE              write the profile as a Chrome/Perfetto trace (JSON);\n"
  "                            --profile 5 unless given\n"
  "  --quiet                   no summary, no confirmation of --out\n"
  "  --allow-edited            run kernel files changed since fluxcc wrote them\n"
  "                            (otherwise refused by name: schedule.c holds each\n"
  "                            file's content hash); FLUX_ALLOW_EDITED_KERNELS=1 too\n"
  "  --help                    this text\n"
  "\n"
  "Without --weights/--inputs, random ones are made from the schedule's default\n"
  "seed. The device memory outputs and temporaries live in is filled with 0xFF\n"
  "(NaN) before the forward, so an element no kernel writes fails --check.\n"
  "Kernel files are looked up next to the executable, or in $FLUX_DIR.\n"
  "FLUX_SYNC=1 waits after every launch, to name the launch of a device error.\n"
  "\n"
  "Exit status: 0 ok, 1 check failed, 2 bad usage or bad input, 3 device error.\n";

static const char usage_pipeline[] =
  "usage: ./flux [--prompt TEXT] [--model-dir M | --random-weights SEED] [--steps N]\n"
  "              [--guidance G] [--seed S] [--width W --height H] [-o IMAGE.png]\n"
  "              [--stages DIR] [--quiet]\n"
  "Runs the pipeline's programs in order (fluxcc pipeline): the text encoders on\n"
  "the prompt, the transformer sampled from seeded noise, the decoder to a PNG.\n"
  "Each program's weights are loaded, it runs, and its device memory is freed\n"
  "before the next one starts.\n"
  "\n"
  "  --prompt TEXT             the text; each text encoder's tokenizer from --model-dir\n"
  "                            (without it, the token ids are random)\n"
  "  --model-dir M             a checkpoint folder of the Hugging Face layout of\n"
  "                            FLUX.1's repositories: each program reads its weights\n"
  "                            (or their shards' .index.json) and tokenizer where its\n"
  "                            checkpoint() says; every missing file is named\n"
  "  --random-weights SEED     seeded random parameters instead\n"
  "  --steps N                 Euler steps (default 4 for a model without a guidance\n"
  "                            input, as FLUX.1 [schnell]; 50 with one, as [dev])\n"
  "  --guidance G              for a model with a `guidance` input (default 3.5)\n"
  "  --width W, --height H     the image's size: only the one the models were compiled\n"
  "                            for (this binary says which when asked for another)\n"
  "  --seed S                  the noise (and any other random input; default 1):\n"
  "                            fluxcc's generator (numbers.h), as `fluxcc init --seed S`\n"
  "  -o IMAGE.png              the decoder's `image` as an 8-bit PNG\n"
  "  --stages DIR              also write each program's outputs (a sampled one's\n"
  "                            `latents`) as DIR/NAME.safetensors\n"
  "  --quiet                   only errors\n"
  "  --allow-edited            run kernel files changed since fluxcc wrote them\n"
  "\n"
  "Resolution and token counts are compile-time constants of the models.\n"
  "Exit status: 0 ok, 2 bad usage or bad input, 3 device error.\n";

typedef struct {
  const char *weights[ST_MAXFILES];  // --weights, each a file or a shard index
  int nweights;
  const char *inputs, *out, *check, *trace, *png;
  const char *prompt, *tokenizer;  // --prompt: the input `tokens` from a tokenizer
  const char *model_dir;           // --model-dir: weights and tokenizer where checkpoint() says
  const char *bind[MAX_BINDS];     // --input NAME=FILE[:TENSOR], as given
  int nbind;
  uint64_t wseed, iseed;
  int wrand, irand;          // seed given explicitly
  double rtol, atol;
  int has_rtol, has_atol;
  int bench, graph, quiet, profile;
  int sync, out_all;         // FLUX_SYNC, FLUX_OUT_ALL
  int allow_edited;
  int steps;                 // --steps: sample
  double guidance;
  int has_guidance;
  int pipeline;              // the binary is a pipeline: -o, --seed and --stages; no single-program options
  const char *stages;        // pipeline --stages DIR: each program's outputs as DIR/NAME.safetensors
  int width, height;         // pipeline --width / --height: must be the compiled ones
} Opts;

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "flux: error: out of memory (%zu bytes)\n", n);
    exit(EXIT_DEVICE);
  }
  return p;
}

void *rt_calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    fprintf(stderr, "flux: error: out of memory (%zu x %zu bytes)\n", n, size);
    exit(EXIT_DEVICE);
  }
  return p;
}

// ---------------------------------------------------------------------------
// Command line

static int parse_f64(const char *s, double *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v) || v < 0) return -1;
  *out = v;
  return 0;
}

static int bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "flux: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(./flux --help for usage)\n");
  return EXIT_USAGE;
}

static int takes_value(const char *a) {
  static const char *const opts[] = {"--weights", "--inputs", "--out", "--check", "--random-weights",
                                     "--random-inputs", "--rtol", "--atol", "--bench", "--profile", "--trace",
                                     "--steps", "--guidance", "--png", "--prompt", "--tokenizer", "--input", "--model-dir",
                                     "-o", "--seed", "--stages", "--width", "--height"};
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    if (!strcmp(a, opts[i])) return 1;
  return 0;
}

// Returns -1 to go on, else the exit status.
static int parse_args(int argc, char **argv, Opts *o, int pipeline, uint64_t seed_default) {
  memset(o, 0, sizeof *o);
  o->pipeline = pipeline;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(pipeline ? usage_pipeline : usage, stdout);
      return 0;
    } else if (pipeline && (!strcmp(a, "-o") || !strcmp(a, "--seed") || !strcmp(a, "--stages") || !strcmp(a, "--width") ||
                            !strcmp(a, "--height"))) {
      if (!v) return bad_usage("option '%s' needs a value", a);
      if (!strcmp(a, "-o")) o->png = v;
      else if (!strcmp(a, "--width") || !strcmp(a, "--height")) {
        if (nb_parse_int(v, 1, 1 << 20, a[2] == 'w' ? &o->width : &o->height)) {
          char m[400];
          snprintf(m, sizeof m, "%s wants a number of pixels (1 to 1048576), not '%.300s'", a, v);
          return bad_usage("%s", m);
        }
      }
      else if (!strcmp(a, "--stages")) o->stages = v;
      else if (nb_parse_u64(v, 0, UINT64_MAX, &o->iseed)) return bad_usage("--seed wants a decimal integer from 0 to 18446744073709551615, not '%s'", v);
      else o->irand = 1;
    } else if (!strcmp(a, "--graph")) {
      o->graph = 1, takes = 0;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = 1, takes = 0;
    } else if (!strcmp(a, "--allow-edited")) {
      o->allow_edited = 1, takes = 0;
    } else if (strncmp(a, "--", 2)) {
      return bad_usage("unexpected argument '%s'", a);
    } else if (!v && takes_value(a)) {
      return bad_usage("option '%s' needs a value", a);
    } else if (!strcmp(a, "--weights")) {
      if (o->nweights == ST_MAXFILES) return bad_usage("--weights: more than 64 files ('%s')", v);
      o->weights[o->nweights++] = v;
    } else if (!strcmp(a, "--inputs")) {
      o->inputs = v;
    } else if (!strcmp(a, "--out")) {
      o->out = v;
    } else if (!strcmp(a, "--check")) {
      o->check = v;
    } else if (!strcmp(a, "--random-weights")) {
      if (nb_parse_u64(v, 0, UINT64_MAX, &o->wseed)) return bad_usage("--random-weights wants a decimal integer seed from 0 to 18446744073709551615, not '%s'", v);
      o->wrand = 1;
    } else if (!strcmp(a, "--random-inputs")) {
      if (nb_parse_u64(v, 0, UINT64_MAX, &o->iseed)) return bad_usage("--random-inputs wants a decimal integer seed from 0 to 18446744073709551615, not '%s'", v);
      o->irand = 2;   // (2: --random-inputs, 1: a pipeline's --seed)
    } else if (!strcmp(a, "--rtol")) {
      if (parse_f64(v, &o->rtol)) return bad_usage("--rtol wants a non-negative number, not '%s'", v);
      o->has_rtol = 1;
    } else if (!strcmp(a, "--atol")) {
      if (parse_f64(v, &o->atol)) return bad_usage("--atol wants a non-negative number, not '%s'", v);
      o->has_atol = 1;
    } else if (!strcmp(a, "--bench")) {
      if (nb_parse_int(v, 1, 1000000, &o->bench)) return bad_usage("--bench wants a decimal integer from 1 to 1000000, not '%s'", v);
    } else if (!strcmp(a, "--trace")) {
      o->trace = v;
    } else if (!strcmp(a, "--png")) {
      o->png = v;
    } else if (!strcmp(a, "--input")) {
      if (o->nbind == MAX_BINDS) return bad_usage("--input: more than 16 ('%s')", v);
      if (!strchr(v, '=') || v[0] == '=' || !strchr(v, '=')[1]) return bad_usage("--input wants NAME=FILE[:TENSOR], not '%s'", v);
      o->bind[o->nbind++] = v;
    } else if (!strcmp(a, "--prompt")) {
      o->prompt = v;
    } else if (!strcmp(a, "--tokenizer")) {
      o->tokenizer = v;
    } else if (!strcmp(a, "--model-dir")) {
      o->model_dir = v;
    } else if (!strcmp(a, "--steps")) {
      if (nb_parse_int(v, 1, SMP_MAX_STEPS, &o->steps)) return bad_usage("--steps wants a decimal integer from 1 to 1000, not '%s'", v);
    } else if (!strcmp(a, "--guidance")) {
      if (parse_f64(v, &o->guidance)) return bad_usage("--guidance wants a non-negative number, not '%s'", v);
      o->has_guidance = 1;
    } else if (!strcmp(a, "--profile")) {
      if (nb_parse_int(v, 1, 1000, &o->profile)) return bad_usage("--profile wants a decimal integer from 1 to 1000, not '%s'", v);
    } else {
      return bad_usage("unknown option '%s'", a);
    }
    i += takes;
  }
  const char *const flags[] = {"FLUX_SYNC", "FLUX_OUT_ALL", "FLUX_ALLOW_EDITED_KERNELS"};
  int edited = 0, *const to[] = {&o->sync, &o->out_all, &edited};
  for (int i = 0; i < 3; i++) {
    const char *e = getenv(flags[i]);
    if (e && *e && nb_parse_int(e, 0, 1, to[i])) {
      fprintf(stderr, "flux: error: %s='%s': wants 0 or 1\n", flags[i], e);
      return EXIT_USAGE;
    }
  }
  o->allow_edited |= edited;
  if (pipeline && (o->nweights || o->inputs || o->irand > 1 || o->out || o->check || o->bench || o->profile || o->trace || o->graph ||
                   o->nbind || o->tokenizer))
    return bad_usage("%s", "this binary is a pipeline (fluxcc pipeline): --weights, --inputs, --random-inputs, --input, --tokenizer, "
                           "--out, --check, --bench, --profile, --trace and --graph are for one program's binary; see --help");
  if (pipeline) return -1;   // (its checks and defaults: run_pipeline)
  if (o->nweights && o->wrand) return bad_usage("%s", "--weights and --random-weights exclude each other");
  if (o->inputs && o->irand) return bad_usage("%s", "--inputs and --random-inputs exclude each other");
  if ((o->has_rtol || o->has_atol) && !o->check) return bad_usage("%s", "--rtol and --atol need --check");
  if (o->graph && !o->bench) return bad_usage("%s", "--graph needs --bench");
  if (o->has_guidance && !o->steps) return bad_usage("%s", "--guidance needs --steps");
  if (o->png && o->steps) return bad_usage("%s", "--png writes the output `image`; --steps samples latents: not both");
#ifndef FLUX_PNG
  if (o->png) return bad_usage("%s", "--png: this binary was built without libpng (install libpng-dev and pkg-config, then make clean all)");
#endif
  if (o->prompt && !o->tokenizer && !o->model_dir) return bad_usage("%s", "--prompt needs --tokenizer DIR (the checkpoint's tokenizer folder: spiece.model, or vocab.json and merges.txt) or --model-dir");
  if (o->model_dir && (o->nweights || o->wrand)) return bad_usage("%s", "--model-dir gives the weights; --weights and --random-weights exclude it");
  if (o->tokenizer && !o->prompt) return bad_usage("%s", "--tokenizer needs --prompt TEXT");
  if (o->steps && (o->bench || o->profile || o->trace)) return bad_usage("%s", "--steps samples; --bench, --profile and --trace time one forward: not both");
  if (!o->has_guidance) o->guidance = 3.5;
  if (o->trace && !o->profile) o->profile = 5;
  if (!o->wrand) o->wseed = seed_default;
  if (!o->irand) o->iseed = seed_default;
  return -1;
}

// ---------------------------------------------------------------------------
// Buffers

static int64_t numel(const RtBuffer *b) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) n *= b->shape[i];
  return n;
}

static void shape_text(const int64_t *shape, int ndim, char *out, size_t n) {
  size_t o = (size_t)snprintf(out, n, "[");
  for (int i = 0; i < ndim && o < n; i++)
    o += (size_t)snprintf(out + o, n - o, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (o < n) snprintf(out + o, n - o, "]");
}

// A name from a file, made safe for a one-line message.
static const char *safe(const char *s, char *buf, size_t n) {
  size_t i = 0;
  for (; s[i] && i + 4 < n && i < 200; i++)
    buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  if (s[i]) { memcpy(buf + i, "...", 3); i += 3; }
  buf[i] = 0;
  return buf;
}

// Storage codes of the file dtypes we read: RT_BOOL..RT_F32, then F64.
enum { SRC_F64 = RT_F32 + 1 };

static int src_code(const char *st) {
  for (int i = 0; i <= RT_F32; i++)
    if (!strcmp(st, dt_st[i])) return i;
  return !strcmp(st, "F64") ? SRC_F64 : -1;
}

static double load(int code, const void *p, int64_t i) {
  const unsigned char *b = p;
  uint16_t h;
  float f;
  double d;
  switch (code) {
  case RT_BOOL: return b[i] != 0;
  case RT_F16: memcpy(&h, b + 2 * i, 2); return f16_to_f32(h);
  case RT_BF16: memcpy(&h, b + 2 * i, 2); return bf16_to_f32(h);
  case RT_F32: memcpy(&f, b + 4 * i, 4); return f;
  case SRC_F64: memcpy(&d, b + 8 * i, 8); return d;
  }
  return 0;
}

// As fluxcc's dtype_store, so that random data matches `fluxcc init`.
static void store(int dt, void *p, int64_t i, double x) {
  unsigned char *b = p;
  uint16_t h;
  float f;
  switch (dt) {
  case RT_BOOL: b[i] = x != 0; break;
  case RT_F16: h = f32_to_f16((float)x); memcpy(b + 2 * i, &h, 2); break;
  case RT_BF16: h = f32_to_bf16((float)x); memcpy(b + 2 * i, &h, 2); break;
  case RT_F32: f = (float)x; memcpy(b + 4 * i, &f, 4); break;
  }
}

// Whether a file dtype can fill a buffer: floats from any float dtype,
// bool only from BOOL.
static int dtype_ok(int dt, int code) {
  if (dt == RT_BOOL) return code == RT_BOOL;
  return code >= RT_F16;
}

// The schedule comes from fluxcc, but a bad table would make the runtime
// read or write out of bounds: check it once.
static int check_schedule(const RtSchedule *s) {
  const char *fmt = NULL;
  int at = -1;
  for (int i = 0; i < s->nbufs && !fmt; i++) {
    const RtBuffer *b = &s->bufs[i];
    at = i;
    int64_t n = 1;
    int dims_ok = b->ndim >= 0 && b->ndim <= RT_MAXDIM;
    for (int k = 0; dims_ok && k < b->ndim; k++) {
      dims_ok = b->shape[k] >= 0 && (b->shape[k] == 0 || n <= INT64_MAX / 8 / b->shape[k]);
      n *= dims_ok ? b->shape[k] : 1;
    }
    if (!b->name) fmt = "buffer %d has no name";
    else if (b->kind < RT_INPUT || b->kind > RT_CONST) fmt = "buffer %d has a bad kind";
    else if ((b->kind == RT_CONST) != (b->data != NULL)) fmt = "buffer %d: a constant has values, nothing else does";
    else if (b->dtype < RT_BOOL || b->dtype > RT_F32) fmt = "buffer %d has a bad dtype";
    else if (!dims_ok) fmt = "buffer %d has a bad shape";
    else if (b->bytes != (uint64_t)n * (uint64_t)dt_size[b->dtype]) fmt = "buffer %d: bytes is not prod(shape) * itemsize";
    else if ((b->kind == RT_OUTPUT || b->kind == RT_TEMP) &&
             (b->offset > s->arena_bytes || b->bytes > s->arena_bytes - b->offset))
      fmt = "buffer %d lies outside the arena";
  }
  for (int i = 0; i < s->nkernels && !fmt; i++) {
    const RtKernel *k = &s->kernels[i];
    at = i;
    if (!k->name || !k->file) fmt = "kernel %d has no name or file";
    else if (k->nargs < 1 || k->nargs > RT_MAXARGS) fmt = "kernel %d has a bad argument count";
    for (int d = 0; d < 3 && !fmt; d++)
      if (!k->global[d] || !k->local[d]) fmt = "kernel %d has a zero global or local size";
  }
  for (int i = 0; i < s->nids && !fmt; i++) {
    at = i;
    if (s->ids[i].buf < 0 || s->ids[i].buf >= s->nbufs || s->bufs[s->ids[i].buf].kind != RT_INPUT || s->ids[i].rows < 1 ||
        !s->ids[i].table || !s->ids[i].where)
      fmt = "ids check %d names no input, or no table";
  }
  for (int i = 0; i < s->nlaunches && !fmt; i++) {
    const RtLaunch *l = &s->launches[i];
    at = i;
    if (l->kernel < 0 || l->kernel >= s->nkernels) fmt = "launch %d: kernel out of range";
    else if (l->args < 0) fmt = "launch %d: bad argument index";
    for (int j = 0; !fmt && j < s->kernels[l->kernel].nargs; j++) {
      int b = s->arg_bufs[l->args + j];
      if (b < 0 || b >= s->nbufs) fmt = "launch %d: argument buffer out of range";
    }
  }
  if (!fmt) return 0;
  fprintf(stderr, "flux: error: schedule.c: ");
  fprintf(stderr, fmt, at);
  fprintf(stderr, " (a fluxcc bug)\n");
  return -1;
}

// Parameters and inputs packed in their pools; outputs and temporaries where
// the schedule put them; the three pools one after the other in the block.
static void make_layout(const RtSchedule *s, Layout *L) {
  memset(L, 0, sizeof *L);
  L->pool = rt_calloc((size_t)s->nbufs, sizeof *L->pool);
  L->offset = rt_calloc((size_t)s->nbufs, sizeof *L->offset);
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    int p = b->kind == RT_PARAM || b->kind == RT_CONST ? POOL_PARAMS : b->kind == RT_INPUT ? POOL_INPUTS : POOL_ARENA;
    L->pool[i] = p;
    if (p == POOL_ARENA) {
      L->offset[i] = b->offset;
    } else {
      L->offset[i] = L->bytes[p];
      L->bytes[p] += (b->bytes + PACK_ALIGN - 1) / PACK_ALIGN * PACK_ALIGN;
    }
  }
  L->bytes[POOL_ARENA] = s->arena_bytes;
  for (int p = 0; p < NPOOLS; p++) {
    L->base[p] = L->total;
    L->total += (L->bytes[p] + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
  }
  if (L->total == 0) L->total = BLOCK_ALIGN;
}

// ---------------------------------------------------------------------------
// Files

// Opens a safetensors file and checks it against the buffers of one kind:
// every one present with its shape and a usable dtype, and (unless
// allow_extra) nothing else but parameters under the model's unused_keys
// prefixes. Prints up to MAX_MESSAGES problems.
// given[i] set: buffer i comes from elsewhere (--input, --prompt), so the file need not hold it.
static int open_checked(StSet *set, const char *const *paths, int npaths, const RtSchedule *s, int kind, int allow_extra,
                        void *const *given) {
  char err[1024], q[256], want[200], got[200];
  for (int i = 0; i < npaths; i++)
    if (st_set_add(set, paths[i], err, sizeof err)) {
      fprintf(stderr, "flux: error: %s\n", err);
      return -1;
    }
  // used[first[f] + k]: tensor k of file f matched a buffer
  int bad = 0, first[ST_MAXFILES + 1] = {0};
  for (int i = 0; i < set->n; i++) first[i + 1] = first[i] + set->f[i].n;
  char *used = rt_calloc((size_t)first[set->n], 1);
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    if (b->kind != kind) continue;
    shape_text(b->shape, b->ndim, want, sizeof want);
    int fi = 0;
    StTensor *t = st_set_find(set, b->name, &fi);
    if (!t && given && given[i]) continue;
    if (!t) {
      if (bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: missing %s '%s' (%s%s)\n", set->label, kind_name[kind], b->name,
                dt_name[b->dtype], want);
      continue;
    }
    const char *path = set->f[fi].path;
    used[first[fi] + (t - set->f[fi].t)] = 1;
    shape_text(t->shape, t->ndim, got, sizeof got);
    if (!dtype_ok(b->dtype, src_code(t->dtype))) {
      if (bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: %s '%s' has dtype %s; the model declares %s%s (%s)\n", path,
                kind_name[kind], b->name, t->dtype, dt_name[b->dtype], want,
                b->dtype == RT_BOOL ? "needs BOOL" : "needs F32, F16, BF16 or F64");
    } else if (strcmp(want, got)) {
      if (bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: %s '%s' has shape %s but the model declares %s%s\n", path,
                kind_name[kind], b->name, got, dt_name[b->dtype], want);
    } else {
      // NaN or infinity: a reference holding them cannot check anything (bad input, exit 2);
      // in weights or inputs they are the user's business, but said
      int64_t n = numel(b), nonfinite = 0, first = -1;
      for (int64_t k = 0; k < n; k++)
        if (!isfinite(load(src_code(t->dtype), t->data, k)) && nonfinite++ == 0) first = k;
      if (nonfinite && kind == RT_OUTPUT) {
        if (bad++ < MAX_MESSAGES)
          fprintf(stderr, "flux: error: %s: the reference for output '%s' holds %lld NaN/infinite values (first at element %lld): the reference is bad\n",
                  path, b->name, (long long)nonfinite, (long long)first);
      } else if (nonfinite) {
        fprintf(stderr, "flux: warning: %s: %s '%s' holds %lld NaN/infinite values (first at element %lld)\n", path,
                kind_name[kind], b->name, (long long)nonfinite, (long long)first);
      }
    }
  }
  for (int f = 0; f < set->n && !allow_extra; f++)
    for (int k = 0; k < set->f[f].n; k++) {
      const char *name = set->f[f].t[k].name;
      if (!used[first[f] + k] && !(kind == RT_PARAM && nb_has_prefix(name, s->unused, s->nunused)) && bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: unexpected tensor '%s': the model has no %s of that name\n", set->f[f].path,
                safe(name, q, sizeof q), kind_name[kind]);
    }
  if (bad > MAX_MESSAGES)
    fprintf(stderr, "flux: error: %s: ... and %d more problems\n", set->label, bad - MAX_MESSAGES);
  free(used);
  return bad ? -1 : 0;
}

// The bytes of buffer b in its dtype: from the file f if it is open (in
// place when the dtypes agree), else from the seeded generator. *tmp grows
// as needed.
static const void *values(const RtBuffer *b, StSet *f, uint64_t seed, void **tmp, uint64_t *cap) {
  int64_t n = numel(b);
  const StTensor *t = st_set_find(f, b->name, NULL);   // there if f has files: checked by open_checked
  int code = t ? src_code(t->dtype) : -1;
  if (t && code == b->dtype) return t->data;
  if (*cap < b->bytes) {
    free(*tmp);
    *tmp = xmalloc((size_t)b->bytes);
    *cap = b->bytes;
  }
  if (b->data) {
    for (int64_t k = 0; k < n; k++) store(b->dtype, *tmp, k, b->data[k]);
  } else if (t) {
    for (int64_t k = 0; k < n; k++) store(b->dtype, *tmp, k, load(code, t->data, k));
  } else {
    uint64_t st = nb_stream(seed, b->name);
    for (int64_t k = 0; k < n; k++)
      store(b->dtype, *tmp, k, nb_value(&st, b->init, b->ia, b->ib, b->kind == RT_PARAM, b->ndim, b->shape, k));
  }
  return *tmp;
}

// Inputs that are a gather's ids (RtIds): each a whole number in [0, rows),
// else an error naming the input, the element, its value and the table.
// (The kernels clamp ids into their table: a bad one would read a wrong row.)
static int check_ids(const RtSchedule *s, StSet *inf, void *const *over, uint64_t seed) {
  void *tmp = NULL;
  uint64_t cap = 0;
  int bad = 0;
  for (int q = 0; q < s->nids && !bad; q++) {
    const RtIds *c = &s->ids[q];
    const RtBuffer *b = &s->bufs[c->buf];
    const void *v = over[c->buf] ? over[c->buf] : values(b, inf, seed, &tmp, &cap);
    for (int64_t k = 0, n = numel(b); k < n && !bad; k++) {
      double x = load(b->dtype, v, k);
      if (x >= 0 && x < (double)c->rows && x == floor(x)) continue;
      char at[RT_MAXDIM * 24] = "", nb[256];
      int64_t idx[RT_MAXDIM], r = k;
      for (int d = b->ndim - 1; d >= 0; d--) idx[d] = r % b->shape[d], r /= b->shape[d];  // the element's index, row-major
      for (int d = 0, w = 0; d < b->ndim; d++) w += snprintf(at + w, sizeof at - (size_t)w, "%s%lld", d ? ", " : "", (long long)idx[d]);
      fprintf(stderr, "flux: error: input '%s' [%s] is %.9g, not a row of %s: it holds ids of its %lld rows (take at %s), "
              "whole numbers 0 to %lld\n", safe(b->name, nb, sizeof nb), at, x, c->table, (long long)c->rows, c->where,
              (long long)c->rows - 1);
      bad = 1;
    }
  }
  free(tmp);
  return bad;
}

// Uploading the buffers of one kind. Making the values is the slow part
// (FLUX.1 has 12e9 parameters at ~25 ns each), and every buffer has its own
// random stream, so threads make different buffers at once: the result is
// the same as with one thread. The device sees one upload at a time.
typedef struct {
  Dev *d;
  const RtSchedule *s;
  const Layout *L;
  int kind;
  StSet *f;
  uint64_t seed;
  pthread_mutex_t take, dev;   // guard next / the device and failed
  int next, failed;
} Uploader;

static void *upload_worker(void *arg) {
  Uploader *u = arg;
  void *tmp = NULL;
  uint64_t cap = 0;
  for (;;) {
    pthread_mutex_lock(&u->take);
    int i = u->next;
    while (i < u->s->nbufs && (u->s->bufs[i].kind != u->kind || u->s->bufs[i].bytes == 0)) i++;
    u->next = i + 1;
    pthread_mutex_unlock(&u->take);
    if (i >= u->s->nbufs) break;
    const void *src = values(&u->s->bufs[i], u->f, u->seed, &tmp, &cap);
    pthread_mutex_lock(&u->dev);
    if (!u->failed && dev_upload(u->d, u->L->pool[i], u->L->offset[i], src, u->s->bufs[i].bytes)) u->failed = 1;
    int stop = u->failed;
    pthread_mutex_unlock(&u->dev);
    if (stop) break;
  }
  free(tmp);
  return NULL;
}

static int upload_kind(Dev *d, const RtSchedule *s, const Layout *L, int kind, StSet *f, uint64_t seed) {
  Uploader u = {.d = d, .s = s, .L = L, .kind = kind, .f = f, .seed = seed};
  pthread_mutex_init(&u.take, NULL);
  pthread_mutex_init(&u.dev, NULL);
  long nt = sysconf(_SC_NPROCESSORS_ONLN), nbufs = 0;
  for (int i = 0; i < s->nbufs; i++) nbufs += s->bufs[i].kind == kind;
  if (nt > nbufs) nt = nbufs;
  if (nt > 64) nt = 64;
  int started = 0;
  pthread_t th[64];
  for (int i = 1; i < nt; i++)   // fewer threads if some cannot start: this one works too
    if (pthread_create(&th[started], NULL, upload_worker, &u) == 0) started++;
  upload_worker(&u);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_mutex_destroy(&u.take);
  pthread_mutex_destroy(&u.dev);
  return u.failed ? -1 : 0;
}

// ---------------------------------------------------------------------------
// Results

// FLUX_OUT_ALL=1 also writes every intermediate (compile with fluxcc
// --no-reuse so none is overwritten): kernels can then be compared one by one.
static int write_outputs(const RtSchedule *s, void **host, const char *path, int all, int quiet) {
  StTensor *ts = rt_calloc((size_t)s->nbufs, sizeof *ts);
  int n = 0;
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    if (b->kind != RT_OUTPUT && !(all && b->kind == RT_TEMP)) continue;
    StTensor *t = &ts[n++];
    t->name = (char *)b->name;
    snprintf(t->dtype, sizeof t->dtype, "%s", dt_st[b->dtype]);
    t->ndim = b->ndim;
    memcpy(t->shape, b->shape, sizeof t->shape);
    t->data = host[i];
  }
  char err[1024];
  int rc = st_write(path, n, ts, err, sizeof err);
  char said[4200];
  if (rc) fprintf(stderr, "flux: error: %s\n", err);
  else if (!quiet) printf("wrote:    %s\n", out_said(path, n, said, sizeof said));
  free(ts);
  return rc;
}

// One output against the reference: returns 1 if it passes.
static int check_output(const RtBuffer *b, const void *out, const StTensor *ref, const Opts *o) {
  int code = src_code(ref->dtype);
  int64_t n = numel(b), nonfinite = 0;
  double diff2 = 0, ref2 = 0, max_abs = 0, max_rel = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = load(b->dtype, out, i), r = load(code, ref->data, i), e = fabs(a - r);
    if (!isfinite(a)) {   // counted, and kept out of the errors so that they still say something
      nonfinite++;
      continue;
    }
    diff2 += e * e;
    ref2 += r * r;
    if (e > max_abs) max_abs = e;
    double rel = e / fmax(fabs(r), 1e-30);
    if (rel > max_rel) max_rel = rel;
  }
  double rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : diff2 == 0 ? 0 : INFINITY;
  double rtol = o->has_rtol ? o->rtol : b->dtype == RT_F32 ? 1e-5 : 2e-2;
  int ok = nonfinite == 0 && rel_l2 <= rtol && (!o->has_atol || max_abs <= o->atol);   // NaN fails
  printf("check %s: rel_l2=%.3e max_abs=%.3e max_rel=%.3e nonfinite=%lld  %s\n", b->name, rel_l2, max_abs, max_rel,
         (long long)nonfinite, ok ? "ok" : "FAIL");
  return ok;
}

static void print_stats(const RtBuffer *b, const void *out) {
  int64_t n = numel(b), bad = 0, good = 0;
  double sum = 0, sum2 = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    double v = load(b->dtype, out, i);
    if (!isfinite(v)) { bad++; continue; }
    good++;
    sum += v;
    sum2 += v * v;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  double mean = good ? sum / good : 0, var = good ? sum2 / good - mean * mean : 0;
  char sh[200];
  shape_text(b->shape, b->ndim, sh, sizeof sh);
  printf("output %s: %s%s mean=%.6g std=%.6g min=%.6g max=%.6g", b->name, dt_name[b->dtype], sh, mean,
         sqrt(var > 0 ? var : 0), good ? lo : 0, good ? hi : 0);
  if (bad) printf(" nonfinite=%lld", (long long)bad);
  printf("\n");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// The directory of the kernel files: $FLUX_DIR, else that of the executable.
static char *project_dir(void) {
  const char *env = getenv("FLUX_DIR");
  char buf[4096];
  if (env && *env) return strcpy(xmalloc(strlen(env) + 1), env);
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return strcpy(xmalloc(2), ".");
  buf[n] = 0;
  char *slash = strrchr(buf, '/');
  if (slash) *slash = 0;
  if (!buf[0]) strcpy(buf, "/");
  return strcpy(xmalloc(strlen(buf) + 1), buf);
}

// A file of the project is the one fluxcc wrote: its bytes' hash is
// schedule.c's, else it was edited (or is another compile's) and is refused
// by name (what), unless --allow-edited. 1: refused. (A missing file: OpenCL
// says so when it loads it; CUDA does not need it.)
static int verify_file(const char *dir, const char *file, uint64_t want, const char *what, int allow) {
  size_t plen = strlen(dir) + strlen(file) + 2;
  char *path = xmalloc(plen);
  snprintf(path, plen, "%s/%s", dir, file);
  FILE *f = fopen(path, "rb");
  uint64_t h = NB_FNV_SEED;
  char buf[65536];
  size_t n;
  while (f && (n = fread(buf, 1, sizeof buf, f)) > 0) h = nb_fnv(h, buf, n);
  int err = f ? ferror(f) : 0, bad = 0;
  if (f) fclose(f);
  if (f && !err && h != want) {
    fprintf(stderr, "flux: %s: %s (%s) is not the file fluxcc wrote: edited, or another compile's (content hash %016llx, "
            "schedule.c: %016llx)%s\n", allow ? "warning" : "error", path, what, (unsigned long long)h,
            (unsigned long long)want, allow ? "; running it as it is (--allow-edited)" : "; compile again, or --allow-edited");
    bad = !allow;
  }
  free(path);
  return bad;
}

// Every kernel file beside the binary, and the prelude they are built
// with, is what fluxcc wrote. (A CUDA binary holds its kernels, compiled by
// make from these files; OpenCL builds them from these files now.)
static int verify_kernel_files(const RtSchedule *s, const char *dir, int allow) {
  int bad = verify_file(dir, s->prelude, s->prelude_hash, "the kernels' prelude", allow);
  for (int k = 0; k < s->nkernels; k++) {
    const RtKernel *K = &s->kernels[k];
    if (k && !strcmp(K->file, s->kernels[k - 1].file)) continue;
    char what[160];
    snprintf(what, sizeof what, "kernel '%s'", K->name);
    bad |= verify_file(dir, K->file, K->hash, what, allow);
  }
  return bad ? -1 : 0;
}

// ---------------------------------------------------------------------------

// --profile N: every launch run alone N times and timed by the device (see
// dev_launch); per launch its median, in the study's line format, in launch
// order, then each unique kernel's total and share of the forward. The sum
// of medians leaves out what a forward overlaps or saves between launches:
// --bench times the forward itself. --trace FILE writes the same medians as a
// Chrome / Perfetto trace (chrome://tracing, ui.perfetto.dev), launches laid
// end to end.
static double median(double *t, int n) {  // sorts t
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

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
static int profile(Dev *d, const RtSchedule *s, int rounds, const char *trace, int quiet) {
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

// ---------------------------------------------------------------------------
// Sampling (--steps): BFL's denoise loop around the forward

typedef struct { int img, t, out, g; } SampleBufs;

static int find_buf(const RtSchedule *s, const char *name, int kind) {
  for (int i = 0; i < s->nbufs; i++)
    if (s->bufs[i].kind == kind && !strcmp(s->bufs[i].name, name)) return i;
  return -1;
}

// --model-dir M: the weights file (or its shards' index) and the tokenizer
// folder where the model's checkpoint() says, into o; -1 with each missing one named.
static int model_dir_paths(const RtSchedule *s, Opts *o, char *weights, char *tokenizer, size_t n) {
  if (!s->ckpt_weights) {
    fprintf(stderr, "flux: error: --model-dir: the model %s does not say where its weights are in a checkpoint (checkpoint() in its .fdsl); give --weights\n", s->model);
    return -1;
  }
  int bad = 0;
  snprintf(weights, n, "%s/%s", o->model_dir, s->ckpt_weights);
  if (access(weights, F_OK)) {
    snprintf(weights, n, "%s/%s.index.json", o->model_dir, s->ckpt_weights);
    if (access(weights, F_OK))
      fprintf(stderr, "flux: error: --model-dir %s: no %s (nor %s.index.json for shards): the weights of %s\n", o->model_dir,
              s->ckpt_weights, s->ckpt_weights, s->model), bad = 1;
  }
  o->weights[o->nweights++] = weights;
  if (o->prompt && !o->tokenizer) {
    snprintf(tokenizer, n, "%s/%s", o->model_dir, s->ckpt_tokenizer ? s->ckpt_tokenizer : "");
    if (!s->ckpt_tokenizer)
      fprintf(stderr, "flux: error: --prompt: the model %s names no tokenizer folder (checkpoint()); give --tokenizer\n", s->model), bad = 1;
    else if (access(tokenizer, F_OK))
      fprintf(stderr, "flux: error: --model-dir %s: no folder %s: the tokenizer of %s\n", o->model_dir, s->ckpt_tokenizer, s->model), bad = 1;
    o->tokenizer = tokenizer;
  }
  return bad ? -1 : 0;
}

// --input NAME=FILE[:TENSOR]: buffer *buf (an input) as host bytes in its
// dtype from a tensor of FILE of its shape, or NULL with a message. TENSOR is
// after the last ':' (NAME where there is none).
static void *bound_input(const RtSchedule *s, const char *spec, int *buf) {
  char name[256], file[4096], tensor[256], err[1024], want[200], got[200];
  const char *eq = strchr(spec, '='), *colon = strrchr(eq, ':');
  snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
  snprintf(file, sizeof file, "%.*s", (int)((colon ? colon : eq + strlen(eq)) - eq - 1), eq + 1);
  snprintf(tensor, sizeof tensor, "%s", colon && colon[1] ? colon + 1 : name);
  int i = *buf = find_buf(s, name, RT_INPUT);
  if (i < 0) {
    fprintf(stderr, "flux: error: --input %s: the model %s has no input '%s'; its inputs:", spec, s->model, name);
    for (int k = 0; k < s->nbufs; k++)
      if (s->bufs[k].kind == RT_INPUT) fprintf(stderr, " %s", s->bufs[k].name);
    fprintf(stderr, "\n");
    return NULL;
  }
  const RtBuffer *b = &s->bufs[i];
  StFile f;
  if (st_open(&f, file, err, sizeof err)) {
    fprintf(stderr, "flux: error: --input %s: %s\n", spec, err);
    return NULL;
  }
  const StTensor *t = st_find(&f, tensor);
  void *x = NULL;
  shape_text(b->shape, b->ndim, want, sizeof want);
  if (t) shape_text(t->shape, t->ndim, got, sizeof got);
  if (!t) fprintf(stderr, "flux: error: --input %s: %s has no tensor '%s'\n", spec, file, tensor);
  else if (!dtype_ok(b->dtype, src_code(t->dtype)) || strcmp(want, got))
    fprintf(stderr, "flux: error: --input %s: %s '%s' is %s%s; the input '%s' is %s%s\n", spec, file, tensor, t->dtype, got,
            name, dt_name[b->dtype], want);
  else {
    x = xmalloc((size_t)b->bytes);
    for (int64_t k = 0; k < numel(b); k++) store(b->dtype, x, k, load(src_code(t->dtype), t->data, k));
  }
  st_close(&f);
  return x;
}

// --prompt: the input `tokens` ([B, T], every row the prompt's T ids) as host
// bytes in its dtype, or NULL with a message. Ids must be below the model's
// vocabulary, where the model says it (`~ integers(0, VOCAB)`).
static void *prompt_tokens(const RtSchedule *s, const Opts *o, int *buf, int quiet) {
  *buf = find_buf(s, "tokens", RT_INPUT);
  const RtBuffer *b = *buf >= 0 ? &s->bufs[*buf] : NULL;
  if (!b || b->ndim != 2 || b->dtype == RT_BOOL || b->shape[1] < 2 || b->shape[1] > 1 << 20) {
    fprintf(stderr, "flux: error: --prompt needs an input `tokens` shaped [B, T] (T from 2) of a float dtype; the model %s has not\n", s->model);
    return NULL;
  }
  char err[1024];
  const TokKind *k = tok_kind(NULL, o->tokenizer, err, sizeof err);
  void *t = k ? k->open(o->tokenizer, err, sizeof err) : NULL;
  int n = (int)b->shape[1];
  int32_t *ids = rt_calloc((size_t)n, sizeof *ids);
  void *x = NULL;
  if (!t || k->encode(t, o->prompt, ids, n, err, sizeof err)) {
    fprintf(stderr, "flux: error: %s\n", err);
    goto out;
  }
  int lead = n;   // the ids before the trailing run of ids[n - 1] (CLIP's pad is its end token, T5's is not)
  while (lead > 0 && ids[lead - 1] == ids[n - 1]) lead--;
  for (int i = 0; i < n; i++)
    if (b->init == RT_INIT_INTEGERS && (ids[i] < b->ia || ids[i] >= b->ib)) {
      fprintf(stderr, "flux: error: %s: token id %d is outside the model's vocabulary [%.0f, %.0f): this tokenizer is not the model's\n",
              o->tokenizer, ids[i], b->ia, b->ib);
      goto out;
    }
  x = xmalloc((size_t)b->bytes);
  for (int64_t e = 0; e < numel(b); e++) store(b->dtype, x, e, ids[e % n]);
  if (!quiet) printf("prompt:   %d of %d ids before the trailing run of id %d (%s, %s)\n", lead, n, ids[n - 1], k->name, o->tokenizer);
out:
  if (t) k->close(t);
  free(ids);
  return x;
}

static int same_shape(const RtBuffer *a, const RtBuffer *b) {
  return a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

// The model's sampling interface, or a message naming what is missing.
static int sample_bufs(const RtSchedule *s, SampleBufs *sb) {
  sb->img = find_buf(s, "img", RT_INPUT), sb->t = find_buf(s, "timesteps", RT_INPUT);
  sb->out = find_buf(s, "out", RT_OUTPUT), sb->g = find_buf(s, "guidance", RT_INPUT);
  const char *why = NULL;
  if (sb->img < 0 || sb->t < 0 || sb->out < 0) why = "an input `img`, an input `timesteps` and an output `out`";
  else if (s->bufs[sb->img].ndim != 3 || s->bufs[sb->img].dtype == RT_BOOL) why = "`img` as float [B, tokens, channels]";
  else if (!same_shape(&s->bufs[sb->img], &s->bufs[sb->out]) || s->bufs[sb->img].dtype != s->bufs[sb->out].dtype)
    why = "`out` of img's shape and dtype (the velocity)";
  else if (s->bufs[sb->t].ndim != 1 || s->bufs[sb->t].shape[0] != s->bufs[sb->img].shape[0] || s->bufs[sb->t].dtype == RT_BOOL)
    why = "`timesteps` as float [B]";
  else if (sb->g >= 0 && !same_shape(&s->bufs[sb->g], &s->bufs[sb->t])) why = "`guidance` shaped as `timesteps`";
  if (why) fprintf(stderr, "flux: error: --steps needs %s; the model %s has not\n", why, s->model);
  return why ? -1 : 0;
}

// The latents as a buffer description: img's dtype and shape, named `latents`.
static RtBuffer latents_buf(const RtSchedule *s, const SampleBufs *sb) {
  RtBuffer b = s->bufs[sb->img];
  b.name = "latents";
  b.kind = RT_OUTPUT;
  return b;
}

// every element of a [B] float buffer set to v (rounded to its dtype)
static int upload_scalar(Dev *d, const RtSchedule *s, const Layout *L, int i, double v, void *tmp) {
  const RtBuffer *b = &s->bufs[i];
  for (int64_t k = 0; k < b->shape[0]; k++) store(b->dtype, tmp, k, v);
  return dev_upload(d, L->pool[i], L->offset[i], tmp, b->bytes);
}

// Steps t[0] -> t[1] -> ... -> t[steps]: each runs the forward at t[k] and
// moves img by (t[k+1] - t[k]) * out. x (img's bytes) ends as the latents.
static int sample(Dev *d, const RtSchedule *s, const Layout *L, const Opts *o, const SampleBufs *sb, void *x) {
  const RtBuffer *bi = &s->bufs[sb->img], *bo = &s->bufs[sb->out];
  double *t = rt_calloc((size_t)o->steps + 1, sizeof *t);
  void *pred = xmalloc((size_t)bo->bytes), *tmp = xmalloc(16 * (size_t)bi->shape[0]);
  int rc = -1;
  smp_schedule(o->steps, sb->g >= 0, bi->shape[1], t);
  if (dev_download(d, L->pool[sb->img], L->offset[sb->img], x, bi->bytes)) goto out;
  if (sb->g >= 0 && upload_scalar(d, s, L, sb->g, o->guidance, tmp)) goto out;
  if (!o->quiet) {
    printf("sampling: %d steps, schedule %s", o->steps, sb->g >= 0 ? "shifted (dev)" : "linear (schnell)");
    if (sb->g >= 0) printf(", guidance %g", o->guidance);
    printf("\n");
  }
  double t0 = now_ms();
  for (int k = 0; k < o->steps; k++) {
    double t1 = now_ms();
    if (upload_scalar(d, s, L, sb->t, t[k], tmp) || dev_forward(d, o->sync) ||
        dev_download(d, L->pool[sb->out], L->offset[sb->out], pred, bo->bytes))
      goto out;
    // img + (t_prev - t_curr) * pred: the python-float step a float32 scalar, the product rounded, then the sum
    float h = (float)(t[k + 1] - t[k]);
    for (int64_t i = 0, n = numel(bi); i < n; i++)
      store(bi->dtype, x, i, (float)load(bi->dtype, x, i) + smp_round(bi->dtype, h * (float)load(bi->dtype, pred, i)));
    if (dev_upload(d, L->pool[sb->img], L->offset[sb->img], x, bi->bytes)) goto out;
    if (!o->quiet) printf("step %d/%d: t %.4f -> %.4f, %.1f ms\n", k + 1, o->steps, t[k], t[k + 1], now_ms() - t1);
    fflush(stdout);
  }
  if (!o->quiet) printf("sampled:  %.1f ms in all\n", now_ms() - t0);
  rc = 0;
out:
  free(t);
  free(pred);
  free(tmp);
  return rc;
}

// ---------------------------------------------------------------------------
// A pipeline's tensors between programs, and what each stage took

typedef struct {
  const char *prog;         // the program that made it
  RtBuffer b;               // its name, dtype and shape
  void *data;
} HeldTensor;

typedef struct {
  HeldTensor t[32];
  int n;
  double ms[16];            // per stage: wall time, files to outputs
} Held;

static void held_add(Held *h, const char *prog, const RtBuffer *b, const void *data) {
  if (h->n == (int)(sizeof h->t / sizeof *h->t)) return;  // (fluxcc's stages have 1 to 3 outputs each)
  HeldTensor *t = &h->t[h->n++];
  t->prog = prog, t->b = *b, t->data = xmalloc((size_t)b->bytes);
  memcpy(t->data, data, (size_t)b->bytes);
}

// the input bind->input of program prog, from the output it is bound to, as
// host bytes in its dtype; NULL with a message
static void *held_input(const RtSchedule *s, const RtBind *bind, const Held *h, const char *from, int *buf) {
  const HeldTensor *t = NULL;
  for (int k = 0; k < h->n && !t; k++)
    if (!strcmp(h->t[k].prog, from) && !strcmp(h->t[k].b.name, bind->output)) t = &h->t[k];
  int i = *buf = find_buf(s, bind->input, RT_INPUT);
  if (!t || i < 0 || !same_shape(&t->b, &s->bufs[i]) || t->b.dtype == RT_BOOL) {
    fprintf(stderr, "flux: error: pipeline.c: %s's input '%s' from %s's '%s': %s (a fluxcc bug)\n", s->model, bind->input, from,
            bind->output, !t ? "no such output was made" : i < 0 ? "no such input" : "the shapes differ");
    return NULL;
  }
  const RtBuffer *b = &s->bufs[i];
  void *x = xmalloc((size_t)b->bytes);
  for (int64_t k = 0; k < numel(b); k++) store(b->dtype, x, k, load(t->b.dtype, t->data, k));
  return x;
}

// One program, as the options say: its files checked, the device opened, the
// weights and inputs uploaded, the forward run (or sampled), the outputs
// written, checked and timed, the device closed. In a pipeline, prog is the
// program: its bound inputs come from held, and its outputs (a sampled
// program's `latents`) go there; held also keeps each stage's time and memory;
// m is the pipeline's device memory (NULL: the program opens its own).
static int run_program(const RtSchedule *s, Opts *oo, const RtProgram *prog, Held *held, DevMem *m) {
  Opts o = *oo;
  if (check_schedule(s)) return EXIT_USAGE;

  // Everything that can be checked without a device first: bad files fail
  // fast, before kernels are built.
  int status = EXIT_USAGE;
  double start = now_ms();
  Layout L;
  make_layout(s, &L);
  StSet *sets = rt_calloc(3, sizeof *sets), *wf = &sets[0], *inf = &sets[1], *ref = &sets[2];
  Dev *d = NULL;
  void **host = rt_calloc((size_t)s->nbufs, sizeof *host);
  double *ms = NULL;
  char *dir = project_dir();
  int bad = 0;
  void **over = rt_calloc((size_t)s->nbufs, sizeof *over);   // inputs from --input and --prompt
  static char md_weights[4096], md_tokenizer[4096];
  if (o.model_dir && model_dir_paths(s, &o, md_weights, md_tokenizer, sizeof md_weights)) goto done;
  int nheld = prog ? prog->nbinds : 0;
  for (int k = 0; k < o.nbind + !!o.prompt + nheld; k++) {   // --input, the prompt's tokens, an earlier program's outputs
    int i = -1, h = k - o.nbind - !!o.prompt;
    void *x = k < o.nbind ? bound_input(s, o.bind[k], &i)
            : h < 0       ? prompt_tokens(s, &o, &i, o.quiet)
                          : held_input(s, &prog->binds[h], held, rt_pipeline.programs[prog->binds[h].from].name, &i);
    if (!x) goto done;
    if (over[i]) {
      free(x);
      fprintf(stderr, "flux: error: the input '%s' is given twice (--input%s)\n", s->bufs[i].name, k == o.nbind ? " and --prompt" : "");
      goto done;
    }
    over[i] = x;
  }
  if (o.nweights) bad |= open_checked(wf, o.weights, o.nweights, s, RT_PARAM, 0, NULL);
  if (o.inputs) bad |= open_checked(inf, &o.inputs, 1, s, RT_INPUT, 0, over);   // (over: given elsewhere)
  SampleBufs sb = {0};
  RtBuffer lat = {0};
  if (o.steps && sample_bufs(s, &sb)) goto done;
  int img_out = o.png ? find_buf(s, "image", RT_OUTPUT) : -1;
  if (o.png && (img_out < 0 || s->bufs[img_out].ndim != 4 || s->bufs[img_out].shape[0] != 1 ||
                (s->bufs[img_out].shape[1] != 3 && s->bufs[img_out].shape[1] != 1))) {
    fprintf(stderr, "flux: error: --png needs an output `image` shaped [1, 3 or 1, H, W]; the model %s has not\n", s->model);
    goto done;
  }
  if (o.steps) lat = latents_buf(s, &sb);
  if (o.check && !o.steps) bad |= open_checked(ref, &o.check, 1, s, RT_OUTPUT, 1, NULL);
  if (o.check && o.steps) {  // the reference holds `latents`, img's shape
    char err[512], want[200], got[200];
    StTensor *r = NULL;
    if (st_set_add(ref, o.check, err, sizeof err)) fprintf(stderr, "flux: error: %s\n", err), bad = 1;
    else if (!(r = st_set_find(ref, "latents", NULL))) fprintf(stderr, "flux: error: %s: no tensor 'latents' to check the sampled latents against\n", o.check), bad = 1;
    else {
      shape_text(lat.shape, lat.ndim, want, sizeof want);
      shape_text(r->shape, r->ndim, got, sizeof got);
      if (strcmp(want, got) || src_code(r->dtype) < RT_F16)
        fprintf(stderr, "flux: error: %s: 'latents' is %s%s; the sampled latents are float%s\n", o.check, r->dtype, got, want), bad = 1;
    }
  }
  if (!bad) bad |= check_ids(s, inf, over, o.iseed);
  if (bad) goto done;

  if (!prog && verify_kernel_files(s, dir, o.allow_edited)) goto done;   // (a pipeline's: run_pipeline, all first)

  status = EXIT_DEVICE;
  double t0 = now_ms();
  d = dev_open(s, &L, dir, m);
  if (!d) goto done;
  double open_ms = now_ms() - t0;
  if (!o.quiet) {
    printf("device:   %s\n", dev_name(d));
    printf("model:    %s (%s)\n", s->model, s->target);
    printf("launches: %d per forward, %d unique kernels\n", s->nlaunches, s->nkernels);
    printf("memory:   params %.2f MiB, inputs %.2f MiB, arena %.2f MiB; %.2f MiB in all\n", L.bytes[POOL_PARAMS] / 1048576.0,
           L.bytes[POOL_INPUTS] / 1048576.0, L.bytes[POOL_ARENA] / 1048576.0, L.total / 1048576.0);
    printf("weights:  ");
    if (o.nweights) printf("%s\n", wf->label);
    else printf("random, seed %llu\n", (unsigned long long)o.wseed);
    printf("inputs:   ");
    if (o.inputs) printf("%s\n", o.inputs);
    else if (o.prompt) printf("tokens from --prompt (any other input random, seed %llu)\n", (unsigned long long)o.iseed);
    else printf("random, seed %llu\n", (unsigned long long)o.iseed);
    for (int k = 0; k < o.nbind; k++) printf("input:    %s\n", o.bind[k]);
    for (int k = 0; k < nheld; k++)
      printf("input:    %s = %s's %s\n", prog->binds[k].input, rt_pipeline.programs[prog->binds[k].from].name, prog->binds[k].output);
    fflush(stdout);
  }
  if (upload_kind(d, s, &L, RT_PARAM, wf, o.wseed)) goto done;
  if (upload_kind(d, s, &L, RT_CONST, wf, 0)) goto done;
  if (upload_kind(d, s, &L, RT_INPUT, inf, o.iseed)) goto done;
  for (int i = 0; i < s->nbufs; i++)
    if (over[i] && dev_upload(d, L.pool[i], L.offset[i], over[i], s->bufs[i].bytes)) goto done;
  st_set_close(wf);   // the device has the data: unmap early
  st_set_close(inf);
  if (!o.quiet) printf("setup:    %.1f ms device and kernels, %.1f ms weights and inputs\n", open_ms, now_ms() - t0 - open_ms);

  // Poison: 0xFF bytes are NaN in f32, bf16 and f16.
  if (dev_fill(d, POOL_ARENA, 0xff)) goto done;
  if (o.steps) {
    void *x = xmalloc((size_t)lat.bytes);
    host[sb.img] = x;  // freed with the others
    if (sample(d, s, &L, &o, &sb, x)) goto done;
    if (!o.quiet) print_stats(&lat, x);
    if (held) held_add(held, prog->name, &lat, x);
    status = 0;
    if (o.out) {
      StTensor t = {.name = (char *)lat.name, .ndim = lat.ndim, .data = x};
      snprintf(t.dtype, sizeof t.dtype, "%s", dt_st[lat.dtype]);
      memcpy(t.shape, lat.shape, sizeof t.shape);
      char err[1024], said[4200];
      if (st_write(o.out, 1, &t, err, sizeof err)) {
        fprintf(stderr, "flux: error: %s\n", err);
        status = EXIT_USAGE;
        goto done;
      }
      if (!o.quiet) printf("wrote:    %s\n", out_said(o.out, 1, said, sizeof said));
    }
    if (o.check && !check_output(&lat, x, st_set_find(ref, "latents", NULL), &o)) status = EXIT_CHECK;
    goto done;
  }
  t0 = now_ms();
  if (dev_forward(d, o.sync)) goto done;
  double first_ms = now_ms() - t0;

  int all = o.out_all;
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    if (b->kind != RT_OUTPUT && !(all && b->kind == RT_TEMP)) continue;
    host[i] = xmalloc((size_t)b->bytes);
    if (b->bytes && dev_download(d, L.pool[i], L.offset[i], host[i], b->bytes)) goto done;
    if (held && b->kind == RT_OUTPUT) held_add(held, prog->name, b, host[i]);
  }
  if (!o.quiet) {
    printf("forward:  %.3f ms (first run, wall clock)\n", first_ms);
    for (int i = 0; i < s->nbufs; i++)
      if (s->bufs[i].kind == RT_OUTPUT) print_stats(&s->bufs[i], host[i]);
    fflush(stdout);
  }

  status = 0;
  if (o.out && write_outputs(s, host, o.out, all, o.quiet)) {
    status = EXIT_USAGE;
    goto done;
  }
#ifdef FLUX_PNG
  if (o.png) {
    const RtBuffer *b = &s->bufs[img_out];
    char err[4400];
    if (png_write_chw(o.png, (int)b->shape[1], b->shape[2], b->shape[3], load, b->dtype, host[img_out], err, sizeof err)) {
      fprintf(stderr, "flux: error: %s\n", err);
      status = EXIT_USAGE;
      goto done;
    }
    if (!o.quiet) printf("wrote:    %s (PNG, %lldx%lld)\n", o.png, (long long)b->shape[3], (long long)b->shape[2]);
  }
#endif
  if (o.check) {
    for (int i = 0; i < s->nbufs; i++)
      if (s->bufs[i].kind == RT_OUTPUT && !check_output(&s->bufs[i], host[i], st_set_find(ref, s->bufs[i].name, NULL), &o))
        status = EXIT_CHECK;
    fflush(stdout);
  }

  if (o.bench) {
    ms = rt_calloc((size_t)o.bench, sizeof *ms);
    const char *how = "";
    if (dev_bench(d, o.bench, o.graph, ms, &how)) {
      status = EXIT_DEVICE;
      goto done;
    }
    double med = median(ms, o.bench);  // sorts ms
    // the spread: one median hides how much this machine moves (2x between runs on a noisy VM)
    int n = o.bench;
    printf("bench:    median %.3f ms, min %.3f ms per forward (%d launches) over %d forwards after 1 warm-up; "
           "quartiles %.3f-%.3f ms, max %.3f ms; %s\n", med, ms[0], s->nlaunches, n, ms[(n - 1) / 4], ms[3 * (n - 1) / 4], ms[n - 1], how);
  }

  int pr = o.profile ? profile(d, s, o.profile, o.trace, o.quiet) : 0;
  if (pr) status = pr == 2 ? EXIT_USAGE : EXIT_DEVICE;

done:
  dev_close(d);
  if (held && prog) {
    int k = (int)(prog - rt_pipeline.programs);
    held->ms[k] = now_ms() - start;
  }
  st_set_close(wf);
  st_set_close(inf);
  st_set_close(ref);
  free(sets);
  for (int i = 0; i < s->nbufs; i++) free(host[i]);
  free(host);
  free(ms);
  free(dir);
  for (int i = 0; over && i < s->nbufs; i++) free(over[i]);
  free(over);
  free(L.pool);
  free(L.offset);
  return status;
}

// ---------------------------------------------------------------------------
// A pipeline: its programs in order, each loaded, run and freed

static int has_buf(const RtSchedule *s, const char *name, int kind) { return find_buf(s, name, kind) >= 0; }

static int run_pipeline(const RtPipeline *p, Opts *o) {
  if (p->nprograms < 1 || p->nprograms > 16) {
    fprintf(stderr, "flux: error: pipeline.c: %d programs (a fluxcc bug)\n", p->nprograms);
    return EXIT_USAGE;
  }
  if (!o->wrand) o->wseed = p->programs[0].schedule->seed_default;
  if (!o->irand) o->iseed = p->programs[0].schedule->seed_default;
  if (o->model_dir && o->wrand) return bad_usage("%s", "--model-dir gives the weights; --random-weights excludes it");
  if (o->prompt && !o->model_dir) return bad_usage("%s", "--prompt needs --model-dir M: the tokenizers are the checkpoint's");
#ifndef FLUX_PNG
  if (o->png) return bad_usage("%s", "-o: this binary was built without libpng (install libpng-dev and pkg-config, then make clean all)");
#endif
  int sampled = -1, decoder = -1, bad = 0;
  for (int k = 0; k < p->nprograms; k++) {
    const RtSchedule *s = p->programs[k].schedule;
    if (has_buf(s, "img", RT_INPUT) && has_buf(s, "timesteps", RT_INPUT)) sampled = k;
    if (has_buf(s, "image", RT_OUTPUT)) decoder = k;
  }
  if (o->png && decoder < 0) return bad_usage("%s", "-o: no program of this pipeline has an output `image`");
  if (o->width || o->height) {  // the resolution is the models': say so rather than resample
    const RtBuffer *im = decoder >= 0 ? &p->programs[decoder].schedule->bufs[find_buf(p->programs[decoder].schedule, "image", RT_OUTPUT)] : NULL;
    if (!im || im->ndim != 4 || (o->width && o->width != im->shape[3]) || (o->height && o->height != im->shape[2])) {
      fprintf(stderr, "flux: error: --width %d --height %d: ", o->width, o->height);
      if (im && im->ndim == 4)
        fprintf(stderr, "this binary makes %lldx%lld images: the resolution (and the token counts) are compile-time constants of its "
                "models; compile them for another (the transformer's image tokens, the decoder's latents)\n", (long long)im->shape[3],
                (long long)im->shape[2]);
      else fprintf(stderr, "this pipeline has no decoder with an output `image` [1, C, H, W]\n");
      return EXIT_USAGE;
    }
  }
  if (o->has_guidance && (sampled < 0 || !has_buf(p->programs[sampled].schedule, "guidance", RT_INPUT)))
    return bad_usage("%s", "--guidance: the sampled model has no `guidance` input (FLUX.1 [schnell] has none)");
  if (!o->steps) o->steps = sampled >= 0 && has_buf(p->programs[sampled].schedule, "guidance", RT_INPUT) ? 50 : 4;
  if (!o->has_guidance) o->guidance = 3.5;
  if (o->model_dir) {  // every missing file named before anything runs
    for (int k = 0; k < p->nprograms; k++) {
      Opts t = *o;
      char w[4096], tk[4096];
      if (!has_buf(p->programs[k].schedule, "tokens", RT_INPUT)) t.prompt = NULL;
      bad |= model_dir_paths(p->programs[k].schedule, &t, w, tk, sizeof w) != 0;
    }
  }
  char *dir = project_dir();   // every program's tables and kernel files checked before any stage runs
  for (int k = 0; k < p->nprograms; k++)
    if (check_schedule(p->programs[k].schedule) || verify_kernel_files(p->programs[k].schedule, dir, o->allow_edited)) bad = 1;
  free(dir);
  if (bad) return EXIT_USAGE;
  struct stat st;
  errno = 0;
  if (o->stages && ((mkdir(o->stages, 0755) && errno != EEXIST) || stat(o->stages, &st) || !S_ISDIR(st.st_mode))) {
    fprintf(stderr, "flux: error: --stages %s: %s\n", o->stages, errno && errno != EEXIST ? strerror(errno) : "not a directory");
    return EXIT_USAGE;
  }
  // One device memory for every stage: the block the largest stage needs,
  // each stage's pools laid out in it from the start (make_layout).
  int big = 0;
  uint64_t need[16];
  for (int k = 0; k < p->nprograms; k++) {
    Layout L;
    make_layout(p->programs[k].schedule, &L);
    need[k] = L.total;
    if (need[k] > need[big]) big = k;
    free(L.pool);
    free(L.offset);
  }
  DevMem *m = dev_mem_open(need[big]);
  if (!m) return EXIT_DEVICE;
  if (!o->quiet)
    printf("memory:   %.2f MiB of device memory for every stage, as %s needs (its weights, inputs and arena); "
           "each stage's are replaced by the next's\n", need[big] / 1048576.0, p->programs[big].name);
  Held *held = rt_calloc(1, sizeof *held);
  int status = 0;
  double t0 = now_ms();
  for (int k = 0; k < p->nprograms && status == 0; k++) {
    const RtProgram *pr = &p->programs[k];
    const RtSchedule *s = pr->schedule;
    Opts t = *o;
    char out[4200];
    t.pipeline = 0;
    if (!has_buf(s, "tokens", RT_INPUT)) t.prompt = NULL;
    t.steps = k == sampled ? o->steps : 0;
    t.has_guidance = k == sampled && has_buf(s, "guidance", RT_INPUT);
    t.png = k == decoder ? o->png : NULL;
    if (o->stages) snprintf(out, sizeof out, "%s/%s.safetensors", o->stages, pr->name), t.out = out;
    if (!o->quiet) printf("== %s: %s\n", pr->name, s->model);
    fflush(stdout);
    status = run_program(s, &t, pr, held, m);
  }
  dev_mem_close(m);
  if (status == 0 && !o->quiet) {
    printf("stages:  ");
    for (int k = 0; k < p->nprograms; k++)
      printf(" %s %.1f ms%s", p->programs[k].name, held->ms[k], k + 1 < p->nprograms ? "," : "");
    printf("; %.1f ms in all\n", now_ms() - t0);
  }
  for (int k = 0; k < held->n; k++) free(held->t[k].data);
  free(held);
  return status;
}

int main(int argc, char **argv) {
  const RtPipeline *p = &rt_pipeline;
  Opts o;
  int status = parse_args(argc, argv, &o, p != NULL, p ? 1 : rt_schedule.seed_default);
  if (status >= 0) return status;
  return p ? run_pipeline(p, &o) : run_program(&rt_schedule, &o, NULL, NULL, NULL);
}
