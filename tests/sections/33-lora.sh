# tests/sections/33-lora.sh — LoRA files (./flux --lora): kohya, BFL and diffusers keys merged at load = the interpreter on weights merged by NumPy
# needs: reference opencl
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== LoRA files (./flux --lora): kohya, BFL and diffusers keys merged at load = the interpreter on weights merged by NumPy"
# tests/reference/lora_ref.py makes the files (random A, B, alpha) and merges
# them into the weights with its own key mapping; the interpreter runs on
# those, ./flux merges as it uploads (runtime/lora.c)
if [ -n "$PY" ]; then
  LR="$PY tests/reference/lora_ref.py"
  for m in flux-tiny-f32 flux-tiny; do
    check "$m: compile hc --target c" sh -c "$FLUXCC examples/$m.fdsl --opt hc --target c -o $T/lc_$m >/dev/null && make -s -j2 -C $T/lc_$m >/dev/null 2>&1"
    case $m in *f32) dt=F32 ;; *) dt=BF16 ;; esac
    for l in kohya bfl bfl-prefixed diffusers; do
      $LR make "$T/$m.w" "$T/$m.$l.lora" --layout $l --seed 3 --dtype $dt
      $LR merge "$T/$m.w" "$T/$m.$l.mw" "$T/$m.$l.lora"
      "$FLUXCC" run examples/$m.fdsl --quiet --weights "$T/$m.$l.mw" --inputs "$T/$m.i" -o "$T/$m.$l.ro"
      for b in hc_$m lc_$m; do
        check "$m: $l LoRA, $b: ./flux --lora = interpreter on NumPy-merged weights (f32 1e-5 / bf16 2e-2 rel L2); without it the check fails" sh -c "
          $T/$b/flux --quiet --weights $T/$m.w --inputs $T/$m.i --lora $T/$m.$l.lora --check $T/$m.$l.ro --out $T/$b.$l.o &&
          $T/$b/flux --quiet --weights $T/$m.w --inputs $T/$m.i --check $T/$m.$l.ro > /dev/null; test \$? -eq 1"
      done
    done
    check "$m: the LoRA merged at load = the same binary on NumPy's merged weights file (rel L2 1e-6)" sh -c "
      for l in kohya diffusers; do $T/lc_$m/flux --quiet --weights $T/$m.$l.mw --inputs $T/$m.i --out $T/$m.$l.mo &&
        $PY tests/reference/compare.py $T/lc_$m.$l.o $T/$m.$l.mo --tol 1e-6 >/dev/null || exit 1; done"
    $LR merge "$T/$m.w" "$T/$m.two.mw" "$T/$m.kohya.lora:0.5" "$T/$m.diffusers.lora:-1.25"
    "$FLUXCC" run examples/$m.fdsl --quiet --weights "$T/$m.two.mw" --inputs "$T/$m.i" -o "$T/$m.two.ro"
    check "$m: two LoRAs at once (kohya at 0.5, diffusers at -1.25) add up = interpreter; the summary names both" sh -c "
      $T/lc_$m/flux --weights $T/$m.w --inputs $T/$m.i --lora $T/$m.kohya.lora:0.5 --lora $T/$m.diffusers.lora:-1.25 --check $T/$m.two.ro > $T/$m.two.log &&
      grep -q '^lora:     $T/$m.kohya.lora, scale 0.5: [0-9]* modules merged' $T/$m.two.log &&
      grep -q '^lora:     $T/$m.diffusers.lora, scale -1.25: [0-9]* modules merged' $T/$m.two.log"
    check "$m: scale 0 = no LoRA, bit for bit (C and PoCL)" sh -c "
      for b in lc_$m hc_$m; do
        $T/\$b/flux --quiet --weights $T/$m.w --inputs $T/$m.i --out $T/\$b.none.o &&
        $T/\$b/flux --quiet --weights $T/$m.w --inputs $T/$m.i --lora $T/$m.kohya.lora:0 --lora $T/$m.diffusers.lora:0 --out $T/\$b.zero.o &&
        cmp $T/\$b.none.o $T/\$b.zero.o || exit 1; done"
  done
  m=flux-tiny-f32
  check "$m: tc on PoCL: the BFL LoRA = interpreter; random weights too (seed 7 = fluxcc init --seed 7)" sh -c "
    $T/tc_$m/flux --quiet --weights $T/$m.w --inputs $T/$m.i --lora $T/$m.bfl.lora --check $T/$m.bfl.ro &&
    $T/tc_$m/flux --quiet --random-weights 7 --random-inputs 7 --lora $T/$m.bfl.lora --check $T/$m.bfl.ro"
  # the CUDA text on the CPU (make emu, race check on): merged on the device as the GPU binary does,
  # then tensor cores' GEMMs on the merged weights (bf16: mma.sync; f32: the tc fallback's kernels)
  for e in flux-tiny flux-tiny-f32; do
    rm -rf "$T/le_$e"
    check "$e: tc for CUDA on the emulator: the kohya and diffusers LoRAs merged at load = interpreter" sh -c "
      $FLUXCC examples/$e.fdsl --opt tc -o $T/le_$e >/dev/null && make -s -C $T/le_$e emu > $T/le_$e.log 2>&1 && ! grep -i warning $T/le_$e.log &&
      for l in kohya diffusers; do
        FLUX_EMU_RACECHECK=1 $T/le_$e/flux-emu --quiet --weights $T/$e.w --inputs $T/$e.i --lora $T/$e.\$l.lora --check $T/$e.\$l.ro || exit 1; done"
  done
  check "the weights file is never changed" sh -c "$FLUXCC init examples/$m.fdsl --quiet --seed 7 --weights $T/lw --inputs $T/li && cmp $T/lw $T/$m.w"

  # refusals: one message naming the file and key, exit 2, no output file
  $LR bad "$T/$m.w" "$T/lbad"
  F=$T/lbad
  lrun() { "$T/lc_$m/flux" --quiet --weights "$T/$m.w" --inputs "$T/$m.i" --out "$T/bad.o" "$@"; }
  expect_fail "refused: a key that names no weight" "$F/bad-unknown.safetensors: lora_unet_double_blocks_9_img_attn_qkv.lora_down.weight: names no weight of the model" lrun --lora $F/bad-unknown.safetensors
  expect_fail "refused: ranks of down and up differ" "$F/bad-rank.safetensors: lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight: down \[4,64\] and up \[192,5\] do not fit" lrun --lora $F/bad-rank.safetensors
  expect_fail "refused: down's columns are not the weight's" "bad-shape.safetensors: .*down \[4,65\] and up \[192,4\] do not fit double_blocks.0.img_attn.qkv.weight \[192,64\]" lrun --lora $F/bad-shape.safetensors
  expect_fail "refused: diffusers' to_q with all of qkv's rows" "bad-rows.safetensors: transformer.transformer_blocks.0.attn.to_q.lora_A.weight: .*(its rows 0..64): wants down \[rank, 64\] and up \[64, rank\]" lrun --lora $F/bad-rows.safetensors
  expect_fail "refused: 4-D (conv) down" "bad-conv.safetensors: .*down \[4,64,1,1\]" lrun --lora $F/bad-conv.safetensors
  expect_fail "refused: kohya without alpha" "bad-noalpha.safetensors: lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight: no lora_unet_double_blocks_0_img_attn_qkv.alpha: kohya" lrun --lora $F/bad-noalpha.safetensors
  expect_fail "refused: a NaN" "bad-nan.safetensors: lora_unet_double_blocks_0_img_attn_qkv.lora_up.weight: element 13 is not finite" lrun --lora $F/bad-nan.safetensors
  expect_fail "refused: a down without an up" "bad-noup.safetensors: lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight: a down (lora_down / lora_A) without its up" lrun --lora $F/bad-noup.safetensors
  expect_fail "refused: not a LoRA key (DoRA's dora_scale)" "bad-key.safetensors: lora_unet_double_blocks_0_img_attn_qkv.dora_scale: not a LoRA key" lrun --lora $F/bad-key.safetensors
  expect_fail "refused: an integer alpha" "bad-dtype.safetensors: lora_unet_double_blocks_0_img_attn_qkv.alpha: dtype I64" lrun --lora $F/bad-dtype.safetensors
  expect_fail "refused: alpha of two numbers" "bad-alpha.safetensors: lora_unet_double_blocks_0_img_attn_qkv.alpha: alpha is \[2\]" lrun --lora $F/bad-alpha.safetensors
  expect_fail "refused: the same rows twice in one file (kohya and BFL names)" "bad-twice.safetensors: .*its rows of double_blocks.0.img_attn.qkv.weight are also those of" lrun --lora $F/bad-twice.safetensors
  expect_fail "refused: a merged weight too large for f32" "bad-huge.safetensors: lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight: double_blocks.0.img_attn.qkv.weight \[0, 0\] becomes .* not finite in f32" lrun --lora $F/bad-huge.safetensors
  expect_fail "refused: a file with no tensors" "empty.safetensors: no tensors: not a LoRA file" lrun --lora $F/empty.safetensors
  expect_fail "refused: a missing file" "flux: error: --lora: $T/none.safetensors: " lrun --lora $T/none.safetensors
  expect_fail "refused: a good file with a bad one: the bad one named" "bad-nan.safetensors: " lrun --lora $T/$m.kohya.lora --lora $F/bad-nan.safetensors
  for s in abc nan inf '' 1e999; do
    expect_fail "refused: SCALE '$s'" "--lora wants FILE or FILE:SCALE, SCALE a finite number" lrun --lora "$T/$m.kohya.lora:$s"
  done
  expect_fail "refused: --lora-skip-unknown without --lora" "--lora-skip-unknown needs --lora" lrun --lora-skip-unknown
  check "--lora-skip-unknown: the unknown module skipped and counted, the rest merged" sh -c "
    $T/lc_$m/flux --quiet --weights $T/$m.w --inputs $T/$m.i --lora $F/bad-unknown.safetensors --lora-skip-unknown --out $T/skip.o 2> $T/skip.err &&
    grep -q 'bad-unknown.safetensors: skipped 1 module that names no weight of the model' $T/skip.err && ! cmp -s $T/skip.o $T/lc_$m.none.o"
  check "./flux --help says --lora" sh -c "$T/lc_$m/flux --help | grep -q -- '--lora FILE\[:SCALE\]'"
fi
# a pipeline's binary applies --lora to the program it samples (inputs img and timesteps), and only to it
if [ -n "$PY" ]; then
  P_=examples/pipeline-tiny PL=$T/lpipe
  check "pipeline: fluxcc pipeline (hc, C) and its transformer alone build" sh -c "
    $FLUXCC pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/vae.fdsl --opt hc --target c -o $PL/pipe --quiet >/dev/null &&
    make -s -j2 -C $PL/pipe >/dev/null 2>&1 && $FLUXCC $P_/flux.fdsl --opt hc --target c -o $PL/flux >/dev/null && make -s -j2 -C $PL/flux >/dev/null 2>&1 &&
    $FLUXCC init $P_/flux.fdsl --quiet --seed 5 --weights $PL/w --inputs $PL/i && $LR make $PL/w $PL/l.lora --layout diffusers --seed 4 --dtype BF16"
  check "pipeline: --lora changes the transformer's latents only (T5, CLIP the same); scale 0 changes nothing, bit for bit" sh -c "
    $PL/pipe/flux --quiet --random-weights 5 --seed 2 --steps 2 --stages $PL/s0 &&
    $PL/pipe/flux --quiet --random-weights 5 --seed 2 --steps 2 --stages $PL/s1 --lora $PL/l.lora:0 &&
    $PL/pipe/flux --quiet --random-weights 5 --seed 2 --steps 2 --stages $PL/s2 --lora $PL/l.lora &&
    for s in t5 clip transformer vae; do cmp $PL/s0/\$s.safetensors $PL/s1/\$s.safetensors || exit 1; done &&
    cmp $PL/s0/t5.safetensors $PL/s2/t5.safetensors && cmp $PL/s0/clip.safetensors $PL/s2/clip.safetensors &&
    ! cmp -s $PL/s0/transformer.safetensors $PL/s2/transformer.safetensors"
  check "pipeline: its transformer stage with --lora = the transformer's own binary with --lora on the same inputs, byte for byte" sh -c "
    $PL/flux/flux --quiet --random-weights 5 --random-inputs 2 --input txt=$PL/s2/t5.safetensors:hidden --input y=$PL/s2/clip.safetensors:pooled \
      --steps 2 --lora $PL/l.lora --out $PL/chain.st && cmp $PL/chain.st $PL/s2/transformer.safetensors"
  expect_fail "pipeline: a bad LoRA refused before any stage runs (no stage said, no --stages folder)" \
    "bad-rank.safetensors: lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight: down" \
    sh -c "$PL/pipe/flux --random-weights 5 --seed 2 --steps 2 --stages $PL/sbad --lora $F/bad-rank.safetensors; s=\$?
      test ! -e $PL/sbad && ! grep -q '^== ' $T/out || exit 9; exit \$s"
fi
