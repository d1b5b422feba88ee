// safetensors.c — validated reader (mmap) and atomic writer (st_write, by
// out_write's rule: files.c).
//
// File format: an 8-byte little-endian u64 N, N bytes of JSON header, then the
// data section. The header is an object mapping each tensor name to
//   {"dtype": "BF16", "shape": [3072, 64], "data_offsets": [begin, end]}
// (offsets relative to the data section) plus an optional "__metadata__"
// object of string -> string, which is checked and skipped.
//
// The reader rejects anything that is not exactly such a file: every
// violation yields one line "PATH: ..." naming the tensor where there is one.
// On failure st_parse/st_open clean up after themselves and leave *f zeroed,
// so calling st_close on it afterwards is harmless but not required.
#define _POSIX_C_SOURCE 200809L

#include "safetensors.h"
#include "numbers.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void *st_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    fprintf(stderr, "out of memory (%zu x %zu bytes)\n", n, size);
    exit(2);
  }
  return p;
}

#define ST_MAX_HEADER 100000000ull
#define ST_MAX_INT 9007199254740992.0   // 2^53: every JSON number must be below this

static const struct { const char *name; int size; } st_dtypes[] = {
  {"BOOL", 1}, {"U8", 1}, {"I8", 1}, {"U16", 2}, {"I16", 2}, {"F16", 2}, {"BF16", 2},
  {"U32", 4}, {"I32", 4}, {"F32", 4}, {"U64", 8}, {"I64", 8}, {"F64", 8}, {"F8_E4M3", 1}, {"F8_E5M2", 1},
};

int st_item_size(const char *dtype) {
  if (!dtype) return -1;
  for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
    if (strcmp(dtype, st_dtypes[i].name) == 0) return st_dtypes[i].size;
  return -1;
}

// ---------------------------------------------------------------------------
// Messages

// A tensor name made safe for a one-line message: control bytes, quote and
// backslash escaped, long names shortened.
static void quote_name(const char *s, char *out, size_t n) {
  size_t o = 0, i = 0;
  for (; s[i] && o + 8 < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (i >= 120) break;
    if (ch < 0x20 || ch == 0x7f || ch == '\'' || ch == '\\')
      o += (size_t)snprintf(out + o, n - o, "\\x%02x", ch);
    else
      out[o++] = (char)ch;
  }
  if (s[i] && o + 4 < n) { memcpy(out + o, "...", 3); o += 3; }
  out[o] = 0;
}

static int st_err(char *err, size_t errlen, const char *path, const char *key,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int st_err(char *err, size_t errlen, const char *path, const char *key,
                  const char *fmt, ...) {
  char prefix[4700], q[512];
  if (key) quote_name(key, q, sizeof q), snprintf(prefix, sizeof prefix, "%s: tensor '%s'", path, q);
  else snprintf(prefix, sizeof prefix, "%s", path);
  va_list ap;
  va_start(ap, fmt);
  err_vprefix(err, errlen, prefix, fmt, ap);
  va_end(ap);
  return -1;
}

static void st_shape_text(const int64_t *shape, int ndim, char *out, size_t n) {
  size_t o = 0;
  o += (size_t)snprintf(out, n, "[");
  for (int i = 0; i < ndim && o < n; i++)
    o += (size_t)snprintf(out + o, n - o, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (o < n) snprintf(out + o, n - o, "]");
}

// Bytes of a tensor: prod(shape) * itemsize, 0 if any dim is 0. -1 on overflow
// of 2^63 (callers compare against the file size, which is far smaller).
static int tensor_nbytes(const int64_t *shape, int ndim, int itemsize, uint64_t *out) {
  uint64_t n = (uint64_t)itemsize;
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) { *out = 0; return 0; }
  for (int i = 0; i < ndim; i++) {
    uint64_t d = (uint64_t)shape[i];
    if (n > (UINT64_MAX >> 1) / d) return -1;
    n *= d;
  }
  *out = n;
  return 0;
}

// ---------------------------------------------------------------------------
// Reader

// Pre-scan of the raw header: valid UTF-8, no NUL bytes, and no \u0000
// escapes inside strings (cJSON would silently cut a key name there).
// Returns the offset of the first offending byte, or -1 if clean.
static long long header_scan(const unsigned char *h, size_t n, const char **why) {
  int in_str = 0;
  size_t i = 0;
  while (i < n) {
    unsigned char c = h[i];
    if (c == 0) { *why = "contains a NUL byte"; return (long long)i; }
    if (c < 0x80) {
      if (in_str && c == '\\') {
        if (i + 1 < n && h[i + 1] == 'u' && i + 5 < n && memcmp(h + i + 2, "0000", 4) == 0) {
          *why = "contains a \\u0000 escape in a string";
          return (long long)i;
        }
        // Skip the escaped character if it is plain ASCII; anything else is
        // left for the next turn (NUL/UTF-8 checks) and cJSON rejects it.
        i += (i + 1 < n && h[i + 1] != 0 && h[i + 1] < 0x80) ? 2 : 1;
        continue;
      }
      if (c == '"') in_str = !in_str;
      i++;
      continue;
    }
    // Multi-byte UTF-8: reject overlong forms, surrogates, > U+10FFFF.
    size_t len;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; min = 0x10000; }
    else { *why = "is not valid UTF-8"; return (long long)i; }
    if (i + len > n) { *why = "is not valid UTF-8"; return (long long)i; }
    for (size_t k = 1; k < len; k++) {
      if ((h[i + k] & 0xc0) != 0x80) { *why = "is not valid UTF-8"; return (long long)i; }
      cp = (cp << 6) | (h[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      *why = "is not valid UTF-8";
      return (long long)i;
    }
    i += len;
  }
  return -1;
}

// An exact non-negative integer below 2^53.
static int json_uint(const cJSON *item, uint64_t *out) {
  if (!cJSON_IsNumber(item)) return -1;
  double d = item->valuedouble;
  if (!(d >= 0 && d < ST_MAX_INT)) return -1;   // also rejects NaN
  uint64_t u = (uint64_t)d;
  if ((double)u != d) return -1;
  *out = u;
  return 0;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(((const StTensor *)a)->name, ((const StTensor *)b)->name);
}

static int cmp_offsets(const void *a, const void *b) {
  const StTensor *x = *(const StTensor *const *)a, *y = *(const StTensor *const *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return 0;
}

static void st_free(StFile *f) {
  if (f->t)
    for (int i = 0; i < f->n; i++) free(f->t[i].name);
  free(f->t);
  free(f->path);
  if (f->map) munmap(f->map, f->size);
  memset(f, 0, sizeof *f);
}

void st_close(StFile *f) {
  if (f) st_free(f);
}

// One header entry (not __metadata__) into *t. Returns 0 or -1 with err set.
static int parse_entry(const cJSON *e, StTensor *t, const char *path, char *err, size_t errlen) {
  const char *key = e->string;
  if (!cJSON_IsObject(e))
    return st_err(err, errlen, path, key, "entry is not an object");
  const cJSON *dtype = NULL, *shape = NULL, *offs = NULL;
  for (const cJSON *c = e->child; c; c = c->next) {
    const cJSON **slot = NULL;
    if (strcmp(c->string, "dtype") == 0) slot = &dtype;
    else if (strcmp(c->string, "shape") == 0) slot = &shape;
    else if (strcmp(c->string, "data_offsets") == 0) slot = &offs;
    if (!slot) continue;   // unknown fields are ignored, as other readers do
    if (*slot) return st_err(err, errlen, path, key, "duplicate field \"%s\"", c->string);
    *slot = c;
  }

  if (!dtype) return st_err(err, errlen, path, key, "missing \"dtype\"");
  if (!cJSON_IsString(dtype) || !dtype->valuestring)
    return st_err(err, errlen, path, key, "\"dtype\" is not a string");
  int isz = st_item_size(dtype->valuestring);
  if (isz < 0) {
    char q[64];
    quote_name(dtype->valuestring, q, 40);
    return st_err(err, errlen, path, key,
                  "unknown dtype '%s' (known: BOOL U8 I8 U16 I16 F16 BF16 U32 I32 F32 U64 I64 F64 F8_E4M3 F8_E5M2)", q);
  }
  snprintf(t->dtype, sizeof t->dtype, "%s", dtype->valuestring);

  if (!shape) return st_err(err, errlen, path, key, "missing \"shape\"");
  if (!cJSON_IsArray(shape)) return st_err(err, errlen, path, key, "\"shape\" is not an array");
  int nd = 0;
  for (const cJSON *c = shape->child; c; c = c->next) {
    if (nd == ST_MAXDIM)
      return st_err(err, errlen, path, key, "shape has more than %d dimensions", ST_MAXDIM);
    uint64_t d;
    if (json_uint(c, &d) < 0)
      return st_err(err, errlen, path, key,
                    "shape entry %d is not a non-negative integer below 2^53", nd);
    t->shape[nd++] = (int64_t)d;
  }
  t->ndim = nd;

  if (!offs) return st_err(err, errlen, path, key, "missing \"data_offsets\"");
  if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
    return st_err(err, errlen, path, key, "\"data_offsets\" is not an array of two integers");
  if (json_uint(offs->child, &t->begin) < 0 || json_uint(offs->child->next, &t->end) < 0)
    return st_err(err, errlen, path, key,
                  "\"data_offsets\" entries are not non-negative integers below 2^53");
  if (t->begin > t->end)
    return st_err(err, errlen, path, key, "data_offsets [%llu, %llu] begin after end",
                  (unsigned long long)t->begin, (unsigned long long)t->end);

  uint64_t nb;
  char st[256];
  st_shape_text(t->shape, t->ndim, st, sizeof st);
  if (tensor_nbytes(t->shape, t->ndim, isz, &nb) < 0)
    return st_err(err, errlen, path, key, "shape %s of %s is too large (byte size overflows)",
                  st, t->dtype);
  if (t->end - t->begin != nb)
    return st_err(err, errlen, path, key, "data_offsets [%llu, %llu] but shape %s of %s needs %llu bytes",
                  (unsigned long long)t->begin, (unsigned long long)t->end, st, t->dtype,
                  (unsigned long long)nb);
  return 0;
}

static int parse_metadata(const cJSON *m, const char *path, char *err, size_t errlen) {
  if (!cJSON_IsObject(m))
    return st_err(err, errlen, path, NULL, "\"__metadata__\" is not an object");
  for (const cJSON *c = m->child; c; c = c->next)
    if (!cJSON_IsString(c)) {
      char q[256];
      quote_name(c->string, q, sizeof q);
      return st_err(err, errlen, path, NULL, "\"__metadata__\" value of '%s' is not a string", q);
    }
  return 0;
}

// The work of st_parse; on failure the caller frees f.
static int parse(StFile *f, const unsigned char *b, size_t size, const char *path,
                 char *err, size_t errlen) {
  if (size < 8)
    return st_err(err, errlen, path, NULL,
                  "file is %zu bytes, too short for the 8-byte header length", size);
  uint64_t hn = 0;
  for (int i = 7; i >= 0; i--) hn = (hn << 8) | b[i];
  if (hn == 0) return st_err(err, errlen, path, NULL, "header length is 0");
  if (hn > ST_MAX_HEADER)
    return st_err(err, errlen, path, NULL, "header length %llu exceeds the limit of %llu bytes",
                  (unsigned long long)hn, ST_MAX_HEADER);
  if (hn > size - 8)
    return st_err(err, errlen, path, NULL, "header length %llu runs past the end of the %zu-byte file",
                  (unsigned long long)hn, size);
  size_t hlen = (size_t)hn;
  const unsigned char *h = b + 8;
  const char *why = NULL;
  long long bad = header_scan(h, hlen, &why);
  if (bad >= 0)
    return st_err(err, errlen, path, NULL, "header %s (at header byte %lld)", why, bad);

  if (h[0] != '{')   // as the reference implementation demands (no BOM, no leading space)
    return st_err(err, errlen, path, NULL, "header does not start with '{'");

  // Parse from a NUL-terminated copy so that the parser can never read into
  // the data section (or past a buffer that ends right after the header).
  char *copy = st_xcalloc(hlen + 1, 1);
  memcpy(copy, h, hlen);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(copy, hlen, &end, 0);
  if (!root) {
    long long at = end ? (long long)(end - copy) : -1;
    free(copy);
    return st_err(err, errlen, path, NULL, "header is not valid JSON (error near header byte %lld)", at);
  }
  for (const char *p = end; p < copy + hlen; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      long long at = (long long)(p - copy);
      free(copy);
      cJSON_Delete(root);
      return st_err(err, errlen, path, NULL, "header has trailing data after the JSON (at header byte %lld)", at);
    }
  free(copy);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return st_err(err, errlen, path, NULL, "header is not a JSON object");
  }

  int count = 0, nmeta = 0;
  for (const cJSON *e = root->child; e; e = e->next) {
    if (strcmp(e->string, "__metadata__") == 0) nmeta++;
    else count++;
  }
  if (nmeta > 1) {
    cJSON_Delete(root);
    return st_err(err, errlen, path, NULL, "duplicate key \"__metadata__\"");
  }
  f->t = st_xcalloc(count ? (size_t)count : 1, sizeof *f->t);
  const size_t data_size = size - 8 - hlen;
  const unsigned char *data = h + hlen;
  int rc = 0;
  for (const cJSON *e = root->child; e && rc == 0; e = e->next) {
    if (strcmp(e->string, "__metadata__") == 0) {
      rc = parse_metadata(e, path, err, errlen);
      continue;
    }
    if (e->string[0] == 0) {
      rc = st_err(err, errlen, path, NULL, "empty tensor name");
      break;
    }
    StTensor *t = &f->t[f->n];
    size_t kl = strlen(e->string);
    t->name = st_xcalloc(kl + 1, 1);
    memcpy(t->name, e->string, kl);
    f->n++;
    rc = parse_entry(e, t, path, err, errlen);
    if (rc == 0 && t->end > data_size)
      rc = st_err(err, errlen, path, t->name,
                  "data_offsets [%llu, %llu] run past the end of the %zu-byte data section",
                  (unsigned long long)t->begin, (unsigned long long)t->end, data_size);
    if (rc == 0) t->data = data + t->begin;
  }
  cJSON_Delete(root);
  if (rc) return rc;

  // Names: sorted for st_find, no duplicates.
  qsort(f->t, (size_t)f->n, sizeof *f->t, cmp_name);
  for (int i = 1; i < f->n; i++)
    if (strcmp(f->t[i - 1].name, f->t[i].name) == 0)
      return st_err(err, errlen, path, f->t[i].name, "duplicate key");

  // Offsets: sorted by begin they must tile [0, data_size) exactly.
  const StTensor **ord = st_xcalloc(f->n ? (size_t)f->n : 1, sizeof *ord);
  for (int i = 0; i < f->n; i++) ord[i] = &f->t[i];
  qsort(ord, (size_t)f->n, sizeof *ord, cmp_offsets);
  uint64_t at = 0;
  for (int i = 0; i < f->n && rc == 0; i++) {
    const StTensor *t = ord[i];
    if (t->begin > at) {
      if (i == 0)
        rc = st_err(err, errlen, path, t->name,
                    "data_offsets [%llu, %llu] leave a gap: the data section starts at 0",
                    (unsigned long long)t->begin, (unsigned long long)t->end);
      else {
        char q[512];
        quote_name(ord[i - 1]->name, q, sizeof q);
        rc = st_err(err, errlen, path, t->name,
                    "data_offsets [%llu, %llu] leave a gap after tensor '%s' which ends at %llu",
                    (unsigned long long)t->begin, (unsigned long long)t->end, q,
                    (unsigned long long)at);
      }
    } else if (t->begin < at) {
      char q[512];
      quote_name(ord[i - 1]->name, q, sizeof q);
      rc = st_err(err, errlen, path, t->name,
                  "data_offsets [%llu, %llu] overlap tensor '%s' [%llu, %llu]",
                  (unsigned long long)t->begin, (unsigned long long)t->end, q,
                  (unsigned long long)ord[i - 1]->begin, (unsigned long long)ord[i - 1]->end);
    }
    at = t->end;
  }
  if (rc == 0 && at != data_size) {
    if (f->n == 0)
      rc = st_err(err, errlen, path, NULL, "no tensors but the data section is %zu bytes", data_size);
    else
      rc = st_err(err, errlen, path, ord[f->n - 1]->name,
                  "last tensor ends at %llu but the data section is %zu bytes (file size %zu)",
                  (unsigned long long)at, data_size, size);
  }
  free(ord);
  return rc;
}

int st_parse(StFile *f, const void *buf, size_t size, const char *path, char *err, size_t errlen) {
  if (!path) path = "<memory>";
  memset(f, 0, sizeof *f);
  if (!buf && size) return st_err(err, errlen, path, NULL, "no buffer");
  size_t pl = strlen(path);
  f->path = st_xcalloc(pl + 1, 1);
  memcpy(f->path, path, pl);
  f->size = size;
  if (parse(f, buf, size, path, err, errlen) < 0) {
    st_free(f);
    return -1;
  }
  return 0;
}

int st_open(StFile *f, const char *path, char *err, size_t errlen) {
  memset(f, 0, sizeof *f);
  char why[300];
  size_t size;
  int fd = in_open(path, &size, why, sizeof why);
  if (fd < 0) return st_err(err, errlen, path, NULL, "%s", why);
  if (size < 8) {
    close(fd);
    return st_err(err, errlen, path, NULL,
                  "file is %zu bytes, too short for the 8-byte header length", size);
  }
  void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  close(fd);
  if (map == MAP_FAILED) return st_err(err, errlen, path, NULL, "cannot map: %s", strerror(e));
  if (st_parse(f, map, size, path, err, errlen) < 0) {
    munmap(map, size);
    return -1;
  }
  f->map = map;
  f->size = size;
  return 0;
}

StTensor *st_find(StFile *f, const char *name) {
  if (!f || !f->t || !name) return NULL;
  int lo = 0, hi = f->n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int c = strcmp(name, f->t[mid].name);
    if (c == 0) return &f->t[mid];
    if (c < 0) hi = mid - 1;
    else lo = mid + 1;
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Writer

static cJSON *raw_u64(uint64_t v) {
  // cJSON prints doubles >= 1e15 in exponent form (and imprecisely), so
  // integers go in as raw text.
  char s[32];
  snprintf(s, sizeof s, "%llu", (unsigned long long)v);
  return cJSON_CreateRaw(s);
}

static int cmp_name_ptr(const void *a, const void *b) {
  return strcmp((*(const StTensor *const *)a)->name, (*(const StTensor *const *)b)->name);
}

// Check the tensors and build the padded header. Returns a heap string or
// NULL with err set; *hlen gets its length (a multiple of 8).
static char *build_header(const char *path, int n, const StTensor *ts, size_t *hlen,
                          char *err, size_t errlen) {
  if (n < 0 || (n > 0 && !ts)) {
    st_err(err, errlen, path, NULL, "invalid tensor count %d", n);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    const StTensor *t = &ts[i];
    if (!t->name || !t->name[0]) {
      st_err(err, errlen, path, NULL, "tensor %d has an empty name", i);
      return NULL;
    }
    if (strcmp(t->name, "__metadata__") == 0) {
      st_err(err, errlen, path, t->name, "reserved name");
      return NULL;
    }
  }
  if (n > 1) {
    const StTensor **ord = st_xcalloc((size_t)n, sizeof *ord);
    for (int i = 0; i < n; i++) ord[i] = &ts[i];
    qsort(ord, (size_t)n, sizeof *ord, cmp_name_ptr);
    for (int i = 1; i < n; i++)
      if (strcmp(ord[i - 1]->name, ord[i]->name) == 0) {
        st_err(err, errlen, path, ord[i]->name, "duplicate tensor name");
        free(ord);
        return NULL;
      }
    free(ord);
  }

  cJSON *root = cJSON_CreateObject();
  if (!root) { st_err(err, errlen, path, NULL, "out of memory"); return NULL; }
  uint64_t off = 0;
  int ok = 1;
  for (int i = 0; i < n && ok; i++) {
    const StTensor *t = &ts[i];
    char dt[sizeof t->dtype + 1];
    memcpy(dt, t->dtype, sizeof t->dtype);
    dt[sizeof t->dtype] = 0;
    int isz = st_item_size(dt);
    if (isz < 0) {
      char q[64];
      quote_name(dt, q, sizeof q);
      st_err(err, errlen, path, t->name, "unknown dtype '%s'", q);
      ok = 0;
      break;
    }
    if (t->ndim < 0 || t->ndim > ST_MAXDIM) {
      st_err(err, errlen, path, t->name, "ndim %d out of range 0..%d", t->ndim, ST_MAXDIM);
      ok = 0;
      break;
    }
    for (int d = 0; d < t->ndim && ok; d++)
      if (t->shape[d] < 0 || (double)t->shape[d] >= ST_MAX_INT) {
        st_err(err, errlen, path, t->name, "shape dimension %d is %lld", d, (long long)t->shape[d]);
        ok = 0;
      }
    if (!ok) break;
    uint64_t nb;
    if (tensor_nbytes(t->shape, t->ndim, isz, &nb) < 0 || nb >= (uint64_t)ST_MAX_INT - off) {
      st_err(err, errlen, path, t->name, "too large: the file would exceed 2^53 bytes");
      ok = 0;
      break;
    }
    if (nb > 0 && !t->data) {
      st_err(err, errlen, path, t->name, "no data");
      ok = 0;
      break;
    }
    cJSON *e = cJSON_CreateObject();
    cJSON *shape = cJSON_CreateArray();
    cJSON *offs = cJSON_CreateArray();
    cJSON *b = raw_u64(off), *en = raw_u64(off + nb);
    int built = e && shape && offs && b && en;
    if (built) {
      cJSON_AddItemToArray(offs, b);
      cJSON_AddItemToArray(offs, en);
      b = en = NULL;
      for (int d = 0; d < t->ndim && built; d++) {
        cJSON *v = raw_u64((uint64_t)t->shape[d]);
        if (!v) built = 0;
        else cJSON_AddItemToArray(shape, v);
      }
    }
    if (built && !cJSON_AddStringToObject(e, "dtype", dt)) built = 0;
    if (built) {
      cJSON_AddItemToObject(e, "shape", shape);
      shape = NULL;
      cJSON_AddItemToObject(e, "data_offsets", offs);
      offs = NULL;
      cJSON_AddItemToObject(root, t->name, e);
      e = NULL;
    }
    cJSON_Delete(e);
    cJSON_Delete(shape);
    cJSON_Delete(offs);
    cJSON_Delete(b);
    cJSON_Delete(en);
    if (!built) {
      st_err(err, errlen, path, NULL, "out of memory");
      ok = 0;
      break;
    }
    off += nb;
  }
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  char *js = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!js) { st_err(err, errlen, path, NULL, "out of memory"); return NULL; }
  size_t len = strlen(js);
  size_t padded = (len + 7) & ~(size_t)7;
  if (padded > ST_MAX_HEADER) {
    free(js);
    st_err(err, errlen, path, NULL, "header of %zu bytes exceeds the limit", padded);
    return NULL;
  }
  char *h = st_xcalloc(padded + 1, 1);
  memcpy(h, js, len);
  memset(h + len, ' ', padded - len);
  free(js);
  *hlen = padded;
  return h;
}

int st_write(const char *path, int n, const StTensor *ts, char *err, size_t errlen) {
  size_t hlen = 0;
  char *h = build_header(path, n, ts, &hlen, err, errlen);
  if (!h) return -1;
  unsigned char len8[8];
  for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
  const void **parts = calloc((size_t)n + 2, sizeof *parts);
  size_t *lens = calloc((size_t)n + 2, sizeof *lens);
  int rc = -1;
  if (!parts || !lens) st_err(err, errlen, path, NULL, "out of memory");
  else {
    parts[0] = len8, lens[0] = 8, parts[1] = h, lens[1] = hlen;
    for (int i = 0; i < n; i++) {
      uint64_t nb = 0;
      char dt[sizeof ts[i].dtype + 1];
      memcpy(dt, ts[i].dtype, sizeof ts[i].dtype);
      dt[sizeof ts[i].dtype] = 0;
      tensor_nbytes(ts[i].shape, ts[i].ndim, st_item_size(dt), &nb);   // checked in build_header
      parts[2 + i] = ts[i].data, lens[2 + i] = (size_t)nb;
    }
    rc = out_write(path, n + 2, parts, lens, err, errlen);
  }
  free(parts);
  free(lens);
  free(h);
  return rc;
}

// ---------------------------------------------------------------------------
// Sets of files (shards)

StTensor *st_set_find(StSet *s, const char *name, int *file) {
  for (int i = 0; s && i < s->n; i++) {
    StTensor *t = st_find(&s->f[i], name);
    if (t) {
      if (file) *file = i;
      return t;
    }
  }
  return NULL;
}

void st_set_close(StSet *s) {
  for (int i = 0; s && i < s->n; i++) st_close(&s->f[i]);
  if (s) s->n = 0;
}

static void set_label(StSet *s, const char *given) {
  if (s->given++ == 0) snprintf(s->first, sizeof s->first, "%s", given);
  if (s->given == 1) snprintf(s->label, sizeof s->label, "%s", s->first);
  else snprintf(s->label, sizeof s->label, "%s (+ %d more)", s->first, s->given - 1);
}

// One more file into the set, its keys checked against the files before it.
static int set_open(StSet *s, const char *path, char *err, size_t errlen) {
  if (s->n == ST_MAXFILES) return st_err(err, errlen, path, NULL, "more than %d weight files", ST_MAXFILES);
  StFile *f = &s->f[s->n];
  if (st_open(f, path, err, errlen)) return -1;
  for (int i = 0; i < f->n; i++) {
    int other;
    if (st_set_find(s, f->t[i].name, &other)) {
      st_err(err, errlen, path, f->t[i].name, "also in %s: a key may be in one file only", s->f[other].path);
      st_close(f);
      return -1;
    }
  }
  s->n++;
  return 0;
}

int st_set_add(StSet *s, const char *path, char *err, size_t errlen) {
  size_t len = strlen(path);
  if (len < 5 || strcmp(path + len - 5, ".json")) {
    if (set_open(s, path, err, errlen)) return -1;
    set_label(s, path);
    return 0;
  }
  // an index: its weight_map's files, in order of first mention, beside it
  char why[200];
  size_t tlen;
  char *text = in_read(path, (size_t)64 << 20, &tlen, why, sizeof why);
  if (!text) return st_err(err, errlen, path, NULL, "%s", why);
  cJSON *j = cJSON_Parse(text);
  free(text);
  cJSON *map = cJSON_GetObjectItemCaseSensitive(j, "weight_map");
  int rc = 0, from = s->n;
  if (!cJSON_IsObject(map)) rc = st_err(err, errlen, path, NULL, "not a safetensors index: no \"weight_map\" object of key -> file");
  const char *slash = strrchr(path, '/');
  int dirlen = slash ? (int)(slash - path + 1) : 0;
  for (cJSON *e = map ? map->child : NULL; !rc && e; e = e->next) {
    const char *file = cJSON_IsString(e) ? e->valuestring : NULL;
    if (!file || !*file || file[0] == '/' || strstr(file, "..")) {
      rc = st_err(err, errlen, path, e->string, "maps to %s: want a file name beside the index", file ? "an unusable name" : "no file name");
      break;
    }
    char full[4096];
    snprintf(full, sizeof full, "%.*s%s", dirlen, path, file);
    int have = 0;
    for (int i = from; i < s->n && !have; i++) have = !strcmp(s->f[i].path, full);
    if (!have) rc = set_open(s, full, err, errlen);
  }
  // every key where the index says, and every tensor of those files in the index
  for (cJSON *e = map ? map->child : NULL; !rc && e; e = e->next) {
    char full[4096];
    snprintf(full, sizeof full, "%.*s%s", dirlen, path, e->valuestring);
    int in = -1;
    if (!st_set_find(s, e->string, &in) || strcmp(s->f[in].path, full))
      rc = st_err(err, errlen, path, e->string, "the index puts it in %s, %s%s", e->valuestring, in >= 0 ? "but it is in " : "which does not hold it",
                  in >= 0 ? s->f[in].path : "");
  }
  for (int i = from; !rc && i < s->n; i++)
    for (int k = 0; !rc && k < s->f[i].n; k++)
      if (!cJSON_GetObjectItemCaseSensitive(map, s->f[i].t[k].name))
        rc = st_err(err, errlen, s->f[i].path, s->f[i].t[k].name, "not in the index %s", path);
  cJSON_Delete(j);
  if (rc) {
    while (s->n > from) st_close(&s->f[--s->n]);
    return -1;
  }
  set_label(s, path);
  return 0;
}
