# tests/sections/24-rl.sh — the learned cost model (XGBoost) and --opt rl on PoCL
# needs: reference attention beam
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== the learned cost model (XGBoost) and --opt rl on PoCL"
check "--dump features: the cost model's features of each kernel (golden)" sh -c "
  $FLUXCC examples/flux-tiny.fdsl --dump features --opt hc --target opencl > $T/features.txt"
golden "features of flux-tiny under hc" "$T/features.txt" tests/golden/flux-tiny.hc.features
check "flux-tiny-f32: --opt rl builds and passes --check against the interpreter; its records are consistent" sh -c "
  $FLUXCC examples/flux-tiny-f32.fdsl --opt rl $BEAMOPTS --cache $T/bcache -o $T/rl_flux-tiny-f32 2> $T/rl.err &&
  make -s -C $T/rl_flux-tiny-f32 >/dev/null 2>&1 && $T/rl_flux-tiny-f32/flux --quiet --random-weights 7 --random-inputs 7 --check $T/flux-tiny-f32.o &&
  { [ -z '$PY' ] || $PY tests/check_records.py $T/rl_flux-tiny-f32; } && grep -q '^fluxcc: cost model .*model-.*-f[0-9]*.json' $T/rl.err &&
  grep -q '\"cost_model\":' $T/rl_flux-tiny-f32/provenance.json &&
  $FLUXCC report $T/rl_flux-tiny-f32 | grep -q '^cost model: its scores order [0-9.]*% of [0-9]* pairs of measured candidates'"
check "the cache keeps one model per device and feature version, trained on its entries" sh -c "
  test \$(ls $T/bcache | grep -c '^model-.*-f[0-9]*\.json\$') -eq 1 && grep -q '\"rows\":[[:space:]]*[1-9]' $T/bcache/model-*.json"
# timings a function of the source (test switch): the searches below are reproducible
FT="env FLUXCC_FAULT=fake-time"
check "rl is deterministic: the same seed and timings give the same candidates, scores and choices" sh -c "
  for r in 1 2; do $FT $FLUXCC tests/opt/matmul.fdsl --opt rl --target opencl --budget 14 --seed 5 --no-cache \
    -o $T/det_rl_\$r 2>/dev/null && grep -v 'search_s\|at_s' $T/det_rl_\$r/records.json > $T/det_rl_\$r.rec || exit 1; done &&
  cmp $T/det_rl_1.rec $T/det_rl_2.rec && test \$(grep -c '\"measured\":[[:space:]]*true' $T/det_rl_1.rec) -ge 8"
check "rl's forward budget: a kernel's share is its launches x best baseline over the forward's; candidates by the root of its time over the heaviest's, which gets --budget" sh -c "
  $FT $FLUXCC tests/opt/attention.fdsl --opt rl --target opencl --budget 12 --seed 5 --no-cache -o $T/fwd_rl 2> $T/fwd_rl.err &&
  grep -q '^fluxcc: rl: the forward by the baselines: [0-9.]* us; [0-9]* of 15 kernels searched further, at most [0-9]* candidates in all' $T/fwd_rl.err &&
  { [ -z '$PY' ] || { $PY tests/check_records.py $T/fwd_rl && $PY -c \"
import json
r = json.load(open('$T/fwd_rl/records.json'))
w = [len(k['launch_sites']) * min(c['min_us'] for c in k['candidates'] if c['round'] == 0 and c['status'] == 'ok') for k in r['kernels']]
top, zero, some = max(w), 0, 0
for k, x in zip(r['kernels'], w):
    used = sum(1 for c in k['candidates'] if c['round'] == 0)
    want = min(int(12 * (x / top) ** 0.5 / 4) * 4, 12 - used)
    assert abs(k['forward_share'] - x / sum(w)) < 1e-5 and k['allotted'] == want, (k['name'], k['forward_share'], x / sum(w), k['allotted'], want)
    assert sum(1 for c in k['candidates'] if c['measured'] and c['round'] > 0) <= want
    zero += want == 0; some += want > 0
assert zero > 0 and some > 0, (zero, some)
\"; }; }"
check "rl starts a kernel from the kernels chosen for earlier kernels of its shape (its peers): timed in its first batch" sh -c "
  [ -z '$PY' ] || $PY -c \"
import json
ks, used = json.load(open('$T/fwd_rl/records.json'))['kernels'], 0
for u, k in enumerate(ks):
    if k['allotted'] == 0:
        continue
    hc, peers = [c['opts'] for c in k['candidates'] if c['from'] == 'hc'], []
    for p in reversed(ks[:u]):  # the latest first, not HC's, each once
        o = [x['op'] if x['op'] == 'NOLOCALS' else '%s(%d,%d)' % (x['op'], x['axis'], x['amount']) for x in p['opts']]  # as a candidate's
        if p['name_before_opts'] == k['name_before_opts'] and o and o not in hc and o not in peers:
            peers.append(o)
    for o in peers[:2]:
        assert any(c['opts'] == o and c['round'] <= 1 and c['measured'] for c in k['candidates']), (u, k['name'], o)
        used += 1
assert used > 0, 'no kernel had a peer: the test says nothing'
\""
check "rl stops a kernel started by its peers after 2 batches that time nothing faster (3 without peers); the batch that would stop it times HC's untimed children first (records' pick: sweep)" sh -c "
  $FT $FLUXCC tests/opt/attention.fdsl --opt rl --target opencl --budget 32 --seed 5 --no-cache -o $T/pat_rl 2> $T/pat_rl.err &&
  { [ -z '$PY' ] || $PY tests/check_rl_patience.py $T/pat_rl; }"
sed '0,/"pick":[[:space:]]*"rank"/s//"pick": "guess"/' "$T/pat_rl/records.json" > "$T/badpick.json"
sed '0,/"stopped":[[:space:]]*"patience"/s//"stopped": "tired"/' "$T/pat_rl/records.json" > "$T/badstop.json"
expect_fail "train: a candidate's pick that is none of RL's" "candidate [0-9]*: 'pick' is not one of rank, explore, peer, sweep" \
  "$FLUXCC" train "$T/badpick.json" -o "$T/bad.o"
expect_fail "train: a kernel's stop that is none of RL's" "'stopped' is not one of budget, patience, stall" \
  "$FLUXCC" train "$T/badstop.json" -o "$T/bad.o"
# the same RL search in the sanitizer build: its first pass built ahead in (sanitized) children, the
# forward budget, peers, the per-batch refits and the predicted records, with nothing reported
# (PoCL's and LLVM's own leaks suppressed) and the same records as the plain build's but for clocks
check "rl in the sanitizer build: nothing reported, and the same candidates and choices as the plain build" sh -c "
  $FT LSAN_OPTIONS=suppressions=$TOP/tests/lsan-pocl.supp $SAN tests/opt/attention.fdsl --opt rl --target opencl --budget 12 --seed 5 \
    --no-cache -o $T/fwd_rl_san 2> $T/fwd_rl_san.err && ! grep -q 'Sanitizer\|runtime error' $T/fwd_rl_san.err &&
  grep -q 'built ahead in child processes' $T/fwd_rl_san.err &&
  grep -v 'search_s\|at_s' $T/fwd_rl/records.json > $T/fwd_rl.rec && grep -v 'search_s\|at_s' $T/fwd_rl_san/records.json | cmp - $T/fwd_rl.rec"
# PoCL builds a search's candidates with templates/pocl_builtins.cl for opencl-c.h: a kernel
# calling a builtin it lacks builds only with the header (a warning, then the header)
check "search builds on PoCL: templates/pocl_builtins.cl declares every builtin the kernels call (each unary op, f16, bf16, vectors)" sh -c "
  mkdir -p $T/pc_lean && POCL_CACHE_DIR=$T/pc_lean $FT $FLUXCC tests/opt/builtins.fdsl --opt beam --target opencl --budget 16 --seed 5 --no-cache \\
    -o $T/builtins 2> $T/builtins.err &&
  ! grep -q 'PoCL: a program built with opencl-c.h and not without it' $T/builtins.err &&
  test \$(grep -c -- '-> [a-z]*: best' $T/builtins.err) -eq 4 && grep -q 'ld_f16(' $T/builtins/kernels/*.cl && grep -q 'st_f16(' $T/builtins/kernels/*.cl &&
  for f in exp log sqrt sin cos tanh fabs fmax fmin; do grep -q \"[^a-z_]\$f(\" $T/builtins/kernels/*.cl || exit 1; done &&
  $FLUXCC tests/opt/builtins.fdsl --opt hc --target opencl -o $T/builtins_hc >/dev/null && grep -q 'float[0-9][0-9]* alu[0-9]* = tanh(' $T/builtins_hc/kernels/*.cl &&
  { [ -z '$PY' ] || $PY -c \"
import json  # every kernel's vector forms (hc's: tanh on floatN) built and run too (the where's: select on floatN)
for k in json.load(open('$T/builtins/records.json'))['kernels']:
    assert any(c['measured'] and c['status'] in ('ok', 'slow') and any(o.startswith('VEC') for o in c['opts']) for c in k['candidates']), k['name']
\"; }"
check "search builds on PoCL: the same machine code as with opencl-c.h (every candidate of that search, by kernel and local size)" sh -c "
  mkdir -p $T/pc_hdr && POCL_CACHE_DIR=$T/pc_hdr FLUXCC_FAULT=fake-time,pocl-header $FLUXCC tests/opt/builtins.fdsl --opt beam --target opencl \\
    --budget 16 --seed 5 --no-cache -o $T/builtins_hdr 2>/dev/null &&
  for c in lean hdr; do
    find $T/pc_\$c -name '*.so' | while read -r f; do d=\$(dirname \"\$f\"); echo \"\$(basename \"\$(dirname \"\$d\")\")/\$(basename \"\$d\") \$(objdump -d --no-show-raw-insn \"\$f\" | tail -n +3 | md5sum)\"; done | sort > $T/so_\$c.txt
  done && test \$(wc -l < $T/so_lean.txt) -ge 20 && cmp $T/so_lean.txt $T/so_hdr.txt"
check "fluxcc train: a model from records.json files (BEAM's and MCTS's), written atomically" sh -c "
  { $FLUXCC train $T/det_beam_1/records.json 2>/dev/null; test \$? -eq 2; } &&
  $FLUXCC train $T/det_beam_1/records.json $T/det_mcts_1/records.json -o $T/m.json > $T/train.out &&
  grep -q '^trained on [0-9]* candidates of 4 kernels (2 files), measured on ' $T/train.out &&
  grep -q '\"fluxcc_cost_model\":' $T/m.json && ! ls $T | grep -q 'm.json.tmp'"
if [ -n "$PY" ]; then
  check "fluxcc train: every leaf of a split tree holds a hessian weight of 8 or more (costmodel.c LEAF_WEIGHT)" \
    "$PY" tests/check_model_leaves.py "$T/m.json" 8
  check "scripts/rank-transfer.py: the model's picks among a search's candidates, more picks never worse, the random columns as every k-subset gives" sh -c "
    $PY scripts/rank-transfer.py --min-candidates 2 $T/m.json $T/det_beam_1/records.json > $T/rt.out &&
    $PY tests/check_rank_transfer.py $T/rt.out $T/det_beam_1/records.json 2"
  check "scripts/rank-transfer.py: records given as the model, or a missing file: named, exit 1, no table" sh -c "
    { $PY scripts/rank-transfer.py $T/det_beam_1/records.json $T/det_beam_1/records.json > $T/rt.bad 2> $T/rt.err; test \$? -eq 1; } &&
    grep -q 'det_beam_1/records.json: not a fluxcc cost model' $T/rt.err && test ! -s $T/rt.bad &&
    { $PY scripts/rank-transfer.py $T/m.json $T/det_beam_1/records.json $T/missing.json > $T/rt.bad 2> $T/rt.err; test \$? -eq 1; } &&
    grep -q 'missing.json: .*No such file' $T/rt.err && test ! -s $T/rt.bad"
else
  bad "fluxcc train's leaves and scripts/rank-transfer.py: need Python 3 with NumPy (sh scripts/deps.sh test)"
fi
check "fluxcc train: a model from a cache directory (its entries; older or other files skipped)" sh -c "
  $FLUXCC train $T/bcache -o $T/mc.json > $T/trainc.out && grep -q '^trained on [0-9]* candidates of [0-9]* kernels' $T/trainc.out"
check "--model FILE with BEAM: each round times the model's top --measure, the rest recorded as predicted; all timed ones validated" sh -c "
  $FT $FLUXCC tests/opt/matmul.fdsl --opt beam --target opencl --budget 30 --seed 5 --no-cache --model $T/m.json --measure 3 -o $T/guided 2>/dev/null &&
  { [ -z '$PY' ] || $PY tests/check_records.py $T/guided --expect-predicted; } &&
  { [ -z '$PY' ] || $PY -c \"
import json, collections
r = json.load(open('$T/guided/records.json'))
for k in r['kernels']:
    per = collections.Counter(c['round'] for c in k['candidates'] if c['measured'] and c['from'] == 'beam')
    assert per and max(per.values()) <= 3, per
\"; } && make -s -C $T/guided >/dev/null 2>&1 && $T/guided/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_matmul.o"
check "--model FILE with MCTS: only the model's top children become leaves to time; predicted ones recorded" sh -c "
  $FT $FLUXCC tests/opt/matmul.fdsl --opt mcts --target opencl --budget 14 --seed 5 --no-cache --model $T/m.json -o $T/guided_m 2>/dev/null &&
  { [ -z '$PY' ] || $PY tests/check_records.py $T/guided_m --expect-predicted; }"
check "--model none leaves BEAM as it was (same candidates and choices as without the option)" sh -c "
  $FT $FLUXCC tests/opt/matmul.fdsl --opt beam --target opencl --budget 14 --seed 5 --no-cache --model none -o $T/det_none 2>/dev/null &&
  grep -v 'search_s\|at_s' $T/det_none/records.json | cmp - $T/det_beam_1.rec"
check "--model auto without a model for the device: a note and the blind search; the search then trains the cache's model" sh -c "
  $FT $FLUXCC tests/opt/matmul.fdsl --opt beam --target opencl --budget 14 --seed 5 --cache $T/empty_cache --model auto -o $T/auto 2> $T/auto.err &&
  grep -q 'note: --model auto: no cost model for .* yet: a blind search' $T/auto.err &&
  grep -v 'search_s\|at_s' $T/auto/records.json | cmp - $T/det_beam_1.rec &&
  grep -q '^fluxcc: cost model for this device trained on [0-9]* candidates of 2 kernels: .*model-.*-f[0-9]*.json' $T/auto.err &&
  test \$(ls $T/empty_cache | grep -c '^model-') -eq 1"
check "without XGBoost (FLUXCC_FAULT=no-xgboost): rl searches blind with a note; train says what to install" sh -c "
  FLUXCC_FAULT=fake-time,no-xgboost $FLUXCC tests/opt/matmul.fdsl --opt rl --target opencl --budget 10 --no-cache -o $T/noxgb 2> $T/noxgb.err &&
  grep -q 'install libxgboost0' $T/noxgb.err && make -s -C $T/noxgb >/dev/null 2>&1 &&
  $T/noxgb/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_matmul.o &&
  { FLUXCC_FAULT=no-xgboost $FLUXCC train $T/det_beam_1/records.json -o $T/nx.json 2> $T/nx.err; test \$? -eq 2; } &&
  grep -q 'install libxgboost0' $T/nx.err && test ! -e $T/nx.json"
# bad models and training sets: one clear message, exit 2, nothing written
printf 'not json' > "$T/junk.json"
sed 's/"device":[^,]*/"device": "another GPU"/' "$T/m.json" > "$T/otherdev.json"
sed 's/"feature_version":[^,]*/"feature_version": 999/' "$T/m.json" > "$T/otherver.json"
sed 's/"xgboost":.*/"xgboost": "{\\"learner\\": 1}"/' "$T/m.json" > "$T/badxgb.json"
sed 's/"feature_version":[^,]*/"feature_version": 999/' "$T/det_beam_1/records.json" > "$T/oldfeat.json"
sed 's/"device":[^,]*/"device": "another GPU"/' "$T/det_mcts_1/records.json" > "$T/otherdev_rec.json"
"$FLUXCC" tests/opt/matmul.fdsl --opt hc --target opencl -o "$T/hc_matmul" >/dev/null
for bin in "$FLUXCC" "$SAN"; do
  sfx=; [ "$bin" = "$SAN" ] && sfx=" (sanitizers)"
  expect_fail "--model: not JSON$sfx" "junk.json: not JSON: line 1" \
    "$bin" tests/opt/matmul.fdsl --opt beam --target opencl --no-cache --model "$T/junk.json" -o "$T/bad.o"
  expect_fail "--model: another device's$sfx" "a model of device \"another GPU\", not of this search's" \
    "$bin" tests/opt/matmul.fdsl --opt rl --target opencl --no-cache --model "$T/otherdev.json" -o "$T/bad.o"
  expect_fail "--model: another feature version$sfx" "a model of feature version 999; this fluxcc computes version" \
    "$bin" tests/opt/matmul.fdsl --opt beam --target opencl --no-cache --model "$T/otherver.json" -o "$T/bad.o"
  expect_fail "--model: a broken XGBoost model inside$sfx" "badxgb.json: xgboost: learner is 1, not an object" \
    "$bin" tests/opt/matmul.fdsl --opt mcts --target opencl --no-cache --model "$T/badxgb.json" -o "$T/bad.o"
  expect_fail "--model with a fixed method$sfx" "--opt hc is a fixed method: --model is for searches" \
    "$bin" tests/opt/matmul.fdsl --opt hc --model "$T/m.json" -o "$T/bad.o"
  expect_fail "--from with a fixed method$sfx" "--opt tc is a fixed method: --from is for searches" \
    "$bin" tests/opt/matmul.fdsl --opt tc --from raw -o "$T/bad.o"
  expect_fail "--from: neither raw nor fixed$sfx" "--from 'hc': raw (the study's searches) or fixed (the default)" \
    "$bin" tests/opt/matmul.fdsl --opt beam --from hc -o "$T/bad.o"
  expect_fail "train: no training data (a fixed method's records)$sfx" "no training data" \
    "$bin" train "$T/hc_matmul/records.json" -o "$T/bad.o"
  expect_fail "train: records of another feature version$sfx" "oldfeat.json: features of version 999" \
    "$bin" train "$T/oldfeat.json" -o "$T/bad.o"
  expect_fail "train: records of two devices$sfx" "a model is for one device" \
    "$bin" train "$T/det_beam_1/records.json" "$T/otherdev_rec.json" -o "$T/bad.o"
  expect_fail "train: a model file is not training data$sfx" "neither a records.json nor a tuning-cache entry" \
    "$bin" train "$T/m.json" -o "$T/bad.o"
  expect_fail "train: a missing file$sfx" "nothere.json: No such file" "$bin" train "$T/nothere.json" -o "$T/bad.o"
done
check "tuning in shards: scripts/tune-slurm.sh with 2 shards (Slurm stood in by tests/slurm/sbatch), then the final compile from the warm cache" sh -c "
  mkdir -p $T/sb && SBATCH=$TOP/tests/slurm/sbatch SBATCH_STATE=$T/sb CACHE=$T/shcache FLUXCC=$FLUXCC \
    sh scripts/tune-slurm.sh tests/opt/prologue.fdsl 2 $T/tuned --opt beam $BEAMOPTS > $T/slurm.out &&
  test \$(cat $T/sb/1) = ok && test \$(cat $T/sb/2) = ok && grep -q '^shards: job 1 (array 0-1); final: job 2' $T/slurm.out &&
  grep -q '^trained on [0-9]* candidates of 6 kernels' $T/tuned.log && ls $T/shcache | grep -q '^model-.*-f[0-9]*.json' &&
  test \$(grep -c ': cached' $T/tuned.log) -eq 6 && make -s -C $T/tuned >/dev/null 2>&1 &&
  $T/tuned/flux --quiet --random-weights 3 --random-inputs 3 --check $T/p_prologue.o &&
  { [ -z '$PY' ] || $PY -c \"
import json
for i in (0, 1):  # shard I searched exactly the unique kernels u with u % 2 == I
    ks = json.load(open('$T/tuned.shard%d/records.json' % i))['kernels']
    assert [u for u, k in enumerate(ks) if k['candidates']] == [u for u in range(len(ks)) if u % 2 == i], i
\"; }"
check "--model auto with a corrupt cache model: a warning and the blind search (exit 0)" sh -c "
  mkdir -p $T/corrupt_cache && for f in $T/bcache/model-*.json; do printf '{' > $T/corrupt_cache/\$(basename \$f); done &&
  $FT $FLUXCC tests/opt/matmul.fdsl --opt beam --target opencl --budget 14 --seed 5 --cache $T/corrupt_cache --model auto -o $T/auto2 2> $T/auto2.err &&
  grep -q 'warning: --model .*model-.*: not JSON.*: not used, a blind search' $T/auto2.err"
