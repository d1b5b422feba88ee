# mkst.py OUT NAME v1,v2,... : a one-tensor f32 safetensors file (nan and inf allowed)
import json, struct, sys
out, name, vals = sys.argv[1], sys.argv[2], [float(v) for v in sys.argv[3].split(",")]
h = json.dumps({name: {"dtype": "F32", "shape": [len(vals)], "data_offsets": [0, 4 * len(vals)]}}).encode()
h += b" " * (-len(h) % 8)
open(out, "wb").write(struct.pack("<Q", len(h)) + h + struct.pack("<%df" % len(vals), *vals))
