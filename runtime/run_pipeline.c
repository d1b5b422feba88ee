// run_pipeline.c — a pipeline's binary (fluxcc pipeline, pipeline.c): prompt
// to PNG across its programs, in order: the text encoders on the prompt, the
// transformer sampled from seeded noise, the decoder to the image. Every
// program's tables, kernel files and checkpoint files are checked before the
// first runs; then each is loaded, run (run_program.c) and freed in one
// device memory, its outputs held for the programs after it.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int has_buf(const RtSchedule *s, const char *name, int kind) { return find_buf(s, name, kind) >= 0; }

// The pipeline's options against its programs, their defaults, and every
// file checked before anything runs; *sampled and *decoder: the program that
// samples and the one with the output `image` (-1: none). -1 to go on, else
// the exit status.
int pipeline_check(const RtPipeline *p, Opts *o, int *sampled, int *decoder) {
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
  int bad = 0;
  *sampled = *decoder = -1;
  for (int k = 0; k < p->nprograms; k++) {
    const RtSchedule *s = p->programs[k].schedule;
    if (has_buf(s, "img", RT_INPUT) && has_buf(s, "timesteps", RT_INPUT)) *sampled = k;
    if (has_buf(s, "image", RT_OUTPUT)) *decoder = k;
  }
  if (o->png && *decoder < 0) return bad_usage("%s", "-o: no program of this pipeline has an output `image`");
  if (o->width || o->height) {  // the resolution is the models': say so rather than resample
    const RtSchedule *ds = *decoder >= 0 ? p->programs[*decoder].schedule : NULL;
    const RtBuffer *im = ds ? &ds->bufs[find_buf(ds, "image", RT_OUTPUT)] : NULL;
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
  if (o->nlora && *sampled < 0) return bad_usage("%s", "--lora: no program of this pipeline is sampled (inputs img and timesteps)");
  int guided = *sampled >= 0 && has_buf(p->programs[*sampled].schedule, "guidance", RT_INPUT);
  if (o->has_guidance && !guided)
    return bad_usage("%s", "--guidance: the sampled model has no `guidance` input (FLUX.1 [schnell] has none)");
  if (!o->steps) o->steps = guided ? 50 : 4;
  if (!o->has_guidance) o->guidance = 3.5;
  if (guided && guidance_fits(p->programs[*sampled].schedule, o->guidance)) return EXIT_USAGE;
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
  if (bad || (o->nlora && lora_open(&o->lora_set, p->programs[*sampled].schedule, o->lora, o->nlora, o->lora_skip)))
    return EXIT_USAGE;
  struct stat st;
  errno = 0;
  if (o->stages && ((mkdir(o->stages, 0755) && errno != EEXIST) || stat(o->stages, &st) || !S_ISDIR(st.st_mode))) {
    fprintf(stderr, "flux: error: --stages %s: %s\n", o->stages, errno && errno != EEXIST ? strerror(errno) : "not a directory");
    lora_close(o->lora_set);
    return EXIT_USAGE;
  }
  return -1;
}

// One device memory for every stage: the block the largest stage needs,
// each stage's pools laid out in it from the start (make_layout). *big: that
// stage. NULL on a device error (said).
// max: --max-memory (0: none); a stage past it is said, and NULL.
DevMem *pipeline_memory(const RtPipeline *p, int *big, uint64_t *bytes, uint64_t max) {
  uint64_t need[16] = {0};
  int over = 0;
  *big = 0;
  for (int k = 0; k < p->nprograms; k++) {
    Layout L;
    make_layout(p->programs[k].schedule, &L);
    need[k] = L.total;
    if (need[k] > need[*big]) *big = k;
    over |= memory_fits(p->programs[k].schedule, &L, max);
    free(L.pool);
    free(L.offset);
  }
  *bytes = need[*big];
  return over ? NULL : dev_mem_open(*bytes);
}

int run_pipeline(const RtPipeline *p, Opts *o) {
  int sampled, decoder, big;
  uint64_t bytes;
  int status = pipeline_check(p, o, &sampled, &decoder);
  if (status >= 0) return status;
  DevMem *m = pipeline_memory(p, &big, &bytes, o->max_memory);
  if (!m) {
    lora_close(o->lora_set);
    return EXIT_DEVICE;
  }
  if (!o->quiet)
    printf("memory:   %.2f MiB of device memory for every stage, as %s needs (its weights, inputs and arena); "
           "each stage's are replaced by the next's\n", bytes / 1048576.0, p->programs[big].name);
  Held *held = rt_calloc(1, sizeof *held);
  status = 0;
  double t0 = now_ms();
  for (int k = 0; k < p->nprograms && status == 0; k++) {  // each program with the options that are its own
    const RtProgram *pr = &p->programs[k];
    const RtSchedule *s = pr->schedule;
    Opts t = *o;
    char out[4200];
    t.pipeline = 0;
    if (!has_buf(s, "tokens", RT_INPUT)) t.prompt = NULL;
    t.steps = k == sampled ? o->steps : 0;
    t.has_guidance = k == sampled && has_buf(s, "guidance", RT_INPUT);
    t.png = k == decoder ? o->png : NULL;
    if (k != sampled) t.nlora = 0, t.lora_set = NULL;   // --lora is the transformer's
    if (o->stages) snprintf(out, sizeof out, "%s/%s.safetensors", o->stages, pr->name), t.out = out;
    if (!o->quiet) printf("== %s: %s\n", pr->name, s->model);
    fflush(stdout);
    status = run_program(s, &t, pr, held, m);
  }
  dev_mem_close(m);
  lora_close(o->lora_set);
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
