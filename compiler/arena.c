// arena.c — bump allocation for one compilation, plus checked heap helpers.
#include "fluxcc.h"

#include <time.h>

#include <stdlib.h>
#include <string.h>

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
