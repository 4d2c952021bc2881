#!/usr/bin/env bash
# The main job on the bundled example: installs what is missing, builds
# lstm-opt, and optimises examples/lstmcell_unrolled.onnx (an unrolled PyTorch
# nn.LSTMCell loop, 16 steps) into build/lstmcell_unrolled.opt.onnx, printing
# the report; then compiles the original for this CPU with lstm-run and times
# it on random inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-python
scripts/build.sh lstm-opt lstm-run
echo
echo "$ build/bin/lstm-opt examples/lstmcell_unrolled.onnx -o build/lstmcell_unrolled.opt.onnx --report"
build/bin/lstm-opt examples/lstmcell_unrolled.onnx -o build/lstmcell_unrolled.opt.onnx --report
echo
echo "$ build/bin/lstm-run examples/lstmcell_unrolled.onnx --random-inputs --bench 1000"
build/bin/lstm-run examples/lstmcell_unrolled.onnx --random-inputs --bench 1000
