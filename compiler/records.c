// records.c — records.json and tuning-cache entries, written and read back.
//
// Reading is the one place outside text enters the search's results, and
// from there kernel headers, schedule.c and the report: so a file is read
// with bounded memory (json_load: a size and value limit checked by a scan
// that allocates nothing, before cJSON builds its tree), and every field is
// checked against what fluxcc itself writes (names are identifiers, methods
// and opts are in their tables, numbers are finite and in range, text has no
// control bytes). A file that passes is a file fluxcc could have written.
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//
// Bounded JSON: the limits (docs/search.md, "Records and the tuning cache") and a syntax scan
//
#define JSON_MAX_BYTES ((int64_t)128 << 20)  // a records.json of a full FLUX BEAM search is a few MB
#define JSON_MAX_ITEMS (4 << 20)             // values and keys: cJSON needs ~100 bytes each (docs/search.md: under 0.7 GB in all)
#define JSON_MAX_DEPTH 32                    // fluxcc's own files nest 5 deep

typedef struct {
  const char *p, *end, *bad, *why;
  int64_t items;
} Scan;

static bool scan_fail(Scan *z, const char *why) {
  if (!z->bad) z->bad = z->p, z->why = why;
  return false;
}

static void scan_ws(Scan *z) {
  while (z->p < z->end && (*z->p == ' ' || *z->p == '\t' || *z->p == '\n' || *z->p == '\r')) z->p++;
}

static bool scan_digits(Scan *z) {
  const char *s = z->p;
  while (z->p < z->end && *z->p >= '0' && *z->p <= '9') z->p++;
  return z->p > s;
}

static bool scan_string(Scan *z) {
  if (++z->items > JSON_MAX_ITEMS) return scan_fail(z, "too many");
  for (z->p++; z->p < z->end; z->p++) {
    unsigned char ch = (unsigned char)*z->p;
    if (ch == '"') return z->p++, true;
    if (ch < 32) return scan_fail(z, "a control byte inside a string");
    if (ch != '\\') continue;
    if (++z->p >= z->end) break;
    if (*z->p == 'u') {
      for (int i = 1; i <= 4; i++)
        if (z->p + i >= z->end || !isxdigit((unsigned char)z->p[i])) return scan_fail(z, "a bad \\u escape");
      z->p += 4;
    } else if (!*z->p || !strchr("\"\\/bfnrt", *z->p)) return scan_fail(z, "a bad escape in a string");
  }
  return scan_fail(z, "a string that does not end");
}

static bool scan_value(Scan *z, int depth) {
  scan_ws(z);
  if (z->p >= z->end) return scan_fail(z, "the text ends where a value should be");
  char ch = *z->p;
  if (ch == '"') return scan_string(z);
  if (++z->items > JSON_MAX_ITEMS) return scan_fail(z, "too many");
  if (ch == '{' || ch == '[') {
    if (depth >= JSON_MAX_DEPTH) return scan_fail(z, "nested deeper than 32 levels");
    char close = ch == '{' ? '}' : ']';
    z->p++;
    scan_ws(z);
    if (z->p < z->end && *z->p == close) return z->p++, true;
    for (;;) {
      if (ch == '{') {
        scan_ws(z);
        if (z->p >= z->end || *z->p != '"') return scan_fail(z, "expected a \"key\"");
        if (!scan_string(z)) return false;
        scan_ws(z);
        if (z->p >= z->end || *z->p != ':') return scan_fail(z, "expected ':'");
        z->p++;
      }
      if (!scan_value(z, depth + 1)) return false;
      scan_ws(z);
      if (z->p < z->end && *z->p == ',') z->p++;
      else if (z->p < z->end && *z->p == close) return z->p++, true;
      else return scan_fail(z, ch == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  static const char *const words[] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if (ch == words[i][0]) {
      if ((size_t)(z->end - z->p) < n || memcmp(z->p, words[i], n)) return scan_fail(z, "not a JSON value");
      return z->p += n, true;
    }
  }
  if (ch == '-') z->p++;
  if (z->p < z->end && *z->p == '0') z->p++;
  else if (!scan_digits(z)) return scan_fail(z, "not a JSON value");
  if (z->p < z->end && *z->p == '.' && (z->p++, !scan_digits(z))) return scan_fail(z, "no digits after a decimal point");
  if (z->p < z->end && (*z->p == 'e' || *z->p == 'E')) {
    z->p++;
    if (z->p < z->end && (*z->p == '+' || *z->p == '-')) z->p++;
    if (!scan_digits(z)) return scan_fail(z, "no digits in an exponent");
  }
  return true;
}

cJSON *json_load(const char *path, char *err, size_t en) {
  char why[256];
  int fd = open_regular(path, JSON_MAX_BYTES, NULL, why, sizeof why);  // a FIFO, device or directory says what it is
  if (fd < 0) return snprintf(err, en, "%s", why), NULL;
  close(fd);
  size_t n;
  char *text = read_text(path, &n);
  if (!text) return snprintf(err, en, "%s", strerror(errno)), NULL;
  cJSON *j = json_parse(text, n, err, en);
  free(text);
  return j;
}

// text[0..n) as JSON, scanned first (strict syntax, the same limits as a file)
cJSON *json_parse(const char *text, size_t n, char *err, size_t en) {
  Scan z = {.p = text, .end = text + n};
  if (scan_value(&z, 0) && (scan_ws(&z), z.p != z.end)) scan_fail(&z, "more text after the JSON value");
  cJSON *j = NULL;
  if (z.bad && !strcmp(z.why, "too many"))
    snprintf(err, en, "more than %d JSON values and keys: fluxcc reads records and cache entries of at most %d (and %lld MiB)",
             JSON_MAX_ITEMS, JSON_MAX_ITEMS, (long long)(JSON_MAX_BYTES >> 20));
  else if (z.bad) {
    int line = 1, col = 1;
    for (const char *q = text; q < z.bad; q++) line += *q == '\n', col = *q == '\n' ? 1 : col + 1;
    bool deep = !strncmp(z.why, "nested", 6);  // JSON, but past fluxcc's limit
    snprintf(err, en, "%sline %d, column %d: %s%s", deep ? "" : "not JSON: ", line, col, z.why,
             deep ? " (fluxcc's records and cache entries nest 5 deep; it reads at most 32)" : "");
  } else if (!(j = cJSON_ParseWithLength(text, n)))
    snprintf(err, en, "out of memory reading its %lld JSON values and keys", (long long)z.items);
  return j;
}

//
// Fields, checked against what fluxcc writes
//
enum { TXT_NAME, TXT_METHOD, TXT_LINE, TXT_TEXT };  // identifier; a method of the table; one printable line; printable text
#define METHOD_MAX 8   // bytes of a method's name with its NUL, as records have always allowed

// the methods table's entry of that name, or NULL (method_find's loop: search.c
// calls down to this file, so this file does not call it)
static const Method *method_named(const char *s) {
  for (const Method *m = methods; m->name; m++)
    if (!strcmp(m->name, s)) return m;
  return NULL;
}

static bool text_ok(const char *s, int kind, size_t max) {
  size_t n = strlen(s);
  if (n >= max || (kind != TXT_TEXT && kind != TXT_LINE && n == 0)) return false;
  if (kind == TXT_METHOD) return method_named(s) != NULL;  // a name of the methods table (fluxcc.h's METHODS)
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (kind == TXT_NAME && !isalnum(*p) && *p != '_') return false;
    if ((*p < 32 && !(kind == TXT_TEXT && (*p == '\n' || *p == '\t'))) || *p == 127) return false;  // no ESC, CR, NUL, ...
  }
  return true;
}

static const char *const txt_what[] = {"an identifier", "a method (raw, hc, tc, beam, mcts, best, random)",
                                       "one line of printable text", "printable text"};

// key's string, checked as kind, shorter than max bytes; NULL and why in err when not
static const char *rec_str(const cJSON *o, const char *key, int kind, size_t max, char *err, size_t en) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!x) return snprintf(err, en, "no '%s'", key), NULL;
  if (!cJSON_IsString(x)) return snprintf(err, en, "'%s' is not a string", key), NULL;
  if (!text_ok(x->valuestring, kind, max)) {
    Str q = {0};
    src_escape(&q, x->valuestring, true);
    snprintf(err, en, "'%s' is %.60s%s: wants %s of at most %zu bytes", key, q.s, strlen(q.s) > 60 ? "..." : "", txt_what[kind], max - 1);
    free(q.s);
    return NULL;
  }
  return x->valuestring;
}

const char *json_line(const cJSON *o, const char *key, size_t max, char *err, size_t en) {
  return rec_str(o, key, TXT_LINE, max, err, en);
}

// key's number, finite, in [lo, hi], an integer where integer; false and why in err when not
static bool rec_num(const cJSON *o, const char *key, double lo, double hi, bool integer, double *v, char *err, size_t en) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!x) return snprintf(err, en, "no '%s'", key), false;
  if (!cJSON_IsNumber(x)) return snprintf(err, en, "'%s' is not a number", key), false;
  double d = x->valuedouble;
  if (!isfinite(d) || d < lo || d > hi || (integer && d != floor(d)))
    return snprintf(err, en, "'%s' is %.10g: wants %s from %.10g to %.10g", key, d, integer ? "an integer" : "a number", lo, hi), false;
  *v = d;
  return true;
}

#define MAX_US 1e12      // a kernel's time: under 12 days
#define MAX_AMOUNT 65536

//
// Opts: "UPCAST(1,4)" in cache entries and candidates, {"op", "axis", "amount"} in records' kernels
//
static cJSON *opts_json(const Opt *o, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    char buf[64];
    opt_str(&o[i], buf, sizeof buf);
    cJSON_AddItemToArray(a, cJSON_CreateString(buf));
  }
  return a;
}

// "NAME" (NOLOCALS) or "NAME(axis,amount)", each number read by nb_parse_int
// (an amount below 0 only for PADTO: its reduce axis)
static bool opt_from_text(const char *s, Opt *v) {
  for (int op = 0; op < OPT_COUNT; op++) {
    size_t l = strlen(opt_names[op]);
    if (strncmp(s, opt_names[op], l) || (s[l] && s[l] != '(')) continue;  // GROUP is not GROUPTOP
    size_t m = strlen(s + l);  // (s is at least l long here)
    v->op = op, v->axis = v->amount = 0;
    if (op == OPT_NOLOCALS) return !s[l];
    char args[32], *comma;  // "axis,amount"
    if (m < 5 || m >= sizeof args || s[l + m - 1] != ')') return false;
    memcpy(args, s + l + 1, m - 2), args[m - 2] = 0;
    if (!(comma = strchr(args, ','))) return false;
    *comma = 0;
    bool neg = comma[1] == '-';
    if (nb_parse_int(args, 0, MAXAXES - 1, &v->axis) || nb_parse_int(comma + 1 + neg, 0, MAX_AMOUNT, &v->amount)) return false;
    v->amount = neg ? -v->amount : v->amount;
    return !neg || op == OPT_PADTO;
  }
  return false;
}

static int opts_parse(const cJSON *a, Opt *o, int *n, char *err, size_t en) {
  *n = 0;
  if (!cJSON_IsArray(a)) return snprintf(err, en, "'opts' is not a list"), -1;
  if (cJSON_GetArraySize(a) > MAXOPTS) return snprintf(err, en, "%d opts: a kernel has at most %d", cJSON_GetArraySize(a), MAXOPTS), -1;
  const cJSON *x;
  cJSON_ArrayForEach(x, a) {
    Opt v = {0};
    char e[200];
    if (cJSON_IsObject(x)) {  // records.json's kernels spell an opt {"op": "UPCAST", "axis": 0, "amount": 4}
      const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "op"));
      double ax, am;
      v.op = -1;
      for (int i = 0; op && i < OPT_COUNT; i++)
        if (!strcmp(op, opt_names[i])) v.op = i;
      if (v.op < 0) return snprintf(err, en, "opt %d: 'op' is not an opt's name", *n), -1;
      if (!rec_num(x, "axis", 0, MAXAXES - 1, true, &ax, e, sizeof e) ||
          !rec_num(x, "amount", v.op == OPT_PADTO ? -MAX_AMOUNT : 0, MAX_AMOUNT, true, &am, e, sizeof e))
        return snprintf(err, en, "opt %d (%s): %s", *n, op, e), -1;
      v.axis = (int)ax, v.amount = (int)am;
    } else if (!cJSON_IsString(x) || !opt_from_text(x->valuestring, &v)) {
      Str q = {0};
      if (cJSON_IsString(x)) src_escape(&q, x->valuestring, true);
      snprintf(err, en, "opt %d: %.60s is not an opt (NAME(axis,amount): axis 0 to %d, amount 0 to %d, PADTO's from -%d)", *n,
               q.s ? q.s : "(not a string)", MAXAXES - 1, MAX_AMOUNT, MAX_AMOUNT);
      free(q.s);
      return -1;
    }
    o[(*n)++] = v;
  }
  return 0;
}

//
// A kernel's search results <-> JSON: the one format of records.json entries and cache files
//
static bool has(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key) != NULL; }

static const char *const status_name[] = {"ok", "wrong", "failed", "slow", "predicted"};
#define X(e, name) name,
static const char *const pick_name[] = {PICKS(X)}, *const stop_name[] = {STOPS(X)};
#undef X

// an optional name among names[1..n-1] (0: absent); false and why in err
static bool rec_enum(const cJSON *o, const char *key, const char *const *names, int n, int *v, char *err, size_t en) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  *v = 0;
  if (!x) return true;
  for (int i = 1; cJSON_IsString(x) && i < n; i++)
    if (!strcmp(x->valuestring, names[i])) return *v = i, true;
  int k = snprintf(err, en, "'%s' is not one of", key);
  for (int i = 1; i < n && k > 0 && (size_t)k < en; i++) k += snprintf(err + k, en - (size_t)k, "%s %s", i > 1 ? "," : "", names[i]);
  return false;
}

void tuned_to_json(const Tuned *t, const Kernel *k, cJSON *j) {
  cJSON *ch = cJSON_AddObjectToObject(j, "chosen");
  cJSON_AddStringToObject(ch, "method", t->method->name);
  cJSON_AddNumberToObject(ch, "min_us", t->tmin);
  cJSON_AddNumberToObject(ch, "median_us", t->tmed);
  cJSON_AddNumberToObject(ch, "runs", t->runs);
  cJSON_AddNumberToObject(ch, "gflops", t->tmin > 0 ? (double)k->flops / t->tmin * 1e-3 : 0);
  cJSON_AddNumberToObject(ch, "gbps", t->tmin > 0 ? (double)k->bytes / t->tmin * 1e-3 : 0);
  cJSON_AddNumberToObject(j, "search_s", t->wall_s);
  if (t->budgeted) {  // RL's forward budget: this kernel's share of the forward, and the timed candidates that gave it
    cJSON_AddNumberToObject(j, "forward_share", round(t->share * 1e6) / 1e6);
    cJSON_AddNumberToObject(j, "allotted", t->allotted);
  }
  if (t->stop) cJSON_AddStringToObject(j, "stopped", stop_name[t->stop]);
  if (t->finals) {  // candidate indices: the first-measured winner, the incumbent fixed method, the choice
    cJSON *f = cJSON_AddObjectToObject(j, "finals");
    cJSON_AddNumberToObject(f, "first", t->first);
    cJSON_AddNumberToObject(f, "incumbent", t->incumbent);
    cJSON_AddNumberToObject(f, "chosen", t->chosen);
  }
  cJSON *cs = cJSON_AddArrayToObject(j, "candidates");
  for (int i = 0; i < t->cands.n; i++) {
    const Cand *c = &t->cands.v[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", c->name);
    cJSON_AddStringToObject(x, "from", c->from->name);
    cJSON_AddNumberToObject(x, "round", c->round);
    if (c->pick) cJSON_AddStringToObject(x, "pick", pick_name[c->pick]);
    cJSON_AddItemToObject(x, "opts", opts_json(c->opts, c->nopts));
    cJSON_AddStringToObject(x, "status", status_name[c->status]);
    cJSON_AddNumberToObject(x, "at_s", c->at_s);
    if (c->status == CAND_OK || c->status == CAND_SLOW) {
      cJSON_AddNumberToObject(x, "min_us", c->tmin);
      cJSON_AddNumberToObject(x, "median_us", c->tmed);
      if (c->tmax > 0) cJSON_AddNumberToObject(x, "max_us", c->tmax);  // absent in records from before it was kept: a replay writes them as they were
      cJSON_AddNumberToObject(x, "runs", c->runs);
      cJSON_AddNumberToObject(x, "gflops", c->tmin > 0 ? (double)k->flops / c->tmin * 1e-3 : 0);
      cJSON_AddNumberToObject(x, "gbps", c->tmin > 0 ? (double)k->bytes / c->tmin * 1e-3 : 0);
    }
    if (c->fin_rounds) {  // re-timed in the finals: its rounds' median, lowest and highest
      cJSON *f = cJSON_AddObjectToObject(x, "final"), *r = cJSON_AddArrayToObject(f, "rounds_us");
      for (int i = 0; i < c->fin_rounds; i++) cJSON_AddItemToArray(r, cJSON_CreateNumber(c->fin_us[i]));
      cJSON_AddNumberToObject(f, "median_us", c->fin_med);
      cJSON_AddNumberToObject(f, "min_us", c->fin_lo);
      cJSON_AddNumberToObject(f, "max_us", c->fin_hi);
    }
    if (c->status != CAND_FAILED) cJSON_AddNumberToObject(x, "error", isfinite(c->err) ? c->err : -1);
    if (c->why[0]) cJSON_AddStringToObject(x, "reason", c->why);
    cJSON_AddBoolToObject(x, "measured", c->status != CAND_PREDICTED);
    if (c->scored) cJSON_AddNumberToObject(x, "score", round(c->score * 1e4) / 1e4);
    if (c->has_feat && c->status != CAND_PREDICTED) {  // training data (costmodel.c): 3 decimals of log2 sizes
      cJSON *f = cJSON_AddArrayToObject(x, "features");
      for (int i = 0; i < NFEATURES; i++) cJSON_AddItemToArray(f, cJSON_CreateNumber(round(c->feat[i] * 1e3) / 1e3));
    }
    cJSON_AddItemToArray(cs, x);
  }
}

void tuned_to_cache(const Tuned *t, const Kernel *k, cJSON *j) {
  cJSON_AddItemToObject(j, "opts", opts_json(t->opts, t->nopts));
  tuned_to_json(t, k, j);
}

// one candidate back; false and why in err
static bool cand_from_json(const cJSON *x, Cand *c, char *err, size_t en) {
  const char *s;
  double d;
  memset(c, 0, sizeof *c);
  if (!(s = rec_str(x, "name", TXT_NAME, sizeof c->name, err, en))) return false;
  snprintf(c->name, sizeof c->name, "%s", s);
  if (!(s = rec_str(x, "from", TXT_METHOD, METHOD_MAX, err, en))) return false;
  c->from = method_named(s);
  if (!rec_num(x, "round", 0, 1e6, true, &d, err, en)) return false;
  c->round = (int)d;
  if (!rec_enum(x, "pick", pick_name, NPICKS, &c->pick, err, en)) return false;
  if (!rec_num(x, "at_s", 0, 1e9, false, &c->at_s, err, en)) return false;
  const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "status"));
  c->status = -1;
  for (int i = 0; st && i < 5; i++)
    if (!strcmp(st, status_name[i])) c->status = i;
  if (c->status < 0) return snprintf(err, en, "'status' is not one of ok, wrong, failed, slow, predicted"), false;
  const cJSON *meas = cJSON_GetObjectItemCaseSensitive(x, "measured"), *f = cJSON_GetObjectItemCaseSensitive(x, "features"), *v;
  if (meas && (!cJSON_IsBool(meas) || cJSON_IsTrue(meas) != (c->status != CAND_PREDICTED)))
    return snprintf(err, en, "'measured' is not %s (its status is %s)", c->status != CAND_PREDICTED ? "true" : "false", st), false;
  if (has(x, "score") && !rec_num(x, "score", -1e30, 1e30, false, &c->score, err, en)) return false;
  c->scored = has(x, "score");
  if (f) {
    if (!cJSON_IsArray(f) || cJSON_GetArraySize(f) != NFEATURES)
      return snprintf(err, en, "'features' is not a list of %d numbers (feature version %d)", NFEATURES, FEATURE_VERSION), false;
    int i = 0;
    cJSON_ArrayForEach(v, f) {
      if (!cJSON_IsNumber(v) || !(fabs(v->valuedouble) <= 1e6)) return snprintf(err, en, "feature %d is not a number within 1e6", i), false;
      c->feat[i++] = (float)v->valuedouble;
    }
    c->has_feat = true;
  }
  if (opts_parse(cJSON_GetObjectItemCaseSensitive(x, "opts"), c->opts, &c->nopts, err, en)) return false;
  if (c->status == CAND_OK || c->status == CAND_SLOW) {
    if (!rec_num(x, "min_us", 0, MAX_US, false, &c->tmin, err, en) || !rec_num(x, "median_us", c->tmin, MAX_US, false, &c->tmed, err, en) ||
        (has(x, "max_us") && !rec_num(x, "max_us", c->tmed, MAX_US, false, &c->tmax, err, en)) || !rec_num(x, "runs", 1, 1e6, true, &d, err, en))
      return false;
    c->runs = (int)d;
  }
  const cJSON *fin = cJSON_GetObjectItemCaseSensitive(x, "final");
  if (fin) {
    if (!cJSON_IsObject(fin) || c->status != CAND_OK) return snprintf(err, en, "'final' is an object, of an ok candidate only"), false;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(fin, "rounds_us"), *v;
    if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != FINAL_ROUNDS)
      return snprintf(err, en, "'final' 'rounds_us' is not a list of %d times", FINAL_ROUNDS), false;
    cJSON_ArrayForEach(v, r) {
      if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= MAX_US))
        return snprintf(err, en, "'final' 'rounds_us' %d is not a time from 0 to %g us", c->fin_rounds, MAX_US), false;
      c->fin_us[c->fin_rounds++] = v->valuedouble;
    }
    if (!rec_num(fin, "min_us", 0, MAX_US, false, &c->fin_lo, err, en) || !rec_num(fin, "median_us", c->fin_lo, MAX_US, false, &c->fin_med, err, en) ||
        !rec_num(fin, "max_us", c->fin_med, MAX_US, false, &c->fin_hi, err, en))
      return snprintf(err + strlen(err), en - strlen(err), " (in 'final')"), false;
  }
  c->err = 0;
  if (c->status != CAND_FAILED && c->status != CAND_PREDICTED && !rec_num(x, "error", -1, 1e300, false, &c->err, err, en)) return false;
  if (c->err < 0) c->err = INFINITY;  // written as -1: not finite
  if (cJSON_GetObjectItemCaseSensitive(x, "reason")) {
    if (!(s = rec_str(x, "reason", TXT_TEXT, sizeof c->why, err, en))) return false;
    snprintf(c->why, sizeof c->why, "%s", s);
  }
  return true;
}

// "finals": candidate indices, each of an ok candidate (incumbent and chosen
// re-timed finalists); false and why in err
static bool finals_from_json(const cJSON *f, Tuned *t, char *err, size_t en) {
  static const char *const key[] = {"first", "incumbent", "chosen"};
  int *at[] = {&t->first, &t->incumbent, &t->chosen};
  if (!cJSON_IsObject(f)) return snprintf(err, en, "'finals' is not an object"), false;
  for (int k = 0; k < 3; k++) {
    double d;
    if (!rec_num(f, key[k], 0, t->cands.n - 1, true, &d, err, en)) return false;
    const Cand *c = &t->cands.v[(int)d];
    if (c->status != CAND_OK || (k && !c->fin_rounds))
      return snprintf(err, en, "'finals' '%s' is candidate %d, not an ok %s", key[k], (int)d, k ? "finalist" : "candidate"), false;
    *at[k] = (int)d;
  }
  t->finals = true;
  return true;
}

// A kernel entry back into t (opts from "opts"); what is wrong goes to err.
int tuned_from_json(const cJSON *j, Tuned *t, char *err, size_t en) {
  memset(t, 0, sizeof *t);
  const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "chosen");
  if (!cJSON_IsObject(ch)) return snprintf(err, en, "no 'chosen' entry (was it made by a search?)"), -1;
  const char *m = rec_str(ch, "method", TXT_METHOD, METHOD_MAX, err, en);
  double runs;
  if (!m || !rec_num(ch, "min_us", 0, MAX_US, false, &t->tmin, err, en) || !rec_num(ch, "median_us", 0, MAX_US, false, &t->tmed, err, en) ||
      !rec_num(ch, "runs", 0, 1e6, true, &runs, err, en) || !rec_num(j, "search_s", 0, 1e9, false, &t->wall_s, err, en))
    return -1;
  t->method = method_named(m);
  t->runs = (int)runs;
  if (has(j, "allotted") || has(j, "forward_share")) {
    double a;
    if (!rec_num(j, "allotted", 0, 1e6, true, &a, err, en) || !rec_num(j, "forward_share", 0, 1, false, &t->share, err, en)) return -1;
    t->budgeted = true, t->allotted = (int)a;
  }
  if (!rec_enum(j, "stopped", stop_name, NSTOPS, &t->stop, err, en)) return -1;
  if (opts_parse(cJSON_GetObjectItemCaseSensitive(j, "opts"), t->opts, &t->nopts, err, en)) return -1;
  const cJSON *cs = cJSON_GetObjectItemCaseSensitive(j, "candidates"), *x;
  if (!cJSON_IsArray(cs)) return snprintf(err, en, "'candidates' is not a list"), -1;
  int i = 0;
  cJSON_ArrayForEach(x, cs) {
    Cand c;
    char e[400];
    if (!cand_from_json(x, &c, e, sizeof e)) {
      free(t->cands.v);
      t->cands.v = NULL;
      return snprintf(err, en, "candidate %d: %s", i, e), -1;
    }
    vec_push(t->cands, c);
    i++;
  }
  t->first = t->incumbent = t->chosen = -1;
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "finals");
  if (f && !finals_from_json(f, t, err, en)) {
    free(t->cands.v);
    t->cands.v = NULL;
    return -1;
  }
  return 0;
}

//
// Cache entries: one kernel's search under its key
//
cJSON *cache_entry(const char *key, const char *device, const Tuned *t, const Kernel *k) {
  cJSON *j = cJSON_CreateObject(), *kj = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "key", key);
  cJSON_AddStringToObject(j, "device", device);             // for the cache's cost model (costmodel.c)
  cJSON_AddNumberToObject(j, "feature_version", FEATURE_VERSION);
  tuned_to_cache(t, k, kj);
  cJSON_AddItemToObject(j, "kernel", kj);
  return j;
}

int cache_entry_read(const cJSON *j, const char *key, Tuned *t, char *err, size_t en) {
  const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "key"));
  if (!k) return snprintf(err, en, "no 'key'"), -1;
  if (key && strcmp(k, key)) return snprintf(err, en, "the entry of another kernel or setting (its key differs)"), -1;
  return tuned_from_json(cJSON_GetObjectItemCaseSensitive(j, "kernel"), t, err, en);
}

// The fields replay and the cost model's training read, by name here only.
// Of a records.json they are checked (records_read); of a cache entry not
// (the entry's kernel is, by cache_entry_read).
void records_head(const cJSON *root, RecordsHead *h) {
  const cJSON *tile = cJSON_GetObjectItemCaseSensitive(root, "tile_n");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "feature_version");
  *h = (RecordsHead){0};
  h->kind = has(root, "kernels") ? FILE_RECORDS : has(root, "key") ? FILE_CACHE_ENTRY : FILE_OTHER;
  h->method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "method"));
  h->target = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "target"));
  h->device = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "device"));
  h->toolchain = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "toolchain"));
  h->tile_n = cJSON_IsNumber(tile) ? (int)tile->valuedouble : 0;
  h->has_version = cJSON_IsNumber(v), h->feature_version = h->has_version ? v->valuedouble : 0;
  h->nk = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "kernels"));
}

const cJSON *records_kernel(const cJSON *root, int u, RecordsKernel *k) {
  const cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "kernels"), u);
  k->name_before_opts = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "name_before_opts"));
  k->searched = has(j, "chosen");
  return j;
}

//
// records.json written
//
static cJSON *dims_json(const Kernel *k) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < k->nout + k->nred; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)k->orig_dims[i]));
  return a;
}

// records.json: the model, target, method, device and every unique kernel
// (its names, file, shapes, geometry, work, opts, search results, launch sites)
char *records_text(Ctx *c, Schedule *s, const EmitOpts *o, Program *progs) {
  char where[256], file[512];
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "model", base_name(o->model));
  cJSON_AddStringToObject(root, "target", o->target->name);
  cJSON_AddStringToObject(root, "method", o->method->name);
  cJSON_AddNumberToObject(root, "tile_n", s->tile_n);  // the schedule's block tile (--tile-n): a replay needs the same kernels
  if (o->search) {
    cJSON_AddStringToObject(root, "device", o->search->device);
    cJSON_AddStringToObject(root, "toolchain", o->search->toolchain);
    cJSON_AddNumberToObject(root, "feature_version", FEATURE_VERSION);  // of the candidates' features
  }
  cJSON_AddNumberToObject(root, "launches", s->l.n);
  cJSON_AddNumberToObject(root, "arena_bytes", (double)s->arena_bytes);
  cJSON_AddStringToObject(root, "project", o->project);  // the compile's hash, as schedule.c and ./flux --trace say it
  cJSON *ks = cJSON_AddArrayToObject(root, "kernels");
  for (int u = 0; u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    cJSON *j = cJSON_CreateObject();
    kernel_file(s, u, file, sizeof file);
    cJSON_AddStringToObject(j, "name", k->name);
    cJSON_AddStringToObject(j, "name_before_opts", k->orig_name);
    cJSON_AddStringToObject(j, "file", file);
    cJSON_AddItemToObject(j, "full_shape", dims_json(k));
    cJSON_AddNumberToObject(j, "output_axes", k->nout);
    cJSON_AddNumberToObject(j, "reduce_axes", k->nred);
    cJSON *grid = cJSON_AddArrayToObject(j, "grid"), *block = cJSON_AddArrayToObject(j, "block");
    for (int x = 0; x < 3; x++) {
      cJSON_AddItemToArray(grid, cJSON_CreateNumber(progs[u].global[x]));
      cJSON_AddItemToArray(block, cJSON_CreateNumber(progs[u].local[x]));
    }
    cJSON_AddNumberToObject(j, "flops", (double)k->flops);
    cJSON_AddNumberToObject(j, "bytes", (double)k->bytes);
    cJSON_AddStringToObject(j, "method", o->method->name);
    cJSON *opts = cJSON_AddArrayToObject(j, "opts");
    for (int i = 0; i < k->nopts; i++) {
      cJSON *op = cJSON_CreateObject();
      cJSON_AddStringToObject(op, "op", opt_names[k->opts[i].op]);
      cJSON_AddNumberToObject(op, "axis", k->opts[i].axis);
      cJSON_AddNumberToObject(op, "amount", k->opts[i].amount);
      cJSON_AddItemToArray(opts, op);
    }
    if (s->tuned) tuned_to_json(&s->tuned[u], k, j);
    else cJSON_AddItemToObject(j, "candidates", cJSON_CreateArray());  // timed candidates: none without a search
    cJSON *sites = cJSON_AddArrayToObject(j, "launch_sites");
    for (int i = 0; i < s->l.n; i++)
      if (s->l.v[i].kernel == u) {
        cJSON *site = cJSON_CreateObject();
        cJSON_AddNumberToObject(site, "launch", i);
        cJSON_AddStringToObject(site, "dsl", diag_where(c, s->l.v[i].loc, where, sizeof where));
        cJSON_AddItemToArray(sites, site);
      }
    cJSON_AddItemToArray(ks, j);
  }
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  Str t = {0};
  str_printf(&t, "%s\n", text);
  free(text);
  return t.s;
}

//
// A whole records.json, checked before anything reads it (report, dot, compare, replay)
//
// what a hand-written records file (tests/golden/src/*.json) may leave out is
// optional, but checked where present (has())
static int records_check(const cJSON *root, char *err, size_t en) {
  char e[600];
  double launches = 1e8, d;
  if (!cJSON_IsObject(root)) return snprintf(err, en, "not a records file (not a JSON object)"), -1;
  const char *target = rec_str(root, "target", TXT_NAME, 16, e, sizeof e);
  bool known = target && target_find(target);
  char names[128];
  if (target && !known) target_names(names, sizeof names), snprintf(e, sizeof e, "'target' is not %s", names);
  if (!known || !rec_str(root, "method", TXT_METHOD, METHOD_MAX, e, sizeof e) ||
      (has(root, "model") && !rec_str(root, "model", TXT_LINE, 4096, e, sizeof e)) ||
      (has(root, "launches") && !rec_num(root, "launches", 0, 1e8, true, &launches, e, sizeof e)) ||
      (has(root, "arena_bytes") && !rec_num(root, "arena_bytes", 0, 0x1p62, true, &d, e, sizeof e)) ||
      (has(root, "project") && !rec_str(root, "project", TXT_NAME, 32, e, sizeof e)) ||
      (has(root, "tile_n") && !rec_num(root, "tile_n", 1, 4096, true, &d, e, sizeof e)) ||
      (has(root, "device") && !rec_str(root, "device", TXT_LINE, 256, e, sizeof e)) ||
      (has(root, "toolchain") && !rec_str(root, "toolchain", TXT_LINE, 256, e, sizeof e)) ||
      (has(root, "feature_version") && !rec_num(root, "feature_version", 1, 1e6, true, &d, e, sizeof e)))
    return snprintf(err, en, "%s", e), -1;
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "kernels"), *k;
  if (!cJSON_IsArray(ks)) return snprintf(err, en, "not a records file (no \"kernels\" list)"), -1;
  int u = 0;
  cJSON_ArrayForEach(k, ks) {
    Opt o[MAXOPTS];
    int no;
    Tuned t;
    bool ok = cJSON_IsObject(k);
    if (!ok) snprintf(e, sizeof e, "not an object");
    ok = ok && rec_str(k, "name_before_opts", TXT_NAME, 160, e, sizeof e) &&
         (!has(k, "name") || rec_str(k, "name", TXT_NAME, 160, e, sizeof e)) &&
         (!has(k, "flops") || rec_num(k, "flops", 0, 1e18, true, &d, e, sizeof e)) &&
         (!has(k, "bytes") || rec_num(k, "bytes", 0, 1e18, true, &d, e, sizeof e)) &&
         opts_parse(cJSON_GetObjectItemCaseSensitive(k, "opts"), o, &no, e, sizeof e) == 0;
    const cJSON *sites = cJSON_GetObjectItemCaseSensitive(k, "launch_sites"), *site;
    if (ok && sites && !cJSON_IsArray(sites)) ok = false, snprintf(e, sizeof e, "'launch_sites' is not a list");
    if (ok && sites) cJSON_ArrayForEach(site, sites) ok = ok && rec_num(site, "launch", 0, launches - 1, true, &d, e, sizeof e);
    if (ok && has(k, "chosen")) {
      ok = tuned_from_json(k, &t, e, sizeof e) == 0;
      if (ok) free(t.cands.v);
    }
    if (!ok) return snprintf(err, en, "kernel %d: %s", u, e), -1;
    u++;
  }
  return 0;
}

// a records.json read (json_load) and checked (records_check), or NULL and why
cJSON *records_read(const char *path, char *err, size_t en) {
  cJSON *root = json_load(path, err, en);
  if (root && records_check(root, err, en)) cJSON_Delete(root), root = NULL;
  return root;
}

// DIR/records.json read and checked, or NULL (said why on stderr)
cJSON *records_load(const char *dir) {
  char path[4096], err[700];
  snprintf(path, sizeof path, "%s/records.json", dir);
  cJSON *root = records_read(path, err, sizeof err);
  if (!root) fprintf(stderr, "fluxcc: error: %s: %s%s%s%s\n", path, err, access(path, F_OK) ? " (is " : "", access(path, F_OK) ? dir : "",
                     access(path, F_OK) ? " a project fluxcc wrote?)" : "");
  return root;
}

// Of a checked records.json's kernels, how many the finals decided and in
// how many of those they chose another kernel than the first measurement
// would have (by name after opts, as overruled() in measure.c counts it)
void records_finals(const cJSON *root, int *decided, int *against) {
  const cJSON *k;
  *decided = *against = 0;
  cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(root, "kernels")) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(k, "finals"), *cs = cJSON_GetObjectItemCaseSensitive(k, "candidates");
    if (!f) continue;
    int first = (int)json_num(f, "first"), chosen = (int)json_num(f, "chosen");
    (*decided)++;
    *against += chosen != first && strcmp(json_str(cJSON_GetArrayItem(cs, first), "name"), json_str(cJSON_GetArrayItem(cs, chosen), "name"));
  }
}

// a checked records.json field: a number (0 if absent), a string ("?" if absent)
double json_num(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

const char *json_str(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(x) ? x->valuestring : "?";
}
