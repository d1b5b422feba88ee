// symbolic.c — index arithmetic that simplifies as it is built.
//
// Every expression is a hash-consed node with a known value range. Sums are
// kept as c0 + sum(coef * atom) with atoms sorted by what they are, so equal
// expressions get equal ids and print alike. Division and modulo by a
// constant fold when the range allows:
//   (c*A + R) / c = A      and   (c*A + R) % c = R     when 0 <= R < c,
// and c*(x/c) + x%c recombines to x. That is what turns the div/mod chains
// of reshapes back into plain strides.
#include "fluxcc.h"

#include <stdlib.h>
#include <string.h>

#define MAXTERMS 64

typedef struct {
  int64_t c;
  int n;
  STerm t[MAXTERMS];
} Lin;

static int64_t floordiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }
static int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

static uint64_t node_hash(const Sym *s, const SNode *x) {
  uint64_t h = FNV_SEED;
#define MIX(v) (h = fnv_mix(h, (uint64_t)(v)))
  MIX(x->kind); MIX(x->a); MIX(x->b); MIX(x->c); MIX(x->nterms);
  for (int i = 0; i < x->nterms; i++) MIX(s->t.v[x->terms + i].coef), MIX(s->t.v[x->terms + i].atom);
#undef MIX
  return h;
}

static bool node_eq(const Sym *s, const SNode *x, const SNode *y, const STerm *yt) {
  if (x->kind != y->kind || x->a != y->a || x->b != y->b || x->c != y->c || x->nterms != y->nterms) return false;
  for (int i = 0; i < x->nterms; i++)
    if (s->t.v[x->terms + i].coef != yt[i].coef || s->t.v[x->terms + i].atom != yt[i].atom) return false;
  return true;
}

// Intern a node; `terms` (for sums) are copied in only when it is new.
static int intern(Sym *s, SNode x, const STerm *terms) {
  if (2 * (s->n.n + 1) >= s->hcap) {
    int cap = s->hcap ? 2 * s->hcap : 256;
    int32_t *t = xcalloc((size_t)cap, sizeof *t);
    memset(t, 0xff, sizeof *t * (size_t)cap);
    for (int i = 0; i < s->n.n; i++) {
      uint64_t h = node_hash(s, &s->n.v[i]) & (uint64_t)(cap - 1);
      while (t[h] >= 0) h = (h + 1) & (uint64_t)(cap - 1);
      t[h] = i;
    }
    free(s->hash);
    s->hash = t;
    s->hcap = cap;
  }
  // hash with the terms in place: stage them at the end of the term pool
  int at = s->t.n;
  for (int i = 0; i < x.nterms; i++) vec_push(s->t, terms[i]);
  x.terms = at;
  uint64_t h = node_hash(s, &x) & (uint64_t)(s->hcap - 1);
  for (; s->hash[h] >= 0; h = (h + 1) & (uint64_t)(s->hcap - 1)) {
    SNode *y = &s->n.v[s->hash[h]];
    if (node_eq(s, y, &x, s->t.v + at)) {
      s->t.n = at;  // drop the staged copy
      return s->hash[h];
    }
  }
  s->hash[h] = s->n.n;
  vec_push(s->n, x);
  return s->n.n - 1;
}

int sym_const(Sym *s, int64_t c) {
  SNode x = {.kind = S_CONST, .a = -1, .b = -1, .c = c, .lo = c, .hi = c};
  return intern(s, x, NULL);
}

int sym_var(Sym *s, int v) {
  SNode x = {.kind = S_VAR, .a = v, .b = -1, .lo = 0, .hi = s->var_size[v] - 1, .vars = 1u << v};
  if (s->var_size[v] == 1) return sym_const(s, 0);
  return intern(s, x, NULL);
}

static void to_lin(Sym *s, int e, int64_t scale, Lin *L) {
  SNode *x = &s->n.v[e];
  if (x->kind == S_CONST) {
    L->c += scale * x->c;
  } else if (x->kind == S_SUM) {
    L->c += scale * x->c;
    for (int i = 0; i < x->nterms; i++) {
      if (L->n == MAXTERMS) diag_fatal("index expression with more than %d terms", MAXTERMS);
      L->t[L->n++] = (STerm){scale * s->t.v[x->terms + i].coef, s->t.v[x->terms + i].atom};
    }
  } else {
    if (L->n == MAXTERMS) diag_fatal("index expression with more than %d terms", MAXTERMS);
    L->t[L->n++] = (STerm){scale, e};
  }
}

static int cmp3(int64_t a, int64_t b) { return (a > b) - (a < b); }

// Atoms in the order of what they are, not of when they were interned: a sum
// then reads the same however it was built (a search's two paths to one
// kernel, e.g. SWAP(0,1) twice and no SWAP, render the same text, which is
// what its dedup by text finds). Variables first, by number.
static int cmp_atom(const Sym *s, int a, int b) {
  if (a == b) return 0;
  const SNode *x = &s->n.v[a], *y = &s->n.v[b];
  int r = cmp3(x->kind, y->kind);
  if (!r && x->kind == S_VAR) r = cmp3(x->a, y->a);
  if (!r) r = cmp3(x->c, y->c);
  if (!r) r = cmp3(x->nterms, y->nterms);
  for (int i = 0; !r && x->kind == S_SUM && i < x->nterms; i++) {
    const STerm *u = &s->t.v[x->terms + i], *v = &s->t.v[y->terms + i];
    r = cmp_atom(s, u->atom, v->atom);
    if (!r) r = cmp3(u->coef, v->coef);
  }
  if (!r && x->kind != S_CONST && x->kind != S_VAR && x->kind != S_SUM) r = cmp_atom(s, x->a, y->a);
  if (!r && x->kind == S_AND) r = cmp_atom(s, x->b, y->b);
  if (!r) r = cmp3(x->lo, y->lo);
  if (!r) r = cmp3(x->hi, y->hi);
  return r ? r : cmp3(a, b);
}

static void lin_range(Sym *s, const Lin *L, int64_t *lo, int64_t *hi) {
  *lo = *hi = L->c;
  for (int i = 0; i < L->n; i++) {
    SNode *a = &s->n.v[L->t[i].atom];
    int64_t k = L->t[i].coef;
    *lo += k > 0 ? k * a->lo : k * a->hi;
    *hi += k > 0 ? k * a->hi : k * a->lo;
  }
}

// sort (cmp_atom), merge equal atoms, drop zeros
static void lin_norm(Sym *s, Lin *L) {
  for (int i = 1; i < L->n; i++)  // insertion: at most MAXTERMS terms, and the comparison needs s
    for (int k = i; k > 0 && cmp_atom(s, L->t[k - 1].atom, L->t[k].atom) > 0; k--) {
      STerm t = L->t[k];
      L->t[k] = L->t[k - 1], L->t[k - 1] = t;
    }
  int m = 0;
  for (int i = 0; i < L->n; i++) {
    if (m && L->t[m - 1].atom == L->t[i].atom) L->t[m - 1].coef += L->t[i].coef;
    else L->t[m++] = L->t[i];
  }
  int k = 0;
  for (int i = 0; i < m; i++)
    if (L->t[i].coef) L->t[k++] = L->t[i];
  L->n = k;
}

static int from_lin(Sym *s, Lin *L) {
  lin_norm(s, L);
  // c*k*(x/c) + k*(x%c) = k*x
  for (bool again = true; again;) {
    again = false;
    for (int i = 0; i < L->n && !again; i++) {
      SNode *m = &s->n.v[L->t[i].atom];
      if (m->kind != S_MOD) continue;
      for (int j = 0; j < L->n; j++) {
        SNode *d = &s->n.v[L->t[j].atom];
        if (d->kind == S_DIV && d->a == m->a && d->c == m->c && L->t[j].coef == L->t[i].coef * m->c) {
          int64_t k = L->t[i].coef;
          int inner = m->a;
          L->t[i].coef = 0;
          L->t[j].coef = 0;
          to_lin(s, inner, k, L);
          lin_norm(s, L);
          again = true;
          break;
        }
      }
    }
  }
  if (L->n == 0) return sym_const(s, L->c);
  if (L->n == 1 && L->c == 0 && L->t[0].coef == 1) return L->t[0].atom;
  SNode x = {.kind = S_SUM, .a = -1, .b = -1, .c = L->c, .nterms = L->n};
  lin_range(s, L, &x.lo, &x.hi);
  for (int i = 0; i < L->n; i++) x.vars |= s->n.v[L->t[i].atom].vars;
  return intern(s, x, L->t);
}

int sym_add(Sym *s, int a, int b) {
  Lin L = {0};
  to_lin(s, a, 1, &L);
  to_lin(s, b, 1, &L);
  return from_lin(s, &L);
}

int sym_mul(Sym *s, int a, int64_t c) {
  Lin L = {0};
  if (c) to_lin(s, a, c, &L);
  return from_lin(s, &L);
}

// R = G + S where every coefficient of G is a multiple of g, g divides c and
// 0 <= S < g (S: the terms with coefficient 1 and the constant, e.g. a vector
// lane inside an aligned group): then (G + S) / c = G / c and
// (G + S) % c = G % c + S. False when R has no such split.
static bool aligned_split(Sym *s, const Lin *R, int64_t c, Lin *G, Lin *S) {
  int64_t g = 0;
  for (int i = 0; i < R->n; i++) {
    int64_t a = R->t[i].coef < 0 ? -R->t[i].coef : R->t[i].coef, b = g;
    if (a == 1) continue;
    while (b) { int64_t t = a % b; a = b, b = t; }  // g = gcd(g, |coef|)
    g = a;
  }
  if (g < 2 || c % g) return false;
  *G = (Lin){0}, *S = (Lin){.c = R->c};
  for (int i = 0; i < R->n; i++) {
    if (R->t[i].coef % g) S->t[S->n++] = R->t[i];
    else G->t[G->n++] = R->t[i];
  }
  int64_t lo, hi;
  lin_range(s, S, &lo, &hi);
  return G->n && (S->n || S->c) && lo >= 0 && hi < g;
}

int sym_div(Sym *s, int a, int64_t c) {
  if (c == 1) return a;
  Lin L = {0}, Q = {0}, R = {0};
  to_lin(s, a, 1, &L);
  Q.c = floordiv(L.c, c);
  R.c = floormod(L.c, c);
  for (int i = 0; i < L.n; i++) {
    if (L.t[i].coef % c == 0) Q.t[Q.n++] = (STerm){L.t[i].coef / c, L.t[i].atom};
    else R.t[R.n++] = L.t[i];
  }
  int64_t lo, hi;
  lin_range(s, &R, &lo, &hi);
  if (floordiv(lo, c) == floordiv(hi, c)) {  // the remainder never crosses a multiple of c
    Q.c += floordiv(lo, c);
    return from_lin(s, &Q);
  }
  Lin G, S;
  if (aligned_split(s, &R, c, &G, &S)) R = G;
  int r = from_lin(s, &R);
  SNode *rn = &s->n.v[r];
  SNode x = {.kind = S_DIV, .a = r, .b = -1, .c = c, .vars = rn->vars};
  if (rn->kind == S_DIV) x.a = rn->a, x.c = rn->c * c;  // (y/d)/c = y/(d*c)
  SNode *in = &s->n.v[x.a];
  x.lo = floordiv(in->lo, x.c);
  x.hi = floordiv(in->hi, x.c);
  to_lin(s, intern(s, x, NULL), 1, &Q);
  return from_lin(s, &Q);
}

int sym_mod(Sym *s, int a, int64_t c) {
  if (c == 1) return sym_const(s, 0);
  Lin L = {0}, R = {0};
  to_lin(s, a, 1, &L);
  R.c = floormod(L.c, c);
  for (int i = 0; i < L.n; i++)
    if (L.t[i].coef % c) R.t[R.n++] = (STerm){floormod(L.t[i].coef, c), L.t[i].atom};
  int64_t lo, hi;
  lin_range(s, &R, &lo, &hi);
  if (lo >= 0 && hi < c) return from_lin(s, &R);
  if (floordiv(lo, c) == floordiv(hi, c)) {  // one period: subtract the offset
    R.c -= floordiv(lo, c) * c;
    return from_lin(s, &R);
  }
  Lin G, S;
  if (aligned_split(s, &R, c, &G, &S)) return sym_add(s, sym_mod(s, from_lin(s, &G), c), from_lin(s, &S));
  int r = from_lin(s, &R);
  SNode x = {.kind = S_MOD, .a = r, .b = -1, .c = c, .lo = 0, .hi = c - 1, .vars = s->n.v[r].vars};
  return intern(s, x, NULL);
}

int sym_lt(Sym *s, int a, int64_t c) {
  SNode *x = &s->n.v[a];
  if (x->hi < c) return sym_const(s, 1);
  if (x->lo >= c) return sym_const(s, 0);
  SNode n = {.kind = S_LT, .a = a, .b = -1, .c = c, .lo = 0, .hi = 1, .vars = x->vars};
  return intern(s, n, NULL);
}

int sym_ge(Sym *s, int a, int64_t c) { return sym_lt(s, sym_mul(s, a, -1), -c + 1); }

int sym_and(Sym *s, int a, int b) {
  SNode *x = &s->n.v[a], *y = &s->n.v[b];
  if (x->kind == S_CONST) return x->c ? b : a;
  if (y->kind == S_CONST) return y->c ? a : b;
  if (a == b) return a;
  if (a > b) {  // canonical order
    int t = a;
    a = b, b = t;
  }
  SNode n = {.kind = S_AND, .a = a, .b = b, .lo = 0, .hi = 1, .vars = x->vars | y->vars};
  return intern(s, n, NULL);
}

// Behind a pad, an index is only used where the pad's mask holds, so its
// range there is the source's: padded-out lanes never read memory.
int sym_assume(Sym *s, int a, int64_t lo, int64_t hi) {
  SNode *x = &s->n.v[a];
  if (x->lo >= lo && x->hi <= hi) return a;
  if (lo == hi) return sym_const(s, lo);
  if (x->kind == S_ASSUME) a = x->a;
  SNode n = {.kind = S_ASSUME, .a = a, .b = -1, .lo = lo > x->lo ? lo : x->lo, .hi = hi < x->hi ? hi : x->hi, .vars = x->vars};
  return intern(s, n, NULL);
}

bool sym_uses(Sym *s, int e, int var) { return (s->n.v[e].vars >> var) & 1; }

int64_t sym_coef(Sym *s, int e, int var, bool *linear) {
  SNode *x = &s->n.v[e];
  *linear = true;
  if (!sym_uses(s, e, var)) return 0;
  if (x->kind == S_VAR) return 1;
  if (x->kind != S_SUM) {
    *linear = false;
    return 0;
  }
  int64_t k = 0;
  for (int i = 0; i < x->nterms; i++) {
    STerm t = s->t.v[x->terms + i];
    SNode *a = &s->n.v[t.atom];
    if (a->kind == S_VAR && a->a == var) k += t.coef;
    else if ((a->vars >> var) & 1) *linear = false;
  }
  return k;
}

int sym_translate(Sym *from, int e, Sym *to, const int *var_expr) {
  SNode x = from->n.v[e];
  switch (x.kind) {
  case S_CONST: return sym_const(to, x.c);
  case S_VAR: return var_expr[x.a];
  case S_SUM: {
    int r = sym_const(to, x.c);
    for (int i = 0; i < x.nterms; i++) {
      STerm t = from->t.v[x.terms + i];
      r = sym_add(to, r, sym_mul(to, sym_translate(from, t.atom, to, var_expr), t.coef));
    }
    return r;
  }
  case S_DIV: return sym_div(to, sym_translate(from, x.a, to, var_expr), x.c);
  case S_MOD: return sym_mod(to, sym_translate(from, x.a, to, var_expr), x.c);
  case S_LT: return sym_lt(to, sym_translate(from, x.a, to, var_expr), x.c);
  case S_AND: return sym_and(to, sym_translate(from, x.a, to, var_expr), sym_translate(from, x.b, to, var_expr));
  case S_ASSUME: return sym_assume(to, sym_translate(from, x.a, to, var_expr), x.lo, x.hi);
  }
  return -1;
}

// C syntax; `names` gives each variable's name
static size_t put(char *buf, size_t n, size_t k, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static size_t put(char *buf, size_t n, size_t k, const char *fmt, ...) {
  if (k >= n) return k;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + k, n - k, fmt, ap);
  va_end(ap);
  return k + (size_t)(w > 0 ? w : 0);
}

static size_t str(Sym *s, int e, const char *const *names, char *buf, size_t n, size_t k, bool paren) {
  SNode *x = &s->n.v[e];
  switch (x->kind) {
  case S_CONST: return put(buf, n, k, x->c < 0 && paren ? "(%lld)" : "%lld", (long long)x->c);
  case S_VAR: return put(buf, n, k, "%s", names[x->a]);
  case S_SUM:
    if (paren) k = put(buf, n, k, "(");
    for (int i = 0; i < x->nterms; i++) {
      STerm t = s->t.v[x->terms + i];
      int64_t c = t.coef;
      if (i) k = put(buf, n, k, c < 0 ? "-" : "+");
      else if (c < 0) k = put(buf, n, k, "-");
      if (c < 0) c = -c;
      k = str(s, t.atom, names, buf, n, k, true);
      if (c != 1) k = put(buf, n, k, "*%lld", (long long)c);
    }
    if (x->c) k = put(buf, n, k, "%s%lld", x->c < 0 ? "-" : "+", (long long)(x->c < 0 ? -x->c : x->c));
    if (paren) k = put(buf, n, k, ")");
    return k;
  case S_DIV:
    k = put(buf, n, k, "(");
    k = str(s, x->a, names, buf, n, k, true);
    return put(buf, n, k, "/%lld)", (long long)x->c);
  case S_MOD:
    k = put(buf, n, k, "(");
    k = str(s, x->a, names, buf, n, k, true);
    return put(buf, n, k, "%%%lld)", (long long)x->c);
  case S_LT: {
    SNode *in = &s->n.v[x->a];
    bool neg = in->kind == S_SUM;  // -y < -c+1 reads better as y >= c
    for (int i = 0; neg && i < in->nterms; i++) neg = s->t.v[in->terms + i].coef < 0;
    k = put(buf, n, k, "(");
    if (neg) {
      Sym *ms = s;
      int pos = sym_mul(ms, x->a, -1);  // interned: may grow the pools, so no pointers are kept
      k = str(s, pos, names, buf, n, k, false);
      return put(buf, n, k, ">=%lld)", (long long)(1 - x->c));
    }
    k = str(s, x->a, names, buf, n, k, false);
    return put(buf, n, k, "<%lld)", (long long)x->c);
  }
  case S_ASSUME: return str(s, x->a, names, buf, n, k, paren);
  case S_AND:
    k = put(buf, n, k, "(");
    k = str(s, x->a, names, buf, n, k, false);
    k = put(buf, n, k, "&&");
    k = str(s, x->b, names, buf, n, k, false);
    return put(buf, n, k, ")");
  }
  return k;
}

void sym_str(Sym *s, int e, const char *const *names, char *buf, size_t n) {
  buf[0] = 0;
  if (str(s, e, names, buf, n, 0, false) >= n) diag_fatal("index expression longer than %zu characters", n);
}

void sym_free(Sym *s) {
  free(s->n.v);
  free(s->t.v);
  free(s->hash);
  memset(s, 0, sizeof *s);
}

void sym_copy(Sym *dst, const Sym *src) {
  *dst = *src;
  dst->n.v = xcalloc((size_t)src->n.cap + 1, sizeof *src->n.v);
  dst->t.v = xcalloc((size_t)src->t.cap + 1, sizeof *src->t.v);
  if (src->n.n) memcpy(dst->n.v, src->n.v, (size_t)src->n.n * sizeof *src->n.v);
  if (src->t.n) memcpy(dst->t.v, src->t.v, (size_t)src->t.n * sizeof *src->t.v);  // none: NULL, which memcpy may not take
  dst->hash = NULL;
  if (src->hcap) {
    dst->hash = xcalloc((size_t)src->hcap, sizeof *src->hash);
    memcpy(dst->hash, src->hash, (size_t)src->hcap * sizeof *src->hash);
  }
}
