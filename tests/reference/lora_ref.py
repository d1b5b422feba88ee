#!/usr/bin/env python3
"""LoRA files for the suite's lora section, and weights with LoRAs merged by NumPy.

    lora_ref.py make W.safetensors OUT.safetensors --layout {kohya,bfl,bfl-prefixed,diffusers} [--seed S] [--rank R] [--dtype F32|BF16]
    lora_ref.py merge W.safetensors OUT.safetensors L1.safetensors[:SCALE] ...
    lora_ref.py bad W.safetensors DIR      one bad LoRA file per refusal, DIR/bad-NAME.safetensors

make: random A, B (and alpha where the layout has one) for the model's linear weights
in one of the three key layouts (diffusers: q, k, v, proj_mlp as row slices of BFL's
fused qkv and linear1, norm_out with its halves in diffusers' order).
merge: W + sum(scale * alpha / rank * B @ A) in float64, stored in W's dtype; this is
written independently of runtime/lora.c (its own key mapping), as the check of it.
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402

DOUBLE = {  # diffusers transformer_blocks.N.X -> (BFL double_blocks.N.Y, part of 3 or None)
    "attn.to_q": ("img_attn.qkv", 0), "attn.to_k": ("img_attn.qkv", 1), "attn.to_v": ("img_attn.qkv", 2),
    "attn.add_q_proj": ("txt_attn.qkv", 0), "attn.add_k_proj": ("txt_attn.qkv", 1), "attn.add_v_proj": ("txt_attn.qkv", 2),
    "attn.to_out.0": ("img_attn.proj", None), "attn.to_add_out": ("txt_attn.proj", None),
    "ff.net.0.proj": ("img_mlp.0", None), "ff.net.2": ("img_mlp.2", None),
    "ff_context.net.0.proj": ("txt_mlp.0", None), "ff_context.net.2": ("txt_mlp.2", None),
    "norm1.linear": ("img_mod.lin", None), "norm1_context.linear": ("txt_mod.lin", None),
}
SINGLE = {  # single_transformer_blocks.N.X -> (single_blocks.N.Y, part: q k v mlp of linear1)
    "attn.to_q": ("linear1", "q"), "attn.to_k": ("linear1", "k"), "attn.to_v": ("linear1", "v"),
    "proj_mlp": ("linear1", "mlp"), "proj_out": ("linear2", None), "norm.linear": ("modulation.lin", None),
}
TOP = {
    "x_embedder": "img_in", "context_embedder": "txt_in",
    "time_text_embed.timestep_embedder.linear_1": "time_in.in_layer",
    "time_text_embed.timestep_embedder.linear_2": "time_in.out_layer",
    "time_text_embed.text_embedder.linear_1": "vector_in.in_layer",
    "time_text_embed.text_embedder.linear_2": "vector_in.out_layer",
    "time_text_embed.guidance_embedder.linear_1": "guidance_in.in_layer",
    "time_text_embed.guidance_embedder.linear_2": "guidance_in.out_layer",
    "norm_out.linear": "final_layer.adaLN_modulation.1", "proj_out": "final_layer.linear",
}


def rows_of(part, shape):
    """The rows [a, b) of a BFL weight [R, C] that a diffusers part is."""
    R, C = shape
    if part is None:
        return 0, R
    if isinstance(part, int):
        return part * R // 3, (part + 1) * R // 3
    k = "qkv".find(part)
    return (3 * C, R) if part == "mlp" else (k * C, (k + 1) * C)


def diffusers_target(name):
    """diffusers module name -> (BFL weight key, rows (a, b), swap halves?) or None."""
    m = re.fullmatch(r"(single_transformer_blocks|transformer_blocks)\.(\d+)\.(.+)", name)
    if m:
        table, bfl = (SINGLE, "single_blocks") if m.group(1).startswith("single") else (DOUBLE, "double_blocks")
        if m.group(3) not in table:
            return None
        y, part = table[m.group(3)]
        return f"{bfl}.{m.group(2)}.{y}.weight", part, False
    if name in TOP:
        return TOP[name] + ".weight", None, name == "norm_out.linear"
    return None


def linear_keys(w):
    return [k for k in w if k.endswith(".weight") and w[k].ndim == 2]


def make(wpath, out, layout, seed, rank, dtype):
    w = st.load(wpath)
    rng = np.random.default_rng(seed)
    t = {}

    def add(module, rows, cols, alpha):
        r = rank
        down = rng.normal(0, 1 / np.sqrt(cols), (r, cols))
        a = alpha if alpha is not None else r
        up = rng.normal(0, 0.3 * np.sqrt(r) / a, (rows, r))
        t[module + (".lora_down.weight" if layout == "kohya" else ".lora_A.weight")] = down
        t[module + (".lora_up.weight" if layout == "kohya" else ".lora_B.weight")] = up
        if alpha is not None:
            t[module + ".alpha"] = np.array(alpha, dtype=np.float64)

    if layout == "diffusers":
        nd = len({k.split(".")[1] for k in w if k.startswith("double_blocks.")})
        ns = len({k.split(".")[1] for k in w if k.startswith("single_blocks.")})
        names = [f"transformer_blocks.{i}.{x}" for i in range(nd) for x in DOUBLE]
        names += [f"single_transformer_blocks.{i}.{x}" for i in range(ns) for x in SINGLE] + list(TOP)
        for n in names:
            tg = diffusers_target(n)
            if tg[0] not in w:
                continue
            a, b = rows_of(tg[1], w[tg[0]].shape)
            add("transformer." + n, b - a, w[tg[0]].shape[1], None)
    else:
        for i, k in enumerate(linear_keys(w)):
            name = k[:-len(".weight")]
            R, C = w[k].shape
            if layout == "kohya":
                add("lora_unet_" + name.replace(".", "_"), R, C, float(rng.integers(1, 2 * rank)))
            else:  # BFL keys; alpha in every other module (else alpha = rank)
                pre = "diffusion_model." if layout == "bfl-prefixed" else ""
                add(pre + name, R, C, float(rng.integers(1, 2 * rank)) if i % 2 else None)
    st.save(out, t, dtype=dtype)


def split_spec(spec):
    if ":" in spec:
        f, s = spec.rsplit(":", 1)
        return f, float(s)
    return spec, 1.0


def module_target(module, w):
    """(BFL key, rows, swap) of a LoRA module name in any of the three layouts."""
    if module.startswith("lora_unet_"):
        rest = module[len("lora_unet_"):]
        for k in linear_keys(w):
            if k[:-len(".weight")].replace(".", "_") == rest:
                return k, None, False
        return None
    for pre in ("diffusion_model.", "transformer."):
        if module.startswith(pre):
            module = module[len(pre):]
    if module + ".weight" in w:
        return module + ".weight", None, False
    return diffusers_target(module)


def merge(wpath, out, specs):
    f = st.SafeTensors(wpath)
    w = {k: f.get(k) for k in f.keys()}
    delta = {}
    for spec in specs:
        path, scale = split_spec(spec)
        lt = st.load(path)
        mods = {}
        for k, v in lt.items():
            m = re.fullmatch(r"(.+)\.(lora_down\.weight|lora_A\.weight|lora_up\.weight|lora_B\.weight|alpha)", k)
            role = {"lora_down.weight": "A", "lora_A.weight": "A", "lora_up.weight": "B", "lora_B.weight": "B"}.get(m.group(2), "alpha")
            mods.setdefault(m.group(1), {})[role] = v.astype(np.float64)
        for mod, d in mods.items():
            key, part, swap = module_target(mod, w)
            A, B = d["A"], d["B"]
            rank = A.shape[0]
            alpha = float(d["alpha"].reshape(-1)[0]) if "alpha" in d else rank
            dw = scale * alpha / rank * (B @ A)
            if swap:
                h = dw.shape[0] // 2
                dw = np.concatenate([dw[h:], dw[:h]])
            a, b = rows_of(part, w[key].shape)
            acc = delta.setdefault(key, np.zeros(w[key].shape))
            acc[a:b] += dw
    res = {}
    for k in f.keys():
        if k in delta:
            merged = w[k].astype(np.float64) + delta[k]
            res[k] = np.where(delta[k] == 0, w[k].astype(np.float64), merged)
        else:
            res[k] = w[k]
    dts = {f.dtype(k) for k in f.keys()}
    assert len(dts) == 1, dts
    st.save(out, res, dtype=dts.pop())


def bad(wpath, d):
    """One file per refusal; the suite matches each one's message."""
    w = st.load(wpath)
    R, C = w["double_blocks.0.img_attn.qkv.weight"].shape
    rng = np.random.default_rng(1)
    A = rng.normal(0, 0.1, (4, C))
    B = rng.normal(0, 0.1, (R, 4))
    k = "lora_unet_double_blocks_0_img_attn_qkv"
    good = {k + ".lora_down.weight": A, k + ".lora_up.weight": B, k + ".alpha": np.array(4.0)}
    nan = dict(good)
    nan[k + ".lora_up.weight"] = B.copy()
    nan[k + ".lora_up.weight"][3, 1] = np.nan
    files = {
        "unknown": {**good, "lora_unet_double_blocks_9_img_attn_qkv.lora_down.weight": A,
                    "lora_unet_double_blocks_9_img_attn_qkv.lora_up.weight": B,
                    "lora_unet_double_blocks_9_img_attn_qkv.alpha": np.array(4.0)},
        "rank": {**good, k + ".lora_up.weight": rng.normal(0, 0.1, (R, 5))},
        "shape": {**good, k + ".lora_down.weight": rng.normal(0, 0.1, (4, C + 1))},
        "rows": {"transformer.transformer_blocks.0.attn.to_q.lora_A.weight": A,
                 "transformer.transformer_blocks.0.attn.to_q.lora_B.weight": B},
        "noalpha": {k + ".lora_down.weight": A, k + ".lora_up.weight": B},
        "nan": nan,
        "noup": {k + ".lora_down.weight": A, k + ".alpha": np.array(4.0)},
        "key": {**good, k + ".dora_scale": np.ones(R)},
        "dtype": {**good, k + ".alpha": np.array(4, dtype=np.int64)},
        "alpha": {**good, k + ".alpha": np.array([4.0, 4.0])},
        "conv": {**good, k + ".lora_down.weight": A.reshape(4, C, 1, 1)},
        "twice": {**good, "diffusion_model.double_blocks.0.img_attn.qkv.lora_A.weight": A,
                  "diffusion_model.double_blocks.0.img_attn.qkv.lora_B.weight": B},
        "huge": {**good, k + ".alpha": np.array(1e300)},
    }
    os.makedirs(d, exist_ok=True)
    for n, t in files.items():
        st.save(os.path.join(d, f"bad-{n}.safetensors"), t, dtype=None if n in ("dtype", "huge") else "F32")
    st.save(os.path.join(d, "empty.safetensors"), {})


def main(argv):
    if len(argv) >= 3 and argv[0] == "make":
        a = argv[3:]
        opt = dict(zip(a[::2], a[1::2]))
        make(argv[1], argv[2], opt["--layout"], int(opt.get("--seed", 1)), int(opt.get("--rank", 4)), opt.get("--dtype", "F32"))
    elif len(argv) >= 4 and argv[0] == "merge":
        merge(argv[1], argv[2], argv[3:])
    elif len(argv) == 3 and argv[0] == "bad":
        bad(argv[1], argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
