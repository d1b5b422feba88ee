#!/bin/sh
# scripts/same-output.sh OLD_FLUXCC NEW_FLUXCC — do two fluxcc binaries
# (two trees' builds) emit the same projects? For a refactor that must not
# change what users get.
#
# 1. Every model of examples/ and tests/ under every fixed method (raw, hc,
#    tc) and target (cuda, opencl, c): the emitted project, the exit status
#    and the diagnostics must be equal (a model the compiler refuses is
#    compared by its messages).
# 2. The searches (beam, beam --from raw, mcts, rl, best) on tests/opt's models
#    and flux-tiny on OpenCL and C (and CUDA where FLUXCC_CUDA_LIBS names the
#    stand-in's libraries), under FLUXCC_FAULT=fake-time (a candidate's time
#    is a function of its source) with --budget 4 --no-cache; then each
#    search's records.json replayed (--records) by the other binary.
#
# Equal means byte for byte, but for what says when, where and how long:
# provenance.json's fluxcc_commit, command, date and search_s, and the
# records. search_s and at_s (wall times), and the --records path of a replay. Prints one line per difference
# and a summary; exits 1 on any difference. QUICK=1: flux-tiny and tests/opt
# only in part 1.
set -u
[ $# = 2 ] || { echo "usage: $0 OLD_FLUXCC NEW_FLUXCC" >&2; exit 2; }
OLD=$(realpath "$1") NEW=$(realpath "$2")
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/same-output.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$TOP"

# a project or a JSON file with the when/where/how-long fields dropped
norm() {
  python3 - "$1" <<'EOF'
import json, sys
DROP = {"fluxcc_commit", "command", "date", "search_s", "at_s", "records"}
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in DROP}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))
EOF
}

# same DIR_A DIR_B LABEL: 0 when the two outputs are equal
same() {
  a=$1 b=$2 what=$3 bad=0
  [ "$(cat "$a.rc")" = "$(cat "$b.rc")" ] || { echo "DIFF $what: exit $(cat "$a.rc") vs $(cat "$b.rc")"; return 1; }
  sed "s|$OLD|FLUXCC|g; s|$a|OUT|g" "$a.err" > "$a.err.n"
  sed "s|$NEW|FLUXCC|g; s|$b|OUT|g" "$b.err" > "$b.err.n"
  # the searches' own lines say how long they took: compare the rest
  grep -v ' s\b\| s)\| s;\|search done in' "$a.err.n" > "$a.err.m"; grep -v ' s\b\| s)\| s;\|search done in' "$b.err.n" > "$b.err.m"
  cmp -s "$a.err.m" "$b.err.m" || { echo "DIFF $what: diagnostics"; diff "$a.err.m" "$b.err.m" | head -5; bad=1; }
  [ -d "$a" ] || [ -d "$b" ] || return $bad
  (cd "$a" && find . -type f | sort) > "$a.files"; (cd "$b" && find . -type f | sort) > "$b.files"
  cmp -s "$a.files" "$b.files" || { echo "DIFF $what: file lists"; diff "$a.files" "$b.files" | head -5; return 1; }
  while read -r f; do
    case $f in
      *.json) norm "$a/$f" > "$T/na"; norm "$b/$f" > "$T/nb"; cmp -s "$T/na" "$T/nb" ;;
      *) cmp -s "$a/$f" "$b/$f" ;;
    esac || { echo "DIFF $what: $f"; bad=1; }
  done < "$a.files"
  return $bad
}

n=0 nd=0
# run LABEL ENV ARGS...: both binaries, each into its own directory
run() {
  what=$1 envs=$2; shift 2
  i=$((n += 1))
  for side in old new; do
    bin=$OLD; [ $side = new ] && bin=$NEW
    o=$T/$i.$side
    env $envs "$bin" "$@" -o "$o" --quiet > /dev/null 2> "$o.err"; echo $? > "$o.rc"
  done
  same "$T/$i.old" "$T/$i.new" "$what" || nd=$((nd + 1))
}

if [ "${QUICK:-}" = 1 ]; then models="examples/flux-tiny.fdsl $(ls tests/opt/*.fdsl)"
else models=$(find examples tests -name '*.fdsl' | sort); fi
for m in $models; do
  for t in cuda opencl c; do
    for x in raw hc tc; do run "$m --opt $x --target $t" "" "$m" --opt $x --target $t; done
  done
done
echo "part 1: $n compiles compared, $nd differ"

targets="opencl c"
[ -n "${FLUXCC_CUDA_LIBS:-}" ] && targets="$targets cuda"
p1=$n
for m in tests/opt/*.fdsl examples/flux-tiny.fdsl; do
  for t in $targets; do
    for x in "beam" "beam --from raw" "mcts" "rl" "best"; do
      run "$m --opt $x --target $t (fake time)" FLUXCC_FAULT=fake-time "$m" --opt $x --target $t --budget 4 --no-cache
      # the records replayed by the other binary give the old project again
      if [ "$(cat "$T/$n.old.rc")" = 0 ]; then
        i=$n
        for side in old new; do
          bin=$NEW rec=$T/$i.old/records.json; [ $side = new ] && bin=$OLD rec=$T/$i.new/records.json
          o=$T/$i.replay.$side
          "$bin" "$m" --opt ${x%% *} --target $t --records "$rec" -o "$o" --quiet > /dev/null 2> "$o.err"; echo $? > "$o.rc"
        done
        same "$T/$i.replay.old" "$T/$i.replay.new" "$m --opt $x --target $t: replayed across" || nd=$((nd + 1))
      fi
    done
  done
done
echo "part 2: $((n - p1)) searches compared (and replayed across), $nd differ in all"
[ $nd = 0 ]
