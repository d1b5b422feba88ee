#!/usr/bin/env python3
"""Checks a `fluxcc compare` directory's table for internal consistency:
each method's sum of kernel times is the launch-weighted sum of its per-kernel
times, the oracle is the sum of per-kernel minima and is no larger than any
method's sum, BEST's sum equals its chosen kernels', every method was checked
and passed, and compare.md shows the same numbers. Exit 1 on the first problem."""
import json, math, os, re, sys

def fail(msg):
    print("check_compare:", msg)
    sys.exit(1)

d = sys.argv[1]
c = json.load(open(os.path.join(d, "compare.json")))
md = open(os.path.join(d, "compare.md")).read()
methods = {m["method"]: m for m in c["methods"]}
if set(methods) != {"raw", "hc", "tc", "beam", "mcts", "rl", "best"}:
    fail("methods %s" % sorted(methods))
sums = {m: 0.0 for m in methods}
oracle = 0.0
for k in c["kernels"]:
    t = k["min_us"]
    for m in methods:
        if m not in t:
            fail("kernel %d has no time for %s" % (k["kernel"], m))
        sums[m] += k["launches"] * t[m]
    lo = min(t[m] for m in methods if m != "best")
    if k["fastest"] not in t or t[k["fastest"]] != lo:
        fail("kernel %d: 'fastest' %s is not the minimum" % (k["kernel"], k["fastest"]))
    oracle += k["launches"] * lo
for m, row in methods.items():
    if row["check"] != "ok":
        fail("%s: check %s" % (m, row["check"]))
    if not math.isclose(row["sum_kernel_ms"], sums[m] * 1e-3, rel_tol=1e-9):
        fail("%s: sum %.6g ms but its kernels add up to %.6g" % (m, row["sum_kernel_ms"], sums[m] * 1e-3))
    if c["oracle_ms"] > row["sum_kernel_ms"] * (1 + 1e-9):
        fail("oracle %.6g ms exceeds %s's sum %.6g" % (c["oracle_ms"], m, row["sum_kernel_ms"]))
    if not row.get("executed_ms_median", 0) > 0:
        fail("%s was not timed end to end" % m)
    # compare.md prints 4 significant digits of the exact sum; compare.json's number went through
    # cJSON's 15 digits, so a sum on a rounding tie may print either way: compare within the rounding
    shown = re.search(r"^\| %s \| ([^ |]+) \|" % m, md, re.M)
    if not shown:
        fail("compare.md lacks %s's row" % m)
    if not math.isclose(float(shown.group(1)), row["sum_kernel_ms"], rel_tol=5.001e-4):
        fail("compare.md shows %s's sum as %s, not %.4g" % (m, shown.group(1), row["sum_kernel_ms"]))
# the spread (fastest forward; the rounds' lowest and highest medians) and, for the searches, how often
# the finals chose against the first measurement: in compare.json, and compare.md showing the same
for m, row in methods.items():
    if not row["executed_ms_min"] <= row["executed_ms_rounds_lo"] <= row["executed_ms_median"] <= row["executed_ms_rounds_hi"]:
        fail("%s: min %g, rounds' medians %g-%g and median %g out of order" %
             (m, row["executed_ms_min"], row["executed_ms_rounds_lo"], row["executed_ms_rounds_hi"], row["executed_ms_median"]))
    cells = re.search(r"^\| %s \|(.*)\|$" % m, md, re.M).group(1).split("|")
    if not re.fullmatch(r" [0-9.e+-]+; [0-9.e+-]+-[0-9.e+-]+ ", cells[2]):
        fail("compare.md: %s's spread cell is %r" % (m, cells[2]))
    if m in ("raw", "hc", "tc"):
        if "finals_kernels" in row or cells[-1].strip():
            fail("%s is a fixed method, yet has finals" % m)
        continue
    n, k = row["finals_kernels"], row["finals_overruled"]
    if not 0 <= k <= n <= len(c["kernels"]):
        fail("%s: finals overruled %d of %d kernels" % (m, k, n))
    if cells[-1].strip() != ("%d of %d kernels" % (k, n) if n else ""):
        fail("compare.md: %s's finals cell is %r, not %d of %d" % (m, cells[-1], k, n))
if not math.isclose(c["oracle_ms"], oracle * 1e-3, rel_tol=1e-9):
    fail("oracle %.6g ms, but the per-kernel minima add up to %.6g" % (c["oracle_ms"], oracle * 1e-3))
for key in ("device", "toolchain", "fluxcc_commit", "date"):
    if not c["provenance"].get(key):
        fail("provenance lacks %s" % key)
print("%d kernels, %d methods: sums, oracle (%.4g ms) and checks consistent" % (len(c["kernels"]), len(methods), c["oracle_ms"]))
