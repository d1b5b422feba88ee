#!/bin/sh
# fuzz-records.sh SECONDS [OUT]: structure-aware fuzzing of records.json,
# tuning-cache entries and ./flux --trace files (tests/fuzz/fuzz_records.py:
# JSON mutations of real ones through fluxcc report, report --trace, --records
# replays and cached searches, under the sanitizer build). Findings are kept
# in OUT/findings/N; SEED=S reproduces; KINDS=trace (or records, cache, a
# comma list) fuzzes only those.
set -u
secs=${1:-600}
out=${2:-/tmp/fuzz-records}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/bin"
make -s -C "$top" fluxcc san >/dev/null || exit 2
# copies, so that rebuilding fluxcc meanwhile neither disturbs nor is blocked by the run
cp "$top/fluxcc" "$out/bin/fluxcc" && cp "$top/build/san/fluxcc" "$out/bin/fluxcc-san" || exit 2
cd "$top" && LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/lsan-pocl.supp} ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} exec python3 tests/fuzz/fuzz_records.py "$secs" "$out" "$out/bin/fluxcc" "$out/bin/fluxcc-san"
