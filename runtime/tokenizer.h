// tokenizer.h — the runtime's tokenizers behind one interface: a table with
// one entry per kind, each known by the file its folder holds (a checkpoint's
// tokenizer/ has CLIP's vocab.json, tokenizer_2/ T5's spiece.model). A kind
// whose libraries the build lacked has no functions and says what to install.
#ifndef TOKENIZER_H
#define TOKENIZER_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef FLUX_CLIP_BPE
#include "clip_tokenizer.h"
#endif
#ifdef FLUX_SENTENCEPIECE
#include "t5_tokenizer.h"
#endif

typedef struct TokKind {
  const char *key, *name, *file;  // "clip", what to call it, the file that marks its folder
  const char *needs;              // the packages to build it with
  void *(*open)(const char *dir, char *err, size_t errlen);
  int (*encode)(const void *t, const char *text, int32_t *ids, int n, char *err, size_t errlen);
  int (*vocab_size)(const void *t);
  void (*close)(void *t);
} TokKind;

#ifdef FLUX_CLIP_BPE
static inline void *tk_clip_open(const char *d, char *e, size_t n) { return clip_tok_open(d, e, n); }
static inline int tk_clip_encode(const void *t, const char *s, int32_t *ids, int n, char *e, size_t en) {
  return clip_tok_encode((const ClipTokenizer *)t, s, ids, n, e, en);
}
static inline int tk_clip_vocab(const void *t) { return clip_tok_vocab_size((const ClipTokenizer *)t); }
static inline void tk_clip_close(void *t) { clip_tok_close((ClipTokenizer *)t); }
#define TK_CLIP tk_clip_open, tk_clip_encode, tk_clip_vocab, tk_clip_close
#else
#define TK_CLIP NULL, NULL, NULL, NULL
#endif
#ifdef FLUX_SENTENCEPIECE
static inline void *tk_t5_open(const char *d, char *e, size_t n) { return t5_tok_open(d, e, n); }
static inline int tk_t5_encode(const void *t, const char *s, int32_t *ids, int n, char *e, size_t en) {
  return t5_tok_encode((const T5Tokenizer *)t, s, ids, n, e, en);
}
static inline int tk_t5_vocab(const void *t) { return t5_tok_vocab_size((const T5Tokenizer *)t); }
static inline void tk_t5_close(void *t) { t5_tok_close((T5Tokenizer *)t); }
#define TK_T5 tk_t5_open, tk_t5_encode, tk_t5_vocab, tk_t5_close
#else
#define TK_T5 NULL, NULL, NULL, NULL
#endif

static const TokKind tok_kinds[] = {
  {"t5", "T5 SentencePiece", "spiece.model", "libsentencepiece-dev", TK_T5},
  {"clip", "CLIP BPE", "vocab.json", "libpcre2-dev, libutf8proc-dev", TK_CLIP},
};

// The kind named key ("clip", "t5"), or with key NULL the kind whose file is
// in dir; NULL with a message when there is none or it was not built.
static inline const TokKind *tok_kind(const char *key, const char *dir, char *err, size_t n) {
  const TokKind *k = NULL;
  for (size_t i = 0; i < sizeof tok_kinds / sizeof *tok_kinds && !k; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, tok_kinds[i].file);
    if (key ? !strcmp(key, tok_kinds[i].key) : !access(path, F_OK)) k = &tok_kinds[i];
  }
  if (!k && key) snprintf(err, n, "no tokenizer '%s' (clip, t5)", key);
  else if (!k) snprintf(err, n, "%s: holds neither spiece.model (T5) nor vocab.json (CLIP): not a tokenizer folder", dir);
  else if (!k->open) snprintf(err, n, "%s: this binary was built without the %s tokenizer (install %s and pkg-config, then make clean all)", dir, k->name, k->needs);
  return k && k->open ? k : NULL;
}

#endif
