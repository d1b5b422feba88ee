# tests/sections/04-diag.sh — diagnostics (golden, also under the sanitizers)
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== diagnostics (golden, also under the sanitizers)"
for f in tests/diag/*.fdsl; do
  n=$(basename "$f" .fdsl)
  (cd tests/diag && "$FLUXCC" --dump graph "$n.fdsl" >/dev/null 2>"$T/$n.err"; echo "exit $?" >>"$T/$n.err")
  golden "diag $n" "$T/$n.err" "tests/diag/$n.err"
  (cd tests/diag && "$SAN" --dump graph "$n.fdsl" >/dev/null 2>"$T/$n.san"; echo "exit $?" >>"$T/$n.san")
  check "diag $n under sanitizers" cmp "$T/$n.err" "$T/$n.san"
done
