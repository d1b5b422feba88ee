"""fuzz_common.py — what the JSON fuzzers share (fuzz_records.py, fuzz_model.py):
their set-up from the command line, running fluxcc with LSan's tracer crash told
apart, and the byte-wise mutation."""
import os, random, shutil, subprocess, time


def start(argv):
    """SECONDS OUT FLUXCC FLUXCC_SAN: (secs, out, F, SAN, seed, rng, work); OUT/findings made, OUT/work fresh"""
    secs, out, F, SAN = float(argv[1]), argv[2], argv[3], argv[4]
    seed = int(os.environ.get("SEED", str(int(time.time()))))
    os.makedirs(out + "/findings", exist_ok=True)
    w = out + "/work"
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    return secs, out, F, SAN, seed, random.Random(seed), w


class Runner:
    def __init__(self, env=None):
        self.env, self.tracer = env, 0   # tracer: leak checks aborted by LSan's own tracer

    def run(self, cmd, timeout=60):
        """(exit status or "timeout", stdout + stderr)"""
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=self.env)
        except subprocess.TimeoutExpired:
            return "timeout", ""
        rc, log = p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")
        if "LeakSanitizer has encountered a fatal error" in log and "Tracer caught signal" in log:
            # LSan's own tracer crashed at exit stopping PoCL's threads: the leak check did not run (not fluxcc's);
            # the exit status is then LSan's, so the run's own is read from its last line
            self.tracer += 1
            log = log[:log.find("Tracer caught signal")]
            rc = 0 if "unique kernels, arena" in log or "per forward:" in log else 2 if "error:" in log else rc
        return rc, log


def paths(x, limit, p=()):
    """every path (a tuple of keys and indices) into the JSON value x, lists' first `limit` items"""
    yield p
    if isinstance(x, dict):
        for k, v in x.items():
            yield from paths(v, limit, p + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x[:limit]):
            yield from paths(v, limit, p + (i,))


def mutate_bytes(rng, b, rounds):
    """bytes flipped, JSON punctuation inserted, runs cut, the tail cut"""
    b = bytearray(b)
    for _ in range(rounds):
        if not b: break
        i = rng.randrange(len(b))
        op = rng.randrange(4)
        if op == 0: b[i] = rng.randrange(256)
        elif op == 1: b.insert(i, rng.choice(b'{}[],:"\\0-e.9'))
        elif op == 2: del b[i:i + rng.randrange(1, 40)]
        else: del b[i:]
    return bytes(b)
