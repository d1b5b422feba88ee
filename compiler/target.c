// target.c — the targets: one entry each, holding everything that differs
// between them (dialect, limits, templates folder, kernel table, measuring
// device). render.c, attention.c, emit.c, optimize.c, compare.c, warm.c and
// the search's files read the entry; none of them asks which target it is.
#include "fluxcc.h"

#include <string.h>

#include "template_files.inc"   // const struct { const char *name, *text; } template_files[]: templates/*

// the unary ops and built-ins of C's <math.h> on float, which CUDA shares
#define C_MATH \
  .un = {[OP_NEG] = "-%s", [OP_EXP] = "expf(%s)", [OP_LOG] = "logf(%s)", [OP_SQRT] = "sqrtf(%s)", [OP_RECIP] = "1.0f / %s", \
         [OP_SIN] = "sinf(%s)", [OP_COS] = "cosf(%s)", [OP_TANH] = "tanhf(%s)", [OP_ABS] = "fabsf(%s)", \
         [OP_NOT] = "%s == 0.0f ? 1.0f : 0.0f", [OP_CAST] = "%s"}, \
  .fmax = "fmaxf", .fmin = "fminf"

static const Dialect cuda = {
  .kernel = "extern \"C\" __global__ void __launch_bounds__(%u)", .bounds_total = true,
  .param_fmt = "%s *__restrict__", .const_param_fmt = "const %s *__restrict__",
  .type = {[DT_BOOL] = "unsigned char", [DT_F16] = "__half", [DT_BF16] = "__nv_bfloat16", [DT_F32] = "float",
           [DT_F8E4M3] = "unsigned char"},
  .group = {"blockIdx.x", "blockIdx.y", "blockIdx.z"}, .thread = {"threadIdx.x", "threadIdx.y", "threadIdx.z"},
  .smem = "__shared__ float", .barrier = "__syncthreads();",
  .sstore = "sts_f32(%s, %s, %s);", .sload = "lds_f32(%s, %s)", .sload16 = "lds_%s(tc_stage16, %s)",
  .stage16 = "__shared__ __align__(16) %s tc_stage16[%lld];",
  .copy = "cp_async16(tc_stage16 + %s, %s + %s);", .commit = "cp_async_commit();", .wait = "cp_async_wait_group(1);",
  C_MATH,
  .unroll = "FLUX_UNROLL",
  // the host compiler of `make emu` does not know the pragma
  .head = "#ifndef FLUX_UNROLL\n#ifdef FLUX_EMU\n#define FLUX_UNROLL\n#else\n#define FLUX_UNROLL _Pragma(\"unroll\")\n#endif\n#endif\n",
  .mma = true,
};

static const Dialect opencl = {
  .kernel = "__kernel __attribute__((reqd_work_group_size(%u, %u, %u))) void",
  .param_fmt = "__global %s *restrict", .const_param_fmt = "__global const %s *restrict",
  .type = {[DT_BOOL] = "uchar", [DT_F16] = "half", [DT_BF16] = "ushort", [DT_F32] = "float", [DT_F8E4M3] = "uchar"},
  .group = {"get_group_id(0)", "get_group_id(1)", "get_group_id(2)"},
  .thread = {"get_local_id(0)", "get_local_id(1)", "get_local_id(2)"},
  .smem = "__local float", .barrier = "barrier(CLK_LOCAL_MEM_FENCE);",
  .sstore = "%s[%s] = %s;", .sload = "%s[%s]", .sload16 = "ld_%s_l(tc_stage16, %s)",
  .stage16 = "__local %s tc_stage16[%lld];",
  .copy = "for (int c = 0; c < 8; c++) tc_stage16[%s + c] = ((__global const ushort *)%s)[%s + c];  // cp.async on CUDA",
  .commit = NULL, .wait = NULL,  // the copies above are synchronous
  .un = {[OP_NEG] = "-%s", [OP_EXP] = "exp(%s)", [OP_LOG] = "log(%s)", [OP_SQRT] = "sqrt(%s)", [OP_RECIP] = "1.0f / %s",
         [OP_SIN] = "sin(%s)", [OP_COS] = "cos(%s)", [OP_TANH] = "tanh(%s)", [OP_ABS] = "fabs(%s)",
         [OP_NOT] = "%s == 0.0f ? 1.0f : 0.0f", [OP_CAST] = "%s"},
  .fmax = "fmax", .fmin = "fmin",
  .unroll = "#pragma unroll", .head = "",
  .vectors = true,
};

// C11: a kernel is a function whose groups are the iterations of an OpenMP
// loop, one work-item each (max_threads 1), so it needs no barriers; 16-bit
// storage is uint16_t, converted by the prelude's functions
static const Dialect c11 = {
  .kernel = "void",
  .param_fmt = "%s *restrict", .const_param_fmt = "const %s *restrict",
  .type = {[DT_BOOL] = "unsigned char", [DT_F16] = "uint16_t", [DT_BF16] = "uint16_t", [DT_F32] = "float",
           [DT_F8E4M3] = "unsigned char"},
  .group = {"gx", "gy", "gz"}, .thread = {"0", "0", "0"},
  .smem = "float", .barrier = "",
  .sstore = "%s[%s] = %s;", .sload = "%s[%s]",
  C_MATH,
  .unroll = "", .head = "",
  .group_loops = true,
};

// kernel_table.cu: the host stub nvcc makes of each kernel
static void cuda_entry(Str *decl, Str *entry, const Kernel *k) {
  str_printf(decl, "extern \"C\" __global__ void %s(", k->name);
  for (int a = 0; a < k->args.n; a++) str_printf(decl, "%s%s%s *", a ? ", " : "", a ? "const " : "", cuda.type[k->args.v[a].dt]);
  str_printf(decl, ");\n");
  str_printf(entry, "  FLUX_KERNEL(%s),\n", k->name);
}

// kernel_table.c: each kernel's launcher (its arguments as an array)
static void c_entry(Str *decl, Str *entry, const Kernel *k) {
  str_printf(decl, "void %s_launch(void *const *args);\n", k->name);
  str_printf(entry, "  %s_launch,\n", k->name);
}

const Target targets[] = {
  [TARGET_CUDA] = {
    .name = "cuda", .ext = "cu", .prelude = "kernel_prelude.cuh", .include_prelude = true, .tile_n = 128, .cpu = false,
    .max_threads = 1024, .max_smem = 48 * 1024, .tc = true, .dialect = &cuda, .device = &device_cuda, .kflags = NULL,
    .table = "kernel_table.cu.in", .table_sym = "rt_cuda_kernels", .table_decl = "extern const void *const %s[];",
    .table_entry = cuda_entry,
  },
  [TARGET_OPENCL] = {
    .name = "opencl", .ext = "cl", .prelude = "kernel_prelude.cl", .include_prelude = false, .tile_n = 8, .cpu = true,
    .max_threads = 1024, .max_smem = 48 * 1024, .tc = true, .dialect = &opencl, .device = &device_opencl,
    .kflags = NULL, .table = NULL, .table_sym = NULL, .table_decl = NULL, .table_entry = NULL,  // built at run time: no table
  },
  [TARGET_C] = {
    .name = "c", .ext = "c", .prelude = "kernel_prelude.h", .include_prelude = true, .tile_n = 8, .cpu = true,
    .max_threads = 1, .max_smem = 48 * 1024, .tc = false, .dialect = &c11, .device = &device_c,
    .kflags = "-std=c11 -O3 -march=native -ffp-contract=fast -fopenmp",
    .table = "kernel_table.c.in", .table_sym = "rt_c_kernels",
    .table_decl = "extern void (*const %s[])(void *const *args);", .table_entry = c_entry,
  },
};

const Target *target_find(const char *name) {
  for (int t = 0; t < NTARGETS; t++)
    if (!strcmp(targets[t].name, name)) return &targets[t];
  return NULL;
}

void target_names(char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  for (int t = 0; t < NTARGETS && at < n; t++)
    at += (size_t)snprintf(buf + at, n - at, "%s%s", t == 0 ? "" : t + 1 < NTARGETS ? ", " : " or ", targets[t].name);
}

// A kernel's file is named by its number and its name before opts, the same
// under every method, so `diff -r` of two methods' kernels/ pairs file by file
// (the function inside is named after the opts)
void kernel_file(const Schedule *s, int u, char *buf, size_t n) {
  snprintf(buf, n, "kernels/%04d_%s.%s", u, s->k.v[u].orig_name, s->target->ext);
}

// templates/<target>/<name> (T NULL: templates/<name>), as embedded at
// build time; every one the compiler asks for exists, or fluxcc was built wrong
const char *template_text(const Target *T, const char *name) {
  const char *tn = T ? T->name : "";
  size_t n = strlen(tn);
  for (size_t i = 0; i < sizeof template_files / sizeof *template_files; i++) {
    const char *f = template_files[i].name;
    if (n ? !strncmp(f, tn, n) && f[n] == '/' && !strcmp(f + n + 1, name) : !strcmp(f, name)) return template_files[i].text;
  }
  diag_fatal("internal: no template %s%s%s", tn, n ? "/" : "", name);
}

// A template (templates/*.in) with each {{key}} replaced by its value.
char *template_fill(const char *tmpl, const char *const kv[][2], int n) {
  Str o = {0};
  for (const char *p = tmpl; *p;) {
    const char *a = strstr(p, "{{"), *b = a ? strstr(a, "}}") : NULL;
    if (!b) {
      str_printf(&o, "%s", p);
      break;
    }
    str_printf(&o, "%.*s", (int)(a - p), p);
    int i = 0;
    while (i < n && (strlen(kv[i][0]) != (size_t)(b - a - 2) || strncmp(kv[i][0], a + 2, (size_t)(b - a - 2)))) i++;
    if (i == n) diag_fatal("internal: template key %.*s has no value", (int)(b - a - 2), a + 2);
    str_printf(&o, "%s", kv[i][1]);
    p = b + 2;
  }
  return o.s;
}

// the files of templates/<target>/, with their folders below it (emu/...);
// *i from 0, NULL after the last
const char *template_next(const Target *T, size_t *i, const char **text) {
  const char *tn = T->name;
  size_t n = strlen(tn);
  for (; *i < sizeof template_files / sizeof *template_files; ++*i) {
    const char *f = template_files[*i].name;
    if (strncmp(f, tn, n) || f[n] != '/') continue;
    *text = template_files[(*i)++].text;
    return f + n + 1;
  }
  return NULL;
}

void dialect_kernel(Str *o, const Dialect *D, const uint32_t local[3]) {
  if (D->bounds_total) str_printf(o, D->kernel, local[0] * local[1] * local[2]);
  else str_printf(o, D->kernel, local[0], local[1], local[2]);
}
