#!/usr/bin/env python3
"""make-tokenizer-golden.py — the tokenizer suite's expected ids, from transformers.

  python3 scripts/make-tokenizer-golden.py clip [-o tests/data/clip-tokens.json]

Builds CLIP's vocab.json and merges.txt from tests/data/clip-bpe-16e6.txt.gz
(tests/clip_vocab.py, as the test does), generates the prompts (seeded: plain
captions, accents in both Unicode forms, Greek, Turkish, CJK, Arabic, Devanagari,
emoji sequences, odd white space, control characters, contractions, the literal
special tokens, overlong prompts), and encodes each with transformers'
CLIPTokenizer as BFL's HFEmbedder calls it (max_length 77, padding "max_length",
truncation). Needs transformers (and its tokenizers); the suite itself does not.
"""
import argparse, json, os, random, subprocess, sys, tempfile

WORDS = ("a photo of cat dog astronaut riding horse on the moon portrait woman man city street night neon "
         "painting oil watercolor sunset mountain lake forest cinematic lighting 35mm film grain highly detailed "
         "studio ghibli castle robot dragon cyberpunk vintage poster minimalist 4k 8k hdr bokeh macro close-up "
         "wide-angle isometric render unreal engine octane trending artstation by greg rutkowski").split()
UNI = ["café", "cafe\u0301", "naïve", "Zürich", "São Paulo", "ñandú", "Ærøskøbing", "straße", "STRASSE",
       "ΟΔΟΣ", "Σίσυφος", "İstanbul", "ıi", "DŽungla", "ǅ", "ﬁne", "Ⅻ", "½", "x²", "١٢٣", "٣ قطط",
       "東京の夜景", "一只猫", "고양이", "Москва ночью", "हिन्दी पाठ", "ภาษาไทย", "עברית",
       "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "☕️", "🏳️‍🌈", "∑∫√", "→←", "™©®", "…", "—", "–", "«»",
       "\u00a0", "\u2003", "\u3000", "\u0085", "\u200b", "\u180e", "\ufeff", "\u2028", "\u202f",
       "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x01", "\x7f", "\u00ad", "\u0301", "\u0307",
       "it's", "IT'S", "we'll", "they're", "you've", "I'm", "he'd", "don't", "’s", "o'clock", "'''s",
       "<|endoftext|>", "<|startoftext|>", "<|ENDOFTEXT|>", "<|endoftext", "<|", "|>", "<<>>",
       "hello!!!", "...", "?!", "#hashtag", "@user", "e-mail@host.com", "https://x.ai/a?b=c&d=1",
       "C++", "3.14159", "1,000,000", "12:30pm", "$100", "50%", "(parens)", "[brackets]", "{braces}"]

def prompt(rng):
    kind = rng.randrange(10)
    if kind == 0:
        return ""
    if kind == 1:   # overlong
        return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(60, 120)))
    if kind == 2:   # one long run of letters, or of digits
        return rng.choice(["x", "ab", "é", "9", "東"]) * rng.randrange(20, 200)
    n = rng.randrange(1, 25)
    parts = []
    for _ in range(n):
        w = rng.choice(UNI) if rng.random() < 0.35 else rng.choice(WORDS)
        r = rng.random()
        if r < 0.15: w = w.upper()
        elif r < 0.25: w = w.title()
        parts.append(w)
        parts.append(rng.choice([" ", " ", " ", "", ", ", "  ", "\t", " \n ", ". "]))
    return "".join(parts)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["clip"])
    ap.add_argument("-o", default="tests/data/clip-tokens.json")
    ap.add_argument("-n", type=int, default=1200)
    a = ap.parse_args()
    from transformers import CLIPTokenizer
    import transformers
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, os.path.join(here, "..", "tests", "clip_vocab.py"),
                        os.path.join(here, "..", "tests", "data", "clip-bpe-16e6.txt.gz"), d], check=True)
        tok = CLIPTokenizer.from_pretrained(d)
        rng = random.Random(20261203)
        cases = []
        for _ in range(a.n):
            p = prompt(rng)
            ids = tok(p, truncation=True, max_length=77, padding="max_length", return_length=False,
                      return_overflowing_tokens=False)["input_ids"]
            assert len(ids) == 77 and tok.pad_token_id == tok.eos_token_id == ids[-1]
            while len(ids) > 2 and ids[-2] == tok.pad_token_id:   # the padding is implied: up to 77 with the end token
                ids.pop()
            cases.append({"prompt": p, "ids": ids})
    with open(a.o, "w", encoding="utf-8") as f:
        json.dump({"source": "transformers %s CLIPTokenizer.from_pretrained(folder of vocab.json, merges.txt, "
                   "special_tokens_map.json) called as BFL's HFEmbedder: max_length 77, padding max_length, "
                   "truncation; each case's ids end with the end token, the padding (the same id) up to 77 left out; written by scripts/make-tokenizer-golden.py" % transformers.__version__,
                   "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("%s: %d prompts" % (a.o, len(cases)))

main()
