# tests/sections/11-networks.sh — the pipeline's other networks: the autoencoder's decoder (conv2d, group_norm, upsample2x, unfold), the CLIP and T5 text encoders
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== the pipeline's other networks: the autoencoder's decoder (conv2d, group_norm, upsample2x, unfold), the CLIP and T5 text encoders"
# params_manifest MODEL TSV N TOTAL WHAT: fluxcc params = the manifest made from the official class
params_manifest() {
  check "params $1 = $5 ($3 tensors, $4 values)" sh -c "
    $FLUXCC params examples/$1 > $T/pm.tsv && grep -v '^total' $T/pm.tsv | sort > $T/pm.mine &&
    grep -v '^#' tests/data/$2 | sort > $T/pm.ref && diff $T/pm.mine $T/pm.ref &&
    test \$(wc -l < $T/pm.mine) -eq $3 && grep -qx 'total	$4' $T/pm.tsv"
}
# net_check N MODEL NOTE REF...: `fluxcc init --seed 7` and run into $T/N.{w,i,o}; the NumPy
# reference (REF: the script and its options) within 1e-5 on every output; then raw, hc,
# random opts and tc --tf32 (5e-3) on PoCL in $T/N_{raw,hc,randomseed1,tctf32} = the interpreter
net_check() {
  n=$1 m=$2 note=$3; shift 3
  check "$m: init" "$FLUXCC" init examples/$m.fdsl --seed 7 --weights "$T/$n.w" --inputs "$T/$n.i" --quiet
  check "$m: run" "$FLUXCC" run examples/$m.fdsl --weights "$T/$n.w" --inputs "$T/$n.i" -o "$T/$n.o" --quiet
  if [ -n "$PY" ]; then
    check "$m: the NumPy reference ($1$note)" "$PY" "$@" -q --weights "$T/$n.w" --inputs "$T/$n.i" --out "$T/$n.r"
    check "$m: interpreter = reference within 1e-5 rel L2" "$PY" tests/reference/compare.py "$T/$n.o" "$T/$n.r" --tol 1e-5
    sed 's/^/     /' "$T/log"
  fi
  for opt in raw hc "random --seed 1" "tc --tf32"; do
    o=$(echo "$opt" | tr -d ' -') rtol=
    case $opt in *tf32) rtol="--rtol 5e-3" ;; esac
    rm -rf "$T/${n}_$o"
    check "$m --opt $opt on PoCL = interpreter" sh -c "$FLUXCC examples/$m.fdsl --opt $opt --target opencl -o $T/${n}_$o >/dev/null 2>&1 &&
      make -s -C $T/${n}_$o >/dev/null 2>&1 && $T/${n}_$o/flux --quiet --random-weights 7 --random-inputs 7 --check $T/$n.o $rtol"
    sed 's/^/     /' "$T/log"
  done
}
params_manifest vae-decoder.fdsl ae-decoder-params.tsv 138 49545475 "the decoder tensors of BFL's ae.safetensors"
net_check vae vae-decoder-tiny "" tests/reference/vae_ref.py
if [ -n "$PY" ]; then
  check "vae-decoder-tiny: ./flux --png writes the image as BFL's code makes pixels (tests/reference/png_check.py decodes it)" sh -c "
    $T/vae_hc/flux --quiet --random-weights 7 --random-inputs 7 --png $T/vae.png --out $T/vae.img &&
    $PY tests/reference/png_check.py $T/vae.png $T/vae.img && test ! -e $T/vae.png.tmp"
  sed 's/^/     /' "$T/log"
  check "... and png_check.py fails on another image's tensor (seed 8)" sh -c "
    $T/vae_hc/flux --quiet --random-weights 8 --random-inputs 8 --out $T/vae8.img && ! $PY tests/reference/png_check.py $T/vae.png $T/vae8.img"
  # ae.safetensors holds the encoder too: unused_keys("encoder.") lets it load as is
  check "vae-decoder-tiny: weights with encoder.* tensors load (fluxcc run and ./flux), another extra key is still refused" sh -c "
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
w = st.load('$T/vae.w'); w['encoder.conv_in.weight'] = np.ones((4, 3, 3, 3), np.float32); st.save('$T/vae.we', w)
w['decoder.extra'] = np.ones(2, np.float32); st.save('$T/vae.wx', w)\" &&
    $FLUXCC run examples/vae-decoder-tiny.fdsl --weights $T/vae.we --inputs $T/vae.i -o $T/vae.oe --quiet && cmp $T/vae.oe $T/vae.o &&
    $T/vae_hc/flux --quiet --weights $T/vae.we --inputs $T/vae.i --check $T/vae.o &&
    ! $FLUXCC run examples/vae-decoder-tiny.fdsl --weights $T/vae.wx --inputs $T/vae.i -o $T/vae.ox --quiet 2>$T/vx.err &&
    grep -q \"'decoder.extra' is not a parameter\" $T/vx.err && ! grep -q encoder.conv_in $T/vx.err &&
    $T/vae_hc/flux --quiet --weights $T/vae.wx --inputs $T/vae.i 2>$T/vx.err; test \$? -eq 2 && grep -q \"unexpected tensor 'decoder.extra'\" $T/vx.err"
fi
check "vae-decoder-tiny --opt tc --tf32: every conv and 1x1 projection on tensor cores (k: the input channels; the taps loop around the mma steps)" sh -c "
  test \$(grep -l 'MMA_M16N8K8_TF32_EMU(' $T/vae_tctf32/kernels/*.cl | wc -l) -eq 11 &&
  $FLUXCC examples/vae-decoder-tiny.fdsl --opt tc --tf32 --target opencl -o $T/vae_notes 2>&1 >/dev/null | grep -qx 'fluxcc: note: tensor cores on 11 of 11 matmul-shaped unique kernels'"
check "vae-decoder.fdsl (96x96 latents to 768x768) for CUDA under tc: its mid attention one fused kernel (9216 positions, 512 channels)" sh -c "
  $FLUXCC examples/vae-decoder.fdsl --opt tc -o $T/vae_full >/dev/null 2>&1 && ls $T/vae_full/kernels | grep -qx '[0-9]*_attn_1_9216_9216_512_.*\\.cu' &&
  test \$(ls $T/vae_full/kernels | grep -c _attn_) -eq 1"
# a convolution on a CPU target: its padded image realized (with GroupNorm + swish or the
# upsample it reads), so the 3x3 convolutions' loads carry no masks and a row of outputs
# is one vector (VEC along the image's rows), with register tiles over channels and rows
check "vae-decoder-tiny --opt hc on a CPU target: every 3x3 conv vectorized along its rows, its loads unmasked (padded images realized)" sh -c "
  $FLUXCC --dump kernels examples/vae-decoder-tiny.fdsl --opt hc --target opencl > $T/vae_k.txt &&
  awk '/^kernel/ {c = 0} /^  opts/ {c = /_3_3\\)\$/; n += c; if (c && !/VEC\\(2,/) bad = 1} c && / = load .* if / {bad = 1}
       END {exit bad || n != 8}' $T/vae_k.txt"
# conv2d beyond the decoder's: stride 2 (3x3 padded, 2x2, 1x1), 5x5, odd channels, a bf16
# branch (tensor cores); the interpreter against NumPy, the compiled programs against it
if [ -n "$PY" ]; then
  check "conv2d at odd sizes (tests/opt/conv-stride.fdsl: stride 2, 2x2, 1x1, 5x5, bf16): interpreter = NumPy (tests/reference/conv_ref.py)" sh -c "
    $FLUXCC init tests/opt/conv-stride.fdsl --seed 4 --weights $T/cs.w --inputs $T/cs.i --quiet &&
    $FLUXCC run tests/opt/conv-stride.fdsl --weights $T/cs.w --inputs $T/cs.i -o $T/cs.o --quiet &&
    $PY tests/reference/conv_ref.py $T/cs.w $T/cs.i $T/cs.r &&
    for k in s2 k2s2 k1s2 k5; do $PY tests/reference/compare.py $T/cs.o $T/cs.r --key \$k --tol 1e-6 || exit 1; done &&
    $PY tests/reference/compare.py $T/cs.o $T/cs.r --key bf --tol 1e-2"
  sed 's/^/     /' "$T/log"
  check "conv2d at odd sizes: raw, hc, tc on PoCL and C; hc and tc as CUDA on the CPU (race check) = interpreter; the bf16 convs on tensor cores" sh -c "
    for t in c opencl; do for m in raw hc tc; do rm -rf $T/csp && $FLUXCC tests/opt/conv-stride.fdsl --opt \$m --target \$t -o $T/csp >/dev/null 2>&1 &&
      make -s -C $T/csp >/dev/null 2>&1 && $T/csp/flux --quiet --weights $T/cs.w --inputs $T/cs.i --check $T/cs.o || exit 1; done; done &&
    test \$(grep -l MMA_M16N8K16_EMU $T/csp/kernels/*.cl | wc -l) -eq 2 &&
    for m in hc tc; do rm -rf $T/cse && $FLUXCC tests/opt/conv-stride.fdsl --opt \$m -o $T/cse >/dev/null 2>&1 &&
      make -s -C $T/cse emu >/dev/null 2>&1 && $T/cse/flux-emu --quiet --weights $T/cs.w --inputs $T/cs.i --check $T/cs.o || exit 1; done"
fi
# take (a gather): tests/opt/gather.fdsl's ids at 0 and the last row, then a bad id of every kind
# (out of range, negative, not whole): fluxcc run and each target's ./flux refuse it, naming it
if [ -n "$PY" ]; then
  check "take: ids at 0 and the last row = NumPy's take; raw and hc on PoCL, C and CUDA on the CPU = interpreter" sh -c "
    $FLUXCC init tests/opt/gather.fdsl --seed 4 --weights $T/ga.w --inputs $T/ga.i --quiet &&
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
i = st.load('$T/ga.i'); i['ids'] = np.array([[0, 6, 3, 6, 0], [1, 2, 6, 0, 5], [4, 4, 0, 6, 2]], np.float32); st.save('$T/ga.i', i)\" &&
    $FLUXCC run tests/opt/gather.fdsl --weights $T/ga.w --inputs $T/ga.i -o $T/ga.o --quiet &&
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
w, i, o = st.load('$T/ga.w'), st.load('$T/ga.i'), st.load('$T/ga.o'); ids = i['ids'].astype(int)
assert np.array_equal(o['rows'], np.take(w['table'], ids, 0) * 2) and np.array_equal(o['cubes'], np.take(w['cube'], ids[1], 0))
assert np.array_equal(o['computed'], w['table'][6 - np.arange(5)]) and np.array_equal(o['across'], np.take(w['table'], ids, 0).transpose(2, 0, 1))\" &&
    for t in opencl c; do for m in raw hc; do rm -rf $T/gap_\$t && $FLUXCC tests/opt/gather.fdsl --opt \$m --target \$t -o $T/gap_\$t >/dev/null 2>&1 &&
      make -s -C $T/gap_\$t >/dev/null 2>&1 && $T/gap_\$t/flux --quiet --weights $T/ga.w --inputs $T/ga.i --check $T/ga.o || exit 1; done; done &&
    rm -rf $T/gae && $FLUXCC tests/opt/gather.fdsl --opt hc -o $T/gae >/dev/null 2>&1 && make -s -C $T/gae emu >/dev/null 2>&1 &&
    $T/gae/flux-emu --quiet --weights $T/ga.w --inputs $T/ga.i --check $T/ga.o"
  check "take: an id out of range, negative or not whole is refused by fluxcc run and by ./flux on PoCL, C and CUDA on the CPU (exit 2: input, element, value, table)" sh -c "
    for v in 7 -1 2.5; do $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
i = st.load('$T/ga.i'); i['ids'][2, 3] = \$v; st.save('$T/gab.i', i)\" &&
      { $FLUXCC run tests/opt/gather.fdsl --weights $T/ga.w --inputs $T/gab.i -o $T/gab.o 2>$T/gab.err; test \$? -eq 2; } && test ! -e $T/gab.o &&
      grep -q \"^fluxcc: error: take at gather.fdsl:[0-9]*:[0-9]*: id \$v at \\[2, 3\\] of input 'ids' is .* the 7 rows of 'table'\" $T/gab.err &&
      for p in $T/gap_opencl/flux $T/gap_c/flux $T/gae/flux-emu; do { \$p --quiet --weights $T/ga.w --inputs $T/gab.i 2>$T/gab.err; test \$? -eq 2; } &&
        grep -q \"^flux: error: input 'ids' \\[2, 3\\] is \$v, not a row of 'table': it holds ids of its 7 rows (take at gather.fdsl:[0-9]*:[0-9]*), whole numbers 0 to 6\" $T/gab.err || exit 1; done ||
      exit 1; done"
  sed 's/^/     /' "$T/log"
fi
params_manifest clip-text.fdsl clip-text-params.tsv 196 123060480 "the CLIP-L text encoder's tensors"
net_check clip clip-text-tiny "" tests/reference/clip_ref.py --heads 4
if [ -n "$PY" ]; then
  # a prompt as the tokenizer pads it: start token, words, then end-of-text (the
  # largest id) repeated; the pooled output is read at its first position
  check "clip-text-tiny: padded tokens (end-of-text repeated): interpreter = reference, and = each compiled program" sh -c "
    $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
st.save('$T/clip.pad', {'tokens': np.array([[998, 5, 17, 300, 42] + [999] * 11], dtype=np.float32)})\" &&
    $FLUXCC run examples/clip-text-tiny.fdsl --weights $T/clip.w --inputs $T/clip.pad -o $T/clip.po --quiet &&
    $PY tests/reference/clip_ref.py -q --heads 4 --weights $T/clip.w --inputs $T/clip.pad --out $T/clip.rp &&
    $PY tests/reference/compare.py $T/clip.po $T/clip.rp --tol 1e-5 && test \$($PY tests/reference/compare.py $T/clip.po $T/clip.rp | grep -c rel_l2) -eq 2 &&
    for o in raw hc randomseed1; do $T/clip_\$o/flux --quiet --weights $T/clip.w --inputs $T/clip.pad --check $T/clip.po || exit 1; done &&
    $T/clip_tctf32/flux --quiet --weights $T/clip.w --inputs $T/clip.pad --check $T/clip.po --rtol 5e-3"
  sed 's/^/     /' "$T/log"
fi
params_manifest t5-encoder.fdsl t5-encoder-params.tsv 219 4762310656 "the T5 v1.1 XXL encoder's tensors"
net_check t5 t5-encoder-tiny "; 128 tokens: every position bucket" tests/reference/t5_ref.py --heads 4
