#!/usr/bin/env python3
"""fluxcc's ./flux against the official FLUX.1 model in PyTorch: eager and torch.compile.

Usage:
    python3 scripts/bench-torch.py --weights W.safetensors --inputs I.safetensors \\
        [--flux DIR/flux ...] [--bfl-src BFL/src] [--axes 16,56,56] [--theta 10000] \\
        [--runs 10] [--warmup 3] [--modes eager,default,max-autotune] [--device auto|cuda|cpu] \\
        [--ref REF.safetensors] [--save DIR]

The weights and inputs are the files that ./flux reads (`fluxcc init`, or the official
checkpoint: the DSL uses its key names). They are loaded into the official model class,
flux.model.Flux from Black Forest Labs' repository, taken from the environment (`pip
install -e .` of a clone) or from --bfl-src (the clone's src/ directory, or the clone
itself); this script never carries a copy of it. FluxParams come from the weight shapes;
axes_dim and theta, which no shape says, from --axes and --theta (flux-tiny: 8,12,12).

Every mode runs the same model on the same inputs: eager, then torch.compile with its default
mode and with mode="max-autotune". Each is timed after --warmup forwards (compilation happens
there) as the median of --runs forwards, with torch.cuda.Event on a GPU and time.perf_counter
on the CPU. --flux runs the compiled binary in this same script: `./flux --weights W --inputs
I --out O --bench N`, whose own timing is device events around each forward. All outputs are
compared with each other (relative L2: |a - b| / |b|, in float64), and with --ref (e.g. the
interpreter's `fluxcc run` output) when given. One table, then the provenance: device,
driver, torch, CUDA, the BFL code's location and commit, the binary's provenance.json.
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time


def die(msg, code=2):
    print(f"bench-torch: error: {msg}", file=sys.stderr)
    sys.exit(code)


def run_text(cmd, cwd=None):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def import_bfl(src):
    """flux.model.{Flux, FluxParams} from --bfl-src or the environment, and where it came from."""
    if src:
        src = os.path.abspath(src)
        if os.path.isdir(os.path.join(src, "src", "flux")):
            src = os.path.join(src, "src")
        if not os.path.isfile(os.path.join(src, "flux", "model.py")):
            die(f"--bfl-src {src}: no flux/model.py there (give the clone or its src/ directory)")
        sys.path.insert(0, src)
    try:
        from flux.model import Flux, FluxParams  # the official model code, never vendored here
    except ImportError as e:
        die(f"cannot import flux.model ({e}): install Black Forest Labs' flux package "
            "(git clone of black-forest-labs/flux; pip install -e .) or pass --bfl-src CLONE/src")
    import flux.model as fm
    where = os.path.dirname(os.path.dirname(os.path.abspath(fm.__file__)))
    commit = run_text(["git", "rev-parse", "--short=12", "HEAD"], cwd=where)
    return Flux, FluxParams, where + (f" (commit {commit})" if commit else "")


def load_safetensors(path, torch):
    """{name: tensor} on the CPU, with the safetensors package if installed, else by hand."""
    try:
        from safetensors.torch import load_file
        return load_file(path)
    except ImportError:
        pass
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
              "I64": torch.int64, "I32": torch.int32}
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        buf = bytearray(data[8 + n + a:8 + n + b])
        out[name] = torch.frombuffer(buf, dtype=dtypes[t["dtype"]]).reshape(t["shape"]) if b > a else \
            torch.zeros(t["shape"], dtype=dtypes[t["dtype"]])
    return out


def flux_params(FluxParams, w, axes, theta):
    """FluxParams from the weight shapes (as tests/reference/flux_ref.py reads them)."""
    def count(prefix):
        idx = {int(m.group(1)) for k in w for m in [re.match(prefix + r"\.(\d+)\.", k)] if m}
        return len(idx)
    hidden, cin = w["img_in.weight"].shape
    nd, ns = count("double_blocks"), count("single_blocks")
    if nd:
        head = w["double_blocks.0.img_attn.norm.query_norm.scale"].shape[0]
        mlp = w["double_blocks.0.img_mlp.0.weight"].shape[0]
    else:
        head = w["single_blocks.0.norm.query_norm.scale"].shape[0]
        mlp = w["single_blocks.0.linear1.weight"].shape[0] - 3 * hidden
    if sum(axes) != head:
        die(f"--axes {','.join(map(str, axes))} sums to {sum(axes)}, but the head dim is {head} "
            "(full FLUX.1: 16,56,56; flux-tiny: 8,12,12)")
    return FluxParams(
        in_channels=cin, out_channels=w["final_layer.linear.weight"].shape[0],
        vec_in_dim=w["vector_in.in_layer.weight"].shape[1], context_in_dim=w["txt_in.weight"].shape[1],
        hidden_size=hidden, mlp_ratio=mlp / hidden, num_heads=hidden // head, depth=nd, depth_single_blocks=ns,
        axes_dim=list(axes), theta=int(theta), qkv_bias=("double_blocks.0.img_attn.qkv.bias" in w) if nd else True,
        guidance_embed=any(k.startswith("guidance_in.") for k in w))


class Timer:
    """warm-up, then the median of n forwards: CUDA events on a GPU, perf_counter on the CPU"""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.type == "cuda"

    def run(self, fn, warmup, n):
        torch = self.torch
        t0 = time.perf_counter()
        out = None
        for _ in range(max(warmup, 1)):  # at least one: torch.compile compiles on the first call
            out = fn()
        if self.cuda:
            torch.cuda.synchronize()
        first_s = time.perf_counter() - t0
        ms = []
        for _ in range(n):
            if self.cuda:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                out = fn()
                b.record()
                b.synchronize()
                ms.append(a.elapsed_time(b))
            else:
                t = time.perf_counter()
                out = fn()
                ms.append(1e3 * (time.perf_counter() - t))
        return out, statistics.median(ms), min(ms), first_s


def run_flux(binary, weights, inputs, n, workdir):
    """./flux on the same files: its outputs and its --bench median and min (ms)"""
    out = os.path.join(workdir, "flux.out.safetensors")
    cmd = [binary, "--weights", weights, "--inputs", inputs, "--out", out, "--bench", str(n)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stdout}{p.stderr}")
    m = re.search(r"bench: +median ([0-9.]+) ms, min ([0-9.]+) ms", p.stdout)
    if not m:
        die(f"no bench line in the output of {binary}:\n{p.stdout}")
    return out, float(m.group(1)), float(m.group(2))


def flux_method(binary):
    """--opt METHOD of the compile that made binary (its provenance.json), else the folder's name"""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(binary)), "provenance.json")) as f:
            cmd = json.load(f).get("command", [])
        return cmd[cmd.index("--opt") + 1] + " ./flux"
    except (OSError, ValueError, IndexError, AttributeError):
        return os.path.basename(os.path.dirname(os.path.abspath(binary)))


def rel_l2(a, b):
    a, b = a.double().flatten(), b.double().flatten()
    d = (a - b).norm().item()
    r = b.norm().item()
    return d / r if r > 0 else d


def provenance(torch, device, bfl_where, binaries):
    lines = []
    if device.type == "cuda":
        lines.append(f"device:  {torch.cuda.get_device_name(device)} "
                     f"(sm_{''.join(map(str, torch.cuda.get_device_capability(device)))})")
        drv = run_text(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).splitlines()
        lines.append(f"driver:  {drv[0] if drv else 'unknown (no nvidia-smi)'}")
    else:
        cpu = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
        except OSError:
            pass
        lines.append(f"device:  CPU {cpu}, {os.cpu_count()} cores, {torch.get_num_threads()} torch threads")
        lines.append("driver:  none (CPU)")
    lines.append(f"torch:   {torch.__version__} (built with CUDA {torch.version.cuda or 'none'})"
                 + (f", cuDNN {torch.backends.cudnn.version()}" if device.type == "cuda" else "")
                 + f"; Python {platform.python_version()}")
    lines.append(f"model:   flux.model.Flux from {bfl_where}")
    for binary in binaries:
        prov = os.path.join(os.path.dirname(os.path.abspath(binary)), "provenance.json")
        try:
            with open(prov) as f:
                p = json.load(f)
            lines.append(f"fluxcc:  {binary}: commit {p.get('fluxcc_commit', '?')}, {' '.join(p.get('command', []))}")
        except (OSError, ValueError):
            lines.append(f"fluxcc:  {binary} (no provenance.json next to it)")
    lines.append(f"date:    {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True, help="transformer weights (.safetensors), official key names")
    ap.add_argument("--inputs", required=True, help="img, img_ids, txt, txt_ids, timesteps, y[, guidance]")
    ap.add_argument("--flux", action="append", default=[],
                    help="an emitted binary (DIR/flux or DIR), run with --bench on the same files; may be repeated "
                         "(e.g. the hc and beam builds, side by side)")
    ap.add_argument("--bfl-src", help="Black Forest Labs' flux clone (or its src/); default: the installed package")
    ap.add_argument("--axes", default="16,56,56", help="RoPE axes_dim (sum = head dim; flux-tiny: 8,12,12)")
    ap.add_argument("--theta", type=float, default=10000.0)
    ap.add_argument("--runs", type=int, default=10, help="timed forwards per mode (median)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed forwards first (torch.compile compiles there)")
    ap.add_argument("--modes", default="eager,default,max-autotune", help="eager and torch.compile modes")
    ap.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    ap.add_argument("--ref", help="also compare with this output file (tensor `out`), e.g. fluxcc run's")
    ap.add_argument("--save", help="write each mode's output to DIR/<mode>.safetensors")
    a = ap.parse_args(argv)
    if a.runs < 1 or a.warmup < 0:
        die("--runs must be at least 1 and --warmup at least 0")
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if m not in ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
            die(f"--modes: '{m}' is not eager or a torch.compile mode")
    binaries = [os.path.join(b, "flux") if os.path.isdir(b) else b for b in a.flux]
    for binary in binaries:
        if not os.access(binary, os.X_OK):
            die(f"--flux {binary}: not an executable (make -C DIR first)")

    try:
        import torch
    except ImportError:
        die("torch is not installed (pip install torch)")
    Flux, FluxParams, bfl_where = import_bfl(a.bfl_src)
    device = torch.device("cuda" if a.device == "cuda" or (a.device == "auto" and torch.cuda.is_available()) else "cpu")
    if device.type == "cuda" and not torch.cuda.is_available():
        die("--device cuda: torch sees no GPU")
    axes = [int(x) for x in a.axes.split(",")]

    w = load_safetensors(a.weights, torch)
    inp = load_safetensors(a.inputs, torch)
    params = flux_params(FluxParams, w, axes, a.theta)
    with torch.device("meta"):
        model = Flux(params)
    missing, unexpected = model.load_state_dict(w, strict=False, assign=True)
    if missing or unexpected:
        die(f"{a.weights} does not fit flux.model.Flux({params}): missing {missing[:5]}, unexpected {unexpected[:5]}")
    model = model.to(device).eval()
    dtype = w["img_in.weight"].dtype
    need = ["img", "img_ids", "txt", "txt_ids", "timesteps", "y"] + (["guidance"] if params.guidance_embed else [])
    for k in need:
        if k not in inp:
            die(f"{a.inputs}: no input '{k}'")
    args = {k: inp[k].to(device) for k in need}

    results = []  # (name, output on the CPU, median ms, min ms, note)
    timer = Timer(torch, device)
    with torch.inference_mode():
        for m in modes:
            fn = model if m == "eager" else torch.compile(model, mode=None if m == "default" else m)
            try:
                out, med, mn, first = timer.run(lambda: fn(**args), a.warmup, a.runs)
            except Exception as e:  # noqa: BLE001  (a mode that fails is a row that says so)
                results.append((f"torch {m}", None, None, None, f"failed: {type(e).__name__}: {str(e).splitlines()[0][:80]}"))
                continue
            note = f"first {max(a.warmup, 1)} forward(s) {first:.1f} s" + (" incl. compile" if m != "eager" else "")
            results.append((f"torch {m}" if m == "eager" else f"torch.compile {m}", out.float().cpu(), med, mn, note))
            if m != "eager":
                torch._dynamo.reset()  # each mode compiles from scratch
    with tempfile.TemporaryDirectory() as tmp:
        for binary in binaries:
            path, med, mn = run_flux(binary, a.weights, a.inputs, a.runs, tmp)
            results.append((f"fluxcc {flux_method(binary)}", load_safetensors(path, torch)["out"].float(), med, mn,
                            f"--bench {a.runs}: device events, after 1 warm-up"))
        if a.ref:
            results.append(("reference " + os.path.basename(a.ref), load_safetensors(a.ref, torch)["out"].float(), None, None,
                            "not timed"))
        if a.save:
            os.makedirs(a.save, exist_ok=True)
            from safetensors.torch import save_file
            for name, out, *_ in results:
                if out is not None:
                    save_file({"out": out.contiguous()}, os.path.join(a.save, name.split()[-1].replace("./", "") + ".safetensors"))

    ok = [r for r in results if r[1] is not None]
    timer_name = "torch.cuda.Event" if device.type == "cuda" else "time.perf_counter"
    shape = "x".join(map(str, args["img"].shape))
    print(f"FLUX.1 forward: {params.depth} double + {params.depth_single_blocks} single blocks, hidden "
          f"{params.hidden_size}, {params.num_heads} heads, img {shape}, txt {'x'.join(map(str, args['txt'].shape))}, "
          f"{str(dtype).replace('torch.', '')}; {a.runs} timed forwards after {a.warmup} warm-up ({timer_name})")
    names = [r[0] for r in ok]
    width = max(len(r[0]) for r in results)
    print(f"{'#':>2}  {'':{width}}  {'median ms':>10} {'min ms':>10}  " + " ".join(f"{'vs ' + str(i):>9}" for i in range(len(ok))))
    for r in results:
        name, out, med, mn, note = r
        cells = " ".join(f"{'-':>9}" for _ in ok)
        if out is not None:
            cells = " ".join(f"{rel_l2(out, o):9.2e}" if o.shape == out.shape else f"{'shape':>9}" for o in [x[1] for x in ok])
        t = f"{med:10.3f} {mn:10.3f}" if med is not None else f"{'-':>10} {'-':>10}"
        idx = f"{names.index(name)}" if name in names else "-"
        print(f"{idx:>2}  {name:{width}}  {t}  {cells}  {note}")
    print("(vs i: relative L2 distance |a - b| / |b| of the row's output a from output [i]'s b, in float64)")
    for line in provenance(torch, device, bfl_where, binaries):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
