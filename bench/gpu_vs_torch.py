#!/usr/bin/env python3
"""GPU speed, one run on one machine: lstm-opt's compiled models (the cuDNN
path and the generated kernels) against PyTorch on the same weights.

Two halves, because the GPU machine has no compiler:

    bench/gpu_vs_torch.py build OUT_DIR [--sizes lstm-100-1-64-64,...]
        (here, after scripts/build.sh: writes OUT_DIR/bench/<size>/<variant>.so
        and weights.npz, OUT_DIR/bench/bench.json, and this file as
        OUT_DIR/bench.py; scripts/gpu-bundle.sh calls it for its bundle)
    python3 bench.py [--repeat 50] [--sizes ...]
        (on the GPU machine, inside the bundle, next to run.py: needs numpy,
        PyTorch with CUDA, and the bundle's runtime libraries)

Models: bench/cpu_backend.py's unrolled graphs (make_unrolled_lstm/gru: the
PyTorch LSTMCell/GRUCell loop, 16-18 ONNX nodes per step, contractive
weights), compiled by lstm-opt from the unrolled graph with --target=cudnn
(the default: f32 with TF32 off and the algorithm chosen per layer; f16;
the standard and persist-static algorithms) and --target=gpu (step,
persistent).

Columns (milliseconds, median of --repeat runs after warm-up):
  host-to-host (h2h): numpy inputs in, numpy outputs out, as a user calls a
    compiled model: Model.run for lstm-opt; torch.from_numpy -> .cuda() ->
    forward -> .cpu() for PyTorch. This is the one the goals compare.
  device (dev): PyTorch's forward alone on device tensors, timed with CUDA
    events (for the PyTorch rows; lstm-opt's runtime copies inside its call).
Rows: torch-cudnn (nn.LSTM/nn.GRU on cuda, TF32 off), torch-cudnn-f16
(.half()), torch-eager-loop (the unrolled cell loop op by op on cuda: the
per-op baseline of the seed articles), and lstm-opt's variants. Every output
is compared with a float64 evaluation of the same equations (PyTorch on the
CPU); the inputs are drawn on the GPU machine from --seed.

Writes gpu_bench.md and gpu_bench.json next to itself (--out to change).
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (cell, T, B, I, H). The bench/ sizes that fit a 60 MiB bundle, and
# the seed size at B = 1, 4, 64.
SIZES = {
    "lstm-100-1-64-64": ("lstm", 100, 1, 64, 64),
    "lstm-100-4-64-64": ("lstm", 100, 4, 64, 64),
    "lstm-100-64-64-64": ("lstm", 100, 64, 64, 64),
    "lstm-150-1-256-256": ("lstm", 150, 1, 256, 256),
    "lstm-150-4-256-256": ("lstm", 150, 4, 256, 256),
    "lstm-150-64-256-256": ("lstm", 150, 64, 256, 256),
    "lstm-25-1-512-512": ("lstm", 25, 1, 512, 512),
    "lstm-100-64-512-512": ("lstm", 100, 64, 512, 512),
    "gru-100-1-64-64": ("gru", 100, 1, 64, 64),
    "gru-100-4-64-64": ("gru", 100, 4, 64, 64),
    "gru-100-64-64-64": ("gru", 100, 64, 64, 64),
    "gru-187-1-256-256": ("gru", 187, 1, 256, 256),
}
# The persistent kernel's goal sizes (LSTM and GRU, H <= 1024, B <= 4): T50
# and a 256-wide input so that the bundle stays small (the input projection
# is hoisted out of the recurrence; the per-step figures are the recurrence).
for _c in ("lstm", "gru"):
    for _h in (256, 512, 1024):
        for _b in (1, 4):
            SIZES["%s-50-%d-256-%d" % (_c, _b, _h)] = (_c, 50, _b, 256, _h)
# Batch 8, where the bf16 design's mma tiles (8 columns) are full.
for _c, _h in (("lstm", 256), ("lstm", 1024), ("gru", 1024)):
    SIZES["%s-50-8-256-%d" % (_c, _h)] = (_c, 50, 8, 256, _h)
GOAL_SIZES = [k for k, v in SIZES.items() if v[1] == 50 and v[3] == 256 and v[2] <= 4]
VARIANTS = {
    "cudnn-f32": ["--target=cudnn"],
    "cudnn-f16": ["--target=cudnn", "--cudnn-data-type=f16"],
    "cudnn-standard": ["--target=cudnn", "--cudnn-algo=standard"],
    "cudnn-persist": ["--target=cudnn", "--cudnn-algo=persist-static"],
    "gpu-step": ["--target=gpu", "--gpu-design=step"],
    # auto: per layer, cuDNN or the generated kernels by the measured table.
    "gpu-auto": ["--target=gpu"],
    "gpu-persistent": ["--target=gpu", "--gpu-design=persistent"],
    "gpu-persistent-barrier": ["--target=gpu", "--gpu-design=persistent",
                               "--gpu-grid-sync=barrier"],
    # The recurrent weights in shared memory even where they fit registers.
    "gpu-persistent-shared": ["--target=gpu", "--gpu-design=persistent",
                              "--gpu-weights=shared"],
    # bf16 recurrent products on the tensor cores (mma.sync, f32 sums).
    "gpu-persistent-bf16": ["--target=gpu", "--gpu-design=persistent",
                            "--precision=bf16"],
    # Fewer, larger blocks than the default (one per SM): 4, 8, 12 and 16 units.
    "gpu-persistent-u4": ["--target=gpu", "--gpu-design=persistent",
                          "--gpu-units-per-block=4"],
    "gpu-persistent-u8": ["--target=gpu", "--gpu-design=persistent",
                          "--gpu-units-per-block=8"],
    "gpu-persistent-u12": ["--target=gpu", "--gpu-design=persistent",
                           "--gpu-units-per-block=12"],
    "gpu-persistent-u16": ["--target=gpu", "--gpu-design=persistent",
                           "--gpu-units-per-block=16"],
}
TOL = {"f32": 1e-4, "f16": 2e-2, "bf16": 3e-2}


# ------------------------------------------------------------------ build (here)

def build(args):
    root = os.path.dirname(HERE)
    sys.path.insert(0, HERE)
    from cpu_backend import build_model  # the CPU benchmark's own builders
    out = os.path.join(os.path.abspath(args.out), "bench")
    os.makedirs(out, exist_ok=True)
    lstm_opt = args.lstm_opt or os.path.join(root, "build", "bin", "lstm-opt")
    entries = []
    for name in select(args.sizes):
        cell, T, B, I, H = SIZES[name]
        sdir = os.path.join(out, name)
        os.makedirs(sdir, exist_ok=True)
        model = build_model(cell, T, B, I, H, 1)
        onnx_path = os.path.join(sdir, "unrolled.onnx")
        import onnx
        from onnx import numpy_helper
        if args.grid_weights:
            # Weights on a grid of 1/N of their spread: the same kind of
            # model, but the compiled libraries compress (xz) for transport.
            for t in model.graph.initializer:
                a = numpy_helper.to_array(t)
                if a.dtype == np.float32 and a.size > 1024:
                    q = float(a.std()) / args.grid_weights or 1.0
                    t.CopyFrom(numpy_helper.from_array(
                        (np.round(a / q) * q).astype(np.float32), t.name))
        onnx.save(model, onnx_path)
        inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        if cell == "lstm":
            w = {"W_T": inits["W_T"], "R_T": inits["R_T"], "b": inits["b"]}
        else:
            w = {"W_T": inits["W_ih_T"], "R_T": inits["W_hh_T"], "b": inits["b_ih"],
                 "b_hh": inits["b_hh"]}
        np.savez(os.path.join(sdir, "weights.npz"), **w)
        built = {}
        for v, flags in VARIANTS.items():
            if args.variants and v not in args.variants.split(","):
                continue
            if not args.variants and v.endswith(("-u4", "-u8", "-u12", "-u16")):
                continue
            so = os.path.join(sdir, v + ".so")
            cmd = [lstm_opt, onnx_path, "-o", so, "--target-cpu=" + args.target_cpu] + flags
            if "--target=gpu" in flags:
                cmd.append("--gpu-chip=" + args.chip)
            p = subprocess.run(cmd, capture_output=True, text=True)
            if os.path.exists(so[:-3] + ".h"):
                os.remove(so[:-3] + ".h")
            err = None
            if p.returncode != 0:
                lines = [l for l in p.stderr.splitlines() if "error" in l] or \
                    p.stderr.splitlines() or ["exit %d" % p.returncode]
                err = lines[-1]
            built[v] = {"so": os.path.relpath(so, out) if err is None else None,
                        "compile_error": err}
            print("%-22s %-15s %s" % (name, v, "ok" if err is None else err), flush=True)
        os.remove(onnx_path)
        entries.append({"size": name, "cell": cell, "T": T, "B": B, "I": I, "H": H,
                        "weights": os.path.relpath(os.path.join(sdir, "weights.npz"), out),
                        "variants": built})
    if args.append and os.path.exists(os.path.join(out, "bench.json")):
        old = json.load(open(os.path.join(out, "bench.json")))["entries"]
        names = {e["size"] for e in entries}
        entries = [e for e in old if e["size"] not in names] + entries
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump({"chip": args.chip, "entries": entries}, f, indent=1)
    shutil.copy2(os.path.abspath(__file__), os.path.join(os.path.abspath(args.out), "bench.py"))


def select(sizes):
    """Names from a comma-separated list ("goal": the goal sizes); empty:
    every size but the goal sizes."""
    names = []
    for s in sizes.split(",") if sizes else [k for k in SIZES if k not in GOAL_SIZES]:
        names += list(GOAL_SIZES) if s == "goal" else [s] if s else []
    for s in names:
        if s not in SIZES:
            sys.exit("gpu_vs_torch: unknown size '%s' (%s)" % (s, ", ".join(SIZES)))
    return names


# ------------------------------------------------------------ run (GPU machine)

def cell_loop(torch, cell, w, x, h0, c0):
    """The unrolled graph's equations, op by op (what the per-op ONNX graph
    runs): one MatMul for the input, one for the state, the gate ops."""
    W, R, b = w["W_T"], w["R_T"], w["b"]
    h, c, ys = h0, c0, []
    for t in range(x.shape[0]):
        if cell == "lstm":
            g = x[t] @ W + b + h @ R
            i, f, gg, o = g.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
            h = torch.sigmoid(o) * torch.tanh(c)
        else:
            gi = x[t] @ W + b
            gh = h @ R + w["b_hh"]
            ir, iz, inn = gi.chunk(3, dim=1)
            hr, hz, hn = gh.chunk(3, dim=1)
            r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
            n = torch.tanh(inn + r * hn)
            h = (h - n) * z + n
        ys.append(h.unsqueeze(0))
    out = {"y": torch.cat(ys, 0), "h_n": h}
    if cell == "lstm":
        out["c_n"] = c
    return out


def torch_module(torch, cell, w, dtype):
    I, G = w["W_T"].shape
    H = w["R_T"].shape[0]
    m = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(I, H)
    with torch.no_grad():
        m.weight_ih_l0.copy_(torch.from_numpy(w["W_T"].T.copy()))
        m.weight_hh_l0.copy_(torch.from_numpy(w["R_T"].T.copy()))
        m.bias_ih_l0.copy_(torch.from_numpy(w["b"]))
        m.bias_hh_l0.copy_(torch.from_numpy(w["b_hh"]) if "b_hh" in w else torch.zeros(G))
    return m.cuda().to(dtype).eval()


def median_ms(fn, repeat, sync):
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), float(np.min(times))


def event_ms(torch, fn, repeat):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return float(np.median(times))


def max_rel(got, ref):
    return max(float(np.max(np.abs(got[k].astype(np.float64) - ref[k]))
                     / max(float(np.max(np.abs(ref[k]))), 1e-6)) for k in ref)


def run(args):
    try:
        import torch
    except ImportError:
        print("bench: PyTorch is not installed here; nothing measured")
        return 0
    sys.path.insert(0, HERE)
    from run import load_runtime  # the bundle's runner: libraries, cuDNN lookup
    from lstm_opt_runtime import Model
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    bench = json.load(open(os.path.join(HERE, "bench", "bench.json")))
    devices, notes, _keep = load_runtime(json.load(open(os.path.join(HERE, "bundle.json")))["libs"]
                                         if os.path.exists(os.path.join(HERE, "bundle.json"))
                                         else [])
    if not torch.cuda.is_available() or not devices:
        print("bench: no CUDA device; nothing measured (%s)" % "; ".join(notes))
        return 0
    sel = set(select(args.sizes)) if args.sizes else {e["size"] for e in bench["entries"]}
    rows = []
    sync = torch.cuda.synchronize
    for e in bench["entries"]:
        if e["size"] not in sel:
            continue
        cell, T, B, I, H = e["cell"], e["T"], e["B"], e["I"], e["H"]
        w = dict(np.load(os.path.join(HERE, "bench", e["weights"])))
        rng = np.random.default_rng(args.seed)
        feeds = {"x": rng.standard_normal((T, B, I)).astype(np.float32),
                 "h0": rng.standard_normal((B, H)).astype(np.float32)}
        if cell == "lstm":
            feeds["c0"] = rng.standard_normal((B, H)).astype(np.float32)
        # float64 reference on the CPU: the same equations, op by op.
        with torch.no_grad():
            w64 = {k: torch.from_numpy(v).double() for k, v in w.items()}
            ref = {k: v.numpy() for k, v in cell_loop(
                torch, cell, w64, torch.from_numpy(feeds["x"]).double(),
                torch.from_numpy(feeds["h0"]).double(),
                torch.from_numpy(feeds["c0"]).double() if cell == "lstm" else None).items()}

        calls = {}  # implementation -> one call, for --profile

        def add(impl, prec, h2h, dev, outs, note="", fn=None):
            err = max_rel(outs, ref) if outs is not None else None
            ok = err is not None and err <= TOL[prec]
            row = {"size": e["size"], "impl": impl, "precision": prec,
                   "h2h_ms": h2h, "dev_ms": dev, "max_rel_err": err,
                   "status": ("passed" if ok else "FAILED") if outs is not None else "n/a",
                   "note": note}
            if fn is not None and args.step_times and outs is not None:
                k = kernel_times(torch, fn)
                row["kernel_us"] = k["total"]
                row["us_per_step"] = k["total"] / T
                row["longest_kernel_us_per_step"] = k["longest"] / T
                row["longest_kernel"] = k["longest_name"]
                note = row["note"] = (note + " " if note else "") + \
                    "kernels %.1f us/step (longest %.1f: %s)" % (
                        row["us_per_step"], row["longest_kernel_us_per_step"],
                        k["longest_name"][:40])
            rows.append(row)
            print("%-22s %-18s %-4s h2h %s dev %s err %s %s %s" % (
                e["size"], impl, prec, fmt(h2h), fmt(dev),
                "-" if err is None else "%.1e" % err, row["status"], note), flush=True)

        # PyTorch's cuDNN call (nn.LSTM / nn.GRU), f32 and f16.
        with torch.no_grad():
            for prec, dtype in [("f32", torch.float32), ("f16", torch.float16)]:
                m = torch_module(torch, cell, w, dtype)
                st = lambda a, dtype=dtype: torch.from_numpy(a).cuda().to(dtype).unsqueeze(0)  # noqa: E731

                def h2h_call(m=m, dtype=dtype, st=st):
                    x = torch.from_numpy(feeds["x"]).cuda().to(dtype)
                    hx = (st(feeds["h0"]), st(feeds["c0"])) if cell == "lstm" else st(feeds["h0"])
                    y, hn = m(x, hx)
                    o = {"y": y.float().cpu().numpy()}
                    if cell == "lstm":
                        o["h_n"], o["c_n"] = (hn[0][0].float().cpu().numpy(),
                                              hn[1][0].float().cpu().numpy())
                    else:
                        o["h_n"] = hn[0].float().cpu().numpy()
                    return o
                outs = h2h_call()
                h2h, _ = median_ms(h2h_call, args.repeat, sync)
                xd = torch.from_numpy(feeds["x"]).cuda().to(dtype)
                hxd = (st(feeds["h0"]), st(feeds["c0"])) if cell == "lstm" else st(feeds["h0"])
                dev = event_ms(torch, lambda: m(xd, hxd), args.repeat)
                calls["torch-cudnn " + prec] = h2h_call
                add("torch-cudnn", prec, h2h, dev, outs,
                    "cuDNN %s" % torch.backends.cudnn.version(),
                    fn=lambda m=m, xd=xd, hxd=hxd: m(xd, hxd))
            # The per-op loop (PyTorch eager on the unrolled cell).
            wd = {k: torch.from_numpy(v).cuda() for k, v in w.items()}

            def loop_h2h():
                o = cell_loop(torch, cell, wd, torch.from_numpy(feeds["x"]).cuda(),
                              torch.from_numpy(feeds["h0"]).cuda(),
                              torch.from_numpy(feeds["c0"]).cuda() if cell == "lstm" else None)
                return {k: v.cpu().numpy() for k, v in o.items()}
            if args.no_loop:
                outs = None
            else:
                outs = loop_h2h()
                h2h, _ = median_ms(loop_h2h, max(5, args.repeat // 5), sync)
            xd, h0d = torch.from_numpy(feeds["x"]).cuda(), torch.from_numpy(feeds["h0"]).cuda()
            c0d = torch.from_numpy(feeds["c0"]).cuda() if cell == "lstm" else None
            if outs is not None:
                dev = event_ms(torch, lambda: cell_loop(torch, cell, wd, xd, h0d, c0d),
                               max(5, args.repeat // 5))
                calls["torch-eager-loop"] = loop_h2h
                add("torch-eager-loop", "f32", h2h, dev, outs)
        # lstm-opt's compiled models.
        for v, info in e["variants"].items():
            prec = "bf16" if v.endswith("bf16") else "f16" if v.endswith("f16") else "f32"
            if info["so"] is None:
                add("lstm-opt " + v, prec, None, None, None, "not built: " + info["compile_error"])
                continue
            try:
                model = Model(os.path.join(HERE, "bench", info["so"]))
                def call(model=model):
                    return model.run({t.name: feeds[t.name] for t in model.inputs})
                outs = call()
                h2h, _ = median_ms(call, args.repeat, lambda: None)
                calls["lstm-opt " + v] = call
                add("lstm-opt " + v, prec, h2h, None, outs, fn=call)
            except Exception as ex:  # noqa: BLE001 - the row records why
                add("lstm-opt " + v, prec, None, None, None, str(ex).splitlines()[0][:160])
        if e["size"] in args.profile.split(","):
            profile(torch, e["size"], calls)
    write_report(args, torch, rows, notes)
    return 1 if any(r["status"] == "FAILED" for r in rows) else 0


def profile(torch, size, calls):
    """The CUDA kernels and API calls of each implementation (PyTorch's
    profiler sees lstm-opt's runtime too: it is in the same process), into
    profile-<size>.txt."""
    from torch.profiler import ProfilerActivity, profile as prof
    with open(os.path.join(HERE, "profile-%s.txt" % size), "w") as f:
        for name, fn in calls.items():
            with torch.no_grad():
                fn()
                torch.cuda.synchronize()
                with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
                    for _ in range(5):
                        fn()
                    torch.cuda.synchronize()
            f.write("== %s (5 calls)\n%s\n" % (name, p.key_averages().table(
                sort_by="cuda_time_total", row_limit=15, max_name_column_width=70)))


def kernel_times(torch, fn, calls=10):
    """Device time of the CUDA kernels one call of `fn` launches (PyTorch's
    profiler, CUPTI; copies and memsets left out), in us, and its longest
    kernel (the recurrence, for the persistent designs)."""
    from torch.profiler import ProfilerActivity, profile as prof
    with torch.no_grad():
        fn()
        torch.cuda.synchronize()
        with prof(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
    total, longest, name = 0.0, 0.0, ""
    for ev in p.key_averages():
        if str(getattr(ev, "device_type", "")).split(".")[-1] != "CUDA":
            continue
        if ev.key.startswith(("Memcpy", "Memset")) or "memcpy" in ev.key.lower():
            continue
        t = float(getattr(ev, "self_device_time_total", None) or
                  getattr(ev, "self_cuda_time_total", 0.0))
        total += t
        if t > longest:
            longest, name = t, ev.key
    return {"total": total / calls, "longest": longest / calls, "longest_name": name}


def fmt(x):
    return "-" if x is None else "%.4f" % x


def goals(rows):
    """The GPU goals, per size: lstm-opt's cuDNN path within 5% of PyTorch's
    cuDNN call; the persistent kernel faster than cuDNN at B <= 4; the best
    fused path >= 20x faster than the per-op loop at T100 B1 H64."""
    by = {}
    for r in rows:
        by.setdefault(r["size"], {})[(r["impl"], r["precision"])] = r
    out = []
    for size, d in by.items():
        get = lambda k: (d.get(k) or {}).get("h2h_ms")  # noqa: E731
        t_ours, t_torch = get(("lstm-opt cudnn-f32", "f32")), get(("torch-cudnn", "f32"))
        g = {"size": size}
        if t_ours and t_torch:
            g["cudnn_vs_torch"] = t_ours / t_torch
        pers = get(("lstm-opt gpu-persistent", "f32"))
        if pers and t_torch and int(size.split("-")[2]) <= 4:
            g["persistent_vs_torch_cudnn"] = pers / t_torch
            if t_ours:
                g["persistent_vs_lstm_opt_cudnn"] = pers / t_ours
        fused = [get((i, "f32")) for i in ("lstm-opt cudnn-f32", "lstm-opt gpu-step",
                                            "lstm-opt gpu-persistent", "lstm-opt cudnn-persist")]
        fused = [t for t in fused if t]
        loop = get(("torch-eager-loop", "f32"))
        if fused and loop:
            g["loop_over_best_fused"] = loop / min(fused)
        out.append(g)
    return out


def write_report(args, torch, rows, notes):
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        smi = "nvidia-smi not found"
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {"gpu": torch.cuda.get_device_name(0), "nvidia_smi": smi,
            "cudnn": torch.backends.cudnn.version(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cpu": cpu, "machine": platform.platform(),
            "repeat": args.repeat, "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "tf32": "off", "notes": notes}
    g = goals(rows)
    stem = args.out or os.path.join(HERE, "gpu_bench")
    json.dump({"info": info, "rows": rows, "goals": g}, open(stem + ".json", "w"), indent=1)
    with open(stem + ".md", "w") as f:
        f.write("# lstm-opt on the GPU against PyTorch\n\n")
        for k, v in info.items():
            f.write("- %s: %s\n" % (k, v))
        f.write("\nMedian ms. h2h: numpy in, numpy out (every row); dev: PyTorch's forward "
                "on device tensors (CUDA events). Error: max |out - ref| / max |ref| against "
                "float64. us/step: the device time of the call's kernels (PyTorch's "
                "profiler; copies left out) / T, where measured (--step-times).\n\n"
                "| size | implementation | prec | h2h ms | dev ms | us/step | max rel err "
                "| status | note |\n|---|---|---|---:|---:|---:|---:|---|---|\n")
        for r in rows:
            f.write("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["size"], r["impl"], r["precision"], fmt(r["h2h_ms"]), fmt(r["dev_ms"]),
                "%.2f" % r["us_per_step"] if r.get("us_per_step") is not None else "-",
                "" if r["max_rel_err"] is None else "%.1e" % r["max_rel_err"], r["status"],
                r["note"].replace("|", "/")))
        f.write("\n## Goals (ratios of h2h medians)\n\n| size | lstm-opt cuDNN / torch cuDNN "
                "(<= 1.05) | persistent / torch cuDNN (< 1, B <= 4) | persistent / lstm-opt "
                "cuDNN | per-op loop / best fused (>= 20 at T100 B1 H64) |\n"
                "|---|---:|---:|---:|---:|\n")
        for x in g:
            c = lambda k: "%.2f" % x[k] if k in x else ""  # noqa: E731
            f.write("| %s | %s | %s | %s | %s |\n" % (
                x["size"], c("cudnn_vs_torch"), c("persistent_vs_torch_cudnn"),
                c("persistent_vs_lstm_opt_cudnn"), c("loop_over_best_fused")))
    print("bench: wrote %s.md and .json" % stem)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    b = sub.add_parser("build", help="compile the bench models into OUT_DIR (needs lstm-opt)")
    b.add_argument("out")
    b.add_argument("--sizes", default="")
    b.add_argument("--chip", default="sm_90")
    b.add_argument("--target-cpu", default="x86-64-v3")
    b.add_argument("--lstm-opt", default=None)
    b.add_argument("--variants", default="", help="comma-separated subset of the variants "
                   "(default: all but the -u12/-u16 sweeps)")
    b.add_argument("--append", action="store_true",
                   help="add these sizes to OUT_DIR's bench.json instead of replacing it")
    b.add_argument("--grid-weights", type=int, default=0, metavar="N",
                   help="weights on a grid of 1/N of their spread, so that the libraries "
                        "compress for transport (0: off)")
    r = sub.add_parser("run", help="measure on the GPU machine (the default)")
    for p in (ap, r):
        p.add_argument("--repeat", type=int, default=50)
        p.add_argument("--sizes", default="")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--out", default=None, help="report stem (default: gpu_bench here)")
        p.add_argument("--profile", default="",
                       help="sizes to profile (PyTorch's profiler) into profile-<size>.txt")
        p.add_argument("--step-times", action="store_true",
                       help="per row, the device time of its kernels per call and per "
                            "step (PyTorch's profiler)")
        p.add_argument("--no-loop", action="store_true",
                       help="leave out the per-op eager loop (slow at large sizes)")
    args = ap.parse_args()
    if args.cmd == "build":
        return build(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
