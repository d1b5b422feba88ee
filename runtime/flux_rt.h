// flux_rt.h — the contract between fluxcc's emitter and the runtime that is
// copied into every emitted project. fluxcc writes `schedule.c` (the tables
// below, plain C) and, for CUDA, `kernel_table.cu`; everything else in the
// project comes from runtime/ unchanged.
#ifndef FLUX_RT_H
#define FLUX_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_MAXDIM 8
#define RT_MAXARGS 32

// storage types: the same codes as fluxcc's DTYPES
enum { RT_BOOL, RT_F16, RT_BF16, RT_F32, RT_F8E4M3 };   // RT_F8E4M3: --weights fp8's linear weights

// what a buffer is
enum {
  RT_INPUT,   // model input: --inputs / --random-inputs
  RT_PARAM,   // parameter: --weights / --random-weights
  RT_OUTPUT,  // model output: lives in the arena at `offset`, never overwritten
  RT_TEMP,    // intermediate: lives in the arena at `offset`, shared by liveness
  RT_CONST,   // a constant fluxcc computed (a folded table): `data` holds its values
};

// how --random-weights / --random-inputs fill a buffer (fluxcc's INIT_*)
enum { RT_INIT_DEFAULT, RT_INIT_NORMAL, RT_INIT_UNIFORM, RT_INIT_GRID, RT_INIT_ZEROS, RT_INIT_INTEGERS };

typedef struct {
  const char *name;         // input/output name or safetensors key
  int kind;                 // RT_INPUT ...
  int dtype;                // RT_BF16 ...
  int ndim;
  int64_t shape[RT_MAXDIM];
  int init;                 // RT_INIT_*
  double ia, ib;            // its two arguments
  uint64_t offset;          // RT_OUTPUT / RT_TEMP: byte offset into the arena
  uint64_t bytes;           // prod(shape) * itemsize
  const double *data;       // RT_CONST: the values (exact in the buffer's dtype)
  // --weights fp8: an RT_F8E4M3 weight holds 1 + the index of its per-row
  // scale (f32 [rows], KEY.scale_weight), the scale -(1 + its weight's); 0 else.
  // qfrom: the dtype the model declares for the weight (what random values round to)
  int qpair, qfrom;
} RtBuffer;

typedef struct {
  const char *name;         // the kernel function's name in its source
  const char *file;         // relative to the project: "kernels/0003_r_16_64_16.cl"
  int nargs;                // pointer arguments: the output first, then inputs
  uint32_t global[3];       // number of blocks / work-groups in x, y, z
  uint32_t local[3];        // threads per block / work-group in x, y, z
  uint64_t hash;            // FNV-1a (numbers.h) of the kernel file's bytes as fluxcc wrote them
  uint64_t flops, bytes;    // per launch, as fluxcc counts them (--profile's GFLOPS and GB/s)
} RtKernel;

typedef struct {
  int kernel;               // index into kernels
  int args;                 // index into arg_bufs of the first of kernels[kernel].nargs buffer ids
} RtLaunch;

// An input that a gather (take) reads its ids from: each must be a whole
// number in [0, rows), checked before the first launch (the kernels clamp
// every id into the table, so a bad one would be a wrong row, never a bad read)
typedef struct {
  int buf;                  // the input
  int64_t rows;             // the table's rows
  const char *table;        // its key ("a computed table")
  const char *where;        // the take in the model: "file:line:col"
} RtIds;

typedef struct {
  const char *model;        // the .fdsl it was compiled from
  const char *target;       // "cuda" or "opencl"
  int nbufs;
  const RtBuffer *bufs;
  int nkernels;
  const RtKernel *kernels;
  int nlaunches;
  const RtLaunch *launches;
  const int *arg_bufs;      // buffer ids, consecutive per launch
  uint64_t arena_bytes;     // RT_OUTPUT + RT_TEMP
  uint64_t seed_default;    // seed used with no arguments
  const char *project;      // hash of this compile: its kernel files and launch list
  const char *prelude;      // the kernels' prelude, relative to the project: "kernel_prelude.cl"
  uint64_t prelude_hash;    // FNV-1a of its bytes as fluxcc wrote them
  int nunused;              // key prefixes a weights file may hold that the model does not read
  const char *const *unused;
  int nids;                 // inputs that are gathers' ids
  const RtIds *ids;
  const char *ckpt_weights;   // where --model-dir finds the weights (checkpoint()), or NULL
  const char *ckpt_tokenizer; // ... and the tokenizer folder, or NULL
  const void *table;        // the kernels' table (C: launchers, CUDA: host stubs; kernel_table.*), NULL for OpenCL
} RtSchedule;

// A pipeline (fluxcc pipeline): several programs in one project and one
// binary, run in order, each loaded, run and freed before the next. An input
// of a program may be an output of an earlier one (`latents`: the sampled
// latents of a program that samples).
typedef struct {
  const char *input;        // this program's input
  int from;                 // index of the earlier program
  const char *output;       // that program's output
} RtBind;

typedef struct {
  const char *name;         // "t5": its folder in the project, and its stage in messages
  const RtSchedule *schedule;
  int nbinds;
  const RtBind *binds;
} RtProgram;

typedef struct {
  int nprograms;
  const RtProgram *programs;
} RtPipeline;

// A project defines one of the two (schedule.c, or pipeline.c with each
// program's schedule.c); the other is a weak reference left NULL.
extern const RtSchedule rt_schedule;
extern const RtPipeline rt_pipeline;

#ifdef __cplusplus
}
#endif
#endif
