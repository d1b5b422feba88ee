#!/usr/bin/env python3
"""A fluxcc pipeline's image against the official pipeline's, stage by stage, on the same
weights, tokens and noise, with each stage's time side by side.

Usage:
    python3 scripts/check-pipeline.py [--dir examples/pipeline-mid] [--opt hc] [--seed 1]
        [--wseed 7] [--rounds 3] [--bfl-src ../flux] [--keep DIR]

The folder holds t5.fdsl, clip.fdsl, flux.fdsl and vae.fdsl (as examples/pipeline-mid/). fluxcc
compiles them into one pipeline (OpenCL on PoCL) and writes each program's seeded weights into a
checkpoint folder of the Hugging Face layout (`fluxcc init --seed WSEED`, where each model's
checkpoint() puts them); the binary runs from it with --seed SEED: random token ids and noise,
as `fluxcc init --seed SEED` makes them, so the official side gets the same ones. The official
pipeline: transformers' T5EncoderModel and CLIPTextModel on those tokens, BFL's denoise
(get_schedule, the Euler loop) around BFL's Flux from that noise, BFL's unpack and its autoencoder's
Decoder (z / scale + shift), the pixels as BFL's code makes them (clamp, 127.5 (x + 1), a byte).

Prints each stage's agreement (relative L2 of its output, the binary's --stages files against
torch's) and the images' PSNR, then a table of each stage's time: fluxcc's compute (the binary's
`forward:`/`sampled:` lines, wall clock) against torch eager's (wall clock, the same work), medians
over ROUNDS rounds interleaved (a whole run of the binary, then each torch stage), min-max in
parentheses. Exit status 1 if the PSNR is below --psnr (default 40 dB). Needs torch, transformers
and BFL's code (github.com/black-forest-labs/flux, never vendored here).
"""
import argparse
import importlib.util
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import st  # noqa: E402
from png_check import read_png  # noqa: E402

STAGES = ["t5", "clip", "transformer", "vae"]
FILES = {"t5": "t5.fdsl", "clip": "clip.fdsl", "transformer": "flux.fdsl", "vae": "vae.fdsl"}


def die(msg):
    print(f"check-pipeline: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        die(f"{' '.join(cmd)} failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


def load_check_torch():
    spec = importlib.util.spec_from_file_location("check_torch", os.path.join(HERE, "check-torch.py"))
    ct = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ct)
    return ct


def checkpoint_path(fdsl):
    """where the model's checkpoint() puts its weights in a model folder"""
    text = open(fdsl).read()
    for inc in re.findall(r'include "([^"]+)"', text):
        text += open(os.path.join(os.path.dirname(fdsl), inc)).read()
    m = re.search(r'checkpoint\("([^"]+)"', text)
    if not m:
        die(f"{fdsl} has no checkpoint(\"...\"): the binary could not find its weights in a model folder")
    return m.group(1)


def pixels(image):
    """BFL's uint8 pixels from a [1, C, H, W] image: clamp, 127.5 (x + 1) in float32, truncated"""
    x = np.clip(np.asarray(image, np.float32)[0], -1, 1)
    return (np.float32(127.5) * (x + np.float32(1))).astype(np.uint8).transpose(1, 2, 0)


def psnr(a, b):
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def med_range(v):
    return f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=os.path.join(ROOT, "examples", "pipeline-mid"))
    ap.add_argument("--opt", default="hc")
    ap.add_argument("--seed", type=int, default=1, help="tokens and noise")
    ap.add_argument("--wseed", type=int, default=7, help="the weights")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bfl-src", default=os.environ.get("BFL_SRC", os.path.join(ROOT, "..", "flux")))
    ap.add_argument("--psnr", type=float, default=40.0)
    ap.add_argument("--axes", default="16,56,56", help="the transformer's RoPE axes (no weight's shape says them)")
    ap.add_argument("--keep", help="work in this folder and keep it (default: a temporary one)")
    a = ap.parse_args()
    import torch
    ct = load_check_torch()
    fluxcc = os.path.join(ROOT, "fluxcc")
    w = a.keep or tempfile.mkdtemp(prefix="check-pipeline-")
    os.makedirs(w, exist_ok=True)
    try:
        fd = {s: os.path.join(a.dir, FILES[s]) for s in STAGES}
        proj, md, stages = os.path.join(w, "proj"), os.path.join(w, "model"), os.path.join(w, "stages")
        run([fluxcc, "pipeline", "--t5", fd["t5"], "--clip", fd["clip"], "--transformer", fd["transformer"], "--vae", fd["vae"],
             "--opt", a.opt, "--target", "opencl", "--quiet", "-o", proj])
        run(["make", "-s", "-C", proj])
        # the weights in a model folder (as FLUX.1's repositories lay them out), the inputs as the binary makes them
        wts, ins = {}, {}
        for s in STAGES:
            wts[s] = os.path.join(md, checkpoint_path(fd[s]))
            os.makedirs(os.path.dirname(wts[s]), exist_ok=True)
            ins[s] = os.path.join(w, f"{s}.inputs")
            iw = os.path.join(w, f"{s}.unused")
            run([fluxcc, "init", fd[s], "--seed", str(a.wseed), "--weights", wts[s], "--inputs", iw, "--quiet"])
            run([fluxcc, "init", fd[s], "--seed", str(a.seed), "--weights", iw, "--inputs", ins[s], "--quiet"])
            os.remove(iw)
        # fluxcc: the binary, ROUNDS times (PoCL's first build of each kernel is cached by the warm-up run)
        cmd = [os.path.join(proj, "flux"), "--model-dir", md, "--seed", str(a.seed), "-o", os.path.join(w, "fluxcc.png"),
               "--stages", stages]
        run(cmd)
        ours = {s: [] for s in STAGES}
        theirs = {s: [] for s in STAGES}
        outs = {}
        for r in range(a.rounds):
            log = run(cmd)
            times = [float(x) for x in re.findall(r"^(?:forward|sampled): .*?([0-9.]+) ms", log, re.M)]
            if len(times) != len(STAGES):
                die(f"the binary's log has {len(times)} forward/sampled lines, not {len(STAGES)}:\n{log}")
            for s, t in zip(STAGES, times):
                ours[s].append(t)
            # torch, stage by stage, each fed the previous official stage's output
            ns = argparse.Namespace(bfl_src=a.bfl_src, runs=1, max_distance=128, scale=0.3611, shift=0.1159, steps=4,
                                    guidance=3.5, theta=10000.0, tol=1.0)
            ns.weights, ns.inputs, ns.heads = wts["t5"], ins["t5"], 64
            o, what = ct.run_t5(ns)
            outs["t5"], theirs["t5"] = o["hidden"], theirs["t5"] + [float(re.search(r"median ([0-9.]+) ms", what).group(1))]
            ns.weights, ns.inputs, ns.heads = wts["clip"], ins["clip"], 12
            o, what = ct.run_clip(ns)
            outs["clip"], theirs["clip"] = o["pooled"], theirs["clip"] + [float(re.search(r"median ([0-9.]+) ms", what).group(1))]
            x = st.load(ins["transformer"])
            x["txt"], x["y"] = outs["t5"].astype(np.float32), outs["clip"].astype(np.float32)
            st.save(os.path.join(w, "sample.inputs"), x)
            ns.weights, ns.inputs, ns.axes = wts["transformer"], os.path.join(w, "sample.inputs"), a.axes
            o, what = ct.run_sample(ns)
            outs["transformer"] = o["latents"]
            theirs["transformer"].append(float(re.search(r"median ([0-9.]+) ms", what).group(1)))
            # BFL's unpack: b (h w) (c ph pw) -> b c (h ph) (w pw)
            lat = outs["transformer"]
            vae_in = st.load(ins["vae"])["latents"]
            n, c4 = vae_in.shape[1], vae_in.shape[2]
            gh = gw = int(round(math.sqrt(n)))
            z = lat.reshape(1, gh, gw, c4 // 4, 2, 2).transpose(0, 3, 1, 4, 2, 5).reshape(1, c4 // 4, gh * 2, gw * 2)
            st.save(os.path.join(w, "vae.z"), {"z": z.astype(np.float32)})
            ns.weights, ns.inputs = wts["vae"], os.path.join(w, "vae.z")
            o, what = ct.run_vae(ns)
            outs["vae"] = o["image"]
            theirs["vae"].append(float(re.search(r"median ([0-9.]+) ms", what).group(1)))
        names = {"t5": "hidden", "clip": "pooled", "transformer": "latents", "vae": "image"}
        print(f"check-pipeline: {a.dir}, fluxcc --opt {a.opt} (OpenCL, PoCL) against torch {torch.__version__} eager "
              f"({torch.get_num_threads()} threads); weights seed {a.wseed}, tokens and noise seed {a.seed}")
        for s in STAGES:
            mine = st.load(os.path.join(stages, f"{s}.safetensors"))[names[s]]
            print(f"  {s} {names[s]}: rel_l2 {rel(mine, outs[s]):.3e} against the official stage's")
        p_ours, p_theirs = read_png(os.path.join(w, "fluxcc.png")), pixels(outs["vae"])
        q = psnr(p_ours, p_theirs)
        diff = int(np.abs(p_ours.astype(int) - p_theirs.astype(int)).max())
        print(f"  image: PSNR {q:.1f} dB ({p_ours.shape[1]}x{p_ours.shape[0]}; pixels equal: "
              f"{float(np.mean(p_ours == p_theirs)) * 100:.2f}%, largest difference {diff})")
        print()
        print("| stage | fluxcc ms | torch eager ms | speed (torch / fluxcc) |")
        print("|---|---|---|---|")
        for s in STAGES:
            print(f"| {s} | {med_range(ours[s])} | {med_range(theirs[s])} | {statistics.median(theirs[s]) / statistics.median(ours[s]):.2f} |")
        tot_o = [sum(ours[s][r] for s in STAGES) for r in range(a.rounds)]
        tot_t = [sum(theirs[s][r] for s in STAGES) for r in range(a.rounds)]
        print(f"| the image (stages summed) | {med_range(tot_o)} | {med_range(tot_t)} | {statistics.median(tot_t) / statistics.median(tot_o):.2f} |")
        print(f"\n(medians of {a.rounds} rounds, min-max in parentheses; compute only, wall clock: the binary's forward/sampled "
              "lines and torch's timed call, neither loading weights nor building kernels)")
        return 0 if q >= a.psnr else 1
    finally:
        if not a.keep:
            shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
