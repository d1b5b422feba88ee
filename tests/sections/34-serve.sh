# tests/sections/34-serve.sh — serving: ./flux --serve keeps the tiny pipeline loaded and answers HTTP (loopback)
# needs:
# Sourced by tests/run.sh (tests/lib.sh: $T, $FLUXCC, check, golden, expect_fail).
echo "== serving: ./flux --serve keeps the tiny pipeline loaded and answers HTTP (loopback)"
SD=$T/serve P='a red cube on a glass table'
if [ -z "$PY" ] || ! command -v spm_train >/dev/null || ! pkg-config --exists libmicrohttpd 2>/dev/null || ! command -v curl >/dev/null; then
  bad "serving: needs Python, spm_train, libmicrohttpd-dev and curl (sh scripts/deps.sh test)"
else
  # the tiny pipeline (C target) and its checkpoint folder, as make demo-image makes them
  DEMO_DIR=$SD sh scripts/demo-image.sh "$SD/cli0.png" "$P" > "$SD.log" 2>&1
  SB=$SD/pipeline/flux M=$SD/model
  "$SB" --quiet --model-dir "$M" --prompt "$P" --seed 1 -o "$SD/cli1.png"
  # serve_case CASE FLAGS...: tests/check_serve.py starts a server, drives it, stops it (SIGTERM: exit 0)
  serve_case() {
    c=$1; shift
    check "serve $c: $(sed -n "s/^  $c  *//p" tests/check_serve.py | head -1)" \
      timeout 300 "$PY" tests/check_serve.py "$SB" "$M" "$c" --png "$SD/cli0.png" --seed-png "$SD/cli1.png" "$@"
    grep -v '^FAIL' "$T/log" | sed 's/^/     /'
  }
  serve_case same
  serve_case same --serve-plan host
  # --max-memory between the largest stage (CLIP, 6.2 MiB) and all four (10.4 MiB): auto takes host memory, says so
  check "serve same with --max-memory 9000000 (auto: all stages do not fit, one at a time): the same PNGs" sh -c "
    timeout 300 $PY tests/check_serve.py $SB $M same --png $SD/cli0.png --seed-png $SD/cli1.png --max-memory 9000000 > $SD/mm.log 2>&1 &&
    grep -q 'same: both images' $SD/mm.log"
  expect_fail "serve: --serve-plan device over --max-memory: exit 2, both sizes named" \
    "every stage on the device needs [0-9]* bytes (.* MiB), over --max-memory 9000000" \
    "$SB" --model-dir "$M" --serve :0 --serve-plan device --max-memory 9000000
  # --lora applies at start for the server's lifetime: the command line's image with the same --lora
  "$PY" tests/reference/lora_ref.py make "$M/flux1-schnell.safetensors" "$SD/l.lora" --layout kohya --seed 3 > /dev/null
  for s in 0 1; do "$SB" --quiet --model-dir "$M" --prompt "$P" --seed $s --lora "$SD/l.lora:0.75" -o "$SD/lora$s.png"; done
  check "serve: --lora changes the image (the command line's, seed 0)" sh -c "! cmp -s $SD/lora0.png $SD/cli0.png"
  check "serve same with --lora F:0.75: the served PNGs = the command line's with the same --lora" \
    timeout 300 "$PY" tests/check_serve.py "$SB" "$M" same --png "$SD/lora0.png" --seed-png "$SD/lora1.png" --lora "$SD/l.lora:0.75"
  serve_case fifo
  serve_case full --queue 1
  serve_case leaks
  serve_case bad
  serve_case big
  serve_case slow --timeout 2
  serve_case hangup --max-steps 300
  serve_case term --max-steps 300
  echo "k3y-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" > "$SD/key"
  serve_case key --key "$SD/key"
  check "serve: curl's request gets the command line's PNG; GET /health and /metrics (Prometheus text)" sh -c "
    $SB --quiet --model-dir $M --serve 127.0.0.1:0 > $SD/curl.out 2>&1 & pid=\$!
    for i in \$(seq 100); do grep -q '^serving:' $SD/curl.out && break; sleep 0.1; done
    u=\$(sed -n 's|^serving:  \(http://[^/]*\)/.*|\1|p' $SD/curl.out)
    curl -sf \$u/health | grep -q '\"status\":\"ok\"' &&
    curl -sf -H 'Content-Type: application/json' -d '{\"prompt\": \"$P\", \"seed\": 0, \"response_format\": \"b64_json\"}' \
      \$u/v1/images/generations > $SD/curl.json &&
    $PY -c \"import json, base64, sys; d = json.load(open('$SD/curl.json')); sys.stdout.buffer.write(base64.b64decode(d['data'][0]['b64_json']))\" > $SD/curl.png &&
    cmp $SD/curl.png $SD/cli0.png &&
    curl -sf \$u/metrics > $SD/metrics.txt && grep -q '^flux_images_total 1\$' $SD/metrics.txt &&
    grep -q '^flux_requests_total{code=\"200\"} 2\$' $SD/metrics.txt && grep -q '^flux_stage_seconds_total{stage=\"vae\"} ' $SD/metrics.txt &&
    grep -q '^# TYPE flux_queue_length gauge\$' $SD/metrics.txt
    rc=\$?; kill -TERM \$pid; wait \$pid && exit \$rc"
  # the command line's refusals, before anything loads
  expect_fail "serve: --serve without --model-dir: exit 2" "--serve needs --model-dir M" "$SB" --serve 127.0.0.1:0
  expect_fail "serve: --queue without --serve: exit 2" "are settings of --serve" "$SB" --model-dir "$M" --queue 3
  expect_fail "serve: --serve with --prompt: exit 2, the request gives it" "takes the prompt, seed, steps and guidance from each request" \
    "$SB" --model-dir "$M" --serve 127.0.0.1:0 --prompt "$P"
  expect_fail "serve: beyond loopback without a key: exit 2, says how" "listens beyond this machine without a key: give --api-key-file F" \
    "$SB" --model-dir "$M" --serve 0.0.0.0:0
  expect_fail "serve: a port out of range: exit 2" "wants HOST:PORT (PORT 0 to 65535" "$SB" --model-dir "$M" --serve 127.0.0.1:65536
  expect_fail "serve: --queue 0: exit 2" "--queue wants a number of requests (1 to 4096), not '0'" "$SB" --model-dir "$M" --serve :0 --queue 0
  expect_fail "serve: --serve-plan bogus: exit 2" "--serve-plan wants auto, device or host" "$SB" --model-dir "$M" --serve :0 --serve-plan gpu
  printf 'short\n' > "$SD/shortkey"
  expect_fail "serve: a key file with a short key: exit 2" "wants one line of at least 16 printable characters" \
    "$SB" --model-dir "$M" --serve :0 --api-key-file "$SD/shortkey"
  mkfifo "$SD/fifokey"
  expect_fail "serve: a FIFO as the key file: refused, no wait" "is a FIFO" "$SB" --model-dir "$M" --serve :0 --api-key-file "$SD/fifokey"
  expect_fail "serve: a model folder without its files: each named, exit 2" "no text_encoder_2/model.safetensors" \
    "$SB" --model-dir "$T" --serve :0
  # the request parsing under ASan + UBSan + LeakSanitizer: the OpenCL project's flux-san (PoCL's own LLVM leaks suppressed)
  "$FLUXCC" pipeline --t5 examples/pipeline-tiny/t5.fdsl --clip examples/pipeline-tiny/clip.fdsl --transformer examples/pipeline-tiny/flux.fdsl \
    --vae examples/pipeline-tiny/vae.fdsl --opt hc --target opencl -o "$SD/ocl" --quiet > /dev/null && make -s -C "$SD/ocl" -j2 flux-san > /dev/null 2>&1
  printf 'leak:libpocl.so\nleak:libLLVM\n' > "$SD/lsan.supp"
  for c in bad big hangup; do
    check "serve $c under ASan + UBSan + LeakSanitizer (the OpenCL project's flux-san)" env LSAN_OPTIONS=suppressions=$SD/lsan.supp \
      timeout 600 "$PY" tests/check_serve.py "$SD/ocl/flux-san" "$M" "$c" --max-steps 300
  done
fi
