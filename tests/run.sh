#!/bin/sh
# tests/run.sh — the suite: the sections tests/sections/NN-NAME.sh, in order.
#   sh tests/run.sh                 every section (make test)
#   sh tests/run.sh --list          the sections: name, what it checks, what it needs
#   sh tests/run.sh --section A,B   A and B, and the sections they need first
#                                   (each file's "# needs:" line), in order
# Prints one line per check, each section's time, and closes with
# "N passed, M failed". UPDATE=1 re-blesses golden files. TIMES=1 also
# prints each check's seconds. FLUXCC_TEST_CCACHE=0: the projects' builds
# without ccache (tests/lib.sh). A section marked "# default: no" runs only
# when named (make check's smoke).
set -u
usage() { echo "usage: sh tests/run.sh [--list | --section NAME[,NAME...]]" >&2; exit 2; }
name_of() { b=${1##*/}; b=${b%.sh}; echo "${b#*-}"; }
field() { sed -n "s/^# $1: *//p" "$2" | head -1; }
SECTIONS=$(ls tests/sections/[0-9]*-*.sh 2>/dev/null) || { echo "tests/run.sh: run it from the repository root" >&2; exit 2; }
file_of() { for f in $SECTIONS; do [ "$(name_of "$f")" = "$1" ] && echo "$f" && return 0; done; return 1; }

_want=
case ${1:-} in
  "") ;;
  --list)
    [ $# = 1 ] || usage
    for f in $SECTIONS; do
      title=$(sed -n '1s/^# [^ ]* — //p' "$f")
      printf '%-19s %s\n' "$(name_of "$f")" "$title"
      [ -n "$(field needs "$f")" ] && printf '%-19s   needs: %s\n' "" "$(field needs "$f")"
      [ "$(field default "$f")" = no ] && printf '%-19s   (only when named)\n' ""
    done
    exit 0 ;;
  --section)
    [ $# = 2 ] || usage
    # the named sections and, repeatedly, what they need
    todo=$(echo "$2" | tr ',' ' ')
    while set -- $todo; [ $# -gt 0 ]; do
      n=$1; shift; todo=$*
      case " $_want " in *" $n "*) continue ;; esac
      f=$(file_of "$n") || { echo "tests/run.sh: no section '$n' (sh tests/run.sh --list)" >&2; exit 2; }
      _want="$_want $n"
      todo="$todo $(field needs "$f")"
    done ;;
  *) usage ;;
esac

. tests/lib.sh
for f in $SECTIONS; do
  _sec=$(name_of "$f")
  if [ -n "$_want" ]; then case " $_want " in *" $_sec "*) ;; *) continue ;; esac
  elif [ "$(field default "$f")" = no ]; then continue; fi
  _sec_t0=$(date +%s)
  . "./$f"
  cd "$TOP"
  echo "   ($_sec: $(( $(date +%s) - _sec_t0 )) s)"
done
echo
if [ $skip -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ $fail -eq 0 ]
