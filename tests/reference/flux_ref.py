#!/usr/bin/env python3
"""Independent NumPy reference of the FLUX.1 transformer forward pass (schnell and dev).

Written only from shared/reference/flux.md ("FLUX.1 transformer: the math, exactly").
Usage:
    python3 tests/reference/flux_ref.py --weights W.safetensors --inputs I.safetensors \
        --out O.safetensors [--axes 16,56,56] [--theta 10000] [--dtype bf16|f32] \
        [--temb-freqs torch|exact] [--dump D.safetensors] [-q]

Inputs file: img [B,N,Cin], img_ids [B,N,3], txt [B,T,Cctx], txt_ids [B,T,3],
timesteps [B], y [B,Cvec], and guidance [B] for dev (dev <=> weights contain guidance_in.*).
Output file: one F32 tensor `out` [B,N,Cout].

Every size is taken from the weight shapes; --axes gives RoPE axes_dim (sum = head dim),
--theta the RoPE theta.

Precision model. All arithmetic is float64; the values are rounded to the working dtype
(bf16 = round-to-nearest-even on the float32 bits, or float32) at the points where the
official bf16 torch run produces a bf16 tensor:
  * weights and floating inputs (img, txt, y, timesteps, guidance) on entry;
  * every Linear output (x.W^T + b accumulated in f64, rounded once);
  * every elementwise op of the block math: 1+scale, (1+scale)*LN, +shift, gate*branch,
    residual add, SiLU output, GELU output, the vec sums;
  * LayerNorm / RMSNorm: statistics in f64, normalised result rounded; RMSNorm then
    multiplied by its scale and rounded again;
  * timestep embedding: t' = 1000*t rounded, freqs/args/cos/sin in f32, result rounded
    (freqs step by step like torch unless --temb-freqs exact);
  * RoPE: tables and rotation in f32 (each product and sum rounded to f32), result rounded;
  * attention: logits q.k^T/sqrt(d) rounded to f32, softmax in f32, probabilities rounded
    to the working dtype, P.v accumulated in f64 and rounded once.
With --dtype f32 the same points round to float32 (bf16 points become float32 casts).
"""
import argparse
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402  (the shared safetensors reader/writer next to this file)

LN_EPS = 1e-6    # flux.md: LayerNorm eps 1e-6, no learned affine
RMS_EPS = 1e-6   # flux.md: RMSNorm x*rsqrt(mean(x^2)+1e-6)
TIME_FACTOR = 1000.0   # flux.md: t' = 1000*t
MAX_PERIOD = 10000.0   # flux.md: freqs_j = exp(-ln(10000)*j/half)


# --------------------------------------------------------------------------- precision
def f32(x):
    """Round to float32, return float64 (the f32 steps: RoPE, softmax, temb)."""
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


class Prec:
    """Working-dtype rounding: r(x) rounds to bf16 or float32 and returns float64."""

    def __init__(self, name):
        if name not in ("bf16", "f32"):
            raise ValueError("dtype must be bf16 or f32")
        self.name = name

    def r(self, x):
        if self.name == "bf16":
            return st.bf16_round(x).astype(np.float64)
        return f32(x)


# --------------------------------------------------------------------------- building blocks
def silu(P, x):
    # SiLU(x) = x*sigmoid(x); sigmoid via tanh (overflow-free). One rounding.
    return P.r(x * 0.5 * (1.0 + np.tanh(0.5 * x)))


def gelu_tanh(P, x):
    # GELU, tanh approximation: 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))). One rounding.
    return P.r(0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))))


def layer_norm(P, x):
    # LayerNorm over the last axis, no weight/bias, eps 1e-6 (biased variance, like torch).
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return P.r((x - mu) / np.sqrt(var + LN_EPS))


def rms_norm(P, x, scale):
    # QKNorm RMSNorm per head over d: x*rsqrt(mean(x^2)+1e-6) in high precision, cast back to
    # the working dtype, then multiplied by the learned scale [d] (and rounded again).
    # (q, k are then "cast to v's dtype": a no-op here, everything is in the working dtype.)
    rrms = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + RMS_EPS)
    return P.r(P.r(x * rrms) * scale)


def modulate(P, x, shift, scale):
    # (1 + scale) * LN(x) + shift, each elementwise op rounded like torch bf16 would.
    return P.r(P.r(P.r(1.0 + scale) * layer_norm(P, x)) + shift)


class Model:
    def __init__(self, weights_path, axes, theta, prec, temb_freqs="torch"):
        self.P = prec
        if temb_freqs not in ("torch", "exact"):
            raise ValueError("temb_freqs must be torch or exact")
        self.temb_freqs = temb_freqs
        self.W = st.SafeTensors(weights_path)
        keys = self.W.keys()
        self.dev = any(k.startswith("guidance_in.") for k in keys)  # dev <=> guidance_in.*
        self.D, self.Cin = self.W.shape("img_in.weight")              # Linear W is [out, in]
        self.Cout = self.W.shape("final_layer.linear.weight")[0]
        self.Cctx = self.W.shape("txt_in.weight")[1]
        self.Cvec = self.W.shape("vector_in.in_layer.weight")[1]
        self.temb_dim = self.W.shape("time_in.in_layer.weight")[1]
        self.n_double = self._count(keys, "double_blocks")
        self.n_single = self._count(keys, "single_blocks")
        if self.n_double:
            self.d = self.W.shape("double_blocks.0.img_attn.norm.query_norm.scale")[0]
            self.M = self.W.shape("double_blocks.0.img_mlp.0.weight")[0]
        else:
            self.d = self.W.shape("single_blocks.0.norm.query_norm.scale")[0]
            self.M = self.W.shape("single_blocks.0.linear1.weight")[0] - 3 * self.D
        if self.D % self.d:
            raise ValueError(f"hidden {self.D} not divisible by head dim {self.d}")
        self.H = self.D // self.d
        self.axes = list(axes)
        self.theta = float(theta)
        if sum(self.axes) != self.d or any(a % 2 for a in self.axes):
            raise ValueError(f"axes_dim {self.axes} must be even and sum to head dim {self.d}")
        self.dump = None  # dict of intermediates when requested

    @staticmethod
    def _count(keys, prefix):
        idx = {int(m.group(1)) for k in keys for m in [re.match(prefix + r"\.(\d+)\.", k)] if m}
        if idx and idx != set(range(len(idx))):
            raise ValueError(f"{prefix} indices are not 0..n-1: {sorted(idx)}")
        return len(idx)

    def describe(self):
        return (f"D={self.D} H={self.H} d={self.d} M={self.M} double={self.n_double} "
                f"single={self.n_single} Cin={self.Cin} Cout={self.Cout} Cctx={self.Cctx} "
                f"Cvec={self.Cvec} temb={self.temb_dim} axes={self.axes} theta={self.theta:g} "
                f"{'dev' if self.dev else 'schnell'} dtype={self.P.name} temb_freqs={self.temb_freqs}")

    def w(self, name):
        """A weight, rounded to the working dtype (the official run keeps weights in bf16)."""
        return self.P.r(self.W.get(name))

    def _save(self, name, x):
        if self.dump is not None:
            self.dump[name] = np.asarray(x, dtype=np.float32)

    # ----------------------------------------------------------------------- layers
    def linear(self, x, prefix):
        # Linear(in->out): x.W^T + b with W stored [out, in]; accumulated in f64, rounded once.
        y = x @ self.w(prefix + ".weight").T
        if prefix + ".bias" in self.W:
            y = y + self.w(prefix + ".bias")
        return self.P.r(y)

    def mlp_embedder(self, prefix, x):
        # MLPEmbedder: out_layer(SiLU(in_layer(x))).
        return self.linear(silu(self.P, self.linear(x, prefix + ".in_layer")), prefix + ".out_layer")

    def timestep_embedding(self, t):
        """t [B] (already in the working dtype) -> [B, temb_dim].

        flux.md: t' = 1000*t computed in t's dtype (bf16: 0.75 -> 752); freqs_j =
        exp(-ln(10000)*j/half), j < half, in f32; args = t'*freqs (f32);
        emb = [cos(args), sin(args)] -- cos first -- cast back to t's dtype.

        "In f32" is taken step by step, as torch evaluates
        exp(-math.log(10000) * arange(half, dtype=float32) / half): the constant -ln(10000)
        rounded to f32, times j rounded to f32, divided by half (exact for a power of two)
        rounded to f32, exp rounded to f32. This differs from the correctly rounded
        exp(-ln(1e4) j/half) by up to ~6e-7 relative, which at t' = 1000 moves args by up to
        ~6e-4 rad: enough to matter for f32 comparisons at 1e-6. --temb-freqs exact selects
        the correctly rounded f32 freqs instead."""
        P = self.P
        tp = P.r(TIME_FACTOR * t)
        half = self.temb_dim // 2
        j = np.arange(half, dtype=np.float64)
        if self.temb_freqs == "exact":
            freqs = f32(np.exp(-math.log(MAX_PERIOD) * j / half))
        else:  # "torch"
            freqs = f32(np.exp(f32(f32(f32(-math.log(MAX_PERIOD)) * j) / half)))
        args = f32(tp[:, None] * freqs[None, :])
        emb = np.concatenate([f32(np.cos(args)), f32(np.sin(args))], axis=-1)
        if self.temb_dim % 2:  # odd dims get a zero column (never the case for FLUX)
            emb = np.concatenate([emb, np.zeros_like(emb[:, :1])], axis=-1)
        return P.r(emb)

    def modulation(self, prefix, vec, n):
        # Modulation(vec) = lin(SiLU(vec)) broadcast over tokens, split on the last axis into
        # n chunks of D: (shift, scale, gate)[, (shift, scale, gate)].
        m = self.linear(silu(self.P, vec), prefix + ".lin")[:, None, :]   # [B,1,n*D]
        return [m[..., i * self.D:(i + 1) * self.D] for i in range(n)]

    # ----------------------------------------------------------------------- RoPE
    def rope_tables(self, ids):
        """ids [B,L,3] -> (cos, sin) [B,1,L,d/2] in f32.

        flux.md: axis i with dim_i: w_j = theta^(-2j/dim_i), j < dim_i/2, angle = pos_i*w_j;
        pairs of axis 0 first, then axis 1, axis 2 (8 + 28 + 28 = 64 pairs for FLUX).
        Computed in f32: w_j, angle, cos, sin each rounded to f32."""
        cos, sin = [], []
        for i, dim in enumerate(self.axes):
            j = np.arange(dim // 2, dtype=np.float64)
            omega = f32(self.theta ** (-2.0 * j / dim))
            ang = f32(f32(ids[..., i])[..., None] * omega)              # [B,L,dim/2]
            cos.append(f32(np.cos(ang)))
            sin.append(f32(np.sin(ang)))
        return (np.concatenate(cos, axis=-1)[:, None], np.concatenate(sin, axis=-1)[:, None])

    def apply_rope(self, x, pe):
        """x [B,H,L,d]. Pair j rotates ADJACENT channels (2j, 2j+1) (interleaved, not halves):
        out0 = cos*x0 - sin*x1, out1 = sin*x0 + cos*x1, in f32, then cast back."""
        cos, sin = pe
        x0, x1 = x[..., 0::2], x[..., 1::2]
        o0 = f32(f32(cos * x0) - f32(sin * x1))
        o1 = f32(f32(sin * x0) + f32(cos * x1))
        out = np.empty_like(x)
        out[..., 0::2] = o0
        out[..., 1::2] = o1
        return self.P.r(out)

    def split_heads(self, qkv):
        """qkv [B,L,3D] laid out [q | k | v], each D split head-major into H x d
        -> q, k, v each [B,H,L,d]."""
        B, L, _ = qkv.shape
        t = qkv.reshape(B, L, 3, self.H, self.d).transpose(2, 0, 3, 1, 4)
        return t[0], t[1], t[2]

    def attention(self, q, k, v, pe):
        """RoPE on q, k; softmax(q.k^T/sqrt(d)).v per head, no mask; heads merged head-major
        [B,H,L,d] -> [B,L,H*d]. Logits and softmax in f32."""
        P = self.P
        q = self.apply_rope(q, pe)
        k = self.apply_rope(k, pe)
        B, H, L, d = q.shape
        scale = 1.0 / math.sqrt(d)
        out = np.empty((B, H, L, d))
        for b in range(B):
            for h in range(H):
                logits = f32((q[b, h] @ k[b, h].T) * scale)                  # [L,L] f32
                e = np.exp(logits - logits.max(axis=-1, keepdims=True))
                p = P.r(f32(e / e.sum(axis=-1, keepdims=True)))             # f32 softmax, cast back
                out[b, h] = P.r(p @ v[b, h])
        return out.transpose(0, 2, 1, 3).reshape(B, L, H * d)

    # ----------------------------------------------------------------------- blocks
    def double_block(self, i, img, txt, vec, pe):
        P = self.P
        pre = f"double_blocks.{i}."
        mods = {}
        qkv = {}
        for s, x in (("img", img), ("txt", txt)):
            # 6*D modulation: mod1 = (shift, scale, gate), mod2 = (shift, scale, gate).
            mods[s] = self.modulation(pre + s + "_mod", vec, 6)
            shift1, scale1 = mods[s][0], mods[s][1]
            xm = modulate(P, x, shift1, scale1)
            q, k, v = self.split_heads(self.linear(xm, pre + s + "_attn.qkv"))
            q = rms_norm(P, q, self.w(pre + s + "_attn.norm.query_norm.scale"))
            k = rms_norm(P, k, self.w(pre + s + "_attn.norm.key_norm.scale"))
            qkv[s] = (q, k, v)
        # Concatenate along tokens, TEXT FIRST (matches ids = concat(txt_ids, img_ids)).
        q, k, v = (np.concatenate([qkv["txt"][j], qkv["img"][j]], axis=2) for j in range(3))
        a = self.attention(q, k, v, pe)
        T = txt.shape[1]
        attn = {"txt": a[:, :T], "img": a[:, T:]}
        out = {}
        for s, x in (("img", img), ("txt", txt)):
            shift1, scale1, gate1, shift2, scale2, gate2 = mods[s]
            x = P.r(x + P.r(gate1 * self.linear(attn[s], pre + s + "_attn.proj")))
            h = self.linear(modulate(P, x, shift2, scale2), pre + s + "_mlp.0")
            h = self.linear(gelu_tanh(P, h), pre + s + "_mlp.2")
            out[s] = P.r(x + P.r(gate2 * h))
        return out["img"], out["txt"]

    def single_block(self, i, x, vec, pe):
        P = self.P
        pre = f"single_blocks.{i}."
        shift, scale, gate = self.modulation(pre + "modulation", vec, 3)
        h = self.linear(modulate(P, x, shift, scale), pre + "linear1")      # [B,L,3D+M]
        qkv, mlp = h[..., :3 * self.D], h[..., 3 * self.D:]                  # qkv first
        q, k, v = self.split_heads(qkv)
        q = rms_norm(P, q, self.w(pre + "norm.query_norm.scale"))
        k = rms_norm(P, k, self.w(pre + "norm.key_norm.scale"))
        a = self.attention(q, k, v, pe)
        # linear2(concat(attn, GELU(mlp))) -- ATTENTION FIRST in the concat.
        o = self.linear(np.concatenate([a, gelu_tanh(P, mlp)], axis=-1), pre + "linear2")
        return P.r(x + P.r(gate * o))

    # ----------------------------------------------------------------------- forward
    def forward(self, img, img_ids, txt, txt_ids, timesteps, y, guidance=None):
        P = self.P
        B, N, Cin = img.shape
        T = txt.shape[1]
        checks = [(img.shape, (B, N, self.Cin), "img"), (img_ids.shape, (B, N, 3), "img_ids"),
                  (txt.shape, (B, T, self.Cctx), "txt"), (txt_ids.shape, (B, T, 3), "txt_ids"),
                  (timesteps.shape, (B,), "timesteps"), (y.shape, (B, self.Cvec), "y")]
        if self.dev:
            if guidance is None:
                raise ValueError("dev weights (guidance_in.*) need a `guidance` input")
            checks.append((guidance.shape, (B,), "guidance"))
        for got, want, name in checks:
            if tuple(got) != want:
                raise ValueError(f"input {name}: shape {tuple(got)}, expected {want}")

        # Activations enter in the working dtype; ids stay f32 (positions are small integers).
        img, txt, y, timesteps = P.r(img), P.r(txt), P.r(y), P.r(timesteps)
        img_ids, txt_ids = f32(img_ids), f32(txt_ids)

        # 1. input projections
        img = self.linear(img, "img_in")
        txt = self.linear(txt, "txt_in")
        # 2. vec = time_in(temb(t)) [+ guidance_in(temb(guidance))] + vector_in(y)
        vec = self.mlp_embedder("time_in", self.timestep_embedding(timesteps))
        if self.dev:
            g = P.r(guidance)
            vec = P.r(vec + self.mlp_embedder("guidance_in", self.timestep_embedding(g)))
        vec = P.r(vec + self.mlp_embedder("vector_in", y))
        self._save("vec", vec)
        # 3. pe from ids = concat(txt_ids, img_ids) -- TEXT FIRST
        pe = self.rope_tables(np.concatenate([txt_ids, img_ids], axis=1))
        self._save("pe_cos", pe[0][:, 0])
        self._save("pe_sin", pe[1][:, 0])
        self._save("img_in", img)
        self._save("txt_in", txt)
        # 4. double blocks
        for i in range(self.n_double):
            img, txt = self.double_block(i, img, txt, vec, pe)
            self._save(f"double_blocks.{i}.img", img)
            self._save(f"double_blocks.{i}.txt", txt)
        # 5. single blocks on x = concat(txt, img) -- TEXT FIRST
        x = np.concatenate([txt, img], axis=1)
        for i in range(self.n_single):
            x = self.single_block(i, x, vec, pe)
            self._save(f"single_blocks.{i}.x", x)
        # 6. final layer on the image tokens: (shift, scale) -- SHIFT FIRST
        img = x[:, T:]
        m = self.linear(silu(P, vec), "final_layer.adaLN_modulation.1")[:, None, :]
        shift, scale = m[..., :self.D], m[..., self.D:]
        return self.linear(modulate(P, img, shift, scale), "final_layer.linear")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True, help="transformer weights (.safetensors)")
    ap.add_argument("--inputs", required=True, help="img, img_ids, txt, txt_ids, timesteps, y[, guidance]")
    ap.add_argument("--out", required=True, help="output .safetensors; tensor `out` F32 [B,N,Cout]")
    ap.add_argument("--axes", default="16,56,56", help="RoPE axes_dim, comma separated (sum = head dim)")
    ap.add_argument("--theta", type=float, default=10000.0, help="RoPE theta")
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16", help="precision to emulate")
    ap.add_argument("--temb-freqs", choices=["torch", "exact"], default="torch",
                    help="time-embedding freqs in f32: 'torch' = step by step like the official "
                    "code (default), 'exact' = correctly rounded exp(-ln(1e4) j/half)")
    ap.add_argument("--dump", help="also write intermediates (vec, pe_cos, pe_sin, img_in, txt_in, "
                    "double_blocks.i.{img,txt}, single_blocks.i.x) as F32 safetensors here")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)

    axes = [int(s) for s in a.axes.split(",")]
    model = Model(a.weights, axes, a.theta, Prec(a.dtype), a.temb_freqs)
    if not a.quiet:
        print("flux_ref:", model.describe(), file=sys.stderr)
    inp = st.SafeTensors(a.inputs)
    need = ["img", "img_ids", "txt", "txt_ids", "timesteps", "y"] + (["guidance"] if model.dev else [])
    missing = [k for k in need if k not in inp]
    if missing:
        ap.error(f"inputs file lacks {missing}")
    t = {k: inp.get(k).astype(np.float64) for k in need}
    if a.dump:
        model.dump = {}
    out = model.forward(t["img"], t["img_ids"], t["txt"], t["txt_ids"], t["timesteps"], t["y"],
                        t.get("guidance"))
    st.save(a.out, {"out": out.astype(np.float32)})
    if a.dump:
        st.save(a.dump, model.dump)
    if not a.quiet:
        print(f"flux_ref: wrote out {list(out.shape)} to {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
