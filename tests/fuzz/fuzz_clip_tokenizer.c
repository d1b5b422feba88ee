// fuzz_clip_tokenizer.c — libFuzzer target for CLIP's tokenizer on any prompt.
//
//   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iruntime
//         tests/fuzz/fuzz_clip_tokenizer.c runtime/clip_tokenizer.c runtime/files.c -lcjson -lpcre2-8 -lutf8proc
//   FUZZ_CLIP_DIR=DIR ./a.out CORPUS -max_total_time=180   (DIR: tests/clip_vocab.py's folder)
//
// Each input (bytes up to its first NUL) is a prompt. Invalid UTF-8 must be
// refused with a message; every other prompt must give the start token, ids
// within the vocabulary, and the end token (or CLIP's padding, the same id)
// last, at several lengths, each length's ids the first of the longest's.
#include "clip_tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static ClipTokenizer *tok;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  char err[512];
  const char *dir = getenv("FUZZ_CLIP_DIR");
  if (!dir || !(tok = clip_tok_open(dir, err, sizeof err))) {
    fprintf(stderr, "fuzz_clip_tokenizer: FUZZ_CLIP_DIR: %s\n", dir ? err : "not set");
    exit(2);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  static const int lens[] = {77, 2, 5, 40};
  int32_t full[77], ids[77];
  char err[512];
  for (int l = 0; l < 4; l++) {
    int n = lens[l];
    err[0] = 0;
    if (clip_tok_encode(tok, text, ids, n, err, sizeof err)) {
      if (!strstr(err, "not valid UTF-8") || l) abort();   // the only refusal below 1 MiB, and at every length
      break;
    }
    if (ids[0] != 49406 || ids[n - 1] != 49407) abort();   // start; end or padding last
    for (int i = 1; i < n; i++)
      if (ids[i] < 0 || ids[i] >= clip_tok_vocab_size(tok)) abort();
    if (!l) memcpy(full, ids, sizeof full);
    for (int i = 1; i < n - 1; i++)   // truncating to n keeps the first n - 2 ids as they were
      if (ids[i] != full[i]) abort();
  }
  free(text);
  return 0;
}
