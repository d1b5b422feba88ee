#!/bin/sh
# scripts/bench-warm.sh [DIR] — what building candidates ahead in child
# processes (--jobs N > 1 on OpenCL) saves. Each row is one cold search on
# this machine's OpenCL device (PoCL): no fluxcc tuning cache and an empty
# PoCL kernel cache (POCL_CACHE_DIR in DIR), with --jobs 1 (builds in this
# process, one at a time) and --jobs J (J children build ahead), side by side
# in one run, REPEAT times, interleaved. A search's path depends on its
# timings, so the two may time different numbers of candidates: prints per
# row the median wall time, timed candidates and seconds per timed candidate,
# and the ratio of the latter. A benchmark, not a test: run it on an idle machine.
#   CASES   "MODEL.fdsl:METHOD[:BUDGET]" ... (default: the 1024^3 matmul by beam, flux-tiny by rl)
#   J       children for the second column (default: this machine's cores)
#   REPEAT  runs per cell (default 3)
set -eu
D=${1:-build/bench-warm}
CASES=${CASES:-examples/matmul-1024.fdsl:beam examples/flux-tiny.fdsl:rl}
J=${J:-$(nproc)}
REPEAT=${REPEAT:-3}
make -s fluxcc >/dev/null
mkdir -p "$D"
: > "$D/times.txt"
for r in $(seq "$REPEAT"); do
  for c in $CASES; do
    f=${c%%:*} rest=${c#*:}
    m=${rest%%:*} b=0
    [ "$rest" != "$m" ] && b=${rest#*:}
    for j in 1 "$J"; do
      rm -rf "$D/pocl" "$D/out"
      mkdir -p "$D/pocl"
      t0=$(date +%s.%N)
      POCL_CACHE_DIR="$D/pocl" ./fluxcc "$f" --opt "$m" --target opencl --no-cache --budget "$b" --jobs "$j" -o "$D/out" \
        2> "$D/err.txt" > /dev/null || { cat "$D/err.txt" >&2; exit 1; }
      t1=$(date +%s.%N)
      n=$(grep -c '"measured":[[:space:]]*true' "$D/out/records.json")
      s=$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")
      echo "$f $m $j $s $n" >> "$D/times.txt"
      echo "run $r: $f --opt $m --jobs $j: $s s, $n candidates" >&2
    done
  done
done
python3 - "$D/times.txt" "$J" <<'PY'
import statistics, sys
rows, J = {}, sys.argv[2]
for line in open(sys.argv[1]):
    f, m, j, t, n = line.split()
    rows.setdefault((f, m), {}).setdefault(j, []).append((float(t), int(n)))
print(f"| model | method | --jobs 1: s (timed candidates, s each) | --jobs {J}: s (timed candidates, s each) | ratio per candidate |")
print("|---|---|---:|---:|---:|")
for (f, m), by in rows.items():
    cell = {}
    for j in ("1", J):
        t, n = statistics.median(t for t, _ in by[j]), statistics.median(n for _, n in by[j])
        cell[j] = (t, n, t / n)
    a, b = cell["1"], cell[J]
    print(f"| {f} | {m} | {a[0]:.1f} ({a[1]:.0f}, {a[2]:.3f}) | {b[0]:.1f} ({b[1]:.0f}, {b[2]:.3f}) | {a[2] / b[2]:.2f}x |")
PY
