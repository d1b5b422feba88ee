"""Tiny safetensors reader/writer and bfloat16 helpers (numpy + stdlib only).

File format (https://github.com/huggingface/safetensors):
    8 bytes   little-endian u64 = N, the length of the JSON header
    N bytes   JSON: {"name": {"dtype": "BF16", "shape": [..], "data_offsets": [begin, end]},
                     ..., optional "__metadata__": {str: str}}
    rest      raw little-endian tensor data; data_offsets are relative to the start of this
              region (byte 8 + N).

BF16 is the upper 16 bits of an IEEE float32. Conversion float32 -> bf16 here is
round-to-nearest-even on the float32 bit pattern (what torch's .to(torch.bfloat16) does);
NaN stays NaN (quiet bit forced), +-inf and overflow to inf behave like torch.
"""
import json
import struct

import numpy as np

# safetensors dtype name -> numpy storage dtype (little-endian). BF16 is stored as u16 bits.
_STORAGE = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


# --------------------------------------------------------------------------- bfloat16
def bf16_bits(x):
    """float array -> uint16 bf16 bit patterns, round-to-nearest-even on the float32 bits.

    Values are first converted to float32 (float64 inputs thus round twice, f64->f32->bf16,
    exactly like torch computing in f32 and casting the result to bf16)."""
    f = np.array(x, dtype=np.float32, copy=True)
    shape = f.shape
    f = f.reshape(-1)
    u = f.view(np.uint32)
    nan = np.isnan(f)
    # RNE: add 0x7FFF plus the lowest kept bit, then truncate. Only NaN patterns can wrap.
    r = ((u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16))
    r = r.astype(np.uint16)
    if nan.any():
        r[nan] = ((u[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return r.reshape(shape)


def bf16_bits_to_f32(bits):
    """uint16 bf16 bit patterns -> float32 array (exact)."""
    b = np.asarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


def bf16_round(x):
    """Round to the nearest bf16 value (RNE); returns float32 holding bf16-exact values."""
    return bf16_bits_to_f32(bf16_bits(x))


# --------------------------------------------------------------------------- reading
class SafeTensors:
    """Lazy reader: the file is memory-mapped; tensors are decoded on get()."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) != 8:
                raise ValueError(f"{path}: too short for a safetensors file")
            (n,) = struct.unpack("<Q", head)
            header = json.loads(f.read(n).decode("utf-8"))
        self.metadata = header.pop("__metadata__", None) or {}
        self.header = header
        self.data_start = 8 + n
        self._mm = np.memmap(path, dtype=np.uint8, mode="r")
        for name, e in header.items():
            if e["dtype"] not in _STORAGE:
                raise ValueError(f"{path}: tensor {name}: unsupported dtype {e['dtype']}")
            b, end = e["data_offsets"]
            count = int(np.prod(e["shape"], dtype=np.int64))
            if end - b != count * _STORAGE[e["dtype"]].itemsize:
                raise ValueError(f"{path}: tensor {name}: data_offsets do not match shape")
            if self.data_start + end > self._mm.size:
                raise ValueError(f"{path}: tensor {name}: data past end of file")

    def keys(self):
        return list(self.header.keys())

    def __contains__(self, name):
        return name in self.header

    def dtype(self, name):
        return self.header[name]["dtype"]

    def shape(self, name):
        return tuple(self.header[name]["shape"])

    def raw(self, name):
        """The stored values in their storage dtype (BF16 -> uint16 bits), read-only."""
        e = self.header[name]
        st = _STORAGE[e["dtype"]]
        b, _ = e["data_offsets"]
        count = int(np.prod(e["shape"], dtype=np.int64))
        a = np.frombuffer(self._mm, dtype=st, count=count, offset=self.data_start + b)
        return a.reshape(e["shape"])

    def get(self, name):
        """Decoded tensor: BF16/F16/F32 -> float32, F64 -> float64, ints/bool unchanged."""
        a = self.raw(name)
        dt = self.dtype(name)
        if dt == "BF16":
            return bf16_bits_to_f32(a)
        if dt in ("F16", "F32"):
            return a.astype(np.float32)
        if dt == "F64":
            return a.astype(np.float64)
        return np.array(a)


def load(path):
    """Eagerly read every tensor into a dict name -> ndarray (see SafeTensors.get)."""
    f = SafeTensors(path)
    return {k: f.get(k) for k in f.keys()}


# --------------------------------------------------------------------------- writing
def _infer(a):
    """safetensors dtype name for a numpy array (by kind and size; BF16 is never inferred)."""
    for name, st in _STORAGE.items():
        if name != "BF16" and a.dtype.kind == st.kind and a.dtype.itemsize == st.itemsize:
            return name
    raise ValueError(f"cannot store numpy dtype {a.dtype}")


def save(path, tensors, dtype=None, metadata=None):
    """Write dict name -> array. dtype: None (infer from each array: float32 -> F32, ...),
    or one of 'F32', 'F64', 'F16', 'BF16' applied to every floating-point tensor
    (BF16 rounds to nearest even). Integer/bool tensors keep their own dtype."""
    header = {}
    blobs = []
    off = 0
    for name, a in tensors.items():
        a = np.asarray(a)
        if dtype is not None and np.issubdtype(a.dtype, np.floating):
            dt = dtype.upper()
        else:
            dt = _infer(a)
        if dt == "BF16":
            data = bf16_bits(a).astype("<u2").tobytes()
        else:
            data = np.ascontiguousarray(a, dtype=_STORAGE[dt]).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((-len(h)) % 8)  # pad so the data region starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for d in blobs:
            f.write(d)
