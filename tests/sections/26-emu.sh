# tests/sections/26-emu.sh — the emitted CUDA run on the CPU: make emu (warp instructions with PTX semantics, race check on)
# needs: reference flux-mid networks attention opencl bad-input mcts c-target
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== the emitted CUDA run on the CPU: make emu (warp instructions with PTX semantics, race check on)"
# the very same kernels/*.cu, kernel_table.cu and backend_cuda.cu, compiled as
# C++ against templates/cuda/emu; FLUX_EMU_RACECHECK=1 fails a run on any
# shared-memory race, read of unwritten shared memory or partial barrier
RC="FLUX_EMU_RACECHECK=1"
# emu_check NAME DIR REF [FLAGS]: make emu in DIR, then --check against REF with the race check on
emu_check() {
  n=$1 d=$2 ref=$3; shift 3
  check "$n" sh -c "make -s -C $d emu > $d.emu.log 2>&1 && ! grep -i warning $d.emu.log &&
    $RC $d/flux-emu --quiet --random-weights 7 --random-inputs 7 --check $ref $*"
  sed 's/^/     /' "$T/log"
}
for m in flux-tiny flux-tiny-f32 flux-dev-tiny flux-dev-tiny-f32; do
  for meth in raw hc tc random1 random2; do
    rm -rf "$T/emu_${m}_$meth"
    case $meth in random*) opt="--opt random --seed ${meth#random}" ;; *) opt="--opt $meth" ;; esac
    if "$FLUXCC" examples/$m.fdsl $opt -o "$T/emu_${m}_$meth" >/dev/null 2>"$T/emu.err"; then
      emu_check "$m $opt: CUDA text on the CPU = interpreter" "$T/emu_${m}_$meth" "$T/$m.o"
    else bad "$m $opt: compile for cuda"; sed 's/^/     /' "$T/emu.err"; fi
  done
done
rm -rf "$T/emu_mid_tc"
if "$FLUXCC" examples/flux-mid.fdsl --opt tc -o "$T/emu_mid_tc" >/dev/null 2>"$T/emu.err"; then
  emu_check "flux-mid --opt tc (real width, bf16): CUDA text with mma.sync on the CPU = interpreter" "$T/emu_mid_tc" "$T/flux-mid.o"
else bad "flux-mid --opt tc: compile for cuda"; sed 's/^/     /' "$T/emu.err"; fi
rm -rf "$T/emu_vae_tf32"
if "$FLUXCC" examples/vae-decoder-tiny.fdsl --opt tc --tf32 -o "$T/emu_vae_tf32" >/dev/null 2>"$T/emu.err"; then
  emu_check "vae-decoder-tiny --opt tc --tf32: the convs' CUDA text with mma.sync (tf32) on the CPU = interpreter within 5e-3" "$T/emu_vae_tf32" "$T/vae.o" --rtol 5e-3
else bad "vae-decoder-tiny --opt tc --tf32: compile for cuda"; sed 's/^/     /' "$T/emu.err"; fi
check "flux-tiny-odd --opt tc for cuda: its matmuls on mma.sync (padded tiles)" sh -c "
  $FLUXCC examples/flux-tiny-odd.fdsl --opt tc -o $T/emu_odd_tc >/dev/null 2>&1 && test \$(grep -l mma_m16n8k16_bf16 $T/emu_odd_tc/kernels/*.cu | wc -l) -eq \$(grep -l 'TC(0,0)' $T/tc_odd/kernels/*.cl | wc -l)"
emu_check "flux-tiny-odd --opt tc: padded mma.sync tiles on the CPU = interpreter" "$T/emu_odd_tc" "$T/odd.o"
for m in flux-tiny-f32 flux-dev-tiny-f32; do
  "$FLUXCC" examples/$m.fdsl --opt tc --tf32 -o "$T/emu_${m}_tf32" >/dev/null &&
    emu_check "$m --opt tc --tf32: mma.sync m16n8k8 tf32 on the CPU = interpreter within 5e-3" "$T/emu_${m}_tf32" "$T/$m.o" --rtol 5e-3
done
# the searches' choices (made on PoCL above), rendered as CUDA: the records
# replayed for the cuda target, on the CPU schedule they were made on (--tile-n 8)
for r in beam_flux-tiny beam_flux-tiny-f32 mcts_flux-tiny-f32 best_flux-tiny-f32; do
  m=${r#*_}; meth=${r%%_*}
  [ -f "$T/$r/records.json" ] || { bad "$r: no records from the search above"; continue; }
  sed 's/"target":[[:space:]]*"opencl"/"target": "cuda"/' "$T/$r/records.json" > "$T/$r.cuda.json"
  if "$FLUXCC" examples/$m.fdsl --opt $meth --no-cache --records "$T/$r.cuda.json" --tile-n 8 -o "$T/emu_$r" >/dev/null 2>"$T/emu.err"; then
    emu_check "$m --opt $meth (the PoCL search's opts as CUDA) on the CPU = interpreter" "$T/emu_$r" "$T/$m.o"
  else bad "$r: replay for cuda"; sed 's/^/     /' "$T/emu.err"; fi
done
check "a replay on another schedule than its search's is refused, saying which --tile-n to add (exit 2)" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --opt beam --no-cache --records $T/beam_flux-tiny.cuda.json -o $T/emu_wrong_tile 2>$T/tile.err; test \$? -eq 2 &&
  grep -q 'add --tile-n 8' $T/tile.err && test ! -e $T/emu_wrong_tile"
E=$T/emu_flux-tiny_tc
check "emu: the fused attention's CUDA text ran above (flux-tiny tc, race-checked)" sh -c "ls $E/kernels | grep -q _attn_"
check "emu: tests/opt/attention.fdsl --opt tc: the bf16 attentions on mma.sync (20 and 40 tokens, logits ~3e4), the f32 one scalar, race-checked" sh -c "
  $FLUXCC tests/opt/attention.fdsl --opt tc -o $T/emu_att >/dev/null 2>&1 && test \$(grep -l mma_m16n8k16_bf16 $T/emu_att/kernels/*attn*.cu | wc -l) -eq 2 &&
  make -s -C $T/emu_att emu > $T/emu_att.log 2>&1 && ! grep -i warning $T/emu_att.log &&
  $RC $T/emu_att/flux-emu --quiet --random-weights 3 --random-inputs 3 --check $T/p_attention.o"
check "emu: outputs do not depend on the threads' order (FLUX_EMU_SEED shuffles it)" sh -c "
  $E/flux-emu --quiet --random-weights 7 --random-inputs 7 --out $T/emu_o0 && FLUX_EMU_SEED=1 $RC $E/flux-emu --quiet --random-weights 7 --random-inputs 7 --out $T/emu_o1 &&
  FLUX_EMU_SEED=2 FLUX_EMU_THREADS=1 $E/flux-emu --quiet --random-weights 7 --random-inputs 7 --out $T/emu_o2 && cmp $T/emu_o0 $T/emu_o1 && cmp $T/emu_o0 $T/emu_o2"
check "emu: the two tensor-core emulations agree bit for bit on flux-tiny (OpenCL local memory vs CUDA mma.sync on the CPU)" sh -c "
  $T/tc_flux-tiny/flux --quiet --random-weights 7 --random-inputs 7 --out $T/tc_cl.o && cmp $T/tc_cl.o $T/emu_o0"
check "emu: ... and on the tc golden kernel (linear_bias)" sh -c "
  cd tests/golden/src && $FLUXCC linear_bias.fdsl --opt tc -o $T/lb_cu >/dev/null && $FLUXCC linear_bias.fdsl --opt tc --target opencl -o $T/lb_cl >/dev/null &&
  make -s -C $T/lb_cu emu >/dev/null 2>&1 && make -s -C $T/lb_cl >/dev/null 2>&1 && grep -q mma_m16n8k16_bf16 $T/lb_cu/kernels/*.cu &&
  $RC $T/lb_cu/flux-emu --quiet --random-weights 3 --random-inputs 3 --out $T/lb_cu.o && $T/lb_cl/flux --quiet --random-weights 3 --random-inputs 3 --out $T/lb_cl.o &&
  cmp $T/lb_cu.o $T/lb_cl.o"
check "emu: ... and on the tc golden attention (mma.sync on CUDA; on OpenCL its scalar stand-in sums in the mma lanes' order)" sh -c "
  cd tests/golden/src && $FLUXCC attention.fdsl --opt tc -o $T/ag_cu >/dev/null && $FLUXCC attention.fdsl --opt tc --target opencl -o $T/ag_cl >/dev/null &&
  make -s -C $T/ag_cu emu >/dev/null 2>&1 && make -s -C $T/ag_cl >/dev/null 2>&1 && grep -q mma_m16n8k16_bf16 $T/ag_cu/kernels/*attn*.cu &&
  $RC $T/ag_cu/flux-emu --quiet --random-weights 3 --random-inputs 3 --out $T/ag_cu.o && $T/ag_cl/flux --quiet --random-weights 3 --random-inputs 3 --out $T/ag_cl.o &&
  cmp $T/ag_cu.o $T/ag_cl.o"
check "emu: --bench times forwards on the CPU, also as a CUDA Graph replay" sh -c "
  $E/flux-emu --quiet --random-weights 1 --random-inputs 1 --bench 2 | grep -q 'median' &&
  $E/flux-emu --quiet --random-weights 1 --random-inputs 1 --bench 2 --graph | grep -q 'CUDA Graph'"
# --profile N --trace F: every launch timed alone by the device, in the study's line format, and a Chrome/Perfetto trace
for pb in "OpenCL:$T/hc_flux-tiny/flux" "C:$T/c_fluxtinyhc/flux" "CUDA on the emulation:$E/flux-emu"; do
  b=${pb#*:}
  if [ -n "$PY" ]; then
    check "${pb%%:*}: --profile 3 --trace: a line per launch (kernel N name [grid] [block] takes X ms, GFLOPS, GB/s), per-kernel shares, the same in the trace" sh -c "
      $b --quiet --random-weights 1 --random-inputs 1 --profile 3 --trace $T/prof.json > $T/prof.out &&
      $PY tests/check_profile.py $T/prof.out $T/prof.json \$(awk '/^  {[0-9]+, [0-9]+},\$/ {n++} END {print n}' \$(dirname $b)/schedule.c)"
  fi
done
check "fluxcc report DIR --trace: the binary's measured times per kernel, summing to its profile's forward" sh -c "
  $T/hc_flux-tiny/flux --quiet --random-weights 1 --random-inputs 1 --profile 3 --trace $T/prof_cl.json > $T/prof_cl.out &&
  $FLUXCC report $T/hc_flux-tiny --device h200 --trace $T/prof_cl.json > $T/rep_tr.txt && grep -q 'by ./flux --profile' $T/rep_tr.txt &&
  test \$(grep -c ' trace  ' $T/rep_tr.txt) -eq \$(ls $T/hc_flux-tiny/kernels | wc -l) &&
  want=\$(sed -n 's/.*; \\([0-9.]*\\) ms per forward in all/\\1/p' $T/prof_cl.out) && got=\$(awk '\$1 == \"total\" {print \$6}' $T/rep_tr.txt) &&
  awk -v a=\$want -v b=\$got 'BEGIN {exit !(a - b < 0.002 && b - a < 0.002)}'"
expect_fail "report --trace of another project (the CUDA emulation's): exit 2, says it is another compile" \
  "a trace of another compile of flux-tiny.fdsl (project [0-9a-f]*), not of this one" "$FLUXCC" report "$T/hc_flux-tiny" --trace "$T/prof.json"
$PY -c "import json; t = json.load(open('$T/prof.json')); del t['otherData']['project']; json.dump(t, open('$T/prof_old.json', 'w'))"
expect_fail "... the same trace without the compile's hash (an older ./flux): refused as not this project's, exit 2" "a trace of another compile of flux-tiny.fdsl (project not said)" \
  "$FLUXCC" report "$T/hc_flux-tiny" --trace "$T/prof_old.json"
expect_fail "report --trace of another compile of the same model (hc's trace, tc's project): exit 2, says both compiles" \
  "a trace of another compile of flux-tiny.fdsl (project [0-9a-f]*), not of this one" "$FLUXCC" report "$T/tc_flux-tiny" --trace "$T/prof_cl.json"
for bad in "dur:1e300:'dur' is out of range, not a duration" "dur:-1:'dur' is out of range" "dur:\"7\":'dur' is not a number" \
           "dur:DEL:'dur' is missing" "file:\"kernels/x.cl\":traceEvents.2.: kernel file 'kernels/x.cl': not one of"; do
  key=${bad%%:*} rest=${bad#*:} val=${rest%%:*} want=${rest#*:}
  $PY -c "import json, sys; t = json.load(open('$T/prof_cl.json')); e = t['traceEvents'][2]
d = e['args'] if '$key' == 'file' else e
if '$val' == 'DEL': del d['$key']
else: d['$key'] = json.loads(sys.argv[1])
json.dump(t, open('$T/prof_bad.json', 'w'))" "$val" 2>/dev/null
  expect_fail "report --trace with a bad launch ($key $val): exit 2, names the event and the field" "$want" \
    "$FLUXCC" report "$T/hc_flux-tiny" --trace "$T/prof_bad.json"
done
$PY -c "import json; t = json.load(open('$T/prof_cl.json')); t['otherData']['timer'] = '\x1b[2J'; json.dump(t, open('$T/prof_bad.json', 'w'))"
expect_fail "report --trace with a terminal control sequence in a string (fuzz finding): exit 2, escaped, never printed raw" \
  "otherData: 'timer' is \"\\\\033\[2J\": wants one line of printable text" "$FLUXCC" report "$T/hc_flux-tiny" --trace "$T/prof_bad.json"
expect_fail "--trace into a missing folder: exit 2 naming it, no partial file" "$T/nodir/t.json" \
  "$T/hc_flux-tiny/flux" --quiet --random-weights 1 --random-inputs 1 --trace "$T/nodir/t.json"
expect_fail "emu: truncated weights" "trunc.w" "$E/flux-emu" --quiet --weights "$T/trunc.w" --random-inputs 1 --out "$T/bad.o"
# each fault is put into the CUDA text of a staged tensor-core kernel (or a
# GROUP kernel); the run must fail: a race report or a failed --check
# emu_fault NAME PATTERN FILE-PATTERN SED: the broken project must fail, saying PATTERN
emu_fault() {
  n=$1 pat=$2 src=$3 fix=$4
  rm -rf "$T/ef"; cp -r "$src" "$T/ef"
  f=$(grep -l "$fix" "$T"/ef/kernels/*.cu | head -1)
  if [ -z "$f" ]; then bad "$n: no kernel to break"; return; fi
  cp "$f" "$T/ef.orig"; sed -i "$5" "$f"
  if cmp -s "$f" "$T/ef.orig"; then bad "$n: the fault was not put in"; return; fi
  make -s -C "$T/ef" emu >/dev/null 2>&1 || { bad "$n: does not build"; return; }
  FLUX_EMU_RACECHECK=1 "$T/ef/flux-emu" --quiet --allow-edited --random-weights 7 --random-inputs 7 --check "$T/flux-tiny.o" >"$T/ef.out" 2>&1; rc=$?
  if [ $rc -ne 0 ] && grep -q -- "$pat" "$T/ef.out"; then ok "$n"; else bad "$n (exit $rc)"; head -5 "$T/ef.out" | sed 's/^/     /'; fi
}
emu_fault "emu fault: wrong mma.sync operand packing fails --check" "FAIL" "$E" "mma_m16n8k16_bf16" \
  's/^\( *pk_bf16(\)\([a-z0-9]*\), \([a-z0-9]*\)/\1\3, \2/'
emu_fault "emu fault: a missing cp.async.wait_group is caught (shared memory read before its copy landed)" \
  "which no thread of the block has written" "$E" "cp_async_wait_group" '/cp_async_wait_group(1);/d'
emu_fault "emu fault: a missing __syncthreads() after the cp.async wait is caught" \
  "no thread of the block has written\|race: thread" "$E" "cp_async_wait_group" '/cp_async_wait_group(1);/{n;/__syncthreads/d}'
emu_fault "emu fault: a missing __syncthreads() after f32 staging is caught" "race: thread\|no thread of the block has written" "$E" "sts_f32(tc_stage" \
  '0,/^  __syncthreads();/{/^  __syncthreads();/d}'
emu_fault "emu fault: a missing __syncthreads() before a GROUP combine is caught" "race: thread\|no thread of the block has written" "$T/emu_flux-tiny_hc" "sts_f32(temp0" \
  '0,/__syncthreads();/{/__syncthreads();/d}'
emu_fault "emu fault: a barrier only part of the block reaches fails the run" "reached by only" "$E" "cp_async_wait_group" \
  '/__shared__/a\  if (threadIdx.x == 5) return;'
