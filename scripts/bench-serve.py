#!/usr/bin/env python3
"""scripts/bench-serve.py BINARY MODEL_DIR [--requests N] [--steps S] [--rounds R]

Serving on this machine, as a table: a pipeline binary (fluxcc pipeline, e.g.
make demo-image's build/demo-image/pipeline/flux) started with
`--model-dir MODEL_DIR --serve 127.0.0.1:0`, driven over loopback by 1 and
by 8 concurrent clients (Python's http.client, N requests each round), and
against it one command-line run of the same image (`-o`), which loads
everything for every image. Per round, interleaved: the command line's wall
time, the server's start-up (to its `serving:` line), then the two client
counts; medians over rounds with min-max. Resident memory after the rounds
(VmRSS). A benchmark, not a test: the numbers are this machine's.
"""
import http.client, json, os, re, signal, statistics, subprocess, sys, tempfile, threading, time

PROMPT = "a photo of an astronaut riding a horse on the moon, 35mm film"


def start(binary, model):
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "--model-dir", model, "--serve", "127.0.0.1:0", "--queue", "64"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        m = re.match(r"serving:  http://127\.0\.0\.1:(\d+)/", line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
            return p, int(m.group(1)), time.perf_counter() - t0
    sys.exit("bench-serve: the server did not start")


def post(port, seed, steps):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/images/generations", json.dumps({"prompt": PROMPT, "seed": seed, "steps": steps}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    if r.status != 200:
        sys.exit("bench-serve: a request answered %d" % r.status)
    return time.perf_counter() - t0


def drive(port, clients, n, steps):
    lat, lock = [], threading.Lock()

    def client(k):
        for i in range(n // clients):
            t = post(port, k * 1000 + i, steps)
            with lock:
                lat.append(t)
    t0 = time.perf_counter()
    ts = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    lat.sort()
    return len(lat) / wall, statistics.median(lat) * 1e3, lat[min(len(lat) - 1, int(0.95 * len(lat)))] * 1e3


def rss_kib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


def spread(xs, fmt="%.1f"):
    return (fmt + " (" + fmt + "–" + fmt + ")") % (statistics.median(xs), min(xs), max(xs))


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit(__doc__)
    binary, model = a[0], a[1]
    opt = {"--requests": 32, "--steps": 4, "--rounds": 3}
    for i in range(2, len(a), 2):
        opt[a[i]] = int(a[i + 1])
    n, steps, rounds = opt["--requests"], opt["--steps"], opt["--rounds"]
    cli, startup, rows = [], [], {1: [], 8: []}
    tmp = tempfile.mkdtemp()
    for r in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([binary, "--quiet", "--model-dir", model, "--prompt", PROMPT, "--seed", str(r), "--steps", str(steps),
                        "-o", os.path.join(tmp, "cli.png")], check=True)
        cli.append((time.perf_counter() - t0) * 1e3)
        p, port, up = start(binary, model)
        startup.append(up * 1e3)
        post(port, 0, steps)   # (a warm-up)
        for clients in (1, 8):
            rows[clients].append(drive(port, clients, n, steps))
        rss = rss_kib(p.pid)
        p.send_signal(signal.SIGTERM)
        p.wait()
    print("serving %s (%d steps), %d rounds, %d requests per client count and round" % (binary, steps, rounds, n))
    print()
    print("| | images/s | latency median ms | latency p95 ms |")
    print("|---|---|---|---|")
    for clients in (1, 8):
        rs = rows[clients]
        print("| %d client%s | %s | %s | %s |" % (clients, "s" if clients > 1 else "", spread([x[0] for x in rs], "%.2f"),
                                              spread([x[1] for x in rs]), spread([x[2] for x in rs])))
    print()
    print("one command-line run (loads everything, one image): %s ms; the server's start-up: %s ms" %
          (spread(cli), spread(startup)))
    print("resident memory after %d requests: %.1f MiB" % (2 * n + 1, rss / 1024))


if __name__ == "__main__":
    main()
