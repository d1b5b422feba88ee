#!/bin/bash
# scripts/gpu-check.sh — the one prepared GPU check: everything a lent GPU
# session should measure, in one command that fits in 8 minutes on an H200
# (16 cores), writing every table and record under $OUT and printing a summary
# at the end even when a step fails.
#
#   OUT=DIR bash scripts/gpu-check.sh        (DIR default build/gpu-check)
#
#   1. references: the interpreter (`fluxcc run`, all cores) on flux-mid
#      (hidden 768, bf16); flux-tiny's from tests/data
#   2. flux-tiny and flux-mid under raw, hc and tc: built for CUDA, run on the
#      references' weights and inputs, --check against the interpreter
#   3. the full model (examples/flux.fdsl, FLUX.1 schnell 768x768) under raw,
#      hc and tc: built, run on seeded random weights; hc's and tc's output
#      --check against raw's
#   4. each full-model method timed (--bench, in the same run); tc's launches
#      profiled (--profile 3 --trace) and `fluxcc report --device h200
#      --trace`: the fraction of the roofline floor each kernel reaches
#   5. BEAM on the full model (--budget $BEAM_BUDGET, cache in $CACHE):
#      built, checked against raw's output, timed, reported
#   6. scripts/bench-torch.py on flux-mid (eager, torch.compile) when torch
#      imports and BFL's code is at $BFL_SRC
#
# Settings: ARCH (sm_90), BEAM_BUDGET (8), CACHE (the tuning cache, default
# build/gpu-cache, outside $OUT, so a rerun on the same machine replays),
# DEADLINE (seconds, 450: later steps are skipped, and say so), JOBS (cores),
# BFL_SRC. SMALL=1 is the suite's mode:
# flux-tiny stands for the full model and flux-tiny-f32 for flux-mid, with
# small budgets. With FLUXCC_CUDA_LIBS at fluxcc's CUDA stand-in
# (build/cuda-stand-in/lib64) projects build `make emu` and run ./flux-emu:
# the script's logic is tested without a GPU.
#
# Layout of $OUT: summary.md (the step table, then the full model's methods
# table), <step>.log for every step, one project folder per model and method
# (MODEL-METHOD, and full-METHOD for the full model; records.json and
# provenance.json inside; the BEAM project's records hold every candidate),
# *.trace.json, report-*.txt, refs/ (weights, inputs, reference outputs).
# Exit 0 when every step that ran passed, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-check}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
DEADLINE=${DEADLINE:-450}
BEAM_BUDGET=${BEAM_BUDGET:-8}
BFL_SRC=${BFL_SRC:-}
CACHE=${CACHE:-build/gpu-cache}
export PATH="$PATH:/usr/local/cuda/bin"
if [ "${SMALL:-0}" = 1 ]; then
  TINY=${TINY:-flux-tiny} MID=${MID:-flux-tiny-f32} FULL=${FULL:-flux-tiny} BEAM_BUDGET=${BEAM_BUDGET_SMALL:-2} BENCH=2 AXES=8,12,12
else
  TINY=${TINY:-"flux-tiny flux-tiny-f32"} MID=${MID:-flux-mid} FULL=${FULL:-flux} BENCH=10 AXES=16,56,56
fi
TIME=; [ -x /usr/bin/time ] && TIME="/usr/bin/time -f 'interpreter: %e s, %M KiB'"
# the stand-in: its kernels run on the emulation, so do the projects'
GOAL= BIN=flux
if [ -n "${FLUXCC_CUDA_LIBS:-}" ] && grep -q fluxcc_cuda_stand_in "$FLUXCC_CUDA_LIBS/libcuda.so.1" 2>/dev/null; then GOAL=emu BIN=flux-emu; fi

rm -rf "$OUT"
mkdir -p "$OUT/refs" || exit 2
OUT=$(cd "$OUT" && pwd)
T0=$(date +%s)
NSTEP=0 FAILED=0
printf '| # | step | status | s | result |\n|---|---|---|---:|---|\n' > "$OUT/steps.md"
# shellcheck disable=SC2317
summary() {
  {
    echo "# gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ), fluxcc $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
    echo
    echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)${GOAL:+ (CUDA stand-in: the emulation on the CPU)}"
    echo "settings: ARCH=$ARCH BEAM_BUDGET=$BEAM_BUDGET CACHE=$CACHE DEADLINE=$DEADLINE JOBS=$JOBS SMALL=${SMALL:-0} binary=$BIN"
    echo
    cat "$OUT/steps.md"
    if [ -s "$OUT/methods.md" ]; then echo; echo "## $FULL: the methods, each one executable (--bench, median)"; echo; cat "$OUT/methods.md"; fi
    echo
    echo "$NSTEP steps, $FAILED failed, $(( $(date +%s) - T0 )) s; logs and projects in $OUT"
  } > "$OUT/summary.md"
  echo
  cat "$OUT/summary.md"
}
trap summary EXIT

# step NAME TIMEOUT CMD...: runs CMD (a shell string) with its output in
# $OUT/NAME.log; a row of the summary with its last line as the result
step() {
  local name=$1 limit=$2 cmd=$3 t s status result
  NSTEP=$((NSTEP + 1))
  t=$(date +%s)
  if [ $((t - T0)) -ge "$DEADLINE" ]; then
    status=skipped result="past the deadline (${DEADLINE} s)"
  elif timeout "$limit" bash -c "set -eo pipefail; $cmd" > "$OUT/$name.log" 2>&1; then
    status=ok result=$(grep -v '^ *$' "$OUT/$name.log" | tail -1)
  else
    s=$?
    status=FAILED FAILED=$((FAILED + 1))
    [ $s -eq 124 ] && result="timed out after $limit s" || result="exit $s: $(grep -v '^ *$' "$OUT/$name.log" | tail -1)"
  fi
  s=$(( $(date +%s) - t ))
  printf '| %d | %s | %s | %d | %s |\n' "$NSTEP" "$name" "$status" "$s" "$(echo "$result" | tr '|' '/' | cut -c1-160)" >> "$OUT/steps.md"
  echo "gpu-check: $name: $status ($s s)"
  [ "$status" = ok ]
}

# build DIR MODEL METHOD [FLUXCC ARGS]: the command that compiles into $OUT/DIR and builds it
build() {
  local d=$1 m=$2 meth=$3; shift 3
  echo "./fluxcc examples/$m.fdsl --opt $meth $* -o $OUT/$d && make -s -j$JOBS -C $OUT/$d ARCH=$ARCH $GOAL"
}

step build-fluxcc 300 "make -s fluxcc && echo \"fluxcc built ($(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown))\""

# 1. references
step "reference-$MID" 240 "./fluxcc init examples/$MID.fdsl --seed 7 --weights $OUT/refs/$MID.w --inputs $OUT/refs/$MID.i &&
  $TIME ./fluxcc run examples/$MID.fdsl --weights $OUT/refs/$MID.w --inputs $OUT/refs/$MID.i -o $OUT/refs/$MID.out"

# 2. small models and the real-width slice against the interpreter
for m in $TINY $MID; do
  for meth in raw hc tc; do
    if [ "$m" = "$MID" ]; then
      run="$OUT/$m-$meth/$BIN --quiet --weights $OUT/refs/$m.w --inputs $OUT/refs/$m.i --check $OUT/refs/$m.out"
    else
      run="$OUT/$m-$meth/$BIN --quiet --random-weights 7 --random-inputs 7 --check tests/data/$m.seed7.out.safetensors"
    fi
    step "$m-$meth" 180 "$(build "$m-$meth" "$m" "$meth") > /dev/null && $run"
  done
done

# 3. and 4. the full model: built, checked against raw's output, timed, tc's
# launches profiled. One run per method: random weights for 12 B parameters
# take seconds to make, so each binary checks, benches and profiles at once.
printf '| method | launches | ms per forward (median) | device memory |\n|---|---:|---:|---|\n' > "$OUT/methods.md"
row() {  # the methods table's row of $OUT/full-METHOD.run
  local f=$OUT/full-$1.run
  printf '| %s | %s | %s | %s |\n' "$1" "$(sed -n 's/^launches: *\([0-9]*\).*/\1/p' "$f" 2>/dev/null)" \
    "$(sed -n 's/^bench: *median \([0-9.]*\) ms.*/\1/p' "$f" 2>/dev/null)" "$(sed -n 's/^memory: *//p' "$f" 2>/dev/null)" >> "$OUT/methods.md"
}
# brief: the run's check verdict and bench median, one line
BRIEF="sed -n 's/^check [^:]*: \\(rel_l2=[^ ]*\\) .* \\([A-Z]*[a-z]*\\)\$/check \\1 \\2;/p; s/^bench: *median \\([0-9.]*\\) ms.*/bench median \\1 ms/p'"
step "full-raw" 300 "$(build full-raw "$FULL" raw) > /dev/null &&
  $OUT/full-raw/$BIN --random-weights 1 --random-inputs 1 --out $OUT/refs/full-raw.out --bench 1 > $OUT/full-raw.run && $BRIEF $OUT/full-raw.run"
row raw
step "full-hc" 300 "$(build full-hc "$FULL" hc) > /dev/null &&
  { r=0; $OUT/full-hc/$BIN --random-weights 1 --random-inputs 1 --check $OUT/refs/full-raw.out --bench $BENCH > $OUT/full-hc.run || r=\$?;
    $BRIEF $OUT/full-hc.run | paste -sd' '; exit \$r; }"
row hc
step "full-tc" 300 "$(build full-tc "$FULL" tc) > /dev/null &&
  { r=0; $OUT/full-tc/$BIN --random-weights 1 --random-inputs 1 --check $OUT/refs/full-raw.out --bench $BENCH --profile 3 \
      --trace $OUT/full-tc.trace.json > $OUT/full-tc.run || r=\$?; $BRIEF $OUT/full-tc.run | paste -sd' '; exit \$r; }"
row tc
step "report-full-tc" 60 "./fluxcc report $OUT/full-tc --device h200 --trace $OUT/full-tc.trace.json > $OUT/report-full-tc.txt &&
  awk '\$1 == \"total\" {print \"launches run alone: \" \$6 \" ms per forward in all, \" \$8 \" of the roofline floor (h200 model; per kernel in report-full-tc.txt)\"}' $OUT/report-full-tc.txt"

# 5. BEAM on the full model
step "beam-full" 420 "$(build full-beam "$FULL" beam --budget "$BEAM_BUDGET" --cache "$CACHE" --quiet) > /dev/null &&
  ./fluxcc report $OUT/full-beam --device h200 > $OUT/report-full-beam.txt &&
  { r=0; $OUT/full-beam/$BIN --random-weights 1 --random-inputs 1 --check $OUT/refs/full-raw.out --bench $BENCH > $OUT/full-beam.run || r=\$?;
    $BRIEF $OUT/full-beam.run | paste -sd' '; exit \$r; }"
row beam

# 6. torch on the real-width slice
if python3 -c 'import torch' 2>/dev/null && [ -n "$BFL_SRC" ]; then
  step "torch-$MID" 240 "python3 scripts/bench-torch.py --weights $OUT/refs/$MID.w --inputs $OUT/refs/$MID.i --bfl-src $BFL_SRC --axes $AXES \
    --modes eager,default --flux $OUT/$MID-tc/$BIN --ref $OUT/refs/$MID.out"
else
  NSTEP=$((NSTEP + 1))
  printf '| %d | torch-%s | skipped | 0 | %s |\n' "$NSTEP" "$MID" "no torch, or no BFL code (BFL_SRC=the flux clone's src/)" >> "$OUT/steps.md"
fi
[ "$FAILED" = 0 ]
