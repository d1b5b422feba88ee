# tests/sections/35-fp8.sh — fp8 weights (fluxcc --weights fp8, F8_E4M3 checkpoints) = the interpreter on their dequantized values
# needs:
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== fp8 weights (fluxcc --weights fp8, F8_E4M3 checkpoints) = the interpreter on their dequantized values"
# tests/reference/fp8_ref.py encodes e4m3fn from the format (its own value
# table, not fluxcc's bit tricks), quantizes per row (absmax/448) and writes
# the dequantized values (q * scale in f32) that the interpreter runs on
if [ -n "$PY" ]; then
  R="$PY tests/reference/fp8_ref.py" D=$T/fp8 m=flux-tiny-f32 mb=flux-tiny
  mkdir -p $D
  run_() { "$FLUXCC" run examples/$1.fdsl --quiet --weights "$2" --inputs "$3" -o "$4"; }
  "$FLUXCC" init examples/$m.fdsl --quiet --seed 7 --weights $D/w --inputs $D/i
  "$FLUXCC" init examples/$mb.fdsl --quiet --seed 7 --weights $D/wb --inputs $D/ib
  $R quant $D/w $D/w8 $D/w8.deq && run_ $m $D/w8.deq $D/i $D/w8.ro
  $R quant $D/w $D/w8t $D/w8t.deq --scale tensor --marker && run_ $m $D/w8t.deq $D/i $D/w8t.ro
  $R quant $D/w $D/w8n $D/w8n.deq --scale none && run_ $m $D/w8n.deq $D/i $D/w8n.ro
  $R e5m2 $D/w $D/w5 $D/w5.deq && run_ $m $D/w5.deq $D/i $D/w5.ro
  $PY -c "import sys; sys.path.insert(0, 'tests/reference'); import st; st.save('$D/wbf', st.load('$D/w'), dtype='BF16')"
  $R quant $D/wbf $D/wbf8 $D/wbf8.deq --deq-dtype F32 && run_ $m $D/wbf8.deq $D/i $D/wbf8.ro
  $R quant $D/wb $D/wb8 $D/wb8.deq && run_ $mb $D/wb8.deq $D/ib $D/wb8.ro && run_ $mb $D/wb $D/ib $D/wb.ro
  run_ $m $D/w $D/i $D/w.ro

  check "fluxcc --weights fp8: every linear weight of $m is f8e4m3 with a scale, read in the GEMM's load (one kernel per linear)" sh -c "
    test \$($FLUXCC examples/$m.fdsl --weights fp8 --dump graph | grep -c 'load f8e4m3\[.*\] param .*\.weight') -eq \$($FLUXCC params examples/$m.fdsl | grep -c '\.weight	F32	[0-9]*,[0-9]*\$') &&
    $FLUXCC examples/$m.fdsl --weights fp8 --dump graph | grep -q 'load f32\[64\] param img_in.scale_weight' &&
    $FLUXCC examples/$m.fdsl --weights fp8 --dump kernels | grep -A8 '^kernel 0 ' | grep -q 'load f8e4m3 loop data2'"
  check "fluxcc run: an F8_E4M3 checkpoint (and its scales) = the same run on NumPy's dequantized values, bit for bit; F8_E5M2 too" sh -c "
    run_() { $FLUXCC run examples/$m.fdsl --quiet --weights \$1 --inputs $D/i -o \$2; }
    run_ $D/w8 $D/r8 && cmp $D/r8 $D/w8.ro && run_ $D/w8t $D/r8t && cmp $D/r8t $D/w8t.ro && run_ $D/w5 $D/r5 && cmp $D/r5 $D/w5.ro"
  for t in opencl c cuda; do
    check "$m --weights fp8 --opt hc --target $t: builds" sh -c "$FLUXCC examples/$m.fdsl --weights fp8 --opt hc --target $t -o $D/hc_$t >/dev/null"
  done
  check "builds: PoCL and C (make), CUDA on the CPU (make emu), no warnings" sh -c "
    make -s -j2 -C $D/hc_opencl > $D/b1.log 2>&1 && make -s -j2 -C $D/hc_c > $D/b2.log 2>&1 && make -s -C $D/hc_cuda emu > $D/b3.log 2>&1 &&
    ! grep -i warning $D/b1.log $D/b2.log $D/b3.log"
  B="$D/hc_opencl/flux $D/hc_c/flux $D/hc_cuda/flux-emu"
  check "an F8_E4M3 checkpoint (per-row scales) = the interpreter on its dequantized values within 1e-5: PoCL, C, CUDA text on the CPU" sh -c "
    for b in $B; do FLUX_EMU_RACECHECK=1 \$b --quiet --weights $D/w8 --inputs $D/i --check $D/w8.ro || exit 1; done"
  check "ComfyUI's scaled layout (one scale_weight per tensor, the scaled_fp8 marker) and no scales (1) = interpreter" sh -c "
    for b in $B; do \$b --quiet --weights $D/w8t --inputs $D/i --check $D/w8t.ro && \$b --quiet --weights $D/w8n --inputs $D/i --check $D/w8n.ro || exit 1; done"
  check "an f32 checkpoint quantized at load (one note; none under --quiet) = an F8 checkpoint NumPy quantized, bit for bit; --random-weights 7 = fluxcc init --seed 7's" sh -c "
    $D/hc_c/flux --weights $D/w --inputs $D/i --out $D/q.o > /dev/null 2> $D/q.err && $D/hc_c/flux --quiet --weights $D/w8 --inputs $D/i --out $D/q8.o &&
    cmp $D/q.o $D/q8.o && test \$(grep -c 'flux: note: $D/w: 34 weights quantized to fp8 at load' $D/q.err) -eq 1 &&
    $D/hc_c/flux --quiet --weights $D/w --inputs $D/i --out $D/qq.o 2> $D/qq.err && test ! -s $D/qq.err && cmp $D/q.o $D/qq.o &&
    $D/hc_c/flux --quiet --random-weights 7 --random-inputs 7 --out $D/qr.o 2>/dev/null && cmp $D/q.o $D/qr.o"
  check "a bf16 checkpoint quantized at load by the f32 model's fp8 binary = interpreter on NumPy's quantization of it (1e-5)" sh -c "
    $D/hc_opencl/flux --quiet --weights $D/wbf --inputs $D/i --check $D/wbf8.ro 2>/dev/null"
  check "a binary compiled without --weights fp8 (f32) reads F8_E4M3 (scaled) and F8_E5M2 checkpoints, converting at load = interpreter" sh -c "
    $FLUXCC examples/$m.fdsl --opt hc --target c -o $D/plain >/dev/null && make -s -j2 -C $D/plain >/dev/null 2>&1 &&
    $D/plain/flux --quiet --weights $D/w8 --inputs $D/i --check $D/w8.ro && $D/plain/flux --quiet --weights $D/w8t --inputs $D/i --check $D/w8t.ro &&
    $D/plain/flux --quiet --weights $D/w5 --inputs $D/i --check $D/w5.ro"
  # the bf16 model: fp8 weights against its bf16 weights, hc and tc (tc: the fp8 GEMMs on mma.sync too)
  check "$mb (bf16) --weights fp8, hc and tc on PoCL: a bf16 checkpoint quantized at load = interpreter on the dequantized values (2e-2); tc: every fp8 GEMM on mma" sh -c "
    for o in hc tc; do $FLUXCC examples/$mb.fdsl --weights fp8 --opt \$o --target opencl -o $D/b_\$o > $D/b_\$o.log 2>&1 && make -s -j2 -C $D/b_\$o >/dev/null 2>&1 &&
      $D/b_\$o/flux --quiet --weights $D/wb --inputs $D/ib --check $D/wb8.ro --out $D/b_\$o.o 2>/dev/null || exit 1; done &&
    grep -q 'tensor cores on 12 of 12 matmul-shaped' $D/b_tc.log && test \$(grep -l 'TC(0,0)' \$(grep -l f8e4m3 $D/b_tc/kernels/*.cl) | wc -l) -eq 12"
  check "$mb: fp8 against bf16 weights, relative L2 of the output (printed)" sh -c "
    $PY tests/reference/compare.py $D/b_hc.o $D/wb.ro --tol 0.5 | sed 's/^/fp8 vs bf16: /'"
  sed 's/^/     /' "$T/log"

  # fp8 on the tensor cores, checked tightly: bf16 activations times f32-declared
  # weights stored as fp8 (exact in bf16, so the fragments are exact) with f32
  # results; the row scale multiplies the accumulators. m, n, k of y (40, 24,
  # 72) are not multiples of the tile (padded; the scale's load carries k's mask).
  cat > $D/lin.fdsl <<'EOF'
# fp8 weights on tensor cores: linears of bf16 activations and f32 weights, f32 results
fn lin(x, nout) {
  param weight: f32[nout, shape(x, -1)]
  param bias: f32[nout]
  return mm(x, transpose(weight, 0, 1)) + bias
}
input x: bf16[40, 72]
input z: bf16[2, 64, 96]
output y = lin(x, 24) in a
output y2 = lin(z, 48) in b
EOF
  "$FLUXCC" init $D/lin.fdsl --quiet --seed 5 --weights $D/lw --inputs $D/li && $R quant $D/lw $D/lw8 $D/lw8.deq &&
    "$FLUXCC" run $D/lin.fdsl --quiet --weights $D/lw8.deq --inputs $D/li -o $D/lw8.ro
  check "fp8 weights, bf16 activations, --opt tc: both GEMMs on mma (the scale on the accumulators) = interpreter within 1e-5: PoCL, CUDA text on the CPU (race check)" sh -c "
    $FLUXCC $D/lin.fdsl --weights fp8 --opt tc --target opencl -o $D/l_ocl 2>&1 | grep -q 'tensor cores on 2 of 2' &&
    $FLUXCC $D/lin.fdsl --weights fp8 --opt tc --target cuda -o $D/l_cu >/dev/null 2>&1 && test \$(grep -l 'TC(0,0)' $D/l_cu/kernels/*.cu | wc -l) -eq 2 &&
    grep -q 'acc0 \* val' $D/l_cu/kernels/0000_*.cu && make -s -j2 -C $D/l_ocl >/dev/null 2>&1 && make -s -C $D/l_cu emu >/dev/null 2>&1 &&
    $D/l_ocl/flux --quiet --weights $D/lw8 --inputs $D/li --check $D/lw8.ro && FLUX_EMU_RACECHECK=1 $D/l_cu/flux-emu --quiet --weights $D/lw8 --inputs $D/li --check $D/lw8.ro &&
    $D/l_ocl/flux --quiet --weights $D/lw --inputs $D/li --check $D/lw8.ro 2>/dev/null"
  for seed in 1 2 3 4; do
    check "fp8 weights, random opts seed $seed (TC first where it draws it) on PoCL = interpreter within 1e-5" sh -c "rm -rf $D/rnd &&
      $FLUXCC $D/lin.fdsl --weights fp8 --opt random --seed $seed --target opencl -o $D/rnd >/dev/null 2>&1 && make -s -C $D/rnd >/dev/null 2>&1 &&
      $D/rnd/flux --quiet --weights $D/lw8 --inputs $D/li --check $D/lw8.ro"
  done
  # every finite e4m3 code (subnormals, both zeros, 448) through each target's
  # loads, vector loads on PoCL included, exactly: an identity times the weight
  # gives q * scale bit for bit
  cat > $D/eye.fdsl <<'EOF'
# fp8 loads, exactly: an identity times a weight stored as fp8 is the weight's values (q * scale)
fn lin(x, nout) {
  param weight: f32[nout, shape(x, -1)]
  return mm(x, transpose(weight, 0, 1))
}
input x: f32[72, 72]
output y = lin(x, 32) in e
EOF
  "$FLUXCC" init $D/eye.fdsl --quiet --seed 5 --weights $D/ew --inputs $D/ei && $R quant $D/ew $D/ew8 $D/ew8.deq --every-code &&
    $PY -c "import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np; st.save('$D/eye.i', {'x': np.eye(72, dtype=np.float32)})"
  check "every finite e4m3 code in every lane (PoCL's vector loads, C, CUDA text on the CPU) = its value times the row scale, bit for bit" sh -c "
    for t in opencl c cuda; do $FLUXCC $D/eye.fdsl --weights fp8 --opt hc --target \$t -o $D/e_\$t >/dev/null 2>&1 || exit 1; done &&
    grep -q 'float8 val[0-9]* = ld_f8e4m3x8(p_e_weight' $D/e_opencl/kernels/*.cl && make -s -j2 -C $D/e_opencl >/dev/null 2>&1 && make -s -j2 -C $D/e_c >/dev/null 2>&1 &&
    make -s -C $D/e_cuda emu >/dev/null 2>&1 && for b in $D/e_opencl/flux $D/e_c/flux $D/e_cuda/flux-emu; do \$b --quiet --weights $D/ew8 --inputs $D/eye.i --out \$b.o || exit 1
      $PY -c \"import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
y, w = st.load('\$b.o')['y'], st.load('$D/ew8.deq')['e.weight']; sys.exit(0 if np.array_equal(y, w.T) and (w == 0).any() else '\$b: not bit for bit')\" || exit 1; done"
  check "$m --weights fp8 --opt hc on PoCL: the weights' loads are vector loads (ld_f8e4m3xN), none lane by lane" sh -c "
    grep -q 'ld_f8e4m3x[0-9]' $D/hc_opencl/kernels/*.cl && ! grep -q 'ld_f8e4m3(' $D/hc_opencl/kernels/*.cl"

  if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    check "flux.fdsl --weights fp8 --opt tc: every fp8 GEMM on mma.sync bf16 in its PTX, no spills or warnings (sm_90)" sh -c "
      export PATH=\"\$PATH:/usr/local/cuda/bin\" && $FLUXCC examples/flux.fdsl --weights fp8 --opt tc -o $D/full_tc 2>&1 | grep -q 'tensor cores on 15 of 15 matmul' && cd $D/full_tc && n=0 &&
      for f in \$(grep -l 'TC(0,0)' \$(grep -l 'unsigned char \*__restrict__ p_' kernels/*.cu)); do
        nvcc -arch=sm_90 -Xptxas -warn-spills -ptx \$f -o k.ptx > k.log 2>&1 && nvcc -arch=sm_90 -Xptxas -warn-spills -cubin \$f -o k.cubin >> k.log 2>&1 &&
          ! grep -E 'warning[ :]|[1-9][0-9]* bytes spill' k.log && grep -q 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32' k.ptx || exit 1
        n=\$((n+1)); done; test \$n -ge 15"
  else
    skip=$((skip + 1)); echo "SKIP fp8 on mma.sync under nvcc: nvcc is not installed"
  fi

  # refusals: exit 2, the file and tensor named, nothing written
  $R bad $D/w8 $D/bad >/dev/null
  for b in $D/hc_c/flux $D/plain/flux; do
    fr() { "$b" --quiet --inputs "$D/i" --out "$T/bad.o" "$@"; }
    expect_fail "$b: refused: an F8 NaN code 0x7f" "bad/nan7f.safetensors: parameter 'img_in.weight' holds 1 NaN encodings (0x7f/0xff) of F8_E4M3 (first at element 5)" fr --weights $D/bad/nan7f.safetensors
    expect_fail "$b: refused: an F8 NaN code 0xff" "bad/nanff.safetensors: parameter 'img_in.weight' holds 1 NaN encodings" fr --weights $D/bad/nanff.safetensors
    expect_fail "$b: refused: a tensor one byte short" "bad/short.safetensors: tensor 'img_in.weight': data_offsets \[0, 1023\] but shape \[64,16\] of F8_E4M3 needs 1024 bytes" fr --weights $D/bad/short.safetensors
    expect_fail "$b: refused: a scale of neither 1 nor rows values" "bad/scale-shape.safetensors: scale 'img_in.scale_weight' holds 65 values" fr --weights $D/bad/scale-shape.safetensors
  done
  fr() { "$D/hc_c/flux" --weights "$D/w8" --inputs "$D/i" --out "$T/bad.o" "$@"; }
  expect_fail "--lora with an fp8-compiled binary: refused at start, before its files are read or a weight loads" \
    "flux: error: --lora: flux-tiny-f32.fdsl was compiled with --weights fp8: its linear weights ('img_in.weight', \.\.\.) are float8_e4m3fn on the device" fr --lora $D/no-such-lora.safetensors
  check "... and nothing printed on stdout (no summary: the device never opened)" test ! -s "$T/out"
  check "fluxcc run refuses an F8 NaN code by name" sh -c "! $FLUXCC run examples/$m.fdsl --quiet --weights $D/bad/nan7f.safetensors --inputs $D/i -o $D/x 2> $D/x.err && grep -q \"img_in.weight' holds 1 NaN\" $D/x.err"
  check "--max-memory: a program that needs more is refused before anything loads (exit 3, its sizes said); one that fits runs" sh -c "
    $D/plain/flux --quiet --weights $D/nothing --max-memory 100000 > $D/mm.out 2> $D/mm.err; test \$? -eq 3 &&
    grep -q 'flux: error: --max-memory 100000: flux-tiny-f32.fdsl needs [0-9]* bytes (.* MiB) of device memory: weights .* MiB, inputs .* MiB, arena .* MiB (fluxcc --weights fp8' $D/mm.err &&
    test ! -s $D/mm.out && $D/hc_c/flux --quiet --random-weights 1 --max-memory 10000000"
  P_=examples/pipeline-tiny
  check "fluxcc pipeline --weights fp8: the transformer's linear weights are fp8, the other stages' are not" sh -c "
    $FLUXCC pipeline --t5 $P_/t5.fdsl --clip $P_/clip.fdsl --transformer $P_/flux.fdsl --vae $P_/vae.fdsl --opt hc --target c --weights fp8 -o $D/pipe --quiet >/dev/null &&
    grep -q 'RT_F8E4M3' $D/pipe/transformer/schedule.c && ! grep -q 'RT_F8E4M3' $D/pipe/t5/schedule.c $D/pipe/clip/schedule.c $D/pipe/vae/schedule.c"
  expect_fail "a compile's --weights is fp8 (a file is for init and run)" "--weights 'w.safetensors': a compile's --weights is fp8" "$FLUXCC" examples/$m.fdsl --opt hc --weights w.safetensors -o $T/bad.o
fi
