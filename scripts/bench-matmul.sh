#!/bin/sh
# scripts/bench-matmul.sh [ROUNDS] — f32 matmul 1024x1024x1024 on this
# machine's CPU through two targets: OpenCL (PoCL) and C (C11 + OpenMP, built
# by cc). For each, the RAW, HC and BEAM kernels, each built as a fluxcc
# project and timed by the binary's --bench (OpenCL: device events; C: wall
# clock), against OpenBLAS (numpy from pip, which bundles it;
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for that run only). ROUNDS
# rounds side by side; the table shows medians and GFLOPS. The search results
# are cached in build/bench-matmul/cache (delete it for a cold search);
# BEAMOPTS="--beam 4" sets the searches, TARGETS="opencl c" the targets. A
# benchmark, not a test.
set -eu
R=${1:-5}
BEAMOPTS=${BEAMOPTS:---beam 4}
make -s fluxcc >/dev/null
D=build/bench-matmul
mkdir -p "$D"
M=examples/matmul-1024.fdsl
FLOP=2147483648
TARGETS=${TARGETS:-opencl c}
ROWS=
for t in $TARGETS; do
  for m in raw hc beam; do
    extra=; [ $m = beam ] && extra="$BEAMOPTS --cache $D/cache"
    ./fluxcc $M --opt $m --target $t $extra -o "$D/$t-$m" > /dev/null 2> "$D/$t-$m.err" || { cat "$D/$t-$m.err"; exit 1; }
    make -s -C "$D/$t-$m" > /dev/null
    "$D/$t-$m/flux" --quiet --random-weights 1 --random-inputs 1 > /dev/null   # PoCL builds and caches the kernel
    ROWS="$ROWS $t-$m"
  done
done
# numpy + OpenBLAS from pip, in a venv of its own
PY=$D/venv/bin/python
if [ ! -x "$PY" ]; then
  python3 -m venv "$D/venv" > /dev/null && "$D/venv/bin/pip" -q install numpy threadpoolctl > /dev/null || PY=
fi
r=0
while [ $r -lt "$R" ]; do
  for m in $ROWS; do
    "$D/$m/flux" --quiet --random-weights 1 --random-inputs 1 --bench 5 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' >> "$D/$m.times.$$"
  done
  if [ -n "$PY" ]; then
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" -c '
import numpy as np, time
a = np.random.rand(1024, 1024).astype(np.float32); b = np.random.rand(1024, 1024).astype(np.float32)
a @ b
t = []
for i in range(5):
    t0 = time.perf_counter(); a @ b; t.append(time.perf_counter() - t0)
print(sorted(t)[2] * 1e3)' >> "$D/openblas.times.$$"
  fi
  r=$((r + 1))
done
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-12s %12s %10s   (f32 1024^3 matmul, %s rounds side by side, median of medians)\n' target-method "ms" GFLOPS "$R"
for m in $ROWS openblas; do
  [ -f "$D/$m.times.$$" ] || continue
  ms=$(median < "$D/$m.times.$$")
  printf '%-12s %12.3f %10.1f\n' $m "$ms" "$(awk "BEGIN {print $FLOP / ($ms * 1e6)}")"
  rm -f "$D/$m.times.$$"
done
if [ -n "$PY" ]; then
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" -c '
from threadpoolctl import threadpool_info
for i in threadpool_info(): print("openblas: %s %s, %s threads, core %s" % (i.get("internal_api"), i.get("version"), i.get("num_threads"), i.get("architecture")))' 2>/dev/null || true
fi
for t in $TARGETS; do
  REC=$D/$t-beam/records.json
  search_s=$(sed -n 's/.*"search_s":[[:space:]]*\([0-9.e+-]*\).*/\1/p' "$REC" | head -1)
  beam_kernel=$(sed -n 's/.*"name":[[:space:]]*"\([^"]*\)".*/\1/p' "$REC" | head -1)
  beam_opts=$(grep -h '^// method' "$D/$t-beam/kernels/"* | sed 's/.*opts: \[\([^]]*\)\].*/\1/')
  timed=$(grep -c '"status":[[:space:]]*"ok"' "$REC" || true)
  total=$(grep -c '"status":' "$REC" || true)
  echo "$t: $(sed -n 's/^[[:space:]]*"device":[[:space:]]*"\(.*\)",$/\1/p' "$REC" | head -1)"
  echo "$t: beam kernel $beam_kernel [$beam_opts]; search ${search_s} s: $total candidates, $timed validated and fully timed ($BEAMOPTS)"
done
