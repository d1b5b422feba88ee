// files.h — the one rule every output file is written by (files.c): fluxcc's
// and the binary's. Self-contained (libc, POSIX): used by fluxcc and copied
// into every emitted project.
#ifndef FILES_H
#define FILES_H

#include <stdarg.h>
#include <stddef.h>

// Every output file (fluxcc's and the binary's): the concatenated parts, renamed
// over a regular file (a symlink's target), written through a FIFO or character
// device, refused for anything else. 0, or -1 and a message naming path in err.
int out_write(const char *path, int nparts, const void *const *parts, const size_t *lens, char *err, size_t errlen);
int out_check(const char *path, char *err, size_t errlen);  // before the work: can out_write(path) succeed
const char *out_said(const char *path, int ntensors, char *buf, size_t n);  // "W (80 tensors, 932488 bytes)", into buf

// "PREFIX: message" into err (as far as it fits); -1, to return. The one
// formatter of out_write's and the safetensors reader's messages.
int err_vprefix(char *err, size_t errlen, const char *prefix, const char *fmt, va_list ap);

#endif
