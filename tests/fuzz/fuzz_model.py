#!/usr/bin/env python3
"""fuzz_model.py SECONDS OUT FLUXCC FLUXCC_SAN — structure-aware fuzzing of cost-model
files (issue 56): fluxcc's header with XGBoost's JSON model inside as a string.

Seeds are real models: the tuning caches' models of small BEAM searches
(tests/opt/matmul.fdsl, tests/opt/attention.fdsl) made here, and `fluxcc train`
of both. Each execution mutates one of them:
  trees:  a child set to a random node, an ancestor (a cycle), itself, -2 or past
          the tree; a parent, a split index (the feature count, 2^31, 2^32, -1),
          num_nodes, an array cut, emptied or lengthened, a tree's id, trees
          swapped or dropped;
  model:  num_trees, tree_info (values, length), num_feature, num_class,
          base_score, the objective's and the booster's names, parameters as
          odd strings (" 3", "3.5", "0x10", "-1", "1e3", 11 digits), a key twice;
  header: trees, rows, groups, feature_version, device, the features' names;
  any:    a JSON value replaced (type, huge, negative, fractional number), a key
          deleted, a list cut or repeated; bytes flipped, inserted, cut (of the
          whole file or of the model string).
Then `--model FILE` (a BEAM search, fake timing) under the sanitizer build, and
one in 8 as the cache's model under `--opt rl` (--model auto).
A finding: a signal, a time-out, a sanitizer report, an exit status other than
0 or 2 (auto: other than 0), an error without 'error:', a control byte in the
output. The total also counts models that passed fluxcc's check and XGBoost
refused (no finding, but a field the check could say more clearly: samples in
OUT/xgboost-refused/). Findings are kept in OUT/findings/N (input.json, log, what); distinct
ones are counted by their kind and the first line that says where. Prints a line
every 100 executions and a total at the end; exit 1 on findings.
"""
import copy, json, os, random, re, shutil, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_common import Runner, mutate_bytes, paths, start

secs, out, F, SAN, seed, rng, w = start(sys.argv)
ENV = dict(os.environ, FLUXCC_FAULT="fake-time")
MM = "tests/opt/matmul.fdsl"
runner = Runner(ENV)


def run(cmd, timeout=20):
    return runner.run(cmd, timeout)


# seeds: each model's cache (and its model), and a model trained on both
seeds, caches = [], []
for i, m in enumerate([MM, "tests/opt/attention.fdsl"]):
    d = f"{w}/seed{i}"
    rc, log = run([F, m, "--opt", "beam", "--target", "opencl", "--budget", "14", "--seed", "5", "--cache", d + "/cache", "-o", d + "/p"], 600)
    assert rc == 0, log
    model = [e for e in os.listdir(d + "/cache") if e.startswith("model-")]
    assert model, "no cache model (XGBoost: sh scripts/deps.sh)"
    seeds.append(open(f"{d}/cache/{model[0]}").read())
    caches.append((d + "/cache", model[0], d + "/p/records.json"))
rc, log = run([F, "train", caches[0][2], caches[1][2], "-o", w + "/both.json"])
assert rc == 0, log
seeds.append(open(w + "/both.json").read())
NF = len(json.loads(seeds[0])["features"])

ODD = [" 3", "3 ", "3.5", "0x10", "-1", "1e3", "+3", "", "99999999999", "0", "1", "2", "nan", "inf", "5E-1", "\x1b[2J"]
NUMBERS = [0, -1, -2, 1, 2, 3, 0.5, 2.5, 1e308, -1e308, 1e39, 2**31 - 1, 2**31, 2**32, 2**63, 2**64, NF - 1, NF, NF + 1, 99999]


def generic(doc):  # one JSON value anywhere replaced, deleted or repeated
    ps = [p for p in paths(doc, 20) if p]
    p = rng.choice(ps)
    parent = doc
    for k in p[:-1]: parent = parent[k]
    key, x = p[-1], parent[p[-1]]
    what = rng.randrange(7)
    if what == 0: parent[key] = rng.choice(NUMBERS)
    elif what == 1: parent[key] = rng.choice(ODD)
    elif what == 2: parent[key] = rng.choice([None, True, [], {}, [1, 2], {"a": 1}])
    elif what == 3 and isinstance(parent, dict): del parent[key]
    elif what == 4 and isinstance(x, list): parent[key] = x * rng.choice([0, 2, 3])
    elif what == 5 and isinstance(x, list) and x: parent[key] = x[:rng.randrange(len(x))]
    elif what == 6 and isinstance(x, (int, float)) and not isinstance(x, bool): parent[key] = x * rng.choice([-1, 0.5, 1e6, 1e300]) + rng.choice([0, 1])
    else: parent[key] = rng.choice(NUMBERS + ODD)


def tree_edit(x):
    g = x["learner"]["gradient_booster"]["model"]
    trees = g["trees"]
    t = rng.choice(trees)
    n = len(t["left_children"])
    nodes = list(range(n))
    what = rng.randrange(12)
    if what <= 2:  # a child: random, an ancestor or itself (a cycle), the root, -2, past the tree
        v = rng.choice(nodes)
        anc = [v]
        while anc[-1] != 0 and 0 <= t["parents"][anc[-1]] < n: anc.append(t["parents"][anc[-1]])
        t[rng.choice(["left_children", "right_children"])][v] = rng.choice([rng.choice(nodes), rng.choice(anc), v, 0, -1, -2, n, n + 5, 2**31, 2**32 - 1])
    elif what == 3: t["parents"][rng.choice(nodes)] = rng.choice(nodes + [-1, n, 2**31 - 1, 2**31, 99999])
    elif what == 4: t["split_indices"][rng.choice(nodes)] = rng.choice([-1, NF - 1, NF, NF + 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32])
    elif what == 5: t["tree_param"]["num_nodes"] = rng.choice([str(n - 1), str(n + 1), "0", str(2**31), "-1"] + ODD)
    elif what == 6:
        k = rng.choice([k for k, v in t.items() if isinstance(v, list)])
        t[k] = rng.choice([t[k][:-1], t[k] + t[k][:1], [], t[k] * 2])
    elif what == 7: t["id"] = rng.choice([0, len(trees), -1, t["id"] + 1, 2**31])
    elif what == 8:
        i, j = rng.randrange(len(trees)), rng.randrange(len(trees))
        trees[i], trees[j] = trees[j], trees[i]
    elif what == 9: del trees[rng.randrange(len(trees))]
    elif what == 10: t[rng.choice(["split_conditions", "base_weights", "loss_changes", "sum_hessian"])][rng.choice(nodes)] = rng.choice([1e39, -1e39, 1e308, 3e38, 0])
    else: t[rng.choice(["default_left", "split_type"])][rng.choice(nodes)] = rng.choice([2, -1, 1, 255])


def model_edit(x):
    l = x["learner"]
    g = l["gradient_booster"]["model"]
    what = rng.randrange(9)
    if what == 0: g["gbtree_model_param"]["num_trees"] = rng.choice([str(len(g["trees"]) + rng.choice([-1, 1, 40])), "0"] + ODD)
    elif what == 1: g["tree_info"][rng.randrange(len(g["tree_info"]))] = rng.choice([1, -1, 7, 2**31, 0.5])
    elif what == 2: g["tree_info"] = g["tree_info"][:rng.randrange(len(g["tree_info"]) + 1)] + rng.choice([[], [0], [0] * 50])
    elif what == 3: l["learner_model_param"][rng.choice(["num_feature", "num_class", "num_target", "base_score", "boost_from_average"])] = rng.choice(ODD + [str(NF + 1), str(NF - 1), "5"])
    elif what == 4: l["objective"]["name"] = rng.choice(["multi:softprob", "reg:squarederror", "rank:ndcg", "binary:logistic", "nope"])
    elif what == 5: l["gradient_booster"]["name"] = rng.choice(["dart", "gblinear", "nope"])
    elif what == 6: g["gbtree_model_param"][rng.choice(["num_parallel_tree", "size_leaf_vector"])] = rng.choice(ODD)
    elif what == 7: l["objective"].setdefault("lambda_rank_param", {})["num_pairsample"] = rng.choice(["1", "1000000", "0"] + ODD)
    else: l["feature_names"] = rng.choice([["a"] * NF, ["a"], []])


def header_edit(m):
    k = rng.choice(["trees", "rows", "groups", "feature_version", "fluxcc_cost_model", "device", "features"])
    if k == "device": m[k] = rng.choice(["x\x1b[2Jy", "", "another GPU", 3])
    elif k == "features": m[k] = rng.choice([m[k][:-1], m[k][::-1], m[k] + ["extra"], []])
    else: m[k] = rng.choice(NUMBERS + ["60"])


def mutate(text):
    m = json.loads(text)
    kind = rng.randrange(10)
    if kind == 9: return mutate_bytes(rng, text.encode(), rng.choice([1, 2, 8]))
    x = json.loads(m["xgboost"])
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        k = rng.randrange(9) if kind < 8 else kind
        try:
            if k <= 3: tree_edit(x)
            elif k <= 5: model_edit(x)
            elif k == 6: header_edit(m)
            else: generic(x if rng.random() < 0.7 else m)
        except (IndexError, KeyError, TypeError, ValueError, AttributeError):
            pass  # an earlier edit of this round moved it
    inner = json.dumps(x)
    if kind == 8:  # bytes of the model string, or a key twice
        inner = mutate_bytes(rng, inner.encode(), rng.choice([1, 2, 8])).decode("utf-8", "replace") if rng.random() < 0.7 else \
            inner.replace('"left_children":', '"left_children": [0], "left_children":', 1)
    m["xgboost"] = inner
    return json.dumps(m, indent=rng.choice([None, 1])).encode()


n = found = accepted = refused = auto_runs = by_xgb = 0
kinds, distinct = {}, set()
end = time.time() + secs


def finding(kind, where, data, log):
    global found
    found += 1
    kinds[kind] = kinds.get(kind, 0) + 1
    distinct.add((kind, where))
    d = f"{out}/findings/{found}"
    os.makedirs(d, exist_ok=True)
    open(d + "/input.json", "wb").write(data)
    open(d + "/log", "w").write(log)
    open(d + "/what", "w").write(f"{kind}: {where}\n")
    print(f"FINDING {found}: {kind}: {where}", flush=True)


def where_of(log):  # the first sanitizer frame or message line: what makes two findings the same
    m = re.search(r"#\d+ 0x[0-9a-f]+ in (\S+)", log) or re.search(r"(runtime error: .*|ERROR: \w+Sanitizer: [\w-]+)", log)
    return m.group(1)[:120] if m else (log.strip().splitlines() or [""])[-1][:120]


def judge(rc, log, data, auto):
    """True when the answer is acceptable: 0 (auto: only 0) or 2 with one clear message"""
    if rc == "timeout": return finding("hang", "time-out (20 s)", data, log) or False
    if "runtime error:" in log or "Sanitizer" in log: return finding("sanitizer", where_of(log), data, log) or False
    if rc < 0 or rc > 128: return finding("crash", f"signal {-rc if rc < 0 else rc - 128}: " + where_of(log), data, log) or False
    if rc not in ((0,) if auto else (0, 2)): return finding("exit", f"exit {rc}: " + where_of(log), data, log) or False
    if rc == 2 and "error:" not in log: return finding("exit", "exit 2 without a message", data, log) or False
    if "\x1b" in log or "\x07" in log: return finding("terminal", "a control byte reaches the terminal", data, log) or False
    return True


while time.time() < end:
    n += 1
    data = mutate(rng.choice(seeds))
    if rng.random() < 1 / 8:  # the cache's model, read by rl's --model auto
        auto_runs += 1
        cache, name, _ = caches[0]
        shutil.rmtree(w + "/acache", ignore_errors=True)
        shutil.copytree(cache, w + "/acache")
        open(f"{w}/acache/{name}", "wb").write(data)
        rc, log = run([SAN, MM, "--opt", "rl", "--target", "opencl", "--budget", "4", "--seed", "1", "--cache", w + "/acache", "-o", w + "/ap"])
        if judge(rc, log, data, True):
            if "warning: --model" in log: refused += 1
            elif "fluxcc: cost model " + w in log: accepted += 1
            else: finding("exit", "--model auto: neither used nor refused", data, log)
    else:
        open(w + "/m.json", "wb").write(data)
        rc, log = run([SAN, MM, "--opt", "beam", "--target", "opencl", "--budget", "4", "--seed", "1", "--no-cache", "--model", w + "/m.json", "-o", w + "/p"])
        if judge(rc, log, data, False):
            if rc == 0: accepted += 1
            else: refused += 1
            if "error: --model" in log and ": XGBoost: " in log:  # passed fluxcc's check, refused by XGBoost itself
                by_xgb += 1
                os.makedirs(out + "/xgboost-refused", exist_ok=True)
                open(f"{out}/xgboost-refused/{by_xgb % 20}.json", "wb").write(data)
                open(f"{out}/xgboost-refused/{by_xgb % 20}.log", "w").write(log)
    if n % 100 == 0:
        print(f"runs {n} (--model auto {auto_runs}), accepted {accepted}, refused {refused}, findings {found} ({len(distinct)} distinct)", flush=True)
ks = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"
print(f"total: runs {n} (--model auto {auto_runs}), accepted {accepted}, refused {refused} ({by_xgb} by XGBoost after fluxcc's check), findings {found}: {ks}; distinct {len(distinct)} "
      f"(seed {seed}, {secs:.0f} s; leak checks aborted by LSan's tracer: {runner.tracer})")
for k, wh in sorted(distinct): print(f"  {k}: {wh}")
sys.exit(1 if found else 0)
