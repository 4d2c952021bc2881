#!/usr/bin/env bash
# Regenerates the reference pages made from the ODS/pass definitions
# (add_mlir_doc) and copies them to docs/generated/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh mlir-doc
mkdir -p docs/generated
cp build/docs/Dialects/ONNXDialect.md build/docs/Dialects/RNNDialect.md \
   build/docs/RNNPasses.md build/docs/ConversionPasses.md docs/generated/
# Where each ONNX operator is supported, from the code (lstm-opt itself).
scripts/build.sh lstm-opt
build/bin/lstm-opt --print-operator-table > docs/generated/Operators.md
echo "docs/generated/ updated"
