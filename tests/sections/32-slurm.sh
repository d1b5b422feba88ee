# tests/sections/32-slurm.sh — scripts/tune-slurm.sh: its refusals, its quoting, and a real one-node Slurm
# needs:
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== scripts/tune-slurm.sh: its refusals, its quoting, and a real one-node Slurm"
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

# A real Slurm: slurmctld, slurmd and munged started here as root, on loopback, everything
# (config, state, spool, logs, munge key and socket) under $T/slurm; torn down at the end, or at
# exit whatever happens (the trap). Jobs are followed with scontrol show job (no accounting).
SL_PATH=$PATH:/usr/sbin:/sbin
slurm_have() { PATH=$SL_PATH command -v "$1" >/dev/null 2>&1; }
if ! slurm_have slurmctld || ! slurm_have slurmd || ! slurm_have sbatch || ! slurm_have scontrol || ! slurm_have munged; then
  skip=$((skip + 1)); echo "SKIP tune-slurm.sh on a real Slurm: slurm-wlm (slurmctld, slurmd, sbatch, scontrol) or munge is not installed (sh scripts/deps.sh test installs them)"
elif [ "$(id -u)" != 0 ]; then
  skip=$((skip + 1)); echo "SKIP tune-slurm.sh on a real Slurm: slurmd runs jobs as their user, so it needs root (make test as root, as CI runs it)"
else
  S=$T/slurm
  sl_pids=
  # slurm_down: cancel the jobs (their processes end with them), then stop the daemons this section
  # started, by their process ids; the last resort after 15 s is SIGKILL
  slurm_down() {
    [ -n "$sl_pids" ] || return 0
    PATH=$SL_PATH SLURM_CONF=$S/slurm.conf scancel --user=root >/dev/null 2>&1
    n=0; while [ $n -lt 10 ] && PATH=$SL_PATH SLURM_CONF=$S/slurm.conf scontrol -o show jobs 2>/dev/null | grep -q 'JobState=\(RUNNING\|COMPLETING\)'; do sleep 1; n=$((n + 1)); done
    for p in $sl_pids; do kill "$p" 2>/dev/null; done
    n=0; while [ $n -lt 15 ]; do
      alive=; for p in $sl_pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
      [ -z "$alive" ] && break; sleep 1; n=$((n + 1))
    done
    for p in $alive; do kill -9 "$p" 2>/dev/null; done
    for p in $sl_pids; do wait "$p" 2>/dev/null; done
    sl_pids=
  }
  trap 'slurm_down; rm -rf "$T"' EXIT
  trap 'exit 130' INT TERM
  # two free TCP ports (not in /proc/net/tcp*), from a start that differs from run to run
  port_used() {
    for pf in /proc/net/tcp /proc/net/tcp6; do
      [ -r "$pf" ] && awk -v p="$(printf ':%04X' "$1")" 'NR > 1 && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' "$pf" && return 0
    done
    return 1
  }
  free_port() { p=$1; while port_used "$p" || [ "$p" = "${2:-}" ]; do p=$((p + 1)); done; echo "$p"; }
  base=$((20000 + $$ % 20000 * 2))
  ctld_port=$(free_port $base)
  slurmd_port=$(free_port $((ctld_port + 1)) "$ctld_port")
  mkdir -p "$S/state" "$S/spool" "$S/log" "$S/out"
  dd if=/dev/urandom of="$S/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$S/munge.key"
  # munged -f: it wants every folder above its socket executable by all, which $T (mode 700,
  # mktemp's) is not; -f makes that a warning (only root uses this socket)
  PATH=$SL_PATH munged -F -f --key-file="$S/munge.key" --socket="$S/munge.sock" --pid-file="$S/munged.pid" \
    --log-file="$S/log/munged.log" --seed-file="$S/munged.seed" > "$S/log/munged.out" 2>&1 &
  sl_pids="$sl_pids $!"
  cpus=$(nproc 2>/dev/null || echo 1)
  mem=$(awk '/^MemAvailable:/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
  cat > "$S/slurm.conf" <<EOF
# a one-node cluster for tests/sections/32-slurm.sh, everything under $S
ClusterName=fluxcctest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
PlugStackConfig=$S/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
SchedulerType=sched/builtin
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  : > "$S/plugstack.conf"
  sl() { PATH=$SL_PATH SLURM_CONF=$S/slurm.conf "$@"; }
  n=0; while [ $n -lt 20 ] && [ ! -S "$S/munge.sock" ]; do sleep 0.5; n=$((n + 1)); done
  # (simple commands, not through sl: then $! is the daemon itself, not a subshell around it)
  PATH=$SL_PATH SLURM_CONF=$S/slurm.conf slurmctld -D -f "$S/slurm.conf" > "$S/log/slurmctld.out" 2>&1 &
  sl_pids="$sl_pids $!"
  PATH=$SL_PATH SLURM_CONF=$S/slurm.conf slurmd -D -N localhost -f "$S/slurm.conf" > "$S/log/slurmd.out" 2>&1 &
  sl_pids="$sl_pids $!"
  # the node, idle: the cluster is up
  n=0; while [ $n -lt 60 ] && ! sl scontrol -o show node localhost 2>/dev/null | grep -q 'State=IDLE'; do sleep 0.5; n=$((n + 1)); done
  # job_state ID: the job's (an array's tasks': one line each) JobState=... Reason=...
  job_state() { sl scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*\(JobState=[A-Z_]*\) \(Reason=[^ ]*\).*/\1 \2/p'; }
  # job_wait ID SECONDS: until none of its jobs is pending (or running), or SECONDS pass
  job_wait() {
    n=0; while [ $n -lt "$2" ] && job_state "$1" | grep -q 'JobState=\(PENDING\|CONFIGURING\|RUNNING\|COMPLETING\)'; do
      job_state "$1" | grep -q 'Reason=DependencyNeverSatisfied' && break; sleep 1; n=$((n + 1)); done
  }
  if sl scontrol -o show node localhost 2>/dev/null | grep -q 'State=IDLE'; then
    ok "a one-node Slurm (slurmctld, slurmd, munged) in the test's folder, on loopback ports $ctld_port and $slurmd_port: its node is idle"
    # one machine, timings a function of the source (FLUXCC_FAULT=fake-time, which the jobs inherit:
    # sbatch passes the environment): the search the shards and the final compile must reproduce
    FLUXCC_FAULT=fake-time $FLUXCC $M $SLOPTS --no-cache -o "$T/sl_one" > /dev/null 2>&1
    check "tune-slurm.sh on Slurm: 3 shards and the final job complete; its project is the one-machine search's (kernels byte for byte, records but for command, date and times)" sh -c "
      FLUXCC_FAULT=fake-time SLURM_CONF=$S/slurm.conf PATH=$SL_PATH SBATCH_OPTS=--output=$S/out/%x-%A_%a.out CACHE=$T/sl_cache FLUXCC=$FLUXCC \
        sh scripts/tune-slurm.sh $M 3 $T/sl_tuned $SLOPTS > $T/sl.out &&
      sed -n 's/^shards: job \([0-9]*\) (array 0-2); final: job \([0-9]*\) .*/\1 \2/p' $T/sl.out > $T/sl.ids && test -s $T/sl.ids"
    read sh_id fin_id < "$T/sl.ids" 2>/dev/null || sh_id= fin_id=
    if [ -n "$fin_id" ]; then
      t0=$(date +%s); job_wait "$fin_id" 240
      echo "     (the shards and the final job: $(( $(date +%s) - t0 )) s)"
      job_state "$sh_id" > "$T/sl_shards.state"; job_state "$fin_id" > "$T/sl_final.state"
      check "... the 3 shards COMPLETED, then the final job COMPLETED" sh -c "
        cat $T/sl_shards.state $T/sl_final.state && test \$(grep -c 'JobState=COMPLETED' $T/sl_shards.state) -eq 3 &&
        grep -q 'JobState=COMPLETED' $T/sl_final.state"
      check "... the final compile took all 6 kernels from the cache the shards filled, after training its model" sh -c "
        cat $T/sl_tuned.log && test \$(grep -c ': cached' $T/sl_tuned.log) -eq 6 && grep -q '^trained on [0-9]* candidates of 6 kernels' $T/sl_tuned.log &&
        ls $T/sl_cache | grep -q '^model-.*-f[0-9]*.json'"
      check "... its kernels and records are the one-machine search's" sh -c "
        diff -r $T/sl_one/kernels $T/sl_tuned/kernels &&
        for d in sl_one sl_tuned; do grep -v '\"command\":\|\"date\":\|search_s\|at_s' $T/\$d/records.json > $T/\$d.rec || exit 1; done &&
        diff $T/sl_one.rec $T/sl_tuned.rec"
    fi
    # a failed shard: shard 1's output is a file where its project would go, so it fails (exit 2);
    # the final job must never start: Slurm cancels it (--kill-on-invalid-dep=yes)
    : > "$T/sl_fail.shard1"
    check "tune-slurm.sh on Slurm, a shard fails (its -o is a file): queued as usual" sh -c "
      FLUXCC_FAULT=fake-time SLURM_CONF=$S/slurm.conf PATH=$SL_PATH SBATCH_OPTS=--output=$S/out/%x-%A_%a.out CACHE=$T/sl_cache2 FLUXCC=$FLUXCC \
        sh scripts/tune-slurm.sh $M 2 $T/sl_fail $SLOPTS > $T/slf.out &&
      sed -n 's/^shards: job \([0-9]*\) (array 0-1); final: job \([0-9]*\) .*/\1 \2/p' $T/slf.out > $T/slf.ids && test -s $T/slf.ids &&
      grep -q 'a shard that fails cancels the final job' $T/slf.out"
    read sh_id fin_id < "$T/slf.ids" 2>/dev/null || sh_id= fin_id=
    if [ -n "$fin_id" ]; then
      job_wait "$sh_id" 120; job_wait "$fin_id" 60
      job_state "$sh_id" > "$T/slf_shards.state"; job_state "$fin_id" > "$T/slf_final.state"
      check "... shard 1 FAILED (its log says why), shard 0 COMPLETED; the final job never ran: CANCELLED, DependencyNeverSatisfied" sh -c "
        cat $T/slf_shards.state $T/slf_final.state &&
        grep -q 'JobState=FAILED' $T/slf_shards.state && grep -q 'JobState=COMPLETED' $T/slf_shards.state &&
        grep -q 'sl_fail.shard1: exists and is not a directory' $T/sl_fail.shard1.log &&
        grep -q 'JobState=CANCELLED Reason=DependencyNeverSatisfied' $T/slf_final.state && test ! -e $T/sl_fail.log && test ! -e $T/sl_fail"
    fi
  else
    bad "a one-node Slurm in the test's folder: its node did not come up in 30 s; the daemons' logs:"
    for f in "$S"/log/*; do echo "     -- $f"; tail -15 "$f" | sed 's/^/     /'; done
  fi
  sl_started=$sl_pids
  slurm_down
  check "the one-node Slurm torn down: munged, slurmctld and slurmd ($(echo $sl_started)) have exited" sh -c "
    for p in $sl_started; do ! kill -0 \$p 2>/dev/null || { ps -p \$p -o pid=,args=; exit 1; }; done"
  trap 'rm -rf "$T"' EXIT
  trap - INT TERM
fi
