#!/usr/bin/env python3
"""float8_e4m3fn checkpoints for the fp8 tests (numpy only, written from the format).

e4m3fn: 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits; no infinities;
0x7f and 0xff are NaN; the largest value is 448. Encoding rounds to the nearest
value, ties to the even code, and saturates at 448 (as fluxcc's quantizer).

Usage:
    fp8_ref.py quant W.safetensors OUT.safetensors DEQ.safetensors [--scale row|tensor|none] [--marker] [--deq-dtype F32] [--every-code]
        every 2-D float tensor named *.weight -> F8_E4M3 (+ KEY.scale_weight: per row f32 [rows],
        per tensor f32 [] (ComfyUI), or none: scale 1); other tensors as they are. --every-code:
        the codes are every finite code in turn (0..126, 128..254: subnormals, both zeros, 448),
        from a different one in each tensor, so a vector load meets each code in each lane.
        DEQ: the same keys, dequantized values (f32 product q * scale) in the input's dtype (or --deq-dtype's).
    fp8_ref.py e5m2 W.safetensors OUT.safetensors DEQ.safetensors
        the same weights as F8_E5M2 (no scale).
    fp8_ref.py bad W8.safetensors DIR     corrupt copies of an F8 checkpoint, one problem each
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402

st._STORAGE.setdefault("F8_E4M3", np.dtype("u1"))
st._STORAGE.setdefault("F8_E5M2", np.dtype("u1"))


def e4m3_values():
    """float64 value of each code 0..255 (NaN for 0x7f, 0xff)."""
    c = np.arange(256)
    e, m = (c >> 3) & 15, c & 7
    v = np.where(e == 0, m * 2.0 ** -9, (1 + m / 8.0) * 2.0 ** (e - 7.0))
    v = np.where(c & 0x80, -v, v)
    v[(c & 0x7f) == 0x7f] = np.nan
    return v


E4M3 = e4m3_values()


def e4m3_encode(x):
    """float32 array -> uint8 codes: nearest (ties to the even code), saturating at 448."""
    return nearest_code(E4M3[:127], x, 448.0)   # codes 0..126, ascending


def nearest_code(vals, x, top=np.inf):
    """the code of the nearest of the ascending non-negative values vals to each |x| (capped
    at top; ties to the even code), with x's sign bit as 0x80"""
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    a = np.minimum(np.abs(x), top)
    n = len(vals) - 1
    hi = np.clip(np.searchsorted(vals, a), 0, n)
    lo = np.clip(hi - 1, 0, n)
    dlo, dhi = a - vals[lo], vals[hi] - a
    code = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def e5m2_encode(x):
    """float32 -> e5m2 codes by the value table (nearest, ties to even; saturating at 57344)."""
    c = np.arange(128)
    vals = np.array([float(np.frombuffer(struct.pack("<H", int(k) << 8), dtype="<f2")[0]) for k in c[:124]])  # up to 57344
    return nearest_code(vals, x)


def e5m2_values(q):
    return np.frombuffer((q.astype("<u2") << 8).tobytes(), dtype="<f2").astype(np.float64).reshape(q.shape)


def quantize_rows(w):
    """-> (codes, scale f32 [rows], dequantized f32): scale = absmax / 448 per row (1 for a zero row)."""
    w = np.asarray(w, dtype=np.float32)
    amax = np.max(np.abs(w), axis=1)
    scale = np.where(amax > 0, amax / np.float32(448), np.float32(1)).astype(np.float32)
    q = e4m3_encode(w / scale[:, None])
    return q, scale, dequant(q, scale[:, None])


def dequant(q, scale):
    return (E4M3[q].astype(np.float32) * np.asarray(scale, dtype=np.float32)).astype(np.float32)


def write(path, items):
    """items: (name, dtype, shape, bytes) in order."""
    header, off = {}, 0
    for name, dt, shape, data in items:
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(data)]}
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for it in items:
            f.write(it[3])


def is_linear(f, k):
    return k.endswith(".weight") and len(f.shape(k)) == 2 and f.dtype(k) in ("F32", "BF16", "F16")


def cmd_quant(src, out, deq, scale_kind="row", marker=False, deq_dtype=None, every=False):
    f = st.SafeTensors(src)
    items, deqd = [], {}
    finite = np.array([c for c in range(256) if c & 0x7F != 0x7F], dtype=np.uint8)
    for n, k in enumerate(f.keys()):
        if not is_linear(f, k):
            items.append((k, f.dtype(k), f.shape(k), f.raw(k).tobytes()))
            deqd[k] = (f.get(k), f.dtype(k))
            continue
        w = f.get(k).astype(np.float32)
        if scale_kind == "row":
            q, s, d = quantize_rows(w)
        elif scale_kind == "tensor":
            amax = np.float32(np.max(np.abs(w)))
            s = np.float32(amax / np.float32(448)) if amax > 0 else np.float32(1)
            q = e4m3_encode(w / s)
            d = dequant(q, s)
        else:
            q, s, d = e4m3_encode(w), None, dequant(e4m3_encode(w), np.float32(1))
        if every:
            i = np.arange(q.size)   # shifted by one each round: a code's lane moves (253 is odd)
            q = finite[(i + i // len(finite) + 37 * n) % len(finite)].reshape(q.shape)
            d = dequant(q, s[:, None] if s is not None and s.ndim else (1 if s is None else s))
        items.append((k, "F8_E4M3", w.shape, q.tobytes()))
        if s is not None:
            sk = k[: -len(".weight")] + ".scale_weight"
            s = np.asarray(s, dtype="<f4")
            items.append((sk, "F32", s.shape, s.tobytes()))
        deqd[k] = (d, f.dtype(k))
    if marker:
        items.append(("scaled_fp8", "F8_E4M3", (0,), b""))
    write(out, items)
    dtypes = {dt for _, dt in deqd.values() if dt in ("F32", "BF16", "F16")}
    st.save(deq, {k: v for k, (v, _) in deqd.items()}, dtype=deq_dtype or (dtypes.pop() if len(dtypes) == 1 else None))


def cmd_e5m2(src, out, deq):
    f = st.SafeTensors(src)
    items, deqd = [], {}
    for k in f.keys():
        if is_linear(f, k):
            q = e5m2_encode(f.get(k))
            items.append((k, "F8_E5M2", f.shape(k), q.tobytes()))
            deqd[k] = e5m2_values(q).astype(np.float32)
        else:
            items.append((k, f.dtype(k), f.shape(k), f.raw(k).tobytes()))
            deqd[k] = f.get(k)
    write(out, items)
    st.save(deq, deqd, dtype="F32")


def cmd_bad(src, d):
    """Corrupt copies of an F8 checkpoint: the first F8 tensor with a NaN code at element 5
    (0x7f, 0xff), with one byte missing (data_offsets one short), and a scale of the wrong shape."""
    f = st.SafeTensors(src)
    keys = f.keys()
    k8 = next(k for k in keys if f.dtype(k) == "F8_E4M3")
    os.makedirs(d, exist_ok=True)

    def items(change):
        return [change(k, (k, f.dtype(k), f.shape(k), f.raw(k).tobytes())) for k in keys]

    for name, code in (("nan7f", 0x7F), ("nanff", 0xFF)):
        def put(k, it, code=code):
            if k != k8:
                return it
            b = bytearray(it[3])
            b[5] = code
            return (k, it[1], it[2], bytes(b))
        write(f"{d}/{name}.safetensors", items(put))
    write(f"{d}/short.safetensors", items(lambda k, it: (k, it[1], it[2], it[3][:-1]) if k == k8 else it))
    sk = k8[: -len(".weight")] + ".scale_weight"
    rows = f.shape(k8)[0]
    bad_scale = np.ones(rows + 1, dtype="<f4")
    its = [it for it in items(lambda k, it: it) if it[0] != sk] + [(sk, "F32", (rows + 1,), bad_scale.tobytes())]
    write(f"{d}/scale-shape.safetensors", its)
    print(k8)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "quant" and len(a) >= 4:
        kind = a[a.index("--scale") + 1] if "--scale" in a else "row"
        cmd_quant(a[1], a[2], a[3], kind, "--marker" in a, a[a.index("--deq-dtype") + 1] if "--deq-dtype" in a else None,
                  "--every-code" in a)
    elif a and a[0] == "e5m2" and len(a) == 4:
        cmd_e5m2(a[1], a[2], a[3])
    elif a and a[0] == "bad" and len(a) == 3:
        cmd_bad(a[1], a[2])
    else:
        sys.exit(__doc__)
