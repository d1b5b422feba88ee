# edit_model.py IN OUT CASE: a hostile copy of a fluxcc cost model (fluxcc train's JSON,
# XGBoost's model inside as a string), edited as CASE says. Prints the tree the edit is in.
import json, sys

src, dst, case = sys.argv[1:4]
m = json.load(open(src))
x = json.loads(m["xgboost"])
g = x["learner"]["gradient_booster"]["model"]
trees = g["trees"]
t = next(i for i, tr in enumerate(trees) if int(tr["tree_param"]["num_nodes"]) >= 3)  # a tree with a split
tr = trees[t]
n = int(tr["tree_param"]["num_nodes"])
text = None
if case == "cycle":  # node 1 (a leaf) splits into the root and node 2: 0 -> 1 -> 0 -> ...
    tr["left_children"][1], tr["right_children"][1] = 0, 2
elif case == "self-loop":  # the root is its own children: every prediction loops
    tr["left_children"][0] = tr["right_children"][0] = 0
elif case == "child-out":
    tr["left_children"][0] = n + 9
elif case == "child-negative":
    tr["right_children"][0] = -7
elif case == "split-index":
    tr["split_indices"][0] = 1000
elif case == "num-trees":  # more trees said than given (the header says the same)
    g["gbtree_model_param"]["num_trees"] = str(len(trees) + 40)
    m["trees"] = len(trees) + 40
elif case == "num-trees-header":  # XGBoost's and the header's counts disagree
    g["gbtree_model_param"]["num_trees"] = str(len(trees) + 40)
elif case == "tree-info":
    g["tree_info"][3] = 7
elif case == "tree-info-short":
    del g["tree_info"][5:]
elif case == "parents":
    tr["parents"][1] = 99999
elif case == "short-array":
    del tr["base_weights"][-1]
elif case == "not-finite":
    tr["split_conditions"][0] = 1e39
elif case == "num-feature":
    x["learner"]["learner_model_param"]["num_feature"] = "52"
elif case == "categorical":
    tr["split_type"][0] = 1
elif case == "tree-id":
    trees[0]["id"] = 70
elif case == "twice":  # a key twice: cJSON and XGBoost would read different arrays
    text = json.dumps(x).replace('"left_children":', '"left_children": [0], "left_children":', 1)
elif case.startswith("header-"):  # header-KEY=JSON
    k, v = case[7:].split("=", 1)
    m[k] = json.loads(v)
else:
    sys.exit("edit_model.py: unknown case " + case)
m["xgboost"] = text if text is not None else json.dumps(x)
json.dump(m, open(dst, "w"), indent=1)
print(t)
