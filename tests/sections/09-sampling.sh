# tests/sections/09-sampling.sh — sampling (./flux --steps N): BFL's denoise loop around the forward vs the NumPy reference
# needs: reference opencl
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== sampling (./flux --steps N): BFL's denoise loop around the forward vs the NumPy reference"
# the input img is the noise; schnell's linear schedule, dev's shifted one with guidance
if [ -n "$PY" ]; then
  for m in flux-tiny-f32 flux-dev-tiny-f32 flux-tiny flux-dev-tiny; do
    case $m in *f32) dt=f32 ;; *) dt=bf16 ;; esac
    case $m in *dev*) steps=6 g="--guidance 4" ;; *) steps=4 g= ;; esac
    check "$m: sample_ref.py, $steps steps" "$PY" tests/reference/sample_ref.py -q --weights "$T/$m.w" --inputs "$T/$m.i" --out "$T/$m.s" \
      --steps $steps $g --axes 8,12,12 --dtype $dt
    check "$m: ./flux --steps $steps $g on PoCL (hc) = reference (f32 1e-5 / bf16 2e-2 rel L2)" sh -c "
      $T/hc_$m/flux --random-weights 7 --random-inputs 7 --steps $steps $g --check $T/$m.s --out $T/$m.lat > $T/$m.slog &&
      grep -q 'sampling: $steps steps, schedule ' $T/$m.slog && test \$(grep -c '^step [0-9]*/$steps: t ' $T/$m.slog) -eq $steps &&
      $PY tests/reference/compare.py $T/$m.lat $T/$m.s --key latents --tol 1"
    sed 's/^/     /' "$T/log"
  done
  check "the schedules: schnell 1, .75, .5, .25, 0; dev shifted (mu from the 16 image tokens)" sh -c "
    grep -q '^step 2/4: t 0.7500 -> 0.5000' $T/flux-tiny-f32.slog && grep -q 'linear (schnell)' $T/flux-tiny-f32.slog &&
    grep -q 'shifted (dev), guidance 4' $T/flux-dev-tiny-f32.slog && grep -q '^step 1/6: t 1.0000 -> 0.8' $T/flux-dev-tiny-f32.slog"
  check "--steps changes the result: 3 steps are not 4 (the reference's check fails, exit 1)" sh -c "
    $T/hc_flux-tiny-f32/flux --quiet --random-weights 7 --random-inputs 7 --steps 3 --check $T/flux-tiny-f32.s; test \$? -eq 1"
fi
