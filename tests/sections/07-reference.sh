# tests/sections/07-reference.sh — interpreter vs the independent NumPy reference
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== interpreter vs the independent NumPy reference"
if [ -z "$PY" ]; then bad "no python3 with numpy (apt-get install python3-numpy)"; fi
for m in flux-tiny-f32 flux-dev-tiny-f32 flux-tiny flux-dev-tiny; do
  case $m in *f32) dt=f32 tol=1e-6 ;; *) dt=bf16 tol=2e-2 ;; esac
  check "$m: init" "$FLUXCC" init examples/$m.fdsl --seed 7 --weights "$T/$m.w" --inputs "$T/$m.i"
  check "$m: run" "$FLUXCC" run examples/$m.fdsl --weights "$T/$m.w" --inputs "$T/$m.i" -o "$T/$m.o"
  [ -n "$PY" ] || continue
  check "$m: reference" "$PY" tests/reference/flux_ref.py -q --weights "$T/$m.w" --inputs "$T/$m.i" --out "$T/$m.r" \
    --axes 8,12,12 --theta 10000 --dtype $dt
  check "$m: interpreter = reference within $tol rel L2" "$PY" tests/reference/compare.py "$T/$m.o" "$T/$m.r" --tol $tol --key out
  cat "$T/log" | sed 's/^/     /'
done
check "reference outputs for scripts/gpu-check.sh are current" sh -c "
  cmp $T/flux-tiny.o tests/data/flux-tiny.seed7.out.safetensors && cmp $T/flux-tiny-f32.o tests/data/flux-tiny-f32.seed7.out.safetensors"
check "flux-tiny under sanitizers gives the same bytes" sh -c "
  $SAN init examples/flux-tiny.fdsl --seed 7 --weights $T/sw --inputs $T/si && cmp $T/sw $T/flux-tiny.w && cmp $T/si $T/flux-tiny.i &&
  $SAN run examples/flux-tiny.fdsl --weights $T/sw --inputs $T/si -o $T/so && cmp $T/so $T/flux-tiny.o"
check "init is deterministic, seeds differ" sh -c "
  $FLUXCC init examples/flux-tiny.fdsl --seed 7 --weights $T/w2 --inputs $T/i2 && cmp $T/w2 $T/flux-tiny.w && cmp $T/i2 $T/flux-tiny.i &&
  $FLUXCC init examples/flux-tiny.fdsl --seed 8 --weights $T/w3 --inputs $T/i3 && ! cmp -s $T/w3 $T/flux-tiny.w"
check "init and run say on one line what they wrote (path, tensors, bytes); --quiet says nothing" sh -c "
  $FLUXCC init examples/flux-tiny.fdsl --seed 7 --weights $T/w4 --inputs $T/i4 > $T/said &&
  grep -qx 'wrote $T/w4 (80 tensors, '\$(stat -c %s $T/w4)' bytes) and $T/i4 (6 tensors, '\$(stat -c %s $T/i4)' bytes)' $T/said &&
  $FLUXCC run examples/flux-tiny.fdsl --weights $T/w4 --inputs $T/i4 -o $T/o4 > $T/said &&
  grep -qE '; wrote $T/o4 \(1 tensor, '\$(stat -c %s $T/o4)' bytes\)\$' $T/said &&
  $FLUXCC init examples/flux-tiny.fdsl --seed 7 --weights $T/w4 --inputs $T/i4 --quiet > $T/said && test ! -s $T/said &&
  $FLUXCC run examples/flux-tiny.fdsl --weights $T/w4 --inputs $T/i4 -o $T/o4 --quiet > $T/said && test ! -s $T/said"
if [ -n "$PY" ]; then
  check "reference self-test" "$PY" tests/reference/make_tiny.py --selftest --params-tsv tests/data/flux1-schnell-params.tsv
fi
