#!/bin/sh
# scripts/tune-slurm.sh MODEL.fdsl N OUT_DIR [fluxcc search options...]
#
# Tuning across machines with Slurm: a job array of N shards, each searching
# every Nth unique kernel of MODEL (fluxcc --shard I/N) into one shared
# tuning cache, then a final job (after every shard succeeded) that trains
# the cache's cost model on all the shards' measurements (fluxcc train CACHE)
# and compiles MODEL from the warm cache into OUT_DIR: every kernel is taken
# from the cache, nothing is searched again. Prints the two job ids.
#
#   sh scripts/tune-slurm.sh examples/flux.fdsl 16 build/flux-beam --opt beam --target cuda
#
# The search options (--opt, --target, --budget, --beam, --seed, ...) must be
# the same for the shards and the final compile, as the cache key holds them:
# the script passes the same ones to both. Environment:
#   CACHE        the shared cache directory, on a filesystem every node mounts
#                (default: $PWD/build/tune-cache)
#   FLUXCC       the fluxcc binary every node runs (default: $PWD/fluxcc)
#   SBATCH_OPTS  more sbatch options for both jobs (partition, --gres=gpu:1, --time ...)
#   SBATCH       the sbatch command (default: sbatch)
# Each shard writes its own partial project (OUT_DIR.shardI, the kernels
# it did not search left RAW) and log (OUT_DIR.shardI.log); the final job
# logs to OUT_DIR.log. A shard that fails cancels the final job (sbatch
# --kill-on-invalid-dep=yes: scontrol show job says CANCELLED,
# DependencyNeverSatisfied); its log says why.
#
# Before anything is queued, FLUXCC checks both jobs' command lines
# (fluxcc --dry-run: the same rules as the jobs' runs, N from 1 to 100000
# included): a refusal (exit 2) queues nothing. N is read as fluxcc reads
# its numbers: decimal digits, 08 is eight. --shard, --cache and -o are
# the script's to set (N, CACHE, OUT_DIR).
set -eu
[ $# -ge 3 ] || { echo "usage: sh scripts/tune-slurm.sh MODEL.fdsl N OUT_DIR [fluxcc search options...]" >&2; exit 2; }
MODEL=$1 N=$2 OUT=$3
shift 3
refuse() { echo "tune-slurm: $*; nothing queued" >&2; exit 2; }
case $N in ''|*[!0-9]*) refuse "N '$N' is not a number of shards (1 to 100000)" ;; esac
N=${N#"${N%%[!0]*}"}; N=${N:-0}  # decimal, as fluxcc reads it: 08 is eight (the shell's $((08)) is an error)
[ -r "$MODEL" ] || refuse "$MODEL: not readable"
for a in "$@"; do
  case $a in --shard|--cache|-o|--dry-run) refuse "$a is the script's to set (N, CACHE=DIR, OUT_DIR), not an option to pass" ;; esac
done
CACHE=${CACHE:-$PWD/build/tune-cache}
FLUXCC=${FLUXCC:-$PWD/fluxcc}
SBATCH=${SBATCH:-sbatch}
command -v "$FLUXCC" >/dev/null 2>&1 || refuse "FLUXCC '$FLUXCC': no such program here (the fluxcc every node runs; it checks the jobs' options first)"
# the jobs' commands, checked by fluxcc itself: what it refuses, every shard would
dry() {
  what=$1; shift
  err=$("$FLUXCC" "$@" --dry-run 2>&1 >/dev/null) && return 0
  printf '%s\n' "$err" | grep '^fluxcc: error' >&2 || printf '%s\n' "$err" | head -5 >&2
  refuse "$FLUXCC refuses $what (above)"
}
dry "the shards' command (fluxcc MODEL OPTIONS --shard I/$N)" "$MODEL" "$@" --shard "0/$N" --cache "$CACHE" -o "$OUT.shard0"
dry "the final compile's command (fluxcc MODEL OPTIONS --cache CACHE)" "$MODEL" "$@" --cache "$CACHE" -o "$OUT"
mkdir -p "$CACHE" || refuse "cannot create the cache directory $CACHE"
# the options, quoted once for the job scripts' shell
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
opts=
for a in "$@"; do opts="$opts $(q "$a")"; done
m=$(q "$MODEL") c=$(q "$CACHE") f=$(q "$FLUXCC") o=$(q "$OUT")
shards=$($SBATCH --parsable --job-name=fluxcc-tune --array=0-$((N - 1)) ${SBATCH_OPTS:-} --wrap \
  "$f $m$opts --shard \$SLURM_ARRAY_TASK_ID/$N --cache $c -o $o.shard\$SLURM_ARRAY_TASK_ID --quiet > $o.shard\$SLURM_ARRAY_TASK_ID.log 2>&1")
shards=${shards%%;*}
final=$($SBATCH --parsable --job-name=fluxcc-tune-final --dependency=afterok:"$shards" --kill-on-invalid-dep=yes ${SBATCH_OPTS:-} --wrap \
  "{ $f train $c && $f $m$opts --cache $c -o $o; } > $o.log 2>&1") || {
  echo "tune-slurm: the final job was not queued; the shards (job $shards) are: scancel $shards, or run the final compile by hand" >&2; exit 1; }
echo "shards: job $shards (array 0-$((N - 1))); final: job ${final%%;*} (after every shard): $OUT"
echo "logs: $OUT.shardI.log, $OUT.log; a shard that fails cancels the final job (scontrol show job ${final%%;*})"
