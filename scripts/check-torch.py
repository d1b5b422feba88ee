#!/usr/bin/env python3
"""fluxcc's pipeline networks against the official PyTorch ones, on the same weights and inputs.

Usage:
    python3 scripts/check-torch.py vae --weights W.safetensors --inputs I.safetensors \\
        [--bfl-src BFL] [--scale 0.3611] [--shift 0.1159] [--tol 1e-5] OURS.safetensors...
    python3 scripts/check-torch.py clip --weights W.safetensors --inputs I.safetensors \\
        --heads H [--tol 1e-5] OURS.safetensors...
    python3 scripts/check-torch.py t5 --weights W.safetensors --inputs I.safetensors \\
        --heads H [--max-distance 128] [--tol 1e-5] OURS.safetensors...
    python3 scripts/check-torch.py sample --weights W.safetensors --inputs I.safetensors \\
        --steps N [--guidance 3.5] [--axes 8,12,12] [--theta 10000] [--bfl-src BFL] OURS.safetensors...

Each OURS file (fluxcc run's output, ./flux --out's) is compared output by output with the
official model's (relative L2 error |a - b| / |b| in float64, and max |a - b|); exit status 1
if any exceeds --tol, 2 on bad usage or input. Needs torch (and transformers for clip).

vae: builds flux.modules.autoencoder.Decoder from Black Forest Labs' repository (from the
environment, or --bfl-src: a clone or its src/ directory; never vendored here) with the
AutoEncoderParams the weight shapes say (ch, ch_mult, num_res_blocks, z_channels, out_ch),
loads the decoder.* tensors of W strictly (every key used, none missing), and runs
AutoEncoder.decode's math, z / scale_factor + shift_factor then the decoder, in float32 on
the CPU; the output is `image`.

clip: transformers' CLIPTextModel (eager attention, f32, CPU) with the config the weight
shapes say (vocabulary, positions, hidden, layers, MLP; heads from the DSL's --heads, which
no shape says) and eos_token_id 2 as openai/clip-vit-large-patch14's config has it (the
pooled output at the largest id); the text_model.* tensors loaded strictly; inputs `tokens`
(ids); outputs `hidden` (last_hidden_state) and `pooled` (pooler_output).

t5: transformers' T5EncoderModel (eager attention, f32, CPU) with a T5 v1.1 config from the
weight shapes (vocabulary, d_model, d_kv, d_ff, blocks, buckets; gated-gelu, eps 1e-6; heads
and the buckets' max distance from --heads and --max-distance); every tensor of W loaded
strictly (encoder.embed_tokens.weight is shared.weight's tied alias); inputs `tokens`; output
`hidden` (last_hidden_state).

sample: BFL's flux.sampling.denoise with get_schedule(steps, tokens, shift = the weights are
dev's) around flux.model.Flux (FluxParams from the weight shapes, as scripts/bench-torch.py
builds it; --axes and --theta, which no shape says), in the weights' dtype on the CPU; the
inputs file's img is the noise; output `latents`, the final img (./flux --steps N --out's).
"""
import argparse
import importlib.util
import os
import re
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import st  # noqa: E402


def die(msg):
    print(f"check-torch: error: {msg}", file=sys.stderr)
    sys.exit(2)


def load_strict(module, w, what, tied=()):
    """Loads {name: array} into module (float32); every key used, none missing but the tied aliases."""
    sd = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in w.items()}
    missing, unexpected = module.load_state_dict(sd, strict=False)
    missing = [k for k in missing if k not in tied]
    if missing or unexpected:
        die(f"weights do not fit {what}: missing {missing[:5]}, unexpected {unexpected[:5]}")


def input_tensor(a, name):
    """The inputs file's tensor `name`, as a torch tensor (float32)."""
    inputs = st.load(a.inputs)
    if name not in inputs:
        die(f"{a.inputs} has no tensor '{name}'")
    return torch.from_numpy(np.ascontiguousarray(inputs[name], dtype=np.float32))


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


def timed(a, forward):
    """a.runs more eager forwards, timed (wall clock), after the one that made the reference
    (the warm-up): the description's "; eager forward median ..." or """""
    times = []
    with torch.no_grad():
        for _ in range(a.runs):
            t0 = time.perf_counter()
            forward()
            times.append((time.perf_counter() - t0) * 1e3)
    if not times:
        return ""
    return f"; eager forward median {statistics.median(times):.1f} ms of {a.runs} ({torch.get_num_threads()} threads)"


def run_vae(a):
    """-> ({name: array}, description) of BFL's decode."""
    mod, where = load_autoencoder_module(a.bfl_src)
    w = {k: v for k, v in st.load(a.weights).items() if k.startswith("decoder.")}
    p = params_from_weights(w)
    dec = mod.Decoder(**p)
    load_strict(dec, {k[len("decoder."):]: v for k, v in w.items()}, f"BFL's Decoder{p}")
    z = input_tensor(a, "z")
    with torch.no_grad():
        ref = dec(z / a.scale + a.shift).double().numpy()  # AutoEncoder.decode
    what = f"BFL Decoder({', '.join(f'{k}={v}' for k, v in p.items())}) from {where}"
    return {"image": ref}, what + timed(a, lambda: dec(z / a.scale + a.shift))


def run_clip(a):
    """-> ({name: array}, description) of transformers' CLIPTextModel."""
    try:
        import transformers
        from transformers import CLIPTextConfig, CLIPTextModel
    except ImportError:
        die("transformers is not installed (pip install transformers)")
    pre = "text_model."
    w = {k[len(pre):]: v for k, v in st.load(a.weights).items() if k.startswith(pre)}
    need = ["embeddings.token_embedding.weight", "embeddings.position_embedding.weight", "encoder.layers.0.mlp.fc1.weight"]
    if any(k not in w for k in need):
        die("the weights hold no CLIP text model (text_model.embeddings.*, text_model.encoder.layers.N.*)")
    vocab, d = w["embeddings.token_embedding.weight"].shape
    layers = len({k.split(".")[2] for k in w if k.startswith("encoder.layers.")})
    cfg = CLIPTextConfig(vocab_size=vocab, hidden_size=d, intermediate_size=w["encoder.layers.0.mlp.fc1.weight"].shape[0],
                         num_hidden_layers=layers, num_attention_heads=a.heads,
                         max_position_embeddings=w["embeddings.position_embedding.weight"].shape[0],
                         hidden_act="quick_gelu", layer_norm_eps=1e-5, eos_token_id=2, bos_token_id=vocab - 2,
                         pad_token_id=vocab - 1)
    cfg._attn_implementation = "eager"
    m = CLIPTextModel(cfg).eval()
    load_strict(m, w, "CLIPTextModel")
    ids = input_tensor(a, "tokens").long()
    with torch.no_grad():
        out = m(input_ids=ids)
    return ({"hidden": out.last_hidden_state.double().numpy(), "pooled": out.pooler_output.double().numpy()},
            f"transformers {transformers.__version__} CLIPTextModel(vocab {vocab}, hidden {d}, {layers} layers, {a.heads} heads)"
            + timed(a, lambda: m(input_ids=ids)))


def run_t5(a):
    """-> ({name: array}, description) of transformers' T5EncoderModel."""
    try:
        import transformers
        from transformers import T5Config, T5EncoderModel
    except ImportError:
        die("transformers is not installed (pip install transformers)")
    w = st.load(a.weights)
    need = ["shared.weight", "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
            "encoder.block.0.layer.0.SelfAttention.q.weight", "encoder.block.0.layer.1.DenseReluDense.wi_0.weight"]
    if any(k not in w for k in need):
        die("the weights hold no T5 encoder (shared.weight, encoder.block.N.layer.M.*)")
    vocab, d = w["shared.weight"].shape
    inner = w["encoder.block.0.layer.0.SelfAttention.q.weight"].shape[0]
    blocks = len({k.split(".")[2] for k in w if k.startswith("encoder.block.")})
    cfg = T5Config(vocab_size=vocab, d_model=d, d_kv=inner // a.heads, num_heads=a.heads,
                   d_ff=w["encoder.block.0.layer.1.DenseReluDense.wi_0.weight"].shape[0], num_layers=blocks,
                   relative_attention_num_buckets=w[need[1]].shape[0], relative_attention_max_distance=a.max_distance,
                   feed_forward_proj="gated-gelu", layer_norm_epsilon=1e-6, dropout_rate=0.0, tie_word_embeddings=False)
    cfg._attn_implementation = "eager"
    m = T5EncoderModel(cfg).eval()
    load_strict(m, w, "T5EncoderModel", tied=("encoder.embed_tokens.weight",))  # shared.weight's alias
    m.encoder.embed_tokens.weight = m.shared.weight
    ids = input_tensor(a, "tokens").long()
    with torch.no_grad():
        out = m(input_ids=ids)
    return ({"hidden": out.last_hidden_state.double().numpy()},
            f"transformers {transformers.__version__} T5EncoderModel(vocab {vocab}, d_model {d}, {blocks} blocks, {a.heads} heads)"
            + timed(a, lambda: m(input_ids=ids)))


def run_sample(a):
    """-> ({name: array}, description) of BFL's denoise loop."""
    spec = importlib.util.spec_from_file_location("bench_torch", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-torch.py"))
    bt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bt)
    Flux, FluxParams, where = bt.import_bfl(a.bfl_src)
    from flux.sampling import denoise, get_schedule
    w = bt.load_safetensors(a.weights, torch)
    params = bt.flux_params(FluxParams, w, [int(x) for x in a.axes.split(",")], a.theta)
    dt = w["img_in.weight"].dtype
    with torch.device("meta"):
        model = Flux(params)
    model.load_state_dict(w, strict=True, assign=True)
    model = model.to(dt).eval()
    x = bt.load_safetensors(a.inputs, torch)
    img = x["img"].to(dt)
    ts = get_schedule(a.steps, img.shape[1], shift=params.guidance_embed)
    args = (img, x["img_ids"].float(), x["txt"].to(dt), x["txt_ids"].float(), x["y"].to(dt), ts)
    with torch.no_grad():
        out = denoise(model, *args, guidance=a.guidance)
    return ({"latents": out.double().numpy()},
            f"BFL denoise ({a.steps} steps, {'shifted' if params.guidance_embed else 'linear'} schedule) around Flux from {where}, {dt}"
            + timed(a, lambda: denoise(model, *args, guidance=a.guidance)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("net", choices=["vae", "clip", "t5", "sample"])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--bfl-src", help="vae: BFL's flux clone or its src/")
    ap.add_argument("--scale", type=float, default=0.3611, help="vae: the latents' scale_factor")
    ap.add_argument("--shift", type=float, default=0.1159, help="vae: the latents' shift_factor")
    ap.add_argument("--heads", type=int, default=12, help="clip, t5: attention heads")
    ap.add_argument("--max-distance", type=int, default=128, help="t5: the relative buckets' max distance")
    ap.add_argument("--steps", type=int, default=4, help="sample: Euler steps")
    ap.add_argument("--guidance", type=float, default=3.5, help="sample: guidance (dev)")
    ap.add_argument("--axes", default="8,12,12", help="sample: RoPE axes_dim (flux-tiny: 8,12,12)")
    ap.add_argument("--theta", type=float, default=10000.0, help="sample: RoPE theta")
    ap.add_argument("--runs", type=int, default=0, help="also time this many eager forwards (sample: whole denoise loops; median, wall clock)")
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("ours", nargs="*")
    a = ap.parse_intermixed_args()
    refs, what = {"vae": run_vae, "clip": run_clip, "t5": run_t5, "sample": run_sample}[a.net](a)
    print(f"{what}; torch {torch.__version__}, CPU")
    worst = 0.0
    for path in a.ours:
        t = st.load(path)
        for name, ref in refs.items():
            if name not in t:
                die(f"{path} has no tensor '{name}'")
            o = np.asarray(t[name], dtype=np.float64)
            if o.shape != ref.shape:
                die(f"{path}: {name} is {list(o.shape)}, torch's {list(ref.shape)}")
            rel = float(np.linalg.norm(o - ref) / np.linalg.norm(ref))
            worst = max(worst, rel)
            print(f"{path} {name}: rel_l2 {rel:.3e} max_abs {float(np.abs(o - ref).max()):.3e} {'ok' if rel <= a.tol else 'FAIL'}")
    sys.exit(1 if worst > a.tol else 0)


if __name__ == "__main__":
    main()
