#!/usr/bin/env python3
"""The runner of a GPU bundle (scripts/gpu_bundle.py writes the bundle and
copies this file into it as run.py). Needs Python 3 and numpy; the CUDA
driver for the GPU variants; cuDNN 9 for the cudnn-* variants.

    python3 run.py [--repeat N] [--only PREFIX] [--out report]

Every model and variant in bundle.json: load the compiled library (through
lstm_opt_runtime.py, the Python package's ctypes loader), run it on
inputs.npz, compare every output with reference.npz (ONNX Runtime on the
original model; max relative error, |a - b| / max(|b|, 0.1)), time N runs,
and write report.md and report.json. A variant that needs a CUDA device where
there is none is reported as skipped with the reason, never as passed. Exit
status: 1 if any model failed, else 0.
"""
import argparse
import ctypes
import glob
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lstm_opt_runtime import Model, RuntimeError_  # noqa: E402


def find_cudnn():
    """libcudnn.so.9: $CUDNN_LIB, PyTorch's nvidia-cudnn wheel, or the system."""
    candidates = []
    if os.environ.get("CUDNN_LIB"):
        candidates += glob.glob(os.path.join(os.environ["CUDNN_LIB"], "libcudnn.so.9*"))
    for base in sys.path:
        candidates += glob.glob(os.path.join(base, "nvidia", "cudnn", "lib", "libcudnn.so.9*"))
        candidates += glob.glob(os.path.join(base, "torch", "lib", "libcudnn.so.9*"))
    candidates.append("libcudnn.so.9")
    for c in candidates:
        try:
            return ctypes.CDLL(c, mode=ctypes.RTLD_GLOBAL), c
        except OSError:
            continue
    return None, None


def load_runtime(libs):
    """Loads the bundled libraries globally, so the models' NEEDED entries
    resolve to them. Returns (cuda device count or None, notes)."""
    notes = []
    loaded = {}
    try:
        cuda = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        cuda = None
        notes.append("no CUDA driver (libcuda.so.1)")
    devices = None
    if cuda is not None:
        count = ctypes.c_int(0)
        if cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0:
            devices = count.value
        else:
            devices = 0
        if devices == 0:
            notes.append("no CUDA device")
        else:
            name, dev, version = ctypes.create_string_buffer(256), ctypes.c_int(0), ctypes.c_int(0)
            if cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0 and \
                    cuda.cuDeviceGetName(name, 256, dev) == 0:
                notes.append("GPU 0: %s" % name.value.decode(errors="replace"))
            if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0:
                notes.append("CUDA driver API %d.%d" % (version.value // 1000,
                                                        version.value % 1000 // 10))
    if "libcudart.so.13" in libs:
        try:
            loaded["cudart"] = ctypes.CDLL(os.path.join(HERE, "lib", "libcudart.so.13"),
                                           mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            notes.append("libcudart.so.13: %s" % e)
    cudnn, where = find_cudnn()
    notes.append("cuDNN: %s" % (where or "not found (set CUDNN_LIB)"))
    for name in ["libLstmOptCUDNNRuntime.so", "libLstmOptGPURuntime.so"]:
        if name in libs:
            try:
                loaded[name] = ctypes.CDLL(os.path.join(HERE, "lib", name),
                                           mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                notes.append("%s not loaded: %s" % (name, e))
    return devices, notes, loaded


def rel_error(got, want):
    if want.dtype.kind != "f":
        return 0.0 if np.array_equal(got, want) else float("inf")
    if got.shape != want.shape:
        return float("inf")
    err = np.abs(got.astype(np.float64) - want)
    scale = np.maximum(np.abs(want), 1e-1)
    if not np.all(np.isfinite(got) == np.isfinite(want)):
        return float("inf")
    return float(np.max(err / scale)) if err.size else 0.0


def concurrent(model, feeds, want, threads, repeat):
    """The worst error of `repeat` calls from each of `threads` threads at
    once (a runtime that shares buffers, streams or layers between callers
    shows it here)."""
    import threading
    worst = [0.0]
    lock = threading.Lock()
    go = threading.Barrier(threads)

    def caller():
        go.wait()
        for _ in range(max(1, repeat)):
            outs = model.run({t.name: feeds[t.name] for t in model.inputs})
            e = max((rel_error(outs[k], v) for k, v in want.items() if k in outs), default=0.0)
            with lock:
                worst[0] = max(worst[0], e)
    pool = [threading.Thread(target=caller) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return worst[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", default="", help="variants whose name starts with this "
                    "(NAME= : exactly this one)")
    ap.add_argument("--model", default="", help="models whose name contains this")
    ap.add_argument("--threads", type=int, default=1,
                    help="also call each model from this many threads at once, "
                         "--repeat times each, every result checked")
    ap.add_argument("--out", default=os.path.join(HERE, "report"))
    ap.add_argument("--merge", nargs="+", default=None, metavar="REPORT.json",
                    help="write one report of several runs' report.json (runs per "
                         "variant, each under its own timeout) instead of running")
    args = ap.parse_args()
    if args.merge:
        parts = [json.load(open(p)) for p in args.merge]
        # One row per (model, variant): a build in several reports (a
        # variant's name is a prefix of another's) is counted once, as its
        # worst run.
        order = {"FAILED": 0, "not built": 1, "skipped": 2, "passed": 3}
        by = {}
        for r in (r for p in parts for r in p["results"]):
            k = (r["model"], r["variant"])
            if k not in by or order.get(r["status"], 0) < order.get(by[k]["status"], 0):
                by[k] = r
        rows = list(by.values())
        info = dict(parts[0]["info"])
        info["counts"] = {s: sum(r["status"] == s for r in rows)
                          for s in ["passed", "FAILED", "skipped", "not built"]}
        write_report(args.out, info, rows)
        return 1 if info["counts"]["FAILED"] else 0
    bundle = json.load(open(os.path.join(HERE, "bundle.json")))
    devices, notes, _keep = load_runtime(bundle["libs"])
    rows = []
    for e in bundle["entries"]:
        exact = args.only.endswith("=")
        if (e["variant"] != args.only[:-1] if exact else not e["variant"].startswith(args.only)) \
                or args.model not in e["model"]:
            continue
        row = {"model": e["model"], "variant": e["variant"], "status": "", "max_rel_err": None,
               "median_ms": None, "min_ms": None, "note": ""}
        rows.append(row)
        if e["so"] is None:
            row.update(status="not built", note=e["compile_error"] or "")
            continue
        if e["device"] == "cuda" and not devices:
            row.update(status="skipped", note="no CUDA device")
            continue
        try:
            model = Model(os.path.join(HERE, e["so"]))
            feeds = dict(np.load(os.path.join(HERE, e["inputs"])))
            want = dict(np.load(os.path.join(HERE, e["reference"])))
            outs = model.run({t.name: feeds[t.name] for t in model.inputs})
            err = max((rel_error(outs[k], v) for k, v in want.items() if k in outs), default=0.0)
            missing = [k for k in want if k not in outs]
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                model.run({t.name: feeds[t.name] for t in model.inputs})
                times.append((time.perf_counter() - t0) * 1e3)
            ok = err <= e["tolerance"] and not missing
            twin_note = ""
            if e.get("twin"):
                # bf16: the same roundings on the CPU (only the order of the
                # f32 sums differs).
                twin = dict(np.load(os.path.join(HERE, e["twin"])))
                terr = max((rel_error(outs[k], v) for k, v in twin.items() if k in outs),
                           default=0.0)
                ok = ok and terr <= e["twin_tolerance"]
                twin_note = "twin %.1e" % terr
            if ok and args.threads > 1:
                worst = concurrent(model, feeds, want, args.threads, args.repeat)
                err = max(err, worst)
                ok = worst <= e["tolerance"]
                if not ok:
                    missing = ["(%d concurrent callers: max rel err %.2e)" % (args.threads, worst)]
            row.update(status="passed" if ok else "FAILED", max_rel_err=err,
                       median_ms=float(np.median(times)) if times else None,
                       min_ms=float(np.min(times)) if times else None,
                       note="; ".join(n for n in [("missing outputs %s" % missing)
                                                   if missing else "", twin_note] if n))
        except (RuntimeError_, OSError, ValueError) as ex:
            row.update(status="FAILED", note=str(ex).splitlines()[0][:200])
    counts = {s: sum(r["status"] == s for r in rows) for s in ["passed", "FAILED", "skipped", "not built"]}
    info = {"machine": platform.platform(), "python": platform.python_version(),
            "numpy": np.__version__, "cuda_devices": devices, "notes": notes,
            "chip": bundle.get("chip"), "counts": counts}
    write_report(args.out, info, rows)
    print("run: %d passed, %d failed, %d skipped, %d not built (%s)" % (
        counts["passed"], counts["FAILED"], counts["skipped"], counts["not built"],
        "; ".join(notes)))
    return 1 if counts["FAILED"] else 0


def write_report(out, info, rows):
    json.dump({"info": info, "results": rows}, open(out + ".json", "w"), indent=1)
    with open(out + ".md", "w") as f:
        f.write("# lstm-opt GPU bundle report\n\n")
        for k, v in info.items():
            f.write("- %s: %s\n" % (k, v))
        f.write("\n| model | variant | status | max rel err | median ms | min ms | note |\n")
        f.write("|---|---|---|---:|---:|---:|---|\n")
        for r in rows:
            fmt = lambda x, p: "" if x is None else p % x  # noqa: E731
            f.write("| %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["model"], r["variant"], r["status"], fmt(r["max_rel_err"], "%.2e"),
                fmt(r["median_ms"], "%.4f"), fmt(r["min_ms"], "%.4f"), r["note"].replace("|", "/")))


if __name__ == "__main__":
    sys.exit(main())
