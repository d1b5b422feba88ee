# tests/sections/05-ir.sh — IR dumps (golden)
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== IR dumps (golden)"
for f in tests/golden/src/*.fdsl; do
  n=$(basename "$f" .fdsl)
  (cd tests/golden/src && "$FLUXCC" --dump ast "$n.fdsl" >"$T/$n.ast" 2>&1)
  golden "ast $n" "$T/$n.ast" "tests/golden/ast/$n.txt"
  (cd tests/golden/src && "$FLUXCC" --dump graph "$n.fdsl" >"$T/$n.graph" 2>&1)
  golden "graph $n" "$T/$n.graph" "tests/golden/graph/$n.txt"
done
check "graph dump of flux.fdsl is deterministic" sh -c "
  $FLUXCC --dump graph examples/flux.fdsl > $T/g1 && $FLUXCC --dump graph examples/flux.fdsl > $T/g2 && cmp $T/g1 $T/g2"
