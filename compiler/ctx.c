// ctx.c — a compilation's context: made empty, and freed with all it owns
// (the graph, the source files, the arena). Above graph.c and diag.c, so
// neither needs the other for this.
#include "fluxcc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctx_init(Ctx *c) {
  memset(c, 0, sizeof *c);
  c->err = stderr;
  c->max_errors = 20;
}

void ctx_free(Ctx *c) {
  graph_free(&c->g);
  free(c->files.v);
  arena_free(&c->arena);
}
