#!/usr/bin/env python3
"""What the searches start from, and what the finals decide (compiler/finals.c),
read from two projects' records.json: one searched as usual (--from fixed), one
with --from raw (the study's searches).

  check_finals.py starts METHOD FIXED_DIR RAW_DIR
      FIXED: some METHOD candidate extends HC's or TC's kernel (their opts and
      more), and BEAM's first round extends no start over 3x the fastest start;
      RAW: none does, and BEAM's first round extends RAW alone (one opt).
  check_finals.py lucky FIXED_DIR RAW_DIR
      searched under FLUXCC_FAULT=lucky-every=N (a candidate's timed runs read
      10x faster once): FIXED: in some kernel such a candidate was the first
      measured winner and the finals chose another; none of the lucky ones was
      chosen unless its rounds beat the incumbent's; RAW: some lucky one was
      chosen, as the first measurement decides.
  check_finals.py kept DIR
      searched under lucky-every=N too: in some kernel the first measured
      winner was a lucky search candidate, its rounds did not beat the
      incumbent (the best fixed method) beyond the noise, and the finals kept
      the incumbent.
Exit 1 with the first problem found."""
import json, os, sys

LUCKY = "FLUXCC_FAULT=lucky-every"

def fail(msg):
    print("check_finals:", msg)
    sys.exit(1)

def kernels(d):
    return json.load(open(os.path.join(d, "records.json")))["kernels"]

def starts(method, fixed, raw):
    def extends(k, from_):
        c = k["candidates"]
        bases = [x["opts"] for x in c if x["from"] in ("hc", "tc") and x["status"] == "ok" and x["opts"]]
        return [x for x in c if x["from"] == from_ and any(len(x["opts"]) > len(b) and x["opts"][:len(b)] == b for b in bases)]
    n_fixed = sum(len(extends(k, method)) for k in kernels(fixed))
    n_raw = sum(len(extends(k, method)) for k in kernels(raw))
    if n_fixed == 0:
        fail("%s: no %s candidate extends HC's or TC's kernel" % (fixed, method))
    if n_raw:
        fail("%s (--from raw): %d %s candidates extend HC's or TC's kernel" % (raw, n_raw, method))
    if method == "beam":  # a start over 3x the fastest start (actions.c starts(), SLOW_FACTOR) has no children
        for i, k in enumerate(kernels(fixed)):
            c = k["candidates"]
            st = [x for x in c if x["from"] in ("raw", "hc", "tc") and x["status"] == "ok"]
            if not st:
                continue
            fast = min(x["min_us"] for x in st)
            child = lambda x, b: len(x["opts"]) == len(b["opts"]) + 1 and x["opts"][:len(b["opts"])] == b["opts"]
            for x in c:
                if x["from"] == "beam" and x["round"] == 1:
                    of = [b for b in st if child(x, b)]
                    if of and all(b["min_us"] > 3 * fast for b in of):
                        fail("%s: kernel %d: a first-round candidate extends only starts over 3x the fastest (%s)" %
                             (fixed, i, ", ".join("%s %g us" % (b["from"], b["min_us"]) for b in of)))
        for k in kernels(raw):
            for x in k["candidates"]:
                if x["from"] == "beam" and x["round"] == 1 and len(x["opts"]) != 1:
                    fail("%s (--from raw): a first-round candidate with %d opts (RAW's children have one)" % (raw, len(x["opts"])))
    print("starts: %d %s candidates extend HC or TC; none with --from raw" % (n_fixed, method))

def lucky(fixed, raw):
    overruled = 0
    for i, k in enumerate(kernels(fixed)):
        c, fin = k["candidates"], k.get("finals")
        if not fin:
            continue
        first, chosen, inc = c[fin["first"]], c[fin["chosen"]], c[fin["incumbent"]]
        if LUCKY in first.get("reason", "") and fin["chosen"] != fin["first"]:
            overruled += 1
        if LUCKY in chosen.get("reason", "") and not chosen["final"]["median_us"] < inc["final"]["median_us"]:
            fail("kernel %d: a lucky candidate chosen, its rounds' median %g not under the incumbent's %g" %
                 (i, chosen["final"]["median_us"], inc["final"]["median_us"]))
    if not overruled:
        fail("%s: in no kernel did the finals overrule a lucky first measurement" % fixed)
    took = 0
    for k in kernels(raw):
        if k.get("finals"):
            fail("%s (--from raw): a kernel decided by finals" % raw)
        took += any(LUCKY in x.get("reason", "") and x["from"] == k["chosen"]["method"] and x["min_us"] == k["chosen"]["min_us"]
                    for x in k["candidates"])
    if not took:
        fail("%s (--from raw): no lucky candidate was chosen (the first measurement decides there)" % raw)
    print("lucky: the finals overruled %d lucky first measurements; --from raw chose %d" % (overruled, took))

def kept(d):
    n = 0
    for i, k in enumerate(kernels(d)):
        c, fin = k["candidates"], k.get("finals")
        if not fin or LUCKY not in c[fin["first"]].get("reason", ""):
            continue
        first, inc = c[fin["first"]], c[fin["incumbent"]]
        if fin["chosen"] != fin["incumbent"]:
            continue
        if first["from"] in ("raw", "hc", "tc") or inc["from"] not in ("raw", "hc", "tc"):
            fail("kernel %d: the first winner %s or the incumbent %s is of the wrong kind" % (i, first["from"], inc["from"]))
        if first["min_us"] >= inc["min_us"]:
            fail("kernel %d: the lucky first winner (%g us) did not read faster than the incumbent (%g us)" % (i, first["min_us"], inc["min_us"]))
        if k["chosen"]["method"] != inc["from"]:
            fail("kernel %d: the kernel chosen is %s's, not the incumbent %s's" % (i, k["chosen"]["method"], inc["from"]))
        n += 1
    if not n:
        fail("%s: in no kernel did the finals keep the incumbent over a lucky first measurement" % d)
    print("kept: in %d kernels the finals kept the incumbent over a lucky first measurement" % n)

if len(sys.argv) == 5 and sys.argv[1] == "starts":
    starts(*sys.argv[2:])
elif len(sys.argv) == 4 and sys.argv[1] == "lucky":
    lucky(*sys.argv[2:])
elif len(sys.argv) == 3 and sys.argv[1] == "kept":
    kept(sys.argv[2])
else:
    fail("usage: check_finals.py starts METHOD FIXED_DIR RAW_DIR | lucky FIXED_DIR RAW_DIR | kept DIR")
