# tests/sections/19-sharded.sh — sharded weights: --weights repeated, or a Hugging Face index (model.safetensors.index.json)
# needs: networks tokenizers
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== sharded weights: --weights repeated, or a Hugging Face index (model.safetensors.index.json)"
if [ -n "$PY" ]; then
  mkdir -p "$T/shd"
  "$PY" -c "import sys, json; sys.path.insert(0, 'tests/reference'); import st
w = st.load('$T/clip.w'); keys = sorted(w); a, b = keys[:len(keys) // 2], keys[len(keys) // 2:]
names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']
st.save('$T/shd/' + names[0], {k: w[k] for k in a}); st.save('$T/shd/' + names[1], {k: w[k] for k in b})
m = {**{k: names[0] for k in a}, **{k: names[1] for k in b}}
json.dump({'metadata': {'total_size': 0}, 'weight_map': m}, open('$T/shd/model.safetensors.index.json', 'w'))
m2 = dict(m); m2[a[0]] = names[1]; json.dump({'weight_map': m2}, open('$T/shd/wrong.index.json', 'w'))
m3 = dict(m); del m3[b[0]]; json.dump({'weight_map': m3}, open('$T/shd/short.index.json', 'w'))
m4 = dict(m); m4[a[0]] = 'model-00003-of-00002.safetensors'; json.dump({'weight_map': m4}, open('$T/shd/gone.index.json', 'w'))
open('$T/shd/bad.index.json', 'w').write('{\"weight_map\": [1, 2]}')"
  check "clip-text-tiny (PoCL, hc): weights as two shards through their index = one file (--check the interpreter's outputs)" sh -c "
    $T/clip_hc/flux --weights $T/shd/model.safetensors.index.json --inputs $T/clip.i --check $T/clip.o > $T/shd.log && grep -q 'weights:  .*model.safetensors.index.json' $T/shd.log"
  check "fluxcc run --weights INDEX: the same outputs, byte for byte, as from the one file" sh -c "
    $FLUXCC run examples/clip-text-tiny.fdsl --weights $T/shd/model.safetensors.index.json --inputs $T/clip.i -o $T/shd.o --quiet && cmp $T/shd.o $T/clip.o"
  check "... and the two shards given as --weights A --weights B" \
    $T/clip_hc/flux --quiet --weights "$T/shd/model-00001-of-00002.safetensors" --weights "$T/shd/model-00002-of-00002.safetensors" --inputs "$T/clip.i" --check "$T/clip.o"
  expect_fail "one shard of two: the missing parameters named" "model-00001-of-00002.safetensors: missing parameter" \
    "$T/clip_hc/flux" --weights "$T/shd/model-00001-of-00002.safetensors" --inputs "$T/clip.i" --out "$T/bad.o"
  expect_fail "a key in two files: both named" "clip.w: tensor '.*': also in .*model-00001-of-00002.safetensors" \
    "$T/clip_hc/flux" --weights "$T/shd/model-00001-of-00002.safetensors" --weights "$T/clip.w" --out "$T/bad.o"
  expect_fail "an index that puts a key in the other shard: the index, the key, both files" "wrong.index.json: tensor '.*': the index puts it in model-00002-of-00002.safetensors, but it is in .*model-00001" \
    "$T/clip_hc/flux" --weights "$T/shd/wrong.index.json" --out "$T/bad.o"
  expect_fail "a shard holding a tensor its index lacks: named" "model-00002-of-00002.safetensors: tensor '.*': not in the index .*short.index.json" \
    "$T/clip_hc/flux" --weights "$T/shd/short.index.json" --out "$T/bad.o"
  expect_fail "an index naming a shard that is not there: the file named" "model-00003-of-00002.safetensors: cannot open" \
    "$T/clip_hc/flux" --weights "$T/shd/gone.index.json" --out "$T/bad.o"
  expect_fail "an index without a weight_map object: says so" "bad.index.json: not a safetensors index" \
    "$T/clip_hc/flux" --weights "$T/shd/bad.index.json" --out "$T/bad.o"
  mkfifo "$T/shd/fifo.index.json"
  expect_fail "an index that is a FIFO: refused by name at once, as a shard is (no wait for a writer)" "fifo.index.json: is a FIFO (pipe), not a regular file" \
    timeout 10 "$T/clip_hc/flux" --weights "$T/shd/fifo.index.json" --out "$T/bad.o"
fi
