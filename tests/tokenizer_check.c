// tokenizer_check.c — the runtime's tokenizers against expected ids.
//
//   tokenizer_check clip DIR CASES.json   CASES: {"cases": [{"prompt", "ids"}]},
//                                         ids ending with the end token, the
//                                         padding up to 77 implied (the same id)
//   tokenizer_check clip DIR -p PROMPT    print the 77 ids of one prompt
//
// Prints each disagreement (up to 10 in full) and a count; exit 1 if any.
#include "clip_tokenizer.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 77 };

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void show(const char *what, const int32_t *ids, int n) {
  printf("  %s:", what);
  for (int i = 0; i < n; i++) printf(" %d", ids[i]);
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: tokenizer_check clip DIR CASES.json | tokenizer_check clip DIR -p PROMPT\n");
    return 2;
  }
  char err[512];
  ClipTokenizer *t = clip_tok_open(argv[2], err, sizeof err);
  if (!t) { fprintf(stderr, "tokenizer_check: %s\n", err); return 2; }
  int32_t got[N], want[N];
  if (!strcmp(argv[3], "-p")) {
    int rc = argc == 5 ? clip_tok_encode(t, argv[4], got, N, err, sizeof err) : -1;
    if (rc) fprintf(stderr, "tokenizer_check: %s\n", argc == 5 ? err : "-p wants a prompt");
    else show("ids", got, N);
    clip_tok_close(t);
    return rc ? 2 : 0;
  }
  char *text = slurp(argv[3]);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  cJSON *cases = cJSON_GetObjectItemCaseSensitive(j, "cases");
  free(text);
  if (!cJSON_IsArray(cases)) { fprintf(stderr, "tokenizer_check: %s: no \"cases\" array\n", argv[3]); return 2; }
  int total = 0, bad = 0;
  cJSON *c;
  cJSON_ArrayForEach(c, cases) {
    cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "prompt"), *ids = cJSON_GetObjectItemCaseSensitive(c, "ids");
    int n = cJSON_GetArraySize(ids);
    if (!cJSON_IsString(p) || n < 2 || n > N) { fprintf(stderr, "tokenizer_check: case %d is malformed\n", total); return 2; }
    for (int i = 0; i < N; i++) want[i] = i < n ? (int32_t)cJSON_GetArrayItem(ids, i)->valuedouble : want[n - 1];
    total++;
    if (clip_tok_encode(t, p->valuestring, got, N, err, sizeof err)) {
      if (bad++ < 10) printf("case %d: %s\n", total - 1, err);
      continue;
    }
    if (!memcmp(got, want, sizeof got)) continue;
    if (bad++ < 10) {
      char *js = cJSON_PrintUnformatted(p);
      printf("case %d differs: prompt (JSON) %s\n", total - 1, js);
      free(js);
      show("want", want, N), show("got ", got, N);
    }
  }
  printf("%d of %d prompts tokenized as expected (vocabulary %d)\n", total - bad, total, clip_tok_vocab_size(t));
  cJSON_Delete(j);
  clip_tok_close(t);
  return bad ? 1 : 0;
}
