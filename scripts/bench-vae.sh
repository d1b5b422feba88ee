#!/bin/sh
# scripts/bench-vae.sh — the FLUX autoencoder's decoder on this machine: fluxcc's
# compiled decoder (OpenCL on PoCL) against BFL's Decoder in PyTorch eager, side by
# side in one run, on the same seeded weights and latents, outputs compared.
#
#   sh scripts/bench-vae.sh [LATENT] [METHODS] [RUNS]     (defaults: 16 "raw hc" 3)
#
# LATENT is the latent side (the image is 8x as wide): examples/vae-decoder.fdsl's real
# channels (128, 256, 512, 512), its latent size replaced. Needs torch and a clone of
# BFL's flux (--bfl-src: $BFL_SRC, default ../flux). Prints one table: method, median
# forward ms (./flux --bench: OpenCL events; torch: wall clock), ratio to torch, and
# relative L2 error against torch's image.
set -eu
LAT=${1:-16}
METHODS=${2:-raw hc}
RUNS=${3:-3}
BFL=${BFL_SRC:-../flux}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
sed "s/^const LH = .*/const LH = $LAT/; s/^const LW = .*/const LW = $LAT/" examples/vae-decoder.fdsl > "$W/vae.fdsl"
cp examples/vae-decoder-model.fdsl "$W/"
./fluxcc init "$W/vae.fdsl" --seed 7 --weights "$W/w.st" --inputs "$W/i.st" --quiet
out=$(python3 scripts/check-torch.py vae --bfl-src "$BFL" --weights "$W/w.st" --inputs "$W/i.st" --runs "$RUNS" 2>/dev/null | head -1 || true)
tms=$(echo "$out" | sed -n 's/.*eager forward median \([0-9.]*\) ms.*/\1/p')
[ -n "$tms" ] || { echo "bench-vae: torch did not run (torch and BFL's code at \$BFL_SRC needed)"; exit 2; }
echo "| method | latent | image | forward ms (median of $RUNS) | speed vs torch (torch ms / ms) | rel L2 vs torch |"
echo "|---|---|---|---|---|---|"
echo "| torch eager (BFL Decoder) | ${LAT}x$LAT | $((LAT * 8))x$((LAT * 8)) | $tms | 1.00 | - |"
for m in $METHODS; do
  ./fluxcc "$W/vae.fdsl" --opt $m --target opencl -o "$W/p_$m" >/dev/null 2>&1
  make -s -C "$W/p_$m" >/dev/null 2>&1
  "$W/p_$m/flux" --weights "$W/w.st" --inputs "$W/i.st" --out "$W/o_$m.st" --bench "$RUNS" > "$W/log_$m"
  ms=$(sed -n 's/^bench: *median \([0-9.]*\) ms.*/\1/p' "$W/log_$m")
  err=$(python3 scripts/check-torch.py vae --bfl-src "$BFL" --weights "$W/w.st" --inputs "$W/i.st" --tol 1 "$W/o_$m.st" 2>/dev/null |
        sed -n 's/.*image: rel_l2 \([0-9.e+-]*\).*/\1/p')
  echo "| fluxcc $m (OpenCL, PoCL) | ${LAT}x$LAT | $((LAT * 8))x$((LAT * 8)) | $ms | $(echo "$tms / $ms" | bc -l | cut -c1-5) | $err |"
done
