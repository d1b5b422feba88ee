// tree.c — MCTS and RL, two searches over one tree of opt actions: a node
// is the kernel its path of actions makes.
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RL_PEERS 2            // RL: earlier kernels of the same shape whose chosen kernels it starts from

// MCTS (tinygrad's): a node is the kernel its path of actions makes; t is
// the best time in its subtree, n its visits. Selection takes an unvisited
// child at random if there is one, else samples children by a softmax
// (temperature 0.5) of UCB = -t/t_best + sqrt(2 ln N / n); the chosen leaf
// is compiled, validated and timed (failure: infinitely slow; a source seen
// before shares its time) and its time and visit go up the path.
typedef struct {
  int parent, ch0, nch;     // children are nodes ch0 .. ch0+nch-1 once expanded
  Opt act;
  bool expanded;
  double t;
  int n;
} MNode;
typedef VEC(MNode) MTree;
enum { MCTS_START_HC, MCTS_START_TC, MCTS_START_RAW };  // a start node's act: {-1, MCTS_START_*}

static void mcts_kernel(Search *S, int node, MTree *T, Kernel *k) {
  int path[MAXOPTS + 1], np = 0;
  for (int x = node; x > 0 && np <= MAXOPTS; x = T->v[x].parent) path[np++] = x;
  kernel_copy(k, &S->base);
  char why[256];
  for (int i = np - 1; i >= 0; i--) {  // legal: it was checked on expansion; op -1 is a start (MCTS_START_*), -2 - v kernel v's chosen (rl_peers)
    const Opt a = T->v[path[i]].act;
    if (a.op == -1 && a.axis == MCTS_START_HC) opt_hc(k);
    else if (a.op == -1 && a.axis == MCTS_START_TC) opt_tc(k, S->so->tf32);
    else if (a.op < -1)
      for (int v = -2 - a.op, o = 0; o < S->tuned[v].nopts; o++) opt_apply(k, S->tuned[v].opts[o], why, sizeof why);
    else if (a.op >= 0) opt_apply(k, a, why, sizeof why);  // (MCTS_START_RAW: the base kernel as it is)
  }
}

// A kernel as a candidate that has not been rendered: its name, opts and features.
static void cand_of(Search *S, Kernel *k, const Method *from, int round, Cand *c) {
  Program p;
  kernel_rename(k);
  lower_kernel(S->c, NULL, k, &p);
  kernel_features(k, &p, c->feat);
  program_free(&p);
  c->has_feat = true;
  snprintf(c->name, sizeof c->name, "%s", k->name);
  c->from = from;
  c->round = round;
  c->nopts = k->nopts;
  memcpy(c->opts, k->opts, sizeof k->opts);
}

// A node's legal actions become its children (from T->n on); with kids,
// each child's name, opts and features too, in the same order.
static void expand(Search *S, MTree *T, int x, const Opt *acts, int nacts, const Method *from, int round, Cands *kids) {
  Kernel k;
  mcts_kernel(S, x, T, &k);
  T->v[x].expanded = true, T->v[x].ch0 = T->n;
  for (int a = 0; a < nacts; a++) {
    Kernel c;
    char why[256];
    kernel_copy(&c, &k);
    if (opt_apply(&c, acts[a], why, sizeof why) == 0) {
      MNode m = {.parent = x, .act = acts[a], .t = INFINITY};
      vec_push(*T, m);
      if (kids) {
        Cand cd = {0};
        cand_of(S, &c, from, round, &cd);
        vec_push(*kids, cd);
      }
    }
    kernel_free(&c);
  }
  T->v[x].nch = T->n - T->v[x].ch0;
  kernel_free(&k);
}

// MCTS with a model: of a node's n new children only the `keep` best-scored
// can become leaves to time; the others are marked visited and infinitely
// slow (never chosen), and the next ones by score recorded as predicted.
static void mcts_keep_top(Search *S, MNode *ch, Cand *kids, int n, int keep) {
  float *rows = xcalloc((size_t)n * NFEATURES + 1, sizeof *rows);
  double *sc = xcalloc((size_t)n + 1, sizeof *sc);
  Ranked *order = xcalloc((size_t)n + 1, sizeof *order);
  for (int i = 0; i < n; i++) memcpy(rows + (size_t)i * NFEATURES, kids[i].feat, sizeof kids[i].feat);
  score_rows(S, S->model, rows, n, sc);
  for (int i = 0; i < n; i++) kids[i].score = sc[i], kids[i].scored = true, order[i] = (Ranked){sc[i], i};
  qsort(order, (size_t)n, sizeof *order, by_rank);
  for (int r = keep; r < n; r++) {
    MNode *m = &ch[order[r].i];
    m->n = 1, m->t = INFINITY;
    if (r < keep + PREDICTED_KEPT / 4) record_predicted(S, &kids[order[r].i], r + 1, n);
  }
  free(order), free(rows), free(sc);
}

void mcts_search(Search *S, int used) {
  const SearchOpts *so = S->so;
  int budget = so->budget ? so->budget : 100;
  Opt acts[MAXACTIONS];
  int nacts = actions(acts, so->tf32);
  MTree T = {0};
  MNode root = {.parent = -1, .t = S->raw, .n = 1};
  vec_push(T, root);
  const Kernel *start[3];
  double start_t[3];
  int nstart = starts(S, start, start_t);
  if (nstart > 1 || start[0] != &S->base) {  // the root chooses a start (starts()), each measured
    T.v[0].expanded = true, T.v[0].ch0 = T.n, T.v[0].n = 0, T.v[0].t = INFINITY;
    for (int i = 0; i < nstart; i++) {
      int which = start[i] == &S->hc ? MCTS_START_HC : start[i] == &S->tc ? MCTS_START_TC : MCTS_START_RAW;
      MNode m = {.parent = 0, .act = {-1, which, 0}, .t = start_t[i], .n = 1};
      vec_push(T, m);
      T.v[0].nch++, T.v[0].n++;
      if (start_t[i] < T.v[0].t) T.v[0].t = start_t[i];
    }
  }
  uint64_t rng = so->seed * 0x9e3779b97f4a7c15ull + (uint64_t)S->u + 7;
  for (int iter = 0; used < budget && iter < 20 * budget; iter++) {
    int x = 0;
    for (;;) {
      if (!T.v[x].expanded) {  // the legal actions from here become children
        Cands kids = {0};        // with a model: each child's features, to score
        bool guided = S->model_all && S->model;
        expand(S, &T, x, acts, nacts, &methods[M_mcts], iter + 1, guided ? &kids : NULL);
        if (guided) mcts_keep_top(S, &T.v[T.v[x].ch0], kids.v, T.v[x].nch, so->measure ? so->measure : 4);
        free(kids.v);
      }
      MNode *p = &T.v[x];
      if (p->nch == 0) break;
      int unvisited = 0;
      for (int i = 0; i < p->nch; i++) unvisited += T.v[p->ch0 + i].n == 0;
      if (unvisited) {
        int pick = (int)(next_rand(&rng) % (uint64_t)unvisited);
        for (int i = 0; i < p->nch; i++)
          if (T.v[p->ch0 + i].n == 0 && pick-- == 0) x = p->ch0 + i;
        break;
      }
      double w[MAXACTIONS], top = -INFINITY, sum = 0;
      for (int i = 0; i < p->nch; i++) {
        MNode *c = &T.v[p->ch0 + i];
        w[i] = -c->t / S->best + sqrt(2.0) * sqrt(log((double)p->n) / c->n);
        if (w[i] > top) top = w[i];
      }
      for (int i = 0; i < p->nch; i++) sum += w[i] = isfinite(top) ? exp((w[i] - top) / 0.5) : 1.0;
      double r = (double)next_rand(&rng) / 2147483648.0 * sum;
      int pick = p->nch - 1;
      for (int i = 0; i < p->nch; i++)
        if ((r -= w[i]) < 0) {
          pick = i;
          break;
        }
      x = p->ch0 + pick;
    }
    double t = T.v[x].t;
    if (T.v[x].n == 0) {  // a new leaf: evaluate it
      Job j = {0};
      mcts_kernel(S, x, &T, &j.k);
      j.cand.from = &methods[M_mcts];
      j.cand.round = iter + 1;
      render_job(S, &j);
      int s = seen_find(S, job_hash(&j));  // the seen sources are known by job_hash (the kernel's text)
      if (s >= 0) t = S->seen.v[s].t;
      else {
        S->stop_ref = S->best;
        used += evaluate(S, &j, 1);
        Cand *c = &S->t->cands.v[S->t->cands.n - 1];
        t = c->status == CAND_OK ? c->tmin : INFINITY;
      }
      kernel_free(&j.k);
      free(j.src);
    }
    for (int p = x; p >= 0; p = T.v[p].parent) {
      T.v[p].n++;
      if (t < T.v[p].t) T.v[p].t = t;
    }
  }
  free(T.v);
}

// RL: AlphaZero-style search over the same tree of actions. The policy is
// the cost model: a node's children get priors from a softmax of their
// scores, and a node not yet measured has the value the model predicts for
// it (its score mapped onto the measured values, below). Each batch runs
// RL_SIMS descents by PUCT (Q + c P sqrt(N) / (1 + n), Q the best value in
// the subtree), each expanding one node, then times the unmeasured nodes the
// model ranks highest and one picked at random among the next 4 K (the
// exploration share), and refits the model to every measurement so far
// (cost_model_refit) before the next batch. It stops at the budget or after
// RL_PATIENCE batches that time nothing faster. Values are best time / time,
// so 1 is the best seen. The first batch times its peers' kernels (rl_peers)
// before the model's picks; such a search starts where one of its shape
// ended, and stops after RL_PATIENCE_PEERED batches without a gain. The
// batch that would end it (one more without a gain) times HC's children the
// model left untimed first, best-ranked first, as BEAM's first round does:
// the model can rank a whole family of children above BEAM's first step
// (flux-tiny's MLP down-projection: 2.1x slower for it).
#define RL_SIMS 6
#define RL_CPUCT 1.5
#define RL_PATIENCE 3       // batches in a row that time nothing faster: the search stops (as a BEAM round that finds nothing)
#define RL_PATIENCE_PEERED 2  // the same for a kernel whose first batch had peers: it starts where a search of its shape ended
typedef struct {
  bool measured;
  double t;                 // measured time (INFINITY: invalid or failed)
  double score, prior;      // the model's score; the policy's share among its siblings
  double best;              // the best value in its subtree (measured or predicted)
  float feat[NFEATURES];
} RInfo;
typedef VEC(RInfo) RInfos;
typedef struct { double s, v; } Calib;

static int by_s(const void *a, const void *b) {
  const Calib *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

// The measured nodes' (score, value) pairs made monotone in the score (pool
// adjacent violators): the map from a score to a predicted value.
static int calibrate(Search *S, const RInfos *R, Calib *c) {
  int n = 0;
  for (int i = 0; i < R->n; i++)
    if (R->v[i].measured) c[n++] = (Calib){R->v[i].score, isfinite(R->v[i].t) ? S->best / R->v[i].t : 0};
  qsort(c, (size_t)n, sizeof *c, by_s);
  int w[n + 1], m = 0;
  for (int i = 0; i < n; i++) {
    c[m] = c[i], w[m] = 1;
    while (m > 0 && c[m - 1].v > c[m].v) {  // pool with the previous block
      c[m - 1].v = (c[m - 1].v * w[m - 1] + c[m].v * w[m]) / (w[m - 1] + w[m]), c[m - 1].s = c[m].s, w[m - 1] += w[m];
      m--;
    }
    m++;
  }
  return m;
}

static double predicted_value(const Calib *c, int n, double s) {
  if (n == 0) return 0.5;
  if (s <= c[0].s) return c[0].v;
  for (int i = 1; i < n; i++)
    if (s <= c[i].s) return c[i - 1].v + (c[i].v - c[i - 1].v) * (s - c[i - 1].s) / (c[i].s - c[i - 1].s);
  return c[n - 1].v;
}

static double rl_value(Search *S, const RInfo *r, const Calib *c, int nc) {
  if (r->measured) return isfinite(r->t) ? S->best / r->t : 0;
  return predicted_value(c, nc, r->score);
}

// the model's scores of the nodes from `from` on, and each expanded node's children's priors
static void rl_rescore(Search *S, CostModel *fit, MTree *T, RInfos *R, int from) {
  int n = R->n - from;
  float *rows = xcalloc((size_t)n * NFEATURES + 1, sizeof *rows);
  double *sc = xcalloc((size_t)R->n + 1, sizeof *sc);
  for (int i = 0; i < n; i++) memcpy(rows + (size_t)i * NFEATURES, R->v[from + i].feat, sizeof R->v[from + i].feat);
  score_rows(S, fit, rows, n, sc + from);
  for (int i = from; i < R->n; i++) R->v[i].score = sc[i];
  for (int i = 0; i < from; i++) sc[i] = R->v[i].score;
  for (int x = 0; x < T->n; x++) {
    MNode *p = &T->v[x];
    if (!p->expanded || p->nch == 0) continue;
    double top = -INFINITY, mean = 0, var = 0, sum = 0;
    for (int i = 0; i < p->nch; i++) top = fmax(top, sc[p->ch0 + i]), mean += sc[p->ch0 + i] / p->nch;
    for (int i = 0; i < p->nch; i++) var += (sc[p->ch0 + i] - mean) * (sc[p->ch0 + i] - mean) / p->nch;
    double tau = fmax(sqrt(var), 1e-3);  // scores are ranks of no fixed scale: a softmax of standardized scores
    for (int i = 0; i < p->nch; i++) sum += R->v[p->ch0 + i].prior = exp((sc[p->ch0 + i] - top) / tau);
    for (int i = 0; i < p->nch; i++) R->v[p->ch0 + i].prior /= sum;
  }
  free(rows), free(sc);
}

// a node's legal actions become its children, each with its features
static void rl_expand(Search *S, MTree *T, RInfos *R, int x, const Opt *acts, int nacts) {
  Cands kids = {0};
  expand(S, T, x, acts, nacts, &methods[M_rl], 0, &kids);
  for (int i = 0; i < kids.n; i++) {
    RInfo r = {.t = INFINITY, .best = 0};
    memcpy(r.feat, kids.v[i].feat, sizeof r.feat);
    vec_push(*R, r);
  }
  free(kids.v);
}

static bool same_opts(const Opt *a, int na, const Opt *b, int nb) {
  return na == nb && !memcmp(a, b, sizeof *a * (size_t)na);
}

// RL's peers: the kernels chosen for earlier kernels of this one's shape in
// this run (the same name before opts), where their opts apply here and are
// not HC's, as children of RAW (op -2 - v: kernel v's chosen opts) that its
// first batch times before any the model picks: what a search of a sibling
// found is the likeliest start. At most RL_PEERS, the latest first; without
// them (the first of a shape, a search of one kernel) RL is as before.
// Returns how many.
static int rl_peers(Search *S, MTree *T, RInfos *R) {
  int peer[RL_PEERS], n = 0;
  for (int v = S->u - 1; v >= 0 && S->tuned && n < RL_PEERS; v--) {
    const Tuned *t = &S->tuned[v];
    if (t->nopts == 0 || t->cands.n == 0 || strcmp(t->cands.v[0].name, S->base.name)) continue;
    bool ok = !same_opts(t->opts, t->nopts, S->hc.opts, S->hc.nopts);
    for (int p = 0; p < n; p++) ok = ok && !same_opts(t->opts, t->nopts, S->tuned[peer[p]].opts, S->tuned[peer[p]].nopts);
    Kernel k;
    char why[256];
    kernel_copy(&k, &S->base);
    for (int o = 0; ok && o < t->nopts; o++) ok = opt_apply(&k, t->opts[o], why, sizeof why) == 0;
    if (ok) {
      peer[n++] = v;
      MNode m = {.parent = 0, .act = {-2 - v, 0, 0}, .t = INFINITY};
      RInfo r = {.t = INFINITY};
      Cand cd = {0};
      cand_of(S, &k, &methods[M_rl], 0, &cd);
      memcpy(r.feat, cd.feat, sizeof r.feat);
      vec_push(*T, m);
      vec_push(*R, r);
      T->v[0].nch++;
    }
    kernel_free(&k);
  }
  return n;
}

// RL_SIMS descents by PUCT from the root, each expanding the node it ends at
// and sending that node's value up its path
static void rl_descend(Search *S, CostModel *fit, MTree *T, RInfos *R, const Calib *cal, int nc, const Opt *acts, int nacts) {
  for (int sim = 0; sim < RL_SIMS; sim++) {  // descents by PUCT, each expanding one node
    int x = 0;
    while (T->v[x].expanded && T->v[x].nch > 0) {
      MNode *p = &T->v[x];
      int pick = p->ch0;
      double top = -INFINITY, sq = sqrt((double)p->n + 1);
      for (int i = p->ch0; i < p->ch0 + p->nch; i++) {
        double q = T->v[i].n ? R->v[i].best : rl_value(S, &R->v[i], cal, nc);
        double u = q + RL_CPUCT * R->v[i].prior * sq / (1 + T->v[i].n);
        if (u > top) top = u, pick = i;
      }
      x = pick;
    }
    if (!T->v[x].expanded) {
      int from = R->n;
      rl_expand(S, T, R, x, acts, nacts);
      rl_rescore(S, fit, T, R, from);
    }
    double v = rl_value(S, &R->v[x], cal, nc);
    for (int p = x; p >= 0; p = T->v[p].parent) T->v[p].n++, R->v[p].best = fmax(R->v[p].best, v);
  }
}

// At the end, the best-ranked nodes left unmeasured into the records (with
// a model), as predicted; order has room for every node
static void rl_record_unmeasured(Search *S, CostModel *fit, MTree *T, RInfos *R, Ranked *order, int batch) {
  rl_rescore(S, fit, T, R, 0);
  int no = 0;
  for (int i = 0; i < R->n; i++)
    if (!R->v[i].measured) order[no++] = (Ranked){R->v[i].score, i};
  qsort(order, (size_t)no, sizeof *order, by_rank);
  // a node no batch picked may be another path to a kernel timed already: not a prediction
  for (int i = 0, kept = 0; i < no && kept < PREDICTED_KEPT && fit; i++) {
    Job j = {0};
    mcts_kernel(S, order[i].i, T, &j.k);
    if (seen_find(S, kernel_text_hash(S, &j.k)) < 0) {
      cand_of(S, &j.k, &methods[M_rl], batch, &j.cand);
      j.cand.score = order[i].s, j.cand.scored = true;
      record_predicted(S, &j.cand, ++kept, no);
    }
    kernel_free(&j.k);
  }
}

void rl_search(Search *S, int used) {
  const SearchOpts *so = S->so;
  int budget = so->budget ? so->budget : RL_BUDGET, per = so->measure ? so->measure : 4;
  if (S->allot) {  // the forward budget: this kernel's allotment after its baselines
    if (used + S->allot[S->u] < budget) budget = used + S->allot[S->u];
    S->t->budgeted = true, S->t->allotted = budget > used ? budget - used : 0, S->t->share = S->share[S->u];
    if (used >= budget) {  // its best baseline it is
      S->t->stop = STOP_BUDGET;
      return;
    }
  }
  Opt acts[MAXACTIONS];
  int nacts = actions(acts, so->tf32);
  MTree T = {0};
  RInfos R = {0};
  MNode root = {.parent = -1, .t = S->raw};
  RInfo r0 = {.measured = true, .t = S->raw};
  memcpy(r0.feat, S->t->cands.v[0].feat, sizeof r0.feat);  // RAW's, rendered first
  vec_push(T, root);
  vec_push(R, r0);
  rl_expand(S, &T, &R, 0, acts, nacts);
  int hc = -1, peer0, npeer;
  for (int i = 1; S->hc.naxes && i < S->t->cands.n; i++)  // HC's kernel, measured, is one more child of RAW (as BEAM starts from both)
    if (S->t->cands.v[i].from == &methods[M_hc] && S->t->cands.v[i].status == CAND_OK) {
      MNode m = {.parent = 0, .act = {-1, MCTS_START_HC, 0}, .t = S->hc_t};
      RInfo r = {.measured = true, .t = S->hc_t};
      memcpy(r.feat, S->t->cands.v[i].feat, sizeof r.feat);
      vec_push(T, m);
      vec_push(R, r);
      T.v[0].nch++;
      hc = T.n - 1;
      break;
    }
  peer0 = T.n;  // the peers after it, children of RAW too (a node's children are contiguous)
  npeer = rl_peers(S, &T, &R);
  if (hc >= 0)
    rl_expand(S, &T, &R, hc, acts, nacts);  // HC's children from the start, as RAW's: BEAM's first round expands both
  uint64_t rng = so->seed * 0x9e3779b97f4a7c15ull + (uint64_t)S->u + 11;
  CostModel *fit = NULL;
  char err[400];
  uint64_t mseed = so->seed + (uint64_t)S->u;
  if (cost_model_refit(&fit, S->model, &S->online, S->t->cands.v, S->t->cands.n, S->info->device, mseed, err, sizeof err) && !S->said_predict)
    fprintf(stderr, "fluxcc: warning: the cost model: %s (the search goes on without it)\n", err), S->said_predict = true;
  Calib *cal = NULL;
  int stall = 0, no_gain = 0, patience = npeer ? RL_PATIENCE_PEERED : RL_PATIENCE;
  for (int batch = 1; used < budget && stall < 3 && no_gain < patience; batch++) {
    rl_rescore(S, fit, &T, &R, 0);
    cal = xrealloc(cal, sizeof *cal * ((size_t)R.n + 1));
    int nc = calibrate(S, &R, cal);
    rl_descend(S, fit, &T, &R, cal, nc, acts, nacts);
    // the unmeasured nodes by score: the top ones timed, and one at random
    Ranked *order = xcalloc((size_t)R.n + 1, sizeof *order);
    int no = 0, nsweep = 0, sweep_of = hc >= 0 ? hc : 0;
    bool peers = batch == 1 && npeer, sweep = no_gain == patience - 1;
    for (int i = 0; i < R.n; i++)
      if (!R.v[i].measured) order[no++] = (Ranked){peers && i >= peer0 && i < peer0 + npeer ? INFINITY : R.v[i].score, i};
    qsort(order, (size_t)no, sizeof *order, by_rank);
    for (int i = 0; sweep && i < no; i++)  // the sweep: HC's untimed children to the front, in rank order
      if (T.v[order[i].i].parent == sweep_of) {
        Ranked t = order[i];
        memmove(order + nsweep + 1, order + nsweep, sizeof *order * (size_t)(i - nsweep));
        order[nsweep++] = t;
      }
    int want = per < budget - used ? per : budget - used, nj = 0;
    Job *js = xcalloc((size_t)want + 1, sizeof *js);
    int *node = xcalloc((size_t)want + 1, sizeof *node);
    for (int i = 0; i < no && nj < want; i++) {
      int pick = i < nsweep ? PICK_SWEEP : peers && order[i].s == INFINITY ? PICK_PEER : PICK_RANK;
      if (nj == want - 1 && want > 1 && no > i + 1 && i >= nsweep) {  // the exploration share: the last of a batch at random among the next 4 K
        int span = no - i < 4 * per ? no - i : 4 * per, at = i + (int)(next_rand(&rng) % (uint64_t)span);
        Ranked t = order[at];
        order[at] = order[i], order[i] = t, pick = PICK_EXPLORE;
      }
      int x = order[i].i;
      node[nj] = x;
      mcts_kernel(S, x, &T, &js[nj].k);
      js[nj].cand.from = &methods[M_rl];
      js[nj].cand.round = batch, js[nj].cand.pick = pick;
      js[nj].cand.score = R.v[x].score, js[nj].cand.scored = fit != NULL;
      render_job(S, &js[nj]);
      js[nj].hash = job_hash(&js[nj]);
      R.v[x].measured = true;
      int seen = seen_find(S, js[nj].hash);
      if (seen >= 0) {  // a source timed before (another path to the same kernel): its time, no new candidate
        R.v[x].t = S->seen.v[seen].t;
        kernel_free(&js[nj].k), free(js[nj].src);
        memset(&js[nj], 0, sizeof js[nj]);
        continue;
      }
      nj++;
    }
    S->stop_ref = S->best;  // as MCTS: 3x the best so far is too slow to time in full
    double before = S->best;
    int got = evaluate(S, js, nj);
    used += got;
    stall = got ? 0 : stall + 1;
    no_gain = S->best < before ? 0 : no_gain + 1;
    for (int i = 0; i < nj; i++) {
      const Cand *c = &js[i].cand;  // stopped early (slow) still has a time to rank by
      R.v[node[i]].t = (c->status == CAND_OK || c->status == CAND_SLOW) && c->tmin > 0 ? c->tmin : INFINITY;
    }
    jobs_free(js, nj);
    free(node);
    // every subtree's best again, children before parents (their indices are larger)
    cal = xrealloc(cal, sizeof *cal * ((size_t)R.n + 1));
    nc = calibrate(S, &R, cal);
    for (int x = T.n - 1; x >= 0; x--) {
      double b = T.v[x].n || R.v[x].measured ? rl_value(S, &R.v[x], cal, nc) : 0;
      for (int i = 0; T.v[x].expanded && i < T.v[x].nch; i++)
        if (T.v[T.v[x].ch0 + i].n) b = fmax(b, R.v[T.v[x].ch0 + i].best);
      R.v[x].best = b;
    }
    if (cost_model_refit(&fit, S->model, &S->online, S->t->cands.v, S->t->cands.n, S->info->device, mseed, err, sizeof err) && !S->said_predict)
      fprintf(stderr, "fluxcc: warning: the cost model: %s (the search goes on without it)\n", err), S->said_predict = true;
    // the best-ranked nodes left unmeasured, into the records at the end
    if (used >= budget || stall >= 3 || no_gain >= patience) rl_record_unmeasured(S, fit, &T, &R, order, batch);
    free(order);
  }
  S->t->stop = used >= budget ? STOP_BUDGET : no_gain >= patience ? STOP_PATIENCE : STOP_STALL;
  cost_model_free(fit);
  free(cal), free(T.v), free(R.v);
}

