# tests/sections/28-bad-input-compiler.sh — bad input to the compiler, by ./fluxcc and the sanitizer build (tests/bad-input-compiler.sh)
# needs:
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
HOSTILE_IN_RUN=1 . tests/bad-input-compiler.sh   # issue 11: arithmetic and shapes, unbounded work, files that are not files, floods, small lies
