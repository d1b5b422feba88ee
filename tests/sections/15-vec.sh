# tests/sections/15-vec.sh — VEC and RVEC: vector kernels from hand-written opts (--records), golden, and computing what the interpreter does
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== VEC and RVEC: vector kernels from hand-written opts (--records), golden, and computing what the interpreter does"
# VEC: linear_bias: a gathered (packed) weight vector, a vector bias load and
# bf16x8 stores; layer_norm: vector accumulators over strided rows, then
# bf16x16 loads and stores. RVEC: linear_bias: dot products of contiguous
# rows of x and W (float8 accumulators, added across lanes after the loop);
# layer_norm: its row statistics 16 at a time. OpenCL: floatN; CUDA: one
# variable per lane (under emu)
for n in linear_bias layer_norm; do
  (cd tests/golden/src && "$FLUXCC" init $n.fdsl --seed 5 --weights "$T/v_$n.w" --inputs "$T/v_$n.i" >/dev/null &&
   "$FLUXCC" run $n.fdsl --weights "$T/v_$n.w" --inputs "$T/v_$n.i" -o "$T/v_$n.o" >/dev/null)
  for v in vec rvec; do
  V=$(echo $v | tr a-z A-Z)
  for tg in cuda opencl; do
    g=tests/golden/kernels/$n/$tg-$v
    rm -rf "$T/gv"
    (cd tests/golden/src && "$FLUXCC" "$n.fdsl" --opt beam --records $n.$v-$tg.json --target $tg -o "$T/gv" >/dev/null 2>&1)
    if [ -n "$UPDATE" ]; then
      rm -rf "$g"; cp -r "$T/gv/kernels" "$g"; ok "kernels $n $tg $V (blessed)"
    elif diff -ru "$g" "$T/gv/kernels" > "$T/diff"; then ok "kernels $n $tg $V"
    else bad "kernels $n $tg $V"; head -40 "$T/diff" | sed 's/^/     /'; fi
    if [ $tg = opencl ]; then
      check "$n $V on PoCL = interpreter" sh -c "grep -q 'float8\|float16' $T/gv/kernels/*.cl && make -s -C $T/gv >/dev/null 2>&1 &&
        $T/gv/flux --quiet --random-weights 5 --random-inputs 5 --check $T/v_$n.o"
    else
      check "$n $V as CUDA on the CPU (lanes, race check) = interpreter" sh -c "make -s -C $T/gv emu > $T/gv.log 2>&1 && ! grep -i warning $T/gv.log &&
        FLUX_EMU_RACECHECK=1 $T/gv/flux-emu --quiet --random-weights 5 --random-inputs 5 --check $T/v_$n.o"
    fi
  done
  done
done
