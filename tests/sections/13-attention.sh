# tests/sections/13-attention.sh — fused attention (KERNEL_ATTN): one kernel per attention, online softmax
# needs: reference opencl property
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== fused attention (KERNEL_ATTN): one kernel per attention, online softmax"
# tests/opt/attention.fdsl: 20 tokens (not a tile multiple), 7 queries over 45
# keys with v's channels unlike q's (f32: checked at 1e-5), logits of ~3e4
# (exp would overflow without the running max); random opts above, fixed ones here
# (on a CPU target the attention is fused only under tc and random, whose
# blocks are tensor-core tiles; raw and hc keep it unfused: see schedule.c)
f=tests/opt/attention.fdsl
for meth in raw hc tc random; do
  case $meth in tc|random) nf=3 ;; *) nf=0 ;; esac
  opt="--opt $meth"; [ $meth = random ] && opt="--opt random --seed 1"
  rm -rf "$T/att"
  check "attention.fdsl: $meth on PoCL = interpreter, $nf fused kernels" sh -c "$FLUXCC $f $opt --target opencl -o $T/att >/dev/null &&
    test \$(ls $T/att/kernels | grep -c _attn_) -eq $nf && make -s -C $T/att >/dev/null 2>&1 &&
    $T/att/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_attention.o"
done
check "attention.fdsl as CUDA: three fused kernels under raw and hc too" sh -c "
  for meth in raw hc; do test \$($FLUXCC $f --opt \$meth --dump kernels | grep -c '^kernel [0-9]* attn_') -eq 3 || exit 1; done"
for m in flux-tiny-f32 flux-dev-tiny-f32 flux-tiny flux-dev-tiny; do
  check "$m: each of its 4 attentions is one fused kernel (CUDA; tc on OpenCL; no score matrix), unfused under hc and raw on the CPU" sh -c "
    test \$($FLUXCC examples/$m.fdsl --dump schedule | grep -c ' attn_') -eq 4 &&
    test \$($FLUXCC examples/$m.fdsl --dump schedule --opt hc | grep -c ' attn_') -eq 4 &&
    ls $T/tc_$m/kernels | grep -q _attn_ && ! ls $T/hc_$m/kernels | grep -q _attn_ && ! ls $T/cl_$m/kernels | grep -q _attn_"
done
check "flux.fdsl --opt tc: 57 fused attentions (QK-norm and RoPE in their loads) and GEMM prologues, 624 launches, under 51000 MB per forward (from 337 GB; the floor 49.9 ms)" sh -c "
  $FLUXCC examples/flux.fdsl --opt tc -o $T/flux_tc >/dev/null && $FLUXCC report $T/flux_tc > $T/flux_tc.txt &&
  grep -q 'method tc, 624 launches' $T/flux_tc.txt && test \$(ls $T/flux_tc/kernels | grep -c _attn_) -eq 2 &&
  awk '/^ +total/ { exit !(\$4 < 51000) }' $T/flux_tc.txt"
check "flux-tiny: runtime under ASan + UBSan" sh -c "make -C '$T/cl_flux-tiny' flux-san > /dev/null 2>&1 &&
  LSAN_OPTIONS=suppressions=$TOP/tests/lsan-pocl.supp '$T/cl_flux-tiny/flux-san' --quiet --random-weights 7 --random-inputs 7 --check '$T/flux-tiny.o'"
check "flux-tiny: --bench runs" "$T/cl_flux-tiny/flux" --quiet --random-weights 1 --random-inputs 1 --bench 2
# (a fault put in by editing a kernel file: --allow-edited runs it; a set-up
# that did not put it in exits 2, never passing by accident)
check "a skipped write is caught (poisoned output fails --check)" sh -c "
  cp -r '$T/cl_flux-tiny' '$T/cl_broken' && f=\$(ls '$T'/cl_broken/kernels/*.cl | tail -1) &&
  sed -i 's/^  st_/  if (gidx0 != 0) st_/' \"\$f\" && grep -q 'if (gidx0 != 0) st_' \"\$f\" || exit 2
  '$T/cl_broken/flux' --quiet --allow-edited --random-weights 7 --random-inputs 7 --check '$T/flux-tiny.o'; test \$? -eq 1"
# kernel by kernel: with --no-reuse every intermediate keeps its own memory and
# FLUX_OUT_ALL=1 writes them all, so each launch's output under hc and tc is
# compared with raw's (same schedule, same buffer numbers: tc's tensor-core
# tiles fuse more than a CPU target's raw, so its raw is scheduled with --tile-n 128)
if [ -n "$PY" ]; then
  for m in flux-tiny-f32 flux-tiny; do
    case $m in *f32) tol=1e-5 ;; *) tol=2e-2 ;; esac
    for meth in raw raw128 hc tc; do
      rm -rf "$T/nr_$meth"
      case $meth in raw128) opt="--opt raw --tile-n 128" ;; *) opt="--opt $meth" ;; esac
      "$FLUXCC" examples/$m.fdsl $opt --no-reuse --target opencl -o "$T/nr_$meth" >/dev/null && make -s -C "$T/nr_$meth" >/dev/null 2>&1 &&
        FLUX_OUT_ALL=1 "$T/nr_$meth/flux" --quiet --random-weights 7 --random-inputs 7 --out "$T/all_$meth.st"
    done
    for meth in hc tc; do
      ref=raw; [ $meth = tc ] && ref=raw128
      check "$m: every kernel's output under $meth = raw's (all intermediates, $tol rel L2 each)" sh -c "
        $PY tests/reference/compare.py $T/all_$meth.st $T/all_$ref.st --tol $tol > $T/cmp.txt && test \$(wc -l < $T/cmp.txt) -ge 50"
    done
  done
fi
# tf32 rounds f32 operands to 10 mantissa bits (cvt.rna), so it is checked at 5e-3, not 1e-5
check "flux-tiny-f32: tc --tf32 (m16n8k8 emulated) on PoCL = interpreter within 5e-3" sh -c "
  $FLUXCC examples/flux-tiny-f32.fdsl --opt tc --tf32 --target opencl -o $T/tf32 >/dev/null && make -s -C $T/tf32 >/dev/null 2>&1 &&
  test \$(grep -l 'MMA_M16N8K8_TF32_EMU(' $T/tf32/kernels/*.cl | wc -l) -ge 10 &&
  $T/tf32/flux --quiet --random-weights 7 --random-inputs 7 --check $T/flux-tiny-f32.o --rtol 5e-3"
check "tc really applies: flux-tiny (bf16) has tensor-core kernels, flux-tiny-f32 none" sh -c "
  test \$(grep -l 'TC(0,0)' $T/tc_flux-tiny/kernels/*.cl | wc -l) -ge 10 && ! grep -l 'TC(0,0)' $T/tc_flux-tiny-f32/kernels/*.cl"
# tensor cores for any size: flux-tiny with 15 image and 7 text tokens (L = 22,
# no token count a multiple of 16); TC pads m, n, k to the mma tile with masks
O=examples/flux-tiny-odd.fdsl
check "flux-tiny-odd: init and run (the interpreter's outputs)" sh -c "
  $FLUXCC init $O --seed 7 --weights $T/odd.w --inputs $T/odd.i --quiet && $FLUXCC run $O --weights $T/odd.w --inputs $T/odd.i -o $T/odd.o --quiet"
check "flux-tiny-odd: --opt tc pads unaligned tiles: every matmul on tensor cores, and the fused attentions (L = 22 keys masked)" sh -c "
  $FLUXCC $O --opt tc --target opencl -o $T/tc_odd >/dev/null 2>$T/odd.err &&
  n=\$(sed -n 's/^fluxcc: note: tensor cores on \\([0-9]*\\) of \\1 matmul-shaped unique kernels\$/\\1/p' $T/odd.err) && test \"\$n\" -ge 10 &&
  a=\$(grep -l 'TC(0,0)' $T/tc_odd/kernels/*attn*.cl | wc -l) && test \$a -eq 2 &&
  test \$(grep -l 'TC(0,0)' $T/tc_odd/kernels/*.cl | wc -l) -eq \$((n + a)) && ! grep -q 'no tensor cores' $T/odd.err"
check "flux-tiny-odd: tc on PoCL = interpreter" sh -c "
  make -s -C $T/tc_odd >/dev/null 2>&1 && $T/tc_odd/flux --quiet --random-weights 7 --random-inputs 7 --check $T/odd.o"
check "flux-tiny-odd: tc --tf32 on PoCL = interpreter" sh -c "
  $FLUXCC $O --opt tc --tf32 --target opencl -o $T/tf32_odd >/dev/null 2>$T/odd.err && grep -q 'tensor cores on \\([0-9]*\\) of \\1 ' $T/odd.err &&
  make -s -C $T/tf32_odd >/dev/null 2>&1 && $T/tf32_odd/flux --quiet --random-weights 7 --random-inputs 7 --check $T/odd.o"
check "--opt tc names each matmul it leaves off the tensor cores, with why (flux-tiny-f32: f32 operands)" sh -c "
  $FLUXCC examples/flux-tiny-f32.fdsl --opt tc --target opencl -o $T/tc_f32n >/dev/null 2>$T/f32n.err &&
  n=\$(sed -n 's/^fluxcc: note: tensor cores on 0 of \\([0-9]*\\) matmul-shaped unique kernels\$/\\1/p' $T/f32n.err) && test \"\$n\" -ge 5 &&
  test \$(grep -c '^fluxcc: note: kernel [0-9]* r_[0-9_]* (flux-model.fdsl:[0-9:]*): no tensor cores: TC: the operands are f32 and f32' $T/f32n.err) -eq \$n"
check "flux-tiny-f32 --tf32: the f32 matmuls on tensor cores (tf32), padded where unaligned" sh -c "
  $FLUXCC examples/flux-tiny-f32.fdsl --opt tc --tf32 --target opencl -o $T/tf32_n >/dev/null 2>$T/f32n.err && grep -q 'tensor cores on \\([0-9]*\\) of \\1 ' $T/f32n.err"
check "tc stages tiles: double-buffered 16-bit tiles (cp.async on CUDA) for plain loads, f32 tiles for a GEMM prologue's A (flux-tiny)" sh -c "
  test \$(grep -l tc_stage16 $T/tc_flux-tiny/kernels/*.cl | wc -l) -ge 5 && test \$(grep -l 'tc_stage\[' $T/tc_flux-tiny/kernels/*.cl | wc -l) -ge 8"
# GEMM prologues: LayerNorm + modulate, the double blocks' gelu and the single
# blocks' concat(attention, gelu(mlp)) are computed while the matmuls load A
# (flux-tiny: 68 launches with the fused attention); the values are bit for bit those of the realized
# tensors (the kernel-by-kernel comparison below checks every intermediate)
check "GEMM prologues: flux-tiny has no modulate, gelu or concat kernel (68 launches); its qkv matmul reads x, the LayerNorm statistics and the modulation; TC and STAGE apply (A computed into f32 tiles, the weights double-buffered)" sh -c "
  $FLUXCC --dump schedule examples/flux-tiny.fdsl > $T/pro.txt && grep -q '^# 68 launches, 34 unique kernels' $T/pro.txt &&
  ! grep -qE '^ +[0-9]+ E_(16_64|32_64|4096|32_320) ' $T/pro.txt &&
  test \$(grep -cE '^ +[0-9]+ r_16_192_64 +k[0-9]+ buf[0-9]+ <- buf[0-9]+ buf[0-9]+ buf[0-9]+ buf[0-9]+ double_blocks' $T/pro.txt) -eq 4 &&
  f=\$(grep -l '(r_16_192_64)' $T/tc_flux-tiny/kernels/*.cl) && grep -q 'opts: \\[TC(0,0), .*STAGE(0,0)\\]' \$f && grep -q 'tc_stage\[' \$f && grep -q tc_stage16 \$f"
# A prologue is recomputed once per block tile along n: fused where that costs at
# most a quarter of the product (ops per element, transcendental ones as 8, at
# most tile/2), realized where not. On a CPU target under raw/hc (a work-item's
# tile of 8 along n) modulate and gelu are realized; CUDA and tc keep them fused.
check "GEMM prologues by recompute cost: tests/opt/prologue.fdsl is 4 launches on CUDA and under tc, 6 under hc on a CPU target (modulate and concat(a, gelu(m), m) realized)" sh -c "
  test \$($FLUXCC --dump schedule tests/opt/prologue.fdsl --opt hc | grep -cE '^ +[0-9]+ ') -eq 4 &&
  test \$($FLUXCC --dump schedule tests/opt/prologue.fdsl --opt tc --target opencl 2>/dev/null | grep -cE '^ +[0-9]+ ') -eq 4 &&
  $FLUXCC --dump schedule tests/opt/prologue.fdsl --opt hc --target opencl > $T/pro_cpu.txt &&
  test \$(grep -cE '^ +[0-9]+ ' $T/pro_cpu.txt) -eq 6 && test \$(grep -cE '^ +[0-9]+ E_' $T/pro_cpu.txt) -eq 2"
# tests/opt/prologue.fdsl (also in the random opts above): modulate and concat(a, gelu(m), m)
# prologues over 13 tokens (masked, padded mma tiles); 4 launches, the interpreter's bits
check "GEMM prologues: tests/opt/prologue.fdsl is 4 launches (two statistics, two matmuls); raw, hc, tc on PoCL and tc as CUDA on the CPU (race check) = interpreter" sh -c "
  test \$($FLUXCC --dump schedule tests/opt/prologue.fdsl | grep -cE '^ +[0-9]+ ') -eq 4 &&
  for meth in raw hc tc; do rm -rf $T/pro; $FLUXCC tests/opt/prologue.fdsl --opt \$meth --target opencl -o $T/pro >/dev/null 2>&1 &&
    make -s -C $T/pro >/dev/null 2>&1 && $T/pro/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_prologue.o || exit 1; done &&
  test \$(grep -l 'TC(0,0)' $T/pro/kernels/*.cl | wc -l) -eq 2 &&
  $FLUXCC tests/opt/prologue.fdsl --opt tc -o $T/pro_cu >/dev/null 2>&1 && make -s -C $T/pro_cu emu >/dev/null 2>&1 &&
  FLUX_EMU_RACECHECK=1 $T/pro_cu/flux-emu --quiet --random-weights 3 --random-inputs 3 --check $T/p_prologue.o"
check "a wrong fragment layout is caught (A's row r read from row r+8 fails --check)" sh -c "
  cp -r '$T/tc_flux-tiny' '$T/tc_broken' && f=\$(grep -l 'TC(0,0)' '$T'/tc_broken/kernels/*.cl | head -1) && cp \"\$f\" '$T/frag.orig' &&
  sed -i '0,/= tc_stage\[(lidx1\/4)\*16+(lidx1%4)\*2\];/s//= tc_stage[(lidx1\/4)*16+(lidx1%4)*2+128];/' \"\$f\" &&
  ! cmp -s \"\$f\" '$T/frag.orig' || exit 2
  '$T/tc_broken/flux' --quiet --allow-edited --random-weights 7 --random-inputs 7 --check '$T/flux-tiny.o'; test \$? -eq 1"
check "fluxcc report: one row per unique kernel, totals agree with the schedule" sh -c "
  n=\$(sed -n '/^static const RtLaunch launches/,/^};/p' $T/hc_flux-tiny/schedule.c | grep -c '^  {') && test \$n -ge 50 &&
  $FLUXCC report $T/hc_flux-tiny > $T/report.txt && grep -q \"method hc, \$n launches\" $T/report.txt &&
  test \$(grep -cE '^ +[0-9]+  ' $T/report.txt) -eq \$(ls $T/hc_flux-tiny/kernels/*.cl | wc -l) && grep -qE \"total +\$n \" $T/report.txt"
# the roofline: each kernel's floor max(FLOPs / peak of its units, bytes / bandwidth) on a device model,
# recomputed from records.json by tests/check_roofline.py (h200: 790 tc, 395 tf32, 67 f32 TFLOP/s; 4800 GB/s)
check "fluxcc report: roofline floors on the h200 model (the default) = records.json recomputed (flux-tiny tc, flux-tiny-f32 tf32, flux.fdsl tc)" sh -c "
  [ -n '$PY' ] || exit 0; $FLUXCC examples/flux.fdsl --opt tc -o $T/roof_flux >/dev/null 2>&1 &&
  for d in $T/tc_flux-tiny $T/tf32 $T/roof_flux; do $FLUXCC report \$d | $PY tests/check_roofline.py \$d 790 395 67 4800 || exit 1; done &&
  $FLUXCC report $T/tf32 --device h200 | grep -qE '^ +[0-9]+  .* tf32 +(compute|memory) ' &&
  $FLUXCC report $T/roof_flux > $T/roof.txt && grep -qE '^per forward: [0-9]+ launches of [0-9]+ unique kernels, [0-9.]+ TFLOP, [0-9.]+ GB of memory traffic\$' $T/roof.txt &&
  grep -q '^summed floor with every FLOP at the tensor-core peak (790 TFLOP/s' $T/roof.txt"
check "fluxcc report: --peak-tflops (one peak for every kernel) and --peak-gbs override the model; --device h100" sh -c "
  [ -n '$PY' ] || exit 0; $FLUXCC report $T/roof_flux --peak-tflops 100 --peak-gbs 1000 > $T/roof2.txt &&
  $PY tests/check_roofline.py $T/roof_flux 100 100 100 1000 < $T/roof2.txt && grep -q 'with --peak-tflops/--peak-gbs: 100 TFLOP/s' $T/roof2.txt &&
  ! grep -q 'every FLOP at the tensor-core peak' $T/roof2.txt &&
  $FLUXCC report $T/roof_flux --device h100 --peak-gbs 2000 | $PY tests/check_roofline.py $T/roof_flux 989 495 67 2000"
check "fluxcc report: a bad device model is refused, saying why (exit 2)" sh -c "
  $FLUXCC report $T/roof_flux --device b200 2>$T/roof.err; test \$? -eq 2 && grep -q \"the device models are h200, h100\" $T/roof.err &&
  $FLUXCC report $T/roof_flux --peak-gbs -3 2>$T/roof.err; test \$? -eq 2 && grep -q 'a positive number of GB/s' $T/roof.err &&
  $FLUXCC report $T/roof_flux --peak-tflops 1e3x 2>$T/roof.err; test \$? -eq 2 && grep -q 'a positive number of TFLOP/s' $T/roof.err &&
  $FLUXCC examples/flux-tiny.fdsl --opt raw --device h200 -o $T/roof_x 2>$T/roof.err; test \$? -eq 2 && grep -q 'are for fluxcc report' $T/roof.err"
check "compiles are deterministic (byte-identical but provenance.json)" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --opt raw --target opencl -o $T/det1 >/dev/null &&
  $FLUXCC examples/flux-tiny.fdsl --opt raw --target opencl -o $T/det2 >/dev/null &&
  diff -r -x provenance.json $T/det1 $T/det2 && $FLUXCC examples/flux.fdsl --opt raw -o $T/det3 >/dev/null &&
  $FLUXCC examples/flux.fdsl --opt raw -o $T/det4 >/dev/null && diff -r -x provenance.json $T/det3 $T/det4"
check "emission does not depend on the working directory or the model's path (DSL locations relative to the model)" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --opt raw -o $T/cwd1 >/dev/null &&
  (cd $T && $FLUXCC $TOP/examples/flux-tiny.fdsl --opt raw -o $T/cwd2 >/dev/null) &&
  (cd examples && $FLUXCC flux-tiny.fdsl --opt raw -o $T/cwd3 >/dev/null) &&
  diff -r -x provenance.json $T/cwd1 $T/cwd2 && diff -r -x provenance.json $T/cwd1 $T/cwd3 &&
  grep -q '^// DSL: flux-model.fdsl:' $T/cwd1/kernels/0000_*.cu && ! grep -rq '$TOP' $T/cwd2/kernels $T/cwd2/records.json"
check "diagnostics keep the model's path as given" sh -c "
  printf 'input x: f32[2]\\noutput y = nope(x)\\n' > $T/bad.fdsl && (cd / && $FLUXCC --dump graph $T/bad.fdsl 2>$T/bad.err; test \$? -eq 1) &&
  grep -q '^$T/bad.fdsl:2:12: error' $T/bad.err"

# value numbering of the folded operands (QK-norm, RoPE): the rsqrt chain of a
# row and each constant are written once per block, not once per use
check "fused attention: no expression written twice in the q or k tile's block (flux-tiny tc)" sh -c "
  f=\$(ls $T/tc_flux-tiny/kernels/*attn* | head -1) && test -n \"\$f\" &&
  for p in x y; do test -z \"\$(sed -n 's/^ *float '\$p'[0-9][0-9]* = \\(.*\\);\$/\\1/p' \$f | sort | uniq -d)\" || exit 1; done &&
  grep -q 'sqrtf\\|sqrt(' \$f"
