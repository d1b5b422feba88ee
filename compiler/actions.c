// actions.c — what the searches (beam.c, tree.c) may do: tinygrad's action
// list on our axes, where a search starts, and the searches' random numbers.
#include "search.h"

#include <math.h>

// tinygrad's action list, on our axis numbering (output axes for LOCAL,
// UPCAST, PADTO, SWAP; reduce axes for UNROLL, GROUP)
int actions(Opt *a, bool tf32) {
  int n = 0;
  static const int up[] = {0, 2, 3, 4, 5, 7, 8}, unr[] = {0, 2, 4, 7, 8}, vec[] = {2, 4, 8, 16}, loc[] = {2, 3, 4, 8, 13, 16, 29, 32};
  static const int gtop[] = {13, 16, 28, 29, 32, 49, 64, 256}, grp[] = {0, 4, 8, 16};
  for (int ax = 0; ax < 6; ax++)
    for (size_t i = 0; i < sizeof up / sizeof *up; i++) a[n++] = (Opt){OPT_UPCAST, ax, up[i]};
  for (int ax = 0; ax < 5; ax++)
    for (size_t i = 0; i < sizeof unr / sizeof *unr; i++) a[n++] = (Opt){OPT_UNROLL, ax, unr[i]};
  for (int ax = 0; ax < 6; ax++)  // ours: an upcast as one vector (floatN; tinygrad gets float4 from its upcasts)
    for (size_t i = 0; i < sizeof vec / sizeof *vec; i++) a[n++] = (Opt){OPT_VEC, ax, vec[i]};
  for (int ax = 0; ax < 3; ax++)  // ours: a reduce as vectors of partial sums (dot products of contiguous rows)
    for (size_t i = 0; i < sizeof vec / sizeof *vec; i++) a[n++] = (Opt){OPT_RVEC, ax, vec[i]};
  for (int ax = 0; ax < 6; ax++)
    for (size_t i = 0; i < sizeof loc / sizeof *loc; i++) a[n++] = (Opt){OPT_LOCAL, ax, loc[i]};
  for (int ax = 0; ax < 3; ax++) {
    for (size_t i = 0; i < sizeof gtop / sizeof *gtop; i++) a[n++] = (Opt){OPT_GROUPTOP, ax, gtop[i]};
    for (size_t i = 0; i < sizeof grp / sizeof *grp; i++) a[n++] = (Opt){OPT_GROUP, ax, grp[i]};
    a[n++] = (Opt){OPT_PADTO, ax, 32};
  }
  for (int x = 0; x < 5; x++)
    for (int y = x + 1; y < 5; y++) a[n++] = (Opt){OPT_SWAP, x, y};
  a[n++] = (Opt){OPT_NOLOCALS, 0, 0};
  a[n++] = (Opt){OPT_TC, 0, 0};
  if (tf32) a[n++] = (Opt){OPT_TC, 0, 1};
  a[n++] = (Opt){OPT_STAGE, 0, 0};
  n += attn_actions(a + n);  // the fused attention's (refused by every other kernel, as those are by it)
  return n;
}

uint64_t next_rand(uint64_t *rng) { return lcg_next(rng) >> 33; }

// Where a search starts (BEAM's first beam, MCTS's root's children): RAW,
// HC's and TC's kernels where they validated, each only within SLOW_FACTOR of
// the fastest of them: the budget's first round is a random subset of the
// starts' children, and a start that slow spends it on children that cannot
// catch up (flux-tiny on PoCL: TC's emulated mma 4.4x HC's forward, RAW's
// matmuls 30-70x). --from raw: RAW alone, as the study's searches.
// Returns how many; start[0..n) and their times.
int starts(Search *S, const Kernel **start, double *start_t) {
  const Kernel *k[] = {&S->hc, &S->tc, &S->base};
  const double t[] = {S->hc_t, S->tc_t, S->raw};
  bool on[] = {S->hc.naxes && !S->so->from_raw, S->tc.naxes && !S->so->from_raw, true};
  double fastest = INFINITY;
  for (int i = 0; i < 3; i++)
    if (on[i] && t[i] < fastest) fastest = t[i];
  int n = 0;
  for (int i = 2; i >= 0; i--)  // RAW first, as the study's searches
    if (on[i] && (t[i] <= SLOW_FACTOR * fastest || !isfinite(fastest))) start[n] = k[i], start_t[n++] = t[i];
  return n;
}
