#!/bin/sh
# scripts/bench-search.sh [BUDGET] [SEEDS] — BEAM and MCTS with the same budget
# of timed candidates per kernel, on the same kernels (the 3 heaviest unique
# kernels of flux-tiny, bf16, and the 1024^3 f32 matmul), several seeds, on
# this machine's OpenCL device (PoCL): best time reached after 10, 25, 50 and
# 100% of the budget, from the order of the candidates in records.json. No
# cache: every run searches. Writes build/bench-search/search.dat and, with
# gnuplot, search.svg (best time vs candidates timed). A benchmark, not a test.
set -eu
BUDGET=${1:-40}
SEEDS=${2:-1 2 3}
make -s fluxcc >/dev/null
D=build/bench-search
rm -rf "$D"
mkdir -p "$D"
# flux-tiny's 3 heaviest unique kernels (FLOPs per forward); only they are searched
./fluxcc examples/flux-tiny.fdsl --opt raw --target opencl -o "$D/raw-tiny" > /dev/null
heavy=$(python3 -c "
import json; k = json.load(open('$D/raw-tiny/records.json'))['kernels']
print(','.join(str(u) for u in sorted(range(len(k)), key=lambda u: -k[u]['flops'] * len(k[u]['launch_sites']))[:3]))")
for model in flux-tiny matmul-1024; do
  only=; [ $model = flux-tiny ] && only="--kernels $heavy"
  for seed in $SEEDS; do
    for m in beam mcts; do
      ./fluxcc examples/$model.fdsl --opt $m --target opencl --budget "$BUDGET" --beam 4 --seed "$seed" --no-cache --quiet $only \
        -o "$D/$model-$m-$seed" > /dev/null
    done
  done
done
python3 - "$D" "$BUDGET" "$SEEDS" "$heavy" <<'PY'
import json, os, sys, statistics
d, budget, seeds, heavy = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), [int(x) for x in sys.argv[4].split(",")]
rows, curves = [], {}
for model in ("flux-tiny", "matmul-1024"):
    recs = {(m, s): json.load(open(os.path.join(d, "%s-%s-%s" % (model, m, s), "records.json"))) for m in ("beam", "mcts") for s in seeds}
    ks = recs[("beam", seeds[0])]["kernels"]
    for u in (heavy if model == "flux-tiny" else [0]):
        for m in ("beam", "mcts"):
            at = {f: [] for f in (0.1, 0.25, 0.5, 1.0)}
            used = []
            for s in seeds:
                cands = recs[(m, s)]["kernels"][u]["candidates"]
                best, trace = float("inf"), []
                for c in cands:
                    if c["status"] == "ok":
                        best = min(best, c["min_us"])
                    trace.append(best)
                used.append(len(cands))
                for f in at:
                    n = max(1, int(round(f * budget)))
                    at[f].append(trace[min(n, len(trace)) - 1])
                curves.setdefault((model, u, m), []).append(trace)
            wall = statistics.median(recs[(m, s)]["kernels"][u]["search_s"] for s in seeds)
            rows.append((model, u, ks[u]["name_before_opts"], m, statistics.median(used), [statistics.median(at[f]) for f in sorted(at)],
                         trace[0], wall))
print("best time (us, median over seeds %s) after a share of the budget of %d candidates per kernel; PoCL" % (" ".join(seeds), budget))
print("%-12s %-4s %-22s %-5s %6s %8s %10s %10s %10s %10s %10s" % ("model", "#", "kernel", "search", "timed", "wall s", "raw", "10%", "25%", "50%", "100%"))
for model, u, name, m, used, b, raw, wall in rows:
    print("%-12s %-4d %-22s %-5s %6.0f %8.1f %10.2f %10.2f %10.2f %10.2f %10.2f" % (model, u, name, m, used, wall, raw, *b))
with open(os.path.join(d, "search.dat"), "w") as f:
    for (model, u, m), traces in sorted(curves.items()):
        f.write("# %s kernel %d %s (median over seeds)\n" % (model, u, m))
        n = max(len(t) for t in traces)
        for i in range(n):
            f.write("%d %g\n" % (i + 1, statistics.median(t[min(i, len(t) - 1)] for t in traces)))
        f.write("\n\n")
PY
if command -v gnuplot > /dev/null 2>&1; then
  n=$(grep -c '^#' "$D/search.dat")
  {
    echo "set terminal svg size 900,600 dynamic; set output '$D/search.svg'"
    echo "set xlabel 'candidates timed'; set ylabel 'best time (us)'; set logscale y; set key outside"
    printf "plot "
    i=0
    grep '^#' "$D/search.dat" | sed 's/^# //' | while read -r title; do
      [ $i -gt 0 ] && printf ", "
      printf "'%s' index %d with steps title '%s'" "$D/search.dat" $i "$title"
      i=$((i + 1))
    done
    echo
  } > "$D/search.gp"
  gnuplot "$D/search.gp" && echo "plot: $D/search.svg ($n curves)"
fi
