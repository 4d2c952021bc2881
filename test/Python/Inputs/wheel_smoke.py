"""Run in a fresh venv where only the wheel (and what pip brought as its
declared dependencies) is installed, with PATH and LD_LIBRARY_PATH scrubbed (wheel.test): the
package's own lstm-opt does the work, from the package's folder.

Usage: wheel_smoke.py MODEL.onnx WORKDIR FORBIDDEN_DIR
Prints one line per check; exits 1 on any failure.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

import lstm_opt
from lstm_opt.runtime import Model

model, work, forbidden = sys.argv[1:4]
forbidden = os.path.realpath(forbidden)
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += not ok


pkg = os.path.dirname(os.path.realpath(lstm_opt.__file__))
tool = lstm_opt.find_tool()
check(os.path.realpath(tool).startswith(pkg + os.sep), f"lstm-opt is the package's ({tool})")
check("LSTM_OPT" not in os.environ and "LD_LIBRARY_PATH" not in os.environ,
      "no LSTM_OPT, no LD_LIBRARY_PATH")
# Every library the tool loads comes from the package or the system, none
# from the build tree.
ldd = subprocess.run(["ldd", tool], capture_output=True, text=True).stdout
ours = [l.split("=>")[1].split()[0] for l in ldd.splitlines() if "libLstmOpt" in l]
check(ours and all(os.path.realpath(p).startswith(pkg + os.sep) for p in ours),
      f"{len(ours)} libLstmOpt* libraries, all from the package")
build_libs = [os.path.join(forbidden, d) + os.sep for d in ("lib", "bin")]
check(not any(b in ldd for b in build_libs) and "not found" not in ldd,
      "nothing from the build tree's lib/ or bin/, nothing missing")

fused = lstm_opt.optimize(model)
ops = [n.op_type for n in fused.graph.node]
check(ops.count("LSTM") == 1, f"optimize: {ops.count('LSTM')} LSTM node(s), {len(ops)} nodes")
rep = lstm_opt.report(model)
check(len(rep["layers"]) == 1, f"report: {len(rep['layers'])} layer(s)")
res = lstm_opt.check(model, fused)
check(res.ok, f"check: ONNX Runtime agrees ({res})")
page = os.path.join(work, "report.html")
rep = lstm_opt.html_report(model, page)
check(os.path.getsize(page) > 1000 and len(rep["layers"]) == 1, "html_report written, 1 layer")

# The console script, compiling for this CPU; the model then runs from
# numpy alone.
so = os.path.join(work, "m.so")
scripts = os.path.dirname(sys.executable)
r = subprocess.run([os.path.join(scripts, "lstm-opt"), model, "--target=cpu", "-o", so],
                   capture_output=True, text=True)
check(r.returncode == 0 and os.path.isfile(so), "lstm-opt --target=cpu -o m.so (console script)")
m = Model(so)
rng = np.random.default_rng(0)
feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in m.inputs}
got = m.run(feeds)
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
worst = max(float(np.max(np.abs(got[k] - want[k]) / np.maximum(np.abs(want[k]), 0.1)))
            for k in want)
check(worst <= 1e-4, f"lstm_opt.runtime vs ONNX Runtime: max rel err {worst:.2e}")
ldd = subprocess.run(["ldd", so], capture_output=True, text=True).stdout
check("llvm" not in ldd.lower() and "mlir" not in ldd.lower() and "LstmOpt" not in ldd,
      "the compiled model links no LLVM, MLIR or lstm-opt library")
r = subprocess.run([os.path.join(scripts, "lstm-run"), so, "--help"], capture_output=True, text=True)
check(r.returncode == 0 and "lstm-run" in r.stdout, "lstm-run (console script)")
print(f"wheel: {failures} failed")
sys.exit(1 if failures else 0)
