#!/bin/sh
# scripts/gpu-check.sh [METHOD] — for a machine with an NVIDIA GPU (sm_90 by
# default; ARCH=sm_80 ... to change). One command, a few minutes:
#   1. flux-tiny (bf16 and f32) compiled for CUDA, run on seeded random weights
#      and inputs, checked against reference outputs the interpreter made on
#      the CPU beforehand (tests/data/*.seed7.out.safetensors);
#   2. full flux.fdsl (FLUX.1 schnell, 768x768) compiled, built, run on random
#      weights with --bench (one forward only for raw, which is slow by design);
#   3. a table: launches, ms per forward, device memory; the fused attention
#      kernels counted and the schedule's roofline (fluxcc report --device h200);
#   4. BEAM (BEAM=0 skips it): flux-tiny searched on the GPU and checked, then
#      the full model searched with --budget ${BEAM_BUDGET:-24} candidates per
#      kernel (cached in $B/gpu-cache, so a rerun only replays), built, checked
#      for NaN-free output and benched; records.json and the table are kept.
set -eu
M=${1:-raw}
ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
B=${B:-build}
export PATH="$PATH:/usr/local/cuda/bin"
make -s fluxcc
G=$B/gpu-check
rm -rf "$G"
mkdir -p "$G"
status=0
for m in flux-tiny flux-tiny-f32; do
  ./fluxcc examples/$m.fdsl --opt "$M" -o "$G/$m" > /dev/null
  make -s -j"$JOBS" -C "$G/$m" ARCH="$ARCH" > "$G/$m.build.log" 2>&1 || { echo "build of $m failed: $G/$m.build.log"; exit 1; }
  if "$G/$m/flux" --quiet --random-weights 7 --random-inputs 7 --check tests/data/$m.seed7.out.safetensors > "$G/$m.check" 2>&1; then
    echo "$m: $(cat "$G/$m.check")"
  else
    echo "$m: CHECK FAILED"; cat "$G/$m.check"; status=1
  fi
done
./fluxcc examples/flux.fdsl --opt "$M" -o "$G/flux" > "$G/flux.compile"
t0=$(date +%s)
make -s -j"$JOBS" -C "$G/flux" ARCH="$ARCH" > "$G/flux.build.log" 2>&1 || { echo "build failed: $G/flux.build.log"; exit 1; }
t1=$(date +%s)
if [ "$M" = raw ]; then bench=1; else bench=10; fi
timeout 240 "$G/flux" --random-weights 1 --random-inputs 1 --bench $bench ${GRAPH:+--graph} > "$G/flux.run" 2>&1 || {
  echo "full model run failed or timed out (240 s):"; tail -5 "$G/flux.run"; status=1; }
cat "$G/flux.run"
# the fused kernels (attention, prologues) run in that forward; the roofline says what they could reach
echo "fused attention kernels in the schedule: $(ls "$G/flux/kernels" | grep -c '_attn_\|^[0-9]*_attn')"
./fluxcc report "$G/flux" --device h200 | tail -4
echo
printf '| %-14s | %-8s | %-10s | %-28s | %-30s |\n' model method launches "ms per forward (median/min)" "device memory"
printf '|%s|%s|%s|%s|%s|\n' ---------------- ---------- ------------ ------------------------------ --------------------------------
launches=$(grep '^launches' "$G/flux.run" | sed 's/launches: *//; s/ per forward.*//')
ms=$(grep -i 'median' "$G/flux.run" | head -1 | sed 's/^ *//')
mem=$(grep '^memory' "$G/flux.run" | sed 's/memory: *//')
printf '| %-14s | %-8s | %-10s | %-28s | %-30s |\n' "flux 768x768" "$M" "${launches:-?}" "${ms:-?}" "${mem:-?}"
echo "(build of the full project: $((t1 - t0)) s; logs in $G/)"
if [ "${BEAM:-1}" != 0 ]; then
  C=$B/gpu-cache
  for m in flux-tiny flux-tiny-f32; do
    ./fluxcc examples/$m.fdsl --opt beam --budget 40 --cache "$C" -o "$G/beam-$m" 2> "$G/beam-$m.search" > /dev/null ||
      { echo "beam search of $m failed:"; tail -3 "$G/beam-$m.search"; status=1; continue; }
    make -s -j"$JOBS" -C "$G/beam-$m" ARCH="$ARCH" > "$G/beam-$m.build.log" 2>&1 || { echo "build of beam $m failed"; status=1; continue; }
    if "$G/beam-$m/flux" --quiet --random-weights 7 --random-inputs 7 --check tests/data/$m.seed7.out.safetensors > "$G/beam-$m.check" 2>&1; then
      echo "beam $m: $(cat "$G/beam-$m.check")"
    else
      echo "beam $m: CHECK FAILED"; cat "$G/beam-$m.check"; status=1
    fi
  done
  t0=$(date +%s)
  timeout 420 ./fluxcc examples/flux.fdsl --opt beam --budget "${BEAM_BUDGET:-24}" --cache "$C" -o "$G/beam-flux" 2> "$G/beam-flux.search" > /dev/null ||
    { echo "beam search of flux.fdsl failed or timed out (420 s):"; tail -3 "$G/beam-flux.search"; exit 1; }
  t1=$(date +%s)
  make -s -j"$JOBS" -C "$G/beam-flux" ARCH="$ARCH" > "$G/beam-flux.build.log" 2>&1 || { echo "build of beam flux failed"; exit 1; }
  timeout 120 "$G/beam-flux/flux" --random-weights 1 --random-inputs 1 --bench 10 ${GRAPH:+--graph} > "$G/beam-flux.run" 2>&1 ||
    { echo "beam flux run failed:"; tail -5 "$G/beam-flux.run"; status=1; }
  cat "$G/beam-flux.run"
  ./fluxcc report "$G/beam-flux" | tail -15
  echo "(beam search of the full model: $((t1 - t0)) s; records in $G/beam-flux/records.json)"
fi
exit $status
