# tests/bad-input-lib.sh — what tests/bad-input-compiler.sh and tests/bad-input-outside.sh share:
# their standalone set-up (tests/run.sh defines it when it sources them) and
# hrun. Sourced from the repository root.
if [ -z "${HOSTILE_IN_RUN:-}" ]; then
  set -u
  B=${B:-build}
  TOP=$(pwd)
  FLUXCC=$TOP/fluxcc
  SAN=$TOP/$B/san/fluxcc
  T=$(mktemp -d)
  trap 'rm -rf "$T"' EXIT
  pass=0 fail=0 skip=0
  ok() { pass=$((pass + 1)); echo "ok   $1"; }
  bad() { fail=$((fail + 1)); echo "FAIL $1"; }
fi
H=$TOP/tests/hostile
HT=$T/hostile
mkdir -p "$HT"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export ASAN_OPTIONS

# hrun NAME RC PATTERN CMD...: CMD exits RC within 10 s, its output matches the
# extended regex PATTERN, no signal, no sanitizer report. Output kept in $HT/out.
hrun() {
  name=$1 want=$2 pat=$3
  shift 3
  timeout 10 "$@" >"$HT/out" 2>&1
  rc=$?
  if [ $rc -ne "$want" ]; then bad "$name: exit $rc, want $want"; sed 's/^/     /' "$HT/out" | head -8 | cut -c1-200
  elif ! grep -Eq -- "$pat" "$HT/out"; then bad "$name: no message matching '$pat'"; sed 's/^/     /' "$HT/out" | head -8 | cut -c1-200
  elif grep -Eq 'runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer' "$HT/out"; then bad "$name: sanitizer report"; grep -E 'runtime error|Sanitizer' "$HT/out" | head -5
  else ok "$name"; fi
}
