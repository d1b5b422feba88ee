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
# it did not search left RAW) and log (OUT_DIR.shardI.log).
set -eu
[ $# -ge 3 ] || { echo "usage: sh scripts/tune-slurm.sh MODEL.fdsl N OUT_DIR [fluxcc search options...]" >&2; exit 2; }
MODEL=$1 N=$2 OUT=$3
shift 3
case $N in ''|*[!0-9]*) echo "tune-slurm: N '$N' is not a number of shards" >&2; exit 2;; esac
[ "$N" -ge 1 ] || { echo "tune-slurm: N must be at least 1" >&2; exit 2; }
[ -r "$MODEL" ] || { echo "tune-slurm: $MODEL: not readable" >&2; exit 2; }
CACHE=${CACHE:-$PWD/build/tune-cache}
FLUXCC=${FLUXCC:-$PWD/fluxcc}
SBATCH=${SBATCH:-sbatch}
mkdir -p "$CACHE"
# the options, quoted once for the job scripts' shell
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
opts=
for a in "$@"; do opts="$opts $(q "$a")"; done
m=$(q "$MODEL") c=$(q "$CACHE") f=$(q "$FLUXCC") o=$(q "$OUT")
shards=$($SBATCH --parsable --job-name=fluxcc-tune --array=0-$((N - 1)) ${SBATCH_OPTS:-} --wrap \
  "$f $m$opts --shard \$SLURM_ARRAY_TASK_ID/$N --cache $c -o $o.shard\$SLURM_ARRAY_TASK_ID --quiet > $o.shard\$SLURM_ARRAY_TASK_ID.log 2>&1")
shards=${shards%%;*}
final=$($SBATCH --parsable --job-name=fluxcc-tune-final --dependency=afterok:"$shards" ${SBATCH_OPTS:-} --wrap \
  "{ $f train $c && $f $m$opts --cache $c -o $o; } > $o.log 2>&1")
echo "shards: job $shards (array 0-$((N - 1))); final: job ${final%%;*} (after every shard): $OUT"
