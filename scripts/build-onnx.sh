#!/usr/bin/env bash
# Builds the ONNX C++ library (parser, checker, shape inference, operator
# schemas up to opset 28, IR version 14) from its pinned source distribution on
# PyPI, once, into a cache folder that survives rebuilds and fresh clones:
#   ${LSTM_OPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lstm-opt}/onnx-<version>
# and prints the folder of its CMake package (pass it as -DONNX_DIR=...).
#
# Why not Debian's libonnx-dev: it is ONNX 1.12, which stops at opset 17 and
# IR version 8, so it has no schemas (and no shape inference) for the opsets
# that current exporters write. See docs/ONNXImport.md.
#
# Needs: protobuf-compiler + libprotobuf-dev (Debian's protobuf 3.21 is used,
# so the project links one protobuf), ninja, a C++17 compiler, python3-venv
# (ONNX's CMake wants CMake >= 3.26; Debian 12 has 3.25, so a CMake from PyPI
# is installed into a small venv in the cache). About 1 minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

ONNX_VERSION=1.23.2
ONNX_SHA256=008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8
CACHE=${LSTM_OPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lstm-opt}
PREFIX="$CACHE/onnx-$ONNX_VERSION"
STAMP="$PREFIX/.complete"

if [ -f "$STAMP" ]; then
  echo "$PREFIX/lib/cmake/ONNX"
  exit 0
fi

mkdir -p "$CACHE"
work=$(mktemp -d "$CACHE/onnx-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A CMake new enough for ONNX's CMakeLists, from PyPI.
tools="$CACHE/tools-venv"
if [ ! -x "$tools/bin/cmake" ]; then
  echo "build-onnx: installing CMake (>= 3.26) into $tools" >&2
  /usr/bin/python3 -m venv "$tools" >&2
  "$tools/bin/python" -m pip install -q --disable-pip-version-check 'cmake>=3.26,<5' >&2
fi

echo "build-onnx: fetching the onnx $ONNX_VERSION source distribution" >&2
printf 'onnx==%s --hash=sha256:%s\n' "$ONNX_VERSION" "$ONNX_SHA256" >"$work/req.txt"
"$tools/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
  --no-binary onnx --require-hashes -r "$work/req.txt" -d "$work" >&2
tar -xzf "$work/onnx-$ONNX_VERSION.tar.gz" -C "$work"

echo "build-onnx: building libonnx $ONNX_VERSION into $PREFIX" >&2
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
"$tools/bin/cmake" -G Ninja -S "$work/onnx-$ONNX_VERSION" -B "$work/build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF \
  -DONNX_ML=1 -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_TESTS=OFF \
  -DONNX_BUILD_PYTHON=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DONNX_USE_UNITY_BUILD=ON "${launcher[@]}" >&2
ninja -C "$work/build" -j "${JOBS:-$(nproc)}" onnx onnx_proto >&2
rm -rf "$PREFIX"
"$tools/bin/cmake" --install "$work/build" >&2
touch "$STAMP"
echo "$PREFIX/lib/cmake/ONNX"
