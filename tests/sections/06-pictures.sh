# tests/sections/06-pictures.sh — pictures (--format dot, golden)
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== pictures (--format dot, golden)"
for f in tests/golden/src/*.fdsl; do
  n=$(basename "$f" .fdsl)
  (cd tests/golden/src && "$FLUXCC" --dump graph --format dot "$n.fdsl" >"$T/$n.graph.dot" 2>&1)
  golden "dot graph $n" "$T/$n.graph.dot" "tests/golden/dot/$n.graph.dot"
  (cd tests/golden/src && "$FLUXCC" --dump schedule --format dot --opt hc "$n.fdsl" >"$T/$n.schedule.dot" 2>&1)
  golden "dot schedule $n" "$T/$n.schedule.dot" "tests/golden/dot/$n.schedule.dot"
  rm -rf "$T/dotp"
  (cd tests/golden/src && "$FLUXCC" "$n.fdsl" --opt hc --target opencl -o "$T/dotp" >/dev/null 2>&1 &&
   "$FLUXCC" report "$T/dotp" --format dot) >"$T/$n.report.dot" 2>&1
  golden "dot report $n" "$T/$n.report.dot" "tests/golden/dot/$n.report.dot"
done
if command -v dot >/dev/null 2>&1; then
  check "graphviz renders every golden picture" sh -c "for f in tests/golden/dot/*.dot; do dot -Tsvg \"\$f\" >/dev/null || exit 1; done"
else
  skip=$((skip + 1)); echo "SKIP graphviz renders the pictures: dot is not installed"
fi
check "the README's pictures are current (docs/*.dot; make pictures renders them)" sh -c "
  $FLUXCC --dump schedule --format dot --opt tc examples/flux-blocks.fdsl | cmp - docs/flux-blocks-schedule.dot &&
  $FLUXCC examples/flux-blocks.fdsl --opt tc -o $T/pics >/dev/null && $FLUXCC report $T/pics --format dot | cmp - docs/flux-blocks-report.dot &&
  $FLUXCC --dump graph --format dot tests/golden/src/softmax.fdsl | cmp - docs/softmax-graph.dot"
# a launch has no kernel copy of its own (Schedule.l refers to Schedule.k):
# every launch of a kernel shows the opts its method gave that kernel
for meth in hc tc random; do
  check "--dump schedule --format dot --opt $meth: every launch of a kernel shows its opts" sh -c "
    $FLUXCC --dump schedule --format dot --opt $meth examples/flux-tiny.fdsl 2>/dev/null |
      sed -n 's/.*(kernel \\([0-9]*\\))\\\\l\\([^\\\\]*\\)\\\\l.*/\\1 \\2/p' > $T/dc.txt &&
    test \$(awk '{print \$1}' $T/dc.txt | sort | uniq -d | wc -l) -gt 0 && test -z \"\$(sort -u $T/dc.txt | awk '{print \$1}' | uniq -d)\""
done
check "--format dot elsewhere is bad usage" sh -c "
  $FLUXCC --dump ast --format dot examples/flux-tiny.fdsl 2>$T/fmt.err; test \$? -eq 2 && grep -q 'is for --dump graph' $T/fmt.err &&
  $FLUXCC --dump graph --format svg examples/flux-tiny.fdsl 2>$T/fmt.err; test \$? -eq 2 && grep -q \"use text or dot\" $T/fmt.err"
