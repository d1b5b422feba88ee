# tests/sections/03-params.sh — parameters of the full models
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== parameters of the full models"
check "params flux.fdsl = the checkpoint manifest (776 tensors)" sh -c "
  $FLUXCC params examples/flux.fdsl > $T/p.tsv &&
  grep -v '^total' $T/p.tsv | sort > $T/mine && grep -v '^#' tests/data/flux1-schnell-params.tsv | sort > $T/ref &&
  diff $T/mine $T/ref && test \$(wc -l < $T/mine) -eq 776 && grep -qx 'total	11891178560' $T/p.tsv"
check "params flux-dev.fdsl = manifest + guidance_in (780 tensors)" sh -c "
  $FLUXCC params examples/flux-dev.fdsl > $T/d.tsv &&
  grep -v '^total' $T/d.tsv | grep -v '^guidance_in' | sort | diff - $T/ref &&
  grep '^guidance_in' $T/d.tsv | sed 's/^guidance_in/time_in/' | sort > $T/g1 && grep '^time_in' $T/ref > $T/g2 && diff $T/g1 $T/g2 &&
  test \$(grep -vc '^total' $T/d.tsv) -eq 780 && grep -qx 'total	11901408320' $T/d.tsv"
