#!/usr/bin/env bash
# Configures and builds lstm-opt into build/ (tools in build/bin/).
# Usage: scripts/build.sh [ninja targets...]   (default: lstm-opt)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir >/dev/null
fi
# Two cores: two jobs (linking against the shared libMLIR keeps links light).
ninja -C "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "${@:-lstm-opt}"
