#!/usr/bin/env bash
# Builds the GPU proof bundle: every e2e model compiled for --target=cudnn
# (f32, f16, persist-static) and --target=gpu (auto, step, persistent), plus a
# CPU build, with inputs, ONNX Runtime's reference outputs, the runtime
# libraries and a runner that needs only Python + numpy + the CUDA driver.
# Usage: scripts/gpu-bundle.sh OUT_DIR [gpu_bundle.py options]
# (after scripts/build.sh; see scripts/gpu_bundle.py --help). On the GPU
# machine: cd OUT_DIR && python3 run.py
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/gpu-bundle.sh OUT_DIR [options]" >&2; exit 2; }
scripts/build.sh lstm-opt lstm-opt-test-depends >/dev/null
exec .venv/bin/python scripts/gpu_bundle.py "$@"
