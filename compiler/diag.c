// diag.c — source files and diagnostics in the form
//   file:line:col: error: message
//     source line
//     ^~~~
// Locations are offsets into one space shared by all files (see fluxcc.h).
#include "fluxcc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define MAX_SOURCE (1 << 28)

int diag_load_file(Ctx *c, const char *path, int req) {
  if (req < 0 && !c->root) {  // the model: "examples/" of examples/flux.fdsl
    const char *slash = strrchr(path, '/');
    c->root = slash ? arena_strndup(&c->arena, path, (size_t)(slash - path + 1)) : "";
  }
  char why[256];
  int64_t size;
  int fd = open_regular(path, MAX_SOURCE, &size, why, sizeof why);
  if (fd < 0) {
    diag_error(c, req, req, "cannot open '%s': %s", path, why);
    return -1;
  }
  // read at most MAX_SOURCE + 1 bytes whatever the size said (the file may grow)
  size_t cap = (size_t)size + 4097, n = 0;
  char *buf = xrealloc(NULL, cap);
  int bad = 0;
  for (;;) {
    if (n + 1 == cap) {
      if (cap > MAX_SOURCE) break;
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
    ssize_t k = read(fd, buf + n, cap - n - 1);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) bad = errno;
    if (k <= 0) break;
    n += (size_t)k;
  }
  close(fd);
  if (bad || n > MAX_SOURCE) {
    free(buf);
    diag_error(c, req, req, "cannot read '%s': %s", path, bad ? strerror(bad) : "file too large (at most 256 MiB)");
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

// Text from the input (paths, names, strings) reaches the terminal escaped:
// control bytes and DEL as \xNN; bytes from 0x80 up (UTF-8) as they are.
static void put_escaped(FILE *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch < 0x20 || ch == 0x7f) fprintf(out, "\\x%02x", ch);
    else fputc(ch, out);
  }
}

// At most this many columns of a source line are shown, around the caret.
#define EXCERPT_COLS 120

static void vreport(Ctx *c, const char *kind, int loc, int end, const char *fmt, va_list ap) {
  FILE *out = c->err ? c->err : stderr;
  char msg[2048];
  vsnprintf(msg, sizeof msg, fmt, ap);
  SrcFile *f = loc >= 0 ? file_of(c, loc) : NULL;
  if (!f) {
    fprintf(out, "fluxcc: %s: ", kind);
    put_escaped(out, msg, strlen(msg));
    fprintf(out, "\n");
    return;
  }
  int off = loc - f->base, line, col, bol;
  line_col(f, off, &line, &col, &bol);
  put_escaped(out, f->path, strlen(f->path));
  fprintf(out, ":%d:%d: %s: ", line, col, kind);
  put_escaped(out, msg, strlen(msg));
  fprintf(out, "\n");
  int eol = bol;
  while (eol < f->len && f->text[eol] != '\n') eol++;
  // a window of the line around the caret; control bytes shown as '?' so the caret stays aligned
  int from = bol, to = eol;
  if (to - from > EXCERPT_COLS) {
    from = off - EXCERPT_COLS / 2 > bol ? off - EXCERPT_COLS / 2 : bol;
    to = from + EXCERPT_COLS < eol ? from + EXCERPT_COLS : eol;
    if (to - from < EXCERPT_COLS) from = to - EXCERPT_COLS > bol ? to - EXCERPT_COLS : bol;
  }
  fputs(from > bol ? "  ..." : "  ", out);
  for (int i = from; i < to; i++) {
    unsigned char ch = (unsigned char)f->text[i];
    fputc(ch == '\t' || (ch >= 0x20 && ch != 0x7f) ? ch : '?', out);
  }
  fputs(to < eol ? "...\n  " : "\n  ", out);
  if (from > bol) fputs("   ", out);
  for (int i = from; i < off && i < to; i++) fputc(f->text[i] == '\t' ? '\t' : ' ', out);
  int e = end - f->base;
  if (end < 0 || e > to) e = to;
  fputc('^', out);
  for (int i = off + 1; i < e; i++) fputc('~', out);
  fputc('\n', out);
}

// --max-errors applies to every error (scanner, parser, elaborator): past it,
// errors are counted but not shown, and their notes neither.
void diag_error(Ctx *c, int loc, int end, const char *fmt, ...) {
  c->quiet_notes = c->nerrors >= c->max_errors;
  if (!c->quiet_notes) {
    va_list ap;
    va_start(ap, fmt);
    vreport(c, "error", loc, end, fmt, ap);
    va_end(ap);
  }
  c->nerrors++;
}

void diag_note(Ctx *c, int loc, int end, const char *fmt, ...) {
  if (c->quiet_notes) return;
  va_list ap;
  va_start(ap, fmt);
  vreport(c, "note", loc, end, fmt, ap);
  va_end(ap);
}

// The one way a string from outside (a file name, a device name, a records
// field) enters emitted source: as a C string literal (quotes included), or
// as comment text. Either way it stays on its line and inert: control bytes
// and backslashes are escaped (no newline to start a directive; in a comment
// a backslash is written \x5c, as one at the end would splice the next line
// in), "*/" cannot close a comment, "??" cannot start a trigraph.
void src_escape(Str *o, const char *s, bool literal) {
  if (literal) str_printf(o, "\"");
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\\' && !literal) str_printf(o, "\\x5c");  // never a backslash that could end the line
    else if (ch == '\\' || (literal && ch == '"')) str_printf(o, "\\%c", ch);
    else if (ch == '?' && s[1] == '?') str_printf(o, "?\\");
    else if (!literal && ch == '*' && s[1] == '/') str_printf(o, "*\\");
    else if (ch == '\n') str_printf(o, "\\n");
    else if (ch < 32 || ch == 127) str_printf(o, literal ? "\\%03o" : "\\x%02x", ch);
    else str_printf(o, "%c", ch);
  }
  if (literal) str_printf(o, "\"");
}

// The gist of a compiler's log for a one-line message (NVRTC, PoCL, cc): its
// first 3 error lines ("k.cu(12): error: ...", not NVRTC's count at the end),
// else its first 3 lines, joined by "; "; "" for an empty log.
void log_gist(const char *log, char *err, size_t n) {
  size_t len = 0;
  err[0] = 0;
  for (int pass = 0; pass < 2 && !len; pass++) {
    int taken = 0;
    for (const char *s = log; *s && taken < 3;) {
      size_t l = strcspn(s, "\n");
      while (l && (s[l - 1] == '\r' || s[l - 1] == ' ')) l--;
      const char *t = s;
      while (*t == ' ' && t < s + l) t++;
      bool keep = t < s + l && (pass == 1 || (memmem(t, s + l - t, "error", 5) && !memmem(t, s + l - t, "detected in the", 15)));
      if (keep && len < n) len += snprintf(err + len, n - len, "%s%.*s", taken++ ? "; " : "", (int)(s + l - t), t);
      s += strcspn(s, "\n");
      if (*s) s++;
    }
  }
}
