#!/bin/sh
# scripts/fuzz-tokenizers.sh SECONDS [OUT] — fuzz the files of both tokenizer
# folders under ASan + UBSan, for SECONDS each (default 600):
#  - CLIP's (vocab.json, merges.txt, special_tokens_map.json, tokenizer_config.json):
#    libFuzzer on tests/fuzz/fuzz_clip_files.c from tests/fuzz/corpus_clip_files;
#  - T5's spiece.model: structured mutants of a model trained here with T5's
#    settings (tests/fuzz/spiece_mutate.py: the normalizer's charsmap, its trie
#    units picked among those a text reaches, its size, values and strings; the
#    spec's other fields, a denormalizer, pieces, trainer spec, self-test data),
#    each opened by tokenizer_check and, when accepted, used on a prompt.
# A finding is a crash or signal, a time-out, a sanitizer report, or a refusal
# that does not name the file; findings are told apart by the sanitizer's
# SUMMARY line (else the exit status) and kept in OUT/findings/. Prints the
# runs and the distinct findings of each half; exit 1 if any.
set -u
secs=${1:-600}
out=${2:-/tmp/fuzz-tokenizers}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
mkdir -p "$out/bin" "$out/findings" "$out/corpus_clip_files" "$out/base"
SANF="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined"
c++ -std=c++17 $SANF -Iruntime -c -o "$out/bin/t5tok.o" runtime/t5_tokenizer.cc &&
  cc -std=c11 -D_GNU_SOURCE $SANF -DFLUX_CLIP_BPE -DFLUX_SENTENCEPIECE -Iruntime -o "$out/bin/tokchk" tests/tokenizer_check.c \
    runtime/clip_tokenizer.c runtime/files.c "$out/bin/t5tok.o" -lcjson -lpcre2-8 -lutf8proc -lsentencepiece -lstdc++ &&
  clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Iruntime -o "$out/bin/fuzz_clip_files" \
    tests/fuzz/fuzz_clip_files.c runtime/clip_tokenizer.c runtime/files.c -lcjson -lpcre2-8 -lutf8proc || exit 2
seen=$out/findings/seen   # the distinct findings' keys, one a line
: > "$seen"
# key LOG: what tells a finding apart (the SUMMARY line without addresses), else $2
key() { k=$(grep -m1 '^SUMMARY:' "$1" | sed 's/0x[0-9a-f]*//g; s/([^)]*)//g; s/  */ /g'); echo "${k:-$2}"; }
new_key() { grep -qxF -- "$1" "$seen" && return 1; echo "$1" >> "$seen"; }

echo "fuzzing CLIP's tokenizer files for $secs s"
end=$(( $(date +%s) + secs )) runs=0 found=0 distinct=0
while [ "$(date +%s)" -lt "$end" ]; do   # libFuzzer stops at a finding: note it and go on
  left=$(( end - $(date +%s) ))
  "$out/bin/fuzz_clip_files" -max_total_time="$left" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/findings/clip-" "$out/corpus_clip_files" tests/fuzz/corpus_clip_files > "$out/clip.log" 2>&1; rc=$?
  r=$(grep -m1 '^stat::number_of_executed_units' "$out/clip.log" | sed 's/.*: *//')
  runs=$((runs + ${r:-0}))
  [ $rc -eq 0 ] && break
  found=$((found + 1))
  k=$(key "$out/clip.log" "libFuzzer exit $rc")
  if new_key "clip: $k"; then distinct=$((distinct + 1)); cp "$out/clip.log" "$out/findings/clip-$distinct.log"; echo "FINDING clip $distinct: $k"; fi
done
echo "CLIP files: runs $runs, findings $found, distinct $distinct"
total=$distinct

echo "fuzzing T5's spiece.model (structured mutants) for $secs s"
python3 -c "import json; c = json.load(open('tests/data/clip-tokens.json', encoding='utf-8'))['cases']
open('$out/base/corpus.txt', 'w', encoding='utf-8').write(chr(10).join(' '.join(x['prompt'].split()) for x in c if x['prompt'].strip()))" &&
  spm_train --input="$out/base/corpus.txt" --model_prefix="$out/base/spiece" --model_type=unigram --vocab_size=600 --character_coverage=0.9999 \
    --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --normalization_rule_name=nmt_nfkc --num_threads=1 --minloglevel=2 >/dev/null 2>&1 || {
  echo "spm_train failed (sh scripts/deps.sh test installs sentencepiece)"; exit 2; }
prompt="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa A cat, Ｆｕｌｌ width ﬁ ① ㌀ ½   spaced	tab ｶﾀｶﾅ 한국어 ‘quoted’"
end=$(( $(date +%s) + secs )) seed=${SEED:-$(date +%s)} batch=0 runs=0 found=0 distinct=0 accepted=0 refused=0
w=$out/work
while [ "$(date +%s)" -lt "$end" ]; do
  rm -rf "$w"
  python3 tests/fuzz/spiece_mutate.py random $((seed + batch)) 200 "$out/base/spiece.model" "$w" || exit 2
  for d in "$w"/*; do
    [ "$(date +%s)" -lt "$end" ] || break
    timeout -k 2 20 "$out/bin/tokchk" t5 "$d" -p "$prompt" 20 > "$d/log" 2>&1; rc=$?
    runs=$((runs + 1))
    if grep -q 'Sanitizer\|runtime error' "$d/log"; then :
    elif [ $rc -eq 0 ]; then accepted=$((accepted + 1)); continue
    elif [ $rc -eq 2 ] && grep -q "^tokenizer_check: $d/spiece.model: ." "$d/log"; then refused=$((refused + 1)); continue
    fi
    found=$((found + 1))
    k=$(key "$d/log" "exit $rc: $(head -c 100 "$d/log" | sed "s|$d||g" | head -1)")
    if new_key "t5: $k"; then
      distinct=$((distinct + 1)); cp -r "$d" "$out/findings/t5-$distinct"
      echo "FINDING t5 $distinct: $k (seed $((seed + batch)), mutant $(basename "$d"))"
    fi
  done
  batch=$((batch + 1))
done
echo "T5 spiece.model: runs $runs (accepted $accepted, refused cleanly $refused), findings $found, distinct $distinct (seeds $seed..$((seed + batch - 1)), 200 mutants each)"
total=$((total + distinct))
[ $total -eq 0 ] && echo "no findings" || { echo "distinct findings: $total (in $out/findings)"; exit 1; }
