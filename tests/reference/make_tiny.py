#!/usr/bin/env python3
"""Tiny random FLUX-shaped checkpoint + inputs, and a self-test of flux_ref.py.

Usage:
    python3 tests/reference/make_tiny.py --weights W.safetensors --inputs I.safetensors \
        [--dtype f32|bf16] [--dev] [--seed 0] [--batch 1]
    python3 tests/reference/make_tiny.py --selftest [--params-tsv PATH] [--keep DIR]

Tiny config (same key names as the FLUX.1 checkpoint): D=64, head dim d=32, H=2, MLP 256,
2 double + 2 single blocks, Cin=Cout=16, Cctx=32, Cvec=24, timestep embedding 256,
N=16 image tokens on a 4x4 grid with img_ids (0, r, c), T=8 text tokens with txt_ids 0,
timesteps ~ U[0,1], guidance ~ U[1,5] (--dev). RoPE for it: --axes 8,12,12 --theta 10000.
Linear weights ~ N(0, 1/fan_in), biases ~ N(0, 0.05^2), norm scales ~ 1 + N(0, 0.1^2);
inputs ~ N(0, 1). Floating tensors are written as F32 or BF16 (--dtype).

--selftest generates such files in a temporary directory and checks flux_ref.py and
compare.py (finite output, bf16 vs f32 agreement, permutation/translation symmetries,
batch independence, time-embedding and RoPE conventions, compare.py exit codes, and the
key names/shapes against flux1-schnell-params.tsv when that file is found). Exit 1 on failure.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import st  # noqa: E402

TINY = dict(D=64, d=32, M=256, n_double=2, n_single=2, Cin=16, Cout=16, Cctx=32, Cvec=24,
            temb=256, grid=(4, 4), T=8)
TINY_AXES = "8,12,12"
REAL = dict(D=3072, d=128, M=12288, n_double=19, n_single=38, Cin=64, Cout=64, Cctx=4096,
            Cvec=768, temb=256)


def param_shapes(c, dev=False):
    """Checkpoint key -> shape for a FLUX config (Linear weights are [out, in])."""
    D, d, M = c["D"], c["d"], c["M"]
    p = {}

    def lin(name, i, o):
        p[name + ".weight"] = (o, i)
        p[name + ".bias"] = (o,)

    lin("img_in", c["Cin"], D)
    lin("txt_in", c["Cctx"], D)
    for e, i in (("time_in", c["temb"]), ("vector_in", c["Cvec"])) + ((("guidance_in", c["temb"]),) if dev else ()):
        lin(e + ".in_layer", i, D)
        lin(e + ".out_layer", D, D)
    for b in range(c["n_double"]):
        for s in ("img", "txt"):
            pre = f"double_blocks.{b}.{s}"
            lin(pre + "_mod.lin", D, 6 * D)
            lin(pre + "_attn.qkv", D, 3 * D)
            p[pre + "_attn.norm.query_norm.scale"] = (d,)
            p[pre + "_attn.norm.key_norm.scale"] = (d,)
            lin(pre + "_attn.proj", D, D)
            lin(pre + "_mlp.0", D, M)
            lin(pre + "_mlp.2", M, D)
    for b in range(c["n_single"]):
        pre = f"single_blocks.{b}."
        lin(pre + "linear1", D, 3 * D + M)
        lin(pre + "linear2", D + M, D)
        lin(pre + "modulation.lin", D, 3 * D)
        p[pre + "norm.query_norm.scale"] = (d,)
        p[pre + "norm.key_norm.scale"] = (d,)
    lin("final_layer.adaLN_modulation.1", D, 2 * D)
    lin("final_layer.linear", D, c["Cout"])
    return p


def make_weights(seed=0, dev=False, c=TINY):
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape in sorted(param_shapes(c, dev).items()):
        if name.endswith(".scale"):
            w[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        elif name.endswith(".bias"):
            w[name] = 0.05 * rng.standard_normal(shape)
        else:
            w[name] = rng.standard_normal(shape) / math.sqrt(shape[1])
    return {k: v.astype(np.float32) for k, v in w.items()}


def make_inputs(seed=0, dev=False, batch=1, c=TINY):
    rng = np.random.default_rng(seed + 1000)
    gh, gw = c["grid"]
    N, T = gh * gw, c["T"]
    ids = np.zeros((N, 3))
    for r in range(gh):
        for col in range(gw):
            ids[r * gw + col] = (0, r, col)  # img_ids[r*W+c] = (0, r, c)
    x = {
        "img": rng.standard_normal((batch, N, c["Cin"])),
        "img_ids": np.broadcast_to(ids, (batch, N, 3)).copy(),
        "txt": rng.standard_normal((batch, T, c["Cctx"])),
        "txt_ids": np.zeros((batch, T, 3)),
        "timesteps": rng.uniform(0.0, 1.0, batch),
        "y": rng.standard_normal((batch, c["Cvec"])),
    }
    if dev:
        x["guidance"] = rng.uniform(1.0, 5.0, batch)
    return {k: v.astype(np.float32) for k, v in x.items()}


# =========================================================================== self-test
class SelfTest:
    def __init__(self, tmp):
        self.tmp = tmp
        self.failures = 0
        self.n = 0

    def check(self, name, ok, detail=""):
        self.n += 1
        if not ok:
            self.failures += 1
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  [{detail}]" if detail else ""))

    def path(self, name):
        return os.path.join(self.tmp, name)

    def run_ref(self, weights, inputs, dtype, tag):
        """inputs: dict of arrays (written as-is, F32) or a path. Returns `out`."""
        if isinstance(inputs, dict):
            ip = self.path(f"in_{tag}.safetensors")
            st.save(ip, inputs)
        else:
            ip = inputs
        op = self.path(f"out_{tag}.safetensors")
        subprocess.run([sys.executable, os.path.join(HERE, "flux_ref.py"), "--weights", weights,
                        "--inputs", ip, "--out", op, "--axes", TINY_AXES, "--theta", "10000",
                        "--dtype", dtype, "-q"], check=True)
        f = st.SafeTensors(op)
        assert f.keys() == ["out"] and f.dtype("out") == "F32"
        return f.get("out").astype(np.float64)


def rel(a, b):
    return float(np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel()))


def selftest(args):
    tmp = args.keep or tempfile.mkdtemp(prefix="flux_ref_selftest_")
    os.makedirs(tmp, exist_ok=True)
    T = SelfTest(tmp)
    N, Tt = TINY["grid"][0] * TINY["grid"][1], TINY["T"]

    # ---- key names / shapes against the real checkpoint listing
    tsv = args.params_tsv
    if not tsv:
        for cand in (os.path.join(HERE, "..", "..", "shared", "reference", "flux1-schnell-params.tsv"),
                     os.path.join(HERE, "..", "..", "..", "shared", "reference", "flux1-schnell-params.tsv")):
            if os.path.exists(cand):
                tsv = cand
                break
    if tsv:
        got = {}
        for line in open(tsv):
            if line.startswith("#") or not line.strip():
                continue
            k, dt, shape = line.rstrip("\n").split("\t")
            got[k] = tuple(int(s) for s in shape.split(","))
        want = param_shapes(REAL)
        T.check("param_shapes(real config) == flux1-schnell-params.tsv", got == want,
                f"{len(got)} vs {len(want)} keys, {sum(np.prod(s) for s in want.values())} params")
    else:
        print("SKIP  flux1-schnell-params.tsv not found (pass --params-tsv)")

    # ---- files
    wf32, wbf = T.path("w_f32.safetensors"), T.path("w_bf16.safetensors")
    st.save(wf32, make_weights(0))
    st.save(wbf, make_weights(0), dtype="BF16")
    inp = make_inputs(0, batch=2)
    # For the bf16-vs-f32 comparisons use timesteps whose 1000*t is exact in bf16 (1000, 500):
    # otherwise t' = bf16(1000*t) legitimately differs from the f32 t' by up to 2 (0.75 -> 752),
    # which rotates the high-frequency time-embedding channels and moves the output by ~10%.
    ibf = T.path("in_bf16.safetensors")
    st.save(ibf, dict(inp, timesteps=np.array([1.0, 0.5], np.float32)), dtype="BF16")

    # ---- basic runs
    o32 = T.run_ref(wf32, inp, "f32", "base32")
    T.check("f32 output shape [B,N,Cout] and finite",
            o32.shape == (2, N, TINY["Cout"]) and np.all(np.isfinite(o32)), str(o32.shape))
    T.check("output scale sane", 0.05 < o32.std() < 20, f"std={o32.std():.3g}")
    o32b = T.run_ref(wf32, inp, "f32", "base32b")
    T.check("deterministic", np.array_equal(o32, o32b))
    b_bf = T.run_ref(wbf, ibf, "bf16", "bf16")
    b_32 = T.run_ref(wbf, ibf, "f32", "bf16w_f32")
    r = rel(b_bf, b_32)
    T.check("bf16 vs f32 run (same bf16 weights/inputs): rel L2 < 2e-2", r < 2e-2, f"{r:.2e}")
    T.check("bf16 emulation actually rounds: rel L2 > 1e-4", r > 1e-4, f"{r:.2e}")
    T.check("bf16 output values are bf16-exact",
            np.array_equal(b_bf.astype(np.float32), st.bf16_round(b_bf)))
    # compare.py agrees with rel() and exits 0/1 as documented
    cp = [sys.executable, os.path.join(HERE, "compare.py")]
    res = subprocess.run(cp + [T.path("out_bf16.safetensors"), T.path("out_bf16w_f32.safetensors"),
                               "--tol", "2e-2"], capture_output=True, text=True)
    T.check("compare.py bf16 vs f32 within 2e-2 -> exit 0", res.returncode == 0, res.stdout.strip())
    res = subprocess.run(cp + [T.path("out_bf16.safetensors"), T.path("out_bf16w_f32.safetensors"),
                               "--tol", "1e-6", "--key", "out"], capture_output=True, text=True)
    T.check("compare.py bf16 vs f32 at 1e-6 -> exit 1", res.returncode == 1, res.stdout.strip())

    # ---- the two time-embedding freqs variants differ only slightly
    op_x = T.path("out_exactfreqs.safetensors")
    subprocess.run([sys.executable, os.path.join(HERE, "flux_ref.py"), "--weights", wf32, "--inputs",
                    T.path("in_base32.safetensors"), "--out", op_x, "--axes", TINY_AXES, "--dtype", "f32",
                    "--temb-freqs", "exact", "-q"], check=True)
    r = rel(st.load(op_x)["out"].astype(np.float64), o32)
    T.check("--temb-freqs exact vs torch: 0 < rel L2 < 1e-4", 0 < r < 1e-4, f"{r:.2e}")

    # ---- batch independence: B=2 equals two B=1 runs
    o_0 = T.run_ref(wf32, {k: v[:1] for k, v in inp.items()}, "f32", "b0")
    o_1 = T.run_ref(wf32, {k: v[1:] for k, v in inp.items()}, "f32", "b1")
    r = rel(np.concatenate([o_0, o_1]), o32)
    T.check("batch elements independent (f32)", r < 1e-6, f"{r:.2e}")

    # ---- text tokens (all txt_ids zero) are an unordered set for the image output
    perm = np.random.default_rng(5).permutation(Tt)
    p_in = dict(inp, txt=inp["txt"][:, perm])
    r = rel(T.run_ref(wf32, p_in, "f32", "txtperm"), o32)
    T.check("permuting txt tokens leaves out unchanged (f32)", r < 1e-6, f"{r:.2e}")
    p_bf = {k: v for k, v in st.load(ibf).items()}
    p_bf["txt"] = p_bf["txt"][:, perm]
    r = rel(T.run_ref(wbf, p_bf, "bf16", "txtperm_bf"), b_bf)
    T.check("permuting txt tokens leaves out ~unchanged (bf16)", r < 1e-3, f"{r:.2e}")

    # ---- image tokens permuted together with their ids: output permuted the same way
    perm = np.random.default_rng(6).permutation(N)
    p_in = dict(inp, img=inp["img"][:, perm], img_ids=inp["img_ids"][:, perm])
    r = rel(T.run_ref(wf32, p_in, "f32", "imgperm"), o32[:, perm])
    T.check("permuting img tokens with their ids permutes out (f32)", r < 1e-6, f"{r:.2e}")
    p_in = dict(inp, img=inp["img"][:, perm])
    r = rel(T.run_ref(wf32, p_in, "f32", "imgperm_noids"), o32[:, perm])
    T.check("permuting img tokens WITHOUT their ids changes out (RoPE active)", r > 1e-3, f"{r:.2e}")

    # ---- RoPE depends only on relative positions: shift every id (txt and img) equally
    sh = np.array([3.0, 5.0, 7.0], dtype=np.float32)
    p_in = dict(inp, img_ids=inp["img_ids"] + sh, txt_ids=inp["txt_ids"] + sh)
    r = rel(T.run_ref(wf32, p_in, "f32", "shift_all"), o32)
    T.check("shifting all ids by a constant leaves out unchanged (f32 angle rounding)", r < 1e-4, f"{r:.2e}")
    for ax in range(3):
        s1 = np.zeros(3, np.float32)
        s1[ax] = 2.0
        p_in = dict(inp, img_ids=inp["img_ids"] + s1)
        r = rel(T.run_ref(wf32, p_in, "f32", f"shift_img{ax}"), o32)
        T.check(f"shifting only img ids on axis {ax} changes out", r > 1e-3, f"{r:.2e}")

    # ---- every input matters
    for k, f in (("timesteps", lambda v: np.clip(v + 0.25, 0, 1) if v.ndim else v), ("y", lambda v: v + 0.5),
                 ("txt", lambda v: v * -1.0)):
        p_in = dict(inp, **{k: f(inp[k]).astype(np.float32)})
        r = rel(T.run_ref(wf32, p_in, "f32", f"chg_{k}"), o32)
        T.check(f"changing {k} changes out", r > 1e-3, f"{r:.2e}")

    # ---- dev: guidance_in present -> guidance used
    wdev = T.path("w_dev.safetensors")
    st.save(wdev, make_weights(0, dev=True))
    # timesteps and guidance with 1000*x exact in bf16 (see above)
    idev = dict(make_inputs(0, dev=True, batch=2), timesteps=np.array([0.25, 1.0], np.float32),
                guidance=np.array([4.0, 2.0], np.float32))
    od = T.run_ref(wdev, idev, "f32", "dev32")
    T.check("dev f32 output finite", np.all(np.isfinite(od)))
    odg = T.run_ref(wdev, dict(idev, guidance=idev["guidance"] + 1.0), "f32", "dev32g")
    T.check("dev: changing guidance changes out", rel(odg, od) > 1e-3, f"{rel(odg, od):.2e}")
    odb = T.run_ref(wdev, idev, "bf16", "devbf")
    T.check("dev bf16 vs f32 rel L2 < 2e-2", rel(odb, od) < 2e-2, f"{rel(odb, od):.2e}")

    # ---- unit checks of conventions, through the Model class
    import flux_ref
    m = flux_ref.Model(wbf, [8, 12, 12], 10000.0, flux_ref.Prec("bf16"))
    emb = m.timestep_embedding(np.array([0.75]))
    T.check("temb bf16: t=0.75 -> t'=752, cos first", emb[0, 0] == st.bf16_round(np.cos(752.0))
            and emb[0, 128] == st.bf16_round(np.sin(752.0)), f"{emb[0, 0]}, {emb[0, 128]}")
    j = 127
    fj = math.exp(-math.log(10000) * j / 128)
    T.check("temb freqs_j = exp(-ln(1e4) j/128)", abs(emb[0, j] - math.cos(752 * fj)) < 1e-2
            and abs(emb[0, 128 + j] - math.sin(752 * fj)) < 1e-2)
    m32 = flux_ref.Model(wf32, [8, 12, 12], 10000.0, flux_ref.Prec("f32"))
    emb = m32.timestep_embedding(np.array([0.75]))
    T.check("temb f32: t'=750", abs(emb[0, 0] - math.cos(750.0)) < 1e-6)

    x = np.random.default_rng(9).standard_normal((1, 1, 1, 32))
    ok = True
    spans = [(0, 8), (8, 20), (20, 32)]  # head channels of axis 0, 1, 2
    for ax, (lo, hi) in enumerate(spans):
        ids = np.zeros((1, 1, 3))
        ids[0, 0, ax] = 3.0
        y = m32.apply_rope(f32_(x), m32.rope_tables(ids))
        changed = np.nonzero(np.abs(y - f32_(x))[0, 0, 0] > 1e-6)[0]
        ok &= changed.min() >= lo and changed.max() < hi and len(changed) == hi - lo
        # first pair of the axis: channels (lo, lo+1), omega_0 = 1, angle = 3
        c, s = math.cos(3.0), math.sin(3.0)
        x0, x1 = x[0, 0, 0, lo], x[0, 0, 0, lo + 1]
        ok &= abs(y[0, 0, 0, lo] - (c * x0 - s * x1)) < 1e-5 and abs(y[0, 0, 0, lo + 1] - (s * x0 + c * x1)) < 1e-5
        # second pair: omega_1 = theta^(-2/dim)
        dim = hi - lo
        a = 3.0 * 10000.0 ** (-2.0 / dim)
        x0, x1 = x[0, 0, 0, lo + 2], x[0, 0, 0, lo + 3]
        ok &= abs(y[0, 0, 0, lo + 2] - (math.cos(a) * x0 - math.sin(a) * x1)) < 1e-5
    T.check("RoPE: axis i rotates its own channel span, adjacent pairs, omega_j = theta^(-2j/dim)", ok)

    # ---- compare.py failure modes
    a_p, b_p = T.path("cmp_a.safetensors"), T.path("cmp_b.safetensors")
    st.save(b_p, {"out": np.ones((2, 3), np.float32), "x": np.ones(4, np.float32)})
    cases = [("identical", {"out": np.ones((2, 3), np.float32)}, [], 0),
             ("small diff under tol", {"out": np.ones((2, 3), np.float32) * (1 + 1e-7)}, [], 0),
             ("diff over tol", {"out": np.ones((2, 3), np.float32) * 1.01}, [], 1),
             ("NaN", {"out": np.full((2, 3), np.nan, np.float32)}, ["--tol", "1e9"], 1),
             ("shape mismatch", {"out": np.ones((3, 2), np.float32)}, [], 1),
             ("--key missing", {"out": np.ones((2, 3), np.float32)}, ["--key", "nope"], 1),
             ("no common key", {"zz": np.ones(1, np.float32)}, [], 1)]
    for name, ta, extra, want in cases:
        st.save(a_p, ta)
        res = subprocess.run(cp + [a_p, b_p] + extra, capture_output=True, text=True)
        T.check(f"compare.py {name} -> exit {want}", res.returncode == want, res.stdout.strip())

    print(f"{T.n - T.failures} passed, {T.failures} failed")
    if T.failures or args.keep:
        print(f"files kept in {tmp}")
    else:
        shutil.rmtree(tmp)
    return 1 if T.failures else 0


def f32_(x):
    return np.asarray(x, np.float32).astype(np.float64)


def main(argv=None):
    ap = argparse.ArgumentParser(description="tiny FLUX weights/inputs generator and flux_ref self-test")
    ap.add_argument("--weights", help="output weights .safetensors")
    ap.add_argument("--inputs", help="output inputs .safetensors")
    ap.add_argument("--dtype", choices=["f32", "bf16"], default="f32", help="storage dtype of floats")
    ap.add_argument("--dev", action="store_true", help="dev model: guidance_in.* weights + guidance input")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--selftest", action="store_true", help="run the flux_ref/compare self-test")
    ap.add_argument("--params-tsv", help="flux1-schnell-params.tsv for the key-name check")
    ap.add_argument("--keep", help="self-test working directory (kept)")
    a = ap.parse_args(argv)
    if a.selftest:
        return selftest(a)
    if not a.weights and not a.inputs:
        ap.error("give --weights and/or --inputs, or --selftest")
    sd = "BF16" if a.dtype == "bf16" else "F32"
    if a.weights:
        st.save(a.weights, make_weights(a.seed, a.dev), dtype=sd)
    if a.inputs:
        st.save(a.inputs, make_inputs(a.seed, a.dev, a.batch), dtype=sd)
    print(f"tiny FLUX ({'dev' if a.dev else 'schnell'}): run flux_ref.py with --axes {TINY_AXES} --theta 10000",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
