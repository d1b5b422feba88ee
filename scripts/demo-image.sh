#!/bin/sh
# scripts/demo-image.sh [OUT.png] [PROMPT] — prompt to PNG with the tiny pipeline on
# the CPU (`make demo-image`): the four programs of examples/pipeline-tiny/ (T5, CLIP,
# FLUX [schnell], the autoencoder's decoder), each compiled by fluxcc (--opt hc, the C
# target) into its own project, chained through safetensors files:
#   a checkpoint folder of the Hugging Face layout FLUX.1's repositories have, with
#     random tiny weights (fluxcc init) where each model's checkpoint() says, CLIP's
#     tokenizer with its real vocabulary (tests/data) and a T5-style SentencePiece
#     model trained here by spm_train: every stage then reads it by --model-dir, as
#     it would the real checkpoint;
#   T5 and CLIP: ./flux --prompt through their tokenizers;
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
M=$D/model
mkdir -p "$M/tokenizer_2" "$M/text_encoder" "$M/text_encoder_2"
ms() { date +%s%3N; }
t0=$(ms)
python3 tests/clip_vocab.py tests/data/clip-bpe-16e6.txt.gz "$M/tokenizer"
python3 -c "import json; c = json.load(open('tests/data/clip-tokens.json', encoding='utf-8'))['cases']
open('$D/corpus.txt', 'w', encoding='utf-8').write(chr(10).join(' '.join(x['prompt'].split()) for x in c if x['prompt'].strip()))"
spm_train --input="$D/corpus.txt" --model_prefix="$M/tokenizer_2/spiece" --model_type=unigram --vocab_size=600 \
  --character_coverage=0.9999 --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --normalization_rule_name=nmt_nfkc \
  --num_threads=1 --minloglevel=2 >/dev/null 2>&1
seed=1
for w in t5:text_encoder_2/model clip:text_encoder/model flux:flux1-schnell vae:ae; do
  ./fluxcc init "examples/pipeline-tiny/${w%%:*}.fdsl" --seed $seed --weights "$M/${w#*:}.safetensors" --inputs "$D/unused.safetensors" --quiet
  seed=$((seed + 1))
done
t1=$(ms)
for s in t5 clip flux vae; do
  ./fluxcc examples/pipeline-tiny/$s.fdsl --opt hc --target c -o "$D/$s" >/dev/null
  make -s -C "$D/$s" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
done
t2=$(ms)
"$D/t5/flux" --quiet --model-dir "$M" --prompt "$P" --out "$D/t5.safetensors"
t3=$(ms)
"$D/clip/flux" --quiet --model-dir "$M" --prompt "$P" --out "$D/clip.safetensors"
t4=$(ms)
"$D/flux/flux" --model-dir "$M" --random-inputs "$SEED" --input "txt=$D/t5.safetensors:hidden" \
  --input "y=$D/clip.safetensors:pooled" --steps 4 --out "$D/latents.safetensors" | grep -E '^(sampling|step|sampled)'
t5=$(ms)
"$D/vae/flux" --quiet --model-dir "$M" --input "latents=$D/latents.safetensors" --png "$OUT"
t6=$(ms)
echo "stages: the checkpoint folder (tokenizers, weights) $((t1 - t0)) ms, compile and build four projects $((t2 - t1)) ms;"
echo "        T5 $((t3 - t2)) ms, CLIP $((t4 - t3)) ms, FLUX 4 steps $((t5 - t4)) ms, decode + PNG $((t6 - t5)) ms"
echo "demo-image: wrote $OUT for \"$P\": NOISE from random tiny weights standing in for FLUX.1's (the pipeline's path, not its picture)"
