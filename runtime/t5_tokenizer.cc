// t5_tokenizer.cc — T5's SentencePiece tokenizer (see t5_tokenizer.h).
#include "t5_tokenizer.h"
#include "files.h"
#include "numbers.h"

#include <sentencepiece_processor.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct T5Tokenizer {
  sentencepiece::SentencePieceProcessor sp;
};

// The model's bytes are checked before libsentencepiece parses them: it trusts
// what the file says (the normalizer's trie above all), and a crafted file
// would crash it. Each check gives why a field is bad, into why, and -1.
static int say(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *why, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, n, fmt, ap);
  va_end(ap);
  return -1;
}

// A protobuf message read field by field.
struct Pb {
  const unsigned char *p;
  size_t i, n;
};

static bool pb_varint(Pb *r, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && r->i < r->n; shift += 7) {
    unsigned char c = r->p[r->i++];
    *v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return true;
  }
  return false;
}

// The next field: its number, wire type, and value (a varint's in *v; a
// length-delimited one's bytes in *s, *len). 1, 0 at the end, -1 when cut
// short, -2 for a wire type that is not protobuf's (or a group, which no
// SentencePiece message has).
static int pb_next(Pb *r, uint64_t *field, int *wt, uint64_t *v, const unsigned char **s, size_t *len) {
  if (r->i >= r->n) return 0;
  uint64_t key;
  if (!pb_varint(r, &key)) return -1;
  *field = key >> 3, *wt = (int)(key & 7), *v = 0, *s = nullptr, *len = 0;
  size_t fixed = *wt == 1 ? 8 : *wt == 5 ? 4 : 0;
  if (*wt == 0) return pb_varint(r, v) ? 1 : -1;
  if (fixed) {
    if (fixed > r->n - r->i) return -1;
    r->i += fixed;
    return 1;
  }
  if (*wt != 2) return -2;
  if (!pb_varint(r, v) || *v > r->n - r->i) return -1;
  *s = r->p + r->i, *len = (size_t)*v;
  r->i += *len;
  return 1;
}

static uint32_t le32(const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

// precompiled_charsmap, as sentencepiece's Normalizer reads it: a uint32 trie
// size in bytes, a Darts-clone double-array trie (32-bit units), then the
// normalized strings, each ended by a NUL, which the trie's values are
// offsets into. Normalizing a prompt walks the trie from unit 0 by its bytes:
// from a node's base b, byte c leads to unit b^c (a match when its label is c)
// and on to base b^c^offset, where a unit marked has_leaf adds a match whose
// value is the unit at the new base. So every base reachable by any bytes must
// keep b|255 inside the trie, every value point into the strings, and no path
// hold more than 32 matches (sentencepiece keeps that many on the stack). The
// walk visits each base once: a Darts-clone trie shares suffixes, never loops.
enum { TRIE_MAX_MATCHES = 32 };

static int check_charsmap(const unsigned char *b, size_t n, char *why, size_t wn) {
  if (n == 0) return 0;   // no rules: the text as it is
  if (n < 4) return say(why, wn, "%zu bytes, shorter than its 4-byte trie size", n);
  uint32_t tsize = le32(b);
  if (tsize % 4 || tsize == 0) return say(why, wn, "trie size %u bytes: not a positive multiple of 4 (4-byte units)", tsize);
  if (tsize > n - 4) return say(why, wn, "trie size %u bytes is more than the %zu bytes that follow it", tsize, n - 4);
  const unsigned char *u = b + 4, *str = u + tsize;
  size_t units = tsize / 4, slen = n - 4 - tsize;
  if (!slen || str[slen - 1]) return say(why, wn, "the normalized strings (%zu bytes after the trie) do not end with a NUL byte", slen);
  auto offset = [&](size_t k) { uint32_t x = le32(u + 4 * k); return (size_t)((x >> 10) << ((x & (1u << 9)) >> 6)); };
  auto label = [&](size_t k) { return le32(u + 4 * k) & ((1u << 31) | 0xFF); };
  auto has_leaf = [&](size_t k) { return (le32(u + 4 * k) >> 8) & 1; };
  auto value = [&](size_t k) { return (size_t)(le32(u + 4 * k) & ((1u << 31) - 1)); };
  size_t root = offset(0);
  if ((root | 0xFF) >= units) return say(why, wn, "trie unit 0 leads to unit %zu, outside the trie's %zu units", root, units);
  // depth-first over bases; state: 0 unseen, 1 on the path, 2 done, most[]:
  // the most matches on any path from it (at most TRIE_MAX_MATCHES + 1)
  std::vector<unsigned char> state(units), most(units);
  struct Frame { size_t base; int c, best, leaf_in; };
  std::vector<Frame> path{{root, 0, 0, 0}};
  state[root] = 1;
  while (!path.empty()) {
    Frame &f = path.back();
    if (f.c > 0xFF) {   // every byte tried: done, and the path above it learns its count
      Frame done = f;
      state[done.base] = 2, most[done.base] = (unsigned char)done.best;
      path.pop_back();
      if (!path.empty() && done.leaf_in + done.best > path.back().best) path.back().best = done.leaf_in + done.best;
      if (!path.empty() && path.back().best > TRIE_MAX_MATCHES) break;
      continue;
    }
    int c = f.c++;
    size_t child = f.base ^ (size_t)c;
    if (label(child) != (uint32_t)c) continue;
    size_t next = child ^ offset(child);
    if ((next | 0xFF) >= units)
      return say(why, wn, "trie unit %zu (byte 0x%02x) leads to unit %zu, outside the trie's %zu units", child, c, next, units);
    int leaf = (int)has_leaf(child);
    if (leaf && value(next) >= slen)
      return say(why, wn, "trie unit %zu's value %zu points past the %zu bytes of normalized strings", next, value(next), slen);
    if (state[next] == 1) return say(why, wn, "trie unit %zu (byte 0x%02x) leads back to a unit before it: a loop", child, c);
    if (state[next] == 2) {
      if (leaf + most[next] > f.best) f.best = leaf + most[next];
      if (f.best > TRIE_MAX_MATCHES) break;
      continue;
    }
    state[next] = 1;
    path.push_back({next, 0, 0, leaf});
  }
  if (!path.empty()) return say(why, wn, "the trie matches more than %d prefixes of one text (sentencepiece keeps %d)", TRIE_MAX_MATCHES, TRIE_MAX_MATCHES);
  return 0;
}
// A NormalizerSpec (what = "normalizer_spec" or "denormalizer_spec"): every
// field whole, its known fields of their types, the charsmap one the trie walk
// accepts. Unknown fields are kept by protobuf and read by no one.
static int check_spec(const unsigned char *p, size_t n, const char *what, char *why, size_t wn) {
  static const char *const names[] = {"", "name", "precompiled_charsmap", "add_dummy_prefix", "remove_extra_whitespaces",
                                      "escape_whitespaces", "normalization_rule_tsv"};
  Pb r{p, 0, n};
  uint64_t field, v;
  int wt, got;
  const unsigned char *s;
  size_t len;
  while ((got = pb_next(&r, &field, &wt, &v, &s, &len)) > 0) {
    if (field < 1 || field > 6) continue;
    int is_bool = field >= 3 && field <= 5;
    if (wt != (is_bool ? 0 : 2))
      return say(why, wn, "%s.%s: wire type %d, not %s", what, names[field], wt, is_bool ? "a bool (0)" : "bytes (2)");
    if (is_bool && v > 1) return say(why, wn, "%s.%s: %llu, not a bool (0 or 1)", what, names[field], (unsigned long long)v);
    char sub[300];
    if (field == 2 && check_charsmap(s, len, sub, sizeof sub)) return say(why, wn, "%s.precompiled_charsmap: %s", what, sub);
  }
  return got < 0 ? say(why, wn, "%s: %s", what, got == -2 ? "not a protobuf message" : "cut short") : 0;
}

// Why the bytes are not a whole ModelProto sentencepiece may be given, into
// why; -1. Protobuf parses a file cut at a field boundary without complaint
// (a tokenizer with part of its pieces and no normalizer), so the top-level
// fields are walked first: each must be complete, the known ones messages,
// and the trainer (2) and normalizer (3) specs, which follow the pieces (1),
// present. A spec given twice is merged by protobuf: each is checked.
static int check_model(const std::string &b, char *why, size_t wn) {
  static const char *const names[] = {"", "pieces", "trainer_spec", "normalizer_spec", "self_test_data", "denormalizer_spec"};
  Pb r{(const unsigned char *)b.data(), 0, b.size()};
  uint64_t field, v;
  int wt, got, seen = 0;
  const unsigned char *s;
  size_t len;
  while ((got = pb_next(&r, &field, &wt, &v, &s, &len)) > 0) {
    if (field < 1 || field > 5) continue;
    if (wt != 2) return say(why, wn, "%s: wire type %d, not a message (2)", names[field], wt);
    seen |= 1 << field;
    if ((field == 3 || field == 5) && check_spec(s, len, names[field], why, wn)) return -1;
  }
  if (got < 0) return say(why, wn, "%s", got == -2 ? "not a protobuf message" : "cut short");
  return !(seen & 2) ? say(why, wn, "no pieces") : !(seen & 4) ? say(why, wn, "no trainer spec: cut short?")
       : !(seen & 8) ? say(why, wn, "no normalizer spec: cut short?") : 0;
}

T5Tokenizer *t5_tok_open(const char *dir, char *err, size_t errlen) {
  std::string path = std::string(dir) + "/spiece.model";
  char msg[400];
  size_t len;
  char *buf = in_read(path.c_str(), (size_t)64 << 20, &len, msg, sizeof msg);
  const char *why = msg;
  if (!buf) {
    snprintf(err, errlen, "%s: %s%s", path.c_str(), why, !strncmp(why, "cannot open", 11) ? " (the tokenizer folder of T5 needs spiece.model)" : "");
    return nullptr;
  }
  std::string bytes(buf, len);
  free(buf);
  if (check_model(bytes, msg, sizeof msg)) {
    snprintf(err, errlen, "%s: not a SentencePiece model: %s", path.c_str(), msg);
    return nullptr;
  }
  T5Tokenizer *t = new (std::nothrow) T5Tokenizer;
  if (!t) { snprintf(err, errlen, "out of memory"); return nullptr; }
  auto st = t->sp.LoadFromSerializedProto(bytes);
  why = !st.ok() ? "" : t->sp.eos_id() < 0 ? "has no end token (</s>)" : t->sp.pad_id() < 0 ? "has no pad token (<pad>)" : nullptr;
  if (why) {
    snprintf(err, errlen, "%s: %s%s", path.c_str(), st.ok() ? "" : "not a SentencePiece model: ", st.ok() ? why : st.ToString().c_str());
    delete t;
    return nullptr;
  }
  return t;
}

int t5_tok_encode(const T5Tokenizer *t, const char *text, int32_t *ids, int n, char *err, size_t errlen) {
  if (n < 1) { snprintf(err, errlen, "T5's token count must be at least 1 (the end token), not %d", n); return -1; }
  long long bad = nb_utf8_bad(text, strlen(text));
  if (bad >= 0) { snprintf(err, errlen, "prompt: not valid UTF-8 at byte %lld", bad); return -1; }
  std::vector<int> pieces;
  auto st = t->sp.Encode(text, &pieces);
  if (!st.ok()) { snprintf(err, errlen, "prompt: %s", st.ToString().c_str()); return -1; }
  int k = 0;
  for (; k < n - 1 && k < (int)pieces.size(); k++) ids[k] = pieces[k];
  ids[k++] = t->sp.eos_id();
  for (; k < n; k++) ids[k] = t->sp.pad_id();
  return 0;
}

int t5_tok_vocab_size(const T5Tokenizer *t) { return t->sp.GetPieceSize(); }

void t5_tok_close(T5Tokenizer *t) { delete t; }
