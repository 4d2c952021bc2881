#!/usr/bin/env bash
# Builds the GPU proof bundle: every e2e model compiled for --target=cudnn
# (auto, f16, standard, persist-static, persist-small-h) and --target=gpu
# (auto, step, persistent), plus a CPU build, with inputs, ONNX Runtime's
# reference outputs, the runtime libraries and a runner that needs only
# Python + numpy + the CUDA driver.
# Usage: scripts/gpu-bundle.sh OUT_DIR [--with-bench] [gpu_bundle.py options]
# --with-bench adds bench/gpu_vs_torch.py's models (lstm-opt against PyTorch;
# about 130 MiB more, 20 MiB as tar.xz: the bench models carry their weights).
# (see scripts/gpu_bundle.py --help). On the GPU machine:
#   cd OUT_DIR && bash run_all.sh      (or python3 run.py, python3 bench.py)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/gpu-bundle.sh OUT_DIR [--with-bench] [options]" >&2; exit 2; }
out=$1; shift
bench=0
args=()
for a in "$@"; do
  if [ "$a" = --with-bench ]; then bench=1; else args+=("$a"); fi
done
scripts/build.sh lstm-opt lstm-opt-test-depends >/dev/null
.venv/bin/python scripts/gpu_bundle.py "$out" ${args[@]+"${args[@]}"}
if [ $bench = 1 ]; then
  .venv/bin/python bench/gpu_vs_torch.py build "$out"
fi
