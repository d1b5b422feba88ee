#!/bin/sh
# scripts/bench-finals.sh [ROUNDS] — the searches' start and finals against
# the study's definition, on this machine's OpenCL device (PoCL). For each
# model in MODELS (default: flux-tiny, the two matmuls of issue 52), `fluxcc
# compare --budget BUDGET` (default 16) twice, each on a cold cache of its
# own (fluxcc's and PoCL's kernel cache: the search times compare): `--from raw` (the study's BEAM and MCTS from RAW alone, RL from RAW and
# HC, the first measurement decides) and `--from fixed` (the default: every
# search from RAW, HC and TC, the finals decide). Then every binary of both
# (HC, TC and BEST from the --from fixed run) runs ROUNDS (default 7) rounds,
# interleaved, each a `--bench 5`; the table: the median over rounds of each
# round's median, the rounds' quartiles, the ratios to HC and to BEST (same
# run), and each search's wall time; then how often the finals overruled the
# first measurement. OLD=path/to/an/older/fluxcc adds a third arm, `old`:
# that binary's compare (its default searches), e.g. the commit before the
# finals, for the search times before and after. A benchmark, not a test: run
# it on an idle machine.
set -eu
R=${1:-7}
MODELS=${MODELS:-flux-tiny matmul-512 matmul-384x1536x384}
BUDGET=${BUDGET:-16}
make -s fluxcc >/dev/null
D=${D:-build/bench-finals}
rm -rf "$D"
mkdir -p "$D"
for model in $MODELS; do
  for from in raw fixed; do
    printf '%s --from %s: compare --budget %s ...\n' "$model" "$from" "$BUDGET" >&2
    POCL_CACHE_DIR=$D/pocl-$model-$from ./fluxcc compare examples/$model.fdsl --target opencl --budget "$BUDGET" --from $from --cache "$D/cache-$model-$from" \
      --quiet -o "$D/$model-$from" > /dev/null
  done
  bins="fixed/hc fixed/tc fixed/best raw/beam fixed/beam raw/mcts fixed/mcts raw/rl fixed/rl"
  if [ -n "${OLD:-}" ]; then
    printf '%s with %s: compare --budget %s ...\n' "$model" "$OLD" "$BUDGET" >&2
    POCL_CACHE_DIR=$D/pocl-$model-old "$OLD" compare examples/$model.fdsl --target opencl --budget "$BUDGET" --cache "$D/cache-$model-old" --quiet -o "$D/$model-old" > /dev/null
    bins="$bins old/beam old/mcts old/rl"
  fi
  # the binaries side by side: kernels built and cached by PoCL on a first run"
  for b in $bins; do POCL_CACHE_DIR=$D/pocl-$model-${b%/*} "$D/$model-${b%/*}/${b#*/}/flux" --quiet --random-weights 1 --random-inputs 1 > /dev/null; done
  r=0
  while [ $r -lt "$R" ]; do
    for b in $bins; do
      POCL_CACHE_DIR=$D/pocl-$model-${b%/*} "$D/$model-${b%/*}/${b#*/}/flux" --quiet --random-weights 1 --random-inputs 1 --bench 5 |
        sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' >> "$D/$model-$(echo $b | tr / -).times"
    done
    r=$((r + 1))
  done
  python3 - "$D" "$model" "$bins" <<'PY'
import json, os, re, statistics, sys
d, model, bins = sys.argv[1], sys.argv[2], sys.argv[3].split()
def q(v, f):
    v = sorted(v); return v[int(f * (len(v) - 1))]
t = {b: [float(x) for x in open(os.path.join(d, "%s-%s.times" % (model, b.replace("/", "-"))))] for b in bins}
med = {b: statistics.median(v) for b, v in t.items()}
def search_s(b):  # the search's wall time, as its compile said it
    f = re.findall(r"search done in ([0-9.]+) s", open(os.path.join(d, "%s-%s" % (model, b.split("/")[0]), "%s.compile.log" % b.split("/")[1])).read())
    return float(f[-1]) if f else float("nan")
print("\n%s, --budget %s, %d rounds interleaved (ms per forward; each round the median of --bench 5)\n" % (model, os.environ.get("BUDGET", "16"), len(t[bins[0]])))
print("| binary | median (ms) | rounds' min-quartiles-max (ms) | / HC | / BEST | min / HC's min | search (s) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for b in bins:
    print("| %s | %.4g | %.4g-%.4g-%.4g-%.4g | %.3f | %.3f | %.3f | %s |" % (b.replace("/", " "), med[b], min(t[b]), q(t[b], .25), q(t[b], .75),
          max(t[b]), med[b] / med["fixed/hc"], med[b] / med["fixed/best"], min(t[b]) / min(t["fixed/hc"]), "%.1f" % search_s(b) if search_s(b) == search_s(b) else "-"))
for m in ("beam", "mcts", "rl", "best"):
    log = open(os.path.join(d, "%s-fixed" % model, "%s.compile.log" % m)).read()
    f = re.findall(r"search done in ([0-9.]+) s.*the finals decided (\d+) kernels, (\d+) of them against the first measurement \(([0-9.]+) s", log)
    if f: print("%s --from fixed: the finals decided %s kernels, %s of them against the first measurement; they took %s s of its %s s" %
                (m, f[-1][1], f[-1][2], f[-1][3], f[-1][0]))
PY
done
