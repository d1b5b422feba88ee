// arena.c — bump allocation for one compilation, checked heap helpers, and
// the file helpers every stage uses (open_regular, make_dirs).
#include "fluxcc.h"

#include <time.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// FLUXCC_FAULT, the test switches: comma-separated items, those with "=N" (N
// from 1 to 1000000) and those without, as `known` lists them. 1 where `name`
// is there (its N in *n), 0 where not; -1 (said on stderr) when the variable
// holds anything else.
int fault_setting(const char *name, int *n) {
  static const struct { const char *name; bool valued; } known[] = {
    {"write-fail", true}, {"wrong-every", true}, {"no-barrier-every", true}, {"swap-args-every", true},
    {"bad-source-every", true}, {"slow-build-every", true},
    {"slow-launch-every", true}, {"lucky-every", true}, {"oob-every", true}, {"warm-child-dies", true}, {"first-launch-us", true}, {"build-rate-us", true}, {"fake-time", false}, {"no-xgboost", false}, {"no-batch", false}, {"pocl-header", false}};
  enum { NKNOWN = sizeof known / sizeof *known };
  const char *f = getenv("FLUXCC_FAULT");
  int found = 0;
  for (const char *p = f; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
    char item[64];
    size_t len = strcspn(p, ",");
    snprintf(item, sizeof item, "%.*s", (int)len, p);
    char *eq = strchr(item, '=');
    if (eq) *eq = 0;
    int v = 0;
    size_t k = 0;
    while (k < NKNOWN && (strcmp(item, known[k].name) || !eq != !known[k].valued)) k++;
    if (len >= sizeof item || k == NKNOWN || (eq && nb_parse_int(eq + 1, 1, 1000000, &v))) {
      fprintf(stderr, "fluxcc: error: FLUXCC_FAULT='%s': '%.*s' is not a test switch (", f, (int)len, p);
      for (size_t i = 0; i < NKNOWN; i++) fprintf(stderr, "%s%s%s", i ? ", " : "", known[i].name, known[i].valued ? "=N" : "");
      fprintf(stderr, "; N from 1 to 1000000)\n");
      return -1;
    }
    if (!strcmp(item, name)) found = 1, *n = v;
  }
  return found;
}

int open_regular(const char *path, int64_t max, int64_t *size, char *why, size_t n) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    snprintf(why, n, "%s", strerror(errno));
    return -1;
  }
  struct stat sb;
  const char *bad = NULL;
  if (fstat(fd, &sb) < 0) bad = strerror(errno);
  else if (S_ISDIR(sb.st_mode)) bad = "is a directory";
  else if (S_ISFIFO(sb.st_mode)) bad = "is a FIFO (pipe), not a regular file";
  else if (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode)) bad = "is a device, not a regular file";
  else if (!S_ISREG(sb.st_mode)) bad = "is not a regular file";
  else if (max >= 0 && sb.st_size > max) {
    snprintf(why, n, "file too large (%lld bytes; at most %lld)", (long long)sb.st_size, (long long)max);
    close(fd);
    return -1;
  }
  if (bad) {
    snprintf(why, n, "%s", bad);
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (size) *size = (int64_t)sb.st_size;
  return fd;
}

struct ArenaBlock {
  ArenaBlock *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) diag_fatal("out of memory (%zu bytes)", n);
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) diag_fatal("out of memory (%zu x %zu bytes)", n, size);
  return p;
}

void str_printf(Str *o, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int w = vsnprintf(o->s ? o->s + o->n : NULL, o->s ? o->cap - o->n : 0, fmt, ap);
    va_end(ap);
    if (o->s && (size_t)w < o->cap - o->n) {
      o->n += (size_t)w;
      return;
    }
    o->cap = o->cap * 2 + (size_t)w + 1024;
    o->s = xrealloc(o->s, o->cap);
  }
}

void *arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  ArenaBlock *b = a->head;
  if (!b || b->used + n > b->cap) {
    size_t cap = n > 65536 ? n : 65536;
    b = malloc(sizeof *b + cap);
    if (!b) diag_fatal("out of memory (%zu bytes)", cap);
    b->next = a->head;
    b->used = 0;
    b->cap = cap;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char probe[1];
  if (!fmt) return arena_strdup(a, "");  // (also quiets a gcc -Wformat false positive)
  int n = vsnprintf(probe, sizeof probe, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void arena_free(Arena *a) {
  for (ArenaBlock *b = a->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  a->head = NULL;
}

double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

// mkdir -p: path and every missing folder above it; 0, or -1 and why in err
int make_dirs(const char *path, char *err, size_t n) {
  char p[4096];
  if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return snprintf(err, n, "%s: path too long", path), -1;
  for (char *q = p + 1;; q++) {
    char ch = *q;
    if (ch && ch != '/') continue;
    *q = 0;
    struct stat st;
    if (mkdir(p, 0755) && errno != EEXIST) return snprintf(err, n, "cannot create directory %s: %s", p, strerror(errno)), -1;
    if (stat(p, &st) || !S_ISDIR(st.st_mode)) return snprintf(err, n, "%s exists and is not a directory", p), -1;
    *q = ch;
    if (!ch) return 0;
  }
}

// a file written as every output is (out_write: atomic over a regular file)
int write_atomic(const char *path, const char *text, size_t n, char *err, size_t en) {
  const void *parts[] = {text};
  return out_write(path, 1, parts, &n, err, en);
}

// A regular file of at most 1 GiB, whole; a FIFO, device or directory is
// refused (errno EINVAL) rather than read forever.
char *read_text(const char *path, size_t *n) {
  char why[256];
  int64_t size;
  int fd = open_regular(path, (int64_t)1 << 30, &size, why, sizeof why);
  if (fd < 0) {
    if (access(path, F_OK) == 0) errno = EINVAL;  // there, but not a file we read
    return NULL;
  }
  size_t cap = (size_t)size + 1, len = 0;
  char *buf = xrealloc(NULL, cap);
  for (;;) {
    if (len + 1 == cap) {
      if (cap > ((size_t)1 << 30)) break;  // it grew past the bound while we read
      buf = xrealloc(buf, cap *= 2);
    }
    ssize_t k = read(fd, buf + len, cap - len - 1);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    len += (size_t)k;
  }
  close(fd);
  buf[len] = 0;
  if (n) *n = len;
  return buf;
}

const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

// the one way fluxcc dies: a message and exit 2 (out of memory, an internal
// error, a refusal with nothing to clean up)
void diag_fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fluxcc: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(2);
}
