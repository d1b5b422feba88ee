#!/usr/bin/env python3
"""t5_tokens_ref.py MODEL PROMPTS.json N OUT.json — T5's expected token ids.

The prompts of PROMPTS.json ({"cases": [{"prompt": ...}]}) encoded as
transformers' sentencepiece-backed T5Tokenizer does for FLUX (BFL's HFEmbedder:
max_length N, padding "max_length", truncation): the model's pieces
(sentencepiece's Python binding), at most N - 1, then the end token, then the
pad token up to N. Writes {"n": N, "cases": [{"prompt", "ids"}]} for
tests/tokenizer_check.c.
"""
import json, sys
import sentencepiece

model, prompts, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sp = sentencepiece.SentencePieceProcessor()
sp.Load(model)
cases = []
for c in json.load(open(prompts, encoding="utf-8"))["cases"]:
    ids = sp.EncodeAsIds(c["prompt"])[: n - 1] + [sp.eos_id()]
    cases.append({"prompt": c["prompt"], "ids": ids + [sp.pad_id()] * (n - len(ids))})
with open(out, "w", encoding="utf-8") as f:
    json.dump({"n": n, "cases": cases}, f, ensure_ascii=False)
