#!/usr/bin/env python3
"""tests/opt/conv-stride.fdsl in NumPy (float64; the bf16 branch rounded to bf16 where
the model rounds): an independent check of conv2d's windows, strides and padding.

    python3 tests/reference/conv_ref.py WEIGHTS INPUTS OUT

OUT holds every output in F32 (bf: bf16 values).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def bf16(a):
    return st.bf16_round(a).astype(np.float64)


def conv2d(x, w, b, pad, stride):
    """x [B,C,H,W] * w [O,C,k,k] (cross-correlation, zero padding) + b [O]."""
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (xp.shape[2] - k) // stride + 1, (xp.shape[3] - k) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], ho, wo))
    for i in range(k):
        for j in range(k):
            win = xp[:, :, i:i + stride * (ho - 1) + 1:stride, j:j + stride * (wo - 1) + 1:stride]
            out += np.einsum("bchw,oc->bohw", win, w[:, :, i, j])
    return out + b[None, :, None, None]


def main():
    w = {k: v.astype(np.float64) for k, v in st.load(sys.argv[1]).items()}
    x = st.load(sys.argv[2])["x"].astype(np.float64)
    c = lambda v, p, pad, s: conv2d(v, w[p + ".weight"], w[p + ".bias"], pad, s)
    silu = x / (1 + np.exp(-x))
    f32 = lambda a: a.astype(np.float32)
    out = {"s2": f32(c(x, "s2", 1, 2)), "k2s2": f32(c(x, "k2s2", 0, 2)), "k1s2": f32(c(x, "k1s2", 0, 2)),
           "k5": f32(c(f32(silu).astype(np.float64), "k5", 2, 1))}
    h = bf16(c(bf16(x), "bf1", 1, 1))    # the bf16 weights load exactly; products and sums in float64
    out["bf"] = f32(bf16(c(h, "bf2", 1, 2)))
    st.save(sys.argv[3], out)


main()
