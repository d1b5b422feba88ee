// files.c — the one rule every input file is opened by (in_open, in_read:
// regular files only, so a FIFO or a device is refused by name rather than
// blocking or never ending), the one rule every output file is written by,
// fluxcc's and the binary's (out_write), and the line that confirms one
// (out_said). Outputs:
//
// - a missing path or a regular file: written to a temporary file beside it
//   and renamed over it, so no reader ever sees half a file;
// - a symbolic link: the same for the file it leads to; the link stays;
// - a character device or a FIFO: written through, every error reported
//   (/dev/null discards, /dev/full says "No space left on device");
// - anything else (a directory, a socket, a block device) is refused by name.
//
// Self-contained (libc, POSIX): used by fluxcc and copied into every emitted
// project.
#define _POSIX_C_SOURCE 200809L

#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// "PATH: what went wrong" into err; returns -1
int err_vprefix(char *err, size_t errlen, const char *prefix, const char *fmt, va_list ap) {
  if (!err || errlen == 0) return -1;
  int o = snprintf(err, errlen, "%s: ", prefix);
  if (o >= 0 && (size_t)o < errlen) vsnprintf(err + o, errlen - (size_t)o, fmt, ap);
  return -1;
}

static int out_err(char *err, size_t errlen, const char *path, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int out_err(char *err, size_t errlen, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  err_vprefix(err, errlen, path, fmt, ap);
  va_end(ap);
  return -1;
}

static int write_all(int fd, const void *p, uint64_t n) {
  const unsigned char *b = p;
  while (n > 0) {
    size_t chunk = n > (1u << 30) ? (1u << 30) : (size_t)n;
    ssize_t w = write(fd, b, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (w == 0) { errno = EIO; return -1; }
    b += w;
    n -= (uint64_t)w;
  }
  return 0;
}

int in_open(const char *path, size_t *size, char *why, size_t whylen) {
  // O_NONBLOCK: a FIFO with no writer must not block the open; it is refused below
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) < 0) {
    int e = errno;
    snprintf(why, whylen, "cannot %s: %s", fd < 0 ? "open" : "stat", strerror(e));
    if (fd >= 0) close(fd);
    return -1;
  }
  const char *bad = S_ISREG(sb.st_mode) ? NULL : S_ISDIR(sb.st_mode) ? "is a directory, not a regular file"
                  : S_ISFIFO(sb.st_mode) ? "is a FIFO (pipe), not a regular file"
                  : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "is a device, not a regular file" : "not a regular file";
  if (!bad && (off_t)(size_t)sb.st_size != sb.st_size) bad = "file too large to map";
  if (bad) {
    snprintf(why, whylen, "%s", bad);
    close(fd);
    return -1;
  }
  *size = (size_t)sb.st_size;
  return fd;
}

char *in_read(const char *path, size_t max, size_t *len, char *why, size_t whylen) {
  size_t size;
  int fd = in_open(path, &size, why, whylen);
  if (fd < 0) return NULL;
  char *buf = NULL;
  size_t n = 0;
  const char *bad = size > max ? "too large" : !(buf = malloc(size + 1)) ? "out of memory" : NULL;
  while (!bad && n < size) {   // a file that grows meanwhile is read as far as its size was
    ssize_t got = read(fd, buf + n, size - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) bad = got < 0 ? strerror(errno) : "cut short while being read";
    else n += (size_t)got;
  }
  close(fd);
  if (bad) {
    if (!strcmp(bad, "too large")) snprintf(why, whylen, "larger than %zu MiB (%zu bytes)", max >> 20, size);
    else snprintf(why, whylen, "%s%s", strcmp(bad, "out of memory") ? "read error: " : "", bad);
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

#define OUT_MAX_LINKS 40

// path with its symbolic links followed into real (a file or nothing there); its stat in *st
// (st_mode 0: nothing there). -1 with errno when a link cannot be read or loops.
static int out_resolve(const char *path, char *real, size_t n, struct stat *st) {
  snprintf(real, n, "%s", path);
  for (int hops = 0;; hops++) {
    if (lstat(real, st) < 0) {
      if (errno != ENOENT) return -1;
      memset(st, 0, sizeof *st);
      return 0;
    }
    if (!S_ISLNK(st->st_mode)) return 0;
    char to[4096];
    ssize_t k = readlink(real, to, sizeof to - 1);
    if (hops >= OUT_MAX_LINKS) { errno = ELOOP; return -1; }
    if (k < 0) return -1;
    to[k] = 0;
    const char *slash = strrchr(real, '/');
    char next[8200];
    if (to[0] == '/' || !slash) snprintf(next, sizeof next, "%s", to);
    else snprintf(next, sizeof next, "%.*s/%s", (int)(slash - real), real, to);
    if (strlen(next) + 1 >= n) { errno = ENAMETOOLONG; return -1; }
    memcpy(real, next, strlen(next) + 1);
  }
}

// What path leads to (into real, the file a link names) and how it is
// written (*through: a FIFO or a character device); 0, or -1 with a message
// for what is not an output's.
static int out_target(const char *path, char *real, size_t n, int *through, char *err, size_t errlen) {
  struct stat st;
  if (!*path) return out_err(err, errlen, "\"\"", "an empty path: name a file");
  if (out_resolve(path, real, n, &st) < 0) {
    int e = errno;
    return out_err(err, errlen, path, "cannot follow it: %s", strerror(e));
  }
  struct stat via;  // a link the kernel follows but that names no file: /dev/stdout to a pipe
  if (!st.st_mode && stat(path, &via) == 0 && (S_ISFIFO(via.st_mode) || S_ISCHR(via.st_mode)))
    st = via, snprintf(real, n, "%s", path);
  *through = S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode);
  if (st.st_mode && !*through && !S_ISREG(st.st_mode))
    return out_err(err, errlen, path, "%s: not replaced (an output is a regular file, a FIFO or a character device)",
                  S_ISDIR(st.st_mode) ? "is a directory" : S_ISBLK(st.st_mode) ? "is a block device" :
                  S_ISSOCK(st.st_mode) ? "is a socket" : "is not a regular file");
  return 0;
}

// Before a long run: whether out_write(path) can succeed as far as can be
// told now (the path's kind, the folder it is created in), so that a bad
// output is said before the work and not after it.
int out_check(const char *path, char *err, size_t errlen) {
  char real[4096];
  int through;
  if (out_target(path, real, sizeof real, &through, err, errlen)) return -1;
  if (through) return 0;
  char dir[4096];
  const char *slash = strrchr(real, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == real) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - real), real);
  struct stat st;
  if (stat(dir, &st) < 0) {
    int e = errno;
    return out_err(err, errlen, path, "its folder %s: %s", dir, strerror(e));
  }
  if (!S_ISDIR(st.st_mode)) return out_err(err, errlen, path, "%s is not a folder", dir);
  if (access(dir, W_OK | X_OK) < 0) {
    int e = errno;
    return out_err(err, errlen, path, "cannot create a file in %s: %s", dir, strerror(e));
  }
  return 0;
}

int out_write(const char *path, int nparts, const void *const *parts, const size_t *lens, char *err, size_t errlen) {
  char real[4096];
  int through;
  if (out_target(path, real, sizeof real, &through, err, errlen)) return -1;
  char *tmp = NULL;
  int fd;
  if (through) fd = open(real, O_WRONLY | O_CLOEXEC);   // a FIFO waits for its reader, as `cat > fifo` does
  else {
    size_t pl = strlen(real);
    tmp = calloc(pl + 16, 1);
    if (!tmp) return out_err(err, errlen, path, "out of memory");
    memcpy(tmp, real, pl);
    memcpy(tmp + pl, ".tmpXXXXXX", 11);
    fd = mkstemp(tmp);
  }
  if (fd < 0) {
    int e = errno;
    out_err(err, errlen, path, "cannot %s %s: %s", through ? "open" : "create temporary file", through ? real : tmp, strerror(e));
    free(tmp);
    return -1;
  }
  // mkstemp creates 0600; give the result the usual mode for new files.
  mode_t um = umask(0);
  umask(um);
  const char *what = "cannot set mode of";
  int rc = through ? 0 : fchmod(fd, 0666 & ~um);
  if (rc == 0) what = "cannot write";
  for (int i = 0; i < nparts && rc == 0; i++)
    if (lens[i]) rc = write_all(fd, parts[i], lens[i]);
  int e = errno;
  if (close(fd) < 0 && rc == 0) {
    rc = -1;
    e = errno;
    what = "cannot close";
  }
  if (rc < 0 && through) out_err(err, errlen, path, "%s it: %s", what, strerror(e));
  else if (rc < 0) {
    unlink(tmp);
    out_err(err, errlen, path, "%s temporary file %s: %s", what, tmp, strerror(e));
  } else if (!through && rename(tmp, real) < 0) {
    e = errno;
    rc = -1;
    unlink(tmp);
    out_err(err, errlen, path, "cannot rename temporary file %s onto %s: %s", tmp, real, strerror(e));
  }
  free(tmp);
  return rc;
}

// What an output now holds, as the confirmation line says it (fluxcc init/run,
// ./flux --out): "W.safetensors (80 tensors, 932488 bytes)"
const char *out_said(const char *path, int ntensors, char *buf, size_t n) {
  struct stat st;
  const char *s = ntensors == 1 ? "" : "s";
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    snprintf(buf, n, "%s (%d tensor%s, written through to a %s)", path, ntensors, s, S_ISFIFO(st.st_mode) ? "FIFO" : "device");
  else snprintf(buf, n, "%s (%d tensor%s, %lld bytes)", path, ntensors, s, stat(path, &st) ? -1LL : (long long)st.st_size);
  return buf;
}
