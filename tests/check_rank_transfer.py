#!/usr/bin/env python3
"""check_rank_transfer.py TABLE RECORDS MIN — scripts/rank-transfer.py's row for
RECORDS (run with --min-candidates MIN) against the records themselves: the kernels
counted, each column a ratio of 1 or more that never grows with more picks, and the
random top 1 recomputed here (the geometric mean of every ratio)."""
import json
import math
import sys

table, path, least = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [l for l in open(table) if l.startswith(f"| {path} |")]
assert len(rows) == 1, f"no single row for {path} in {table}"
cells = [c.strip() for c in rows[0].strip().strip("|").split("|")]
n, top, rand = int(cells[1]), [float(c) for c in cells[2:5]], [float(c) for c in cells[5:8]]

logs, kernels = 0.0, 0
for k in json.load(open(path))["kernels"]:
    cands = [c for c in k["candidates"] if c.get("measured") and "features" in c and c["from"] not in ("raw", "hc", "tc")
             and c["status"] in ("ok", "slow", "failed")]
    times = [c["min_us"] if c["status"] != "failed" and c.get("min_us", 0) > 0 else None for c in cands]
    known = [t for t in times if t]
    if len(cands) < least or not known:
        continue
    kernels += 1
    logs += sum(math.log(min(t / min(known), 100.0)) if t else math.log(100.0) for t in times) / len(times)
assert kernels >= 1, f"{path}: no kernel with {least} candidates beyond the baselines: the check checks nothing"
assert n == kernels, f"{n} kernels in the table, {kernels} in the records"
for col in (top, rand):
    assert all(1.0 <= v <= 100.0 for v in col), f"a ratio out of [1, 100]: {col}"
    assert col[0] >= col[1] >= col[2], f"more picks did worse: {col}"
want = math.exp(logs / kernels)
assert abs(rand[0] - want) <= 1e-3 * want + 5e-4, f"1 at random {rand[0]}, the records say {want:.3f}"
print(f"ok: {n} kernels, top {top}, at random {rand}")
