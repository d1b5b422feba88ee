// fluxcc.h — the one header. One section per source file, in pipeline order.
#ifndef FLUXCC_H
#define FLUXCC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "numbers.h"

#define MAXDIM 8

typedef struct Ctx Ctx;

//
// arena.c — one allocator per compilation; everything is freed at once.
//
typedef struct ArenaBlock ArenaBlock;
typedef struct { ArenaBlock *head; } Arena;

void *arena_alloc(Arena *a, size_t n);          // zeroed, 16-byte aligned
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(Arena *a);

// Growable arrays that live on the heap (graph nodes grow past any fixed size).
#define VEC(T) struct { T *v; int n, cap; }
#define vec_push(vec, x) do { \
    if ((vec).n == (vec).cap) { (vec).cap = (vec).cap ? 2 * (vec).cap : 16; \
      (vec).v = xrealloc((vec).v, (size_t)(vec).cap * sizeof *(vec).v); } \
    (vec).v[(vec).n++] = (x); } while (0)
void *xrealloc(void *p, size_t n);
double now_s(void);                             // monotonic seconds
int cmp_double(const void *a, const void *b);   // qsort, ascending
void *xcalloc(size_t n, size_t size);
// Open path for reading only if it is a regular file of at most max bytes (max < 0: any):
// a FIFO does not block, a directory or device (/dev/zero) is refused. The descriptor,
// or -1 with the reason in why ("is a FIFO (pipe), not a regular file").
int open_regular(const char *path, int64_t max, int64_t *size, char *why, size_t n);
int make_dirs(const char *path, char *err, size_t n);   // mkdir -p; 0, or -1 and why in err
int fault_setting(const char *name, int *n);            // FLUXCC_FAULT item: 1 there (its N in *n), 0 absent, -1 bad (said)

// FNV-1a (numbers.h: shared with the runtime, which checks the kernel files'
// content hashes), the one hash of the compiler (hash-consing tables, kernel
// identity, cache keys): start from FNV_SEED, fold in integers or bytes.
#define FNV_SEED NB_FNV_SEED
static inline uint64_t fnv_mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }
// the seeded random choices (searches, random opts): one step of a 64-bit LCG, the new state
static inline uint64_t lcg_next(uint64_t *s) { return *s = *s * 6364136223846793005ull + 1442695040888963407ull; }
static inline uint64_t fnv_bytes(uint64_t h, const void *p, size_t n) { return nb_fnv(h, p, n); }

// A heap string that grows as it is printed to (kernel sources, generated files).
typedef struct { char *s; size_t n, cap; } Str;
void str_printf(Str *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// write path as temp file + rename: never a half-written file; 0, or -1 and why in err
int write_atomic(const char *path, const char *text, size_t n, char *err, size_t en);
char *read_text(const char *path, size_t *n);   // a whole file, NUL-terminated (heap); NULL and errno if unreadable
const char *base_name(const char *path);        // after the last '/'
void diag_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));  // say, exit 2

//
// diag.c — source files, locations, caret diagnostics.
//
// A location is a byte offset into one global space where every loaded file
// gets its own range, so IR nodes carry a single int32.
typedef struct {
  char *path;       // as the user named it (diagnostics, includes)
  char *name;       // relative to the model's directory (diag_where: dumps, emitted headers, records)
  char *text;       // NUL-terminated contents
  int len;
  int base;         // first location of this file
} SrcFile;

// A file loaded with no requesting location (loc_of_request < 0) is the model:
// its directory becomes the root that diag_where names files relative to, so
// emitted text does not depend on the working directory or the model's path.
int diag_load_file(Ctx *c, const char *path, int loc_of_request);   // file index or -1
int diag_add_source(Ctx *c, const char *name, const char *text);     // in-memory source (prelude)
void diag_error(Ctx *c, int loc, int end, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_note(Ctx *c, int loc, int end, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
const char *diag_where(Ctx *c, int loc, char *buf, size_t n);       // "file:line:col", file relative to the model's directory
void src_escape(Str *o, const char *s, bool literal);   // outside text into a message or emitted source, inert
void log_gist(const char *log, char *err, size_t n);   // a compiler log's error lines, for a one-line message

//
// dtype.c — storage types and conversions.
//
// name, bytes, safetensors' name, whether the DSL names it: the 8-bit floats
// are storage only (F8E4M3: --weights fp8's linear weights; F8E5M2: read from
// a checkpoint, never stored)
#define DTYPES(X) \
  X(BOOL,   "bool",   1, "BOOL",    1) \
  X(F16,    "f16",    2, "F16",     1) \
  X(BF16,   "bf16",   2, "BF16",    1) \
  X(F32,    "f32",    4, "F32",     1) \
  X(F8E4M3, "f8e4m3", 1, "F8_E4M3", 0) \
  X(F8E5M2, "f8e5m2", 1, "F8_E5M2", 0)
enum { DT_NONE = -1,
#define X(e, s, sz, st, dsl) DT_##e,
  DTYPES(X)
#undef X
  DT_COUNT };
extern const char *const dtype_name[];       // "bf16"
extern const char *const dtype_st_name[];    // "BF16" (safetensors)
extern const int dtype_size[];
extern const char *const dtype_rt_name[];    // "RT_BF16" (the emitted runtime's code; only the dtypes a graph holds)
int dtype_from_name(const char *s);          // DSL name or -1
int dtype_from_st_name(const char *s);       // safetensors name or -1 (only the ones we compute in)
double dtype_round(int dt, double x);        // the value x takes when stored as dt
double dtype_load(int dt, const void *p, size_t i);
void dtype_store(int dt, void *p, size_t i, double x);

//
// runtime/safetensors.{h,c} — shared with the emitted runtime.
//
#include "safetensors.h"
#include "flux_rt.h"

//
// ast.c + grammar/fdsl.y — the parse tree.
//
#define AST_KINDS(X) \
  X(INT) X(FLOAT) X(STR) X(NAME) X(LIST) X(BINOP) X(NEG) X(NOT) X(CALL) X(KWARG) \
  X(INDEX) X(SLICE) X(ELLIPSIS) X(MEMBER) X(SCOPED) X(TILDE) \
  X(CONST) X(INPUT) X(OUTPUT) X(PARAM) X(FN) X(ASSIGN) X(FOR) X(IF) X(RETURN) X(INCLUDE) X(BLOCK)
enum {
#define X(k) A_##k,
  AST_KINDS(X)
#undef X
};
typedef struct Ast Ast;
struct Ast {
  int kind;
  int loc, end;           // source span [loc, end)
  int op;                 // BINOP: token code
  char *name;
  int64_t ival;
  double fval;
  Ast *a, *b, *c;         // children by role (see ast_dump)
  Ast *list;              // first of a child list
  Ast *next;              // sibling in a list
};
Ast *ast_new(Ctx *c, int kind, int loc, int end);
void ast_dump(Ctx *c, Ast *n, FILE *out);
const char *binop_name(int op);
// Parse one file (already loaded as file index fi); returns its item list or NULL.
Ast *parse_file(Ctx *c, int fi);

//
// graph.c — the tensor graph: primitive ops on shaped, typed values.
//
#define OPS(X) \
  /* name       kind      text */ \
  X(LOAD,    K_LOAD,    "load") \
  X(CONST,   K_CONST,   "const") \
  X(ARANGE,  K_CONST,   "arange") \
  X(NEG,     K_UNARY,   "neg") \
  X(EXP,     K_UNARY,   "exp") \
  X(LOG,     K_UNARY,   "log") \
  X(SQRT,    K_UNARY,   "sqrt") \
  X(RECIP,   K_UNARY,   "recip") \
  X(SIN,     K_UNARY,   "sin") \
  X(COS,     K_UNARY,   "cos") \
  X(TANH,    K_UNARY,   "tanh") \
  X(ABS,     K_UNARY,   "abs") \
  X(NOT,     K_UNARY,   "not") \
  X(CAST,    K_UNARY,   "cast") \
  X(ADD,     K_BINARY,  "add") \
  X(SUB,     K_BINARY,  "sub") \
  X(MUL,     K_BINARY,  "mul") \
  X(DIV,     K_BINARY,  "div") \
  X(MAX,     K_BINARY,  "max") \
  X(MIN,     K_BINARY,  "min") \
  X(CMPLT,   K_BINARY,  "cmplt") \
  X(CMPLE,   K_BINARY,  "cmple") \
  X(CMPEQ,   K_BINARY,  "cmpeq") \
  X(CMPNE,   K_BINARY,  "cmpne") \
  X(WHERE,   K_TERNARY, "where") \
  X(GATHER,  K_GATHER,  "gather") \
  X(RSUM,    K_REDUCE,  "reduce_sum") \
  X(RMAX,    K_REDUCE,  "reduce_max") \
  X(RESHAPE, K_MOVE,    "reshape") \
  X(PERMUTE, K_MOVE,    "permute") \
  X(EXPAND,  K_MOVE,    "expand") \
  X(SHRINK,  K_MOVE,    "shrink") \
  X(PAD,     K_MOVE,    "pad") \
  X(UNFOLD,  K_MOVE,    "unfold")
// K_GATHER: rows of a table (src[0], [n, ...]) picked by whole-number ids (src[1]):
// out[i..., j...] = table[ids[i...], j...], shape ids' + the table's after its first
enum { K_LOAD, K_CONST, K_UNARY, K_BINARY, K_TERNARY, K_REDUCE, K_MOVE, K_GATHER };
enum {
#define X(e, k, s) OP_##e,
  OPS(X)
#undef X
  OP_COUNT };
extern const char *const op_name[];
extern const int op_kind[];

typedef struct {
  int64_t d[MAXDIM];
  int n;
} Shape;

typedef struct {
  uint8_t op, dt;
  int32_t src[3];
  Shape shape;
  int64_t arg[2 * MAXDIM];  // reduce: axis flags; permute: perm; shrink/pad: (lo, hi) pairs; unfold: axis, size
  double c;                 // CONST value
  int32_t buf;              // LOAD: index into g->bufs
  int32_t loc;              // DSL location (first creation)
} Node;

// A named buffer the graph reads: a model input, a parameter, or a folded
// constant (its values computed at compile time, see fold_constants).
enum { BUF_INPUT, BUF_PARAM, BUF_CONST };
typedef struct {
  char *name;               // input name, safetensors key, or "folded.N"
  int kind;                 // BUF_*
  double *data;             // BUF_CONST: the values, already rounded to dt
  int dt;
  Shape shape;
  int loc;
  int init;                 // INIT_*: how `fluxcc init` fills it (from `~ dist(a, b)`)
  double ia, ib;
  int node;
  int decl_dt;              // --weights fp8: the dtype the model declares for a weight stored as f8e4m3 (fp8.c)
} Buf;
extern const char *const buf_kind_name[];   // "input", "param", "const"
enum { INIT_DEFAULT, INIT_NORMAL, INIT_UNIFORM, INIT_GRID, INIT_ZEROS, INIT_INTEGERS };  // = NB_* of runtime/numbers.h

typedef struct {
  char *name;
  int node;
  int loc;
} Output;

typedef struct Graph {
  VEC(Node) nodes;
  VEC(Buf) bufs;
  VEC(Output) outs;
  VEC(const char *) unused; // key prefixes a checkpoint may hold that the model does not read (unused_keys)
  const char *ckpt_weights;   // checkpoint(): the weights' path in a model folder of the HF layout, or NULL
  const char *ckpt_tokenizer; // ... and its tokenizer folder's, or NULL
  int32_t *hash;            // CSE table of node ids, open addressing
  int hcap;
} Graph;

int g_node(Ctx *c, Node *proto);     // hash-consed: identical nodes share one id
int64_t shape_numel(const Shape *s);
int graph_below_views(const Graph *g, int id);  // the node id is, through casts and movement ops
void shape_str(const Shape *s, char *buf, size_t n);
void graph_dump(Ctx *c, FILE *out);
void graph_free(Graph *g);

//
// fp8.c — --weights fp8: linear weights stored as f8e4m3 with per-row scales.
//
int weights_fp8(Ctx *c);   // the rewrite of c->g; returns how many weights it stores so

//
// elaborate.c — AST → graph.
//
int elaborate(Ctx *c, const char *path);   // 0 ok, else errors were reported
int elaborate_source(Ctx *c, const char *name, const char *text);  // from memory (tests, fuzzing)

//
// interpret.c — the reference interpreter (float64, rounding to each node's dtype).
//
typedef struct {
  int dt;
  Shape shape;
  double *v;
} HostTensor;
// Values of the graph's buffers (in g->bufs order) in, outputs (g->outs order) out.
int interpret(Ctx *c, HostTensor *bufs, HostTensor *outs);
const char *interpret_gemm(void);   // what computes its sums of products: "OpenBLAS dgemm" or "built-in loops"
// Constant subgraphs computed once in float64 and rounded once (see interpret.c);
// the graph is rebuilt in order, node ids change. Run after elaboration.
void fold_constants(Ctx *c);

//
// model_io.c — weights/inputs files against a model: init, load, save.
//
int model_init(Ctx *c, uint64_t seed, const char *wpath, const char *ipath);
int model_load(Ctx *c, const char *wpath, const char *ipath, HostTensor *bufs);
int model_save_outputs(Ctx *c, const char *path, HostTensor *outs);

//
// symbolic.c — integer index expressions with simplification.
//
// An expression is a sum c0 + sum(coef_i * atom_i); atoms are loop
// variables, floor-divisions and modulos of sums, and comparisons. Every
// node knows its value range, which is what lets div/mod fold away.
enum { S_CONST, S_VAR, S_SUM, S_DIV, S_MOD, S_LT, S_AND, S_ASSUME };
typedef struct {
  uint8_t kind;
  int32_t a;                // DIV/MOD/LT: the sum; AND: left; VAR: variable number
  int32_t b;                // AND: right
  int64_t c;                // CONST value; DIV/MOD divisor; LT bound (a < c)
  int32_t terms, nterms;    // SUM: slice of sym_terms
  int64_t lo, hi;           // value range, inclusive
  uint32_t vars;            // bit v set if variable v occurs inside
} SNode;
typedef struct { int64_t coef; int32_t atom; } STerm;
typedef struct {
  VEC(SNode) n;
  VEC(STerm) t;
  int32_t *hash;
  int hcap;
  int64_t var_size[32];     // sizes of the loop variables (range [0, size))
  int nvars;
} Sym;
int sym_const(Sym *s, int64_t c);
int sym_var(Sym *s, int v);                 // variable v, range [0, var_size[v])
int sym_add(Sym *s, int a, int b);
int sym_mul(Sym *s, int a, int64_t c);
int sym_div(Sym *s, int a, int64_t c);      // floor division, c > 0
int sym_mod(Sym *s, int a, int64_t c);
int sym_lt(Sym *s, int a, int64_t c);       // 1 if a < c else 0
int sym_ge(Sym *s, int a, int64_t c);       // 1 if a >= c
int sym_and(Sym *s, int a, int b);
int sym_assume(Sym *s, int a, int64_t lo, int64_t hi);   // a, known to lie in [lo, hi] wherever it is used
int64_t sym_coef(Sym *s, int e, int var, bool *linear);  // coefficient of var if e is linear in it
// Rebuild e of `from` in `to`, with variable v replaced by expression var_expr[v] of `to`.
int sym_translate(Sym *from, int e, Sym *to, const int *var_expr);
bool sym_uses(Sym *s, int e, int var);
void sym_str(Sym *s, int e, const char *const *var_names, char *buf, size_t n);
void sym_free(Sym *s);
void sym_copy(Sym *dst, const Sym *src);    // a deep copy

//
// schedule.c — graph → kernels: fusion, realization, axis merging, dedup,
// buffer liveness and the memory plan.
//
// A kernel is a small expression DAG (KOps) over buffer loads, evaluated at
// every point of its iteration space: output axes first, reduce axes last.
// A GATHER is a load of argument `slot` (a table of `rows` rows of `stride`
// elements) at idx + row * stride, row = its src[0]'s value (an id) clamped to
// [0, rows): never outside the table (the runtime refuses bad ids of inputs).
enum { KO_LOAD = OP_COUNT, KO_ACC, KO_IDX, KO_PADSEL, KO_STORE, KO_GATHER };
typedef struct {
  int op;                   // an OP_* of the graph (unary/binary/ternary/const/reduce) or KO_*
  int dt;
  int32_t src[3];
  int32_t slot;             // LOAD/STORE/GATHER: which kernel argument
  int32_t idx, valid;       // LOAD/STORE/IDX/PADSEL/GATHER: symbolic index and validity (-1: always)
  double c;                 // CONST
  int64_t rows, stride;     // GATHER: the table's rows and a row's elements
  bool in_loop;             // depends on a reduce variable
} KOp;

typedef struct {
  int buf;                  // schedule buffer id
  int dt;
  char name[48];            // its parameter in the kernel's source: p_ + the DSL buffers' common name (schedule.c)
} KArg;

#define MAXAXES 24
#define MAXOPTS 24
// Roles of the axes of a kernel's iteration space, in the order they are kept:
// [global | local] [group | reduce | unroll | reduce-vector] [upcast] [vector] [tensor-core tile m, n, k]
// A vector axis (VEC) is an upcast computed as one floatN value: vector
// registers and arithmetic, vloadN/vstoreN where its addresses are consecutive.
// A reduce-vector axis (RVEC) is an unrolled reduce held the same way: N partial
// sums per output in one vector accumulator, added across lanes after the loop
// (dot products of contiguous K vectors). One list: the enum, the names in
// kernel headers, the marks of `--dump kernels` and the prefix of each axis'
// variable (gidx0, ridx1, ...; a group's threads are numbered with the locals).
#define AXIS_ROLES(X) X(GLOBAL, "global", "", "gidx") X(LOCAL, "local", "l", "lidx") X(GROUP, "group", "g", "lidx") \
  X(REDUCE, "reduce", "r", "ridx") X(UNROLL, "unroll", "u", "un") X(RVEC, "reduce-vector", "rv", "rvec") \
  X(UPCAST, "upcast", "up", "up") X(VEC, "vector", "v", "vec") X(TCM, "tc-m", "tm", "tcm") X(TCN, "tc-n", "tn", "tcn") \
  X(TCK, "tc-k", "tk", "tck")
enum {
#define X(e, name, mark, var) AX_##e,
  AXIS_ROLES(X)
#undef X
};
extern const char *const axis_role_name[], *const axis_role_mark[], *const axis_role_var[];
// QROWS, KSTEP, RSPLIT are the fused attention's (KERNEL_ATTN) and apply to it alone, with TC and STAGE
#define OPTS(X) X(LOCAL) X(UPCAST) X(UNROLL) X(GROUP) X(GROUPTOP) X(PADTO) X(SWAP) X(NOLOCALS) X(TC) X(STAGE) X(VEC) \
  X(RVEC) X(QROWS) X(KSTEP) X(RSPLIT)
enum {
#define X(o) OPT_##o,
  OPTS(X)
#undef X
  OPT_COUNT
};
// their names, from the list (a copy per file that uses it: the fused attention's
// refusals name opts too, and attention.c sits below optimize.c)
static const char *const opt_names[] = {
#define X(o) #o,
  OPTS(X)
#undef X
};
typedef struct { int op, axis, amount; } Opt;   // axis: among output axes, or among reduce axes (UNROLL, GROUP)

// A fused attention (KERNEL_ATTN): o = softmax(q k^T (scale_op) scale) v per batch index,
// computed tile by tile with an online softmax (attention.c), never storing the
// scores. Its axes are [batch... | Lq, E | Lk, D] (variables z0.., i, e, j, d of
// `sym`, and r where QK-norm's row statistics are folded into the loads); its
// KOps are the three operands (v: a load and casts; q and k: any expression,
// RoPE and QK-norm folded, their row statistics as ACCs over r) and the store.
enum { KERNEL_PLAIN, KERNEL_ATTN };
typedef struct {
  int nb;                   // batch axes
  int q, k, v;              // KOps: q at (z, i, d), k at (z, j, d), v at (z, j, e)
  int scale_op;             // OP_DIV or OP_MUL
  double scale;
  int8_t pcast[4], npcast;  // casts applied to the probabilities before the product with v, innermost first
  int8_t ocast[4], nocast;  // casts applied to the output before its store
  int bm, bn, tp;           // QROWS: query rows per block; KSTEP: keys per step; RSPLIT: threads per row
  bool tc, stage;           // TC: both products on mma.sync (16 rows per warp); STAGE: K/V tiles double-buffered
} Attn;

typedef struct {
  int kind;                 // KERNEL_PLAIN or KERNEL_ATTN (then `at` describes it)
  Attn at;
  char name[160];           // after opts, e.g. r_32_168_8_2_192 (+ n1, n2 ... for clashes)
  char orig_name[160];      // before opts: r_2560_21504_3072
  int nout, nred;           // output / reduce axes before opts
  int naxes;
  int64_t dims[MAXAXES];    // the iteration space
  uint8_t role[MAXAXES];    // AX_* of each axis; variable i of `sym` is axis i
  int64_t orig_dims[MAXAXES];  // before opts (dims of nout + nred axes)
  Opt opts[MAXOPTS];
  int nopts;
  bool nolocals;
  int tc_a, tc_b;           // TC: the product's operands (KOps) varying along m and along n
  int tc_dt;                // TC: their dtype (bf16 or f16; f32 for tf32 m16n8k8); -1 without TC
  int tc_scale;             // TC: a KOp constant over the reduce that multiplied an operand (--weights fp8's
                            // row scale), applied to the accumulators instead; -1 none
  bool stage;               // STAGE: the block's A/B tiles go through shared memory
  VEC(KOp) ops;             // topological; the last is the STORE
  VEC(KArg) args;           // slot 0 is the output
  Sym sym;
  int red_op;               // OP_RSUM / OP_RMAX / -1
  int loc;                  // DSL location of the stored node
  int node;                 // the graph node it stores
  uint64_t hash;            // of its text before opts: equal kernels share a source
  int64_t flops, bytes;     // per launch
  const struct Target *target;  // the schedule's
} Kernel;

// A realized tensor: a model input, a parameter, an output or an intermediate.
typedef struct {
  char *name;
  int kind;                 // RT_INPUT, RT_PARAM, RT_OUTPUT, RT_TEMP (runtime/flux_rt.h)
  int dt;
  Shape shape;
  int node;                 // graph node
  int gbuf;                 // graph Buf for inputs/params, else -1
  uint64_t bytes, offset;   // offset in the arena (outputs and temps)
  int first, last;          // launches that write it first and read it last
} SBuf;

// A launch: which unique kernel, on which buffers. Its code is the unique
// kernel's only (what a method optimizes), so no launch holds a copy of it.
typedef struct {
  int kernel;               // index into Schedule.k
  VEC(KArg) args;           // its buffers, slot 0 the output
  int loc;                  // DSL location of the call it comes from
} Launch;

// An input a gather reads its ids from (through views and casts): the binary
// checks, before the first launch, that each is a whole number below rows
typedef struct {
  int buf;                  // the input's schedule buffer
  int64_t rows;             // the table's rows
  const char *table;        // what the table is: its key, or "a computed table"
  int loc;                  // the take
} IdCheck;

typedef struct {
  VEC(Kernel) k;            // the unique kernels (args: those of its first launch); one per launch until dedup
  VEC(Launch) l;            // in launch order
  VEC(SBuf) bufs;
  uint64_t arena_bytes;     // the plan's peak (outputs + intermediates)
  uint64_t naive_bytes;     // the same without reuse
  struct Tuned *tuned;      // per unique kernel, what a search measured (NULL for raw, hc, tc)
  const struct Target *target;   // set before schedule_build
  int tile_n;               // outputs along n a matmul's block computes (0: the target's): see prologue_ok
  VEC(IdCheck) ids;         // inputs that are gathers' ids
} Schedule;

int schedule_build(Ctx *c, Schedule *s);
void schedule_names(Schedule *s);                      // after opts: names from shapes, clashes numbered
void schedule_dump(Ctx *c, Schedule *s, FILE *out);   // --dump schedule
void kernels_dump(Ctx *c, Schedule *s, FILE *out);    // --dump kernels
void schedule_free(Schedule *s);

//
// optimize.c — opt actions on a kernel's axes, and the methods built from them.
//
void kernel_copy(Kernel *dst, const Kernel *src);  // deep: the searches hold many variants
void kernel_free(Kernel *k);
void kernel_reindex(Kernel *k, Sym *to, const int *map);  // move every index into `to`, variable v -> map[v]
int opt_apply(Kernel *k, Opt o, char *why, size_t n);  // 0 applied; -1 refused (reason in why)
void opt_hc(Kernel *k);                              // hand-coded heuristics
void opt_tc(Kernel *k, bool tf32);                   // TC where it applies (f32 too with tf32), warps, staging
bool tc_refusal(const Kernel *k, bool tf32, char *why, size_t n);  // a matmul-shaped kernel TC refuses: why
void opt_random(Kernel *k, uint64_t *rng, int steps); // a random legal sequence (tests)
void opt_str(const Opt *o, char *buf, size_t n);      // "UPCAST(1,4)"
void kernel_rename(Kernel *k);                        // name from the current axes
void axis_name(const Kernel *k, int axis, char *buf, size_t n);  // gidx0, lidx1, ridx0, ...
int kernel_threads(const Kernel *k);                  // threads per block

//
// device_opencl.c, device_cuda.c, device_c.c — the measuring layer the
// searches use: compile one kernel's source, run it on buffers of seeded
// random inputs, time it, read its output back. OpenCL and CUDA (NVRTC +
// driver API) are loaded with dlopen, so fluxcc builds and runs where neither
// is installed; the C target builds shared objects with the system compiler.
// A missing library or device is one message from open().
//
typedef struct Device Device;
typedef struct DeviceOps {
  const char *name;                          // "opencl", "cuda", "c"
  // compile_only: the compiler alone (NVRTC needs no GPU); kflags: the target's kernel
  // compiler flags where it has them (C); NULL and the reason in err
  Device *(*open)(bool compile_only, const char *kflags, char *err, size_t n);
  void (*close)(Device *d);
  // "device name" and "toolchain versions", for records and cache keys
  void (*describe)(Device *d, char *dev, size_t n, char *toolchain, size_t m);
  // thread-safe: build `src`, which defines kernel `fn`; NULL and the log's gist in err
  void *(*compile)(Device *d, const char *src, const char *fn, char *err, size_t n);
  // where a program costs much more than its kernels (PoCL): build `src`, which defines
  // the nk kernels fns, as one program into bins; -1 (none built) and the gist in err.
  // May be NULL (each candidate compiled alone)
  int (*compile_batch)(Device *d, const char *src, const char *const *fns, int nk, void **bins, char *err, size_t n);
  void (*release)(Device *d, void *bin);
  // one kernel's arguments: nargs buffers of bytes[i] each (replacing earlier ones)
  int (*alloc)(Device *d, int nargs, const size_t *bytes, char *err, size_t n);
  int (*upload)(Device *d, int arg, const void *src, char *err, size_t n);
  int (*download)(Device *d, int arg, void *dst, char *err, size_t n);
  // one launch of bin on the arguments, waited for; *us = its device time, after
  // a cache flush (us NULL: an untimed launch, as a warm-up child's, not flushed)
  int (*launch)(Device *d, void *bin, const uint32_t grid[3], const uint32_t block[3], double *us, char *err, size_t n);
  // after a failed launch: where the kernel's fault lost the device (CUDA's
  // sticky errors), a new one with the same buffers allocated, their contents
  // lost; 0 renewed (upload again), 1 nothing lost, -1 it cannot go on (why
  // in err). May be NULL (a launch's failure loses nothing)
  int (*renew)(Device *d, char *err, size_t n);
  // where an emitted project runs on what this layer measures with, when that is
  // not its own `flux`: the make goal and binary (CUDA's stand-in: "flux-emu"); may be NULL
  const char *(*program)(void);
  // its driver builds most of a kernel at the first launch, one build at a time per
  // process (PoCL): the searches build a round's candidates ahead in child processes
  bool warm_children;
} DeviceOps;
extern const DeviceOps device_opencl, device_cuda, device_c;

//
// warm.c — a round's candidates built ahead in `fluxcc --warm-worker TARGET`
// child processes (each launched once on zeroed buffers), so that the driver's
// on-disk cache holds them when the search builds and runs them. Only time.
//
#define SLOW_BUILD_MARK "// FLUXCC_FAULT: a build that takes forever"  // slow-build-every=N: a warm child never finishes a program with it
#define SLOW_LAUNCH_MARK "// FLUXCC_FAULT: a first launch that takes forever"  // slow-launch-every=N: nor the next kernel's first launch
#define WARM_FN 176  // a batched kernel's name (NAME_bI) with its NUL: warm.c reads it with "%175s"
typedef struct {
  const char *fn;
  uint32_t grid[3], block[3];
  size_t len;                         // its text's length (its share of its program's build)
  bool late;                          // set by warm_build: its first launch ran past the limit
} WarmKernel;
typedef struct {                     // a program, its nk kernels (1: compile, else compile_batch)
  const char *src;
  int nk, nargs;
  WarmKernel *k;
  const size_t *bytes;                // its kernel's arguments' sizes (nargs)
} WarmJob;
typedef struct WarmPool WarmPool;
WarmPool *warm_start(const struct Target *T, int nprocs);   // the children, kept for a whole search
// kernels built (jobs of several kernels may mix); limit_s > 0: a child over
// it is killed (a new one takes its place): still building a job's program
// after limit_s, late[job] is set; in a kernel's first launch after limit_s
// less the kernel's share of the program's build, that kernel's late is set
// and the kernels after it are sent again; ready (may be NULL): called with
// each job a child has built, as it does, so that the caller's own build
// overlaps the others'
typedef void WarmReady(void *arg, int job);
int warm_build(WarmPool *p, const WarmJob *jobs, int n, double limit_s, bool *late, WarmReady *ready, void *arg);
void warm_stop(WarmPool *p);
// the seconds warm_build has waited on the children so far, and the share of
// that time (0-1) the children had a job: how far more of them could help
void warm_usage(const WarmPool *p, double *waited_s, double *busy);
double warm_predict_s(const WarmPool *p, size_t bytes);  // a build's likely time here (0: not known)
int warm_worker(const char *target);   // the child: jobs on stdin until EOF

//
// features.c — the cost model's input: a fixed-length vector per optimized
// kernel, from its IR and its uops (never its text). One list: the names
// (--dump features, models), the meanings. Bump FEATURE_VERSION with any
// change to the list or to how a value is computed.
//
#define FEATURE_VERSION 2
#define FEATURES(X) \
  X(size_global, "log2 product of the grid axes' sizes") X(size_local, "... of the local (thread) axes") \
  X(size_group, "... of the group (threads sharing a reduction) axes") X(size_reduce, "... of the looped reduce axes") \
  X(size_unroll, "... of the unrolled reduce axes") X(size_rvec, "... of the reduce-vector axis") \
  X(size_upcast, "... of the upcast axes") X(size_vec, "... of the vector axis") X(size_tcm, "... of the tensor-core tile's m") \
  X(size_tcn, "... its n") X(size_tck, "... its k") \
  X(outputs_per_thread, "outputs a thread computes (upcast x vector)") X(vector_width, "widest vector (VEC or RVEC) lanes") \
  X(flops, "the kernel's FLOPs") X(bytes, "bytes it must move (inputs once, output once)") \
  X(intensity, "log2 FLOPs per byte") X(tensor_cores, "1: on tensor cores (mma)") X(tf32, "1: tf32 tensor cores") \
  X(staged, "1: operand tiles staged through shared memory") X(nolocals, "1: NOLOCALS") X(reduction, "1: it reduces") \
  X(out_16bit, "1: a 16-bit output") X(nopts, "opts applied (count)") X(attention, "1: the fused attention") \
  X(attn_rows, "attention: query rows per block") X(attn_keys, "attention: keys per step") \
  X(attn_split, "attention: threads per row") \
  X(load_broadcast, "share of the loads every thread of a row makes at one address") \
  X(load_coalesced, "share of the loads at consecutive addresses across neighbouring threads") \
  X(load_strided, "share of the loads strided (or not linear) across neighbouring threads") \
  X(load_k_contiguous, "share of the loads consecutive along the innermost reduce axis") \
  X(store_coalesced, "1: the store is consecutive across neighbouring threads") X(in_16bit, "share of the loads of 16-bit data") \
  X(load_gather, "share of the loads at a row a loaded id picks (a gather)") \
  X(loads_kernel, "loads in the kernel's expression") \
  X(loads, "scalar loads per thread (loop trip counts multiplied in)") X(vector_loads, "vector loads per thread") \
  X(stores, "stored values per thread") X(alu, "arithmetic per thread (lanes counted)") X(accumulators, "accumulator lanes per thread") \
  X(shared_loads, "shared-memory reads per thread") X(barriers, "barriers per thread") X(loop_iters, "innermost loop trips per thread") \
  X(loop_depth, "loop nest depth") X(mma, "mma instructions per thread") X(uops, "uops in the program (code size)") \
  X(shared_bytes, "shared memory per block") X(groups, "blocks (work-groups)") X(block_threads, "threads per block") \
  X(work_items, "threads in all") X(alu_per_load, "arithmetic per load")
enum {
#define X(name, what) +1
  NFEATURES = 0 FEATURES(X)
#undef X
};
//
// search.c — the methods (one table), and the measured searches over the opt
// actions (beam.c, tree.c): every candidate compiled (concurrently), run on
// seeded random inputs, validated against RAW's output and timed (measure.c);
// the finals (finals.c); records of every candidate; a tuning cache on disk
// and replay of a records.json with no device (cache.c). Their shared state
// is search.h's.
//
enum { CAND_OK, CAND_WRONG, CAND_FAILED, CAND_SLOW, CAND_PREDICTED };   // SLOW: stopped early, 3x the best;
                                                                     // PREDICTED: scored by the cost model, not measured
// why RL timed a candidate (records' "pick"): ranked first by the model, the
// exploration share, a peer's kernel (rl_peers), or one of HC's untimed
// children in the batch before its patience ends (the sweep)
#define PICKS(X) X(PICK_NONE, "") X(PICK_RANK, "rank") X(PICK_EXPLORE, "explore") X(PICK_PEER, "peer") X(PICK_SWEEP, "sweep")
// why RL stopped searching a kernel (records' "stopped")
#define STOPS(X) X(STOP_NONE, "") X(STOP_BUDGET, "budget") X(STOP_PATIENCE, "patience") X(STOP_STALL, "stall")
#define X(e, name) e,
enum { PICKS(X) NPICKS };
enum { STOPS(X) NSTOPS };
#undef X
#define FINAL_ROUNDS 7       // the finals' rounds (finals.c)
typedef struct Method Method;
typedef struct {
  Opt opts[MAXOPTS];
  int nopts;
  char name[160];           // after opts
  const Method *from;       // the method that proposed it: raw, hc, tc, beam, mcts, rl
  int round;                // beam round (0: raw, hc, tc)
  int status;
  double tmin, tmed;        // microseconds, over `runs` timed launches
  double tmax;              // the slowest of them: with tmin and tmed its spread (0: records written before it was kept)
  int runs;
  double err;               // relative L2 distance of its output from RAW's
  double at_s;              // when it was measured: seconds into this kernel's search
  char why[320];            // rejection reason
  int pick;                 // PICK_*: why RL timed it
  bool has_feat, scored;    // feat holds its features; score is the cost model's (higher: predicted faster)
  float feat[NFEATURES];
  double score;
  int fin_rounds;           // re-timed in the finals (finals.c): rounds, 0 if not a finalist
  double fin_us[FINAL_ROUNDS];      // each round's value (the least of its launches), us
  double fin_med, fin_lo, fin_hi;   // their median, lowest and highest
} Cand;

typedef struct Tuned {      // one unique kernel's search: what records, the cache and replay hold
  const Method *method;     // whose kernel was chosen
  Opt opts[MAXOPTS];
  int nopts;
  double tmin, tmed;        // of the chosen candidate, microseconds
  int runs;
  double wall_s;            // search wall time
  int cached;               // taken from the tuning cache in this run
  bool budgeted;            // RL's forward budget gave it `allotted` timed candidates, as `share` of the forward
  int allotted;
  int stop;                 // STOP_*: why RL stopped
  double share;
  bool finals;              // the choice was made in the finals: candidates re-timed side by side, interleaved
  int first, incumbent;     // with finals: the first-measured winner and the best fixed method (candidate indices)
  int chosen;               // the candidate chosen, -1: none measured
  VEC(Cand) cands;
} Tuned;

// A method: fixed opts (apply), or a measured search over the opt actions
// (search, run after the fixed baselines), or BEST (every search, then all
// of them timed side by side). One line each, in the order of compare's
// table (RAW first: the reference of every check): name, kind, apply,
// search, help, built, compared, tc_notes, tile_n (see Method). search.c
// expands it into methods[] (its searches are beam.c's and tree.c's), and
// fluxcc.h into M_raw, M_hc...; records hold a method by its name. A new
// method is one line and its function.
#define METHODS(X) \
  X(raw, METHOD_FIXED, m_raw, NULL, "no optimization: one thread per output element", true, true, false, 0) \
  X(hc, METHOD_FIXED, m_hc, NULL, "tinygrad's hand-coded heuristics", true, true, false, 0) \
  X(tc, METHOD_FIXED, m_tc, NULL, "tensor cores where a kernel is a bf16/f16 matmul (f32 too with --tf32), else raw", \
    true, true, true, 128) \
  X(beam, METHOD_SEARCH, NULL, beam_search, "beam search over the opt actions, each candidate validated and timed on the device", \
    true, true, false, 0) \
  X(mcts, METHOD_SEARCH, NULL, mcts_search, \
    "Monte Carlo tree search over the opt actions (--budget N, default 100), validated and timed", true, true, false, 0) \
  X(rl, METHOD_SEARCH, NULL, rl_search, \
    "MCTS guided by the learned cost model (policy prior, leaf values), timing only its top picks; candidates go where " \
    "the forward's time is (--budget N, default 48, the heaviest kernel's)", \
    true, true, false, 0) \
  X(best, METHOD_BEST, NULL, NULL, "per kernel the fastest of raw, hc, tc, beam, mcts and rl, timed side by side", true, true, \
    false, 0) \
  X(random, METHOD_FIXED, m_random, NULL, "random legal opts (--seed S), for testing", true, false, false, 128)  // TC half the time
enum { METHOD_FIXED, METHOD_SEARCH, METHOD_BEST };
typedef struct Search Search;
struct Method {
  const char *name;         // --opt NAME; records and cache entries name a method so
  int kind;                 // METHOD_*
  void (*apply)(Kernel *k, uint64_t seed, bool tf32);   // METHOD_FIXED: its opts
  void (*search)(Search *S, int used);                  // METHOD_SEARCH: after the baselines' `used` candidates
  const char *what;         // for --help
  bool built;               // false: refused with "not implemented yet"
  bool compared;            // a row of `fluxcc compare`; a fixed one is also a baseline of every search and of BEST
  bool tc_notes;            // say on stderr which matmul-shaped kernels stay off the tensor cores, and why
  int tile_n;               // its matmuls' n-extent per block (tensor-core tiles), else 0: the target's
};
extern const Method methods[];
// methods[M_raw]: a method the code names (RAW the reference, the searches their candidates' `from`)
#define X(name, ...) M_##name,
enum { METHODS(X) };
#undef X
const Method *method_find(const char *name);

typedef struct {
  const Method *method;
  const struct Target *target;
  int beam;                 // --beam K: entries kept per round
  int budget;               // --budget N: timed candidates per kernel (0: no limit)
  int jobs;                 // --jobs N: concurrent compiles
  int runs;                 // timed launches per candidate
  int build_limit_s;        // --build-limit S: a candidate a child has not built in S seconds is refused (0: none)
  const char *cache_dir;    // NULL: no cache
  const char *records;      // --records FILE: replay, no device
  const char *kernels;      // --kernels 3,17: search only these unique kernels (the others stay RAW, untimed)
  const char *model;        // --model FILE|auto|none (NULL: the method's default, auto for rl, none for the others)
  int measure;              // --measure K: with a model, candidates timed per round (0: the method's default)
  int shard_i, shard_n;     // --shard I/N: search only unique kernels u with u % N == I (shard_n 0: all)
  bool quiet, tf32, compile_only;
  bool from_raw;            // --from raw: the study's searches (BEAM and MCTS from RAW alone, each kernel's choice its
                            // first measurement); else they start from RAW, HC and TC, and finalists are re-timed
  uint64_t seed;
} SearchOpts;

// What a search says of itself, for records.json, provenance.json and the
// kernel headers: filled in by the search (or from the records replayed)
typedef struct {
  char device[256], toolchain[256];
  char model_used[600];     // the cost model that guided it (file and hash), "" for none
  double wall_s;
  const char *replayed;     // --records FILE: the results were read from it, not measured (NULL: measured)
} SearchInfo;

struct cJSON;
int search_schedule(Ctx *c, Schedule *s, const SearchOpts *so, SearchInfo *info);
void tuned_to_json(const Tuned *t, const Kernel *k, struct cJSON *into);   // records.json and cache entries
int tuned_from_json(const struct cJSON *j, Tuned *t, char *err, size_t n);   // 0, or -1 and why (records.c checks every field)
void tuned_to_cache(const Tuned *t, const Kernel *k, struct cJSON *into);  // a cache entry's kernel: opts as text, then the above
// records.c: a tuning-cache entry, as cache.c stores it (key, device, feature version, kernel) and reads it
// back (key NULL: any kernel's); 0, or -1 and why
struct cJSON *cache_entry(const char *key, const char *device, const Tuned *t, const Kernel *k);
int cache_entry_read(const struct cJSON *j, const char *key, Tuned *t, char *err, size_t n);
// records.c: what replay and the cost model's training read of a records.json or a cache entry
enum { FILE_OTHER, FILE_RECORDS, FILE_CACHE_ENTRY };
typedef struct {
  int kind;                 // FILE_*: by its fields ("kernels", else "key")
  const char *method, *target, *device, *toolchain;   // NULL where absent
  int tile_n;               // 0 where absent (records older than tile_n)
  bool has_version;         // feature_version, a number
  double feature_version;
  int nk;                   // records: its kernels
} RecordsHead;
void records_head(const struct cJSON *root, RecordsHead *h);
typedef struct {
  const char *name_before_opts;   // NULL where absent
  bool searched;            // it has search results ("chosen"): tuned_from_json reads them
} RecordsKernel;
// kernel u's entry, or NULL past the last
const struct cJSON *records_kernel(const struct cJSON *root, int u, RecordsKernel *k);
// records.c: JSON read with bounded memory (128 MiB, 4 Mi values and keys, 32 deep), or NULL and why
struct cJSON *json_load(const char *path, char *err, size_t n);
struct cJSON *json_parse(const char *text, size_t len, char *err, size_t n);  // json_load's checks on text in memory
struct cJSON *records_read(const char *path, char *err, size_t n);  // the same, and a records.json fluxcc could have written
// key's string as one printable line (no ESC, CR, NUL...) shorter than max bytes; NULL and why ("'key' is ...")
const char *json_line(const struct cJSON *o, const char *key, size_t max, char *err, size_t n);
int optimize_schedule(Ctx *c, Schedule *s, const Method *m, uint64_t seed, bool tf32);  // a fixed method (else -1)

//
// lower.c — kernel → linear list of uops (the code before any dialect).
//
#define UOPS(X) \
  X(PARAM) X(SPECIAL) X(FCONST) X(LOAD) X(ALU) X(ROUND) X(DEFACC) X(RANGE) X(ACCUM) X(ENDRANGE) \
  X(STORE) X(INDEXF) X(SMEM) X(SSTORE) X(SLOAD) X(BARRIER) X(IF) X(ENDIF) X(WMMA) X(COPY) X(COMMIT) X(WAIT) \
  X(GEP) X(PACK)
enum {
#define X(u) U_##u,
  UOPS(X)
#undef X
};
typedef struct {
  uint8_t op, dt;           // dt: storage dtype for PARAM/LOAD/STORE/ROUND
  uint8_t vw;               // vector width (VEC): 0 a scalar, else lanes 0..vw-1 (LOAD/STORE: at arg, arg+1, ...)
                            // GEP: lane arg of src[0]; PACK: a vector of the vw scalars in extra[arg...]
  int16_t alu;              // ALU/DEFACC/ACCUM: OP_*; SPECIAL: 0 block index, 1 thread index;
                            // SMEM/SSTORE/SLOAD: 0 group partials, 1 mma emulation tiles, 2 staged tiles (f32),
                            // 3 staged tiles in the operands' 16-bit storage, double buffered (COPY: 8 elements)
  int32_t src[3];
  int64_t arg;              // PARAM slot; SPECIAL axis; ICONST value; RANGE size
  int64_t arg2;             // SPECIAL: 0 block, 1 thread; SPECIAL dim (x=0,y=1,z=2) in arg3
  int32_t arg3;
  double f;                 // FCONST
  int64_t rows, stride;     // LOAD with src[0] >= 0, a gather: row src[0] (clamped to rows) of `stride` elements
  char name[16];            // the variable name it renders to
} UOp;

typedef struct {
  VEC(UOp) u;
  VEC(int) extra;           // WMMA operands: 8 A, 4 B, 4 accumulators, then the lane's (g, t) syms; PACK lanes
  uint32_t global[3], local[3];
  int64_t smem;             // shared-memory floats
} Program;

void lower_kernel(Ctx *c, Schedule *s, Kernel *k, Program *p);
bool uop_is_value(int op);   // a value (dead code when nothing reads it), not an effect or a scope
void uops_dump(Kernel *k, Program *p, FILE *out);
void program_free(Program *p);

extern const char *const feature_name[NFEATURES], *const feature_what[NFEATURES];
void kernel_features(Kernel *k, const Program *p, float *f);  // f[NFEATURES]
void features_dump(Ctx *c, Schedule *s, FILE *out);                // --dump features

//
// costmodel.c — the learned cost model (XGBoost, loaded with dlopen): ranks
// one kernel's candidates from their features; trained from records.json
// files and tuning-cache entries, and online during a search.
//
typedef struct {
  VEC(float) x;             // rows x NFEATURES
  VEC(float) y;             // relevance: higher is faster
  VEC(unsigned) group;      // rows per kernel
  int rows, files, skipped; // files (kernels) read; cache entries skipped (unreadable, other feature version)
  char device[256];         // the one device they were measured on
} TrainSet;
typedef struct CostModel CostModel;
bool cost_model_available(char *err, size_t n);     // XGBoost loads; else why
int trainset_add(TrainSet *t, const Cand *c, int n);  // one kernel's candidates as a group: rows added
int trainset_read(TrainSet *t, const char *path, const char *device, char *err, size_t n);  // a file or a cache directory
void trainset_free(TrainSet *t);
CostModel *cost_model_train(const TrainSet *t, uint64_t seed, char *err, size_t n);
CostModel *cost_model_clone(CostModel *m, char *err, size_t n);
int cost_model_update(CostModel **m, const TrainSet *t, const char *device, uint64_t seed, char *err, size_t n);  // more trees
int cost_model_refit(CostModel **fit, CostModel *base, const TrainSet *earlier, const Cand *c, int n, const char *device, uint64_t seed,
                     char *err, size_t en);  // RL: base + trees fitted to earlier groups and c[0..n)
int cost_model_predict(CostModel *m, const float *rows, int nrows, double *score, char *err, size_t n);
int cost_model_save(CostModel *m, const char *path, char *err, size_t n);   // atomically
CostModel *cost_model_load(const char *path, const char *device, char *err, size_t n);  // device NULL: any
const char *cost_model_describe(const CostModel *m, char *buf, size_t n);
uint64_t cost_model_hash(const CostModel *m);
void cost_model_cache_path(const char *dir, const char *device, char *path, size_t n);
void cost_model_free(CostModel *m);
int cmd_train(const char *const *inputs, int n, const char *out, uint64_t seed, bool quiet);  // fluxcc train
// model_check.c: a model file's header numbers and its XGBoost JSON checked before XGBoost reads it; 0, or -1 and why
int cost_model_check(const struct cJSON *file, char *err, size_t n);

//
// target.c — one entry per target: its dialect (the source text render.c and
// attention.c write), limits, templates folder, kernel table and measuring
// device. A new target is one entry there plus its templates/<name>/ folder
// (and a DeviceOps for the searches).
//
enum { TARGET_CUDA, TARGET_OPENCL, TARGET_C, NTARGETS };
typedef struct {
  const char *kernel;            // before the kernel's name; %u: threads per block (bounds_total), else its 3 sizes
  bool bounds_total;
  const char *param_fmt;         // qualifiers and type for a pointer parameter: %s = element type
  const char *const_param_fmt;   // the same, read-only
  const char *type[DT_COUNT];    // element storage types
  const char *group[3], *thread[3];
  const char *smem, *barrier;    // barrier "": one work-item per group, none needed
  // shared memory: store (array, index, value), load (array, index), 16-bit staged load (sfx, index)
  const char *sstore, *sload, *sload16;
  const char *stage16;           // the 16-bit staging array's declaration: %s type, %lld elements
  // cp.async: copy (index into tc_stage16, argument, its index), commit, wait for all but the latest group
  const char *copy, *commit, *wait;
  const char *un[OP_COUNT];      // unary ops: %s = the argument
  const char *fmax, *fmin;
  const char *unroll, *head;     // the fused attention: a loop to unroll; text before its kernel
  bool vectors;                  // floatN types and arithmetic (VEC); without them a vector is rendered lane by lane
  bool mma;                      // mma.sync instructions; without them TC is emulated through local memory
  bool group_loops;              // groups are loops of the kernel function (OpenMP), one work-item each;
                                 // the file ends with NAME_launch(void *const *args) for callers by table
} Dialect;
typedef struct Target {
  const char *name;         // --target NAME, and its folder in templates/
  const char *ext;          // of kernel files
  const char *prelude;      // the helpers every kernel file uses (templates/NAME/)
  bool include_prelude;     // kernel files #include it (else the runtime builds each after it: OpenCL)
  int tile_n;               // outputs along n a matmul's block computes, without tensor cores:
                            // a GPU block's thread tile; a CPU work-item's register tile
  bool cpu;                 // runs on CPU cores: HC tiles registers and vectors, not threads
  int max_threads;          // per block / work-group (1: no LOCAL, GROUP or TC)
  int max_smem;             // bytes of shared memory without opting in to more
  bool tc;                  // tensor cores (or their emulation): TC applies
  const Dialect *dialect;
  const struct DeviceOps *device;  // the searches' measuring layer
  const char *kflags;       // the kernels' compiler flags (C: the Makefile's KFLAGS, and every search candidate's)
  const char *table;        // the generated kernel table's template (NULL: none), written without ".in"
  const char *table_sym;    // its symbol (a pipeline's programs add _NAME)
  const char *table_decl;   // its declaration in C, for schedule.c (printf: the symbol)
  // one kernel's lines in that table: its declaration and its entry
  void (*table_entry)(Str *decl, Str *entry, const Kernel *k);
} Target;
extern const Target targets[];
const Target *target_find(const char *name);              // NULL: no such target
void target_names(char *buf, size_t n);                   // "cuda, opencl or c"
const char *template_text(const Target *T, const char *name);  // templates/<T>/name (T NULL: templates/name), embedded
const char *template_next(const Target *T, size_t *i, const char **text);  // templates/<T>/ file by file, *i from 0
char *template_fill(const char *tmpl, const char *const kv[][2], int n);  // each {{key}} replaced by its value
void kernel_file(const Schedule *s, int u, char *buf, size_t n);  // "kernels/0003_r_16_64.cl" (the schedule's target)
void dialect_kernel(Str *o, const Dialect *D, const uint32_t local[3]);  // the signature up to the name

//
// render.c — uops → source text in a target's dialect.
//
char *render_kernel(Ctx *c, Schedule *s, Kernel *k, Program *p);  // heap string: body only


//
// attention.c — the fused attention kernel (KERNEL_ATTN): its opt actions,
// launch geometry and source text in both dialects.
//
void attn_init(Kernel *k);                                // default tiles, before any opt
int attn_opt(Kernel *k, Opt o, char *why, size_t n);      // QROWS, KSTEP, RSPLIT, TC, STAGE; 0 applied, -1 refused
void attn_hc(Kernel *k);                                  // sensible tiles for its sizes
void attn_tc(Kernel *k);                                  // tensor cores where the dtypes allow, else attn_hc
void attn_random(Kernel *k, uint64_t *rng);               // a random legal sequence (tests)
int attn_actions(Opt *a);                                 // the search's actions for this kind
void attn_rename(Kernel *k);
void attn_lower(Kernel *k, Program *p);                   // grid, block, shared memory (no uops)
char *attn_render(Kernel *k, Program *p);     // heap string: the kernel's text
int attn_operand_dt(const Kernel *k, int kop);            // the dtype the operand's value is held in (exactly)
void attn_stats(const Kernel *k, int *n);                // row statistics (ACCs) folded into q's and k's loads: n[0], n[1]

//
// emit.c — the project directory.
//
typedef struct {
  const char *model, *out_dir;
  const Method *method;     // --opt
  const Target *target;
  int argc;
  char **argv;
  const SearchInfo *search; // searched methods: device, toolchain (NULL otherwise)
  const char *prog;         // a pipeline's program: its folder, and the prefix of its symbols (NULL: a plain project)
  // set by emit_begin / emit_program
  const char *stage;        // the folder being written, swapped in for out_dir at the end
  char stage_buf[4200], dirname[4096];
  int lock;                 // the parent folder, flock'ed while the project is written
  char project[17];         // the program's hash, in schedule.c and every kernel file
  int fail_write, nwrites;  // test switch FLUXCC_FAULT=write-fail=N
} EmitOpts;
int emit_project(Ctx *c, Schedule *s, EmitOpts *o);   // emit_begin, emit_program, emit_end
int emit_begin(EmitOpts *o);                          // the staging folder
int emit_program(Ctx *c, Schedule *s, EmitOpts *o);   // a program's kernels, schedule, table and records into it
int emit_text(EmitOpts *o, const char *name, const char *text);   // another file of the project (atomic)
int emit_end(EmitOpts *o, int rc);                    // rc 0: the runtime and provenance, then swapped in; else removed

//
// pipeline.c — `fluxcc pipeline`: the text-to-image stages as one project.
//
typedef struct {
  const Method *method;
  const SearchOpts *search; // searched methods
  SearchInfo *info;         // what their searches say of themselves (EmitOpts.search)
  int max_errors, no_reuse, tile_n, quiet;
  uint64_t seed;
  bool tf32;
  bool fp8;                 // --weights fp8: the transformer's linear weights
} PipelineOpts;
int pipeline_stage(const char *name);   // --NAME: its index, or -1
#define PIPELINE_STAGES 4
int cmd_pipeline(const char *const *files, const PipelineOpts *po, EmitOpts *eo);   // exit status
char *records_text(Ctx *c, Schedule *s, const EmitOpts *o, Program *progs);  // records.c: records.json (heap)

//
// report.c — `fluxcc report DIR` from DIR/records.json.
//
struct cJSON *records_load(const char *dir);  // DIR/records.json, or NULL (said why)
double json_num(const struct cJSON *o, const char *key);       // a number field, 0 if absent
const char *json_str(const struct cJSON *o, const char *key);  // a string field, "?" if absent
void records_finals(const struct cJSON *root, int *decided, int *against);  // kernels the finals decided, and against the first measurement
typedef struct {
  const char *device;       // --device NAME (a model in report.c's table; h200 if NULL)
  const char *peak_tflops;  // --peak-tflops X: one compute peak for every kernel instead of the model's
  const char *peak_gbs;     // --peak-gbs Y: the bandwidth instead of the model's
  const char *trace;        // --trace FILE: measured times from the project's ./flux --profile N --trace FILE
} ReportOpts;
int report(const char *dir, bool dot, const ReportOpts *ro);  // exit status; dot: the picture (dot_report)

//
// dot.c — pictures as graphviz text (--format dot): deterministic, diffable.
//
void dot_graph(Ctx *c, const char *title, FILE *out);   // a node per graph node, an edge per operand
// a node per launch (name, method, opts, FLOPs, bytes, fused ops, weights), an edge per buffer read (size)
void dot_schedule(Ctx *c, Schedule *s, const char *title, const Method *method, FILE *out);
int dot_report(const struct cJSON *records, FILE *out); // a node per unique kernel, edges in launch order

//
// compare.c — `fluxcc compare`: every method emitted, built, checked and timed; the methods table.
//
typedef struct {
  const Target *target;
  int budget, beam, bench;
  uint64_t seed;
  const char *cache;        // NULL: --no-cache
  const char *methods;      // comma-separated subset, NULL: all
  bool tf32, quiet, from_raw;   // from_raw: the searches get --from raw
} CompareOpts;
int compare(Ctx *c, const char *self, const char *model, const char *dir, const CompareOpts *co);   // exit status

//
// The context: all state of one compilation.
//
struct Ctx {
  Arena arena;
  VEC(SrcFile) files;
  int next_base;
  const char *root; // the model's directory with its '/' ("" for the working directory)
  int nerrors;
  int max_errors;            // errors past this many are counted, not shown
  bool quiet_notes;          // the last error was not shown: neither are its notes
  FILE *err;                // where diagnostics go (stderr)
  int no_include;           // refuse `include` (fuzzing)
  int no_reuse;             // every intermediate its own memory (to compare kernels one by one)
  Graph g;
};

void ctx_init(Ctx *c);   // ctx.c
void ctx_free(Ctx *c);

#endif
