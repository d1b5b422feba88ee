#!/usr/bin/env python3
"""fluxcc's VAE decoder against the official one: BFL's AutoEncoder decode in PyTorch.

Usage:
    python3 scripts/check-vae-torch.py --weights W.safetensors --inputs I.safetensors \\
        [--bfl-src BFL] [--scale 0.3611] [--shift 0.1159] [--tol 1e-5] OURS.safetensors...

Builds flux.modules.autoencoder.Decoder from Black Forest Labs' repository (from the
environment, or --bfl-src: a clone or its src/ directory; never vendored here) with the
AutoEncoderParams the weight shapes say (ch, ch_mult, num_res_blocks, z_channels, out_ch),
loads the decoder.* tensors of W strictly (every key used, none missing), and runs
AutoEncoder.decode's math, z / scale_factor + shift_factor then the decoder, in float32 on
the CPU. Each OURS file (fluxcc run's output, ./flux --out's) must hold `image` of the
same shape; prints its relative L2 error against torch's (|a - b| / |b|, float64). Exit
status 1 if any exceeds --tol, 2 on bad usage or input.
"""
import argparse
import importlib.util
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import st  # noqa: E402


def die(msg):
    print(f"check-vae-torch: error: {msg}", file=sys.stderr)
    sys.exit(2)


def load_autoencoder_module(src):
    """flux.modules.autoencoder from --bfl-src or the environment."""
    if src:
        src = os.path.abspath(src)
        if os.path.isdir(os.path.join(src, "src", "flux")):
            src = os.path.join(src, "src")
        path = os.path.join(src, "flux", "modules", "autoencoder.py")
        if not os.path.isfile(path):
            die(f"--bfl-src {src}: no flux/modules/autoencoder.py there")
        spec = importlib.util.spec_from_file_location("bfl_autoencoder", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # the module needs only torch and einops
        return mod, path
    try:
        import flux.modules.autoencoder as mod
    except ImportError:
        die("BFL's flux package is not importable: pip install -e a clone of "
            "github.com/black-forest-labs/flux, or give --bfl-src")
    return mod, mod.__file__


def params_from_weights(w):
    """Decoder arguments from the decoder.* shapes and key names."""
    levels = sorted({int(m.group(1)) for k in w for m in [re.match(r"decoder\.up\.(\d+)\.", k)] if m})
    if not levels or "decoder.conv_in.weight" not in w or "decoder.conv_out.weight" not in w:
        die("the weights hold no FLUX autoencoder decoder (decoder.conv_in, decoder.up.N, decoder.conv_out)")
    blocks = {int(m.group(1)) for k in w for m in [re.match(r"decoder\.up\.0\.block\.(\d+)\.", k)] if m}
    outs = [w[f"decoder.up.{lv}.block.0.conv2.weight"].shape[0] for lv in levels]
    ch = outs[0]
    return dict(ch=ch, out_ch=w["decoder.conv_out.weight"].shape[0], ch_mult=[o // ch for o in outs],
                num_res_blocks=len(blocks) - 1, in_channels=3, resolution=256,
                z_channels=w["decoder.conv_in.weight"].shape[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--bfl-src")
    ap.add_argument("--scale", type=float, default=0.3611)
    ap.add_argument("--shift", type=float, default=0.1159)
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("ours", nargs="+")
    a = ap.parse_args()
    mod, where = load_autoencoder_module(a.bfl_src)
    w = {k: v for k, v in st.load(a.weights).items() if k.startswith("decoder.")}
    p = params_from_weights(w)
    dec = mod.Decoder(**p)
    sd = {k[len("decoder."):]: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in w.items()}
    missing, unexpected = dec.load_state_dict(sd, strict=False)
    if missing or unexpected:
        die(f"weights do not fit BFL's Decoder{p}: missing {missing[:5]}, unexpected {unexpected[:5]}")
    inputs = st.load(a.inputs)
    if "z" not in inputs:
        die(f"{a.inputs} has no tensor 'z'")
    z = torch.from_numpy(np.ascontiguousarray(inputs["z"], dtype=np.float32))
    with torch.no_grad():
        ref = dec(z / a.scale + a.shift).double().numpy()  # AutoEncoder.decode
    print(f"BFL Decoder({', '.join(f'{k}={v}' for k, v in p.items())}) from {where}; torch {torch.__version__}, f32, CPU")
    print(f"torch image: {list(ref.shape)} mean {ref.mean():.6g} std {ref.std():.6g}")
    worst = 0.0
    for path in a.ours:
        t = st.load(path)
        if "image" not in t:
            die(f"{path} has no tensor 'image'")
        o = np.asarray(t["image"], dtype=np.float64)
        if o.shape != ref.shape:
            die(f"{path}: image is {list(o.shape)}, torch's {list(ref.shape)}")
        rel = float(np.linalg.norm(o - ref) / np.linalg.norm(ref))
        worst = max(worst, rel)
        print(f"{path}: rel_l2 {rel:.3e} max_abs {float(np.abs(o - ref).max()):.3e} {'ok' if rel <= a.tol else 'FAIL'}")
    sys.exit(1 if worst > a.tol else 0)


if __name__ == "__main__":
    main()
