#!/usr/bin/env python3
"""Independent NumPy reference of FLUX.1's autoencoder decoder (AutoEncoder.decode).

Written from the decoder's math (shared/reference/flux.md's decode step and the layer
definitions of the official autoencoder: GroupNorm(32, eps 1e-6), 3x3 and 1x1 convolutions,
ResNet blocks, one mid attention block, nearest x2 upsampling), not from fluxcc's DSL.
Usage:
    python3 tests/reference/vae_ref.py --weights W.safetensors --inputs I.safetensors \
        --out O.safetensors [--scale 0.3611] [--shift 0.1159] [-q]

Inputs file: z [B, Zc, h, w] (unpacked latents). Output file: one F32 tensor `image`
[B, 3, h*2^(levels-1), w*2^(levels-1)]. Every size comes from the weight shapes and key
names (decoder.up.<level>.block.<j>, decoder.up.<level>.upsample); extra keys (an encoder's)
are ignored. Arithmetic in float64 on the stored (F32) weights: the f32 model's own
rounding is below the 1e-5 relative L2 error the suite allows.
"""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def conv2d(x, w, b, pad):
    """x [B,C,H,W] * w [O,C,k,k] (cross-correlation, stride 1, zero padding) + b [O]."""
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = xp.shape[2] - k + 1, xp.shape[3] - k + 1
    out = np.zeros((x.shape[0], w.shape[0], ho, wo))
    for i in range(k):
        for j in range(k):
            out += np.einsum("bchw,oc->bohw", xp[:, :, i:i + ho, j:j + wo], w[:, :, i, j], optimize=True)
    return out + b[None, :, None, None]


def group_norm(x, w, b, groups=32, eps=1e-6):
    bsz, c = x.shape[:2]
    g = x.reshape(bsz, groups, -1)
    mu = g.mean(-1, keepdims=True)
    var = ((g - mu) ** 2).mean(-1, keepdims=True)  # biased, as torch
    y = ((g - mu) / np.sqrt(var + eps)).reshape(x.shape)
    return y * w[None, :, None, None] + b[None, :, None, None]


def swish(x):
    return x / (1.0 + np.exp(-x))


class Decoder:
    def __init__(self, weights):
        self.w = weights

    def p(self, key):
        if key not in self.w:
            raise SystemExit(f"vae_ref: missing weight {key}")
        return self.w[key]

    def conv(self, x, path):
        w = self.p(path + ".weight")
        return conv2d(x, w, self.p(path + ".bias"), w.shape[2] // 2)

    def norm(self, x, path):
        return group_norm(x, self.p(path + ".weight"), self.p(path + ".bias"))

    def resnet(self, x, path):
        h = self.conv(swish(self.norm(x, path + ".norm1")), path + ".conv1")
        h = self.conv(swish(self.norm(h, path + ".norm2")), path + ".conv2")
        if path + ".nin_shortcut.weight" in self.w:
            x = self.conv(x, path + ".nin_shortcut")
        return x + h

    def attn(self, x, path):
        bsz, c, hh, ww = x.shape
        h = self.norm(x, path + ".norm")
        q, k, v = (self.conv(h, path + "." + n).reshape(bsz, c, hh * ww).transpose(0, 2, 1) for n in "qkv")
        s = q @ k.transpose(0, 2, 1) / np.sqrt(c)
        s = np.exp(s - s.max(-1, keepdims=True))
        o = (s / s.sum(-1, keepdims=True)) @ v  # [B, n, c]
        o = o.transpose(0, 2, 1).reshape(x.shape)
        return x + self.conv(o, path + ".proj_out")

    def __call__(self, z, scale, shift):
        levels = sorted({int(m.group(1)) for k in self.w for m in [re.match(r"decoder\.up\.(\d+)\.", k)] if m})
        h = self.conv(z / scale + shift, "decoder.conv_in")
        h = self.resnet(h, "decoder.mid.block_1")
        h = self.attn(h, "decoder.mid.attn_1")
        h = self.resnet(h, "decoder.mid.block_2")
        for lv in reversed(levels):
            blocks = sorted({int(m.group(1)) for k in self.w
                             for m in [re.match(rf"decoder\.up\.{lv}\.block\.(\d+)\.", k)] if m})
            for j in blocks:
                h = self.resnet(h, f"decoder.up.{lv}.block.{j}")
            if f"decoder.up.{lv}.upsample.conv.weight" in self.w:
                h = h.repeat(2, axis=2).repeat(2, axis=3)  # nearest x2
                h = self.conv(h, f"decoder.up.{lv}.upsample.conv")
        h = self.conv(swish(self.norm(h, "decoder.norm_out")), "decoder.conv_out")
        return h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scale", type=float, default=0.3611)
    ap.add_argument("--shift", type=float, default=0.1159)
    ap.add_argument("-q", action="store_true")
    a = ap.parse_args()
    w = {k: np.asarray(v, dtype=np.float64) for k, v in st.load(a.weights).items() if k.startswith("decoder.")}
    inputs = st.load(a.inputs)
    if "z" not in inputs:
        raise SystemExit(f"vae_ref: {a.inputs} has no tensor 'z'")
    z = np.asarray(inputs["z"], dtype=np.float64)
    img = Decoder(w)(z, a.scale, a.shift)
    st.save(a.out, {"image": img.astype(np.float32)})
    if not a.q:
        print(f"image: {list(img.shape)} mean {img.mean():.6g} std {img.std():.6g}")


if __name__ == "__main__":
    main()
