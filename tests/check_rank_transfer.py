#!/usr/bin/env python3
"""check_rank_transfer.py TABLE RECORDS MIN — scripts/rank-transfer.py's row for
RECORDS (run with --min-candidates MIN) against the records themselves: the kernels
counted, each column a ratio of 1 or more that never grows with more picks, and the
random columns recomputed here by going through every k-subset (the script uses a
formula)."""
import importlib.util
import itertools
import json
import math
import sys

spec = importlib.util.spec_from_file_location("rank_transfer", "scripts/rank-transfer.py")
rt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rt)

table, path, least = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [l for l in open(table) if l.startswith(f"| {path} |")]
assert len(rows) == 1, f"no single row for {path} in {table}"
cells = [c.strip() for c in rows[0].strip().strip("|").split("|")]
n, top, rand = int(cells[1]), [float(c) for c in cells[2:5]], [float(c) for c in cells[5:8]]

kernels, logs = 0, [0.0] * len(rt.TOPS)
for k in json.load(open(path))["kernels"]:
    cands, ratio = rt.ranked(k, least)
    if not cands:
        continue
    assert len(ratio) <= 16, f"{k['name']}: {len(ratio)} candidates, too many to go through every subset here"
    kernels += 1
    for j, top_k in enumerate(rt.TOPS):
        subsets = list(itertools.combinations(ratio, min(top_k, len(ratio))))
        logs[j] += sum(math.log(min(s)) for s in subsets) / len(subsets)
assert kernels >= 1, f"{path}: no kernel with {least} candidates beyond the baselines: the check checks nothing"
assert n == kernels, f"{n} kernels in the table, {kernels} in the records"
for col in (top, rand):
    assert all(1.0 <= v <= rt.WORST for v in col), f"a ratio out of [1, {rt.WORST}]: {col}"
    assert col[0] >= col[1] >= col[2], f"more picks did worse: {col}"
for j, top_k in enumerate(rt.TOPS):
    want = math.exp(logs[j] / kernels)
    assert abs(rand[j] - want) <= 1e-3 * want + 5e-4, f"{top_k} at random: {rand[j]}, every subset gives {want:.3f}"
print(f"ok: {n} kernels, top {top}, at random {rand}")
