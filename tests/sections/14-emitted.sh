# tests/sections/14-emitted.sh — emitted kernels and schedules (golden)
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== emitted kernels and schedules (golden)"
for f in tests/golden/src/*.fdsl; do
  n=$(basename "$f" .fdsl)
  for tg in cuda opencl c; do
    for meth in raw hc tc; do
      [ $meth != raw ] && [ $n != linear_bias ] && [ $n != attention ] && continue   # hc and tc goldens: the matmul, the fused attention
      [ $tg = c ] && [ $meth = tc ] && continue   # no tensor cores on the C target: tc is raw there
      g=tests/golden/kernels/$n/$tg; [ $meth = raw ] || g=tests/golden/kernels/$n/$tg-$meth
      rm -rf "$T/gk"
      (cd tests/golden/src && "$FLUXCC" "$n.fdsl" --opt $meth --target $tg -o "$T/gk" >/dev/null 2>&1)
      if [ -n "$UPDATE" ]; then
        rm -rf "$g"; mkdir -p "tests/golden/kernels/$n"; cp -r "$T/gk/kernels" "$g"
        ok "kernels $n $tg $meth (blessed)"
      elif diff -ru "$g" "$T/gk/kernels" > "$T/diff"; then ok "kernels $n $tg $meth"
      else bad "kernels $n $tg $meth"; head -40 "$T/diff" | sed 's/^/     /'; fi
    done
  done
  (cd tests/golden/src && "$FLUXCC" --dump schedule "$n.fdsl" >"$T/$n.sched" 2>&1 && "$FLUXCC" --dump kernels "$n.fdsl" >>"$T/$n.sched" 2>&1 &&
   "$FLUXCC" --dump uops "$n.fdsl" >>"$T/$n.sched" 2>&1)
  golden "schedule+kernels+uops $n" "$T/$n.sched" "tests/golden/schedule/$n.txt"
done

check "kernel parameters are named after their DSL buffers (p_ + the checkpoint keys' common tail), in the order the header lists them; no dataN left" sh -c "
  for t in cuda opencl c; do $FLUXCC examples/flux-tiny.fdsl --opt hc --target \$t -o $T/pn_\$t >/dev/null && ! grep -l '[( ]data[0-9]' $T/pn_\$t/kernels/* || exit 1; done &&
  grep -q '^//   p_lin_weight in  bf16\[384,64\] double_blocks.0.img_mod.lin.weight' $T/pn_cuda/kernels/*_r_384_64.cu &&
  for f in $T/pn_cuda/kernels/*.cu; do
    want=\$(sed -n 's|^//   \(p_[A-Za-z0-9_]*\) .*|\1|p' \$f | paste -sd' ');
    got=\$(grep -m1 '__global__' \$f | grep -o ' p_[A-Za-z0-9_]*[,)]' | tr -d ' ,)' | paste -sd' ');
    test -n \"\$want\" && test \"\$want\" = \"\$got\" || { echo \"\$f: header \$want, signature \$got\"; exit 1; }; done"
check "--dump kernels: every axis role shows its mark (raw, hc, tc, random; cuda, opencl, c), never (null)" sh -c "
  for a in '--opt raw' '--opt tc' '--opt random --seed 1' '--opt random --seed 2' '--opt random --seed 3' '--opt hc --target opencl' \
           '--opt hc' '--opt hc --target c' '--opt tc --target opencl'; do
    $FLUXCC --dump kernels examples/flux-tiny.fdsl \$a 2>/dev/null || exit 1; done > $T/roles.txt &&
  ! grep -q '(null)' $T/roles.txt &&
  sed -n 's/^kernel .* dims \\[\\([^]]*\\)\\].*/\\1/p' $T/roles.txt | tr ',' '\\n' | sed 's/^[0-9]*//' | sort -u > $T/marks.txt &&
  for m in l g r u rv up v tm tn tk; do grep -qx \$m $T/marks.txt || { echo no axis shows the mark \$m; exit 1; }; done"
