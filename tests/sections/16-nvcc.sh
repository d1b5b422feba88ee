# tests/sections/16-nvcc.sh — CUDA target: nvcc -arch=sm_90 builds, no warnings, no spills
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== CUDA target: nvcc -arch=sm_90 builds, no warnings, no spills"
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  check "flux-tiny (bf16) CUDA project builds" sh -c "$FLUXCC examples/flux-tiny.fdsl --opt raw -o $T/cu_tiny >/dev/null &&
    make -j2 -C $T/cu_tiny > $T/cu_tiny.log 2>&1 && ! grep -E 'warning[ :]|[1-9][0-9]* bytes spill' $T/cu_tiny.log"
  check "every TC kernel's PTX has mma.sync, and cp.async where tiles are staged (flux-tiny, sm_90)" sh -c "
    $FLUXCC examples/flux-tiny.fdsl --opt tc -o $T/cu_tc >/dev/null && cd $T/cu_tc && n=0 &&
    for f in \$(grep -l 'TC(0,0)' kernels/*.cu); do
      nvcc -arch=sm_90 -ptx \$f -o k.ptx && grep -q 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32' k.ptx || exit 1;
      if grep -q tc_stage16 \$f; then grep -q 'cp.async.cg.shared.global' k.ptx && grep -q 'cp.async.wait_group' k.ptx || exit 1; fi
      n=\$((n+1)); done;
    test \$n -ge 10"
  check "flux-tiny-odd: every padded TC kernel's PTX has mma.sync, no spills or warnings (sm_90)" sh -c "
    $FLUXCC examples/flux-tiny-odd.fdsl --opt tc -o $T/cu_odd >/dev/null 2>&1 && cd $T/cu_odd && n=0 &&
    for f in \$(grep -l 'TC(0,0)' kernels/*.cu); do
      nvcc -arch=sm_90 -Xptxas -warn-spills -ptx \$f -o k.ptx > k.log 2>&1 && nvcc -arch=sm_90 -Xptxas -warn-spills -cubin \$f -o k.cubin >> k.log 2>&1 &&
        ! grep -E 'warning[ :]|[1-9][0-9]* bytes spill' k.log && grep -q 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32' k.ptx || exit 1
      n=\$((n+1)); done; test \$n -ge 10"
  check "tf32 kernels' PTX has mma.sync m16n8k8 tf32 and cvt.rna (flux-tiny-f32)" sh -c "
    $FLUXCC examples/flux-tiny-f32.fdsl --opt tc --tf32 -o $T/cu_tf32 >/dev/null && cd $T/cu_tf32 && n=0 &&
    for f in \$(grep -l 'm16n8k8' kernels/*.cu); do
      nvcc -arch=sm_90 -ptx \$f -o k.ptx && grep -q 'mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32' k.ptx && grep -q 'cvt.rna.tf32.f32' k.ptx || exit 1
      n=\$((n+1)); done; test \$n -ge 10"
  for meth in raw hc tc; do
    check "flux.fdsl (full FLUX.1 schnell) --opt $meth: CUDA project builds, no warnings or spills" sh -c "
      $FLUXCC examples/flux.fdsl --opt $meth -o $T/cu_full_$meth >/dev/null &&
      make -j2 -C $T/cu_full_$meth > $T/cu_full_$meth.log 2>&1 && ! grep -E 'warning[ :]|[1-9][0-9]* bytes spill' $T/cu_full_$meth.log"
  done
  # (tc --tf32 is left out: one implicit-GEMM conv tile spills 4 bytes under ptxas, see the note)
  check "vae-decoder-tiny --opt hc (convs, group norm, the single-head attention): CUDA project builds, no warnings or spills" sh -c "
    $FLUXCC examples/vae-decoder-tiny.fdsl --opt hc -o $T/cu_vae >/dev/null 2>&1 &&
    make -j2 -C $T/cu_vae > $T/cu_vae.log 2>&1 && ! grep -E 'warning[ :]|[1-9][0-9]* bytes spill' $T/cu_vae.log"
  check "flux binary without a GPU says so (exit 3)" sh -c "$T/cu_tiny/flux --quiet; test \$? -eq 3"
else
  skip=$((skip + 1)); echo "SKIP CUDA builds: nvcc is not installed"
fi
