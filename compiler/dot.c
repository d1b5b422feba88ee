// dot.c — pictures: the tensor graph, the schedule and a project's records
// as graphviz `dot` text (--format dot). The text is a function of its input
// alone (no pointers, no times, nodes and edges in a fixed order), so a golden
// test can diff it; `make pictures` renders it to SVG where dot is installed.
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

// "512 B", "12.0 KiB", "13.5 MiB"
static const char *bytes_str(double b, char *buf, size_t n) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, u++;
  if (u == 0) snprintf(buf, n, "%.0f B", b);
  else snprintf(buf, n, "%.1f %s", b, unit[u]);
  return buf;
}

// "980 FLOP", "24.96 kFLOP", "1.21 GFLOP"
static const char *flops_str(double f, char *buf, size_t n) {
  static const char *const unit[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (f >= 1000 && u < 5) f /= 1000, u++;
  if (u == 0) snprintf(buf, n, "%.0f FLOP", f);
  else snprintf(buf, n, "%.2f %sFLOP", f, unit[u]);
  return buf;
}

static const char *plural(int n, const char *one, const char *many) { return n == 1 ? one : many; }

// s inside a dot string: quotes and backslashes escaped
static void dot_text(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', out);
    fputc(*s, out);
  }
}

static const char header[] =
  "  graph [fontname=\"Helvetica\", fontsize=12, labelloc=t, nodesep=0.25, ranksep=0.35];\n"
  "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n"
  "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n";

//
// --dump graph --format dot: one node per graph node, an edge per operand.
//
void dot_graph(Ctx *c, const char *title, FILE *out) {
  Graph *g = &c->g;
  char sh[160], where[256];
  fprintf(out, "digraph graph_ {\n  graph [label=\"");
  dot_text(out, title);
  fprintf(out, ": %d node%s, %d buffer%s, %d output%s\"];\n%s", g->nodes.n, plural(g->nodes.n, "", "s"), g->bufs.n,
          plural(g->bufs.n, "", "s"), g->outs.n, plural(g->outs.n, "", "s"), header);
  for (int i = 0; i < g->nodes.n; i++) {
    Node *x = &g->nodes.v[i];
    shape_str(&x->shape, sh, sizeof sh);
    int kind = op_kind[x->op];
    const char *style = kind == K_REDUCE ? "fillcolor=\"#fdd9b5\""
                      : kind == K_MOVE ? "fillcolor=\"#eeeeee\""
                      : kind == K_CONST ? "shape=plain, style=\"\""
                      : "";
    if (x->op == OP_LOAD) style = g->bufs.v[x->buf].kind != BUF_INPUT ? "shape=note, fillcolor=\"#f2f2f2\"" : "shape=ellipse, fillcolor=\"#dbe9f6\"";
    fprintf(out, "  n%d [%s%slabel=\"%%%d %s %s%s", i, style, *style ? ", " : "", i, op_name[x->op], dtype_name[x->dt], sh);
    if (x->op == OP_LOAD) fprintf(out, "\\n"), dot_text(out, g->bufs.v[x->buf].name);
    if (x->op == OP_CONST) fprintf(out, "\\n%.9g", x->c);
    fprintf(out, "\", tooltip=\"");
    dot_text(out, diag_where(c, x->loc, where, sizeof where));
    fprintf(out, "\"];\n");
    for (int k = 0; k < 3 && x->src[k] >= 0; k++) fprintf(out, "  n%d -> n%d;\n", x->src[k], i);
  }
  for (int i = 0; i < g->outs.n; i++) {
    fprintf(out, "  out%d [shape=ellipse, peripheries=2, fillcolor=\"#d5f0d5\", label=\"output ", i);
    dot_text(out, g->outs.v[i].name);
    fprintf(out, "\"];\n  n%d -> out%d;\n", g->outs.v[i].node, i);
  }
  fprintf(out, "}\n");
}

//
// --dump schedule --format dot: one node per launch (name, method and opts,
// FLOPs and bytes, the fused ops, the weights it reads), an edge per buffer
// from the launch that writes it to each launch that reads it.
//
static void buf_label(Schedule *s, int b, FILE *out) {
  SBuf *x = &s->bufs.v[b];
  char sh[160], by[32];
  shape_str(&x->shape, sh, sizeof sh);
  if (x->name) dot_text(out, x->name);
  else fprintf(out, "buf%d", b);
  fprintf(out, " %s%s\\n%s", dtype_name[x->dt], sh, bytes_str((double)x->bytes, by, sizeof by));
}

// the kernel's ops but loads, index math and the store, in order: "cast mul reduce_sum add cast"
static void fused_ops(Kernel *k, FILE *out) {
  int shown = 0;
  for (int i = 0; i < k->ops.n; i++) {
    KOp *o = &k->ops.v[i];
    const char *name = o->op < OP_COUNT ? op_name[o->op] : o->op == KO_ACC ? op_name[(int)o->c] : NULL;
    if (!name || o->op == OP_CONST) continue;
    fprintf(out, "%s%s", shown == 0 ? "\\lfused: " : shown % 8 == 0 ? "\\l  " : " ", name);
    shown++;
  }
}

// the parameters it reads: "weights: img_in.weight img_in.bias"
static void weights(Schedule *s, const Launch *l, FILE *out) {
  int shown = 0;
  for (int a = 1; a < l->args.n; a++) {
    int b = l->args.v[a].buf, seen = 0;
    for (int j = 1; j < a; j++) seen |= l->args.v[j].buf == b;
    if (seen || s->bufs.v[b].kind != RT_PARAM) continue;
    fprintf(out, "%s", shown == 0 ? "\\lweights: " : shown % 2 == 0 ? "\\l  " : " ");
    dot_text(out, s->bufs.v[b].name);
    shown++;
  }
}

void dot_schedule(Ctx *c, Schedule *s, const char *title, const Method *method, FILE *out) {
  char where[256], by[32], fl[32], opt[64];
  int *writer = xcalloc((size_t)s->bufs.n + 1, sizeof *writer);
  for (int b = 0; b < s->bufs.n; b++) writer[b] = -1;
  fprintf(out, "digraph schedule {\n  graph [label=\"");
  dot_text(out, title);
  fprintf(out, ": %d launch%s of %d unique kernel%s, method %s; activation arena %s\"];\n%s", s->l.n, plural(s->l.n, "", "es"),
          s->k.n, plural(s->k.n, "", "s"), method->name, bytes_str((double)s->arena_bytes, by, sizeof by), header);
  for (int b = 0; b < s->bufs.n; b++) {
    if (s->bufs.v[b].kind != RT_INPUT) continue;
    fprintf(out, "  b%d [shape=ellipse, fillcolor=\"#dbe9f6\", label=\"input ", b);
    buf_label(s, b, out);
    fprintf(out, "\"];\n");
  }
  for (int i = 0; i < s->l.n; i++) {
    const Launch *l = &s->l.v[i];
    Kernel *k = &s->k.v[l->kernel];
    const char *m = (s->tuned ? s->tuned[l->kernel].method : method)->name;
    const char *fill = k->tc_dt >= 0 ? "#f7c6c6" : k->red_op >= 0 ? "#fdd9b5" : "#d5f0d5";
    fprintf(out, "  k%d [fillcolor=\"%s\", label=\"#%d %s (kernel %d)\\l%s", i, fill, i, k->name, l->kernel, m);
    for (int o = 0; o < k->nopts; o++) opt_str(&k->opts[o], opt, sizeof opt), fprintf(out, "%s%s", o ? " " : ": ", opt);
    fprintf(out, "\\l%s, %s", flops_str((double)k->flops, fl, sizeof fl), bytes_str((double)k->bytes, by, sizeof by));
    fused_ops(k, out);
    weights(s, l, out);
    fprintf(out, "\\l");
    dot_text(out, diag_where(c, l->loc, where, sizeof where));
    fprintf(out, "\\l\"];\n");
    for (int a = 1; a < l->args.n; a++) {
      int b = l->args.v[a].buf, seen = 0;
      for (int j = 1; j < a; j++) seen |= l->args.v[j].buf == b;
      int kind = s->bufs.v[b].kind;
      if (seen || kind == RT_PARAM) continue;
      if (kind == RT_INPUT) fprintf(out, "  b%d -> k%d [label=\"", b, i);
      else if (writer[b] >= 0) fprintf(out, "  k%d -> k%d [label=\"", writer[b], i);
      else continue;   // read before written: not in a valid schedule
      buf_label(s, b, out);
      fprintf(out, "\"];\n");
    }
    writer[l->args.v[0].buf] = i;
  }
  for (int b = 0; b < s->bufs.n; b++) {
    if (s->bufs.v[b].kind != RT_OUTPUT || writer[b] < 0) continue;
    fprintf(out, "  b%d [shape=ellipse, peripheries=2, fillcolor=\"#d5f0d5\", label=\"output ", b);
    buf_label(s, b, out);
    fprintf(out, "\"];\n  k%d -> b%d;\n", writer[b], b);
  }
  fprintf(out, "}\n");
  free(writer);
}

//
// fluxcc report DIR --format dot: one node per unique kernel (name, method
// and opts, launches, FLOPs and bytes per forward, the measured time and its
// share), an edge u -> v labeled with how often a launch of u is followed by
// one of v: the forward's path through its kernels.
//

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

int dot_report(const struct cJSON *root, FILE *out) {
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "kernels"), *k;
  int nu = cJSON_GetArraySize(ks), nl = (int)json_num(root, "launches");
  if (nl < 0 || nl > 100000000) nl = 0;
  int *at = xcalloc((size_t)nl + 1, sizeof *at);   // launch -> unique kernel
  for (int i = 0; i < nl; i++) at[i] = -1;
  double total_us = 0, total_flops = 0, max_us = 0, max_flops = 0;
  int u = 0;
  cJSON_ArrayForEach(k, ks) {
    const cJSON *site, *sites = cJSON_GetObjectItemCaseSensitive(k, "launch_sites");
    int n = cJSON_GetArraySize(sites);
    cJSON_ArrayForEach(site, sites) {
      int l = (int)json_num(site, "launch");
      if (l >= 0 && l < nl) at[l] = u;
    }
    double us = json_num(cJSON_GetObjectItemCaseSensitive(k, "chosen"), "min_us") * n, f = json_num(k, "flops") * n;
    total_us += us, total_flops += f;
    max_us = us > max_us ? us : max_us, max_flops = f > max_flops ? f : max_flops;
    u++;
  }
  bool measured = total_us > 0;
  char by[32], fl[32];
  fprintf(out, "digraph report {\n  graph [label=\"");
  dot_text(out, json_str(root, "model"));
  fprintf(out, ": %s, method %s, %d launch%s of %d unique kernel%s", json_str(root, "target"), json_str(root, "method"), nl,
          plural(nl, "", "es"), nu, plural(nu, "", "s"));
  if (measured) fprintf(out, "; measured on "), dot_text(out, json_str(root, "device"));
  fprintf(out, "\"];\n%s", header);
  u = 0;
  cJSON_ArrayForEach(k, ks) {
    int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(k, "launch_sites"));
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(k, "chosen"), *op;
    double us = json_num(ch, "min_us"), f = json_num(k, "flops") * n;
    double share = measured ? us * n / total_us : total_flops > 0 ? f / total_flops : 0;
    // white to orange by time (FLOPs when nothing was measured), the heaviest kernel darkest
    double heat = measured ? us * n / max_us : max_flops > 0 ? f / max_flops : 0;
    int g = 255 - (int)(heat * 120 + 0.5), b = 255 - (int)(heat * 200 + 0.5);
    fprintf(out, "  u%d [fillcolor=\"#ff%02x%02x\", label=\"%d ", u, g, b, u);
    dot_text(out, json_str(k, "name"));
    fprintf(out, " x%d\\l", n);
    dot_text(out, ch ? json_str(ch, "method") : json_str(k, "method"));
    int o = 0;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(k, "opts")) {
      fprintf(out, "%s", o++ ? " " : ": ");
      dot_text(out, json_str(op, "op"));
      fprintf(out, "(%d,%d)", (int)json_num(op, "axis"), (int)json_num(op, "amount"));
    }
    fprintf(out, "\\l%s, %s per forward\\l", flops_str(json_num(k, "flops") * n, fl, sizeof fl), bytes_str(json_num(k, "bytes") * n, by, sizeof by));
    if (measured) fprintf(out, "%.2f us x %d = %.1f%% of the kernel time\\l", us, n, 100 * share);
    else fprintf(out, "%.1f%% of the FLOPs\\l", 100 * share);
    fprintf(out, "\"];\n");
    u++;
  }
  // consecutive launches (u, v) as u * nu + v, sorted and counted
  int64_t *pairs = xcalloc((size_t)nl + 1, sizeof *pairs);
  int np = 0;
  for (int i = 0; i + 1 < nl; i++)
    if (at[i] >= 0 && at[i + 1] >= 0) pairs[np++] = (int64_t)at[i] * nu + at[i + 1];
  qsort(pairs, (size_t)np, sizeof *pairs, cmp_i64);
  for (int i = 0, j; i < np; i = j) {
    for (j = i; j < np && pairs[j] == pairs[i]; j++) {}
    fprintf(out, "  u%d -> u%d", (int)(pairs[i] / nu), (int)(pairs[i] % nu));
    if (j - i > 1) fprintf(out, " [label=\"x%d\"]", j - i);
    fprintf(out, ";\n");
  }
  fprintf(out, "}\n");
  free(pairs);
  free(at);
  return 0;
}
