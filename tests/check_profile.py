#!/usr/bin/env python3
"""Checks ./flux --profile N --trace FILE: PROFILE_OUT TRACE LAUNCHES.
One line per launch, in order, in the study's format ("kernel N name [grid]
[block] takes X ms, Y GFLOPS, Z GB/s"); the per-kernel table's launches add
up to the forward's and its shares to 100%; the trace holds the same
launches with the same times, laid end to end. Exit 1 with the problem."""
import json, re, sys

def fail(msg):
    print("check_profile:", msg)
    sys.exit(1)

out, trace, n = open(sys.argv[1]).read().splitlines(), json.load(open(sys.argv[2])), int(sys.argv[3])
head = [l for l in out if l.startswith("profile:")]
if len(head) != 1:
    fail("no 'profile:' line")
total = float(re.search(r"; ([0-9.]+) ms per forward in all", head[0]).group(1))
line = re.compile(r"^kernel (\d+) (\w+) \[(\d+), (\d+), (\d+)\] \[(\d+), (\d+), (\d+)\] takes ([0-9.e+-]+) ms, ([0-9.e+-]+) GFLOPS, ([0-9.e+-]+) GB/s$")
launches = [line.match(l) for l in out if l.startswith("kernel ")]
if len(launches) != n or not all(launches):
    fail("%d launch lines in the study's format, want %d" % (sum(1 for m in launches if m), n))
if [int(m.group(1)) for m in launches] != list(range(n)):
    fail("launch lines out of order")
times = [float(m.group(9)) for m in launches]
if abs(sum(times) - total) > 1e-3 * max(total, 1e-3) + 1e-3 * n:
    fail("launch times sum to %g, the forward says %g" % (sum(times), total))
rows = [l.split() for l in out if re.match(r"^ +[0-9.]+ +[0-9.]+% +\d+ +kernels/", l)]
if sum(int(r[2]) for r in rows) != n:
    fail("the per-kernel table counts %d launches, want %d" % (sum(int(r[2]) for r in rows), n))
share = sum(float(r[1][:-1]) for r in rows)
if abs(share - 100) > 0.1 * len(rows) + 0.1:
    fail("shares add up to %.1f%%" % share)
ev = trace["traceEvents"]
if len(ev) != n:
    fail("trace: %d events, want %d" % (len(ev), n))
at = 0.0
for i, (e, m) in enumerate(zip(ev, launches)):
    if e["ph"] != "X" or e["name"] != m.group(2) or e["args"]["launch"] != i:
        fail("trace event %d is not launch %d (%s)" % (i, i, m.group(2)))
    if e["args"]["grid"] != [int(m.group(k)) for k in (3, 4, 5)] or e["args"]["block"] != [int(m.group(k)) for k in (6, 7, 8)]:
        fail("trace event %d: grid or block differ" % i)
    if abs(e["ts"] - at) > 1e-6 * max(at, 1) or abs(e["dur"] / 1e3 - times[i]) > 1e-3 * times[i] + 1e-6:
        fail("trace event %d: ts %g dur %g, want %g and %g us" % (i, e["ts"], e["dur"], at, times[i] * 1e3))
    at += e["dur"]
for k in ("device", "timer", "model"):
    if not trace["otherData"].get(k):
        fail("trace: no %s" % k)
print("profile and trace: %d launches, %.3f ms" % (n, total))
