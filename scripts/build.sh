#!/usr/bin/env bash
# Configures and builds lstm-opt into build/ (tools in build/bin/).
# Usage: scripts/build.sh [ninja targets...]   (default: lstm-opt)
# BUILD_DIR picks the folder (default build/); LSTM_OPT_CMAKE_ARGS adds CMake
# flags when that folder is configured (scripts/test.sh --sanitize uses both).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# The ONNX C++ library (opsets up to 28), built once into a cache.
ONNX_DIR=$(scripts/build-onnx.sh)
# ccache (the CMake project uses it when present) sees paths relative to the
# clone: a second clone, or a build folder made again, compiles nothing twice.
export CCACHE_BASEDIR="$PWD"
# Configured when new, when the ONNX library moved, and whenever flags are
# given (a folder configured before a flag was added gets it; unchanged flags
# rebuild nothing).
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ -n "${LSTM_OPT_CMAKE_ARGS:-}" ] ||
   ! grep -qx "ONNX_DIR:[A-Z]*=$ONNX_DIR" "$BUILD_DIR/CMakeCache.txt"; then
  # shellcheck disable=SC2086  # LSTM_OPT_CMAKE_ARGS is a list of -D flags
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DONNX_DIR="$ONNX_DIR" \
    ${LSTM_OPT_CMAKE_ARGS:-} >/dev/null
fi
# Two cores: two jobs (linking against the shared libMLIR keeps links light).
ninja -C "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "${@:-lstm-opt}"
