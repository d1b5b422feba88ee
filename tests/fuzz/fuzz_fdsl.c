// fuzz_fdsl.c — libFuzzer target: any bytes as a model source go through the
// scanner, parser and elaborator. Diagnostics are fine; crashes, leaks and
// sanitizer reports are not.
#include "fluxcc.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;  // a NUL inside just ends the source early
  Ctx c;
  ctx_init(&c);
  FILE *devnull = fopen("/dev/null", "w");
  c.err = devnull;
  c.no_include = 1;
  elaborate_source(&c, "fuzz.fdsl", text);
  ctx_free(&c);
  fclose(devnull);
  free(text);
  return 0;
}
