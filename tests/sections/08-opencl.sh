# tests/sections/08-opencl.sh — compiled programs (--opt raw, OpenCL on PoCL) vs the interpreter
# needs: reference
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== compiled programs (--opt raw, OpenCL on PoCL) vs the interpreter"
# outputs are poisoned (NaN) by the runtime before the forward; random
# weights/inputs with seed 7 are bit-identical to `fluxcc init --seed 7`
for m in flux-tiny-f32 flux-dev-tiny-f32 flux-tiny flux-dev-tiny; do
  check "$m: compile hc/opencl" "$FLUXCC" examples/$m.fdsl --opt hc --target opencl -o "$T/hc_$m"
  check "$m: hc build" make -C "$T/hc_$m"
  check "$m: hc on PoCL = interpreter" "$T/hc_$m/flux" --quiet --random-weights 7 --random-inputs 7 --check "$T/$m.o"
  sed 's/^/     /' "$T/log"
  check "$m: compile tc/opencl (mma fragments emulated in local memory)" "$FLUXCC" examples/$m.fdsl --opt tc --target opencl -o "$T/tc_$m"
  check "$m: tc build" make -C "$T/tc_$m"
  check "$m: tc on PoCL = interpreter" "$T/tc_$m/flux" --quiet --random-weights 7 --random-inputs 7 --check "$T/$m.o"
  sed 's/^/     /' "$T/log"
  check "$m: compile raw/opencl" "$FLUXCC" examples/$m.fdsl --opt raw --target opencl -o "$T/cl_$m"
  check "$m: build (cc -Wall -Wextra, no warnings)" sh -c "make -C '$T/cl_$m' > '$T/cl_$m.log' 2>&1 && ! grep -i warning '$T/cl_$m.log'"
  check "$m: PoCL output = interpreter (f32 1e-5 / bf16 2e-2 rel L2, nothing unwritten)" \
    "$T/cl_$m/flux" --quiet --random-weights 7 --random-inputs 7 --check "$T/$m.o"
  sed 's/^/     /' "$T/log"
  check "$m: the same from the weight and input files" \
    "$T/cl_$m/flux" --quiet --weights "$T/$m.w" --inputs "$T/$m.i" --check "$T/$m.o" --out "$T/cl_$m.out"
done
check "./flux --out says what it wrote (path, tensors, bytes); --quiet does not" sh -c "
  '$T/cl_flux-tiny/flux' --random-weights 7 --random-inputs 7 --out '$T/said.st' > '$T/said' &&
  grep -qx \"wrote:    $T/said.st (1 tensor, \$(stat -c %s '$T/said.st') bytes)\" '$T/said' && cmp '$T/said.st' '$T/cl_flux-tiny.out' &&
  '$T/cl_flux-tiny/flux' --quiet --random-weights 7 --random-inputs 7 --out '$T/said.st' > '$T/said' && test ! -s '$T/said'"
