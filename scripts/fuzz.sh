#!/bin/sh
# scripts/fuzz.sh [SECONDS] — fuzz the .fdsl front end, the safetensors reader and
# CLIP's tokenizer (libFuzzer + ASan + UBSan) for SECONDS each (default 600). Corpora grow in
# build/fuzz/; crashes are written there as crash-* and fail the script.
set -eu
S=${1:-600}
B=${B:-build}
make -s fluxcc >/dev/null
F=$B/fuzz
mkdir -p "$F/corpus_fdsl" "$F/corpus_st"
LIBSRC="$(ls compiler/*.c | grep -v main.c) runtime/safetensors.c runtime/files.c $B/fdsl.tab.c $B/fdsl.lex.c"
FZ="-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined"
clang $FZ -Icompiler -Iruntime -I$B -o "$F/fuzz_fdsl" tests/fuzz/fuzz_fdsl.c $LIBSRC -lcjson -lm
clang $FZ -Iruntime -o "$F/fuzz_st" tests/fuzz/fuzz_safetensors.c runtime/safetensors.c runtime/files.c -lcjson
clang $FZ -Iruntime -o "$F/fuzz_clip" tests/fuzz/fuzz_clip_tokenizer.c runtime/clip_tokenizer.c runtime/files.c -lcjson -lpcre2-8 -lutf8proc
mkdir -p "$F/corpus_clip" "$F/clip-tokenizer"
python3 tests/clip_vocab.py tests/data/clip-bpe-16e6.txt.gz "$F/clip-tokenizer"
echo "fuzzing the front end for $S s"
"$F/fuzz_fdsl" -max_total_time="$S" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$F/" \
  -print_final_stats=1 "$F/corpus_fdsl" tests/fuzz/corpus_fdsl 2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss|==|SUMMARY)" || true
echo "fuzzing the safetensors reader for $S s"
"$F/fuzz_st" -max_total_time="$S" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$F/" \
  -print_final_stats=1 "$F/corpus_st" tests/fuzz/corpus_safetensors 2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss|==|SUMMARY)" || true
echo "fuzzing CLIP's tokenizer for $S s"
FUZZ_CLIP_DIR="$F/clip-tokenizer" "$F/fuzz_clip" -max_total_time="$S" -max_len=2048 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$F/" \
  -print_final_stats=1 "$F/corpus_clip" tests/fuzz/corpus_clip 2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss|==|SUMMARY)" || true
if ls "$F"/crash-* "$F"/leak-* "$F"/timeout-* >/dev/null 2>&1; then
  echo "findings:"; ls "$F"/crash-* "$F"/leak-* "$F"/timeout-* 2>/dev/null; exit 1
fi
echo "no findings"
