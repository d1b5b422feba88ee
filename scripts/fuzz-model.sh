#!/bin/sh
# fuzz-model.sh SECONDS [OUT]: structure-aware fuzzing of cost-model files
# (tests/fuzz/fuzz_model.py: real models mutated as JSON, in their trees,
# XGBoost's parameters and fluxcc's header, and byte-wise, through --model FILE
# and rl's --model auto under the sanitizer build). Counts runs, refusals and
# distinct findings (crashes, hangs, sanitizer reports); each finding is kept
# in OUT/findings/N. SEED=S reproduces a run.
set -u
secs=${1:-600}
out=${2:-/tmp/fuzz-model}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/bin"
make -s -C "$top" fluxcc san >/dev/null || exit 2
# copies, so that rebuilding fluxcc meanwhile neither disturbs nor is blocked by the run
cp "$top/fluxcc" "$out/bin/fluxcc" && cp "$top/build/san/fluxcc" "$out/bin/fluxcc-san" || exit 2
cd "$top" && LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/lsan-pocl.supp} ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} exec python3 tests/fuzz/fuzz_model.py "$secs" "$out" "$out/bin/fluxcc" "$out/bin/fluxcc-san"
