#!/bin/sh
# scripts/bench-pipeline.sh — the text-to-image pipeline's other networks at real width
# on this machine, against their official PyTorch implementations on the same seeded
# weights and inputs, side by side: ROUNDS rounds, each the official model (torch
# eager, a median of RUNS forwards after a warm-up) then each fluxcc method's program
# (OpenCL on PoCL, ./flux --bench RUNS), so that a slow spell of the machine falls on
# both. Prints one table: per network the medians over the rounds (min-max across
# them), the speed ratio (torch ms / fluxcc ms) and the outputs' agreement.
#
#   sh scripts/bench-pipeline.sh [NETS] [METHODS] [ROUNDS] [RUNS]
#
# NETS (default "vae16 vae32 vae16x24 t5mid clip"):
#   vaeN, vaeHxW  examples/vae-decoder.fdsl (BFL's decoder, real channels) on NxN or HxW latents
#                 against BFL's Decoder (flux.modules.autoencoder from $BFL_SRC, default ../flux)
#   t5mid         examples/t5-encoder-mid.fdsl (d_model 4096, 64 heads, d_ff 10240, 256 tokens,
#                 2 blocks, f32) against transformers' T5EncoderModel
#   clip          examples/clip-text.fdsl in f32 (CLIP-L's text model whole) against CLIPTextModel
# METHODS: fluxcc methods (default hc); a searched one (beam, rl, ...) searches first, cold.
# Needs torch, transformers (t5, clip) and BFL's code (vae); never vendored here.
set -eu
NETS=${1:-vae16 vae32 vae16x24 t5mid clip}
METHODS=${2:-hc}
ROUNDS=${3:-3}
RUNS=${4:-3}
BFL=${BFL_SRC:-../flux}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
med() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s-%s", lo, hi}'; }

echo "| network | size | torch eager ms | fluxcc method | fluxcc ms | speed (torch ms / fluxcc ms) | rel L2 vs torch |"
echo "|---|---|---|---|---|---|---|"
for net in $NETS; do
  d=$W/$net
  mkdir -p "$d"
  case $net in
    vae*)
      hw=${net#vae}; lh=${hw%x*}; lw=${hw#*x}
      sed "s/^const LH = .*/const LH = $lh/; s/^const LW = .*/const LW = $lw/" examples/vae-decoder.fdsl > "$d/m.fdsl"
      cp examples/vae-decoder-model.fdsl "$d/"
      torch="vae --bfl-src $BFL" size="${lh}x$lw latents, $((lh * 8))x$((lw * 8)) image" tol=1e-4 ;;
    t5mid)
      cp examples/t5-encoder-mid.fdsl "$d/m.fdsl"; cp examples/t5-encoder-model.fdsl "$d/"
      torch="t5 --heads 64" size="256 tokens, 2 blocks" tol=1e-4 ;;
    clip)
      sed 's/^const DT = .*/const DT = f32/' examples/clip-text.fdsl > "$d/m.fdsl"; cp examples/clip-text-model.fdsl "$d/"
      torch="clip --heads 12" size="77 tokens, 12 layers" tol=1e-4 ;;
    *) echo "bench-pipeline: unknown network '$net' (vaeN, vaeHxW, t5mid, clip)" >&2; exit 2 ;;
  esac
  ./fluxcc init "$d/m.fdsl" --seed 7 --weights "$d/w.st" --inputs "$d/i.st" --quiet
  for m in $METHODS; do
    ./fluxcc "$d/m.fdsl" --opt "$m" --target opencl --no-cache --quiet -o "$d/p_$m" >/dev/null 2>&1
    make -s -C "$d/p_$m" >/dev/null 2>&1
    "$d/p_$m/flux" --quiet --weights "$d/w.st" --inputs "$d/i.st" --out "$d/o_$m.st"   # PoCL builds the kernels
  done
  for r in $(seq "$ROUNDS"); do
    # torch: the reference (and the agreement, first round) and RUNS timed forwards
    outs=""
    [ "$r" = 1 ] && for m in $METHODS; do outs="$outs $d/o_$m.st"; done
    # shellcheck disable=SC2086
    python3 scripts/check-torch.py $torch --weights "$d/w.st" --inputs "$d/i.st" --runs "$RUNS" --tol "$tol" $outs > "$d/torch.log" 2>&1 || true
    ms=$(sed -n 's/.*eager forward median \([0-9.]*\) ms.*/\1/p' "$d/torch.log")
    [ -n "$ms" ] || { echo "bench-pipeline: torch did not run for $net:" >&2; cat "$d/torch.log" >&2; exit 2; }
    echo "$ms" >> "$d/torch.ms"
    [ "$r" = 1 ] && cp "$d/torch.log" "$d/agree.log"
    for m in $METHODS; do
      "$d/p_$m/flux" --weights "$d/w.st" --inputs "$d/i.st" --bench "$RUNS" > "$d/flux.log"
      sed -n 's/^bench: *median \([0-9.]*\) ms.*/\1/p' "$d/flux.log" >> "$d/$m.ms"
    done
  done
  tms=$(med < "$d/torch.ms")
  for m in $METHODS; do
    fms=$(med < "$d/$m.ms")
    err=$(grep "o_$m.st" "$d/agree.log" | sed 's/.*rel_l2 \([0-9.e+-]*\).*/\1/' | sort -g | tail -1)
    echo "| $net | $size | $tms ($(range < "$d/torch.ms")) | $m | $fms ($(range < "$d/$m.ms")) | $(echo "$tms / $fms" | bc -l | cut -c1-5) | ${err:-?} |"
  done
done
echo
echo "(medians over $ROUNDS rounds of a median of $RUNS forwards each, min-max across the rounds in parentheses;"
echo " fluxcc: ./flux --bench, OpenCL profiling events on PoCL; torch: wall clock, $(python3 -c 'import torch; print(torch.get_num_threads())') threads; $(nproc) cores)"
