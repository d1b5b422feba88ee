#!/usr/bin/env python3
"""Checks a searched project's records.json for internal consistency:
every kernel's chosen candidate was validated and timed, it is the fastest
valid one, its opts are the kernel's, and the kernel file's header says what
was measured. Exit 1 with the first problem found."""
import json, os, sys

def fail(msg):
    print("check_records:", msg)
    sys.exit(1)

def opt_str(o):
    return o["op"] if o["op"] == "NOLOCALS" else "%s(%d,%d)" % (o["op"], o["axis"], o["amount"])

def main():
    d = sys.argv[1]
    expect_wrong = "--expect-wrong" in sys.argv
    r = json.load(open(os.path.join(d, "records.json")))
    for key in ("device", "toolchain", "method", "target"):
        if not r.get(key):
            fail("records.json has no %s" % key)
    wrong = 0
    predicted = [0]
    # the features' count, from fluxcc itself (--dump features' header)
    import re, subprocess
    fluxcc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fluxcc")
    head = subprocess.run([fluxcc, os.path.join(os.path.dirname(fluxcc), "tests/opt/matmul.fdsl"), "--dump", "features"],
                          capture_output=True, text=True).stdout
    r["features"] = int(re.search(r"version \d+: (\d+) per kernel", head).group(1))
    if r.get("feature_version") is None:
        fail("records.json has no feature_version")
    for i, k in enumerate(r["kernels"]):
        c = k.get("candidates")
        ch = k.get("chosen")
        if not c or not ch:
            fail("kernel %d (%s): no candidates or no chosen entry" % (i, k["name"]))
        if c[0]["from"] != "raw" or c[0]["status"] != "ok":
            fail("kernel %d: the first candidate must be RAW, run and timed" % i)
        opts = [opt_str(o) for o in k["opts"]]
        ok = [x for x in c if x["status"] == "ok"]
        for x in c:
            if x["status"] not in ("ok", "wrong", "failed", "slow", "predicted"):
                fail("kernel %d: status %r" % (i, x["status"]))
            # measured or predicted, said by both fields; a measured one carries its features (training data)
            if x.get("measured") != (x["status"] != "predicted"):
                fail("kernel %d: candidate %s: status %s but measured %r" % (i, x["name"], x["status"], x.get("measured")))
            if x["status"] == "predicted":
                predicted[0] += 1
                if "score" not in x or "min_us" in x or "features" in x:
                    fail("kernel %d: predicted candidate %s must have a score and no time or features" % (i, x["name"]))
            elif len(x.get("features", [])) != r["features"]:
                fail("kernel %d: measured candidate %s has %d features, not %d" % (i, x["name"], len(x.get("features", [])), r["features"]))
            # RL's search says why it timed each candidate; nothing else has a pick (BEST's side-by-side
            # timing of RL's choice is no pick of RL's)
            rl = x["from"] == "rl" and x["measured"]
            if ("pick" in x and not rl) or (rl and r["method"] == "rl" and "pick" not in x) or \
                    x.get("pick", "rank") not in ("rank", "explore", "peer", "sweep"):
                fail("kernel %d: candidate %s from %s: pick %r" % (i, x["name"], x["from"], x.get("pick")))
            if x["status"] in ("wrong", "failed", "slow") and not x.get("reason"):
                fail("kernel %d: a %s candidate without a reason" % (i, x["status"]))
            if x["status"] == "ok" and not (x["min_us"] > 0 and x["median_us"] >= x["min_us"] and x["runs"] >= 1):
                fail("kernel %d: candidate %s has no sane time" % (i, x["name"]))
            if x["status"] == "wrong":
                wrong += 1
                if "differs from RAW" not in x["reason"]:
                    fail("kernel %d: a wrong candidate's reason: %r" % (i, x["reason"]))
        match = [x for x in ok if x["opts"] == opts and x["min_us"] == ch["min_us"]]
        if not match:
            fail("kernel %d (%s): the chosen opts %s are no validated, timed candidate" % (i, k["name"], opts))
        if match[0]["from"] != ch["method"]:
            fail("kernel %d: chosen method %s but the candidate came from %s" % (i, ch["method"], match[0]["from"]))
        if min(x["min_us"] for x in ok) != ch["min_us"]:
            fail("kernel %d: the chosen candidate is not the fastest valid one" % i)
        # why RL stopped: said for every kernel it searched (one with a forward budget among them), by no other method
        if k.get("stopped", "budget") not in ("budget", "patience", "stall") or ("allotted" in k and "stopped" not in k) or \
                ("stopped" in k and r["method"] not in ("rl", "best")):
            fail("kernel %d: stopped %r (method %s)" % (i, k.get("stopped"), r["method"]))
        if "allotted" in k:  # RL's forward budget: no more timed after the baselines than allotted
            searched = [x for x in c if x["measured"] and x["round"] > 0]
            if len(searched) > k["allotted"] or not 0 <= k["forward_share"] <= 1:
                fail("kernel %d: %d candidates timed after the baselines, %d allotted (share %r)" % (i, len(searched), k["allotted"], k["forward_share"]))
            if k["allotted"] == 0 and ch["method"] not in ("raw", "hc", "tc"):
                fail("kernel %d: nothing allotted, yet its kernel came from %s" % (i, ch["method"]))
        head = open(os.path.join(d, k["file"])).read(2000)
        want = "measured: %.4g us (min of %d) on %s" % (ch["min_us"], ch["runs"], r["device"])
        if want not in head:
            fail("kernel %d: header lacks %r" % (i, want))
    if expect_wrong and wrong == 0:
        fail("no candidate was rejected as wrong")
    if "--expect-predicted" in sys.argv and predicted[0] == 0:
        fail("no candidate was recorded as predicted (a search with a cost model)")
    print("%d kernels, %d candidates, %d rejected as wrong: consistent" %
          (len(r["kernels"]), sum(len(k["candidates"]) for k in r["kernels"]), wrong))

main()
