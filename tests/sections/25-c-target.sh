# tests/sections/25-c-target.sh — the C target: C11 + OpenMP kernels built by cc (no OpenCL, no GPU) vs the interpreter; BEAM on it
# needs: reference property beam
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== the C target: C11 + OpenMP kernels built by cc (no OpenCL, no GPU) vs the interpreter; BEAM on it"
# one Target entry (compiler/target.c) and templates/c/: each kernel a C
# function whose work-groups are an OpenMP loop; the searches build every
# candidate into a shared object with the Makefile's KFLAGS and time it
for mo in "flux-tiny-f32 raw" "flux-tiny-f32 hc" "flux-tiny-f32 random --seed 1" "flux-tiny-f32 random --seed 2" \
          "flux-tiny raw" "flux-tiny hc" "flux-tiny random --seed 3" "flux-dev-tiny hc"; do
  set -- $mo; m=$1; shift; n=$(echo "$m $*" | tr -d ' -')
  check "$m --opt $* --target c: builds without warnings, output = interpreter (nothing unwritten)" sh -c "
    $FLUXCC examples/$m.fdsl --opt $* --target c -o $T/c_$n >/dev/null && make -j2 -C $T/c_$n > $T/c_$n.log 2>&1 &&
    ! grep -i warning $T/c_$n.log && $T/c_$n/flux --quiet --random-weights 7 --random-inputs 7 --check $T/$m.o"
done
check "flux-tiny --opt hc --target c under ASan + UBSan (make flux-san, OpenMP included) = interpreter" sh -c "
  make -s -j2 -C $T/c_fluxtinyhc flux-san > $T/c_san.log 2>&1 && ! grep -i warning $T/c_san.log &&
  $T/c_fluxtinyhc/flux-san --quiet --random-weights 7 --random-inputs 7 --check $T/flux-tiny.o"
for f in tests/opt/*.fdsl; do
  n=$(basename "$f" .fdsl)
  check "$n: random opts --target c = interpreter" sh -c "rm -rf $T/c_rnd; $FLUXCC $f --opt random --seed 1 --target c -o $T/c_rnd >/dev/null &&
    make -s -j2 -C $T/c_rnd >/dev/null 2>&1 && $T/c_rnd/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_$n.o"
done
check "--target c has no tensor cores: tc says why per kernel and is raw there; LOCAL is refused (one work-item per group)" sh -c "
  $FLUXCC --dump kernels tests/opt/matmul.fdsl --opt tc --target c 2> $T/c_tc.err > $T/c_tc.txt &&
  grep -q 'no tensor cores: TC: target c has no tensor cores' $T/c_tc.err && grep -q 'tensor cores on 0 of' $T/c_tc.err &&
  sed -e 's/\"target\": \"cuda\"/\"target\": \"c\"/' -e 's/\"UPCAST\"/\"LOCAL\"/' tests/golden/src/linear_bias.vec-cuda.json > $T/c_local.json &&
  cd tests/golden/src && $FLUXCC linear_bias.fdsl --opt beam --target c --records $T/c_local.json -o $T/c_local 2> $T/c_local.err; test \$? -eq 2 &&
  grep -q 'LOCAL: more than 1 thread per block on target c' $T/c_local.err"
sed 's/^/     /' "$T/log"
CBEAM="--target c --beam 2 --budget 6"
check "matmul --opt beam --target c: candidates built by cc, validated and timed; the project = interpreter" sh -c "
  $FLUXCC tests/opt/matmul.fdsl --opt beam $CBEAM --cache $T/ccache -o $T/c_beam 2> $T/c_beam.err &&
  make -s -C $T/c_beam >/dev/null 2>&1 && $T/c_beam/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_matmul.o &&
  grep -q '\"device\":.*(C, OpenMP, [0-9]* threads)\"' $T/c_beam/provenance.json"
if [ -n "$PY" ]; then
  check "--target c: records: every kernel chose a validated, timed candidate" "$PY" tests/check_records.py "$T/c_beam" --searched
  check "--target c: a wrong candidate is rejected and recorded, never chosen (FLUXCC_FAULT)" sh -c "
    FLUXCC_FAULT=wrong-every=2 $FLUXCC tests/opt/matmul.fdsl --opt beam $CBEAM --no-cache -o $T/c_fault 2>/dev/null &&
    $PY tests/check_records.py $T/c_fault --searched --expect-wrong && make -s -C $T/c_fault >/dev/null 2>&1 &&
    $T/c_fault/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_matmul.o"
fi
check "--target c: a second run takes every kernel from the cache; --records replays with no C compiler, byte-identical" sh -c "
  $FLUXCC tests/opt/matmul.fdsl --opt beam $CBEAM --cache $T/ccache -o $T/c_beam2 2> $T/c_beam2.err &&
  test \$(grep -c ': cached' $T/c_beam2.err) -eq \$(ls $T/c_beam/kernels | grep -c '\.c\$') &&
  diff -r -x provenance.json -x '*.o' -x flux $T/c_beam $T/c_beam2 &&
  CC=/nonexistent/cc $FLUXCC tests/opt/matmul.fdsl --opt beam --target c --no-cache --records $T/c_beam/records.json -o $T/c_replay >/dev/null &&
  diff -r -x provenance.json -x '*.o' -x flux $T/c_beam $T/c_replay"
check "--target c with no working C compiler: a search stops at once with one clear message (exit 2)" sh -c "
  CC=/nonexistent/cc $FLUXCC tests/opt/matmul.fdsl --opt beam --target c --no-cache -o $T/c_nocc 2> $T/c_nocc.err; test \$? -eq 2 &&
  grep -q \"needs a device to time kernels on: the C compiler cannot build the kernels (/nonexistent/cc .*): cannot run the C compiler '/nonexistent/cc'\" $T/c_nocc.err &&
  test \$(wc -l < $T/c_nocc.err) -eq 1 && test ! -e $T/c_nocc"
check "--target: an unknown one names the known ones (exit 2)" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --opt raw --target metal -o $T/metal 2> $T/metal.err; test \$? -eq 2 &&
  grep -q \"^fluxcc: error: --target 'metal': use cuda, opencl or c\$\" $T/metal.err && test ! -e $T/metal"
