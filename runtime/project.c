// project.c — the project as ./flux finds it: schedule.c's tables checked
// before anything reads them, the device memory laid out from them, and
// every kernel file beside the binary verified to be the one fluxcc wrote.
#define _POSIX_C_SOURCE 200809L

#include "flux_main.h"
#include "numbers.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Offsets of parameters and inputs inside their pools. OpenCL passes every
// buffer as a sub-buffer, whose origin must be a multiple of the device's
// CL_DEVICE_MEM_BASE_ADDR_ALIGN: 4096 bits (512 bytes) on NVIDIA.
#define PACK_ALIGN 512
#define BLOCK_ALIGN 4096  // where each pool starts in the device memory (a multiple of PACK_ALIGN)

static const int dt_size[] = {1, 2, 2, 4, 1};

// The schedule comes from fluxcc, but a bad table would make the runtime
// read or write out of bounds: check it once.
int check_schedule(const RtSchedule *s) {
  const char *fmt = NULL;
  int at = -1;
  for (int i = 0; i < s->nbufs && !fmt; i++) {
    const RtBuffer *b = &s->bufs[i];
    at = i;
    int64_t n = 1;
    int dims_ok = b->ndim >= 0 && b->ndim <= RT_MAXDIM;
    for (int k = 0; dims_ok && k < b->ndim; k++) {
      dims_ok = b->shape[k] >= 0 && (b->shape[k] == 0 || n <= INT64_MAX / 8 / b->shape[k]);
      n *= dims_ok ? b->shape[k] : 1;
    }
    if (!b->name) fmt = "buffer %d has no name";
    else if (b->kind < RT_INPUT || b->kind > RT_CONST) fmt = "buffer %d has a bad kind";
    else if ((b->kind == RT_CONST) != (b->data != NULL)) fmt = "buffer %d: a constant has values, nothing else does";
    else if (b->dtype < RT_BOOL || b->dtype > RT_F8E4M3) fmt = "buffer %d has a bad dtype";
    else if (!dims_ok) fmt = "buffer %d has a bad shape";
    else if (b->bytes != (uint64_t)n * (uint64_t)dt_size[b->dtype]) fmt = "buffer %d: bytes is not prod(shape) * itemsize";
    else if ((b->kind == RT_OUTPUT || b->kind == RT_TEMP) &&
             (b->offset > s->arena_bytes || b->bytes > s->arena_bytes - b->offset))
      fmt = "buffer %d lies outside the arena";
    else if (b->qpair && (b->qpair < -s->nbufs || b->qpair > s->nbufs ||
                          s->bufs[b->qpair > 0 ? b->qpair - 1 : -b->qpair - 1].qpair != (b->qpair > 0 ? -(i + 1) : i + 1) ||
                          (b->qpair > 0) != (b->dtype == RT_F8E4M3) || b->kind != RT_PARAM ||
                          (b->qpair > 0 && (b->ndim != 2 || s->bufs[b->qpair - 1].dtype != RT_F32 || s->bufs[b->qpair - 1].ndim != 1 ||
                                            s->bufs[b->qpair - 1].shape[0] != b->shape[0]))))
      fmt = "buffer %d: a bad fp8 weight/scale pair";
  }
  for (int i = 0; i < s->nkernels && !fmt; i++) {
    const RtKernel *k = &s->kernels[i];
    at = i;
    if (!k->name || !k->file) fmt = "kernel %d has no name or file";
    else if (k->nargs < 1 || k->nargs > RT_MAXARGS) fmt = "kernel %d has a bad argument count";
    for (int d = 0; d < 3 && !fmt; d++)
      if (!k->global[d] || !k->local[d]) fmt = "kernel %d has a zero global or local size";
  }
  for (int i = 0; i < s->nids && !fmt; i++) {
    at = i;
    if (s->ids[i].buf < 0 || s->ids[i].buf >= s->nbufs || s->bufs[s->ids[i].buf].kind != RT_INPUT || s->ids[i].rows < 1 ||
        !s->ids[i].table || !s->ids[i].where)
      fmt = "ids check %d names no input, or no table";
  }
  for (int i = 0; i < s->nlaunches && !fmt; i++) {
    const RtLaunch *l = &s->launches[i];
    at = i;
    if (l->kernel < 0 || l->kernel >= s->nkernels) fmt = "launch %d: kernel out of range";
    else if (l->args < 0) fmt = "launch %d: bad argument index";
    for (int j = 0; !fmt && j < s->kernels[l->kernel].nargs; j++) {
      int b = s->arg_bufs[l->args + j];
      if (b < 0 || b >= s->nbufs) fmt = "launch %d: argument buffer out of range";
    }
  }
  if (!fmt) return 0;
  fprintf(stderr, "flux: error: schedule.c: ");
  fprintf(stderr, fmt, at);
  fprintf(stderr, " (a fluxcc bug)\n");
  return -1;
}

// Parameters and inputs packed in their pools; outputs and temporaries where
// the schedule put them; the three pools one after the other in the block.
void make_layout(const RtSchedule *s, Layout *L) {
  memset(L, 0, sizeof *L);
  L->pool = rt_calloc((size_t)s->nbufs, sizeof *L->pool);
  L->offset = rt_calloc((size_t)s->nbufs, sizeof *L->offset);
  for (int i = 0; i < s->nbufs; i++) {
    const RtBuffer *b = &s->bufs[i];
    int p = b->kind == RT_PARAM || b->kind == RT_CONST ? POOL_PARAMS : b->kind == RT_INPUT ? POOL_INPUTS : POOL_ARENA;
    L->pool[i] = p;
    if (p == POOL_ARENA) {
      L->offset[i] = b->offset;
    } else {
      L->offset[i] = L->bytes[p];
      L->bytes[p] += (b->bytes + PACK_ALIGN - 1) / PACK_ALIGN * PACK_ALIGN;
    }
  }
  L->bytes[POOL_ARENA] = s->arena_bytes;
  for (int p = 0; p < NPOOLS; p++) {
    L->base[p] = L->total;
    L->total += (L->bytes[p] + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
  }
  if (L->total == 0) L->total = BLOCK_ALIGN;
}

// --max-memory: whether the device memory of layout L fits max bytes (0: no
// limit); else -1, said with what it holds, before anything is read or loaded.
int memory_fits(const RtSchedule *s, const Layout *L, uint64_t max) {
  if (!max || L->total <= max) return 0;
  int fp8 = 0;
  for (int i = 0; i < s->nbufs; i++) fp8 |= s->bufs[i].dtype == RT_F8E4M3;
  fprintf(stderr, "flux: error: --max-memory %llu: %s needs %llu bytes (%.2f MiB) of device memory: weights %.2f MiB, inputs %.2f MiB, "
          "arena %.2f MiB%s\n", (unsigned long long)max, s->model, (unsigned long long)L->total, L->total / 1048576.0,
          L->bytes[POOL_PARAMS] / 1048576.0, L->bytes[POOL_INPUTS] / 1048576.0, L->bytes[POOL_ARENA] / 1048576.0,
          fp8 || L->bytes[POOL_PARAMS] < L->total / 2 ? "" : " (fluxcc --weights fp8 stores the linear weights in 8 bits)");
  return -1;
}

// The directory of the kernel files: $FLUX_DIR, else that of the executable.
char *project_dir(void) {
  const char *env = getenv("FLUX_DIR");
  char buf[4096];
  if (env && *env) return strcpy(xmalloc(strlen(env) + 1), env);
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return strcpy(xmalloc(2), ".");
  buf[n] = 0;
  char *slash = strrchr(buf, '/');
  if (slash) *slash = 0;
  if (!buf[0]) strcpy(buf, "/");
  return strcpy(xmalloc(strlen(buf) + 1), buf);
}

// A file of the project is the one fluxcc wrote: its bytes' hash is
// schedule.c's, else it was edited (or is another compile's) and is refused
// by name (what), unless --allow-edited. Read by the inputs' rule (in_read):
// a FIFO or a folder in its place is refused, never waited on. 1: refused.
// (A missing file: OpenCL says so when it loads it; CUDA does not need it.)
static int verify_file(const char *dir, const char *file, uint64_t want, const char *what, int allow) {
  size_t plen = strlen(dir) + strlen(file) + 2, len;
  char *path = xmalloc(plen), why[300];
  snprintf(path, plen, "%s/%s", dir, file);
  char *text = in_read(path, (size_t)256 << 20, &len, why, sizeof why);
  int bad = 0;
  if (!text && access(path, F_OK) == 0) {
    fprintf(stderr, "flux: error: %s (%s): %s\n", path, what, why);
    bad = 1;
  }
  uint64_t h = text ? nb_fnv(NB_FNV_SEED, text, len) : want;
  if (h != want) {
    fprintf(stderr, "flux: %s: %s (%s) is not the file fluxcc wrote: edited, or another compile's (content hash %016llx, "
            "schedule.c: %016llx)%s\n", allow ? "warning" : "error", path, what, (unsigned long long)h,
            (unsigned long long)want, allow ? "; running it as it is (--allow-edited)" : "; compile again, or --allow-edited");
    bad = !allow;
  }
  free(text);
  free(path);
  return bad;
}

// Every kernel file beside the binary, and the prelude they are built
// with, is what fluxcc wrote. (A CUDA binary holds its kernels, compiled by
// make from these files; OpenCL builds them from these files now.)
int verify_kernel_files(const RtSchedule *s, const char *dir, int allow) {
  int bad = verify_file(dir, s->prelude, s->prelude_hash, "the kernels' prelude", allow);
  for (int k = 0; k < s->nkernels; k++) {
    const RtKernel *K = &s->kernels[k];
    if (k && !strcmp(K->file, s->kernels[k - 1].file)) continue;
    char what[160];
    snprintf(what, sizeof what, "kernel '%s'", K->name);
    bad |= verify_file(dir, K->file, K->hash, what, allow);
  }
  return bad ? -1 : 0;
}
