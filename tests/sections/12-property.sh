# tests/sections/12-property.sh — randomized property test: random legal opt sequences compute what RAW computes
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== randomized property test: random legal opt sequences compute what RAW computes"
# every kernel of each model gets its own random sequence (TC first half the
# time, where it applies, then LOCAL, UPCAST, UNROLL, GROUP, GROUPTOP, SWAP,
# NOLOCALS, STAGE); the whole program must still match the interpreter
# (f32: 1e-5, bf16: 2e-2 relative L2), with every output element written
for f in tests/opt/*.fdsl examples/flux-tiny-f32.fdsl examples/flux-tiny.fdsl; do
  n=$(basename "$f" .fdsl)
  "$FLUXCC" init "$f" --seed 3 --weights "$T/p_$n.w" --inputs "$T/p_$n.i" && "$FLUXCC" run "$f" --weights "$T/p_$n.w" --inputs "$T/p_$n.i" -o "$T/p_$n.o" >/dev/null
  for seed in 1 2 3; do
    rm -rf "$T/rnd"
    check "$n: random opts seed $seed = interpreter" sh -c "$FLUXCC $f --opt random --seed $seed --target opencl -o $T/rnd >/dev/null &&
      make -s -C $T/rnd >/dev/null 2>&1 && $T/rnd/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_$n.o"
  done
done
