#!/usr/bin/env bash
# The main job on the bundled example: installs what is missing, builds
# lstm-opt, and optimises examples/lstmcell_unrolled.onnx (an unrolled PyTorch
# nn.LSTMCell loop, 16 steps) into build/lstmcell_unrolled.opt.onnx, printing
# the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-python
scripts/build.sh lstm-opt
echo
echo "$ build/bin/lstm-opt examples/lstmcell_unrolled.onnx -o build/lstmcell_unrolled.opt.onnx --report"
build/bin/lstm-opt examples/lstmcell_unrolled.onnx -o build/lstmcell_unrolled.opt.onnx --report
