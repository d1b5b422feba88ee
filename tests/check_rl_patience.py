#!/usr/bin/env python3
"""Checks how RL ended each kernel's search, from a project's records.json.
A kernel says it stopped by its budget exactly when it timed its allotment
(or had none); every other one stopped by patience: 2 batches in a row that
timed nothing faster for a kernel with peers (earlier kernels of its shape),
3 without. The batch that would end it (patience after the last gain) times
HC's children the model left untimed first, picked as "sweep": every such
candidate is a child of HC's kernel (HC's opts and one more) in exactly that
batch, and where a patience-stopped kernel's last batch holds other picks
too, the sweep ran out, so no child of HC is among its predicted candidates.
Fails when the records lack a kernel of either patience, a sweep, or a sweep
that ran out: they would then say nothing."""
import json, os, sys


def opt_str(o):
    return o["op"] if o["op"] == "NOLOCALS" else "%s(%d,%d)" % (o["op"], o["axis"], o["amount"])


def fail(msg):
    print("check_rl_patience:", msg)
    sys.exit(1)


def main():
    ks = json.load(open(os.path.join(sys.argv[1], "records.json")))["kernels"]
    seen, swept, ran_out = {True: [], False: []}, 0, 0
    for u, k in enumerate(ks):
        c = k["candidates"]
        hc = ([x["opts"] for x in c if x["from"] == "hc"] or [[]])[0]  # no HC: RAW's children are swept
        peered = any(p["name_before_opts"] == k["name_before_opts"] and p["opts"] and [opt_str(o) for o in p["opts"]] != hc
                     for p in ks[:u])
        patience = 2 if peered else 3
        kid = lambda x: len(x["opts"]) == len(hc) + 1 and x["opts"][:len(hc)] == hc
        timed = [x for x in c if x["measured"] and x["round"] > 0]
        ok = [x for x in c if x["measured"] and x["status"] == "ok"]
        if (k["stopped"] == "budget") != (k["allotted"] == 0 or len(timed) >= k["allotted"]):
            fail("kernel %d: stopped by %s, %d timed of %d allotted" % (u, k["stopped"], len(timed), k["allotted"]))
        if not timed:
            continue
        best, gain, end = min(x["min_us"] for x in ok if x["round"] == 0), 0, max(x["round"] for x in timed)
        for r in range(1, end + 1):  # a batch of sources timed before leaves no round
            s = [x for x in timed if x["round"] == r and x.get("pick") == "sweep"]
            for x in s:
                if not kid(x):
                    fail("kernel %d, batch %d: swept %s, no child of HC's %s" % (u, r, x["name"], hc))
            if s and r - gain != patience:
                fail("kernel %d: swept in batch %d, %d after its last gain (patience %d)" % (u, r, r - gain, patience))
            swept += len(s)
            t = [x["min_us"] for x in ok if x["round"] == r]
            if t and min(t) < best:
                best, gain = min(t), r
        if k["stopped"] == "budget":
            continue
        if k["stopped"] != "patience":
            fail("kernel %d: stopped by %s" % (u, k["stopped"]))
        seen[peered].append(end - gain)
        if any(x.get("pick") != "sweep" for x in timed if x["round"] == end):
            left = [x["name"] for x in c if x["status"] == "predicted" and kid(x)]
            if left:
                fail("kernel %d: its sweep ran out, yet HC's children %s are left untimed" % (u, left))
            ran_out += 1
    if not seen[True] or max(seen[True]) != 2 or not seen[False] or max(seen[False]) != 3:
        fail("batches after the last gain, with peers %s, without %s: not 2 and 3" % (seen[True], seen[False]))
    if not swept or not ran_out:
        fail("%d candidates swept, %d sweeps ran out: the records say nothing" % (swept, ran_out))
    print("patience 2 with peers, 3 without; %d candidates swept, %d kernels' sweeps ran out" % (swept, ran_out))


main()
