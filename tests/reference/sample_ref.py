#!/usr/bin/env python3
"""Independent NumPy reference of FLUX.1's sampling loop (BFL's denoise with get_schedule).

Written from shared/reference/flux.md's sampling section: t = linspace(1, 0, steps + 1)
(float32), for dev shifted by t <- e^mu / (e^mu + (1/t - 1)) with mu linear in the image
tokens through (256, 0.5) and (4096, 1.15); then Euler steps img <- img + (t_next - t) *
model(img, ..., t), the model being flux_ref.py's forward.
Usage:
    python3 tests/reference/sample_ref.py --weights W.safetensors --inputs I.safetensors \
        --out O.safetensors --steps N [--guidance 3.5] [--axes 8,12,12] [--theta 10000] \
        [--dtype bf16|f32] [-q]

The inputs file's `img` is the noise; `timesteps` (and `guidance`) are replaced at every step
by t (and --guidance), rounded to the working dtype as the official code makes them (torch.full
in img's dtype). The Euler update runs in float32 with the product and the sum each rounded
to the working dtype (torch's tensor ops on a bf16 latent). Output: F32 `latents`, the final
img [B, tokens, channels].
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flux_ref  # noqa: E402
import st  # noqa: E402


def schedule(steps, tokens, shift):
    """get_schedule: float32 linspace (ATen's two halves), shifted for dev in float32."""
    points = steps + 1
    step = np.float32(-1.0) / np.float32(points - 1)
    t = [np.float32(1.0) + step * np.float32(i) if i < points // 2 else np.float32(0.0) - step * np.float32(points - i - 1)
         for i in range(points)]
    if shift:
        m = (1.15 - 0.5) / (4096 - 256)
        e = np.float32(np.exp(m * tokens + (0.5 - m * 256)))
        with np.errstate(divide="ignore"):
            t = [e / (e + (np.float32(1.0) / v - np.float32(1.0))) for v in t]
    return [float(np.float32(v)) for v in t]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--guidance", type=float, default=3.5)
    ap.add_argument("--axes", default="16,56,56")
    ap.add_argument("--theta", type=float, default=10000.0)
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("-q", action="store_true")
    a = ap.parse_args()
    prec = flux_ref.Prec(a.dtype)
    model = flux_ref.Model(a.weights, [int(s) for s in a.axes.split(",")], a.theta, prec)
    inp = st.SafeTensors(a.inputs)
    t_in = {k: inp.get(k).astype(np.float64) for k in ("img", "img_ids", "txt", "txt_ids", "y")}
    img = prec.r(t_in["img"])
    bsz = img.shape[0]
    ts = schedule(a.steps, img.shape[1], model.dev)
    g = prec.r(np.full(bsz, a.guidance)) if model.dev else None
    for k in range(a.steps):
        pred = model.forward(img, t_in["img_ids"], t_in["txt"], t_in["txt_ids"], prec.r(np.full(bsz, ts[k])), t_in["y"], g)
        h = np.float32(ts[k + 1] - ts[k])  # the python step as a float32 scalar
        img = prec.r(flux_ref.f32(img) + prec.r(flux_ref.f32(h * flux_ref.f32(pred))))
        if not a.q:
            print(f"step {k + 1}/{a.steps}: t {ts[k]:.4f} -> {ts[k + 1]:.4f}", file=sys.stderr)
    st.save(a.out, {"latents": img.astype(np.float32)})


if __name__ == "__main__":
    main()
