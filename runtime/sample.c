// sample.c — `./flux --steps N`: BFL's denoise loop around the forward. The
// input `img` is the noise; each step runs the model at its timestep and
// moves img by the step times the output `out` (the velocity), in the
// arithmetic of BFL's code (sampler.h); img ends as the latents.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"
#include "sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// The model's sampling interface, or a message naming what is missing.
int sample_bufs(const RtSchedule *s, SampleBufs *sb) {
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

// --guidance G as the model's `guidance` input holds it: 0, or -1 (said) when
// G rounds to an infinity in that dtype (every latent would be NaN).
int guidance_fits(const RtSchedule *s, double g) {
  int i = find_buf(s, "guidance", RT_INPUT);
  if (i < 0) return 0;
  unsigned char tmp[16];
  dt_store(s->bufs[i].dtype, tmp, 0, g);
  if (isfinite(dt_load(s->bufs[i].dtype, tmp, 0))) return 0;
  fprintf(stderr, "flux: error: --guidance %g: beyond the range of the model's `guidance` input (%s); FLUX.1 [dev] is "
          "trained on guidance 1 to about 10\n", g, dt_st[s->bufs[i].dtype]);
  return -1;
}

// The latents as a buffer description: img's dtype and shape, named `latents`.
RtBuffer latents_buf(const RtSchedule *s, const SampleBufs *sb) {
  RtBuffer b = s->bufs[sb->img];
  b.name = "latents";
  b.kind = RT_OUTPUT;
  return b;
}

// every element of a [B] float buffer set to v (rounded to its dtype)
static int upload_scalar(Dev *d, const RtSchedule *s, const Layout *L, int i, double v, void *tmp) {
  const RtBuffer *b = &s->bufs[i];
  for (int64_t k = 0; k < b->shape[0]; k++) dt_store(b->dtype, tmp, k, v);
  return dev_upload(d, L->pool[i], L->offset[i], tmp, b->bytes);
}

// Steps t[0] -> t[1] -> ... -> t[steps]: each runs the forward at t[k] and
// moves img by (t[k+1] - t[k]) * out. x (img's bytes) ends as the latents.
int sample_latents(Dev *d, const RtSchedule *s, const Layout *L, const Opts *o, const SampleBufs *sb, void *x) {
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
      dt_store(bi->dtype, x, i, (float)dt_load(bi->dtype, x, i) + smp_round(bi->dtype, h * (float)dt_load(bi->dtype, pred, i)));
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
