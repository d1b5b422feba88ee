// test_safetensors.c — unit test of runtime/safetensors.c (and files.c, its writes).
//
//   cc -std=c11 -Wall -Wextra -g -fsanitize=address,undefined -Iruntime
//      tests/unit/test_safetensors.c runtime/safetensors.c runtime/files.c -lcjson
//   ./a.out                 # run the tests (ST_VERBOSE=1: print each rejection)
//   ./a.out --corpus DIR    # also write small valid files as fuzzer seeds
#define _POSIX_C_SOURCE 200809L

#include "safetensors.h"

#include <stdint.h>
#include <stdio.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) { fprintf(stderr, "out of memory\n"); abort(); }
  return p;
}

static int passed, failed;

#define CHECK(cond, ...) do { \
    if (cond) passed++; \
    else { failed++; fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static char dir[256];

static const char *in_dir(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static StTensor mk(const char *name, const char *dtype, int ndim, const int64_t *shape, const void *data) {
  StTensor t;
  memset(&t, 0, sizeof t);
  t.name = (char *)name;
  snprintf(t.dtype, sizeof t.dtype, "%s", dtype);
  t.ndim = ndim;
  for (int i = 0; i < ndim; i++) t.shape[i] = shape[i];
  t.data = data;
  return t;
}

static unsigned char *read_file(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long sz = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  unsigned char *b = xcalloc((size_t)sz + 1, 1);
  size_t got = fread(b, 1, (size_t)sz, fp);
  fclose(fp);
  *n = got;
  return b;
}

static int count_tmp_files(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp")) n++;
  if (d) closedir(d);
  return n;
}

// ---------------------------------------------------------------------------
// Round trips

static void test_roundtrip(void) {
  float f32[6] = {1.5f, -2.0f, 3.25f, 0.0f, 1e30f, -7.0f};
  uint16_t bf16[4] = {0x3f80, 0xc000, 0x7fc0, 0x0001};
  int64_t i64 = -1234567890123LL;
  unsigned char boolv[3] = {1, 0, 1};
  double f64[2] = {3.141592653589793, -0.0};
  int64_t s23[2] = {2, 3}, s4[1] = {4}, s05[2] = {0, 5}, s3[1] = {3}, s2[1] = {2};
  StTensor ts[6] = {
    mk("weight.f32", "F32", 2, s23, f32),
    mk("b", "BF16", 1, s4, bf16),
    mk("scalar", "I64", 0, NULL, &i64),
    mk("empty", "U8", 2, s05, NULL),
    mk("mask", "BOOL", 1, s3, boolv),
    mk("z.f64", "F64", 1, s2, f64),
  };
  char err[512] = "";
  const char *path = in_dir("rt.safetensors");
  int rc = st_write(path, 6, ts, err, sizeof err);
  CHECK(rc == 0, "st_write: %s", err);
  CHECK(count_tmp_files() == 0, "temporary file left behind");

  size_t n = 0;
  unsigned char *raw = read_file(path, &n);
  CHECK(raw && n >= 8, "cannot read back");
  if (raw && n >= 8) {
    uint64_t hn = 0;
    for (int i = 7; i >= 0; i--) hn = (hn << 8) | raw[i];
    CHECK(hn % 8 == 0, "header length %llu not a multiple of 8", (unsigned long long)hn);
    CHECK(8 + hn + 24 + 8 + 8 + 0 + 3 + 16 == n, "file size %zu", n);
    CHECK(raw[8] == '{', "header starts with %c", raw[8]);
  }
  free(raw);

  StFile f;
  rc = st_open(&f, path, err, sizeof err);
  CHECK(rc == 0, "st_open: %s", err);
  if (rc == 0) {
    CHECK(f.n == 6, "n = %d", f.n);
    CHECK(f.map != NULL, "not mapped");
    for (int i = 1; i < f.n; i++)
      CHECK(strcmp(f.t[i - 1].name, f.t[i].name) < 0, "not sorted");
    StTensor *t = st_find(&f, "weight.f32");
    CHECK(t && strcmp(t->dtype, "F32") == 0 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3,
          "weight.f32 header");
    CHECK(t && t->begin == 0 && t->end == 24, "weight.f32 offsets");
    CHECK(t && memcmp(t->data, f32, sizeof f32) == 0, "weight.f32 data");
    t = st_find(&f, "b");
    CHECK(t && strcmp(t->dtype, "BF16") == 0 && t->ndim == 1 && t->shape[0] == 4, "b header");
    CHECK(t && t->begin == 24 && t->end == 32, "b offsets");
    CHECK(t && memcmp(t->data, bf16, sizeof bf16) == 0, "b data");
    t = st_find(&f, "scalar");
    CHECK(t && strcmp(t->dtype, "I64") == 0 && t->ndim == 0, "scalar header");
    CHECK(t && t->end - t->begin == 8, "scalar size");
    int64_t v = 0;
    if (t) memcpy(&v, t->data, 8);
    CHECK(v == i64, "scalar value %lld", (long long)v);
    t = st_find(&f, "empty");
    CHECK(t && strcmp(t->dtype, "U8") == 0 && t->ndim == 2 && t->shape[0] == 0 && t->shape[1] == 5,
          "empty header");
    CHECK(t && t->begin == 40 && t->end == 40, "empty offsets");
    t = st_find(&f, "mask");
    CHECK(t && strcmp(t->dtype, "BOOL") == 0 && memcmp(t->data, boolv, 3) == 0, "mask");
    t = st_find(&f, "z.f64");
    CHECK(t && t->begin == 43 && t->end == 59 && memcmp(t->data, f64, 16) == 0, "z.f64");
    CHECK(st_find(&f, "missing") == NULL, "found a missing name");
    CHECK(st_find(&f, "") == NULL, "found the empty name");
    CHECK(st_find(&f, "a") == NULL && st_find(&f, "zz") == NULL, "found out-of-range names");
    CHECK(strcmp(f.path, path) == 0, "path");
  }
  st_close(&f);
  st_close(&f);   // closing twice is harmless

  // Overwrite the same path (rename over an existing file).
  rc = st_write(path, 1, ts + 2, err, sizeof err);
  CHECK(rc == 0, "overwrite: %s", err);
  rc = st_open(&f, path, err, sizeof err);
  CHECK(rc == 0 && f.n == 1 && st_find(&f, "scalar"), "overwrite readback: %s", err);
  st_close(&f);
  unlink(path);
}

static void test_empty_and_many(void) {
  char err[512] = "";
  const char *path = in_dir("empty.safetensors");
  CHECK(st_write(path, 0, NULL, err, sizeof err) == 0, "write empty: %s", err);
  StFile f;
  CHECK(st_open(&f, path, err, sizeof err) == 0 && f.n == 0, "open empty: %s", err);
  CHECK(st_find(&f, "x") == NULL, "find in empty");
  st_close(&f);
  unlink(path);

  // Many tensors in scrambled order: st_find must locate every one.
  enum { N = 97 };
  StTensor ts[N];
  char names[N][16];
  uint32_t vals[N];
  int64_t one[1] = {1};
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "t%03d", (i * 37) % N);
    vals[i] = (uint32_t)(i * 2654435761u);
    ts[i] = mk(names[i], "U32", 1, one, &vals[i]);
  }
  path = in_dir("many.safetensors");
  CHECK(st_write(path, N, ts, err, sizeof err) == 0, "write many: %s", err);
  CHECK(st_open(&f, path, err, sizeof err) == 0 && f.n == N, "open many: %s", err);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    StTensor *t = st_find(&f, names[i]);
    uint32_t v = 0;
    if (t) memcpy(&v, t->data, 4);
    if (!t || v != vals[i] || t->begin != (uint64_t)i * 4) bad++;
  }
  CHECK(bad == 0, "%d of %d tensors wrong", bad, N);
  st_close(&f);
  unlink(path);
}

// Large integers (beyond 2^31, 2^32 and 1e15) must be written as plain
// integers and read back exactly; a zero dimension keeps the file tiny.
static void test_large_numbers(void) {
  char err[512] = "";
  int64_t shape[3] = {23800000000LL, 0, 1000000000000000LL};
  int64_t shape2[2] = {9007199254740991LL, 0};
  StTensor ts[2] = {mk("big", "F32", 3, shape, NULL), mk("big2", "U8", 2, shape2, NULL)};
  const char *path = in_dir("large.safetensors");
  CHECK(st_write(path, 2, ts, err, sizeof err) == 0, "write: %s", err);
  size_t n = 0;
  unsigned char *raw = read_file(path, &n);
  if (raw) {
    CHECK(strstr((char *)raw + 8, "23800000000") != NULL, "23800000000 not printed as integer: %s", raw + 8);
    CHECK(strstr((char *)raw + 8, "1000000000000000") != NULL, "1e15 not printed as integer: %s", raw + 8);
    CHECK(strstr((char *)raw + 8, "9007199254740991") != NULL, "2^53-1 not printed as integer: %s", raw + 8);
    CHECK(strchr((char *)raw + 8, 'e') == NULL || strstr((char *)raw + 8, "e+") == NULL, "exponent form");
  }
  free(raw);
  StFile f;
  CHECK(st_open(&f, path, err, sizeof err) == 0, "open: %s", err);
  StTensor *t = st_find(&f, "big");
  CHECK(t && t->ndim == 3 && t->shape[0] == 23800000000LL && t->shape[1] == 0 &&
        t->shape[2] == 1000000000000000LL, "big shape");
  t = st_find(&f, "big2");
  CHECK(t && t->shape[0] == 9007199254740991LL, "big2 shape");
  st_close(&f);
  unlink(path);

  // Offsets beyond 2^32 parse (the data section cannot be that large here,
  // so the failure must come from the range check, not the number parse).
  const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[23800000000],\"data_offsets\":[0,23800000000]}}";
  size_t hl = strlen(h);
  unsigned char *buf = xcalloc(8 + hl, 1);
  buf[0] = (unsigned char)hl;
  memcpy(buf + 8, h, hl);
  CHECK(st_parse(&f, buf, 8 + hl, "big.st", err, sizeof err) < 0 && strstr(err, "23800000000") &&
        strstr(err, "run past the end"), "got: %s", err);
  free(buf);
}

// ---------------------------------------------------------------------------
// Malformed input

// A file image: header length (hlen_override if >= 0, else strlen(header)),
// the header, then ndata zero bytes.
static unsigned char *image(const char *header, long long hlen_override, size_t ndata, size_t *size) {
  size_t hl = strlen(header);
  *size = 8 + hl + ndata;
  unsigned char *b = xcalloc(*size, 1);
  uint64_t n = hlen_override >= 0 ? (uint64_t)hlen_override : hl;
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(n >> (8 * i));
  memcpy(b + 8, header, hl);
  return b;
}

static void expect_bad_img(int line, const unsigned char *b, size_t size, const char *key, const char *phrase) {
  StFile f;
  char err[1024] = "";
  memset(&f, 0xab, sizeof f);   // st_parse must not rely on *f being initialised
  int rc = st_parse(&f, b, size, "mem.safetensors", err, sizeof err);
  char keyq[300] = "";
  if (key) snprintf(keyq, sizeof keyq, "tensor '%s'", key);
  int ok = rc == -1 && strncmp(err, "mem.safetensors: ", 17) == 0 && (!key || strstr(err, keyq)) &&
           (!phrase || strstr(err, phrase)) && !strchr(err, '\n');
  if (getenv("ST_VERBOSE")) printf("  %s\n", err);
  if (ok) passed++;
  else {
    failed++;
    fprintf(stderr, "%s:%d: FAIL: expected rejection mentioning %s%s%s \"%s\"; got rc=%d: %s\n", __FILE__,
            line, key ? "'" : "", key ? key : "", key ? "' and" : "", phrase ? phrase : "", rc, err);
  }
  // Failed parse leaves *f zeroed: closing it is a no-op and safe.
  if (rc < 0) CHECK(f.t == NULL && f.path == NULL && f.n == 0 && f.map == NULL, "not zeroed on failure");
  st_close(&f);
}

static void expect_bad(int line, const char *header, size_t ndata, const char *key, const char *phrase) {
  size_t size;
  unsigned char *b = image(header, -1, ndata, &size);
  expect_bad_img(line, b, size, key, phrase);
  free(b);
}

static void expect_good(int line, const char *header, size_t ndata, int ntensors) {
  size_t size;
  unsigned char *b = image(header, -1, ndata, &size);
  StFile f;
  char err[1024] = "";
  int rc = st_parse(&f, b, size, "mem.safetensors", err, sizeof err);
  if (rc == 0 && f.n == ntensors && f.map == NULL) passed++;
  else {
    failed++;
    fprintf(stderr, "%s:%d: FAIL: expected acceptance of %s; got rc=%d n=%d: %s\n", __FILE__, line, header,
            rc, rc == 0 ? f.n : -1, err);
  }
  st_close(&f);
  free(b);
}

#define BAD(h, nd, key, phrase) expect_bad(__LINE__, h, nd, key, phrase)
#define GOOD(h, nd, n) expect_good(__LINE__, h, nd, n)
#define E(dt, shape, offs) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"

static void test_malformed(void) {
  // Sanity: the images themselves are fine when correct.
  GOOD("{}", 0, 0);
  GOOD("{\"a\":" E("F32", "[2]", "[0,8]") "}", 8, 1);
  GOOD("{\"__metadata__\":{\"format\":\"pt\"},\"a\":" E("U8", "[3]", "[0,3]") "}   ", 3, 1);
  GOOD("{\"a\":" E("U8", "[]", "[0,1]") ",\"b\":" E("U8", "[0]", "[1,1]") "}\n \t\r", 1, 2);
  GOOD("{\"z\":" E("U8", "[0]", "[0,0]") ",\"a\":" E("U8", "[2]", "[0,2]") "}", 2, 2);
  GOOD("{\"a\":{\"shape\":[1],\"extra\":1,\"data_offsets\":[0,2],\"dtype\":\"BF16\"}}", 2, 1);
  GOOD("{\"\xc3\xa9t\xe2\x82\xac\":" E("U8", "[1]", "[0,1]") "}", 1, 1);

  // Length prefix.
  {
    unsigned char b[5] = {1, 0, 0, 0, 0};
    expect_bad_img(__LINE__, b, sizeof b, NULL, "too short");
    expect_bad_img(__LINE__, b, 0, NULL, "too short");
    size_t size;
    unsigned char *img = image("{}", 0, 0, &size);
    expect_bad_img(__LINE__, img, size, NULL, "header length is 0");
    free(img);
    img = image("{}", 200000000, 0, &size);
    expect_bad_img(__LINE__, img, size, NULL, "exceeds the limit");
    free(img);
    img = image("{}", 100, 0, &size);
    expect_bad_img(__LINE__, img, size, NULL, "runs past the end");
    free(img);
    img = image("{}", 0xffffffffffffffffull >> 1, 0, &size);
    expect_bad_img(__LINE__, img, size, NULL, "exceeds the limit");
    free(img);
  }

  // JSON shape of the header.
  BAD("{\"a\":", 0, NULL, "not valid JSON");
  BAD("", 0, NULL, NULL);
  BAD("[1,2]", 0, NULL, "does not start with '{'");
  BAD("\"str\"", 0, NULL, "does not start with '{'");
  BAD(" {}", 0, NULL, "does not start with '{'");
  BAD("\xef\xbb\xbf{}", 0, NULL, "does not start with '{'");
  BAD("{} x", 0, NULL, "trailing data");
  BAD("{}{}", 0, NULL, "trailing data");
  BAD("{\"a\":5}", 0, "a", "not an object");
  BAD("{\"a\":[]}", 0, "a", "not an object");
  BAD("{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "a", "missing \"dtype\"");
  BAD("{\"a\":{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "a", "\"dtype\" is not a string");
  BAD("{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", 1, "a", "missing \"shape\"");
  BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":1,\"data_offsets\":[0,1]}}", 1, "a", "\"shape\" is not an array");
  BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, "a", "missing \"data_offsets\"");
  BAD("{\"a\":" E("U8", "[1]", "{}") "}", 1, "a", "\"data_offsets\" is not an array");
  BAD("{\"a\":" E("U8", "[1]", "[0]") "}", 1, "a", "\"data_offsets\" is not an array");
  BAD("{\"a\":" E("U8", "[1]", "[0,1,2]") "}", 1, "a", "\"data_offsets\" is not an array");
  BAD("{\"a\":" E("U8", "[1]", "[\"0\",\"1\"]") "}", 1, "a", "\"data_offsets\" entries");
  BAD("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "a", "duplicate field");
  BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"shape\":[1]}}", 1, "a", "duplicate field");

  // dtype.
  BAD("{\"a\":" E("F8", "[1]", "[0,1]") "}", 1, "a", "unknown dtype 'F8'");
  BAD("{\"a\":" E("f32", "[1]", "[0,4]") "}", 4, "a", "unknown dtype");
  BAD("{\"a\":" E("", "[1]", "[0,1]") "}", 1, "a", "unknown dtype");
  BAD("{\"a\":" E("BF16BF16BF16", "[1]", "[0,2]") "}", 2, "a", "unknown dtype");

  // shape.
  BAD("{\"a\":" E("U8", "[1,1,1,1,1,1,1,1,1]", "[0,1]") "}", 1, "a", "more than 8 dimensions");
  GOOD("{\"a\":" E("U8", "[1,1,1,1,1,1,1,1]", "[0,1]") "}", 1, 1);
  BAD("{\"a\":" E("U8", "[-1]", "[0,1]") "}", 1, "a", "shape entry 0");
  BAD("{\"a\":" E("U8", "[1,1.5]", "[0,1]") "}", 1, "a", "shape entry 1");
  BAD("{\"a\":" E("U8", "[\"1\"]", "[0,1]") "}", 1, "a", "shape entry 0");
  BAD("{\"a\":" E("U8", "[null]", "[0,1]") "}", 1, "a", "shape entry 0");
  BAD("{\"a\":" E("U8", "[[1]]", "[0,1]") "}", 1, "a", "shape entry 0");
  BAD("{\"a\":" E("U8", "[9007199254740992,0]", "[0,0]") "}", 0, "a", "shape entry 0");
  BAD("{\"a\":" E("U8", "[1e999,0]", "[0,0]") "}", 0, "a", "shape entry 0");
  GOOD("{\"a\":" E("U8", "[9007199254740991,0]", "[0,0]") "}", 0, 1);

  // Offsets.
  BAD("{\"a\":" E("U8", "[1]", "[-1,0]") "}", 1, "a", "\"data_offsets\" entries");
  BAD("{\"a\":" E("U8", "[1]", "[0,1.5]") "}", 1, "a", "\"data_offsets\" entries");
  BAD("{\"a\":" E("U8", "[1]", "[0,9007199254740992]") "}", 1, "a", "\"data_offsets\" entries");
  BAD("{\"a\":" E("U8", "[0]", "[1,0]") "}", 1, "a", "begin after end");

  // Byte size: the message format of the design notes, verbatim.
  {
    size_t size;
    unsigned char *img = image("{\"img_in.weight\":" E("BF16", "[3072,64]", "[0,100]") "}", -1, 100, &size);
    StFile f;
    char err[512] = "";
    int rc = st_parse(&f, img, size, "w.safetensors", err, sizeof err);
    CHECK(rc == -1 && strcmp(err, "w.safetensors: tensor 'img_in.weight': data_offsets [0, 100] but shape "
                                  "[3072,64] of BF16 needs 393216 bytes") == 0,
          "got: %s", err);
    free(img);
  }
  BAD("{\"a\":" E("F32", "[2]", "[0,4]") "}", 4, "a", "needs 8 bytes");
  BAD("{\"a\":" E("F64", "[]", "[0,4]") "}", 4, "a", "needs 8 bytes");
  BAD("{\"a\":" E("F64", "[4294967296,4294967296,4]", "[0,8]") "}", 8, "a", "overflow");
  BAD("{\"a\":" E("U8", "[4294967296,4294967296]", "[0,8]") "}", 8, "a", "overflow");
  BAD("{\"a\":" E("U8", "[4294967296,2147483647]", "[0,8]") "}", 8, "a", "needs 9223372032559808512 bytes");

  // Tiling of the data section.
  BAD("{\"a\":" E("U8", "[4]", "[0,4]") ",\"b\":" E("U8", "[4]", "[8,12]") "}", 12, "b", "gap after tensor 'a'");
  BAD("{\"a\":" E("U8", "[8]", "[0,8]") ",\"b\":" E("U8", "[8]", "[4,12]") "}", 12, "b", "overlap tensor 'a'");
  BAD("{\"a\":" E("U8", "[8]", "[0,8]") ",\"b\":" E("U8", "[8]", "[0,8]") "}", 8, NULL, "overlap");
  BAD("{\"a\":" E("U8", "[8]", "[0,8]") ",\"b\":" E("U8", "[0]", "[4,4]") "}", 8, "b", "overlap tensor 'a'");
  BAD("{\"a\":" E("U8", "[4]", "[4,8]") "}", 8, "a", "gap");
  BAD("{\"a\":" E("U8", "[4]", "[0,4]") "}", 8, "a", "last tensor ends at 4 but the data section is 8 bytes");
  BAD("{\"a\":" E("U8", "[16]", "[0,16]") "}", 8, "a", "run past the end");
  BAD("{}", 4, NULL, "no tensors but the data section is 4 bytes");
  BAD("{\"__metadata__\":{}}", 1, NULL, "no tensors");

  // Keys.
  BAD("{\"a\":" E("U8", "[4]", "[0,4]") ",\"a\":" E("U8", "[4]", "[4,8]") "}", 8, "a", "duplicate key");
  BAD("{\"\":" E("U8", "[4]", "[0,4]") "}", 4, NULL, "empty tensor name");
  BAD("{\"__metadata__\":[]}", 0, NULL, "\"__metadata__\" is not an object");
  BAD("{\"__metadata__\":{\"k\":1}}", 0, NULL, "value of 'k' is not a string");
  BAD("{\"__metadata__\":{},\"__metadata__\":{}}", 0, NULL, "duplicate key \"__metadata__\"");
  BAD("{\"a\\nb\":" E("U8", "[4]", "[0,3]") "}", 3, "a\\x0ab", "needs 4 bytes");   // escaped in the message

  // Bytes of the header.
  {
    size_t size;
    unsigned char *img = image("{\"a\":" E("U8", "[1]", "[0,1]") "}", -1, 1, &size);
    img[10] = 0;   // inside the key "a"
    expect_bad_img(__LINE__, img, size, NULL, "NUL byte");
    free(img);
  }
  BAD("{\"\xff\":" E("U8", "[1]", "[0,1]") "}", 1, NULL, "not valid UTF-8");
  BAD("{\"\xc0\x80\":" E("U8", "[1]", "[0,1]") "}", 1, NULL, "not valid UTF-8");
  BAD("{\"\xed\xa0\x80\":" E("U8", "[1]", "[0,1]") "}", 1, NULL, "not valid UTF-8");
  BAD("{\"\xe2\x82\":" E("U8", "[1]", "[0,1]") "}", 1, NULL, "not valid UTF-8");
  BAD("{\"a\\u0000b\":" E("U8", "[1]", "[0,1]") "}", 1, NULL, "\\u0000");
  GOOD("{\"a\\\\u0000b\":" E("U8", "[1]", "[0,1]") "}", 1, 1);   // an escaped backslash, then text
}

// ---------------------------------------------------------------------------
// Files

static void test_files(void) {
  char err[512] = "";
  StFile f;
  const char *missing = in_dir("missing.safetensors");
  CHECK(st_open(&f, missing, err, sizeof err) < 0 && strstr(err, missing) && strstr(err, "No such file"),
        "got: %s", err);
  st_close(&f);

  CHECK(st_open(&f, dir, err, sizeof err) < 0 && strstr(err, dir) && strstr(err, "not a regular file"),
        "got: %s", err);
  st_close(&f);

  // Truncated file: data cut short, then the header cut short, then the prefix.
  uint8_t data[64];
  for (int i = 0; i < 64; i++) data[i] = (uint8_t)i;
  int64_t s[1] = {16};
  StTensor ts[2] = {mk("first", "F32", 1, s, data), mk("second", "U8", 0, NULL, data)};
  const char *path = in_dir("trunc.safetensors");
  CHECK(st_write(path, 2, ts, err, sizeof err) == 0, "write: %s", err);
  struct stat sb;
  stat(path, &sb);
  mode_t um = umask(0);
  umask(um);
  CHECK((sb.st_mode & 0777) == (0666 & ~um), "mode %o, umask %o", (unsigned)(sb.st_mode & 0777), (unsigned)um);
  CHECK(truncate(path, sb.st_size - 1) == 0, "truncate");
  CHECK(st_open(&f, path, err, sizeof err) < 0 && strstr(err, path) && strstr(err, "'second'") &&
        strstr(err, "run past the end"), "got: %s", err);
  st_close(&f);
  CHECK(truncate(path, sb.st_size - 66) == 0, "truncate");
  CHECK(st_open(&f, path, err, sizeof err) < 0 && strstr(err, path) && strstr(err, "header length"),
        "got: %s", err);
  CHECK(truncate(path, 5) == 0, "truncate");
  CHECK(st_open(&f, path, err, sizeof err) < 0 && strstr(err, path) && strstr(err, "too short"), "got: %s", err);
  CHECK(truncate(path, 0) == 0, "truncate");
  CHECK(st_open(&f, path, err, sizeof err) < 0 && strstr(err, path) && strstr(err, "too short"), "got: %s", err);
  // A longer file (extra bytes at the end) is rejected too.
  CHECK(st_write(path, 2, ts, err, sizeof err) == 0, "write: %s", err);
  CHECK(truncate(path, sb.st_size + 3) == 0, "extend");
  CHECK(st_open(&f, path, err, sizeof err) < 0 && strstr(err, "data section is"), "got: %s", err);
  unlink(path);

  // Writer errors: nothing (not even a temporary file) is left behind.
  const char *nodir = in_dir("nodir/x.safetensors");
  CHECK(st_write(nodir, 2, ts, err, sizeof err) < 0 && strstr(err, nodir) && strstr(err, "No such file"),
        "got: %s", err);
  path = in_dir("w.safetensors");
  StTensor bad = mk("x", "F8", 1, s, data);
  CHECK(st_write(path, 1, &bad, err, sizeof err) < 0 && strstr(err, path) && strstr(err, "'x'") &&
        strstr(err, "unknown dtype"), "got: %s", err);
  StTensor dup[2] = {mk("x", "U8", 1, s, data), mk("x", "U8", 1, s, data)};
  CHECK(st_write(path, 2, dup, err, sizeof err) < 0 && strstr(err, "duplicate"), "got: %s", err);
  StTensor noname = mk("", "U8", 1, s, data);
  CHECK(st_write(path, 1, &noname, err, sizeof err) < 0 && strstr(err, "empty name"), "got: %s", err);
  StTensor meta = mk("__metadata__", "U8", 1, s, data);
  CHECK(st_write(path, 1, &meta, err, sizeof err) < 0 && strstr(err, "reserved"), "got: %s", err);
  StTensor nodata = mk("x", "U8", 1, s, NULL);
  CHECK(st_write(path, 1, &nodata, err, sizeof err) < 0 && strstr(err, "no data"), "got: %s", err);
  int64_t neg[1] = {-3};
  StTensor negs = mk("x", "U8", 1, neg, data);
  CHECK(st_write(path, 1, &negs, err, sizeof err) < 0 && strstr(err, "dimension 0"), "got: %s", err);
  StTensor deep = mk("x", "U8", 0, NULL, data);
  deep.ndim = ST_MAXDIM + 1;
  CHECK(st_write(path, 1, &deep, err, sizeof err) < 0 && strstr(err, "ndim"), "got: %s", err);
  int64_t huge[3] = {1LL << 40, 1LL << 40, 1};
  StTensor hugt = mk("x", "U8", 3, huge, data);
  CHECK(st_write(path, 1, &hugt, err, sizeof err) < 0 && strstr(err, "too large"), "got: %s", err);
  CHECK(access(path, F_OK) != 0, "a file was left behind");
  CHECK(count_tmp_files() == 0, "temporary file left behind");

  // A failed write leaves an existing file untouched.
  CHECK(st_write(path, 2, ts, err, sizeof err) == 0, "write: %s", err);
  CHECK(st_write(path, 1, &bad, err, sizeof err) < 0, "should fail");
  CHECK(st_open(&f, path, err, sizeof err) == 0 && f.n == 2, "existing file damaged: %s", err);
  st_close(&f);
  unlink(path);

#ifdef __linux__
  // Out of space: /dev/full makes the data write fail; the temporary file
  // lives in the target's directory, so use a directory we cannot write to
  // only if running as non-root. Instead, point at a path inside /proc,
  // where creating the temporary file fails.
  CHECK(st_write("/proc/nope.safetensors", 2, ts, err, sizeof err) < 0 &&
        strstr(err, "/proc/nope.safetensors: cannot create temporary file"), "got: %s", err);
#endif
}

// ---------------------------------------------------------------------------

static void write_corpus(const char *cdir) {
  char err[512], p[1024];
  float f32[6] = {1, 2, 3, 4, 5, 6};
  uint16_t bf[2] = {0x3f80, 0x4000};
  int64_t i64 = 7;
  int64_t s23[2] = {2, 3}, s2[1] = {2}, s0[2] = {0, 4};
  StTensor a[3] = {mk("w", "F32", 2, s23, f32), mk("b", "BF16", 1, s2, bf), mk("n", "I64", 0, NULL, &i64)};
  snprintf(p, sizeof p, "%s/three.safetensors", cdir);
  if (st_write(p, 3, a, err, sizeof err)) fprintf(stderr, "%s\n", err);
  StTensor z[2] = {mk("empty", "U8", 2, s0, NULL), mk("mask", "BOOL", 1, s2, "\1\0")};
  snprintf(p, sizeof p, "%s/zero.safetensors", cdir);
  if (st_write(p, 2, z, err, sizeof err)) fprintf(stderr, "%s\n", err);
  snprintf(p, sizeof p, "%s/none.safetensors", cdir);
  if (st_write(p, 0, NULL, err, sizeof err)) fprintf(stderr, "%s\n", err);
  // One with metadata and unusual spacing, written by hand.
  const char *h = "{\"__metadata__\":{\"format\":\"pt\"}, \"x.y\" : {\"dtype\":\"F16\",\"shape\":[1,2],"
                  "\"data_offsets\":[0,4]}}";
  size_t hl = strlen(h), pad = (8 - hl % 8) % 8;
  snprintf(p, sizeof p, "%s/meta.safetensors", cdir);
  FILE *fp = fopen(p, "wb");
  if (fp) {
    uint64_t n = hl + pad;
    for (int i = 0; i < 8; i++) fputc((int)(n >> (8 * i)) & 0xff, fp);
    fputs(h, fp);
    for (size_t i = 0; i < pad; i++) fputc(' ', fp);
    fwrite("\0\x3c\0\xbc", 1, 4, fp);
    fclose(fp);
  }
}

static void rm_dir(void) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[1024];
  while (d && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

int main(int argc, char **argv) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/test_safetensors.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 2;
  }
  test_roundtrip();
  test_empty_and_many();
  test_large_numbers();
  test_malformed();
  test_files();
  rm_dir();
  if (argc == 3 && strcmp(argv[1], "--corpus") == 0) write_corpus(argv[2]);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
