#!/usr/bin/env python3
"""Independent NumPy reference of the CLIP text model (FLUX.1's text_encoder).

Written from the CLIP text transformer's math (token + position embeddings; pre-LayerNorm
layers of causal multi-head self-attention and a quick-GELU MLP; a final LayerNorm; the
pooled output at the end-of-text token, the first position of the largest id), not from
fluxcc's DSL.
Usage:
    python3 tests/reference/clip_ref.py --weights W.safetensors --inputs I.safetensors \
        --out O.safetensors --heads H [-q]

Inputs file: tokens [B, T] (ids, any numeric dtype). Output file: F32 `hidden` [B, T, D]
and `pooled` [B, D]. Sizes come from the weight shapes (text_model.* keys); the head count,
which no shape says, from --heads. Arithmetic in float64 on the stored weights (an f32
model: its own rounding is below the 1e-5 relative L2 error the suite allows).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def clip_text(w, ids, heads):
    p = lambda k: w["text_model." + k]  # noqa: E731
    lin = lambda x, k: x @ p(k + ".weight").T + p(k + ".bias")  # noqa: E731
    bsz, t = ids.shape
    h = p("embeddings.token_embedding.weight")[ids] + p("embeddings.position_embedding.weight")[:t]
    d = h.shape[-1]
    hd = d // heads
    causal = np.triu(np.ones((t, t), dtype=bool), 1)  # key j > query i
    layer = 0
    while "text_model.encoder.layers.%d.mlp.fc1.weight" % layer in w:
        pre = "encoder.layers.%d." % layer
        x = layer_norm(h, p(pre + "layer_norm1.weight"), p(pre + "layer_norm1.bias"))
        q, k, v = (lin(x, pre + "self_attn." + n).reshape(bsz, t, heads, hd).transpose(0, 2, 1, 3)
                   for n in ("q_proj", "k_proj", "v_proj"))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        s = np.where(causal, -np.inf, s)
        s = np.exp(s - s.max(-1, keepdims=True))
        o = (s / s.sum(-1, keepdims=True)) @ v
        h = h + lin(o.transpose(0, 2, 1, 3).reshape(bsz, t, d), pre + "self_attn.out_proj")
        x = layer_norm(h, p(pre + "layer_norm2.weight"), p(pre + "layer_norm2.bias"))
        x = lin(x, pre + "mlp.fc1")
        x = x / (1.0 + np.exp(-1.702 * x))  # quick GELU: x sigmoid(1.702 x)
        h = h + lin(x, pre + "mlp.fc2")
        layer += 1
    h = layer_norm(h, p("final_layer_norm.weight"), p("final_layer_norm.bias"))
    pooled = h[np.arange(bsz), ids.argmax(-1)]  # argmax: the first largest id
    return h, pooled


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("-q", action="store_true")
    a = ap.parse_args()
    w = {k: np.asarray(v, dtype=np.float64) for k, v in st.load(a.weights).items() if k.startswith("text_model.")}
    inputs = st.load(a.inputs)
    if "tokens" not in inputs:
        raise SystemExit(f"clip_ref: {a.inputs} has no tensor 'tokens'")
    ids = np.asarray(inputs["tokens"], dtype=np.float64)
    if np.any(ids != np.floor(ids)) or ids.min() < 0:
        raise SystemExit("clip_ref: token ids must be non-negative whole numbers")
    h, pooled = clip_text(w, ids.astype(np.int64), a.heads)
    st.save(a.out, {"hidden": h.astype(np.float32), "pooled": pooled.astype(np.float32)})
    if not a.q:
        print(f"hidden: {list(h.shape)} std {h.std():.6g}; pooled: {list(pooled.shape)} std {pooled.std():.6g}")


if __name__ == "__main__":
    main()
