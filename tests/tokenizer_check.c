// tokenizer_check.c — the runtime's tokenizers (tokenizer.h) against expected ids.
//
//   tokenizer_check clip|t5 DIR CASES.json   CASES: {"n": N, "cases": [{"prompt",
//                                            "ids"}]}: N ids a prompt (77 if no
//                                            "n"); a case with fewer repeats its
//                                            last id (CLIP pads with its end token)
//   tokenizer_check clip|t5 DIR -p PROMPT [N]  print the N (77) ids of one prompt
//
// Prints each disagreement (up to 10 in full) and a count; exit 1 if any,
// 2 for bad usage or input (the message says which).
#include "tokenizer.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXN = 4096 };

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
  if (argc < 4 || argc > 6) {
    fprintf(stderr, "usage: tokenizer_check clip|t5 DIR CASES.json | tokenizer_check clip|t5 DIR -p PROMPT [N]\n");
    return 2;
  }
  char err[1024];
  const TokKind *k = tok_kind(argv[1], argv[2], err, sizeof err);
  void *t = k ? k->open(argv[2], err, sizeof err) : NULL;
  if (!t) { fprintf(stderr, "tokenizer_check: %s\n", err); return 2; }
  static int32_t got[MAXN], want[MAXN];
  int N = 77;
  if (!strcmp(argv[3], "-p")) {
    if (argc == 6) N = atoi(argv[5]);
    int rc = argc >= 5 && N >= 1 && N <= MAXN ? k->encode(t, argv[4], got, N, err, sizeof err) : -1;
    if (rc) fprintf(stderr, "tokenizer_check: %s\n", argc >= 5 ? err : "-p wants a prompt");
    else show("ids", got, N);
    k->close(t);
    return rc ? 2 : 0;
  }
  char *text = slurp(argv[3]);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  cJSON *cases = cJSON_GetObjectItemCaseSensitive(j, "cases");
  free(text);
  if (!cJSON_IsArray(cases)) { fprintf(stderr, "tokenizer_check: %s: no \"cases\" array\n", argv[3]); return 2; }
  cJSON *jn = cJSON_GetObjectItemCaseSensitive(j, "n");
  if (jn) N = cJSON_IsNumber(jn) && jn->valueint >= 1 && jn->valueint <= MAXN ? jn->valueint : -1;
  if (N < 0) { fprintf(stderr, "tokenizer_check: %s: \"n\" must be from 1 to %d\n", argv[3], MAXN); return 2; }
  int total = 0, bad = 0;
  cJSON *c;
  cJSON_ArrayForEach(c, cases) {
    cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "prompt"), *ids = cJSON_GetObjectItemCaseSensitive(c, "ids");
    int n = cJSON_GetArraySize(ids);
    if (!cJSON_IsString(p) || n < 1 || n > N) { fprintf(stderr, "tokenizer_check: case %d is malformed\n", total); return 2; }
    for (int i = 0; i < N; i++) want[i] = i < n ? (int32_t)cJSON_GetArrayItem(ids, i)->valuedouble : want[n - 1];
    total++;
    if (k->encode(t, p->valuestring, got, N, err, sizeof err)) {
      if (bad++ < 10) printf("case %d: %s\n", total - 1, err);
      continue;
    }
    if (!memcmp(got, want, (size_t)N * sizeof *got)) continue;
    if (bad++ < 10) {
      char *js = cJSON_PrintUnformatted(p);
      printf("case %d differs: prompt (JSON) %s\n", total - 1, js);
      free(js);
      show("want", want, N), show("got ", got, N);
    }
  }
  printf("%d of %d prompts tokenized as expected (%s, vocabulary %d)\n", total - bad, total, k->name, k->vocab_size(t));
  cJSON_Delete(j);
  k->close(t);
  return bad ? 1 : 0;
}
