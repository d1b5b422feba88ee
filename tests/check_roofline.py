#!/usr/bin/env python3
"""Recomputes `fluxcc report DIR`'s roofline from DIR/records.json and checks
the report (on stdin) says the same: per kernel the floor max(FLOPs / peak of
its units, bytes / bandwidth) and its bound, and the totals. Usage:
  fluxcc report DIR [...] | check_roofline.py DIR TC16 TF32 F32 GBS
Exit 1 with the first difference found."""
import json, os, re, sys

def fail(msg):
    print("check_roofline:", msg)
    sys.exit(1)

def close(a, b):
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b)) + 1e-4

def main():
    d = sys.argv[1]
    tc16, tf32, f32, gbs = map(float, sys.argv[2:6])
    text = sys.stdin.read()
    r = json.load(open(os.path.join(d, "records.json")))
    total_f = total_b = total_floor = one_peak = 0.0
    rows = re.findall(r"^ +(\d+)  (\S+) .* (tc|tf32|f32) +(compute|memory) +([0-9.]+) +([0-9.]+)", text, re.M)
    if len(rows) != len(r["kernels"]):
        fail("%d kernel rows, records.json has %d kernels" % (len(rows), len(r["kernels"])))
    for k, row in zip(r["kernels"], rows):
        n = len(k["launch_sites"])
        units = "f32"
        for o in k["opts"]:
            if o["op"] == "TC":
                units = "tf32" if o["amount"] == 1 else "tc"
        peak = {"tc": tc16, "tf32": tf32, "f32": f32}[units]
        fc, fm = k["flops"] / (peak * 1e6), k["bytes"] / (gbs * 1e3)  # microseconds per launch
        floor = max(fc, fm)
        if row[1] != k["name"] or row[2] != units or row[3] != ("compute" if fc > fm else "memory"):
            fail("kernel %s: report says %s, %s, %s; records say %s, %s" % (row[0], row[1], row[2], row[3], k["name"], units))
        if not close(float(row[4]), round(floor, 2)) or not close(float(row[5]), round(floor * n * 1e-3, 4)):
            fail("kernel %s: floor %s us, %s ms/fwd; recomputed %.4f us x %d" % (row[0], row[4], row[5], floor, n))
        total_f += k["flops"] * n
        total_b += k["bytes"] * n
        total_floor += floor * n
        one_peak += max(k["flops"] / (tc16 * 1e6), fm) * n
    m = re.search(r"^per forward: (\d+) launches of (\d+) unique kernels, ([0-9.e+-]+) TFLOP, ([0-9.e+-]+) GB of memory traffic$", text, re.M)
    if not m or int(m.group(1)) != r["launches"] or int(m.group(2)) != len(r["kernels"]):
        fail("no 'per forward' line with %d launches of %d unique kernels" % (r["launches"], len(r["kernels"])))
    if not close(float(m.group(3)), total_f / 1e12) or not close(float(m.group(4)), total_b / 1e9):
        fail("per forward %s TFLOP, %s GB; recomputed %g, %g" % (m.group(3), m.group(4), total_f / 1e12, total_b / 1e9))
    m = re.search(r"^summed floor: ([0-9.e+-]+) ms", text, re.M)
    if not m or not close(float(m.group(1)), total_floor * 1e-3):
        fail("summed floor %s ms; recomputed %g" % (m and m.group(1), total_floor * 1e-3))
    m = re.search(r"^summed floor with every FLOP at the tensor-core peak .*: ([0-9.e+-]+) ms$", text, re.M)
    if m and not close(float(m.group(1)), one_peak * 1e-3):
        fail("one-peak floor %s ms; recomputed %g" % (m.group(1), one_peak * 1e-3))
    print("roofline: %d kernels, %g TFLOP, %g GB, summed floor %g ms (one peak: %g ms)" %
          (len(rows), total_f / 1e12, total_b / 1e9, total_floor * 1e-3, one_peak * 1e-3))

main()
