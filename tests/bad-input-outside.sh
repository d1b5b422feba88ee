#!/bin/sh
# tests/bad-input-outside.sh — hostile input, round 3 (issue 20): nothing from outside
# becomes code, outputs never replace what they should not, records and cache
# entries are read with bounded memory and checked field by field, every
# number is parsed one way, edited kernels are refused. Each case here failed
# on the code before that issue. Sourced by tests/run.sh after bad-input-compiler.sh
# (its hrun/ok/bad helpers; $E is run.sh's CUDA-emulated flux-tiny project);
# standalone: `sh tests/bad-input-outside.sh` after make and make san.
. tests/bad-input-lib.sh   # standalone set-up, hrun
cd "$TOP"
H3=$T/hostile3
HT=$H3
rm -rf "$H3"; mkdir -p "$H3"
echo "== bad input from outside: text, outputs, records and cache entries, numbers, edited kernels (tests/bad-input-outside.sh)"
M=tests/opt/matmul.fdsl
"$FLUXCC" init $M --seed 4 --weights "$H3/w" --inputs "$H3/i" >/dev/null &&
  "$FLUXCC" run $M --weights "$H3/w" --inputs "$H3/i" -o "$H3/ref" >/dev/null || bad "hostile3: no reference for $M"
# a search's records and cache (small budget), the base of the cases below
"$FLUXCC" $M --opt beam --target opencl --budget 3 --seed 1 --cache "$H3/cache" -o "$H3/beam" >/dev/null 2>"$H3/beam.err" ||
  { bad "hostile3: the base search failed"; cat "$H3/beam.err"; }
"$FLUXCC" $M --opt beam --target opencl --budget 3 --records "$H3/beam/records.json" -o "$H3/replay0" >/dev/null 2>&1 ||
  bad "hostile3: the base replay failed"

# --- 1. text from outside never becomes code
# Every string field of a records file, set to strings that would splice a
# line, start a directive, close a comment, form a trigraph or drive a
# terminal: the replay refuses the file naming the field, or the project it
# writes is inert: it builds and passes --check, and no emitted line starts the
# injected #define.
cat >"$H3/mutate.py" <<'EOF'
import json, sys
src, out, path, value = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
r = json.load(open(src))
x = r
keys = [int(k) if k.isdigit() else k for k in path.split('/')]
for k in keys[:-1]:
    x = x[k]
if isinstance(x, list) and keys[-1] == len(x):
    x.append(value)   # e.g. the first opt of a candidate that has none
else:
    x[keys[-1]] = value
json.dump(r, open(out, 'w'), indent=1)
EOF
refused=0 inert=0 n=0
for field in device toolchain model target method kernels/0/name kernels/0/name_before_opts kernels/0/chosen/method \
             kernels/0/candidates/0/name kernels/0/candidates/0/from kernels/0/candidates/0/reason kernels/0/candidates/0/opts/0 \
             kernels/0/opts/0/op kernels/1/launch_sites/0/dsl; do
  for s in '"x\n#define ld_f32(p,i) (2.0f*(p)[i])\n//"' '"a */ b"' '"tail\\"' '"??/"' '"\u001b[2J\u0007"' '"\u0000"'; do
    n=$((n + 1))
    python3 "$H3/mutate.py" "$H3/beam/records.json" "$H3/r.json" "$field" "$s"
    rm -rf "$H3/rp"
    "$FLUXCC" $M --opt beam --target opencl --budget 3 --records "$H3/r.json" -o "$H3/rp" >"$H3/rp.out" 2>&1; rc=$?
    key=${field##*/}; case $key in [0-9]*) key=opt ;; esac
    if [ $rc -eq 2 ] && grep -q "records $H3/r.json: .*$key" "$H3/rp.out" && ! grep -q "$(printf '\033')" "$H3/rp.out"; then
      refused=$((refused + 1)); continue
    fi
    if [ $rc -ne 0 ]; then bad "hostile3 records $field=$s: exit $rc"; head -3 "$H3/rp.out"; continue; fi
    if grep -rqs '^#define ld_f32' "$H3/rp/kernels" "$H3/rp/schedule.c"; then bad "hostile3 records $field=$s: the define is in the source"; continue; fi
    if grep -rqs '\\$' "$H3/rp/kernels" "$H3/rp/schedule.c"; then bad "hostile3 records $field=$s: a line ends in a backslash (splices the next)"; continue; fi
    if diff -rq "$H3/replay0/kernels" "$H3/rp/kernels" >/dev/null && cmp -s "$H3/replay0/schedule.c" "$H3/rp/schedule.c"; then
      inert=$((inert + 1)); continue   # not in the source at all
    fi
    if make -s -C "$H3/rp" >/dev/null 2>&1 && "$H3/rp/flux" --quiet --weights "$H3/w" --inputs "$H3/i" --check "$H3/ref" >/dev/null 2>&1; then
      inert=$((inert + 1))
    else bad "hostile3 records $field=$s: the project does not build or fails --check"; fi
  done
done
if [ $((refused + inert)) -eq $n ] && [ $refused -gt 0 ]; then ok "hostile3: $n hostile strings in 14 records fields: $refused refused naming the field, $inert inert"
else bad "hostile3: hostile records strings: $refused refused, $inert inert of $n"; fi
hrun "hostile3: a records device with a #define is refused (was: exit 0, every kernel wrong)" 2 \
  "'device' is \"x\\\\n#define ld_f32" sh -c "python3 '$H3/mutate.py' '$H3/beam/records.json' '$H3/r.json' device '\"x\\n#define ld_f32(p,i) (2.0f*(p)[i])\\n//\"' &&
  '$FLUXCC' $M --opt beam --target opencl --records '$H3/r.json' -o '$H3/rp'"
# a model file whose name holds a newline, a #define, a trigraph and a trailing backslash
nm=$(printf '%s/m\n#define ld_f32(p,i) (2.0f*(p)[i])\n??) \\' "$H3")
cp $M "$nm.fdsl"
if "$FLUXCC" "$nm.fdsl" --opt hc --target opencl -o "$H3/nm" >/dev/null 2>&1 && ! grep -rqs '^#define ld_f32' "$H3/nm/kernels" "$H3/nm/schedule.c" &&
   ! grep -rqs '\\$' "$H3/nm/kernels" "$H3/nm/schedule.c" &&
   make -s -C "$H3/nm" >/dev/null 2>&1 && "$H3/nm/flux" --quiet --weights "$H3/w" --inputs "$H3/i" --check "$H3/ref" >/dev/null 2>&1
then ok "hostile3: a model named with a newline, a #define, a trigraph and a trailing backslash: inert comments, passes --check"
else bad "hostile3: a model named with a newline and a #define"; fi

# --- 2. outputs: through a FIFO or device, atomically over a link's target, else refused
if mknod "$H3/null" c 1 3 2>/dev/null && mknod "$H3/full" c 1 7 2>/dev/null; then
  mkfifo "$H3/fifo"; mkdir "$H3/adir"
  "$FLUXCC" $M --opt hc --target opencl -o "$H3/hc" >/dev/null && make -s -C "$H3/hc" >/dev/null 2>&1
  "$H3/hc/flux" --quiet --weights "$H3/w" --inputs "$H3/i" --out "$H3/plain.st" || bad "hostile3: the plain --out run failed"
  # out_case NAME CMD-WITH-@: @ is replaced by each output path; the regular result is $2
  out_case() {
    what=$1 plain=$2; shift 2
    run() { p=$1; shift; c=$(echo "$*" | sed "s|@|$p|g"); sh -c "$c" >"$H3/oc.out" 2>&1; }
    run "$H3/null" "$@" && test -c "$H3/null" && ok "hostile3 $what: /dev/null-like device: written through, still a device" ||
      bad "hostile3 $what: a character device output (exit $?, $(ls -l "$H3/null" | cut -c1))"
    if run "$H3/full" "$@"; then bad "hostile3 $what: a full device reported success"
    elif grep -q "No space left on device" "$H3/oc.out" && test -c "$H3/full"; then ok "hostile3 $what: /dev/full-like device: 'No space left', non-zero"
    else bad "hostile3 $what: a full device: $(head -1 "$H3/oc.out")"; fi
    rm -f "$H3/got"; (cat "$H3/fifo" >"$H3/got" &)
    run "$H3/fifo" "$@" && sleep 0.3 && test -p "$H3/fifo" && cmp -s "$H3/got" "$plain" &&
      ok "hostile3 $what: a FIFO: written through, the reader gets the bytes" || bad "hostile3 $what: a FIFO output"
    echo old >"$H3/target"; ln -sfn target "$H3/link"
    run "$H3/link" "$@" && test -L "$H3/link" && cmp -s "$H3/target" "$plain" &&
      ok "hostile3 $what: a symlink: its target replaced, the link kept" || bad "hostile3 $what: a symlink output"
    if run "$H3/adir" "$@"; then bad "hostile3 $what: a directory output reported success"
    elif grep -q "adir: is a directory: not replaced" "$H3/oc.out" && test -d "$H3/adir"; then ok "hostile3 $what: a directory: refused by name"
    else bad "hostile3 $what: a directory output: $(head -1 "$H3/oc.out")"; fi
  }
  out_case "./flux --out" "$H3/plain.st" "'$H3/hc/flux' --quiet --weights '$H3/w' --inputs '$H3/i' --out @"
  "$FLUXCC" init $M --seed 4 --weights "$H3/w2" --inputs "$H3/i2" >/dev/null
  out_case "fluxcc init --weights" "$H3/w2" "'$FLUXCC' init $M --seed 4 --weights @ --inputs '$H3/i3' --quiet"
  out_case "fluxcc init --inputs" "$H3/i2" "'$FLUXCC' init $M --seed 4 --weights '$H3/w3' --inputs @ --quiet"
  out_case "fluxcc run -o" "$H3/ref" "'$FLUXCC' run $M --weights '$H3/w' --inputs '$H3/i' -o @ --quiet"
  # the PNG (issue 56): encoded in memory, written by the same rule
  V=examples/vae-decoder-tiny.fdsl
  "$FLUXCC" $V --opt hc --target c -o "$H3/vae" >/dev/null && make -s -C "$H3/vae" >/dev/null 2>&1
  "$H3/vae/flux" --quiet --random-weights 2 --random-inputs 2 --png "$H3/plain.png" || bad "hostile4: the plain --png run failed"
  out_case "./flux --png" "$H3/plain.png" "'$H3/vae/flux' --quiet --random-weights 2 --random-inputs 2 --png @"
  echo secret >"$H3/victim"; ln -sfn victim "$H3/img.png.tmp"
  "$H3/vae/flux" --quiet --random-weights 2 --random-inputs 2 --png "$H3/img.png" && cmp -s "$H3/img.png" "$H3/plain.png" &&
    test "$(cat "$H3/victim")" = secret && test -L "$H3/img.png.tmp" &&
    ok "hostile4 ./flux --png: a symlink at PATH.tmp is not followed (the temporary file has a name of its own)" ||
    bad "hostile4 ./flux --png: a PATH.tmp symlink"
  hrun "hostile3: compile -o a FIFO: refused by name" 2 "fifo: exists and is not a directory \(a FIFO\): not replacing it" \
    "$FLUXCC" $M --opt raw --target opencl -o "$H3/fifo"
  hrun "hostile3: compile -o a device: refused by name" 2 "null: exists and is not a directory \(a device\)" \
    "$FLUXCC" $M --opt raw --target opencl -o "$H3/null"
  mkdir -p "$H3/realproj"; ln -sfn realproj "$H3/projlink"
  if "$FLUXCC" $M --opt raw --target opencl -o "$H3/projlink" >/dev/null 2>&1 && "$FLUXCC" $M --opt hc --target opencl -o "$H3/projlink/" >/dev/null 2>&1 &&
     test -L "$H3/projlink" && test -f "$H3/realproj/schedule.c" && grep -q '"method":.*"hc"' "$H3/realproj/records.json"
  then ok "hostile3: compile -o a symlink to a project: the project replaced where it leads, the link kept"
  else bad "hostile3: compile -o a symlink"; fi
else
  skip=$((skip + 1)); echo "skip hostile3 outputs: mknod needs root (private device nodes in the test folder)"
fi

# --- 3. records and report: bounded memory, "not JSON" only when it is not
python3 - "$H3/beam/records.json" "$H3" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); d = sys.argv[2]
k = r['kernels'][0]
c = dict(k['candidates'][0])
def write(path, ncand):
    x = dict(r); kk = dict(k); kk['candidates'] = [c] * ncand; x['kernels'] = [kk] + r['kernels'][1:]
    json.dump(x, open(path, 'w'), separators=(',', ':'))
import os
os.makedirs(d + '/big', exist_ok=True); os.makedirs(d + '/near', exist_ok=True)
def count(v):   # JSON values and keys, as fluxcc counts them: each container, key and value, nested (an opt is an object)
    if isinstance(v, dict): return 1 + sum(1 + count(x) for x in v.values())
    if isinstance(v, list): return 1 + sum(count(x) for x in v)
    return 1
items = count(c)
write(d + '/big/records.json', 100 * 1000 * 1000 // len(json.dumps(c, separators=(',', ':'))))   # ~100 MB, valid
write(d + '/near/records.json', 4000 * 1000 // items)                                             # just under 4 Mi values
EOF
sz=$(wc -c <"$H3/big/records.json")
hrun "hostile3: a valid $((sz / 1000000)) MB records.json under a 1 GiB memory limit: refused past the documented limit (was 4.2 GB RSS)" 2 \
  "more than 4194304 JSON values and keys: fluxcc reads records and cache entries of at most" \
  sh -c "ulimit -v 1048576; '$FLUXCC' report '$H3/big'"
hrun "hostile3: the same file as --records: the same refusal" 2 "more than 4194304 JSON values" \
  sh -c "ulimit -v 1048576; '$FLUXCC' $M --opt beam --target opencl --records '$H3/big/records.json' -o '$H3/rp'"
hrun "hostile3: a records.json just under the limit is read under a 1 GiB memory limit" 0 "per forward" \
  sh -c "ulimit -v 1048576; '$FLUXCC' report '$H3/near'"
hrun "hostile3: under a 150 MB memory limit a valid file is 'out of memory', never 'not JSON'" 2 "out of memory reading its [0-9]+ JSON values" \
  sh -c "ulimit -v 150000; '$FLUXCC' report '$H3/near'"
mkdir -p "$H3/nj"; printf '{"kernels": [1, 2,\n  3 4]}' >"$H3/nj/records.json"
hrun "hostile3: invalid JSON to report: 'not JSON' with line and column (was: 'no kernels array')" 2 "not JSON: line 2, column 5: expected ',' or '\]'" \
  "$FLUXCC" report "$H3/nj"

# --- 4. fields checked: every case the issue lists, in records (report, replay) and cache entries
rcase() {  # NAME PATH VALUE PATTERN: a records file with PATH set to VALUE, refused by report and replay
  python3 "$H3/mutate.py" "$H3/beam/records.json" "$H3/rc/records.json" "$2" "$3"
  hrun "hostile3 records $1: report" 2 "$4" "$FLUXCC" report "$H3/rc"
  hrun "hostile3 records $1: --records" 2 "$4" "$FLUXCC" $M --opt beam --target opencl --records "$H3/rc/records.json" -o "$H3/rp"
}
mkdir -p "$H3/rc"
python3 - "$H3/beam/records.json" "$H3/rc/records.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); r['kernels'][0]['candidates'][0]['opts'] = ["NOLOCALS"] * 30; json.dump(r, open(sys.argv[2], 'w'))
EOF
hrun "hostile3 records: 30 opts in a candidate (was: \"'NOLOCALS' is not an opt\")" 2 "kernel 0: candidate 0: 30 opts: a kernel has at most 24" \
  "$FLUXCC" report "$H3/rc"
rcase "{axis: 0.9, amount: 2.7} (was: silently UPCAST(0,2))" kernels/0/opts/0 '{"op": "UPCAST", "axis": 0.9, "amount": 2.7}' "'axis' is 0.9: wants an integer"
rcase "launches 1e300 (was: -2147483648 launches)" launches '1e300' "'launches' is 1e\+300: wants an integer from 0 to 100000000"
rcase "a negative time (was: a row, exit 0)" kernels/0/chosen/min_us '-5' "kernel 0: 'min_us' is -5: wants a number from 0"
rcase "a kernel that is a string (was: a row, exit 0)" kernels/1 '"hello"' "kernel 1: not an object"
rcase "UPCAST(0,99999999999) (was: read as 1215752191)" kernels/0/candidates/0/opts/0 '"UPCAST(0,99999999999)"' "\"UPCAST\(0,99999999999\)\" is not an opt"
# cache entries: each bad entry said in one line, searched again, overwritten (was: every later compile exit 2, "clear the cache?")
entry=$(grep -l '"key"' "$H3"/cache/*.json | head -1)
for c in 'opts|["UPCAST(0,5)"]|UPCAST\(0,5\) is refused for this kernel: UPCAST: 5 does not divide' 'opts|["UPCAST(9,2)"]|UPCAST\(9,2\) is refused' \
         'opts|["TC(0,1)"]|TC\(0,1\) is refused for this kernel: tf32 tensor cores, but this compile has no --tf32' 'opts|["QROWS(0,4)"]|QROWS\(0,4\) is refused' \
         'opts|["UPCAST(0,99999999999)"]|"UPCAST\(0,99999999999\)" is not an opt' 'chosen/min_us|-5|.min_us. is -5' \
         'chosen/method|"beam\n#define x"|.method. is "beam\\n#define x"'; do
  p=${c%%|*}; rest=${c#*|}; v=${rest%%|*}; pat=${rest#*|}
  for e in $(grep -l '"key"' "$H3"/cache/*.json); do  # the entries, not the cache's cost model
    python3 - "$e" "$p" "$v" <<'EOF'
import json, sys
f, path, v = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
j = json.load(open(f)); x = j['kernel']
ks = path.split('/')
for k in ks[:-1]: x = x[k]
x[ks[-1]] = v
json.dump(j, open(f, 'w'))
EOF
  done
  vv=$(printf %s "$v" | tr -d '\\')
  hrun "hostile3 cache entry $p=$vv: one line, searched again" 0 "warning: cache entry .*: $pat.*; searching kernel [0-9]+ again" \
    "$FLUXCC" $M --opt beam --target opencl --budget 3 --seed 1 --cache "$H3/cache" -o "$H3/cached"
  if "$FLUXCC" $M --opt beam --target opencl --budget 3 --seed 1 --cache "$H3/cache" -o "$H3/cached" 2>&1 | grep -q warning
  then bad "hostile3 cache $p=$vv: the entry was not overwritten"
  else ok "hostile3 cache $p=$vv: the entry overwritten (the next compile takes it quietly)"; fi
done

# --- 5. one integer parser: decimal, range checked, named, never clamped
hrun "hostile3: init --seed 2^64 (was: the weights of seed 2^64-1, exit 0)" 2 "--seed wants a decimal integer from 0 to 18446744073709551615, not '18446744073709551616'" \
  "$FLUXCC" init $M --seed 18446744073709551616 --weights "$H3/x" --inputs "$H3/y"
hrun "hostile3: init --seed 99999999999999999999" 2 "--seed wants a decimal integer" "$FLUXCC" init $M --seed 99999999999999999999 --weights "$H3/x" --inputs "$H3/y"
hrun "hostile3: --jobs 1000 (was: 64, silently)" 2 "--jobs wants a decimal integer from 1 to 64, not '1000'" "$FLUXCC" $M --opt beam --jobs 1000 -o "$H3/x"
hrun "hostile3: compare --bench 1000001 (was: 100000, silently)" 2 "--bench wants a decimal integer from 1 to 100000" "$FLUXCC" compare $M --bench 1000001 -o "$H3/x"
hrun "hostile3: --max-errors 10001" 2 "--max-errors wants a decimal integer from 0 to 10000" "$FLUXCC" $M --dump graph --max-errors 10001
hrun "hostile3: --beam 0x10" 2 "--beam wants a decimal integer from 1 to 64, not '0x10'" "$FLUXCC" $M --opt beam --beam 0x10 -o "$H3/x"
hrun "hostile3: --kernels past the model's kernels" 2 "--kernels 0,99: '99' is not a unique kernel of this model \(0 to 1" \
  "$FLUXCC" $M --opt beam --target opencl --kernels 0,99 --no-cache -o "$H3/x"
hrun "hostile3: FLUXCC_FAULT with garbage" 2 "FLUXCC_FAULT='wrong-every=x': 'wrong-every=x' is not a test switch" \
  env FLUXCC_FAULT=wrong-every=x "$FLUXCC" $M --opt beam --target opencl --no-cache -o "$H3/x"
if [ -x "$H3/hc/flux" ]; then
  hrun "hostile3: ./flux --random-weights 2^64 (the same words as fluxcc)" 2 "--random-weights wants a decimal integer seed from 0 to 18446744073709551615" \
    "$H3/hc/flux" --random-weights 18446744073709551616
  hrun "hostile3: FLUX_SYNC=yes (was: taken as on)" 2 "FLUX_SYNC='yes': wants 0 or 1" env FLUX_SYNC=yes "$H3/hc/flux" --quiet
  "$FLUXCC" init $M --seed 10 --weights "$H3/s10w" --inputs "$H3/s10i" >/dev/null
  "$H3/hc/flux" --quiet --random-weights 010 --random-inputs 10 --out "$H3/s010" && "$H3/hc/flux" --quiet --weights "$H3/s10w" --inputs "$H3/s10i" --out "$H3/s10" &&
    cmp -s "$H3/s010" "$H3/s10" && ok "hostile3: seed 010 is ten in fluxcc and the binary" || bad "hostile3: seed 010"
fi
if [ -n "${E:-}" ] && [ -x "$E/flux-emu" ]; then
  hrun "hostile3: FLUX_EMU_THREADS=abc (was: ignored)" 2 "FLUX_EMU_THREADS='abc': wants a decimal integer from 1 to 64" env FLUX_EMU_THREADS=abc "$E/flux-emu" --quiet
  hrun "hostile3: FLUX_EMU_SEED=-1 (was: ignored)" 2 "FLUX_EMU_SEED='-1': wants a decimal integer" env FLUX_EMU_SEED=-1 "$E/flux-emu" --quiet
  hrun "hostile3: FLUX_EMU_THREADS=1000 (was: 64, silently)" 2 "FLUX_EMU_THREADS='1000'" env FLUX_EMU_THREADS=1000 "$E/flux-emu" --quiet
fi

# --- 6. an edited kernel is refused by name, unless --allow-edited
if [ -x "$H3/hc/flux" ]; then
  f=$(grep -l '+=' "$H3"/hc/kernels/*.cl | head -1)
  cp "$f" "$H3/k.orig"; sed -i '0,/+=/s/+=/-=/' "$f"
  hrun "hostile3: an edited kernel (+= to -=) is refused by name (was: wrong values, exit 0)" 2 \
    "$(basename "$f") \(kernel '[a-z0-9_]*'\) is not the file fluxcc wrote: edited" "$H3/hc/flux" --quiet --out "$H3/edited.st"
  test ! -e "$H3/edited.st" && ok "hostile3: ... and no --out was written" || bad "hostile3: an edited kernel's run wrote --out"
  hrun "hostile3: --allow-edited runs it, saying so" 0 "warning: .*$(basename "$f").*running it as it is \(--allow-edited\)" \
    "$H3/hc/flux" --quiet --allow-edited --weights "$H3/w" --inputs "$H3/i" --out "$H3/edited.st"
  hrun "hostile3: FLUX_ALLOW_EDITED_KERNELS=1 too" 0 "running it as it is" env FLUX_ALLOW_EDITED_KERNELS=1 "$H3/hc/flux" --quiet
  cmp -s "$H3/edited.st" "$H3/plain.st" && bad "hostile3: the edited kernel made the same output (the edit did nothing?)" ||
    ok "hostile3: ... and the edit takes effect"
  cp "$H3/k.orig" "$f"
  "$H3/hc/flux" --quiet --out "$H3/restored.st" && ok "hostile3: the kernel restored runs again" || bad "hostile3: the restored kernel is refused"
  # the prelude every kernel is built with (OpenCL: the mma emulation, the bf16 rounding) is checked the same way
  p="$H3/hc/kernel_prelude.cl"; cp "$p" "$H3/p.orig"; sed -i '0,/u += 0x7fffu/s//u += 0x8000u/' "$p"
  cmp -s "$p" "$H3/p.orig" && bad "hostile3: the prelude edit did not happen" ||
    hrun "hostile3: an edited kernel prelude is refused by name (was: run as edited)" 2 \
      "kernel_prelude.cl \(the kernels' prelude\) is not the file fluxcc wrote: edited" "$H3/hc/flux" --quiet
  hrun "hostile3: ... --allow-edited runs it, saying so" 0 "warning: .*kernel_prelude.cl.*running it as it is" "$H3/hc/flux" --quiet --allow-edited
  cp "$H3/p.orig" "$p"
  "$H3/hc/flux" --quiet && ok "hostile3: the prelude restored runs again" || bad "hostile3: the restored prelude is refused"
  mv "$f" "$H3/k.kept"; mkfifo "$f"
  hrun "hostile4: a FIFO in a kernel file's place is refused by name at once, even with --allow-edited (was: waits forever)" 2 \
    "$(basename "$f") \(kernel '[a-z0-9_]*'\): is a FIFO \(pipe\), not a regular file" "$H3/hc/flux" --quiet --allow-edited
  rm -f "$f"; mv "$H3/k.kept" "$f"
fi
# --- 7. fuzz findings
# the program fuzzer: PADTO of a reduce whose loads the epilogue reads too
# masked them there: a store of a value never computed (a garbage name)
P=tests/hostile/padto_shared.fdsl
if "$FLUXCC" init $P --seed 3 --weights "$H3/pw" --inputs "$H3/pi" >/dev/null && "$FLUXCC" run $P --weights "$H3/pw" --inputs "$H3/pi" -o "$H3/pref" >/dev/null &&
   "$FLUXCC" $P --opt random --seed 20261422 --target opencl -o "$H3/pad" >/dev/null 2>&1 && make -s -C "$H3/pad" >/dev/null 2>&1 &&
   "$H3/pad/flux" --quiet --random-weights 3 --random-inputs 3 --check "$H3/pref" >/dev/null 2>&1
then ok "hostile3: fuzz finding: --opt random --seed 20261422 of padto_shared.fdsl builds and passes --check (was: a store of garbage)"
else bad "hostile3: fuzz finding: padto_shared.fdsl under --opt random --seed 20261422"; fi
"$FLUXCC" $P --opt beam --target opencl --tile-n 128 --budget 1 --no-cache -o "$H3/padb" >/dev/null 2>&1
python3 "$H3/mutate.py" "$H3/padb/records.json" "$H3/pr.json" kernels/2/opts '["PADTO(0,-15)"]'
hrun "hostile3: PADTO of such a reduce is refused, saying why" 2 "PADTO\(0,-15\) is refused: PADTO: a value of the reduce is used after it too" \
  "$FLUXCC" $P --opt beam --target opencl --tile-n 128 --records "$H3/pr.json" -o "$H3/rp"
# the program fuzzer: the schedule dump read a byte past its buffer-kind table for a folded constant
hrun "hostile3: fuzz finding: --dump schedule names a folded constant's buffer 'const' (sanitizers; was: a read past the table)" 0 \
  "^buf[0-9]+ const f32\[2\] folded1" "$SAN" --dump schedule tests/hostile/const_dump.fdsl
# PADTO's negative amounts (a reduce axis) are fluxcc's own: read back from records (was: refused by the first field checks)
python3 "$H3/mutate.py" "$H3/beam/records.json" "$H3/pr.json" kernels/0/opts '["PADTO(0,-32)"]'
rm -rf "$H3/rp"
if "$FLUXCC" $M --opt beam --target opencl --records "$H3/pr.json" -o "$H3/rp" >/dev/null 2>&1 && "$FLUXCC" report "$H3/rp" | grep -q 'PADTO(0,-32)' &&
   make -s -C "$H3/rp" >/dev/null 2>&1 && "$H3/rp/flux" --quiet --weights "$H3/w" --inputs "$H3/i" --check "$H3/ref" >/dev/null 2>&1
then ok "hostile3: PADTO(0,-32) in records: replayed, reported, passes --check"
else bad "hostile3: PADTO(0,-32) in records"; fi

# --- 8. outputs said before the run, option values in the input's range, no non-finite image (issue 56)
V=examples/vae-decoder-tiny.fdsl
[ -x "$H3/vae/flux" ] || { "$FLUXCC" $V --opt hc --target c -o "$H3/vae" >/dev/null && make -s -C "$H3/vae" >/dev/null 2>&1; }
for o in "--png:" "--png:$H3/nodir/x.png" "--png:$H3" "--out:$H3/nodir/x.st" "--trace:"; do
  opt=${o%%:*} path=${o#*:}
  hrun "hostile4 ./flux $opt '$(echo "$path" | sed "s|^$H3|DIR|")': refused before the run (exit 2, no forward)" 2 "^flux: error: $opt " \
    sh -c "'$H3/vae/flux' --random-weights 2 --random-inputs 2 $opt '$path' && exit 9; grep -q '^forward:' '$HT/out' && exit 8; exit 2"
done
"$FLUXCC" examples/flux-dev-tiny.fdsl --opt hc --target c -o "$H3/dev" >/dev/null && make -s -C "$H3/dev" >/dev/null 2>&1
hrun "hostile4 ./flux --guidance 1e300: beyond the bf16 guidance input, refused before the run (was: NaN latents, exit 0)" 2 \
  "guidance 1e\+300: beyond the range of the model's .guidance. input \(BF16\)" \
  "$H3/dev/flux" --random-weights 1 --random-inputs 1 --steps 1 --guidance 1e300 --out "$H3/lat.st"
hrun "hostile4 ./flux --guidance 1e-320 (an underflow to a tiny number): accepted" 0 "sampling: 1 steps" \
  "$H3/dev/flux" --random-weights 1 --random-inputs 1 --steps 1 --guidance 1e-320 --out "$H3/lat.st"
for g in -1 inf nan 1e999 "' 3'" 3x; do
  hrun "hostile4 ./flux --guidance $g: a finite non-negative number wanted" 2 "guidance wants a finite non-negative number" \
    sh -c "'$H3/dev/flux' --random-weights 1 --random-inputs 1 --steps 1 --guidance $g"
done
# an image with a NaN: the decoder's input latents set to NaN
rm -f "$H3/nan.png"
if "$FLUXCC" init $V --seed 2 --weights "$H3/vw" --inputs "$H3/vi" >/dev/null &&
   python3 -c "import sys; sys.path.insert(0, 'tests/reference'); import st, numpy as np
t = st.load('$H3/vi'); k = sorted(t)[0]; a = np.array(t[k], dtype=np.float32); a.flat[5] = np.nan; t[k] = a; st.save('$H3/vnan', t)"; then
  hrun "hostile4 ./flux --png of an image with a NaN: not written, exit 2, says how many values" 2 \
    "nan.png: not written: the output .image. has [0-9]+ of 192 values not finite" \
    sh -c "'$H3/vae/flux' --quiet --weights '$H3/vw' --inputs '$H3/vnan' --png '$H3/nan.png'; rc=\$?; test -e '$H3/nan.png' && exit 9; exit \$rc"
else bad "hostile4: no NaN input for the decoder"; fi

if [ -z "${HOSTILE_IN_RUN:-}" ]; then
  echo "$pass passed, $fail failed, $skip skipped"
  [ "$fail" -eq 0 ]
fi
