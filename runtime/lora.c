// lora.c — --lora FILE[:SCALE]: LoRA files merged into a program's weights
// once, as they are uploaded (W += scale · alpha/rank · B·A, summed in double
// over every LoRA, then stored in the weight's dtype), so that a forward costs
// nothing extra and scale 0 leaves every bit as it was. The files are read
// with safetensors.c and checked whole before the device opens; the weights
// file is only read. Three key layouts name the modules:
//   kohya/ComfyUI  lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight, .lora_up.weight, .alpha
//   BFL            double_blocks.0.img_attn.qkv.lora_A.weight, .lora_B.weight [, .alpha]
//                  (or .lora_down/.lora_up; with a diffusion_model. prefix or none)
//   diffusers/peft transformer.transformer_blocks.0.attn.to_q.lora_A.weight, .lora_B.weight
//                  (q, k, v and proj_mlp are row slices of BFL's fused qkv and linear1)
// Without an alpha, alpha is the rank (peft keeps it outside the file); kohya's
// layout always has one, so there a missing one is an error.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MESSAGES 20

// Which rows of a BFL weight [R, C] a module is: all, a third of a fused qkv,
// a part of a single block's linear1 (q, k, v: C rows each, then the MLP's),
// or, for norm_out, all with the halves swapped (diffusers' scale, shift
// against BFL's shift, scale).
enum { SL_WHOLE, SL_Q, SL_K, SL_V, SL_L1Q, SL_L1K, SL_L1V, SL_MLP, SL_SWAP };

typedef struct {
  const char *diff, *bfl;
  int slice;
} DiffName;

// diffusers' FLUX.1 transformer against BFL's (diffusers' conversion script for FLUX, read backwards)
static const DiffName double_names[] = {   // transformer_blocks.N. -> double_blocks.N.
  {"attn.to_q", "img_attn.qkv", SL_Q},          {"attn.to_k", "img_attn.qkv", SL_K},
  {"attn.to_v", "img_attn.qkv", SL_V},          {"attn.add_q_proj", "txt_attn.qkv", SL_Q},
  {"attn.add_k_proj", "txt_attn.qkv", SL_K},    {"attn.add_v_proj", "txt_attn.qkv", SL_V},
  {"attn.to_out.0", "img_attn.proj", SL_WHOLE}, {"attn.to_add_out", "txt_attn.proj", SL_WHOLE},
  {"ff.net.0.proj", "img_mlp.0", SL_WHOLE},     {"ff.net.2", "img_mlp.2", SL_WHOLE},
  {"ff_context.net.0.proj", "txt_mlp.0", SL_WHOLE}, {"ff_context.net.2", "txt_mlp.2", SL_WHOLE},
  {"norm1.linear", "img_mod.lin", SL_WHOLE},    {"norm1_context.linear", "txt_mod.lin", SL_WHOLE},
};
static const DiffName single_names[] = {   // single_transformer_blocks.N. -> single_blocks.N.
  {"attn.to_q", "linear1", SL_L1Q}, {"attn.to_k", "linear1", SL_L1K}, {"attn.to_v", "linear1", SL_L1V},
  {"proj_mlp", "linear1", SL_MLP},  {"proj_out", "linear2", SL_WHOLE}, {"norm.linear", "modulation.lin", SL_WHOLE},
};
static const DiffName top_names[] = {
  {"x_embedder", "img_in", SL_WHOLE},
  {"context_embedder", "txt_in", SL_WHOLE},
  {"time_text_embed.timestep_embedder.linear_1", "time_in.in_layer", SL_WHOLE},
  {"time_text_embed.timestep_embedder.linear_2", "time_in.out_layer", SL_WHOLE},
  {"time_text_embed.text_embedder.linear_1", "vector_in.in_layer", SL_WHOLE},
  {"time_text_embed.text_embedder.linear_2", "vector_in.out_layer", SL_WHOLE},
  {"time_text_embed.guidance_embedder.linear_1", "guidance_in.in_layer", SL_WHOLE},
  {"time_text_embed.guidance_embedder.linear_2", "guidance_in.out_layer", SL_WHOLE},
  {"norm_out.linear", "final_layer.adaLN_modulation.1", SL_SWAP},
  {"proj_out", "final_layer.linear", SL_WHOLE},
};

// One module of one file, its tensors as f64
typedef struct {
  const char *file;
  char key[256];         // its down key, for messages
  int64_t rank, cols;
  double coef;           // scale · alpha / rank
  double *a, *b;         // A [rank, cols], B [rows, rank]
} Mod;

// Rows [dst, dst + n) of weight buf get coef · B[src .. src + n) · A
typedef struct {
  int buf, mod;
  int64_t dst, src, n;
} Piece;

typedef struct {
  char path[4096];
  double scale;
  int mods, skipped;
} LoraFile;

struct Lora {
  LoraFile f[MAX_LORAS];
  int nf;
  Mod *m;
  int nm;
  Piece *p;
  int np;
};

// ---------------------------------------------------------------------------
// FILE[:SCALE]

int lora_spec(const char *spec, char *file, size_t n, double *scale) {
  const char *colon = strrchr(spec, ':');
  *scale = 1;
  snprintf(file, n, "%.*s", (int)(colon ? colon - spec : (ptrdiff_t)strlen(spec)), spec);
  if (!*file) return -1;
  if (!colon) return 0;
  char *end;
  errno = 0;
  double v = strtod(colon + 1, &end);
  if (end == colon + 1 || *end || !isfinite(v) || (errno && errno != ERANGE) || isspace((unsigned char)colon[1])) return -1;
  *scale = v;
  return 0;
}

// ---------------------------------------------------------------------------
// Names: a module's key to the model's weight

// whether m (with separator sep) is the table's name t (with '.')
static int same_name(const char *t, const char *m, size_t len, char sep) {
  size_t i = 0;
  for (; t[i] && i < len; i++)
    if (t[i] == '.' ? m[i] != sep : m[i] != t[i]) return 0;
  return !t[i] && i == len;
}

// The 2-D parameter NAME.weight, or -1
static int weight_buf(const RtSchedule *s, const char *name) {
  char w[416];   // (names come from 400-byte buffers)
  snprintf(w, sizeof w, "%s.weight", name);
  int i = find_buf(s, w, RT_PARAM);
  return i >= 0 && s->bufs[i].ndim == 2 ? i : -1;
}

// kohya: the parameter whose name less ".weight", dots made '_', is m
static int kohya_buf(const RtSchedule *s, const char *m, size_t len) {
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    size_t n = strlen(b->name);
    if (b->kind != RT_PARAM || b->ndim != 2 || n != len + 7 || strcmp(b->name + len, ".weight")) continue;
    size_t k = 0;
    while (k < len && (b->name[k] == '.' ? m[k] == '_' : b->name[k] == m[k])) k++;
    if (k == len) return i;
  }
  return -1;
}

// diffusers (separator sep: '.', or '_' in kohya's form of them): the BFL weight and its slice, or -1
static int diffusers_buf(const RtSchedule *s, const char *m, size_t len, char sep, int *slice) {
  static const struct { const char *prefix, *bfl; const DiffName *t; int n; } groups[] = {
    {"single_transformer_blocks", "single_blocks", single_names, sizeof single_names / sizeof *single_names},
    {"transformer_blocks", "double_blocks", double_names, sizeof double_names / sizeof *double_names},
  };
  char name[400];
  for (int g = 0; g < 2; g++) {
    size_t pl = strlen(groups[g].prefix), d = pl + 1;
    if (len <= d || memcmp(m, groups[g].prefix, pl) || m[pl] != sep) continue;
    long block = 0;
    while (d < len && m[d] >= '0' && m[d] <= '9' && block < 100000) block = block * 10 + (m[d++] - '0');
    if (d == pl + 1 || d >= len || m[d] != sep) return -1;
    for (int k = 0; k < groups[g].n; k++)
      if (same_name(groups[g].t[k].diff, m + d + 1, len - d - 1, sep)) {
        snprintf(name, sizeof name, "%s.%ld.%s", groups[g].bfl, block, groups[g].t[k].bfl);
        *slice = groups[g].t[k].slice;
        return weight_buf(s, name);
      }
    return -1;
  }
  for (size_t k = 0; k < sizeof top_names / sizeof *top_names; k++)
    if (same_name(top_names[k].diff, m, len, sep)) {
      *slice = top_names[k].slice;
      return weight_buf(s, top_names[k].bfl);
    }
  return -1;
}

// The weight module m (its key less the suffix) is, and its slice; -1 if
// none of the model's. *kohya: m is in kohya's layout (which has alpha).
static int resolve(const RtSchedule *s, const char *m, size_t len, int *slice, int *kohya) {
  static const char *const strip[] = {"diffusion_model.", "transformer.", "base_model.model."};
  char name[400];
  *slice = SL_WHOLE;
  *kohya = 1;
  if (len > 10 && !memcmp(m, "lora_unet_", 10)) return kohya_buf(s, m + 10, len - 10);
  if (len > 17 && !memcmp(m, "lora_transformer_", 17)) return diffusers_buf(s, m + 17, len - 17, '_', slice);
  *kohya = 0;
  for (int k = 0; k < 3; k++) {
    size_t n = strlen(strip[k]);
    if (len > n && !memcmp(m, strip[k], n)) m += n, len -= n;
  }
  if (len >= sizeof name) return -1;
  snprintf(name, sizeof name, "%.*s", (int)len, m);
  int i = weight_buf(s, name);
  return i >= 0 ? i : diffusers_buf(s, m, len, '.', slice);
}

// The rows of weight [R, C] that slice is: one or two pieces into p (buf, dst, src, n); their count, or 0 if it does not fit
static int slice_rows(int slice, int64_t R, int64_t C, Piece *p) {
  p[0].dst = p[0].src = 0, p[0].n = R;
  if (slice >= SL_Q && slice <= SL_V) {
    if (R % 3) return 0;
    p[0].n = R / 3, p[0].dst = (slice - SL_Q) * p[0].n;
  } else if (slice >= SL_L1Q && slice <= SL_MLP) {
    if (R <= 3 * C) return 0;
    p[0].dst = (slice - SL_L1Q) * C, p[0].n = slice == SL_MLP ? R - 3 * C : C;
  } else if (slice == SL_SWAP) {
    if (R % 2) return 0;
    p[0].dst = R / 2, p[0].n = R / 2;
    p[1].dst = 0, p[1].src = R / 2, p[1].n = R / 2;
    return 2;
  }
  return 1;
}

// ---------------------------------------------------------------------------
// One file

enum { K_DOWN, K_UP, K_ALPHA };
static const struct { const char *suffix; int role; } suffixes[] = {
  {".lora_down.weight", K_DOWN}, {".lora_up.weight", K_UP}, {".lora_A.weight", K_DOWN}, {".lora_B.weight", K_UP},
  {".alpha", K_ALPHA},
};
static const char *const role_name[] = {"down (lora_down / lora_A)", "up (lora_up / lora_B)", "alpha"};

typedef struct {
  const char *name;   // the module: the first key's text, len bytes of it
  size_t len;
  const StTensor *t[3];
} Group;

// The tensor holds only finite numbers of a float dtype: 0, else -1 with a message
static int finite_tensor(const char *path, const StTensor *t) {
  char q[256];
  int code = src_code(t->dtype);
  if (code < RT_F16) {
    fprintf(stderr, "flux: error: %s: %s: dtype %s; a LoRA tensor needs F32, F16, BF16 or F64\n", path,
            safe_name(t->name, q, sizeof q), t->dtype);
    return -1;
  }
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  for (int64_t k = 0; k < n; k++)
    if (!isfinite(dt_load(code, t->data, k))) {
      fprintf(stderr, "flux: error: %s: %s: element %lld is not finite (NaN or infinity)\n", path,
              safe_name(t->name, q, sizeof q), (long long)k);
      return -1;
    }
  return 0;
}

static double *to_f64(const StTensor *t, int64_t n) {
  double *x = xmalloc((size_t)n * sizeof *x);
  int code = src_code(t->dtype);
  for (int64_t k = 0; k < n; k++) x[k] = dt_load(code, t->data, k);
  return x;
}

// Module g of file lf checked against the model and added to l: 0, 1 when it
// names no weight and skip is set, -1 when it is refused (said)
static int add_module(Lora *l, const RtSchedule *s, LoraFile *lf, const Group *g, int skip, int first_piece) {
  char q[256], w1[100], w2[100], w3[100];
  const char *path = lf->path;
  for (int r = 0; r < 2; r++)
    if (!g->t[r]) {
      const StTensor *o = g->t[!r] ? g->t[!r] : g->t[K_ALPHA];
      fprintf(stderr, "flux: error: %s: %s: a %s without its %s (%.*s%s)\n", path, safe_name(o->name, q, sizeof q),
              role_name[o == g->t[K_ALPHA] ? K_ALPHA : !r], role_name[r], (int)(g->len > 200 ? 200 : g->len), g->name,
              r == K_DOWN ? ".lora_down.weight or .lora_A.weight" : ".lora_up.weight or .lora_B.weight");
      return -1;
    }
  const StTensor *A = g->t[K_DOWN], *B = g->t[K_UP], *al = g->t[K_ALPHA];
  safe_name(A->name, q, sizeof q);
  int slice, kohya, i = resolve(s, g->name, g->len, &slice, &kohya);
  if (i < 0) {
    if (skip) return 1;
    fprintf(stderr, "flux: error: %s: %s: names no weight of the model %s (--lora-skip-unknown skips such keys)\n", path, q,
            s->model);
    return -1;
  }
  const RtBuffer *w = &s->bufs[i];
  if (kohya && !al) {
    fprintf(stderr, "flux: error: %s: %s: no %.*s.alpha: kohya's layout keeps one per module, and the scale depends on it\n",
            path, q, (int)(g->len > 200 ? 200 : g->len), g->name);
    return -1;
  }
  for (int r = 0; r < 3; r++)
    if (g->t[r] && finite_tensor(path, g->t[r])) return -1;
  Piece pc[2];
  int np = slice_rows(slice, w->shape[0], w->shape[1], pc);
  int64_t rows = slice == SL_SWAP ? w->shape[0] : pc[0].n, rank = A->ndim == 2 ? A->shape[0] : 0;
  shape_text(A->shape, A->ndim, w1, sizeof w1);
  shape_text(B->shape, B->ndim, w2, sizeof w2);
  shape_text(w->shape, w->ndim, w3, sizeof w3);
  if (!np) {
    fprintf(stderr, "flux: error: %s: %s: the weight %s is %s, which has no such slice\n", path, q, w->name, w3);
    return -1;
  }
  if (A->ndim != 2 || B->ndim != 2 || rank < 1 || B->shape[1] != rank || A->shape[1] != w->shape[1] || B->shape[0] != rows) {
    char part[100] = "";
    if (rows != w->shape[0]) snprintf(part, sizeof part, " (its rows %lld..%lld)", (long long)pc[0].dst, (long long)(pc[0].dst + rows));
    fprintf(stderr, "flux: error: %s: %s: down %s and up %s do not fit %s %s%s: wants down [rank, %lld] and up [%lld, rank], "
            "rank from 1\n", path, q, w1, w2, w->name, w3, part, (long long)w->shape[1], (long long)rows);
    return -1;
  }
  double alpha = (double)rank;
  if (al) {
    int64_t n = 1;
    for (int d = 0; d < al->ndim; d++) n *= al->shape[d];
    if (n != 1) {
      shape_text(al->shape, al->ndim, w1, sizeof w1);
      fprintf(stderr, "flux: error: %s: %s: alpha is %s; wants one number\n", path, safe_name(al->name, q, sizeof q), w1);
      return -1;
    }
    alpha = dt_load(src_code(al->dtype), al->data, 0);
  }
  for (int k = first_piece; k < l->np; k++)   // the same rows twice in one file (two layouts' names for one module)
    for (int e = 0; e < np; e++)
      if (l->p[k].buf == i && l->p[k].dst < pc[e].dst + pc[e].n && pc[e].dst < l->p[k].dst + l->p[k].n) {
        fprintf(stderr, "flux: error: %s: %s: its rows of %s are also those of %s in this file\n", path, q, w->name,
                l->m[l->p[k].mod].key);
        return -1;
      }
  Mod *m = &l->m[l->nm];
  m->file = lf->path;
  snprintf(m->key, sizeof m->key, "%s", q);
  m->rank = rank, m->cols = A->shape[1];
  m->coef = lf->scale * alpha / (double)rank;
  m->a = to_f64(A, rank * m->cols);
  m->b = to_f64(B, rows * rank);
  for (int e = 0; e < np; e++) {
    pc[e].buf = i, pc[e].mod = l->nm;
    l->p[l->np++] = pc[e];
  }
  l->nm++;
  return 0;
}

// The modules of one open file (its keys grouped by module); the number of problems said
static int add_file(Lora *l, const RtSchedule *s, LoraFile *lf, StFile *f, int skip) {
  char q[256];
  int bad = 0, ng = 0;
  Group *g = rt_calloc((size_t)f->n + 1, sizeof *g);
  if (f->n == 0) fprintf(stderr, "flux: error: %s: no tensors: not a LoRA file\n", lf->path), bad++;
  for (int k = 0; k < f->n; k++) {
    const char *key = f->t[k].name;
    size_t n = strlen(key), len = 0;
    int role = -1;
    for (size_t u = 0; u < sizeof suffixes / sizeof *suffixes && role < 0; u++) {
      size_t sl = strlen(suffixes[u].suffix);
      if (n > sl && !strcmp(key + n - sl, suffixes[u].suffix)) role = suffixes[u].role, len = n - sl;
    }
    if (role < 0) {
      if (bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: %s: not a LoRA key: keys end in .lora_down.weight, .lora_up.weight and .alpha "
                "(kohya) or .lora_A.weight and .lora_B.weight (peft, BFL)\n", lf->path, safe_name(key, q, sizeof q));
      continue;
    }
    int j = 0;
    while (j < ng && !(g[j].len == len && !memcmp(g[j].name, key, len))) j++;
    if (j == ng) g[ng++] = (Group){.name = key, .len = len};
    if (g[j].t[role]) {
      if (bad++ < MAX_MESSAGES)
        fprintf(stderr, "flux: error: %s: %s: a second %s for its module (with %s)\n", lf->path, safe_name(key, q, sizeof q),
                role_name[role], g[j].t[role]->name);
      continue;
    }
    g[j].t[role] = &f->t[k];
  }
  int first_piece = l->np;
  for (int j = 0; j < ng && !bad; j++) {
    int r = add_module(l, s, lf, &g[j], skip, first_piece);
    if (r < 0) bad++;
    lf->mods += r == 0, lf->skipped += r == 1;
  }
  free(g);
  return bad;
}

// ---------------------------------------------------------------------------

static void *grow(void *p, size_t n, size_t size) {
  void *q = realloc(p, (n ? n : 1) * size);
  if (!q) {
    fprintf(stderr, "flux: error: out of memory (%zu x %zu bytes)\n", n, size);
    exit(EXIT_DEVICE);
  }
  return q;
}

int lora_open(Lora **out, const RtSchedule *s, const char *const *specs, int n, int skip) {
  *out = NULL;
  if (n <= 0) return 0;
  // a --weights fp8 binary's linear weights (every weight a LoRA targets) are
  // 8-bit on the device: refused here, before any file is read or weight loads
  for (int i = 0; i < s->nbufs; i++)
    if (s->bufs[i].qpair > 0) {
      fprintf(stderr, "flux: error: --lora: %s was compiled with --weights fp8: its linear weights ('%s', ...) are float8_e4m3fn on "
              "the device and a LoRA merges into bf16/f32 weights only; compile without --weights fp8 to apply one\n", s->model, s->bufs[i].name);
      return -1;
    }
  Lora *l = rt_calloc(1, sizeof *l);
  int bad = 0, total = 0;
  for (int k = 0; k < n; k++) {
    StFile f;
    char err[1024];
    LoraFile *lf = &l->f[l->nf++];
    if (lora_spec(specs[k], lf->path, sizeof lf->path, &lf->scale)) {
      fprintf(stderr, "flux: error: --lora %s: wants FILE or FILE:SCALE, SCALE a finite number\n", specs[k]);
      bad = 1;
      continue;
    }
    if (st_open(&f, lf->path, err, sizeof err)) {
      fprintf(stderr, "flux: error: --lora: %s\n", err);
      bad = 1;
      continue;
    }
    total += f.n;   // room for every key as a module, and two pieces each
    l->m = grow(l->m, (size_t)total, sizeof *l->m);
    l->p = grow(l->p, 2 * (size_t)total, sizeof *l->p);
    bad |= add_file(l, s, lf, &f, skip) != 0;
    st_close(&f);
    if (!bad && lf->skipped)
      fprintf(stderr, "flux: note: %s: skipped %d module%s no weight of the model %s (--lora-skip-unknown)\n",
              lf->path, lf->skipped, lf->skipped == 1 ? " that names" : "s that name", s->model);
  }
  if (bad) {
    lora_close(l);
    return -1;
  }
  *out = l;
  return 0;
}

void lora_close(Lora *l) {
  if (!l) return;
  for (int k = 0; k < l->nm; k++) free(l->m[k].a), free(l->m[k].b);
  free(l->m);
  free(l->p);
  free(l);
}

void lora_print(const Lora *l) {
  for (int k = 0; l && k < l->nf; k++)
    printf("lora:     %s, scale %g: %d module%s merged into the weights\n", l->f[k].path, l->f[k].scale, l->f[k].mods,
           l->f[k].mods == 1 ? "" : "s");
}

int lora_touches(const Lora *l, int buf) {
  for (int k = 0; l && k < l->np; k++)
    if (l->p[k].buf == buf) return 1;
  return 0;
}

// the module on row r of weight buf with the largest |coef|: the likeliest cause of an overflow there
static const Mod *largest_on_row(const Lora *l, int buf, int64_t r) {
  const Mod *best = NULL;
  for (int k = 0; k < l->np; k++) {
    const Mod *m = &l->m[l->p[k].mod];
    if (l->p[k].buf == buf && r >= l->p[k].dst && r < l->p[k].dst + l->p[k].n && (!best || fabs(m->coef) > fabs(best->coef))) best = m;
  }
  return best;
}

// Weight buf (b, its values w in its dtype) with every LoRA added, into out
// (b->bytes): row by row, the sum in double, each changed element stored once
// in the dtype; an element no LoRA changes (scale 0, a zero row) keeps its
// bits. -1 if a sum is not finite (said).
int lora_merge(const Lora *l, int buf, const RtBuffer *b, const void *w, void *out) {
  int64_t R = b->shape[0], C = b->shape[1];
  double *acc = xmalloc((size_t)C * sizeof *acc);
  memcpy(out, w, (size_t)b->bytes);
  int bad = 0;
  for (int64_t r = 0; r < R && !bad; r++) {
    int any = 0;
    for (int k = 0; k < l->np; k++) {
      const Piece *p = &l->p[k];
      if (p->buf != buf || r < p->dst || r >= p->dst + p->n) continue;
      const Mod *m = &l->m[p->mod];
      const double *brow = m->b + (r - p->dst + p->src) * m->rank;
      if (!any) memset(acc, 0, (size_t)C * sizeof *acc), any = 1;
      for (int64_t j = 0; j < m->rank; j++) {
        double c = m->coef * brow[j];
        const double *arow = m->a + j * C;
        if (c != 0)
          for (int64_t e = 0; e < C; e++) acc[e] += c * arow[e];
      }
    }
    for (int64_t e = 0; any && e < C; e++) {
      if (acc[e] == 0) continue;
      double v = dt_load(b->dtype, w, r * C + e);
      dt_store(b->dtype, out, r * C + e, v + acc[e]);
      if (isfinite(v) && !isfinite(dt_load(b->dtype, out, r * C + e))) {   // too large for the dtype
        const Mod *m = largest_on_row(l, buf, r);
        fprintf(stderr, "flux: error: %s: %s: %s [%lld, %lld] becomes %g + %g with the LoRAs added: not finite in %s "
                "(a scale too large?)\n", m->file, m->key, b->name, (long long)r, (long long)e, v, acc[e], dt_name[b->dtype]);
        bad = 1;
        break;
      }
    }
  }
  free(acc);
  return bad ? -1 : 0;
}
