# tests/sections/10-flux-mid.sh — real width: flux-mid (hidden 768, 6 heads of 128, 4096/768 conditioning, L = 320)
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== real width: flux-mid (hidden 768, 6 heads of 128, 4096/768 conditioning, L = 320)"
# the float64 reference at real width: memory bounded by the named tensors (a
# linear's [tokens, out, in] product is never stored), products through BLAS
maxrss() { "$PY" -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[2:]).returncode
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("max RSS %d MB" % (kb // 1024))
sys.exit(r or (kb > int(sys.argv[1]) * 1024))' "$@"; }
for m in flux-mid-f32 flux-mid; do
  case $m in *f32) dt=f32 tol=1e-6 ;; *) dt=bf16 tol=2e-2 ;; esac
  check "$m: init" "$FLUXCC" init examples/$m.fdsl --seed 7 --weights "$T/$m.w" --inputs "$T/$m.i" --quiet
  check "$m: fluxcc run in under 2 GB" maxrss 2048 "$FLUXCC" run examples/$m.fdsl --weights "$T/$m.w" --inputs "$T/$m.i" -o "$T/$m.o" --quiet
  sed 's/^/     /' "$T/log"
  [ -n "$PY" ] || continue
  check "$m: reference" "$PY" tests/reference/flux_ref.py -q --weights "$T/$m.w" --inputs "$T/$m.i" --out "$T/$m.r" \
    --axes 16,56,56 --theta 10000 --dtype $dt
  check "$m: interpreter = reference within $tol rel L2" "$PY" tests/reference/compare.py "$T/$m.o" "$T/$m.r" --tol $tol --key out
  sed 's/^/     /' "$T/log"
done
for opt in raw hc "random --seed 1" "tc --tf32"; do
  n=$(echo "$opt" | tr -d ' -') rtol=
  case $opt in *tf32) rtol="--rtol 5e-3" ;; esac  # tf32 operands: 10 bits of mantissa
  rm -rf "$T/mid_$n"
  check "flux-mid-f32 --opt $opt on PoCL = interpreter" sh -c "$FLUXCC examples/flux-mid-f32.fdsl --opt $opt --target opencl -o $T/mid_$n >/dev/null 2>&1 &&
    make -s -C $T/mid_$n >/dev/null 2>&1 && $T/mid_$n/flux --quiet --random-weights 7 --random-inputs 7 --check $T/flux-mid-f32.o $rtol"
  sed 's/^/     /' "$T/log"
done
check "folded constants are constant buffers: flux-mid's time-embedding and RoPE frequencies (128, 8, 28 values)" sh -c "
  $FLUXCC --dump graph examples/flux-mid.fdsl | grep -c 'const folded' | grep -qx 3 &&
  grep -q '{\"folded0\", RT_CONST, RT_F32, 1, {128}' $T/mid_raw/schedule.c &&
  grep -q '{\"folded1\", RT_CONST, RT_F32, 1, {8}' $T/mid_raw/schedule.c && grep -q '{\"folded2\", RT_CONST, RT_F32, 1, {28}' $T/mid_raw/schedule.c"
check "no emitted kernel of any example model is over 100 KB (raw, hc, tc; CUDA and OpenCL)" sh -c "
  for f in examples/*.fdsl examples/pipeline-tiny/*.fdsl; do case \$f in *-model.fdsl) continue ;; esac
    for opt in raw hc tc; do for tg in cuda opencl; do
      rm -rf $T/size && $FLUXCC \$f --opt \$opt --target \$tg -o $T/size >/dev/null 2>&1 || { echo \"\$f \$opt \$tg: compile failed\"; exit 1; }
      big=\$(find $T/size/kernels -type f -size +100k) && test -z \"\$big\" || { echo \"\$f \$opt \$tg: \$big\"; exit 1; }
    done; done
  done"
