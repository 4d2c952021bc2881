#!/usr/bin/env python3
"""CPU backend benchmark: one run, one machine, five columns per size.

For each size (T, B, I, H[, layers]) of an LSTM (or GRU) it builds the
hand-written unrolled ONNX graph, fuses it with lstm-opt, and measures

  ort_unrolled  ONNX Runtime (CPU EP, intra_op_num_threads = K) on the
                unrolled graph
  ort_fused     ONNX Runtime on lstm-opt's output (one LSTM/GRU node per layer)
  ov_unrolled   OpenVINO (CPU plugin, INFERENCE_NUM_THREADS = K, f32 inference
                precision: no bf16 on AMX machines) on the unrolled graph
  ov_fused      OpenVINO on lstm-opt's output ("n/a" without the openvino
                package: pip install openvino)
  onednn        oneDNN's LSTM / GRU / linear-before-reset GRU primitive on the
                same weights (bench/onednn_rnn.cpp, built here with g++ against
                Debian's libdnnl-dev), its outputs checked against ORT
  lstm_run      lstm-opt's compiled code: build/bin/lstm-run MODEL.onnx
                --inputs in.npz --outputs out.npz --bench N --threads K
                ("n/a" with the error recorded when missing or failing)
  floor         the roofline floor from this machine's measured sgemm peak
                (OpenBLAS, K threads; without OpenBLAS the FMA instructions'
                peak) and read bandwidths (L2 / L3 / DRAM), bench/roofline/*.c,
                built and run here; with the bf16 / int8 columns, each
                precision's floor too: its weights' bytes, and its products at
                the peak of vdpbf16ps / vpdpbusd (bench/roofline/dot_peak.c)

and writes bench/results/cpu_backend.{md,json,png}. Every time is the median
(and min) wall time of one inference after warm-up. Outputs of every column
are compared with ORT on the unrolled graph (max |a - b| / max |ref|).

Usage: cpu_backend.py [--sizes NAME,...] [--quick] [--threads K] [--runs N] [--repeats R] [--target-cpu CPU]
                      [--lstm-opt build/bin/lstm-opt] [--lstm-run build/bin/lstm-run]
                      [--lstm-run-model unrolled|fused] [--work DIR] [--out PREFIX]
Size names: see SIZES (a --sizes item selects every size whose name contains it).
"""
import argparse
import datetime
import gc
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_unrolled_gru  # noqa: E402
import make_unrolled_lstm  # noqa: E402

# name -> (cell, T, B, I, H, layers, note)
SIZES = [
    ("lstm-100-1-64-64", "lstm", 100, 1, 64, 64, 1, "streaming: per-op overhead dominates"),
    ("lstm-25-1-512-512", "lstm", 25, 1, 512, 512, 1, ""),
    ("lstm-150-1-256-256", "lstm", 150, 1, 256, 256, 1, ""),
    ("lstm-25-4-1024-1024", "lstm", 25, 4, 1024, 1024, 1, ""),
    ("lstm-50-4-1536-1536", "lstm", 50, 4, 1536, 1536, 1, ""),
    ("lstm4-100-64-512-512", "lstm", 100, 64, 512, 512, 4, "4 stacked layers"),
    ("gru-187-1-1536-1536", "gru", 187, 1, 1536, 1536, 1, "PyTorch GRU (linear_before_reset)"),
]
COLUMNS = ["ort_unrolled", "ort_fused", "ov_unrolled", "ov_fused", "onednn", "lstm_run", "floor"]
LABELS = {"ort_unrolled": "ORT unrolled", "ort_fused": "ORT fused",
          "ov_unrolled": "OpenVINO unrolled", "ov_fused": "OpenVINO fused", "onednn": "oneDNN",
          "lstm_run": "lstm-run", "floor": "floor",
          "ov_fused_default": "OpenVINO fused (default precision)"}
REL_TOL = 1e-4
BF16_REL_TOL = 1e-2  # lstm-run --precision=bf16 against f32
INT8_REL_TOL = 2e-2  # int8 columns against f32


def time_ort_int8(fused_path, feeds, threads, cfg, workdir):
    """ONNX Runtime's int8 LSTM: the fused model through
    onnxruntime.quantization.quantize_dynamic (per-channel int8 weights:
    com.microsoft.DynamicQuantizeLSTM, activations quantized per GEMM call).
    ORT has no int8 GRU or RNN: those layers stay f32 and the column says so."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    q = os.path.join(workdir, "fused.int8.onnx")
    quantize_dynamic(fused_path, q, weight_type=QuantType.QInt8, per_channel=True)
    ops = [n.op_type for n in onnx.load(q, load_external_data=False).graph.node]
    if "DynamicQuantizeLSTM" not in ops:
        return {"error": "quantize_dynamic made no int8 layer (ORT quantizes LSTMs only)"}, {}
    col, outs = time_ort(q, feeds, threads, cfg)
    col["int8_ops"] = ops.count("DynamicQuantizeLSTM")
    return col, outs


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cpu_snapshot():
    """(busy CPU seconds of the whole machine, CPU seconds of this process and
    its waited-for children, wall seconds)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / os.sysconf("SC_CLK_TCK")
    t = os.times()
    return busy, t.user + t.system + t.children_user + t.children_system, time.monotonic()


def foreign_cpu(since):
    """Fraction of all cores other processes (or the hypervisor: steal) used since `since`."""
    b0, o0, w0 = since
    b1, o1, w1 = cpu_snapshot()
    if w1 - w0 <= 0:
        return 0.0
    return max(0.0, ((b1 - b0) - (o1 - o0)) / ((w1 - w0) * (os.cpu_count() or 1)))


def metered(fn, *args):
    """Runs fn(*args); puts into its result dict (the first one, if it returns
    a tuple) the share of the cores that other processes took meanwhile."""
    snap = cpu_snapshot()
    out = fn(*args)
    col = out[0] if isinstance(out, tuple) else out
    if isinstance(col, dict):
        col["foreign_cpu"] = round(foreign_cpu(snap), 3)
    return out


# ---------------------------------------------------------------- machine info

def machine_info(threads):
    info = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "hostname_hash": None, "cores": os.cpu_count(), "threads_K": threads,
            "platform": platform.platform(), "python": platform.python_version(),
            "onnxruntime": ort.__version__, "onnx": onnx.__version__, "numpy": np.__version__}
    try:
        flags = set()
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and "cpu_model" not in info:
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                # (x86's family and model tell apart CPUs of one name, e.g.
                # AMD EPYC Zen 4 (25, 17) and Zen 5 (26, ...).)
                key = line.split(":", 1)[0].strip()
                if key in ("cpu family", "model") and key not in info:
                    info[key] = line.split(":", 1)[1].strip()
                if line.startswith(("flags", "Features")) and not flags:
                    flags = set(line.split(":", 1)[1].split())
        # The vector ISA the numbers were measured with.
        isa = [n for f, n in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("fma", "FMA"),
                              ("avx512_bf16", "AVX512_BF16"), ("avx512_vnni", "AVX512_VNNI"),
                              ("avx_vnni", "AVX-VNNI"), ("amx_bf16", "AMX-BF16"),
                              ("amx_int8", "AMX-INT8"), ("asimd", "NEON")) if f in flags]
        if "cpu family" in info:
            info["cpu_model"] = (f"{info.get('cpu_model', '?')}, family {info['cpu family']} "
                                 f"model {info.get('model', '?')}")
        info["isa"] = ", ".join(isa) or platform.machine()
    except OSError:
        pass
    caches = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    if os.path.isdir(base):
        for idx in sorted(os.listdir(base)):
            d = os.path.join(base, idx)
            try:
                rd = lambda n: open(os.path.join(d, n)).read().strip()  # noqa: E731
                caches[f"L{rd('level')}{'d' if rd('type') == 'Data' else 'i' if rd('type') == 'Instruction' else ''}"] = {
                    "size": rd("size"), "shared_cpu_list": rd("shared_cpu_list")}
            except OSError:
                pass
    info["caches"] = caches
    for pkg in ("libdnnl2", "libdnnl-dev", "libopenblas0-pthread"):
        try:
            info[f"deb_{pkg}"] = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                                                capture_output=True, text=True).stdout.strip() or None
        except OSError:
            info[f"deb_{pkg}"] = None
    for tool in ("g++", "gcc"):
        try:
            info[tool] = subprocess.run([tool, "--version"], capture_output=True,
                                        text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            info[tool] = None
    try:
        info["git_commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"],
                                            capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    info["loadavg_start"] = os.getloadavg()
    del info["hostname_hash"]
    return info


def cache_bytes(level):
    """Size of the level's cache seen by one core (L2) or shared (L3), bytes."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    for idx in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        d = os.path.join(base, idx)
        try:
            if int(open(os.path.join(d, "level")).read()) == level and \
                    open(os.path.join(d, "type")).read().strip() != "Instruction":
                s = open(os.path.join(d, "size")).read().strip()
                mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1], 1)
                return int(s.rstrip("KMG")) * mult
        except (OSError, ValueError):
            pass
    return {1: 32 << 10, 2: 1 << 20, 3: 32 << 20}[level]


# ------------------------------------------------------------------ build tools

def build_tools(bindir):
    """Compiles onednn_rnn, sgemm_peak and membw; returns {name: path or error str}."""
    os.makedirs(bindir, exist_ok=True)
    obi = "/usr/include/x86_64-linux-gnu/openblas-pthread"
    jobs = {
        "onednn_rnn": ["g++", "-O2", "-std=c++17", "-fopenmp", os.path.join(HERE, "onednn_rnn.cpp"),
                       "-ldnnl", "-o", os.path.join(bindir, "onednn_rnn")],
        "sgemm_peak": ["gcc", "-O2", os.path.join(HERE, "roofline", "sgemm_peak.c")]
                      + (["-I" + obi] if os.path.isdir(obi) else [])
                      + ["-lopenblas", "-o", os.path.join(bindir, "sgemm_peak")],
        "membw": ["gcc", "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "roofline", "membw.c"),
                  "-o", os.path.join(bindir, "membw")],
        "dot_peak": ["gcc", "-O2", "-pthread", os.path.join(HERE, "roofline", "dot_peak.c"),
                     "-o", os.path.join(bindir, "dot_peak")],
    }
    out = {}
    for name, cmd in jobs.items():
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 0:
            out[name] = os.path.join(bindir, name)
        else:
            out[name] = "compile failed: " + " ".join(cmd) + "\n" + r.stderr[-2000:]
            log(f"[build] {name}: FAILED\n{r.stderr[-2000:]}")
    return out


# --------------------------------------------------------------------- roofline

def kv_lines(text):
    d = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            d[k.strip()] = v.strip()
    return d


def measure_roofline(tools, threads, quick):
    roof = {"threads": threads, "errors": []}
    sg = tools.get("sgemm_peak", "")
    n = 2048 if quick else 4096
    reps = 2 if quick else 4
    roof["sgemm"] = {}
    if os.path.isfile(sg):
        for k in sorted({1, threads}):
            r = subprocess.run([sg, str(n), str(k), str(reps)], capture_output=True, text=True)
            if r.returncode != 0:
                roof["errors"].append(f"sgemm_peak {k}: {r.stderr[-500:]}")
                continue
            d = kv_lines(r.stdout)
            roof["sgemm"][str(k)] = {"n": n, "reps": reps, "gflops_best": float(d["gflops_best"]),
                                     "gflops_mean": float(d["gflops_mean"])}
            roof["openblas_config"] = d.get("openblas_config")
            roof["openblas_core"] = d.get("openblas_core")
            log(f"[roofline] sgemm {n}^3, {k} thread(s): {d['gflops_best']} GFLOP/s")
    else:
        roof["errors"].append(sg)
    # The dot-product instructions' peaks (G multiply-adds/s, K threads at
    # once): the compute floor of the low-precision columns, and of f32 where
    # OpenBLAS (the sgemm peak) is not installed.
    dp = tools.get("dot_peak", "")
    roof["dot_gmacs"] = {}
    if os.path.isfile(dp):
        r = subprocess.run([dp, str(threads)], capture_output=True, text=True)
        if r.returncode != 0:
            roof["errors"].append(f"dot_peak: {r.stderr[-500:]}")
        for line in r.stdout.splitlines():
            p = line.split()
            if len(p) == 2 and p[1] != "n/a":
                roof["dot_gmacs"][p[0]] = float(p[1])
        log(f"[roofline] dot-product peaks, {threads} thread(s), GMAC/s: {roof['dot_gmacs']}")
    else:
        roof["errors"].append(dp)
    mb = tools.get("membw", "")
    roof["read_sweep"] = []
    if os.path.isfile(mb):
        r = subprocess.run([mb, str(threads), "1024", "1024"], capture_output=True, text=True)
        if r.returncode != 0:
            roof["errors"].append(f"membw: {r.stderr[-500:]}")
        for line in r.stdout.splitlines():
            p = line.split()
            if len(p) == 3 and p[0] == "read":
                roof["read_sweep"].append([int(p[1]), float(p[2])])
            elif len(p) == 3 and p[0] == "triad":
                roof["triad"] = {"bytes": int(p[1]), "gbs": float(p[2])}
    else:
        roof["errors"].append(mb)

    l2 = cache_bytes(2) * threads  # private per core: K cores hold K times that
    l3 = cache_bytes(3)
    roof["l2_bytes_total"], roof["l3_bytes"] = l2, l3
    sweep = roof["read_sweep"]

    def best(lo, hi):
        v = [g for s, g in sweep if lo < s <= hi]
        return max(v) if v else None
    # Each level's bandwidth is the best read rate measured over the buffer
    # sizes that belong to it (an optimistic choice: the floor is a lower bound).
    roof["bw_gbs"] = {"L2": best(cache_bytes(1) * threads, l2), "L3": best(l2, l3),
                      "DRAM": best(4 * l3, 1 << 62)}
    if roof.get("triad"):
        roof["bw_gbs"]["DRAM"] = max(roof["bw_gbs"]["DRAM"] or 0, roof["triad"]["gbs"]) or None
    peak = roof["sgemm"].get(str(threads), {}).get("gflops_best")
    roof["peak_gflops"] = peak
    log(f"[roofline] read GB/s L2 {roof['bw_gbs']['L2']} L3 {roof['bw_gbs']['L3']} "
        f"DRAM {roof['bw_gbs']['DRAM']}; triad {roof.get('triad')}")
    return roof


def sweep_bw(roof, nbytes):
    """Read bandwidth measured at this working-set size (log-size interpolation)."""
    sw = roof["read_sweep"]
    if not sw:
        return None
    if nbytes <= sw[0][0]:
        return sw[0][1]
    for (s0, g0), (s1, g1) in zip(sw, sw[1:]):
        if s0 <= nbytes <= s1:
            w = (math.log(nbytes) - math.log(s0)) / (math.log(s1) - math.log(s0))
            return g0 + w * (g1 - g0)
    return sw[-1][1]


# Bytes per weight and the dot_peak instructions whose peak bounds each
# precision's products (the best of those the CPU has).
PRECISION_BYTES = {"f32": 4, "bf16": 2, "int8": 1}
PRECISION_DOTS = {"f32": ("f32_fma_zmm", "f32_fma_ymm"), "bf16": ("bf16_dpbf16ps_zmm",),
                  "int8": ("int8_vpdpbusd_zmm", "int8_vpdpbusd_ymm")}


def compute_peak(roof, precision, native=True):
    """(GFLOP/s, source) bounding a precision's products: f32 OpenBLAS's sgemm
    peak where it was measured, else the instructions' peak from dot_peak;
    bf16 `vdpbf16ps` where the CPU has it, else the f32 FMAs the widened
    kernels run; int8 `vpdpbusd` (n/a without VNNI: the kernels then widen
    to 16-bit products, whose peak is not measured). native=False: code for
    another --target-cpu, so only the f32 FMAs are assumed."""
    dots = roof.get("dot_gmacs", {})
    if precision == "f32" and roof.get("peak_gflops"):
        return roof["peak_gflops"], "sgemm (OpenBLAS)"
    names = [n for n in PRECISION_DOTS[precision] if n in dots] if native else []
    if not names and precision == "bf16":
        names = [n for n in PRECISION_DOTS["f32"] if n in dots]
    if not names:
        return None, None
    best = max(names, key=lambda n: dots[n])
    return 2 * dots[best], best


def floor_model(cell, T, B, I, H, L, roof, precision="f32", native=True):
    """The roofline floor of one inference at a precision, ms: per layer, the
    hoisted input GEMM and T recurrent steps, each max(FLOPs / peak, bytes /
    bandwidth of the cache level the bytes fit in), the weights and x at the
    precision's bytes (bf16 and int8 weights fit nearer caches). Also the same
    with the bandwidth measured at the exact working-set size
    (floor_sweep_ms)."""
    G = 4 if cell == "lstm" else 3
    peak, source = compute_peak(roof, precision, native)
    bw = roof.get("bw_gbs", {})
    if not peak or not all(bw.get(k) for k in ("L2", "L3", "DRAM")):
        return None
    e = PRECISION_BYTES[precision]

    def level(nbytes):
        if nbytes <= roof["l2_bytes_total"]:
            return "L2"
        if nbytes <= roof["l3_bytes"]:
            return "L3"
        return "DRAM"

    def phase(flops, nbytes, repeat):
        lv = level(nbytes)
        t_c = flops / (peak * 1e9)
        t_m = nbytes / (bw[lv] * 1e9)
        t_s = nbytes / (sweep_bw(roof, nbytes) * 1e9)
        return {"flops": flops * repeat, "bytes": nbytes * repeat, "level": lv,
                "bound": "compute" if t_c >= t_m else "memory", "repeat": repeat,
                "ms": repeat * max(t_c, t_m) * 1e3, "sweep_ms": repeat * max(t_c, t_s) * 1e3}
    phases = []
    for l in range(L):
        il = I if l == 0 else H
        phases.append(dict(layer=l, phase="input_gemm",
                           **phase(2 * T * B * il * G * H, e * (il * G * H + T * B * il), 1)))
        phases.append(dict(layer=l, phase="recurrent",
                           **phase(2 * B * H * G * H, e * G * H * H, T)))
    return {"ms": sum(p["ms"] for p in phases), "sweep_ms": sum(p["sweep_ms"] for p in phases),
            "phases": phases, "peak_gflops": peak, "peak_source": source, "bw_gbs": bw,
            "precision": precision}


# ------------------------------------------------------------------ the models

def weight_scale(H):
    """Weights N(0, (0.5 / sqrt(H))^2): the recurrent map is contractive, so two
    correct implementations agree to float rounding after any number of steps.
    With a fixed 0.1 (the other benchmarks' choice) a large-H recurrence is
    chaotic (spectral radius ~0.1 sqrt(H), 3.9 at H = 1536): a 1e-7 rounding
    difference grows to 5e-2 over the GRU's 187 steps (measured), and the
    output check would compare noise."""
    return 0.5 / math.sqrt(H)


def build_model(cell, T, B, I, H, L):
    scale = weight_scale(H)
    if cell == "gru":
        assert L == 1
        return make_unrolled_gru.build(T, H, I, B, scale=scale)
    if L == 1:
        return make_unrolled_lstm.build(T, H, I, B, scale=scale)
    return make_unrolled_lstm.build_stacked(T, H, I, B, L, scale=scale)


def make_feeds(model, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def state_names(L, cell):
    """Per layer: (h0 input, c0 input, h_n output, c_n output) names."""
    out = []
    for l in range(L):
        suf = "" if L == 1 else f"_{l}"
        out.append(("h0" + suf, "c0" + suf if cell == "lstm" else None,
                    "h_n" + suf, "c_n" + suf if cell == "lstm" else None))
    return out


def rel_err(outs, ref):
    """max over outputs of max|a - b| / max|ref| (and the max abs error)."""
    rel, ab = 0.0, 0.0
    per = {}
    for k, r in ref.items():
        if k not in outs:
            continue
        a = np.asarray(outs[k], np.float32).reshape(r.shape)
        d = float(np.abs(a - r).max())
        scale = float(np.abs(r).max()) or 1.0
        per[k] = {"max_abs": d, "max_rel": d / scale}
        rel, ab = max(rel, d / scale), max(ab, d)
    missing = [k for k in ref if k not in outs]
    return {"max_rel_err": rel, "max_abs_err": ab, "per_output": per, "missing": missing,
            "pass": rel <= REL_TOL and not missing}


# ------------------------------------------------------------------- the columns

def ort_session(path, threads):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def time_ort(path, feeds, threads, cfg):
    t0 = time.perf_counter()
    sess = ort_session(path, threads)
    create_s = time.perf_counter() - t0
    names = [o.name for o in sess.get_outputs()]
    t0 = time.perf_counter()
    outs = sess.run(None, feeds)
    first_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(cfg.warmup - 1):
        sess.run(None, feeds)
    runs = n_runs(first_ms, cfg)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    del sess
    gc.collect()
    return {"median_ms": float(np.median(times)), "min_ms": float(np.min(times)), "runs": runs,
            "times_ms": times, "session_create_s": create_s, "first_run_ms": first_ms
            }, dict(zip(names, outs))


def time_openvino(path, feeds, threads, cfg, precision="f32"):
    """OpenVINO's CPU plugin on `path`: f32 precision (or, with precision
    None, what the plugin picks by itself: bf16 on CPUs with native bf16),
    K threads."""
    try:
        import openvino as ov
    except ImportError:
        return {"error": "openvino is not installed (pip install openvino)"}, {}
    t0 = time.perf_counter()
    core = ov.Core()
    config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
              "NUM_STREAMS": 1}
    if precision:
        config["INFERENCE_PRECISION_HINT"] = precision
    compiled = core.compile_model(path, "CPU", config)
    req = compiled.create_infer_request()
    create_s = time.perf_counter() - t0
    names = [o.get_any_name() for o in compiled.outputs]

    def run():
        req.infer(feeds)
        return [np.array(req.get_output_tensor(i).data) for i in range(len(names))]

    t0 = time.perf_counter()
    outs = run()
    first_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(cfg.warmup - 1):
        req.infer(feeds)
    runs = n_runs(first_ms, cfg)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        req.infer(feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    del req, compiled, core
    gc.collect()
    return {"median_ms": float(np.median(times)), "min_ms": float(np.min(times)), "runs": runs,
            "times_ms": times, "session_create_s": create_s, "first_run_ms": first_ms,
            "version": ov.__version__, "precision": precision or "default"}, dict(zip(names, outs))


def n_runs(est_ms, cfg):
    """As many runs as fit the per-cell time budget, within [min_runs, runs]."""
    if est_ms is None or est_ms <= 0:
        return cfg.runs
    return int(max(cfg.min_runs, min(cfg.runs, cfg.budget * 1e3 // est_ms)))


def rnn_nodes(fused):
    return [n for n in fused.graph.node if n.op_type in ("LSTM", "GRU", "RNN")]


def run_onednn(tools, fused_path, cell, T, B, I, H, L, feeds, ref, workdir, threads, est_ms, cfg):
    exe = tools.get("onednn_rnn", "")
    if not os.path.isfile(exe):
        return {"error": exe}
    fused = onnx.load(fused_path)
    inits = {i.name: numpy_helper.to_array(i) for i in fused.graph.initializer}
    nodes = rnn_nodes(fused)
    want = "LSTM" if cell == "lstm" else "GRU"
    if len(nodes) != L or any(n.op_type != want for n in nodes):
        return {"error": f"fused model has {[n.op_type for n in nodes]}, expected {L} x {want}"}
    Ws, Rs, Bs, lbr = [], [], [], set()
    for n in nodes:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        bad = {k: v for k, v in attrs.items()
               if k not in ("direction", "hidden_size", "linear_before_reset", "layout")}
        if attrs.get("direction", b"forward") != b"forward" or attrs.get("layout", 0) != 0 or bad:
            return {"error": f"unsupported {n.op_type} attributes for this harness: {attrs}"}
        lbr.add(int(attrs.get("linear_before_reset", 0)))
        W, R = inits[n.input[1]], inits[n.input[2]]
        Bv = inits[n.input[3]] if len(n.input) > 3 and n.input[3] else \
            np.zeros((1, 2 * R.shape[1]), np.float32)
        Ws.append(W[0])
        Rs.append(R[0])
        Bs.append(Bv[0])
    kind = "lstm" if cell == "lstm" else ("lbr_gru" if lbr == {1} else "gru")
    d = os.path.join(workdir, "onednn")
    os.makedirs(d, exist_ok=True)
    names = state_names(L, cell)
    np.ascontiguousarray(np.stack(Ws), np.float32).tofile(os.path.join(d, "W.bin"))
    np.ascontiguousarray(np.stack(Rs), np.float32).tofile(os.path.join(d, "R.bin"))
    np.ascontiguousarray(np.stack(Bs), np.float32).tofile(os.path.join(d, "B.bin"))
    feeds["x"].tofile(os.path.join(d, "x.bin"))
    np.stack([feeds[h0] for h0, _, _, _ in names]).tofile(os.path.join(d, "h0.bin"))
    if cell == "lstm":
        np.stack([feeds[c0] for _, c0, _, _ in names]).tofile(os.path.join(d, "c0.bin"))
    runs = n_runs(est_ms, cfg)
    cmd = [exe, "--dir", d, "--cell", kind, "--T", str(T), "--B", str(B), "--I", str(I),
           "--H", str(H), "--L", str(L), "--runs", str(runs), "--warmup", str(cfg.warmup)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=cfg.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {cfg.timeout} s", "cmd": cmd}
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout)[-2000:], "cmd": cmd}
    kv = kv_lines(r.stdout)
    m = re.findall(r"median_ms:\s*([\d.eE+-]+)\s+min_ms:\s*([\d.eE+-]+)", r.stdout)
    res = {"median_ms": float(m[-1][0]), "min_ms": float(m[-1][1]), "runs": runs,
           "times_ms": [float(t) for t in kv.get("runs_ms", "").split()],
           "onednn_version_full": kv.get("onednn_version"),
           "primitive": kind, "onednn_version": (kv.get("onednn_version") or "").split(" ")[0] or None, "isa": kv.get("isa"),
           "omp_threads": kv.get("threads"), "impl": kv.get("impl"), "cmd": cmd}
    outs = {"y": np.fromfile(os.path.join(d, "y.bin"), np.float32).reshape(T, B, H)}
    hn = np.fromfile(os.path.join(d, "hn.bin"), np.float32).reshape(L, B, H)
    cn = np.fromfile(os.path.join(d, "cn.bin"), np.float32).reshape(L, B, H) if cell == "lstm" else None
    for l, (_, _, hname, cname) in enumerate(names):
        outs[hname] = hn[l]
        if cname:
            outs[cname] = cn[l]
    res["check"] = rel_err(outs, ref)
    return res


def run_lstm_run(exe, model_path, npz, workdir, threads, ref, est_ms, cfg, extra=()):
    if not os.path.isfile(exe):
        return {"error": f"{exe} not found"}
    out_npz = os.path.join(workdir, "lstm_run_out.npz")
    if os.path.exists(out_npz):
        os.remove(out_npz)
    runs = n_runs(est_ms, cfg)
    cmd = [exe, model_path, "--inputs", npz, "--outputs", out_npz, "--bench", str(runs),
           "--threads", str(threads)]
    if cfg.target_cpu:
        cmd.append("--target-cpu=" + cfg.target_cpu)
    cmd += list(extra)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    # `repeats` separate processes (each compiles the model and times `runs`
    # inferences): the figure is the median of their medians, the spread
    # max/min of those medians (how much a run depends on luck: thread
    # placement, the barrier, what the caches hold), the jitter max/min of
    # single inferences over all of them.
    medians, mins, maxes = [], [], []
    for _ in range(max(1, cfg.repeats)):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=cfg.timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {cfg.timeout} s", "cmd": cmd}
        out = r.stdout + "\n" + r.stderr
        m = re.findall(r"median_ms:\s*([\d.eE+-]+)\s+min_ms:\s*([\d.eE+-]+)", out)
        if r.returncode != 0 or not m:
            return {"error": f"exit {r.returncode}: " + out.strip()[-2000:], "cmd": cmd}
        medians.append(float(m[-1][0]))
        mins.append(float(m[-1][1]))
        mx = re.findall(r"max_ms:\s*([\d.eE+-]+)", out)
        if mx:
            maxes.append(float(mx[-1]))
    res = {"median_ms": float(np.median(medians)), "min_ms": min(mins), "runs": runs,
           "repeats": len(medians), "run_medians_ms": medians,
           "spread": max(medians) / min(medians), "cmd": cmd,
           "stdout_tail": r.stdout[-1500:]}
    if len(maxes) == len(medians):
        res["max_ms"] = max(maxes)
        res["jitter"] = max(maxes) / min(mins)
    if os.path.exists(out_npz):
        with np.load(out_npz) as z:
            res["check"] = rel_err({k: z[k] for k in z.files}, ref)
    else:
        res["check"] = {"error": "no --outputs file written"}
    return res


# ---------------------------------------------------------------------- one size

def run_size(entry, cfg, tools, roof, work):
    name, cell, T, B, I, H, L, note = entry
    res = {"name": name, "cell": cell, "T": T, "B": B, "I": I, "H": H, "layers": L, "note": note,
           "columns": {}}
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    t0 = time.perf_counter()
    model = build_model(cell, T, B, I, H, L)
    src = os.path.join(d, "unrolled.onnx")
    onnx.save(model, src)
    res["unrolled_nodes"] = len(model.graph.node)
    res["build_s"] = time.perf_counter() - t0
    feeds = make_feeds(model)
    del model
    npz = os.path.join(d, "in.npz")
    np.savez(npz, **feeds)
    log(f"[{name}] unrolled: {res['unrolled_nodes']} nodes ({res['build_s']:.1f} s)")

    dst = os.path.join(d, "fused.onnx")
    t0 = time.perf_counter()
    r = subprocess.run([cfg.lstm_opt, src, "-o", dst, "--report=json"], capture_output=True, text=True)
    res["lstm_opt_s"] = time.perf_counter() - t0
    fused_ok = r.returncode == 0 and os.path.exists(dst)
    if fused_ok:
        fused = onnx.load(dst, load_external_data=False)
        kinds = [n.op_type for n in rnn_nodes(fused)]
        res["fused_nodes"] = len(fused.graph.node)
        res["fused_rnn_ops"] = kinds
        del fused
        want = ["LSTM" if cell == "lstm" else "GRU"] * L
        if kinds != want:
            res["fusion_warning"] = f"expected {want}, lstm-opt made {kinds}"
            log(f"[{name}] WARNING: {res['fusion_warning']}")
        log(f"[{name}] lstm-opt: {res['fused_nodes']} nodes, {kinds} ({res['lstm_opt_s']:.1f} s)")
    else:
        res["lstm_opt_error"] = (r.stderr or r.stdout)[-2000:]
        log(f"[{name}] lstm-opt FAILED: {res['lstm_opt_error'][-300:]}")

    # 1. ORT on the unrolled graph: also the reference outputs.
    col, ref = metered(time_ort, src, feeds, cfg.threads, cfg)
    res["columns"]["ort_unrolled"] = col
    log(f"[{name}] ORT unrolled: {col['median_ms']:.3f} ms (x{col['runs']}, "
        f"session {col['session_create_s']:.1f} s)")

    # 2. ORT on the fused graph.
    est = col["median_ms"]
    if fused_ok:
        col, outs = metered(time_ort, dst, feeds, cfg.threads, cfg)
        col["check"] = rel_err(outs, ref)
        res["columns"]["ort_fused"] = col
        est = col["median_ms"]
        log(f"[{name}] ORT fused: {col['median_ms']:.3f} ms (x{col['runs']}), "
            f"rel err {col['check']['max_rel_err']:.1e}")
    else:
        res["columns"]["ort_fused"] = {"error": "lstm-opt failed"}

    # OpenVINO on both graphs (f32), and on the fused one at the precision
    # it picks by itself (bf16 where the CPU has it natively).
    for key, path, prec in (("ov_unrolled", src, "f32"),
                            ("ov_fused", dst if fused_ok else None, "f32"),
                            ("ov_fused_default", dst if fused_ok else None, None)):
        if path is None:
            res["columns"][key] = {"error": "lstm-opt failed"}
            continue
        try:
            col, outs = metered(time_openvino, path, feeds, cfg.threads, cfg, prec)
        except Exception as e:  # noqa: BLE001  (a plugin failure is a result)
            col, outs = {"error": f"{type(e).__name__}: {e}"[-2000:]}, {}
        if "error" not in col:
            col["check"] = rel_err(outs, ref)
            if prec is None:  # possibly bf16: checked against the bf16 bound
                col["check"]["pass"] = col["check"]["max_rel_err"] <= BF16_REL_TOL
            log(f"[{name}] {LABELS[key]}: {col['median_ms']:.3f} ms (x{col['runs']}), "
                f"rel err {col['check']['max_rel_err']:.1e}")
        else:
            log(f"[{name}] {LABELS[key]}: n/a: {col['error'][-200:]}")
        res["columns"][key] = col

    # 3. oneDNN on the fused graph's weights.
    if fused_ok:
        col = metered(run_onednn, tools, dst, cell, T, B, I, H, L, feeds, ref, d, cfg.threads, est, cfg)
    else:
        col = {"error": "lstm-opt failed (weights are taken from the fused model)"}
    res["columns"]["onednn"] = col
    if "error" in col:
        log(f"[{name}] oneDNN: n/a: {col['error'][-300:]}")
    else:
        log(f"[{name}] oneDNN ({col['primitive']}): {col['median_ms']:.3f} ms (x{col['runs']}), "
            f"rel err {col['check']['max_rel_err']:.1e} {'ok' if col['check']['pass'] else 'FAIL'}")

    # 4. lstm-run.
    order = [src, dst] if cfg.lstm_run_model == "unrolled" else [dst, src]
    order = [p for p in order if os.path.exists(p)]
    col, tried = None, []
    for p in order:
        c = metered(run_lstm_run, cfg.lstm_run, p, npz, d, cfg.threads, ref, est, cfg)
        c["model"] = os.path.basename(p).replace(".onnx", "")
        tried.append(c)
        if "error" not in c or not os.path.isfile(cfg.lstm_run):
            break
    col = next((c for c in tried if "error" not in c), tried[0] if tried else {"error": "no model"})
    if len(tried) > 1:
        col["attempts"] = [{k: c.get(k) for k in ("model", "error")} for c in tried]
    res["columns"]["lstm_run"] = col
    if "error" in col:
        log(f"[{name}] lstm-run: n/a: {col['error'][-300:]}")
    else:
        chk = col.get("check", {})
        log(f"[{name}] lstm-run ({col['model']}): {col['median_ms']:.3f} ms, "
            f"rel err {chk.get('max_rel_err', float('nan')):.1e}")

    # 4b. lstm-run at bf16 (weights bf16, x and h rounded for the products),
    # on the model the f32 column ran.
    if cfg.bf16 and "error" not in col:
        p = next(q for q in order if os.path.basename(q).replace(".onnx", "") == col["model"])
        c = metered(run_lstm_run, cfg.lstm_run, p, npz, d, cfg.threads, ref, est, cfg,
                    ["--precision=bf16"])
        if "max_rel_err" in c.get("check", {}):
            # The precision's own error is the check: the bound, 1e-2.
            c["check"]["pass"] = c["check"]["max_rel_err"] <= BF16_REL_TOL
        res["columns"]["lstm_run_bf16"] = c
        if "error" in c:
            log(f"[{name}] lstm-run bf16: n/a: {c['error'][-300:]}")
        else:
            log(f"[{name}] lstm-run bf16: {c['median_ms']:.3f} ms, "
                f"rel err {c.get('check', {}).get('max_rel_err', float('nan')):.1e}")

    # 4c. int8: lstm-run (weights int8 per gate row, x and h quantized per
    # row and step) and ONNX Runtime's DynamicQuantizeLSTM on the fused model.
    if cfg.int8 and "error" not in col:
        p = next(q for q in order if os.path.basename(q).replace(".onnx", "") == col["model"])
        c = metered(run_lstm_run, cfg.lstm_run, p, npz, d, cfg.threads, ref, est, cfg,
                    ["--precision=int8"])
        if "max_rel_err" in c.get("check", {}):
            c["check"]["pass"] = c["check"]["max_rel_err"] <= INT8_REL_TOL
        res["columns"]["lstm_run_int8"] = c
        if "error" in c:
            log(f"[{name}] lstm-run int8: n/a: {c['error'][-300:]}")
        else:
            log(f"[{name}] lstm-run int8: {c['median_ms']:.3f} ms, "
                f"rel err {c.get('check', {}).get('max_rel_err', float('nan')):.1e}")
        if fused_ok:
            try:
                c, outs = metered(time_ort_int8, dst, feeds, cfg.threads, cfg, d)
            except Exception as e:  # noqa: BLE001  (a quantizer failure is a result)
                c, outs = {"error": f"{type(e).__name__}: {e}"[-2000:]}, {}
            if "error" not in c:
                c["check"] = rel_err(outs, ref)
                c["check"]["pass"] = c["check"]["max_rel_err"] <= INT8_REL_TOL
                log(f"[{name}] ORT DynamicQuantizeLSTM: {c['median_ms']:.3f} ms, "
                    f"rel err {c['check']['max_rel_err']:.1e}")
            else:
                log(f"[{name}] ORT int8: n/a: {c['error'][-200:]}")
            res["columns"]["ort_int8"] = c

    # 5. The floor, and the floors of the precisions measured.
    for prec, key in (("f32", "floor"), ("bf16", "floor_bf16"), ("int8", "floor_int8")):
        if prec != "f32" and f"lstm_run_{prec}" not in res["columns"]:
            continue
        fl = floor_model(cell, T, B, I, H, L, roof, prec, native=not cfg.target_cpu)
        res["columns"][key] = {"median_ms": fl["ms"], "min_ms": fl["ms"], **fl} if fl else \
            {"error": "roofline measurement failed" if prec == "f32" or roof.get("dot_gmacs")
             else f"no peak measured for {prec} products"}
        if fl:
            log(f"[{name}] {prec} floor: {fl['ms']:.3f} ms (sweep-bandwidth floor "
                f"{fl['sweep_ms']:.3f} ms; products at {fl['peak_gflops']:.0f} GFLOP/s, "
                f"{fl['peak_source']})")

    # Ratios.
    ms = {k: res["columns"][k].get("median_ms") for k in COLUMNS}
    res["ratios"] = {}
    for k in COLUMNS:
        if k != "lstm_run" and ms[k] and ms["lstm_run"]:
            res["ratios"][f"{k}_vs_lstm_run"] = ms[k] / ms["lstm_run"]
        if k != "floor" and ms[k] and ms["floor"]:
            res["ratios"][f"{k}_vs_floor"] = ms[k] / ms["floor"]
    if not cfg.keep:
        shutil.rmtree(d, ignore_errors=True)
    return res


# ---------------------------------------------------------------------- reports

def fmt_ms(c):
    if not c or c.get("median_ms") is None:
        return "n/a"
    v = c["median_ms"]
    return f"{v:.3f}" if v < 10 else f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def fmt_ratio(v):
    return "n/a" if v is None else f"{v:.2f}x" if v < 10 else f"{v:.1f}x"


def fmt_err(c):
    chk = (c or {}).get("check")
    if not chk or "max_rel_err" not in chk:
        return "n/a"
    return f"{chk['max_rel_err']:.1e}" + ("" if chk["pass"] else " FAIL")


def size_label(r):
    s = f"{r['T']}, {r['B']}, {r['I']}, {r['H']}"
    if r["layers"] > 1:
        s += f" x{r['layers']} layers"
    return ("GRU " if r["cell"] == "gru" else "LSTM ") + s


def write_markdown(path, info, roof, results, cfg):
    L = []
    L.append("# CPU backend benchmark (`bench/cpu_backend.py`)\n")
    L.append(f"Measured {info['date']} on {info.get('cpu_model', '?')} ({info.get('isa', '?')}"
             f"{'; lstm-run with --target-cpu=' + cfg.target_cpu if cfg.target_cpu else ''}), "
             f"{info['cores']} cores, "
             f"K = {cfg.threads} threads for every column; onnxruntime {info['onnxruntime']}, "
             f"oneDNN {info.get('onednn_version') or info.get('deb_libdnnl2')}, "
             f"OpenBLAS {info.get('deb_libopenblas0-pthread')} ({roof.get('openblas_core')}); "
             f"load average at start {', '.join(f'{x:.2f}' for x in info['loadavg_start'])}"
             + ("; **--quick** (few repeats)" if cfg.quick else "") + ".\n")
    busy = [c["foreign_cpu"] for r in results for c in r["columns"].values()
            if c.get("median_ms") is not None and c.get("foreign_cpu") is not None]
    if busy and max(busy) > 0.1:
        L.append(f"**Warning: the machine was busy**: other processes took up to "
                 f"{100 * max(busy):.0f}% of the {info['cores']} cores while a column was measured "
                 "(`foreign_cpu` in the JSON), so these times are not representative; rerun on an "
                 "idle machine.\n")
    L.append("Median of N inferences after warm-up, ms (lower is better). Rel err: max |a - b| / "
             "max |ref| over all outputs, against ORT on the unrolled graph.\n")
    L.append("| T, B, I, H | unrolled nodes | ORT unrolled | ORT fused | OpenVINO unrolled | "
             "OpenVINO fused | oneDNN | lstm-run | floor "
             "| best fused peer / lstm-run | ORT fused / lstm-run | OpenVINO fused / lstm-run "
             "| oneDNN / lstm-run | lstm-run / floor | lstm-run spread: run medians max/min "
             "| lstm-run jitter: inferences max/min |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        c, q = r["columns"], r["ratios"]
        lr = fmt_ms(c.get("lstm_run"))
        if c.get("lstm_run", {}).get("model") == "fused" and lr != "n/a":
            lr += " (fused)"
        peers = [q.get(f"{k}_vs_lstm_run") for k in ("ort_fused", "ov_fused", "onednn")]
        peers = [v for v in peers if v is not None]
        lrc = c.get("lstm_run", {})
        spread = (f"{lrc['spread']:.3f} ({lrc['repeats']} runs)"
                  if lrc.get("spread") else "n/a")
        jitter = f"{lrc['jitter']:.2f}" if lrc.get("jitter") else "n/a"
        L.append(f"| {size_label(r)} | {r['unrolled_nodes']} | {fmt_ms(c.get('ort_unrolled'))} | "
                 f"{fmt_ms(c.get('ort_fused'))} | {fmt_ms(c.get('ov_unrolled'))} | "
                 f"{fmt_ms(c.get('ov_fused'))} | {fmt_ms(c.get('onednn'))} | {lr} | "
                 f"{fmt_ms(c.get('floor'))} | {fmt_ratio(min(peers) if peers else None)} | "
                 f"{fmt_ratio(q.get('ort_fused_vs_lstm_run'))} | {fmt_ratio(q.get('ov_fused_vs_lstm_run'))} | "
                 f"{fmt_ratio(q.get('onednn_vs_lstm_run'))} | "
                 f"{fmt_ratio(q.get('lstm_run_vs_floor'))} | {spread} | {jitter} |")
    if any("lstm_run_bf16" in r["columns"] for r in results):
        native = "avx512_bf16" in open("/proc/cpuinfo").read()
        how = ("the products are AVX512_BF16 vdpbf16ps" if native and not cfg.target_cpu
               else "the kernels widen the bf16 weights in registers")
        L.append("\nlstm-run at `--precision=bf16` (weights stored as bf16, x and h rounded to bf16 "
                 f"for the products, f32 accumulation; {how}) beside its f32; rel err against "
                 "ORT on the unrolled graph (f32):\n")
        L.append("| T, B, I, H | lstm-run f32 | lstm-run bf16 | f32 / bf16 | ORT fused / bf16 "
                 "| OpenVINO fused, default precision | OpenVINO default / bf16 "
                 "| rel err f32 | rel err bf16 | rel err OpenVINO default | bf16 floor "
                 "| lstm-run bf16 / floor |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in results:
            c = r["columns"]
            b = c.get("lstm_run_bf16", {})
            f, o = c.get("lstm_run", {}), c.get("ort_fused", {})
            ratio = lambda a, z: fmt_ratio(a["median_ms"] / z["median_ms"]  # noqa: E731
                                           if a.get("median_ms") and z.get("median_ms") else None)
            ovd = c.get("ov_fused_default", {})
            L.append(f"| {size_label(r)} | {fmt_ms(f)} | {fmt_ms(b)} | {ratio(f, b)} | "
                     f"{ratio(o, b)} | {fmt_ms(ovd)} | {ratio(ovd, b)} | {fmt_err(f)} | "
                     f"{fmt_err(b)} | {fmt_err(ovd)} | {fmt_ms(c.get('floor_bf16'))} | "
                     f"{ratio(b, c.get('floor_bf16', {}))} |")
    if any("lstm_run_int8" in r["columns"] for r in results):
        flags = open("/proc/cpuinfo").read()
        vnni = "avx512_vnni" in flags or "avx_vnni" in flags
        how = ("the products are VNNI vpdpbusd" if vnni and not cfg.target_cpu
               else "the kernels widen the int8 weights in registers")
        L.append("\nlstm-run at `--precision=int8` (weights int8 with one scale per gate row, x and h "
                 f"quantized per row and step to their range, exact integer products; {how}) beside "
                 "its f32 and ONNX Runtime's int8 LSTM (quantize_dynamic, per-channel: "
                 "com.microsoft.DynamicQuantizeLSTM); rel err against ORT on the unrolled graph (f32):\n")
        L.append("| T, B, I, H | lstm-run f32 | lstm-run int8 | f32 / int8 | ORT int8 "
                 "| ORT int8 / lstm-run int8 | rel err lstm-run int8 | rel err ORT int8 | int8 floor "
                 "| lstm-run int8 / floor | ORT int8 / floor |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in results:
            c = r["columns"]
            b, f, o = c.get("lstm_run_int8", {}), c.get("lstm_run", {}), c.get("ort_int8", {})
            ratio = lambda a, z: fmt_ratio(a["median_ms"] / z["median_ms"]  # noqa: E731
                                           if a.get("median_ms") and z.get("median_ms") else None)
            fl = c.get("floor_int8", {})
            L.append(f"| {size_label(r)} | {fmt_ms(f)} | {fmt_ms(b)} | {ratio(f, b)} | "
                     f"{fmt_ms(o)} | {ratio(o, b)} | {fmt_err(b)} | {fmt_err(o)} | {fmt_ms(fl)} | "
                     f"{ratio(b, fl)} | {ratio(o, fl)} |")
    L.append("\nEvery column against the floor, and the output checks:\n")
    L.append("| T, B, I, H | ORT unrolled / floor | ORT fused / floor | oneDNN / floor | lstm-run / floor "
             "| rel err ORT fused | rel err oneDNN (primitive) | rel err lstm-run | runs (unrolled, fused, "
             "oneDNN, lstm-run) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        c, q = r["columns"], r["ratios"]
        prim = c.get("onednn", {}).get("primitive")
        runs = ", ".join(str(c.get(k, {}).get("runs", "-")) for k in COLUMNS[:4])
        L.append(f"| {size_label(r)} | {fmt_ratio(q.get('ort_unrolled_vs_floor'))} | "
                 f"{fmt_ratio(q.get('ort_fused_vs_floor'))} | {fmt_ratio(q.get('onednn_vs_floor'))} | "
                 f"{fmt_ratio(q.get('lstm_run_vs_floor'))} | {fmt_err(c.get('ort_fused'))} | "
                 f"{fmt_err(c.get('onednn'))}{f' ({prim})' if prim else ''} | {fmt_err(c.get('lstm_run'))} "
                 f"| {runs} |")
    L.append("\nThe floor, per phase (summed over layers): time, what bounds it, where the weights "
             "are read from:\n")
    L.append("| T, B, I, H | precision | products' peak GFLOP/s | input GEMM GFLOP | input GEMM ms "
             "| recurrent GFLOP | recurrent MB read | recurrent ms | floor ms "
             "| floor with swept bandwidth ms |")
    L.append("|---|---|---|---:|---|---:|---:|---|---:|---:|")
    for r in results:
        for key, prec in (("floor", "f32"), ("floor_bf16", "bf16"), ("floor_int8", "int8")):
            fl = r["columns"].get(key)
            if fl is None:
                continue
            if "phases" not in fl:
                L.append(f"| {size_label(r)} | {prec} | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |")
                continue
            ph_in = [p for p in fl["phases"] if p["phase"] == "input_gemm"]
            ph_rec = [p for p in fl["phases"] if p["phase"] == "recurrent"]
            desc = lambda ps: f"{sum(p['ms'] for p in ps):.3f} ({ps[0]['bound']}, {ps[0]['level']})"  # noqa
            L.append(f"| {size_label(r)} | {prec} | {fl['peak_gflops']:.0f} ({fl['peak_source']}) | "
                     f"{sum(p['flops'] for p in ph_in) / 1e9:.3f} | {desc(ph_in)} | "
                     f"{sum(p['flops'] for p in ph_rec) / 1e9:.3f} | "
                     f"{sum(p['bytes'] for p in ph_rec) / 1e6:.1f} | {desc(ph_rec)} | {fl['ms']:.3f} | "
                     f"{fl['sweep_ms']:.3f} |")
    bw = roof.get("bw_gbs", {})
    sg = roof.get("sgemm", {})
    L.append(f"\nMachine roofline (K = {cfg.threads}): "
             + ("sgemm peak " + ", ".join(f"{v['gflops_best']:.0f} GFLOP/s at {k} thread(s)"
                                          for k, v in sg.items())
                + f" (OpenBLAS, {next(iter(sg.values()))['n']}^3)" if sg else
                "sgemm peak not measured (OpenBLAS not installed: the f32 floor uses the FMA "
                "instructions' peak)")
             + "; dot-product instructions (bench/roofline/dot_peak.c, K threads), G multiply-adds/s: "
             + (", ".join(f"{k} {v:.0f}" for k, v in roof.get("dot_gmacs", {}).items()) or "n/a")
             + "; read bandwidth "
             + ", ".join(f"{k} {v:.0f} GB/s" if v else f"{k} n/a" for k, v in bw.items())
             + (f"; triad {roof['triad']['gbs']:.1f} GB/s" if roof.get("triad") else "")
             + f". L2 {roof.get('l2_bytes_total', 0) >> 20} MiB over K cores, L3 "
             f"{roof.get('l3_bytes', 0) >> 20} MiB.\n")
    notes = []
    for r in results:
        for k in ("ort_fused", "ov_unrolled", "ov_fused", "onednn", "lstm_run"):
            e = r["columns"].get(k, {}).get("error")
            if e:
                lines = [x.strip() for x in e.strip().splitlines() if x.strip()] or [""]
                line = next((x for x in lines if "error" in x.lower()), lines[0])
                notes.append(f"- {r['name']} {LABELS[k]}: n/a: `{line[:240]}`")
        if r.get("fusion_warning"):
            notes.append(f"- {r['name']}: {r['fusion_warning']}")
    if notes:
        L.append("Not measured / warnings:\n")
        L.extend(notes)
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def write_chart(path, results, cfg):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        log(f"[chart] matplotlib missing ({e}); pip install matplotlib into the .venv")
        return False
    n = len(results)
    fig, ax = plt.subplots(figsize=(max(7, 1.9 * n + 2), 5))
    width = 0.8 / len(COLUMNS)
    colors = {"ort_unrolled": "#c44e52", "ort_fused": "#dd8452", "ov_unrolled": "#8172b3",
              "ov_fused": "#937860", "onednn": "#4c72b0",
              "lstm_run": "#55a868", "floor": "#7f7f7f"}
    from matplotlib.patches import Patch
    handles, missing = [], []
    for j, k in enumerate(COLUMNS):
        xs, ys = [], []
        for i, r in enumerate(results):
            x = i + (j - (len(COLUMNS) - 1) / 2) * width
            v = r["columns"].get(k, {}).get("median_ms")
            if v:
                xs.append(x)
                ys.append(v)
            else:
                missing.append(x)
        style = dict(facecolor=colors[k], hatch="//" if k == "floor" else None,
                     edgecolor="black" if k == "floor" else "white")
        bars = ax.bar(xs, ys, width, **style)
        for b, v in zip(bars, ys):
            ax.annotate(f"{v:.0f}" if v >= 100 else f"{v:.3g}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom",
                        fontsize=6, rotation=90, xytext=(0, 2), textcoords="offset points")
        handles.append(Patch(label=LABELS[k], **style))
    ax.set_yscale("log")
    vals = [c["median_ms"] for r in results for c in r["columns"].values() if c.get("median_ms")]
    if vals:
        ax.set_ylim(min(vals) / 2, max(vals) * 6)  # room for the value labels
    for x in missing:
        ax.annotate("n/a", (x, 0), xycoords=("data", "axes fraction"), ha="center", va="bottom",
                    fontsize=6, rotation=90, xytext=(0, 3), textcoords="offset points")
    ax.set_ylabel("ms per inference (median, log scale)")
    ax.set_xticks(range(n))
    ax.set_xticklabels([size_label(r).replace(" x", "\nx").replace("LSTM ", "LSTM\n")
                        .replace("GRU ", "GRU\n") for r in results], fontsize=8)
    ax.set_title(f"LSTM/GRU inference on the CPU, {cfg.threads} threads"
                 + (" (--quick)" if cfg.quick else ""))
    ax.legend(handles=handles, fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="", help="comma-separated name filters (see SIZES); default all")
    ap.add_argument("--quick", action="store_true", help="few repeats, small sgemm (a pipeline check)")
    ap.add_argument("--threads", type=int, default=2, help="K: threads for every column (default 2)")
    ap.add_argument("--runs", type=int, default=None, help="max timed runs per cell (default 200, within the time budget; quick 3)")
    ap.add_argument("--min-runs", type=int, default=None, help="min timed runs per cell (default 5; quick 3)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up runs (default 3; quick 1)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="lstm-run processes per cell; its spread is max/min of their medians "
                         "(default 3; quick 1)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of timed runs per cell before capping N (default 20; quick 2)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="per lstm-run / oneDNN call, seconds (default 600; quick 300)")
    ap.add_argument("--lstm-opt", default=os.path.join(ROOT, "build", "bin", "lstm-opt"))
    ap.add_argument("--lstm-run", default=os.path.join(ROOT, "build", "bin", "lstm-run"))
    ap.add_argument("--target-cpu", default="",
                    help="lstm-run --target-cpu (e.g. x86-64-v3: the AVX2 kernels on an AVX-512 machine)")
    ap.add_argument("--no-int8", dest="int8", action="store_false",
                    help="leave out the lstm-run --precision=int8 and ORT int8 columns")
    ap.add_argument("--no-bf16", dest="bf16", action="store_false",
                    help="leave out the lstm-run --precision=bf16 column")
    ap.add_argument("--lstm-run-model", choices=["unrolled", "fused"], default="unrolled",
                    help="which graph lstm-run gets first (the other is tried if it fails)")
    ap.add_argument("--work", default=None, help="work folder (default: a fresh temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the models and raw files")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu_backend"),
                    help="output prefix: writes PREFIX.md, PREFIX.json, PREFIX.png")
    cfg = ap.parse_args()
    q = cfg.quick
    cfg.runs = cfg.runs or (3 if q else 200)
    cfg.repeats = cfg.repeats or (1 if q else 3)
    cfg.min_runs = min(cfg.min_runs or (3 if q else 5), cfg.runs)
    cfg.warmup = max(1, cfg.warmup if cfg.warmup is not None else (1 if q else 3))
    cfg.budget = cfg.budget if cfg.budget is not None else (2 if q else 20)
    cfg.timeout = cfg.timeout or (300 if q else 600)

    sel = [s for s in SIZES if not cfg.sizes or any(f.strip() and f.strip() in s[0]
                                                     for f in cfg.sizes.split(","))]
    if not sel:
        ap.error(f"--sizes {cfg.sizes!r} matches none of {[s[0] for s in SIZES]}")
    work = cfg.work or tempfile.mkdtemp(prefix="lstm-opt-cpu-backend-")
    os.makedirs(work, exist_ok=True)
    log(f"work folder: {work}")

    info = machine_info(cfg.threads)
    tools = build_tools(os.path.join(work, "bin"))
    snap = cpu_snapshot()
    roof = measure_roofline(tools, cfg.threads, q)
    roof["foreign_cpu"] = round(foreign_cpu(snap), 3)
    results = []
    for entry in sel:
        try:
            results.append(run_size(entry, cfg, tools, roof, work))
        except Exception as e:  # keep going: one size's failure is recorded, not fatal
            import traceback
            log(f"[{entry[0]}] FAILED: {e}")
            results.append({"name": entry[0], "cell": entry[1], "T": entry[2], "B": entry[3],
                            "I": entry[4], "H": entry[5], "layers": entry[6], "note": entry[7],
                            "unrolled_nodes": "n/a", "columns": {}, "ratios": {},
                            "error": traceback.format_exc()[-3000:]})
    onednn_versions = {r["columns"].get("onednn", {}).get("onednn_version") for r in results} - {None}
    info["onednn_version"] = ", ".join(sorted(onednn_versions)) or None
    isas = {r["columns"].get("onednn", {}).get("isa") for r in results} - {None}
    info["onednn_isa"] = ", ".join(sorted(isas)) or None
    info["loadavg_end"] = os.getloadavg()
    info["tools"] = {k: (v if not os.path.isfile(v) else "built") for k, v in tools.items()}

    os.makedirs(os.path.dirname(os.path.abspath(cfg.out)), exist_ok=True)
    doc = {"machine": info, "config": {k: v for k, v in vars(cfg).items()}, "roofline": roof,
           "rel_tolerance": REL_TOL, "results": results,
           "columns": {k: LABELS[k] for k in COLUMNS}}
    with open(cfg.out + ".json", "w") as f:
        json.dump(doc, f, indent=1, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    write_markdown(cfg.out + ".md", info, roof, results, cfg)
    write_chart(cfg.out + ".png", results, cfg)
    log(f"wrote {cfg.out}.md, .json, .png")
    print(open(cfg.out + ".md").read())
    bad = [r["name"] for r in results
           if not r["columns"].get("onednn", {}).get("check", {}).get("pass", True)]
    if bad:
        log(f"oneDNN output check FAILED for {bad}")
    if not cfg.keep and not cfg.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
