# tests/sections/01-unit.sh — unit tests (ASan + UBSan)
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== unit tests (ASan + UBSan)"
# the compiler's sources built once under the sanitizers (one process per core), linked into each unit test
mkdir -p "$T/uobj"
check "unit build: the compiler's sources under the sanitizers" sh -c "
  printf '%s\n' $LIBSRC | xargs -P $(nproc 2>/dev/null || echo 2) -I{} sh -c 'cc $SANFLAGS -Icompiler -Iruntime -I$B -c {} -o $T/uobj/\$(basename {} .c).o'"
UOBJ=$(for f in $LIBSRC; do printf '%s ' "$T/uobj/$(basename "$f" .c).o"; done)
for t in dtype elaborate symbolic optimize; do
  check "unit build $t" cc $SANFLAGS -Icompiler -Iruntime -I$B -Itests/unit -o "$T/test_$t" tests/unit/test_$t.c $UOBJ -lcjson -lm -lpthread -ldl
  check "unit $t" "$T/test_$t"
done
check "unit build costmodel" cc $SANFLAGS -Icompiler -Iruntime -I$B -Itests/unit -o "$T/test_costmodel" tests/unit/test_costmodel.c $UOBJ -lcjson -lm -lpthread -ldl
mkdir -p "$T/costmodel"
check "unit costmodel (features of known kernels; the XGBoost model on data of known order)" "$T/test_costmodel" "$T/costmodel"
check "unit build safetensors" cc $SANFLAGS -Iruntime -o "$T/test_st" tests/unit/test_safetensors.c runtime/safetensors.c runtime/files.c -lcjson
check "unit safetensors" sh -c "cd '$T' && ./test_st"
