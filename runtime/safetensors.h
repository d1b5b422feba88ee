// safetensors.h — validated safetensors reader (mmap) and atomic writer.
// Self-contained (libc, POSIX, cJSON; files.c for out_write): used by fluxcc
// and copied into every emitted project.
#ifndef SAFETENSORS_H
#define SAFETENSORS_H

#include "files.h"   // st_write writes by out_write's rule, as every output file is written

#include <stddef.h>
#include <stdint.h>

#define ST_MAXDIM 8
typedef struct {
  char *name;
  char dtype[8];           // as written in the file ("BF16", "F32", "I64", ...)
  int ndim;
  int64_t shape[ST_MAXDIM];
  uint64_t begin, end;     // byte offsets into the data section
  const void *data;        // points into the mapping (reader) or user memory (writer)
} StTensor;

typedef struct {
  char *path;
  void *map;
  size_t size;
  int n;
  StTensor *t;             // sorted by name
} StFile;

// Both return 0 on success; on failure -1 and a one-line message naming the
// file (and key) in err.
int st_open(StFile *f, const char *path, char *err, size_t errlen);
void st_close(StFile *f);
StTensor *st_find(StFile *f, const char *name);
int st_parse(StFile *f, const void *buf, size_t size, const char *path, char *err, size_t errlen);
// Several files read as one: a checkpoint's shards, named by the Hugging Face
// index (`model.safetensors.index.json`: its "weight_map" of key -> file, the
// files beside it), or files given one by one. A key in two files, or not in
// the file the index names, is an error naming both.
#define ST_MAXFILES 64
typedef struct {
  int n;
  StFile f[ST_MAXFILES];
  int given;               // paths added (an index counts once)
  char first[512];         // the first of them
  char label[600];         // what to call the set in messages: "FIRST" or "FIRST (+ N more)"
} StSet;
int st_set_add(StSet *s, const char *path, char *err, size_t errlen);  // a .safetensors or an index .json
StTensor *st_set_find(StSet *s, const char *name, int *file);   // *file: the index in s->f of the file holding it
void st_set_close(StSet *s);
int st_write(const char *path, int n, const StTensor *ts, char *err, size_t errlen);
int st_item_size(const char *dtype);  // -1 if unknown

#endif
