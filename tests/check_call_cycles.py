#!/usr/bin/env python3
"""No call cycles between compiler/*.c: given the object files (one per
source file), a file calls another when it uses a function (nm: T) that the
other defines. Every strongly connected set of more than one file is a cycle,
printed with the calls that make it; exit 1 if there is any. Data (a table of
names, the targets table's pointers to device layers) is not a call."""
import os, subprocess, sys


def symbols(obj):
    defined, used = {}, set()
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] == "T":
            defined[p[2]] = True
        elif len(p) == 2 and p[0] == "U":
            used.add(p[1])
    return defined, used


def main():
    objs = sys.argv[1:]
    if len(objs) < 2:
        print("usage: check_call_cycles.py FILE.o...")
        return 2
    owner, uses = {}, {}
    for o in objs:
        name = os.path.basename(o)[:-2] + ".c"
        d, u = symbols(o)
        for s in d:
            owner[s] = name
        uses[name] = u
    calls = {f: {} for f in uses}
    for f, us in uses.items():
        for s in sorted(us):
            g = owner.get(s)
            if g and g != f:
                calls[f].setdefault(g, []).append(s)
    # Tarjan's strongly connected components
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in calls[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    for f in sorted(calls):
        if f not in index:
            visit(f)
    bad = [c for c in sccs if len(c) > 1]
    for c in bad:
        print("call cycle among %s:" % ", ".join(c))
        for f in c:
            for g in c:
                if g in calls[f]:
                    print("  %s calls %s: %s" % (f, g, ", ".join(calls[f][g][:6])))
    if not bad:
        print("no call cycles among %d files" % len(calls))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
