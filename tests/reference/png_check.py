#!/usr/bin/env python3
"""Check a PNG written by ./flux --png against the image tensor it came from.

Usage:
    python3 tests/reference/png_check.py IMAGE.png OUT.safetensors [--key image]

Decodes the PNG with the standard library alone (chunks, zlib, the five row filters;
8-bit RGB or gray, not interlaced), computes the pixels BFL's code makes from the [1, C, H, W]
tensor (clamp to [-1, 1], 127.5 (x + 1) in float32, truncated to a byte) and exits 0 only
if every pixel is equal; 1 otherwise, saying where.
"""
import argparse
import os
import struct
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def read_png(path):
    d = open(path, "rb").read()
    if d[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    i, idat, w = 8, b"", None
    while i < len(d):
        n, = struct.unpack(">I", d[i:i + 4])
        kind, body = d[i + 4:i + 8], d[i + 8:i + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack(">I", d[i + 8 + n:i + 12 + n])[0]:
            raise SystemExit(f"{path}: bad CRC in chunk {kind!r}")
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (0, 2) or interlace:
                raise SystemExit(f"{path}: depth {depth}, color type {color}, interlace {interlace}: not 8-bit RGB/gray")
        elif kind == b"IDAT":
            idat += body
        i += 12 + n
    c = 3 if color == 2 else 1
    raw, stride, prev, rows = zlib.decompress(idat), w * c, bytearray(w * c), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - c] if x >= c else 0
            b, ul = prev[x], (prev[x - c] if x >= c else 0)
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - ul
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - ul)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else ul)) & 255
        rows.append(bytes(line))
        prev = line
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(h, w, c)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("png")
    ap.add_argument("tensors")
    ap.add_argument("--key", default="image")
    a = ap.parse_args()
    px = read_png(a.png)
    x = np.asarray(st.load(a.tensors)[a.key], dtype=np.float32)[0]
    want = (np.float32(127.5) * (np.clip(x, np.float32(-1), np.float32(1)) + np.float32(1))).astype(np.uint8).transpose(1, 2, 0)
    if px.shape != want.shape:
        print(f"{a.png}: {px.shape} pixels, the tensor makes {want.shape}")
        return 1
    bad = np.argwhere(px != want)
    if len(bad):
        y, x_, k = bad[0]
        print(f"{a.png}: {len(bad)} pixels differ; first at row {y} column {x_} channel {k}: {px[y, x_, k]} vs {want[y, x_, k]}")
        return 1
    print(f"{a.png}: {px.shape[1]}x{px.shape[0]}, all {px.size} values as the tensor makes them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
