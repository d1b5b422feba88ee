#!/usr/bin/env python3
"""Independent NumPy reference of the T5 v1.1 encoder (FLUX.1's text_encoder_2).

Written from the T5 encoder's math (shared token embedding; pre-RMSNorm blocks of unscaled
multi-head self-attention with a relative position bias shared by all blocks, from block
0's table over bidirectional log-spaced buckets; a gated-GELU (tanh) feed-forward; a final
RMSNorm), not from fluxcc's DSL.
Usage:
    python3 tests/reference/t5_ref.py --weights W.safetensors --inputs I.safetensors \
        --out O.safetensors --heads H [--max-distance 128] [-q]

Inputs file: tokens [B, T] (ids). Output file: F32 `hidden` [B, T, d_model]. Sizes come
from the weight shapes (the bucket count from the bias table); the head count from --heads.
Arithmetic in float64, except the bucket of a long distance, whose log-scale position is
computed in float32 and truncated, as the reference implementation does (float64 gives the
same table for the distances up to 255 checked against transformers; the edges at 16, 32
and 64 are where the two could part).
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def rms_norm(x, w, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def buckets(t, num_buckets, max_distance):
    rel = np.arange(t)[None, :] - np.arange(t)[:, None]  # key j - query i
    half = num_buckets // 2
    exact = half // 2
    out = (rel > 0).astype(np.int64) * half
    n = np.abs(rel)
    with np.errstate(divide="ignore"):
        y = (np.log((n / exact).astype(np.float32)) / np.float32(math.log(max_distance / exact))
             * np.float32(half - exact)).astype(np.float32)
    large = np.minimum(exact + np.where(n < exact, 0, y).astype(np.int64), half - 1)
    return out + np.where(n < exact, n, large)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def t5_encoder(w, ids, heads, max_distance):
    bsz, t = ids.shape
    h = w["shared.weight"][ids]
    table = w["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]  # [buckets, heads]
    bias = table[buckets(t, table.shape[0], max_distance)].transpose(2, 0, 1)[None]  # [1, H, T, T]
    blk = 0
    while f"encoder.block.{blk}.layer.0.layer_norm.weight" in w:
        pre = f"encoder.block.{blk}.layer."
        x = rms_norm(h, w[pre + "0.layer_norm.weight"])
        q, k, v = (x @ w[pre + f"0.SelfAttention.{n}.weight"].T for n in "qkv")
        dkv = q.shape[-1] // heads
        q, k, v = (a.reshape(bsz, t, heads, dkv).transpose(0, 2, 1, 3) for a in (q, k, v))
        s = q @ k.transpose(0, 1, 3, 2) + bias  # no 1/sqrt(d) scaling in T5
        s = np.exp(s - s.max(-1, keepdims=True))
        o = ((s / s.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(bsz, t, heads * dkv)
        h = h + o @ w[pre + "0.SelfAttention.o.weight"].T
        x = rms_norm(h, w[pre + "1.layer_norm.weight"])
        f = gelu_tanh(x @ w[pre + "1.DenseReluDense.wi_0.weight"].T) * (x @ w[pre + "1.DenseReluDense.wi_1.weight"].T)
        h = h + f @ w[pre + "1.DenseReluDense.wo.weight"].T
        blk += 1
    return rms_norm(h, w["encoder.final_layer_norm.weight"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--max-distance", type=int, default=128)
    ap.add_argument("-q", action="store_true")
    a = ap.parse_args()
    w = {k: np.asarray(v, dtype=np.float64) for k, v in st.load(a.weights).items()}
    inputs = st.load(a.inputs)
    if "tokens" not in inputs:
        raise SystemExit(f"t5_ref: {a.inputs} has no tensor 'tokens'")
    ids = np.asarray(inputs["tokens"], dtype=np.float64)
    if np.any(ids != np.floor(ids)) or ids.min() < 0:
        raise SystemExit("t5_ref: token ids must be non-negative whole numbers")
    h = t5_encoder(w, ids.astype(np.int64), a.heads, a.max_distance)
    st.save(a.out, {"hidden": h.astype(np.float32)})
    if not a.q:
        print(f"hidden: {list(h.shape)} std {h.std():.6g}")


if __name__ == "__main__":
    main()
