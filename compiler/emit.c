// emit.c — the project directory: kernels/, schedule.c, (kernel_table.cu),
// the runtime, a Makefile, records.json and provenance.json. Every file is
// written to a temporary name and renamed, so none is ever left half-written,
// and everything but provenance.json is a function of the model and flags.
#include "fluxcc.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime_files.inc"    // const struct { const char *name, *text; } runtime_files[]: runtime/*

#ifndef FLUXCC_COMMIT
#define FLUXCC_COMMIT "unknown"
#endif

// a file of the project, written into the staging directory; the test
// switch FLUXCC_FAULT=write-fail=N makes the Nth write fail as a full disk would
static int write_file(EmitOpts *o, const char *name, const char *text, size_t n) {
  char path[4096], err[4400];
  snprintf(path, sizeof path, "%s/%s", o->stage, name);
  if (o->fail_write && ++o->nwrites == o->fail_write) {
    fprintf(stderr, "fluxcc: error: cannot write %s: %s (FLUXCC_FAULT)\n", path, strerror(ENOSPC));
    return -1;
  }
  if (write_atomic(path, text, n, err, sizeof err) == 0) return 0;
  fprintf(stderr, "fluxcc: error: %s\n", err);
  return -1;
}

static int write_str(EmitOpts *o, const char *name, const char *text) { return write_file(o, name, text, strlen(text)); }

static int make_dir(const char *path) {
  char err[4200];
  if (make_dirs(path, err, sizeof err) == 0) return 0;
  fprintf(stderr, "fluxcc: error: %s\n", err);
  return -1;
}

// s as comment text, in a buffer of the caller's
static const char *comment_text(const char *s, char *buf, size_t n) {
  Str t = {0};
  src_escape(&t, s, false);
  snprintf(buf, n, "%s", t.s ? t.s : "");
  free(t.s);
  return buf;
}

// Every kernel file's text, and the project's hash: of all of them and of
// the launch list (schedule.c and provenance.json). schedule.c also holds
// each kernel file's own content hash, and the runtime refuses a kernel file
// that is not the one written (edited, or another compile's).
static char **kernel_texts(Ctx *c, Schedule *s, EmitOpts *o, Program *progs) {
  char where[256];
  char **texts = xcalloc((size_t)s->k.n + 1, sizeof *texts);
  uint64_t h = 1469598103934665603ull;
  for (int u = 0; u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    int sites = 0;
    for (int i = 0; i < s->l.n; i++) sites += s->l.v[i].kernel == u;
    char *body = render_kernel(c, s, k, &progs[u]);
    Str t = {0};
    char said[1024], said2[1024];
    str_printf(&t, "// %s — kernel %d of %s, launched %d time%s per forward\n", k->name, u,
       comment_text(base_name(o->model), said, sizeof said), sites, sites == 1 ? "" : "s");
    str_printf(&t, "// DSL: %s\n", comment_text(diag_where(c, k->loc, where, sizeof where), said, sizeof said));
    str_printf(&t, "// arguments%s:\n", sites > 1 ? " (the buffers of its first launch)" : "");
    int w = 0;
    for (int i = 0; i < k->args.n; i++) w = (int)strlen(k->args.v[i].name) > w ? (int)strlen(k->args.v[i].name) : w;
    for (int i = 0; i < k->args.n; i++) {  // name, direction, dtype and shape of each, as the runtime binds them
      SBuf *b = &s->bufs.v[k->args.v[i].buf];
      char sh[160];
      shape_str(&b->shape, sh, sizeof sh);
      str_printf(&t, "//   %-*s %-3s %s%s %s\n", w, k->args.v[i].name, i ? "in" : "out", dtype_name[k->args.v[i].dt], sh,
         b->name ? comment_text(b->name, said, sizeof said) : b->kind == RT_TEMP ? "(temporary)" : "(unnamed)");
    }
    str_printf(&t, "// full shape before opts: [");
    for (int i = 0; i < k->nout + k->nred; i++) str_printf(&t, "%s%lld", i == 0 ? "" : i == k->nout ? " | " : ", ", (long long)k->orig_dims[i]);
    str_printf(&t, "]%s (%s)\n", k->nred ? "  (output axes | reduce axes)" : "  (output axes)", k->orig_name);
    str_printf(&t, "// axes after opts:");
    for (int i = 0; i < k->naxes; i++) str_printf(&t, " %lld %s%s", (long long)k->dims[i], axis_role_name[k->role[i]], i + 1 < k->naxes ? "," : "");
    str_printf(&t, "\n");
    str_printf(&t, "// grid [%u, %u, %u], block [%u, %u, %u]; %lld FLOP, %lld bytes per launch\n", progs[u].global[0],
       progs[u].global[1], progs[u].global[2], progs[u].local[0], progs[u].local[1], progs[u].local[2], (long long)k->flops,
       (long long)k->bytes);
    str_printf(&t, "// method: %s; opts: [", comment_text(o->method->name, said, sizeof said));
    for (int i = 0; i < k->nopts; i++) {
      char os[64];
      opt_str(&k->opts[i], os, sizeof os);
      str_printf(&t, "%s%s", i ? ", " : "", os);
    }
    Tuned *tu = s->tuned ? &s->tuned[u] : NULL;
    if (tu && tu->runs)
      str_printf(&t, "]; chosen: %s; measured: %.4g us (min of %d) on %s\n", comment_text(tu->method->name, said2, sizeof said2), tu->tmin,
         tu->runs, comment_text(o->search->device, said, sizeof said));
    else str_printf(&t, "]; measured: not timed\n");
    if (o->target->include_prelude) str_printf(&t, "#include \"%s%s\"\n", o->prog ? "../../" : "../", o->target->prelude);
    str_printf(&t, "\n%s", body);
    free(body);
    h = fnv_bytes(h, t.s, strlen(t.s) + 1);
    texts[u] = t.s;
  }
  for (int i = 0; i < s->l.n; i++) {
    h = fnv_mix(h, (uint64_t)s->l.v[i].kernel);
    for (int a = 0; a < s->l.v[i].args.n; a++) h = fnv_mix(h, (uint64_t)s->l.v[i].args.v[a].buf);
  }
  snprintf(o->project, sizeof o->project, "%016llx", (unsigned long long)h);
  return texts;
}

// a file of the program: in its folder when the project is a pipeline
static const char *prog_path(const EmitOpts *o, const char *name, char *buf, size_t n) {
  if (o->prog) snprintf(buf, n, "%s/%s", o->prog, name);
  else snprintf(buf, n, "%s", name);
  return buf;
}

// kernels/NNNN_NAME.EXT (PROG/kernels/... in a pipeline)
static const char *prog_kernel_file(Schedule *s, int u, const EmitOpts *o, char *buf, size_t n) {
  char file[512];
  kernel_file(s, u, file, sizeof file);
  return prog_path(o, file, buf, n);
}

static int emit_kernels(Schedule *s, EmitOpts *o, char **texts) {
  char file[1024];
  for (int u = 0; u < s->k.n; u++)
    if (write_str(o, prog_kernel_file(s, u, o, file, sizeof file), texts[u])) return -1;
  return 0;
}

// --weights fp8: RtBuffer.qpair of buffer i, 1 + its scale's index for an
// f8e4m3 weight, -(1 + its weight's) for that scale, else 0 (runtime/flux_rt.h)
static int fp8_pair(const Schedule *s, int i) {
  const SBuf *b = &s->bufs.v[i];
  char key[1024];
  for (int j = 0; b->kind == RT_PARAM && b->name && j < s->bufs.n; j++) {
    const SBuf *o = &s->bufs.v[j];
    if (o->kind != RT_PARAM || !o->name || (b->dt == DT_F8E4M3) == (o->dt == DT_F8E4M3)) continue;
    nb_scale_key(b->dt == DT_F8E4M3 ? b->name : o->name, key, sizeof key);
    if (!strcmp(key, b->dt == DT_F8E4M3 ? o->name : b->name)) return b->dt == DT_F8E4M3 ? j + 1 : -(j + 1);
  }
  return 0;
}

static int emit_schedule(Ctx *c, Schedule *s, EmitOpts *o, Program *progs, char **texts) {
  Graph *g = &c->g;
  Str bufs = {0}, consts = {0}, kernels = {0}, launches = {0}, args = {0}, model = {0};
  static const char *const rt_kind[] = {"RT_INPUT", "RT_PARAM", "RT_OUTPUT", "RT_TEMP", "RT_CONST"};  // by RT_*
  char file[1024], nb[32], nk[32], nl[32], arena[32];
  for (int i = 0; i < s->bufs.n; i++) {
    SBuf *b = &s->bufs.v[i];
    Buf *gb = b->gbuf >= 0 ? &g->bufs.v[b->gbuf] : NULL;
    str_printf(&bufs, "  {");
    if (b->name) src_escape(&bufs, b->name, true);
    else str_printf(&bufs, "\"buf%d\"", i);
    str_printf(&bufs, ", %s, %s, %d, {", rt_kind[b->kind], dtype_rt_name[b->dt], b->shape.n);
    for (int d = 0; d < b->shape.n; d++) str_printf(&bufs, "%s%lld", d ? ", " : "", (long long)b->shape.d[d]);
    str_printf(&bufs, "}, %d, %.17g, %.17g, %llu, %llu, %s%s", gb ? gb->init : 0, gb ? gb->ia : 0.0, gb ? gb->ib : 0.0,
       (unsigned long long)b->offset, (unsigned long long)b->bytes, b->kind == RT_CONST ? "" : "NULL",
       b->kind == RT_CONST ? gb->name : "");
    int pair = fp8_pair(s, i);
    if (pair) str_printf(&bufs, ", %d, %s", pair, dtype_rt_name[gb && b->dt == DT_F8E4M3 ? gb->decl_dt : DT_F32]);
    else str_printf(&bufs, ", 0, 0");
    str_printf(&bufs, "},\n");
    if (b->kind != RT_CONST) continue;
    // a folded constant's values, exact in its dtype (%.17g reads back as the same double)
    str_printf(&consts, "static const double %s[] = {", gb->name);
    for (int64_t e = 0, n = shape_numel(&gb->shape); e < n; e++) str_printf(&consts, "%s%.17g", !e ? "\n  " : e % 8 ? ", " : ",\n  ", gb->data[e]);
    str_printf(&consts, "\n};\n\n");
  }
  for (int u = 0; u < s->k.n; u++) {
    Kernel *k = &s->k.v[u];
    prog_kernel_file(s, u, o, file, sizeof file);
    Program *p = &progs[u];
    str_printf(&kernels, "  {\"%s\", \"%s\", %d, {%u, %u, %u}, {%u, %u, %u}, 0x%016llxull, %lld, %lld},\n", k->name, file, k->args.n,
       p->global[0], p->global[1], p->global[2], p->local[0], p->local[1], p->local[2],
       (unsigned long long)nb_fnv(NB_FNV_SEED, texts[u], strlen(texts[u])), (long long)k->flops, (long long)k->bytes);
  }
  for (int i = 0, at = 0; i < s->l.n; i++) {
    str_printf(&launches, "  {%d, %d},\n", s->l.v[i].kernel, at);
    at += s->l.v[i].args.n;
    str_printf(&args, " ");
    for (int a = 0; a < s->l.v[i].args.n; a++) str_printf(&args, " %d,", s->l.v[i].args.v[a].buf);
    str_printf(&args, "\n");
  }
  Str unused = {0};
  for (int u = 0; u < g->unused.n; u++) {
    str_printf(&unused, "  ");
    src_escape(&unused, g->unused.v[u], true);
    str_printf(&unused, ",\n");
  }
  char nu[32], ni[32];
  snprintf(nu, sizeof nu, "%d", g->unused.n);
  Str ids = {0};
  for (int q = 0; q < s->ids.n; q++) {
    char where[256];
    str_printf(&ids, "  {%d, %lld, ", s->ids.v[q].buf, (long long)s->ids.v[q].rows);
    src_escape(&ids, s->ids.v[q].table, true);
    str_printf(&ids, ", ");
    src_escape(&ids, diag_where(c, s->ids.v[q].loc, where, sizeof where), true);
    str_printf(&ids, "},\n");
  }
  snprintf(ni, sizeof ni, "%d", s->ids.n);
  Str ckw = {0}, ckt = {0};   // checkpoint(): C string literals or NULL
  if (g->ckpt_weights) src_escape(&ckw, g->ckpt_weights, true);
  if (g->ckpt_tokenizer) src_escape(&ckt, g->ckpt_tokenizer, true);
  src_escape(&model, base_name(o->model), true);
  char model_comment[1024];
  snprintf(nb, sizeof nb, "%d", s->bufs.n);
  snprintf(nk, sizeof nk, "%d", s->k.n);
  snprintf(nl, sizeof nl, "%d", s->l.n);
  snprintf(arena, sizeof arena, "%llu", (unsigned long long)s->arena_bytes);
  const char *prelude = o->target->prelude, *pt = template_text(o->target, prelude);
  char ph[32];  // the prelude is copied as it is (write_templates): the binary checks its bytes too
  snprintf(ph, sizeof ph, "%016llx", (unsigned long long)nb_fnv(NB_FNV_SEED, pt, strlen(pt)));
  const Target *T = o->target;
  char symbol[160], table[160], table_decl[400] = "", table_ref[200] = "NULL", path[1024];
  snprintf(symbol, sizeof symbol, "rt_schedule%s%s", o->prog ? "_" : "", o->prog ? o->prog : "");
  if (T->table_sym) {  // the kernels' table, by which the backend launches (C, CUDA)
    snprintf(table, sizeof table, "%s%s%s", T->table_sym, o->prog ? "_" : "", o->prog ? o->prog : "");
    snprintf(table_decl, sizeof table_decl, T->table_decl, table);
    strcat(table_decl, "\n\n");
    snprintf(table_ref, sizeof table_ref, "(const void *)%s", table);
  }
  const char *const kv[][2] = {{"model", comment_text(base_name(o->model), model_comment, sizeof model_comment)}, {"model_c", model.s}, {"target", o->target->name},
                               {"symbol", symbol}, {"table_decl", table_decl}, {"table_ref", table_ref},
                               {"nbufs", nb}, {"nkernels", nk}, {"nlaunches", nl}, {"arena", arena}, {"project", o->project},
                               {"prelude", prelude}, {"prelude_hash", ph}, {"nunused", nu}, {"unused", unused.s ? unused.s : ""},
                               {"nids", ni}, {"ids", ids.s ? ids.s : ""},
                               {"ckpt_weights", ckw.s ? ckw.s : "NULL"}, {"ckpt_tokenizer", ckt.s ? ckt.s : "NULL"},
                               {"bufs", bufs.s ? bufs.s : ""}, {"consts", consts.s ? consts.s : ""}, {"kernels", kernels.s ? kernels.s : ""},
                               {"launches", launches.s ? launches.s : ""}, {"arg_bufs", args.s ? args.s : ""}};
  char *text = template_fill(template_text(NULL, "schedule.c.in"), kv, (int)(sizeof kv / sizeof *kv));
  int rc = write_str(o, prog_path(o, "schedule.c", path, sizeof path), text);
  free(text), free(bufs.s), free(consts.s), free(kernels.s), free(launches.s), free(args.s), free(model.s), free(unused.s), free(ckw.s), free(ckt.s), free(ids.s);
  if (rc || !T->table) return rc;
  // the kernels' table (CUDA: host stubs for cudaLaunchKernel; C: launchers)
  Str decl = {0}, ks = {0}, name = {0};
  for (int u = 0; u < s->k.n; u++) T->table_entry(&decl, &ks, &s->k.v[u]);
  const char *const kt[][2] = {{"declarations", decl.s ? decl.s : ""}, {"kernels", ks.s ? ks.s : ""}, {"table", table}};
  text = template_fill(template_text(o->target, T->table), kt, 3);
  str_printf(&name, "%.*s", (int)(strlen(T->table) - 3), T->table);  // without ".in"
  rc = write_str(o, prog_path(o, name.s, path, sizeof path), text);
  free(text), free(decl.s), free(ks.s), free(name.s);
  return rc;
}

static int emit_records(Ctx *c, Schedule *s, EmitOpts *o, Program *progs) {
  char *text = records_text(c, s, o, progs), path[1024];
  int rc = write_str(o, prog_path(o, "records.json", path, sizeof path), text);
  free(text);
  return rc;
}

static int emit_provenance(EmitOpts *o) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "fluxcc_commit", FLUXCC_COMMIT);
  cJSON *args = cJSON_AddArrayToObject(root, "command");
  for (int i = 0; i < o->argc; i++) cJSON_AddItemToArray(args, cJSON_CreateString(o->argv[i]));
  char date[64];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  cJSON_AddStringToObject(root, "date", date);
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  cJSON_AddStringToObject(root, "host", host);
  if (o->search && o->search->replayed) {
    cJSON_AddStringToObject(root, "device", "none: replayed from records");
    cJSON_AddStringToObject(root, "records", o->search->replayed);
    cJSON_AddStringToObject(root, "measured_on", o->search->device);
    cJSON_AddStringToObject(root, "measured_with", o->search->toolchain);
  } else if (o->search) {
    cJSON_AddStringToObject(root, "device", o->search->device);
    cJSON_AddStringToObject(root, "toolchain", o->search->toolchain);
    cJSON_AddNumberToObject(root, "search_s", o->search->wall_s);
    if (o->search->model_used[0]) cJSON_AddStringToObject(root, "cost_model", o->search->model_used);  // the file and its hash
  } else cJSON_AddStringToObject(root, "device", "none: not measured (a fixed method needs no timing)");
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  int rc = write_str(o, "provenance.json", text);
  free(text);
  return rc;
}

// runtime/ and templates/<target>/ (with its subfolders) into the project;
// a NAME.in is written as NAME with the target's {{kflags}} filled in (the
// kernel table's template is emit_schedule's)
static int emit_runtime(EmitOpts *o) {
  const Target *T = o->target;
  for (size_t i = 0; i < sizeof runtime_files / sizeof *runtime_files; i++)
    if (write_str(o, runtime_files[i].name, runtime_files[i].text)) return -1;
  const char *f, *text, *slash;
  for (size_t i = 0; (f = template_next(o->target, &i, &text));) {
    size_t fl = strlen(f);
    bool in = fl > 3 && !strcmp(f + fl - 3, ".in");
    if (in && T->table && !strcmp(f, T->table)) continue;
    if ((slash = strrchr(f, '/'))) {  // a subfolder, e.g. emu/
      char dir[4400];
      snprintf(dir, sizeof dir, "%s/%.*s", o->stage, (int)(slash - f), f);
      if (make_dir(dir)) return -1;
    }
    if (!in) {
      if (write_str(o, f, text)) return -1;
      continue;
    }
    const char *const kv[][2] = {{"kflags", T->kflags ? T->kflags : ""}};
    char name[512], *filled = template_fill(text, kv, 1);
    snprintf(name, sizeof name, "%.*s", (int)(fl - 3), f);
    int rc = write_str(o, name, filled);
    free(filled);
    if (rc) return -1;
  }
  return 0;
}

// rm -r of a staging or replaced project (nftw: no recursion of our own)
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)ftw;
  return flag == FTW_DP ? rmdir(path) : unlink(path);
}
static int remove_tree(const char *path) { return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

// DIR may be replaced only if it is missing, empty or a project fluxcc wrote
static int replaceable(const char *dir) {
  struct stat st;
  if (stat(dir, &st)) {
    if (errno == ENOENT) return 0;
    fprintf(stderr, "fluxcc: error: -o %s: %s\n", dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    fprintf(stderr, "fluxcc: error: -o %s: exists and is not a directory (%s): not replacing it\n", dir,
            S_ISREG(st.st_mode) ? "a file" : S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "not a file");
    return -1;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/provenance.json", dir);
  if (access(path, F_OK) == 0) return 0;
  DIR *d = opendir(dir);
  int empty = 1;
  for (struct dirent *e; d && (e = readdir(d));) empty &= !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
  if (d) closedir(d);
  if (empty) return 0;
  fprintf(stderr, "fluxcc: error: -o %s: exists and is not a fluxcc project (no provenance.json): not replacing it\n", dir);
  return -1;
}

// The project is written into DIR.fluxcc-XXXXXX beside DIR and swapped in
// whole (rename, or renameat2 RENAME_EXCHANGE over an old project), so a
// reader sees the old project or the new one, never a mix, and nothing of
// the old one stays. Compiles into one parent folder take turns (flock), and
// the staging folders a killed compile left are removed by the next one.
// emit_begin makes the staging folder; emit_program writes a program into it
// (several, each in its folder, for a pipeline); emit_end adds the runtime
// and provenance and swaps it in, or removes it after a failure.
int emit_begin(EmitOpts *o) {
  char parent[4096], path[4400];
  o->lock = -1;
  snprintf(parent, sizeof parent, "%s", o->out_dir);
  size_t n = strlen(parent);
  while (n > 1 && parent[n - 1] == '/') parent[--n] = 0;  // "build/" is "build"
  struct stat lst;
  if (lstat(parent, &lst) == 0 && S_ISLNK(lst.st_mode)) {  // the project goes where the link leads; the link stays
    char real[PATH_MAX];
    if (!realpath(parent, real)) {
      fprintf(stderr, "fluxcc: error: -o %s: a symbolic link that leads nowhere (%s)\n", o->out_dir, strerror(errno));
      return -1;
    }
    snprintf(parent, sizeof parent, "%s", real);
  }
  char *slash = strrchr(parent, '/');
  char base[4096];
  snprintf(base, sizeof base, "%s", slash ? slash + 1 : parent);
  snprintf(o->dirname, sizeof o->dirname, "%s", parent);
  if (slash) parent[slash == parent ? 1 : slash - parent] = 0;
  else snprintf(parent, sizeof parent, ".");
  if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
    fprintf(stderr, "fluxcc: error: -o %s: name the project's own directory\n", o->out_dir);
    return -1;
  }
  if (make_dir(parent)) return -1;
  int lock = open(parent, O_RDONLY | O_DIRECTORY);
  if (lock < 0 || flock(lock, LOCK_EX)) {
    fprintf(stderr, "fluxcc: error: -o %s: cannot use the directory %s: %s\n", o->out_dir, parent, strerror(errno));
    if (lock >= 0) close(lock);
    return -1;
  }
  int rc = replaceable(o->dirname);
  DIR *d = rc ? NULL : opendir(parent);
  for (struct dirent *e; d && (e = readdir(d));) {  // staging folders of killed compiles
    size_t bl = strlen(base);
    if (strncmp(e->d_name, base, bl) || strncmp(e->d_name + bl, ".fluxcc-", 8)) continue;
    snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
    remove_tree(path);
  }
  if (d) closedir(d);
  if (rc == 0 && fault_setting("write-fail", &o->fail_write) < 0) rc = -1;
  snprintf(o->stage_buf, sizeof o->stage_buf, "%s.fluxcc-XXXXXX", o->dirname);
  if (rc == 0 && (!mkdtemp(o->stage_buf) || chmod(o->stage_buf, 0755))) {
    fprintf(stderr, "fluxcc: error: cannot create %s: %s\n", o->stage_buf, strerror(errno));
    rc = -1;
  }
  if (rc) {
    close(lock);
    return -1;
  }
  o->stage = o->stage_buf;
  o->lock = lock;
  return 0;
}

int emit_program(Ctx *c, Schedule *s, EmitOpts *o) {
  char path[4400];
  if (o->prog) {  // the program's folder, and its kernels' names prefixed: one binary links every program
    snprintf(path, sizeof path, "%s/%s", o->stage, o->prog);
    if (make_dir(path)) return -1;
    for (int u = 0; u < s->k.n; u++) {
      Kernel *k = &s->k.v[u];
      char name[sizeof k->name + 64];
      if ((size_t)snprintf(name, sizeof name, "%s_%s", o->prog, k->name) >= sizeof k->name) {
        fprintf(stderr, "fluxcc: error: kernel '%s' of %s: its name with the program's prefix is too long\n", k->name, o->model);
        return -1;
      }
      memcpy(k->name, name, sizeof k->name);
    }
  }
  snprintf(path, sizeof path, "%s/%s%skernels", o->stage, o->prog ? o->prog : "", o->prog ? "/" : "");
  Program *progs = xcalloc((size_t)s->k.n + 1, sizeof *progs);
  for (int u = 0; u < s->k.n; u++) lower_kernel(c, s, &s->k.v[u], &progs[u]);
  char **texts = kernel_texts(c, s, o, progs);
  int rc = make_dir(path) || emit_kernels(s, o, texts) || emit_schedule(c, s, o, progs, texts) || emit_records(c, s, o, progs);
  for (int u = 0; u < s->k.n; u++) program_free(&progs[u]), free(texts[u]);
  free(progs);
  free(texts);
  return rc ? -1 : 0;
}

int emit_text(EmitOpts *o, const char *name, const char *text) { return write_str(o, name, text); }

int emit_end(EmitOpts *o, int rc) {
  if (!o->stage) return -1;
  if (rc == 0) rc = emit_runtime(o) || emit_provenance(o);
  if (rc == 0) {
    if (renameat2(AT_FDCWD, o->stage, AT_FDCWD, o->dirname, RENAME_EXCHANGE) == 0) remove_tree(o->stage);  // the old project, now
    else if (errno != ENOENT || rename(o->stage, o->dirname)) {
      fprintf(stderr, "fluxcc: error: cannot move %s to %s: %s\n", o->stage, o->dirname, strerror(errno));
      rc = -1;
    }
  }
  if (rc) remove_tree(o->stage);
  o->stage = NULL;
  close(o->lock);
  o->lock = -1;
  return rc ? -1 : 0;
}

int emit_project(Ctx *c, Schedule *s, EmitOpts *o) {
  if (emit_begin(o)) return -1;
  return emit_end(o, emit_program(c, s, o));
}
