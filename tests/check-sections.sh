#!/bin/sh
# tests/check-sections.sh — the suite's sections (tests/sections/NN-NAME.sh)
# are well formed: a first line "# tests/sections/FILE — title" naming the
# file, a "# needs:" line whose every name is a section that runs before it,
# and distinct numbers. Prints what is wrong; exit 1 if anything is.
bad=0
say() { echo "$*"; bad=1; }
seen=" "
nums=" "
for f in tests/sections/[0-9]*-*.sh; do
  b=${f##*/}; num=${b%%-*}; name=${b#*-}; name=${name%.sh}
  case "$nums" in *" $num "*) say "$f: number $num is taken by another section" ;; esac
  nums="$nums$num "
  head -1 "$f" | grep -q "^# $f — ." || say "$f: its first line is not '# $f — TITLE'"
  grep -q '^# needs:' "$f" || say "$f: no '# needs:' line"
  for n in $(sed -n 's/^# needs: *//p' "$f" | head -1); do
    case "$seen" in *" $n "*) ;; *) say "$f needs '$n', which is no section before it" ;; esac
  done
  seen="$seen$name "
done
exit $bad
