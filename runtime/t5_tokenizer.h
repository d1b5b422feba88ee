// t5_tokenizer.h — T5's SentencePiece tokenizer, as FLUX.1's `text_encoder_2` is
// fed: transformers' T5Tokenizer (the sentencepiece-backed one of transformers 4,
// which BFL's HFEmbedder calls with max_length 256 or 512, padding "max_length",
// truncation on): the model's pieces of the text, at most n-1 of them, the end
// token, the pad token up to n. From the checkpoint's tokenizer_2/spiece.model,
// through libsentencepiece (its normalization, nmt_nfkc for T5, included).
// A C interface over C++ (t5_tokenizer.cc).
#ifndef T5_TOKENIZER_H
#define T5_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct T5Tokenizer T5Tokenizer;

// Loads dir/spiece.model. NULL on failure, with a message naming the file in err.
T5Tokenizer *t5_tok_open(const char *dir, char *err, size_t errlen);

// Encodes text (NUL-terminated UTF-8) into exactly n ids. 0 on success; -1
// with a message in err (invalid UTF-8, n < 1).
int t5_tok_encode(const T5Tokenizer *t, const char *text, int32_t *ids, int n, char *err, size_t errlen);

// The number of pieces of the model (T5's: 32000; the embedding has 32128 rows).
int t5_tok_vocab_size(const T5Tokenizer *t);

void t5_tok_close(T5Tokenizer *t);

#ifdef __cplusplus
}
#endif
#endif
