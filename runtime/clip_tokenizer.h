// clip_tokenizer.h — CLIP's byte-level BPE tokenizer, as FLUX.1's text encoder
// `text_encoder` is fed: transformers' CLIPTokenizer (the tokenizers-backed one)
// called by BFL's HFEmbedder with max_length 77, padding "max_length",
// truncation on.
//
// From the files of the checkpoint's tokenizer/ folder: vocab.json,
// merges.txt, and special_tokens_map.json or tokenizer_config.json (the pad
// token; "<|endoftext|>" where neither names one). The steps, each as
// transformers does it:
//   1. the literal special tokens "<|startoftext|>" and "<|endoftext|>" are
//      cut out of the raw text first (case-sensitive) and become their ids;
//   2. the rest is normalized: Unicode NFC (utf8proc), every run of White_Space
//      characters becomes one space, then full Unicode lower-casing;
//   3. pre-tokenized with CLIP's pattern (PCRE2, Unicode properties): 's 't 're
//      've 'm 'll 'd, letter runs, single digits, runs of anything else but
//      space; the spaces themselves are dropped;
//   4. each piece's UTF-8 bytes become the byte-level symbols, the last with
//      "</w>", merged by merges.txt's ranks (lowest rank first, leftmost first);
//   5. ids: start token, the first n-2 piece ids, end token, pad to n.
#ifndef CLIP_TOKENIZER_H
#define CLIP_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

// Prompts longer than this many bytes are refused (bounded time and memory).
#define CLIP_TOK_MAX_TEXT (1 << 20)

typedef struct ClipTokenizer ClipTokenizer;

// Loads dir/vocab.json and dir/merges.txt. NULL on failure, with a message
// naming the file (and line) in err.
ClipTokenizer *clip_tok_open(const char *dir, char *err, size_t errlen);

// Encodes text (NUL-terminated UTF-8) into exactly n ids. 0 on success; -1
// with a message in err for invalid UTF-8, an overlong text, or n < 2.
int clip_tok_encode(const ClipTokenizer *t, const char *text, int32_t *ids, int n, char *err, size_t errlen);

// The vocabulary's size (the largest id + 1).
int clip_tok_vocab_size(const ClipTokenizer *t);

void clip_tok_close(ClipTokenizer *t);

#endif
