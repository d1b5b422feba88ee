#!/bin/sh
# scripts/bench-gemm.sh [MODEL] [METHODS] — every linear layer's GEMM of one
# model (default flux-mid-f32) as fluxcc compiles it for OpenCL (PoCL on this
# CPU), against OpenBLAS sgemm at the same shape and layout (x[M,K] W[N,K]^T,
# both row-major), side by side in one run. Per method (default "hc"): the
# project is built, `./flux --profile 9` times each launch alone (median of 9,
# OpenCL profiling events: the kernel's run, not the launch's host overhead;
# the wall clock only where PoCL's events make no sense), and each GEMM kernel
# (full shape [M, N | K], FLOPs 2MNK plus an epilogue) is matched with
# scripts/bench-sgemm.c's median of 9 on OpenBLAS's threads. Searches use
# SEARCH (default "--beam 4 --budget 40") on a cold cache of their own, or on
# CACHE=DIR (e.g. the cache of a search timed before: no search again).
# A benchmark, not a test: run it on an idle machine.
set -eu
M=${1:-flux-mid-f32}
METHODS=${2:-hc}
SEARCH=${SEARCH:---beam 4 --budget 40}
make -s fluxcc >/dev/null
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -O2 -o "$T/sgemm" scripts/bench-sgemm.c -l:libopenblas.so.0 -lm
for m in $METHODS; do
  case $m in beam|mcts|best) extra="$SEARCH --cache ${CACHE:-$T/cache} --quiet" ;; *) extra= ;; esac
  ./fluxcc examples/$M.fdsl --opt $m --target opencl $extra -o "$T/$m" >/dev/null 2>"$T/$m.err" || { cat "$T/$m.err"; exit 1; }
  make -s -C "$T/$m" >/dev/null
  "$T/$m/flux" --random-weights 1 --random-inputs 1 --profile 9 | awk '$4 ~ /^kernels\// {print $4, $1}' > "$T/$m.prof"
  # kernel file, M, N, K of the linear layers: shape [M, N | K] with a weight
  # [N, K] among the model's parameters, and 2MNK <= FLOP < 2MNK + 16MN
  ./fluxcc params examples/$M.fdsl | awk -F'\t' '$1 ~ /\.weight$/ && $3 ~ /^[0-9]+,[0-9]+$/ {print $3}' | sort -u > "$T/weights"
  for f in "$T/$m"/kernels/*.cl; do
    sed -n 's/^\/\/ full shape before opts: \[\([0-9]*\), \([0-9]*\) | \([0-9]*\)\].*/\1 \2 \3/p' "$f" | head -1 |
      while read -r a b k; do
        grep -qx "$b,$k" "$T/weights" || continue
        fl=$(sed -n 's/.*; \([0-9]*\) FLOP,.*/\1/p' "$f" | head -1)
        awk -v a="$a" -v b="$b" -v k="$k" -v f="$fl" 'BEGIN { g = 2 * a * b * k; exit !(f >= g && f < g + 16 * a * b) }' &&
          echo "kernels/$(basename "$f") $a $b $k"
      done
  done > "$T/$m.gemms"
done
first=$(echo $METHODS | cut -d' ' -f1)
shapes=$(awk '{print $2 "," $3 "," $4}' "$T/$first.gemms" | sort -u)
[ -n "$shapes" ] || { echo "bench-gemm: no GEMM kernels found in $M"; exit 1; }
"$T/sgemm" 9 $shapes > "$T/blas"
printf '%s: each linear layer as fluxcc compiles it (OpenCL on PoCL) against OpenBLAS sgemm, median of 9 each\n' "$M"
printf '%-6s %-16s %12s' "kernel" "M x N x K" "OpenBLAS"
for m in $METHODS; do printf ' %12s %9s' "$m" "/OpenBLAS"; done
echo
printf '%-6s %-16s %12s' "" "" "ms (GFLOPS)"
for m in $METHODS; do printf ' %12s %9s' "ms (GFLOPS)" ""; done
echo
while read -r file a b k; do
  u=$(basename "$file" | cut -c1-4)  # the unique kernel's number: the same in every method's project
  blas=$(awk -v a="$a" -v b="$b" -v k="$k" '$1 == a && $2 == b && $3 == k {print $4}' "$T/blas")
  printf '%-6s %-16s %12s' "$u" "${a}x${b}x${k}" "$(awk -v t="$blas" -v f="$((2 * a * b * k))" 'BEGIN {printf "%.2f (%.0f)", t, f / t / 1e6}')"
  for m in $METHODS; do
    t=$(awk -v u="kernels/$u" 'substr($1, 1, 12) == u {print $2}' "$T/$m.prof")
    if [ -z "$t" ]; then printf ' %12s %9s' "-" "-"; continue; fi
    printf ' %12s %9s' "$(awk -v t="$t" -v f="$((2 * a * b * k))" 'BEGIN {printf "%.2f (%.0f)", t, f / t / 1e6}')" \
      "$(awk -v t="$t" -v o="$blas" 'BEGIN {printf "%.0f%%", 100 * o / t}')"
  done
  echo
done < "$T/$first.gemms"
echo "(/OpenBLAS: OpenBLAS's time over the method's, so 100% is parity and more is faster than OpenBLAS)"
