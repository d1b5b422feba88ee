#!/bin/sh
# scripts/bench-compile.sh [RUNS] — medians of: compiling full flux.fdsl
# (all kernels rendered) per method available, and the PoCL forward of
# flux-tiny. A benchmark, not a test: run it on a quiet machine.
set -eu
R=${1:-11}
B=${B:-build}
make -s fluxcc >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
printf '%-52s %10s %10s\n' "what ($R runs)" "median" "min"
for tg in cuda opencl; do
  : > "$T/t"
  i=0; while [ $i -lt "$R" ]; do ms ./fluxcc examples/flux.fdsl --opt raw --target $tg -o "$T/p_$tg" >> "$T/t"; i=$((i + 1)); done
  printf '%-52s %8s ms %7s ms\n' "fluxcc examples/flux.fdsl --opt raw --target $tg" "$(median < "$T/t")" "$(sort -n "$T/t" | head -1)"
done
./fluxcc examples/flux-tiny.fdsl --opt raw --target opencl -o "$T/tiny" >/dev/null
make -s -C "$T/tiny" >/dev/null
"$T/tiny/flux" --quiet --random-weights 1 --random-inputs 1 --bench "$R" | sed 's/^/flux-tiny on PoCL: /'
