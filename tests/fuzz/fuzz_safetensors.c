// fuzz_safetensors.c — libFuzzer target for the safetensors reader.
//
//   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iruntime
//         tests/fuzz/fuzz_safetensors.c runtime/safetensors.c runtime/files.c -lcjson
//   ./a.out tests/fuzz/corpus_safetensors -max_total_time=180
//
#include "safetensors.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StFile f;
  char err[512];
  err[0] = 0;
  if (st_parse(&f, data, size, "fuzz.safetensors", err, sizeof err) == 0) {
    // Every tensor must lie inside the buffer, cover exactly its bytes and be
    // findable by name; touch every byte so ASan checks the ranges.
    unsigned sum = 0;
    for (int i = 0; i < f.n; i++) {
      StTensor *t = &f.t[i];
      if (st_find(&f, t->name) != t) abort();
      if (st_item_size(t->dtype) < 0) abort();
      const uint8_t *p = t->data;
      if (p < data || p + (t->end - t->begin) > data + size) abort();
      for (uint64_t k = 0; k < t->end - t->begin; k++) sum += p[k];
    }
    if (f.map != NULL || f.size != size) abort();
    (void)sum;
  } else {
    // Failure: a one-line message naming the file, and *f zeroed.
    if (strncmp(err, "fuzz.safetensors: ", 18) != 0 || strchr(err, '\n')) abort();
    if (f.t || f.path || f.n || f.map) abort();
  }
  st_close(&f);
  return 0;
}
