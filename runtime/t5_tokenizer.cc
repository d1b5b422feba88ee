// t5_tokenizer.cc — T5's SentencePiece tokenizer (see t5_tokenizer.h).
#include "t5_tokenizer.h"
#include "files.h"
#include "numbers.h"

#include <sentencepiece_processor.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct T5Tokenizer {
  sentencepiece::SentencePieceProcessor sp;
};

// Why the bytes are not a whole ModelProto, or NULL. Protobuf parses a file
// cut at a field boundary without complaint (a tokenizer with part of its
// pieces and no normalizer), so the top-level fields are walked first: each
// must be complete, and the trainer (2) and normalizer (3) specs, which follow
// the pieces (1), present.
static const char *not_whole(const std::string &b) {
  size_t i = 0, n = b.size();
  int seen = 0;
  auto varint = [&](uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64 && i < n; shift += 7) {
      unsigned char c = (unsigned char)b[i++];
      *v |= (uint64_t)(c & 0x7f) << shift;
      if (!(c & 0x80)) return true;
    }
    return false;
  };
  while (i < n) {
    uint64_t key, len;
    if (!varint(&key)) return "cut short";
    switch (key & 7) {
    case 0: if (!varint(&len)) return "cut short"; break;
    case 1: i += 8; break;
    case 2: if (!varint(&len) || len > n - i) return "cut short"; i += len; break;
    case 5: i += 4; break;
    default: return "not a protobuf message";
    }
    if (i > n) return "cut short";
    if ((key >> 3) < 32) seen |= 1 << (key >> 3);
  }
  return !(seen & 2) ? "no pieces" : !(seen & 4) ? "no trainer spec: cut short?" : !(seen & 8) ? "no normalizer spec: cut short?" : nullptr;
}

T5Tokenizer *t5_tok_open(const char *dir, char *err, size_t errlen) {
  std::string path = std::string(dir) + "/spiece.model";
  char msg[200];
  size_t len;
  char *buf = in_read(path.c_str(), (size_t)64 << 20, &len, msg, sizeof msg);
  const char *why = msg;
  if (!buf) {
    snprintf(err, errlen, "%s: %s%s", path.c_str(), why, !strncmp(why, "cannot open", 11) ? " (the tokenizer folder of T5 needs spiece.model)" : "");
    return nullptr;
  }
  std::string bytes(buf, len);
  free(buf);
  if ((why = not_whole(bytes))) {
    snprintf(err, errlen, "%s: not a SentencePiece model: %s", path.c_str(), why);
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
