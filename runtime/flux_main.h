// flux_main.h — what the files of ./flux share among themselves (the
// contract with fluxcc is flux_rt.h; with the device, backend.h).
//
//   flux_main.c    the command line (Opts) and main
//   run_program.c  one program's run: files checked, device opened, forward or sampling, results
//   run_pipeline.c a pipeline (fluxcc pipeline): its programs in order, prompt to PNG
//   resident.c     a pipeline kept loaded between images (--serve)
//   serve.c        --serve: HTTP (libmicrohttpd), requests, the queue, metrics
//   project.c      schedule.c's tables checked, device memory laid out, kernel files verified
//   load.c         parameters and inputs: files, seeds, --input, --prompt, --model-dir; uploaded
//   sample.c       --steps: BFL's denoise loop around the forward
//   outputs.c      outputs written (safetensors, PNG), checked and summed up
//   bench.c        --bench, --profile and --trace
//   lora.c         --lora: LoRA files checked and merged into the weights at upload
//   buffers.c      buffer values in their dtypes, shapes and names in messages, host memory
#ifndef FLUX_MAIN_H
#define FLUX_MAIN_H

#include "backend.h"
#include "flux_rt.h"
#include "safetensors.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum { EXIT_CHECK = 1, EXIT_USAGE = 2, EXIT_DEVICE = 3 };

// A project defines rt_schedule (one program) or rt_pipeline (several):
// the other stays a null weak reference in every file that names it.
#pragma weak rt_schedule
#pragma weak rt_pipeline

#define MAX_BINDS 16
#define MAX_LORAS 16

typedef struct Lora Lora;   // lora.c: the LoRA files of one program, checked

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
  uint64_t max_memory;       // --max-memory BYTES: refuse a program (a pipeline's stage) that needs more (0: no limit)
  int sync, out_all;         // FLUX_SYNC, FLUX_OUT_ALL
  int allow_edited;
  int steps;                 // --steps: sample
  double guidance;
  int has_guidance;
  int pipeline;              // the binary is a pipeline: -o, --seed and --stages; no single-program options
  const char *stages;        // pipeline --stages DIR: each program's outputs as DIR/NAME.safetensors
  int width, height;         // pipeline --width / --height: must be the compiled ones
  const char *serve;         // pipeline --serve HOST:PORT (serve.c), and its settings (0, NULL: defaults)
  const char *api_key_file, *serve_plan;
  int queue, max_steps, timeout;
  const char *lora[MAX_LORAS];  // --lora FILE[:SCALE], as given
  int nlora, lora_skip;      // ... and --lora-skip-unknown
  Lora *lora_set;            // a pipeline's, opened by run_pipeline for the sampled program (NULL: run_program opens them)
} Opts;

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

// The model's sampling interface: its buffer ids (g: -1 without `guidance`)
typedef struct { int img, t, out, g; } SampleBufs;

// A usage error, said with where the usage is: exit status 2 (the command
// line, and a pipeline's options against its programs)
static inline int bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "flux: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(./flux --help for usage)\n");
  return EXIT_USAGE;
}

// the monotonic clock in ms (each file defines _POSIX_C_SOURCE before its includes)
static inline double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// resident.c: a pipeline kept loaded (--serve)
typedef struct Resident Resident;
typedef struct {
  const char *prompt;
  uint64_t seed;
  int steps;
  double guidance;          // (a model with a `guidance` input)
} ImageAsk;
typedef struct {
  int width, height, steps; // the image, and the defaults
  double guidance;
  uint64_t seed;
  int guided, host;         // a `guidance` input; the weights in host memory (one stage at a time)
  const RtSchedule *sampled;
  int nstages;
  const char *stage[16];
} ResidentInfo;
enum { RES_BAD_INPUT = 1, RES_DIVERGED, RES_DEVICE };   // resident_image's failures
Resident *resident_open(const RtPipeline *p, const Opts *o, const char *plan);
ResidentInfo resident_info(const Resident *r);
int resident_image(Resident *r, const ImageAsk *q, unsigned char **png, size_t *len, double *stage_ms, char *err, size_t errlen);
void resident_close(Resident *r);

// run_program.c, run_pipeline.c: the exit status
int run_program(const RtSchedule *s, Opts *oo, const RtProgram *prog, Held *held, DevMem *m);
int run_pipeline(const RtPipeline *p, Opts *o);
int serve_pipeline(const RtPipeline *p, Opts *o);   // serve.c
void held_add(Held *h, const char *prog, const RtBuffer *b, const void *data);
void *held_input(const RtSchedule *s, const RtBind *bind, const Held *h, const char *from, int *buf);
// a pipeline's options against its programs (defaults set; *sampled, *decoder:
// the program that samples, the one with the output `image`, or -1): -1 to go
// on, else the exit status; and the one device memory every stage runs in
int pipeline_check(const RtPipeline *p, Opts *o, int *sampled, int *decoder);
DevMem *pipeline_memory(const RtPipeline *p, int *big, uint64_t *bytes, uint64_t max);

// project.c
int check_schedule(const RtSchedule *s);
int memory_fits(const RtSchedule *s, const Layout *L, uint64_t max);   // project.c: 0, or -1 with what does not fit said
void make_layout(const RtSchedule *s, Layout *L);
char *project_dir(void);
int verify_kernel_files(const RtSchedule *s, const char *dir, int allow);

// load.c
int open_checked(StSet *set, const char *const *paths, int npaths, const RtSchedule *s, int kind, int allow_extra,
                 void *const *given, int quiet);
int check_ids(const RtSchedule *s, StSet *inf, void *const *over, uint64_t seed);
int upload_kind(Dev *d, const RtSchedule *s, const Layout *L, int kind, StSet *f, uint64_t seed, const Lora *lora);
int model_dir_paths(const RtSchedule *s, Opts *o, char *weights, char *tokenizer, size_t n);
void *bound_input(const RtSchedule *s, const char *spec, int *buf);
void *prompt_tokens(const RtSchedule *s, const Opts *o, int *buf, int quiet);
typedef struct TokKind TokKind;   // (tokenizer.h)
void *text_tokens(const RtSchedule *s, const TokKind *k, const void *t, const char *dir, const char *text, int *buf, int *lead,
                  char *err, size_t errlen);

// sample.c
int sample_bufs(const RtSchedule *s, SampleBufs *sb);
int guidance_fits(const RtSchedule *s, double g);   // --guidance within the `guidance` input's dtype; else said, -1
RtBuffer latents_buf(const RtSchedule *s, const SampleBufs *sb);
int sample_latents(Dev *d, const RtSchedule *s, const Layout *L, const Opts *o, const SampleBufs *sb, void *x);

// outputs.c
int write_outputs(const RtSchedule *s, void **host, const char *path, int all, int quiet);
int write_latents(const RtBuffer *lat, const void *x, const char *path, int quiet);
#ifdef FLUX_PNG
int encode_png(const RtBuffer *b, const void *x, unsigned char **data, size_t *len, char *err, size_t errlen);
int write_png(const RtBuffer *b, const void *x, const char *path, int quiet);
#endif
int check_output(const RtBuffer *b, const void *out, const StTensor *ref, const Opts *o);
void print_stats(const RtBuffer *b, const void *out);

// bench.c
int bench_forwards(Dev *d, const RtSchedule *s, int n, int graph);
int profile_launches(Dev *d, const RtSchedule *s, int rounds, const char *trace, int quiet);

// lora.c
int lora_spec(const char *spec, char *file, size_t n, double *scale);   // FILE[:SCALE]: -1 if bad
int lora_open(Lora **l, const RtSchedule *s, const char *const *specs, int n, int skip);  // -1 with each problem said
void lora_close(Lora *l);
void lora_print(const Lora *l);
int lora_touches(const Lora *l, int buf);
int lora_merge(const Lora *l, int buf, const RtBuffer *b, const void *w, void *out);

// fp8.c
const StTensor *fp8_scale_tensor(StSet *f, const char *key);
int fp8_scale_bad(const StTensor *ts, int64_t rows, char *why, size_t n);
const void *fp8_values(const RtBuffer *b, StSet *f, uint64_t seed, void **tmp, uint64_t *cap, float *scale);
void fp8_dequant(const RtBuffer *b, const StTensor *t, StSet *f, void *out);

// buffers.c
extern const char *const dt_name[];   // per RT_* dtype: "bf16", as the model says it
extern const char *const dt_st[];     // "BF16", as safetensors says it
enum { SRC_F64 = RT_F8E4M3 + 1, SRC_F8E5M2 };   // storage codes of the file dtypes we read: RT_BOOL..RT_F8E4M3, then these
int src_code(const char *st);
double dt_load(int code, const void *p, int64_t i);
void dt_store(int dt, void *p, int64_t i, double x);
int dtype_ok(int dt, int code);
int64_t numel(const RtBuffer *b);
int same_shape(const RtBuffer *a, const RtBuffer *b);
int find_buf(const RtSchedule *s, const char *name, int kind);
void shape_text(const int64_t *shape, int ndim, char *out, size_t n);
const char *safe_name(const char *s, char *buf, size_t n);
void *xmalloc(size_t n);

#endif
