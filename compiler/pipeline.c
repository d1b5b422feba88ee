// pipeline.c — `fluxcc pipeline`: FLUX's text-to-image pipeline as one
// project. Each stage's model (the T5 and CLIP text encoders, the
// transformer, the autoencoder's decoder) is compiled and optimized as
// `fluxcc MODEL --opt M` compiles it, into a folder of its own in one project;
// pipeline.c (templates/pipeline.c.in) lists the programs in the order they
// run and which input of each is an earlier one's output, and the project's
// one binary runs them all (runtime/run_pipeline.c: prompt to PNG).
#include "fluxcc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The stages, in the order they run. What the runtime does with a stage
// follows from the names below: `tokens` comes from --prompt, a program with
// `img` and `timesteps` is sampled (its `latents` are the final img), an
// output `image` is the PNG. `from` names an earlier stage by its index.
typedef struct { const char *input; int from; const char *output; } PipeBind;
static const struct PipeStage {
  const char *name;             // --NAME FILE; the program's folder and symbol suffix
  const char *what;
  const char *in[3], *out[2];   // what the runtime needs of it
  int nbinds;
  PipeBind binds[2];
} stages[] = {
  {.name = "t5", .what = "the T5 text encoder", .in = {"tokens"}, .out = {"hidden"}},
  {.name = "clip", .what = "the CLIP text encoder", .in = {"tokens"}, .out = {"pooled"}},
  {.name = "transformer", .what = "the transformer (sampled)", .in = {"img", "timesteps"}, .out = {"out"}, .nbinds = 2,
   .binds = {{.input = "txt", .from = 0, .output = "hidden"}, {.input = "y", .from = 1, .output = "pooled"}}},
  {.name = "vae", .what = "the autoencoder's decoder", .in = {"latents"}, .out = {"image"}, .nbinds = 1,
   .binds = {{.input = "latents", .from = 2, .output = "latents"}}},
};
#define NSTAGES (int)(sizeof stages / sizeof *stages)

int pipeline_stage(const char *name) {
  for (int i = 0; i < NSTAGES; i++)
    if (!strcmp(stages[i].name, name)) return i;
  return -1;
}

// What a later stage may read of a compiled one: its inputs and outputs.
typedef struct { char name[64]; int kind, dt; Shape shape; } PipeBuf;
typedef struct { PipeBuf b[64]; int n; const char *file; } PipeFace;

static const PipeBuf *face_find(const PipeFace *f, const char *name, int kind) {
  for (int i = 0; i < f->n; i++)
    if (f->b[i].kind == kind && !strcmp(f->b[i].name, name)) return &f->b[i];
  return NULL;
}

static int face_of(const Schedule *s, const char *file, PipeFace *f) {
  f->n = 0, f->file = file;
  for (int i = 0; i < s->bufs.n; i++) {
    const SBuf *b = &s->bufs.v[i];
    if ((b->kind != RT_INPUT && b->kind != RT_OUTPUT) || !b->name) continue;
    if (f->n == (int)(sizeof f->b / sizeof *f->b) || strlen(b->name) >= sizeof f->b[0].name) {
      fprintf(stderr, "fluxcc: error: %s: more than 64 inputs and outputs, or a name over 63 bytes: not a pipeline stage\n", file);
      return -1;
    }
    PipeBuf *p = &f->b[f->n++];
    snprintf(p->name, sizeof p->name, "%s", b->name);
    p->kind = b->kind, p->dt = b->dt, p->shape = b->shape;
  }
  return 0;
}

// A stage has what the runtime needs, and each bound input is float and
// shaped as the output it reads. Each problem said; -1 if any.
static int check_stage(int i, const PipeFace *faces) {
  const struct PipeStage *st = &stages[i];
  const PipeFace *f = &faces[i];
  int bad = 0;
  char a[160], b[160];
  for (int k = 0; k < 3 && st->in[k]; k++)
    if (!face_find(f, st->in[k], RT_INPUT))
      fprintf(stderr, "fluxcc: error: --%s %s: %s needs an input '%s'\n", st->name, f->file, st->what, st->in[k]), bad = 1;
  for (int k = 0; k < 2 && st->out[k]; k++)
    if (!face_find(f, st->out[k], RT_OUTPUT))
      fprintf(stderr, "fluxcc: error: --%s %s: %s needs an output '%s'\n", st->name, f->file, st->what, st->out[k]), bad = 1;
  for (int k = 0; k < st->nbinds; k++) {
    const PipeBind *pb = &st->binds[k];
    const PipeFace *g = &faces[pb->from];
    const PipeBuf *in = face_find(f, pb->input, RT_INPUT);
    // a sampled stage's `latents` are its final `img`
    const PipeBuf *out = !strcmp(pb->output, "latents") ? face_find(g, "img", RT_INPUT) : face_find(g, pb->output, RT_OUTPUT);
    bool needed = false;   // (then said above)
    for (int j = 0; j < 3 && st->in[j]; j++) needed |= !strcmp(st->in[j], pb->input);
    if (!in && !needed) {
      fprintf(stderr, "fluxcc: error: --%s %s: no input '%s' to take %s's '%s'\n", st->name, f->file, pb->input, stages[pb->from].name, pb->output);
      bad = 1;
    }
    if (!in || !out) continue;  // (a missing output: said when that stage was checked)
    shape_str(&in->shape, a, sizeof a);
    shape_str(&out->shape, b, sizeof b);
    if (strcmp(a, b) || in->dt == DT_BOOL || out->dt == DT_BOOL)
      fprintf(stderr, "fluxcc: error: --%s %s: its input '%s' is %s%s, but --%s %s's '%s' is %s%s: the stages do not fit\n", st->name,
              f->file, pb->input, dtype_name[in->dt], a, stages[pb->from].name, g->file, pb->output, dtype_name[out->dt], b), bad = 1;
  }
  return bad ? -1 : 0;
}

// pipeline.c: each program's schedule, its bindings, in order
static char *pipeline_source(const char *const *files) {
  Str ext = {0}, binds = {0}, progs = {0}, title = {0};
  for (int i = 0; i < NSTAGES; i++) {
    const struct PipeStage *st = &stages[i];
    str_printf(&ext, "extern const RtSchedule rt_schedule_%s;   // %s/schedule.c: ", st->name, st->name);
    src_escape(&ext, base_name(files[i]), false);
    str_printf(&ext, ", %s\n", st->what);
    str_printf(&title, "%s%s", i ? ", " : "", st->name);
    if (st->nbinds) {
      str_printf(&binds, "static const RtBind binds_%s[] = {\n", st->name);
      for (int k = 0; k < st->nbinds; k++)
        str_printf(&binds, "  {\"%s\", %d, \"%s\"},   // %s's %s\n", st->binds[k].input, st->binds[k].from, st->binds[k].output,
                   stages[st->binds[k].from].name, st->binds[k].output);
      str_printf(&binds, "};\n");
    }
    if (st->nbinds) str_printf(&progs, "  {\"%s\", &rt_schedule_%s, %d, binds_%s},\n", st->name, st->name, st->nbinds, st->name);
    else str_printf(&progs, "  {\"%s\", &rt_schedule_%s, 0, NULL},\n", st->name, st->name);
  }
  char n[16];
  snprintf(n, sizeof n, "%d", NSTAGES);
  const char *const kv[][2] = {{"title", title.s}, {"externs", ext.s}, {"binds", binds.s ? binds.s : ""}, {"programs", progs.s}, {"n", n}};
  char *text = template_fill(template_text(NULL, "pipeline.c.in"), kv, 5);
  free(ext.s), free(binds.s), free(progs.s), free(title.s);
  return text;
}

int cmd_pipeline(const char *const *files, const PipelineOpts *po, EmitOpts *eo) {
  for (int i = 0; i < NSTAGES; i++)
    if (!files[i]) {
      fprintf(stderr, "fluxcc: error: pipeline needs --%s MODEL.fdsl (%s)\n", stages[i].name, stages[i].what);
      return 2;
    }
  // First every stage elaborated and scheduled, and checked to fit the
  // others (cheap), so that a misfit is said before any search runs.
  PipeFace *faces = xcalloc(NSTAGES, sizeof *faces);
  int rc = 0;
  for (int i = 0; i < NSTAGES; i++) {
    Ctx c;
    ctx_init(&c);
    c.max_errors = po->max_errors;
    Schedule s = {.target = eo->target, .tile_n = po->tile_n};
    if (elaborate(&c, files[i]) || schedule_build(&c, &s) || face_of(&s, files[i], &faces[i])) rc = 1;
    else if (check_stage(i, faces)) rc = 1;
    schedule_free(&s);
    ctx_free(&c);
    if (faces[i].n == 0) break;   // (a stage that did not compile: the later ones cannot be checked against it)
  }
  if (rc == 0) rc = emit_begin(eo) ? 2 : 0;
  for (int i = 0; i < NSTAGES && rc == 0; i++) {
    Ctx c;
    ctx_init(&c);
    c.max_errors = po->max_errors;
    c.no_reuse = po->no_reuse;
    Schedule s = {.target = eo->target, .tile_n = po->tile_n};
    if (!po->quiet) fprintf(stderr, "pipeline: %s: %s (%s)\n", stages[i].name, files[i], stages[i].what);
    rc = elaborate(&c, files[i]) ? 1 : 0;
    if (rc == 0 && po->fp8 && !strcmp(stages[i].name, "transformer")) weights_fp8(&c);   // the stage that holds 12e9 weights
    rc = rc || schedule_build(&c, &s) ? 1 : 0;
    if (rc == 0 && po->method->kind == METHOD_FIXED) optimize_schedule(&c, &s, po->method, po->seed, po->tf32);
    else if (rc == 0) rc = search_schedule(&c, &s, po->search, po->info) ? 1 : 0;
    eo->model = files[i], eo->prog = stages[i].name;
    if (rc == 0 && emit_program(&c, &s, eo)) rc = 2;
    if (rc == 0 && !po->quiet)
      printf("%s: %d launches, %d unique kernels, arena %.1f MiB -> %s/%s/\n", files[i], s.l.n, s.k.n, (double)s.arena_bytes / 1048576.0,
             eo->out_dir, stages[i].name);
    schedule_free(&s);
    ctx_free(&c);
  }
  eo->prog = NULL;
  char *text = rc == 0 ? pipeline_source(files) : NULL;
  if (text && emit_text(eo, "pipeline.c", text)) rc = 2;
  free(text);
  free(faces);
  if (eo->stage && emit_end(eo, rc) && rc == 0) rc = 2;
  if (rc == 0) printf("pipeline: %d programs -> %s/ (make -C %s; ./flux --prompt TEXT --model-dir M -o image.png)\n", NSTAGES, eo->out_dir, eo->out_dir);
  return rc;
}
