#!/bin/sh
# scripts/demo-image.sh [OUT.png] [PROMPT] — prompt to PNG with the tiny pipeline on
# the CPU (`make demo-image`): the four models of examples/pipeline-tiny/ (T5, CLIP,
# FLUX [schnell], the autoencoder's decoder) compiled by `fluxcc pipeline` (--opt hc,
# the C target) into one project, whose one binary runs
#   ./flux --model-dir M --prompt P --seed S -o OUT.png
# from a checkpoint folder of the Hugging Face layout FLUX.1's repositories have,
# with random tiny weights (fluxcc init) where each model's checkpoint() says, CLIP's
# tokenizer with its real vocabulary (tests/data) and a T5-style SentencePiece model
# trained here by spm_train: every stage reads it as it would the real checkpoint.
# Random tiny weights stand in for FLUX.1's: the image is noise, and says so.
# DEMO_DIR (build/demo-image) holds the project and files; SEED (0) seeds the noise;
# each stage's outputs are kept in DEMO_DIR/stages/NAME.safetensors.
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
P_=examples/pipeline-tiny
./fluxcc pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/vae.fdsl --opt hc --target c \
  -o "$D/pipeline" --quiet >/dev/null
make -s -C "$D/pipeline" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
t2=$(ms)
"$D/pipeline/flux" --model-dir "$M" --prompt "$P" --seed "$SEED" --stages "$D/stages" -o "$OUT" | grep -E '^(==|prompt|sampling|step|stages|memory:   [0-9.]* MiB of device memory for every stage)'
t3=$(ms)
echo "demo-image: the checkpoint folder (tokenizers, weights) $((t1 - t0)) ms, compile and build the pipeline $((t2 - t1)) ms, run $((t3 - t2)) ms"
echo "demo-image: wrote $OUT for \"$P\": NOISE from random tiny weights standing in for FLUX.1's (the pipeline's path, not its picture)"
