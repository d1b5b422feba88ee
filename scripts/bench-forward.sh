#!/bin/sh
# scripts/bench-forward.sh [DIR] — what a whole model's cold search costs, and
# what its forward is worth. Each method in METHODS searches MODEL cold on this
# machine's OpenCL device (PoCL): no fluxcc tuning cache, an empty PoCL kernel
# cache (POCL_CACHE_DIR in DIR). Then every project is built and its forward
# timed (`./flux --bench BENCH`) in REPEAT rounds, the methods interleaved.
# Prints per method: search wall time, timed candidates, the forward by its
# records (each kernel's chosen time x its launches), the median of the rounds'
# forward medians, and both as a ratio to the first method's. A benchmark, not
# a test: run it on an idle machine. A project already in DIR/<method> with its
# wall time in DIR/<method>.s is kept (delete it to search again).
#   MODEL    .fdsl (default examples/flux-tiny.fdsl)
#   METHODS  method[+model][:budget] ... (default "beam rl"; raw, hc or tc too; rl:96 is rl with --budget 96;
#            rl+model is rl guided by the cost model in the file RL_MODEL, e.g. one that
#            `fluxcc train` made from another model's records: cold for this model's kernels)
#   REPEAT   rounds of forwards (default 5), the order turned each round (a round's first
#            process runs slower here); BENCH forwards per round (default 50)
#   RUNS     cold searches of each method after the first (default 1): one search says
#            little on this machine (RL's wall time and forward move 10-20% from run to run).
#            With RUNS=N the runs are method#1 ... method#N, and a median row follows them.
set -eu
D=${1:-build/bench-forward}
MODEL=${MODEL:-examples/flux-tiny.fdsl}
METHODS=${METHODS:-beam rl}
REPEAT=${REPEAT:-5}
BENCH=${BENCH:-50}
RUNS=${RUNS:-1}
first=${METHODS%% *}
ALL=$first
for mb in ${METHODS#"$first"}; do
  if [ "$RUNS" = 1 ]; then ALL="$ALL $mb"; else for i in $(seq "$RUNS"); do ALL="$ALL $mb#$i"; done; fi
done
dir_of() { echo "$D/$(echo "$1" | tr :# __)"; }  # rl:96#2 -> DIR/rl_96_2 (the table's reader renames alike)
make -s fluxcc >/dev/null
mkdir -p "$D"
for run in $ALL; do
  mb=${run%%#*}
  m=${mb%%:*} b=0 dir=$(dir_of "$run") guide=auto
  [ "$mb" != "$m" ] && b=${mb#*:}
  case $m in *+model) m=${m%+model} guide=${RL_MODEL:?rl+model needs RL_MODEL, a model file};; esac
  if [ ! -s "$dir/records.json" ] || [ ! -s "$dir.s" ]; then
    echo "$run: cold search of $MODEL ..." >&2
    rm -rf "$dir" "$D/pocl"
    mkdir -p "$D/pocl"
    t0=$(date +%s.%N)
    set -- --no-cache --model "$guide" --budget "$b"
    case $m in raw|hc|tc) set -- ;; esac  # a fixed method takes no search options
    POCL_CACHE_DIR="$D/pocl" ./fluxcc "$MODEL" --opt "$m" --target opencl "$@" --quiet -o "$dir" > /dev/null
    t1=$(date +%s.%N)
    awk "BEGIN { printf \"%.1f\n\", $t1 - $t0 }" > "$dir.s"
  fi
  make -s -C "$dir" > /dev/null 2>&1
  "$dir/flux" --quiet --random-weights 7 --random-inputs 7 --bench 3 > /dev/null  # the kernels built once (PoCL's cache)
done
: > "$D/forward.txt"
for r in $(seq "$REPEAT"); do
  order=$ALL
  [ $((r % 2)) = 0 ] && order=$(printf '%s\n' $ALL | tac)
  for run in $order; do
    dir=$(dir_of "$run")
    ms=$("$dir/flux" --random-weights 7 --random-inputs 7 --bench "$BENCH" 2>&1 | sed -n 's/^bench: *median \([0-9.]*\) ms.*/\1/p')
    echo "$run $ms" >> "$D/forward.txt"
  done
done
python3 - "$D" $ALL <<'PY'
import json, math, statistics, sys
d, runs = sys.argv[1], sys.argv[2:]
fw = {}
for line in open(d + "/forward.txt"):
    m, ms = line.split()
    fw.setdefault(m, []).append(float(ms))
rows = []
for m in runs:
    dir = d + "/" + m.replace(":", "_").replace("#", "_")
    r = json.load(open(dir + "/records.json"))
    timed = sum(1 for k in r["kernels"] for c in k["candidates"] if c.get("measured"))
    # a fixed method times nothing: no forward by records
    rec = sum(len(k["launch_sites"]) * k["chosen"]["min_us"] for k in r["kernels"]) if all("chosen" in k for k in r["kernels"]) else math.nan
    rows.append((m, float(open(dir + ".s").read()), timed, rec, statistics.median(fw[m]), fw[m]))
ref = rows[0]
f = lambda x, spec: "-" if math.isnan(x) else spec % x
print("| method | search s | timed | forward by records us | vs %s | forward median ms | vs %s | rounds' medians ms |" % (ref[0], ref[0]))
print("|---|---|---|---|---|---|---|---|")
for m, s, timed, rec, med, all_ in rows:
    print("| %s | %.1f | %d | %s | %s | %.3f | %.3f | %s |" % (m, s, timed, f(rec, "%.1f"), f(rec / ref[3], "%.3f"), med, med / ref[4],
                                                           " ".join("%.3f" % x for x in all_)))
    group = [x for x in rows if x[0].split("#")[0] == m.split("#")[0]]
    if "#" in m and m == group[-1][0]:  # the last run of a method: the medians of its runs
        md = lambda key: statistics.median(key(x) for x in group)
        print("| **%s, median of %d** | **%.1f** | %g | %s | %s | %.3f | **%.3f** | |" % (m.split("#")[0], len(group), md(lambda x: x[1]),
              md(lambda x: x[2]), f(md(lambda x: x[3]), "%.1f"), f(md(lambda x: x[3] / ref[3]), "%.3f"), md(lambda x: x[4]), md(lambda x: x[4] / ref[4])))
PY
