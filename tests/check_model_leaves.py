#!/usr/bin/env python3
"""check_model_leaves.py MODEL.json WEIGHT — every leaf of a split tree in a model
`fluxcc train` wrote holds at least WEIGHT of hessian (costmodel.c LEAF_WEIGHT):
XGBoost splits a node only where both sides keep that much. Fails on a model
without a single split: that checks nothing."""
import json
import sys

path, weight = sys.argv[1], float(sys.argv[2])
trees = json.loads(json.load(open(path))["xgboost"])["learner"]["gradient_booster"]["model"]["trees"]
splits = leaves = 0
for t in trees:
    left = t["left_children"]
    if len(left) == 1:  # a lone root: nothing was split
        continue
    splits += sum(1 for c in left if c != -1)
    for i, c in enumerate(left):
        if c == -1:
            leaves += 1
            assert t["sum_hessian"][i] >= weight - 1e-6, f"{path}: tree {t['id']} leaf {i}: hessian {t['sum_hessian'][i]:.3g} < {weight}"
assert splits > 0, f"{path}: no tree split anything: the check checks nothing"
print(f"ok: {len(trees)} trees, {splits} splits, {leaves} leaves, each with hessian >= {weight}")
