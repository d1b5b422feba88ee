#!/usr/bin/env python3
"""clip_vocab.py BPE.txt.gz DIR — CLIP's tokenizer files from its merge list.

Writes DIR/vocab.json, DIR/merges.txt and DIR/special_tokens_map.json as the
FLUX.1 repositories' tokenizer/ folder holds them (openai/clip-vit-large-patch14),
built from bpe_simple_vocab_16e6.txt.gz (OpenAI CLIP's merge list, which
open_clip ships) the way CLIP builds its vocabulary: the 256 byte-level
characters, the same with "</w>", one token per merge, the two special tokens.
"""
import gzip, json, os, sys

def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]   # in the order of bs: the printable bytes first

src, out = sys.argv[1], sys.argv[2]
merges = gzip.open(src).read().decode("utf-8").split("\n")[1:49152 - 256 - 2 + 1]
chars = bytes_to_unicode()
vocab = chars + [c + "</w>" for c in chars] + ["".join(m.split()) for m in merges] + ["<|startoftext|>", "<|endoftext|>"]
assert len(vocab) == 49408, len(vocab)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
    json.dump({t: i for i, t in enumerate(vocab)}, f, ensure_ascii=False)
with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
    f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
    json.dump({"bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
               "unk_token": "<|endoftext|>"}, f)
