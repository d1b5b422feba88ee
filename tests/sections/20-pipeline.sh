# tests/sections/20-pipeline.sh — the tiny pipeline, prompt to PNG: T5, CLIP, FLUX sampling, the decoder (examples/pipeline-tiny: one binary, and chained by --input)
# needs: reference opencl tokenizers
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== the tiny pipeline, prompt to PNG: T5, CLIP, FLUX sampling, the decoder (examples/pipeline-tiny: one binary, and chained by --input)"
PD=$T/pipe
if [ -n "$PY" ] && command -v spm_train >/dev/null; then
  check "scripts/demo-image.sh (make demo-image): fluxcc pipeline, one binary, a prompt through both tokenizers to a PNG that says it is noise" sh -c "
    DEMO_DIR=$PD sh scripts/demo-image.sh $T/pipe.png 'a red cube on a glass table' > $T/pipe.log 2>&1 &&
    grep -q 'demo-image: wrote .*pipe.png for \"a red cube on a glass table\": NOISE from random tiny weights' $T/pipe.log &&
    grep -q '^step 4/4' $T/pipe.log && grep -q '^stages:   t5 .*, clip .*, transformer .*, vae .* ms in all' $T/pipe.log &&
    grep -q '^memory:   [0-9.]* MiB of device memory for every stage, as clip needs' $T/pipe.log && test -s $T/pipe.png"
  sed 's/^/     /' "$T/pipe.log" | grep -E '^     (stages|memory|demo-image: the)'
  # the same four models as four projects, chained by files: each stage checked on its own below
  for s in t5 clip flux vae; do
    "$FLUXCC" examples/pipeline-tiny/$s.fdsl --opt hc --target c -o "$PD/$s" >/dev/null && make -s -C "$PD/$s" -j2 >/dev/null 2>&1
  done
  M=$PD/model P='a red cube on a glass table'
  "$PD/t5/flux" --quiet --model-dir "$M" --prompt "$P" --out "$PD/t5.safetensors"
  "$PD/clip/flux" --quiet --model-dir "$M" --prompt "$P" --out "$PD/clip.safetensors"
  "$PD/flux/flux" --quiet --model-dir "$M" --random-inputs 0 --input "txt=$PD/t5.safetensors:hidden" \
    --input "y=$PD/clip.safetensors:pooled" --steps 4 --out "$PD/latents.safetensors"
  "$PD/vae/flux" --quiet --model-dir "$M" --input "latents=$PD/latents.safetensors" --png "$T/pipe-chain.png"
  check "pipeline: the one binary's stages = the four projects chained by --input, byte for byte (T5, CLIP, latents, PNG)" sh -c "
    cmp $PD/stages/t5.safetensors $PD/t5.safetensors && cmp $PD/stages/clip.safetensors $PD/clip.safetensors &&
    cmp $PD/stages/transformer.safetensors $PD/latents.safetensors && cmp $T/pipe.png $T/pipe-chain.png &&
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st; assert sorted(st.load('$PD/stages/vae.safetensors')) == ['image']\""
  PB=$PD/pipeline/flux P_=examples/pipeline-tiny
  check "pipeline: the same --seed, the same PNG; another seed, other latents; --random-weights and random token ids without a checkpoint" sh -c "
    $PB --quiet --model-dir $M --prompt '$P' --seed 0 -o $T/pipe-again.png && cmp $T/pipe.png $T/pipe-again.png &&
    $PB --quiet --model-dir $M --prompt '$P' --seed 1 --stages $T/pipe-s1 && ! cmp -s $T/pipe-s1/transformer.safetensors $PD/latents.safetensors &&
    $PB --random-weights 5 --seed 2 --steps 2 > $T/pipe-rand.log && grep -q '^step 2/2' $T/pipe-rand.log && grep -q 'weights:  random, seed 5' $T/pipe-rand.log"
  check "pipeline: one device memory for every stage, opened before the first: the largest stage's (weights, inputs and arena), named" sh -c "
    awk '/^memory:   [0-9.]* MiB of device memory for every stage, as /{m = \$2; who = \$11; n++; if (st) exit 1}
         /^== /{st = \$2; sub(\":\", \"\", st)} /^memory:   params .* MiB in all\$/{if (\$(NF-3) + 0 > max) {max = \$(NF-3) + 0; big = st}; k++}
         END {exit !(n == 1 && k == 4 && m + 0 == max && who == big)}' $T/pipe-rand.log"
  check "pipeline: the project is a folder per program (kernels, schedule.c, records.json) and pipeline.c; kernel symbols carry the program's name" sh -c "
    for s in t5 clip transformer vae; do test -f $PD/pipeline/\$s/schedule.c && test -f $PD/pipeline/\$s/records.json && ls $PD/pipeline/\$s/kernels/*.c >/dev/null &&
      grep -q \"rt_schedule_\$s = \" $PD/pipeline/\$s/schedule.c || exit 1; done &&
    ! grep -h '_launch(void' $PD/pipeline/t5/kernels/*.c | grep -v '^void t5_' | grep -q . &&
    grep -q '{\"latents\", 2, \"latents\"}' $PD/pipeline/pipeline.c && $FLUXCC report $PD/pipeline/clip >/dev/null"
  check "pipeline on the other targets: the CUDA text on the emulator (make emu) and OpenCL on PoCL = the C binary, each stage (f32 1e-5, bf16 latents 2e-2)" sh -c "
    $PB --quiet --seed 3 --stages $T/pst-c &&
    for t in cuda opencl; do
      $FLUXCC pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/vae.fdsl --opt hc --target \$t -o $T/pipe-\$t --quiet >/dev/null || exit 1
      if [ \$t = cuda ]; then make -s -C $T/pipe-cuda -j2 emu >/dev/null 2>&1 && b=$T/pipe-cuda/flux-emu; else make -s -C $T/pipe-opencl >/dev/null 2>&1 && b=$T/pipe-opencl/flux; fi || exit 1
      \$b --quiet --seed 3 --stages $T/pst-\$t || exit 1
      for s in t5 clip; do $PY tests/reference/compare.py $T/pst-\$t/\$s.safetensors $T/pst-c/\$s.safetensors --tol 1e-5 >/dev/null || exit 1; done
      for s in transformer vae; do $PY tests/reference/compare.py $T/pst-\$t/\$s.safetensors $T/pst-c/\$s.safetensors --tol 2e-2 >/dev/null || exit 1; done
    done"
  check "pipeline searched (--opt beam, every 2nd candidate made wrong by FLUXCC_FAULT): each program's records consistent, wrong ones rejected; the binary = the hc one, each stage" sh -c "
    FLUXCC_FAULT=wrong-every=2 $FLUXCC pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/vae.fdsl --opt beam \
      --budget 2 --beam 2 --no-cache --target c -o $T/pipe-beam --quiet > /dev/null 2>&1 &&
    for s in t5 clip transformer vae; do grep -q '\"method\":[[:space:]]*\"beam\"' $T/pipe-beam/\$s/records.json &&
      $PY tests/check_records.py $T/pipe-beam/\$s --expect-wrong > /dev/null || exit 1; done &&
    make -s -C $T/pipe-beam -j2 >/dev/null 2>&1 && $T/pipe-beam/flux --quiet --seed 3 --stages $T/pst-beam &&
    for s in t5 clip; do $PY tests/reference/compare.py $T/pst-beam/\$s.safetensors $T/pst-c/\$s.safetensors --tol 1e-5 >/dev/null || exit 1; done &&
    for s in transformer vae; do $PY tests/reference/compare.py $T/pst-beam/\$s.safetensors $T/pst-c/\$s.safetensors --tol 2e-2 >/dev/null || exit 1; done"
  check "pipeline with FLUX.1 [dev] (pipeline-tiny/flux-dev.fdsl, guidance): --steps 3 --guidance 4 = the dev project chained by --input, byte for byte; 50 steps by default" sh -c "
    $FLUXCC init $P_/flux-dev.fdsl --seed 3 --weights $M/flux1-dev.safetensors --inputs $T/pdev.unused --quiet &&
    $FLUXCC pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux-dev.fdsl --vae $P_/vae.fdsl --opt hc --target c -o $PD/pdev --quiet >/dev/null &&
    make -s -C $PD/pdev -j2 >/dev/null 2>&1 && $FLUXCC $P_/flux-dev.fdsl --opt hc --target c -o $PD/fdev >/dev/null && make -s -C $PD/fdev -j2 >/dev/null 2>&1 &&
    $PD/pdev/flux --model-dir $M --prompt '$P' --seed 0 --steps 3 --guidance 4 --stages $T/pdev -o $T/pdev.png > $T/pdev.log &&
    grep -q 'sampling: 3 steps, schedule shifted (dev), guidance 4' $T/pdev.log &&
    $PD/fdev/flux --quiet --model-dir $M --random-inputs 0 --input txt=$PD/t5.safetensors:hidden --input y=$PD/clip.safetensors:pooled \
      --steps 3 --guidance 4 --out $T/fdev.lat && cmp $T/fdev.lat $T/pdev/transformer.safetensors &&
    ! cmp -s $T/pdev/transformer.safetensors $PD/latents.safetensors &&
    $PD/pdev/flux --model-dir $M --prompt '$P' > $T/pdev50.log && grep -q 'sampling: 50 steps, schedule shifted (dev), guidance 3.5' $T/pdev50.log &&
    grep -q '^step 50/50' $T/pdev50.log"
  expect_fail "pipeline binary: another resolution: exit 2, says the binary's and that it is a compile-time constant" \
    "this binary makes 8x8 images: the resolution (and the token counts) are compile-time constants" "$PB" --width 1024 --height 1024
  check "fluxcc pipeline with the real models (T5-XXL 256 and 512 tokens, CLIP-L, FLUX.1 schnell and dev at 768², the decoder): they fit, the projects are written" sh -c "
    $FLUXCC pipeline --t5 examples/t5-encoder.fdsl --clip examples/clip-text.fdsl --transformer examples/flux.fdsl \
      --vae examples/vae-decoder-packed.fdsl --opt hc -o $T/pfull --quiet >/dev/null && test -f $T/pfull/transformer/schedule.c &&
    $FLUXCC pipeline --t5 examples/t5-encoder-dev.fdsl --clip examples/clip-text.fdsl --transformer examples/flux-dev.fdsl \
      --vae examples/vae-decoder-packed.fdsl --opt hc -o $T/pfull --quiet >/dev/null && grep -q 'flux-dev.fdsl' $T/pfull/pipeline.c &&
    { $FLUXCC pipeline --t5 examples/t5-encoder.fdsl --clip examples/clip-text.fdsl --transformer examples/flux-dev.fdsl \
      --vae examples/vae-decoder-packed.fdsl --opt hc -o $T/pfull2 > $T/pfull2.err 2>&1; test \$? -eq 1; } &&
    grep -q \"its input 'txt' is bf16\\[1,512,4096\\], but --t5 .*t5-encoder.fdsl's 'hidden' is bf16\\[1,256,4096\\]\" $T/pfull2.err"
  mkdir -p "$T/m5/text_encoder"
  check "pipeline binary: --model-dir missing files: every one named before anything runs, exit 2" sh -c "
    $PB --model-dir $T/m5 --prompt 'a cat' -o $T/bad.png > $T/m5.out 2> $T/m5.err; test \$? -eq 2 &&
    grep -q 'no text_encoder_2/model.safetensors' $T/m5.err && grep -q 'no text_encoder/model.safetensors' $T/m5.err &&
    grep -q 'no flux1-schnell.safetensors' $T/m5.err && grep -q 'no ae.safetensors' $T/m5.err && grep -q 'no folder tokenizer_2' $T/m5.err &&
    ! grep -q '^== ' $T/m5.out && test ! -e $T/bad.png"
  check "pipeline binary: -o into a missing folder, -o '': refused before the first stage runs (exit 2); --guidance 1e300 for dev's bf16 input too" sh -c "
    { $PB --model-dir $M --prompt 'a cat' -o $T/nodir/x.png > $T/o1.out 2> $T/o1.err; test \$? -eq 2; } && grep -q '^flux: error: -o .*nodir/x.png: its folder' $T/o1.err &&
    { $PB --model-dir $M --prompt 'a cat' -o '' > $T/o2.out 2> $T/o2.err; test \$? -eq 2; } && grep -q 'an empty path' $T/o2.err &&
    { $PD/pdev/flux --model-dir $M --prompt 'a cat' --guidance 1e300 -o $T/g.png > $T/o3.out 2> $T/o3.err; test \$? -eq 2; } &&
    grep -q \"guidance 1e+300: beyond the range of the model's .guidance. input (BF16)\" $T/o3.err &&
    ! grep -q '^== ' $T/o1.out $T/o2.out $T/o3.out && test ! -e $T/g.png"
  check "pipeline binary: an edited kernel file of a later stage is refused by name before any stage runs (exit 2); --allow-edited runs it" sh -c "
    f=\$(ls $PD/pipeline/transformer/kernels/*.c | head -1) && cp \$f $T/kept.c && echo '// edited' >> \$f &&
    { $PB > $T/ed.out 2> $T/ed.err; test \$? -eq 2; } && grep -q 'transformer/kernels/.* is not the file fluxcc wrote' $T/ed.err && ! grep -q '^== ' $T/ed.out &&
    $PB --quiet --allow-edited 2> $T/ed2.err && test \$(grep -c 'warning: .*transformer/kernels' $T/ed2.err) -eq 1; rc=\$?; cp $T/kept.c \$f; exit \$rc"
  expect_fail "pipeline binary: a single program's option (--weights): exit 2, says it is a pipeline" "this binary is a pipeline (fluxcc pipeline)" \
    "$PB" --weights "$M/ae.safetensors"
  expect_fail "pipeline binary: --guidance for a model without a guidance input: exit 2" "the sampled model has no .guidance. input" "$PB" --guidance 4
  expect_fail "pipeline binary: --prompt without --model-dir: exit 2" "prompt needs --model-dir M" "$PB" --prompt "a cat"
  expect_fail "pipeline binary: --seed not a number: exit 2" "seed wants a decimal integer" "$PB" --seed 1x
  check "fluxcc pipeline: stages that do not fit (CLIP as T5, FLUX as the decoder): each misfit said with both shapes, exit 1, nothing written" sh -c "
    $FLUXCC pipeline --t5 $P_/clip.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/flux.fdsl --opt hc -o $T/pbad > $T/pbad.out 2> $T/pbad.err
    test \$? -eq 1 && grep -q \"its input 'txt' is bf16\\[1,128,32\\], but --t5 .*clip.fdsl's 'hidden' is f32\\[1,77,32\\]: the stages do not fit\" $T/pbad.err &&
    grep -q \"the autoencoder's decoder needs an output 'image'\" $T/pbad.err && test ! -e $T/pbad && ! ls $T | grep -q pbad.fluxcc-"
  expect_fail "fluxcc pipeline without --vae: exit 2, names the stage" "pipeline needs --vae MODEL.fdsl" \
    "$FLUXCC" pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --opt hc -o "$T/pbad"
  expect_fail "fluxcc: --t5 outside pipeline: exit 2" "are for fluxcc pipeline" "$FLUXCC" $P_/t5.fdsl --t5 $P_/t5.fdsl --opt hc -o "$T/pbad"
  check "fluxcc pipeline: a write failing (the 3rd, the 150th, the last) leaves the old project whole and no staging folder" sh -c "
    cp -r $PD/pipeline $T/pipe-old && $FLUXCC pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/vae.fdsl \
      --opt raw --target c -o $T/pipe-count --quiet >/dev/null && n=\$(find $T/pipe-count -type f | wc -l) &&
    for i in 3 150 \$n; do
      FLUXCC_FAULT=write-fail=\$i $FLUXCC pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/vae.fdsl --opt raw \
        --target c -o $PD/pipeline --quiet >/dev/null 2>$T/pw.err; test \$? -eq 2 && grep -q 'No space left on device' $T/pw.err || exit 1
      diff -r $T/pipe-old $PD/pipeline >/dev/null && ! ls $PD | grep -q 'pipeline.fluxcc-' || exit 1
    done"
  # each stage's file against the interpreter on the same weights (fluxcc init --seed = --random-weights) and the prompt's ids
  check "pipeline: T5's and CLIP's outputs = the interpreter on the prompt's ids (tokenizer_check) within 1e-5" sh -c "
    $T/tokchk t5 $PD/model/tokenizer_2 -p 'a red cube on a glass table' 128 > $T/pipe5.ids && $T/tokchk clip $PD/model/tokenizer -p 'a red cube on a glass table' > $T/pipec.ids &&
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
for k in '5c': st.save('$T/pipe%s.i' % k, {'tokens': np.array([[float(x) for x in open('$T/pipe%s.ids' % k).read().split()[1:]]], dtype=np.float32)})\" &&
    $FLUXCC init examples/pipeline-tiny/t5.fdsl --seed 1 --weights $T/pipe5.w --inputs $T/pipe.unused --quiet &&
    $FLUXCC run examples/pipeline-tiny/t5.fdsl --weights $T/pipe5.w --inputs $T/pipe5.i -o $T/pipe5.o --quiet &&
    $PY tests/reference/compare.py $PD/t5.safetensors $T/pipe5.o --tol 1e-5 &&
    $FLUXCC init examples/pipeline-tiny/clip.fdsl --seed 2 --weights $T/pipec.w --inputs $T/pipe.unused --quiet &&
    $FLUXCC run examples/pipeline-tiny/clip.fdsl --weights $T/pipec.w --inputs $T/pipec.i -o $T/pipec.o --quiet &&
    $PY tests/reference/compare.py $PD/clip.safetensors $T/pipec.o --tol 1e-5"
  check "pipeline: FLUX with --input txt=T5:hidden --input y=CLIP:pooled = the same inputs merged into one --inputs file, byte for byte" sh -c "
    $FLUXCC init examples/pipeline-tiny/flux.fdsl --seed 0 --weights $T/pipef.unused --inputs $T/pipef.rand --quiet &&
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
i = st.load('$T/pipef.rand'); i['txt'] = st.load('$PD/t5.safetensors')['hidden'].astype(np.float32)
i['y'] = st.load('$PD/clip.safetensors')['pooled'].astype(np.float32); st.save('$T/pipef.i', {k: np.asarray(v, np.float32) for k, v in i.items()})\" &&
    $PD/flux/flux --quiet --random-weights 3 --inputs $T/pipef.i --steps 4 --out $T/pipef.lat && cmp $T/pipef.lat $PD/latents.safetensors &&
    $PD/flux/flux --quiet --random-weights 3 --random-inputs 0 --input txt=$PD/t5.safetensors:hidden --steps 4 --out $T/pipef.lat2 &&
    ! cmp -s $T/pipef.lat2 $PD/latents.safetensors"
  check "pipeline: the decoder from packed latents = vae-decoder-tiny from the latents unpacked in NumPy (BFL's rearrange), and the PNG = its image" sh -c "
    $FLUXCC init examples/pipeline-tiny/vae.fdsl --seed 4 --weights $T/pipev.w --inputs $T/pipe.unused --quiet &&
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
l = np.asarray(st.load('$PD/latents.safetensors')['latents'], np.float32)   # bf16 [1, h*w, c*2*2], as BFL's .float()
z = l.reshape(1, 2, 2, 16, 2, 2).transpose(0, 3, 1, 4, 2, 5).reshape(1, 16, 4, 4)
st.save('$T/pipev.l', {'latents': l}); st.save('$T/pipev.z', {'z': z})\" &&
    $FLUXCC run examples/pipeline-tiny/vae.fdsl --weights $T/pipev.w --inputs $T/pipev.l -o $T/pipev.o --quiet &&
    $FLUXCC run examples/vae-decoder-tiny.fdsl --weights $T/pipev.w --inputs $T/pipev.z -o $T/pipev.oz --quiet && cmp $T/pipev.o $T/pipev.oz &&
    $PD/vae/flux --quiet --random-weights 4 --input latents=$PD/latents.safetensors --check $T/pipev.o --out $T/pipev.img &&
    $PY tests/reference/png_check.py $T/pipe.png $T/pipev.img"
  check "pipeline: --inputs without txt and y, --input giving them: runs, = the chain's latents" sh -c "
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st
i = st.load('$T/pipef.rand'); del i['txt'], i['y']; st.save('$T/pipef.part', i)\" &&
    $PD/flux/flux --quiet --random-weights 3 --inputs $T/pipef.part --input txt=$PD/t5.safetensors:hidden --input y=$PD/clip.safetensors:pooled \
      --steps 4 --out $T/pipef.lat3 && cmp $T/pipef.lat3 $PD/latents.safetensors"
  check "--model-dir with T5's weights in two shards and their index (as FLUX.1's repositories hold them): the same output" sh -c "
    mkdir -p $T/m2/text_encoder_2 && cp -r $PD/model/tokenizer_2 $T/m2/ &&
    $PY -c \"import sys, json; sys.path.insert(0, 'tests/reference'); import st
w = st.load('$PD/model/text_encoder_2/model.safetensors'); k = sorted(w); h = len(k) // 2
n = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']
st.save('$T/m2/text_encoder_2/' + n[0], {x: w[x] for x in k[:h]}); st.save('$T/m2/text_encoder_2/' + n[1], {x: w[x] for x in k[h:]})
json.dump({'weight_map': {x: n[i >= h] for i, x in enumerate(k)}}, open('$T/m2/text_encoder_2/model.safetensors.index.json', 'w'))\" &&
    $PD/t5/flux --model-dir $T/m2 --prompt 'a red cube on a glass table' --out $T/m2.o > $T/m2.log && cmp $T/m2.o $PD/t5.safetensors &&
    grep -q 'weights:  .*text_encoder_2/model.safetensors.index.json' $T/m2.log"
  expect_fail "--model-dir for a model without checkpoint(): exit 2, says what to give" "does not say where its weights are in a checkpoint (checkpoint() in its .fdsl); give --weights" \
    "$T/hc_flux-tiny/flux" --model-dir "$PD/model" --out "$T/bad.o"
  expect_fail "--model-dir without the weights file: exit 2, both names tried" "no text_encoder_2/model.safetensors (nor text_encoder_2/model.safetensors.index.json for shards)" \
    "$PD/t5/flux" --model-dir "$T/m3" --prompt "a cat" --out "$T/bad.o"
  mkdir -p "$T/m4/text_encoder" && cp "$PD/model/text_encoder/model.safetensors" "$T/m4/text_encoder/"
  expect_fail "--model-dir without the tokenizer folder: exit 2, named" "no folder tokenizer: the tokenizer of clip.fdsl" \
    "$PD/clip/flux" --model-dir "$T/m4" --prompt "a cat" --out "$T/bad.o"
  expect_fail "--model-dir with --weights: exit 2" "model-dir gives the weights" "$PD/clip/flux" --model-dir "$T/m4" --weights "$T/m4/text_encoder/model.safetensors"
  expect_fail "--input of an input the model lacks: exit 2, its inputs listed" "has no input 'text'; its inputs: img img_ids txt txt_ids timesteps y" \
    "$PD/flux/flux" --input "text=$PD/t5.safetensors:hidden" --out "$T/bad.o"
  expect_fail "--input from a tensor of another shape: both shapes named" "'pooled' is F32\\[1,32\\]; the input 'txt' is bf16\\[1,128,32\\]" \
    "$PD/flux/flux" --input "txt=$PD/clip.safetensors:pooled" --out "$T/bad.o"
  expect_fail "--input from a tensor the file lacks: file and tensor named" "t5.safetensors has no tensor 'pooled'" \
    "$PD/flux/flux" --input "y=$PD/t5.safetensors:pooled" --out "$T/bad.o"
  expect_fail "--input without NAME=FILE: exit 2, says the form" "input wants NAME=FILE\\[:TENSOR\\]" "$PD/flux/flux" --input "$PD/t5.safetensors"
  expect_fail "--input and --prompt both giving tokens: exit 2" "the input 'tokens' is given twice (--input and --prompt)" \
    "$PD/clip/flux" --input "tokens=$T/pipec.i" --prompt "a cat" --tokenizer "$PD/model/tokenizer" --out "$T/bad.o"
else
  bad "the tiny pipeline: needs Python with NumPy and spm_train (sh scripts/deps.sh test)"
fi
