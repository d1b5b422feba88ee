#!/bin/sh
# scripts/bench-methods.sh [MODEL] [ROUNDS] — the forward time of one model
# (default flux-tiny, bf16) built with each method for OpenCL and run on this
# machine (PoCL on the CPU), measured side by side: ROUNDS rounds, each runs
# every method's --bench 5 in turn; prints the median over rounds of each
# run's median, and the ratio to raw. A benchmark, not a test.
set -eu
M=${1:-flux-tiny}
R=${2:-5}
make -s fluxcc >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
METHODS="raw hc tc"
for m in $METHODS; do
  ./fluxcc examples/$M.fdsl --opt $m --target opencl -o "$T/$m" >/dev/null
  make -s -C "$T/$m" >/dev/null
  "$T/$m/flux" --quiet --random-weights 1 --random-inputs 1 >/dev/null  # builds and caches the kernels
done
r=0
while [ $r -lt "$R" ]; do
  for m in $METHODS; do
    "$T/$m/flux" --quiet --random-weights 1 --random-inputs 1 --bench 5 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' >> "$T/$m.times"
  done
  r=$((r + 1))
done
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median < "$T/raw.times")
printf '%-6s %16s %10s   (%s, %s rounds of --bench 5, PoCL)\n' method "median ms" "vs raw" "$M" "$R"
for m in $METHODS; do
  med=$(median < "$T/$m.times")
  printf "%-6s %16s %9.2fx\n" $m "$med" "$(awk "BEGIN {print $base / $med}")"
done
