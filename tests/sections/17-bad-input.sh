# tests/sections/17-bad-input.sh — bad input: clear message, exit 2, no output file
# needs: reference opencl
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== bad input: clear message, exit 2, no output file"
expect_fail "--steps on a model with no img/timesteps/out: exit 2, says what it needs" "needs an input .img., an input .timesteps. and an output .out." \
  "$T/vae_raw/flux" --steps 2
expect_fail "--guidance without --steps: exit 2" "guidance needs --steps" "$T/hc_flux-tiny/flux" --guidance 3
expect_fail "--png on a model with no image output: exit 2, names what it needs" "needs an output .image. shaped \\[1, 3 or 1, H, W\\]" \
  "$T/hc_flux-tiny/flux" --png "$T/bad.o"
expect_fail "--steps 0: exit 2" "steps wants a decimal integer from 1 to 1000" "$T/hc_flux-tiny/flux" --steps 0
expect_fail "--steps with --check of a file without latents: exit 2, names it" "no tensor 'latents'" \
  "$T/hc_flux-tiny/flux" --steps 2 --check "$T/flux-tiny.o"
for bin in "$FLUXCC" "$SAN"; do
  sfx=; [ "$bin" = "$SAN" ] && sfx=" (sanitizers)"
  expect_fail "another model's weights$sfx" "flux-dev-tiny.w: 'guidance_in.in_layer.weight' is not a parameter" \
    "$bin" run examples/flux-tiny.fdsl --weights "$T/flux-dev-tiny.w" --inputs "$T/flux-tiny.i" -o "$T/bad.o"
  expect_fail "wrong dtype$sfx" "flux-tiny-f32.w: parameter 'img_in.weight' is F32\[64,16\] but the model declares bf16\[64,16\]" \
    "$bin" run examples/flux-tiny.fdsl --weights "$T/flux-tiny-f32.w" --inputs "$T/flux-tiny.i" -o "$T/bad.o"
  head -c 4000 "$T/flux-tiny.w" > "$T/trunc.w"
  expect_fail "truncated weights$sfx" "trunc.w" \
    "$bin" run examples/flux-tiny.fdsl --weights "$T/trunc.w" --inputs "$T/flux-tiny.i" -o "$T/bad.o"
  expect_fail "missing input$sfx" "flux-tiny.i: missing input 'guidance'" \
    "$bin" run examples/flux-dev-tiny.fdsl --weights "$T/flux-dev-tiny.w" --inputs "$T/flux-tiny.i" -o "$T/bad.o"
  expect_fail "no such weights file$sfx" "nope.safetensors" \
    "$bin" run examples/flux-tiny.fdsl --weights "$T/nope.safetensors" --inputs "$T/flux-tiny.i" -o "$T/bad.o"
  expect_fail "unknown option$sfx" "unknown option '--frobnicate'" "$bin" params examples/flux-tiny.fdsl --frobnicate
  expect_fail "bad seed$sfx" "--seed wants a decimal integer from 0 to 18446744073709551615, not 'x1'" "$bin" init examples/flux-tiny.fdsl --seed x1 --weights a --inputs b
  expect_fail "run without -o$sfx" "run needs" "$bin" run examples/flux-tiny.fdsl --weights a --inputs b
  expect_fail "unknown dump stage$sfx" "--dump .bogus." "$bin" --dump bogus examples/flux-tiny.fdsl
  expect_fail "output into a missing directory$sfx" "no-such-dir" \
    "$bin" run examples/flux-tiny.fdsl --weights "$T/flux-tiny.w" --inputs "$T/flux-tiny.i" -o "$T/no-such-dir/bad.o"
done
# the same for the emitted binary (flux-tiny, OpenCL)
FB=$T/cl_flux-tiny/flux
expect_fail "binary: another model's weights" "flux-dev-tiny.w: unexpected tensor 'guidance_in.in_layer.bias'" \
  "$FB" --quiet --weights "$T/flux-dev-tiny.w" --random-inputs 1 --out "$T/bad.o"
expect_fail "binary: truncated weights" "trunc.w" "$FB" --quiet --weights "$T/trunc.w" --random-inputs 1 --out "$T/bad.o"
if [ -n "$PY" ]; then
  "$PY" -c "
import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
t = st.load('$T/flux-tiny.w'); t['img_in.bias'] = np.zeros(64, dtype=np.int32); st.save('$T/i32.w', t)"
  expect_fail "binary: a tensor of the wrong dtype" "i32.w: parameter 'img_in.bias' has dtype I32" \
    "$FB" --quiet --weights "$T/i32.w" --random-inputs 1 --out "$T/bad.o"
fi
expect_fail "binary: missing input" "flux-tiny.i.*guidance" \
  "$T/cl_flux-dev-tiny/flux" --quiet --random-weights 1 --inputs "$T/flux-tiny.i" --out "$T/bad.o"
expect_fail "binary: unknown option" "frobnicate" "$FB" --frobnicate
expect_fail "compile: unknown target" "--target 'metal'" "$FLUXCC" examples/flux-tiny.fdsl --opt raw --target metal -o "$T/bad.o"
expect_fail "compile: unknown method" "--opt 'fastest' is not a method" "$FLUXCC" examples/flux-tiny.fdsl --opt fastest -o "$T/bad.o"
touch "$T/afile"
expect_fail "compile: -o is a file" "afile" "$FLUXCC" examples/flux-tiny.fdsl --opt raw -o "$T/afile"
expect_fail "report: not a project" "no-project/records.json" "$FLUXCC" report "$T/no-project"
check "--help exits 0" "$FLUXCC" --help
