# tests/sections/21-project-writes.sh — project writes: all or nothing, one writer at a time, no foreign kernel files
# needs: 
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== project writes: all or nothing, one writer at a time, no foreign kernel files"
rm -rf "$T/atom" "$T/atom.ref" "$T/atom.new"
"$FLUXCC" examples/flux-tiny.fdsl --opt raw --target opencl -o "$T/atom" >/dev/null && cp -r "$T/atom" "$T/atom.ref"
"$FLUXCC" examples/flux-tiny-f32.fdsl --opt hc --target opencl -o "$T/atom.new" >/dev/null
nfiles=$(find "$T/atom.new" -type f | wc -l)
check "a compile failing at any of its $nfiles file writes leaves the old project whole, and no temporary files" sh -c "
  i=1; while [ \$i -le $nfiles ]; do
    FLUXCC_FAULT=write-fail=\$i $FLUXCC examples/flux-tiny-f32.fdsl --opt hc --target opencl -o $T/atom >/dev/null 2>$T/atom.err; rc=\$?
    [ \$rc -eq 2 ] && grep -q 'No space left on device' $T/atom.err || { echo \"write \$i: exit \$rc\"; cat $T/atom.err; exit 1; }
    diff -r $T/atom.ref $T/atom || { echo \"write \$i: the old project changed\"; exit 1; }
    ls -a $T | grep -q 'atom.fluxcc-' && { echo \"write \$i: a staging folder is left\"; exit 1; }
    i=\$((i+1)); done
  $FLUXCC examples/flux-tiny-f32.fdsl --opt hc --target opencl -o $T/atom >/dev/null && diff -r -x provenance.json $T/atom.new $T/atom"
check "recompiling CUDA over OpenCL leaves no OpenCL file behind" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --opt raw -o $T/atom >/dev/null && ! ls $T/atom/kernels | grep -q '\.cl$' && test ! -e $T/atom/kernel_prelude.cl &&
  $FLUXCC examples/flux-tiny.fdsl --opt raw --target opencl -o $T/atom >/dev/null && test ! -e $T/atom/kernel_table.cu && ! ls $T/atom/kernels | grep -q '\.cu$'"
"$FLUXCC" examples/flux-tiny.fdsl --opt raw --target opencl -o "$T/atom.a" >/dev/null
"$FLUXCC" examples/flux-tiny-f32.fdsl --opt raw --target opencl -o "$T/atom.b" >/dev/null
check "concurrent compiles into one directory never make a mixed project (5 rounds of 4 writers)" sh -c "
  for r in 1 2 3 4 5; do
    for w in a b a b; do if [ \$w = a ]; then m=flux-tiny; else m=flux-tiny-f32; fi
      $FLUXCC examples/\$m.fdsl --opt raw --target opencl -o $T/atomc >/dev/null 2>&1 & done; wait
    diff -r -x provenance.json $T/atom.a $T/atomc >/dev/null || diff -r -x provenance.json $T/atom.b $T/atomc >/dev/null || exit 1
    ls -a $T | grep -q 'atomc.fluxcc-' && exit 1
  done; true"
check "a killed compile's staging folder is removed by the next compile" sh -c "
  mkdir -p $T/atomk.fluxcc-dead && touch $T/atomk.fluxcc-dead/x && $FLUXCC examples/flux-tiny.fdsl --opt raw --target opencl -o $T/atomk >/dev/null &&
  test ! -e $T/atomk.fluxcc-dead"
check "compile: -o in folders that do not exist yet creates them (as mkdir -p)" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --opt raw --target opencl -o $T/new/nested/proj >/dev/null && test -f $T/new/nested/proj/schedule.c"
mkdir -p "$T/notaproject" && echo keep > "$T/notaproject/notes.txt"
expect_fail "compile: -o names a directory that is not a fluxcc project" "not a fluxcc project" \
  "$FLUXCC" examples/flux-tiny.fdsl --opt raw --target opencl -o "$T/notaproject"
check "... and that directory is left alone" grep -qx keep "$T/notaproject/notes.txt"
make -s -C "$T/atom.a" >/dev/null 2>&1
check "the binary refuses kernel files of another compile (FLUX_DIR at another model's project), exit 2, before the device" sh -c "
  FLUX_DIR=$T/atom.b $T/atom.a/flux --quiet 2>$T/foreign.err; test \$? -eq 2 && grep -q 'is not the file fluxcc wrote: edited, or another compile' $T/foreign.err"

check "one constant changed (t * 1000 -> 500): one kernel file differs, and schedule.c's hash of it; THETA: no kernel file (its table is in schedule.c)" sh -c "
  mkdir -p $T/c1 $T/c2 && cp examples/*.fdsl $T/c1/ && cp examples/*.fdsl $T/c2/ &&
  sed -i 's/cast(t \\* 1000.0, f32)/cast(t * 500.0, f32)/' $T/c2/flux-model.fdsl && sed -i 's/^const THETA = 10000/const THETA = 5000/' $T/c1/flux-tiny.fdsl &&
  grep -q 't \\* 500.0' $T/c2/flux-model.fdsl && grep -q 'THETA = 5000' $T/c1/flux-tiny.fdsl &&
  for m in hc tc; do
    $FLUXCC examples/flux-tiny.fdsl --opt \$m -o $T/c0_\$m >/dev/null 2>&1 && $FLUXCC $T/c1/flux-tiny.fdsl --opt \$m -o $T/c1_\$m >/dev/null 2>&1 &&
    $FLUXCC $T/c2/flux-tiny.fdsl --opt \$m -o $T/c2_\$m >/dev/null 2>&1 || exit 1
    test \$(diff -rq $T/c0_\$m/kernels $T/c2_\$m/kernels | wc -l) -eq 1 && diff -rq $T/c0_\$m/kernels $T/c1_\$m/kernels &&
    test \$(diff $T/c0_\$m/schedule.c $T/c2_\$m/schedule.c | grep -c '^> ') -eq 2 || exit 1
  done"

check "diff -r of flux-tiny's raw, hc and tc kernels/ pairs every file (named by number and name before opts)" sh -c "
  test \$(ls $T/c0_hc/kernels | wc -l) -ge 30 && $FLUXCC examples/flux-tiny.fdsl --opt raw -o $T/c0_raw >/dev/null 2>&1 &&
  ! diff -rq $T/c0_raw/kernels $T/c0_hc/kernels | grep 'Only in' && ! diff -rq $T/c0_hc/kernels $T/c0_tc/kernels | grep 'Only in' &&
  diff -rq $T/c0_hc/kernels $T/c0_tc/kernels | grep -q '^Files'"
