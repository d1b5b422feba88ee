# tests/sections/30-pocl-builtins.sh — PoCL: every search build of this run without opencl-c.h
# needs: beam mcts rl c-target stand-in bad-input-compiler bad-input-outside
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== PoCL: every search build of this run without opencl-c.h"
check "no search build in the suite needed PoCL's opencl-c.h (templates/pocl_builtins.cl was enough)" sh -c "
  ! grep -l 'PoCL: a program built with opencl-c.h and not without it' $T/*.err"
