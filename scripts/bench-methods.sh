#!/bin/sh
# scripts/bench-methods.sh [MODEL] [ROUNDS] — the forward time of one model
# (default flux-tiny, bf16) built with each method for OpenCL and run on this
# machine (PoCL on the CPU), measured side by side: ROUNDS rounds, each runs
# every method's --bench 5 in turn; prints the median over rounds of each
# run's median, and the ratio to raw. The searches (beam, mcts, best) run
# with SEARCH="--beam 4 --budget 40" on a cold cache of their own, whose wall
# time is printed, and once more on the warm cache (no search: the time to
# compile from it). METHODS="raw hc" picks methods. A benchmark, not a test.
set -eu
M=${1:-flux-tiny}
R=${2:-5}
METHODS=${METHODS:-raw hc tc beam mcts best}
SEARCH=${SEARCH:---beam 4 --budget 40}
make -s fluxcc >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
for m in $METHODS; do
  case $m in beam|mcts|best) extra="$SEARCH --cache $T/cache" ;; *) extra= ;; esac
  t0=$(now)
  ./fluxcc examples/$M.fdsl --opt $m --target opencl $extra -o "$T/$m" >/dev/null 2>"$T/$m.err"
  t1=$(now)
  if [ -n "$extra" ]; then
    ./fluxcc examples/$M.fdsl --opt $m --target opencl $extra -o "$T/$m.warm" >/dev/null 2>&1
    t2=$(now)
    printf '%-5s search: %.1f s on a cold cache (beam and mcts cached for best), %.2f s to compile again from the warm cache\n' \
      $m "$(awk "BEGIN {print $t1 - $t0}")" "$(awk "BEGIN {print $t2 - $t1}")" >> "$T/search.txt"
  fi
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
first=$(echo $METHODS | cut -d' ' -f1)
base=$(median < "$T/$first.times")
printf '%-6s %16s %10s   (%s, %s rounds of --bench 5, PoCL; search: %s)\n' method "median ms" "vs $first" "$M" "$R" "$SEARCH"
for m in $METHODS; do
  med=$(median < "$T/$m.times")
  printf "%-6s %16s %9.2fx\n" $m "$med" "$(awk "BEGIN {print $base / $med}")"
done
[ -f "$T/search.txt" ] && cat "$T/search.txt"
