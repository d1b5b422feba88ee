#!/bin/sh
# scripts/deps.sh demo|test — install what `make demo` or `make test` needs.
#
# The one list of what the project needs (the Makefile's demo and test
# targets and .ci/run all call this script). Each line: the group, the Debian
# package, what it is for, and a probe that is true when it is there (commands
# on PATH and files only, so a fully set-up machine is checked in a few
# milliseconds). Groups: build (fluxcc itself), opencl (OpenCL projects run on
# the CPU with PoCL), test (the suite's extra tools).
#   demo: build, and opencl unless there is an NVIDIA GPU (then the CUDA
#         toolkit's nvcc is needed, which is not a Debian package)
#   test: build, opencl and test
# What is missing is installed with apt-get (apt-get update first, only then)
# when run as root or with passwordless sudo; otherwise the script stops with
# the one command to run. FLUXCC_DEPS=0 skips all of this.
#
#   sh scripts/deps.sh demo|test         check, install what is missing
#   sh scripts/deps.sh --list demo|test  print the packages, one a line
set -u

TABLE='
build  make                 make                             cmd make
build  gcc                  the C compiler                   cmd cc
build  libc6-dev            the C library headers            file /usr/include/stdio.h
build  flex                 the scanner generator            cmd flex
build  bison                the parser generator             cmd bison
build  libcjson-dev         cJSON headers and library        file /usr/include/cjson/cJSON.h
build  libopenblas0-pthread OpenBLAS: GEMMs of fluxcc run     file /usr/lib/*/libopenblas.so.0 /usr/lib/libopenblas.so.0
build  libxgboost0          XGBoost: the learned cost model   file /usr/lib/*/libxgboost.so.0 /usr/lib/libxgboost.so.0
opencl ocl-icd-opencl-dev   the OpenCL ICD loader (-lOpenCL) file /usr/lib/*/libOpenCL.so /usr/lib64/libOpenCL.so /usr/lib/libOpenCL.so
opencl opencl-c-headers     OpenCL headers                   file /usr/include/CL/cl.h
opencl pocl-opencl-icd      PoCL, OpenCL on the CPU          file /etc/OpenCL/vendors/pocl.icd
test   python3              Python                           cmd python3
test   python3-numpy        NumPy (the independent reference) numpy
test   clang                clang (libFuzzer targets)        cmd clang
test   libclang-rt-14-dev   libFuzzer                        file /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a
test   g++                  C++ (make emu: CUDA on the CPU)  cmd c++
test   libpng-dev           libpng: ./flux --png              file /usr/include/png.h
test   pkg-config           pkg-config (finds libpng)         cmd pkg-config
test   libpcre2-dev         PCRE2: ./flux --prompt (CLIP)      file /usr/include/pcre2.h
test   libutf8proc-dev      utf8proc: ./flux --prompt (CLIP)   file /usr/include/utf8proc.h
test   libsentencepiece-dev SentencePiece: --prompt (T5)       file /usr/include/sentencepiece_processor.h
test   sentencepiece        spm_train (a T5-style test model)  cmd spm_train
test   python3-sentencepiece the T5 tokenizer reference       file /usr/lib/python3/dist-packages/sentencepiece/__init__.py
test   libmicrohttpd-dev    libmicrohttpd: ./flux --serve     file /usr/include/microhttpd.h
test   curl                 curl (the serve tests)            cmd curl
test   slurm-wlm            Slurm (tune-slurm.sh on a one-node cluster) file /usr/sbin/slurmctld
test   munge                MUNGE, the authentication of Slurm file /usr/sbin/munged
test   ccache               ccache (the projects built by the suite) file /usr/lib/ccache/cc
'

cmd() { command -v "$1" >/dev/null 2>&1; }
file() { for f in "$@"; do [ -e "$f" ] && return 0; done; return 1; }
numpy() {
  file /usr/lib/python3/dist-packages/numpy/__init__.py && return 0
  for p in /usr/bin/python3 python3; do "$p" -c 'import numpy' 2>/dev/null && return 0; done
  return 1
}
has_gpu() { cmd nvidia-smi && nvidia-smi -L >/dev/null 2>&1; }

list=
if [ "${1:-}" = --list ]; then list=1; shift; fi
mode=${1:-}
case $mode in
  demo) if has_gpu; then groups="build"; else groups="build opencl"; fi ;;
  test) groups="build opencl test" ;;
  *) echo "usage: sh scripts/deps.sh [--list] demo|test" >&2; exit 2 ;;
esac
[ -n "$list" ] || [ "${FLUXCC_DEPS:-1}" != 0 ] || exit 0

# missing: the packages whose probe fails; what: the same with what they are for
missing= what=
check() {
  missing= what=
  nl='
'
  set -f; old_ifs=$IFS; IFS=$nl
  for line in $TABLE; do
    IFS=$old_ifs
    set -- $line    # group package description... probe
    g=$1 pkg=$2; shift 2
    case " $groups " in *" $g "*) ;; *) continue ;; esac
    if [ -n "$list" ]; then echo "$pkg"; continue; fi
    desc=
    while [ $# -gt 0 ]; do
      case $1 in cmd|file|numpy) break ;; esac
      desc="$desc${desc:+ }$1"; shift
    done
    set +f; eval "$*" || { missing="$missing${missing:+ }$pkg"; what="$what$nl  $pkg: $desc"; }; set -f
  done
  IFS=$old_ifs; set +f
}
check
[ -n "$list" ] && exit 0

if [ "$mode" = demo ] && has_gpu && ! cmd nvcc && ! [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "make demo: there is an NVIDIA GPU but no nvcc (neither on PATH nor /usr/local/cuda/bin):" >&2
  echo "  install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads), then run make demo again" >&2
  exit 1
fi
[ -z "$missing" ] && exit 0

echo "make $mode needs these Debian packages, which are not installed:$what"
if ! cmd apt-get; then
  echo "make $mode: no apt-get here: install them (or their equivalents) with your system's package manager," >&2
  echo "  or run with FLUXCC_DEPS=0 if they are installed where this script does not look" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then sudo=
elif cmd sudo && sudo -n true 2>/dev/null; then sudo="sudo"
else
  # no package lists yet (a fresh machine): the update is needed first
  if file /var/lib/apt/lists/*_Packages /var/lib/apt/lists/*_Packages.*; then
    run="sudo apt-get install -y --no-install-recommends $missing"
  else
    run="sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing"
  fi
  echo "make $mode: not root and no passwordless sudo, so nothing was installed. Run:" >&2
  echo "  $run" >&2
  echo "then make $mode again." >&2
  exit 1
fi

echo "make $mode: installing them: ${sudo:+sudo }apt-get update && ${sudo:+sudo }apt-get install -y --no-install-recommends $missing"
log=$(mktemp)
apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -q -y "$@" >>"$log" 2>&1; }
t0=$(date +%s)
if ! apt update || ! apt install --no-install-recommends $missing; then
  tail -20 "$log" | sed 's/^/  /' >&2
  echo "make $mode: apt-get failed (the lines above are the end of its output)" >&2
  rm -f "$log"; exit 1
fi
n=$(grep -c '^Setting up ' "$log")
rm -f "$log"
wanted=$missing
check
if [ -n "$missing" ]; then
  echo "make $mode: still missing after apt-get install:$what" >&2
  exit 1
fi
echo "make $mode: installed $wanted ($n packages with their dependencies, $(( $(date +%s) - t0 )) s)"
