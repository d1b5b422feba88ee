#!/usr/bin/env python3
"""Checks RL's sweep in a searched project's records.json: the batch that
would end a kernel's search (patience batches in a row without a faster
candidate: 2 with peers, 3 without) times HC's children the model left
untimed first. Every candidate picked as "sweep" is a child of HC's kernel
(HC's opts and one more) in exactly that batch; where a kernel stopped by
patience and its last batch holds other picks too, the sweep ran out, so no
child of HC is left among its predicted candidates. Fails when no kernel
swept, or none ran out: the records would then say nothing."""
import json, os, sys


def opt_str(o):
    return o["op"] if o["op"] == "NOLOCALS" else "%s(%d,%d)" % (o["op"], o["axis"], o["amount"])


def fail(msg):
    print("check_rl_sweep:", msg)
    sys.exit(1)


def main():
    ks = json.load(open(os.path.join(sys.argv[1], "records.json")))["kernels"]
    swept = ran_out = 0
    for u, k in enumerate(ks):
        c = k["candidates"]
        hc = ([x["opts"] for x in c if x["from"] == "hc"] or [[]])[0]  # no HC: RAW's children are swept
        peers = [p for p in ks[:u] if p["name_before_opts"] == k["name_before_opts"] and p["opts"]
                 and [opt_str(o) for o in p["opts"]] != hc]
        patience = 2 if peers else 3
        kid = lambda x: len(x["opts"]) == len(hc) + 1 and x["opts"][:len(hc)] == hc
        timed = [x for x in c if x["measured"] and x["round"] > 0]
        ok = [x for x in c if x["measured"] and x["status"] == "ok"]
        if not timed:
            continue
        best, gain = min(x["min_us"] for x in ok if x["round"] == 0), 0
        for r in range(1, max(x["round"] for x in timed) + 1):  # a batch of sources timed before leaves no round
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
        last = [x for x in timed if x["round"] == max(y["round"] for y in timed)]
        if k.get("stopped") == "patience" and any(x.get("pick") != "sweep" for x in last):
            left = [x["name"] for x in c if x["status"] == "predicted" and kid(x)]
            if left:
                fail("kernel %d: its sweep ran out, yet HC's children %s are left untimed" % (u, left))
            ran_out += 1
    if not swept or not ran_out:
        fail("%d candidates swept, %d sweeps ran out: the records say nothing" % (swept, ran_out))
    print("%d candidates swept, %d kernels' sweeps ran out: as the rule says" % (swept, ran_out))


main()
