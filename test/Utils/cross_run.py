#!/usr/bin/env python3
"""Cross-compiles models for another CPU and runs them there under QEMU.

Usage: cross_run.py --lstm-opt PATH --triple T --cpu C --workdir DIR
                    [--precision bf16|int8 --lstm-run PATH] [--qemu-cpu Q] MODEL...

For each ONNX model (static shapes): `lstm-opt --target=cpu --target-triple=T
--target-cpu=C -o m.so` (linked by T-gcc), a C driver generated from the
model's header (reads each input from a raw file, calls lstm_opt_model_run,
writes each output), built with T-gcc, run with qemu-<arch> -L
/usr/<T>, and its outputs compared with ONNX Runtime's on the original model
on this machine: |a - b| <= 1e-4 * max(|b|, 0.1) elementwise (the bound of
test/e2e/cpu_run.py). Prints one line per model and
'cross: N passed, M failed'; exits 1 on any failure.

With --precision bf16 or int8 the model is compiled at that precision and
its reference is this machine's lstm-run at the same precision compiled
for --target-cpu=x86-64-v3 (the same roundings and quantization; bf16
weights widened in registers, f32 FMAs; int8 exact integer sums), within the
same bound; the error against ONNX
Runtime's f32 is printed beside it. --qemu-cpu runs the driver on that
QEMU CPU model (e.g. one without the extensions the model was compiled
for: the model's CPU check must then stop it, which --expect-cpu-check
requires instead of outputs).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from ortutil import random_inputs, run_ort  # noqa: E402

CTYPES = {"float32": ("float", np.float32), "int64": ("int64_t", np.int64),
          "int32": ("int32_t", np.int32), "float64": ("double", np.float64)}


def signature(header):
    """[(name, dtype, shape)] of the inputs, then the outputs, from the
    comments of the _mlir_ciface_ declaration; and the number of inputs."""
    text = open(header).read()
    decl = text[text.index("void _mlir_ciface_"):]
    decl = decl[:decl.index(");")]
    args = re.findall(r"/\* (\S+): (\w+)\[([0-9, ]*)\]", decl)
    run = text[text.index("_run("):]
    run = run[:run.index(")")]
    n_in = run.count("const ")
    return [(n, d, [int(x) for x in s.split(",") if x.strip()]) for n, d, s in args], n_in


def driver(header, sig, n_in):
    lines = ['#include <stdio.h>', '#include <stdlib.h>', '#include <stdint.h>',
             '#include "%s"' % os.path.basename(header),
             'static void *load(const char *p, size_t n) {',
             '  void *b = malloc(n ? n : 1); FILE *f = fopen(p, "rb");',
             '  if (!f || fread(b, 1, n, f) != n) { fprintf(stderr, "cannot read %s\\n", p); exit(1); }',
             '  fclose(f); return b; }',
             'static void save(const char *p, const void *b, size_t n) {',
             '  FILE *f = fopen(p, "wb");',
             '  if (!f || fwrite(b, 1, n, f) != n) { fprintf(stderr, "cannot write %s\\n", p); exit(1); }',
             '  fclose(f); }',
             'int main(int argc, char **argv) {',
             '  if (argc != %d) { fprintf(stderr, "usage: driver IN... OUT...\\n"); return 2; }' % (len(sig) + 1)]
    for i, (_, dtype, shape) in enumerate(sig):
        ctype, np_type = CTYPES[dtype]
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(np_type).itemsize
        if i < n_in:
            lines.append('  %s *a%d = load(argv[%d], %d);' % (ctype, i, i + 1, size))
        else:
            lines.append('  %s *a%d = malloc(%d);' % (ctype, i, max(size, 1)))
    lines.append('  lstm_opt_model_run(%s);' % ", ".join("a%d" % i for i in range(len(sig))))
    for i, (_, dtype, shape) in enumerate(sig[n_in:], n_in):
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(CTYPES[dtype][1]).itemsize
        lines.append('  save(argv[%d], a%d, %d);' % (i + 1, i, size))
    lines += ['  return 0;', '}']
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-opt", required=True)
    ap.add_argument("--triple", required=True)
    ap.add_argument("--cpu", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--precision", choices=["f32", "bf16", "int8"], default="f32")
    ap.add_argument("--lstm-run", help="this machine's lstm-run (the reference "
                    "of --precision bf16/int8)")
    ap.add_argument("--qemu-cpu")
    ap.add_argument("--expect-cpu-check", action="store_true",
                    help="the driver must stop with the model's CPU check")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    if a.precision != "f32" and not a.lstm_run:
        ap.error("--precision %s needs --lstm-run" % a.precision)
    arch = a.triple.split("-")[0]
    qemu = ["qemu-" + arch, "-L", "/usr/" + a.triple] + \
        (["-cpu", a.qemu_cpu] if a.qemu_cpu else [])
    os.makedirs(a.workdir, exist_ok=True)
    passed, failed = 0, 0
    for path in a.models:
        name = os.path.splitext(os.path.basename(path))[0]
        wd = os.path.join(a.workdir, name)
        os.makedirs(wd, exist_ok=True)
        so, header = os.path.join(wd, "m.so"), os.path.join(wd, "m.h")

        def step(cmd):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode,
                                                         r.stdout, r.stderr))
            return r

        try:
            step([a.lstm_opt, path, "--target=cpu", "--target-triple=" + a.triple,
                  "--target-cpu=" + a.cpu, "--precision=" + a.precision, "-o", so])
            sig, n_in = signature(header)
            with open(os.path.join(wd, "driver.c"), "w") as f:
                f.write(driver(header, sig, n_in))
            exe = os.path.join(wd, "driver")
            step([a.triple + "-gcc", "-O1", "-I" + wd, os.path.join(wd, "driver.c"), so,
                  "-Wl,-rpath," + wd, "-o", exe])
            model = onnx.load(path)
            feeds = random_inputs(model, np.random.default_rng(1))
            files = []
            for i, (n, dtype, shape) in enumerate(sig):
                fn = os.path.join(wd, "%d.bin" % i)
                files.append(fn)
                if i < n_in:
                    arr = np.ascontiguousarray(feeds[n], dtype=CTYPES[dtype][1])
                    if list(arr.shape) != shape:
                        raise RuntimeError("input %s: shape %s, header %s" % (n, arr.shape, shape))
                    arr.tofile(fn)
            if a.expect_cpu_check:
                r = subprocess.run(qemu + [exe] + files, capture_output=True, text=True)
                found = re.search(r"lstm_opt_model: (this CPU lacks .*)", r.stderr)
                ok = r.returncode != 0 and found is not None
                print("%s: %s: CPU check on QEMU -cpu %s: %s" % (
                    name, "ok" if ok else "FAIL", a.qemu_cpu,
                    found.group(1) if found else "exit %d" % r.returncode))
                passed += ok
                failed += not ok
                continue
            step(qemu + [exe] + files)
            want = run_ort(path, feeds)
            vs_ort = ""
            if a.precision != "f32":
                ort = want
                inp, out = os.path.join(wd, "in.npz"), os.path.join(wd, "ref.npz")
                np.savez(inp, **{n: feeds[n] for n, _, _ in sig[:n_in]})
                step([a.lstm_run, path, "--inputs", inp, "--outputs", out, "-q",
                      "--precision=" + a.precision, "--target-cpu=x86-64-v3"])
                want = dict(np.load(out))
            worst = err32 = 0.0
            for i, (n, dtype, shape) in enumerate(sig[n_in:], n_in):
                got = np.fromfile(files[i], dtype=CTYPES[dtype][1]).reshape(shape)
                ref = want[n].astype(np.float64)
                err = np.abs(got.astype(np.float64) - ref) / np.maximum(np.abs(ref), 0.1)
                worst = max(worst, float(err.max()) if err.size else 0.0)
                if a.precision != "f32" and got.size:
                    ref32 = ort[n].astype(np.float64)
                    err32 = max(err32, float(np.max(np.abs(got - ref32))) /
                                max(float(np.max(np.abs(ref32))), 1e-30))
            if a.precision != "f32":
                vs_ort = "; %s vs ONNX Runtime f32 max rel %.1e" % (a.precision, err32)
            ok = worst <= 1e-4
            print("%s: %s on %s %s%s, max rel err %.2e%s" % (
                name, "ok" if ok else "FAIL", a.triple, a.cpu,
                "" if a.precision == "f32" else " " + a.precision, worst, vs_ort))
        except (RuntimeError, OSError, ValueError, KeyError) as e:
            ok = False
            print("%s: FAIL: %s" % (name, e))
        passed += ok
        failed += not ok
    print("cross: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
