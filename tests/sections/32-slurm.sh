# tests/sections/32-slurm.sh — scripts/tune-slurm.sh: its refusals and its quoting (the stand-in sbatch)
# needs:
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== scripts/tune-slurm.sh: its refusals and its quoting (the stand-in sbatch)"
SLOPTS="--opt beam $BEAMOPTS --seed 5"
# fluxcc --dry-run, which the script asks: the options checked as the compile would, nothing done
check "fluxcc --dry-run: a shard's command line is fine (exit 0, nothing written: no project, no cache)" sh -c "
  $FLUXCC tests/opt/prologue.fdsl $SLOPTS --shard 1/3 --cache $T/dr_cache -o $T/dr --dry-run > $T/dr.out 2>&1 &&
  ! test -s $T/dr.out && ! test -e $T/dr && ! test -e $T/dr_cache"
expect_fail "fluxcc --dry-run: --shard 0/100001 refused as the compile refuses it" "--shard '0/100001': I/N, shard I of N (0 <= I < N <= 100000)" \
  "$FLUXCC" tests/opt/prologue.fdsl $SLOPTS --shard 0/100001 -o "$T/bad.o" --dry-run
expect_fail "fluxcc --dry-run: not for report" "--dry-run checks a compile's (or pipeline's) command line, not report's" \
  "$FLUXCC" report "$T" --dry-run
# tune_refused NAME PATTERN ARGS...: exit 2, stderr matches PATTERN and says nothing was queued, and
# nothing was: the stand-in sbatch saw no job, the cache directory was not even made
tune_refused() {
  name=$1 pat=$2; shift 2
  rm -rf "$T/rq" "$T/rq_cache"; mkdir "$T/rq"
  SBATCH=$TOP/tests/slurm/sbatch SBATCH_STATE=$T/rq CACHE=$T/rq_cache FLUXCC=$FLUXCC sh scripts/tune-slurm.sh "$@" >"$T/out" 2>"$T/err"; rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pat" "$T/err" && grep -q 'nothing queued' "$T/err" && [ -z "$(ls "$T/rq")" ] && [ ! -e "$T/rq_cache" ]; then
    ok "$name"
  else
    bad "$name (exit $rc, jobs: $(ls "$T/rq" | wc -l))"; sed 's/^/     /' "$T/err" | head -10
  fi
}
M=tests/opt/prologue.fdsl
tune_refused "tune-slurm: N over fluxcc's --shard limit (100000): refused by fluxcc --dry-run, nothing queued" \
  "fluxcc: error: --shard '0/100001': I/N, shard I of N (0 <= I < N <= 100000)" $M 100001 "$T/rq_out" $SLOPTS
tune_refused "tune-slurm: N = 0: refused, nothing queued" "--shard '0/0': I/N" $M 0 "$T/rq_out" $SLOPTS
tune_refused "tune-slurm: N not a number: refused, nothing queued" "N '4x' is not a number of shards" $M 4x "$T/rq_out" $SLOPTS
tune_refused "tune-slurm: --opt raw (a shard with no search): refused, nothing queued" \
  "fluxcc: error: --shard is for a search that fills a cache (--opt beam, mcts, rl or best, no --no-cache" $M 2 "$T/rq_out" --opt raw --target opencl
tune_refused "tune-slurm: --no-cache (shards that cannot share a cache): refused, nothing queued" \
  "fluxcc: error: --shard is for a search that fills a cache (.*no --no-cache" $M 2 "$T/rq_out" $SLOPTS --no-cache
tune_refused "tune-slurm: an option fluxcc does not know: refused, nothing queued" "fluxcc: error: unknown option '--bogus'" \
  $M 2 "$T/rq_out" $SLOPTS --bogus
tune_refused "tune-slurm: --cache among the options (CACHE sets it): refused, nothing queued" "--cache is the script's to set" \
  $M 2 "$T/rq_out" $SLOPTS --cache "$T/rq_cache"
tune_refused "tune-slurm: a missing model: refused, nothing queued" "nothere.fdsl: not readable" tests/opt/nothere.fdsl 2 "$T/rq_out" $SLOPTS
# a FLUXCC that is not there (the helper passes the real one)
rm -rf "$T/rq" "$T/rq_cache"; mkdir "$T/rq"
if SBATCH=$TOP/tests/slurm/sbatch SBATCH_STATE=$T/rq CACHE=$T/rq_cache FLUXCC=$T/nofluxcc sh scripts/tune-slurm.sh $M 2 "$T/rq_out" $SLOPTS >"$T/out" 2>"$T/err"; then rc=0; else rc=$?; fi
[ $rc -eq 2 ] && grep -q "FLUXCC '$T/nofluxcc': no such program" "$T/err" && [ -z "$(ls "$T/rq")" ] && ok "tune-slurm: a FLUXCC that is not there: refused, nothing queued" ||
  { bad "tune-slurm: a FLUXCC that is not there (exit $rc)"; sed 's/^/     /' "$T/err" | head -5; }
# N=08: decimal, as fluxcc reads its numbers (the shell's $((08)) is an octal error); a recording sbatch
cat > "$T/sbatch-rec" <<'EOF'
#!/bin/sh
n=$(( $(ls "$SBATCH_STATE" | wc -l) + 1 ))
printf '%s\n' "$@" > "$SBATCH_STATE/$n"
echo "$n"
EOF
chmod +x "$T/sbatch-rec"
check "tune-slurm: N = 08 is eight shards (decimal, as fluxcc reads it; not the shell's octal error): array 0-7, --shard I/8" sh -c "
  rm -rf $T/rq && mkdir $T/rq && SBATCH=$T/sbatch-rec SBATCH_STATE=$T/rq CACHE=$T/rq_cache FLUXCC=$FLUXCC \
    sh scripts/tune-slurm.sh $M 08 $T/rq_out $SLOPTS > $T/rq.out 2> $T/rq.err && ! test -s $T/rq.err &&
  grep -q '^shards: job 1 (array 0-7); final: job 2 (after every shard)' $T/rq.out &&
  grep -qx -- '--array=0-7' $T/rq/1 && grep -q -- '--shard \\\$SLURM_ARRAY_TASK_ID/8 ' $T/rq/1 &&
  grep -qx -- '--dependency=afterok:1' $T/rq/2 && grep -qx -- '--kill-on-invalid-dep=yes' $T/rq/2"
# quoting: a model, cache and output with spaces and quotes, the jobs run by the stand-in
mkdir -p "$T/q d'ir"
cp $M "$T/q d'ir/pro logue.fdsl"
check "tune-slurm: a model, cache and output whose paths hold spaces and quotes reach the jobs intact (the stand-in sbatch runs them)" sh -c '
  T=$1 TOP=$2 FLUXCC=$3; shift 3; D="$T/q d'"'"'ir"
  mkdir -p "$T/qsb" && FLUXCC_FAULT=fake-time SBATCH="$TOP/tests/slurm/sbatch" SBATCH_STATE="$T/qsb" CACHE="$D/ca che" FLUXCC="$FLUXCC" \
    sh scripts/tune-slurm.sh "$D/pro logue.fdsl" 2 "$D/tu ned" "$@" > "$T/q.out" &&
  test "$(cat "$T/qsb/1")" = ok && test "$(cat "$T/qsb/2")" = ok &&
  test -f "$D/tu ned.shard0.log" && test -f "$D/tu ned.shard1/records.json" &&
  test "$(grep -c ": cached" "$D/tu ned.log")" -eq 6 && test -f "$D/tu ned/records.json" && ls "$D/ca che" | grep -q "^model-"' \
  sh "$T" "$TOP" "$FLUXCC" $SLOPTS

