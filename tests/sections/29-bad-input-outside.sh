# tests/sections/29-bad-input-outside.sh — what comes from outside: text, outputs, records and cache entries, numbers, edited kernels (tests/bad-input-outside.sh)
# needs: emu
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
HOSTILE_IN_RUN=1 . tests/bad-input-outside.sh  # issue 20: nothing from outside becomes code; outputs, records, cache entries, numbers, edited kernels
