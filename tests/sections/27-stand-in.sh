# tests/sections/27-stand-in.sh — the CUDA search path with no GPU: fluxcc's CUDA stand-in (NVRTC + driver over the emulation)
# needs: reference attention
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== the CUDA search path with no GPU: fluxcc's CUDA stand-in (NVRTC + driver over the emulation)"
# FLUXCC_CUDA_LIBS selects $B/cuda-stand-in/lib64 (built by make test): the
# real NVRTC compiles each candidate for sm_90 where it is installed, the
# emulation runs it, and the driver enforces the launch limits
SI=$TOP/$B/cuda-stand-in/lib64
SIC="env FLUXCC_CUDA_LIBS=$SI"
check "stand-in: unit build" cc $SANFLAGS -Itests/unit -o "$T/test_stand_in" tests/unit/test_stand_in.c -ldl
check "stand-in: unit (computes; block, grid, shared memory, registers and launch bounds refused with the driver's codes; real cubins refused; NVRTC's errors; loads and stores outside an allocation, near and far, CUDA_ERROR_ILLEGAL_ADDRESS and sticky until the context is destroyed)" \
  "$T/test_stand_in" "$SI"
check "stand-in: unit, without the real NVRTC behind it" env FLUXCC_STAND_IN_NVRTC=0 "$T/test_stand_in" "$SI"
check "stand-in: the user's command (default target cuda, --opt beam) on flux-tiny: every candidate validated, records name the emulation and the libraries" sh -c "
  $SIC $FLUXCC examples/flux-tiny.fdsl --opt beam --budget 4 --cache $T/sicache -o $T/si_beam 2> $T/si_beam.err &&
  grep -q 'search of [0-9]* kernels on CUDA emulation on the CPU (fluxcc stand-in' $T/si_beam.err &&
  grep -q '\"device\":.*CUDA emulation on the CPU' $T/si_beam/records.json && grep -q 'stand-in NVRTC .*$SI/libnvrtc.so, stand-in driver $SI/libcuda.so.1' $T/si_beam/records.json &&
  { [ -z '$PY' ] || $PY tests/check_records.py $T/si_beam --searched; }"
emu_check "stand-in: the searched project's CUDA text (make emu) = interpreter, race-checked" "$T/si_beam" "$T/flux-tiny.o"
# both of the stand-in's NVRTC paths on every machine: the real NVRTC behind it where the toolkit
# is installed (as on CI), and none (FLUXCC_STAND_IN_NVRTC=0: a machine without the toolkit)
# (fake times: the finals, which time the binaries the search kept, surely run; their release is checked)
check "stand-in: the CUDA search path under ASan + UBSan + LeakSanitizer (fluxcc's sanitizer build), the finals included, with the real NVRTC behind the stand-in and without it" sh -c "
  for nv in 1 0; do rm -rf $T/si_san && $SIC FLUXCC_STAND_IN_NVRTC=\$nv FLUXCC_FAULT=fake-time $SAN tests/opt/matmul.fdsl --opt beam --budget 8 --no-cache -o $T/si_san 2> $T/si_san.err &&
    grep -Eq 'the finals decided [1-9][0-9]* kernels' $T/si_san.err && ! grep -q 'Sanitizer\|runtime error' $T/si_san.err || { cat $T/si_san.err; exit 1; }; done"
check "stand-in: a second run takes every kernel from the cache and writes the same project" sh -c "
  $SIC $FLUXCC examples/flux-tiny.fdsl --opt beam --budget 4 --cache $T/sicache -o $T/si_beam2 2> $T/si_beam2.err &&
  test \$(grep -c ': cached' $T/si_beam2.err) -eq \$(ls $T/si_beam/kernels | wc -l) &&
  diff -r -x provenance.json -x '*.o' -x 'flux*' -x emu-obj $T/si_beam $T/si_beam2"
check "stand-in: --records replays the CUDA search with no CUDA library at all, byte-identical" sh -c "
  env -u FLUXCC_CUDA_LIBS CUDA_HOME=/nonexistent $FLUXCC examples/flux-tiny.fdsl --opt beam --no-cache --records $T/si_beam/records.json -o $T/si_replay >/dev/null &&
  diff -r -x provenance.json -x '*.o' -x 'flux*' -x emu-obj $T/si_beam $T/si_replay"
# mcts and best on the GEMM prologues (bf16, tensor cores), their searches cached for compare below
for meth in mcts best; do
  check "stand-in: --opt $meth on tests/opt/prologue.fdsl, validated, then its CUDA text on the emulation = interpreter" sh -c "
    $SIC $FLUXCC tests/opt/prologue.fdsl --opt $meth --beam 2 --budget 4 --cache $T/sicache -o $T/si_$meth 2>/dev/null &&
    { [ -z '$PY' ] || $PY tests/check_records.py $T/si_$meth; } && make -s -C $T/si_$meth emu > $T/si_$meth.log 2>&1 &&
    FLUX_EMU_RACECHECK=1 $T/si_$meth/flux-emu --quiet --random-weights 3 --random-inputs 3 --check $T/p_prologue.o"
done
check "stand-in: fluxcc compare --target cuda: seven projects searched, built as flux-emu, checked and timed" sh -c "
  $SIC $FLUXCC compare tests/opt/prologue.fdsl --target cuda --beam 2 --budget 4 --cache $T/sicache --bench 2 --quiet -o $T/si_cmp > $T/si_cmp.out &&
  grep -q '^| best .* ok' $T/si_cmp.out && test \$(grep -c '^| [a-z]* | .* | ok' $T/si_cmp.out) -eq 7 &&
  grep -q 'CUDA emulation on the CPU' $T/si_cmp/compare.md && grep -q 'flux-emu' $T/si_cmp/compare.md && test -x $T/si_cmp/best/flux-emu"
if [ -n "$PY" ]; then
  check "stand-in: a wrong candidate is rejected and recorded, never chosen (FLUXCC_FAULT=wrong-every=2)" sh -c "
    FLUXCC_FAULT=wrong-every=2 $SIC $FLUXCC tests/opt/matmul.fdsl --opt beam --budget 6 --no-cache -o $T/si_fault 2>/dev/null &&
    $PY tests/check_records.py $T/si_fault --searched --expect-wrong"
fi
check "stand-in: candidates given two alike inputs in swapped order compute wrong and are rejected (FLUXCC_FAULT=swap-args-every=1)" sh -c "
  FLUXCC_FAULT=swap-args-every=1 $SIC $FLUXCC tests/opt/attention.fdsl --opt beam --budget 4 --no-cache -o $T/si_swap 2>/dev/null &&
  test \$(grep -c 'output differs from RAW' $T/si_swap/records.json) -ge 3 && { [ -z '$PY' ] || $PY tests/check_records.py $T/si_swap --searched; }"
check "stand-in: a candidate over the device's shared memory is recorded failed with the driver's reason" sh -c "
  FLUX_STAND_IN_SMEM=1024 $SIC $FLUXCC tests/opt/prologue.fdsl --opt beam --budget 4 --no-cache -o $T/si_smem 2>/dev/null &&
  grep -q '\"reason\":.*CUDA_ERROR_INVALID_VALUE: [0-9]* threads per block .* bytes of static shared memory (the device allows 1024 per block)' $T/si_smem/records.json &&
  grep -q '\"status\":[[:space:]]*\"failed\"' $T/si_smem/records.json"
# FLUXCC_FAULT=oob-every=3: every third candidate stores 4 Mi elements past its output (far past:
# once into fluxcc's own memory, or a crash); the stand-in's allocations have guards
check "stand-in: a candidate that stores outside its output (FLUXCC_FAULT=oob-every=3) is CUDA_ERROR_ILLEGAL_ADDRESS, recorded failed; a new context, and the search goes on: exit 0, the others validated, the program = interpreter" sh -c "
  FLUXCC_FAULT=oob-every=3 $SIC $FLUXCC tests/opt/prologue.fdsl --opt beam --budget 6 --no-cache -o $T/si_oob 2> $T/si_oob.err &&
  grep -q 'flux-emu: kernel [a-z0-9_]*, block (.*), thread (.*): a load or store that faulted at address' $T/si_oob.err &&
  test \$(grep -c '\"reason\":[[:space:]]*\"run: launch of [a-z0-9_]*: CUDA_ERROR_ILLEGAL_ADDRESS\"' $T/si_oob/records.json) -ge 2 &&
  grep -q '\"status\":[[:space:]]*\"failed\"' $T/si_oob/records.json && ! grep -q 'context is lost' $T/si_oob/records.json &&
  { [ -z '$PY' ] || $PY tests/check_records.py $T/si_oob --searched; } && make -s -C $T/si_oob emu > $T/si_oob.log 2>&1 &&
  $T/si_oob/flux-emu --quiet --random-weights 3 --random-inputs 3 --check $T/p_prologue.o"
check "stand-in: ... and under ASan + UBSan + LeakSanitizer: the faults caught, the contexts renewed, nothing reported" sh -c "
  FLUXCC_FAULT=fake-time,oob-every=3 $SIC $SAN tests/opt/matmul.fdsl --opt beam --budget 8 --no-cache -o $T/si_oob_san 2> $T/si_oob_san.err &&
  grep -q 'CUDA_ERROR_ILLEGAL_ADDRESS' $T/si_oob_san/records.json && ! grep -q 'Sanitizer\|runtime error' $T/si_oob_san.err || { cat $T/si_oob_san.err; exit 1; }"
check "FLUXCC_FAULT=oob-every only where the device catches such stores (--target cuda): refused on opencl, exit 2" sh -c "
  FLUXCC_FAULT=oob-every=1 $FLUXCC tests/opt/matmul.fdsl --opt beam --target opencl --no-cache -o $T/oob_cl 2> $T/oob_cl.err; test \$? -eq 2 &&
  grep -q 'FLUXCC_FAULT=oob-every=1: only on --target cuda' $T/oob_cl.err && test ! -e $T/oob_cl"
check "stand-in: a bad FLUX_STAND_IN_SMEM is said as such (exit 2), not as an NVIDIA driver that does not start" sh -c "
  FLUX_STAND_IN_SMEM=lots $SIC $FLUXCC tests/opt/matmul.fdsl --opt beam --budget 2 --no-cache -o $T/si_badsmem 2> $T/si_badsmem.err; test \$? -eq 2 &&
  grep -q \"cuInit: CUDA_ERROR_INVALID_VALUE: fluxcc's CUDA stand-in does not start: FLUX_STAND_IN_SMEM='lots': wants a decimal integer from 0 to 233472\" $T/si_badsmem.err &&
  ! grep -q 'nvidia-smi\|NVIDIA driver' $T/si_badsmem.err && test ! -e $T/si_badsmem"
check "stand-in: candidates missing a __syncthreads() compute wrong and are rejected (FLUXCC_FAULT=no-barrier-every=1)" sh -c "
  FLUXCC_FAULT=no-barrier-every=1 $SIC $FLUXCC tests/opt/prologue.fdsl --opt beam --budget 6 --no-cache -o $T/si_nb 2>/dev/null &&
  grep -q 'output differs from RAW' $T/si_nb/records.json && { [ -z '$PY' ] || $PY tests/check_records.py $T/si_nb --searched; }"
check "stand-in: ... and with the race check on, the first such launch is a lost context (exit 2, the race named)" sh -c "
  FLUX_EMU_RACECHECK=1 FLUXCC_FAULT=no-barrier-every=1 $SIC $FLUXCC tests/opt/prologue.fdsl --opt beam --budget 6 --no-cache -o $T/si_nb2 2> $T/si_nb2.err
  test \$? -eq 2 && grep -q 'flux-emu: kernel .*\.cu:[0-9]*, which no thread of the block has written\|race: thread' $T/si_nb2.err &&
  grep -q 'CUDA_ERROR_LAUNCH_FAILED (the CUDA context is lost' $T/si_nb2.err && test ! -e $T/si_nb2"
check "scripts/gpu-check.sh, small mode, end to end on the stand-in: every step ok (torch skipped), tables, records, provenance, trace, reports under OUT" sh -c "
  SMALL=1 BEAM_BUDGET_SMALL=4 CACHE=$T/sicache OUT=$T/gc FLUXCC_CUDA_LIBS=$SI bash scripts/gpu-check.sh > $T/gc.out 2>&1 &&
  test \$(grep -c '^| [0-9]* | .* | ok | ' $T/gc/summary.md) -eq 13 && grep -q '^| 14 | torch-.* | skipped | ' $T/gc/summary.md &&
  grep -q '^14 steps, 0 failed' $T/gc.out && grep -q '^| beam | 68 | [0-9.]* | params' $T/gc/summary.md &&
  test -s $T/gc/full-beam/records.json && test -s $T/gc/full-beam/provenance.json && test -s $T/gc/full-tc.trace.json &&
  grep -q 'by ./flux --profile' $T/gc/report-full-tc.txt && grep -q 'measured on CUDA emulation' $T/gc/report-full-beam.txt"
sed -n '/^| # /,/^| 14 /p' "$T/gc/summary.md" 2>/dev/null | sed 's/^/     /'  # the steps, for the log
check "scripts/gpu-check.sh: a failing step does not stop the others, the summary is printed, exit 1" sh -c "
  SMALL=1 OUT=$T/gc2 CACHE=$T/gc2cache TINY=flux-tiny-f32 MID=missing FULL=missing FLUXCC_CUDA_LIBS=$SI bash scripts/gpu-check.sh > $T/gc2.out 2>&1; test \$? -eq 1 &&
  grep -q '^| 3 | flux-tiny-f32-raw | ok | ' $T/gc2.out && grep -q '^| 6 | missing-raw | FAILED | .*cannot open' $T/gc2.out &&
  grep -q '^| 13 | beam-full | FAILED' $T/gc2.out && grep -q '^14 steps, 9 failed' $T/gc2.out && grep -q '^| 10 | full-hc | FAILED | [0-9]* | exit 1: fluxcc: error: cannot open' $T/gc2.out"
check "stand-in: taken only when asked: a stand-in driver beside a real NVRTC is refused, saying which is which" sh -c "
  mkdir -p $T/si_mixed && ln -sf $SI/libcuda.so.1 $T/si_mixed/libcuda.so.1 && ln -sf /usr/local/cuda/lib64/libnvrtc.so $T/si_mixed/libnvrtc.so &&
  if [ -e /usr/local/cuda/lib64/libnvrtc.so ]; then
    FLUXCC_CUDA_LIBS=$T/si_mixed $FLUXCC tests/opt/matmul.fdsl --opt beam --budget 2 --no-cache -o $T/si_mixed_o 2> $T/si_mixed.err; test \$? -eq 2 &&
    grep -q \"libcuda.so.1 is fluxcc's CUDA stand-in but .*libnvrtc.so.* is a real NVRTC\" $T/si_mixed.err && test ! -e $T/si_mixed_o
  fi &&
  FLUXCC_CUDA_LIBS=$T/nowhere $FLUXCC tests/opt/matmul.fdsl --opt beam --no-cache -o $T/si_none 2> $T/si_none.err; test \$? -eq 2 &&
  grep -q 'FLUXCC_CUDA_LIBS=$T/nowhere: cannot load libnvrtc.so' $T/si_none.err"
