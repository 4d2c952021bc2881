#!/usr/bin/env bash
# Installs what lstm-opt needs on Debian 12 (idempotent; does nothing that is already there).
#   Debian packages: LLVM/MLIR 22, protobuf (the ONNX library itself is built
#                    from source by scripts/build-onnx.sh), googletest, cmake, ninja, ccache, python3-venv,
#                    graphviz (pictures in the HTML report), zlib (npz reading),
#                    libomp-22-dev (threads in code compiled by --target=cpu / lstm-run),
#                    clang-22 + libclang-rt-22-dev (the ASan/UBSan build of scripts/test.sh)
#   Python (.venv, from Debian's python3): numpy<2, onnx, onnxruntime, pytest,
#   IREE (iree-base-compiler, iree-base-runtime: test/Target/Linalg);
#   the ONNX models the silero-vad package ships (scripts/fetch-models.sh)
# (Regenerating the PyTorch fixtures also needs python3-torch; see
#  test/e2e/models/README.md. The tests do not.)
# Usage: scripts/setup.sh [--no-python]
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  cmake ninja-build ccache g++
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libprotobuf-dev protobuf-compiler
  googletest libgtest-dev
  python3 python3-venv graphviz
  zlib1g-dev libomp-22-dev
  clang-22 libclang-rt-22-dev
  # --target-triple=aarch64-linux-gnu: the cross compiler and linker, the
  # arm64 C library and headers it needs (a recommends, which
  # --no-install-recommends leaves out), and qemu to run the result.
  qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "${1:-}" != "--no-python" ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv (Debian python3; system site packages stay visible,"
    echo "       so python3-torch, if installed, serves the fixture generators)"
    /usr/bin/python3 -m venv --system-site-packages .venv
  fi
  stamp=.venv/.requirements.stamp
  if ! cmp -s scripts/requirements-test.txt "$stamp" 2>/dev/null; then
    echo "setup: installing Python test packages into .venv"
    .venv/bin/python -m pip install -q --disable-pip-version-check -r scripts/requirements-test.txt
    cp scripts/requirements-test.txt "$stamp"
  fi
  # Real models that packages ship (silero-vad), for test/RealModels.
  scripts/fetch-models.sh
fi
