#!/bin/sh
# scripts/gen-pocl-builtins.sh [opencl-c.h] > templates/pocl_builtins.cl (needs clang and python3)
# The OpenCL builtins our kernels call (the dialect in compiler/target.c, the
# attention's, templates/opencl/kernel_prelude.cl), declared exactly as the
# header PoCL compiles every program with makes them: clang's opencl-c.h run
# through clang's preprocessor for OpenCL C 1.2, every overload of those names
# on float, half pointers, int, uint, ushort and size_t. The search builds its
# candidates on PoCL with these in place of the 0.9 MB header (device_opencl.c).
# Run again when the kernels call a builtin not listed in NAMES, or PoCL moves
# to another clang; the suite fails when a search build needs the full header.
set -eu
H=${1:-/usr/share/pocl/include/opencl-c.h}
D=$(dirname "$H")
NAMES="barrier convert_uint convert_ushort cos exp fabs fmax fmin get_group_id get_local_id log select sin sqrt tanh vload vload_half vstore vstore_half_rte"
CLANG=${CLANG:-$(command -v clang-15 || command -v clang)}  # PoCL 3.1's clang (Debian 12), else the default
"$CLANG" -E -P -x cl -cl-std=CL1.2 -target x86_64-pc-linux-gnu -include "$D/opencl-c-base.h" "$H" | python3 -c '
import re, sys
names = set(sys.argv[1].split())
print("// pocl_builtins.cl: made by scripts/gen-pocl-builtins.sh from %s; do not edit." % sys.argv[2])
print("// The builtins our OpenCL kernels call, as opencl-c.h declares them, for PoCL builds")
print("// that skip that header (-D_OPENCL_H_): the same code, a third of the parse.")
for d in sys.stdin.read().split(";"):
    d = " ".join(d.split())
    fn = re.findall(r"\)\)\s*([A-Za-z_]\w*)\s*\(", d)
    if "overloadable" not in d or not fn:
        continue
    n = fn[-1]  # the name after the attributes: exp, vload4, vstore_half8_rte, convert_uint16
    vec = n.startswith(("vload", "vstore", "convert_")) and re.sub(r"\d+(_rte)?$", r"\1", n) in names  # vload4 as vload
    if n not in names and not vec:
        continue
    if re.search(r"\b(double|long|ulong|char|short)\d*\b", d) or re.search(r"\bhalf\d*\b(?!\s*\*)", d):
        continue  # types our kernels never pass (double needs cl_khr_fp64, half values cl_khr_fp16)
    if re.search(r"\buchar\d*\b", d) and not n.startswith(("vload", "convert_uint")):
        continue  # bytes (fp8 weights) are only loaded and widened
    print(d + ";")
' "$NAMES" "$(basename "$H")"
