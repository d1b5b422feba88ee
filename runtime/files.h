// files.h — the one rule every input file is opened by and every output file
// is written by (files.c): fluxcc's and the binary's. Self-contained (libc,
// POSIX): used by fluxcc and copied into every emitted project.
#ifndef FILES_H
#define FILES_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Every input file (weights, tokenizer files, a shard index): opened without
// blocking, refused unless a regular file (a FIFO would block for ever, a
// device never end). The descriptor and the file's size in *size, or -1 with
// what failed in why ("cannot open: ...", "is a FIFO (pipe), not a regular file").
int in_open(const char *path, size_t *size, char *why, size_t whylen);
// A whole small file by in_open's rule (a tokenizer's, a shard index), NUL-
// terminated, its length in *len; NULL with what failed in why (in_open's
// messages, "larger than N MiB (B bytes)", "read error: ...", "out of memory").
char *in_read(const char *path, size_t max, size_t *len, char *why, size_t whylen);

// Every output file (fluxcc's and the binary's): the concatenated parts, renamed
// over a regular file (a symlink's target), written through a FIFO or character
// device, refused for anything else. 0, or -1 and a message naming path in err.
int out_write(const char *path, int nparts, const void *const *parts, const size_t *lens, char *err, size_t errlen);
int out_check(const char *path, char *err, size_t errlen);  // before the work: can out_write(path) succeed
const char *out_said(const char *path, int ntensors, char *buf, size_t n);  // "W (80 tensors, 932488 bytes)", into buf

// "PREFIX: message" into err (as far as it fits); -1, to return. The one
// formatter of out_write's and the safetensors reader's messages.
int err_vprefix(char *err, size_t errlen, const char *prefix, const char *fmt, va_list ap);

#ifdef __cplusplus
}
#endif

#endif
