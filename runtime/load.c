// load.c — where a program's parameters and inputs come from, and their way
// to the device: safetensors files checked against the model (every tensor
// there with its shape and a usable dtype, nothing unexpected), the seeded
// generator (as `fluxcc init`), --input NAME=FILE, --prompt's token ids, and
// --model-dir's files where the model's checkpoint() says; gathers' ids
// checked; each kind uploaded by several threads at once, the parameters
// with --lora's files merged in (lora.c).
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"
#include "numbers.h"
#include "tokenizer.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MESSAGES 20

static const char *const kind_name[] = {"input", "parameter", "output", "temporary", "constant"};

// ---------------------------------------------------------------------------
// Files

// Opens a safetensors file and checks it against the buffers of one kind:
// every one present with its shape and a usable dtype, and (unless
// allow_extra) nothing else but parameters under the model's unused_keys
// prefixes. Prints up to MAX_MESSAGES problems.
// given[i] set: buffer i comes from elsewhere (--input, --prompt), so the file need not hold it.
// quiet (--quiet): no note (the fp8 quantization's), only problems.
int open_checked(StSet *set, const char *const *paths, int npaths, const RtSchedule *s, int kind, int allow_extra,
                 void *const *given, int quiet) {
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
  int quantized = 0;   // fp8 weights quantized from a float tensor (one note)
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    if (b->kind != kind) continue;
    shape_text(b->shape, b->ndim, want, sizeof want);
    int fi = 0;
    StTensor *t = st_set_find(set, b->name, &fi);
    if (!t && given && given[i]) continue;
    if (b->qpair < 0 && !t) continue;   // an fp8 weight's scale: 1, or made with its weight (fp8.c)
    if (t && b->qpair > 0 && src_code(t->dtype) != RT_F8E4M3) quantized++;
    if (!t) {
      if (bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: missing %s '%s' (%s%s)\n", set->label, kind_name[kind], b->name,
                dt_name[b->dtype], want);
      continue;
    }
    const char *path = set->f[fi].path;
    used[first[fi] + (t - set->f[fi].t)] = 1;
    shape_text(t->shape, t->ndim, got, sizeof got);
    // a scale (of an fp8 weight, or of an F8_E4M3 tensor read into a float weight): 1 value or one per row
    if (b->qpair < 0 || (!b->qpair && kind == RT_PARAM && src_code(t->dtype) == RT_F8E4M3)) {
      const StTensor *ts = b->qpair < 0 ? t : fp8_scale_tensor(set, b->name);
      int fs = 0;
      if (ts && !b->qpair) st_set_find(set, ts->name, &fs), used[first[fs] + (ts - set->f[fs].t)] = 1;
      if (ts && fp8_scale_bad(ts, b->qpair < 0 ? b->shape[0] : b->ndim ? b->shape[0] : 1, q, sizeof q) && bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: scale '%s' %s\n", set->f[b->qpair < 0 ? fi : fs].path, ts->name, q);
      if (b->qpair < 0) continue;
    }
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
        if (!isfinite(dt_load(src_code(t->dtype), t->data, k)) && nonfinite++ == 0) first = k;
      if (nonfinite && src_code(t->dtype) == RT_F8E4M3) {   // 0x7f, 0xff: no weight is NaN on purpose
        if (bad++ < MAX_MESSAGES)
          fprintf(stderr, "flux: error: %s: %s '%s' holds %lld NaN encodings (0x7f/0xff) of F8_E4M3 (first at element %lld): a corrupt tensor\n",
                  path, kind_name[kind], b->name, (long long)nonfinite, (long long)first);
      } else if (nonfinite && kind == RT_OUTPUT) {
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
      // (ComfyUI's scaled-fp8 files say so with an empty tensor `scaled_fp8`)
      if (!used[first[f] + k] && !(kind == RT_PARAM && (nb_has_prefix(name, s->unused, s->nunused) || !strcmp(name, "scaled_fp8"))) &&
          bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: unexpected tensor '%s': the model has no %s of that name\n", set->f[f].path,
                safe_name(name, q, sizeof q), kind_name[kind]);
    }
  if (bad > MAX_MESSAGES)
    fprintf(stderr, "flux: error: %s: ... and %d more problems\n", set->label, bad - MAX_MESSAGES);
  if (!bad && quantized && !quiet)
    fprintf(stderr, "flux: note: %s: %d weights quantized to fp8 at load (float8_e4m3fn, per-row scale absmax/448)\n", set->label, quantized);
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
  if (code == RT_F8E4M3) fp8_dequant(b, t, f, *tmp);   // times its scale, if the file has one
  else if (b->data) {
    for (int64_t k = 0; k < n; k++) dt_store(b->dtype, *tmp, k, b->data[k]);
  } else if (t) {
    for (int64_t k = 0; k < n; k++) dt_store(b->dtype, *tmp, k, dt_load(code, t->data, k));
  } else {
    uint64_t st = nb_stream(seed, b->name);
    for (int64_t k = 0; k < n; k++)
      dt_store(b->dtype, *tmp, k, nb_value(&st, b->init, b->ia, b->ib, b->kind == RT_PARAM, b->ndim, b->shape, k));
  }
  return *tmp;
}

// Inputs that are a gather's ids (RtIds): each a whole number in [0, rows),
// else an error naming the input, the element, its value and the table.
// (The kernels clamp ids into their table: a bad one would read a wrong row.)
int check_ids(const RtSchedule *s, StSet *inf, void *const *over, uint64_t seed) {
  void *tmp = NULL;
  uint64_t cap = 0;
  int bad = 0;
  for (int q = 0; q < s->nids && !bad; q++) {
    const RtIds *c = &s->ids[q];
    const RtBuffer *b = &s->bufs[c->buf];
    const void *v = over[c->buf] ? over[c->buf] : values(b, inf, seed, &tmp, &cap);
    for (int64_t k = 0, n = numel(b); k < n && !bad; k++) {
      double x = dt_load(b->dtype, v, k);
      if (x >= 0 && x < (double)c->rows && x == floor(x)) continue;
      char at[RT_MAXDIM * 24] = "", nb[256];
      int64_t idx[RT_MAXDIM], r = k;
      for (int d = b->ndim - 1; d >= 0; d--) idx[d] = r % b->shape[d], r /= b->shape[d];  // the element's index, row-major
      for (int d = 0, w = 0; d < b->ndim; d++) w += snprintf(at + w, sizeof at - (size_t)w, "%s%lld", d ? ", " : "", (long long)idx[d]);
      fprintf(stderr, "flux: error: input '%s' [%s] is %.9g, not a row of %s: it holds ids of its %lld rows (take at %s), "
              "whole numbers 0 to %lld\n", safe_name(b->name, nb, sizeof nb), at, x, c->table, (long long)c->rows, c->where,
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
  const Lora *lora;
  pthread_mutex_t take, dev;   // guard next / the device and failed
  int next, failed;            // failed: the exit status
} Uploader;

static void *upload_worker(void *arg) {
  Uploader *u = arg;
  void *tmp = NULL, *merged = NULL;
  uint64_t cap = 0, mcap = 0;
  for (;;) {
    pthread_mutex_lock(&u->take);
    int i = u->next;
    while (i < u->s->nbufs && (u->s->bufs[i].kind != u->kind || u->s->bufs[i].bytes == 0)) i++;
    u->next = i + 1;
    pthread_mutex_unlock(&u->take);
    if (i >= u->s->nbufs) break;
    const RtBuffer *b = &u->s->bufs[i];
    if (b->qpair < 0) continue;   // an fp8 weight's scale: uploaded with its weight
    float *scale = b->qpair > 0 ? xmalloc((size_t)b->shape[0] * sizeof *scale) : NULL;
    const void *src = scale ? fp8_values(b, u->f, u->seed, &tmp, &cap, scale) : values(b, u->f, u->seed, &tmp, &cap);
    int bad = 0;
    if (lora_touches(u->lora, i)) {   // (never an fp8 weight: lora_open refuses those binaries)
      if (mcap < b->bytes) free(merged), merged = xmalloc((size_t)b->bytes), mcap = b->bytes;
      bad = lora_merge(u->lora, i, b, src, merged) ? EXIT_USAGE : 0;
      src = merged;
    }
    pthread_mutex_lock(&u->dev);
    if (!u->failed && bad) u->failed = bad;
    if (!u->failed && dev_upload(u->d, u->L->pool[i], u->L->offset[i], src, b->bytes)) u->failed = EXIT_DEVICE;
    int si = b->qpair - 1;
    if (!u->failed && scale && dev_upload(u->d, u->L->pool[si], u->L->offset[si], scale, u->s->bufs[si].bytes)) u->failed = EXIT_DEVICE;
    free(scale);
    int stop = u->failed;
    pthread_mutex_unlock(&u->dev);
    if (stop) break;
  }
  free(tmp);
  free(merged);
  return NULL;
}

// 0, or the exit status: EXIT_DEVICE, or EXIT_USAGE when a LoRA makes a weight non-finite (said)
int upload_kind(Dev *d, const RtSchedule *s, const Layout *L, int kind, StSet *f, uint64_t seed, const Lora *lora) {
  Uploader u = {.d = d, .s = s, .L = L, .kind = kind, .f = f, .seed = seed, .lora = lora};
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
  return u.failed;
}


// ---------------------------------------------------------------------------
// Inputs from elsewhere: --model-dir's files, --input, --prompt

// --model-dir M: the weights file (or its shards' index) and the tokenizer
// folder where the model's checkpoint() says, into o; -1 with each missing one named.
int model_dir_paths(const RtSchedule *s, Opts *o, char *weights, char *tokenizer, size_t n) {
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
void *bound_input(const RtSchedule *s, const char *spec, int *buf) {
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
    for (int64_t k = 0; k < numel(b); k++) dt_store(b->dtype, x, k, dt_load(src_code(t->dtype), t->data, k));
  }
  st_close(&f);
  return x;
}

// The input `tokens` ([B, T], every row text's T ids) from the open tokenizer
// t of kind k (from folder dir) as host bytes in its dtype; *lead: the ids
// before the trailing run of the last one. NULL with the reason in err. Ids
// must be below the model's vocabulary, where the model says it
// (`~ integers(0, VOCAB)`).
void *text_tokens(const RtSchedule *s, const TokKind *k, const void *t, const char *dir, const char *text, int *buf, int *lead,
                  char *err, size_t errlen) {
  *buf = find_buf(s, "tokens", RT_INPUT);
  const RtBuffer *b = *buf >= 0 ? &s->bufs[*buf] : NULL;
  if (!b || b->ndim != 2 || b->dtype == RT_BOOL || b->shape[1] < 2 || b->shape[1] > 1 << 20)
    return snprintf(err, errlen, "--prompt needs an input `tokens` shaped [B, T] (T from 2) of a float dtype; the model %s has not",
                    s->model), NULL;
  int n = (int)b->shape[1];
  int32_t *ids = rt_calloc((size_t)n, sizeof *ids);
  void *x = NULL;
  if (k->encode(t, text, ids, n, err, errlen)) goto out;
  for (*lead = n; *lead > 0 && ids[*lead - 1] == ids[n - 1];) --*lead;   // (CLIP's pad is its end token, T5's is not)
  for (int i = 0; i < n; i++)
    if (b->init == RT_INIT_INTEGERS && (ids[i] < b->ia || ids[i] >= b->ib)) {
      snprintf(err, errlen, "%s: token id %d is outside the model's vocabulary [%.0f, %.0f): this tokenizer is not the model's", dir,
               ids[i], b->ia, b->ib);
      goto out;
    }
  x = xmalloc((size_t)b->bytes);
  for (int64_t e = 0; e < numel(b); e++) dt_store(b->dtype, x, e, ids[e % n]);
out:
  free(ids);
  return x;
}

// --prompt: text_tokens with the tokenizer of o->tokenizer, opened for it;
// NULL with a message.
void *prompt_tokens(const RtSchedule *s, const Opts *o, int *buf, int quiet) {
  char err[1024];
  int lead = 0;
  const TokKind *k = tok_kind(NULL, o->tokenizer, err, sizeof err);
  void *t = k ? k->open(o->tokenizer, err, sizeof err) : NULL;
  void *x = t ? text_tokens(s, k, t, o->tokenizer, o->prompt, buf, &lead, err, sizeof err) : NULL;
  if (!x) fprintf(stderr, "flux: error: %s\n", err);
  else if (!quiet) {
    const RtBuffer *b = &s->bufs[*buf];
    printf("prompt:   %d of %d ids before the trailing run of id %.0f (%s, %s)\n", lead, (int)b->shape[1],
           dt_load(b->dtype, x, b->shape[1] - 1), k->name, o->tokenizer);
  }
  if (t) k->close(t);
  return x;
}
