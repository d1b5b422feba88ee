#!/usr/bin/env python3
"""tests/check_serve.py BINARY MODEL_DIR CASE [--png REF.png] [--seed-png REF1.png] [FLAG ...]

Drives `BINARY --model-dir MODEL_DIR --serve 127.0.0.1:0 FLAGS` (a pipeline
binary) over loopback with Python's standard library, for the suite's serve
section. Each CASE starts its own server, checks one behaviour, stops it
with SIGTERM and wants exit 0 and no sanitizer report; it prints what it saw
and exits 1 on the first thing that is wrong.

  same       the served PNG = --png (the command line's, seed 0) byte for byte;
             with n 2 the second image = --seed-png (seed 1)
  fifo       32 requests from 8 concurrent clients: all 200, made in arrival order
  full       --queue 1: a burst gets 429 with Retry-After, the rest 200
  leaks      resident memory flat across 200 requests
  bad        every bad request -> its 4xx naming the field; healthy after
  big        a 50 MB Content-Length refused (413) before any body is sent
  slow       a client that stalls mid-request is cut off after --timeout 2;
             another is served meanwhile
  hangup     a waiting client that hangs up leaves the queue (flux_dropped_total)
  term       SIGTERM during an image: that answer completes (200), a waiting
             one gets 503, exit 0
  key        --api-key-file: 401 without or with a wrong token, 200 with it
"""
import base64, http.client, json, os, re, signal, socket, subprocess, sys, threading, time

PROMPT = "a red cube on a glass table"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


class Server:
    def __init__(self, binary, model, flags):
        self.p = subprocess.Popen([binary, "--model-dir", model, "--serve", "127.0.0.1:0"] + flags,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                fail("the server did not start: " + self.p.stderr.read()[-2000:])
            self.lines.append(line)
            m = re.match(r"serving:  http://127\.0\.0\.1:(\d+)/", line)
            if m:
                self.port = int(m.group(1))
                break
        self.out = threading.Thread(target=self._read, daemon=True)
        self.out.start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line)

    def conn(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def post(self, body, headers=None, timeout=120):
        c = self.conn(timeout)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        c.request("POST", "/v1/images/generations", data, {"Content-Type": "application/json", **(headers or {})})
        r = c.getresponse()
        out = r.status, dict(r.getheaders()), r.read()
        c.close()
        return out

    def get(self, path, headers=None):
        c = self.conn()
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        out = r.status, r.read()
        c.close()
        return out

    def metric(self, name):
        st, body = self.get("/metrics")
        m = re.search(r"^%s (\S+)$" % re.escape(name), body.decode(), re.M)
        return float(m.group(1)) if m else None

    def rss_kib(self):
        for line in open("/proc/%d/status" % self.p.pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(timeout=60)
        err = self.p.stderr.read()
        self.out.join(timeout=5)
        if rc != 0:
            fail("the server exited %d on SIGTERM: %s" % (rc, err[-2000:]))
        if re.search(r"AddressSanitizer|LeakSanitizer|runtime error", err):
            fail("a sanitizer report:\n" + err[-4000:])
        if "serve:    stopped" not in "".join(self.lines):
            fail("no 'stopped' line")
        return err


def until(what, test, seconds=60):
    t = time.time() + seconds
    while not test():
        if time.time() > t:
            fail("waited %d s for %s" % (seconds, what))
        time.sleep(0.02)


def png_of(body, i=0):
    d = json.loads(body)
    if not isinstance(d.get("created"), int) or len(d.get("data", [])) <= i:
        fail("not the images API's answer: %r" % body[:200])
    return base64.b64decode(d["data"][i]["b64_json"])


def case_same(S, a):
    st, h, body = S.post({"prompt": PROMPT, "seed": 0, "n": 2, "size": a.size, "response_format": "b64_json", "model": "x"})
    if st != 200 or h.get("Content-Type") != "application/json":
        fail("status %d %s" % (st, body[:300]))
    if png_of(body, 0) != open(a.png, "rb").read():
        fail("the served PNG differs from the command line's")
    if png_of(body, 1) != open(a.seed_png, "rb").read():
        fail("the second image (seed 1) differs from the command line's --seed 1")
    print("same: both images = the command line's, byte for byte")


def case_fifo(S, a):
    results, lock = [], threading.Lock()

    def client(k):
        for i in range(4):
            st, _, body = S.post({"prompt": "%s %d" % (PROMPT, k), "seed": k * 4 + i, "steps": 2})
            with lock:
                results.append((st, len(body)))
    ts = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    codes = [r[0] for r in results]
    if codes != [200] * 32:
        fail("answers %s" % codes)
    for _ in range(100):   # (the log's last lines may still be on their way)
        done = [int(m.group(1)) for m in (re.match(r"request (\d+): 200", l) for l in S.lines) if m]
        if len(done) == 32:
            break
        time.sleep(0.05)
    if done != sorted(done) or len(done) != 32:
        fail("made out of arrival order: %s" % done)
    print("fifo: 32 of 32 answered 200, made in arrival order (requests %d..%d)" % (done[0], done[-1]))


def case_full(S, a):
    results, lock = [], threading.Lock()

    def client(k):
        st, h, body = S.post({"prompt": PROMPT, "seed": k, "steps": 40})
        with lock:
            results.append((st, h.get("Retry-After"), body))
    ts = [threading.Thread(target=client, args=(k,)) for k in range(6)]
    for t in ts:
        t.start()
        time.sleep(0.02)
    for t in ts:
        t.join()
    full = [r for r in results if r[0] == 429]
    ok = [r for r in results if r[0] == 200]
    if len(full) + len(ok) != 6 or not full or len(ok) < 2:
        fail("answers %s" % [r[0] for r in results])
    if any(r[1] != "1" or b"queue is full" not in r[2] for r in full):
        fail("a 429 without Retry-After or its message: %r" % full[0][2])
    print("full: %d answered 429 (Retry-After: 1), %d answered 200" % (len(full), len(ok)))


def case_leaks(S, a):
    for i in range(20):
        S.post({"prompt": PROMPT, "seed": i, "steps": 1})
    before = S.rss_kib()
    for i in range(200):
        st, _, body = S.post({"prompt": "%s %d" % (PROMPT, i), "seed": i, "steps": 1})
        if st != 200:
            fail("request %d: %d" % (i, st))
        if i % 50 == 0:
            S.get("/metrics")
            S.post(b"{not json")
    after = S.rss_kib()
    if after - before > 2048:
        fail("resident memory grew %d KiB over 200 requests (%d -> %d)" % (after - before, before, after))
    print("leaks: resident memory %d KiB -> %d KiB over 200 requests" % (before, after))


BAD = [  # body, status, the field, a piece of the message
    (b"", 400, None, "malformed JSON"),
    (b"{", 400, None, "malformed JSON"),
    (b"[1]", 400, None, "not a JSON object"),
    (b'{"prompt": "x"} 1', 400, None, "more after"),
    (b"{}", 400, "prompt", "missing"),
    (b'{"prompt": 5}', 400, "prompt", "wants a string"),
    (b'{"prompt": ""}', 400, "prompt", "1 to 4000"),
    (json.dumps({"prompt": "x" * 4001}).encode(), 400, "prompt", "1 to 4000"),
    (b'{"prompt": "x", "prompt": "y"}', 400, "prompt", "given twice"),
    (b'{"prompt": "x", "n": 0}', 400, "n", "1 to 4"),
    (b'{"prompt": "x", "n": 2.5}', 400, "n", "1 to 4"),
    (b'{"prompt": "x", "n": "2"}', 400, "n", "1 to 4"),
    (b'{"prompt": "x", "steps": 0}', 400, "steps", "1 to"),
    (b'{"prompt": "x", "steps": 1e9}', 400, "steps", "1 to"),
    (b'{"prompt": "x", "seed": -1}', 400, "seed", "0 to"),
    (b'{"prompt": "x", "seed": 1e300}', 400, "seed", "0 to"),
    (b'{"prompt": "x", "size": "1024x1024"}', 400, "size", "this server makes"),
    (b'{"prompt": "x", "response_format": "url"}', 400, "response_format", "b64_json"),
    (b'{"prompt": "x", "guidance": 3.5}', 400, "guidance", "no `guidance` input"),
    (b'{"prompt": "x", "style": "vivid"}', 400, "style", "unknown field"),
    (b'{"prompt": "x", "model": 3}', 400, "model", "wants a string"),
    (b'{"prompt": {"a": [[[[1]]]]}}', 400, "prompt", "wants a string"),
    (b"[" * 100000, 400, None, "malformed JSON"),
    (b'{"prompt": "\xff\xfe"}', 400, "prompt", "not valid UTF-8 at byte 0"),
    (b'{"prompt": "a\\u0000b"}', 400, None, "NUL"),
    (b'{"prompt": "a\x00b"}', 400, None, "raw control character"),
    (b'{"prompt": "a\nb"}', 400, None, "raw control character"),
    (b'{"prompt": "a"}\x00', 400, None, "more after"),
]


def case_bad(S, a):
    for body, want, field, piece in BAD:
        st, h, out = S.post(body)
        try:
            e = json.loads(out)["error"]
        except Exception:
            fail("%r: not a JSON error: %r" % (body[:60], out[:200]))
        if st != want or e.get("param") != field or piece not in e.get("message", "") or e.get("code") != want:
            fail("%r: %d %r" % (body[:60], st, e))
    for method, path, want in [("GET", "/v1/images/generations", 405), ("POST", "/health", 405), ("GET", "/nope", 404),
                               ("DELETE", "/metrics", 405)]:
        c = S.conn()
        c.request(method, path, b"{}" if method == "POST" else None)
        r = c.getresponse()
        r.read()
        if r.status != want:
            fail("%s %s: %d" % (method, path, r.status))
    # a body without a Content-Length (chunked): refused before it is read
    c = S.conn()
    c.putrequest("POST", "/v1/images/generations")
    c.putheader("Transfer-Encoding", "chunked")
    c.endheaders()
    r = c.getresponse()
    if r.status != 411:
        fail("chunked body: %d" % r.status)
    st, body = S.get("/health")
    st2, _, img = S.post({"prompt": PROMPT, "seed": 0})
    if st != 200 or json.loads(body)["status"] != "ok" or st2 != 200:
        fail("not healthy after the bad requests: %d %r, %d" % (st, body, st2))
    if S.metric('flux_requests_total{code="400"}') != len([b for b in BAD if b[1] == 400]):
        fail("the 400s are not counted in /metrics")
    print("bad: %d bad bodies, 4 bad routes or methods and a chunked body refused by name; healthy after" % len(BAD))


def case_big(S, a):
    s = socket.create_connection(("127.0.0.1", S.port), timeout=10)
    s.sendall(b"POST /v1/images/generations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 52428800\r\n\r\n")
    t0 = time.time()
    head = s.recv(4096).decode(errors="replace")
    s.close()
    if not head.startswith("HTTP/1.1 413") or "larger than 1048576 bytes" not in head:
        fail("a 50 MB Content-Length: %r" % head[:300])
    print("big: 413 after %.2f s, before any of the 50 MB body was sent" % (time.time() - t0))


def case_slow(S, a):
    s = socket.create_connection(("127.0.0.1", S.port), timeout=30)
    s.sendall(b"POST /v1/images/generations HTTP/1.1\r\nHost: x\r\nContent-Le")
    t0 = time.time()
    st, _, _ = S.post({"prompt": PROMPT, "seed": 2})
    if st != 200:
        fail("another client was not served while one stalled: %d" % st)
    served = time.time() - t0
    got = s.recv(4096)
    cut = time.time() - t0
    s.close()
    if got != b"" or not 1.0 <= cut <= 15:
        fail("the stalled client: %r after %.1f s" % (got[:100], cut))
    print("slow: another client served in %.2f s; the stalled one cut off after %.1f s (--timeout 2)" % (served, cut))


def case_hangup(S, a):
    res = []
    long = threading.Thread(target=lambda: res.append(S.post({"prompt": PROMPT, "seed": 1, "steps": 300})))   # (--max-steps 300)
    long.start()
    until("the first image to start", lambda: S.metric("flux_running") == 1)
    s = socket.create_connection(("127.0.0.1", S.port), timeout=10)
    body = json.dumps({"prompt": PROMPT, "seed": 9}).encode()
    s.sendall(b"POST /v1/images/generations HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    until("the second request to wait", lambda: S.metric("flux_queue_length") == 1, 10)
    s.close()
    until("the hung-up request to leave the queue", lambda: S.metric("flux_dropped_total") == 1, 10)
    running = S.metric("flux_running")
    long.join()
    if running != 1 or S.metric("flux_queue_length") != 0 or res[0][0] != 200 or S.metric("flux_images_total") != 1:
        fail("left the queue only after the first image (running %s), or that one failed" % running)
    if not any("the client hung up while waiting" in l for l in S.lines):
        fail("no log line for the dropped request")
    print("hangup: the waiting request left the queue when its client hung up (flux_dropped_total 1)")


def case_term(S, a):
    res = {}

    def run(k, steps):
        res[k] = S.post({"prompt": PROMPT, "seed": k, "steps": steps})
    first = threading.Thread(target=run, args=(0, 300))   # (with --max-steps 300: a few seconds)
    first.start()
    until("the first image to start", lambda: S.metric("flux_running") == 1)
    second = threading.Thread(target=run, args=(1, 1))
    second.start()
    until("the second request to wait", lambda: S.metric("flux_queue_length") == 1, 10)
    S.p.send_signal(signal.SIGTERM)
    first.join()
    second.join()
    rc = S.p.wait(timeout=60)
    if rc != 0:
        fail("exit %d after SIGTERM" % rc)
    if res[0][0] != 200 or not png_of(res[0][2]).startswith(b"\x89PNG"):
        fail("the running request: %d %r" % (res[0][0], res[0][2][:200]))
    if res[1][0] != 503 or b"stopping" not in res[1][2]:
        fail("the waiting request: %d %r" % (res[1][0], res[1][2][:200]))
    try:
        socket.create_connection(("127.0.0.1", S.port), timeout=2).close()
        fail("still listening after SIGTERM")
    except OSError:
        pass
    print("term: the running image answered 200 with its PNG, the waiting one 503, exit 0")
    return True


def case_key(S, a):
    key = open(a.key).read().split("\n")[0]
    for h, want in [({}, 401), ({"Authorization": "Bearer wrong-key-wrong-key"}, 401),
                    ({"Authorization": "Basic " + key}, 401), ({"Authorization": "Bearer " + key}, 200)]:
        st, hd, body = S.post({"prompt": PROMPT, "seed": 0, "steps": 1}, h)
        if st != want or (want == 401 and hd.get("WWW-Authenticate") != "Bearer"):
            fail("%r: %d" % (h, st))
    if S.get("/metrics")[0] != 401 or S.get("/health")[0] != 200:
        fail("/metrics without the key, or /health")
    print("key: 401 without the token, with a wrong one or another scheme; 200 with it; /health open")


def main():
    args = sys.argv[1:]
    binary, model, case = args[:3]

    class A:
        png = seed_png = key = None
        size = "8x8"
    a, flags, i = A(), [], 3
    while i < len(args):
        if args[i] in ("--png", "--seed-png", "--key", "--size"):
            setattr(a, args[i][2:].replace("-", "_"), args[i + 1])
            if args[i] == "--key":
                flags += ["--api-key-file", args[i + 1]]
            i += 2
        else:
            flags.append(args[i])
            i += 1
    S = Server(binary, model, flags)
    stopped = globals()["case_" + case](S, a)
    if not stopped:
        S.stop()


if __name__ == "__main__":
    main()
