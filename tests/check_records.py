#!/usr/bin/env python3
"""Checks a searched project's records.json for internal consistency:
every kernel's chosen candidate was validated and timed, it is the fastest
valid one (or, where the finals decided, the one their rule picks from the
recorded rounds, decided again here), its opts are the kernel's, and the
kernel file's header says what was measured. Exit 1 with the first problem
found. --expect-finals: some kernel was decided by the finals; --no-finals:
none was (--from raw)."""
import json, os, sys

def fail(msg):
    print("check_records:", msg)
    sys.exit(1)

def opt_str(o):
    return o["op"] if o["op"] == "NOLOCALS" else "%s(%d,%d)" % (o["op"], o["axis"], o["amount"])

FIXED = ("raw", "hc", "tc")

def check_finals(i, k, c, fin):
    """The finals' rule (compiler/finals.c) again, from the recorded rounds: the
    incumbent is the fixed finalist of lowest median; a challenger (lowest
    median first) replaces it when its per-round ratios to the incumbent are
    under 1 at the upper quartile and under 0.99 at the median."""
    fl = [(j, x) for j, x in enumerate(c) if "final" in x]
    for j, x in fl:
        f = x["final"]
        r = sorted(f["rounds_us"])
        if x["status"] != "ok" or len(r) != 7 or (f["min_us"], f["median_us"], f["max_us"]) != (r[0], r[3], r[-1]):
            fail("kernel %d: candidate %d's final %r is not its rounds' min, median and max" % (i, j, f))
    ok = [(j, x) for j, x in enumerate(c) if x["status"] == "ok"]
    first = min(ok, key=lambda jx: (jx[1]["min_us"], jx[0]))[0]
    if fin["first"] != first:
        fail("kernel %d: finals' first is %d, but the fastest first measurement is candidate %d" % (i, fin["first"], first))
    fixed = [(j, x) for j, x in fl if x["from"] in FIXED]
    inc = min(fixed, key=lambda jx: (jx[1]["final"]["median_us"], jx[0]))[0] if fixed else None
    if fin["incumbent"] != inc:
        fail("kernel %d: finals' incumbent is %r, the fixed finalist of lowest median is %r" % (i, fin["incumbent"], inc))
    pick = inc
    rounds = lambda j: c[j]["final"]["rounds_us"]
    for j, x in sorted([jx for jx in fl if jx[1]["from"] not in FIXED], key=lambda jx: jx[1]["final"]["median_us"]):
        q = sorted(a / b for a, b in zip(rounds(j), rounds(inc)))
        if q[3 * 7 // 4] < 1 and q[7 // 2] < 1 - 0.01:
            pick = j
            break
    if fin["chosen"] != pick:
        fail("kernel %d: finals chose %d, the rule on the recorded rounds picks %d" % (i, fin["chosen"], pick))
    if c[pick]["from"] != k["chosen"]["method"] or c[pick]["min_us"] != k["chosen"]["min_us"]:
        fail("kernel %d: the finals' choice %d is not the kernel's chosen entry" % (i, pick))

def main():
    d = sys.argv[1]
    expect_wrong = "--expect-wrong" in sys.argv
    r = json.load(open(os.path.join(d, "records.json")))
    for key in ("device", "toolchain", "method", "target"):
        if not r.get(key):
            fail("records.json has no %s" % key)
    wrong = 0
    predicted = [0]
    finals = [0]
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
            if x["status"] == "ok" and not (x["min_us"] > 0 and x["median_us"] >= x["min_us"] and x.get("max_us", x["median_us"]) >= x["median_us"] and x["runs"] >= 1):
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
        fin = k.get("finals")
        finals[0] += fin is not None
        if fin is None and min(x["min_us"] for x in ok) != ch["min_us"]:
            fail("kernel %d: the chosen candidate is not the fastest valid one" % i)
        if fin is not None:
            check_finals(i, k, c, fin)
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
    if "--expect-finals" in sys.argv and finals[0] == 0:
        fail("no kernel was decided by the finals")
    if "--no-finals" in sys.argv and finals[0]:
        fail("%d kernels were decided by the finals (--from raw has none)" % finals[0])
    if expect_wrong and wrong == 0:
        fail("no candidate was rejected as wrong")
    if "--expect-predicted" in sys.argv and predicted[0] == 0:
        fail("no candidate was recorded as predicted (a search with a cost model)")
    print("%d kernels, %d candidates, %d rejected as wrong: consistent" %
          (len(r["kernels"]), sum(len(k["candidates"]) for k in r["kernels"]), wrong))

main()
