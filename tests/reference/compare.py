#!/usr/bin/env python3
"""Compare tensors of two safetensors files.

Usage:
    python3 tests/reference/compare.py A.safetensors B.safetensors [--tol 1e-6] [--key out]

For every tensor name present in both files (or only --key), prints
    key: rel_l2=<||a-b|| / ||b||> max_abs=<max |a-b|>
B is the reference (the denominator). Exit status 1 if any compared tensor has
rel_l2 > tol, a non-finite value in either file, or a shape mismatch; also 1 if nothing
could be compared (no common key, or --key missing from a file). Otherwise 0.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def compare(a, b):
    """-> (rel_l2, max_abs, problem-or-None) for two arrays."""
    if a.shape != b.shape:
        return float("nan"), float("nan"), f"shape mismatch {list(a.shape)} vs {list(b.shape)}"
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    bad = [n for n, x in (("A", a), ("B", b)) if not np.all(np.isfinite(x))]
    if bad:
        return float("nan"), float("nan"), "non-finite values in " + " and ".join(bad)
    diff = a - b
    nd = float(np.linalg.norm(diff.ravel()))
    nb = float(np.linalg.norm(b.ravel()))
    rel = (0.0 if nd == 0.0 else float("inf")) if nb == 0.0 else nd / nb
    mx = float(np.max(np.abs(diff))) if diff.size else 0.0
    return rel, mx, None


def main(argv=None):
    ap = argparse.ArgumentParser(description="relative-L2 comparison of safetensors files")
    ap.add_argument("a", help="file under test")
    ap.add_argument("b", help="reference file (denominator of rel_l2)")
    ap.add_argument("--tol", type=float, default=1e-6, help="max allowed rel L2 (default 1e-6)")
    ap.add_argument("--key", help="compare only this tensor")
    args = ap.parse_args(argv)

    fa, fb = st.SafeTensors(args.a), st.SafeTensors(args.b)
    if args.key:
        missing = [p for p, f in ((args.a, fa), (args.b, fb)) if args.key not in f]
        if missing:
            print(f"{args.key}: missing in {', '.join(missing)}")
            return 1
        keys = [args.key]
    else:
        keys = [k for k in fa.keys() if k in fb]
        if not keys:
            print("no tensor name in common")
            return 1
    ok = True
    for k in keys:
        rel, mx, problem = compare(fa.get(k), fb.get(k))
        line = f"{k}: rel_l2={rel:.3e} max_abs={mx:.3e}"
        if problem:
            line += f"  FAIL ({problem})"
            ok = False
        elif not rel <= args.tol:
            line += f"  FAIL (> tol {args.tol:g})"
            ok = False
        print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
