#!/bin/sh
# scripts/gpu-compare.sh — the full-model methods table on a GPU, in one step:
# fluxcc compare examples/flux.fdsl --target cuda. RAW is left out by default
# (one RAW forward of FLUX.1 takes minutes by design; METHODS=raw,hc,... to
# include it), so the outputs are checked against the first method's (HC's).
# Searches use --budget ${BUDGET:-24} and are cached in $B/gpu-cache, so a
# second run (or one after scripts/gpu-check.sh) only replays them.
set -eu
B=${B:-build}
export PATH="$PATH:/usr/local/cuda/bin"
make -s fluxcc
./fluxcc compare examples/flux.fdsl --target cuda --methods "${METHODS:-hc,tc,beam,mcts,best}" --budget "${BUDGET:-24}" \
  --bench "${BENCH:-5}" --cache "$B/gpu-cache" -o "$B/gpu-compare"
