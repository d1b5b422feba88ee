# tests/sections/00-smoke.sh — a numeric smoke of each target, for make check
# needs:
# default: no
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
# make test covers the same and much more (reference, opencl, c-target, emu).
echo "== smoke: flux-tiny-f32 --opt hc on each target (OpenCL on PoCL, C, the CUDA text on the emulator) = the interpreter"
check "smoke: the interpreter's output (fluxcc init --seed 7, run)" sh -c "
  $FLUXCC init examples/flux-tiny-f32.fdsl --seed 7 --weights $T/smoke.w --inputs $T/smoke.i --quiet &&
  $FLUXCC run examples/flux-tiny-f32.fdsl --weights $T/smoke.w --inputs $T/smoke.i -o $T/smoke.o --quiet"
for t in opencl c cuda; do
  case $t in cuda) goal=emu bin=flux-emu ;; *) goal= bin=flux ;; esac
  check "smoke: --target $t builds without warnings and its output = the interpreter's (f32 1e-5 rel L2)" sh -c "
    $FLUXCC examples/flux-tiny-f32.fdsl --opt hc --target $t -o $T/smoke_$t > /dev/null &&
    make -s -j2 -C $T/smoke_$t $goal > $T/smoke_$t.log 2>&1 && ! grep -i warning $T/smoke_$t.log &&
    $T/smoke_$t/$bin --quiet --random-weights 7 --random-inputs 7 --check $T/smoke.o"
done
