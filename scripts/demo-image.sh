#!/bin/sh
# scripts/demo-image.sh [OUT.png] [PROMPT] — prompt to PNG with the tiny pipeline on
# the CPU (`make demo-image`): the four programs of examples/pipeline-tiny/ (T5, CLIP,
# FLUX [schnell], the autoencoder's decoder), each compiled by fluxcc (--opt hc, the C
# target) into its own project, chained through safetensors files:
#   T5 and CLIP: ./flux --prompt through their tokenizers (CLIP's real vocabulary from
#     tests/data; a T5-style SentencePiece model trained here by spm_train);
#   FLUX: ./flux --steps 4 from seeded noise, T5's `hidden` as `txt`, CLIP's `pooled`
#     as `y` (--input), writing the packed `latents`;
#   the decoder: unpacks them and decodes, ./flux --png.
# Random tiny weights stand in for FLUX.1's: the image is noise, and says so. One
# binary holding every program is open work (issue 21). DEMO_DIR (build/demo-image)
# holds the projects and files; SEED (0) seeds the noise.
set -eu
OUT=${1:-build/demo-image.png}
P=${2:-"a photo of an astronaut riding a horse on the moon, 35mm film"}
D=${DEMO_DIR:-build/demo-image}
SEED=${SEED:-0}
for c in python3 spm_train; do
  command -v $c >/dev/null 2>&1 || { echo "demo-image: needs $c (sh scripts/deps.sh test installs it)" >&2; exit 2; }
done
[ -x ./fluxcc ] || { echo "demo-image: build fluxcc first (make fluxcc)" >&2; exit 2; }
mkdir -p "$D/tokenizer_2"
ms() { date +%s%3N; }
t0=$(ms)
python3 tests/clip_vocab.py tests/data/clip-bpe-16e6.txt.gz "$D/tokenizer"
python3 -c "import json; c = json.load(open('tests/data/clip-tokens.json', encoding='utf-8'))['cases']
open('$D/corpus.txt', 'w', encoding='utf-8').write(chr(10).join(' '.join(x['prompt'].split()) for x in c if x['prompt'].strip()))"
spm_train --input="$D/corpus.txt" --model_prefix="$D/tokenizer_2/spiece" --model_type=unigram --vocab_size=600 \
  --character_coverage=0.9999 --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --normalization_rule_name=nmt_nfkc \
  --num_threads=1 --minloglevel=2 >/dev/null 2>&1
t1=$(ms)
for s in t5 clip flux vae; do
  ./fluxcc examples/pipeline-tiny/$s.fdsl --opt hc --target c -o "$D/$s" >/dev/null
  make -s -C "$D/$s" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
done
t2=$(ms)
"$D/t5/flux" --quiet --random-weights 1 --prompt "$P" --tokenizer "$D/tokenizer_2" --out "$D/t5.safetensors"
t3=$(ms)
"$D/clip/flux" --quiet --random-weights 2 --prompt "$P" --tokenizer "$D/tokenizer" --out "$D/clip.safetensors"
t4=$(ms)
"$D/flux/flux" --random-weights 3 --random-inputs "$SEED" --input "txt=$D/t5.safetensors:hidden" \
  --input "y=$D/clip.safetensors:pooled" --steps 4 --out "$D/latents.safetensors" | grep -E '^(sampling|step|sampled)'
t5=$(ms)
"$D/vae/flux" --quiet --random-weights 4 --input "latents=$D/latents.safetensors" --png "$OUT"
t6=$(ms)
echo "stages: tokenizer files $((t1 - t0)) ms, compile and build four projects $((t2 - t1)) ms;"
echo "        T5 $((t3 - t2)) ms, CLIP $((t4 - t3)) ms, FLUX 4 steps $((t5 - t4)) ms, decode + PNG $((t6 - t5)) ms"
echo "demo-image: wrote $OUT for \"$P\": NOISE from random tiny weights standing in for FLUX.1's (the pipeline's path, not its picture)"
