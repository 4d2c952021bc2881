"""`cmake --install` into a prefix, the prefix moved elsewhere, then the
installed tools used with the build tree and the sources hidden (a private
mount namespace binds an empty folder over both) and a scrubbed
environment: lstm-opt fuses a model, compiles another for this CPU to a
shared library, and lstm-run runs that library and the ONNX model (JIT).
Then a model compiled with one thread and a C driver, in a folder of their
own, run with LLVM/MLIR hidden as well. The outputs are compared with ONNX
Runtime afterwards, outside the
namespace, and `ldd` of the tools and the library must name nothing in the
hidden trees.

usage: relocated_install.py BUILD_DIR SOURCE_DIR
Prints one line per check ("ok: ..." / "FAIL: ...") and a summary.
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

build, src = (os.path.realpath(p) for p in sys.argv[1:3])
failures = 0


def check(ok, what):
    global failures
    failures += not ok
    print(("ok: " if ok else "FAIL: ") + what)


tmp = tempfile.mkdtemp(prefix="lstm-opt-relocated-")
try:
    subprocess.run(["cmake", "--install", build, "--prefix", f"{tmp}/first"],
                   check=True, stdout=subprocess.DEVNULL)
    prefix = f"{tmp}/moved/prefix"
    os.makedirs(os.path.dirname(prefix))
    os.rename(f"{tmp}/first", prefix)
    work = f"{tmp}/work"
    os.makedirs(work)
    fused_src = f"{src}/examples/lstmcell_unrolled.onnx"
    lstm_src = f"{src}/test/e2e/models/torch_nn_lstm.onnx"
    shutil.copy(fused_src, f"{work}/cell.onnx")
    shutil.copy(lstm_src, f"{work}/lstm.onnx")
    lm_src = f"{src}/test/e2e/models/torch_lstm_lm.onnx"
    os.makedirs(f"{work}/deploy")
    shutil.copy(lm_src, f"{work}/lm.onnx")
    shutil.copy(f"{src}/test/Tools/lstm-opt/Inputs/lm_driver.c", f"{work}/lm_driver.c")
    tokens = np.random.default_rng(3).integers(0, 20, (8, 2)).astype("<i8")
    tokens.tofile(f"{work}/deploy/tokens.bin")
    rng = np.random.default_rng(5)
    sess = ort.InferenceSession(lstm_src, providers=["CPUExecutionProvider"])
    feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in sess.get_inputs()}
    np.savez(f"{work}/in.npz", **feeds)
    empty = f"{tmp}/empty"
    os.makedirs(empty)

    script = f"""
set -e
mount --bind {empty} {shlex.quote(build)}
mount --bind {empty} {shlex.quote(src)}
test ! -e {shlex.quote(build)}/bin/lstm-opt
cd {work}
B={prefix}/bin
$B/lstm-opt cell.onnx -o fused.onnx 2> fuse.log
$B/lstm-opt lstm.onnx --target=cpu --threads=2 -o m.so 2> compile.log
$B/lstm-run m.so --inputs in.npz --outputs aot.npz -q
$B/lstm-run lstm.onnx --inputs in.npz --outputs jit.npz -q
ldd $B/lstm-opt $B/lstm-run m.so > ldd.txt
# A model compiled with one thread, with its C driver, in a folder of its
# own; then LLVM/MLIR hidden too: it needs libc alone.
$B/lstm-opt lm.onnx --target=cpu --threads=1 -o deploy/lm.so 2> /dev/null
cc -Ideploy lm_driver.c deploy/lm.so -Wl,-rpath,'$ORIGIN' -o deploy/driver
mount --bind {empty} /usr/lib/llvm-22
test ! -e /usr/lib/llvm-22/lib/libMLIR.so.22.1
cd deploy
env -i ./driver tokens.bin logprobs.bin
ldd lm.so driver > ldd.txt
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": work}
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       env=env, capture_output=True, text=True)
    check(r.returncode == 0, "the installed tools ran with the build tree and sources hidden"
          + ("" if r.returncode == 0 else f" (exit {r.returncode}: {r.stderr.strip()})"))
    if r.returncode == 0:
        log = open(f"{work}/fuse.log").read()
        check("fused LSTM layer: 16 steps" in log, "lstm-opt fused the example")
        cell = ort.InferenceSession(fused_src, providers=["CPUExecutionProvider"])
        cfeeds = {i.name: rng.standard_normal([d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
                  for i in cell.get_inputs()}
        want = cell.run(None, cfeeds)
        got = ort.InferenceSession(f"{work}/fused.onnx", providers=["CPUExecutionProvider"]).run(None, cfeeds)
        check(all(np.allclose(g, w, rtol=1e-4, atol=1e-5) for g, w in zip(got, want)),
              "the fused model computes what the original does")
        want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        for name in ("aot", "jit"):
            out = np.load(f"{work}/{name}.npz")
            err = max(float(np.max(np.abs(out[k] - want[k]))) for k in want)
            check(err <= 1e-4, f"lstm-run {'m.so' if name == 'aot' else 'lstm.onnx'} "
                  f"matches ONNX Runtime (max abs err {err:.1e})")
        ldd = open(f"{work}/ldd.txt").read()
        check("not found" not in ldd and build not in ldd and src not in ldd,
              "ldd: every library resolves, none from the build tree or the sources")
        lm = ort.InferenceSession(lm_src, providers=["CPUExecutionProvider"])
        want = lm.run(None, {lm.get_inputs()[0].name: tokens})[0]
        got = np.fromfile(f"{work}/deploy/logprobs.bin", dtype="<f4").reshape(want.shape)
        err = float(np.max(np.abs(got - want)))
        check(err <= 1e-4, f"a deployed --threads=1 model ran with LLVM/MLIR hidden, "
              f"like ONNX Runtime (max abs err {err:.1e})")
        ldd = open(f"{work}/deploy/ldd.txt").read()
        check("not found" not in ldd and "llvm" not in ldd.lower() and "mlir" not in ldd.lower()
              and build not in ldd and src not in ldd,
              "ldd of the deployed model: libc alone, no LLVM/MLIR, nothing from the build tree")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(f"relocated install: {failures} failed")
sys.exit(1 if failures else 0)
