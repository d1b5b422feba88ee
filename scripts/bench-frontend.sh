#!/bin/sh
# scripts/bench-frontend.sh [RUNS] — median wall time of the front end on the
# full models and of the interpreter on flux-tiny (a benchmark, not a test).
set -eu
R=${1:-21}
B=${B:-build}
make -s fluxcc >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# time_ms CMD...: wall milliseconds of one run
time_ms() { s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
./fluxcc init examples/flux-tiny.fdsl --seed 1 --weights "$T/w" --inputs "$T/i"
printf '%-46s %10s %10s\n' "what ($R runs)" "median ms" "min ms"
for job in "params examples/flux.fdsl" "params examples/flux-dev.fdsl" "--dump graph examples/flux.fdsl" \
           "run examples/flux-tiny.fdsl --weights $T/w --inputs $T/i -o $T/o"; do
  : > "$T/times"
  i=0
  while [ $i -lt "$R" ]; do time_ms ./fluxcc $job >> "$T/times"; i=$((i + 1)); done
  label=$(echo "$job" | sed "s|$T/||g")
  printf '%-46s %10s %10s\n' "$label" "$(median < "$T/times")" "$(sort -n "$T/times" | head -1)"
done
./fluxcc --time params examples/flux.fdsl 2>&1 >/dev/null
