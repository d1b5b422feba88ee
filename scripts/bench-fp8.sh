#!/bin/sh
# scripts/bench-fp8.sh [DIR] — fp8 weights against f32 on this machine's PoCL:
# flux-tiny-f32 and flux-mid-f32 compiled --opt hc with and without --weights
# fp8 (and, with OLD=path/to/another/fluxcc, fp8 by that one too), built, then
# each binary's forward (`./flux --bench BENCH`, its median) in ROUNDS rounds,
# the binaries interleaved and their order turned each round; prints every
# round's medians and, per model, the relative L2 of the fp8 output against the
# f32 one (the same seeded weights, quantized at load). A benchmark, not a test.
set -eu
D=${1:-build/bench-fp8}
ROUNDS=${ROUNDS:-5}
MODELS=${MODELS:-flux-tiny-f32 flux-mid-f32}
make -s fluxcc >/dev/null
mkdir -p "$D"
ALL=
for m in $MODELS; do
  for v in f32 fp8 ${OLD:+old}; do
    dir=$D/$m-$v fc=./fluxcc w=
    [ "$v" = f32 ] || w="--weights fp8"
    [ "$v" = old ] && fc=$OLD
    [ -x "$dir/flux" ] || { $fc examples/$m.fdsl $w --opt hc --target opencl --quiet -o "$dir" >/dev/null && make -s -j2 -C "$dir" >/dev/null 2>&1; }
    "$dir/flux" --quiet --random-weights 1 --random-inputs 1 --out "$dir/out.safetensors" 2>/dev/null
    ALL="$ALL $dir"
  done
done
for r in $(seq "$ROUNDS"); do
  order=$ALL
  [ $((r % 2)) = 0 ] && order=$(printf '%s\n' $ALL | tac)
  for dir in $order; do
    n=20; case $dir in *mid*) n=5;; esac
    printf '%s round %d: ' "${dir##*/}" "$r"
    "$dir/flux" --quiet --random-weights 1 --random-inputs 1 --bench $n | sed -n 's/^bench: *median \([0-9.]*\) ms.*/\1 ms/p'
  done
done
for m in $MODELS; do
  printf '%s fp8 against f32: ' "$m"
  python3 tests/reference/compare.py "$D/$m-fp8/out.safetensors" "$D/$m-f32/out.safetensors" --tol 1 | tr '\n' ' '; echo
done
