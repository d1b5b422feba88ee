// resident.c — a pipeline kept loaded between images (./flux --serve,
// serve.c): every program's weights read once at start, then one image at a
// time from a prompt, a seed, steps and guidance, as run_pipeline.c makes it
// (the same inputs in the same order, so the same PNG bytes).
//
// Two plans. On the device: each program has its own device memory, opened
// at start with its weights uploaded, kept open. In host memory: one device
// memory for every stage (run_pipeline's), each program's weights pool kept
// as host bytes and uploaded before its stage runs; slower per image, but it
// needs only the largest stage's device memory, and no file is read after start.
#define _GNU_SOURCE

#include "flux_main.h"
#include "tokenizer.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const RtProgram *pr;
  const RtSchedule *s;
  Layout L;
  Dev *d;                 // on the device: open for the server's lifetime
  void *params;           // in host memory: the weights pool's bytes
  const TokKind *tk;      // a text encoder's tokenizer, open
  void *tok;
  char tokdir[4096];
  SampleBufs sb;          // the program that samples: its interface
  RtBuffer lat;
} Stage;

struct Resident {
  const RtPipeline *p;
  Opts o;                 // the pipeline's options, defaults set
  int n, sampled, decoder, host;
  Stage st[16];
  DevMem *m;              // in host memory: the one device memory
  char *dir;              // the project's files
};

void resident_close(Resident *r) {
  if (!r) return;
  for (int k = 0; k < r->n; k++) {
    Stage *g = &r->st[k];
    dev_close(g->d);
    free(g->params);
    if (g->tok) g->tk->close(g->tok);
    free(g->L.pool);
    free(g->L.offset);
  }
  dev_mem_close(r->m);
  free(r->dir);
  free(r);
}

// Stage k's weights (and constants) uploaded to d from its files, lora (the
// sampled program's --lora, or NULL) merged in; in host memory, its weights
// pool downloaded into g->params too. -1 when said.
static int load_weights(Resident *r, Stage *g, Dev *d, const Lora *lora) {
  Opts t = r->o;
  char w[4096], tk[4096];
  t.prompt = g->tk ? "" : NULL, t.nweights = 0, t.tokenizer = NULL;
  StSet *wf = rt_calloc(1, sizeof *wf);
  int bad = r->o.model_dir && (model_dir_paths(g->s, &t, w, tk, sizeof w) || open_checked(wf, t.weights, t.nweights, g->s, RT_PARAM, 0, NULL, r->o.quiet));
  bad = bad || upload_kind(d, g->s, &g->L, RT_PARAM, wf, r->o.wseed, lora) || upload_kind(d, g->s, &g->L, RT_CONST, wf, 0, NULL);
  st_set_close(wf);
  free(wf);
  uint64_t bytes = g->L.bytes[POOL_PARAMS];
  if (!bad && r->host) {
    g->params = xmalloc(bytes ? (size_t)bytes : 1);
    bad = bytes && dev_download(d, POOL_PARAMS, 0, g->params, bytes);
  }
  return bad ? -1 : 0;
}

// The plan's device memory: on the device, each stage's own (-1 when they
// exceed --max-memory together, or one cannot be had: the others closed
// again); in host memory, the one for all (-1 when a stage exceeds it).
static int open_plan(Resident *r, int quiet, int plan_auto) {
  uint64_t all = 0;
  for (int k = 0; k < r->n; k++) all += r->st[k].L.total;
  if (!r->host) {
    uint64_t max = r->o.max_memory;
    if (max && all > max) {   // (auto then says so and takes host memory)
      fprintf(stderr, "flux: %s: --serve-plan device: every stage on the device needs %llu bytes (%.2f MiB), over --max-memory %llu\n",
              plan_auto ? "note" : "error", (unsigned long long)all, all / 1048576.0, (unsigned long long)max);
      return -1;
    }
    for (int k = 0; k < r->n; k++)
      if (!(r->st[k].d = dev_open(r->st[k].s, &r->st[k].L, r->dir, NULL))) {
        for (int j = 0; j < k; j++) dev_close(r->st[j].d), r->st[j].d = NULL;
        return -1;
      }
    if (!quiet) printf("serve:    every stage on the device, %.2f MiB in all (weights, inputs and arena), loaded once\n", all / 1048576.0);
    return 0;
  }
  int big;
  uint64_t bytes;
  if (!(r->m = pipeline_memory(r->p, &big, &bytes, r->o.max_memory))) return -1;
  if (!quiet)
    printf("serve:    one stage at a time in %.2f MiB of device memory (as %s needs); the weights kept in host memory, "
           "uploaded before each stage\n", bytes / 1048576.0, r->p->programs[big].name);
  return 0;
}

// plan: "device", "host" or "auto" (the device, else host memory when a
// stage's memory cannot be had). NULL when anything is bad (said).
Resident *resident_open(const RtPipeline *p, const Opts *o, const char *plan) {
  Resident *r = rt_calloc(1, sizeof *r);
  r->p = p, r->o = *o, r->n = p->nprograms;
  Opts chk = r->o;
  chk.prompt = "";   // (every tokenizer folder checked as for a prompt)
  if (pipeline_check(p, &chk, &r->sampled, &r->decoder) >= 0) goto fail;   // (--lora's files opened into chk.lora_set)
  r->o.steps = chk.steps, r->o.guidance = chk.guidance, r->o.wseed = chk.wseed, r->o.iseed = chk.iseed;
  if (r->decoder < 0) {
    fprintf(stderr, "flux: error: --serve: no program of this pipeline has an output `image`\n");
    goto fail;
  }
  r->dir = project_dir();
  for (int k = 0; k < r->n; k++) {
    Stage *g = &r->st[k];
    char err[1024];
    g->pr = &p->programs[k], g->s = g->pr->schedule;
    make_layout(g->s, &g->L);
    if (k == r->sampled && sample_bufs(g->s, &g->sb)) goto fail;
    if (k == r->sampled) g->lat = latents_buf(g->s, &g->sb);
    if (find_buf(g->s, "tokens", RT_INPUT) < 0) continue;
    snprintf(g->tokdir, sizeof g->tokdir, "%s/%s", o->model_dir, g->s->ckpt_tokenizer ? g->s->ckpt_tokenizer : "");
    if (!(g->tk = tok_kind(NULL, g->tokdir, err, sizeof err)) || !(g->tok = g->tk->open(g->tokdir, err, sizeof err))) {
      fprintf(stderr, "flux: error: %s\n", err);
      goto fail;
    }
  }
  r->host = !strcmp(plan, "host");
  int plan_auto = !strcmp(plan, "auto");
  if (open_plan(r, o->quiet, plan_auto)) {
    if (!plan_auto) goto fail;
    fprintf(stderr, "flux: note: --serve: the stages do not fit the device together: one stage at a time instead\n");
    r->host = 1;
    if (open_plan(r, o->quiet, 0)) goto fail;
  }
  double t0 = now_ms();
  for (int k = 0; k < r->n; k++) {
    Stage *g = &r->st[k];
    Dev *d = g->d ? g->d : dev_open(g->s, &g->L, r->dir, r->m);
    int bad = !d || load_weights(r, g, d, k == r->sampled ? chk.lora_set : NULL);
    if (!g->d) dev_close(d);
    if (bad) goto fail;
  }
  if (!o->quiet) printf("serve:    weights of %d programs loaded in %.1f ms%s\n", r->n, now_ms() - t0, chk.nlora ? ", --lora merged" : "");
  lora_close(chk.lora_set);
  return r;
fail:
  lora_close(chk.lora_set);
  resident_close(r);
  return NULL;
}

ResidentInfo resident_info(const Resident *r) {
  const RtSchedule *ds = r->st[r->decoder].s;
  const RtBuffer *im = &ds->bufs[find_buf(ds, "image", RT_OUTPUT)];
  ResidentInfo i = {.width = (int)im->shape[3], .height = (int)im->shape[2], .steps = r->o.steps, .guidance = r->o.guidance,
                    .seed = r->o.iseed, .host = r->host, .nstages = r->n};
  i.guided = r->sampled >= 0 && r->st[r->sampled].sb.g >= 0;
  i.sampled = r->sampled >= 0 ? r->st[r->sampled].s : NULL;
  for (int k = 0; k < r->n; k++) i.stage[k] = r->p->programs[k].name;
  return i;
}

// One stage of one image: its inputs (random from the seed, then the
// prompt's tokens and the earlier stages' outputs over them), the run, its
// outputs held; the decoder's image as a PNG. 0, or RES_BAD_INPUT /
// RES_DEVICE with the reason in err.
static int run_stage(Resident *r, Stage *g, const ImageAsk *q, Held *held, unsigned char **png, size_t *len, char *err,
                     size_t errlen) {
  const RtSchedule *s = g->s;
  Dev *d = g->d;
  int k = (int)(g - r->st), status = RES_DEVICE, i = -1;
  void **over = rt_calloc((size_t)s->nbufs, sizeof *over), *x = NULL;
  StSet none = {0};
  snprintf(err, errlen, "a device error (in the server's log)");
  if (!d && (!(d = dev_open(s, &g->L, r->dir, r->m)) ||
             (g->L.bytes[POOL_PARAMS] && dev_upload(d, POOL_PARAMS, 0, g->params, g->L.bytes[POOL_PARAMS]))))
    goto out;
  if (g->tk) {
    int lead;
    if (!(x = text_tokens(s, g->tk, g->tok, g->tokdir, q->prompt, &i, &lead, err, errlen))) {
      status = RES_BAD_INPUT;
      goto out;
    }
    over[i] = x;
  }
  for (int b = 0; b < g->pr->nbinds; b++) {
    if (!(x = held_input(s, &g->pr->binds[b], held, r->p->programs[g->pr->binds[b].from].name, &i))) goto out;
    free(over[i]);
    over[i] = x;
  }
  if (check_ids(s, &none, over, q->seed)) {
    snprintf(err, errlen, "the prompt's token ids are not rows of the model's embedding (in the server's log)");
    status = RES_BAD_INPUT;
    goto out;
  }
  if (upload_kind(d, s, &g->L, RT_INPUT, &none, q->seed, NULL)) goto out;
  for (int b = 0; b < s->nbufs; b++)
    if (over[b] && dev_upload(d, g->L.pool[b], g->L.offset[b], over[b], s->bufs[b].bytes)) goto out;
  if (dev_fill(d, POOL_ARENA, 0xff)) goto out;   // poison, as every run
  if (k == r->sampled) {
    Opts t = r->o;
    t.quiet = 1, t.steps = q->steps, t.guidance = q->guidance;
    void *lat = xmalloc((size_t)g->lat.bytes);
    int bad = sample_latents(d, s, &g->L, &t, &g->sb, lat);
    if (!bad) held_add(held, g->pr->name, &g->lat, lat);
    free(lat);
    if (bad) goto out;
  } else {
    if (dev_forward(d, r->o.sync)) goto out;
    for (int b = 0; b < s->nbufs; b++) {
      const RtBuffer *o = &s->bufs[b];
      if (o->kind != RT_OUTPUT) continue;
      void *h = xmalloc((size_t)o->bytes ? (size_t)o->bytes : 1);
      int bad = o->bytes && dev_download(d, g->L.pool[b], g->L.offset[b], h, o->bytes);
      if (!bad) held_add(held, g->pr->name, o, h);
      if (!bad && k == r->decoder && !strcmp(o->name, "image") && encode_png(o, h, png, len, err, errlen)) bad = 2;
      free(h);
      if (bad) {
        status = bad == 2 ? RES_DIVERGED : RES_DEVICE;
        goto out;
      }
    }
  }
  status = 0;
out:
  if (!g->d) dev_close(d);
  for (int b = 0; b < s->nbufs; b++) free(over[b]);
  free(over);
  return status;
}

int resident_image(Resident *r, const ImageAsk *q, unsigned char **png, size_t *len, double *stage_ms, char *err, size_t errlen) {
  Held *held = rt_calloc(1, sizeof *held);
  int status = 0;
  *png = NULL, *len = 0;
  for (int k = 0; k < r->n && !status; k++) {
    double t0 = now_ms();
    status = run_stage(r, &r->st[k], q, held, png, len, err, errlen);
    stage_ms[k] = now_ms() - t0;
  }
  for (int k = 0; k < held->n; k++) free(held->t[k].data);
  free(held);
  if (status) free(*png), *png = NULL;
  return status;
}
