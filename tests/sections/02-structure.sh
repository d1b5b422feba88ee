# tests/sections/02-structure.sh — code structure: no call cycles between compiler/*.c; comments name files that exist
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== code structure: no call cycles between compiler/*.c; comments name files that exist"
if [ -n "$PY" ]; then
  mkdir -p "$T/objs"
  check "compiler/*.c: no call cycles (each helper lives with its owner; tests/check_call_cycles.py over nm)" sh -c "
    for f in compiler/*.c; do cc -std=c11 -D_GNU_SOURCE -O0 -Icompiler -Iruntime -I$B -c \$f -o $T/objs/\$(basename \$f .c).o || exit 1; done &&
    $PY tests/check_call_cycles.py $T/objs/*.o"
fi
check "every file a comment names is in the tree (tests/check-comment-paths.sh)" sh tests/check-comment-paths.sh
check "the layout map names every file of compiler/, runtime/ and templates/ (tests/check-layout.sh)" sh tests/check-layout.sh
check "the suite's sections: titled, numbered once, each needing only sections that run before it (tests/check-sections.sh)" sh tests/check-sections.sh
