// serve.c — `./flux --model-dir M --serve HOST:PORT`: a pipeline's binary
// that keeps its models loaded (resident.c) and answers HTTP on
// libmicrohttpd, one connection a thread:
//
//   POST /v1/images/generations  OpenAI's images API: {"prompt", "n", "size",
//                                "response_format": "b64_json"} and FLUX's
//                                "seed", "steps", "guidance" -> {"created",
//                                "data": [{"b64_json": PNG, "seed"}]}
//   GET  /health                 {"status": "ok"} (503 after a device error)
//   GET  /metrics                Prometheus text: requests, queue, stage times
//
// One image at a time, by one worker thread that owns the device; requests
// wait in a bounded FIFO (full: 429 with Retry-After), a waiting client that
// hangs up leaves it. Every request is checked before it is queued (a 4xx
// naming the field). SIGTERM or SIGINT: no new connections, the waiting
// requests answered 503, the running image finished and sent, exit 0.
#define _GNU_SOURCE

#include "flux_main.h"
#include "numbers.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY (1 << 20)        // a request body's bytes
#define MAX_PROMPT 4000           // a prompt's characters (as OpenAI's images API)
#define MAX_IMAGES 4              // "n"

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

typedef struct Job {
  ImageAsk ask;
  char prompt[4 * MAX_PROMPT + 1];
  int n;                    // images, seeds seed .. seed + n - 1
  long id;                  // in arrival order
  int state, status;        // JOB_*; then 0 or RES_*
  unsigned char *png[MAX_IMAGES];
  size_t len[MAX_IMAGES];
  char err[1024];
  double queued_ms, ran_ms;
} Job;

// the answers counted by status code, for /metrics
static const int codes[] = {200, 400, 401, 404, 405, 411, 413, 422, 429, 500, 503};
#define NCODES (int)(sizeof codes / sizeof *codes)

typedef struct {
  Resident *res;
  ResidentInfo info;
  int quiet, qmax, max_steps;
  char key[512];            // --api-key-file's token ("": none)
  pthread_mutex_t mu;
  pthread_cond_t cv;        // any job's state, the queue, stopping
  Job **queue;              // waiting jobs, oldest first
  int qlen, running, stopping, broken;
  long next_id, inflight;   // generations from accepted to their answer sent
  // metrics
  long answered[NCODES], images, dropped;
  double gen_s, stage_s[16];
  long gens;
} Server;

// Per connection: the request body as it comes
typedef struct {
  char *body;
  size_t len;
  int route, counted_job;
} Conn;

enum { R_NONE, R_GENERATE, R_HEALTH, R_METRICS };

// ---------------------------------------------------------------------------
// Answers

static void count(Server *S, int code) {
  pthread_mutex_lock(&S->mu);
  for (int i = 0; i < NCODES; i++)
    if (codes[i] == code) S->answered[i]++;
  pthread_mutex_unlock(&S->mu);
}

static enum MHD_Result answer(Server *S, struct MHD_Connection *c, int code, const char *type, char *text, const char *h,
                              const char *hv) {
  struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
  if (!r) return free(text), MHD_NO;
  MHD_add_response_header(r, "Content-Type", type);
  if (h) MHD_add_response_header(r, h, hv);
  enum MHD_Result ok = MHD_queue_response(c, (unsigned)code, r);
  MHD_destroy_response(r);
  count(S, code);
  return ok;
}

static enum MHD_Result answer_json(Server *S, struct MHD_Connection *c, int code, cJSON *j, const char *h, const char *hv) {
  char *text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  if (!text) return MHD_NO;
  return answer(S, c, code, "application/json", text, h, hv);
}

// OpenAI's error shape: {"error": {"message", "type", "param", "code"}}
static enum MHD_Result refuse(Server *S, struct MHD_Connection *c, int code, const char *param, const char *fmt, ...) {
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cJSON *j = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(j, "error");
  cJSON_AddStringToObject(e, "message", msg);
  cJSON_AddStringToObject(e, "type", code == 401 ? "authentication_error" : code < 500 ? "invalid_request_error" : "server_error");
  if (param) cJSON_AddStringToObject(e, "param", param);
  else cJSON_AddNullToObject(e, "param");
  cJSON_AddNumberToObject(e, "code", code);
  return answer_json(S, c, code, j, code == 429 ? "Retry-After" : code == 401 ? "WWW-Authenticate" : NULL,
                     code == 429 ? "1" : "Bearer");
}

static char *base64(const unsigned char *p, size_t n) {
  static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *o = xmalloc(4 * ((n + 2) / 3) + 1), *w = o;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    *w++ = al[v >> 18 & 63], *w++ = al[v >> 12 & 63];
    *w++ = i + 1 < n ? al[v >> 6 & 63] : '=';
    *w++ = i + 2 < n ? al[v & 63] : '=';
  }
  *w = 0;
  return o;
}

// ---------------------------------------------------------------------------
// The request: every field checked, each refusal naming it

static int utf8_chars(const char *s) {
  int n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

// a JSON number that is a whole number in [lo, hi]
static int whole(const cJSON *v, double lo, double hi, double *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
      v->valuedouble > hi)
    return -1;
  *out = v->valuedouble;
  return 0;
}

// What a string of the JSON text holds that cJSON would take silently: a
// \u0000 (it would end the string there, "a\u0000b" read as "a") or a raw
// control character (JSON wants them escaped). NULL when none.
static const char *bad_string(const char *t, size_t n) {
  for (size_t i = 0, in = 0; i < n; i++) {
    if (t[i] == '"') in = !in;
    else if (in && (unsigned char)t[i] < 0x20) return "a raw control character (JSON wants it escaped)";
    else if (in && t[i] == '\\' && i + 1 < n) {
      if (t[i + 1] == 'u' && i + 5 < n && !memcmp(t + i + 2, "0000", 4)) return "\\u0000 (NUL), which no field takes";
      i++;   // (an escaped quote or backslash)
    }
  }
  return NULL;
}

// The body into job j; 0, or the status code with the message in msg and
// the field in param ("": none).
static int parse_request(Server *S, const char *body, size_t len, Job *j, char *msg, size_t n, char *param) {
  const ResidentInfo *I = &S->info;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
  int code = 400;
  *param = 0;
  if (!root || !cJSON_IsObject(root)) {
    snprintf(msg, n, "the body is not a JSON object%s", root ? "" : " (malformed JSON)");
    goto out;
  }
  const char *bad = bad_string(body, len);
  if (bad) {
    snprintf(msg, n, "a string holds %s", bad);
    goto out;
  }
  while (end && end < body + len && *end && strchr(" \t\r\n", *end)) end++;   // (strchr finds a NUL too)
  if (end && end < body + len) {
    snprintf(msg, n, "the body has more after its JSON object");
    goto out;
  }
  j->n = 1, j->ask.seed = I->seed, j->ask.steps = I->steps, j->ask.guidance = I->guidance;
  int has_prompt = 0;
  for (cJSON *v = root->child; v; v = v->next) {
    const char *k = v->string;
    double x;
    safe_name(k, param, 64);
    for (cJSON *w = root->child; w != v; w = w->next)
      if (!strcmp(w->string, k)) return snprintf(msg, n, "'%.60s' is given twice", k), cJSON_Delete(root), 400;
    if (!strcmp(k, "prompt")) {
      if (!cJSON_IsString(v)) return snprintf(msg, n, "prompt: wants a string"), cJSON_Delete(root), 400;
      size_t bytes = strlen(v->valuestring);
      int chars = utf8_chars(v->valuestring);
      if (!chars || chars > MAX_PROMPT || bytes >= sizeof j->prompt)
        return snprintf(msg, n, "prompt: wants 1 to %d characters, not %d", MAX_PROMPT, chars), cJSON_Delete(root), 400;
      long long bad = nb_utf8_bad(v->valuestring, bytes);   // (said here, before the request waits)
      if (bad >= 0) return snprintf(msg, n, "prompt: not valid UTF-8 at byte %lld", bad), cJSON_Delete(root), 400;
      memcpy(j->prompt, v->valuestring, bytes + 1);
      has_prompt = 1;
    } else if (!strcmp(k, "n")) {
      if (whole(v, 1, MAX_IMAGES, &x)) return snprintf(msg, n, "n: wants a whole number from 1 to %d", MAX_IMAGES), cJSON_Delete(root), 400;
      j->n = (int)x;
    } else if (!strcmp(k, "size")) {
      char want[64];
      snprintf(want, sizeof want, "%dx%d", I->width, I->height);
      if (!cJSON_IsString(v) || strcmp(v->valuestring, want))
        return snprintf(msg, n, "size: this server makes %s images (the size is a compile-time constant of its models)", want),
               cJSON_Delete(root), 400;
    } else if (!strcmp(k, "response_format")) {
      if (!cJSON_IsString(v) || strcmp(v->valuestring, "b64_json"))
        return snprintf(msg, n, "response_format: only \"b64_json\" (this server keeps no files to link to)"), cJSON_Delete(root), 400;
    } else if (!strcmp(k, "seed")) {
      if (whole(v, 0, 9007199254740991.0, &x))   // (2^53 - 1: every seed a JSON number holds exactly)
        return snprintf(msg, n, "seed: wants a whole number from 0 to 9007199254740991"), cJSON_Delete(root), 400;
      j->ask.seed = (uint64_t)x;
    } else if (!strcmp(k, "steps")) {
      if (whole(v, 1, S->max_steps, &x))
        return snprintf(msg, n, "steps: wants a whole number from 1 to %d (--max-steps)", S->max_steps), cJSON_Delete(root), 400;
      j->ask.steps = (int)x;
    } else if (!strcmp(k, "guidance")) {
      if (!I->guided)
        return snprintf(msg, n, "guidance: the sampled model has no `guidance` input (FLUX.1 [schnell] has none)"), cJSON_Delete(root), 400;
      if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || guidance_fits(I->sampled, v->valuedouble))
        return snprintf(msg, n, "guidance: wants a finite non-negative number within the model's `guidance` dtype"), cJSON_Delete(root), 400;
      j->ask.guidance = v->valuedouble;
    } else if (!strcmp(k, "model") || !strcmp(k, "user")) {   // (OpenAI clients send them: strings, not used)
      if (!cJSON_IsString(v)) return snprintf(msg, n, "%s: wants a string", k), cJSON_Delete(root), 400;
    } else {
      char q[128];
      return snprintf(msg, n, "unknown field '%s' (prompt, n, size, response_format, seed, steps, guidance, model, user)",
                      safe_name(k, q, sizeof q)), cJSON_Delete(root), 400;
    }
  }
  snprintf(param, 64, "prompt");
  if (!has_prompt) return snprintf(msg, n, "prompt: missing"), cJSON_Delete(root), 400;
  if ((double)j->ask.seed + j->n - 1 > 9007199254740991.0)
    return snprintf(param, 64, "seed"), snprintf(msg, n, "seed: seed + n - 1 is beyond 2^53 - 1"), cJSON_Delete(root), 400;
  *param = 0;
  code = 0;
out:
  cJSON_Delete(root);
  return code;
}

// ---------------------------------------------------------------------------
// The worker: one image at a time, the queue's oldest first

static void *worker(void *arg) {
  Server *S = arg;
  pthread_mutex_lock(&S->mu);
  for (;;) {
    while (!S->qlen && !S->stopping) pthread_cond_wait(&S->cv, &S->mu);
    if (S->stopping) break;   // (the waiting ones are answered 503 by their threads)
    Job *j = S->queue[0];
    memmove(S->queue, S->queue + 1, (size_t)--S->qlen * sizeof *S->queue);
    j->state = JOB_RUNNING;
    S->running = 1;
    int broken = S->broken;
    pthread_mutex_unlock(&S->mu);
    double t0 = now_ms(), stage[16] = {0}, sum[16] = {0};
    j->status = broken ? RES_DEVICE : 0;
    if (broken) snprintf(j->err, sizeof j->err, "the server had a device error before: restart it");
    for (int i = 0; i < j->n && !j->status; i++) {
      ImageAsk a = j->ask;
      a.prompt = j->prompt, a.seed = j->ask.seed + (uint64_t)i;
      j->status = resident_image(S->res, &a, &j->png[i], &j->len[i], stage, j->err, sizeof j->err);
      for (int k = 0; k < S->info.nstages; k++) sum[k] += stage[k];
    }
    j->ran_ms = now_ms() - t0;
    pthread_mutex_lock(&S->mu);
    if (j->status == RES_DEVICE && !broken) {
      S->broken = 1;
      fprintf(stderr, "flux: error: --serve: a device error: every later request is answered 503 (restart the server)\n");
    }
    if (!j->status) {
      S->images += j->n, S->gens++, S->gen_s += j->ran_ms / 1e3;
      for (int k = 0; k < S->info.nstages; k++) S->stage_s[k] += sum[k] / 1e3;
    }
    j->state = JOB_DONE;
    S->running = 0;
    pthread_cond_broadcast(&S->cv);
  }
  pthread_mutex_unlock(&S->mu);
  return NULL;
}

// Has the client of a waiting request hung up? (It sends nothing more once
// its request is in: a 0-byte read is its close.)
static int client_gone(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (!ci) return 0;
  struct pollfd p = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
  if (poll(&p, 1, 0) <= 0) return 0;
  if (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) return 1;
  char b;
  return recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static void free_job(Job *j) {
  for (int i = 0; i < MAX_IMAGES; i++) free(j->png[i]);
  free(j);
}

// A checked request queued, waited for, answered.
static enum MHD_Result generate(Server *S, struct MHD_Connection *c, Conn *cn) {
  Job *j = rt_calloc(1, sizeof *j);
  char msg[1200], param[64];
  int code = parse_request(S, cn->body ? cn->body : "", cn->len, j, msg, sizeof msg, param);
  if (code) return free_job(j), refuse(S, c, code, *param ? param : NULL, "%s", msg);
  double t0 = now_ms();
  pthread_mutex_lock(&S->mu);
  if (S->stopping || S->broken) {
    pthread_mutex_unlock(&S->mu);
    free_job(j);
    return refuse(S, c, 503, NULL, S->stopping ? "the server is stopping" : "the server had a device error: restart it");
  }
  if (S->qlen == S->qmax) {
    pthread_mutex_unlock(&S->mu);
    free_job(j);
    return refuse(S, c, 429, NULL, "the queue is full (%d waiting, --queue); try again later", S->qmax);
  }
  j->id = ++S->next_id;
  S->queue[S->qlen++] = j;
  S->inflight++, cn->counted_job = 1;
  pthread_cond_broadcast(&S->cv);
  while (j->state != JOB_DONE) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&S->cv, &S->mu, &ts);
    if (j->state != JOB_QUEUED) continue;
    int gone = client_gone(c), stop = S->stopping;
    if (!gone && !stop) continue;
    int at = 0;
    while (S->queue[at] != j) at++;
    memmove(S->queue + at, S->queue + at + 1, (size_t)(--S->qlen - at) * sizeof *S->queue);
    if (gone) S->dropped++;
    pthread_mutex_unlock(&S->mu);
    if (!S->quiet) printf("request %ld: %s while waiting\n", j->id, gone ? "the client hung up" : "dropped, the server stops");
    fflush(stdout);
    free_job(j);
    return gone ? MHD_NO : refuse(S, c, 503, NULL, "the server is stopping");
  }
  pthread_mutex_unlock(&S->mu);
  j->queued_ms = now_ms() - t0 - j->ran_ms;
  int http = !j->status ? 200 : j->status == RES_BAD_INPUT ? 400 : j->status == RES_DIVERGED ? 422 : 503;
  if (!S->quiet)
    printf("request %ld: %d, %d image%s, seed %llu, %d steps, waited %.1f ms, ran %.1f ms\n", j->id, http, j->n, j->n > 1 ? "s" : "",
           (unsigned long long)j->ask.seed, j->ask.steps, j->queued_ms, j->ran_ms);
  fflush(stdout);
  enum MHD_Result ok;
  if (j->status) {
    ok = refuse(S, c, http, j->status == RES_BAD_INPUT ? "prompt" : NULL, "%s", j->err);
  } else {
    cJSON *root = cJSON_CreateObject(), *data = cJSON_AddArrayToObject(root, "data");
    cJSON_AddNumberToObject(root, "created", (double)time(NULL));
    for (int i = 0; i < j->n; i++) {
      cJSON *it = cJSON_CreateObject();
      char *b = base64(j->png[i], j->len[i]);
      cJSON_AddStringToObject(it, "b64_json", b);
      cJSON_AddNumberToObject(it, "seed", (double)(j->ask.seed + (uint64_t)i));
      free(b);
      cJSON_AddItemToArray(data, it);
    }
    ok = answer_json(S, c, 200, root, NULL, NULL);
  }
  free_job(j);
  return ok;
}

static enum MHD_Result metrics(Server *S, struct MHD_Connection *c) {
  size_t cap = 16384, w = 0;   // (about 3 KiB with 16 stages; a longer text is cut, never overrun)
  char *t = xmalloc(cap);
#define PUT(...) (w += w < cap ? (size_t)snprintf(t + w, cap - w, __VA_ARGS__) : 0)
  pthread_mutex_lock(&S->mu);
  PUT("# HELP flux_requests_total HTTP answers by status code.\n# TYPE flux_requests_total counter\n");
  for (int i = 0; i < NCODES; i++) PUT("flux_requests_total{code=\"%d\"} %ld\n", codes[i], S->answered[i]);
  PUT("# HELP flux_images_total Images made.\n# TYPE flux_images_total counter\nflux_images_total %ld\n", S->images);
  PUT("# HELP flux_queue_length Requests waiting.\n# TYPE flux_queue_length gauge\nflux_queue_length %d\n", S->qlen);
  PUT("# HELP flux_running Images being made (0 or 1).\n# TYPE flux_running gauge\nflux_running %d\n", S->running);
  PUT("# HELP flux_queue_capacity Requests that may wait (--queue).\n# TYPE flux_queue_capacity gauge\nflux_queue_capacity %d\n", S->qmax);
  PUT("# HELP flux_dropped_total Waiting requests whose client hung up.\n# TYPE flux_dropped_total counter\nflux_dropped_total %ld\n",
      S->dropped);
  PUT("# HELP flux_generation_seconds Time per request, its images made.\n# TYPE flux_generation_seconds summary\n"
      "flux_generation_seconds_sum %.6f\nflux_generation_seconds_count %ld\n", S->gen_s, S->gens);
  PUT("# HELP flux_stage_seconds_total Time in each stage.\n# TYPE flux_stage_seconds_total counter\n");
  for (int k = 0; k < S->info.nstages; k++) PUT("flux_stage_seconds_total{stage=\"%s\"} %.6f\n", S->info.stage[k], S->stage_s[k]);
  PUT("# HELP flux_up 1 while the server can make images.\n# TYPE flux_up gauge\nflux_up %d\n", !S->broken);
  pthread_mutex_unlock(&S->mu);
#undef PUT
  return answer(S, c, 200, "text/plain; version=0.0.4", t, NULL, NULL);
}

// Bearer token, compared in constant time
static int authorized(const Server *S, struct MHD_Connection *c) {
  if (!S->key[0]) return 1;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  if (!h || strncmp(h, "Bearer ", 7)) return 0;
  h += 7;
  size_t n = strlen(S->key), m = strlen(h);
  unsigned char d = n != m;
  for (size_t i = 0; i < n; i++) d |= (unsigned char)(S->key[i] ^ (i < m ? h[i] : 0));
  return !d;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
                                  const char *data, size_t *size, void **ctx) {
  (void)version;
  Server *S = cls;
  Conn *cn = *ctx;
  if (!cn) {   // the headers: route, method, key and length, before any body is read
    cn = *ctx = rt_calloc(1, sizeof *cn);
    int post = !strcmp(method, "POST"), get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    cn->route = !strcmp(url, "/v1/images/generations") ? R_GENERATE : !strcmp(url, "/health") ? R_HEALTH
              : !strcmp(url, "/metrics") ? R_METRICS : R_NONE;
    if (cn->route == R_NONE) return refuse(S, c, 404, NULL, "no such route (POST /v1/images/generations, GET /health, GET /metrics)");
    if (cn->route == R_GENERATE ? !post : !get) {
      struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
      MHD_add_response_header(r, "Allow", cn->route == R_GENERATE ? "POST" : "GET, HEAD");
      enum MHD_Result ok = MHD_queue_response(c, 405, r);
      MHD_destroy_response(r);
      count(S, 405);
      return ok;
    }
    if (cn->route != R_HEALTH && !authorized(S, c)) return refuse(S, c, 401, NULL, "a bearer token is needed (Authorization: Bearer KEY)");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    uint64_t len;
    if (cn->route == R_GENERATE && !cl)   // (so that a body's size is known, and refused, before it is read)
      return refuse(S, c, 411, NULL, "a request body needs a Content-Length (a chunked body is not taken)");
    if (cl && (nb_parse_u64(cl, 0, UINT64_MAX, &len) || len > MAX_BODY))
      return refuse(S, c, 413, NULL, "the body is larger than %d bytes", MAX_BODY);
    return MHD_YES;
  }
  if (*size) {   // a piece of the body (no more than its Content-Length: libmicrohttpd's rule)
    if (cn->len + *size > MAX_BODY) return MHD_NO;
    char *b = realloc(cn->body, cn->len + *size + 1);
    if (!b) return MHD_NO;
    memcpy(b + cn->len, data, *size);
    cn->body = b, cn->len += *size, b[cn->len] = 0;
    *size = 0;
    return MHD_YES;
  }
  if (cn->route == R_METRICS) return metrics(S, c);
  if (cn->route == R_HEALTH) {
    cJSON *j = cJSON_CreateObject();
    pthread_mutex_lock(&S->mu);
    int broken = S->broken, q = S->qlen;
    pthread_mutex_unlock(&S->mu);
    cJSON_AddStringToObject(j, "status", broken ? "error" : "ok");
    cJSON_AddNumberToObject(j, "queue", q);
    return answer_json(S, c, broken ? 503 : 200, j, NULL, NULL);
  }
  return generate(S, c, cn);
}

static void on_done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode why) {
  (void)c, (void)why;
  Server *S = cls;
  Conn *cn = *ctx;
  if (!cn) return;
  if (cn->counted_job) {
    pthread_mutex_lock(&S->mu);
    S->inflight--;
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
  }
  free(cn->body);
  free(cn);
  *ctx = NULL;
}

// ---------------------------------------------------------------------------
// Start and stop

// HOST:PORT ([V6]:PORT; HOST defaults to 127.0.0.1) into *ai. -1 when said.
static int listen_addr(const char *spec, struct addrinfo **ai, int *loopback) {
  char host[256] = "127.0.0.1", port[16];
  const char *colon = strrchr(spec, ':');
  const char *h = spec, *he = colon;
  if (!colon) colon = spec - 1, he = spec;
  if (*h == '[' && he > h && he[-1] == ']') h++, he--;
  if (he > h) snprintf(host, sizeof host, "%.*s", (int)(he - h < 255 ? he - h : 255), h);
  int p;
  if (nb_parse_int(colon + 1, 0, 65535, &p)) {
    fprintf(stderr, "flux: error: --serve '%s': wants HOST:PORT (PORT 0 to 65535; 0: any free port), e.g. 127.0.0.1:8080\n", spec);
    return -1;
  }
  snprintf(port, sizeof port, "%d", p);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
  int rc = getaddrinfo(host, port, &hints, ai);
  if (rc) {
    fprintf(stderr, "flux: error: --serve '%s': %s: %s\n", spec, host, gai_strerror(rc));
    return -1;
  }
  const struct sockaddr *sa = (*ai)->ai_addr;
  *loopback = sa->sa_family == AF_INET ? (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127
                                       : !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &in6addr_loopback, 16);
  return 0;
}

// --api-key-file: its first line, without the newline
static int read_key(const char *path, char *key, size_t n) {
  char why[600];
  size_t len;
  char *t = in_read(path, n - 1, &len, why, sizeof why);
  if (!t) return fprintf(stderr, "flux: error: --api-key-file %s: %s\n", path, why), -1;
  size_t k = strcspn(t, "\r\n");
  int bad = k < 16 || memchr(t, 0, k) != NULL;
  for (size_t i = 0; i < k && !bad; i++) bad = t[i] <= ' ' || t[i] == 127;
  if (!bad) memcpy(key, t, k), key[k] = 0;
  free(t);
  if (bad) fprintf(stderr, "flux: error: --api-key-file %s: wants one line of at least 16 printable characters, no spaces\n", path);
  return bad ? -1 : 0;
}

int serve_pipeline(const RtPipeline *p, Opts *o) {
  Server S = {.quiet = o->quiet, .qmax = o->queue ? o->queue : 8, .max_steps = o->max_steps ? o->max_steps : 100};
  struct addrinfo *ai = NULL;
  int loopback = 0;
  if (!o->model_dir) return bad_usage("%s", "--serve needs --model-dir M: the weights and tokenizers it keeps loaded");
  if (listen_addr(o->serve, &ai, &loopback)) return EXIT_USAGE;
  if (o->api_key_file && read_key(o->api_key_file, S.key, sizeof S.key)) return freeaddrinfo(ai), EXIT_USAGE;
  if (!loopback && !S.key[0]) {
    freeaddrinfo(ai);
    fprintf(stderr, "flux: error: --serve %s: listens beyond this machine without a key: give --api-key-file F "
            "(requests then need Authorization: Bearer KEY), or bind 127.0.0.1\n", o->serve);
    return EXIT_USAGE;
  }
  // every thread started from here on (the drivers' too) blocks the stop signals: this one waits for
  // them (one that comes while the weights load stops the server once they are in)
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
  if (!(S.res = resident_open(p, o, o->serve_plan ? o->serve_plan : "auto"))) return freeaddrinfo(ai), EXIT_USAGE;
  S.info = resident_info(S.res);
  if (S.info.steps > S.max_steps) S.max_steps = S.info.steps;
  S.queue = rt_calloc((size_t)S.qmax, sizeof *S.queue);
  pthread_mutex_init(&S.mu, NULL);
  pthread_cond_init(&S.cv, NULL);
  pthread_t wt;
  int status = EXIT_DEVICE;
  struct MHD_Daemon *d = NULL;
  if (pthread_create(&wt, NULL, worker, &S)) {
    fprintf(stderr, "flux: error: --serve: cannot start the worker thread\n");
    goto done;
  }
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                   (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
  d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &S, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                       MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(o->timeout ? o->timeout : 30),
                       MHD_OPTION_CONNECTION_LIMIT, (unsigned)(S.qmax + 64), MHD_OPTION_NOTIFY_COMPLETED, on_done, &S,
                       MHD_OPTION_END);
  if (!d) {
    fprintf(stderr, "flux: error: --serve %s: cannot listen there (%s)\n", o->serve, errno ? strerror(errno) : "libmicrohttpd refused");
    status = EXIT_USAGE;
    pthread_mutex_lock(&S.mu);
    S.stopping = 1;
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
    pthread_join(wt, NULL);
    goto done;
  }
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  char host[NI_MAXHOST] = "?";
  getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof host, NULL, 0, NI_NUMERICHOST);
  printf("serving:  http://%s%s%s:%u/v1/images/generations (%dx%d images; GET /health, /metrics); queue %d%s; "
         "SIGTERM or Ctrl-C stops\n", ai->ai_family == AF_INET6 ? "[" : "", host, ai->ai_family == AF_INET6 ? "]" : "",
         di ? di->port : 0, S.info.width, S.info.height, S.qmax, S.key[0] ? "; bearer token needed" : "");
  fflush(stdout);
  int sig;
  sigwait(&stop, &sig);
  if (!o->quiet) printf("serve:    %s: no new connections; the running image is finished\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  fflush(stdout);
  MHD_socket ls = MHD_quiesce_daemon(d);
  if (ls != MHD_INVALID_SOCKET) close(ls);
  pthread_mutex_lock(&S.mu);
  S.stopping = 1;
  pthread_cond_broadcast(&S.cv);
  pthread_mutex_unlock(&S.mu);
  pthread_join(wt, NULL);
  // the answers of the last image (and of the refused waiting ones) sent before the connections close
  double until = now_ms() + 1e3 * (o->timeout ? o->timeout : 30);
  pthread_mutex_lock(&S.mu);
  while (S.inflight > 0 && now_ms() < until) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    pthread_cond_timedwait(&S.cv, &S.mu, &ts);
  }
  pthread_mutex_unlock(&S.mu);
  status = 0;
done:
  if (d) MHD_stop_daemon(d);
  for (int i = 0; i < S.qlen; i++) free_job(S.queue[i]);
  free(S.queue);
  resident_close(S.res);
  freeaddrinfo(ai);
  if (!status && !o->quiet) printf("serve:    stopped\n");
  return status;
}
