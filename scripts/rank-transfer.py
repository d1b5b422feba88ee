#!/usr/bin/env python3
"""scripts/rank-transfer.py [--min-candidates N] MODEL.json RECORDS.json... — how well a cost model ranks
candidates it was not trained on. A benchmark, not a test; no device needed.

MODEL.json is a model `fluxcc train` wrote (train it on other records than these).
For every kernel of each RECORDS.json (a search's records, e.g. a full BEAM's) the
model scores the measured candidates other than RAW's, HC's and TC's (a search times
those anyway); a table gives, per file, the best measured time among the model's top
1, 4 and 8 as a ratio to the best of them all (geometric mean over the kernels with
at least N such candidates, default 9), and the same for k picked at random (exact, not drawn).
A candidate that failed counts as 100x the best. Needs libxgboost0 (the library
fluxcc loads) and nothing else: the model is the product's own, read through
XGBoost's C API.
"""
import ctypes
import ctypes.util
import json
import math
import sys

TOPS = (1, 4, 8)
WORST = 100.0  # a failed candidate, and the cap of a ratio


def xgboost():
    for name in ("libxgboost.so.0", ctypes.util.find_library("xgboost")):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    sys.exit("rank-transfer: XGBoost's library not found: install libxgboost0 (sh scripts/deps.sh)")


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"rank-transfer: {path}: {e}")


class Model:
    def __init__(self, path):
        m = read_json(path)
        if m.get("fluxcc_cost_model") is None or "xgboost" not in m:
            sys.exit(f"rank-transfer: {path}: not a fluxcc cost model")
        self.version, self.nfeat = m["feature_version"], len(m["features"])
        self.x = xgboost()
        self.x.XGBGetLastError.restype = ctypes.c_char_p
        self.b = ctypes.c_void_p()
        self.ok(self.x.XGBoosterCreate(None, ctypes.c_uint64(0), ctypes.byref(self.b)), "creating a booster")
        text = m["xgboost"].encode()
        self.ok(self.x.XGBoosterLoadModelFromBuffer(self.b, text, ctypes.c_uint64(len(text))), f"{path}: loading the model")

    def ok(self, rc, what):
        if rc:
            sys.exit(f"rank-transfer: XGBoost: {what}: {self.x.XGBGetLastError().decode()}")

    def predict(self, rows):
        flat = (ctypes.c_float * (len(rows) * self.nfeat))(*[v for r in rows for v in r])
        d = ctypes.c_void_p()
        self.ok(self.x.XGDMatrixCreateFromMat(flat, ctypes.c_uint64(len(rows)), ctypes.c_uint64(self.nfeat), ctypes.c_float(math.nan), ctypes.byref(d)), "a matrix")
        n, out = ctypes.c_uint64(), ctypes.POINTER(ctypes.c_float)()
        self.ok(self.x.XGBoosterPredict(self.b, d, 0, 0, 0, ctypes.byref(n), ctypes.byref(out)), "predicting")
        scores = [out[i] for i in range(n.value)]
        self.x.XGDMatrixFree(d)
        return scores


def ranked(kernel, least):
    """A kernel's measured candidates beyond the baselines and each one's time as a
    ratio to their best; ([], []) when fewer than `least` or none has a time."""
    cands = [c for c in kernel["candidates"] if c.get("measured") and "features" in c and c["from"] not in ("raw", "hc", "tc")
             and c["status"] in ("ok", "slow", "failed")]
    times = [c["min_us"] if c["status"] != "failed" and c.get("min_us", 0) > 0 else None for c in cands]
    known = [t for t in times if t]
    if len(cands) < least or not known:
        return [], []
    return cands, [min(t / min(known), WORST) if t else WORST for t in times]


def random_log_ratio(ratios, k):
    # E[log min] over the k-subsets: the i-th smallest is the minimum in C(n-1-i, k-1) of C(n, k)
    r, n = sorted(ratios), len(ratios)
    k = min(k, n)
    return sum(math.comb(n - 1 - i, k - 1) * math.log(r[i]) for i in range(n - k + 1)) / math.comb(n, k)


def main(argv):
    least = 9
    if len(argv) > 2 and argv[1] == "--min-candidates":
        if not argv[2].isdigit() or int(argv[2]) < 1:
            sys.exit(f"rank-transfer: --min-candidates: '{argv[2]}' is not a count of 1 or more")
        least, argv = int(argv[2]), argv[:1] + argv[3:]
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        sys.exit(__doc__.strip())
    model = Model(argv[1])
    records = [(path, read_json(path)) for path in argv[2:]]  # every file read before a line is printed
    for path, rec in records:
        if not isinstance(rec, dict) or not isinstance(rec.get("kernels"), list):
            sys.exit(f"rank-transfer: {path}: not a records.json (no kernels)")
        if rec.get("feature_version") != model.version:
            sys.exit(f"rank-transfer: {path}: feature version {rec.get('feature_version')}, the model's is {model.version}")
    print(f"| records | kernels | " + " | ".join(f"top {k}" for k in TOPS) + " | " + " | ".join(f"{k} at random" for k in TOPS) + " |")
    print("|---" * (2 + 2 * len(TOPS)) + "|")
    for path, rec in records:
        logs, rand, n = [0.0] * len(TOPS), [0.0] * len(TOPS), 0
        for k in rec["kernels"]:
            cands, ratio = ranked(k, least)
            if not cands:
                continue
            scores = model.predict([c["features"] for c in cands])
            order = sorted(range(len(cands)), key=lambda i: -scores[i])  # stable: ties keep the records' order
            for j, top in enumerate(TOPS):
                logs[j] += math.log(min(ratio[i] for i in order[:top]))
                rand[j] += random_log_ratio(ratio, top)
            n += 1
        if n == 0:
            print(f"| {path} | 0 | " + " | ".join("" for _ in range(2 * len(TOPS))) + " |")
            continue
        cells = [f"{math.exp(v / n):.3f}" for v in logs] + [f"{math.exp(v / n):.3f}" for v in rand]
        print(f"| {path} | {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv)
