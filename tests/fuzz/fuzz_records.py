#!/usr/bin/env python3
"""fuzz_records.py SECONDS OUT FLUXCC FLUXCC_SAN — structure-aware fuzzing of
records.json, tuning-cache entries (issue 20) and ./flux --trace files (issue 56).
KINDS=records,cache,trace (the default: all three) picks what is mutated.

Seeds are real files: the records.json and cache entries of small BEAM searches
(tests/opt/matmul.fdsl, tests/opt/attention.fdsl) made here. Each execution
mutates one of them as JSON (a value replaced by another type, a huge, negative,
fractional or non-finite number, a hostile string; a key deleted or renamed; a
list emptied, duplicated or cut; deep nesting) or as text (a byte flipped,
inserted or cut, the file truncated), then hands it to fluxcc:
  records: `fluxcc report DIR` and a replay (`--records`), under the sanitizer
           build; a replay that is accepted is built and run with --check
           against the interpreter (one in 8, they are slow).
  cache:   the entry put in a copy of the cache, then a search that reads it;
           an entry that is used (no warning) must give a project that builds
           and passes --check (one in 8); one that is not must be said in one
           line and overwritten.
  trace:   a real `./flux --profile 2 --trace` of a C-target project, then
           `fluxcc report DIR --trace FILE` under the sanitizer build; a
           trace of another compile of the same model is mutated too.
A finding: a signal, a time-out, a sanitizer report, an exit status other than
0 or 2, an error without 'error:', a terminal control byte in the output,
'not JSON' for text Python parses as JSON, or an accepted file whose program
fails --check. Each is kept in OUT/findings/N. Prints a line every 200
executions and a total at the end; exit 1 on findings.
"""
import json, os, random, shutil, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_common import Runner, mutate_bytes, paths, start

secs, out, F, SAN, seed, rng, w = start(sys.argv)
MODELS = ["tests/opt/matmul.fdsl", "tests/opt/attention.fdsl"]
KINDS = os.environ.get("KINDS", "records,cache,trace").split(",")
assert KINDS and all(k in ("records", "cache", "trace") for k in KINDS), "KINDS: records, cache, trace"
runner = Runner()
run = runner.run


# seeds: a search per model, its records, cache entries, and the reference for --check
seeds = []
for i, m in enumerate(MODELS):
    d = f"{w}/seed{i}"
    os.makedirs(d)
    rc, log = run([F, m, "--opt", "beam", "--target", "opencl", "--budget", "4", "--seed", "1", "--cache", d + "/cache", "-o", d + "/p"], 600)
    assert rc == 0, log
    run([F, "init", m, "--seed", "3", "--weights", d + "/w", "--inputs", d + "/i"])
    rc, log = run([F, "run", m, "--weights", d + "/w", "--inputs", d + "/i", "-o", d + "/ref"])
    assert rc == 0, log
    entries = sorted(os.listdir(d + "/cache"))
    traces = []
    if "trace" in KINDS:  # the project the traces are reported against (hc), and a trace of it and of raw's compile
        for meth in ("hc", "raw"):
            rc, log = run([F, m, "--opt", meth, "--target", "c", "-o", f"{d}/{meth}"], 600)
            assert rc == 0, log
            rc, log = run(["make", "-s", "-C", f"{d}/{meth}"], 600)
            assert rc == 0, log
            rc, log = run([f"{d}/{meth}/flux", "--quiet", "--random-weights", "1", "--random-inputs", "1", "--profile", "2",
                           "--trace", f"{d}/{meth}.trace.json"], 600)
            assert rc == 0, log
            traces.append(open(f"{d}/{meth}.trace.json").read())
    seeds.append({"model": m, "dir": d, "records": open(d + "/p/records.json").read(),
                  "cache": {e: open(f"{d}/cache/{e}").read() for e in entries}, "traces": traces})

HOSTILE = ["x\n#define ld_f32(p,i) (2.0f*(p)[i])\n//", "*/", "\\", "??/", "\x1b[2J", "\x00", "", "A" * 5000,
           "UPCAST(0,99999999999)", "UPCAST(-1,2)", "UPCAST(0,2)x", "NOLOCALS(0,0)", "TC(0,1)", "QROWS(0,4)", "beam", "raw",
           "é", "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace")]
NUMBERS = [0, -1, -5, 0.5, 2.7, 1e300, -1e300, 2**31, 2**32 + 2, 2**63, 2**64, 1e-300, 3, 24, 65537, 99999999999]


def mutate_json(doc):
    ps = list(paths(doc, 50))
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        p = rng.choice(ps)
        parent, key = None, None
        x = doc
        try:
            for k in p:
                parent, key, x = x, k, x[k]
        except (IndexError, KeyError, TypeError):
            continue  # an earlier mutation of this round moved it
        what = rng.randrange(12)
        if not isinstance(parent, (dict, list)):
            continue  # the root, or a string an earlier mutation of this round put there (a string indexes too)
        if what == 0: new = rng.choice(HOSTILE)
        elif what == 1: new = rng.choice(NUMBERS)
        elif what == 2: new = None
        elif what == 3: new = rng.choice([True, False, [], {}, [1, 2], {"a": 1}])
        elif what == 4 and isinstance(parent, dict): del parent[key]; continue
        elif what == 5 and isinstance(parent, dict): parent[rng.choice(HOSTILE[:4]) + str(key)] = parent.pop(key); continue
        elif what == 6 and isinstance(x, list): new = x * rng.choice([0, 2, 30])
        elif what == 7 and isinstance(x, list) and x: new = x[: rng.randrange(len(x))]
        elif what == 8: new = x
        elif what == 9:
            new = x
            for _ in range(rng.choice([5, 40, 2000])): new = [new]
        elif what == 10 and isinstance(x, (int, float)) and not isinstance(x, bool): new = x * rng.choice([-1, 0.5, 1e6, 1e300])
        elif what == 11 and isinstance(x, str): new = x + rng.choice(HOSTILE)
        else: new = rng.choice(HOSTILE + NUMBERS)
        parent[key] = new
    return json.dumps(doc, indent=rng.choice([None, 1]))


def mutate(text):
    if rng.random() < 0.7:
        try:
            return mutate_json(json.loads(text)).encode()
        except RecursionError:
            pass
    return mutate_bytes(rng, text.encode(), rng.choice([1, 2, 8]))


def no_constant(name):
    raise ValueError(name)  # NaN, Infinity: Python's json reads them, JSON has none


def is_json(data):
    try:
        json.loads(data.decode("utf-8"), parse_constant=no_constant)
        return True
    except Exception:
        return False


n = execs = found = accepted = refused = built = 0
per_kind = {k: 0 for k in KINDS}
end = time.time() + secs


def finding(what, data, log):
    global found
    found += 1
    d = f"{out}/findings/{found}"
    os.makedirs(d, exist_ok=True)
    open(d + "/input.json", "wb").write(data)
    open(d + "/log", "w").write(log)
    open(d + "/what", "w").write(what + "\n")
    print(f"FINDING {found}: {what}", flush=True)


def judge(rc, log, data, what):
    """True when the answer is acceptable (0 or 2 with a message, nothing else)"""
    if rc == "timeout": return finding(what + ": time-out", data, log) or False
    if "runtime error:" in log or "Sanitizer" in log: return finding(what + ": sanitizer report", data, log) or False
    if rc not in (0, 2): return finding(f"{what}: exit {rc}", data, log) or False
    if rc == 2 and "error:" not in log: return finding(what + ": exit 2 without a message", data, log) or False
    if "\x1b" in log or "\x07" in log: return finding(what + ": a control byte reaches the terminal", data, log) or False
    if "not JSON" in log and is_json(data): return finding(what + ": 'not JSON' for JSON", data, log) or False
    return True


def check_project(s, proj, data, what):
    global built
    built += 1
    rc, log = run(["make", "-s", "-C", proj], 300)
    if rc == 0:
        rc, log2 = run([proj + "/flux", "--quiet", "--weights", s["dir"] + "/w", "--inputs", s["dir"] + "/i", "--check", s["dir"] + "/ref"], 300)
        log += log2
    if rc != 0: finding(what + f": accepted, but the project fails (exit {rc})", data, log)


while time.time() < end:
    n += 1
    s = rng.choice(seeds)
    kind = rng.choice(KINDS)
    per_kind[kind] += 1
    if kind == "trace":
        data = mutate(rng.choice(s["traces"]))
        open(w + "/trace.json", "wb").write(data)
        rc, log = run([SAN, "report", s["dir"] + "/hc", "--device", "h200", "--trace", w + "/trace.json"]); execs += 1
        if judge(rc, log, data, "report --trace"):
            if rc == 0: accepted += 1
            else: refused += 1
    elif kind == "records":
        data = mutate(s["records"])
        os.makedirs(w + "/rec", exist_ok=True)
        open(w + "/rec/records.json", "wb").write(data)
        rc, log = run([SAN, "report", w + "/rec"]); execs += 1
        judge(rc, log, data, "report")
        shutil.rmtree(w + "/rp", ignore_errors=True)
        rc, log = run([SAN, s["model"], "--opt", "beam", "--target", "opencl", "--records", w + "/rec/records.json", "-o", w + "/rp"]); execs += 1
        if judge(rc, log, data, "replay"):
            if rc == 0:
                accepted += 1
                if rng.random() < 1 / 8: check_project(s, w + "/rp", data, "replay")
            else: refused += 1
    else:  # a cache entry
        name = rng.choice(sorted(s["cache"]))
        data = mutate(s["cache"][name])
        shutil.rmtree(w + "/cache", ignore_errors=True)
        shutil.copytree(s["dir"] + "/cache", w + "/cache")
        open(f"{w}/cache/{name}", "wb").write(data)
        shutil.rmtree(w + "/cp", ignore_errors=True)
        rc, log = run([SAN, s["model"], "--opt", "beam", "--target", "opencl", "--budget", "4", "--seed", "1", "--cache", w + "/cache", "-o", w + "/cp"], 300)
        execs += 1
        good = judge(rc, log, data, "cache")
        if good and rc == 0:
            if "warning: cache entry" in log:
                refused += 1
                if sum(1 for l in log.splitlines() if "warning: cache entry" in l) != 1: finding("cache: not one line", data, log)
                rc2, log2 = run([F, s["model"], "--opt", "beam", "--target", "opencl", "--budget", "4", "--seed", "1", "--cache", w + "/cache", "-o", w + "/cp2"], 300)
                if "warning: cache entry" in log2: finding("cache: the bad entry was not overwritten", data, log2)
            else:
                accepted += 1
                if rng.random() < 1 / 8: check_project(s, w + "/cp", data, "cache")
        elif good: finding(f"cache: a bad entry stops the compile (exit {rc})", data, log)
    if n % 200 == 0:
        print(f"inputs {n}, executions {execs}, accepted {accepted}, refused {refused}, projects built and checked {built}, findings {found}", flush=True)
print(f"total: inputs {n} ({', '.join(f'{k} {v}' for k, v in per_kind.items())}), executions {execs}, accepted {accepted}, "
      f"refused {refused}, projects built and checked {built}, findings {found} (seed {seed}, {secs:.0f} s; "
      f"leak checks aborted by LSan's tracer: {runner.tracer})")
sys.exit(1 if found else 0)
