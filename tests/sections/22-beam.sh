# tests/sections/22-beam.sh — BEAM: kernels timed on PoCL, every candidate validated against RAW, records, cache, replay
# needs: reference property
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== BEAM: kernels timed on PoCL, every candidate validated against RAW, records, cache, replay"
for m in flux-tiny flux-tiny-f32; do
  check "$m: --opt beam builds and the binary passes --check against the interpreter" sh -c "
    $FLUXCC examples/$m.fdsl --opt beam $BEAMOPTS --cache $T/bcache -o $T/beam_$m 2> $T/beam_$m.err &&
    make -s -C $T/beam_$m >/dev/null 2>&1 && $T/beam_$m/flux --quiet --random-weights 7 --random-inputs 7 --check $T/$m.o"
  if [ -n "$PY" ]; then
    check "$m: records: every kernel chose a validated, timed candidate; kernel headers say what was measured" \
      "$PY" tests/check_records.py "$T/beam_$m" --searched
  fi
  check "$m: a second run takes every kernel from the cache and writes the same project" sh -c "
    $FLUXCC examples/$m.fdsl --opt beam $BEAMOPTS --cache $T/bcache -o $T/beam2_$m 2> $T/beam2.err &&
    test \$(grep -c ': cached' $T/beam2.err) -eq \$(ls $T/beam_$m/kernels | wc -l) && diff -r -x provenance.json -x '*.o' -x flux $T/beam_$m $T/beam2_$m"
  # the ICD loader finds no driver in an empty vendors directory: no OpenCL device at all
  mkdir -p "$T/no-icd"
  check "$m: --records replays the search with no OpenCL device, byte-identical" sh -c "
    OCL_ICD_VENDORS=$T/no-icd $FLUXCC examples/$m.fdsl --opt beam --target opencl --no-cache --records $T/beam_$m/records.json -o $T/replay_$m >/dev/null &&
    diff -r -x provenance.json -x '*.o' -x flux $T/beam_$m $T/replay_$m"
done
check "with no OpenCL device a search stops at once with one clear message (exit 2)" sh -c "
  OCL_ICD_VENDORS=$T/no-icd $FLUXCC examples/flux-tiny.fdsl --opt beam --target opencl --no-cache -o $T/nodev 2> $T/nodev.err; test \$? -eq 2 &&
  grep -q 'needs a device to time kernels on: no OpenCL platform found' $T/nodev.err && test \$(wc -l < $T/nodev.err) -eq 1 && test ! -e $T/nodev"
check "--target cuda without a GPU: one clear message, exit 2" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --opt beam -o $T/nocuda 2> $T/nocuda.err; test \$? -eq 2 &&
  grep -q 'cannot load the CUDA driver\|cuInit\|cannot load NVRTC' $T/nocuda.err && test \$(wc -l < $T/nocuda.err) -eq 1 && test ! -e $T/nocuda"
if [ -n "$PY" ]; then
  # the test-only fault switch makes every 2nd candidate store a wrong value
  check "a wrong candidate is rejected and recorded, never chosen (FLUXCC_FAULT)" sh -c "
    FLUXCC_FAULT=wrong-every=2 $FLUXCC tests/opt/matmul.fdsl --opt beam $BEAMOPTS --no-cache -o $T/fault 2>/dev/null &&
    $PY tests/check_records.py $T/fault --searched --expect-wrong && make -s -C $T/fault >/dev/null 2>&1 &&
    $T/fault/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_matmul.o"
fi
# killed with SIGKILL mid-search: the kernels finished before stay in the cache
# (written atomically) and the next run resumes from them, unchanged
check "a search killed with SIGKILL resumes from the cache; kernels done before the kill keep their records" sh -c "
  rm -rf $T/kc $T/kc_snap; $FLUXCC examples/flux-tiny-f32.fdsl --opt beam $BEAMOPTS --cache $T/kc -o $T/killed 2>/dev/null & pid=\$!
  i=0; while [ \$(ls $T/kc 2>/dev/null | grep -c 'json\$') -lt 5 ] && [ \$i -lt 600 ]; do sleep 0.2; i=\$((i+1)); done
  kill -9 \$pid; wait \$pid; cp -r $T/kc $T/kc_snap; n=\$(ls $T/kc_snap | grep -c 'json\$'); test \$n -ge 5 && test \$n -lt 50 &&
  $FLUXCC examples/flux-tiny-f32.fdsl --opt beam $BEAMOPTS --cache $T/kc -o $T/resumed 2> $T/resume.err &&
  test \$(grep -c ': cached' $T/resume.err) -ge \$n && for f in $T/kc_snap/*.json; do cmp \$f $T/kc/\$(basename \$f) || exit 1; done &&
  make -s -C $T/resumed >/dev/null 2>&1 && $T/resumed/flux --quiet --random-weights 7 --random-inputs 7 --check $T/flux-tiny-f32.o"
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  check "NVRTC compiles what a CUDA search of flux-tiny would time (raw, hc, tc, first beam round; no GPU needed; candidates that spill are refused)" sh -c "
    $FLUXCC examples/flux-tiny.fdsl --opt beam --compile-only --budget 12 --quiet > $T/nvrtc.txt; test \$? -le 1 &&
    grep -q '^compiled [0-9]* candidates of [0-9]* kernels' $T/nvrtc.txt && test -z \"\$(grep ': compile: ' $T/nvrtc.txt | grep -v ': compile: spills: ')\""
  sed 's/^/     /' "$T/log"
fi
