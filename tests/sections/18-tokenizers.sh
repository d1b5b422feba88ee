# tests/sections/18-tokenizers.sh — tokenizers: CLIP's byte-level BPE (PCRE2, utf8proc) = transformers' CLIPTokenizer; T5's SentencePiece; ./flux --prompt
# needs: reference opencl networks
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== tokenizers: CLIP's byte-level BPE (PCRE2, utf8proc) = transformers' CLIPTokenizer; T5's SentencePiece; ./flux --prompt"
TOKDIR=$T/clip-tokenizer
check "CLIP's tokenizer folder from its merge list (tests/clip_vocab.py: vocab.json, merges.txt, special_tokens_map.json)" \
  python3 tests/clip_vocab.py tests/data/clip-bpe-16e6.txt.gz "$TOKDIR"
check "tokenizer_check: builds under ASan + UBSan (both tokenizers)" sh -c "
  c++ -std=c++17 -Wall -Wextra -Werror -g -O1 -fsanitize=address,undefined -Iruntime -c -o $T/t5tok.o runtime/t5_tokenizer.cc &&
  cc $SANFLAGS -DFLUX_CLIP_BPE -DFLUX_SENTENCEPIECE -Iruntime -o $T/tokchk tests/tokenizer_check.c runtime/clip_tokenizer.c runtime/files.c $T/t5tok.o \
    -lcjson -lpcre2-8 -lutf8proc -lsentencepiece -lstdc++"
check "CLIP tokenizer = transformers' CLIPTokenizer on 1200 prompts (tests/data/clip-tokens.json: accents in both forms, Greek, Turkish, CJK, emoji sequences, odd white space, controls, special-token text, overlong)" \
  sh -c "$T/tokchk clip $TOKDIR tests/data/clip-tokens.json && $T/tokchk clip $TOKDIR tests/data/clip-tokens.json | grep -qx '1200 of 1200 prompts tokenized as expected (CLIP BPE, vocabulary 49408)'"
sed 's/^/     /' "$T/log" | tail -1
check "... and one changed id in the expected ids is caught (exit 1, the case shown)" sh -c "
  sed 's/\"ids\":\\[49406,320,/\"ids\":[49406,321,/' tests/data/clip-tokens.json > $T/tok-bad.json && ! cmp -s $T/tok-bad.json tests/data/clip-tokens.json &&
  $T/tokchk clip $TOKDIR $T/tok-bad.json > $T/tok-bad.out; test \$? -eq 1 && grep -q 'differs' $T/tok-bad.out && grep -q '1199 of 1200' $T/tok-bad.out"
# tok_fail NAME PATTERN DIR PROMPT: tokenizer_check -p exits 2 with PATTERN on stderr, no sanitizer report
tok_fail() {
  check "tokenizer: $1" sh -c "$T/tokchk clip '$3' -p '$4' 2>$T/tokerr; test \$? -eq 2 && grep -q -- '$2' $T/tokerr && ! grep -q 'Sanitizer\|runtime error' $T/tokerr"
}
mkdir -p "$T/tokbad"
tok_fail "a folder without vocab.json: named" "tokbad/vocab.json: cannot open" "$T/tokbad" "a cat"
cp "$TOKDIR/vocab.json" "$T/tokbad/"
tok_fail "a folder without merges.txt: named" "tokbad/merges.txt: cannot open" "$T/tokbad" "a cat"
{ printf '#version: 0.2\ni n\nt h\na b c\n'; } > "$T/tokbad/merges.txt"
tok_fail "a merges.txt line of three tokens: file:line" "merges.txt:4: want two tokens" "$T/tokbad" "a cat"
printf '#version: 0.2\ni n\nzzqq xx\n' > "$T/tokbad/merges.txt"
tok_fail "a merge of tokens not in vocab.json: file:line and the token" 'merges.txt:3: "zzqq" is not in vocab.json' "$T/tokbad" "a cat"
head -c 1000 "$TOKDIR/vocab.json" > "$T/tokbad/vocab.json"
tok_fail "a truncated vocab.json: named" "tokbad/vocab.json: not a JSON object" "$T/tokbad" "a cat"
printf '{"a": 1.5}' > "$T/tokbad/vocab.json"
tok_fail "an id that is not a whole number: the token named" 'token "a": its id must be a whole number' "$T/tokbad" "a cat"
printf '{"a": 0}' > "$T/tokbad/vocab.json"; printf '' > "$T/tokbad/merges.txt"
tok_fail "a vocabulary without the byte-level alphabet: says so" "not a byte-level BPE vocabulary" "$T/tokbad" "a cat"
cp "$TOKDIR/vocab.json" "$TOKDIR/merges.txt" "$T/tokbad/" && printf '{"pad_token": "<|nope|>"}' > "$T/tokbad/special_tokens_map.json"
tok_fail "a pad token not in the vocabulary: file and token named" 'special_tokens_map.json: pad_token "<|nope|>" is not in vocab.json' "$T/tokbad" "a cat"
tok_fail "a prompt that is not UTF-8: the byte offset" "not valid UTF-8 at byte 2" "$TOKDIR" "$(printf 'ab\377cd')"
# a FIFO as any tokenizer file: refused by name at once, as the weights are (in_open: no writer would block for ever)
for f in vocab.json merges.txt special_tokens_map.json tokenizer_config.json; do
  rm -rf "$T/tokfifo" && mkdir -p "$T/tokfifo" && cp "$TOKDIR/vocab.json" "$TOKDIR/merges.txt" "$T/tokfifo/" && rm -f "$T/tokfifo/$f" && mkfifo "$T/tokfifo/$f"
  check "tokenizer: a FIFO as $f: refused by name at once (exit 2 within the time-out, not a wait for a writer)" sh -c "
    timeout 10 $T/tokchk clip $T/tokfifo -p 'a cat' 2>$T/tokerr; test \$? -eq 2 && grep -q 'tokfifo/$f: is a FIFO (pipe), not a regular file' $T/tokerr"
done
rm -rf "$T/tokfifo" && mkdir -p "$T/tokfifo/vocab.json" && cp "$TOKDIR/merges.txt" "$T/tokfifo/"
tok_fail "a folder as vocab.json: refused by name" "tokfifo/vocab.json: is a directory, not a regular file" "$T/tokfifo" "a cat"
rm -rf "$T/tokfifo" && mkdir -p "$T/tokfifo" && truncate -s 300M "$T/tokfifo/vocab.json" && cp "$TOKDIR/merges.txt" "$T/tokfifo/"
tok_fail "a vocab.json of 300 MiB (sparse): refused by its size before any is read" "tokfifo/vocab.json: larger than 256 MiB (314572800 bytes)" "$T/tokfifo" "a cat"
check "tokenizer: special_tokens_map.json's pad token is used (\"!\", id 0, as SD 1.x's tokenizer pads)" sh -c "
  mkdir -p $T/tokpad && cp $TOKDIR/vocab.json $TOKDIR/merges.txt $T/tokpad/ && printf '{\"pad_token\": {\"content\": \"!\"}}' > $T/tokpad/special_tokens_map.json &&
  $T/tokchk clip $T/tokpad -p 'a cat' | grep -qx '  ids: 49406 320 2368 49407 0 0 .* 0 0'"

# the emitted binary: --prompt fills the input `tokens` with the tokenizer's ids
rm -rf "$T/clipv"
check "examples/pipeline-tiny/clip.fdsl (CLIP's vocabulary, 77 tokens) --opt hc --target c: builds with the tokenizer" sh -c "
  $FLUXCC examples/pipeline-tiny/clip.fdsl --opt hc --target c -o $T/clipv >/dev/null && make -s -C $T/clipv >/dev/null 2>&1 && test -e $T/clipv/clip_tokenizer.o"
if [ -n "$PY" ]; then
  check "./flux --prompt P --tokenizer DIR = ./flux --inputs (transformers' ids of P) byte for byte, = the interpreter; not the random tokens' output" sh -c "
    $PY -c \"import json, sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
c = [c for c in json.load(open('tests/data/clip-tokens.json'))['cases'] if len(c['prompt']) > 40 and c['prompt'].isprintable() and c['prompt'] == c['prompt'].strip() and len(c['ids']) < 77][0]
open('$T/p.txt', 'w').write(c['prompt']); ids = c['ids'] + [c['ids'][-1]] * (77 - len(c['ids']))
st.save('$T/p.ids', {'tokens': np.array([ids], dtype=np.float32)})\" &&
    $T/clipv/flux --random-weights 3 --prompt \"\$(cat $T/p.txt)\" --tokenizer $TOKDIR --out $T/p.a > $T/p.log &&
    grep -q '^prompt: .* of 77 ids before the trailing run of id 49407 (CLIP BPE' $T/p.log && grep -q '^inputs:   tokens from --prompt' $T/p.log &&
    $T/clipv/flux --quiet --random-weights 3 --inputs $T/p.ids --out $T/p.b && cmp $T/p.a $T/p.b &&
    $FLUXCC init examples/pipeline-tiny/clip.fdsl --seed 3 --weights $T/p.w --inputs $T/p.unused --quiet &&
    $FLUXCC run examples/pipeline-tiny/clip.fdsl --weights $T/p.w --inputs $T/p.ids -o $T/p.ref --quiet && $T/clipv/flux --quiet --weights $T/p.w --prompt \"\$(cat $T/p.txt)\" --tokenizer $TOKDIR --check $T/p.ref &&
    $T/clipv/flux --quiet --random-weights 3 --out $T/p.c && ! cmp -s $T/p.a $T/p.c"
fi
expect_fail "--prompt without --tokenizer: exit 2, says what it needs" "prompt needs --tokenizer DIR" "$T/clipv/flux" --prompt "a cat"
check "--prompt over --inputs: the prompt's tokens win (= the --prompt run alone)" sh -c "
  $T/clipv/flux --quiet --random-weights 3 --inputs $T/p.ids --prompt \"\$(cat $T/p.txt)\" --tokenizer $TOKDIR --out $T/p.d && cmp $T/p.d $T/p.a &&
  $T/clipv/flux --quiet --random-weights 3 --inputs $T/p.ids --prompt 'another prompt' --tokenizer $TOKDIR --out $T/p.e && ! cmp -s $T/p.e $T/p.a"
expect_fail "--prompt on a model with no input \`tokens\`: exit 2, names what it needs" "needs an input .tokens. shaped \\[B, T\\]" \
  "$T/hc_flux-tiny/flux" --prompt "a cat" --tokenizer "$TOKDIR"
expect_fail "--prompt with a tokenizer whose ids the model's vocabulary lacks (clip-text-tiny: 1000): exit 2, says so" \
  "token id 49406 is outside the model's vocabulary \\[0, 1000): this tokenizer is not the model's" "$T/clip_hc/flux" --prompt "a cat" --tokenizer "$TOKDIR" --out "$T/bad.o"
rm -rf "$T/tokfifo" && mkdir -p "$T/tokfifo" && cp "$TOKDIR/vocab.json" "$T/tokfifo/" && mkfifo "$T/tokfifo/merges.txt"
expect_fail "--prompt with a FIFO as merges.txt: exit 2 at once, the file named, no output" "tokfifo/merges.txt: is a FIFO (pipe), not a regular file" \
  timeout 10 "$T/clipv/flux" --prompt "a cat" --tokenizer "$T/tokfifo" --out "$T/bad.o"
expect_fail "--prompt with a broken tokenizer folder: exit 2, the file named, no output" "tokbad/special_tokens_map.json" \
  "$T/clipv/flux" --prompt "a cat" --tokenizer "$T/tokbad" --out "$T/bad.o"
mkdir -p "$T/tokempty"
expect_fail "--tokenizer a folder with neither tokenizer's file: exit 2, says what it looks for" "holds neither spiece.model (T5) nor vocab.json (CLIP)" \
  "$T/clipv/flux" --prompt "a cat" --tokenizer "$T/tokempty" --out "$T/bad.o"

# T5: a unigram model trained here with T5's settings (spm_train), the prompts above as its corpus
SPD=$T/t5-tokenizer
if [ -n "$PY" ] && "$PY" -c 'import sentencepiece' 2>/dev/null && command -v spm_train >/dev/null; then
  "$PY" -c "import json; c = json.load(open('tests/data/clip-tokens.json', encoding='utf-8'))['cases']
open('$T/t5corpus.txt', 'w', encoding='utf-8').write(chr(10).join(' '.join(x['prompt'].split()) for x in c if x['prompt'].strip()))"
  mkdir -p "$SPD"
  check "spm_train: a unigram model with T5's settings (nmt_nfkc, pad 0, end 1, unk 2, no start token)" sh -c "
    spm_train --input=$T/t5corpus.txt --model_prefix=$SPD/spiece --model_type=unigram --vocab_size=600 --character_coverage=0.9999 \
      --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --normalization_rule_name=nmt_nfkc --num_threads=1 --minloglevel=2 >/dev/null 2>&1 &&
    test -s $SPD/spiece.model"
  check "T5 tokenizer = sentencepiece's Python binding with T5Tokenizer's rules (tests/reference/t5_tokens_ref.py: 127 pieces at most, end, pad to 128) on the 1200 prompts" sh -c "
    $PY tests/reference/t5_tokens_ref.py $SPD/spiece.model tests/data/clip-tokens.json 128 $T/t5cases.json &&
    $T/tokchk t5 $SPD $T/t5cases.json | grep -qx '1200 of 1200 prompts tokenized as expected (T5 SentencePiece, vocabulary 600)'"
  check "... and one changed id is caught (exit 1)" sh -c "
    $PY -c \"import json; d = json.load(open('$T/t5cases.json', encoding='utf-8')); d['cases'][7]['ids'][0] = 599 if d['cases'][7]['ids'][0] != 599 else 598
json.dump(d, open('$T/t5bad.json', 'w', encoding='utf-8'), ensure_ascii=False)\" &&
    $T/tokchk t5 $SPD $T/t5bad.json > $T/t5bad.out; test \$? -eq 1 && grep -q 'case 7 differs' $T/t5bad.out && grep -q '1199 of 1200' $T/t5bad.out"
  tok5_fail() {
    check "tokenizer t5: $1" sh -c "$T/tokchk t5 '$3' -p '$4' 2>$T/tokerr; test \$? -eq 2 && grep -q -- '$2' $T/tokerr && ! grep -q 'Sanitizer\|runtime error' $T/tokerr"
  }
  tok5_fail "a folder without spiece.model: named" "tokempty/spiece.model: cannot open" "$T/tokempty" "a cat"
  mkdir -p "$T/t5bad" && head -c 3000 "$SPD/spiece.model" > "$T/t5bad/spiece.model"
  tok5_fail "a truncated spiece.model: named, says why" "t5bad/spiece.model: not a SentencePiece model" "$T/t5bad" "a cat"
  tok5_fail "a prompt that is not UTF-8: the byte offset" "not valid UTF-8 at byte 2" "$SPD" "$(printf 'ab\377cd')"
  mkdir -p "$T/t5fifo" && mkfifo "$T/t5fifo/spiece.model"
  mkdir -p "$T/t5big" && truncate -s 65M "$T/t5big/spiece.model"
  tok5_fail "a spiece.model of 65 MiB (sparse): refused by its size before any is read" "t5big/spiece.model: larger than 64 MiB (68157440 bytes)" "$T/t5big" "a cat"
  check "tokenizer t5: a FIFO as spiece.model: refused by name at once (exit 2 within the time-out)" sh -c "
    timeout 10 $T/tokchk t5 $T/t5fifo -p 'a cat' 2>$T/tokerr; test \$? -eq 2 && grep -q 't5fifo/spiece.model: is a FIFO (pipe), not a regular file' $T/tokerr"
  # crafted models (tests/fuzz/spiece_mutate.py): the normalizer's charsmap (trie size, units, values, strings) and the
  # specs' other fields, each refused with the field named before libsentencepiece (which trusts them) sees it;
  # the well-formed ones (a 32-deep trie, a denormalizer, no charsmap) still work
  if python3 tests/fuzz/spiece_mutate.py crafted "$SPD/spiece.model" "$T/t5craft" >"$T/log" 2>&1; then
    # tok5_craft NAME WANT: WANT "ok": accepted and used under ASan; else exit 2, WANT said after the file's name
    tok5_craft() {
      if [ "$2" = ok ]; then
        check "tokenizer t5: crafted spiece.model $1: accepted, encodes under ASan" sh -c '
          "$0" t5 "$1" -p "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa a cat Ｆｕｌｌ ﬁ" 20 2>"$2" && ! grep -q "Sanitizer\|runtime error" "$2"' \
          "$T/tokchk" "$T/t5craft/$1" "$T/tokerr"
      else
        check "tokenizer t5: crafted spiece.model $1: exit 2, says \"$2\"" sh -c '
          "$0" t5 "$1" -p "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa a cat Ｆｕｌｌ ﬁ" 20 2>"$2"; test $? -eq 2 &&
          grep -qF -- "$1/spiece.model: not a SentencePiece model: " "$2" && grep -qF -- "$3" "$2" && ! grep -q "Sanitizer\|runtime error" "$2"' \
          "$T/tokchk" "$T/t5craft/$1" "$T/tokerr" "$2"
      fi
    }
    while IFS="$(printf '\t')" read -r name want; do tok5_craft "$name" "$want"; done < "$T/t5craft/cases.tsv"
  else
    bad "tests/fuzz/spiece_mutate.py crafted: $(tail -1 "$T/log")"
  fi

  check "t5-encoder-tiny (PoCL, hc): ./flux --prompt P --tokenizer DIR (spiece.model) = ./flux --inputs (the reference's ids of P), byte for byte; not the random tokens' output" sh -c "
    $PY -c \"import json, sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
c = [c for c in json.load(open('$T/t5cases.json', encoding='utf-8'))['cases'] if len(c['prompt']) > 40 and c['prompt'].isprintable() and c['prompt'] == c['prompt'].strip()][0]
open('$T/p5.txt', 'w', encoding='utf-8').write(c['prompt']); st.save('$T/p5.ids', {'tokens': np.array([c['ids']], dtype=np.float32)})\" &&
    $T/t5_hc/flux --random-weights 3 --prompt \"\$(cat $T/p5.txt)\" --tokenizer $SPD --out $T/p5.a > $T/p5.log &&
    grep -q '^prompt: .* of 128 ids before the trailing run of id 0 (T5 SentencePiece' $T/p5.log &&
    $T/t5_hc/flux --quiet --random-weights 3 --inputs $T/p5.ids --out $T/p5.b && cmp $T/p5.a $T/p5.b &&
    $T/t5_hc/flux --quiet --random-weights 3 --out $T/p5.c && ! cmp -s $T/p5.a $T/p5.c"
  expect_fail "t5-encoder-tiny: ./flux --prompt with a FIFO as spiece.model: exit 2 at once, the file named" "t5fifo/spiece.model: is a FIFO (pipe), not a regular file" \
    timeout 10 "$T/t5_hc/flux" --prompt "a cat" --tokenizer "$T/t5fifo" --out "$T/bad.o"
  expect_fail "t5-encoder-tiny: ./flux --prompt with a crafted spiece.model (the trie's size lies): exit 2, the file and field named" \
    "t5craft/size-past-end/spiece.model: not a SentencePiece model: normalizer_spec.precompiled_charsmap: trie size" \
    "$T/t5_hc/flux" --prompt "a cat Ｆｕｌｌ" --tokenizer "$T/t5craft/size-past-end" --out "$T/bad.o"
else
  bad "T5 tokenizer: needs Python's sentencepiece (python3-sentencepiece) and spm_train (sentencepiece): sh scripts/deps.sh test"
fi
