#!/usr/bin/env python3
"""Puts a wheel of the python/ package, built from the current sources, in
OUT (lstm_opt-<version>-py3-none-linux_<arch>.whl) and copies it to COPY_TO.

Usage: ensure_wheel.py --src SRCROOT --out DIR --build-dir DIR [--copy-to DIR]
                       [--tests ON|OFF]

A wheel already in OUT is reused when it is newer than every source file
(CMakeLists.txt, cmake/, include/, lib/, tools/, python/): scripts/test.sh
builds it from the Release tree before lit starts, so that
test/Python/wheel.test, which runs while other tests use that tree, never
configures or relinks it. Otherwise the wheel is built with
`pip wheel` and scikit-build-core's build-dir BUILD_DIR (the test passes a
folder of its own, not the tree the other tests run from).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys


def newest_source(src):
    newest = 0.0
    paths = [os.path.join(src, "CMakeLists.txt")]
    for d in ("cmake", "include", "lib", "tools", "python"):
        for root, dirs, files in os.walk(os.path.join(src, d)):
            dirs[:] = [x for x in dirs if x not in ("__pycache__", "build")]
            paths += [os.path.join(root, f) for f in files]
    for p in paths:
        try:
            newest = max(newest, os.path.getmtime(p))
        except OSError:
            pass
    return newest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--copy-to")
    ap.add_argument("--tests", default="OFF")
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    out = os.path.abspath(a.out)
    wheels = sorted(glob.glob(os.path.join(out, "lstm_opt-*.whl")))
    fresh = wheels and os.path.getmtime(wheels[-1]) > newest_source(src)
    if not fresh:
        for w in wheels:
            os.remove(w)
        os.makedirs(out, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                        "-w", out, os.path.join(src, "python"),
                        "--config-settings=build-dir=" + os.path.abspath(a.build_dir),
                        "--config-settings=cmake.define.LSTM_OPT_BUILD_TESTS=" + a.tests],
                       check=True)
        wheels = sorted(glob.glob(os.path.join(out, "lstm_opt-*.whl")))
        print("ensure_wheel: built", wheels[-1], file=sys.stderr)
    else:
        print("ensure_wheel: reusing", wheels[-1], file=sys.stderr)
    if a.copy_to:
        os.makedirs(a.copy_to, exist_ok=True)
        shutil.copy2(wheels[-1], a.copy_to)


if __name__ == "__main__":
    main()
