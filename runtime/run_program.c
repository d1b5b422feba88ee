// run_program.c — one program's run, as the options say: everything that can
// be checked without a device first (files, bound inputs, the reference,
// kernel files), then the device opened and the weights and inputs uploaded,
// then the forward run (or sampled, --steps), its outputs written, checked
// and timed, the device closed. In a pipeline (run_pipeline.c) a program's
// bound inputs come from the programs before it, and its outputs go to them.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"

#include <stdlib.h>
#include <string.h>

// One program's run: what its parts share
typedef struct {
  const RtSchedule *s;
  Opts o;                   // the options, --model-dir's files added
  const RtProgram *prog;    // in a pipeline: the program (NULL: the binary's one program)
  Held *held;               // ... and the pipeline's held tensors
  Layout L;
  StSet *wf, *inf, *ref;    // weights, inputs and the reference (--check)
  Lora *lora;               // --lora's files, checked (NULL: none)
  Dev *d;
  void **host;              // per buffer: its bytes on the host, once downloaded
  void **over;              // per buffer: inputs from --input, --prompt, an earlier program
  char *dir;                // the project's files: project_dir()
  SampleBufs sb;            // --steps: the sampling interface
  RtBuffer lat;             // ... and the latents
  int img_out;              // --png: the output `image`
} Run;

// ---------------------------------------------------------------------------
// A pipeline's tensors between programs

void held_add(Held *h, const char *prog, const RtBuffer *b, const void *data) {
  if (h->n == (int)(sizeof h->t / sizeof *h->t)) return;  // (fluxcc's stages have 1 to 3 outputs each)
  HeldTensor *t = &h->t[h->n++];
  t->prog = prog, t->b = *b, t->data = xmalloc((size_t)b->bytes);
  memcpy(t->data, data, (size_t)b->bytes);
}

// the input bind->input of program prog, from the output it is bound to, as
// host bytes in its dtype; NULL with a message
void *held_input(const RtSchedule *s, const RtBind *bind, const Held *h, const char *from, int *buf) {
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
  for (int64_t k = 0; k < numel(b); k++) dt_store(b->dtype, x, k, dt_load(t->b.dtype, t->data, k));
  return x;
}

// ---------------------------------------------------------------------------
// Before the device: bad files fail fast, before kernels are built

// The inputs given other than by --inputs (--input, the prompt's tokens, an
// earlier program's outputs) into r->over, after --model-dir's files are
// found. -1 with a message.
static int take_given_inputs(Run *r) {
  const RtSchedule *s = r->s;
  Opts *o = &r->o;
  static char md_weights[4096], md_tokenizer[4096];
  if (o->model_dir && model_dir_paths(s, o, md_weights, md_tokenizer, sizeof md_weights)) return -1;
  int nheld = r->prog ? r->prog->nbinds : 0;
  for (int k = 0; k < o->nbind + !!o->prompt + nheld; k++) {   // --input, the prompt's tokens, an earlier program's outputs
    int i = -1, h = k - o->nbind - !!o->prompt;
    void *x = k < o->nbind ? bound_input(s, o->bind[k], &i)
            : h < 0        ? prompt_tokens(s, o, &i, o->quiet)
                           : held_input(s, &r->prog->binds[h], r->held, rt_pipeline.programs[r->prog->binds[h].from].name, &i);
    if (!x) return -1;
    if (r->over[i]) {
      free(x);
      fprintf(stderr, "flux: error: the input '%s' is given twice (--input%s)\n", s->bufs[i].name, k == o->nbind ? " and --prompt" : "");
      return -1;
    }
    r->over[i] = x;
  }
  return 0;
}

// --check: the reference opened and checked against the outputs, or with
// --steps against the sampled latents (img's shape). 1 when it is bad.
static int open_reference(Run *r) {
  const Opts *o = &r->o;
  if (!o->steps) return open_checked(r->ref, &o->check, 1, r->s, RT_OUTPUT, 1, NULL, o->quiet) != 0;
  char err[512], want[200], got[200];
  StTensor *t = NULL;
  if (st_set_add(r->ref, o->check, err, sizeof err)) fprintf(stderr, "flux: error: %s\n", err);
  else if (!(t = st_set_find(r->ref, "latents", NULL))) fprintf(stderr, "flux: error: %s: no tensor 'latents' to check the sampled latents against\n", o->check);
  else {
    shape_text(r->lat.shape, r->lat.ndim, want, sizeof want);
    shape_text(t->shape, t->ndim, got, sizeof got);
    if (!strcmp(want, got) && src_code(t->dtype) >= RT_F16) return 0;
    fprintf(stderr, "flux: error: %s: 'latents' is %s%s; the sampled latents are float%s\n", o->check, t->dtype, got, want);
  }
  return 1;
}

// Every file and given input checked against the model, and what --steps and
// --png need of it; then the kernel files. -1 when anything is bad (each said).
static int check_before_device(Run *r) {
  const RtSchedule *s = r->s;
  const Opts *o = &r->o;
  int bad = 0;
  if (take_given_inputs(r)) return -1;
  if (o->lora_set) r->lora = o->lora_set;   // first: an fp8 binary refuses --lora before its weights are opened
  else bad |= lora_open(&r->lora, s, o->lora, o->nlora, o->lora_skip);
  if (o->nweights) bad |= open_checked(r->wf, o->weights, o->nweights, s, RT_PARAM, 0, NULL, o->quiet || bad);   // (no note after an error)
  if (o->inputs) bad |= open_checked(r->inf, &o->inputs, 1, s, RT_INPUT, 0, r->over, o->quiet);   // (over: given elsewhere)
  if (o->steps && (sample_bufs(s, &r->sb) || guidance_fits(s, o->guidance))) return -1;
  r->img_out = o->png ? find_buf(s, "image", RT_OUTPUT) : -1;
  const RtBuffer *im = r->img_out >= 0 ? &s->bufs[r->img_out] : NULL;
  if (o->png && (!im || im->ndim != 4 || im->shape[0] != 1 || (im->shape[1] != 3 && im->shape[1] != 1))) {
    fprintf(stderr, "flux: error: --png needs an output `image` shaped [1, 3 or 1, H, W]; the model %s has not\n", s->model);
    return -1;
  }
  if (o->steps) r->lat = latents_buf(s, &r->sb);
  if (o->check) bad |= open_reference(r);
  if (!bad) bad |= check_ids(s, r->inf, r->over, o->iseed);
  if (bad) return -1;
  if (!r->prog && verify_kernel_files(s, r->dir, o->allow_edited)) return -1;   // (a pipeline's: run_pipeline, all first)
  return 0;
}

// ---------------------------------------------------------------------------
// The device: opened, said, loaded

static void print_setup(const Run *r) {
  const RtSchedule *s = r->s;
  const Opts *o = &r->o;
  printf("device:   %s\n", dev_name(r->d));
  printf("model:    %s (%s)\n", s->model, s->target);
  printf("launches: %d per forward, %d unique kernels\n", s->nlaunches, s->nkernels);
  printf("memory:   params %.2f MiB, inputs %.2f MiB, arena %.2f MiB; %.2f MiB in all\n", r->L.bytes[POOL_PARAMS] / 1048576.0,
         r->L.bytes[POOL_INPUTS] / 1048576.0, r->L.bytes[POOL_ARENA] / 1048576.0, r->L.total / 1048576.0);
  printf("weights:  ");
  if (o->nweights) printf("%s\n", r->wf->label);
  else printf("random, seed %llu\n", (unsigned long long)o->wseed);
  printf("inputs:   ");
  if (o->inputs) printf("%s\n", o->inputs);
  else if (o->prompt) printf("tokens from --prompt (any other input random, seed %llu)\n", (unsigned long long)o->iseed);
  else printf("random, seed %llu\n", (unsigned long long)o->iseed);
  for (int k = 0; k < o->nbind; k++) printf("input:    %s\n", o->bind[k]);
  for (int k = 0; r->prog && k < r->prog->nbinds; k++)
    printf("input:    %s = %s's %s\n", r->prog->binds[k].input, rt_pipeline.programs[r->prog->binds[k].from].name,
           r->prog->binds[k].output);
  lora_print(r->lora);
  fflush(stdout);
}

// The device opened on m (NULL: its own memory), the parameters (--lora's
// merged in), constants and inputs uploaded, the files unmapped. 0, or the
// exit status: a device error, or a weight a LoRA made non-finite (said).
static int open_device(Run *r, DevMem *m) {
  const RtSchedule *s = r->s;
  const Opts *o = &r->o;
  double t0 = now_ms();
  r->d = dev_open(s, &r->L, r->dir, m);
  if (!r->d) return EXIT_DEVICE;
  double open_ms = now_ms() - t0;
  if (!o->quiet) print_setup(r);
  int st = upload_kind(r->d, s, &r->L, RT_PARAM, r->wf, o->wseed, r->lora);
  if (!st) st = upload_kind(r->d, s, &r->L, RT_CONST, r->wf, 0, NULL);
  if (!st) st = upload_kind(r->d, s, &r->L, RT_INPUT, r->inf, o->iseed, NULL);
  if (st) return st;
  for (int i = 0; i < s->nbufs; i++)
    if (r->over[i] && dev_upload(r->d, r->L.pool[i], r->L.offset[i], r->over[i], s->bufs[i].bytes)) return EXIT_DEVICE;
  st_set_close(r->wf);   // the device has the data: unmap early
  st_set_close(r->inf);
  if (r->lora != o->lora_set) lora_close(r->lora), r->lora = NULL;
  if (!o->quiet) printf("setup:    %.1f ms device and kernels, %.1f ms weights and inputs\n", open_ms, now_ms() - t0 - open_ms);
  return 0;
}

// ---------------------------------------------------------------------------
// The run and its results; each returns the exit status

// --steps: the latents sampled, said, held for the next program, written and checked.
static int run_sampled(Run *r) {
  const Opts *o = &r->o;
  void *x = xmalloc((size_t)r->lat.bytes);
  r->host[r->sb.img] = x;  // freed with the others
  if (sample_latents(r->d, r->s, &r->L, o, &r->sb, x)) return EXIT_DEVICE;
  if (!o->quiet) print_stats(&r->lat, x);
  if (r->held) held_add(r->held, r->prog->name, &r->lat, x);
  if (o->out && write_latents(&r->lat, x, o->out, o->quiet)) return EXIT_USAGE;
  if (o->check && !check_output(&r->lat, x, st_set_find(r->ref, "latents", NULL), o)) return EXIT_CHECK;
  return 0;
}

// The outputs (FLUX_OUT_ALL: the temporaries too) downloaded into r->host,
// and held for the next program. -1 on a device error.
static int download_outputs(Run *r) {
  const RtSchedule *s = r->s;
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    if (b->kind != RT_OUTPUT && !(r->o.out_all && b->kind == RT_TEMP)) continue;
    r->host[i] = xmalloc((size_t)b->bytes);
    if (b->bytes && dev_download(r->d, r->L.pool[i], r->L.offset[i], r->host[i], b->bytes)) return -1;
    if (r->held && b->kind == RT_OUTPUT) held_add(r->held, r->prog->name, b, r->host[i]);
  }
  return 0;
}

// --out, --png and --check: 0, EXIT_USAGE when a file cannot be written (the
// rest then left undone), or EXIT_CHECK.
static int write_and_check(Run *r) {
  const RtSchedule *s = r->s;
  const Opts *o = &r->o;
  if (o->out && write_outputs(s, r->host, o->out, o->out_all, o->quiet)) return EXIT_USAGE;
#ifdef FLUX_PNG
  if (o->png && write_png(&s->bufs[r->img_out], r->host[r->img_out], o->png, o->quiet)) return EXIT_USAGE;
#endif
  int status = 0;
  if (o->check) {
    for (int i = 0; i < s->nbufs; i++)
      if (s->bufs[i].kind == RT_OUTPUT && !check_output(&s->bufs[i], r->host[i], st_set_find(r->ref, s->bufs[i].name, NULL), o))
        status = EXIT_CHECK;
    fflush(stdout);
  }
  return status;
}

// One forward, its outputs said, written and checked; then --bench and --profile.
static int run_forward(Run *r) {
  const RtSchedule *s = r->s;
  const Opts *o = &r->o;
  double t0 = now_ms();
  if (dev_forward(r->d, o->sync)) return EXIT_DEVICE;
  double first_ms = now_ms() - t0;
  if (download_outputs(r)) return EXIT_DEVICE;
  if (!o->quiet) {
    printf("forward:  %.3f ms (first run, wall clock)\n", first_ms);
    for (int i = 0; i < s->nbufs; i++)
      if (s->bufs[i].kind == RT_OUTPUT) print_stats(&s->bufs[i], r->host[i]);
    fflush(stdout);
  }
  int status = write_and_check(r);
  if (status == EXIT_USAGE) return status;
  if (o->bench && bench_forwards(r->d, s, o->bench, o->graph)) return EXIT_DEVICE;
  int pr = o->profile ? profile_launches(r->d, s, o->profile, o->trace, o->quiet) : 0;
  if (pr) status = pr == 2 ? EXIT_USAGE : EXIT_DEVICE;
  return status;
}

// ---------------------------------------------------------------------------

// One program, as the options say. In a pipeline, prog is the program: its
// bound inputs come from held, and its outputs (a sampled program's
// `latents`) go there; held also keeps each stage's time; m is the
// pipeline's device memory (NULL: the program opens its own).
int run_program(const RtSchedule *s, Opts *oo, const RtProgram *prog, Held *held, DevMem *m) {
  if (check_schedule(s)) return EXIT_USAGE;
  double start = now_ms();
  Run r = {.s = s, .o = *oo, .prog = prog, .held = held};
  make_layout(s, &r.L);
  if (!m && memory_fits(s, &r.L, oo->max_memory)) {   // (a pipeline's stages: run_pipeline)
    free(r.L.pool), free(r.L.offset);
    return EXIT_DEVICE;
  }
  StSet *sets = rt_calloc(3, sizeof *sets);
  r.wf = &sets[0], r.inf = &sets[1], r.ref = &sets[2];
  r.host = rt_calloc((size_t)s->nbufs, sizeof *r.host);
  r.dir = project_dir();
  r.over = rt_calloc((size_t)s->nbufs, sizeof *r.over);

  int status = EXIT_USAGE;
  if (check_before_device(&r)) goto done;
  if ((status = open_device(&r, m))) goto done;
  status = EXIT_DEVICE;
  if (dev_fill(r.d, POOL_ARENA, 0xff)) goto done;   // poison: 0xFF bytes are NaN in f32, bf16 and f16
  status = r.o.steps ? run_sampled(&r) : run_forward(&r);

done:
  dev_close(r.d);
  if (held && prog) held->ms[prog - rt_pipeline.programs] = now_ms() - start;
  st_set_close(r.wf);
  st_set_close(r.inf);
  st_set_close(r.ref);
  if (r.lora != r.o.lora_set) lora_close(r.lora);
  free(sets);
  for (int i = 0; i < s->nbufs; i++) free(r.host[i]);
  free(r.host);
  free(r.dir);
  for (int i = 0; i < s->nbufs; i++) free(r.over[i]);
  free(r.over);
  free(r.L.pool);
  free(r.L.offset);
  return status;
}
