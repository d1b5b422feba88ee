// diag.c — source files and diagnostics in the form
//   file:line:col: error: message
//     source line
//     ^~~~
// Locations are offsets into one space shared by all files (see fluxcc.h).
#include "fluxcc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void diag_fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fluxcc: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(2);
}

static int add_file(Ctx *c, const char *path, char *text, int len) {
  size_t r = c->root ? strlen(c->root) : 0;
  const char *name = r && !strncmp(path, c->root, r) && path[r] ? path + r : path;
  SrcFile f = {arena_strdup(&c->arena, path), arena_strdup(&c->arena, name), text, len, c->next_base};
  c->next_base += len + 1;  // +1 so an end-of-file location belongs to the file
  vec_push(c->files, f);
  return c->files.n - 1;
}

int diag_add_source(Ctx *c, const char *name, const char *text) {
  size_t n = strlen(text);
  return add_file(c, name, arena_strndup(&c->arena, text, n), (int)n);
}

int diag_load_file(Ctx *c, const char *path, int req) {
  if (req < 0 && !c->root) {  // the model: "examples/" of examples/flux.fdsl
    const char *slash = strrchr(path, '/');
    c->root = slash ? arena_strndup(&c->arena, path, (size_t)(slash - path + 1)) : "";
  }
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    diag_error(c, req, req, "cannot open '%s': %s", path, strerror(errno));
    return -1;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 > cap) {
      cap = cap ? 2 * cap : 65536;
      buf = xrealloc(buf, cap);
    }
    size_t k = fread(buf + n, 1, cap - n - 1, fp);
    n += k;
    if (k == 0) break;
  }
  int bad = ferror(fp);
  fclose(fp);
  if (bad || n > (1u << 28)) {
    free(buf);
    diag_error(c, req, req, "cannot read '%s'%s", path, bad ? "" : ": file too large");
    return -1;
  }
  char *text = arena_strndup(&c->arena, buf, n);
  free(buf);
  if (memchr(text, 0, n)) {
    int fi = add_file(c, path, text, (int)n);
    int off = (int)((char *)memchr(text, 0, n) - text);
    diag_error(c, c->files.v[fi].base + off, -1, "NUL byte in source file");
    return -1;
  }
  return add_file(c, path, text, (int)n);
}

static SrcFile *file_of(Ctx *c, int loc) {
  for (int i = c->files.n - 1; i >= 0; i--)
    if (loc >= c->files.v[i].base && loc <= c->files.v[i].base + c->files.v[i].len)
      return &c->files.v[i];
  return NULL;
}

// line (1-based), column (1-based, in bytes) and the start of the line
static void line_col(SrcFile *f, int off, int *line, int *col, int *bol) {
  int l = 1, b = 0;
  for (int i = 0; i < off && i < f->len; i++)
    if (f->text[i] == '\n') l++, b = i + 1;
  *line = l;
  *col = off - b + 1;
  *bol = b;
}

const char *diag_where(Ctx *c, int loc, char *buf, size_t n) {
  SrcFile *f = file_of(c, loc);
  if (!f) {
    snprintf(buf, n, "fluxcc");
    return buf;
  }
  int line, col, bol;
  line_col(f, loc - f->base, &line, &col, &bol);
  snprintf(buf, n, "%s:%d:%d", f->name, line, col);
  return buf;
}

static void vreport(Ctx *c, const char *kind, int loc, int end, const char *fmt, va_list ap) {
  FILE *out = c->err ? c->err : stderr;
  SrcFile *f = loc >= 0 ? file_of(c, loc) : NULL;
  if (!f) {
    fprintf(out, "fluxcc: %s: ", kind);
    vfprintf(out, fmt, ap);
    fprintf(out, "\n");
    return;
  }
  int off = loc - f->base, line, col, bol;
  line_col(f, off, &line, &col, &bol);
  fprintf(out, "%s:%d:%d: %s: ", f->path, line, col, kind);
  vfprintf(out, fmt, ap);
  fprintf(out, "\n");
  int eol = bol;
  while (eol < f->len && f->text[eol] != '\n') eol++;
  fprintf(out, "  %.*s\n  ", eol - bol, f->text + bol);
  for (int i = bol; i < off; i++) fputc(f->text[i] == '\t' ? '\t' : ' ', out);
  int e = end - f->base;
  if (end < 0 || e > eol) e = eol;
  fputc('^', out);
  for (int i = off + 1; i < e; i++) fputc('~', out);
  fputc('\n', out);
}

void diag_error(Ctx *c, int loc, int end, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(c, "error", loc, end, fmt, ap);
  va_end(ap);
  c->nerrors++;
}

void diag_note(Ctx *c, int loc, int end, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(c, "note", loc, end, fmt, ap);
  va_end(ap);
}

void ctx_init(Ctx *c) {
  memset(c, 0, sizeof *c);
  c->err = stderr;
  c->max_errors = 20;
}

void ctx_free(Ctx *c) {
  graph_free(&c->g);
  free(c->files.v);
  arena_free(&c->arena);
}
