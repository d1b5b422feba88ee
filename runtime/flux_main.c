// flux_main.c — the host program of a project emitted by fluxcc: its
// command line and main.
//
// It loads (or generates) parameters and inputs, runs the launches of the
// generated schedule (schedule.c) on a device through backend.h, and then
// writes, checks and times the outputs (run_program.c); a pipeline's binary
// runs its programs in order, prompt to PNG (run_pipeline.c). The same files
// serve every target; flux_main.h lists them.
//
// Exit status: 0 ok, 1 --check failed, 2 bad usage or bad input (files,
// keys, shapes, or an inconsistent schedule), 3 device error.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"
#include "numbers.h"
#include "sampler.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  "  --max-memory BYTES        refuse, before anything loads, when the program needs\n"
  "                            more device memory than that (exit 3)\n"
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
  "  --lora FILE[:SCALE]       merge a LoRA file into the weights as they load:\n"
  "                            W += SCALE alpha/rank B A (SCALE default 1, may be\n"
  "                            negative); repeatable, the LoRAs add up. Keys of\n"
  "                            kohya (lora_unet_..., .lora_down/.lora_up/.alpha),\n"
  "                            BFL (double_blocks.0.img_attn.qkv.lora_A/.lora_B) or\n"
  "                            diffusers/peft (transformer.transformer_blocks.0.\n"
  "                            attn.to_q.lora_A...); alpha defaults to the rank\n"
  "                            where the file has none (not in kohya's layout)\n"
  "  --lora-skip-unknown       skip (and count) LoRA modules that name no weight of\n"
  "                            the model, rather than refuse the file\n"
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
  "  --lora FILE[:SCALE]       merge a LoRA into the transformer's weights as they\n"
  "                            load (repeatable; see a program's --help)\n"
  "  --lora-skip-unknown       skip LoRA modules that name no weight, with a count\n"
  "  --max-memory BYTES        refuse, before anything loads, when a stage needs more\n"
  "                            device memory than that, naming it (exit 3)\n"
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
  "Serving (with --model-dir; built when the machine has libmicrohttpd):\n"
  "  --serve HOST:PORT         keep the models loaded and answer HTTP: POST\n"
  "                            /v1/images/generations (OpenAI's images API: prompt,\n"
  "                            n, size, response_format b64_json; and seed, steps,\n"
  "                            guidance), GET /health, GET /metrics (Prometheus);\n"
  "                            HOST 127.0.0.1 unless given; PORT 0: any free one\n"
  "  --queue N                 requests that may wait for the one running (default 8;\n"
  "                            more are answered 429 with Retry-After)\n"
  "  --max-steps N             the most steps a request may ask (default 100)\n"
  "  --timeout S               a connection idle for S seconds is closed (default 30)\n"
  "  --api-key-file F          requests need `Authorization: Bearer KEY`, KEY the\n"
  "                            first line of F; needed to listen beyond loopback\n"
  "  --serve-plan P            device: every stage's weights kept on the device;\n"
  "                            host: one stage at a time, the weights kept in host\n"
  "                            memory; auto (default): device when they all fit\n"
  "  SIGTERM or SIGINT stops: the waiting requests are answered 503, the running\n"
  "  one is finished and sent, exit 0.\n"
  "\n"
  "Resolution and token counts are compile-time constants of the models.\n"
  "Exit status: 0 ok, 2 bad usage or bad input, 3 device error.\n";

// ---------------------------------------------------------------------------
// Command line

static int parse_f64(const char *s, double *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);   // (ERANGE with a finite v: an underflow to a tiny number or 0, which is fine)
  if (end == s || *end || isspace((unsigned char)*s) || !isfinite(v) || v < 0 || (errno && errno != ERANGE)) return -1;
  *out = v;
  return 0;
}

static int takes_value(const char *a) {
  static const char *const opts[] = {"--weights", "--inputs", "--out", "--check", "--random-weights",
                                     "--random-inputs", "--rtol", "--atol", "--bench", "--profile", "--trace",
                                     "--steps", "--guidance", "--png", "--prompt", "--tokenizer", "--input", "--model-dir",
                                     "-o", "--seed", "--stages", "--width", "--height", "--serve", "--queue",
                                     "--max-steps", "--timeout", "--api-key-file", "--serve-plan", "--lora", "--max-memory"};
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
                            !strcmp(a, "--height") || !strcmp(a, "--serve") || !strcmp(a, "--queue") || !strcmp(a, "--max-steps") ||
                            !strcmp(a, "--timeout") || !strcmp(a, "--api-key-file") || !strcmp(a, "--serve-plan"))) {
      if (!v) return bad_usage("option '%s' needs a value", a);
      const struct { const char *name, *what; int lo, hi, *to; } ints[] = {   // (one message for each)
        {"--width", "a number of pixels", 1, 1 << 20, &o->width}, {"--height", "a number of pixels", 1, 1 << 20, &o->height},
        {"--queue", "a number of requests", 1, 4096, &o->queue}, {"--max-steps", "a number of steps", 1, SMP_MAX_STEPS, &o->max_steps},
        {"--timeout", "a number of seconds", 1, 86400, &o->timeout}};
      int known = 0;
      for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) {
        if (strcmp(a, ints[k].name)) continue;
        known = 1;
        if (nb_parse_int(v, ints[k].lo, ints[k].hi, ints[k].to)) {
          char m[400];
          snprintf(m, sizeof m, "%s wants %s (%d to %d), not '%.300s'", a, ints[k].what, ints[k].lo, ints[k].hi, v);
          return bad_usage("%s", m);
        }
      }
      if (known) {}
      else if (!strcmp(a, "-o")) o->png = v;
      else if (!strcmp(a, "--serve")) o->serve = v;
      else if (!strcmp(a, "--api-key-file")) o->api_key_file = v;
      else if (!strcmp(a, "--stages")) o->stages = v;
      else if (!strcmp(a, "--serve-plan")) {
        if (strcmp(v, "auto") && strcmp(v, "device") && strcmp(v, "host")) return bad_usage("--serve-plan wants auto, device or host, not '%s'", v);
        o->serve_plan = v;
      }
      else if (nb_parse_u64(v, 0, UINT64_MAX, &o->iseed)) return bad_usage("--seed wants a decimal integer from 0 to 18446744073709551615, not '%s'", v);
      else o->irand = 1;
    } else if (!strcmp(a, "--graph")) {
      o->graph = 1, takes = 0;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = 1, takes = 0;
    } else if (!strcmp(a, "--allow-edited")) {
      o->allow_edited = 1, takes = 0;
    } else if (!strcmp(a, "--lora-skip-unknown")) {
      o->lora_skip = 1, takes = 0;
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
      if (parse_f64(v, &o->rtol)) return bad_usage("--rtol wants a finite non-negative number, not '%s'", v);
      o->has_rtol = 1;
    } else if (!strcmp(a, "--atol")) {
      if (parse_f64(v, &o->atol)) return bad_usage("--atol wants a finite non-negative number, not '%s'", v);
      o->has_atol = 1;
    } else if (!strcmp(a, "--max-memory")) {
      if (nb_parse_u64(v, 1, UINT64_MAX, &o->max_memory))
        return bad_usage("--max-memory wants a decimal number of bytes from 1 to 18446744073709551615, not '%s'", v);
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
    } else if (!strcmp(a, "--lora")) {
      char file[4096];
      double scale;
      if (o->nlora == MAX_LORAS) return bad_usage("--lora: more than 16 ('%s')", v);
      if (lora_spec(v, file, sizeof file, &scale)) return bad_usage("--lora wants FILE or FILE:SCALE, SCALE a finite number, not '%s'", v);
      o->lora[o->nlora++] = v;
    } else if (!strcmp(a, "--prompt")) {
      o->prompt = v;
    } else if (!strcmp(a, "--tokenizer")) {
      o->tokenizer = v;
    } else if (!strcmp(a, "--model-dir")) {
      o->model_dir = v;
    } else if (!strcmp(a, "--steps")) {
      if (nb_parse_int(v, 1, SMP_MAX_STEPS, &o->steps)) return bad_usage("--steps wants a decimal integer from 1 to 1000, not '%s'", v);
    } else if (!strcmp(a, "--guidance")) {
      if (parse_f64(v, &o->guidance)) return bad_usage("--guidance wants a finite non-negative number, not '%s'", v);
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
  const char *outs[] = {o->out, o->png, o->trace}, *opt[] = {"--out", pipeline ? "-o" : "--png", "--trace"};
  for (int i = 0; i < 3; i++) {   // said before the run, not after it
    char err[4400];
    if (outs[i] && out_check(outs[i], err, sizeof err)) {
      fprintf(stderr, "flux: error: %s %s\n", opt[i], err);
      return EXIT_USAGE;
    }
  }
  if (pipeline && !o->serve && (o->queue || o->max_steps || o->timeout || o->api_key_file || o->serve_plan))
    return bad_usage("%s", "--queue, --max-steps, --timeout, --api-key-file and --serve-plan are settings of --serve");
  if (pipeline && o->serve && (o->prompt || o->png || o->stages || o->irand || o->steps || o->has_guidance))
    return bad_usage("%s", "--serve takes the prompt, seed, steps and guidance from each request: --prompt, -o, --stages, --seed, "
                           "--steps and --guidance are for one image");
#ifndef FLUX_SERVE
  if (o->serve) return bad_usage("%s", "--serve: this binary was built without libmicrohttpd or libpng (install libmicrohttpd-dev, libpng-dev and pkg-config, then make clean all)");
#endif
  if (o->lora_skip && !o->nlora) return bad_usage("%s", "--lora-skip-unknown needs --lora FILE");
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

int main(int argc, char **argv) {
  const RtPipeline *p = &rt_pipeline;
  Opts o;
  int status = parse_args(argc, argv, &o, p != NULL, p ? 1 : rt_schedule.seed_default);
  if (status >= 0) return status;
#ifdef FLUX_SERVE
  if (p && o.serve) return serve_pipeline(p, &o);
#endif
  return p ? run_pipeline(p, &o) : run_program(&rt_schedule, &o, NULL, NULL, NULL);
}
