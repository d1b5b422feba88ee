# tests/sections/31-fuzz.sh — fuzzing (briefly; scripts/fuzz.sh runs longer)
# needs: tokenizers
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== fuzzing (briefly; scripts/fuzz.sh runs longer)"
if command -v clang >/dev/null 2>&1; then
  FZ="-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined"
  mkdir -p "$T/fobj"
  check "fuzz build fdsl" sh -c "
    printf '%s\n' $LIBSRC | xargs -P $(nproc 2>/dev/null || echo 2) -I{} sh -c 'clang $FZ -Icompiler -Iruntime -I$B -c {} -o $T/fobj/\$(basename {} .c).o' &&
    clang $FZ -Icompiler -Iruntime -I$B -o $T/fuzz_fdsl tests/fuzz/fuzz_fdsl.c $T/fobj/*.o -lcjson -lm -lpthread -ldl"
  check "fuzz build safetensors" clang $FZ -Iruntime -o "$T/fuzz_st" tests/fuzz/fuzz_safetensors.c runtime/safetensors.c runtime/files.c -lcjson
  check "fuzz build clip_tokenizer" clang $FZ -Iruntime -o "$T/fuzz_clip" tests/fuzz/fuzz_clip_tokenizer.c runtime/clip_tokenizer.c runtime/files.c -lcjson -lpcre2-8 -lutf8proc
  check "fuzz build clip_files" clang $FZ -Iruntime -o "$T/fuzz_clip_files" tests/fuzz/fuzz_clip_files.c runtime/clip_tokenizer.c runtime/files.c -lcjson -lpcre2-8 -lutf8proc
  mkdir -p "$T/c1" "$T/c2" "$T/c3" "$T/c4"
  check "fuzz fdsl 20 s: no crash" "$T/fuzz_fdsl" -max_total_time=20 -max_len=4096 -timeout=10 -rss_limit_mb=2048 "$T/c1" tests/fuzz/corpus_fdsl
  check "fuzz safetensors 20 s: no crash" "$T/fuzz_st" -max_total_time=20 -timeout=10 -rss_limit_mb=2048 "$T/c2" tests/fuzz/corpus_safetensors
  check "fuzz CLIP's tokenizer 20 s (any prompt: refused as not UTF-8, or start, ids in the vocabulary, end; truncation keeps the prefix): no crash" \
    env FUZZ_CLIP_DIR="$TOKDIR" "$T/fuzz_clip" -max_total_time=20 -max_len=2048 -timeout=10 -rss_limit_mb=2048 "$T/c3" tests/fuzz/corpus_clip
  check "fuzz CLIP's tokenizer files 10 s (vocab.json, merges.txt, special_tokens_map.json, tokenizer_config.json): refused with a message or encoding within the vocabulary, no crash" \
    "$T/fuzz_clip_files" -max_total_time=10 -max_len=65536 -timeout=10 -rss_limit_mb=2048 "$T/c4" tests/fuzz/corpus_clip_files
  if [ -s "$T/t5-tokenizer/spiece.model" ]; then   # the tokenizers section's model and tokenizer_check (ASan + UBSan)
    check "T5's spiece.model: 100 structured mutants (tests/fuzz/spiece_mutate.py; scripts/fuzz-tokenizers.sh runs longer): each accepted, or refused naming the file; no crash" sh -c '
      python3 tests/fuzz/spiece_mutate.py random 1 100 "$0/t5-tokenizer/spiece.model" "$0/t5mut" || exit 1
      for d in "$0"/t5mut/*; do
        timeout -k 2 20 "$0/tokchk" t5 "$d" -p "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa A cat, Ｆｕｌｌ width ﬁ ① ½" 20 > "$d/log" 2>&1; rc=$?
        if grep -q "Sanitizer\|runtime error" "$d/log" || { [ $rc -ne 0 ] && { [ $rc -ne 2 ] || ! grep -q "^tokenizer_check: $d/spiece.model: ." "$d/log"; }; }; then
          echo "$d: exit $rc"; cat "$d/log"; exit 1
        fi
      done' "$T"
  fi
else
  bad "clang with libFuzzer is not installed (apt-get install clang libclang-rt-14-dev)"
fi
