# set_st.py FILE NAME=VALUE ...: set every element of f32 tensors NAME in a safetensors file (in place)
import json, struct, sys
path = sys.argv[1]
b = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
for a in sys.argv[2:]:
    name, v = a.split("=")
    t = h[name]
    assert t["dtype"] == "F32", t
    lo, hi = t["data_offsets"]
    for o in range(8 + n + lo, 8 + n + hi, 4):
        b[o:o + 4] = struct.pack("<f", float(v))
open(path, "wb").write(b)
