#!/bin/sh
# tests/check-comment-paths.sh — every file a comment names is in the tree.
# Comments in compiler/, runtime/, templates/, scripts/ and grammar/ that say
# where something lives ("see records.c", "templates/c/Makefile") rot when
# files move; this lists each name that is neither a tracked file (by path, or
# by its name anywhere in the tree, a template's ".in" included), nor a header
# of a library we use, nor one of the files an emitted project or a run
# makes. Exit 1 with the list.
cd "$(dirname "$0")/.." || exit 2
tracked=$(git ls-files 2>/dev/null) || { echo "check-comment-paths: not a git checkout"; exit 2; }
outside='schedule.c kernel_table.cu kernel_table.c k.c k.cu cuda.h cuda_runtime.h cuda_bf16.h cuda_fp16.h math.h math_constants.h cl.h opencl-c.h opencl-c-base.h'
out=$(for f in $(git ls-files compiler runtime templates scripts grammar | grep -E '\.(c|h|cu|cuh|cl|cc|in|sh|py|l|y)$'); do
  # comment text only: what follows // (not ://), or a line starting a /* */ block, a * line, or a # comment
  sed -n -e 's|^.*[^:]//||p' -e 's|^//||p' -e 's|^[[:space:]]*/\{0,1\}\*\(.*\)|\1|p' -e 's|^[[:space:]]*#[[:space:]]\(.*\)|\1|p' "$f" |
    grep -oE '\b([a-z_]+/)*[a-z_][a-z0-9_-]*\.(c|h|cu|cuh|cl|sh|py|fdsl|in)\b' | sort -u |
    while read -r name; do
      base=${name##*/}
      case " $outside " in *" $base "*) continue ;; esac
      printf '%s\n' "$tracked" | grep -qxF "$name" && continue
      printf '%s\n' "$tracked" | grep -qE "(^|/)$(printf '%s' "$base" | sed 's/\./\\./g')(\.in)?\$" && continue
      echo "$f: a comment names $name, which is not in the tree"
    done
done)
[ -z "$out" ] && exit 0
printf '%s\n' "$out"
exit 1
