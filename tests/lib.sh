# tests/lib.sh — what every section of the suite shares (tests/run.sh sources
# it, then the sections): the paths, the scratch folder $T (removed at exit),
# the counters and check/golden/expect_fail. Sourced from the repository root.
set -u
B=${B:-build}
UPDATE=${UPDATE:-}
TOP=$(pwd)
FLUXCC=$TOP/fluxcc
SAN=$TOP/$B/san/fluxcc
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The emitted projects' make: each project compiles the same host runtime
# (runtime/'s ~15 files), and the suite builds a few hundred projects. Where
# ccache is installed (scripts/deps.sh), make's CC and CXX go through it, its
# cache in $T (empty at each run, shared within it), the project's folder
# left out of the key (CCACHE_NOHASHDIR: -g); a hit gives the same object and
# the same warnings. Only make's compilers: fluxcc's own (the C target's
# search, $CC or cc) and the suite's direct cc calls are not cached.
if [ -x /usr/lib/ccache/cc ] && [ -x /usr/lib/ccache/c++ ] && [ "${FLUXCC_TEST_CCACHE:-1}" != 0 ]; then
  export CCACHE_DIR="$T/ccache" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=2G
  export MAKEFLAGS="${MAKEFLAGS:+$MAKEFLAGS }CC=/usr/lib/ccache/cc CXX=/usr/lib/ccache/c++"
fi
pass=0
fail=0
skip=0
# TIMES=1: after each check, the seconds since the one before (where a section's time goes)
_t0=$(date +%s.%N)
_times() { [ -n "${TIMES:-}" ] || return 0; _t1=$(date +%s.%N); awk -v a="$_t0" -v b="$_t1" 'BEGIN {printf "     (%.1f s)\n", b - a}'; _t0=$_t1; }
ok() { pass=$((pass + 1)); echo "ok   $1"; _times; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; _times; }
check() { name=$1; shift; if "$@" >"$T/log" 2>&1; then ok "$name"; else bad "$name"; sed 's/^/     /' "$T/log" | head -40; fi; }

# a python with numpy for the independent reference
PY=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done

# golden NAME ACTUAL EXPECTED: compare, or re-bless with UPDATE=1
golden() {
  if [ -n "$UPDATE" ]; then
    mkdir -p "$(dirname "$3")"; cp "$2" "$3"; ok "$1 (blessed)"
  elif [ ! -f "$3" ]; then
    bad "$1: no golden file $3 (make test UPDATE=1)"
  elif diff -u "$3" "$2" >"$T/diff"; then
    ok "$1"
  else
    bad "$1"; head -60 "$T/diff" | sed 's/^/     /'
  fi
}

# the compiler's sources as the unit tests and the fuzzers build them
LIBSRC="$(ls compiler/*.c | grep -v main.c) runtime/safetensors.c runtime/files.c $B/fdsl.tab.c $B/fdsl.lex.c"
SANFLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined"
LIBSRC=$(echo $LIBSRC)
# small budgets keep this short: --budget N candidates per kernel (RAW, HC and TC included)
BEAMOPTS="--target opencl --beam 2 --budget 10"
# expect_fail NAME PATTERN CMD...: exit status 2, stderr matches PATTERN, $T/bad.o not created
expect_fail() {
  name=$1 pat=$2; shift 2
  rm -f "$T/bad.o"
  "$@" >"$T/out" 2>"$T/err"; rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pat" "$T/err" && [ ! -e "$T/bad.o" ] && ! grep -q "AddressSanitizer\|runtime error" "$T/err"; then
    ok "$name"
  else
    bad "$name (exit $rc)"; sed 's/^/     /' "$T/err" | head -10
  fi
}
