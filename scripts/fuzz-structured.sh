#!/bin/sh
# fuzz-structured.sh SECONDS [OUT]: random valid-looking programs
# (tests/fuzz/gen_fdsl.py) through the whole compiler: --dump schedule, the
# interpreter, every fixed method (raw, hc, tc, random opts) built for OpenCL
# and run on PoCL with --check against the interpreter, hc and random opts
# built for the C target (cc + OpenMP) and checked the same way, and the CUDA
# text (tc, and random opts) run on the CPU by `make emu` with the race check.
# A finding is a crash or signal, a time-out, a sanitizer report, an error
# without a message, or a compiled program that disagrees with the
# interpreter; each is kept in OUT/findings/N with its program and log.
# Prints a summary line every 20 programs and a total at the end.
set -u
secs=${1:-600}
out=${2:-/tmp/fuzz-structured}
top=$(cd "$(dirname "$0")/.." && pwd)
PY=python3
mkdir -p "$out/findings" "$out/bin"
# copies, so that rebuilding fluxcc meanwhile neither disturbs nor is blocked by the run
cp "$top/fluxcc" "$out/bin/fluxcc" && cp "$top/build/san/fluxcc" "$out/bin/fluxcc-san" || exit 2
F=$out/bin/fluxcc
SAN=$out/bin/fluxcc-san
w=$out/work
end=$(( $(date +%s) + secs ))
n=0 execs=0 found=0 refused=0 checked=0
seed=${SEED:-$(date +%s)}
finding() {  # WHAT: keep the program and the log
  found=$((found + 1))
  d=$out/findings/$found; mkdir -p "$d"
  cp "$w/p.fdsl" "$d/prog.fdsl"; cp "$w/log" "$d/log" 2>/dev/null
  echo "$1 (seed $s)" > "$d/what"
  echo "FINDING $found: $1 (seed $s)"
}
# run CMD with a time limit; rc 124 is a time-out
lim() { timeout -k 2 "$@"; }
while [ "$(date +%s)" -lt "$end" ]; do
  s=$((seed + n)); n=$((n + 1))
  rm -rf "$w"; mkdir -p "$w"
  $PY "$top/tests/fuzz/gen_fdsl.py" "$s" > "$w/p.fdsl"
  lim 20 "$SAN" --dump schedule "$w/p.fdsl" > /dev/null 2> "$w/log"; rc=$?; execs=$((execs + 1))
  if [ $rc -eq 1 ] && grep -q 'error:' "$w/log" && ! grep -q 'Sanitizer\|runtime error' "$w/log"; then refused=$((refused + 1)); continue; fi
  if [ $rc -ne 0 ] || grep -q 'Sanitizer\|runtime error' "$w/log"; then finding "--dump schedule exit $rc"; continue; fi
  lim 30 "$F" init "$w/p.fdsl" --seed 3 --weights "$w/w" --inputs "$w/i" > /dev/null 2> "$w/log" &&
    lim 60 "$F" run "$w/p.fdsl" --weights "$w/w" --inputs "$w/i" -o "$w/ref" > /dev/null 2>> "$w/log"; rc=$?; execs=$((execs + 2))
  if [ $rc -eq 2 ] && grep -q 'NaN\|inf' "$w/log"; then refused=$((refused + 1)); continue; fi  # the program itself overflows
  [ $rc -eq 0 ] || { finding "init/run exit $rc"; continue; }
  for tm in opencl:raw opencl:hc opencl:tc opencl:random c:hc c:random; do
    t=${tm%%:*} m=${tm#*:}
    opt="--opt $m"; [ $m = random ] && opt="--opt random --seed $s"
    lim 30 "$F" "$w/p.fdsl" $opt --target $t -o "$w/${t}_$m" > /dev/null 2> "$w/log" &&
      lim 120 make -s -C "$w/${t}_$m" >> "$w/log" 2>&1 &&
      lim 120 "$w/${t}_$m/flux" --quiet --random-weights 3 --random-inputs 3 --check "$w/ref" >> "$w/log" 2>&1; rc=$?
    execs=$((execs + 1))
    [ $rc -eq 0 ] && checked=$((checked + 1)) || finding "$t $opt: exit $rc"
  done
  for m in tc random; do
    opt="--opt $m"; [ $m = random ] && opt="--opt random --seed $s"
    lim 30 "$F" "$w/p.fdsl" $opt -o "$w/cu_$m" > /dev/null 2> "$w/log" &&
      lim 180 make -s -C "$w/cu_$m" emu >> "$w/log" 2>&1 &&
      FLUX_EMU_RACECHECK=1 lim 120 "$w/cu_$m/flux-emu" --quiet --random-weights 3 --random-inputs 3 --check "$w/ref" >> "$w/log" 2>&1; rc=$?
    execs=$((execs + 1))
    [ $rc -eq 0 ] && checked=$((checked + 1)) || finding "cuda emu $opt: exit $rc"
  done
  [ $((n % 20)) -eq 0 ] && echo "programs $n, executions $execs, refused cleanly $refused, compiled runs checked $checked, findings $found"
done
echo "total: programs $n, executions $execs, refused cleanly $refused, compiled runs checked $checked, findings $found (seeds $seed..$((seed + n - 1)))"
[ $found -eq 0 ]
